/*
 * canon_lower.c - `canon lower`: the core function a component imports
 * to call a component-level function (another component's lifted export
 * or a host function).  definitions.py canon_lower; this file is its
 * sync branch with a sync-typed callee, and hands every other call (an
 * `async` lower, or an async-typed callee) to runtime/run
 * (canon_lower_async.c).
 *
 * Contract (digest 2.13): the trampoline
 *   1. traps "cannot leave component instance" when the caller's
 *      may_leave is false (realloc, post-return);
 *   2. creates a Subtask and calls the callee with on_start = lift the
 *      caller's flat arguments (max 16, a pointer beyond; borrows are
 *      lent) and on_resolve = lower the result into the caller (max 1,
 *      else through the out-pointer argument);
 *   3. delivers the resolution (releases the lends) and returns the flat
 *      results.
 * A non-async callee always resolves before returning, so the caller
 * never blocks here.  Traps come back to the caller's exec as a host trap
 * carrying the message, so they cross any number of nested calls
 * unchanged.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_canon_lower: one trampoline per canon lower, in the store's arena
 *    (the component's length).
 *  - lowered calls lift their arguments through a cx of cm_cx_init (the
 *    store's budget), given back when the call returns.
 */
#include <string.h>

#include "component/arena.h"
#include "run/rt.h"
#include "run/sched.h"

#define WASM_TRAP_PREFIX "wasm trap: "

typedef struct cm_lower {
	cm_component_instance *inst; /* the caller */
	cm_func *callee;
	const cm_type *ft; /* the lowered type, in the caller's terms */
	cabi_options opts;
	uint32_t ncore_params, ncore_results;
} cm_lower;

/* One call through the trampoline. */
typedef struct lower_call {
	const cm_lower *lw;
	cm_subtask *subtask;
	cabi_cx *cx;
	cabi_core_iter vi; /* the core arguments */
	cabi_core_out out; /* the core results */
} lower_call;

static int cx_fail(const cabi_cx *cx, cabi_error *err)
{
	const cabi_error *ce = &cx->err;

	if (ce->kind == CABI_ERR_TRAP &&
	    strncmp(ce->msg, WASM_TRAP_PREFIX, strlen(WASM_TRAP_PREFIX)))
		return cabi_fail(err, CABI_ERR_TRAP, WASM_TRAP_PREFIX "%s",
				 ce->msg);
	*err = *ce;
	if (err->kind == CABI_ERR_NONE)
		err->kind = CABI_ERR_TRAP;
	return -1;
}

static int lower_on_start(void *env, cm_val *args, cabi_error *err)
{
	lower_call *lc = env;
	cm_store *s = lc->lw->inst->store;
	cm_task scratch, *prev;
	int rc;

	lc->subtask->state = CM_SUBTASK_STARTED;
	prev = cm_fresh_thread_enter(s, &scratch);
	rc = cabi_lift_params(lc->cx, lc->lw->ft, CM_MAX_FLAT_PARAMS, &lc->vi,
			      args);
	cm_fresh_thread_leave(s, prev);
	return rc ? cx_fail(lc->cx, err) : 0;
}

static int lower_on_resolve(void *env, cm_val *result, cabi_error *err)
{
	lower_call *lc = env;
	cm_store *s = lc->lw->inst->store;
	cm_task scratch, *prev;
	int rc;

	if (result == NULL) {
		lc->subtask->state =
			lc->subtask->state == CM_SUBTASK_STARTING
				? CM_SUBTASK_CANCELLED_BEFORE_STARTED
				: CM_SUBTASK_CANCELLED_BEFORE_RETURNED;
		return cabi_fail(err, CABI_ERR_TRAP, "sync call cancelled");
	}
	lc->subtask->state = CM_SUBTASK_RETURNED;
	prev = cm_fresh_thread_enter(s, &scratch);
	rc = cabi_lower_results(lc->cx, lc->lw->ft, CM_MAX_FLAT_RESULTS, result,
				&lc->vi, &lc->out);
	cm_fresh_thread_leave(s, prev);
	return rc ? cx_fail(lc->cx, err) : 0;
}

static wasm_host_status trap(wasm_exec *e, cm_store *s, cabi_error *ce)
{
	if (ce->msg[0] == '\0')
		cabi_fail(ce, CABI_ERR_TRAP, "trap");
	cm_note_trap(s, ce);
	wasm_exec_set_host_trap(e, ce->msg);
	return WASM_HOST_TRAP;
}

static wasm_host_status lower_trampoline(wasm_exec *e, void *env,
					 const wasm_val *args,
					 wasm_val *results)
{
	const cm_lower *lw = env;
	cm_component_instance *inst = lw->inst;
	cm_store *s = inst->store;
	cm_call_cbs cbs = {lower_on_start, lower_on_resolve, NULL};
	cm_subtask st; /* on the stack: up to st.cx (sched.h) */
	lower_call lc;
	cabi_error ce;
	wasm_exec *gx = NULL;
	int rc;

	memset(&ce, 0, sizeof ce);
	if (!inst->may_leave) {
		cabi_fail(&ce, CABI_ERR_TRAP, CABI_MSG_CANNOT_LEAVE);
		return trap(e, s, &ce);
	}
	if (lw->opts.async || cm_func_is_async(lw->callee))
		return cm_canon_lower_async(e, inst, lw->callee, lw->ft,
					    &lw->opts, lw->ncore_params,
					    lw->ncore_results, args, results);
	cm_subtask_init(&st, inst, &inst->handles, s->current);
	cm_cx_init(&st.cx, inst, &lw->opts);
	st.cx.lenders = &st.lenders;
	if (lw->opts.realloc != NULL) {
		/* the caller's realloc cannot run on e: it is inside us */
		gx = cm_store_exec_acquire(s);
		st.cx.exec = gx;
	}
	lc.lw = lw;
	lc.subtask = &st;
	lc.cx = &st.cx;
	lc.vi.vals = args;
	lc.vi.n = lw->ncore_params;
	lc.vi.i = 0;
	lc.out.vals = results;
	lc.out.n = 0;
	lc.out.cap = lw->ncore_results;
	cbs.env = &lc;

	if (s->fuel != UINT64_MAX)
		s->fuel = wasm_exec_fuel(e);
	rc = cm_func_call(s, lw->callee, inst, s->current, &cbs, &ce);
	if (s->fuel != UINT64_MAX)
		wasm_exec_set_fuel(e, s->fuel);
	/* lifting the arguments and the results was host work */
	cm_store_bill_host_work(s, e);

	cm_subtask_deliver_resolve(&st);
	cabi_cx_release(&st.cx);
	if (gx != NULL)
		cm_store_exec_release(s, gx, true);
	if (rc)
		return trap(e, s, &ce);
	return WASM_HOST_OK;
}

wasm_func *cm_canon_lower(cm_component_instance *inst, const cm_canon *cn,
			  cm_func *callee, const cabi_options *opts)
{
	cm_store *s = inst->store;
	cm_lower *lw = cm_arena_alloc(s->arena, sizeof *lw);

	if (lw == NULL || cn->core_type == NULL)
		return NULL;
	lw->inst = inst;
	lw->callee = callee;
	lw->ft = cn->type;
	lw->opts = *opts;
	lw->ncore_params = cn->core_type->nparams;
	lw->ncore_results = cn->core_type->nresults;
	return wasm_func_new_host(s->wasm, cn->core_type, lower_trampoline, lw);
}
