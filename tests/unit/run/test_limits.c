/*
 * test_limits.c - a hostile guest cannot make the host grow without end
 * (issue 9 point 4, issue 6 point 3): the per-store limits on handles,
 * threads and pending host calls (store.h cm_store_config) trap the
 * guest with a message naming the limit, and the engine's own bounds
 * (fuel, memory pages, call depth) end the other misdeeds cleanly.
 *
 * The guest is component WAT converted ahead of time
 * (tests/guests/hostile/hostile.wat; tests/guests/build.sh regenerates
 * hostile.wasm).  Its one import, wait-for, is played here by a host
 * function that never completes: every call is a pending host call.
 * The last cases check the daemon's side: the service config keys that
 * set the limits, and the trap storm back-off schedule.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cabi/cabi.h"
#include "component/component.h"
#include "run/instance.h"
#include "run/rt.h"
#include "daemon/service-wasi.h"
#include "daemon/service.h"

#include "guest-load.h"
#include "testmain.h"

/* wait-for that never completes; the store's teardown cancels it. */
typedef struct never {
	int calls, cancels;
} never;

static void never_cancel(void *env, cm_host_pending *p)
{
	never *h = env;

	h->cancels++;
	(void)p;
}

static int never_wait(cm_host_call *call, void *env, const cm_val *args,
		      uint32_t nargs, cm_val *results, uint32_t nresults)
{
	never *h = env;
	cm_host_pending *p;

	h->calls++;
	p = cm_host_call_defer(call);
	if (p == NULL)
		return -1;
	cm_host_pending_set_cancel(p, never_cancel, h);
	return CM_HOST_PENDING;
}

typedef struct guest {
	never h;
	cm_component *c;
	cm_linker *l;
	cm_store *s;
	cm_component_instance *inst;
} guest;

/* The guest at tests/guests/REL; cfg NULL: the defaults. */
static void guest_load(guest *g, const char *rel, const cm_store_config *cfg)
{
	cm_error err;

	memset(g, 0, sizeof *g);
	g->c = load_guest(rel);
	g->l = cm_linker_new();
	ck_assert_ptr_nonnull(g->l);
	ck_assert_int_eq(
		cm_linker_define_func(g->l, "wasi:clocks/monotonic-clock@0.3.0",
				      "wait-for", never_wait, &g->h),
		0);
	g->s = cm_store_new(cfg);
	ck_assert_ptr_nonnull(g->s);
	if (cm_instantiate(g->s, g->c, g->l, &g->inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
}

static void guest_new(guest *g, const cm_store_config *cfg)
{
	guest_load(g, "hostile/hostile.wasm", cfg);
}

static void guest_free(guest *g)
{
	cm_store_free(g->s);
	cm_linker_free(g->l);
	cm_component_free(g->c);
}

static uint64_t call_ok(guest *g, const char *name, const cm_val *args,
			uint32_t nargs)
{
	cm_func *f = cm_instance_export(g->inst, NULL, name);
	cm_val res[1];
	uint32_t nres = 0;
	cm_error err;

	ck_assert_msg(f != NULL, "no export %s", name);
	memset(res, 0, sizeof res);
	if (cm_invoke(g->s, f, args, nargs, res, &nres, &err))
		ck_abort_msg("%s: %s: %s", name, cm_error_kind_name(err.kind),
			     err.msg);
	return nres == 1 ? res[0].u.u : 0;
}

/* The call must trap with a message containing `want`. */
static void call_traps(guest *g, const char *name, const cm_val *args,
		       uint32_t nargs, const char *want)
{
	cm_func *f = cm_instance_export(g->inst, NULL, name);
	cm_val res[1];
	uint32_t nres = 0;
	cm_error err;

	ck_assert_msg(f != NULL, "no export %s", name);
	memset(&err, 0, sizeof err);
	ck_assert_msg(cm_invoke(g->s, f, args, nargs, res, &nres, &err) != 0,
		      "%s returned", name);
	ck_assert_msg(err.kind == CM_ERR_TRAP, "%s: %s: %s", name,
		      cm_error_kind_name(err.kind), err.msg);
	ck_assert_msg(strstr(err.msg, want) != NULL,
		      "%s trapped with \"%s\", expected \"%s\"", name, err.msg,
		      want);
	/* a trap poisons only its own instance (invariant 7) */
	ck_assert(cm_instance_poisoned(g->inst));
}

/* ---- the handle table's own bound ------------------------------------- */

START_TEST(table_limit_traps_and_frees_reopen)
{
	cabi_table t;
	cabi_elem e;
	cabi_error err;
	uint32_t idx;

	cabi_table_init(&t);
	t.limit = 3;
	memset(&e, 0, sizeof e);
	e.kind = CABI_ELEM_WAITABLE_SET;
	for (uint32_t i = 1; i <= 3; i++) {
		ck_assert_int_eq(cabi_table_add(&t, &e, &idx, &err), 0);
		ck_assert_uint_eq(idx, i);
	}
	ck_assert_int_eq(cabi_table_add(&t, &e, &idx, &err), -1);
	ck_assert_int_eq(err.kind, CABI_ERR_TRAP);
	ck_assert_str_eq(err.msg, "handle table full (limit 3)");
	ck_assert_uint_eq(cabi_table_count(&t), 3);
	/* a freed slot may be taken again: the bound is on live handles */
	ck_assert_int_eq(cabi_table_remove(&t, 2, NULL, &err), 0);
	ck_assert_int_eq(cabi_table_add(&t, &e, &idx, &err), 0);
	ck_assert_uint_eq(idx, 2);
	ck_assert_int_eq(cabi_table_add(&t, &e, &idx, &err), -1);
	cabi_table_free(&t);
}
END_TEST

START_TEST(defaults_are_finite_and_reach_the_tables)
{
	cm_store_config cfg = {0};
	guest g;

	guest_new(&g, NULL);
	ck_assert_uint_eq(g.s->cfg.max_handles, CM_STORE_DEFAULT_MAX_HANDLES);
	ck_assert_uint_eq(g.s->cfg.max_threads, CM_STORE_DEFAULT_MAX_THREADS);
	ck_assert_uint_eq(g.s->cfg.max_pending_host_calls,
			  CM_STORE_DEFAULT_MAX_PENDING_HOST_CALLS);
	ck_assert_uint_eq(g.inst->handles.limit, 100000);
	ck_assert_uint_eq(g.inst->threads.limit, 1000);
	guest_free(&g);

	cfg.max_handles = 7;
	cfg.max_threads = 5;
	cfg.max_pending_host_calls = 3;
	guest_new(&g, &cfg);
	ck_assert_uint_eq(g.inst->handles.limit, 7);
	ck_assert_uint_eq(g.inst->threads.limit, 5);
	ck_assert_uint_eq(g.s->cfg.max_pending_host_calls, 3);
	ck_assert_uint_eq(call_ok(&g, "ping", NULL, 0), 1);
	guest_free(&g);
}
END_TEST

/* ---- guests that make things without end ------------------------------ */

START_TEST(endless_streams_hit_the_handle_limit)
{
	cm_store_config cfg = {0};
	guest g;

	cfg.max_handles = 1000;
	guest_new(&g, &cfg);
	call_traps(&g, "streams", NULL, 0, "handle table full (limit 1000)");
	/* 500 pairs made it; nothing past the limit was kept */
	ck_assert_uint_eq(cabi_table_count(&g.inst->handles), 1000);
	guest_free(&g);
}
END_TEST

START_TEST(endless_streams_hit_the_default_limit)
{
	guest g;

	guest_new(&g, NULL);
	call_traps(&g, "streams", NULL, 0, "handle table full (limit 100000)");
	ck_assert_uint_eq(cabi_table_count(&g.inst->handles), 100000);
	guest_free(&g);
}
END_TEST

START_TEST(endless_waitable_sets_hit_the_handle_limit)
{
	cm_store_config cfg = {0};
	guest g;

	cfg.max_handles = 500;
	guest_new(&g, &cfg);
	call_traps(&g, "sets", NULL, 0, "handle table full (limit 500)");
	ck_assert_uint_eq(cabi_table_count(&g.inst->handles), 500);
	guest_free(&g);
}
END_TEST

START_TEST(endless_host_calls_hit_the_pending_limit)
{
	cm_store_config cfg = {0};
	guest g;

	cfg.max_pending_host_calls = 100;
	guest_new(&g, &cfg);
	call_traps(&g, "subtasks", NULL, 0,
		   "too many pending host calls (limit 100)");
	ck_assert_uint_eq(cm_store_pending_host_calls(g.s), 100);
	ck_assert_int_eq(g.h.calls, 101);
	guest_free(&g);
	/* the store's teardown tells the host about every one */
	ck_assert_int_eq(g.h.cancels, 100);
}
END_TEST

START_TEST(endless_subtasks_hit_the_handle_limit)
{
	cm_store_config cfg = {0};
	guest g;

	/* each call is a subtask handle too: the smaller bound wins */
	cfg.max_handles = 50;
	guest_new(&g, &cfg);
	call_traps(&g, "subtasks", NULL, 0, "handle table full (limit 50)");
	ck_assert_uint_eq(cabi_table_count(&g.inst->handles), 50);
	ck_assert_uint_le(cm_store_pending_host_calls(g.s), 51);
	guest_free(&g);
}
END_TEST

START_TEST(endless_threads_hit_the_thread_limit)
{
	cm_store_config cfg = {0};
	guest g;

	cfg.max_threads = 40;
	guest_new(&g, &cfg);
	call_traps(&g, "threads", NULL, 0, "handle table full (limit 40)");
	/* the task's own thread and 39 never started */
	ck_assert_uint_eq(cabi_table_count(&g.inst->threads), 40);
	guest_free(&g);
}
END_TEST

START_TEST(endless_threads_hit_the_default_limit)
{
	guest g;

	guest_new(&g, NULL);
	call_traps(&g, "threads", NULL, 0, "handle table full (limit 1000)");
	ck_assert_uint_eq(cabi_table_count(&g.inst->threads), 1000);
	guest_free(&g);
}
END_TEST

/* ---- the engine's bounds: fuel, memory, call depth --------------------- */

START_TEST(endless_loop_runs_out_of_fuel)
{
	guest g;

	guest_new(&g, NULL);
	cm_store_set_fuel(g.s, 1000000);
	call_traps(&g, "spin", NULL, 0, "all fuel consumed");
	guest_free(&g);
	/* a loop closed by a catch, not a branch: the throws take fuel */
	guest_new(&g, NULL);
	cm_store_set_fuel(g.s, 1000000);
	call_traps(&g, "spin-catch", NULL, 0, "all fuel consumed");
	guest_free(&g);
}
END_TEST

START_TEST(memory_growth_stops_at_the_store_limit)
{
	cm_store_config cfg = {0};
	uint64_t pages;
	guest g;

	cfg.limits.max_memory_pages = 64;
	guest_new(&g, &cfg);
	/* memory.grow answers -1 (the spec's failure), no trap */
	pages = call_ok(&g, "grow", NULL, 0);
	ck_assert_uint_eq(pages, 49); /* 1 + 3 * 16; 65 > 64 */
	ck_assert(!cm_instance_poisoned(g.inst));
	ck_assert_uint_eq(call_ok(&g, "grow", NULL, 0), 49);
	guest_free(&g);
}
END_TEST

START_TEST(deep_recursion_exhausts_the_call_stack)
{
	cm_val n = cm_val_u32(0);
	guest g;

	guest_new(&g, NULL);
	call_traps(&g, "recurse", &n, 1, "call stack exhausted");
	guest_free(&g);
}
END_TEST

/* A table grown without end stops at the store's bound (10,000,000 by
 * default: a table of the type's own max, 2^32 - 1, is 32 GiB). */
START_TEST(table_growth_stops_at_the_store_limit)
{
	cm_store_config cfg = {0};
	guest g;

	cfg.limits.max_table_elems = 50000;
	guest_new(&g, &cfg);
	ck_assert_uint_eq(call_ok(&g, "tables", NULL, 0), 40001);
	ck_assert_uint_eq(call_ok(&g, "ping", NULL, 0), 1);
	guest_free(&g);
	guest_new(&g, NULL);
	ck_assert_uint_eq(call_ok(&g, "tables", NULL, 0),
			  WASM_DEFAULT_MAX_TABLE_ELEMS - 10000 + 1);
	guest_free(&g);
}
END_TEST

/* nest.wasm: each of 20 levels instantiates the one below it twice,
 * 2^20 instances from 1,280 bytes; the store's bound refuses it. */
START_TEST(instance_bombs_hit_the_instance_limit)
{
	cm_store_config cfg = {0};
	cm_component *c = load_guest("hostile/nest.wasm");
	cm_linker *l = cm_linker_new();
	cm_component_instance *inst;
	cm_error err;
	cm_store *s;

	s = cm_store_new(NULL);
	ck_assert_uint_eq(s->cfg.max_instances, CM_STORE_DEFAULT_MAX_INSTANCES);
	memset(&err, 0, sizeof err);
	ck_assert_int_eq(cm_instantiate(s, c, l, &inst, &err), -1);
	ck_assert_str_eq(err.msg, "too many instances (limit 10000)");
	ck_assert_uint_eq(s->ninstances, 10000);
	cm_store_free(s);
	/* a bound of the store's own */
	cfg.max_instances = 5000;
	s = cm_store_new(&cfg);
	ck_assert_int_eq(cm_instantiate(s, c, l, &inst, &err), -1);
	ck_assert_str_eq(err.msg, "too many instances (limit 5000)");
	cm_store_free(s);
	cm_linker_free(l);
	cm_component_free(c);
}
END_TEST

/* ---- values that ask the host for more memory than it has ------------ */

/* The peak resident set of this process so far, in KiB (VmHWM). */
static long peak_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * bomb.wasm: one value of nested lists that all alias the same ranges
 * of a 4-page memory, 2^39 bytes once lifted, moved through a stream, a
 * future, and as a call's result.  Each traps on the store's budget
 * before the host allocates past it; the charge is given back; the
 * process's peak stays within the budget and some slack.
 */
static void bomb_traps(const char *name, uint64_t limit)
{
	cm_store_config cfg = {0};
	char want[160];
	long before;
	guest g;

	cfg.max_host_bytes = limit;
	guest_load(&g, "hostile/bomb.wasm", &cfg);
	before = peak_rss_kb();
	snprintf(want, sizeof want,
		 CABI_MSG_HOST_BYTES ": lifting this value needs more than the "
				     "store's limit of %llu bytes "
				     "(limits.hostBytes)",
		 (unsigned long long)(limit ? limit
					    : CM_STORE_DEFAULT_MAX_HOST_BYTES));
	call_traps(&g, name, NULL, 0, want);
	ck_assert_uint_eq(g.s->host_bytes.used, 0);
	ck_assert_int_le(
		peak_rss_kb() - before,
		(long)((limit ? limit : CM_STORE_DEFAULT_MAX_HOST_BYTES) /
		       1024) +
			32 * 1024);
	guest_free(&g);
}

START_TEST(nested_values_trap_on_the_host_budget)
{
	bomb_traps("bomb-stream", 16u << 20);
	bomb_traps("bomb-future", 16u << 20);
	bomb_traps("bomb-result", 16u << 20);
}
END_TEST

START_TEST(nested_values_trap_on_the_default_budget)
{
	bomb_traps("bomb-stream", 0);
	bomb_traps("bomb-result", 0);
}
END_TEST

/* A stream<u8> copy between instances of 196608 bytes moves bytes: no
 * host values (7.5 MiB if lifted), so a budget of 1 MiB is no bound. */
START_TEST(number_streams_copy_without_host_values)
{
	cm_store_config cfg = {0};
	guest g;

	cfg.max_host_bytes = 1u << 20;
	guest_load(&g, "hostile/bomb.wasm", &cfg);
	/* COMPLETED, all of it */
	ck_assert_uint_eq(call_ok(&g, "bytes-stream", NULL, 0), 196608u << 4);
	ck_assert_uint_eq(g.s->host_bytes.used, 0);
	guest_free(&g);
}
END_TEST

/*
 * Results of calls run in service turns wait for the turn's end and the
 * embedder (invoke.c): they keep their charge until on_done has had
 * them, so calls resolving in one turn share one budget.  Two results of
 * 600,000 bytes each and a budget of 1 MiB: the first returns, the
 * second's lift traps on the budget, and all is given back after.
 */
typedef struct done_log {
	int returned, trapped;
	char msg[CM_ERROR_MSG_MAX];
} done_log;

static void log_done(void *ctx, cm_call_outcome outcome, const cm_val *results,
		     uint32_t nresults, const cm_error *err)
{
	done_log *d = ctx;

	if (outcome == CM_CALL_RETURNED) {
		ck_assert_uint_eq(nresults, 1);
		ck_assert_uint_eq(results[0].u.str.len, 600000);
		d->returned++;
	} else {
		d->trapped++;
		snprintf(d->msg, sizeof d->msg, "%s", err->msg);
	}
}

START_TEST(held_results_share_the_host_budget)
{
	cm_store_config cfg = {0};
	cm_component *c = load_guest("values/values.wasm");
	cm_linker *l = cm_linker_new();
	cm_component_instance *inst;
	cm_val n = cm_val_u32(600000);
	done_log d = {0};
	cm_error err;
	cm_func *f;
	cm_store *s;

	cfg.max_host_bytes = 1u << 20;
	s = cm_store_new(&cfg);
	ck_assert_ptr_nonnull(s);
	if (cm_instantiate(s, c, l, &inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
	f = cm_instance_export(inst, NULL, "make");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 2; i++)
		if (cm_call_start(s, f, &n, 1, 0, log_done, &d, NULL, &err))
			ck_abort_msg("call_start: %s", err.msg);
	for (int i = 0; i < 10 && d.returned + d.trapped < 2; i++)
		cm_store_service_turn(s, 0, &err);
	ck_assert_int_eq(d.returned, 1);
	ck_assert_int_eq(d.trapped, 1);
	ck_assert_msg(strstr(d.msg, CABI_MSG_HOST_BYTES
			     ": lifting this value needs more than the "
			     "store's limit of 1048576 bytes "
			     "(limits.hostBytes)") != NULL,
		      "trapped \"%s\"", d.msg);
	ck_assert_uint_eq(s->host_bytes.used, 0);
	cm_store_free(s);
	cm_linker_free(l);
	cm_component_free(c);
}
END_TEST

/* Host work a built-in does for a guest costs the guest fuel
 * (cm_store_bill_host_work): the 196,608 bytes a stream copy moves are
 * 12,288 fuel, where a call of a few instructions is some tens. */
START_TEST(host_work_is_billed_as_fuel)
{
	uint64_t used_ping, used_copy;
	guest g;

	guest_load(&g, "hostile/bomb.wasm", NULL);
	cm_store_set_fuel(g.s, 1000000);
	ck_assert_uint_eq(call_ok(&g, "ping", NULL, 0), 1);
	used_ping = 1000000 - cm_store_fuel(g.s);
	cm_store_set_fuel(g.s, 1000000);
	ck_assert_uint_eq(call_ok(&g, "bytes-stream", NULL, 0), 196608u << 4);
	used_copy = 1000000 - cm_store_fuel(g.s);
	ck_assert_uint_lt(used_ping, 100);
	ck_assert_uint_ge(used_copy, 196608 / CM_HOST_WORK_BYTES_PER_FUEL);
	/* (the producer's fill loop is some 8,000 more) */
	ck_assert_uint_lt(used_copy,
			  196608 / CM_HOST_WORK_BYTES_PER_FUEL + 20000);
	/* a store without a fuel bound stays without one */
	cm_store_set_fuel(g.s, UINT64_MAX);
	ck_assert_uint_eq(call_ok(&g, "bytes-stream", NULL, 0), 196608u << 4);
	ck_assert_uint_eq(cm_store_fuel(g.s), UINT64_MAX);
	guest_free(&g);
}
END_TEST

/* ---- the daemon: service config and the trap storm back-off ------------ */

START_TEST(service_limits_parse)
{
	struct service_limits l;
	char why[320];

	ck_assert_int_eq(service_parse_limits("{}", &l, why, sizeof why), 0);
	ck_assert_uint_eq(l.max_handles, 0); /* 0: the runtime's default */
	ck_assert_int_eq(
		service_parse_limits("{\"limits\":{\"maxHandles\":1000,"
				     "\"maxThreads\":50,"
				     "\"maxPendingHostCalls\":7}}",
				     &l, why, sizeof why),
		0);
	ck_assert_uint_eq(l.max_handles, 1000);
	ck_assert_uint_eq(l.max_threads, 50);
	ck_assert_uint_eq(l.max_pending_host_calls, 7);
	ck_assert_int_eq(service_parse_limits("{\"limits\":{\"maxThreads\":0}}",
					      &l, why, sizeof why),
			 -1);
	ck_assert_str_eq(why, "limits.maxThreads: expected 1 to 268435455");
	ck_assert_int_eq(
		service_parse_limits("{\"limits\":{\"maxHandles\":268435456}}",
				     &l, why, sizeof why),
		-1);
	ck_assert_int_eq(service_parse_limits(
				 "{\"limits\":{\"maxPendingHostCalls\":-1}}",
				 &l, why, sizeof why),
			 -1);
	ck_assert_ptr_nonnull(strstr(why, "non-negative integer"));
	ck_assert_int_eq(service_parse_limits("{\"limits\":{\"maxTasks\":1}}",
					      &l, why, sizeof why),
			 -1);
	ck_assert_ptr_nonnull(strstr(why, "maxPendingHostCalls"));
	ck_assert_ptr_nonnull(strstr(why, "hostBytes"));
	ck_assert_ptr_nonnull(strstr(why, "tableElements"));
	ck_assert_int_eq(
		service_parse_limits("{\"limits\":{\"tableElements\":5000}}",
				     &l, why, sizeof why),
		0);
	ck_assert_uint_eq(l.table_elements, 5000);
	ck_assert_int_eq(
		service_parse_limits("{\"limits\":{\"tableElements\":0}}", &l,
				     why, sizeof why),
		-1);
	ck_assert_str_eq(why, "limits.tableElements: expected 1 to 4294967295");
	ck_assert_int_eq(
		service_parse_limits("{\"limits\":{\"hostBytes\":67108864}}",
				     &l, why, sizeof why),
		0);
	ck_assert_uint_eq(l.host_bytes, 64u << 20);
	ck_assert_int_eq(
		service_parse_limits("{\"limits\":{\"hostBytes\":1000}}", &l,
				     why, sizeof why),
		-1);
	ck_assert_str_eq(why,
			 "limits.hostBytes: at least 1048576 bytes (1 MiB)");
	ck_assert_int_eq(
		service_parse_limits("{\"limits\":{\"hostBytes\":\"1G\"}}", &l,
				     why, sizeof why),
		-1);
	ck_assert_ptr_nonnull(strstr(why, "non-negative integer"));
}
END_TEST

/* Preopens are the daemon's fds: a config names at most 64 (issue 18). */
START_TEST(service_preopens_bounded)
{
	char text[64 + 8 * (SERVICE_WASI_MAX_PREOPENS + 1)], why[160];
	json_t *cfg;
	size_t n;

	for (int extra = 0; extra < 2; extra++) {
		n = (size_t)snprintf(text, sizeof text, "{\"preopens\":[");
		for (int i = 0; i < SERVICE_WASI_MAX_PREOPENS + extra; i++)
			n += (size_t)snprintf(text + n, sizeof text - n,
					      "%s\"/tmp\"", i ? "," : "");
		snprintf(text + n, sizeof text - n, "]}");
		cfg = json_loads(text, 0, NULL);
		ck_assert_ptr_nonnull(cfg);
		why[0] = '\0';
		ck_assert_int_eq(
			service_wasi_check_config(cfg, why, sizeof why),
			extra ? -1 : 0);
		if (extra)
			ck_assert_str_eq(why, "preopens: more than 64");
		json_decref(cfg);
	}
}
END_TEST

START_TEST(trap_storm_backoff_doubles_to_a_cap)
{
	static const uint64_t want[] = {0,    100,  200,   400,	  800,	 1600,
					3200, 6400, 12800, 25600, 30000, 30000};

	for (uint32_t i = 0; i < sizeof want / sizeof want[0]; i++)
		ck_assert_uint_eq(service_backoff_ms(i), want[i]);
	ck_assert_uint_eq(service_backoff_ms(UINT32_MAX), 30000);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("store");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, table_limit_traps_and_frees_reopen);
	tcase_add_test(tc, defaults_are_finite_and_reach_the_tables);
	tcase_add_test(tc, endless_streams_hit_the_handle_limit);
	tcase_add_test(tc, endless_streams_hit_the_default_limit);
	tcase_add_test(tc, endless_waitable_sets_hit_the_handle_limit);
	tcase_add_test(tc, endless_host_calls_hit_the_pending_limit);
	tcase_add_test(tc, endless_subtasks_hit_the_handle_limit);
	tcase_add_test(tc, endless_threads_hit_the_thread_limit);
	tcase_add_test(tc, endless_threads_hit_the_default_limit);
	tcase_add_test(tc, endless_loop_runs_out_of_fuel);
	tcase_add_test(tc, memory_growth_stops_at_the_store_limit);
	tcase_add_test(tc, deep_recursion_exhausts_the_call_stack);
	tcase_add_test(tc, table_growth_stops_at_the_store_limit);
	tcase_add_test(tc, instance_bombs_hit_the_instance_limit);
	tcase_add_test(tc, nested_values_trap_on_the_host_budget);
	tcase_add_test(tc, nested_values_trap_on_the_default_budget);
	tcase_add_test(tc, number_streams_copy_without_host_values);
	tcase_add_test(tc, host_work_is_billed_as_fuel);
	tcase_add_test(tc, held_results_share_the_host_budget);
	suite_add_tcase(s, tc);
	tc = tcase_create("daemon");
	tcase_add_test(tc, service_limits_parse);
	tcase_add_test(tc, service_preopens_bounded);
	tcase_add_test(tc, trap_storm_backoff_doubles_to_a_cap);
	suite_add_tcase(s, tc);
	return s;
}
