/*
 * snap-image.h - for Check tests of store images (test_snapshot_delta.c,
 * test_written_map.c): an image, and taking one with a base whose deltas
 * check the memories' written maps (run/snapshot.h cm_snap_base_verify),
 * so that every test of deltas also shows no changed page went unmarked.
 * Included after live-store.h, by one test file each.
 */
#ifndef HOSTEL_TESTS_SNAP_IMAGE_H
#define HOSTEL_TESTS_SNAP_IMAGE_H

#include <check.h>

#include "run/snapshot.h"

#include "live-store.h"

typedef struct image {
	uint8_t *p;
	size_t n;
} image;

static image take_image(live *v, const uint8_t sha[32], cm_snap_base *base,
			bool delta)
{
	image im;
	cm_error err;

	cm_snap_base_verify(base, true);
	if (cm_store_snapshot_base(v->s, sha, base, delta, &im.p, &im.n,
				   &err))
		ck_abort_msg("snapshot: %s", err.msg);
	ck_assert(cm_snapshot_is_delta(im.p, im.n) == delta);
	ck_assert(cm_snap_base_valid(base));
	ck_assert_uint_eq(cm_snap_base_missed(base), 0);
	return im;
}

/* The little-endian u64 at `at` of an image. */
static uint64_t image_u64(const image *im, size_t at)
{
	uint64_t v = 0;

	ck_assert_uint_le(at + 8, im->n);
	for (int i = 7; i >= 0; i--)
		v = v << 8 | im->p[at + (size_t)i];
	return v;
}

#endif
