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

/*
 * Subtyping of value types within module m (function-references without
 * GC): numbers match themselves; (ref null? ht1) <: (ref null? ht2) when
 * they are of one hierarchy, non-null <: nullable, and ht1 == ht2, ht2 is
 * the abstract top, or both name type indices of equal function types.
 */
bool wasm_valtype_sub(const wasm_module *m, wasm_valtype a, wasm_valtype b);

/*
 * The reference type (ref null? ht) for a heap type read as s33 from an
 * instruction (ref.null, the typed select's types, block types).  Returns
 * 0; -1 with *err MALFORMED for an unknown or GC abstract heap type,
 * INVALID ("unknown type N") for a type index out of range.
 */
int wasm_heaptype_ref(const wasm_module *m, int64_t ht, bool nullable,
		      size_t off, wasm_valtype *out, wasm_error *err);

/* Whether every type index t names is a type of m ("unknown type"). */
int wasm_valtype_check(const wasm_module *m, wasm_valtype t, size_t off,
		       wasm_error *err);

#endif
