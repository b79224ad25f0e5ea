/*
 * canon_lower.c - `canon lower`: the core function a component imports
 * to call a component-level function (another component's lifted export
 * or a host function), definitions.py canon_lower with its Subtask
 * (digest 2.13, 3.7).  One trampoline per canon lower (cm_canon_lower);
 * each call through it takes one of two paths:
 *
 *  - a sync lower of a sync-typed callee (lower_trampoline): the Subtask
 *    lives on the trampoline's stack, since such a callee always
 *    resolves before returning and the caller never blocks;
 *  - every other call (cm_canon_lower_call: an `async` lower, or a lower
 *    of an async-typed callee): the Subtask is on the heap, as the
 *    callee may resolve long after the trampoline returned.
 *
 * Contract (digest 2.13): the trampoline
 *   1. traps "cannot leave component instance" when the caller's
 *      may_leave is false (realloc, post-return);
 *   2. creates a Subtask and calls the callee with on_start = lift the
 *      caller's flat arguments (max 16, a pointer beyond; borrows are
 *      lent; max 4 for an async lower) and on_resolve = lower the result
 *      into the caller (max 1, else through the out-pointer argument;
 *      always through it for an async lower);
 *   3. sync lower: delivers the resolution (releases the lends) and
 *      returns the flat results.  Async lower: RETURNED -> 2 with no
 *      handle; else the subtask enters the caller's table and the result
 *      is state | index << 4.  Before reading a STARTING state, ready
 *      threads of the callee's instance are drained to quiescence
 *      (ARCHITECTURE "Scheduling policy", digest 4.2).
 * A sync lower of an async-typed callee: a caller that may not block
 * (cm_thread_may_block) traps "cannot block a synchronous task before
 * returning" before calling the callee at all (D4); otherwise, if the
 * callee has not resolved, the calling thread blocks (non-cancellably)
 * until it has.  Traps come back to the caller's exec as a host trap
 * carrying the message, so they cross any number of nested calls
 * unchanged.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_canon_lower: one trampoline per canon lower, in the store's arena
 *    (the component's length).
 *  - a sync lower of a sync callee lifts its arguments through the cx of
 *    its stack Subtask (cm_cx_init: the store's budget), given back when
 *    the call returns.
 *  - cm_canon_lower_call: one subtask per call of an import; an
 *    unresolved async one enters the caller's handle table
 *    (max_handles), a sync one blocks its thread (max_threads).
 *  - subtask_on_start: the arguments, lifted through st->cx (cm_cx_init:
 *    the store's budget); the cx keeps their charge until the subtask
 *    is freed (subtask_free, subtask_dispose), after the values are
 *    gone, so pending subtasks and the borrows they lend stay within
 *    limits.hostBytes together.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "component/arena.h"
#include "run/rt.h"
#include "run/sched.h"
#include "wasm/store.h"


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
	/* an async-typed host callee may defer its answer: only the full
	 * path gives it a subtask to block the caller on (sync lower) */
	if (lw->opts.async || cm_func_is_async(lw->callee) ||
	    lw->callee->type->u.func.async)
		return cm_canon_lower_call(e, lw, inst, lw->callee, lw->ft,
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

/* ---- a Subtask on the heap (async lower, or an async-typed callee) ---- */

/*
 * A heap subtask's lift or lower failed: unlike cx_fail, an error without
 * a kind becomes a prefixed trap too.
 */
static int subtask_cx_fail(const cabi_cx *cx, cabi_error *err)
{
	*err = cx->err;
	if (err->kind == CABI_ERR_NONE)
		err->kind = CABI_ERR_TRAP;
	if (err->kind == CABI_ERR_TRAP &&
	    strncmp(err->msg, WASM_TRAP_PREFIX, strlen(WASM_TRAP_PREFIX)))
		return cabi_fail(err, CABI_ERR_TRAP, WASM_TRAP_PREFIX "%s",
				 cx->err.msg);
	return -1;
}

static bool resolved(const cm_subtask *st)
{
	return st->state >= CM_SUBTASK_RETURNED;
}

static int subtask_on_start(void *env, cm_val *args, cabi_error *err)
{
	cm_subtask *st = env;
	cm_store *s = st->inst->store;
	cabi_core_iter vi = {st->args, st->nargs, 0};
	cm_task scratch, *prev;
	int rc;

	st->state = CM_SUBTASK_STARTED;
	prev = cm_fresh_thread_enter(s, &scratch);
	rc = cabi_lift_params(&st->cx, st->ft,
			      st->async_lower ? CM_MAX_FLAT_ASYNC_PARAMS
					      : CM_MAX_FLAT_PARAMS,
			      &vi, args);
	cm_fresh_thread_leave(s, prev);
	if (rc)
		return subtask_cx_fail(&st->cx, err);
	st->ret_i = vi.i; /* the out-pointer, if any, comes next */
	if (st->handed_out)
		cm_waitable_set_pending(&st->w);
	return 0;
}

static int subtask_on_resolve(void *env, cm_val *result, cabi_error *err)
{
	cm_subtask *st = env;
	cm_store *s = st->inst->store;
	cm_task scratch, *prev;
	int rc = 0;

	if (result == NULL) {
		st->state = st->state == CM_SUBTASK_STARTING
				    ? CM_SUBTASK_CANCELLED_BEFORE_STARTED
				    : CM_SUBTASK_CANCELLED_BEFORE_RETURNED;
	} else {
		cabi_core_iter vi = {st->args, st->nargs, st->ret_i};

		st->out.vals = st->res;
		st->out.n = 0;
		st->out.cap = 1;
		prev = cm_fresh_thread_enter(s, &scratch);
		rc = cabi_lower_results(&st->cx, st->ft,
					st->async_lower ? 0
							: CM_MAX_FLAT_RESULTS,
					result, &vi, &st->out);
		cm_fresh_thread_leave(s, prev);
		st->nres = st->out.n;
		st->state = CM_SUBTASK_RETURNED;
		if (rc)
			rc = subtask_cx_fail(&st->cx, err);
	}
	if (st->handed_out)
		cm_waitable_set_pending(&st->w);
	return rc;
}

/*
 * Store teardown: the callee task and a pending host call may be gone
 * already (host_pending.c detaches first), so only st's own memory.
 */
static void subtask_dispose(cm_store_obj *o)
{
	cm_subtask *st = (cm_subtask *)((char *)o - offsetof(cm_subtask, obj));

	cabi_lenders_free(&st->lenders);
	cabi_cx_release(&st->cx);
	free(st);
}

static void subtask_free(cm_subtask *st)
{
	cm_store_untrack(&st->obj);
	if (st->callee != NULL)
		st->callee->ref = NULL;
	if (st->host != NULL)
		cm_host_pending_detach(st->host);
	cabi_lenders_free(&st->lenders);
	cabi_cx_release(&st->cx);
	free(st);
}

void cm_subtask_free(cm_subtask *st)
{
	subtask_free(st);
}

static bool sync_lower_ready(cm_thread *t)
{
	return resolved(t->wait_obj);
}

static int sync_lower_complete(cm_thread *t, bool cancelled, cabi_error *err)
{
	cm_subtask *st = t->wait_obj;

	if (st->state != CM_SUBTASK_RETURNED) {
		subtask_free(st);
		return cabi_fail(err, CABI_ERR_TRAP, "sync call cancelled");
	}
	cabi_lenders_release(&st->lenders);
	t->nres = st->nres;
	if (st->nres)
		t->res[0] = st->res[0];
	subtask_free(st);
	return 0;
}

/* Call callee; an async-typed lift leaves its task in st->callee. */
static int call_callee(cm_store *s, cm_func *callee, cm_subtask *st,
		       cabi_error *err)
{
	if (cm_func_is_async(callee))
		return cm_canon_lift(s, callee, st->inst, s->current, &st->cbs,
				     &st->callee, err);
	int rc;

	/* a host callee may defer its answer (host_pending.c) */
	if (callee->kind == CM_FUNC_HOST)
		s->lowering = st;
	rc = cm_func_call(s, callee, st->inst, s->current, &st->cbs, err);
	s->lowering = NULL;
	return rc;
}

wasm_host_status cm_canon_lower_call(wasm_exec *e, const void *origin,
				     cm_component_instance *inst,
				     cm_func *callee, const cm_type *ft,
				     const cabi_options *opts, uint32_t ncp,
				     uint32_t ncr, const wasm_val *args,
				     wasm_val *results)
{
	cm_store *s = inst->store;
	cm_subtask *st;
	cabi_error ce;
	cabi_elem el;
	int rc;

	memset(&ce, 0, sizeof ce);
	if (!inst->may_leave) {
		cabi_fail(&ce, CABI_ERR_TRAP, CABI_MSG_CANNOT_LEAVE);
		return trap(e, s, &ce);
	}
	/*
	 * D4 (wasmtime's eager rule): a caller that may not block (a start
	 * function, a sync-typed task while no other thread is ready) may
	 * not sync-call an async-typed function at all, even one that
	 * would not block.
	 */
	if (!opts->async && callee->type->u.func.async &&
	    !cm_thread_may_block(cm_sched_current(s))) {
		cabi_fail(&ce, CABI_ERR_TRAP, CM_MSG_SYNC_BLOCK);
		return trap(e, s, &ce);
	}
	st = calloc(1, sizeof *st);
	if (st == NULL) {
		cabi_fail(&ce, CABI_ERR_NOMEM, "out of memory");
		return trap(e, s, &ce);
	}
	cm_store_track(s, &st->obj, subtask_dispose);
	st->w.kind = CABI_ELEM_SUBTASK;
	st->w.inst = inst;
	cm_subtask_init(st, inst, &inst->handles, s->current);
	cm_cx_init(&st->cx, inst, opts);
	st->cx.lenders = &st->lenders;
	st->ft = ft;
	st->async_lower = opts->async;
	st->nargs = ncp < CM_MAX_FLAT_PARAMS + 2 ? ncp : CM_MAX_FLAT_PARAMS + 2;
	memcpy(st->args, args, st->nargs * sizeof *args);
	st->cbs.on_start = subtask_on_start;
	st->cbs.on_resolve = subtask_on_resolve;
	st->cbs.env = st;
	st->origin = origin;

	if (s->fuel != UINT64_MAX)
		s->fuel = wasm_exec_fuel(e);
	rc = call_callee(s, callee, st, &ce);
	if (s->fuel != UINT64_MAX)
		wasm_exec_set_fuel(e, s->fuel);
	/* lifting the arguments (and any result by now) was host work */
	cm_store_bill_host_work(s, e);
	if (rc) {
		subtask_free(st);
		return trap(e, s, &ce);
	}

	if (!opts->async) {
		cm_thread *t;

		if (resolved(st)) {
			t = NULL;
			if (st->state != CM_SUBTASK_RETURNED) {
				subtask_free(st);
				cabi_fail(&ce, CABI_ERR_TRAP,
					  "sync call cancelled");
				return trap(e, s, &ce);
			}
			cabi_lenders_release(&st->lenders);
			if (st->nres && ncr)
				results[0] = st->res[0];
			subtask_free(st);
			return WASM_HOST_OK;
		}
		t = cm_sched_current(s);
		if (t == NULL || t->exec != e) {
			/* st stays: the callee still refers to it */
			st->handed_out = false;
			cabi_fail(&ce, CABI_ERR_TRAP, CM_MSG_SYNC_BLOCK);
			return trap(e, s, &ce);
		}
		t->wait_obj = st;
		return cm_thread_block(t, true, sync_lower_ready,
				       sync_lower_complete, false);
	}

	/*
	 * Drain-to-quiescence entry decision (digest 4.2): run the ready
	 * threads of the callee's instance, never the caller's own task,
	 * until the callee has left STARTING or none is left.  The caller's
	 * task is skipped rather than ending the drain, so which ready
	 * thread the (possibly seeded) pick returns first cannot change the
	 * answer.
	 */
	while (st->state == CM_SUBTASK_STARTING && st->callee != NULL &&
	       !(s->in_turn && s->fuel == 0)) {
		cm_thread *r = cm_sched_pick_other(s, callee->inst, s->current);

		if (r == NULL || r->task == NULL)
			break;
		if (cm_thread_resume(r, false, &ce)) {
			cm_poison(callee->inst, NULL);
			return trap(e, s, &ce);
		}
	}

	if (resolved(st)) {
		uint32_t state = st->state;

		cabi_lenders_release(&st->lenders);
		st->resolve_delivered = true;
		subtask_free(st);
		results[0].type = WASM_I32;
		results[0].u.i32 = state == CM_SUBTASK_RETURNED ? 2 : state;
		return WASM_HOST_OK;
	}
	memset(&el, 0, sizeof el);
	el.kind = CABI_ELEM_SUBTASK;
	el.u.obj = st;
	if (cabi_table_add(&inst->handles, &el, &st->w.index, &ce))
		return trap(e, s, &ce);
	st->handed_out = true;
	results[0].type = WASM_I32;
	results[0].u.i32 = st->state | (st->w.index << 4);
	return WASM_HOST_OK;
}

/* ---- snapshots (run/snapshot.c) ---------------------------------------- */

bool cm_obj_is_subtask(const cm_store_obj *o)
{
	return o->dispose == subtask_dispose;
}

cm_subtask *cm_subtask_alloc(cm_store *s)
{
	cm_subtask *st = calloc(1, sizeof *st);

	if (st != NULL)
		cm_store_track(s, &st->obj, subtask_dispose);
	return st;
}

const void *cm_lower_of(const wasm_func *f)
{
	if (f == NULL || f->kind != WASM_FUNC_HOST ||
	    f->u.host.fn != lower_trampoline)
		return NULL;
	return f->u.host.env;
}

cm_func *cm_lower_callee(const void *origin)
{
	return origin != NULL ? ((const cm_lower *)origin)->callee : NULL;
}

void cm_subtask_bind(cm_subtask *st, const void *origin)
{
	const cm_lower *lw = origin;

	st->w.kind = CABI_ELEM_SUBTASK;
	st->inst = lw->inst;
	st->w.inst = lw->inst;
	cabi_lenders_init(&st->lenders, &lw->inst->handles);
	cm_cx_init(&st->cx, lw->inst, &lw->opts);
	st->cx.lenders = &st->lenders;
	st->ft = lw->ft;
	st->cbs.on_start = subtask_on_start;
	st->cbs.on_resolve = subtask_on_resolve;
	st->cbs.env = st;
	st->origin = lw;
}

cm_cont_fn cm_lower_cont(uint32_t code)
{
	switch (code) {
	case CM_CONT_READY_SYNC_LOWER:
		return (cm_cont_fn)sync_lower_ready;
	case CM_CONT_COMPLETE_SYNC_LOWER:
		return (cm_cont_fn)sync_lower_complete;
	default:
		return NULL;
	}
}
