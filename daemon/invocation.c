/*
 * invocation.c - a call's life (see invocation.h): call.started, the
 * queue of its service, the run in the service turn, the terminal event
 * and the reply sent from the history's `done` callback.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cabi/wave.h"
#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/invocation.h"
#include "daemon/service.h"
#include "ipc/value-json.h"

#define ERR_PREFIX "io.hostel.Call."

static void inv_free(struct invocation *inv)
{
	if (inv->ev_deadline)
		event_free(inv->ev_deadline);
	cm_vals_free(inv->args, inv->nargs);
	free(inv->args);
	free(inv->service_name);
	free(inv->export_name);
	json_decref(inv->reply);
	free(inv);
}

/* The client went away: the call goes on, nobody gets the reply. */
static void on_conn_free(void *arg)
{
	struct invocation *inv = arg;

	inv->conn = NULL;
}

/* The terminal event is durable (status 0) or was given up on. */
static void done(void *arg, int status, uint64_t seq)
{
	struct invocation *inv = arg;
	struct conn *c = inv->conn;

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

void invocation_cancel(struct invocation *inv, const char *reason)
{
	end_error(inv, CALL_CANCELLED, json_pack("{ss}", "reason", reason),
		  ERR_PREFIX "CallCancelled",
		  json_pack("{ss,ss}", "callId", inv->id, "reason", reason));
}

static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct invocation *inv = arg;

	if (inv->queued && inv->svc && service_dequeue(inv->svc, inv))
		invocation_cancel(inv, "deadline exceeded before the call ran");
}

int invocation_begin(struct call *call, struct service *svc,
		     const char *export_name, const cm_type *func, cm_val *args,
		     uint32_t nargs)
{
	struct daemon *d = call->d;
	const struct history_hooks *h = daemon_history_hooks(d);
	struct invocation *inv = calloc(1, sizeof(*inv));
	json_t *args_json;
	int rc;

	if (!inv) {
		cm_vals_free(args, nargs);
		free(args);
		call_reply(call, NULL);
		return -1;
	}
	inv->d = d;
	inv->func = func;
	inv->args = args;
	inv->nargs = nargs;
	inv->more = call->req->more;
	snprintf(inv->id, sizeof(inv->id), "%016llx-%llu",
		 (unsigned long long)d->services->call_prefix,
		 (unsigned long long)++d->services->next_call);
	inv->service_name = strdup(svc->name);
	inv->export_name = strdup(export_name);
	args_json = value_args_to_json(args, nargs, func);
	if (!inv->service_name || !inv->export_name || !args_json) {
		json_decref(args_json);
		inv_free(inv);
		call_reply(call, NULL);
		return -1;
	}
	rc = h ? h->call_started(h->ctx, svc->name, inv->id, export_name,
				 args_json, &call->conn->cred)
	       : -ESHUTDOWN;
	json_decref(args_json);
	if (rc) {
		call_error(call, ERR_PREFIX "HistoryUnavailable",
			   json_pack("{ss}", "reason", strerror(-rc)));
		inv_free(inv);
		return -1;
	}
	if (svc->limits.deadline_ms) {
		struct timeval tv = {
			(time_t)(svc->limits.deadline_ms / 1000),
			(suseconds_t)(svc->limits.deadline_ms % 1000) * 1000};

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

/* The reply and history detail of a call that returned. */
static void returned(struct invocation *inv, const cm_val *results,
		     uint32_t nres)
{
	const cm_type *rt = inv->func->u.func.result;
	json_t *result = NULL, *params;
	char *wave = NULL;
	size_t wlen;

	if (rt && nres == 1) {
		result = value_to_json(&results[0], rt);
		if (wave_print_results(inv->func, results, &wave, &wlen))
			wave = NULL;
	}
	params = json_pack("{ss,ss,sO?,ss*}", "callId", inv->id, "state",
			   "returned", "result", result ? result : json_null(),
			   "resultWave", wave);
	free(wave);
	{
		json_t *detail = json_pack("{sO}", "results",
					   result ? result : json_null());

		invocation_end(inv, CALL_RETURNED, detail,
			       params ? varlink_reply_new(params, false)
				      : NULL);
		json_decref(detail);
	}
	json_decref(result);
}

static void trapped(struct invocation *inv, struct service *svc,
		    const char *msg)
{
	const struct history_hooks *h = daemon_history_hooks(inv->d);
	bool poisoned = svc->inst && cm_instance_poisoned(svc->inst);
	char id[INVOCATION_ID_MAX];

	memcpy(id, inv->id, sizeof(id));
	end_error(inv, CALL_TRAPPED, json_pack("{ss}", "trap", msg),
		  ERR_PREFIX "CallTrapped",
		  json_pack("{ss,ss}", "callId", id, "message", msg));
	if (!poisoned)
		return;
	svc->state = SERVICE_POISONED;
	services_set_state(daemon_history_db(svc->d), svc->name,
			   SERVICE_POISONED);
	snprintf(svc->reason, sizeof(svc->reason), "call %s trapped: %.180s",
		 id, msg);
	log_info(&svc->d->log, "service %s: poisoned: %s", svc->name,
		 svc->reason);
	if (h) {
		json_t *why = json_pack("{ss,ss}", "call", id, "message", msg);

		h->store_poisoned(h->ctx, svc->name, why);
		json_decref(why);
	}
}

void invocation_run(struct invocation *inv)
{
	struct service *svc = inv->svc;
	cm_val results[1];
	uint32_t nres = 0;
	cm_error err;
	cm_func *f;

	if (inv->ev_deadline)
		event_del(inv->ev_deadline);
	if (svc->state == SERVICE_POISONED) {
		char reason[sizeof(svc->reason)];

		memcpy(reason, svc->reason, sizeof(reason));
		end_error(inv, CALL_FAILED,
			  json_pack("{ss,ss}", "error",
				    ERR_PREFIX "ServicePoisoned", "message",
				    reason),
			  ERR_PREFIX "ServicePoisoned",
			  json_pack("{ss,ss}", "name", svc->name, "reason",
				    reason));
		/* The next call finds fresh state. */
		service_start(svc, NULL);
		return;
	}
	f = svc->state == SERVICE_RUNNING
		    ? service_export(svc, inv->export_name)
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
	cm_store_set_fuel(svc->store, svc->limits.fuel_per_call
					      ? svc->limits.fuel_per_call
					      : UINT64_MAX);
	memset(&err, 0, sizeof(err));
	if (cm_invoke(svc->store, f, inv->args, inv->nargs, results, &nres,
		      &err) == 0) {
		svc->calls++;
		returned(inv, results, nres);
		cm_vals_free(results, nres);
		return;
	}
	svc->calls++;
	if (err.kind == CM_ERR_TRAP) {
		trapped(inv, svc, err.msg);
		return;
	}
	end_error(inv, CALL_FAILED,
		  json_pack("{ss,ss}", "error", cm_error_kind_name(err.kind),
			    "message", err.msg),
		  ERR_PREFIX "CallFailed",
		  json_pack("{ss,ss,ss}", "callId", inv->id, "kind",
			    cm_error_kind_name(err.kind), "message", err.msg));
}

struct invocation *invocation_find_queued(struct daemon *d, const char *id)
{
	if (!d->services)
		return NULL;
	for (struct service *s = d->services->head; s; s = s->next)
		for (struct invocation *i = s->queue_head; i; i = i->next)
			if (!strcmp(i->id, id))
				return i;
	return NULL;
}
