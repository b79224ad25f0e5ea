/*
 * fuzz_restore.c - libFuzzer target over store restore
 * (runtime/run/snapshot.h, issue 22 point 7): corrupted and truncated
 * snapshots and deltas are refused, never a crash, and a store that
 * accepted one still runs (its calls may trap; nothing may crash).
 *
 * Input: a mode byte, then what the mode reads.
 *   bits 0-1  0: the rest is a whole snapshot, restored as it is (the
 *                checksum stands in the way: the parser's first line);
 *             1: the rest patches a valid full snapshot;
 *             2: the rest patches a valid delta, restored over the full
 *                snapshot it was written against;
 *             3: the rest patches the delta (bit 5: the full snapshot),
 *                then the two are folded (cm_snapshot_fold) and a fold
 *                that succeeds is restored into a fresh store;
 *   bits 2-3  the guest: 0 tests/guests/values (a memory that grew,
 *             mutable globals), 1 tests/guests/wasi/calc (wasi-libc:
 *             tables of function references, host functions; after
 *             log-now its WASI stdio streams, host resources), 2
 *             tests/guests/ticker (live async state: a task parked on
 *             a clock wait, its thread, waitable set and subtask, the
 *             pending host call, on a virtual clock), 3
 *             tests/guests/async/gate (the host's calls in flight: one
 *             waiting on a clock with backpressure up, one at the
 *             entry gate, which the restore cancels); with bit 6 set,
 *             4 tests/guests/exn (live exceptions: a chain of them in
 *             a global, each holding the one before, others in a
 *             table, one carrying a funcref), 5 tests/guests/loop
 *             (background work longer than a turn, stopped out of fuel
 *             mid-code: its frames at a loop's back-edge or call), 6
 *             the same guest's start-crunch-exn (frames that hold
 *             exceptions no global holds: written as heap objects), 7
 *             tests/guests/wasi/p3stdio (a WASI 0.3 stdout stream held
 *             open between calls: ends the host holds, described by
 *             the WASI layer; a future of the guest's own), with bit 7
 *             set, 8 tests/guests/wasi/p3files (a 0.3 file stream and
 *             a directory stream kept open, by origin and offset, over
 *             a preopen of a few files made at start);
 *             numbers past
 *             the last guest wrap around;
 *   bit 7     the guest's bit 3 (above)
 *   bit 4     keep the checksum as the patches leave it (else it is
 *             fixed up, so the patches reach the sections' parsers).
 * A patch input: a little-endian u16 of bytes to cut from the end, then
 * patches of (u16 offset, u8 length n, n bytes xored in at the offset,
 * wrapping around the snapshot).
 *
 * The valid snapshots are made once: each guest after a few calls (its
 * full snapshot with a base), then one more call (the delta).  After a
 * restore that succeeds, the store runs two calls under a fuel bound.
 *
 * Contract: any input may be refused; nothing may crash, leak or trip a
 * sanitizer.  Built only with --enable-fuzzing (clang); replayed by
 * `make check` (replay_restore).
 */
#include <dirent.h>
#include <stdint.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef HOSTEL_TOP_SRCDIR
#define HOSTEL_TOP_SRCDIR "."
#endif

static const uint8_t SHA[32] = {0xf0, 0x22};

enum { MAX_PAGES = 64, CALL_FUEL = 5000000 };

typedef struct live {
	wasi_ctx *wasi;
	cm_linker *l;
	cm_store *s;
	cm_component_instance *inst;
} live;

typedef struct guest {
	const char *path;
	cm_component *c;
	uint8_t *full, *delta;
	size_t nfull, ndelta;
} guest;

enum {
	G_VALUES,
	G_CALC,
	G_TICKER,
	G_GATE,
	G_EXN,
	G_LOOP,
	G_LOOP_EXN,
	G_P3STDIO,
	G_P3FILES,
	NGUESTS
};

/* loop's turns: its crunch takes about 2 fuel a round */
enum { LOOP_TURN_FUEL = 3001, LOOP_ROUNDS = 20000 };

static guest guests[NGUESTS] = {
	{.path = "tests/guests/values/values.wasm"},
	{.path = "tests/guests/wasi/calc.component.wasm"},
	{.path = "tests/guests/ticker/ticker.wasm"},
	{.path = "tests/guests/async/gate.wasm"},
	{.path = "tests/guests/exn/exn.wasm"},
	{.path = "tests/guests/loop/loop.wasm"},
	{.path = "tests/guests/loop/loop.wasm"},
	{.path = "tests/guests/wasi/p3stdio.wasm"},
	{.path = "tests/guests/wasi/p3files.wasm"},
};

/* p3files' preopen: a directory of a few files, made once */
static char preopen_dir[64];

/* The ticker's clock: it moves only when the target moves it. */
/* wasi_clock_virtual: it moves only when the code here moves it */
static wasi_vclock vc = {.mono_ns = 1000000000ull,
			 .wall_ns = 1000000000ull};

static const wasi_clock *vclock(void)
{
	static wasi_clock clk;

	if (clk.now == NULL)
		wasi_clock_virtual(&clk, &vc);
	return &clk;
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "fuzz_restore: %s: %s\n", what, why);
	abort();
}

static cm_component *load(const char *rel)
{
	const char *src = getenv("HOSTEL_SRCDIR");
	char path[2048];
	cm_component *c = NULL;
	wasm_error err;
	uint8_t *bytes;
	FILE *f;
	long n;

	snprintf(path, sizeof path, "%s/%s", src ? src : HOSTEL_TOP_SRCDIR,
		 rel);
	f = fopen(path, "rb");
	if (!f)
		die(path, "cannot open");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	bytes = malloc(n > 0 ? (size_t)n : 1);
	if (!bytes || fread(bytes, 1, (size_t)n, f) != (size_t)n)
		die(path, "cannot read");
	fclose(f);
	if (cm_component_load(bytes, (size_t)n, &c, &err))
		die(path, err.msg);
	free(bytes);
	return c;
}

static bool live_open(live *v, cm_component *c, bool preopen)
{
	cm_store_config cfg = {
		.limits = {.max_memory_pages = MAX_PAGES,
			   .max_table_elems = 4096,
			   .start_fuel = CALL_FUEL},
	};
	cm_error err;

	memset(v, 0, sizeof *v);
	v->wasi = wasi_ctx_new();
	v->l = cm_linker_new();
	if (!v->wasi || !v->l || wasi_add_to_linker(v->wasi, v->l))
		die("linker", "out of memory");
	/* calc's log-now writes nowhere; its stdio streams are host
	 * resources in the snapshots, made again by the WASI layer */
	wasi_ctx_set_stdio(v->wasi, -1, -1, -1);
	if (preopen && wasi_ctx_preopen(v->wasi, preopen_dir, "/"))
		die(preopen_dir, "cannot preopen");
	v->s = cm_store_new(&cfg);
	if (!v->s || wasi_ctx_durable(v->wasi, v->s))
		die("store", "out of memory");
	wasi_ctx_set_clock(v->wasi, vclock());
	return cm_instantiate(v->s, c, v->l, &v->inst, &err) == 0;
}

static void live_close(live *v)
{
	cm_store_free(v->s);
	wasi_ctx_free(v->wasi);
	cm_linker_free(v->l);
}

/* Call an export with string or u32 arguments; any outcome is fine. */
static int call(live *v, const char *iface, const char *name, cm_val *args,
		uint32_t nargs)
{
	cm_func *f = cm_instance_export(v->inst, iface, name);
	cm_val res[1];
	uint32_t nres = 0;
	cm_error err;
	int rc;

	if (!f)
		die(name, "no such export");
	memset(res, 0, sizeof res);
	cm_store_set_fuel(v->s, CALL_FUEL);
	rc = cm_invoke(v->s, f, args, nargs, res, &nres, &err);
	for (uint32_t i = 0; i < nres; i++)
		cm_val_free(&res[i]);
	return rc;
}

#define CALC "hostel:calc/api@0.1.0"

/* The ticker's clock moves by 100 ms n times, firing and serving. */
static int tick(live *v, int n)
{
	cm_error err;
	int rc = 0;

	for (int i = 0; i < n; i++) {
		vc.mono_ns += 100000000ull;
		wasi_ctx_fire_timers(v->wasi);
		rc |= cm_store_service_turn(v->s, 0, &err) < 0;
	}
	return rc;
}

static void call_done(void *ctx, cm_call_outcome outcome,
		      const cm_val *results, uint32_t nresults,
		      const cm_error *err)
{
	(void)ctx;
	(void)outcome;
	(void)results;
	(void)nresults;
	(void)err;
}

/* Start export name(args) in service turns; any outcome is fine. */
static int start(live *v, const char *name, const cm_val *args,
		 uint32_t nargs)
{
	cm_func *f = cm_instance_export(v->inst, NULL, name);
	cm_error err;

	if (!f)
		die(name, "no such export");
	if (cm_call_start(v->s, f, args, nargs, CALL_FUEL, call_done, NULL,
			  NULL, &err))
		return -1;
	return cm_store_service_turn(v->s, 0, &err) < 0;
}

/* n turns of loop's fuel (its crunch stops out of fuel in each). */
static int loop_turns(live *v, int n)
{
	cm_error err;
	int rc = 0;

	for (int i = 0; i < n; i++)
		rc |= cm_store_service_turn(v->s, LOOP_TURN_FUEL, &err) < 0;
	return rc;
}

/* Calls that touch the guest's memory, globals, tables and tasks (and,
 * for calc, its WASI stdio: host resources). */
static int exercise(live *v, int which, const char *word)
{
	bool calc = which == G_CALC;
	cm_val a[2];
	int rc;

	if (which == G_LOOP || which == G_LOOP_EXN) {
		/* the seed starts background work a turn stops (a call
		 * in flight stopped so is not written); after a restore,
		 * what came back runs on to its end, and a new call runs */
		if (strcmp(word, "seed") == 0) {
			cm_func *f = cm_instance_export(
				v->inst, NULL,
				which == G_LOOP ? "start-crunch"
						: "start-crunch-exn");
			cm_error err;

			a[0] = cm_val_u32(LOOP_ROUNDS);
			if (!f || cm_call_start(v->s, f, a, 1, 0, call_done,
						NULL, NULL, &err))
				return -1;
			return loop_turns(v, 1);
		}
		rc = loop_turns(v, 20);
		return rc | call(v, NULL, "runs", NULL, 0);
	}

	if (which == G_GATE) {
		/* hold(300 ms) in flight, then work() at the gate; after a
		 * restore, what came back runs on */
		a[0] = cm_val_u32(300);
		rc = start(v, "hold", a, 1);
		rc |= start(v, "work", NULL, 0);
		if (strcmp(word, "seed") != 0)
			rc |= tick(v, 4);
		return rc | call(v, NULL, "count", NULL, 0);
	}

	if (which == G_EXN) {
		/* the seed keeps 1..5 and a function; each call one more;
		 * every payload is read back */
		rc = 0;
		for (uint32_t k = 1; k <= (strcmp(word, "seed") ? 1 : 5);
		     k++) {
			a[0] = cm_val_u32(k + (uint32_t)strlen(word));
			rc |= call(v, NULL, "keep", a, 1);
		}
		if (strcmp(word, "seed") == 0)
			rc |= call(v, NULL, "keep-fn", NULL, 0);
		rc |= call(v, NULL, "sum", NULL, 0);
		rc |= call(v, NULL, "count", NULL, 0);
		return rc | call(v, NULL, "call-kept", NULL, 0);
	}

	if (which == G_P3STDIO) {
		/* the seed holds a stdout stream open and keeps a future;
		 * each call writes more through the stream */
		if (cm_val_string(&a[0], word, strlen(word)))
			die("value", "out of memory");
		rc = call(v, NULL, strcmp(word, "seed") ? "more" : "hold", a,
			  1);
		cm_val_free(&a[0]);
		if (strcmp(word, "seed") == 0)
			rc |= call(v, NULL, "keep-future", NULL, 0);
		return rc;
	}

	if (which == G_P3FILES) {
		/* the seed keeps a log's stream and a directory's open; each
		 * call writes through the one and reads on in the other */
		if (cm_val_string(&a[0], word, strlen(word)))
			die("value", "out of memory");
		if (strcmp(word, "seed") == 0) {
			rc = call(v, NULL, "open-log", a, 1);
			a[1] = cm_val_u32(1);
			rc |= call(v, NULL, "list-some", &a[1], 1);
		} else {
			rc = 0;
		}
		rc |= call(v, NULL, "log", a, 1);
		cm_val_free(&a[0]);
		return rc;
	}

	if (which == G_TICKER) {
		/* the first time it starts; later, start() is refused or
		 * starts a second task: either way the store works */
		rc = call(v, NULL, "start", NULL, 0);
		rc |= tick(v, 2);
		return rc | call(v, NULL, "count", NULL, 0);
	}

	if (cm_val_string(&a[0], word, strlen(word)))
		die("value", "out of memory");
	rc = call(v, calc ? CALC : NULL, calc ? "greet" : "echo", a, 1);
	cm_val_free(&a[0]);
	if (calc) {
		a[0] = cm_val_u32(40);
		a[1] = cm_val_u32(2);
		rc |= call(v, CALC, "add", a, 2);
		if (cm_val_string(&a[0], word, strlen(word)))
			die("value", "out of memory");
		rc |= call(v, CALC, "log-now", a, 1);
		cm_val_free(&a[0]);
	} else {
		a[0] = cm_val_u32(70000);
		rc |= call(v, NULL, "make", a, 1);
	}
	return rc;
}

static void make_snapshots(guest *g, int which)
{
	cm_snap_base *base = cm_snap_base_new();
	cm_error err;
	live v;
	int more;

	g->c = load(g->path);
	if (!base || !live_open(&v, g->c, which == G_P3FILES))
		die(g->path, "cannot instantiate");
	if (exercise(&v, which, "seed"))
		die(g->path, "the seed calls failed");
	if (cm_store_snapshot_base(v.s, SHA, base, false, &g->full, &g->nfull,
				   &err))
		die("full snapshot", err.msg);
	if (which == G_LOOP || which == G_LOOP_EXN)
		more = loop_turns(&v, 1);
	else if (which == G_TICKER || which == G_GATE)
		more = tick(&v, 1);
	else
		more = exercise(&v, which, "more");
	if (more)
		die(g->path, "the second calls failed");
	if (cm_store_snapshot_base(v.s, SHA, base, true, &g->delta,
				   &g->ndelta, &err))
		die("delta", err.msg);
	cm_snap_base_free(base);
	live_close(&v);
}

/* At exit: the preopen's files (the guest makes only files), then it. */
static void remove_preopen(void)
{
	DIR *d = opendir(preopen_dir);
	struct dirent *e;
	char f[400];

	while (d != NULL && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(f, sizeof f, "%s/%s", preopen_dir, e->d_name);
			unlink(f);
		}
	if (d != NULL)
		closedir(d);
	rmdir(preopen_dir);
}

static void init(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	snprintf(preopen_dir, sizeof preopen_dir, "%s",
		 "/tmp/hostel-fuzz-restore.XXXXXX");
	if (mkdtemp(preopen_dir) == NULL)
		die("mkdtemp", "cannot make the preopen");
	atexit(remove_preopen);
	for (int i = 0; i < 3; i++) {
		char f[96];
		FILE *fp;

		snprintf(f, sizeof f, "%s/f%d", preopen_dir, i);
		fp = fopen(f, "w");
		if (fp == NULL)
			die(f, "cannot make");
		fputs("some bytes\n", fp);
		fclose(fp);
	}
	for (int i = 0; i < NGUESTS; i++)
		make_snapshots(&guests[i], i);
}

static uint16_t u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* A copy of src patched as the input says (NULL when it says nothing). */
static uint8_t *patched(const uint8_t *src, size_t n, const uint8_t *in,
			size_t len, bool fix, size_t *out)
{
	size_t cut, at = 2;
	uint8_t *p;

	if (len < 2)
		return NULL;
	cut = u16(in);
	p = malloc(n);
	if (!p)
		die("patch", "out of memory");
	memcpy(p, src, n);
	while (at + 3 <= len) {
		size_t off = u16(in + at), k = in[at + 2];

		at += 3;
		for (size_t i = 0; i < k && at < len; i++, at++)
			p[(off + i) % n] ^= in[at];
	}
	if (fix && n >= 8) {
		uint64_t h = wasm_snap_checksum(p, n - 8);

		for (int i = 0; i < 8; i++)
			p[n - 8 + (size_t)i] = (uint8_t)(h >> (8 * i));
	}
	*out = cut < n ? n - cut : 0;
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned mode;
	int which;
	bool fix;
	guest *g;
	uint8_t *p = NULL;
	size_t n = 0;
	cm_error err;
	live v;
	int rc;

	if (size < 1)
		return 0;
	memset(&err, 0, sizeof err);
	init();
	mode = data[0] & 3;
	which = ((data[0] >> 2 & 3) | (data[0] >> 4 & 4) | (data[0] >> 4 & 8)) %
		NGUESTS;
	fix = !(data[0] & 16);
	g = &guests[which];
	if (!live_open(&v, g->c, which == G_P3FILES))
		die(g->path, "cannot instantiate");
	switch (mode) {
	case 0:
		rc = cm_store_restore(v.s, SHA, data + 1, size - 1, &err);
		break;
	case 1:
		p = patched(g->full, g->nfull, data + 1, size - 1, fix, &n);
		rc = p ? cm_store_restore(v.s, SHA, p, n, &err) : -1;
		break;
	case 3: {
		bool patch_full = data[0] & 32;
		uint8_t *f = NULL;
		size_t nf = 0;

		p = patched(patch_full ? g->full : g->delta,
			    patch_full ? g->nfull : g->ndelta, data + 1,
			    size - 1, fix, &n);
		rc = !p ? -1
		     : patch_full
			     ? cm_snapshot_fold(p, n, g->delta, g->ndelta, &f,
						&nf, &err)
			     : cm_snapshot_fold(g->full, g->nfull, p, n, &f, &nf,
						&err);
		if (rc == 0)
			rc = cm_store_restore(v.s, SHA, f, nf, &err);
		free(f);
		break;
	}
	default:
		/* a chain: the full one's core, the delta whole */
		if (cm_store_restore_core(v.s, SHA, g->full, g->nfull, &err))
			die("the valid snapshot", err.msg);
		p = patched(g->delta, g->ndelta, data + 1, size - 1, fix, &n);
		rc = p ? cm_store_restore(v.s, SHA, p, n, &err) : -1;
		break;
	}
	free(p);
	/* to see what a seed reaches: FUZZ_RESTORE_VERBOSE=1 replay_restore */
	if (getenv("FUZZ_RESTORE_VERBOSE"))
		fprintf(stderr, "fuzz_restore: mode %u guest %d: %s\n", mode,
			which, rc == 0 ? "restored" : err.msg);
	if (rc == 0)
		exercise(&v, which, "after");
	/* a refused restore leaves the store partly overwritten: the
	 * embedder frees it (snapshot.h); so do we */
	live_close(&v);
	return 0;
}
