/*
 * val.h - cm_val, the host's form of every Component Model value.
 *
 * A cm_val is what travels between the two halves of a cross-component
 * call (the caller's lift and the callee's lower), what the host hands to
 * an export and gets back, and what WAVE and the JSON mapping read and
 * write.  Every cm_val is *typed by* a `const cm_type *` (types.h): the
 * value itself records only the kind of its type, the type says labels,
 * payload types and so on.  Functions that need the type take it.
 *
 * Representation, by the kind of the type (cm_type_kind, NOT
 * despecialized: an option value has kind CM_OPTION):
 *   bool                  u.b
 *   s8 s16 s32 s64        u.s   (sign-extended; in range of the type)
 *   u8 u16 u32 u64        u.u   (zero-extended; in range of the type)
 *   f32 / f64             u.f32 / u.f64: the IEEE bits, so NaN payloads
 *                         survive a round trip (the ABI never changes
 *                         them; canonicalisation is not observable)
 *   char                  u.c   a Unicode scalar value
 *   string                u.str UTF-8 bytes (valid UTF-8, may hold NUL;
 *                         ptr[len] is always a NUL for convenience) plus
 *                         the source-encoding hint of definitions.py's
 *                         String triple (see cm_string)
 *   list, list<T,N>,      u.list: n elements; a record has one element
 *   record, tuple, map    per field in declaration order, a tuple one per
 *                         member, a map one CM_TUPLE (key, value) element
 *                         per entry (map = list<tuple<K,V>>, duplicates
 *                         allowed, order kept)
 *   list<u8>, list<s8>    u.list in *byte form*: n bytes at u.list.bytes,
 *                         u.list.elems NULL (see cm_vals below)
 *   variant, enum,        u.variant: the case index (declaration order;
 *   option, result        option: 0 = none, 1 = some; result: 0 = ok,
 *                         1 = err) and the payload (NULL when the case has
 *                         no payload type)
 *   flags                 u.flags: bit i = label i (at most 32 labels)
 *   own, borrow           u.handle: see cm_handle
 *   stream, future,       u.async: see cm_async_handle
 *   error-context
 *
 * Ownership: a cm_val owns everything it points to (string bytes, list
 * elements or bytes, payloads), except the objects behind handles
 * (resource types, streams, futures, error contexts), which belong to
 * the runtime.  The cm_val struct itself lives in caller storage:
 * cm_val_free releases what it owns and leaves it as a bool `false`.
 * Every allocating function returns -1 (and leaves *out freeable) when
 * malloc fails.
 */
#ifndef HOSTEL_VALUE_VAL_H
#define HOSTEL_VALUE_VAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value/type.h"

struct cabi_resource_type;
struct cm_val;

/*
 * A string: UTF-8 bytes, and the hint definitions.py keeps with a lifted
 * string (its String = (str, encoding, tagged_code_units)): the encoding
 * it was read from and the tagged code-unit count it had there.  The
 * lowering side sizes its first realloc from the hint exactly as the
 * reference does, so a guest's realloc sees the same call sequence.
 * Strings the host makes have src_encoding CM_UTF8 and
 * src_tagged_code_units = len.  A hint that does not describe `ptr`/`len`
 * (possible only if a host edits a value by hand) is ignored.
 */
typedef struct cm_string {
	uint8_t *ptr; /* never NULL once made; ptr[len] == 0 */
	size_t len;   /* bytes */
	cm_string_encoding src_encoding;
	uint64_t src_tagged_code_units;
} cm_string;

/*
 * A sequence of values: list elements, record fields, tuple members.
 *
 * Byte form.  A list<u8> or list<s8> (not fixed-length: cm_type_is_bytes)
 * holds its elements as bytes, one byte per element instead of one
 * 40-byte cm_val: `bytes` points to n bytes (the u8 values, or the s8
 * values in two's complement) and `elems` is NULL.  It is the ONLY form
 * of those types: every producer makes it (cm_val_bytes*, the ABI's
 * lift, WAVE, the JSON mapping, WASI) and cm_val_typecheck refuses a
 * non-empty list<u8>/list<s8> in element form, so a reader that knows
 * the type is list<u8> or list<s8> may read `bytes` directly (it is NULL
 * only when n == 0).  Every other sequence (fixed-length lists, lists of
 * other types, records, tuples, maps) has `bytes` NULL.  The value owns
 * the bytes (malloc'd) like elements: cm_val_free releases them,
 * cm_val_copy copies them; readers that do not know the type (free,
 * copy, equality, host bytes) tell the forms apart by `bytes` != NULL.
 * An empty list has both pointers NULL in either form.
 */
typedef struct cm_vals {
	uint32_t n;
	struct cm_val *elems; /* NULL when n == 0 or in byte form */
	uint8_t *bytes;	      /* byte form: n bytes (NULL when n == 0) */
} cm_vals;

typedef struct cm_case {
	uint32_t index;
	struct cm_val *payload; /* NULL: the case has no payload */
} cm_case;

/*
 * own/borrow as values cross the ABI: the runtime resource type and the
 * representation (what definitions.py's lift_own/lift_borrow return and
 * lower_own/lower_borrow take).  `index` is for the host's own table of
 * resources it holds (0 when unused); the ABI ignores it.  A value whose
 * rt is NULL has not been resolved by the host and cannot be lowered
 * unless the context resolves the type (cabi_hooks.resource_type).
 */
typedef struct cm_handle {
	const struct cabi_resource_type *rt;
	uint64_t rep;
	uint32_t index;
} cm_handle;

/*
 * stream/future/error-context values: the shared object (a stream or
 * future shared between its two ends, an ErrorContext) owned by the
 * run time (runtime/run); `index` as for cm_handle.
 */
typedef struct cm_async_handle {
	void *obj;
	uint32_t index;
} cm_async_handle;

typedef struct cm_val {
	cm_type_kind kind;
	union {
		bool b;
		int64_t s;
		uint64_t u;
		uint32_t f32;
		uint64_t f64;
		uint32_t c;
		cm_string str;
		cm_vals list;
		cm_case variant;
		uint32_t flags;
		cm_handle handle;
		cm_async_handle async;
	} u;
} cm_val;

/* ---- scalars (no allocation) ---------------------------------------- */

cm_val cm_val_bool(bool b);
cm_val cm_val_s8(int8_t x);
cm_val cm_val_s16(int16_t x);
cm_val cm_val_s32(int32_t x);
cm_val cm_val_s64(int64_t x);
cm_val cm_val_u8(uint8_t x);
cm_val cm_val_u16(uint16_t x);
cm_val cm_val_u32(uint32_t x);
cm_val cm_val_u64(uint64_t x);
cm_val cm_val_f32_bits(uint32_t bits);
cm_val cm_val_f64_bits(uint64_t bits);
cm_val cm_val_f32(float f);
cm_val cm_val_f64(double d);
/* A char; the caller guarantees a scalar value (cm_val_typecheck says). */
cm_val cm_val_char(uint32_t c);
cm_val cm_val_flags(uint32_t bits);
cm_val cm_val_handle(cm_type_kind kind /* CM_OWN/CM_BORROW */,
		     const struct cabi_resource_type *rt, uint64_t rep);
/* An enum case, or a variant/option/result case without payload. */
cm_val cm_val_case(cm_type_kind kind, uint32_t index);

/* ---- compound values (allocate; -1 on allocation failure) ----------- */

/*
 * A string from UTF-8 bytes (copied).  Returns -1 when out of memory and
 * -2 when `bytes` is not valid UTF-8 (then *out is a valid empty value).
 */
int cm_val_string(cm_val *out, const void *bytes, size_t len);
/* Same, taking ownership of a malloc'd buffer of len + 1 bytes whose
 * bytes are already known to be valid UTF-8 (buf[len] is set to 0). */
void cm_val_string_take(cm_val *out, uint8_t *buf, size_t len);

/*
 * A list/record/tuple/map value of `kind` with n elements, each
 * initialised to bool false (so the whole value is freeable at any
 * point); fill u.list.elems[i] afterwards.
 */
int cm_val_seq(cm_val *out, cm_type_kind kind, uint32_t n);

/*
 * Byte-form lists (list<u8>, list<s8>; see cm_vals).  cm_val_bytes
 * copies n bytes from p (p may be NULL when n == 0); cm_val_bytes_alloc
 * makes room for n bytes, left uninitialised, at out->u.list.bytes for
 * the caller to fill; cm_val_bytes_take takes ownership of a malloc'd
 * buffer of n bytes (freed at once when n == 0).  -1 when out of memory
 * (then *out is bool false).
 */
int cm_val_bytes(cm_val *out, const void *p, uint32_t n);
int cm_val_bytes_alloc(cm_val *out, uint32_t n);
void cm_val_bytes_take(cm_val *out, uint8_t *buf, uint32_t n);

/*
 * Turn a list made in element form (cm_val_seq, then elements of kind
 * CM_U8 or CM_S8) into byte form, for producers that build element by
 * element; a list already in byte form, or empty, is left as it is.
 * -1 when out of memory (v unchanged), -2 when an element is not a u8 /
 * s8 in range (v unchanged).
 */
int cm_val_list_pack(cm_val *v);

/* Is t a type whose values are in byte form: list<u8> or list<s8>? */
static inline bool cm_type_is_bytes(const cm_type *t)
{
	return t->kind == CM_LIST && t->u.list.len == 0 &&
	       (t->u.list.elem->kind == CM_U8 || t->u.list.elem->kind == CM_S8);
}

/*
 * A variant/option/result case with a payload slot (initialised to bool
 * false) at u.variant.payload; fill it afterwards.
 */
int cm_val_case_payload(cm_val *out, cm_type_kind kind, uint32_t index);

/* ---- whole values ---------------------------------------------------- */

/* Release what v owns; v becomes bool false.  NULL-safe. */
void cm_val_free(cm_val *v);
void cm_vals_free(cm_val *vs, uint32_t n);

/*
 * The host memory v owns (and what lifting it charges to a store's
 * budget, cabi.h cabi_budget): every element array, payload and
 * string's bytes, and a byte-form list's n bytes (1 per element); for
 * vs, the array of n values too.
 */
uint64_t cm_val_host_bytes(const cm_val *v);
uint64_t cm_vals_host_bytes(const cm_val *vs, uint32_t n);

/* Deep copy.  -1 when out of memory (then *dst is bool false). */
int cm_val_copy(cm_val *dst, const cm_val *src);

/*
 * Structural equality: same kind and contents; floats and chars by bits,
 * strings by bytes (the source-encoding hint is ignored), handles by
 * (rt, rep).
 */
bool cm_val_equal(const cm_val *a, const cm_val *b);

/*
 * Does v have type t?  Checks kinds, counts, case indices and payload
 * presence, ranges of small integers, char scalar values, flag bits
 * beyond the label count, UTF-8 of strings, fixed list lengths, and
 * the form of lists (byte form exactly for list<u8>/list<s8>).  On a
 * mismatch returns false and writes a reason ("field 2: expected u8,
 * found string") into why (may be NULL).
 */
bool cm_val_typecheck(const cm_val *v, const cm_type *t, char *why,
		      size_t whylen);

/* UTF-8 helpers shared with the ABI and WAVE (RFC 3629: no surrogates,
 * no overlong forms, at most U+10FFFF). */
bool cm_utf8_valid(const uint8_t *s, size_t len);
/* Decode one scalar at s[*i] (valid UTF-8 assumed); advances *i. */
uint32_t cm_utf8_next(const uint8_t *s, size_t *i);
/* Encode scalar c into buf (4 bytes room); returns the byte count. */
size_t cm_utf8_put(uint8_t *buf, uint32_t c);

#endif
