/*
 * arena.h - the bump allocator that owns everything a loaded component
 * holds (types, names, definitions, index spaces).
 *
 * Contract: cm_arena_alloc returns zeroed, 16-byte aligned memory or NULL
 * when the allocation fails or would pass the arena's byte limit (a
 * hostile binary cannot make the loader use unbounded memory).  Nothing
 * is freed individually; cm_arena_free releases every block at once.
 * cm_arena_grow keeps a growable array inside the arena: the old storage
 * is simply abandoned (arrays are built once, so the waste is bounded by
 * doubling).
 */
#ifndef HOSTEL_COMPONENT_ARENA_H
#define HOSTEL_COMPONENT_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "component/types.h"

typedef struct cm_arena_block cm_arena_block;

typedef struct cm_arena {
	cm_arena_block *head;
	size_t used;	  /* bytes handed out plus block overhead */
	size_t limit;	  /* 0 = unlimited */
	uint32_t next_id; /* resource ids (cm_resource.id) */
} cm_arena;

cm_arena *cm_arena_new(size_t limit);
void cm_arena_free(cm_arena *a);
void *cm_arena_alloc(cm_arena *a, size_t size);
/* n elements of size `size`, overflow-checked. */
void *cm_arena_array(cm_arena *a, size_t n, size_t size);
/*
 * Make room for one more element in (*v, *n, *cap): returns the new
 * element (zeroed) or NULL.
 */
void *cm_arena_push(cm_arena *a, void **v, uint32_t *n, uint32_t *cap,
		    size_t size);
/* A NUL-terminated copy of len bytes. */
int cm_arena_str(cm_arena *a, const void *p, size_t len, cm_str *out);

#endif
