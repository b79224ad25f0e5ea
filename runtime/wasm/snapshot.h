/*
 * snapshot.h - the core half of a store snapshot (issue 22): the state of
 * every core instance of a wasm_store as plain data, and the byte buffer
 * and bounded reader the run-level wrapper (runtime/run/snapshot.h) frames
 * it with.  Engine-internal: embedders use run/snapshot.h.
 *
 * Contract:
 *  - What is written: for each module instance of the store, in the
 *    order the store made them (instantiation order, which a fresh
 *    instantiation of the same component repeats), its *defined*
 *    memories (the touched pages only: an all-zero page is left out),
 *    globals (values), tables (elements, as runs of one reference: u64
 *    runs, then each a u64 count and the reference) and the current
 *    length of each element and data segment (0 once dropped).  Imported objects are
 *    written once, by the instance that defines them.  No host address
 *    is written: a function reference is (instance ordinal, function
 *    index) for a module's function and the ordinal among the store's
 *    host functions for a host function (canon lower trampolines and
 *    built-ins, which instantiation also makes in a fixed order), each
 *    with its store type id as a check.
 *  - Heap objects, before the instances: the exceptions (exnref) the
 *    instances' globals and tables and the frames of the store's
 *    suspended execs (the slots the compiler lists as references at
 *    the point each stands, which wasm_exec_snapshot writes:
 *    wasm_exec_each_ref) reach, directly or through other exceptions'
 *    payloads, each as its tag (the first instance and tag index that
 *    has it) and its payload as typed values, in an order where a
 *    payload only names earlier ones (exceptions never change once
 *    made); an exnref is the index of its object.  Exceptions nothing
 *    reaches are not written.  The kinds are tagged, so a GC heap's
 *    objects can join them (since format 5).
 *  - What is refused ("not supported yet: ..."): a non-null externref in
 *    a global or a table (a host value: "not supported: ..."; a
 *    component's externrefs are all null), an exception of a tag no instance has, core
 *    objects the host made outside of an instance (wasm_memory_new and
 *    friends).
 *  - Restoring writes the snapshot over a store freshly instantiated
 *    from the same component: the shapes must match exactly (instances,
 *    their numbers of functions, memories, globals, tables and segments,
 *    each memory's index type and minimum, each global's and table's
 *    type); memories and tables may only grow to the snapshot's sizes,
 *    within the store's limits.  Every count, length and index is
 *    checked against the bytes left and the fresh store (an exception's
 *    tag type, each payload value's type, an exnref only to an object
 *    made before it, the store's max_exception_bytes); a bad snapshot
 *    is an error, never an abort.  The fresh store's own exceptions are
 *    dropped first (wasm_store_reset_exns): every exnref is written
 *    again, and the store's exceptions are then exactly the image's, in
 *    the order of their indices (s->exns), which is how the run-level
 *    sections' frames name them (wasm_snap_get_slot_ref) until guest
 *    code runs.  On an error the store is left partly
 *    overwritten: the caller must free it.
 *
 *  - Deltas (durability "commit"): the same section written against a
 *    base (wasm_snap_base), holding only the memory pages that changed
 *    since the base was taken; everything else is written whole.
 *
 * Encoding: little-endian fixed-width integers (u8, u32, u64).
 */
#ifndef HOSTEL_WASM_SNAPSHOT_H
#define HOSTEL_WASM_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wasm/wasm.h"

typedef enum wasm_snap_status {
	WASM_SNAP_OK = 0,
	WASM_SNAP_MALFORMED,   /* truncated, corrupted, a bad index */
	WASM_SNAP_MISMATCH,    /* well-formed, but not of this store's shape */
	WASM_SNAP_UNSUPPORTED, /* the store holds what cannot be written yet */
	WASM_SNAP_NOMEM,
	WASM_SNAP_TOO_LARGE, /* past the buffer's bound */
} wasm_snap_status;

/* A growing output buffer, bounded by max (bytes). */
typedef struct wasm_snap_buf {
	uint8_t *p;
	size_t len, cap, max;
	wasm_snap_status failed; /* sticky: the first failure */
} wasm_snap_buf;

void wasm_snap_put(wasm_snap_buf *b, const void *p, size_t n);
void wasm_snap_u8(wasm_snap_buf *b, uint8_t v);
void wasm_snap_u32(wasm_snap_buf *b, uint32_t v);
void wasm_snap_u64(wasm_snap_buf *b, uint64_t v);
/* Overwrite 8 bytes at off (< len - 7) with v: a section's length. */
void wasm_snap_patch_u64(wasm_snap_buf *b, size_t off, uint64_t v);

/* A bounded reader: every get checks the bytes left. */
typedef struct wasm_snap_reader {
	const uint8_t *p;
	size_t len, off;
} wasm_snap_reader;

static inline size_t wasm_snap_left(const wasm_snap_reader *r)
{
	return r->len - r->off;
}

bool wasm_snap_get(wasm_snap_reader *r, void *out, size_t n);
bool wasm_snap_get_u8(wasm_snap_reader *r, uint8_t *v);
bool wasm_snap_get_u32(wasm_snap_reader *r, uint32_t *v);
bool wasm_snap_get_u64(wasm_snap_reader *r, uint64_t *v);
/* A pointer to the next n bytes (and skip them), or NULL. */
const uint8_t *wasm_snap_take(wasm_snap_reader *r, size_t n);

/* How a reference is tagged (u8): null, a module's function (then u32
 * instance, u32 function), a host function (then u32 ordinal), both
 * ending with the u32 store type id; a heap object (an exception: then
 * u32 its index in the core section's heap objects). */
enum {
	WASM_SNAP_REF_NULL = 0,
	WASM_SNAP_REF_WASM = 1,
	WASM_SNAP_REF_HOST = 2,
	WASM_SNAP_REF_HEAP = 3,
};

/* A heap object's kind (u8): an exception.  A GC heap adds kinds. */
enum {
	WASM_SNAP_HEAP_EXN = 1,
};
/* The fewest bytes a heap object takes (an exception: kind, instance,
 * tag, type id, value count): what a count is checked against. */
#define WASM_SNAP_HEAP_MIN_BYTES 17u

/* Whether a page (WASM_PAGE_SIZE bytes) is all zero. */
bool wasm_snap_page_zero(const uint8_t *p);

/* FNV-1a (64 bits, a word at a time): any change to one word shows. */
uint64_t wasm_snap_checksum(const uint8_t *p, size_t n);

/* Write the reason of a failure into why (when given) and return st. */
wasm_snap_status wasm_snap_fail(char *why, size_t whylen, wasm_snap_status st,
				const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * A page's fingerprint for deltas (64 bits; four multiply-rotate lanes
 * and a final mix, so that changes in several words do not cancel as
 * they can under FNV, where flipping the top bit of two words leaves
 * the hash unchanged).
 */
uint64_t wasm_snap_page_hash(const uint8_t *p, size_t n);

/*
 * The base of a delta (issue 22, durability "commit"): the fingerprint
 * of every page of every defined memory as of the last snapshot or
 * delta written with it, memories in the order the snapshot writes
 * them.  Owned by the embedder, one per store; starts empty
 * (wasm_snap_base_init) and is filled by a full snapshot.
 */
typedef struct wasm_snap_base_mem {
	uint64_t npages;
	uint64_t *hash;
} wasm_snap_base_mem;

/* A fingerprint a write changed, applied when the write is kept. */
typedef struct wasm_snap_base_change {
	uint32_t mem;
	uint64_t page, hash;
} wasm_snap_base_change;

typedef struct wasm_snap_base {
	uint32_t nmem;
	wasm_snap_base_mem *mem;
	/* What the last write with it changed, until wasm_snap_base_commit
	 * applies it (fingerprints; the memories whose written maps to
	 * clear) or wasm_snap_base_abort drops it. */
	wasm_snap_base_change *changes;
	size_t nchanges, capchanges;
	wasm_memory **mems;
	uint32_t nmems, capmems;
	/* Check the written maps (tests): a delta reads the pages no map
	 * marked too, and counts in `missed` those that did change (and
	 * writes them, so the delta stays right). */
	bool verify;
	uint64_t missed;
} wasm_snap_base;

void wasm_snap_base_init(wasm_snap_base *base);
void wasm_snap_base_free(wasm_snap_base *base);
/*
 * After a write with base succeeded (and whatever the caller writes
 * after it): take its fingerprints and clear the written maps of the
 * memories it wrote.  abort drops them: a write refused or failed leaves
 * the base and the maps as they were, so the next delta is still right.
 */
void wasm_snap_base_commit(wasm_snap_base *base);
void wasm_snap_base_abort(wasm_snap_base *base);

/*
 * Append the core state of s to b (see the contract).  why gets the
 * reason of a failure.  s is not changed.
 */
wasm_snap_status wasm_store_snapshot(wasm_store *s, wasm_snap_buf *b,
				     char *why, size_t whylen);

/*
 * The same with a base: a full snapshot (delta false) records every
 * page's fingerprint in base; a delta (delta true, base filled by an
 * earlier call) writes, of each memory, only the pages whose
 * fingerprint differs from base (a page past the base's end counts as
 * zero before); base takes the new fingerprints when the caller
 * commits the write (wasm_snap_base_commit).  A delta reads only the
 * pages the memories' written maps mark (wasm/store.h).  A delta's
 * memories keep the layout of a snapshot's; only their meaning differs
 * (wasm_store_restore_delta).
 */
wasm_snap_status wasm_store_snapshot_base(wasm_store *s, wasm_snap_buf *b,
					  wasm_snap_base *base, bool delta,
					  char *why, size_t whylen);

/*
 * Overwrite the core state of s (freshly instantiated) from r, which
 * must hold exactly one core section's payload.
 */
wasm_snap_status wasm_store_restore(wasm_store *s, wasm_snap_reader *r,
				    char *why, size_t whylen);

/*
 * Apply a delta's core section to s, which holds the state of the
 * snapshot (and deltas) before it: memory pages it does not list keep
 * their contents (a full snapshot's unlisted pages are zero); globals,
 * tables and segments are overwritten as by wasm_store_restore.
 */
wasm_snap_status wasm_store_restore_delta(wasm_store *s, wasm_snap_reader *r,
					  char *why, size_t whylen);

/*
 * Fold a delta's core section (newer) into the full snapshot's core
 * section before it (older): append to out the core section a full
 * snapshot of the store after the delta would hold
 * (runtime/wasm/snapshot_fold.c has the contract).  Each reader must
 * hold exactly one section's payload.
 */
wasm_snap_status wasm_snap_fold_core(wasm_snap_reader *older,
				     wasm_snap_reader *newer,
				     wasm_snap_buf *out, char *why,
				     size_t whylen);

/*
 * The store's objects as ordinals, for what the run-level sections refer
 * to: core instances and host functions (in the order the store made
 * them, as the core section), memories (the store's order).  A function
 * is written as the core section's reference; NULL is the null one.
 */
typedef struct wasm_snap_map wasm_snap_map;
wasm_snap_map *wasm_snap_map_new(wasm_store *s, char *why, size_t whylen,
				 wasm_snap_status *st);
void wasm_snap_map_free(wasm_snap_map *m);
wasm_snap_status wasm_snap_put_func(wasm_snap_map *m, wasm_snap_buf *b,
				    const wasm_func *f, char *why,
				    size_t whylen);
wasm_snap_status wasm_snap_get_func(wasm_snap_map *m, wasm_snap_reader *r,
				    wasm_func **f, char *why, size_t whylen);
/*
 * A reference of type t (the store's form) held in a frame's slot, as
 * the core section writes one (v the slot): an exception by the index
 * the core section gave it, as the same walk over the same store gives
 * it again here.  Refused: a non-null externref (a host value),
 * a funcref slot that holds no function of the store and an exnref one
 * that holds no exception the walk reached (so a wrong slot list is a
 * refusal, never a read through a number).  get checks it against t;
 * an exception is one of the store's (the core section's, just
 * restored).
 */
wasm_snap_status wasm_snap_put_slot_ref(wasm_snap_map *m, wasm_snap_buf *b,
					wasm_valtype t, uint64_t v,
					char *why, size_t whylen);
wasm_snap_status wasm_snap_get_slot_ref(wasm_snap_map *m, wasm_snap_reader *r,
					wasm_valtype t, uint64_t *v,
					char *why, size_t whylen);
bool wasm_snap_instance_ordinal(const wasm_snap_map *m,
				const wasm_instance *inst, uint32_t *ord);
wasm_instance *wasm_snap_instance_at(const wasm_snap_map *m, uint32_t ord);
bool wasm_snap_host_ordinal(const wasm_snap_map *m, const wasm_func *f,
			    uint32_t *ord);
wasm_func *wasm_snap_host_at(const wasm_snap_map *m, uint32_t ord);
uint32_t wasm_snap_nhosts(const wasm_snap_map *m);
bool wasm_snap_memory_ordinal(const wasm_snap_map *m, const wasm_memory *mem,
			      uint32_t *ord);
wasm_memory *wasm_snap_memory_at(const wasm_snap_map *m, uint32_t ord);

/*
 * A thread's execution context (runtime/wasm/snapshot_exec.c): idle,
 * blocked inside a host function with its wasm frames, or stopped by a
 * fuel check before a backward branch or a call (code.h parks).
 * Refused: an exec holding an exception, stopped at a tail call's fuel
 * check, inside guest code, or with a frame holding a non-null
 * externref.  Restoring needs an idle exec of
 * the fresh store and checks every frame against the compiled code.
 */
wasm_snap_status wasm_exec_snapshot(const wasm_exec *e, wasm_snap_map *m,
				    wasm_snap_buf *b, char *why,
				    size_t whylen);
wasm_snap_status wasm_exec_restore(wasm_exec *e, wasm_snap_map *m,
				   wasm_snap_reader *r, char *why,
				   size_t whylen);
/*
 * Every reference slot of the frames wasm_exec_snapshot writes of e
 * (none of an exec it refuses or of a frame it refuses), bottom frame
 * first, each as its type and value; a status other than WASM_SNAP_OK
 * ends the walk and is returned.
 */
typedef wasm_snap_status (*wasm_exec_ref_fn)(void *ctx, wasm_valtype t,
					     uint64_t v);
wasm_snap_status wasm_exec_each_ref(const wasm_exec *e, wasm_exec_ref_fn fn,
				    void *ctx);

#endif
