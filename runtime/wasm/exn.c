/*
 * exn.c - exception objects (exnref): allocation against the store's
 * byte limit, and the collection that frees the ones nothing reaches.
 *
 * Contract (see store.h):
 *  - Every exception is counted in s->exn_bytes, with what the allocator
 *    and the store spend on it, from wasm_exn_new until it is freed; the
 *    count never passes the store's limit (max_exception_bytes, default
 *    WASM_DEFAULT_MAX_EXCEPTION_BYTES): a throw that would pass it fails
 *    like an allocation failure.
 *  - Collection is mark and sweep from the roots store.h names, and
 *    runs only inside wasm_exn_new (or when the host asks), so an exnref
 *    the interpreter holds in a C variable is never collected under it:
 *    at that point every live exnref of the throwing exec is in its
 *    stack.
 *  - A throw costs amortized constant time: a collection does work in
 *    proportion to what it keeps and to the stack slots it scans, and
 *    the next one waits until at least as many bytes (an eighth, for
 *    stack slots) have been thrown since, or until the limit.  At the
 *    limit, one runs only when at least COLLECT_MIN_BYTES (an eighth of
 *    a smaller limit) were thrown since the last, or when the last throw
 *    was refused; otherwise the throw fails at once.  A refused throw
 *    traps its exec, so a guest keeping nearly the limit alive buys at
 *    most one collection per trapped call, not one per throw.  The work
 *    is also charged to the guest's fuel (wasm_exn_new's *work), so a
 *    turn that collects ends soon.
 *  - Stack slots are untyped, so a slot that merely looks like an
 *    exception's address keeps it: collection is conservative, never
 *    unsafe.  Globals and tables are scanned only when their type is
 *    exnref.
 *  - A snapshot's restore (runtime/wasm/snapshot.c) drops every
 *    exception and exnref of the store (wasm_store_reset_exns), then
 *    makes the image's without collecting (wasm_exn_restore: nothing
 *    holds them until the globals and tables are read), under the same
 *    limit; the next throw's collection starts from what it made.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - wasm_exn_new: live exceptions of a store stay under
 *    max_exception_bytes (WASM_DEFAULT_MAX_EXCEPTION_BYTES, 64 MiB,
 *    when the limits say 0), else the throw traps out of memory; the
 *    store's list of them grows by doubling with them.
 *  - collect: marks and a work list, one entry per live exception.
 */
#include <stdlib.h>
#include <string.h>

#include "wasm/exec.h"
#include "wasm/store.h"

#define COLLECT_MIN_BYTES (256u << 10)
/* An allocation's header and rounding, and the store's pointer to it. */
#define EXN_OVERHEAD (2 * sizeof(void *) + sizeof(wasm_exn *))

/* What an exception of nslots slots counts for; 0 when it cannot exist. */
static size_t exn_cost(uint32_t nslots)
{
	size_t fixed = sizeof(wasm_exn) + EXN_OVERHEAD;

	if ((uint64_t)nslots > (SIZE_MAX - fixed) / sizeof(uint64_t))
		return 0;
	return fixed + (size_t)nslots * sizeof(uint64_t);
}

static size_t max_bytes(const wasm_store *s)
{
	uint64_t m = s->limits.max_exception_bytes;

	if (m == 0)
		return WASM_DEFAULT_MAX_EXCEPTION_BYTES;
	return m > SIZE_MAX ? SIZE_MAX : (size_t)m;
}

/* ---- collection ---------------------------------------------------------- */

struct mark {
	wasm_exn **sorted; /* the store's exceptions by address */
	unsigned char *marked;
	size_t *todo; /* indices into sorted, marked but not yet scanned */
	size_t n, ntodo;
	uintptr_t lo, hi; /* address range, to reject most slots at once */
};

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (wasm_exn *const *)a;
	uintptr_t y = (uintptr_t) * (wasm_exn *const *)b;

	return x < y ? -1 : x > y;
}

static void mark_value(struct mark *m, uint64_t v)
{
	size_t lo = 0, hi = m->n;

	if (v < m->lo || v > m->hi)
		return;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uintptr_t p = (uintptr_t)m->sorted[mid];

		if (p == v) {
			if (!m->marked[mid]) {
				m->marked[mid] = 1;
				m->todo[m->ntodo++] = mid;
			}
			return;
		}
		if (p < v)
			lo = mid + 1;
		else
			hi = mid;
	}
}

static void mark_slots(struct mark *m, const uint64_t *slots, size_t n)
{
	for (size_t i = 0; i < n; i++)
		mark_value(m, slots[i]);
}

static void mark_exec(struct mark *m, const wasm_exec *e)
{
	mark_slots(m, e->stack, e->stack_cap);
	mark_value(m, (uint64_t)(uintptr_t)e->exn);
}

/* What each_exnref does with an exnref: the value it leaves there. */
typedef uint64_t (*exnref_fn)(void *ctx, uint64_t ref);

static void exnref_global(wasm_global_inst *g, exnref_fn fn, void *ctx)
{
	if ((uint8_t)g->type.type == WASM_EXNREF) /* nullable or not */
		g->slots[0] = fn(ctx, g->slots[0]);
}

/*
 * Every exnref of the store's globals and tables: globals a host made,
 * and the ones instances define (they live in the instance's block;
 * imported ones are some other object's).  Element segments are left
 * out: an exnref segment holds only nulls.  The collection's roots and
 * what a restore nulls.
 */
static void each_exnref(wasm_store *s, exnref_fn fn, void *ctx)
{
	for (size_t i = 0; i < s->nobjs; i++) {
		const wasm_store_obj *o = &s->objs[i];

		if (o->kind == WASM_OBJ_GLOBAL) {
			exnref_global(o->ptr, fn, ctx);
		} else if (o->kind == WASM_OBJ_INSTANCE) {
			const wasm_instance *inst = o->ptr;
			const wasm_module *mod = inst->module;
			uint32_t n = wasm_module_nglobals(mod);

			for (uint32_t k = mod->nimported_globals; k < n; k++)
				exnref_global(inst->globals[k], fn, ctx);
		} else if (o->kind == WASM_OBJ_TABLE) {
			wasm_table_inst *t = o->ptr;

			if ((uint8_t)t->type.elem != WASM_EXNREF)
				continue;
			for (uint64_t k = 0; k < t->size; k++) {
				uint64_t v = (uint64_t)t->elems[k];
				uint64_t nv = fn(ctx, v);

				if (nv != v)
					t->elems[k] = (wasm_ref)nv;
			}
		}
	}
}

static uint64_t mark_ref(void *ctx, uint64_t ref)
{
	mark_value(ctx, ref);
	return ref;
}

/* The collection; *scanned: the stack slots it read. */
static size_t collect(wasm_store *s, size_t *scanned)
{
	struct mark m = {.n = s->nexns};
	size_t kept = 0, freed = 0;

	*scanned = 0;
	if (s->nexns == 0)
		return 0;
	m.sorted = s->exns;
	m.marked = calloc(m.n, 1);
	m.todo = malloc(m.n * sizeof *m.todo);
	if (m.marked == NULL || m.todo == NULL) {
		free(m.marked);
		free(m.todo);
		return 0;
	}
	qsort(m.sorted, m.n, sizeof *m.sorted, cmp_ptr);
	m.lo = (uintptr_t)m.sorted[0];
	m.hi = (uintptr_t)m.sorted[m.n - 1];
	for (const wasm_exec *e = s->execs; e != NULL; e = e->store_next) {
		mark_exec(&m, e);
		*scanned += e->stack_cap;
	}
	each_exnref(s, mark_ref, &m);
	/* An exception's payload may hold exnrefs too. */
	while (m.ntodo > 0) {
		const wasm_exn *x = m.sorted[m.todo[--m.ntodo]];

		mark_slots(&m, x->slots, x->nslots);
	}
	s->exn_bytes = 0;
	for (size_t i = 0; i < m.n; i++) {
		wasm_exn *x = m.sorted[i];

		if (!m.marked[i]) {
			free(x);
			freed++;
			continue;
		}
		s->exn_bytes += exn_cost(x->nslots);
		s->exns[kept++] = x;
	}
	s->nexns = kept;
	free(m.marked);
	free(m.todo);
	return freed;
}

/* ---- allocation ---------------------------------------------------------- */

/* The least room between collections: COLLECT_MIN_BYTES, or less for a
 * small limit (an eighth of it), which would otherwise never collect. */
static size_t min_room(size_t limit)
{
	return limit / 8 < COLLECT_MIN_BYTES ? limit / 8 : COLLECT_MIN_BYTES;
}

/* When the next collection runs, after one that kept s->exn_bytes. */
static void after_collection(wasm_store *s, size_t limit, size_t scanned)
{
	size_t kept = s->exn_bytes, room = scanned / 8;

	room = kept > room ? kept : room;
	room = room > min_room(limit) ? room : min_room(limit);
	s->exn_kept = kept;
	s->exn_refused = false;
	s->exn_collect_at = room > limit - kept ? limit : kept + room;
}

/* Whether a throw of `size` bytes collects first (see the top). */
static bool collect_first(const wasm_store *s, size_t size, size_t limit)
{
	if (s->exn_bytes <= s->exn_collect_at &&
	    size <= s->exn_collect_at - s->exn_bytes)
		return false; /* below the mark */
	return s->exn_bytes - s->exn_kept >= min_room(limit) ||
	       s->exn_collect_at - s->exn_kept >= min_room(limit) ||
	       s->exn_refused;
}

size_t wasm_store_collect_exns(wasm_store *s)
{
	size_t scanned, freed = collect(s, &scanned);

	after_collection(s, max_bytes(s), scanned);
	return freed;
}

/* Add an exception of `size` bytes (the caller checked the limit). */
static wasm_exn *exn_add(wasm_store *s, wasm_tag *tag, const uint64_t *slots,
			 uint32_t nslots, size_t size)
{
	wasm_exn *x;

	if (s->nexns == s->exns_cap) {
		size_t cap = s->exns_cap ? s->exns_cap * 2 : 16;
		wasm_exn **exns;

		if (cap > SIZE_MAX / sizeof *exns)
			return NULL;
		exns = realloc(s->exns, cap * sizeof *exns);
		if (exns == NULL)
			return NULL;
		s->exns = exns;
		s->exns_cap = cap;
	}
	x = malloc(sizeof *x + (size_t)nslots * sizeof x->slots[0]);
	if (x == NULL)
		return NULL;
	x->tag = tag;
	x->nslots = nslots;
	if (nslots != 0)
		memcpy(x->slots, slots, (size_t)nslots * sizeof x->slots[0]);
	s->exns[s->nexns++] = x;
	s->exn_bytes += size;
	return x;
}

wasm_exn *wasm_exn_new(wasm_store *s, wasm_tag *tag, const uint64_t *slots,
		       uint32_t nslots, uint64_t *work)
{
	size_t size = exn_cost(nslots), limit = max_bytes(s);

	*work = 0;
	if (size == 0 || size > limit)
		return NULL;
	if (s->exn_collect_at == 0)
		after_collection(s, limit, 0);
	if (collect_first(s, size, limit)) {
		size_t scanned, n = s->nexns;

		collect(s, &scanned);
		*work = n + scanned / 8;
		after_collection(s, limit, scanned);
	}
	if (size > limit - s->exn_bytes) {
		s->exn_refused = true;
		return NULL;
	}
	return exn_add(s, tag, slots, nslots, size);
}

wasm_exn *wasm_exn_restore(wasm_store *s, wasm_tag *tag, const uint64_t *slots,
			   uint32_t nslots)
{
	size_t size = exn_cost(nslots), limit = max_bytes(s);

	if (size == 0 || size > limit || size > limit - s->exn_bytes)
		return NULL;
	return exn_add(s, tag, slots, nslots, size);
}

static uint64_t null_ref(void *ctx, uint64_t ref)
{
	(void)ctx;
	(void)ref;
	return (uint64_t)WASM_REF_NULL;
}

void wasm_store_reset_exns(wasm_store *s)
{
	each_exnref(s, null_ref, NULL);
	for (size_t i = 0; i < s->nexns; i++)
		free(s->exns[i]);
	s->nexns = 0;
	s->exn_bytes = 0;
	s->exn_kept = 0;
	s->exn_refused = false;
	s->exn_collect_at = 0; /* recomputed from what the restore made */
}
