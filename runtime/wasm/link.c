/*
 * link.c - import matching: does each provided extern fit the module's
 * import description?
 *
 * Contract (the spec's "import matching", without gc subtyping yet):
 *  - the extern kind equals the import kind, else "incompatible import
 *    type";
 *  - functions and tags: the interned type ids are equal (structural
 *    equality of the function types);
 *  - tables and memories: same index type (is64) and element type; the
 *    extern's CURRENT size is at least the import's min; when the import
 *    has a max, the extern's type has a max no larger;
 *  - globals: value type and mutability exactly equal.
 * A missing import (too few externs, or a NULL object) is "unknown
 * import".  Errors have kind WASM_ERR_LINK and name the import after a
 * colon.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: it
 * only checks imports against the module's types.
 */
#include "wasm/instance.h"

#include <stdio.h>

/* Append `n` as printable text: other bytes become '?'. */
static void put_name(char *buf, size_t cap, const wasm_name *n)
{
	size_t len = 0;
	uint32_t i;

	for (i = 0; i < n->len && len + 1 < cap; i++) {
		uint8_t c = n->ptr[i];
		buf[len++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	buf[len] = 0;
}

static int link_error(wasm_error *err, const char *reason,
		      const wasm_import *im)
{
	char mod[48], name[48];

	put_name(mod, sizeof mod, &im->module);
	put_name(name, sizeof name, &im->name);
	return wasm_error_set(err, WASM_ERR_LINK, WASM_NO_OFFSET,
			      "%s: \"%s\" \"%s\"", reason, mod, name);
}

/* Limits subtyping: `have` (current size, declared max) fits `want`. */
static bool limits_match(uint64_t have_min, const wasm_limits *have,
			 const wasm_limits *want)
{
	if (have->is64 != want->is64 || have->shared != want->shared)
		return false;
	if (have_min < want->min)
		return false;
	if (want->has_max && (!have->has_max || have->max > want->max))
		return false;
	return true;
}

static bool import_matches(const wasm_instance *inst, const wasm_import *im,
			   const wasm_extern *ex)
{
	const wasm_module *m = inst->module;

	switch (im->kind) {
	case WASM_EXTERN_FUNC:
		return im->u.func_typeidx < m->ntypes &&
		       ex->u.func->type_id ==
			       inst->type_ids[im->u.func_typeidx];
	case WASM_EXTERN_TABLE: {
		const wasm_table_inst *t = ex->u.table;

		/* table types are invariant: equal element types */
		return t->type.elem ==
			       wasm_instance_valtype(inst, im->u.table.elem) &&
		       limits_match(t->size, &t->type.limits,
				    &im->u.table.limits);
	}
	case WASM_EXTERN_MEMORY: {
		const wasm_memory *mem = ex->u.memory;

		return limits_match(wasm_memory_pages(mem), &mem->type.limits,
				    &im->u.memory.limits);
	}
	case WASM_EXTERN_GLOBAL: {
		const wasm_global_inst *g = ex->u.global;

		wasm_valtype want = wasm_instance_valtype(inst,
							  im->u.global.type);

		/* a mutable global is read and written: invariant */
		if (g->type.mut != im->u.global.mut)
			return false;
		return im->u.global.mut ? g->type.type == want
					: wasm_store_valtype_sub(g->type.type,
								 want);
	}
	case WASM_EXTERN_TAG:
		return im->u.tag.typeidx < m->ntypes &&
		       ex->u.tag->type_id == inst->type_ids[im->u.tag.typeidx];
	}
	return false;
}

static bool extern_present(const wasm_extern *ex)
{
	switch (ex->kind) {
	case WASM_EXTERN_FUNC:
		return ex->u.func != NULL;
	case WASM_EXTERN_TABLE:
		return ex->u.table != NULL;
	case WASM_EXTERN_MEMORY:
		return ex->u.memory != NULL;
	case WASM_EXTERN_GLOBAL:
		return ex->u.global != NULL;
	case WASM_EXTERN_TAG:
		return ex->u.tag != NULL;
	}
	return false;
}

int wasm_link_imports(wasm_instance *inst, const wasm_module *m,
		      const wasm_extern *imports, uint32_t nimports,
		      wasm_error *err)
{
	uint32_t i, nf = 0, nt = 0, nm = 0, ng = 0, ntag = 0;

	for (i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];
		const wasm_extern *ex;

		if (i >= nimports || imports == NULL ||
		    !extern_present(&imports[i]))
			return link_error(err, "unknown import", im);
		ex = &imports[i];
		if (ex->kind != im->kind || !import_matches(inst, im, ex))
			return link_error(err, "incompatible import type", im);
		switch (im->kind) {
		case WASM_EXTERN_FUNC:
			if (nf < m->nimported_funcs)
				inst->funcs[nf++] = ex->u.func;
			break;
		case WASM_EXTERN_TABLE:
			if (nt < m->nimported_tables)
				inst->tables[nt++] = ex->u.table;
			break;
		case WASM_EXTERN_MEMORY:
			if (nm < m->nimported_memories)
				inst->memories[nm++] = ex->u.memory;
			break;
		case WASM_EXTERN_GLOBAL:
			if (ng < m->nimported_globals)
				inst->globals[ng++] = ex->u.global;
			break;
		case WASM_EXTERN_TAG:
			if (ntag < m->nimported_tags)
				inst->tags[ntag++] = ex->u.tag;
			break;
		}
	}
	if (nf != m->nimported_funcs || nt != m->nimported_tables ||
	    nm != m->nimported_memories || ng != m->nimported_globals ||
	    ntag != m->nimported_tags)
		return wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
				      "import counts disagree with imports");
	return 0;
}
