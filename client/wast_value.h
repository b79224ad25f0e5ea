/*
 * wast_value.h - core values of the JSON test scripts: parsing arguments,
 * matching results against expected patterns, and printing both.
 *
 * Contract: values follow the core suite's README ("Values" and
 * "Comparing results"): integers are signed decimal strings, floats the
 * decimal of their bit patterns, v128 an array of lanes; expected results
 * may also be nan:canonical / nan:arithmetic (per float or float lane),
 * `either` alternatives, null patterns (any null reference matches) and
 * absent values (any non-null reference of that kind).  Nothing here
 * aborts on bad JSON: parse errors come back as messages.
 */
#ifndef HOSTEL_CLIENT_WAST_VALUE_H
#define HOSTEL_CLIENT_WAST_VALUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "wasm/wasm.h"

/*
 * An argument: fills *out and returns 0, or returns -1 with a reason in
 * why[0..n).
 */
int wast_value_parse_arg(json_t *v, wasm_val *out, char *why, size_t n);

/*
 * Whether `got` matches the expected pattern `exp`.  A malformed pattern
 * never matches (and says why in why[0..n) when why is not NULL).
 */
bool wast_value_matches(json_t *exp, const wasm_val *got, char *why, size_t n);

/* A value as text ("i32:-1", "f32:0x7fc00000 (nan)", "v128:...") */
void wast_value_format(const wasm_val *v, char *buf, size_t n);

/* An expected pattern as compact text (its JSON). */
void wast_pattern_format(json_t *exp, char *buf, size_t n);

#endif
