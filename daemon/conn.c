/*
 * conn.c - client connections (see conn.h): reading and framing calls,
 * queueing replies, closing and freeing at a safe point.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - conn_new: one struct conn per accepted connection; the number of
 *    connections is bounded by the daemon's open-file limit (accept
 *    pauses 1 s on EMFILE/ENFILE, daemon.c), not by a count of its own.
 *  - the input: libevent buffers at most CONN_INPUT_HIGH (256 KiB) before
 *    the read watermark stops reading; the varlink reader holds at most
 *    one message, VARLINK_MESSAGE_MAX (16 MiB); a longer one is skipped
 *    unheld (oversize: ValueTooLarge); process_input's chunk is 16 KiB
 *    on the stack.
 *  - conn_send: one encoded reply (varlink_encode), at most about a
 *    message (replies are measured before: invocation.c fit_reply,
 *    REPLY_BYTES_MAX for reads); the output buffer takes a reply only
 *    while at most CONN_OUTPUT_MAX (4 MiB) is unsent, else the
 *    connection is dropped: at most CONN_OUTPUT_MAX plus one reply.
 *  - oversize: its error message, a few fixed members.
 */
#define _GNU_SOURCE /* struct ucred */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/upload.h"

static void read_cb(struct bufferevent *bev, void *arg);
static void write_cb(struct bufferevent *bev, void *arg);
static void event_cb(struct bufferevent *bev, short what, void *arg);

int conn_new(struct daemon *d, int fd)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	struct conn *c = calloc(1, sizeof(*c));

	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->d = d;
	c->id = ++d->next_conn_id;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == 0 &&
	    len == sizeof(uc)) {
		c->cred.valid = true;
		c->cred.pid = uc.pid;
		c->cred.uid = uc.uid;
		c->cred.gid = uc.gid;
	}
	c->bev = bufferevent_socket_new(d->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c->bev) {
		close(fd);
		free(c);
		return -ENOMEM;
	}
	varlink_reader_init(&c->reader, 0);
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, CONN_INPUT_HIGH);
	if (bufferevent_enable(c->bev, EV_READ | EV_WRITE) < 0) {
		bufferevent_free(c->bev);
		varlink_reader_free(&c->reader);
		free(c);
		return -ENOMEM;
	}
	c->next = d->conns;
	if (d->conns)
		d->conns->prev = c;
	d->conns = c;
	d->n_conns++;
	if (c->cred.valid)
		log_debug(&d->log,
			  "connection %llu: accepted (pid %ld, uid %ld, "
			  "gid %ld)",
			  (unsigned long long)c->id, (long)c->cred.pid,
			  (long)c->cred.uid, (long)c->cred.gid);
	else
		log_debug(&d->log,
			  "connection %llu: accepted (no peer credentials)",
			  (unsigned long long)c->id);
	return 0;
}

void conn_free(struct conn *c)
{
	struct daemon *d = c->d;

	if (c->prev)
		c->prev->next = c->next;
	else
		d->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	d->n_conns--;
	if (c->held && c->on_free) {
		c->held = false;
		c->on_free(c->hold_arg);
	}
	upload_conn_free(c);
	log_debug(&d->log, "connection %llu: closed",
		  (unsigned long long)c->id);
	bufferevent_free(c->bev);
	varlink_reader_free(&c->reader);
	free(c);
	daemon_conn_gone(d);
}

/* End of a callback: free the connection if it is done. */
static void settle(struct conn *c)
{
	if (c->closing && !c->dead &&
	    evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		c->dead = true;
	if (c->dead && !c->busy)
		conn_free(c);
}

void conn_close(struct conn *c, bool flush)
{
	c->closing = true;
	bufferevent_disable(c->bev, EV_READ);
	if (!flush)
		c->dead = true;
	settle(c);
}

int conn_send(struct conn *c, json_t *msg)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t queued = evbuffer_get_length(out);
	size_t len;
	char *text;

	if (c->dead) {
		json_decref(msg);
		return -1;
	}
	if (!msg) {
		log_err(&c->d->log, "connection %llu: out of memory; closing",
			(unsigned long long)c->id);
		conn_close(c, false);
		return -1;
	}
	if (queued > CONN_OUTPUT_MAX) {
		log_warn(&c->d->log,
			 "connection %llu: dropped: the client does not read "
			 "its replies (%zu bytes unsent, limit %u)",
			 (unsigned long long)c->id, queued, CONN_OUTPUT_MAX);
		json_decref(msg);
		conn_close(c, false);
		return -1;
	}
	text = varlink_encode(msg, &len);
	json_decref(msg);
	if (!text || bufferevent_write(c->bev, text, len) < 0) {
		free(text);
		log_err(&c->d->log,
			"connection %llu: cannot queue a reply; closing",
			(unsigned long long)c->id);
		conn_close(c, false);
		return -1;
	}
	free(text);
	return 0;
}

static void handle_message(struct conn *c, const char *msg, size_t len)
{
	struct varlink_request req;
	struct varlink_fault fault;

	switch (varlink_request_parse(msg, len, &req, &fault)) {
	case VARLINK_OK:
		log_debug(&c->d->log, "connection %llu: call %s%s%s",
			  (unsigned long long)c->id, req.method,
			  req.more ? " (more)" : "",
			  req.oneway ? " (oneway)" : "");
		dispatch(c, &req);
		break;
	case VARLINK_EINVAL:
		log_debug(&c->d->log, "connection %llu: call %s: %s",
			  (unsigned long long)c->id, req.method, fault.reason);
		if (!req.oneway)
			conn_send(c, varlink_fault_reply(&fault));
		break;
	case VARLINK_EPROTO:
		log_warn(&c->d->log,
			 "connection %llu: protocol error: %s; closing",
			 (unsigned long long)c->id, fault.reason);
		if (conn_send(c, varlink_fault_reply(&fault)) == 0)
			conn_close(c, true);
		break;
	case VARLINK_ENOMEM:
		log_err(&c->d->log, "connection %llu: out of memory; closing",
			(unsigned long long)c->id);
		conn_close(c, false);
		break;
	}
	varlink_request_clear(&req);
}

/*
 * A call longer than the message bound, skipped to its NUL without
 * holding it (varlink.h): no guest code runs for it.  It is answered in
 * its turn, like any call, and the connection reads on.  `size` is the
 * message's length, or what came of it when the peer left before its
 * NUL.  Whether it was oneway cannot be known: it is always answered.
 */
static void oversize(struct conn *c, size_t size)
{
	log_warn(&c->d->log,
		 "connection %llu: a call of %zu bytes, more than the %zu a "
		 "message may have: ValueTooLarge",
		 (unsigned long long)c->id, size, c->reader.max);
	conn_send(c,
		  varlink_error_new(HOSTEL_ERROR_VALUE_TOO_LARGE,
				    json_pack("{ss,sI,sI}", "value", "argument",
					      "size", (json_int_t)size, "limit",
					      (json_int_t)c->reader.max)));
}

/*
 * Take every whole message out of the reader before feeding it more, so
 * the reader never holds more than one message's worth of bytes.
 */
static void process_input(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	char chunk[16384];

	while (conn_is_open(c) && !c->held) {
		size_t avail, n;
		const char *msg;
		size_t len;

		switch (varlink_reader_next(&c->reader, &msg, &len)) {
		case VARLINK_READ_MESSAGE:
			handle_message(c, msg, len);
			continue;
		case VARLINK_READ_OVERSIZE:
			oversize(c, len);
			continue;
		case VARLINK_READ_AGAIN:
			break;
		}
		avail = evbuffer_get_length(in);
		if (avail == 0)
			return;
		n = varlink_reader_space(&c->reader);
		if (n > sizeof(chunk))
			n = sizeof(chunk);
		if (n > avail)
			n = avail;
		if (evbuffer_remove(in, chunk, n) != (int)n ||
		    varlink_reader_feed(&c->reader, chunk, n) < 0) {
			log_err(&c->d->log,
				"connection %llu: cannot buffer input; "
				"closing",
				(unsigned long long)c->id);
			conn_close(c, false);
			return;
		}
	}
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	c->busy = true;
	process_input(c);
	c->busy = false;
	settle(c);
}

/* After a hold ended outside read_cb: read the calls queued meanwhile. */
static void resume(struct conn *c)
{
	if (c->held || c->busy || !conn_is_open(c))
		return;
	c->busy = true;
	process_input(c);
	c->busy = false;
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->held && c->on_drain && !c->dead) {
		c->busy = true;
		c->on_drain(c->hold_arg);
		c->busy = false;
		resume(c);
	}
	/* The output has drained: a closing connection is done. */
	settle(c);
}

void conn_hold(struct conn *c, void (*on_drain)(void *arg),
	       void (*on_free)(void *arg), void *arg)
{
	c->held = true;
	c->on_drain = on_drain;
	c->on_free = on_free;
	c->hold_arg = arg;
}

void conn_release(struct conn *c)
{
	c->held = false;
	c->on_drain = NULL;
	c->on_free = NULL;
	c->hold_arg = NULL;
	if (c->busy)
		return; /* the callback we are in reads on, then settles */
	resume(c);
	settle(c);
}

size_t conn_output_pending(const struct conn *c)
{
	return evbuffer_get_length(bufferevent_get_output(c->bev));
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn *c = arg;
	size_t pending = varlink_reader_pending(&c->reader);
	size_t skipped = varlink_reader_skipping(&c->reader);

	if (what & BEV_EVENT_ERROR) {
		log_debug(&c->d->log, "connection %llu: %s: %s",
			  (unsigned long long)c->id,
			  what & BEV_EVENT_WRITING ? "write" : "read",
			  evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		conn_close(c, false);
		return;
	}
	if (what & BEV_EVENT_EOF) {
		/* It left inside an oversize call: answer what it sent. */
		if (skipped && conn_is_open(c))
			oversize(c, skipped);
		else if (pending && !c->closing)
			log_info(&c->d->log,
				 "connection %llu: client left in the middle "
				 "of a message (%zu bytes discarded)",
				 (unsigned long long)c->id, pending);
		/* A half-closed client may still read its replies. */
		conn_close(c, true);
	}
}
