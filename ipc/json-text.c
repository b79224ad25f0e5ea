/*
 * json-text.c - compact JSON text of a jansson value (json-text.h).
 *
 * The escaping follows jansson's dump: quote, backslash and the five
 * control characters with short forms get them, other control characters
 * \u00XX with capital hex digits, everything else (UTF-8 included, which
 * jansson has already checked) as it is.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - reserve: the text of a value the caller holds (a request's, at most
 *    VARLINK_MESSAGE_MAX of input; a result the runtime lifted,
 *    limits.hostBytes); json_text_bound lets callers skip writing it.
 *    Recursion is bounded by JSON_TEXT_DEPTH_MAX (2048).
 */
#include "config.h"

#include "ipc/json-text.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int reserve(struct json_text *t, size_t more)
{
	size_t need = t->len + more + 1, cap;
	char *buf;

	if (need <= t->cap)
		return 0;
	cap = t->cap ? t->cap : 256;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	buf = realloc(t->buf, cap);
	if (!buf)
		return -ENOMEM;
	t->buf = buf;
	t->cap = cap;
	return 0;
}

static int put(struct json_text *t, const char *s, size_t n)
{
	if (reserve(t, n))
		return -ENOMEM;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
	return 0;
}

static int put_int(struct json_text *t, json_int_t v)
{
	char num[24], *e = num + sizeof(num), *p = e;
	/* Through unsigned: the most negative value has no positive twin. */
	unsigned long long u =
		v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10));
	if (v < 0)
		*--p = '-';
	return put(t, p, (size_t)(e - p));
}

static int put_string(struct json_text *t, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i = 0;

	if (put(t, "\"", 1))
		return -ENOMEM;
	while (i < n) {
		size_t run = i;
		unsigned char c;
		char esc[6] = {'\\', 'u', '0', '0', 0, 0};
		const char *e = esc;
		size_t el = 2;

		while (run < n && (unsigned char)s[run] >= 0x20 &&
		       s[run] != '"' && s[run] != '\\')
			run++;
		if (put(t, s + i, run - i))
			return -ENOMEM;
		if ((i = run) >= n)
			break;
		switch ((c = (unsigned char)s[i++])) {
		case '"':
			e = "\\\"";
			break;
		case '\\':
			e = "\\\\";
			break;
		case '\b':
			e = "\\b";
			break;
		case '\f':
			e = "\\f";
			break;
		case '\n':
			e = "\\n";
			break;
		case '\r':
			e = "\\r";
			break;
		case '\t':
			e = "\\t";
			break;
		default:
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			el = 6;
		}
		if (put(t, e, el))
			return -ENOMEM;
	}
	return put(t, "\"", 1);
}

/* jansson formats reals (precision, exponent, the ".0" it adds). */
static int put_real(struct json_text *t, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	int rc;

	if (!s)
		return -ENOMEM;
	rc = put(t, s, strlen(s));
	free(s);
	return rc;
}

static int put_value(struct json_text *t, const json_t *v, int depth)
{
	size_t i, n;
	void *it;
	bool first = true;

	if (depth > JSON_TEXT_DEPTH_MAX)
		return -ELOOP;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (put(t, "{", 1))
			return -ENOMEM;
		/* Casts: jansson's iterators take a non-const object.  Keys
		 * by length: since 2.14 they may hold a NUL. */
		for (it = json_object_iter((json_t *)v); it;
		     it = json_object_iter_next((json_t *)v, it)) {
			int rc;

			if ((!first && put(t, ",", 1)) ||
			    put_string(t, json_object_iter_key(it),
				       json_object_iter_key_len(it)) ||
			    put(t, ":", 1))
				return -ENOMEM;
			if ((rc = put_value(t, json_object_iter_value(it),
					    depth + 1)))
				return rc;
			first = false;
		}
		return put(t, "}", 1);
	case JSON_ARRAY:
		if (put(t, "[", 1))
			return -ENOMEM;
		n = json_array_size(v);
		for (i = 0; i < n; i++) {
			int rc;

			if (i && put(t, ",", 1))
				return -ENOMEM;
			if ((rc = put_value(t, json_array_get(v, i),
					    depth + 1)))
				return rc;
		}
		return put(t, "]", 1);
	case JSON_STRING:
		return put_string(t, json_string_value(v),
				  json_string_length(v));
	case JSON_INTEGER:
		return put_int(t, json_integer_value(v));
	case JSON_REAL:
		return put_real(t, v);
	case JSON_TRUE:
		return put(t, "true", 4);
	case JSON_FALSE:
		return put(t, "false", 5);
	case JSON_NULL:
		return put(t, "null", 4);
	}
	return -EINVAL;
}

static size_t add_sat(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* A string's text: its quotes and at most 6 bytes (\u00XX) a byte. */
static size_t string_bound(size_t n)
{
	return n > (SIZE_MAX - 2) / 6 ? SIZE_MAX : 2 + 6 * n;
}

static size_t bound_value(const json_t *v, int depth)
{
	size_t n = 2, i, len;
	void *it;

	if (depth > JSON_TEXT_DEPTH_MAX)
		return SIZE_MAX;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		/* "{}", and per member its key, ':', its value and ',' */
		for (it = json_object_iter((json_t *)v); it;
		     it = json_object_iter_next((json_t *)v, it)) {
			n = add_sat(n,
				    string_bound(json_object_iter_key_len(it)));
			n = add_sat(n, 2);
			n = add_sat(n, bound_value(json_object_iter_value(it),
						   depth + 1));
		}
		return n;
	case JSON_ARRAY:
		len = json_array_size(v);
		for (i = 0; i < len; i++)
			n = add_sat(
				add_sat(n, 1),
				bound_value(json_array_get(v, i), depth + 1));
		return n;
	case JSON_STRING:
		return string_bound(json_string_length(v));
	case JSON_INTEGER:
		return 20; /* -9223372036854775808 */
	case JSON_REAL:
		return 32; /* %.17g: -1.2345678901234567e-308 is 24 */
	case JSON_TRUE:
	case JSON_NULL:
		return 4;
	case JSON_FALSE:
		return 5;
	}
	return SIZE_MAX;
}

size_t json_text_bound(const json_t *v)
{
	return v ? bound_value(v, 0) : SIZE_MAX;
}

int json_text_put(struct json_text *t, const json_t *v)
{
	size_t start = t->len;
	int rc = v ? put_value(t, v, 0) : -EINVAL;

	if (rc) {
		t->len = start;
		if (t->buf)
			t->buf[start] = '\0';
		return rc;
	}
	t->buf[t->len] = '\0';
	return 0;
}

void json_text_reset(struct json_text *t)
{
	t->len = 0;
	if (t->buf)
		t->buf[0] = '\0';
}

void json_text_free(struct json_text *t)
{
	free(t->buf);
	t->buf = NULL;
	t->len = t->cap = 0;
}
