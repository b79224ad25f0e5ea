/*
 * call.c - calling a component-level function: a lifted one through
 * canon lift (canon_lift.c, definitions.py canon_lift), a host function
 * here.  Store.invoke (the host calling an export) is invoke.c's.
 *
 * Contract (rt.h, task.h): every function, whatever implements it, is
 * called with the caller's on_start/on_resolve callbacks and calls each
 * once.  A lifted call (digest 2.13, 3.6; canon_lift.c): enter the callee
 * instance from the caller (reentrance, poisoned); create the Task and its
 * implicit thread; on_start -> args, lowered into the callee (max 16 flat,
 * spilling through the callee's realloc); run the core function; lift its
 * result (max 1 flat); task.return (borrows must be gone; on_resolve lowers the
 * result into the caller); post-return with may_leave cleared; leave.  A
 * sync-typed call returns only resolved (or trapped).  Any failure after
 * entering poisons the entering set (digest 2.15) and comes back as a
 * trap with the suite's message: ABI traps as cabi words them (prefixed
 * "wasm trap: " when the peer is another component, as wasmtime's
 * adapters report them), core traps as "wasm trap: ...".
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - call_host: the arguments' array (the type's count), filled by
 *    on_start (a lift through the caller's cx: the store's budget, or
 *    the embedder's values), freed when the host function returns.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/rt.h"
#include "run/sched.h"

/* ---- trap messages --------------------------------------------------------
 */

void cm_note_trap(cm_store *s, const cabi_error *err)
{
	snprintf(s->last_trap, sizeof s->last_trap, "%s", err->msg);
}

/* ---- host functions -------------------------------------------------------
 */

struct cm_host_call {
	cm_store *store;
	cm_func *func;
	cm_component_instance *caller;
	cabi_error err;
	/* deferring (host_pending.c): the async subtask and its callbacks */
	struct cm_subtask *st;
	const cm_call_cbs *cbs;
	cm_host_pending *pending;
	const cm_val *args; /* for the store's observer */
	uint32_t nargs;
};

cm_host_pending *cm_host_call_defer(cm_host_call *call)
{
	if (call->pending != NULL)
		return call->pending;
	if (call->st == NULL) {
		cm_host_call_trap(call, CM_MSG_SYNC_BLOCK);
		return NULL;
	}
	/* a guest must not park host calls without end (store.h) */
	if (call->store->cfg.max_pending_host_calls != 0 &&
	    call->store->pending_host_calls >=
		    call->store->cfg.max_pending_host_calls) {
		cm_host_call_trap(call,
				  "too many pending host calls (limit %u)",
				  call->store->cfg.max_pending_host_calls);
		return NULL;
	}
	call->pending = cm_host_pending_new(call->store, call->func,
					    call->caller, call->st, call->cbs);
	if (call->pending == NULL) {
		cm_host_call_trap(call, "out of memory");
		return NULL;
	}
	cm_host_pending_observe(call->pending,
				cm_thread_call_tag(call->store->current_thread),
				call->args, call->nargs);
	return call->pending;
}

int cm_host_call_trap(cm_host_call *call, const char *fmt, ...)
{
	va_list ap;

	call->err.kind = CABI_ERR_TRAP;
	va_start(ap, fmt);
	vsnprintf(call->err.msg, sizeof call->err.msg, fmt, ap);
	va_end(ap);
	return -1;
}

const cm_type *cm_host_call_type(const cm_host_call *call)
{
	return call->func->type;
}

const char *cm_host_call_name(const cm_host_call *call, const char **instance)
{
	if (instance != NULL)
		*instance = call->func->instance;
	return call->func->name;
}

cm_store *cm_host_call_store(const cm_host_call *call)
{
	return call->store;
}

cm_component_instance *cm_host_call_caller(const cm_host_call *call)
{
	return call->caller;
}

static int call_host(cm_store *s, cm_func *f, cm_component_instance *caller,
		     const cm_call_cbs *cbs, cabi_error *err)
{
	const cm_type *ft = f->type;
	uint32_t np = ft->u.func.nparams;
	uint32_t nres = ft->u.func.result != NULL;
	cm_val *args = calloc(np ? np : 1, sizeof *args);
	cm_val result[1];
	cm_host_call call;
	char why[128];
	int rc = -1, hr;

	memset(result, 0, sizeof result);
	memset(&call, 0, sizeof call);
	call.store = s;
	call.func = f;
	call.caller = caller;
	/* only the async lower's own host callee may defer */
	call.st = s->lowering;
	call.cbs = cbs;
	s->lowering = NULL;
	if (args == NULL)
		return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
	if (cbs->on_start(cbs->env, args, err))
		goto out;
	call.args = args;
	call.nargs = np;
	hr = f->fn(&call, f->env, args, np, result, nres);
	/* Resolved later by the settlement, also when the host settled the
	 * handle and then answered at once all the same: the settlement,
	 * already recorded, is what the guest gets. */
	if (call.pending != NULL &&
	    (hr == CM_HOST_PENDING || cm_host_pending_settled(call.pending))) {
		rc = 0;
		goto out;
	}
	if (hr) {
		if (call.err.kind == CABI_ERR_NONE)
			cabi_fail(&call.err, CABI_ERR_TRAP,
				  "host function `%s` failed",
				  f->name ? f->name : "?");
		*err = call.err;
	} else if (nres && !cm_val_typecheck(result, ft->u.func.result, why,
					     sizeof why)) {
		cabi_fail(err, CABI_ERR_TRAP,
			  "host function `%s` returned a bad value: %s",
			  f->name ? f->name : "?", why);
		hr = -1;
	}
	if (call.pending != NULL) { /* deferred, then answered at once */
		cm_host_pending_observe_settled(
			call.pending, hr ? CM_HOST_TRAPPED : CM_HOST_RETURNED,
			!hr && nres ? result : NULL, hr ? err->msg : NULL);
		cm_host_pending_discard(call.pending);
	}
	if (hr)
		goto out;
	rc = cbs->on_resolve(cbs->env, result, err);
out:
	cm_vals_free(args, np);
	free(args);
	cm_vals_free(result, nres);
	return rc;
}

int cm_func_call(cm_store *s, cm_func *f, cm_component_instance *caller,
		 cm_task *supertask, const cm_call_cbs *cbs, cabi_error *err)
{
	if (f == NULL)
		return cabi_fail(err, CABI_ERR_TRAP,
				 "call of a missing function");
	if (f->kind == CM_FUNC_HOST)
		return call_host(s, f, caller, cbs, err);
	/*
	 * Every lifted function runs on a thread of its own: a sync-typed
	 * task too may create and switch to threads, and may block while
	 * another thread is ready (digest 3.6 step 3); it still returns only
	 * resolved.
	 */
	return cm_canon_lift(s, f, caller, supertask, cbs, NULL, err);
}
