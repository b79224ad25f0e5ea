/*
 * random_type.h - a Component Model value type built from fuzzer bytes,
 * for the libFuzzer targets over the canonical ABI, WAVE and the JSON
 * value mapping (fuzz_cabi.c, fuzz_wave.c, fuzz_value_json.c).
 *
 * The bytes are read front to back (an exhausted input reads as zeroes,
 * which builds `bool`), one byte choosing each node's kind and a few more
 * its width; nesting stops at FT_MAX_DEPTH.  Every value type is reachable
 * except handles, streams, futures and error-context (they need a runtime
 * behind them).  Inside the element type of a variable-length list or a
 * map no string or variable-length list is built: a random memory image
 * could otherwise make each of 16K list elements a 64 KiB string, and the
 * target would measure the allocator instead of the code.
 *
 * Labels are kebab names f0, f1, ...; with a flag byte, cases and enum
 * labels start with the WAVE keywords (none, some, ok, err, true, ...)
 * that must be printed with a `%`.  Nodes are finished with
 * cm_type_finish, so their ABI facts are those the decoder would cache.
 *
 * Contract: ft_type never fails: when the pool is full it returns a
 * primitive.  ft_pool_free releases every node.  Test code only.
 */
#ifndef HOSTEL_TESTS_FUZZ_RANDOM_TYPE_H
#define HOSTEL_TESTS_FUZZ_RANDOM_TYPE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component/internal.h"
#include "component/types.h"

#define FT_MAX_DEPTH 6
#define FT_POOL	     2048

typedef struct ft_in {
	const uint8_t *p;
	size_t n;
} ft_in;

typedef struct ft_pool {
	void *ptrs[FT_POOL];
	int n;
} ft_pool;

static inline uint8_t ft_byte(ft_in *in)
{
	if (in->n == 0)
		return 0;
	in->n--;
	return *in->p++;
}

static inline uint32_t ft_u16(ft_in *in)
{
	uint32_t lo = ft_byte(in);

	return lo | (uint32_t)ft_byte(in) << 8;
}

static inline void *ft_alloc(ft_pool *pl, size_t n)
{
	void *p;

	if (pl->n == FT_POOL)
		return NULL;
	p = calloc(1, n ? n : 1);
	if (p != NULL)
		pl->ptrs[pl->n++] = p;
	return p;
}

static inline void ft_pool_free(ft_pool *pl)
{
	while (pl->n > 0)
		free(pl->ptrs[--pl->n]);
}

/* Label i: a keyword first when `kw`, then f<i>. */
static inline int ft_label(ft_pool *pl, uint32_t i, bool kw, cm_str *out)
{
	static const char *const keywords[] = {"none", "some",	"ok",  "err",
					       "true", "false", "inf", "nan"};
	char *s;

	if (kw && i < sizeof keywords / sizeof keywords[0]) {
		*out = (cm_str){keywords[i], (uint32_t)strlen(keywords[i])};
		return 0;
	}
	s = ft_alloc(pl, 16);
	if (s == NULL)
		return -1;
	snprintf(s, 16, "f%u", i);
	*out = (cm_str){s, (uint32_t)strlen(s)};
	return 0;
}

static const cm_type *ft_type(ft_pool *pl, ft_in *in, int depth, bool in_list);

/* n labelled fields (record, variant) with types, or just labels. */
static inline cm_field *ft_fields(ft_pool *pl, ft_in *in, uint32_t n, int depth,
				  bool in_list, bool cases, bool kw)
{
	cm_field *f = ft_alloc(pl, n * sizeof *f);

	if (f == NULL)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		if (ft_label(pl, i, kw, &f[i].label) != 0)
			return NULL;
		if (!cases || ft_byte(in) & 1)
			f[i].type = ft_type(pl, in, depth + 1, in_list);
	}
	return f;
}

static inline cm_str *ft_labels(ft_pool *pl, uint32_t n, bool kw)
{
	cm_str *l = ft_alloc(pl, n * sizeof *l);

	if (l == NULL)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		if (ft_label(pl, i, kw, &l[i]) != 0)
			return NULL;
	return l;
}

static const cm_type *ft_type(ft_pool *pl, ft_in *in, int depth, bool in_list)
{
	uint8_t b = ft_byte(in);
	uint32_t k = b % 23, n;
	cm_type *t;
	bool kw = b >= 128;

	/* 0..12: bool .. string (error-context, 13, is left out) */
	if (depth >= FT_MAX_DEPTH && k > CM_STRING)
		k %= CM_STRING + 1;
	if (k == CM_STRING && in_list)
		k = CM_CHAR;
	if (k <= CM_STRING)
		return cm_prim((cm_type_kind)k);
	if ((k == 13 || k == 22) && in_list)
		k = 14; /* a fixed-length list instead */
	t = ft_alloc(pl, sizeof *t);
	if (t == NULL)
		return cm_prim(CM_U32);
	switch (k) {
	case 13:
		t->kind = CM_LIST;
		t->u.list.elem = ft_type(pl, in, depth + 1, true);
		break;
	case 14:
		t->kind = CM_LIST;
		t->u.list.len = 1 + ft_byte(in) % 8;
		t->u.list.elem = ft_type(pl, in, depth + 1, in_list);
		break;
	case 15:
		t->kind = CM_RECORD;
		n = 1 + ft_byte(in) % 6;
		t->u.record.fields =
			ft_fields(pl, in, n, depth, in_list, false, false);
		t->u.record.n = n;
		if (t->u.record.fields == NULL)
			return cm_prim(CM_U32);
		break;
	case 16: {
		const cm_type **ts;

		t->kind = CM_TUPLE;
		n = 1 + ft_byte(in) % 6;
		ts = ft_alloc(pl, n * sizeof *ts);
		if (ts == NULL)
			return cm_prim(CM_U32);
		for (uint32_t i = 0; i < n; i++)
			ts[i] = ft_type(pl, in, depth + 1, in_list);
		t->u.tuple.n = n;
		t->u.tuple.elems = ts;
		break;
	}
	case 17:
		t->kind = CM_VARIANT;
		n = 1 + ft_byte(in) % 8;
		t->u.variant.fields =
			ft_fields(pl, in, n, depth, in_list, true, kw);
		t->u.variant.n = n;
		if (t->u.variant.fields == NULL)
			return cm_prim(CM_U32);
		break;
	case 18:
		/* up to 300 labels: one- and two-byte discriminants */
		t->kind = CM_ENUM;
		n = 1 + ft_u16(in) % 300;
		t->u.enm.labels = ft_labels(pl, n, kw);
		t->u.enm.n = n;
		if (t->u.enm.labels == NULL)
			return cm_prim(CM_U32);
		break;
	case 19:
		t->kind = CM_OPTION;
		t->u.option.elem = ft_type(pl, in, depth + 1, in_list);
		break;
	case 20:
		t->kind = CM_RESULT;
		n = ft_byte(in);
		if (n & 1)
			t->u.result.ok = ft_type(pl, in, depth + 1, in_list);
		if (n & 2)
			t->u.result.err = ft_type(pl, in, depth + 1, in_list);
		break;
	case 21:
		t->kind = CM_FLAGS;
		n = 1 + ft_byte(in) % 32;
		t->u.flags.labels = ft_labels(pl, n, false);
		t->u.flags.n = n;
		if (t->u.flags.labels == NULL)
			return cm_prim(CM_U32);
		break;
	default: { /* 22: map<primitive key, value> */
		static const cm_type_kind keys[10] = {
			CM_BOOL, CM_S8,	 CM_U8,	 CM_S16, CM_U16,
			CM_S32,	 CM_U32, CM_S64, CM_U64, CM_CHAR};
		cm_type *e = ft_alloc(pl, sizeof *e);
		const cm_type **ts = ft_alloc(pl, 2 * sizeof *ts);

		if (e == NULL || ts == NULL)
			return cm_prim(CM_U32);
		t->kind = CM_MAP;
		t->u.map.key = cm_prim(keys[ft_byte(in) % 10]);
		t->u.map.value = ft_type(pl, in, depth + 1, true);
		ts[0] = t->u.map.key;
		ts[1] = t->u.map.value;
		e->kind = CM_TUPLE;
		e->u.tuple.n = 2;
		e->u.tuple.elems = ts;
		cm_type_finish(e);
		t->u.map.entry = e;
		break;
	}
	}
	cm_type_finish(t);
	return t;
}

#endif
