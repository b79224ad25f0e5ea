/*
 * listen.c - binding or inheriting the listening socket (see listen.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: the
 * sockets' addresses are fixed-size; each accepted connection is
 * conn.c's.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/listen.h"
#include "ipc/socket-path.h"

#define SD_LISTEN_FDS_START 3

void listen_socket_init(struct listen_socket *ls)
{
	memset(ls, 0, sizeof(*ls));
	ls->fd = -1;
}

static int error(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int error(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static int parse_int(const char *s, long *out)
{
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

/* The name of fd number i in $LISTEN_FDNAMES ("a:b:c"), or "". */
static void fd_name(const char *names, long i, char *buf, size_t size)
{
	const char *p = names ? names : "";

	for (; i > 0 && p; i--) {
		p = strchr(p, ':');
		if (p)
			p++;
	}
	snprintf(buf, size, "%.*s", p ? (int)strcspn(p, ":") : 0, p ? p : "");
}

static int check_listener(int fd, struct listen_socket *ls, char *err,
			  size_t errlen)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(int);
	int type = 0, acc = 0, flags;

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    type != SOCK_STREAM)
		return error(err, errlen, -ENOTSOCK,
			     "passed fd %d is not a stream socket", fd);
	len = sizeof(int);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) < 0 || !acc)
		return error(err, errlen, -EINVAL,
			     "passed fd %d is not listening", fd);
	len = sizeof(sa);
	memset(&sa, 0, sizeof(sa));
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 ||
	    sa.sun_family != AF_UNIX)
		return error(err, errlen, -EAFNOSUPPORT,
			     "passed fd %d is not a Unix socket", fd);
	if (len > offsetof(struct sockaddr_un, sun_path)) {
		size_t n = len - offsetof(struct sockaddr_un, sun_path);

		if (sa.sun_path[0] == '\0') /* abstract: show it as "@name" */
			snprintf(ls->path, sizeof(ls->path), "@%.*s",
				 (int)(n - 1), sa.sun_path + 1);
		else
			snprintf(ls->path, sizeof(ls->path), "%.*s",
				 (int)strnlen(sa.sun_path, n), sa.sun_path);
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return error(err, errlen, -errno, "fd %d: %s", fd,
			     strerror(errno));
	return 0;
}

int listen_activated(struct listen_socket *ls, char *err, size_t errlen)
{
	const char *names = getenv("LISTEN_FDNAMES");
	long pid, n, chosen = -1;
	char name[256];
	int rc;

	if (parse_int(getenv("LISTEN_PID"), &pid) ||
	    parse_int(getenv("LISTEN_FDS"), &n) || pid != (long)getpid() ||
	    n <= 0)
		return 0;
	if (n > 1024)
		return error(err, errlen, -EINVAL, "LISTEN_FDS=%ld is absurd",
			     n);
	if (n == 1) {
		chosen = 0;
	} else {
		for (long i = 0; i < n && chosen < 0; i++) {
			fd_name(names, i, name, sizeof(name));
			if (!strcmp(name, "varlink"))
				chosen = i;
		}
		if (chosen < 0)
			return error(err, errlen, -EINVAL,
				     "%ld sockets passed (LISTEN_FDS) and "
				     "none is named \"varlink\" "
				     "(FileDescriptorName=varlink)",
				     n);
	}
	for (long i = 0; i < n; i++)
		if (i != chosen)
			close(SD_LISTEN_FDS_START + (int)i);
	rc = check_listener(SD_LISTEN_FDS_START + (int)chosen, ls, err, errlen);
	if (rc) {
		close(SD_LISTEN_FDS_START + (int)chosen);
		return rc;
	}
	ls->fd = SD_LISTEN_FDS_START + (int)chosen;
	ls->activated = true;
	/* Children (none yet) must not believe the fds are theirs. */
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return 1;
}

/* Is something accepting on path?  1 yes, 0 stale, -errno unknown. */
static int probe(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int rc;

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		rc = 1;
	else if (errno == EAGAIN) /* a full backlog: someone listens */
		rc = 1;
	else if (errno == ECONNREFUSED)
		rc = 0;
	else
		rc = -errno;
	close(fd);
	return rc;
}

static int ensure_parent(const char *path, char *err, size_t errlen)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return error(err, errlen, -errno, "cannot create %s: %s", dir,
			     strerror(errno));
	return 0;
}

int listen_bind(struct listen_socket *ls, const char *path,
		const struct log *log, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	mode_t old;
	int fd, rc;

	if (!hostel_socket_path_fits(path))
		return error(err, errlen, -ENAMETOOLONG,
			     "socket path too long (%zu bytes, at most %zu): "
			     "%s",
			     strlen(path), sizeof(sa.sun_path) - 1, path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	rc = ensure_parent(path, err, errlen);
	if (rc)
		return rc;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return error(err, errlen, -EEXIST,
				     "%s exists and is not a socket; "
				     "not replacing it",
				     path);
		rc = probe(&sa);
		if (rc > 0)
			return error(err, errlen, -EADDRINUSE,
				     "another hosteld is already listening "
				     "on %s",
				     path);
		if (rc < 0)
			return error(err, errlen, rc,
				     "cannot tell whether %s is in use: %s",
				     path, strerror(-rc));
		if (unlink(path) < 0 && errno != ENOENT)
			return error(err, errlen, -errno,
				     "cannot remove stale socket %s: %s", path,
				     strerror(errno));
		log_info(log, "removed stale socket %s", path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return error(err, errlen, -errno, "socket: %s",
			     strerror(errno));
	/* 0660: the socket's group decides who may connect. */
	old = umask(0117);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc < 0)
		rc = -errno;
	umask(old);
	if (rc == 0 && (listen(fd, SOMAXCONN) < 0 || stat(path, &st) < 0)) {
		rc = -errno;
		unlink(path);
	}
	if (rc < 0) {
		close(fd);
		return error(err, errlen, rc, "cannot listen on %s: %s", path,
			     strerror(-rc));
	}
	ls->fd = fd;
	ls->owned = true;
	ls->dev = st.st_dev;
	ls->ino = st.st_ino;
	snprintf(ls->path, sizeof(ls->path), "%s", path);
	return 0;
}

void listen_unlink(struct listen_socket *ls)
{
	struct stat st;

	if (!ls->owned)
		return;
	ls->owned = false;
	/* A successor may have replaced the file: leave its socket alone. */
	if (lstat(ls->path, &st) == 0 && st.st_dev == ls->dev &&
	    st.st_ino == ls->ino)
		unlink(ls->path);
}
