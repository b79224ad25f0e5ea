/*
 * test_written_map.c - the written map of linear memories
 * (runtime/wasm/store.h), which a snapshot's delta reads instead of
 * fingerprinting every page (issue 22, durability "commit"): each way the
 * interpreter writes memory (plain, narrow, page-crossing and
 * constant-address stores, memory.fill, copy and init, SIMD stores and
 * lanes, fused read-modify-writes, a second memory, a store into pages a
 * grow added) marks exactly the pages it wrote, so a delta lists them and
 * no other; a write of the same bytes again is marked but not listed (its
 * fingerprint is the same); with the check on (cm_snap_base_verify) no
 * changed page is ever missed; a host write through wasm_memory_data
 * marks every page; a write that fails part way, or one aborted, leaves
 * the base and the maps as they were.
 *
 * Guest: tests/guests/written (an export per kind of write).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component/component.h"
#include "run/instance.h"
#include "run/snapshot.h"
#include "run/store.h"
#include "wasm/snapshot.h"
#include "wasm/store.h"

#include "guest-load.h"
#include "live-store.h"
#include "snap-image.h"
#include "testmain.h"

static const uint8_t SHA[32] = {0x77, 0x12};

static image take(live *v, cm_snap_base *base, bool delta)
{
	return take_image(v, SHA, base, delta);
}

/*
 * The pages memory `which` (0 or 1) of the guest's one core instance
 * lists, as a bit set (pages below 64): header 48, section head 12,
 * the instance count 4, the heap objects' count 4 (none), its shape 24,
 * then each memory: is64 1, min 8, pages 8, n 8 and n (index, page).
 */
static uint64_t listed(const image *im, int which)
{
	size_t at = 48 + 12 + 4 + 4 + 24;
	uint64_t set = 0;

	for (int m = 0; m <= which; m++) {
		uint64_t n = image_u64(im, at + 1 + 8 + 8);

		at += 1 + 8 + 8 + 8;
		for (uint64_t k = 0; k < n; k++) {
			uint64_t idx = image_u64(im, at);

			if (m == which) {
				ck_assert_uint_lt(idx, 64);
				set |= 1ull << idx;
			}
			at += 8 + WASM_PAGE_SIZE;
		}
	}
	return set;
}

static void call2(live *v, const char *name, uint32_t page, uint32_t val)
{
	cm_val a[2] = {cm_val_u32(page), cm_val_u32(val)};
	cm_val r = call(v, NULL, name, a, 2);

	cm_val_free(&r);
}

#define P(n) (1ull << (n))

static const struct wcase {
	const char *name;
	uint32_t page;
	int memory;
	uint64_t pages; /* what the delta lists */
} cases[] = {
	{"store8", 2, 0, P(2)},
	{"store16", 2, 0, P(2)},
	{"store32", 2, 0, P(2)},
	{"store64", 2, 0, P(2)},
	{"store-cross", 5, 0, P(4) | P(5)},
	{"store-const", 0, 0, P(3)},
	{"fill", 6, 0, P(6)},
	{"copy", 6, 0, P(0) | P(6)},
	{"init", 7, 0, P(7)},
	{"v128", 1, 0, P(1)},
	{"lane", 1, 0, P(1)},
	{"rmw", 2, 0, P(2)},
	{"frmw", 3, 0, P(3)},
	{"store-mem1", 2, 1, P(2)},
	{"grow-store", 0, 0, P(8)},
};

START_TEST(test_each_write_marks_its_pages)
{
	const struct wcase *w = &cases[_i];
	cm_component *c = load_guest("written/written.wasm");
	cm_snap_base *base = cm_snap_base_new();
	image full, d1, d2;
	live v;

	ck_assert_ptr_nonnull(base);
	live_open(&v, c);
	full = take(&v, base, false);
	call2(&v, w->name, w->page, 0x5a5a5a5a + (uint32_t)_i);
	d1 = take(&v, base, true);
	ck_assert_msg(listed(&d1, w->memory) == w->pages,
		      "%s: listed %#llx, wrote %#llx", w->name,
		      (unsigned long long)listed(&d1, w->memory),
		      (unsigned long long)w->pages);
	ck_assert_uint_eq(listed(&d1, 1 - w->memory), 0);
	/* the same bytes again: marked, read, not listed (fold_memory and
	 * the restore need nothing of an unchanged page) */
	if (strcmp(w->name, "grow-store") && strcmp(w->name, "rmw") &&
	    strcmp(w->name, "frmw")) {
		call2(&v, w->name, w->page, 0x5a5a5a5a + (uint32_t)_i);
		d2 = take(&v, base, true);
		ck_assert_uint_eq(listed(&d2, 0) | listed(&d2, 1), 0);
		free(d2.p);
	}
	free(full.p);
	free(d1.p);
	cm_snap_base_free(base);
	live_close(&v);
	cm_component_free(c);
}
END_TEST

/* Nothing ran: nothing is read (the map is clear), nothing listed. */
START_TEST(test_idle_store_reads_no_page)
{
	cm_component *c = load_guest("written/written.wasm");
	cm_snap_base *base = cm_snap_base_new();
	wasm_memory *m = NULL;
	image full, d;
	live v;

	ck_assert_ptr_nonnull(base);
	live_open(&v, c);
	full = take(&v, base, false);
	for (size_t i = 0; i < v.s->wasm->nobjs && !m; i++)
		if (v.s->wasm->objs[i].kind == WASM_OBJ_MEMORY)
			m = v.s->wasm->objs[i].ptr;
	ck_assert_ptr_nonnull(m);
	for (uint64_t p = 0; p < wasm_memory_pages(m); p++)
		ck_assert_uint_eq(m->written[p], 0);
	d = take(&v, base, true);
	ck_assert_uint_eq(listed(&d, 0) | listed(&d, 1), 0);
	free(d.p);
	/* wasm_memory_data: the caller may write anywhere, so all marked */
	wasm_memory_data(m)[5 * WASM_PAGE_SIZE + 1] = 1;
	for (uint64_t p = 0; p < wasm_memory_pages(m); p++)
		ck_assert_uint_eq(m->written[p], 1);
	d = take(&v, base, true);
	ck_assert_uint_eq(listed(&d, 0), P(5));
	free(d.p);
	/* and the check catches a write no one marked: it is still listed
	 * and counted */
	m->data[4 * WASM_PAGE_SIZE + 9] = 7;
	{
		uint8_t *out;
		size_t n;
		cm_error err;

		ck_assert_int_eq(cm_store_snapshot_base(v.s, SHA, base, true,
							&out, &n, &err),
				 0);
		ck_assert_uint_eq(cm_snap_base_missed(base), 1);
		free(out);
	}
	free(full.p);
	cm_snap_base_free(base);
	live_close(&v);
	cm_component_free(c);
}
END_TEST

/* The core pages a delta section of wasm_store_snapshot_base lists for
 * memory 0 (the section alone: no header, no section head; the instance
 * count, the heap objects' count, the instance's shape). */
static uint64_t core_listed(const wasm_snap_buf *b)
{
	image im = {b->p, b->len};
	uint64_t set = 0, n;
	size_t at = 4 + 4 + 24;

	n = image_u64(&im, at + 1 + 8 + 8);
	at += 1 + 8 + 8 + 8;
	for (uint64_t k = 0; k < n; k++, at += 8 + WASM_PAGE_SIZE)
		set |= 1ull << image_u64(&im, at);
	return set;
}

/*
 * A write that fails part way (here: past its buffer's bound, after some
 * pages) leaves the base and the written maps as they were: the next
 * delta still lists the page written before it.
 */
START_TEST(test_failed_write_keeps_base_and_marks)
{
	cm_component *c = load_guest("written/written.wasm");
	wasm_snap_base base;
	wasm_snap_buf b = {.max = 64u << 20};
	wasm_memory *m = NULL;
	char why[128];
	live v;

	live_open(&v, c);
	for (size_t i = 0; i < v.s->wasm->nobjs && !m; i++)
		if (v.s->wasm->objs[i].kind == WASM_OBJ_MEMORY)
			m = v.s->wasm->objs[i].ptr;
	ck_assert_ptr_nonnull(m);
	wasm_snap_base_init(&base);
	call2(&v, "store32", 1, 7);
	ck_assert_int_eq(wasm_store_snapshot_base(v.s->wasm, &b, &base, false,
						  why, sizeof why),
			 WASM_SNAP_OK);
	wasm_snap_base_commit(&base);
	ck_assert_uint_eq(m->written[1], 0);
	free(b.p);
	/* pages 2 and 5 change; a delta with room for one page fails */
	call2(&v, "store32", 2, 9);
	call2(&v, "store32", 5, 9);
	b = (wasm_snap_buf){.max = WASM_PAGE_SIZE + 1000};
	ck_assert_int_eq(wasm_store_snapshot_base(v.s->wasm, &b, &base, true,
						  why, sizeof why),
			 WASM_SNAP_TOO_LARGE);
	free(b.p);
	ck_assert_uint_eq(base.nchanges, 0);
	ck_assert_uint_eq(m->written[2], 1);
	ck_assert_uint_eq(m->written[5], 1);
	/* and so the next one, with room, lists both */
	b = (wasm_snap_buf){.max = 64u << 20};
	ck_assert_int_eq(wasm_store_snapshot_base(v.s->wasm, &b, &base, true,
						  why, sizeof why),
			 WASM_SNAP_OK);
	ck_assert_uint_eq(core_listed(&b), P(2) | P(5));
	wasm_snap_base_commit(&base);
	ck_assert_uint_eq(m->written[2], 0);
	free(b.p);
	/* an aborted write is as if it never was, too */
	call2(&v, "store32", 6, 1);
	b = (wasm_snap_buf){.max = 64u << 20};
	ck_assert_int_eq(wasm_store_snapshot_base(v.s->wasm, &b, &base, true,
						  why, sizeof why),
			 WASM_SNAP_OK);
	wasm_snap_base_abort(&base);
	free(b.p);
	b = (wasm_snap_buf){.max = 64u << 20};
	ck_assert_int_eq(wasm_store_snapshot_base(v.s->wasm, &b, &base, true,
						  why, sizeof why),
			 WASM_SNAP_OK);
	ck_assert_uint_eq(core_listed(&b), P(6));
	wasm_snap_base_commit(&base);
	free(b.p);
	wasm_snap_base_free(&base);
	live_close(&v);
	cm_component_free(c);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("written_map");
	TCase *tc = tcase_create("written_map");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_each_write_marks_its_pages, 0,
			    (int)(sizeof cases / sizeof cases[0]));
	tcase_add_test(tc, test_idle_store_reads_no_page);
	tcase_add_test(tc, test_failed_write_keeps_base_and_marks);
	suite_add_tcase(s, tc);
	return s;
}
