/*
 * test_sched.c - the per-store scheduler of runtime/sched (thread.c):
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

#include "component/instance.h"
#include "component/rt.h"
#include "sched/sched.h"
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

/* ---- host calls that complete later, service turns ------------------ */

static cm_host_pending *held[2];
static int nheld, ncancels;

static void on_cancel(void *env, cm_host_pending *p)
{
	(void)env;
	(void)p;
	ncancels++;
}

/* A host import that always answers later (a clock wait, I/O). */
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
	cm_host_pending_set_cancel(p, on_cancel, NULL);
	held[nheld++] = p;
	return CM_HOST_PENDING;
}

static bool subtask_returned(cm_thread *t)
{
	const cm_asubtask *st = t->wait_obj;

	return st->base.state == CM_SUBTASK_RETURNED;
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
}

/* The guest's async lower of the host import: STARTED, a subtask. */
static cm_asubtask *lower_async(host_fixture *fx, uint32_t *index)
{
	wasm_val args[1] = {{0}}, res[1];
	cabi_elem *el;

	ck_assert_int_eq(cm_canon_lower_async(fx->e, &fx->inst, &fx->host,
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
	cm_asubtask_free(el.u.obj);
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
	cm_asubtask *st0, *st1;
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
	ck_assert_int_eq(st0->base.state, CM_SUBTASK_STARTED);
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
	ck_assert_int_eq(st0->base.state, CM_SUBTASK_RETURNED);
	ck_assert_int_eq(st1->base.state, CM_SUBTASK_RETURNED);
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
	tcase_add_test(tc, host_settle_between_calls);
	tcase_add_test(tc, host_settle_trap_and_teardown);
	tcase_add_test(tc, host_defer_refused_on_sync_path);
	tcase_add_test(tc, turn_fuel_suspends_thread);
	tcase_add_test(tc, store_disposes_tracked_objects);
	suite_add_tcase(su, tc);
	return su;
}
