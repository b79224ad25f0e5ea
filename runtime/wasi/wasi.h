/*
 * wasi.h - hostel's WASI 0.2 host: wasi:cli, wasi:clocks, wasi:random,
 * wasi:io and wasi:filesystem, and of WASI 0.3 the clocks, random,
 * wasi:cli (environment, exit, stdio over stream<u8>) and
 * wasi:filesystem (filesystem_p3.c), written against the public
 * runtime API (run/instance.h) only.
 *
 * Contract:
 *  - One wasi_ctx per store.  It owns every host object the guest can
 *    hold a handle to (streams, pollables, descriptors, errors, directory
 *    streams); the guest's handles carry an index into the ctx's object
 *    table as their rep.  Free the ctx after the store (a dropped handle
 *    calls back into it).
 *  - wasi_add_to_linker registers each interface once under its 0.2.12
 *    name; the linker matches any semver-compatible 0.2.x import to it.
 *    Every other "wasi:" function (wasi:sockets, wasi:http, the parts of
 *    0.3 not written yet, a function a newer minor version adds) is
 *    deny-by-default (deny.c, the linker's fallback): it answers with
 *    its interface's own access-denied / not-supported error, so a
 *    component of any standard world links.
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
 *  - WASI 0.3 waits are pending host calls settled by the embedder's
 *    timers (wasi_clock.arm, wasi_ctx_fire_timers): never a blocked
 *    OS thread.
 *  - WASI 0.3 stdout and stderr move a guest's stream<u8> to the same
 *    sinks as 0.2's (the output callback, else the fds) as it writes,
 *    so a write to them never waits; stdin is read(2) on the stdin fd
 *    when the guest reads (cli_p3.c).
 */
#ifndef HOSTEL_WASI_WASI_H
#define HOSTEL_WASI_WASI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/instance.h"
#include "wasm/wasm.h"

#define WASI_EXIT_TRAP_MSG "wasi:cli/exit called"

/* "No wait pending": the deadline wasi_clock.arm gets to disarm. */
#define WASI_NO_DEADLINE UINT64_MAX

/*
 * A clock source: monotonic and wall time, a way to wait (blocking WASI
 * 0.2 polls only), and a way to be woken (WASI 0.3 waits).
 *
 * Timers (WASI 0.3 wait-for / wait-until; the contract with the
 * embedder, stable):
 *  - A 0.3 wait never blocks an OS thread: the host function defers its
 *    call (cm_host_call_defer) and the ctx keeps it in a timer queue
 *    ordered by deadline (monotonic nanoseconds, now()'s scale).  A wait
 *    whose deadline has already passed returns at once.
 *  - Whenever the earliest pending deadline changes (a new earliest wait,
 *    the earliest one fired or was cancelled, the last one went), the ctx
 *    calls arm(arm_env, deadline) with the new earliest deadline, or
 *    WASI_NO_DEADLINE when no wait is pending.  A call replaces the
 *    previous one: the embedder keeps one wake-up per ctx.  arm may run
 *    inside a service turn (from a guest's host call) or inside
 *    wasi_ctx_fire_timers; it must only (re)schedule the wake-up (e.g.
 *    evtimer_add with deadline - now()), never call into the ctx or the
 *    store.  arm may be NULL: the embedder then asks
 *    wasi_ctx_next_deadline itself.
 *  - When the wake-up comes (now() >= deadline; early or late is
 *    harmless), the embedder calls wasi_ctx_fire_timers(ctx), outside
 *    or inside a service turn.  It settles (cm_host_settle) every wait
 *    whose deadline has passed, which only records the result and asks
 *    the store for service through its request_service callback; guest
 *    code runs in the next cm_store_service_turn.  Then it arms the next
 *    deadline.
 *  - A guest cancelling a wait (subtask.cancel) removes it and settles
 *    it as cancelled; freeing the store forgets its waits (the ctx is
 *    freed after the store, as always).
 */
typedef struct wasi_clock {
	/* monotonic nanoseconds */
	uint64_t (*now)(void *env);
	/* wall clock: seconds and nanoseconds since the Unix epoch */
	void (*wall)(void *env, uint64_t *sec, uint32_t *nsec);
	/* return once now() >= deadline (a virtual clock just advances) */
	void (*sleep_until)(void *env, uint64_t deadline);
	uint64_t resolution_ns;
	void *env;
	/* schedule wasi_ctx_fire_timers at deadline (see above); may be NULL */
	void (*arm)(void *arm_env, uint64_t deadline);
	void *arm_env;
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

/*
 * Register every WASI 0.2 interface this host implements, and of WASI
 * 0.3 wasi:clocks/monotonic-clock and system-clock, wasi:random/random,
 * insecure and insecure-seed, wasi:cli/environment, exit, stdin,
 * stdout, stderr and the terminal getters, wasi:filesystem/types and
 * preopens (all @0.3.0).
 */
int wasi_add_to_linker(wasi_ctx *ctx, cm_linker *l);

/* ---- WASI 0.3 timers (the contract is at wasi_clock) ------------------- */

/* The earliest pending wait's deadline, or WASI_NO_DEADLINE. */
uint64_t wasi_ctx_next_deadline(const wasi_ctx *ctx);
/* Waits pending (deferred and not yet fired or cancelled). */
uint32_t wasi_ctx_pending_waits(const wasi_ctx *ctx);
/*
 * Settle every wait whose deadline is <= now(), then arm the next
 * deadline.  Returns how many were settled.
 */
uint32_t wasi_ctx_fire_timers(wasi_ctx *ctx);
/*
 * The built-in driver's idle step (`hostel run`, tests): nothing else is
 * ready, so sleep (clock.sleep_until; a virtual clock just advances) to
 * the earliest deadline and fire it.  Returns how many waits were
 * settled, or -1 when no wait is pending (waiting would never end).
 */
int wasi_ctx_sleep_to_next_timer(wasi_ctx *ctx);
/*
 * The same with the signature of cm_store_config.wait_host (env is the
 * wasi_ctx): 0 after settling at least one wait, -1 when none is
 * pending.
 */
int wasi_ctx_wait_host(void *env);

/*
 * Store snapshots (run/snapshot.h): what ctx holds for store s is
 * written as plain data and, restoring a snapshot into s (whose ctx is
 * configured anew: stdio, preopens, args, env, clock), made again.
 * Call once s and ctx exist, before cm_store_snapshot or
 * cm_store_restore; -1 when out of memory.
 *  - WASI 0.3 waits pending in s (cm_store_set_host_durable): a
 *    monotonic wait keeps the time it still had to wait (the monotonic
 *    clock restarts with the process), a wall-clock one its absolute
 *    time; an overdue wait fires at once.
 *  - WASI 0.2 resources (cm_store_set_host_resource_durable; the rules
 *    are durable.c's contract): stdio streams on the new stdio;
 *    preopens by guest path (a snapshot naming one the configuration
 *    lacks is refused); opened files, their streams and directory
 *    streams opened again by preopen and path with their access,
 *    offset or position, one that cannot be opened failing on its next
 *    use; pollables as the waits; errors by errno.
 *  - WASI 0.3 stdio streams (cm_store_set_host_end_durable; cli_p3.c):
 *    an open stdout or stderr stream writes on to the new stdio, a
 *    stdin stream reads the new stdin, a result not yet read is still
 *    answered; an async write-via-stream in flight comes back
 *    cancelled.  Arguments,
 *    environment, random and clocks are the new ctx's: nothing saved.
 */
int wasi_ctx_durable(wasi_ctx *ctx, cm_store *s);

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

/*
 * wasi_snapshot_preview1 for core modules (preview1.c), over a wasi_ctx
 * configured as for WASI 0.2 (args, env, stdio, preopens, clock).
 * Guest fds 0-2 are stdio, 3.. the ctx's preopens in order; paths are
 * confined exactly as wasi:filesystem's.  proc_exit sets
 * wasi_ctx_exited / wasi_ctx_exit_code (the full u32 code) and traps
 * with WASI_EXIT_TRAP_MSG.  Use: wasi_p1_new, wasi_p1_link (once) before
 * wasm_instantiate, wasi_p1_set_memory with the instance's "memory"
 * export before any call; free the wasi_p1 after the store, before the
 * ctx.
 */
#define WASI_P1_MODULE "wasi_snapshot_preview1"

typedef struct wasi_p1 wasi_p1;

wasi_p1 *wasi_p1_new(wasi_ctx *ctx); /* NULL: out of memory or bad fd */
void wasi_p1_free(wasi_p1 *p);
/* True when the import comes from module wasi_snapshot_preview1. */
bool wasi_p1_is_import(const wasm_import *im);
/*
 * Fill imports[i] with a host function (created in s) for every
 * wasi_snapshot_preview1 import of m; other imports are left alone.
 * Returns -1 with *bad the index of the first import that is not a
 * preview1 function this host implements with that type (UINT32_MAX:
 * out of memory, or a second call).
 */
int wasi_p1_link(wasi_p1 *p, wasm_store *s, const wasm_module *m,
		 wasm_extern *imports, uint32_t *bad);
/* The memory guest pointers refer to (calls before this get FAULT). */
void wasi_p1_set_memory(wasi_p1 *p, wasm_memory *mem);

#endif
