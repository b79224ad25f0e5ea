/*
 * canon_builtins.c - the canon built-ins of the async model that act on
 * tasks, subtasks, waitable sets and threads: task.return, task.cancel,
 * thread.yield, waitable-set.{new,wait,poll,drop}, waitable.join,
 * subtask.{drop,cancel}, thread.index, thread.suspend,
 * thread.resume-later, thread.{suspend,yield}-then-{resume,promote}
 * (definitions.py canon_*; digest 3.8, 3.9, 3.12, 3.13).
 *
 * Contract: every built-in here traps "cannot leave component instance"
 * first when may_leave is false; traps come back to the calling exec as
 * host traps carrying the suite's message.  A built-in that must block
 * in a thread that may not (cm_thread_may_block: a sync-typed task with
 * no other thread of the store ready, or no thread at all) traps "cannot
 * block a synchronous task before returning"; thread.yield there goes on
 * at once.  A waitable-set.wait that finds an event pending delivers it
 * without blocking.  Streams, futures and error-context live in stream.c;
 * anything not implemented traps with its name.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - set_new: one waitable set per waitable-set.new, in the handle
 *    table (max_handles).
 *  - task_return: the result, lifted through a cx of cm_cx_init (the
 *    store's budget); its charge lasts until it is handed on, or goes
 *    to a caller that keeps it (store.h `returning`, invoke.c).
 *  - cm_canon_async_builtin: one builtin per canon definition, in the
 *    store's arena (the component's length).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component/arena.h"
#include "run/rt.h"
#include "wasm/store.h"
#include "run/sched.h"

typedef struct cm_builtin {
	cm_component_instance *inst;
	const cm_canon *cn;
	cabi_options opts;
} cm_builtin;

static wasm_host_status trapf(wasm_exec *e, cm_store *s, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static wasm_host_status trapf(wasm_exec *e, cm_store *s, const char *fmt, ...)
{
	cabi_error ce;
	va_list ap;

	memset(&ce, 0, sizeof ce);
	ce.kind = CABI_ERR_TRAP;
	va_start(ap, fmt);
	vsnprintf(ce.msg, sizeof ce.msg, fmt, ap);
	va_end(ap);
	cm_note_trap(s, &ce);
	wasm_exec_set_host_trap(e, ce.msg);
	return WASM_HOST_TRAP;
}

static wasm_host_status trap_err(wasm_exec *e, cm_store *s, cabi_error *ce)
{
	if (ce->msg[0] == '\0')
		snprintf(ce->msg, sizeof ce->msg, "trap");
	cm_note_trap(s, ce);
	wasm_exec_set_host_trap(e, ce->msg);
	return WASM_HOST_TRAP;
}

static void set_i32(wasm_val *v, uint32_t x)
{
	v->type = WASM_I32;
	v->u.i32 = x;
}

/* A pointer or start argument: i64 under a 64-bit memory (🐘), the
 * validated core type says which. */
static uint64_t arg_u(const wasm_val *v)
{
	return v->type == WASM_I64 ? v->u.i64 : (uint32_t)v->u.i32;
}

/* Store an event's p1/p2 at ptr (digest 3.2: 4-aligned, in bounds). */
static int store_event(wasm_memory *m, uint64_t ptr, const cm_event *ev,
		       cabi_error *err)
{
	uint8_t *d;

	if (m == NULL)
		return cabi_fail(err, CABI_ERR_TRAP, "no memory");
	if (ptr % 4 != 0)
		return cabi_fail(err, CABI_ERR_TRAP, CABI_MSG_UNALIGNED);
	if (!wasm_memory_in_bounds(m, ptr, 8))
		return cabi_fail(err, CABI_ERR_TRAP, "out of bounds");
	d = wasm_memory_write(m, ptr, 8);
	for (int i = 0; i < 4; i++) {
		d[i] = (uint8_t)(ev->p1 >> (8 * i));
		d[4 + i] = (uint8_t)(ev->p2 >> (8 * i));
	}
	return 0;
}

static cm_task *current_task(cm_store *s)
{
	cm_thread *t = cm_sched_current(s);

	return t != NULL ? t->task : NULL;
}

/* ---- task.return / task.cancel ----------------------------------------- */

static wasm_host_status task_return(wasm_exec *e, const cm_builtin *b,
				    const wasm_val *args)
{
	cm_store *s = b->inst->store;
	cm_task *at = current_task(s);
	const cm_type *rt = b->cn->type;
	cabi_core_iter vi = {args, 0, 0};
	cm_val result[1];
	cabi_cx cx, *prev_returning;
	cabi_error ce;
	int rc;

	memset(&ce, 0, sizeof ce);
	memset(result, 0, sizeof result);
	if (at == NULL || at->sync_lift || at->inst != b->inst)
		return trapf(e, s,
			     "wasm trap: invalid task.return: "
			     "the current task is not async-lifted");
	if (rt != at->func->type->u.func.result &&
	    (rt == NULL || at->func->type->u.func.result == NULL ||
	     rt->kind != at->func->type->u.func.result->kind))
		return trapf(e, s,
			     "wasm trap: invalid `task.return` "
			     "signature and/or options for current task");
	if (b->opts.memory != NULL && b->opts.memory != at->func->opts.memory)
		return trapf(e, s,
			     "wasm trap: invalid `task.return` "
			     "signature and/or options for current task");
	if (b->opts.string_encoding != at->func->opts.string_encoding)
		return trapf(e, s,
			     "wasm trap: invalid `task.return` "
			     "signature and/or options for current task");
	vi.n = b->cn->core_type->nparams;
	cm_cx_init(&cx, b->inst, &at->func->opts);
	if (rt != NULL) {
		if (cabi_lift_flat_values(&cx, CM_MAX_FLAT_PARAMS, &vi, &rt, 1,
					  result)) {
			ce = cx.err;
			cabi_cx_release(&cx);
			return trap_err(e, s, &ce);
		}
	}
	if (at->state == CM_TASK_RESOLVED) {
		cm_vals_free(result, rt != NULL);
		cabi_cx_release(&cx);
		return trapf(e, s,
			     "wasm trap: task already returned a "
			     "result");
	}
	/* the result's charge (cabi_charge) lasts until it is handed on,
	 * or goes with it to a caller that keeps it (store.h returning) */
	prev_returning = s->returning;
	s->returning = &cx;
	rc = cm_task_return(at, result, &ce);
	s->returning = prev_returning;
	cm_vals_free(result, rt != NULL);
	cabi_cx_release(&cx);
	/* lifting the result (and lowering it into a caller) was host work */
	cm_store_bill_host_work(s, e);
	if (rc)
		return trap_err(e, s, &ce);
	return WASM_HOST_OK;
}

static wasm_host_status task_cancel(wasm_exec *e, const cm_builtin *b)
{
	cm_store *s = b->inst->store;
	cm_task *at = current_task(s);
	cabi_error ce;

	memset(&ce, 0, sizeof ce);
	if (at == NULL || at->sync_lift)
		return trapf(e, s,
			     "wasm trap: task.cancel in a task that is "
			     "not async-lifted");
	if (at->state != CM_TASK_CANCEL_DELIVERED)
		return trapf(e, s,
			     "wasm trap: `task.cancel` called by task "
			     "which has not been cancelled");
	at->resolved_cancelled = true;
	if (cm_task_return(at, NULL, &ce))
		return trap_err(e, s, &ce);
	return WASM_HOST_OK;
}

/* ---- thread.yield and friends ------------------------------------------- */

static int cancelled_complete(cm_thread *t, bool cancelled, cabi_error *err)
{
	t->nres = 1;
	set_i32(&t->res[0], cancelled);
	return 0;
}

static bool target_ready(cm_thread *t);

static wasm_host_status thread_yield(wasm_exec *e, const cm_builtin *b,
				     wasm_val *results)
{
	cm_thread *t = cm_sched_current(b->inst->store);
	wasm_host_status hs;

	if (!cm_thread_may_block(t)) {
		/* yield_until: a task that may not block goes on */
		set_i32(&results[0], 0);
		return WASM_HOST_OK;
	}
	hs = cm_thread_block(t, true, NULL, cancelled_complete, b->cn->flag);
	if (hs == WASM_HOST_OK)
		results[0] = t->res[0];
	return hs;
}

static cm_thread *thread_at(cm_component_instance *inst, uint32_t i,
			    cabi_error *err)
{
	cabi_elem *el =
		cabi_table_get_kind(&inst->threads, i, CABI_ELEM_THREAD, err);

	return el != NULL ? el->u.obj : NULL;
}

static bool target_ready(cm_thread *t)
{
	(void)t;
	return true;
}

static wasm_host_status thread_switch(wasm_exec *e, const cm_builtin *b,
				      const wasm_val *args, wasm_val *results)
{
	cm_store *s = b->inst->store;
	cm_thread *t = cm_sched_current(s);
	cm_canon_op op = b->cn->op;
	cm_thread *other = NULL;
	cabi_error ce;
	wasm_host_status hs;
	bool yield;

	memset(&ce, 0, sizeof ce);
	if (op != CM_CANON_THREAD_SUSPEND) {
		other = thread_at(b->inst, (uint32_t)args[0].u.i32, &ce);
		if (other == NULL)
			return trap_err(e, s, &ce);
	}
	if (op == CM_CANON_THREAD_RESUME_LATER) {
		if (other->state != CM_THREAD_SUSPENDED)
			return trapf(e, s,
				     "wasm trap: cannot resume thread "
				     "which is not suspended");
		other->ready = target_ready;
		other->state = CM_THREAD_WAITING;
		cm_sched_enqueue(other);
		return WASM_HOST_OK;
	}
	if ((op == CM_CANON_THREAD_SUSPEND_THEN_RESUME ||
	     op == CM_CANON_THREAD_YIELD_THEN_RESUME) &&
	    other->state != CM_THREAD_SUSPENDED)
		return trapf(e, s,
			     "wasm trap: cannot resume thread which is "
			     "not suspended");
	if (t == NULL)
		return trapf(e, s, CM_MSG_SYNC_BLOCK);
	yield = op == CM_CANON_THREAD_YIELD_THEN_RESUME ||
		op == CM_CANON_THREAD_YIELD_THEN_PROMOTE;
	if ((op == CM_CANON_THREAD_SUSPEND_THEN_PROMOTE ||
	     op == CM_CANON_THREAD_YIELD_THEN_PROMOTE) &&
	    !(other->state == CM_THREAD_WAITING &&
	      (other->ready == NULL || other->ready(other))))
		other = NULL;
	/*
	 * With no thread to switch to this is a plain suspend or yield: a
	 * task that may not block traps on the one and goes on from the
	 * other (a switch always has a thread to run, so it is fine).
	 */
	if ((other == NULL || other == t) && !cm_thread_may_block(t)) {
		if (yield) {
			set_i32(&results[0], 0);
			return WASM_HOST_OK;
		}
		return trapf(e, s, CM_MSG_SYNC_BLOCK);
	}
	hs = cm_thread_block(t, yield, NULL, cancelled_complete, b->cn->flag);
	if (hs == WASM_HOST_OK) {
		results[0] = t->res[0];
		return hs;
	}
	if (other != NULL && other != t) {
		cm_sched_dequeue(other);
		other->state = CM_THREAD_RUNNING;
		t->switch_to = other;
	}
	return hs;
}

static int explicit_done(cm_thread *t, cabi_error *err)
{
	return cm_thread_exit(t, err);
}

static int explicit_start(cm_thread *t, bool cancelled, cabi_error *err)
{
	const wasm_functype *ft = wasm_func_type(t->start_fn);
	wasm_val arg;

	/* thread.new-indirect checked the type: [i32] -> [] or [i64] -> [] */
	arg.type = ft->params[0];
	if (arg.type == WASM_I64)
		arg.u.i64 = t->start_arg;
	else
		arg.u.i32 = (uint32_t)t->start_arg;
	return cm_thread_call(t, t->start_fn, &arg, 1, explicit_done, err);
}

/* thread.new-indirect: a suspended thread of the current task. */
static wasm_host_status thread_new(wasm_exec *e, const cm_builtin *b,
				   const wasm_val *args, wasm_val *results)
{
	cm_component_instance *inst = b->inst;
	cm_store *s = inst->store;
	cm_thread *cur = cm_sched_current(s), *t;
	uint64_t fi = arg_u(&args[0]); /* i64 through a 64-bit table */
	const wasm_functype *ft, *want = b->cn->core_type;
	wasm_table_inst *tab;
	wasm_func *f;
	cabi_error ce;

	memset(&ce, 0, sizeof ce);
	if (b->cn->table >= inst->nfilled[CM_SORT_CORE_TABLE])
		return trapf(e, s, "wasm trap: unknown table");
	tab = inst->spaces[CM_SORT_CORE_TABLE][b->cn->table].core.u.table;
	if (fi >= tab->size)
		return trapf(e, s,
			     "wasm trap: undefined element: out of "
			     "bounds table access");
	f = (wasm_func *)tab->elems[fi];
	if (f == NULL)
		return trapf(e, s, "wasm trap: uninitialized element");
	ft = wasm_func_type(f);
	/* the started function takes the one argument of the type the
	 * built-in names (i32, or i64 for a 64-bit memory's pointers) */
	if (want == NULL || want->nparams != 2 || ft->nparams != 1 ||
	    ft->params[0] != want->params[1] || ft->nresults != 0)
		return trapf(e, s, "wasm trap: indirect call type mismatch");
	if (cur == NULL)
		return trapf(e, s,
			     "async builtin `thread.new-indirect` "
			     "outside an async task not implemented");
	t = cm_thread_new(cur->task, inst);
	if (t == NULL)
		return trapf(e, s, "out of memory");
	t->start_fn = f;
	t->start_arg = arg_u(&args[1]);
	t->wake = explicit_start;
	if (cm_thread_register(t, &ce))
		return trap_err(e, s, &ce);
	set_i32(&results[0], t->index);
	return WASM_HOST_OK;
}

/* ---- waitable sets --------------------------------------------------------
 */

static cm_waitable_set *set_at(cm_component_instance *inst, uint32_t i,
			       cabi_error *err)
{
	cabi_elem *el = cabi_table_get_kind(&inst->handles, i,
					    CABI_ELEM_WAITABLE_SET, err);

	return el != NULL ? el->u.obj : NULL;
}

static bool set_ready(cm_thread *t)
{
	return cm_waitable_set_has_event(t->wait_set);
}

static int wait_complete(cm_thread *t, bool cancelled, cabi_error *err)
{
	cm_event ev = {CM_EVENT_TASK_CANCELLED, 0, 0};
	cm_builtin *b = t->wait_obj;

	if (t->wait_set != NULL)
		t->wait_set->num_waiting--;
	if (!cancelled && cm_waitable_set_take(t->store, t->wait_set, &ev, err))
		return -1;
	t->wait_set = NULL;
	if (store_event(b->opts.memory, t->wait_ptr, &ev, err))
		return -1;
	t->nres = 1;
	set_i32(&t->res[0], ev.code);
	return 0;
}

static wasm_host_status set_wait(wasm_exec *e, cm_builtin *b,
				 const wasm_val *args, wasm_val *results,
				 bool poll)
{
	cm_store *s = b->inst->store;
	cm_thread *t = cm_sched_current(s);
	cm_task *at = t != NULL ? t->task : NULL;
	cabi_error ce;
	cm_waitable_set *ws;
	cm_event ev = {CM_EVENT_NONE, 0, 0};
	wasm_host_status hs;

	memset(&ce, 0, sizeof ce);
	ws = set_at(b->inst, (uint32_t)args[0].u.i32, &ce);
	if (ws == NULL)
		return trap_err(e, s, &ce);
	if (poll) {
		if (b->cn->flag && at != NULL &&
		    at->state == CM_TASK_PENDING_CANCEL) {
			at->state = CM_TASK_CANCEL_DELIVERED;
			ev.code = CM_EVENT_TASK_CANCELLED;
		} else if (cm_waitable_set_take(s, ws, &ev, &ce)) {
			return trap_err(e, s, &ce);
		}
		if (store_event(b->opts.memory, arg_u(&args[1]), &ev,
				&ce))
			return trap_err(e, s, &ce);
		set_i32(&results[0], ev.code);
		return WASM_HOST_OK;
	}
	/*
	 * An event already pending is delivered without blocking (the
	 * reference's wait_until may return at once; the suite expects it:
	 * big-interleaving-test.wast `await` of an armed stream event
	 * resolves inside its async call).  A pending cancellation still
	 * comes first.
	 */
	if (cm_waitable_set_has_event(ws) &&
	    !(b->cn->flag && at != NULL &&
	      at->state == CM_TASK_PENDING_CANCEL)) {
		if (cm_waitable_set_take(s, ws, &ev, &ce) ||
		    store_event(b->opts.memory, arg_u(&args[1]), &ev,
				&ce))
			return trap_err(e, s, &ce);
		set_i32(&results[0], ev.code);
		return WASM_HOST_OK;
	}
	if (!cm_thread_may_block(t))
		return trapf(e, s, CM_MSG_SYNC_BLOCK);
	ws->num_waiting++;
	t->wait_set = ws;
	t->wait_obj = b;
	t->wait_ptr = arg_u(&args[1]);
	hs = cm_thread_block(t, true, set_ready, wait_complete, b->cn->flag);
	if (hs == WASM_HOST_OK)
		results[0] = t->res[0];
	return hs;
}

/* Store teardown: a set the guest never dropped (members may be gone). */
static void set_dispose(cm_store_obj *o)
{
	free((char *)o - offsetof(cm_waitable_set, obj));
}

static wasm_host_status set_new(wasm_exec *e, const cm_builtin *b,
				wasm_val *results)
{
	cm_store *s = b->inst->store;
	cm_waitable_set *ws = calloc(1, sizeof *ws);
	cabi_elem el;
	cabi_error ce;

	memset(&ce, 0, sizeof ce);
	if (ws == NULL)
		return trapf(e, s, "out of memory");
	memset(&el, 0, sizeof el);
	el.kind = CABI_ELEM_WAITABLE_SET;
	el.u.obj = ws;
	if (cabi_table_add(&b->inst->handles, &el, &ws->index, &ce)) {
		free(ws);
		return trap_err(e, s, &ce);
	}
	cm_store_track(s, &ws->obj, set_dispose);
	set_i32(&results[0], ws->index);
	return WASM_HOST_OK;
}

static wasm_host_status set_drop(wasm_exec *e, const cm_builtin *b,
				 const wasm_val *args)
{
	cm_store *s = b->inst->store;
	cabi_error ce;
	uint32_t i = (uint32_t)args[0].u.i32;
	cm_waitable_set *ws;

	memset(&ce, 0, sizeof ce);
	ws = set_at(b->inst, i, &ce);
	if (ws == NULL)
		return trap_err(e, s, &ce);
	if (ws->first != NULL || ws->num_waiting > 0)
		return trapf(e, s, "cannot drop waitable set with waiters");
	cabi_table_remove(&b->inst->handles, i, NULL, NULL);
	cm_store_untrack(&ws->obj);
	free(ws);
	return WASM_HOST_OK;
}

static bool is_waitable_kind(cabi_elem_kind k)
{
	return k == CABI_ELEM_SUBTASK || k == CABI_ELEM_STREAM_READABLE ||
	       k == CABI_ELEM_STREAM_WRITABLE ||
	       k == CABI_ELEM_FUTURE_READABLE || k == CABI_ELEM_FUTURE_WRITABLE;
}

static wasm_host_status waitable_join(wasm_exec *e, const cm_builtin *b,
				      const wasm_val *args)
{
	cm_store *s = b->inst->store;
	cabi_error ce;
	cabi_elem *el;
	cm_waitable *w;
	cm_waitable_set *ws = NULL;
	uint32_t si = (uint32_t)args[1].u.i32;

	memset(&ce, 0, sizeof ce);
	el = cabi_table_get(&b->inst->handles, (uint32_t)args[0].u.i32, &ce);
	if (el == NULL)
		return trap_err(e, s, &ce);
	if (!is_waitable_kind(el->kind))
		return trapf(e, s, "handle index %u is not a waitable",
			     (uint32_t)args[0].u.i32);
	w = el->u.obj;
	if (w->sync_waiter)
		return trapf(e, s, CM_MSG_SYNC_IN_SET);
	if (si != 0) {
		ws = set_at(b->inst, si, &ce);
		if (ws == NULL)
			return trap_err(e, s, &ce);
	}
	cm_waitable_join(w, ws);
	return WASM_HOST_OK;
}

/* ---- subtasks --------------------------------------------------------------
 */

static cm_subtask *subtask_at(cm_component_instance *inst, uint32_t i,
			      cabi_error *err)
{
	cabi_elem *el =
		cabi_table_get_kind(&inst->handles, i, CABI_ELEM_SUBTASK, err);

	return el != NULL ? el->u.obj : NULL;
}

static wasm_host_status subtask_drop(wasm_exec *e, const cm_builtin *b,
				     const wasm_val *args)
{
	cm_store *s = b->inst->store;
	uint32_t i = (uint32_t)args[0].u.i32;
	cabi_error ce;
	cm_subtask *st;

	memset(&ce, 0, sizeof ce);
	st = subtask_at(b->inst, i, &ce);
	if (st == NULL)
		return trap_err(e, s, &ce);
	if (!st->resolve_delivered)
		return trapf(e, s,
			     "cannot drop a subtask which has not yet "
			     "resolved");
	cabi_table_remove(&b->inst->handles, i, NULL, NULL);
	cm_waitable_join(&st->w, NULL);
	cm_subtask_free(st);
	return WASM_HOST_OK;
}

static bool subtask_resolved(cm_thread *t)
{
	cm_subtask *st = t->wait_obj;

	return st->state >= CM_SUBTASK_RETURNED;
}

static int cancel_complete(cm_thread *t, bool cancelled, cabi_error *err)
{
	cm_subtask *st = t->wait_obj;
	cm_event ev;

	st->w.sync_waiter = false;
	cm_waitable_clear_pending(&st->w);
	cm_subtask_event(st, &ev);
	t->nres = 1;
	set_i32(&t->res[0], ev.p2);
	return 0;
}

static wasm_host_status subtask_cancel(wasm_exec *e, const cm_builtin *b,
				       const wasm_val *args, wasm_val *results)
{
	cm_store *s = b->inst->store;
	bool async = b->cn->flag;
	cabi_error ce;
	cm_subtask *st;
	cm_thread *t;
	cm_event ev;

	memset(&ce, 0, sizeof ce);
	if (!async && !cm_thread_may_block(cm_sched_current(s)))
		return trapf(e, s, CM_MSG_SYNC_BLOCK); /* D4 */
	st = subtask_at(b->inst, (uint32_t)args[0].u.i32, &ce);
	if (st == NULL)
		return trap_err(e, s, &ce);
	if (st->resolve_delivered)
		return trapf(e, s,
			     "wasm trap: `subtask.cancel` called after "
			     "terminal status delivered");
	if (st->cancel_requested)
		return trapf(e, s, "wasm trap: `subtask.cancel` called twice");
	if (!async && st->w.set != NULL)
		return trapf(e, s, CM_MSG_SYNC_IN_SET);
	if (st->state < CM_SUBTASK_RETURNED) {
		st->cancel_requested = true;
		if (st->callee != NULL &&
		    cm_task_request_cancellation(st->callee, &ce))
			return trap_err(e, s, &ce);
		if (st->host != NULL)
			cm_host_pending_cancel(st->host);
	}
	if (st->state < CM_SUBTASK_RETURNED) {
		if (async) {
			set_i32(&results[0], CM_BLOCKED);
			return WASM_HOST_OK;
		}
		t = cm_sched_current(s);
		if (t == NULL)
			return trapf(e, s, CM_MSG_SYNC_BLOCK);
		st->w.sync_waiter = true;
		t->wait_obj = st;
		return cm_thread_block(t, true, subtask_resolved,
				       cancel_complete, false);
	}
	cm_waitable_clear_pending(&st->w);
	cm_subtask_event(st, &ev);
	set_i32(&results[0], ev.p2);
	return WASM_HOST_OK;
}

/* ---- dispatch --------------------------------------------------------------
 */

static wasm_host_status builtin(wasm_exec *e, void *env, const wasm_val *args,
				wasm_val *results)
{
	cm_builtin *b = env;
	cm_component_instance *inst = b->inst;
	cm_store *s = inst->store;
	cm_thread *t;

	if (!inst->may_leave)
		return trapf(e, s, CABI_MSG_CANNOT_LEAVE);
	switch (b->cn->op) {
	case CM_CANON_TASK_RETURN:
		return task_return(e, b, args);
	case CM_CANON_TASK_CANCEL:
		return task_cancel(e, b);
	case CM_CANON_THREAD_YIELD:
		return thread_yield(e, b, results);
	case CM_CANON_WAITABLE_SET_NEW:
		return set_new(e, b, results);
	case CM_CANON_WAITABLE_SET_WAIT:
		return set_wait(e, b, args, results, false);
	case CM_CANON_WAITABLE_SET_POLL:
		return set_wait(e, b, args, results, true);
	case CM_CANON_WAITABLE_SET_DROP:
		return set_drop(e, b, args);
	case CM_CANON_WAITABLE_JOIN:
		return waitable_join(e, b, args);
	case CM_CANON_SUBTASK_DROP:
		return subtask_drop(e, b, args);
	case CM_CANON_SUBTASK_CANCEL:
		return subtask_cancel(e, b, args, results);
	case CM_CANON_THREAD_INDEX:
		t = cm_sched_current(s);
		set_i32(&results[0], t != NULL ? t->index : 0);
		return WASM_HOST_OK;
	case CM_CANON_THREAD_NEW_INDIRECT:
		return thread_new(e, b, args, results);
	case CM_CANON_THREAD_SUSPEND:
	case CM_CANON_THREAD_RESUME_LATER:
	case CM_CANON_THREAD_SUSPEND_THEN_RESUME:
	case CM_CANON_THREAD_YIELD_THEN_RESUME:
	case CM_CANON_THREAD_SUSPEND_THEN_PROMOTE:
	case CM_CANON_THREAD_YIELD_THEN_PROMOTE:
		return thread_switch(e, b, args, results);
	default:
		return cm_stream_builtin(e, inst, b->cn, &b->opts, args,
					 results);
	}
}

bool cm_is_async_builtin(cm_canon_op op)
{
	(void)op;
	return true;
}

wasm_func *cm_canon_async_builtin(cm_component_instance *inst,
				  const cm_canon *cn, const cabi_options *opts)
{
	cm_store *s = inst->store;
	cm_builtin *b;

	if (cn->core_type == NULL)
		return NULL;
	b = cm_arena_alloc(s->arena, sizeof *b);
	if (b == NULL)
		return NULL;
	b->inst = inst;
	b->cn = cn;
	b->opts = *opts;
	return wasm_func_new_host(s->wasm, cn->core_type, builtin, b);
}

/* ---- snapshots (run/snapshot.c) ---------------------------------------- */

bool cm_obj_is_set(const cm_store_obj *o)
{
	return o->dispose == set_dispose;
}

cm_waitable_set *cm_waitable_set_alloc(cm_store *s)
{
	cm_waitable_set *ws = calloc(1, sizeof *ws);

	if (ws != NULL)
		cm_store_track(s, &ws->obj, set_dispose);
	return ws;
}

const cm_canon *cm_builtin_canon(const wasm_func *f)
{
	if (f == NULL || f->kind != WASM_FUNC_HOST || f->u.host.fn != builtin)
		return NULL;
	return ((const cm_builtin *)f->u.host.env)->cn;
}

cm_cont_fn cm_builtin_cont(uint32_t code)
{
	switch (code) {
	case CM_CONT_WAKE_EXPLICIT_START:
		return (cm_cont_fn)explicit_start;
	case CM_CONT_READY_TARGET:
		return (cm_cont_fn)target_ready;
	case CM_CONT_READY_SET:
		return (cm_cont_fn)set_ready;
	case CM_CONT_READY_SUBTASK:
		return (cm_cont_fn)subtask_resolved;
	case CM_CONT_DONE_EXPLICIT:
		return (cm_cont_fn)explicit_done;
	case CM_CONT_COMPLETE_CANCELLED:
		return (cm_cont_fn)cancelled_complete;
	case CM_CONT_COMPLETE_WAIT:
		return (cm_cont_fn)wait_complete;
	case CM_CONT_COMPLETE_CANCEL:
		return (cm_cont_fn)cancel_complete;
	default:
		return NULL;
	}
}
