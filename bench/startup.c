/*
 * startup.c - startup cost of a real guest component (bench/startup):
 *
 *   bench/startup [--rounds N] COMPONENT.wasm 'IFACE#FUNC(WAVE ARGS)'
 *
 * Measures, each over N rounds (default 5), printing min and median:
 *  - load: decode + validate + translate the whole binary
 *    (cm_component_load: every embedded core module is decoded,
 *    validated and compiled to the interpreter's code);
 *  - store: a new store of the already loaded component, ready to call
 *    (cm_store_new, a WASI 0.2 context, a linker with WASI,
 *    cm_instantiate: memories, tables, segments, start functions);
 *  - first call: the given call on that fresh instance (cm_invoke), and
 *    a second call of the same, for contrast;
 *  - snapshot (issue 22): a full snapshot of the store after those calls
 *    (cm_store_snapshot_base: its size too), a restore (a new store as
 *    above, then cm_store_restore) against the new store alone, and a
 *    delta after a third call (size and time).  A store the format
 *    cannot write yet prints the reason instead.
 * The result of the call is printed once, in WAVE, so a wrong answer is
 * visible.  Issue 8's targets are printed beside the figures, judged on
 * the median wall time and on the median CPU time (the figure that
 * counts on a shared, oversubscribed machine).
 * Contract: a benchmark tool, never part of make check; exits 1 when
 * anything fails to load, instantiate or call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "value/wave.h"
#include "component/component.h"
#include "run/instance.h"
#include "run/snapshot.h"
#include "wasi/wasi.h"

#define MAX_ROUNDS 100

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* CPU time of this process: what wall time would be on an idle machine */
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Wall and CPU time: the machine is shared, so when the two differ much
 * the wall figure is inflated by other processes (the work is
 * single-threaded: on an idle machine wall ~ CPU).  The verdict is given
 * for both medians.
 */
static void report(const char *what, double *v, double *cpu, int n,
		   double target)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	qsort(cpu, (size_t)n, sizeof *cpu, cmp_double);
	printf("%-40s wall min %8.2f median %8.2f ms, cpu median %8.2f ms",
	       what, v[0], v[n / 2], cpu[n / 2]);
	if (target > 0)
		printf("  (target < %.0f ms: wall %s, cpu %s)", target,
		       v[n / 2] < target ? "met" : "MISSED",
		       cpu[n / 2] < target ? "met" : "MISSED");
	printf("\n");
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

static cm_func *lookup_func(cm_component_instance *inst, const char *name,
			    size_t len)
{
	char *s = strndup(name, len), *hash;
	cm_func *f;

	if (s == NULL)
		return NULL;
	hash = strrchr(s, '#');
	if (hash != NULL) {
		*hash = '\0';
		f = cm_instance_export(inst, s, hash + 1);
	} else {
		f = cm_instance_export(inst, NULL, s);
	}
	free(s);
	return f;
}

static const cm_type *lookup_type(void *env, const char *name, size_t len)
{
	cm_func *f = lookup_func(env, name, len);

	return f != NULL ? cm_func_type(f) : NULL;
}

/* One ready store: its parts, freed together. */
typedef struct ready {
	cm_store *s;
	wasi_ctx *wasi;
	cm_linker *l;
	cm_component_instance *inst;
} ready;

static void ready_free(ready *r)
{
	if (r->s != NULL)
		cm_store_free(r->s);
	cm_linker_free(r->l);
	wasi_ctx_free(r->wasi);
	memset(r, 0, sizeof *r);
}

static int make_ready(const cm_component *c, ready *r)
{
	cm_error err;

	memset(r, 0, sizeof *r);
	r->s = cm_store_new(NULL);
	r->wasi = wasi_ctx_new();
	r->l = cm_linker_new();
	if (r->s == NULL || r->wasi == NULL || r->l == NULL ||
	    wasi_add_to_linker(r->wasi, r->l)) {
		fprintf(stderr, "startup: out of memory\n");
		return -1;
	}
	/* the guest's stdout would disturb the table */
	wasi_ctx_set_stdio(r->wasi, -1, -1, 2);
	if (cm_instantiate(r->s, c, r->l, &r->inst, &err)) {
		fprintf(stderr, "startup: instantiate: %s: %s\n",
			cm_error_kind_name(err.kind), err.msg);
		return -1;
	}
	return 0;
}

static int invoke(ready *r, const char *call, double *ms, double *cms,
		  char **printed)
{
	wave_call wc;
	wave_error werr;
	cm_val res[1];
	uint32_t nres = 0;
	cm_error err;
	cm_func *f;
	size_t plen;
	double t0, c0;
	int rc;

	memset(&wc, 0, sizeof wc);
	if (wave_parse_call(call, strlen(call), lookup_type, r->inst, &wc,
			    &werr)) {
		fprintf(stderr, "startup: bad call: %u:%u: %s\n", werr.line,
			werr.column, werr.msg);
		wave_call_free(&wc);
		return -1;
	}
	f = lookup_func(r->inst, wc.name, wc.name_len);
	t0 = now_ms();
	c0 = cpu_ms();
	rc = f == NULL
		     ? -1
		     : cm_invoke(r->s, f, wc.args, wc.nargs, res, &nres, &err);
	*ms = now_ms() - t0;
	*cms = cpu_ms() - c0;
	wave_call_free(&wc);
	if (rc) {
		fprintf(stderr, "startup: call failed: %s\n",
			f == NULL ? "no such export" : err.msg);
		return -1;
	}
	if (printed != NULL && *printed == NULL &&
	    cm_func_type(f)->u.func.result != NULL &&
	    wave_print_results(cm_func_type(f), res, printed, &plen))
		*printed = NULL;
	cm_vals_free(res, nres);
	return 0;
}

/* What the snapshot rounds measured (ms, bytes); refused: the reason. */
typedef struct snap_figures {
	double full[MAX_ROUNDS], cfull[MAX_ROUNDS];
	double restore[MAX_ROUNDS], crestore[MAX_ROUNDS];
	double delta[MAX_ROUNDS], cdelta[MAX_ROUNDS];
	size_t full_bytes, delta_bytes;
	char refused[CM_ERROR_MSG_MAX];
} snap_figures;

static const uint8_t BENCH_SHA[32] = {0xbe, 0x4c};

/*
 * Round r of the snapshot figures on rd (after its calls): full, a
 * restore into a new store, a delta after one more call.  -1 when
 * something fails that should not; a refusal is recorded, not an error.
 */
static int snapshot_round(const cm_component *c, ready *rd, const char *call,
			  snap_figures *sf, int r)
{
	cm_snap_base *base = cm_snap_base_new();
	uint8_t *full = NULL, *delta = NULL;
	size_t nfull = 0, ndelta = 0;
	double t0, c0, ms, cms;
	cm_error err;
	ready fresh;
	int rc = -1;

	if (base == NULL)
		return -1;
	t0 = now_ms();
	c0 = cpu_ms();
	if (cm_store_snapshot_base(rd->s, BENCH_SHA, base, false, &full,
				   &nfull, &err)) {
		snprintf(sf->refused, sizeof sf->refused, "%s", err.msg);
		cm_snap_base_free(base);
		return 0;
	}
	sf->full[r] = now_ms() - t0;
	sf->cfull[r] = cpu_ms() - c0;
	sf->full_bytes = nfull;
	t0 = now_ms();
	c0 = cpu_ms();
	if (make_ready(c, &fresh) == 0 &&
	    cm_store_restore(fresh.s, BENCH_SHA, full, nfull, &err) == 0) {
		sf->restore[r] = now_ms() - t0;
		sf->crestore[r] = cpu_ms() - c0;
		rc = 0;
	} else {
		fprintf(stderr, "startup: restore: %s\n", err.msg);
	}
	ready_free(&fresh);
	if (rc == 0 && invoke(rd, call, &ms, &cms, NULL) == 0) {
		t0 = now_ms();
		c0 = cpu_ms();
		if (cm_store_snapshot_base(rd->s, BENCH_SHA, base, true, &delta,
					   &ndelta, &err)) {
			fprintf(stderr, "startup: delta: %s\n", err.msg);
			rc = -1;
		}
		sf->delta[r] = now_ms() - t0;
		sf->cdelta[r] = cpu_ms() - c0;
		sf->delta_bytes = ndelta;
	}
	free(full);
	free(delta);
	cm_snap_base_free(base);
	return rc;
}

int main(int argc, char **argv)
{
	static snap_figures sf;
	double load[MAX_ROUNDS], store[MAX_ROUNDS], first[MAX_ROUNDS],
		second[MAX_ROUNDS];
	double cload[MAX_ROUNDS], cstore[MAX_ROUNDS], cfirst[MAX_ROUNDS],
		csecond[MAX_ROUNDS];
	int rounds = 5, i = 1;
	const char *path, *call;
	cm_component *c = NULL;
	char *printed = NULL;
	wasm_error werr;
	uint8_t *bytes;
	size_t len = 0;

	if (argc > 2 && !strcmp(argv[1], "--rounds")) {
		rounds = atoi(argv[2]);
		i = 3;
	}
	if (argc - i != 2 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr,
			"usage: startup [--rounds N (1-%d)] "
			"COMPONENT.wasm 'IFACE#FUNC(ARGS)'\n",
			MAX_ROUNDS);
		return 2;
	}
	path = argv[i];
	call = argv[i + 1];
	bytes = read_all(path, &len);
	if (bytes == NULL) {
		fprintf(stderr, "startup: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ms(), c0 = cpu_ms();

		if (cm_component_load(bytes, len, &c, &werr)) {
			fprintf(stderr, "startup: %s: load: %s\n", path,
				werr.msg);
			return 1;
		}
		load[r] = now_ms() - t0;
		cload[r] = cpu_ms() - c0;
		if (r + 1 < rounds)
			cm_component_free(c);
	}
	for (int r = 0; r < rounds; r++) {
		ready rd;
		double t0 = now_ms(), c0 = cpu_ms();

		if (make_ready(c, &rd)) {
			ready_free(&rd);
			return 1;
		}
		store[r] = now_ms() - t0;
		cstore[r] = cpu_ms() - c0;
		if (invoke(&rd, call, &first[r], &cfirst[r], &printed) ||
		    invoke(&rd, call, &second[r], &csecond[r], NULL) ||
		    (!sf.refused[0] && snapshot_round(c, &rd, call, &sf, r))) {
			ready_free(&rd);
			return 1;
		}
		ready_free(&rd);
	}
	printf("%s: %.1f MB, %d rounds; %s = %s\n", path, (double)len / 1e6,
	       rounds, call, printed ? printed : "(no result)");
	report("hostel load (decode+validate+translate)", load, cload, rounds,
	       300);
	report("hostel new store (WASI+link+instantiate)", store, cstore,
	       rounds, 10);
	report("hostel first call", first, cfirst, rounds, 20);
	report("hostel second call", second, csecond, rounds, 0);
	if (sf.refused[0]) {
		printf("hostel snapshot: refused: %s\n", sf.refused);
	} else {
		printf("hostel snapshot: full %zu bytes, delta after a call "
		       "%zu bytes\n",
		       sf.full_bytes, sf.delta_bytes);
		report("hostel full snapshot", sf.full, sf.cfull, rounds, 0);
		report("hostel restore (new store + snapshot)", sf.restore,
		       sf.crestore, rounds, 0);
		report("hostel delta after a call", sf.delta, sf.cdelta, rounds,
		       0);
		printf("restore-vs-new-store: %.2f (cpu medians)\n",
		       sf.crestore[rounds / 2] /
			       (cstore[rounds / 2] > 0 ? cstore[rounds / 2]
						       : 1));
	}
	free(printed);
	cm_component_free(c);
	free(bytes);
	return 0;
}
