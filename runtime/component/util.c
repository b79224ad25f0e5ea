/*
 * util.c - validation error messages and the arena hash map used for
 * name uniqueness, visibility sets, resource maps and memo tables.
 *
 * Contract: cm_fail records one error (the first one wins until it is
 * reported); cm_context prefixes context to it.  The hash map never
 * fails except on allocation, and its iteration order is irrelevant to
 * every caller (lookups only).
 *
 * Allocations sized by a guest or a client (issue 18 audit): none.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "component/internal.h"

int cm_fail(vstate *v, size_t offset, const char *fmt, ...)
{
	va_list ap;

	v->kind = WASM_ERR_INVALID;
	v->offset = offset;
	va_start(ap, fmt);
	vsnprintf(v->msg, sizeof v->msg, fmt, ap);
	va_end(ap);
	return -1;
}

int cm_work_exceeded(vstate *v)
{
	if (!v->over_budget) {
		v->over_budget = true;
		cm_fail(v, v->offset,
			"validation work limit exceeded (the component's "
			"types are too large to compare)");
	}
	return 1;
}

int cm_oom(vstate *v)
{
	v->kind = WASM_ERR_RESOURCE;
	snprintf(v->msg, sizeof v->msg, "out of memory");
	return -1;
}

int cm_context(vstate *v, const char *fmt, ...)
{
	char ctx[CM_MSG_MAX], out[CM_MSG_MAX];
	size_t lc, lm;
	va_list ap;

	if (v->kind == WASM_ERR_RESOURCE)
		return -1;
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof ctx, fmt, ap);
	va_end(ap);
	/* Keep the innermost message whole; drop context that won't fit. */
	lc = strlen(ctx);
	lm = strlen(v->msg);
	if (lc + 2 + lm >= sizeof out)
		return -1;
	memcpy(out, ctx, lc);
	memcpy(out + lc, ": ", 2);
	memcpy(out + lc + 2, v->msg, lm + 1);
	memcpy(v->msg, out, sizeof out);
	return -1;
}

/* ---- hash map ---------------------------------------------------------- */

/* Never 0: a zero hash marks an empty slot. */
static uint32_t hash_key(const void *key, uint32_t len)
{
	uint64_t h = 1469598103934665603ull;

	if (len == CM_KEY_PTR) {
		uintptr_t p = (uintptr_t)key;

		h ^= p;
		h *= 1099511628211ull;
		h ^= h >> 29;
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 32;
		return (uint32_t)h ? (uint32_t)h : 1;
	}
	for (uint32_t i = 0; i < len; i++) {
		h ^= ((const uint8_t *)key)[i];
		h *= 1099511628211ull;
	}
	h ^= h >> 32;
	return (uint32_t)h ? (uint32_t)h : 1;
}

static bool key_eq(const cm_hentry *e, const void *key, uint32_t len,
		   uint32_t h)
{
	if (e->hash != h || e->len != len)
		return false;
	if (len == CM_KEY_PTR)
		return e->key == key;
	return len == 0 || memcmp(e->key, key, len) == 0;
}

cm_hentry *cm_hmap_get(const cm_hmap *m, const void *key, uint32_t len)
{
	uint32_t h, i;

	if (m->cap == 0)
		return NULL;
	h = hash_key(key, len);
	for (i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		cm_hentry *e = &m->slots[i];

		if (e->hash == 0)
			return NULL;
		if (key_eq(e, key, len, h))
			return e;
	}
}

static void insert_slot(cm_hmap *m, const cm_hentry *src)
{
	for (uint32_t i = src->hash & (m->cap - 1);;
	     i = (i + 1) & (m->cap - 1)) {
		cm_hentry *e = &m->slots[i];

		if (e->hash == 0) {
			*e = *src;
			return;
		}
	}
}

int cm_hmap_put(cm_arena *a, cm_hmap *m, const void *key, uint32_t len,
		const void *val)
{
	cm_hentry *e = cm_hmap_get(m, key, len), ne;

	if (e != NULL) {
		e->val = val;
		return 0;
	}
	if ((uint64_t)(m->n + 1) * 4 > (uint64_t)m->cap * 3) {
		uint32_t ncap = m->cap ? m->cap * 2 : 16;
		cm_hentry *old = m->slots;
		uint32_t ocap = m->cap;

		if (ncap == 0)
			return -1;
		m->slots = cm_arena_array(a, ncap, sizeof *m->slots);
		if (m->slots == NULL) {
			m->slots = old;
			return -1;
		}
		m->cap = ncap;
		for (uint32_t i = 0; i < ocap; i++)
			if (old[i].hash != 0)
				insert_slot(m, &old[i]);
	}
	ne.key = key;
	ne.len = len;
	ne.hash = hash_key(key, len);
	ne.val = val;
	insert_slot(m, &ne);
	m->n++;
	return 0;
}
