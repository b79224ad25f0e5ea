/*
 * notify.c - sd_notify-style datagrams to $NOTIFY_SOCKET (see notify.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: a
 * fixed-size datagram to systemd.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/notify.h"

bool notify_enabled(void)
{
	const char *e = getenv("NOTIFY_SOCKET");

	return e && *e;
}

int notify_send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t plen;
	socklen_t salen;
	ssize_t n;
	int fd, rc = 0;

	if (!path || !*path)
		return 0;
	plen = strlen(path);
	if (path[0] != '/' && path[0] != '@')
		return -EAFNOSUPPORT; /* e.g. vsock: not supported here */
	if (plen >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, plen);
	if (path[0] == '@') {
		/* Abstract: a leading NUL, and the length counts exactly. */
		sa.sun_path[0] = '\0';
		salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				    plen);
	} else {
		salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				    plen + 1);
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
		   (struct sockaddr *)&sa, salen);
	if (n < 0)
		rc = -errno;
	close(fd);
	return rc;
}

uint64_t notify_watchdog_usec(void)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	unsigned long long v;
	char *end;

	if (!usec || !*usec)
		return 0;
	if (pid && *pid) {
		errno = 0;
		v = strtoull(pid, &end, 10);
		if (errno || *end || v != (unsigned long long)getpid())
			return 0;
	}
	errno = 0;
	v = strtoull(usec, &end, 10);
	if (errno || *end || v == 0)
		return 0;
	return v;
}
