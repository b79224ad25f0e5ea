/*
 * test_sched.c - the per-store scheduler of runtime/run (thread.c):
 * coalesced service requests, FIFO and seeded picking among ready
 * threads, running a thread through its continuation, and deadlock
 * detection of the host driver.  Threads here carry no guest code: their
 * continuations are C functions, which is exactly what the scheduler
 * sees of a blocked thread.  Host calls that complete later
 * (host_pending.c) go through the real async lower trampoline with a
 * deferring host function; settling them between calls and the bounded
 * service turn (a real core loop running out of fuel) are pinned here.
 */
#include <string.h>

#include "component/component.h"
#include "run/instance.h"
#include "run/rt.h"
#include "run/sched.h"
#include "testmain.h"

static int nrequests;

static void on_request(void *env)
{
	(void)env;
	nrequests++;
}

static bool never(cm_thread *t)
{
	(void)t;
	return false;
}

static int ran;

static int finish(cm_thread *t, bool cancelled, cabi_error *err)
{
	(void)cancelled;
	ran++;
	return cm_thread_exit(t, err);
}

static cm_store *new_store(uint64_t seed)
{
	cm_store_config cfg;

	memset(&cfg, 0, sizeof cfg);
	cfg.sched_seed = seed;
	cfg.request_service = on_request;
	return cm_store_new(&cfg);
}

static cm_thread *waiting(cm_component_instance *inst,
			  bool (*ready)(cm_thread *))
{
	cm_thread *t = cm_thread_new(NULL, inst);

	ck_assert_ptr_nonnull(t);
	t->ready = ready;
	t->wake = finish;
	t->state = CM_THREAD_WAITING;
	cm_sched_enqueue(t);
	return t;
}

START_TEST(service_requests_coalesce)
{
	cm_store *s = new_store(0);
	cm_component_instance inst;
	cm_thread *a, *b;
	cabi_error err;

	memset(&inst, 0, sizeof inst);
	inst.store = s;
	nrequests = 0;
	a = waiting(&inst, NULL);
	b = waiting(&inst, NULL);
	/* two threads became ready: one request outstanding */
	ck_assert_int_eq(nrequests, 1);
	/* FIFO: the first to wait runs first */
	ck_assert_ptr_eq(cm_sched_pick(s, NULL), a);
	ran = 0;
	ck_assert_int_eq(cm_thread_resume(a, false, &err), 0);
	ck_assert_ptr_eq(cm_sched_pick(s, NULL), b);
	ck_assert_int_eq(cm_thread_resume(b, false, &err), 0);
	ck_assert_int_eq(ran, 2);
	ck_assert_ptr_null(s->wfirst);
	/* the embedder served the request: the next one asks again */
	s->service_requested = false;
	a = waiting(&inst, NULL);
	ck_assert_int_eq(nrequests, 2);
	ck_assert_int_eq(cm_thread_resume(a, false, &err), 0);
	cm_store_free(s);
}
END_TEST

START_TEST(pick_skips_unready)
{
	cm_store *s = new_store(0);
	cm_component_instance inst;
	cm_thread *a, *b;
	cabi_error err;

	memset(&inst, 0, sizeof inst);
	inst.store = s;
	a = waiting(&inst, never);
	b = waiting(&inst, NULL);
	ck_assert_ptr_eq(cm_sched_pick(s, NULL), b);
	ck_assert_ptr_eq(cm_sched_pick(s, &inst), b);
	ck_assert_int_eq(cm_thread_resume(b, false, &err), 0);
	ck_assert_ptr_null(cm_sched_pick(s, NULL));
	a->ready = NULL;
	ck_assert_int_eq(cm_thread_resume(a, false, &err), 0);
	cm_store_free(s);
}
END_TEST

START_TEST(seeded_pick_is_reproducible)
{
	cm_thread *first[2];

	for (int round = 0; round < 2; round++) {
		cm_store *s = new_store(4242);
		cm_component_instance inst;
		cabi_error err;
		cm_thread *t;

		memset(&inst, 0, sizeof inst);
		inst.store = s;
		for (int i = 0; i < 8; i++)
			waiting(&inst, NULL);
		t = cm_sched_pick(s, NULL);
		ck_assert_ptr_nonnull(t);
		/* index in the list: the same seed makes the same choice */
		first[round] = NULL;
		{
			intptr_t k = 0;

			for (cm_thread *u = s->wfirst; u != t; u = u->wnext)
				k++;
			first[round] = (cm_thread *)k;
		}
		while ((t = cm_sched_pick(s, NULL)) != NULL)
			ck_assert_int_eq(cm_thread_resume(t, false, &err), 0);
		cm_store_free(s);
	}
	ck_assert_ptr_eq(first[0], first[1]);
}
END_TEST

START_TEST(deadlock_detected)
{
	cm_store *s = new_store(0);
	cm_component_instance inst;
	cm_thread *a;
	cabi_error err;
	bool done = false;

	memset(&inst, 0, sizeof inst);
	inst.store = s;
	memset(&err, 0, sizeof err);
	/* nothing can run and the call has not resolved: the spec's trap */
	ck_assert_int_eq(cm_sched_drive(s, &done, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "deadlock detected: event loop "
					      "cannot make further progress"));
	/* a waiting thread that never becomes ready is a deadlock too */
	a = waiting(&inst, never);
	ck_assert_int_eq(cm_sched_drive(s, &done, &err), -1);
	a->ready = NULL;
	ran = 0;
	ck_assert_int_eq(cm_thread_resume(a, false, &err), 0);
	ck_assert_int_eq(ran, 1);
	done = true;
	ck_assert_int_eq(cm_sched_drive(s, &done, &err), 0);
	cm_store_free(s);
}
END_TEST

/* ---- sync-typed tasks that block (digest 3.6 step 3) ----------------- */

/* A task of inst whose function has the given type and lift options. */
static cm_task *task_of(cm_store *s, cm_component_instance *inst, cm_func *f,
			bool needs_exclusive)
{
	cm_task *at = cm_task_new(s);

	ck_assert_ptr_nonnull(at);
	at->func = f;
	at->inst = inst;
	at->state = CM_TASK_STARTED;
	at->needs_exclusive = needs_exclusive;
	return at;
}

static cm_thread *task_thread(cm_task *at, bool implicit, bool ready)
{
	cabi_error err;
	cm_thread *t = cm_thread_new(at, at->inst);

	ck_assert_ptr_nonnull(t);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(cm_thread_register(t, &err), 0);
	t->implicit = implicit;
	if (implicit)
		at->implicit = t;
	t->wake = finish;
	if (ready) {
		t->state = CM_THREAD_WAITING;
		cm_sched_enqueue(t);
	}
	return t;
}

/*
 * While a sync-typed task is blocked, only threads of its own instance
 * that may use the stack run: never the lock holder, never the implicit
 * thread of another needs-exclusive task, never a thread of a sibling
 * instance; its own threads (the implicit one included) do.
 */
START_TEST(sync_pick_excludes_stack_users)
{
	cm_store *s = new_store(0);
	cm_component_instance inst, sib;
	cm_type sync_ft, async_ft;
	cm_func sync_f, async_f;
	cm_task *self, *cb, *other;
	cm_thread *imp, *cb_imp, *cb_x, *holder, *sib_t;

	memset(&inst, 0, sizeof inst);
	memset(&sib, 0, sizeof sib);
	inst.store = sib.store = s;
	cabi_table_init(&inst.threads);
	cabi_table_init(&sib.threads);
	memset(&sync_ft, 0, sizeof sync_ft);
	memset(&async_ft, 0, sizeof async_ft);
	async_ft.u.func.async = true;
	memset(&sync_f, 0, sizeof sync_f);
	memset(&async_f, 0, sizeof async_f);
	sync_f.type = &sync_ft;
	async_f.type = &async_ft;

	self = task_of(s, &inst, &sync_f, true);
	cb = task_of(s, &inst, &async_f, true);	    /* a callback task */
	other = task_of(s, &inst, &async_f, false); /* stackful */
	sib_t = task_thread(task_of(s, &sib, &async_f, false), false, true);
	cb_imp = task_thread(cb, true, true); /* parked ready in YIELD */
	holder = task_thread(other, true, true);
	inst.exclusive_thread = holder;
	imp = task_thread(self, true, false); /* blocked, not ready yet */
	ck_assert_ptr_null(cm_sched_pick_sync(s, &inst, self));
	/* an explicit thread of the callback task may run */
	cb_x = task_thread(cb, false, true);
	ck_assert_ptr_eq(cm_sched_pick_sync(s, &inst, self), cb_x);
	cm_sched_dequeue(cb_x);
	cb_x->state = CM_THREAD_SUSPENDED;
	/* the blocked task's own implicit thread, once ready, pinned too */
	imp->pinned = true;
	imp->state = CM_THREAD_WAITING;
	cm_sched_enqueue(imp);
	ck_assert_ptr_eq(cm_sched_pick_sync(s, &inst, self), imp);
	/* ...but no other picker takes a pinned thread */
	inst.exclusive_thread = NULL;
	ck_assert_ptr_eq(cm_sched_pick(s, &inst), cb_imp);
	cm_sched_dequeue(cb_imp);
	cb_imp->state = CM_THREAD_SUSPENDED;
	ck_assert_ptr_eq(cm_sched_pick(s, &inst), holder);
	cm_sched_dequeue(holder);
	holder->state = CM_THREAD_SUSPENDED;
	ck_assert_ptr_null(cm_sched_pick(s, &inst));
	ck_assert_ptr_eq(cm_sched_pick(s, NULL), sib_t);
	cm_store_free(s);
	cabi_table_free(&inst.threads);
	cabi_table_free(&sib.threads);
}
END_TEST

/*
 * Task.may_block as the suite refines it: an async-typed or resolved
 * task may block; a sync-typed one only while some other thread of the
 * store is ready; a start function (no thread) never.
 */
START_TEST(may_block_needs_another_ready_thread)
{
	cm_store *s = new_store(0);
	cm_component_instance inst;
	cm_type sync_ft, async_ft;
	cm_func sync_f, async_f;
	cm_task *self, *at;
	cm_thread *imp, *t;

	memset(&inst, 0, sizeof inst);
	inst.store = s;
	cabi_table_init(&inst.threads);
	memset(&sync_ft, 0, sizeof sync_ft);
	memset(&async_ft, 0, sizeof async_ft);
	async_ft.u.func.async = true;
	memset(&sync_f, 0, sizeof sync_f);
	memset(&async_f, 0, sizeof async_f);
	sync_f.type = &sync_ft;
	async_f.type = &async_ft;

	ck_assert(!cm_thread_may_block(NULL));
	self = task_of(s, &inst, &sync_f, true);
	imp = task_thread(self, true, false);
	imp->state = CM_THREAD_RUNNING;
	ck_assert(!cm_thread_may_block(imp));
	/* a suspended thread is no help, a ready one is */
	at = task_of(s, &inst, &async_f, false);
	t = task_thread(at, true, false);
	t->state = CM_THREAD_SUSPENDED;
	ck_assert(!cm_thread_may_block(imp));
	t->state = CM_THREAD_WAITING;
	cm_sched_enqueue(t);
	ck_assert(cm_thread_may_block(imp));
	cm_sched_dequeue(t);
	t->state = CM_THREAD_SUSPENDED;
	/* once it has returned, a sync-typed task may block */
	self->state = CM_TASK_RESOLVED;
	ck_assert(cm_thread_may_block(imp));
	self->state = CM_TASK_STARTED;
	/* an async-typed task always may */
	ck_assert(cm_thread_may_block(t));
	cm_store_free(s);
	cabi_table_free(&inst.threads);
}
END_TEST

/* ---- host calls that complete later, service turns ------------------ */

static cm_host_pending *held[8];
static int nheld, ncancels;

static void on_cancel(void *env, cm_host_pending *p)
{
	(void)env;
	(void)p;
	ncancels++;
}

/*
 * How deferring_host behaves: DEFER_LATER answers later (a clock wait,
 * I/O); DEFER_THEN_ANSWER defers and answers at once after all (a wait
 * of 0); DEFER_SETTLE_ANSWER settles the handle (cancelled) and answers
 * at once all the same (a careless host).
 */
static enum defer_mode {
	DEFER_LATER,
	DEFER_THEN_ANSWER,
	DEFER_SETTLE_ANSWER
} defer_mode;

static int deferring_host(cm_host_call *call, void *env, const cm_val *args,
			  uint32_t nargs, cm_val *results, uint32_t nresults)
{
	cm_host_pending *p = cm_host_call_defer(call);

	(void)env;
	(void)args;
	(void)nargs;
	(void)results;
	(void)nresults;
	if (p == NULL)
		return -1;
	if (defer_mode == DEFER_THEN_ANSWER)
		return 0;
	if (defer_mode == DEFER_SETTLE_ANSWER) {
		cm_host_settle_cancelled(p);
		return 0;
	}
	cm_host_pending_set_cancel(p, on_cancel, NULL);
	held[nheld++] = p;
	return CM_HOST_PENDING;
}

static bool subtask_returned(cm_thread *t)
{
	const cm_subtask *st = t->wait_obj;

	return st->state == CM_SUBTASK_RETURNED;
}

typedef struct host_fixture {
	cm_store *s;
	cm_component_instance inst;
	cm_type ft;
	cm_func host;
	cabi_options opts;
	wasm_exec *e;
} host_fixture;

static void fixture_init(host_fixture *fx)
{
	memset(fx, 0, sizeof *fx);
	fx->s = new_store(0);
	ck_assert_ptr_nonnull(fx->s);
	fx->inst.store = fx->s;
	fx->inst.may_leave = true;
	fx->inst.may_enter = true;
	cabi_table_init(&fx->inst.handles);
	cabi_table_init(&fx->inst.threads);
	fx->ft.kind = CM_FUNC; /* func() */
	fx->host.kind = CM_FUNC_HOST;
	fx->host.type = &fx->ft;
	fx->host.fn = deferring_host;
	fx->host.name = "wait";
	fx->opts.async = true;
	fx->e = cm_store_exec_acquire(fx->s);
	ck_assert_ptr_nonnull(fx->e);
	nheld = ncancels = nrequests = ran = 0;
	defer_mode = DEFER_LATER;
}

/* The guest's async lower of the host import: STARTED, a subtask. */
static cm_subtask *lower_async(host_fixture *fx, uint32_t *index)
{
	wasm_val args[1] = {{0}}, res[1];
	cabi_elem *el;

	ck_assert_int_eq(cm_canon_lower_call(fx->e, NULL, &fx->inst, &fx->host,
					     &fx->ft, &fx->opts, 0, 1, args,
					     res),
			 WASM_HOST_OK);
	ck_assert_uint_eq(res[0].u.i32 & 0xf, CM_SUBTASK_STARTED);
	*index = res[0].u.i32 >> 4;
	el = cabi_table_get(&fx->inst.handles, *index, NULL);
	ck_assert_ptr_nonnull(el);
	return el->u.obj;
}

static void drop_subtask(host_fixture *fx, uint32_t index)
{
	cabi_elem el;

	ck_assert_int_eq(cabi_table_remove(&fx->inst.handles, index, &el, NULL),
			 0);
	cm_subtask_free(el.u.obj);
}

static void fixture_free(host_fixture *fx)
{
	cm_store_exec_release(fx->s, fx->e, true);
	cm_store_free(fx->s);
	cabi_table_free(&fx->inst.handles);
	cabi_table_free(&fx->inst.threads);
}

/*
 * Between-calls liveness (seed 003): background work parked on a host
 * call that settles while no call is in flight resumes in the service
 * turns the (coalesced) request asks for, with no embedder call.
 */
START_TEST(host_settle_between_calls)
{
	host_fixture fx;
	cm_subtask *st0, *st1;
	uint32_t i0, i1;
	cm_thread *bg;
	cm_error err;
	cm_val bad;

	fixture_init(&fx);
	/* "the export": two async host calls, both deferred */
	st0 = lower_async(&fx, &i0);
	st1 = lower_async(&fx, &i1);
	ck_assert_int_eq(nheld, 2);
	ck_assert_uint_eq(cm_store_pending_host_calls(fx.s), 2);
	ck_assert_ptr_eq(st0->host, held[0]);
	ck_assert_int_eq(nrequests, 0);
	/* the background task parks on the first one */
	bg = cm_thread_new(NULL, &fx.inst);
	ck_assert_ptr_nonnull(bg);
	bg->wait_obj = st0;
	bg->ready = subtask_returned;
	bg->wake = finish;
	bg->state = CM_THREAD_WAITING;
	cm_sched_enqueue(bg);
	ck_assert_int_eq(nrequests, 1);
	/* the export returned; the embedder's turn finds nothing ready */
	ck_assert_int_eq(cm_store_service_turn(fx.s, 0, &err), 0);
	ck_assert_int_eq(ran, 0);
	ck_assert_int_eq(nrequests, 1);

	/* settled from outside: recorded, one request, no guest code */
	ck_assert_int_eq(cm_host_settle(held[0], NULL, 0, &err), 0);
	ck_assert_int_eq(nrequests, 2);
	ck_assert_int_eq(st0->state, CM_SUBTASK_STARTED);
	ck_assert_int_eq(ran, 0);
	/* a result the import's type does not have: still pending */
	memset(&bad, 0, sizeof bad);
	bad.kind = CM_BOOL;
	ck_assert_int_eq(cm_host_settle(held[1], &bad, 1, &err), -1);
	ck_assert_int_eq(err.kind, CM_ERR_VALUE);
	ck_assert_uint_eq(cm_store_pending_host_calls(fx.s), 1);
	/* the second settlement coalesces with the outstanding request */
	ck_assert_int_eq(cm_host_settle(held[1], NULL, 0, &err), 0);
	ck_assert_int_eq(nrequests, 2);
	ck_assert_uint_eq(cm_store_pending_host_calls(fx.s), 0);

	/* the turn delivers both and runs the background task to the end */
	ck_assert_int_eq(cm_store_service_turn(fx.s, 0, &err), 0);
	ck_assert_int_eq(ran, 1);
	ck_assert_int_eq(st0->state, CM_SUBTASK_RETURNED);
	ck_assert_int_eq(st1->state, CM_SUBTASK_RETURNED);
	ck_assert(st1->w.pending); /* its event is armed for the guest */
	ck_assert_ptr_null(fx.s->wfirst);
	ck_assert_int_eq(nrequests, 2); /* quiescent: no new request */
	ck_assert_int_eq(ncancels, 0);
	drop_subtask(&fx, i0);
	drop_subtask(&fx, i1);
	fixture_free(&fx);
}
END_TEST

static int no_args(void *env, cm_val *args, cabi_error *err)
{
	(void)env;
	(void)args;
	(void)err;
	return 0;
}

static int no_result(void *env, cm_val *result, cabi_error *err)
{
	(void)env;
	(void)result;
	(void)err;
	return 0;
}

/* A sync-typed lower cannot wait: deferring there traps the caller. */
START_TEST(host_defer_refused_on_sync_path)
{
	host_fixture fx;
	cm_call_cbs cbs = {no_args, no_result, NULL};
	cabi_error ce;

	fixture_init(&fx);
	memset(&ce, 0, sizeof ce);
	ck_assert_int_eq(
		cm_func_call(fx.s, &fx.host, &fx.inst, NULL, &cbs, &ce), -1);
	ck_assert_ptr_nonnull(strstr(ce.msg, CM_MSG_SYNC_BLOCK));
	ck_assert_int_eq(nheld, 0);
	ck_assert_uint_eq(cm_store_pending_host_calls(fx.s), 0);
	fixture_free(&fx);
}
END_TEST

/* A trap settles as a trap of the caller; teardown tells the host. */
START_TEST(host_settle_trap_and_teardown)
{
	host_fixture fx;
	uint32_t i0, i1;
	cm_error err;

	fixture_init(&fx);
	lower_async(&fx, &i0);
	lower_async(&fx, &i1);
	cm_host_settle_trap(held[0], "disk on fire");
	ck_assert_int_eq(nrequests, 1);
	ck_assert_int_eq(cm_store_service_turn(fx.s, 0, &err), -1);
	ck_assert_int_eq(err.kind, CM_ERR_TRAP);
	ck_assert_ptr_nonnull(strstr(err.msg, "disk on fire"));
	/* the subtask goes (instance teardown); its host call stays held */
	drop_subtask(&fx, i0);
	drop_subtask(&fx, i1);
	ck_assert_uint_eq(cm_store_pending_host_calls(fx.s), 1);
	ck_assert_int_eq(ncancels, 0);
	fixture_free(&fx);
	/* freeing the store cancels the outstanding host call */
	ck_assert_int_eq(ncancels, 1);
}
END_TEST

/* ---- watching deferred host calls (the daemon's hostcall.* events) */

struct seen {
	char what; /* 'd' deferred, 'r' returned, 't' trapped, 'c' cancelled */
	uint64_t tag;
	bool call;
	char msg[32];
};
static struct seen seen[16];
static int nseen;

static void seen_deferred(void *env, uint64_t call_tag, const char *instance,
			  const char *name, const cm_type *ft,
			  const cm_val *args, uint32_t nargs, uint64_t tags[2])
{
	ck_assert_ptr_eq(env, &nseen);
	ck_assert_ptr_null(instance);
	ck_assert_str_eq(name, "wait");
	ck_assert_int_eq(ft->kind, CM_FUNC);
	ck_assert_uint_eq(nargs, 0);
	(void)args;
	ck_assert_int_lt(nseen, 16);
	tags[0] = 100 + (uint64_t)nseen;
	tags[1] = 7;
	seen[nseen++] = (struct seen){'d', tags[0], call_tag != 0, ""};
}

static void seen_settled(void *env, const uint64_t tags[2],
			 cm_host_outcome outcome, const cm_type *ft,
			 const cm_val *result, const char *msg)
{
	static const char what[] = {[CM_HOST_RETURNED] = 'r',
				    [CM_HOST_TRAPPED] = 't',
				    [CM_HOST_CANCELLED] = 'c'};

	ck_assert_ptr_eq(env, &nseen);
	ck_assert_uint_eq(tags[1], 7);
	ck_assert_ptr_null(result); /* func(): no result */
	(void)ft;
	ck_assert_int_lt(nseen, 16);
	seen[nseen] = (struct seen){what[outcome], tags[0], false, ""};
	if (msg)
		snprintf(seen[nseen].msg, sizeof seen[nseen].msg, "%s", msg);
	nseen++;
}

/*
 * Every deferral is seen before it can settle, each settlement exactly
 * once with the tags its deferral set; one answered at once after
 * deferring is seen settled too; one outstanding when the store goes is
 * not; without an observer nothing is seen.
 */
START_TEST(host_calls_are_observed)
{
	const cm_host_observer o = {seen_deferred, seen_settled, &nseen};
	host_fixture fx;
	uint32_t idx[6];
	cm_error err;

	nseen = 0;
	fixture_init(&fx);
	cm_store_observe_host_calls(fx.s, &o);
	lower_async(&fx, &idx[0]);
	lower_async(&fx, &idx[1]);
	lower_async(&fx, &idx[2]);
	lower_async(&fx, &idx[3]);
	ck_assert_int_eq(nseen, 4);
	ck_assert_int_eq(cm_host_settle(held[1], NULL, 0, &err), 0);
	cm_host_settle_trap(held[0], "disk on fire");
	cm_host_pending_cancel(held[2]);
	ck_assert_int_eq(ncancels, 1);
	cm_host_settle_cancelled(held[2]);
	ck_assert_int_eq(nseen, 7);
	ck_assert_int_eq(seen[0].what, 'd');
	ck_assert_uint_eq(seen[0].tag, 100);
	ck_assert(!seen[0].call); /* no cm_call_start call: no call tag */
	ck_assert_uint_eq(seen[3].tag, 103);
	ck_assert_int_eq(seen[4].what, 'r');
	ck_assert_uint_eq(seen[4].tag, 101);
	ck_assert_int_eq(seen[5].what, 't');
	ck_assert_uint_eq(seen[5].tag, 100);
	ck_assert_str_eq(seen[5].msg, "disk on fire");
	ck_assert_int_eq(seen[6].what, 'c');
	ck_assert_uint_eq(seen[6].tag, 102);
	/* answered at once after deferring: deferred, then returned */
	defer_mode = DEFER_THEN_ANSWER;
	{
		wasm_val args[1] = {{0}}, res[1];

		ck_assert_int_eq(cm_canon_lower_call(fx.e, NULL, &fx.inst, &fx.host,
						     &fx.ft, &fx.opts, 0, 1,
						     args, res),
				 WASM_HOST_OK);
		ck_assert_uint_eq(res[0].u.i32 & 0xf, CM_SUBTASK_RETURNED);
	}
	ck_assert_int_eq(nseen, 9);
	ck_assert_int_eq(seen[7].what, 'd');
	ck_assert_int_eq(seen[8].what == 'r' && seen[8].tag == seen[7].tag, 1);
	/* settled, then answered at once: the settlement (reported once)
	 * is what the guest gets, delivered as any other */
	defer_mode = DEFER_SETTLE_ANSWER;
	{
		cm_subtask *st = lower_async(&fx, &idx[5]);

		ck_assert_ptr_nonnull(fx.s->settled_last);
		ck_assert_ptr_eq(st->host, fx.s->settled_last);
	}
	ck_assert_int_eq(nseen, 11);
	ck_assert_int_eq(seen[10].what, 'c');
	nseen = 9;
	/* not watched: nothing more is seen */
	cm_store_observe_host_calls(fx.s, NULL);
	defer_mode = DEFER_LATER;
	lower_async(&fx, &idx[4]);
	ck_assert_int_eq(cm_host_settle(held[4], NULL, 0, &err), 0);
	ck_assert_int_eq(nseen, 9);
	/* held[3] is outstanding when the store goes: not reported */
	cm_store_observe_host_calls(fx.s, &o);
	for (int i = 0; i < 6; i++)
		drop_subtask(&fx, idx[i]);
	fixture_free(&fx);
	ck_assert_int_eq(nseen, 9);
}
END_TEST

/* (func (local i32) i32.const 1000000 local.set 0
 *   loop local.get 0 i32.const 1 i32.sub local.tee 0 br_if 0 end) */
static const uint8_t countdown_wasm[] = {
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, /* header */
	0x01, 0x04, 0x01, 0x60, 0x00, 0x00,		/* type () -> () */
	0x03, 0x02, 0x01, 0x00,				/* func 0 */
	0x07, 0x07, 0x01, 0x03, 'r',  'u',  'n',  0x00, 0x00, /* export */
	0x0a, 0x18, 0x01, 0x16, 0x01, 0x01, 0x7f, 0x41, 0xc0,
	0x84, 0x3d, 0x21, 0x00, 0x03, 0x40, 0x20, 0x00, 0x41,
	0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, 0x0b, 0x0b,
};

static wasm_func *countdown;

static int countdown_done(cm_thread *t, cabi_error *err)
{
	ran++;
	return cm_thread_exit(t, err);
}

static int countdown_start(cm_thread *t, bool cancelled, cabi_error *err)
{
	(void)cancelled;
	return cm_thread_call(t, countdown, NULL, 0, countdown_done, err);
}

/* A bounded turn suspends a long thread and asks for service again. */
START_TEST(turn_fuel_suspends_thread)
{
	host_fixture fx;
	wasm_module *m;
	wasm_instance *wi;
	wasm_trap_kind trap;
	wasm_error werr;
	wasm_extern ex;
	cm_thread *t;
	cm_error err;
	int rc, turns = 0;

	fixture_init(&fx);
	ck_assert_int_eq(wasm_module_load(countdown_wasm, sizeof countdown_wasm,
					  &m, &werr),
			 0);
	ck_assert_int_eq(
		wasm_instantiate(fx.s->wasm, m, NULL, 0, &wi, &trap, &werr), 0);
	ck_assert(wasm_instance_export(wi, (const uint8_t *)"run", 3, &ex));
	countdown = ex.u.func;
	t = cm_thread_new(NULL, &fx.inst);
	ck_assert_ptr_nonnull(t);
	t->wake = countdown_start;
	t->state = CM_THREAD_WAITING;
	cm_sched_enqueue(t);
	ck_assert_int_eq(nrequests, 1);
	do {
		rc = cm_store_service_turn(fx.s, 200000, &err);
		ck_assert_int_ge(rc, 0);
		turns++;
		/* one request per unfinished turn, none once done */
		ck_assert_int_eq(nrequests, 1 + turns - (rc == 0));
	} while (rc == 1 && turns < 1000);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_gt(turns, 2);
	ck_assert_int_eq(ran, 1);
	/* the turn's budget does not leak into the store's own fuel */
	ck_assert_uint_eq(cm_store_fuel(fx.s), UINT64_MAX);
	fixture_free(&fx);
	wasm_module_free(m);
}
END_TEST

/* ---- host-held stream and future ends (host_stream.c) ---------------- */

/*
 * The component below (custom sections stripped), written in WAT and
 * converted ahead of time with `jco parse`:
 *   consume: async func(s: stream<u8>) -> u32   stackful: reads s into
 *       a buffer of 8 until the writer drops, returns the sum of bytes;
 *   produce: func() -> stream<u8>   starts an async write of the bytes
 *       1, 2, 3, 4 (left pending) and returns the readable end.
 * The WAT (abridged):
 *   consume: ws = waitable-set.new; join(s, ws)
 *     loop { r = stream.read(s, 16, 8); if r == BLOCKED
 *              { waitable-set.wait(ws, 0); r = load(4) }
 *            sum += bytes 16 .. 16 + (r >> 4); until r & 0xf != 0 }
 *     join(s, 0); stream.drop-readable(s); task.return(sum)
 *   produce: p = stream.new; store 0x04030201 at 32;
 *     stream.write(p >> 32, 32, 4) (BLOCKED); return (i32)p
 */
static const uint8_t host_stream_wasm[] = {
	0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x01, 0x16, 0x00, 0x61,
	0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07,
	0x07, 0x01, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00, 0x02, 0x04, 0x01, 0x00,
	0x00, 0x00, 0x07, 0x04, 0x01, 0x66, 0x01, 0x7d, 0x08, 0x03, 0x01, 0x0e,
	0x00, 0x06, 0x09, 0x01, 0x00, 0x02, 0x01, 0x00, 0x03, 0x6d, 0x65, 0x6d,
	0x08, 0x07, 0x01, 0x0f, 0x00, 0x02, 0x06, 0x03, 0x00, 0x06, 0x09, 0x01,
	0x00, 0x02, 0x01, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x08, 0x0a, 0x03, 0x10,
	0x00, 0x02, 0x06, 0x03, 0x01, 0x13, 0x00, 0x1f, 0x06, 0x09, 0x01, 0x00,
	0x02, 0x01, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x08, 0x09, 0x03, 0x20, 0x00,
	0x02, 0x23, 0x09, 0x00, 0x79, 0x00, 0x01, 0xd2, 0x02, 0x00, 0x61, 0x73,
	0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x1f, 0x06, 0x60, 0x00, 0x01, 0x7e,
	0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x01, 0x7f, 0x00, 0x60,
	0x00, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f,
	0x7f, 0x00, 0x02, 0x71, 0x09, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00,
	0x01, 0x00, 0x0a, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x2e, 0x6e, 0x65,
	0x77, 0x00, 0x00, 0x00, 0x0b, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x2e,
	0x72, 0x65, 0x61, 0x64, 0x00, 0x01, 0x00, 0x0c, 0x73, 0x74, 0x72, 0x65,
	0x61, 0x6d, 0x2e, 0x77, 0x72, 0x69, 0x74, 0x65, 0x00, 0x01, 0x00, 0x0b,
	0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x2e, 0x64, 0x72, 0x6f, 0x70, 0x00,
	0x02, 0x00, 0x06, 0x77, 0x73, 0x2e, 0x6e, 0x65, 0x77, 0x00, 0x03, 0x00,
	0x07, 0x77, 0x73, 0x2e, 0x77, 0x61, 0x69, 0x74, 0x00, 0x04, 0x00, 0x04,
	0x6a, 0x6f, 0x69, 0x6e, 0x00, 0x05, 0x00, 0x0b, 0x74, 0x61, 0x73, 0x6b,
	0x2e, 0x72, 0x65, 0x74, 0x75, 0x72, 0x6e, 0x00, 0x02, 0x03, 0x03, 0x02,
	0x02, 0x03, 0x07, 0x15, 0x02, 0x07, 0x63, 0x6f, 0x6e, 0x73, 0x75, 0x6d,
	0x65, 0x00, 0x08, 0x07, 0x70, 0x72, 0x6f, 0x64, 0x75, 0x63, 0x65, 0x00,
	0x09, 0x0a, 0x97, 0x01, 0x02, 0x72, 0x01, 0x05, 0x7f, 0x10, 0x04, 0x21,
	0x01, 0x20, 0x00, 0x20, 0x01, 0x10, 0x06, 0x03, 0x40, 0x20, 0x00, 0x41,
	0x10, 0x41, 0x08, 0x10, 0x01, 0x21, 0x03, 0x20, 0x03, 0x41, 0x7f, 0x46,
	0x04, 0x40, 0x20, 0x01, 0x41, 0x00, 0x10, 0x05, 0x1a, 0x41, 0x04, 0x28,
	0x02, 0x00, 0x21, 0x03, 0x0b, 0x20, 0x03, 0x41, 0x04, 0x76, 0x21, 0x05,
	0x41, 0x00, 0x21, 0x04, 0x02, 0x40, 0x03, 0x40, 0x20, 0x04, 0x20, 0x05,
	0x4f, 0x0d, 0x01, 0x20, 0x02, 0x20, 0x04, 0x2d, 0x00, 0x10, 0x6a, 0x21,
	0x02, 0x20, 0x04, 0x41, 0x01, 0x6a, 0x21, 0x04, 0x0c, 0x00, 0x0b, 0x0b,
	0x20, 0x03, 0x41, 0x0f, 0x71, 0x45, 0x0d, 0x00, 0x0b, 0x20, 0x00, 0x41,
	0x00, 0x10, 0x06, 0x20, 0x00, 0x10, 0x03, 0x20, 0x02, 0x10, 0x07, 0x0b,
	0x22, 0x01, 0x01, 0x7e, 0x10, 0x00, 0x21, 0x00, 0x41, 0x20, 0x41, 0x81,
	0x84, 0x8c, 0x20, 0x36, 0x02, 0x00, 0x20, 0x00, 0x42, 0x20, 0x88, 0xa7,
	0x41, 0x20, 0x41, 0x04, 0x10, 0x02, 0x1a, 0x20, 0x00, 0xa7, 0x0b, 0x06,
	0x09, 0x01, 0x00, 0x02, 0x01, 0x00, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x6f,
	0x02, 0x01, 0x09, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x03, 0x0a, 0x73, 0x74,
	0x72, 0x65, 0x61, 0x6d, 0x2e, 0x6e, 0x65, 0x77, 0x00, 0x00, 0x0b, 0x73,
	0x74, 0x72, 0x65, 0x61, 0x6d, 0x2e, 0x72, 0x65, 0x61, 0x64, 0x00, 0x01,
	0x0c, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x2e, 0x77, 0x72, 0x69, 0x74,
	0x65, 0x00, 0x02, 0x0b, 0x73, 0x74, 0x72, 0x65, 0x61, 0x6d, 0x2e, 0x64,
	0x72, 0x6f, 0x70, 0x00, 0x03, 0x06, 0x77, 0x73, 0x2e, 0x6e, 0x65, 0x77,
	0x00, 0x04, 0x07, 0x77, 0x73, 0x2e, 0x77, 0x61, 0x69, 0x74, 0x00, 0x05,
	0x04, 0x6a, 0x6f, 0x69, 0x6e, 0x00, 0x06, 0x0b, 0x74, 0x61, 0x73, 0x6b,
	0x2e, 0x72, 0x65, 0x74, 0x75, 0x72, 0x6e, 0x00, 0x07, 0x00, 0x01, 0x01,
	0x00, 0x12, 0x01, 0x07, 0x08, 0x01, 0x43, 0x01, 0x01, 0x73, 0x00, 0x00,
	0x79, 0x06, 0x0d, 0x01, 0x00, 0x00, 0x01, 0x02, 0x07, 0x63, 0x6f, 0x6e,
	0x73, 0x75, 0x6d, 0x65, 0x08, 0x07, 0x01, 0x00, 0x00, 0x08, 0x01, 0x06,
	0x01, 0x07, 0x05, 0x01, 0x40, 0x00, 0x00, 0x00, 0x06, 0x0d, 0x01, 0x00,
	0x00, 0x01, 0x02, 0x07, 0x70, 0x72, 0x6f, 0x64, 0x75, 0x63, 0x65, 0x08,
	0x06, 0x01, 0x00, 0x00, 0x09, 0x00, 0x02, 0x0b, 0x19, 0x02, 0x00, 0x07,
	0x63, 0x6f, 0x6e, 0x73, 0x75, 0x6d, 0x65, 0x01, 0x00, 0x00, 0x00, 0x07,
	0x70, 0x72, 0x6f, 0x64, 0x75, 0x63, 0x65, 0x01, 0x01, 0x00,
};

static int nnotes;

static void on_note(void *env, cm_host_end *e)
{
	(void)e;
	(*(int *)env)++;
}

typedef struct consume_env {
	cm_val arg;
	bool done;
	uint64_t sum;
} consume_env;

static int consume_on_start(void *env, cm_val *args, cabi_error *err)
{
	consume_env *ce = env;

	(void)err;
	args[0] = ce->arg; /* moved into the callee */
	memset(&ce->arg, 0, sizeof ce->arg);
	return 0;
}

static int consume_on_resolve(void *env, cm_val *result, cabi_error *err)
{
	consume_env *ce = env;

	(void)err;
	ck_assert_ptr_nonnull(result);
	ce->done = true;
	ce->sum = result[0].u.u;
	return 0;
}

static cm_component_instance *load_host_stream(cm_store **s, cm_component **c)
{
	cm_component_instance *inst;
	wasm_error werr;
	cm_error err;

	ck_assert_int_eq(cm_component_load(host_stream_wasm,
					   sizeof host_stream_wasm, c, &werr),
			 0);
	*s = new_store(0);
	ck_assert_ptr_nonnull(*s);
	ck_assert_int_eq(cm_instantiate(*s, *c, NULL, &inst, &err), 0);
	return inst;
}

/*
 * The host writes a stream a guest reads: nothing moves before the
 * guest's read is pending, notify says when it is, the guest sees each
 * write as a COMPLETED read event in the next service turn, and the
 * host's drop ends the guest's loop.
 */
START_TEST(host_writes_stream)
{
	cm_component *c;
	cm_store *s;
	cm_component_instance *inst = load_host_stream(&s, &c);
	cm_func *consume = cm_instance_export(inst, NULL, "consume");
	cm_type st;
	cm_host_end *h;
	consume_env env;
	cm_call_cbs cbs = {consume_on_start, consume_on_resolve, &env};
	cm_val bytes[3];
	cm_error err;
	cabi_error ce;
	uint32_t done;

	ck_assert_ptr_nonnull(consume);
	memset(&st, 0, sizeof st);
	st.kind = CM_STREAM;
	st.u.stream.elem = cm_prim(CM_U8);
	memset(&env, 0, sizeof env);
	ck_assert_int_eq(cm_host_stream_new(s, &st, &env.arg, &h, &err), 0);
	nnotes = 0;
	cm_host_end_set_notify(h, on_note, &nnotes);
	/* no reader yet: nothing moves */
	bytes[0] = cm_val_u8(10);
	bytes[1] = cm_val_u8(20);
	bytes[2] = cm_val_u8(12);
	ck_assert_int_eq(cm_host_end_write(h, bytes, 3, &done, &err), 0);
	ck_assert_uint_eq(done, 0);
	ck_assert(!cm_host_end_pending(h));
	/* a value of the wrong type is refused */
	{
		cm_val bad = cm_val_bool(true);

		ck_assert_int_eq(cm_host_end_write(h, &bad, 1, &done, &err),
				 -1);
		ck_assert_int_eq(err.kind, CM_ERR_VALUE);
	}
	memset(&ce, 0, sizeof ce);
	ck_assert_int_eq(cm_canon_lift(s, consume, NULL, NULL, &cbs, NULL, &ce),
			 0);
	/* the guest's read is pending and the host was told */
	ck_assert_int_eq(nnotes, 1);
	ck_assert(cm_host_end_pending(h));
	ck_assert(!env.done);
	ck_assert_int_eq(cm_host_end_write(h, bytes, 2, &done, &err), 0);
	ck_assert_uint_eq(done, 2);
	/* the guest takes the event in a turn and reads again */
	ck_assert_int_ge(cm_store_service_turn(s, 0, &err), 0);
	ck_assert_int_eq(nnotes, 2);
	ck_assert_int_eq(cm_host_end_write(h, bytes + 2, 1, &done, &err), 0);
	ck_assert_uint_eq(done, 1);
	ck_assert_int_ge(cm_store_service_turn(s, 0, &err), 0);
	ck_assert(!env.done);
	/* dropping the host end completes the guest's read DROPPED */
	cm_host_end_drop(h);
	ck_assert_int_ge(cm_store_service_turn(s, 0, &err), 0);
	ck_assert(env.done);
	ck_assert_uint_eq(env.sum, 42);
	cm_store_free(s);
	cm_component_free(c);
}
END_TEST

/*
 * cm_host_end_defer: the notify (inside the guest's stream.read) asks
 * for a call instead of writing; it runs once, at the next service
 * turn's step before any thread, and writes there; asked again, the
 * latest function runs; a dropped end's request never runs.
 */
typedef struct defer_env {
	cm_host_end *h;
	int asked, ran, stale;
	const uint8_t *bytes; /* what is left to write, one a call */
	uint32_t left;
} defer_env;

static void deferred_write(void *env, cm_host_end *e)
{
	defer_env *d = env;
	uint32_t done = 0;
	cm_error err;

	ck_assert_ptr_eq(e, d->h);
	d->ran++;
	if (d->left == 0)
		return; /* nothing more: the guest's read stays pending */
	{
		cm_val v = cm_val_u8(*d->bytes);

		ck_assert_int_eq(cm_host_end_write(e, &v, 1, &done, &err), 0);
	}
	ck_assert_uint_eq(done, 1);
	d->bytes++;
	d->left--;
}

static void deferred_stale(void *env, cm_host_end *e)
{
	(void)e;
	((defer_env *)env)->stale++;
}

static void defer_note(void *env, cm_host_end *e)
{
	defer_env *d = env;

	d->asked++;
	if (cm_host_end_pending(e)) {
		/* asked twice: the latest function runs, once */
		ck_assert_int_eq(cm_host_end_defer(e, deferred_stale, d), 0);
		ck_assert_int_eq(cm_host_end_defer(e, deferred_write, d), 0);
	}
}

START_TEST(host_defers_write)
{
	static const uint8_t bytes[] = {40, 2};
	cm_component *c;
	cm_store *s;
	cm_component_instance *inst = load_host_stream(&s, &c);
	cm_func *consume = cm_instance_export(inst, NULL, "consume");
	cm_type st;
	defer_env d;
	consume_env env;
	cm_call_cbs cbs = {consume_on_start, consume_on_resolve, &env};
	cm_error err;
	cabi_error ce;

	memset(&st, 0, sizeof st);
	st.kind = CM_STREAM;
	st.u.stream.elem = cm_prim(CM_U8);
	memset(&env, 0, sizeof env);
	memset(&d, 0, sizeof d);
	d.bytes = bytes;
	d.left = 2;
	ck_assert_int_eq(cm_host_stream_new(s, &st, &env.arg, &d.h, &err), 0);
	cm_host_end_set_notify(d.h, defer_note, &d);
	memset(&ce, 0, sizeof ce);
	ck_assert_int_eq(cm_canon_lift(s, consume, NULL, NULL, &cbs, NULL, &ce),
			 0);
	/* asked inside the guest's read, not run there */
	ck_assert_int_eq(d.asked, 1);
	ck_assert_int_eq(d.ran, 0);
	/* one turn: each write is taken, the guest reads again, asks again;
	 * the third call has nothing to write and the turn ends */
	ck_assert_int_ge(cm_store_service_turn(s, 0, &err), 0);
	ck_assert_int_eq(d.stale, 0);
	ck_assert_int_eq(d.ran, 3);
	ck_assert_int_eq(d.asked, 3);
	ck_assert(!env.done);
	/* asked again now, then the end is dropped before the turn: the
	 * request never runs, and the guest's read completes DROPPED */
	ck_assert_int_eq(cm_host_end_defer(d.h, deferred_write, &d), 0);
	cm_host_end_drop(d.h);
	ck_assert_int_ge(cm_store_service_turn(s, 0, &err), 0);
	ck_assert_int_eq(d.ran, 3);
	ck_assert(env.done);
	ck_assert_uint_eq(env.sum, 42);
	cm_store_free(s);
	cm_component_free(c);
}
END_TEST

/*
 * The host reads a stream a guest returned: it takes the readable end
 * out of the result value, reads what the guest's pending write holds,
 * and learns of nothing more until the guest writes again.
 */
START_TEST(host_reads_stream)
{
	cm_component *c;
	cm_store *s;
	cm_component_instance *inst = load_host_stream(&s, &c);
	cm_func *produce = cm_instance_export(inst, NULL, "produce");
	cm_val res[1], got[8];
	uint32_t nres, done;
	cm_host_end *h;
	cm_error err;

	ck_assert_ptr_nonnull(produce);
	ck_assert_int_eq(cm_invoke(s, produce, NULL, 0, res, &nres, &err), 0);
	ck_assert_uint_eq(nres, 1);
	ck_assert_int_eq(res[0].kind, CM_STREAM);
	h = cm_host_end_take(s, &res[0]);
	ck_assert_ptr_nonnull(h);
	/* taken once: the value no longer carries it */
	ck_assert_ptr_null(cm_host_end_take(s, &res[0]));
	/* a readable end cannot be written */
	ck_assert_int_eq(cm_host_end_write(h, got, 0, &done, &err), -1);
	ck_assert(cm_host_end_pending(h));
	ck_assert_int_eq(cm_host_end_read(h, got, 3, &done, &err), 0);
	ck_assert_uint_eq(done, 3);
	ck_assert_uint_eq(got[0].u.u, 1);
	ck_assert_uint_eq(got[2].u.u, 3);
	ck_assert_int_eq(cm_host_end_read(h, got, 8, &done, &err), 0);
	ck_assert_uint_eq(done, 1);
	ck_assert_uint_eq(got[0].u.u, 4);
	/* the guest's buffer is used up: its write completes, nothing more */
	ck_assert_int_eq(cm_host_end_read(h, got, 8, &done, &err), 0);
	ck_assert_uint_eq(done, 0);
	ck_assert(!cm_host_end_pending(h));
	ck_assert(!cm_host_end_peer_dropped(h));
	cm_host_end_drop(h);
	cm_store_free(s);
	cm_component_free(c);
}
END_TEST

/*
 * No leak after 10,000 calls that create and drop a stream, a future, a
 * waitable set and a subtask (issue 5): the store tracks the same number
 * of runtime objects after the 10,000th call as after the 10th, and a
 * sanitizer build reports nothing at teardown.  The component (WAT,
 * converted ahead of time with `jco parse`, custom sections stripped):
 * $C exports `block: async func()`, a callback task that waits on an
 * empty waitable set until cancelled, then task.cancel; $D imports it
 * and exports `churn: func() -> u32`: stream.new, drop both ends;
 * future.new, drop-readable, future.write (DROPPED), drop-writable;
 * waitable-set.new/drop; async-lower `block` (STARTED, a subtask),
 * subtask.cancel async (4: the callee ran its cancellation at once),
 * subtask.drop; returns 7.
 */
static const uint8_t churn_wasm[] = {
	0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x04, 0xa1, 0x02, 0x00,
	0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x01, 0x16, 0x00, 0x61, 0x73,
	0x6d, 0x01, 0x00, 0x00, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x07,
	0x01, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00, 0x02, 0x04, 0x01, 0x00, 0x00,
	0x00, 0x08, 0x04, 0x03, 0x1f, 0x22, 0x05, 0x01, 0x8d, 0x01, 0x00, 0x61,
	0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x13, 0x04, 0x60, 0x00, 0x01,
	0x7f, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x00, 0x00, 0x60, 0x03, 0x7f, 0x7f,
	0x7f, 0x01, 0x7f, 0x02, 0x25, 0x03, 0x00, 0x06, 0x77, 0x73, 0x2e, 0x6e,
	0x65, 0x77, 0x00, 0x00, 0x00, 0x07, 0x77, 0x73, 0x2e, 0x64, 0x72, 0x6f,
	0x70, 0x00, 0x01, 0x00, 0x0b, 0x74, 0x61, 0x73, 0x6b, 0x2e, 0x63, 0x61,
	0x6e, 0x63, 0x65, 0x6c, 0x00, 0x02, 0x03, 0x03, 0x02, 0x00, 0x03, 0x06,
	0x06, 0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x07, 0x14, 0x02, 0x05, 0x62,
	0x6c, 0x6f, 0x63, 0x6b, 0x00, 0x03, 0x08, 0x62, 0x6c, 0x6f, 0x63, 0x6b,
	0x2d, 0x63, 0x62, 0x00, 0x04, 0x0a, 0x24, 0x02, 0x0e, 0x00, 0x10, 0x00,
	0x24, 0x00, 0x41, 0x02, 0x23, 0x00, 0x41, 0x04, 0x74, 0x72, 0x0b, 0x13,
	0x00, 0x20, 0x00, 0x41, 0x06, 0x47, 0x04, 0x40, 0x00, 0x0b, 0x10, 0x02,
	0x23, 0x00, 0x10, 0x01, 0x41, 0x00, 0x0b, 0x02, 0x2a, 0x02, 0x01, 0x03,
	0x06, 0x77, 0x73, 0x2e, 0x6e, 0x65, 0x77, 0x00, 0x00, 0x07, 0x77, 0x73,
	0x2e, 0x64, 0x72, 0x6f, 0x70, 0x00, 0x01, 0x0b, 0x74, 0x61, 0x73, 0x6b,
	0x2e, 0x63, 0x61, 0x6e, 0x63, 0x65, 0x6c, 0x00, 0x02, 0x00, 0x01, 0x01,
	0x00, 0x12, 0x01, 0x07, 0x05, 0x01, 0x43, 0x00, 0x01, 0x00, 0x06, 0x18,
	0x02, 0x00, 0x00, 0x01, 0x02, 0x05, 0x62, 0x6c, 0x6f, 0x63, 0x6b, 0x00,
	0x00, 0x01, 0x02, 0x08, 0x62, 0x6c, 0x6f, 0x63, 0x6b, 0x2d, 0x63, 0x62,
	0x08, 0x09, 0x01, 0x00, 0x00, 0x03, 0x02, 0x06, 0x07, 0x04, 0x00, 0x0b,
	0x0b, 0x01, 0x00, 0x05, 0x62, 0x6c, 0x6f, 0x63, 0x6b, 0x01, 0x00, 0x00,
	0x04, 0xa5, 0x04, 0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00, 0x07,
	0x05, 0x01, 0x43, 0x00, 0x01, 0x00, 0x0a, 0x0a, 0x01, 0x00, 0x05, 0x62,
	0x6c, 0x6f, 0x63, 0x6b, 0x01, 0x00, 0x01, 0x16, 0x00, 0x61, 0x73, 0x6d,
	0x01, 0x00, 0x00, 0x00, 0x05, 0x03, 0x01, 0x00, 0x01, 0x07, 0x07, 0x01,
	0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00, 0x02, 0x04, 0x01, 0x00, 0x00, 0x00,
	0x07, 0x07, 0x02, 0x66, 0x01, 0x7d, 0x65, 0x01, 0x7d, 0x08, 0x0e, 0x05,
	0x01, 0x00, 0x00, 0x01, 0x06, 0x0e, 0x01, 0x13, 0x01, 0x14, 0x01, 0x15,
	0x02, 0x06, 0x09, 0x01, 0x00, 0x02, 0x01, 0x00, 0x03, 0x6d, 0x65, 0x6d,
	0x08, 0x10, 0x07, 0x17, 0x02, 0x02, 0x06, 0x03, 0x00, 0x1a, 0x02, 0x1b,
	0x02, 0x1f, 0x22, 0x06, 0x01, 0x0d, 0x01, 0x98, 0x02, 0x00, 0x61, 0x73,
	0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x18, 0x05, 0x60, 0x00, 0x01, 0x7f,
	0x60, 0x00, 0x01, 0x7e, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x02, 0x7f, 0x7f,
	0x01, 0x7f, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x02, 0x74, 0x0c, 0x00, 0x05,
	0x62, 0x6c, 0x6f, 0x63, 0x6b, 0x00, 0x00, 0x00, 0x05, 0x73, 0x2e, 0x6e,
	0x65, 0x77, 0x00, 0x01, 0x00, 0x04, 0x73, 0x2e, 0x64, 0x72, 0x00, 0x02,
	0x00, 0x04, 0x73, 0x2e, 0x64, 0x77, 0x00, 0x02, 0x00, 0x05, 0x66, 0x2e,
	0x6e, 0x65, 0x77, 0x00, 0x01, 0x00, 0x07, 0x66, 0x2e, 0x77, 0x72, 0x69,
	0x74, 0x65, 0x00, 0x03, 0x00, 0x04, 0x66, 0x2e, 0x64, 0x72, 0x00, 0x02,
	0x00, 0x04, 0x66, 0x2e, 0x64, 0x77, 0x00, 0x02, 0x00, 0x06, 0x77, 0x73,
	0x2e, 0x6e, 0x65, 0x77, 0x00, 0x00, 0x00, 0x07, 0x77, 0x73, 0x2e, 0x64,
	0x72, 0x6f, 0x70, 0x00, 0x02, 0x00, 0x09, 0x73, 0x74, 0x2e, 0x63, 0x61,
	0x6e, 0x63, 0x65, 0x6c, 0x00, 0x04, 0x00, 0x07, 0x73, 0x74, 0x2e, 0x64,
	0x72, 0x6f, 0x70, 0x00, 0x02, 0x03, 0x02, 0x01, 0x00, 0x07, 0x09, 0x01,
	0x05, 0x63, 0x68, 0x75, 0x72, 0x6e, 0x00, 0x0c, 0x0a, 0x6f, 0x01, 0x6d,
	0x02, 0x01, 0x7e, 0x02, 0x7f, 0x10, 0x01, 0x21, 0x00, 0x20, 0x00, 0xa7,
	0x10, 0x02, 0x20, 0x00, 0x42, 0x20, 0x88, 0xa7, 0x10, 0x03, 0x10, 0x04,
	0x21, 0x00, 0x20, 0x00, 0xa7, 0x10, 0x06, 0x20, 0x00, 0x42, 0x20, 0x88,
	0xa7, 0x41, 0x00, 0x10, 0x05, 0x21, 0x01, 0x20, 0x01, 0x41, 0x01, 0x47,
	0x04, 0x40, 0x00, 0x0b, 0x20, 0x00, 0x42, 0x20, 0x88, 0xa7, 0x10, 0x07,
	0x10, 0x08, 0x10, 0x09, 0x10, 0x00, 0x21, 0x01, 0x20, 0x01, 0x41, 0x0f,
	0x71, 0x41, 0x01, 0x47, 0x04, 0x40, 0x00, 0x0b, 0x20, 0x01, 0x41, 0x04,
	0x76, 0x21, 0x02, 0x20, 0x02, 0x10, 0x0a, 0x21, 0x01, 0x20, 0x01, 0x41,
	0x04, 0x47, 0x04, 0x40, 0x00, 0x0b, 0x20, 0x02, 0x10, 0x0b, 0x41, 0x07,
	0x0b, 0x02, 0x70, 0x02, 0x01, 0x0c, 0x05, 0x62, 0x6c, 0x6f, 0x63, 0x6b,
	0x00, 0x00, 0x05, 0x73, 0x2e, 0x6e, 0x65, 0x77, 0x00, 0x01, 0x04, 0x73,
	0x2e, 0x64, 0x72, 0x00, 0x02, 0x04, 0x73, 0x2e, 0x64, 0x77, 0x00, 0x03,
	0x05, 0x66, 0x2e, 0x6e, 0x65, 0x77, 0x00, 0x04, 0x07, 0x66, 0x2e, 0x77,
	0x72, 0x69, 0x74, 0x65, 0x00, 0x05, 0x04, 0x66, 0x2e, 0x64, 0x72, 0x00,
	0x06, 0x04, 0x66, 0x2e, 0x64, 0x77, 0x00, 0x07, 0x06, 0x77, 0x73, 0x2e,
	0x6e, 0x65, 0x77, 0x00, 0x08, 0x07, 0x77, 0x73, 0x2e, 0x64, 0x72, 0x6f,
	0x70, 0x00, 0x09, 0x09, 0x73, 0x74, 0x2e, 0x63, 0x61, 0x6e, 0x63, 0x65,
	0x6c, 0x00, 0x0a, 0x07, 0x73, 0x74, 0x2e, 0x64, 0x72, 0x6f, 0x70, 0x00,
	0x0b, 0x00, 0x01, 0x01, 0x00, 0x12, 0x01, 0x07, 0x05, 0x01, 0x40, 0x00,
	0x00, 0x79, 0x06, 0x0b, 0x01, 0x00, 0x00, 0x01, 0x02, 0x05, 0x63, 0x68,
	0x75, 0x72, 0x6e, 0x08, 0x06, 0x01, 0x00, 0x00, 0x0c, 0x00, 0x03, 0x0b,
	0x0b, 0x01, 0x00, 0x05, 0x63, 0x68, 0x75, 0x72, 0x6e, 0x01, 0x01, 0x00,
	0x05, 0x04, 0x01, 0x00, 0x00, 0x00, 0x06, 0x0a, 0x01, 0x01, 0x00, 0x00,
	0x05, 0x62, 0x6c, 0x6f, 0x63, 0x6b, 0x05, 0x0c, 0x01, 0x00, 0x01, 0x01,
	0x05, 0x62, 0x6c, 0x6f, 0x63, 0x6b, 0x01, 0x00, 0x06, 0x0a, 0x01, 0x01,
	0x00, 0x01, 0x05, 0x63, 0x68, 0x75, 0x72, 0x6e, 0x0b, 0x0b, 0x01, 0x00,
	0x05, 0x63, 0x68, 0x75, 0x72, 0x6e, 0x01, 0x01, 0x00,
};

static uint32_t tracked(cm_store *s)
{
	uint32_t n = 0;

	for (cm_store_obj *o = s->objs.next; o != &s->objs; o = o->next)
		n++;
	return n;
}

START_TEST(churn_does_not_leak)
{
	cm_component *c;
	cm_component_instance *inst;
	cm_store *s = new_store(0);
	wasm_error werr;
	cm_error err;
	cm_func *churn;
	uint32_t after10 = 0;

	ck_assert_int_eq(
		cm_component_load(churn_wasm, sizeof churn_wasm, &c, &werr), 0);
	ck_assert_int_eq(cm_instantiate(s, c, NULL, &inst, &err), 0);
	churn = cm_instance_export(inst, NULL, "churn");
	ck_assert_ptr_nonnull(churn);
	for (int i = 1; i <= 10000; i++) {
		cm_val res[1];
		uint32_t nres;

		ck_assert_int_eq(cm_invoke(s, churn, NULL, 0, res, &nres, &err),
				 0);
		ck_assert_uint_eq(nres, 1);
		ck_assert_uint_eq(res[0].u.u, 7);
		if (i == 10)
			after10 = tracked(s);
	}
	ck_assert_uint_eq(tracked(s), after10);
	ck_assert_ptr_null(s->wfirst);
	cm_store_free(s);
	cm_component_free(c);
}
END_TEST

static int ndisposed;

static void count_dispose(cm_store_obj *o)
{
	(void)o;
	ndisposed++;
}

/*
 * Teardown ownership (store.h cm_store_obj): what is still tracked when
 * the store goes is disposed of once; what was untracked (freed
 * normally) is not touched again.  The waiting thread left behind is
 * released with its exec (a sanitizer build would report it otherwise).
 */
START_TEST(store_disposes_tracked_objects)
{
	cm_store *s = new_store(0);
	cm_component_instance inst;
	cm_store_obj a, b, c;

	memset(&inst, 0, sizeof inst);
	inst.store = s;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	memset(&c, 0, sizeof c);
	cm_store_track(s, &a, count_dispose);
	cm_store_track(s, &b, count_dispose);
	cm_store_track(s, &c, count_dispose);
	cm_store_untrack(&b);
	cm_store_untrack(&b); /* a second untrack is harmless */
	ck_assert_ptr_null(b.next);
	(void)waiting(&inst, never);
	ndisposed = 0;
	cm_store_free(s);
	ck_assert_int_eq(ndisposed, 2);
}
END_TEST

Suite *make_suite(void)
{
	Suite *su = suite_create("sched");
	TCase *tc = tcase_create("scheduler");

	tcase_add_test(tc, service_requests_coalesce);
	tcase_add_test(tc, pick_skips_unready);
	tcase_add_test(tc, seeded_pick_is_reproducible);
	tcase_add_test(tc, deadlock_detected);
	tcase_add_test(tc, sync_pick_excludes_stack_users);
	tcase_add_test(tc, may_block_needs_another_ready_thread);
	tcase_add_test(tc, host_settle_between_calls);
	tcase_add_test(tc, host_settle_trap_and_teardown);
	tcase_add_test(tc, host_defer_refused_on_sync_path);
	tcase_add_test(tc, turn_fuel_suspends_thread);
	tcase_add_test(tc, store_disposes_tracked_objects);
	tcase_add_test(tc, host_writes_stream);
	tcase_add_test(tc, host_defers_write);
	tcase_add_test(tc, host_reads_stream);
	tcase_add_test(tc, churn_does_not_leak);
	tcase_add_test(tc, host_calls_are_observed);
	suite_add_tcase(su, tc);
	return su;
}
