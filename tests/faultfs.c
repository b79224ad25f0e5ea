/*
 * faultfs.c - test helper, LD_PRELOAD'ed into hosteld: makes writes and
 * syncs of the history database fail on demand, the way a full disk or a
 * failing one does, without any test hook in hosteld itself.
 *
 * While the file named by $HOSTEL_FAULT_FILE exists, every write
 * (write, pwrite, pwrite64, writev, pwritev) and every sync (fsync,
 * fdatasync) of a file whose path contains $HOSTEL_FAULT_MATCH (default
 * "hostel.db") fails with the errno the file names: "ENOSPC" (disk full,
 * the default) or "EIO".  "SLOW MS" instead makes each sync of such a
 * file take MS milliseconds more, and succeed: a slow disk.  Other files
 * and sockets are untouched, so the daemon can keep talking to its
 * clients.  Remove the file and the disk "recovers".
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* The errno to inject for fd now, or 0; *slow_ms: a delay for syncs. */
static int fault_at(int fd, long *slow_ms)
{
	const char *trigger = getenv("HOSTEL_FAULT_FILE");
	const char *match = getenv("HOSTEL_FAULT_MATCH");
	char link[64], path[4096], kind[16] = "";
	int saved = errno, tfd, err = 0;
	ssize_t n;

	if (!trigger || fd < 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		goto out;
	path[n] = 0;
	if (!strstr(path, match && *match ? match : "hostel.db"))
		goto out;
	tfd = open(trigger, O_RDONLY | O_CLOEXEC);
	if (tfd < 0)
		goto out;
	n = read(tfd, kind, sizeof(kind) - 1);
	close(tfd);
	kind[n > 0 ? n : 0] = 0;
	if (strncmp(kind, "SLOW", 4) == 0) {
		if (slow_ms)
			*slow_ms = strtol(kind + 4, NULL, 10);
		goto out;
	}
	err = strncmp(kind, "EIO", 3) == 0 ? EIO : ENOSPC;
out:
	errno = saved;
	return err;
}

static int fault_for(int fd)
{
	return fault_at(fd, NULL);
}

/* A sync's fault, after the slow disk's delay when there is one. */
static int sync_fault(int fd)
{
	long ms = 0;
	int e = fault_at(fd, &ms);

	if (!e && ms > 0)
		usleep((useconds_t)ms * 1000);
	return e;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void *buf, size_t len)
{
	int e = fault_for(fd);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT(write)(fd, buf, len);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	int e = fault_for(fd);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT(pwrite)(fd, buf, len, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off64_t off)
{
	int e = fault_for(fd);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT(pwrite64)(fd, buf, len, off);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	int e = fault_for(fd);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT(writev)(fd, iov, n);
}

ssize_t pwritev(int fd, const struct iovec *iov, int n, off_t off)
{
	int e = fault_for(fd);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT(pwritev)(fd, iov, n, off);
}

int fsync(int fd)
{
	int e = sync_fault(fd);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT(fsync)(fd);
}

int fdatasync(int fd)
{
	int e = sync_fault(fd);

	if (e) {
		errno = e;
		return -1;
	}
	return NEXT(fdatasync)(fd);
}
