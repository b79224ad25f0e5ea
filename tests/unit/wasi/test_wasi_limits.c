/*
 * test_wasi_limits.c - the WASI 0.2 host's bounds on what one guest may
 * make the host allocate or hold (issue 18; docs/limits.md): a poll over
 * too many pollables, too many random bytes, a write longer than
 * check-write allows and more open files than WASI_MAX_OPEN_FILES each
 * end in the interface's error or a trap naming the limit, and the
 * calls just inside the limits still work.
 *
 * The guest (tests/guests/hostile/wasi.wat) re-exports the WASI imports
 * as they are, so the host calls each host function directly with
 * arguments no real guest would pass.  Every case runs in its own
 * forked process (Check's default), so a trap poisoning the instance
 * ends only that case.
 */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "component/component.h"
#include "run/instance.h"
#include "wasi/wasi.h"

#include "guest-load.h"
#include "testmain.h"

/* Values of the limits under test (their sources keep them private). */
#define POLL_MAX	    (1u << 16)
#define MAX_RANDOM_BYTES    (1u << 20)
#define WRITE_BUDGET	    (1u << 20)
#define MAX_OPEN_FILES	    1024u
#define INSUFFICIENT_MEMORY 22u /* wasi:filesystem error-code case */

typedef struct guest {
	char dir[128];
	cm_component *c;
	cm_linker *l;
	cm_store *s;
	wasi_ctx *ctx;
	cm_component_instance *inst;
} guest;

static void discard(void *env, int fd, const uint8_t *bytes, size_t len)
{
	(void)env;
	(void)fd;
	(void)bytes;
	(void)len;
}

/* A store with the guest, one preopen (an empty directory) as "/d". */
static void guest_new(guest *g)
{
	cm_error err;

	memset(g, 0, sizeof *g);
	snprintf(g->dir, sizeof g->dir, "%s/hostel-wasi-limits-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(g->dir));
	g->c = load_guest("hostile/wasi.wasm");
	g->l = cm_linker_new();
	g->ctx = wasi_ctx_new();
	ck_assert_ptr_nonnull(g->l);
	ck_assert_ptr_nonnull(g->ctx);
	wasi_ctx_set_output(g->ctx, discard, NULL);
	ck_assert_int_eq(wasi_ctx_preopen(g->ctx, g->dir, "/d"), 0);
	ck_assert_int_eq(wasi_add_to_linker(g->ctx, g->l), 0);
	g->s = cm_store_new(NULL);
	ck_assert_ptr_nonnull(g->s);
	if (cm_instantiate(g->s, g->c, g->l, &g->inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
}

static void guest_free(guest *g)
{
	cm_store_free(g->s);
	wasi_ctx_free(g->ctx);
	cm_linker_free(g->l);
	cm_component_free(g->c);
	rmdir(g->dir);
}

/* Call export `name`; its one result (if any) in *res (caller frees). */
static void call_ok(guest *g, const char *name, const cm_val *args,
		    uint32_t nargs, cm_val *res)
{
	cm_func *f = cm_instance_export(g->inst, NULL, name);
	uint32_t nres = 0;
	cm_error err;

	ck_assert_msg(f != NULL, "no export %s", name);
	*res = cm_val_bool(false);
	if (cm_invoke(g->s, f, args, nargs, res, &nres, &err))
		ck_abort_msg("%s: %s: %s", name, cm_error_kind_name(err.kind),
			     err.msg);
}

/* The call must trap with exactly the message `want`. */
static void call_traps(guest *g, const char *name, const cm_val *args,
		       uint32_t nargs, const char *want)
{
	cm_func *f = cm_instance_export(g->inst, NULL, name);
	cm_val res = cm_val_bool(false);
	uint32_t nres = 0;
	cm_error err;

	ck_assert_msg(f != NULL, "no export %s", name);
	memset(&err, 0, sizeof err);
	ck_assert_msg(cm_invoke(g->s, f, args, nargs, &res, &nres, &err) != 0,
		      "%s returned", name);
	ck_assert_msg(err.kind == CM_ERR_TRAP, "%s: %s: %s", name,
		      cm_error_kind_name(err.kind), err.msg);
	ck_assert_msg(strstr(err.msg, want) != NULL,
		      "%s trapped with \"%s\", expected \"%s\"", name, err.msg,
		      want);
}

/* A list of n borrows of the pollable `own`. */
static void borrows(cm_val *list, const cm_val *own, uint32_t n)
{
	ck_assert_int_eq(cm_val_seq(list, CM_LIST, n), 0);
	for (uint32_t i = 0; i < n; i++)
		list->u.list.elems[i] = cm_val_handle(
			CM_BORROW, own->u.handle.rt, own->u.handle.rep);
}

START_TEST(poll_past_the_limit_traps)
{
	cm_val d = cm_val_u64(0), p, in, ready;
	guest g;

	guest_new(&g);
	call_ok(&g, "subscribe-duration", &d, 1, &p);
	ck_assert_int_eq(p.kind, CM_OWN);
	/* at the limit: every entry is ready (a deadline of now) */
	borrows(&in, &p, POLL_MAX);
	call_ok(&g, "poll", &in, 1, &ready);
	ck_assert_uint_eq(ready.u.list.n, POLL_MAX);
	cm_val_free(&ready);
	cm_val_free(&in);
	borrows(&in, &p, POLL_MAX + 1);
	call_traps(&g, "poll", &in, 1,
		   "wasi: poll: too many pollables (limit 65536)");
	cm_val_free(&in);
	guest_free(&g);
}
END_TEST

START_TEST(random_bytes_past_the_limit_trap)
{
	cm_val len = cm_val_u64(MAX_RANDOM_BYTES), r;
	guest g;

	guest_new(&g);
	call_ok(&g, "get-random-bytes", &len, 1, &r);
	ck_assert_uint_eq(r.u.list.n, MAX_RANDOM_BYTES);
	cm_val_free(&r);
	call_ok(&g, "get-insecure-random-bytes", &len, 1, &r);
	ck_assert_uint_eq(r.u.list.n, MAX_RANDOM_BYTES);
	cm_val_free(&r);
	len = cm_val_u64(MAX_RANDOM_BYTES + 1ull);
	call_traps(&g, "get-random-bytes", &len, 1,
		   "wasi: get-random-bytes: too many bytes (limit 1048576)");
	guest_free(&g);
}
END_TEST

START_TEST(insecure_random_bytes_past_the_limit_trap)
{
	cm_val len = cm_val_u64(UINT64_MAX);
	guest g;

	guest_new(&g);
	call_traps(&g, "get-insecure-random-bytes", &len, 1,
		   "wasi: get-insecure-random-bytes: too many bytes "
		   "(limit 1048576)");
	guest_free(&g);
}
END_TEST

/* write(stdout, n zero bytes) */
static void write_args(guest *g, cm_val args[2], uint32_t n)
{
	cm_val out;

	call_ok(g, "get-stdout", NULL, 0, &out);
	ck_assert_int_eq(out.kind, CM_OWN);
	args[0] = cm_val_handle(CM_BORROW, out.u.handle.rt, out.u.handle.rep);
	ck_assert_int_eq(cm_val_bytes_alloc(&args[1], n), 0);
	if (n > 0)
		memset(args[1].u.list.bytes, 0, n);
}

START_TEST(write_past_check_write_traps)
{
	cm_val args[2], r;
	guest g;

	guest_new(&g);
	write_args(&g, args, WRITE_BUDGET);
	call_ok(&g, "write", args, 2, &r);
	ck_assert_int_eq(r.kind, CM_RESULT);
	ck_assert_uint_eq(r.u.variant.index, 0); /* ok */
	cm_val_free(&args[1]);
	write_args(&g, args, WRITE_BUDGET + 1);
	call_traps(&g, "write", args, 2,
		   "wasi: write: more than check-write allowed (limit "
		   "1048576)");
	cm_val_free(&args[1]);
	guest_free(&g);
}
END_TEST

/* get-directories: the one preopen's own descriptor. */
static cm_val preopen(guest *g)
{
	cm_val list, d;

	call_ok(g, "get-directories", NULL, 0, &list);
	ck_assert_uint_eq(list.u.list.n, 1);
	d = list.u.list.elems[0].u.list.elems[0];
	ck_assert_int_eq(d.kind, CM_OWN);
	cm_val_free(&list); /* the handle inside owns nothing host-side */
	return d;
}

/* open-at(dir, ., ".", directory, read): the result value. */
static void open_dot(guest *g, const cm_val *dir, cm_val *r)
{
	cm_val args[5];

	args[0] = cm_val_handle(CM_BORROW, dir->u.handle.rt, dir->u.handle.rep);
	args[1] = cm_val_flags(0);
	ck_assert_int_eq(cm_val_string(&args[2], ".", 1), 0);
	args[3] = cm_val_flags(0x2); /* directory */
	args[4] = cm_val_flags(0x1); /* read */
	call_ok(g, "open-at", args, 5, r);
	cm_vals_free(args, 5);
}

/*
 * Open files: descriptors from get-directories and open-at count alike
 * (the test never drops one: the handles stay with the host); the one
 * past the limit is open-at's error-code insufficient-memory, and
 * get-directories, which cannot fail, traps.
 */
START_TEST(open_files_past_the_limit_fail)
{
	cm_val dir, r;
	guest g;

	guest_new(&g);
	dir = preopen(&g);
	for (uint32_t i = 1; i < MAX_OPEN_FILES; i++) {
		open_dot(&g, &dir, &r);
		ck_assert_msg(r.u.variant.index == 0, "open %u failed", i);
		cm_val_free(&r);
	}
	open_dot(&g, &dir, &r);
	ck_assert_uint_eq(r.u.variant.index, 1); /* err */
	ck_assert_uint_eq(r.u.variant.payload->u.variant.index,
			  INSUFFICIENT_MEMORY);
	cm_val_free(&r);
	call_traps(&g, "get-directories", NULL, 0,
		   "wasi: get-directories: too many open files (limit "
		   "1024)");
	guest_free(&g);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("wasi_limits");
	TCase *t = tcase_create("wasi_limits");

	tcase_set_timeout(t, 60);
	tcase_add_test(t, poll_past_the_limit_traps);
	tcase_add_test(t, random_bytes_past_the_limit_trap);
	tcase_add_test(t, insecure_random_bytes_past_the_limit_trap);
	tcase_add_test(t, write_past_check_write_traps);
	tcase_add_test(t, open_files_past_the_limit_fail);
	suite_add_tcase(s, t);
	return s;
}
