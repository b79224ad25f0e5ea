/*
 * invocation.c - a call's life (see invocation.h): call.started, the
 * queue of its service, the run in the service's turns (cm_call_start:
 * bounded turns, so a guest that spins holds up only its own service;
 * several calls of a service in flight at once), the deadline, Cancel,
 * the terminal event and the reply sent from the history's `done`
 * callback.  Values too long for an event are recorded in their bounded
 * form (history_form); a reply too long for a message goes without
 * resultWave, or becomes ValueTooLarge (fit_reply).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - invocation_begin: a struct invocation, copies of the service name
 *    (HISTORY_NAME_MAX) and export name (in the request,
 *    VARLINK_MESSAGE_MAX); the arguments as cm_vals, parsed from one
 *    request; a call waits queued only while its service has fewer than
 *    limits.maxQueuedCalls (SERVICE_MAX_QUEUED_CALLS, 1024) waiting,
 *    else ServiceBusy; at most limits.maxConcurrentCalls
 *    (SERVICE_MAX_CONCURRENT_CALLS, 64) are in flight.
 *  - history_form: the JSON text of an argument list or result, written
 *    only when json_text_bound says it may pass HISTORY_VALUE_MAX, and
 *    its bounded form (about 25 KiB at most) in place of it.
 *  - returned: the result's JSON and WAVE text, from a value the runtime
 *    lifted (limits.hostBytes); fit_reply measures the reply against
 *    VARLINK_MESSAGE_MAX and drops resultWave or answers ValueTooLarge.
 *  - take_chunks (chunkedResult): a copy of a list<u8> or string result's
 *    bytes (one byte each, from a value the runtime lifted within
 *    limits.hostBytes), held until its chunks are sent; each chunk's
 *    base64, INVOCATION_CHUNK_BYTES (1 MiB) of bytes, is queued only
 *    while less than two chunks' worth of output is unsent.
 *  - error replies and details: fixed members, CM_ERROR_MSG_MAX messages,
 *    service.h's 256-byte reason.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/wave.h"
#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/invocation.h"
#include "daemon/service.h"
#include "ipc/json-text.h"
#include "ipc/value-json.h"
#include "store/history.h"

#define ERR_PREFIX "io.hostel.Call."

/*
 * This run's random prefix and the call's number, ten digits wide: ids
 * sort in the order the calls came, so the history's index of calls
 * grows at its end.  (Unpadded, the ids from 100000 on fell among those
 * of 10000.. and every commit dirtied index pages all over: 9% more
 * instructions an event in bench/history-append.)
 */
void invocation_id_format(struct daemon *d, uint64_t number,
			  char out[INVOCATION_ID_MAX])
{
	snprintf(out, INVOCATION_ID_MAX, "%016llx-%010llu",
		 (unsigned long long)d->services->call_prefix,
		 (unsigned long long)number);
}

/*
 * v as the history records it: v itself, or its bounded form
 * (history_value_bounded) when its JSON text is longer than
 * HISTORY_VALUE_MAX, so that no argument or result, whatever its size,
 * makes the history refuse the call's event.  The text is only written
 * for values whose bound says they might be that long.  A new
 * reference; NULL when out of memory.
 */
static json_t *history_form(json_t *v)
{
	struct json_text t = {0};
	json_error_t jerr;
	json_t *form;
	char *text;

	if (json_text_bound(v) <= HISTORY_VALUE_MAX)
		return json_incref(v);
	if (json_text_put(&t, v)) {
		json_text_free(&t);
		return NULL;
	}
	if (t.len <= HISTORY_VALUE_MAX) {
		json_text_free(&t);
		return json_incref(v);
	}
	text = history_value_bounded(t.buf, t.len);
	json_text_free(&t);
	form = text ? json_loads(text, 0, &jerr) : NULL;
	free(text);
	return form;
}

/* Whether an encoded msg stays within the message bound; else *size. */
static bool message_fits(const json_t *msg, size_t *size)
{
	if (json_text_bound(msg) <= VARLINK_MESSAGE_MAX)
		return true;
	/* 0 is a failure to encode: conn_send() will find it too. */
	*size = json_dumpb(msg, NULL, 0, JSON_COMPACT);
	return *size == 0 || *size <= VARLINK_MESSAGE_MAX;
}

/*
 * The reply of a returned call, within the message bound (a client
 * could not read a longer one): as it is; else without resultWave (the
 * canonical result is the reply's point, its WAVE text a convenience);
 * else io.hostel.Call.ValueTooLarge with the size of the reply that
 * would have carried the result.  The history has the call either way.
 */
static json_t *fit_reply(struct invocation *inv, json_t *msg)
{
	json_t *params = json_object_get(msg, "parameters");
	size_t size = 0;

	if (message_fits(msg, &size))
		return msg;
	if (json_object_get(params, "resultWave")) {
		size_t with = size;

		json_object_del(params, "resultWave");
		if (message_fits(msg, &size)) {
			log_info(&inv->d->log,
				 "call %s: reply of %zu bytes, more than %u: "
				 "sent without resultWave",
				 inv->id, with, VARLINK_MESSAGE_MAX);
			return msg;
		}
	}
	log_warn(&inv->d->log,
		 "call %s: its result needs a reply of %zu bytes, more than "
		 "%u: ValueTooLarge",
		 inv->id, size, VARLINK_MESSAGE_MAX);
	json_decref(msg);
	return varlink_error_new(HOSTEL_ERROR_VALUE_TOO_LARGE,
				 json_pack("{ss,sI,sI}", "value", "result",
					   "size", (json_int_t)size, "limit",
					   (json_int_t)VARLINK_MESSAGE_MAX));
}

static void inv_free(struct invocation *inv)
{
	if (inv->ev_deadline)
		event_free(inv->ev_deadline);
	cm_vals_free(inv->args, inv->nargs);
	free(inv->args);
	free(inv->service_name);
	free(inv->export_name);
	free(inv->chunks);
	json_decref(inv->reply);
	free(inv);
}

/* The client went away: the call goes on, nobody gets the reply. */
static void on_conn_free(void *arg)
{
	struct invocation *inv = arg;

	inv->conn = NULL;
}

/* The client went away while its result's chunks were being sent. */
static void on_conn_free_chunks(void *arg)
{
	struct invocation *inv = arg;

	inv->conn = NULL;
	inv_free(inv);
}

/*
 * chunkedResult, after the terminal event is durable: the next chunks
 * of the result, while less than two chunks' worth of output waits
 * (called again as the output drains), then the final reply.  When a
 * send drops the connection, the connection's hold frees inv
 * (on_conn_free_chunks): nothing here touches it after that.
 */
static void send_chunks(void *arg)
{
	struct invocation *inv = arg;
	struct conn *c = inv->conn;
	json_t *msg;

	while (inv->chunks_sent < inv->chunks_len &&
	       conn_output_pending(c) < 2 * INVOCATION_CHUNK_BYTES) {
		size_t n = inv->chunks_len - inv->chunks_sent;
		char *b64;

		if (n > INVOCATION_CHUNK_BYTES)
			n = INVOCATION_CHUNK_BYTES;
		b64 = value_base64_encode(inv->chunks + inv->chunks_sent, n);
		inv->chunks_sent += n;
		msg = b64 ? varlink_reply_new(
				    json_pack("{ss,ss,ss}", "callId", inv->id,
					      "state", "chunk", "chunk", b64),
				    true)
			  : NULL;
		free(b64);
		if (conn_send(c, msg))
			return;
	}
	if (inv->chunks_sent < inv->chunks_len)
		return; /* on the next drain */
	msg = inv->reply;
	inv->reply = NULL;
	if (conn_send(c, msg))
		return;
	inv->conn = NULL;
	conn_release(c);
	inv_free(inv);
}

/* The terminal event is durable (status 0) or was given up on. */
static void done(void *arg, int status, uint64_t seq)
{
	struct invocation *inv = arg;
	struct conn *c = inv->conn;

	if (c && status >= 0 && inv->reply && inv->chunks) {
		conn_hold(c, send_chunks, on_conn_free_chunks, inv);
		send_chunks(inv);
		return;
	}

	if (c) {
		json_t *msg = inv->reply;

		inv->reply = NULL;
		if (status < 0 || !msg) {
			json_decref(msg);
			msg = varlink_error_new(
				ERR_PREFIX "HistoryUnavailable",
				json_pack("{ss}", "reason",
					  status < 0 ? strerror(-status)
						     : "out of memory"));
		}
		inv->conn = NULL;
		conn_send(c, msg);
		conn_release(c);
	}
	inv_free(inv);
}

void invocation_end(struct invocation *inv, enum call_outcome outcome,
		    json_t *detail, json_t *reply)
{
	const struct history_hooks *h = daemon_history_hooks(inv->d);
	int rc;

	inv->ended = true;
	if (inv->svc)
		metrics_call_ended(&inv->svc->metrics, outcome,
				   metrics_now_ns() - inv->begun_ns);
	inv->svc = NULL;
	if (inv->ev_deadline)
		event_del(inv->ev_deadline);
	json_decref(inv->reply);
	inv->reply = reply;
	if (!h) {
		done(inv, -ESHUTDOWN, 0);
		return;
	}
	rc = h->call_ended(h->ctx, inv->service_name, inv->id, outcome, detail,
			   done, inv);
	if (rc) {
		log_err(&inv->d->log, "call %s: terminal event refused: %s",
			inv->id, strerror(-rc));
		done(inv, rc, 0);
	}
}

static void end_error(struct invocation *inv, enum call_outcome outcome,
		      json_t *detail, const char *error, json_t *params)
{
	invocation_end(inv, outcome, detail, varlink_error_new(error, params));
	json_decref(detail);
}

/* The reply of a call past its deadline (started: taken to run). */
static json_t *deadline_reply(const struct invocation *inv, bool started)
{
	return varlink_error_new(
		ERR_PREFIX "CallDeadline",
		json_pack("{ss,sI,sb}", "callId", inv->id, "deadlineMs",
			  (json_int_t)inv->deadline_ms, "started", started));
}

/* Ended by its deadline with the store untouched: call.cancelled. */
static void deadline_cancel(struct invocation *inv, const char *reason,
			    bool started)
{
	json_t *detail = json_pack("{ss}", "reason", reason);

	invocation_end(inv, CALL_CANCELLED, detail,
		       deadline_reply(inv, started));
	json_decref(detail);
}

void invocation_cancel(struct invocation *inv, const char *reason)
{
	end_error(inv, CALL_CANCELLED, json_pack("{ss}", "reason", reason),
		  ERR_PREFIX "CallCancelled",
		  json_pack("{ss,ss}", "callId", inv->id, "reason", reason));
}

/* The call did not run: its service's instance is (being) replaced. */
static void end_poisoned(struct invocation *inv, const char *reason)
{
	end_error(inv, CALL_FAILED,
		  json_pack("{ss,ss}", "error", ERR_PREFIX "ServicePoisoned",
			    "message", reason),
		  ERR_PREFIX "ServicePoisoned",
		  json_pack("{ss,ss}", "name", inv->service_name, "reason",
			    reason));
}

/*
 * Past the deadline: a queued call, or one not begun or waiting at the
 * entry gate, is cancelled; a running one is stopped (cm_call_cancel:
 * call.trapped "deadline exceeded", which poisons the instance), the
 * other calls in flight end, and the store is recreated at once, so the
 * service keeps answering.
 */
static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct invocation *inv = arg;
	struct service *svc = inv->svc;
	char why[INVOCATION_ID_MAX + 64];

	(void)fd;
	(void)what;
	if (inv->queued && svc && service_dequeue(svc, inv)) {
		inv->deadline_hit = true;
		deadline_cancel(inv, "deadline exceeded before the call ran",
				false);
		return;
	}
	if (!inv->call || !svc)
		return;
	inv->deadline_hit = true;
	log_info(&inv->d->log, "service %s: call %s: deadline exceeded",
		 svc->name, inv->id);
	snprintf(why, sizeof(why), "call %s exceeded its deadline", inv->id);
	/* ends inv (which may be freed by now) */
	if (cm_call_cancel(inv->call, "deadline exceeded") == CM_CALL_TRAPPED)
		service_poisoned(svc, why);
}

uint64_t invocation_deadline(const struct daemon *d, const struct service *svc,
			     int64_t asked)
{
	uint64_t limit = svc->limits.deadline_ms;

	if (asked >= 0)
		return limit && (asked == 0 || (uint64_t)asked > limit)
			       ? limit
			       : (uint64_t)asked;
	if (limit)
		return limit;
	if (d->file.call_deadline >= 0)
		return (uint64_t)d->file.call_deadline * 1000;
	return CONFIG_CALL_DEADLINE_DEFAULT * 1000;
}

int invocation_begin(struct call *call, struct service *svc,
		     const char *export_name, const cm_type *func, cm_val *args,
		     uint32_t nargs, const struct invocation_opts *opts)
{
	struct daemon *d = call->d;
	const struct history_hooks *h = daemon_history_hooks(d);
	struct invocation *inv;
	json_t *args_json, *recorded;
	uint64_t limit, arg_bytes = cm_vals_host_bytes(args, nargs);
	bool full = service_queue_full(svc, &limit);
	int rc;

	/* Before call.started: a refused call leaves no trace.  The queue
	 * is full by count, or by the host memory its arguments take. */
	if (full || service_queue_bytes_full(svc, arg_bytes)) {
		/* Once a row: a flood of oneway calls must not flood the
		 * log (service_enqueue counts the row when it ends). */
		svc->metrics.busy++;
		if (svc->busy_refused++ == 0)
			log_info(&d->log,
				 "service %s: %llu calls queued (limit %llu): "
				 "calls are refused, ServiceBusy",
				 svc->name, (unsigned long long)svc->queued,
				 (unsigned long long)limit);
		cm_vals_free(args, nargs);
		free(args);
		call_error(call, ERR_PREFIX "ServiceBusy",
			   json_pack("{ss,sI,sI,sI,sI}", "name", svc->name,
				     "queued", (json_int_t)svc->queued, "limit",
				     (json_int_t)limit, "queuedBytes",
				     (json_int_t)svc->queued_bytes,
				     "bytesLimit",
				     (json_int_t)service_host_bytes(svc)));
		return -1;
	}
	inv = calloc(1, sizeof(*inv));
	if (!inv) {
		cm_vals_free(args, nargs);
		free(args);
		call_reply(call, NULL);
		return -1;
	}
	inv->d = d;
	inv->begun_ns = metrics_now_ns();
	inv->func = func;
	inv->arg_bytes = arg_bytes;
	inv->args = args;
	inv->nargs = nargs;
	inv->more = call->req->more;
	inv->chunked = opts->chunked_result;
	inv->deadline_ms = invocation_deadline(d, svc, opts->deadline_ms);
	inv->number = ++d->services->next_call;
	invocation_id_format(d, inv->number, inv->id);
	inv->service_name = strdup(svc->name);
	inv->export_name = strdup(export_name);
	args_json = value_args_to_json(args, nargs, func);
	recorded = history_form(args_json);
	json_decref(args_json);
	if (!inv->service_name || !inv->export_name || !recorded) {
		json_decref(recorded);
		inv_free(inv);
		call_reply(call, NULL);
		return -1;
	}
	rc = h ? h->call_started(h->ctx, svc->name, inv->id, export_name,
				 recorded, &call->conn->cred)
	       : -ESHUTDOWN;
	json_decref(recorded);
	if (rc) {
		call_error(call, ERR_PREFIX "HistoryUnavailable",
			   json_pack("{ss}", "reason", strerror(-rc)));
		inv_free(inv);
		return -1;
	}
	if (inv->deadline_ms) {
		struct timeval tv = {
			(time_t)(inv->deadline_ms / 1000),
			(suseconds_t)(inv->deadline_ms % 1000) * 1000};

		inv->ev_deadline = evtimer_new(d->base, deadline_cb, inv);
		if (inv->ev_deadline)
			evtimer_add(inv->ev_deadline, &tv);
	}
	if (call->req->oneway) {
		/* No reply at all; the call still ends in the history. */
		call_reply(call, json_pack("{ss}", "callId", inv->id));
	} else {
		inv->conn = call->conn;
		call_hold(call, NULL, on_conn_free, inv);
		if (inv->more)
			conn_send(
				inv->conn,
				varlink_reply_new(json_pack("{ss,ss}", "callId",
							    inv->id, "state",
							    "started"),
						  true));
	}
	service_enqueue(svc, inv);
	return 0;
}

/*
 * The reply and history detail of a call that returned: the history
 * holds the result (or its bounded form); the reply carries it when it
 * fits in a message (fit_reply).
 */
/*
 * chunkedResult with a list<u8> or string result and a client to read
 * it: its bytes in inv->chunks (a copy: the runtime owns the result),
 * for send_chunks.  Whether it did (false also when out of memory: the
 * reply is then the usual one, measured by fit_reply).
 */
static bool take_chunks(struct invocation *inv, const cm_type *rt,
			const cm_val *v)
{
	bool bytes = rt->kind == CM_LIST && rt->u.list.len == 0 &&
		     rt->u.list.elem->kind == CM_U8 && v->kind == CM_LIST;
	size_t n;

	if (!inv->chunked || !inv->conn ||
	    !(bytes || (rt->kind == CM_STRING && v->kind == CM_STRING)))
		return false;
	n = bytes ? v->u.list.n : v->u.str.len;
	inv->chunks = malloc(n ? n : 1);
	if (!inv->chunks)
		return false;
	if (n) /* a list<u8> is in byte form (val.h) */
		memcpy(inv->chunks, bytes ? v->u.list.bytes : v->u.str.ptr, n);
	inv->chunks_len = n;
	return true;
}

static void returned(struct invocation *inv, const cm_val *results,
		     uint32_t nres)
{
	const cm_type *rt = inv->func->u.func.result;
	json_t *result = NULL, *params, *reply, *detail;
	char *wave = NULL;
	size_t wlen;
	bool chunked = rt && nres == 1 && take_chunks(inv, rt, &results[0]);

	if (rt && nres == 1) {
		result = value_to_json(&results[0], rt);
		if (!chunked &&
		    wave_print_results(inv->func, results, &wave, &wlen))
			wave = NULL;
	}
	if (chunked)
		params = json_pack("{ss,ss,sI}", "callId", inv->id, "state",
				   "returned", "resultBytes",
				   (json_int_t)inv->chunks_len);
	else
		/* {"value": V}: varlink's object type is a JSON object,
		 * and a result may be any JSON value (hostel-protocol(7)). */
		params = json_pack("{ss,ss,so,ss*}", "callId", inv->id,
				   "state", "returned", "result",
				   result ? json_pack("{sO}", "value", result)
					  : json_null(),
				   "resultWave", wave);
	free(wave);
	detail = json_pack("{so*}", "results",
			   history_form(result ? result : json_null()));
	reply = params ? varlink_reply_new(params, false) : NULL;
	/* A reply nobody reads (oneway, the client left) is not measured;
	 * nor the final reply after chunks (it holds no result). */
	if (reply && inv->conn && !chunked)
		reply = fit_reply(inv, reply);
	invocation_end(inv, CALL_RETURNED, detail, reply);
	json_decref(detail);
	json_decref(result);
}

/*
 * The call trapped; the service notes the poisoning (recorded once,
 * after the turn: service_note_trap).
 */
static void trapped(struct invocation *inv, struct service *svc,
		    const char *msg)
{
	bool poisoned = svc->inst && cm_instance_poisoned(svc->inst);
	char id[INVOCATION_ID_MAX];

	json_t *detail = json_pack("{ss}", "trap", msg);

	memcpy(id, inv->id, sizeof(id));
	/* a deadline's stop is recorded as a trap, answered CallDeadline */
	invocation_end(inv, CALL_TRAPPED, detail,
		       inv->deadline_hit
			       ? deadline_reply(inv, true)
			       : varlink_error_new(
					 ERR_PREFIX "CallTrapped",
					 json_pack("{ss,ss}", "callId", id,
						   "message", msg)));
	json_decref(detail);
	if (poisoned)
		service_note_trap(svc, id, msg);
}

static void failed(struct invocation *inv, const cm_error *err)
{
	end_error(inv, CALL_FAILED,
		  json_pack("{ss,ss}", "error", cm_error_kind_name(err->kind),
			    "message", err->msg),
		  ERR_PREFIX "CallFailed",
		  json_pack("{ss,ss,ss}", "callId", inv->id, "kind",
			    cm_error_kind_name(err->kind), "message",
			    err->msg));
}

/*
 * The runtime decided a call in flight (cm_call_done_fn): at the end of
 * the service turn that did, or inside cm_call_cancel.  Ends it exactly
 * once; never frees the store nor ends other calls (the service does,
 * after the turn or the cancel: service_poisoned, service_turn).
 */
static void call_done(void *ctx, cm_call_outcome outcome, const cm_val *results,
		      uint32_t nres, const cm_error *err)
{
	struct invocation *inv = ctx;
	struct service *svc = inv->svc;
	char why[CM_ERROR_MSG_MAX + 96];

	inv->call = NULL;
	service_running_remove(svc, inv);
	svc->calls++;
	switch (outcome) {
	case CM_CALL_RETURNED:
		returned(inv, results, nres);
		/* a returned stream or future is printed, never read: its
		 * guest writer would wait for ever, with its task and thread */
		cm_vals_drop_ends(svc->store, results, nres);
		break;
	case CM_CALL_CANCELLED:
		/* no guest code of it ran */
		if (inv->aborting)
			end_poisoned(inv, err->msg);
		else if (inv->deadline_hit)
			deadline_cancel(inv, err->msg, true);
		else
			invocation_cancel(inv, err->msg);
		break;
	case CM_CALL_TRAPPED:
		if (inv->stopping) {
			invocation_cancel(inv, err->msg);
		} else if (inv->cancelling) {
			snprintf(why, sizeof(why),
				 "%s while running (the instance is poisoned; "
				 "the store is recreated)",
				 err->msg);
			invocation_cancel(inv, why);
		} else if (err->kind == CM_ERR_TRAP || inv->deadline_hit) {
			trapped(inv, svc, err->msg);
		} else {
			failed(inv, err);
		}
		break;
	}
	/* room under the cap for a queued call */
	if (svc->queue_head)
		service_request(svc);
}

void invocation_stop(struct invocation *inv, const char *reason)
{
	if (!inv->call)
		return;
	/* Not a trap of the guest's: the store goes anyway. */
	inv->stopping = true;
	cm_call_cancel(inv->call, reason);
}

void invocation_settle(struct invocation *inv, const char *reason)
{
	if (inv->call)
		cm_call_end_clean(inv->call, reason);
}

void invocation_interrupt(struct invocation *inv, const char *reason)
{
	struct service *svc = inv->svc;

	if (!inv->call || !svc)
		return;
	/* the store's image holds the call; its store is freed next */
	cm_call_set_done(inv->call, NULL, NULL);
	inv->call = NULL;
	service_running_remove(svc, inv);
	svc->calls++;
	end_error(inv, CALL_INTERRUPTED, json_pack("{ss}", "reason", reason),
		  ERR_PREFIX "CallInterrupted",
		  json_pack("{ss,ss}", "callId", inv->id, "reason", reason));
}

void invocation_abort(struct invocation *inv, const char *why)
{
	if (!inv->call)
		return;
	inv->aborting = true;
	cm_call_cancel(inv->call, why);
}

void invocation_cancel_running(struct invocation *inv, const char *reason)
{
	struct service *svc = inv->svc;
	char why[INVOCATION_ID_MAX + 64];

	if (!inv->call || !svc)
		return;
	snprintf(why, sizeof(why), "call %s was cancelled while running",
		 inv->id);
	inv->cancelling = true;
	/* ends inv (which may be freed by now) */
	if (cm_call_cancel(inv->call, reason) == CM_CALL_TRAPPED)
		service_poisoned(svc, why);
}

void invocation_run(struct invocation *inv)
{
	struct service *svc = inv->svc;
	cm_error err;
	cm_func *f;

	if (svc->state == SERVICE_POISONED) {
		char reason[sizeof(svc->reason)];

		memcpy(reason, svc->reason, sizeof(reason));
		end_poisoned(inv, reason);
		/* The next call finds fresh state. */
		service_start(svc, NULL);
		return;
	}
	f = svc->state == SERVICE_RUNNING
		    ? service_export(svc, inv->export_name,
				     strlen(inv->export_name), NULL)
		    : NULL;
	if (!f) {
		bool running = svc->state == SERVICE_RUNNING;

		end_error(inv, CALL_FAILED,
			  json_pack("{ss}", "error",
				    running ? ERR_PREFIX "ExportNotFound"
					    : ERR_PREFIX "ServiceNotRunning"),
			  running ? ERR_PREFIX "ExportNotFound"
				  : ERR_PREFIX "ServiceNotRunning",
			  running ? json_pack("{ss,ss}", "name", svc->name,
					      "export", inv->export_name)
				  : json_pack("{ss,ss}", "name", svc->name,
					      "state",
					      service_state_name(svc->state)));
		return;
	}
	/* It runs in the service's turns, its fuel counted across them. */
	memset(&err, 0, sizeof(err));
	if (cm_call_start(svc->store, f, inv->args, inv->nargs,
			  svc->limits.fuel_per_call, call_done, inv, &inv->call,
			  &err)) {
		svc->calls++;
		failed(inv, &err);
		return;
	}
	/* the runtime holds its own copy of the arguments now */
	cm_vals_free(inv->args, inv->nargs);
	free(inv->args);
	inv->args = NULL;
	inv->nargs = 0;
	/* hostcall.* events of its task name it (hostcalls.c) */
	cm_call_set_tag(inv->call, inv->number);
	service_running_add(svc, inv);
}

struct invocation *invocation_find(struct daemon *d, const char *id)
{
	if (!d->services)
		return NULL;
	for (struct service *s = d->services->head; s; s = s->next) {
		for (struct invocation *i = s->queue_head; i; i = i->next)
			if (!strcmp(i->id, id))
				return i;
		for (struct invocation *i = s->run_head; i; i = i->next)
			if (!strcmp(i->id, id))
				return i;
	}
	return NULL;
}
