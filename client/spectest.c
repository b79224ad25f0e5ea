/*
 * spectest.c - the `spectest` host module (see spectest.h).
 *
 * The objects are created once per store; their types are exactly the
 * ones the suite's linking tests check limits and mutability against.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include "client/spectest.h"

#include <stdlib.h>
#include <string.h>

enum { SPECTEST_MAX_EXPORTS = 16 };

struct spectest {
	uint32_t n;
	struct {
		const char *name;
		wasm_extern ext;
	} exports[SPECTEST_MAX_EXPORTS];
};

/* print* do nothing: the suite only needs them to exist and be typed. */
static wasm_host_status spectest_print(wasm_exec *e, void *env,
				       const wasm_val *args, wasm_val *results)
{
	(void)e;
	(void)env;
	(void)args;
	(void)results;
	return WASM_HOST_OK;
}

static const wasm_valtype p_i32[] = {WASM_I32};
static const wasm_valtype p_i64[] = {WASM_I64};
static const wasm_valtype p_f32[] = {WASM_F32};
static const wasm_valtype p_f64[] = {WASM_F64};
static const wasm_valtype p_i32_f32[] = {WASM_I32, WASM_F32};
static const wasm_valtype p_f64_f64[] = {WASM_F64, WASM_F64};

static const struct {
	const char *name;
	uint32_t nparams;
	const wasm_valtype *params;
} print_funcs[] = {
	{"print", 0, NULL},
	{"print_i32", 1, p_i32},
	{"print_i64", 1, p_i64},
	{"print_f32", 1, p_f32},
	{"print_f64", 1, p_f64},
	{"print_i32_f32", 2, p_i32_f32},
	{"print_f64_f64", 2, p_f64_f64},
};

static void add(spectest *st, const char *name, wasm_extern ext)
{
	st->exports[st->n].name = name;
	st->exports[st->n].ext = ext;
	st->n++;
}

static int add_global(spectest *st, wasm_store *s, const char *name,
		      wasm_valtype t, uint64_t bits)
{
	wasm_globaltype gt = {.type = t, .mut = false};
	wasm_val v;
	wasm_extern ext;

	memset(&v, 0, sizeof v);
	v.type = t;
	if (t == WASM_I32 || t == WASM_F32)
		v.u.i32 = (uint32_t)bits;
	else
		v.u.i64 = bits;
	ext.kind = WASM_EXTERN_GLOBAL;
	ext.u.global = wasm_global_new(s, gt, v);
	if (ext.u.global == NULL)
		return -1;
	add(st, name, ext);
	return 0;
}

static wasm_table_inst *new_table(wasm_store *s, bool is64)
{
	wasm_tabletype tt;

	memset(&tt, 0, sizeof tt);
	tt.elem = WASM_FUNCREF;
	tt.limits.min = 10;
	tt.limits.max = 20;
	tt.limits.has_max = true;
	tt.limits.is64 = is64;
	return wasm_table_new(s, tt, WASM_REF_NULL);
}

spectest *spectest_new(wasm_store *s)
{
	spectest *st = calloc(1, sizeof *st);
	wasm_memtype mt;
	wasm_extern ext;

	if (st == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof print_funcs / sizeof print_funcs[0];
	     i++) {
		wasm_functype ft = {
			.nparams = print_funcs[i].nparams,
			.nresults = 0,
			.params = (wasm_valtype *)print_funcs[i].params,
			.results = NULL,
		};

		ext.kind = WASM_EXTERN_FUNC;
		ext.u.func = wasm_func_new_host(s, &ft, spectest_print, NULL);
		if (ext.u.func == NULL)
			goto fail;
		add(st, print_funcs[i].name, ext);
	}
	if (add_global(st, s, "global_i32", WASM_I32, 666) ||
	    add_global(st, s, "global_i64", WASM_I64, 666) ||
	    add_global(st, s, "global_f32", WASM_F32, 0x4426a666u) ||
	    add_global(st, s, "global_f64", WASM_F64, 0x4084d4cccccccccdull))
		goto fail;

	ext.kind = WASM_EXTERN_TABLE;
	ext.u.table = new_table(s, false);
	if (ext.u.table == NULL)
		goto fail;
	add(st, "table", ext);
	/* Only table64.wast needs it; an engine without table64 omits it. */
	ext.u.table = new_table(s, true);
	if (ext.u.table != NULL)
		add(st, "table64", ext);

	memset(&mt, 0, sizeof mt);
	mt.limits.min = 1;
	mt.limits.max = 2;
	mt.limits.has_max = true;
	ext.kind = WASM_EXTERN_MEMORY;
	ext.u.memory = wasm_memory_new(s, mt);
	if (ext.u.memory == NULL)
		goto fail;
	add(st, "memory", ext);
	return st;
fail:
	free(st);
	return NULL;
}

void spectest_free(spectest *st)
{
	free(st);
}

bool spectest_lookup(const spectest *st, const uint8_t *name, size_t len,
		     wasm_extern *out)
{
	for (uint32_t i = 0; i < st->n; i++) {
		const char *n = st->exports[i].name;

		if (strlen(n) == len && memcmp(n, name, len) == 0) {
			*out = st->exports[i].ext;
			return true;
		}
	}
	return false;
}

bool spectest_is_module_name(const uint8_t *name, size_t len)
{
	return len == 8 && memcmp(name, "spectest", 8) == 0;
}
