/*
 * wave_print.c - the WAVE printer (cm_val -> text), matching wasm-wave's
 * writer: `, ` separators, none-valued record fields left out, options in
 * variant form, `%` before case names that are keywords, floats as the
 * shortest decimal that reads back to the same bits (never an exponent,
 * like Rust's Display), control characters as \u{hex}.
 *
 * Contract (wave.h): the output is malloc'd and NUL-terminated; a value
 * that does not match its type, or an allocation failure, returns -1
 * with nothing allocated.
 *
 * Allocations sized by a guest or a client (issue 18 audit): put: the
 * output grows by doubling with the text it prints, which is
 * proportional to the value (at most about 10 bytes per byte of a
 * string, \u{..} escapes); the value printed was bounded when it was
 * made (a lift: the store's budget).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/wave.h"

typedef struct out {
	char *b;
	size_t n, cap;
	bool failed;
} out;

static void put(out *o, const char *s, size_t n)
{
	if (o->failed)
		return;
	if (o->n + n + 1 > o->cap) {
		size_t ncap = o->cap ? o->cap * 2 : 64;
		char *nb;

		while (ncap < o->n + n + 1)
			ncap *= 2;
		nb = realloc(o->b, ncap);
		if (nb == NULL) {
			o->failed = true;
			return;
		}
		o->b = nb;
		o->cap = ncap;
	}
	memcpy(o->b + o->n, s, n);
	o->n += n;
	o->b[o->n] = 0;
}

static void puts_(out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void putf(out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void putf(out *o, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, buf,
		    (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

static bool keyword(const char *s, size_t n)
{
	static const char *const kw[] = {"true", "false", "inf", "nan",
					 "some", "none",  "ok",	 "err"};

	for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
		if (strlen(kw[i]) == n && memcmp(kw[i], s, n) == 0)
			return true;
	return false;
}

static void put_label(out *o, const cm_str *l, bool escape_keyword)
{
	if (escape_keyword && keyword(l->ptr, l->len))
		put(o, "%", 1);
	put(o, l->ptr, l->len);
}

/* ---- floats ----------------------------------------------------------------
 */

/*
 * The shortest decimal digits that read back to the same value, laid out
 * without an exponent: find the least precision whose %e form round-trips,
 * then move the decimal point.
 */
static void put_float(out *o, double d, bool single)
{
	char e[40], digits[40], res[400];
	int prec, exp10, nd = 0, k = 0;
	const char *q;

	if (isnan(d)) {
		puts_(o, "nan");
		return;
	}
	if (isinf(d)) {
		puts_(o, d < 0 ? "-inf" : "inf");
		return;
	}
	if (d == 0) {
		puts_(o, signbit(d) ? "-0" : "0");
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(e, sizeof e, "%.*e", prec - 1, d);
		if (single ? strtof(e, NULL) == (float)d : strtod(e, NULL) == d)
			break;
	}
	/* e is like "-1.2345e+07" */
	q = e;
	if (*q == '-')
		res[k++] = *q++;
	for (; *q != 'e'; q++)
		if (*q >= '0' && *q <= '9')
			digits[nd++] = *q;
	exp10 = atoi(q + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (exp10 >= nd - 1) {
		for (int i = 0; i < nd; i++)
			res[k++] = digits[i];
		for (int i = 0; i < exp10 - (nd - 1); i++)
			res[k++] = '0';
	} else if (exp10 < 0) {
		res[k++] = '0';
		res[k++] = '.';
		for (int i = 0; i < -exp10 - 1; i++)
			res[k++] = '0';
		for (int i = 0; i < nd; i++)
			res[k++] = digits[i];
	} else {
		for (int i = 0; i < nd; i++) {
			res[k++] = digits[i];
			if (i == exp10)
				res[k++] = '.';
		}
	}
	put(o, res, (size_t)k);
}

/* ---- chars and strings
 * --------------------------------------------------------- */

static void put_scalar(out *o, uint32_t c)
{
	uint8_t u[4];

	switch (c) {
	case '\\':
		puts_(o, "\\\\");
		return;
	case '"':
		puts_(o, "\\\"");
		return;
	case '\'':
		puts_(o, "\\'");
		return;
	case '\t':
		puts_(o, "\\t");
		return;
	case '\n':
		puts_(o, "\\n");
		return;
	case '\r':
		puts_(o, "\\r");
		return;
	default:
		break;
	}
	if (c < 0x20 || (c >= 0x7f && c < 0xa0)) {
		putf(o, "\\u{%x}", c);
		return;
	}
	put(o, (const char *)u, cm_utf8_put(u, c));
}

/* ---- values
 * ------------------------------------------------------------------------ */

/* A list<u8>/list<s8> in byte form (val.h cm_vals), as its elements
 * would print: `[1, 2, 255]`, `[-1, 0, 127]`. */
static int print_bytes(out *o, const cm_val *v, const cm_type *t)
{
	bool sign;

	if (!cm_type_is_bytes(t))
		return -1;
	sign = t->u.list.elem->kind == CM_S8;
	puts_(o, "[");
	for (uint32_t i = 0; i < v->u.list.n; i++) {
		char buf[8];
		int x = sign ? (int)(int8_t)v->u.list.bytes[i]
			     : (int)v->u.list.bytes[i];
		size_t k = sizeof buf;

		if (x < 0)
			x = -x;
		do {
			buf[--k] = (char)('0' + x % 10);
			x /= 10;
		} while (x > 0);
		if (sign && (int8_t)v->u.list.bytes[i] < 0)
			buf[--k] = '-';
		if (i > 0)
			puts_(o, ", ");
		put(o, buf + k, sizeof buf - k);
	}
	puts_(o, "]");
	return 0;
}

static int print(out *o, const cm_val *v, const cm_type *t)
{
	if (v->kind != t->kind)
		return -1;
	switch (t->kind) {
	case CM_BOOL:
		puts_(o, v->u.b ? "true" : "false");
		return 0;
	case CM_S8:
	case CM_S16:
	case CM_S32:
	case CM_S64:
		putf(o, "%lld", (long long)v->u.s);
		return 0;
	case CM_U8:
	case CM_U16:
	case CM_U32:
	case CM_U64:
		putf(o, "%llu", (unsigned long long)v->u.u);
		return 0;
	case CM_F32: {
		float f;

		memcpy(&f, &v->u.f32, sizeof f);
		put_float(o, f, true);
		return 0;
	}
	case CM_F64: {
		double d;

		memcpy(&d, &v->u.f64, sizeof d);
		put_float(o, d, false);
		return 0;
	}
	case CM_CHAR:
		if (v->u.c >= 0x110000 ||
		    (v->u.c >= 0xd800 && v->u.c <= 0xdfff))
			return -1;
		puts_(o, "'");
		put_scalar(o, v->u.c);
		puts_(o, "'");
		return 0;
	case CM_STRING: {
		size_t i = 0;

		if (v->u.str.ptr == NULL ||
		    !cm_utf8_valid(v->u.str.ptr, v->u.str.len))
			return -1;
		puts_(o, "\"");
		while (i < v->u.str.len)
			put_scalar(o, cm_utf8_next(v->u.str.ptr, &i));
		puts_(o, "\"");
		return 0;
	}
	case CM_LIST:
	case CM_MAP: {
		const cm_type *e =
			t->kind == CM_MAP ? t->u.map.entry : t->u.list.elem;

		if (v->u.list.bytes != NULL)
			return print_bytes(o, v, t);
		puts_(o, "[");
		for (uint32_t i = 0; i < v->u.list.n; i++) {
			if (i > 0)
				puts_(o, ", ");
			if (print(o, &v->u.list.elems[i], e))
				return -1;
		}
		puts_(o, "]");
		return 0;
	}
	case CM_TUPLE:
		if (v->u.list.n != t->u.tuple.n || v->u.list.bytes != NULL)
			return -1;
		puts_(o, "(");
		for (uint32_t i = 0; i < v->u.list.n; i++) {
			if (i > 0)
				puts_(o, ", ");
			if (print(o, &v->u.list.elems[i], t->u.tuple.elems[i]))
				return -1;
		}
		puts_(o, ")");
		return 0;
	case CM_RECORD: {
		bool first = true;

		if (v->u.list.n != t->u.record.n || v->u.list.bytes != NULL)
			return -1;
		puts_(o, "{");
		for (uint32_t i = 0; i < v->u.list.n; i++) {
			const cm_val *f = &v->u.list.elems[i];

			if (f->kind == CM_OPTION && f->u.variant.index == 0)
				continue;
			if (!first)
				puts_(o, ", ");
			first = false;
			put_label(o, &t->u.record.fields[i].label, false);
			puts_(o, ": ");
			if (print(o, f, t->u.record.fields[i].type))
				return -1;
		}
		if (first)
			puts_(o, ":");
		puts_(o, "}");
		return 0;
	}
	case CM_VARIANT:
	case CM_ENUM:
	case CM_OPTION:
	case CM_RESULT: {
		uint32_t i = v->u.variant.index;
		const cm_type *c;

		if (i >= cm_type_ncases(t))
			return -1;
		c = cm_type_case(t, i);
		if ((c == NULL) != (v->u.variant.payload == NULL))
			return -1;
		if (t->kind == CM_OPTION)
			puts_(o, i ? "some" : "none");
		else if (t->kind == CM_RESULT)
			puts_(o, i ? "err" : "ok");
		else if (t->kind == CM_ENUM)
			put_label(o, &t->u.enm.labels[i], true);
		else
			put_label(o, &t->u.variant.fields[i].label, true);
		if (c != NULL) {
			puts_(o, "(");
			if (print(o, v->u.variant.payload, c))
				return -1;
			puts_(o, ")");
		}
		return 0;
	}
	case CM_FLAGS: {
		bool first = true;

		puts_(o, "{");
		for (uint32_t i = 0; i < t->u.flags.n && i < 32; i++) {
			if (!(v->u.flags & (1u << i)))
				continue;
			if (!first)
				puts_(o, ", ");
			first = false;
			put_label(o, &t->u.flags.labels[i], false);
		}
		puts_(o, "}");
		return 0;
	}
	case CM_OWN:
	case CM_BORROW:
		putf(o, "%s<rep %llu>", t->kind == CM_OWN ? "own" : "borrow",
		     (unsigned long long)v->u.handle.rep);
		return 0;
	case CM_STREAM:
	case CM_FUTURE:
	case CM_ERROR_CONTEXT:
		putf(o, "%s<%u>", cm_type_kind_name(t->kind), v->u.async.index);
		return 0;
	default:
		return -1;
	}
}

int wave_print(const cm_val *v, const cm_type *t, char **res, size_t *reslen)
{
	out o = {NULL, 0, 0, false};

	*res = NULL;
	if (reslen != NULL)
		*reslen = 0;
	puts_(&o, "");
	if (print(&o, v, t) || o.failed) {
		free(o.b);
		return -1;
	}
	*res = o.b;
	if (reslen != NULL)
		*reslen = o.n;
	return 0;
}

int wave_print_results(const cm_type *func, const cm_val *results, char **res,
		       size_t *reslen)
{
	if (func == NULL || func->kind != CM_FUNC)
		return -1;
	if (func->u.func.result == NULL) {
		*res = calloc(1, 1);
		if (reslen != NULL)
			*reslen = 0;
		return *res == NULL ? -1 : 0;
	}
	return wave_print(&results[0], func->u.func.result, res, reslen);
}
