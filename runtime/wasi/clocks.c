/*
 * clocks.c - wasi:clocks 0.2 (monotonic-clock, wall-clock) and
 * wasi:random 0.2 (random, insecure, insecure-seed).
 *
 * Contract: time comes only from the ctx's wasi_clock, so a virtual
 * clock drives every guest-visible time.  Secure random bytes come from
 * getrandom(2) (a failure traps: the interface cannot report one);
 * insecure ones from a per-ctx xorshift generator seeded from
 * getrandom.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - random_bytes (get-random-bytes, get-insecure-random-bytes): the
 *    buffer and its list<u8>, MAX_RANDOM_BYTES (1 MiB), trap "wasi:
 *    get-random-bytes: too many bytes (limit N)".
 *  - subscribe (subscribe-instant, subscribe-duration): one pollable
 *    in ctx->objs per guest handle (max_handles per instance).
 *  Everything else here is a fixed-size record.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "wasi/internal.h"

/*
 * Bytes one get-random-bytes / get-insecure-random-bytes may ask for
 * (issue 18).  The host holds them twice, as bytes and as a list<u8>
 * (once 40 bytes a byte, as cm_vals: 64 MiB, the bound this had, let
 * one call make the host allocate 2.6 GiB; now in byte form, 1 byte a
 * byte).  1 MiB costs 2 MiB, and is far more than
 * any guest seeds with (wasi-libc's getentropy asks for 256 at most).
 * The interface cannot return fewer, so past it the call traps, as
 * wasmtime's max-random-size does.
 */
#define MAX_RANDOM_BYTES (1u << 20)

static int mono_now(cm_host_call *call, void *env, const cm_val *args,
		    uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;

	res[0] = cm_val_u64(ctx->clock.now(ctx->clock.env));
	return 0;
}

static int mono_resolution(cm_host_call *call, void *env, const cm_val *args,
			   uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;

	res[0] = cm_val_u64(ctx->clock.resolution_ns);
	return 0;
}

static int subscribe(cm_host_call *call, wasi_ctx *ctx, uint64_t deadline,
		     cm_val *res)
{
	wasi_obj *o;

	if (wasi_new_own(ctx, WOBJ_POLLABLE, res, &o))
		return wasi_oom(call);
	o->u.poll.kind = WPOLL_DEADLINE;
	o->u.poll.deadline = deadline;
	return 0;
}

static int subscribe_instant(cm_host_call *call, void *env, const cm_val *args,
			     uint32_t nargs, cm_val *res, uint32_t nres)
{
	return subscribe(call, env, args[0].u.u, res);
}

static int subscribe_duration(cm_host_call *call, void *env, const cm_val *args,
			      uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;
	uint64_t now = ctx->clock.now(ctx->clock.env);
	uint64_t d = args[0].u.u;

	return subscribe(call, ctx, d > UINT64_MAX - now ? UINT64_MAX : now + d,
			 res);
}

static int datetime(cm_host_call *call, cm_val *out, uint64_t sec,
		    uint32_t nsec)
{
	if (cm_val_seq(out, CM_RECORD, 2))
		return wasi_oom(call);
	out->u.list.elems[0] = cm_val_u64(sec);
	out->u.list.elems[1] = cm_val_u32(nsec);
	return 0;
}

static int wall_now(cm_host_call *call, void *env, const cm_val *args,
		    uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;
	uint64_t sec;
	uint32_t nsec;

	ctx->clock.wall(ctx->clock.env, &sec, &nsec);
	return datetime(call, &res[0], sec, nsec);
}

static int wall_resolution(cm_host_call *call, void *env, const cm_val *args,
			   uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;

	return datetime(call, &res[0], ctx->clock.resolution_ns / 1000000000u,
			(uint32_t)(ctx->clock.resolution_ns % 1000000000u));
}

static int fill_secure(cm_host_call *call, uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t r = getrandom(p, n, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return cm_host_call_trap(call,
						 "wasi: getrandom failed");
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static uint64_t insecure_next(wasi_ctx *ctx)
{
	uint64_t x = ctx->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	ctx->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

static int random_bytes(cm_host_call *call, wasi_ctx *ctx, uint64_t len,
			bool secure, cm_val *res)
{
	uint8_t *buf;
	int rc = 0;

	if (len > MAX_RANDOM_BYTES)
		return cm_host_call_trap(call,
					 "wasi: %s: too many bytes (limit %u)",
					 secure ? "get-random-bytes"
						: "get-insecure-random-bytes",
					 MAX_RANDOM_BYTES);
	buf = malloc(len ? len : 1);
	if (buf == NULL)
		return wasi_oom(call);
	if (secure)
		rc = fill_secure(call, buf, len);
	else
		for (uint64_t i = 0; i < len; i++)
			buf[i] = (uint8_t)(insecure_next(ctx) >> 56);
	if (rc == 0 && wasi_bytes(res, buf, len))
		rc = wasi_oom(call);
	free(buf);
	return rc;
}

static int get_random_bytes(cm_host_call *call, void *env, const cm_val *args,
			    uint32_t nargs, cm_val *res, uint32_t nres)
{
	return random_bytes(call, env, args[0].u.u, true, res);
}

static int get_random_u64(cm_host_call *call, void *env, const cm_val *args,
			  uint32_t nargs, cm_val *res, uint32_t nres)
{
	uint64_t x;

	if (fill_secure(call, (uint8_t *)&x, sizeof x))
		return -1;
	res[0] = cm_val_u64(x);
	return 0;
}

static int get_insecure_bytes(cm_host_call *call, void *env, const cm_val *args,
			      uint32_t nargs, cm_val *res, uint32_t nres)
{
	return random_bytes(call, env, args[0].u.u, false, res);
}

static int get_insecure_u64(cm_host_call *call, void *env, const cm_val *args,
			    uint32_t nargs, cm_val *res, uint32_t nres)
{
	res[0] = cm_val_u64(insecure_next(env));
	return 0;
}

/*
 * WASI 0.3's get-random-bytes and get-insecure-random-bytes take
 * max-len and may answer fewer: past MAX_RANDOM_BYTES they answer that
 * many (0.2's len is exact, so there it traps).
 */
static uint64_t max_len(const cm_val *arg)
{
	return arg->u.u > MAX_RANDOM_BYTES ? MAX_RANDOM_BYTES : arg->u.u;
}

static int get_random_bytes_p3(cm_host_call *call, void *env,
			       const cm_val *args, uint32_t nargs, cm_val *res,
			       uint32_t nres)
{
	return random_bytes(call, env, max_len(&args[0]), true, res);
}

static int get_insecure_bytes_p3(cm_host_call *call, void *env,
				 const cm_val *args, uint32_t nargs,
				 cm_val *res, uint32_t nres)
{
	return random_bytes(call, env, max_len(&args[0]), false, res);
}

static int insecure_seed(cm_host_call *call, void *env, const cm_val *args,
			 uint32_t nargs, cm_val *res, uint32_t nres)
{
	uint64_t s[2];

	if (fill_secure(call, (uint8_t *)s, sizeof s))
		return -1;
	if (cm_val_seq(&res[0], CM_TUPLE, 2))
		return wasi_oom(call);
	res[0].u.list.elems[0] = cm_val_u64(s[0]);
	res[0].u.list.elems[1] = cm_val_u64(s[1]);
	return 0;
}

static const struct {
	const char *instance, *name;
	cm_host_fn fn;
} funcs[] = {
	{"wasi:clocks/monotonic-clock" WASI_V, "now", mono_now},
	{"wasi:clocks/monotonic-clock" WASI_V, "resolution", mono_resolution},
	{"wasi:clocks/monotonic-clock" WASI_V, "subscribe-instant",
	 subscribe_instant},
	{"wasi:clocks/monotonic-clock" WASI_V, "subscribe-duration",
	 subscribe_duration},
	{"wasi:clocks/wall-clock" WASI_V, "now", wall_now},
	{"wasi:clocks/wall-clock" WASI_V, "resolution", wall_resolution},
	{"wasi:random/random" WASI_V, "get-random-bytes", get_random_bytes},
	{"wasi:random/random" WASI_V, "get-random-u64", get_random_u64},
	{"wasi:random/insecure" WASI_V, "get-insecure-random-bytes",
	 get_insecure_bytes},
	{"wasi:random/insecure" WASI_V, "get-insecure-random-u64",
	 get_insecure_u64},
	{"wasi:random/insecure-seed" WASI_V, "insecure-seed", insecure_seed},
	/* WASI 0.3: the same sources (max-len above) */
	{"wasi:random/random@0.3.0", "get-random-bytes", get_random_bytes_p3},
	{"wasi:random/random@0.3.0", "get-random-u64", get_random_u64},
	{"wasi:random/insecure@0.3.0", "get-insecure-random-bytes",
	 get_insecure_bytes_p3},
	{"wasi:random/insecure@0.3.0", "get-insecure-random-u64",
	 get_insecure_u64},
	{"wasi:random/insecure-seed@0.3.0", "get-insecure-seed",
	 insecure_seed},
};

int wasi_link_clocks_random(wasi_ctx *ctx, cm_linker *l)
{
	uint64_t seed;

	if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) == sizeof seed &&
	    seed != 0)
		ctx->rng = seed;
	for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
		if (cm_linker_define_func(l, funcs[i].instance, funcs[i].name,
					  funcs[i].fn, ctx))
			return -1;
	return 0;
}
