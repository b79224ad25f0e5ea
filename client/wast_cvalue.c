/*
 * wast_cvalue.c - JSON component values of the test scripts -> cm_val,
 * typed by the function's declared parameter/result types.
 *
 * Contract (wast_cvalue.h): integers are decimal strings range-checked
 * for their type, floats the decimal of their bit patterns, chars a
 * one-scalar string, records [name, value] pairs in field order (names
 * checked), variants {"case", "payload"?}, options null or the payload,
 * results {"Ok"|"Err": payload or null}, flags a list of names.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/wast_cvalue.h"

static int bad(char *why, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -1;
}

/* The JSON `type` a value of kind k is written with. */
static const char *json_kind(const cm_type *t)
{
	if (t->kind == CM_MAP)
		return "list";
	return cm_type_kind_name(t->kind);
}

static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (s == NULL || *s == '\0' || *s == '-')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || *out > max ? -1 : 0;
}

static int parse_sint(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno || *end || *out < min || *out > max ? -1 : 0;
}

static int find_label(const cm_str *labels, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(labels[i].ptr, name))
			return (int)i;
	return -1;
}

static int find_case(const cm_type *t, const char *name)
{
	for (uint32_t i = 0; i < t->u.variant.n; i++)
		if (!strcmp(t->u.variant.fields[i].label.ptr, name))
			return (int)i;
	return -1;
}

static int parse_seq(json_t *v, const cm_type *t, cm_val *out, char *why,
		     size_t n)
{
	size_t len = json_array_size(v);
	const cm_type *elem = NULL;

	if (!json_is_array(v))
		return bad(why, n, "expected a JSON array for %s",
			   json_kind(t));
	switch (t->kind) {
	case CM_LIST:
		elem = t->u.list.elem;
		if (t->u.list.len != 0 && len != t->u.list.len)
			return bad(why, n, "expected %u elements, got %zu",
				   t->u.list.len, len);
		break;
	case CM_MAP:
		elem = t->u.map.entry;
		break;
	case CM_TUPLE:
	case CM_RECORD:
		if (len != cm_type_nfields(t))
			return bad(why, n, "expected %u fields, got %zu",
				   cm_type_nfields(t), len);
		break;
	default:
		break;
	}
	if (len > UINT32_MAX || cm_val_seq(out, t->kind, (uint32_t)len))
		return bad(why, n, "out of memory");
	for (size_t i = 0; i < len; i++) {
		json_t *e = json_array_get(v, i);
		const cm_type *et = elem;

		if (t->kind == CM_RECORD) {
			const char *label = t->u.record.fields[i].label.ptr;
			const char *name =
				json_string_value(json_array_get(e, 0));

			if (json_array_size(e) != 2 || name == NULL)
				return bad(why, n,
					   "record field %zu: expected "
					   "[name, value]",
					   i);
			if (strcmp(name, label))
				return bad(why, n,
					   "record field %zu is `%s`, not `%s`",
					   i, label, name);
			e = json_array_get(e, 1);
		}
		if (et == NULL)
			et = cm_type_field(t, (uint32_t)i);
		if (wast_cvalue_parse(e, et, &out->u.list.elems[i], why, n))
			return -1;
	}
	/* a list<u8>/list<s8> is held in byte form (val.h) */
	if (cm_type_is_bytes(t) && cm_val_list_pack(out))
		return bad(why, n, "out of memory");
	return 0;
}

static int parse_case(const cm_type *t, uint32_t idx, json_t *payload,
		      cm_val *out, char *why, size_t n)
{
	const cm_type *pt = cm_type_case(t, idx);

	if (pt == NULL) {
		if (payload != NULL && !json_is_null(payload))
			return bad(why, n, "case %u has no payload", idx);
		*out = cm_val_case(t->kind, idx);
		return 0;
	}
	if (payload == NULL || json_is_null(payload))
		return bad(why, n, "case %u needs a payload", idx);
	if (cm_val_case_payload(out, t->kind, idx))
		return bad(why, n, "out of memory");
	return wast_cvalue_parse(payload, pt, out->u.variant.payload, why, n);
}

static int parse_value(json_t *v, const cm_type *t, cm_val *out, char *why,
		       size_t n)
{
	const char *s = json_string_value(v);
	uint64_t u;
	int64_t x;

	switch (t->kind) {
	case CM_BOOL:
		if (!json_is_boolean(v))
			return bad(why, n, "expected true or false");
		*out = cm_val_bool(json_is_true(v));
		return 0;
	case CM_U8:
	case CM_U16:
	case CM_U32:
	case CM_U64: {
		static const uint64_t max[] = {0xff, 0xffff, 0xffffffff,
					       UINT64_MAX};
		int k = t->kind == CM_U8    ? 0
			: t->kind == CM_U16 ? 1
			: t->kind == CM_U32 ? 2
					    : 3;

		if (parse_uint(s, max[k], &u))
			return bad(why, n, "bad %s `%s`", json_kind(t),
				   s ? s : "?");
		*out = cm_val_u64(u);
		out->kind = t->kind;
		return 0;
	}
	case CM_S8:
	case CM_S16:
	case CM_S32:
	case CM_S64: {
		int bits = t->kind == CM_S8    ? 8
			   : t->kind == CM_S16 ? 16
			   : t->kind == CM_S32 ? 32
					       : 64;
		int64_t hi = bits == 64 ? INT64_MAX
					: (int64_t)((1ull << (bits - 1)) - 1);

		if (parse_sint(s, -hi - 1, hi, &x))
			return bad(why, n, "bad %s `%s`", json_kind(t),
				   s ? s : "?");
		*out = cm_val_s64(x);
		out->kind = t->kind;
		return 0;
	}
	case CM_F32:
		if (parse_uint(s, UINT32_MAX, &u))
			return bad(why, n, "bad f32 bits `%s`", s ? s : "?");
		*out = cm_val_f32_bits((uint32_t)u);
		return 0;
	case CM_F64:
		if (parse_uint(s, UINT64_MAX, &u))
			return bad(why, n, "bad f64 bits `%s`", s ? s : "?");
		*out = cm_val_f64_bits(u);
		return 0;
	case CM_CHAR: {
		size_t len = json_string_length(v), i = 0;
		uint32_t c;

		if (s == NULL || len == 0 ||
		    !cm_utf8_valid((const uint8_t *)s, len))
			return bad(why, n, "bad char");
		c = cm_utf8_next((const uint8_t *)s, &i);
		if (i != len)
			return bad(why, n, "char holds more than one scalar");
		*out = cm_val_char(c);
		return 0;
	}
	case CM_STRING: {
		int rc;

		if (s == NULL)
			return bad(why, n, "expected a JSON string");
		rc = cm_val_string(out, s, json_string_length(v));
		if (rc == -2)
			return bad(why, n, "string is not valid UTF-8");
		return rc ? bad(why, n, "out of memory") : 0;
	}
	case CM_LIST:
	case CM_MAP:
	case CM_TUPLE:
	case CM_RECORD:
		return parse_seq(v, t, out, why, n);
	case CM_VARIANT: {
		const char *c = json_string_value(json_object_get(v, "case"));
		int idx = c ? find_case(t, c) : -1;

		if (idx < 0)
			return bad(why, n, "unknown case `%s`", c ? c : "?");
		return parse_case(t, (uint32_t)idx,
				  json_object_get(v, "payload"), out, why, n);
	}
	case CM_ENUM: {
		int idx = s ? find_label(t->u.enm.labels, t->u.enm.n, s) : -1;

		if (idx < 0)
			return bad(why, n, "unknown enum case `%s`",
				   s ? s : "?");
		*out = cm_val_case(CM_ENUM, (uint32_t)idx);
		return 0;
	}
	case CM_OPTION:
		if (json_is_null(v)) {
			*out = cm_val_case(CM_OPTION, 0);
			return 0;
		}
		return parse_case(t, 1, v, out, why, n);
	case CM_RESULT: {
		json_t *ok = json_object_get(v, "Ok");
		json_t *er = json_object_get(v, "Err");

		if (!json_is_object(v) || json_object_size(v) != 1 ||
		    (ok == NULL && er == NULL))
			return bad(why, n,
				   "expected {\"Ok\": ...} or "
				   "{\"Err\": ...}");
		return parse_case(t, ok ? 0 : 1, ok ? ok : er, out, why, n);
	}
	case CM_FLAGS: {
		uint32_t bits = 0;
		size_t i;
		json_t *f;

		if (!json_is_array(v))
			return bad(why, n, "expected an array of flag names");
		json_array_foreach(v, i, f)
		{
			const char *name = json_string_value(f);
			int idx = name ? find_label(t->u.flags.labels,
						    t->u.flags.n, name)
				       : -1;

			if (idx < 0)
				return bad(why, n, "unknown flag `%s`",
					   name ? name : "?");
			bits |= 1u << idx;
		}
		*out = cm_val_flags(bits);
		return 0;
	}
	default:
		return bad(why, n, "no literal syntax for %s values",
			   cm_type_kind_name(t->kind));
	}
}

int wast_cvalue_parse(json_t *j, const cm_type *t, cm_val *out, char *why,
		      size_t n)
{
	const char *jt = json_string_value(json_object_get(j, "type"));

	memset(out, 0, sizeof *out);
	out->kind = CM_BOOL;
	if (jt == NULL)
		return bad(why, n, "value without a type");
	if (strcmp(jt, json_kind(t)))
		return bad(why, n, "value of type %s where %s is declared", jt,
			   json_kind(t));
	return parse_value(json_object_get(j, "value"), t, out, why, n);
}
