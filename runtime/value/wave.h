/*
 * wave.h - WAVE, the WebAssembly Value Encoding: the ecosystem's text form
 * of component values (wasm-tools' wasm-wave README is the spec), parsed
 * into and printed from cm_val given the value's cm_type.
 *
 * Parsing follows the spec: whitespace and `//` comments between tokens;
 * bools; base-10 integers (range-checked for the type); floats as JSON
 * numbers or nan / inf / -inf (an integer literal is a float too);
 * chars 'x' and strings "..." with the escapes \' \" \\ \t \n \r and
 * \u{hex} (a literal newline must be escaped; raw UTF-8 otherwise), and
 * multiline strings """...""" with dedent; tuples (a, b); lists [a, b]
 * (fixed-length lists must have exactly N elements); records {f: v}
 * (fields in any order, option fields that are none may be omitted, the
 * empty record is {:}); variants case / case(payload); enums; options
 * some(x) / none or, when the payload is not an option or result, the
 * bare payload; results ok / ok(x) / err / err(x) or the bare ok payload
 * under the same rule; flags {a, b} or {}; maps as lists of (key, value)
 * tuples.  Trailing commas are accepted everywhere.  Labels are kebab
 * case, optionally prefixed with `%` (required for cases named like a
 * keyword: true false inf nan some none ok err).  Resources, streams,
 * futures and error contexts have no WAVE syntax yet: parsing them fails.
 *
 * Printing matches wasm-wave's writer: lists [a, b], records with none
 * fields omitted ({:} when nothing is left), options some(x)/none (never
 * flat), `%` before keyword-named cases, floats as the shortest decimal
 * that reads back to the same bits (nan, inf, -inf), control characters
 * as \u{hex}.  Handles print as a non-standard, unparseable
 * `own<rep N>` / `borrow<rep N>` / `stream<N>` / `future<N>` /
 * `error-context<N>` so that results holding them can still be shown.
 *
 * Errors are values: a wave_error with the byte offset, 1-based line and
 * column of the offending token and a message ("expected `,` or `]`",
 * "integer out of range for u8", "unknown case `foo`").  Input need not
 * be NUL-terminated.
 */
#ifndef HOSTEL_VALUE_WAVE_H
#define HOSTEL_VALUE_WAVE_H

#include <stddef.h>
#include <stdint.h>

#include "value/type.h"
#include "value/val.h"

typedef struct wave_error {
	size_t offset;	       /* byte offset into the input */
	uint32_t line, column; /* 1-based; column counts bytes */
	char msg[160];
	int nomem; /* 1 when the failure was an allocation failure */
} wave_error;

/* Parse exactly one value of type t (surrounding whitespace allowed). */
int wave_parse(const char *text, size_t len, const cm_type *t, cm_val *out,
	       wave_error *err);

/*
 * Print v (of type t) as WAVE.  *out is a malloc'd NUL-terminated string
 * and *outlen its length.  Returns -1 when out of memory or when v does
 * not match t.
 */
int wave_print(const cm_val *v, const cm_type *t, char **out, size_t *outlen);

/*
 * A call expression `name(arg, ...)` (WAVE appendix "Function calls"):
 * the name is everything before the first `(` (trimmed; any characters,
 * so `ns:pkg/iface#f` and `[method]r.m` work); a bare name without
 * parentheses is a call with no arguments.  Trailing `none` arguments of
 * option type may be omitted.
 *
 * `lookup` maps the name to the CM_FUNC type (NULL: "unknown function").
 */
typedef const cm_type *(*wave_lookup_fn)(void *env, const char *name,
					 size_t len);

typedef struct wave_call {
	char *name; /* malloc'd, NUL-terminated */
	size_t name_len;
	const cm_type *func; /* CM_FUNC */
	uint32_t nargs;
	cm_val *args; /* nargs values, malloc'd */
} wave_call;

int wave_parse_call(const char *text, size_t len, wave_lookup_fn lookup,
		    void *env, wave_call *out, wave_error *err);
void wave_call_free(wave_call *c);

/*
 * Print function results for a call: nothing for no result, else the
 * single value as wave_print does.  Convenience for hostel run/call.
 */
int wave_print_results(const cm_type *func, const cm_val *results, char **out,
		       size_t *outlen);

#endif
