/*
 * calls.c - call-heavy kernel: many tiny functions that must stay real
 * calls.  Each of the n outer iterations makes
 *   - 4 indirect calls through a table of eight (i32, i32) -> i32
 *     functions, the slot chosen by the data (call_indirect),
 *   - a 4-deep chain of direct calls with mixed signatures
 *     (i32, i64, f64 parameters and results),
 *   - one call through a second table with a different signature.
 * Measures call/return, argument passing and call_indirect type checks.
 */
#include "bench.h"

const int32_t kernel_default_n = 3000000;

typedef uint32_t (*op2_fn)(uint32_t, uint32_t);
typedef uint64_t (*op3_fn)(uint64_t, uint32_t, double);

static BENCH_NOINLINE uint32_t op_add(uint32_t a, uint32_t b)
{
	return a + b;
}

static BENCH_NOINLINE uint32_t op_sub(uint32_t a, uint32_t b)
{
	return a - b + 7;
}

static BENCH_NOINLINE uint32_t op_xor(uint32_t a, uint32_t b)
{
	return a ^ (b * 2654435761u);
}

static BENCH_NOINLINE uint32_t op_rotl(uint32_t a, uint32_t b)
{
	b &= 31;
	return (a << b) | (a >> ((32 - b) & 31));
}

static BENCH_NOINLINE uint32_t op_mul(uint32_t a, uint32_t b)
{
	return a * (b | 1);
}

static BENCH_NOINLINE uint32_t op_mix(uint32_t a, uint32_t b)
{
	return (a ^ (a >> 16)) + b;
}

static BENCH_NOINLINE uint32_t op_min(uint32_t a, uint32_t b)
{
	return (a < b ? a : b) + 0x9e3779b9u;
}

static BENCH_NOINLINE uint32_t op_div(uint32_t a, uint32_t b)
{
	return a / ((b & 0xff) + 1) + b;
}

static op2_fn ops2[8] = {
	op_add, op_sub, op_xor, op_rotl, op_mul, op_mix, op_min, op_div,
};

static BENCH_NOINLINE uint64_t acc_a(uint64_t h, uint32_t v, double f)
{
	return h * 31 + v + (uint64_t)(f * 8.0);
}

static BENCH_NOINLINE uint64_t acc_b(uint64_t h, uint32_t v, double f)
{
	return (h ^ v) * 0x100000001b3ULL + (f > 0.5);
}

static op3_fn ops3[2] = {acc_a, acc_b};

/* The direct chain: each level does a little work and calls the next. */
static BENCH_NOINLINE double level4(double f, uint32_t v)
{
	return f * 0.5 + (double)(v & 1023) * (1.0 / 1024.0);
}

static BENCH_NOINLINE uint64_t level3(uint64_t h, uint32_t v, double *f)
{
	*f = level4(*f, v);
	return h + (v >> 3);
}

static BENCH_NOINLINE uint32_t level2(uint32_t a, uint32_t b, uint64_t *h,
				      double *f)
{
	*h = level3(*h, a ^ b, f);
	return a + (uint32_t)*h;
}

static BENCH_NOINLINE uint32_t level1(uint32_t a, uint64_t *h, double *f)
{
	return level2(a, a >> 5, h, f) ^ 0x5bd1e995u;
}

void kernel_setup(int32_t n)
{
}

uint64_t kernel_work(int32_t n)
{
	uint32_t a = 0x12345678u, b = 0x9abcdef0u;
	uint64_t h = BENCH_MIX_INIT;
	double f = 0.25;
	int32_t i;

	for (i = 0; i < n; i++) {
		a = ops2[a & 7](a, b);
		b = ops2[(a >> 8) & 7](b, a);
		a = ops2[(b >> 16) & 7](a, (uint32_t)i);
		b = ops2[(a >> 24) & 7](b, (uint32_t)i);
		a = level1(a, &h, &f);
		h = ops3[b & 1](h, a, f);
	}
	return bench_mix(bench_mix(h, a), b);
}
