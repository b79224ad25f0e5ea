/*
 * concurrent.c - concurrent async calls into one store of a real
 * Component-Model-async guest (tests/js-guests.sh):
 *
 *   concurrent COMPONENT.wasm IFACE FUNC N MS MAX_MS
 *
 * Starts N calls FUNC(MS, "call I") (an `async func(ms: u32, msg:
 * string) -> string` that waits MS on wasi:clocks/monotonic-clock@0.3.0,
 * like tests/guests/js/qjs's sleep-then) in one store with
 * cm_call_start, then drives the store as an event loop would: service
 * turns while work is ready, and when it is quiescent a sleep to the
 * next WASI timer (wasi_ctx_sleep_to_next_timer).  Checks that every
 * call returns "call I after MS ms" and that all of them together take
 * less than MAX_MS of wall time (they wait concurrently, not one after
 * the other).  Prints the time and "N passed, N failed"; exit 0 on
 * success, 1 on a failure, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "component/component.h"
#include "run/instance.h"
#include "wasi/wasi.h"

#define MAX_CALLS 256

typedef struct slot {
	int index;
	int done; /* 0 running, 1 returned right, -1 failed */
	char why[320];
	const char *want_suffix;
} slot;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void on_done(void *ctx, cm_call_outcome outcome, const cm_val *results,
		    uint32_t nresults, const cm_error *err)
{
	slot *sl = ctx;
	char want[64];

	if (outcome != CM_CALL_RETURNED) {
		sl->done = -1;
		snprintf(sl->why, sizeof sl->why, "call %d: %s", sl->index,
			 err != NULL ? err->msg : "no result");
		return;
	}
	snprintf(want, sizeof want, "call %d %s", sl->index, sl->want_suffix);
	if (nresults != 1 || results[0].kind != CM_STRING ||
	    results[0].u.str.len != strlen(want) ||
	    memcmp(results[0].u.str.ptr, want, strlen(want)) != 0) {
		sl->done = -1;
		snprintf(sl->why, sizeof sl->why,
			 "call %d: unexpected result (want \"%s\")", sl->index,
			 want);
		return;
	}
	sl->done = 1;
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

int main(int argc, char **argv)
{
	static slot slots[MAX_CALLS];
	cm_component *c = NULL;
	cm_component_instance *inst;
	cm_store *s = NULL;
	cm_linker *l = NULL;
	wasi_ctx *w = NULL;
	wasm_error werr;
	cm_error err;
	char suffix[48];
	uint8_t *bytes;
	size_t len = 0;
	int n, ms, max_ms, failed = 0, ndone = 0;
	double t0, elapsed;
	cm_func *f;

	if (argc != 7 || (n = atoi(argv[4])) < 1 || n > MAX_CALLS ||
	    (ms = atoi(argv[5])) < 0 || (max_ms = atoi(argv[6])) < 1) {
		fprintf(stderr, "usage: concurrent COMPONENT.wasm IFACE FUNC "
				"N(1-256) MS MAX_MS\n");
		return 2;
	}
	bytes = read_all(argv[1], &len);
	if (bytes == NULL || cm_component_load(bytes, len, &c, &werr)) {
		fprintf(stderr, "concurrent: cannot load %s\n", argv[1]);
		return 1;
	}
	free(bytes);
	s = cm_store_new(NULL);
	w = wasi_ctx_new();
	l = cm_linker_new();
	if (s == NULL || w == NULL || l == NULL || wasi_add_to_linker(w, l)) {
		fprintf(stderr, "concurrent: out of memory\n");
		return 1;
	}
	if (cm_instantiate(s, c, l, &inst, &err)) {
		fprintf(stderr, "concurrent: instantiate: %s\n", err.msg);
		return 1;
	}
	f = cm_instance_export(inst, argv[2], argv[3]);
	if (f == NULL) {
		fprintf(stderr, "concurrent: no export %s#%s\n", argv[2],
			argv[3]);
		return 1;
	}
	snprintf(suffix, sizeof suffix, "after %d ms", ms);
	t0 = now_ms();
	for (int i = 0; i < n; i++) {
		cm_val args[2];
		char msg[32];

		snprintf(msg, sizeof msg, "call %d", i);
		slots[i].index = i;
		slots[i].want_suffix = suffix;
		args[0] = cm_val_u32((uint32_t)ms);
		if (cm_val_string(&args[1], msg, strlen(msg)) ||
		    cm_call_start(s, f, args, 2, 0, on_done, &slots[i], NULL,
				  &err)) {
			fprintf(stderr, "concurrent: start %d: %s\n", i,
				err.msg);
			return 1;
		}
		cm_vals_free(args, 2);
	}
	/* the event loop: turns while work is ready, else the next timer */
	while (ndone < n) {
		int rc = cm_store_service_turn(s, 0, &err);

		ndone = 0;
		for (int i = 0; i < n; i++)
			ndone += slots[i].done != 0;
		if (rc < 0 && ndone < n) {
			fprintf(stderr, "concurrent: turn: %s\n", err.msg);
			break;
		}
		if (ndone < n && rc == 0 && wasi_ctx_sleep_to_next_timer(w) < 0)
			break; /* nothing ready, nothing pending */
		if (now_ms() - t0 > 10.0 * max_ms + 10000)
			break; /* a hang is a failure, not a stuck test */
	}
	elapsed = now_ms() - t0;
	for (int i = 0; i < n; i++) {
		if (slots[i].done == 1)
			continue;
		failed++;
		printf("not ok - %s\n",
		       slots[i].done ? slots[i].why : "call never finished");
	}
	printf("%d concurrent %s#%s(%d, ...) in one store: %.1f ms "
	       "(limit %d ms)\n",
	       n, argv[2], argv[3], ms, elapsed, max_ms);
	if (elapsed >= max_ms) {
		failed++;
		printf("not ok - took %.1f ms, limit %d ms\n", elapsed, max_ms);
	}
	printf("%d passed, %d failed\n", failed ? 0 : 1, failed ? 1 : 0);
	cm_store_free(s);
	cm_linker_free(l);
	wasi_ctx_free(w);
	cm_component_free(c);
	return failed ? 1 : 0;
}
