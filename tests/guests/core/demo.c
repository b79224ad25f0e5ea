/*
 * demo.c - the core module that scripts/run-demo runs through the engine
 * with `hostel run --invoke`.  Freestanding: no imports, no libc.
 *
 * Regenerate demo.wasm (Debian packages clang, lld), in this folder:
 *   clang --target=wasm32 -O2 -nostdlib -Wl,--no-entry -o demo.wasm demo.c
 */
#include <stdint.h>

__attribute__((export_name("fib"))) uint64_t fib(uint32_t n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((export_name("collatz-steps"))) uint32_t collatz(uint64_t n)
{
	uint32_t steps = 0;

	while (n > 1) {
		n = (n & 1) ? 3 * n + 1 : n / 2;
		steps++;
	}
	return steps;
}

__attribute__((export_name("is-prime"))) int32_t is_prime(uint32_t n)
{
	if (n < 2)
		return 0;
	for (uint32_t d = 2; (uint64_t)d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return 1;
}
