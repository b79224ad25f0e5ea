/*
 * linker.c - what the host provides for a root component's imports:
 * host functions (bound to the import's declared function type), host
 * resource types, and whole instances of other components.
 *
 * Contract (instance.h): definitions are keyed by (instance name or NULL,
 * item name); the linker owns copies of the names and its host resource
 * types (also those of replaced definitions), and must outlive the
 * instances made with it.  Resolution walks
 * the import's declared type: an imported instance is built from the
 * host's definitions of each of its exports, or is another component
 * instance's export table (checked to have every declared export with
 * the right sort).  Anything missing is a LINK error naming the import,
 * e.g. "component import `wasi:cli/stdout@0.2.0` needs function
 * `get-stdout`, which is not provided" - unless the import's name begins
 * with the fallback's prefix (cm_linker_define_fallback): then a missing
 * function is bound to the fallback's function and a missing resource
 * type gets a host type of its own, in the store's arena (one per
 * resource the import declares: the component's length), listed in the
 * store (fallback_rts), whose reps snapshots write as plain numbers (the
 * fallback's reps stand for no host state).
 *
 * Allocations sized by a guest or a client (issue 18 audit): none
 * from a guest: names, definitions and resource types are what the
 * embedder defines; host_func and host_instance put one object per
 * import resolved into the store's arena (the component's imports).
 */
#include <stdlib.h>
#include <string.h>

#include "component/arena.h"
#include "run/rt.h"

typedef enum def_kind {
	DEF_FUNC,
	DEF_RESOURCE,
	DEF_INSTANCE,
	DEF_TYPES, /* an interface of value types: name "" marks it */
} def_kind;

typedef struct linker_def {
	def_kind kind;
	char *instance; /* NULL: top level */
	char *name;
	cm_host_fn fn;
	void *env;
	cabi_resource_type *rt;
	cm_component_instance *inst;
} linker_def;

struct cm_linker {
	linker_def *defs;
	uint32_t n, cap;
	/* cm_linker_define_fallback: NULL prefix when none */
	char *fallback_prefix;
	cm_host_fn fallback_fn;
	void *fallback_env;
	/* resource types of replaced definitions: instances may use them */
	cabi_resource_type **old_rts;
	uint32_t nold, old_cap;
};

cm_linker *cm_linker_new(void)
{
	return calloc(1, sizeof(cm_linker));
}

void cm_linker_free(cm_linker *l)
{
	if (l == NULL)
		return;
	for (uint32_t i = 0; i < l->n; i++) {
		free(l->defs[i].instance);
		free(l->defs[i].name);
		free(l->defs[i].rt);
	}
	free(l->defs);
	for (uint32_t i = 0; i < l->nold; i++)
		free(l->old_rts[i]);
	free(l->old_rts);
	free(l->fallback_prefix);
	free(l);
}

static bool same(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && !strcmp(a, b);
}

static linker_def *find(const cm_linker *l, const char *instance,
			const char *name)
{
	if (l == NULL)
		return NULL;
	for (uint32_t i = 0; i < l->n; i++)
		if (same(l->defs[i].instance, instance) &&
		    !strcmp(l->defs[i].name, name))
			return &l->defs[i];
	return NULL;
}

/* A new or replaced definition slot with its names set; NULL on OOM. */
static linker_def *slot(cm_linker *l, const char *instance, const char *name)
{
	linker_def *d = find(l, instance, name);

	if (d != NULL) {
		if (d->rt != NULL) {
			if (l->nold == l->old_cap) {
				uint32_t cap = l->old_cap ? 2 * l->old_cap : 8;
				cabi_resource_type **v =
					realloc(l->old_rts, cap * sizeof *v);

				if (v == NULL)
					return NULL;
				l->old_rts = v;
				l->old_cap = cap;
			}
			l->old_rts[l->nold++] = d->rt;
			d->rt = NULL;
		}
		return d;
	}
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 16;
		linker_def *v = realloc(l->defs, cap * sizeof *v);

		if (v == NULL)
			return NULL;
		l->defs = v;
		l->cap = cap;
	}
	d = &l->defs[l->n];
	memset(d, 0, sizeof *d);
	d->name = strdup(name);
	d->instance = instance ? strdup(instance) : NULL;
	if (d->name == NULL || (instance != NULL && d->instance == NULL)) {
		free(d->name);
		free(d->instance);
		return NULL;
	}
	l->n++;
	return d;
}

int cm_linker_define_func(cm_linker *l, const char *instance, const char *name,
			  cm_host_fn fn, void *env)
{
	linker_def *d = slot(l, instance, name);

	if (d == NULL)
		return -1;
	d->kind = DEF_FUNC;
	d->fn = fn;
	d->env = env;
	return 0;
}

const cabi_resource_type *
cm_linker_define_resource(cm_linker *l, const char *instance, const char *name,
			  void (*dtor)(void *env, uint64_t rep), void *env)
{
	cabi_resource_type *rt = calloc(1, sizeof *rt);
	linker_def *d;

	if (rt == NULL)
		return NULL;
	d = slot(l, instance, name);
	if (d == NULL) {
		free(rt);
		return NULL;
	}
	d->kind = DEF_RESOURCE;
	rt->host_dtor = dtor;
	rt->host_env = env;
	rt->name = d->name;
	d->rt = rt;
	return rt;
}

int cm_linker_define_types(cm_linker *l, const char *instance)
{
	/* no export is named "": the entry only makes `instance` known */
	linker_def *d = slot(l, instance, "");

	if (d == NULL)
		return -1;
	d->kind = DEF_TYPES;
	return 0;
}

int cm_linker_define_instance(cm_linker *l, const char *name,
			      cm_component_instance *inst)
{
	linker_def *d = slot(l, NULL, name);

	if (d == NULL)
		return -1;
	d->kind = DEF_INSTANCE;
	d->inst = inst;
	return 0;
}

int cm_linker_define_fallback(cm_linker *l, const char *prefix, cm_host_fn fn,
			      void *env)
{
	char *p = strdup(prefix);

	if (p == NULL)
		return -1;
	free(l->fallback_prefix);
	l->fallback_prefix = p;
	l->fallback_fn = fn;
	l->fallback_env = env;
	return 0;
}

/* ---- resolution ---------------------------------------------------------- */

static bool falls_back(const cm_linker *l, const char *instance)
{
	return l != NULL && l->fallback_prefix != NULL && instance != NULL &&
	       strncmp(instance, l->fallback_prefix,
		       strlen(l->fallback_prefix)) == 0;
}

static int host_func(cm_component_instance *inst, const linker_def *d,
		     const cm_type *ft, cm_rtval *out, cm_error *err)
{
	cm_func *f = cm_arena_alloc(inst->store->arena, sizeof *f);

	if (f == NULL)
		return cm_error_set(err, CM_ERR_NOMEM, "out of memory");
	f->kind = CM_FUNC_HOST;
	f->type = ft;
	f->fn = d->fn;
	f->env = d->env;
	f->name = d->name;
	f->instance = d->instance;
	out->func = f;
	return 0;
}

static int missing(cm_error *err, const cm_import *im, const char *what,
		   const char *name)
{
	return cm_error_set(err, CM_ERR_LINK,
			    "component import `%s` needs %s `%s`, which is "
			    "not provided",
			    im->name.str.ptr, what, name);
}

/* Another instance's exports: check the declared ones are there. */
static int check_instance(const cm_import *im, const cm_type *it,
			  const cm_rtinstance *ri, cm_error *err)
{
	for (uint32_t i = 0; i < it->u.comp.nexports; i++) {
		const cm_extern_decl *d = &it->u.comp.exports[i];
		const cm_rtexport *x = cm_rtinstance_find(ri, d->name.str.ptr,
							  d->name.str.len);

		if (x == NULL || x->sort != d->type.sort)
			return missing(err, im, cm_sort_name(d->type.sort),
				       d->name.str.ptr);
	}
	return 0;
}

/* The fallback's stand-in for a definition the linker lacks. */
static int fallback_func(const cm_linker *l, cm_component_instance *inst,
			 const cm_import *im, const cm_extern_decl *d,
			 cm_rtval *out, cm_error *err)
{
	linker_def fd;

	memset(&fd, 0, sizeof fd);
	fd.kind = DEF_FUNC;
	fd.fn = l->fallback_fn;
	fd.env = l->fallback_env;
	/* the component's own strings: it outlives its stores */
	fd.name = (char *)d->name.str.ptr;
	fd.instance = (char *)im->name.str.ptr;
	return host_func(inst, &fd, d->type.type, out, err);
}

/*
 * The store lists its fallback types in the order they are made (the
 * same order each time the same component is instantiated), and a
 * snapshot names each by its place there (snapshot_async.c).
 */
static const cabi_resource_type *
fallback_resource(cm_component_instance *inst, const cm_extern_decl *d)
{
	cm_store *s = inst->store;
	cabi_resource_type *rt = cm_arena_alloc(s->arena, sizeof *rt);

	if (rt == NULL)
		return NULL;
	memset(rt, 0, sizeof *rt);
	rt->name = d->name.str.ptr;
	if (s->nfallback_rts == s->fallback_rts_cap) {
		uint32_t cap = s->fallback_rts_cap ? 2 * s->fallback_rts_cap : 8;
		const cabi_resource_type **v =
			realloc(s->fallback_rts, cap * sizeof *v);

		if (v == NULL)
			return NULL;
		s->fallback_rts = v;
		s->fallback_rts_cap = cap;
	}
	s->fallback_rts[s->nfallback_rts++] = rt;
	rt->fallback = s->nfallback_rts;
	return rt;
}

static int host_instance(const cm_linker *l, cm_component_instance *inst,
			 const cm_import *im, const char *defined,
			 cm_rtval *out, cm_error *err)
{
	const cm_type *it = im->type.type;
	cm_rtinstance *ri = cm_arena_alloc(inst->store->arena, sizeof *ri);
	bool fb = falls_back(l, im->name.str.ptr);

	if (ri == NULL)
		return cm_error_set(err, CM_ERR_NOMEM, "out of memory");
	for (uint32_t i = 0; i < it->u.comp.nexports; i++) {
		const cm_extern_decl *d = &it->u.comp.exports[i];
		const linker_def *ld =
			defined ? find(l, defined, d->name.str.ptr) : NULL;
		cm_rtval v;

		memset(&v, 0, sizeof v);
		switch (d->type.sort) {
		case CM_SORT_FUNC:
			if ((ld == NULL || ld->kind != DEF_FUNC) && fb) {
				if (fallback_func(l, inst, im, d, &v, err))
					return -1;
				break;
			}
			if (ld == NULL || ld->kind != DEF_FUNC)
				return missing(err, im, "function",
					       d->name.str.ptr);
			if (host_func(inst, ld, d->type.type, &v, err))
				return -1;
			break;
		case CM_SORT_TYPE:
			/* a type equality of a value type: an entry with
			 * no value, so that aliases of it resolve */
			if (d->type.type == NULL ||
			    d->type.type->kind != CM_RESOURCE)
				break;
			/* `use` of another interface's resource: the type
			 * an earlier import already bound */
			if (d->type.type_eq &&
			    (v.rt = cm_rmap_lookup(inst, d->type.type)) != NULL)
				break;
			if ((ld == NULL || ld->kind != DEF_RESOURCE) && fb) {
				if ((v.rt = fallback_resource(inst, d)) == NULL)
					return cm_error_set(err, CM_ERR_NOMEM,
							    "out of memory");
				break;
			}
			if (ld == NULL || ld->kind != DEF_RESOURCE)
				return missing(err, im, "resource type",
					       d->name.str.ptr);
			v.rt = ld->rt;
			break;
		default:
			return missing(err, im, cm_sort_name(d->type.sort),
				       d->name.str.ptr);
		}
		if (cm_rtinstance_add(inst->store, ri, d->name.str,
				      d->type.sort, v))
			return cm_error_set(err, CM_ERR_NOMEM, "out of memory");
	}
	out->instance = ri;
	return 0;
}

/*
 * Semver-compatible instance lookup: "ns:pkg/iface@X.Y.Z" is served by
 * the host's definitions of the same interface at a compatible version
 * (same major; for 0.x the same minor; for 0.0.z the same patch), the
 * highest one when several are defined, as wasmtime's linker does.  An
 * exact name always wins; versions with pre-release or build suffixes
 * match exactly only.
 */
static bool parse_version(const char *v, unsigned long out[3])
{
	for (int i = 0; i < 3; i++) {
		char *end;

		if (*v < '0' || *v > '9')
			return false;
		out[i] = strtoul(v, &end, 10);
		v = end;
		if (i < 2 && *v++ != '.')
			return false;
	}
	return *v == '\0';
}

static bool version_compatible(const unsigned long a[3],
			       const unsigned long b[3])
{
	if (a[0] != b[0])
		return false;
	if (a[0] != 0)
		return true;
	if (a[1] != b[1])
		return false;
	return a[1] != 0 || a[2] == b[2];
}

static const char *compat_instance(const cm_linker *l, const char *name)
{
	const char *at = strrchr(name, '@'), *best = NULL;
	unsigned long want[3], have[3], top[3] = {0, 0, 0};
	size_t plen;

	for (uint32_t i = 0; l != NULL && i < l->n; i++)
		if (same(l->defs[i].instance, name))
			return name;
	if (l == NULL || at == NULL || !parse_version(at + 1, want))
		return NULL;
	plen = (size_t)(at - name) + 1;
	for (uint32_t i = 0; i < l->n; i++) {
		const char *in = l->defs[i].instance;

		if (in == NULL || strncmp(in, name, plen) ||
		    !parse_version(in + plen, have) ||
		    !version_compatible(want, have))
			continue;
		if (best == NULL || have[0] > top[0] ||
		    (have[0] == top[0] &&
		     (have[1] > top[1] ||
		      (have[1] == top[1] && have[2] > top[2])))) {
			best = in;
			memcpy(top, have, sizeof top);
		}
	}
	return best;
}

int cm_linker_resolve(const cm_linker *l, cm_component_instance *inst,
		      const cm_import *im, cm_rtval *out, cm_error *err)
{
	const char *name = im->name.str.ptr, *defined;
	const linker_def *d = find(l, NULL, name);

	switch (im->type.sort) {
	case CM_SORT_FUNC:
		if (d == NULL || d->kind != DEF_FUNC)
			break;
		return host_func(inst, d, im->type.type, out, err);
	case CM_SORT_INSTANCE:
		if (d != NULL && d->kind == DEF_INSTANCE) {
			if (check_instance(im, im->type.type, &d->inst->exports,
					   err))
				return -1;
			out->instance = &d->inst->exports;
			return 0;
		}
		defined = compat_instance(l, name);
		if (defined != NULL || falls_back(l, name))
			return host_instance(l, inst, im, defined, out, err);
		break;
	case CM_SORT_TYPE:
		if (im->type.type == NULL || im->type.type->kind != CM_RESOURCE)
			return 0;
		if (d == NULL || d->kind != DEF_RESOURCE)
			break;
		out->rt = d->rt;
		return 0;
	default:
		break;
	}
	return cm_error_set(err, CM_ERR_LINK,
			    "component import `%s` (%s) is not provided", name,
			    cm_sort_name(im->type.sort));
}
