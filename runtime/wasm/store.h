/*
 * store.h - the engine-internal layout of runtime objects: the store,
 * function, table, memory, global and tag instances, exception objects and
 * module instances.  Not public: embedders use wasm.h.  The interpreter
 * reads and writes these structs directly, so hot fields come first.
 *
 * Contract:
 *  - Everything here is owned by exactly one wasm_store and lives until
 *    wasm_store_free, except exception objects, which are freed earlier
 *    once nothing reaches them (wasm_store_collect_exns).  Pointers
 *    between objects of the same store never dangle.  Objects of two
 *    stores must not be mixed.
 *  - Every value held in a global, a table, an exception or an element
 *    segment uses the SLOT representation below, the same one the
 *    interpreter's operand stack uses, so copying is a plain slot copy.
 *  - A memory's `data` may MOVE when the memory grows (mremap).  Code that
 *    may grow a memory (memory.grow, a call that can reach memory.grow or a
 *    host function) must reload `data` afterwards.  `data` is never NULL,
 *    even for a zero-sized memory, so a zero-length memcpy on it is fine.
 *  - A table's `elems` may move on grow likewise; never NULL.
 *
 * Slot representation (uint64_t slots[2]):
 *   i32, f32   slots[0] = the 32 bits, zero-extended (f32 as IEEE bits)
 *   i64, f64   slots[0] = the 64 bits (f64 as IEEE bits)
 *   v128       slots[0] = lo, slots[1] = hi (wasm_v128 order)
 *   any ref    slots[0] = (uint64_t)wasm_ref
 * Types other than v128 use one slot; wasm_valtype_slots() says how many.
 *
 * References: a funcref is a wasm_func*, an exnref a wasm_exn*; both are
 * malloc'd and therefore even.  Host externrefs (wasm_ref_extern) are odd.
 * Null is 0 for every reference type.
 */
#ifndef HOSTEL_WASM_STORE_H
#define HOSTEL_WASM_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "wasm/wasm.h"

/* Bytes per linear-memory page (no custom-page-sizes yet). */
#define WASM_PAGE_SIZE 65536u
/* Page caps: 4 GiB for 32-bit memories; 2^48 pages (2^64 bytes) for 64. */
#define WASM_MAX_PAGES32 65536ull
#define WASM_MAX_PAGES64 (1ull << 48)
/* Returned by wasm_store_intern_type when it cannot allocate. */
#define WASM_TYPE_ID_NONE UINT32_MAX

/* ---- functions --------------------------------------------------------- */

typedef enum wasm_func_kind {
	WASM_FUNC_WASM = 0, /* defined in a module; runs in the interpreter */
	WASM_FUNC_HOST = 1, /* wasm_func_new_host */
} wasm_func_kind;

struct wasm_func {
	/*
	 * The store-interned id of the function's type: two functions have
	 * structurally equal types iff their ids are equal (call_indirect
	 * compares this against the instance's type_ids[typeidx]).
	 */
	uint32_t type_id;
	wasm_func_kind kind;
	const wasm_functype *type; /* interned; lives as long as the store */
	union {
		struct {
			wasm_instance *inst;
			uint32_t funcidx; /* in inst->module's function space */
			/* module->compiled[funcidx - nimported_funcs] */
			const struct wasm_compiled *code;
		} wasm;
		struct {
			wasm_host_fn fn;
			void *env;
		} host;
	} u;
};

/* ---- memories ---------------------------------------------------------- */

struct wasm_memory {
	uint8_t *data;	    /* never NULL; may move on grow */
	uint64_t size;	    /* in bytes: a multiple of WASM_PAGE_SIZE */
	uint64_t max_pages; /* effective: type's max, index cap, store limit */
	wasm_memtype type;  /* as created; limits.min is the initial size */
	size_t mapped;	    /* bytes mapped (>= size, >= one OS page) */
	/*
	 * The written map (issue 22, durability "commit"): a byte per page,
	 * nonzero when the page may have been written since the map was
	 * last cleared (a snapshot with a base clears it: wasm/snapshot.h).
	 * A page counts as written when it or the page before it is marked:
	 * the interpreter's scalar and SIMD stores (16 bytes at most) mark
	 * only the page of their first byte, one store on the hot path.
	 * Every write to `data` marks: those stores, bulk memory ops (their
	 * whole range), the host through wasm_memory_write or
	 * wasm_memory_mark; wasm_memory_data marks every page (a caller may
	 * write anywhere).  A new memory is all marked; pages a grow adds
	 * are not (they are zero, as the base takes them).  Never NULL; may
	 * move on grow.
	 */
	uint8_t *written;
};

/* Mark [off, off + len) written (the caller checked the bounds). */
static inline void wasm_memory_mark(wasm_memory *m, uint64_t off,
				    uint64_t len)
{
	uint64_t a = off / WASM_PAGE_SIZE, b;

	if (len == 0)
		return;
	b = (off + len - 1) / WASM_PAGE_SIZE;
	m->written[a] = 1;
	if (b != a)
		memset(m->written + a + 1, 1, (size_t)(b - a));
}

/*
 * memory.grow: returns the old size in pages, or -1 when the new size
 * would pass max_pages or the mapping cannot grow (the spec lets growth
 * fail).  New bytes read as zero.  `data` may move.
 */
int64_t wasm_memory_grow(wasm_memory *m, uint64_t delta_pages);

static inline uint64_t wasm_memory_pages(const wasm_memory *m)
{
	return m->size / WASM_PAGE_SIZE;
}

/* ---- tables ------------------------------------------------------------ */

struct wasm_table_inst {
	wasm_ref *elems; /* never NULL; may move on grow */
	uint64_t size;	 /* in elements */
	uint64_t max;	 /* effective: type's max, index cap, store limit */
	wasm_tabletype type;
	uint64_t cap; /* allocated elements (>= size, >= 1) */
};

/*
 * table.grow: returns the old size, or -1 when size + delta would pass
 * max or allocation fails.  New elements are `init`.
 */
int64_t wasm_table_grow(wasm_table_inst *t, uint64_t delta, wasm_ref init);

/* ---- globals ----------------------------------------------------------- */

struct wasm_global_inst {
	uint64_t slots[2]; /* the value, slot representation (see top) */
	wasm_globaltype type;
};

/* ---- tags and exceptions ----------------------------------------------- */

/* A tag instance; its identity is its address. */
struct wasm_tag {
	uint32_t type_id;
	const wasm_functype *type; /* interned; params are the payload */
};

/*
 * An exception object (exnref).  The payload is the tag type's params in
 * slot representation, back to back (a v128 takes two slots).  Owned by
 * the store; exn.c frees the ones nothing can reach any more (see
 * wasm_store_collect_exns), so a guest that throws and catches in a loop
 * runs in bounded memory.
 */
struct wasm_exn {
	wasm_tag *tag;
	uint32_t nslots;
	uint64_t slots[];
};

/* Live exception bytes a store allows when its limits say 0. */
#define WASM_DEFAULT_MAX_EXCEPTION_BYTES (64u << 20)

/*
 * Allocates an exception carrying `nslots` slots copied from `slots`.
 * When the store's live exceptions have grown enough since the last
 * collection it collects first, and *work says how much that did (in
 * fuel units: charge it to the guest; 0 without a collection).  Returns
 * NULL when out of memory or when the live exceptions would pass the
 * store's max_exception_bytes.
 */
wasm_exn *wasm_exn_new(wasm_store *s, wasm_tag *tag, const uint64_t *slots,
		       uint32_t nslots, uint64_t *work);

/*
 * Frees every exception of the store that no root reaches: the value
 * stacks and pending exceptions of the store's execs (all
 * of them, suspended ones included), its exnref globals and tables, and
 * the payloads of exceptions so reached.  Stacks are untyped, so they are
 * scanned conservatively: any slot that equals a live exception's address
 * keeps it.  The host must not keep an exnref anywhere else across a call
 * into the store.  Returns how many were freed (0 also when the scratch
 * space for the collection cannot be allocated).
 */
size_t wasm_store_collect_exns(wasm_store *s);

/*
 * For a restore (runtime/wasm/snapshot.c), which writes every exnref of
 * the store again: null every exnref slot of the store's globals and
 * tables and free every exception.
 */
void wasm_store_reset_exns(wasm_store *s);

/*
 * An exception a restore makes: as wasm_exn_new, but it never collects
 * (the ones the restore made before are not reachable yet: nothing
 * holds them until the globals and tables are read).  NULL when out of
 * memory or when the live exceptions would pass max_exception_bytes.
 */
wasm_exn *wasm_exn_restore(wasm_store *s, wasm_tag *tag, const uint64_t *slots,
			   uint32_t nslots);

/* ---- instances --------------------------------------------------------- */

/* An element segment instance: its references; len becomes 0 on drop. */
typedef struct wasm_elem_inst {
	wasm_ref *refs;
	uint32_t len;
} wasm_elem_inst;

/* A data segment instance: bytes in the module; len becomes 0 on drop. */
typedef struct wasm_data_inst {
	const uint8_t *bytes;
	uint32_t len;
} wasm_data_inst;

struct wasm_instance {
	/* Index spaces, imports first (as in the module). */
	wasm_memory **memories;
	wasm_global_inst **globals;
	wasm_func **funcs;
	wasm_table_inst **tables;
	/* Interned id of each of the module's types, by type index. */
	uint32_t *type_ids;
	wasm_tag **tags;
	wasm_elem_inst *elems; /* module->nelems entries */
	wasm_data_inst *datas; /* module->ndatas entries */

	const wasm_module *module;
	wasm_store *store;
	/* Indices into module->exports, sorted by name (byte order). */
	uint32_t *export_order;
};

/* ---- store ------------------------------------------------------------- */

typedef enum wasm_obj_kind {
	WASM_OBJ_FUNC,
	WASM_OBJ_MEMORY,
	WASM_OBJ_TABLE,
	WASM_OBJ_GLOBAL,
	WASM_OBJ_TAG,
	WASM_OBJ_INSTANCE,
} wasm_obj_kind;

typedef struct wasm_store_obj {
	void *ptr;
	wasm_obj_kind kind;
} wasm_store_obj;

struct wasm_store {
	wasm_store_limits limits;

	/* Every object the store owns, freed in reverse order. */
	wasm_store_obj *objs;
	size_t nobjs, objs_cap;

	/* Exception objects (exn.c), apart: collection frees them early. */
	wasm_exn **exns;
	size_t nexns, exns_cap;
	size_t exn_bytes;      /* live, as counted by exn.c */
	size_t exn_kept;       /* what the last collection kept */
	bool exn_refused;      /* a throw failed since: may collect */
	size_t exn_collect_at; /* collect when exn_bytes would pass this */
	/* Every exec of the store (exec.c links them): collection's roots. */
	struct wasm_exec *execs;

	/* Interned function types: id i is types[i]. */
	wasm_functype **types;
	uint32_t ntypes, types_cap;
	/* Open-addressing hash of type ids (+1; 0 is empty), power of 2. */
	uint32_t *type_hash;
	uint32_t type_hash_cap;
};

/*
 * The id of a function type, structurally compared (same params and
 * results in order).  The store keeps its own copy, so `ft` need not
 * outlive the call.  Returns WASM_TYPE_ID_NONE when out of memory.
 */
uint32_t wasm_store_intern_type(wasm_store *s, const wasm_functype *ft);

/* The interned type with id `id` (< s->ntypes). */
static inline const wasm_functype *wasm_store_type(const wasm_store *s,
						   uint32_t id)
{
	return s->types[id];
}

/*
 * Record `ptr` as owned by the store, freed with it according to `kind`.
 * Returns 0, or -1 when out of memory (then the caller still owns ptr).
 */
int wasm_store_own(wasm_store *s, void *ptr, wasm_obj_kind kind);

/* ---- values ------------------------------------------------------------ */

static inline void wasm_val_to_slots(const wasm_val *v, uint64_t *slots)
{
	switch ((uint8_t)v->type) {
	case WASM_I32:
		slots[0] = v->u.i32;
		break;
	case WASM_F32:
		slots[0] = v->u.f32;
		break;
	case WASM_I64:
		slots[0] = v->u.i64;
		break;
	case WASM_F64:
		slots[0] = v->u.f64;
		break;
	case WASM_V128:
		slots[0] = v->u.v128.lo;
		slots[1] = v->u.v128.hi;
		break;
	default: /* references */
		slots[0] = (uint64_t)v->u.ref;
		break;
	}
}

static inline wasm_val wasm_val_from_slots(wasm_valtype t,
					   const uint64_t *slots)
{
	wasm_val v;

	memset(&v, 0, sizeof v);
	v.type = t;
	switch ((uint8_t)t) {
	case WASM_I32:
		v.u.i32 = (uint32_t)slots[0];
		break;
	case WASM_F32:
		v.u.f32 = (uint32_t)slots[0];
		break;
	case WASM_I64:
		v.u.i64 = slots[0];
		break;
	case WASM_F64:
		v.u.f64 = slots[0];
		break;
	case WASM_V128:
		v.u.v128.lo = slots[0];
		v.u.v128.hi = slots[1];
		break;
	default:
		v.u.ref = (wasm_ref)slots[0];
		break;
	}
	return v;
}

#endif
