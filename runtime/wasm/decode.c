/*
 * decode.c - the binary decoder of core WebAssembly modules.
 *
 * Contract (see module.h): wasm_decode() checks everything the binary
 * format itself requires, section by section: header, section ids, order
 * and uniqueness, exact section sizes, LEB128 widths, UTF-8 names, known
 * kinds and flags, reserved zero bytes, the function/code and data-count
 * agreements.  Function bodies and constant expressions are kept as raw
 * byte ranges; only their extent is found here (constant expressions by
 * walking their instructions with the right immediate sizes), their
 * meaning is validate.c's business.  Errors are WASM_ERR_MALFORMED with
 * the spec interpreter's message text first, so conformance drivers can
 * match on it; allocation failures are WASM_ERR_RESOURCE.
 *
 * Typed function references ((ref null? ht) with ht func, extern, exn or
 * a type index) are decoded into wasm_valtype (module.h).  The GC type
 * definitions (rec, sub, struct, array) and the GC abstract heap types
 * fail as malformed with a message that says "GC not supported".
 *
 * The module keeps a private copy of the input, and every pointer it
 * holds points into that copy or into arrays it owns.
 *
 * Allocations sized by a guest or a client (issue 18 audit): the module
 * (a deployed component's core modules, a client's bytes) is the input.
 *  - wasm_decode: the private copy of the input, its length.
 *  - every vector (types, imports, imports_by_kind, functions, tables,
 *    memories, tags, globals, exports, element segments and their
 *    items, codes, datas): read_count refuses a count above the bytes
 *    left, so each array is at most the module's byte length entries.
 *  - decode_locals: WASM_MAX_FUNCTION_LOCALS (50,000) per function and
 *    WASM_MAX_MODULE_LOCALS (2^24) over a module, "too many locals".
 */
#include "wasm/module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasm/ops.h"
#include "wasm/reader.h"

/* Engine limits on locals: per function, and expanded over a module. */
#define WASM_MAX_FUNCTION_LOCALS 50000u
#define WASM_MAX_MODULE_LOCALS	 (1u << 24)

enum wasm_section_id {
	SEC_CUSTOM = 0,
	SEC_TYPE = 1,
	SEC_IMPORT = 2,
	SEC_FUNCTION = 3,
	SEC_TABLE = 4,
	SEC_MEMORY = 5,
	SEC_GLOBAL = 6,
	SEC_EXPORT = 7,
	SEC_START = 8,
	SEC_ELEMENT = 9,
	SEC_CODE = 10,
	SEC_DATA = 11,
	SEC_DATACOUNT = 12,
	SEC_TAG = 13,
	SEC_MAX = 13,
};

/*
 * Position of each non-custom section id in the required order; custom
 * sections (rank 0) may appear anywhere.
 */
static const uint8_t section_rank[SEC_MAX + 1] = {
	[SEC_CUSTOM] = 0,   [SEC_TYPE] = 1,	[SEC_IMPORT] = 2,
	[SEC_FUNCTION] = 3, [SEC_TABLE] = 4,	[SEC_MEMORY] = 5,
	[SEC_TAG] = 6,	    [SEC_GLOBAL] = 7,	[SEC_EXPORT] = 8,
	[SEC_START] = 9,    [SEC_ELEMENT] = 10, [SEC_DATACOUNT] = 11,
	[SEC_CODE] = 12,    [SEC_DATA] = 13,
};

/* Heap type shorthands as the signed 33-bit numbers ref.null carries. */
#define HT_FUNC	  (-0x10)
#define HT_EXTERN (-0x11)
#define HT_EXN	  (-0x17)

typedef struct decoder {
	wasm_module *m;
	wasm_error *err;
	uint64_t total_locals; /* expanded locals over all bodies so far */
} decoder;

static int fail(wasm_reader *r, size_t offset, const char *msg)
{
	return wasm_reader_fail(r, offset, msg);
}

/* calloc for n elements (n may be 0); reports out of memory. */
static void *alloc_array(wasm_reader *r, uint32_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (p == NULL)
		wasm_error_set(r->err, WASM_ERR_RESOURCE, r->pos,
			       "out of memory");
	return p;
}

/*
 * A vector length.  Every element of the vectors read with this takes at
 * least one byte, so a count above the bytes left cannot be right; this
 * also keeps allocations proportional to the input.
 */
static int read_count(wasm_reader *r, uint32_t *n)
{
	if (wasm_read_u32(r, n))
		return -1;
	if (*n > wasm_reader_remaining(r))
		return fail(r, r->pos, r->end_msg);
	return 0;
}

/* ---- types ------------------------------------------------------------ */

static bool is_gc_abstract_heaptype(uint8_t b)
{
	/* nofunc noextern none noexn, any eq i31 struct array */
	return (b >= 0x71 && b <= 0x74) || (b >= 0x6a && b <= 0x6e);
}

/*
 * After 0x63 (ref null ht) or 0x64 (ref ht): the heap type, an abstract
 * func/extern/exn or a type index (its range is validate.c's business).
 * The GC abstract types (any, eq, i31, struct, array, none, nofunc,
 * noextern, noexn) are refused.
 */
static int read_ref_heaptype(wasm_reader *r, size_t off, bool nullable,
			     wasm_valtype *out)
{
	int64_t ht;

	if (wasm_read_s33(r, &ht))
		return -1;
	switch (ht) {
	case HT_FUNC:
		*out = wasm_reftype(WASM_FUNCREF, nullable, WASM_HEAP_TOP);
		return 0;
	case HT_EXTERN:
		*out = wasm_reftype(WASM_EXTERNREF, nullable, WASM_HEAP_TOP);
		return 0;
	case HT_EXN:
		*out = wasm_reftype(WASM_EXNREF, nullable, WASM_HEAP_TOP);
		return 0;
	default:
		break;
	}
	if (ht < 0)
		return fail(r, off,
			    is_gc_abstract_heaptype((uint8_t)(ht & 0x7f))
				    ? "malformed reference type: gc "
				      "reference types: GC not supported"
				    : "malformed heap type");
	if (ht > WASM_MAX_HEAP_IDX)
		return fail(r, off, "malformed reference type: type index "
				    "too large");
	/* Only function types exist without GC, so $t is in func's. */
	*out = wasm_reftype(WASM_FUNCREF, nullable,
			    WASM_HEAP_IDX0 + (uint32_t)ht);
	return 0;
}

static int read_valtype(wasm_reader *r, wasm_valtype *out)
{
	size_t off = r->pos;
	uint8_t b;

	if (wasm_read_u8(r, &b))
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
		return read_ref_heaptype(r, off, b == 0x63, out);
	default:
		if (is_gc_abstract_heaptype(b))
			return fail(r, off,
				    "malformed value type: gc reference "
				    "types: GC not supported");
		return fail(r, off, "malformed value type");
	}
}

static int read_reftype(wasm_reader *r, wasm_valtype *out)
{
	size_t off = r->pos;
	uint8_t b;

	if (wasm_read_u8(r, &b))
		return -1;
	switch (b) {
	case WASM_FUNCREF:
	case WASM_EXTERNREF:
	case WASM_EXNREF:
		*out = b;
		return 0;
	case 0x63:
	case 0x64:
		return read_ref_heaptype(r, off, b == 0x63, out);
	default:
		if (is_gc_abstract_heaptype(b))
			return fail(r, off,
				    "malformed reference type: gc reference "
				    "types: GC not supported");
		return fail(r, off, "malformed reference type");
	}
}

static int read_valtypes(wasm_reader *r, uint32_t *n, wasm_valtype **out)
{
	if (read_count(r, n))
		return -1;
	if (*n == 0)
		return 0;
	*out = alloc_array(r, *n, sizeof **out);
	if (*out == NULL)
		return -1;
	for (uint32_t i = 0; i < *n; i++)
		if (read_valtype(r, &(*out)[i]))
			return -1;
	return 0;
}

static int read_mut(wasm_reader *r, bool *mut)
{
	size_t off = r->pos;
	uint8_t b;

	if (wasm_read_u8(r, &b))
		return -1;
	if (b > 1)
		return fail(r, off, "malformed mutability");
	*mut = b == 1;
	return 0;
}

/*
 * GC composite types are not supported; read far enough into struct and
 * array types to report the malformations the spec tests (mutability).
 */
static int reject_gc_type(wasm_reader *r, size_t off, uint8_t form)
{
	uint32_t nfields = 1;

	if (form == 0x5f && read_count(r, &nfields))
		return -1;
	if (form == 0x5e || form == 0x5f) {
		for (uint32_t i = 0; i < nfields; i++) {
			uint8_t b;
			bool mut;
			int64_t ht;

			if (wasm_read_u8(r, &b))
				return -1;
			if ((b == 0x63 || b == 0x64) && wasm_read_s33(r, &ht))
				return -1;
			if (read_mut(r, &mut))
				return -1;
		}
	}
	return fail(r, off,
		    "malformed type: gc type definitions (rec, sub, struct, "
		    "array): GC not supported");
}

static int read_functype(wasm_reader *r, wasm_functype *ft)
{
	size_t off = r->pos;
	uint8_t form;

	if (wasm_read_u8(r, &form))
		return -1;
	switch (form) {
	case 0x60:
		if (read_valtypes(r, &ft->nparams, &ft->params))
			return -1;
		return read_valtypes(r, &ft->nresults, &ft->results);
	case 0x4e: /* rec */
	case 0x50: /* sub */
	case 0x4f: /* sub final */
	case 0x5f: /* struct */
	case 0x5e: /* array */
		return reject_gc_type(r, off, form);
	default:
		return fail(r, off, "malformed function type");
	}
}

static int read_limits(wasm_reader *r, bool is_table, wasm_limits *l)
{
	size_t off = r->pos;
	uint8_t flags;
	uint8_t allowed = is_table ? 0x05 : 0x07; /* max, shared, 64-bit */

	if (wasm_read_u8(r, &flags))
		return -1;
	if (flags & ~allowed)
		return fail(r, off, "malformed limits flags");
	l->has_max = flags & 0x01;
	l->shared = flags & 0x02;
	l->is64 = flags & 0x04;
	/* Read as u64 in every case: validation checks the index range. */
	if (wasm_read_u64(r, &l->min))
		return -1;
	l->max = 0;
	if (l->has_max && wasm_read_u64(r, &l->max))
		return -1;
	return 0;
}

static int read_tabletype(wasm_reader *r, wasm_tabletype *t)
{
	if (read_reftype(r, &t->elem))
		return -1;
	return read_limits(r, true, &t->limits);
}

static int read_globaltype(wasm_reader *r, wasm_globaltype *g)
{
	if (read_valtype(r, &g->type))
		return -1;
	return read_mut(r, &g->mut);
}

static int read_zero_byte(wasm_reader *r)
{
	size_t off = r->pos;
	uint8_t b;

	if (wasm_read_u8(r, &b))
		return -1;
	if (b != 0)
		return fail(r, off, "zero byte expected");
	return 0;
}

static int read_tagtype(wasm_reader *r, wasm_tagtype *t)
{
	/* The attribute byte: 0 (exception) is the only one defined. */
	if (read_zero_byte(r))
		return -1;
	return wasm_read_u32(r, &t->typeidx);
}

/* ---- instruction extents (constant expressions) ------------------------ */

static int skip_u32(wasm_reader *r)
{
	uint32_t v;

	return wasm_read_u32(r, &v);
}

static int skip_s33(wasm_reader *r)
{
	int64_t v;

	return wasm_read_s33(r, &v);
}

static int skip_bytes(wasm_reader *r, size_t n)
{
	const uint8_t *p;

	return wasm_read_bytes(r, n, &p);
}

/* A value type inside an instruction: one byte, or 0x63/0x64 + ht. */
static int skip_valtype(wasm_reader *r)
{
	uint8_t b;

	if (wasm_read_u8(r, &b))
		return -1;
	if (b == 0x63 || b == 0x64)
		return skip_s33(r);
	return 0;
}

static int skip_blocktype(wasm_reader *r)
{
	uint8_t b = 0;

	if (wasm_peek_u8(r, &b))
		return -1;
	if (b == 0x63 || b == 0x64)
		return skip_valtype(r);
	return skip_s33(r); /* 0x40, a value type, or a type index */
}

static int skip_memarg(wasm_reader *r)
{
	size_t off = r->pos;
	uint32_t flags;
	uint64_t offset;

	if (wasm_read_u32(r, &flags))
		return -1;
	if (flags >= 0x80)
		return fail(r, off, "malformed memop flags");
	if ((flags & 0x40) && skip_u32(r))
		return -1;
	return wasm_read_u64(r, &offset);
}

static int illegal_opcode(wasm_reader *r, size_t off, const char *prefix,
			  uint32_t op)
{
	wasm_error_set(r->err, WASM_ERR_MALFORMED, off, "illegal opcode %s%02x",
		       prefix, op);
	return -1;
}

/*
 * The immediates of every one-byte opcode and of the 0xfb and 0xfc
 * subopcodes, from the instruction tables (WASM_IMM_ILLEGAL: none such).
 */
static const uint8_t opcode_imm[256] = {
#define INSTR(op, name, IMM)		     [op] = WASM_IMM_##IMM,
#define INSTR_LOAD(op, name, T, align, iop)  [op] = WASM_IMM_MEMARG,
#define INSTR_STORE(op, name, T, align, iop) [op] = WASM_IMM_MEMARG,
#define INSTR_PREFIX(op, name, IMM)	     [op] = WASM_IMM_##IMM,
#define INSTR_UNSUP(op, name, IMM)	     [op] = WASM_IMM_##IMM,
#include "wasm/ops.def"
#define NUMOP_UN(op, name, R, A, fn)	   [op] = WASM_IMM_NONE,
#define NUMOP_BIN(op, name, R, A, fn)	   [op] = WASM_IMM_NONE,
#define NUMOP_UN_TRAP(op, name, R, A, fn)  [op] = WASM_IMM_NONE,
#define NUMOP_BIN_TRAP(op, name, R, A, fn) [op] = WASM_IMM_NONE,
#include "wasm/ops_numeric.def"
};

/* 0xfb (gc) subopcodes. */
static const uint8_t gc_imm[] = {
#define INSTR_FB(sub, name, IMM) [sub] = WASM_IMM_##IMM,
#include "wasm/ops.def"
};

/* 0xfc subopcodes. */
static const uint8_t misc_imm[] = {
#define NUMOP_FC_UN(sub, name, R, A, fn) [sub] = WASM_IMM_NONE,
#include "wasm/ops_numeric.def"
#define INSTR_FC(sub, name, IMM) [sub] = WASM_IMM_##IMM,
#include "wasm/ops.def"
};

static int skip_simd_instr(wasm_reader *r, size_t off)
{
	uint32_t sub;

	if (wasm_read_u32(r, &sub))
		return -1;
	switch (sub) {
#define SIMDOP_MEM(sub, name, KIND, align, fn) case sub:
#include "wasm/ops_simd.def"
		return skip_memarg(r);
	case WASM_OP_FD_v128_const:
	case WASM_OP_FD_i8x16_shuffle:
		return skip_bytes(r, 16);
#define SIMDOP_LANE(sub, name, SHAPE, nlanes, fn) case sub:
#include "wasm/ops_simd.def"
		return skip_bytes(r, 1); /* lane index */
#define SIMDOP_MEMLANE(sub, name, KIND, lane, nlanes, fn) case sub:
#include "wasm/ops_simd.def"
		return skip_memarg(r) || skip_bytes(r, 1) ? -1 : 0;
	default:
		/* a gap in the table is left for validation to refuse */
		if (sub <= WASM_OP_FD_i32x4_relaxed_dot_i8x16_i7x16_add_s)
			return 0;
		return illegal_opcode(r, off, "fd ", sub);
	}
}

static int skip_try_table(wasm_reader *r)
{
	uint32_t n;

	if (skip_blocktype(r) || read_count(r, &n))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		size_t off = r->pos;
		uint8_t kind;

		if (wasm_read_u8(r, &kind))
			return -1;
		if (kind > 3)
			return fail(r, off, "malformed catch clause");
		if (kind <= 1 && skip_u32(r)) /* catch, catch_ref: tag */
			return -1;
		if (skip_u32(r)) /* label */
			return -1;
	}
	return 0;
}

static int skip_imm(wasm_reader *r, uint8_t kind, uint32_t *depth);

/* A prefixed instruction: the u32 subopcode, then its immediates. */
static int skip_prefixed(wasm_reader *r, uint8_t prefix, size_t off,
			 uint32_t *depth)
{
	const uint8_t *table = prefix == WASM_OP_prefix_gc ? gc_imm : misc_imm;
	uint32_t size =
		prefix == WASM_OP_prefix_gc ? sizeof gc_imm : sizeof misc_imm;
	uint32_t sub;
	char name[4];

	if (prefix == WASM_OP_prefix_simd)
		return skip_simd_instr(r, off);
	if (wasm_read_u32(r, &sub))
		return -1;
	if (sub >= size || table[sub] == WASM_IMM_ILLEGAL) {
		snprintf(name, sizeof name, "%02x ", prefix);
		return illegal_opcode(r, off, name, sub);
	}
	return skip_imm(r, table[sub], depth);
}

/*
 * Step over immediates of the given kind, tracking block nesting in
 * *depth.  Covers every instruction of the proposals the engine decodes,
 * so the extent of a constant expression is found even when it holds
 * instructions that validation will reject.
 */
static int skip_imm(wasm_reader *r, uint8_t kind, uint32_t *depth)
{
	uint32_t n;
	uint8_t flags;

	switch (kind) {
	case WASM_IMM_NONE:
		return 0;
	case WASM_IMM_U32:
		return skip_u32(r);
	case WASM_IMM_U32_U32:
		return skip_u32(r) || skip_u32(r) ? -1 : 0;
	case WASM_IMM_BLOCK:
		(*depth)++;
		return skip_blocktype(r);
	case WASM_IMM_TRY_TABLE:
		(*depth)++;
		return skip_try_table(r);
	case WASM_IMM_DELEGATE:
		if (*depth > 0)
			(*depth)--;
		return skip_u32(r);
	case WASM_IMM_BR_TABLE:
		if (read_count(r, &n))
			return -1;
		for (uint32_t i = 0; i <= n; i++)
			if (skip_u32(r))
				return -1;
		return 0;
	case WASM_IMM_SELECT_T:
		if (read_count(r, &n))
			return -1;
		for (uint32_t i = 0; i < n; i++)
			if (skip_valtype(r))
				return -1;
		return 0;
	case WASM_IMM_MEMARG:
		return skip_memarg(r);
	case WASM_IMM_I32: {
		int32_t v;
		return wasm_read_s32(r, &v);
	}
	case WASM_IMM_I64: {
		int64_t v;
		return wasm_read_s64(r, &v);
	}
	case WASM_IMM_F32:
		return skip_bytes(r, 4);
	case WASM_IMM_F64:
		return skip_bytes(r, 8);
	case WASM_IMM_HEAPTYPE:
		return skip_s33(r);
	case WASM_IMM_BR_ON_CAST:
		if (wasm_read_u8(r, &flags) || skip_u32(r) || skip_s33(r) ||
		    skip_s33(r))
			return -1;
		return 0;
	default:
		return -1; /* not reached: callers map WASM_IMM_ILLEGAL first */
	}
}

static int skip_instr(wasm_reader *r, uint8_t op, size_t off, uint32_t *depth)
{
	uint8_t kind = opcode_imm[op];

	if (kind == WASM_IMM_ILLEGAL)
		return illegal_opcode(r, off, "", op);
	if (kind >= WASM_IMM_PREFIX_FB)
		return skip_prefixed(r, op, off, depth);
	return skip_imm(r, kind, depth);
}

/* A constant expression: instructions through the `end` that closes it. */
static int read_constexpr(wasm_reader *r, wasm_constexpr *out)
{
	size_t start = r->pos;
	uint32_t depth = 0;

	for (;;) {
		size_t off = r->pos;
		uint8_t op;

		if (wasm_read_u8(r, &op))
			return -1;
		if (op == WASM_OP_end) {
			if (depth == 0)
				break;
			depth--;
			continue;
		}
		if (skip_instr(r, op, off, &depth))
			return -1;
	}
	out->code = r->bytes + start;
	out->len = (uint32_t)(r->pos - start);
	out->offset = (uint32_t)start;
	return 0;
}

/* ---- sections --------------------------------------------------------- */

static int decode_custom(decoder *d, wasm_reader *r)
{
	wasm_name name;

	if (wasm_read_name(r, &name))
		return -1;
	r->pos = r->end; /* the payload is not interpreted */
	return 0;
}

static int decode_types(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->types = alloc_array(r, n, sizeof *m->types);
	if (m->types == NULL)
		return -1;
	m->ntypes = n;
	for (uint32_t i = 0; i < n; i++)
		if (read_functype(r, &m->types[i]))
			return -1;
	return 0;
}

static int build_imports_by_kind(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t next[5];

	m->imports_by_kind = alloc_array(r, m->nimports, sizeof(uint32_t));
	if (m->imports_by_kind == NULL)
		return -1;
	next[WASM_EXTERN_FUNC] = 0;
	next[WASM_EXTERN_TABLE] = m->nimported_funcs;
	next[WASM_EXTERN_MEMORY] =
		next[WASM_EXTERN_TABLE] + m->nimported_tables;
	next[WASM_EXTERN_GLOBAL] =
		next[WASM_EXTERN_MEMORY] + m->nimported_memories;
	next[WASM_EXTERN_TAG] = next[WASM_EXTERN_GLOBAL] + m->nimported_globals;
	for (uint32_t i = 0; i < m->nimports; i++)
		m->imports_by_kind[next[m->imports[i].kind]++] = i;
	return 0;
}

static int decode_imports(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->imports = alloc_array(r, n, sizeof *m->imports);
	if (m->imports == NULL)
		return -1;
	m->nimports = n;
	for (uint32_t i = 0; i < n; i++) {
		wasm_import *im = &m->imports[i];
		size_t off;
		uint8_t kind;

		if (wasm_read_name(r, &im->module) ||
		    wasm_read_name(r, &im->name))
			return -1;
		off = r->pos;
		if (wasm_read_u8(r, &kind))
			return -1;
		switch (kind) {
		case WASM_EXTERN_FUNC:
			if (wasm_read_u32(r, &im->u.func_typeidx))
				return -1;
			m->nimported_funcs++;
			break;
		case WASM_EXTERN_TABLE:
			if (read_tabletype(r, &im->u.table))
				return -1;
			m->nimported_tables++;
			break;
		case WASM_EXTERN_MEMORY:
			if (read_limits(r, false, &im->u.memory.limits))
				return -1;
			m->nimported_memories++;
			break;
		case WASM_EXTERN_GLOBAL:
			if (read_globaltype(r, &im->u.global))
				return -1;
			m->nimported_globals++;
			break;
		case WASM_EXTERN_TAG:
			if (read_tagtype(r, &im->u.tag))
				return -1;
			m->nimported_tags++;
			break;
		default:
			return fail(r, off, "malformed import kind");
		}
		im->kind = (wasm_externkind)kind;
	}
	return build_imports_by_kind(d, r);
}

static int decode_functions(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->func_types = alloc_array(r, n, sizeof *m->func_types);
	if (m->func_types == NULL)
		return -1;
	m->nfuncs = n;
	for (uint32_t i = 0; i < n; i++)
		if (wasm_read_u32(r, &m->func_types[i]))
			return -1;
	return 0;
}

static int decode_tables(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->tables = alloc_array(r, n, sizeof *m->tables);
	if (m->tables == NULL)
		return -1;
	m->ntables = n;
	for (uint32_t i = 0; i < n; i++) {
		wasm_table *t = &m->tables[i];
		uint8_t b = 0;

		if (wasm_peek_u8(r, &b))
			return -1;
		if (b != 0x40) {
			if (read_tabletype(r, &t->type))
				return -1;
			continue;
		}
		/* function-references: 0x40 0x00 tabletype expr */
		r->pos++;
		if (read_zero_byte(r) || read_tabletype(r, &t->type) ||
		    read_constexpr(r, &t->init))
			return -1;
		t->has_init = true;
	}
	return 0;
}

static int decode_memories(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->memories = alloc_array(r, n, sizeof *m->memories);
	if (m->memories == NULL)
		return -1;
	m->nmemories = n;
	for (uint32_t i = 0; i < n; i++)
		if (read_limits(r, false, &m->memories[i].limits))
			return -1;
	return 0;
}

static int decode_tags(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->tags = alloc_array(r, n, sizeof *m->tags);
	if (m->tags == NULL)
		return -1;
	m->ntags = n;
	for (uint32_t i = 0; i < n; i++)
		if (read_tagtype(r, &m->tags[i]))
			return -1;
	return 0;
}

static int decode_globals(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->globals = alloc_array(r, n, sizeof *m->globals);
	if (m->globals == NULL)
		return -1;
	m->nglobals = n;
	for (uint32_t i = 0; i < n; i++)
		if (read_globaltype(r, &m->globals[i].type) ||
		    read_constexpr(r, &m->globals[i].init))
			return -1;
	return 0;
}

static int decode_exports(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->exports = alloc_array(r, n, sizeof *m->exports);
	if (m->exports == NULL)
		return -1;
	m->nexports = n;
	for (uint32_t i = 0; i < n; i++) {
		wasm_export *ex = &m->exports[i];
		size_t off;
		uint8_t kind;

		if (wasm_read_name(r, &ex->name))
			return -1;
		off = r->pos;
		if (wasm_read_u8(r, &kind))
			return -1;
		if (kind > WASM_EXTERN_TAG)
			return fail(r, off, "malformed export kind");
		ex->kind = (wasm_externkind)kind;
		if (wasm_read_u32(r, &ex->index))
			return -1;
	}
	return 0;
}

static int decode_start(decoder *d, wasm_reader *r)
{
	if (wasm_read_u32(r, &d->m->start))
		return -1;
	d->m->has_start = true;
	return 0;
}

/* elemkind of the funcidx forms: only 0x00 (funcref) exists. */
static int read_elemkind(wasm_reader *r)
{
	size_t off = r->pos;
	uint8_t b;

	if (wasm_read_u8(r, &b))
		return -1;
	if (b != 0x00)
		return fail(r, off, "malformed element kind");
	return 0;
}

static int read_elem_funcs(wasm_reader *r, wasm_elem *e)
{
	if (read_count(r, &e->count))
		return -1;
	if (e->count == 0)
		return 0;
	e->funcs = alloc_array(r, e->count, sizeof *e->funcs);
	if (e->funcs == NULL) {
		e->count = 0;
		return -1;
	}
	for (uint32_t i = 0; i < e->count; i++)
		if (wasm_read_u32(r, &e->funcs[i]))
			return -1;
	return 0;
}

static int read_elem_exprs(wasm_reader *r, wasm_elem *e)
{
	if (read_count(r, &e->count))
		return -1;
	if (e->count == 0)
		return 0;
	e->exprs = alloc_array(r, e->count, sizeof *e->exprs);
	if (e->exprs == NULL) {
		e->count = 0;
		return -1;
	}
	for (uint32_t i = 0; i < e->count; i++)
		if (read_constexpr(r, &e->exprs[i]))
			return -1;
	return 0;
}

/*
 * The eight element segment forms.  Flag bit 0: passive or declarative
 * (else active); bit 1: with bit 0, declarative; without it, an explicit
 * table index; bit 2: expressions instead of function indices.
 */
static int read_elem(wasm_reader *r, wasm_elem *e)
{
	size_t off = r->pos;
	uint32_t flags;
	bool exprs;

	if (wasm_read_u32(r, &flags))
		return -1;
	if (flags > 7)
		return fail(r, off, "malformed elements segment kind");
	exprs = flags & 4;
	/* function indices are never null: (ref func); form 4's
	 * expressions may be: (ref null func), i.e. funcref (Wasm 3.0
	 * binary format, element sections) */
	e->type = wasm_reftype(WASM_FUNCREF, exprs, WASM_HEAP_TOP);
	e->table = 0;
	if (flags & 1) {
		e->mode = (flags & 2) ? WASM_SEG_DECLARATIVE : WASM_SEG_PASSIVE;
	} else {
		e->mode = WASM_SEG_ACTIVE;
		if ((flags & 2) && wasm_read_u32(r, &e->table))
			return -1;
		if (read_constexpr(r, &e->offset))
			return -1;
	}
	/* Forms 0 and 4 have neither elemkind nor reftype. */
	if (flags & 3) {
		if (exprs ? read_reftype(r, &e->type) : read_elemkind(r))
			return -1;
	}
	return exprs ? read_elem_exprs(r, e) : read_elem_funcs(r, e);
}

static int decode_elems(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->elems = alloc_array(r, n, sizeof *m->elems);
	if (m->elems == NULL)
		return -1;
	m->nelems = n;
	for (uint32_t i = 0; i < n; i++)
		if (read_elem(r, &m->elems[i]))
			return -1;
	return 0;
}

static int decode_datacount(decoder *d, wasm_reader *r)
{
	if (wasm_read_u32(r, &d->m->data_count))
		return -1;
	d->m->has_data_count = true;
	return 0;
}

/*
 * Local declarations: groups of (count, type).  A first pass checks the
 * types and the total (at most 2^32-1 by the spec, and an engine limit
 * below that); the second expands the groups.
 */
static int read_locals(decoder *d, wasm_reader *r, wasm_code *c)
{
	size_t groups_off = r->pos, start;
	uint64_t total = 0;
	uint32_t ngroups, k = 0;
	wasm_valtype t;

	if (read_count(r, &ngroups))
		return -1;
	start = r->pos;
	for (uint32_t i = 0; i < ngroups; i++) {
		uint32_t cnt;

		if (wasm_read_u32(r, &cnt))
			return -1;
		total += cnt;
		if (total > UINT32_MAX)
			return fail(r, groups_off, "too many locals");
		if (read_valtype(r, &t))
			return -1;
	}
	if (total > WASM_MAX_FUNCTION_LOCALS ||
	    d->total_locals + total > WASM_MAX_MODULE_LOCALS)
		return fail(r, groups_off, "too many locals");
	d->total_locals += total;
	c->nlocals = (uint32_t)total;
	if (total == 0)
		return 0;
	c->locals = alloc_array(r, c->nlocals, sizeof *c->locals);
	if (c->locals == NULL)
		return -1;
	r->pos = start;
	for (uint32_t i = 0; i < ngroups; i++) {
		uint32_t cnt;

		if (wasm_read_u32(r, &cnt) || read_valtype(r, &t))
			return -1;
		for (uint32_t j = 0; j < cnt; j++)
			c->locals[k++] = t;
	}
	return 0;
}

static int decode_code(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->codes = alloc_array(r, n, sizeof *m->codes);
	if (m->codes == NULL)
		return -1;
	m->ncodes = n;
	for (uint32_t i = 0; i < n; i++) {
		wasm_code *c = &m->codes[i];
		wasm_reader body;
		uint32_t size;

		if (wasm_read_u32(r, &size))
			return -1;
		if (size > wasm_reader_remaining(r))
			return fail(r, r->pos, r->end_msg);
		body = wasm_reader_sub(r, size,
				       WASM_MSG_UNEXPECTED_END_SECTION);
		r->pos += size;
		if (read_locals(d, &body, c))
			return -1;
		c->body = body.bytes + body.pos;
		c->body_len = (uint32_t)(body.end - body.pos);
		c->body_offset = (uint32_t)body.pos;
	}
	return 0;
}

static int read_data(wasm_reader *r, wasm_data *s)
{
	size_t off = r->pos;
	uint32_t flags;

	if (wasm_read_u32(r, &flags))
		return -1;
	switch (flags) {
	case 0:
		s->mode = WASM_SEG_ACTIVE;
		s->memory = 0;
		break;
	case 1:
		s->mode = WASM_SEG_PASSIVE;
		break;
	case 2:
		s->mode = WASM_SEG_ACTIVE;
		if (wasm_read_u32(r, &s->memory))
			return -1;
		break;
	default:
		return fail(r, off, "malformed data segment kind");
	}
	if (s->mode == WASM_SEG_ACTIVE && read_constexpr(r, &s->offset))
		return -1;
	if (wasm_read_u32(r, &s->len))
		return -1;
	return wasm_read_bytes(r, s->len, &s->bytes);
}

static int decode_datas(decoder *d, wasm_reader *r)
{
	wasm_module *m = d->m;
	uint32_t n;

	if (read_count(r, &n))
		return -1;
	m->datas = alloc_array(r, n, sizeof *m->datas);
	if (m->datas == NULL)
		return -1;
	m->ndatas = n;
	for (uint32_t i = 0; i < n; i++)
		if (read_data(r, &m->datas[i]))
			return -1;
	return 0;
}

typedef int (*section_fn)(decoder *d, wasm_reader *r);

static const section_fn section_decoders[SEC_MAX + 1] = {
	[SEC_CUSTOM] = decode_custom,	    [SEC_TYPE] = decode_types,
	[SEC_IMPORT] = decode_imports,	    [SEC_FUNCTION] = decode_functions,
	[SEC_TABLE] = decode_tables,	    [SEC_MEMORY] = decode_memories,
	[SEC_GLOBAL] = decode_globals,	    [SEC_EXPORT] = decode_exports,
	[SEC_START] = decode_start,	    [SEC_ELEMENT] = decode_elems,
	[SEC_CODE] = decode_code,	    [SEC_DATA] = decode_datas,
	[SEC_DATACOUNT] = decode_datacount, [SEC_TAG] = decode_tags,
};

/* ---- module ----------------------------------------------------------- */

static int decode_header(wasm_reader *r)
{
	static const uint8_t magic[4] = {0x00, 0x61, 0x73, 0x6d};
	static const uint8_t version[4] = {0x01, 0x00, 0x00, 0x00};
	const uint8_t *p;

	if (wasm_read_bytes(r, 4, &p))
		return -1;
	if (memcmp(p, magic, 4) != 0)
		return fail(r, 0, "magic header not detected");
	if (wasm_read_bytes(r, 4, &p))
		return -1;
	if (memcmp(p, version, 4) != 0)
		return fail(r, 4, "unknown binary version");
	return 0;
}

static int decode_sections(decoder *d, wasm_reader *r)
{
	uint8_t last_rank = 0;

	while (!wasm_reader_at_end(r)) {
		size_t id_off = r->pos;
		wasm_reader sec;
		uint8_t id;
		uint32_t size;

		if (wasm_read_u8(r, &id))
			return -1;
		if (id > SEC_MAX)
			return fail(r, id_off, "malformed section id");
		if (wasm_read_u32(r, &size))
			return -1;
		if (size > wasm_reader_remaining(r))
			return fail(r, r->pos, "length out of bounds");
		if (id != SEC_CUSTOM) {
			/* Out of order or repeated. */
			if (section_rank[id] <= last_rank)
				return fail(r, id_off,
					    "unexpected content after last "
					    "section");
			last_rank = section_rank[id];
		}
		sec = wasm_reader_sub(r, size, WASM_MSG_UNEXPECTED_END_SECTION);
		r->pos += size;
		if (section_decoders[id](d, &sec))
			return -1;
		if (sec.pos != sec.end)
			return fail(r, sec.pos, "section size mismatch");
	}
	return 0;
}

static int check_module(decoder *d, wasm_reader *r)
{
	const wasm_module *m = d->m;

	if (m->nfuncs != m->ncodes)
		return fail(r, r->end,
			    "function and code section have inconsistent "
			    "lengths");
	if (m->has_data_count && m->data_count != m->ndatas)
		return fail(r, r->end,
			    "data count and data section have inconsistent "
			    "lengths");
	return 0;
}

int wasm_decode(const uint8_t *bytes, size_t len, wasm_module **out,
		wasm_error *err)
{
	wasm_module *m;
	wasm_reader r;
	decoder d;

	if (len > UINT32_MAX)
		return wasm_error_set(err, WASM_ERR_RESOURCE, WASM_NO_OFFSET,
				      "module too large");
	m = calloc(1, sizeof *m);
	if (m == NULL)
		return wasm_error_set(err, WASM_ERR_RESOURCE, 0,
				      "out of memory");
	m->bytes = malloc(len ? len : 1);
	if (m->bytes == NULL) {
		free(m);
		return wasm_error_set(err, WASM_ERR_RESOURCE, 0,
				      "out of memory");
	}
	if (len)
		memcpy(m->bytes, bytes, len);
	m->nbytes = len;

	d.m = m;
	d.err = err;
	d.total_locals = 0;
	wasm_reader_init(&r, m->bytes, len, err);
	if (decode_header(&r) || decode_sections(&d, &r) ||
	    check_module(&d, &r)) {
		wasm_module_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

void wasm_module_free(wasm_module *m)
{
	if (m == NULL)
		return;
	if (m->compiled != NULL) {
		for (uint32_t i = 0; i < m->nfuncs; i++)
			if (m->compiled[i] != NULL && m->free_compiled != NULL)
				m->free_compiled(m->compiled[i]);
		free(m->compiled);
	}
	for (uint32_t i = 0; i < m->ntypes; i++) {
		free(m->types[i].params);
		free(m->types[i].results);
	}
	free(m->types);
	free(m->imports);
	free(m->imports_by_kind);
	free(m->func_types);
	free(m->tables);
	free(m->memories);
	free(m->globals);
	free(m->tags);
	free(m->exports);
	for (uint32_t i = 0; i < m->nelems; i++) {
		free(m->elems[i].funcs);
		free(m->elems[i].exprs);
	}
	free(m->elems);
	free(m->datas);
	for (uint32_t i = 0; i < m->ncodes; i++)
		free(m->codes[i].locals);
	free(m->codes);
	free(m->bytes);
	free(m);
}

/* ---- lookups ---------------------------------------------------------- */

static const wasm_import *imported(const wasm_module *m, uint32_t first,
				   uint32_t i)
{
	return &m->imports[m->imports_by_kind[first + i]];
}

uint32_t wasm_module_func_typeidx(const wasm_module *m, uint32_t funcidx)
{
	if (funcidx < m->nimported_funcs)
		return imported(m, 0, funcidx)->u.func_typeidx;
	funcidx -= m->nimported_funcs;
	if (funcidx < m->nfuncs)
		return m->func_types[funcidx];
	return UINT32_MAX;
}

const wasm_tabletype *wasm_module_table_type(const wasm_module *m,
					     uint32_t tableidx)
{
	uint32_t first = m->nimported_funcs;

	if (tableidx < m->nimported_tables)
		return &imported(m, first, tableidx)->u.table;
	tableidx -= m->nimported_tables;
	if (tableidx < m->ntables)
		return &m->tables[tableidx].type;
	return NULL;
}

const wasm_memtype *wasm_module_memory_type(const wasm_module *m,
					    uint32_t memidx)
{
	uint32_t first = m->nimported_funcs + m->nimported_tables;

	if (memidx < m->nimported_memories)
		return &imported(m, first, memidx)->u.memory;
	memidx -= m->nimported_memories;
	if (memidx < m->nmemories)
		return &m->memories[memidx];
	return NULL;
}

const wasm_globaltype *wasm_module_global_type(const wasm_module *m,
					       uint32_t globalidx)
{
	uint32_t first = m->nimported_funcs + m->nimported_tables +
			 m->nimported_memories;

	if (globalidx < m->nimported_globals)
		return &imported(m, first, globalidx)->u.global;
	globalidx -= m->nimported_globals;
	if (globalidx < m->nglobals)
		return &m->globals[globalidx].type;
	return NULL;
}

const wasm_tagtype *wasm_module_tag_type(const wasm_module *m, uint32_t tagidx)
{
	uint32_t first = m->nimported_funcs + m->nimported_tables +
			 m->nimported_memories + m->nimported_globals;

	if (tagidx < m->nimported_tags)
		return &imported(m, first, tagidx)->u.tag;
	tagidx -= m->nimported_tags;
	if (tagidx < m->ntags)
		return &m->tags[tagidx];
	return NULL;
}
