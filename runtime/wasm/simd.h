/*
 * simd.h - exact semantics of the SIMD128 and relaxed SIMD instructions
 * (the functions named by ops_simd.def).
 *
 * Contract:
 *  - A wasm_v128 holds 16 bytes, lo = bytes 0..7, in little-endian lane
 *    order (the host is little-endian; configure insists).  Lanes are
 *    reached through the simd_lanes union after a memcpy, never through
 *    casts of pointers.
 *  - Integer lanes are computed in unsigned arithmetic wide enough that
 *    nothing overflows (never a uint8_t/uint16_t promoted to int and
 *    multiplied); signed views go through the two's-complement helpers
 *    of numeric.h.  No undefined behaviour for any input.
 *  - Float lanes follow the scalar rules of numeric.h exactly (NaN
 *    propagation, -0 < +0 in min/max, ties-to-even nearest, saturating
 *    truncation, correctly rounded conversions).  Lanes that are only
 *    moved (abs, neg, pmin, pmax, splat, lanes) move bits, so NaN
 *    payloads survive.
 *  - Relaxed SIMD implements the spec's deterministic profile (see
 *    ops_simd.def).  For the relaxed dot products the i16 pair sums
 *    saturate, as i16x8 dot instructions on real hardware do.
 *  - Memory functions get a pointer to the first byte of an access the
 *    engine has already bounds-checked; they may be unaligned.
 */
#ifndef HOSTEL_WASM_SIMD_H
#define HOSTEL_WASM_SIMD_H

#include <stdint.h>
#include <string.h>

#include "wasm/numeric.h"
#include "wasm/wasm.h"

_Static_assert(sizeof(wasm_v128) == 16, "wasm_v128 must be 16 bytes");

typedef union simd_lanes {
	uint8_t u8[16];
	uint16_t u16[8];
	uint32_t u32[4];
	uint64_t u64[2];
} simd_lanes;

static inline simd_lanes simd_lanes_of(wasm_v128 v)
{
	simd_lanes l;
	memcpy(&l, &v, sizeof l);
	return l;
}

static inline wasm_v128 simd_v128_of(simd_lanes l)
{
	wasm_v128 v;
	memcpy(&v, &l, sizeof v);
	return v;
}

static inline wasm_v128 simd_v128_make(uint64_t lo, uint64_t hi)
{
	wasm_v128 v;
	v.lo = lo;
	v.hi = hi;
	return v;
}

/* Signed views of lane bit patterns. */
static inline int32_t simd_sx8(uint32_t x)
{
	return num_s32(num_i32_extend8_s(x));
}

static inline int32_t simd_sx16(uint32_t x)
{
	return num_s32(num_i32_extend16_s(x));
}

/* Floor division by 2^k of a signed value (arithmetic shift, defined). */
static inline int32_t simd_asr(int32_t v, unsigned k)
{
	return v >= 0 ? v >> k : -1 - ((-1 - v) >> k);
}

static inline uint32_t simd_sat_s8(int32_t v)
{
	return (uint32_t)(v < -128 ? -128 : v > 127 ? 127 : v);
}

static inline uint32_t simd_sat_u8(int32_t v)
{
	return (uint32_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

static inline uint32_t simd_sat_s16(int32_t v)
{
	return (uint32_t)(v < -32768 ? -32768 : v > 32767 ? 32767 : v);
}

static inline uint32_t simd_sat_u16(int32_t v)
{
	return (uint32_t)(v < 0 ? 0 : v > 65535 ? 65535 : v);
}

/*
 * Lane-wise function generators.  In `expr`, x and y are the lanes of a
 * and b as the unsigned type T (uint32_t for 8/16/32-bit lanes, so no
 * narrow type is ever promoted to int); the result is truncated to the
 * lane width.  MASK(c) is the all-ones lane when c holds.
 */
#define SIMD_MASK(T, c) ((T)0 - (T)((c) != 0))

#define SIMD_MAP1(name, F, N, T, expr)                                         \
	static inline wasm_v128 simd_##name(wasm_v128 va)                      \
	{                                                                      \
		simd_lanes a = simd_lanes_of(va), r;                           \
		for (int i = 0; i < (N); i++) {                                \
			T x = a.F[i];                                          \
			r.F[i] = (expr);                                       \
		}                                                              \
		return simd_v128_of(r);                                        \
	}

#define SIMD_MAP2(name, F, N, T, expr)                                         \
	static inline wasm_v128 simd_##name(wasm_v128 va, wasm_v128 vb)        \
	{                                                                      \
		simd_lanes a = simd_lanes_of(va), b = simd_lanes_of(vb), r;    \
		for (int i = 0; i < (N); i++) {                                \
			T x = a.F[i], y = b.F[i];                              \
			r.F[i] = (expr);                                       \
		}                                                              \
		return simd_v128_of(r);                                        \
	}

/* Shift count is taken modulo the lane width, as the spec says. */
#define SIMD_SHIFT(name, F, N, T, W, expr)                                     \
	static inline wasm_v128 simd_##name(wasm_v128 va, uint32_t s)          \
	{                                                                      \
		simd_lanes a = simd_lanes_of(va), r;                           \
		unsigned k = s & ((W)-1);                                      \
		for (int i = 0; i < (N); i++) {                                \
			T x = a.F[i];                                          \
			r.F[i] = (expr);                                       \
		}                                                              \
		return simd_v128_of(r);                                        \
	}

/* ---- memory ------------------------------------------------------------- */

static inline wasm_v128 simd_v128_load(const uint8_t *p)
{
	wasm_v128 v;
	memcpy(&v, p, sizeof v);
	return v;
}

static inline void simd_v128_store(uint8_t *p, wasm_v128 v)
{
	memcpy(p, &v, sizeof v);
}

static inline wasm_v128 simd_v128_load8x8_s(const uint8_t *p)
{
	simd_lanes r;
	for (int i = 0; i < 8; i++)
		r.u16[i] = (uint16_t)num_i32_extend8_s(p[i]);
	return simd_v128_of(r);
}

static inline wasm_v128 simd_v128_load8x8_u(const uint8_t *p)
{
	simd_lanes r;
	for (int i = 0; i < 8; i++)
		r.u16[i] = p[i];
	return simd_v128_of(r);
}

static inline wasm_v128 simd_v128_load16x4_s(const uint8_t *p)
{
	simd_lanes r;
	uint16_t x[4];
	memcpy(x, p, sizeof x);
	for (int i = 0; i < 4; i++)
		r.u32[i] = num_i32_extend16_s(x[i]);
	return simd_v128_of(r);
}

static inline wasm_v128 simd_v128_load16x4_u(const uint8_t *p)
{
	simd_lanes r;
	uint16_t x[4];
	memcpy(x, p, sizeof x);
	for (int i = 0; i < 4; i++)
		r.u32[i] = x[i];
	return simd_v128_of(r);
}

static inline wasm_v128 simd_v128_load32x2_s(const uint8_t *p)
{
	uint32_t x[2];
	memcpy(x, p, sizeof x);
	return simd_v128_make(num_i64_extend_i32_s(x[0]),
			      num_i64_extend_i32_s(x[1]));
}

static inline wasm_v128 simd_v128_load32x2_u(const uint8_t *p)
{
	uint32_t x[2];
	memcpy(x, p, sizeof x);
	return simd_v128_make(x[0], x[1]);
}

static inline wasm_v128 simd_v128_load8_splat(const uint8_t *p)
{
	uint64_t v = (uint64_t)p[0] * 0x0101010101010101u;
	return simd_v128_make(v, v);
}

static inline wasm_v128 simd_v128_load16_splat(const uint8_t *p)
{
	uint16_t x;
	memcpy(&x, p, sizeof x);
	uint64_t v = (uint64_t)x * 0x0001000100010001u;
	return simd_v128_make(v, v);
}

static inline wasm_v128 simd_v128_load32_splat(const uint8_t *p)
{
	uint32_t x;
	memcpy(&x, p, sizeof x);
	uint64_t v = (uint64_t)x * 0x0000000100000001u;
	return simd_v128_make(v, v);
}

static inline wasm_v128 simd_v128_load64_splat(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, sizeof x);
	return simd_v128_make(x, x);
}

static inline wasm_v128 simd_v128_load32_zero(const uint8_t *p)
{
	uint32_t x;
	memcpy(&x, p, sizeof x);
	return simd_v128_make(x, 0);
}

static inline wasm_v128 simd_v128_load64_zero(const uint8_t *p)
{
	uint64_t x;
	memcpy(&x, p, sizeof x);
	return simd_v128_make(x, 0);
}

/* Lane indices are masked: a validated lane is never changed by that. */
#define SIMD_LOAD_LANE(bits, bytes, n)                                         \
	static inline wasm_v128 simd_v128_load##bits##_lane(                   \
		const uint8_t *p, wasm_v128 v, uint32_t lane)                  \
	{                                                                      \
		simd_lanes l = simd_lanes_of(v);                               \
		memcpy(&l.u8[(lane & ((n)-1)) * (bytes)], p, (bytes));         \
		return simd_v128_of(l);                                        \
	}                                                                      \
	static inline void simd_v128_store##bits##_lane(                       \
		uint8_t *p, wasm_v128 v, uint32_t lane)                        \
	{                                                                      \
		simd_lanes l = simd_lanes_of(v);                               \
		memcpy(p, &l.u8[(lane & ((n)-1)) * (bytes)], (bytes));         \
	}

SIMD_LOAD_LANE(8, 1, 16)
SIMD_LOAD_LANE(16, 2, 8)
SIMD_LOAD_LANE(32, 4, 4)
SIMD_LOAD_LANE(64, 8, 2)

/* ---- shuffles and swizzles ---------------------------------------------- */

/* i8x16.shuffle: each immediate lane < 32 picks from a (0..15) or b. */
static inline wasm_v128 simd_i8x16_shuffle(wasm_v128 va, wasm_v128 vb,
					   const uint8_t lanes[16])
{
	simd_lanes a = simd_lanes_of(va), b = simd_lanes_of(vb), r;
	for (int i = 0; i < 16; i++) {
		unsigned k = lanes[i] & 31u;
		r.u8[i] = k < 16 ? a.u8[k] : b.u8[k - 16];
	}
	return simd_v128_of(r);
}

/* Indices >= 16 (including "negative" ones) select 0. */
static inline wasm_v128 simd_i8x16_swizzle(wasm_v128 va, wasm_v128 vb)
{
	simd_lanes a = simd_lanes_of(va), b = simd_lanes_of(vb), r;
	for (int i = 0; i < 16; i++)
		r.u8[i] = b.u8[i] < 16 ? a.u8[b.u8[i]] : 0;
	return simd_v128_of(r);
}

static inline wasm_v128 simd_i8x16_relaxed_swizzle(wasm_v128 a, wasm_v128 b)
{
	return simd_i8x16_swizzle(a, b);
}

/* ---- splats ------------------------------------------------------------- */

static inline wasm_v128 simd_i8x16_splat(uint32_t x)
{
	uint64_t v = (uint64_t)(x & 0xffu) * 0x0101010101010101u;
	return simd_v128_make(v, v);
}

static inline wasm_v128 simd_i16x8_splat(uint32_t x)
{
	uint64_t v = (uint64_t)(x & 0xffffu) * 0x0001000100010001u;
	return simd_v128_make(v, v);
}

static inline wasm_v128 simd_i32x4_splat(uint32_t x)
{
	uint64_t v = (uint64_t)x * 0x0000000100000001u;
	return simd_v128_make(v, v);
}

static inline wasm_v128 simd_i64x2_splat(uint64_t x)
{
	return simd_v128_make(x, x);
}

static inline wasm_v128 simd_f32x4_splat(float x)
{
	return simd_i32x4_splat(num_f32_bits(x));
}

static inline wasm_v128 simd_f64x2_splat(double x)
{
	return simd_i64x2_splat(num_f64_bits(x));
}

/* ---- lanes -------------------------------------------------------------- */

static inline uint32_t simd_i8x16_extract_lane_s(wasm_v128 v, uint32_t lane)
{
	return num_i32_extend8_s(simd_lanes_of(v).u8[lane & 15]);
}

static inline uint32_t simd_i8x16_extract_lane_u(wasm_v128 v, uint32_t lane)
{
	return simd_lanes_of(v).u8[lane & 15];
}

static inline wasm_v128 simd_i8x16_replace_lane(wasm_v128 v, uint32_t lane,
						uint32_t x)
{
	simd_lanes l = simd_lanes_of(v);
	l.u8[lane & 15] = (uint8_t)x;
	return simd_v128_of(l);
}

static inline uint32_t simd_i16x8_extract_lane_s(wasm_v128 v, uint32_t lane)
{
	return num_i32_extend16_s(simd_lanes_of(v).u16[lane & 7]);
}

static inline uint32_t simd_i16x8_extract_lane_u(wasm_v128 v, uint32_t lane)
{
	return simd_lanes_of(v).u16[lane & 7];
}

static inline wasm_v128 simd_i16x8_replace_lane(wasm_v128 v, uint32_t lane,
						uint32_t x)
{
	simd_lanes l = simd_lanes_of(v);
	l.u16[lane & 7] = (uint16_t)x;
	return simd_v128_of(l);
}

static inline uint32_t simd_i32x4_extract_lane(wasm_v128 v, uint32_t lane)
{
	return simd_lanes_of(v).u32[lane & 3];
}

static inline wasm_v128 simd_i32x4_replace_lane(wasm_v128 v, uint32_t lane,
						uint32_t x)
{
	simd_lanes l = simd_lanes_of(v);
	l.u32[lane & 3] = x;
	return simd_v128_of(l);
}

static inline uint64_t simd_i64x2_extract_lane(wasm_v128 v, uint32_t lane)
{
	return (lane & 1) ? v.hi : v.lo;
}

static inline wasm_v128 simd_i64x2_replace_lane(wasm_v128 v, uint32_t lane,
						uint64_t x)
{
	if (lane & 1)
		v.hi = x;
	else
		v.lo = x;
	return v;
}

static inline float simd_f32x4_extract_lane(wasm_v128 v, uint32_t lane)
{
	return num_f32_from_bits(simd_i32x4_extract_lane(v, lane));
}

static inline wasm_v128 simd_f32x4_replace_lane(wasm_v128 v, uint32_t lane,
						float x)
{
	return simd_i32x4_replace_lane(v, lane, num_f32_bits(x));
}

static inline double simd_f64x2_extract_lane(wasm_v128 v, uint32_t lane)
{
	return num_f64_from_bits(simd_i64x2_extract_lane(v, lane));
}

static inline wasm_v128 simd_f64x2_replace_lane(wasm_v128 v, uint32_t lane,
						double x)
{
	return simd_i64x2_replace_lane(v, lane, num_f64_bits(x));
}

/* ---- integer comparisons ------------------------------------------------ */

#define SIMD_ICMP(sh, F, N, T, SX)                                             \
	SIMD_MAP2(sh##_eq, F, N, T, SIMD_MASK(T, x == y))                      \
	SIMD_MAP2(sh##_ne, F, N, T, SIMD_MASK(T, x != y))                      \
	SIMD_MAP2(sh##_lt_s, F, N, T, SIMD_MASK(T, SX(x) < SX(y)))             \
	SIMD_MAP2(sh##_gt_s, F, N, T, SIMD_MASK(T, SX(x) > SX(y)))             \
	SIMD_MAP2(sh##_le_s, F, N, T, SIMD_MASK(T, SX(x) <= SX(y)))            \
	SIMD_MAP2(sh##_ge_s, F, N, T, SIMD_MASK(T, SX(x) >= SX(y)))

#define SIMD_ICMP_U(sh, F, N, T)                                               \
	SIMD_MAP2(sh##_lt_u, F, N, T, SIMD_MASK(T, x < y))                     \
	SIMD_MAP2(sh##_gt_u, F, N, T, SIMD_MASK(T, x > y))                     \
	SIMD_MAP2(sh##_le_u, F, N, T, SIMD_MASK(T, x <= y))                    \
	SIMD_MAP2(sh##_ge_u, F, N, T, SIMD_MASK(T, x >= y))

SIMD_ICMP(i8x16, u8, 16, uint32_t, simd_sx8)
SIMD_ICMP_U(i8x16, u8, 16, uint32_t)
SIMD_ICMP(i16x8, u16, 8, uint32_t, simd_sx16)
SIMD_ICMP_U(i16x8, u16, 8, uint32_t)
SIMD_ICMP(i32x4, u32, 4, uint32_t, num_s32)
SIMD_ICMP_U(i32x4, u32, 4, uint32_t)
SIMD_ICMP(i64x2, u64, 2, uint64_t, num_s64)

/* ---- float comparisons -------------------------------------------------- */

#define SIMD_FCMP(sh, F, N, T, FT, FROM)                                       \
	SIMD_MAP2(sh##_eq, F, N, T, SIMD_MASK(T, FROM(x) == FROM(y)))          \
	SIMD_MAP2(sh##_ne, F, N, T, SIMD_MASK(T, FROM(x) != FROM(y)))          \
	SIMD_MAP2(sh##_lt, F, N, T, SIMD_MASK(T, FROM(x) < FROM(y)))           \
	SIMD_MAP2(sh##_gt, F, N, T, SIMD_MASK(T, FROM(x) > FROM(y)))           \
	SIMD_MAP2(sh##_le, F, N, T, SIMD_MASK(T, FROM(x) <= FROM(y)))          \
	SIMD_MAP2(sh##_ge, F, N, T, SIMD_MASK(T, FROM(x) >= FROM(y)))

SIMD_FCMP(f32x4, u32, 4, uint32_t, float, num_f32_from_bits)
SIMD_FCMP(f64x2, u64, 2, uint64_t, double, num_f64_from_bits)

/* ---- bitwise ------------------------------------------------------------ */

static inline wasm_v128 simd_v128_not(wasm_v128 a)
{
	return simd_v128_make(~a.lo, ~a.hi);
}

static inline wasm_v128 simd_v128_and(wasm_v128 a, wasm_v128 b)
{
	return simd_v128_make(a.lo & b.lo, a.hi & b.hi);
}

static inline wasm_v128 simd_v128_andnot(wasm_v128 a, wasm_v128 b)
{
	return simd_v128_make(a.lo & ~b.lo, a.hi & ~b.hi);
}

static inline wasm_v128 simd_v128_or(wasm_v128 a, wasm_v128 b)
{
	return simd_v128_make(a.lo | b.lo, a.hi | b.hi);
}

static inline wasm_v128 simd_v128_xor(wasm_v128 a, wasm_v128 b)
{
	return simd_v128_make(a.lo ^ b.lo, a.hi ^ b.hi);
}

/* Bits of a where the mask c is 1, bits of b where it is 0. */
static inline wasm_v128 simd_v128_bitselect(wasm_v128 a, wasm_v128 b,
					    wasm_v128 c)
{
	return simd_v128_make((a.lo & c.lo) | (b.lo & ~c.lo),
			      (a.hi & c.hi) | (b.hi & ~c.hi));
}

static inline uint32_t simd_v128_any_true(wasm_v128 a)
{
	return (a.lo | a.hi) != 0;
}

static inline wasm_v128 simd_i8x16_relaxed_laneselect(wasm_v128 a, wasm_v128 b,
						      wasm_v128 c)
{
	return simd_v128_bitselect(a, b, c);
}

static inline wasm_v128 simd_i16x8_relaxed_laneselect(wasm_v128 a, wasm_v128 b,
						      wasm_v128 c)
{
	return simd_v128_bitselect(a, b, c);
}

static inline wasm_v128 simd_i32x4_relaxed_laneselect(wasm_v128 a, wasm_v128 b,
						      wasm_v128 c)
{
	return simd_v128_bitselect(a, b, c);
}

static inline wasm_v128 simd_i64x2_relaxed_laneselect(wasm_v128 a, wasm_v128 b,
						      wasm_v128 c)
{
	return simd_v128_bitselect(a, b, c);
}

/* ---- all_true / bitmask ------------------------------------------------- */

#define SIMD_ALLTRUE_BITMASK(sh, F, N, W)                                      \
	static inline uint32_t simd_##sh##_all_true(wasm_v128 va)              \
	{                                                                      \
		simd_lanes a = simd_lanes_of(va);                              \
		for (int i = 0; i < (N); i++)                                  \
			if (a.F[i] == 0)                                       \
				return 0;                                      \
		return 1;                                                      \
	}                                                                      \
	static inline uint32_t simd_##sh##_bitmask(wasm_v128 va)               \
	{                                                                      \
		simd_lanes a = simd_lanes_of(va);                              \
		uint32_t m = 0;                                                \
		for (int i = 0; i < (N); i++)                                  \
			m |= (uint32_t)(a.F[i] >> ((W)-1)) << i;               \
		return m;                                                      \
	}

SIMD_ALLTRUE_BITMASK(i8x16, u8, 16, 8)
SIMD_ALLTRUE_BITMASK(i16x8, u16, 8, 16)
SIMD_ALLTRUE_BITMASK(i32x4, u32, 4, 32)
SIMD_ALLTRUE_BITMASK(i64x2, u64, 2, 64)

/* ---- integer arithmetic ------------------------------------------------- */

/* abs of the most negative lane value wraps to itself, as the spec says. */
SIMD_MAP1(i8x16_abs, u8, 16, uint32_t, (x & 0x80u) ? 0u - x : x)
SIMD_MAP1(i16x8_abs, u16, 8, uint32_t, (x & 0x8000u) ? 0u - x : x)
SIMD_MAP1(i32x4_abs, u32, 4, uint32_t, (x & 0x80000000u) ? 0u - x : x)
SIMD_MAP1(i64x2_abs, u64, 2, uint64_t, (x & 0x8000000000000000u) ? 0u - x : x)
SIMD_MAP1(i8x16_neg, u8, 16, uint32_t, 0u - x)
SIMD_MAP1(i16x8_neg, u16, 8, uint32_t, 0u - x)
SIMD_MAP1(i32x4_neg, u32, 4, uint32_t, 0u - x)
SIMD_MAP1(i64x2_neg, u64, 2, uint64_t, 0u - x)
SIMD_MAP1(i8x16_popcnt, u8, 16, uint32_t, (uint32_t)__builtin_popcount(x))

SIMD_MAP2(i8x16_add, u8, 16, uint32_t, x + y)
SIMD_MAP2(i16x8_add, u16, 8, uint32_t, x + y)
SIMD_MAP2(i32x4_add, u32, 4, uint32_t, x + y)
SIMD_MAP2(i64x2_add, u64, 2, uint64_t, x + y)
SIMD_MAP2(i8x16_sub, u8, 16, uint32_t, x - y)
SIMD_MAP2(i16x8_sub, u16, 8, uint32_t, x - y)
SIMD_MAP2(i32x4_sub, u32, 4, uint32_t, x - y)
SIMD_MAP2(i64x2_sub, u64, 2, uint64_t, x - y)
SIMD_MAP2(i16x8_mul, u16, 8, uint32_t, x *y)
SIMD_MAP2(i32x4_mul, u32, 4, uint32_t, x *y)
SIMD_MAP2(i64x2_mul, u64, 2, uint64_t, x *y)

SIMD_MAP2(i8x16_add_sat_s, u8, 16, uint32_t,
	  simd_sat_s8(simd_sx8(x) + simd_sx8(y)))
SIMD_MAP2(i8x16_add_sat_u, u8, 16, uint32_t, x + y > 255u ? 255u : x + y)
SIMD_MAP2(i8x16_sub_sat_s, u8, 16, uint32_t,
	  simd_sat_s8(simd_sx8(x) - simd_sx8(y)))
SIMD_MAP2(i8x16_sub_sat_u, u8, 16, uint32_t, x > y ? x - y : 0u)
SIMD_MAP2(i16x8_add_sat_s, u16, 8, uint32_t,
	  simd_sat_s16(simd_sx16(x) + simd_sx16(y)))
SIMD_MAP2(i16x8_add_sat_u, u16, 8, uint32_t, x + y > 65535u ? 65535u : x + y)
SIMD_MAP2(i16x8_sub_sat_s, u16, 8, uint32_t,
	  simd_sat_s16(simd_sx16(x) - simd_sx16(y)))
SIMD_MAP2(i16x8_sub_sat_u, u16, 8, uint32_t, x > y ? x - y : 0u)

SIMD_MAP2(i8x16_min_s, u8, 16, uint32_t, simd_sx8(x) < simd_sx8(y) ? x : y)
SIMD_MAP2(i8x16_min_u, u8, 16, uint32_t, x < y ? x : y)
SIMD_MAP2(i8x16_max_s, u8, 16, uint32_t, simd_sx8(x) > simd_sx8(y) ? x : y)
SIMD_MAP2(i8x16_max_u, u8, 16, uint32_t, x > y ? x : y)
SIMD_MAP2(i16x8_min_s, u16, 8, uint32_t, simd_sx16(x) < simd_sx16(y) ? x : y)
SIMD_MAP2(i16x8_min_u, u16, 8, uint32_t, x < y ? x : y)
SIMD_MAP2(i16x8_max_s, u16, 8, uint32_t, simd_sx16(x) > simd_sx16(y) ? x : y)
SIMD_MAP2(i16x8_max_u, u16, 8, uint32_t, x > y ? x : y)
SIMD_MAP2(i32x4_min_s, u32, 4, uint32_t, num_s32(x) < num_s32(y) ? x : y)
SIMD_MAP2(i32x4_min_u, u32, 4, uint32_t, x < y ? x : y)
SIMD_MAP2(i32x4_max_s, u32, 4, uint32_t, num_s32(x) > num_s32(y) ? x : y)
SIMD_MAP2(i32x4_max_u, u32, 4, uint32_t, x > y ? x : y)

SIMD_MAP2(i8x16_avgr_u, u8, 16, uint32_t, (x + y + 1) >> 1)
SIMD_MAP2(i16x8_avgr_u, u16, 8, uint32_t, (x + y + 1) >> 1)

/* (x * y + 2^14) >> 15, saturated: only -32768 * -32768 saturates. */
static inline uint32_t simd_q15mulr(uint32_t x, uint32_t y)
{
	return simd_sat_s16(simd_asr(simd_sx16(x) * simd_sx16(y) + 0x4000, 15));
}

SIMD_MAP2(i16x8_q15mulr_sat_s, u16, 8, uint32_t, simd_q15mulr(x, y))
SIMD_MAP2(i16x8_relaxed_q15mulr_s, u16, 8, uint32_t, simd_q15mulr(x, y))

/* ---- shifts ------------------------------------------------------------- */

SIMD_SHIFT(i8x16_shl, u8, 16, uint32_t, 8, x << k)
SIMD_SHIFT(i8x16_shr_s, u8, 16, uint32_t, 8, num_sar32(num_i32_extend8_s(x), k))
SIMD_SHIFT(i8x16_shr_u, u8, 16, uint32_t, 8, x >> k)
SIMD_SHIFT(i16x8_shl, u16, 8, uint32_t, 16, x << k)
SIMD_SHIFT(i16x8_shr_s, u16, 8, uint32_t, 16,
	   num_sar32(num_i32_extend16_s(x), k))
SIMD_SHIFT(i16x8_shr_u, u16, 8, uint32_t, 16, x >> k)
SIMD_SHIFT(i32x4_shl, u32, 4, uint32_t, 32, x << k)
SIMD_SHIFT(i32x4_shr_s, u32, 4, uint32_t, 32, num_sar32(x, k))
SIMD_SHIFT(i32x4_shr_u, u32, 4, uint32_t, 32, x >> k)
SIMD_SHIFT(i64x2_shl, u64, 2, uint64_t, 64, x << k)
SIMD_SHIFT(i64x2_shr_s, u64, 2, uint64_t, 64, num_sar64(x, k))
SIMD_SHIFT(i64x2_shr_u, u64, 2, uint64_t, 64, x >> k)

/* ---- narrowing, widening ------------------------------------------------ */

#define SIMD_NARROW(name, NF, WF, N, SX, SAT)                                  \
	static inline wasm_v128 simd_##name(wasm_v128 va, wasm_v128 vb)        \
	{                                                                      \
		simd_lanes a = simd_lanes_of(va), b = simd_lanes_of(vb), r;    \
		for (int i = 0; i < (N); i++) {                                \
			r.NF[i] = SAT(SX(a.WF[i]));                            \
			r.NF[i + (N)] = SAT(SX(b.WF[i]));                      \
		}                                                              \
		return simd_v128_of(r);                                        \
	}

SIMD_NARROW(i8x16_narrow_i16x8_s, u8, u16, 8, simd_sx16, simd_sat_s8)
SIMD_NARROW(i8x16_narrow_i16x8_u, u8, u16, 8, simd_sx16, simd_sat_u8)
SIMD_NARROW(i16x8_narrow_i32x4_s, u16, u32, 4, num_s32, simd_sat_s16)
SIMD_NARROW(i16x8_narrow_i32x4_u, u16, u32, 4, num_s32, simd_sat_u16)

/* Widen lanes [off, off + N) of the narrow shape; EXT gives the bits. */
#define SIMD_EXTEND(name, WF, NF, N, off, EXT)                                 \
	static inline wasm_v128 simd_##name(wasm_v128 va)                      \
	{                                                                      \
		simd_lanes a = simd_lanes_of(va), r;                           \
		for (int i = 0; i < (N); i++)                                  \
			r.WF[i] = EXT(a.NF[i + (off)]);                        \
		return simd_v128_of(r);                                        \
	}

#define SIMD_ZX(x) (x)

SIMD_EXTEND(i16x8_extend_low_i8x16_s, u16, u8, 8, 0, num_i32_extend8_s)
SIMD_EXTEND(i16x8_extend_high_i8x16_s, u16, u8, 8, 8, num_i32_extend8_s)
SIMD_EXTEND(i16x8_extend_low_i8x16_u, u16, u8, 8, 0, SIMD_ZX)
SIMD_EXTEND(i16x8_extend_high_i8x16_u, u16, u8, 8, 8, SIMD_ZX)
SIMD_EXTEND(i32x4_extend_low_i16x8_s, u32, u16, 4, 0, num_i32_extend16_s)
SIMD_EXTEND(i32x4_extend_high_i16x8_s, u32, u16, 4, 4, num_i32_extend16_s)
SIMD_EXTEND(i32x4_extend_low_i16x8_u, u32, u16, 4, 0, SIMD_ZX)
SIMD_EXTEND(i32x4_extend_high_i16x8_u, u32, u16, 4, 4, SIMD_ZX)
SIMD_EXTEND(i64x2_extend_low_i32x4_s, u64, u32, 2, 0, num_i64_extend_i32_s)
SIMD_EXTEND(i64x2_extend_high_i32x4_s, u64, u32, 2, 2, num_i64_extend_i32_s)
SIMD_EXTEND(i64x2_extend_low_i32x4_u, u64, u32, 2, 0, SIMD_ZX)
SIMD_EXTEND(i64x2_extend_high_i32x4_u, u64, u32, 2, 2, SIMD_ZX)

/*
 * Extended multiplication: products of widened lanes [off, off + N).
 * Signed i8/i16 products fit int32_t; they are converted to the unsigned
 * lane type, which is defined modular arithmetic.
 */
#define SIMD_EXTMUL(name, WF, NF, N, off, PROD)                                \
	static inline wasm_v128 simd_##name(wasm_v128 va, wasm_v128 vb)        \
	{                                                                      \
		simd_lanes a = simd_lanes_of(va), b = simd_lanes_of(vb), r;    \
		for (int i = 0; i < (N); i++)                                  \
			r.WF[i] = PROD(a.NF[i + (off)], b.NF[i + (off)]);      \
		return simd_v128_of(r);                                        \
	}

#define SIMD_MUL_S8(x, y)  ((uint32_t)(simd_sx8(x) * simd_sx8(y)))
#define SIMD_MUL_U8(x, y)  ((uint32_t)(x) * (uint32_t)(y))
#define SIMD_MUL_S16(x, y) ((uint32_t)(simd_sx16(x) * simd_sx16(y)))
#define SIMD_MUL_U16(x, y) ((uint32_t)(x) * (uint32_t)(y))
#define SIMD_MUL_S32(x, y) ((uint64_t)((int64_t)num_s32(x) * num_s32(y)))
#define SIMD_MUL_U32(x, y) ((uint64_t)(x) * (uint64_t)(y))

SIMD_EXTMUL(i16x8_extmul_low_i8x16_s, u16, u8, 8, 0, SIMD_MUL_S8)
SIMD_EXTMUL(i16x8_extmul_high_i8x16_s, u16, u8, 8, 8, SIMD_MUL_S8)
SIMD_EXTMUL(i16x8_extmul_low_i8x16_u, u16, u8, 8, 0, SIMD_MUL_U8)
SIMD_EXTMUL(i16x8_extmul_high_i8x16_u, u16, u8, 8, 8, SIMD_MUL_U8)
SIMD_EXTMUL(i32x4_extmul_low_i16x8_s, u32, u16, 4, 0, SIMD_MUL_S16)
SIMD_EXTMUL(i32x4_extmul_high_i16x8_s, u32, u16, 4, 4, SIMD_MUL_S16)
SIMD_EXTMUL(i32x4_extmul_low_i16x8_u, u32, u16, 4, 0, SIMD_MUL_U16)
SIMD_EXTMUL(i32x4_extmul_high_i16x8_u, u32, u16, 4, 4, SIMD_MUL_U16)
SIMD_EXTMUL(i64x2_extmul_low_i32x4_s, u64, u32, 2, 0, SIMD_MUL_S32)
SIMD_EXTMUL(i64x2_extmul_high_i32x4_s, u64, u32, 2, 2, SIMD_MUL_S32)
SIMD_EXTMUL(i64x2_extmul_low_i32x4_u, u64, u32, 2, 0, SIMD_MUL_U32)
SIMD_EXTMUL(i64x2_extmul_high_i32x4_u, u64, u32, 2, 2, SIMD_MUL_U32)

/* Sum of adjacent lane pairs, widened first (no overflow possible). */
#define SIMD_EXTADD(name, WF, NF, N, EXT)                                      \
	static inline wasm_v128 simd_##name(wasm_v128 va)                      \
	{                                                                      \
		simd_lanes a = simd_lanes_of(va), r;                           \
		for (int i = 0; i < (N); i++)                                  \
			r.WF[i] = (uint32_t)(EXT(a.NF[2 * i]) +                \
					     EXT(a.NF[2 * i + 1]));            \
		return simd_v128_of(r);                                        \
	}

SIMD_EXTADD(i16x8_extadd_pairwise_i8x16_s, u16, u8, 8, simd_sx8)
SIMD_EXTADD(i16x8_extadd_pairwise_i8x16_u, u16, u8, 8, SIMD_ZX)
SIMD_EXTADD(i32x4_extadd_pairwise_i16x8_s, u32, u16, 4, simd_sx16)
SIMD_EXTADD(i32x4_extadd_pairwise_i16x8_u, u32, u16, 4, SIMD_ZX)

/* The pair sum can reach 2^31 ((-32768)^2 * 2): add in 64 bits, wrap. */
static inline wasm_v128 simd_i32x4_dot_i16x8_s(wasm_v128 va, wasm_v128 vb)
{
	simd_lanes a = simd_lanes_of(va), b = simd_lanes_of(vb), r;
	for (int i = 0; i < 4; i++) {
		int64_t p0 = (int64_t)simd_sx16(a.u16[2 * i]) *
			     simd_sx16(b.u16[2 * i]);
		int64_t p1 = (int64_t)simd_sx16(a.u16[2 * i + 1]) *
			     simd_sx16(b.u16[2 * i + 1]);
		r.u32[i] = (uint32_t)(uint64_t)(p0 + p1);
	}
	return simd_v128_of(r);
}

/* Relaxed dot, deterministic: b signed too; i16 pair sums saturate. */
static inline wasm_v128 simd_i16x8_relaxed_dot_i8x16_i7x16_s(wasm_v128 va,
							     wasm_v128 vb)
{
	simd_lanes a = simd_lanes_of(va), b = simd_lanes_of(vb), r;
	for (int i = 0; i < 8; i++) {
		int32_t p0 = simd_sx8(a.u8[2 * i]) * simd_sx8(b.u8[2 * i]);
		int32_t p1 =
			simd_sx8(a.u8[2 * i + 1]) * simd_sx8(b.u8[2 * i + 1]);
		r.u16[i] = (uint16_t)simd_sat_s16(p0 + p1);
	}
	return simd_v128_of(r);
}

static inline wasm_v128 simd_i32x4_relaxed_dot_i8x16_i7x16_add_s(wasm_v128 va,
								 wasm_v128 vb,
								 wasm_v128 vc)
{
	simd_lanes d =
		simd_lanes_of(simd_i16x8_relaxed_dot_i8x16_i7x16_s(va, vb));
	simd_lanes c = simd_lanes_of(vc), r;
	for (int i = 0; i < 4; i++) {
		int32_t s =
			simd_sx16(d.u16[2 * i]) + simd_sx16(d.u16[2 * i + 1]);
		r.u32[i] = (uint32_t)s + c.u32[i];
	}
	return simd_v128_of(r);
}

/* ---- float arithmetic --------------------------------------------------- */

/*
 * Lanes are held as bits (x, y: uint32_t or uint64_t); SIMD_F32/SIMD_F64 turn
 * them into values and SIMD_B32/SIMD_B64 back, so only real arithmetic touches
 * a NaN.
 */
#define SIMD_F32(x) num_f32_from_bits(x)
#define SIMD_F64(x) num_f64_from_bits(x)
#define SIMD_B32(f) num_f32_bits(f)
#define SIMD_B64(f) num_f64_bits(f)

SIMD_MAP1(f32x4_abs, u32, 4, uint32_t, x & 0x7fffffffu)
SIMD_MAP1(f32x4_neg, u32, 4, uint32_t, x ^ 0x80000000u)
SIMD_MAP1(f32x4_sqrt, u32, 4, uint32_t, SIMD_B32(num_f32_sqrt(SIMD_F32(x))))
SIMD_MAP1(f32x4_ceil, u32, 4, uint32_t, SIMD_B32(num_f32_ceil(SIMD_F32(x))))
SIMD_MAP1(f32x4_floor, u32, 4, uint32_t, SIMD_B32(num_f32_floor(SIMD_F32(x))))
SIMD_MAP1(f32x4_trunc, u32, 4, uint32_t, SIMD_B32(num_f32_trunc(SIMD_F32(x))))
SIMD_MAP1(f32x4_nearest, u32, 4, uint32_t,
	  SIMD_B32(num_f32_nearest(SIMD_F32(x))))
SIMD_MAP2(f32x4_add, u32, 4, uint32_t,
	  SIMD_B32(num_f32_add(SIMD_F32(x), SIMD_F32(y))))
SIMD_MAP2(f32x4_sub, u32, 4, uint32_t,
	  SIMD_B32(num_f32_sub(SIMD_F32(x), SIMD_F32(y))))
SIMD_MAP2(f32x4_mul, u32, 4, uint32_t,
	  SIMD_B32(num_f32_mul(SIMD_F32(x), SIMD_F32(y))))
SIMD_MAP2(f32x4_div, u32, 4, uint32_t,
	  SIMD_B32(num_f32_div(SIMD_F32(x), SIMD_F32(y))))
SIMD_MAP2(f32x4_min, u32, 4, uint32_t,
	  SIMD_B32(num_f32_min(SIMD_F32(x), SIMD_F32(y))))
SIMD_MAP2(f32x4_max, u32, 4, uint32_t,
	  SIMD_B32(num_f32_max(SIMD_F32(x), SIMD_F32(y))))
SIMD_MAP2(f32x4_relaxed_min, u32, 4, uint32_t,
	  SIMD_B32(num_f32_min(SIMD_F32(x), SIMD_F32(y))))
SIMD_MAP2(f32x4_relaxed_max, u32, 4, uint32_t,
	  SIMD_B32(num_f32_max(SIMD_F32(x), SIMD_F32(y))))
/* pmin(a, b) = b < a ? b : a; pmax(a, b) = a < b ? b : a (bits kept). */
SIMD_MAP2(f32x4_pmin, u32, 4, uint32_t, SIMD_F32(y) < SIMD_F32(x) ? y : x)
SIMD_MAP2(f32x4_pmax, u32, 4, uint32_t, SIMD_F32(x) < SIMD_F32(y) ? y : x)

SIMD_MAP1(f64x2_abs, u64, 2, uint64_t, x & 0x7fffffffffffffffu)
SIMD_MAP1(f64x2_neg, u64, 2, uint64_t, x ^ 0x8000000000000000u)
SIMD_MAP1(f64x2_sqrt, u64, 2, uint64_t, SIMD_B64(num_f64_sqrt(SIMD_F64(x))))
SIMD_MAP1(f64x2_ceil, u64, 2, uint64_t, SIMD_B64(num_f64_ceil(SIMD_F64(x))))
SIMD_MAP1(f64x2_floor, u64, 2, uint64_t, SIMD_B64(num_f64_floor(SIMD_F64(x))))
SIMD_MAP1(f64x2_trunc, u64, 2, uint64_t, SIMD_B64(num_f64_trunc(SIMD_F64(x))))
SIMD_MAP1(f64x2_nearest, u64, 2, uint64_t,
	  SIMD_B64(num_f64_nearest(SIMD_F64(x))))
SIMD_MAP2(f64x2_add, u64, 2, uint64_t,
	  SIMD_B64(num_f64_add(SIMD_F64(x), SIMD_F64(y))))
SIMD_MAP2(f64x2_sub, u64, 2, uint64_t,
	  SIMD_B64(num_f64_sub(SIMD_F64(x), SIMD_F64(y))))
SIMD_MAP2(f64x2_mul, u64, 2, uint64_t,
	  SIMD_B64(num_f64_mul(SIMD_F64(x), SIMD_F64(y))))
SIMD_MAP2(f64x2_div, u64, 2, uint64_t,
	  SIMD_B64(num_f64_div(SIMD_F64(x), SIMD_F64(y))))
SIMD_MAP2(f64x2_min, u64, 2, uint64_t,
	  SIMD_B64(num_f64_min(SIMD_F64(x), SIMD_F64(y))))
SIMD_MAP2(f64x2_max, u64, 2, uint64_t,
	  SIMD_B64(num_f64_max(SIMD_F64(x), SIMD_F64(y))))
SIMD_MAP2(f64x2_relaxed_min, u64, 2, uint64_t,
	  SIMD_B64(num_f64_min(SIMD_F64(x), SIMD_F64(y))))
SIMD_MAP2(f64x2_relaxed_max, u64, 2, uint64_t,
	  SIMD_B64(num_f64_max(SIMD_F64(x), SIMD_F64(y))))
SIMD_MAP2(f64x2_pmin, u64, 2, uint64_t, SIMD_F64(y) < SIMD_F64(x) ? y : x)
SIMD_MAP2(f64x2_pmax, u64, 2, uint64_t, SIMD_F64(x) < SIMD_F64(y) ? y : x)

/*
 * Relaxed multiply-add, deterministic profile: unfused, two roundings.
 * The product goes through a volatile so that no compiler can contract
 * it into an FMA, whatever -ffp-contract or -march say.
 */
static inline float simd_fmadd32(float a, float b, float c)
{
	volatile float p = a * b;
	return p + c;
}

static inline double simd_fmadd64(double a, double b, double c)
{
	volatile double p = a * b;
	return p + c;
}

#define SIMD_MAP3(name, F, N, T, expr)                                         \
	static inline wasm_v128 simd_##name(wasm_v128 va, wasm_v128 vb,        \
					    wasm_v128 vc)                      \
	{                                                                      \
		simd_lanes a = simd_lanes_of(va), b = simd_lanes_of(vb),       \
			   c = simd_lanes_of(vc), r;                           \
		for (int i = 0; i < (N); i++) {                                \
			T x = a.F[i], y = b.F[i], z = c.F[i];                  \
			r.F[i] = (expr);                                       \
		}                                                              \
		return simd_v128_of(r);                                        \
	}

SIMD_MAP3(f32x4_relaxed_madd, u32, 4, uint32_t,
	  SIMD_B32(simd_fmadd32(SIMD_F32(x), SIMD_F32(y), SIMD_F32(z))))
SIMD_MAP3(f32x4_relaxed_nmadd, u32, 4, uint32_t,
	  SIMD_B32(simd_fmadd32(SIMD_F32(x ^ 0x80000000u), SIMD_F32(y),
				SIMD_F32(z))))
SIMD_MAP3(f64x2_relaxed_madd, u64, 2, uint64_t,
	  SIMD_B64(simd_fmadd64(SIMD_F64(x), SIMD_F64(y), SIMD_F64(z))))
SIMD_MAP3(f64x2_relaxed_nmadd, u64, 2, uint64_t,
	  SIMD_B64(simd_fmadd64(SIMD_F64(x ^ 0x8000000000000000u), SIMD_F64(y),
				SIMD_F64(z))))

/* ---- conversions -------------------------------------------------------- */

static inline wasm_v128 simd_f32x4_demote_f64x2_zero(wasm_v128 a)
{
	uint32_t l0 = SIMD_B32(num_f32_demote_f64(SIMD_F64(a.lo)));
	uint32_t l1 = SIMD_B32(num_f32_demote_f64(SIMD_F64(a.hi)));
	return simd_v128_make(l0 | (uint64_t)l1 << 32, 0);
}

static inline wasm_v128 simd_f64x2_promote_low_f32x4(wasm_v128 a)
{
	return simd_v128_make(
		SIMD_B64(num_f64_promote_f32(SIMD_F32((uint32_t)a.lo))),
		SIMD_B64(num_f64_promote_f32(SIMD_F32(a.lo >> 32))));
}

SIMD_MAP1(i32x4_trunc_sat_f32x4_s, u32, 4, uint32_t,
	  num_i32_trunc_sat_f32_s(SIMD_F32(x)))
SIMD_MAP1(i32x4_trunc_sat_f32x4_u, u32, 4, uint32_t,
	  num_i32_trunc_sat_f32_u(SIMD_F32(x)))
SIMD_MAP1(i32x4_relaxed_trunc_f32x4_s, u32, 4, uint32_t,
	  num_i32_trunc_sat_f32_s(SIMD_F32(x)))
SIMD_MAP1(i32x4_relaxed_trunc_f32x4_u, u32, 4, uint32_t,
	  num_i32_trunc_sat_f32_u(SIMD_F32(x)))
SIMD_MAP1(f32x4_convert_i32x4_s, u32, 4, uint32_t,
	  SIMD_B32(num_f32_convert_i32_s(x)))
SIMD_MAP1(f32x4_convert_i32x4_u, u32, 4, uint32_t,
	  SIMD_B32(num_f32_convert_i32_u(x)))

static inline wasm_v128 simd_i32x4_trunc_sat_f64x2_s_zero(wasm_v128 a)
{
	uint32_t l0 = num_i32_trunc_sat_f64_s(SIMD_F64(a.lo));
	uint32_t l1 = num_i32_trunc_sat_f64_s(SIMD_F64(a.hi));
	return simd_v128_make(l0 | (uint64_t)l1 << 32, 0);
}

static inline wasm_v128 simd_i32x4_trunc_sat_f64x2_u_zero(wasm_v128 a)
{
	uint32_t l0 = num_i32_trunc_sat_f64_u(SIMD_F64(a.lo));
	uint32_t l1 = num_i32_trunc_sat_f64_u(SIMD_F64(a.hi));
	return simd_v128_make(l0 | (uint64_t)l1 << 32, 0);
}

static inline wasm_v128 simd_i32x4_relaxed_trunc_f64x2_s_zero(wasm_v128 a)
{
	return simd_i32x4_trunc_sat_f64x2_s_zero(a);
}

static inline wasm_v128 simd_i32x4_relaxed_trunc_f64x2_u_zero(wasm_v128 a)
{
	return simd_i32x4_trunc_sat_f64x2_u_zero(a);
}

static inline wasm_v128 simd_f64x2_convert_low_i32x4_s(wasm_v128 a)
{
	return simd_v128_make(SIMD_B64(num_f64_convert_i32_s((uint32_t)a.lo)),
			      SIMD_B64(num_f64_convert_i32_s(a.lo >> 32)));
}

static inline wasm_v128 simd_f64x2_convert_low_i32x4_u(wasm_v128 a)
{
	return simd_v128_make(SIMD_B64(num_f64_convert_i32_u((uint32_t)a.lo)),
			      SIMD_B64(num_f64_convert_i32_u(a.lo >> 32)));
}

#undef SIMD_F32
#undef SIMD_F64
#undef SIMD_B32
#undef SIMD_B64
#undef SIMD_MASK
#undef SIMD_MAP1
#undef SIMD_MAP2
#undef SIMD_MAP3
#undef SIMD_SHIFT
#undef SIMD_LOAD_LANE
#undef SIMD_ICMP
#undef SIMD_ICMP_U
#undef SIMD_FCMP
#undef SIMD_ALLTRUE_BITMASK
#undef SIMD_NARROW
#undef SIMD_EXTEND
#undef SIMD_ZX
#undef SIMD_EXTMUL
#undef SIMD_MUL_S8
#undef SIMD_MUL_U8
#undef SIMD_MUL_S16
#undef SIMD_MUL_U16
#undef SIMD_MUL_S32
#undef SIMD_MUL_U32
#undef SIMD_EXTADD

#endif
