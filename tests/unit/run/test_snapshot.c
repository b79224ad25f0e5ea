/*
 * test_snapshot.c - store snapshots (runtime/run/snapshot.h, issue 22):
 * a store's memories, globals and tables round-trip into a fresh store of
 * the same component (and its snapshot then is the same bytes); a
 * snapshot of another component, another format or another shape is
 * refused; every truncation and random bit flips are refused and forged
 * ones (the checksum fixed up) never crash; what cannot be represented
 * yet is refused with "not supported yet"; the host's calls in flight
 * come back as tasks whose caller is gone (one not begun: cancelled).
 *
 * Guests: tests/guests/values (a memory that grows, mutable globals),
 * tests/guests/wasi/calc (wasi-libc: tables of function references,
 * host functions behind them) and the counter of tests/guests/mkcomponent
 * (a global only: a small snapshot for the every-prefix loop).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "component/component.h"
#include "run/instance.h"
#include "run/snapshot.h"
#include "run/store.h"
#include "wasi/wasi.h"
#include "wasm/snapshot.h"
#include "wasm/store.h"

#include "guest-load.h"
#include "live-store.h"
#include "testmain.h"

static const uint8_t SHA_A[32] = {0xaa, 1, 2, 3};
static const uint8_t SHA_B[32] = {0xbb, 1, 2, 3};

static uint8_t *snap(live *v, const uint8_t *sha, size_t *len)
{
	uint8_t *out;
	cm_error err;

	if (cm_store_snapshot(v->s, sha, &out, len, &err))
		ck_abort_msg("snapshot: %s", err.msg);
	return out;
}

/* ---- the counter (mkcomponent) ------------------------------------------ */

static cm_component *counter_component(void)
{
	const char *b = getenv("HOSTEL_BUILDDIR");
	char tmpl[] = "/tmp/test-snapshot.XXXXXX";
	char cmd[1024];
	uint8_t *bytes;
	cm_component *c = NULL;
	wasm_error err;
	FILE *f;
	long n;
	int fd = mkstemp(tmpl);

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(cmd, sizeof cmd, "'%s/tests/guests/mkcomponent' counter '%s'",
		 b ? b : ".", tmpl);
	ck_assert_int_eq(system(cmd), 0);
	f = fopen(tmpl, "rb");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	bytes = malloc((size_t)n);
	ck_assert_ptr_nonnull(bytes);
	ck_assert_uint_eq(fread(bytes, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	unlink(tmpl);
	if (cm_component_load(bytes, (size_t)n, &c, &err))
		ck_abort_msg("counter: %s", err.msg);
	free(bytes);
	return c;
}

static uint32_t counter_inc(live *v)
{
	return (uint32_t)call(v, NULL, "inc", NULL, 0).u.u;
}

/* ---- round trips ----------------------------------------------------------
 */

START_TEST(test_counter_round_trip)
{
	cm_component *c = counter_component();
	live a, b;
	uint8_t *s1, *s2;
	size_t n1, n2;
	cm_error err;

	live_open(&a, c);
	for (int i = 0; i < 5; i++)
		counter_inc(&a);
	s1 = snap(&a, SHA_A, &n1);
	live_open(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	s2 = snap(&b, SHA_A, &n2);
	ck_assert_mem_eq(s1, s2, n1);
	ck_assert_uint_eq(n1, n2);
	ck_assert_uint_eq(counter_inc(&b), 6);
	ck_assert_uint_eq(counter_inc(&a), 6);
	free(s1);
	free(s2);
	live_close(&a);
	live_close(&b);
	cm_component_free(c);
}
END_TEST

/* Bytes of every memory of the store, in order, compared. */
static void same_memories(const cm_store *x, const cm_store *y)
{
	size_t j = 0;

	for (size_t i = 0; i < x->wasm->nobjs; i++) {
		const wasm_memory *m, *n;

		if (x->wasm->objs[i].kind != WASM_OBJ_MEMORY)
			continue;
		m = x->wasm->objs[i].ptr;
		while (j < y->wasm->nobjs &&
		       y->wasm->objs[j].kind != WASM_OBJ_MEMORY)
			j++;
		ck_assert_uint_lt(j, y->wasm->nobjs);
		n = y->wasm->objs[j++].ptr;
		ck_assert_uint_eq(m->size, n->size);
		ck_assert_int_eq(memcmp(m->data, n->data, m->size), 0);
	}
}

START_TEST(test_values_memory_round_trip)
{
	cm_component *c = load_guest("values/values.wasm");
	live a, b;
	cm_val arg, r;
	uint8_t *s1, *s2;
	size_t n1, n2;
	cm_error err;

	live_open(&a, c);
	arg = cm_val_u32(300000); /* grows memory past 4 pages */
	r = call(&a, NULL, "make", &arg, 1);
	ck_assert_uint_eq(r.u.str.len, 300000);
	cm_val_free(&r);
	ck_assert_int_eq(cm_val_string(&arg, "kept", 4), 0);
	r = call(&a, NULL, "echo", &arg, 1);
	cm_val_free(&r);
	cm_val_free(&arg);
	ck_assert_uint_eq(call(&a, NULL, "calls", NULL, 0).u.u, 2);
	s1 = snap(&a, SHA_A, &n1);

	live_open(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	same_memories(a.s, b.s);
	s2 = snap(&b, SHA_A, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(s1, s2, n1);
	/* the globals came along: the call count, the bump pointer */
	ck_assert_uint_eq(call(&b, NULL, "calls", NULL, 0).u.u, 2);
	ck_assert_int_eq(cm_val_string(&arg, "again", 5), 0);
	r = call(&b, NULL, "echo", &arg, 1);
	ck_assert_uint_eq(r.u.str.len, 5);
	ck_assert_mem_eq(r.u.str.ptr, "again", 5);
	cm_val_free(&r);
	cm_val_free(&arg);
	ck_assert_uint_eq(call(&b, NULL, "calls", NULL, 0).u.u, 3);
	/* a snapshot of a component's state, not of its component */
	ck_assert_int_ne(cm_store_restore(b.s, SHA_B, s1, n1, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "snapshot of component aa"));
	free(s1);
	free(s2);
	live_close(&a);
	live_close(&b);
	cm_component_free(c);
}
END_TEST

#define CALC "hostel:calc/api@0.1.0"

START_TEST(test_calc_tables_round_trip)
{
	cm_component *c = load_guest("wasi/calc.component.wasm");
	live a, b;
	cm_val args[2], r;
	uint8_t *s1, *s2;
	size_t n1, n2;
	cm_error err;
	bool tables = false;

	live_open(&a, c);
	args[0] = cm_val_u32(40);
	args[1] = cm_val_u32(2);
	ck_assert_uint_eq(call(&a, CALC, "add", args, 2).u.u, 42);
	ck_assert_int_eq(cm_val_string(&args[0], "snap", 4), 0);
	r = call(&a, CALC, "greet", args, 1);
	cm_val_free(&r);
	cm_val_free(&args[0]);
	s1 = snap(&a, SHA_A, &n1);
	/* wasi-libc's indirect calls: some table holds functions */
	for (size_t i = 0; i < a.s->wasm->nobjs; i++)
		if (a.s->wasm->objs[i].kind == WASM_OBJ_TABLE) {
			const wasm_table_inst *t = a.s->wasm->objs[i].ptr;

			for (uint64_t j = 0; j < t->size; j++)
				tables |= t->elems[j] != 0;
		}
	ck_assert(tables);

	live_open(&b, c);
	/* WASI handles (calc's stdio, below) are the WASI layer's to write */
	ck_assert_int_eq(wasi_ctx_durable(b.wasi, b.s), 0);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	same_memories(a.s, b.s);
	s2 = snap(&b, SHA_A, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(s1, s2, n1);
	/* the heap (malloc's state) and the tables still work: greet
	 * allocates, log-now goes through the adapter's host functions */
	ck_assert_int_eq(cm_val_string(&args[0], "restored", 8), 0);
	r = call(&b, CALC, "greet", args, 1);
	ck_assert_uint_eq(r.u.str.len, 16);
	ck_assert_mem_eq(r.u.str.ptr, "hello, restored!", 16);
	cm_val_free(&r);
	free(s2);
	r = call(&b, CALC, "log-now", args, 1);
	/* what the adapter keeps after WASI use (its stdio streams) is
	 * written too, and comes back (tests/unit/wasi/
	 * test_wasi_snapshot.c checks where its output goes) */
	free(s1);
	s1 = snap(&b, SHA_A, &n1);
	live_close(&a);
	live_open(&a, c);
	ck_assert_int_eq(wasi_ctx_durable(a.wasi, a.s), 0);
	ck_assert_int_eq(cm_store_restore(a.s, SHA_A, s1, n1, &err), 0);
	r = call(&a, CALC, "log-now", args, 1);
	cm_val_free(&args[0]);
	free(s1);
	live_close(&a);
	live_close(&b);
	cm_component_free(c);
}
END_TEST

/* ---- refusals ----------------------------------------------------------- */

static void fix_checksum(uint8_t *p, size_t n)
{
	uint64_t h = wasm_snap_checksum(p, n - 8);

	for (int i = 0; i < 8; i++)
		p[n - 8 + i] = (uint8_t)(h >> (8 * i));
}

START_TEST(test_refused_versions_and_tags)
{
	cm_component *c = counter_component();
	live a, b;
	uint8_t *s1, *bad;
	size_t n1;
	cm_error err;

	live_open(&a, c);
	counter_inc(&a);
	s1 = snap(&a, SHA_A, &n1);
	bad = malloc(n1 + 12);
	ck_assert_ptr_nonnull(bad);

	/* another format version */
	memcpy(bad, s1, n1);
	bad[8] = CM_SNAPSHOT_FORMAT + 1;
	live_open(&b, c);
	ck_assert_int_ne(cm_store_restore(b.s, SHA_A, bad, n1, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_VALUE);
	{
		char want[32];

		snprintf(want, sizeof want, "snapshot format %u",
			 CM_SNAPSHOT_FORMAT + 1);
		ck_assert_ptr_nonnull(strstr(err.msg, want));
	}
	live_close(&b);
	/* format 6 is still read: it differs from 7 only in an explicit
	 * thread's start argument, 7 from 8 in host-held ends, and this
	 * store has neither */
	memcpy(bad, s1, n1);
	bad[8] = CM_SNAPSHOT_FORMAT_OLDEST;
	fix_checksum(bad, n1);
	live_open(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, bad, n1, &err), 0);
	ck_assert_uint_eq(counter_inc(&b), 2);
	live_close(&b);
	/* and the one before it is not, with the formats that are */
	bad[8] = CM_SNAPSHOT_FORMAT_OLDEST - 1;
	fix_checksum(bad, n1);
	live_open(&b, c);
	ck_assert_int_ne(cm_store_restore(b.s, SHA_A, bad, n1, &err), 0);
	{
		char want[48];

		snprintf(want, sizeof want, "reads formats %u to %u",
			 CM_SNAPSHOT_FORMAT_OLDEST, CM_SNAPSHOT_FORMAT);
		ck_assert_ptr_nonnull(strstr(err.msg, want));
	}
	live_close(&b);
	/* the format before host resources (2) is refused too */
	bad[8] = 2;
	live_open(&b, c);
	ck_assert_int_ne(cm_store_restore(b.s, SHA_A, bad, n1, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "snapshot format 2"));
	live_close(&b);

	/* an unknown section (tag 7, empty) before the end section */
	memcpy(bad, s1, n1 - 20);
	memset(bad + n1 - 20, 0, 12);
	bad[n1 - 20] = 7;
	memcpy(bad + n1 - 8, s1 + n1 - 20, 20);
	fix_checksum(bad, n1 + 12);
	live_open(&b, c);
	ck_assert_int_ne(cm_store_restore(b.s, SHA_A, bad, n1 + 12, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown section tag 7"));
	live_close(&b);

	/* another shape: the counter's snapshot over values' store */
	{
		cm_component *v = load_guest("values/values.wasm");

		live_open(&b, v);
		ck_assert_int_ne(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
		ck_assert_int_eq(err.kind, CM_ERR_VALUE);
		live_close(&b);
		cm_component_free(v);
	}
	free(bad);
	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

START_TEST(test_truncations_and_flips)
{
	cm_component *c = counter_component();
	live a, b;
	uint8_t *s1, *bad;
	size_t n1;
	cm_error err;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	int forged_ok = 0;

	live_open(&a, c);
	for (int i = 0; i < 3; i++)
		counter_inc(&a);
	s1 = snap(&a, SHA_A, &n1);
	bad = malloc(n1);
	ck_assert_ptr_nonnull(bad);
	live_open(&b, c);
	/* every prefix: refused, and the store untouched (checked first) */
	for (size_t k = 0; k < n1; k++) {
		memcpy(bad, s1, k);
		ck_assert_msg(cm_store_restore(b.s, SHA_A, bad, k, &err) != 0,
			      "a prefix of %zu bytes restored", k);
		ck_assert_int_eq(err.kind, CM_ERR_VALUE);
	}
	ck_assert_uint_eq(counter_inc(&b), 1);
	live_close(&b);
	/* random bit flips: refused; with the checksum forged: no crash */
	for (int i = 0; i < 4000; i++) {
		int flips = 1 + (int)(rng % 3);

		memcpy(bad, s1, n1);
		for (int f = 0; f < flips; f++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			bad[rng % n1] ^= (uint8_t)(1u << (rng >> 60 & 7));
		}
		if (!memcmp(bad, s1, n1))
			continue;
		live_open(&b, c);
		if (i % 2 == 0) {
			ck_assert_int_ne(
				cm_store_restore(b.s, SHA_A, bad, n1, &err), 0);
		} else {
			fix_checksum(bad, n1);
			if (cm_store_restore(b.s, SHA_A, bad, n1, &err) == 0) {
				cm_val res[1];
				uint32_t nres = 0;

				forged_ok++;
				/* a sound store: the call returns or traps
				 * (a flipped may_enter), never worse */
				cm_invoke(
					b.s,
					cm_instance_export(b.inst, NULL, "inc"),
					NULL, 0, res, &nres, &err);
			}
		}
		live_close(&b);
	}
	/* a flip in the counter's value forges a valid snapshot */
	ck_assert_int_gt(forged_ok, 0);
	free(bad);
	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

START_TEST(test_values_sampled_prefixes)
{
	cm_component *c = load_guest("values/values.wasm");
	live a, b;
	cm_val arg = cm_val_u32(70000), r;
	uint8_t *s1;
	size_t n1;
	cm_error err;

	live_open(&a, c);
	r = call(&a, NULL, "make", &arg, 1);
	cm_val_free(&r);
	s1 = snap(&a, SHA_A, &n1);
	live_open(&b, c);
	for (size_t k = 0; k < n1; k += (k < 256 || n1 - k < 256) ? 1 : 4099)
		ck_assert_int_ne(cm_store_restore(b.s, SHA_A, s1, k, &err), 0);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	free(s1);
	live_close(&a);
	live_close(&b);
	cm_component_free(c);
}
END_TEST

/*
 * Ends the host holds (format 8): p3stdio's hold keeps a WASI 0.3 stdout
 * stream open and keep-future a future of its own.  With the WASI
 * layer's registration the snapshot writes them and a restore gives
 * the same bytes again, the stream writing on and the future carrying
 * its value; without it the snapshot is refused, and a restore finds
 * nobody to take the ends over; a forged description is refused.
 */
static size_t find_bytes(const uint8_t *p, size_t n, const uint8_t *pat,
			 size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (memcmp(p + i, pat, m) == 0)
			return i;
	return SIZE_MAX;
}

START_TEST(test_host_ends_round_trip)
{
	cm_component *c = load_guest("wasi/p3stdio.wasm");
	/* the stream end's description: length 14, version 1, stdout, the
	 * stream (role 0) */
	static const uint8_t desc[] = {14, 0, 0, 0, 1, 1, 0};
	live a, b;
	cm_val arg;
	uint8_t *s1, *s2, *out = NULL;
	size_t n1, n2, n, at;
	cm_error err;

	live_open(&a, c);
	ck_assert_int_eq(cm_val_string(&arg, "held\n", 5), 0);
	ck_assert_uint_eq(call(&a, NULL, "hold", &arg, 1).u.u, 0);
	(void)call(&a, NULL, "keep-future", NULL, 0);
	/* no registration: refused, as before format 8 */
	ck_assert_int_ne(cm_store_snapshot(a.s, SHA_A, &out, &n, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_UNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "end the host holds"));
	ck_assert_int_eq(wasi_ctx_durable(a.wasi, a.s), 0);
	s1 = snap(&a, SHA_A, &n1);

	live_open(&b, c);
	ck_assert_int_eq(wasi_ctx_durable(b.wasi, b.s), 0);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	s2 = snap(&b, SHA_A, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(s1, s2, n1);
	free(s2);
	ck_assert_uint_eq(call(&b, NULL, "more", &arg, 1).u.u, 0);
	ck_assert_uint_eq(call(&b, NULL, "use-future", NULL, 0).u.u, 7);
	live_close(&b);

	/* nobody to take the ends over */
	live_open(&b, c);
	ck_assert_int_ne(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	ck_assert_ptr_nonnull(
		strstr(err.msg, "a host-held end no embedder takes over"));
	live_close(&b);

	/* a description that is not one: role 2 */
	at = find_bytes(s1, n1, desc, sizeof desc);
	ck_assert_uint_ne(at, SIZE_MAX);
	s1[at + 6] = 2;
	fix_checksum(s1, n1);
	live_open(&b, c);
	ck_assert_int_eq(wasi_ctx_durable(b.wasi, b.s), 0);
	ck_assert_int_ne(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	ck_assert_ptr_nonnull(
		strstr(err.msg, "a host-held end no embedder takes over"));
	live_close(&b);
	free(s1);
	cm_val_free(&arg);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

START_TEST(test_not_supported_yet)
{
	cm_component *c = counter_component();
	live a;
	uint8_t *out = NULL;
	size_t n;
	cm_error err;

	live_open(&a, c);
	/* the checks read the store's state: fake a snapshot from inside
	 * a turn (guest code on the C stack) */
	a.s->in_turn = true;
	ck_assert_int_ne(cm_store_snapshot(a.s, SHA_A, &out, &n, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_UNSUPPORTED);
	ck_assert_str_eq(err.msg, "not supported yet: a snapshot inside "
				  "guest code");
	ck_assert_ptr_null(out);
	a.s->in_turn = false;
	ck_assert_int_eq(cm_store_snapshot(a.s, SHA_A, &out, &n, &err), 0);
	free(out);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/*
 * An externref a component holds is always null: the canonical ABI has
 * no externref, so no import gives one, and no core instruction but GC's
 * (refused at load) makes one.  loop.wasm's $work-refs moves a null
 * one round a global, a table and a local (test_refs_in_frames writes
 * and restores those).  A non-null one could come only from a core
 * embedder; forged here, the snapshot refuses it with the place, and
 * writes the store once it is null again.
 */
START_TEST(test_externref_only_null)
{
	cm_component *c = load_guest("loop/loop.wasm");
	live a;
	uint8_t *out = NULL;
	size_t n;
	cm_error err;
	int globals = 0, tables = 0;

	live_open(&a, c);
	for (size_t i = 0; i < a.s->wasm->nobjs; i++) {
		uint64_t *slot = NULL;

		if (a.s->wasm->objs[i].kind == WASM_OBJ_INSTANCE) {
			wasm_instance *in = a.s->wasm->objs[i].ptr;

			for (uint32_t k = 0;
			     k < wasm_module_nglobals(in->module); k++) {
				wasm_global_inst *g = in->globals[k];

				if ((uint8_t)g->type.type == WASM_EXTERNREF &&
				    k >= in->module->nimported_globals)
					slot = &g->slots[0], globals++;
			}
		} else if (a.s->wasm->objs[i].kind == WASM_OBJ_TABLE) {
			wasm_table_inst *t = a.s->wasm->objs[i].ptr;

			if ((uint8_t)t->type.elem == WASM_EXTERNREF)
				slot = (uint64_t *)&t->elems[1], tables++;
		}
		if (slot == NULL)
			continue;
		ck_assert_uint_eq(*slot, WASM_REF_NULL);
		*slot = 0x10;
		ck_assert_int_ne(cm_store_snapshot(a.s, SHA_A, &out, &n, &err),
				 0);
		ck_assert_int_eq(err.kind, CM_ERR_UNSUPPORTED);
		ck_assert_ptr_nonnull(strstr(err.msg, "a non-null externref"));
		ck_assert_ptr_null(out);
		*slot = WASM_REF_NULL;
		ck_assert_int_eq(cm_store_snapshot(a.s, SHA_A, &out, &n, &err),
				 0);
		free(out);
		out = NULL;
	}
	ck_assert_int_eq(globals, 1);
	ck_assert_int_eq(tables, 1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/* ---- live exception objects: the exn guest ------------------------------ */

static uint32_t exn_u32(live *v, const char *name)
{
	return (uint32_t)call(v, NULL, name, NULL, 0).u.u;
}

static void exn_keep(live *v, uint32_t n)
{
	cm_val arg = cm_val_u32(n);

	call(v, NULL, "keep", &arg, 1);
}

/* The count of heap objects an image's core section writes: after the
 * header (48), the section's head (12) and the instance count (4). */
static uint32_t heap_objects(const uint8_t *p, size_t n)
{
	ck_assert_uint_ge(n, 68);
	return (uint32_t)p[64] | (uint32_t)p[65] << 8 | (uint32_t)p[66] << 16 |
	       (uint32_t)p[67] << 24;
}

/* sum() of the guest after keep(1..n): the chain's n's, and 1000 x 2k
 * for each k the table's four slots hold last (k % 4). */
static uint32_t exn_sum(uint32_t n)
{
	uint32_t sum = n * (n + 1) / 2;

	for (uint32_t k = n > 4 ? n - 3 : 1; k <= n; k++)
		sum += 1000 * 2 * k;
	return sum;
}

/*
 * Live exceptions (issue 22 point 1): a chain of exceptions each holding
 * the one before in its payload (a global), ones of an i32 and a v128 in
 * a table, one carrying a funcref.  Restored, every payload reads back
 * (sum, count, call-kept), the restored store's image is the same bytes,
 * the store goes on linking new ones to the restored chain, and only
 * the exceptions something reaches are written (the two the table no
 * longer holds are not; once cleared, none is).
 */
START_TEST(test_exceptions_round_trip)
{
	cm_component *c = load_guest("exn/exn.wasm");
	live a, b;
	uint8_t *s0, *s1, *s2, *s3;
	size_t n0, n1, n2, n3;
	cm_error err;

	live_open(&a, c);
	s0 = snap(&a, SHA_A, &n0);
	for (uint32_t n = 1; n <= 6; n++)
		exn_keep(&a, n);
	call(&a, NULL, "keep-fn", NULL, 0);
	ck_assert_uint_eq(exn_u32(&a, "sum"), exn_sum(6));
	s1 = snap(&a, SHA_A, &n1);
	ck_assert_uint_gt(n1, n0);

	live_open(&b, c);
	if (cm_store_restore(b.s, SHA_A, s1, n1, &err))
		ck_abort_msg("restore: %s", err.msg);
	/* the chain's 6, the table's 4, the function's 1 */
	ck_assert_uint_eq(b.s->wasm->nexns, 11);
	s2 = snap(&b, SHA_A, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(s1, s2, n1);
	ck_assert_uint_eq(exn_u32(&b, "sum"), exn_sum(6));
	ck_assert_uint_eq(exn_u32(&b, "count"), 6);
	ck_assert_uint_eq(exn_u32(&b, "call-kept"), 7);
	exn_keep(&b, 7);
	exn_keep(&a, 7);
	ck_assert_uint_eq(exn_u32(&b, "sum"), exn_sum(7));
	ck_assert_uint_eq(exn_u32(&b, "count"), 7);

	call(&b, NULL, "clear", NULL, 0);
	ck_assert_uint_eq(exn_u32(&b, "call-kept"), 0);
	s3 = snap(&b, SHA_A, &n3);
	ck_assert_uint_eq(heap_objects(s0, n0), 0);
	ck_assert_uint_eq(heap_objects(s1, n1), 11);
	ck_assert_uint_eq(heap_objects(s3, n3), 0);
	free(s0);
	free(s1);
	free(s2);
	free(s3);
	live_close(&a);
	live_close(&b);
	cm_component_free(c);
}
END_TEST

/* Whether a call of export name succeeds (a forged store may trap). */
static bool exn_try(live *v, const char *name, const cm_val *args,
		    uint32_t nargs)
{
	cm_func *f = cm_instance_export(v->inst, NULL, name);
	cm_val res[1];
	uint32_t nres = 0;
	cm_error err;

	ck_assert_ptr_nonnull(f);
	return cm_invoke(v->s, f, args, nargs, res, &nres, &err) == 0;
}

/*
 * What a restore of exceptions refuses: a store whose limit the
 * exceptions would pass (its own limit, not the writer's), every
 * prefix, and bits flipped with the checksum forged: refused, or a store
 * whose every payload reads back without a crash (the restore checks
 * each value against its tag's type and each exnref names an earlier
 * exception, so a forged one cannot be a cycle or a wild pointer).
 */
START_TEST(test_exceptions_refused)
{
	cm_component *c = load_guest("exn/exn.wasm");
	live a, b;
	uint8_t *s1, *bad;
	size_t n1;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	int ok = 0;
	cm_error err;

	live_open(&a, c);
	for (uint32_t n = 1; n <= 40; n++)
		exn_keep(&a, n);
	call(&a, NULL, "keep-fn", NULL, 0);
	s1 = snap(&a, SHA_A, &n1);

	live_open(&b, c);
	b.s->wasm->limits.max_exception_bytes = 1024;
	ck_assert_int_ne(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	ck_assert_msg(strstr(err.msg, "would pass the store's limit") != NULL,
		      "%s", err.msg);
	live_close(&b);

	bad = malloc(n1);
	ck_assert_ptr_nonnull(bad);
	for (size_t k = 0; k < n1; k += 7) {
		live_open(&b, c);
		memcpy(bad, s1, k);
		ck_assert_msg(cm_store_restore(b.s, SHA_A, bad, k, &err) != 0,
			      "a prefix of %zu bytes restored", k);
		live_close(&b);
	}
	for (int i = 0; i < 2000; i++) {
		memcpy(bad, s1, n1);
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		/* the core section: past the header and its section head */
		bad[60 + rng % (n1 - 68)] ^= (uint8_t)(1u << (rng >> 60 & 7));
		fix_checksum(bad, n1);
		live_open(&b, c);
		if (cm_store_restore(b.s, SHA_A, bad, n1, &err) == 0) {
			cm_val arg = cm_val_u32(99);

			ok++;
			exn_try(&b, "sum", NULL, 0);
			exn_try(&b, "count", NULL, 0);
			exn_try(&b, "call-kept", NULL, 0);
			exn_try(&b, "keep", &arg, 1);
		}
		live_close(&b);
	}
	/* most flips land in payload values, which restore as others */
	ck_assert_int_gt(ok, 0);
	free(bad);
	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/* ---- live async state: the ticker ------------------------------------- */

/*
 * A virtual clock shared by the stores of a test: a wait's remaining
 * time only changes when the test moves it, so a snapshot taken again
 * at the same time is the same bytes.
 */
/* wasi_clock_virtual: it moves only when the code here moves it */
static wasi_vclock vc = {.mono_ns = 1000000000ull, .wall_ns = 1000000000ull};

static const wasi_clock *vclock(void)
{
	static wasi_clock clk;

	if (clk.now == NULL)
		wasi_clock_virtual(&clk, &vc);
	return &clk;
}

static void live_open_timed(live *v, cm_component *c)
{
	live_open(v, c);
	wasi_ctx_set_clock(v->wasi, vclock());
	ck_assert_int_eq(wasi_ctx_durable(v->wasi, v->s), 0);
}

/* Move the clock by 100 ms n times, each time firing and serving. */
static void tick(live *v, int n)
{
	cm_error err;

	for (int i = 0; i < n; i++) {
		vc.mono_ns += 100000000ull;
		wasi_ctx_fire_timers(v->wasi);
		ck_assert_msg(cm_store_service_turn(v->s, 0, &err) >= 0,
			      "turn: %s", err.msg);
	}
}

static uint64_t ticks(live *v)
{
	return call(v, NULL, "count", NULL, 0).u.u;
}

/*
 * Restore s1 into b, a fresh store of c, whose one pending host call is
 * one clock wait; the clock stood still, so its snapshot is the same
 * bytes again.
 */
static void restore_waiting(live *b, cm_component *c, const uint8_t *s1,
			    size_t n1)
{
	uint8_t *s2;
	size_t n2;
	cm_error err;

	live_open_timed(b, c);
	ck_assert_int_eq(cm_store_restore(b->s, SHA_A, s1, n1, &err), 0);
	ck_assert_uint_eq(cm_store_pending_host_calls(b->s), 1);
	ck_assert_uint_eq(wasi_ctx_pending_waits(b->wasi), 1);
	s2 = snap(b, SHA_A, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(s1, s2, n1);
	free(s2);
}

START_TEST(test_ticker_round_trip)
{
	cm_component *c = load_guest("ticker/ticker.wasm");
	live a, b;
	uint8_t *s1, *s2;
	size_t n1, n2;
	cm_error err;

	live_open_timed(&a, c);
	call(&a, NULL, "start", NULL, 0);
	tick(&a, 3);
	ck_assert_uint_eq(ticks(&a), 3);
	/* parked on a timer: a task, its thread, a set, a subtask, a wait */
	ck_assert_uint_eq(cm_store_pending_host_calls(a.s), 1);
	s1 = snap(&a, SHA_A, &n1);

	restore_waiting(&b, c, s1, n1);
	/* it ticks on from 3, not from 0 */
	ck_assert_uint_eq(ticks(&b), 3);
	tick(&b, 2);
	ck_assert_uint_eq(ticks(&b), 5);
	/* and stops as before */
	call(&b, NULL, "stop", NULL, 0);
	tick(&b, 2);
	ck_assert_uint_eq(ticks(&b), 6);
	ck_assert_uint_eq(cm_store_pending_host_calls(b.s), 0);
	live_close(&b);

	/* a wait already due when snapshotted (0 left) fires at once */
	vc.mono_ns += 250000000ull;
	s2 = snap(&a, SHA_A, &n2);
	live_open_timed(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s2, n2, &err), 0);
	ck_assert_uint_eq(wasi_ctx_pending_waits(b.wasi), 0);
	ck_assert_int_ge(cm_store_service_turn(b.s, 0, &err), 0);
	ck_assert_uint_eq(ticks(&b), 4);
	live_close(&b);
	free(s2);

	/* a store whose embedder cannot resume the wait: cancelled, and
	 * the ticker (which expects RETURNED) traps on it */
	live_open(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	ck_assert_uint_eq(cm_store_pending_host_calls(b.s), 0);
	ck_assert_int_lt(cm_store_service_turn(b.s, 0, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "unreachable"));
	live_close(&b);

	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/*
 * `rounds` copies of image s1 with one or two bits flipped and the
 * checksum forged, each restored into a fresh store of c: refused, or a
 * sound store that runs a turn after the clock moved step_ns (it runs on
 * or traps, never worse).  How many restored.
 */
static int forged_flips(cm_component *c, const uint8_t *s1, size_t n1,
			int rounds, uint64_t rng, uint64_t step_ns)
{
	uint8_t *bad = malloc(n1);
	cm_error err;
	int ok = 0;
	live b;

	ck_assert_ptr_nonnull(bad);
	for (int i = 0; i < rounds; i++) {
		int flips = 1 + (int)(rng % 2);

		memcpy(bad, s1, n1);
		for (int f = 0; f < flips; f++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			bad[rng % (n1 - 8)] ^= (uint8_t)(1u << (rng >> 60 & 7));
		}
		fix_checksum(bad, n1);
		live_open_timed(&b, c);
		if (cm_store_restore(b.s, SHA_A, bad, n1, &err) == 0) {
			ok++;
			vc.mono_ns += step_ns;
			wasi_ctx_fire_timers(b.wasi);
			cm_store_service_turn(b.s, 0, &err);
		}
		live_close(&b);
	}
	free(bad);
	return ok;
}

START_TEST(test_ticker_truncations_and_flips)
{
	cm_component *c = load_guest("ticker/ticker.wasm");
	live a, b;
	uint8_t *s1, *bad;
	size_t n1;
	cm_error err;

	live_open_timed(&a, c);
	call(&a, NULL, "start", NULL, 0);
	tick(&a, 1);
	s1 = snap(&a, SHA_A, &n1);
	bad = malloc(n1);
	ck_assert_ptr_nonnull(bad);
	for (size_t k = 0; k < n1; k++) {
		live_open_timed(&b, c);
		memcpy(bad, s1, k);
		ck_assert_msg(cm_store_restore(b.s, SHA_A, bad, k, &err) != 0,
			      "a prefix of %zu bytes restored", k);
		ck_assert_int_eq(err.kind, CM_ERR_VALUE);
		live_close(&b);
	}
	ck_assert_int_gt(forged_flips(c, s1, n1, 3000, 0x2545f4914f6cdd1dull,
				      100000000ull),
			 0);
	free(bad);
	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/* ---- a host call settled and not delivered yet (park.wasm) ------------ */

static cm_host_pending *parked;

static int park(cm_host_call *call, void *env, const cm_val *args,
		uint32_t nargs, cm_val *results, uint32_t nresults)
{
	(void)env;
	(void)args;
	(void)nargs;
	(void)results;
	(void)nresults;
	parked = cm_host_call_defer(call);
	return parked != NULL ? CM_HOST_PENDING : -1;
}

static void park_open(live *v, cm_component *c)
{
	cm_error err;

	memset(v, 0, sizeof *v);
	v->c = c;
	v->l = cm_linker_new();
	ck_assert_ptr_nonnull(v->l);
	ck_assert_int_eq(cm_linker_define_func(v->l, "hostel:test/host", "park",
					       park, NULL),
			 0);
	v->s = cm_store_new(NULL);
	ck_assert_ptr_nonnull(v->s);
	if (cm_instantiate(v->s, c, v->l, &v->inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
}

START_TEST(test_park_settled_round_trip)
{
	cm_component *c = load_guest("async/park.wasm");
	live a, b;
	cm_val x = cm_val_u32(7), v = cm_val_u32(42);
	uint8_t *s1, *s2;
	size_t n1, n2;
	cm_error err;

	park_open(&a, c);
	call(&a, NULL, "start", &x, 1);
	ck_assert_uint_eq(call(&a, NULL, "state", NULL, 0).u.u, 1);
	/* outstanding, and nothing can resume it: cancelled on restore */
	s2 = snap(&a, SHA_A, &n2);
	/* settled, not yet delivered: its result travels as data */
	ck_assert_int_eq(cm_host_settle(parked, &v, 1, &err), 0);
	s1 = snap(&a, SHA_A, &n1);

	park_open(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	ck_assert_uint_eq(call(&b, NULL, "state", NULL, 0).u.u, 1);
	ck_assert_int_ge(cm_store_service_turn(b.s, 0, &err), 0);
	ck_assert_uint_eq(call(&b, NULL, "state", NULL, 0).u.u, 2);
	ck_assert_uint_eq(call(&b, NULL, "value", NULL, 0).u.u, 42);
	cm_store_free(b.s);
	cm_linker_free(b.l);

	park_open(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s2, n2, &err), 0);
	ck_assert_uint_eq(cm_store_pending_host_calls(b.s), 0);
	/* the guest sees CANCELLED_BEFORE_RETURNED: it runs or traps */
	if (cm_store_service_turn(b.s, 0, &err) >= 0)
		ck_assert_uint_ne(call(&b, NULL, "state", NULL, 0).u.u, 1);
	cm_store_free(b.s);
	cm_linker_free(b.l);

	free(s1);
	free(s2);
	cm_store_free(a.s);
	cm_linker_free(a.l);
	cm_component_free(c);
}
END_TEST

/* ---- the host's calls in flight (sleep.wasm) --------------------------- */

typedef struct sleep_done {
	int n;
	cm_call_outcome outcome;
	uint64_t ns;
	char msg[CM_ERROR_MSG_MAX];
} sleep_done;

static void on_sleep_done(void *ctx, cm_call_outcome outcome,
			  const cm_val *results, uint32_t nresults,
			  const cm_error *err)
{
	sleep_done *d = ctx;

	d->n++;
	d->outcome = outcome;
	snprintf(d->msg, sizeof d->msg, "%s", err != NULL ? err->msg : "");
	if (nresults == 1)
		d->ns = results[0].u.u;
}

static void sleep_start(live *v, uint32_t ms, sleep_done *d)
{
	cm_func *f = cm_instance_export(v->inst, NULL, "sleep");
	cm_val arg = cm_val_u32(ms);
	cm_error err;

	ck_assert_ptr_nonnull(f);
	if (cm_call_start(v->s, f, &arg, 1, 0, on_sleep_done, d, NULL, &err))
		ck_abort_msg("cm_call_start: %s", err.msg);
}

/* ---- a thread stopped out of fuel mid-code (loop.wasm) ---------------- */

#define LOOP_TURN_FUEL 20000

static void crunch_start(live *v, const char *name, uint32_t n,
			 sleep_done *d)
{
	cm_func *f = cm_instance_export(v->inst, NULL, name);
	cm_val arg = cm_val_u32(n);
	cm_error err;

	ck_assert_ptr_nonnull(f);
	if (cm_call_start(v->s, f, &arg, 1, 0, on_sleep_done, d, NULL, &err))
		ck_abort_msg("cm_call_start: %s", err.msg);
}

/* Bounded turns until the store has nothing left to do; how many. */
static int turns_to_quiet(live *v, int most)
{
	cm_error err;
	int n = 0, rc;

	do {
		rc = cm_store_service_turn(v->s, LOOP_TURN_FUEL, &err);
		ck_assert_msg(rc >= 0, "turn: %s", err.msg);
		n++;
	} while (rc == 1 && n < most);
	ck_assert_int_eq(rc, 0);
	return n;
}

/*
 * Background work longer than a turn (it was refused "a thread stopped
 * out of fuel mid-code", so under durability commit no commit had an
 * image while such work ran): start-crunch returns at once and its
 * task crunches on; its thread is written where the fuel check stopped
 * it (a back-edge or a call of its loop, start-crunch's frame below),
 * with every slot of that frame.  Restored, the image is the same
 * bytes, and the thread goes on first and computes what the writer's
 * does; the store then runs new calls.  Snapshots at several stops
 * all restore right.  A host call stopped so is still refused (its
 * fuel budget and deadline would not survive), until it ends.
 */
START_TEST(test_stopped_out_of_fuel)
{
	cm_component *c = load_guest("loop/loop.wasm");
	live a, b;
	sleep_done d = {0}, e = {0}, f = {0};
	uint8_t *s1, *s2;
	size_t n1, n2;
	uint32_t want;
	cm_error err;

	live_open(&a, c);
	crunch_start(&a, "crunch", 200000, &f);
	ck_assert_int_eq(cm_store_service_turn(a.s, LOOP_TURN_FUEL, &err), 1);
	ck_assert(cm_store_stopped_mid_code(a.s));
	/* the host's call in flight, stopped so: written (it was refused),
	 * restored as a call in flight again that ends with the writer's
	 * value, to nobody */
	s1 = snap(&a, SHA_A, &n1);
	live_open(&b, c);
	if (cm_store_restore(b.s, SHA_A, s1, n1, &err))
		ck_abort_msg("restore of the call: %s", err.msg);
	ck_assert_uint_eq(cm_store_restored_calls(b.s), 1);
	ck_assert(cm_store_stopped_mid_code(b.s));
	s2 = snap(&b, SHA_A, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(s1, s2, n1);
	ck_assert_int_gt(turns_to_quiet(&b, 1000), 1);
	ck_assert_uint_eq(cm_store_restored_calls(b.s), 0);
	ck_assert_uint_eq(call(&b, NULL, "runs", NULL, 0).u.u, 1);
	want = (uint32_t)call(&b, NULL, "last", NULL, 0).u.u;
	free(s1);
	free(s2);
	live_close(&b);
	turns_to_quiet(&a, 1000);
	ck_assert_int_eq(f.n, 1);
	ck_assert_int_eq(f.outcome, CM_CALL_RETURNED);
	ck_assert_uint_eq(f.ns, want);
	free(snap(&a, SHA_A, &n1));

	crunch_start(&a, "start-crunch", 200000, &d);
	for (int stop = 0; stop < 4; stop++) {
		/* turns of odd and even fuel stop at the loop's call and
		 * at its back-edge */
		ck_assert_int_eq(cm_store_service_turn(
					 a.s, LOOP_TURN_FUEL + (uint64_t)stop,
					 &err),
				 1);
		ck_assert(cm_store_stopped_mid_code(a.s));
		s1 = snap(&a, SHA_A, &n1);

		live_open(&b, c);
		if (cm_store_restore(b.s, SHA_A, s1, n1, &err))
			ck_abort_msg("restore at stop %d: %s", stop, err.msg);
		ck_assert(cm_store_stopped_mid_code(b.s));
		/* it returned: background work, not a call in flight */
		ck_assert_int_eq(d.n, 1);
		ck_assert_uint_eq(cm_store_restored_calls(b.s), 0);
		s2 = snap(&b, SHA_A, &n2);
		ck_assert_uint_eq(n1, n2);
		ck_assert_mem_eq(s1, s2, n1);
		ck_assert_int_gt(turns_to_quiet(&b, 1000), 1);
		ck_assert(!cm_store_stopped_mid_code(b.s));
		ck_assert_uint_eq(call(&b, NULL, "runs", NULL, 0).u.u, 2);
		if (stop == 3) {
			/* and it runs new calls to the end */
			crunch_start(&b, "crunch", 200000, &e);
			turns_to_quiet(&b, 1000);
			ck_assert_int_eq(e.n, 1);
			ck_assert_int_eq(e.outcome, CM_CALL_RETURNED);
		}
		want = (uint32_t)call(&b, NULL, "last", NULL, 0).u.u;
		free(s1);
		free(s2);
		live_close(&b);
	}
	turns_to_quiet(&a, 1000);
	ck_assert_int_eq(d.n, 1);
	ck_assert_int_eq(d.outcome, CM_CALL_RETURNED);
	ck_assert_uint_eq(call(&a, NULL, "last", NULL, 0).u.u, want);
	ck_assert_uint_eq(f.ns, want);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/*
 * 2000 images of s1 with a bit flipped in the last 600 bytes (the
 * threads, their frames, the tail) and the checksum fixed, each
 * restored and, if it is, given up to 50 bounded turns: how many
 * restored (the rest were refused; none may crash).
 */
static int frame_flips(cm_component *c, const uint8_t *s1, size_t n1,
		       uint64_t rng)
{
	uint8_t *bad = malloc(n1);
	cm_error err;
	int ok = 0;
	live b;

	ck_assert_ptr_nonnull(bad);
	for (int i = 0; i < 2000; i++) {
		memcpy(bad, s1, n1);
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		bad[n1 - 8 - 1 - rng % (n1 < 608 ? n1 - 9 : 600)] ^=
			(uint8_t)(1u << (rng >> 60 & 7));
		fix_checksum(bad, n1);
		live_open(&b, c);
		if (cm_store_restore(b.s, SHA_A, bad, n1, &err) == 0) {
			ok++;
			for (int t = 0; t < 50; t++)
				if (cm_store_service_turn(b.s, LOOP_TURN_FUEL,
							  &err) != 1)
					break;
		}
		live_close(&b);
	}
	free(bad);
	return ok;
}

/*
 * A call in flight keeps its fuel budget across a restore (issue 22:
 * written, a call that an endless loop would keep busy came back with
 * none and ran for ever): crunch under a budget it cannot finish in,
 * imaged after a few turns, traps "all fuel consumed" in the writer;
 * restored, it is a call in flight again under what was left, and the
 * turn that spends it fails with "a call restored in flight: ..." (no
 * on_done: no one waits), after as many turns as the writer's took,
 * give or take one; the instance is poisoned.  With an on_done
 * (cm_call_set_done) the restored call reports its own trap instead,
 * and cm_call_cancel stops one (a deadline's end).
 */
START_TEST(test_call_budget_survives)
{
	cm_component *c = load_guest("loop/loop.wasm");
	cm_func *f;
	cm_val arg = cm_val_u32(100000000);
	live a, b;
	sleep_done d = {0}, e = {0};
	uint8_t *s1;
	size_t n1;
	int wturns = 0, rturns = 0, rc;
	cm_error err;

	live_open(&a, c);
	f = cm_instance_export(a.inst, NULL, "crunch");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(cm_call_start(a.s, f, &arg, 1, 10 * LOOP_TURN_FUEL,
				       on_sleep_done, &d, NULL, &err),
			 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(
			cm_store_service_turn(a.s, LOOP_TURN_FUEL, &err), 1);
	s1 = snap(&a, SHA_A, &n1);
	while (d.n == 0 && wturns < 100) {
		cm_store_service_turn(a.s, LOOP_TURN_FUEL, &err);
		wturns++;
	}
	ck_assert_int_eq(d.outcome, CM_CALL_TRAPPED);
	ck_assert_str_eq(d.msg, "wasm trap: all fuel consumed");

	/* no one waits: the turn reports it */
	live_open(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	ck_assert_uint_eq(cm_store_restored_calls(b.s), 1);
	do {
		rc = cm_store_service_turn(b.s, LOOP_TURN_FUEL, &err);
		rturns++;
	} while (rc == 1 && rturns < 100);
	ck_assert_int_eq(rc, -1);
	ck_assert_str_eq(err.msg, "a call restored in flight: wasm trap: "
				  "all fuel consumed");
	ck_assert_int_le(abs(rturns - wturns), 1);
	ck_assert_uint_eq(cm_store_restored_calls(b.s), 0);
	live_close(&b);

	/* an on_done hears it; cm_call_cancel stops one */
	live_open(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	ck_assert_ptr_null(cm_store_restored_call(b.s, 1));
	cm_call_set_done(cm_store_restored_call(b.s, 0), on_sleep_done, &e);
	while (e.n == 0 && rturns-- > -100)
		ck_assert_int_ge(
			cm_store_service_turn(b.s, LOOP_TURN_FUEL, &err), 0);
	ck_assert_int_eq(e.outcome, CM_CALL_TRAPPED);
	ck_assert_str_eq(e.msg, "wasm trap: all fuel consumed");
	live_close(&b);
	live_open(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	memset(&e, 0, sizeof e);
	cm_call_set_done(cm_store_restored_call(b.s, 0), on_sleep_done, &e);
	ck_assert_int_eq(cm_call_cancel(cm_store_restored_call(b.s, 0),
					"deadline exceeded"),
			 CM_CALL_TRAPPED);
	ck_assert_int_eq(e.n, 1);
	ck_assert_str_eq(e.msg, "deadline exceeded");
	ck_assert_uint_eq(cm_store_restored_calls(b.s), 0);
	live_close(&b);
	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/*
 * A forged stop: the image of a stopped thread with bits flipped in its
 * async sections (frames, code offsets, slots) and the checksum fixed:
 * refused, or a store whose turns run or trap, never worse (a code
 * offset must be one of the function's fuel checks, a frame's slots
 * its whole frame).
 */
START_TEST(test_stopped_out_of_fuel_forged)
{
	cm_component *c = load_guest("loop/loop.wasm");
	live a;
	sleep_done d = {0};
	uint8_t *s1;
	size_t n1;
	cm_error err;

	live_open(&a, c);
	crunch_start(&a, "start-crunch", 200000, &d);
	ck_assert_int_eq(cm_store_service_turn(a.s, LOOP_TURN_FUEL, &err), 1);
	s1 = snap(&a, SHA_A, &n1);
	ck_assert_int_gt(frame_flips(c, s1, n1, 0x2545f4914f6cdd1dull), 0);
	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/*
 * The image s1 of a crunch stopped at `stop`, restored into a fresh
 * store, written again byte for byte, run to its end: last(), after
 * exactly one crunch ended.
 */
static uint32_t restored_last(cm_component *c, const uint8_t *s1, size_t n1,
			      int stop)
{
	uint8_t *s2;
	size_t n2;
	uint32_t got;
	cm_error err;
	live b;

	live_open(&b, c);
	if (cm_store_restore(b.s, SHA_A, s1, n1, &err))
		ck_abort_msg("restore at stop %d: %s", stop, err.msg);
	s2 = snap(&b, SHA_A, &n2);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(s1, s2, n1);
	turns_to_quiet(&b, 100000);
	ck_assert_uint_eq(call(&b, NULL, "runs", NULL, 0).u.u, 1);
	got = (uint32_t)call(&b, NULL, "last", NULL, 0).u.u;
	free(s2);
	live_close(&b);
	return got;
}

/*
 * Frames that hold references (issue 22 point 1): $work-refs keeps the
 * functions it calls in locals ((ref null $t), (ref $t), funcref), one
 * on the operand stack below its calls and one as its loop's
 * parameter.  Stopped by turns of many sizes (at its calls, its
 * back-edges or an inner loop's), each image
 * restores, is written again byte for byte, and the restored store
 * ends with the writer's result.  Then 2000 forged flips of one image:
 * refused, or a store whose turns run or trap.
 */
START_TEST(test_refs_in_frames)
{
	cm_component *c = load_guest("loop/loop.wasm");
	live a;
	sleep_done d = {0};
	uint8_t *s1;
	size_t n1;
	uint32_t want = 0, got;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	int stopped = 0;
	cm_error err;

	live_open(&a, c);
	crunch_start(&a, "start-crunch-refs", 40000, &d);
	for (int stop = 0; stop < 24; stop++) {
		ck_assert_int_eq(cm_store_service_turn(
					 a.s, 997 + 61 * (uint64_t)stop, &err),
				 1);
		stopped += cm_store_stopped_mid_code(a.s);
		s1 = snap(&a, SHA_A, &n1);
		got = restored_last(c, s1, n1, stop);
		if (stop == 0)
			want = got;
		ck_assert_uint_eq(got, want);
		if (stop < 23) {
			free(s1);
			continue;
		}
		ck_assert_int_gt(frame_flips(c, s1, n1, rng), 0);
		free(s1);
	}
	/* it returned at once; most turns stopped it mid-code (the rest
	 * between a yield and its next turn) */
	ck_assert_int_eq(d.n, 1);
	ck_assert_int_gt(stopped, 12);
	turns_to_quiet(&a, 100000);
	ck_assert_uint_eq(call(&a, NULL, "last", NULL, 0).u.u, want);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/*
 * Exceptions held by suspended frames (issue 22 point 1; they were
 * refused "an exception held by a suspended frame"): $work-exn keeps an
 * $e and a $link in locals and one as its loop's parameter, which no
 * global or table holds, and every 16th round a legacy catch clause
 * yields and spins holding what it caught in a slot of its own.  The
 * heap walk takes the frames' exnref slots as roots, so each image
 * holds them (the $link and its $e, the parameter unless a call took
 * it, and 4 with a frame inside the clause); restored,
 * written again byte for byte, the store ends with the writer's result
 * (a lost or wrong exception would trap at its throw_ref); 2000 forged
 * flips of an image with a clause's exception: refused, or a store
 * whose turns run or trap.
 */
START_TEST(test_exceptions_in_frames)
{
	cm_component *c = load_guest("loop/loop.wasm");
	live a;
	sleep_done d = {0};
	uint8_t *s1, *forge = NULL;
	size_t n1, nforge = 0;
	uint32_t want = 0, got;
	int in_clause = 0;
	cm_error err;

	live_open(&a, c);
	crunch_start(&a, "start-crunch-exn", 6000, &d);
	for (int stop = 0; stop < 40; stop++) {
		uint32_t held;

		ck_assert_int_eq(cm_store_service_turn(
					 a.s, 997 + 61 * (uint64_t)stop, &err),
				 1);
		s1 = snap(&a, SHA_A, &n1);
		held = heap_objects(s1, n1);
		ck_assert_msg(held >= 2 && held <= 4, "stop %d: %u objects",
			      stop, held);
		got = restored_last(c, s1, n1, stop);
		if (stop == 0)
			want = got;
		ck_assert_uint_eq(got, want);
		if (held == 4 && forge == NULL) {
			forge = s1;
			nforge = n1;
		} else {
			free(s1);
		}
		in_clause += held == 4;
	}
	ck_assert_int_gt(in_clause, 0);
	ck_assert_int_gt(frame_flips(c, forge, nforge, 0x51afd7ed558ccdull), 0);
	free(forge);
	ck_assert_int_eq(d.n, 1);
	turns_to_quiet(&a, 100000);
	ck_assert_uint_eq(call(&a, NULL, "last", NULL, 0).u.u, want);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/*
 * A frame's callee swapped for another function (the fuzz target's find
 * of 2026-12: $work-exn, standing after a call to $make, which returns
 * an exnref, got a $payload frame above it, which returns an i32, and
 * threw the number as an exception).  Images of start-crunch-exn
 * stopped at many points give a pool of real frames (function, code
 * offset, base: each a place its function can stand); then in every
 * image each frame gets, in turn, each pooled place of another function
 * with as many slots.  A callee of another type than its caller's call
 * calls is refused with the reason; the rest restore and run, or are
 * refused, or trap: none may crash (the sanitizers' builds watch).
 */
static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

enum { NSTOPS = 40, MAXPLACES = 64 };

/* Where s1 holds a frame header of loop's core instance: its offset in
 * s1, or 0 past the last from `from` (a frame is u32 core instance 0,
 * u32 function index, u32 code offset, u32 base: loop.wat's functions
 * are 2 to 10, its frames small). */
static size_t next_frame(const uint8_t *s1, size_t n1, size_t from)
{
	for (size_t at = from; at + 16 + 9 <= n1; at++) {
		uint32_t fi = rd32(s1 + at + 4);

		if (rd32(s1 + at) == 0 && fi >= 2 && fi <= 10 &&
		    rd32(s1 + at + 8) <= 4096 && rd32(s1 + at + 12) <= 64)
			return at;
	}
	return 0;
}

START_TEST(test_callee_swapped)
{
	cm_component *c = load_guest("loop/loop.wasm");
	live a, b;
	sleep_done d = {0};
	uint8_t *imgs[NSTOPS], *bad;
	size_t ns[NSTOPS], maxn = 0;
	uint32_t places[MAXPLACES][3];
	int nplaces = 0, refused_type = 0, tried = 0;
	cm_error err;

	live_open(&a, c);
	crunch_start(&a, "start-crunch-exn", 6000, &d);
	for (int stop = 0; stop < NSTOPS; stop++) {
		ck_assert_int_eq(cm_store_service_turn(
					 a.s, 997 + 61 * (uint64_t)stop, &err),
				 1);
		imgs[stop] = snap(&a, SHA_A, &ns[stop]);
		maxn = ns[stop] > maxn ? ns[stop] : maxn;
		for (size_t at = next_frame(imgs[stop], ns[stop],
					    ns[stop] - 600);
		     at != 0; at = next_frame(imgs[stop], ns[stop], at + 1)) {
			int k;

			for (k = 0; k < nplaces; k++)
				if (memcmp(places[k], imgs[stop] + at + 4,
					   12) == 0)
					break;
			if (k == nplaces && nplaces < MAXPLACES)
				memcpy(places[nplaces++], imgs[stop] + at + 4,
				       12);
		}
	}
	bad = malloc(maxn);
	ck_assert_ptr_nonnull(bad);
	for (int stop = 0; stop < NSTOPS; stop++) {
		const uint8_t *s1 = imgs[stop];
		size_t n1 = ns[stop];

		for (size_t at = next_frame(s1, n1, n1 - 600); at != 0;
		     at = next_frame(s1, n1, at + 1))
			for (int k = 0; k < nplaces; k++) {
				if (memcmp(places[k], s1 + at + 4, 12) == 0 ||
				    places[k][2] != rd32(s1 + at + 12))
					continue;
				memcpy(bad, s1, n1);
				memcpy(bad + at + 4, places[k], 12);
				fix_checksum(bad, n1);
				live_open(&b, c);
				tried++;
				if (cm_store_restore(b.s, SHA_A, bad, n1,
						     &err) != 0)
					refused_type +=
						strstr(err.msg,
						       "its caller's call does "
						       "not call") != NULL;
				else
					for (int t = 0; t < 20; t++)
						if (cm_store_service_turn(
							    b.s, LOOP_TURN_FUEL,
							    &err) != 1)
							break;
				live_close(&b);
			}
		free(imgs[stop]);
	}
	free(bad);
	ck_assert_int_gt(tried, 0);
	ck_assert_int_gt(refused_type, 0);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/*
 * A store with the host's calls in flight is written (it was refused
 * "a call in flight"): one begun comes back as a task whose caller is
 * gone and goes on (its timer waits on, it finishes, nobody is told),
 * one still queued (no guest code ran) does not come back at all.  The
 * store that wrote it is not disturbed: its calls end as before.
 */
START_TEST(test_calls_in_flight)
{
	cm_component *c = load_guest("async/sleep.wasm");
	live a, b;
	sleep_done d1 = {0}, d2 = {0}, d3 = {0};
	uint8_t *s1, *s2;
	size_t n1, n2;
	cm_error err;

	live_open_timed(&a, c);
	sleep_start(&a, 500, &d1);
	ck_assert_int_ge(cm_store_service_turn(a.s, 0, &err), 0);
	ck_assert_uint_eq(cm_store_pending_host_calls(a.s), 1);
	sleep_start(&a, 300, &d2); /* queued: its turn has not come */
	s1 = snap(&a, SHA_A, &n1);

	/* the begun call's wait, not the queued call's; the same bytes:
	 * the queued call was never in the image */
	restore_waiting(&b, c, s1, n1);
	ck_assert_uint_eq(cm_store_restored_calls(b.s), 1);
	ck_assert_uint_eq(cm_store_restored_calls(a.s), 0);

	/* the writer's calls end as they would have */
	tick(&a, 5);
	ck_assert_int_eq(d1.n, 1);
	ck_assert_int_eq(d1.outcome, CM_CALL_RETURNED);
	ck_assert_uint_ge(d1.ns, 500000000ull);
	ck_assert_int_eq(d2.n, 1);
	ck_assert_int_eq(d2.outcome, CM_CALL_RETURNED);

	/* the restored task goes on: its wait fires, it returns to nobody
	 * and ends; the store runs new calls */
	tick(&b, 5);
	ck_assert_uint_eq(cm_store_restored_calls(b.s), 0);
	ck_assert_uint_eq(cm_store_pending_host_calls(b.s), 0);
	ck_assert_uint_eq(wasi_ctx_pending_waits(b.wasi), 0);
	sleep_start(&b, 100, &d3);
	tick(&b, 2);
	ck_assert_int_eq(d3.n, 1);
	ck_assert_int_eq(d3.outcome, CM_CALL_RETURNED);
	ck_assert_uint_ge(d3.ns, 100000000ull);
	/* no task of it is left: the store's image is a quiet one again */
	s2 = snap(&b, SHA_A, &n2);
	free(s2);
	live_close(&b);

	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/* Start export `name` of v (args), ending in d. */
static void start_call(live *v, const char *name, const cm_val *args,
		       uint32_t nargs, sleep_done *d)
{
	cm_func *f = cm_instance_export(v->inst, NULL, name);
	cm_error err;

	ck_assert_ptr_nonnull(f);
	if (cm_call_start(v->s, f, args, nargs, 0, on_sleep_done, d, NULL,
			  &err))
		ck_abort_msg("cm_call_start: %s", err.msg);
}

/*
 * A thread blocked in a host call (a sync-lowered wait-for) under frames
 * that hold references (waitrefs.wasm: a (ref $t) on the operand stack
 * across the wait, a (ref null $t) and a funcref in locals): written,
 * restored, written again byte for byte; the restored task wakes when
 * its wait fires, calls through those references and ends (a broken one
 * would trap and poison the instance), and the store runs new calls.
 */
START_TEST(test_refs_in_blocked_frames)
{
	cm_component *c = load_guest("async/waitrefs.wasm");
	live a, b;
	sleep_done d1 = {0}, d2 = {0};
	cm_val arg = cm_val_u32(500);
	uint8_t *s1;
	size_t n1;
	cm_error err;

	live_open_timed(&a, c);
	start_call(&a, "sleep-refs", &arg, 1, &d1);
	ck_assert_int_ge(cm_store_service_turn(a.s, 0, &err), 0);
	ck_assert_uint_eq(cm_store_pending_host_calls(a.s), 1);
	s1 = snap(&a, SHA_A, &n1);
	restore_waiting(&b, c, s1, n1);
	ck_assert_uint_eq(cm_store_restored_calls(b.s), 1);

	tick(&a, 6);
	ck_assert_int_eq(d1.n, 1);
	ck_assert_int_eq(d1.outcome, CM_CALL_RETURNED);
	ck_assert_uint_ge(d1.ns, 500000000ull);

	tick(&b, 6);
	ck_assert_uint_eq(cm_store_restored_calls(b.s), 0);
	ck_assert_uint_eq(cm_store_pending_host_calls(b.s), 0);
	arg = cm_val_u32(100);
	start_call(&b, "sleep-refs", &arg, 1, &d2);
	tick(&b, 2);
	ck_assert_int_eq(d2.n, 1);
	ck_assert_int_eq(d2.outcome, CM_CALL_RETURNED);
	ck_assert_uint_ge(d2.ns, 100000000ull);
	live_close(&b);
	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/*
 * A call still at its instance's entry gate (gate.wasm: `hold` keeps
 * backpressure up while it waits 300 ms) has run none of its code: the
 * store that comes back cancels it before it starts (else it would
 * start on a caller that cannot hand it arguments, and trap), so the
 * count stays 0 there, while `hold` goes on and lowers backpressure;
 * in the writer the call runs when the gate opens.
 */
START_TEST(test_call_at_the_gate)
{
	cm_component *c = load_guest("async/gate.wasm");
	cm_val ms = cm_val_u32(300);
	live a, b;
	sleep_done h1 = {0}, d1 = {0}, d2 = {0};
	uint8_t *s1;
	size_t n1;
	cm_error err;

	live_open_timed(&a, c);
	start_call(&a, "hold", &ms, 1, &h1);
	ck_assert_int_ge(cm_store_service_turn(a.s, 0, &err), 0);
	start_call(&a, "work", NULL, 0, &d1);
	ck_assert_int_ge(cm_store_service_turn(a.s, 0, &err), 0);
	ck_assert_msg(h1.n == 0 && d1.n == 0, "ended early: %s%s", h1.msg,
		      d1.msg);
	s1 = snap(&a, SHA_A, &n1);

	live_open_timed(&b, c);
	ck_assert_int_eq(cm_store_restore(b.s, SHA_A, s1, n1, &err), 0);
	/* hold goes on; work, cancelled at the gate, is resolved */
	ck_assert_uint_eq(cm_store_restored_calls(b.s), 1);
	tick(&b, 4);
	ck_assert_uint_eq(cm_store_pending_host_calls(b.s), 0);
	ck_assert_uint_eq(call(&b, NULL, "count", NULL, 0).u.u, 0);
	start_call(&b, "work", NULL, 0, &d2);
	ck_assert_int_ge(cm_store_service_turn(b.s, 0, &err), 0);
	ck_assert_msg(d2.n == 1 && d2.outcome == CM_CALL_RETURNED, "%s",
		      d2.msg);
	ck_assert_uint_eq(d2.ns, 1);
	live_close(&b);

	/* forged: refused, or sound (the restore's cancellation too) */
	ck_assert_int_gt(forged_flips(c, s1, n1, 2000, 0x9e3779b97f4a7c15ull,
				      400000000ull),
			 0);
	tick(&a, 4);
	ck_assert_msg(h1.n == 1 && h1.outcome == CM_CALL_RETURNED, "%s",
		      h1.msg);
	ck_assert_msg(d1.n == 1 && d1.outcome == CM_CALL_RETURNED, "%s",
		      d1.msg);
	ck_assert_uint_eq(d1.ns, 1);
	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("snapshot");
	TCase *tc = tcase_create("snapshot");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_counter_round_trip);
	tcase_add_test(tc, test_values_memory_round_trip);
	tcase_add_test(tc, test_calc_tables_round_trip);
	tcase_add_test(tc, test_host_ends_round_trip);
	tcase_add_test(tc, test_refused_versions_and_tags);
	tcase_add_test(tc, test_truncations_and_flips);
	tcase_add_test(tc, test_values_sampled_prefixes);
	tcase_add_test(tc, test_not_supported_yet);
	tcase_add_test(tc, test_externref_only_null);
	tcase_add_test(tc, test_exceptions_round_trip);
	tcase_add_test(tc, test_exceptions_refused);
	tcase_add_test(tc, test_ticker_round_trip);
	tcase_add_test(tc, test_ticker_truncations_and_flips);
	tcase_add_test(tc, test_park_settled_round_trip);
	tcase_add_test(tc, test_calls_in_flight);
	tcase_add_test(tc, test_stopped_out_of_fuel);
	tcase_add_test(tc, test_stopped_out_of_fuel_forged);
	tcase_add_test(tc, test_call_budget_survives);
	tcase_add_test(tc, test_refs_in_frames);
	tcase_add_test(tc, test_refs_in_blocked_frames);
	tcase_add_test(tc, test_callee_swapped);
	tcase_add_test(tc, test_exceptions_in_frames);
	tcase_add_test(tc, test_call_at_the_gate);
	suite_add_tcase(s, tc);
	return s;
}
