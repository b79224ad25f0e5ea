/*
 * canon_task_builtins.c - the built-ins of the async model that never
 * block and need nothing but the current thread and the instance:
 * `context.get` / `context.set` (the current
 * thread's two context slots) and `backpressure.inc` / `backpressure.dec`
 * (the instance's backpressure counter).  definitions.py
 * canon_context_get/set, canon_backpressure_inc/dec; digest 3.12.
 *
 * Contract: none of them checks may_leave (they work in post-return).
 * context.* act on the current thread's slots (definitions.py
 * Thread.storage: every thread starts with 0, 0, explicit ones too); the
 * ABI's own guest calls (realloc) see a fresh pair, and a call with no
 * current task (a core start function) sees a fresh thread: get returns
 * 0 and set is forgotten.  backpressure.inc traps when the counter
 * would reach 2^16, dec when it would go below 0; gate waiters see the
 * counter through their readiness predicate (runtime/run), so nobody
 * needs waking here.
 *
 * Allocations sized by a guest or a client (issue 18 audit): one
 * builtin per canon definition, in the store's arena (the component's
 * length).
 */
#include <stdio.h>

#include "component/arena.h"
#include "run/rt.h"
#include "run/sched.h"

typedef struct cm_task_builtin {
	cm_component_instance *inst;
	cm_canon_op op;
	uint32_t slot;
} cm_task_builtin;

#define MAX_BACKPRESSURE 0xffffu

static wasm_host_status trap(wasm_exec *e, cm_store *s, const char *msg)
{
	cabi_error ce;

	cabi_fail(&ce, CABI_ERR_TRAP, "%s", msg);
	cm_note_trap(s, &ce);
	wasm_exec_set_host_trap(e, ce.msg);
	return WASM_HOST_TRAP;
}

/*
 * The current thread's slots: a scheduler thread's own (each thread of a
 * task has its pair); else the current task's (the zeroed scratch task
 * the ABI's own guest calls such as realloc run under); none in a core
 * start function.
 */
static uint64_t *context_slots(cm_store *s)
{
	cm_thread *t = cm_sched_current(s);

	if (t != NULL)
		return t->context;
	return s->current != NULL ? s->current->context : NULL;
}

static wasm_host_status task_builtin(wasm_exec *e, void *env,
				     const wasm_val *args, wasm_val *results)
{
	const cm_task_builtin *b = env;
	cm_component_instance *inst = b->inst;
	uint64_t *slots = context_slots(inst->store);

	switch (b->op) {
	case CM_CANON_CONTEXT_GET: {
		uint64_t v = slots != NULL ? slots[b->slot] : 0;

		if (results[0].type == WASM_I64)
			results[0].u.i64 = v;
		else
			results[0].u.i32 = (uint32_t)v;
		return WASM_HOST_OK;
	}
	case CM_CANON_CONTEXT_SET:
		if (slots != NULL)
			slots[b->slot] = args[0].type == WASM_I64
						 ? args[0].u.i64
						 : args[0].u.i32;
		return WASM_HOST_OK;
	case CM_CANON_BACKPRESSURE_INC:
		if (inst->backpressure >= MAX_BACKPRESSURE)
			return trap(e, inst->store,
				    "backpressure counter overflow");
		inst->backpressure++;
		return WASM_HOST_OK;
	case CM_CANON_BACKPRESSURE_DEC:
		if (inst->backpressure == 0)
			return trap(e, inst->store,
				    "backpressure counter underflow");
		inst->backpressure--;
		return WASM_HOST_OK;
	default:
		return trap(e, inst->store, "unknown built-in");
	}
}

bool cm_is_task_builtin(cm_canon_op op)
{
	return op == CM_CANON_CONTEXT_GET || op == CM_CANON_CONTEXT_SET ||
	       op == CM_CANON_BACKPRESSURE_INC ||
	       op == CM_CANON_BACKPRESSURE_DEC;
}

wasm_func *cm_canon_task_builtin(cm_component_instance *inst,
				 const cm_canon *cn)
{
	cm_store *s = inst->store;
	cm_task_builtin *b;

	if (cn->core_type == NULL || ((cn->op == CM_CANON_CONTEXT_GET ||
				       cn->op == CM_CANON_CONTEXT_SET) &&
				      cn->slot > 1))
		return NULL;
	b = cm_arena_alloc(s->arena, sizeof *b);
	if (b == NULL)
		return NULL;
	b->inst = inst;
	b->op = cn->op;
	b->slot = cn->slot;
	return wasm_func_new_host(s->wasm, cn->core_type, task_builtin, b);
}
