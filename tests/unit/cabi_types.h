/*
 * cabi_types.h - building Component Model types by hand for the unit
 * tests of runtime/cabi (test_cabi.c, test_wave.c), without the decoder.
 *
 * Nodes are calloc'd and registered in a pool that tt_free_all releases;
 * every node is finished with cm_type_finish so that its cached ABI facts
 * (alignment, size, flat count) are exactly what the decoder would cache.
 * Test code only: aborts the test (ck_assert) when malloc fails.
 */
#ifndef HOSTEL_TESTS_CABI_TYPES_H
#define HOSTEL_TESTS_CABI_TYPES_H

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component/internal.h"
#include "component/types.h"

/* Not every test uses every helper. */
#define TT_FN static __attribute__((unused))

#define TT_POOL 4096
static void *tt_pool[TT_POOL];
static int tt_npool;

TT_FN void *tt_alloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	ck_assert_ptr_nonnull(p);
	ck_assert_int_lt(tt_npool, TT_POOL);
	tt_pool[tt_npool++] = p;
	return p;
}

TT_FN void tt_free_all(void)
{
	while (tt_npool > 0)
		free(tt_pool[--tt_npool]);
}

TT_FN cm_str tt_str(const char *s)
{
	return (cm_str){s, (uint32_t)strlen(s)};
}

TT_FN const cm_type *P(cm_type_kind k)
{
	return cm_prim(k);
}

TT_FN cm_type *tt_new(cm_type_kind k)
{
	cm_type *t = tt_alloc(sizeof *t);

	t->kind = k;
	return t;
}

TT_FN const cm_type *tt_done(cm_type *t)
{
	cm_type_finish(t);
	return t;
}

TT_FN const cm_type *list_of(const cm_type *e)
{
	cm_type *t = tt_new(CM_LIST);

	t->u.list.elem = e;
	return tt_done(t);
}

TT_FN const cm_type *fixed_list_of(const cm_type *e, uint32_t n)
{
	cm_type *t = tt_new(CM_LIST);

	t->u.list.elem = e;
	t->u.list.len = n;
	return tt_done(t);
}

/* tuple_of(n, T0, T1, ...) */
TT_FN const cm_type *tuple_of(uint32_t n, ...)
{
	cm_type *t = tt_new(CM_TUPLE);
	const cm_type **ts = tt_alloc(n * sizeof *ts);
	va_list ap;

	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++)
		ts[i] = va_arg(ap, const cm_type *);
	va_end(ap);
	t->u.tuple.n = n;
	t->u.tuple.elems = ts;
	return tt_done(t);
}

TT_FN const cm_type *tuple_arr(uint32_t n, const cm_type *const *elems)
{
	cm_type *t = tt_new(CM_TUPLE);
	const cm_type **ts = tt_alloc(n * sizeof *ts);

	for (uint32_t i = 0; i < n; i++)
		ts[i] = elems[i];
	t->u.tuple.n = n;
	t->u.tuple.elems = ts;
	return tt_done(t);
}

/* record_of(n, "label0", T0, "label1", T1, ...) */
TT_FN const cm_type *record_of(uint32_t n, ...)
{
	cm_type *t = tt_new(CM_RECORD);
	cm_field *f = tt_alloc(n * sizeof *f);
	va_list ap;

	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++) {
		f[i].label = tt_str(va_arg(ap, const char *));
		f[i].type = va_arg(ap, const cm_type *);
	}
	va_end(ap);
	t->u.record.n = n;
	t->u.record.fields = f;
	return tt_done(t);
}

/* variant_of(n, "case0", T0 or NULL, ...) */
TT_FN const cm_type *variant_of(uint32_t n, ...)
{
	cm_type *t = tt_new(CM_VARIANT);
	cm_field *f = tt_alloc(n * sizeof *f);
	va_list ap;

	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++) {
		f[i].label = tt_str(va_arg(ap, const char *));
		f[i].type = va_arg(ap, const cm_type *);
	}
	va_end(ap);
	t->u.variant.n = n;
	t->u.variant.fields = f;
	return tt_done(t);
}

/* A variant of n payload-less cases named c0, c1, ... */
TT_FN const cm_type *wide_variant(uint32_t n)
{
	cm_type *t = tt_new(CM_VARIANT);
	cm_field *f = tt_alloc(n * sizeof *f);

	for (uint32_t i = 0; i < n; i++) {
		char *name = tt_alloc(16);

		snprintf(name, 16, "c%u", i);
		f[i].label = tt_str(name);
	}
	t->u.variant.n = n;
	t->u.variant.fields = f;
	return tt_done(t);
}

TT_FN const cm_type *labels_type(cm_type_kind k, uint32_t n, va_list ap)
{
	cm_type *t = tt_new(k);
	cm_str *l = tt_alloc(n * sizeof *l);

	for (uint32_t i = 0; i < n; i++)
		l[i] = tt_str(va_arg(ap, const char *));
	t->u.enm.n = n;
	t->u.enm.labels = l;
	return tt_done(t);
}

TT_FN const cm_type *enum_of(uint32_t n, ...)
{
	va_list ap;
	const cm_type *t;

	va_start(ap, n);
	t = labels_type(CM_ENUM, n, ap);
	va_end(ap);
	return t;
}

TT_FN const cm_type *flags_of(uint32_t n, ...)
{
	va_list ap;
	const cm_type *t;

	va_start(ap, n);
	t = labels_type(CM_FLAGS, n, ap);
	va_end(ap);
	return t;
}

/* flags named f1 .. fn */
TT_FN const cm_type *nflags(uint32_t n)
{
	cm_type *t = tt_new(CM_FLAGS);
	cm_str *l = tt_alloc(n * sizeof *l);

	for (uint32_t i = 0; i < n; i++) {
		char *name = tt_alloc(16);

		snprintf(name, 16, "f%u", i + 1);
		l[i] = tt_str(name);
	}
	t->u.flags.n = n;
	t->u.flags.labels = l;
	return tt_done(t);
}

TT_FN const cm_type *option_of(const cm_type *e)
{
	cm_type *t = tt_new(CM_OPTION);

	t->u.option.elem = e;
	return tt_done(t);
}

TT_FN const cm_type *result_of(const cm_type *ok, const cm_type *err)
{
	cm_type *t = tt_new(CM_RESULT);

	t->u.result.ok = ok;
	t->u.result.err = err;
	return tt_done(t);
}

TT_FN const cm_type *map_of(const cm_type *k, const cm_type *v)
{
	cm_type *t = tt_new(CM_MAP);

	t->u.map.key = k;
	t->u.map.value = v;
	t->u.map.entry = tuple_of(2, k, v);
	return tt_done(t);
}

TT_FN const cm_type *resource_type(const char *name)
{
	cm_type *t = tt_new(CM_RESOURCE);

	t->u.resource.defined = true;
	t->u.resource.rep = WASM_I32;
	t->u.resource.dtor = CM_NONE;
	t->u.resource.name = tt_str(name);
	return t;
}

TT_FN const cm_type *handle_of(cm_type_kind k, const cm_type *res)
{
	cm_type *t = tt_new(k);

	t->u.handle.resource = res;
	return tt_done(t);
}

/* func_of(n, "p0", T0, ..., result or NULL) */
TT_FN const cm_type *func_of(uint32_t n, ...)
{
	cm_type *t = tt_new(CM_FUNC);
	cm_field *f = tt_alloc(n * sizeof *f);
	va_list ap;

	va_start(ap, n);
	for (uint32_t i = 0; i < n; i++) {
		f[i].label = tt_str(va_arg(ap, const char *));
		f[i].type = va_arg(ap, const cm_type *);
	}
	t->u.func.result = va_arg(ap, const cm_type *);
	va_end(ap);
	t->u.func.nparams = n;
	t->u.func.params = f;
	return tt_done(t);
}

/* A function of n params all of type pt (named p0..), result r. */
TT_FN const cm_type *func_n(uint32_t n, const cm_type *pt, const cm_type *r)
{
	cm_type *t = tt_new(CM_FUNC);
	cm_field *f = tt_alloc(n * sizeof *f);

	for (uint32_t i = 0; i < n; i++) {
		char *name = tt_alloc(16);

		snprintf(name, 16, "p%u", i);
		f[i].label = tt_str(name);
		f[i].type = pt;
	}
	t->u.func.nparams = n;
	t->u.func.params = f;
	t->u.func.result = r;
	return tt_done(t);
}

#endif
