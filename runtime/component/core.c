/*
 * core.c - core-level types inside components: core func types, core
 * module types (digest 1.6) and the module type of an embedded module.
 *
 * Contract: every module type produced here has validated imports and
 * exports (known types, limits within range, unique two-level import
 * names and unique export names, as wasmparser requires inside
 * components) so that module subtyping and core instantiation checks can
 * compare them directly.
 *
 * Allocations sized by a guest or a client (issue 18 audit): core
 * module types and their import keys in the validation arena, as many
 * as the modules' imports and exports (their length).
 */
#include <string.h>

#include "component/decode.h"
#include "component/internal.h"

const char *cm_core_kind_name(wasm_externkind k)
{
	static const char *const names[] = {"func", "table", "memory", "global",
					    "tag"};

	return k <= WASM_EXTERN_TAG ? names[k] : "?";
}

static int check_limits(vstate *v, const wasm_limits *l, bool memory,
			size_t off)
{
	uint64_t max_pages = l->is64 ? (1ull << 48) : 65536;

	if (l->has_max && l->max < l->min)
		return cm_fail(v, off,
			       "size minimum must not be greater than maximum");
	if (memory) {
		if (l->min > max_pages || (l->has_max && l->max > max_pages))
			return cm_fail(v, off,
				       "memory size must be at most %llu pages "
				       "(%s)",
				       (unsigned long long)max_pages,
				       l->is64 ? "16 EiB" : "4GiB");
		if (l->shared && !l->has_max)
			return cm_fail(v, off,
				       "shared memory must have maximum size");
	} else if (!l->is64 && (l->min > UINT32_MAX ||
				(l->has_max && l->max > UINT32_MAX))) {
		return cm_fail(v, off, "table size must be at most 2^32-1");
	}
	return 0;
}

/* A core extern description in a module type, given its local types. */
static int core_extern(vstate *v, const raw_core_externtype *r,
		       const cm_core_type *const *types, uint32_t ntypes,
		       size_t off, cm_core_externtype *out)
{
	memset(out, 0, sizeof *out);
	out->kind = r->kind;
	switch (r->kind) {
	case WASM_EXTERN_FUNC:
	case WASM_EXTERN_TAG:
		if (r->typeidx >= ntypes)
			return cm_fail(v, off, "type index out of bounds");
		if (types[r->typeidx]->kind != CM_CORE_FUNCTYPE)
			return cm_fail(v, off,
				       "type index %u is not a function type",
				       r->typeidx);
		out->u.func = &types[r->typeidx]->u.func;
		if (r->kind == WASM_EXTERN_TAG && out->u.func->nresults != 0)
			return cm_fail(v, off,
				       "tag function types must not return "
				       "anything");
		return 0;
	case WASM_EXTERN_TABLE:
		out->u.table = r->table;
		return check_limits(v, &r->table.limits, false, off);
	case WASM_EXTERN_MEMORY:
		out->u.memory = r->memory;
		return check_limits(v, &r->memory.limits, true, off);
	case WASM_EXTERN_GLOBAL:
		out->u.global = r->global;
		return 0;
	}
	return cm_fail(v, off, "unknown external kind");
}

static const cm_core_type *module_type(scope *s, const raw_core_type *rt)
{
	vstate *v = s->v;
	cm_core_type *t = cm_arena_alloc(v->a, sizeof *t);
	const cm_core_type **types = NULL;
	uint32_t ntypes = 0, cap = 0;
	cm_hmap inames, enames;
	uint32_t ni = 0, ne = 0;

	memset(&inames, 0, sizeof inames);
	memset(&enames, 0, sizeof enames);
	if (t == NULL)
		return cm_oom(v), NULL;
	t->kind = CM_CORE_MODULETYPE;
	for (uint32_t i = 0; i < rt->ndecls; i++) {
		if (rt->decls[i].kind == RAW_MDECL_IMPORT)
			ni++;
		else if (rt->decls[i].kind == RAW_MDECL_EXPORT)
			ne++;
	}
	t->u.module.imports =
		cm_arena_array(v->a, ni ? ni : 1, sizeof(cm_core_import));
	t->u.module.exports =
		cm_arena_array(v->a, ne ? ne : 1, sizeof(cm_core_export));
	if (t->u.module.imports == NULL || t->u.module.exports == NULL)
		return cm_oom(v), NULL;
	for (uint32_t i = 0; i < rt->ndecls; i++) {
		const raw_module_decl *d = &rt->decls[i];
		const cm_core_type *nt = NULL, **slot;

		switch (d->kind) {
		case RAW_MDECL_IMPORT: {
			cm_core_import *im =
				&t->u.module.imports[t->u.module.nimports];
			size_t klen = (size_t)d->module.len + 1 + d->name.len;
			char *key = cm_arena_alloc(v->a, klen + 1);

			if (key == NULL)
				return cm_oom(v), NULL;
			memcpy(key, d->module.ptr, d->module.len);
			key[d->module.len] = '\0';
			memcpy(key + d->module.len + 1, d->name.ptr,
			       d->name.len);
			if (cm_hmap_get(&inames, key, (uint32_t)klen) != NULL)
				return cm_fail(v, d->offset,
					       "duplicate import name `%s:%s`",
					       d->module.ptr, d->name.ptr),
				       NULL;
			if (cm_hmap_put(v->a, &inames, key, (uint32_t)klen,
					key))
				return cm_oom(v), NULL;
			im->module = d->module;
			im->name = d->name;
			if (core_extern(v, &d->ext, types, ntypes, d->offset,
					&im->type))
				return NULL;
			t->u.module.nimports++;
			break;
		}
		case RAW_MDECL_EXPORT: {
			cm_core_export *ex =
				&t->u.module.exports[t->u.module.nexports];

			if (cm_hmap_get(&enames, d->name.ptr, d->name.len))
				return cm_fail(v, d->offset,
					       "export name `%s` already "
					       "defined",
					       d->name.ptr),
				       NULL;
			if (cm_hmap_put(v->a, &enames, d->name.ptr, d->name.len,
					ex))
				return cm_oom(v), NULL;
			ex->name = d->name;
			if (core_extern(v, &d->ext, types, ntypes, d->offset,
					&ex->type))
				return NULL;
			t->u.module.nexports++;
			break;
		}
		case RAW_MDECL_TYPE:
			if (d->type->is_module)
				return cm_fail(v, d->offset,
					       "invalid leading byte (0x50) "
					       "for core type: module types "
					       "cannot be nested"),
				       NULL;
			for (uint32_t k = 0; k < d->type->nfuncs; k++) {
				nt = cm_build_core_type(s, d->type, k);
				if (nt == NULL)
					return NULL;
				slot = cm_arena_push(v->a, (void **)&types,
						     &ntypes, &cap,
						     sizeof *slot);
				if (slot == NULL)
					return cm_oom(v), NULL;
				*slot = nt;
			}
			nt = NULL;
			break;
		case RAW_MDECL_ALIAS:
			if (d->count == 0) {
				if (d->index >= ntypes)
					return cm_fail(v, d->offset,
						       "type index out of "
						       "bounds"),
					       NULL;
				nt = types[d->index];
			} else {
				/* count 1 is the scope the module type is
				 * declared in, each more one scope further
				 * out (Binary.md's outer alias bound, as
				 * wasmparser walks it); core types hold no
				 * resources, so any enclosing scope's do */
				scope *in = s;
				const cm_item *it;

				for (uint32_t k = 1; k < d->count && in != NULL;
				     k++)
					in = in->parent;
				/* wasmparser names the count of component
				 * scopes past the module type's, one less */
				if (in == NULL)
					return cm_fail(v, d->offset,
						       "invalid outer alias "
						       "count of %u",
						       d->count - 1),
					       NULL;
				it = cm_get(in, CM_SORT_CORE_TYPE, d->index,
					    d->offset);
				if (it == NULL)
					return NULL;
				nt = it->t.core_type;
			}
			break;
		}
		if (nt != NULL) {
			slot = cm_arena_push(v->a, (void **)&types, &ntypes,
					     &cap, sizeof *slot);
			if (slot == NULL)
				return cm_oom(v), NULL;
			*slot = nt;
		}
	}
	return t;
}

uint32_t cm_core_type_count(const raw_core_type *rt)
{
	return rt->is_module ? 1 : rt->nfuncs;
}

const cm_core_type *cm_build_core_type(scope *s, const raw_core_type *rt,
				       uint32_t i)
{
	cm_core_type *t;

	if (rt->is_module)
		return module_type(s, rt);
	t = cm_arena_alloc(s->v->a, sizeof *t);
	if (t == NULL)
		return cm_oom(s->v), NULL;
	t->kind = CM_CORE_FUNCTYPE;
	t->u.func = rt->funcs[i];
	return t;
}

static int extern_of_module(vstate *v, const wasm_module *m,
			    wasm_externkind kind, uint32_t idx,
			    cm_core_externtype *out)
{
	memset(out, 0, sizeof *out);
	out->kind = kind;
	switch (kind) {
	case WASM_EXTERN_FUNC: {
		uint32_t ti = wasm_module_func_typeidx(m, idx);

		if (ti >= m->ntypes)
			return cm_fail(v, 0, "bad module function type");
		out->u.func = &m->types[ti];
		return 0;
	}
	case WASM_EXTERN_TABLE:
		out->u.table = *wasm_module_table_type(m, idx);
		return 0;
	case WASM_EXTERN_MEMORY:
		out->u.memory = *wasm_module_memory_type(m, idx);
		return 0;
	case WASM_EXTERN_GLOBAL:
		out->u.global = *wasm_module_global_type(m, idx);
		return 0;
	case WASM_EXTERN_TAG: {
		uint32_t ti = wasm_module_tag_type(m, idx)->typeidx;

		if (ti >= m->ntypes)
			return cm_fail(v, 0, "bad module tag type");
		out->u.func = &m->types[ti];
		return 0;
	}
	}
	return cm_fail(v, 0, "unknown external kind");
}

static int str_of_name(vstate *v, wasm_name n, cm_str *out)
{
	if (cm_arena_str(v->a, n.ptr, n.len, out))
		return cm_oom(v);
	return 0;
}

const cm_core_type *cm_module_type_of(vstate *v, const wasm_module *m)
{
	cm_core_type *t = cm_arena_alloc(v->a, sizeof *t);
	uint32_t counters[5] = {0, 0, 0, 0, 0};

	if (t == NULL)
		return cm_oom(v), NULL;
	t->kind = CM_CORE_MODULETYPE;
	t->u.module.imports = cm_arena_array(
		v->a, m->nimports ? m->nimports : 1, sizeof(cm_core_import));
	t->u.module.exports = cm_arena_array(
		v->a, m->nexports ? m->nexports : 1, sizeof(cm_core_export));
	if (t->u.module.imports == NULL || t->u.module.exports == NULL)
		return cm_oom(v), NULL;
	for (uint32_t i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];
		cm_core_import *ci = &t->u.module.imports[i];

		if (str_of_name(v, im->module, &ci->module) ||
		    str_of_name(v, im->name, &ci->name))
			return NULL;
		if (im->kind > WASM_EXTERN_TAG)
			return cm_fail(v, 0, "unknown import kind"), NULL;
		if (extern_of_module(v, m, im->kind, counters[im->kind]++,
				     &ci->type))
			return NULL;
	}
	t->u.module.nimports = m->nimports;
	for (uint32_t i = 0; i < m->nexports; i++) {
		const wasm_export *ex = &m->exports[i];
		cm_core_export *ce = &t->u.module.exports[i];

		if (str_of_name(v, ex->name, &ce->name))
			return NULL;
		if (extern_of_module(v, m, ex->kind, ex->index, &ce->type))
			return NULL;
	}
	t->u.module.nexports = m->nexports;
	return t;
}

int cm_check_module_imports(vstate *v, const wasm_module *m, size_t offset)
{
	cm_hmap seen;

	memset(&seen, 0, sizeof seen);
	for (uint32_t i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];
		size_t klen = (size_t)im->module.len + 1 + im->name.len;
		char *key = cm_arena_alloc(v->a, klen + 1);

		if (key == NULL)
			return cm_oom(v);
		memcpy(key, im->module.ptr, im->module.len);
		key[im->module.len] = '\0';
		memcpy(key + im->module.len + 1, im->name.ptr, im->name.len);
		if (cm_hmap_get(&seen, key, (uint32_t)klen) != NULL)
			return cm_fail(
				v, offset, "duplicate import name `%.*s:%.*s`",
				(int)im->module.len,
				(const char *)im->module.ptr, (int)im->name.len,
				(const char *)im->name.ptr);
		if (cm_hmap_put(v->a, &seen, key, (uint32_t)klen, key))
			return cm_oom(v);
	}
	return 0;
}
