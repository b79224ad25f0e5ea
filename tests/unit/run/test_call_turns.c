/*
 * test_call_turns.c - calls that run in service turns (cm_call_start,
 * run/instance.h; runtime/run/invoke.c), in-process: the
 * counter component of tests/guests/mkcomponent (written by that program
 * from $HOSTEL_BUILDDIR, so the bytes are the daemon tests' own).
 *
 * What is pinned: a call begins only in a turn and its on_done runs
 * once, at the end of the turn that decided it; an endless loop is
 * parked by every turn and never stops another store's calls; a
 * per-call fuel budget spans turns and then traps; cancelling a call
 * that has not begun leaves the store untouched, cancelling a running
 * one traps it, poisons the instance and halts its threads.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "component/component.h"
#include "run/instance.h"
#include "testmain.h"

#define TURN_FUEL 10000

static void *bytes;
static size_t nbytes;

/* The counter component, built once by mkcomponent. */
static int load_counter(void)
{
	const char *b = getenv("HOSTEL_BUILDDIR");
	char tmpl[] = "/tmp/test-call-turns.XXXXXX";
	char cmd[1024];
	FILE *f;
	long n;
	int fd;

	if (bytes)
		return 0;
	fd = mkstemp(tmpl);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "'%s/tests/guests/mkcomponent' counter '%s'",
		 b ? b : ".", tmpl);
	if (system(cmd) != 0)
		return -1;
	f = fopen(tmpl, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	bytes = malloc((size_t)n);
	if (bytes && fread(bytes, 1, (size_t)n, f) == (size_t)n)
		nbytes = (size_t)n;
	fclose(f);
	unlink(tmpl);
	return nbytes ? 0 : -1;
}

struct svc {
	cm_component *comp;
	cm_store *store;
	cm_component_instance *inst;
	int requests; /* request_service calls */
};

static void wants_service(void *env)
{
	((struct svc *)env)->requests++;
}

static void svc_new(struct svc *v)
{
	cm_store_config cfg;
	wasm_error werr;
	cm_error err;

	memset(v, 0, sizeof(*v));
	memset(&cfg, 0, sizeof(cfg));
	cfg.request_service = wants_service;
	cfg.service_env = v;
	cfg.turn_fuel = TURN_FUEL;
	ck_assert_int_eq(load_counter(), 0);
	ck_assert_int_eq(cm_component_load(bytes, nbytes, &v->comp, &werr), 0);
	v->store = cm_store_new(&cfg);
	ck_assert_ptr_nonnull(v->store);
	ck_assert_int_eq(
		cm_instantiate(v->store, v->comp, NULL, &v->inst, &err), 0);
}

static void svc_free(struct svc *v)
{
	cm_store_free(v->store);
	cm_component_free(v->comp);
}

struct done {
	int calls;
	cm_call_outcome outcome;
	uint32_t value, nresults;
	char msg[CM_ERROR_MSG_MAX];
};

static void on_done(void *ctx, cm_call_outcome outcome, const cm_val *results,
		    uint32_t nresults, const cm_error *err)
{
	struct done *d = ctx;

	d->calls++;
	d->outcome = outcome;
	d->nresults = nresults;
	if (nresults == 1)
		d->value = (uint32_t)results[0].u.u;
	snprintf(d->msg, sizeof(d->msg), "%s", err ? err->msg : "");
}

static cm_call *start(struct svc *v, const char *name, uint64_t fuel,
		      struct done *d)
{
	cm_func *f = cm_instance_export(v->inst, NULL, name);
	cm_call *c = NULL;
	cm_error err;

	ck_assert_ptr_nonnull(f);
	memset(d, 0, sizeof(*d));
	ck_assert_int_eq(
		cm_call_start(v->store, f, NULL, 0, fuel, on_done, d, &c, &err),
		0);
	ck_assert_ptr_nonnull(c);
	return c;
}

static int turn(struct svc *v)
{
	cm_error err;

	return cm_store_service_turn(v->store, 0, &err);
}

START_TEST(returns_at_the_end_of_its_turn)
{
	struct svc v;
	struct done d;

	svc_new(&v);
	start(&v, "inc", 0, &d);
	ck_assert_int_eq(d.calls, 0); /* no guest code before a turn */
	ck_assert_int_ge(v.requests, 1);
	ck_assert_int_eq(turn(&v), 0);
	ck_assert_int_eq(d.calls, 1);
	ck_assert_int_eq(d.outcome, CM_CALL_RETURNED);
	ck_assert_uint_eq(d.nresults, 1);
	ck_assert_uint_eq(d.value, 1);
	start(&v, "inc", 0, &d);
	ck_assert_int_eq(turn(&v), 0);
	ck_assert_uint_eq(d.value, 2); /* state kept between calls */
	svc_free(&v);
}
END_TEST

START_TEST(a_spinner_is_parked_by_every_turn)
{
	struct svc a, b;
	struct done spin, other;

	svc_new(&a);
	svc_new(&b);
	start(&a, "spin", 0, &spin);
	for (int i = 0; i < 50; i++) {
		/* work remains: the turn asks for another */
		ck_assert_int_eq(turn(&a), 1);
		ck_assert_int_eq(spin.calls, 0);
		start(&b, "inc", 0, &other);
		ck_assert_int_eq(turn(&b), 0);
		ck_assert_int_eq(other.outcome, CM_CALL_RETURNED);
		ck_assert_uint_eq(other.value, (uint32_t)i + 1);
	}
	svc_free(&a);
	svc_free(&b);
}
END_TEST

START_TEST(fuel_per_call_spans_turns)
{
	struct svc v;
	struct done d;
	int turns = 0;

	svc_new(&v);
	start(&v, "spin", 5 * TURN_FUEL + TURN_FUEL / 2, &d);
	while (d.calls == 0 && turns < 100) {
		turn(&v);
		turns++;
	}
	ck_assert_int_eq(d.calls, 1);
	ck_assert_int_eq(turns, 6); /* 5 whole turns and a half one */
	ck_assert_int_eq(d.outcome, CM_CALL_TRAPPED);
	ck_assert_str_eq(d.msg, "wasm trap: all fuel consumed");
	ck_assert(cm_instance_poisoned(v.inst));
	ck_assert_int_eq(turn(&v), 0); /* its thread never runs again */
	svc_free(&v);
}
END_TEST

/*
 * The spec never preempts a thread: a call parked mid-code by the turn's
 * fuel continues before any other thread of the store runs, so a second
 * call to the same instance cannot slip in between two of its turns.
 */
START_TEST(a_parked_call_is_not_interleaved)
{
	struct svc v;
	struct done spin, inc;

	svc_new(&v);
	start(&v, "spin", 3 * TURN_FUEL + TURN_FUEL / 2, &spin);
	ck_assert_int_eq(turn(&v), 1); /* spin begins and is parked */
	start(&v, "inc", 0, &inc);
	while (spin.calls == 0) {
		turn(&v);
		ck_assert_int_eq(inc.calls, 0);
	}
	ck_assert_int_eq(spin.outcome, CM_CALL_TRAPPED);
	/* the spinner's trap poisoned the instance: inc never ran */
	while (turn(&v) > 0)
		;
	ck_assert(inc.calls == 0 || inc.outcome != CM_CALL_RETURNED);
	svc_free(&v);
}
END_TEST

/*
 * A quick call with a small budget, started beside an endless one in the
 * same store, returns and is not trapped by the fuel the other one goes
 * on spending (each turn's fuel is charged to the call that spent it).
 */
START_TEST(fuel_is_charged_to_the_call_that_spent_it)
{
	struct svc a;
	struct done spin, inc;

	svc_new(&a);
	start(&a, "inc", 2 * TURN_FUEL, &inc);
	start(&a, "spin", 0, &spin);
	for (int i = 0; i < 10; i++)
		turn(&a);
	ck_assert_int_eq(inc.calls, 1);
	ck_assert_int_eq(inc.outcome, CM_CALL_RETURNED);
	ck_assert_int_eq(spin.calls, 0); /* unlimited: still running */
	svc_free(&a);
}
END_TEST

START_TEST(cancel_before_it_begins_leaves_the_store)
{
	struct svc v;
	struct done d, e;
	cm_call *c;

	svc_new(&v);
	c = start(&v, "inc", 0, &d);
	ck_assert(!cm_call_started(c));
	ck_assert_int_eq(cm_call_cancel(c, "deadline exceeded"),
			 CM_CALL_CANCELLED);
	ck_assert_int_eq(d.calls, 1);
	ck_assert_str_eq(d.msg, "deadline exceeded");
	ck_assert_int_eq(turn(&v), 0);
	ck_assert_int_eq(d.calls, 1); /* once */
	start(&v, "get", 0, &e);
	ck_assert_int_eq(turn(&v), 0);
	ck_assert_uint_eq(e.value, 0); /* inc never ran */
	ck_assert(!cm_instance_poisoned(v.inst));
	svc_free(&v);
}
END_TEST

START_TEST(cancel_a_running_call_traps_it)
{
	struct svc v;
	struct done d, e;
	cm_call *c;

	svc_new(&v);
	c = start(&v, "spin", 0, &d);
	ck_assert_int_eq(turn(&v), 1);
	ck_assert(cm_call_started(c));
	ck_assert_int_eq(cm_call_cancel(c, "deadline exceeded"),
			 CM_CALL_TRAPPED);
	ck_assert_int_eq(d.calls, 1);
	ck_assert_str_eq(d.msg, "deadline exceeded");
	ck_assert(cm_instance_poisoned(v.inst));
	ck_assert_int_eq(turn(&v), 0); /* halted: nothing left to run */
	start(&v, "get", 0, &e);
	turn(&v);
	ck_assert_int_eq(e.outcome, CM_CALL_TRAPPED);
	ck_assert_ptr_nonnull(strstr(e.msg, "cannot enter component instance"));
	svc_free(&v);
}
END_TEST

/* A graceful stop's first step: only what stops no guest code midway. */
START_TEST(end_clean_ends_only_what_has_not_begun)
{
	struct svc v;
	struct done d, q, e;
	cm_call *spin, *inc;

	svc_new(&v);
	spin = start(&v, "spin", 0, &d);
	ck_assert_int_eq(turn(&v), 1);
	inc = start(&v, "inc", 0, &q); /* queued, never begun */
	ck_assert(cm_call_end_clean(inc, "hosteld is stopping"));
	ck_assert_int_eq(q.calls, 1);
	ck_assert_int_eq(q.outcome, CM_CALL_CANCELLED);
	ck_assert_str_eq(q.msg, "hosteld is stopping");
	ck_assert(!cm_call_end_clean(spin, "hosteld is stopping"));
	ck_assert_int_eq(d.calls, 0); /* left as it was: nothing decided */
	ck_assert(!cm_instance_poisoned(v.inst));
	ck_assert_int_eq(turn(&v), 1); /* it spins on */
	ck_assert_int_eq(d.calls, 0);
	/* let go of: no on_done any more, and the store frees it */
	cm_call_set_done(spin, NULL, NULL);
	start(&v, "get", 0, &e);
	ck_assert_int_eq(turn(&v), 1);
	svc_free(&v); /* ASan: nothing leaks */
	ck_assert_int_eq(d.calls, 0);
}
END_TEST

START_TEST(a_trap_ends_its_call)
{
	struct svc v;
	struct done d;

	svc_new(&v);
	start(&v, "boom", 0, &d);
	turn(&v);
	ck_assert_int_eq(d.calls, 1);
	ck_assert_int_eq(d.outcome, CM_CALL_TRAPPED);
	ck_assert_ptr_nonnull(strstr(d.msg, "unreachable"));
	ck_assert(cm_instance_poisoned(v.inst));
	svc_free(&v);
}
END_TEST

START_TEST(bad_arguments_start_nothing)
{
	struct svc v;
	cm_func *f;
	cm_call *c = NULL;
	cm_error err;
	cm_val arg;

	svc_new(&v);
	f = cm_instance_export(v.inst, NULL, "add");
	ck_assert_ptr_nonnull(f);
	memset(&arg, 0, sizeof(arg));
	arg.kind = CM_STRING;
	ck_assert_int_eq(
		cm_call_start(v.store, f, &arg, 1, 0, on_done, NULL, &c, &err),
		-1);
	ck_assert_int_eq(err.kind, CM_ERR_VALUE);
	ck_assert_ptr_null(c);
	svc_free(&v);
}
END_TEST

START_TEST(a_freed_store_frees_its_calls)
{
	struct svc v;
	struct done d;

	svc_new(&v);
	start(&v, "spin", 0, &d);
	ck_assert_int_eq(turn(&v), 1);
	start(&v, "inc", 0, &d); /* queued behind it, never begun */
	svc_free(&v);		 /* ASan: nothing leaks, no on_done */
	ck_assert_int_eq(d.calls, 0);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("call_turns");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, returns_at_the_end_of_its_turn);
	tcase_add_test(tc, a_spinner_is_parked_by_every_turn);
	tcase_add_test(tc, fuel_per_call_spans_turns);
	tcase_add_test(tc, a_parked_call_is_not_interleaved);
	tcase_add_test(tc, fuel_is_charged_to_the_call_that_spent_it);
	tcase_add_test(tc, cancel_before_it_begins_leaves_the_store);
	tcase_add_test(tc, cancel_a_running_call_traps_it);
	tcase_add_test(tc, end_clean_ends_only_what_has_not_begun);
	tcase_add_test(tc, a_trap_ends_its_call);
	tcase_add_test(tc, bad_arguments_start_nothing);
	tcase_add_test(tc, a_freed_store_frees_its_calls);
	suite_add_tcase(s, tc);
	return s;
}
