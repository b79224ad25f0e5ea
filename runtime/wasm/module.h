/*
 * module.h - the decoded form of a core WebAssembly module.
 *
 * Contract: wasm_decode() turns a binary into a wasm_module whose every
 * section-level structure is well formed (sizes, counts, LEB128 ranges,
 * UTF-8 names, section order, data count agreement, known kinds).  It does
 * NOT check function bodies or constant expressions beyond finding their
 * extent: those are raw byte ranges that validate.c checks and compiles.
 * Index spaces put imports first, as the spec does: function i < nimported
 * is imports' i-th function import, the rest are `funcs[i - nimported]`.
 *
 * Every pointer in a wasm_module points into memory the module owns (its
 * private copy of the input bytes, or arrays it allocated); wasm_module_free
 * releases all of it.  Names are byte ranges, not NUL-terminated: export
 * names may contain U+0000 (names.wast).
 */
#ifndef HOSTEL_WASM_MODULE_H
#define HOSTEL_WASM_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wasm/error.h"

/*
 * A value type.  The low byte is the binary encoding of the type or, for
 * a reference type, of the top of its hierarchy (0x70 func, 0x6f extern,
 * 0x69 exn): values of one hierarchy share one run-time representation,
 * so everything that only moves or stores values looks at the low byte.
 * The upper bits refine a reference type (function-references): bit 8
 * set means non-nullable, bits 9..31 the heap type (WASM_HEAP_TOP: the
 * abstract func/extern/exn; else WASM_HEAP_IDX0 + a type index).  The
 * nullable abstract types are thus the plain bytes 0x70/0x6f/0x69, one
 * encoding per type, so type equality is ==.
 */
typedef uint32_t wasm_valtype;

enum {
	WASM_I32 = 0x7f,
	WASM_I64 = 0x7e,
	WASM_F32 = 0x7d,
	WASM_F64 = 0x7c,
	WASM_V128 = 0x7b,
	WASM_FUNCREF = 0x70,
	WASM_EXTERNREF = 0x6f,
	WASM_EXNREF = 0x69,
};

#define WASM_REF_NONNULL  0x100u
#define WASM_HEAP_SHIFT	  9
#define WASM_HEAP_TOP	  0u
#define WASM_HEAP_IDX0	  1u
/* Type indices a reference type can name (23 bits of heap type). */
#define WASM_MAX_HEAP_IDX ((1u << (32 - WASM_HEAP_SHIFT)) - 1 - WASM_HEAP_IDX0)

static inline bool wasm_valtype_is_ref(wasm_valtype t)
{
	uint8_t c = (uint8_t)t;
	return c == WASM_FUNCREF || c == WASM_EXTERNREF || c == WASM_EXNREF;
}

/* (ref null? ht) for hierarchy top (a low byte) and heap code heap. */
static inline wasm_valtype wasm_reftype(uint8_t top, bool nullable,
					uint32_t heap)
{
	return top | (nullable ? 0 : WASM_REF_NONNULL) |
	       (heap << WASM_HEAP_SHIFT);
}

static inline bool wasm_ref_nullable(wasm_valtype t)
{
	return !(t & WASM_REF_NONNULL);
}

static inline uint32_t wasm_ref_heap(wasm_valtype t)
{
	return t >> WASM_HEAP_SHIFT;
}

/* Whether t is (ref null? $i) for some type index; *idx gets i. */
static inline bool wasm_ref_typeidx(wasm_valtype t, uint32_t *idx)
{
	if (!wasm_valtype_is_ref(t) || wasm_ref_heap(t) == WASM_HEAP_TOP)
		return false;
	*idx = wasm_ref_heap(t) - WASM_HEAP_IDX0;
	return true;
}

/*
 * In a store's interned types (store.h) a concrete heap type names a
 * store type id instead of a module's type index, and a function type
 * that names itself uses WASM_HEAP_SELF: equal ids then mean equal types
 * across modules.  Store ids stay below WASM_MAX_HEAP_IDX.
 */
#define WASM_HEAP_SELF (WASM_HEAP_IDX0 + WASM_MAX_HEAP_IDX)

/*
 * Subtyping of two value types in a store's form: heap types are equal
 * when their codes are, so no module is needed.
 */
static inline bool wasm_store_valtype_sub(wasm_valtype a, wasm_valtype b)
{
	if (a == b)
		return true;
	if (!wasm_valtype_is_ref(a) || (uint8_t)a != (uint8_t)b)
		return false;
	if (wasm_ref_nullable(a) && !wasm_ref_nullable(b))
		return false;
	return wasm_ref_heap(a) == wasm_ref_heap(b) ||
	       wasm_ref_heap(b) == WASM_HEAP_TOP;
}

/* Whether a default value exists: numbers and nullable references. */
static inline bool wasm_valtype_defaultable(wasm_valtype t)
{
	return !wasm_valtype_is_ref(t) || wasm_ref_nullable(t);
}

/* Number of 64-bit value slots a value of type t occupies (v128 takes 2). */
static inline uint32_t wasm_valtype_slots(wasm_valtype t)
{
	return (uint8_t)t == WASM_V128 ? 2 : 1;
}

/* The text-format name of t ("i32", "funcref", ...; "?" for none). */
static inline const char *wasm_valtype_name(wasm_valtype t)
{
	switch ((uint8_t)t) {
	case WASM_I32:
		return "i32";
	case WASM_I64:
		return "i64";
	case WASM_F32:
		return "f32";
	case WASM_F64:
		return "f64";
	case WASM_V128:
		return "v128";
	case WASM_FUNCREF:
		return "funcref";
	case WASM_EXTERNREF:
		return "externref";
	case WASM_EXNREF:
		return "exnref";
	default:
		return "?";
	}
}

/*
 * The text form of t in buf (size at least 32): wasm_valtype_name for
 * numbers and the abstract nullable references, else "(ref null? ht)"
 * with ht "func", "extern", "exn" or a type index "$N".
 */
const char *wasm_valtype_format(wasm_valtype t, char *buf, size_t size);

typedef struct wasm_name {
	const uint8_t
		*ptr; /* into the module's byte copy; not NUL-terminated */
	uint32_t len;
} wasm_name;

typedef struct wasm_functype {
	uint32_t nparams;
	uint32_t nresults;
	wasm_valtype *params;  /* nparams entries */
	wasm_valtype *results; /* nresults entries */
} wasm_functype;

typedef struct wasm_limits {
	uint64_t min;
	uint64_t max; /* meaningful only when has_max */
	bool has_max;
	bool is64;   /* memory64 / table64 index type */
	bool shared; /* threads proposal: decoded, rejected by validation */
} wasm_limits;

typedef struct wasm_tabletype {
	wasm_valtype elem;
	wasm_limits limits;
} wasm_tabletype;

typedef struct wasm_memtype {
	wasm_limits limits; /* in 64 KiB pages */
} wasm_memtype;

typedef struct wasm_globaltype {
	wasm_valtype type;
	bool mut;
} wasm_globaltype;

typedef struct wasm_tagtype {
	uint32_t typeidx; /* a function type with no results */
} wasm_tagtype;

typedef enum wasm_externkind {
	WASM_EXTERN_FUNC = 0,
	WASM_EXTERN_TABLE = 1,
	WASM_EXTERN_MEMORY = 2,
	WASM_EXTERN_GLOBAL = 3,
	WASM_EXTERN_TAG = 4,
} wasm_externkind;

/*
 * A constant expression: the raw bytes of the instruction sequence,
 * including its final `end` (0x0b).  `offset` is the position of the first
 * byte in the original binary, for error messages.
 */
typedef struct wasm_constexpr {
	const uint8_t *code;
	uint32_t len;
	uint32_t offset;
} wasm_constexpr;

typedef struct wasm_import {
	wasm_name module;
	wasm_name name;
	wasm_externkind kind;
	union {
		uint32_t func_typeidx;
		wasm_tabletype table;
		wasm_memtype memory;
		wasm_globaltype global;
		wasm_tagtype tag;
	} u;
} wasm_import;

typedef struct wasm_table {
	wasm_tabletype type;
	bool has_init; /* function-references: table with init expr */
	wasm_constexpr init;
} wasm_table;

typedef struct wasm_global {
	wasm_globaltype type;
	wasm_constexpr init;
} wasm_global;

typedef struct wasm_export {
	wasm_name name;
	wasm_externkind kind;
	uint32_t index;
} wasm_export;

typedef enum wasm_segmode {
	WASM_SEG_ACTIVE = 0,
	WASM_SEG_PASSIVE = 1,
	WASM_SEG_DECLARATIVE = 2, /* element segments only */
} wasm_segmode;

typedef struct wasm_elem {
	wasm_segmode mode;
	uint32_t table;	       /* active only */
	wasm_constexpr offset; /* active only */
	wasm_valtype type;     /* funcref for the funcidx forms */
	uint32_t count;
	/* Exactly one of these is non-NULL when count > 0. */
	uint32_t *funcs;       /* forms 0-3: function indices */
	wasm_constexpr *exprs; /* forms 4-7: one expression per element */
} wasm_elem;

typedef struct wasm_data {
	wasm_segmode mode;
	uint32_t memory;       /* active only */
	wasm_constexpr offset; /* active only */
	const uint8_t *bytes;
	uint32_t len;
} wasm_data;

/* A function body as found in the code section. */
typedef struct wasm_code {
	uint32_t nlocals;     /* declared locals, excluding parameters */
	wasm_valtype *locals; /* nlocals entries, groups expanded */
	const uint8_t *body;  /* instructions after the locals, through `end` */
	uint32_t body_len;
	uint32_t body_offset; /* offset of `body` in the binary */
} wasm_code;

struct wasm_compiled; /* validate.c / compile.c attach one per function */

typedef struct wasm_module {
	uint8_t *bytes; /* private copy of the binary */
	size_t nbytes;

	uint32_t ntypes;
	wasm_functype *types;

	uint32_t nimports;
	wasm_import *imports;
	/* Counts of imports per kind: the first entries of each index space. */
	uint32_t nimported_funcs, nimported_tables, nimported_memories,
		nimported_globals, nimported_tags;
	/*
	 * Positions in `imports`, grouped by kind in index-space order: the
	 * function imports, then tables, memories, globals, tags (nimports
	 * entries).  Lets the lookup helpers below run in constant time.
	 */
	uint32_t *imports_by_kind;

	uint32_t nfuncs;      /* defined functions only */
	uint32_t *func_types; /* type index of each defined function */

	uint32_t ntables; /* defined tables only */
	wasm_table *tables;

	uint32_t nmemories; /* defined memories only */
	wasm_memtype *memories;

	uint32_t nglobals; /* defined globals only */
	wasm_global *globals;

	uint32_t ntags; /* defined tags only */
	wasm_tagtype *tags;

	uint32_t nexports;
	wasm_export *exports;

	bool has_start;
	uint32_t start;

	uint32_t nelems;
	wasm_elem *elems;

	bool has_data_count;
	uint32_t data_count;

	uint32_t ndatas;
	wasm_data *datas;

	uint32_t ncodes; /* equals nfuncs in a well-formed module */
	wasm_code *codes;

	/* Filled by validation: one entry per defined function, or NULL. */
	struct wasm_compiled **compiled;
	bool validated;
	/*
	 * Set by whoever fills `compiled`: wasm_module_free calls it on each
	 * non-NULL entry before freeing the array.
	 */
	void (*free_compiled)(struct wasm_compiled *c);
} wasm_module;

/* Totals over each index space (imports + definitions). */
static inline uint32_t wasm_module_nfuncs(const wasm_module *m)
{
	return m->nimported_funcs + m->nfuncs;
}
static inline uint32_t wasm_module_ntables(const wasm_module *m)
{
	return m->nimported_tables + m->ntables;
}
static inline uint32_t wasm_module_nmemories(const wasm_module *m)
{
	return m->nimported_memories + m->nmemories;
}
static inline uint32_t wasm_module_nglobals(const wasm_module *m)
{
	return m->nimported_globals + m->nglobals;
}
static inline uint32_t wasm_module_ntags(const wasm_module *m)
{
	return m->nimported_tags + m->ntags;
}

/*
 * Decode `len` bytes.  On success returns 0 and stores a new module in
 * *out.  On failure returns -1, stores nothing, and fills *err with the
 * byte offset and the spec's reason ("unexpected end", "magic header not
 * detected", "integer too large", "section size mismatch", ...).
 * Never aborts, whatever the input.
 */
int wasm_decode(const uint8_t *bytes, size_t len, wasm_module **out,
		wasm_error *err);

void wasm_module_free(wasm_module *m);

/* Lookup helpers used by validation and instantiation. */
uint32_t wasm_module_func_typeidx(const wasm_module *m, uint32_t funcidx);
const wasm_tabletype *wasm_module_table_type(const wasm_module *m,
					     uint32_t tableidx);
const wasm_memtype *wasm_module_memory_type(const wasm_module *m,
					    uint32_t memidx);
const wasm_globaltype *wasm_module_global_type(const wasm_module *m,
					       uint32_t globalidx);
const wasm_tagtype *wasm_module_tag_type(const wasm_module *m, uint32_t tagidx);

#endif
