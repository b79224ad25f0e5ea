/*
 * snapshot.c - the core half of a store snapshot (see snapshot.h for the
 * contract and the encoding): write and restore the memories, globals,
 * tables and segment lengths of every module instance of a wasm_store,
 * and the exceptions they reach.
 *
 * Section: u32 ninstances, the heap objects (put_heap), then each
 * instance's payload, in order:
 *   u32 nfuncs (whole function space), u32 ndefined memories,
 *   u32 ndefined globals, u32 ndefined tables, u32 nelems, u32 ndatas
 *   memory:  u8 is64, u64 min pages, u64 pages, u64 nwritten,
 *            nwritten x (u64 page index, strictly increasing; 65536 bytes)
 *   global:  u32 valtype (store form), u8 mutable, value
 *   table:   u32 elem valtype (store form), u64 size, size x ref
 *   segment: u32 length (elements, then data)
 * value: i32/f32 u32, i64/f64 u64, v128 u64 lo + u64 hi, reference: ref.
 * ref:   u8 0 null | 1 module function: u32 instance, u32 funcidx,
 *        u32 type id | 2 host function: u32 ordinal, u32 type id |
 *        3 heap object (an exnref): u32 its index.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - wasm_snap_put: the output buffer doubles up to b->max, the caller's
 *    bound (CM_SNAPSHOT_MAX_BYTES); past it WASM_SNAP_TOO_LARGE.
 *  - the lookup arrays of wasm_store_snapshot and wasm_store_restore:
 *    one pointer per object the store owns (s->nobjs), which its
 *    instantiation bounded; the heap walk's: a few words per live
 *    exception (max_exception_bytes bounded them) and per tag.
 *  - restoring heap objects: one pointer per exception made, which
 *    counts against the store's max_exception_bytes (the list grows
 *    with them, not with the count the image claims), and one payload
 *    buffer sized by the store's largest tag type.
 *  - restore grows memories and tables to the snapshot's sizes only
 *    within the store's limits (max_pages, max); a table is grown only
 *    when the bytes left hold that many elements (one byte each at
 *    least), so a short snapshot cannot ask for a large table.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasm/exec.h"
#include "wasm/snapshot.h"
#include "wasm/store.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME  0x100000001b3ull

enum {
	REF_NULL = WASM_SNAP_REF_NULL,
	REF_WASM = WASM_SNAP_REF_WASM,
	REF_HOST = WASM_SNAP_REF_HOST,
	REF_HEAP = WASM_SNAP_REF_HEAP,
};

/* ---- buffer and reader ----------------------------------------------- */

void wasm_snap_put(wasm_snap_buf *b, const void *p, size_t n)
{
	if (b->failed)
		return;
	if (n > b->max - b->len) {
		b->failed = WASM_SNAP_TOO_LARGE;
		return;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *q;

		while (cap < b->len + n)
			cap = cap > b->max / 2 ? b->max : cap * 2;
		q = realloc(b->p, cap);
		if (q == NULL) {
			b->failed = WASM_SNAP_NOMEM;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

void wasm_snap_u8(wasm_snap_buf *b, uint8_t v)
{
	wasm_snap_put(b, &v, 1);
}

void wasm_snap_u32(wasm_snap_buf *b, uint32_t v)
{
	uint8_t x[4];

	for (int i = 0; i < 4; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	wasm_snap_put(b, x, 4);
}

void wasm_snap_u64(wasm_snap_buf *b, uint64_t v)
{
	uint8_t x[8];

	for (int i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	wasm_snap_put(b, x, 8);
}

void wasm_snap_patch_u64(wasm_snap_buf *b, size_t off, uint64_t v)
{
	if (b->failed || off > b->len || b->len - off < 8)
		return;
	for (int i = 0; i < 8; i++)
		b->p[off + i] = (uint8_t)(v >> (8 * i));
}

bool wasm_snap_get(wasm_snap_reader *r, void *out, size_t n)
{
	if (n > wasm_snap_left(r))
		return false;
	memcpy(out, r->p + r->off, n);
	r->off += n;
	return true;
}

const uint8_t *wasm_snap_take(wasm_snap_reader *r, size_t n)
{
	const uint8_t *p;

	if (n > wasm_snap_left(r))
		return NULL;
	p = r->p + r->off;
	r->off += n;
	return p;
}

bool wasm_snap_get_u8(wasm_snap_reader *r, uint8_t *v)
{
	return wasm_snap_get(r, v, 1);
}

bool wasm_snap_get_u32(wasm_snap_reader *r, uint32_t *v)
{
	const uint8_t *x = wasm_snap_take(r, 4);

	if (x == NULL)
		return false;
	*v = (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 |
	     (uint32_t)x[3] << 24;
	return true;
}

bool wasm_snap_get_u64(wasm_snap_reader *r, uint64_t *v)
{
	const uint8_t *x = wasm_snap_take(r, 8);

	if (x == NULL)
		return false;
	*v = 0;
	for (int i = 7; i >= 0; i--)
		*v = *v << 8 | x[i];
	return true;
}

uint64_t wasm_snap_checksum(const uint8_t *p, size_t n)
{
	uint64_t h = FNV_OFFSET;
	size_t i = 0;

	/* A word a step: memories make most of a snapshot. */
	for (; n - i >= 8; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = (h ^ w) * FNV_PRIME;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * FNV_PRIME;
	return h;
}

/*
 * Four independent lanes, so the loop runs at memory speed: each word
 * is multiplied (odd constant), xored into its lane, rotated and
 * multiplied again, every step a bijection of the word and of the lane,
 * and the rotation carries a top-bit change down where the next
 * multiplication spreads it.  Lanes and length then go through the
 * splitmix64 finalizer.
 */
#define MIX_K1 0x9e3779b97f4a7c15ull
#define MIX_K2 0xbf58476d1ce4e5b9ull
#define MIX_K3 0x94d049bb133111ebull

static inline uint64_t rotl64(uint64_t x, int r)
{
	return x << r | x >> (64 - r);
}

static inline uint64_t lane_step(uint64_t v, uint64_t w)
{
	return rotl64(v ^ (w * MIX_K1), 29) * MIX_K2;
}

static inline uint64_t finalize(uint64_t h)
{
	h ^= h >> 30;
	h *= MIX_K2;
	h ^= h >> 27;
	h *= MIX_K3;
	return h ^ (h >> 31);
}

/* p NULL: n zero bytes (a fresh page's fingerprint, without a page). */
static uint64_t page_hash(const uint8_t *p, size_t n)
{
	uint64_t v[4] = {MIX_K1, MIX_K2, MIX_K3, ~MIX_K1}, h;
	size_t i = 0;

	for (; n - i >= 32; i += 32)
		for (int k = 0; k < 4; k++) {
			uint64_t w = 0;

			if (p)
				memcpy(&w, p + i + 8 * (size_t)k, 8);
			v[k] = lane_step(v[k], w);
		}
	for (int k = 0; i < n; i++, k = (k + 1) & 3)
		v[k] = lane_step(v[k], p ? p[i] : 0);
	h = (uint64_t)n;
	for (int k = 0; k < 4; k++)
		h = finalize(h ^ v[k]);
	return h;
}

uint64_t wasm_snap_page_hash(const uint8_t *p, size_t n)
{
	return page_hash(p, n);
}

void wasm_snap_base_init(wasm_snap_base *base)
{
	memset(base, 0, sizeof *base);
}

void wasm_snap_base_free(wasm_snap_base *base)
{
	for (uint32_t i = 0; i < base->nmem; i++)
		free(base->mem[i].hash);
	free(base->mem);
	free(base->changes);
	free(base->mems);
	wasm_snap_base_init(base);
}

void wasm_snap_base_abort(wasm_snap_base *base)
{
	base->nchanges = 0;
	base->nmems = 0;
}

void wasm_snap_base_commit(wasm_snap_base *base)
{
	for (size_t i = 0; i < base->nchanges; i++) {
		const wasm_snap_base_change *c = &base->changes[i];

		base->mem[c->mem].hash[c->page] = c->hash;
	}
	for (uint32_t i = 0; i < base->nmems; i++) {
		wasm_memory *m = base->mems[i];
		uint64_t pages = wasm_memory_pages(m);

		memset(m->written, 0, pages ? (size_t)pages : 1);
	}
	wasm_snap_base_abort(base);
}

/* Record a changed fingerprint (false: out of memory). */
static bool base_change(wasm_snap_base *base, uint32_t mem, uint64_t page,
			uint64_t hash)
{
	if (base->nchanges == base->capchanges) {
		size_t cap = base->capchanges ? base->capchanges * 2 : 64;
		wasm_snap_base_change *v =
			realloc(base->changes, cap * sizeof *v);

		if (v == NULL)
			return false;
		base->changes = v;
		base->capchanges = cap;
	}
	base->changes[base->nchanges++] =
		(wasm_snap_base_change){mem, page, hash};
	return true;
}

static bool base_written(wasm_snap_base *base, wasm_memory *m)
{
	if (base->nmems == base->capmems) {
		uint32_t cap = base->capmems ? base->capmems * 2 : 8;
		wasm_memory **v = realloc(base->mems, cap * sizeof *v);

		if (v == NULL)
			return false;
		base->mems = v;
		base->capmems = cap;
	}
	base->mems[base->nmems++] = m;
	return true;
}

/* ---- the store's objects ---------------------------------------------- */

/* The store's instances and host functions, in the order it made them. */
typedef struct objmap {
	wasm_instance **insts;
	uint32_t ninsts;
	wasm_func **hosts;
	uint32_t nhosts;
	/* sorted copies for address -> ordinal (snapshot only) */
	uintptr_t *inst_sorted, *host_sorted;
	uint32_t *inst_ord, *host_ord;
} objmap;

static void objmap_free(objmap *m)
{
	free(m->insts);
	free(m->hosts);
	free(m->inst_sorted);
	free(m->host_sorted);
	free(m->inst_ord);
	free(m->host_ord);
}

wasm_snap_status wasm_snap_fail(char *why, size_t whylen, wasm_snap_status st,
				const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && whylen > 0) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return st;
}

/*
 * Fill m; also count the memories and tables the store owns, which must
 * all be some instance's defined ones (else the host made one).
 */
static wasm_snap_status objmap_build(wasm_store *s, objmap *m, char *why,
				     size_t whylen)
{
	size_t nmem = 0, ntab = 0, nglob = 0, dmem = 0, dtab = 0;

	memset(m, 0, sizeof *m);
	m->insts = calloc(s->nobjs ? s->nobjs : 1, sizeof *m->insts);
	m->hosts = calloc(s->nobjs ? s->nobjs : 1, sizeof *m->hosts);
	if (m->insts == NULL || m->hosts == NULL)
		return wasm_snap_fail(why, whylen, WASM_SNAP_NOMEM,
				      "out of memory");
	for (size_t i = 0; i < s->nobjs; i++) {
		const wasm_store_obj *o = &s->objs[i];

		switch (o->kind) {
		case WASM_OBJ_INSTANCE: {
			wasm_instance *inst = o->ptr;

			m->insts[m->ninsts++] = inst;
			dmem += inst->module->nmemories;
			dtab += inst->module->ntables;
			break;
		}
		case WASM_OBJ_FUNC:
			m->hosts[m->nhosts++] = o->ptr;
			break;
		case WASM_OBJ_MEMORY:
			nmem++;
			break;
		case WASM_OBJ_TABLE:
			ntab++;
			break;
		case WASM_OBJ_GLOBAL:
			nglob++;
			break;
		case WASM_OBJ_TAG:
			break;
		}
	}
	if (nmem != dmem || ntab != dtab || nglob != 0)
		return wasm_snap_fail(
			why, whylen, WASM_SNAP_UNSUPPORTED,
			"not supported yet: core memories, tables or "
			"globals the host made outside of an instance");
	return WASM_SNAP_OK;
}

/* (address, ordinal) pairs: an address shared by several (a tag that
 * instances import) sorts by ordinal, the first one first. */
static int cmp_addr(const void *a, const void *b)
{
	const uintptr_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Sorted (address, ordinal) pairs packed as two parallel arrays. */
static int sort_addrs(void *const *ptrs, uint32_t n, uintptr_t **sorted,
		      uint32_t **ord)
{
	uintptr_t(*pairs)[2] = calloc(n ? n : 1, sizeof *pairs);

	*sorted = calloc(n ? n : 1, sizeof **sorted);
	*ord = calloc(n ? n : 1, sizeof **ord);
	if (pairs == NULL || *sorted == NULL || *ord == NULL) {
		free(pairs);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		pairs[i][0] = (uintptr_t)ptrs[i];
		pairs[i][1] = i;
	}
	qsort(pairs, n, sizeof *pairs, cmp_addr);
	for (uint32_t i = 0; i < n; i++) {
		(*sorted)[i] = pairs[i][0];
		(*ord)[i] = (uint32_t)pairs[i][1];
	}
	free(pairs);
	return 0;
}

static bool lookup(const uintptr_t *sorted, const uint32_t *ord, uint32_t n,
		   const void *p, uint32_t *out)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (sorted[mid] == (uintptr_t)p) {
			*out = ord[mid];
			return true;
		}
		if (sorted[mid] < (uintptr_t)p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* ---- writing ------------------------------------------------------------ */

/* The store's exceptions a snapshot writes, each named by its index. */
typedef struct heapmap {
	wasm_exn *const *exns; /* the store's (s->exns) */
	uintptr_t *sorted;     /* their addresses, sorted; ord: positions */
	uint32_t *ord;
	uint32_t *index;  /* per position: HEAP_UNSEEN, or its index */
	wasm_exn **order; /* the written ones, by index */
	uint32_t *cursor; /* heap_visit's stack: (position, parameter, slot) */
	uint32_t n, nexns;
	/* every instance's tags by address, for (instance, index) */
	uintptr_t *tags;
	uint32_t (*tag_at)[2];
	uint32_t ntags;
} heapmap;

#define HEAP_UNSEEN   UINT32_MAX
#define HEAP_ON_STACK (UINT32_MAX - 1)

typedef struct writer {
	wasm_snap_buf *b;
	objmap map;
	heapmap heap;
	char *why;
	size_t whylen;
	wasm_snap_base *base; /* NULL: a snapshot without one */
	bool delta;
	uint32_t nmem; /* memories written so far */
} writer;

/* The position of exception x among the store's, or HEAP_UNSEEN. */
static uint32_t heap_slot(const heapmap *h, wasm_ref x)
{
	uint32_t k;

	return lookup(h->sorted, h->ord, h->nexns, (const void *)x, &k)
		       ? k
		       : HEAP_UNSEEN;
}

static wasm_snap_status put_ref(writer *w, wasm_valtype t, wasm_ref r,
				const char *where)
{
	const wasm_func *f = (const wasm_func *)r;
	uint32_t ord;

	if (r == WASM_REF_NULL) {
		wasm_snap_u8(w->b, REF_NULL);
		return WASM_SNAP_OK;
	}
	/* A component's externrefs are null: the canonical ABI has none,
	 * and only GC's instructions (refused at load) make one.  A core
	 * embedder's host value has no description. */
	if ((uint8_t)t == WASM_EXTERNREF)
		return wasm_snap_fail(w->why, w->whylen, WASM_SNAP_UNSUPPORTED,
				      "not supported: a non-null externref "
				      "(a host value) in %s",
				      where);
	if ((uint8_t)t == WASM_EXNREF) {
		/* heap_roots gave every exception reached an index */
		uint32_t k = heap_slot(&w->heap, r);

		if (k == HEAP_UNSEEN || w->heap.index[k] >= HEAP_ON_STACK)
			return wasm_snap_fail(
				w->why, w->whylen, WASM_SNAP_UNSUPPORTED,
				"an exception of another store in %s", where);
		wasm_snap_u8(w->b, REF_HEAP);
		wasm_snap_u32(w->b, w->heap.index[k]);
		return WASM_SNAP_OK;
	}
	if (f->kind == WASM_FUNC_WASM) {
		if (!lookup(w->map.inst_sorted, w->map.inst_ord, w->map.ninsts,
			    f->u.wasm.inst, &ord))
			return wasm_snap_fail(
				w->why, w->whylen, WASM_SNAP_UNSUPPORTED,
				"a function of another store in %s", where);
		wasm_snap_u8(w->b, REF_WASM);
		wasm_snap_u32(w->b, ord);
		wasm_snap_u32(w->b, f->u.wasm.funcidx);
	} else {
		if (!lookup(w->map.host_sorted, w->map.host_ord, w->map.nhosts,
			    f, &ord))
			return wasm_snap_fail(
				w->why, w->whylen, WASM_SNAP_UNSUPPORTED,
				"a host function of another store in %s",
				where);
		wasm_snap_u8(w->b, REF_HOST);
		wasm_snap_u32(w->b, ord);
	}
	wasm_snap_u32(w->b, f->type_id);
	return WASM_SNAP_OK;
}

static wasm_snap_status put_value(writer *w, wasm_valtype t,
				  const uint64_t *slots, const char *where)
{
	switch ((uint8_t)t) {
	case WASM_I32:
	case WASM_F32:
		wasm_snap_u32(w->b, (uint32_t)slots[0]);
		return WASM_SNAP_OK;
	case WASM_I64:
	case WASM_F64:
		wasm_snap_u64(w->b, slots[0]);
		return WASM_SNAP_OK;
	case WASM_V128:
		wasm_snap_u64(w->b, slots[0]);
		wasm_snap_u64(w->b, slots[1]);
		return WASM_SNAP_OK;
	default:
		return put_ref(w, t, (wasm_ref)slots[0], where);
	}
}

bool wasm_snap_page_zero(const uint8_t *p)
{
	uint64_t acc = 0;

	for (size_t i = 0; i < WASM_PAGE_SIZE; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		acc |= v;
		if ((i & 4095) == 4088 && acc)
			return false;
	}
	return acc == 0;
}

/*
 * The base's record of the next memory, grown to `pages` fingerprints
 * (new ones: a zero page's); NULL when out of memory.
 */
static wasm_snap_base_mem *base_mem(writer *w, uint64_t pages)
{
	wasm_snap_base *base = w->base;
	wasm_snap_base_mem *bm;
	uint32_t k = w->nmem;

	if (k >= base->nmem) {
		wasm_snap_base_mem *v =
			realloc(base->mem, (size_t)(k + 1) * sizeof *v);

		if (v == NULL)
			return NULL;
		base->mem = v;
		for (; base->nmem <= k; base->nmem++)
			base->mem[base->nmem] = (wasm_snap_base_mem){0, NULL};
	}
	bm = &base->mem[k];
	if (pages > bm->npages) {
		uint64_t z = page_hash(NULL, WASM_PAGE_SIZE), *h;

		if (pages > SIZE_MAX / sizeof *h)
			return NULL;
		h = realloc(bm->hash, (size_t)pages * sizeof *h);
		if (h == NULL)
			return NULL;
		for (uint64_t i = bm->npages; i < pages; i++)
			h[i] = z;
		bm->hash = h;
		bm->npages = pages;
	}
	return bm;
}

/*
 * Which pages go out: in a full snapshot every page that is not all
 * zero; in a delta every page whose fingerprint changed since the base.
 * With a base, its fingerprints follow what was written.
 */
static void put_memory(writer *w, wasm_memory *mem)
{
	uint64_t pages = wasm_memory_pages(mem), n = 0;
	wasm_snap_base_mem *bm = NULL;
	size_t at;

	if (w->base && (bm = base_mem(w, pages)) == NULL) {
		w->b->failed = WASM_SNAP_NOMEM;
		return;
	}
	w->nmem++;
	wasm_snap_u8(w->b, mem->type.limits.is64);
	wasm_snap_u64(w->b, mem->type.limits.min);
	wasm_snap_u64(w->b, pages);
	at = w->b->len;
	wasm_snap_u64(w->b, 0); /* patched: pages written */
	for (uint64_t i = 0; i < pages && !w->b->failed; i++) {
		const uint8_t *p = mem->data + i * WASM_PAGE_SIZE;

		if (bm) {
			uint64_t h;
			bool same;

			/* a page not written since the base was taken is
			 * the same: a delta need not even read it */
			/* a store marks the page of its first byte, so the
			 * page before counts too (wasm/store.h) */
			bool marked = mem->written[i] ||
				      (i > 0 && mem->written[i - 1]);

			if (w->delta && !marked && !w->base->verify)
				continue;
			h = wasm_snap_page_hash(p, WASM_PAGE_SIZE);
			same = h == bm->hash[i];
			if (w->delta && !marked && !same)
				w->base->missed++; /* a write no one marked */
			if (!same &&
			    !base_change(w->base, w->nmem - 1, i, h)) {
				w->b->failed = WASM_SNAP_NOMEM;
				break;
			}
			if (w->delta ? same : wasm_snap_page_zero(p))
				continue;
		} else if (wasm_snap_page_zero(p)) {
			continue;
		}
		wasm_snap_u64(w->b, i);
		wasm_snap_put(w->b, p, WASM_PAGE_SIZE);
		n++;
	}
	wasm_snap_patch_u64(w->b, at, n);
	/* its written map is cleared when the write is kept */
	if (bm && !w->b->failed && !base_written(w->base, mem))
		w->b->failed = WASM_SNAP_NOMEM;
}

/*
 * A table's elements as runs (u64 runs, then each: u64 count, the
 * reference): a table grown with one reference, or mostly null, is a
 * few bytes, not 13 per element (tests/guests/hostile's 10,000,000).
 */
static wasm_snap_status put_table_runs(writer *w, const wasm_table_inst *t,
				       const char *where)
{
	uint64_t runs = 0;
	size_t at = w->b->len;
	wasm_snap_status st;

	wasm_snap_u64(w->b, 0); /* patched: runs */
	for (uint64_t j = 0; j < t->size && !w->b->failed;) {
		uint64_t k = j + 1;

		while (k < t->size && t->elems[k] == t->elems[j])
			k++;
		wasm_snap_u64(w->b, k - j);
		st = put_ref(w, t->type.elem, t->elems[j], where);
		if (st)
			return st;
		runs++;
		j = k;
	}
	wasm_snap_patch_u64(w->b, at, runs);
	return WASM_SNAP_OK;
}

static wasm_snap_status put_instance(writer *w, uint32_t ord,
				     const wasm_instance *inst)
{
	const wasm_module *m = inst->module;
	char where[64];
	wasm_snap_status st;

	wasm_snap_u32(w->b, wasm_module_nfuncs(m));
	wasm_snap_u32(w->b, m->nmemories);
	wasm_snap_u32(w->b, m->nglobals);
	wasm_snap_u32(w->b, m->ntables);
	wasm_snap_u32(w->b, m->nelems);
	wasm_snap_u32(w->b, m->ndatas);
	for (uint32_t i = 0; i < m->nmemories; i++)
		put_memory(w, inst->memories[m->nimported_memories + i]);
	for (uint32_t i = 0; i < m->nglobals; i++) {
		const wasm_global_inst *g =
			inst->globals[m->nimported_globals + i];

		snprintf(where, sizeof where, "global %u of core instance %u",
			 m->nimported_globals + i, ord);
		wasm_snap_u32(w->b, g->type.type);
		wasm_snap_u8(w->b, g->type.mut);
		st = put_value(w, g->type.type, g->slots, where);
		if (st)
			return st;
	}
	for (uint32_t i = 0; i < m->ntables; i++) {
		const wasm_table_inst *t =
			inst->tables[m->nimported_tables + i];

		snprintf(where, sizeof where, "table %u of core instance %u",
			 m->nimported_tables + i, ord);
		wasm_snap_u32(w->b, t->type.elem);
		wasm_snap_u64(w->b, t->size);
		st = put_table_runs(w, t, where);
		if (st)
			return st;
	}
	for (uint32_t i = 0; i < m->nelems; i++)
		wasm_snap_u32(w->b, inst->elems[i].len);
	for (uint32_t i = 0; i < m->ndatas; i++)
		wasm_snap_u32(w->b, inst->datas[i].len);
	return WASM_SNAP_OK;
}

/* ---- heap objects: exceptions ------------------------------------------- */

static void heap_free(heapmap *h)
{
	free(h->sorted);
	free(h->ord);
	free(h->index);
	free(h->order);
	free(h->cursor);
	free(h->tags);
	free(h->tag_at);
}

/*
 * Every instance's tags by address, each named by the first instance
 * and index (in the store's order) that has it: a tag is shared by the
 * instances that import it, and a fresh store shares it the same way.
 */
static int heap_tags(writer *w)
{
	heapmap *h = &w->heap;
	uint32_t n = 0, k = 0;
	void **ptrs;
	uint32_t(*at)[2];
	uint32_t *ord;

	for (uint32_t i = 0; i < w->map.ninsts; i++)
		n += wasm_module_ntags(w->map.insts[i]->module);
	ptrs = calloc(n ? n : 1, sizeof *ptrs);
	at = calloc(n ? n : 1, sizeof *at);
	h->tag_at = calloc(n ? n : 1, sizeof *h->tag_at);
	if (ptrs == NULL || at == NULL || h->tag_at == NULL) {
		free(ptrs);
		free(at);
		return -1;
	}
	for (uint32_t i = 0; i < w->map.ninsts; i++) {
		const wasm_instance *inst = w->map.insts[i];

		for (uint32_t j = 0; j < wasm_module_ntags(inst->module); j++) {
			ptrs[k] = inst->tags[j];
			at[k][0] = i;
			at[k][1] = j;
			k++;
		}
	}
	/* equal addresses sort in (instance, index) order: heap_tag takes
	 * the first */
	if (sort_addrs(ptrs, n, &h->tags, &ord)) {
		free(ptrs);
		free(at);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		h->tag_at[i][0] = at[ord[i]][0];
		h->tag_at[i][1] = at[ord[i]][1];
	}
	h->ntags = n;
	free(ptrs);
	free(at);
	free(ord);
	return 0;
}

/* The (instance, index) that names tag t, the first of its address;
 * false: no instance has it. */
static bool heap_tag(const heapmap *h, const wasm_tag *t, uint32_t at[2])
{
	uint32_t lo = 0, hi = h->ntags;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (h->tags[mid] < (uintptr_t)t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == h->ntags || h->tags[lo] != (uintptr_t)t)
		return false;
	at[0] = h->tag_at[lo][0];
	at[1] = h->tag_at[lo][1];
	return true;
}

/* Push exception k (HEAP_UNSEEN: not the store's) unless it has an
 * index already or is on the stack. */
static wasm_snap_status heap_push(writer *w, uint32_t k, uint32_t *depth,
				  const char *where)
{
	heapmap *h = &w->heap;

	if (k == HEAP_UNSEEN)
		return wasm_snap_fail(w->why, w->whylen, WASM_SNAP_UNSUPPORTED,
				      "an exception of another store in %s",
				      where);
	if (h->index[k] == HEAP_ON_STACK) /* exceptions cannot change */
		return wasm_snap_fail(w->why, w->whylen, WASM_SNAP_UNSUPPORTED,
				      "an exception that holds itself");
	if (h->index[k] != HEAP_UNSEEN)
		return WASM_SNAP_OK;
	h->index[k] = HEAP_ON_STACK;
	h->cursor[3 * *depth] = k;
	h->cursor[3 * *depth + 1] = 0; /* the next parameter to look at */
	h->cursor[3 * *depth + 2] = 0; /* and its first slot */
	++*depth;
	return WASM_SNAP_OK;
}

/*
 * Give exception r and every exception its payload reaches an index,
 * each after the ones its payload holds: exceptions never change after
 * they are made, so that order exists, and the restore can make each
 * from ones it made already.  The walk keeps its own stack, so a chain
 * as long as the store's exceptions takes no C stack.
 */
static wasm_snap_status heap_visit(writer *w, wasm_ref r, const char *where)
{
	heapmap *h = &w->heap;
	uint32_t depth = 0;
	wasm_snap_status st;

	if (r == WASM_REF_NULL)
		return WASM_SNAP_OK;
	st = heap_push(w, heap_slot(h, r), &depth, where);
	while (st == WASM_SNAP_OK && depth > 0) {
		uint32_t *c = &h->cursor[3 * (depth - 1)];
		wasm_exn *x = h->exns[c[0]];
		const wasm_functype *ft = x->tag->type;
		uint32_t slot = c[2];
		wasm_valtype t;

		if (c[1] == ft->nparams) {
			h->index[c[0]] = h->n;
			h->order[h->n++] = x;
			depth--;
			continue;
		}
		t = ft->params[c[1]++];
		c[2] += wasm_valtype_slots(t);
		if ((uint8_t)t == WASM_EXNREF &&
		    x->slots[slot] != (uint64_t)WASM_REF_NULL)
			st = heap_push(w, heap_slot(h, (wasm_ref)x->slots[slot]),
				       &depth, "an exception's payload");
	}
	return st;
}

static wasm_snap_status visit_frame_ref(void *ctx, wasm_valtype t,
				       uint64_t v)
{
	return (uint8_t)t == WASM_EXNREF
		       ? heap_visit(ctx, (wasm_ref)v, "a suspended frame")
		       : WASM_SNAP_OK;
}

/*
 * Index every exception the instances' globals and tables and the
 * suspended frames reach, in that order: the run-level sections write
 * the frames' exnrefs by these indices (wasm_snap_put_slot_ref walks
 * the same store again).
 */
static wasm_snap_status heap_roots(writer *w, const wasm_store *s)
{
	char where[64];
	wasm_snap_status st = WASM_SNAP_OK;

	for (uint32_t o = 0; o < w->map.ninsts && st == WASM_SNAP_OK; o++) {
		const wasm_instance *inst = w->map.insts[o];
		const wasm_module *m = inst->module;

		for (uint32_t i = 0; i < m->nglobals && st == WASM_SNAP_OK;
		     i++) {
			const wasm_global_inst *g =
				inst->globals[m->nimported_globals + i];

			snprintf(where, sizeof where,
				 "global %u of core instance %u",
				 m->nimported_globals + i, o);
			if ((uint8_t)g->type.type == WASM_EXNREF)
				st = heap_visit(w, (wasm_ref)g->slots[0],
						where);
		}
		for (uint32_t i = 0; i < m->ntables && st == WASM_SNAP_OK;
		     i++) {
			const wasm_table_inst *t =
				inst->tables[m->nimported_tables + i];

			if ((uint8_t)t->type.elem != WASM_EXNREF)
				continue;
			snprintf(where, sizeof where,
				 "table %u of core instance %u",
				 m->nimported_tables + i, o);
			for (uint64_t j = 0; j < t->size && st == WASM_SNAP_OK;
			     j++)
				if (j == 0 || t->elems[j] != t->elems[j - 1])
					st = heap_visit(w, t->elems[j], where);
		}
	}
	for (const wasm_exec *e = s->execs; e != NULL && st == WASM_SNAP_OK;
	     e = e->store_next)
		st = wasm_exec_each_ref(e, visit_frame_ref, w);
	return st;
}

/* Give the exceptions heap_roots reaches their indices (w->heap). */
static wasm_snap_status heap_build(writer *w, const wasm_store *s)
{
	heapmap *h = &w->heap;

	if (s->nexns == 0)
		return WASM_SNAP_OK;
	if (s->nexns >= HEAP_ON_STACK)
		return wasm_snap_fail(w->why, w->whylen, WASM_SNAP_UNSUPPORTED,
				      "not supported yet: %zu live exceptions",
				      s->nexns);
	h->exns = s->exns;
	h->nexns = (uint32_t)s->nexns;
	h->index = malloc(h->nexns * sizeof *h->index);
	h->order = malloc(h->nexns * sizeof *h->order);
	h->cursor = malloc(3 * (size_t)h->nexns * sizeof *h->cursor);
	if (h->index == NULL || h->order == NULL || h->cursor == NULL ||
	    sort_addrs((void *const *)s->exns, h->nexns, &h->sorted,
		       &h->ord) ||
	    heap_tags(w))
		return wasm_snap_fail(w->why, w->whylen, WASM_SNAP_NOMEM,
				      "out of memory");
	for (uint32_t i = 0; i < h->nexns; i++)
		h->index[i] = HEAP_UNSEEN;
	return heap_roots(w, s);
}

/*
 * The heap objects (exceptions) heap_roots reaches, in the order
 * heap_visit gives them: u32 count, then each
 *   u8 kind (WASM_SNAP_HEAP_EXN), u32 instance, u32 tag index, u32 the
 *   tag's type id, u32 nvalues, nvalues x (u32 valtype, value).
 * Exceptions nothing reaches (the collector's garbage, a conservative
 * stack slot's) are left out.
 */
static wasm_snap_status put_heap(writer *w, wasm_store *s)
{
	heapmap *h = &w->heap;
	wasm_snap_status st = heap_build(w, s);

	if (st != WASM_SNAP_OK)
		return st;
	wasm_snap_u32(w->b, h->n);
	for (uint32_t i = 0; i < h->n && !w->b->failed; i++) {
		const wasm_exn *x = h->order[i];
		const wasm_functype *ft = x->tag->type;
		uint32_t at[2], slot = 0;

		if (!heap_tag(h, x->tag, at))
			return wasm_snap_fail(
				w->why, w->whylen, WASM_SNAP_UNSUPPORTED,
				"not supported yet: an exception of a tag "
				"no core instance has");
		wasm_snap_u8(w->b, WASM_SNAP_HEAP_EXN);
		wasm_snap_u32(w->b, at[0]);
		wasm_snap_u32(w->b, at[1]);
		wasm_snap_u32(w->b, x->tag->type_id);
		wasm_snap_u32(w->b, ft->nparams);
		for (uint32_t p = 0; p < ft->nparams; p++) {
			wasm_snap_u32(w->b, ft->params[p]);
			st = put_value(w, ft->params[p], x->slots + slot,
				       "an exception's payload");
			if (st)
				return st;
			slot += wasm_valtype_slots(ft->params[p]);
		}
	}
	return WASM_SNAP_OK;
}

wasm_snap_status wasm_store_snapshot(wasm_store *s, wasm_snap_buf *b, char *why,
				     size_t whylen)
{
	return wasm_store_snapshot_base(s, b, NULL, false, why, whylen);
}

wasm_snap_status wasm_store_snapshot_base(wasm_store *s, wasm_snap_buf *b,
					  wasm_snap_base *base, bool delta,
					  char *why, size_t whylen)
{
	writer w = {.b = b,
		    .why = why,
		    .whylen = whylen,
		    .base = base,
		    .delta = delta && base};
	wasm_snap_status st;

	if (base)
		wasm_snap_base_abort(base); /* what an earlier write left */
	st = objmap_build(s, &w.map, why, whylen);
	if (st == WASM_SNAP_OK &&
	    (sort_addrs((void *const *)w.map.insts, w.map.ninsts,
			&w.map.inst_sorted, &w.map.inst_ord) ||
	     sort_addrs((void *const *)w.map.hosts, w.map.nhosts,
			&w.map.host_sorted, &w.map.host_ord)))
		st = wasm_snap_fail(why, whylen, WASM_SNAP_NOMEM,
				    "out of memory");
	if (st == WASM_SNAP_OK) {
		wasm_snap_u32(b, w.map.ninsts);
		st = put_heap(&w, s);
		for (uint32_t i = 0; i < w.map.ninsts && st == WASM_SNAP_OK;
		     i++)
			st = put_instance(&w, i, w.map.insts[i]);
	}
	objmap_free(&w.map);
	heap_free(&w.heap);
	if (st == WASM_SNAP_OK && b->failed)
		st = wasm_snap_fail(
			why, whylen, b->failed,
			b->failed == WASM_SNAP_NOMEM
				? "out of memory"
				: "the snapshot would pass its limit of "
				  "%zu bytes",
			b->max);
	if (st != WASM_SNAP_OK && base)
		wasm_snap_base_abort(base);
	return st;
}

/* ---- restoring ---------------------------------------------------------- */

typedef struct reader {
	wasm_snap_reader *r;
	objmap map;
	char *why;
	size_t whylen;
	bool delta;	/* unlisted pages keep their contents */
	wasm_exn **heap; /* the heap objects made so far */
	uint32_t ready, cap;
} reader;

#define TRUNCATED(rd)                                                          \
	wasm_snap_fail((rd)->why, (rd)->whylen, WASM_SNAP_MALFORMED,           \
		       "truncated core section")

/*
 * A reference for a slot of type t: resolved against the fresh store and
 * checked against t, so a forged snapshot cannot put a function of the
 * wrong type where typed code (call_ref) trusts the type.
 */
static wasm_snap_status get_ref(reader *rd, wasm_valtype t, wasm_ref *out,
				const char *where)
{
	uint8_t tag;
	uint32_t a, b = 0, type_id;
	const wasm_func *f;

	if (!wasm_snap_get_u8(rd->r, &tag))
		return TRUNCATED(rd);
	if (tag == REF_NULL) {
		if (!wasm_ref_nullable(t))
			return wasm_snap_fail(
				rd->why, rd->whylen, WASM_SNAP_MALFORMED,
				"%s: null in a non-nullable slot", where);
		*out = WASM_REF_NULL;
		return WASM_SNAP_OK;
	}
	if (tag == REF_HEAP && (uint8_t)t == WASM_EXNREF) {
		/* only one made already: a payload names earlier ones */
		if (!wasm_snap_get_u32(rd->r, &a))
			return TRUNCATED(rd);
		if (a >= rd->ready)
			return wasm_snap_fail(rd->why, rd->whylen,
					      WASM_SNAP_MALFORMED,
					      "%s: no exception %u", where, a);
		*out = (wasm_ref)rd->heap[a];
		return WASM_SNAP_OK;
	}
	if ((tag != REF_WASM && tag != REF_HOST) || (uint8_t)t != WASM_FUNCREF)
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_MALFORMED,
				      "%s: bad reference (tag %u)", where, tag);
	if (!wasm_snap_get_u32(rd->r, &a) ||
	    (tag == REF_WASM && !wasm_snap_get_u32(rd->r, &b)) ||
	    !wasm_snap_get_u32(rd->r, &type_id))
		return TRUNCATED(rd);
	if (tag == REF_WASM) {
		const wasm_instance *inst;

		if (a >= rd->map.ninsts)
			return wasm_snap_fail(
				rd->why, rd->whylen, WASM_SNAP_MALFORMED,
				"%s: no core instance %u", where, a);
		inst = rd->map.insts[a];
		if (b >= wasm_module_nfuncs(inst->module))
			return wasm_snap_fail(
				rd->why, rd->whylen, WASM_SNAP_MALFORMED,
				"%s: no function %u in core instance %u", where,
				b, a);
		f = inst->funcs[b];
	} else {
		if (a >= rd->map.nhosts)
			return wasm_snap_fail(
				rd->why, rd->whylen, WASM_SNAP_MALFORMED,
				"%s: no host function %u", where, a);
		f = rd->map.hosts[a];
	}
	if (f->type_id != type_id)
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_MISMATCH,
				      "%s: the function's type differs", where);
	if (wasm_ref_heap(t) != WASM_HEAP_TOP &&
	    wasm_ref_heap(t) - WASM_HEAP_IDX0 != f->type_id)
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_MALFORMED,
				      "%s: a function of the wrong type",
				      where);
	*out = (wasm_ref)f;
	return WASM_SNAP_OK;
}

static wasm_snap_status get_value(reader *rd, wasm_valtype t, uint64_t *slots,
				  const char *where)
{
	uint32_t v32;
	wasm_ref ref;
	wasm_snap_status st;

	switch ((uint8_t)t) {
	case WASM_I32:
	case WASM_F32:
		if (!wasm_snap_get_u32(rd->r, &v32))
			return TRUNCATED(rd);
		slots[0] = v32;
		return WASM_SNAP_OK;
	case WASM_I64:
	case WASM_F64:
		return wasm_snap_get_u64(rd->r, &slots[0]) ? WASM_SNAP_OK
							   : TRUNCATED(rd);
	case WASM_V128:
		return wasm_snap_get_u64(rd->r, &slots[0]) &&
				       wasm_snap_get_u64(rd->r, &slots[1])
			       ? WASM_SNAP_OK
			       : TRUNCATED(rd);
	default:
		st = get_ref(rd, t, &ref, where);
		if (st == WASM_SNAP_OK)
			slots[0] = (uint64_t)ref;
		return st;
	}
}

static wasm_snap_status get_memory(reader *rd, wasm_memory *mem,
				   const char *where)
{
	uint8_t is64;
	uint64_t min, pages, n, next = 0;

	if (!wasm_snap_get_u8(rd->r, &is64) ||
	    !wasm_snap_get_u64(rd->r, &min) ||
	    !wasm_snap_get_u64(rd->r, &pages) || !wasm_snap_get_u64(rd->r, &n))
		return TRUNCATED(rd);
	if (is64 != mem->type.limits.is64 || min != mem->type.limits.min)
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_MISMATCH,
				      "%s: its type differs", where);
	if (pages < wasm_memory_pages(mem))
		return wasm_snap_fail(
			rd->why, rd->whylen, WASM_SNAP_MISMATCH,
			"%s: %llu pages, smaller than a fresh one (%llu)",
			where, (unsigned long long)pages,
			(unsigned long long)wasm_memory_pages(mem));
	if (pages > mem->max_pages ||
	    (pages > wasm_memory_pages(mem) &&
	     wasm_memory_grow(mem, pages - wasm_memory_pages(mem)) < 0))
		return wasm_snap_fail(
			rd->why, rd->whylen, WASM_SNAP_MISMATCH,
			"%s: cannot grow to %llu pages (limit %llu)", where,
			(unsigned long long)pages,
			(unsigned long long)mem->max_pages);
	if (n > pages || n > wasm_snap_left(rd->r) / (8 + WASM_PAGE_SIZE))
		return TRUNCATED(rd);
	for (uint64_t k = 0; k <= n; k++) {
		uint64_t idx = pages;
		const uint8_t *src = NULL;

		if (k < n) {
			if (!wasm_snap_get_u64(rd->r, &idx) ||
			    (src = wasm_snap_take(rd->r, WASM_PAGE_SIZE)) ==
				    NULL)
				return TRUNCATED(rd);
			if (idx < next || idx >= pages)
				return wasm_snap_fail(
					rd->why, rd->whylen,
					WASM_SNAP_MALFORMED,
					"%s: page %llu out of order", where,
					(unsigned long long)idx);
		}
		/* What the snapshot leaves out is zero (data segments of
		 * the fresh instance may have written there); what a delta
		 * leaves out did not change. */
		for (; !rd->delta && next < idx; next++) {
			uint8_t *p = mem->data + next * WASM_PAGE_SIZE;

			if (!wasm_snap_page_zero(p))
				memset(p, 0, WASM_PAGE_SIZE);
		}
		if (src != NULL)
			memcpy(mem->data + idx * WASM_PAGE_SIZE, src,
			       WASM_PAGE_SIZE);
		next = idx + 1;
	}
	return WASM_SNAP_OK;
}

static wasm_snap_status get_table(reader *rd, wasm_table_inst *t,
				  const char *where)
{
	uint32_t elem;
	uint64_t size, runs;
	wasm_snap_status st;

	if (!wasm_snap_get_u32(rd->r, &elem) ||
	    !wasm_snap_get_u64(rd->r, &size))
		return TRUNCATED(rd);
	if (elem != t->type.elem)
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_MISMATCH,
				      "%s: its type differs", where);
	if (size < t->size)
		return wasm_snap_fail(
			rd->why, rd->whylen, WASM_SNAP_MISMATCH,
			"%s: %llu elements, fewer than a fresh one (%llu)",
			where, (unsigned long long)size,
			(unsigned long long)t->size);
	/* runs: no growth past what the store's limits allow (below) */
	if (size > t->max ||
	    (size > t->size &&
	     wasm_table_grow(t, size - t->size, WASM_REF_NULL) < 0))
		return wasm_snap_fail(
			rd->why, rd->whylen, WASM_SNAP_MISMATCH,
			"%s: cannot grow to %llu elements (limit %llu)", where,
			(unsigned long long)size, (unsigned long long)t->max);
	if (!wasm_snap_get_u64(rd->r, &runs))
		return TRUNCATED(rd);
	/* a run takes nine bytes at least */
	if (runs > size || runs > wasm_snap_left(rd->r) / 9)
		return TRUNCATED(rd);
	for (uint64_t k = 0, j = 0; k < runs; k++) {
		uint64_t count;
		wasm_ref ref;

		if (!wasm_snap_get_u64(rd->r, &count))
			return TRUNCATED(rd);
		if (count == 0 || count > size - j)
			return wasm_snap_fail(rd->why, rd->whylen,
					      WASM_SNAP_MALFORMED,
					      "%s: a run of %llu elements", where,
					      (unsigned long long)count);
		st = get_ref(rd, t->type.elem, &ref, where);
		if (st)
			return st;
		for (uint64_t e = 0; e < count; e++)
			t->elems[j + e] = ref;
		j += count;
		if (k + 1 == runs && j != size)
			return wasm_snap_fail(rd->why, rd->whylen,
					      WASM_SNAP_MALFORMED,
					      "%s: runs of %llu elements, the "
					      "table has %llu",
					      where, (unsigned long long)j,
					      (unsigned long long)size);
	}
	if (runs == 0 && size != 0)
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_MALFORMED,
				      "%s: no runs for %llu elements", where,
				      (unsigned long long)size);
	return WASM_SNAP_OK;
}

static wasm_snap_status get_instance(reader *rd, uint32_t ord,
				     wasm_instance *inst)
{
	const wasm_module *m = inst->module;
	uint32_t shape[6], want[6] = {wasm_module_nfuncs(m),
				      m->nmemories,
				      m->nglobals,
				      m->ntables,
				      m->nelems,
				      m->ndatas};
	char where[64];
	wasm_snap_status st;

	for (int i = 0; i < 6; i++)
		if (!wasm_snap_get_u32(rd->r, &shape[i]))
			return TRUNCATED(rd);
	if (memcmp(shape, want, sizeof shape))
		return wasm_snap_fail(
			rd->why, rd->whylen, WASM_SNAP_MISMATCH,
			"core instance %u: a different module (functions, "
			"memories, globals, tables or segments differ)",
			ord);
	for (uint32_t i = 0; i < m->nmemories; i++) {
		snprintf(where, sizeof where, "memory %u of core instance %u",
			 m->nimported_memories + i, ord);
		st = get_memory(rd, inst->memories[m->nimported_memories + i],
				where);
		if (st)
			return st;
	}
	for (uint32_t i = 0; i < m->nglobals; i++) {
		wasm_global_inst *g = inst->globals[m->nimported_globals + i];
		uint32_t type;
		uint8_t mut;
		uint64_t slots[2] = {0, 0};

		snprintf(where, sizeof where, "global %u of core instance %u",
			 m->nimported_globals + i, ord);
		if (!wasm_snap_get_u32(rd->r, &type) ||
		    !wasm_snap_get_u8(rd->r, &mut))
			return TRUNCATED(rd);
		if (type != g->type.type || mut != g->type.mut)
			return wasm_snap_fail(rd->why, rd->whylen,
					      WASM_SNAP_MISMATCH,
					      "%s: its type differs", where);
		st = get_value(rd, g->type.type, slots, where);
		if (st)
			return st;
		g->slots[0] = slots[0];
		g->slots[1] = slots[1];
	}
	for (uint32_t i = 0; i < m->ntables; i++) {
		snprintf(where, sizeof where, "table %u of core instance %u",
			 m->nimported_tables + i, ord);
		st = get_table(rd, inst->tables[m->nimported_tables + i],
			       where);
		if (st)
			return st;
	}
	for (uint32_t i = 0; i < m->nelems + m->ndatas; i++) {
		uint32_t len, *cur = i < m->nelems
					     ? &inst->elems[i].len
					     : &inst->datas[i - m->nelems].len;

		if (!wasm_snap_get_u32(rd->r, &len))
			return TRUNCATED(rd);
		/* a segment only ever shrinks to 0 (elem.drop, data.drop) */
		if (len != *cur && len != 0)
			return wasm_snap_fail(
				rd->why, rd->whylen, WASM_SNAP_MALFORMED,
				"segment %u of core instance %u: length %u", i,
				ord, len);
		*cur = len;
	}
	return WASM_SNAP_OK;
}

/* One exception of the heap objects (put_heap), as rd->heap[rd->ready]. */
static wasm_snap_status get_exn(reader *rd, wasm_store *s, uint64_t *slots)
{
	uint32_t io, ti, tid, nv, nslots = 0;
	const wasm_instance *inst;
	const wasm_functype *ft;
	wasm_tag *tag;
	char where[64];
	wasm_snap_status st;

	snprintf(where, sizeof where, "exception %u", rd->ready);
	if (!wasm_snap_get_u32(rd->r, &io) || !wasm_snap_get_u32(rd->r, &ti) ||
	    !wasm_snap_get_u32(rd->r, &tid) || !wasm_snap_get_u32(rd->r, &nv))
		return TRUNCATED(rd);
	if (io >= rd->map.ninsts ||
	    ti >= wasm_module_ntags((inst = rd->map.insts[io])->module))
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_MALFORMED,
				      "%s: no tag %u in core instance %u",
				      where, ti, io);
	tag = inst->tags[ti];
	ft = tag->type;
	if (tag->type_id != tid)
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_MISMATCH,
				      "%s: its tag's type differs", where);
	if (nv != ft->nparams)
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_MALFORMED,
				      "%s: %u values, its tag has %u", where,
				      nv, ft->nparams);
	for (uint32_t p = 0; p < nv; p++) {
		uint32_t vt;

		if (!wasm_snap_get_u32(rd->r, &vt))
			return TRUNCATED(rd);
		if (vt != ft->params[p])
			return wasm_snap_fail(rd->why, rd->whylen,
					      WASM_SNAP_MALFORMED,
					      "%s: value %u of the wrong type",
					      where, p);
		st = get_value(rd, vt, slots + nslots, where);
		if (st)
			return st;
		nslots += wasm_valtype_slots(vt);
	}
	/* grown with what was made, which the store's limit bounds, not
	 * with the count the image claims */
	if (rd->ready == rd->cap) {
		uint32_t cap = rd->cap ? 2 * rd->cap : 64;
		wasm_exn **v = realloc(rd->heap, (size_t)cap * sizeof *v);

		if (v == NULL)
			return wasm_snap_fail(rd->why, rd->whylen,
					      WASM_SNAP_NOMEM, "out of memory");
		rd->heap = v;
		rd->cap = cap;
	}
	rd->heap[rd->ready] = wasm_exn_restore(s, tag, slots, nslots);
	if (rd->heap[rd->ready] == NULL)
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_MISMATCH,
				      "%s: the live exceptions would pass "
				      "the store's limit (or out of memory)",
				      where);
	rd->ready++;
	return WASM_SNAP_OK;
}

/*
 * The heap objects (put_heap), made again in their order; the store's
 * own exceptions go first, with every exnref that held them: the
 * sections after these write every exnref of the store again.
 */
static wasm_snap_status get_heap(reader *rd, wasm_store *s)
{
	uint32_t n, most = 0;
	uint64_t *slots;
	wasm_snap_status st = WASM_SNAP_OK;

	if (!wasm_snap_get_u32(rd->r, &n))
		return TRUNCATED(rd);
	if (n > wasm_snap_left(rd->r) / WASM_SNAP_HEAP_MIN_BYTES)
		return TRUNCATED(rd);
	wasm_store_reset_exns(s);
	if (n == 0)
		return WASM_SNAP_OK;
	/* the payload's slots: at most two a parameter of any tag */
	for (uint32_t i = 0; i < rd->map.ninsts; i++) {
		const wasm_instance *inst = rd->map.insts[i];

		for (uint32_t j = 0; j < wasm_module_ntags(inst->module); j++)
			if (inst->tags[j]->type->nparams > most)
				most = inst->tags[j]->type->nparams;
	}
	slots = calloc(2 * (size_t)most + 2, sizeof *slots);
	if (slots == NULL)
		return wasm_snap_fail(rd->why, rd->whylen, WASM_SNAP_NOMEM,
				      "out of memory");
	for (uint32_t k = 0; k < n && st == WASM_SNAP_OK; k++) {
		uint8_t kind;

		if (!wasm_snap_get_u8(rd->r, &kind))
			st = TRUNCATED(rd);
		else if (kind != WASM_SNAP_HEAP_EXN)
			st = wasm_snap_fail(rd->why, rd->whylen,
					    WASM_SNAP_MALFORMED,
					    "heap object %u: unknown kind %u", k,
					    kind);
		else
			st = get_exn(rd, s, slots);
	}
	free(slots);
	return st;
}

static wasm_snap_status restore(wasm_store *s, wasm_snap_reader *r, bool delta,
				char *why, size_t whylen)
{
	reader rd = {.r = r, .why = why, .whylen = whylen, .delta = delta};
	wasm_snap_status st = objmap_build(s, &rd.map, why, whylen);
	uint32_t n;

	if (st == WASM_SNAP_OK && !wasm_snap_get_u32(r, &n))
		st = TRUNCATED(&rd);
	if (st == WASM_SNAP_OK && n != rd.map.ninsts)
		st = wasm_snap_fail(why, whylen, WASM_SNAP_MISMATCH,
				    "%u core instances, the store has %u", n,
				    rd.map.ninsts);
	if (st == WASM_SNAP_OK)
		st = get_heap(&rd, s);
	for (uint32_t i = 0; st == WASM_SNAP_OK && i < n; i++)
		st = get_instance(&rd, i, rd.map.insts[i]);
	if (st == WASM_SNAP_OK && wasm_snap_left(r) != 0)
		st = wasm_snap_fail(why, whylen, WASM_SNAP_MALFORMED,
				    "%zu bytes past the core section's end",
				    wasm_snap_left(r));
	objmap_free(&rd.map);
	free(rd.heap);
	return st;
}

wasm_snap_status wasm_store_restore(wasm_store *s, wasm_snap_reader *r,
				    char *why, size_t whylen)
{
	return restore(s, r, false, why, whylen);
}

wasm_snap_status wasm_store_restore_delta(wasm_store *s, wasm_snap_reader *r,
					  char *why, size_t whylen)
{
	return restore(s, r, true, why, whylen);
}

/* ---- the map the run-level sections share ------------------------------- */

struct wasm_snap_map {
	objmap m;
	wasm_store *s;
	/* the core section's indices of the exceptions, made again by the
	 * same walk on the frames' first exnref (writing) */
	heapmap heap;
	bool have_heap;
	wasm_memory **mems; /* every memory of the store, in its order */
	uint32_t nmems;
	uintptr_t *mem_sorted;
	uint32_t *mem_ord;
	/* every function an instance has or the host made, sorted: a
	 * frame's reference is checked against them (first use) */
	uintptr_t *funcs;
	size_t nfuncs;
	bool have_funcs;
};

wasm_snap_map *wasm_snap_map_new(wasm_store *s, char *why, size_t whylen,
				 wasm_snap_status *st)
{
	wasm_snap_map *m = calloc(1, sizeof *m);

	*st = WASM_SNAP_NOMEM;
	if (m == NULL) {
		wasm_snap_fail(why, whylen, WASM_SNAP_NOMEM, "out of memory");
		return NULL;
	}
	m->s = s;
	*st = objmap_build(s, &m->m, why, whylen);
	if (*st != WASM_SNAP_OK) {
		wasm_snap_map_free(m);
		return NULL;
	}
	m->mems = calloc(s->nobjs ? s->nobjs : 1, sizeof *m->mems);
	if (m->mems != NULL)
		for (size_t i = 0; i < s->nobjs; i++)
			if (s->objs[i].kind == WASM_OBJ_MEMORY)
				m->mems[m->nmems++] = s->objs[i].ptr;
	if (m->mems == NULL ||
	    sort_addrs((void *const *)m->m.insts, m->m.ninsts,
		       &m->m.inst_sorted, &m->m.inst_ord) ||
	    sort_addrs((void *const *)m->m.hosts, m->m.nhosts,
		       &m->m.host_sorted, &m->m.host_ord) ||
	    sort_addrs((void *const *)m->mems, m->nmems, &m->mem_sorted,
		       &m->mem_ord)) {
		*st = wasm_snap_fail(why, whylen, WASM_SNAP_NOMEM,
				     "out of memory");
		wasm_snap_map_free(m);
		return NULL;
	}
	return m;
}

void wasm_snap_map_free(wasm_snap_map *m)
{
	if (m == NULL)
		return;
	objmap_free(&m->m);
	heap_free(&m->heap);
	free(m->funcs);
	free(m->mems);
	free(m->mem_sorted);
	free(m->mem_ord);
	free(m);
}

wasm_snap_status wasm_snap_put_func(wasm_snap_map *m, wasm_snap_buf *b,
				    const wasm_func *f, char *why,
				    size_t whylen)
{
	writer w = {.b = b, .map = m->m, .why = why, .whylen = whylen};

	return put_ref(&w, wasm_reftype(WASM_FUNCREF, true, WASM_HEAP_TOP),
		       (wasm_ref)f, "a thread's state");
}

wasm_snap_status wasm_snap_get_func(wasm_snap_map *m, wasm_snap_reader *r,
				    wasm_func **f, char *why, size_t whylen)
{
	reader rd = {.r = r, .map = m->m, .why = why, .whylen = whylen};
	wasm_ref ref = WASM_REF_NULL;
	wasm_snap_status st =
		get_ref(&rd, wasm_reftype(WASM_FUNCREF, true, WASM_HEAP_TOP),
			&ref, "a thread's state");

	*f = (wasm_func *)ref;
	return st;
}

static int cmp_uintptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static bool known_funcs(wasm_snap_map *m)
{
	size_t n = m->m.nhosts, k = 0;

	if (m->have_funcs)
		return true;
	for (uint32_t i = 0; i < m->m.ninsts; i++)
		n += wasm_module_nfuncs(m->m.insts[i]->module);
	m->funcs = calloc(n ? n : 1, sizeof *m->funcs);
	if (m->funcs == NULL)
		return false;
	for (uint32_t i = 0; i < m->m.ninsts; i++) {
		const wasm_instance *inst = m->m.insts[i];

		for (uint32_t f = 0; f < wasm_module_nfuncs(inst->module); f++)
			m->funcs[k++] = (uintptr_t)inst->funcs[f];
	}
	for (uint32_t i = 0; i < m->m.nhosts; i++)
		m->funcs[k++] = (uintptr_t)m->m.hosts[i];
	qsort(m->funcs, k, sizeof *m->funcs, cmp_uintptr);
	m->nfuncs = k;
	m->have_funcs = true;
	return true;
}

/* An exception in a frame's slot: by the index the core section gave it. */
static wasm_snap_status put_slot_exn(wasm_snap_map *m, wasm_snap_buf *b,
				     wasm_valtype t, wasm_ref x, char *why,
				     size_t whylen)
{
	writer w = {.map = m->m, .why = why, .whylen = whylen};

	if (!m->have_heap) {
		wasm_snap_status st = heap_build(&w, m->s);

		m->heap = w.heap; /* freed with the map, built or not */
		m->have_heap = true;
		if (st != WASM_SNAP_OK) {
			m->heap.nexns = 0; /* what it holds is no map */
			return st;
		}
	}
	w.b = b;
	w.heap = m->heap;
	return put_ref(&w, t, x, "a suspended frame");
}

wasm_snap_status wasm_snap_put_slot_ref(wasm_snap_map *m, wasm_snap_buf *b,
					wasm_valtype t, uint64_t v,
					char *why, size_t whylen)
{
	writer w = {.b = b, .map = m->m, .why = why, .whylen = whylen};
	uintptr_t key = (uintptr_t)v;

	if (v != WASM_REF_NULL && (uint8_t)t == WASM_EXNREF)
		return put_slot_exn(m, b, t, (wasm_ref)v, why, whylen);
	if (v == WASM_REF_NULL || (uint8_t)t != WASM_FUNCREF)
		return put_ref(&w, t, (wasm_ref)v, "a suspended frame");
	/* a slot the compiler lists holds a reference: checked all the same,
	 * so that a wrong list is a refusal, not a wild read */
	if (!known_funcs(m))
		return wasm_snap_fail(why, whylen, WASM_SNAP_NOMEM,
				      "out of memory");
	if (bsearch(&key, m->funcs, m->nfuncs, sizeof *m->funcs,
		    cmp_uintptr) == NULL)
		return wasm_snap_fail(why, whylen, WASM_SNAP_UNSUPPORTED,
				      "a suspended frame's reference slot "
				      "holds no function of the store");
	return put_ref(&w, t, (wasm_ref)v, "a suspended frame");
}

wasm_snap_status wasm_snap_get_slot_ref(wasm_snap_map *m, wasm_snap_reader *r,
					wasm_valtype t, uint64_t *v,
					char *why, size_t whylen)
{
	/* the core section made the image's exceptions in index order */
	reader rd = {.r = r,
		     .map = m->m,
		     .why = why,
		     .whylen = whylen,
		     .heap = m->s->exns,
		     .ready = m->s->nexns < UINT32_MAX ? (uint32_t)m->s->nexns
						       : UINT32_MAX};
	wasm_ref ref = WASM_REF_NULL;
	wasm_snap_status st = get_ref(&rd, t, &ref, "a suspended frame");

	*v = (uint64_t)ref;
	return st;
}

bool wasm_snap_instance_ordinal(const wasm_snap_map *m,
				const wasm_instance *inst, uint32_t *ord)
{
	return lookup(m->m.inst_sorted, m->m.inst_ord, m->m.ninsts, inst, ord);
}

wasm_instance *wasm_snap_instance_at(const wasm_snap_map *m, uint32_t ord)
{
	return ord < m->m.ninsts ? m->m.insts[ord] : NULL;
}

bool wasm_snap_host_ordinal(const wasm_snap_map *m, const wasm_func *f,
			    uint32_t *ord)
{
	return lookup(m->m.host_sorted, m->m.host_ord, m->m.nhosts, f, ord);
}

wasm_func *wasm_snap_host_at(const wasm_snap_map *m, uint32_t ord)
{
	return ord < m->m.nhosts ? m->m.hosts[ord] : NULL;
}

uint32_t wasm_snap_nhosts(const wasm_snap_map *m)
{
	return m->m.nhosts;
}

bool wasm_snap_memory_ordinal(const wasm_snap_map *m, const wasm_memory *mem,
			      uint32_t *ord)
{
	return lookup(m->mem_sorted, m->mem_ord, m->nmems, mem, ord);
}

wasm_memory *wasm_snap_memory_at(const wasm_snap_map *m, uint32_t ord)
{
	return ord < m->nmems ? m->mems[ord] : NULL;
}
