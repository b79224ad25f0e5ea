/*
 * subtype.c - resource substitution, type equality and subtyping
 * (digest 1.7 "Type equality is structural except resource types ...";
 * Explainer "Subtyping"), with wasmparser's mismatch messages.
 *
 * Contract: "a <: b" is checked with `a` the actual (what is supplied)
 * and `b` the expected type (what is declared).  Resource types compare
 * by canonical node.  Component types are polymorphic in their imported
 * and defined resources: cm_extern_sub instantiates both sides' binders
 * (cm_infer + cm_subst) before comparing, as wasmparser's SubtypeCx does.
 * Every walk is bounded: types are acyclic, at most CM_MAX_TYPE_DEPTH
 * deep, and substitution is memoised per call so shared subtrees are
 * copied once.
 *
 * Allocations sized by a guest or a client (issue 18 audit): type
 * nodes copied one at a time (cm_type_copy), fresh resources and
 * freshened instance types' export slots in the validation arena, as
 * many as the types being checked have nodes (validation bounds each
 * type by CM_MAX_TYPE_SIZE, and the types by the component's length).
 */
#include <stdio.h>
#include <string.h>

#include "component/internal.h"

/* ---- new nodes ---------------------------------------------------------- */

cm_type *cm_new_resource(vstate *v, cm_str name)
{
	cm_type *t = cm_arena_alloc(v->a, sizeof *t);

	if (t == NULL) {
		cm_oom(v);
		return NULL;
	}
	t->kind = CM_RESOURCE;
	t->u.resource.dtor = CM_NONE;
	t->u.resource.id = v->a->next_id++;
	t->u.resource.name = name;
	t->abi.has_resource = true;
	t->abi.depth = 1;
	t->abi.type_size = 1;
	return t;
}

cm_type *cm_new_resource_alias(vstate *v, const cm_type *r)
{
	const cm_type *c = cm_resource_canonical(r);
	cm_type *t = cm_arena_alloc(v->a, sizeof *t);

	if (t == NULL) {
		cm_oom(v);
		return NULL;
	}
	*t = *c;
	t->u.resource.alias_of = c;
	return t;
}

cm_type *cm_type_copy(vstate *v, const cm_type *t)
{
	cm_type *c;

	if (t->kind == CM_RESOURCE)
		return cm_new_resource_alias(v, t);
	c = cm_arena_alloc(v->a, sizeof *c);
	if (c == NULL) {
		cm_oom(v);
		return NULL;
	}
	*c = *t;
	return c;
}

int cm_rmap_put_var(vstate *v, cm_rmap *m, const cm_type *from,
		    const cm_type *to)
{
	if (cm_hmap_put(v->a, &m->m, from, CM_KEY_PTR, to))
		return cm_oom(v);
	m->n = m->m.n;
	return 0;
}

int cm_rmap_put(vstate *v, cm_rmap *m, const cm_type *from, const cm_type *to)
{
	from = cm_resource_canonical(from);
	to = cm_resource_canonical(to);
	if (cm_hmap_put(v->a, &m->m, from, CM_KEY_PTR, to))
		return cm_oom(v);
	m->n = m->m.n;
	return 0;
}

/* ---- substitution ---------------------------------------------------------
 */

typedef struct sctx {
	vstate *v;
	const cm_rmap *m;
	cm_hmap memo;
	bool failed;
} sctx;

static const cm_type *subst(sctx *s, const cm_type *t);

static int subst_ext(sctx *s, const cm_externtype *in, cm_externtype *out)
{
	*out = *in;
	if (in->type != NULL) {
		out->type = subst(s, in->type);
		if (out->type == NULL)
			return -1;
	}
	return 0;
}

static cm_extern_decl *subst_decls(sctx *s, const cm_extern_decl *d, uint32_t n,
				   bool *changed)
{
	cm_extern_decl *nd;

	if (n == 0)
		return NULL;
	nd = cm_arena_array(s->v->a, n, sizeof *nd);
	if (nd == NULL) {
		s->failed = true;
		cm_oom(s->v);
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		nd[i].name = d[i].name;
		if (subst_ext(s, &d[i].type, &nd[i].type)) {
			s->failed = true;
			return NULL;
		}
		if (nd[i].type.type != d[i].type.type)
			*changed = true;
	}
	return nd;
}

static const cm_type *subst_uncached(sctx *s, const cm_type *t)
{
	vstate *v = s->v;
	cm_type *c;
	bool changed = false;

	if (CM_WORK(v))
		return NULL;
	if (t->kind == CM_RESOURCE) {
		const cm_type *to =
			cm_hmap_lookup_ptr(&s->m->m, cm_resource_canonical(t));

		return to ? to : t;
	}
	if (t->abi.has_var) {
		const cm_type *to = cm_hmap_lookup_ptr(&s->m->m, t);

		if (to != NULL)
			return to;
	}
	if (!t->abi.has_resource && !t->abi.has_var)
		return t;
	c = cm_type_copy(v, t);
	if (c == NULL)
		return NULL;

#define SUB(field)                                                             \
	do {                                                                   \
		if (t->field != NULL) {                                        \
			const cm_type *x_ = subst(s, t->field);                \
			if (x_ == NULL)                                        \
				return NULL;                                   \
			if (x_ != t->field)                                    \
				changed = true;                                \
			c->field = x_;                                         \
		}                                                              \
	} while (0)

	switch (t->kind) {
	case CM_LIST:
		SUB(u.list.elem);
		break;
	case CM_OPTION:
		SUB(u.option.elem);
		break;
	case CM_STREAM:
	case CM_FUTURE:
		SUB(u.stream.elem);
		break;
	case CM_RESULT:
		SUB(u.result.ok);
		SUB(u.result.err);
		break;
	case CM_OWN:
	case CM_BORROW:
		SUB(u.handle.resource);
		break;
	case CM_MAP:
		SUB(u.map.key);
		SUB(u.map.value);
		SUB(u.map.entry);
		break;
	case CM_RECORD:
	case CM_VARIANT:
	case CM_FUNC: {
		uint32_t n =
			t->kind == CM_FUNC ? t->u.func.nparams : t->u.record.n;
		const cm_field *f = t->kind == CM_FUNC ? t->u.func.params
						       : t->u.record.fields;
		cm_field *nf = cm_arena_array(v->a, n ? n : 1, sizeof *nf);

		if (nf == NULL)
			return cm_oom(v), NULL;
		for (uint32_t i = 0; i < n; i++) {
			nf[i] = f[i];
			if (f[i].type != NULL) {
				nf[i].type = subst(s, f[i].type);
				if (nf[i].type == NULL)
					return NULL;
				if (nf[i].type != f[i].type)
					changed = true;
			}
		}
		if (t->kind == CM_FUNC) {
			c->u.func.params = nf;
			SUB(u.func.result);
		} else {
			c->u.record.fields = nf;
		}
		break;
	}
	case CM_TUPLE: {
		const cm_type **ne = cm_arena_array(
			v->a, t->u.tuple.n ? t->u.tuple.n : 1, sizeof *ne);

		if (ne == NULL)
			return cm_oom(v), NULL;
		for (uint32_t i = 0; i < t->u.tuple.n; i++) {
			ne[i] = subst(s, t->u.tuple.elems[i]);
			if (ne[i] == NULL)
				return NULL;
			if (ne[i] != t->u.tuple.elems[i])
				changed = true;
		}
		c->u.tuple.elems = ne;
		break;
	}
	case CM_COMPONENT:
	case CM_INSTANCE:
		c->u.comp.imports = subst_decls(s, t->u.comp.imports,
						t->u.comp.nimports, &changed);
		c->u.comp.exports = subst_decls(s, t->u.comp.exports,
						t->u.comp.nexports, &changed);
		if (s->failed)
			return NULL;
		break;
	default:
		break;
	}
#undef SUB
	return changed ? c : t;
}

static const cm_type *subst(sctx *s, const cm_type *t)
{
	const cm_type *r;

	if (t == NULL || cm_type_is_prim(t))
		return t;
	r = cm_hmap_lookup_ptr(&s->memo, t);
	if (r != NULL)
		return r;
	r = subst_uncached(s, t);
	if (r == NULL) {
		s->failed = true;
		return NULL;
	}
	if (cm_hmap_put(s->v->a, &s->memo, t, CM_KEY_PTR, r)) {
		s->failed = true;
		cm_oom(s->v);
		return NULL;
	}
	return r;
}

const cm_type *cm_subst(vstate *v, const cm_type *t, const cm_rmap *m)
{
	sctx s = {v, m, {NULL, 0, 0}, false};

	if (t == NULL || m->n == 0)
		return t;
	return subst(&s, t);
}

int cm_subst_extern(vstate *v, const cm_externtype *in, const cm_rmap *m,
		    cm_externtype *out)
{
	sctx s = {v, m, {NULL, 0, 0}, false};

	if (m->n == 0) {
		*out = *in;
		return 0;
	}
	return subst_ext(&s, in, out);
}

int cm_subst_decls(vstate *v, const cm_extern_decl *in, uint32_t n,
		   const cm_rmap *m, cm_extern_decl *out)
{
	sctx s = {v, m, {NULL, 0, 0}, false};

	for (uint32_t i = 0; i < n; i++) {
		out[i].name = in[i].name;
		if (m->n == 0)
			out[i].type = in[i].type;
		else if (subst_ext(&s, &in[i].type, &out[i].type))
			return -1;
	}
	return 0;
}

const cm_type *cm_freshen_instance(vstate *v, const cm_type *it,
				   const cm_type ***list, uint32_t *n,
				   uint32_t *cap)
{
	cm_rmap m;
	const cm_type *r;
	cm_type *c;

	if (it->u.comp.ndefined_resources == 0)
		return it;
	memset(&m, 0, sizeof m);
	for (uint32_t i = 0; i < it->u.comp.ndefined_resources; i++) {
		const cm_type *old = it->u.comp.defined_resources[i];
		cm_type *fresh = cm_new_resource(v, old->u.resource.name);

		if (fresh == NULL || cm_rmap_put(v, &m, old, fresh))
			return NULL;
		if (list != NULL) {
			const cm_type **slot = cm_arena_push(
				v->a, (void **)list, n, cap, sizeof *slot);

			if (slot == NULL)
				return cm_oom(v), NULL;
			*slot = fresh;
		}
	}
	r = cm_subst(v, it, &m);
	if (r == NULL)
		return NULL;
	if (r == it) {
		c = cm_type_copy(v, it);
		if (c == NULL)
			return NULL;
	} else {
		c = (cm_type *)r; /* a fresh copy owned by this call */
	}
	c->u.comp.ndefined_resources = 0;
	c->u.comp.defined_resources = NULL;
	c->u.comp.has_free_resource = true;
	return c;
}

/* ---- inference of bound resources ------------------------------------------
 */

static bool in_list(const cm_type *const *l, uint32_t n, const cm_type *r)
{
	for (uint32_t i = 0; i < n; i++)
		if (cm_resource_canonical(l[i]) == r)
			return true;
	return false;
}

/* A declaration by name; the scan counts as work (see CM_WORK). */
static const cm_extern_decl *find_decl(vstate *v, const cm_extern_decl *d,
				       uint32_t n, const cm_str *name)
{
	v->work += n;
	for (uint32_t i = 0; i < n; i++)
		if (d[i].name.str.len == name->len &&
		    !memcmp(d[i].name.str.ptr, name->ptr, name->len))
			return &d[i];
	return NULL;
}

int cm_infer(vstate *v, cm_rmap *m, const cm_type *const *bound,
	     uint32_t nbound, const cm_externtype *expected,
	     const cm_externtype *actual)
{
	if (CM_WORK(v))
		return -1;
	if (expected->sort != actual->sort)
		return 0; /* reported by the subtype check */
	if (expected->sort == CM_SORT_TYPE && expected->type != NULL &&
	    expected->type->kind == CM_RESOURCE) {
		const cm_type *r = cm_resource_canonical(expected->type);

		v->work += nbound;
		if (CM_WORK(v))
			return -1;
		if (!in_list(bound, nbound, r) ||
		    cm_hmap_lookup_ptr(&m->m, r) != NULL)
			return 0;
		if (actual->type->kind != CM_RESOURCE)
			return cm_fail(v, v->offset,
				       "expected resource, found defined "
				       "type");
		return cm_rmap_put(v, m, r, actual->type);
	}
	if (expected->sort == CM_SORT_INSTANCE) {
		const cm_comptype *e = &expected->type->u.comp;
		const cm_comptype *a = &actual->type->u.comp;

		for (uint32_t i = 0; i < e->nexports; i++) {
			const cm_extern_decl *ad =
				find_decl(v, a->exports, a->nexports,
					  &e->exports[i].name.str);

			if (ad != NULL &&
			    cm_infer(v, m, bound, nbound, &e->exports[i].type,
				     &ad->type))
				return -1;
		}
	}
	return 0;
}

/* ---- value type equality
 * ------------------------------------------------------ */

static const char *desc(const cm_type *t)
{
	return cm_type_kind_name(t->kind);
}

static int val_eq(vstate *v, const cm_type *a, const cm_type *b, bool top);

static int opt_eq(vstate *v, const cm_type *a, const cm_type *b,
		  const char *what)
{
	if (a == NULL && b == NULL)
		return 0;
	if (a == NULL)
		return cm_fail(v, v->offset, "expected %s type, but found none",
			       what);
	if (b == NULL)
		return cm_fail(v, v->offset,
			       "expected %s type to not be present", what);
	if (val_eq(v, a, b, false))
		return cm_context(v, "type mismatch in %s variant", what);
	return 0;
}

static int labels_eq(const cm_str *a, const cm_str *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (a[i].len != b[i].len ||
		    memcmp(a[i].ptr, b[i].ptr, a[i].len))
			return -1;
	return 0;
}

static int val_eq(vstate *v, const cm_type *a, const cm_type *b, bool top)
{
	if (a == b)
		return 0;
	if (CM_WORK(v))
		return -1;
	if (cm_type_is_prim(b) || cm_type_is_prim(a)) {
		if (cm_type_is_prim(b) && cm_type_is_prim(a)) {
			if (a->kind == b->kind)
				return 0;
			return cm_fail(v, v->offset,
				       "expected primitive `%s` found "
				       "primitive `%s`",
				       desc(b), desc(a));
		}
		if (cm_type_is_prim(b) && top)
			return cm_fail(v, v->offset,
				       "expected primitive, found %s", desc(a));
		return cm_fail(v, v->offset, "expected %s, found %s", desc(b),
			       desc(a));
	}
	if ((a->kind == CM_OWN && b->kind == CM_BORROW) ||
	    (a->kind == CM_BORROW && b->kind == CM_OWN))
		return cm_fail(v, v->offset, "expected %s, found %s", desc(b),
			       desc(a));
	if (a->kind != b->kind)
		return cm_fail(v, v->offset, "expected %s, found %s", desc(b),
			       desc(a));
	switch (a->kind) {
	case CM_LIST:
		if (a->u.list.len != b->u.list.len)
			return cm_fail(v, v->offset,
				       "expected list length %u, found %u",
				       b->u.list.len, a->u.list.len);
		if (val_eq(v, a->u.list.elem, b->u.list.elem, false))
			return cm_context(v, "type mismatch in list element");
		return 0;
	case CM_RECORD:
	case CM_VARIANT: {
		bool rec = a->kind == CM_RECORD;
		const char *what = rec ? "fields" : "cases";

		if (a->u.record.n != b->u.record.n)
			return cm_fail(v, v->offset, "expected %u %s, found %u",
				       b->u.record.n, what, a->u.record.n);
		for (uint32_t i = 0; i < a->u.record.n; i++) {
			const cm_field *fa = &a->u.record.fields[i];
			const cm_field *fb = &b->u.record.fields[i];

			if (fa->label.len != fb->label.len ||
			    memcmp(fa->label.ptr, fb->label.ptr, fa->label.len))
				return cm_fail(
					v, v->offset,
					rec ? "expected field name `%s`, found "
					      "`%s`"
					    : "expected case named `%s`, found "
					      "`%s`",
					fb->label.ptr, fa->label.ptr);
			if (!rec && fa->type == NULL && fb->type != NULL)
				return cm_fail(v, v->offset,
					       "expected case `%s` to have a "
					       "type, found none",
					       fb->label.ptr);
			if (!rec && fa->type != NULL && fb->type == NULL)
				return cm_fail(v, v->offset,
					       "expected case `%s` to have no "
					       "type",
					       fb->label.ptr);
			if (fa->type != NULL &&
			    val_eq(v, fa->type, fb->type, false))
				return cm_context(
					v,
					rec ? "type mismatch in record field "
					      "`%s`"
					    : "type mismatch in variant case "
					      "`%s`",
					fb->label.ptr);
		}
		return 0;
	}
	case CM_TUPLE:
		if (a->u.tuple.n != b->u.tuple.n)
			return cm_fail(v, v->offset,
				       "expected %u types, found %u",
				       b->u.tuple.n, a->u.tuple.n);
		for (uint32_t i = 0; i < a->u.tuple.n; i++)
			if (val_eq(v, a->u.tuple.elems[i], b->u.tuple.elems[i],
				   false))
				return cm_context(
					v, "type mismatch in tuple field %u",
					i);
		return 0;
	case CM_FLAGS:
	case CM_ENUM:
		if (a->u.flags.n != b->u.flags.n ||
		    labels_eq(a->u.flags.labels, b->u.flags.labels,
			      a->u.flags.n))
			return cm_fail(v, v->offset, "mismatch in %s elements",
				       desc(a));
		return 0;
	case CM_OPTION:
		if (val_eq(v, a->u.option.elem, b->u.option.elem, false))
			return cm_context(v, "type mismatch in option");
		return 0;
	case CM_RESULT:
		if (opt_eq(v, a->u.result.ok, b->u.result.ok, "ok"))
			return -1;
		return opt_eq(v, a->u.result.err, b->u.result.err, "err");
	case CM_OWN:
	case CM_BORROW:
		if (cm_handle_resource(a) != cm_handle_resource(b))
			return cm_fail(v, v->offset,
				       "resource types are not the same");
		return 0;
	case CM_STREAM:
	case CM_FUTURE:
		if (a->u.stream.elem == NULL && b->u.stream.elem == NULL)
			return 0;
		if (a->u.stream.elem == NULL || b->u.stream.elem == NULL)
			return cm_fail(v, v->offset,
				       "expected %s element type %s", desc(b),
				       b->u.stream.elem ? "to be present"
							: "to not be present");
		if (val_eq(v, a->u.stream.elem, b->u.stream.elem, false))
			return cm_context(v, "type mismatch in %s element",
					  desc(a));
		return 0;
	case CM_MAP:
		if (val_eq(v, a->u.map.key, b->u.map.key, false))
			return cm_context(v, "type mismatch in map key");
		if (val_eq(v, a->u.map.value, b->u.map.value, false))
			return cm_context(v, "type mismatch in map value");
		return 0;
	default:
		return cm_fail(v, v->offset, "expected %s, found %s", desc(b),
			       desc(a));
	}
}

int cm_valtype_eq(vstate *v, const cm_type *a, const cm_type *b)
{
	return val_eq(v, a, b, false);
}

int cm_func_sub(vstate *v, const cm_type *a, const cm_type *b)
{
	const cm_functype *fa = &a->u.func, *fb = &b->u.func;

	if (fa->async != fb->async)
		return cm_fail(v, v->offset, "expected %s function, found %s",
			       fb->async ? "an async" : "a sync",
			       fa->async ? "an async one" : "a sync one");
	if (fa->nparams != fb->nparams)
		return cm_fail(v, v->offset, "expected %u parameters, found %u",
			       fb->nparams, fa->nparams);
	for (uint32_t i = 0; i < fa->nparams; i++) {
		const cm_field *pa = &fa->params[i], *pb = &fb->params[i];

		if (pa->label.len != pb->label.len ||
		    memcmp(pa->label.ptr, pb->label.ptr, pa->label.len))
			return cm_fail(v, v->offset,
				       "expected parameter named `%s`, found "
				       "`%s`",
				       pb->label.ptr, pa->label.ptr);
		if (val_eq(v, pa->type, pb->type, false))
			return cm_context(v,
					  "type mismatch in function parameter "
					  "`%s`",
					  pb->label.ptr);
	}
	/* wasmparser words these from the supplied function's side. */
	if (fa->result != NULL && fb->result == NULL)
		return cm_fail(v, v->offset, "expected a result, found none");
	if (fa->result == NULL && fb->result != NULL)
		return cm_fail(v, v->offset, "expected no result, found one");
	if (fa->result != NULL && val_eq(v, fa->result, fb->result, false))
		return cm_context(v, "type mismatch with result type");
	return 0;
}

/* ---- core types
 * --------------------------------------------------------------- */

void cm_core_functype_str(const wasm_functype *f, char *buf, size_t n)
{
	size_t k = 0;

#define APP(...)                                                               \
	do {                                                                   \
		if (k < n) {                                                   \
			int w_ = snprintf(buf + k, n - k, __VA_ARGS__);        \
			k += w_ > 0 ? (size_t)w_ : 0;                          \
		}                                                              \
	} while (0)
	APP("(func");
	if (f->nparams) {
		APP(" (param");
		for (uint32_t i = 0; i < f->nparams; i++)
			APP(" %s", wasm_valtype_name(f->params[i]));
		APP(")");
	}
	if (f->nresults) {
		APP(" (result");
		for (uint32_t i = 0; i < f->nresults; i++)
			APP(" %s", wasm_valtype_name(f->results[i]));
		APP(")");
	}
	APP(")");
#undef APP
}

static const char *core_kind_name(wasm_externkind k)
{
	static const char *const names[] = {"func", "table", "memory", "global",
					    "tag"};

	return k <= WASM_EXTERN_TAG ? names[k] : "?";
}

static bool limits_sub(const wasm_limits *a, const wasm_limits *b)
{
	if (a->is64 != b->is64 || a->min < b->min)
		return false;
	if (b->has_max && (!a->has_max || a->max > b->max))
		return false;
	return true;
}

int cm_core_extern_sub(vstate *v, const cm_core_externtype *a,
		       const cm_core_externtype *b)
{
	char ba[160], bb[160];

	if (a->kind != b->kind)
		return cm_fail(v, v->offset, "expected %s, found %s",
			       core_kind_name(b->kind),
			       core_kind_name(a->kind));
	switch (a->kind) {
	case WASM_EXTERN_FUNC:
	case WASM_EXTERN_TAG:
		if (cm_core_functype_equal(a->u.func, b->u.func))
			return 0;
		cm_core_functype_str(b->u.func, bb, sizeof bb);
		cm_core_functype_str(a->u.func, ba, sizeof ba);
		return cm_fail(v, v->offset,
			       "type mismatch: expected: %s, "
			       "found: %s",
			       bb, ba);
	case WASM_EXTERN_TABLE:
		if (a->u.table.elem != b->u.table.elem)
			return cm_fail(v, v->offset,
				       "expected table element type %s, "
				       "found %s",
				       wasm_valtype_name(b->u.table.elem),
				       wasm_valtype_name(a->u.table.elem));
		if (!limits_sub(&a->u.table.limits, &b->u.table.limits))
			return cm_fail(v, v->offset,
				       "mismatch in table limits");
		return 0;
	case WASM_EXTERN_MEMORY:
		if (a->u.memory.limits.shared != b->u.memory.limits.shared)
			return cm_fail(v, v->offset,
				       "mismatch in the shared flag for "
				       "memories");
		if (!limits_sub(&a->u.memory.limits, &b->u.memory.limits))
			return cm_fail(v, v->offset,
				       "mismatch in memory limits");
		return 0;
	case WASM_EXTERN_GLOBAL:
		if (a->u.global.type != b->u.global.type)
			return cm_fail(v, v->offset,
				       "expected global type %s, found %s",
				       wasm_valtype_name(b->u.global.type),
				       wasm_valtype_name(a->u.global.type));
		if (a->u.global.mut != b->u.global.mut)
			return cm_fail(v, v->offset,
				       "global types differ in mutability");
		return 0;
	}
	return 0;
}

int cm_module_sub(vstate *v, const cm_core_type *a, const cm_core_type *b)
{
	for (uint32_t i = 0; i < a->u.module.nimports; i++) {
		const cm_core_import *ia = &a->u.module.imports[i];
		const cm_core_import *ib = NULL;

		v->work += b->u.module.nimports;
		if (CM_WORK(v))
			return -1;
		for (uint32_t j = 0; j < b->u.module.nimports; j++) {
			const cm_core_import *x = &b->u.module.imports[j];

			if (x->module.len == ia->module.len &&
			    x->name.len == ia->name.len &&
			    !memcmp(x->module.ptr, ia->module.ptr,
				    x->module.len) &&
			    !memcmp(x->name.ptr, ia->name.ptr, x->name.len)) {
				ib = x;
				break;
			}
		}
		if (ib == NULL)
			return cm_fail(v, v->offset,
				       "missing expected import `%s::%s`",
				       ia->module.ptr, ia->name.ptr);
		if (cm_core_extern_sub(v, &ib->type, &ia->type))
			return cm_context(v, "type mismatch in import `%s::%s`",
					  ia->module.ptr, ia->name.ptr);
	}
	for (uint32_t i = 0; i < b->u.module.nexports; i++) {
		const cm_core_export *eb = &b->u.module.exports[i];
		const cm_core_export *ea = NULL;

		v->work += a->u.module.nexports;
		if (CM_WORK(v))
			return -1;
		for (uint32_t j = 0; j < a->u.module.nexports; j++) {
			const cm_core_export *x = &a->u.module.exports[j];

			if (x->name.len == eb->name.len &&
			    !memcmp(x->name.ptr, eb->name.ptr, x->name.len)) {
				ea = x;
				break;
			}
		}
		if (ea == NULL)
			return cm_fail(v, v->offset,
				       "missing expected export `%s`",
				       eb->name.ptr);
		if (cm_core_extern_sub(v, &ea->type, &eb->type))
			return cm_context(v, "type mismatch in export `%s`",
					  eb->name.ptr);
	}
	return 0;
}

/* ---- extern subtyping
 * ------------------------------------------------------------ */

static int comp_sub(vstate *v, const cm_type *a, const cm_type *b);

static int instance_sub(vstate *v, const cm_type *a, const cm_type *b)
{
	const cm_comptype *ca = &a->u.comp, *cb = &b->u.comp;

	for (uint32_t i = 0; i < cb->nexports; i++) {
		const cm_extern_decl *eb = &cb->exports[i];
		const cm_extern_decl *ea =
			find_decl(v, ca->exports, ca->nexports, &eb->name.str);

		if (ea == NULL)
			return cm_fail(v, v->offset,
				       "missing expected export `%s`",
				       eb->name.str.ptr);
		if (cm_extern_sub(v, &ea->type, &eb->type))
			return cm_context(v,
					  "type mismatch in instance export "
					  "`%s`",
					  eb->name.str.ptr);
	}
	return 0;
}

int cm_extern_sub(vstate *v, const cm_externtype *a, const cm_externtype *b)
{
	if (CM_WORK(v))
		return -1;
	if (a->sort != b->sort)
		return cm_fail(v, v->offset, "expected %s, found %s",
			       cm_sort_name(b->sort), cm_sort_name(a->sort));
	switch (a->sort) {
	case CM_SORT_CORE_MODULE:
		return cm_module_sub(v, a->core_type, b->core_type);
	case CM_SORT_FUNC:
		return cm_func_sub(v, a->type, b->type);
	case CM_SORT_VALUE:
		return val_eq(v, a->type, b->type, false);
	case CM_SORT_TYPE:
		if (!b->type_eq) {
			if (a->type->kind != CM_RESOURCE)
				return cm_fail(v, v->offset,
					       "expected resource, found "
					       "defined type");
			return 0;
		}
		if (b->type->kind == CM_RESOURCE) {
			if (a->type->kind != CM_RESOURCE)
				return cm_fail(v, v->offset,
					       "expected resource, found "
					       "defined type");
			if (cm_resource_canonical(a->type) !=
			    cm_resource_canonical(b->type))
				return cm_fail(v, v->offset,
					       "resource types are not the "
					       "same");
			return 0;
		}
		if (a->type->kind == CM_RESOURCE)
			return cm_fail(v, v->offset,
				       "expected defined type, found "
				       "resource");
		if (b->type->kind == CM_FUNC) {
			if (a->type->kind != CM_FUNC)
				return cm_fail(v, v->offset,
					       "expected func, found %s",
					       desc(a->type));
			return cm_func_sub(v, a->type, b->type);
		}
		if (b->type->kind == CM_INSTANCE ||
		    b->type->kind == CM_COMPONENT) {
			if (a->type->kind != b->type->kind)
				return cm_fail(v, v->offset,
					       "expected %s, found %s",
					       desc(b->type), desc(a->type));
			/* Type equality of these: subtyping both ways. */
			if (b->type->kind == CM_INSTANCE)
				return instance_sub(v, a->type, b->type) ||
				       instance_sub(v, b->type, a->type);
			return comp_sub(v, a->type, b->type) ||
			       comp_sub(v, b->type, a->type);
		}
		if (!cm_type_is_value(a->type))
			return cm_fail(v, v->offset, "expected %s, found %s",
				       desc(b->type), desc(a->type));
		return val_eq(v, a->type, b->type, true);
	case CM_SORT_INSTANCE:
		return instance_sub(v, a->type, b->type);
	case CM_SORT_COMPONENT:
		return comp_sub(v, a->type, b->type);
	default:
		return 0;
	}
}

/*
 * a <: b for component types: b's imports must satisfy a's (a's imported
 * resources are bound from b's imports), and a's exports must satisfy
 * b's (b's defined resources are bound from a's exports).
 */
static int comp_sub(vstate *v, const cm_type *a, const cm_type *b)
{
	const cm_comptype *ca = &a->u.comp, *cb = &b->u.comp;
	cm_rmap m1, m2;

	memset(&m1, 0, sizeof m1);
	memset(&m2, 0, sizeof m2);
	for (uint32_t i = 0; i < ca->nimports; i++) {
		const cm_extern_decl *ia = &ca->imports[i];
		const cm_extern_decl *ib =
			find_decl(v, cb->imports, cb->nimports, &ia->name.str);

		if (ib != NULL &&
		    cm_infer(v, &m1, ca->imported_resources,
			     ca->nimported_resources, &ia->type, &ib->type))
			return -1;
	}
	for (uint32_t i = 0; i < ca->nimports; i++) {
		const cm_extern_decl *ia = &ca->imports[i];
		const cm_extern_decl *ib =
			find_decl(v, cb->imports, cb->nimports, &ia->name.str);
		cm_externtype sa;

		if (ib == NULL)
			return cm_fail(v, v->offset,
				       "missing expected import `%s`",
				       ia->name.str.ptr);
		if (cm_subst_extern(v, &ia->type, &m1, &sa))
			return -1;
		if (cm_extern_sub(v, &ib->type, &sa))
			return cm_context(v, "type mismatch in import `%s`",
					  ia->name.str.ptr);
	}
	for (uint32_t i = 0; i < cb->nexports; i++) {
		const cm_extern_decl *eb = &cb->exports[i];
		const cm_extern_decl *ea =
			find_decl(v, ca->exports, ca->nexports, &eb->name.str);
		cm_externtype sa;

		if (ea == NULL)
			continue;
		if (cm_subst_extern(v, &ea->type, &m1, &sa))
			return -1;
		if (cm_infer(v, &m2, cb->defined_resources,
			     cb->ndefined_resources, &eb->type, &sa))
			return -1;
	}
	for (uint32_t i = 0; i < cb->nexports; i++) {
		const cm_extern_decl *eb = &cb->exports[i];
		const cm_extern_decl *ea =
			find_decl(v, ca->exports, ca->nexports, &eb->name.str);
		cm_externtype sa, sb;

		if (ea == NULL)
			return cm_fail(v, v->offset,
				       "missing expected export `%s`",
				       eb->name.str.ptr);
		if (cm_subst_extern(v, &ea->type, &m1, &sa) ||
		    cm_subst_extern(v, &eb->type, &m2, &sb))
			return -1;
		if (cm_extern_sub(v, &sa, &sb))
			return cm_context(v, "type mismatch in export `%s`",
					  eb->name.str.ptr);
	}
	return 0;
}
