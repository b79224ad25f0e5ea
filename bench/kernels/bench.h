/*
 * bench.h - the contract between a benchmark kernel and its harness.
 *
 * Each kernel is one freestanding C file (no libc) built twice from the
 * same source: as a wasm32 module (bench/build-kernels.sh) and as a native
 * program (with native-main.c).  A kernel defines three things:
 *
 *   kernel_default_n      the work size used when the harness passes n <= 0
 *   kernel_setup(n)       prepares input data (not timed)
 *   kernel_work(n)        does the timed work and returns a 64-bit checksum
 *
 * common.c turns these into the exported entry points every runner uses:
 *
 *   bench_run(n) -> i64      setup, then time the work with the imported
 *                            host clock bench.now_ns, return elapsed ns
 *   bench_checksum() -> i64  the checksum of the last bench_run
 *   run(n) -> i64            setup + work, untimed: returns the checksum
 *
 * Timing therefore happens inside the guest: process start, compilation
 * and instantiation are never part of a kernel's time.  The checksum is a
 * pure function of n, identical on every engine and natively; the harness
 * refuses results whose checksums disagree.
 */
#ifndef HOSTEL_BENCH_H
#define HOSTEL_BENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __wasm__
#define BENCH_EXPORT(name) __attribute__((export_name(name)))
#define BENCH_IMPORT(mod, name)                                                \
	__attribute__((import_module(mod), import_name(name)))
#else
#define BENCH_EXPORT(name)
#define BENCH_IMPORT(mod, name)
#endif

/* Keeps a small function a real call, so call cost stays measured. */
#define BENCH_NOINLINE __attribute__((noinline))

/* Monotonic host clock in nanoseconds (wasm: import bench.now_ns). */
BENCH_IMPORT("bench", "now_ns") int64_t now_ns(void);

BENCH_EXPORT("bench_run") int64_t bench_run(int32_t n);
BENCH_EXPORT("bench_checksum") int64_t bench_checksum(void);
BENCH_EXPORT("run") int64_t run(int32_t n);

/* Provided by each kernel. */
extern const int32_t kernel_default_n;
void kernel_setup(int32_t n);
uint64_t kernel_work(int32_t n);

/* Mixes a value into a running 64-bit checksum (FNV-1a style, per word). */
static inline uint64_t bench_mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

#define BENCH_MIX_INIT 0xcbf29ce484222325ULL

#endif
