/*
 * listen.h - the daemon's listening Unix socket: bound by hosteld, or
 * handed over by the service manager (socket activation).
 *
 * Binding never steals a live daemon's socket: an existing socket file is
 * probed with connect(2) and replaced only when nothing listens on it.
 * At exit only a file this process created (same device and inode) is
 * unlinked; an activated socket belongs to the service manager.
 */
#ifndef HOSTEL_DAEMON_LISTEN_H
#define HOSTEL_DAEMON_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/un.h>

#include "daemon/log.h"

struct listen_socket {
	int fd; /* listening, non-blocking, close-on-exec; -1: none */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	bool activated; /* from $LISTEN_FDS */
	bool owned;	/* this process created the file */
	dev_t dev;
	ino_t ino;
};

void listen_socket_init(struct listen_socket *ls);

/*
 * Take the socket passed by the service manager ($LISTEN_PID, $LISTEN_FDS,
 * $LISTEN_FDNAMES; the fds start at 3).  With several fds, the one named
 * "varlink" is used and the others are closed.  Returns 1 when a socket
 * was taken (the variables are then unset), 0 when none was passed to
 * this process, or -errno with a message in err.
 */
int listen_activated(struct listen_socket *ls, char *err, size_t errlen);

/*
 * Bind and listen on path (mode 0660; its directory is created with mode
 * 0755 when missing).  Returns 0 or -errno with a message in err.
 */
int listen_bind(struct listen_socket *ls, const char *path,
		const struct log *log, char *err, size_t errlen);

/* Remove the socket file if this process created it and it is unchanged. */
void listen_unlink(struct listen_socket *ls);

#endif
