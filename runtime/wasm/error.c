/*
 * error.c - filling wasm_error values.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none (a
 * fixed-size message buffer in the caller's wasm_error).
 */
#include "wasm/error.h"

#include <stdarg.h>
#include <stdio.h>

int wasm_error_set(wasm_error *err, wasm_error_kind kind, size_t offset,
		   const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	err->kind = kind;
	err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}
