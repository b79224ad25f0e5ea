/*
 * payload.h - building event payloads: JSON object text, without a JSON
 * library.
 *
 * Contract: strings are escaped so the result is valid JSON whatever the
 * input bytes: control characters become \uXXXX, and bytes that are not
 * well-formed UTF-8 become U+FFFD, so guest output and peer-supplied
 * names can never break a payload.  Raw fragments (a caller's JSON
 * text: arguments, results) are copied as they are; the history checks
 * the whole payload with payload_valid_object() before it accepts it.
 * Out of memory is sticky: payload_finish() then returns NULL.
 */
#ifndef HOSTEL_STORE_PAYLOAD_H
#define HOSTEL_STORE_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct payload {
	char *buf;
	size_t len, cap;
	bool failed; /* out of memory */
	bool need_comma;
};

/* Start an object: "{". */
void payload_begin(struct payload *p);

/* Members; a NULL string or fragment gives JSON null. */
void payload_str(struct payload *p, const char *key, const char *value);
void payload_strn(struct payload *p, const char *key, const char *value,
		  size_t len);
void payload_int(struct payload *p, const char *key, int64_t value);
void payload_bool(struct payload *p, const char *key, bool value);
void payload_raw(struct payload *p, const char *key, const char *json);

/* Open and close a nested object member. */
void payload_object(struct payload *p, const char *key);
void payload_end_object(struct payload *p);

/*
 * Close the object and hand over the text (the caller frees it), or NULL
 * when memory ran out.  The payload is empty again afterwards.
 */
char *payload_finish(struct payload *p);

/* Drop whatever was built. */
void payload_clear(struct payload *p);

/* Nesting deeper than this is refused (SQLite's JSON functions agree). */
#define PAYLOAD_DEPTH_MAX 1000

/*
 * Whether text[0..len) is one JSON object (RFC 8259 syntax, whitespace
 * around it allowed), nested at most PAYLOAD_DEPTH_MAX deep.  Checks the
 * syntax only, in one pass without allocating; what it accepts SQLite's
 * json_valid() accepts too (tests/unit/store/test_history.c compares the two).
 * Bytes of 0x80 and above inside strings pass as they are.
 */
bool payload_valid_object(const char *text, size_t len);

/*
 * Append `len` bytes as a JSON string (quotes included) to the payload's
 * text; exposed for the line helpers.
 */
void payload_string(struct payload *p, const char *s, size_t len);

#endif
