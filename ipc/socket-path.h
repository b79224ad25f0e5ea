/*
 * socket-path.h - where hosteld listens by default.
 *
 * One rule shared by the daemon and the client, so both agree without
 * configuration:
 *   1. $RUNTIME_DIRECTORY/hostel.sock when set (systemd's
 *      RuntimeDirectory=; the first entry if it lists several),
 *   2. /run/hostel/hostel.sock for root,
 *   3. $XDG_RUNTIME_DIR/hostel/hostel.sock otherwise.
 */
#ifndef HOSTEL_IPC_SOCKET_PATH_H
#define HOSTEL_IPC_SOCKET_PATH_H

#include <stdbool.h>
#include <stddef.h>

#define HOSTEL_SOCKET_NAME "hostel.sock"

/*
 * Write the default path into buf.  Returns 0, -ENOENT when no rule
 * applies (a non-root user without XDG_RUNTIME_DIR), or -ENAMETOOLONG
 * when the path does not fit buf or a Unix socket address.
 */
int hostel_default_socket_path(char *buf, size_t size);

/* Whether path fits sun_path of a struct sockaddr_un (with its NUL). */
bool hostel_socket_path_fits(const char *path);

#endif
