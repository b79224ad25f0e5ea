/*
 * invocation.h - one call into a service, from io.hostel.Call.Invoke to
 * its durable terminal event and its reply.
 *
 * Contract (ARCHITECTURE invariants 5 and 6):
 *  - invocation_begin() records call.started; only then is the call
 *    queued on its service.  Every started call is ended exactly once by
 *    invocation_end(), which records the terminal event (returned,
 *    trapped, cancelled, failed) with a `done` callback.
 *  - The varlink reply is sent only from that `done` callback, after the
 *    terminal event is durable (or, if the history gave up, as
 *    io.hostel.Call.HistoryUnavailable).  The connection is held
 *    (call_hold) meanwhile; if the client goes away, the call still runs
 *    and ends in the history.
 *  - After invocation_end() the invocation belongs to the history until
 *    `done`; it never touches its service again, so a service may be
 *    removed while replies are in flight.
 */
#ifndef HOSTEL_DAEMON_INVOCATION_H
#define HOSTEL_DAEMON_INVOCATION_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "cabi/val.h"
#include "component/types.h"
#include "daemon/history-hooks.h"

struct call;
struct conn;
struct daemon;
struct service;

#define INVOCATION_ID_MAX 48

struct invocation {
	struct daemon *d;
	struct invocation *next, *prev; /* in the service's queue */
	struct service *svc;		/* until it ends */
	char id[INVOCATION_ID_MAX];
	char *service_name;
	char *export_name;
	const cm_type *func; /* CM_FUNC, owned by the component */
	cm_val *args;
	uint32_t nargs;
	struct conn *conn; /* NULL: oneway, or the client left */
	bool more;
	bool queued;
	bool ended;
	struct event *ev_deadline;
	json_t *reply; /* the message `done` sends */
};

/*
 * Record call.started and queue the call; the handler has taken the
 * connection (call_hold) unless oneway.  Takes args.  Returns 0, or -1
 * after replying with an error (the invocation is freed then).
 */
int invocation_begin(struct call *call, struct service *svc,
		     const char *export_name, const cm_type *func, cm_val *args,
		     uint32_t nargs);

/* Run it now, in its service's turn (the service is running). */
void invocation_run(struct invocation *inv);

/*
 * End it: outcome, the history detail (borrowed), and the reply to send
 * once durable (consumed: a varlink message).
 */
void invocation_end(struct invocation *inv, enum call_outcome outcome,
		    json_t *detail, json_t *reply);

/* End a queued call as cancelled (already taken out of its queue). */
void invocation_cancel(struct invocation *inv, const char *reason);

/* A queued call by id, in any service; NULL if none. */
struct invocation *invocation_find_queued(struct daemon *d, const char *id);

#endif
