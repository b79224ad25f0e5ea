/*
 * snapshot.c - store snapshots (see snapshot.h): the header, the framing
 * of sections, the checks that a store is quiescent enough to be
 * written, and the run-level section (component instances).  The core
 * section is runtime/wasm/snapshot.c's.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - the output buffer: bounded by CM_SNAPSHOT_MAX_BYTES
 *    (wasm_snap_buf.max); what it holds is the store's own state, which
 *    the store's limits bounded.
 *  - the list of component instances (snapshot and restore): one
 *    pointer per instance the store holds (cfg.max_instances).
 *  - restoring allocates nothing sized by the snapshot here; the core
 *    section's growth is bounded there (runtime/wasm/snapshot.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/rt.h"
#include "run/sched.h"
#include "run/snapshot.h"
#include "run/snapshot_async.h"
#include "wasm/snapshot.h"

static const uint8_t MAGIC[8] = {0, 'h', 's', 't', 's', 'n', 'a', 'p'};
#define HEADER_BYTES (8 + 4 + 4 + CM_SNAPSHOT_SHA256_BYTES)
#define SECTION_HEAD (4 + 8)
#define END_BYTES    (SECTION_HEAD + 8)

enum { TAG_END = 0, TAG_CORE = 1, TAG_RUN = 2 };

/* ---- quiescence ---------------------------------------------------------- */

static int unsupported(cm_error *err, const char *what)
{
	return cm_error_set(err, CM_ERR_UNSUPPORTED, "not supported yet: %s",
			    what);
}

bool cm_store_stopped_mid_code(const cm_store *s)
{
	return s->fuel_parked != 0;
}

/*
 * What this format cannot represent yet, checked before anything is
 * written: each would be lost or dangling in a restored store.
 */
static int check_quiescent(const cm_store *s, cm_error *err)
{
	/* (the host's calls in flight are written as tasks whose caller
	 * is gone: snapshot_async.c skipped; a thread stopped out of fuel
	 * mid-code as its frames, wasm/snapshot_exec.c) */
	if (s->current || s->current_thread || s->nbusy || s->lowering ||
	    s->in_turn)
		return unsupported(err, "a snapshot inside guest code");
	return 0;
}

/* ---- writing ------------------------------------------------------------- */

static size_t section_begin(wasm_snap_buf *b, uint32_t tag)
{
	size_t at;

	wasm_snap_u32(b, tag);
	at = b->len;
	wasm_snap_u64(b, 0);
	return at;
}

static void section_end(wasm_snap_buf *b, size_t at)
{
	wasm_snap_patch_u64(b, at, b->len - at - 8);
}

/* The end section (the checksum of all before it); the buffer's first
 * failure, with why for one past the bound. */
static wasm_snap_status put_end(wasm_snap_buf *b, const char *what, char *why,
				size_t whylen)
{
	wasm_snap_u32(b, TAG_END);
	wasm_snap_u64(b, 8);
	if (!b->failed)
		wasm_snap_u64(b, wasm_snap_checksum(b->p, b->len));
	if (b->failed == WASM_SNAP_TOO_LARGE)
		snprintf(why, whylen, "the %s would pass its limit of %u bytes",
			 what, CM_SNAPSHOT_MAX_BYTES);
	return b->failed;
}

static int list_instances(const cm_store *s, cm_component_instance ***out,
			  uint32_t *n, cm_error *err)
{
	*n = cm_store_component_instances(s, NULL, 0);
	*out = calloc(*n ? *n : 1, sizeof **out);
	if (*out == NULL)
		return cm_error_set(err, CM_ERR_NOMEM, "out of memory");
	cm_store_component_instances(s, *out, *n);
	return 0;
}

static int snap_status(wasm_snap_status st, const char *why, cm_error *err)
{
	switch (st) {
	case WASM_SNAP_OK:
		return 0;
	case WASM_SNAP_NOMEM:
		return cm_error_set(err, CM_ERR_NOMEM, "out of memory");
	case WASM_SNAP_UNSUPPORTED:
	case WASM_SNAP_TOO_LARGE:
		return cm_error_set(err, CM_ERR_UNSUPPORTED, "%s", why);
	case WASM_SNAP_MALFORMED:
	case WASM_SNAP_MISMATCH:
		break;
	}
	return cm_error_set(err, CM_ERR_VALUE, "%s", why);
}

struct cm_snap_base {
	wasm_snap_base core;
	bool valid; /* filled by a full snapshot, kept by deltas since */
};

cm_snap_base *cm_snap_base_new(void)
{
	cm_snap_base *base = calloc(1, sizeof *base);

	if (base)
		wasm_snap_base_init(&base->core);
	return base;
}

void cm_snap_base_free(cm_snap_base *base)
{
	if (base == NULL)
		return;
	wasm_snap_base_free(&base->core);
	free(base);
}

bool cm_snap_base_valid(const cm_snap_base *base)
{
	return base && base->valid;
}

void cm_snap_base_verify(cm_snap_base *base, bool on)
{
	base->core.verify = on;
}

uint64_t cm_snap_base_missed(const cm_snap_base *base)
{
	return base->core.missed;
}

void cm_snap_base_reset(cm_snap_base *base)
{
	if (base)
		base->valid = false;
}

int cm_store_snapshot(cm_store *s, const uint8_t sha256[32], uint8_t **out,
		      size_t *len, cm_error *err)
{
	return cm_store_snapshot_base(s, sha256, NULL, false, out, len, err);
}

int cm_store_snapshot_base(cm_store *s, const uint8_t sha256[32],
			   cm_snap_base *base, bool delta, uint8_t **out,
			   size_t *len, cm_error *err)
{
	wasm_snap_buf b = {.max = CM_SNAPSHOT_MAX_BYTES};
	cm_component_instance **insts = NULL;
	char why[CM_ERROR_MSG_MAX] = "";
	wasm_snap_status st;
	uint32_t n;
	size_t at;

	*out = NULL;
	*len = 0;
	if (list_instances(s, &insts, &n, err))
		return -1;
	if (delta && !cm_snap_base_valid(base)) {
		free(insts);
		return cm_error_set(err, CM_ERR_VALUE,
				    "a delta needs a base a full snapshot "
				    "filled");
	}
	if (check_quiescent(s, err)) {
		free(insts);
		return -1;
	}
	/* a poisoned instance never runs again: its store is to be made
	 * anew, and an image of it would bring back a dead store */
	for (uint32_t i = 0; i < n; i++)
		if (insts[i]->poisoned) {
			free(insts);
			return cm_error_set(err, CM_ERR_UNSUPPORTED,
					    "the store is poisoned (a trap or "
					    "a call cancelled while running): "
					    "it cannot run again");
		}
	wasm_snap_put(&b, MAGIC, sizeof MAGIC);
	wasm_snap_u32(&b, CM_SNAPSHOT_FORMAT);
	wasm_snap_u32(&b, delta ? CM_SNAPSHOT_DELTA : 0);
	wasm_snap_put(&b, sha256, CM_SNAPSHOT_SHA256_BYTES);

	/* the base takes this write only when all of it succeeds
	 * (wasm_snap_base_commit below): a refusal leaves it as it was */
	at = section_begin(&b, TAG_CORE);
	st = wasm_store_snapshot_base(s->wasm, &b, base ? &base->core : NULL,
				      delta, why, sizeof why);
	section_end(&b, at);

	if (st == WASM_SNAP_OK) {
		at = section_begin(&b, TAG_RUN);
		wasm_snap_u32(&b, n);
		for (uint32_t i = 0; i < n; i++) {
			wasm_snap_u8(&b, insts[i]->may_enter);
			wasm_snap_u8(&b, insts[i]->may_leave);
			wasm_snap_u8(&b, insts[i]->poisoned);
			wasm_snap_u32(&b, insts[i]->backpressure);
		}
		wasm_snap_u64(&b, s->rng);
		section_end(&b, at);
		st = cm_snap_async_write(s, insts, n, &b, why, sizeof why);
	}
	if (st == WASM_SNAP_OK)
		st = put_end(&b, "snapshot", why, sizeof why);
	free(insts);
	if (st != WASM_SNAP_OK) {
		if (base)
			wasm_snap_base_abort(&base->core);
		free(b.p);
		return snap_status(st, why, err);
	}
	if (base) {
		wasm_snap_base_commit(&base->core);
		base->valid = true;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

/* ---- reading ------------------------------------------------------------- */

static int malformed(cm_error *err, const char *what)
{
	return cm_error_set(err, CM_ERR_VALUE, "malformed snapshot: %s", what);
}

static int read_header(const uint8_t *buf, size_t len, uint32_t *format,
		       uint32_t *flagsp, uint8_t sha256[32], cm_error *err)
{
	wasm_snap_reader r = {.p = buf, .len = len};
	uint8_t magic[8];
	uint32_t flags;

	if (buf == NULL || !wasm_snap_get(&r, magic, sizeof magic) ||
	    memcmp(magic, MAGIC, sizeof magic))
		return malformed(err, "not a hostel store snapshot");
	if (!wasm_snap_get_u32(&r, format) || !wasm_snap_get_u32(&r, &flags) ||
	    !wasm_snap_get(&r, sha256, CM_SNAPSHOT_SHA256_BYTES))
		return malformed(err, "truncated header");
	if (flags & ~CM_SNAPSHOT_DELTA)
		return malformed(err, "unknown header flags");
	if (flagsp)
		*flagsp = flags;
	return 0;
}

int cm_snapshot_header(const uint8_t *buf, size_t len, uint32_t *format,
		       uint8_t sha256[32], cm_error *err)
{
	return read_header(buf, len, format, NULL, sha256, err);
}

bool cm_snapshot_is_delta(const uint8_t *buf, size_t len)
{
	uint8_t sha[CM_SNAPSHOT_SHA256_BYTES];
	uint32_t format, flags = 0;
	cm_error err;

	return read_header(buf, len, &format, &flags, sha, &err) == 0 &&
	       (flags & CM_SNAPSHOT_DELTA);
}

static void hex(const uint8_t *sha, char out[17])
{
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", sha[i]);
}

static int restore_run(cm_store *s, wasm_snap_reader *r, cm_error *err)
{
	cm_component_instance **insts = NULL;
	uint32_t n, want;
	uint64_t rng;
	int rc = -1;

	if (!wasm_snap_get_u32(r, &n))
		return malformed(err, "truncated run section");
	if (list_instances(s, &insts, &want, err))
		return -1;
	if (n != want) {
		cm_error_set(err, CM_ERR_VALUE,
			     "snapshot has %u component instances, the "
			     "store %u",
			     n, want);
		goto out;
	}
	if (wasm_snap_left(r) != (size_t)n * 7 + 8) {
		malformed(err, "run section of the wrong length");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint8_t f[3];
		uint32_t bp;

		if (!wasm_snap_get(r, f, 3) || !wasm_snap_get_u32(r, &bp) ||
		    f[0] > 1 || f[1] > 1 || f[2] > 1) {
			malformed(err, "bad component instance flags");
			goto out;
		}
		insts[i]->may_enter = f[0];
		insts[i]->may_leave = f[1];
		insts[i]->poisoned = f[2];
		insts[i]->backpressure = bp;
	}
	if (!wasm_snap_get_u64(r, &rng)) {
		malformed(err, "truncated run section");
		goto out;
	}
	/* the xorshift state is never 0 while a seed is in use */
	if (s->cfg.sched_seed && rng)
		s->rng = rng;
	rc = 0;
out:
	free(insts);
	return rc;
}

/* How much of an image a restore applies (see restore_image). */
typedef struct restore_mode {
	uint32_t flags; /* the header's: CM_SNAPSHOT_DELTA */
	uint32_t format; /* the header's (check_image let it through) */
	bool core_only; /* an earlier image of a chain: its core section */
} restore_mode;

static int restore_sections(cm_store *s, wasm_snap_reader *rp,
			    cm_component_instance **insts, uint32_t ninsts,
			    cm_snap_async_state **as, restore_mode mode,
			    char *why, size_t whylen, cm_error *err);

/*
 * The checks every image passes before any of it is read (a restore's
 * and each of a fold's): its header, this hostel's format, its length
 * and its checksum.  flags and sha are the header's.
 */
static int check_image(const uint8_t *buf, size_t len, uint32_t *flags,
		       uint8_t sha[CM_SNAPSHOT_SHA256_BYTES], uint32_t *formatp,
		       cm_error *err)
{
	uint32_t format;
	uint64_t sum;
	wasm_snap_reader t;

	if (read_header(buf, len, &format, flags, sha, err))
		return -1;
	if (format < CM_SNAPSHOT_FORMAT_OLDEST || format > CM_SNAPSHOT_FORMAT)
		return cm_error_set(err, CM_ERR_VALUE,
				    "snapshot format %u, this hostel reads "
				    "formats %u to %u",
				    format, CM_SNAPSHOT_FORMAT_OLDEST,
				    CM_SNAPSHOT_FORMAT);
	*formatp = format;
	if (len < HEADER_BYTES + END_BYTES)
		return malformed(err, "truncated");
	t = (wasm_snap_reader){.p = buf + len - 8, .len = 8};
	wasm_snap_get_u64(&t, &sum);
	if (sum != wasm_snap_checksum(buf, len - 8))
		return malformed(err, "checksum mismatch (truncated or "
				      "corrupted)");
	return 0;
}

/*
 * Check the header and the checksum, then apply the sections: all of
 * them, or (core_only) the core section alone, the rest only framed.
 */
static int restore_image(cm_store *s, const uint8_t sha256[32],
			 const uint8_t *buf, size_t len, bool core_only,
			 cm_error *err)
{
	wasm_snap_reader r = {.p = buf, .len = len};
	uint8_t sha[CM_SNAPSHOT_SHA256_BYTES];
	char why[CM_ERROR_MSG_MAX] = "";
	uint32_t flags, format;
	cm_snap_async_state *as = NULL;
	cm_component_instance **insts = NULL;
	uint32_t ninsts;
	int rc;

	if (check_image(buf, len, &flags, sha, &format, err))
		return -1;
	if (memcmp(sha, sha256, sizeof sha)) {
		char a[17], b[17];

		hex(sha, a);
		hex(sha256, b);
		return cm_error_set(err, CM_ERR_VALUE,
				    "snapshot of component %s..., the store "
				    "runs %s...",
				    a, b);
	}
	if (list_instances(s, &insts, &ninsts, err))
		return -1;
	rc = restore_sections(s, &r, insts, ninsts, &as,
			      (restore_mode){flags, format, core_only}, why,
			      sizeof why, err);
	if (cm_snap_async_restore_end(as, rc != 0) && rc == 0)
		rc = cm_error_set(err, CM_ERR_NOMEM, "out of memory");
	free(insts);
	return rc;
}

int cm_store_restore(cm_store *s, const uint8_t sha256[32], const uint8_t *buf,
		     size_t len, cm_error *err)
{
	return restore_image(s, sha256, buf, len, false, err);
}

int cm_store_restore_core(cm_store *s, const uint8_t sha256[32],
			  const uint8_t *buf, size_t len, cm_error *err)
{
	return restore_image(s, sha256, buf, len, true, err);
}

static int restore_sections(cm_store *s, wasm_snap_reader *rp,
			    cm_component_instance **insts, uint32_t ninsts,
			    cm_snap_async_state **as, restore_mode mode,
			    char *why, size_t whylen, cm_error *err)
{
	wasm_snap_reader r = *rp;
	uint32_t tag, expect = TAG_CORE;
	uint64_t plen;

	r.off = HEADER_BYTES;
	for (;;) {
		wasm_snap_reader sec;
		const uint8_t *p;

		if (!wasm_snap_get_u32(&r, &tag) ||
		    !wasm_snap_get_u64(&r, &plen) ||
		    (p = wasm_snap_take(&r, plen)) == NULL)
			return malformed(err, "truncated section");
		sec = (wasm_snap_reader){.p = p, .len = plen};
		if (tag == TAG_END) {
			if (expect != TAG_END || plen != 8 ||
			    wasm_snap_left(&r) != 0)
				return malformed(err, "misplaced end section");
			return 0;
		}
		if (tag > CM_SNAP_TAG_HOST)
			return cm_error_set(err, CM_ERR_VALUE,
					    "malformed snapshot: unknown "
					    "section tag %u",
					    tag);
		if (tag != expect)
			return malformed(err, "sections out of order");
		if (mode.core_only && tag != TAG_CORE) {
			expect = tag == TAG_RUN		   ? CM_SNAP_TAG_OBJECTS
				 : tag == CM_SNAP_TAG_HOST ? TAG_END
							   : tag + 1;
			continue;
		}
		if (tag == TAG_CORE) {
			wasm_snap_status st =
				mode.flags & CM_SNAPSHOT_DELTA
					? wasm_store_restore_delta(
						  s->wasm, &sec, why, whylen)
					: wasm_store_restore(s->wasm, &sec, why,
							     whylen);

			if (st)
				return snap_status(st, why, err);
			expect = TAG_RUN;
		} else if (tag == TAG_RUN) {
			if (restore_run(s, &sec, err))
				return -1;
			if (cm_snap_async_restore_begin(as, s, insts, ninsts,
							mode.format, why,
							whylen))
				return snap_status(WASM_SNAP_MISMATCH, why,
						   err);
			expect = CM_SNAP_TAG_OBJECTS;
		} else {
			wasm_snap_status st =
				cm_snap_async_restore(*as, tag, &sec);

			if (st)
				return snap_status(st, why, err);
			expect = tag == CM_SNAP_TAG_HOST ? TAG_END : tag + 1;
		}
	}
}

/* ---- folding a delta into its full snapshot ------------------------------ */

/*
 * The payload of each section of an image whose header and checksum
 * were checked: sec[tag] for tags CORE..HOST, in order, then END last.
 */
static int frame_sections(const uint8_t *buf, size_t len,
			  wasm_snap_reader sec[CM_SNAP_TAG_HOST + 1],
			  const char *which, cm_error *err)
{
	wasm_snap_reader r = {.p = buf, .len = len, .off = HEADER_BYTES};

	for (uint32_t want = TAG_CORE; want <= CM_SNAP_TAG_HOST + 1; want++) {
		uint32_t tag;
		uint64_t plen;
		const uint8_t *p;

		if (!wasm_snap_get_u32(&r, &tag) ||
		    !wasm_snap_get_u64(&r, &plen) ||
		    (p = wasm_snap_take(&r, plen)) == NULL ||
		    tag != (want > CM_SNAP_TAG_HOST ? TAG_END : want))
			return cm_error_set(err, CM_ERR_VALUE,
					    "malformed snapshot: the %s "
					    "image's sections are truncated or "
					    "out of order",
					    which);
		if (tag == TAG_END)
			return plen == 8 && wasm_snap_left(&r) == 0
				       ? 0
				       : malformed(err,
						   "misplaced end section");
		sec[tag] = (wasm_snap_reader){.p = p, .len = plen};
	}
	return malformed(err, "no end section");
}

int cm_snapshot_fold(const uint8_t *full, size_t flen, const uint8_t *delta,
		     size_t dlen, uint8_t **out, size_t *outlen, cm_error *err)
{
	wasm_snap_reader fs[CM_SNAP_TAG_HOST + 1], ds[CM_SNAP_TAG_HOST + 1];
	uint8_t fsha[CM_SNAPSHOT_SHA256_BYTES], dsha[CM_SNAPSHOT_SHA256_BYTES];
	wasm_snap_buf b = {.max = CM_SNAPSHOT_MAX_BYTES};
	char why[CM_ERROR_MSG_MAX] = "";
	uint32_t fflags, dflags, fformat, dformat;
	wasm_snap_status st;
	size_t at;

	*out = NULL;
	*outlen = 0;
	if (check_image(full, flen, &fflags, fsha, &fformat, err) ||
	    check_image(delta, dlen, &dflags, dsha, &dformat, err))
		return -1;
	if (fflags & CM_SNAPSHOT_DELTA)
		return cm_error_set(err, CM_ERR_VALUE,
				    "the image to fold into is a delta");
	if (!(dflags & CM_SNAPSHOT_DELTA))
		return cm_error_set(err, CM_ERR_VALUE,
				    "the image to fold in is not a delta");
	if (memcmp(fsha, dsha, sizeof fsha))
		return cm_error_set(err, CM_ERR_VALUE,
				    "the delta is of another component");
	if (frame_sections(full, flen, fs, "full", err) ||
	    frame_sections(delta, dlen, ds, "delta", err))
		return -1;
	wasm_snap_put(&b, MAGIC, sizeof MAGIC);
	/* the sections after the core are the delta's, so is the format
	 * (the core section is the same in every format read) */
	wasm_snap_u32(&b, dformat);
	wasm_snap_u32(&b, 0);
	wasm_snap_put(&b, fsha, sizeof fsha);
	at = section_begin(&b, TAG_CORE);
	st = wasm_snap_fold_core(&fs[TAG_CORE], &ds[TAG_CORE], &b, why,
				 sizeof why);
	section_end(&b, at);
	/* the rest of the state is the delta's, written whole */
	for (uint32_t tag = TAG_RUN;
	     st == WASM_SNAP_OK && tag <= CM_SNAP_TAG_HOST; tag++) {
		at = section_begin(&b, tag);
		wasm_snap_put(&b, ds[tag].p, ds[tag].len);
		section_end(&b, at);
	}
	if (st == WASM_SNAP_OK)
		st = put_end(&b, "folded snapshot", why, sizeof why);
	if (st != WASM_SNAP_OK) {
		free(b.p);
		return snap_status(st, why, err);
	}
	*out = b.p;
	*outlen = b.len;
	return 0;
}
