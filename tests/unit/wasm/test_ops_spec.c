/*
 * test_ops_spec.c - the numeric and SIMD tables checked against the core
 * spec test suite, without the interpreter.
 *
 * Most of f32.wast, i64.wast, conversions.wast, simd_*.wast, ... export
 * functions whose body is just `local.get 0 .. local.get n-1; OP; end`.
 * This test decodes every module of every script just far enough to find
 * those functions, maps OP to its row in ops_numeric.def / ops_simd.def
 * and evaluates each assert_return / assert_trap on them with the row's
 * function.  Everything else in the scripts (other functions, memory
 * instructions, other commands) is skipped: it is the engine's business.
 *
 * The suite is read from $HOSTEL_SHARED/core-testsuite; when it is absent
 * the test says so and checks nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasm/numeric.h"
#include "wasm/simd.h"
#include "testmain.h"

/* A value as raw bits: i32/f32 in the low 32 bits of lo, v128 in both. */
typedef struct tv {
	uint64_t lo, hi;
} tv;

/* Value-type letters: i = i32, I = i64, f = f32, F = f64, v = v128. */
typedef wasm_trap_kind (*op_call)(const tv *args, const uint8_t *imm, tv *res);

typedef struct opdesc {
	const char *name;
	const char *params;
	char result;
	unsigned nimm; /* immediate bytes after the opcode */
	op_call call;
	unsigned *hits;
} opdesc;

/* ---- wrappers generated from the tables --------------------------------- */

#define GET_I32(v)    ((uint32_t)(v).lo)
#define GET_I64(v)    ((v).lo)
#define GET_F32(v)    num_f32_from_bits((uint32_t)(v).lo)
#define GET_F64(v)    num_f64_from_bits((v).lo)
#define PUT_I32(r, x) ((r)->lo = (x), (r)->hi = 0)
#define PUT_I64(r, x) ((r)->lo = (x), (r)->hi = 0)
#define PUT_F32(r, x) ((r)->lo = num_f32_bits(x), (r)->hi = 0)
#define PUT_F64(r, x) ((r)->lo = num_f64_bits(x), (r)->hi = 0)
#define T_I32	      uint32_t
#define T_I64	      uint64_t
#define T_F32	      float
#define T_F64	      double
#define L_I32	      "i"
#define L_I64	      "I"
#define L_F32	      "f"
#define L_F64	      "F"

static wasm_v128 get_v(tv v)
{
	return simd_v128_make(v.lo, v.hi);
}

static void put_v(tv *r, wasm_v128 v)
{
	r->lo = v.lo;
	r->hi = v.hi;
}

#define NUMOP_UN(op, name, R, A, fn)                                           \
	static wasm_trap_kind w_##name(const tv *a, const uint8_t *imm, tv *r) \
	{                                                                      \
		PUT_##R(r, fn(GET_##A(a[0])));                                 \
		return WASM_TRAP_NONE;                                         \
	}
#define NUMOP_BIN(op, name, R, A, fn)                                          \
	static wasm_trap_kind w_##name(const tv *a, const uint8_t *imm, tv *r) \
	{                                                                      \
		PUT_##R(r, fn(GET_##A(a[0]), GET_##A(a[1])));                  \
		return WASM_TRAP_NONE;                                         \
	}
#define NUMOP_UN_TRAP(op, name, R, A, fn)                                      \
	static wasm_trap_kind w_##name(const tv *a, const uint8_t *imm, tv *r) \
	{                                                                      \
		T_##R x;                                                       \
		wasm_trap_kind k = fn(GET_##A(a[0]), &x);                      \
		if (k == WASM_TRAP_NONE)                                       \
			PUT_##R(r, x);                                         \
		return k;                                                      \
	}
#define NUMOP_BIN_TRAP(op, name, R, A, fn)                                     \
	static wasm_trap_kind w_##name(const tv *a, const uint8_t *imm, tv *r) \
	{                                                                      \
		T_##R x;                                                       \
		wasm_trap_kind k = fn(GET_##A(a[0]), GET_##A(a[1]), &x);       \
		if (k == WASM_TRAP_NONE)                                       \
			PUT_##R(r, x);                                         \
		return k;                                                      \
	}
#define NUMOP_FC_UN(op, name, R, A, fn) NUMOP_UN(op, name, R, A, fn)
#include "wasm/ops_numeric.def"

/* SIMD: one calling convention per shape. */
#define CALL_V_V(fn)	     put_v(r, fn(get_v(a[0])))
#define CALL_V_VV(fn)	     put_v(r, fn(get_v(a[0]), get_v(a[1])))
#define CALL_V_VVV(fn)	     put_v(r, fn(get_v(a[0]), get_v(a[1]), get_v(a[2])))
#define CALL_V_VS(fn)	     put_v(r, fn(get_v(a[0]), GET_I32(a[1])))
#define CALL_I32_V(fn)	     PUT_I32(r, fn(get_v(a[0])))
#define CALL_V_I32(fn)	     put_v(r, fn(GET_I32(a[0])))
#define CALL_V_I64(fn)	     put_v(r, fn(GET_I64(a[0])))
#define CALL_V_F32(fn)	     put_v(r, fn(GET_F32(a[0])))
#define CALL_V_F64(fn)	     put_v(r, fn(GET_F64(a[0])))
#define CALL_I32_V_LANE(fn)  PUT_I32(r, fn(get_v(a[0]), imm[0]))
#define CALL_I64_V_LANE(fn)  PUT_I64(r, fn(get_v(a[0]), imm[0]))
#define CALL_F32_V_LANE(fn)  PUT_F32(r, fn(get_v(a[0]), imm[0]))
#define CALL_F64_V_LANE(fn)  PUT_F64(r, fn(get_v(a[0]), imm[0]))
#define CALL_V_VI32_LANE(fn) put_v(r, fn(get_v(a[0]), imm[0], GET_I32(a[1])))
#define CALL_V_VI64_LANE(fn) put_v(r, fn(get_v(a[0]), imm[0], GET_I64(a[1])))
#define CALL_V_VF32_LANE(fn) put_v(r, fn(get_v(a[0]), imm[0], GET_F32(a[1])))
#define CALL_V_VF64_LANE(fn) put_v(r, fn(get_v(a[0]), imm[0], GET_F64(a[1])))

#define SIG_V_V		"v", 'v'
#define SIG_V_VV	"vv", 'v'
#define SIG_V_VVV	"vvv", 'v'
#define SIG_V_VS	"vi", 'v'
#define SIG_I32_V	"v", 'i'
#define SIG_V_I32	"i", 'v'
#define SIG_V_I64	"I", 'v'
#define SIG_V_F32	"f", 'v'
#define SIG_V_F64	"F", 'v'
#define SIG_I32_V_LANE	"v", 'i'
#define SIG_I64_V_LANE	"v", 'I'
#define SIG_F32_V_LANE	"v", 'f'
#define SIG_F64_V_LANE	"v", 'F'
#define SIG_V_VI32_LANE "vi", 'v'
#define SIG_V_VI64_LANE "vI", 'v'
#define SIG_V_VF32_LANE "vf", 'v'
#define SIG_V_VF64_LANE "vF", 'v'

#define SIMDOP(op, name, SH, fn)                                               \
	static wasm_trap_kind w_##name(const tv *a, const uint8_t *imm, tv *r) \
	{                                                                      \
		CALL_##SH(fn);                                                 \
		return WASM_TRAP_NONE;                                         \
	}
#define SIMDOP_LANE(op, name, SH, n, fn) SIMDOP(op, name, SH, fn)
#include "wasm/ops_simd.def"

static wasm_trap_kind w_i8x16_shuffle(const tv *a, const uint8_t *imm, tv *r)
{
	put_v(r, simd_i8x16_shuffle(get_v(a[0]), get_v(a[1]), imm));
	return WASM_TRAP_NONE;
}

/* Per-row hit counters, so the test can tell what the suite exercised. */
enum {
#define NUMOP_UN(op, name, R, A, fn)	   H_##name,
#define NUMOP_BIN(op, name, R, A, fn)	   H_##name,
#define NUMOP_UN_TRAP(op, name, R, A, fn)  H_##name,
#define NUMOP_BIN_TRAP(op, name, R, A, fn) H_##name,
#define NUMOP_FC_UN(op, name, R, A, fn)	   H_##name,
#include "wasm/ops_numeric.def"
#define SIMDOP(op, name, SH, fn)	 H_##name,
#define SIMDOP_LANE(op, name, SH, n, fn) H_##name,
#include "wasm/ops_simd.def"
	H_i8x16_shuffle,
	NHITS
};

struct state {
	opdesc num[256], fc[8], simd[0x114];
	unsigned hits[NHITS];
	unsigned checked, failed, scripts;
	char first_failures[2048];
};

static void build_tables(struct state *st)
{
#define NUMOP_UN(op, name, R, A, fn)                                           \
	st->num[op] = (opdesc){#name, L_##A,	L_##R[0],                      \
			       0,     w_##name, &st->hits[H_##name]};
#define NUMOP_BIN(op, name, R, A, fn)                                          \
	st->num[op] = (opdesc){#name, L_##A L_##A, L_##R[0],                   \
			       0,     w_##name,	   &st->hits[H_##name]};
#define NUMOP_UN_TRAP(op, name, R, A, fn)  NUMOP_UN(op, name, R, A, fn)
#define NUMOP_BIN_TRAP(op, name, R, A, fn) NUMOP_BIN(op, name, R, A, fn)
#define NUMOP_FC_UN(op, name, R, A, fn)                                        \
	st->fc[op] = (opdesc){#name, L_##A,    L_##R[0],                       \
			      0,     w_##name, &st->hits[H_##name]};
#include "wasm/ops_numeric.def"
#define SIMDOP(op, name, SH, fn)                                               \
	st->simd[op] =                                                         \
		(opdesc){#name, SIG_##SH, 0, w_##name, &st->hits[H_##name]};
#define SIMDOP_LANE(op, name, SH, n, fn)                                       \
	st->simd[op] =                                                         \
		(opdesc){#name, SIG_##SH, 1, w_##name, &st->hits[H_##name]};
#include "wasm/ops_simd.def"
	st->simd[0x0d] = (opdesc){
		"i8x16_shuffle",	   "vv", 'v', 16, w_i8x16_shuffle,
		&st->hits[H_i8x16_shuffle]};
}

/* ---- a decoder for just enough of a module ------------------------------ */

typedef struct rd {
	const uint8_t *p, *end;
	int bad;
} rd;

static uint64_t rd_leb(rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end && shift < 64) {
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		shift += 7;
	}
	r->bad = 1;
	return 0;
}

static uint8_t rd_byte(rd *r)
{
	if (r->p >= r->end) {
		r->bad = 1;
		return 0;
	}
	return *r->p++;
}

static void rd_skip(rd *r, uint64_t n)
{
	if (n > (uint64_t)(r->end - r->p)) {
		r->bad = 1;
		r->p = r->end;
	} else {
		r->p += n;
	}
}

static char valtype_letter(uint8_t b)
{
	switch (b) {
	case 0x7f:
		return 'i';
	case 0x7e:
		return 'I';
	case 0x7d:
		return 'f';
	case 0x7c:
		return 'F';
	case 0x7b:
		return 'v';
	default:
		return 'r'; /* a reference: never an operand of our rows */
	}
}

/* Value types; a typed reference (0x63/0x64 heaptype) takes a LEB. */
static char rd_valtype(rd *r)
{
	uint8_t b = rd_byte(r);
	if (b == 0x63 || b == 0x64)
		rd_leb(r);
	return valtype_letter(b);
}

typedef struct functype {
	char params[16], result; /* result 0: none or several */
	int ok;
} functype;

typedef struct export_fn {
	char *name;
	size_t namelen;
	const opdesc *op;
	uint8_t imm[16];
} export_fn;

typedef struct module {
	export_fn *exports;
	unsigned nexports;
} module;

static void module_free(module *m)
{
	for (unsigned i = 0; i < m->nexports; i++)
		free(m->exports[i].name);
	free(m->exports);
	m->exports = NULL;
	m->nexports = 0;
}

static void rd_limits(rd *r)
{
	uint8_t flags = rd_byte(r);
	rd_leb(r);
	if (flags & 1)
		rd_leb(r);
}

/* Which row, if any, is this body?  Returns NULL when it is not one. */
static const opdesc *match_body(const struct state *st, const functype *ft,
				rd *b, uint8_t imm[16])
{
	size_t np = strlen(ft->params);
	const opdesc *op = NULL;

	if (rd_leb(b) != 0) /* local declarations */
		return NULL;
	for (size_t i = 0; i < np; i++)
		if (rd_byte(b) != 0x20 || rd_leb(b) != i)
			return NULL;
	uint8_t code = rd_byte(b);
	if (code >= 0x45 && code <= 0xc4) {
		op = &st->num[code];
	} else if (code == 0xfc) {
		uint64_t sub = rd_leb(b);
		if (sub < 8)
			op = &st->fc[sub];
	} else if (code == 0xfd) {
		uint64_t sub = rd_leb(b);
		if (sub < 0x114 && st->simd[sub].call)
			op = &st->simd[sub];
	}
	if (!op || !op->call)
		return NULL;
	for (unsigned i = 0; i < op->nimm; i++)
		imm[i] = rd_byte(b);
	if (rd_byte(b) != 0x0b || b->p != b->end || b->bad)
		return NULL;
	if (strcmp(op->params, ft->params) != 0 || op->result != ft->result)
		return NULL;
	return op;
}

/* Decodes `bytes`; returns 0 when the module's layout is understood. */
static int module_scan(const struct state *st, const uint8_t *bytes, size_t len,
		       module *m)
{
	rd r = {bytes + 8, bytes + len, 0};
	functype *types = NULL;
	uint32_t *functypes = NULL; /* type of each function, imports first */
	uint64_t ntypes = 0, nfuncs = 0, nimported = 0;
	struct {
		uint32_t func;
		char *name;
		size_t len;
	} *exps = NULL;
	uint64_t nexps = 0;
	int rc = -1;

	memset(m, 0, sizeof *m);
	if (len < 8 || memcmp(bytes, "\0asm\1\0\0\0", 8) != 0)
		return -1;
	while (r.p < r.end && !r.bad) {
		uint8_t id = rd_byte(&r);
		uint64_t size = rd_leb(&r);
		if (size > (uint64_t)(r.end - r.p))
			goto out;
		rd s = {r.p, r.p + size, 0};
		r.p += size;
		if (id == 1) {
			ntypes = rd_leb(&s);
			if (ntypes > 100000)
				goto out;
			types = calloc(ntypes ? ntypes : 1, sizeof *types);
			if (!types)
				goto out;
			for (uint64_t i = 0; i < ntypes && !s.bad; i++) {
				if (rd_byte(&s) != 0x60)
					goto out; /* GC types: not ours */
				uint64_t np = rd_leb(&s);
				types[i].ok = np < sizeof types[i].params;
				for (uint64_t k = 0; k < np && !s.bad; k++) {
					char c = rd_valtype(&s);
					if (k < sizeof types[i].params - 1)
						types[i].params[k] = c;
				}
				uint64_t nr = rd_leb(&s);
				for (uint64_t k = 0; k < nr && !s.bad; k++) {
					char c = rd_valtype(&s);
					types[i].result = nr == 1 ? c : 0;
				}
			}
		} else if (id == 2) {
			uint64_t n = rd_leb(&s);
			for (uint64_t i = 0; i < n && !s.bad; i++) {
				rd_skip(&s, rd_leb(&s));
				rd_skip(&s, rd_leb(&s));
				uint8_t kind = rd_byte(&s);
				if (kind == 0) {
					uint32_t t = (uint32_t)rd_leb(&s);
					uint32_t *nf = realloc(
						functypes,
						(nfuncs + 1) * sizeof *nf);
					if (!nf)
						goto out;
					functypes = nf;
					functypes[nfuncs++] = t;
					nimported++;
				} else if (kind == 1) {
					rd_valtype(&s);
					rd_limits(&s);
				} else if (kind == 2) {
					rd_limits(&s);
				} else if (kind == 3) {
					rd_valtype(&s);
					rd_byte(&s);
				} else if (kind == 4) {
					rd_byte(&s);
					rd_leb(&s);
				} else {
					goto out;
				}
			}
		} else if (id == 3) {
			uint64_t n = rd_leb(&s);
			if (n > 1000000)
				goto out;
			uint32_t *nf = realloc(functypes,
					       (nfuncs + n + 1) * sizeof *nf);
			if (!nf)
				goto out;
			functypes = nf;
			for (uint64_t i = 0; i < n && !s.bad; i++)
				functypes[nfuncs++] = (uint32_t)rd_leb(&s);
		} else if (id == 7) {
			nexps = rd_leb(&s);
			if (nexps > 1000000)
				goto out;
			exps = calloc(nexps ? nexps : 1, sizeof *exps);
			if (!exps)
				goto out;
			for (uint64_t i = 0; i < nexps && !s.bad; i++) {
				uint64_t nl = rd_leb(&s);
				if (nl > (uint64_t)(s.end - s.p))
					goto out;
				exps[i].name = malloc(nl + 1);
				if (!exps[i].name)
					goto out;
				memcpy(exps[i].name, s.p, nl);
				exps[i].name[nl] = 0;
				exps[i].len = nl;
				s.p += nl;
				uint8_t kind = rd_byte(&s);
				uint32_t idx = (uint32_t)rd_leb(&s);
				exps[i].func = kind == 0 ? idx : UINT32_MAX;
			}
		} else if (id == 10) {
			uint64_t n = rd_leb(&s);
			m->exports =
				calloc(nexps ? nexps : 1, sizeof *m->exports);
			if (!m->exports)
				goto out;
			for (uint64_t i = 0; i < n && !s.bad; i++) {
				uint64_t bs = rd_leb(&s);
				if (bs > (uint64_t)(s.end - s.p))
					goto out;
				rd b = {s.p, s.p + bs, 0};
				uint64_t fi = nimported + i;
				s.p += bs;
				if (fi >= nfuncs || functypes[fi] >= ntypes ||
				    !types[functypes[fi]].ok)
					continue;
				for (uint64_t e = 0; e < nexps; e++) {
					uint8_t imm[16] = {0};
					rd bb = b;
					const opdesc *op;
					if (exps[e].func != fi)
						continue;
					op = match_body(st,
							&types[functypes[fi]],
							&bb, imm);
					if (!op)
						break;
					export_fn *x =
						&m->exports[m->nexports++];
					x->name = exps[e].name;
					x->namelen = exps[e].len;
					exps[e].name = NULL;
					x->op = op;
					memcpy(x->imm, imm, sizeof imm);
				}
			}
		}
		if (s.bad)
			goto out;
	}
	rc = r.bad ? -1 : 0;
out:
	for (uint64_t i = 0; exps && i < nexps; i++)
		free(exps[i].name);
	free(exps);
	free(types);
	free(functypes);
	if (rc != 0)
		module_free(m);
	return rc;
}

/* ---- values and expectations -------------------------------------------- */

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	if (s[0] == '-') {
		long long v = strtoll(s, &end, 10);
		*out = (uint64_t)v;
	} else {
		*out = strtoull(s, &end, 10);
	}
	return errno || *end ? -1 : 0;
}

static char type_letter(const char *t)
{
	if (!strcmp(t, "i32"))
		return 'i';
	if (!strcmp(t, "i64"))
		return 'I';
	if (!strcmp(t, "f32"))
		return 'f';
	if (!strcmp(t, "f64"))
		return 'F';
	if (!strcmp(t, "v128"))
		return 'v';
	return 0;
}

static unsigned lane_bits(const char *lt)
{
	if (!strcmp(lt, "i8"))
		return 8;
	if (!strcmp(lt, "i16"))
		return 16;
	if (!strcmp(lt, "i32") || !strcmp(lt, "f32"))
		return 32;
	return 64;
}

static void set_lane(tv *v, unsigned bits, unsigned i, uint64_t x)
{
	uint8_t b[16];
	memcpy(b, &v->lo, 8);
	memcpy(b + 8, &v->hi, 8);
	for (unsigned k = 0; k < bits / 8; k++)
		b[i * bits / 8 + k] = (uint8_t)(x >> (8 * k));
	memcpy(&v->lo, b, 8);
	memcpy(&v->hi, b + 8, 8);
}

static uint64_t get_lane(const tv *v, unsigned bits, unsigned i)
{
	uint8_t b[16];
	uint64_t x = 0;
	memcpy(b, &v->lo, 8);
	memcpy(b + 8, &v->hi, 8);
	for (unsigned k = 0; k < bits / 8; k++)
		x |= (uint64_t)b[i * bits / 8 + k] << (8 * k);
	return x;
}

/* An argument: returns its type letter, 0 if not understood. */
static char parse_arg(json_t *j, tv *out)
{
	const char *t = json_string_value(json_object_get(j, "type"));
	json_t *val = json_object_get(j, "value");
	char c = t ? type_letter(t) : 0;

	memset(out, 0, sizeof *out);
	if (!c)
		return 0;
	if (c != 'v') {
		uint64_t x;
		if (!json_is_string(val) ||
		    parse_u64(json_string_value(val), &x))
			return 0;
		out->lo = (c == 'i' || c == 'f') ? (uint32_t)x : x;
		return c;
	}
	const char *lt = json_string_value(json_object_get(j, "lane_type"));
	if (!lt || !json_is_array(val))
		return 0;
	unsigned bits = lane_bits(lt);
	if (json_array_size(val) != 128 / bits)
		return 0;
	for (unsigned i = 0; i < 128 / bits; i++) {
		uint64_t x;
		const char *s = json_string_value(json_array_get(val, i));
		if (!s || parse_u64(s, &x))
			return 0;
		set_lane(out, bits, i, x);
	}
	return c;
}

/* One float lane or scalar against "nan:canonical", "nan:arithmetic", bits. */
static int float_matches(const char *want, uint64_t got, unsigned bits)
{
	uint64_t sign = 1ull << (bits - 1), quiet, exp_quiet;

	if (bits == 32) {
		exp_quiet = 0x7fc00000u;
		quiet = 0x00400000u;
	} else {
		exp_quiet = 0x7ff8000000000000u;
		quiet = 0x0008000000000000u;
	}
	(void)quiet;
	if (!strcmp(want, "nan:canonical"))
		return (got & ~sign) == exp_quiet;
	if (!strcmp(want, "nan:arithmetic"))
		return (got & exp_quiet) == exp_quiet;
	uint64_t w;
	return !parse_u64(want, &w) && w == got;
}

/* 1 match, 0 mismatch, -1 not understood. */
static int expect_matches(json_t *j, char rtype, const tv *got)
{
	const char *t = json_string_value(json_object_get(j, "type"));
	json_t *val = json_object_get(j, "value");

	if (!t)
		return -1;
	if (!strcmp(t, "either")) {
		json_t *alts = json_object_get(j, "values");
		int any = -1;
		for (size_t i = 0; i < json_array_size(alts); i++) {
			int m = expect_matches(json_array_get(alts, i), rtype,
					       got);
			if (m == 1)
				return 1;
			if (m == 0)
				any = 0;
		}
		return any;
	}
	if (type_letter(t) != rtype)
		return -1;
	if (rtype == 'i' || rtype == 'I') {
		uint64_t w;
		if (!json_is_string(val) ||
		    parse_u64(json_string_value(val), &w))
			return -1;
		if (rtype == 'i')
			w = (uint32_t)w;
		return got->lo == w;
	}
	if (rtype == 'f' || rtype == 'F') {
		if (!json_is_string(val))
			return -1;
		return float_matches(json_string_value(val), got->lo,
				     rtype == 'f' ? 32 : 64);
	}
	const char *lt = json_string_value(json_object_get(j, "lane_type"));
	if (!lt || !json_is_array(val))
		return -1;
	unsigned bits = lane_bits(lt);
	int isfloat = lt[0] == 'f';
	for (unsigned i = 0; i < 128 / bits; i++) {
		const char *s = json_string_value(json_array_get(val, i));
		uint64_t lane = get_lane(got, bits, i), w;
		if (!s)
			return -1;
		if (isfloat) {
			if (!float_matches(s, lane, bits))
				return 0;
			continue;
		}
		if (parse_u64(s, &w))
			return -1;
		if (bits < 64)
			w &= (1ull << bits) - 1;
		if (w != lane)
			return 0;
	}
	return 1;
}

static wasm_trap_kind trap_of_text(const char *text)
{
	if (!text)
		return WASM_TRAP_NONE;
	if (strstr(text, "integer divide by zero"))
		return WASM_TRAP_INT_DIV_ZERO;
	if (strstr(text, "integer overflow"))
		return WASM_TRAP_INT_OVERFLOW;
	if (strstr(text, "invalid conversion to integer"))
		return WASM_TRAP_INVALID_CONVERSION;
	return WASM_TRAP_NONE;
}

/* ---- running one script ------------------------------------------------- */

typedef struct named {
	char *name;
	module m;
} named;

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

static void note_failure(struct state *st, const char *script, int line,
			 const char *what)
{
	size_t used = strlen(st->first_failures);

	st->failed++;
	if (used + 200 < sizeof st->first_failures)
		snprintf(st->first_failures + used,
			 sizeof st->first_failures - used, "  %s:%d: %s\n",
			 script, line, what);
}

static void run_command(struct state *st, const char *script, json_t *cmd,
			module *cur, named *names, unsigned nnames)
{
	const char *type = json_string_value(json_object_get(cmd, "type"));
	json_t *action = json_object_get(cmd, "action");
	int line = (int)json_integer_value(json_object_get(cmd, "line"));
	module *m = cur;
	tv args[4], res = {0, 0};

	if (!type || !action)
		return;
	int is_return = !strcmp(type, "assert_return");
	int is_trap = !strcmp(type, "assert_trap");
	if (!is_return && !is_trap)
		return;
	const char *mod = json_string_value(json_object_get(action, "module"));
	if (mod) {
		m = NULL;
		for (unsigned i = 0; i < nnames; i++)
			if (!strcmp(names[i].name, mod))
				m = &names[i].m;
		if (!m)
			return;
	}
	json_t *field = json_object_get(action, "field");
	if (!json_is_string(field))
		return;
	const export_fn *x = NULL;
	for (unsigned i = 0; i < m->nexports; i++)
		if (m->exports[i].namelen == json_string_length(field) &&
		    !memcmp(m->exports[i].name, json_string_value(field),
			    m->exports[i].namelen))
			x = &m->exports[i];
	if (!x)
		return;
	json_t *jargs = json_object_get(action, "args");
	size_t na = json_array_size(jargs);
	if (na != strlen(x->op->params) || na > 4)
		return;
	for (size_t i = 0; i < na; i++)
		if (parse_arg(json_array_get(jargs, i), &args[i]) !=
		    x->op->params[i])
			return;

	wasm_trap_kind k = x->op->call(args, x->imm, &res);
	char msg[160];
	if (is_trap) {
		wasm_trap_kind want = trap_of_text(
			json_string_value(json_object_get(cmd, "text")));
		if (want == WASM_TRAP_NONE)
			return;
		st->checked++;
		(*x->op->hits)++;
		if (k != want) {
			snprintf(msg, sizeof msg, "%s: trap %d, want %d",
				 x->op->name, (int)k, (int)want);
			note_failure(st, script, line, msg);
		}
		return;
	}
	json_t *exp = json_object_get(cmd, "expected");
	if (json_array_size(exp) != 1)
		return;
	int ok = k == WASM_TRAP_NONE ? expect_matches(json_array_get(exp, 0),
						      x->op->result, &res)
				     : 0;
	if (ok < 0)
		return;
	st->checked++;
	(*x->op->hits)++;
	if (!ok) {
		snprintf(msg, sizeof msg,
			 "%s: got %016" PRIx64 "%016" PRIx64 " (trap %d)",
			 x->op->name, res.hi, res.lo, (int)k);
		note_failure(st, script, line, msg);
	}
}

static void run_script(struct state *st, const char *dir, const char *file)
{
	char path[4096];
	json_error_t jerr;
	module cur = {NULL, 0};
	named names[32];
	unsigned nnames = 0;

	if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path)
		return;
	json_t *root = json_load_file(path, JSON_ALLOW_NUL, &jerr);
	ck_assert_msg(root != NULL, "%s: %s", path, jerr.text);
	json_t *cmds = json_object_get(root, "commands");
	st->scripts++;
	for (size_t i = 0; i < json_array_size(cmds); i++) {
		json_t *cmd = json_array_get(cmds, i);
		const char *type =
			json_string_value(json_object_get(cmd, "type"));
		if (type && !strcmp(type, "module")) {
			const char *fn = json_string_value(
				json_object_get(cmd, "filename"));
			const char *mt = json_string_value(
				json_object_get(cmd, "module_type"));
			const char *name =
				json_string_value(json_object_get(cmd, "name"));
			uint8_t *bytes;
			size_t len = 0;
			module_free(&cur);
			if (mt && strcmp(mt, "binary") != 0)
				fn = json_string_value(json_object_get(
					cmd, "binary_filename"));
			if (!fn)
				continue;
			if (snprintf(path, sizeof path, "%s/%s", dir, fn) >=
			    (int)sizeof path)
				continue;
			bytes = read_file(path, &len);
			if (!bytes)
				continue;
			if (module_scan(st, bytes, len, &cur) != 0)
				memset(&cur, 0, sizeof cur);
			free(bytes);
			if (name && nnames < 32) {
				/* A named copy: re-scan the same file. */
				bytes = read_file(path, &len);
				names[nnames].name = strdup(name);
				if (bytes && names[nnames].name &&
				    module_scan(st, bytes, len,
						&names[nnames].m) == 0)
					nnames++;
				else
					free(names[nnames].name);
				free(bytes);
			}
			continue;
		}
		if (type && (!strcmp(type, "module_definition") ||
			     !strcmp(type, "module_instance"))) {
			/* An instance we do not model becomes current. */
			module_free(&cur);
			continue;
		}
		run_command(st, file, cmd, &cur, names, nnames);
	}
	module_free(&cur);
	for (unsigned i = 0; i < nnames; i++) {
		module_free(&names[i].m);
		free(names[i].name);
	}
	json_decref(root);
}

static int json_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(spec_assertions_on_single_op_functions)
{
	const char *shared = getenv("HOSTEL_SHARED");
	char dir[4096];
	struct state *st = calloc(1, sizeof *st);
	char **files = NULL;
	size_t nfiles = 0;

	ck_assert_ptr_nonnull(st);
	snprintf(dir, sizeof dir, "%s/core-testsuite",
		 shared ? shared : "../shared");
	DIR *d = opendir(dir);
	if (!d) {
		printf("test_ops_spec: %s not found (set HOSTEL_SHARED); "
		       "spec assertions skipped\n",
		       dir);
		free(st);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		if (n > 5 && !strcmp(de->d_name + n - 5, ".json") &&
		    strcmp(de->d_name, "groups.json") != 0 &&
		    strcmp(de->d_name, "summary.json") != 0) {
			char **nf = realloc(files, (nfiles + 1) * sizeof *nf);
			ck_assert_ptr_nonnull(nf);
			files = nf;
			files[nfiles] = strdup(de->d_name);
			ck_assert_ptr_nonnull(files[nfiles]);
			nfiles++;
		}
	}
	closedir(d);
	qsort(files, nfiles, sizeof *files, json_name_cmp);

	build_tables(st);
	for (size_t i = 0; i < nfiles; i++) {
		run_script(st, dir, files[i]);
		free(files[i]);
	}
	free(files);

	unsigned unexercised = 0;
	char list[4096] = "";
	static const char *const row_names[NHITS] = {
#define NUMOP_UN(op, name, R, A, fn)	   #name,
#define NUMOP_BIN(op, name, R, A, fn)	   #name,
#define NUMOP_UN_TRAP(op, name, R, A, fn)  #name,
#define NUMOP_BIN_TRAP(op, name, R, A, fn) #name,
#define NUMOP_FC_UN(op, name, R, A, fn)	   #name,
#include "wasm/ops_numeric.def"
#define SIMDOP(op, name, SH, fn)	 #name,
#define SIMDOP_LANE(op, name, SH, n, fn) #name,
#include "wasm/ops_simd.def"
		"i8x16_shuffle",
	};
	for (unsigned i = 0; i < NHITS; i++) {
		if (st->hits[i])
			continue;
		unexercised++;
		if (strlen(list) + strlen(row_names[i]) + 2 < sizeof list) {
			strcat(list, " ");
			strcat(list, row_names[i]);
		}
	}
	printf("test_ops_spec: %u assertions checked in %u scripts, "
	       "%u failing; rows not exercised directly:%s\n",
	       st->checked, st->scripts, st->failed,
	       unexercised ? list : " none");
	ck_assert_msg(st->failed == 0, "%u spec assertions fail:\n%s",
		      st->failed, st->first_failures);
	/* The suite holds tens of thousands of these: a low count means the
	 * matcher broke, not that everything passed. */
	ck_assert_uint_gt(st->checked, 20000);
	free(st);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("ops_spec");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, spec_assertions_on_single_op_functions);
	suite_add_tcase(s, tc);
	return s;
}
