/*
 * val.c - cm_val: constructors, deep free/copy, structural equality, the
 * type check, and the UTF-8 helpers shared by the ABI and WAVE.
 *
 * Contract (val.h): a cm_val owns its strings, elements and payloads and
 * nothing behind handles; every allocation is checked and a failed
 * constructor leaves a value that cm_val_free accepts.  Recursion follows
 * the value's nesting, which for values made by lifting is bounded by the
 * type depth limit (CM_MAX_TYPE_DEPTH).
 *
 * Allocations sized by a guest or a client (issue 18 audit): the
 * constructors (cm_val_string, cm_val_seq, cm_val_bytes*, payloads),
 * cm_val_list_pack (n bytes for a list of n elements it then frees) and
 * cm_val_copy allocate what their caller asks for: a lift charges the
 * store's budget first (abi.c, string.c), WAVE parsing is bounded by its
 * text (wave.c), copies (cm_val_copy) are of values the embedder handed
 * in or of values already bounded; recursion follows the value's nesting
 * (the type's depth, CM_MAX_TYPE_DEPTH).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/val.h"

/* ---- scalars ------------------------------------------------------------- */

static cm_val mk(cm_type_kind k)
{
	cm_val v;

	memset(&v, 0, sizeof v);
	v.kind = k;
	return v;
}

cm_val cm_val_bool(bool b)
{
	cm_val v = mk(CM_BOOL);

	v.u.b = b;
	return v;
}

#define SIGNED(name, K, T)                                                     \
	cm_val name(T x)                                                       \
	{                                                                      \
		cm_val v = mk(K);                                              \
		v.u.s = x;                                                     \
		return v;                                                      \
	}
#define UNSIGNED(name, K, T)                                                   \
	cm_val name(T x)                                                       \
	{                                                                      \
		cm_val v = mk(K);                                              \
		v.u.u = x;                                                     \
		return v;                                                      \
	}
SIGNED(cm_val_s8, CM_S8, int8_t)
SIGNED(cm_val_s16, CM_S16, int16_t)
SIGNED(cm_val_s32, CM_S32, int32_t)
SIGNED(cm_val_s64, CM_S64, int64_t)
UNSIGNED(cm_val_u8, CM_U8, uint8_t)
UNSIGNED(cm_val_u16, CM_U16, uint16_t)
UNSIGNED(cm_val_u32, CM_U32, uint32_t)
UNSIGNED(cm_val_u64, CM_U64, uint64_t)
#undef SIGNED
#undef UNSIGNED

cm_val cm_val_f32_bits(uint32_t bits)
{
	cm_val v = mk(CM_F32);

	v.u.f32 = bits;
	return v;
}

cm_val cm_val_f64_bits(uint64_t bits)
{
	cm_val v = mk(CM_F64);

	v.u.f64 = bits;
	return v;
}

cm_val cm_val_f32(float f)
{
	uint32_t b;

	memcpy(&b, &f, sizeof b);
	return cm_val_f32_bits(b);
}

cm_val cm_val_f64(double d)
{
	uint64_t b;

	memcpy(&b, &d, sizeof b);
	return cm_val_f64_bits(b);
}

cm_val cm_val_char(uint32_t c)
{
	cm_val v = mk(CM_CHAR);

	v.u.c = c;
	return v;
}

cm_val cm_val_flags(uint32_t bits)
{
	cm_val v = mk(CM_FLAGS);

	v.u.flags = bits;
	return v;
}

cm_val cm_val_handle(cm_type_kind kind, const struct cabi_resource_type *rt,
		     uint64_t rep)
{
	cm_val v = mk(kind);

	v.u.handle.rt = rt;
	v.u.handle.rep = rep;
	return v;
}

cm_val cm_val_case(cm_type_kind kind, uint32_t index)
{
	cm_val v = mk(kind);

	v.u.variant.index = index;
	return v;
}

/* ---- UTF-8 -----------------------------------------------------------------
 */

bool cm_utf8_valid(const uint8_t *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		uint8_t b = s[i];
		uint32_t c, min;
		size_t n;

		if (b < 0x80) {
			i++;
			continue;
		}
		if (b >= 0xc2 && b <= 0xdf) {
			n = 1;
			c = b & 0x1f;
			min = 0x80;
		} else if (b >= 0xe0 && b <= 0xef) {
			n = 2;
			c = b & 0x0f;
			min = 0x800;
		} else if (b >= 0xf0 && b <= 0xf4) {
			n = 3;
			c = b & 0x07;
			min = 0x10000;
		} else {
			return false;
		}
		if (len - i - 1 < n)
			return false;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			c = (c << 6) | (s[i + k] & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			return false;
		i += n + 1;
	}
	return true;
}

uint32_t cm_utf8_next(const uint8_t *s, size_t *i)
{
	uint8_t b = s[*i];
	uint32_t c;
	size_t n;

	if (b < 0x80) {
		*i += 1;
		return b;
	}
	if (b < 0xe0) {
		n = 1;
		c = b & 0x1f;
	} else if (b < 0xf0) {
		n = 2;
		c = b & 0x0f;
	} else {
		n = 3;
		c = b & 0x07;
	}
	for (size_t k = 1; k <= n; k++)
		c = (c << 6) | (s[*i + k] & 0x3f);
	*i += n + 1;
	return c;
}

size_t cm_utf8_put(uint8_t *buf, uint32_t c)
{
	if (c < 0x80) {
		buf[0] = (uint8_t)c;
		return 1;
	}
	if (c < 0x800) {
		buf[0] = (uint8_t)(0xc0 | (c >> 6));
		buf[1] = (uint8_t)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		buf[0] = (uint8_t)(0xe0 | (c >> 12));
		buf[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
		buf[2] = (uint8_t)(0x80 | (c & 0x3f));
		return 3;
	}
	buf[0] = (uint8_t)(0xf0 | (c >> 18));
	buf[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3f));
	buf[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
	buf[3] = (uint8_t)(0x80 | (c & 0x3f));
	return 4;
}

/* ---- compound values --------------------------------------------------------
 */

void cm_val_string_take(cm_val *out, uint8_t *buf, size_t len)
{
	*out = mk(CM_STRING);
	buf[len] = 0;
	out->u.str.ptr = buf;
	out->u.str.len = len;
	out->u.str.src_encoding = CM_UTF8;
	out->u.str.src_tagged_code_units = len;
}

int cm_val_string(cm_val *out, const void *bytes, size_t len)
{
	uint8_t *buf;

	*out = cm_val_bool(false);
	if (len > 0 && !cm_utf8_valid(bytes, len))
		return -2;
	if (len == SIZE_MAX)
		return -1;
	buf = malloc(len + 1);
	if (buf == NULL)
		return -1;
	if (len > 0)
		memcpy(buf, bytes, len);
	cm_val_string_take(out, buf, len);
	return 0;
}

int cm_val_seq(cm_val *out, cm_type_kind kind, uint32_t n)
{
	*out = mk(kind);
	if (n == 0)
		return 0;
	out->u.list.elems = calloc(n, sizeof(cm_val));
	if (out->u.list.elems == NULL) {
		*out = cm_val_bool(false);
		return -1;
	}
	/* calloc gives kind 0 == CM_BOOL, u.b false: freeable as is */
	out->u.list.n = n;
	return 0;
}

int cm_val_bytes_alloc(cm_val *out, uint32_t n)
{
	*out = mk(CM_LIST);
	if (n == 0)
		return 0;
	out->u.list.bytes = malloc(n);
	if (out->u.list.bytes == NULL) {
		*out = cm_val_bool(false);
		return -1;
	}
	out->u.list.n = n;
	return 0;
}

int cm_val_bytes(cm_val *out, const void *p, uint32_t n)
{
	if (cm_val_bytes_alloc(out, n))
		return -1;
	if (n > 0)
		memcpy(out->u.list.bytes, p, n);
	return 0;
}

void cm_val_bytes_take(cm_val *out, uint8_t *buf, uint32_t n)
{
	*out = mk(CM_LIST);
	if (n == 0) {
		free(buf);
		return;
	}
	out->u.list.bytes = buf;
	out->u.list.n = n;
}

/* The byte of element e of a list<u8>/list<s8> in element form, or -1
 * when e is neither a u8 nor an s8 in range. */
static int elem_byte(const cm_val *e)
{
	if (e->kind == CM_U8 && e->u.u <= UINT8_MAX)
		return (int)e->u.u;
	if (e->kind == CM_S8 && e->u.s >= INT8_MIN && e->u.s <= INT8_MAX)
		return (int)(uint8_t)(int8_t)e->u.s;
	return -1;
}

int cm_val_list_pack(cm_val *v)
{
	uint8_t *b;
	uint32_t n = v->u.list.n;

	if (v->kind != CM_LIST || v->u.list.bytes != NULL || n == 0)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		if (elem_byte(&v->u.list.elems[i]) < 0)
			return -2;
	b = malloc(n);
	if (b == NULL)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		b[i] = (uint8_t)elem_byte(&v->u.list.elems[i]);
	free(v->u.list.elems); /* u8/s8 elements own nothing */
	v->u.list.elems = NULL;
	v->u.list.bytes = b;
	return 0;
}

int cm_val_case_payload(cm_val *out, cm_type_kind kind, uint32_t index)
{
	*out = cm_val_case(kind, index);
	out->u.variant.payload = calloc(1, sizeof(cm_val));
	if (out->u.variant.payload == NULL) {
		*out = cm_val_bool(false);
		return -1;
	}
	return 0;
}

/* ---- whole values
 * ------------------------------------------------------------ */

static bool is_seq(cm_type_kind k)
{
	return k == CM_LIST || k == CM_RECORD || k == CM_TUPLE || k == CM_MAP;
}

static bool is_case(cm_type_kind k)
{
	return k == CM_VARIANT || k == CM_ENUM || k == CM_OPTION ||
	       k == CM_RESULT;
}

void cm_val_free(cm_val *v)
{
	if (v == NULL)
		return;
	if (v->kind == CM_STRING) {
		free(v->u.str.ptr);
	} else if (is_seq(v->kind)) {
		if (v->u.list.bytes == NULL)
			cm_vals_free(v->u.list.elems, v->u.list.n);
		free(v->u.list.elems);
		free(v->u.list.bytes);
	} else if (is_case(v->kind) && v->u.variant.payload != NULL) {
		cm_val_free(v->u.variant.payload);
		free(v->u.variant.payload);
	}
	*v = cm_val_bool(false);
}

void cm_vals_free(cm_val *vs, uint32_t n)
{
	if (vs == NULL)
		return;
	for (uint32_t i = 0; i < n; i++)
		cm_val_free(&vs[i]);
}

uint64_t cm_val_host_bytes(const cm_val *v)
{
	uint64_t n = 0;

	switch (v->kind) {
	case CM_STRING:
		return v->u.str.len + 1;
	case CM_LIST:
	case CM_MAP:
	case CM_RECORD:
	case CM_TUPLE:
		if (v->u.list.bytes != NULL)
			return v->u.list.n; /* byte form: 1 byte an element */
		n = (uint64_t)v->u.list.n * sizeof(cm_val);
		for (uint32_t i = 0; i < v->u.list.n; i++)
			n += cm_val_host_bytes(&v->u.list.elems[i]);
		return n;
	case CM_VARIANT:
	case CM_ENUM:
	case CM_OPTION:
	case CM_RESULT:
		if (v->u.variant.payload == NULL)
			return 0;
		return sizeof(cm_val) + cm_val_host_bytes(v->u.variant.payload);
	default:
		return 0;
	}
}

uint64_t cm_vals_host_bytes(const cm_val *vs, uint32_t n)
{
	uint64_t sum = (uint64_t)n * sizeof(cm_val);

	for (uint32_t i = 0; i < n; i++)
		sum += cm_val_host_bytes(&vs[i]);
	return sum;
}

int cm_val_copy(cm_val *dst, const cm_val *src)
{
	if (src->kind == CM_STRING) {
		uint8_t *buf = malloc(src->u.str.len + 1);

		*dst = cm_val_bool(false);
		if (buf == NULL)
			return -1;
		if (src->u.str.len > 0)
			memcpy(buf, src->u.str.ptr, src->u.str.len);
		buf[src->u.str.len] = 0;
		*dst = *src;
		dst->u.str.ptr = buf;
		return 0;
	}
	if (is_seq(src->kind) && src->u.list.bytes != NULL) {
		if (cm_val_bytes(dst, src->u.list.bytes, src->u.list.n))
			return -1;
		dst->kind = src->kind;
		return 0;
	}
	if (is_seq(src->kind)) {
		if (cm_val_seq(dst, src->kind, src->u.list.n))
			return -1;
		for (uint32_t i = 0; i < src->u.list.n; i++) {
			if (cm_val_copy(&dst->u.list.elems[i],
					&src->u.list.elems[i])) {
				cm_val_free(dst);
				return -1;
			}
		}
		return 0;
	}
	if (is_case(src->kind) && src->u.variant.payload != NULL) {
		if (cm_val_case_payload(dst, src->kind, src->u.variant.index))
			return -1;
		if (cm_val_copy(dst->u.variant.payload,
				src->u.variant.payload)) {
			cm_val_free(dst);
			return -1;
		}
		return 0;
	}
	*dst = *src;
	return 0;
}

/* A byte-form list and an element-form list of the same length: equal
 * when every element is a u8 or s8 whose byte is the same. */
static bool bytes_equal_elems(const cm_val *bytes, const cm_val *elems)
{
	for (uint32_t i = 0; i < bytes->u.list.n; i++) {
		const cm_val *e = &elems->u.list.elems[i];

		uint8_t x = bytes->u.list.bytes[i];

		if (e->kind == CM_U8 && e->u.u == x)
			continue;
		if (e->kind == CM_S8 && e->u.s == (int8_t)x)
			continue;
		return false;
	}
	return true;
}

bool cm_val_equal(const cm_val *a, const cm_val *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case CM_BOOL:
		return a->u.b == b->u.b;
	case CM_S8:
	case CM_S16:
	case CM_S32:
	case CM_S64:
		return a->u.s == b->u.s;
	case CM_U8:
	case CM_U16:
	case CM_U32:
	case CM_U64:
		return a->u.u == b->u.u;
	case CM_F32:
		return a->u.f32 == b->u.f32;
	case CM_F64:
		return a->u.f64 == b->u.f64;
	case CM_CHAR:
		return a->u.c == b->u.c;
	case CM_STRING:
		return a->u.str.len == b->u.str.len &&
		       (a->u.str.len == 0 ||
			memcmp(a->u.str.ptr, b->u.str.ptr, a->u.str.len) == 0);
	case CM_FLAGS:
		return a->u.flags == b->u.flags;
	case CM_OWN:
	case CM_BORROW:
		return a->u.handle.rt == b->u.handle.rt &&
		       a->u.handle.rep == b->u.handle.rep;
	case CM_STREAM:
	case CM_FUTURE:
	case CM_ERROR_CONTEXT:
		return a->u.async.obj == b->u.async.obj &&
		       a->u.async.index == b->u.async.index;
	default:
		break;
	}
	if (is_seq(a->kind)) {
		if (a->u.list.n != b->u.list.n)
			return false;
		if (a->u.list.n == 0)
			return true;
		if (a->u.list.bytes != NULL && b->u.list.bytes != NULL)
			return memcmp(a->u.list.bytes, b->u.list.bytes,
				      a->u.list.n) == 0;
		if (a->u.list.bytes != NULL)
			return bytes_equal_elems(a, b);
		if (b->u.list.bytes != NULL)
			return bytes_equal_elems(b, a);
		for (uint32_t i = 0; i < a->u.list.n; i++)
			if (!cm_val_equal(&a->u.list.elems[i],
					  &b->u.list.elems[i]))
				return false;
		return true;
	}
	if (is_case(a->kind)) {
		if (a->u.variant.index != b->u.variant.index)
			return false;
		if ((a->u.variant.payload == NULL) !=
		    (b->u.variant.payload == NULL))
			return false;
		return a->u.variant.payload == NULL ||
		       cm_val_equal(a->u.variant.payload, b->u.variant.payload);
	}
	return false;
}

/* ---- type check
 * ----------------------------------------------------------------- */

static bool why(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool why(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (buf != NULL && len > 0) {
		va_start(ap, fmt);
		vsnprintf(buf, len, fmt, ap);
		va_end(ap);
	}
	return false;
}

static bool int_in_range(const cm_val *v)
{
	switch (v->kind) {
	case CM_S8:
		return v->u.s >= INT8_MIN && v->u.s <= INT8_MAX;
	case CM_S16:
		return v->u.s >= INT16_MIN && v->u.s <= INT16_MAX;
	case CM_S32:
		return v->u.s >= INT32_MIN && v->u.s <= INT32_MAX;
	case CM_U8:
		return v->u.u <= UINT8_MAX;
	case CM_U16:
		return v->u.u <= UINT16_MAX;
	case CM_U32:
		return v->u.u <= UINT32_MAX;
	default:
		return true;
	}
}

bool cm_val_typecheck(const cm_val *v, const cm_type *t, char *w, size_t wl)
{
	uint32_t n;

	if (v->kind != t->kind)
		return why(w, wl, "expected %s, found %s",
			   cm_type_kind_name(t->kind),
			   cm_type_kind_name(v->kind));
	switch (t->kind) {
	case CM_S8:
	case CM_S16:
	case CM_S32:
	case CM_U8:
	case CM_U16:
	case CM_U32:
		if (!int_in_range(v))
			return why(w, wl, "%s value out of range",
				   cm_type_kind_name(t->kind));
		return true;
	case CM_CHAR:
		if (v->u.c >= 0x110000 ||
		    (v->u.c >= 0xd800 && v->u.c <= 0xdfff))
			return why(w, wl, "char is not a Unicode scalar value");
		return true;
	case CM_STRING:
		if (v->u.str.ptr == NULL ||
		    !cm_utf8_valid(v->u.str.ptr, v->u.str.len))
			return why(w, wl, "string is not valid UTF-8");
		return true;
	case CM_FLAGS:
		n = t->u.flags.n;
		if (n < 32 && (v->u.flags >> n) != 0)
			return why(w, wl, "flag bits beyond the labels");
		return true;
	case CM_LIST:
	case CM_MAP: {
		const cm_type *e =
			t->kind == CM_LIST ? t->u.list.elem : t->u.map.entry;

		if (t->kind == CM_LIST && t->u.list.len != 0 &&
		    v->u.list.n != t->u.list.len)
			return why(w, wl,
				   "fixed-length list has %u elements, "
				   "expected %u",
				   v->u.list.n, t->u.list.len);
		if (v->u.list.n == 0)
			return true;
		if (cm_type_is_bytes(t) != (v->u.list.bytes != NULL))
			return why(w, wl, "list<%s> value in %s form",
				   cm_type_kind_name(e->kind),
				   v->u.list.bytes != NULL ? "byte"
							   : "element");
		if (v->u.list.bytes != NULL)
			return true; /* every byte is a u8 or an s8 */
		for (uint32_t i = 0; i < v->u.list.n; i++)
			if (!cm_val_typecheck(&v->u.list.elems[i], e, w, wl))
				return false;
		return true;
	}
	case CM_RECORD:
	case CM_TUPLE:
		n = cm_type_nfields(t);
		if (v->u.list.n != n)
			return why(w, wl, "%s has %u fields, expected %u",
				   cm_type_kind_name(t->kind), v->u.list.n, n);
		if (v->u.list.bytes != NULL)
			return why(w, wl, "%s value in byte form",
				   cm_type_kind_name(t->kind));
		for (uint32_t i = 0; i < n; i++)
			if (!cm_val_typecheck(&v->u.list.elems[i],
					      cm_type_field(t, i), w, wl))
				return false;
		return true;
	case CM_VARIANT:
	case CM_ENUM:
	case CM_OPTION:
	case CM_RESULT: {
		const cm_type *c;

		if (v->u.variant.index >= cm_type_ncases(t))
			return why(w, wl, "%s case index %u out of range",
				   cm_type_kind_name(t->kind),
				   v->u.variant.index);
		c = cm_type_case(t, v->u.variant.index);
		if ((c == NULL) != (v->u.variant.payload == NULL))
			return why(w, wl, "%s case payload %s",
				   cm_type_kind_name(t->kind),
				   c == NULL ? "not expected" : "missing");
		return c == NULL ||
		       cm_val_typecheck(v->u.variant.payload, c, w, wl);
	}
	default:
		return true;
	}
}
