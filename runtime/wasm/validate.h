/*
 * validate.h - module validation (everything but the decoding).
 *
 * Contract: wasm_module_validate() checks a decoded module against the
 * spec's validation rules (index spaces, limits, types of constant
 * expressions, C.refs for ref.func, exports, start function) and
 * validates and compiles every function body (compile.c).  On success it
 * fills m->compiled, sets m->free_compiled and m->validated, and returns
 * 0; on failure it returns -1 with *err (INVALID, or MALFORMED for a
 * function body that does not decode) and leaves m->compiled NULL.
 */
#ifndef HOSTEL_WASM_VALIDATE_H
#define HOSTEL_WASM_VALIDATE_H

#include "wasm/module.h"

int wasm_module_validate(wasm_module *m, wasm_error *err);

/*
 * Validate one constant expression of type `expect`.  Globals with index
 * below `nglobals` may be read (if immutable).  Returns 0 or -1 with *err.
 */
int wasm_constexpr_validate(const wasm_module *m, const wasm_constexpr *ce,
			    wasm_valtype expect, uint32_t nglobals,
			    wasm_error *err);

#endif
