/*
 * conn.h - one client connection: a bufferevent, the varlink framing and
 * the peer's credentials.
 *
 * Contract:
 *  - Input is bounded: the bufferevent's read watermark caps what libevent
 *    buffers, and the varlink reader caps a message at
 *    VARLINK_MESSAGE_MAX.  A longer call is skipped to its NUL, never
 *    held, and answered in its turn with io.hostel.Call.ValueTooLarge
 *    (value "argument", its size, the limit) before anything of it
 *    runs; the connection stays open and reads the next call.
 *  - Output is bounded: a reply queued while more than CONN_OUTPUT_MAX
 *    bytes of earlier replies are still unsent drops the connection (the
 *    client does not read).  One large reply alone is always allowed.
 *  - Calls on a connection are answered in order (varlink has no request
 *    ids).  A handler replies before it returns, or holds the connection
 *    (conn_hold(): a streaming or deferred reply); while held, no further
 *    call is read from it until conn_release().
 *  - The peer's SO_PEERCRED credentials are read at accept and kept for
 *    policy and history.
 *  - A connection is freed only outside its own callbacks; code that may
 *    close it checks conn_is_open() afterwards.
 */
#ifndef HOSTEL_DAEMON_CONN_H
#define HOSTEL_DAEMON_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/bufferevent.h>
#include <jansson.h>

#include "ipc/varlink.h"

#define CONN_OUTPUT_MAX (4u * 1024 * 1024)
#define CONN_INPUT_HIGH (256u * 1024)

struct daemon;
struct upload;

struct conn_cred {
	bool valid;
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

struct conn {
	struct daemon *d;
	struct conn *prev, *next;
	uint64_t id;
	struct bufferevent *bev;
	struct varlink_reader reader;
	struct conn_cred cred;
	bool closing; /* no more requests; close once output is flushed */
	bool dead;    /* to be freed as soon as no callback runs */
	bool busy;    /* inside one of its callbacks */
	bool held;    /* a call still owns the connection (conn_hold) */
	void (*on_drain)(void *arg); /* held: the output has been written */
	void (*on_free)(void *arg);  /* held: the connection is going away */
	void *hold_arg;
	/* io.hostel.Call.Upload's uploads (daemon/upload.h) */
	struct upload *uploads;
	size_t nuploads, upload_bytes; /* bytes: their capacity */
	uint64_t next_upload;
};

/* Adopt an accepted socket (closed on failure).  0 or -errno. */
int conn_new(struct daemon *d, int fd);

/*
 * Queue a message (consumed) for the peer.  0, or -1 when the connection
 * was dropped instead (too much unsent output, out of memory).
 */
int conn_send(struct conn *c, json_t *msg);

/*
 * Close: with flush, once the queued replies are written (no more input
 * is read); without, at once (queued replies are discarded).
 */
void conn_close(struct conn *c, bool flush);

static inline bool conn_is_open(const struct conn *c)
{
	return !c->closing && !c->dead;
}

/* Free immediately (daemon shutdown). */
void conn_free(struct conn *c);

/*
 * The current call keeps the connection after its handler returns: it
 * replies later through conn_send().  on_drain (may be NULL) runs when
 * the queued output has been written; on_free runs when the connection
 * is freed while still held (the holder must forget it then).
 */
void conn_hold(struct conn *c, void (*on_drain)(void *arg),
	       void (*on_free)(void *arg), void *arg);

/*
 * The held call is over: calls queued meanwhile are read now.  The
 * connection may be freed by this; do not use c afterwards.
 */
void conn_release(struct conn *c);

/* Bytes of replies queued and not yet written. */
size_t conn_output_pending(const struct conn *c);

#endif
