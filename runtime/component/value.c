/*
 * value.c - the value section's bytes (🪙, Binary.md "Value
 * definitions"; the digest's 1.9): `value ::= t:<valtype> len:<u32>
 * v:<val(t)>`, where v must be exactly len bytes of a value of t.
 *
 * Contract: cm_value_bytes_check reads the compact encoding against t and
 * refuses, with the reason, anything that is not one value of t taking
 * every byte: bool 00 or 01; u8/s8 one byte; the other integers core
 * LEB128 (at most ceil(N/7) bytes, the unused bits of the last byte
 * the sign's, as core's uN/sN); f32/f64 little-endian, a NaN only the
 * canonical one (00 00 C0 7F, 00 .. 00 F8 7F); char the UTF-8 of one
 * scalar value; string a core name (u32 length, UTF-8); list a vec
 * (a fixed-length list its length of elements); record and tuple their
 * fields in order; variant a u32 case and its payload; enum a u32 case;
 * option 00 or 01 v; result 00 v? or 01 v?; flags ceil(n/8) bytes,
 * bit i of byte i/8, no bit past n set; map a vec of key, value.  A
 * type no value can have (own, borrow, stream, future, error-context)
 * is refused.  It never reads past p + len and never allocates; its
 * recursion is the type's depth (CM_MAX_TYPE_DEPTH).
 *
 * Why hostel checks it: wasmparser has no value section, so the
 * ecosystem is silent; Binary.md defines the encoding, and a value
 * that is not one must not load (docs/validation.md).
 */
#include <stdio.h>
#include <string.h>

#include "component/internal.h"

typedef struct vreader {
	const uint8_t *p;
	size_t len, off;
	char *why;
	size_t whylen;
} vreader;

static int bad(vreader *r, const char *what)
{
	if (r->why != NULL && r->why[0] == '\0')
		snprintf(r->why, r->whylen, "%s at byte %zu", what, r->off);
	return -1;
}

static int byte(vreader *r, uint8_t *b)
{
	if (r->off >= r->len)
		return bad(r, "value bytes end early");
	*b = r->p[r->off++];
	return 0;
}

/* core uN / sN: LEB128 of at most ceil(bits/7) bytes */
static int leb(vreader *r, unsigned bits, bool sign, uint64_t *out)
{
	unsigned shift = 0, max = (bits + 6) / 7;
	uint64_t v = 0;
	uint8_t b;

	for (unsigned i = 0;; i++) {
		if (i == max)
			return bad(r, "integer representation too long");
		if (byte(r, &b))
			return -1;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift > bits) {
		/* the last byte's bits past `bits` must be the sign's */
		unsigned used = bits - (shift - 7);
		uint8_t rest = (uint8_t)((b & 0x7f) >> used);
		uint8_t want = sign && (b & (1u << (used - 1)))
				       ? (uint8_t)(0x7f >> used)
				       : 0;

		if (rest != want)
			return bad(r, "integer too large");
	}
	if (sign && shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift; /* sign-extend */
	*out = v;
	return 0;
}

/* One UTF-8 scalar value from the reader; 0 or -1. */
static int utf8_char(vreader *r)
{
	uint8_t b, c;
	unsigned n;
	uint32_t v;

	if (byte(r, &b))
		return -1;
	if (b < 0x80)
		return 0;
	if ((b & 0xe0) == 0xc0) {
		n = 1;
		v = b & 0x1f;
	} else if ((b & 0xf0) == 0xe0) {
		n = 2;
		v = b & 0x0f;
	} else if ((b & 0xf8) == 0xf0) {
		n = 3;
		v = b & 0x07;
	} else {
		return bad(r, "malformed UTF-8");
	}
	for (unsigned i = 0; i < n; i++) {
		if (byte(r, &c))
			return -1;
		if ((c & 0xc0) != 0x80)
			return bad(r, "malformed UTF-8");
		v = v << 6 | (c & 0x3f);
	}
	if ((n == 1 && v < 0x80) || (n == 2 && v < 0x800) ||
	    (n == 3 && v < 0x10000) || v > 0x10ffff ||
	    (v >= 0xd800 && v <= 0xdfff))
		return bad(r, "malformed UTF-8");
	return 0;
}

static int val(vreader *r, const cm_type *t, unsigned depth);

static int count_of(vreader *r, uint64_t *n)
{
	if (leb(r, 32, false, n))
		return -1;
	/* every value takes a byte at least, so a count cannot spin */
	if (*n > r->len - r->off)
		return bad(r, "a count past the value's bytes");
	return 0;
}

static int seq(vreader *r, const cm_type *t, uint64_t n, unsigned depth)
{
	for (uint64_t i = 0; i < n; i++)
		if (val(r, t, depth + 1))
			return -1;
	return 0;
}

static int val(vreader *r, const cm_type *t, unsigned depth)
{
	uint64_t n, k;
	uint8_t b;

	if (depth > CM_MAX_TYPE_DEPTH)
		return bad(r, "value nesting is too deep");
	switch (t->kind) {
	case CM_BOOL:
		if (byte(r, &b))
			return -1;
		return b > 1 ? bad(r, "invalid bool") : 0;
	case CM_U8:
	case CM_S8:
		return byte(r, &b);
	case CM_U16:
	case CM_U32:
	case CM_U64:
		return leb(r, t->kind == CM_U16 ? 16 : t->kind == CM_U32 ? 32 : 64,
			   false, &n);
	case CM_S16:
	case CM_S32:
	case CM_S64:
		return leb(r, t->kind == CM_S16 ? 16 : t->kind == CM_S32 ? 32 : 64,
			   true, &n);
	case CM_F32:
	case CM_F64: {
		size_t w = t->kind == CM_F32 ? 4 : 8;
		uint64_t bits = 0;

		if (w > r->len - r->off)
			return bad(r, "value bytes end early");
		for (size_t i = 0; i < w; i++)
			bits |= (uint64_t)r->p[r->off + i] << (8 * i);
		r->off += w;
		if (w == 4 && (bits & 0x7f800000u) == 0x7f800000u &&
		    (bits & 0x7fffffu) != 0 && bits != 0x7fc00000u)
			return bad(r, "a NaN that is not canonical");
		if (w == 8 && (bits >> 52 & 0x7ff) == 0x7ff &&
		    (bits & 0xfffffffffffffull) != 0 &&
		    bits != 0x7ff8000000000000ull)
			return bad(r, "a NaN that is not canonical");
		return 0;
	}
	case CM_CHAR:
		return utf8_char(r);
	case CM_STRING: {
		size_t end;

		if (leb(r, 32, false, &n))
			return -1;
		if (n > r->len - r->off)
			return bad(r, "a string past the value's bytes");
		end = r->off + (size_t)n;
		while (r->off < end) {
			size_t at = r->off;
			vreader sub = *r;

			sub.len = end;
			if (utf8_char(&sub))
				return -1;
			r->off = sub.off;
			if (r->off == at)
				return bad(r, "malformed UTF-8");
		}
		return 0;
	}
	case CM_LIST:
		if (t->u.list.len != 0)
			return seq(r, t->u.list.elem, t->u.list.len, depth);
		if (count_of(r, &n))
			return -1;
		return seq(r, t->u.list.elem, n, depth);
	case CM_MAP:
		if (count_of(r, &n))
			return -1;
		for (uint64_t i = 0; i < n; i++)
			if (val(r, t->u.map.key, depth + 1) ||
			    val(r, t->u.map.value, depth + 1))
				return -1;
		return 0;
	case CM_RECORD:
	case CM_TUPLE:
		for (uint32_t i = 0; i < cm_type_nfields(t); i++)
			if (val(r, cm_type_field(t, i), depth + 1))
				return -1;
		return 0;
	case CM_VARIANT:
	case CM_ENUM:
		if (leb(r, 32, false, &k))
			return -1;
		if (k >= cm_type_ncases(t))
			return bad(r, "a case index out of range");
		if (t->kind == CM_VARIANT && cm_type_case(t, (uint32_t)k))
			return val(r, cm_type_case(t, (uint32_t)k), depth + 1);
		return 0;
	case CM_OPTION:
		if (byte(r, &b))
			return -1;
		if (b > 1)
			return bad(r, "invalid option");
		return b ? val(r, t->u.option.elem, depth + 1) : 0;
	case CM_RESULT: {
		const cm_type *p;

		if (byte(r, &b))
			return -1;
		if (b > 1)
			return bad(r, "invalid result");
		p = b ? t->u.result.err : t->u.result.ok;
		return p != NULL ? val(r, p, depth + 1) : 0;
	}
	case CM_FLAGS: {
		uint32_t nl = t->u.flags.n, nb = (nl + 7) / 8;

		for (uint32_t i = 0; i < nb; i++) {
			if (byte(r, &b))
				return -1;
			if (i == nb - 1 && nl % 8 && (b >> (nl % 8)))
				return bad(r, "a flag past the type's labels");
		}
		return 0;
	}
	default:
		return bad(r, "a type no value can have");
	}
}

int cm_value_bytes_check(const cm_type *t, const uint8_t *p, size_t len,
			 char *why, size_t whylen)
{
	vreader r = {.p = p, .len = len, .why = why, .whylen = whylen};

	if (why != NULL && whylen > 0)
		why[0] = '\0';
	if (val(&r, t, 0))
		return -1;
	if (r.off != len)
		return bad(&r, "bytes past the value");
	return 0;
}
