/*
 * invoke.c - Store.invoke of an async-typed export: the host calls the
 * lifted function, then drives the store's scheduler until the call has
 * resolved (digest 3.15 "test-harness driver": no draining of other work
 * after the resolution; nothing ready and the call unresolved is the
 * deadlock trap).
 *
 * Contract (sched.h): arguments were type-checked by cm_invoke; results
 * are moved to the caller, who owns them.  A trap poisons as a sync call
 * does (the callee's entering set).
 */
#include <string.h>

#include "component/rt.h"
#include "sched/sched.h"

typedef struct ainvoke {
	const cm_val *args;
	uint32_t nargs;
	cm_val *results;
	uint32_t nresults;
	bool done, cancelled;
} ainvoke;

static int ainvoke_on_start(void *env, cm_val *args, cabi_error *err)
{
	ainvoke *ai = env;

	for (uint32_t i = 0; i < ai->nargs; i++)
		if (cm_val_copy(&args[i], &ai->args[i]))
			return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
	return 0;
}

static int ainvoke_on_resolve(void *env, cm_val *result, cabi_error *err)
{
	ainvoke *ai = env;

	ai->done = true;
	if (result == NULL) {
		ai->cancelled = true;
		return 0;
	}
	for (uint32_t i = 0; i < ai->nresults; i++) {
		ai->results[i] = result[i];
		memset(&result[i], 0, sizeof result[i]);
		result[i].kind = CM_BOOL;
	}
	return 0;
}

int cm_invoke_async(cm_store *s, cm_func *f, const cm_val *args, uint32_t nargs,
		    cm_val *results, uint32_t *nresults, cm_error *err)
{
	uint32_t nres = f->type->u.func.result != NULL;
	ainvoke ai = {args, nargs, results, nres, false, false};
	cm_call_cbs cbs = {ainvoke_on_start, ainvoke_on_resolve, &ai};
	cm_atask *task = NULL;
	cabi_error ce;
	int rc;

	for (uint32_t i = 0; i < nres; i++) {
		memset(&results[i], 0, sizeof results[i]);
		results[i].kind = CM_BOOL;
	}
	memset(&ce, 0, sizeof ce);
	rc = cm_canon_lift_async(s, f, NULL, NULL, &cbs, &task, &ce);
	if (rc == 0)
		rc = cm_sched_drive(s, &ai.done, &ce);
	if (task != NULL)
		task->ref = NULL;
	if (rc == 0 && ai.cancelled)
		rc = cabi_fail(&ce, CABI_ERR_TRAP, "call cancelled");
	if (rc) {
		if (ai.done && !ai.cancelled)
			cm_vals_free(results, nres);
		cm_poison(f->inst, NULL);
		return cm_error_from_cabi(err, &ce);
	}
	*nresults = nres;
	return 0;
}
