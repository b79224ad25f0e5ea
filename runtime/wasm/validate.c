/*
 * validate.c - validation of a decoded module as a whole, and
 * wasm_module_load (decode + validate + compile).
 *
 * Contract: see validate.h.  Error texts are the spec's ("unknown
 * function 3", "type mismatch", "constant expression required",
 * "duplicate export name", ...), with the index after the reason where the
 * reference interpreter prints one.
 *
 * Order: the spec decodes a whole module before validating it, so a
 * malformed function body must win over a validation error elsewhere.
 * Function bodies are therefore compiled first (after the few checks they
 * depend on); when one is invalid, the later ones are still scanned for
 * an encoding error.  The rest of the module is checked afterwards.
 * Features: Wasm 2.0, multi-memory, memory64 and table64, extended
 * constant expressions, tail calls, exception handling (try_table, and
 * the legacy try/catch/catch_all/rethrow/delegate that LLVM and
 * Emscripten emit for C++ exceptions), SIMD
 * and relaxed SIMD, typed function references (subtyping:
 * wasm_valtype_sub).  GC is rejected at decoding ("GC not supported").
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - collect_refs, the compiled flags: one entry per function index,
 *    at most the module's byte length (decode.c's read_count).
 *  - the export-name check: one pointer per export, the same bound.
 *  Function bodies are validated by compile.c as they are compiled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasm/code.h"
#include "wasm/ops.h"
#include "wasm/reader.h"
#include "wasm/validate.h"
#include "wasm/wasm.h"

#define MAX_PAGES32 65536u
#define MAX_PAGES64 (1ull << 48)

static int inval(wasm_error *err, size_t off, const char *fmt, uint32_t x)
{
	return wasm_error_set(err, WASM_ERR_INVALID, off, fmt, x);
}

/* ---- typed references ---------------------------------------------------- */

/*
 * Type equivalence of two type indices.  Without GC every type is a
 * function type in a singleton recursion group, so the spec's
 * equivalence is structural, iso-recursively: two types are equal when
 * their value types are, a reference to the type itself matching only a
 * reference to the other type itself, and a reference to another
 * (earlier: decoding refuses later ones) type index matching an
 * equivalent one (type-equivalence.wast's "indirect" and "recursive"
 * modules).  The recursion goes down to earlier indices only, at most
 * TYPE_EQUAL_DEPTH deep and TYPE_EQUAL_WORK comparisons of type indices
 * for one question (a hostile module whose types each name the earlier
 * ones twice would take 2^n): past either, not equal (a type mismatch,
 * never a hang).
 */
#define TYPE_EQUAL_DEPTH 64
#define TYPE_EQUAL_WORK 4096

static bool typeidx_equal_at(const wasm_module *m, uint32_t a, uint32_t b,
			     unsigned depth, unsigned *work);

static bool valtype_equal(const wasm_module *m, wasm_valtype x, wasm_valtype y,
			  uint32_t a, uint32_t b, unsigned depth, unsigned *work)
{
	uint32_t hx, hy;

	if (!wasm_valtype_is_ref(x) || !wasm_valtype_is_ref(y))
		return x == y;
	hx = wasm_ref_heap(x);
	hy = wasm_ref_heap(y);
	if (hx == WASM_HEAP_TOP || hy == WASM_HEAP_TOP)
		return x == y;
	if ((x & ((1u << WASM_HEAP_SHIFT) - 1)) !=
	    (y & ((1u << WASM_HEAP_SHIFT) - 1)))
		return false; /* hierarchy or nullability */
	hx -= WASM_HEAP_IDX0;
	hy -= WASM_HEAP_IDX0;
	if (hx == a || hy == b)
		return hx == a && hy == b; /* self only matches self */
	return typeidx_equal_at(m, hx, hy, depth + 1, work);
}

static bool typeidx_equal_at(const wasm_module *m, uint32_t a, uint32_t b,
			     unsigned depth, unsigned *work)
{
	const wasm_functype *x, *y;

	if (a == b)
		return true;
	if (a >= m->ntypes || b >= m->ntypes || depth > TYPE_EQUAL_DEPTH ||
	    ++*work > TYPE_EQUAL_WORK)
		return false;
	x = &m->types[a];
	y = &m->types[b];
	if (x->nparams != y->nparams || x->nresults != y->nresults)
		return false;
	for (uint32_t i = 0; i < x->nparams; i++)
		if (!valtype_equal(m, x->params[i], y->params[i], a, b, depth,
				   work))
			return false;
	for (uint32_t i = 0; i < x->nresults; i++)
		if (!valtype_equal(m, x->results[i], y->results[i], a, b,
				   depth, work))
			return false;
	return true;
}

static bool typeidx_equal(const wasm_module *m, uint32_t a, uint32_t b)
{
	unsigned work = 0;

	return typeidx_equal_at(m, a, b, 0, &work);
}

const char *wasm_valtype_format(wasm_valtype t, char *buf, size_t size)
{
	uint32_t h;

	if (!wasm_valtype_is_ref(t) ||
	    (wasm_ref_nullable(t) && wasm_ref_heap(t) == WASM_HEAP_TOP))
		return wasm_valtype_name(t);
	h = wasm_ref_heap(t);
	if (h == WASM_HEAP_TOP)
		snprintf(buf, size, "(ref %s)",
			 (uint8_t)t == WASM_FUNCREF     ? "func"
			 : (uint8_t)t == WASM_EXTERNREF ? "extern"
							: "exn");
	else
		snprintf(buf, size, "(ref %s$%u)",
			 wasm_ref_nullable(t) ? "null " : "", h - WASM_HEAP_IDX0);
	return buf;
}

bool wasm_valtype_sub(const wasm_module *m, wasm_valtype a, wasm_valtype b)
{
	uint32_t ha, hb;

	if (a == b)
		return true;
	if (!wasm_valtype_is_ref(a) || (uint8_t)a != (uint8_t)b)
		return false;
	if (wasm_ref_nullable(a) && !wasm_ref_nullable(b))
		return false;
	ha = wasm_ref_heap(a);
	hb = wasm_ref_heap(b);
	if (ha == hb || hb == WASM_HEAP_TOP)
		return true;
	if (ha == WASM_HEAP_TOP)
		return false;
	return typeidx_equal(m, ha - WASM_HEAP_IDX0, hb - WASM_HEAP_IDX0);
}

int wasm_heaptype_ref(const wasm_module *m, int64_t ht, bool nullable,
		      size_t off, wasm_valtype *out, wasm_error *err)
{
	switch (ht) {
	case -0x10:
		*out = wasm_reftype(WASM_FUNCREF, nullable, WASM_HEAP_TOP);
		return 0;
	case -0x11:
		*out = wasm_reftype(WASM_EXTERNREF, nullable, WASM_HEAP_TOP);
		return 0;
	case -0x17:
		*out = wasm_reftype(WASM_EXNREF, nullable, WASM_HEAP_TOP);
		return 0;
	default:
		break;
	}
	if (ht < 0) {
		uint8_t b = (uint8_t)(ht & 0x7f);
		bool gc = (b >= 0x71 && b <= 0x74) || (b >= 0x6a && b <= 0x6e);

		return wasm_error_set(err, WASM_ERR_MALFORMED, off, "%s",
				      gc ? "malformed heap type: gc heap "
					   "types: GC not supported"
					 : "malformed heap type");
	}
	if ((uint64_t)ht >= m->ntypes)
		return inval(err, off, "unknown type %u",
			     ht > UINT32_MAX ? UINT32_MAX : (uint32_t)ht);
	*out = wasm_reftype(WASM_FUNCREF, nullable,
			    WASM_HEAP_IDX0 + (uint32_t)ht);
	return 0;
}

int wasm_valtype_check(const wasm_module *m, wasm_valtype t, size_t off,
		       wasm_error *err)
{
	uint32_t idx;

	if (wasm_ref_typeidx(t, &idx) && idx >= m->ntypes)
		return inval(err, off, "unknown type %u", idx);
	return 0;
}

static int check_valtypes(const wasm_module *m, const wasm_valtype *v,
			  uint32_t n, wasm_error *err)
{
	for (uint32_t i = 0; i < n; i++)
		if (wasm_valtype_check(m, v[i], WASM_NO_OFFSET, err))
			return -1;
	return 0;
}

/* ---- constant expressions ----------------------------------------------- */

int wasm_constexpr_validate(const wasm_module *m, const wasm_constexpr *ce,
			    wasm_valtype expect, uint32_t nglobals,
			    wasm_error *err)
{
	wasm_reader r;
	wasm_valtype st[64];
	uint32_t n = 0;

	wasm_reader_init(&r, ce->code - ce->offset, ce->offset + ce->len, err);
	r.pos = ce->offset;
	r.end_msg = WASM_MSG_UNEXPECTED_END_SECTION;
	for (;;) {
		size_t off = r.pos;
		wasm_valtype push = 0, pop = 0;
		uint8_t op;

		if (wasm_read_u8(&r, &op))
			return -1;
		switch (op) {
		case WASM_OP_end:
			if (n != 1 || !wasm_valtype_sub(m, st[0], expect))
				return wasm_error_set(err, WASM_ERR_INVALID,
						      off, "type mismatch");
			return 0;
		case WASM_OP_i32_const: {
			int32_t v;
			if (wasm_read_s32(&r, &v))
				return -1;
			push = WASM_I32;
			break;
		}
		case WASM_OP_i64_const: {
			int64_t v;
			if (wasm_read_s64(&r, &v))
				return -1;
			push = WASM_I64;
			break;
		}
		case WASM_OP_f32_const:
		case WASM_OP_f64_const: {
			const uint8_t *b;
			if (wasm_read_bytes(&r, op == WASM_OP_f32_const ? 4 : 8,
					    &b))
				return -1;
			push = op == WASM_OP_f32_const ? WASM_F32 : WASM_F64;
			break;
		}
		case WASM_OP_prefix_simd: {
			uint32_t sub;
			const uint8_t *b;
			if (wasm_read_u32(&r, &sub))
				return -1;
			if (sub != WASM_OP_FD_v128_const)
				return wasm_error_set(
					err, WASM_ERR_INVALID, off,
					"constant expression required");
			if (wasm_read_bytes(&r, 16, &b))
				return -1;
			push = WASM_V128;
			break;
		}
		case WASM_OP_ref_null: {
			int64_t ht;
			if (wasm_read_s33(&r, &ht))
				return -1;
			if (wasm_heaptype_ref(m, ht, true, off, &push, err))
				return -1;
			break;
		}
		case WASM_OP_ref_func: {
			uint32_t x;
			if (wasm_read_u32(&r, &x))
				return -1;
			if (x >= wasm_module_nfuncs(m))
				return inval(err, off, "unknown function %u",
					     x);
			/* ref.func $f has the exact type (ref $t) */
			push = wasm_reftype(WASM_FUNCREF, false,
					    WASM_HEAP_IDX0 +
						    wasm_module_func_typeidx(m,
									     x));
			break;
		}
		case WASM_OP_global_get: {
			uint32_t x;
			const wasm_globaltype *gt;
			if (wasm_read_u32(&r, &x))
				return -1;
			if (x >= nglobals)
				return inval(err, off, "unknown global %u", x);
			gt = wasm_module_global_type(m, x);
			if (gt->mut)
				return wasm_error_set(
					err, WASM_ERR_INVALID, off,
					"constant expression required");
			push = gt->type;
			break;
		}
		case WASM_OP_i32_add:
		case WASM_OP_i32_sub:
		case WASM_OP_i32_mul:
			pop = WASM_I32;
			break;
		case WASM_OP_i64_add:
		case WASM_OP_i64_sub:
		case WASM_OP_i64_mul:
			pop = WASM_I64;
			break;
		default:
			return wasm_error_set(err, WASM_ERR_INVALID, off,
					      "constant expression required");
		}
		if (pop) {
			if (n < 2 || st[n - 1] != pop || st[n - 2] != pop)
				return wasm_error_set(err, WASM_ERR_INVALID,
						      off, "type mismatch");
			n--;
			continue;
		}
		if (n == sizeof st / sizeof st[0])
			return wasm_error_set(err, WASM_ERR_INVALID, off,
					      "constant expression too deep");
		st[n++] = push;
	}
}

/* ---- C.refs ---------------------------------------------------------------
 */

/* Mark every ref.func of a constant expression (already decoded). */
static void refs_of_expr(const wasm_module *m, const wasm_constexpr *ce,
			 bool *refs)
{
	wasm_reader r;

	wasm_reader_init(&r, ce->code - ce->offset, ce->offset + ce->len, NULL);
	r.pos = ce->offset;
	while (r.pos < r.end) {
		uint8_t op;
		uint64_t v;
		const uint8_t *b;

		if (wasm_read_u8(&r, &op))
			return;
		switch (op) {
		case WASM_OP_ref_func:
			if (wasm_read_leb(&r, 32, false, &v))
				return;
			if (v < wasm_module_nfuncs(m))
				refs[v] = true;
			break;
		case WASM_OP_i32_const:
		case WASM_OP_i64_const:
		case WASM_OP_ref_null:
			if (wasm_read_leb(&r, 64, true, &v))
				return;
			break;
		case WASM_OP_global_get:
			if (wasm_read_leb(&r, 32, false, &v))
				return;
			break;
		case WASM_OP_f32_const:
		case WASM_OP_f64_const:
			if (wasm_read_bytes(&r, op == WASM_OP_f32_const ? 4 : 8,
					    &b))
				return;
			break;
		case WASM_OP_prefix_simd:
			if (wasm_read_leb(&r, 32, false, &v) ||
			    wasm_read_bytes(&r, 16, &b))
				return;
			break;
		case WASM_OP_end:
		case WASM_OP_i32_add:
		case WASM_OP_i32_sub:
		case WASM_OP_i32_mul:
		case WASM_OP_i64_add:
		case WASM_OP_i64_sub:
		case WASM_OP_i64_mul:
			break;
		default:
			return; /* validation reports it */
		}
	}
}

static bool *collect_refs(const wasm_module *m)
{
	uint32_t nf = wasm_module_nfuncs(m);
	bool *refs = calloc((size_t)nf + 1, sizeof *refs);

	if (refs == NULL)
		return NULL;
	for (uint32_t i = 0; i < m->nexports; i++)
		if (m->exports[i].kind == WASM_EXTERN_FUNC &&
		    m->exports[i].index < nf)
			refs[m->exports[i].index] = true;
	for (uint32_t i = 0; i < m->nglobals; i++)
		refs_of_expr(m, &m->globals[i].init, refs);
	for (uint32_t i = 0; i < m->ntables; i++)
		if (m->tables[i].has_init)
			refs_of_expr(m, &m->tables[i].init, refs);
	for (uint32_t i = 0; i < m->nelems; i++) {
		const wasm_elem *el = &m->elems[i];
		for (uint32_t k = 0; k < el->count; k++) {
			if (el->funcs && el->funcs[k] < nf)
				refs[el->funcs[k]] = true;
			if (el->exprs)
				refs_of_expr(m, &el->exprs[k], refs);
		}
		if (el->mode == WASM_SEG_ACTIVE)
			refs_of_expr(m, &el->offset, refs);
	}
	for (uint32_t i = 0; i < m->ndatas; i++)
		if (m->datas[i].mode == WASM_SEG_ACTIVE)
			refs_of_expr(m, &m->datas[i].offset, refs);
	return refs;
}

/* ---- limits and types -----------------------------------------------------
 */

static int check_functype(const wasm_module *m, uint32_t typeidx,
			  wasm_error *err)
{
	if (typeidx >= m->ntypes)
		return inval(err, WASM_NO_OFFSET, "unknown type %u", typeidx);
	return 0;
}

static int check_tagtype(const wasm_module *m, const wasm_tagtype *t,
			 wasm_error *err)
{
	if (check_functype(m, t->typeidx, err))
		return -1;
	if (m->types[t->typeidx].nresults != 0)
		return wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
				      "non-empty tag result type");
	return 0;
}

static int check_limits(const wasm_limits *l, wasm_error *err)
{
	if (l->has_max && l->min > l->max)
		return wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
				      "size minimum must not be greater than "
				      "maximum");
	return 0;
}

static int check_memtype(const wasm_memtype *mt, wasm_error *err)
{
	const wasm_limits *l = &mt->limits;

	if (l->is64) {
		if (l->min > MAX_PAGES64 ||
		    (l->has_max && l->max > MAX_PAGES64))
			return wasm_error_set(err, WASM_ERR_INVALID,
					      WASM_NO_OFFSET,
					      "memory size must be at most "
					      "2^48 pages");
	} else if (l->min > MAX_PAGES32 || (l->has_max && l->max > MAX_PAGES32))
		return wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
				      "memory size must be at most 65536 "
				      "pages (4GiB)");
	if (l->shared && !l->has_max)
		return wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
				      "shared memory must have maximum");
	if (l->shared)
		return wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
				      "shared memories are not supported");
	return check_limits(l, err);
}

static int check_tabletype(const wasm_tabletype *tt, wasm_error *err)
{
	if (!tt->limits.is64 &&
	    (tt->limits.min > UINT32_MAX ||
	     (tt->limits.has_max && tt->limits.max > UINT32_MAX)))
		return wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
				      "table size must be at most 2^32-1");
	return check_limits(&tt->limits, err);
}

/* What function bodies rely on: every type index they can reach. */
static int check_prerequisites(const wasm_module *m, wasm_error *err)
{
	for (uint32_t i = 0; i < m->ntypes; i++) {
		const wasm_functype *ft = &m->types[i];
		/*
		 * Without rec groups a type may name itself and the types
		 * before it only (instance.c interns them in that order).
		 */
		const wasm_module mi = {.ntypes = i + 1};
		if (check_valtypes(&mi, ft->params, ft->nparams, err) ||
		    check_valtypes(&mi, ft->results, ft->nresults, err))
			return -1;
	}
	for (uint32_t i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];
		if (im->kind == WASM_EXTERN_TABLE &&
		    wasm_valtype_check(m, im->u.table.elem, WASM_NO_OFFSET,
				       err))
			return -1;
		if (im->kind == WASM_EXTERN_GLOBAL &&
		    wasm_valtype_check(m, im->u.global.type, WASM_NO_OFFSET,
				       err))
			return -1;
	}
	for (uint32_t i = 0; i < m->ntables; i++)
		if (wasm_valtype_check(m, m->tables[i].type.elem,
				       WASM_NO_OFFSET, err))
			return -1;
	for (uint32_t i = 0; i < m->nglobals; i++)
		if (wasm_valtype_check(m, m->globals[i].type.type,
				       WASM_NO_OFFSET, err))
			return -1;
	for (uint32_t i = 0; i < m->nelems; i++)
		if (wasm_valtype_check(m, m->elems[i].type, WASM_NO_OFFSET,
				       err))
			return -1;
	for (uint32_t i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];
		if (im->kind == WASM_EXTERN_FUNC &&
		    check_functype(m, im->u.func_typeidx, err))
			return -1;
		if (im->kind == WASM_EXTERN_TAG &&
		    check_tagtype(m, &im->u.tag, err))
			return -1;
	}
	for (uint32_t i = 0; i < m->nfuncs; i++)
		if (check_functype(m, m->func_types[i], err))
			return -1;
	for (uint32_t i = 0; i < m->ntags; i++)
		if (check_tagtype(m, &m->tags[i], err))
			return -1;
	if (m->ncodes != m->nfuncs)
		return wasm_error_set(err, WASM_ERR_MALFORMED, WASM_NO_OFFSET,
				      "function and code section have "
				      "inconsistent lengths");
	return 0;
}

/* ---- the rest of the module -----------------------------------------------
 */

static int name_cmp(const void *a, const void *b)
{
	const wasm_name *x = *(const wasm_name *const *)a;
	const wasm_name *y = *(const wasm_name *const *)b;
	uint32_t n = x->len < y->len ? x->len : y->len;
	int c = n ? memcmp(x->ptr, y->ptr, n) : 0;

	if (c != 0)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

static int check_exports(const wasm_module *m, wasm_error *err)
{
	const wasm_name **names;
	int rc = 0;

	for (uint32_t i = 0; i < m->nexports; i++) {
		const wasm_export *ex = &m->exports[i];
		uint32_t lim = 0;
		const char *what = "";
		switch (ex->kind) {
		case WASM_EXTERN_FUNC:
			lim = wasm_module_nfuncs(m);
			what = "unknown function %u";
			break;
		case WASM_EXTERN_TABLE:
			lim = wasm_module_ntables(m);
			what = "unknown table %u";
			break;
		case WASM_EXTERN_MEMORY:
			lim = wasm_module_nmemories(m);
			what = "unknown memory %u";
			break;
		case WASM_EXTERN_GLOBAL:
			lim = wasm_module_nglobals(m);
			what = "unknown global %u";
			break;
		case WASM_EXTERN_TAG:
			lim = wasm_module_ntags(m);
			what = "unknown tag %u";
			break;
		}
		if (ex->index >= lim)
			return inval(err, WASM_NO_OFFSET, what, ex->index);
	}
	if (m->nexports < 2)
		return 0;
	names = malloc(m->nexports * sizeof *names);
	if (names == NULL)
		return wasm_error_set(err, WASM_ERR_RESOURCE, WASM_NO_OFFSET,
				      "out of memory");
	for (uint32_t i = 0; i < m->nexports; i++)
		names[i] = &m->exports[i].name;
	qsort(names, m->nexports, sizeof *names, name_cmp);
	for (uint32_t i = 1; i < m->nexports; i++)
		if (name_cmp(&names[i - 1], &names[i]) == 0) {
			rc = wasm_error_set(err, WASM_ERR_INVALID,
					    WASM_NO_OFFSET,
					    "duplicate export name");
			break;
		}
	free(names);
	return rc;
}

static int check_module(const wasm_module *m, wasm_error *err)
{
	uint32_t nglobals = wasm_module_nglobals(m);

	for (uint32_t i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];
		if (im->kind == WASM_EXTERN_TABLE &&
		    check_tabletype(&im->u.table, err))
			return -1;
		if (im->kind == WASM_EXTERN_MEMORY &&
		    check_memtype(&im->u.memory, err))
			return -1;
	}
	for (uint32_t i = 0; i < m->ntables; i++) {
		const wasm_table *t = &m->tables[i];
		if (check_tabletype(&t->type, err))
			return -1;
		/* a non-nullable table needs an initializer (no default) */
		if (!t->has_init && !wasm_valtype_defaultable(t->type.elem))
			return wasm_error_set(err, WASM_ERR_INVALID,
					      WASM_NO_OFFSET, "type mismatch");
		/* tables come before globals: only imported ones are seen */
		if (t->has_init &&
		    wasm_constexpr_validate(m, &t->init, t->type.elem,
					    m->nimported_globals, err))
			return -1;
	}
	for (uint32_t i = 0; i < m->nmemories; i++)
		if (check_memtype(&m->memories[i], err))
			return -1;
	for (uint32_t i = 0; i < m->nglobals; i++) {
		const wasm_global *g = &m->globals[i];
		if (wasm_constexpr_validate(m, &g->init, g->type.type,
					    m->nimported_globals + i, err))
			return -1;
	}
	for (uint32_t i = 0; i < m->nelems; i++) {
		const wasm_elem *el = &m->elems[i];
		if (el->mode == WASM_SEG_ACTIVE) {
			const wasm_tabletype *tt;
			if (el->table >= wasm_module_ntables(m))
				return inval(err, WASM_NO_OFFSET,
					     "unknown table %u", el->table);
			tt = wasm_module_table_type(m, el->table);
			if (wasm_constexpr_validate(m, &el->offset,
						    tt->limits.is64 ? WASM_I64
								    : WASM_I32,
						    nglobals, err))
				return -1;
			if (!wasm_valtype_sub(m, el->type, tt->elem))
				return wasm_error_set(err, WASM_ERR_INVALID,
						      WASM_NO_OFFSET,
						      "type mismatch");
		}
		for (uint32_t k = 0; k < el->count; k++) {
			if (el->funcs && el->funcs[k] >= wasm_module_nfuncs(m))
				return inval(err, WASM_NO_OFFSET,
					     "unknown function %u",
					     el->funcs[k]);
			if (el->exprs &&
			    wasm_constexpr_validate(m, &el->exprs[k], el->type,
						    nglobals, err))
				return -1;
		}
	}
	for (uint32_t i = 0; i < m->ndatas; i++) {
		const wasm_data *d = &m->datas[i];
		if (d->mode != WASM_SEG_ACTIVE)
			continue;
		if (d->memory >= wasm_module_nmemories(m))
			return inval(err, WASM_NO_OFFSET, "unknown memory %u",
				     d->memory);
		if (wasm_constexpr_validate(
			    m, &d->offset,
			    wasm_module_memory_type(m, d->memory)->limits.is64
				    ? WASM_I64
				    : WASM_I32,
			    nglobals, err))
			return -1;
	}
	if (m->has_start) {
		const wasm_functype *ft;
		if (m->start >= wasm_module_nfuncs(m))
			return inval(err, WASM_NO_OFFSET, "unknown function %u",
				     m->start);
		ft = &m->types[wasm_module_func_typeidx(m, m->start)];
		if (ft->nparams != 0 || ft->nresults != 0)
			return wasm_error_set(err, WASM_ERR_INVALID,
					      WASM_NO_OFFSET, "start function");
	}
	return check_exports(m, err);
}

int wasm_module_validate(wasm_module *m, wasm_error *err)
{
	struct wasm_compiled **compiled;
	wasm_error first;
	bool have_invalid = false;
	bool *refs;

	if (m->validated)
		return 0;
	if (check_prerequisites(m, err))
		return -1;
	refs = collect_refs(m);
	compiled = calloc((size_t)m->nfuncs + 1, sizeof *compiled);
	if (refs == NULL || compiled == NULL) {
		free(refs);
		free(compiled);
		return wasm_error_set(err, WASM_ERR_RESOURCE, WASM_NO_OFFSET,
				      "out of memory");
	}
	for (uint32_t i = 0; i < m->nfuncs; i++) {
		wasm_error e;
		if (wasm_compile_func(m, i, refs, &compiled[i], &e) == 0)
			continue;
		if (e.kind != WASM_ERR_INVALID || !have_invalid) {
			first = e;
			have_invalid = true;
		}
		if (e.kind != WASM_ERR_INVALID)
			break;
	}
	free(refs);
	if (!have_invalid && check_module(m, &first))
		have_invalid = true;
	if (have_invalid) {
		for (uint32_t i = 0; i < m->nfuncs; i++)
			wasm_compiled_free(compiled[i]);
		free(compiled);
		if (err)
			*err = first;
		return -1;
	}
	wasm_compile_link(compiled, m->nfuncs);
	m->compiled = compiled;
	m->free_compiled = wasm_compiled_free;
	m->validated = true;
	return 0;
}

int wasm_module_load(const uint8_t *bytes, size_t len, wasm_module **out,
		     wasm_error *err)
{
	wasm_module *m;

	if (wasm_decode(bytes, len, &m, err))
		return -1;
	if (wasm_module_validate(m, err)) {
		wasm_module_free(m);
		return -1;
	}
	*out = m;
	return 0;
}
