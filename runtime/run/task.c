/*
 * task.c - the common part of the Task and Subtask state machines
 * (definitions.py Task.on_start/return_, Subtask.deliver_resolve); the
 * async model's states (threads, cancellation, events) are sched.h's.
 *
 * Contract (task.h): a task calls on_start and on_resolve at most once
 * each, in that order; return_ checks the borrow count first.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none.
 */
#include <string.h>

#include "run/task.h"

void cm_task_init(cm_task *t, const struct cm_func *func,
		  struct cm_component_instance *inst,
		  struct cm_component_instance *caller, cm_task *supertask,
		  const cm_call_cbs *cbs)
{
	memset(t, 0, sizeof *t);
	t->state = CM_TASK_INITIAL;
	t->func = func;
	t->inst = inst;
	t->caller = caller;
	t->supertask = supertask;
	t->cbs = cbs;
}

int cm_task_start(cm_task *t, cm_val *args, cabi_error *err)
{
	if (t->state != CM_TASK_INITIAL)
		return cabi_fail(err, CABI_ERR_TRAP, "task already started");
	t->state = CM_TASK_STARTED;
	return t->cbs->on_start(t->cbs->env, args, err);
}

int cm_task_return(cm_task *t, cm_val *result, cabi_error *err)
{
	if (t->state == CM_TASK_RESOLVED)
		return cabi_fail(err, CABI_ERR_TRAP,
				 "task already returned a result");
	if (cabi_borrow_scope_exit(&t->borrows, err))
		return -1;
	t->state = CM_TASK_RESOLVED;
	return t->cbs->on_resolve(t->cbs->env, result, err);
}

void cm_subtask_init(cm_subtask *st, struct cm_component_instance *inst,
		     cabi_table *table, cm_task *supertask)
{
	memset(st, 0, sizeof *st);
	st->state = CM_SUBTASK_STARTING;
	st->inst = inst;
	st->supertask = supertask;
	cabi_lenders_init(&st->lenders, table);
}

void cm_subtask_deliver_resolve(cm_subtask *st)
{
	if (!st->resolve_delivered) {
		cabi_lenders_release(&st->lenders);
		st->resolve_delivered = true;
	}
	cabi_lenders_free(&st->lenders);
}
