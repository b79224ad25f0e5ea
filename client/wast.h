/*
 * wast.h - the conformance driver's seam between the script runner
 * (wast.c: command line, files, groups, expected failures, reporting) and
 * the backends that give commands their meaning for one kind of binary.
 *
 * Contract: wast.c reads a script (the JSON that `wasm-tools
 * json-from-wast` writes), skips what no binary-only driver can run
 * (text-only modules), and hands every other command, in order, to the
 * backend of its `kind`: the command's own `kind` field when it has one
 * ("module" for a core module, "component" for a component), else the
 * kind of the last command that carried a binary.  Each backend keeps its
 * own per-script state (definitions, instances, registrations, store),
 * opened on first use and closed at the end of the script.  A backend
 * returns PASS, FAIL or SKIP and, for FAIL and SKIP, says why.
 *
 * Only the core backend exists yet; a component backend is another
 * wast_backend with kind "component" added to the table in wast.c.
 */
#ifndef HOSTEL_CLIENT_WAST_H
#define HOSTEL_CLIENT_WAST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum wast_result {
	WAST_PASS = 0,
	WAST_FAIL,
	WAST_SKIP,
} wast_result;

typedef struct wast_options {
	uint64_t fuel;		/* per action and per start function */
	size_t max_stack_bytes; /* per execution context */
	uint32_t max_call_depth;
} wast_options;

typedef struct wast_backend {
	const char *kind; /* the `kind` value of the commands it runs */
	/* Per-script state; NULL with a reason in why when it cannot start. */
	void *(*open)(const char *dir, const wast_options *opts, char *why,
		      size_t n);
	wast_result (*run)(void *state, json_t *cmd, char *why, size_t n);
	void (*close)(void *state);
} wast_backend;

extern const wast_backend wast_core_backend;
extern const wast_backend wast_component_backend; /* wast_component.c */

/*
 * The binary a command loads: `filename` for module_type "binary",
 * `binary_filename` for "text", or NULL when there is none.
 */
const char *wast_cmd_binary(json_t *cmd);

/* Reads dir/name whole; NULL on error (errno set). */
uint8_t *wast_read_file(const char *dir, const char *name, size_t *len);

#endif
