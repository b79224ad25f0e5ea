/*
 * hostel-runner.c - runs one benchmark kernel on hostel's core engine.
 *
 *   hostel-runner KERNEL.wasm [n]
 *
 * Loads the module through the public engine API (wasm.h), satisfies its
 * only import, bench.now_ns: () -> i64, with a host function reading
 * CLOCK_MONOTONIC, calls bench_run(n) once and then bench_checksum(),
 * and prints the same JSON line as the Node and native runners:
 *
 *   {"kernel":"NAME","ns":ELAPSED,"checksum":"U64"}
 *
 * ELAPSED is measured by the guest around its own work, so loading,
 * validation, compilation and instantiation are excluded, exactly as for
 * the other engines.  Any failure (unreadable file, load error, unknown
 * import, trap) goes to stderr with exit status 1; bench/run reports it
 * as "hostel engine not available" rather than inventing a number.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wasm/wasm.h"

static int fail(const char *what, const char *detail)
{
	fprintf(stderr, "hostel-runner: %s: %s\n", what, detail);
	return 1;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL, *grown;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			grown = realloc(buf, cap);
			if (!grown) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = grown;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		errno = EIO;
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

static wasm_host_status host_now_ns(wasm_exec *exec, void *env,
				    const wasm_val *args, wasm_val *results)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	results[0].type = WASM_I64;
	results[0].u.i64 =
		(uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return WASM_HOST_OK;
}

static bool name_is(wasm_name n, const char *s)
{
	size_t len = strlen(s);

	return n.len == len && memcmp(n.ptr, s, len) == 0;
}

/* Calls export `name` with `args`; on success stores its single result. */
static int call_export(wasm_exec *exec, const wasm_instance *inst,
		       const char *name, const wasm_val *args, uint32_t nargs,
		       wasm_val *result)
{
	wasm_extern ext;
	wasm_exec_status st;

	if (!wasm_instance_export(inst, (const uint8_t *)name, strlen(name),
				  &ext) ||
	    ext.kind != WASM_EXTERN_FUNC)
		return fail(name, "missing function export");
	st = wasm_exec_call(exec, ext.u.func, args, nargs);
	if (st == WASM_EXEC_TRAP)
		return fail(name, wasm_exec_trap_message(exec));
	if (st != WASM_EXEC_DONE)
		return fail(name, "call did not complete");
	if (wasm_exec_results(exec, result, 1) != 1 ||
	    (uint8_t)result->type != WASM_I64)
		return fail(name, "expected one i64 result");
	return 0;
}

static int run_kernel(const char *path, const uint8_t *bytes, size_t len,
		      int32_t n)
{
	static wasm_valtype i64_result[] = {WASM_I64};
	const wasm_functype now_type = {0, 1, NULL, i64_result};
	const char *kernel = strrchr(path, '/');
	wasm_module *mod = NULL;
	wasm_store *store = NULL;
	wasm_exec *exec = NULL;
	wasm_instance *inst = NULL;
	wasm_extern *imports = NULL;
	wasm_trap_kind trap = WASM_TRAP_NONE;
	wasm_error err = {0};
	wasm_val arg, ns, sum;
	size_t klen;
	uint32_t i;
	int rc = 1;

	kernel = kernel ? kernel + 1 : path;
	klen = strlen(kernel);
	if (klen > 5 && strcmp(kernel + klen - 5, ".wasm") == 0)
		klen -= 5;

	if (wasm_module_load(bytes, len, &mod, &err) != 0)
		return fail("load", err.msg);
	store = wasm_store_new(NULL);
	if (!store) {
		fail("store", "out of memory");
		goto out;
	}
	imports = calloc(mod->nimports ? mod->nimports : 1, sizeof(*imports));
	if (!imports) {
		fail("imports", "out of memory");
		goto out;
	}
	for (i = 0; i < mod->nimports; i++) {
		const wasm_import *im = &mod->imports[i];

		if (im->kind != WASM_EXTERN_FUNC ||
		    !name_is(im->module, "bench") ||
		    !name_is(im->name, "now_ns")) {
			fail("link", "unknown import (only bench.now_ns)");
			goto out;
		}
		imports[i].kind = WASM_EXTERN_FUNC;
		imports[i].u.func =
			wasm_func_new_host(store, &now_type, host_now_ns, NULL);
		if (!imports[i].u.func) {
			fail("host function", "out of memory");
			goto out;
		}
	}
	if (wasm_instantiate(store, mod, imports, mod->nimports, &inst, &trap,
			     &err) != 0) {
		fail("instantiate", err.kind != WASM_ERR_NONE
					    ? err.msg
					    : wasm_trap_message(trap));
		goto out;
	}
	exec = wasm_exec_new(store, NULL);
	if (!exec) {
		fail("exec", "out of memory");
		goto out;
	}
	arg.type = WASM_I32;
	arg.u.i32 = (uint32_t)n;
	if (call_export(exec, inst, "bench_run", &arg, 1, &ns) != 0 ||
	    call_export(exec, inst, "bench_checksum", NULL, 0, &sum) != 0)
		goto out;
	printf("{\"kernel\":\"%.*s\",\"ns\":%" PRId64 ",\"checksum\":\"%" PRIu64
	       "\"}\n",
	       (int)klen, kernel, (int64_t)ns.u.i64, sum.u.i64);
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	if (exec)
		wasm_exec_free(exec);
	if (store)
		wasm_store_free(store);
	free(imports);
	wasm_module_free(mod);
	return rc;
}

int main(int argc, char **argv)
{
	uint8_t *bytes;
	size_t len = 0;
	int32_t n;
	int rc;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: hostel-runner KERNEL.wasm [n]\n");
		return 2;
	}
	n = argc == 3 ? (int32_t)strtol(argv[2], NULL, 0) : 0;
	bytes = read_file(argv[1], &len);
	if (!bytes)
		return fail(argv[1], strerror(errno));
	rc = run_kernel(argv[1], bytes, len, n);
	free(bytes);
	return rc;
}
