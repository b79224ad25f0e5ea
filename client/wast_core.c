/*
 * wast_core.c - the core-module backend of `hostel wast`.
 *
 * Contract: runs the commands of one core test script exactly as the
 * suite's README describes, through the public engine API (wasm/wasm.h)
 * only.  All instances of a script share one store, so registered
 * instances' objects are the very ones later modules import; `spectest`
 * is available from the start.  Every action runs under a fuel budget
 * and stack limits, so a runaway test ends as a failure, not a hang.
 *
 * Outcomes: a command PASSes when the engine does what the command
 * expects, FAILs otherwise (with the expectation and what happened in
 * `why`), and is SKIPped only when it cannot be run by this driver at all
 * (an unknown command type).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/spectest.h"
#include "client/wast.h"
#include "client/wast_value.h"
#include "wasm/wasm.h"

/* A name as JSON gives it: bytes, may contain NUL; NULL = unnamed. */
typedef struct name_ref {
	const char *ptr;
	size_t len;
} name_ref;

typedef struct binding {
	char *name; /* owned; NULL for the unnamed slot */
	size_t len;
	void *obj; /* wasm_module * or wasm_instance * */
} binding;

typedef struct bindings {
	binding *v;
	size_t n, cap;
} bindings;

typedef struct core_script {
	char *dir;
	wast_options opts;
	wasm_store *store;
	wasm_exec *exec;
	spectest *spectest;
	wasm_module **modules; /* every module loaded, freed after the store */
	size_t nmodules, modules_cap;
	bindings defs;	/* module_definition: name -> wasm_module */
	bindings insts; /* name -> wasm_instance */
	bindings regs;	/* register "as" -> wasm_instance */
	wasm_instance *current;
} core_script;

/* The outcome of an action. */
typedef enum action_status {
	ACT_RETURNED,
	ACT_TRAPPED,
	ACT_EXCEPTION,
	ACT_ERROR, /* could not run it, or it ran away: see why */
} action_status;

typedef struct action_result {
	action_status status;
	wasm_val *vals;
	uint32_t nvals;
	wasm_trap_kind trap;
	char msg[256]; /* the trap message */
} action_result;

/* ---- names and bindings -------------------------------------------------- */

static name_ref json_name(json_t *obj, const char *key)
{
	json_t *s = json_object_get(obj, key);
	name_ref n = {NULL, 0};

	if (json_is_string(s)) {
		n.ptr = json_string_value(s);
		n.len = json_string_length(s);
	}
	return n;
}

static binding *bindings_find(bindings *b, name_ref name)
{
	for (size_t i = 0; i < b->n; i++) {
		binding *e = &b->v[i];

		if (name.ptr == NULL
			    ? e->name == NULL
			    : (e->name != NULL && e->len == name.len &&
			       memcmp(e->name, name.ptr, name.len) == 0))
			return e;
	}
	return NULL;
}

/* Binds `name` to obj, replacing an earlier binding of that name. */
static int bindings_set(bindings *b, name_ref name, void *obj)
{
	binding *e = bindings_find(b, name);

	if (e != NULL) {
		e->obj = obj;
		return 0;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 8;
		binding *v = realloc(b->v, cap * sizeof *v);

		if (v == NULL)
			return -1;
		b->v = v;
		b->cap = cap;
	}
	e = &b->v[b->n];
	e->name = NULL;
	e->len = name.len;
	if (name.ptr != NULL) {
		e->name = malloc(name.len + 1);
		if (e->name == NULL)
			return -1;
		memcpy(e->name, name.ptr, name.len);
		e->name[name.len] = '\0';
	}
	e->obj = obj;
	b->n++;
	return 0;
}

static void bindings_free(bindings *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].name);
	free(b->v);
}

/* ---- script state ------------------------------------------------------ */

static wasm_exec *new_exec(core_script *cs)
{
	wasm_exec_config cfg = {
		.max_stack_bytes = cs->opts.max_stack_bytes,
		.max_call_depth = cs->opts.max_call_depth,
	};

	return wasm_exec_new(cs->store, &cfg);
}

static void core_close(void *state)
{
	core_script *cs = state;

	if (cs == NULL)
		return;
	if (cs->exec != NULL)
		wasm_exec_free(cs->exec);
	spectest_free(cs->spectest);
	/* Instances refer to their modules: the store goes first. */
	if (cs->store != NULL)
		wasm_store_free(cs->store);
	for (size_t i = 0; i < cs->nmodules; i++)
		wasm_module_free(cs->modules[i]);
	free(cs->modules);
	bindings_free(&cs->defs);
	bindings_free(&cs->insts);
	bindings_free(&cs->regs);
	free(cs->dir);
	free(cs);
}

static void *core_open(const char *dir, const wast_options *opts, char *why,
		       size_t n)
{
	core_script *cs = calloc(1, sizeof *cs);
	wasm_store_limits limits;

	if (cs == NULL) {
		snprintf(why, n, "out of memory");
		return NULL;
	}
	cs->opts = *opts;
	cs->dir = strdup(dir);
	memset(&limits, 0, sizeof limits);
	limits.start_fuel = opts->fuel;
	if (cs->dir != NULL)
		cs->store = wasm_store_new(&limits);
	if (cs->store != NULL)
		cs->spectest = spectest_new(cs->store);
	if (cs->spectest != NULL)
		cs->exec = new_exec(cs);
	if (cs->exec == NULL) {
		snprintf(why, n, "cannot create the store, spectest or exec");
		core_close(cs);
		return NULL;
	}
	return cs;
}

/* ---- loading and instantiating ------------------------------------------ */

/*
 * Loads the command's binary.  Returns 0 and *out (owned by the script),
 * or -1 with *err (kind NONE when the file could not be read).
 */
static int load(core_script *cs, json_t *cmd, wasm_module **out,
		wasm_error *err)
{
	const char *file = wast_cmd_binary(cmd);
	uint8_t *bytes;
	size_t len;
	int rc;

	memset(err, 0, sizeof *err);
	if (file == NULL) {
		snprintf(err->msg, sizeof err->msg, "command has no binary");
		return -1;
	}
	bytes = wast_read_file(cs->dir, file, &len);
	if (bytes == NULL) {
		snprintf(err->msg, sizeof err->msg, "cannot read %s", file);
		return -1;
	}
	if (cs->nmodules == cs->modules_cap) {
		size_t cap = cs->modules_cap ? 2 * cs->modules_cap : 16;
		wasm_module **v = realloc(cs->modules, cap * sizeof *v);

		if (v == NULL) {
			free(bytes);
			snprintf(err->msg, sizeof err->msg, "out of memory");
			return -1;
		}
		cs->modules = v;
		cs->modules_cap = cap;
	}
	rc = wasm_module_load(bytes, len, out, err);
	free(bytes);
	if (rc == 0)
		cs->modules[cs->nmodules++] = *out;
	return rc;
}

static const char *err_kind_name(wasm_error_kind k)
{
	switch (k) {
	case WASM_ERR_MALFORMED:
		return "malformed";
	case WASM_ERR_INVALID:
		return "invalid";
	case WASM_ERR_LINK:
		return "link error";
	case WASM_ERR_RESOURCE:
		return "resource error";
	default:
		return "error";
	}
}

static void format_error(const wasm_error *err, char *buf, size_t n)
{
	if (err->kind == WASM_ERR_NONE)
		snprintf(buf, n, "%s", err->msg);
	else if (err->offset == WASM_NO_OFFSET)
		snprintf(buf, n, "%s: %s", err_kind_name(err->kind), err->msg);
	else
		snprintf(buf, n, "%s at offset %zu: %s",
			 err_kind_name(err->kind), err->offset, err->msg);
}

static const char *kind_name(wasm_externkind k)
{
	static const char *const names[] = {"func", "table", "memory", "global",
					    "tag"};

	return (unsigned)k < 5 ? names[k] : "?";
}

/* Finds what import `im` names: spectest or a registered instance. */
static bool resolve_import(core_script *cs, const wasm_import *im,
			   wasm_extern *out)
{
	name_ref mod = {(const char *)im->module.ptr, im->module.len};
	binding *reg = bindings_find(&cs->regs, mod);

	if (reg != NULL)
		return wasm_instance_export(reg->obj, im->name.ptr,
					    im->name.len, out);
	if (spectest_is_module_name(im->module.ptr, im->module.len))
		return spectest_lookup(cs->spectest, im->name.ptr, im->name.len,
				       out);
	return false;
}

typedef enum inst_status {
	INST_OK,
	INST_LINK,  /* unknown import or incompatible import type */
	INST_TRAP,  /* segment initialisation or start function trapped */
	INST_ERROR, /* anything else (resources) */
} inst_status;

static inst_status instantiate(core_script *cs, const wasm_module *m,
			       wasm_instance **out, wasm_trap_kind *trap,
			       char *why, size_t n)
{
	wasm_extern *imports;
	wasm_error err;
	int rc;

	*trap = WASM_TRAP_NONE;
	imports = calloc(m->nimports ? m->nimports : 1, sizeof *imports);
	if (imports == NULL) {
		snprintf(why, n, "out of memory");
		return INST_ERROR;
	}
	for (uint32_t i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];

		if (!resolve_import(cs, im, &imports[i])) {
			snprintf(why, n,
				 "unknown import \"%.*s\" \"%.*s\" (%s)",
				 (int)im->module.len,
				 (const char *)im->module.ptr,
				 (int)im->name.len, (const char *)im->name.ptr,
				 kind_name(im->kind));
			free(imports);
			return INST_LINK;
		}
	}
	memset(&err, 0, sizeof err);
	rc = wasm_instantiate(cs->store, m, imports, m->nimports, out, trap,
			      &err);
	free(imports);
	if (rc == 0)
		return INST_OK;
	if (err.kind == WASM_ERR_NONE && *trap != WASM_TRAP_NONE) {
		snprintf(why, n, "trap: %s", wasm_trap_message(*trap));
		return INST_TRAP;
	}
	format_error(&err, why, n);
	return err.kind == WASM_ERR_LINK ? INST_LINK : INST_ERROR;
}

/* ---- actions ---------------------------------------------------------------
 */

static wasm_instance *find_instance(core_script *cs, json_t *obj,
				    const char *key)
{
	name_ref name = json_name(obj, key);
	binding *b;

	if (name.ptr == NULL)
		return cs->current;
	b = bindings_find(&cs->insts, name);
	return b != NULL ? b->obj : NULL;
}

static void action_fail(action_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void action_fail(action_result *r, const char *fmt, ...)
{
	va_list ap;

	r->status = ACT_ERROR;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof r->msg, fmt, ap);
	va_end(ap);
}

static void run_call(core_script *cs, wasm_func *f, const wasm_val *args,
		     uint32_t nargs, action_result *r)
{
	const wasm_functype *ft = wasm_func_type(f);
	wasm_exec_status st;

	wasm_exec_set_fuel(cs->exec, cs->opts.fuel);
	st = wasm_exec_call(cs->exec, f, args, nargs);
	switch (st) {
	case WASM_EXEC_DONE:
		r->status = ACT_RETURNED;
		r->vals = calloc(ft->nresults ? ft->nresults : 1,
				 sizeof *r->vals);
		if (r->vals == NULL) {
			action_fail(r, "out of memory");
			return;
		}
		r->nvals = wasm_exec_results(cs->exec, r->vals, ft->nresults);
		return;
	case WASM_EXEC_TRAP:
		r->status = ACT_TRAPPED;
		r->trap = wasm_exec_trap(cs->exec);
		snprintf(r->msg, sizeof r->msg, "%s",
			 wasm_exec_trap_message(cs->exec));
		return;
	case WASM_EXEC_EXCEPTION:
		r->status = ACT_EXCEPTION;
		snprintf(r->msg, sizeof r->msg, "%s",
			 wasm_trap_message(WASM_TRAP_UNCAUGHT_EXCEPTION));
		return;
	case WASM_EXEC_OUT_OF_FUEL:
		action_fail(r, "ran out of fuel (runaway?)");
		break;
	case WASM_EXEC_BLOCKED:
		action_fail(r, "a host function blocked");
		break;
	}
	/* The call is still outstanding: start over with a fresh exec. */
	wasm_exec_free(cs->exec);
	cs->exec = new_exec(cs);
	if (cs->exec == NULL)
		action_fail(r, "cannot recreate the exec");
}

static void invoke(core_script *cs, wasm_func *f, json_t *jargs,
		   action_result *r)
{
	const wasm_functype *ft = wasm_func_type(f);
	size_t nargs = json_array_size(jargs);
	wasm_val *args;
	char why[200];

	if (nargs != ft->nparams) {
		snprintf(r->msg, sizeof r->msg,
			 "%zu arguments for %" PRIu32 " parameters", nargs,
			 ft->nparams);
		r->status = ACT_ERROR;
		return;
	}
	args = calloc(nargs ? nargs : 1, sizeof *args);
	if (args == NULL) {
		action_fail(r, "out of memory");
		return;
	}
	for (size_t i = 0; i < nargs; i++) {
		if (wast_value_parse_arg(json_array_get(jargs, i), &args[i],
					 why, sizeof why)) {
			action_fail(r, "%s", why);
			free(args);
			return;
		}
		if ((uint8_t)args[i].type != (uint8_t)ft->params[i]) {
			snprintf(r->msg, sizeof r->msg,
				 "argument %zu is %s, parameter is %s", i,
				 wasm_valtype_name(args[i].type),
				 wasm_valtype_name(ft->params[i]));
			r->status = ACT_ERROR;
			free(args);
			return;
		}
	}
	run_call(cs, f, args, (uint32_t)nargs, r);
	free(args);
}

static void perform(core_script *cs, json_t *action, action_result *r)
{
	const char *type = json_string_value(json_object_get(action, "type"));
	name_ref field = json_name(action, "field");
	wasm_instance *inst;
	wasm_extern ext;

	memset(r, 0, sizeof *r);
	if (type == NULL || field.ptr == NULL) {
		action_fail(r, "malformed action");
		return;
	}
	inst = find_instance(cs, action, "module");
	if (inst == NULL) {
		action_fail(r, "no such instance (%s)",
			    json_name(action, "module").ptr ? "named"
							    : "current");
		return;
	}
	if (!wasm_instance_export(inst, (const uint8_t *)field.ptr, field.len,
				  &ext)) {
		action_fail(r, "no export \"%s\"", field.ptr);
		return;
	}
	if (!strcmp(type, "invoke")) {
		if (ext.kind != WASM_EXTERN_FUNC) {
			action_fail(r, "export \"%s\" is not a function",
				    field.ptr);
			return;
		}
		invoke(cs, ext.u.func, json_object_get(action, "args"), r);
		return;
	}
	if (!strcmp(type, "get")) {
		if (ext.kind != WASM_EXTERN_GLOBAL) {
			action_fail(r, "export \"%s\" is not a global",
				    field.ptr);
			return;
		}
		r->vals = malloc(sizeof *r->vals);
		if (r->vals == NULL) {
			action_fail(r, "out of memory");
			return;
		}
		r->vals[0] = wasm_global_get(ext.u.global);
		r->nvals = 1;
		r->status = ACT_RETURNED;
		return;
	}
	action_fail(r, "unknown action type %s", type);
}

/* What an action did, for messages. */
static void describe(const action_result *r, char *buf, size_t n)
{
	size_t used;

	switch (r->status) {
	case ACT_RETURNED:
		used = (size_t)snprintf(buf, n, "returned [");
		for (uint32_t i = 0; i < r->nvals && used < n; i++) {
			char v[80];

			wast_value_format(&r->vals[i], v, sizeof v);
			used += (size_t)snprintf(buf + used, n - used, "%s%s",
						 i ? " " : "", v);
		}
		if (used < n)
			snprintf(buf + used, n - used, "]");
		break;
	case ACT_TRAPPED:
		snprintf(buf, n, "trapped: %s", r->msg);
		break;
	case ACT_EXCEPTION:
		snprintf(buf, n, "threw an uncaught exception");
		break;
	case ACT_ERROR:
		snprintf(buf, n, "could not run: %s", r->msg);
		break;
	}
}

/*
 * The expected trap text against ours: ours contains it, or it starts
 * with our kind's reason (the spec interpreter appends detail, as in
 * "uninitialized element 2").
 */
static bool trap_text_matches(const char *expected, wasm_trap_kind kind,
			      const char *msg)
{
	const char *reason = wasm_trap_message(kind);

	if (expected == NULL)
		return true;
	if (strstr(msg, expected) != NULL)
		return true;
	return reason != NULL && *reason != '\0' &&
	       strncmp(expected, reason, strlen(reason)) == 0;
}

/* ---- commands ---------------------------------------------------------- */

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

static wast_result cmd_module(core_script *cs, json_t *cmd, char *why, size_t n)
{
	name_ref name = json_name(cmd, "name");
	wasm_module *m;
	wasm_instance *inst;
	wasm_trap_kind trap;
	wasm_error err;
	char buf[400];

	/* A later action must not run against a stale instance. */
	cs->current = NULL;
	if (name.ptr != NULL)
		bindings_set(&cs->insts, name, NULL);
	if (load(cs, cmd, &m, &err)) {
		format_error(&err, buf, sizeof buf);
		return fail(why, n, "expected the module to load; %s", buf);
	}
	if (instantiate(cs, m, &inst, &trap, buf, sizeof buf) != INST_OK)
		return fail(why, n, "expected instantiation to succeed; %s",
			    buf);
	cs->current = inst;
	if (name.ptr != NULL && bindings_set(&cs->insts, name, inst))
		return fail(why, n, "out of memory");
	return WAST_PASS;
}

static wast_result cmd_module_definition(core_script *cs, json_t *cmd,
					 char *why, size_t n)
{
	name_ref name = json_name(cmd, "name");
	wasm_module *m;
	wasm_error err;
	char buf[400];

	bindings_set(&cs->defs, name, NULL);
	if (load(cs, cmd, &m, &err)) {
		format_error(&err, buf, sizeof buf);
		return fail(why, n, "expected the module to load; %s", buf);
	}
	if (bindings_set(&cs->defs, name, m))
		return fail(why, n, "out of memory");
	return WAST_PASS;
}

static wast_result cmd_module_instance(core_script *cs, json_t *cmd, char *why,
				       size_t n)
{
	binding *def = bindings_find(&cs->defs, json_name(cmd, "module"));
	name_ref name = json_name(cmd, "instance");
	wasm_instance *inst;
	wasm_trap_kind trap;
	char buf[400];

	cs->current = NULL;
	if (name.ptr != NULL)
		bindings_set(&cs->insts, name, NULL);
	if (def == NULL || def->obj == NULL)
		return fail(why, n, "no module definition to instantiate");
	if (instantiate(cs, def->obj, &inst, &trap, buf, sizeof buf) != INST_OK)
		return fail(why, n, "expected instantiation to succeed; %s",
			    buf);
	cs->current = inst;
	if (name.ptr != NULL && bindings_set(&cs->insts, name, inst))
		return fail(why, n, "out of memory");
	return WAST_PASS;
}

static wast_result cmd_register(core_script *cs, json_t *cmd, char *why,
				size_t n)
{
	wasm_instance *inst = find_instance(cs, cmd, "name");
	name_ref as = json_name(cmd, "as");

	if (as.ptr == NULL)
		return fail(why, n, "register without \"as\"");
	if (inst == NULL)
		return fail(why, n, "no instance to register as \"%s\"",
			    as.ptr);
	if (bindings_set(&cs->regs, as, inst))
		return fail(why, n, "out of memory");
	return WAST_PASS;
}

static wast_result check_returned(const action_result *r, json_t *expected,
				  char *why, size_t n)
{
	char got[600], exp[300];
	size_t nexp = json_array_size(expected);

	if (r->status != ACT_RETURNED) {
		describe(r, got, sizeof got);
		wast_pattern_format(expected, exp, sizeof exp);
		return fail(why, n, "expected %s; %s", exp, got);
	}
	if (r->nvals != nexp) {
		describe(r, got, sizeof got);
		wast_pattern_format(expected, exp, sizeof exp);
		return fail(why, n, "expected %s; %s (count differs)", exp,
			    got);
	}
	for (size_t i = 0; i < nexp; i++) {
		if (!wast_value_matches(json_array_get(expected, i),
					&r->vals[i], NULL, 0)) {
			describe(r, got, sizeof got);
			wast_pattern_format(expected, exp, sizeof exp);
			return fail(why, n, "expected %s; %s", exp, got);
		}
	}
	return WAST_PASS;
}

static wast_result cmd_action(core_script *cs, json_t *cmd, const char *type,
			      char *why, size_t n)
{
	json_t *action = json_object_get(cmd, "action");
	const char *text = json_string_value(json_object_get(cmd, "text"));
	action_result r;
	wast_result res = WAST_PASS;
	char got[600];

	if (!json_is_object(action))
		return fail(why, n, "%s without an action", type);
	perform(cs, action, &r);
	describe(&r, got, sizeof got);
	if (!strcmp(type, "action")) {
		if (r.status != ACT_RETURNED)
			res = fail(why, n, "expected a normal return; %s", got);
	} else if (!strcmp(type, "assert_return")) {
		res = check_returned(&r, json_object_get(cmd, "expected"), why,
				     n);
	} else if (!strcmp(type, "assert_trap")) {
		if (r.status != ACT_TRAPPED ||
		    !trap_text_matches(text, r.trap, r.msg))
			res = fail(why, n, "expected trap \"%s\"; %s",
				   text ? text : "", got);
	} else if (!strcmp(type, "assert_exhaustion")) {
		if (r.status != ACT_TRAPPED ||
		    (r.trap != WASM_TRAP_STACK_EXHAUSTED &&
		     !trap_text_matches(text, r.trap, r.msg)))
			res = fail(why, n, "expected exhaustion \"%s\"; %s",
				   text ? text : "", got);
	} else { /* assert_exception */
		if (r.status != ACT_EXCEPTION)
			res = fail(why, n,
				   "expected an uncaught exception; "
				   "%s",
				   got);
	}
	free(r.vals);
	return res;
}

/* assert_invalid, assert_malformed: loading must fail. */
static wast_result cmd_load_fails(core_script *cs, json_t *cmd, char *why,
				  size_t n)
{
	const char *text = json_string_value(json_object_get(cmd, "text"));
	wasm_module *m;
	wasm_error err;
	char buf[400];

	if (load(cs, cmd, &m, &err) == 0)
		return fail(why, n, "expected load to fail (\"%s\"); it loaded",
			    text ? text : "");
	if (err.kind != WASM_ERR_MALFORMED && err.kind != WASM_ERR_INVALID) {
		format_error(&err, buf, sizeof buf);
		return fail(why, n, "expected \"%s\"; %s", text ? text : "",
			    buf);
	}
	return WAST_PASS;
}

/* assert_uninstantiable, assert_unlinkable. */
static wast_result cmd_instantiate_fails(core_script *cs, json_t *cmd,
					 bool want_trap, char *why, size_t n)
{
	const char *text = json_string_value(json_object_get(cmd, "text"));
	wasm_module *m;
	wasm_instance *inst;
	wasm_trap_kind trap;
	wasm_error err;
	inst_status st;
	char buf[400];

	if (load(cs, cmd, &m, &err)) {
		format_error(&err, buf, sizeof buf);
		return fail(why, n, "expected the module to load; %s", buf);
	}
	st = instantiate(cs, m, &inst, &trap, buf, sizeof buf);
	if (st == INST_OK)
		snprintf(buf, sizeof buf, "it instantiated");
	if (want_trap) {
		if (st == INST_TRAP &&
		    trap_text_matches(text, trap, wasm_trap_message(trap)))
			return WAST_PASS;
		return fail(why, n, "expected instantiation to trap \"%s\"; %s",
			    text ? text : "", buf);
	}
	if (st == INST_LINK)
		return WAST_PASS;
	return fail(why, n, "expected a link error \"%s\"; %s",
		    text ? text : "", buf);
}

static wast_result core_run(void *state, json_t *cmd, char *why, size_t n)
{
	core_script *cs = state;
	const char *type = json_string_value(json_object_get(cmd, "type"));

	if (type == NULL)
		return fail(why, n, "command without a type");
	if (!strcmp(type, "module"))
		return cmd_module(cs, cmd, why, n);
	if (!strcmp(type, "module_definition"))
		return cmd_module_definition(cs, cmd, why, n);
	if (!strcmp(type, "module_instance"))
		return cmd_module_instance(cs, cmd, why, n);
	if (!strcmp(type, "register"))
		return cmd_register(cs, cmd, why, n);
	if (!strcmp(type, "action") || !strcmp(type, "assert_return") ||
	    !strcmp(type, "assert_trap") ||
	    !strcmp(type, "assert_exhaustion") ||
	    !strcmp(type, "assert_exception"))
		return cmd_action(cs, cmd, type, why, n);
	if (!strcmp(type, "assert_invalid") ||
	    !strcmp(type, "assert_malformed"))
		return cmd_load_fails(cs, cmd, why, n);
	if (!strcmp(type, "assert_uninstantiable"))
		return cmd_instantiate_fails(cs, cmd, true, why, n);
	if (!strcmp(type, "assert_unlinkable"))
		return cmd_instantiate_fails(cs, cmd, false, why, n);
	snprintf(why, n, "command type %s not supported", type);
	return WAST_SKIP;
}

const wast_backend wast_core_backend = {
	.kind = "module",
	.open = core_open,
	.run = core_run,
	.close = core_close,
};
