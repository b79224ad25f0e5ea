/*
 * run_component.h - the component branch of `hostel run` (run.c decides
 * by the binary's header and hands components over here).
 */
#ifndef HOSTEL_CLIENT_RUN_COMPONENT_H
#define HOSTEL_CLIENT_RUN_COMPONENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wasi/wasi.h"

/* WASI configuration from the command line (run.c). */
typedef struct run_wasi_opts {
	const char **dirs; /* "HOST::GUEST" (or "DIR": the same both ways) */
	uint32_t ndirs;
	const char **envs; /* "K=V" */
	uint32_t nenvs;
	const char *const *args; /* args[0] is the program (the file) */
	uint32_t nargs;
} run_wasi_opts;

/* Append s to a growing array of strings; -1 (message printed) on OOM. */
int run_wasi_add(const char ***v, uint32_t *n, const char *s);

/*
 * A WASI context from the command line (also for preview1 core modules,
 * run.c); NULL with a message printed on failure.
 */
wasi_ctx *run_wasi_ctx(const run_wasi_opts *o);

/* True when the file at path starts with a component preamble. */
bool run_is_component_file(const char *path);

/*
 * Load and instantiate the component at path with a WASI 0.2 context
 * built from `wasi`, call `invoke` (a WAVE call expression, or NULL for
 * wasi:cli/run's `run`) with `fuel` (0 = unlimited) and print the result
 * in WAVE.  Returns the exit code (the guest's, when it exits through
 * wasi:cli/exit or its run returns).
 */
int run_component(const char *path, const char *invoke, uint64_t fuel,
		  const run_wasi_opts *wasi);

#endif
