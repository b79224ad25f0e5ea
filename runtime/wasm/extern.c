/*
 * extern.c - runtime objects a host creates directly: host functions,
 * globals, tags and host extern references (exceptions: exn.c).
 *
 * Contract: every object is registered with its store before it is
 * returned, so the store frees it; on allocation failure nothing is
 * registered and NULL comes back.  Host externrefs are odd integers
 * (n << 1 | 1), while funcref and exnref values are malloc'd pointers and
 * so even: the three can never collide, and no externref is null.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: one
 * fixed-size object per function, global or tag the host or an
 * instantiation makes (instance.c says how many).
 */
#include "wasm/instance.h"

#include <stdlib.h>
#include <string.h>

/* ---- host functions ----------------------------------------------------- */

wasm_func *wasm_func_new_host(wasm_store *s, const wasm_functype *type,
			      wasm_host_fn fn, void *env)
{
	uint32_t id = wasm_store_intern_type(s, type);
	wasm_func *f;

	if (id == WASM_TYPE_ID_NONE || fn == NULL)
		return NULL;
	f = calloc(1, sizeof *f);
	if (f == NULL)
		return NULL;
	f->type_id = id;
	f->kind = WASM_FUNC_HOST;
	f->type = wasm_store_type(s, id);
	f->u.host.fn = fn;
	f->u.host.env = env;
	if (wasm_store_own(s, f, WASM_OBJ_FUNC) != 0) {
		free(f);
		return NULL;
	}
	return f;
}

const wasm_functype *wasm_func_type(const wasm_func *f)
{
	return f->type;
}

/* ---- globals ------------------------------------------------------------ */

wasm_global_inst *wasm_global_new(wasm_store *s, wasm_globaltype type,
				  wasm_val init)
{
	wasm_global_inst *g = calloc(1, sizeof *g);

	if (g == NULL)
		return NULL;
	g->type = type;
	init.type = type.type; /* the global's type decides the slot layout */
	wasm_val_to_slots(&init, g->slots);
	if (wasm_store_own(s, g, WASM_OBJ_GLOBAL) != 0) {
		free(g);
		return NULL;
	}
	return g;
}

wasm_val wasm_global_get(const wasm_global_inst *g)
{
	return wasm_val_from_slots(g->type.type, g->slots);
}

const wasm_globaltype *wasm_global_type(const wasm_global_inst *g)
{
	return &g->type;
}

/* ---- tags and exceptions ------------------------------------------------ */

wasm_tag *wasm_tag_new(wasm_store *s, const wasm_functype *type)
{
	uint32_t id = wasm_store_intern_type(s, type);
	wasm_tag *t;

	if (id == WASM_TYPE_ID_NONE)
		return NULL;
	t = calloc(1, sizeof *t);
	if (t == NULL)
		return NULL;
	t->type_id = id;
	t->type = wasm_store_type(s, id);
	if (wasm_store_own(s, t, WASM_OBJ_TAG) != 0) {
		free(t);
		return NULL;
	}
	return t;
}

/* ---- host extern references --------------------------------------------- */

wasm_ref wasm_ref_extern(uint32_t n)
{
	return ((wasm_ref)n << 1) | 1;
}

bool wasm_ref_extern_number(wasm_ref r, uint32_t *n)
{
	if ((r & 1) == 0)
		return false;
	if (n != NULL)
		*n = (uint32_t)(r >> 1);
	return true;
}
