/*
 * method-call.c - io.hostel.Call: Invoke (arguments as canonical JSON or
 * WAVE text, parsed against the export's real type) and Cancel.  The
 * handler validates everything it can before call.started is recorded,
 * so a refused call leaves no trace in the history; after that the call
 * belongs to daemon/invocation.c.  Cancel finds a call queued or in
 * flight and ends it exactly once (invocation.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - lookup_type: a copy of the export name in the request's WAVE text
 *    (at most VARLINK_MESSAGE_MAX, 16 MiB).
 *  - the call's arguments: parsed from the request's WAVE or JSON, at
 *    most that message's size (ipc/; while parsed, one request at a
 *    time on the loop, up to about 20 times the text as cm_vals), and
 *    kept only when as host values they fit the service's
 *    limits.hostBytes (args_fit; else ValueTooLarge before
 *    call.started); held until the call starts by at most
 *    limits.maxQueuedCalls (SERVICE_MAX_QUEUED_CALLS, 1024) queued
 *    calls per service, past which invocation_begin answers
 *    ServiceBusy, and limits.maxConcurrentCalls in flight.
 */
#define _GNU_SOURCE /* strndup */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cabi/wave.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/invocation.h"
#include "daemon/service.h"
#include "ipc/value-json.h"

#define ERR(name) "io.hostel.Call." name

static void invalid_args(struct call *call, const char *reason)
{
	call_error(call, ERR("InvalidArguments"),
		   json_pack("{ss}", "reason", reason));
}

/*
 * Arguments the store could not hold: as host values they take more
 * than the service's limits.hostBytes, the budget its guest's own values
 * have (a request of 16 MiB of JSON may be 8 million list elements of
 * 40 bytes each).  Refused before call.started, so no guest code ran;
 * the values are freed then.  Whether they fit.
 */
static bool args_fit(struct call *call, struct service *svc, cm_val *vals,
		     uint32_t n)
{
	uint64_t size = cm_vals_host_bytes(vals, n);
	uint64_t limit = service_host_bytes(svc);

	if (size <= limit)
		return true;
	cm_vals_free(vals, n);
	free(vals);
	call_error(call, HOSTEL_ERROR_VALUE_TOO_LARGE,
		   json_pack("{ss,sI,sI,ss}", "value", "argument", "size",
			     (json_int_t)size, "limit", (json_int_t)limit,
			     "bound", "limits.hostBytes"));
	return false;
}

struct lookup {
	struct service *svc;
	cm_func *f;
	char *missing; /* the name asked for when absent */
};

static const cm_type *lookup_type(void *env, const char *name, size_t len)
{
	struct lookup *lk = env;
	char *s = strndup(name, len);

	if (!s)
		return NULL;
	lk->f = service_export(lk->svc, s);
	if (!lk->f) {
		free(lk->missing);
		lk->missing = s;
		return NULL;
	}
	free(s);
	return cm_func_type(lk->f);
}

void method_call_invoke(struct call *call)
{
	static const char *const known[] = {"service", "export", "args", "wave",
					    NULL};
	json_t *p = call->req->parameters;
	json_t *jsvc = json_object_get(p, "service");
	json_t *jexp = json_object_get(p, "export");
	json_t *jwave = json_object_get(p, "wave");
	struct lookup lk = {0};
	struct service *svc;
	const char *export_name;
	cm_val *vals = NULL;
	uint32_t n = 0;
	char why[300];

	if (!call_check_parameters(call, known))
		return;
	if (!json_is_string(jsvc)) {
		call_invalid_parameter(call, "service");
		return;
	}
	if (jexp && !json_is_null(jexp) && !json_is_string(jexp)) {
		call_invalid_parameter(call, "export");
		return;
	}
	if (jwave && !json_is_null(jwave) && !json_is_string(jwave)) {
		call_invalid_parameter(call, "wave");
		return;
	}
	svc = service_find(call->d, json_string_value(jsvc));
	if (!svc) {
		call_error(call, ERR("ServiceNotFound"),
			   json_pack("{sO}", "name", jsvc));
		return;
	}
	if (!call_may_see(call, svc->owner))
		return;
	if ((svc->state != SERVICE_RUNNING && svc->state != SERVICE_POISONED) ||
	    !svc->inst) {
		call_error(call, ERR("ServiceNotRunning"),
			   json_pack("{ss,ss}", "name", svc->name, "state",
				     service_state_name(svc->state)));
		return;
	}
	lk.svc = svc;
	if (json_is_string(jwave)) {
		wave_call wc;
		wave_error werr;

		if (json_object_get(p, "args") &&
		    !json_is_null(json_object_get(p, "args"))) {
			invalid_args(call, "give args or wave, not both");
			return;
		}
		memset(&wc, 0, sizeof(wc));
		memset(&werr, 0, sizeof(werr));
		if (wave_parse_call(json_string_value(jwave),
				    json_string_length(jwave), lookup_type, &lk,
				    &wc, &werr)) {
			wave_call_free(&wc);
			if (lk.missing && !werr.nomem) {
				call_error(call, ERR("ExportNotFound"),
					   json_pack("{ss,ss}", "name",
						     svc->name, "export",
						     lk.missing));
			} else {
				snprintf(why, sizeof(why), "%u:%u: %s",
					 werr.line, werr.column, werr.msg);
				invalid_args(call, why);
			}
			free(lk.missing);
			return;
		}
		free(lk.missing);
		if (json_is_string(jexp) &&
		    strcmp(json_string_value(jexp), wc.name)) {
			wave_call_free(&wc);
			invalid_args(call,
				     "export and the name in wave differ");
			return;
		}
		lk.f = service_export(svc, wc.name);
		vals = wc.args;
		n = wc.nargs;
		wc.args = NULL;
		wc.nargs = 0;
		if (!args_fit(call, svc, vals, n)) {
			wave_call_free(&wc);
			return;
		}
		/* The call owns the name from here. */
		invocation_begin(call, svc, wc.name, cm_func_type(lk.f), vals,
				 n);
		wave_call_free(&wc);
		return;
	}
	if (!json_is_string(jexp)) {
		call_invalid_parameter(call, "export");
		return;
	}
	export_name = json_string_value(jexp);
	lk.f = service_export(svc, export_name);
	if (!lk.f) {
		call_error(call, ERR("ExportNotFound"),
			   json_pack("{ss,ss}", "name", svc->name, "export",
				     export_name));
		return;
	}
	switch (value_args_from_json(json_object_get(p, "args"),
				     cm_func_type(lk.f), &vals, &n, why,
				     sizeof(why))) {
	case 0:
		break;
	case -1:
		invalid_args(call, why);
		return;
	default:
		call_reply(call, NULL);
		return;
	}
	if (!args_fit(call, svc, vals, n))
		return;
	invocation_begin(call, svc, export_name, cm_func_type(lk.f), vals, n);
}

void method_call_cancel(struct call *call)
{
	static const char *const known[] = {"callId", NULL};
	json_t *id = json_object_get(call->req->parameters, "callId");
	struct invocation *inv;

	if (!call_check_parameters(call, known))
		return;
	if (!json_is_string(id)) {
		call_invalid_parameter(call, "callId");
		return;
	}
	inv = invocation_find(call->d, json_string_value(id));
	if (inv && !call_may_see(call, inv->svc->owner))
		return;
	if (inv && service_dequeue(inv->svc, inv)) {
		invocation_cancel(inv, "cancelled by a client");
	} else if (inv && inv->call) {
		/* in flight: cm_call_cancel decides (invocation.h) */
		invocation_cancel_running(inv, "cancelled by a client");
	} else {
		call_error(call, ERR("CallNotFound"),
			   json_pack("{sO}", "callId", id));
		return;
	}
	call_reply(call, json_object());
}
