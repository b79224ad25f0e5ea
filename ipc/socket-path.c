/*
 * socket-path.c - the default socket path rule of socket-path.h.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none: the path is formatted into the caller's fixed buffer.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc/socket-path.h"

bool hostel_socket_path_fits(const char *path)
{
	struct sockaddr_un sa;

	return strlen(path) < sizeof(sa.sun_path);
}

static int format(char *buf, size_t size, const char *dir, size_t dirlen,
		  const char *suffix)
{
	int n = snprintf(buf, size, "%.*s%s", (int)dirlen, dir, suffix);

	if (n < 0 || (size_t)n >= size || !hostel_socket_path_fits(buf))
		return -ENAMETOOLONG;
	return 0;
}

int hostel_default_socket_path(char *buf, size_t size)
{
	const char *dir = getenv("RUNTIME_DIRECTORY");

	if (dir && *dir)
		return format(buf, size, dir, strcspn(dir, ":"),
			      "/" HOSTEL_SOCKET_NAME);
	if (geteuid() == 0)
		return format(buf, size, "/run/hostel", strlen("/run/hostel"),
			      "/" HOSTEL_SOCKET_NAME);
	dir = getenv("XDG_RUNTIME_DIR");
	if (dir && *dir)
		return format(buf, size, dir, strlen(dir),
			      "/hostel/" HOSTEL_SOCKET_NAME);
	return -ENOENT;
}
