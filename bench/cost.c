/*
 * cost.c - the engine's fixed costs, measured against the targets of
 * issue 3:
 *
 *  - idle-instance: heap bytes an instance of a small module (one import,
 *    a 1-page memory, a table, a global, two functions, an element and a
 *    data segment) holds while idle, beyond its linear memory; with the
 *    store it lives in, and also per extra instance in that store
 *    (target: under 64 KiB);
 *  - cycle: decode + instantiate + call + free of a trivial module
 *    (`(func (export "f") (result i32) i32.const 42)`), in microseconds:
 *    module load, store, instance, exec, one call, and everything freed
 *    again; the mean of the best batch of 200 cycles, and the median
 *    batch (target: under 5 us);
 *  - suspended: heap bytes of 10,000 execution contexts each suspended in
 *    a host call inside the small module (target: under 200 MiB); all of
 *    them are resumed afterwards and their results checked.
 *
 *   hostel-cost [--rounds N]
 *
 * Prints one JSON object per figure on stdout, e.g.
 *   {"figure":"cycle","value":1.23,"unit":"us","target":5}
 * and, first, {"module":"HEX"} with the trivial module's bytes so that a
 * peer (bench/cost.mjs runs Node) measures the same cycle.  Heap is
 * counted with glibc's mallinfo2() (bytes in use from malloc, including
 * its own mmapped chunks); linear memory is mapped directly by the
 * engine, so it is not in that count.  Exit status 1 on any engine
 * failure (with a message on stderr), never a made-up number.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wasm/wasm.h"

/* The small module (see the comment above), without its name section. */
static const uint8_t small_wasm[] = {
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60,
	0x01, 0x7f, 0x01, 0x7f, 0x02, 0x0d, 0x01, 0x03, 0x65, 0x6e, 0x76, 0x05,
	0x62, 0x6c, 0x6f, 0x63, 0x6b, 0x00, 0x00, 0x03, 0x03, 0x02, 0x00, 0x00,
	0x04, 0x04, 0x01, 0x70, 0x00, 0x02, 0x05, 0x03, 0x01, 0x00, 0x01, 0x06,
	0x06, 0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x07, 0x0c, 0x02, 0x01, 0x66,
	0x00, 0x01, 0x04, 0x64, 0x65, 0x65, 0x70, 0x00, 0x02, 0x09, 0x08, 0x01,
	0x00, 0x41, 0x00, 0x0b, 0x02, 0x01, 0x02, 0x0a, 0x16, 0x02, 0x0a, 0x00,
	0x20, 0x00, 0x41, 0x01, 0x6a, 0x23, 0x00, 0x6a, 0x0b, 0x09, 0x00, 0x20,
	0x00, 0x10, 0x00, 0x41, 0x01, 0x6a, 0x0b, 0x0b, 0x0c, 0x01, 0x00, 0x41,
	0x10, 0x0b, 0x06, 0x68, 0x6f, 0x73, 0x74, 0x65, 0x6c,
};

/* (module (func (export "f") (result i32) i32.const 42)) */
static const uint8_t trivial_wasm[] = {
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05, 0x01, 0x60,
	0x00, 0x01, 0x7f, 0x03, 0x02, 0x01, 0x00, 0x07, 0x05, 0x01, 0x01, 0x66,
	0x00, 0x00, 0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x2a, 0x0b,
};

enum { NSUSPENDED = 10000, NEXTRA = 100, CYCLES = 20000, BATCH = 200 };

static int fail(const char *what, const char *detail)
{
	fprintf(stderr, "hostel-cost: %s: %s\n", what, detail ? detail : "");
	return 1;
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

/* Whether mallinfo2() sees a 1 MiB malloc (not under ASan, for one). */
static bool heap_counted(void)
{
	size_t h0 = heap_in_use(), h1;
	void *volatile p = malloc(1u << 20);

	if (p == NULL)
		return false;
	h1 = heap_in_use();
	free(p);
	return h1 - h0 >= 1u << 20;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static wasm_val i32v(uint32_t v)
{
	wasm_val x;
	memset(&x, 0, sizeof x);
	x.type = WASM_I32;
	x.u.i32 = v;
	return x;
}

/* env.block: (i32) -> i32, always suspends; resumed with arg + 1. */
static wasm_host_status host_block(wasm_exec *exec, void *env,
				   const wasm_val *args, wasm_val *results)
{
	return WASM_HOST_BLOCK;
}

static wasm_func *export_func(const wasm_instance *inst, const char *name)
{
	wasm_extern x;

	if (!wasm_instance_export(inst, (const uint8_t *)name, strlen(name),
				  &x) ||
	    x.kind != WASM_EXTERN_FUNC)
		return NULL;
	return x.u.func;
}

/* A store with the small module instantiated once; NULL on failure. */
static wasm_instance *small_instance(wasm_store *s, const wasm_module *m)
{
	static wasm_valtype i32[] = {WASM_I32};
	const wasm_functype bt = {1, 1, i32, i32};
	wasm_extern imp;
	wasm_instance *inst = NULL;
	wasm_trap_kind trap = WASM_TRAP_NONE;
	wasm_error err;

	memset(&err, 0, sizeof err);
	imp.kind = WASM_EXTERN_FUNC;
	imp.u.func = wasm_func_new_host(s, &bt, host_block, NULL);
	if (imp.u.func == NULL)
		return NULL;
	if (wasm_instantiate(s, m, &imp, 1, &inst, &trap, &err))
		return NULL;
	return inst;
}

static int idle_instance(const wasm_module *m)
{
	size_t before, one, extra;
	wasm_store *s;
	wasm_instance *inst;
	wasm_val arg = i32v(1), r;
	wasm_exec *x;

	before = heap_in_use();
	s = wasm_store_new(NULL);
	if (s == NULL || (inst = small_instance(s, m)) == NULL)
		return fail("idle-instance", "instantiate failed");
	one = heap_in_use() - before;
	for (int i = 0; i < NEXTRA; i++)
		if (small_instance(s, m) == NULL)
			return fail("idle-instance", "instantiate failed");
	extra = (heap_in_use() - before - one) / NEXTRA;
	/* the instance works */
	x = wasm_exec_new(s, NULL);
	if (x == NULL ||
	    wasm_exec_call(x, export_func(inst, "f"), &arg, 1) !=
		    WASM_EXEC_DONE ||
	    wasm_exec_results(x, &r, 1) != 1 || r.u.i32 != 2)
		return fail("idle-instance", "call failed");
	wasm_exec_free(x);
	wasm_store_free(s);
	printf("{\"figure\":\"idle-instance\",\"value\":%zu,\"unit\":\"bytes\","
	       "\"target\":65536,\"per_extra_instance\":%zu}\n",
	       one, extra);
	return 0;
}

/* One decode + instantiate + call + free; 0 or -1. */
static int cycle_once(void)
{
	wasm_module *m = NULL;
	wasm_store *s = NULL;
	wasm_instance *inst = NULL;
	wasm_exec *x = NULL;
	wasm_trap_kind trap = WASM_TRAP_NONE;
	wasm_error err;
	wasm_val r;
	int rc = -1;

	memset(&err, 0, sizeof err);
	if (wasm_module_load(trivial_wasm, sizeof trivial_wasm, &m, &err))
		return -1;
	s = wasm_store_new(NULL);
	if (s == NULL ||
	    wasm_instantiate(s, m, NULL, 0, &inst, &trap, &err) != 0)
		goto out;
	x = wasm_exec_new(s, NULL);
	if (x != NULL &&
	    wasm_exec_call(x, export_func(inst, "f"), NULL, 0) ==
		    WASM_EXEC_DONE &&
	    wasm_exec_results(x, &r, 1) == 1 && r.u.i32 == 42)
		rc = 0;
	wasm_exec_free(x);
out:
	if (s)
		wasm_store_free(s);
	wasm_module_free(m);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/*
 * The cycle in batches of BATCH: on a shared machine the best batch is
 * the one least disturbed by other processes; the median is printed too.
 */
static int cycle(int rounds)
{
	int nb = rounds * (CYCLES / BATCH);
	double *t = malloc((size_t)nb * sizeof *t);

	if (t == NULL)
		return fail("cycle", "out of memory");
	for (int i = 0; i < CYCLES / 10; i++) /* warm up */
		if (cycle_once()) {
			free(t);
			return fail("cycle", "load/instantiate/call failed");
		}
	for (int k = 0; k < nb; k++) {
		double t0 = now_us();
		for (int i = 0; i < BATCH; i++)
			if (cycle_once()) {
				free(t);
				return fail("cycle", "failed");
			}
		t[k] = (now_us() - t0) / BATCH;
	}
	qsort(t, (size_t)nb, sizeof *t, cmp_double);
	printf("{\"figure\":\"cycle\",\"value\":%.3f,\"median\":%.3f,"
	       "\"unit\":\"us\",\"target\":5}\n",
	       t[0], t[nb / 2]);
	free(t);
	return 0;
}

static int suspended(const wasm_module *m)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_instance *inst;
	wasm_exec **xs;
	wasm_func *deep;
	size_t before, bytes;
	int rc = 0;

	if (s == NULL || (inst = small_instance(s, m)) == NULL ||
	    (deep = export_func(inst, "deep")) == NULL)
		return fail("suspended", "instantiate failed");
	xs = calloc(NSUSPENDED, sizeof *xs);
	if (xs == NULL)
		return fail("suspended", "out of memory");
	before = heap_in_use();
	for (uint32_t i = 0; i < NSUSPENDED; i++) {
		wasm_val a = i32v(i);
		xs[i] = wasm_exec_new(s, NULL);
		if (xs[i] == NULL ||
		    wasm_exec_call(xs[i], deep, &a, 1) != WASM_EXEC_BLOCKED) {
			rc = fail("suspended", "call did not block");
			break;
		}
	}
	bytes = heap_in_use() - before;
	for (uint32_t i = 0; i < NSUSPENDED && xs[i]; i++) {
		wasm_val r = i32v(2 * i);
		if (rc == 0 &&
		    (wasm_exec_resume(xs[i], &r, 1) != WASM_EXEC_DONE ||
		     wasm_exec_results(xs[i], &r, 1) != 1 ||
		     r.u.i32 != 2 * i + 1))
			rc = fail("suspended", "resume gave a wrong result");
		wasm_exec_free(xs[i]);
	}
	free(xs);
	wasm_store_free(s);
	if (rc == 0)
		printf("{\"figure\":\"suspended\",\"value\":%zu,"
		       "\"unit\":\"bytes\",\"count\":%d,"
		       "\"target\":209715200}\n",
		       bytes, NSUSPENDED);
	return rc;
}

int main(int argc, char **argv)
{
	wasm_module *m = NULL;
	wasm_error err;
	size_t before, module_bytes;
	int rounds = 5, rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: hostel-cost [--rounds N]\n");
			return 2;
		}
	}
	if (rounds < 1)
		rounds = 1;
	printf("{\"module\":\"");
	for (size_t i = 0; i < sizeof trivial_wasm; i++)
		printf("%02x", trivial_wasm[i]);
	printf("\"}\n");

	if (!heap_counted())
		return fail("heap accounting",
			    "mallinfo2() does not see malloc (a sanitizer "
			    "build?): no memory figures");
	memset(&err, 0, sizeof err);
	before = heap_in_use();
	if (wasm_module_load(small_wasm, sizeof small_wasm, &m, &err))
		return fail("small module", err.msg);
	module_bytes = heap_in_use() - before;
	printf("{\"figure\":\"module\",\"value\":%zu,\"unit\":\"bytes\"}\n",
	       module_bytes);
	rc = idle_instance(m);
	if (rc == 0)
		rc = suspended(m);
	if (rc == 0)
		rc = cycle(rounds);
	wasm_module_free(m);
	return rc;
}
