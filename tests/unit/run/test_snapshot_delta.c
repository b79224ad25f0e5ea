/*
 * test_snapshot_delta.c - deltas of store snapshots (runtime/run/snapshot.h
 * "Deltas", durability "commit", issue 22): a full snapshot written with a
 * base, then deltas, restored in order into a fresh store, give the same
 * memories, globals and calls as the store they were taken from, and a
 * full snapshot of the result is byte-identical to one of the original;
 * a delta holds only the pages that changed (none for a call that changed
 * none; a page that became zero included; pages a growth added and
 * wrote); a delta needs a valid base, which a refusal keeps; folding a
 * chain gives the full snapshot's bytes, and a fold refuses what it must;
 * the page fingerprint sees changes that cancel under FNV (the sign bits
 * of two words).
 *
 * Guest: tests/guests/values (a memory that grows, mutable globals).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component/component.h"
#include "run/instance.h"
#include "run/rt.h"
#include "run/snapshot.h"
#include "run/store.h"
#include "wasi/wasi.h"
#include "wasm/snapshot.h"
#include "wasm/store.h"

#include "guest-load.h"
#include "live-store.h"
#include "snap-image.h"
#include "testmain.h"

static const uint8_t SHA[32] = {0xde, 0x17, 0xa};

static void call_make(live *v, uint32_t n)
{
	cm_val arg = cm_val_u32(n), r = call(v, NULL, "make", &arg, 1);

	ck_assert_uint_eq(r.u.str.len, n);
	cm_val_free(&r);
}

static void call_echo(live *v, const char *s)
{
	cm_val arg, r;

	ck_assert_int_eq(cm_val_string(&arg, s, strlen(s)), 0);
	r = call(v, NULL, "echo", &arg, 1);
	ck_assert_uint_eq(r.u.str.len, strlen(s));
	cm_val_free(&r);
	cm_val_free(&arg);
}

/* every delta checks the written maps too: none may miss a page */
static image take(live *v, cm_snap_base *base, bool delta)
{
	return take_image(v, SHA, base, delta);
}

/* The store's first memory (the values guest has one). */
static wasm_memory *memory0(const cm_store *s)
{
	for (size_t i = 0; i < s->wasm->nobjs; i++)
		if (s->wasm->objs[i].kind == WASM_OBJ_MEMORY)
			return s->wasm->objs[i].ptr;
	ck_abort_msg("no memory");
	return NULL;
}

static void same_memory(const cm_store *x, const cm_store *y)
{
	const wasm_memory *m = memory0(x), *n = memory0(y);

	ck_assert_uint_eq(m->size, n->size);
	ck_assert_int_eq(memcmp(m->data, n->data, m->size), 0);
}

/* Pages a snapshot's (only) memory lists: the u64 after is64, min,
 * pages, at the start of the core section's first instance. */
static uint64_t pages_listed(const image *im)
{
	/* header 48, section tag 4 + length 8, ninstances 4, heap objects
	 * 4 (none), shape 24 */
	return image_u64(im, 48 + 12 + 4 + 4 + 24 + 1 + 8 + 8);
}

static void restore_chain(live *v, const image *chain, size_t n)
{
	cm_error err;

	/* every image's core section, then the last one whole */
	for (size_t i = 0; i < n; i++)
		if ((i + 1 < n ? cm_store_restore_core
			       : cm_store_restore)(v->s, SHA, chain[i].p,
						   chain[i].n, &err))
			ck_abort_msg("restore %zu: %s", i, err.msg);
}

START_TEST(test_chain_round_trip)
{
	cm_component *c = load_guest("values/values.wasm");
	cm_snap_base *base = cm_snap_base_new(), *base2 = cm_snap_base_new();
	image chain[5], full_a, full_b;
	live a, b;

	ck_assert_ptr_nonnull(base);
	ck_assert_ptr_nonnull(base2);
	live_open(&a, c);
	call_echo(&a, "first");
	chain[0] = take(&a, base, false);
	/* nothing changed: no page in the delta */
	chain[1] = take(&a, base, true);
	ck_assert_uint_eq(pages_listed(&chain[1]), 0);
	/* a 300,000-byte string: memory grows past 4 pages */
	call_make(&a, 300000);
	chain[2] = take(&a, base, true);
	ck_assert_uint_ge(pages_listed(&chain[2]), 4);
	/* a short echo writes one page or two (its string, the bump) */
	call_echo(&a, "second");
	chain[3] = take(&a, base, true);
	ck_assert_uint_ge(pages_listed(&chain[3]), 1);
	ck_assert_uint_le(pages_listed(&chain[3]), 2);
	ck_assert_uint_lt(chain[3].n, chain[2].n);
	/* a page that becomes zero is in the delta (restore must clear it) */
	{
		wasm_memory *m = memory0(a.s);

		ck_assert_uint_ge(m->size, 5 * WASM_PAGE_SIZE);
		/* a host write: through the marking accessor */
		memset(wasm_memory_write(m, 4 * WASM_PAGE_SIZE,
					 WASM_PAGE_SIZE),
		       0, WASM_PAGE_SIZE);
	}
	chain[4] = take(&a, base, true);
	ck_assert_uint_eq(pages_listed(&chain[4]), 1);

	live_open(&b, c);
	restore_chain(&b, chain, 5);
	same_memory(a.s, b.s);
	ck_assert_uint_eq(call(&b, NULL, "calls", NULL, 0).u.u,
			  call(&a, NULL, "calls", NULL, 0).u.u);
	/* the restored store is the same state: its full snapshot is the
	 * same bytes */
	full_a = take(&a, base, false);
	full_b = take(&b, base2, false);
	ck_assert_uint_eq(full_a.n, full_b.n);
	ck_assert_mem_eq(full_a.p, full_b.p, full_a.n);
	/* and it goes on from there */
	{
		uint64_t before = call(&b, NULL, "calls", NULL, 0).u.u;

		call_echo(&b, "after");
		ck_assert_uint_eq(call(&b, NULL, "calls", NULL, 0).u.u,
				  before + 1);
	}

	for (size_t i = 0; i < 5; i++)
		free(chain[i].p);
	free(full_a.p);
	free(full_b.p);
	cm_snap_base_free(base);
	cm_snap_base_free(base2);
	live_close(&a);
	live_close(&b);
	cm_component_free(c);
}
END_TEST

/*
 * A delta is not a snapshot: applied to a fresh store without the full
 * snapshot before it, the pages it leaves out are the fresh store's (the
 * string `make` wrote is missing); over the full one, the state is a's.
 */
START_TEST(test_delta_keeps_unlisted_pages)
{
	cm_component *c = load_guest("values/values.wasm");
	cm_snap_base *base = cm_snap_base_new();
	image full, delta;
	live a, b, d;
	cm_error err;

	ck_assert_ptr_nonnull(base);
	live_open(&a, c);
	call_make(&a, 200000);
	full = take(&a, base, false);
	call_echo(&a, "x");
	delta = take(&a, base, true);
	ck_assert_uint_lt(pages_listed(&delta), pages_listed(&full));
	live_open(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA, full.p, full.n, &err), 0);
	ck_assert_int_eq(cm_store_restore(b.s, SHA, delta.p, delta.n, &err), 0);
	same_memory(a.s, b.s);
	live_open(&d, c);
	ck_assert_int_eq(cm_store_restore(d.s, SHA, delta.p, delta.n, &err), 0);
	ck_assert_uint_eq(memory0(d.s)->size, memory0(a.s)->size);
	ck_assert_int_ne(memcmp(memory0(d.s)->data, memory0(a.s)->data,
				memory0(a.s)->size),
			 0);
	free(full.p);
	free(delta.p);
	cm_snap_base_free(base);
	live_close(&a);
	live_close(&b);
	live_close(&d);
	cm_component_free(c);
}
END_TEST

START_TEST(test_delta_needs_a_base)
{
	cm_component *c = load_guest("values/values.wasm");
	cm_snap_base *base = cm_snap_base_new();
	uint8_t *out = NULL;
	size_t n = 0;
	cm_error err;
	live a;

	ck_assert_ptr_nonnull(base);
	live_open(&a, c);
	ck_assert(!cm_snap_base_valid(base));
	ck_assert_int_ne(
		cm_store_snapshot_base(a.s, SHA, base, true, &out, &n, &err),
		0);
	ck_assert_int_eq(err.kind, CM_ERR_VALUE);
	ck_assert_ptr_null(out);
	/* a store refused before anything is written keeps the base (it
	 * still is what the last write left) */
	out = take(&a, base, false).p;
	free(out);
	a.s->in_turn = true; /* the checks read the store: a call in flight */
	ck_assert_int_ne(
		cm_store_snapshot_base(a.s, SHA, base, true, &out, &n, &err),
		0);
	ck_assert_int_eq(err.kind, CM_ERR_UNSUPPORTED);
	a.s->in_turn = false;
	ck_assert(cm_snap_base_valid(base));
	/* a poisoned store is refused too (it cannot run again), and the
	 * base kept */
	a.inst->poisoned = true;
	ck_assert_int_ne(
		cm_store_snapshot_base(a.s, SHA, base, true, &out, &n, &err),
		0);
	ck_assert_int_eq(err.kind, CM_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "poisoned"));
	a.inst->poisoned = false;
	ck_assert(cm_snap_base_valid(base));
	out = take(&a, base, true).p;
	free(out);
	/* reset forgets a valid base too */
	out = take(&a, base, false).p;
	free(out);
	cm_snap_base_reset(base);
	ck_assert(!cm_snap_base_valid(base));
	cm_snap_base_free(base);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

static image fold(const image *full, const image *delta)
{
	image out;
	cm_error err;

	if (cm_snapshot_fold(full->p, full->n, delta->p, delta->n, &out.p,
			     &out.n, &err))
		ck_abort_msg("fold: %s", err.msg);
	ck_assert(!cm_snapshot_is_delta(out.p, out.n));
	return out;
}

/* The full snapshot chain[0] with each of the n - 1 deltas after it
 * folded in turn (n >= 2: a new image; the chain's are left alone). */
static image fold_all(const image *chain, size_t n)
{
	image folded = chain[0], next;

	for (size_t i = 1; i < n; i++) {
		next = fold(&folded, &chain[i]);
		if (i > 1)
			free(folded.p);
		folded = next;
	}
	return folded;
}

/*
 * Folding (the history's writer, issue 22 point 5): a full snapshot with
 * each delta of a chain folded in turn is, byte for byte, the full
 * snapshot of the store after the last delta (a page that became zero,
 * memory growth, a delta with no page), and restores like it.
 */
START_TEST(test_fold_is_the_full_snapshot)
{
	cm_component *c = load_guest("values/values.wasm");
	cm_snap_base *base = cm_snap_base_new(), *other = cm_snap_base_new();
	image chain[5], folded, full;
	live a, b;

	ck_assert_ptr_nonnull(base);
	ck_assert_ptr_nonnull(other);
	live_open(&a, c);
	call_echo(&a, "first");
	chain[0] = take(&a, base, false);
	chain[1] = take(&a, base, true);
	call_make(&a, 300000);
	chain[2] = take(&a, base, true);
	call_echo(&a, "second");
	chain[3] = take(&a, base, true);
	memset(wasm_memory_write(memory0(a.s), 4 * WASM_PAGE_SIZE,
				 WASM_PAGE_SIZE),
	       0, WASM_PAGE_SIZE);
	chain[4] = take(&a, base, true);
	folded = fold_all(chain, 5);
	full = take(&a, other, false);
	ck_assert_uint_eq(folded.n, full.n);
	ck_assert_mem_eq(folded.p, full.p, full.n);
	live_open(&b, c);
	restore_chain(&b, &folded, 1);
	same_memory(a.s, b.s);
	ck_assert_uint_eq(call(&b, NULL, "calls", NULL, 0).u.u,
			  call(&a, NULL, "calls", NULL, 0).u.u);
	for (size_t i = 0; i < 5; i++)
		free(chain[i].p);
	free(folded.p);
	free(full.p);
	cm_snap_base_free(base);
	cm_snap_base_free(other);
	live_close(&a);
	live_close(&b);
	cm_component_free(c);
}
END_TEST

static uint32_t exn_call(live *v, const char *name, int arg)
{
	cm_val a = cm_val_u32(arg >= 0 ? (uint32_t)arg : 0);

	return (uint32_t)call(v, NULL, name, arg >= 0 ? &a : NULL,
			      arg >= 0 ? 1 : 0)
		.u.u;
}

/*
 * Live exceptions under deltas (tests/guests/exn): a delta writes the
 * store's live exceptions whole and its references name its own, so a
 * chain whose deltas add, drop and replace them restores to the state
 * at its end, with none of the ones the earlier images held left over
 * (the restore drops a store's exceptions before it makes an image's),
 * and its fold is byte for byte the full snapshot.
 */
START_TEST(test_exceptions_in_deltas)
{
	cm_component *c = load_guest("exn/exn.wasm");
	cm_snap_base *base = cm_snap_base_new(), *other = cm_snap_base_new();
	image chain[4], folded, full;
	live a, b;

	ck_assert_ptr_nonnull(base);
	ck_assert_ptr_nonnull(other);
	live_open(&a, c);
	for (int n = 1; n <= 3; n++)
		exn_call(&a, "keep", n);
	chain[0] = take(&a, base, false);
	exn_call(&a, "keep", 4);
	exn_call(&a, "keep-fn", -1);
	chain[1] = take(&a, base, true);
	exn_call(&a, "clear", -1);
	chain[2] = take(&a, base, true);
	exn_call(&a, "keep", 9);
	chain[3] = take(&a, base, true);
	/* (before any call: the fold is compared with it) */
	full = take(&a, other, false);
	/* the chain holds ($link null 9), slot 1 ($e 9): 9 + 1000 x 18 */
	ck_assert_uint_eq(exn_call(&a, "sum", -1), 18009);

	live_open(&b, c);
	restore_chain(&b, chain, 4);
	ck_assert_uint_eq(b.s->wasm->nexns, 2);
	ck_assert_uint_eq(exn_call(&b, "sum", -1), 18009);
	ck_assert_uint_eq(exn_call(&b, "count", -1), 1);
	ck_assert_uint_eq(exn_call(&b, "call-kept", -1), 0);
	/* a chain ending with the function's exception */
	live_close(&b);
	live_open(&b, c);
	restore_chain(&b, chain, 2);
	ck_assert_uint_eq(exn_call(&b, "call-kept", -1), 7);
	ck_assert_uint_eq(exn_call(&b, "count", -1), 4);

	folded = fold_all(chain, 4);
	ck_assert_uint_eq(folded.n, full.n);
	ck_assert_mem_eq(folded.p, full.p, full.n);
	for (size_t i = 0; i < 4; i++)
		free(chain[i].p);
	free(folded.p);
	free(full.p);
	cm_snap_base_free(base);
	cm_snap_base_free(other);
	live_close(&a);
	live_close(&b);
	cm_component_free(c);
}
END_TEST

/* What a fold refuses: the wrong kinds of image, another component, a
 * corrupted or cut image (never an abort). */
START_TEST(test_fold_refuses)
{
	static const uint8_t OTHER[32] = {1};
	cm_component *c = load_guest("values/values.wasm");
	cm_snap_base *base = cm_snap_base_new(), *ob = cm_snap_base_new();
	image full, delta, ofull, odelta;
	uint8_t *out = (uint8_t *)1;
	size_t n = 1;
	cm_error err;
	live a;

	ck_assert_ptr_nonnull(base);
	ck_assert_ptr_nonnull(ob);
	live_open(&a, c);
	call_make(&a, 100000);
	full = take(&a, base, false);
	call_echo(&a, "x");
	delta = take(&a, base, true);
	ck_assert_int_ne(cm_snapshot_fold(delta.p, delta.n, delta.p, delta.n,
					  &out, &n, &err),
			 0);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "is a delta"));
	ck_assert_int_ne(cm_snapshot_fold(full.p, full.n, full.p, full.n, &out,
					  &n, &err),
			 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "not a delta"));
	/* another component's delta */
	if (cm_store_snapshot_base(a.s, OTHER, ob, false, &ofull.p, &ofull.n,
				   &err) ||
	    cm_store_snapshot_base(a.s, OTHER, ob, true, &odelta.p, &odelta.n,
				   &err))
		ck_abort_msg("snapshot: %s", err.msg);
	ck_assert_int_ne(cm_snapshot_fold(full.p, full.n, odelta.p, odelta.n,
					  &out, &n, &err),
			 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "another component"));
	/* every cut and a flipped byte at many offsets */
	for (size_t cut = 0; cut < delta.n; cut += 1 + cut / 4) {
		ck_assert_int_ne(cm_snapshot_fold(full.p, full.n, delta.p, cut,
						  &out, &n, &err),
				 0);
		ck_assert_int_ne(cm_snapshot_fold(full.p, cut, delta.p,
						  delta.n, &out, &n, &err),
				 0);
	}
	for (size_t at = 0; at < delta.n; at += 1 + at / 8) {
		delta.p[at] ^= 0x40;
		ck_assert_int_ne(cm_snapshot_fold(full.p, full.n, delta.p,
						  delta.n, &out, &n, &err),
				 0);
		ck_assert_int_eq(err.kind, CM_ERR_VALUE);
		delta.p[at] ^= 0x40;
	}
	ck_assert_int_eq(cm_snapshot_fold(full.p, full.n, delta.p, delta.n,
					  &out, &n, &err),
			 0);
	free(out);
	free(full.p);
	free(delta.p);
	free(ofull.p);
	free(odelta.p);
	cm_snap_base_free(base);
	cm_snap_base_free(ob);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

START_TEST(test_page_hash_sees_cancelling_changes)
{
	uint8_t *p = calloc(1, WASM_PAGE_SIZE), *zero;
	uint64_t h0, f0, h;

	ck_assert_ptr_nonnull(p);
	zero = calloc(1, WASM_PAGE_SIZE);
	ck_assert_ptr_nonnull(zero);
	for (size_t i = 0; i < WASM_PAGE_SIZE; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	h0 = wasm_snap_page_hash(p, WASM_PAGE_SIZE);
	f0 = wasm_snap_checksum(p, WASM_PAGE_SIZE);
	/* the sign bits of two f64 (x -> -x, y -> -y): FNV-1a by words
	 * cannot tell, the fingerprint can */
	p[7] ^= 0x80;
	p[8 * 100 + 7] ^= 0x80;
	ck_assert_uint_ne(wasm_snap_page_hash(p, WASM_PAGE_SIZE), h0);
	ck_assert_uint_eq(wasm_snap_checksum(p, WASM_PAGE_SIZE), f0);
	p[7] ^= 0x80;
	p[8 * 100 + 7] ^= 0x80;
	/* any one byte, any one bit (sampled) */
	for (size_t i = 0; i < WASM_PAGE_SIZE; i += 61) {
		p[i] ^= (uint8_t)(1u << (i % 8));
		h = wasm_snap_page_hash(p, WASM_PAGE_SIZE);
		p[i] ^= (uint8_t)(1u << (i % 8));
		ck_assert_uint_ne(h, h0);
	}
	/* two words swapped */
	{
		uint64_t x, y;

		memcpy(&x, p + 64, 8);
		memcpy(&y, p + 72, 8);
		memcpy(p + 64, &y, 8);
		memcpy(p + 72, &x, 8);
		ck_assert_uint_ne(wasm_snap_page_hash(p, WASM_PAGE_SIZE), h0);
	}
	ck_assert_uint_ne(wasm_snap_page_hash(zero, WASM_PAGE_SIZE), h0);
	free(p);
	free(zero);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("snapshot_delta");
	TCase *tc = tcase_create("snapshot_delta");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_chain_round_trip);
	tcase_add_test(tc, test_delta_keeps_unlisted_pages);
	tcase_add_test(tc, test_delta_needs_a_base);
	tcase_add_test(tc, test_fold_is_the_full_snapshot);
	tcase_add_test(tc, test_fold_refuses);
	tcase_add_test(tc, test_exceptions_in_deltas);
	tcase_add_test(tc, test_page_hash_sees_cancelling_changes);
	suite_add_tcase(s, tc);
	return s;
}
