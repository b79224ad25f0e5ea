/*
 * table.c - table instances: creation, table.grow, teardown.
 *
 * Contract: `elems` is a heap array of at least one element (never NULL)
 * holding `size` live references; it grows geometrically up to the
 * effective maximum and may move on grow.  The effective maximum is the
 * smallest of the index type's cap (2^32-1 or 2^64-1), the type's own
 * max and the store's max_table_elems (WASM_DEFAULT_MAX_TABLE_ELEMS,
 * 10,000,000, when it is 0).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - wasm_table_create, wasm_table_grow: the elements, up to the
 *    effective maximum above; past it creation fails and table.grow
 *    answers -1.  By default that is 10,000,000 elements (80 MB): a
 *    guest that grows a table of the type's own max, up to 2^32 - 1
 *    elements (32 GiB), took `hostel run` to 24 GB before the kernel
 *    killed it.  An embedder that wants the type's max passes
 *    UINT64_MAX (docs/limits.md).
 */
#include "wasm/instance.h"

#include <stdlib.h>

static uint64_t max_elems(const wasm_tabletype *t, const wasm_store_limits *l)
{
	uint64_t cap = t->limits.is64 ? UINT64_MAX : UINT32_MAX;
	uint64_t host = (uint64_t)(SIZE_MAX / sizeof(wasm_ref));
	uint64_t most = l->max_table_elems ? l->max_table_elems
					   : WASM_DEFAULT_MAX_TABLE_ELEMS;

	if (host < cap)
		cap = host;
	if (t->limits.has_max && t->limits.max < cap)
		cap = t->limits.max;
	if (most < cap)
		cap = most;
	return cap;
}

wasm_table_inst *wasm_table_create(wasm_store *s, const wasm_tabletype *type,
				   wasm_ref init, wasm_error *err)
{
	uint64_t cap = max_elems(type, &s->limits), n, i;
	wasm_table_inst *t;

	if (type->limits.has_max && type->limits.min > type->limits.max) {
		wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
			       "size minimum must not be greater than maximum");
		return NULL;
	}
	if (type->limits.min > cap) {
		wasm_error_set(err, WASM_ERR_RESOURCE, WASM_NO_OFFSET,
			       "table size exceeds limit: %llu elements",
			       (unsigned long long)type->limits.min);
		return NULL;
	}
	t = calloc(1, sizeof *t);
	if (t == NULL)
		goto oom;
	n = type->limits.min ? type->limits.min : 1;
	/* calloc: a large null table stays untouched (lazy zero pages). */
	t->elems = calloc((size_t)n, sizeof *t->elems);
	if (t->elems == NULL) {
		free(t);
		goto oom;
	}
	for (i = 0; init != WASM_REF_NULL && i < n; i++)
		t->elems[i] = init;
	t->size = type->limits.min;
	t->max = cap;
	t->type = *type;
	t->cap = n;
	if (wasm_store_own(s, t, WASM_OBJ_TABLE) != 0) {
		wasm_table_destroy(t);
		goto oom;
	}
	return t;
oom:
	wasm_error_set(err, WASM_ERR_RESOURCE, WASM_NO_OFFSET,
		       "out of memory: table of %llu elements",
		       (unsigned long long)type->limits.min);
	return NULL;
}

void wasm_table_destroy(wasm_table_inst *t)
{
	free(t->elems);
	free(t);
}

int64_t wasm_table_grow(wasm_table_inst *t, uint64_t delta, wasm_ref init)
{
	uint64_t old = t->size, want, i;

	if (delta > t->max - old)
		return -1;
	want = old + delta;
	if (want > t->cap) {
		/* Double, but never past max: growth is bounded by the type. */
		uint64_t cap = t->cap * 2 > want ? t->cap * 2 : want;
		wasm_ref *e;

		if (cap > t->max)
			cap = t->max;
		e = realloc(t->elems, (size_t)cap * sizeof *e);
		if (e == NULL)
			return -1;
		t->elems = e;
		t->cap = cap;
	}
	for (i = old; i < want; i++)
		t->elems[i] = init;
	t->size = want;
	/* table64 sizes above INT64_MAX are unreachable: no such allocation. */
	return (int64_t)old;
}

/* ---- public API --------------------------------------------------------- */

wasm_table_inst *wasm_table_new(wasm_store *s, wasm_tabletype type,
				wasm_ref init)
{
	return wasm_table_create(s, &type, init, NULL);
}

const wasm_tabletype *wasm_table_type(const wasm_table_inst *t)
{
	return &t->type;
}
