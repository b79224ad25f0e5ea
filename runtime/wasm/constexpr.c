/*
 * constexpr.c - evaluation of constant expressions (global initialisers,
 * table initialisers, segment offsets and element expressions).
 *
 * Contract: accepts the instructions the spec allows in constant
 * expressions: t.const for i32/i64/f32/f64/v128, ref.null, ref.func,
 * global.get, and extended-const i32/i64 add, sub and mul.  Input has
 * been validated, but a malformed expression still only yields an
 * INVALID error, never a crash or an out-of-bounds read.  The result is
 * the single value left at `end`, in slot representation.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - push: the evaluation stack doubles up to 2^20 entries (16 MiB),
 *    then the expression fails; it never outgrows the expression's
 *    length anyway (one push per instruction).
 */
#include "wasm/instance.h"

#include <stdlib.h>
#include <string.h>

#include "wasm/ops.h"

typedef struct reader {
	const uint8_t *p, *end;
} reader;

static bool read_byte(reader *r, uint8_t *b)
{
	if (r->p >= r->end)
		return false;
	*b = *r->p++;
	return true;
}

static bool read_uleb(reader *r, unsigned bits, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (shift >= bits || !read_byte(r, &b))
			return false;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*out = v;
	return true;
}

static bool read_sleb(reader *r, unsigned bits, int64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (shift >= bits || !read_byte(r, &b))
			return false;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	*out = (int64_t)v;
	return true;
}

static bool read_fixed(reader *r, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if ((size_t)(r->end - r->p) < n)
		return false;
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	*out = v;
	return true;
}

/* The operand stack: a few values inline, the heap for deep nests. */
typedef struct cstack {
	uint64_t (*v)[2];
	uint32_t n, cap;
	uint64_t inline_v[8][2];
} cstack;

static bool push(cstack *st, uint64_t lo, uint64_t hi)
{
	if (st->n == st->cap) {
		uint32_t cap = st->cap * 2;
		uint64_t(*v)[2];

		if (cap > 1u << 20)
			return false;
		if (st->v == st->inline_v) {
			v = malloc(cap * sizeof *v);
			if (v != NULL)
				memcpy(v, st->inline_v, sizeof st->inline_v);
		} else {
			v = realloc(st->v, cap * sizeof *v);
		}
		if (v == NULL)
			return false;
		st->v = v;
		st->cap = cap;
	}
	st->v[st->n][0] = lo;
	st->v[st->n][1] = hi;
	st->n++;
	return true;
}

static bool binop(cstack *st, uint8_t op)
{
	uint64_t a, b, r;

	if (st->n < 2)
		return false;
	a = st->v[st->n - 2][0];
	b = st->v[st->n - 1][0];
	st->n -= 2;
	switch (op) {
	case WASM_OP_i32_add:
		r = (uint32_t)(a + b);
		break;
	case WASM_OP_i32_sub:
		r = (uint32_t)(a - b);
		break;
	case WASM_OP_i32_mul:
		r = (uint32_t)((uint32_t)a * (uint32_t)b);
		break;
	case WASM_OP_i64_add:
		r = a + b;
		break;
	case WASM_OP_i64_sub:
		r = a - b;
		break;
	default: /* i64.mul */
		r = a * b;
		break;
	}
	return push(st, r, 0);
}

/* Executes one instruction; returns 1 at `end`, 0 to go on, -1 on error. */
static int step(const wasm_instance *inst, uint32_t nglobals, reader *r,
		cstack *st)
{
	const wasm_global_inst *g;
	uint64_t u, hi = 0;
	int64_t s;
	uint8_t op;

	if (!read_byte(r, &op))
		return -1;
	switch (op) {
	case WASM_OP_end:
		return 1;
	case WASM_OP_i32_const:
		if (!read_sleb(r, 32, &s))
			return -1;
		u = (uint32_t)s;
		break;
	case WASM_OP_i64_const:
		if (!read_sleb(r, 64, &s))
			return -1;
		u = (uint64_t)s;
		break;
	case WASM_OP_f32_const:
		if (!read_fixed(r, 4, &u))
			return -1;
		break;
	case WASM_OP_f64_const:
		if (!read_fixed(r, 8, &u))
			return -1;
		break;
	case WASM_OP_ref_null: /* heaptype */
		if (!read_sleb(r, 33, &s))
			return -1;
		u = 0;
		break;
	case WASM_OP_ref_func: /* funcidx */
		if (!read_uleb(r, 32, &u) ||
		    u >= wasm_module_nfuncs(inst->module) ||
		    inst->funcs[u] == NULL)
			return -1;
		u = (uint64_t)(uintptr_t)inst->funcs[u];
		break;
	case WASM_OP_global_get:
		if (!read_uleb(r, 32, &u) || u >= nglobals ||
		    inst->globals[u] == NULL)
			return -1;
		g = inst->globals[u];
		u = g->slots[0];
		hi = g->slots[1];
		break;
	case WASM_OP_i32_add:
	case WASM_OP_i32_sub:
	case WASM_OP_i32_mul:
	case WASM_OP_i64_add:
	case WASM_OP_i64_sub:
	case WASM_OP_i64_mul:
		return binop(st, op) ? 0 : -1;
	case WASM_OP_prefix_simd: /* v128.const: 16 bytes */
		if (!read_uleb(r, 32, &u) || u != WASM_OP_FD_v128_const ||
		    !read_fixed(r, 8, &u) || !read_fixed(r, 8, &hi))
			return -1;
		break;
	default:
		return -1;
	}
	return push(st, u, hi) ? 0 : -1;
}

int wasm_constexpr_eval(const wasm_instance *inst, uint32_t nglobals,
			const wasm_constexpr *ce, uint64_t out[2],
			wasm_error *err)
{
	reader r = {ce->code, ce->code + ce->len};
	cstack st;
	int rc;

	if (ce->code == NULL)
		r.end = r.p;
	if (nglobals > wasm_module_nglobals(inst->module))
		nglobals = wasm_module_nglobals(inst->module);
	st.v = st.inline_v;
	st.n = 0;
	st.cap = 8;
	while ((rc = step(inst, nglobals, &r, &st)) == 0)
		;
	if (rc == 1 && st.n == 1) {
		out[0] = st.v[0][0];
		out[1] = st.v[0][1];
	} else {
		rc = -1;
	}
	if (st.v != st.inline_v)
		free(st.v);
	if (rc != 1)
		return wasm_error_set(err, WASM_ERR_INVALID, ce->offset,
				      "constant expression required");
	return 0;
}
