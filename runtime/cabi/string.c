/*
 * string.c - strings across the ABI: load_string_from_range (decode and
 * validate utf8 / utf16 / latin1+utf16 into a UTF-8 cm_val) and
 * store_string_into_range (every transcoding direction, with the exact
 * realloc call sequence of definitions.py: first allocation sized from
 * the source's code-unit count, growth to the worst case at the first
 * code point that does not fit, in-place Latin-1 inflation iterating
 * backwards, and the final shrinking realloc).
 *
 * Contract: the lifted value remembers (source encoding, tagged code
 * units) like the reference's String triple so that the writer can size
 * its first allocation the same way (digest 2.6).  Traps carry the suite's
 * messages (internal.h picks the host- or guest-peer wording).  Guest
 * memory is re-read after every realloc, which may move it.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - load_string_from_range: the host copy of a lifted string (its
 *    bytes + 1, UTF-16 code units x 3 + 1, Latin-1+UTF-16 bytes x 2 +
 *    1), charged to the store's budget before the malloc (cabi_charge);
 *    its length is CABI_MAX_STRING_BYTE_LENGTH (2^28 - 1) at most.
 *  - storing allocates nothing on the host (transcoding writes straight
 *    into memory the guest's realloc gave); it asks realloc for
 *    CABI_REALLOC_MAX bytes at most (definitions.py's REALLOC_I32_MAX,
 *    not the lifting maximum: a transcoding may need up to three times
 *    what was lifted).
 */
#include <stdlib.h>

#include "cabi/internal.h"

/* ---- decoding --------------------------------------------------------------
 */

/*
 * Find the first UTF-8 error: 0 = valid, 1 = invalid sequence at *pos,
 * 2 = a sequence cut short by the end of input (Rust's from_utf8 wording,
 * which the suite expects: "invalid utf-8" / "incomplete utf-8 byte
 * sequence").
 */
static int utf8_check(const uint8_t *s, size_t len, size_t *pos)
{
	size_t i = 0;

	while (i < len) {
		uint8_t b = s[i];
		uint8_t lo = 0x80, hi = 0xbf;
		size_t n;

		if (b < 0x80) {
			i++;
			continue;
		}
		if (b >= 0xc2 && b <= 0xdf) {
			n = 1;
		} else if (b >= 0xe0 && b <= 0xef) {
			n = 2;
			if (b == 0xe0)
				lo = 0xa0;
			if (b == 0xed)
				hi = 0x9f;
		} else if (b >= 0xf0 && b <= 0xf4) {
			n = 3;
			if (b == 0xf0)
				lo = 0x90;
			if (b == 0xf4)
				hi = 0x8f;
		} else {
			*pos = i;
			return 1;
		}
		for (size_t k = 1; k <= n; k++) {
			uint8_t c;

			if (i + k >= len) {
				*pos = i;
				return 2;
			}
			c = s[i + k];
			if (k == 1 ? (c < lo || c > hi) : (c & 0xc0) != 0x80) {
				*pos = i;
				return 1;
			}
		}
		i += n + 1;
	}
	return 0;
}

int cabi_load_string_from_range(cabi_cx *cx, uint64_t ptr,
				uint64_t tagged_code_units, cm_val *out)
{
	uint64_t tag = cabi_utf16_tag(cx), byte_length, units = 0;
	uint32_t alignment;
	int enc; /* 0 utf8, 1 utf16, 2 latin1 */
	const uint8_t *src;
	uint8_t *buf;
	size_t n = 0;

	*out = cm_val_bool(false);
	if (cabi_need_memory(cx))
		return -1;
	switch (cx->opts.string_encoding) {
	case CM_UTF8:
		alignment = 1;
		byte_length = tagged_code_units;
		enc = 0;
		break;
	case CM_UTF16:
		alignment = 2;
		units = tagged_code_units;
		byte_length = units > UINT64_MAX / 2 ? UINT64_MAX : 2 * units;
		enc = 1;
		break;
	default:
		alignment = 2;
		if (tagged_code_units & tag) {
			units = tagged_code_units ^ tag;
			byte_length = 2 * units;
			enc = 1;
		} else {
			byte_length = tagged_code_units;
			enc = 2;
		}
		break;
	}
	/* a length past the maximum cannot be in bounds of a 32-bit
	 * memory either; report it as the bounds trap wasmtime gives */
	if (byte_length > CABI_MAX_STRING_BYTE_LENGTH &&
	    !cabi_in_bounds(cx, ptr, byte_length))
		return cabi_trap(cx, "%s", cabi_msg_string_oob(cx));
	if (byte_length > CABI_MAX_STRING_BYTE_LENGTH)
		return cabi_trap(cx, CABI_MSG_STRING_TOO_LONG);
	if (ptr % alignment != 0)
		return cabi_trap(cx, CABI_MSG_UNALIGNED);
	if (!cabi_in_bounds(cx, ptr, byte_length))
		return cabi_trap(cx, "%s", cabi_msg_string_oob(cx));
	src = cabi_mem(cx) + ptr;
	if (enc == 0) {
		size_t pos;
		int bad = utf8_check(src, (size_t)byte_length, &pos);

		if (bad == 1)
			return cabi_trap(cx,
					 CABI_MSG_INVALID_UTF8
					 " sequence from index %zu",
					 pos);
		if (bad == 2)
			return cabi_trap(
				cx, CABI_MSG_INCOMPLETE_UTF8 " from index %zu",
				pos);
		if (cabi_charge(cx, (uint64_t)byte_length + 1))
			return -1;
		buf = malloc((size_t)byte_length + 1);
		if (buf == NULL)
			return cabi_nomem(cx);
		memcpy(buf, src, (size_t)byte_length);
		n = (size_t)byte_length;
	} else if (enc == 1) {
		/* each code unit gives at most 3 UTF-8 bytes */
		if (cabi_charge(cx, (uint64_t)units * 3 + 1))
			return -1;
		buf = malloc((size_t)units * 3 + 1);
		if (buf == NULL)
			return cabi_nomem(cx);
		for (uint64_t i = 0; i < units; i++) {
			uint32_t c = src[2 * i] | (uint32_t)src[2 * i + 1] << 8;

			if (c >= 0xd800 && c <= 0xdbff && i + 1 < units) {
				uint32_t d = src[2 * i + 2] |
					     (uint32_t)src[2 * i + 3] << 8;

				if (d >= 0xdc00 && d <= 0xdfff) {
					c = 0x10000 + ((c - 0xd800) << 10) +
					    (d - 0xdc00);
					i++;
				}
			}
			if (c >= 0xd800 && c <= 0xdfff) {
				free(buf);
				return cabi_trap(cx, CABI_MSG_INVALID_UTF16);
			}
			n += cm_utf8_put(buf + n, c);
		}
	} else {
		if (cabi_charge(cx, (uint64_t)byte_length * 2 + 1))
			return -1;
		buf = malloc((size_t)byte_length * 2 + 1);
		if (buf == NULL)
			return cabi_nomem(cx);
		for (uint64_t i = 0; i < byte_length; i++)
			n += cm_utf8_put(buf + n, src[i]);
	}
	cm_val_string_take(out, buf, n);
	out->u.str.src_encoding = cx->opts.string_encoding;
	out->u.str.src_tagged_code_units = tagged_code_units;
	return 0;
}

/* ---- facts about a UTF-8 source ---------------------------------------------
 */

typedef struct src_info {
	const uint8_t *s;
	size_t len;	 /* UTF-8 bytes */
	uint64_t ncp;	 /* code points */
	uint64_t nutf16; /* UTF-16 code units */
	uint32_t max_cp; /* largest code point (0 if empty) */
} src_info;

static void scan(src_info *si, const cm_string *str)
{
	size_t i = 0;

	memset(si, 0, sizeof *si);
	si->s = str->ptr;
	si->len = str->len;
	while (i < si->len) {
		uint32_t c = cm_utf8_next(si->s, &i);

		si->ncp++;
		si->nutf16 += c >= 0x10000 ? 2 : 1;
		if (c > si->max_cp)
			si->max_cp = c;
	}
}

/* Write the UTF-16LE form of code points [from, end) at mem+at. */
static void put_utf16(cabi_cx *cx, const src_info *si, size_t from, uint64_t at)
{
	uint8_t *m = cabi_mem(cx);
	size_t i = from;

	while (i < si->len) {
		uint32_t c = cm_utf8_next(si->s, &i);

		if (c >= 0x10000) {
			uint32_t hi = 0xd800 + ((c - 0x10000) >> 10);
			uint32_t lo = 0xdc00 + ((c - 0x10000) & 0x3ff);

			m[at++] = (uint8_t)hi;
			m[at++] = (uint8_t)(hi >> 8);
			c = lo;
		}
		m[at++] = (uint8_t)c;
		m[at++] = (uint8_t)(c >> 8);
	}
}

/* ---- the reference's store_* routines
 * ---------------------------------------- */

/* What store_string_copy writes: the reference's dst_encoding. */
typedef enum copy_form { COPY_UTF8, COPY_UTF16, COPY_LATIN1 } copy_form;

static int store_string_copy(cabi_cx *cx, const src_info *si,
			     uint64_t src_code_units,
			     uint32_t dst_code_unit_size,
			     uint32_t dst_alignment, copy_form form,
			     uint64_t *ptr, uint64_t *units)
{
	uint64_t dst_byte_length = dst_code_unit_size * src_code_units, p;
	size_t i = 0, at = 0;
	uint8_t *m;

	if (dst_byte_length > CABI_REALLOC_MAX)
		return cabi_trap(cx, CABI_MSG_STRING_TOO_LONG);
	if (cabi_realloc_checked(cx, 0, 0, dst_alignment, dst_byte_length,
				 CABI_MSG_STRING_OOB, &p))
		return -1;
	m = cabi_mem(cx);
	switch (form) {
	case COPY_UTF8:
		memcpy(m + p, si->s, si->len);
		break;
	case COPY_UTF16:
		put_utf16(cx, si, 0, p);
		break;
	case COPY_LATIN1: /* every code point is below 256 */
		while (i < si->len)
			m[p + at++] = (uint8_t)cm_utf8_next(si->s, &i);
		break;
	}
	*ptr = p;
	*units = src_code_units;
	return 0;
}

static int store_string_to_utf8(cabi_cx *cx, const src_info *si,
				uint64_t src_code_units,
				uint64_t worst_case_size, uint64_t *ptr,
				uint64_t *units)
{
	uint64_t p;
	size_t i = 0;

	if (src_code_units > CABI_REALLOC_MAX)
		return cabi_trap(cx, CABI_MSG_STRING_TOO_LONG);
	if (cabi_realloc_checked(cx, 0, 0, 1, src_code_units,
				 CABI_MSG_STRING_OOB, &p))
		return -1;
	while (i < si->len) {
		size_t at = i;
		uint32_t c = cm_utf8_next(si->s, &i);

		if (c < 0x80) {
			cabi_mem(cx)[p + at] = (uint8_t)c;
			continue;
		}
		if (worst_case_size > CABI_REALLOC_MAX)
			return cabi_trap(cx, CABI_MSG_STRING_TOO_LONG);
		if (cabi_realloc_checked(cx, p, src_code_units, 1,
					 worst_case_size, CABI_MSG_STRING_OOB,
					 &p))
			return -1;
		/* the ASCII prefix stays; the rest is the UTF-8 itself */
		memcpy(cabi_mem(cx) + p + at, si->s + at, si->len - at);
		if (worst_case_size > si->len &&
		    cabi_realloc_checked(cx, p, worst_case_size, 1, si->len,
					 CABI_MSG_STRING_OOB, &p))
			return -1;
		*ptr = p;
		*units = si->len;
		return 0;
	}
	*ptr = p;
	*units = src_code_units;
	return 0;
}

static int store_utf8_to_utf16(cabi_cx *cx, const src_info *si,
			       uint64_t src_code_units, uint64_t *ptr,
			       uint64_t *units)
{
	uint64_t worst_case_size = 2 * src_code_units, p;
	uint64_t encoded = 2 * si->nutf16;

	if (worst_case_size > CABI_REALLOC_MAX)
		return cabi_trap(cx, CABI_MSG_STRING_TOO_LONG);
	if (cabi_realloc_checked(cx, 0, 0, 2, worst_case_size,
				 CABI_MSG_STRING_OOB, &p))
		return -1;
	put_utf16(cx, si, 0, p);
	if (encoded < worst_case_size &&
	    cabi_realloc_checked(cx, p, worst_case_size, 2, encoded,
				 CABI_MSG_STRING_OOB, &p))
		return -1;
	*ptr = p;
	*units = encoded / 2;
	return 0;
}

static int store_string_to_latin1_or_utf16(cabi_cx *cx, const src_info *si,
					   uint64_t src_code_units,
					   uint64_t *ptr, uint64_t *units)
{
	uint64_t p, dst_byte_length = 0;
	size_t i = 0;

	if (src_code_units > CABI_REALLOC_MAX)
		return cabi_trap(cx, CABI_MSG_STRING_TOO_LONG);
	if (cabi_realloc_checked(cx, 0, 0, 2, src_code_units,
				 CABI_MSG_STRING_OOB, &p))
		return -1;
	while (i < si->len) {
		size_t at = i;
		uint32_t c = cm_utf8_next(si->s, &i);
		uint64_t worst_case_size, encoded;
		uint8_t *m;

		if (c < 0x100) {
			cabi_mem(cx)[p + dst_byte_length++] = (uint8_t)c;
			continue;
		}
		worst_case_size = 2 * src_code_units;
		if (worst_case_size > CABI_REALLOC_MAX)
			return cabi_trap(cx, CABI_MSG_STRING_TOO_LONG);
		if (cabi_realloc_checked(cx, p, src_code_units, 2,
					 worst_case_size, CABI_MSG_STRING_OOB,
					 &p))
			return -1;
		m = cabi_mem(cx);
		for (uint64_t j = dst_byte_length; j-- > 0;) {
			m[p + 2 * j] = m[p + j];
			m[p + 2 * j + 1] = 0;
		}
		put_utf16(cx, si, at, p + 2 * dst_byte_length);
		encoded = 2 * si->nutf16;
		if (worst_case_size > encoded &&
		    cabi_realloc_checked(cx, p, worst_case_size, 2, encoded,
					 CABI_MSG_STRING_OOB, &p))
			return -1;
		*ptr = p;
		*units = (encoded / 2) | cabi_utf16_tag(cx);
		return 0;
	}
	if (dst_byte_length < src_code_units &&
	    cabi_realloc_checked(cx, p, src_code_units, 2, dst_byte_length,
				 CABI_MSG_STRING_OOB, &p))
		return -1;
	*ptr = p;
	*units = dst_byte_length;
	return 0;
}

static int store_probably_utf16_to_latin1_or_utf16(cabi_cx *cx,
						   const src_info *si,
						   uint64_t src_code_units,
						   uint64_t *ptr,
						   uint64_t *units)
{
	uint64_t src_byte_length = 2 * src_code_units, p, latin1_size;
	uint8_t *m;

	if (src_byte_length > CABI_REALLOC_MAX)
		return cabi_trap(cx, CABI_MSG_STRING_TOO_LONG);
	if (cabi_realloc_checked(cx, 0, 0, 2, src_byte_length,
				 CABI_MSG_STRING_OOB, &p))
		return -1;
	put_utf16(cx, si, 0, p);
	if (si->max_cp >= 0x100) {
		*ptr = p;
		*units = si->nutf16 | cabi_utf16_tag(cx);
		return 0;
	}
	latin1_size = si->nutf16;
	m = cabi_mem(cx);
	for (uint64_t i = 0; i < latin1_size; i++)
		m[p + i] = m[p + 2 * i];
	if (cabi_realloc_checked(cx, p, src_byte_length, 1, latin1_size,
				 CABI_MSG_STRING_OOB, &p))
		return -1;
	*ptr = p;
	*units = latin1_size;
	return 0;
}

int cabi_store_string_into_range(cabi_cx *cx, const cm_val *v, uint64_t *ptr,
				 uint64_t *tagged_code_units)
{
	const cm_string *str = &v->u.str;
	cm_string_encoding src_encoding = str->src_encoding;
	uint64_t tag = CABI_UTF16_TAG32, src_code_units;
	src_info si;
	enum { UTF8, UTF16, LATIN1 } simple;

	if (v->kind != CM_STRING || str->ptr == NULL)
		return cabi_bad_value(cx, "expected a string value");
	if (cabi_need_memory(cx))
		return -1;
	scan(&si, str);
	/*
	 * The hint's tag is the source memory's; only 32-bit sources exist
	 * today, so a 64-bit tag is recognised as well.  A hint that does
	 * not describe the bytes falls back to "UTF-8 of len bytes".
	 */
	if (src_encoding == CM_LATIN1_UTF16 &&
	    (str->src_tagged_code_units & CABI_UTF16_TAG64))
		tag = CABI_UTF16_TAG64;
	switch (src_encoding) {
	case CM_UTF8:
		simple = UTF8;
		src_code_units = str->src_tagged_code_units;
		if (src_code_units != si.len)
			goto fallback;
		break;
	case CM_UTF16:
		simple = UTF16;
		src_code_units = str->src_tagged_code_units;
		if (src_code_units != si.nutf16)
			goto fallback;
		break;
	default:
		if (str->src_tagged_code_units & tag) {
			simple = UTF16;
			src_code_units = str->src_tagged_code_units ^ tag;
			if (src_code_units != si.nutf16)
				goto fallback;
		} else {
			simple = LATIN1;
			src_code_units = str->src_tagged_code_units;
			if (src_code_units != si.ncp || si.max_cp >= 0x100)
				goto fallback;
		}
		break;
	}
	if (0) {
	fallback:
		src_encoding = CM_UTF8;
		simple = UTF8;
		src_code_units = si.len;
	}
	switch (cx->opts.string_encoding) {
	case CM_UTF8:
		if (simple == UTF8)
			return store_string_copy(cx, &si, src_code_units, 1, 1,
						 COPY_UTF8, ptr,
						 tagged_code_units);
		if (simple == UTF16)
			return store_string_to_utf8(cx, &si, src_code_units,
						    src_code_units * 3, ptr,
						    tagged_code_units);
		return store_string_to_utf8(cx, &si, src_code_units,
					    src_code_units * 2, ptr,
					    tagged_code_units);
	case CM_UTF16:
		if (simple == UTF8)
			return store_utf8_to_utf16(cx, &si, src_code_units, ptr,
						   tagged_code_units);
		return store_string_copy(cx, &si, src_code_units, 2, 2,
					 COPY_UTF16, ptr, tagged_code_units);
	default:
		if (src_encoding != CM_LATIN1_UTF16)
			return store_string_to_latin1_or_utf16(
				cx, &si, src_code_units, ptr,
				tagged_code_units);
		if (simple == LATIN1)
			return store_string_copy(cx, &si, src_code_units, 1, 2,
						 COPY_LATIN1, ptr,
						 tagged_code_units);
		return store_probably_utf16_to_latin1_or_utf16(
			cx, &si, src_code_units, ptr, tagged_code_units);
	}
}
