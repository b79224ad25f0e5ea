/*
 * decode.c - component binary -> raw tree (see decode.h for the contract).
 *
 * Every leading byte of every production is checked here, with
 * wasmparser's message texts ("invalid leading byte (0x62) for component
 * defined type"), because the suite's assert_malformed commands expect a
 * decode failure for exactly these.  Recursion (nested components,
 * component/instance types inside types) is bounded by DECODE_MAX_DEPTH so
 * hostile nesting cannot exhaust the C stack.
 *
 * Allocations sized by a guest or a client (issue 18 audit): every
 * item, vector and name is in the load's arena (component.c: bounded by
 * the component's length); a count or length above the bytes left is
 * malformed (read_count, the name and section readers).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component/component.h"
#include "component/decode.h"
#include "wasm/reader.h"

#define DECODE_MAX_DEPTH 100
#define EOF_MSG		 "unexpected end-of-file"

typedef struct rd {
	wasm_reader r;
	cm_arena *a;
	unsigned depth;
	raw_component *top; /* for freeing modules on failure */
} rd;

static int fail(rd *d, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(rd *d, size_t off, const char *fmt, ...)
{
	va_list ap;
	char buf[WASM_ERROR_MSG_MAX];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return wasm_error_set(d->r.err, WASM_ERR_MALFORMED, off, "%s", buf);
}

static int oom(rd *d)
{
	return wasm_error_set(d->r.err, WASM_ERR_RESOURCE, d->r.pos,
			      "out of memory");
}

static int bad_byte(rd *d, size_t off, uint8_t b, const char *what)
{
	return fail(d, off, "invalid leading byte (0x%x) for %s", b, what);
}

static int u8(rd *d, uint8_t *b)
{
	return wasm_read_u8(&d->r, b);
}

static int u32(rd *d, uint32_t *v)
{
	return wasm_read_u32(&d->r, v);
}

/* A vector count: each element takes at least one byte. */
static int count(rd *d, uint32_t *n)
{
	size_t off = d->r.pos;

	if (u32(d, n))
		return -1;
	if (*n > wasm_reader_remaining(&d->r))
		return fail(d, off, EOF_MSG);
	return 0;
}

static void *array(rd *d, uint32_t n, size_t size)
{
	void *p = cm_arena_array(d->a, n ? n : 1, size);

	if (p == NULL)
		oom(d);
	return p;
}

static int name(rd *d, cm_str *out)
{
	size_t off;
	uint32_t len;
	const uint8_t *p;

	if (u32(d, &len))
		return -1;
	off = d->r.pos;
	if (len > wasm_reader_remaining(&d->r))
		return fail(d, off, EOF_MSG);
	p = d->r.bytes + off;
	if (!wasm_utf8_valid(p, len))
		return fail(d, off, "malformed UTF-8 encoding");
	d->r.pos += len;
	if (cm_arena_str(d->a, p, len, out))
		return oom(d);
	return 0;
}

static int boolean(rd *d, bool *v)
{
	size_t off = d->r.pos;
	uint8_t b;

	if (u8(d, &b))
		return -1;
	if (b > 1)
		return fail(d, off, "invalid boolean value");
	*v = b == 1;
	return 0;
}

/* ---- core pieces ----------------------------------------------------------
 */

static int core_valtype(rd *d, wasm_valtype *out)
{
	size_t off = d->r.pos;
	uint8_t b;
	int64_t ht;

	if (u8(d, &b))
		return -1;
	switch (b) {
	case WASM_I32:
	case WASM_I64:
	case WASM_F32:
	case WASM_F64:
	case WASM_V128:
	case WASM_FUNCREF:
	case WASM_EXTERNREF:
	case WASM_EXNREF:
		*out = b;
		return 0;
	case 0x63:
	case 0x64:
		if (wasm_read_s33(&d->r, &ht))
			return -1;
		if (b == 0x63 && ht == -0x10) {
			*out = WASM_FUNCREF;
			return 0;
		}
		if (b == 0x63 && ht == -0x11) {
			*out = WASM_EXTERNREF;
			return 0;
		}
		if (b == 0x63 && ht == -0x17) {
			*out = WASM_EXNREF;
			return 0;
		}
		return fail(d, off,
			    "typed references (function-references/gc) "
			    "are not supported");
	default:
		return bad_byte(d, off, b, "value type");
	}
}

static int core_reftype(rd *d, wasm_valtype *out)
{
	size_t off = d->r.pos;

	if (core_valtype(d, out))
		return -1;
	if (!wasm_valtype_is_ref(*out))
		return bad_byte(d, off, (uint8_t)*out, "reference type");
	return 0;
}

static int core_valtypes(rd *d, uint32_t *n, wasm_valtype **out)
{
	if (count(d, n))
		return -1;
	*out = array(d, *n, sizeof **out);
	if (*out == NULL)
		return -1;
	for (uint32_t i = 0; i < *n; i++)
		if (core_valtype(d, &(*out)[i]))
			return -1;
	return 0;
}

static int limits(rd *d, bool table, wasm_limits *l)
{
	size_t off = d->r.pos;
	uint8_t flags;

	if (u8(d, &flags))
		return -1;
	if (flags & ~(table ? 0x05 : 0x07))
		return bad_byte(d, off, flags, "limits");
	l->has_max = flags & 1;
	l->shared = flags & 2;
	l->is64 = flags & 4;
	if (wasm_read_u64(&d->r, &l->min))
		return -1;
	if (l->has_max && wasm_read_u64(&d->r, &l->max))
		return -1;
	return 0;
}

static int core_externtype(rd *d, raw_core_externtype *e)
{
	size_t off = d->r.pos;
	uint8_t b;

	if (u8(d, &b))
		return -1;
	switch (b) {
	case 0x00:
		e->kind = WASM_EXTERN_FUNC;
		return u32(d, &e->typeidx);
	case 0x01:
		e->kind = WASM_EXTERN_TABLE;
		if (core_reftype(d, &e->table.elem))
			return -1;
		return limits(d, true, &e->table.limits);
	case 0x02:
		e->kind = WASM_EXTERN_MEMORY;
		return limits(d, false, &e->memory.limits);
	case 0x03:
		e->kind = WASM_EXTERN_GLOBAL;
		if (core_valtype(d, &e->global.type) ||
		    boolean(d, &e->global.mut))
			return -1;
		return 0;
	case 0x04: {
		uint8_t attr;

		e->kind = WASM_EXTERN_TAG;
		off = d->r.pos;
		if (u8(d, &attr))
			return -1;
		if (attr != 0)
			return bad_byte(d, off, attr, "tag attribute");
		return u32(d, &e->typeidx);
	}
	default:
		return bad_byte(d, off, b, "external kind");
	}
}

static int core_type(rd *d, raw_core_type **out, bool in_module_type);

static int module_decl(rd *d, raw_module_decl *md)
{
	size_t off = d->r.pos;
	uint8_t b;

	md->offset = off;
	if (u8(d, &b))
		return -1;
	switch (b) {
	case 0x00:
		md->kind = RAW_MDECL_IMPORT;
		if (name(d, &md->module) || name(d, &md->name))
			return -1;
		return core_externtype(d, &md->ext);
	case 0x01:
		md->kind = RAW_MDECL_TYPE;
		return core_type(d, &md->type, true);
	case 0x02: {
		uint8_t s, t;

		md->kind = RAW_MDECL_ALIAS;
		off = d->r.pos;
		if (u8(d, &s))
			return -1;
		if (s != 0x10)
			return bad_byte(d, off, s, "outer alias kind");
		off = d->r.pos;
		if (u8(d, &t))
			return -1;
		if (t != 0x01)
			return bad_byte(d, off, t, "outer alias target");
		if (u32(d, &md->count) || u32(d, &md->index))
			return -1;
		return 0;
	}
	case 0x03:
		md->kind = RAW_MDECL_EXPORT;
		if (name(d, &md->name))
			return -1;
		return core_externtype(d, &md->ext);
	default:
		return bad_byte(d, off, b, "type definition");
	}
}

/* comptype: only function types are supported. */
static int comptype(rd *d, wasm_functype *f)
{
	size_t off = d->r.pos;
	uint8_t b;

	if (u8(d, &b))
		return -1;
	if (b == 0x5f || b == 0x5e)
		return fail(d, off,
			    "gc struct and array types are not supported");
	if (b != 0x60)
		return bad_byte(d, off, b, "core composite type");
	if (core_valtypes(d, &f->nparams, &f->params))
		return -1;
	return core_valtypes(d, &f->nresults, &f->results);
}

/* subtype: (0x50 | 0x4f) vec(typeidx) comptype | comptype; `sub` has
 * already been read when `prefixed`. */
static int subtype(rd *d, uint8_t b, wasm_functype *f)
{
	uint32_t n, idx;

	if (b == 0x50 || b == 0x4f) {
		d->r.pos++;
		if (count(d, &n))
			return -1;
		for (uint32_t i = 0; i < n; i++)
			if (u32(d, &idx))
				return -1;
	}
	return comptype(d, f);
}

static int core_type(rd *d, raw_core_type **out, bool in_module_type)
{
	size_t off = d->r.pos;
	raw_core_type *t;
	uint8_t b;

	if (wasm_peek_u8(&d->r, &b))
		return -1;
	t = cm_arena_alloc(d->a, sizeof *t);
	if (t == NULL)
		return oom(d);
	t->offset = off;
	*out = t;
	if (b == 0x50 && !in_module_type) {
		d->r.pos++;
		t->is_module = true;
		if (count(d, &t->ndecls))
			return -1;
		t->decls = array(d, t->ndecls, sizeof *t->decls);
		if (t->decls == NULL)
			return -1;
		for (uint32_t i = 0; i < t->ndecls; i++)
			if (module_decl(d, &t->decls[i]))
				return -1;
		return 0;
	}
	if (b == 0x00) {
		/* A non-final sub type must be prefixed by 00 here. */
		uint8_t b2;

		d->r.pos++;
		if (wasm_peek_u8(&d->r, &b2))
			return -1;
		if (b2 != 0x50)
			return bad_byte(d, d->r.pos, b2, "core type");
		b = b2;
	}
	if (b == 0x4e) {
		d->r.pos++;
		if (count(d, &t->nfuncs))
			return -1;
		t->funcs = array(d, t->nfuncs, sizeof *t->funcs);
		if (t->funcs == NULL)
			return -1;
		for (uint32_t i = 0; i < t->nfuncs; i++) {
			if (wasm_peek_u8(&d->r, &b))
				return -1;
			if (subtype(d, b, &t->funcs[i]))
				return -1;
		}
		return 0;
	}
	t->nfuncs = 1;
	t->funcs = array(d, 1, sizeof *t->funcs);
	if (t->funcs == NULL)
		return -1;
	if (b == 0x50 && in_module_type)
		return fail(d, off,
			    "invalid leading byte (0x50) for core type: "
			    "module types cannot be nested");
	return subtype(d, b, &t->funcs[0]);
}

/* ---- component pieces ------------------------------------------------------
 */

static bool is_primvaltype(uint8_t b)
{
	return (b >= 0x73 && b <= 0x7f) || b == 0x64;
}

static int valtype(rd *d, raw_valtype *out)
{
	size_t off = d->r.pos;
	uint8_t b;
	int64_t v;

	if (wasm_peek_u8(&d->r, &b))
		return -1;
	if (is_primvaltype(b)) {
		d->r.pos++;
		*out = RAW_PRIM | b;
		return 0;
	}
	if (wasm_read_s33(&d->r, &v))
		return -1;
	if (v < 0)
		return bad_byte(d, off, b, "component value type");
	*out = v > 0x7fffffff ? 0x7fffffffu : (uint32_t)v;
	return 0;
}

static int opt_valtype(rd *d, raw_valtype *out, const char *what)
{
	size_t off = d->r.pos;
	uint8_t b;

	if (u8(d, &b))
		return -1;
	if (b == 0) {
		*out = RAW_NONE;
		return 0;
	}
	if (b != 1)
		return bad_byte(d, off, b, what);
	return valtype(d, out);
}

static int fields(rd *d, uint32_t *n, raw_field **out, bool variant)
{
	if (count(d, n))
		return -1;
	*out = array(d, *n, sizeof **out);
	if (*out == NULL)
		return -1;
	for (uint32_t i = 0; i < *n; i++) {
		raw_field *f = &(*out)[i];

		f->offset = d->r.pos;
		if (name(d, &f->label))
			return -1;
		if (!variant) {
			if (valtype(d, &f->type))
				return -1;
			continue;
		}
		if (opt_valtype(d, &f->type, "optional value type"))
			return -1;
		size_t off = d->r.pos;
		uint8_t z;

		if (u8(d, &z))
			return -1;
		if (z != 0)
			return bad_byte(d, off, z, "zero byte required");
	}
	return 0;
}

static int labels(rd *d, raw_deftype *t)
{
	if (count(d, &t->u.labels.n))
		return -1;
	t->u.labels.labels = array(d, t->u.labels.n, sizeof(cm_str));
	t->u.labels.offsets = array(d, t->u.labels.n, sizeof(size_t));
	if (t->u.labels.labels == NULL || t->u.labels.offsets == NULL)
		return -1;
	for (uint32_t i = 0; i < t->u.labels.n; i++) {
		t->u.labels.offsets[i] = d->r.pos;
		if (name(d, &t->u.labels.labels[i]))
			return -1;
	}
	return 0;
}

/* resultlist: 00 valtype | 01 00 */
static int resultlist(rd *d, raw_valtype *out)
{
	size_t off = d->r.pos;
	uint8_t b;

	if (u8(d, &b))
		return -1;
	if (b == 0)
		return valtype(d, out);
	if (b != 1)
		return bad_byte(d, off, b, "component function results");
	off = d->r.pos;
	if (u8(d, &b))
		return -1;
	if (b != 0)
		return bad_byte(d, off, b, "number of results");
	*out = RAW_NONE;
	return 0;
}

/*
 * nameattributes: 00 name | 01 name | 02 name vec(attribute).  The
 * attributes are kept unparsed (each kind at most once).
 */
static int nameattributes(rd *d, cm_name *n)
{
	size_t off = d->r.pos;
	uint8_t b;
	uint32_t cnt;

	memset(n, 0, sizeof *n);
	if (u8(d, &b))
		return -1;
	if (b > 2)
		return bad_byte(d, off, b, "component name");
	if (name(d, &n->str))
		return -1;
	if (b != 2)
		return 0;
	if (count(d, &cnt))
		return -1;
	for (uint32_t i = 0; i < cnt; i++) {
		uint8_t k;

		off = d->r.pos;
		if (u8(d, &k))
			return -1;
		switch (k) {
		case 0x00:
			if (n->has_implements)
				return fail(d, off,
					    "duplicate 'implements' option "
					    "in name");
			n->has_implements = true;
			if (name(d, &n->implements))
				return -1;
			break;
		case 0x01:
			if (n->has_version_suffix)
				return fail(d, off,
					    "duplicate 'versionsuffix' option "
					    "in name");
			n->has_version_suffix = true;
			if (name(d, &n->version_suffix))
				return -1;
			break;
		case 0x02:
			if (n->has_external_id)
				return fail(d, off,
					    "duplicate 'external-id' option "
					    "in name");
			n->has_external_id = true;
			if (name(d, &n->external_id))
				return -1;
			break;
		default:
			return bad_byte(d, off, k, "name option");
		}
	}
	return 0;
}

static int externtype(rd *d, raw_externtype *e)
{
	size_t off = d->r.pos;
	uint8_t b, b2;

	memset(e, 0, sizeof *e);
	e->offset = off;
	if (u8(d, &b))
		return -1;
	e->code = b;
	switch (b) {
	case 0x00:
		off = d->r.pos;
		if (u8(d, &b2))
			return -1;
		if (b2 != 0x11)
			return bad_byte(d, off, b2, "component external kind");
		return u32(d, &e->index);
	case 0x01:
	case 0x04:
	case 0x05:
		return u32(d, &e->index);
	case 0x02:
		off = d->r.pos;
		if (u8(d, &b2))
			return -1;
		if (b2 == 0x00) {
			e->value_eq = true;
			return u32(d, &e->index);
		}
		if (b2 != 0x01)
			return bad_byte(d, off, b2, "value bound");
		return valtype(d, &e->valtype);
	case 0x03:
		off = d->r.pos;
		if (u8(d, &b2))
			return -1;
		if (b2 == 0x00) {
			e->bound_eq = true;
			return u32(d, &e->index);
		}
		if (b2 != 0x01)
			return bad_byte(d, off, b2, "type bound");
		return 0;
	default:
		return bad_byte(d, off, b, "component external kind");
	}
}

/* core:sort byte -> cm_sort, or -1. */
static int core_sort_of(uint8_t b)
{
	switch (b) {
	case 0x00:
		return CM_SORT_CORE_FUNC;
	case 0x01:
		return CM_SORT_CORE_TABLE;
	case 0x02:
		return CM_SORT_CORE_MEMORY;
	case 0x03:
		return CM_SORT_CORE_GLOBAL;
	case 0x04:
		return CM_SORT_CORE_TAG;
	case 0x10:
		return CM_SORT_CORE_TYPE;
	case 0x11:
		return CM_SORT_CORE_MODULE;
	case 0x12:
		return CM_SORT_CORE_INSTANCE;
	default:
		return -1;
	}
}

static int core_sort(rd *d, cm_sort *s)
{
	size_t off = d->r.pos;
	uint8_t b;
	int v;

	if (u8(d, &b))
		return -1;
	v = core_sort_of(b);
	if (v < 0)
		return bad_byte(d, off, b, "core sort");
	*s = (cm_sort)v;
	return 0;
}

/* Component sort from its first byte (and the core byte after 00). */
static int sort_from(rd *d, size_t off, uint8_t b, uint8_t core_b, cm_sort *s)
{
	int v;

	switch (b) {
	case 0x00:
		v = core_sort_of(core_b);
		if (v < 0)
			return bad_byte(d, off + 1, core_b, "core sort");
		*s = (cm_sort)v;
		return 0;
	case 0x01:
		*s = CM_SORT_FUNC;
		return 0;
	case 0x02:
		*s = CM_SORT_VALUE;
		return 0;
	case 0x03:
		*s = CM_SORT_TYPE;
		return 0;
	case 0x04:
		*s = CM_SORT_COMPONENT;
		return 0;
	case 0x05:
		*s = CM_SORT_INSTANCE;
		return 0;
	default:
		return bad_byte(d, off, b, "component external kind");
	}
}

static int sort(rd *d, cm_sort *s)
{
	size_t off = d->r.pos;
	uint8_t b, cb = 0;

	if (u8(d, &b))
		return -1;
	if (b == 0 && u8(d, &cb))
		return -1;
	return sort_from(d, off, b, cb, s);
}

static int alias(rd *d, cm_alias *al)
{
	size_t off = d->r.pos, toff;
	uint8_t b, cb = 0, t;

	memset(al, 0, sizeof *al);
	if (u8(d, &b))
		return -1;
	if (b == 0 && u8(d, &cb))
		return -1;
	toff = d->r.pos;
	if (u8(d, &t))
		return -1;
	switch (t) {
	case 0x00:
	case 0x01:
		if (sort_from(d, off, b, cb, &al->sort))
			return -1;
		al->kind = t == 0 ? CM_ALIAS_INSTANCE_EXPORT
				  : CM_ALIAS_CORE_INSTANCE_EXPORT;
		if (u32(d, &al->instance) || name(d, &al->name))
			return -1;
		return 0;
	case 0x02:
		/* Only these sorts can be aliased from outer scopes. */
		if (b == 0x00 && cb == 0x10)
			al->sort = CM_SORT_CORE_TYPE;
		else if (b == 0x00 && cb == 0x11)
			al->sort = CM_SORT_CORE_MODULE;
		else if (b == 0x03)
			al->sort = CM_SORT_TYPE;
		else if (b == 0x04)
			al->sort = CM_SORT_COMPONENT;
		else
			return bad_byte(d, b == 0 ? off + 1 : off,
					b == 0 ? cb : b,
					"component outer alias kind");
		al->kind = CM_ALIAS_OUTER;
		if (u32(d, &al->count) || u32(d, &al->index))
			return -1;
		return 0;
	default:
		return bad_byte(d, toff, t, "alias");
	}
}

static int deftype(rd *d, raw_deftype **out);

static int decls(rd *d, raw_deftype *t, bool component)
{
	if (count(d, &t->u.decls.n))
		return -1;
	t->u.decls.decls = array(d, t->u.decls.n, sizeof(raw_decl));
	if (t->u.decls.decls == NULL)
		return -1;
	for (uint32_t i = 0; i < t->u.decls.n; i++) {
		raw_decl *dc = &t->u.decls.decls[i];
		size_t off = d->r.pos;
		uint8_t b;

		dc->offset = off;
		if (u8(d, &b))
			return -1;
		switch (b) {
		case 0x00:
			dc->kind = RAW_DECL_CORE_TYPE;
			if (core_type(d, &dc->core_type, false))
				return -1;
			break;
		case 0x01:
			dc->kind = RAW_DECL_TYPE;
			if (deftype(d, &dc->type))
				return -1;
			break;
		case 0x02:
			dc->kind = RAW_DECL_ALIAS;
			if (alias(d, &dc->alias))
				return -1;
			break;
		case 0x03:
		case 0x04:
			if (b == 0x03 && !component)
				return bad_byte(d, off, b,
						"component or instance type "
						"declaration");
			dc->kind =
				b == 0x03 ? RAW_DECL_IMPORT : RAW_DECL_EXPORT;
			if (nameattributes(d, &dc->name) ||
			    externtype(d, &dc->ext))
				return -1;
			break;
		default:
			return bad_byte(d, off, b,
					"component or instance type "
					"declaration");
		}
	}
	return 0;
}

static int deftype(rd *d, raw_deftype **out)
{
	size_t off = d->r.pos;
	raw_deftype *t;
	uint8_t b;
	int rc;

	if (u8(d, &b))
		return -1;
	t = cm_arena_alloc(d->a, sizeof *t);
	if (t == NULL)
		return oom(d);
	t->code = b;
	t->offset = off;
	*out = t;
	if (is_primvaltype(b))
		return 0;
	switch (b) {
	case 0x72:
		return fields(d, &t->u.fields.n, &t->u.fields.fields, false);
	case 0x71:
		return fields(d, &t->u.fields.n, &t->u.fields.fields, true);
	case 0x70:
	case 0x6b:
		return valtype(d, &t->u.one.type);
	case 0x67:
		if (valtype(d, &t->u.one.type))
			return -1;
		return u32(d, &t->u.one.len);
	case 0x6f:
		if (count(d, &t->u.tuple.n))
			return -1;
		t->u.tuple.types = array(d, t->u.tuple.n, sizeof(raw_valtype));
		if (t->u.tuple.types == NULL)
			return -1;
		for (uint32_t i = 0; i < t->u.tuple.n; i++)
			if (valtype(d, &t->u.tuple.types[i]))
				return -1;
		return 0;
	case 0x6e:
	case 0x6d:
		return labels(d, t);
	case 0x6a:
		if (opt_valtype(d, &t->u.result.ok, "optional value type"))
			return -1;
		return opt_valtype(d, &t->u.result.err, "optional value type");
	case 0x69:
	case 0x68:
		return u32(d, &t->u.handle.index);
	case 0x66:
	case 0x65:
		return opt_valtype(d, &t->u.one.type, "optional value type");
	case 0x63:
		if (valtype(d, &t->u.map.key))
			return -1;
		return valtype(d, &t->u.map.value);
	case 0x40:
	case 0x43:
		if (fields(d, &t->u.func.nparams, &t->u.func.params, false))
			return -1;
		return resultlist(d, &t->u.func.result);
	case 0x41:
	case 0x42:
		if (++d->depth > DECODE_MAX_DEPTH)
			return fail(d, off, "type nesting is too deep");
		rc = decls(d, t, b == 0x41);
		d->depth--;
		return rc;
	case 0x3f: {
		bool has;

		if (core_valtype(d, &t->u.resource.rep))
			return -1;
		if (boolean(d, &has))
			return -1;
		t->u.resource.dtor = CM_NONE;
		if (has && u32(d, &t->u.resource.dtor))
			return -1;
		return 0;
	}
	default:
		return bad_byte(d, off, b, "component defined type");
	}
}

static int opts(rd *d, raw_canon *c)
{
	if (count(d, &c->nopts))
		return -1;
	c->opt_codes = array(d, c->nopts, 1);
	c->opt_args = array(d, c->nopts, sizeof(uint32_t));
	c->opt_offsets = array(d, c->nopts, sizeof(size_t));
	if (c->opt_codes == NULL || c->opt_args == NULL ||
	    c->opt_offsets == NULL)
		return -1;
	for (uint32_t i = 0; i < c->nopts; i++) {
		size_t off = d->r.pos;
		uint8_t b;

		c->opt_offsets[i] = off;
		if (u8(d, &b))
			return -1;
		c->opt_codes[i] = b;
		switch (b) {
		case 0x00:
		case 0x01:
		case 0x02:
		case 0x06:
			break;
		case 0x03:
		case 0x04:
		case 0x05:
		case 0x07:
			if (u32(d, &c->opt_args[i]))
				return -1;
			break;
		default:
			return bad_byte(d, off, b, "canonical option");
		}
	}
	return 0;
}

static int canon(rd *d, raw_canon *c)
{
	size_t off = d->r.pos;
	uint8_t b, b2;

	c->offset = off;
	c->index = CM_NONE;
	c->type_index = CM_NONE;
	c->table = CM_NONE;
	c->result = RAW_NONE;
	if (u8(d, &b))
		return -1;
	c->op = (cm_canon_op)b;
	switch (b) {
	case 0x00:
	case 0x01:
		off = d->r.pos;
		if (u8(d, &b2))
			return -1;
		if (b2 != 0x00)
			return bad_byte(d, off, b2,
					b == 0 ? "canonical function lift"
					       : "canonical function lower");
		if (u32(d, &c->index) || opts(d, c))
			return -1;
		if (b == 0x00)
			return u32(d, &c->type_index);
		return 0;
	case 0x02:
	case 0x03:
	case 0x04:
	case 0x0e:
	case 0x13:
	case 0x14:
	case 0x15:
	case 0x1a:
	case 0x1b:
		return u32(d, &c->index);
	case 0x05:
	case 0x0d:
	case 0x1e:
	case 0x1f:
	case 0x22:
	case 0x23:
	case 0x24:
	case 0x25:
	case 0x26:
	case 0x28:
		return 0;
	case 0x06:
	case 0x0c:
	case 0x29:
	case 0x2a:
	case 0x2b:
	case 0x2c:
	case 0x2d:
	case 0x42:
		return boolean(d, &c->flag);
	case 0x09:
		if (resultlist(d, &c->result))
			return -1;
		return opts(d, c);
	case 0x0a:
	case 0x0b:
		if (core_valtype(d, &c->valtype))
			return -1;
		return u32(d, &c->slot);
	case 0x0f:
	case 0x10:
	case 0x16:
	case 0x17:
		if (u32(d, &c->index))
			return -1;
		return opts(d, c);
	case 0x11:
	case 0x12:
	case 0x18:
	case 0x19:
		if (u32(d, &c->index))
			return -1;
		return boolean(d, &c->flag);
	case 0x1c:
	case 0x1d:
		return opts(d, c);
	case 0x20:
	case 0x21:
		if (boolean(d, &c->flag))
			return -1;
		return u32(d, &c->index);
	case 0x27:
		if (u32(d, &c->index))
			return -1;
		return u32(d, &c->table);
	case 0x40:
		if (boolean(d, &c->flag))
			return -1;
		return u32(d, &c->index);
	case 0x41:
		if (boolean(d, &c->flag) || u32(d, &c->index))
			return -1;
		return u32(d, &c->table);
	default:
		return bad_byte(d, off, b, "canonical function");
	}
}

/* ---- sections ---------------------------------------------------------------
 */

static raw_item *push_item(rd *d, raw_component *c, raw_item_kind k, size_t off)
{
	raw_item *it = cm_arena_push(d->a, (void **)&c->items, &c->nitems,
				     &c->cap, sizeof *it);

	if (it == NULL) {
		oom(d);
		return NULL;
	}
	it->kind = k;
	it->offset = off;
	return it;
}

static void *item_alloc(rd *d, size_t size)
{
	void *p = cm_arena_alloc(d->a, size);

	if (p == NULL)
		oom(d);
	return p;
}

static int component_body(rd *d, raw_component *c);

bool cm_is_component_header(const uint8_t *p, size_t len)
{
	return len >= 8 && !memcmp(p, "\0asm", 4) && p[4] == 0x0d &&
	       p[5] == 0x00 && p[6] == 0x01 && p[7] == 0x00;
}

/*
 * The preamble at d->r.pos.  `want_component`: what the context requires.
 */
static int preamble(rd *d, bool want_component)
{
	size_t off = d->r.pos;
	const uint8_t *p = d->r.bytes + off;
	size_t rem = wasm_reader_remaining(&d->r);
	uint16_t version, layer;

	if (rem < 4 || memcmp(p, "\0asm", 4) != 0) {
		if (rem < 4 && !memcmp(p, "\0asm", rem))
			return fail(d, off + rem, EOF_MSG);
		return fail(d, off,
			    "magic header not detected: bad magic "
			    "number");
	}
	if (rem < 8)
		return fail(d, off + rem, EOF_MSG);
	version = (uint16_t)(p[4] | p[5] << 8);
	layer = (uint16_t)(p[6] | p[7] << 8);
	if (layer == 0 && version == 1) {
		/* At the top, the binary as a whole: say what it is, and
		 * what to do with it (nested, the suite's words). */
		if (want_component && off == 0)
			return fail(d, off + 4, "%s", CM_CORE_MODULE_MSG);
		if (want_component)
			return fail(d, off + 4,
				    "expected a version header "
				    "for a component");
	} else if (layer == 1) {
		if (version != 0x0d)
			return fail(d, off + 4, "unknown binary version: 0x%x",
				    version);
		if (!want_component)
			return fail(d, off + 4,
				    "expected a version header "
				    "for a module");
	} else {
		return fail(d, off + 4, "unknown binary version: 0x%x",
			    version);
	}
	d->r.pos += 8;
	return 0;
}

static int core_module_section(rd *d, raw_component *c, size_t start,
			       size_t len)
{
	raw_item *it;
	wasm_error e;
	wasm_module *m;

	if (preamble(d, false))
		return -1;
	d->r.pos = start;
	if (wasm_decode(d->r.bytes + start, len, &m, &e)) {
		if (e.kind == WASM_ERR_RESOURCE)
			return wasm_error_set(d->r.err, e.kind, start, "%s",
					      e.msg);
		return fail(d,
			    e.offset == WASM_NO_OFFSET ? start
						       : start + e.offset,
			    "%s", e.msg);
	}
	it = push_item(d, c, RAW_CORE_MODULE, start);
	if (it == NULL) {
		wasm_module_free(m);
		return -1;
	}
	it->u.module = m;
	it->bytes = d->r.bytes + start;
	it->len = len;
	d->r.pos = start + len;
	return 0;
}

static int nested_component_section(rd *d, raw_component *c, size_t start)
{
	raw_item *it;
	raw_component *nc;
	int rc;

	if (++d->depth > DECODE_MAX_DEPTH)
		return fail(d, start, "component nesting is too deep");
	nc = item_alloc(d, sizeof *nc);
	if (nc == NULL)
		return -1;
	it = push_item(d, c, RAW_COMPONENT, start);
	if (it == NULL)
		return -1;
	it->u.component = nc;
	nc->offset = start;
	if (preamble(d, true))
		return -1;
	rc = component_body(d, nc);
	d->depth--;
	return rc;
}

static int instance_item(rd *d, raw_component *c, bool core)
{
	size_t off = d->r.pos;
	raw_instance *in = item_alloc(d, sizeof *in);
	raw_item *it;
	uint8_t b;

	if (in == NULL)
		return -1;
	in->core = core;
	in->offset = off;
	if (u8(d, &b))
		return -1;
	if (b > 1)
		return bad_byte(d, off, b, core ? "core instance" : "instance");
	in->kind = b == 0 ? CM_INSTANTIATE : CM_FROM_EXPORTS;
	if (b == 0 && u32(d, &in->index))
		return -1;
	if (count(d, &in->nargs))
		return -1;
	in->args = array(d, in->nargs, sizeof *in->args);
	if (in->args == NULL)
		return -1;
	for (uint32_t i = 0; i < in->nargs; i++) {
		raw_instance_arg *a = &in->args[i];

		a->offset = d->r.pos;
		if (!core && b == 1) {
			if (nameattributes(d, &a->name))
				return -1;
		} else if (name(d, &a->name.str)) {
			return -1;
		}
		if (core && b == 0) {
			size_t koff = d->r.pos;
			uint8_t k;

			if (u8(d, &k))
				return -1;
			if (k != 0x12)
				return bad_byte(d, koff, k,
						"instantiation arg kind");
			a->sort = CM_SORT_CORE_INSTANCE;
		} else if (core) {
			if (core_sort(d, &a->sort))
				return -1;
		} else if (sort(d, &a->sort)) {
			return -1;
		}
		if (u32(d, &a->index))
			return -1;
	}
	it = push_item(d, c, core ? RAW_CORE_INSTANCE : RAW_INSTANCE, off);
	if (it == NULL)
		return -1;
	it->u.instance = in;
	return 0;
}

static int section_items(rd *d, raw_component *c, uint8_t id)
{
	uint32_t n;

	if (count(d, &n))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		size_t off = d->r.pos;
		raw_item *it;

		switch (id) {
		case 2:
		case 5:
			if (instance_item(d, c, id == 2))
				return -1;
			break;
		case 3: {
			raw_core_type *t;

			if (core_type(d, &t, false))
				return -1;
			if ((it = push_item(d, c, RAW_CORE_TYPE, off)) == NULL)
				return -1;
			it->u.core_type = t;
			break;
		}
		case 6: {
			raw_alias *al = item_alloc(d, sizeof *al);

			if (al == NULL || alias(d, &al->alias))
				return -1;
			al->offset = off;
			if ((it = push_item(d, c, RAW_ALIAS, off)) == NULL)
				return -1;
			it->u.alias = al;
			break;
		}
		case 7: {
			raw_deftype *t;

			if (deftype(d, &t))
				return -1;
			if ((it = push_item(d, c, RAW_TYPE, off)) == NULL)
				return -1;
			it->u.type = t;
			break;
		}
		case 8: {
			raw_canon *cn = item_alloc(d, sizeof *cn);

			if (cn == NULL || canon(d, cn))
				return -1;
			if ((it = push_item(d, c, RAW_CANON, off)) == NULL)
				return -1;
			it->u.canon = cn;
			break;
		}
		case 10: {
			raw_import *im = item_alloc(d, sizeof *im);

			if (im == NULL)
				return -1;
			im->offset = off;
			if (nameattributes(d, &im->name) ||
			    externtype(d, &im->ext))
				return -1;
			if ((it = push_item(d, c, RAW_IMPORT, off)) == NULL)
				return -1;
			it->u.import = im;
			break;
		}
		case 11: {
			raw_export *ex = item_alloc(d, sizeof *ex);
			size_t boff;
			uint8_t b;

			if (ex == NULL)
				return -1;
			ex->offset = off;
			if (nameattributes(d, &ex->name) ||
			    sort(d, &ex->sort) || u32(d, &ex->index))
				return -1;
			boff = d->r.pos;
			if (u8(d, &b))
				return -1;
			if (b > 1)
				return bad_byte(d, boff, b,
						"optional component export "
						"type");
			ex->has_type = b == 1;
			if (b == 1 && externtype(d, &ex->ext))
				return -1;
			if ((it = push_item(d, c, RAW_EXPORT, off)) == NULL)
				return -1;
			it->u.export = ex;
			break;
		}
		case 12: {
			raw_value *v = item_alloc(d, sizeof *v);
			size_t voff;

			if (v == NULL)
				return -1;
			v->offset = off;
			if (valtype(d, &v->type) || u32(d, &v->len))
				return -1;
			voff = d->r.pos;
			if (v->len > wasm_reader_remaining(&d->r))
				return fail(d, voff, EOF_MSG);
			v->bytes = d->r.bytes + voff;
			d->r.pos += v->len;
			if ((it = push_item(d, c, RAW_VALUE, off)) == NULL)
				return -1;
			it->u.value = v;
			break;
		}
		default:
			return fail(d, off, "malformed section id");
		}
	}
	return 0;
}

static int start_section(rd *d, raw_component *c, size_t off)
{
	cm_start *s;
	raw_item *it;

	/*
	 * wasmparser's rule (and wasm-tools' tests): a component has one
	 * start function at most, as a core module has one start section.
	 */
	if (c->has_start)
		return fail(d, off,
			    "component cannot have more than one start "
			    "function");
	c->has_start = true;
	s = item_alloc(d, sizeof *s);
	if (s == NULL)
		return -1;
	if (u32(d, &s->func) || count(d, &s->nargs))
		return -1;
	s->args = array(d, s->nargs, sizeof *s->args);
	if (s->args == NULL)
		return -1;
	for (uint32_t i = 0; i < s->nargs; i++)
		if (u32(d, &s->args[i]))
			return -1;
	if (u32(d, &s->nresults))
		return -1;
	it = push_item(d, c, RAW_START, off);
	if (it == NULL)
		return -1;
	it->u.start = s;
	return 0;
}

/* Sections until the reader's end. */
static int component_body(rd *d, raw_component *c)
{
	while (!wasm_reader_at_end(&d->r)) {
		size_t off = d->r.pos, start, end_saved;
		uint8_t id;
		uint32_t size;
		int rc;

		if (u8(d, &id))
			return -1;
		if (id > 12)
			return fail(d, off, "malformed section id");
		if (u32(d, &size))
			return -1;
		start = d->r.pos;
		if (size > wasm_reader_remaining(&d->r))
			return fail(d, start, EOF_MSG);
		end_saved = d->r.end;
		d->r.end = start + size;
		switch (id) {
		case 0: {
			cm_str nm;

			rc = name(d, &nm);
			d->r.pos = d->r.end;
			break;
		}
		case 1:
			rc = core_module_section(d, c, start, size);
			break;
		case 4:
			rc = nested_component_section(d, c, start);
			break;
		case 9:
			rc = start_section(d, c, start);
			break;
		default:
			rc = section_items(d, c, id);
			break;
		}
		if (rc)
			return -1;
		if (d->r.pos != d->r.end)
			return fail(d, d->r.pos,
				    "unexpected content in the %s section",
				    id == 4 ? "component" : "component-level");
		d->r.end = end_saved;
	}
	return 0;
}

static void free_modules(raw_component *c)
{
	for (uint32_t i = 0; i < c->nitems; i++) {
		raw_item *it = &c->items[i];

		if (it->kind == RAW_CORE_MODULE && it->u.module != NULL) {
			wasm_module_free(it->u.module);
			it->u.module = NULL;
		} else if (it->kind == RAW_COMPONENT && it->u.component) {
			free_modules(it->u.component);
		}
	}
}

void cm_raw_free_modules(raw_component *c)
{
	if (c != NULL)
		free_modules(c);
}

int cm_decode(cm_arena *a, const uint8_t *bytes, size_t len,
	      raw_component **out, wasm_error *err)
{
	rd d;
	raw_component *c;

	memset(&d, 0, sizeof d);
	wasm_reader_init(&d.r, bytes, len, err);
	d.r.end_msg = EOF_MSG;
	d.a = a;
	c = cm_arena_alloc(a, sizeof *c);
	if (c == NULL)
		return oom(&d);
	d.top = c;
	if (preamble(&d, true) || component_body(&d, c)) {
		free_modules(c);
		return -1;
	}
	*out = c;
	return 0;
}
