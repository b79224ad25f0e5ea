/*
 * memory.c - linear memory instances: creation, memory.grow, teardown.
 *
 * Contract: a memory's bytes live in a private anonymous mapping sized to
 * the current size (at least one OS page, so `data` is never NULL).  The
 * mapping grows with mremap(MREMAP_MAYMOVE): no copy and no zeroing, the
 * kernel hands out zero pages lazily, so an untouched 4 GiB memory costs
 * page tables, not RAM.  Bytes past `size` are never written (every access
 * is bounds-checked against `size`), which is why grown bytes read as
 * zero.  `data` may move on grow.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - wasm_memory_create, wasm_memory_grow: the mapping of each memory,
 *    its max_pages: the type's max, the index type's cap and the store's
 *    max_memory_pages (hosteld: the service's memory limit), else the
 *    creation fails and memory.grow answers -1.  The limit is per
 *    memory; a module declares at most its byte length of memories.
 *  - the written map: a byte per page, within the same bound.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap */
#endif
#include "wasm/instance.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t os_page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

/* Bytes to map for `bytes` of memory: at least one OS page, rounded. */
static size_t map_len(uint64_t bytes)
{
	size_t page = os_page_size();

	if (bytes < page)
		return page;
	return (size_t)((bytes + page - 1) / page * page);
}

/* The effective page cap: index type, the type's max, the store limit. */
static uint64_t max_pages(const wasm_memtype *t, const wasm_store_limits *l)
{
	uint64_t cap = t->limits.is64 ? WASM_MAX_PAGES64 : WASM_MAX_PAGES32;
	/* Keep size in bytes (and the mapping length) representable. */
	uint64_t host = (uint64_t)(SIZE_MAX / 2) / WASM_PAGE_SIZE;

	if (host < cap)
		cap = host;
	if (t->limits.has_max && t->limits.max < cap)
		cap = t->limits.max;
	if (l->max_memory_pages != 0 && l->max_memory_pages < cap)
		cap = l->max_memory_pages;
	return cap;
}

wasm_memory *wasm_memory_create(wasm_store *s, const wasm_memtype *type,
				wasm_error *err)
{
	uint64_t cap = max_pages(type, &s->limits);
	wasm_memory *m;
	size_t len;
	void *p;

	if (type->limits.has_max && type->limits.min > type->limits.max) {
		wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
			       "size minimum must not be greater than maximum");
		return NULL;
	}
	if (type->limits.min > cap) {
		wasm_error_set(err, WASM_ERR_RESOURCE, WASM_NO_OFFSET,
			       "memory size exceeds limit: %llu pages",
			       (unsigned long long)type->limits.min);
		return NULL;
	}
	m = calloc(1, sizeof *m);
	if (m == NULL)
		goto oom;
	len = map_len(type->limits.min * WASM_PAGE_SIZE);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		free(m);
		goto oom;
	}
	/* all marked: nothing is known of a new memory's pages */
	m->written = malloc(type->limits.min ? type->limits.min : 1);
	if (m->written == NULL) {
		munmap(p, len);
		free(m);
		goto oom;
	}
	memset(m->written, 1, type->limits.min ? type->limits.min : 1);
	m->data = p;
	m->size = type->limits.min * WASM_PAGE_SIZE;
	m->max_pages = cap;
	m->type = *type;
	m->mapped = len;
	if (wasm_store_own(s, m, WASM_OBJ_MEMORY) != 0) {
		wasm_memory_destroy(m);
		goto oom;
	}
	return m;
oom:
	wasm_error_set(err, WASM_ERR_RESOURCE, WASM_NO_OFFSET,
		       "out of memory: memory of %llu pages",
		       (unsigned long long)type->limits.min);
	return NULL;
}

void wasm_memory_destroy(wasm_memory *m)
{
	munmap(m->data, m->mapped);
	free(m->written);
	free(m);
}

int64_t wasm_memory_grow(wasm_memory *m, uint64_t delta_pages)
{
	uint64_t old = m->size / WASM_PAGE_SIZE, bytes;

	if (delta_pages > m->max_pages - old)
		return -1;
	bytes = (old + delta_pages) * WASM_PAGE_SIZE;
	if (delta_pages) {
		/* new pages are zero, as the base of a delta takes them */
		uint8_t *w = realloc(m->written, old + delta_pages);

		if (w == NULL)
			return -1;
		memset(w + old, 0, delta_pages);
		m->written = w;
	}
	if (bytes > m->mapped) {
		size_t len = map_len(bytes);
		void *p = mremap(m->data, m->mapped, len, MREMAP_MAYMOVE);

		if (p == MAP_FAILED)
			return -1;
		m->data = p;
		m->mapped = len;
	}
	m->size = bytes;
	return (int64_t)old;
}

/* ---- public API --------------------------------------------------------- */

wasm_memory *wasm_memory_new(wasm_store *s, wasm_memtype type)
{
	return wasm_memory_create(s, &type, NULL);
}

uint8_t *wasm_memory_data(wasm_memory *m)
{
	memset(m->written, 1, m->size ? m->size / WASM_PAGE_SIZE : 1);
	return m->data;
}

uint8_t *wasm_memory_write(wasm_memory *m, uint64_t off, uint64_t len)
{
	wasm_memory_mark(m, off, len);
	return m->data + off;
}

const uint8_t *wasm_memory_bytes(const wasm_memory *m)
{
	return m->data;
}

uint64_t wasm_memory_size_bytes(const wasm_memory *m)
{
	return m->size;
}

bool wasm_memory_in_bounds(const wasm_memory *m, uint64_t off, uint64_t len)
{
	return len <= m->size && off <= m->size - len;
}

const wasm_memtype *wasm_memory_type(const wasm_memory *m)
{
	return &m->type;
}
