/*
 * hostcalls.c - hostcall.started and hostcall.settled events from the
 * store's host-call observer (see hostcalls.h).
 *
 * Each call's tag (cm_call_set_tag) is its number, from which its id is
 * formatted again: the call may be long gone when its task's host call
 * settles.  The observer's tags keep the hostcall number and that call
 * number for the settlement.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - deferred, settled: the JSON of a pending host call's arguments and
 *    result, as large as the values the runtime lifted (its per-store
 *    budget for lifted values, limits.hostBytes), freed once the event
 *    is built; the event keeps a value past HISTORY_VALUE_MAX in its
 *    bounded form (daemon/history-events.c dump_value), so it is always
 *    recorded.  Names: fixed buffers (256 bytes, INVOCATION_ID_MAX); a
 *    trap's message: CM_ERROR_MSG_MAX.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "run/instance.h"
#include "daemon/daemon.h"
#include "daemon/history-hooks.h"
#include "daemon/hostcalls.h"
#include "daemon/invocation.h"
#include "daemon/service.h"
#include "daemon/service-wasi.h"
#include "ipc/value-json.h"

/* "instance#name", as the import is named in WIT. */
static void import_name(char *out, size_t len, const char *instance,
			const char *name)
{
	if (instance)
		snprintf(out, len, "%s#%s", instance, name ? name : "?");
	else
		snprintf(out, len, "%s", name ? name : "?");
}

static void deferred(void *env, uint64_t call_tag, const char *instance,
		     const char *name, const cm_type *ft, const cm_val *args,
		     uint32_t nargs, uint64_t tags[2])
{
	struct service *s = env;
	const struct history_hooks *h = daemon_history_hooks(s->d);
	char import[256], call[INVOCATION_ID_MAX];
	json_t *a;

	tags[0] = ++s->d->services->next_hostcall;
	tags[1] = call_tag;
	if (!h || !h->hostcall_started)
		return;
	if (call_tag)
		invocation_id_format(s->d, call_tag, call);
	import_name(import, sizeof(import), instance, name);
	a = value_args_to_json(args, nargs, ft);
	/* Out of memory: the event goes without its arguments. */
	h->hostcall_started(h->ctx, s->name, call_tag ? call : NULL, tags[0],
			    import, a);
	json_decref(a);
}

static const char *const outcome_names[] = {
	[CM_HOST_RETURNED] = "returned",
	[CM_HOST_TRAPPED] = "trapped",
	[CM_HOST_CANCELLED] = "cancelled",
};

static void settled(void *env, const uint64_t tags[2], cm_host_outcome outcome,
		    const cm_type *ft, const cm_val *result, const char *msg)
{
	struct service *s = env;
	const struct history_hooks *h = daemon_history_hooks(s->d);
	char call[INVOCATION_ID_MAX];
	json_t *r = NULL;

	if (!h || !h->hostcall_settled || (unsigned)outcome > CM_HOST_CANCELLED)
		return;
	if (tags[1])
		invocation_id_format(s->d, tags[1], call);
	if (result && ft->u.func.result)
		r = value_to_json(result, ft->u.func.result);
	h->hostcall_settled(h->ctx, s->name, tags[1] ? call : NULL, tags[0],
			    outcome_names[outcome], r, msg);
	json_decref(r);
}

void hostcalls_observe(struct service *s)
{
	const cm_host_observer o = {
		.deferred = deferred,
		.settled = settled,
		.env = s,
	};

	cm_store_observe_host_calls(s->store, &o);
	/* its clock waits and WASI resources survive a snapshot; out of
	 * memory here, a snapshot holding WASI handles is refused later
	 * ("not supported yet"), which durability already handles */
	if (s->wasi &&
	    wasi_ctx_durable(service_wasi_ctx(s->wasi), s->store) < 0)
		log_warn(&s->d->log,
			 "service %s: WASI resources will not be snapshotted: "
			 "out of memory",
			 s->name);
}
