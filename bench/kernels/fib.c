/*
 * fib.c - recursive Fibonacci: measures call/return overhead and the
 * cost of a small recursive frame.  n is the Fibonacci index; the
 * checksum is fib(n) itself.
 */
#include "bench.h"

const int32_t kernel_default_n = 38;

static BENCH_NOINLINE uint32_t fib(uint32_t n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

void kernel_setup(int32_t n)
{
}

uint64_t kernel_work(int32_t n)
{
	return fib((uint32_t)n);
}
