/*
 * error.h - load-time errors (decode, validate, link) of the core engine.
 *
 * Contract: every function that reads untrusted input reports failure
 * through a wasm_error and a -1 return; none aborts.  `msg` holds the
 * spec's reason text first ("unexpected end", "type mismatch", "unknown
 * import", ...) so conformance drivers can match on it, optionally
 * followed by detail after a colon.  `offset` is the byte position in the
 * binary, or WASM_NO_OFFSET when the error is not tied to one (linking).
 */
#ifndef HOSTEL_WASM_ERROR_H
#define HOSTEL_WASM_ERROR_H

#include <stddef.h>

#define WASM_NO_OFFSET	   ((size_t)-1)
#define WASM_ERROR_MSG_MAX 160

typedef enum wasm_error_kind {
	WASM_ERR_NONE = 0,
	WASM_ERR_MALFORMED, /* the binary does not decode */
	WASM_ERR_INVALID,   /* decodes, but validation rejects it */
	WASM_ERR_LINK,	    /* imports cannot be satisfied */
	WASM_ERR_RESOURCE,  /* out of memory or an engine limit */
} wasm_error_kind;

typedef struct wasm_error {
	wasm_error_kind kind;
	size_t offset;
	char msg[WASM_ERROR_MSG_MAX];
} wasm_error;

/* Fill *err (if non-NULL) printf-style; always returns -1. */
int wasm_error_set(wasm_error *err, wasm_error_kind kind, size_t offset,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
