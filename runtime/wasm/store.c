/*
 * store.c - the store: ownership of every runtime object, store limits and
 * the function-type interning table.
 *
 * Contract: wasm_store_free releases every object ever registered with
 * wasm_store_own, newest first, so objects may still be linked to each
 * other while they go.  Interning gives structurally equal function types
 * the same small id, so call_indirect and import matching compare one
 * integer instead of two type lists.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - wasm_store_own: the object list, one entry per object an
 *    instantiation or the host makes (instance.c's bound per module).
 *  - type interning: one functype per distinct type of the store's
 *    modules, and a hash table at most twice that.
 */
#include "wasm/store.h"

#include <stdlib.h>
#include <string.h>

#include "wasm/exec.h"
#include "wasm/instance.h"

wasm_store *wasm_store_new(const wasm_store_limits *limits)
{
	wasm_store *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	if (limits != NULL)
		s->limits = *limits;
	return s;
}

void wasm_store_usage_get(const wasm_store *s, wasm_store_usage *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < s->nobjs; i++) {
		const wasm_store_obj *o = &s->objs[i];

		if (o->kind == WASM_OBJ_MEMORY) {
			out->memories++;
			out->memory_bytes += ((const wasm_memory *)o->ptr)->size;
		} else if (o->kind == WASM_OBJ_TABLE) {
			out->tables++;
			out->table_elems +=
				((const wasm_table_inst *)o->ptr)->size;
		} else if (o->kind == WASM_OBJ_INSTANCE) {
			out->instances++;
		}
	}
	out->exception_bytes = s->exn_bytes;
}

static void free_obj(const wasm_store_obj *o)
{
	switch (o->kind) {
	case WASM_OBJ_MEMORY:
		wasm_memory_destroy(o->ptr);
		break;
	case WASM_OBJ_TABLE:
		wasm_table_destroy(o->ptr);
		break;
	case WASM_OBJ_INSTANCE:
		wasm_instance_destroy(o->ptr);
		break;
	case WASM_OBJ_FUNC:
	case WASM_OBJ_GLOBAL:
	case WASM_OBJ_TAG:
		free(o->ptr);
		break;
	}
}

void wasm_store_free(wasm_store *s)
{
	size_t i;
	uint32_t t;

	if (s == NULL)
		return;
	wasm_store_forget_execs(s);
	for (i = 0; i < s->nexns; i++)
		free(s->exns[i]);
	free(s->exns);
	for (i = s->nobjs; i > 0; i--)
		free_obj(&s->objs[i - 1]);
	free(s->objs);
	for (t = 0; t < s->ntypes; t++)
		free(s->types[t]);
	free(s->types);
	free(s->type_hash);
	free(s);
}

int wasm_store_own(wasm_store *s, void *ptr, wasm_obj_kind kind)
{
	if (s->nobjs == s->objs_cap) {
		size_t cap = s->objs_cap ? s->objs_cap * 2 : 16;
		wasm_store_obj *objs;

		if (cap > SIZE_MAX / sizeof *objs)
			return -1;
		objs = realloc(s->objs, cap * sizeof *objs);
		if (objs == NULL)
			return -1;
		s->objs = objs;
		s->objs_cap = cap;
	}
	s->objs[s->nobjs].ptr = ptr;
	s->objs[s->nobjs].kind = kind;
	s->nobjs++;
	return 0;
}

/* ---- function-type interning ------------------------------------------ */

static uint32_t hash_step(uint32_t h, uint32_t v)
{
	/* FNV-1a over the 4 bytes of v. */
	for (int i = 0; i < 4; i++) {
		h ^= (v >> (8 * i)) & 0xff;
		h *= 16777619u;
	}
	return h;
}

static uint32_t functype_hash(const wasm_functype *ft)
{
	uint32_t h = 2166136261u, i;

	h = hash_step(h, ft->nparams);
	for (i = 0; i < ft->nparams; i++)
		h = hash_step(h, ft->params[i]);
	h = hash_step(h, ft->nresults);
	for (i = 0; i < ft->nresults; i++)
		h = hash_step(h, ft->results[i]);
	return h;
}

static bool functype_equal(const wasm_functype *a, const wasm_functype *b)
{
	if (a->nparams != b->nparams || a->nresults != b->nresults)
		return false;
	if (a->nparams != 0 &&
	    memcmp(a->params, b->params, a->nparams * sizeof *a->params) != 0)
		return false;
	if (a->nresults != 0 && memcmp(a->results, b->results,
				       a->nresults * sizeof *a->results) != 0)
		return false;
	return true;
}

/* One block: the struct, then params, then results. */
static wasm_functype *functype_copy(const wasm_functype *ft)
{
	size_t n = (size_t)ft->nparams + ft->nresults;
	wasm_functype *c;

	if (n > (SIZE_MAX - sizeof *c) / sizeof(wasm_valtype))
		return NULL;
	c = malloc(sizeof *c + n * sizeof(wasm_valtype));
	if (c == NULL)
		return NULL;
	c->nparams = ft->nparams;
	c->nresults = ft->nresults;
	c->params = (wasm_valtype *)(c + 1);
	c->results = c->params + ft->nparams;
	if (ft->nparams != 0)
		memcpy(c->params, ft->params, ft->nparams * sizeof *c->params);
	if (ft->nresults != 0)
		memcpy(c->results, ft->results,
		       ft->nresults * sizeof *c->results);
	return c;
}

static void hash_insert(uint32_t *tab, uint32_t cap, uint32_t h, uint32_t id)
{
	uint32_t i = h & (cap - 1);

	while (tab[i] != 0)
		i = (i + 1) & (cap - 1);
	tab[i] = id + 1;
}

static int hash_grow(wasm_store *s)
{
	uint32_t cap = s->type_hash_cap ? s->type_hash_cap * 2 : 16, id;
	uint32_t *tab;

	if (cap == 0 || cap > UINT32_MAX / 2)
		return -1;
	tab = calloc(cap, sizeof *tab);
	if (tab == NULL)
		return -1;
	for (id = 0; id < s->ntypes; id++)
		hash_insert(tab, cap, functype_hash(s->types[id]), id);
	free(s->type_hash);
	s->type_hash = tab;
	s->type_hash_cap = cap;
	return 0;
}

uint32_t wasm_store_intern_type(wasm_store *s, const wasm_functype *ft)
{
	uint32_t h = functype_hash(ft), i, id;
	wasm_functype *c;

	if (s->type_hash_cap != 0) {
		i = h & (s->type_hash_cap - 1);
		while (s->type_hash[i] != 0) {
			id = s->type_hash[i] - 1;
			if (functype_equal(s->types[id], ft))
				return id;
			i = (i + 1) & (s->type_hash_cap - 1);
		}
	}
	/* New type: keep the hash at most half full. */
	if (s->ntypes >= WASM_TYPE_ID_NONE - 1)
		return WASM_TYPE_ID_NONE;
	if ((s->ntypes + 1) * 2 > s->type_hash_cap && hash_grow(s) != 0)
		return WASM_TYPE_ID_NONE;
	if (s->ntypes == s->types_cap) {
		uint32_t cap = s->types_cap ? s->types_cap * 2 : 8;
		wasm_functype **types = realloc(s->types, cap * sizeof *types);

		if (types == NULL)
			return WASM_TYPE_ID_NONE;
		s->types = types;
		s->types_cap = cap;
	}
	c = functype_copy(ft);
	if (c == NULL)
		return WASM_TYPE_ID_NONE;
	id = s->ntypes++;
	s->types[id] = c;
	hash_insert(s->type_hash, s->type_hash_cap, h, id);
	return id;
}
