/*
 * fuzz_module.c - libFuzzer target over the whole core-module path:
 * decode, validate, compile, instantiate (with every import satisfied by
 * a placeholder of the right type) and call every exported function with
 * zero arguments under a fuel budget and small stack and memory limits.
 *
 * Contract: any input may be rejected, trap, run out of fuel or block;
 * nothing may crash, leak, hang or trip a sanitizer.  Built only with
 * --enable-fuzzing (clang).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wasm/wasm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { FUEL = 100000, MAX_PAGES = 16, MAX_ELEMS = 10000 };

/* Host functions answer with zeroes of the right types, or block. */
static wasm_host_status fuzz_host(wasm_exec *e, void *env, const wasm_val *args,
				  wasm_val *results)
{
	const wasm_functype *t = env;

	(void)e;
	(void)args;
	for (uint32_t i = 0; i < t->nresults; i++) {
		memset(&results[i], 0, sizeof results[i]);
		results[i].type = t->results[i];
	}
	return t->nparams % 2 ? WASM_HOST_BLOCK : WASM_HOST_OK;
}

static wasm_val zero_of(wasm_valtype t)
{
	wasm_val v;

	memset(&v, 0, sizeof v);
	v.type = t;
	return v;
}

static int make_import(wasm_store *s, const wasm_module *m,
		       const wasm_import *im, wasm_extern *out)
{
	out->kind = im->kind;
	switch (im->kind) {
	case WASM_EXTERN_FUNC: {
		const wasm_functype *t = &m->types[im->u.func_typeidx];
		out->u.func = wasm_func_new_host(s, t, fuzz_host, (void *)t);
		return out->u.func ? 0 : -1;
	}
	case WASM_EXTERN_TABLE:
		out->u.table = wasm_table_new(s, im->u.table, WASM_REF_NULL);
		return out->u.table ? 0 : -1;
	case WASM_EXTERN_MEMORY:
		out->u.memory = wasm_memory_new(s, im->u.memory);
		return out->u.memory ? 0 : -1;
	case WASM_EXTERN_GLOBAL:
		out->u.global = wasm_global_new(s, im->u.global,
						zero_of(im->u.global.type));
		return out->u.global ? 0 : -1;
	case WASM_EXTERN_TAG:
		out->u.tag = wasm_tag_new(s, &m->types[im->u.tag.typeidx]);
		return out->u.tag ? 0 : -1;
	}
	return -1;
}

static void call_exports(wasm_store *s, const wasm_module *m,
			 wasm_instance *inst)
{
	wasm_exec_config cfg = {.max_stack_bytes = 256 * 1024,
				.max_call_depth = 2000};
	wasm_exec *e = wasm_exec_new(s, &cfg);

	if (e == NULL)
		return;
	for (uint32_t i = 0; i < m->nexports; i++) {
		const wasm_export *x = &m->exports[i];
		wasm_extern ext;
		wasm_val args[16];

		if (x->kind != WASM_EXTERN_FUNC ||
		    !wasm_instance_export(inst, x->name.ptr, x->name.len, &ext))
			continue;
		const wasm_functype *t = wasm_func_type(ext.u.func);
		if (t->nparams > 16)
			continue;
		for (uint32_t k = 0; k < t->nparams; k++)
			args[k] = zero_of(t->params[k]);
		wasm_exec_set_fuel(e, FUEL);
		wasm_exec_status st =
			wasm_exec_call(e, ext.u.func, args, t->nparams);
		/* Drive blocked calls to the end: each resume answers zeroes.
		 */
		for (int n = 0; st == WASM_EXEC_BLOCKED && n < 64; n++)
			st = wasm_exec_resume_trap(e, "fuzz: resumed as trap");
		if (st == WASM_EXEC_BLOCKED || st == WASM_EXEC_OUT_OF_FUEL) {
			/* Abandon: a fresh exec for the next export. */
			wasm_exec_free(e);
			e = wasm_exec_new(s, &cfg);
			if (e == NULL)
				return;
		}
	}
	wasm_exec_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	wasm_module *m = NULL;
	wasm_error err;
	/* start functions too run under a budget: one may loop for ever */
	wasm_store_limits lim = {.max_memory_pages = MAX_PAGES,
				 .max_table_elems = MAX_ELEMS,
				 .start_fuel = FUEL};
	wasm_store *s;
	wasm_extern *imports = NULL;
	wasm_instance *inst = NULL;
	wasm_trap_kind trap = WASM_TRAP_NONE;

	if (wasm_module_load(data, size, &m, &err) != 0)
		return 0;
	s = wasm_store_new(&lim);
	if (s == NULL)
		goto out;
	if (m->nimports) {
		imports = calloc(m->nimports, sizeof *imports);
		if (imports == NULL)
			goto out;
		for (uint32_t i = 0; i < m->nimports; i++)
			if (make_import(s, m, &m->imports[i], &imports[i]) != 0)
				goto out;
	}
	if (wasm_instantiate(s, m, imports, m->nimports, &inst, &trap, &err) ==
	    0)
		call_exports(s, m, inst);
out:
	free(imports);
	wasm_store_free(s);
	wasm_module_free(m);
	return 0;
}
