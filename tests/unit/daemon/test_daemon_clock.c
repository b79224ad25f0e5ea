/*
 * test_daemon_clock.c - daemon/clock.h: WASI 0.3 waits woken by libevent
 * timers.  Each test plays hosteld's settlement pump on a real event
 * loop: the store's request_service activates a service event whose
 * callback runs cm_store_service_turn, calls run through cm_call_start,
 * and the guest (tests/guests/async/sleep.wasm) waits on
 * wasi:clocks/monotonic-clock@0.3.0.  The waits must end on time (never
 * early), by timer wake-ups (never by a blocked loop or a busy one), and
 * a store freed with waits pending must leave no timer behind.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "component/component.h"
#include "run/instance.h"
#include "daemon/clock.h"
#include "wasi/wasi.h"

#include "guest-load.h"
#include "testmain.h"

#define NCALLS 4

struct fixture {
	struct event_base *base;
	struct event *ev_service;
	wasi_ctx *ctx;
	struct daemon_clock *clock;
	cm_linker *linker;
	cm_component *comp;
	cm_store *store;
	cm_component_instance *inst;
	int turns, requests, pending_calls;
	/* per call */
	bool done[NCALLS];
	cm_call_outcome outcome[NCALLS];
	uint64_t slept_ns[NCALLS];
	uint64_t ended_ns[NCALLS];
};

/*
 * HOSTEL_SLOW (scripts/test --valgrind exports it): how many times
 * longer the waits of concurrent_waits_share_one_timer are.  Its order
 * checks need each wait to end within the gap between two deadlines;
 * under Valgrind a turn takes tens of milliseconds, so the gaps grow.
 */
static uint64_t slow(void)
{
	const char *s = getenv("HOSTEL_SLOW");
	long v = s ? strtol(s, NULL, 10) : 1;

	return v > 0 ? (uint64_t)v : 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* hosteld's service event: one bounded turn per activation. */
static void service_turn(evutil_socket_t fd, short what, void *arg)
{
	struct fixture *fx = arg;
	cm_error err;

	(void)fd;
	(void)what;
	fx->turns++;
	memset(&err, 0, sizeof err);
	ck_assert_msg(cm_store_service_turn(fx->store, 0, &err) >= 0,
		      "service turn trapped: %s", err.msg);
}

static void request_service(void *env)
{
	struct fixture *fx = env;

	fx->requests++;
	if (!event_pending(fx->ev_service, EV_TIMEOUT, NULL))
		event_active(fx->ev_service, EV_TIMEOUT, 1);
}

static void setup(struct fixture *fx)
{
	cm_store_config cfg;
	cm_error err;

	memset(fx, 0, sizeof *fx);
	fx->base = event_base_new();
	ck_assert_ptr_nonnull(fx->base);
	fx->ev_service = event_new(fx->base, -1, 0, service_turn, fx);
	fx->ctx = wasi_ctx_new();
	ck_assert_ptr_nonnull(fx->ctx);
	fx->clock = daemon_clock_attach(fx->base, fx->ctx);
	ck_assert_ptr_nonnull(fx->clock);
	fx->linker = cm_linker_new();
	ck_assert_int_eq(wasi_add_to_linker(fx->ctx, fx->linker), 0);
	fx->comp = load_guest("async/sleep.wasm");
	memset(&cfg, 0, sizeof cfg);
	cfg.lazy_unsupported = true;
	cfg.request_service = request_service;
	cfg.service_env = fx;
	cfg.turn_fuel = 1000000;
	fx->store = cm_store_new(&cfg);
	ck_assert_ptr_nonnull(fx->store);
	memset(&err, 0, sizeof err);
	if (cm_instantiate(fx->store, fx->comp, fx->linker, &fx->inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
}

/* The daemon's order: store, then ctx, then its clock. */
static void teardown(struct fixture *fx)
{
	cm_store_free(fx->store);
	cm_linker_free(fx->linker);
	wasi_ctx_free(fx->ctx);
	daemon_clock_free(fx->clock);
	cm_component_free(fx->comp);
	event_free(fx->ev_service);
	event_base_free(fx->base);
}

struct call_ctx {
	struct fixture *fx;
	int i;
};

static void on_done(void *arg, cm_call_outcome outcome, const cm_val *results,
		    uint32_t nresults, const cm_error *err)
{
	struct call_ctx *cc = arg;
	struct fixture *fx = cc->fx;

	fx->done[cc->i] = true;
	fx->outcome[cc->i] = outcome;
	fx->ended_ns[cc->i] = mono_ns();
	if (outcome == CM_CALL_RETURNED && nresults == 1)
		fx->slept_ns[cc->i] = results[0].u.u;
	else
		fprintf(stderr, "call %d: outcome %d: %s\n", cc->i,
			(int)outcome, err ? err->msg : "");
	if (--fx->pending_calls == 0)
		event_base_loopbreak(fx->base);
}

/* A watchdog: a test that hangs fails instead. */
static void too_long(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

static void start_sleep(struct fixture *fx, struct call_ctx *cc, int i,
			uint32_t ms)
{
	cm_func *f = cm_instance_export(fx->inst, NULL, "sleep");
	cm_val arg = cm_val_u32(ms);
	cm_error err;

	ck_assert_ptr_nonnull(f);
	cc->fx = fx;
	cc->i = i;
	memset(&err, 0, sizeof err);
	if (cm_call_start(fx->store, f, &arg, 1, 0, on_done, cc, NULL, &err))
		ck_abort_msg("cm_call_start: %s", err.msg);
	fx->pending_calls++;
}

static void run_loop(struct fixture *fx, int max_ms)
{
	struct timeval tv = {max_ms / 1000, (max_ms % 1000) * 1000};
	struct event *watchdog = evtimer_new(fx->base, too_long, fx->base);

	evtimer_add(watchdog, &tv);
	event_base_dispatch(fx->base);
	event_free(watchdog);
}

START_TEST(one_wait_ends_on_time_by_a_timer)
{
	struct fixture fx;
	struct call_ctx cc;
	uint64_t t0;

	setup(&fx);
	t0 = mono_ns();
	start_sleep(&fx, &cc, 0, 30);
	run_loop(&fx, 5000);
	ck_assert_msg(fx.done[0], "the call did not end");
	ck_assert_int_eq(fx.outcome[0], CM_CALL_RETURNED);
	/* The guest's own clock and ours agree: never early. */
	ck_assert_uint_ge(fx.slept_ns[0], 30000000u);
	ck_assert_uint_ge(fx.ended_ns[0] - t0, 30000000u);
	ck_assert_uint_lt(fx.ended_ns[0] - t0, 1000000000u);
	/* Woken by the timer, not by turning the loop over and over. */
	ck_assert_uint_ge(daemon_clock_wakeups(fx.clock), 1);
	ck_assert_uint_le(daemon_clock_wakeups(fx.clock), 3);
	ck_assert_int_le(fx.turns, 8);
	ck_assert_uint_eq(daemon_clock_armed(fx.clock), WASI_NO_DEADLINE);
	ck_assert_uint_eq(wasi_ctx_pending_waits(fx.ctx), 0);
	teardown(&fx);
}
END_TEST

START_TEST(concurrent_waits_share_one_timer)
{
	static const uint32_t base_ms[NCALLS] = {60, 15, 40, 15};
	uint32_t ms[NCALLS];
	struct call_ctx cc[NCALLS];
	struct fixture fx;
	uint64_t t0;

	for (int i = 0; i < NCALLS; i++)
		ms[i] = base_ms[i] * (uint32_t)slow();
	setup(&fx);
	t0 = mono_ns();
	for (int i = 0; i < NCALLS; i++)
		start_sleep(&fx, &cc[i], i, ms[i]);
	run_loop(&fx, 5000 * (int)slow());
	for (int i = 0; i < NCALLS; i++) {
		ck_assert_msg(fx.done[i], "call %d did not end", i);
		ck_assert_int_eq(fx.outcome[i], CM_CALL_RETURNED);
		ck_assert_uint_ge(fx.slept_ns[i], ms[i] * 1000000ull);
		ck_assert_uint_ge(fx.ended_ns[i] - t0, ms[i] * 1000000ull);
	}
	/* They ran side by side: the longest bounds the whole. */
	ck_assert_uint_lt(fx.ended_ns[0] - t0,
			  (60000000ull + 500000000ull) * slow());
	ck_assert(fx.ended_ns[1] <= fx.ended_ns[2]);
	ck_assert(fx.ended_ns[2] <= fx.ended_ns[0]);
	/*
	 * At most one wake-up per distinct deadline, give or take an early
	 * one (a slow machine may serve several deadlines in one).
	 */
	ck_assert_uint_ge(daemon_clock_wakeups(fx.clock), 1);
	ck_assert_uint_le(daemon_clock_wakeups(fx.clock), 8);
	ck_assert_uint_eq(daemon_clock_armed(fx.clock), WASI_NO_DEADLINE);
	teardown(&fx);
}
END_TEST

/* Freeing a store with a wait pending leaves no timer to fire later. */
START_TEST(store_freed_with_a_wait_pending)
{
	struct fixture fx;
	struct call_ctx cc;
	struct timeval tv = {0, 20000};
	struct event *stop;

	setup(&fx);
	start_sleep(&fx, &cc, 0, 10000);
	stop = evtimer_new(fx.base, too_long, fx.base);
	evtimer_add(stop, &tv);
	event_base_dispatch(fx.base); /* the call starts and waits */
	event_free(stop);
	ck_assert(!fx.done[0]);
	ck_assert_uint_eq(wasi_ctx_pending_waits(fx.ctx), 1);
	ck_assert_uint_ne(daemon_clock_armed(fx.clock), WASI_NO_DEADLINE);
	teardown(&fx); /* ASan: nothing leaks, nothing fires afterwards */
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("daemon_clock");
	TCase *tc = tcase_create("timers");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, one_wait_ends_on_time_by_a_timer);
	tcase_add_test(tc, concurrent_waits_share_one_timer);
	tcase_add_test(tc, store_freed_with_a_wait_pending);
	suite_add_tcase(s, tc);
	return s;
}
