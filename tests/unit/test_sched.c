/*
 * test_sched.c - the per-store scheduler of runtime/sched (thread.c):
 * coalesced service requests, FIFO and seeded picking among ready
 * threads, running a thread through its continuation, and deadlock
 * detection of the host driver.  Threads here carry no guest code: their
 * continuations are C functions, which is exactly what the scheduler
 * sees of a blocked thread.
 */
#include <string.h>

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

Suite *make_suite(void)
{
	Suite *su = suite_create("sched");
	TCase *tc = tcase_create("scheduler");

	tcase_add_test(tc, service_requests_coalesce);
	tcase_add_test(tc, pick_skips_unready);
	tcase_add_test(tc, seeded_pick_is_reproducible);
	tcase_add_test(tc, deadlock_detected);
	suite_add_tcase(su, tc);
	return su;
}
