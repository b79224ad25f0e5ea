/*
 * numeric.h - exact semantics of WebAssembly's scalar numeric instructions
 * (the functions named by ops_numeric.def).
 *
 * Contract:
 *  - C types: i32 = uint32_t, i64 = uint64_t, f32 = float, f64 = double.
 *    Signedness is applied inside each function.
 *  - No undefined behaviour for any input (UBSan clean): no signed
 *    overflow, no shift by >= the width, no out-of-range float-to-int
 *    cast, no reliance on the implementation-defined conversion of
 *    large unsigned values to signed types.
 *  - abs, neg, copysign and the reinterprets are pure bit operations:
 *    every NaN payload and sign survives.  Arithmetic on a NaN yields a
 *    quiet NaN (an "arithmetic NaN" in the spec's words); an invalid
 *    operation on non-NaNs yields the hardware's default NaN, whose
 *    payload is canonical.  Rounding follows the default IEEE mode
 *    (round to nearest, ties to even), which nothing in hostel changes.
 *  - Floats are computed in their own precision: x86-64 SSE evaluation
 *    (FLT_EVAL_METHOD 0) is required and checked below.  No FMA
 *    contraction is ever wanted.  No function here multiplies and adds
 *    (the one multiply-add, relaxed_madd in simd.h, rounds its product
 *    through a volatile), and clang also obeys the pragma below, so no
 *    -ffp-contract=off is needed, even for -march targets with FMA.
 *  - The compiler's constant folding does not model signalling NaNs (gcc
 *    folds x * 1.0 to x without -fsignaling-nans).  Operands that come
 *    from the wasm stack at run time are never folded; do not call these
 *    with C literals and expect a signalling NaN to be quieted.
 *  - Trapping functions return WASM_TRAP_NONE and write *out, or return
 *    the trap kind and leave *out untouched.
 */
#ifndef HOSTEL_WASM_NUMERIC_H
#define HOSTEL_WASM_NUMERIC_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "wasm/wasm.h"

/* 0 (and 16, which only widens _Float16) keep float and double exact. */
#if defined(FLT_EVAL_METHOD) &&                                                \
	(FLT_EVAL_METHOD == 1 || FLT_EVAL_METHOD == 2 || FLT_EVAL_METHOD < 0)
#error "hostel needs float/double evaluated in their own precision (SSE)"
#endif

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* ---- helpers ------------------------------------------------------------ */

static inline uint32_t num_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static inline float num_f32_from_bits(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static inline uint64_t num_f64_bits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof u);
	return u;
}

static inline double num_f64_from_bits(uint64_t u)
{
	double d;
	memcpy(&d, &u, sizeof d);
	return d;
}

/*
 * Two's-complement reading of a bit pattern, without the
 * implementation-defined unsigned-to-signed conversion; compilers turn
 * these into plain moves.
 */
static inline int32_t num_s32(uint32_t a)
{
	if (a <= (uint32_t)INT32_MAX)
		return (int32_t)a;
	return (int32_t)(a - 0x80000000u) - INT32_MAX - 1;
}

static inline int64_t num_s64(uint64_t a)
{
	if (a <= (uint64_t)INT64_MAX)
		return (int64_t)a;
	return (int64_t)(a - 0x8000000000000000u) - INT64_MAX - 1;
}

/* Arithmetic shift right of a two's-complement pattern; k < width. */
static inline uint32_t num_sar32(uint32_t a, unsigned k)
{
	uint32_t s = 0u - (a >> 31);
	return ((a ^ s) >> k) ^ s;
}

static inline uint64_t num_sar64(uint64_t a, unsigned k)
{
	uint64_t s = 0u - (a >> 63);
	return ((a ^ s) >> k) ^ s;
}

/* ---- i32 tests and comparisons ------------------------------------------ */

static inline uint32_t num_i32_eqz(uint32_t a)
{
	return a == 0;
}

static inline uint32_t num_i32_eq(uint32_t a, uint32_t b)
{
	return a == b;
}

static inline uint32_t num_i32_ne(uint32_t a, uint32_t b)
{
	return a != b;
}

static inline uint32_t num_i32_lt_s(uint32_t a, uint32_t b)
{
	return num_s32(a) < num_s32(b);
}

static inline uint32_t num_i32_lt_u(uint32_t a, uint32_t b)
{
	return a < b;
}

static inline uint32_t num_i32_gt_s(uint32_t a, uint32_t b)
{
	return num_s32(a) > num_s32(b);
}

static inline uint32_t num_i32_gt_u(uint32_t a, uint32_t b)
{
	return a > b;
}

static inline uint32_t num_i32_le_s(uint32_t a, uint32_t b)
{
	return num_s32(a) <= num_s32(b);
}

static inline uint32_t num_i32_le_u(uint32_t a, uint32_t b)
{
	return a <= b;
}

static inline uint32_t num_i32_ge_s(uint32_t a, uint32_t b)
{
	return num_s32(a) >= num_s32(b);
}

static inline uint32_t num_i32_ge_u(uint32_t a, uint32_t b)
{
	return a >= b;
}

/* ---- i64 tests and comparisons ------------------------------------------ */

static inline uint32_t num_i64_eqz(uint64_t a)
{
	return a == 0;
}

static inline uint32_t num_i64_eq(uint64_t a, uint64_t b)
{
	return a == b;
}

static inline uint32_t num_i64_ne(uint64_t a, uint64_t b)
{
	return a != b;
}

static inline uint32_t num_i64_lt_s(uint64_t a, uint64_t b)
{
	return num_s64(a) < num_s64(b);
}

static inline uint32_t num_i64_lt_u(uint64_t a, uint64_t b)
{
	return a < b;
}

static inline uint32_t num_i64_gt_s(uint64_t a, uint64_t b)
{
	return num_s64(a) > num_s64(b);
}

static inline uint32_t num_i64_gt_u(uint64_t a, uint64_t b)
{
	return a > b;
}

static inline uint32_t num_i64_le_s(uint64_t a, uint64_t b)
{
	return num_s64(a) <= num_s64(b);
}

static inline uint32_t num_i64_le_u(uint64_t a, uint64_t b)
{
	return a <= b;
}

static inline uint32_t num_i64_ge_s(uint64_t a, uint64_t b)
{
	return num_s64(a) >= num_s64(b);
}

static inline uint32_t num_i64_ge_u(uint64_t a, uint64_t b)
{
	return a >= b;
}

/* ---- float comparisons (false on NaN except ne) ------------------------- */

static inline uint32_t num_f32_eq(float a, float b)
{
	return a == b;
}

static inline uint32_t num_f32_ne(float a, float b)
{
	return a != b;
}

static inline uint32_t num_f32_lt(float a, float b)
{
	return a < b;
}

static inline uint32_t num_f32_gt(float a, float b)
{
	return a > b;
}

static inline uint32_t num_f32_le(float a, float b)
{
	return a <= b;
}

static inline uint32_t num_f32_ge(float a, float b)
{
	return a >= b;
}

static inline uint32_t num_f64_eq(double a, double b)
{
	return a == b;
}

static inline uint32_t num_f64_ne(double a, double b)
{
	return a != b;
}

static inline uint32_t num_f64_lt(double a, double b)
{
	return a < b;
}

static inline uint32_t num_f64_gt(double a, double b)
{
	return a > b;
}

static inline uint32_t num_f64_le(double a, double b)
{
	return a <= b;
}

static inline uint32_t num_f64_ge(double a, double b)
{
	return a >= b;
}

/* ---- i32 arithmetic ----------------------------------------------------- */

static inline uint32_t num_i32_clz(uint32_t a)
{
	return a ? (uint32_t)__builtin_clz(a) : 32;
}

static inline uint32_t num_i32_ctz(uint32_t a)
{
	return a ? (uint32_t)__builtin_ctz(a) : 32;
}

static inline uint32_t num_i32_popcnt(uint32_t a)
{
	return (uint32_t)__builtin_popcount(a);
}

static inline uint32_t num_i32_add(uint32_t a, uint32_t b)
{
	return a + b;
}

static inline uint32_t num_i32_sub(uint32_t a, uint32_t b)
{
	return a - b;
}

static inline uint32_t num_i32_mul(uint32_t a, uint32_t b)
{
	return a * b;
}

static inline wasm_trap_kind num_i32_div_s(uint32_t a, uint32_t b,
					   uint32_t *out)
{
	if (b == 0)
		return WASM_TRAP_INT_DIV_ZERO;
	if (a == 0x80000000u && b == 0xffffffffu)
		return WASM_TRAP_INT_OVERFLOW;
	*out = (uint32_t)(num_s32(a) / num_s32(b));
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i32_div_u(uint32_t a, uint32_t b,
					   uint32_t *out)
{
	if (b == 0)
		return WASM_TRAP_INT_DIV_ZERO;
	*out = a / b;
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i32_rem_s(uint32_t a, uint32_t b,
					   uint32_t *out)
{
	if (b == 0)
		return WASM_TRAP_INT_DIV_ZERO;
	/* x rem -1 is 0 for every x; INT_MIN % -1 would be UB in C. */
	if (b == 0xffffffffu)
		*out = 0;
	else
		*out = (uint32_t)(num_s32(a) % num_s32(b));
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i32_rem_u(uint32_t a, uint32_t b,
					   uint32_t *out)
{
	if (b == 0)
		return WASM_TRAP_INT_DIV_ZERO;
	*out = a % b;
	return WASM_TRAP_NONE;
}

static inline uint32_t num_i32_and(uint32_t a, uint32_t b)
{
	return a & b;
}

static inline uint32_t num_i32_or(uint32_t a, uint32_t b)
{
	return a | b;
}

static inline uint32_t num_i32_xor(uint32_t a, uint32_t b)
{
	return a ^ b;
}

static inline uint32_t num_i32_shl(uint32_t a, uint32_t b)
{
	return a << (b & 31);
}

static inline uint32_t num_i32_shr_s(uint32_t a, uint32_t b)
{
	return num_sar32(a, b & 31);
}

static inline uint32_t num_i32_shr_u(uint32_t a, uint32_t b)
{
	return a >> (b & 31);
}

static inline uint32_t num_i32_rotl(uint32_t a, uint32_t b)
{
	unsigned k = b & 31;
	return (a << k) | (a >> ((32 - k) & 31));
}

static inline uint32_t num_i32_rotr(uint32_t a, uint32_t b)
{
	unsigned k = b & 31;
	return (a >> k) | (a << ((32 - k) & 31));
}

/* ---- i64 arithmetic ----------------------------------------------------- */

static inline uint64_t num_i64_clz(uint64_t a)
{
	return a ? (uint64_t)__builtin_clzll(a) : 64;
}

static inline uint64_t num_i64_ctz(uint64_t a)
{
	return a ? (uint64_t)__builtin_ctzll(a) : 64;
}

static inline uint64_t num_i64_popcnt(uint64_t a)
{
	return (uint64_t)__builtin_popcountll(a);
}

static inline uint64_t num_i64_add(uint64_t a, uint64_t b)
{
	return a + b;
}

static inline uint64_t num_i64_sub(uint64_t a, uint64_t b)
{
	return a - b;
}

static inline uint64_t num_i64_mul(uint64_t a, uint64_t b)
{
	return a * b;
}

static inline wasm_trap_kind num_i64_div_s(uint64_t a, uint64_t b,
					   uint64_t *out)
{
	if (b == 0)
		return WASM_TRAP_INT_DIV_ZERO;
	if (a == 0x8000000000000000u && b == UINT64_MAX)
		return WASM_TRAP_INT_OVERFLOW;
	*out = (uint64_t)(num_s64(a) / num_s64(b));
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i64_div_u(uint64_t a, uint64_t b,
					   uint64_t *out)
{
	if (b == 0)
		return WASM_TRAP_INT_DIV_ZERO;
	*out = a / b;
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i64_rem_s(uint64_t a, uint64_t b,
					   uint64_t *out)
{
	if (b == 0)
		return WASM_TRAP_INT_DIV_ZERO;
	if (b == UINT64_MAX)
		*out = 0;
	else
		*out = (uint64_t)(num_s64(a) % num_s64(b));
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i64_rem_u(uint64_t a, uint64_t b,
					   uint64_t *out)
{
	if (b == 0)
		return WASM_TRAP_INT_DIV_ZERO;
	*out = a % b;
	return WASM_TRAP_NONE;
}

static inline uint64_t num_i64_and(uint64_t a, uint64_t b)
{
	return a & b;
}

static inline uint64_t num_i64_or(uint64_t a, uint64_t b)
{
	return a | b;
}

static inline uint64_t num_i64_xor(uint64_t a, uint64_t b)
{
	return a ^ b;
}

static inline uint64_t num_i64_shl(uint64_t a, uint64_t b)
{
	return a << (b & 63);
}

static inline uint64_t num_i64_shr_s(uint64_t a, uint64_t b)
{
	return num_sar64(a, (unsigned)(b & 63));
}

static inline uint64_t num_i64_shr_u(uint64_t a, uint64_t b)
{
	return a >> (b & 63);
}

static inline uint64_t num_i64_rotl(uint64_t a, uint64_t b)
{
	unsigned k = (unsigned)(b & 63);
	return (a << k) | (a >> ((64 - k) & 63));
}

static inline uint64_t num_i64_rotr(uint64_t a, uint64_t b)
{
	unsigned k = (unsigned)(b & 63);
	return (a >> k) | (a << ((64 - k) & 63));
}

/* ---- f32 arithmetic ----------------------------------------------------- */

static inline float num_f32_abs(float a)
{
	return num_f32_from_bits(num_f32_bits(a) & 0x7fffffffu);
}

static inline float num_f32_neg(float a)
{
	return num_f32_from_bits(num_f32_bits(a) ^ 0x80000000u);
}

static inline float num_f32_copysign(float a, float b)
{
	return num_f32_from_bits((num_f32_bits(a) & 0x7fffffffu) |
				 (num_f32_bits(b) & 0x80000000u));
}

/*
 * The rounding functions answer a NaN with a + a, a quiet NaN with the
 * same payload: libm is not required to quiet signalling NaNs.
 */
static inline float num_f32_ceil(float a)
{
	return isnan(a) ? a + a : ceilf(a);
}

static inline float num_f32_floor(float a)
{
	return isnan(a) ? a + a : floorf(a);
}

static inline float num_f32_trunc(float a)
{
	return isnan(a) ? a + a : truncf(a);
}

/* Ties to even; keeps the sign of zero (nearest(-0.5) is -0). */
static inline float num_f32_nearest(float a)
{
	return isnan(a) ? a + a : nearbyintf(a);
}

static inline float num_f32_sqrt(float a)
{
	return sqrtf(a);
}

static inline float num_f32_add(float a, float b)
{
	return a + b;
}

static inline float num_f32_sub(float a, float b)
{
	return a - b;
}

static inline float num_f32_mul(float a, float b)
{
	return a * b;
}

static inline float num_f32_div(float a, float b)
{
	return a / b;
}

/* NaN if either is NaN (quieted by the addition); -0 is below +0. */
static inline float num_f32_min(float a, float b)
{
	if (isnan(a) || isnan(b))
		return a + b;
	if (a == b)
		return num_f32_from_bits(num_f32_bits(a) | num_f32_bits(b));
	return a < b ? a : b;
}

static inline float num_f32_max(float a, float b)
{
	if (isnan(a) || isnan(b))
		return a + b;
	if (a == b)
		return num_f32_from_bits(num_f32_bits(a) & num_f32_bits(b));
	return a > b ? a : b;
}

/* ---- f64 arithmetic ----------------------------------------------------- */

static inline double num_f64_abs(double a)
{
	return num_f64_from_bits(num_f64_bits(a) & 0x7fffffffffffffffu);
}

static inline double num_f64_neg(double a)
{
	return num_f64_from_bits(num_f64_bits(a) ^ 0x8000000000000000u);
}

static inline double num_f64_copysign(double a, double b)
{
	return num_f64_from_bits((num_f64_bits(a) & 0x7fffffffffffffffu) |
				 (num_f64_bits(b) & 0x8000000000000000u));
}

static inline double num_f64_ceil(double a)
{
	return isnan(a) ? a + a : ceil(a);
}

static inline double num_f64_floor(double a)
{
	return isnan(a) ? a + a : floor(a);
}

static inline double num_f64_trunc(double a)
{
	return isnan(a) ? a + a : trunc(a);
}

static inline double num_f64_nearest(double a)
{
	return isnan(a) ? a + a : nearbyint(a);
}

static inline double num_f64_sqrt(double a)
{
	return sqrt(a);
}

static inline double num_f64_add(double a, double b)
{
	return a + b;
}

static inline double num_f64_sub(double a, double b)
{
	return a - b;
}

static inline double num_f64_mul(double a, double b)
{
	return a * b;
}

static inline double num_f64_div(double a, double b)
{
	return a / b;
}

static inline double num_f64_min(double a, double b)
{
	if (isnan(a) || isnan(b))
		return a + b;
	if (a == b)
		return num_f64_from_bits(num_f64_bits(a) | num_f64_bits(b));
	return a < b ? a : b;
}

static inline double num_f64_max(double a, double b)
{
	if (isnan(a) || isnan(b))
		return a + b;
	if (a == b)
		return num_f64_from_bits(num_f64_bits(a) & num_f64_bits(b));
	return a > b ? a : b;
}

/* ---- integer conversions ------------------------------------------------ */

static inline uint32_t num_i32_wrap_i64(uint64_t a)
{
	return (uint32_t)a;
}

static inline uint64_t num_i64_extend_i32_s(uint32_t a)
{
	return (uint64_t)num_s32(a);
}

static inline uint64_t num_i64_extend_i32_u(uint32_t a)
{
	return a;
}

/* Sign extension by the xor/subtract identity: no signed conversions. */
static inline uint32_t num_i32_extend8_s(uint32_t a)
{
	return ((a & 0xffu) ^ 0x80u) - 0x80u;
}

static inline uint32_t num_i32_extend16_s(uint32_t a)
{
	return ((a & 0xffffu) ^ 0x8000u) - 0x8000u;
}

static inline uint64_t num_i64_extend8_s(uint64_t a)
{
	return ((a & 0xffu) ^ 0x80u) - 0x80u;
}

static inline uint64_t num_i64_extend16_s(uint64_t a)
{
	return ((a & 0xffffu) ^ 0x8000u) - 0x8000u;
}

static inline uint64_t num_i64_extend32_s(uint64_t a)
{
	return ((a & 0xffffffffu) ^ 0x80000000u) - 0x80000000u;
}

/* ---- float to integer, trapping ----------------------------------------- */

/*
 * The accepted ranges are the open intervals (min - 1, max + 1) of the
 * values whose truncation fits, written with constants that are exact in
 * the source type: -2^31 and 2^31 are exact in f32, -2^31 - 1 is exact in
 * f64, and so on.  A NaN fails every comparison, so it is tested first.
 */
static inline wasm_trap_kind num_i32_trunc_f32_s(float a, uint32_t *out)
{
	if (isnan(a))
		return WASM_TRAP_INVALID_CONVERSION;
	if (!(a >= -2147483648.0f && a < 2147483648.0f))
		return WASM_TRAP_INT_OVERFLOW;
	*out = (uint32_t)(int32_t)a;
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i32_trunc_f32_u(float a, uint32_t *out)
{
	if (isnan(a))
		return WASM_TRAP_INVALID_CONVERSION;
	if (!(a > -1.0f && a < 4294967296.0f))
		return WASM_TRAP_INT_OVERFLOW;
	*out = (uint32_t)a;
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i32_trunc_f64_s(double a, uint32_t *out)
{
	if (isnan(a))
		return WASM_TRAP_INVALID_CONVERSION;
	if (!(a > -2147483649.0 && a < 2147483648.0))
		return WASM_TRAP_INT_OVERFLOW;
	*out = (uint32_t)(int32_t)a;
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i32_trunc_f64_u(double a, uint32_t *out)
{
	if (isnan(a))
		return WASM_TRAP_INVALID_CONVERSION;
	if (!(a > -1.0 && a < 4294967296.0))
		return WASM_TRAP_INT_OVERFLOW;
	*out = (uint32_t)a;
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i64_trunc_f32_s(float a, uint64_t *out)
{
	if (isnan(a))
		return WASM_TRAP_INVALID_CONVERSION;
	if (!(a >= -9223372036854775808.0f && a < 9223372036854775808.0f))
		return WASM_TRAP_INT_OVERFLOW;
	*out = (uint64_t)(int64_t)a;
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i64_trunc_f32_u(float a, uint64_t *out)
{
	if (isnan(a))
		return WASM_TRAP_INVALID_CONVERSION;
	if (!(a > -1.0f && a < 18446744073709551616.0f))
		return WASM_TRAP_INT_OVERFLOW;
	*out = (uint64_t)a;
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i64_trunc_f64_s(double a, uint64_t *out)
{
	if (isnan(a))
		return WASM_TRAP_INVALID_CONVERSION;
	if (!(a >= -9223372036854775808.0 && a < 9223372036854775808.0))
		return WASM_TRAP_INT_OVERFLOW;
	*out = (uint64_t)(int64_t)a;
	return WASM_TRAP_NONE;
}

static inline wasm_trap_kind num_i64_trunc_f64_u(double a, uint64_t *out)
{
	if (isnan(a))
		return WASM_TRAP_INVALID_CONVERSION;
	if (!(a > -1.0 && a < 18446744073709551616.0))
		return WASM_TRAP_INT_OVERFLOW;
	*out = (uint64_t)a;
	return WASM_TRAP_NONE;
}

/* ---- float to integer, saturating (0xfc 0..7) --------------------------- */

static inline uint32_t num_i32_trunc_sat_f32_s(float a)
{
	if (isnan(a))
		return 0;
	if (a < -2147483648.0f)
		return 0x80000000u;
	if (a >= 2147483648.0f)
		return 0x7fffffffu;
	return (uint32_t)(int32_t)a;
}

static inline uint32_t num_i32_trunc_sat_f32_u(float a)
{
	if (isnan(a) || a <= -1.0f)
		return 0;
	if (a >= 4294967296.0f)
		return UINT32_MAX;
	return (uint32_t)a;
}

static inline uint32_t num_i32_trunc_sat_f64_s(double a)
{
	if (isnan(a))
		return 0;
	if (a <= -2147483649.0)
		return 0x80000000u;
	if (a >= 2147483648.0)
		return 0x7fffffffu;
	return (uint32_t)(int32_t)a;
}

static inline uint32_t num_i32_trunc_sat_f64_u(double a)
{
	if (isnan(a) || a <= -1.0)
		return 0;
	if (a >= 4294967296.0)
		return UINT32_MAX;
	return (uint32_t)a;
}

static inline uint64_t num_i64_trunc_sat_f32_s(float a)
{
	if (isnan(a))
		return 0;
	if (a < -9223372036854775808.0f)
		return 0x8000000000000000u;
	if (a >= 9223372036854775808.0f)
		return 0x7fffffffffffffffu;
	return (uint64_t)(int64_t)a;
}

static inline uint64_t num_i64_trunc_sat_f32_u(float a)
{
	if (isnan(a) || a <= -1.0f)
		return 0;
	if (a >= 18446744073709551616.0f)
		return UINT64_MAX;
	return (uint64_t)a;
}

static inline uint64_t num_i64_trunc_sat_f64_s(double a)
{
	if (isnan(a))
		return 0;
	if (a < -9223372036854775808.0)
		return 0x8000000000000000u;
	if (a >= 9223372036854775808.0)
		return 0x7fffffffffffffffu;
	return (uint64_t)(int64_t)a;
}

static inline uint64_t num_i64_trunc_sat_f64_u(double a)
{
	if (isnan(a) || a <= -1.0)
		return 0;
	if (a >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)a;
}

/* ---- integer to float --------------------------------------------------- */

/*
 * Each conversion rounds once, to nearest even.  i32 sources go through
 * int64_t, which both f32 and f64 conversions take exactly-then-round.
 * A u64 at or above 2^63 is halved first with the dropped bit ORed back
 * in as a sticky bit: the halved value has far more than 24 (53)
 * significant bits, so the sticky bit decides ties exactly as the full
 * value would, and doubling is exact.  Going through double first
 * (u64 -> f64 -> f32) would round twice and is wrong, e.g. for
 * 0x8000008000000001.
 */
static inline float num_f32_convert_i32_s(uint32_t a)
{
	return (float)num_s32(a);
}

static inline float num_f32_convert_i32_u(uint32_t a)
{
	return (float)(int64_t)a;
}

/*
 * u64 -> f32 rounded once, to nearest even.  Not (float)(int64_t): that
 * is one cvtsi2ss on x86-64, but emulators (Valgrind) perform it through
 * a double and round twice.  Keep 31 significant bits with the dropped
 * ones folded into the lowest (round to odd: 31 > 24 + 1 bits, so the one
 * rounding left, int32 -> float, gives the correctly rounded result), then
 * scale by a power of two, which is exact.
 */
static inline float num_f32_from_u64(uint64_t u)
{
	int shift;
	uint32_t v;

	if (u >> 31 == 0)
		return (float)(int32_t)u;
	shift = 64 - __builtin_clzll(u) - 31;
	v = (uint32_t)(u >> shift) | ((u & ((1ull << shift) - 1)) != 0);
	return (float)(int32_t)v * (float)(1ull << shift);
}

static inline float num_f32_convert_i64_s(uint64_t a)
{
	if (num_s64(a) >= 0)
		return num_f32_from_u64(a);
	return -num_f32_from_u64(0 - a);
}

static inline float num_f32_convert_i64_u(uint64_t a)
{
	return num_f32_from_u64(a);
}

static inline double num_f64_convert_i32_s(uint32_t a)
{
	return (double)num_s32(a);
}

static inline double num_f64_convert_i32_u(uint32_t a)
{
	return (double)a;
}

static inline double num_f64_convert_i64_s(uint64_t a)
{
	return (double)num_s64(a);
}

static inline double num_f64_convert_i64_u(uint64_t a)
{
	double d;

	if (a <= (uint64_t)INT64_MAX)
		return (double)(int64_t)a;
	d = (double)(int64_t)((a >> 1) | (a & 1));
	return d + d;
}

/* ---- float to float ----------------------------------------------------- */

/*
 * NaNs are converted by hand so the result does not depend on the FPU:
 * quiet, same sign, payload's high bits kept.  A canonical NaN stays
 * canonical; any other NaN becomes an arithmetic NaN, as the spec asks.
 */
static inline float num_f32_demote_f64(double a)
{
	if (isnan(a)) {
		uint64_t u = num_f64_bits(a);
		uint32_t sign = (uint32_t)(u >> 32) & 0x80000000u;
		uint32_t payload = (uint32_t)(u >> 29) & 0x003fffffu;
		return num_f32_from_bits(sign | 0x7fc00000u | payload);
	}
	return (float)a;
}

static inline double num_f64_promote_f32(float a)
{
	if (isnan(a)) {
		uint32_t u = num_f32_bits(a);
		uint64_t sign = (uint64_t)(u & 0x80000000u) << 32;
		uint64_t payload = (uint64_t)(u & 0x003fffffu) << 29;
		return num_f64_from_bits(sign | 0x7ff8000000000000u | payload);
	}
	return (double)a;
}

/* ---- reinterpretations -------------------------------------------------- */

static inline uint32_t num_i32_reinterpret_f32(float a)
{
	return num_f32_bits(a);
}

static inline uint64_t num_i64_reinterpret_f64(double a)
{
	return num_f64_bits(a);
}

static inline float num_f32_reinterpret_i32(uint32_t a)
{
	return num_f32_from_bits(a);
}

static inline double num_f64_reinterpret_i64(uint64_t a)
{
	return num_f64_from_bits(a);
}

#endif
