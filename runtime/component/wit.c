/*
 * wit.c - the WIT rendering of a component's imports and exports (see
 * wit.h for the shape of the output).
 *
 * Contract: read-only over a loaded component; every allocation is
 * checked (an allocation failure makes the whole call return NULL).
 * Names of types are found by identity: the node an import/export (or an
 * instance type's export) introduced carries the name the guest gave it;
 * resources are also found through their canonical node.
 *
 * Allocations sized by a guest or a client (issue 18 audit): the
 * rendered text and its name table grow by doubling with the output, at
 * most CM_MAX_TYPE_SIZE per rendered type, per import and export of a
 * loaded component.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component/internal.h"
#include "component/wit.h"

typedef struct sbuf {
	char *p;
	size_t n, cap;
	bool failed;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (b->failed)
		return;
	for (;;) {
		size_t room = b->cap - b->n;

		va_start(ap, fmt);
		w = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? room : 0, fmt,
			      ap);
		va_end(ap);
		if (w < 0) {
			b->failed = true;
			return;
		}
		if (b->p != NULL && (size_t)w < room) {
			b->n += (size_t)w;
			return;
		}
		size_t ncap = (b->cap ? b->cap * 2 : 1024) + (size_t)w;
		char *np = realloc(b->p, ncap);

		if (np == NULL) {
			b->failed = true;
			return;
		}
		b->p = np;
		b->cap = ncap;
	}
}

/* Names known while printing: a stack of scopes (world, interface). */
typedef struct names {
	const cm_type **nodes;
	const char **names;
	const char **origin; /* interface that declares it, or NULL */
	size_t n, cap;
	bool failed;
} names;

static void add_name(names *nm, const cm_type *t, const char *name,
		     const char *origin)
{
	if (nm->n == nm->cap) {
		size_t cap = nm->cap ? nm->cap * 2 : 64;
		const cm_type **a = realloc(nm->nodes, cap * sizeof *a);
		const char **b;
		const char **c;

		if (a == NULL) {
			nm->failed = true;
			return;
		}
		nm->nodes = a;
		b = realloc(nm->names, cap * sizeof *b);
		if (b == NULL) {
			nm->failed = true;
			return;
		}
		nm->names = b;
		c = realloc(nm->origin, cap * sizeof *c);
		if (c == NULL) {
			nm->failed = true;
			return;
		}
		nm->origin = c;
		nm->cap = cap;
	}
	nm->nodes[nm->n] = t;
	nm->names[nm->n] = name;
	nm->origin[nm->n] = origin;
	nm->n++;
}

/* By identity, most recent first (inner scopes shadow outer ones); for
 * resources then by canonical node. */
static long find_name(const names *nm, const cm_type *t)
{
	const cm_type *canon =
		t->kind == CM_RESOURCE ? cm_resource_canonical(t) : NULL;

	for (size_t i = nm->n; i-- > 0;)
		if (nm->nodes[i] == t)
			return (long)i;
	if (canon != NULL)
		for (size_t i = nm->n; i-- > 0;)
			if (nm->nodes[i]->kind == CM_RESOURCE &&
			    cm_resource_canonical(nm->nodes[i]) == canon)
				return (long)i;
	return -1;
}

/* The first interface that named this resource (where it is declared). */
static long find_declaring(const names *nm, const cm_type *t)
{
	const cm_type *canon = cm_resource_canonical(t);

	for (size_t i = 0; i < nm->n; i++)
		if (nm->nodes[i]->kind == CM_RESOURCE && nm->origin[i] &&
		    cm_resource_canonical(nm->nodes[i]) == canon)
			return (long)i;
	return -1;
}

typedef struct wctx {
	sbuf out;
	names nm;
	unsigned depth;
	const cm_type *self; /* the type being defined: not by its name */
} wctx;

static void type_ref(wctx *w, const cm_type *t);

/* WIT keywords used as names need a `%` prefix: "%s%s", ID(name). */
static bool is_kw(const char *name)
{
	static const char *const kw[] = {
		"as",	       "async",	  "bool",	   "borrow", "char",
		"constructor", "enum",	  "error-context", "export", "f32",
		"f64",	       "flags",	  "from",	   "func",   "future",
		"import",      "include", "interface",	   "list",   "map",
		"option",      "own",	  "package",	   "record", "resource",
		"result",      "s16",	  "s32",	   "s64",    "s8",
		"static",      "stream",  "string",	   "tuple",  "type",
		"u16",	       "u32",	  "u64",	   "u8",     "use",
		"variant",     "with",	  "world",
	};

	for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
		if (!strcmp(name, kw[i]))
			return true;
	return false;
}

#define ID(n) (is_kw(n) ? "%" : ""), (n)

static void named_or_inline(wctx *w, const cm_type *t)
{
	long i = t == w->self ? -1 : find_name(&w->nm, t);

	if (i >= 0) {
		put(&w->out, "%s%s", ID(w->nm.names[i]));
		return;
	}
	switch (t->kind) {
	case CM_RESOURCE:
		put(&w->out, "resource-%u",
		    cm_resource_canonical(t)->u.resource.id);
		return;
	case CM_RECORD:
		put(&w->out, "record { ");
		for (uint32_t k = 0; k < t->u.record.n; k++) {
			put(&w->out, "%s%s%s: ", k ? ", " : "",
			    ID(t->u.record.fields[k].label.ptr));
			type_ref(w, t->u.record.fields[k].type);
		}
		put(&w->out, " }");
		return;
	case CM_VARIANT:
		put(&w->out, "variant { ");
		for (uint32_t k = 0; k < t->u.variant.n; k++) {
			put(&w->out, "%s%s%s", k ? ", " : "",
			    ID(t->u.variant.fields[k].label.ptr));
			if (t->u.variant.fields[k].type) {
				put(&w->out, "(");
				type_ref(w, t->u.variant.fields[k].type);
				put(&w->out, ")");
			}
		}
		put(&w->out, " }");
		return;
	case CM_ENUM:
	case CM_FLAGS:
		put(&w->out, "%s { ", t->kind == CM_ENUM ? "enum" : "flags");
		for (uint32_t k = 0; k < t->u.enm.n; k++)
			put(&w->out, "%s%s%s", k ? ", " : "",
			    ID(t->u.enm.labels[k].ptr));
		put(&w->out, " }");
		return;
	default:
		put(&w->out, "%s", cm_type_kind_name(t->kind));
		return;
	}
}

static void type_ref(wctx *w, const cm_type *t)
{
	if (t == NULL) {
		put(&w->out, "_");
		return;
	}
	if (++w->depth > 2 * CM_MAX_TYPE_DEPTH) {
		put(&w->out, "...");
		w->depth--;
		return;
	}
	if (cm_type_is_prim(t)) {
		long i = t == cm_prim(t->kind) || t == w->self
				 ? -1
				 : find_name(&w->nm, t);

		if (i >= 0)
			put(&w->out, "%s%s", ID(w->nm.names[i]));
		else
			put(&w->out, "%s", cm_type_kind_name(t->kind));
		w->depth--;
		return;
	}
	switch (t->kind) {
	case CM_LIST:
		put(&w->out, "list<");
		type_ref(w, t->u.list.elem);
		if (t->u.list.len)
			put(&w->out, ", %u", t->u.list.len);
		put(&w->out, ">");
		break;
	case CM_TUPLE:
		put(&w->out, "tuple<");
		for (uint32_t i = 0; i < t->u.tuple.n; i++) {
			if (i)
				put(&w->out, ", ");
			type_ref(w, t->u.tuple.elems[i]);
		}
		put(&w->out, ">");
		break;
	case CM_OPTION:
		put(&w->out, "option<");
		type_ref(w, t->u.option.elem);
		put(&w->out, ">");
		break;
	case CM_RESULT:
		if (t->u.result.ok == NULL && t->u.result.err == NULL) {
			put(&w->out, "result");
			break;
		}
		put(&w->out, "result<");
		type_ref(w, t->u.result.ok);
		if (t->u.result.err) {
			put(&w->out, ", ");
			type_ref(w, t->u.result.err);
		}
		put(&w->out, ">");
		break;
	case CM_OWN:
		named_or_inline(w, t->u.handle.resource);
		break;
	case CM_BORROW:
		put(&w->out, "borrow<");
		named_or_inline(w, t->u.handle.resource);
		put(&w->out, ">");
		break;
	case CM_STREAM:
	case CM_FUTURE:
		put(&w->out, "%s", cm_type_kind_name(t->kind));
		if (t->u.stream.elem) {
			put(&w->out, "<");
			type_ref(w, t->u.stream.elem);
			put(&w->out, ">");
		}
		break;
	case CM_MAP:
		put(&w->out, "map<");
		type_ref(w, t->u.map.key);
		put(&w->out, ", ");
		type_ref(w, t->u.map.value);
		put(&w->out, ">");
		break;
	default:
		named_or_inline(w, t);
		break;
	}
	w->depth--;
}

/* `func(a: u32) -> string`; skip_self drops a method's `self`. */
static void func_sig(wctx *w, const cm_type *f, bool skip_self)
{
	put(&w->out, "%sfunc(", f->u.func.async ? "async " : "");
	for (uint32_t i = skip_self ? 1 : 0; i < f->u.func.nparams; i++) {
		put(&w->out, "%s%s%s: ", i > (skip_self ? 1u : 0u) ? ", " : "",
		    ID(f->u.func.params[i].label.ptr));
		type_ref(w, f->u.func.params[i].type);
	}
	put(&w->out, ")");
	if (f->u.func.result) {
		put(&w->out, " -> ");
		type_ref(w, f->u.func.result);
	}
}

static void indent(wctx *w, int n)
{
	put(&w->out, "%*s", 2 * n, "");
}

/* The definition of a named type (record, enum, ..., or an alias). */
static void type_def(wctx *w, const char *name, const cm_type *t, int ind)
{
	indent(w, ind);
	switch (t->kind) {
	case CM_RECORD:
		put(&w->out, "record %s%s {\n", ID(name));
		for (uint32_t i = 0; i < t->u.record.n; i++) {
			indent(w, ind + 1);
			put(&w->out,
			    "%s%s: ", ID(t->u.record.fields[i].label.ptr));
			type_ref(w, t->u.record.fields[i].type);
			put(&w->out, ",\n");
		}
		indent(w, ind);
		put(&w->out, "}\n");
		return;
	case CM_VARIANT:
		put(&w->out, "variant %s%s {\n", ID(name));
		for (uint32_t i = 0; i < t->u.variant.n; i++) {
			indent(w, ind + 1);
			put(&w->out, "%s%s",
			    ID(t->u.variant.fields[i].label.ptr));
			if (t->u.variant.fields[i].type) {
				put(&w->out, "(");
				type_ref(w, t->u.variant.fields[i].type);
				put(&w->out, ")");
			}
			put(&w->out, ",\n");
		}
		indent(w, ind);
		put(&w->out, "}\n");
		return;
	case CM_ENUM:
	case CM_FLAGS:
		put(&w->out, "%s %s%s {\n",
		    t->kind == CM_ENUM ? "enum" : "flags", ID(name));
		for (uint32_t i = 0; i < t->u.enm.n; i++) {
			indent(w, ind + 1);
			put(&w->out, "%s%s,\n", ID(t->u.enm.labels[i].ptr));
		}
		indent(w, ind);
		put(&w->out, "}\n");
		return;
	case CM_FUNC:
		put(&w->out, "type %s%s = ", ID(name));
		func_sig(w, t, false);
		put(&w->out, ";\n");
		return;
	case CM_COMPONENT:
	case CM_INSTANCE:
		put(&w->out, "// type %s = %s type\n", name,
		    cm_type_kind_name(t->kind));
		return;
	default:
		put(&w->out, "type %s%s = ", ID(name));
		w->self = t;
		type_ref(w, t);
		w->self = NULL;
		put(&w->out, ";\n");
		return;
	}
}

static bool is_resource_func(const cm_name *n, const char *res)
{
	return (n->kind == CM_NAME_CONSTRUCTOR || n->kind == CM_NAME_METHOD ||
		n->kind == CM_NAME_STATIC) &&
	       !strcmp(n->resource.ptr, res);
}

static void resource_def(wctx *w, const char *name, const cm_comptype *ct,
			 int ind)
{
	bool any = false;

	indent(w, ind);
	put(&w->out, "resource %s%s", ID(name));
	for (uint32_t i = 0; ct != NULL && i < ct->nexports; i++) {
		const cm_extern_decl *d = &ct->exports[i];

		if (d->type.sort != CM_SORT_FUNC ||
		    !is_resource_func(&d->name, name))
			continue;
		if (!any)
			put(&w->out, " {\n");
		any = true;
		indent(w, ind + 1);
		if (d->name.kind == CM_NAME_CONSTRUCTOR) {
			put(&w->out, "constructor(");
			for (uint32_t k = 0; k < d->type.type->u.func.nparams;
			     k++) {
				put(&w->out, "%s%s%s: ", k ? ", " : "",
				    ID(d->type.type->u.func.params[k]
					       .label.ptr));
				type_ref(w,
					 d->type.type->u.func.params[k].type);
			}
			put(&w->out, ");\n");
			continue;
		}
		put(&w->out, "%s%s: %s", ID(d->name.func.ptr),
		    d->name.kind == CM_NAME_STATIC ? "static " : "");
		func_sig(w, d->type.type, d->name.kind == CM_NAME_METHOD);
		put(&w->out, ";\n");
	}
	if (any) {
		indent(w, ind);
		put(&w->out, "}\n");
	} else {
		put(&w->out, ";\n");
	}
}

static void add_iface_names(wctx *w, const cm_comptype *ct, const char *self)
{
	for (uint32_t i = 0; i < ct->nexports; i++) {
		const cm_extern_decl *d = &ct->exports[i];

		if (d->type.sort == CM_SORT_TYPE)
			add_name(&w->nm, d->type.type, d->name.str.ptr, self);
	}
}

/* The body of an interface: its types, resources and functions. */
static void iface_body(wctx *w, const cm_comptype *ct, const char *self,
		       int ind)
{
	if (self == NULL)
		add_iface_names(w, ct, NULL);
	for (uint32_t i = 0; i < ct->nexports; i++) {
		const cm_extern_decl *d = &ct->exports[i];
		const cm_type *t = d->type.type;
		long j;

		if (d->type.sort != CM_SORT_TYPE)
			continue;
		if (t->kind != CM_RESOURCE) {
			type_def(w, d->name.str.ptr, t, ind);
			continue;
		}
		j = find_declaring(&w->nm, t);
		if (self != NULL && j >= 0 && strcmp(w->nm.origin[j], self)) {
			indent(w, ind);
			put(&w->out, "use %s.{%s", w->nm.origin[j],
			    w->nm.names[j]);
			if (strcmp(w->nm.names[j], d->name.str.ptr))
				put(&w->out, " as %s", d->name.str.ptr);
			put(&w->out, "};\n");
		} else {
			resource_def(w, d->name.str.ptr, ct, ind);
		}
	}
	for (uint32_t i = 0; i < ct->nexports; i++) {
		const cm_extern_decl *d = &ct->exports[i];

		switch (d->type.sort) {
		case CM_SORT_FUNC:
			/* resource functions are inside their resource */
			if (d->name.kind == CM_NAME_CONSTRUCTOR ||
			    d->name.kind == CM_NAME_METHOD ||
			    d->name.kind == CM_NAME_STATIC)
				break;
			indent(w, ind);
			put(&w->out, "%s%s: ", ID(d->name.str.ptr));
			func_sig(w, d->type.type, false);
			put(&w->out, ";\n");
			break;
		case CM_SORT_TYPE:
			break; /* printed above */
		default:
			indent(w, ind);
			put(&w->out, "// %s: %s\n", d->name.str.ptr,
			    cm_sort_name(d->type.sort));
			break;
		}
	}
}

static void world_item(wctx *w, const char *dir, const cm_extern_decl *d)
{
	const cm_externtype *e = &d->type;
	const char *n = d->name.str.ptr;

	switch (e->sort) {
	case CM_SORT_FUNC:
		indent(w, 1);
		put(&w->out, "%s %s%s: ", dir, ID(n));
		func_sig(w, e->type, false);
		put(&w->out, ";\n");
		break;
	case CM_SORT_INSTANCE:
		indent(w, 1);
		if (d->name.kind == CM_NAME_INTERFACE) {
			put(&w->out, "%s %s;\n", dir, n);
			break;
		}
		/* (implements "a:b/c"): a labelled instance of it */
		if (d->name.has_implements) {
			put(&w->out, "%s %s%s: %s;\n", dir, ID(n),
			    d->name.implements.ptr);
			break;
		}
		put(&w->out, "%s %s%s: interface {\n", dir, ID(n));
		iface_body(w, &e->type->u.comp, NULL, 2);
		indent(w, 1);
		put(&w->out, "}\n");
		break;
	case CM_SORT_TYPE:
		add_name(&w->nm, e->type, n, NULL);
		if (!strcmp(dir, "export")) {
			indent(w, 1);
			put(&w->out, "// exported type:\n");
		}
		if (e->type->kind == CM_RESOURCE)
			resource_def(w, n, NULL, 1);
		else
			type_def(w, n, e->type, 1);
		break;
	default:
		indent(w, 1);
		put(&w->out, "// %s %s: %s\n", dir, n, cm_sort_name(e->sort));
		break;
	}
}

/* "ns:pkg/iface@v" -> its parts for the interface block. */
static void iface_block(wctx *w, const char *dir, const cm_extern_decl *d)
{
	const cm_name *n = &d->name;

	put(&w->out, "\n// %s %s\n", dir, n->str.ptr);
	put(&w->out, "// package %s:%s%s%s\n", n->ns.ptr, n->pkg.ptr,
	    n->version.len ? "@" : "", n->version.ptr ? n->version.ptr : "");
	put(&w->out, "interface %s {\n", n->iface.ptr);
	iface_body(w, &d->type.type->u.comp, n->str.ptr, 1);
	put(&w->out, "}\n");
}

char *cm_wit_world(const cm_component *c, const char *world_name)
{
	wctx w;
	const cm_comptype *ct = &c->type->u.comp;

	memset(&w, 0, sizeof w);
	/* Interface types first: world items may refer to them. */
	for (uint32_t i = 0; i < ct->nimports; i++)
		if (ct->imports[i].type.sort == CM_SORT_INSTANCE &&
		    ct->imports[i].name.kind == CM_NAME_INTERFACE)
			add_iface_names(&w, &ct->imports[i].type.type->u.comp,
					ct->imports[i].name.str.ptr);
	for (uint32_t i = 0; i < ct->nexports; i++)
		if (ct->exports[i].type.sort == CM_SORT_INSTANCE &&
		    ct->exports[i].name.kind == CM_NAME_INTERFACE)
			add_iface_names(&w, &ct->exports[i].type.type->u.comp,
					ct->exports[i].name.str.ptr);
	put(&w.out, "world %s {\n", world_name ? world_name : "root");
	for (uint32_t i = 0; i < ct->nimports; i++)
		world_item(&w, "import", &ct->imports[i]);
	for (uint32_t i = 0; i < ct->nexports; i++)
		world_item(&w, "export", &ct->exports[i]);
	put(&w.out, "}\n");
	for (uint32_t i = 0; i < ct->nimports; i++)
		if (ct->imports[i].type.sort == CM_SORT_INSTANCE &&
		    ct->imports[i].name.kind == CM_NAME_INTERFACE)
			iface_block(&w, "import", &ct->imports[i]);
	for (uint32_t i = 0; i < ct->nexports; i++)
		if (ct->exports[i].type.sort == CM_SORT_INSTANCE &&
		    ct->exports[i].name.kind == CM_NAME_INTERFACE)
			iface_block(&w, "export", &ct->exports[i]);
	free(w.nm.nodes);
	free(w.nm.names);
	free(w.nm.origin);
	if (w.out.failed || w.nm.failed) {
		free(w.out.p);
		return NULL;
	}
	return w.out.p;
}
