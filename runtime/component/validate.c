/*
 * validate.c - raw tree -> validated cm_component (digest 1.2-1.11).
 *
 * Contract: cm_validate walks the definitions of a decoded component in
 * binary order, building each index space incrementally (so only earlier
 * definitions can be referenced), and checks every rule the Component
 * Model's validation gives: defined types (non-empty, kebab labels,
 * flags <= 32, own/borrow of resources, no borrow in results, elem_size
 * bound), component/instance type declarators, outer aliases (count,
 * sorts, the cross-component resource rule), core modules (core
 * validation plus unique imports), core and component instantiation
 * (argument presence, names and subtyping with resource substitution),
 * canonical definitions (canon.c), import/export names, attributes,
 * annotated names and external visibility (visibility.c).  The first
 * violation is reported; nothing is partially returned.
 *
 * Types built here are immutable once their definition is validated;
 * every resource type has a canonical node (see types.h) and every
 * import/export of a type creates a new node aliasing it.
 *
 * Allocations sized by a guest or a client (issue 18 audit): every
 * index space, definition list and type is in the load's arena
 * (component.c: bounded by the component's length), an index space at
 * most MAX_SPACE_ITEMS (1,000,000) items; types at most
 * CM_MAX_TYPE_DEPTH (100) deep and CM_MAX_TYPE_SIZE (1,000,000) large.
 */
#include <stdio.h>
#include <string.h>

#include "component/decode.h"
#include "component/internal.h"
#include "wasm/validate.h"

#define MAX_SPACE_ITEMS 1000000u

/* Capacities of a cm_component's arrays while it is built. */
typedef struct cbuild {
	uint32_t defs, modules, core_instances, components, instances, aliases,
		canons, imports, exports, starts, values;
} cbuild;

static const char *const space_names[CM_NSORTS] = {
	[CM_SORT_CORE_FUNC] = "function",
	[CM_SORT_CORE_TABLE] = "table",
	[CM_SORT_CORE_MEMORY] = "memory",
	[CM_SORT_CORE_GLOBAL] = "global",
	[CM_SORT_CORE_TAG] = "tag",
	[CM_SORT_CORE_TYPE] = "core type",
	[CM_SORT_CORE_MODULE] = "module",
	[CM_SORT_CORE_INSTANCE] = "core instance",
	[CM_SORT_FUNC] = "func",
	[CM_SORT_VALUE] = "value",
	[CM_SORT_TYPE] = "type",
	[CM_SORT_COMPONENT] = "component",
	[CM_SORT_INSTANCE] = "instance",
};

/* What an export of that sort is called in "is not a ..." messages. */
static const char *const sort_desc[CM_NSORTS] = {
	[CM_SORT_CORE_FUNC] = "func",	  [CM_SORT_CORE_TABLE] = "table",
	[CM_SORT_CORE_MEMORY] = "memory", [CM_SORT_CORE_GLOBAL] = "global",
	[CM_SORT_CORE_TAG] = "tag",	  [CM_SORT_CORE_TYPE] = "type",
	[CM_SORT_CORE_MODULE] = "module", [CM_SORT_CORE_INSTANCE] = "instance",
	[CM_SORT_FUNC] = "func",	  [CM_SORT_VALUE] = "value",
	[CM_SORT_TYPE] = "type",	  [CM_SORT_COMPONENT] = "component",
	[CM_SORT_INSTANCE] = "instance",
};

int cm_push(scope *s, cm_sort sort, cm_origin origin, uint32_t def,
	    const cm_item *proto, size_t offset)
{
	cm_space *sp = &s->spaces[sort];
	cm_item *it;

	if (sp->n >= MAX_SPACE_ITEMS)
		return cm_fail(s->v, offset,
			       "%s index space exceeds the limit of %u items",
			       space_names[sort], MAX_SPACE_ITEMS);
	it = cm_arena_push(s->v->a, (void **)&sp->items, &sp->n, &sp->cap,
			   sizeof *it);
	if (it == NULL)
		return cm_oom(s->v);
	*it = *proto;
	it->origin = origin;
	it->def = def;
	return (int)(sp->n - 1);
}

const cm_item *cm_get(scope *s, cm_sort sort, uint32_t idx, size_t offset)
{
	if (idx >= s->spaces[sort].n) {
		cm_fail(s->v, offset, "unknown %s %u: %s index out of bounds",
			space_names[sort], idx, space_names[sort]);
		return NULL;
	}
	return &s->spaces[sort].items[idx];
}

static void *grow(scope *s, void *arrp, uint32_t *n, uint32_t *cap, size_t size)
{
	void *p = cm_arena_push(s->v->a, (void **)arrp, n, cap, size);

	if (p == NULL)
		cm_oom(s->v);
	return p;
}

static int add_def(scope *s, cbuild *b, cm_def_kind kind, uint32_t index)
{
	cm_def *d =
		grow(s, &s->comp->defs, &s->comp->ndefs, &b->defs, sizeof *d);

	if (d == NULL)
		return -1;
	d->kind = kind;
	d->index = index;
	return 0;
}

/* ---- value types ------------------------------------------------------------
 */

static const cm_type *valtype(scope *s, raw_valtype rv, size_t off)
{
	const cm_item *it;

	if (raw_is_prim(rv))
		return cm_prim_of_byte((uint8_t)rv);
	it = cm_get(s, CM_SORT_TYPE, rv, off);
	if (it == NULL)
		return NULL;
	if (!cm_type_is_value(it->t.type))
		return cm_fail(s->v, off, "type index %u is not a defined type",
			       rv),
		       NULL;
	return it->t.type;
}

static const cm_type *opt_valtype(scope *s, raw_valtype rv, size_t off,
				  bool *failed)
{
	const cm_type *t;

	*failed = false;
	if (rv == RAW_NONE)
		return NULL;
	t = valtype(s, rv, off);
	*failed = t == NULL;
	return t;
}

typedef struct label_kind {
	const char *what; /* "record field name" */
	const char *prev; /* "field name" */
} label_kind;

static int check_labels(scope *s, const cm_str *labels, size_t stride,
			uint32_t n, const label_kind *k, size_t off)
{
	vstate *v = s->v;
	cm_hmap seen;

	memset(&seen, 0, sizeof seen);
	for (uint32_t i = 0; i < n; i++) {
		const cm_str *l =
			(const cm_str *)((const char *)labels + i * stride);
		cm_str low;
		cm_hentry *prev;

		if (l->len == 0)
			return cm_fail(v, off, "%s cannot be empty", k->what);
		if (!cm_is_kebab(l->ptr, l->len))
			return cm_fail(v, off, "%s `%s` is not in kebab case",
				       k->what, l->ptr);
		if (cm_lower(v, *l, &low))
			return -1;
		prev = cm_hmap_get(&seen, low.ptr, low.len);
		if (prev != NULL)
			return cm_fail(v, off,
				       "%s `%s` conflicts with previous %s "
				       "`%s`",
				       k->what, l->ptr, k->prev,
				       ((const cm_str *)prev->val)->ptr);
		if (cm_hmap_put(v->a, &seen, low.ptr, low.len, l))
			return cm_oom(v);
	}
	return 0;
}

static const label_kind LK_FIELD = {"record field name", "field name"};
static const label_kind LK_CASE = {"variant case name", "case name"};
static const label_kind LK_FLAG = {"flag name", "flag name"};
static const label_kind LK_ENUM = {"enum tag name", "tag name"};
static const label_kind LK_PARAM = {"function parameter name",
				    "parameter name"};

static int finish(scope *s, cm_type *t, size_t off)
{
	vstate *v = s->v;

	cm_type_finish(t);
	if (t->abi.depth > CM_MAX_TYPE_DEPTH)
		return cm_fail(v, off, "type nesting is too deep");
	if (t->abi.type_size > CM_MAX_TYPE_SIZE)
		return cm_fail(v, off,
			       "effective type size exceeds the limit of %u",
			       CM_MAX_TYPE_SIZE);
	if (cm_type_is_value(t) && t->abi.size[1] >= CM_MAX_VALUE_SIZE)
		return cm_fail(v, off,
			       "type exceeds maximum byte size of %u (with "
			       "64-bit pointers)",
			       CM_MAX_VALUE_SIZE - 1);
	return 0;
}

static cm_type *new_type(scope *s, cm_type_kind k)
{
	cm_type *t = cm_arena_alloc(s->v->a, sizeof *t);

	if (t == NULL) {
		cm_oom(s->v);
		return NULL;
	}
	t->kind = k;
	return t;
}

static int fields_of(scope *s, const raw_field *rf, uint32_t n, bool optional,
		     cm_field **out)
{
	cm_field *f = cm_arena_array(s->v->a, n ? n : 1, sizeof *f);

	if (f == NULL)
		return cm_oom(s->v);
	for (uint32_t i = 0; i < n; i++) {
		bool failed;

		f[i].label = rf[i].label;
		if (optional) {
			f[i].type = opt_valtype(s, rf[i].type, rf[i].offset,
						&failed);
			if (failed)
				return -1;
		} else if ((f[i].type = valtype(s, rf[i].type, rf[i].offset)) ==
			   NULL) {
			return -1;
		}
	}
	*out = f;
	return 0;
}

static const cm_type *type_scope(scope *s, const raw_deftype *rt,
				 bool component);

static const cm_type *resource_def(scope *s, const raw_deftype *rt)
{
	vstate *v = s->v;
	cm_type *t;

	if (s->kind != SCOPE_COMPONENT)
		return cm_fail(v, rt->offset,
			       "resources can only be defined within a "
			       "concrete component"),
		       NULL;
	if (rt->u.resource.rep != WASM_I32 && rt->u.resource.rep != WASM_I64)
		return cm_fail(v, rt->offset,
			       "resources can only be represented by `i32` "
			       "(or `i64`)"),
		       NULL;
	if (rt->u.resource.dtor != CM_NONE) {
		const cm_item *f = cm_get(s, CM_SORT_CORE_FUNC,
					  rt->u.resource.dtor, rt->offset);
		const wasm_functype *ft;

		if (f == NULL)
			return NULL;
		ft = f->t.core_func;
		if (ft->nparams != 1 || ft->params[0] != rt->u.resource.rep ||
		    ft->nresults != 0)
			return cm_fail(v, rt->offset,
				       "wrong signature for a destructor"),
			       NULL;
	}
	t = cm_new_resource(v, (cm_str){"", 0});
	if (t == NULL)
		return NULL;
	t->u.resource.defined = true;
	t->u.resource.rep = rt->u.resource.rep;
	t->u.resource.dtor = rt->u.resource.dtor;
	t->u.resource.owner = s->comp;
	return t;
}

static const cm_type *deftype(scope *s, const raw_deftype *rt)
{
	vstate *v = s->v;
	size_t off = rt->offset;
	const cm_type *p = cm_prim_of_byte(rt->code);
	cm_type *t;
	bool failed;

	if (p != NULL)
		return p;
	switch (rt->code) {
	case 0x3f:
		return resource_def(s, rt);
	case 0x41:
	case 0x42:
		return type_scope(s, rt, rt->code == 0x41);
	case 0x40:
	case 0x43: {
		const cm_type *res;

		t = new_type(s, CM_FUNC);
		if (t == NULL ||
		    fields_of(s, rt->u.func.params, rt->u.func.nparams, false,
			      &t->u.func.params) ||
		    check_labels(s, &t->u.func.params[0].label,
				 sizeof(cm_field), rt->u.func.nparams,
				 &LK_PARAM, off))
			return NULL;
		t->u.func.nparams = rt->u.func.nparams;
		t->u.func.async = rt->code == 0x43;
		res = opt_valtype(s, rt->u.func.result, off, &failed);
		if (failed)
			return NULL;
		if (res != NULL && res->abi.has_borrow)
			return cm_fail(v, off,
				       "function result cannot contain a "
				       "`borrow` type"),
			       NULL;
		t->u.func.result = res;
		return finish(s, t, off) ? NULL : t;
	}
	default:
		break;
	}
	switch (rt->code) {
	case 0x72:
	case 0x71: {
		bool rec = rt->code == 0x72;

		t = new_type(s, rec ? CM_RECORD : CM_VARIANT);
		if (t == NULL)
			return NULL;
		if (rt->u.fields.n == 0)
			return cm_fail(v, off,
				       rec ? "record type must have at least "
					     "one field"
					   : "variant type must have at least "
					     "one case"),
			       NULL;
		if (fields_of(s, rt->u.fields.fields, rt->u.fields.n, !rec,
			      &t->u.record.fields) ||
		    check_labels(s, &t->u.record.fields[0].label,
				 sizeof(cm_field), rt->u.fields.n,
				 rec ? &LK_FIELD : &LK_CASE, off))
			return NULL;
		t->u.record.n = rt->u.fields.n;
		break;
	}
	case 0x70:
	case 0x67:
		t = new_type(s, CM_LIST);
		if (t == NULL ||
		    (t->u.list.elem = valtype(s, rt->u.one.type, off)) == NULL)
			return NULL;
		if (rt->code == 0x67) {
			if (rt->u.one.len == 0)
				return cm_fail(v, off,
					       "fixed-length list must have a "
					       "length greater than zero"),
				       NULL;
			t->u.list.len = rt->u.one.len;
		}
		break;
	case 0x6f:
		t = new_type(s, CM_TUPLE);
		if (t == NULL)
			return NULL;
		if (rt->u.tuple.n == 0)
			return cm_fail(v, off,
				       "tuple type must have at least one "
				       "type"),
			       NULL;
		t->u.tuple.elems =
			cm_arena_array(v->a, rt->u.tuple.n, sizeof(cm_type *));
		if (t->u.tuple.elems == NULL)
			return cm_oom(v), NULL;
		for (uint32_t i = 0; i < rt->u.tuple.n; i++)
			if ((t->u.tuple.elems[i] = valtype(
				     s, rt->u.tuple.types[i], off)) == NULL)
				return NULL;
		t->u.tuple.n = rt->u.tuple.n;
		break;
	case 0x6e:
	case 0x6d: {
		bool fl = rt->code == 0x6e;

		t = new_type(s, fl ? CM_FLAGS : CM_ENUM);
		if (t == NULL)
			return NULL;
		if (rt->u.labels.n == 0)
			return cm_fail(v, off,
				       fl ? "flags must have at least one "
					    "entry"
					  : "enum type must have at least one "
					    "variant"),
			       NULL;
		if (fl && rt->u.labels.n > CM_MAX_FLAGS)
			return cm_fail(v, off, "cannot have more than %u flags",
				       CM_MAX_FLAGS),
			       NULL;
		if (check_labels(s, rt->u.labels.labels, sizeof(cm_str),
				 rt->u.labels.n, fl ? &LK_FLAG : &LK_ENUM, off))
			return NULL;
		t->u.flags.n = rt->u.labels.n;
		t->u.flags.labels = rt->u.labels.labels;
		break;
	}
	case 0x6b:
		t = new_type(s, CM_OPTION);
		if (t == NULL || (t->u.option.elem = valtype(s, rt->u.one.type,
							     off)) == NULL)
			return NULL;
		break;
	case 0x6a:
		t = new_type(s, CM_RESULT);
		if (t == NULL)
			return NULL;
		t->u.result.ok = opt_valtype(s, rt->u.result.ok, off, &failed);
		if (failed)
			return NULL;
		t->u.result.err =
			opt_valtype(s, rt->u.result.err, off, &failed);
		if (failed)
			return NULL;
		break;
	case 0x69:
	case 0x68: {
		const cm_item *it =
			cm_get(s, CM_SORT_TYPE, rt->u.handle.index, off);

		if (it == NULL)
			return NULL;
		if (it->t.type->kind != CM_RESOURCE)
			return cm_fail(v, off,
				       "type index %u is not a resource type",
				       rt->u.handle.index),
			       NULL;
		t = new_type(s, rt->code == 0x69 ? CM_OWN : CM_BORROW);
		if (t == NULL)
			return NULL;
		t->u.handle.resource = it->t.type;
		break;
	}
	case 0x66:
	case 0x65: {
		bool st = rt->code == 0x66;
		const cm_type *e = opt_valtype(s, rt->u.one.type, off, &failed);

		if (failed)
			return NULL;
		if (st && e != NULL && e->kind == CM_CHAR)
			return cm_fail(v, off,
				       "`stream<char>` is not valid at this "
				       "time"),
			       NULL;
		if (e != NULL && e->abi.has_borrow)
			return cm_fail(v, off,
				       "%s element type cannot contain a "
				       "`borrow` type",
				       st ? "stream" : "future"),
			       NULL;
		t = new_type(s, st ? CM_STREAM : CM_FUTURE);
		if (t == NULL)
			return NULL;
		t->u.stream.elem = e;
		break;
	}
	case 0x63: {
		const cm_type *k = valtype(s, rt->u.map.key, off);
		cm_type *entry;

		if (k == NULL)
			return NULL;
		if (!(k->kind <= CM_U64 || k->kind == CM_CHAR ||
		      k->kind == CM_STRING))
			return cm_fail(v, off,
				       "map key type must be bool, an integer, "
				       "char or string"),
			       NULL;
		t = new_type(s, CM_MAP);
		entry = new_type(s, CM_TUPLE);
		if (t == NULL || entry == NULL)
			return NULL;
		t->u.map.key = k;
		if ((t->u.map.value = valtype(s, rt->u.map.value, off)) == NULL)
			return NULL;
		entry->u.tuple.n = 2;
		entry->u.tuple.elems =
			cm_arena_array(v->a, 2, sizeof(cm_type *));
		if (entry->u.tuple.elems == NULL)
			return cm_oom(v), NULL;
		entry->u.tuple.elems[0] = k;
		entry->u.tuple.elems[1] = t->u.map.value;
		/* No size bound: the entry only ever lives in a list. */
		cm_type_finish(entry);
		t->u.map.entry = entry;
		break;
	}
	default:
		return cm_fail(v, off,
			       "invalid leading byte (0x%x) for component "
			       "defined type",
			       rt->code),
		       NULL;
	}
	return finish(s, t, off) ? NULL : t;
}

/* ---- extern types
 * ------------------------------------------------------------- */

static int add_resource(scope *s, bool imported, const cm_type *r)
{
	const cm_type **slot;

	if (imported) {
		slot = grow(s, &s->imported_res, &s->nimported_res,
			    &s->cap_imported_res, sizeof *slot);
		if (slot == NULL)
			return -1;
		if (cm_hmap_put(s->v->a, &s->imported_set,
				cm_resource_canonical(r), CM_KEY_PTR, r))
			return cm_oom(s->v);
	} else {
		slot = grow(s, &s->defined_res, &s->ndefined_res,
			    &s->cap_defined_res, sizeof *slot);
		if (slot == NULL)
			return -1;
	}
	*slot = r;
	return 0;
}

static cm_sort sort_of_code(uint8_t code)
{
	switch (code) {
	case 0x00:
		return CM_SORT_CORE_MODULE;
	case 0x01:
		return CM_SORT_FUNC;
	case 0x02:
		return CM_SORT_VALUE;
	case 0x03:
		return CM_SORT_TYPE;
	case 0x04:
		return CM_SORT_COMPONENT;
	default:
		return CM_SORT_INSTANCE;
	}
}

/*
 * Resolve a raw extern description.  `fresh`: the declaration introduces
 * new resources (imports/exports in declarations), recorded as imported
 * or defined resources of the scope; otherwise (ascriptions) instance
 * types keep their bound resources for the caller to bind.
 */
static int externtype(scope *s, const raw_externtype *re, const cm_name *n,
		      bool imported, bool fresh, cm_externtype *out)
{
	vstate *v = s->v;
	size_t off = re->offset;
	const cm_item *it;

	memset(out, 0, sizeof *out);
	out->sort = sort_of_code(re->code);
	switch (re->code) {
	case 0x00:
		it = cm_get(s, CM_SORT_CORE_TYPE, re->index, off);
		if (it == NULL)
			return -1;
		if (it->t.core_type->kind != CM_CORE_MODULETYPE)
			return cm_fail(v, off,
				       "core type index %u is not a module "
				       "type",
				       re->index);
		out->core_type = it->t.core_type;
		return 0;
	case 0x01:
	case 0x04:
	case 0x05: {
		static const cm_type_kind want[] = {[0x01] = CM_FUNC,
						    [0x04] = CM_COMPONENT,
						    [0x05] = CM_INSTANCE};
		static const char *const what[] = {[0x01] = "function",
						   [0x04] = "component",
						   [0x05] = "instance"};

		it = cm_get(s, CM_SORT_TYPE, re->index, off);
		if (it == NULL)
			return -1;
		if (it->t.type->kind != want[re->code])
			return cm_fail(v, off,
				       "type index %u is not a%s %s type",
				       re->index, re->code == 0x05 ? "n" : "",
				       what[re->code]);
		out->type = it->t.type;
		if (re->code == 0x05 && fresh) {
			uint32_t before =
				imported ? s->nimported_res : s->ndefined_res;
			const cm_type *ft = cm_freshen_instance(
				v, out->type,
				imported ? &s->imported_res : &s->defined_res,
				imported ? &s->nimported_res : &s->ndefined_res,
				imported ? &s->cap_imported_res
					 : &s->cap_defined_res);

			if (ft == NULL)
				return -1;
			if (imported)
				for (uint32_t i = before; i < s->nimported_res;
				     i++)
					if (cm_hmap_put(v->a, &s->imported_set,
							s->imported_res[i],
							CM_KEY_PTR,
							s->imported_res[i]))
						return cm_oom(v);
			out->type = ft;
		}
		return 0;
	}
	case 0x02:
		if (re->value_eq) {
			it = cm_get(s, CM_SORT_VALUE, re->index, off);
			if (it == NULL)
				return -1;
			out->type = it->t.type;
			out->value_eq = true;
			return 0;
		}
		out->type = valtype(s, re->valtype, off);
		return out->type ? 0 : -1;
	case 0x03:
		if (!re->bound_eq) {
			cm_type *r = cm_new_resource(v, n ? n->str
							  : (cm_str){"", 0});

			if (r == NULL || add_resource(s, imported, r))
				return -1;
			out->type = r;
			return 0;
		}
		it = cm_get(s, CM_SORT_TYPE, re->index, off);
		if (it == NULL)
			return -1;
		out->type_eq = true;
		out->type = cm_type_copy(v, it->t.type);
		if (out->type == NULL)
			return -1;
		if (imported && fresh && out->type->kind != CM_RESOURCE)
			((cm_type *)out->type)->abi.has_var = true;
		return 0;
	}
	return cm_fail(v, off, "invalid external kind");
}

/* The item a definition of that sort adds, from an extern description. */
static cm_item item_of_extern(const cm_externtype *e)
{
	cm_item it;

	memset(&it, 0, sizeof it);
	if (e->sort == CM_SORT_CORE_MODULE)
		it.t.core_type = e->core_type;
	else
		it.t.type = e->type;
	return it;
}

/* The extern description of an existing item. */
static int extern_of_item(scope *s, cm_sort sort, uint32_t idx, size_t off,
			  cm_externtype *out)
{
	const cm_item *it;

	memset(out, 0, sizeof *out);
	out->sort = sort;
	if (sort < CM_SORT_FUNC && sort != CM_SORT_CORE_MODULE)
		return cm_fail(s->v, off,
			       "only core modules may be used here, not a %s",
			       cm_sort_name(sort));
	it = cm_get(s, sort, idx, off);
	if (it == NULL)
		return -1;
	if (sort == CM_SORT_CORE_MODULE)
		out->core_type = it->t.core_type;
	else
		out->type = it->t.type;
	out->type_eq = sort == CM_SORT_TYPE;
	return 0;
}

/*
 * An import or export declaration in any scope: name, type, annotated
 * names, visibility; pushes the new index.  Returns the index or -1.
 */
static int declare(scope *s, cm_name *n, const raw_externtype *re,
		   bool imported, cm_origin origin, uint32_t def,
		   cm_externtype *out, size_t off)
{
	name_ctx *ctx = imported ? &s->imp : &s->exp;
	cm_item it;

	if (cm_name_parse(s->v, n, off) ||
	    externtype(s, re, n, imported, true, out) ||
	    cm_check_annotated(s, ctx, n, out, off) ||
	    cm_check_name_unique(s, ctx, n, out->sort, imported, off) ||
	    cm_register_named(s, ctx, n, out))
		return -1;
	if (s->kind != SCOPE_INSTANCE_TYPE &&
	    cm_check_visible(s, out, imported, off))
		return -1;
	it = item_of_extern(out);
	return cm_push(s, out->sort, origin, def, &it, off);
}

/* ---- aliases
 * -------------------------------------------------------------------- */

static int alias(scope *s, const cm_alias *al, size_t off, cm_item *out,
		 const cm_component **outer)
{
	vstate *v = s->v;
	bool in_type = s->kind != SCOPE_COMPONENT;

	memset(out, 0, sizeof *out);
	*outer = NULL;
	switch (al->kind) {
	case CM_ALIAS_INSTANCE_EXPORT: {
		const cm_item *it;
		const cm_comptype *ct;
		const cm_extern_decl *d = NULL;

		if (in_type && al->sort != CM_SORT_INSTANCE &&
		    al->sort != CM_SORT_TYPE)
			return cm_fail(v, off,
				       "alias export in a type may only refer "
				       "to types or instances");
		it = cm_get(s, CM_SORT_INSTANCE, al->instance, off);
		if (it == NULL)
			return -1;
		ct = &it->t.type->u.comp;
		v->work += ct->nexports;
		if (CM_WORK(v))
			return -1;
		for (uint32_t i = 0; i < ct->nexports; i++)
			if (ct->exports[i].name.str.len == al->name.len &&
			    !memcmp(ct->exports[i].name.str.ptr, al->name.ptr,
				    al->name.len)) {
				d = &ct->exports[i];
				break;
			}
		if (d == NULL)
			return cm_fail(v, off,
				       "instance %u has no export named `%s`",
				       al->instance, al->name.ptr);
		if (d->type.sort != al->sort)
			return cm_fail(v, off,
				       "export `%s` for instance %u is not a "
				       "%s",
				       al->name.ptr, al->instance,
				       sort_desc[al->sort]);
		*out = item_of_extern(&d->type);
		return 0;
	}
	case CM_ALIAS_CORE_INSTANCE_EXPORT: {
		const cm_item *it;
		const cm_core_instance_type *ct;
		const cm_core_export *e = NULL;

		if (in_type)
			return cm_fail(v, off,
				       "alias export in a type may only refer "
				       "to types or instances");
		it = cm_get(s, CM_SORT_CORE_INSTANCE, al->instance, off);
		if (it == NULL)
			return -1;
		ct = it->t.core_instance;
		v->work += ct->nexports;
		if (CM_WORK(v))
			return -1;
		for (uint32_t i = 0; i < ct->nexports; i++)
			if (ct->exports[i].name.len == al->name.len &&
			    !memcmp(ct->exports[i].name.ptr, al->name.ptr,
				    al->name.len)) {
				e = &ct->exports[i];
				break;
			}
		if (e == NULL)
			return cm_fail(v, off,
				       "core instance %u has no export named "
				       "`%s`",
				       al->instance, al->name.ptr);
		if (al->sort > CM_SORT_CORE_TAG ||
		    (cm_sort)e->type.kind != al->sort)
			return cm_fail(v, off,
				       "export `%s` for core instance %u is "
				       "not a %s",
				       al->name.ptr, al->instance,
				       sort_desc[al->sort]);
		switch (e->type.kind) {
		case WASM_EXTERN_FUNC:
		case WASM_EXTERN_TAG:
			out->t.core_func = e->type.u.func;
			break;
		case WASM_EXTERN_TABLE:
			out->t.table = e->type.u.table;
			break;
		case WASM_EXTERN_MEMORY:
			out->t.memory = e->type.u.memory;
			break;
		case WASM_EXTERN_GLOBAL:
			out->t.global = e->type.u.global;
			break;
		}
		return 0;
	}
	case CM_ALIAS_OUTER: {
		scope *t = s;
		bool crosses_component = false;
		const cm_item *it;

		if (in_type && al->sort != CM_SORT_CORE_TYPE &&
		    al->sort != CM_SORT_TYPE)
			return cm_fail(v, off,
				       "alias outer in a type may only refer "
				       "to types or instances");
		for (uint32_t i = 0; i < al->count; i++) {
			if (t->kind == SCOPE_COMPONENT)
				crosses_component = true;
			t = t->parent;
			if (t == NULL)
				return cm_fail(v, off,
					       "invalid outer alias count of "
					       "%u",
					       al->count);
		}
		it = cm_get(t, al->sort, al->index, off);
		if (it == NULL)
			return -1;
		*out = *it;
		if (al->sort == CM_SORT_TYPE) {
			const cm_type *ty = it->t.type;
			bool res = ty->kind == CM_COMPONENT ||
						   ty->kind == CM_INSTANCE
					   ? ty->u.comp.has_free_resource
					   : ty->abi.has_resource;

			if (res && crosses_component)
				return cm_fail(v, off,
					       "type index %u transitively "
					       "refers to resources not "
					       "defined in the current "
					       "component",
					       al->index);
			if (res)
				for (scope *x = s; x != t; x = x->parent)
					x->has_free_resource = true;
		}
		if (al->sort == CM_SORT_CORE_MODULE ||
		    al->sort == CM_SORT_COMPONENT)
			*outer = t->comp;
		return 0;
	}
	}
	return cm_fail(v, off, "invalid alias");
}

/* ---- component and instance types
 * --------------------------------------------- */

static void scope_init(scope *ns, scope *parent, scope_kind k)
{
	memset(ns, 0, sizeof *ns);
	ns->parent = parent;
	ns->kind = k;
	ns->v = parent->v;
	ns->comp = parent->comp;
	ns->spaces = ns->own_spaces;
}

static void absorb_size(cm_type *t, const cm_type *child)
{
	uint64_t ts;

	if (child == NULL)
		return;
	t->abi.has_resource |= child->abi.has_resource;
	t->abi.has_borrow |= child->abi.has_borrow;
	t->abi.has_var |= child->abi.has_var;
	if (child->abi.depth + 1 > t->abi.depth)
		t->abi.depth = child->abi.depth + 1;
	ts = (uint64_t)t->abi.type_size + child->abi.type_size;
	t->abi.type_size = ts > UINT32_MAX ? UINT32_MAX : (uint32_t)ts;
}

/*
 * Instance and component types nest through references too (an instance
 * exporting an instance of the previous type, bags of bags), so their
 * depth and size are bounded like value types'.
 */
static int comp_limits(scope *s, const cm_type *t, size_t off)
{
	if (t->abi.depth > CM_MAX_TYPE_DEPTH)
		return cm_fail(s->v, off, "type nesting is too deep");
	if (t->abi.type_size > CM_MAX_TYPE_SIZE)
		return cm_fail(s->v, off,
			       "effective type size exceeds the limit of %u",
			       CM_MAX_TYPE_SIZE);
	return 0;
}

static const cm_type *type_scope(scope *s, const raw_deftype *rt,
				 bool component)
{
	scope ns;
	cm_type *t;

	scope_init(&ns, s,
		   component ? SCOPE_COMPONENT_TYPE : SCOPE_INSTANCE_TYPE);
	for (uint32_t i = 0; i < rt->u.decls.n; i++) {
		const raw_decl *d = &rt->u.decls.decls[i];
		cm_item it;
		cm_externtype e;
		cm_extern_decl *slot;
		const cm_component *outer;

		memset(&it, 0, sizeof it);
		switch (d->kind) {
		case RAW_DECL_CORE_TYPE:
			for (uint32_t k = 0;
			     k < cm_core_type_count(d->core_type); k++) {
				it.t.core_type = cm_build_core_type(
					&ns, d->core_type, k);
				if (it.t.core_type == NULL ||
				    cm_push(&ns, CM_SORT_CORE_TYPE,
					    CM_ORIGIN_CORE_TYPE, 0, &it,
					    d->offset) < 0)
					return NULL;
			}
			break;
		case RAW_DECL_TYPE:
			it.t.type = deftype(&ns, d->type);
			if (it.t.type == NULL ||
			    cm_push(&ns, CM_SORT_TYPE, CM_ORIGIN_TYPE, 0, &it,
				    d->offset) < 0)
				return NULL;
			break;
		case RAW_DECL_ALIAS:
			if (alias(&ns, &d->alias, d->offset, &it, &outer) ||
			    cm_push(&ns, d->alias.sort, CM_ORIGIN_ALIAS, 0, &it,
				    d->offset) < 0)
				return NULL;
			break;
		case RAW_DECL_IMPORT:
		case RAW_DECL_EXPORT: {
			bool imp = d->kind == RAW_DECL_IMPORT;
			cm_name *n = (cm_name *)&d->name;

			if (declare(&ns, n, &d->ext, imp,
				    imp ? CM_ORIGIN_IMPORT : CM_ORIGIN_EXPORT,
				    0, &e, d->offset) < 0)
				return NULL;
			slot = imp ? grow(&ns, &ns.imports, &ns.nimports,
					  &ns.cap_imports, sizeof *slot)
				   : grow(&ns, &ns.exports, &ns.nexports,
					  &ns.cap_exports, sizeof *slot);
			if (slot == NULL)
				return NULL;
			slot->name = *n;
			slot->type = e;
			break;
		}
		}
	}
	t = new_type(s, component ? CM_COMPONENT : CM_INSTANCE);
	if (t == NULL)
		return NULL;
	t->u.comp.nimports = ns.nimports;
	t->u.comp.imports = ns.imports;
	t->u.comp.nexports = ns.nexports;
	t->u.comp.exports = ns.exports;
	t->u.comp.nimported_resources = ns.nimported_res;
	t->u.comp.imported_resources = ns.imported_res;
	t->u.comp.ndefined_resources = ns.ndefined_res;
	t->u.comp.defined_resources = ns.defined_res;
	t->u.comp.has_free_resource = ns.has_free_resource;
	t->abi.depth = 1;
	t->abi.type_size = 1;
	t->abi.has_resource = ns.nimported_res + ns.ndefined_res > 0;
	for (uint32_t i = 0; i < ns.nimports; i++)
		absorb_size(t, ns.imports[i].type.type);
	for (uint32_t i = 0; i < ns.nexports; i++)
		absorb_size(t, ns.exports[i].type.type);
	if (comp_limits(s, t, rt->offset))
		return NULL;
	return t;
}

/* ---- core instances
 * --------------------------------------------------------------- */

static const cm_core_export *
find_core_export(vstate *v, const cm_core_instance_type *t, const cm_str *name)
{
	v->work += t->nexports;
	for (uint32_t i = 0; i < t->nexports; i++)
		if (t->exports[i].name.len == name->len &&
		    !memcmp(t->exports[i].name.ptr, name->ptr, name->len))
			return &t->exports[i];
	return NULL;
}

static int core_instance(scope *s, cbuild *b, const raw_instance *ri)
{
	vstate *v = s->v;
	cm_component *c = s->comp;
	cm_core_instance *ci;
	cm_core_instance_type *ty;
	cm_item item;
	uint32_t def = c->ncore_instances;
	cm_hmap names;

	memset(&names, 0, sizeof names);
	ci = grow(s, &c->core_instances, &c->ncore_instances,
		  &b->core_instances, sizeof *ci);
	ty = cm_arena_alloc(v->a, sizeof *ty);
	if (ci == NULL || ty == NULL)
		return ty ? -1 : cm_oom(v);
	ci->kind = ri->kind;
	ci->module = ri->index;
	ci->nargs = ri->nargs;
	ci->args = cm_arena_array(v->a, ri->nargs ? ri->nargs : 1,
				  sizeof *ci->args);
	if (ci->args == NULL)
		return cm_oom(v);
	for (uint32_t i = 0; i < ri->nargs; i++) {
		ci->args[i].name = ri->args[i].name.str;
		ci->args[i].sort = ri->args[i].sort;
		ci->args[i].index = ri->args[i].index;
	}
	if (ri->kind == CM_INSTANTIATE) {
		const cm_item *m =
			cm_get(s, CM_SORT_CORE_MODULE, ri->index, ri->offset);
		const cm_core_type *mt;

		if (m == NULL)
			return -1;
		mt = m->t.core_type;
		for (uint32_t i = 0; i < ri->nargs; i++) {
			const cm_str *n = &ri->args[i].name.str;

			if (cm_hmap_get(&names, n->ptr, n->len))
				return cm_fail(v, ri->args[i].offset,
					       "duplicate module instantiation "
					       "argument named `%s`",
					       n->ptr);
			if (cm_get(s, CM_SORT_CORE_INSTANCE, ri->args[i].index,
				   ri->args[i].offset) == NULL)
				return -1;
			if (cm_hmap_put(v->a, &names, n->ptr, n->len,
					&ri->args[i]))
				return cm_oom(v);
		}
		for (uint32_t i = 0; i < mt->u.module.nimports; i++) {
			const cm_core_import *im = &mt->u.module.imports[i];
			cm_hentry *h = cm_hmap_get(&names, im->module.ptr,
						   im->module.len);
			const raw_instance_arg *arg;
			const cm_core_export *ex;

			if (h == NULL)
				return cm_fail(v, ri->offset,
					       "missing module instantiation "
					       "argument named `%s`",
					       im->module.ptr);
			arg = h->val;
			ex = find_core_export(v,
					      s->spaces[CM_SORT_CORE_INSTANCE]
						      .items[arg->index]
						      .t.core_instance,
					      &im->name);
			if (CM_WORK(v))
				return -1;
			if (ex == NULL)
				return cm_fail(v, arg->offset,
					       "module instantiation argument "
					       "`%s` does not export an item "
					       "named `%s`",
					       im->module.ptr, im->name.ptr);
			v->offset = arg->offset;
			if (cm_core_extern_sub(v, &ex->type, &im->type))
				return cm_context(
					v,
					"type mismatch for export `%s` of "
					"module instantiation argument `%s`",
					im->name.ptr, im->module.ptr);
		}
		ty->nexports = mt->u.module.nexports;
		ty->exports = mt->u.module.exports;
	} else {
		ty->exports = cm_arena_array(v->a, ri->nargs ? ri->nargs : 1,
					     sizeof *ty->exports);
		if (ty->exports == NULL)
			return cm_oom(v);
		for (uint32_t i = 0; i < ri->nargs; i++) {
			const raw_instance_arg *a = &ri->args[i];
			cm_core_export *e = &ty->exports[i];
			const cm_item *it;

			if (cm_hmap_get(&names, a->name.str.ptr,
					a->name.str.len))
				return cm_fail(v, a->offset,
					       "export name `%s` already "
					       "defined",
					       a->name.str.ptr);
			if (cm_hmap_put(v->a, &names, a->name.str.ptr,
					a->name.str.len, a))
				return cm_oom(v);
			if (a->sort > CM_SORT_CORE_TAG)
				return cm_fail(
					v, a->offset,
					"a core instance cannot export a "
					"%s",
					cm_sort_name(a->sort));
			it = cm_get(s, a->sort, a->index, a->offset);
			if (it == NULL)
				return -1;
			e->name = a->name.str;
			e->type.kind = (wasm_externkind)a->sort;
			switch (a->sort) {
			case CM_SORT_CORE_FUNC:
			case CM_SORT_CORE_TAG:
				e->type.u.func = it->t.core_func;
				break;
			case CM_SORT_CORE_TABLE:
				e->type.u.table = it->t.table;
				break;
			case CM_SORT_CORE_MEMORY:
				e->type.u.memory = it->t.memory;
				break;
			default:
				e->type.u.global = it->t.global;
				break;
			}
		}
		ty->nexports = ri->nargs;
	}
	ci->type = ty;
	memset(&item, 0, sizeof item);
	item.t.core_instance = ty;
	if (cm_push(s, CM_SORT_CORE_INSTANCE, CM_ORIGIN_CORE_INSTANCE, def,
		    &item, ri->offset) < 0)
		return -1;
	return add_def(s, b, CM_DEF_CORE_INSTANCE, def);
}

/* ---- component instances
 * ------------------------------------------------------------ */

static const raw_instance_arg *find_arg(const cm_hmap *names,
					const cm_str *name)
{
	cm_hentry *e = cm_hmap_get(names, name->ptr, name->len);

	return e ? e->val : NULL;
}

static const cm_type *instantiate(scope *s, const raw_instance *ri)
{
	vstate *v = s->v;
	const cm_item *ci = cm_get(s, CM_SORT_COMPONENT, ri->index, ri->offset);
	const cm_comptype *ct;
	cm_externtype *args;
	cm_rmap m;
	cm_hmap names;
	cm_type *it;

	if (ci == NULL)
		return NULL;
	ct = &ci->t.type->u.comp;
	memset(&m, 0, sizeof m);
	memset(&names, 0, sizeof names);
	args = cm_arena_array(v->a, ri->nargs ? ri->nargs : 1, sizeof *args);
	if (args == NULL)
		return cm_oom(v), NULL;
	for (uint32_t i = 0; i < ri->nargs; i++) {
		const raw_instance_arg *a = &ri->args[i];
		cm_hentry *prev =
			cm_hmap_get(&names, a->name.str.ptr, a->name.str.len);

		if (prev != NULL)
			return cm_fail(v, a->offset,
				       "instantiation argument `%s` conflicts "
				       "with previous argument `%s`",
				       a->name.str.ptr,
				       ((const raw_instance_arg *)prev->val)
					       ->name.str.ptr),
			       NULL;
		if (cm_hmap_put(v->a, &names, a->name.str.ptr, a->name.str.len,
				a))
			return cm_oom(v), NULL;
		if (extern_of_item(s, a->sort, a->index, a->offset, &args[i]))
			return NULL;
	}
	/* Bind the component's imported resources from the arguments. */
	for (uint32_t i = 0; i < ct->nimports; i++) {
		const cm_extern_decl *d = &ct->imports[i];
		const raw_instance_arg *a = find_arg(&names, &d->name.str);

		if (a == NULL)
			return cm_fail(v, ri->offset,
				       "missing import named `%s`",
				       d->name.str.ptr),
			       NULL;
		v->offset = a->offset;
		if (cm_infer(v, &m, ct->imported_resources,
			     ct->nimported_resources, &d->type,
			     &args[a - ri->args]))
			return NULL;
	}
	for (uint32_t i = 0; i < ct->nimports; i++) {
		const cm_extern_decl *d = &ct->imports[i];
		const raw_instance_arg *a = find_arg(&names, &d->name.str);
		cm_externtype want;

		v->offset = a->offset;
		if (cm_subst_extern(v, &d->type, &m, &want))
			return NULL;
		if (cm_extern_sub(v, &args[a - ri->args], &want))
			return cm_context(v,
					  "type mismatch for component "
					  "instantiation argument `%s`",
					  d->name.str.ptr),
			       NULL;
	}
	/* `(eq t)` type imports take the arguments' types (identity matters
	 * for external visibility). */
	for (uint32_t i = 0; i < ct->nimports; i++) {
		const cm_extern_decl *d = &ct->imports[i];
		const raw_instance_arg *a = find_arg(&names, &d->name.str);

		if (d->type.sort == CM_SORT_TYPE && d->type.type_eq &&
		    d->type.type->kind != CM_RESOURCE &&
		    args[a - ri->args].sort == CM_SORT_TYPE &&
		    cm_rmap_put_var(v, &m, d->type.type,
				    args[a - ri->args].type))
			return NULL;
	}
	/* Every instantiation makes the defined resources fresh. */
	for (uint32_t i = 0; i < ct->ndefined_resources; i++) {
		const cm_type *old = ct->defined_resources[i];
		cm_type *fresh = cm_new_resource(v, old->u.resource.name);

		if (fresh == NULL || cm_rmap_put(v, &m, old, fresh))
			return NULL;
	}
	it = new_type(s, CM_INSTANCE);
	if (it == NULL)
		return NULL;
	it->u.comp.nexports = ct->nexports;
	it->u.comp.exports = cm_arena_array(
		v->a, ct->nexports ? ct->nexports : 1, sizeof(cm_extern_decl));
	if (it->u.comp.exports == NULL)
		return cm_oom(v), NULL;
	it->abi.depth = 1;
	it->abi.type_size = 1;
	/* One substitution for all the exports: see cm_subst_decls. */
	if (cm_subst_decls(v, ct->exports, ct->nexports, &m,
			   it->u.comp.exports))
		return NULL;
	for (uint32_t i = 0; i < ct->nexports; i++)
		absorb_size(it, it->u.comp.exports[i].type.type);
	it->u.comp.has_free_resource = it->abi.has_resource;
	if (comp_limits(s, it, ri->offset))
		return NULL;
	return it;
}

static const cm_type *instance_from_exports(scope *s, raw_instance *ri)
{
	vstate *v = s->v;
	name_ctx ctx;
	cm_type *it;

	memset(&ctx, 0, sizeof ctx);
	it = new_type(s, CM_INSTANCE);
	if (it == NULL)
		return NULL;
	it->u.comp.exports = cm_arena_array(v->a, ri->nargs ? ri->nargs : 1,
					    sizeof(cm_extern_decl));
	if (it->u.comp.exports == NULL)
		return cm_oom(v), NULL;
	it->abi.depth = 1;
	it->abi.type_size = 1;
	for (uint32_t i = 0; i < ri->nargs; i++) {
		raw_instance_arg *a = &ri->args[i];
		cm_extern_decl *d = &it->u.comp.exports[i];

		if (cm_name_parse(v, &a->name, a->offset) ||
		    extern_of_item(s, a->sort, a->index, a->offset, &d->type))
			return NULL;
		/* A bag's type exports are the items themselves (no new
		 * identity, no resource names), as in wasmparser. */
		d->name = a->name;
		if (cm_check_annotated(s, &ctx, &a->name, &d->type,
				       a->offset) ||
		    cm_check_name_unique(s, &ctx, &a->name, a->sort, false,
					 a->offset))
			return NULL;
		absorb_size(it, d->type.type);
	}
	it->u.comp.nexports = ri->nargs;
	it->u.comp.has_free_resource = it->abi.has_resource;
	if (comp_limits(s, it, ri->offset))
		return NULL;
	return it;
}

static int component_instance(scope *s, cbuild *b, raw_instance *ri)
{
	vstate *v = s->v;
	cm_component *c = s->comp;
	uint32_t def = c->ninstances;
	cm_instance *in = grow(s, &c->instances, &c->ninstances, &b->instances,
			       sizeof *in);
	cm_item item;

	if (in == NULL)
		return -1;
	in->kind = ri->kind;
	in->component = ri->index;
	in->nargs = ri->nargs;
	in->args = cm_arena_array(v->a, ri->nargs ? ri->nargs : 1,
				  sizeof *in->args);
	if (in->args == NULL)
		return cm_oom(v);
	for (uint32_t i = 0; i < ri->nargs; i++) {
		in->args[i].name = ri->args[i].name.str;
		in->args[i].sort = ri->args[i].sort;
		in->args[i].index = ri->args[i].index;
	}
	in->type = ri->kind == CM_INSTANTIATE ? instantiate(s, ri)
					      : instance_from_exports(s, ri);
	if (in->type == NULL)
		return -1;
	if (ri->kind == CM_FROM_EXPORTS) {
		in->export_names = cm_arena_array(
			v->a, ri->nargs ? ri->nargs : 1, sizeof(cm_name));
		if (in->export_names == NULL)
			return cm_oom(v);
		for (uint32_t i = 0; i < ri->nargs; i++)
			in->export_names[i] = ri->args[i].name;
	}
	memset(&item, 0, sizeof item);
	item.t.type = in->type;
	if (cm_push(s, CM_SORT_INSTANCE, CM_ORIGIN_INSTANCE, def, &item,
		    ri->offset) < 0)
		return -1;
	return add_def(s, b, CM_DEF_INSTANCE, def);
}

/* ---- imports and exports of a component
 * ----------------------------------------------- */

static int component_import(scope *s, cbuild *b, raw_import *ri)
{
	cm_component *c = s->comp;
	uint32_t def = c->nimports;
	cm_import *im =
		grow(s, &c->imports, &c->nimports, &b->imports, sizeof *im);
	int idx;

	if (im == NULL)
		return -1;
	im->name = ri->name;
	idx = declare(s, &im->name, &ri->ext, true, CM_ORIGIN_IMPORT, def,
		      &im->type, ri->offset);
	if (idx < 0)
		return -1;
	im->index = (uint32_t)idx;
	return add_def(s, b, CM_DEF_IMPORT, def);
}

static int component_export(scope *s, cbuild *b, raw_export *re)
{
	vstate *v = s->v;
	cm_component *c = s->comp;
	uint32_t def = c->nexports;
	cm_export *ex =
		grow(s, &c->exports, &c->nexports, &b->exports, sizeof *ex);
	cm_externtype actual;
	cm_item it;
	int idx;

	if (ex == NULL)
		return -1;
	ex->name = re->name;
	ex->sort = re->sort;
	ex->item = re->index;
	if (cm_name_parse(v, &ex->name, re->offset) ||
	    extern_of_item(s, re->sort, re->index, re->offset, &actual))
		return -1;
	if (re->has_type) {
		cm_externtype asc;
		cm_rmap m;

		memset(&m, 0, sizeof m);
		if (externtype(s, &re->ext, &ex->name, false, false, &asc))
			return -1;
		v->offset = re->offset;
		if (asc.sort == CM_SORT_INSTANCE &&
		    asc.type->u.comp.ndefined_resources != 0) {
			if (cm_infer(v, &m, asc.type->u.comp.defined_resources,
				     asc.type->u.comp.ndefined_resources, &asc,
				     &actual) ||
			    cm_subst_extern(v, &asc, &m, &asc))
				return cm_context(v, "ascribed type of export "
						     "is not compatible with "
						     "item type");
		}
		if (cm_extern_sub(v, &actual, &asc))
			return cm_context(v, "ascribed type of export is not "
					     "compatible with item type");
		ex->type = asc;
		ex->has_ascribed = true;
	} else {
		ex->type = actual;
		if (actual.sort == CM_SORT_TYPE) {
			ex->type.type = cm_type_copy(v, actual.type);
			if (ex->type.type == NULL)
				return -1;
		}
	}
	if (cm_check_annotated(s, &s->exp, &ex->name, &ex->type, re->offset) ||
	    cm_check_name_unique(s, &s->exp, &ex->name, re->sort, false,
				 re->offset) ||
	    cm_register_named(s, &s->exp, &ex->name, &ex->type) ||
	    cm_check_visible(s, &ex->type, false, re->offset))
		return -1;
	it = item_of_extern(&ex->type);
	idx = cm_push(s, ex->sort, CM_ORIGIN_EXPORT, def, &it, re->offset);
	if (idx < 0)
		return -1;
	ex->index = (uint32_t)idx;
	return add_def(s, b, CM_DEF_EXPORT, def);
}

/* ---- the component's own type
 * ------------------------------------------------------------ */

typedef struct collect {
	scope *s;
	cm_hmap seen;
	cm_hmap bound;
	cm_hmap added;
	const cm_type **out;
	uint32_t n, cap;
	unsigned depth;
} collect;

static int collect_type(collect *k, const cm_type *t);

static int collect_ext(collect *k, const cm_externtype *e)
{
	return e->type ? collect_type(k, e->type) : 0;
}

/* Resources reachable from t that are neither imported nor bound. */
static int collect_type(collect *k, const cm_type *t)
{
	vstate *v = k->s->v;
	int rc = 0;

	if (t == NULL || cm_type_is_prim(t) || !t->abi.has_resource)
		return 0;
	if (cm_hmap_get(&k->seen, t, CM_KEY_PTR))
		return 0;
	if (cm_hmap_put(v->a, &k->seen, t, CM_KEY_PTR, t))
		return cm_oom(v);
	if (++k->depth > 4 * CM_MAX_TYPE_DEPTH) {
		k->depth--;
		return 0;
	}
	switch (t->kind) {
	case CM_RESOURCE: {
		const cm_type *r = cm_resource_canonical(t);
		const cm_type **slot;

		if (cm_hmap_get(&k->s->imported_set, r, CM_KEY_PTR) ||
		    cm_hmap_get(&k->bound, r, CM_KEY_PTR) ||
		    cm_hmap_get(&k->added, r, CM_KEY_PTR))
			break;
		if (cm_hmap_put(v->a, &k->added, r, CM_KEY_PTR, r))
			return cm_oom(v);
		slot = cm_arena_push(v->a, (void **)&k->out, &k->n, &k->cap,
				     sizeof *slot);
		if (slot == NULL)
			return cm_oom(v);
		*slot = r;
		break;
	}
	case CM_OWN:
	case CM_BORROW:
		rc = collect_type(k, t->u.handle.resource);
		break;
	case CM_LIST:
		rc = collect_type(k, t->u.list.elem);
		break;
	case CM_OPTION:
		rc = collect_type(k, t->u.option.elem);
		break;
	case CM_STREAM:
	case CM_FUTURE:
		rc = collect_type(k, t->u.stream.elem);
		break;
	case CM_RESULT:
		rc = collect_type(k, t->u.result.ok) ||
		     collect_type(k, t->u.result.err);
		break;
	case CM_MAP:
		rc = collect_type(k, t->u.map.key) ||
		     collect_type(k, t->u.map.value);
		break;
	case CM_TUPLE:
		for (uint32_t i = 0; i < t->u.tuple.n && !rc; i++)
			rc = collect_type(k, t->u.tuple.elems[i]);
		break;
	case CM_RECORD:
	case CM_VARIANT:
		for (uint32_t i = 0; i < t->u.record.n && !rc; i++)
			rc = collect_type(k, t->u.record.fields[i].type);
		break;
	case CM_FUNC:
		for (uint32_t i = 0; i < t->u.func.nparams && !rc; i++)
			rc = collect_type(k, t->u.func.params[i].type);
		if (!rc)
			rc = collect_type(k, t->u.func.result);
		break;
	case CM_COMPONENT:
	case CM_INSTANCE:
		for (uint32_t i = 0; i < t->u.comp.nimported_resources; i++)
			if (cm_hmap_put(
				    v->a, &k->bound,
				    cm_resource_canonical(
					    t->u.comp.imported_resources[i]),
				    CM_KEY_PTR, t))
				return cm_oom(v);
		for (uint32_t i = 0; i < t->u.comp.ndefined_resources; i++)
			if (cm_hmap_put(v->a, &k->bound,
					cm_resource_canonical(
						t->u.comp.defined_resources[i]),
					CM_KEY_PTR, t))
				return cm_oom(v);
		for (uint32_t i = 0; i < t->u.comp.nimports && !rc; i++)
			rc = collect_ext(k, &t->u.comp.imports[i].type);
		for (uint32_t i = 0; i < t->u.comp.nexports && !rc; i++)
			rc = collect_ext(k, &t->u.comp.exports[i].type);
		break;
	default:
		break;
	}
	k->depth--;
	return rc ? -1 : 0;
}

static int own_type(scope *s)
{
	vstate *v = s->v;
	cm_component *c = s->comp;
	cm_type *t = new_type(s, CM_COMPONENT);
	collect k;

	if (t == NULL)
		return -1;
	memset(&k, 0, sizeof k);
	k.s = s;
	t->u.comp.nimports = c->nimports;
	t->u.comp.imports = cm_arena_array(v->a, c->nimports ? c->nimports : 1,
					   sizeof(cm_extern_decl));
	t->u.comp.nexports = c->nexports;
	t->u.comp.exports = cm_arena_array(v->a, c->nexports ? c->nexports : 1,
					   sizeof(cm_extern_decl));
	if (t->u.comp.imports == NULL || t->u.comp.exports == NULL)
		return cm_oom(v);
	t->abi.depth = 1;
	t->abi.type_size = 1;
	for (uint32_t i = 0; i < c->nimports; i++) {
		t->u.comp.imports[i].name = c->imports[i].name;
		t->u.comp.imports[i].type = c->imports[i].type;
		absorb_size(t, c->imports[i].type.type);
	}
	for (uint32_t i = 0; i < c->nexports; i++) {
		t->u.comp.exports[i].name = c->exports[i].name;
		t->u.comp.exports[i].type = c->exports[i].type;
		absorb_size(t, c->exports[i].type.type);
		if (collect_ext(&k, &c->exports[i].type))
			return -1;
	}
	t->u.comp.nimported_resources = s->nimported_res;
	t->u.comp.imported_resources = s->imported_res;
	t->u.comp.ndefined_resources = k.n;
	t->u.comp.defined_resources = k.out;
	t->abi.has_resource |= s->nimported_res + k.n > 0;
	if (comp_limits(s, t, c->offset))
		return -1;
	c->type = t;
	return 0;
}

/* ---- the component
 * -------------------------------------------------------------------------- */

static cm_component *component(vstate *v, raw_component *raw, scope *parent,
			       const cm_component *parent_comp);

static int core_module(scope *s, cbuild *b, raw_item *ri)
{
	vstate *v = s->v;
	cm_component *c = s->comp;
	wasm_module *m = ri->u.module;
	uint32_t def = c->nmodules;
	wasm_module **slot;
	const cm_core_type **tslot;
	uint32_t tn = c->nmodules, tcap = b->modules;
	wasm_error e;
	cm_item item;

	slot = grow(s, &c->modules, &c->nmodules, &b->modules, sizeof *slot);
	if (slot == NULL)
		return -1;
	/* The raw tree keeps ownership until the whole load succeeds. */
	*slot = m;
	tslot = grow(s, &c->module_types, &tn, &tcap, sizeof *tslot);
	if (tslot == NULL)
		return -1;
	memset(&e, 0, sizeof e);
	if (wasm_module_validate(m, &e)) {
		v->kind = e.kind == WASM_ERR_NONE ? WASM_ERR_INVALID : e.kind;
		v->offset = e.offset == WASM_NO_OFFSET ? ri->offset
						       : ri->offset + e.offset;
		snprintf(v->msg, sizeof v->msg, "%s", e.msg);
		return -1;
	}
	if (cm_check_module_imports(v, m, ri->offset))
		return -1;
	*tslot = cm_module_type_of(v, m);
	if (*tslot == NULL)
		return -1;
	memset(&item, 0, sizeof item);
	item.t.core_type = *tslot;
	if (cm_push(s, CM_SORT_CORE_MODULE, CM_ORIGIN_CORE_MODULE, def, &item,
		    ri->offset) < 0)
		return -1;
	return add_def(s, b, CM_DEF_CORE_MODULE, def);
}

static int canon_def(scope *s, cbuild *b, const raw_canon *rc)
{
	cm_component *c = s->comp;
	uint32_t def = c->ncanons;
	cm_canon *cn = grow(s, &c->canons, &c->ncanons, &b->canons, sizeof *cn);
	cm_item item;
	int idx;

	if (cn == NULL || cm_validate_canon(s, rc, cn))
		return -1;
	memset(&item, 0, sizeof item);
	if (cn->op == CM_CANON_LIFT) {
		item.t.type = cn->type;
		idx = cm_push(s, CM_SORT_FUNC, CM_ORIGIN_CANON, def, &item,
			      rc->offset);
	} else {
		item.t.core_func = cn->core_type;
		idx = cm_push(s, CM_SORT_CORE_FUNC, CM_ORIGIN_CANON, def, &item,
			      rc->offset);
	}
	if (idx < 0)
		return -1;
	cn->result_index = (uint32_t)idx;
	return add_def(s, b, CM_DEF_CANON, def);
}

static int start_def(scope *s, cbuild *b, const raw_item *ri)
{
	vstate *v = s->v;
	cm_component *c = s->comp;
	const cm_start *st = ri->u.start;
	uint32_t def = c->nstarts;
	const cm_item *f = cm_get(s, CM_SORT_FUNC, st->func, ri->offset);
	const cm_functype *ft;
	cm_start *slot;

	if (f == NULL)
		return -1;
	ft = &f->t.type->u.func;
	if (st->nargs != ft->nparams)
		return cm_fail(v, ri->offset,
			       "start function expects %u arguments, found %u",
			       ft->nparams, st->nargs);
	for (uint32_t i = 0; i < st->nargs; i++) {
		const cm_item *a =
			cm_get(s, CM_SORT_VALUE, st->args[i], ri->offset);

		if (a == NULL)
			return -1;
		v->offset = ri->offset;
		if (cm_valtype_eq(v, a->t.type, ft->params[i].type))
			return cm_context(v, "start function argument %u", i);
	}
	if (st->nresults != (ft->result ? 1u : 0u))
		return cm_fail(v, ri->offset,
			       "start function result count mismatch");
	slot = grow(s, &c->starts, &c->nstarts, &b->starts, sizeof *slot);
	if (slot == NULL)
		return -1;
	*slot = *st;
	if (ft->result != NULL) {
		cm_item item;

		memset(&item, 0, sizeof item);
		item.t.type = ft->result;
		if (cm_push(s, CM_SORT_VALUE, CM_ORIGIN_START, def, &item,
			    ri->offset) < 0)
			return -1;
	}
	return add_def(s, b, CM_DEF_START, def);
}

static int value_def(scope *s, cbuild *b, const raw_value *rv)
{
	cm_component *c = s->comp;
	uint32_t def = c->nvalues;
	cm_value *val =
		grow(s, &c->values, &c->nvalues, &b->values, sizeof *val);
	char why[96];
	cm_item item;

	if (val == NULL)
		return -1;
	val->type = valtype(s, rv->type, rv->offset);
	if (val->type == NULL)
		return -1;
	if (cm_value_bytes_check(val->type, rv->bytes, rv->len, why,
				 sizeof why))
		return cm_fail(s->v, rv->offset, "invalid value: %s", why);
	val->bytes = rv->bytes;
	val->len = rv->len;
	memset(&item, 0, sizeof item);
	item.t.type = val->type;
	if (cm_push(s, CM_SORT_VALUE, CM_ORIGIN_VALUE, def, &item, rv->offset) <
	    0)
		return -1;
	return add_def(s, b, CM_DEF_VALUE, def);
}

static int item(scope *s, cbuild *b, raw_item *ri)
{
	vstate *v = s->v;
	cm_component *c = s->comp;
	cm_item it;
	int idx;

	memset(&it, 0, sizeof it);
	switch (ri->kind) {
	case RAW_CORE_MODULE:
		return core_module(s, b, ri);
	case RAW_CORE_INSTANCE:
		return core_instance(s, b, ri->u.instance);
	case RAW_CORE_TYPE:
		for (uint32_t k = 0; k < cm_core_type_count(ri->u.core_type);
		     k++) {
			it.t.core_type =
				cm_build_core_type(s, ri->u.core_type, k);
			if (it.t.core_type == NULL)
				return -1;
			idx = cm_push(s, CM_SORT_CORE_TYPE, CM_ORIGIN_CORE_TYPE,
				      0, &it, ri->offset);
			if (idx < 0 ||
			    add_def(s, b, CM_DEF_CORE_TYPE, (uint32_t)idx))
				return -1;
		}
		return 0;
	case RAW_COMPONENT: {
		uint32_t def = c->ncomponents;
		cm_component **slot = grow(s, &c->components, &c->ncomponents,
					   &b->components, sizeof *slot);

		if (slot == NULL)
			return -1;
		*slot = component(v, ri->u.component, s, c);
		if (*slot == NULL)
			return -1;
		it.t.type = (*slot)->type;
		if (cm_push(s, CM_SORT_COMPONENT, CM_ORIGIN_COMPONENT, def, &it,
			    ri->offset) < 0)
			return -1;
		return add_def(s, b, CM_DEF_COMPONENT, def);
	}
	case RAW_INSTANCE:
		return component_instance(s, b, ri->u.instance);
	case RAW_ALIAS: {
		uint32_t def = c->naliases;
		cm_alias *al = grow(s, &c->aliases, &c->naliases, &b->aliases,
				    sizeof *al);
		const cm_component *outer;

		if (al == NULL)
			return -1;
		*al = ri->u.alias->alias;
		if (alias(s, al, ri->offset, &it, &outer))
			return -1;
		al->outer = outer;
		if (cm_push(s, al->sort, CM_ORIGIN_ALIAS, def, &it,
			    ri->offset) < 0)
			return -1;
		return add_def(s, b, CM_DEF_ALIAS, def);
	}
	case RAW_TYPE:
		it.t.type = deftype(s, ri->u.type);
		if (it.t.type == NULL)
			return -1;
		idx = cm_push(s, CM_SORT_TYPE, CM_ORIGIN_TYPE, 0, &it,
			      ri->offset);
		return idx < 0 ? -1 : add_def(s, b, CM_DEF_TYPE, (uint32_t)idx);
	case RAW_CANON:
		return canon_def(s, b, ri->u.canon);
	case RAW_START:
		return start_def(s, b, ri);
	case RAW_IMPORT:
		return component_import(s, b, ri->u.import);
	case RAW_EXPORT:
		return component_export(s, b, ri->u.export);
	case RAW_VALUE:
		return value_def(s, b, ri->u.value);
	}
	return cm_fail(v, ri->offset, "unknown definition");
}

static cm_component *component(vstate *v, raw_component *raw, scope *parent,
			       const cm_component *parent_comp)
{
	cm_component *c = cm_arena_alloc(v->a, sizeof *c);
	cbuild b;
	scope s;

	if (c == NULL)
		return cm_oom(v), NULL;
	memset(&b, 0, sizeof b);
	memset(&s, 0, sizeof s);
	c->parent = parent_comp;
	c->arena = v->a;
	c->offset = raw->offset;
	s.parent = parent;
	s.kind = SCOPE_COMPONENT;
	s.v = v;
	s.comp = c;
	s.spaces = c->spaces;
	for (uint32_t i = 0; i < raw->nitems; i++)
		if (item(&s, &b, &raw->items[i]))
			return NULL;
	if (own_type(&s))
		return NULL;
	return c;
}

int cm_validate(cm_arena *a, raw_component *raw, cm_component **out,
		wasm_error *err)
{
	vstate v;
	cm_component *c;

	memset(&v, 0, sizeof v);
	v.a = a;
	c = component(&v, raw, NULL, NULL);
	if (c == NULL) {
		size_t len = strlen(v.msg);
		const char *m = v.msg;

		if (v.kind == WASM_ERR_NONE)
			v.kind = WASM_ERR_INVALID;
		/* Keep the innermost (last) part when it must be cut. */
		if (len >= WASM_ERROR_MSG_MAX)
			return wasm_error_set(err, v.kind, v.offset, "...%s",
					      m + len -
						      (WASM_ERROR_MSG_MAX - 4));
		return wasm_error_set(err, v.kind, v.offset, "%s", m);
	}
	*out = c;
	return 0;
}
