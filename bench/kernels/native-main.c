/*
 * native-main.c - the native harness for one kernel: provides now_ns from
 * CLOCK_MONOTONIC, runs bench_run(n) once and prints the same JSON line
 * the wasm runners print:
 *
 *   {"kernel":"NAME","ns":ELAPSED,"checksum":"U64"}
 *
 * Usage: NAME [n]   (n <= 0 or absent: the kernel's default size).
 * The kernel name is the program's base name.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');
	int32_t n = argc > 1 ? (int32_t)strtol(argv[1], NULL, 0) : 0;
	int64_t ns;

	name = name ? name + 1 : argv[0];
	ns = bench_run(n);
	printf("{\"kernel\":\"%s\",\"ns\":%" PRId64 ",\"checksum\":\"%" PRIu64
	       "\"}\n",
	       name, ns, (uint64_t)bench_checksum());
	return 0;
}
