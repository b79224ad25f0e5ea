/*
 * test_liveness.c - guest work keeps going between calls (issue 5's
 * between-calls liveness, issue 6's ticker), and WASI 0.3 waits are
 * pending host calls settled by timers, never a blocked thread.
 *
 * Each test plays the embedder the daemon is: it keeps the pending host
 * calls a guest started, settles them from a (virtual) timer while no
 * call is in flight, and runs service turns only when the store asked
 * for service (request_service).  The guests are component WAT converted
 * ahead of time (tests/guests/async, tests/guests/ticker; the sources
 * and tests/guests/build.sh regenerate them).  The last test makes and
 * drops every kind of async object 10,000 times and checks that the
 * store's object count and the guest's handle indices stay flat (run it
 * in a --enable-sanitizers build for ASan's leak check too).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "component/component.h"
#include "run/instance.h"
#include "run/rt.h"
#include "wasi/wasi.h"

#include "guest-load.h"
#include "testmain.h"

/* The embedder's side of the settlement pump. */
typedef struct pump {
	int requests;	/* request_service calls */
	bool requested; /* one outstanding (the daemon's service event) */
} pump;

static void request_service(void *env)
{
	pump *p = env;

	ck_assert_msg(!p->requested, "service requests must coalesce");
	p->requested = true;
	p->requests++;
}

/* The daemon's service callback: turns while the store asks for them. */
static int run_pump(cm_store *s, pump *p)
{
	int turns = 0;

	while (p->requested) {
		cm_error err;
		int rc;

		p->requested = false;
		rc = cm_store_service_turn(s, 0, &err);
		ck_assert_msg(rc >= 0, "service turn trapped: %s", err.msg);
		turns++;
		ck_assert_int_lt(turns, 1000);
	}
	return turns;
}

static cm_val call1(cm_store *s, cm_component_instance *inst, const char *name,
		    const cm_val *args, uint32_t nargs)
{
	cm_func *f = cm_instance_export(inst, NULL, name);
	cm_val res[1];
	uint32_t nres = 0;
	cm_error err;

	ck_assert_msg(f != NULL, "no export %s", name);
	memset(res, 0, sizeof res);
	if (cm_invoke(s, f, args, nargs, res, &nres, &err))
		ck_abort_msg("%s: %s: %s", name, cm_error_kind_name(err.kind),
			     err.msg);
	if (nres == 0) {
		res[0].kind = CM_BOOL;
		res[0].u.u = 0;
	}
	return res[0];
}

static uint64_t call_u(cm_store *s, cm_component_instance *inst,
		       const char *name)
{
	return call1(s, inst, name, NULL, 0).u.u;
}

/* ---- a task parked on an async host import (park.wasm) ----------------- */

typedef struct park_host {
	cm_host_pending *pending;
	uint32_t x;
	int calls, cancels;
} park_host;

static void park_cancel(void *env, cm_host_pending *p)
{
	park_host *h = env;

	h->cancels++;
	h->pending = NULL;
	(void)p;
}

static int park(cm_host_call *call, void *env, const cm_val *args,
		uint32_t nargs, cm_val *results, uint32_t nresults)
{
	park_host *h = env;

	h->calls++;
	h->x = (uint32_t)args[0].u.u;
	h->pending = cm_host_call_defer(call);
	if (h->pending == NULL)
		return -1;
	cm_host_pending_set_cancel(h->pending, park_cancel, h);
	return CM_HOST_PENDING;
}

START_TEST(parked_task_finishes_between_calls)
{
	cm_component *c = load_guest("async/park.wasm");
	park_host h = {0};
	pump p = {0};
	cm_store_config cfg = {0};
	cm_component_instance *inst;
	cm_linker *l = cm_linker_new();
	cm_error err;
	cm_store *s;
	cm_val x = cm_val_u32(7);
	cm_val r;

	cfg.request_service = request_service;
	cfg.service_env = &p;
	s = cm_store_new(&cfg);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(
		cm_linker_define_func(l, "hostel:test/host", "park", park, &h),
		0);
	if (cm_instantiate(s, c, l, &inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);

	/* start returns at once; its task stays parked on the host call */
	r = call1(s, inst, "start", &x, 1);
	ck_assert_int_eq(r.kind, CM_BOOL); /* no result */
	ck_assert_int_eq(h.calls, 1);
	ck_assert_uint_eq(h.x, 7);
	ck_assert_ptr_nonnull(h.pending);
	ck_assert_uint_eq(cm_store_pending_host_calls(s), 1);
	ck_assert_uint_eq(call_u(s, inst, "state"), 1);
	run_pump(s, &p); /* whatever start's call left over */
	ck_assert_uint_eq(call_u(s, inst, "state"), 1);

	/* the "timer" fires with no call in flight: settle only records */
	{
		cm_val v = cm_val_u32(h.x * 6);
		int before = p.requests;

		ck_assert_int_eq(cm_host_settle(h.pending, &v, 1, &err), 0);
		h.pending = NULL;
		ck_assert_int_eq(p.requests, before + 1);
		ck_assert(p.requested);
		ck_assert_uint_eq(cm_store_pending_host_calls(s), 0);
	}
	/* the service callback alone runs the task to completion */
	ck_assert_int_ge(run_pump(s, &p), 1);
	ck_assert(!p.requested);

	/* a later call sees the effect */
	ck_assert_uint_eq(call_u(s, inst, "state"), 2);
	ck_assert_uint_eq(call_u(s, inst, "value"), 42);
	ck_assert_int_eq(h.calls, 1);
	ck_assert_int_eq(h.cancels, 0);

	cm_store_free(s);
	cm_linker_free(l);
	cm_component_free(c);
}
END_TEST

/* Freeing a store with a parked task tells the host (cancel callback). */
START_TEST(store_free_tells_parked_host_call)
{
	cm_component *c = load_guest("async/park.wasm");
	park_host h = {0};
	cm_component_instance *inst;
	cm_linker *l = cm_linker_new();
	cm_error err;
	cm_store *s = cm_store_new(NULL);
	cm_val x = cm_val_u32(1);

	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(
		cm_linker_define_func(l, "hostel:test/host", "park", park, &h),
		0);
	if (cm_instantiate(s, c, l, &inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
	call1(s, inst, "start", &x, 1);
	ck_assert_ptr_nonnull(h.pending);
	cm_store_free(s);
	ck_assert_int_eq(h.cancels, 1);
	ck_assert_ptr_null(h.pending);
	cm_linker_free(l);
	cm_component_free(c);
}
END_TEST

/* ---- the ticker on a virtual clock (ticker.wasm) ----------------------- */

typedef struct timer {
	uint64_t deadline; /* what the ctx armed last */
	int arms;
} timer;

static void timer_arm(void *env, uint64_t deadline)
{
	timer *t = env;

	t->deadline = deadline;
	t->arms++;
}

typedef struct ticker {
	wasi_vclock vc;
	timer tm;
	pump p;
	wasi_ctx *wasi;
	cm_linker *l;
	cm_component *c;
	cm_store *s;
	cm_component_instance *inst;
} ticker;

static void ticker_new(ticker *t)
{
	cm_store_config cfg = {0};
	wasi_clock clk;
	cm_error err;

	memset(t, 0, sizeof *t);
	t->vc.mono_ns = 1000000000ull;
	t->vc.wall_ns = 1700000000ull * 1000000000ull;
	t->tm.deadline = WASI_NO_DEADLINE;
	wasi_clock_virtual(&clk, &t->vc);
	clk.arm = timer_arm;
	clk.arm_env = &t->tm;
	t->wasi = wasi_ctx_new();
	ck_assert_ptr_nonnull(t->wasi);
	wasi_ctx_set_clock(t->wasi, &clk);
	t->l = cm_linker_new();
	ck_assert_ptr_nonnull(t->l);
	ck_assert_int_eq(wasi_add_to_linker(t->wasi, t->l), 0);
	cfg.request_service = request_service;
	cfg.service_env = &t->p;
	t->s = cm_store_new(&cfg);
	ck_assert_ptr_nonnull(t->s);
	t->c = load_guest("ticker/ticker.wasm");
	if (cm_instantiate(t->s, t->c, t->l, &t->inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
}

static void ticker_free(ticker *t)
{
	cm_store_free(t->s);
	wasi_ctx_free(t->wasi);
	cm_linker_free(t->l);
	cm_component_free(t->c);
}

/* The event loop: time passes to the armed deadline, the timer fires. */
static void advance_to_timer(ticker *t)
{
	ck_assert_uint_ne(t->tm.deadline, WASI_NO_DEADLINE);
	ck_assert_uint_eq(t->tm.deadline, wasi_ctx_next_deadline(t->wasi));
	t->vc.mono_ns = t->tm.deadline;
	ck_assert_uint_eq(wasi_ctx_fire_timers(t->wasi), 1);
	ck_assert(t->p.requested);
	run_pump(t->s, &t->p);
}

START_TEST(ticker_counts_between_calls)
{
	ticker t;
	uint64_t t0;

	ticker_new(&t);
	t0 = t.vc.mono_ns;
	ck_assert_uint_eq(call_u(t.s, t.inst, "count"), 0);
	call1(t.s, t.inst, "start", NULL, 0);
	run_pump(t.s, &t.p); /* whatever start's call left over */
	/* start has returned; the ticker waits 100 ms on a timer */
	ck_assert_uint_eq(wasi_ctx_pending_waits(t.wasi), 1);
	ck_assert_uint_eq(cm_store_pending_host_calls(t.s), 1);
	ck_assert_uint_eq(t.tm.deadline, t0 + 100000000ull);
	ck_assert_uint_eq(call_u(t.s, t.inst, "count"), 0);

	/* a wake-up before the deadline settles nothing, re-arms */
	ck_assert_uint_eq(wasi_ctx_fire_timers(t.wasi), 0);
	ck_assert(!t.p.requested);
	ck_assert_uint_eq(t.tm.deadline, t0 + 100000000ull);

	/* 2 s of virtual time with no call in flight: 20 ticks */
	for (int i = 0; i < 20; i++)
		advance_to_timer(&t);
	ck_assert_uint_eq(t.vc.mono_ns, t0 + 2000000000ull);
	ck_assert_uint_eq(call_u(t.s, t.inst, "count"), 20);

	/* starting again does not start a second ticker */
	call1(t.s, t.inst, "start", NULL, 0);
	ck_assert_uint_eq(wasi_ctx_pending_waits(t.wasi), 1);
	advance_to_timer(&t);
	ck_assert_uint_eq(call_u(t.s, t.inst, "count"), 21);

	/* stop: the ticker ends at its next tick and disarms the timer */
	call1(t.s, t.inst, "stop", NULL, 0);
	advance_to_timer(&t);
	ck_assert_uint_eq(call_u(t.s, t.inst, "count"), 22);
	ck_assert_uint_eq(wasi_ctx_pending_waits(t.wasi), 0);
	ck_assert_uint_eq(cm_store_pending_host_calls(t.s), 0);
	ck_assert_uint_eq(t.tm.deadline, WASI_NO_DEADLINE);
	ck_assert_uint_eq(wasi_ctx_next_deadline(t.wasi), WASI_NO_DEADLINE);
	ck_assert_int_eq(wasi_ctx_sleep_to_next_timer(t.wasi), -1);

	/* and it can be started again */
	call1(t.s, t.inst, "start", NULL, 0);
	advance_to_timer(&t);
	ck_assert_uint_eq(call_u(t.s, t.inst, "count"), 23);
	ck_assert_uint_eq(wasi_ctx_pending_waits(t.wasi), 1);

	/* a store freed with a wait pending forgets it (no arm call) */
	{
		int arms = t.tm.arms;

		cm_store_free(t.s);
		t.s = NULL;
		ck_assert_uint_eq(wasi_ctx_pending_waits(t.wasi), 0);
		ck_assert_int_eq(t.tm.arms, arms);
	}
	ticker_free(&t);
}
END_TEST

/* ---- a blocking driver sleeps to the next timer (sleep.wasm) ----------- */

typedef struct sleeper {
	wasi_vclock vc;
	wasi_ctx *wasi;
	cm_linker *l;
	cm_component *c;
	cm_store *s;
	cm_component_instance *inst;
} sleeper;

static void sleeper_new(sleeper *z)
{
	cm_store_config cfg = {0};
	wasi_clock clk;
	cm_error err;

	memset(z, 0, sizeof *z);
	z->vc.mono_ns = 5000;
	wasi_clock_virtual(&clk, &z->vc);
	z->wasi = wasi_ctx_new();
	ck_assert_ptr_nonnull(z->wasi);
	wasi_ctx_set_clock(z->wasi, &clk);
	z->l = cm_linker_new();
	ck_assert_ptr_nonnull(z->l);
	ck_assert_int_eq(wasi_add_to_linker(z->wasi, z->l), 0);
	/* `hostel run`'s idle step */
	cfg.wait_host = wasi_ctx_wait_host;
	cfg.wait_env = z->wasi;
	z->s = cm_store_new(&cfg);
	ck_assert_ptr_nonnull(z->s);
	z->c = load_guest("async/sleep.wasm");
	if (cm_instantiate(z->s, z->c, z->l, &z->inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
}

static void sleeper_free(sleeper *z)
{
	cm_store_free(z->s);
	wasi_ctx_free(z->wasi);
	cm_linker_free(z->l);
	cm_component_free(z->c);
}

START_TEST(invoke_drives_wait_for)
{
	sleeper z;
	cm_val ms = cm_val_u32(250);
	cm_val r;

	sleeper_new(&z);
	r = call1(z.s, z.inst, "sleep", &ms, 1);
	ck_assert_int_eq(r.kind, CM_U64);
	/* the guest saw exactly 250 ms pass; the clock slept exactly that */
	ck_assert_uint_eq(r.u.u, 250000000ull);
	ck_assert_uint_eq(z.vc.slept_ns, 250000000ull);
	ck_assert_uint_eq(z.vc.mono_ns, 5000 + 250000000ull);
	ck_assert_uint_eq(wasi_ctx_pending_waits(z.wasi), 0);

	/* a wait whose deadline has passed returns at once */
	ms = cm_val_u32(0);
	r = call1(z.s, z.inst, "sleep", &ms, 1);
	ck_assert_uint_eq(r.u.u, 0);
	ck_assert_uint_eq(z.vc.slept_ns, 250000000ull);
	sleeper_free(&z);
}
END_TEST

START_TEST(async_cli_run)
{
	sleeper z;
	cm_func *f;
	cm_val res[1];
	uint32_t nres = 0;
	cm_error err;

	sleeper_new(&z);
	f = cm_instance_export(z.inst, "wasi:cli/run@0.3.0", "run");
	ck_assert_ptr_nonnull(f);
	ck_assert(cm_func_async_lifted(f));
	if (cm_invoke(z.s, f, NULL, 0, res, &nres, &err))
		ck_abort_msg("run: %s", err.msg);
	ck_assert_uint_eq(nres, 1);
	ck_assert_int_eq(res[0].kind, CM_RESULT);
	ck_assert_uint_eq(res[0].u.variant.index, 0); /* ok */
	cm_vals_free(res, nres);
	ck_assert_uint_eq(z.vc.slept_ns, 10000000ull);
	sleeper_free(&z);
}
END_TEST

START_TEST(wait_until_and_clock_info)
{
	sleeper z;
	cm_val when = cm_val_u64(5000 + 1000000000ull);
	cm_val r;

	sleeper_new(&z);
	z.vc.wall_ns = 1700000000ull * 1000000000ull + 123;
	r = call1(z.s, z.inst, "sleep-until", &when, 1);
	ck_assert_int_eq(r.kind, CM_U64);
	ck_assert_uint_eq(r.u.u, 5000 + 1000000000ull);
	ck_assert_uint_eq(z.vc.slept_ns, 1000000000ull);
	/* a deadline in the past returns at once */
	when = cm_val_u64(7);
	r = call1(z.s, z.inst, "sleep-until", &when, 1);
	ck_assert_uint_eq(r.u.u, 5000 + 1000000000ull);
	ck_assert_uint_eq(z.vc.slept_ns, 1000000000ull);

	/* (mono resolution, system now seconds, nanoseconds, resolution) */
	r = call1(z.s, z.inst, "clock-info", NULL, 0);
	ck_assert_int_eq(r.kind, CM_TUPLE);
	ck_assert_uint_eq(r.u.list.n, 4);
	ck_assert_uint_eq(r.u.list.elems[0].u.u, 1);
	/* the wall clock moved with the sleep */
	ck_assert_int_eq(r.u.list.elems[1].u.s, 1700000001);
	ck_assert_uint_eq(r.u.list.elems[2].u.u, 123);
	ck_assert_uint_eq(r.u.list.elems[3].u.u, 1);
	cm_vals_free(&r, 1);
	sleeper_free(&z);
}
END_TEST

/* Without an idle step a blocking driver cannot wait: deadlock trap. */
START_TEST(invoke_without_wait_host_deadlocks)
{
	sleeper z;
	cm_store_config cfg = {0};
	cm_func *f;
	cm_val ms = cm_val_u32(1), res[1];
	uint32_t nres = 0;
	cm_error err;

	sleeper_new(&z);
	cm_store_free(z.s);
	z.s = cm_store_new(&cfg);
	ck_assert_ptr_nonnull(z.s);
	if (cm_instantiate(z.s, z.c, z.l, &z.inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
	f = cm_instance_export(z.inst, NULL, "sleep");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ne(cm_invoke(z.s, f, &ms, 1, res, &nres, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_TRAP);
	ck_assert_ptr_nonnull(strstr(err.msg, "deadlock"));
	ck_assert_uint_eq(z.vc.slept_ns, 0);
	sleeper_free(&z);
}
END_TEST

/*
 * A drive that fails with its task never entered (backpressure keeps it
 * at the gate: a deadlock) must leave no callback into cm_invoke's
 * frame: once the gate opens, a later turn starts the thread, which then
 * traps "call cancelled" instead of reading the arguments of a call that
 * has returned (fuzz_restore found it, a forged backpressure flag).
 */
START_TEST(failed_invoke_leaves_no_callback)
{
	sleeper z;
	cm_store_config cfg = {0};
	cm_component_instance *insts[8];
	uint32_t n;
	cm_func *f;
	cm_val ms = cm_val_u32(1), res[1];
	uint32_t nres = 0;
	cm_error err;

	sleeper_new(&z);
	cm_store_free(z.s);
	z.s = cm_store_new(&cfg);
	ck_assert_ptr_nonnull(z.s);
	if (cm_instantiate(z.s, z.c, z.l, &z.inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
	n = cm_store_component_instances(z.s, insts, 8);
	ck_assert_uint_le(n, 8);
	for (uint32_t i = 0; i < n; i++)
		insts[i]->backpressure = 1;
	f = cm_instance_export(z.inst, NULL, "sleep");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ne(cm_invoke(z.s, f, &ms, 1, res, &nres, &err), 0);
	for (uint32_t i = 0; i < n; i++)
		insts[i]->backpressure = 0;
	/* whatever the turns do now, none reads the gone frame (ASan) */
	for (int i = 0; i < 3; i++)
		cm_store_service_turn(z.s, 0, &err);
	sleeper_free(&z);
}
END_TEST

/* ---- concurrent waits in one store (cm_call_start) --------------------- */

#define NCONCURRENT 20

typedef struct done_count {
	int done, returned;
	uint64_t slept[NCONCURRENT];
} done_count;

static void sleep_done(void *ctx, cm_call_outcome outcome,
		       const cm_val *results, uint32_t nresults,
		       const cm_error *err)
{
	done_count *d = ctx;

	ck_assert_msg(outcome == CM_CALL_RETURNED, "sleep ended %d: %s",
		      (int)outcome, err != NULL ? err->msg : "");
	ck_assert_uint_eq(nresults, 1);
	d->slept[d->done++] = results[0].u.u;
	d->returned++;
}

/*
 * 20 calls of sleep(100) in one store, each parked on its own wait: the
 * embedder's loop runs turns when asked and otherwise sleeps to the next
 * deadline, so all of them end after 100 ms of clock time, not 2 s.
 */
static void concurrent_sleeps(sleeper *z, bool real)
{
	cm_store_config cfg = {0};
	done_count d = {0};
	pump p = {0};
	cm_error err;
	cm_func *f;
	cm_val ms = cm_val_u32(100);
	int idle = 0;

	if (real) {
		wasi_clock clk;

		wasi_clock_system(&clk);
		wasi_ctx_set_clock(z->wasi, &clk);
	}
	cm_store_free(z->s);
	cfg.request_service = request_service;
	cfg.service_env = &p;
	z->s = cm_store_new(&cfg);
	ck_assert_ptr_nonnull(z->s);
	if (cm_instantiate(z->s, z->c, z->l, &z->inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
	f = cm_instance_export(z->inst, NULL, "sleep");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < NCONCURRENT; i++)
		ck_assert_int_eq(cm_call_start(z->s, f, &ms, 1, 0, sleep_done,
					       &d, NULL, &err),
				 0);
	while (d.done < NCONCURRENT) {
		if (p.requested) {
			run_pump(z->s, &p);
			continue;
		}
		/* idle: the event loop's timer */
		ck_assert_int_gt(wasi_ctx_sleep_to_next_timer(z->wasi), 0);
		idle++;
	}
	ck_assert_int_eq(d.returned, NCONCURRENT);
	ck_assert_uint_eq(wasi_ctx_pending_waits(z->wasi), 0);
	if (real) {
		for (int i = 0; i < NCONCURRENT; i++)
			ck_assert_uint_ge(d.slept[i], 100000000ull);
		return;
	}
	for (int i = 0; i < NCONCURRENT; i++)
		ck_assert_uint_eq(d.slept[i], 100000000ull);
	/* the clock advanced once, by 100 ms, for all of them */
	ck_assert_uint_eq(z->vc.slept_ns, 100000000ull);
	ck_assert_int_eq(idle, 1);
}

START_TEST(concurrent_waits_share_the_clock)
{
	sleeper z;

	sleeper_new(&z);
	concurrent_sleeps(&z, false);
	sleeper_free(&z);
}
END_TEST

/* The same on the OS clock: 20 x 100 ms in about 100 ms, not 2 s. */
START_TEST(concurrent_waits_real_clock)
{
	struct timespec a, b;
	uint64_t ns;
	sleeper z;

	sleeper_new(&z);
	clock_gettime(CLOCK_MONOTONIC, &a);
	concurrent_sleeps(&z, true);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull +
	     (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
	ck_assert_uint_ge(ns, 100000000ull);
	/* generous for a loaded machine; in sequence it would be 2 s */
	ck_assert_msg(ns < 1000000000ull, "took %llu ns",
		      (unsigned long long)ns);
	sleeper_free(&z);
}
END_TEST

/* ---- no leak across calls (churn.wasm) ---------------------------------- */

/* The runtime objects the store tracks (store.h cm_store_obj). */
static uint32_t store_objects(const cm_store *s)
{
	uint32_t n = 0;

	for (const cm_store_obj *o = s->objs.next; o != &s->objs; o = o->next)
		n++;
	return n;
}

#define CHURN_CALLS 10000

START_TEST(churn_returns_to_baseline)
{
	sleeper z;
	cm_component *c = load_guest("async/churn.wasm");
	cm_component_instance *inst;
	cm_error err;
	uint32_t objs, top;

	sleeper_new(&z);
	if (cm_instantiate(z.s, c, z.l, &inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
	call1(z.s, inst, "churn", NULL, 0);
	objs = store_objects(z.s);
	top = (uint32_t)call_u(z.s, inst, "top-handle");
	/* freed slots are reused: at most the two ends of one pair live */
	ck_assert_uint_eq(top, 2);
	for (int i = 1; i < CHURN_CALLS; i++)
		call1(z.s, inst, "churn", NULL, 0);
	/* every stream, future, subtask and set went, with its handle */
	ck_assert_uint_eq(store_objects(z.s), objs);
	ck_assert_uint_eq(call_u(z.s, inst, "top-handle"), top);
	ck_assert_uint_eq(cm_store_pending_host_calls(z.s), 0);
	ck_assert_uint_eq(wasi_ctx_pending_waits(z.wasi), 0);
	/* each wait was cancelled, never slept on */
	ck_assert_uint_eq(z.vc.slept_ns, 0);
	sleeper_free(&z);
	cm_component_free(c);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("liveness");
	TCase *tc = tcase_create("pump");

	tcase_add_test(tc, parked_task_finishes_between_calls);
	tcase_add_test(tc, store_free_tells_parked_host_call);
	tcase_add_test(tc, ticker_counts_between_calls);
	suite_add_tcase(s, tc);
	tc = tcase_create("driver");
	tcase_add_test(tc, invoke_drives_wait_for);
	tcase_add_test(tc, async_cli_run);
	tcase_add_test(tc, wait_until_and_clock_info);
	tcase_add_test(tc, concurrent_waits_share_the_clock);
	tcase_add_test(tc, concurrent_waits_real_clock);
	tcase_add_test(tc, invoke_without_wait_host_deadlocks);
	tcase_add_test(tc, failed_invoke_leaves_no_callback);
	suite_add_tcase(s, tc);
	tc = tcase_create("leak");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, churn_returns_to_baseline);
	suite_add_tcase(s, tc);
	return s;
}
