/*
 * call.c - calling a component-level function: canon lift (the sync
 * path of definitions.py canon_lift), host functions, and Store.invoke
 * (the host calling an export).
 *
 * Contract (rt.h, task.h): every function, whatever implements it, is
 * called with the caller's on_start/on_resolve callbacks and calls each
 * once.  A lifted call, in order (digest 2.13):
 *   1. enter the callee instance from the caller (reentrance, poisoned);
 *   2. create the Task; take an exec for its implicit thread;
 *   3. on_start -> args; lower them into the callee (max 16 flat,
 *      spilling through the callee's realloc);
 *   4. run the core function; lift its result (max 1 flat);
 *   5. task.return: borrows must be gone; on_resolve(result) (the caller
 *      lowers it into its own memory);
 *   6. post-return with may_leave cleared;
 *   7. leave.
 * Any failure after step 1 poisons the entering set (digest 2.15) and
 * comes back as a trap with the suite's message: ABI traps as cabi
 * words them (prefixed "wasm trap: " when the peer is another component,
 * as wasmtime's adapters report them), core traps as "wasm trap: ...".
 * Async lifts are not implemented: calling one traps.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component/rt.h"
#include "sched/sched.h"

#define WASM_TRAP_PREFIX "wasm trap: "

/* ---- trap messages --------------------------------------------------------
 */

void cm_note_trap(cm_store *s, const cabi_error *err)
{
	snprintf(s->last_trap, sizeof s->last_trap, "%s", err->msg);
}

/* A cabi failure of cx as a call error, worded for its peer. */
static int cx_fail(const cabi_cx *cx, cabi_error *err)
{
	const cabi_error *ce = &cx->err;

	if (ce->kind == CABI_ERR_TRAP && !cx->host_peer &&
	    strncmp(ce->msg, WASM_TRAP_PREFIX, strlen(WASM_TRAP_PREFIX)))
		return cabi_fail(err, CABI_ERR_TRAP, WASM_TRAP_PREFIX "%s",
				 ce->msg);
	*err = *ce;
	if (err->kind == CABI_ERR_NONE)
		err->kind = CABI_ERR_TRAP;
	return -1;
}

/* The trap of a core call that did not return normally. */
static int exec_fail(wasm_exec *e, wasm_exec_status st, cabi_error *err)
{
	wasm_trap_kind k = wasm_exec_trap(e);

	switch (st) {
	case WASM_EXEC_EXCEPTION:
		return cabi_fail(err, CABI_ERR_TRAP,
				 WASM_TRAP_PREFIX "uncaught exception");
	case WASM_EXEC_BLOCKED:
		return cabi_fail(err, CABI_ERR_TRAP,
				 "cannot block a synchronous task before "
				 "returning");
	case WASM_EXEC_OUT_OF_FUEL:
		return cabi_fail(err, CABI_ERR_TRAP,
				 WASM_TRAP_PREFIX "all fuel consumed");
	default:
		break;
	}
	if (k == WASM_TRAP_HOST)
		return cabi_fail(err, CABI_ERR_TRAP, "%s",
				 wasm_exec_trap_message(e));
	err->trap = k;
	if (k == WASM_TRAP_UNREACHABLE)
		return cabi_fail(err, CABI_ERR_TRAP,
				 WASM_TRAP_PREFIX "wasm `unreachable` "
						  "instruction executed");
	return cabi_fail(err, CABI_ERR_TRAP, WASM_TRAP_PREFIX "%s",
			 wasm_exec_trap_message(e));
}

static bool exec_reusable(wasm_exec_status st)
{
	return st != WASM_EXEC_BLOCKED && st != WASM_EXEC_OUT_OF_FUEL;
}

/* ---- canon lift (sync) ----------------------------------------------------
 */

static int canon_lift(cm_store *s, cm_func *f, cm_component_instance *caller,
		      cm_task *supertask, const cm_call_cbs *cbs,
		      cabi_error *err)
{
	cm_component_instance *inst = f->inst;
	const cm_type *ft = f->type;
	uint32_t np = ft->u.func.nparams;
	uint32_t nres = ft->u.func.result != NULL;
	wasm_val core_args[CM_MAX_FLAT_PARAMS + 1];
	wasm_val core_res[1];
	cabi_core_out out = {core_args, 0, CM_MAX_FLAT_PARAMS + 1};
	cabi_core_iter it;
	cm_val *args = NULL;
	cm_val result[1];
	cm_task task, scratch, *prev = s->current, *outer;
	cabi_cx cx;
	int rc;
	wasm_exec_status st = WASM_EXEC_DONE;
	uint32_t ncore;

	if (cm_func_is_async(f)) /* the async model: runtime/sched */
		return cm_canon_lift_async(s, f, caller, supertask, cbs, NULL,
					   err);
	if (cm_enter(inst, caller, s->cfg.reentrance_compat && !f->dtor, err)) {
		/* wasmtime's adapter reports it as a wasm trap */
		if (caller != NULL)
			cabi_fail(err, CABI_ERR_TRAP, WASM_TRAP_PREFIX "%s",
				  CM_MSG_CANNOT_ENTER);
		return -1;
	}
	cm_task_init(&task, f, inst, caller, supertask, cbs);
	memset(result, 0, sizeof result);
	cm_cx_init(&cx, inst, &f->opts);
	cx.borrow_scope = &task.borrows;
	cx.host_peer = caller == NULL;
	task.exec = cm_store_exec_acquire(s);
	args = calloc(np ? np : 1, sizeof *args);
	if (task.exec == NULL || args == NULL) {
		cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
		goto fail;
	}
	cx.exec = task.exec;

	if (cm_task_start(&task, args, err))
		goto fail;
	outer = cm_fresh_thread_enter(s, &scratch);
	rc = cabi_lower_params(&cx, ft, CM_MAX_FLAT_PARAMS, args, &out);
	cm_fresh_thread_leave(s, outer);
	if (rc) {
		cx_fail(&cx, err);
		goto fail;
	}
	cm_vals_free(args, np);
	free(args);
	args = NULL;

	/* the implicit thread runs: it is current through post-return */
	s->current = &task;
	st = cm_store_exec_call(s, task.exec, f->core, core_args, out.n);
	if (st != WASM_EXEC_DONE) {
		exec_fail(task.exec, st, err);
		goto fail;
	}
	ncore = wasm_exec_results(task.exec, core_res, 1);
	it.vals = core_res;
	it.n = ncore;
	it.i = 0;
	cx.fuel = s->fuel == UINT64_MAX ? 0 : s->fuel;
	if (cabi_lift_results(&cx, ft, CM_MAX_FLAT_RESULTS, &it, result)) {
		cx_fail(&cx, err);
		goto fail;
	}
	if (cm_task_return(&task, result, err))
		goto fail;
	cm_vals_free(result, nres);

	if (f->opts.post_return != NULL) {
		inst->may_leave = false;
		st = cm_store_exec_call(s, task.exec, f->opts.post_return,
					core_res, ncore);
		inst->may_leave = true;
		if (st != WASM_EXEC_DONE) {
			exec_fail(task.exec, st, err);
			goto fail;
		}
	}
	s->current = prev;
	cabi_cx_release(&cx);
	cm_store_exec_release(s, task.exec, true);
	cm_leave(inst, caller);
	return 0;

fail:
	s->current = prev;
	cm_poison(inst, caller);
	if (args != NULL) {
		cm_vals_free(args, np);
		free(args);
	}
	cm_vals_free(result, nres);
	cabi_cx_release(&cx);
	if (task.exec != NULL)
		cm_store_exec_release(s, task.exec, exec_reusable(st));
	return -1;
}

/* ---- host functions -------------------------------------------------------
 */

struct cm_host_call {
	cm_store *store;
	cm_func *func;
	cm_component_instance *caller;
	cabi_error err;
	/* deferring (host_pending.c): the async subtask and its callbacks */
	struct cm_asubtask *st;
	const cm_call_cbs *cbs;
	cm_host_pending *pending;
};

cm_host_pending *cm_host_call_defer(cm_host_call *call)
{
	if (call->pending != NULL)
		return call->pending;
	if (call->st == NULL) {
		cm_host_call_trap(call, CM_MSG_SYNC_BLOCK);
		return NULL;
	}
	call->pending = cm_host_pending_new(call->store, call->func,
					    call->caller, call->st, call->cbs);
	if (call->pending == NULL)
		cm_host_call_trap(call, "out of memory");
	return call->pending;
}

int cm_host_call_trap(cm_host_call *call, const char *fmt, ...)
{
	va_list ap;

	call->err.kind = CABI_ERR_TRAP;
	va_start(ap, fmt);
	vsnprintf(call->err.msg, sizeof call->err.msg, fmt, ap);
	va_end(ap);
	return -1;
}

const cm_type *cm_host_call_type(const cm_host_call *call)
{
	return call->func->type;
}

cm_store *cm_host_call_store(const cm_host_call *call)
{
	return call->store;
}

cm_component_instance *cm_host_call_caller(const cm_host_call *call)
{
	return call->caller;
}

static int call_host(cm_store *s, cm_func *f, cm_component_instance *caller,
		     const cm_call_cbs *cbs, cabi_error *err)
{
	const cm_type *ft = f->type;
	uint32_t np = ft->u.func.nparams;
	uint32_t nres = ft->u.func.result != NULL;
	cm_val *args = calloc(np ? np : 1, sizeof *args);
	cm_val result[1];
	cm_host_call call;
	char why[128];
	int rc = -1, hr;

	memset(result, 0, sizeof result);
	memset(&call, 0, sizeof call);
	call.store = s;
	call.func = f;
	call.caller = caller;
	/* only the async lower's own host callee may defer */
	call.st = s->lowering;
	call.cbs = cbs;
	s->lowering = NULL;
	if (args == NULL)
		return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
	if (cbs->on_start(cbs->env, args, err))
		goto out;
	hr = f->fn(&call, f->env, args, np, result, nres);
	if (hr == CM_HOST_PENDING && call.pending != NULL) {
		rc = 0; /* resolved later by cm_host_settle* */
		goto out;
	}
	if (call.pending != NULL) /* deferred, then answered at once */
		cm_host_pending_discard(call.pending);
	if (hr) {
		if (call.err.kind == CABI_ERR_NONE)
			cabi_fail(&call.err, CABI_ERR_TRAP,
				  "host function `%s` failed",
				  f->name ? f->name : "?");
		*err = call.err;
		goto out;
	}
	if (nres &&
	    !cm_val_typecheck(result, ft->u.func.result, why, sizeof why)) {
		cabi_fail(err, CABI_ERR_TRAP,
			  "host function `%s` returned a bad value: %s",
			  f->name ? f->name : "?", why);
		goto out;
	}
	rc = cbs->on_resolve(cbs->env, result, err);
out:
	cm_vals_free(args, np);
	free(args);
	cm_vals_free(result, nres);
	return rc;
}

int cm_func_call(cm_store *s, cm_func *f, cm_component_instance *caller,
		 cm_task *supertask, const cm_call_cbs *cbs, cabi_error *err)
{
	if (f == NULL)
		return cabi_fail(err, CABI_ERR_TRAP,
				 "call of a missing function");
	if (f->kind == CM_FUNC_HOST)
		return call_host(s, f, caller, cbs, err);
	return canon_lift(s, f, caller, supertask, cbs, err);
}

/* ---- Store.invoke ---------------------------------------------------------
 */

typedef struct invoke_env {
	const cm_val *args;
	uint32_t nargs;
	cm_val *results;
	uint32_t nresults;
} invoke_env;

static int invoke_on_start(void *env, cm_val *args, cabi_error *err)
{
	invoke_env *ie = env;

	for (uint32_t i = 0; i < ie->nargs; i++)
		if (cm_val_copy(&args[i], &ie->args[i]))
			return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
	return 0;
}

static int invoke_on_resolve(void *env, cm_val *result, cabi_error *err)
{
	invoke_env *ie = env;

	if (result == NULL)
		return cabi_fail(err, CABI_ERR_TRAP, "call cancelled");
	for (uint32_t i = 0; i < ie->nresults; i++) {
		ie->results[i] = result[i];
		memset(&result[i], 0, sizeof result[i]);
		result[i].kind = CM_BOOL;
	}
	return 0;
}

int cm_invoke(cm_store *s, cm_func *f, const cm_val *args, uint32_t nargs,
	      cm_val *results, uint32_t *nresults, cm_error *err)
{
	const cm_type *ft = f->type;
	uint32_t nres = ft->u.func.result != NULL;
	invoke_env ie = {args, nargs, results, nres};
	cm_call_cbs cbs = {invoke_on_start, invoke_on_resolve, &ie};
	cabi_error ce;
	char why[128];

	if (err != NULL)
		memset(err, 0, sizeof *err);
	*nresults = 0;
	if (nargs != ft->u.func.nparams)
		return cm_error_set(err, CM_ERR_VALUE,
				    "expected %u arguments, got %u",
				    ft->u.func.nparams, nargs);
	for (uint32_t i = 0; i < nargs; i++)
		if (!cm_val_typecheck(&args[i], ft->u.func.params[i].type, why,
				      sizeof why))
			return cm_error_set(
				err, CM_ERR_VALUE, "argument %u (`%s`): %s",
				i + 1, ft->u.func.params[i].label.ptr, why);
	if (cm_func_is_async(f)) /* drive the store until it resolves */
		return cm_invoke_async(s, f, args, nargs, results, nresults,
				       err);
	for (uint32_t i = 0; i < nres; i++) {
		memset(&results[i], 0, sizeof results[i]);
		results[i].kind = CM_BOOL;
	}
	memset(&ce, 0, sizeof ce);
	if (cm_func_call(s, f, NULL, NULL, &cbs, &ce)) {
		cm_vals_free(results, nres);
		return cm_error_from_cabi(err, &ce);
	}
	*nresults = nres;
	return 0;
}
