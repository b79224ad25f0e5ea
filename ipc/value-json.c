/*
 * value-json.c - cm_val <-> JSON in the canonical shapes of
 * value-json.h.  Conversion walks the type, never the JSON, so hostile
 * nesting cannot go deeper than the (validated) type.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - the cm_vals of a call's arguments (value_args_from_json): one per
 *    JSON value of a request (VARLINK_MESSAGE_MAX); base64 bytes decoded
 *    into len / 4 * 3 + 1, which a list<u8> then keeps as its bytes
 *    (val.h byte form; a JSON array for a list<u8>/list<s8> is made
 *    element by element, then packed into n bytes); strings copied at
 *    their length.  Conversion
 *    walks the type, so nesting is the (validated) type's.
 *  - value_to_json of a value the runtime lifted (limits.hostBytes):
 *    base64 text of a list<u8> ((n + 2) / 3 * 4 + 1; a fixed-length
 *    list<u8, N> first gathers its N bytes), one json_t per element
 *    otherwise.
 */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/value-json.h"

#define PATH_MAX_LEN 200

static const char *kind_name(cm_type_kind k)
{
	static const char *const names[] = {
		[CM_BOOL] = "bool",	[CM_S8] = "s8",
		[CM_U8] = "u8",		[CM_S16] = "s16",
		[CM_U16] = "u16",	[CM_S32] = "s32",
		[CM_U32] = "u32",	[CM_S64] = "s64",
		[CM_U64] = "u64",	[CM_F32] = "f32",
		[CM_F64] = "f64",	[CM_CHAR] = "char",
		[CM_STRING] = "string", [CM_ERROR_CONTEXT] = "error-context",
		[CM_LIST] = "list",	[CM_RECORD] = "record",
		[CM_TUPLE] = "tuple",	[CM_VARIANT] = "variant",
		[CM_ENUM] = "enum",	[CM_OPTION] = "option",
		[CM_RESULT] = "result", [CM_FLAGS] = "flags",
		[CM_OWN] = "own",	[CM_BORROW] = "borrow",
		[CM_STREAM] = "stream", [CM_FUTURE] = "future",
		[CM_MAP] = "map",
	};

	if ((unsigned)k < sizeof(names) / sizeof(names[0]) && names[k])
		return names[k];
	return "value";
}

static int fail(char *why, size_t whylen, const char *path, const char *fmt,
		...) __attribute__((format(printf, 4, 5)));

static int fail(char *why, size_t whylen, const char *path, const char *fmt,
		...)
{
	va_list ap;
	int n;

	if (!why || !whylen)
		return -1;
	n = snprintf(why, whylen, "%s: ", path);
	if (n < 0 || (size_t)n >= whylen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(why + n, whylen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static const char *json_kind(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "a value";
}

static int mismatch(char *why, size_t whylen, const char *path,
		    const cm_type *t, const char *want, const json_t *j)
{
	return fail(why, whylen, path, "expected %s for %s, found %s", want,
		    kind_name(t->kind), json_kind(j));
}

/* ---- base64 --------------------------------------------------------- */

static const char b64[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *value_base64_encode(const uint8_t *p, size_t n)
{
	char *out = malloc((n + 2) / 3 * 4 + 1);
	char *o = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 |
			     p[i + 2];

		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = b64[(v >> 6) & 63];
		*o++ = b64[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int value_base64_decode(const char *s, size_t len, uint8_t **out,
			size_t *outlen)
{
	uint8_t *buf;
	size_t n = 0, pad = 0;

	if (len % 4)
		return -1;
	if (len && s[len - 1] == '=')
		pad++;
	if (len > 1 && s[len - 2] == '=')
		pad++;
	buf = malloc(len / 4 * 3 + 1);
	if (!buf)
		return -2;
	for (size_t i = 0; i < len; i += 4) {
		int v[4];
		bool last = i + 4 == len;

		for (int k = 0; k < 4; k++) {
			v[k] = b64_value(s[i + k]);
			if (v[k] < 0 &&
			    !(last && s[i + k] == '=' && k >= 4 - (int)pad)) {
				free(buf);
				return -1;
			}
		}
		buf[n++] = (uint8_t)(v[0] << 2 | v[1] >> 4);
		if (!(last && pad >= 2))
			buf[n++] = (uint8_t)((v[1] & 15) << 4 | v[2] >> 2);
		if (!(last && pad >= 1))
			buf[n++] = (uint8_t)((v[2] & 3) << 6 | v[3]);
	}
	*out = buf;
	*outlen = n;
	return 0;
}

/* ---- JSON -> value -------------------------------------------------- */

static void sub_path(char *dst, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void sub_path(char *dst, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(dst, PATH_MAX_LEN, "%s", path);

	if (n < 0 || n >= PATH_MAX_LEN)
		return;
	va_start(ap, fmt);
	vsnprintf(dst + n, PATH_MAX_LEN - (size_t)n, fmt, ap);
	va_end(ap);
}

/* An integer from a JSON integer, an integral real or a decimal string. */
static int get_int(const json_t *j, bool is_signed, int64_t *s, uint64_t *u,
		   const char **err)
{
	*err = NULL;
	if (json_is_integer(j)) {
		json_int_t v = json_integer_value(j);

		if (!is_signed && v < 0) {
			*err = "out of range";
			return -1;
		}
		*s = v;
		*u = (uint64_t)v;
		return 0;
	}
	if (json_is_real(j)) {
		double d = json_real_value(j);

		if (d != floor(d) || fabs(d) > (double)VALUE_JSON_EXACT_MAX) {
			*err = "not an exact integer";
			return -1;
		}
		if (!is_signed && d < 0) {
			*err = "out of range";
			return -1;
		}
		*s = (int64_t)d;
		*u = (uint64_t)(int64_t)d;
		return 0;
	}
	if (json_is_string(j)) {
		const char *p = json_string_value(j);
		size_t len = json_string_length(j);
		bool neg = false;
		uint64_t acc = 0;
		size_t i = 0;

		if (len && p[0] == '-') {
			neg = true;
			i = 1;
		}
		if (i == len || len > 21) {
			*err = "not a decimal integer";
			return -1;
		}
		for (; i < len; i++) {
			if (p[i] < '0' || p[i] > '9') {
				*err = "not a decimal integer";
				return -1;
			}
			if (acc > (UINT64_MAX - (uint64_t)(p[i] - '0')) / 10) {
				*err = "out of range";
				return -1;
			}
			acc = acc * 10 + (uint64_t)(p[i] - '0');
		}
		if (neg) {
			if (!is_signed && acc) {
				*err = "out of range";
				return -1;
			}
			if (acc > (uint64_t)INT64_MAX + 1) {
				*err = "out of range";
				return -1;
			}
			*s = acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN
							    : -(int64_t)acc;
			*u = 0;
			return 0;
		}
		if (is_signed && acc > (uint64_t)INT64_MAX) {
			*err = "out of range";
			return -1;
		}
		*s = (int64_t)acc;
		*u = acc;
		return 0;
	}
	*err = "";
	return -1;
}

static int int_from_json(const json_t *j, const cm_type *t, const char *path,
			 cm_val *out, char *why, size_t whylen)
{
	static const struct {
		bool sign;
		int64_t min;
		uint64_t max;
	} r[] = {
		[CM_S8] = {true, INT8_MIN, INT8_MAX},
		[CM_U8] = {false, 0, UINT8_MAX},
		[CM_S16] = {true, INT16_MIN, INT16_MAX},
		[CM_U16] = {false, 0, UINT16_MAX},
		[CM_S32] = {true, INT32_MIN, INT32_MAX},
		[CM_U32] = {false, 0, UINT32_MAX},
		[CM_S64] = {true, INT64_MIN, INT64_MAX},
		[CM_U64] = {false, 0, UINT64_MAX},
	};
	const char *err;
	int64_t s = 0;
	uint64_t u = 0;

	if (get_int(j, r[t->kind].sign, &s, &u, &err)) {
		if (!*err)
			return mismatch(why, whylen, path, t, "an integer", j);
		return fail(why, whylen, path, "%s for %s", err,
			    kind_name(t->kind));
	}
	if (r[t->kind].sign
		    ? (s < r[t->kind].min || s > (int64_t)r[t->kind].max)
		    : u > r[t->kind].max)
		return fail(why, whylen, path, "out of range for %s",
			    kind_name(t->kind));
	out->kind = t->kind;
	if (r[t->kind].sign)
		out->u.s = s;
	else
		out->u.u = u;
	return 0;
}

static int float_from_json(const json_t *j, const cm_type *t, const char *path,
			   cm_val *out, char *why, size_t whylen)
{
	double d;

	if (json_is_number(j)) {
		d = json_number_value(j);
	} else if (json_is_string(j)) {
		const char *s = json_string_value(j);

		if (!strcmp(s, "nan"))
			d = NAN;
		else if (!strcmp(s, "inf"))
			d = INFINITY;
		else if (!strcmp(s, "-inf"))
			d = -INFINITY;
		else
			return fail(why, whylen, path,
				    "expected a number, \"nan\", \"inf\" or "
				    "\"-inf\" for %s",
				    kind_name(t->kind));
	} else {
		return mismatch(why, whylen, path, t, "a number", j);
	}
	*out = t->kind == CM_F32 ? cm_val_f32((float)d) : cm_val_f64(d);
	return 0;
}

static int bytes_from_json(const json_t *j, const cm_type *t, const char *path,
			   cm_val *out, char *why, size_t whylen)
{
	uint8_t *buf;
	size_t n;
	int rc = value_base64_decode(json_string_value(j),
				     json_string_length(j), &buf, &n);

	if (rc == -2)
		return -2;
	if (rc)
		return fail(why, whylen, path,
			    "expected base64 for list<u8>, found a string "
			    "that is not base64");
	if (t->u.list.len && n != t->u.list.len) {
		free(buf);
		return fail(why, whylen, path, "expected %u bytes, found %zu",
			    t->u.list.len, n);
	}
	if (n > UINT32_MAX) {
		free(buf);
		return -2;
	}
	if (cm_type_is_bytes(t)) {
		/* byte form (val.h cm_vals): the decoded buffer itself */
		cm_val_bytes_take(out, buf, (uint32_t)n);
		return 0;
	}
	if (cm_val_seq(out, CM_LIST, (uint32_t)n)) {
		free(buf);
		return -2;
	}
	for (size_t i = 0; i < n; i++)
		out->u.list.elems[i] = cm_val_u8(buf[i]);
	free(buf);
	return 0;
}

static int from_json(const json_t *j, const cm_type *t, const char *path,
		     cm_val *out, char *why, size_t whylen);

/* Each element of array j into a sequence of `kind` typed elem_t(i). */
static int seq_from_array(const json_t *j, cm_type_kind kind,
			  const cm_type *const *elems, const cm_type *elem,
			  const char *path, cm_val *out, char *why,
			  size_t whylen)
{
	size_t n = json_array_size(j);
	char sub[PATH_MAX_LEN];

	if (n > UINT32_MAX || cm_val_seq(out, kind, (uint32_t)n))
		return -2;
	for (size_t i = 0; i < n; i++) {
		int rc;

		sub_path(sub, path, "[%zu]", i);
		rc = from_json(json_array_get(j, i), elems ? elems[i] : elem,
			       sub, &out->u.list.elems[i], why, whylen);
		if (rc)
			return rc;
	}
	return 0;
}

static int record_from_json(const json_t *j, const cm_type *t, const char *path,
			    cm_val *out, char *why, size_t whylen)
{
	const char *key;
	json_t *v;
	char sub[PATH_MAX_LEN];

	if (!json_is_object(j))
		return mismatch(why, whylen, path, t, "an object", j);
	json_object_foreach((json_t *)j, key, v)
	{
		uint32_t i;

		for (i = 0; i < t->u.record.n; i++)
			if (!strcmp(t->u.record.fields[i].label.ptr, key))
				break;
		if (i == t->u.record.n)
			return fail(why, whylen, path,
				    "no field named \"%s\" in the record", key);
	}
	if (cm_val_seq(out, CM_RECORD, t->u.record.n))
		return -2;
	for (uint32_t i = 0; i < t->u.record.n; i++) {
		const cm_field *f = &t->u.record.fields[i];
		int rc;

		v = json_object_get(j, f->label.ptr);
		sub_path(sub, path, ".%s", f->label.ptr);
		if (!v) {
			if (f->type->kind != CM_OPTION)
				return fail(why, whylen, sub,
					    "missing record field");
			out->u.list.elems[i] = cm_val_case(CM_OPTION, 0);
			continue;
		}
		rc = from_json(v, f->type, sub, &out->u.list.elems[i], why,
			       whylen);
		if (rc)
			return rc;
	}
	return 0;
}

/* A case with an optional payload of type pt from JSON value pv. */
static int case_from_json(cm_type_kind kind, uint32_t index, const cm_type *pt,
			  const json_t *pv, const char *path, cm_val *out,
			  char *why, size_t whylen)
{
	if (!pt) {
		if (pv && !json_is_null(pv))
			return fail(why, whylen, path,
				    "this case has no payload, found %s",
				    json_kind(pv));
		*out = cm_val_case(kind, index);
		return 0;
	}
	if (!pv)
		return fail(why, whylen, path, "missing payload");
	if (cm_val_case_payload(out, kind, index))
		return -2;
	return from_json(pv, pt, path, out->u.variant.payload, why, whylen);
}

static int variant_from_json(const json_t *j, const cm_type *t,
			     const char *path, cm_val *out, char *why,
			     size_t whylen)
{
	const char *label, *key;
	json_t *v;
	char sub[PATH_MAX_LEN];

	if (!json_is_object(j))
		return mismatch(why, whylen, path, t,
				"{\"case\": ..., \"value\": ...}", j);
	json_object_foreach((json_t *)j, key, v)
	{
		if (strcmp(key, "case") && strcmp(key, "value"))
			return fail(why, whylen, path,
				    "unexpected member \"%s\" in a variant",
				    key);
	}
	label = json_string_value(json_object_get(j, "case"));
	if (!label)
		return fail(why, whylen, path,
			    "a variant needs \"case\": a label");
	for (uint32_t i = 0; i < t->u.variant.n; i++) {
		const cm_field *f = &t->u.variant.fields[i];

		if (strcmp(f->label.ptr, label))
			continue;
		sub_path(sub, path, ".%s", label);
		return case_from_json(CM_VARIANT, i, f->type,
				      json_object_get(j, "value"), sub, out,
				      why, whylen);
	}
	return fail(why, whylen, path, "unknown case \"%s\"", label);
}

static int label_index(const cm_type *t, const char *s, uint32_t *idx)
{
	for (uint32_t i = 0; i < t->u.enm.n; i++)
		if (!strcmp(t->u.enm.labels[i].ptr, s)) {
			*idx = i;
			return 0;
		}
	return -1;
}

static int flags_from_json(const json_t *j, const cm_type *t, const char *path,
			   cm_val *out, char *why, size_t whylen)
{
	uint32_t bits = 0, idx;
	size_t i;
	json_t *v;

	if (!json_is_array(j))
		return mismatch(why, whylen, path, t, "an array of labels", j);
	json_array_foreach(j, i, v)
	{
		if (!json_is_string(v))
			return fail(why, whylen, path,
				    "flags: expected label strings, found %s",
				    json_kind(v));
		if (label_index(t, json_string_value(v), &idx))
			return fail(why, whylen, path, "unknown flag \"%s\"",
				    json_string_value(v));
		bits |= 1u << idx;
	}
	*out = cm_val_flags(bits);
	return 0;
}

static int result_from_json(const json_t *j, const cm_type *t, const char *path,
			    cm_val *out, char *why, size_t whylen)
{
	json_t *ok, *err;
	char sub[PATH_MAX_LEN];

	if (!json_is_object(j) || json_object_size(j) != 1)
		return mismatch(why, whylen, path, t,
				"{\"ok\": ...} or {\"err\": ...}", j);
	ok = json_object_get(j, "ok");
	err = json_object_get(j, "err");
	if (ok) {
		sub_path(sub, path, ".ok");
		return case_from_json(CM_RESULT, 0, t->u.result.ok, ok, sub,
				      out, why, whylen);
	}
	if (err) {
		sub_path(sub, path, ".err");
		return case_from_json(CM_RESULT, 1, t->u.result.err, err, sub,
				      out, why, whylen);
	}
	return mismatch(why, whylen, path, t, "{\"ok\": ...} or {\"err\": ...}",
			j);
}

static int option_from_json(const json_t *j, const cm_type *t, const char *path,
			    cm_val *out, char *why, size_t whylen)
{
	const cm_type *elem = t->u.option.elem;
	char sub[PATH_MAX_LEN];

	if (json_is_null(j)) {
		*out = cm_val_case(CM_OPTION, 0);
		return 0;
	}
	if (elem->kind == CM_OPTION) {
		/* option<option<T>>: some(x) is {"some": x}. */
		json_t *some = json_object_get(j, "some");

		if (!json_is_object(j) || json_object_size(j) != 1 || !some)
			return mismatch(why, whylen, path, t,
					"null or {\"some\": ...}", j);
		sub_path(sub, path, ".some");
		j = some;
		path = sub;
	}
	if (cm_val_case_payload(out, CM_OPTION, 1))
		return -2;
	return from_json(j, elem, path, out->u.variant.payload, why, whylen);
}

static int char_from_json(const json_t *j, const cm_type *t, const char *path,
			  cm_val *out, char *why, size_t whylen)
{
	const uint8_t *s = (const uint8_t *)json_string_value(j);
	size_t len, i = 0;
	uint32_t c;

	if (!s)
		return mismatch(why, whylen, path, t, "a string", j);
	len = json_string_length(j);
	if (!len || !cm_utf8_valid(s, len))
		return fail(why, whylen, path,
			    "expected one character, found an empty string");
	c = cm_utf8_next(s, &i);
	if (i != len)
		return fail(why, whylen, path,
			    "expected one character, found a longer string");
	*out = cm_val_char(c);
	return 0;
}

static int from_json(const json_t *j, const cm_type *t, const char *path,
		     cm_val *out, char *why, size_t whylen)
{
	*out = cm_val_bool(false);
	switch (t->kind) {
	case CM_BOOL:
		if (!json_is_boolean(j))
			return mismatch(why, whylen, path, t, "true or false",
					j);
		*out = cm_val_bool(json_is_true(j));
		return 0;
	case CM_S8:
	case CM_U8:
	case CM_S16:
	case CM_U16:
	case CM_S32:
	case CM_U32:
	case CM_S64:
	case CM_U64:
		return int_from_json(j, t, path, out, why, whylen);
	case CM_F32:
	case CM_F64:
		return float_from_json(j, t, path, out, why, whylen);
	case CM_CHAR:
		return char_from_json(j, t, path, out, why, whylen);
	case CM_STRING: {
		int rc;

		if (!json_is_string(j))
			return mismatch(why, whylen, path, t, "a string", j);
		rc = cm_val_string(out, json_string_value(j),
				   json_string_length(j));
		if (rc == -2)
			return fail(why, whylen, path, "invalid UTF-8");
		return rc ? -2 : 0;
	}
	case CM_LIST:
		if (t->u.list.elem->kind == CM_U8 && json_is_string(j))
			return bytes_from_json(j, t, path, out, why, whylen);
		if (!json_is_array(j))
			return mismatch(why, whylen, path, t,
					t->u.list.elem->kind == CM_U8
						? "a base64 string"
						: "an array",
					j);
		if (t->u.list.len && json_array_size(j) != t->u.list.len)
			return fail(why, whylen, path,
				    "expected %u elements, found %zu",
				    t->u.list.len, json_array_size(j));
		if (cm_type_is_bytes(t)) {
			int rc =
				seq_from_array(j, CM_LIST, NULL, t->u.list.elem,
					       path, out, why, whylen);

			/* byte form (val.h cm_vals); the elements are in
			 * range, so packing fails only out of memory */
			if (rc == 0 && cm_val_list_pack(out))
				return -2;
			return rc;
		}
		return seq_from_array(j, CM_LIST, NULL, t->u.list.elem, path,
				      out, why, whylen);
	case CM_MAP:
		if (!json_is_array(j))
			return mismatch(why, whylen, path, t,
					"an array of [key, value] pairs", j);
		return seq_from_array(j, CM_MAP, NULL, t->u.map.entry, path,
				      out, why, whylen);
	case CM_TUPLE:
		if (!json_is_array(j))
			return mismatch(why, whylen, path, t, "an array", j);
		if (json_array_size(j) != t->u.tuple.n)
			return fail(why, whylen, path,
				    "expected %u elements, found %zu",
				    t->u.tuple.n, json_array_size(j));
		return seq_from_array(j, CM_TUPLE, t->u.tuple.elems, NULL, path,
				      out, why, whylen);
	case CM_RECORD:
		return record_from_json(j, t, path, out, why, whylen);
	case CM_VARIANT:
		return variant_from_json(j, t, path, out, why, whylen);
	case CM_ENUM: {
		uint32_t idx;

		if (!json_is_string(j))
			return mismatch(why, whylen, path, t, "a label string",
					j);
		if (label_index(t, json_string_value(j), &idx))
			return fail(why, whylen, path, "unknown case \"%s\"",
				    json_string_value(j));
		*out = cm_val_case(CM_ENUM, idx);
		return 0;
	}
	case CM_OPTION:
		return option_from_json(j, t, path, out, why, whylen);
	case CM_RESULT:
		return result_from_json(j, t, path, out, why, whylen);
	case CM_FLAGS:
		return flags_from_json(j, t, path, out, why, whylen);
	default:
		return fail(why, whylen, path,
			    "%s values cannot be passed as JSON",
			    kind_name(t->kind));
	}
}

int value_from_json(const json_t *j, const cm_type *t, const char *path,
		    cm_val *out, char *why, size_t whylen)
{
	int rc;

	if (why && whylen)
		why[0] = '\0';
	*out = cm_val_bool(false);
	if (!j)
		return fail(why, whylen, path ? path : "value",
			    "missing value");
	rc = from_json(j, t, path ? path : "value", out, why, whylen);
	if (rc) {
		cm_val_free(out);
		if (rc == -2 && why && whylen)
			snprintf(why, whylen, "out of memory");
	}
	return rc;
}

/* ---- value -> JSON -------------------------------------------------- */

static json_t *int_to_json(bool is_signed, int64_t s, uint64_t u)
{
	char buf[24];

	if (is_signed) {
		if (s >= -(int64_t)VALUE_JSON_EXACT_MAX &&
		    s <= (int64_t)VALUE_JSON_EXACT_MAX)
			return json_integer(s);
		snprintf(buf, sizeof(buf), "%lld", (long long)s);
		return json_string(buf);
	}
	if (u <= VALUE_JSON_EXACT_MAX)
		return json_integer((json_int_t)u);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)u);
	return json_string(buf);
}

static json_t *float_to_json(double d)
{
	if (isnan(d))
		return json_string("nan");
	if (isinf(d))
		return json_string(d > 0 ? "inf" : "-inf");
	return json_real(d);
}

static json_t *to_json(const cm_val *v, const cm_type *t);

static json_t *seq_to_json(const cm_val *v, const cm_type *const *elems,
			   const cm_type *elem)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a && i < v->u.list.n; i++)
		if (json_array_append_new(a,
					  to_json(&v->u.list.elems[i],
						  elems ? elems[i] : elem))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *payload_json(const cm_val *v, const cm_type *pt)
{
	if (!pt || !v->u.variant.payload)
		return json_null();
	return to_json(v->u.variant.payload, pt);
}

static json_t *to_json(const cm_val *v, const cm_type *t)
{
	switch (t->kind) {
	case CM_BOOL:
		return json_boolean(v->u.b);
	case CM_S8:
	case CM_S16:
	case CM_S32:
	case CM_S64:
		return int_to_json(true, v->u.s, 0);
	case CM_U8:
	case CM_U16:
	case CM_U32:
	case CM_U64:
		return int_to_json(false, 0, v->u.u);
	case CM_F32: {
		float f;

		memcpy(&f, &v->u.f32, sizeof(f));
		return float_to_json(f);
	}
	case CM_F64: {
		double d;

		memcpy(&d, &v->u.f64, sizeof(d));
		return float_to_json(d);
	}
	case CM_CHAR: {
		uint8_t buf[5];
		size_t n = cm_utf8_put(buf, v->u.c);

		return json_stringn((const char *)buf, n);
	}
	case CM_STRING:
		return json_stringn((const char *)v->u.str.ptr, v->u.str.len);
	case CM_LIST:
		if (v->u.list.bytes != NULL && t->u.list.elem->kind == CM_S8) {
			json_t *a = json_array();

			for (uint32_t i = 0; a && i < v->u.list.n; i++) {
				int8_t x = (int8_t)v->u.list.bytes[i];

				if (json_array_append_new(
					    a, int_to_json(true, x, 0))) {
					json_decref(a);
					return NULL;
				}
			}
			return a;
		}
		if (t->u.list.elem->kind == CM_U8) {
			uint8_t *bytes = v->u.list.bytes;
			char *text;
			json_t *s;

			if (bytes == NULL) { /* fixed length, or made by hand */
				bytes = malloc(v->u.list.n + 1);
				if (!bytes)
					return NULL;
				for (uint32_t i = 0; i < v->u.list.n; i++)
					bytes[i] =
						(uint8_t)v->u.list.elems[i].u.u;
			}
			text = value_base64_encode(bytes, v->u.list.n);
			if (bytes != v->u.list.bytes)
				free(bytes);
			s = text ? json_string(text) : NULL;
			free(text);
			return s;
		}
		return seq_to_json(v, NULL, t->u.list.elem);
	case CM_MAP:
		return seq_to_json(v, NULL, t->u.map.entry);
	case CM_TUPLE:
		return seq_to_json(v, t->u.tuple.elems, NULL);
	case CM_RECORD: {
		json_t *o = json_object();

		for (uint32_t i = 0; o && i < t->u.record.n; i++)
			if (json_object_set_new(
				    o, t->u.record.fields[i].label.ptr,
				    to_json(&v->u.list.elems[i],
					    t->u.record.fields[i].type))) {
				json_decref(o);
				return NULL;
			}
		return o;
	}
	case CM_VARIANT: {
		const cm_field *f = &t->u.variant.fields[v->u.variant.index];

		if (!f->type)
			return json_pack("{ss}", "case", f->label.ptr);
		return json_pack("{ss,so}", "case", f->label.ptr, "value",
				 payload_json(v, f->type));
	}
	case CM_ENUM:
		return json_string(t->u.enm.labels[v->u.variant.index].ptr);
	case CM_OPTION:
		if (v->u.variant.index == 0)
			return json_null();
		if (t->u.option.elem->kind == CM_OPTION)
			return json_pack("{so}", "some",
					 payload_json(v, t->u.option.elem));
		return payload_json(v, t->u.option.elem);
	case CM_RESULT:
		if (v->u.variant.index == 0)
			return json_pack("{so}", "ok",
					 payload_json(v, t->u.result.ok));
		return json_pack("{so}", "err",
				 payload_json(v, t->u.result.err));
	case CM_FLAGS: {
		json_t *a = json_array();

		for (uint32_t i = 0; a && i < t->u.flags.n; i++)
			if ((v->u.flags >> i & 1) &&
			    json_array_append_new(
				    a, json_string(t->u.flags.labels[i].ptr))) {
				json_decref(a);
				return NULL;
			}
		return a;
	}
	case CM_OWN:
	case CM_BORROW:
		return json_pack("{ss,sI}", "handle", kind_name(t->kind), "rep",
				 (json_int_t)v->u.handle.rep);
	default:
		return json_pack("{ss,sI}", "handle", kind_name(t->kind), "rep",
				 (json_int_t)v->u.async.index);
	}
}

json_t *value_to_json(const cm_val *v, const cm_type *t)
{
	if (!cm_val_typecheck(v, t, NULL, 0))
		return NULL;
	return to_json(v, t);
}

/* ---- function arguments --------------------------------------------- */

int value_args_from_json(const json_t *args, const cm_type *func, cm_val **vals,
			 uint32_t *n, char *why, size_t whylen)
{
	const cm_functype *ft = &func->u.func;
	char path[PATH_MAX_LEN];
	cm_val *vs;
	int rc = 0;

	*vals = NULL;
	*n = 0;
	if (why && whylen)
		why[0] = '\0';
	if (args && json_is_null(args))
		args = NULL;
	if (args && !json_is_array(args) && !json_is_object(args))
		return fail(why, whylen, "args",
			    "expected an array or an object, found %s",
			    json_kind(args));
	if (args && json_is_array(args) && json_array_size(args) != ft->nparams)
		return fail(why, whylen, "args",
			    "the function takes %u argument(s), %zu given",
			    ft->nparams, json_array_size(args));
	if (args && json_is_object(args)) {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)args, key, v)
		{
			uint32_t i;

			for (i = 0; i < ft->nparams; i++)
				if (!strcmp(ft->params[i].label.ptr, key))
					break;
			if (i == ft->nparams)
				return fail(why, whylen, "args",
					    "no parameter named \"%s\"", key);
		}
	}
	if (!args && ft->nparams) {
		/* Only all-option parameter lists may be left out. */
		for (uint32_t i = 0; i < ft->nparams; i++)
			if (ft->params[i].type->kind != CM_OPTION)
				return fail(why, whylen, "args",
					    "the function takes %u "
					    "argument(s), none given",
					    ft->nparams);
	}
	vs = calloc(ft->nparams ? ft->nparams : 1, sizeof(*vs));
	if (!vs)
		return -2;
	for (uint32_t i = 0; i < ft->nparams; i++) {
		const cm_field *p = &ft->params[i];
		const json_t *j = NULL;

		if (args && json_is_array(args))
			j = json_array_get(args, i);
		else if (args)
			j = json_object_get(args, p->label.ptr);
		snprintf(path, sizeof(path), "args.%s", p->label.ptr);
		if (!j && p->type->kind == CM_OPTION) {
			vs[i] = cm_val_case(CM_OPTION, 0);
			continue;
		}
		rc = value_from_json(j, p->type, path, &vs[i], why, whylen);
		if (rc)
			break;
	}
	if (rc) {
		cm_vals_free(vs, ft->nparams);
		free(vs);
		return rc;
	}
	*vals = vs;
	*n = ft->nparams;
	return 0;
}

json_t *value_args_to_json(const cm_val *vals, uint32_t n, const cm_type *func)
{
	json_t *a = json_array();

	for (uint32_t i = 0; a && i < n && i < func->u.func.nparams; i++)
		if (json_array_append_new(
			    a, value_to_json(&vals[i],
					     func->u.func.params[i].type))) {
			json_decref(a);
			return NULL;
		}
	return a;
}
