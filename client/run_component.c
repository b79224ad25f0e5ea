/*
 * run_component.c - `hostel run` for components:
 *
 *   hostel run [--invoke 'NAME(ARGS)'] [--fuel N] COMPONENT.wasm
 *
 * Contract: the component is loaded (decode + validate), instantiated
 * in a fresh store whose linker provides WASI 0.2 (runtime/wasi: the
 * arguments after the file, --env K=V, --dir HOST::GUEST preopens, the
 * process's stdio; any other import fails to instantiate, and the
 * message names it), then one export is called.  NAME is a root export ("add")
 * or a function of an exported instance ("wasi:cli/run@0.2.0#run"); ARGS are
 * WAVE values typed by the export's declared parameters.  Without
 * --invoke, wasi:cli/run@0.2.x's `run` is called when exported.  The
 * result, if the function has one, is printed as WAVE on one line.
 *
 * Exit status: for wasi:cli/run, the guest's: the code it passed to
 * wasi:cli/exit, else 0 when run returns ok and 1 when it returns err.
 * Otherwise 0 when the call returns; 1 with "hostel: trap: MESSAGE"
 * when it (or instantiation) traps; 2 on a usage error (bad --invoke,
 * unknown export, bad argument, nothing to call); 3 when the file cannot
 * be loaded or linked, or uses what the runtime does not implement yet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cabi/wave.h"
#include "client/commands.h"
#include "client/run_component.h"
#include "component/component.h"
#include "component/instance.h"
#include "wasi/wasi.h"

int run_wasi_add(const char ***v, uint32_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof *nv);

	if (nv == NULL) {
		fprintf(stderr, "hostel: out of memory\n");
		return -1;
	}
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

bool run_is_component_file(const char *path)
{
	uint8_t head[8];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL)
		return false;
	n = fread(head, 1, sizeof head, f);
	fclose(f);
	return n == sizeof head && cm_is_component_binary(head, n);
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
			errno = EIO;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* "iface#name" -> the instance export's function; "name" -> root. */
static cm_func *lookup_func(cm_component_instance *inst, const char *name,
			    size_t len)
{
	char *s = strndup(name, len);
	char *hash;
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

/* The wasi:cli/run@0.2.x `run` export, if any. */
static cm_func *find_run(cm_component_instance *inst, const char **name)
{
	for (uint32_t i = 0; i < cm_instance_nexports(inst); i++) {
		cm_sort sort;
		const char *n = cm_instance_export_name(inst, i, &sort);

		if (sort == CM_SORT_INSTANCE &&
		    !strncmp(n, "wasi:cli/run@0.2.", 17)) {
			*name = n;
			return cm_instance_export(inst, n, "run");
		}
	}
	return NULL;
}

static int print_result(const cm_type *ft, const cm_val *results)
{
	char *out = NULL;
	size_t len = 0;

	if (ft->u.func.result == NULL)
		return HOSTEL_EXIT_OK;
	if (wave_print_results(ft, results, &out, &len)) {
		fprintf(stderr, "hostel: cannot print the result\n");
		return HOSTEL_EXIT_FAILURE;
	}
	printf("%s\n", out);
	free(out);
	return HOSTEL_EXIT_OK;
}

static int call(const char *path, cm_store *s, cm_component_instance *inst,
		const char *invoke, const wasi_ctx *wasi)
{
	wave_call wc;
	wave_error werr;
	cm_val results[1];
	uint32_t nres = 0;
	cm_error err;
	cm_func *f;
	int rc;

	memset(&wc, 0, sizeof wc);
	if (invoke == NULL) {
		const char *name = NULL;

		f = find_run(inst, &name);
		if (f == NULL) {
			fprintf(stderr,
				"hostel: %s: no --invoke and no "
				"wasi:cli/run export\n",
				path);
			return HOSTEL_EXIT_USAGE;
		}
		if (cm_func_type(f)->u.func.nparams != 0) {
			fprintf(stderr, "hostel: %s: %s#run takes arguments\n",
				path, name);
			return HOSTEL_EXIT_USAGE;
		}
	} else {
		if (wave_parse_call(invoke, strlen(invoke), lookup_type, inst,
				    &wc, &werr)) {
			fprintf(stderr, "hostel: bad --invoke: %u:%u: %s\n",
				werr.line, werr.column, werr.msg);
			wave_call_free(&wc);
			return HOSTEL_EXIT_USAGE;
		}
		f = lookup_func(inst, wc.name, wc.name_len);
		if (f == NULL) {
			fprintf(stderr, "hostel: %s: no exported function %s\n",
				path, wc.name);
			wave_call_free(&wc);
			return HOSTEL_EXIT_USAGE;
		}
	}
	rc = cm_invoke(s, f, wc.args, wc.nargs, results, &nres, &err);
	wave_call_free(&wc);
	fflush(stdout);
	if (rc && wasi_ctx_exited(wasi))
		return wasi_ctx_exit_code(wasi);
	if (rc) {
		switch (err.kind) {
		case CM_ERR_TRAP:
			fprintf(stderr, "hostel: trap: %s\n", err.msg);
			return HOSTEL_EXIT_FAILURE;
		case CM_ERR_VALUE:
			fprintf(stderr, "hostel: bad argument: %s\n", err.msg);
			return HOSTEL_EXIT_USAGE;
		case CM_ERR_UNSUPPORTED:
			fprintf(stderr, "hostel: %s: %s\n", path, err.msg);
			return HOSTEL_EXIT_INPUT;
		default:
			fprintf(stderr, "hostel: %s: %s\n",
				cm_error_kind_name(err.kind), err.msg);
			return HOSTEL_EXIT_FAILURE;
		}
	}
	if (invoke == NULL) {
		/* run: func() -> result: ok is 0, err is 1 */
		rc = nres == 1 && results[0].kind == CM_RESULT &&
				     results[0].u.variant.index != 0
			     ? HOSTEL_EXIT_FAILURE
			     : HOSTEL_EXIT_OK;
		cm_vals_free(results, nres);
		return rc;
	}
	rc = print_result(cm_func_type(f), results);
	cm_vals_free(results, nres);
	return rc;
}

/* A wasi_ctx from the command line; NULL (message printed) on failure. */
static wasi_ctx *make_wasi(const run_wasi_opts *o)
{
	wasi_ctx *w = wasi_ctx_new();

	if (w == NULL)
		goto oom;
	for (uint32_t i = 0; i < o->nargs; i++)
		if (wasi_ctx_push_arg(w, o->args[i]))
			goto oom;
	for (uint32_t i = 0; i < o->nenvs; i++) {
		const char *eq = strchr(o->envs[i], '=');
		char *k;
		int rc;

		if (eq == NULL || eq == o->envs[i]) {
			fprintf(stderr, "hostel: bad --env %s: expected K=V\n",
				o->envs[i]);
			wasi_ctx_free(w);
			return NULL;
		}
		k = strndup(o->envs[i], (size_t)(eq - o->envs[i]));
		rc = k == NULL || wasi_ctx_push_env(w, k, eq + 1);
		free(k);
		if (rc)
			goto oom;
	}
	for (uint32_t i = 0; i < o->ndirs; i++) {
		const char *sep = strstr(o->dirs[i], "::");
		char *host =
			sep ? strndup(o->dirs[i], (size_t)(sep - o->dirs[i]))
			    : strdup(o->dirs[i]);
		const char *guest = sep ? sep + 2 : o->dirs[i];
		int rc;

		if (host == NULL)
			goto oom;
		rc = wasi_ctx_preopen(w, host, guest);
		if (rc)
			fprintf(stderr, "hostel: --dir %s: %s\n", host,
				strerror(errno));
		free(host);
		if (rc) {
			wasi_ctx_free(w);
			return NULL;
		}
	}
	return w;
oom:
	fprintf(stderr, "hostel: out of memory\n");
	wasi_ctx_free(w);
	return NULL;
}

int run_component(const char *path, const char *invoke, uint64_t fuel,
		  const run_wasi_opts *wopts)
{
	cm_component *c = NULL;
	cm_component_instance *inst;
	cm_store *s = NULL;
	cm_linker *l = NULL;
	wasi_ctx *wasi;
	wasm_error werr;
	cm_error err;
	uint8_t *bytes;
	size_t len = 0;
	int rc;

	bytes = read_all(path, &len);
	if (bytes == NULL) {
		fprintf(stderr, "hostel: %s: %s\n", path, strerror(errno));
		return HOSTEL_EXIT_INPUT;
	}
	rc = cm_component_load(bytes, len, &c, &werr);
	free(bytes);
	if (rc) {
		fprintf(stderr, "hostel: %s: %s at offset %zu: %s\n", path,
			werr.kind == WASM_ERR_MALFORMED ? "malformed"
							: "invalid",
			werr.offset, werr.msg);
		return HOSTEL_EXIT_INPUT;
	}
	s = cm_store_new(NULL);
	if (s == NULL) {
		cm_component_free(c);
		fprintf(stderr, "hostel: out of memory\n");
		return HOSTEL_EXIT_FAILURE;
	}
	cm_store_set_fuel(s, fuel ? fuel : UINT64_MAX);
	wasi = make_wasi(wopts);
	if (wasi == NULL) {
		cm_store_free(s);
		cm_component_free(c);
		return HOSTEL_EXIT_USAGE;
	}
	l = cm_linker_new();
	if (l == NULL || wasi_add_to_linker(wasi, l)) {
		fprintf(stderr, "hostel: out of memory\n");
		rc = HOSTEL_EXIT_FAILURE;
	} else if (cm_instantiate(s, c, l, &inst, &err)) {
		if (wasi_ctx_exited(wasi)) {
			rc = wasi_ctx_exit_code(wasi);
		} else if (err.kind == CM_ERR_TRAP) {
			fprintf(stderr, "hostel: trap: %s\n", err.msg);
			rc = HOSTEL_EXIT_FAILURE;
		} else {
			fprintf(stderr, "hostel: %s: %s: %s\n", path,
				cm_error_kind_name(err.kind), err.msg);
			rc = err.kind == CM_ERR_NOMEM ? HOSTEL_EXIT_FAILURE
						      : HOSTEL_EXIT_INPUT;
		}
	} else {
		rc = call(path, s, inst, invoke, wasi);
	}
	cm_store_free(s);
	cm_linker_free(l);
	wasi_ctx_free(wasi);
	cm_component_free(c);
	return rc;
}
