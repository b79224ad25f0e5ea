/*
 * json-text.h - compact JSON text of a jansson value, appended to a
 * buffer the caller keeps and reuses.
 *
 * Why not json_dumps(): it allocates a buffer per value, writes through a
 * callback per token and formats every integer with snprintf.  The daemon
 * turns the arguments and result of every call into history payload text;
 * at tens of thousands of calls a second that was a sixth of the loop's
 * work for the history.  This writer does the same in one pass into a
 * buffer that grows once and is then reused.
 *
 * Contract: the text is byte for byte what json_dumps(v, JSON_COMPACT |
 * JSON_ENCODE_ANY) gives (tests/unit/ipc/test_json_text.c compares the two):
 * members in the object's order, strings escaped as jansson does, reals
 * formatted by jansson itself.  json_text_put() returns 0, -ENOMEM (out of
 * memory, the buffer's text is then void) or -ELOOP (nesting deeper than
 * JSON_TEXT_DEPTH_MAX: a value that deep never comes out of a parse).
 * The buffer's text is NUL-terminated after every successful put.
 */
#ifndef HOSTEL_IPC_JSON_TEXT_H
#define HOSTEL_IPC_JSON_TEXT_H

#include <stddef.h>

#include <jansson.h>

#define JSON_TEXT_DEPTH_MAX 2048

struct json_text {
	char *buf; /* NUL-terminated text, or NULL before the first put */
	size_t len, cap;
};

/* Append v's text. */
int json_text_put(struct json_text *t, const json_t *v);

/*
 * An upper bound of the length of v's text, found without writing it
 * (one pass over the tree, no formatting): for deciding cheaply that a
 * value is small enough, e.g. for the history's bounded form, before
 * paying for its text.  SIZE_MAX when v is NULL or nested deeper than
 * JSON_TEXT_DEPTH_MAX.
 */
size_t json_text_bound(const json_t *v);

/* Forget the text, keep the memory. */
void json_text_reset(struct json_text *t);

void json_text_free(struct json_text *t);

#endif
