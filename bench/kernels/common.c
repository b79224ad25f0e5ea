/*
 * common.c - the exported entry points shared by every kernel (see
 * bench.h), plus the few libc routines clang may emit calls to when
 * compiling freestanding code for wasm32 (aggregate copies and clears).
 *
 * The checksum of the last timed run is kept in a file-scope variable:
 * this is guest code, one run per instance, so that state is harmless.
 */
#include "bench.h"

static uint64_t last_checksum;

int64_t bench_run(int32_t n)
{
	int64_t t0, t1;

	if (n <= 0)
		n = kernel_default_n;
	kernel_setup(n);
	t0 = now_ns();
	last_checksum = kernel_work(n);
	t1 = now_ns();
	return t1 - t0;
}

int64_t bench_checksum(void)
{
	return (int64_t)last_checksum;
}

int64_t run(int32_t n)
{
	if (n <= 0)
		n = kernel_default_n;
	kernel_setup(n);
	return (int64_t)kernel_work(n);
}

#ifdef __wasm__
/*
 * Built with -fno-builtin so the compiler does not turn these loops back
 * into calls to themselves.
 */
void *memcpy(void *restrict dst, const void *restrict src, size_t len);
void *memmove(void *dst, const void *src, size_t len);
void *memset(void *dst, int c, size_t len);

void *memcpy(void *restrict dst, const void *restrict src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (len--)
		*d++ = *s++;
	return dst;
}

void *memmove(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d < s) {
		while (len--)
			*d++ = *s++;
	} else {
		while (len--)
			d[len] = s[len];
	}
	return dst;
}

void *memset(void *dst, int c, size_t len)
{
	unsigned char *d = dst;

	while (len--)
		*d++ = (unsigned char)c;
	return dst;
}
#endif
