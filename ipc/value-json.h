/*
 * value-json.h - component values (cm_val) as JSON, one canonical shape
 * per component type.  This is how arguments and results cross the wire
 * in io.hostel.Call and how they are kept in the event history.
 *
 * The shapes (hostel-protocol(7) repeats them):
 *   bool                 true / false
 *   s8..s32, u8..u32     JSON integers
 *   s64, u64             JSON integers while |v| <= 2^53 (exact in an
 *                        IEEE double, so every JSON reader keeps them);
 *                        beyond, a decimal string ("18446744073709551615").
 *                        Input accepts a decimal string for any integer.
 *   f32, f64             JSON numbers; NaN, +inf and -inf as the strings
 *                        "nan", "inf", "-inf" (JSON has no such numbers)
 *   char                 a string holding exactly one Unicode scalar
 *   string               a string
 *   list<u8>             a base64 string (RFC 4648, padded); input also
 *                        accepts an array of numbers
 *   list<T>, list<T,N>   an array
 *   record               an object keyed by field label; on input an
 *                        absent option-typed field is none, unknown
 *                        labels are refused
 *   tuple                an array of exactly its arity
 *   variant              {"case": "label", "value": v} ("value" absent
 *                        for a case without payload)
 *   enum                 the case label as a string
 *   option<T>            null for none, the bare payload for some - except
 *                        when T is itself an option: then some(x) is
 *                        {"some": x} so that some(none) ({"some": null})
 *                        differs from none (null)
 *   result<T, E>         {"ok": v} or {"err": v} (null when that side has
 *                        no payload)
 *   flags                an array of the set labels
 *   map<K, V>            an array of [key, value] pairs, order kept
 *   own, borrow, stream, future, error-context
 *                        refused as input; shown in output as
 *                        {"handle": "own", "rep": N} (not reusable)
 *
 * Contract: conversion follows the type, so recursion is bounded by the
 * type's depth (validation caps it at CM_MAX_TYPE_DEPTH) whatever the
 * JSON holds.  Input errors are values: -1 and a message naming the path
 * of the offending value ("args[1].name: expected a string").  Nothing
 * aborts on input; -2 means out of memory.
 */
#ifndef HOSTEL_IPC_VALUE_JSON_H
#define HOSTEL_IPC_VALUE_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "value/val.h"
#include "component/types.h"

/* The largest integer every JSON reader holds exactly: 2^53. */
#define VALUE_JSON_EXACT_MAX 9007199254740992ULL

/*
 * Convert j to a value of type t.  Returns 0 (*out owned by the caller),
 * -1 with why filled (then *out is a freeable bool false), or -2 when out
 * of memory.  `path` prefixes the messages (may be NULL: "value").
 */
int value_from_json(const json_t *j, const cm_type *t, const char *path,
		    cm_val *out, char *why, size_t whylen);

/* A new JSON value for v of type t; NULL when out of memory. */
json_t *value_to_json(const cm_val *v, const cm_type *t);

/*
 * Arguments of a CM_FUNC type: `args` is an array (positional) or an
 * object keyed by parameter name (absent option parameters are none);
 * NULL or JSON null means no arguments.  On success *vals holds *n values
 * (cm_vals_free + free).  Errors as value_from_json.
 */
int value_args_from_json(const json_t *args, const cm_type *func, cm_val **vals,
			 uint32_t *n, char *why, size_t whylen);

/* The arguments as a JSON array; NULL when out of memory. */
json_t *value_args_to_json(const cm_val *vals, uint32_t n, const cm_type *func);

/* base64 (RFC 4648, padded).  Encode: malloc'd NUL-terminated text or
 * NULL.  Decode: 0 and a malloc'd buffer, -1 on bad input, -2 no memory. */
char *value_base64_encode(const uint8_t *p, size_t n);
int value_base64_decode(const char *s, size_t len, uint8_t **out,
			size_t *outlen);

#endif
