/*
 * canon_lift.c - canon lift of every function: sync-typed, and
 * async-typed sync-lifted, stackless (async + callback) or stackful
 * (async alone); definitions.py canon_lift, Task.enter/exit, the callback
 * event loop (digest 3.5, 3.6).  A sync-typed task takes no lock and
 * returns to its caller only resolved (sync_wait, digest 3.6 step 3).
 *
 * Contract (sched.h): the callee's implicit thread is created and resumed
 * at once; this returns when it has blocked or finished (the caller then
 * sees a STARTING/STARTED/RETURNED subtask).  The entry gate, the
 * exclusivity lock (held for every whole core invocation, released only
 * between callback invocations and at exit: seed 002's hold rule) and
 * the thread registration happen on the implicit thread, so a thread
 * parked at the gate resumes from exactly there.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - implicit_start: the arguments' array (the type's count), filled by
 *    the caller's on_start (a lift through the caller's cx, charged;
 *    or the embedder's values) and freed once lowered into the callee.
 *  - sync_lift_done: the result, lifted through task_cx (cm_cx_init:
 *    the store's budget), its charge handed on as task.return's.
 *  - the task and its implicit thread (thread.c): one per call; a
 *    guest's calls are bounded by its subtasks in the handle table
 *    (max_handles) or its blocked threads (max_threads), also while
 *    the task waits at the callee's gate (unregistered, about 3 KB).
 */
#include <stdlib.h>
#include <string.h>

#include "run/rt.h"
#include "run/sched.h"


bool cm_func_is_async(const cm_func *f)
{
	return f != NULL && f->kind == CM_FUNC_LIFTED &&
	       (f->opts.async || f->type->u.func.async);
}

static bool has_backpressure(cm_component_instance *inst, cm_task *at)
{
	return inst->backpressure > 0 ||
	       (at->needs_exclusive && inst->exclusive_thread != NULL);
}

static bool gate_ready(cm_thread *t)
{
	return !has_backpressure(t->inst, t->task);
}

static bool lock_free(cm_thread *t)
{
	return t->inst->exclusive_thread == NULL ||
	       t->inst->exclusive_thread == t;
}

static bool callback_ready(cm_thread *t)
{
	if (!lock_free(t))
		return false;
	if (t->callback_code == CM_CALLBACK_WAIT)
		return cm_waitable_set_has_event(t->wait_set);
	return true;
}

/*
 * An ABI failure of cx as a trap.  A sync-typed function keeps the words
 * of the former nested sync path: unprefixed when the host is the peer
 * (the values suite matches cabi's own messages).
 */
static int cx_fail(const cabi_cx *cx, const cm_task *at, cabi_error *err)
{
	*err = cx->err;
	if (err->kind == CABI_ERR_NONE)
		err->kind = CABI_ERR_TRAP;
	if (err->kind == CABI_ERR_TRAP &&
	    !(cx->host_peer && !at->func->type->u.func.async) &&
	    strncmp(err->msg, WASM_TRAP_PREFIX, strlen(WASM_TRAP_PREFIX)))
		return cabi_fail(err, CABI_ERR_TRAP, WASM_TRAP_PREFIX "%s",
				 cx->err.msg);
	return -1;
}

static void task_cx(cabi_cx *cx, cm_thread *t)
{
	cm_task *at = t->task;

	cm_cx_init(cx, t->inst, &at->func->opts);
	cx->borrow_scope = &at->borrows;
	cx->host_peer = at->caller == NULL;
}

/* ---- sync lift ----------------------------------------------------------- */

static int sync_lift_done(cm_thread *t, cabi_error *err)
{
	cm_task *at = t->task;
	cm_func *f = at->func;
	const cm_type *ft = f->type;
	uint32_t nres = ft->u.func.result != NULL;
	wasm_val core_res[1];
	cm_val result[1];
	cabi_core_iter it;
	cabi_cx cx, *prev_returning;
	uint32_t ncore = wasm_exec_results(t->exec, core_res, 1);
	int rc;

	memset(result, 0, sizeof result);
	task_cx(&cx, t);
	it.vals = core_res;
	it.n = ncore;
	it.i = 0;
	if (cabi_lift_results(&cx, ft, CM_MAX_FLAT_RESULTS, &it, result)) {
		rc = cx_fail(&cx, at, err);
		cabi_cx_release(&cx);
		return rc;
	}
	/* the result's charge (cabi_charge) lasts until it is handed on,
	 * or goes with it to a caller that keeps it (store.h returning) */
	prev_returning = t->store->returning;
	t->store->returning = &cx;
	rc = cm_task_return(at, result, err);
	t->store->returning = prev_returning;
	cm_vals_free(result, nres);
	cabi_cx_release(&cx);
	if (rc)
		return -1;
	if (f->opts.post_return != NULL) {
		wasm_exec_status st;

		t->inst->may_leave = false;
		wasm_exec_set_fuel(t->exec, t->store->fuel);
		st = wasm_exec_call(t->exec, f->opts.post_return, core_res,
				    ncore);
		t->inst->may_leave = true;
		if (st != WASM_EXEC_DONE)
			return cm_exec_fail(t->exec, st, err);
	}
	return cm_thread_exit(t, err);
}

/* ---- stackful ------------------------------------------------------------ */

static int stackful_done(cm_thread *t, cabi_error *err)
{
	return cm_thread_exit(t, err);
}

/* ---- stackless: the callback event loop ---------------------------------- */

static int callback_done(cm_thread *t, cabi_error *err);

static int callback_wake(cm_thread *t, bool cancelled, cabi_error *err)
{
	cm_task *at = t->task;
	cm_event ev = {CM_EVENT_NONE, 0, 0};
	wasm_val args[3];

	if (t->callback_code == CM_CALLBACK_WAIT)
		t->wait_set->num_waiting--;
	if (cancelled) {
		ev.code = CM_EVENT_TASK_CANCELLED;
	} else if (t->callback_code == CM_CALLBACK_WAIT) {
		if (cm_waitable_set_take(t->store, t->wait_set, &ev, err))
			return -1;
	}
	t->wait_set = NULL;
	if (at->needs_exclusive)
		t->inst->exclusive_thread = t;
	for (int i = 0; i < 3; i++)
		args[i].type = WASM_I32;
	args[0].u.i32 = ev.code;
	args[1].u.i32 = ev.p1;
	args[2].u.i32 = ev.p2;
	return cm_thread_call(t, at->func->opts.callback, args, 3,
			      callback_done, err);
}

static int callback_done(cm_thread *t, cabi_error *err)
{
	cm_task *at = t->task;
	wasm_val packed;
	uint32_t code, si;

	if (wasm_exec_results(t->exec, &packed, 1) != 1)
		return cabi_fail(err, CABI_ERR_TRAP, "callback without result");
	code = (uint32_t)packed.u.i32 & 0xf;
	si = (uint32_t)packed.u.i32 >> 4;
	if (code > CM_CALLBACK_WAIT)
		return cabi_fail(err, CABI_ERR_TRAP,
				 WASM_TRAP_PREFIX "unsupported callback code: "
						  "%u",
				 code);
	if (code == CM_CALLBACK_EXIT)
		return cm_thread_exit(t, err);
	if (t->inst->exclusive_thread == t)
		t->inst->exclusive_thread = NULL;
	t->callback_code = code;
	t->wait_set = NULL;
	if (code == CM_CALLBACK_WAIT) {
		cabi_elem *e = cabi_table_get_kind(&t->inst->handles, si,
						   CABI_ELEM_WAITABLE_SET, err);

		if (e == NULL) {
			char msg[sizeof err->msg];

			memcpy(msg, err->msg, sizeof msg);
			return cabi_fail(err, CABI_ERR_TRAP,
					 WASM_TRAP_PREFIX "%s", msg);
		}
		t->wait_set = e->u.obj;
		t->wait_set->num_waiting++;
	}
	t->wake = callback_wake;
	t->cancellable = true;
	if (at->state == CM_TASK_PENDING_CANCEL) {
		at->state = CM_TASK_CANCEL_DELIVERED;
		t->state = CM_THREAD_RUNNING;
		return callback_wake(t, true, err);
	}
	t->ready = callback_ready;
	t->state = CM_THREAD_WAITING;
	cm_sched_enqueue(t);
	return 0;
}

static int callback_first_done(cm_thread *t, cabi_error *err)
{
	return callback_done(t, err);
}

/* ---- the implicit thread ------------------------------------------------- */

static int implicit_start(cm_thread *t, bool cancelled, cabi_error *err)
{
	cm_task *at = t->task;
	cm_component_instance *inst = t->inst;
	cm_func *f = at->func;
	const cm_type *ft = f->type;
	uint32_t np = ft->u.func.nparams;
	wasm_val core_args[CM_MAX_FLAT_PARAMS + 1];
	cabi_core_out out = {core_args, 0, CM_MAX_FLAT_PARAMS + 1};
	cm_val *args;
	cabi_cx cx;
	int rc;

	if (t->gate_waiting) {
		t->gate_waiting = false;
		inst->num_waiting_to_enter--;
		if (cancelled) {
			/* CANCELLED_BEFORE_STARTED: no guest code ran */
			at->state = CM_TASK_RESOLVED;
			at->resolved_cancelled = true;
			rc = at->cbs.on_resolve(at->cbs.env, NULL, err);
			if (cm_thread_exit(t, err))
				return -1;
			return rc;
		}
	} else if (ft->u.func.async && (has_backpressure(inst, at) ||
					inst->num_waiting_to_enter > 0)) {
		inst->num_waiting_to_enter++;
		t->gate_waiting = true;
		t->wake = implicit_start;
		t->ready = gate_ready;
		t->cancellable = true;
		t->state = CM_THREAD_WAITING;
		cm_sched_enqueue(t);
		return 0;
	}
	/* a sync-typed task never takes the lock: it barges in (digest 3.3) */
	if (ft->u.func.async && at->needs_exclusive)
		inst->exclusive_thread = t;
	if (cm_thread_register(t, err))
		return -1;

	args = calloc(np ? np : 1, sizeof *args);
	if (args == NULL)
		return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
	if (cm_task_start(at, args, err)) {
		cm_vals_free(args, np);
		free(args);
		return -1;
	}
	task_cx(&cx, t);
	cx.exec = t->exec;
	{
		cm_task scratch,
			*outer = cm_fresh_thread_enter(t->store, &scratch);

		rc = cabi_lower_params(&cx, ft, CM_MAX_FLAT_PARAMS, args, &out);
		cm_fresh_thread_leave(t->store, outer);
	}
	cm_vals_free(args, np);
	free(args);
	if (rc) {
		rc = cx_fail(&cx, at, err);
		cabi_cx_release(&cx);
		return rc;
	}
	cabi_cx_release(&cx);
	if (at->sync_lift)
		return cm_thread_call(t, f->core, core_args, out.n,
				      sync_lift_done, err);
	if (at->stackful)
		return cm_thread_call(t, f->core, core_args, out.n,
				      stackful_done, err);
	return cm_thread_call(t, f->core, core_args, out.n, callback_first_done,
			      err);
}

/* ---- a sync-typed task that blocked (digest 3.6 step 3) ------------------ */

/*
 * The implicit thread t of a sync-typed task blocked before the task
 * resolved: instead of returning to the caller (a sync-typed call
 * returns only resolved), run the other ready threads of the task's
 * instance that may use the stack (cm_sched_pick_sync) until the task
 * resolves.  None left: the call can never finish, a trap.  The thread
 * stays pinned meanwhile, so no other picker resumes it under this
 * frame.  A thread out of fuel inside a service turn is not a block: a
 * call started by the host (cm_call_start) goes on next turn, a nested
 * sync call (its caller waits on the C stack) traps as before.
 */
static int sync_wait(cm_store *s, cm_thread *t, cm_task *const *ref,
		     cm_component_instance *caller, cabi_error *err)
{
	cm_component_instance *inst;
	int rc = 0;

	/* t may be gone already (its task resolved and it ended): test *ref */
	while (*ref != NULL && (*ref)->state != CM_TASK_RESOLVED) {
		cm_thread *r;

		if ((*ref)->implicit != t)
			break;
		inst = t->inst;
		if (s->in_turn && s->fuel == 0) {
			if (caller == NULL)
				break; /* the turns go on with it */
			cm_sched_dequeue(t);
			t->state = CM_THREAD_SUSPENDED;
			rc = cabi_fail(err, CABI_ERR_TRAP,
				       WASM_TRAP_PREFIX "all fuel consumed");
			break;
		}
		t->pinned = true;
		r = cm_sched_pick_sync(s, inst, *ref);
		if (r == NULL) {
			rc = cabi_fail(
				err, CABI_ERR_TRAP, "%s",
				cm_sched_has_ready(s)
					? WASM_TRAP_PREFIX CM_MSG_DEADLOCK
					: CM_MSG_SYNC_BLOCK);
			break;
		}
		if (cm_thread_resume(r, false, err)) {
			rc = -1;
			break;
		}
	}
	if (*ref != NULL && (*ref)->implicit == t)
		t->pinned = false;
	return rc;
}

int cm_canon_lift(cm_store *s, cm_func *f, cm_component_instance *caller,
		  cm_task *supertask, const cm_call_cbs *cbs, cm_task **out,
		  cabi_error *err)
{
	cm_component_instance *inst = f->inst;
	cm_task *at, *local = NULL;
	cm_thread *t;

	if (out != NULL)
		*out = NULL;
	if (cm_enter(inst, caller, s->cfg.reentrance_compat && !f->dtor, err)) {
		if (caller != NULL)
			cabi_fail(err, CABI_ERR_TRAP, WASM_TRAP_PREFIX "%s",
				  CM_MSG_CANNOT_ENTER);
		return -1;
	}
	at = cm_task_new(s);
	if (at == NULL) {
		cm_leave(inst, caller);
		return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
	}
	/*
	 * A supertask is the caller's task, made by this function; the
	 * zeroed scratch cm_task of cm_fresh_thread_enter (a realloc) never
	 * calls a lifted function, as it runs with may_leave cleared and
	 * both lowers refuse then.
	 */
	if (supertask != NULL) {
		at->root = supertask->root;
		at->call_tag = supertask->call_tag;
	} else if (s->next_root != 0) { /* a cm_call_start call's */
		at->root = s->next_root;
		at->call_tag = s->next_root_tag;
		s->next_root = s->next_root_tag = 0;
	} else {
		at->root = ++s->root_serial;
	}
	cm_task_init(at, f, inst, caller, supertask, cbs);
	at->sync_lift = !f->opts.async;
	at->stackful = f->opts.async && f->opts.callback == NULL;
	at->needs_exclusive = !f->opts.async || f->opts.callback != NULL;
	t = cm_thread_new(at, inst);
	if (t == NULL) {
		cm_task_free(at);
		cm_leave(inst, caller);
		return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
	}
	at->implicit = t;
	t->implicit = true;
	t->wake = implicit_start;
	if (out == NULL)
		out = &local;
	*out = at;
	at->ref = out;
	if (cm_thread_resume(t, false, err) ||
	    (!f->type->u.func.async && sync_wait(s, t, out, caller, err))) {
		if (out == &local && local != NULL)
			local->ref = NULL;
		cm_poison(inst, caller);
		return -1;
	}
	if (out == &local && local != NULL)
		local->ref = NULL;
	cm_leave(inst, caller);
	return 0;
}

/* ---- cancellation (definitions.py Task.request_cancellation) ------------- */

int cm_task_request_cancellation(cm_task *at, cabi_error *err)
{
	cm_thread *cand = NULL;

	if (at->state == CM_TASK_INITIAL) {
		cm_thread *t = at->implicit;

		if (t != NULL && t->gate_waiting) {
			at->state = CM_TASK_CANCEL_DELIVERED;
			return cm_thread_resume(t, true, err);
		}
	}
	if (at->state != CM_TASK_STARTED)
		return 0;
	for (cm_thread *t = at->threads; t != NULL; t = t->tnext) {
		if (!t->cancellable || (t->state != CM_THREAD_WAITING &&
					t->state != CM_THREAD_SUSPENDED))
			continue;
		if (t == at->implicit && at->needs_exclusive &&
		    t->inst->exclusive_thread != NULL &&
		    t->inst->exclusive_thread != t)
			continue;
		if (cand == NULL || t == at->implicit)
			cand = t;
	}
	if (cand == NULL || !at->inst->may_enter) {
		at->state = CM_TASK_PENDING_CANCEL;
		return 0;
	}
	at->state = CM_TASK_CANCEL_DELIVERED;
	return cm_thread_resume(cand, true, err);
}

/* ---- snapshots (run/snapshot.c) ---------------------------------------- */

cm_cont_fn cm_lift_cont(uint32_t code)
{
	switch (code) {
	case CM_CONT_WAKE_IMPLICIT_START:
		return (cm_cont_fn)implicit_start;
	case CM_CONT_WAKE_CALLBACK:
		return (cm_cont_fn)callback_wake;
	case CM_CONT_READY_GATE:
		return (cm_cont_fn)gate_ready;
	case CM_CONT_READY_CALLBACK:
		return (cm_cont_fn)callback_ready;
	case CM_CONT_DONE_SYNC_LIFT:
		return (cm_cont_fn)sync_lift_done;
	case CM_CONT_DONE_STACKFUL:
		return (cm_cont_fn)stackful_done;
	case CM_CONT_DONE_CALLBACK:
		return (cm_cont_fn)callback_done;
	case CM_CONT_DONE_CALLBACK_FIRST:
		return (cm_cont_fn)callback_first_done;
	default:
		return NULL;
	}
}
