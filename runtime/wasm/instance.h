/*
 * instance.h - internals shared by the files that build runtime objects
 * (store.c, memory.c, table.c, extern.c, link.c, constexpr.c,
 * instance.c).  The interpreter does not need these; it uses store.h.
 *
 * Contract: the *_create functions report failure through wasm_error
 * (kind RESOURCE) and register nothing on failure; on success the object
 * is owned by the store.  The *_destroy functions are called only by
 * wasm_store_free.
 */
#ifndef HOSTEL_WASM_INSTANCE_H
#define HOSTEL_WASM_INSTANCE_H

#include "wasm/store.h"

wasm_memory *wasm_memory_create(wasm_store *s, const wasm_memtype *type,
				wasm_error *err);
void wasm_memory_destroy(wasm_memory *m);

wasm_table_inst *wasm_table_create(wasm_store *s, const wasm_tabletype *type,
				   wasm_ref init, wasm_error *err);
void wasm_table_destroy(wasm_table_inst *t);

void wasm_instance_destroy(wasm_instance *inst);

/*
 * A type of inst's module in the store's form (module.h): a type index
 * becomes the store id inst->type_ids gives it (filled already).
 */
wasm_valtype wasm_instance_valtype(const wasm_instance *inst, wasm_valtype t);

/*
 * Import matching: checks imports[i] against m->imports[i] for every i
 * and stores each import into inst's index spaces (inst->type_ids must be
 * filled already).  Returns 0, or -1 with a LINK error.
 */
int wasm_link_imports(wasm_instance *inst, const wasm_module *m,
		      const wasm_extern *imports, uint32_t nimports,
		      wasm_error *err);

/*
 * Evaluates a constant expression of `inst` to one value in slot
 * representation.  Only globals below `nglobals` may be read (imports
 * and globals defined before the one being initialised); every function
 * of inst must exist already.  Returns 0, or -1 with an INVALID error
 * when the expression is not a well-formed constant expression.
 */
int wasm_constexpr_eval(const wasm_instance *inst, uint32_t nglobals,
			const wasm_constexpr *ce, uint64_t out[2],
			wasm_error *err);

#endif
