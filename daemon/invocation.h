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
 *  - No value makes the history refuse a call: arguments (call.started)
 *    and results (call.returned) whose JSON text is longer than
 *    HISTORY_VALUE_MAX are recorded in their bounded form
 *    {oversize, bytes, sha256, head} (store/history.h
 *    history_value_bounded).  A returned call whose reply would pass
 *    VARLINK_MESSAGE_MAX goes without resultWave, or, still too long,
 *    is answered io.hostel.Call.ValueTooLarge {value "result", size,
 *    limit}; the history has its call.returned either way.  (A request
 *    past the bound never reaches invocation_begin: conn.c answers it
 *    ValueTooLarge {value "argument"}.)
 *  - A call's deadline (invocation_deadline: the call's deadlineMs, at
 *    most its service's limits.deadlineMs; else that; else hostel.conf's
 *    call-deadline) ends it queued or running (invocation.c
 *    deadline_cb): io.hostel.Call.CallDeadline.
 *  - chunkedResult: a list<u8> or string result is sent, after the
 *    terminal event is durable, as continuing replies of at most
 *    INVOCATION_CHUNK_BYTES each, one at a time as the connection's
 *    output drains (never more than one chunk queued), then the final
 *    reply; the invocation holds the result's bytes until then.
 *  - Calls of one service run concurrently (service.h): each in-flight
 *    call is on its service's run list from invocation_run() until its
 *    on_done, and is stopped, cancelled or aborted on its own.
 *  - After invocation_end() the invocation belongs to the history until
 *    `done`; it never touches its service again, so a service may be
 *    removed while replies are in flight.
 */
#ifndef HOSTEL_DAEMON_INVOCATION_H
#define HOSTEL_DAEMON_INVOCATION_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "value/val.h"
#include "run/instance.h"
#include "component/types.h"
#include "daemon/history-hooks.h"

struct call;
struct conn;
struct daemon;
struct service;

#define INVOCATION_ID_MAX 48
/* The bytes of a result chunk (chunkedResult): 1 MiB, 1.4 MB of base64. */
#define INVOCATION_CHUNK_BYTES (1u << 20)

/* What an Invoke asks besides its arguments. */
struct invocation_opts {
	int64_t deadline_ms; /* the call's deadlineMs; -1: not given */
	bool chunked_result; /* chunkedResult (with more) */
};

struct invocation {
	struct daemon *d;
	/* in the service's queue, then its run list */
	struct invocation *next, *prev;
	struct service *svc; /* until it ends */
	char id[INVOCATION_ID_MAX];
	uint64_t number; /* in the id: this run's count of calls */
	uint64_t begun_ns; /* call.started (metrics_now_ns): its latency */
	char *service_name;
	char *export_name;
	const cm_type *func; /* CM_FUNC, owned by the component */
	cm_val *args; /* until the call starts (the runtime has a copy) */
	uint32_t nargs;
	uint64_t arg_bytes; /* the args as host values (cm_vals_host_bytes) */
	struct conn *conn;  /* NULL: oneway, or the client left */
	bool more;
	bool queued;
	bool ended;
	cm_call *call;	 /* while in flight (its service's run list) */
	bool stopping;	 /* invocation_stop: a stop ends it cancelled */
	bool cancelling; /* Call.Cancel of a running call: cancelled */
	bool aborting;	 /* another call poisoned its instance */
	struct event *ev_deadline;
	uint64_t deadline_ms; /* in effect; 0: none */
	bool deadline_hit;    /* deadline_cb ended or is ending it */
	bool chunked;	      /* chunkedResult was asked */
	uint8_t *chunks;      /* the result's bytes to send in chunks */
	size_t chunks_len, chunks_sent;
	json_t *reply; /* the message `done` sends */
};

/* The id of this run's call `number` (as struct invocation's id). */
void invocation_id_format(struct daemon *d, uint64_t number,
			  char out[INVOCATION_ID_MAX]);

/*
 * Record call.started and queue the call; the handler has taken the
 * connection (call_hold) unless oneway.  Takes args.  Returns 0, or -1
 * after replying with an error (the invocation is freed then): among
 * them io.hostel.Call.ServiceBusy, before call.started, when the
 * service's queue is full (service_queue_full): as many calls as its
 * limits.maxQueuedCalls wait, or their arguments would take more host
 * memory than its limits.hostBytes.
 */
int invocation_begin(struct call *call, struct service *svc,
		     const char *export_name, const cm_type *func, cm_val *args,
		     uint32_t nargs, const struct invocation_opts *opts);

/*
 * The deadline of a call, in ms (0: none): the call's own (asked >= 0;
 * 0 asks for none) but at most the service's limits.deadlineMs, else
 * the service's, else hostel.conf's call-deadline (default
 * CONFIG_CALL_DEADLINE_DEFAULT; 0: none).
 */
uint64_t invocation_deadline(const struct daemon *d, const struct service *svc,
			     int64_t asked);

/*
 * Begin it in its service's turn (under the service's cap of calls in
 * flight): it joins the service's run list, its guest code runs in the
 * service's turns (cm_store_service_turn) beside the other calls in
 * flight until it ends; or it ends at once (poisoned or stopped
 * service, unknown export).
 */
void invocation_run(struct invocation *inv);

/*
 * End the running call now, as cancelled with `reason` (the service
 * stops or its store goes); its instance is poisoned if its guest code
 * had begun.
 */
void invocation_stop(struct invocation *inv, const char *reason);

/*
 * A graceful stop of a durable service, before its image: end the call
 * now if no guest code of it has to stop midway (not begun or at its
 * instance's entry gate: cancelled, the store untouched; its result in:
 * returned); one under way is left as it is.
 */
void invocation_settle(struct invocation *inv, const char *reason);

/*
 * After that image: the call under way is in it, so it is neither
 * cancelled nor stopped: it ends call.interrupted for its client
 * (CallInterrupted, `reason`), as after a crash, and the runtime's call
 * is let go of with the store.  If the image holds it, it goes on after
 * the next start without a client (durable.c durable_restored_calls).
 */
void invocation_interrupt(struct invocation *inv, const char *reason);

/*
 * Another call (or background work) poisoned the instance under this
 * call in flight: end it now, trapped with `why` if its guest code had
 * begun, else failed with ServicePoisoned (no guest code ran).
 */
void invocation_abort(struct invocation *inv, const char *why);

/*
 * Call.Cancel of a call in flight (cm_call_cancel): one not begun, or
 * waiting at its instance's entry gate, ends cancelled and the store is
 * untouched; one whose guest code has begun ends cancelled too, but
 * stopping it midway poisons the instance, so the service records the
 * poisoning, ends the other calls in flight and recreates the store.
 */
void invocation_cancel_running(struct invocation *inv, const char *reason);

/*
 * End it: outcome, the history detail (borrowed), and the reply to send
 * once durable (consumed: a varlink message).
 */
void invocation_end(struct invocation *inv, enum call_outcome outcome,
		    json_t *detail, json_t *reply);

/* End a queued call as cancelled (already taken out of its queue). */
void invocation_cancel(struct invocation *inv, const char *reason);

/* A queued or in-flight call by id, in any service; NULL if none. */
struct invocation *invocation_find(struct daemon *d, const char *id);

#endif
