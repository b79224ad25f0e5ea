/*
 * reader.h - a bounds-checked cursor over a WebAssembly binary.
 *
 * Contract: a wasm_reader reads the bytes [pos, end) of a buffer whose
 * offsets count from `bytes` (the start of the whole binary), so every
 * error carries an absolute offset.  No read ever touches a byte at or
 * past `end`.  Every function returns 0 on success, or -1 after filling
 * *err with kind WASM_ERR_MALFORMED and the spec's reason text:
 *   - running past `end`: `end_msg` ("unexpected end" at the top level,
 *     "unexpected end of section or function" inside a section);
 *   - LEB128 with more bytes than its width allows: "integer
 *     representation too long"; unused bits of the last byte that are not
 *     zero (unsigned) or a sign extension (signed): "integer too large";
 *   - a name whose length passes `end`: "length out of bounds"; bytes that
 *     are not UTF-8: "malformed UTF-8 encoding".
 * On failure the position is unspecified; callers stop reading.
 */
#ifndef HOSTEL_WASM_READER_H
#define HOSTEL_WASM_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wasm/error.h"
#include "wasm/module.h"

#define WASM_MSG_UNEXPECTED_END		"unexpected end"
#define WASM_MSG_UNEXPECTED_END_SECTION "unexpected end of section or function"

typedef struct wasm_reader {
	const uint8_t *bytes; /* start of the binary; offsets count from here */
	size_t pos;	      /* next byte to read */
	size_t end;	      /* one past the last readable byte */
	const char *end_msg;  /* reason used when a read passes `end` */
	wasm_error *err;      /* may be NULL */
} wasm_reader;

static inline void wasm_reader_init(wasm_reader *r, const uint8_t *bytes,
				    size_t len, wasm_error *err)
{
	r->bytes = bytes;
	r->pos = 0;
	r->end = len;
	r->end_msg = WASM_MSG_UNEXPECTED_END;
	r->err = err;
}

/* A reader over the next `len` bytes of r (the caller checked they exist). */
static inline wasm_reader wasm_reader_sub(const wasm_reader *r, size_t len,
					  const char *end_msg)
{
	wasm_reader s = *r;

	s.end = r->pos + len;
	s.end_msg = end_msg;
	return s;
}

static inline size_t wasm_reader_remaining(const wasm_reader *r)
{
	return r->end - r->pos;
}

static inline bool wasm_reader_at_end(const wasm_reader *r)
{
	return r->pos >= r->end;
}

/* Fail with `msg` at `offset`. */
static inline int wasm_reader_fail(const wasm_reader *r, size_t offset,
				   const char *msg)
{
	wasm_error_set(r->err, WASM_ERR_MALFORMED, offset, "%s", msg);
	return -1; /* literally, so compilers see the failure path */
}

static inline int wasm_read_u8(wasm_reader *r, uint8_t *out)
{
	if (r->pos >= r->end)
		return wasm_reader_fail(r, r->pos, r->end_msg);
	*out = r->bytes[r->pos++];
	return 0;
}

/* Look at the next byte without consuming it. */
static inline int wasm_peek_u8(const wasm_reader *r, uint8_t *out)
{
	if (r->pos >= r->end)
		return wasm_reader_fail(r, r->pos, r->end_msg);
	*out = r->bytes[r->pos];
	return 0;
}

/* `n` raw bytes; *out points into the buffer. */
static inline int wasm_read_bytes(wasm_reader *r, size_t n, const uint8_t **out)
{
	if (n > r->end - r->pos)
		return wasm_reader_fail(r, r->pos, r->end_msg);
	*out = r->bytes + r->pos;
	r->pos += n;
	return 0;
}

/*
 * LEB128 of width `bits` (1..64).  The last permitted byte may carry only
 * `bits - 7 * (maxbytes - 1)` value bits; for a signed number the bits
 * above them must repeat the sign bit, for an unsigned one they must be 0.
 */
static inline int wasm_read_leb(wasm_reader *r, unsigned bits, bool is_signed,
				uint64_t *out)
{
	unsigned maxbytes = (bits + 6) / 7;
	unsigned lastbits = bits - 7 * (maxbytes - 1);
	size_t start = r->pos;
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	for (unsigned i = 0;; i++) {
		if (r->pos >= r->end)
			return wasm_reader_fail(r, r->pos, r->end_msg);
		b = r->bytes[r->pos++];
		if (i == maxbytes - 1) {
			if (b & 0x80)
				return wasm_reader_fail(
					r, start,
					"integer representation too long");
			if (is_signed) {
				uint8_t mask =
					(uint8_t)((0x7fu << (lastbits - 1)) &
						  0x7fu);
				if ((b & mask) != 0 && (b & mask) != mask)
					return wasm_reader_fail(
						r, start, "integer too large");
			} else if ((b & 0x7fu) >> lastbits) {
				return wasm_reader_fail(r, start,
							"integer too large");
			}
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	if (bits < 64 && !is_signed)
		v &= ((uint64_t)1 << bits) - 1;
	*out = v;
	return 0;
}

static inline int wasm_read_u32(wasm_reader *r, uint32_t *out)
{
	uint64_t v;

	if (wasm_read_leb(r, 32, false, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static inline int wasm_read_s32(wasm_reader *r, int32_t *out)
{
	uint64_t v;

	if (wasm_read_leb(r, 32, true, &v))
		return -1;
	*out = (int32_t)(uint32_t)v;
	return 0;
}

static inline int wasm_read_u64(wasm_reader *r, uint64_t *out)
{
	return wasm_read_leb(r, 64, false, out);
}

static inline int wasm_read_s64(wasm_reader *r, int64_t *out)
{
	uint64_t v;

	if (wasm_read_leb(r, 64, true, &v))
		return -1;
	*out = (int64_t)v;
	return 0;
}

/* Block types and heap types: a signed 33-bit number. */
static inline int wasm_read_s33(wasm_reader *r, int64_t *out)
{
	uint64_t v;

	if (wasm_read_leb(r, 33, true, &v))
		return -1;
	*out = (int64_t)v;
	return 0;
}

/*
 * True when [p, p + n) is well-formed UTF-8: shortest form only, no
 * surrogates (U+D800..U+DFFF), nothing above U+10FFFF.
 */
static inline bool wasm_utf8_valid(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t c = p[i];
		uint32_t cp;
		size_t len;

		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (len > n - i)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return false;
		i += len;
	}
	return true;
}

/* A name: u32 length, then that many bytes of UTF-8. */
static inline int wasm_read_name(wasm_reader *r, wasm_name *out)
{
	uint32_t len;
	size_t start;

	if (wasm_read_u32(r, &len))
		return -1;
	start = r->pos;
	if (len > r->end - r->pos)
		return wasm_reader_fail(r, start, "length out of bounds");
	if (!wasm_utf8_valid(r->bytes + start, len))
		return wasm_reader_fail(r, start, "malformed UTF-8 encoding");
	out->ptr = r->bytes + start;
	out->len = len;
	r->pos += len;
	return 0;
}

#endif
