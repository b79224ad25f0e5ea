/*
 * client.h - a small blocking varlink client over a Unix socket.
 *
 * Used by the `hostel` command and the tests.  Every operation is bounded
 * by the client's timeout (measured per operation); nothing here installs
 * signal handlers, and writes never raise SIGPIPE.  Functions return 0 or
 * a negative errno value:
 *   -ETIMEDOUT     the operation did not finish in time
 *   -ECONNRESET    the daemon closed the connection
 *   -EMSGSIZE      a reply exceeded VARLINK_MESSAGE_MAX
 *   -EBADMSG       a reply was not a valid varlink reply
 *                  (varlink_client_fault() says why)
 *   others         from the system calls (connect: -ENOENT, -ECONNREFUSED,
 *                  -EACCES, ...)
 */
#ifndef HOSTEL_IPC_CLIENT_H
#define HOSTEL_IPC_CLIENT_H

#include <stddef.h>

#include <jansson.h>

#include "ipc/varlink.h"

struct varlink_client;

/* timeout_ms < 0 waits forever. */
int varlink_client_connect(const char *path, int timeout_ms,
			   struct varlink_client **out);
void varlink_client_free(struct varlink_client *c);

int varlink_client_fd(const struct varlink_client *c);
void varlink_client_set_timeout(struct varlink_client *c, int timeout_ms);

/* Why the last -EBADMSG happened. */
const char *varlink_client_fault(const struct varlink_client *c);

/* Write a message (encoded, NUL-terminated). */
int varlink_client_send(struct varlink_client *c, const json_t *msg);

/* Write raw bytes as they are (tests use it to send broken framing). */
int varlink_client_write(struct varlink_client *c, const void *buf, size_t n);

/*
 * Read the next message's text; *msg stays valid until the next receive
 * call.  Used where the reply is to be shown exactly as it came.
 */
int varlink_client_recv_raw(struct varlink_client *c, const char **msg,
			    size_t *len);

/* Read and parse the next reply (clear it with varlink_reply_clear). */
int varlink_client_recv(struct varlink_client *c, struct varlink_reply *reply);

/*
 * Send a call (parameters are consumed; NULL sends none) and read its
 * first reply.  Error replies are replies: check reply->error.
 */
int varlink_client_call(struct varlink_client *c, const char *method,
			json_t *parameters, struct varlink_reply *reply);

#endif
