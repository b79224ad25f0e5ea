/*
 * wave.c - the WAVE parser (text -> cm_val, guided by the cm_type) and the
 * call-expression parser.  The printer is in wave_print.c.
 *
 * Contract (wave.h): a recursive-descent parser over bytes that never
 * reads past `len`, returns every failure as a wave_error with the
 * position of the offending token, and frees whatever it had built.
 * Recursion follows the type, whose nesting validation bounds.
 *
 * Allocations sized by a guest or a client (issue 18 audit): the text
 * (a client's call arguments: at most VARLINK_MESSAGE_MAX, 16 MiB, in
 * hosteld) is the input.
 *  - sb_put (strings, names), parse_multiline's line arrays: at most the
 *    text's length, by doubling.
 *  - parse_seq (list elements), tuples and records: one cm_val (40
 *    bytes) per element, each element taking at least two bytes of text
 *    (a value and a separator): at most 20 times the text, twice that
 *    while the array doubles; tuples' and records' counts are the
 *    static type's.
 *  - parse_bytes (list<u8>, list<s8>, held in byte form): one byte per
 *    element, at most the text's length, by doubling.
 *  - wave_parse_call: the function's name (a part of the text) and its
 *    parameters (the type's count).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/wave.h"

typedef struct parser {
	const char *s;
	size_t len, pos;
	wave_error *err;
} parser;

static const char *const keywords[] = {"true", "false", "inf", "nan",
				       "some", "none",	"ok",  "err"};

static int fail_at(parser *p, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(parser *p, size_t at, const char *fmt, ...)
{
	va_list ap;
	uint32_t line = 1, col = 1;

	if (p->err == NULL)
		return -1;
	if (p->err->msg[0] != 0)
		return -1; /* keep the innermost error */
	for (size_t i = 0; i < at && i < p->len; i++) {
		if (p->s[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	p->err->offset = at;
	p->err->line = line;
	p->err->column = col;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof p->err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

static int nomem(parser *p)
{
	if (p->err != NULL)
		p->err->nomem = 1;
	return fail_at(p, p->pos, "out of memory");
}

/* Skip whitespace and // comments. */
static void skip(parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			p->pos++;
		} else if (c == '/' && p->pos + 1 < p->len &&
			   p->s[p->pos + 1] == '/') {
			while (p->pos < p->len && p->s[p->pos] != '\n')
				p->pos++;
		} else {
			break;
		}
	}
}

static int peek(parser *p)
{
	skip(p);
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1;
}

static const char *describe(parser *p)
{
	return p->pos >= p->len ? "end of input" : "unexpected character";
}

static int expect(parser *p, char c)
{
	if (peek(p) != c)
		return fail_at(p, p->pos, "expected `%c`, found %s", c,
			       describe(p));
	p->pos++;
	return 0;
}

static bool accept(parser *p, char c)
{
	if (peek(p) == c) {
		p->pos++;
		return true;
	}
	return false;
}

/* ---- labels and keywords ----------------------------------------------------
 */

typedef struct label {
	const char *ptr; /* without the % */
	size_t len;
	bool percent;
	size_t at; /* where the token starts */
} label;

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A kebab-case label (WIT identifier rules), optionally %-prefixed. */
static bool lex_label(parser *p, label *l)
{
	size_t i;

	skip(p);
	i = p->pos;
	l->at = i;
	l->percent = i < p->len && p->s[i] == '%';
	if (l->percent)
		i++;
	if (i >= p->len || !is_alpha(p->s[i]))
		return false;
	l->ptr = p->s + i;
	for (;;) {
		bool lower = false, upper = false;

		if (i >= p->len || !is_alpha(p->s[i]))
			return false;
		while (i < p->len && is_alnum(p->s[i])) {
			lower |= p->s[i] >= 'a' && p->s[i] <= 'z';
			upper |= p->s[i] >= 'A' && p->s[i] <= 'Z';
			i++;
		}
		if (lower && upper)
			return false;
		if (i < p->len && p->s[i] == '-') {
			i++;
			continue;
		}
		break;
	}
	l->len = (size_t)(p->s + i - l->ptr);
	p->pos = i;
	return true;
}

static bool label_is(const label *l, const char *w)
{
	return strlen(w) == l->len && memcmp(l->ptr, w, l->len) == 0;
}

static bool is_keyword(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
		if (strlen(keywords[i]) == n && memcmp(keywords[i], s, n) == 0)
			return true;
	return false;
}

static bool str_eq(const cm_str *a, const label *l)
{
	return a->len == l->len && memcmp(a->ptr, l->ptr, l->len) == 0;
}

/* Peek at the label ahead without consuming it. */
static bool peek_label(parser *p, label *l)
{
	size_t save = p->pos;
	bool ok = lex_label(p, l);

	p->pos = save;
	return ok;
}

/* ---- numbers
 * ------------------------------------------------------------------ */

static int parse_int(parser *p, const cm_type *t, cm_val *out)
{
	size_t at, i;
	bool neg = false;
	uint64_t mag = 0;
	bool overflow = false;
	int64_t lo;
	uint64_t hi;

	skip(p);
	at = i = p->pos;
	if (i < p->len && p->s[i] == '-') {
		neg = true;
		i++;
	}
	if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
		return fail_at(p, at, "expected %s, found %s",
			       cm_type_kind_name(t->kind), describe(p));
	while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9') {
		unsigned d = (unsigned)(p->s[i] - '0');

		if (mag > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			mag = mag * 10 + d;
		i++;
	}
	if (i < p->len && (is_alnum(p->s[i]) || p->s[i] == '.'))
		return fail_at(p, at, "invalid %s literal",
			       cm_type_kind_name(t->kind));
	p->pos = i;
	switch (t->kind) {
	case CM_S8:
		lo = INT8_MIN, hi = INT8_MAX;
		break;
	case CM_S16:
		lo = INT16_MIN, hi = INT16_MAX;
		break;
	case CM_S32:
		lo = INT32_MIN, hi = INT32_MAX;
		break;
	case CM_S64:
		lo = INT64_MIN, hi = INT64_MAX;
		break;
	case CM_U8:
		lo = 0, hi = UINT8_MAX;
		break;
	case CM_U16:
		lo = 0, hi = UINT16_MAX;
		break;
	case CM_U32:
		lo = 0, hi = UINT32_MAX;
		break;
	default:
		lo = 0, hi = UINT64_MAX;
		break;
	}
	if (overflow || (!neg && mag > hi) ||
	    (neg && mag > (uint64_t)0 - (uint64_t)lo) || (neg && lo == 0))
		return fail_at(p, at, "integer out of range for %s",
			       cm_type_kind_name(t->kind));
	memset(out, 0, sizeof *out);
	out->kind = t->kind;
	if (lo < 0)
		out->u.s = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	else
		out->u.u = mag;
	return 0;
}

static int parse_float(parser *p, const cm_type *t, cm_val *out)
{
	size_t at, i;
	label l;
	char buf[400];
	double d;

	skip(p);
	at = i = p->pos;
	*out = cm_val_bool(false);
	if (peek_label(p, &l) && !l.percent) {
		if (label_is(&l, "nan")) {
			p->pos = l.at + 3;
			*out = t->kind == CM_F32
				       ? cm_val_f32_bits(0x7fc00000u)
				       : cm_val_f64_bits(0x7ff8000000000000ull);
			return 0;
		}
		if (label_is(&l, "inf")) {
			p->pos = l.at + 3;
			*out = t->kind == CM_F32
				       ? cm_val_f32_bits(0x7f800000u)
				       : cm_val_f64_bits(0x7ff0000000000000ull);
			return 0;
		}
	}
	if (i + 4 <= p->len && memcmp(p->s + i, "-inf", 4) == 0 &&
	    (i + 4 == p->len || !is_alnum(p->s[i + 4]))) {
		p->pos = i + 4;
		*out = t->kind == CM_F32
			       ? cm_val_f32_bits(0xff800000u)
			       : cm_val_f64_bits(0xfff0000000000000ull);
		return 0;
	}
	/* JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
	if (i < p->len && p->s[i] == '-')
		i++;
	if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
		return fail_at(p, at, "expected %s, found %s",
			       cm_type_kind_name(t->kind), describe(p));
	if (p->s[i] == '0') {
		i++;
	} else {
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i < p->len && p->s[i] == '.') {
		i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return fail_at(p, at, "invalid number");
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
		i++;
		if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
			i++;
		if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
			return fail_at(p, at, "invalid number");
		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
			i++;
	}
	if (i < p->len && (is_alnum(p->s[i]) || p->s[i] == '.'))
		return fail_at(p, at, "invalid number");
	if (i - at >= sizeof buf)
		return fail_at(p, at, "number too long");
	memcpy(buf, p->s + at, i - at);
	buf[i - at] = 0;
	p->pos = i;
	if (t->kind == CM_F32) {
		float f = strtof(buf, NULL);

		*out = cm_val_f32(f);
	} else {
		d = strtod(buf, NULL);
		*out = cm_val_f64(d);
	}
	return 0;
}

/* ---- chars and strings
 * ---------------------------------------------------------- */

/* Append bytes to a growing buffer. */
typedef struct sbuf {
	uint8_t *b;
	size_t n, cap;
} sbuf;

static int sb_put(parser *p, sbuf *sb, const void *data, size_t n)
{
	if (sb->n + n + 1 > sb->cap) {
		size_t ncap = sb->cap ? sb->cap * 2 : 32;
		uint8_t *nb;

		while (ncap < sb->n + n + 1)
			ncap *= 2;
		nb = realloc(sb->b, ncap);
		if (nb == NULL)
			return nomem(p);
		sb->b = nb;
		sb->cap = ncap;
	}
	memcpy(sb->b + sb->n, data, n);
	sb->n += n;
	return 0;
}

/* The next UTF-8 scalar of the input, validated. */
static int next_scalar(parser *p, uint32_t *c)
{
	size_t i = p->pos, n = 1;
	uint8_t b;

	if (i >= p->len)
		return fail_at(p, i, "unexpected end of input");
	b = (uint8_t)p->s[i];
	if (b >= 0x80)
		n = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
	if (i + n > p->len || !cm_utf8_valid((const uint8_t *)p->s + i, n))
		return fail_at(p, i, "invalid UTF-8 in input");
	*c = cm_utf8_next((const uint8_t *)p->s, &i);
	p->pos = i;
	return 0;
}

/*
 * One char of a char or string literal at p->pos: an escape or a scalar.
 * `quote` is the delimiter, which must be escaped, as must `\` and a
 * newline.  *escaped says whether it came from an escape.
 */
static int lex_char(parser *p, int quote, uint32_t *c, bool *escaped)
{
	size_t at = p->pos;

	*escaped = false;
	if (at >= p->len)
		return fail_at(p, at, "unterminated literal");
	if (p->s[at] == '\n')
		return fail_at(p, at, "newline must be escaped as \\n");
	if (quote >= 0 && p->s[at] == quote)
		return fail_at(p, at, "unexpected `%c`", quote);
	if (p->s[at] != '\\')
		return next_scalar(p, c);
	*escaped = true;
	if (at + 1 >= p->len)
		return fail_at(p, at, "unterminated escape");
	p->pos = at + 2;
	switch (p->s[at + 1]) {
	case '\'':
		*c = '\'';
		return 0;
	case '"':
		*c = '"';
		return 0;
	case '\\':
		*c = '\\';
		return 0;
	case 't':
		*c = '\t';
		return 0;
	case 'n':
		*c = '\n';
		return 0;
	case 'r':
		*c = '\r';
		return 0;
	case 'u': {
		uint32_t v = 0;
		size_t i = at + 2, digits = 0;

		if (i >= p->len || p->s[i] != '{')
			return fail_at(p, at, "expected `{` after \\u");
		i++;
		while (i < p->len && p->s[i] != '}') {
			char h = p->s[i];
			uint32_t d;

			if (h >= '0' && h <= '9')
				d = (uint32_t)(h - '0');
			else if (h >= 'a' && h <= 'f')
				d = (uint32_t)(h - 'a' + 10);
			else if (h >= 'A' && h <= 'F')
				d = (uint32_t)(h - 'A' + 10);
			else
				return fail_at(p, i,
					       "invalid hex digit in "
					       "\\u{...}");
			if (++digits > 6)
				return fail_at(p, at, "\\u{...} too long");
			v = v * 16 + d;
			i++;
		}
		if (i >= p->len)
			return fail_at(p, at, "unterminated \\u{...}");
		if (digits == 0)
			return fail_at(p, at, "empty \\u{}");
		if (v >= 0x110000 || (v >= 0xd800 && v <= 0xdfff))
			return fail_at(p, at,
				       "\\u{%x} is not a Unicode "
				       "scalar value",
				       v);
		p->pos = i + 1;
		*c = v;
		return 0;
	}
	default:
		return fail_at(p, at, "unknown escape `\\%c`", p->s[at + 1]);
	}
}

static int parse_char(parser *p, cm_val *out)
{
	uint32_t c;
	bool esc;

	*out = cm_val_bool(false);
	if (expect(p, '\''))
		return -1;
	if (p->pos < p->len && p->s[p->pos] == '\'')
		return fail_at(p, p->pos, "empty char literal");
	if (lex_char(p, '\'', &c, &esc))
		return -1;
	if (p->pos >= p->len || p->s[p->pos] != '\'')
		return fail_at(p, p->pos, "expected `'` closing the char");
	p->pos++;
	*out = cm_val_char(c);
	return 0;
}

/* Escapes inside a line of a multiline string, appended to sb. */
static int multiline_line(parser *p, sbuf *sb, size_t from, size_t to)
{
	size_t save_len = p->len;

	p->pos = from;
	p->len = to; /* escapes cannot cross the line end */
	while (p->pos < to) {
		uint32_t c;
		bool esc;
		uint8_t u[4];

		if (p->s[p->pos] == '"' && p->pos + 2 < to &&
		    p->s[p->pos + 1] == '"' && p->s[p->pos + 2] == '"') {
			p->len = save_len;
			return fail_at(p, p->pos,
				       "`\"\"\"` inside a multiline "
				       "string must be broken up");
		}
		if (p->s[p->pos] == '"') {
			p->pos++;
			c = '"';
		} else if (lex_char(p, -1, &c, &esc)) {
			p->len = save_len;
			return -1;
		}
		if (sb_put(p, sb, u, cm_utf8_put(u, c))) {
			p->len = save_len;
			return -1;
		}
	}
	p->len = save_len;
	return 0;
}

static int parse_multiline(parser *p, sbuf *sb, size_t at)
{
	size_t i = p->pos, line, indent, first = 1;
	size_t *starts = NULL, *ends = NULL, n = 0, cap = 0;
	int r = -1;

	/* the opening """ must be followed by a line break */
	if (i < p->len && p->s[i] == '\r')
		i++;
	if (i >= p->len || p->s[i] != '\n')
		return fail_at(p, at,
			       "multiline string must start with a "
			       "line break after `\"\"\"`");
	line = i + 1;
	for (;;) {
		size_t e = line, k = line;

		while (k < p->len && p->s[k] == ' ')
			k++;
		if (k + 3 <= p->len && memcmp(p->s + k, "\"\"\"", 3) == 0) {
			indent = k - line;
			p->pos = k + 3;
			break;
		}
		while (e < p->len && p->s[e] != '\n')
			e++;
		if (e >= p->len) {
			fail_at(p, at, "unterminated multiline string");
			goto out;
		}
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			size_t *a = realloc(starts, nc * sizeof *a);

			if (a == NULL) {
				nomem(p);
				goto out;
			}
			starts = a;
			a = realloc(ends, nc * sizeof *a);
			if (a == NULL) {
				nomem(p);
				goto out;
			}
			ends = a;
			cap = nc;
		}
		starts[n] = line;
		/* a literal \r\n line break is a line break */
		ends[n] = e > line && p->s[e - 1] == '\r' ? e - 1 : e;
		n++;
		line = e + 1;
	}
	for (size_t k = 0; k < n; k++) {
		size_t s = starts[k];

		for (size_t d = 0; d < indent; d++) {
			if (s + d >= ends[k] || p->s[s + d] != ' ') {
				fail_at(p, s,
					"line is indented less than "
					"the closing `\"\"\"`");
				goto out;
			}
		}
		if (!first && sb_put(p, sb, "\n", 1))
			goto out;
		first = 0;
		if (multiline_line(p, sb, s + indent, ends[k]))
			goto out;
	}
	r = 0;
out:
	if (r == 0) {
		/* restore the position after the closing delimiter */
		size_t k = line;

		while (p->s[k] == ' ')
			k++;
		p->pos = k + 3;
	}
	free(starts);
	free(ends);
	return r;
}

static int parse_string(parser *p, cm_val *out)
{
	sbuf sb = {NULL, 0, 0};
	size_t at;

	*out = cm_val_bool(false);
	skip(p);
	at = p->pos;
	if (expect(p, '"'))
		return -1;
	if (p->pos + 1 < p->len && p->s[p->pos] == '"' &&
	    p->s[p->pos + 1] == '"') {
		p->pos += 2;
		if (parse_multiline(p, &sb, at))
			goto fail;
	} else {
		for (;;) {
			uint32_t c;
			bool esc;
			uint8_t u[4];

			if (p->pos >= p->len) {
				fail_at(p, at, "unterminated string");
				goto fail;
			}
			if (p->s[p->pos] == '"') {
				p->pos++;
				break;
			}
			if (lex_char(p, '"', &c, &esc))
				goto fail;
			if (sb_put(p, &sb, u, cm_utf8_put(u, c)))
				goto fail;
		}
	}
	if (sb.b == NULL && sb_put(p, &sb, "", 0))
		goto fail;
	cm_val_string_take(out, sb.b, sb.n);
	return 0;
fail:
	free(sb.b);
	return -1;
}

/* ---- compound values
 * ------------------------------------------------------------- */

static int parse_value(parser *p, const cm_type *t, cm_val *out);

/* Parse `open v, v, ... close` into a growing array of elem values. */
static int parse_seq(parser *p, char open, char close, const cm_type *elem,
		     cm_type_kind kind, cm_val *out)
{
	cm_val *a = NULL;
	uint32_t n = 0, cap = 0;

	*out = cm_val_bool(false);
	if (expect(p, open))
		return -1;
	while (!accept(p, close)) {
		if (n == cap) {
			uint32_t nc = cap ? cap * 2 : 4;
			cm_val *na;

			if (nc < cap) {
				fail_at(p, p->pos, "too many elements");
				goto fail;
			}
			na = realloc(a, (size_t)nc * sizeof *na);
			if (na == NULL) {
				nomem(p);
				goto fail;
			}
			a = na;
			cap = nc;
		}
		if (parse_value(p, elem, &a[n]))
			goto fail;
		n++;
		if (!accept(p, ',')) {
			if (peek(p) != close) {
				fail_at(p, p->pos,
					"expected `,` or `%c`, "
					"found %s",
					close, describe(p));
				goto fail;
			}
		}
	}
	out->kind = kind;
	out->u.list.n = n;
	out->u.list.elems = a;
	return 0;
fail:
	cm_vals_free(a, n);
	free(a);
	return -1;
}

/* `[v, v, ...]` of a list<u8>/list<s8> into byte form (val.h cm_vals):
 * each element parsed as the element type, then kept as its byte. */
static int parse_bytes(parser *p, const cm_type *t, cm_val *out)
{
	const cm_type *elem = t->u.list.elem;
	uint8_t *a = NULL;
	uint32_t n = 0, cap = 0;
	cm_val e;

	*out = cm_val_bool(false);
	if (expect(p, '['))
		return -1;
	while (!accept(p, ']')) {
		if (n == cap) {
			uint32_t nc = cap ? cap * 2 : 16;
			uint8_t *na;

			if (nc < cap) {
				fail_at(p, p->pos, "too many elements");
				goto fail;
			}
			na = realloc(a, nc);
			if (na == NULL) {
				nomem(p);
				goto fail;
			}
			a = na;
			cap = nc;
		}
		if (parse_value(p, elem, &e))
			goto fail;
		a[n++] = elem->kind == CM_S8 ? (uint8_t)(int8_t)e.u.s
					     : (uint8_t)e.u.u;
		if (!accept(p, ',')) {
			if (peek(p) != ']') {
				fail_at(p, p->pos,
					"expected `,` or `]`, found %s",
					describe(p));
				goto fail;
			}
		}
	}
	cm_val_bytes_take(out, a, n);
	return 0;
fail:
	free(a);
	return -1;
}

static int parse_list(parser *p, const cm_type *t, cm_val *out)
{
	size_t at;
	const cm_type *e = t->kind == CM_MAP ? t->u.map.entry : t->u.list.elem;

	skip(p);
	if (cm_type_is_bytes(t))
		return parse_bytes(p, t, out);
	at = p->pos;
	if (parse_seq(p, '[', ']', e, t->kind, out))
		return -1;
	if (t->kind == CM_LIST && t->u.list.len != 0 &&
	    out->u.list.n != t->u.list.len) {
		uint32_t got = out->u.list.n;

		cm_val_free(out);
		return fail_at(p, at, "expected %u list elements, found %u",
			       t->u.list.len, got);
	}
	return 0;
}

static int parse_tuple(parser *p, const cm_type *t, cm_val *out)
{
	uint32_t n = t->u.tuple.n;

	if (cm_val_seq(out, CM_TUPLE, n))
		return nomem(p);
	if (expect(p, '('))
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		if (parse_value(p, t->u.tuple.elems[i], &out->u.list.elems[i]))
			goto fail;
		if (i + 1 < n && expect(p, ','))
			goto fail;
	}
	accept(p, ',');
	if (peek(p) != ')') {
		fail_at(p, p->pos, "expected `)` after %u tuple elements", n);
		goto fail;
	}
	p->pos++;
	return 0;
fail:
	cm_val_free(out);
	return -1;
}

static bool any_seen(const bool *seen, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (seen[i])
			return true;
	return false;
}

static int parse_record(parser *p, const cm_type *t, cm_val *out)
{
	uint32_t n = t->u.record.n;
	bool *seen;
	size_t close_at;
	int r = -1;

	if (cm_val_seq(out, CM_RECORD, n))
		return nomem(p);
	seen = calloc(n ? n : 1, sizeof *seen);
	if (seen == NULL) {
		cm_val_free(out);
		return nomem(p);
	}
	if (expect(p, '{'))
		goto out;
	if (accept(p, ':')) {
		peek(p);
		close_at = p->pos;
		if (expect(p, '}'))
			goto out;
	} else {
		while (peek(p) != '}') {
			label l;
			uint32_t i;

			if (!lex_label(p, &l)) {
				fail_at(p, p->pos,
					"expected a field label, "
					"found %s",
					describe(p));
				goto out;
			}
			for (i = 0; i < n; i++)
				if (str_eq(&t->u.record.fields[i].label, &l))
					break;
			if (i == n) {
				fail_at(p, l.at, "unknown field `%.*s`",
					(int)l.len, l.ptr);
				goto out;
			}
			if (seen[i]) {
				fail_at(p, l.at, "duplicate field `%.*s`",
					(int)l.len, l.ptr);
				goto out;
			}
			if (expect(p, ':'))
				goto out;
			if (parse_value(p, t->u.record.fields[i].type,
					&out->u.list.elems[i]))
				goto out;
			seen[i] = true;
			if (!accept(p, ',') && peek(p) != '}') {
				fail_at(p, p->pos,
					"expected `,` or `}`, "
					"found %s",
					describe(p));
				goto out;
			}
		}
		close_at = p->pos;
		p->pos++;
		if (n > 0 && !any_seen(seen, n)) {
			fail_at(p, close_at,
				"an empty record is written `{:}`");
			goto out;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		const cm_field *f = &t->u.record.fields[i];

		if (seen[i])
			continue;
		if (f->type->kind != CM_OPTION) {
			fail_at(p, close_at, "missing field `%s`",
				f->label.ptr);
			goto out;
		}
		out->u.list.elems[i] = cm_val_case(CM_OPTION, 0);
	}
	r = 0;
out:
	free(seen);
	if (r)
		cm_val_free(out);
	return r;
}

/* `(payload)` after a case label. */
static int parse_payload(parser *p, const cm_type *pt, cm_type_kind kind,
			 uint32_t index, cm_val *out)
{
	if (cm_val_case_payload(out, kind, index))
		return nomem(p);
	if (expect(p, '(') || parse_value(p, pt, out->u.variant.payload) ||
	    expect(p, ')')) {
		cm_val_free(out);
		return -1;
	}
	return 0;
}

static int parse_case(parser *p, const cm_type *t, cm_val *out)
{
	label l;
	uint32_t n = cm_type_ncases(t), i;

	*out = cm_val_bool(false);
	if (!lex_label(p, &l))
		return fail_at(p, p->pos,
			       "expected a case label of the %s, "
			       "found %s",
			       cm_type_kind_name(t->kind), describe(p));
	if (!l.percent && is_keyword(l.ptr, l.len))
		return fail_at(p, l.at,
			       "case `%.*s` is a keyword and must be "
			       "written `%%%.*s`",
			       (int)l.len, l.ptr, (int)l.len, l.ptr);
	for (i = 0; i < n; i++) {
		const cm_str *name = t->kind == CM_ENUM
					     ? &t->u.enm.labels[i]
					     : &t->u.variant.fields[i].label;

		if (str_eq(name, &l))
			break;
	}
	if (i == n)
		return fail_at(p, l.at, "unknown case `%.*s`", (int)l.len,
			       l.ptr);
	if (cm_type_case(t, i) == NULL) {
		if (peek(p) == '(')
			return fail_at(p, p->pos, "case `%.*s` has no payload",
				       (int)l.len, l.ptr);
		*out = cm_val_case(t->kind, i);
		return 0;
	}
	if (peek(p) != '(')
		return fail_at(p, p->pos, "case `%.*s` needs a payload",
			       (int)l.len, l.ptr);
	return parse_payload(p, cm_type_case(t, i), t->kind, i, out);
}

static bool flat_ok(const cm_type *t)
{
	return t != NULL && t->kind != CM_OPTION && t->kind != CM_RESULT;
}

static int parse_option(parser *p, const cm_type *t, cm_val *out)
{
	label l;

	*out = cm_val_bool(false);
	if (peek_label(p, &l) && !l.percent) {
		if (label_is(&l, "none")) {
			p->pos = l.at + 4;
			if (peek(p) == '(')
				return fail_at(p, p->pos,
					       "`none` has no "
					       "payload");
			*out = cm_val_case(CM_OPTION, 0);
			return 0;
		}
		if (label_is(&l, "some")) {
			p->pos = l.at + 4;
			return parse_payload(p, t->u.option.elem, CM_OPTION, 1,
					     out);
		}
	}
	if (!flat_ok(t->u.option.elem))
		return fail_at(p, p->pos, "expected `some(...)` or `none`");
	if (cm_val_case_payload(out, CM_OPTION, 1))
		return nomem(p);
	if (parse_value(p, t->u.option.elem, out->u.variant.payload)) {
		cm_val_free(out);
		return -1;
	}
	return 0;
}

static int parse_result(parser *p, const cm_type *t, cm_val *out)
{
	label l;

	*out = cm_val_bool(false);
	if (peek_label(p, &l) && !l.percent &&
	    (label_is(&l, "ok") || label_is(&l, "err"))) {
		uint32_t idx = label_is(&l, "ok") ? 0 : 1;
		const cm_type *pt = idx == 0 ? t->u.result.ok : t->u.result.err;

		p->pos = l.at + l.len;
		if (pt == NULL) {
			if (peek(p) == '(')
				return fail_at(p, p->pos, "`%s` has no payload",
					       idx ? "err" : "ok");
			*out = cm_val_case(CM_RESULT, idx);
			return 0;
		}
		if (peek(p) != '(')
			return fail_at(p, p->pos, "`%s` needs a payload",
				       idx ? "err" : "ok");
		return parse_payload(p, pt, CM_RESULT, idx, out);
	}
	if (!flat_ok(t->u.result.ok))
		return fail_at(p, p->pos, "expected `ok` or `err`");
	if (cm_val_case_payload(out, CM_RESULT, 0))
		return nomem(p);
	if (parse_value(p, t->u.result.ok, out->u.variant.payload)) {
		cm_val_free(out);
		return -1;
	}
	return 0;
}

static int parse_flags(parser *p, const cm_type *t, cm_val *out)
{
	uint32_t bits = 0, n = t->u.flags.n;

	*out = cm_val_bool(false);
	if (expect(p, '{'))
		return -1;
	while (!accept(p, '}')) {
		label l;
		uint32_t i;

		if (!lex_label(p, &l))
			return fail_at(p, p->pos,
				       "expected a flag label, "
				       "found %s",
				       describe(p));
		for (i = 0; i < n; i++)
			if (str_eq(&t->u.flags.labels[i], &l))
				break;
		if (i == n)
			return fail_at(p, l.at, "unknown flag `%.*s`",
				       (int)l.len, l.ptr);
		if (bits & (1u << i))
			return fail_at(p, l.at, "duplicate flag `%.*s`",
				       (int)l.len, l.ptr);
		bits |= 1u << i;
		if (!accept(p, ',') && peek(p) != '}')
			return fail_at(p, p->pos,
				       "expected `,` or `}`, "
				       "found %s",
				       describe(p));
	}
	*out = cm_val_flags(bits);
	return 0;
}

static int parse_value(parser *p, const cm_type *t, cm_val *out)
{
	label l;

	*out = cm_val_bool(false);
	skip(p);
	switch (t->kind) {
	case CM_BOOL:
		if (lex_label(p, &l) && !l.percent) {
			if (label_is(&l, "true")) {
				*out = cm_val_bool(true);
				return 0;
			}
			if (label_is(&l, "false"))
				return 0;
		}
		return fail_at(p, l.at, "expected `true` or `false`");
	case CM_S8:
	case CM_S16:
	case CM_S32:
	case CM_S64:
	case CM_U8:
	case CM_U16:
	case CM_U32:
	case CM_U64:
		return parse_int(p, t, out);
	case CM_F32:
	case CM_F64:
		return parse_float(p, t, out);
	case CM_CHAR:
		return parse_char(p, out);
	case CM_STRING:
		return parse_string(p, out);
	case CM_LIST:
	case CM_MAP:
		return parse_list(p, t, out);
	case CM_TUPLE:
		return parse_tuple(p, t, out);
	case CM_RECORD:
		return parse_record(p, t, out);
	case CM_VARIANT:
	case CM_ENUM:
		return parse_case(p, t, out);
	case CM_OPTION:
		return parse_option(p, t, out);
	case CM_RESULT:
		return parse_result(p, t, out);
	case CM_FLAGS:
		return parse_flags(p, t, out);
	default:
		return fail_at(p, p->pos, "%s values have no WAVE syntax",
			       cm_type_kind_name(t->kind));
	}
}

static void init(parser *p, const char *text, size_t len, wave_error *err)
{
	p->s = text;
	p->len = len;
	p->pos = 0;
	p->err = err;
	if (err != NULL)
		memset(err, 0, sizeof *err);
}

int wave_parse(const char *text, size_t len, const cm_type *t, cm_val *out,
	       wave_error *err)
{
	parser p;

	init(&p, text, len, err);
	if (parse_value(&p, t, out))
		return -1;
	if (peek(&p) != -1) {
		cm_val_free(out);
		return fail_at(&p, p.pos, "unexpected text after the value");
	}
	return 0;
}

/* ---- calls
 * ------------------------------------------------------------------------ */

void wave_call_free(wave_call *c)
{
	if (c == NULL)
		return;
	free(c->name);
	if (c->args != NULL) {
		cm_vals_free(c->args, c->nargs);
		free(c->args);
	}
	memset(c, 0, sizeof *c);
}

int wave_parse_call(const char *text, size_t len, wave_lookup_fn lookup,
		    void *env, wave_call *out, wave_error *err)
{
	parser p;
	size_t b, e, open;
	const cm_functype *ft;

	memset(out, 0, sizeof *out);
	init(&p, text, len, err);
	skip(&p);
	b = p.pos;
	for (open = b; open < len && text[open] != '('; open++)
		;
	e = open;
	while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' ||
			 text[e - 1] == '\n' || text[e - 1] == '\r'))
		e--;
	if (e == b)
		return fail_at(&p, b, "expected a function name");
	out->name = malloc(e - b + 1);
	if (out->name == NULL)
		return nomem(&p);
	memcpy(out->name, text + b, e - b);
	out->name[e - b] = 0;
	out->name_len = e - b;
	out->func = lookup(env, out->name, out->name_len);
	if (out->func == NULL || out->func->kind != CM_FUNC) {
		fail_at(&p, b, "unknown function `%s`", out->name);
		goto fail;
	}
	ft = &out->func->u.func;
	if (ft->nparams > 0) {
		out->args = calloc(ft->nparams, sizeof *out->args);
		if (out->args == NULL) {
			nomem(&p);
			goto fail;
		}
	}
	out->nargs = ft->nparams;
	p.pos = open;
	if (open >= len) {
		/* a bare name: only a function whose params may all be
		 * omitted (options) can be called like that */
		p.pos = len;
	} else {
		p.pos = open + 1;
	}
	for (uint32_t i = 0; i < ft->nparams; i++) {
		const cm_type *pt = ft->params[i].type;

		if (open >= len || peek(&p) == ')') {
			if (pt->kind != CM_OPTION) {
				fail_at(&p, p.pos, "missing argument `%s`",
					ft->params[i].label.ptr);
				goto fail;
			}
			out->args[i] = cm_val_case(CM_OPTION, 0);
			continue;
		}
		if (parse_value(&p, pt, &out->args[i]))
			goto fail;
		if (!accept(&p, ',') && peek(&p) != ')') {
			fail_at(&p, p.pos, "expected `,` or `)`, found %s",
				describe(&p));
			goto fail;
		}
	}
	if (open < len && expect(&p, ')')) {
		if (err != NULL && ft->nparams > 0)
			snprintf(err->msg, sizeof err->msg,
				 "too many arguments (expected %u)",
				 ft->nparams);
		goto fail;
	}
	if (peek(&p) != -1) {
		fail_at(&p, p.pos, "unexpected text after the call");
		goto fail;
	}
	return 0;
fail:
	wave_call_free(out);
	return -1;
}
