/*
 * method-call.c - io.hostel.Call: Invoke (arguments as canonical JSON or
 * WAVE text, parsed against the export's real type; the export named in
 * full or by a shorter name that matches one export,
 * run/exportname.h, recorded in call.started by its full name;
 * none: ExportNotFound with the closest names, several:
 * ExportAmbiguous with the matches) and Cancel.  The
 * handler validates everything it can before call.started is recorded,
 * so a refused call leaves no trace in the history; after that the call
 * belongs to daemon/invocation.c.  Cancel finds a call queued or in
 * flight and ends it exactly once (invocation.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - lookup_type: a copy of the export name in the request's WAVE text
 *    (at most VARLINK_MESSAGE_MAX, 16 MiB), and of the full name it
 *    resolved to (a guest's export name, bounded by its component).
 *  - service_export: a list of the instance's function exports while
 *    it resolves (run/exportname.h); ExportNotFound and
 *    ExportAmbiguous replies carry at most CM_NAME_CANDIDATES_MAX (5)
 *    full names.
 *  - the call's arguments: parsed from the request's WAVE or JSON, at
 *    most that message's size (ipc/; while parsed, one request at a
 *    time on the loop, up to about 20 times the text as cm_vals), and
 *    kept only when as host values they fit the service's
 *    limits.hostBytes (args_fit; else ValueTooLarge before
 *    call.started); held until the call starts by at most
 *    limits.maxQueuedCalls (SERVICE_MAX_QUEUED_CALLS, 1024) queued
 *    calls per service, past which invocation_begin answers
 *    ServiceBusy, and limits.maxConcurrentCalls in flight.
 *  - bind_uploads: an argument made of an upload's bytes (a copy as a
 *    string; as a list<u8>, the upload's own buffer, trimmed to its
 *    length, becomes the list's bytes: val.h byte form, 1 byte a
 *    byte), from an upload of this connection (daemon/upload.h bounds
 *    it), freed (or taken) before the argument is counted by args_fit;
 *    a shallow copy of the args object with a "" for each upload it
 *    leaves out.
 */
#define _GNU_SOURCE /* strndup */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "value/wave.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/invocation.h"
#include "daemon/service.h"
#include "daemon/upload.h"
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
 * 40 bytes each; a list<u8> or list<s8> takes 1 byte an element).
 * Refused before call.started, so no guest code ran; the values are
 * freed then.  Whether they fit.
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

/*
 * The full name of an export (run/exportname.h) as a JSON string;
 * NULL: no memory.
 */
static char *export_name_dup(const cm_export_ref *ref);

static json_t *export_json(const cm_export_ref *ref)
{
	char *s = export_name_dup(ref);
	json_t *j = s ? json_string(s) : NULL;

	free(s);
	return j;
}

/* The resolved full name, malloc'd; NULL: no memory. */
static char *export_name_dup(const cm_export_ref *ref)
{
	size_t n = cm_export_ref_format(ref, NULL, 0);
	char *s = malloc(n + 1);

	if (s)
		cm_export_ref_format(ref, s, n + 1);
	return s;
}

/*
 * The export name resolved to no function or to several: ExportNotFound
 * {name, export, candidates (the closest names, at most
 * CM_NAME_CANDIDATES_MAX), exports (how many functions the service
 * exports)} or ExportAmbiguous {name, export, matches (the first
 * CM_NAME_CANDIDATES_MAX), count (how many match)}.  Before
 * call.started: nothing of the call is in the history.
 */
static void export_error(struct call *call, struct service *svc,
			 const char *export, size_t len,
			 const cm_name_resolution *res)
{
	bool ambiguous = res->match == CM_NAME_AMBIGUOUS;
	json_t *list, *p;

	if (res->match == CM_NAME_NOMEM) {
		call_reply(call, NULL);
		return;
	}
	list = json_array();
	for (uint32_t i = 0; list && i < res->ncandidates; i++)
		if (json_array_append_new(list,
					  export_json(&res->candidates[i])))
			json_decref(list), list = NULL;
	p = list ? json_pack(
			   "{ss,ss%,so,sI}", "name", svc->name, "export",
			   export, len, ambiguous ? "matches" : "candidates",
			   list, ambiguous ? "count" : "exports",
			   (json_int_t)(ambiguous ? res->nmatches : res->total))
		 : NULL;
	if (!p) {
		call_reply(call, NULL);
		return;
	}
	call_error(call,
		   ambiguous ? ERR("ExportAmbiguous") : ERR("ExportNotFound"),
		   p);
}

/* Whether t is list<u8>. */
static bool is_bytes(const cm_type *t)
{
	return t->kind == CM_LIST && t->u.list.len == 0 &&
	       t->u.list.elem->kind == CM_U8;
}

/*
 * Check the uploads parameter (parameter name -> upload id) against the
 * function's parameters before anything is taken: each names a
 * list<u8> or string parameter once, and an upload of this connection.
 * 0, or -1 after replying.
 */
static int check_uploads(struct call *call, json_t *jup, const cm_type *func)
{
	const char *name;
	json_t *id;
	char why[200];

	json_object_foreach(jup, name, id)
	{
		const cm_field *f = NULL;

		for (uint32_t i = 0; i < func->u.func.nparams; i++)
			if (!strcmp(func->u.func.params[i].label.ptr, name))
				f = &func->u.func.params[i];
		if (!f) {
			snprintf(why, sizeof(why),
				 "uploads: the export has no parameter '%.64s'",
				 name);
			invalid_args(call, why);
			return -1;
		}
		if (!is_bytes(f->type) && f->type->kind != CM_STRING) {
			snprintf(why, sizeof(why),
				 "uploads: parameter '%.64s' is neither a "
				 "list<u8> nor a string",
				 name);
			invalid_args(call, why);
			return -1;
		}
		if (!json_is_string(id)) {
			call_invalid_parameter(call, "uploads");
			return -1;
		}
		if (!upload_find(call->conn, json_string_value(id))) {
			call_error(call, ERR("UploadNotFound"),
				   json_pack("{sO}", "uploadId", id));
			return -1;
		}
	}
	return 0;
}

/*
 * Replace each parameter the uploads name (checked by check_uploads)
 * with its upload's bytes; the uploads are freed.  0, or -1 after
 * replying (the values are freed then).
 */
static int bind_uploads(struct call *call, json_t *jup, const cm_type *func,
			cm_val *vals, uint32_t n)
{
	const char *name;
	json_t *id;
	char why[200];

	json_object_foreach(jup, name, id)
	{
		struct upload *u =
			upload_take(call->conn, json_string_value(id));
		uint32_t i = 0;
		cm_val v;
		int rc = 0;

		while (i < n && strcmp(func->u.func.params[i].label.ptr, name))
			i++;
		if (!u || i >= n) {
			upload_free(call->conn, u);
			cm_vals_free(vals, n);
			free(vals);
			call_error(call, ERR("UploadNotFound"),
				   json_pack("{sO}", "uploadId", id));
			return -1;
		}
		if (is_bytes(func->u.func.params[i].type)) {
			if (u->len > UINT32_MAX) {
				rc = -3;
			} else {
				/* the upload's buffer becomes the list's
				 * bytes (val.h byte form), trimmed to its
				 * length; no copy.  upload_free still
				 * uncounts its cap. */
				uint8_t *b = u->buf;

				if (u->len > 0 && u->cap > u->len) {
					uint8_t *t = realloc(b, u->len);

					if (t != NULL)
						b = t;
				}
				u->buf = NULL;
				cm_val_bytes_take(&v, b, (uint32_t)u->len);
			}
		} else {
			rc = cm_val_string(&v, u->buf, u->len);
		}
		upload_free(call->conn, u);
		if (rc) {
			if (rc != -3)
				cm_val_free(&v);
			cm_vals_free(vals, n);
			free(vals);
			if (rc == -1) {
				call_reply(call, NULL);
				return -1;
			}
			snprintf(why, sizeof(why),
				 rc == -2 ? "upload for parameter '%.64s' is "
					    "not UTF-8, as a string must be"
					  : "upload for parameter '%.64s' is "
					    "longer than a list may be",
				 name);
			invalid_args(call, why);
			return -1;
		}
		cm_val_free(&vals[i]);
		vals[i] = v;
	}
	return 0;
}

/*
 * The args object (or none: an empty one) with a "" (an empty string,
 * or list<u8> in base64) for each parameter the uploads bind that it
 * leaves out; args of another shape as they are.  A new reference;
 * NULL when out of memory.
 */
static json_t *upload_placeholders(json_t *args, json_t *jup)
{
	const char *name;
	json_t *id, *out;

	if (args && !json_is_null(args) && !json_is_object(args))
		return json_incref(args);
	out = json_is_object(args) ? json_copy(args) : json_object();
	json_object_foreach(jup, name, id)
	{
		if (out && !json_object_get(out, name) &&
		    json_object_set_new(out, name, json_string("")))
			json_decref(out), out = NULL;
	}
	return out;
}

struct lookup {
	struct service *svc;
	cm_func *f;
	char *full;    /* the resolved full name */
	char *missing; /* the name asked for, when it resolved to none */
	bool failed;   /* the name resolved to nothing or to several */
	cm_name_resolution res;
};

static const cm_type *lookup_type(void *env, const char *name, size_t len)
{
	struct lookup *lk = env;

	lk->f = service_export(lk->svc, name, len, &lk->res);
	if (!lk->f) {
		/* wave_parse_call frees its copy of the name on failure */
		lk->failed = true;
		free(lk->missing);
		lk->missing = strndup(name, len);
		if (!lk->missing)
			lk->res.match = CM_NAME_NOMEM;
		return NULL;
	}
	free(lk->full);
	lk->full = export_name_dup(&lk->res.found);
	if (!lk->full) {
		lk->failed = true;
		lk->res.match = CM_NAME_NOMEM;
		return NULL;
	}
	return cm_func_type(lk->f);
}

void method_call_invoke(struct call *call)
{
	static const char *const known[] = {
		"service",    "export",	       "args", "wave", "uploads",
		"deadlineMs", "chunkedResult", NULL};
	json_t *p = call->req->parameters;
	json_t *jsvc = json_object_get(p, "service");
	json_t *jexp = json_object_get(p, "export");
	json_t *jwave = json_object_get(p, "wave");
	json_t *jup = json_object_get(p, "uploads");
	json_t *jdl = json_object_get(p, "deadlineMs");
	json_t *jchunk = json_object_get(p, "chunkedResult");
	struct invocation_opts opts = {.deadline_ms = -1};
	json_t *args;
	struct lookup lk = {0};
	struct service *svc;
	char *export_name;
	cm_val *vals = NULL;
	uint32_t n = 0;
	char why[300];
	int rc;

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
	if (json_is_null(jup))
		jup = NULL;
	if (jup && !json_is_object(jup)) {
		call_invalid_parameter(call, "uploads");
		return;
	}
	if (jdl && !json_is_null(jdl)) {
		if (!json_is_integer(jdl) || json_integer_value(jdl) < 0) {
			call_invalid_parameter(call, "deadlineMs");
			return;
		}
		opts.deadline_ms = json_integer_value(jdl);
	}
	if (jchunk && !json_is_null(jchunk)) {
		if (!json_is_boolean(jchunk) ||
		    (json_is_true(jchunk) && !call->req->more)) {
			/* chunks are continuing replies: "more" is needed */
			call_invalid_parameter(call, "chunkedResult");
			return;
		}
		opts.chunked_result = json_is_true(jchunk);
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
			if (lk.failed && !werr.nomem) {
				export_error(call, svc, lk.missing,
					     lk.missing ? strlen(lk.missing)
							: 0,
					     &lk.res);
			} else {
				snprintf(why, sizeof(why), "%u:%u: %s",
					 werr.line, werr.column, werr.msg);
				invalid_args(call, why);
			}
			wave_call_free(&wc);
			free(lk.full);
			free(lk.missing);
			return;
		}
		/* export, when given too, names the same function */
		if (json_is_string(jexp) &&
		    service_export(svc, json_string_value(jexp),
				   json_string_length(jexp), NULL) != lk.f) {
			wave_call_free(&wc);
			free(lk.full);
			invalid_args(call,
				     "export and the name in wave differ");
			return;
		}
		vals = wc.args;
		n = wc.nargs;
		wc.args = NULL;
		wc.nargs = 0;
		wave_call_free(&wc);
		if (jup && check_uploads(call, jup, cm_func_type(lk.f))) {
			cm_vals_free(vals, n);
			free(vals);
			free(lk.full);
			return;
		}
		/* bind_uploads frees vals when it fails */
		if (jup &&
		    bind_uploads(call, jup, cm_func_type(lk.f), vals, n)) {
			free(lk.full);
			return;
		}
		if (!args_fit(call, svc, vals, n)) {
			free(lk.full);
			return;
		}
		/* The history records the resolved full name. */
		invocation_begin(call, svc, lk.full, cm_func_type(lk.f), vals,
				 n, &opts);
		free(lk.full);
		return;
	}
	if (!json_is_string(jexp)) {
		call_invalid_parameter(call, "export");
		return;
	}
	lk.f = service_export(svc, json_string_value(jexp),
			      json_string_length(jexp), &lk.res);
	if (!lk.f) {
		export_error(call, svc, json_string_value(jexp),
			     json_string_length(jexp), &lk.res);
		return;
	}
	args = json_object_get(p, "args");
	if (jup) {
		if (check_uploads(call, jup, cm_func_type(lk.f)))
			return;
		args = upload_placeholders(args, jup);
		if (!args) {
			call_reply(call, NULL);
			return;
		}
	} else {
		json_incref(args);
	}
	rc = value_args_from_json(args, cm_func_type(lk.f), &vals, &n, why,
				  sizeof(why));
	json_decref(args);
	switch (rc) {
	case 0:
		break;
	case -1:
		invalid_args(call, why);
		return;
	default:
		call_reply(call, NULL);
		return;
	}
	if (jup && bind_uploads(call, jup, cm_func_type(lk.f), vals, n))
		return;
	if (!args_fit(call, svc, vals, n))
		return;
	export_name = export_name_dup(&lk.res.found);
	if (!export_name) {
		cm_vals_free(vals, n);
		free(vals);
		call_reply(call, NULL);
		return;
	}
	/* The history records the resolved full name. */
	invocation_begin(call, svc, export_name, cm_func_type(lk.f), vals, n,
			 &opts);
	free(export_name);
}

void method_call_cancel(struct call *call)
{
	static const char *const known[] = {"callId", NULL};
	json_t *id = json_object_get(call->req->parameters, "callId");
	struct invocation *inv;
	const char *state;

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
		state = "queued";
		invocation_cancel(inv, "cancelled by a client");
	} else if (inv && inv->call) {
		/* in flight: cm_call_cancel decides (invocation.h) */
		state = "running";
		invocation_cancel_running(inv, "cancelled by a client");
	} else {
		call_error(call, ERR("CallNotFound"),
			   json_pack("{sO}", "callId", id));
		return;
	}
	call_reply(call, json_pack("{ss}", "state", state));
}
