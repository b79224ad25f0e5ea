/*
 * wast_component.c - the component backend of `hostel wast` (commands
 * whose kind is "component"; cm-testsuite/README.md is the contract).
 *
 * Contract: loading is real: module_definition, module, assert_invalid
 * and assert_malformed decode and validate through component/component.h.
 * Instantiation and calls are real too (run/instance.h): module and
 * module_instance instantiate, each instance in its own store (as
 * wasmtime gives each its own); action / assert_return / assert_trap
 * invoke an export of the current (or named) instance with the fuel of
 * --fuel; arguments and expected results are converted against the
 * export's declared types (client/wast_cvalue.h).  assert_trap passes
 * only when the call traps with a message containing `text`;
 * assert_uninstantiable needs instantiation to trap.  What the runtime
 * does not implement (async lifts, async built-ins) FAILs with the
 * runtime's "... not implemented" message: honest failures, never
 * passes or skips.  Definitions replaced by a later one of the same name
 * stay alive until the script ends (instances may still use them).
 *
 * Outcomes: assert_malformed needs a decode error (kind MALFORMED);
 * assert_invalid accepts a decode or a validation error, as wasmtime
 * does.  The expected `text` is wasmparser's; ours is only compared when
 * HOSTEL_WAST_STRICT_TEXT is set in the environment (then a rejection for
 * another reason FAILs), since the decision, not the wording, is the
 * conformance property.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/wave.h"
#include "client/wast.h"
#include "client/wast_cvalue.h"
#include "component/component.h"
#include "run/instance.h"

typedef struct def {
	char *name; /* NULL: the unnamed definition */
	cm_component *c;
} def;

/* An instance, alone in its store. */
typedef struct inst {
	char *name; /* NULL: unnamed */
	cm_store *store;
	cm_component_instance *ci;
} inst;

typedef struct comp_script {
	char *dir;
	def *defs;
	size_t ndefs, cap;
	bool strict_text;
	wast_options opts;
	cm_component **retired; /* replaced definitions */
	size_t nretired, retired_cap;
	inst *insts;
	size_t ninsts, insts_cap;
	inst *current;
} comp_script;

static wast_result fail(char *why, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static wast_result fail(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return WAST_FAIL;
}

static void *comp_open(const char *dir, const wast_options *opts, char *why,
		       size_t n)
{
	comp_script *cs = calloc(1, sizeof *cs);

	if (cs == NULL || (cs->dir = strdup(dir)) == NULL) {
		free(cs);
		snprintf(why, n, "out of memory");
		return NULL;
	}
	cs->strict_text = getenv("HOSTEL_WAST_STRICT_TEXT") != NULL;
	cs->opts = *opts;
	return cs;
}

static void comp_close(void *state)
{
	comp_script *cs = state;

	for (size_t i = 0; i < cs->ninsts; i++) {
		free(cs->insts[i].name);
		cm_store_free(cs->insts[i].store);
	}
	free(cs->insts);
	for (size_t i = 0; i < cs->ndefs; i++) {
		free(cs->defs[i].name);
		cm_component_free(cs->defs[i].c);
	}
	free(cs->defs);
	for (size_t i = 0; i < cs->nretired; i++)
		cm_component_free(cs->retired[i]);
	free(cs->retired);
	free(cs->dir);
	free(cs);
}

/* Remember c under `name` (NULL = unnamed), replacing an earlier one. */
static int define(comp_script *cs, const char *name, cm_component *c)
{
	for (size_t i = 0; i < cs->ndefs; i++) {
		def *d = &cs->defs[i];

		if ((d->name == NULL && name == NULL) ||
		    (d->name != NULL && name != NULL &&
		     !strcmp(d->name, name))) {
			/* instances of the old one may still run */
			if (cs->nretired == cs->retired_cap) {
				size_t cap = cs->retired_cap
						     ? 2 * cs->retired_cap
						     : 16;
				cm_component **v =
					realloc(cs->retired, cap * sizeof *v);

				if (v == NULL)
					return -1;
				cs->retired = v;
				cs->retired_cap = cap;
			}
			cs->retired[cs->nretired++] = d->c;
			d->c = c;
			return 0;
		}
	}
	if (cs->ndefs == cs->cap) {
		size_t cap = cs->cap ? 2 * cs->cap : 16;
		def *v = realloc(cs->defs, cap * sizeof *v);

		if (v == NULL)
			return -1;
		cs->defs = v;
		cs->cap = cap;
	}
	cs->defs[cs->ndefs].name = name ? strdup(name) : NULL;
	if (name != NULL && cs->defs[cs->ndefs].name == NULL)
		return -1;
	cs->defs[cs->ndefs++].c = c;
	return 0;
}

typedef enum load_status {
	LOAD_OK,
	LOAD_REJECTED, /* decode or validation error in err */
	LOAD_NO_FILE,  /* unreadable or missing file: see why */
} load_status;

static load_status load(comp_script *cs, json_t *cmd, cm_component **out,
			wasm_error *err, char *why, size_t n)
{
	const char *file = wast_cmd_binary(cmd);
	uint8_t *bytes;
	size_t len = 0;
	int rc;

	if (file == NULL) {
		snprintf(why, n, "command carries no binary");
		return LOAD_NO_FILE;
	}
	bytes = wast_read_file(cs->dir, file, &len);
	if (bytes == NULL) {
		snprintf(why, n, "cannot read %s", file);
		return LOAD_NO_FILE;
	}
	rc = cm_component_load(bytes, len, out, err);
	free(bytes);
	return rc ? LOAD_REJECTED : LOAD_OK;
}

static const char *kind_name(wasm_error_kind k)
{
	switch (k) {
	case WASM_ERR_MALFORMED:
		return "malformed";
	case WASM_ERR_INVALID:
		return "invalid";
	case WASM_ERR_RESOURCE:
		return "resource limit";
	default:
		return "error";
	}
}

/* ---- instances and calls ------------------------------------------------ */

static const def *find_def(comp_script *cs, const char *name)
{
	for (size_t i = 0; i < cs->ndefs; i++) {
		def *d = &cs->defs[i];

		if ((d->name == NULL && name == NULL) ||
		    (d->name != NULL && name != NULL && !strcmp(d->name, name)))
			return d;
	}
	return NULL;
}

/* A fresh store configured from the options, for one instance. */
static cm_store *new_store(comp_script *cs)
{
	cm_store_config cfg;

	memset(&cfg, 0, sizeof cfg);
	cfg.limits.start_fuel = cs->opts.fuel;
	cfg.max_stack_bytes = cs->opts.max_stack_bytes;
	cfg.max_call_depth = cs->opts.max_call_depth;
	/* the suite expects wasmtime's reentrance rule (digest 2.15) */
	cfg.reentrance_compat = true;
	/* async built-ins trap when called, not at instantiation, so the
	 * sync parts of a script still run */
	cfg.lazy_unsupported = true;
	/* scheduling policy: FIFO, or shuffled by HOSTEL_SCHED_SEED=N */
	if (getenv("HOSTEL_SCHED_SEED") != NULL)
		cfg.sched_seed = strtoull(getenv("HOSTEL_SCHED_SEED"), NULL, 0);
	return cm_store_new(&cfg);
}

/*
 * Instantiate c in a new store; on success it becomes current (and is
 * remembered under `name`).  *err says why it failed.
 */
static int instantiate(comp_script *cs, const cm_component *c, const char *name,
		       cm_error *err)
{
	cm_store *s = new_store(cs);
	cm_component_instance *ci;
	inst *in;

	memset(err, 0, sizeof *err);
	if (s == NULL) {
		err->kind = CM_ERR_NOMEM;
		snprintf(err->msg, sizeof err->msg, "out of memory");
		return -1;
	}
	if (cm_instantiate(s, c, NULL, &ci, err)) {
		cm_store_free(s);
		return -1;
	}
	if (cs->ninsts == cs->insts_cap) {
		size_t cap = cs->insts_cap ? 2 * cs->insts_cap : 16;
		inst *v = realloc(cs->insts, cap * sizeof *v);

		if (v == NULL) {
			cm_store_free(s);
			err->kind = CM_ERR_NOMEM;
			snprintf(err->msg, sizeof err->msg, "out of memory");
			return -1;
		}
		cs->insts = v;
		cs->insts_cap = cap;
	}
	in = &cs->insts[cs->ninsts++];
	in->name = name ? strdup(name) : NULL;
	in->store = s;
	in->ci = ci;
	cs->current = in;
	return 0;
}

static inst *find_inst(comp_script *cs, const char *name)
{
	if (name == NULL)
		return cs->current;
	/* the newest instance of that name */
	for (size_t i = cs->ninsts; i-- > 0;)
		if (cs->insts[i].name != NULL &&
		    !strcmp(cs->insts[i].name, name))
			return &cs->insts[i];
	return NULL;
}

static wast_result cmd_module_instance(comp_script *cs, json_t *cmd, char *why,
				       size_t n)
{
	const char *mod = json_string_value(json_object_get(cmd, "module"));
	const char *name = json_string_value(json_object_get(cmd, "instance"));
	const def *d = find_def(cs, mod);
	cm_error err;

	if (d == NULL)
		return fail(why, n, "no component definition `%s`",
			    mod ? mod : "(unnamed)");
	if (instantiate(cs, d->c, name, &err))
		return fail(why, n, "instantiation failed: %s: %s",
			    cm_error_kind_name(err.kind), err.msg);
	return WAST_PASS;
}

/* What an invoke did. */
typedef struct outcome {
	int rc; /* 0: returned */
	cm_error err;
	const cm_type *ft;
	cm_val results[1];
	uint32_t nresults;
} outcome;

/* Perform the invoke action; -1 (with why) if it could not be tried. */
static int invoke(comp_script *cs, json_t *action, outcome *o, char *why,
		  size_t n)
{
	const char *type = json_string_value(json_object_get(action, "type"));
	const char *mod = json_string_value(json_object_get(action, "module"));
	const char *field = json_string_value(json_object_get(action, "field"));
	json_t *jargs = json_object_get(action, "args");
	inst *in = find_inst(cs, mod);
	cm_func *f;
	cm_val *args;
	uint32_t nargs;
	size_t i;

	memset(o, 0, sizeof *o);
	if (type == NULL || strcmp(type, "invoke"))
		return fail(why, n, "action %s not supported",
			    type ? type : "?"),
		       -1;
	if (in == NULL)
		return fail(why, n, "no instance `%s`",
			    mod ? mod : "(current)"),
		       -1;
	f = field ? cm_instance_export(in->ci, NULL, field) : NULL;
	if (f == NULL)
		return fail(why, n, "no exported function `%s`",
			    field ? field : "?"),
		       -1;
	o->ft = cm_func_type(f);
	nargs = o->ft->u.func.nparams;
	if (json_array_size(jargs) != nargs)
		return fail(why, n,
			    "`%s` takes %u arguments, the script "
			    "gives %zu",
			    field, nargs, json_array_size(jargs)),
		       -1;
	args = calloc(nargs ? nargs : 1, sizeof *args);
	if (args == NULL)
		return fail(why, n, "out of memory"), -1;
	for (i = 0; i < nargs; i++) {
		char w[256];

		if (wast_cvalue_parse(json_array_get(jargs, i),
				      o->ft->u.func.params[i].type, &args[i], w,
				      sizeof w)) {
			cm_vals_free(args, nargs);
			free(args);
			return fail(why, n, "argument %zu: %s", i + 1, w), -1;
		}
	}
	cm_store_set_fuel(in->store, cs->opts.fuel);
	o->rc = cm_invoke(in->store, f, args, nargs, o->results, &o->nresults,
			  &o->err);
	cm_vals_free(args, nargs);
	free(args);
	return 0;
}

static void outcome_free(outcome *o)
{
	cm_vals_free(o->results, o->nresults);
}

/* The result of a call as WAVE, for messages. */
static void result_text(const outcome *o, char *buf, size_t n)
{
	char *txt = NULL;
	size_t len;

	if (o->nresults == 0) {
		snprintf(buf, n, "()");
	} else if (wave_print(&o->results[0], o->ft->u.func.result, &txt,
			      &len) == 0) {
		snprintf(buf, n, "%s", txt);
	} else {
		snprintf(buf, n, "(unprintable)");
	}
	free(txt);
}

static wast_result call_failed(const outcome *o, char *why, size_t n)
{
	return fail(why, n, "%s: %s", cm_error_kind_name(o->err.kind),
		    o->err.msg);
}

static wast_result cmd_action(comp_script *cs, json_t *cmd, char *why, size_t n)
{
	outcome o;
	wast_result r = WAST_PASS;

	if (invoke(cs, json_object_get(cmd, "action"), &o, why, n))
		return WAST_FAIL;
	if (o.rc)
		r = call_failed(&o, why, n);
	outcome_free(&o);
	return r;
}

static wast_result cmd_assert_return(comp_script *cs, json_t *cmd, char *why,
				     size_t n)
{
	json_t *expected = json_object_get(cmd, "expected");
	wast_result r = WAST_PASS;
	char got[512], w[256];
	cm_val want;
	outcome o;

	if (invoke(cs, json_object_get(cmd, "action"), &o, why, n))
		return WAST_FAIL;
	if (o.rc) {
		r = call_failed(&o, why, n);
		goto out;
	}
	if (json_array_size(expected) != o.nresults) {
		result_text(&o, got, sizeof got);
		r = fail(why, n, "expected %zu results, got %u: %s",
			 json_array_size(expected), o.nresults, got);
		goto out;
	}
	if (o.nresults == 0)
		goto out;
	if (wast_cvalue_parse(json_array_get(expected, 0), o.ft->u.func.result,
			      &want, w, sizeof w)) {
		cm_val_free(&want);
		r = fail(why, n, "expected result: %s", w);
		goto out;
	}
	if (!cm_val_equal(&want, &o.results[0])) {
		char *exp_txt =
			json_dumps(json_array_get(expected, 0), JSON_COMPACT);

		result_text(&o, got, sizeof got);
		r = fail(why, n, "result mismatch: expected %s, got %s",
			 exp_txt ? exp_txt : "?", got);
		free(exp_txt);
	}
	cm_val_free(&want);
out:
	outcome_free(&o);
	return r;
}

static wast_result cmd_assert_trap(comp_script *cs, json_t *cmd, char *why,
				   size_t n)
{
	const char *text = json_string_value(json_object_get(cmd, "text"));
	wast_result r = WAST_PASS;
	char got[512];
	outcome o;

	if (invoke(cs, json_object_get(cmd, "action"), &o, why, n))
		return WAST_FAIL;
	if (o.rc == 0) {
		result_text(&o, got, sizeof got);
		r = fail(why, n, "expected a trap (\"%s\"), got %s",
			 text ? text : "", got);
	} else if (o.err.kind != CM_ERR_TRAP) {
		r = call_failed(&o, why, n);
	} else if (text != NULL && strstr(o.err.msg, text) == NULL) {
		r = fail(why, n, "expected a trap \"%s\", got trap: %s", text,
			 o.err.msg);
	}
	outcome_free(&o);
	return r;
}

/* assert_uninstantiable (must trap) and assert_unlinkable (must fail). */
static wast_result cmd_cannot_instantiate(comp_script *cs, json_t *cmd,
					  bool trap, char *why, size_t n)
{
	const char *text = json_string_value(json_object_get(cmd, "text"));
	cm_component *c;
	wasm_error werr;
	cm_error err;

	switch (load(cs, cmd, &c, &werr, why, n)) {
	case LOAD_NO_FILE:
		return WAST_FAIL;
	case LOAD_REJECTED:
		return fail(why, n,
			    "expected the component to load; %s at "
			    "offset %zu: %s",
			    kind_name(werr.kind), werr.offset, werr.msg);
	case LOAD_OK:
		break;
	}
	if (define(cs, "\x01assert", c)) {
		cm_component_free(c);
		return fail(why, n, "out of memory");
	}
	if (instantiate(cs, c, "\x01assert", &err) == 0)
		return fail(why, n, "expected instantiation to fail (\"%s\")",
			    text ? text : "");
	if (trap && err.kind != CM_ERR_TRAP)
		return fail(why, n, "expected a trap (\"%s\"); %s: %s",
			    text ? text : "", cm_error_kind_name(err.kind),
			    err.msg);
	if (trap && text != NULL && strstr(err.msg, text) == NULL)
		return fail(why, n, "expected a trap \"%s\", got trap: %s",
			    text, err.msg);
	return WAST_PASS;
}

/* module_definition; and module, which also instantiates. */
static wast_result cmd_define(comp_script *cs, json_t *cmd, bool and_inst,
			      char *why, size_t n)
{
	const char *name = json_string_value(json_object_get(cmd, "name"));
	cm_component *c;
	wasm_error err;

	switch (load(cs, cmd, &c, &err, why, n)) {
	case LOAD_NO_FILE:
		return WAST_FAIL;
	case LOAD_REJECTED:
		return fail(why, n,
			    "expected the component to load; %s at "
			    "offset %zu: %s",
			    kind_name(err.kind), err.offset, err.msg);
	case LOAD_OK:
		break;
	}
	if (define(cs, name, c)) {
		cm_component_free(c);
		return fail(why, n, "out of memory");
	}
	if (and_inst) {
		cm_error ierr;

		if (instantiate(cs, c, name, &ierr))
			return fail(why, n, "instantiation failed: %s: %s",
				    cm_error_kind_name(ierr.kind), ierr.msg);
	}
	return WAST_PASS;
}

static wast_result cmd_load_fails(comp_script *cs, json_t *cmd, bool malformed,
				  char *why, size_t n)
{
	const char *text = json_string_value(json_object_get(cmd, "text"));
	cm_component *c;
	wasm_error err;

	switch (load(cs, cmd, &c, &err, why, n)) {
	case LOAD_NO_FILE:
		return WAST_FAIL;
	case LOAD_OK:
		cm_component_free(c);
		return fail(why, n, "expected %s (\"%s\"); it loaded",
			    malformed ? "a decode error" : "a load error",
			    text ? text : "");
	case LOAD_REJECTED:
		break;
	}
	if (malformed && err.kind != WASM_ERR_MALFORMED)
		return fail(why, n,
			    "expected a decode error (\"%s\"); got %s at "
			    "offset %zu: %s",
			    text ? text : "", kind_name(err.kind), err.offset,
			    err.msg);
	if (err.kind != WASM_ERR_MALFORMED && err.kind != WASM_ERR_INVALID)
		return fail(why, n, "expected \"%s\"; got %s: %s",
			    text ? text : "", kind_name(err.kind), err.msg);
	if (cs->strict_text && text != NULL && *text != '\0' &&
	    strstr(err.msg, text) == NULL)
		return fail(why, n, "rejected, but expected \"%s\"; got: %s",
			    text, err.msg);
	return WAST_PASS;
}

static wast_result comp_run(void *state, json_t *cmd, char *why, size_t n)
{
	comp_script *cs = state;
	const char *type = json_string_value(json_object_get(cmd, "type"));

	if (type == NULL)
		return fail(why, n, "command without a type");
	if (!strcmp(type, "module_definition"))
		return cmd_define(cs, cmd, false, why, n);
	if (!strcmp(type, "module"))
		return cmd_define(cs, cmd, true, why, n);
	if (!strcmp(type, "assert_invalid"))
		return cmd_load_fails(cs, cmd, false, why, n);
	if (!strcmp(type, "assert_malformed"))
		return cmd_load_fails(cs, cmd, true, why, n);
	if (!strcmp(type, "module_instance"))
		return cmd_module_instance(cs, cmd, why, n);
	if (!strcmp(type, "action"))
		return cmd_action(cs, cmd, why, n);
	if (!strcmp(type, "assert_return"))
		return cmd_assert_return(cs, cmd, why, n);
	if (!strcmp(type, "assert_trap"))
		return cmd_assert_trap(cs, cmd, why, n);
	if (!strcmp(type, "assert_uninstantiable"))
		return cmd_cannot_instantiate(cs, cmd, true, why, n);
	if (!strcmp(type, "assert_unlinkable"))
		return cmd_cannot_instantiate(cs, cmd, false, why, n);
	snprintf(why, n, "command type %s not supported for components", type);
	return WAST_SKIP;
}

const wast_backend wast_component_backend = {
	.kind = "component",
	.open = comp_open,
	.run = comp_run,
	.close = comp_close,
};
