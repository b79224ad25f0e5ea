/*
 * daemon-client.h - what the daemon subcommands of `hostel` share:
 * finding the socket, one call with its reply, and the mapping from
 * hosteld's errors to exit codes (hostel(1) lists them).
 */
#ifndef HOSTEL_CLIENT_DAEMON_CLIENT_H
#define HOSTEL_CLIENT_DAEMON_CLIENT_H

#include <jansson.h>

#include "ipc/client.h"
#include "ipc/varlink.h"

/* Default per-operation timeout of daemon subcommands. */
#define DAEMON_CLIENT_TIMEOUT_MS 60000

/*
 * Connect to --socket / $HOSTEL_SOCKET / the default path.  0, or an exit
 * code after saying why on stderr.  `prog` names the subcommand.
 */
int daemon_client_open(const char *prog, const char *socket_opt, int timeout_ms,
		       struct varlink_client **out);

/*
 * Call method (parameters consumed) and read the final reply into
 * *reply, skipping replies that continue.  0, or an exit code after
 * saying why; an error reply is returned as 0 with reply->error set.
 */
int daemon_client_call(const char *prog, struct varlink_client *c,
		       const char *method, json_t *parameters, unsigned flags,
		       struct varlink_reply *reply);

/* The exit code for an error reply (hostel(1), EXIT STATUS). */
int daemon_client_error_exit(const char *error);

/* Print "hostel PROG: ERROR: details" for an error reply; its exit code. */
int daemon_client_report(const char *prog, const struct varlink_reply *reply);

#endif
