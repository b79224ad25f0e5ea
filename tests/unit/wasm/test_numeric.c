/*
 * test_numeric.c - the scalar numeric table (ops_numeric.def) and the
 * exact semantics behind it (numeric.h): completeness of the table,
 * function signatures, and the edge cases the spec tests hinge on
 * (trap boundaries, rounding, NaN bits, signed zeros).
 */
#include <stdint.h>
#include <string.h>

#include "wasm/numeric.h"
#include "testmain.h"

/*
 * Bits in, bits out: every float comparison below is on bit patterns.
 * Inputs pass through a volatile so the compiler cannot fold the
 * operations at build time: its constant folding does not model
 * signalling NaNs (it folds sNaN * 1.0 to the sNaN), the hardware does.
 */
static float f32(uint32_t u)
{
	volatile float f = num_f32_from_bits(u);
	return f;
}

static uint32_t b32(float f)
{
	return num_f32_bits(f);
}

static double f64(uint64_t u)
{
	volatile double d = num_f64_from_bits(u);
	return d;
}

static uint64_t b64(double d)
{
	return num_f64_bits(d);
}

static int is_canonical32(uint32_t u)
{
	return (u & 0x7fffffffu) == 0x7fc00000u;
}

static int is_arithmetic32(uint32_t u)
{
	return (u & 0x7fc00000u) == 0x7fc00000u;
}

static int is_canonical64(uint64_t u)
{
	return (u & 0x7fffffffffffffffu) == 0x7ff8000000000000u;
}

static int is_arithmetic64(uint64_t u)
{
	return (u & 0x7ff8000000000000u) == 0x7ff8000000000000u;
}

/* ---- the table ---------------------------------------------------------- */

typedef uint32_t T_I32;
typedef uint64_t T_I64;
typedef float T_F32;
typedef double T_F64;

/*
 * Expanding the table into typed function-pointer initialisers makes the
 * compiler check every fn against the signature its row promises.
 */
#define NUMOP_UN(op, name, R, A, fn)  T_##R (*name)(T_##A);
#define NUMOP_BIN(op, name, R, A, fn) T_##R (*name)(T_##A, T_##A);
#define NUMOP_UN_TRAP(op, name, R, A, fn)                                      \
	wasm_trap_kind (*name)(T_##A, T_##R *);
#define NUMOP_BIN_TRAP(op, name, R, A, fn)                                     \
	wasm_trap_kind (*name)(T_##A, T_##A, T_##R *);
#define NUMOP_FC_UN(op, name, R, A, fn) T_##R (*name)(T_##A);
static const struct {
#include "wasm/ops_numeric.def"
} signatures_typecheck = {
#define NUMOP_UN(op, name, R, A, fn)	   fn,
#define NUMOP_BIN(op, name, R, A, fn)	   fn,
#define NUMOP_UN_TRAP(op, name, R, A, fn)  fn,
#define NUMOP_BIN_TRAP(op, name, R, A, fn) fn,
#define NUMOP_FC_UN(op, name, R, A, fn)	   fn,
#include "wasm/ops_numeric.def"
};

START_TEST(table_is_complete)
{
	unsigned seen[256] = {0}, seen_fc[8] = {0}, total = 0;
	const char *names[] = {
#define NUMOP_UN(op, name, R, A, fn)	   #name,
#define NUMOP_BIN(op, name, R, A, fn)	   #name,
#define NUMOP_UN_TRAP(op, name, R, A, fn)  #name,
#define NUMOP_BIN_TRAP(op, name, R, A, fn) #name,
#define NUMOP_FC_UN(op, name, R, A, fn)	   #name,
#include "wasm/ops_numeric.def"
	};

	(void)signatures_typecheck;
#define NUMOP_UN(op, name, R, A, fn)	   seen[op]++, total++;
#define NUMOP_BIN(op, name, R, A, fn)	   seen[op]++, total++;
#define NUMOP_UN_TRAP(op, name, R, A, fn)  seen[op]++, total++;
#define NUMOP_BIN_TRAP(op, name, R, A, fn) seen[op]++, total++;
#define NUMOP_FC_UN(op, name, R, A, fn)	   seen_fc[op]++, total++;
#include "wasm/ops_numeric.def"

	for (unsigned op = 0; op < 256; op++)
		ck_assert_uint_eq(seen[op], op >= 0x45 && op <= 0xc4);
	for (unsigned op = 0; op < 8; op++)
		ck_assert_uint_eq(seen_fc[op], 1);
	ck_assert_uint_eq(total, 0xc4 - 0x45 + 1 + 8);
	ck_assert_uint_eq(sizeof names / sizeof names[0], total);
	for (unsigned i = 0; i < total; i++)
		for (unsigned j = i + 1; j < total; j++)
			ck_assert_str_ne(names[i], names[j]);
}
END_TEST

/* An includer that defines nothing gets nothing, and may include again. */
START_TEST(table_defaults_expand_to_nothing)
{
	int n = 0;
#define NUMOP_BIN_TRAP(op, name, R, A, fn) n++;
#include "wasm/ops_numeric.def"
	ck_assert_int_eq(n, 8);
	n = 0;
#define NUMOP_FC_UN(op, name, R, A, fn) n++;
#include "wasm/ops_numeric.def"
	ck_assert_int_eq(n, 8);
	n = 0;
#define NUMOP_UN_TRAP(op, name, R, A, fn) n++;
#include "wasm/ops_numeric.def"
	ck_assert_int_eq(n, 8);
}
END_TEST

/* ---- integers ----------------------------------------------------------- */

START_TEST(int_div_rem_traps)
{
	uint32_t r = 7;
	uint64_t q = 7;

	ck_assert_int_eq(num_i32_div_s(1, 0, &r), WASM_TRAP_INT_DIV_ZERO);
	ck_assert_int_eq(num_i32_div_u(1, 0, &r), WASM_TRAP_INT_DIV_ZERO);
	ck_assert_int_eq(num_i32_rem_s(1, 0, &r), WASM_TRAP_INT_DIV_ZERO);
	ck_assert_int_eq(num_i32_rem_u(1, 0, &r), WASM_TRAP_INT_DIV_ZERO);
	ck_assert_int_eq(num_i32_div_s(0x80000000u, 0xffffffffu, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_uint_eq(r, 7); /* untouched on trap */
	ck_assert_int_eq(num_i32_rem_s(0x80000000u, 0xffffffffu, &r),
			 WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0);
	ck_assert_int_eq(num_i32_div_s(0x80000000u, 2, &r), WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0xc0000000u);
	num_i32_div_s((uint32_t)-7, 2, &r);
	ck_assert_uint_eq(r, (uint32_t)-3); /* truncates toward zero */
	num_i32_rem_s((uint32_t)-7, 2, &r);
	ck_assert_uint_eq(r, (uint32_t)-1); /* sign of the dividend */
	num_i32_rem_s(7, (uint32_t)-2, &r);
	ck_assert_uint_eq(r, 1);
	num_i32_div_u(0xffffffffu, 2, &r);
	ck_assert_uint_eq(r, 0x7fffffffu);
	num_i32_rem_u(0x80000000u, 0xffffffffu, &r);
	ck_assert_uint_eq(r, 0x80000000u);

	ck_assert_int_eq(num_i64_div_s(1, 0, &q), WASM_TRAP_INT_DIV_ZERO);
	ck_assert_int_eq(num_i64_rem_u(1, 0, &q), WASM_TRAP_INT_DIV_ZERO);
	ck_assert_int_eq(num_i64_div_s(0x8000000000000000u, UINT64_MAX, &q),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i64_rem_s(0x8000000000000000u, UINT64_MAX, &q),
			 WASM_TRAP_NONE);
	ck_assert_uint_eq(q, 0);
	num_i64_div_s((uint64_t)-7, 2, &q);
	ck_assert_uint_eq(q, (uint64_t)-3);
	num_i64_rem_s((uint64_t)-7, 2, &q);
	ck_assert_uint_eq(q, (uint64_t)-1);
	num_i64_div_u(UINT64_MAX, 2, &q);
	ck_assert_uint_eq(q, 0x7fffffffffffffffu);
}
END_TEST

START_TEST(int_shifts_and_rotates_mod_width)
{
	ck_assert_uint_eq(num_i32_shl(1, 32), 1);
	ck_assert_uint_eq(num_i32_shl(1, 33), 2);
	ck_assert_uint_eq(num_i32_shl(1, 31), 0x80000000u);
	ck_assert_uint_eq(num_i32_shr_s(0x80000000u, 31), 0xffffffffu);
	ck_assert_uint_eq(num_i32_shr_s(0x80000000u, 32), 0x80000000u);
	ck_assert_uint_eq(num_i32_shr_s(0x40000000u, 30), 1);
	ck_assert_uint_eq(num_i32_shr_s(0xfffffff0u, 0xffffffffu), 0xffffffffu);
	ck_assert_uint_eq(num_i32_shr_u(0x80000000u, 31), 1);
	ck_assert_uint_eq(num_i32_shr_u(0x80000000u, 63), 1);
	ck_assert_uint_eq(num_i32_rotl(0x80000001u, 1), 3);
	ck_assert_uint_eq(num_i32_rotl(0x12345678u, 0), 0x12345678u);
	ck_assert_uint_eq(num_i32_rotl(0x12345678u, 32), 0x12345678u);
	ck_assert_uint_eq(num_i32_rotr(1, 1), 0x80000000u);
	ck_assert_uint_eq(num_i32_rotr(0xabcd9876u, 0x8000000cu), 0x876abcd9u);

	ck_assert_uint_eq(num_i64_shl(1, 64), 1);
	ck_assert_uint_eq(num_i64_shl(1, 65), 2);
	ck_assert_uint_eq(num_i64_shr_s(0x8000000000000000u, 63), UINT64_MAX);
	ck_assert_uint_eq(num_i64_shr_s(0x8000000000000000u, 64),
			  0x8000000000000000u);
	ck_assert_uint_eq(num_i64_shr_u(0x8000000000000000u, 127), 1);
	ck_assert_uint_eq(num_i64_rotl(0x8000000000000001u, 1), 3);
	ck_assert_uint_eq(num_i64_rotl(5, 64), 5);
	ck_assert_uint_eq(num_i64_rotr(1, 1), 0x8000000000000000u);
	ck_assert_uint_eq(num_i64_rotr(0xabd1234ef567809cu, 63),
			  0x57a2469deacf0139u);
}
END_TEST

START_TEST(int_bit_counts)
{
	ck_assert_uint_eq(num_i32_clz(0), 32);
	ck_assert_uint_eq(num_i32_ctz(0), 32);
	ck_assert_uint_eq(num_i32_popcnt(0), 0);
	ck_assert_uint_eq(num_i32_clz(0x80000000u), 0);
	ck_assert_uint_eq(num_i32_clz(1), 31);
	ck_assert_uint_eq(num_i32_ctz(0x80000000u), 31);
	ck_assert_uint_eq(num_i32_popcnt(0xffffffffu), 32);
	ck_assert_uint_eq(num_i32_popcnt(0x55555555u), 16);
	ck_assert_uint_eq(num_i64_clz(0), 64);
	ck_assert_uint_eq(num_i64_ctz(0), 64);
	ck_assert_uint_eq(num_i64_clz(1), 63);
	ck_assert_uint_eq(num_i64_ctz(0x8000000000000000u), 63);
	ck_assert_uint_eq(num_i64_popcnt(UINT64_MAX), 64);
	ck_assert_uint_eq(num_i64_popcnt(0x8000800080008000u), 4);
}
END_TEST

START_TEST(int_compare_and_extend)
{
	ck_assert_uint_eq(num_i32_lt_s(0x80000000u, 0x7fffffffu), 1);
	ck_assert_uint_eq(num_i32_lt_u(0x80000000u, 0x7fffffffu), 0);
	ck_assert_uint_eq(num_i32_ge_s(0xffffffffu, 0), 0);
	ck_assert_uint_eq(num_i32_ge_u(0xffffffffu, 0), 1);
	ck_assert_uint_eq(num_i64_lt_s(0x8000000000000000u, 0), 1);
	ck_assert_uint_eq(num_i64_gt_u(0x8000000000000000u, 0), 1);
	ck_assert_uint_eq(num_i32_eqz(0), 1);
	ck_assert_uint_eq(num_i64_eqz(0x100000000u), 0);

	ck_assert_uint_eq(num_i32_extend8_s(0x7f), 0x7f);
	ck_assert_uint_eq(num_i32_extend8_s(0x80), 0xffffff80u);
	ck_assert_uint_eq(num_i32_extend8_s(0x12345680u), 0xffffff80u);
	ck_assert_uint_eq(num_i32_extend16_s(0x8000), 0xffff8000u);
	ck_assert_uint_eq(num_i32_extend16_s(0xabcd7fffu), 0x7fff);
	ck_assert_uint_eq(num_i64_extend8_s(0x80), 0xffffffffffffff80u);
	ck_assert_uint_eq(num_i64_extend16_s(0x8000), 0xffffffffffff8000u);
	ck_assert_uint_eq(num_i64_extend32_s(0x80000000u), 0xffffffff80000000u);
	ck_assert_uint_eq(num_i64_extend32_s(0x123456787fffffffu), 0x7fffffffu);
	ck_assert_uint_eq(num_i64_extend_i32_s(0xffffffffu), UINT64_MAX);
	ck_assert_uint_eq(num_i64_extend_i32_u(0xffffffffu), 0xffffffffu);
	ck_assert_uint_eq(num_i32_wrap_i64(0x123456789u), 0x23456789u);
}
END_TEST

/* ---- floats: bits, rounding, min/max ------------------------------------ */

START_TEST(float_sign_ops_keep_nan_bits)
{
	/* Signalling NaNs with payloads must pass through unchanged. */
	ck_assert_uint_eq(b32(num_f32_abs(f32(0xffa00001u))), 0x7fa00001u);
	ck_assert_uint_eq(b32(num_f32_neg(f32(0x7fa00001u))), 0xffa00001u);
	ck_assert_uint_eq(b32(num_f32_neg(f32(0))), 0x80000000u);
	ck_assert_uint_eq(b32(num_f32_copysign(f32(0x7fa00001u), -1.0f)),
			  0xffa00001u);
	ck_assert_uint_eq(b32(num_f32_copysign(2.0f, f32(0xffc00000u))),
			  b32(-2.0f));
	ck_assert_uint_eq(b64(num_f64_abs(f64(0xfff4000000000001u))),
			  0x7ff4000000000001u);
	ck_assert_uint_eq(b64(num_f64_neg(f64(0x7ff4000000000001u))),
			  0xfff4000000000001u);
	ck_assert_uint_eq(b64(num_f64_copysign(f64(0x7ff4000000000001u), -0.0)),
			  0xfff4000000000001u);
	ck_assert_uint_eq(num_i32_reinterpret_f32(f32(0x7f800001u)),
			  0x7f800001u);
	ck_assert_uint_eq(b32(num_f32_reinterpret_i32(0xff800001u)),
			  0xff800001u);
	ck_assert_uint_eq(num_i64_reinterpret_f64(f64(0x7ff0000000000001u)),
			  0x7ff0000000000001u);
	ck_assert_uint_eq(b64(num_f64_reinterpret_i64(0xfff0000000000001u)),
			  0xfff0000000000001u);
}
END_TEST

START_TEST(float_nearest_ties_to_even)
{
	ck_assert_uint_eq(b32(num_f32_nearest(0.5f)), b32(0.0f));
	ck_assert_uint_eq(b32(num_f32_nearest(1.5f)), b32(2.0f));
	ck_assert_uint_eq(b32(num_f32_nearest(2.5f)), b32(2.0f));
	ck_assert_uint_eq(b32(num_f32_nearest(3.5f)), b32(4.0f));
	ck_assert_uint_eq(b32(num_f32_nearest(-0.5f)), 0x80000000u);
	ck_assert_uint_eq(b32(num_f32_nearest(-1.5f)), b32(-2.0f));
	ck_assert_uint_eq(b32(num_f32_nearest(-0.0f)), 0x80000000u);
	ck_assert_uint_eq(b32(num_f32_nearest(f32(1))), 0); /* 0x1p-149 */
	ck_assert_uint_eq(b32(num_f32_nearest(f32(0x80000001u))), 0x80000000u);
	ck_assert_uint_eq(b32(num_f32_nearest(4194303.5f)), b32(4194304.0f));
	ck_assert_uint_eq(b32(num_f32_nearest(8388609.0f)), b32(8388609.0f));
	ck_assert_uint_eq(b32(num_f32_nearest(0x1.fffffep+127f)),
			  b32(0x1.fffffep+127f));
	ck_assert_uint_eq(b32(num_f32_nearest(f32(0xff800000u))), 0xff800000u);
	ck_assert_uint_eq(b64(num_f64_nearest(0.5)), b64(0.0));
	ck_assert_uint_eq(b64(num_f64_nearest(2.5)), b64(2.0));
	ck_assert_uint_eq(b64(num_f64_nearest(-0.5)), 0x8000000000000000u);
	ck_assert_uint_eq(b64(num_f64_nearest(4503599627370495.5)),
			  b64(4503599627370496.0));
	ck_assert_uint_eq(b64(num_f64_nearest(-4503599627370495.5)),
			  b64(-4503599627370496.0));
	ck_assert_uint_eq(b64(num_f64_nearest(9007199254740993.0)),
			  b64(9007199254740993.0));
	ck_assert_uint_eq(b64(num_f64_nearest(0x1p-1074)), 0);
}
END_TEST

START_TEST(float_ceil_floor_trunc_sqrt)
{
	ck_assert_uint_eq(b32(num_f32_ceil(-0.5f)), 0x80000000u);
	ck_assert_uint_eq(b32(num_f32_ceil(0.5f)), b32(1.0f));
	ck_assert_uint_eq(b32(num_f32_ceil(f32(1))), b32(1.0f));
	ck_assert_uint_eq(b32(num_f32_floor(-0.5f)), b32(-1.0f));
	ck_assert_uint_eq(b32(num_f32_floor(-0.0f)), 0x80000000u);
	ck_assert_uint_eq(b32(num_f32_floor(f32(0x80000001u))), b32(-1.0f));
	ck_assert_uint_eq(b32(num_f32_trunc(-1.5f)), b32(-1.0f));
	ck_assert_uint_eq(b32(num_f32_trunc(-0.5f)), 0x80000000u);
	ck_assert_uint_eq(b64(num_f64_ceil(-0.5)), 0x8000000000000000u);
	ck_assert_uint_eq(b64(num_f64_floor(0x1.fffffffffffffp+51)),
			  b64(0x1.ffffffffffffep+51));
	ck_assert_uint_eq(b64(num_f64_trunc(-0x1.fffffffffffffp+51)),
			  b64(-0x1.ffffffffffffep+51));
	ck_assert_uint_eq(b32(num_f32_sqrt(-0.0f)), 0x80000000u);
	ck_assert(is_canonical32(b32(num_f32_sqrt(-1.0f))));
	ck_assert_uint_eq(b64(num_f64_sqrt(0x1p-1074)), b64(0x1p-537));

	/* NaN in: arithmetic (quiet) NaN out, payload kept. */
	ck_assert_uint_eq(b32(num_f32_ceil(f32(0x7fa00000u))), 0x7fe00000u);
	ck_assert_uint_eq(b32(num_f32_floor(f32(0xff800001u))), 0xffc00001u);
	ck_assert_uint_eq(b32(num_f32_trunc(f32(0x7fc00000u))), 0x7fc00000u);
	ck_assert(is_arithmetic32(b32(num_f32_nearest(f32(0x7f800001u)))));
	ck_assert(is_arithmetic32(b32(num_f32_sqrt(f32(0x7f800001u)))));
	ck_assert(is_arithmetic64(
		b64(num_f64_nearest(f64(0x7ff0000000000001u)))));
	ck_assert(
		is_arithmetic64(b64(num_f64_floor(f64(0xfff0000000000001u)))));
}
END_TEST

START_TEST(float_min_max_zeros_and_nans)
{
	ck_assert_uint_eq(b32(num_f32_min(0.0f, -0.0f)), 0x80000000u);
	ck_assert_uint_eq(b32(num_f32_min(-0.0f, 0.0f)), 0x80000000u);
	ck_assert_uint_eq(b32(num_f32_max(0.0f, -0.0f)), 0);
	ck_assert_uint_eq(b32(num_f32_max(-0.0f, 0.0f)), 0);
	ck_assert_uint_eq(b32(num_f32_min(-0.0f, -0.0f)), 0x80000000u);
	ck_assert_uint_eq(b32(num_f32_min(-INFINITY, 1.0f)), b32(-INFINITY));
	ck_assert_uint_eq(b32(num_f32_max(2.0f, 1.0f)), b32(2.0f));
	ck_assert(is_canonical32(b32(num_f32_min(f32(0x7fc00000u), 1.0f))));
	ck_assert(is_canonical32(b32(num_f32_max(1.0f, f32(0xffc00000u)))));
	ck_assert(is_arithmetic32(b32(num_f32_min(f32(0x7fa00000u), 0.0f))));
	ck_assert(
		is_arithmetic32(b32(num_f32_max(-INFINITY, f32(0xff800001u)))));
	ck_assert_uint_eq(b64(num_f64_min(0.0, -0.0)), 0x8000000000000000u);
	ck_assert_uint_eq(b64(num_f64_max(-0.0, 0.0)), 0);
	ck_assert(is_canonical64(
		b64(num_f64_min(f64(0x7ff8000000000000u), -INFINITY))));
	ck_assert(is_arithmetic64(
		b64(num_f64_max(f64(0x7ff0000000000001u), 1.0))));
}
END_TEST

START_TEST(float_arith_nans)
{
	ck_assert(is_canonical32(b32(num_f32_add(INFINITY, -INFINITY))));
	ck_assert(is_canonical32(b32(num_f32_div(0.0f, 0.0f))));
	ck_assert(is_canonical32(b32(num_f32_mul(0.0f, INFINITY))));
	ck_assert(is_arithmetic32(b32(num_f32_add(f32(0x7f800001u), 1.0f))));
	ck_assert(is_canonical64(b64(num_f64_sub(INFINITY, INFINITY))));
	/* The 1.0 must be opaque too: gcc folds x * 1.0 to x. */
	ck_assert(is_arithmetic64(b64(num_f64_mul(f64(0xfff0000000000001u),
						  f64(0x3ff0000000000000u)))));
	ck_assert_uint_eq(num_f32_eq(f32(0x7fc00000u), f32(0x7fc00000u)), 0);
	ck_assert_uint_eq(num_f32_ne(f32(0x7fc00000u), f32(0x7fc00000u)), 1);
	ck_assert_uint_eq(num_f32_eq(0.0f, -0.0f), 1);
	ck_assert_uint_eq(num_f64_lt(-0.0, 0.0), 0);
	ck_assert_uint_eq(num_f64_ge(f64(0x7ff8000000000000u), 1.0), 0);
}
END_TEST

/* ---- float -> int ------------------------------------------------------- */

struct trunc32_case {
	uint32_t in;
	wasm_trap_kind trap;
	uint32_t out;
};

START_TEST(trunc_f32_to_i32_boundaries)
{
	static const struct trunc32_case s[] = {
		{0xcf000000u, WASM_TRAP_NONE, 0x80000000u}, /* -2^31 */
		{0xcf000001u, WASM_TRAP_INT_OVERFLOW, 0},   /* below */
		{0x4effffffu, WASM_TRAP_NONE, 2147483520u}, /* max < 2^31 */
		{0x4f000000u, WASM_TRAP_INT_OVERFLOW, 0},   /* 2^31 */
		{0xbf7fffffu, WASM_TRAP_NONE, 0},	    /* -0.99999994 */
		{0xbfc00000u, WASM_TRAP_NONE, 0xffffffffu}, /* -1.5 */
		{0x7f800000u, WASM_TRAP_INT_OVERFLOW, 0},
		{0xff800000u, WASM_TRAP_INT_OVERFLOW, 0},
		{0x7fc00000u, WASM_TRAP_INVALID_CONVERSION, 0},
		{0xffa00000u, WASM_TRAP_INVALID_CONVERSION, 0},
	};
	static const struct trunc32_case u[] = {
		{0xbf7fffffu, WASM_TRAP_NONE, 0},	  /* -0.99999994 */
		{0xbf800000u, WASM_TRAP_INT_OVERFLOW, 0}, /* -1 */
		{0x4f7fffffu, WASM_TRAP_NONE, 4294967040u},
		{0x4f800000u, WASM_TRAP_INT_OVERFLOW, 0}, /* 2^32 */
		{0x4f000000u, WASM_TRAP_NONE, 0x80000000u},
		{0x80000001u, WASM_TRAP_NONE, 0},
		{0x7f800001u, WASM_TRAP_INVALID_CONVERSION, 0},
	};
	for (unsigned i = 0; i < sizeof s / sizeof s[0]; i++) {
		uint32_t r = 0;
		ck_assert_int_eq(num_i32_trunc_f32_s(f32(s[i].in), &r),
				 s[i].trap);
		ck_assert_uint_eq(r, s[i].out);
	}
	for (unsigned i = 0; i < sizeof u / sizeof u[0]; i++) {
		uint32_t r = 0;
		ck_assert_int_eq(num_i32_trunc_f32_u(f32(u[i].in), &r),
				 u[i].trap);
		ck_assert_uint_eq(r, u[i].out);
	}
}
END_TEST

START_TEST(trunc_f64_to_i32_boundaries)
{
	uint32_t r;

	ck_assert_int_eq(num_i32_trunc_f64_s(-2147483648.9, &r),
			 WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0x80000000u);
	ck_assert_int_eq(num_i32_trunc_f64_s(-2147483649.0, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i32_trunc_f64_s(2147483647.9, &r), WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0x7fffffffu);
	ck_assert_int_eq(num_i32_trunc_f64_s(2147483648.0, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i32_trunc_f64_s(f64(0x7ff8000000000000u), &r),
			 WASM_TRAP_INVALID_CONVERSION);
	ck_assert_int_eq(num_i32_trunc_f64_u(-0.9999999999999999, &r),
			 WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0);
	ck_assert_int_eq(num_i32_trunc_f64_u(-1.0, &r), WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i32_trunc_f64_u(4294967295.9, &r), WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0xffffffffu);
	ck_assert_int_eq(num_i32_trunc_f64_u(4294967296.0, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i32_trunc_f64_u(f64(0xfff0000000000001u), &r),
			 WASM_TRAP_INVALID_CONVERSION);
	ck_assert_int_eq(num_i32_trunc_f64_u(1e16, &r), WASM_TRAP_INT_OVERFLOW);
}
END_TEST

START_TEST(trunc_to_i64_boundaries)
{
	uint64_t r;

	ck_assert_int_eq(num_i64_trunc_f32_s(-0x1p63f, &r), WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0x8000000000000000u);
	ck_assert_int_eq(num_i64_trunc_f32_s(-0x1.000002p63f, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i64_trunc_f32_s(0x1.fffffep62f, &r),
			 WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 9223371487098961920u);
	ck_assert_int_eq(num_i64_trunc_f32_s(0x1p63f, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i64_trunc_f32_u(0x1.fffffep63f, &r),
			 WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 18446742974197923840u);
	ck_assert_int_eq(num_i64_trunc_f32_u(0x1p64f, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i64_trunc_f32_u(-0x1.fffffep-1f, &r),
			 WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0);
	ck_assert_int_eq(num_i64_trunc_f32_u(-1.0f, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i64_trunc_f32_u(f32(0x7fc00000u), &r),
			 WASM_TRAP_INVALID_CONVERSION);

	ck_assert_int_eq(num_i64_trunc_f64_s(-0x1p63, &r), WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0x8000000000000000u);
	ck_assert_int_eq(num_i64_trunc_f64_s(-0x1.0000000000001p63, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i64_trunc_f64_s(0x1.fffffffffffffp62, &r),
			 WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 9223372036854774784u);
	ck_assert_int_eq(num_i64_trunc_f64_s(0x1p63, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i64_trunc_f64_u(0x1.fffffffffffffp63, &r),
			 WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0xfffffffffffff800u);
	ck_assert_int_eq(num_i64_trunc_f64_u(0x1p64, &r),
			 WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i64_trunc_f64_u(-0.9999999999999999, &r),
			 WASM_TRAP_NONE);
	ck_assert_uint_eq(r, 0);
	ck_assert_int_eq(num_i64_trunc_f64_u(-1.0, &r), WASM_TRAP_INT_OVERFLOW);
	ck_assert_int_eq(num_i64_trunc_f64_s(f64(0xfff8000000000000u), &r),
			 WASM_TRAP_INVALID_CONVERSION);
	ck_assert_int_eq(num_i64_trunc_f64_s(INFINITY, &r),
			 WASM_TRAP_INT_OVERFLOW);
}
END_TEST

START_TEST(trunc_sat_clamps)
{
	ck_assert_uint_eq(num_i32_trunc_sat_f32_s(f32(0x7fc00000u)), 0);
	ck_assert_uint_eq(num_i32_trunc_sat_f32_s(f32(0xffc00000u)), 0);
	ck_assert_uint_eq(num_i32_trunc_sat_f32_s(0x1p31f), 0x7fffffffu);
	ck_assert_uint_eq(num_i32_trunc_sat_f32_s(-0x1.000002p31f),
			  0x80000000u);
	ck_assert_uint_eq(num_i32_trunc_sat_f32_s(-0x1p31f), 0x80000000u);
	ck_assert_uint_eq(num_i32_trunc_sat_f32_s(-INFINITY), 0x80000000u);
	ck_assert_uint_eq(num_i32_trunc_sat_f32_s(-1.5f), 0xffffffffu);
	ck_assert_uint_eq(num_i32_trunc_sat_f32_u(-1.0f), 0);
	ck_assert_uint_eq(num_i32_trunc_sat_f32_u(-0.9f), 0);
	ck_assert_uint_eq(num_i32_trunc_sat_f32_u(0x1p32f), 0xffffffffu);
	ck_assert_uint_eq(num_i32_trunc_sat_f32_u(0x1.fffffep31f), 4294967040u);
	ck_assert_uint_eq(num_i32_trunc_sat_f64_s(-2147483649.0), 0x80000000u);
	ck_assert_uint_eq(num_i32_trunc_sat_f64_s(-2147483648.9), 0x80000000u);
	ck_assert_uint_eq(num_i32_trunc_sat_f64_s(2147483647.9), 0x7fffffffu);
	ck_assert_uint_eq(num_i32_trunc_sat_f64_s(1e300), 0x7fffffffu);
	ck_assert_uint_eq(num_i32_trunc_sat_f64_u(4294967296.0), 0xffffffffu);
	ck_assert_uint_eq(num_i32_trunc_sat_f64_u(-INFINITY), 0);
	ck_assert_uint_eq(num_i32_trunc_sat_f64_u(f64(0x7ff4000000000000u)), 0);
	ck_assert_uint_eq(num_i64_trunc_sat_f32_s(0x1p63f),
			  0x7fffffffffffffffu);
	ck_assert_uint_eq(num_i64_trunc_sat_f32_s(-0x1p63f),
			  0x8000000000000000u);
	ck_assert_uint_eq(num_i64_trunc_sat_f32_s(-INFINITY),
			  0x8000000000000000u);
	ck_assert_uint_eq(num_i64_trunc_sat_f32_u(0x1p64f), UINT64_MAX);
	ck_assert_uint_eq(num_i64_trunc_sat_f32_u(-5.0f), 0);
	ck_assert_uint_eq(num_i64_trunc_sat_f64_s(0x1.fffffffffffffp62),
			  9223372036854774784u);
	ck_assert_uint_eq(num_i64_trunc_sat_f64_s(0x1p63), 0x7fffffffffffffffu);
	ck_assert_uint_eq(num_i64_trunc_sat_f64_s(f64(0x7ff8000000000000u)), 0);
	ck_assert_uint_eq(num_i64_trunc_sat_f64_u(0x1p64), UINT64_MAX);
	ck_assert_uint_eq(num_i64_trunc_sat_f64_u(0x1.fffffffffffffp63),
			  0xfffffffffffff800u);
	ck_assert_uint_eq(num_i64_trunc_sat_f64_u(-0.5), 0);
}
END_TEST

/* ---- int -> float, float -> float --------------------------------------- */

START_TEST(convert_rounds_once)
{
	/* u64 -> f32: going through f64 would round twice. */
	ck_assert_uint_eq(b32(num_f32_convert_i64_u(0x8000008000000001u)),
			  b32(0x1.000002p+63f));
	ck_assert_uint_eq(b32(num_f32_convert_i64_u(0x8000008000000000u)),
			  b32(0x1p+63f));
	ck_assert_uint_eq(b32(num_f32_convert_i64_u(0x8000018000000000u)),
			  b32(0x1.000004p+63f));
	ck_assert_uint_eq(b32(num_f32_convert_i64_u(0xfffffe8000000001u)),
			  b32(0x1.fffffep+63f));
	ck_assert_uint_eq(b32(num_f32_convert_i64_u(UINT64_MAX)), b32(0x1p64f));
	ck_assert_uint_eq(b32(num_f32_convert_i64_u(0x7fffffbfffffffffu)),
			  b32(0x1.fffffep+62f));
	ck_assert_uint_eq(b32(num_f32_convert_i64_u(0x0020000020000001u)),
			  b32(0x1.000002p+53f));
	ck_assert_uint_eq(b32(num_f32_convert_i64_s(0x0020000020000001u)),
			  b32(0x1.000002p+53f));
	ck_assert_uint_eq(b32(num_f32_convert_i64_s(0xffdfffffdfffffffu)),
			  b32(-0x1.000002p+53f));
	ck_assert_uint_eq(b32(num_f32_convert_i64_s(0x8000004000000001u)),
			  b32(-0x1.fffffep+62f));
	ck_assert_uint_eq(b32(num_f32_convert_i64_s(0x8000000000000000u)),
			  b32(-0x1p63f));
	ck_assert_uint_eq(b32(num_f32_convert_i32_s(16777217)),
			  b32(16777216.0f));
	ck_assert_uint_eq(b32(num_f32_convert_i32_s(16777219)),
			  b32(16777220.0f));
	ck_assert_uint_eq(b32(num_f32_convert_i32_s(0x80000000u)),
			  b32(-0x1p31f));
	ck_assert_uint_eq(b32(num_f32_convert_i32_u(0xffffffffu)),
			  b32(0x1p32f));
	ck_assert_uint_eq(b32(num_f32_convert_i32_u(0x80000080u)),
			  b32(0x1p31f));
	ck_assert_uint_eq(b32(num_f32_convert_i32_u(0x80000081u)),
			  b32(0x1.000002p31f));
	ck_assert_uint_eq(b64(num_f64_convert_i64_u(0x8000000000000400u)),
			  b64(0x1p63));
	ck_assert_uint_eq(b64(num_f64_convert_i64_u(0x8000000000000401u)),
			  b64(0x1.0000000000001p63));
	ck_assert_uint_eq(b64(num_f64_convert_i64_u(0xfffffffffffff401u)),
			  b64(0x1.fffffffffffffp63));
	ck_assert_uint_eq(b64(num_f64_convert_i64_u(UINT64_MAX)), b64(0x1p64));
	ck_assert_uint_eq(b64(num_f64_convert_i64_s(9007199254740993u)),
			  b64(9007199254740992.0));
	ck_assert_uint_eq(
		b64(num_f64_convert_i64_s((uint64_t)-9007199254740995)),
		b64(-9007199254740996.0));
	ck_assert_uint_eq(b64(num_f64_convert_i32_s(0xffffffffu)), b64(-1.0));
	ck_assert_uint_eq(b64(num_f64_convert_i32_u(0xffffffffu)),
			  b64(4294967295.0));
}
END_TEST

START_TEST(demote_promote)
{
	ck_assert_uint_eq(b32(num_f32_demote_f64(-0.0)), 0x80000000u);
	ck_assert_uint_eq(b32(num_f32_demote_f64(0x1p-1074)), 0);
	ck_assert_uint_eq(b32(num_f32_demote_f64(0x1.fffffe0000000p-127)),
			  b32(0x1p-126f));
	ck_assert_uint_eq(b32(num_f32_demote_f64(0x1.fffffdfffffffp-127)),
			  b32(0x1.fffffcp-127f));
	ck_assert_uint_eq(b32(num_f32_demote_f64(0x1p-149)), 1);
	ck_assert_uint_eq(b32(num_f32_demote_f64(0x1.fffffefffffffp+127)),
			  b32(0x1.fffffep+127f));
	ck_assert_uint_eq(b32(num_f32_demote_f64(0x1.ffffffp+127)),
			  0x7f800000u);
	ck_assert_uint_eq(b32(num_f32_demote_f64(0x1.0000010000000p+0)),
			  b32(1.0f)); /* tie to even */
	ck_assert_uint_eq(b32(num_f32_demote_f64(0x1.0000030000000p+0)),
			  b32(0x1.000004p+0f));
	/* NaNs: canonical stays canonical, others stay quiet, sign kept. */
	ck_assert_uint_eq(b32(num_f32_demote_f64(f64(0x7ff8000000000000u))),
			  0x7fc00000u);
	ck_assert_uint_eq(b32(num_f32_demote_f64(f64(0xfff8000000000000u))),
			  0xffc00000u);
	ck_assert_uint_eq(b32(num_f32_demote_f64(f64(0x7ff4000000000000u))),
			  0x7fe00000u);
	ck_assert(is_arithmetic32(
		b32(num_f32_demote_f64(f64(0x7ff0000000000001u)))));

	ck_assert_uint_eq(b64(num_f64_promote_f32(f32(1))), b64(0x1p-149));
	ck_assert_uint_eq(b64(num_f64_promote_f32(-0.0f)), 0x8000000000000000u);
	ck_assert_uint_eq(b64(num_f64_promote_f32(f32(0x7fc00000u))),
			  0x7ff8000000000000u);
	ck_assert_uint_eq(b64(num_f64_promote_f32(f32(0x7fa00000u))),
			  0x7ffc000000000000u);
	ck_assert_uint_eq(b64(num_f64_promote_f32(f32(0xff800001u))),
			  0xfff8000020000000u);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("numeric");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, table_is_complete);
	tcase_add_test(tc, table_defaults_expand_to_nothing);
	tcase_add_test(tc, int_div_rem_traps);
	tcase_add_test(tc, int_shifts_and_rotates_mod_width);
	tcase_add_test(tc, int_bit_counts);
	tcase_add_test(tc, int_compare_and_extend);
	tcase_add_test(tc, float_sign_ops_keep_nan_bits);
	tcase_add_test(tc, float_nearest_ties_to_even);
	tcase_add_test(tc, float_ceil_floor_trunc_sqrt);
	tcase_add_test(tc, float_min_max_zeros_and_nans);
	tcase_add_test(tc, float_arith_nans);
	tcase_add_test(tc, trunc_f32_to_i32_boundaries);
	tcase_add_test(tc, trunc_f64_to_i32_boundaries);
	tcase_add_test(tc, trunc_to_i64_boundaries);
	tcase_add_test(tc, trunc_sat_clamps);
	tcase_add_test(tc, convert_rounds_once);
	tcase_add_test(tc, demote_promote);
	suite_add_tcase(s, tc);
	return s;
}
