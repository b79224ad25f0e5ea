/*
 * clocks_p3.c - the WASI 0.3 clocks: wasi:clocks/monotonic-clock@0.3.0
 * (now, get-resolution, and the async waits wait-for / wait-until) and
 * wasi:clocks/system-clock@0.3.0 (now, get-resolution), and the ctx's
 * timer queue behind the waits.
 *
 * Contract (wasi.h, at wasi_clock): a wait is a pending host call
 * (cm_host_call_defer) held here with its deadline until the embedder's
 * wake-up calls wasi_ctx_fire_timers; nothing here sleeps or runs guest
 * code.  The queue is a small unordered array: stores hold few waits at
 * once, and firing settles them in (deadline, arrival) order so equal
 * deadlines wake in the order they were asked for.  Every change of the
 * earliest deadline is reported once through clock.arm.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - wait_until: ctx->waits grows by doubling, one entry per pending
 *    wait; each is a deferred host call, so max_pending_host_calls
 *    (10,000 by default) bounds them and the array stays under twice
 *    that.  A cancelled or fired wait leaves the array at once.
 *  - system_now: a fixed two-field record.
 */
#include <stdlib.h>

#include "wasi/internal.h"

#define WASI_P3 "@0.3.0"

typedef struct wasi_wait {
	uint64_t deadline, seq;
	cm_host_pending *p;
} wasi_wait;

static uint64_t earliest(const wasi_ctx *ctx)
{
	uint64_t d = WASI_NO_DEADLINE;

	for (uint32_t i = 0; i < ctx->nwaits; i++)
		if (ctx->waits[i].deadline < d)
			d = ctx->waits[i].deadline;
	return d;
}

/*
 * Tell the embedder when the earliest deadline moved; `force` after its
 * wake-up fired (a one-shot timer is spent even if nothing was due yet).
 */
static void rearm(wasi_ctx *ctx, bool force)
{
	uint64_t d = earliest(ctx);

	if (d == ctx->armed && !force)
		return;
	ctx->armed = d;
	if (ctx->clock.arm != NULL)
		ctx->clock.arm(ctx->clock.arm_env, d);
}

static void remove_at(wasi_ctx *ctx, uint32_t i)
{
	ctx->waits[i] = ctx->waits[--ctx->nwaits];
}

/* The guest cancelled the wait (subtask.cancel): resolve it cancelled. */
static void wait_cancel(void *env, cm_host_pending *p)
{
	wasi_ctx *ctx = env;

	for (uint32_t i = 0; i < ctx->nwaits; i++)
		if (ctx->waits[i].p == p) {
			remove_at(ctx, i);
			cm_host_settle_cancelled(p);
			rearm(ctx, false);
			return;
		}
	/* not ours any more: fired already, or the store is going */
}

/*
 * The store is being freed: its pending calls die without settling (the
 * runtime calls wait_cancel for each after this, which then finds
 * nothing).  Registered after the runtime's own teardown of pending
 * calls, so it runs before it.
 */
static void store_gone(void *arg)
{
	wasi_ctx *ctx = arg;

	ctx->nwaits = 0;
	ctx->wait_store = NULL;
	ctx->armed = WASI_NO_DEADLINE;
}

void wasi_waits_free(wasi_ctx *ctx)
{
	free(ctx->waits);
	ctx->waits = NULL;
	ctx->nwaits = ctx->waits_cap = 0;
}

static int wait_until(cm_host_call *call, wasi_ctx *ctx, uint64_t deadline)
{
	cm_store *s = cm_host_call_store(call);
	cm_host_pending *p;
	wasi_wait *w;

	if (deadline <= ctx->clock.now(ctx->clock.env))
		return 0; /* already reached: return at once */
	if (ctx->wait_store != NULL && ctx->wait_store != s)
		return cm_host_call_trap(call,
					 "wasi: a wasi_ctx serves one store");
	if (ctx->nwaits == ctx->waits_cap) {
		uint32_t c = ctx->waits_cap ? 2 * ctx->waits_cap : 8;

		w = realloc(ctx->waits, c * sizeof *w);
		if (w == NULL)
			return wasi_oom(call);
		ctx->waits = w;
		ctx->waits_cap = c;
	}
	p = cm_host_call_defer(call);
	if (p == NULL)
		return -1; /* trap recorded (sync caller, or no memory) */
	if (ctx->wait_store == NULL) {
		/* after the defer, so after the runtime's own cleanup */
		if (cm_store_on_free(s, store_gone, ctx)) {
			cm_host_settle_trap(p, "wasi: out of memory");
			return CM_HOST_PENDING;
		}
		ctx->wait_store = s;
	}
	cm_host_pending_set_cancel(p, wait_cancel, ctx);
	w = &ctx->waits[ctx->nwaits++];
	w->deadline = deadline;
	w->seq = ctx->wait_seq++;
	w->p = p;
	rearm(ctx, false);
	return CM_HOST_PENDING;
}

/* wait-until: async func(when: mark) */
static int mono_wait_until(cm_host_call *call, void *env, const cm_val *args,
			   uint32_t nargs, cm_val *res, uint32_t nres)
{
	return wait_until(call, env, args[0].u.u);
}

/* wait-for: async func(how-long: duration) */
static int mono_wait_for(cm_host_call *call, void *env, const cm_val *args,
			 uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;
	uint64_t now = ctx->clock.now(ctx->clock.env);
	uint64_t d = args[0].u.u;

	return wait_until(call, ctx,
			  d > UINT64_MAX - now ? UINT64_MAX : now + d);
}

static int mono_now(cm_host_call *call, void *env, const cm_val *args,
		    uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;

	res[0] = cm_val_u64(ctx->clock.now(ctx->clock.env));
	return 0;
}

static int resolution(cm_host_call *call, void *env, const cm_val *args,
		      uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;

	res[0] = cm_val_u64(ctx->clock.resolution_ns);
	return 0;
}

/* system-clock now: func() -> instant { seconds: s64, nanoseconds: u32 } */
static int system_now(cm_host_call *call, void *env, const cm_val *args,
		      uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;
	uint64_t sec;
	uint32_t nsec;

	ctx->clock.wall(ctx->clock.env, &sec, &nsec);
	if (cm_val_seq(&res[0], CM_RECORD, 2))
		return wasi_oom(call);
	res[0].u.list.elems[0] =
		cm_val_s64(sec > INT64_MAX ? INT64_MAX : (int64_t)sec);
	res[0].u.list.elems[1] = cm_val_u32(nsec);
	return 0;
}

uint64_t wasi_ctx_next_deadline(const wasi_ctx *ctx)
{
	return earliest(ctx);
}

uint32_t wasi_ctx_pending_waits(const wasi_ctx *ctx)
{
	return ctx->nwaits;
}

uint32_t wasi_ctx_fire_timers(wasi_ctx *ctx)
{
	uint64_t now = ctx->clock.now(ctx->clock.env);
	uint32_t n = 0;

	for (;;) {
		uint32_t best = UINT32_MAX;
		cm_host_pending *p;

		for (uint32_t i = 0; i < ctx->nwaits; i++) {
			const wasi_wait *w = &ctx->waits[i];

			if (w->deadline > now)
				continue;
			if (best == UINT32_MAX ||
			    w->deadline < ctx->waits[best].deadline ||
			    (w->deadline == ctx->waits[best].deadline &&
			     w->seq < ctx->waits[best].seq))
				best = i;
		}
		if (best == UINT32_MAX)
			break;
		p = ctx->waits[best].p;
		remove_at(ctx, best);
		/* wait-* return nothing, so settling cannot fail on values */
		if (cm_host_settle(p, NULL, 0, NULL))
			cm_host_settle_trap(p, "wasi: cannot settle a wait");
		n++;
	}
	rearm(ctx, true);
	return n;
}

int wasi_ctx_sleep_to_next_timer(wasi_ctx *ctx)
{
	uint64_t d = earliest(ctx);

	if (d == WASI_NO_DEADLINE)
		return -1;
	if (d > ctx->clock.now(ctx->clock.env))
		ctx->clock.sleep_until(ctx->clock.env, d);
	return (int)wasi_ctx_fire_timers(ctx);
}

int wasi_ctx_wait_host(void *env)
{
	for (;;) {
		int n = wasi_ctx_sleep_to_next_timer(env);

		if (n != 0)
			return n < 0 ? -1 : 0;
		/* woke early (a signal, a coarse clock): sleep again */
	}
}

int wasi_link_clocks_p3(wasi_ctx *ctx, cm_linker *l)
{
	static const struct {
		const char *instance, *name;
		cm_host_fn fn;
	} fns[] = {
		{"wasi:clocks/monotonic-clock" WASI_P3, "now", mono_now},
		{"wasi:clocks/monotonic-clock" WASI_P3, "get-resolution",
		 resolution},
		{"wasi:clocks/monotonic-clock" WASI_P3, "wait-until",
		 mono_wait_until},
		{"wasi:clocks/monotonic-clock" WASI_P3, "wait-for",
		 mono_wait_for},
		{"wasi:clocks/system-clock" WASI_P3, "now", system_now},
		{"wasi:clocks/system-clock" WASI_P3, "get-resolution",
		 resolution},
	};

	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (cm_linker_define_func(l, fns[i].instance, fns[i].name,
					  fns[i].fn, ctx))
			return -1;
	/* `type duration = u64` only; componentize-qjs guests import it */
	return cm_linker_define_types(l, "wasi:clocks/types" WASI_P3);
}

/* ---- waits in store snapshots (run/snapshot.h) ------------------------- */

/*
 * A wait as plain data: u8 1 (monotonic), u64 nanoseconds still to wait
 * (0 when overdue), or u8 2 (wall clock), u64 seconds, u32 nanoseconds
 * since the epoch, absolute.  The monotonic clock restarts with the
 * process, so only the remaining time means anything to a restored
 * store; a wall-clock deadline keeps its absolute time.  The waits this
 * ctx offers (wait-for, wait-until) are monotonic.
 */
enum { DESC_MONO = 1, DESC_WALL = 2 };

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int wait_save(void *env, cm_host_pending *p, uint8_t *desc, size_t cap,
		     size_t *len)
{
	wasi_ctx *ctx = env;
	uint64_t now = ctx->clock.now(ctx->clock.env);

	if (cap < 9)
		return -1;
	for (uint32_t i = 0; i < ctx->nwaits; i++)
		if (ctx->waits[i].p == p) {
			uint64_t d = ctx->waits[i].deadline;

			desc[0] = DESC_MONO;
			put_le(desc + 1, d > now ? d - now : 0, 8);
			*len = 9;
			return 0;
		}
	return -1; /* not one of this ctx's waits */
}

static int wait_resume(void *env, cm_store *s, cm_host_pending *p,
		       const uint8_t *desc, size_t len)
{
	wasi_ctx *ctx = env;
	uint64_t now = ctx->clock.now(ctx->clock.env), left, deadline;
	wasi_wait *w;

	if (len == 9 && desc[0] == DESC_MONO) {
		left = get_le(desc + 1, 8);
	} else if (len == 13 && desc[0] == DESC_WALL) {
		uint64_t sec, at, wall;
		uint32_t nsec;

		ctx->clock.wall(ctx->clock.env, &sec, &nsec);
		wall = sec > UINT64_MAX / 1000000000u
			       ? UINT64_MAX
			       : sec * 1000000000u + nsec;
		sec = get_le(desc + 1, 8);
		at = sec > UINT64_MAX / 1000000000u
			     ? UINT64_MAX
			     : sec * 1000000000u + get_le(desc + 9, 4);
		left = at > wall ? at - wall : 0;
	} else {
		return -1;
	}
	if (left == 0) {
		/* overdue: it fires at once (delivered at the next turn) */
		if (cm_host_settle(p, NULL, 0, NULL))
			cm_host_settle_trap(p, "wasi: cannot settle a wait");
		return 0;
	}
	if (ctx->wait_store != NULL && ctx->wait_store != s)
		return -1;
	if (ctx->nwaits == ctx->waits_cap) {
		uint32_t c = ctx->waits_cap ? 2 * ctx->waits_cap : 8;

		w = realloc(ctx->waits, c * sizeof *w);
		if (w == NULL)
			return -1;
		ctx->waits = w;
		ctx->waits_cap = c;
	}
	if (ctx->wait_store == NULL) {
		if (cm_store_on_free(s, store_gone, ctx))
			return -1;
		ctx->wait_store = s;
	}
	deadline = left > UINT64_MAX - now ? UINT64_MAX : now + left;
	cm_host_pending_set_cancel(p, wait_cancel, ctx);
	w = &ctx->waits[ctx->nwaits++];
	w->deadline = deadline;
	w->seq = ctx->wait_seq++;
	w->p = p;
	rearm(ctx, false);
	return 0;
}

void wasi_waits_durable(wasi_ctx *ctx, cm_store *s)
{
	cm_store_set_host_durable(s, wait_save, wait_resume, ctx);
}
