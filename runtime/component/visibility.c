/*
 * visibility.c - rules on import/export declarations: name syntax and
 * strong uniqueness, attributes, annotated names ([constructor] etc., with
 * the resource names of the scope), and external visibility of types
 * (Explainer "external visibility": every record/variant/enum/flags and
 * resource type reachable from an import's or export's type must be
 * reachable through an imported/exported type *index*).
 *
 * Contract: identity for visibility and for resource names is the type
 * node as written (an import/export of a type makes a new node), as in
 * wasmparser, while type checking elsewhere compares canonical resources.
 * Imports may only use imported names; exports may use both.
 *
 * Allocations sized by a guest or a client (issue 18 audit): tagged
 * keys in the validation arena, one per name checked (the component's
 * length).
 */
#include <string.h>
#include <strings.h>

#include "component/internal.h"

static int name_conflict(vstate *v, const cm_name *n, const cm_hentry *prev,
			 bool is_import, size_t offset)
{
	return cm_fail(v, offset,
		       "%s name `%s` conflicts with previous name `%s`",
		       is_import ? "import" : "export", n->str.ptr,
		       ((const cm_str *)prev->val)->ptr);
}

/* A hash key: a tag byte (never in a name) followed by lowercase a.b. */
static int tagged_key(vstate *v, char tag, cm_str a, const cm_str *b,
		      cm_str *out)
{
	uint32_t len = 1 + a.len + (b ? 1 + b->len : 0);
	char *buf = cm_arena_alloc(v->a, len + 1);
	cm_str tmp;

	if (buf == NULL)
		return cm_oom(v);
	buf[0] = tag;
	memcpy(buf + 1, a.ptr, a.len);
	if (b != NULL) {
		buf[1 + a.len] = '.';
		memcpy(buf + 2 + a.len, b->ptr, b->len);
	}
	buf[len] = '\0';
	tmp.ptr = buf;
	tmp.len = len;
	return cm_lower(v, tmp, out);
}

/*
 * Strong uniqueness (Explainer, "Name uniqueness").  `[method]R.m` /
 * `[static]R.m` clash with each other when R.m is the same; with a plain
 * label only in the spec's `l` / `[*]l.l` case, R and m both that label
 * (`[method]foo.foo` and `foo`).  So a plain `method` and
 * `[method]incoming-request.method` are strongly unique, as wasmparser
 * and every wasi:http world have them; two methods of different
 * resources may share m (`[method]input-stream.subscribe` and
 * `[method]output-stream.subscribe`).  Keys: plain names by their
 * lowercase form, methods by "\1R.m", and "\2l" records a method
 * `[*]l.l`.
 */
int cm_check_name_unique(scope *s, name_ctx *ctx, cm_name *n, cm_sort sort,
			 bool is_import, size_t offset)
{
	vstate *v = s->v;
	cm_str canon, full, mark;
	cm_hentry *prev;
	bool method = n->kind == CM_NAME_METHOD || n->kind == CM_NAME_STATIC;
	/* `[*]l.l`: the method that a plain `l` clashes with */
	bool ll = method && n->resource.len == n->func.len &&
		  strncasecmp(n->resource.ptr, n->func.ptr, n->func.len) == 0;

	if (cm_name_canonical(v, n, &canon))
		return -1;
	if (tagged_key(v, '\2', canon, NULL, &mark))
		return -1;
	prev = method && !ll ? NULL
			     : cm_hmap_get(&ctx->names, canon.ptr, canon.len);
	if (prev != NULL)
		return name_conflict(v, n, prev, is_import, offset);
	if (method) {
		if (tagged_key(v, '\1', n->resource, &n->func, &full))
			return -1;
		prev = cm_hmap_get(&ctx->names, full.ptr, full.len);
		if (prev != NULL)
			return name_conflict(v, n, prev, is_import, offset);
		if (cm_hmap_put(v->a, &ctx->names, full.ptr, full.len, &n->str))
			return cm_oom(v);
		if (ll && cm_hmap_get(&ctx->names, mark.ptr, mark.len) == NULL &&
		    cm_hmap_put(v->a, &ctx->names, mark.ptr, mark.len, &n->str))
			return cm_oom(v);
	} else {
		prev = cm_hmap_get(&ctx->names, mark.ptr, mark.len);
		if (prev != NULL)
			return name_conflict(v, n, prev, is_import, offset);
		if (cm_hmap_put(v->a, &ctx->names, canon.ptr, canon.len,
				&n->str))
			return cm_oom(v);
	}
	return cm_name_check_attributes(v, n, sort, offset);
}

static const cm_str *res_name(name_ctx *ctx, const cm_type *r)
{
	return cm_hmap_lookup_ptr(&ctx->res_names, r);
}

static int expect_resource_name(scope *s, name_ctx *ctx, const cm_type *r,
				const cm_str *want, size_t offset)
{
	const cm_str *got = res_name(ctx, r);

	if (got == NULL)
		return cm_fail(s->v, offset,
			       "resource used in function does not have a "
			       "name in this context");
	if (got->len != want->len || memcmp(got->ptr, want->ptr, got->len))
		return cm_fail(s->v, offset,
			       "function does not match expected resource "
			       "name `%s`",
			       got->ptr);
	return 0;
}

int cm_check_annotated(scope *s, name_ctx *ctx, const cm_name *n,
		       const cm_externtype *e, size_t offset)
{
	vstate *v = s->v;
	const cm_functype *f;

	if (n->kind != CM_NAME_CONSTRUCTOR && n->kind != CM_NAME_METHOD &&
	    n->kind != CM_NAME_STATIC)
		return 0;
	if (e->sort != CM_SORT_FUNC)
		return cm_fail(v, offset, "item `%s` is not a func",
			       n->str.ptr);
	f = &e->type->u.func;
	switch (n->kind) {
	case CM_NAME_CONSTRUCTOR: {
		const cm_type *r = f->result;

		/* wasmparser's rule (WIT has no async constructor; the
		 * spec says nothing either way): agreeing keeps us from
		 * loading what no other host validates (docs/validation.md) */
		if (f->async)
			return cm_fail(v, offset,
				       "constructor function cannot be async");
		if (r == NULL)
			return cm_fail(v, offset,
				       "function should return one value");
		if (r->kind == CM_RESULT && r->u.result.ok != NULL)
			r = r->u.result.ok;
		if (r->kind != CM_OWN)
			return cm_fail(v, offset,
				       "function should return `(own $T)` or "
				       "`(result (own $T))`");
		return expect_resource_name(s, ctx, r->u.handle.resource,
					    &n->resource, offset);
	}
	case CM_NAME_METHOD:
		if (f->nparams == 0)
			return cm_fail(v, offset,
				       "function should have at least one "
				       "argument");
		if (strcmp(f->params[0].label.ptr, "self") != 0)
			return cm_fail(v, offset,
				       "function should have a first argument "
				       "called `self`");
		if (f->params[0].type->kind != CM_BORROW)
			return cm_fail(v, offset,
				       "function should take a first argument "
				       "of `(borrow $T)`");
		return expect_resource_name(
			s, ctx, f->params[0].type->u.handle.resource,
			&n->resource, offset);
	default:
		if (cm_hmap_get(&ctx->res_by_name, n->resource.ptr,
				n->resource.len) == NULL)
			return cm_fail(v, offset,
				       "static resource name is not known in "
				       "this context");
		return 0;
	}
}

/* Mark the type nodes an instance exports (recursively) as visible. */
static int register_instance(scope *s, name_ctx *ctx, const cm_type *it,
			     unsigned depth)
{
	if (depth > CM_MAX_TYPE_DEPTH)
		return 0;
	for (uint32_t i = 0; i < it->u.comp.nexports; i++) {
		const cm_externtype *e = &it->u.comp.exports[i].type;

		if (e->sort == CM_SORT_TYPE) {
			if (cm_hmap_put(s->v->a, &ctx->named, e->type,
					CM_KEY_PTR, e->type))
				return cm_oom(s->v);
		} else if (e->sort == CM_SORT_INSTANCE) {
			if (register_instance(s, ctx, e->type, depth + 1))
				return -1;
		}
	}
	return 0;
}

int cm_register_named(scope *s, name_ctx *ctx, const cm_name *n,
		      const cm_externtype *e)
{
	vstate *v = s->v;

	if (e->sort == CM_SORT_TYPE) {
		if (cm_hmap_put(v->a, &ctx->named, e->type, CM_KEY_PTR,
				e->type))
			return cm_oom(v);
		if (e->type->kind == CM_RESOURCE && n != NULL &&
		    n->kind == CM_NAME_LABEL) {
			if (cm_hmap_put(v->a, &ctx->res_names, e->type,
					CM_KEY_PTR, &n->str) ||
			    cm_hmap_put(v->a, &ctx->res_by_name, n->str.ptr,
					n->str.len, e->type))
				return cm_oom(v);
		}
	} else if (e->sort == CM_SORT_INSTANCE) {
		return register_instance(s, ctx, e->type, 0);
	}
	return 0;
}

/* ---- the visibility check -------------------------------------------------
 */

typedef struct vis {
	scope *s;
	bool is_import;
	cm_hmap memo; /* node -> (void *)1 ok, (void *)2 not ok */
	unsigned depth;
} vis;

static bool in_sets(vis *x, const cm_type *t)
{
	if (cm_hmap_get(&x->s->imp.named, t, CM_KEY_PTR))
		return true;
	return !x->is_import && cm_hmap_get(&x->s->exp.named, t, CM_KEY_PTR);
}

static int def_ok(vis *x, const cm_type *t, bool *ok);

/* A type *reference* (a field, a param): named, or anonymous and made of
 * named parts. */
static int named_ok(vis *x, const cm_type *t, bool *ok)
{
	const void *m;

	if (t == NULL || cm_type_is_prim(t) || in_sets(x, t)) {
		*ok = true;
		return 0;
	}
	switch (t->kind) {
	case CM_RECORD:
	case CM_VARIANT:
	case CM_ENUM:
	case CM_FLAGS:
	case CM_RESOURCE:
	case CM_FUNC:
	case CM_COMPONENT:
	case CM_INSTANCE:
		*ok = false;
		return 0;
	default:
		break;
	}
	m = cm_hmap_lookup_ptr(&x->memo, t);
	if (m != NULL) {
		*ok = m == (const void *)1;
		return 0;
	}
	if (def_ok(x, t, ok))
		return -1;
	if (cm_hmap_put(x->s->v->a, &x->memo, t, CM_KEY_PTR,
			*ok ? (const void *)1 : (const void *)2))
		return cm_oom(x->s->v);
	return 0;
}

static int ext_ok(vis *x, const cm_externtype *e, bool *ok);

/* The structure of a type (its parts must be named). */
static int def_ok(vis *x, const cm_type *t, bool *ok)
{
	*ok = true;
	if (CM_WORK(x->s->v))
		return -1;
	if (++x->depth > 4 * CM_MAX_TYPE_DEPTH) {
		x->depth--;
		return 0;
	}
#define PART(p)                                                                \
	do {                                                                   \
		if (named_ok(x, (p), ok))                                      \
			return -1;                                             \
		if (!*ok)                                                      \
			goto out;                                              \
	} while (0)
	switch (t->kind) {
	case CM_LIST:
		PART(t->u.list.elem);
		break;
	case CM_OPTION:
		PART(t->u.option.elem);
		break;
	case CM_STREAM:
	case CM_FUTURE:
		PART(t->u.stream.elem);
		break;
	case CM_RESULT:
		PART(t->u.result.ok);
		PART(t->u.result.err);
		break;
	case CM_MAP:
		PART(t->u.map.key);
		PART(t->u.map.value);
		break;
	case CM_OWN:
	case CM_BORROW:
		PART(t->u.handle.resource);
		break;
	case CM_TUPLE:
		for (uint32_t i = 0; i < t->u.tuple.n; i++)
			PART(t->u.tuple.elems[i]);
		break;
	case CM_RECORD:
	case CM_VARIANT:
		for (uint32_t i = 0; i < t->u.record.n; i++)
			PART(t->u.record.fields[i].type);
		break;
	case CM_FUNC:
		for (uint32_t i = 0; i < t->u.func.nparams; i++)
			PART(t->u.func.params[i].type);
		PART(t->u.func.result);
		break;
	case CM_INSTANCE:
		if (register_instance(
			    x->s, x->is_import ? &x->s->imp : &x->s->exp, t, 0))
			return -1;
		for (uint32_t i = 0; i < t->u.comp.nexports; i++) {
			if (ext_ok(x, &t->u.comp.exports[i].type, ok))
				return -1;
			if (!*ok)
				goto out;
		}
		break;
	default:
		break;
	}
#undef PART
out:
	x->depth--;
	return 0;
}

static int ext_ok(vis *x, const cm_externtype *e, bool *ok)
{
	*ok = true;
	switch (e->sort) {
	case CM_SORT_FUNC:
	case CM_SORT_TYPE:
	case CM_SORT_INSTANCE:
		return def_ok(x, e->type, ok);
	case CM_SORT_VALUE:
		return named_ok(x, e->type, ok);
	default:
		return 0;
	}
}

int cm_check_visible(scope *s, const cm_externtype *e, bool is_import,
		     size_t offset)
{
	vis x;
	bool ok;
	static const char *const what[CM_NSORTS] = {
		[CM_SORT_CORE_MODULE] = "module",
		[CM_SORT_FUNC] = "func",
		[CM_SORT_VALUE] = "value",
		[CM_SORT_TYPE] = "type",
		[CM_SORT_COMPONENT] = "component",
		[CM_SORT_INSTANCE] = "instance",
	};

	memset(&x, 0, sizeof x);
	x.s = s;
	x.is_import = is_import;
	if (ext_ok(&x, e, &ok))
		return -1;
	if (!ok)
		return cm_fail(s->v, offset, "%s not valid to be used as %s",
			       what[e->sort] ? what[e->sort] : "item",
			       is_import ? "import" : "export");
	return 0;
}
