/*
 * table.c - the per-instance handle table (definitions.py Table), the
 * Task-side borrow scope and the Subtask-side lenders list.
 *
 * Contract (cabi.h, digest 2.2): slot 0 is reserved and never handed out;
 * add reuses the most recently freed index (LIFO) before appending; indices
 * never exceed CABI_TABLE_MAX_LENGTH, nor the live elements t->limit when
 * the embedder set one (both trap); get of 0, of an index >= len or of a
 * free slot traps "unknown handle index N".  The free stack always has room
 * for every slot, so remove cannot fail for lack of memory.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - grow (cabi_table_add): array and free stack double up to the live
 *    elements' limit (max_handles, 100,000 per instance, for handles;
 *    max_threads, 1,000, for threads) and never past
 *    CABI_TABLE_MAX_LENGTH; past it the guest traps "handle table full
 *    (limit N)".
 *  - cabi_lenders_add: one index per borrow a lift lends, each an
 *    element of a lifted value whose 40-byte cm_val the lift charged
 *    (the list is 1/10 of that charge), kept with the subtask whose cx
 *    keeps the charge until it is freed (canon_lower.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cabi/internal.h"

void cabi_table_init(cabi_table *t)
{
	memset(t, 0, sizeof *t);
}

void cabi_table_free(cabi_table *t)
{
	free(t->array);
	free(t->free);
	cabi_table_init(t);
}

uint32_t cabi_table_count(const cabi_table *t)
{
	return t->len == 0 ? 0 : t->len - 1 - t->nfree;
}

const char *cabi_elem_kind_name(cabi_elem_kind k)
{
	switch (k) {
	case CABI_ELEM_FREE:
		return "free slot";
	case CABI_ELEM_RESOURCE:
		return "resource";
	case CABI_ELEM_SUBTASK:
		return "subtask";
	case CABI_ELEM_STREAM_READABLE:
		return "readable stream end";
	case CABI_ELEM_STREAM_WRITABLE:
		return "writable stream end";
	case CABI_ELEM_FUTURE_READABLE:
		return "readable future end";
	case CABI_ELEM_FUTURE_WRITABLE:
		return "writable future end";
	case CABI_ELEM_WAITABLE_SET:
		return "waitable set";
	case CABI_ELEM_ERROR_CONTEXT:
		return "error context";
	case CABI_ELEM_THREAD:
		return "thread";
	}
	return "unknown";
}

/* Grow array and free stack together so that remove never allocates. */
static int grow(cabi_table *t, cabi_error *err)
{
	uint32_t ncap = t->cap == 0 ? 8 : t->cap * 2;
	cabi_elem *a;
	uint32_t *f;

	if (ncap > CABI_TABLE_MAX_LENGTH + 1)
		ncap = CABI_TABLE_MAX_LENGTH + 1;
	a = realloc(t->array, (size_t)ncap * sizeof *a);
	if (a == NULL)
		return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
	t->array = a;
	f = realloc(t->free, (size_t)ncap * sizeof *f);
	if (f == NULL)
		return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
	t->free = f;
	memset(a + t->cap, 0, (size_t)(ncap - t->cap) * sizeof *a);
	t->cap = ncap;
	return 0;
}

int cabi_table_add(cabi_table *t, const cabi_elem *e, uint32_t *index,
		   cabi_error *err)
{
	uint32_t i;

	if (e->kind == CABI_ELEM_FREE)
		return cabi_fail(err, CABI_ERR_VALUE,
				 "cannot add a free slot to a table");
	if (t->nfree > 0) {
		i = t->free[--t->nfree];
		t->array[i] = *e;
		*index = i;
		return 0;
	}
	if (t->len == 0)
		t->len = 1; /* the reserved slot 0 */
	i = t->len;
	if (i > CABI_TABLE_MAX_LENGTH)
		return cabi_fail(err, CABI_ERR_TRAP, CABI_MSG_TABLE_FULL);
	/* slot 0 is reserved, so index i makes i live elements */
	if (t->limit != 0 && i > t->limit)
		return cabi_fail(err, CABI_ERR_TRAP,
				 CABI_MSG_TABLE_FULL " (limit %u)", t->limit);
	if (i >= t->cap && grow(t, err))
		return -1;
	t->array[i] = *e;
	t->len = i + 1;
	*index = i;
	return 0;
}

cabi_elem *cabi_table_get(cabi_table *t, uint32_t i, cabi_error *err)
{
	if (t == NULL || i == 0 || i >= t->len ||
	    t->array[i].kind == CABI_ELEM_FREE) {
		cabi_fail(err, CABI_ERR_TRAP, CABI_MSG_UNKNOWN_HANDLE " %u", i);
		return NULL;
	}
	return &t->array[i];
}

int cabi_table_remove(cabi_table *t, uint32_t i, cabi_elem *out,
		      cabi_error *err)
{
	cabi_elem *e = cabi_table_get(t, i, err);

	if (e == NULL)
		return -1;
	if (out != NULL)
		*out = *e;
	memset(e, 0, sizeof *e);
	t->free[t->nfree++] = i;
	return 0;
}

cabi_elem *cabi_table_get_kind(cabi_table *t, uint32_t i, cabi_elem_kind k,
			       cabi_error *err)
{
	cabi_elem *e = cabi_table_get(t, i, err);

	if (e != NULL && e->kind != k) {
		cabi_fail(err, CABI_ERR_TRAP,
			  "handle index %u " CABI_MSG_WRONG_TYPE
			  ", expected %s but found %s",
			  i, cabi_elem_kind_name(k),
			  cabi_elem_kind_name(e->kind));
		return NULL;
	}
	return e;
}

static const char *rt_desc(const cabi_resource_type *rt)
{
	return rt != NULL && rt->impl == NULL && rt->type == NULL
		       ? "host-defined resource"
		       : "guest-defined resource";
}

cabi_resource_handle *cabi_table_get_resource(cabi_table *t, uint32_t i,
					      const cabi_resource_type *rt,
					      cabi_error *err)
{
	cabi_elem *e = cabi_table_get_kind(t, i, CABI_ELEM_RESOURCE, err);

	if (e == NULL)
		return NULL;
	if (rt != NULL && e->u.res.rt != rt) {
		cabi_fail(err, CABI_ERR_TRAP,
			  "handle index %u " CABI_MSG_WRONG_TYPE
			  ", expected %s but found a different %s",
			  i, rt_desc(rt), rt_desc(e->u.res.rt));
		return NULL;
	}
	return &e->u.res;
}

/* ---- borrow scopes and lenders --------------------------------------------
 */

int cabi_borrow_scope_exit(const cabi_borrow_scope *s, cabi_error *err)
{
	if (s != NULL && s->num_borrows != 0)
		return cabi_fail(err, CABI_ERR_TRAP, CABI_MSG_BORROWS_REMAIN);
	return 0;
}

void cabi_lenders_init(cabi_lenders *l, cabi_table *table)
{
	memset(l, 0, sizeof *l);
	l->table = table;
}

int cabi_lenders_add(cabi_lenders *l, uint32_t index, cabi_error *err)
{
	cabi_elem *e;

	if (l->n == l->cap) {
		uint32_t ncap = l->cap == 0 ? 4 : l->cap * 2;
		uint32_t *p = realloc(l->indices, (size_t)ncap * sizeof *p);

		if (p == NULL)
			return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
		l->indices = p;
		l->cap = ncap;
	}
	e = cabi_table_get_kind(l->table, index, CABI_ELEM_RESOURCE, err);
	if (e == NULL)
		return -1;
	e->u.res.num_lends++;
	l->indices[l->n++] = index;
	return 0;
}

void cabi_lenders_release(cabi_lenders *l)
{
	for (uint32_t k = 0; k < l->n; k++) {
		uint32_t i = l->indices[k];
		cabi_table *t = l->table;

		/* a lent handle stays in its slot; the guard only matters
		 * after a trap, when the instance is poisoned anyway */
		if (t != NULL && i < t->len &&
		    t->array[i].kind == CABI_ELEM_RESOURCE &&
		    t->array[i].u.res.num_lends > 0)
			t->array[i].u.res.num_lends--;
	}
	l->n = 0;
}

void cabi_lenders_free(cabi_lenders *l)
{
	free(l->indices);
	l->indices = NULL;
	l->n = l->cap = 0;
}
