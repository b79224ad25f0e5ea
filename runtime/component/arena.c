/*
 * arena.c - bump allocation for component definitions (see arena.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_arena_alloc: blocks of at least the request; the arena's limit
 *    bounds them all (a load: LOAD_BASE_LIMIT + LOAD_PER_BYTE x the
 *    component's length, component.c; a store: STORE_ARENA_LIMIT);
 *    cm_arena_push's doubling wastes at most as much as it keeps.
 */
#include <stdlib.h>
#include <string.h>

#include "component/arena.h"

#define ARENA_BLOCK 65536
#define ARENA_ALIGN 16

struct cm_arena_block {
	cm_arena_block *next;
	size_t size, pos;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

cm_arena *cm_arena_new(size_t limit)
{
	cm_arena *a = calloc(1, sizeof *a);

	if (a != NULL)
		a->limit = limit;
	return a;
}

void cm_arena_free(cm_arena *a)
{
	if (a == NULL)
		return;
	while (a->head != NULL) {
		cm_arena_block *b = a->head;

		a->head = b->next;
		free(b);
	}
	free(a);
}

void *cm_arena_alloc(cm_arena *a, size_t size)
{
	cm_arena_block *b = a->head;
	size_t need = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	void *p;

	if (need < size)
		return NULL;
	if (need == 0)
		need = ARENA_ALIGN;
	if (b == NULL || b->size - b->pos < need) {
		size_t bsize = need > ARENA_BLOCK / 2 ? need : ARENA_BLOCK;

		if (a->limit != 0 &&
		    (bsize > a->limit || a->used > a->limit - bsize))
			return NULL;
		b = malloc(sizeof *b + bsize);
		if (b == NULL)
			return NULL;
		b->size = bsize;
		b->pos = 0;
		a->used += bsize + sizeof *b;
		/* A large one-off block goes behind the current one so the
		 * current block's free space stays usable. */
		if (bsize > ARENA_BLOCK && a->head != NULL) {
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
	}
	p = b->data + b->pos;
	b->pos += need;
	memset(p, 0, need);
	return p;
}

void *cm_arena_array(cm_arena *a, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	return cm_arena_alloc(a, n * size);
}

void *cm_arena_push(cm_arena *a, void **v, uint32_t *n, uint32_t *cap,
		    size_t size)
{
	if (*n == UINT32_MAX)
		return NULL;
	if (*n == *cap) {
		uint32_t ncap =
			*cap ? (*cap > UINT32_MAX / 2 ? UINT32_MAX : *cap * 2)
			     : 8;
		void *nv = cm_arena_array(a, ncap, size);

		if (nv == NULL)
			return NULL;
		if (*n)
			memcpy(nv, *v, (size_t)*n * size);
		*v = nv;
		*cap = ncap;
	}
	return (unsigned char *)*v + (size_t)(*n)++ * size;
}

int cm_arena_str(cm_arena *a, const void *p, size_t len, cm_str *out)
{
	char *s;

	if (len > UINT32_MAX - 1)
		return -1;
	s = cm_arena_alloc(a, len + 1);
	if (s == NULL)
		return -1;
	if (len)
		memcpy(s, p, len);
	s[len] = '\0';
	out->ptr = s;
	out->len = (uint32_t)len;
	return 0;
}
