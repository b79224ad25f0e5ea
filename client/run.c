/*
 * run.c - `hostel run`: load a core module in-process and call one export.
 *
 *   hostel run [--invoke 'NAME(ARGS)'] [--fuel N] MODULE.wasm
 *
 * Contract: options come before the file.  The module may import nothing,
 * or only from the `spectest` host module (client/spectest.h).  ARGS are
 * comma-separated literals typed by the export's signature: integers
 * (decimal, 0x hex, negative) for i32/i64, floats (decimal, hex float,
 * inf, nan) for f32/f64.  Each result is printed on its own line:
 * integers as signed decimal, floats in the shortest decimal form that
 * reads back to the same bits (NaNs as nan, -nan or nan:0xPAYLOAD).
 * Without --invoke, `_start` is called if exported.
 *
 * A core module importing wasi_snapshot_preview1 (a wasi-libc command)
 * gets WASI from runtime/wasi/preview1.c instead, configured like a
 * component's (the arguments after the file, --env, --dir): without
 * --invoke its `_start` runs and the code it passes to proc_exit becomes
 * hostel's exit status; with --invoke, `_initialize` (a reactor's) runs
 * first.
 *
 * Exit status: 0 when the call returns; 1 with "hostel: trap: MESSAGE"
 * when it traps (also in the start function); 2 on a usage error (bad
 * option, unknown export, bad argument, nothing to call); 3 when the
 * file cannot be loaded or linked (the message says why, with the byte
 * offset for decoding and validation errors).  Components go to
 * client/run_component.c (WAVE arguments and results).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/run_component.h"
#include "client/spectest.h"
#include "wasm/wasm.h"

typedef struct run_ctx {
	const char *path;
	uint8_t *bytes;
	size_t len;
	wasm_module *module;
	wasm_store *store;
	spectest *spectest;
	wasm_instance *inst;
	wasm_exec *exec;
	uint64_t fuel;
	wasi_ctx *wasi; /* preview1 modules only */
	wasi_p1 *p1;
} run_ctx;

static void run_usage(FILE *f)
{
	fprintf(f, "usage: hostel run [--invoke 'NAME(ARGS)'] [--fuel N] "
		   "MODULE.wasm\n"
		   "       hostel run [--dir HOST::GUEST]... [--env K=V]... "
		   "[--invoke 'NAME(ARGS)']\n"
		   "                  [--fuel N] COMPONENT.wasm [ARGS...]\n"
		   "\n"
		   "Loads a core module (imports: spectest only) and calls "
		   "NAME with ARGS,\n"
		   "or _start without --invoke; prints one result per line.\n"
		   "A wasi_snapshot_preview1 module gets WASI like a "
		   "component (below) and\n"
		   "exits with the code it passes to proc_exit.\n"
		   "A component gets WASI 0.2 (arguments, environment, stdio, "
		   "preopened\n"
		   "directories); without --invoke its wasi:cli/run is called "
		   "and its exit\n"
		   "status becomes hostel's.\n");
}

static uint8_t *read_whole(const char *path, size_t *len)
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

static const char *error_kind(wasm_error_kind k)
{
	switch (k) {
	case WASM_ERR_MALFORMED:
		return "malformed module";
	case WASM_ERR_INVALID:
		return "invalid module";
	case WASM_ERR_LINK:
		return "link error";
	case WASM_ERR_RESOURCE:
		return "resource error";
	default:
		return "error";
	}
}

static int load_error(const run_ctx *c, const wasm_error *err)
{
	if (err->offset == WASM_NO_OFFSET)
		fprintf(stderr, "hostel: %s: %s: %s\n", c->path,
			error_kind(err->kind), err->msg);
	else
		fprintf(stderr, "hostel: %s: %s at offset %zu: %s\n", c->path,
			error_kind(err->kind), err->offset, err->msg);
	return HOSTEL_EXIT_INPUT;
}

static int link_imports(run_ctx *c, wasm_extern *imports)
{
	const wasm_module *m = c->module;
	uint32_t bad;

	if (c->p1 != NULL && wasi_p1_link(c->p1, c->store, m, imports, &bad)) {
		if (bad == UINT32_MAX) {
			fprintf(stderr, "hostel: out of memory\n");
			return -1;
		}
		fprintf(stderr,
			"hostel: %s: link error: unknown import \"%.*s\" "
			"\"%.*s\" (not a wasi_snapshot_preview1 function "
			"of that type)\n",
			c->path, (int)m->imports[bad].module.len,
			(const char *)m->imports[bad].module.ptr,
			(int)m->imports[bad].name.len,
			(const char *)m->imports[bad].name.ptr);
		return -1;
	}
	for (uint32_t i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];

		if (c->p1 != NULL && wasi_p1_is_import(im))
			continue;
		if (!spectest_is_module_name(im->module.ptr, im->module.len) ||
		    !spectest_lookup(c->spectest, im->name.ptr, im->name.len,
				     &imports[i])) {
			fprintf(stderr,
				"hostel: %s: link error: unknown import "
				"\"%.*s\" \"%.*s\" (only spectest imports are "
				"provided)\n",
				c->path, (int)im->module.len,
				(const char *)im->module.ptr, (int)im->name.len,
				(const char *)im->name.ptr);
			return -1;
		}
	}
	return 0;
}

/* Does the module import wasi_snapshot_preview1? */
static bool uses_preview1(const wasm_module *m)
{
	for (uint32_t i = 0; i < m->nimports; i++)
		if (wasi_p1_is_import(&m->imports[i]))
			return true;
	return false;
}

/*
 * Load, link and instantiate; returns an exit code (0 = ready).  `wo`
 * configures WASI for a preview1 module; `extra` says the command line
 * has what only WASI guests take (arguments, --dir, --env).
 */
static int instantiate(run_ctx *c, const run_wasi_opts *wo, bool extra)
{
	static const uint8_t component_version[4] = {0x0d, 0x00, 0x01, 0x00};
	wasm_extern *imports;
	wasm_trap_kind trap = WASM_TRAP_NONE;
	wasm_error err;
	int rc;

	c->bytes = read_whole(c->path, &c->len);
	if (c->bytes == NULL) {
		fprintf(stderr, "hostel: %s: %s\n", c->path, strerror(errno));
		return HOSTEL_EXIT_INPUT;
	}
	if (c->len >= 8 && memcmp(c->bytes + 4, component_version, 4) == 0) {
		fprintf(stderr,
			"hostel: %s: components are not supported by "
			"`hostel run` yet\n",
			c->path);
		return HOSTEL_EXIT_INPUT;
	}
	memset(&err, 0, sizeof err);
	if (wasm_module_load(c->bytes, c->len, &c->module, &err))
		return load_error(c, &err);
	if (uses_preview1(c->module)) {
		c->wasi = run_wasi_ctx(wo);
		if (c->wasi == NULL)
			return HOSTEL_EXIT_USAGE;
		c->p1 = wasi_p1_new(c->wasi);
		if (c->p1 == NULL) {
			fprintf(stderr, "hostel: out of memory\n");
			return HOSTEL_EXIT_FAILURE;
		}
	} else if (extra) {
		fprintf(stderr, "hostel: run: arguments, --dir and --env need "
				"a WASI component or preview1 module\n");
		return HOSTEL_EXIT_USAGE;
	}
	c->store = wasm_store_new(NULL);
	if (c->store != NULL)
		c->spectest = spectest_new(c->store);
	if (c->spectest == NULL) {
		fprintf(stderr, "hostel: out of memory\n");
		return HOSTEL_EXIT_FAILURE;
	}
	imports = calloc(c->module->nimports ? c->module->nimports : 1,
			 sizeof *imports);
	if (imports == NULL) {
		fprintf(stderr, "hostel: out of memory\n");
		return HOSTEL_EXIT_FAILURE;
	}
	if (link_imports(c, imports)) {
		free(imports);
		return HOSTEL_EXIT_INPUT;
	}
	rc = wasm_instantiate(c->store, c->module, imports, c->module->nimports,
			      &c->inst, &trap, &err);
	free(imports);
	if (rc == 0 && c->p1 != NULL) {
		wasm_extern mem;

		if (wasm_instance_export(c->inst, (const uint8_t *)"memory", 6,
					 &mem) &&
		    mem.kind == WASM_EXTERN_MEMORY)
			wasi_p1_set_memory(c->p1, mem.u.memory);
	}
	if (rc == 0)
		return HOSTEL_EXIT_OK;
	if (c->wasi != NULL && wasi_ctx_exited(c->wasi))
		return wasi_ctx_exit_code(c->wasi);
	if (err.kind == WASM_ERR_NONE && trap != WASM_TRAP_NONE) {
		fprintf(stderr, "hostel: trap: %s\n", wasm_trap_message(trap));
		return HOSTEL_EXIT_FAILURE;
	}
	return load_error(c, &err);
}

/* ---- arguments --------------------------------------------------------- */

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/*
 * An integer literal of `bits` bits: decimal or 0x hex, optionally
 * negative; accepted from the signed minimum to the unsigned maximum.
 */
static int parse_int_lit(const char *s, unsigned bits, uint64_t *out)
{
	bool neg = false;
	int base = 10;
	unsigned long long v;
	char *end;

	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	/* strtoull alone would take spaces, signs and empty strings. */
	if (!isxdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end != '\0')
		return -1;
	if (bits < 64 && v >> bits)
		return -1;
	if (neg) {
		if (v > (1ull << (bits - 1)))
			return -1;
		v = 0ull - v;
	}
	if (bits < 64)
		v &= (1ull << bits) - 1;
	*out = v;
	return 0;
}

/* nan:0xPAYLOAD (with optional sign), else what strtod/strtof read. */
static int parse_float_lit(const char *s, bool is64, uint64_t *bits)
{
	bool neg = *s == '-';
	const char *p = (*s == '-' || *s == '+') ? s + 1 : s;
	char *end;

	if (!strncmp(p, "nan:0x", 6)) {
		unsigned long long payload;

		errno = 0;
		payload = strtoull(p + 6, &end, 16);
		if (errno || *end != '\0' || payload == 0 ||
		    payload >= (is64 ? 1ull << 52 : 1ull << 23))
			return -1;
		*bits = is64 ? 0x7ff0000000000000ull | payload
			     : 0x7f800000ull | payload;
		if (neg)
			*bits |= is64 ? 1ull << 63 : 1ull << 31;
		return 0;
	}
	errno = 0;
	if (is64) {
		double d = strtod(s, &end);

		if (*end != '\0' || end == s)
			return -1;
		memcpy(bits, &d, sizeof d);
	} else {
		float f = strtof(s, &end);
		uint32_t b;

		if (*end != '\0' || end == s)
			return -1;
		memcpy(&b, &f, sizeof b);
		*bits = b;
	}
	return 0;
}

static int parse_arg(const char *s, wasm_valtype t, wasm_val *out)
{
	uint64_t x;

	memset(out, 0, sizeof *out);
	out->type = t;
	switch ((uint8_t)t) {
	case WASM_I32:
		if (parse_int_lit(s, 32, &x))
			return -1;
		out->u.i32 = (uint32_t)x;
		return 0;
	case WASM_I64:
		return parse_int_lit(s, 64, &out->u.i64);
	case WASM_F32:
		if (parse_float_lit(s, false, &x))
			return -1;
		out->u.f32 = (uint32_t)x;
		return 0;
	case WASM_F64:
		return parse_float_lit(s, true, &out->u.f64);
	default:
		return -1;
	}
}

/* Splits "NAME(A, B)" into name and args (modifies expr). */
static int split_invoke(char *expr, char **name, char ***args, uint32_t *nargs)
{
	char *open = strchr(expr, '('), *close, *body, *s;
	uint32_t n = 0;

	*args = NULL;
	*nargs = 0;
	if (open == NULL) {
		*name = trim(expr);
		return **name ? 0 : -1;
	}
	close = expr + strlen(expr);
	while (close > open && (close[-1] == ' ' || close[-1] == '\t'))
		close--;
	if (close == open + 1 || close[-1] != ')')
		return -1;
	close[-1] = '\0';
	*open = '\0';
	*name = trim(expr);
	body = trim(open + 1);
	if (**name == '\0')
		return -1;
	if (*body == '\0')
		return 0;
	for (s = body; *s; s++)
		n += *s == ',';
	*args = calloc((size_t)n + 1, sizeof **args);
	if (*args == NULL)
		return -1;
	n = 0;
	for (s = body;;) {
		char *comma = strchr(s, ',');

		if (comma != NULL)
			*comma = '\0';
		(*args)[n++] = trim(s);
		if ((*args)[n - 1][0] == '\0')
			return -1;
		if (comma == NULL)
			break;
		s = comma + 1;
	}
	*nargs = n;
	return 0;
}

/* ---- results ----------------------------------------------------------- */

/* The shortest %.*g that reads back to the same bits. */
static void print_float(uint64_t bits, bool is64)
{
	int sign = is64 ? (int)(bits >> 63) : (int)(bits >> 31 & 1);
	uint64_t exp_mask = is64 ? 0x7ff0000000000000ull : 0x7f800000ull;
	uint64_t frac = is64 ? bits & 0xfffffffffffffull : bits & 0x7fffffull;
	uint64_t canon = is64 ? 1ull << 51 : 1ull << 22;
	char buf[64];

	if ((bits & exp_mask) == exp_mask && frac != 0) {
		if (frac == canon)
			printf("%snan\n", sign ? "-" : "");
		else
			printf("%snan:0x%" PRIx64 "\n", sign ? "-" : "", frac);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		if (is64) {
			double d;

			memcpy(&d, &bits, sizeof d);
			snprintf(buf, sizeof buf, "%.*g", prec, d);
			if (strtod(buf, NULL) == d || prec == 17)
				break;
		} else {
			uint32_t b = (uint32_t)bits;
			float f;

			memcpy(&f, &b, sizeof f);
			snprintf(buf, sizeof buf, "%.*g", prec, (double)f);
			if (strtof(buf, NULL) == f || prec == 9)
				break;
		}
	}
	/* -0 must stay negative: %g prints "-0", which reads back right. */
	printf("%s\n", buf);
}

static void print_result(const wasm_val *v)
{
	uint32_t num;

	switch ((uint8_t)v->type) {
	case WASM_I32:
		printf("%" PRId32 "\n", (int32_t)v->u.i32);
		break;
	case WASM_I64:
		printf("%" PRId64 "\n", (int64_t)v->u.i64);
		break;
	case WASM_F32:
		print_float(v->u.f32, false);
		break;
	case WASM_F64:
		print_float(v->u.f64, true);
		break;
	case WASM_V128:
		printf("0x%016" PRIx64 "%016" PRIx64 "\n", v->u.v128.hi,
		       v->u.v128.lo);
		break;
	default:
		if (v->u.ref == WASM_REF_NULL)
			printf("null\n");
		else if (wasm_ref_extern_number(v->u.ref, &num))
			printf("ref.extern %" PRIu32 "\n", num);
		else
			printf("ref %s\n", wasm_valtype_name(v->type));
		break;
	}
}

/* ---- the call ---------------------------------------------------------- */

static int call(run_ctx *c, const char *name, char **args, uint32_t nargs)
{
	wasm_extern ext;
	const wasm_functype *ft;
	wasm_val *vals;
	wasm_exec_status st;
	uint32_t n;

	if (!wasm_instance_export(c->inst, (const uint8_t *)name, strlen(name),
				  &ext)) {
		fprintf(stderr, "hostel: no export \"%s\"\n", name);
		return HOSTEL_EXIT_USAGE;
	}
	if (ext.kind != WASM_EXTERN_FUNC) {
		fprintf(stderr, "hostel: export \"%s\" is not a function\n",
			name);
		return HOSTEL_EXIT_USAGE;
	}
	ft = wasm_func_type(ext.u.func);
	if (nargs != ft->nparams) {
		fprintf(stderr,
			"hostel: \"%s\" takes %" PRIu32
			" arguments, got %" PRIu32 "\n",
			name, ft->nparams, nargs);
		return HOSTEL_EXIT_USAGE;
	}
	n = ft->nparams > ft->nresults ? ft->nparams : ft->nresults;
	vals = calloc(n ? n : 1, sizeof *vals);
	if (vals == NULL) {
		fprintf(stderr, "hostel: out of memory\n");
		return HOSTEL_EXIT_FAILURE;
	}
	for (uint32_t i = 0; i < nargs; i++) {
		if (parse_arg(args[i], ft->params[i], &vals[i])) {
			fprintf(stderr,
				"hostel: argument %" PRIu32 " \"%s\" is not "
				"a valid %s\n",
				i + 1, args[i],
				wasm_valtype_name(ft->params[i]));
			free(vals);
			return HOSTEL_EXIT_USAGE;
		}
	}
	if (c->exec != NULL) /* a reactor's _initialize ran first */
		wasm_exec_free(c->exec);
	c->exec = wasm_exec_new(c->store, NULL);
	if (c->exec == NULL) {
		fprintf(stderr, "hostel: out of memory\n");
		free(vals);
		return HOSTEL_EXIT_FAILURE;
	}
	if (c->fuel)
		wasm_exec_set_fuel(c->exec, c->fuel);
	st = wasm_exec_call(c->exec, ext.u.func, vals, nargs);
	switch (st) {
	case WASM_EXEC_DONE:
		n = wasm_exec_results(c->exec, vals, ft->nresults);
		for (uint32_t i = 0; i < n; i++)
			print_result(&vals[i]);
		free(vals);
		return HOSTEL_EXIT_OK;
	case WASM_EXEC_TRAP:
		if (c->wasi != NULL && wasi_ctx_exited(c->wasi)) {
			free(vals);
			return wasi_ctx_exit_code(c->wasi);
		}
		fprintf(stderr, "hostel: trap: %s\n",
			wasm_exec_trap_message(c->exec));
		break;
	case WASM_EXEC_EXCEPTION:
		fprintf(stderr, "hostel: trap: %s\n",
			wasm_trap_message(WASM_TRAP_UNCAUGHT_EXCEPTION));
		break;
	case WASM_EXEC_OUT_OF_FUEL:
		fprintf(stderr, "hostel: trap: out of fuel\n");
		break;
	case WASM_EXEC_BLOCKED:
		fprintf(stderr, "hostel: trap: a host function blocked\n");
		break;
	}
	free(vals);
	return HOSTEL_EXIT_FAILURE;
}

static void run_free(run_ctx *c)
{
	if (c->exec != NULL)
		wasm_exec_free(c->exec);
	spectest_free(c->spectest);
	if (c->store != NULL)
		wasm_store_free(c->store);
	wasi_p1_free(c->p1);
	wasi_ctx_free(c->wasi);
	wasm_module_free(c->module);
	free(c->bytes);
}

int cmd_run(int argc, char **argv)
{
	run_ctx c;
	run_wasi_opts wasi;
	char *invoke = NULL, *name = NULL, **args = NULL, *end;
	uint32_t nargs = 0;
	int i, rc;

	memset(&c, 0, sizeof c);
	memset(&wasi, 0, sizeof wasi);
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			run_usage(stdout);
			return HOSTEL_EXIT_OK;
		} else if (!strcmp(a, "--invoke") && i + 1 < argc) {
			invoke = argv[++i];
		} else if (!strncmp(a, "--invoke=", 9)) {
			invoke = argv[i] + 9;
		} else if (!strcmp(a, "--dir") && i + 1 < argc) {
			if (run_wasi_add(&wasi.dirs, &wasi.ndirs, argv[++i]))
				return HOSTEL_EXIT_FAILURE;
		} else if (!strcmp(a, "--env") && i + 1 < argc) {
			if (run_wasi_add(&wasi.envs, &wasi.nenvs, argv[++i]))
				return HOSTEL_EXIT_FAILURE;
		} else if (!strcmp(a, "--fuel") && i + 1 < argc) {
			errno = 0;
			c.fuel = strtoull(argv[++i], &end, 10);
			if (errno || *end || c.fuel == 0) {
				fprintf(stderr, "hostel: bad --fuel\n");
				return HOSTEL_EXIT_USAGE;
			}
		} else {
			fprintf(stderr, "hostel: run: unknown option %s\n", a);
			run_usage(stderr);
			return HOSTEL_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		run_usage(stderr);
		return HOSTEL_EXIT_USAGE;
	}
	c.path = argv[i];
	wasi.args = (const char *const *)&argv[i];
	wasi.nargs = (uint32_t)(argc - i);
	if (run_is_component_file(c.path)) { /* client/run_component.c */
		rc = run_component(c.path, invoke, c.fuel, &wasi);
		free(wasi.dirs);
		free(wasi.envs);
		return rc;
	}
	if (invoke != NULL) {
		invoke = strdup(invoke);
		if (invoke == NULL ||
		    split_invoke(invoke, &name, &args, &nargs)) {
			fprintf(stderr, "hostel: bad --invoke: expected "
					"'NAME(ARG, ...)'\n");
			free(args);
			free(invoke);
			return HOSTEL_EXIT_USAGE;
		}
	}
	rc = instantiate(&c, &wasi, i != argc - 1 || wasi.ndirs || wasi.nenvs);
	if (rc == HOSTEL_EXIT_OK) {
		wasm_extern ext;

		if (invoke != NULL && c.p1 != NULL &&
		    wasm_instance_export(c.inst, (const uint8_t *)"_initialize",
					 11, &ext))
			rc = call(&c, "_initialize", NULL, 0);
		if (rc != HOSTEL_EXIT_OK)
			;
		else if (invoke != NULL)
			rc = call(&c, name, args, nargs);
		else if (wasm_instance_export(c.inst, (const uint8_t *)"_start",
					      6, &ext))
			rc = call(&c, "_start", NULL, 0);
		else {
			fprintf(stderr,
				"hostel: %s: no --invoke and no _start "
				"export\n",
				c.path);
			rc = HOSTEL_EXIT_USAGE;
		}
	}
	run_free(&c);
	free(wasi.dirs);
	free(wasi.envs);
	free(args);
	free(invoke);
	return rc;
}
