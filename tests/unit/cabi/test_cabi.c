/*
 * test_cabi.c - the Canonical ABI (runtime/cabi) against a real linear
 * memory of the core engine and a realloc that is a host function run
 * through wasm_exec: round trips of every value type through core values
 * and through memory at every alignment and size edge, spilling at exactly
 * 16/17 flat params and 1/2 results, string transcoding in every direction
 * with edge code points and the reference's realloc call sequences, every
 * ABI trap with the suite's message, handle-table index order and reuse,
 * own/borrow semantics and the resource built-ins.
 */
#include <math.h>
#include <string.h>

#include "cabi/cabi.h"
#include "wasm/store.h"
#include "cabi_types.h"
#include "testmain.h"

/* ---- fixture: a store, a 1-page memory (max 8), a host realloc --------- */

typedef struct ra_state {
	wasm_memory *mem;
	uint32_t next; /* bump pointer */
	uint32_t ncalls;
	uint32_t calls[64][4];
	bool fixed; /* return `value` instead of allocating */
	uint32_t value;
	bool grow;	    /* grow memory by a page per allocation */
	bool trap, block;   /* misbehave */
	bool *may_leave;    /* observed during the call */
	bool saw_may_leave; /* value of *may_leave seen */
} ra_state;

static wasm_store *S;
static wasm_memory *MEM;
static wasm_func *REALLOC;
static ra_state RA;
static cabi_table TABLE;
static cabi_cx CX, CX2;

static wasm_valtype RA_PARAMS[] = {WASM_I32, WASM_I32, WASM_I32, WASM_I32};
static wasm_valtype RA_RESULTS[] = {WASM_I32};
static wasm_functype RA_TYPE = {4, 1, RA_PARAMS, RA_RESULTS};

static wasm_host_status ra_fn(wasm_exec *e, void *env, const wasm_val *args,
			      wasm_val *res)
{
	ra_state *s = env;
	uint32_t op = args[0].u.i32, os = args[1].u.i32, al = args[2].u.i32;
	uint32_t ns = args[3].u.i32, p;

	if (s->ncalls < 64) {
		s->calls[s->ncalls][0] = op;
		s->calls[s->ncalls][1] = os;
		s->calls[s->ncalls][2] = al;
		s->calls[s->ncalls][3] = ns;
	}
	s->ncalls++;
	if (s->may_leave != NULL)
		s->saw_may_leave = *s->may_leave;
	if (s->trap) {
		wasm_exec_set_host_trap(e, "realloc exploded");
		return WASM_HOST_TRAP;
	}
	if (s->block)
		return WASM_HOST_BLOCK;
	res[0].type = WASM_I32;
	if (s->fixed) {
		res[0].u.i32 = s->value;
		return WASM_HOST_OK;
	}
	if (op != 0 && ns <= os) {
		res[0].u.i32 = op; /* shrink in place */
		return WASM_HOST_OK;
	}
	if (s->grow) {
		uint64_t old = wasm_memory_size_bytes(s->mem);

		ck_assert_int_ge(wasm_memory_grow(s->mem, 1), 0);
		if (s->next < old)
			s->next = (uint32_t)old;
	}
	p = (s->next + al - 1) / al * al;
	s->next = p + ns;
	ck_assert_uint_le(s->next, wasm_memory_size_bytes(s->mem));
	if (op != 0)
		memmove(wasm_memory_data(s->mem) + p,
			wasm_memory_data(s->mem) + op, os < ns ? os : ns);
	res[0].u.i32 = p;
	return WASM_HOST_OK;
}

static void init_cx(cabi_cx *cx, cm_string_encoding enc)
{
	cabi_options o;

	memset(&o, 0, sizeof o);
	o.string_encoding = enc;
	o.memory = MEM;
	o.realloc = REALLOC;
	cabi_cx_init(cx, &o, NULL, &TABLE);
	cx->store = S;
}

static void setup(void)
{
	wasm_memtype mt;

	memset(&mt, 0, sizeof mt);
	mt.limits.min = 1;
	mt.limits.max = 8;
	mt.limits.has_max = true;
	S = wasm_store_new(NULL);
	ck_assert_ptr_nonnull(S);
	MEM = wasm_memory_new(S, mt);
	ck_assert_ptr_nonnull(MEM);
	memset(&RA, 0, sizeof RA);
	RA.mem = MEM;
	RA.next = 1024;
	REALLOC = wasm_func_new_host(S, &RA_TYPE, ra_fn, &RA);
	ck_assert_ptr_nonnull(REALLOC);
	cabi_table_init(&TABLE);
	init_cx(&CX, CM_UTF8);
	init_cx(&CX2, CM_UTF8);
}

static void teardown(void)
{
	cabi_cx_release(&CX);
	cabi_cx_release(&CX2);
	cabi_table_free(&TABLE);
	wasm_store_free(S);
	tt_free_all();
}

static uint8_t *mem(void)
{
	return wasm_memory_data(MEM);
}

static void put32(uint32_t at, uint32_t v)
{
	memcpy(mem() + at, &v, 4);
}

static uint32_t get32(uint32_t at)
{
	uint32_t v;

	memcpy(&v, mem() + at, 4);
	return v;
}

static wasm_val I32(uint32_t v)
{
	wasm_val x;

	memset(&x, 0, sizeof x);
	x.type = WASM_I32;
	x.u.i32 = v;
	return x;
}

static wasm_val I64(uint64_t v)
{
	wasm_val x;

	memset(&x, 0, sizeof x);
	x.type = WASM_I64;
	x.u.i64 = v;
	return x;
}

#define ASSERT_TRAP(cx, r, text)                                               \
	do {                                                                   \
		ck_assert_int_eq((r), -1);                                     \
		ck_assert_int_eq((cx)->err.kind, CABI_ERR_TRAP);               \
		ck_assert_msg(strstr((cx)->err.msg, (text)) != NULL,           \
			      "trap message `%s` lacks `%s`", (cx)->err.msg,   \
			      (text));                                         \
	} while (0)

static cm_val S_(const char *s)
{
	cm_val v;

	ck_assert_int_eq(cm_val_string(&v, s, strlen(s)), 0);
	return v;
}

/* lower_flat then lift_flat: the value must come back equal. */
static void flat_roundtrip(const cm_type *t, const cm_val *v)
{
	wasm_val core[64];
	cabi_core_out out = {core, 0, 64};
	cabi_core_iter it;
	cm_val back;

	ck_assert_msg(cabi_lower_flat(&CX, v, t, &out) == 0, "lower: %s",
		      CX.err.msg);
	ck_assert_uint_eq(out.n, cm_flat_count(t));
	it = (cabi_core_iter){core, out.n, 0};
	ck_assert_msg(cabi_lift_flat(&CX, &it, t, &back) == 0, "lift: %s",
		      CX.err.msg);
	ck_assert_uint_eq(it.i, out.n);
	ck_assert(cm_val_equal(v, &back));
	cm_val_free(&back);
}

/* store at ptr then load: equal. */
static void mem_roundtrip(const cm_type *t, const cm_val *v, uint32_t ptr)
{
	cm_val back;

	ck_assert_msg(cabi_store(&CX, v, t, ptr) == 0, "store: %s", CX.err.msg);
	ck_assert_msg(cabi_load(&CX, ptr, t, &back) == 0, "load: %s",
		      CX.err.msg);
	ck_assert(cm_val_equal(v, &back));
	cm_val_free(&back);
}

/* ---- values
 * ------------------------------------------------------------------- */

START_TEST(val_copy_equal_free)
{
	const cm_type *t = record_of(3, "a", list_of(P(CM_STRING)), "b",
				     option_of(P(CM_U8)), "c", P(CM_F32));
	cm_val v, c, s;

	ck_assert_int_eq(cm_val_seq(&v, CM_RECORD, 3), 0);
	ck_assert_int_eq(cm_val_seq(&v.u.list.elems[0], CM_LIST, 2), 0);
	v.u.list.elems[0].u.list.elems[0] = S_("x\0y");
	v.u.list.elems[0].u.list.elems[1] = S_("hé");
	ck_assert_int_eq(cm_val_case_payload(&v.u.list.elems[1], CM_OPTION, 1),
			 0);
	*v.u.list.elems[1].u.variant.payload = cm_val_u8(7);
	v.u.list.elems[2] = cm_val_f32_bits(0x7fc00001u);
	ck_assert(cm_val_typecheck(&v, t, NULL, 0));
	ck_assert_int_eq(cm_val_copy(&c, &v), 0);
	ck_assert(cm_val_equal(&v, &c));
	/* floats compare by bits: a different NaN is a different value */
	c.u.list.elems[2] = cm_val_f32_bits(0x7fc00000u);
	ck_assert(!cm_val_equal(&v, &c));
	cm_val_free(&c);
	ck_assert_int_eq(c.kind, CM_BOOL);
	cm_val_free(&v);
	/* strings may hold NUL and are NUL-terminated */
	ck_assert_int_eq(cm_val_string(&s, "a\0b", 3), 0);
	ck_assert_uint_eq(s.u.str.len, 3);
	ck_assert_int_eq(s.u.str.ptr[3], 0);
	cm_val_free(&s);
	ck_assert_int_eq(cm_val_string(&s, "\xff", 1), -2);
	ck_assert_int_eq(cm_val_string(&s, "\xed\xa0\x80", 3), -2);
	cm_val_free(&s);
}
END_TEST

START_TEST(val_typecheck)
{
	char why[128];
	cm_val v = cm_val_u32(300);

	v.kind = CM_U8;
	ck_assert(!cm_val_typecheck(&v, P(CM_U8), why, sizeof why));
	ck_assert_ptr_nonnull(strstr(why, "out of range"));
	v = cm_val_char(0xd800);
	ck_assert(!cm_val_typecheck(&v, P(CM_CHAR), why, sizeof why));
	v = cm_val_flags(0x4);
	ck_assert(
		!cm_val_typecheck(&v, flags_of(2, "a", "b"), why, sizeof why));
	v = cm_val_case(CM_OPTION, 1);
	ck_assert(!cm_val_typecheck(&v, option_of(P(CM_U8)), why, sizeof why));
	ck_assert_ptr_nonnull(strstr(why, "missing"));
	v = cm_val_u8(1);
	ck_assert(!cm_val_typecheck(&v, P(CM_STRING), why, sizeof why));
	ck_assert_str_eq(why, "expected string, found u8");
}
END_TEST

/* ---- scalars ----------------------------------------------------------------
 */

START_TEST(scalars_roundtrip)
{
	cm_val vs[] = {
		cm_val_bool(true),
		cm_val_bool(false),
		cm_val_s8(-128),
		cm_val_s8(127),
		cm_val_u8(255),
		cm_val_s16(-32768),
		cm_val_u16(65535),
		cm_val_s32(INT32_MIN),
		cm_val_u32(UINT32_MAX),
		cm_val_s64(INT64_MIN),
		cm_val_u64(UINT64_MAX),
		cm_val_f32_bits(0x7fc00001u),
		cm_val_f32_bits(0x80000000u),
		cm_val_f64_bits(0x7ff0000000000001ull),
		cm_val_f64(-1.5),
		cm_val_char(0x10ffff),
		cm_val_char(0),
		cm_val_char(0xd7ff),
		cm_val_char(0xe000),
	};

	for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
		const cm_type *t = P(vs[i].kind);
		uint32_t a = cm_alignment(t, false);

		flat_roundtrip(t, &vs[i]);
		/* at an aligned address, and flush with the end of memory */
		mem_roundtrip(t, &vs[i], 8 * a);
		mem_roundtrip(t, &vs[i], 65536 - cm_elem_size(t, false));
	}
}
END_TEST

START_TEST(scalars_lift_wrap)
{
	wasm_val core[1];
	cabi_core_iter it;
	cm_val v;

	/* numerics.wast: 0xff00 as u8 -> 0, 0xff as s8 -> -1, ... */
	core[0] = I32(0xff00);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_U8), &v), 0);
	ck_assert_uint_eq(v.u.u, 0);
	core[0] = I32(0xff);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_S8), &v), 0);
	ck_assert_int_eq(v.u.s, -1);
	core[0] = I32(0xffffff);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_S16), &v), 0);
	ck_assert_int_eq(v.u.s, -1);
	core[0] = I32(0x12345);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_U16), &v), 0);
	ck_assert_uint_eq(v.u.u, 0x2345);
	core[0] = I32(0x80000000u);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_S32), &v), 0);
	ck_assert_int_eq(v.u.s, INT32_MIN);
	/* bool: any non-zero is true, in core values and in memory */
	core[0] = I32(2);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_BOOL), &v), 0);
	ck_assert(v.u.b);
	mem()[100] = 0x80;
	ck_assert_int_eq(cabi_load(&CX, 100, P(CM_BOOL), &v), 0);
	ck_assert(v.u.b);
	/* flags: bits above the label count are ignored (numerics.wast) */
	core[0] = I32(0xffffff11u);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, nflags(9), &v), 0);
	ck_assert_uint_eq(v.u.flags, 0x111);
	put32(200, 0xffffff11u);
	ck_assert_int_eq(cabi_load(&CX, 200, nflags(9), &v), 0);
	ck_assert_uint_eq(v.u.flags, 0x111);
	/* s64 from i64 */
	core[0] = I64(0xffffffffffffffffull);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_S64), &v), 0);
	ck_assert_int_eq(v.u.s, -1);
}
END_TEST

START_TEST(scalars_lower_masks)
{
	wasm_val core[2];
	cabi_core_out out = {core, 0, 2};
	cm_val v = cm_val_s8(-1);

	ck_assert_int_eq(cabi_lower_flat(&CX, &v, P(CM_S8), &out), 0);
	ck_assert_uint_eq(core[0].u.i32, 0xffffffffu);
	ck_assert_int_eq(core[0].type, WASM_I32);
	v = cm_val_s16(-2);
	ck_assert_int_eq(cabi_store(&CX, &v, P(CM_S16), 300), 0);
	ck_assert_uint_eq(mem()[300], 0xfe);
	ck_assert_uint_eq(mem()[301], 0xff);
	ck_assert_uint_eq(mem()[302], 0);
}
END_TEST

START_TEST(char_traps)
{
	uint32_t bad[] = {0xd800, 0xdfff, 0x110000, 0xffffffffu};
	wasm_val core[1];
	cabi_core_iter it;
	cm_val v;

	for (size_t i = 0; i < 4; i++) {
		core[0] = I32(bad[i]);
		it = (cabi_core_iter){core, 1, 0};
		ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, P(CM_CHAR), &v),
			    "invalid `char` bit pattern");
		put32(400, bad[i]);
		ASSERT_TRAP(&CX, cabi_load(&CX, 400, P(CM_CHAR), &v),
			    "invalid `char` bit pattern");
	}
}
END_TEST

START_TEST(load_store_bounds_alignment)
{
	const cm_type *ts[] = {
		P(CM_U16),    P(CM_U32),
		P(CM_U64),    P(CM_F64),
		P(CM_STRING), record_of(2, "a", P(CM_U8), "b", P(CM_U32))};
	cm_val v;

	for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
		uint32_t a = cm_alignment(ts[i], false);
		uint32_t sz = cm_elem_size(ts[i], false);

		ASSERT_TRAP(&CX, cabi_load(&CX, a + 1, ts[i], &v),
			    "unaligned pointer");
		ASSERT_TRAP(&CX, cabi_load(&CX, 65536 - sz + a, ts[i], &v),
			    "out-of-bounds");
	}
	v = cm_val_u32(1);
	ASSERT_TRAP(&CX, cabi_store(&CX, &v, P(CM_U32), 2),
		    "unaligned pointer");
	ASSERT_TRAP(&CX, cabi_store(&CX, &v, P(CM_U32), 65536),
		    "out-of-bounds");
	ck_assert_int_eq(cabi_store(&CX, &v, P(CM_U32), 65532), 0);
	/* a value of the wrong kind is a host error, not a trap */
	v = cm_val_u8(1);
	ck_assert_int_eq(cabi_store(&CX, &v, P(CM_U32), 0), -1);
	ck_assert_int_eq(CX.err.kind, CABI_ERR_VALUE);
}
END_TEST

/* ---- layout -----------------------------------------------------------------
 */

START_TEST(layout_offsets)
{
	const cm_type *rec = record_of(2, "a", P(CM_U8), "b", P(CM_U32));
	const cm_type *tup = tuple_of(3, P(CM_U8), P(CM_U16), P(CM_U8));
	const cm_type *opt = option_of(P(CM_U64));
	const cm_type *res = result_of(NULL, P(CM_STRING));
	const cm_type *var = variant_of(2, "f", P(CM_F32), "l", P(CM_U64));
	cm_val v;

	ck_assert_uint_eq(cm_elem_size(rec, false), 8);
	ck_assert_uint_eq(cm_elem_size(tup, false), 6);
	ck_assert_uint_eq(cm_elem_size(opt, false), 16);
	ck_assert_uint_eq(cm_elem_size(res, false), 12);
	ck_assert_uint_eq(cm_elem_size(var, false), 16);

	ck_assert_int_eq(cm_val_seq(&v, CM_RECORD, 2), 0);
	v.u.list.elems[0] = cm_val_u8(0xaa);
	v.u.list.elems[1] = cm_val_u32(0x11223344);
	memset(mem() + 512, 0, 16);
	ck_assert_int_eq(cabi_store(&CX, &v, rec, 512), 0);
	ck_assert_uint_eq(mem()[512], 0xaa);
	ck_assert_uint_eq(get32(516), 0x11223344);
	cm_val_free(&v);

	ck_assert_int_eq(cm_val_seq(&v, CM_TUPLE, 3), 0);
	v.u.list.elems[0] = cm_val_u8(1);
	v.u.list.elems[1] = cm_val_u16(0x0302);
	v.u.list.elems[2] = cm_val_u8(4);
	ck_assert_int_eq(cabi_store(&CX, &v, tup, 530), 0);
	ck_assert_uint_eq(mem()[532], 2);
	ck_assert_uint_eq(mem()[533], 3);
	ck_assert_uint_eq(mem()[534], 4);
	mem_roundtrip(tup, &v, 530);
	cm_val_free(&v);

	ck_assert_int_eq(cm_val_case_payload(&v, CM_OPTION, 1), 0);
	*v.u.variant.payload = cm_val_u64(0x0102030405060708ull);
	ck_assert_int_eq(cabi_store(&CX, &v, opt, 544), 0);
	ck_assert_uint_eq(mem()[544], 1);
	ck_assert_uint_eq(mem()[552], 8);
	mem_roundtrip(opt, &v, 544);
	cm_val_free(&v);

	/* values/variants.wast reads the f32 at offset 8 */
	ck_assert_int_eq(cm_val_case_payload(&v, CM_VARIANT, 0), 0);
	*v.u.variant.payload = cm_val_f32_bits(0x3fc00000u);
	ck_assert_int_eq(cabi_store(&CX, &v, var, 560), 0);
	ck_assert_uint_eq(get32(568), 0x3fc00000u);
	mem_roundtrip(var, &v, 560);
	cm_val_free(&v);

	ck_assert_int_eq(cm_val_case_payload(&v, CM_RESULT, 1), 0);
	*v.u.variant.payload = S_("e");
	ck_assert_int_eq(cabi_store(&CX, &v, res, 600), 0);
	ck_assert_uint_eq(mem()[600], 1);
	ck_assert_uint_eq(get32(608), 1); /* string length at payload + 4 */
	mem_roundtrip(res, &v, 600);
	cm_val_free(&v);
}
END_TEST

START_TEST(flags_sizes)
{
	uint32_t ns[] = {1, 8, 9, 16, 17, 32};

	for (size_t i = 0; i < 6; i++) {
		const cm_type *t = nflags(ns[i]);
		uint32_t all = ns[i] == 32 ? 0xffffffffu : (1u << ns[i]) - 1;
		cm_val v = cm_val_flags(all);

		flat_roundtrip(t, &v);
		memset(mem() + 700, 0xee, 8);
		mem_roundtrip(t, &v, 700);
		/* the byte after the flags is untouched */
		ck_assert_uint_eq(mem()[700 + cm_elem_size(t, false)], 0xee);
	}
}
END_TEST

/* ---- variants ---------------------------------------------------------------
 */

START_TEST(variant_discriminants)
{
	const cm_type *e3 = enum_of(3, "a", "b", "c");
	const cm_type *w = wide_variant(257);
	const cm_type *o = option_of(P(CM_U8));
	const cm_type *r = result_of(P(CM_U8), NULL);
	wasm_val core[2];
	cabi_core_iter it;
	cm_val v;

	core[0] = I32(3);
	it = (cabi_core_iter){core, 1, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, e3, &v),
		    "invalid variant discriminant");
	core[0] = I32(2);
	core[1] = I32(0);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, o, &v),
		    "invalid variant discriminant");
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, r, &v),
		    "invalid variant discriminant");
	mem()[800] = 3;
	ASSERT_TRAP(&CX, cabi_load(&CX, 800, e3, &v),
		    "invalid variant discriminant");
	/* 257 cases: a u16 discriminant */
	ck_assert_uint_eq(cm_elem_size(w, false), 2);
	mem()[802] = 0;
	mem()[803] = 1;
	ck_assert_int_eq(cabi_load(&CX, 802, w, &v), 0);
	ck_assert_uint_eq(v.u.variant.index, 256);
	mem()[803] = 2;
	ASSERT_TRAP(&CX, cabi_load(&CX, 802, w, &v),
		    "invalid variant discriminant");
	v = cm_val_case(CM_VARIANT, 256);
	flat_roundtrip(w, &v);
	mem_roundtrip(w, &v, 804);
}
END_TEST

START_TEST(variant_join_coercions)
{
	/* variant{f(f32), l(u64)}: [i32, i64] */
	const cm_type *fl = variant_of(2, "f", P(CM_F32), "l", P(CM_U64));
	/* variant{f(f32), i(u32)}: [i32, i32] */
	const cm_type *fi = variant_of(2, "f", P(CM_F32), "i", P(CM_U32));
	/* variant{d(f64), i(s32)}: [i32, i64] */
	const cm_type *di = variant_of(2, "d", P(CM_F64), "i", P(CM_S32));
	/* variant{n, t(tuple<u32, f32>)}: [i32, i32, f32] */
	const cm_type *nt = variant_of(2, "n", NULL, "t",
				       tuple_of(2, P(CM_U32), P(CM_F32)));
	wasm_val core[4];
	cabi_core_out out = {core, 0, 4};
	cabi_core_iter it;
	cm_val v, back;

	ck_assert_int_eq(cm_val_case_payload(&v, CM_VARIANT, 0), 0);
	*v.u.variant.payload = cm_val_f32_bits(0xbf800000u);
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, fl, &out), 0);
	ck_assert_uint_eq(out.n, 2);
	ck_assert_int_eq(core[1].type, WASM_I64);
	ck_assert_uint_eq(core[1].u.i64, 0xbf800000ull); /* zero-extended */
	flat_roundtrip(fl, &v);
	out.n = 0;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, fi, &out), 0);
	ck_assert_int_eq(core[1].type, WASM_I32);
	ck_assert_uint_eq(core[1].u.i32, 0xbf800000u);
	flat_roundtrip(fi, &v);
	cm_val_free(&v);

	ck_assert_int_eq(cm_val_case_payload(&v, CM_VARIANT, 1), 0);
	*v.u.variant.payload = cm_val_s32(-1);
	out.n = 0;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, di, &out), 0);
	ck_assert_int_eq(core[1].type, WASM_I64);
	ck_assert_uint_eq(core[1].u.i64, 0xffffffffull); /* zero-extend */
	flat_roundtrip(di, &v);
	cm_val_free(&v);

	/* lifting an i64 slot into an s32 case wraps */
	core[0] = I32(1);
	core[1] = I64(0x123456789abcdef0ull);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, di, &back), 0);
	ck_assert_int_eq(back.u.variant.payload->u.s, (int32_t)0x9abcdef0);
	cm_val_free(&back);
	/* an i64 slot into an f64 case: the bits */
	core[0] = I32(0);
	core[1] = I64(0x3ff8000000000000ull);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, di, &back), 0);
	ck_assert_uint_eq(back.u.variant.payload->u.f64, 0x3ff8000000000000ull);
	cm_val_free(&back);
	/* an i64 slot into an f32 case: wrap, then the bits */
	core[0] = I32(0);
	core[1] = I64(0xffffffff3fc00000ull);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, fl, &back), 0);
	ck_assert_uint_eq(back.u.variant.payload->u.f32, 0x3fc00000u);
	cm_val_free(&back);

	/* a case without payload pads the joined slots with zeros */
	v = cm_val_case(CM_VARIANT, 0);
	out.n = 0;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, nt, &out), 0);
	ck_assert_uint_eq(out.n, 3);
	ck_assert_int_eq(core[1].type, WASM_I32);
	ck_assert_int_eq(core[2].type, WASM_F32);
	ck_assert_uint_eq(core[1].u.i32, 0);
	ck_assert_uint_eq(core[2].u.f32, 0);
	/* and lifting skips the unused slots */
	core[1] = I32(77);
	it = (cabi_core_iter){core, 3, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, nt, &back), 0);
	ck_assert_uint_eq(it.i, 3);
	ck_assert_uint_eq(back.u.variant.index, 0);
	cm_val_free(&back);
}
END_TEST

START_TEST(nested_variant_coercion)
{
	/* option<variant{a(f32), b(u64)}> : [i32, i32, i64] */
	const cm_type *inner = variant_of(2, "a", P(CM_F32), "b", P(CM_U64));
	const cm_type *t = option_of(inner);
	/* result<option<f32>, f64>: [i32, i64(join i32,f64), i64(f32,..)] */
	const cm_type *r = result_of(option_of(P(CM_F32)), P(CM_F64));
	cm_val v;

	ck_assert_int_eq(cm_val_case_payload(&v, CM_OPTION, 1), 0);
	ck_assert_int_eq(
		cm_val_case_payload(v.u.variant.payload, CM_VARIANT, 0), 0);
	*v.u.variant.payload->u.variant.payload = cm_val_f32_bits(0x7f800001u);
	flat_roundtrip(t, &v);
	mem_roundtrip(t, &v, 1000);
	cm_val_free(&v);

	ck_assert_int_eq(cm_val_case_payload(&v, CM_RESULT, 0), 0);
	ck_assert_int_eq(cm_val_case_payload(v.u.variant.payload, CM_OPTION, 1),
			 0);
	*v.u.variant.payload->u.variant.payload = cm_val_f32(2.5f);
	flat_roundtrip(r, &v);
	cm_val_free(&v);
	ck_assert_int_eq(cm_val_case_payload(&v, CM_RESULT, 1), 0);
	*v.u.variant.payload = cm_val_f64(-0.0);
	flat_roundtrip(r, &v);
	cm_val_free(&v);
}
END_TEST

/* ---- lists ------------------------------------------------------------------
 */

START_TEST(lists_roundtrip)
{
	const cm_type *lu32 = list_of(P(CM_U32));
	const cm_type *lls = list_of(list_of(P(CM_STRING)));
	const cm_type *fix = fixed_list_of(P(CM_U8), 3);
	const cm_type *m = map_of(P(CM_STRING), P(CM_U16));
	cm_val v;

	ck_assert_int_eq(cm_val_seq(&v, CM_LIST, 5), 0);
	for (uint32_t i = 0; i < 5; i++)
		v.u.list.elems[i] = cm_val_u32(i * 1000003u);
	flat_roundtrip(lu32, &v);
	mem_roundtrip(lu32, &v, 16);
	cm_val_free(&v);

	/* empty list: realloc(0, 0, align, 0) is still called */
	ck_assert_int_eq(cm_val_seq(&v, CM_LIST, 0), 0);
	RA.ncalls = 0;
	flat_roundtrip(lu32, &v);
	ck_assert_uint_eq(RA.ncalls, 1);
	ck_assert_uint_eq(RA.calls[0][2], 4);
	ck_assert_uint_eq(RA.calls[0][3], 0);
	cm_val_free(&v);

	ck_assert_int_eq(cm_val_seq(&v, CM_LIST, 2), 0);
	ck_assert_int_eq(cm_val_seq(&v.u.list.elems[0], CM_LIST, 2), 0);
	v.u.list.elems[0].u.list.elems[0] = S_("one");
	v.u.list.elems[0].u.list.elems[1] = S_("");
	ck_assert_int_eq(cm_val_seq(&v.u.list.elems[1], CM_LIST, 1), 0);
	v.u.list.elems[1].u.list.elems[0] = S_("\xf0\x9f\x98\x80");
	flat_roundtrip(lls, &v);
	mem_roundtrip(lls, &v, 32);
	cm_val_free(&v);

	/* fixed-length lists are inline: 3 flat values, no realloc */
	ck_assert_int_eq(cm_val_seq(&v, CM_LIST, 3), 0);
	for (uint32_t i = 0; i < 3; i++)
		v.u.list.elems[i] = cm_val_u8((uint8_t)(0xa0 + i));
	RA.ncalls = 0;
	flat_roundtrip(fix, &v);
	mem_roundtrip(fix, &v, 61);
	ck_assert_uint_eq(RA.ncalls, 0);
	ck_assert_uint_eq(mem()[62], 0xa1);
	cm_val_free(&v);
	/* the wrong length is a host error */
	ck_assert_int_eq(cm_val_seq(&v, CM_LIST, 2), 0);
	v.u.list.elems[0] = cm_val_u8(1);
	v.u.list.elems[1] = cm_val_u8(1);
	ck_assert_int_eq(cabi_store(&CX, &v, fix, 64), -1);
	ck_assert_int_eq(CX.err.kind, CABI_ERR_VALUE);
	cm_val_free(&v);

	/* map = list<tuple<K, V>>, duplicates kept in order */
	ck_assert_int_eq(cm_val_seq(&v, CM_MAP, 2), 0);
	for (uint32_t i = 0; i < 2; i++) {
		cm_val *e = &v.u.list.elems[i];

		ck_assert_int_eq(cm_val_seq(e, CM_TUPLE, 2), 0);
		e->u.list.elems[0] = S_("k");
		e->u.list.elems[1] = cm_val_u16((uint16_t)i);
	}
	flat_roundtrip(m, &v);
	mem_roundtrip(m, &v, 72);
	cm_val_free(&v);
}
END_TEST

START_TEST(list_lift_traps)
{
	const cm_type *lu32 = list_of(P(CM_U32));
	wasm_val core[2];
	cabi_core_iter it;
	cm_val v;

	core[0] = I32(2);
	core[1] = I32(1);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, lu32, &v),
		    "unaligned pointer");
	/* misaligned even when empty */
	core[1] = I32(0);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, lu32, &v),
		    "unaligned pointer");
	core[0] = I32(65532);
	core[1] = I32(2);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, lu32, &v),
		    "list content out-of-bounds");
	core[1] = I32(1);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, lu32, &v), 0);
	cm_val_free(&v);
	/* a length whose byte size passes 2^28 - 1 */
	core[0] = I32(0);
	core[1] = I32(0x4000000);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, lu32, &v),
		    "list content out-of-bounds");
	core[0] = I32(0x80000000u);
	core[1] = I32(0);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, lu32, &v),
		    "list content out-of-bounds");
}
END_TEST

/*
 * The store's budget for lifted values (cabi_budget): every cm_val
 * array, payload and string a lift allocates is charged first, a lift
 * past the limit traps before allocating and names the limit, and the
 * cx gives its charge back when released.
 */
static void put_u32(uint32_t at, uint32_t v)
{
	uint8_t *m = wasm_memory_data(MEM);

	memcpy(m + at, &v, 4);
}

START_TEST(host_budget_charges_lifts)
{
	const cm_type *lu8 = list_of(P(CM_U8));
	const cm_type *llu8 = list_of(lu8);
	cabi_budget b = {.limit = 4096, .used = 0};
	wasm_val core[2];
	cabi_core_iter it;
	cm_val v;

	CX.budget = &b;
	/* 50 bytes: a list<u8> in byte form, 1 byte each (not 50 values
	 * of 40 bytes), within 4096; given back */
	core[0] = I32(1024);
	core[1] = I32(50);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, lu8, &v), 0);
	ck_assert_uint_eq(v.u.list.n, 50);
	ck_assert_ptr_nonnull(v.u.list.bytes);
	ck_assert_ptr_null(v.u.list.elems);
	ck_assert_uint_eq(b.used, 50);
	ck_assert_uint_eq(CX.charged, 50);
	cm_val_free(&v);
	cabi_cx_release(&CX);
	ck_assert_uint_eq(b.used, 0);
	ck_assert_uint_eq(CX.charged, 0);

	/* 8 lists that all point at the same 1000 bytes: 8 KB lifted
	 * from 64 bytes of memory; traps, allocates nothing past 4096 */
	for (uint32_t i = 0; i < 8; i++) {
		put_u32(8 * i, 1024);
		put_u32(8 * i + 4, 1000);
	}
	core[0] = I32(0);
	core[1] = I32(8);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, llu8, &v),
		    CABI_MSG_HOST_BYTES ": lifting this value needs more than "
					"the store's limit of 4096 bytes "
					"(limits.hostBytes)");
	ck_assert_int_eq(v.kind, CM_BOOL); /* freed */
	ck_assert_uint_le(b.used, 4096);
	cabi_cx_release(&CX);
	ck_assert_uint_eq(b.used, 0);

	/* measured first (lift_size.c): a malformed value within the
	 * budget traps in the lift's own words... */
	put_u32(0, 1024);
	put_u32(4, 10);
	put_u32(8, 70000);
	put_u32(12, 5);
	core[0] = I32(0);
	core[1] = I32(2);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, llu8, &v),
		    "list content out-of-bounds");
	cabi_cx_release(&CX);
	ck_assert_uint_eq(b.used, 0);
	/* ...and one larger than the budget before the bad part traps on
	 * the budget, having made nothing (5000 bytes: 1 byte each) */
	put_u32(4, 5000);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, llu8, &v),
		    CABI_MSG_HOST_BYTES);
	ck_assert_uint_eq(CX.charged, 0);
	cabi_cx_release(&CX);
	/* a list of strings: each string's bytes are measured */
	put_u32(0, 1024);
	put_u32(4, 1000);
	put_u32(8, 1024);
	put_u32(12, 1000);
	put_u32(16, 1024);
	put_u32(20, 1000);
	memset(wasm_memory_data(MEM) + 1024, 'b', 1000);
	core[1] = I32(3);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, list_of(P(CM_STRING)), &v),
			 0);
	ck_assert_uint_eq(b.used, CABI_VALS_BYTES(3) + 3 * 1001);
	cm_val_free(&v);
	cabi_cx_release(&CX);
	core[1] = I32(4);
	put_u32(24, 1024);
	put_u32(28, 1000);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, list_of(P(CM_STRING)), &v),
		    CABI_MSG_HOST_BYTES);
	ck_assert_uint_eq(CX.charged, 0);
	cabi_cx_release(&CX);

	/* a string's bytes count too */
	memset(wasm_memory_data(MEM) + 8192, 'a', 5000);
	core[0] = I32(8192);
	core[1] = I32(5000);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, P(CM_STRING), &v),
		    CABI_MSG_HOST_BYTES);
	core[1] = I32(4000);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_STRING), &v), 0);
	ck_assert_uint_eq(b.used, 4001);
	/* a holder that keeps the value takes the charge over */
	ck_assert_uint_eq(cabi_cx_keep(&CX), 4001);
	cabi_cx_release(&CX);
	ck_assert_uint_eq(b.used, 4001);
	cabi_budget_release(&b, 4001);
	ck_assert_uint_eq(b.used, 0);
	cm_val_free(&v);

	/* a limit of 0 is none; so is no budget */
	b.limit = 0;
	core[1] = I32(5000);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_STRING), &v), 0);
	cm_val_free(&v);
	ck_assert_uint_eq(b.used, 0);
	cabi_cx_release(&CX);
	CX.budget = NULL;
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_STRING), &v), 0);
	cm_val_free(&v);
}
END_TEST

/*
 * list<u8> and list<s8> in byte form (val.h cm_vals): a 1 MiB list lifts
 * as one copy charged 1 MiB (not 40 MiB of cm_vals), lowers with
 * realloc(0, 0, 1, n) and one copy, and comes back equal; the forms are
 * checked against the type; the traps are the reference's.
 */
START_TEST(byte_lists)
{
	const cm_type *lu8 = list_of(P(CM_U8)), *ls8 = list_of(P(CM_S8));
	uint32_t n = 1u << 20, at = 4096;
	wasm_memtype mt;
	wasm_memory *big;
	cabi_budget b = {.limit = 2u << 20, .used = 0};
	wasm_val core[2];
	cabi_core_out out = {core, 0, 2};
	cabi_core_iter it;
	cm_val v, back, e;
	char why[128];

	memset(&mt, 0, sizeof mt);
	mt.limits.min = mt.limits.max = 40; /* 2.5 MiB */
	mt.limits.has_max = true;
	big = wasm_memory_new(S, mt);
	ck_assert_ptr_nonnull(big);
	CX.opts.memory = big;
	RA.mem = big;
	RA.next = at + n;
	for (uint32_t i = 0; i < n; i++)
		wasm_memory_data(big)[at + i] =
			(uint8_t)(i * 2654435761u >> 24);
	CX.budget = &b;

	core[0] = I32(at);
	core[1] = I32(n);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, lu8, &v), 0);
	ck_assert_uint_eq(v.u.list.n, n);
	ck_assert_ptr_null(v.u.list.elems);
	ck_assert_ptr_nonnull(v.u.list.bytes);
	ck_assert_int_eq(memcmp(v.u.list.bytes, wasm_memory_data(big) + at, n),
			 0);
	ck_assert_uint_eq(b.used, n); /* 1 MiB, not n * sizeof(cm_val) */
	ck_assert_uint_eq(cm_val_host_bytes(&v), n);
	ck_assert_uint_eq(cm_vals_host_bytes(&v, 1), n + sizeof(cm_val));
	ck_assert(cm_val_typecheck(&v, lu8, NULL, 0));

	/* lowered: realloc(0, 0, 1, n), the bytes copied, lifted back equal */
	RA.ncalls = 0;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, lu8, &out), 0);
	ck_assert_uint_eq(RA.ncalls, 1);
	ck_assert_uint_eq(RA.calls[0][0], 0);
	ck_assert_uint_eq(RA.calls[0][1], 0);
	ck_assert_uint_eq(RA.calls[0][2], 1);
	ck_assert_uint_eq(RA.calls[0][3], n);
	ck_assert_uint_eq(core[0].u.i32, at + n);
	ck_assert_uint_eq(core[1].u.i32, n);
	ck_assert_int_eq(memcmp(wasm_memory_data(big) + at + n,
				wasm_memory_data(big) + at, n),
			 0);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, lu8, &back), 0);
	ck_assert(cm_val_equal(&v, &back));
	cm_val_free(&back);
	ck_assert_int_eq(cm_val_copy(&back, &v), 0);
	ck_assert(cm_val_equal(&v, &back));
	back.u.list.bytes[n - 1] ^= 1;
	ck_assert(!cm_val_equal(&v, &back));
	cm_val_free(&back);
	cm_val_free(&v);
	cabi_cx_release(&CX);
	ck_assert_uint_eq(b.used, 0);

	/* past the budget: refused before anything is made */
	b.limit = n - 1;
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, lu8, &v),
		    CABI_MSG_HOST_BYTES);
	ck_assert_uint_eq(CX.charged, 0);
	cabi_cx_release(&CX);
	b.limit = 0;
	/* the reference's bounds trap, to the last byte */
	core[0] = I32(40 * 65536 - 10);
	core[1] = I32(11);
	it = (cabi_core_iter){core, 2, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, lu8, &v),
		    "list content out-of-bounds");
	core[1] = I32(10);
	it = (cabi_core_iter){core, 2, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, lu8, &v), 0);
	cm_val_free(&v);
	cabi_cx_release(&CX);

	/* list<s8>: the bytes are two's complement */
	ck_assert_int_eq(cm_val_bytes(&v, "\x80\xff\x00\x7f", 4), 0);
	ck_assert(cm_val_typecheck(&v, ls8, NULL, 0));
	flat_roundtrip(ls8, &v);
	ck_assert_int_eq(cm_val_seq(&e, CM_LIST, 4), 0);
	e.u.list.elems[0] = cm_val_s8(-128);
	e.u.list.elems[1] = cm_val_s8(-1);
	e.u.list.elems[2] = cm_val_s8(0);
	e.u.list.elems[3] = cm_val_s8(127);
	ck_assert(cm_val_equal(&v, &e)); /* across the forms */
	ck_assert(cm_val_equal(&e, &v));
	/* the element form is refused for list<s8>, then packed */
	ck_assert(!cm_val_typecheck(&e, ls8, why, sizeof why));
	ck_assert_str_eq(why, "list<s8> value in element form");
	ck_assert_int_eq(cm_val_list_pack(&e), 0);
	ck_assert(cm_val_typecheck(&e, ls8, NULL, 0));
	ck_assert_int_eq(memcmp(e.u.list.bytes, v.u.list.bytes, 4), 0);
	cm_val_free(&e);
	/* the byte form is refused for other lists, and not lowered */
	ck_assert(!cm_val_typecheck(&v, list_of(P(CM_U32)), why, sizeof why));
	ck_assert_str_eq(why, "list<u32> value in byte form");
	out.n = 0;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, list_of(P(CM_U32)), &out),
			 -1);
	ck_assert_int_eq(CX.err.kind, CABI_ERR_VALUE);
	cm_val_free(&v);
	/* a hand-made element-form list<u8> still lowers, element by element */
	ck_assert_int_eq(cm_val_seq(&e, CM_LIST, 2), 0);
	e.u.list.elems[0] = cm_val_u8(1);
	e.u.list.elems[1] = cm_val_u8(300 & 0xff);
	flat_roundtrip(lu8, &e);
	cm_val_free(&e);
	CX.budget = NULL;
	CX.opts.memory = MEM;
	RA.mem = MEM;
}
END_TEST

/*
 * Lowering's bound is definitions.py's REALLOC_I32_MAX (2^32 - 1 bytes),
 * not the lifting maximum (2^28 - 1): a lifted list of strings lowered
 * into a 64-bit memory takes twice its bytes, and the spec lowers it.
 * A host's list past 2^32 - 1 bytes traps before any element is read
 * or realloc is called (the list here has one element and claims 2^31
 * u16s); one of 2^28 bytes passes the bound and reaches realloc, whose
 * result a 1-page memory cannot hold.
 */
START_TEST(list_lower_bound)
{
	const cm_type *lu16 = list_of(P(CM_U16));
	wasm_val core[2];
	cabi_core_out out = {core, 0, 2};
	cm_val v;

	ck_assert_int_eq(cm_val_seq(&v, CM_LIST, 1), 0);
	v.u.list.elems[0] = cm_val_u16(7);
	v.u.list.n = 1u << 31; /* 2^32 bytes: past the bound */
	RA.fixed = true;
	RA.value = 0;
	RA.ncalls = 0;
	CX.host_peer = true;
	ASSERT_TRAP(&CX, cabi_lower_flat(&CX, &v, lu16, &out),
		    "list byte length exceeds the maximum");
	ck_assert_uint_eq(RA.ncalls, 0);
	v.u.list.n = (1u << 31) - 1; /* 2^32 - 2 bytes: within */
	out.n = 0;
	ASSERT_TRAP(&CX, cabi_lower_flat(&CX, &v, lu16, &out),
		    "realloc return: beyond end of memory");
	ck_assert_uint_eq(RA.ncalls, 1);
	ck_assert_uint_eq(RA.calls[0][3], 0xfffffffeu);
	v.u.list.n = 1u << 27; /* 2^28 bytes: past the lifting maximum */
	out.n = 0;
	ASSERT_TRAP(&CX, cabi_lower_flat(&CX, &v, lu16, &out),
		    "realloc return: beyond end of memory");
	ck_assert_uint_eq(RA.calls[1][3], 1u << 28);
	v.u.list.n = 1;
	cm_val_free(&v);
}
END_TEST

START_TEST(realloc_result_traps)
{
	const cm_type *lu32 = list_of(P(CM_U32));
	wasm_val core[2];
	cabi_core_out out = {core, 0, 2};
	cm_val v;

	ck_assert_int_eq(cm_val_seq(&v, CM_LIST, 2), 0);
	v.u.list.elems[0] = cm_val_u32(1);
	v.u.list.elems[1] = cm_val_u32(2);
	RA.fixed = true;
	/* host lowering (values/realloc.wast host cases) */
	CX.host_peer = true;
	RA.value = 0xffffffffu; /* alignment is checked before bounds */
	ASSERT_TRAP(&CX, cabi_lower_flat(&CX, &v, lu32, &out),
		    "realloc return: result not aligned");
	RA.value = 65532;
	out.n = 0;
	ASSERT_TRAP(&CX, cabi_lower_flat(&CX, &v, lu32, &out),
		    "realloc return: beyond end of memory");
	/* guest to guest */
	CX.host_peer = false;
	RA.value = 2;
	out.n = 0;
	ASSERT_TRAP(&CX, cabi_lower_flat(&CX, &v, lu32, &out),
		    "unaligned pointer");
	RA.value = 65532;
	out.n = 0;
	ASSERT_TRAP(&CX, cabi_lower_flat(&CX, &v, lu32, &out),
		    "list content out-of-bounds");
	cm_val_free(&v);
	/* bounds-checked even for a zero-size allocation */
	ck_assert_int_eq(cm_val_seq(&v, CM_LIST, 0), 0);
	RA.value = 0x20000;
	CX.host_peer = true;
	out.n = 0;
	ASSERT_TRAP(&CX, cabi_lower_flat(&CX, &v, lu32, &out),
		    "realloc return: beyond end of memory");
	RA.value = 65536; /* exactly at the end: fine for 0 bytes */
	out.n = 0;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, lu32, &out), 0);
	ck_assert_uint_eq(core[0].u.i32, 65536);
	/* list<u8> of 0: realloc(0, 0, 1, 0) */
	RA.ncalls = 0;
	out.n = 0;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, list_of(P(CM_U8)), &out), 0);
	ck_assert_uint_eq(RA.ncalls, 1);
	ck_assert_uint_eq(RA.calls[0][0], 0);
	ck_assert_uint_eq(RA.calls[0][1], 0);
	ck_assert_uint_eq(RA.calls[0][2], 1);
	ck_assert_uint_eq(RA.calls[0][3], 0);
}
END_TEST

START_TEST(realloc_guest_failures)
{
	cm_val v = S_("abc");
	wasm_val core[2];
	cabi_core_out out = {core, 0, 2};
	bool may_leave = true;

	/* may_leave is false while realloc runs, restored after */
	CX.may_leave = &may_leave;
	RA.may_leave = &may_leave;
	RA.saw_may_leave = true;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, P(CM_STRING), &out), 0);
	ck_assert(!RA.saw_may_leave);
	ck_assert(may_leave);
	/* a trap inside realloc is a trap of the lowering */
	RA.trap = true;
	out.n = 0;
	ASSERT_TRAP(&CX, cabi_lower_flat(&CX, &v, P(CM_STRING), &out),
		    "realloc exploded");
	ck_assert(may_leave);
	/* blocking is a trap for now; the exec is reusable afterwards */
	RA.trap = false;
	RA.block = true;
	out.n = 0;
	ASSERT_TRAP(&CX, cabi_lower_flat(&CX, &v, P(CM_STRING), &out),
		    "cannot block");
	RA.block = false;
	out.n = 0;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, P(CM_STRING), &out), 0);
	cm_val_free(&v);
	/* no realloc at all */
	CX.opts.realloc = NULL;
	v = S_("x");
	out.n = 0;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, P(CM_STRING), &out), -1);
	ck_assert_int_eq(CX.err.kind, CABI_ERR_VALUE);
	cm_val_free(&v);
}
END_TEST

START_TEST(realloc_moves_memory)
{
	/* every allocation grows memory, so its data pointer may move */
	const cm_type *t = list_of(P(CM_STRING));
	cm_val v;

	RA.grow = true;
	ck_assert_int_eq(cm_val_seq(&v, CM_LIST, 4), 0);
	v.u.list.elems[0] = S_("alpha");
	v.u.list.elems[1] = S_("\xc3\xa9t\xc3\xa9");
	v.u.list.elems[2] = S_("");
	v.u.list.elems[3] = S_("\xf0\x90\x80\x80");
	flat_roundtrip(t, &v);
	ck_assert_uint_ge(wasm_memory_size_bytes(MEM), 5 * 65536);
	cm_val_free(&v);
}
END_TEST

/* ---- strings ----------------------------------------------------------------
 */

static const char *const SAMPLES[] = {
	"",
	"abc",
	"\xc3\xa9",		      /* U+E9 (Latin-1) */
	"\xc3\xbf",		      /* U+FF, the last Latin-1 */
	"\xc4\x80",		      /* U+100, the first beyond */
	"a\xc3\xbf\xc4\x80z",	      /* both sides of the boundary */
	"\xef\xbf\xbf",		      /* U+FFFF */
	"\xf0\x90\x80\x80",	      /* U+10000, a surrogate pair */
	"\xf4\x8f\xbf\xbf",	      /* U+10FFFF */
	"x\xed\x9f\xbf\xee\x80\x80y", /* U+D7FF, U+E000 around surrogates */
	"nul\0inside",
	"mixed \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 end",
};
static const size_t SAMPLE_LEN[] = {0, 3, 2, 2, 2, 6, 3, 4, 4, 8, 10, 18};

START_TEST(string_transcode_matrix)
{
	cm_string_encoding encs[] = {CM_UTF8, CM_UTF16, CM_LATIN1_UTF16};

	for (size_t s = 0; s < sizeof SAMPLES / sizeof SAMPLES[0]; s++) {
		for (int a = 0; a < 3; a++) {
			for (int b = 0; b < 3; b++) {
				cm_val v, mid, back;
				uint64_t p, n;

				ck_assert_int_eq(cm_val_string(&v, SAMPLES[s],
							       SAMPLE_LEN[s]),
						 0);
				CX.opts.string_encoding = encs[a];
				CX2.opts.string_encoding = encs[b];
				/* host -> memory in encoding a */
				ck_assert_int_eq(cabi_store_string_into_range(
							 &CX, &v, &p, &n),
						 0);
				ck_assert_int_eq(cabi_load_string_from_range(
							 &CX, p, n, &mid),
						 0);
				ck_assert(cm_val_equal(&v, &mid));
				ck_assert_int_eq(mid.u.str.src_encoding,
						 encs[a]);
				/* a -> b, with the hint of a */
				ck_assert_msg(cabi_store_string_into_range(
						      &CX2, &mid, &p, &n) == 0,
					      "%s", CX2.err.msg);
				ck_assert_int_eq(cabi_load_string_from_range(
							 &CX2, p, n, &back),
						 0);
				ck_assert_msg(cm_val_equal(&v, &back),
					      "sample %zu %d->%d", s, a, b);
				cm_val_free(&v);
				cm_val_free(&mid);
				cm_val_free(&back);
			}
		}
	}
}
END_TEST

/* Store sample s from encoding `from` and re-store it into `to`,
 * recording the realloc calls of the second store. */
static void transcode(const char *s, size_t len, cm_string_encoding from,
		      cm_string_encoding to, uint64_t *p, uint64_t *n)
{
	cm_val v, mid;

	ck_assert_int_eq(cm_val_string(&v, s, len), 0);
	CX.opts.string_encoding = from;
	CX2.opts.string_encoding = to;
	ck_assert_int_eq(cabi_store_string_into_range(&CX, &v, p, n), 0);
	ck_assert_int_eq(cabi_load_string_from_range(&CX, *p, *n, &mid), 0);
	RA.ncalls = 0;
	ck_assert_int_eq(cabi_store_string_into_range(&CX2, &mid, p, n), 0);
	cm_val_free(&v);
	cm_val_free(&mid);
}

static void call_is(uint32_t i, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	ck_assert_msg(RA.calls[i][0] == a || a == 1, "call %u old ptr", i);
	ck_assert_uint_eq(RA.calls[i][1], b);
	ck_assert_uint_eq(RA.calls[i][2], c);
	ck_assert_uint_eq(RA.calls[i][3], d);
}

START_TEST(string_realloc_sequences)
{
	uint64_t p, n;

	/* utf16 -> utf8: R(0,0,1,n), grow to 3n at the first non-ASCII
	 * code point, shrink to the final size */
	transcode("ab\xc3\xa9", 4, CM_UTF16, CM_UTF8, &p, &n);
	ck_assert_uint_eq(RA.ncalls, 3);
	call_is(0, 0, 0, 1, 3);
	call_is(1, 1, 3, 1, 9);
	call_is(2, 1, 9, 1, 4);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(memcmp(mem() + p, "ab\xc3\xa9", 4), 0);
	/* latin1 -> utf8: worst case 2n */
	transcode("\xc3\xa9", 2, CM_LATIN1_UTF16, CM_UTF8, &p, &n);
	ck_assert_uint_eq(RA.ncalls, 2);
	call_is(0, 0, 0, 1, 1);
	call_is(1, 1, 1, 1, 2);
	ck_assert_uint_eq(n, 2);
	/* all ASCII: one call */
	transcode("abc", 3, CM_UTF16, CM_UTF8, &p, &n);
	ck_assert_uint_eq(RA.ncalls, 1);
	call_is(0, 0, 0, 1, 3);
	/* utf8 -> utf16: R(0,0,2,2n), shrink to 2 * units */
	transcode("\xe2\x82\xac", 3, CM_UTF8, CM_UTF16, &p, &n);
	ck_assert_uint_eq(RA.ncalls, 2);
	call_is(0, 0, 0, 2, 6);
	call_is(1, 1, 6, 2, 2);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(mem()[p], 0xac);
	ck_assert_uint_eq(mem()[p + 1], 0x20);
	/* U+10000 in UTF-16 is the pair D800 DC00 */
	transcode("\xf0\x90\x80\x80", 4, CM_UTF8, CM_UTF16, &p, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(get32((uint32_t)p), 0xdc00d800u);
	ck_assert_uint_eq(RA.ncalls, 2); /* 8 bytes allocated, 4 used */
	call_is(1, 1, 8, 2, 4);
	/* utf8 -> latin1+utf16, everything Latin-1: shrink to k bytes */
	transcode("\xc3\xbf", 2, CM_UTF8, CM_LATIN1_UTF16, &p, &n);
	ck_assert_uint_eq(RA.ncalls, 2);
	call_is(0, 0, 0, 2, 2);
	call_is(1, 1, 2, 2, 1);
	ck_assert_uint_eq(n, 1); /* untagged: Latin-1 */
	ck_assert_uint_eq(mem()[p], 0xff);
	/* utf8 -> latin1+utf16 with U+100: inflate in place, tagged */
	transcode("a\xc4\x80", 3, CM_UTF8, CM_LATIN1_UTF16, &p, &n);
	ck_assert_uint_eq(RA.ncalls, 3);
	call_is(0, 0, 0, 2, 3);
	call_is(1, 1, 3, 2, 6);
	call_is(2, 1, 6, 2, 4);
	ck_assert_uint_eq(n, 2 | CABI_UTF16_TAG32);
	ck_assert_uint_eq(get32((uint32_t)p), 0x01000061u);
	/* latin1+utf16 (tagged UTF-16 source) that fits Latin-1: copy as
	 * UTF-16, compact in place, R(p, 2n, 1, n) */
	{
		cm_val v, mid;

		ck_assert_int_eq(cm_val_string(&v, "\xc3\xa9z", 3), 0);
		CX.opts.string_encoding = CM_UTF16;
		ck_assert_int_eq(cabi_store_string_into_range(&CX, &v, &p, &n),
				 0);
		CX.opts.string_encoding = CM_LATIN1_UTF16;
		/* read the UTF-16 bytes back as a tagged latin1+utf16 */
		ck_assert_int_eq(cabi_load_string_from_range(
					 &CX, p, n | CABI_UTF16_TAG32, &mid),
				 0);
		ck_assert(cm_val_equal(&v, &mid));
		CX2.opts.string_encoding = CM_LATIN1_UTF16;
		RA.ncalls = 0;
		ck_assert_int_eq(
			cabi_store_string_into_range(&CX2, &mid, &p, &n), 0);
		ck_assert_uint_eq(RA.ncalls, 2);
		call_is(0, 0, 0, 2, 4);
		call_is(1, 1, 4, 1, 2);
		ck_assert_uint_eq(n, 2);
		ck_assert_uint_eq(mem()[p], 0xe9);
		ck_assert_uint_eq(mem()[p + 1], 'z');
		cm_val_free(&v);
		cm_val_free(&mid);
	}
	/* the empty string still calls realloc(0, 0, 1, 0) */
	transcode("", 0, CM_UTF8, CM_UTF8, &p, &n);
	ck_assert_uint_eq(RA.ncalls, 1);
	call_is(0, 0, 0, 1, 0);
	ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(string_lift_traps)
{
	cm_val v;

	/* utf16 pointers must be 2-aligned even when empty */
	CX.opts.string_encoding = CM_UTF16;
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 1, 0, &v),
		    "unaligned pointer");
	CX.opts.string_encoding = CM_LATIN1_UTF16;
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 1, 1, &v),
		    "unaligned pointer");
	ASSERT_TRAP(
		&CX,
		cabi_load_string_from_range(&CX, 3, 1 | CABI_UTF16_TAG32, &v),
		"unaligned pointer");
	/* out of bounds even when empty; wording depends on the peer */
	CX.opts.string_encoding = CM_UTF8;
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 0xdeadbeef, 0, &v),
		    "string content out-of-bounds");
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 65535, 2, &v),
		    "string content out-of-bounds");
	CX.host_peer = true;
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 0xdeadbeef, 0, &v),
		    "string pointer/length out of bounds of memory");
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 0x80000000u, 1, &v),
		    "string pointer/length out of bounds of memory");
	ck_assert_int_eq(cabi_load_string_from_range(&CX, 65536, 0, &v), 0);
	cm_val_free(&v);
	/* "ok" flush with the end of memory */
	mem()[65534] = 'o';
	mem()[65535] = 'k';
	ck_assert_int_eq(cabi_load_string_from_range(&CX, 65534, 2, &v), 0);
	ck_assert_str_eq((char *)v.u.str.ptr, "ok");
	cm_val_free(&v);
	/* bad UTF-8 */
	mem()[100] = 0xff;
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 100, 1, &v),
		    "invalid utf-8");
	mem()[100] = 0xc3;
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 100, 1, &v),
		    "incomplete utf-8 byte sequence");
	mem()[100] = 0xed; /* an encoded surrogate */
	mem()[101] = 0xa0;
	mem()[102] = 0x80;
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 100, 3, &v),
		    "invalid utf-8");
	mem()[100] = 0xc0; /* overlong */
	mem()[101] = 0x80;
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 100, 2, &v),
		    "invalid utf-8");
	/* unpaired surrogates in UTF-16 */
	CX.opts.string_encoding = CM_UTF16;
	put32(200, 0x0041d800u); /* D800 then 'A' */
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 200, 2, &v),
		    "surrogate");
	put32(200, 0x0000dc00u);
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 200, 1, &v),
		    "surrogate");
	put32(200, 0x0000d800u);
	ASSERT_TRAP(&CX, cabi_load_string_from_range(&CX, 200, 1, &v),
		    "surrogate");
	/* Latin-1 never fails */
	CX.opts.string_encoding = CM_LATIN1_UTF16;
	for (int i = 0; i < 256; i++)
		mem()[300 + i] = (uint8_t)i;
	ck_assert_int_eq(cabi_load_string_from_range(&CX, 300, 256, &v), 0);
	ck_assert_uint_eq(v.u.str.len, 128 + 2 * 128);
	cm_val_free(&v);
}
END_TEST

START_TEST(string_host_value_hint)
{
	/* a hand-edited hint that does not describe the bytes is ignored */
	cm_val v = S_("h\xc3\xa9llo");
	uint64_t p, n;
	cm_val back;

	v.u.str.src_encoding = CM_UTF16;
	v.u.str.src_tagged_code_units = 1;
	CX.opts.string_encoding = CM_UTF16;
	ck_assert_int_eq(cabi_store_string_into_range(&CX, &v, &p, &n), 0);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(cabi_load_string_from_range(&CX, p, n, &back), 0);
	ck_assert(cm_val_equal(&v, &back));
	cm_val_free(&v);
	cm_val_free(&back);
}
END_TEST

/* ---- spilling
 * ---------------------------------------------------------------- */

static void fill_u32_args(cm_val *args, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		args[i] = cm_val_u32(0x1000 + i);
}

START_TEST(spill_params_16_17)
{
	const cm_type *f16 = func_n(16, P(CM_U32), NULL);
	const cm_type *f17 = func_n(17, P(CM_U32), NULL);
	cm_val args[17], back[17];
	wasm_val core[20];
	cabi_core_out out = {core, 0, 20};
	cabi_core_iter it;

	fill_u32_args(args, 17);
	/* 16 flat params: passed flat */
	RA.ncalls = 0;
	ck_assert_int_eq(
		cabi_lower_params(&CX, f16, CM_MAX_FLAT_PARAMS, args, &out), 0);
	ck_assert_uint_eq(out.n, 16);
	ck_assert_uint_eq(RA.ncalls, 0);
	it = (cabi_core_iter){core, out.n, 0};
	ck_assert_int_eq(
		cabi_lift_params(&CX, f16, CM_MAX_FLAT_PARAMS, &it, back), 0);
	for (int i = 0; i < 16; i++)
		ck_assert(cm_val_equal(&args[i], &back[i]));
	/* 17: a tuple allocated with the callee's realloc */
	out.n = 0;
	ck_assert_int_eq(
		cabi_lower_params(&CX, f17, CM_MAX_FLAT_PARAMS, args, &out), 0);
	ck_assert_uint_eq(out.n, 1);
	ck_assert_uint_eq(RA.ncalls, 1);
	call_is(0, 0, 0, 4, 68);
	ck_assert_uint_eq(get32(core[0].u.i32 + 64), 0x1010);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(
		cabi_lift_params(&CX, f17, CM_MAX_FLAT_PARAMS, &it, back), 0);
	ck_assert_uint_eq(it.i, 1);
	for (int i = 0; i < 17; i++)
		ck_assert(cm_val_equal(&args[i], &back[i]));
	/* the async lower limit is 4 */
	ck_assert_int_eq(cabi_lift_params(&CX, f16, CM_MAX_FLAT_ASYNC_PARAMS,
					  &(cabi_core_iter){core, 1, 0}, back),
			 0);
	/* reading a spilled tuple: misaligned / out of bounds */
	core[0] = I32(2);
	it = (cabi_core_iter){core, 1, 0};
	ASSERT_TRAP(&CX,
		    cabi_lift_params(&CX, f17, CM_MAX_FLAT_PARAMS, &it, back),
		    "unaligned pointer");
	core[0] = I32(65536 - 64);
	it = (cabi_core_iter){core, 1, 0};
	ASSERT_TRAP(&CX,
		    cabi_lift_params(&CX, f17, CM_MAX_FLAT_PARAMS, &it, back),
		    "out-of-bounds");
	/* the callee's realloc misaligning the tuple (alignment.wast) */
	RA.fixed = true;
	RA.value = 2;
	out.n = 0;
	ASSERT_TRAP(&CX,
		    cabi_lower_params(&CX, f17, CM_MAX_FLAT_PARAMS, args, &out),
		    "unaligned pointer");
}
END_TEST

START_TEST(spill_cross_abi_layout)
{
	/* async/cross-abi-calls.wast: (u32, u64, f32, f64) x 4 + u32 is a
	 * 136-byte, 8-aligned tuple */
	const cm_type *ts[17];
	cm_val vs[17], back[17];
	wasm_val core[20];
	cabi_core_out out = {core, 0, 20};
	cabi_core_iter it;

	for (int i = 0; i < 16; i += 4) {
		ts[i] = P(CM_U32);
		ts[i + 1] = P(CM_U64);
		ts[i + 2] = P(CM_F32);
		ts[i + 3] = P(CM_F64);
		vs[i] = cm_val_u32((uint32_t)i);
		vs[i + 1] = cm_val_u64(0x100000000ull + (uint64_t)i);
		vs[i + 2] = cm_val_f32((float)i + 0.5f);
		vs[i + 3] = cm_val_f64((double)i + 0.25);
	}
	ts[16] = P(CM_U32);
	vs[16] = cm_val_u32(99);
	RA.ncalls = 0;
	ck_assert_int_eq(cabi_lower_flat_values(&CX, CM_MAX_FLAT_PARAMS, vs, ts,
						17, NULL, &out),
			 0);
	call_is(0, 0, 0, 8, 136);
	ck_assert_uint_eq(get32(core[0].u.i32 + 128), 99);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat_values(&CX, CM_MAX_FLAT_PARAMS, &it, ts,
					       17, back),
			 0);
	for (int i = 0; i < 17; i++)
		ck_assert(cm_val_equal(&vs[i], &back[i]));
	/* 16 of them fit flat: (i32 i64 f32 f64) x 4 */
	out.n = 0;
	ck_assert_int_eq(cabi_lower_flat_values(&CX, CM_MAX_FLAT_PARAMS, vs, ts,
						16, NULL, &out),
			 0);
	ck_assert_uint_eq(out.n, 16);
	ck_assert_int_eq(core[1].type, WASM_I64);
	ck_assert_int_eq(core[2].type, WASM_F32);
	ck_assert_int_eq(core[3].type, WASM_F64);
}
END_TEST

START_TEST(spill_results_1_2)
{
	const cm_type *r1 = func_of(0, P(CM_U64));
	const cm_type *r2 = func_of(0, tuple_of(2, P(CM_U32), P(CM_U8)));
	const cm_type *r0 = func_of(0, NULL);
	cm_val res, back;
	wasm_val core[2], retptr[1];
	cabi_core_out out = {core, 0, 2};
	cabi_core_iter it, op;

	/* one flat result: returned as is */
	res = cm_val_u64(0xfedcba9876543210ull);
	ck_assert_int_eq(cabi_lower_results(&CX, r1, CM_MAX_FLAT_RESULTS, &res,
					    NULL, &out),
			 0);
	ck_assert_uint_eq(out.n, 1);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(
		cabi_lift_results(&CX, r1, CM_MAX_FLAT_RESULTS, &it, &back), 0);
	ck_assert(cm_val_equal(&res, &back));
	/* two: stored through the caller's out-pointer, nothing returned */
	ck_assert_int_eq(cm_val_seq(&res, CM_TUPLE, 2), 0);
	res.u.list.elems[0] = cm_val_u32(7);
	res.u.list.elems[1] = cm_val_u8(8);
	retptr[0] = I32(1200);
	op = (cabi_core_iter){retptr, 1, 0};
	out.n = 0;
	RA.ncalls = 0;
	ck_assert_int_eq(cabi_lower_results(&CX, r2, CM_MAX_FLAT_RESULTS, &res,
					    &op, &out),
			 0);
	ck_assert_uint_eq(out.n, 0);
	ck_assert_uint_eq(RA.ncalls, 0);
	ck_assert_uint_eq(get32(1200), 7);
	ck_assert_uint_eq(mem()[1204], 8);
	/* the callee returns the pointer; the caller lifts through it */
	it = (cabi_core_iter){retptr, 1, 0};
	ck_assert_int_eq(
		cabi_lift_results(&CX, r2, CM_MAX_FLAT_RESULTS, &it, &back), 0);
	ck_assert(cm_val_equal(&res, &back));
	cm_val_free(&back);
	/* a misaligned return pointer (alignment.wast) */
	retptr[0] = I32(1202);
	it = (cabi_core_iter){retptr, 1, 0};
	ASSERT_TRAP(&CX, cabi_lift_results(&CX, r2, 1, &it, &back),
		    "unaligned pointer");
	op = (cabi_core_iter){retptr, 1, 0};
	ASSERT_TRAP(&CX, cabi_lower_results(&CX, r2, 1, &res, &op, &out),
		    "unaligned pointer");
	retptr[0] = I32(65532);
	op = (cabi_core_iter){retptr, 1, 0};
	ASSERT_TRAP(&CX, cabi_lower_results(&CX, r2, 1, &res, &op, &out),
		    "out-of-bounds");
	/* async lower: max 0, even one flat result goes through memory */
	retptr[0] = I32(1216);
	op = (cabi_core_iter){retptr, 1, 0};
	res.u.list.elems[0] = cm_val_u32(5);
	ck_assert_int_eq(cabi_lower_results(&CX, r2, 0, &res, &op, &out), 0);
	ck_assert_uint_eq(get32(1216), 5);
	cm_val_free(&res);
	/* no result at all */
	out.n = 0;
	ck_assert_int_eq(cabi_lower_results(&CX, r0, 0, NULL, NULL, &out), 0);
	ck_assert_uint_eq(out.n, 0);
	/* a core value of the wrong type is a host error */
	core[0] = I32(1);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_results(&CX, r1, 1, &it, &back), -1);
	ck_assert_int_eq(CX.err.kind, CABI_ERR_VALUE);
}
END_TEST

/* ---- handle tables
 * ------------------------------------------------------------- */

static cabi_resource_type RT1 = {.impl = (void *)1, .name = "r1"};
static cabi_resource_type RT2 = {.impl = (void *)1, .name = "r2"};

static uint32_t new_handle(const cabi_resource_type *rt, uint64_t rep)
{
	uint32_t i;

	ck_assert_int_eq(canon_resource_new(&CX, rt, rep, &i), 0);
	return i;
}

static void drop_ok(const cabi_resource_type *rt, uint32_t i)
{
	ck_assert_msg(canon_resource_drop(&CX, rt, i) == 0, "%s", CX.err.msg);
}

START_TEST(table_index_order)
{
	/* resources/handle-table.wast */
	ck_assert_uint_eq(new_handle(&RT1, 10), 1);
	ck_assert_uint_eq(new_handle(&RT1, 11), 2);
	ck_assert_uint_eq(new_handle(&RT1, 12), 3);
	drop_ok(&RT1, 2);
	ck_assert_uint_eq(new_handle(&RT1, 13), 2);
	drop_ok(&RT1, 1);
	drop_ok(&RT1, 2);
	drop_ok(&RT1, 3);
	ck_assert_uint_eq(cabi_table_count(&TABLE), 0);
	ck_assert_uint_eq(new_handle(&RT1, 14), 3);
	ck_assert_uint_eq(new_handle(&RT1, 15), 2);
	ck_assert_uint_eq(new_handle(&RT1, 16), 1);
	ck_assert_uint_eq(new_handle(&RT1, 17), 4);
	ck_assert_uint_eq(cabi_table_count(&TABLE), 4);
}
END_TEST

START_TEST(table_unknown_indices)
{
	uint64_t rep;
	cabi_elem e;
	uint32_t i;

	ASSERT_TRAP(&CX, canon_resource_rep(&CX, &RT1, 0, &rep),
		    "unknown handle index 0");
	ASSERT_TRAP(&CX, canon_resource_drop(&CX, &RT1, 1),
		    "unknown handle index 1");
	ck_assert_uint_eq(new_handle(&RT1, 5), 1);
	ck_assert_int_eq(canon_resource_rep(&CX, &RT1, 1, &rep), 0);
	ck_assert_uint_eq(rep, 5);
	drop_ok(&RT1, 1);
	ASSERT_TRAP(&CX, canon_resource_drop(&CX, &RT1, 1),
		    "unknown handle index 1");
	ASSERT_TRAP(&CX, canon_resource_rep(&CX, &RT1, 4294967295u, &rep),
		    "unknown handle index 4294967295");
	/* other kinds share the index space and are checked by kind */
	memset(&e, 0, sizeof e);
	e.kind = CABI_ELEM_WAITABLE_SET;
	e.u.obj = &e;
	ck_assert_int_eq(cabi_table_add(&TABLE, &e, &i, &CX.err), 0);
	ck_assert_uint_eq(i, 1);
	ASSERT_TRAP(&CX, canon_resource_rep(&CX, &RT1, 1, &rep),
		    "handle index 1 used with the wrong type, expected "
		    "resource but found waitable set");
	ck_assert_ptr_eq(
		cabi_table_get_kind(&TABLE, 1, CABI_ELEM_WAITABLE_SET, &CX.err),
		&TABLE.array[1]);
	ck_assert_int_eq(cabi_table_remove(&TABLE, 1, &e, &CX.err), 0);
	ck_assert_ptr_eq(e.u.obj, &e);
}
END_TEST

START_TEST(table_wrong_resource_type)
{
	uint64_t rep;

	ck_assert_uint_eq(new_handle(&RT1, 5), 1);
	ASSERT_TRAP(&CX, canon_resource_rep(&CX, &RT2, 1, &rep),
		    "handle index 1 used with the wrong type, expected "
		    "guest-defined resource but found a different "
		    "guest-defined resource");
	ASSERT_TRAP(&CX, canon_resource_drop(&CX, &RT2, 1),
		    "used with the wrong type");
	/* still there */
	ck_assert_int_eq(canon_resource_rep(&CX, &RT1, 1, &rep), 0);
}
END_TEST

START_TEST(table_growth_many)
{
	for (uint32_t i = 1; i <= 1000; i++)
		ck_assert_uint_eq(new_handle(&RT1, i), i);
	for (uint32_t i = 1; i <= 1000; i += 2)
		drop_ok(&RT1, i);
	/* LIFO: the last freed (999) comes back first */
	ck_assert_uint_eq(new_handle(&RT1, 0), 999);
	ck_assert_uint_eq(new_handle(&RT1, 0), 997);
	ck_assert_uint_eq(cabi_table_count(&TABLE), 502);
}
END_TEST

static int dtor_calls;
static uint64_t dtor_rep;

static void host_dtor(void *env, uint64_t rep)
{
	ck_assert_ptr_eq(env, &dtor_calls);
	dtor_calls++;
	dtor_rep = rep;
}

static wasm_host_status guest_dtor(wasm_exec *e, void *env,
				   const wasm_val *args, wasm_val *res)
{
	dtor_calls++;
	dtor_rep = args[0].u.i32;
	return WASM_HOST_OK;
}

static wasm_valtype DT_PARAMS[] = {WASM_I32};
static wasm_functype DT_TYPE = {1, 0, DT_PARAMS, NULL};

START_TEST(resource_drop_runs_dtor)
{
	cabi_resource_type host = {
		.host_dtor = host_dtor, .host_env = &dtor_calls, .name = "h"};
	cabi_resource_type guest = {.impl = (void *)2, .name = "g"};
	cabi_borrow_scope bscope = {0};
	const cm_type *res = resource_type("g");
	const cm_type *bt = handle_of(CM_BORROW, res);
	cm_val bv = cm_val_handle(CM_BORROW, &guest, 44);
	uint32_t i;

	dtor_calls = 0;
	drop_ok(&host, new_handle(&host, 33));
	ck_assert_int_eq(dtor_calls, 1);
	ck_assert_uint_eq(dtor_rep, 33);
	guest.dtor = wasm_func_new_host(S, &DT_TYPE, guest_dtor, NULL);
	drop_ok(&guest, new_handle(&guest, 34));
	ck_assert_int_eq(dtor_calls, 2);
	ck_assert_uint_eq(dtor_rep, 34);
	/* dropping a borrow runs no destructor; it ends the borrow */
	CX.borrow_scope = &bscope;
	ck_assert_int_eq(cabi_lower_borrow(&CX, &bv, bt, &i), 0);
	ck_assert_uint_eq(bscope.num_borrows, 1);
	drop_ok(&guest, i);
	ck_assert_uint_eq(bscope.num_borrows, 0);
	ck_assert_int_eq(dtor_calls, 2);
}
END_TEST

static int hook_calls;

static int hook_run_dtor(cabi_cx *cx, const cabi_resource_type *rt,
			 uint64_t rep)
{
	hook_calls++;
	if (rep == 666)
		return cabi_fail(&cx->err, CABI_ERR_TRAP,
				 "cannot enter component instance");
	return 0;
}

static const cm_type *HOOK_RES;

static const cabi_resource_type *hook_rt(void *inst, const cm_type *r)
{
	ck_assert_ptr_eq(r, HOOK_RES);
	return inst == (void *)7 ? &RT2 : &RT1;
}

START_TEST(resource_hooks)
{
	cabi_hooks hooks = {hook_rt, hook_run_dtor, NULL, NULL};
	const cm_type *own;
	cm_val v = cm_val_handle(CM_OWN, NULL, 5), back;
	uint32_t i;

	HOOK_RES = resource_type("r");
	own = handle_of(CM_OWN, HOOK_RES);
	CX.hooks = &hooks;
	hook_calls = 0;
	/* the type's runtime resource type comes from the hook */
	ck_assert_int_eq(cabi_lower_own(&CX, &v, own, &i), 0);
	ck_assert_ptr_eq(TABLE.array[i].u.res.rt, &RT1);
	drop_ok(&RT1, i);
	ck_assert_int_eq(hook_calls, 1);
	i = new_handle(&RT1, 666);
	ASSERT_TRAP(&CX, canon_resource_drop(&CX, &RT1, i),
		    "cannot enter component instance");
	/* lifting checks against the hook's type */
	i = new_handle(&RT1, 8);
	CX.inst = (void *)7;
	ASSERT_TRAP(&CX, cabi_lift_own(&CX, i, own, &back),
		    "used with the wrong type");
	CX.inst = NULL;
	ck_assert_int_eq(cabi_lift_own(&CX, i, own, &back), 0);
	ck_assert_ptr_eq(back.u.handle.rt, &RT1);
	ck_assert_uint_eq(back.u.handle.rep, 8);
}
END_TEST

START_TEST(own_borrow_semantics)
{
	const cm_type *res = resource_type("r");
	const cm_type *own = handle_of(CM_OWN, res);
	const cm_type *bor = handle_of(CM_BORROW, res);
	cabi_lenders lenders;
	cabi_borrow_scope bscope = {0};
	cm_val v = cm_val_handle(CM_OWN, &RT1, 77), back, b2;
	wasm_val core[1];
	cabi_core_iter it;
	cabi_core_out out = {core, 0, 1};
	uint32_t i;

	cabi_lenders_init(&lenders, &TABLE);
	/* lowering an own adds a handle (as a flat value) */
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, own, &out), 0);
	i = core[0].u.i32;
	ck_assert_uint_eq(i, 1);
	/* lifting a borrow of it lends it to the subtask */
	CX.lenders = &lenders;
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, bor, &back), 0);
	ck_assert_int_eq(back.kind, CM_BORROW);
	ck_assert_uint_eq(back.u.handle.rep, 77);
	ck_assert_uint_eq(TABLE.array[1].u.res.num_lends, 1);
	/* lent: it can neither move nor be dropped */
	it = (cabi_core_iter){core, 1, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, own, &b2),
		    "cannot remove owned resource while borrowed");
	ASSERT_TRAP(&CX, canon_resource_drop(&CX, &RT1, 1),
		    "cannot remove owned resource while borrowed");
	/* the callee side receives the borrow in its own bscope */
	CX2.table = &TABLE;
	CX2.borrow_scope = &bscope;
	CX2.inst = (void *)3;
	ck_assert_int_eq(cabi_lower_borrow(&CX2, &back, bor, &i), 0);
	ck_assert_uint_eq(i, 2);
	ck_assert_uint_eq(bscope.num_borrows, 1);
	ck_assert_int_eq(TABLE.array[2].u.res.own, false);
	ASSERT_TRAP(&CX2, cabi_borrow_scope_exit(&bscope, &CX2.err),
		    "borrow handles still remain at the end of the call");
	/* a borrow cannot be lifted as an own */
	ASSERT_TRAP(&CX2, cabi_lift_own(&CX2, 2, own, &b2),
		    "expected own handle but found borrow handle");
	drop_ok(&RT1, 2);
	ck_assert_int_eq(cabi_borrow_scope_exit(&bscope, &CX2.err), 0);
	/* the implementing instance gets the bare rep */
	RT1.impl = (void *)3;
	ck_assert_int_eq(cabi_lower_borrow(&CX2, &back, bor, &i), 0);
	ck_assert_uint_eq(i, 77);
	ck_assert_uint_eq(bscope.num_borrows, 0);
	RT1.impl = (void *)1;
	/* resolution delivered: the lend ends and the own can move */
	cabi_lenders_release(&lenders);
	ck_assert_uint_eq(TABLE.array[1].u.res.num_lends, 0);
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, own, &b2), 0);
	ck_assert(cm_val_equal(&v, &b2));
	ck_assert_uint_eq(cabi_table_count(&TABLE), 0);
	it = (cabi_core_iter){core, 1, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, own, &b2),
		    "unknown handle index 1");
	cabi_lenders_free(&lenders);
	/* a handle value without a type cannot be lowered */
	v.u.handle.rt = NULL;
	out.n = 0;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, own, &out), -1);
	ck_assert_int_eq(CX.err.kind, CABI_ERR_VALUE);
}
END_TEST

START_TEST(handles_in_memory)
{
	const cm_type *res = resource_type("r");
	const cm_type *t = list_of(handle_of(CM_OWN, res));
	cm_val v, back;
	uint64_t rep;

	ck_assert_int_eq(cm_val_seq(&v, CM_LIST, 3), 0);
	for (uint32_t i = 0; i < 3; i++)
		v.u.list.elems[i] = cm_val_handle(CM_OWN, &RT1, 100 + i);
	ck_assert_int_eq(cabi_store(&CX, &v, t, 1500), 0);
	ck_assert_uint_eq(cabi_table_count(&TABLE), 3);
	ck_assert_int_eq(canon_resource_rep(&CX, &RT1, 2, &rep), 0);
	ck_assert_uint_eq(rep, 101);
	ck_assert_int_eq(cabi_load(&CX, 1500, t, &back), 0);
	ck_assert(cm_val_equal(&v, &back));
	ck_assert_uint_eq(cabi_table_count(&TABLE), 0);
	cm_val_free(&v);
	cm_val_free(&back);
}
END_TEST

/* ---- 64-bit memories (🐘)
 * ----------------------------------------------------- */

static wasm_valtype RA64_PARAMS[] = {WASM_I64, WASM_I64, WASM_I32, WASM_I64};
static wasm_valtype RA64_RESULTS[] = {WASM_I64};
static wasm_functype RA64_TYPE = {4, 1, RA64_PARAMS, RA64_RESULTS};

static wasm_host_status ra64_fn(wasm_exec *e, void *env, const wasm_val *args,
				wasm_val *res)
{
	ra_state *s = env;
	uint64_t al = args[2].u.i32, p = (s->next + al - 1) / al * al;

	s->ncalls++;
	s->next = (uint32_t)(p + args[3].u.i64);
	if (args[0].u.i64 != 0)
		memmove(wasm_memory_data(s->mem) + p,
			wasm_memory_data(s->mem) + args[0].u.i64,
			(size_t)args[1].u.i64);
	res[0].type = WASM_I64;
	res[0].u.i64 = p;
	return WASM_HOST_OK;
}

START_TEST(memory64_pointers)
{
	wasm_memtype mt;
	cabi_cx cx;
	cabi_options o;
	ra_state ra;
	const cm_type *t = tuple_of(2, P(CM_STRING), list_of(P(CM_U16)));
	cm_val v, back;
	wasm_val core[4];
	cabi_core_out out = {core, 0, 4};
	cabi_core_iter it;

	memset(&mt, 0, sizeof mt);
	mt.limits.min = 1;
	mt.limits.is64 = true;
	memset(&ra, 0, sizeof ra);
	memset(&o, 0, sizeof o);
	o.memory = wasm_memory_new(S, mt);
	ck_assert_ptr_nonnull(o.memory);
	ra.mem = o.memory;
	ra.next = 64;
	o.realloc = wasm_func_new_host(S, &RA64_TYPE, ra64_fn, &ra);
	o.ptr64 = true;
	o.string_encoding = CM_LATIN1_UTF16;
	cabi_cx_init(&cx, &o, NULL, &TABLE);
	cx.store = S; /* realloc is a host function: the cx needs a store */
	ck_assert_uint_eq(cm_elem_size(t, true), 32);
	ck_assert_int_eq(cm_val_seq(&v, CM_TUPLE, 2), 0);
	v.u.list.elems[0] = S_("\xc4\x80x"); /* needs UTF-16 */
	ck_assert_int_eq(cm_val_seq(&v.u.list.elems[1], CM_LIST, 2), 0);
	v.u.list.elems[1].u.list.elems[0] = cm_val_u16(1);
	v.u.list.elems[1].u.list.elems[1] = cm_val_u16(2);
	/* flat: i64 pointers and lengths, the UTF-16 tag in bit 63 */
	ck_assert_int_eq(cabi_lower_flat(&cx, &v, t, &out), 0);
	ck_assert_uint_eq(out.n, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(core[i].type, WASM_I64);
	ck_assert_uint_eq(core[1].u.i64, 2 | CABI_UTF16_TAG64);
	ck_assert_uint_eq(core[3].u.i64, 2);
	it = (cabi_core_iter){core, 4, 0};
	ck_assert_int_eq(cabi_lift_flat(&cx, &it, t, &back), 0);
	ck_assert(cm_val_equal(&v, &back));
	cm_val_free(&back);
	/* in memory: 8-byte pointer/length pairs */
	ck_assert_int_eq(cabi_store(&cx, &v, t, 4096), 0);
	ck_assert_uint_eq(wasm_memory_data(o.memory)[4096 + 15], 0x80);
	ck_assert_uint_eq(wasm_memory_data(o.memory)[4096 + 8], 2);
	ck_assert_int_eq(cabi_load(&cx, 4096, t, &back), 0);
	ck_assert(cm_val_equal(&v, &back));
	cm_val_free(&back);
	/* a 32-bit core value where an i64 pointer belongs */
	core[0] = I32(0);
	it = (cabi_core_iter){core, 4, 0};
	ck_assert_int_eq(cabi_lift_flat(&cx, &it, t, &back), -1);
	ck_assert_int_eq(cx.err.kind, CABI_ERR_VALUE);
	cm_val_free(&v);
	cabi_cx_release(&cx);
}
END_TEST

START_TEST(error_context_and_async)
{
	cm_val v, back;
	wasm_val core[1];
	cabi_core_out out = {core, 0, 1};
	cabi_core_iter it;
	int obj;
	const cm_type *st;
	cm_type *s = tt_new(CM_STREAM);

	s->u.stream.elem = P(CM_U8);
	cm_type_finish(s);
	st = s;
	memset(&v, 0, sizeof v);
	v.kind = CM_ERROR_CONTEXT;
	v.u.async.obj = &obj;
	ck_assert_int_eq(cabi_lower_flat(&CX, &v, P(CM_ERROR_CONTEXT), &out),
			 0);
	ck_assert_uint_eq(core[0].u.i32, 1);
	/* lifted by get: the handle stays */
	it = (cabi_core_iter){core, 1, 0};
	ck_assert_int_eq(cabi_lift_flat(&CX, &it, P(CM_ERROR_CONTEXT), &back),
			 0);
	ck_assert_ptr_eq(back.u.async.obj, &obj);
	ck_assert_uint_eq(cabi_table_count(&TABLE), 1);
	/* streams need the async layer's hooks */
	it = (cabi_core_iter){core, 1, 0};
	ASSERT_TRAP(&CX, cabi_lift_flat(&CX, &it, st, &back), "not supported");
}
END_TEST

static Suite *cabi_suite(void)
{
	Suite *s = suite_create("cabi");
	TCase *tc;

	tc = tcase_create("values");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, val_copy_equal_free);
	tcase_add_test(tc, val_typecheck);
	suite_add_tcase(s, tc);

	tc = tcase_create("scalars");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, scalars_roundtrip);
	tcase_add_test(tc, scalars_lift_wrap);
	tcase_add_test(tc, scalars_lower_masks);
	tcase_add_test(tc, char_traps);
	tcase_add_test(tc, load_store_bounds_alignment);
	tcase_add_test(tc, layout_offsets);
	tcase_add_test(tc, flags_sizes);
	suite_add_tcase(s, tc);

	tc = tcase_create("variants");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, variant_discriminants);
	tcase_add_test(tc, variant_join_coercions);
	tcase_add_test(tc, nested_variant_coercion);
	suite_add_tcase(s, tc);

	tc = tcase_create("lists");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, lists_roundtrip);
	tcase_add_test(tc, list_lift_traps);
	tcase_add_test(tc, host_budget_charges_lifts);
	tcase_add_test(tc, byte_lists);
	tcase_add_test(tc, list_lower_bound);
	tcase_add_test(tc, realloc_result_traps);
	tcase_add_test(tc, realloc_guest_failures);
	tcase_add_test(tc, realloc_moves_memory);
	suite_add_tcase(s, tc);

	tc = tcase_create("strings");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, string_transcode_matrix);
	tcase_add_test(tc, string_realloc_sequences);
	tcase_add_test(tc, string_lift_traps);
	tcase_add_test(tc, string_host_value_hint);
	suite_add_tcase(s, tc);

	tc = tcase_create("spilling");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, spill_params_16_17);
	tcase_add_test(tc, spill_cross_abi_layout);
	tcase_add_test(tc, spill_results_1_2);
	tcase_add_test(tc, memory64_pointers);
	suite_add_tcase(s, tc);

	tc = tcase_create("handles");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, table_index_order);
	tcase_add_test(tc, table_unknown_indices);
	tcase_add_test(tc, table_wrong_resource_type);
	tcase_add_test(tc, table_growth_many);
	tcase_add_test(tc, resource_drop_runs_dtor);
	tcase_add_test(tc, resource_hooks);
	tcase_add_test(tc, own_borrow_semantics);
	tcase_add_test(tc, handles_in_memory);
	tcase_add_test(tc, error_context_and_async);
	suite_add_tcase(s, tc);
	return s;
}

Suite *make_suite(void)
{
	return cabi_suite();
}
