/*
 * live-store.h - for Check tests of whole stores (test_snapshot.c,
 * test_snapshot_delta.c): a component instantiated in a store of its own
 * with WASI 0.2 linked, and calls of its exports that must succeed.
 * Included by one test file each.
 */
#ifndef HOSTEL_TESTS_LIVE_STORE_H
#define HOSTEL_TESTS_LIVE_STORE_H

#include <check.h>
#include <string.h>

#include "component/component.h"
#include "run/instance.h"
#include "run/store.h"
#include "wasi/wasi.h"

#include "export-call.h"

typedef struct live {
	cm_component *c;
	wasi_ctx *wasi;
	cm_linker *l;
	cm_store *s;
	cm_component_instance *inst;
} live;

static void live_open(live *v, cm_component *c)
{
	cm_error err;

	memset(v, 0, sizeof *v);
	v->c = c;
	v->wasi = wasi_ctx_new();
	v->l = cm_linker_new();
	ck_assert_ptr_nonnull(v->wasi);
	ck_assert_ptr_nonnull(v->l);
	ck_assert_int_eq(wasi_add_to_linker(v->wasi, v->l), 0);
	v->s = cm_store_new(NULL);
	ck_assert_ptr_nonnull(v->s);
	if (cm_instantiate(v->s, c, v->l, &v->inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
}

static void live_close(live *v)
{
	cm_store_free(v->s);
	wasi_ctx_free(v->wasi);
	cm_linker_free(v->l);
}

static cm_val call(live *v, const char *iface, const char *name,
		   const cm_val *args, uint32_t nargs)
{
	return export_call(v->s, v->inst, iface, name, args, nargs);
}

#endif
