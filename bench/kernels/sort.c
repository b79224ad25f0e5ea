/*
 * sort.c - sorts n 32-bit integers from a linear congruential generator
 * with an in-place quicksort (median of three, insertion sort for short
 * ranges, recursion on the smaller side only so depth stays logarithmic).
 * Measures data-dependent branches and memory traffic.  The checksum
 * mixes a sample of the sorted array and is poisoned if the result is not
 * in order.
 */
#include "bench.h"

#define SORT_MAX_N (1 << 22)

const int32_t kernel_default_n = 2000000;

static uint32_t data[SORT_MAX_N];

static uint32_t clamp_n(int32_t n)
{
	return n > SORT_MAX_N ? SORT_MAX_N : (uint32_t)n;
}

void kernel_setup(int32_t n)
{
	uint32_t x = 12345, i, len = clamp_n(n);

	for (i = 0; i < len; i++) {
		x = x * 1664525u + 1013904223u;
		data[i] = x ^ (x >> 15);
	}
}

static void insertion_sort(uint32_t *a, uint32_t len)
{
	uint32_t i, j, v;

	for (i = 1; i < len; i++) {
		v = a[i];
		for (j = i; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static inline void swap(uint32_t *a, uint32_t *b)
{
	uint32_t t = *a;

	*a = *b;
	*b = t;
}

static void quicksort(uint32_t *a, uint32_t len)
{
	while (len > 16) {
		uint32_t mid = len / 2, last = len - 1, pivot, i, j;

		/* Median of three moves the pivot to a[mid]. */
		if (a[mid] < a[0])
			swap(&a[mid], &a[0]);
		if (a[last] < a[0])
			swap(&a[last], &a[0]);
		if (a[last] < a[mid])
			swap(&a[last], &a[mid]);
		pivot = a[mid];
		i = 0;
		j = last;
		for (;;) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i >= j)
				break;
			swap(&a[i], &a[j]);
			i++;
			j--;
		}
		/* a[0..j] <= pivot <= a[j+1..len): recurse on the smaller. */
		if (j + 1 < len - j - 1) {
			quicksort(a, j + 1);
			a += j + 1;
			len -= j + 1;
		} else {
			quicksort(a + j + 1, len - j - 1);
			len = j + 1;
		}
	}
	insertion_sort(a, len);
}

uint64_t kernel_work(int32_t n)
{
	uint32_t len = clamp_n(n), i;
	uint64_t h = BENCH_MIX_INIT;

	quicksort(data, len);
	for (i = 1; i < len; i++) {
		if (data[i - 1] > data[i])
			return 0xbadbadbadULL;
	}
	for (i = 0; i < len; i += 997)
		h = bench_mix(h, data[i]);
	return bench_mix(h, len);
}
