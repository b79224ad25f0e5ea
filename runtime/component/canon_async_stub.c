/*
 * canon_async_stub.c - placeholders for the canon built-ins of the async
 * model (task.*, subtask.*, waitable*, stream.*, future.*, thread.*,
 * context.*, backpressure.*, error-context.*), which the sync path does
 * not implement yet.
 *
 * Contract: with the store's lazy_unsupported off (the default), a
 * component that defines one of them fails to instantiate with
 * UNSUPPORTED "async builtin `X` not implemented".  With it on, the
 * built-in becomes a core function of its declared type that performs
 * the one check every such built-in makes first (digest 2.12: trap
 * "cannot leave component instance" when may_leave is false, for all but
 * context.get/set and backpressure.inc/dec) and then traps
 * "async builtin `X` not implemented".  The async issue replaces these
 * one by one.
 */
#include <stdio.h>

#include "component/arena.h"
#include "component/rt.h"

typedef struct cm_stub {
	cm_component_instance *inst;
	cm_canon_op op;
} cm_stub;

const char *cm_builtin_name(cm_canon_op op)
{
	static const struct {
		cm_canon_op op;
		const char *name;
	} names[] = {
		{CM_CANON_TASK_CANCEL, "task.cancel"},
		{CM_CANON_SUBTASK_CANCEL, "subtask.cancel"},
		{CM_CANON_TASK_RETURN, "task.return"},
		{CM_CANON_CONTEXT_GET, "context.get"},
		{CM_CANON_CONTEXT_SET, "context.set"},
		{CM_CANON_THREAD_YIELD, "thread.yield"},
		{CM_CANON_SUBTASK_DROP, "subtask.drop"},
		{CM_CANON_STREAM_NEW, "stream.new"},
		{CM_CANON_STREAM_READ, "stream.read"},
		{CM_CANON_STREAM_WRITE, "stream.write"},
		{CM_CANON_STREAM_CANCEL_READ, "stream.cancel-read"},
		{CM_CANON_STREAM_CANCEL_WRITE, "stream.cancel-write"},
		{CM_CANON_STREAM_DROP_READABLE, "stream.drop-readable"},
		{CM_CANON_STREAM_DROP_WRITABLE, "stream.drop-writable"},
		{CM_CANON_FUTURE_NEW, "future.new"},
		{CM_CANON_FUTURE_READ, "future.read"},
		{CM_CANON_FUTURE_WRITE, "future.write"},
		{CM_CANON_FUTURE_CANCEL_READ, "future.cancel-read"},
		{CM_CANON_FUTURE_CANCEL_WRITE, "future.cancel-write"},
		{CM_CANON_FUTURE_DROP_READABLE, "future.drop-readable"},
		{CM_CANON_FUTURE_DROP_WRITABLE, "future.drop-writable"},
		{CM_CANON_ERROR_CONTEXT_NEW, "error-context.new"},
		{CM_CANON_ERROR_CONTEXT_DEBUG_MESSAGE,
		 "error-context.debug-message"},
		{CM_CANON_ERROR_CONTEXT_DROP, "error-context.drop"},
		{CM_CANON_WAITABLE_SET_NEW, "waitable-set.new"},
		{CM_CANON_WAITABLE_SET_WAIT, "waitable-set.wait"},
		{CM_CANON_WAITABLE_SET_POLL, "waitable-set.poll"},
		{CM_CANON_WAITABLE_SET_DROP, "waitable-set.drop"},
		{CM_CANON_WAITABLE_JOIN, "waitable.join"},
		{CM_CANON_BACKPRESSURE_INC, "backpressure.inc"},
		{CM_CANON_BACKPRESSURE_DEC, "backpressure.dec"},
		{CM_CANON_THREAD_INDEX, "thread.index"},
		{CM_CANON_THREAD_NEW_INDIRECT, "thread.new-indirect"},
		{CM_CANON_THREAD_RESUME_LATER, "thread.resume-later"},
		{CM_CANON_THREAD_SUSPEND, "thread.suspend"},
		{CM_CANON_THREAD_SUSPEND_THEN_RESUME,
		 "thread.suspend-then-resume"},
		{CM_CANON_THREAD_YIELD_THEN_RESUME, "thread.yield-then-resume"},
		{CM_CANON_THREAD_SUSPEND_THEN_PROMOTE,
		 "thread.suspend-then-promote"},
		{CM_CANON_THREAD_YIELD_THEN_PROMOTE,
		 "thread.yield-then-promote"},
		{CM_CANON_THREAD_SPAWN_REF, "thread.spawn-ref"},
		{CM_CANON_THREAD_SPAWN_INDIRECT, "thread.spawn-indirect"},
		{CM_CANON_THREAD_AVAILABLE_PARALLELISM,
		 "thread.available-parallelism"},
	};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].op == op)
			return names[i].name;
	return "unknown";
}

/* The built-ins that run even while may_leave is false (digest 2.12). */
static bool checks_may_leave(cm_canon_op op)
{
	switch (op) {
	case CM_CANON_CONTEXT_GET:
	case CM_CANON_CONTEXT_SET:
	case CM_CANON_BACKPRESSURE_INC:
	case CM_CANON_BACKPRESSURE_DEC:
	case CM_CANON_THREAD_AVAILABLE_PARALLELISM:
		return false;
	default:
		return true;
	}
}

static wasm_host_status stub(wasm_exec *e, void *env, const wasm_val *args,
			     wasm_val *results)
{
	const cm_stub *st = env;
	cabi_error ce;

	(void)args;
	(void)results;
	if (checks_may_leave(st->op) && !st->inst->may_leave)
		cabi_fail(&ce, CABI_ERR_TRAP, CABI_MSG_CANNOT_LEAVE);
	else
		cabi_fail(&ce, CABI_ERR_TRAP,
			  "async builtin `%s` not implemented",
			  cm_builtin_name(st->op));
	cm_note_trap(st->inst->store, &ce);
	wasm_exec_set_host_trap(e, ce.msg);
	return WASM_HOST_TRAP;
}

wasm_func *cm_canon_async_stub(cm_component_instance *inst, const cm_canon *cn)
{
	cm_store *s = inst->store;
	cm_stub *st;

	if (cn->core_type == NULL)
		return NULL;
	st = cm_arena_alloc(s->arena, sizeof *st);
	if (st == NULL)
		return NULL;
	st->inst = inst;
	st->op = cn->op;
	return wasm_func_new_host(s->wasm, cn->core_type, stub, st);
}
