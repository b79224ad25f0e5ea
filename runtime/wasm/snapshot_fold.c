/*
 * snapshot_fold.c - folding a delta's core section into the full
 * snapshot's before it (issue 22 point 5, durability "commit"): the core
 * section a full snapshot of the store would have after the delta, made
 * from the two sections' bytes alone, with no store.
 *
 * Why it exists: under commit a service's rows grow by a delta at every
 * commit; folding them into the full snapshot in the history's writer
 * keeps the database bounded without the event loop writing a new full
 * snapshot of the live store (6.8 ms and 4 MB for the 12 MB
 * componentize-js guest, on the loop, in one commit).
 *
 * Contract (wasm/snapshot.h has the format):
 *  - Memories: the newer section's size and type; its pages where it
 *    lists them (a delta lists every page that changed, one that became
 *    zero included), the older section's elsewhere; all-zero pages are
 *    left out, as a full snapshot leaves them out.  So the result is
 *    byte for byte the core section a full snapshot of the store after
 *    the delta would hold.
 *  - Heap objects (exceptions), globals, tables and segment lengths:
 *    the newer section's, copied (a delta writes them whole, and its
 *    references name its own heap objects).
 *  - The two sections must have the same shape (instances, and each
 *    instance's counts of functions, memories, globals, tables and
 *    segments; each memory's index type and minimum) and a memory may
 *    not shrink: otherwise WASM_SNAP_MISMATCH.  Every count, length and
 *    index is checked against the bytes left: a truncated or corrupted
 *    section is WASM_SNAP_MALFORMED, never an abort.  The output is
 *    bounded by its buffer's max (WASM_SNAP_TOO_LARGE).
 *  - What the values mean is not checked here (a function reference's
 *    instance, its type): the restore of the result checks them against
 *    the store, as it checks any snapshot.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "wasm/module.h"
#include "wasm/store.h"
#include "wasm/snapshot.h"

typedef struct fold {
	wasm_snap_reader *older, *newer;
	wasm_snap_buf *out;
	char *why;
	size_t whylen;
} fold;

#define TRUNC(f, which)                                                        \
	wasm_snap_fail((f)->why, (f)->whylen, WASM_SNAP_MALFORMED,             \
		       "truncated %s core section", which)

/* A reference as the writer puts it (wasm/snapshot.c put_ref). */
static bool skip_ref(wasm_snap_reader *r)
{
	uint8_t tag;

	if (!wasm_snap_get_u8(r, &tag))
		return false;
	switch (tag) {
	case WASM_SNAP_REF_NULL:
		return true;
	case WASM_SNAP_REF_WASM:
		return wasm_snap_take(r, 12) != NULL;
	case WASM_SNAP_REF_HOST:
		return wasm_snap_take(r, 8) != NULL;
	case WASM_SNAP_REF_HEAP:
		return wasm_snap_take(r, 4) != NULL;
	default:
		return false;
	}
}

static bool skip_value(wasm_snap_reader *r, uint32_t type)
{
	switch ((uint8_t)type) {
	case WASM_I32:
	case WASM_F32:
		return wasm_snap_take(r, 4) != NULL;
	case WASM_I64:
	case WASM_F64:
		return wasm_snap_take(r, 8) != NULL;
	case WASM_V128:
		return wasm_snap_take(r, 16) != NULL;
	default:
		return skip_ref(r);
	}
}

/* Skip a global (type, mutability, value). */
static bool skip_global(wasm_snap_reader *r)
{
	uint32_t type;
	uint8_t mut;

	return wasm_snap_get_u32(r, &type) && wasm_snap_get_u8(r, &mut) &&
	       skip_value(r, type);
}

/* Skip the heap objects (exceptions: kind, instance, tag, its type id,
 * then typed values). */
static bool skip_heap(wasm_snap_reader *r)
{
	uint32_t n, nv, vt;
	uint8_t kind;

	if (!wasm_snap_get_u32(r, &n) ||
	    n > wasm_snap_left(r) / WASM_SNAP_HEAP_MIN_BYTES)
		return false;
	for (uint32_t k = 0; k < n; k++) {
		if (!wasm_snap_get_u8(r, &kind) || kind != WASM_SNAP_HEAP_EXN ||
		    wasm_snap_take(r, 12) == NULL ||
		    !wasm_snap_get_u32(r, &nv) || nv > wasm_snap_left(r) / 5)
			return false;
		for (uint32_t i = 0; i < nv; i++)
			if (!wasm_snap_get_u32(r, &vt) || !skip_value(r, vt))
				return false;
	}
	return true;
}

/* Skip a table (element type, size, runs of elements). */
static bool skip_table(wasm_snap_reader *r)
{
	uint32_t elem;
	uint64_t size, runs, count;

	if (!wasm_snap_get_u32(r, &elem) || !wasm_snap_get_u64(r, &size) ||
	    !wasm_snap_get_u64(r, &runs) || runs > wasm_snap_left(r) / 9)
		return false;
	for (uint64_t j = 0; j < runs; j++)
		if (!wasm_snap_get_u64(r, &count) || !skip_ref(r))
			return false;
	return true;
}

/* A memory's head and the start of its page list. */
typedef struct mem_in {
	uint8_t is64;
	uint64_t min, pages, n, k, idx, prev;
	const uint8_t *page;
} mem_in;

static bool mem_head(wasm_snap_reader *r, mem_in *m)
{
	memset(m, 0, sizeof *m);
	return wasm_snap_get_u8(r, &m->is64) && wasm_snap_get_u64(r, &m->min) &&
	       wasm_snap_get_u64(r, &m->pages) &&
	       wasm_snap_get_u64(r, &m->n) && m->n <= m->pages &&
	       m->n <= wasm_snap_left(r) / (8 + WASM_PAGE_SIZE);
}

/* The next listed page of m into idx/page; idx = UINT64_MAX past the
 * last.  false: out of order or past the memory's end. */
static bool mem_next(wasm_snap_reader *r, mem_in *m)
{
	if (m->k == m->n) {
		m->idx = UINT64_MAX;
		return true;
	}
	if (!wasm_snap_get_u64(r, &m->idx) ||
	    (m->page = wasm_snap_take(r, WASM_PAGE_SIZE)) == NULL ||
	    m->idx >= m->pages || (m->k > 0 && m->idx <= m->prev))
		return false;
	m->prev = m->idx;
	m->k++;
	return true;
}

static wasm_snap_status fold_memory(fold *f, const char *where)
{
	mem_in o, n;
	uint64_t written = 0;
	size_t at;

	if (!mem_head(f->older, &o))
		return TRUNC(f, "older");
	if (!mem_head(f->newer, &n))
		return TRUNC(f, "newer");
	if (o.is64 != n.is64 || o.min != n.min || n.pages < o.pages)
		return wasm_snap_fail(f->why, f->whylen, WASM_SNAP_MISMATCH,
				      "%s: its type differs or it shrank",
				      where);
	wasm_snap_u8(f->out, n.is64);
	wasm_snap_u64(f->out, n.min);
	wasm_snap_u64(f->out, n.pages);
	at = f->out->len;
	wasm_snap_u64(f->out, 0); /* patched: pages written */
	if (!mem_next(f->older, &o) || !mem_next(f->newer, &n))
		goto bad;
	while ((o.idx != UINT64_MAX || n.idx != UINT64_MAX) &&
	       !f->out->failed) {
		bool from_new = n.idx <= o.idx;
		const mem_in *w = from_new ? &n : &o;

		if (!wasm_snap_page_zero(w->page)) {
			wasm_snap_u64(f->out, w->idx);
			wasm_snap_put(f->out, w->page, WASM_PAGE_SIZE);
			written++;
		}
		if (n.idx == o.idx && !mem_next(f->older, &o))
			goto bad;
		if (!mem_next(from_new ? f->newer : f->older,
			      from_new ? &n : &o))
			goto bad;
	}
	wasm_snap_patch_u64(f->out, at, written);
	return WASM_SNAP_OK;
bad:
	return wasm_snap_fail(f->why, f->whylen, WASM_SNAP_MALFORMED,
			      "%s: a page out of order or truncated", where);
}

/* Copy what the newer section holds from its offset `from` on. */
static void copy_newer(fold *f, size_t from)
{
	wasm_snap_put(f->out, f->newer->p + from, f->newer->off - from);
}

/* The heap objects: the newer's (its references name them). */
static wasm_snap_status fold_heap(fold *f)
{
	size_t from = f->newer->off;

	if (!skip_heap(f->older) || !skip_heap(f->newer))
		return TRUNC(f, "a");
	copy_newer(f, from);
	return WASM_SNAP_OK;
}

static wasm_snap_status fold_instance(fold *f, uint32_t ord)
{
	uint32_t so[6], sn[6];
	char where[64];
	size_t from;
	wasm_snap_status st;

	for (int i = 0; i < 6; i++)
		if (!wasm_snap_get_u32(f->older, &so[i]) ||
		    !wasm_snap_get_u32(f->newer, &sn[i]))
			return TRUNC(f, "a");
	if (memcmp(so, sn, sizeof so))
		return wasm_snap_fail(f->why, f->whylen, WASM_SNAP_MISMATCH,
				      "core instance %u: a different module",
				      ord);
	for (int i = 0; i < 6; i++)
		wasm_snap_u32(f->out, sn[i]);
	for (uint32_t i = 0; i < sn[1]; i++) {
		snprintf(where, sizeof where,
			 "defined memory %u of core instance %u", i, ord);
		if ((st = fold_memory(f, where)))
			return st;
	}
	from = f->newer->off;
	for (uint32_t i = 0; i < sn[2]; i++)
		if (!skip_global(f->older) || !skip_global(f->newer))
			return TRUNC(f, "a");
	for (uint32_t i = 0; i < sn[3]; i++)
		if (!skip_table(f->older) || !skip_table(f->newer))
			return TRUNC(f, "a");
	/* segments: a u32 each */
	if ((uint64_t)sn[4] + sn[5] > wasm_snap_left(f->older) / 4 ||
	    (uint64_t)sn[4] + sn[5] > wasm_snap_left(f->newer) / 4)
		return TRUNC(f, "a");
	f->older->off += ((size_t)sn[4] + sn[5]) * 4;
	f->newer->off += ((size_t)sn[4] + sn[5]) * 4;
	copy_newer(f, from);
	return WASM_SNAP_OK;
}

wasm_snap_status wasm_snap_fold_core(wasm_snap_reader *older,
				     wasm_snap_reader *newer,
				     wasm_snap_buf *out, char *why,
				     size_t whylen)
{
	fold f = {older, newer, out, why, whylen};
	uint32_t no, nn;
	wasm_snap_status st = WASM_SNAP_OK;

	if (!wasm_snap_get_u32(older, &no) || !wasm_snap_get_u32(newer, &nn))
		return TRUNC(&f, "a");
	if (no != nn)
		return wasm_snap_fail(why, whylen, WASM_SNAP_MISMATCH,
				      "%u core instances against %u", no, nn);
	wasm_snap_u32(out, nn);
	st = fold_heap(&f);
	for (uint32_t i = 0; i < nn && st == WASM_SNAP_OK && !out->failed; i++)
		st = fold_instance(&f, i);
	if (st == WASM_SNAP_OK && !out->failed &&
	    (wasm_snap_left(older) || wasm_snap_left(newer)))
		st = wasm_snap_fail(why, whylen, WASM_SNAP_MALFORMED,
				    "bytes past a core section's end");
	if (st == WASM_SNAP_OK && out->failed)
		st = wasm_snap_fail(why, whylen, out->failed,
				    out->failed == WASM_SNAP_NOMEM
					    ? "out of memory"
					    : "the folded snapshot would pass "
					      "its limit of %zu bytes",
				    out->max);
	return st;
}
