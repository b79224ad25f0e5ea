/*
 * test_simd.c - the SIMD table (ops_simd.def) and the semantics behind it
 * (simd.h): the exact set of subopcodes, the function signature of every
 * row, and the lane edge cases (saturation, wrapping, out-of-range
 * indices, shift counts, NaN and signed-zero rules, relaxed choices).
 */
#include <stdint.h>
#include <string.h>

#include "wasm/simd.h"
#include "testmain.h"

/* ---- helpers ------------------------------------------------------------ */

/*
 * Vectors pass through a volatile so that the operations run at run time:
 * the compiler's constant folding does not model signalling NaNs.
 */
static wasm_v128 opaque(wasm_v128 v)
{
	volatile wasm_v128 t = v;
	return t;
}

static wasm_v128 v_u8(const uint8_t l[16])
{
	wasm_v128 v;
	memcpy(&v, l, 16);
	return opaque(v);
}

static wasm_v128 v_u16(const uint16_t l[8])
{
	wasm_v128 v;
	memcpy(&v, l, 16);
	return opaque(v);
}

static wasm_v128 v_u32(const uint32_t l[4])
{
	wasm_v128 v;
	memcpy(&v, l, 16);
	return opaque(v);
}

static wasm_v128 v_u64(uint64_t a, uint64_t b)
{
	return opaque(simd_v128_make(a, b));
}

#define V8(...)	 v_u8((const uint8_t[16]){__VA_ARGS__})
#define V16(...) v_u16((const uint16_t[8]){__VA_ARGS__})
#define V32(...) v_u32((const uint32_t[4]){__VA_ARGS__})

static void assert_v(wasm_v128 got, wasm_v128 want)
{
	ck_assert_msg(got.lo == want.lo && got.hi == want.hi,
		      "got %016llx%016llx want %016llx%016llx",
		      (unsigned long long)got.hi, (unsigned long long)got.lo,
		      (unsigned long long)want.hi, (unsigned long long)want.lo);
}

static uint32_t f32b(float f)
{
	return num_f32_bits(f);
}

static uint64_t f64b(double d)
{
	return num_f64_bits(d);
}

/* ---- the table ---------------------------------------------------------- */

typedef wasm_v128 (*sh_V_V)(wasm_v128);
typedef wasm_v128 (*sh_V_VV)(wasm_v128, wasm_v128);
typedef wasm_v128 (*sh_V_VVV)(wasm_v128, wasm_v128, wasm_v128);
typedef wasm_v128 (*sh_V_VS)(wasm_v128, uint32_t);
typedef uint32_t (*sh_I32_V)(wasm_v128);
typedef wasm_v128 (*sh_V_I32)(uint32_t);
typedef wasm_v128 (*sh_V_I64)(uint64_t);
typedef wasm_v128 (*sh_V_F32)(float);
typedef wasm_v128 (*sh_V_F64)(double);
typedef uint32_t (*sh_I32_V_LANE)(wasm_v128, uint32_t);
typedef uint64_t (*sh_I64_V_LANE)(wasm_v128, uint32_t);
typedef float (*sh_F32_V_LANE)(wasm_v128, uint32_t);
typedef double (*sh_F64_V_LANE)(wasm_v128, uint32_t);
typedef wasm_v128 (*sh_V_VI32_LANE)(wasm_v128, uint32_t, uint32_t);
typedef wasm_v128 (*sh_V_VI64_LANE)(wasm_v128, uint32_t, uint64_t);
typedef wasm_v128 (*sh_V_VF32_LANE)(wasm_v128, uint32_t, float);
typedef wasm_v128 (*sh_V_VF64_LANE)(wasm_v128, uint32_t, double);
typedef wasm_v128 (*sh_LOAD)(const uint8_t *);
typedef void (*sh_STORE)(uint8_t *, wasm_v128);
typedef wasm_v128 (*sh_LOAD_LANE)(const uint8_t *, wasm_v128, uint32_t);
typedef void (*sh_STORE_LANE)(uint8_t *, wasm_v128, uint32_t);

/* Typed members + initialisers: the compiler checks each row's fn. */
static const struct {
#define SIMDOP(op, name, SH, fn)	       sh_##SH name;
#define SIMDOP_LANE(op, name, SH, n, fn)       sh_##SH name;
#define SIMDOP_MEM(op, name, K, al, fn)	       sh_##K name;
#define SIMDOP_MEMLANE(op, name, K, ll, n, fn) sh_##K name;
#include "wasm/ops_simd.def"
} signatures_typecheck = {
#define SIMDOP(op, name, SH, fn)	       fn,
#define SIMDOP_LANE(op, name, SH, n, fn)       fn,
#define SIMDOP_MEM(op, name, K, al, fn)	       fn,
#define SIMDOP_MEMLANE(op, name, K, ll, n, fn) fn,
#include "wasm/ops_simd.def"
};

static unsigned lanes_of_name(const char *name)
{
	if (!strncmp(name, "i8x16", 5))
		return 16;
	if (!strncmp(name, "i16x8", 5))
		return 8;
	if (!strncmp(name, "i32x4", 5) || !strncmp(name, "f32x4", 5))
		return 4;
	if (!strncmp(name, "i64x2", 5) || !strncmp(name, "f64x2", 5))
		return 2;
	return 0;
}

START_TEST(table_has_exact_subopcode_set)
{
	static const unsigned reserved[] = {
		0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb,
		0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee,
	};
	unsigned seen[0x120] = {0}, want[0x120] = {0}, total = 0;
	unsigned specials = 0;

	(void)signatures_typecheck;
	for (unsigned op = 0; op <= 0x113; op++)
		want[op] = 1;
	for (unsigned i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
		want[reserved[i]] = 0;

#define SIMDOP(op, name, SH, fn) seen[op]++, total++;
#define SIMDOP_LANE(op, name, SH, n, fn)                                       \
	seen[op]++, total++;                                                   \
	ck_assert_uint_eq(n, lanes_of_name(#name));
#define SIMDOP_MEM(op, name, K, al, fn)                                        \
	seen[op]++, total++;                                                   \
	ck_assert_uint_le(al, 4);
#define SIMDOP_MEMLANE(op, name, K, ll, n, fn)                                 \
	seen[op]++, total++;                                                   \
	ck_assert_uint_eq((1u << (ll)) * (n), 16);
#define SIMDOP_SPECIAL(op, name) seen[op]++, total++, specials += op;
#include "wasm/ops_simd.def"

	for (unsigned op = 0; op < 0x120; op++)
		ck_assert_msg(seen[op] == want[op], "subopcode 0x%x: %u rows",
			      op, seen[op]);
	ck_assert_uint_eq(total, 236 + 20);
	ck_assert_uint_eq(specials, 0x0c + 0x0d);
}
END_TEST

START_TEST(table_names_unique_and_mem_sizes)
{
	const char *names[] = {
#define SIMDOP(op, name, SH, fn)	       #name,
#define SIMDOP_LANE(op, name, SH, n, fn)       #name,
#define SIMDOP_MEM(op, name, K, al, fn)	       #name,
#define SIMDOP_MEMLANE(op, name, K, ll, n, fn) #name,
#define SIMDOP_SPECIAL(op, name)	       #name,
#include "wasm/ops_simd.def"
	};
	unsigned n = sizeof names / sizeof names[0], bytes = 0;

	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			ck_assert_str_ne(names[i], names[j]);
			/* Access sizes: 16 + 6*8 + 1+2+4+8 + 16 + 4+8 bytes in
			 * all. */
#define SIMDOP_MEM(op, name, K, al, fn) bytes += 1u << (al);
#include "wasm/ops_simd.def"
	ck_assert_uint_eq(bytes, 16 + 6 * 8 + 1 + 2 + 4 + 8 + 16 + 4 + 8);
}
END_TEST

/* ---- integer lanes ------------------------------------------------------ */

START_TEST(narrow_saturates)
{
	wasm_v128 a = V16(0x8000, 0xff7f, 0xff80, 127, 128, 0x7fff, 0, 0xffff);
	wasm_v128 b = V16(255, 256, 1, 2, 3, 4, 5, 0xff00);

	assert_v(simd_i8x16_narrow_i16x8_s(a, b),
		 V8(0x80, 0x80, 0x80, 127, 127, 127, 0, 0xff, 127, 127, 1, 2, 3,
		    4, 5, 0x80));
	assert_v(simd_i8x16_narrow_i16x8_u(a, b),
		 V8(0, 0, 0, 127, 128, 255, 0, 0, 255, 255, 1, 2, 3, 4, 5, 0));
	a = V32(0x80000000u, 0xffff7fffu, 32768, 0xffffffffu);
	b = V32(65535, 65536, 0x7fffffffu, 7);
	assert_v(
		simd_i16x8_narrow_i32x4_s(a, b),
		V16(0x8000, 0x8000, 0x7fff, 0xffff, 0x7fff, 0x7fff, 0x7fff, 7));
	assert_v(simd_i16x8_narrow_i32x4_u(a, b),
		 V16(0, 0, 32768, 0, 65535, 65535, 65535, 7));
}
END_TEST

START_TEST(q15mulr_rounds_and_saturates)
{
	wasm_v128 a =
		V16(0x8000, 16384, 0xffff, 0xc000, 0xbfff, 0x7fff, 0x8000, 1);
	wasm_v128 b = V16(0x8000, 16384, 1, 1, 1, 0x7fff, 0x7fff, 0x4000);
	wasm_v128 want = V16(0x7fff, 8192, 0, 0, 0xffff, 0x7ffe, 0x8001, 1);

	assert_v(simd_i16x8_q15mulr_sat_s(a, b), want);
	assert_v(simd_i16x8_relaxed_q15mulr_s(a, b), want);
}
END_TEST

START_TEST(extmul_extend_extadd_dot)
{
	wasm_v128 a8 = V8(0x80, 0x80, 0xff, 2, 0, 0, 0, 0, 0xff, 0x7f, 0, 0, 0,
			  0, 0, 0);
	wasm_v128 b8 = V8(0x80, 0x7f, 0xff, 3, 0, 0, 0, 0, 0xff, 0x80, 0, 0, 0,
			  0, 0, 0);

	assert_v(simd_i16x8_extmul_low_i8x16_s(a8, b8),
		 V16(16384, (uint16_t)-16256, 1, 6, 0, 0, 0, 0));
	assert_v(simd_i16x8_extmul_low_i8x16_u(a8, b8),
		 V16(16384, 16256, 65025, 6, 0, 0, 0, 0));
	assert_v(simd_i16x8_extmul_high_i8x16_s(a8, b8),
		 V16(1, (uint16_t)-16256, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i16x8_extmul_high_i8x16_u(a8, b8),
		 V16(65025, 16256, 0, 0, 0, 0, 0, 0));

	wasm_v128 a16 = V16(0x8000, 0xffff, 3, 0, 0xffff, 0x8000, 0, 0);
	assert_v(simd_i32x4_extmul_low_i16x8_s(a16, a16),
		 V32(0x40000000u, 1, 9, 0));
	assert_v(simd_i32x4_extmul_high_i16x8_u(a16, a16),
		 V32(0xfffe0001u, 0x40000000u, 0, 0));
	assert_v(simd_i64x2_extmul_low_i32x4_s(
			 V32(0x80000000u, 0xffffffffu, 0, 0),
			 V32(0x80000000u, 5, 0, 0)),
		 v_u64(0x4000000000000000u, (uint64_t)-5));
	assert_v(simd_i64x2_extmul_high_i32x4_u(V32(0, 0, 0xffffffffu, 2),
						V32(0, 0, 0xffffffffu, 3)),
		 v_u64(0xfffffffe00000001u, 6));

	assert_v(simd_i16x8_extend_high_i8x16_s(a8),
		 V16(0xffff, 0x7f, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i32x4_extend_low_i16x8_u(a16), V32(0x8000, 0xffff, 3, 0));
	assert_v(simd_i64x2_extend_high_i32x4_s(V32(0, 0, 0x80000000u, 1)),
		 v_u64(0xffffffff80000000u, 1));

	assert_v(simd_i16x8_extadd_pairwise_i8x16_s(V8(0x80, 0x80, 0x7f, 0x7f,
						       0xff, 1, 0, 0, 0, 0, 0,
						       0, 0, 0, 0, 0)),
		 V16((uint16_t)-256, 254, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i16x8_extadd_pairwise_i8x16_u(V8(
			 0xff, 0xff, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
		 V16(510, 3, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i32x4_extadd_pairwise_i16x8_s(
			 V16(0x8000, 0x8000, 0x7fff, 0x7fff, 0, 0, 0, 0)),
		 V32((uint32_t)-65536, 65534, 0, 0));
	assert_v(simd_i32x4_extadd_pairwise_i16x8_u(
			 V16(0xffff, 0xffff, 0, 0, 0, 0, 0, 0)),
		 V32(131070, 0, 0, 0));

	/* (-32768)^2 * 2 = 2^31 wraps in the i32 lane. */
	wasm_v128 m = simd_i16x8_splat(0x8000);
	assert_v(simd_i32x4_dot_i16x8_s(m, m), simd_i32x4_splat(0x80000000u));
	assert_v(simd_i32x4_dot_i16x8_s(V16(1, 2, 3, 4, 0xffff, 0, 0, 0),
					V16(5, 6, 7, 8, 9, 0, 0, 0)),
		 V32(17, 53, (uint32_t)-9, 0));
}
END_TEST

START_TEST(int_lane_arith_wraps_and_saturates)
{
	wasm_v128 a =
		V8(127, 0x80, 255, 0, 0x80, 0x7f, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0);
	wasm_v128 b = V8(1, 0xff, 1, 1, 0x80, 0x81, 0xff, 0xfe, 0, 0, 0, 0, 0,
			 0, 0, 0);

	assert_v(simd_i8x16_add_sat_s(a, b),
		 V8(127, 0x80, 0, 1, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_add_sat_u(a, b), V8(128, 255, 255, 1, 255, 255, 255,
						255, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_sub_sat_s(a, b), V8(126, 0x81, 0xfe, 0xff, 0, 127,
						2, 4, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_sub_sat_u(a, b),
		 V8(126, 0, 254, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_add(a, b),
		 V8(0x80, 0x7f, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_avgr_u(a, b), V8(64, 192, 128, 1, 128, 128, 128,
					     128, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_min_s(a, b), V8(1, 0x80, 255, 0, 0x80, 0x81, 0xff,
					    0xfe, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_max_u(a, b), V8(127, 255, 255, 1, 0x80, 0x81, 0xff,
					    0xfe, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_abs(a),
		 V8(127, 0x80, 1, 0, 0x80, 0x7f, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_neg(a), V8(0x81, 0x80, 1, 0, 0x80, 0x81, 0xff, 0xfe,
				       0, 0, 0, 0, 0, 0, 0, 0));

	wasm_v128 h = V16(0x7fff, 0x8000, 0xffff, 0, 0x8000, 1, 0xffff, 2);
	wasm_v128 k = V16(1, 0xffff, 1, 1, 0x8000, 0xffff, 0xffff, 0x7fff);
	assert_v(simd_i16x8_add_sat_s(h, k),
		 V16(0x7fff, 0x8000, 0, 1, 0x8000, 0, 0xfffe, 0x7fff));
	assert_v(simd_i16x8_sub_sat_s(h, k),
		 V16(0x7ffe, 0x8001, 0xfffe, 0xffff, 0, 2, 0, 0x8003));
	assert_v(
		simd_i16x8_add_sat_u(h, k),
		V16(0x8000, 0xffff, 0xffff, 1, 0xffff, 0xffff, 0xffff, 0x8001));
	assert_v(simd_i16x8_mul(h, k),
		 V16(0x7fff, 0x8000, 0xffff, 0, 0, 0xffff, 1, 0xfffe));
	assert_v(simd_i16x8_avgr_u(V16(0xffff, 0, 1, 0, 0, 0, 0, 0),
				   V16(0xffff, 1, 2, 0, 0, 0, 0, 0)),
		 V16(0xffff, 1, 2, 0, 0, 0, 0, 0));
	assert_v(simd_i32x4_mul(V32(0xffffffffu, 0x10000, 3, 0x80000000u),
				V32(0xffffffffu, 0x10000, 5, 2)),
		 V32(1, 0, 15, 0));
	assert_v(simd_i32x4_abs(V32(0x80000000u, 0xffffffffu, 5, 0)),
		 V32(0x80000000u, 1, 5, 0));
	assert_v(simd_i64x2_abs(v_u64(0x8000000000000000u, (uint64_t)-3)),
		 v_u64(0x8000000000000000u, 3));
	assert_v(simd_i64x2_mul(v_u64(UINT64_MAX, 1ull << 32),
				v_u64(UINT64_MAX, 1ull << 32)),
		 v_u64(1, 0));
	assert_v(simd_i8x16_popcnt(V8(0xff, 0x55, 0, 0x80, 1, 3, 7, 15, 31, 63,
				      127, 0xfe, 0xaa, 0x10, 0x11, 0x0f)),
		 V8(8, 4, 0, 1, 1, 2, 3, 4, 5, 6, 7, 7, 4, 1, 2, 4));
}
END_TEST

START_TEST(int_lane_compares)
{
	wasm_v128 a =
		V8(0x80, 0x7f, 0, 0xff, 5, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	wasm_v128 b =
		V8(0x7f, 0x80, 0xff, 0, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

	assert_v(simd_i8x16_lt_s(a, b),
		 V8(0xff, 0, 0, 0xff, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_lt_u(a, b),
		 V8(0, 0xff, 0xff, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_ge_s(a, b),
		 V8(0, 0xff, 0xff, 0, 0xff, 0, 0xff, 0xff, 0xff, 0xff, 0xff,
		    0xff, 0xff, 0xff, 0xff, 0xff));
	assert_v(simd_i8x16_eq(a, b),
		 V8(0, 0, 0, 0, 0xff, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		    0xff, 0xff, 0xff, 0xff));
	assert_v(simd_i8x16_ne(a, b), simd_v128_not(simd_i8x16_eq(a, b)));
	assert_v(simd_i8x16_gt_u(a, b),
		 V8(0xff, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_le_u(a, b), simd_v128_not(simd_i8x16_gt_u(a, b)));
	assert_v(simd_i16x8_gt_s(V16(0x8000, 1, 0, 0, 0, 0, 0, 0),
				 V16(0x7fff, 0xffff, 0, 0, 0, 0, 0, 0)),
		 V16(0, 0xffff, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i32x4_le_u(V32(0x80000000u, 1, 2, 3),
				 V32(0x7fffffffu, 1, 1, 4)),
		 V32(0, 0xffffffffu, 0, 0xffffffffu));
	assert_v(simd_i64x2_lt_s(v_u64(0x8000000000000000u, 1),
				 v_u64(0x7fffffffffffffffu, 0)),
		 v_u64(UINT64_MAX, 0));
	assert_v(simd_i64x2_ge_s(v_u64(UINT64_MAX, 7), v_u64(0, 7)),
		 v_u64(0, UINT64_MAX));
}
END_TEST

START_TEST(shifts_take_count_mod_width)
{
	wasm_v128 a =
		V8(0x80, 1, 0xff, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

	assert_v(simd_i8x16_shl(a, 8), a);
	assert_v(simd_i8x16_shl(a, 9),
		 V8(0, 2, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_shr_s(a, 7),
		 V8(0xff, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i8x16_shr_u(a, 0xffffffffu),
		 V8(1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i16x8_shr_s(V16(0x8000, 0x4000, 0, 0, 0, 0, 0, 0), 17),
		 V16(0xc000, 0x2000, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i16x8_shl(V16(0xffff, 1, 0, 0, 0, 0, 0, 0), 31),
		 V16(0x8000, 0x8000, 0, 0, 0, 0, 0, 0));
	assert_v(simd_i32x4_shr_s(V32(0x80000000u, 8, 0, 0), 32 + 3),
		 V32(0xf0000000u, 1, 0, 0));
	assert_v(simd_i32x4_shl(V32(1, 2, 3, 4), 32), V32(1, 2, 3, 4));
	assert_v(simd_i64x2_shr_s(v_u64(0x8000000000000000u, 16), 64 + 4),
		 v_u64(0xf800000000000000u, 1));
	assert_v(simd_i64x2_shr_u(v_u64(0x8000000000000000u, 16), 63),
		 v_u64(1, 0));
	assert_v(simd_i64x2_shl(v_u64(1, 3), 128 + 63),
		 v_u64(0x8000000000000000u, 0x8000000000000000u));
}
END_TEST

START_TEST(swizzle_shuffle_lanes)
{
	wasm_v128 a = V8(10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
			 24, 25);
	wasm_v128 b = V8(30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43,
			 44, 45);
	wasm_v128 idx =
		V8(15, 0, 16, 0x80, 0xff, 1, 17, 100, 2, 3, 4, 5, 6, 7, 8, 9);
	wasm_v128 want =
		V8(25, 10, 0, 0, 0, 11, 0, 0, 12, 13, 14, 15, 16, 17, 18, 19);
	static const uint8_t sh[16] = {0, 16, 1,  17, 15, 31, 30, 14,
				       2, 2,  18, 18, 3,  19, 7,  23};

	assert_v(simd_i8x16_swizzle(a, idx), want);
	assert_v(simd_i8x16_relaxed_swizzle(a, idx), want);
	assert_v(simd_i8x16_shuffle(a, b, sh),
		 V8(10, 30, 11, 31, 25, 45, 44, 24, 12, 12, 32, 32, 13, 33, 17,
		    37));

	ck_assert_uint_eq(simd_i8x16_extract_lane_s(a, 0), 10);
	ck_assert_uint_eq(simd_i8x16_extract_lane_s(V8(0, 0x80), 1),
			  0xffffff80u);
	ck_assert_uint_eq(simd_i8x16_extract_lane_u(V8(0, 0x80), 1), 0x80);
	ck_assert_uint_eq(
		simd_i16x8_extract_lane_s(V16(0, 0, 0, 0, 0, 0, 0, 0x8000), 7),
		0xffff8000u);
	ck_assert_uint_eq(
		simd_i16x8_extract_lane_u(V16(0, 0, 0, 0, 0, 0, 0, 0x8000), 7),
		0x8000);
	assert_v(simd_i8x16_replace_lane(simd_v128_make(0, 0), 15, 0x1ff),
		 simd_v128_make(0, 0xff00000000000000u));
	assert_v(simd_i16x8_replace_lane(simd_v128_make(0, 0), 1, 0x12345),
		 simd_v128_make(0x23450000u, 0));
	assert_v(simd_i32x4_replace_lane(simd_v128_make(0, 0), 2, 7),
		 simd_v128_make(0, 7));
	ck_assert_uint_eq(simd_i64x2_extract_lane(v_u64(1, 2), 1), 2);
	assert_v(simd_i64x2_replace_lane(v_u64(1, 2), 0, 9), v_u64(9, 2));

	/* Float lanes move bits: a signalling NaN survives. */
	wasm_v128 f = simd_f32x4_splat(num_f32_from_bits(0x7fa00001u));
	assert_v(f, V32(0x7fa00001u, 0x7fa00001u, 0x7fa00001u, 0x7fa00001u));
	ck_assert_uint_eq(f32b(simd_f32x4_extract_lane(f, 3)), 0x7fa00001u);
	f = simd_f32x4_replace_lane(f, 1, num_f32_from_bits(0xff800001u));
	ck_assert_uint_eq(simd_i32x4_extract_lane(f, 1), 0xff800001u);
	wasm_v128 d = simd_f64x2_splat(num_f64_from_bits(0x7ff0000000000001u));
	ck_assert_uint_eq(f64b(simd_f64x2_extract_lane(d, 1)),
			  0x7ff0000000000001u);
	d = simd_f64x2_replace_lane(d, 0, -0.0);
	assert_v(d, v_u64(0x8000000000000000u, 0x7ff0000000000001u));

	assert_v(simd_i8x16_splat(0x1ff),
		 simd_v128_make(UINT64_MAX, UINT64_MAX));
	assert_v(simd_i16x8_splat(0xabcd1234u),
		 V16(0x1234, 0x1234, 0x1234, 0x1234, 0x1234, 0x1234, 0x1234,
		     0x1234));
}
END_TEST

START_TEST(bitwise_and_reductions)
{
	wasm_v128 a = v_u64(0xff00ff00ff00ff00u, 0x0123456789abcdefu);
	wasm_v128 b = v_u64(0x0ff00ff00ff00ff0u, 0xfedcba9876543210u);
	wasm_v128 c = v_u64(0xffffffff00000000u, 0x00000000ffffffffu);

	assert_v(simd_v128_bitselect(a, b, c),
		 v_u64(0xff00ff000ff00ff0u, 0xfedcba9889abcdefu));
	assert_v(simd_i16x8_relaxed_laneselect(a, b, c),
		 simd_v128_bitselect(a, b, c));
	assert_v(simd_v128_andnot(a, b),
		 v_u64(0xf000f000f000f000u, 0x0123456789abcdefu));
	ck_assert_uint_eq(simd_v128_any_true(v_u64(0, 0)), 0);
	ck_assert_uint_eq(simd_v128_any_true(v_u64(0, 1ull << 63)), 1);
	ck_assert_uint_eq(simd_i8x16_all_true(simd_i8x16_splat(1)), 1);
	ck_assert_uint_eq(
		simd_i8x16_all_true(v_u64(UINT64_MAX, 0xffffffffffff00ffu)), 0);
	ck_assert_uint_eq(simd_i16x8_all_true(v_u64(0x0001000100010100u,
						    0x0100010001000100u)),
			  1);
	ck_assert_uint_eq(simd_i32x4_all_true(v_u64(0xffffffff00000000u, 1)),
			  0);
	ck_assert_uint_eq(simd_i64x2_all_true(v_u64(1ull << 63, 1)), 1);
	ck_assert_uint_eq(simd_i8x16_bitmask(V8(0x80, 0x7f, 0xff, 0, 0, 0, 0, 0,
						0, 0, 0, 0, 0, 0, 0, 0x80)),
			  0x8005);
	ck_assert_uint_eq(
		simd_i16x8_bitmask(V16(0x8000, 0x7fff, 0, 0, 0, 0, 0, 0xffff)),
		0x81);
	ck_assert_uint_eq(
		simd_i32x4_bitmask(V32(0, 0x80000000u, 1, 0xffffffffu)), 0xa);
	ck_assert_uint_eq(simd_i64x2_bitmask(v_u64(1ull << 63, 5)), 1);
}
END_TEST

/* ---- float lanes -------------------------------------------------------- */

START_TEST(float_lane_min_max_pmin_pmax)
{
	wasm_v128 a = V32(0, 0x80000000u, 0x7fc00000u, f32b(1.0f));
	wasm_v128 b = V32(0x80000000u, 0, f32b(1.0f), 0x7fa00000u);
	wasm_v128 r;

	r = simd_f32x4_min(a, b);
	ck_assert_uint_eq(r.lo, 0x8000000080000000u); /* -0 < +0 */
	ck_assert_uint_eq((uint32_t)r.hi & 0x7fffffffu, 0x7fc00000u);
	ck_assert_uint_eq((uint32_t)(r.hi >> 32), 0x7fe00000u);
	r = simd_f32x4_max(a, b);
	ck_assert_uint_eq(r.lo, 0);
	assert_v(simd_f32x4_relaxed_max(a, b), r);
	/* pmin(a, b) = b < a ? b : a: NaN and zero cases keep a's bits. */
	assert_v(simd_f32x4_pmin(a, b),
		 V32(0, 0x80000000u, 0x7fc00000u, f32b(1.0f)));
	assert_v(simd_f32x4_pmax(a, b),
		 V32(0, 0x80000000u, 0x7fc00000u, f32b(1.0f)));
	assert_v(simd_f32x4_pmin(V32(f32b(2.0f), 0, 0, 0),
				 V32(f32b(1.0f), 0, 0, 0)),
		 V32(f32b(1.0f), 0, 0, 0));
	assert_v(simd_f32x4_pmax(V32(f32b(-2.0f), 0, 0, 0),
				 V32(f32b(1.0f), 0, 0, 0)),
		 V32(f32b(1.0f), 0, 0, 0));

	wasm_v128 d = simd_f64x2_min(v_u64(0, f64b(-1.0)),
				     v_u64(0x8000000000000000u, f64b(2.0)));
	assert_v(d, v_u64(0x8000000000000000u, f64b(-1.0)));
	d = simd_f64x2_max(v_u64(0x8000000000000000u, 0x7ff8000000000000u),
			   v_u64(0, f64b(2.0)));
	ck_assert_uint_eq(d.lo, 0);
	ck_assert_uint_eq(d.hi & 0x7fffffffffffffffu, 0x7ff8000000000000u);
	assert_v(simd_f64x2_pmin(v_u64(0x7ff8000000000001u, f64b(1.0)),
				 v_u64(f64b(1.0), 0x7ff8000000000001u)),
		 v_u64(0x7ff8000000000001u, f64b(1.0)));
}
END_TEST

START_TEST(float_lane_rounding_and_sign)
{
	assert_v(simd_f32x4_nearest(
			 V32(f32b(0.5f), f32b(1.5f), f32b(2.5f), f32b(-0.5f))),
		 V32(0, f32b(2.0f), f32b(2.0f), 0x80000000u));
	assert_v(simd_f32x4_ceil(V32(f32b(-0.5f), f32b(0.1f), 0x7fa00000u,
				     f32b(-1.5f))),
		 V32(0x80000000u, f32b(1.0f), 0x7fe00000u, f32b(-1.0f)));
	assert_v(simd_f32x4_floor(V32(f32b(-0.5f), 0x80000000u, 0, 1)),
		 V32(f32b(-1.0f), 0x80000000u, 0, 0));
	assert_v(simd_f32x4_trunc(V32(f32b(-0.9f), f32b(1.9f), 0, 0)),
		 V32(0x80000000u, f32b(1.0f), 0, 0));
	assert_v(
		simd_f64x2_nearest(v_u64(f64b(-2.5), f64b(4503599627370495.5))),
		v_u64(f64b(-2.0), f64b(4503599627370496.0)));
	assert_v(simd_f64x2_ceil(v_u64(f64b(-0.5), f64b(1.25))),
		 v_u64(0x8000000000000000u, f64b(2.0)));
	assert_v(simd_f64x2_floor(v_u64(f64b(-0.5), f64b(1.25))),
		 v_u64(f64b(-1.0), f64b(1.0)));
	assert_v(simd_f64x2_trunc(v_u64(f64b(-0.5), f64b(-1.25))),
		 v_u64(0x8000000000000000u, f64b(-1.0)));
	assert_v(simd_f32x4_abs(V32(0xffa00001u, 0x80000000u, 1, 0xbf800000u)),
		 V32(0x7fa00001u, 0, 1, 0x3f800000u));
	assert_v(simd_f32x4_neg(V32(0x7fa00001u, 0, 1, 0xbf800000u)),
		 V32(0xffa00001u, 0x80000000u, 0x80000001u, 0x3f800000u));
	assert_v(
		simd_f64x2_abs(v_u64(0xfff0000000000001u, 0x8000000000000000u)),
		v_u64(0x7ff0000000000001u, 0));
	assert_v(simd_f64x2_neg(v_u64(0x7ff0000000000001u, 0)),
		 v_u64(0xfff0000000000001u, 0x8000000000000000u));
	assert_v(simd_f64x2_sqrt(v_u64(f64b(4.0), 0x8000000000000000u)),
		 v_u64(f64b(2.0), 0x8000000000000000u));
	wasm_v128 q = simd_f32x4_div(V32(f32b(1.0f), f32b(-1.0f), 0, 0),
				     V32(0, 0, f32b(1.0f), 0x80000000u));
	ck_assert_uint_eq(q.lo, 0xff8000007f800000u);
	ck_assert_uint_eq((uint32_t)q.hi, 0);
	ck_assert_uint_eq((uint32_t)(q.hi >> 32) & 0x7fffffffu, 0x7fc00000u);
	assert_v(simd_f32x4_lt(V32(0x80000000u, 0x7fc00000u, f32b(1.0f), 0),
			       V32(0, 0x7fc00000u, f32b(2.0f), 0)),
		 V32(0, 0, 0xffffffffu, 0));
	assert_v(simd_f32x4_ne(V32(0x80000000u, 0x7fc00000u, 0, 0),
			       V32(0, 0x7fc00000u, 0, 0)),
		 V32(0, 0xffffffffu, 0, 0));
	assert_v(simd_f64x2_eq(v_u64(0x8000000000000000u, 0x7ff8000000000000u),
			       v_u64(0, 0x7ff8000000000000u)),
		 v_u64(UINT64_MAX, 0));
	assert_v(simd_f64x2_ge(v_u64(f64b(2.0), f64b(1.0)),
			       v_u64(f64b(2.0), f64b(3.0))),
		 v_u64(UINT64_MAX, 0));
}
END_TEST

START_TEST(float_lane_conversions)
{
	wasm_v128 v = V32(0x7fc00000u, f32b(3e9f), f32b(-3e9f), f32b(-1.9f));

	assert_v(simd_i32x4_trunc_sat_f32x4_s(v),
		 V32(0, 0x7fffffffu, 0x80000000u, 0xffffffffu));
	assert_v(simd_i32x4_trunc_sat_f32x4_u(v), V32(0, 3000000000u, 0, 0));
	assert_v(simd_i32x4_relaxed_trunc_f32x4_s(v),
		 simd_i32x4_trunc_sat_f32x4_s(v));
	assert_v(simd_i32x4_relaxed_trunc_f32x4_u(v),
		 simd_i32x4_trunc_sat_f32x4_u(v));
	assert_v(simd_i32x4_trunc_sat_f64x2_s_zero(
			 v_u64(f64b(-2147483648.9), f64b(1e10))),
		 V32(0x80000000u, 0x7fffffffu, 0, 0));
	assert_v(simd_i32x4_trunc_sat_f64x2_u_zero(
			 v_u64(f64b(4294967295.9), 0xfff8000000000000u)),
		 V32(0xffffffffu, 0, 0, 0));
	assert_v(simd_i32x4_relaxed_trunc_f64x2_u_zero(
			 v_u64(f64b(-1.0), f64b(7.9))),
		 V32(0, 7, 0, 0));
	assert_v(simd_i32x4_relaxed_trunc_f64x2_s_zero(
			 v_u64(f64b(-7.9), 0x7ff8000000000000u)),
		 V32((uint32_t)-7, 0, 0, 0));
	assert_v(simd_f32x4_convert_i32x4_s(
			 V32(0x80000000u, 16777217, 1, 0xffffffffu)),
		 V32(f32b(-0x1p31f), f32b(16777216.0f), f32b(1.0f),
		     f32b(-1.0f)));
	assert_v(
		simd_f32x4_convert_i32x4_u(
			V32(0xffffffffu, 0x80000081u, 16777219, 0)),
		V32(f32b(0x1p32f), f32b(0x1.000002p31f), f32b(16777220.0f), 0));
	assert_v(simd_f64x2_convert_low_i32x4_s(
			 V32(0xffffffffu, 0x80000000u, 9, 9)),
		 v_u64(f64b(-1.0), f64b(-2147483648.0)));
	assert_v(simd_f64x2_convert_low_i32x4_u(
			 V32(0xffffffffu, 0x80000000u, 9, 9)),
		 v_u64(f64b(4294967295.0), f64b(2147483648.0)));
	assert_v(simd_f32x4_demote_f64x2_zero(v_u64(
			 f64b(0x1.fffffefffffffp+127), 0x7ff8000000000000u)),
		 V32(f32b(0x1.fffffep+127f), 0x7fc00000u, 0, 0));
	assert_v(simd_f64x2_promote_low_f32x4(
			 V32(f32b(1.5f), 0xffc00000u, 7, 7)),
		 v_u64(f64b(1.5), 0xfff8000000000000u));
}
END_TEST

/* ---- relaxed ------------------------------------------------------------ */

START_TEST(relaxed_madd_is_unfused)
{
	float x = 0x1.000004p+0f, y = 0x1.0002p+0f, z = -0x1.000204p+0f;
	double dx = 0x1.00000004p+0, dy = 0x1.000002p+0, dz = -0x1.00000204p+0;

	assert_v(simd_f32x4_relaxed_madd(simd_f32x4_splat(x),
					 simd_f32x4_splat(y),
					 simd_f32x4_splat(z)),
		 simd_f32x4_splat(0.0f));
	assert_v(simd_f32x4_relaxed_nmadd(simd_f32x4_splat(-x),
					  simd_f32x4_splat(y),
					  simd_f32x4_splat(z)),
		 simd_f32x4_splat(0.0f));
	assert_v(simd_f64x2_relaxed_madd(simd_f64x2_splat(dx),
					 simd_f64x2_splat(dy),
					 simd_f64x2_splat(dz)),
		 simd_f64x2_splat(0.0));
	assert_v(simd_f64x2_relaxed_nmadd(simd_f64x2_splat(dx),
					  simd_f64x2_splat(-dy),
					  simd_f64x2_splat(dz)),
		 simd_f64x2_splat(0.0));
	/* Overflow of the product is not rescued by the addend (unfused). */
	assert_v(simd_f32x4_relaxed_madd(simd_f32x4_splat(0x1.fffffep+127f),
					 simd_f32x4_splat(2.0f),
					 simd_f32x4_splat(-0x1.fffffep+127f)),
		 simd_f32x4_splat(INFINITY));
	assert_v(simd_f32x4_relaxed_madd(simd_f32x4_splat(2.0f),
					 simd_f32x4_splat(3.0f),
					 simd_f32x4_splat(1.0f)),
		 simd_f32x4_splat(7.0f));
	assert_v(simd_f64x2_relaxed_nmadd(simd_f64x2_splat(2.0),
					  simd_f64x2_splat(3.0),
					  simd_f64x2_splat(1.0)),
		 simd_f64x2_splat(-5.0));
}
END_TEST

START_TEST(relaxed_dot_products)
{
	wasm_v128 a = V8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);

	assert_v(simd_i16x8_relaxed_dot_i8x16_i7x16_s(a, a),
		 V16(1, 13, 41, 85, 145, 221, 313, 421));
	assert_v(simd_i16x8_relaxed_dot_i8x16_i7x16_s(
			 V8(0x80, 0x80, 127, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			    0, 0),
			 V8(127, 127, 127, 127, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			    0)),
		 V16((uint16_t)-32512, 32258, 0, 0, 0, 0, 0, 0));
	/* b negative: the deterministic profile reads it as signed. */
	assert_v(simd_i16x8_relaxed_dot_i8x16_i7x16_s(
			 V8(0x80, 0x80, 0x80, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			    0, 0, 0),
			 V8(0x81, 0x81, 0x80, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			    0, 0, 0)),
		 V16(32512, 32767, 0, 0, 0, 0, 0, 0));
	assert_v(
		simd_i32x4_relaxed_dot_i8x16_i7x16_add_s(a, a, V32(0, 1, 2, 3)),
		V32(14, 127, 368, 737));
	assert_v(simd_i32x4_relaxed_dot_i8x16_i7x16_add_s(
			 V8(0x80, 0x80, 0x80, 0x80, 127, 127, 127, 127, 0, 0, 0,
			    0, 0, 0, 0, 0),
			 V8(127, 127, 127, 127, 127, 127, 127, 127, 0, 0, 0, 0,
			    0, 0, 0, 0),
			 V32(1, 2, 3, 4)),
		 V32((uint32_t)-65023, 64518, 3, 4));
	assert_v(simd_i32x4_relaxed_dot_i8x16_i7x16_add_s(
			 V8(0x80, 0x80, 0x80, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			    0, 0, 0),
			 V8(0x81, 0x81, 0x81, 0x81, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			    0, 0, 0),
			 V32(1, 2, 3, 4)),
		 V32(65025, 2, 3, 4));
}
END_TEST

/* ---- memory ------------------------------------------------------------- */

START_TEST(memory_loads_and_stores)
{
	uint8_t mem[40];

	for (unsigned i = 0; i < sizeof mem; i++)
		mem[i] = (uint8_t)(0x80 + i);
	/* Unaligned on purpose: p = mem + 1. */
	const uint8_t *p = mem + 1;
	assert_v(simd_v128_load(p),
		 V8(0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a,
		    0x8b, 0x8c, 0x8d, 0x8e, 0x8f, 0x90));
	assert_v(simd_v128_load8x8_s(p), V16(0xff81, 0xff82, 0xff83, 0xff84,
					     0xff85, 0xff86, 0xff87, 0xff88));
	assert_v(simd_v128_load8x8_u(p),
		 V16(0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88));
	assert_v(simd_v128_load16x4_s(p),
		 V32(0xffff8281u, 0xffff8483u, 0xffff8685u, 0xffff8887u));
	assert_v(simd_v128_load16x4_u(p),
		 V32(0x8281u, 0x8483u, 0x8685u, 0x8887u));
	assert_v(simd_v128_load32x2_s(p),
		 v_u64(0xffffffff84838281u, 0xffffffff88878685u));
	assert_v(simd_v128_load32x2_u(p), v_u64(0x84838281u, 0x88878685u));
	assert_v(simd_v128_load8_splat(p), simd_i8x16_splat(0x81));
	assert_v(simd_v128_load16_splat(p), simd_i16x8_splat(0x8281));
	assert_v(simd_v128_load32_splat(p), simd_i32x4_splat(0x84838281u));
	assert_v(simd_v128_load64_splat(p),
		 simd_i64x2_splat(0x8887868584838281u));
	assert_v(simd_v128_load32_zero(p), v_u64(0x84838281u, 0));
	assert_v(simd_v128_load64_zero(p), v_u64(0x8887868584838281u, 0));

	wasm_v128 z = v_u64(0, 0);
	assert_v(simd_v128_load8_lane(p, z, 15), v_u64(0, 0x8100000000000000u));
	assert_v(simd_v128_load16_lane(p, z, 3), v_u64(0x8281000000000000u, 0));
	assert_v(simd_v128_load32_lane(p, z, 2), v_u64(0, 0x84838281u));
	assert_v(simd_v128_load64_lane(p, z, 1), v_u64(0, 0x8887868584838281u));

	wasm_v128 v = V8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	memset(mem, 0xee, sizeof mem);
	simd_v128_store8_lane(mem + 1, v, 9);
	simd_v128_store16_lane(mem + 3, v, 7);
	simd_v128_store32_lane(mem + 6, v, 1);
	simd_v128_store64_lane(mem + 11, v, 0);
	simd_v128_store(mem + 20, v);
	static const uint8_t want[40] = {
		0xee, 9,  0xee, 14, 15, 0xee, 4,    5,	  6,	7,
		0xee, 0,  1,	2,  3,	4,    5,    6,	  7,	0xee,
		0,    1,  2,	3,  4,	5,    6,    7,	  8,	9,
		10,   11, 12,	13, 14, 15,   0xee, 0xee, 0xee, 0xee,
	};
	ck_assert_mem_eq(mem, want, sizeof want);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("simd");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, table_has_exact_subopcode_set);
	tcase_add_test(tc, table_names_unique_and_mem_sizes);
	tcase_add_test(tc, narrow_saturates);
	tcase_add_test(tc, q15mulr_rounds_and_saturates);
	tcase_add_test(tc, extmul_extend_extadd_dot);
	tcase_add_test(tc, int_lane_arith_wraps_and_saturates);
	tcase_add_test(tc, int_lane_compares);
	tcase_add_test(tc, shifts_take_count_mod_width);
	tcase_add_test(tc, swizzle_shuffle_lanes);
	tcase_add_test(tc, bitwise_and_reductions);
	tcase_add_test(tc, float_lane_min_max_pmin_pmax);
	tcase_add_test(tc, float_lane_rounding_and_sign);
	tcase_add_test(tc, float_lane_conversions);
	tcase_add_test(tc, relaxed_madd_is_unfused);
	tcase_add_test(tc, relaxed_dot_products);
	tcase_add_test(tc, memory_loads_and_stores);
	suite_add_tcase(s, tc);
	return s;
}
