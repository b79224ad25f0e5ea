/*
 * test_wasi_snapshot.c - WASI resources in store snapshots (issue 22
 * point 2; runtime/wasi/durable.c has the rules): a store holding WASI
 * 0.2 handles is snapshotted and restored into a new store and ctx, and
 * each resource comes back by its rule.
 *
 *  - calc (wasi-libc, the preview1 adapter) after log-now: its stdout
 *    stream comes back on the new ctx's output, under the same handle;
 *    without wasi_ctx_durable the snapshot is refused, naming the type.
 *  - files (tests/guests/wasi/files.c): a file open for writing keeps
 *    writing at its offset after a restore; deleted before the restore,
 *    the restore succeeds and the next write fails (the file is not
 *    made again); a preopen the new configuration lacks fails the
 *    restore with the reason; a directory stream goes on where it was;
 *    a pollable keeps the time it had left, an overdue one is ready.
 *  - A restored store re-snapshots to the same bytes (a virtual clock
 *    that stands still).
 *  - Truncations and bit flips (the checksum fixed up, so the flips
 *    reach the host resources' parsers) never crash.
 *  - js/strings (componentize-js, 12 MB) after log("x") snapshots,
 *    restores and answers greet.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "component/component.h"
#include "run/instance.h"
#include "run/snapshot.h"
#include "run/store.h"
#include "wasi/internal.h"
#include "wasi/wasi.h"
#include "wasm/snapshot.h"

#include "guest-load.h"
#include "export-call.h"
#include "testmain.h"

static const uint8_t SHA[32] = {0x5a, 0x22};

#define CALC  "hostel:calc/api@0.1.0"
#define FILES "hostel:files/api@0.1.0"
#define JS    "hostel:jsguest/api@0.1.0"

/* What a ctx's guest wrote to stdout and stderr. */
typedef struct sink {
	char buf[4096];
	size_t len;
} sink;

static void sink_write(void *env, int fd, const uint8_t *p, size_t n)
{
	sink *k = env;

	(void)fd;
	if (n > sizeof k->buf - 1 - k->len)
		n = sizeof k->buf - 1 - k->len;
	memcpy(k->buf + k->len, p, n);
	k->len += n;
	k->buf[k->len] = '\0';
}

/* A virtual clock: time moves only when a test moves it. */
static uint64_t vnow = 5000000000ull;

static uint64_t vclock_now(void *env)
{
	(void)env;
	return vnow;
}

static void vclock_wall(void *env, uint64_t *sec, uint32_t *nsec)
{
	(void)env;
	*sec = 1700000000u + vnow / 1000000000u;
	*nsec = (uint32_t)(vnow % 1000000000u);
}

static void vclock_sleep(void *env, uint64_t deadline)
{
	(void)env;
	if (deadline > vnow)
		vnow = deadline;
}

static const wasi_clock VCLOCK = {.now = vclock_now,
				  .wall = vclock_wall,
				  .sleep_until = vclock_sleep,
				  .resolution_ns = 1};

typedef struct live {
	cm_component *c;
	wasi_ctx *wasi;
	cm_linker *l;
	cm_store *s;
	cm_component_instance *inst;
	sink out;
} live;

/*
 * A store of c with a ctx on the virtual clock, its output captured,
 * host_path preopened as guest_path (NULL: none), made durable unless
 * `plain`.
 */
static void live_open_ex(live *v, cm_component *c, const char *host_path,
			 const char *guest_path, bool plain)
{
	cm_error err;

	memset(v, 0, sizeof *v);
	v->c = c;
	v->wasi = wasi_ctx_new();
	v->l = cm_linker_new();
	ck_assert_ptr_nonnull(v->wasi);
	ck_assert_ptr_nonnull(v->l);
	wasi_ctx_set_clock(v->wasi, &VCLOCK);
	wasi_ctx_set_output(v->wasi, sink_write, &v->out);
	if (host_path != NULL)
		ck_assert_int_eq(
			wasi_ctx_preopen(v->wasi, host_path, guest_path), 0);
	ck_assert_int_eq(wasi_add_to_linker(v->wasi, v->l), 0);
	v->s = cm_store_new(NULL);
	ck_assert_ptr_nonnull(v->s);
	if (!plain)
		ck_assert_int_eq(wasi_ctx_durable(v->wasi, v->s), 0);
	if (cm_instantiate(v->s, c, v->l, &v->inst, &err))
		ck_abort_msg("instantiate: %s", err.msg);
}

static void live_open(live *v, cm_component *c, const char *host_path)
{
	live_open_ex(v, c, host_path, host_path ? "/data" : NULL, false);
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

/* A call with one string argument (and one more value, or none). */
static cm_val call_s(live *v, const char *iface, const char *name,
		     const char *s, const cm_val *more)
{
	cm_val args[2], r;

	ck_assert_int_eq(cm_val_string(&args[0], s, strlen(s)), 0);
	if (more != NULL)
		args[1] = *more;
	r = call(v, iface, name, args, more ? 2 : 1);
	cm_val_free(&args[0]);
	return r;
}

static uint8_t *snap(live *v, size_t *len)
{
	uint8_t *out;
	cm_error err;

	if (cm_store_snapshot(v->s, SHA, &out, len, &err))
		ck_abort_msg("snapshot: %s", err.msg);
	return out;
}

static void restore_ok(live *v, const uint8_t *p, size_t n)
{
	cm_error err;

	if (cm_store_restore(v->s, SHA, p, n, &err))
		ck_abort_msg("restore: %s", err.msg);
}

static void same_bytes(const uint8_t *a, size_t na, const uint8_t *b,
		       size_t nb)
{
	ck_assert_uint_eq(na, nb);
	ck_assert_msg(memcmp(a, b, na) == 0,
		      "a re-snapshot differs from the snapshot it came from");
}

static void fix_checksum(uint8_t *p, size_t n)
{
	uint64_t h = wasm_snap_checksum(p, n - 8);

	for (int i = 0; i < 8; i++)
		p[n - 8 + i] = (uint8_t)(h >> (8 * i));
}

static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Where the HANDLES section's payload (tag 4) is in snapshot p. */
static size_t handles_at(const uint8_t *p, size_t n, size_t *len)
{
	size_t at = 48; /* the header */

	while (at + 12 <= n) {
		uint32_t tag = (uint32_t)le(p + at, 4);
		uint64_t l = le(p + at + 4, 8);

		if (tag == 4) {
			*len = (size_t)l;
			return at + 12;
		}
		ck_assert_uint_ne(tag, 0);
		at += 12 + (size_t)l;
	}
	ck_abort_msg("no handles section");
	return 0;
}

/* The number of host resources the snapshot lists. */
static uint32_t host_resources(const uint8_t *p, size_t n)
{
	size_t len, at = handles_at(p, n, &len);

	ck_assert_uint_ge(len, 4);
	return (uint32_t)le(p + at, 4);
}

/*
 * Restore every sampled prefix of p (refused) and `rounds` copies with
 * 1 to 3 bits flipped in its HANDLES section, most in the host
 * resources at its start, every other one with the checksum fixed up;
 * after one that restores, `after` runs a call that may trap.  Nothing
 * may crash (the sanitizer and valgrind builds run this too).
 */
static void flips(cm_component *c, const char *host_path, const uint8_t *p,
		  size_t n, int rounds, void (*after)(live *v))
{
	uint8_t *bad = malloc(n);
	uint64_t rng = 0x2545f4914f6cdd1dull;
	size_t hlen, hat = handles_at(p, n, &hlen);
	size_t focus = hlen < 2048 ? hlen : 2048;
	cm_error err;
	live b;
	int restored = 0;

	ck_assert_ptr_nonnull(bad);
	live_open(&b, c, host_path);
	for (size_t k = 0; k < n; k += k < hat + hlen && k + 64 > hat ? 1 : 4093)
		ck_assert_int_ne(cm_store_restore(b.s, SHA, p, k, &err), 0);
	live_close(&b);
	for (int i = 0; i < rounds; i++) {
		int nflips = 1 + (int)(rng % 3);

		memcpy(bad, p, n);
		for (int f = 0; f < nflips; f++) {
			size_t off;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			off = hat + (size_t)(rng % (i % 4 ? focus : hlen));
			bad[off] ^= (uint8_t)(1u << (rng >> 60 & 7));
		}
		if (!memcmp(bad, p, n))
			continue;
		live_open(&b, c, host_path);
		if (i % 2 == 0) {
			ck_assert_int_ne(cm_store_restore(b.s, SHA, bad, n, &err),
					 0);
			ck_assert_int_eq(err.kind, CM_ERR_VALUE);
		} else {
			fix_checksum(bad, n);
			if (cm_store_restore(b.s, SHA, bad, n, &err) == 0) {
				restored++;
				after(&b);
			} else {
				ck_assert(err.kind == CM_ERR_VALUE ||
					  err.kind == CM_ERR_NOMEM);
			}
		}
		live_close(&b);
	}
	fprintf(stderr, "flips: %d of %d restored\n", restored, rounds);
	free(bad);
}

/* ---- calc: stdout --------------------------------------------------- */

START_TEST(test_calc_stdout_round_trip)
{
	cm_component *c = load_guest("wasi/calc.component.wasm");
	live a, b;
	uint8_t *s1, *s2;
	size_t n1, n2;
	cm_val r;

	live_open(&a, c, NULL);
	r = call_s(&a, CALC, "log-now", "one", NULL);
	ck_assert_str_eq(a.out.buf, "log: one\n");
	s1 = snap(&a, &n1);
	/* the adapter keeps its stdout stream: a host resource */
	ck_assert_uint_ge(host_resources(s1, n1), 1);

	live_open(&b, c, NULL);
	restore_ok(&b, s1, n1);
	ck_assert_uint_eq(cm_store_handle_count(b.s),
			  cm_store_handle_count(a.s));
	s2 = snap(&b, &n2);
	same_bytes(s1, n1, s2, n2);
	free(s2);
	/* the same handle, on the new store's output: the adapter calls
	 * no get-stdout again (a stale handle would trap) */
	r = call_s(&b, CALC, "log-now", "two", NULL);
	ck_assert_str_eq(b.out.buf, "log: two\n");
	ck_assert_str_eq(a.out.buf, "log: one\n");
	ck_assert_uint_eq(cm_store_handle_count(b.s),
			  cm_store_handle_count(a.s));
	/* and the restored store snapshots again, resources and all */
	s2 = snap(&b, &n2);
	free(s2);
	(void)r;
	free(s1);
	live_close(&a);
	live_close(&b);
	cm_component_free(c);
}
END_TEST

/* Without wasi_ctx_durable the runtime knows nothing of WASI's types. */
START_TEST(test_calc_unregistered_refused)
{
	cm_component *c = load_guest("wasi/calc.component.wasm");
	uint8_t *out = NULL;
	size_t n;
	cm_error err;
	live a;

	live_open_ex(&a, c, NULL, NULL, true);
	call_s(&a, CALC, "log-now", "one", NULL);
	ck_assert_int_ne(cm_store_snapshot(a.s, SHA, &out, &n, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_UNSUPPORTED);
	/* the adapter's first handle: its stdin stream */
	ck_assert_str_eq(err.msg, "not supported yet: a handle of host "
				  "resource type input-stream (component "
				  "instance 0, handle 1)");
	ck_assert_ptr_null(out);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

static void calc_after(live *v)
{
	cm_func *f = cm_instance_export(v->inst, CALC, "log-now");
	cm_val arg, res[1];
	uint32_t nres = 0;
	cm_error err;

	ck_assert_int_eq(cm_val_string(&arg, "x", 1), 0);
	if (cm_invoke(v->s, f, &arg, 1, res, &nres, &err) == 0 && nres)
		cm_val_free(&res[0]);
	cm_val_free(&arg);
}

START_TEST(test_calc_stdout_flips)
{
	cm_component *c = load_guest("wasi/calc.component.wasm");
	uint8_t *s1;
	size_t n1;
	live a;

	live_open(&a, c, NULL);
	call_s(&a, CALC, "log-now", "one", NULL);
	s1 = snap(&a, &n1);
	flips(c, NULL, s1, n1, 600, calc_after);
	free(s1);
	live_close(&a);
	cm_component_free(c);
}
END_TEST

/* ---- files: an open file ------------------------------------------------ */

static char *tmpdir(void)
{
	char *d = strdup("/tmp/test-wasi-snapshot.XXXXXX");

	ck_assert_ptr_nonnull(d);
	ck_assert_ptr_nonnull(mkdtemp(d));
	return d;
}

static void rmtree(const char *d)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
	ck_assert_int_eq(system(cmd), 0);
}

static char *slurp(const char *dir, const char *name)
{
	char path[512];
	static char buf[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "no %s", path);
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static int32_t s32(cm_val v)
{
	return (int32_t)v.u.s;
}

static int32_t files_open(live *v, const char *path, bool append)
{
	cm_val b = cm_val_bool(append);

	return s32(call_s(v, FILES, "open-log", path, &b));
}

static int32_t files_write(live *v, const char *text)
{
	return s32(call_s(v, FILES, "write-log", text, NULL));
}

START_TEST(test_file_round_trip)
{
	cm_component *c = load_guest("wasi/files.component.wasm");
	char *d = tmpdir();
	live a, b;
	uint8_t *s1, *s2;
	size_t n1, n2;

	live_open(&a, c, d);
	ck_assert_int_eq(files_open(&a, "/data/log.txt", false), 0);
	ck_assert_int_eq(files_write(&a, "hello "), 0);
	s1 = snap(&a, &n1);
	/* the preopen, the file's descriptor, the stream on it */
	ck_assert_uint_ge(host_resources(s1, n1), 2);
	live_close(&a);

	live_open(&b, c, d);
	restore_ok(&b, s1, n1);
	s2 = snap(&b, &n2);
	same_bytes(s1, n1, s2, n2);
	free(s2);
	ck_assert_int_eq(files_write(&b, "world"), 0);
	ck_assert_int_eq(call(&b, FILES, "tell-log", NULL, 0).u.s, 11);
	ck_assert_str_eq(slurp(d, "log.txt"), "hello world");
	/* the restored store's files are its own: a new one opens too */
	ck_assert_int_eq(files_open(&b, "/data/two.txt", false), 0);
	ck_assert_int_eq(files_write(&b, "2"), 0);
	ck_assert_int_eq(s32(call(&b, FILES, "close-log", NULL, 0)), 0);
	ck_assert_str_eq(slurp(d, "two.txt"), "2");
	live_close(&b);

	/* append mode: the stream writes at the end, wherever that is */
	live_open(&a, c, d);
	ck_assert_int_eq(files_open(&a, "/data/log.txt", true), 0);
	ck_assert_int_eq(files_write(&a, "!"), 0);
	free(s1);
	s1 = snap(&a, &n1);
	live_close(&a);
	live_open(&b, c, d);
	restore_ok(&b, s1, n1);
	ck_assert_int_eq(files_write(&b, "?"), 0);
	ck_assert_str_eq(slurp(d, "log.txt"), "hello world!?");
	live_close(&b);

	free(s1);
	rmtree(d);
	free(d);
	cm_component_free(c);
}
END_TEST

START_TEST(test_file_vanished)
{
	cm_component *c = load_guest("wasi/files.component.wasm");
	char *d = tmpdir(), path[512];
	live a, b;
	uint8_t *s1, *s2;
	size_t n1, n2;
	struct stat st;
	int32_t rc;

	live_open(&a, c, d);
	ck_assert_int_eq(files_open(&a, "/data/gone.txt", false), 0);
	ck_assert_int_eq(files_write(&a, "abc"), 0);
	s1 = snap(&a, &n1);
	live_close(&a);
	snprintf(path, sizeof path, "%s/gone.txt", d);
	ck_assert_int_eq(unlink(path), 0);

	/* not a restore failure: the handle fails on its next use */
	live_open(&b, c, d);
	restore_ok(&b, s1, n1);
	s2 = snap(&b, &n2);
	same_bytes(s1, n1, s2, n2); /* a lost handle keeps its origin */
	free(s2);
	rc = files_write(&b, "x");
	ck_assert_int_ne(rc, 0);
	/* and the file is not made again behind the guest's back */
	ck_assert_int_ne(stat(path, &st), 0);
	/* the store goes on: other files open */
	ck_assert_int_eq(files_open(&b, "/data/new.txt", false), 0);
	ck_assert_int_eq(files_write(&b, "fine"), 0);
	ck_assert_str_eq(slurp(d, "new.txt"), "fine");
	live_close(&b);

	free(s1);
	rmtree(d);
	free(d);
	cm_component_free(c);
}
END_TEST

START_TEST(test_preopen_missing)
{
	cm_component *c = load_guest("wasi/files.component.wasm");
	char *d = tmpdir();
	live a, b;
	uint8_t *s1;
	size_t n1;
	cm_error err;

	live_open(&a, c, d);
	ck_assert_int_eq(files_open(&a, "/data/log.txt", false), 0);
	s1 = snap(&a, &n1);
	live_close(&a);

	/* no preopen at all */
	live_open(&b, c, NULL);
	ck_assert_int_ne(cm_store_restore(b.s, SHA, s1, n1, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_VALUE);
	ck_assert_str_eq(err.msg, "host resource "
				  "wasi:filesystem/types@0.2#descriptor: the "
				  "preopen \"/data\" is not in this "
				  "configuration");
	live_close(&b);
	/* the same directory under another guest path */
	live_open_ex(&b, c, d, "/elsewhere", false);
	ck_assert_int_ne(cm_store_restore(b.s, SHA, s1, n1, &err), 0);
	ck_assert_ptr_nonnull(strstr(err.msg, "\"/data\""));
	live_close(&b);
	/* another directory under the same guest path: by guest path, so
	 * it restores, and the file (not there) fails on its next use */
	{
		char *e = tmpdir();

		live_open(&b, c, e);
		restore_ok(&b, s1, n1);
		ck_assert_int_ne(files_write(&b, "x"), 0);
		live_close(&b);
		rmtree(e);
		free(e);
	}
	free(s1);
	rmtree(d);
	free(d);
	cm_component_free(c);
}
END_TEST

/* The names next-entry returns until the end, joined by '/'. */
static void rest_of_dir(live *v, char *out, size_t cap)
{
	size_t len = 0;

	out[0] = '\0';
	for (;;) {
		cm_val r = call(v, FILES, "next-entry", NULL, 0);
		size_t n = r.u.str.len;

		ck_assert_msg(n == 0 || r.u.str.ptr[0] != '!',
			      "readdir failed: %.*s", (int)n,
			      (const char *)r.u.str.ptr);
		if (n == 0) {
			cm_val_free(&r);
			return;
		}
		ck_assert_uint_lt(len + n + 1, cap);
		memcpy(out + len, r.u.str.ptr, n);
		len += n;
		out[len++] = '/';
		out[len] = '\0';
		cm_val_free(&r);
	}
}

START_TEST(test_dir_stream_position)
{
	cm_component *c = load_guest("wasi/files.component.wasm");
	char *d = tmpdir(), path[512];
	static char rest_a[65536], rest_b[65536];
	live a, b;
	uint8_t *s1, *s2;
	size_t n1, n2;
	int seen = 0;

	/* more entries than one fd_readdir buffer of wasi-libc holds, so
	 * the adapter keeps its directory-entry-stream between calls */
	for (int i = 0; i < 300; i++) {
		FILE *f;

		snprintf(path, sizeof path,
			 "%s/entry-with-a-longish-name-%03d", d, i);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fclose(f);
	}
	live_open(&a, c, d);
	ck_assert_int_eq(s32(call_s(&a, FILES, "open-dir", "/data", NULL)),
			 0);
	for (int i = 0; i < 150; i++) {
		cm_val r = call(&a, FILES, "next-entry", NULL, 0);

		ck_assert_uint_gt(r.u.str.len, 0);
		cm_val_free(&r);
	}
	s1 = snap(&a, &n1);
	rest_of_dir(&a, rest_a, sizeof rest_a);
	live_close(&a);

	live_open(&b, c, d);
	restore_ok(&b, s1, n1);
	s2 = snap(&b, &n2);
	same_bytes(s1, n1, s2, n2);
	free(s2);
	rest_of_dir(&b, rest_b, sizeof rest_b);
	ck_assert_str_eq(rest_b, rest_a);
	for (const char *p = rest_b; *p; p++)
		seen += *p == '/';
	ck_assert_int_eq(seen, 150);
	live_close(&b);

	free(s1);
	rmtree(d);
	free(d);
	cm_component_free(c);
}
END_TEST

START_TEST(test_timer_pollable)
{
	cm_component *c = load_guest("wasi/files.component.wasm");
	cm_val ms = cm_val_u32(100);
	live a, b;
	uint8_t *s1, *s2;
	size_t n1, n2;

	live_open(&a, c, NULL);
	call(&a, FILES, "keep-timer", &ms, 1);
	ck_assert(!call(&a, FILES, "timer-ready", NULL, 0).u.b);
	vnow += 40000000u; /* 40 of its 100 ms pass */
	s1 = snap(&a, &n1);
	live_close(&a);

	/* a new process: the monotonic clock is elsewhere */
	vnow += 7000000000ull;
	live_open(&b, c, NULL);
	restore_ok(&b, s1, n1);
	s2 = snap(&b, &n2);
	same_bytes(s1, n1, s2, n2);
	free(s2);
	ck_assert(!call(&b, FILES, "timer-ready", NULL, 0).u.b);
	vnow += 59000000u;
	ck_assert(!call(&b, FILES, "timer-ready", NULL, 0).u.b);
	vnow += 1000000u;
	ck_assert(call(&b, FILES, "timer-ready", NULL, 0).u.b);
	free(s1);

	/* overdue when snapshotted: ready at once */
	s1 = snap(&b, &n1);
	live_close(&b);
	vnow = 1000; /* a clock far behind the old one */
	live_open(&b, c, NULL);
	restore_ok(&b, s1, n1);
	ck_assert(call(&b, FILES, "timer-ready", NULL, 0).u.b);
	call(&b, FILES, "drop-timer", NULL, 0);
	live_close(&b);
	free(s1);
	cm_component_free(c);
}
END_TEST

/* A descriptor with no origin to open it by is refused, precisely. */
START_TEST(test_unknown_origin_refused)
{
	cm_component *c = load_guest("wasi/files.component.wasm");
	char *d = tmpdir();
	uint8_t *out = NULL;
	size_t n;
	cm_error err;
	live a;
	int hit = 0;

	live_open(&a, c, d);
	ck_assert_int_eq(files_open(&a, "/data/log.txt", false), 0);
	/* as open-at leaves one whose joined path would be too long */
	for (uint32_t i = 1; i < a.wasi->nobjs; i++)
		if (a.wasi->objs[i].kind == WOBJ_DESCRIPTOR &&
		    a.wasi->objs[i].origin.path != NULL) {
			free(a.wasi->objs[i].origin.path);
			a.wasi->objs[i].origin =
				(wasi_origin){.known = false};
			hit++;
		}
	ck_assert_int_eq(hit, 1);
	ck_assert_int_ne(cm_store_snapshot(a.s, SHA, &out, &n, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_UNSUPPORTED);
	ck_assert_str_eq(err.msg, "not supported yet: a wasi:filesystem "
				  "descriptor opened by a path of more than "
				  "4096 bytes");
	ck_assert_ptr_null(out);
	live_close(&a);
	rmtree(d);
	free(d);
	cm_component_free(c);
}
END_TEST

static void files_after(live *v)
{
	static const char *const fns[] = {"write-log", "next-entry",
					  "timer-ready", "tell-log"};

	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
		cm_func *f = cm_instance_export(v->inst, FILES, fns[i]);
		cm_val arg, res[1];
		uint32_t nres = 0;
		cm_error err;
		bool s = i == 0;

		if (s)
			ck_assert_int_eq(cm_val_string(&arg, "y", 1), 0);
		if (cm_invoke(v->s, f, &arg, s ? 1 : 0, res, &nres, &err) ==
			    0 &&
		    nres)
			cm_val_free(&res[0]);
		if (s)
			cm_val_free(&arg);
	}
}

START_TEST(test_files_flips)
{
	cm_component *c = load_guest("wasi/files.component.wasm");
	char *d = tmpdir();
	cm_val ms = cm_val_u32(100);
	uint8_t *s1;
	size_t n1;
	live a;

	for (int i = 0; i < 40; i++) {
		char path[512];
		FILE *f;

		snprintf(path, sizeof path, "%s/f%02d", d, i);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fclose(f);
	}
	live_open(&a, c, d);
	ck_assert_int_eq(files_open(&a, "/data/log.txt", false), 0);
	ck_assert_int_eq(files_write(&a, "abc"), 0);
	ck_assert_int_eq(s32(call_s(&a, FILES, "open-dir", "/data", NULL)),
			 0);
	{
		cm_val r = call(&a, FILES, "next-entry", NULL, 0);

		cm_val_free(&r);
	}
	call(&a, FILES, "keep-timer", &ms, 1);
	s1 = snap(&a, &n1);
	ck_assert_uint_ge(host_resources(s1, n1), 4);
	flips(c, d, s1, n1, 600, files_after);
	free(s1);
	live_close(&a);
	rmtree(d);
	free(d);
	cm_component_free(c);
}
END_TEST

/* ---- the componentize-js guest --------------------------------------- */

START_TEST(test_js_strings_after_log)
{
	cm_component *c = load_guest("js/strings.component.wasm");
	live a, b;
	uint8_t *s1, *s2;
	size_t n1, n2;
	cm_val r;

	live_open(&a, c, NULL);
	r = call_s(&a, JS, "log", "x", NULL);
	ck_assert_uint_eq(r.u.u, 1);
	ck_assert_str_eq(a.out.buf, "log: x\n");
	s1 = snap(&a, &n1);
	ck_assert_uint_ge(host_resources(s1, n1), 1);
	live_close(&a);

	live_open(&b, c, NULL);
	restore_ok(&b, s1, n1);
	s2 = snap(&b, &n2);
	same_bytes(s1, n1, s2, n2);
	free(s2);
	r = call_s(&b, JS, "greet", "snapshot", NULL);
	ck_assert_uint_eq(r.u.str.len, 16);
	ck_assert_mem_eq(r.u.str.ptr, "hello, snapshot!", 16);
	cm_val_free(&r);
	r = call_s(&b, JS, "log", "again", NULL);
	ck_assert_str_eq(b.out.buf, "log: again\n");
	live_close(&b);
	free(s1);
	cm_component_free(c);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("wasi_snapshot");
	TCase *tc = tcase_create("wasi_snapshot");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_calc_stdout_round_trip);
	tcase_add_test(tc, test_calc_unregistered_refused);
	tcase_add_test(tc, test_calc_stdout_flips);
	tcase_add_test(tc, test_file_round_trip);
	tcase_add_test(tc, test_file_vanished);
	tcase_add_test(tc, test_preopen_missing);
	tcase_add_test(tc, test_dir_stream_position);
	tcase_add_test(tc, test_timer_pollable);
	tcase_add_test(tc, test_unknown_origin_refused);
	tcase_add_test(tc, test_files_flips);
	tcase_add_test(tc, test_js_strings_after_log);
	suite_add_tcase(s, tc);
	return s;
}
