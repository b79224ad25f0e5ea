/*
 * wasi.h - hostel's WASI 0.2 host: wasi:cli, wasi:clocks, wasi:random,
 * wasi:io and wasi:filesystem, written against the public runtime API
 * (component/instance.h) only.
 *
 * Contract:
 *  - One wasi_ctx per store.  It owns every host object the guest can
 *    hold a handle to (streams, pollables, descriptors, errors, directory
 *    streams); the guest's handles carry an index into the ctx's object
 *    table as their rep.  Free the ctx after the store (a dropped handle
 *    calls back into it).
 *  - wasi_add_to_linker registers each interface once under its 0.2.12
 *    name; the linker matches any semver-compatible 0.2.x import to it.
 *  - Nothing aborts on guest input: bad handles and impossible requests
 *    trap the calling component (cm_host_call_trap), OS failures become
 *    the interface's error values.
 *  - Filesystem access is confined to the preopened directories: paths
 *    are resolved component by component with openat(O_NOFOLLOW) by
 *    wasi_path_resolve; `..` above the preopen, absolute paths and
 *    symlinks leading outside fail with not-permitted.
 *  - wasi:cli/exit records the status (wasi_ctx_exit_code) and traps with
 *    WASI_EXIT_TRAP_MSG to unwind the guest; the embedder checks
 *    wasi_ctx_exited after a trap.
 *  - Time comes from an embedder-provided wasi_clock (default: the OS
 *    clocks); a blocking poll waits by calling the clock's sleep_until
 *    (and poll(2) for file descriptors).  Pollables are plain data (a
 *    deadline, an fd and events, or "always ready"), so an embedder can
 *    later turn a block into a pending host call instead of sleeping.
 */
#ifndef HOSTEL_WASI_WASI_H
#define HOSTEL_WASI_WASI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "component/instance.h"

#define WASI_EXIT_TRAP_MSG "wasi:cli/exit called"

/* A clock source: monotonic and wall time, and a way to wait. */
typedef struct wasi_clock {
	/* monotonic nanoseconds */
	uint64_t (*now)(void *env);
	/* wall clock: seconds and nanoseconds since the Unix epoch */
	void (*wall)(void *env, uint64_t *sec, uint32_t *nsec);
	/* return once now() >= deadline (a virtual clock just advances) */
	void (*sleep_until)(void *env, uint64_t deadline);
	uint64_t resolution_ns;
	void *env;
} wasi_clock;

/* The OS clocks (CLOCK_MONOTONIC, CLOCK_REALTIME, clock_nanosleep). */
void wasi_clock_system(wasi_clock *c);

/*
 * A virtual clock for tests: time moves only when a guest sleeps (or the
 * test sets it).  The wasi_clock filled by wasi_clock_virtual points at
 * vc, which must outlive it.
 */
typedef struct wasi_vclock {
	uint64_t mono_ns;
	uint64_t wall_ns;  /* since the epoch */
	uint64_t slept_ns; /* total advanced by sleep_until */
} wasi_vclock;

void wasi_clock_virtual(wasi_clock *c, wasi_vclock *vc);

/* Where a guest's stdout/stderr bytes go: a callback, else an fd. */
typedef void (*wasi_output_fn)(void *env, int fd /* 1 or 2 */,
			       const uint8_t *bytes, size_t len);

typedef struct wasi_ctx wasi_ctx;

/* An empty context (no args, env, preopens; stdio = fds 0/1/2). */
wasi_ctx *wasi_ctx_new(void);
void wasi_ctx_free(wasi_ctx *ctx);

/* Configuration (before instantiation); -1 when out of memory. */
int wasi_ctx_push_arg(wasi_ctx *ctx, const char *arg);
int wasi_ctx_push_env(wasi_ctx *ctx, const char *key, const char *value);
/* stdin from fd (-1: empty); stdout/stderr to fds (-1: discarded). */
void wasi_ctx_set_stdio(wasi_ctx *ctx, int in_fd, int out_fd, int err_fd);
/* Capture stdout and stderr through fn instead of writing to fds. */
void wasi_ctx_set_output(wasi_ctx *ctx, wasi_output_fn fn, void *env);
/* The clock is copied (the default is wasi_clock_system). */
void wasi_ctx_set_clock(wasi_ctx *ctx, const wasi_clock *c);
/*
 * Preopen host directory `host_path` as guest path `guest_path`.
 * -1 with errno set when the directory cannot be opened.
 */
int wasi_ctx_preopen(wasi_ctx *ctx, const char *host_path,
		     const char *guest_path);

/* Register every WASI 0.2 interface this host implements. */
int wasi_add_to_linker(wasi_ctx *ctx, cm_linker *l);

bool wasi_ctx_exited(const wasi_ctx *ctx);
int wasi_ctx_exit_code(const wasi_ctx *ctx);

/*
 * Sandboxed path resolution (exposed for tests).  Resolve `path`
 * relative to directory fd `root` without leaving it: returns a new fd
 * of the directory that holds the last component (the caller closes it)
 * and that component's name in `name` (size `namecap`; "." when the path
 * names the directory itself).  With follow_last, a symlink in the last
 * position is expanded too.  Returns 0, or a positive errno value: EPERM
 * for an absolute path, a `..` above root or a symlink escaping root or
 * absolute, ELOOP after too many symlinks, ENAMETOOLONG, and whatever
 * openat reports for a missing or non-directory intermediate component.
 */
int wasi_path_resolve(int root, const char *path, bool follow_last, int *dirfd,
		      char *name, size_t namecap);

#endif
