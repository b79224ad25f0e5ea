/*
 * payload.c - JSON object text for event payloads (see payload.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - payload_*: one payload's text, grown as members are added; callers
 *    pass bounded members and history_batch_add refuses a payload past
 *    HISTORY_PAYLOAD_MAX.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/payload.h"

static void put(struct payload *p, const char *s, size_t n)
{
	if (p->failed)
		return;
	if (p->len + n + 1 > p->cap) {
		size_t cap = p->cap ? p->cap : 128;
		char *buf;

		while (cap < p->len + n + 1)
			cap *= 2;
		buf = realloc(p->buf, cap);
		if (!buf) {
			p->failed = true;
			return;
		}
		p->buf = buf;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
	p->buf[p->len] = '\0';
}

static void puts_(struct payload *p, const char *s)
{
	put(p, s, strlen(s));
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

void payload_string(struct payload *p, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	put(p, "\"", 1);
	while (i < len) {
		size_t run = i, n;
		char esc[8];

		/* Copy runs of plain characters at once. */
		while (run < len && u[run] >= 0x20 && u[run] < 0x80 &&
		       u[run] != '"' && u[run] != '\\')
			run++;
		put(p, s + i, run - i);
		i = run;
		if (i >= len)
			break;
		switch (u[i]) {
		case '"':
			put(p, "\\\"", 2);
			i++;
			continue;
		case '\\':
			put(p, "\\\\", 2);
			i++;
			continue;
		case '\n':
			put(p, "\\n", 2);
			i++;
			continue;
		case '\t':
			put(p, "\\t", 2);
			i++;
			continue;
		case '\r':
			put(p, "\\r", 2);
			i++;
			continue;
		}
		if (u[i] < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", u[i]);
			put(p, esc, 6);
			i++;
			continue;
		}
		n = utf8_len(u + i, len - i);
		if (n) {
			put(p, s + i, n);
			i += n;
		} else {
			put(p, "\xef\xbf\xbd", 3); /* U+FFFD */
			i++;
		}
	}
	put(p, "\"", 1);
}

/* Keys are the code's own names: plain ASCII goes out in one piece. */
static void key(struct payload *p, const char *k)
{
	size_t n = strlen(k), i = 0, m = 0;
	char buf[64];

	while (i < n && (unsigned char)k[i] >= 0x20 &&
	       (unsigned char)k[i] < 0x80 && k[i] != '"' && k[i] != '\\')
		i++;
	if (i == n && n + 4 <= sizeof(buf)) {
		if (p->need_comma)
			buf[m++] = ',';
		buf[m++] = '"';
		memcpy(buf + m, k, n);
		m += n;
		buf[m++] = '"';
		buf[m++] = ':';
		put(p, buf, m);
	} else {
		if (p->need_comma)
			put(p, ",", 1);
		payload_string(p, k, n);
		put(p, ":", 1);
	}
	p->need_comma = true;
}

void payload_begin(struct payload *p)
{
	memset(p, 0, sizeof(*p));
	put(p, "{", 1);
}

void payload_strn(struct payload *p, const char *k, const char *value,
		  size_t len)
{
	key(p, k);
	if (value)
		payload_string(p, value, len);
	else
		puts_(p, "null");
}

void payload_str(struct payload *p, const char *k, const char *value)
{
	payload_strn(p, k, value, value ? strlen(value) : 0);
}

/* Digits by hand: snprintf was a tenth of a call's history work. */
void payload_int(struct payload *p, const char *k, int64_t value)
{
	char num[24], *e = num + sizeof(num), *d = e;
	/* Through unsigned: INT64_MIN has no positive twin. */
	uint64_t u = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;

	key(p, k);
	do
		*--d = (char)('0' + u % 10);
	while ((u /= 10));
	if (value < 0)
		*--d = '-';
	put(p, d, (size_t)(e - d));
}

void payload_bool(struct payload *p, const char *k, bool value)
{
	key(p, k);
	puts_(p, value ? "true" : "false");
}

void payload_raw(struct payload *p, const char *k, const char *json)
{
	key(p, k);
	puts_(p, json ? json : "null");
}

void payload_object(struct payload *p, const char *k)
{
	key(p, k);
	put(p, "{", 1);
	p->need_comma = false;
}

void payload_end_object(struct payload *p)
{
	put(p, "}", 1);
	p->need_comma = true;
}

char *payload_finish(struct payload *p)
{
	char *out;

	put(p, "}", 1);
	if (p->failed) {
		payload_clear(p);
		return NULL;
	}
	out = p->buf;
	memset(p, 0, sizeof(*p));
	return out;
}

void payload_clear(struct payload *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

/* ---- checking ------------------------------------------------------------
 */

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n &&
	       (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A string starting at s[*i] == '"'; *i moves past its closing quote. */
static bool scan_string(const char *s, size_t n, size_t *i)
{
	size_t k = *i + 1;

	while (k < n) {
		unsigned char c = (unsigned char)s[k];

		if (c == '"') {
			*i = k + 1;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			if (++k >= n)
				return false;
			c = (unsigned char)s[k];
			if (c == 'u') {
				if (n - k < 5 || !is_hex(s[k + 1]) ||
				    !is_hex(s[k + 2]) || !is_hex(s[k + 3]) ||
				    !is_hex(s[k + 4]))
					return false;
				k += 4;
			} else if (!(c == '"' || c == '\\' || c == '/' ||
				     c == 'b' || c == 'f' || c == 'n' ||
				     c == 'r' || c == 't')) {
				return false;
			}
		}
		k++;
	}
	return false;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? at s[*i]. */
static bool scan_number(const char *s, size_t n, size_t *i)
{
	size_t k = *i;

	if (k < n && s[k] == '-')
		k++;
	if (k >= n || !is_digit(s[k]))
		return false;
	if (s[k] == '0')
		k++;
	else
		while (k < n && is_digit(s[k]))
			k++;
	if (k < n && s[k] == '.') {
		if (++k >= n || !is_digit(s[k]))
			return false;
		while (k < n && is_digit(s[k]))
			k++;
	}
	if (k < n && (s[k] == 'e' || s[k] == 'E')) {
		k++;
		if (k < n && (s[k] == '+' || s[k] == '-'))
			k++;
		if (k >= n || !is_digit(s[k]))
			return false;
		while (k < n && is_digit(s[k]))
			k++;
	}
	*i = k;
	return true;
}

static bool scan_word(const char *s, size_t n, size_t *i, const char *w)
{
	size_t l = strlen(w);

	if (n - *i < l || memcmp(s + *i, w, l))
		return false;
	*i += l;
	return true;
}

/* A scalar (string, number, true, false, null) at s[*i]. */
static bool scan_scalar(const char *s, size_t n, size_t *i)
{
	switch (s[*i]) {
	case '"':
		return scan_string(s, n, i);
	case 't':
		return scan_word(s, n, i, "true");
	case 'f':
		return scan_word(s, n, i, "false");
	case 'n':
		return scan_word(s, n, i, "null");
	default:
		return scan_number(s, n, i);
	}
}

/*
 * Iterative, so that hostile nesting costs a byte of stack per level and
 * never recursion: `open` holds '{' or '[' for each level entered.
 */
bool payload_valid_object(const char *s, size_t n)
{
	char open[PAYLOAD_DEPTH_MAX];
	size_t depth = 0, i = skip_ws(s, 0, n);
	bool want_key;

	if (i >= n || s[i] != '{')
		return false;
	for (;;) {
		/* At a value. */
		i = skip_ws(s, i, n);
		if (i >= n)
			return false;
		if (s[i] == '{' || s[i] == '[') {
			char close = s[i] == '{' ? '}' : ']';

			if (depth == PAYLOAD_DEPTH_MAX)
				return false;
			open[depth++] = s[i];
			i = skip_ws(s, i + 1, n);
			if (i < n && s[i] == close) {
				depth--;
				i++;
			} else {
				want_key = close == '}';
				goto next;
			}
		} else if (!scan_scalar(s, n, &i)) {
			return false;
		}
		/* After a value: a comma, a close, or the end. */
		for (;;) {
			i = skip_ws(s, i, n);
			if (depth == 0)
				return i == n;
			if (i >= n)
				return false;
			if (s[i] == ',') {
				i++;
				want_key = open[depth - 1] == '{';
				break;
			}
			if (s[i] != (open[depth - 1] == '{' ? '}' : ']'))
				return false;
			depth--;
			i++;
		}
	next:
		if (want_key) {
			i = skip_ws(s, i, n);
			if (i >= n || s[i] != '"' || !scan_string(s, n, &i))
				return false;
			i = skip_ws(s, i, n);
			if (i >= n || s[i] != ':')
				return false;
			i++;
		}
	}
}
