/*
 * fuzz_cabi.c - libFuzzer target over the canonical ABI's lift and lower
 * (runtime/cabi): random types, random memory, random core values.
 *
 * Input: one option byte (string encoding, pointer alignment), a value
 * type (random_type.h), a 16-bit offset, then a memory image copied to the
 * start of a one-page linear memory.  The target
 *   1. loads a value of the type at the offset (cabi_load);
 *   2. when that succeeds, the value must type-check, must store into
 *      fresh memory (cabi_store, strings and lists through a host realloc)
 *      and load back equal, and must lower to flat core values and lift
 *      back equal (cabi_lower_flat / cabi_lift_flat);
 *   3. lifts the same type from core values made of the image bytes
 *      (cabi_lift_flat) and, when that succeeds, checks the same round
 *      trip.
 * A load or lift of random bytes may trap (bad discriminant, bad UTF-8,
 * out of bounds, unaligned); a round trip of a value the ABI produced
 * may not.
 *
 * Contract: any input may be refused with a trap; nothing may crash,
 * leak, trip a sanitizer, fail a round trip (abort) or report a host
 * value error.  Built only with --enable-fuzzing (clang).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cabi/cabi.h"
#include "random_type.h"
#include "wasm/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum {
	PAGE = 65536,
	IMAGE_MAX = PAGE / 2, /* the image; realloc allocates above it */
	MAX_PAGES = 16,
	MAX_FLAT = 256,
};

/* A bump allocator in linear memory, growing it up to MAX_PAGES. */
typedef struct bump {
	wasm_memory *mem;
	uint64_t next;
	bool full; /* refused a request: a failure after this is ours */
} bump;

static wasm_valtype RA_PARAMS[] = {WASM_I32, WASM_I32, WASM_I32, WASM_I32};
static wasm_valtype RA_RESULTS[] = {WASM_I32};
static const wasm_functype RA_TYPE = {4, 1, RA_PARAMS, RA_RESULTS};

static uint64_t bump_alloc(bump *b, uint64_t align, uint64_t size)
{
	uint64_t p;

	if (align == 0 || (align & (align - 1)))
		align = 1;
	p = (b->next + align - 1) / align * align;
	while (p + size > wasm_memory_size_bytes(b->mem))
		if (wasm_memory_grow(b->mem, 1) < 0) {
			b->full = true;
			return UINT32_MAX; /* out of bounds: the ABI traps */
		}
	b->next = p + size;
	return p;
}

static wasm_host_status ra_fn(wasm_exec *e, void *env, const wasm_val *args,
			      wasm_val *res)
{
	bump *b = env;
	uint32_t op = args[0].u.i32, os = args[1].u.i32;
	uint32_t al = args[2].u.i32, ns = args[3].u.i32;
	uint64_t p;

	(void)e;
	res[0].type = WASM_I32;
	if (op != 0 && ns <= os) {
		res[0].u.i32 = op;
		return WASM_HOST_OK;
	}
	p = bump_alloc(b, al, ns);
	if (op != 0 && p != UINT32_MAX && (uint64_t)op + os <= p)
		memmove(wasm_memory_data(b->mem) + p,
			wasm_memory_data(b->mem) + op, os);
	res[0].u.i32 = (uint32_t)p;
	return WASM_HOST_OK;
}

static __attribute__((noreturn)) void fail(const char *what, const cabi_cx *cx)
{
	fprintf(stderr, "fuzz_cabi: %s: %s\n", what, cx ? cx->err.msg : "");
	abort();
}

/* A lifted value v of type t: type-check, then the two round trips. */
static void round_trip(cabi_cx *cx, bump *b, const cm_type *t, const cm_val *v)
{
	char why[160];
	cm_val back;
	uint64_t p;

	if (!cm_val_typecheck(v, t, why, sizeof why)) {
		fprintf(stderr, "fuzz_cabi: lifted value: %s\n", why);
		abort();
	}
	/* memory: store at a fresh address, load back */
	p = bump_alloc(b, cm_alignment(t, false), cm_elem_size(t, false));
	if (p == UINT32_MAX)
		return;
	if (cabi_store(cx, v, t, p) != 0) {
		if (b->full || cx->err.kind == CABI_ERR_NOMEM)
			return;
		fail("store of a lifted value", cx);
	}
	if (cabi_load(cx, p, t, &back) != 0)
		fail("load of a stored value", cx);
	if (!cm_val_equal(v, &back))
		fail("load(store(v)) != v", NULL);
	cm_val_free(&back);

	/* flat: lower to core values, lift back */
	uint32_t nflat = cm_flat_count(t);

	if (nflat > MAX_FLAT)
		return;
	wasm_val *flat = calloc(nflat ? nflat : 1, sizeof *flat);

	if (flat == NULL)
		return;
	cabi_core_out out = {flat, 0, nflat};

	if (cabi_lower_flat(cx, v, t, &out) != 0) {
		free(flat);
		if (b->full || cx->err.kind == CABI_ERR_NOMEM)
			return;
		fail("lower_flat of a lifted value", cx);
	}
	if (out.n != nflat)
		fail("lower_flat count differs from the flat count", NULL);
	cabi_core_iter vi = {flat, out.n, 0};

	if (cabi_lift_flat(cx, &vi, t, &back) != 0)
		fail("lift_flat of lowered values", cx);
	if (vi.i != out.n)
		fail("lift_flat left core values", NULL);
	if (!cm_val_equal(v, &back))
		fail("lift_flat(lower_flat(v)) != v", NULL);
	cm_val_free(&back);
	free(flat);
}

/* Core values of t's flattening, their bits taken from src. */
static void lift_random_flat(cabi_cx *cx, bump *b, const cm_type *t, ft_in *src)
{
	wasm_valtype types[MAX_FLAT];
	wasm_val vals[MAX_FLAT];
	uint32_t n = cm_flat_count(t);
	cm_val v;

	if (n > MAX_FLAT || cm_flatten(t, false, types, MAX_FLAT) != n)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t x = 0;

		for (int k = 0; k < 8; k++)
			x |= (uint64_t)ft_byte(src) << (8 * k);
		memset(&vals[i], 0, sizeof vals[i]);
		vals[i].type = types[i];
		switch (types[i]) {
		case WASM_I32:
			vals[i].u.i32 = (uint32_t)x % (2 * PAGE);
			break;
		case WASM_F32:
			vals[i].u.f32 = (uint32_t)x;
			break;
		default: /* i64, f64 */
			vals[i].u.i64 = x;
			break;
		}
	}
	cabi_core_iter vi = {vals, n, 0};

	if (cabi_lift_flat(cx, &vi, t, &v) != 0)
		return;
	round_trip(cx, b, t, &v);
	cm_val_free(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ft_in in = {data, size};
	ft_pool *pool = calloc(1, sizeof *pool);
	wasm_memtype mt = {
		.limits = {.min = 1, .max = MAX_PAGES, .has_max = true}};
	cabi_options o = {0};
	wasm_store *s = NULL;
	bump b = {0};
	cabi_table table;
	cabi_cx cx;
	cm_val v;

	if (pool == NULL)
		return 0;
	uint8_t opt = ft_byte(&in);
	const cm_type *t = ft_type(pool, &in, 0, false);
	uint64_t ptr = ft_u16(&in);

	if (!(opt & 4)) /* mostly aligned; sometimes not */
		ptr &= ~(uint64_t)(cm_alignment(t, false) - 1);
	s = wasm_store_new(NULL);
	if (s == NULL)
		goto out;
	b.mem = wasm_memory_new(s, mt);
	if (b.mem == NULL)
		goto out;
	b.next = IMAGE_MAX;
	memcpy(wasm_memory_data(b.mem), in.p,
	       in.n < IMAGE_MAX ? in.n : IMAGE_MAX);
	o.string_encoding = (cm_string_encoding)(opt % 3);
	o.memory = b.mem;
	o.realloc = wasm_func_new_host(s, &RA_TYPE, ra_fn, &b);
	if (o.realloc == NULL)
		goto out;
	cabi_table_init(&table);
	cabi_cx_init(&cx, &o, NULL, &table);
	cx.store = s;
	cx.host_peer = opt & 8;

	if (cabi_load(&cx, ptr, t, &v) == 0) {
		round_trip(&cx, &b, t, &v);
		cm_val_free(&v);
	} else if (cx.err.kind == CABI_ERR_VALUE) {
		fail("load of random memory", &cx);
	}
	lift_random_flat(&cx, &b, t, &in);
	cabi_cx_release(&cx);
	cabi_table_free(&table);
out:
	wasm_store_free(s);
	ft_pool_free(pool);
	free(pool);
	return 0;
}
