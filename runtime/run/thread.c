/*
 * thread.c - Threads and the per-store scheduler (definitions.py Thread,
 * Store.tick; digest 3.4, 3.15, 4.1).
 *
 * Contract (sched.h): a thread runs only inside cm_thread_resume, which
 * calls its `wake` continuation; the continuation resumes or starts a
 * core call on the thread's exec and handles how it stopped.  A built-in
 * that blocks calls cm_thread_block and returns WASM_HOST_BLOCK; the exec
 * unwinds to cm_thread_after_exec, which returns: the thread is data on
 * the waiting list (or suspended) until a tick, a switch or a resume-later
 * picks it.  Picking: FIFO over the waiting list, or a seeded choice among
 * the ready threads.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_thread_new: a thread and its exec (its stack grows within
 *    max_stack_bytes); registered threads are at most max_threads (1,000)
 *    per instance ("handle table full (limit N)"); threads of tasks still
 *    waiting at a gate are bounded by their callers' subtasks
 *    (max_handles) and blocked threads; finished threads' execs are
 *    cached, 8 at most.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "run/rt.h"
#include "run/sched.h"
#include "run/stream.h"


cm_thread *cm_sched_current(cm_store *s)
{
	cm_thread *t = s->current_thread;

	/* the ABI's own guest calls (realloc) run under a scratch task */
	if (t != NULL && t->task != NULL && t->task == s->current)
		return t;
	return NULL;
}

void cm_sched_enqueue(cm_thread *t)
{
	cm_store *s = t->store;

	if (t->queued)
		return;
	t->queued = true;
	t->wnext = NULL;
	t->wprev = s->wlast;
	if (s->wlast != NULL)
		s->wlast->wnext = t;
	else
		s->wfirst = t;
	s->wlast = t;
	if (s->cfg.request_service != NULL && !s->service_requested) {
		s->service_requested = true;
		s->cfg.request_service(s->cfg.service_env);
	}
}

void cm_sched_dequeue(cm_thread *t)
{
	cm_store *s = t->store;

	if (!t->queued)
		return;
	if (t->wprev != NULL)
		t->wprev->wnext = t->wnext;
	else
		s->wfirst = t->wnext;
	if (t->wnext != NULL)
		t->wnext->wprev = t->wprev;
	else
		s->wlast = t->wprev;
	t->wprev = t->wnext = NULL;
	t->queued = false;
}

static bool thread_ready(cm_thread *t)
{
	return t->state == CM_THREAD_WAITING &&
	       (t->ready == NULL || t->ready(t));
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Gate waiters of one instance are admitted in arrival order whatever
 * the seed (a queue at the entry gate is a legal policy, and
 * async-calls-sync.wast depends on it, digest D5).
 */
static bool gate_turn(cm_thread *t)
{
	if (!t->gate_waiting)
		return true;
	for (cm_thread *u = t->store->wfirst; u != t; u = u->wnext)
		if (u->gate_waiting && u->inst == t->inst)
			return false;
	return true;
}

/*
 * A pinned thread (the implicit thread of a sync-typed task whose
 * sync_wait frame is on the C stack) is resumed only by that frame.
 */
static bool candidate(cm_thread *t, struct cm_component_instance *inst,
		      const cm_task *skip)
{
	return !t->pinned && (inst == NULL || t->inst == inst) &&
	       (skip == NULL || t->task == NULL || t->task != skip) &&
	       thread_ready(t) && gate_turn(t);
}

cm_thread *cm_sched_pick_other(cm_store *s, struct cm_component_instance *inst,
			       const cm_task *skip)
{
	uint32_t n = 0, k;

	/* A thread stopped mid-code by the fuel goes on first (sched.h). */
	if (s->fuel_parked != 0)
		for (cm_thread *t = s->wfirst; t != NULL; t = t->wnext)
			if (t->fuel_parked && candidate(t, inst, skip))
				return t;

	for (cm_thread *t = s->wfirst; t != NULL; t = t->wnext)
		if (candidate(t, inst, skip)) {
			if (s->cfg.sched_seed == 0)
				return t;
			n++;
		}
	if (n == 0)
		return NULL;
	k = (uint32_t)(xorshift(&s->rng) % n);
	for (cm_thread *t = s->wfirst; t != NULL; t = t->wnext)
		if (candidate(t, inst, skip) && k-- == 0)
			return t;
	return NULL;
}

cm_thread *cm_sched_pick(cm_store *s, struct cm_component_instance *inst)
{
	return cm_sched_pick_other(s, inst, NULL);
}

/*
 * Digest 3.6 step 3 with the refinement of
 * during-sync-call-no-exclusive-resume.wast: a thread registered in inst
 * (so never a gate waiter), ready, not the lock holder, and not the
 * implicit thread of another task that needs exclusive use of the stack
 * (a callback task parked in its event loop, another sync-typed task).
 * The blocked task's own implicit thread is one once ready.
 */
static bool sync_candidate(cm_thread *t, struct cm_component_instance *inst,
			   const cm_task *self)
{
	if (t->inst != inst || t->index == 0 || !thread_ready(t) ||
	    !gate_turn(t) || t == inst->exclusive_thread)
		return false;
	if (t->task == self)
		return true;
	return !t->pinned &&
	       !(t->implicit && t->task != NULL && t->task->needs_exclusive);
}

cm_thread *cm_sched_pick_sync(cm_store *s, struct cm_component_instance *inst,
			      const cm_task *self)
{
	uint32_t n = 0, k;

	for (cm_thread *t = s->wfirst; t != NULL; t = t->wnext)
		if (sync_candidate(t, inst, self)) {
			if (s->cfg.sched_seed == 0)
				return t;
			n++;
		}
	if (n == 0)
		return NULL;
	k = (uint32_t)(xorshift(&s->rng) % n);
	for (cm_thread *t = s->wfirst; t != NULL; t = t->wnext)
		if (sync_candidate(t, inst, self) && k-- == 0)
			return t;
	return NULL;
}

bool cm_thread_may_block(cm_thread *t)
{
	const cm_task *at;

	if (t == NULL)
		return false; /* a start function, or the ABI's own calls */
	at = t->task;
	if (at == NULL || at->func->type->u.func.async ||
	    at->state == CM_TASK_RESOLVED)
		return true;
	/*
	 * A sync-typed task that has not returned: only while some other
	 * thread of the store is ready (during-sync-call-*.wast; with
	 * nothing ready at all the suite expects the eager trap, with only
	 * threads it may not run, the deadlock trap of sync_wait).
	 */
	for (cm_thread *u = t->store->wfirst; u != NULL; u = u->wnext)
		if (u != t && thread_ready(u) && gate_turn(u))
			return true;
	return false;
}

/* Store teardown: the thread never finished; its exec goes with it. */
static void thread_dispose(cm_store_obj *o)
{
	cm_thread *t = (cm_thread *)((char *)o - offsetof(cm_thread, obj));

	wasm_exec_free(t->exec);
	free(t);
}

cm_thread *cm_thread_new(cm_task *task, struct cm_component_instance *inst)
{
	cm_store *s = inst->store;
	cm_thread *t = calloc(1, sizeof *t);
	wasm_exec_config cfg;

	if (t == NULL)
		return NULL;
	cfg.max_stack_bytes = s->cfg.max_stack_bytes;
	cfg.max_call_depth = s->cfg.max_call_depth;
	/* every lifted call has a thread: reuse a finished thread's exec */
	if (s->nthread_execs > 0)
		t->exec = s->thread_execs[--s->nthread_execs];
	else
		t->exec = wasm_exec_new(s->wasm, &cfg);
	if (t->exec == NULL) {
		free(t);
		return NULL;
	}
	cm_store_track(s, &t->obj, thread_dispose);
	t->store = s;
	t->task = task;
	t->inst = inst;
	t->state = CM_THREAD_SUSPENDED;
	if (task != NULL) {
		t->tnext = task->threads;
		task->threads = t;
		task->nthreads++;
	}
	return t;
}

int cm_thread_register(cm_thread *t, cabi_error *err)
{
	cabi_elem e;

	memset(&e, 0, sizeof e);
	e.kind = CABI_ELEM_THREAD;
	e.u.obj = t;
	return cabi_table_add(&t->inst->threads, &e, &t->index, err);
}

static void task_maybe_free(cm_task *at)
{
	if (at->state != CM_TASK_RESOLVED || at->nthreads > 0)
		return;
	if (at->ref != NULL)
		*at->ref = NULL;
	cm_task_free(at);
}

int cm_thread_exit(cm_thread *t, cabi_error *err)
{
	cm_task *at = t->task;
	int rc = 0;

	if (t->inst->exclusive_thread == t)
		t->inst->exclusive_thread = NULL;
	if (t->index != 0) {
		cabi_table_remove(&t->inst->threads, t->index, NULL, NULL);
		t->index = 0;
	}
	t->state = CM_THREAD_DONE;
	cm_sched_dequeue(t);
	if (at != NULL && at->implicit == t)
		at->implicit = NULL;
	if (at != NULL) {
		for (cm_thread **p = &at->threads; *p != NULL; p = &(*p)->tnext)
			if (*p == t) {
				*p = t->tnext;
				break;
			}
		at->nthreads--;
		if (at->nthreads == 0 && at->state != CM_TASK_RESOLVED)
			rc = cabi_fail(err, CABI_ERR_TRAP,
				       WASM_TRAP_PREFIX
				       "async-lifted export failed to produce "
				       "a result");
		t->task = NULL;
		if (rc == 0)
			task_maybe_free(at);
	}
	return rc;
}

static void thread_free(cm_thread *t)
{
	cm_store *s = t->store;

	cm_store_untrack(&t->obj);
	if (!t->exec_busy &&
	    s->nthread_execs < sizeof s->thread_execs / sizeof *s->thread_execs)
		s->thread_execs[s->nthread_execs++] = t->exec;
	else
		wasm_exec_free(t->exec);
	free(t);
}

int cm_exec_fail(wasm_exec *e, wasm_exec_status st, cabi_error *err)
{
	wasm_trap_kind k;

	switch (st) {
	case WASM_EXEC_EXCEPTION:
		return cabi_fail(err, CABI_ERR_TRAP,
				 WASM_TRAP_PREFIX CABI_MSG_UNCAUGHT_EXCEPTION);
	case WASM_EXEC_OUT_OF_FUEL:
		return cabi_fail(err, CABI_ERR_TRAP,
				 WASM_TRAP_PREFIX "all fuel consumed");
	default:
		break;
	}
	k = wasm_exec_trap(e);
	if (k == WASM_TRAP_HOST)
		return cabi_fail(err, CABI_ERR_TRAP, "%s",
				 wasm_exec_trap_message(e));
	err->trap = k;
	if (k == WASM_TRAP_UNREACHABLE)
		return cabi_fail(err, CABI_ERR_TRAP,
				 WASM_TRAP_PREFIX "wasm `unreachable` "
						  "instruction executed");
	return cabi_fail(err, CABI_ERR_TRAP, WASM_TRAP_PREFIX "%s",
			 wasm_exec_trap_message(e));
}

int cm_thread_after_exec(cm_thread *t, wasm_exec_status st, cabi_error *err)
{
	cm_store *s = t->store;

	if (s->fuel != UINT64_MAX)
		s->fuel = wasm_exec_fuel(t->exec);
	t->exec_busy = st == WASM_EXEC_BLOCKED || st == WASM_EXEC_OUT_OF_FUEL;
	switch (st) {
	case WASM_EXEC_BLOCKED:
		return 0; /* the built-in recorded how to wake it */
	case WASM_EXEC_DONE:
		return t->on_done(t, err);
	case WASM_EXEC_OUT_OF_FUEL:
		if (s->in_turn) /* bounded turn: continue it next turn */
			return cm_thread_out_of_fuel(t);
		return cm_exec_fail(t->exec, st, err);
	default:
		return cm_exec_fail(t->exec, st, err);
	}
}

int cm_thread_call(cm_thread *t, wasm_func *f, const wasm_val *args,
		   uint32_t nargs, cm_thread_done_fn on_done, cabi_error *err)
{
	wasm_exec_status st;

	t->on_done = on_done;
	wasm_exec_set_fuel(t->exec, t->store->fuel);
	st = wasm_exec_call(t->exec, f, args, nargs);
	return cm_thread_after_exec(t, st, err);
}

/* Resume the blocked built-in with the results `complete` computes. */
static int wake_exec(cm_thread *t, bool cancelled, cabi_error *err)
{
	wasm_exec_status st;
	cabi_error ce;

	t->nres = 0;
	memset(&ce, 0, sizeof ce);
	wasm_exec_set_fuel(t->exec, t->store->fuel);
	if (t->complete != NULL && t->complete(t, cancelled, &ce))
		st = wasm_exec_resume_trap(t->exec, ce.msg);
	else
		st = wasm_exec_resume(t->exec, t->res, t->nres);
	return cm_thread_after_exec(t, st, err);
}

wasm_host_status cm_thread_block(cm_thread *t, bool waiting,
				 bool (*ready)(cm_thread *),
				 cm_thread_complete_fn complete,
				 bool cancellable)
{
	cm_task *at = t->task;

	t->wake = wake_exec;
	t->complete = complete;
	t->ready = ready;
	t->cancellable = cancellable;
	if (cancellable && at != NULL && at->state == CM_TASK_PENDING_CANCEL) {
		/* deliver the pending cancellation without blocking */
		cabi_error ce;

		at->state = CM_TASK_CANCEL_DELIVERED;
		t->nres = 0;
		memset(&ce, 0, sizeof ce);
		if (complete != NULL && complete(t, true, &ce)) {
			wasm_exec_set_host_trap(t->exec, ce.msg);
			return WASM_HOST_TRAP;
		}
		return WASM_HOST_OK;
	}
	if (waiting) {
		t->state = CM_THREAD_WAITING;
		cm_sched_enqueue(t);
	} else {
		t->state = CM_THREAD_SUSPENDED;
	}
	return WASM_HOST_BLOCK;
}

/* Continue a thread a bounded turn stopped out of fuel. */
static int wake_continue(cm_thread *t, bool cancelled, cabi_error *err)
{
	(void)cancelled;
	t->fuel_parked = false;
	t->store->fuel_parked--;
	wasm_exec_set_fuel(t->exec, t->store->fuel);
	return cm_thread_after_exec(t, wasm_exec_continue(t->exec), err);
}

int cm_thread_out_of_fuel(cm_thread *t)
{
	/* nothing to wait for: ready as soon as a turn has fuel again */
	t->wake = wake_continue;
	t->ready = NULL;
	t->state = CM_THREAD_WAITING;
	t->fuel_parked = true;
	t->store->fuel_parked++;
	cm_sched_enqueue(t);
	return 0;
}

int cm_thread_resume(cm_thread *t, bool cancelled, cabi_error *err)
{
	cm_store *s = t->store;
	cm_thread *prev_thread = s->current_thread;
	cm_task *prev_task = s->current;
	int rc = 0;

	while (t != NULL) {
		cm_thread *next;

		cm_sched_dequeue(t);
		t->state = CM_THREAD_RUNNING;
		s->current_thread = t;
		s->current = t->task != NULL ? t->task : NULL;
		rc = t->wake(t, cancelled, err);
		next = t->switch_to;
		t->switch_to = NULL;
		if (t->state == CM_THREAD_DONE)
			thread_free(t);
		else if (t->state == CM_THREAD_RUNNING && rc == 0)
			t->state = CM_THREAD_SUSPENDED;
		if (rc)
			break;
		t = next;
		cancelled = false;
	}
	s->current_thread = prev_thread;
	s->current = prev_task;
	return rc;
}

int cm_sched_drive(cm_store *s, const bool *done, cabi_error *err)
{
	while (!*done) {
		cm_thread *t;
		cm_component_instance *inst;

		cm_host_ends_run_deferred(s);
		if (cm_host_pending_deliver(s, err))
			return -1;
		t = cm_sched_pick(s, NULL);
		if (t == NULL && s->pending_host_calls > 0 &&
		    s->cfg.wait_host != NULL &&
		    s->cfg.wait_host(s->cfg.wait_env) == 0)
			continue; /* the embedder settled a host call */
		if (t == NULL)
			return cabi_fail(err, CABI_ERR_TRAP,
					 "wasm trap: " CM_MSG_DEADLOCK);
		inst = t->inst;
		if (cm_thread_resume(t, false, err)) {
			cm_poison(inst, NULL);
			return -1;
		}
	}
	return 0;
}

bool cm_sched_has_ready(cm_store *s)
{
	for (cm_thread *t = s->wfirst; t != NULL; t = t->wnext)
		if (candidate(t, NULL, NULL))
			return true;
	return false;
}

int cm_store_service_turn(cm_store *s, uint64_t fuel, cm_error *err)
{
	uint64_t saved_fuel = s->fuel;
	bool saved_turn = s->in_turn;
	cabi_error ce;
	int rc = 0;

	if (err != NULL)
		memset(err, 0, sizeof *err);
	memset(&ce, 0, sizeof ce);
	if (fuel == 0)
		fuel = s->cfg.turn_fuel;
	if (s->calls != NULL)
		fuel = cm_calls_turn_fuel(s, fuel);
	s->fuel = fuel != 0 ? fuel : UINT64_MAX;
	s->in_turn = true;
	/* requests made during the turn coalesce into the check below */
	s->service_requested = true;
	for (;;) {
		cm_component_instance *inst;
		cm_thread *t;

		cm_host_ends_run_deferred(s);
		if (cm_host_pending_deliver(s, &ce)) {
			rc = -1;
			break;
		}
		if (s->fuel == 0)
			break;
		t = cm_sched_pick(s, NULL);
		if (t == NULL)
			break;
		inst = t->inst;
		{
			struct cm_call *owner = cm_calls_owner(s, t);
			uint64_t before = s->fuel;
			int r = cm_thread_resume(t, false, &ce);

			if (before != UINT64_MAX)
				s->fuel_used += before - s->fuel;
			if (owner != NULL)
				cm_calls_charge(owner, before - s->fuel);
			if (r) {
				cm_poison(inst, NULL);
				rc = -1;
				break;
			}
		}
	}
	s->in_turn = saved_turn;
	s->fuel = saved_fuel;
	if (s->calls != NULL) { /* decide them now the guest code stopped */
		cabi_error oe;

		memset(&oe, 0, sizeof oe);
		if (cm_calls_after_turn(s, rc < 0 ? &ce : NULL, &oe) &&
		    rc >= 0) {
			ce = oe;
			rc = -1;
		}
	}
	s->service_requested = false;
	if (s->settled_first != NULL || s->deferred_first != NULL ||
	    cm_sched_has_ready(s)) {
		if (s->cfg.request_service != NULL) {
			s->service_requested = true;
			s->cfg.request_service(s->cfg.service_env);
		}
		if (rc == 0)
			rc = 1;
	}
	if (rc < 0)
		cm_error_from_cabi(err, &ce);
	return rc;
}

/* ---- snapshots (run/snapshot.c) ---------------------------------------- */

bool cm_obj_is_thread(const cm_store_obj *o)
{
	return o->dispose == thread_dispose;
}

cm_cont_fn cm_thread_cont(uint32_t code)
{
	switch (code) {
	case CM_CONT_WAKE_EXEC:
		return (cm_cont_fn)wake_exec;
	case CM_CONT_WAKE_CONTINUE:
		return (cm_cont_fn)wake_continue;
	default:
		return NULL;
	}
}
