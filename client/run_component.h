/*
 * run_component.h - the component branch of `hostel run` (run.c decides
 * by the binary's header and hands components over here).
 */
#ifndef HOSTEL_CLIENT_RUN_COMPONENT_H
#define HOSTEL_CLIENT_RUN_COMPONENT_H

#include <stdbool.h>
#include <stdint.h>

/* True when the file at path starts with a component preamble. */
bool run_is_component_file(const char *path);

/*
 * Load and instantiate the component at path, call `invoke` (a WAVE call
 * expression, or NULL for wasi:cli/run's `run`) with `fuel` (0 =
 * unlimited) and print the result in WAVE.  Returns the exit code.
 */
int run_component(const char *path, const char *invoke, uint64_t fuel);

#endif
