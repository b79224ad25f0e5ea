/*
 * invoke.c - the host calling an export.
 *
 * Store.invoke (cm_invoke, instance.h): the arguments are type-checked,
 * then the function is called as a component would call it (cm_func_call;
 * a sync-typed lift or a host function returns resolved).  For an async
 * lift or an async-typed export the host then drives the store's
 * scheduler until the call has resolved (digest 3.15 "test-harness
 * driver": no draining of other work after the resolution; nothing ready
 * and the call unresolved is the deadlock trap).  Results are moved to
 * the caller, who owns them.  A trap poisons the callee's entering set
 * (canon_lift.c; for a driven call, its instance again here).
 *
 * Calls that run in service turns (cm_call_start, instance.h): the call
 * is begun by a task-less "starter" thread queued ready, so it begins
 * inside a turn like any other guest work; the export (sync-typed too)
 * is lifted with cm_canon_lift, so its implicit thread is a real
 * cm_thread a turn can park when the fuel runs out.  The store's service
 * turn asks this file for the turn's fuel (cm_calls_turn_fuel: never
 * more than a call in flight has left) and hands back what the turn
 * spent and whether it trapped (cm_calls_after_turn), which decides the
 * calls and runs their on_done after the guest code has stopped.
 *
 * Calls a snapshot's restore adopts (cm_call_adopt, run/snapshot.h):
 * the host's calls in flight at the image come back as calls here, with
 * what was left of their budgets and no on_done until the embedder sets
 * one (cm_call_set_done); one no one waits for that ends trapped by its
 * budget or the deadlock is the turn's trap (cm_calls_after_turn).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_call_start: the call and copies of the arguments the embedder
 *    hands in (bounded by what it handed in; hosteld bounds concurrent
 *    calls, limits.maxConcurrentCalls).
 *  - call_on_resolve: the results wait for the turn's end and on_done;
 *    they keep the charge of the cx that lifted them (store.h
 *    `returning`) until call_deliver, so waiting results of every call
 *    share limits.hostBytes.
 *  - cm_invoke (invoke_on_start): copies of the embedder's
 *    arguments; results go straight to the embedder, one call at a
 *    time (each lifted within the budget).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "run/instance.h"
#include "run/rt.h"
#include "run/sched.h"
#include "run/snapshot.h"
#include "run/stream.h"

typedef struct invoke_env {
	const cm_val *args;
	uint32_t nargs;
	cm_val *results;
	uint32_t nresults;
	bool done, cancelled;
} invoke_env;

static int invoke_on_start(void *env, cm_val *args, cabi_error *err)
{
	invoke_env *ie = env;

	for (uint32_t i = 0; i < ie->nargs; i++)
		if (cm_val_copy(&args[i], &ie->args[i]))
			return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
	return 0;
}

static int invoke_on_resolve(void *env, cm_val *result, cabi_error *err)
{
	invoke_env *ie = env;

	ie->done = true;
	if (result == NULL) {
		ie->cancelled = true;
		return 0;
	}
	for (uint32_t i = 0; i < ie->nresults; i++) {
		ie->results[i] = result[i];
		memset(&result[i], 0, sizeof result[i]);
		result[i].kind = CM_BOOL;
	}
	return 0;
}

/* What a task whose call has gone calls instead (its caller frees). */
static int detached_on_start(void *env, cm_val *args, cabi_error *err)
{
	(void)env;
	(void)args;
	return cabi_fail(err, CABI_ERR_TRAP, "call cancelled");
}

static int detached_on_resolve(void *env, cm_val *result, cabi_error *err)
{
	(void)env;
	(void)result;
	(void)err;
	return 0;
}

/* The embedder's arguments against function type ft: a VALUE error. */
static int check_args(const cm_type *ft, const cm_val *args, uint32_t nargs,
		      cm_error *err)
{
	char why[128];

	if (nargs != ft->u.func.nparams)
		return cm_error_set(err, CM_ERR_VALUE,
				    "expected %u arguments, got %u",
				    ft->u.func.nparams, nargs);
	for (uint32_t i = 0; i < nargs; i++)
		if (!cm_val_typecheck(&args[i], ft->u.func.params[i].type, why,
				      sizeof why))
			return cm_error_set(
				err, CM_ERR_VALUE, "argument %u (`%s`): %s",
				i + 1, ft->u.func.params[i].label.ptr, why);
	return 0;
}

int cm_invoke(cm_store *s, cm_func *f, const cm_val *args, uint32_t nargs,
	      cm_val *results, uint32_t *nresults, cm_error *err)
{
	const cm_type *ft = f->type;
	uint32_t nres = ft->u.func.result != NULL;
	invoke_env ie = {args, nargs, results, nres, false, false};
	cm_call_cbs cbs = {invoke_on_start, invoke_on_resolve, &ie};
	bool drive = cm_func_is_async(f);
	cm_task *task = NULL;
	cabi_error ce;
	int rc;

	if (err != NULL)
		memset(err, 0, sizeof *err);
	*nresults = 0;
	if (check_args(ft, args, nargs, err))
		return -1;
	for (uint32_t i = 0; i < nres; i++) {
		memset(&results[i], 0, sizeof results[i]);
		results[i].kind = CM_BOOL;
	}
	memset(&ce, 0, sizeof ce);
	if (drive) { /* drive the store until the call resolves */
		rc = cm_canon_lift(s, f, NULL, NULL, &cbs, &task, &ce);
		if (rc == 0)
			rc = cm_sched_drive(s, &ie.done, &ce);
		/* A task that outlives the drive (it failed: the thread
		 * never entered, or blocked for good) must not call back
		 * into ie, which dies with this frame. */
		if (task != NULL) {
			task->ref = NULL;
			if (!ie.done) {
				task->cbs.on_start = detached_on_start;
				task->cbs.on_resolve = detached_on_resolve;
				task->cbs.env = NULL;
			}
		}
	} else { /* a sync-typed lift or a host function: resolved on return */
		rc = cm_func_call(s, f, NULL, NULL, &cbs, &ce);
	}
	if (rc == 0 && ie.cancelled)
		rc = cabi_fail(&ce, CABI_ERR_TRAP, "call cancelled");
	if (rc) {
		/* results not moved in yet are still zeroed: nothing to free */
		cm_vals_free(results, nres);
		if (drive)
			cm_poison(f->inst, NULL);
		return cm_error_from_cabi(err, &ce);
	}
	*nresults = nres;
	return 0;
}

/* ---- calls that run in service turns (instance.h cm_call_start) ------- */

typedef enum call_state {
	CALL_QUEUED = 0, /* its starter thread has not run yet */
	CALL_RUNNING,	 /* guest code began */
	CALL_DONE,	 /* outcome decided; on_done pending or running */
} call_state;

struct cm_call {
	cm_store_obj obj; /* tracked: freed with the store if still here */
	cm_store *store;
	cm_func *func;
	cm_val *args; /* copies, until on_start hands them over */
	uint32_t nargs;
	cm_val results[1];
	uint32_t nresults;
	/* the results' charge to the store's budget, kept until on_done
	 * has had them (store.h returning) */
	uint64_t charge;
	call_state state;
	bool resolved;	    /* on_resolve ran (results, or cancelled) */
	bool cancelled;	    /* resolved as cancelled */
	bool failed;	    /* it trapped when it began: err */
	bool restored;	    /* adopted from a snapshot (cm_call_adopt) */
	uint64_t fuel;	    /* left; UINT64_MAX: unlimited */
	uint64_t turn_used; /* charged by this turn's threads (cm_calls_charge)
			     */
	cm_thread *starter;
	cm_task *task; /* while the task lives (its ref points here) */
	cm_call_outcome outcome;
	cm_error err;
	cm_call_done_fn on_done;
	void *ctx;
	uint64_t tag;  /* cm_call_set_tag */
	uint64_t root; /* its root task's serial (sched.h cm_task.root) */
	cm_call *prev, *next; /* s->calls, until decided */
};

static void call_free_mem(cm_call *c)
{
	cm_vals_free(c->args, c->nargs);
	free(c->args);
	if (c->resolved && !c->cancelled)
		cm_vals_free(c->results, c->nresults);
	free(c);
}

/* Store teardown: never follows pointers to other tracked objects. */
static void call_dispose(cm_store_obj *o)
{
	cm_call *c = (cm_call *)((char *)o - offsetof(cm_call, obj));

	call_free_mem(c);
}

static void call_unlink(cm_call *c)
{
	cm_store *s = c->store;

	if (c->prev != NULL)
		c->prev->next = c->next;
	else if (s->calls == c)
		s->calls = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
}

static int call_on_start(void *env, cm_val *args, cabi_error *err)
{
	cm_call *c = env;

	/* move: the callee owns them from here */
	for (uint32_t i = 0; i < c->nargs; i++) {
		args[i] = c->args[i];
		memset(&c->args[i], 0, sizeof c->args[i]);
		c->args[i].kind = CM_BOOL;
	}
	(void)err;
	return 0;
}

static int call_on_resolve(void *env, cm_val *result, cabi_error *err)
{
	cm_call *c = env;

	(void)err;
	c->resolved = true;
	if (result == NULL) {
		c->cancelled = true;
		return 0;
	}
	/*
	 * The results wait here for the turn's end and the embedder: they
	 * keep their charge meanwhile, else calls resolving in one turn
	 * could hold many times max_host_bytes between them.
	 */
	if (c->store->returning != NULL)
		c->charge = cabi_cx_keep(c->store->returning);
	for (uint32_t i = 0; i < c->nresults; i++) {
		c->results[i] = result[i];
		memset(&result[i], 0, sizeof result[i]);
		result[i].kind = CM_BOOL;
	}
	return 0;
}

/* The call stops caring about its task (which may live on). */
static void call_detach(cm_call *c)
{
	if (c->task != NULL) {
		c->task->ref = NULL;
		c->task->cbs.on_start = detached_on_start;
		c->task->cbs.on_resolve = detached_on_resolve;
		c->task->cbs.env = NULL;
		c->task = NULL;
	}
	if (c->starter != NULL) {
		c->starter->wait_obj = NULL; /* it just exits */
		c->starter = NULL;
	}
}

static int starter_wake(cm_thread *t, bool cancelled, cabi_error *err);

static cm_component_instance *root_of(cm_component_instance *i)
{
	while (i->parent != NULL)
		i = i->parent;
	return i;
}

/*
 * A trap ended a call: its instance tree is poisoned and no thread of
 * it runs again (they stay the store's until it is freed).
 */
static void halt_tree(cm_store *s, cm_component_instance *inst)
{
	cm_component_instance *root = root_of(inst);
	cm_thread *t = s->wfirst;

	cm_poison(inst, NULL);
	while (t != NULL) {
		cm_thread *next = t->wnext;

		/* a starter only begins its call, which then fails */
		if (t->inst != NULL && root_of(t->inst) == root &&
		    t->wake != starter_wake) {
			cm_sched_dequeue(t);
			t->state = CM_THREAD_SUSPENDED;
			t->ready = NULL;
		}
		t = next;
	}
}

/* Decide c's outcome; on_done comes later (deliver). */
static void call_decide(cm_call *c, cm_call_outcome outcome, cm_error_kind kind,
			const char *msg)
{
	c->outcome = outcome;
	if (msg != NULL)
		cm_error_set(&c->err, kind, "%s", msg);
	c->state = CALL_DONE;
	call_unlink(c);
	call_detach(c);
}

static void call_deliver(cm_call *c)
{
	cm_store_untrack(&c->obj);
	if (c->on_done != NULL)
		c->on_done(c->ctx, c->outcome, c->results,
			   c->outcome == CM_CALL_RETURNED ? c->nresults : 0,
			   &c->err);
	cabi_budget_release(&c->store->host_bytes, c->charge);
	call_free_mem(c);
}

/* The starter: the call begins here, inside a service turn. */
static int starter_wake(cm_thread *t, bool cancelled, cabi_error *err)
{
	cm_call *c = t->wait_obj;
	cm_store *s = t->store;
	cm_call_cbs cbs = {call_on_start, call_on_resolve, c};
	cabi_error ce;
	int rc;

	(void)cancelled;
	if (c == NULL) /* cancelled before it began */
		return cm_thread_exit(t, err);
	c->starter = NULL;
	t->wait_obj = NULL;
	c->state = CALL_RUNNING;
	memset(&ce, 0, sizeof ce);
	c->root = ++s->root_serial;
	s->next_root = c->root;
	s->next_root_tag = c->tag;
	rc = cm_canon_lift(s, c->func, NULL, NULL, &cbs, &c->task, &ce);
	s->next_root = s->next_root_tag = 0;
	if (rc && c->resolved) {
		/*
		 * It returned (task.return), then its task trapped in the
		 * same run: the result stands, and the trap is the turn's,
		 * as background work's is (cm_store_service_turn poisons
		 * and reports it).  Reported as the call's, after_turn
		 * decided the call returned and the trap was lost.
		 */
		rc = cm_thread_exit(t, err);
		if (rc == 0) {
			*err = ce;
			rc = -1;
		}
		return rc;
	}
	if (rc) {
		/* the turn goes on; the call reports its own trap */
		c->failed = true;
		cm_error_from_cabi(&c->err, &ce);
		if (c->err.kind == CM_ERR_NONE)
			c->err.kind = CM_ERR_TRAP;
	}
	return cm_thread_exit(t, err);
}

int cm_call_start(cm_store *s, cm_func *f, const cm_val *args, uint32_t nargs,
		  uint64_t fuel, cm_call_done_fn on_done, void *ctx,
		  cm_call **out, cm_error *err)
{
	const cm_type *ft = f->type;
	cm_call *c;

	if (err != NULL)
		memset(err, 0, sizeof *err);
	if (out != NULL)
		*out = NULL;
	if (f->kind != CM_FUNC_LIFTED || f->inst == NULL)
		return cm_error_set(err, CM_ERR_UNSUPPORTED,
				    "not a lifted function");
	if (check_args(ft, args, nargs, err))
		return -1;
	c = calloc(1, sizeof *c);
	if (c == NULL)
		return cm_error_set(err, CM_ERR_NOMEM, "out of memory");
	c->store = s;
	c->func = f;
	c->nresults = ft->u.func.result != NULL;
	c->fuel = fuel != 0 ? fuel : UINT64_MAX;
	c->on_done = on_done;
	c->ctx = ctx;
	c->results[0].kind = CM_BOOL;
	c->args = calloc(nargs ? nargs : 1, sizeof *c->args);
	if (c->args == NULL) {
		free(c);
		return cm_error_set(err, CM_ERR_NOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < nargs; i++) {
		if (cm_val_copy(&c->args[i], &args[i])) {
			c->nargs = i;
			call_free_mem(c);
			return cm_error_set(err, CM_ERR_NOMEM, "out of memory");
		}
	}
	c->nargs = nargs;
	/* a task-less thread that begins the call in a turn */
	c->starter = cm_thread_new(NULL, f->inst);
	if (c->starter == NULL) {
		call_free_mem(c);
		return cm_error_set(err, CM_ERR_NOMEM, "out of memory");
	}
	cm_store_track(s, &c->obj, call_dispose);
	c->next = s->calls;
	if (s->calls != NULL)
		s->calls->prev = c;
	s->calls = c;
	c->starter->wait_obj = c;
	c->starter->wake = starter_wake;
	c->starter->ready = NULL;
	c->starter->state = CM_THREAD_WAITING;
	cm_sched_enqueue(c->starter); /* requests service */
	if (out != NULL)
		*out = c;
	return 0;
}

bool cm_obj_is_call(const cm_store_obj *o)
{
	return o->dispose == call_dispose;
}

bool cm_thread_is_call_starter(const cm_thread *t)
{
	return t->wake == starter_wake;
}

bool cm_task_caller_is_call(const cm_task *at)
{
	return at->cbs.on_start == call_on_start;
}

bool cm_call_started(const cm_call *c)
{
	return c->state != CALL_QUEUED;
}

uint64_t cm_task_call_budget(const cm_task *at)
{
	const cm_call *c = at->cbs.env;

	return cm_task_caller_is_call(at) && c != NULL ? c->fuel : UINT64_MAX;
}

int cm_call_adopt(cm_store *s, cm_task *at, uint64_t fuel)
{
	cm_call *c = calloc(1, sizeof *c);

	if (c == NULL)
		return -1;
	c->store = s;
	c->func = at->func;
	c->nresults = at->func->type->u.func.result != NULL;
	c->fuel = fuel;
	c->results[0].kind = CM_BOOL;
	c->state = CALL_RUNNING;
	c->restored = true;
	c->task = at;
	c->root = at->root;
	at->cbs.on_start = call_on_start;
	at->cbs.on_resolve = call_on_resolve;
	at->cbs.env = c;
	at->ref = &c->task;
	cm_store_track(s, &c->obj, call_dispose);
	c->next = s->calls;
	if (s->calls != NULL)
		s->calls->prev = c;
	s->calls = c;
	return 0;
}

uint32_t cm_store_restored_calls(const cm_store *s)
{
	uint32_t n = 0;

	for (const cm_call *c = s->calls; c != NULL; c = c->next)
		n += c->restored;
	return n;
}

cm_call *cm_store_restored_call(cm_store *s, uint32_t k)
{
	for (cm_call *c = s->calls; c != NULL; c = c->next)
		if (c->restored && k-- == 0)
			return c;
	return NULL;
}

void cm_call_set_done(cm_call *c, cm_call_done_fn on_done, void *ctx)
{
	c->on_done = on_done;
	c->ctx = ctx;
}

/*
 * A task still parked at its instance's entry gate has run no guest
 * code: the spec's cancellation (CANCELLED_BEFORE_STARTED) ends it
 * without running any, so the store stays as it was.
 */
static bool cancel_at_gate(cm_call *c)
{
	cm_task *at = c->task;
	cabi_error ce;

	if (at == NULL || at->state != CM_TASK_INITIAL ||
	    at->implicit == NULL || !at->implicit->gate_waiting)
		return false;
	memset(&ce, 0, sizeof ce);
	return cm_task_request_cancellation(at, &ce) == 0 && c->resolved &&
	       c->cancelled;
}

/* Decide c if that stops no guest code midway; false if it is under way. */
static bool decide_clean(cm_call *c, const char *reason)
{
	if (c->state == CALL_QUEUED || cancel_at_gate(c))
		call_decide(c, CM_CALL_CANCELLED, CM_ERR_TRAP, reason);
	else if (c->resolved)
		call_decide(
			c, c->cancelled ? CM_CALL_CANCELLED : CM_CALL_RETURNED,
			CM_ERR_TRAP, c->cancelled ? "call cancelled" : NULL);
	else
		return false;
	return true;
}

cm_call_outcome cm_call_cancel(cm_call *c, const char *reason)
{
	cm_call_outcome o;

	if (c->state == CALL_DONE)
		return c->outcome; /* on_done pending or running: no-op */
	if (!decide_clean(c, reason)) {
		halt_tree(c->store, c->func->inst);
		call_decide(c, CM_CALL_TRAPPED, CM_ERR_TRAP, reason);
	}
	o = c->outcome;
	call_deliver(c);
	return o;
}

bool cm_call_end_clean(cm_call *c, const char *reason)
{
	if (c->state == CALL_DONE)
		return true;
	if (!decide_clean(c, reason))
		return false;
	call_deliver(c);
	return true;
}

uint64_t cm_calls_turn_fuel(cm_store *s, uint64_t fuel)
{
	for (cm_call *c = s->calls; c != NULL; c = c->next)
		if (c->fuel != UINT64_MAX && (fuel == 0 || c->fuel < fuel))
			fuel = c->fuel;
	return fuel;
}

/*
 * Nothing ready, nothing to deliver, no host call to wait for, and no
 * guest copy on a host-held stream end that the host could still move.
 */
static bool store_stuck(cm_store *s)
{
	return s->settled_first == NULL && s->pending_host_calls == 0 &&
	       s->deferred_first == NULL && !cm_sched_has_ready(s) &&
	       !cm_store_host_copy_pending(s);
}

void cm_call_set_tag(cm_call *c, uint64_t tag)
{
	c->tag = tag;
}

uint64_t cm_thread_call_tag(const cm_thread *t)
{
	return t != NULL && t->task != NULL ? t->task->call_tag : 0;
}

cm_call *cm_calls_owner(cm_store *s, const cm_thread *t)
{
	if (s->calls == NULL)
		return NULL;
	for (cm_call *c = s->calls; c != NULL; c = c->next)
		if (c->starter == t)
			return c;
	if (t->task == NULL)
		return NULL;
	/* the call whose root task is still alive and is t's root */
	for (cm_call *c = s->calls; c != NULL; c = c->next)
		if (c->task != NULL && c->root == t->task->root)
			return c;
	return NULL;
}

void cm_calls_charge(cm_call *c, uint64_t used)
{
	c->turn_used += used;
}

/*
 * A restored call no one waits for ended trapped by what only it saw
 * (its budget, the deadlock): the turn reports it, as background
 * work's trap, so that the embedder learns the instance is poisoned.
 */
static void orphan_trap(const cm_call *c, cabi_error *out, bool *any)
{
	if (*any || !c->restored || c->on_done != NULL ||
	    c->outcome != CM_CALL_TRAPPED)
		return;
	*any = true;
	cabi_fail(out, CABI_ERR_TRAP, "a call restored in flight: %s",
		  c->err.msg);
}

int cm_calls_after_turn(cm_store *s, const cabi_error *trap, cabi_error *out)
{
	cm_call *done = NULL, **tail = &done, *c, *next;
	bool orphan = false;

	for (c = s->calls; c != NULL; c = next) {
		uint64_t used = c->turn_used;

		next = c->next;
		c->turn_used = 0;
		if (c->state != CALL_RUNNING) {
			continue;
		} else if (c->resolved) {
			call_decide(c,
				    c->cancelled ? CM_CALL_CANCELLED
						 : CM_CALL_RETURNED,
				    CM_ERR_TRAP,
				    c->cancelled ? "call cancelled" : NULL);
		} else if (c->failed) {
			halt_tree(s, c->func->inst);
			c->outcome = CM_CALL_TRAPPED;
			c->state = CALL_DONE;
			call_unlink(c);
			call_detach(c);
		} else if (trap != NULL &&
			   cm_instance_poisoned(root_of(c->func->inst))) {
			halt_tree(s, c->func->inst);
			call_decide(c, CM_CALL_TRAPPED, CM_ERR_TRAP, trap->msg);
		} else if (c->fuel != UINT64_MAX && c->fuel <= used) {
			c->fuel = 0;
			halt_tree(s, c->func->inst);
			call_decide(c, CM_CALL_TRAPPED, CM_ERR_TRAP,
				    "wasm trap: all fuel consumed");
		} else {
			if (c->fuel != UINT64_MAX)
				c->fuel -= used;
			continue;
		}
		/* keep the decided ones in order */
		c->next = NULL;
		*tail = c;
		tail = &c->next;
	}
	/* still unresolved with nothing that could move it: deadlock */
	if (s->calls != NULL && store_stuck(s)) {
		for (c = s->calls; c != NULL; c = next) {
			next = c->next;
			if (c->state != CALL_RUNNING)
				continue;
			halt_tree(s, c->func->inst);
			call_decide(c, CM_CALL_TRAPPED, CM_ERR_TRAP,
				    "wasm trap: " CM_MSG_DEADLOCK);
			c->next = NULL;
			*tail = c;
			tail = &c->next;
		}
	}
	while (done != NULL) {
		c = done;
		done = c->next;
		c->next = NULL;
		if (trap == NULL)
			orphan_trap(c, out, &orphan);
		call_deliver(c);
	}
	return orphan ? -1 : 0;
}
