/*
 * task.c - the Task and Subtask state machines (definitions.py
 * Task.on_start/return_, Subtask.deliver_resolve) and the life of a
 * Task object; what a task's threads do is thread.c's, its cancellation
 * canon_lift.c's, a subtask's events waitable.c's.
 *
 * Contract (task.h): a task calls on_start and on_resolve at most once
 * each, in that order; return_ checks the borrow count first.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_task_new: one task per call of a lifted function (bounded as the
 *    threads that run it, thread.c).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "run/sched.h"

/* Store teardown: the task never resolved, or a thread of it trapped. */
static void task_dispose(cm_store_obj *o)
{
	cm_task *at = (cm_task *)((char *)o - offsetof(cm_task, obj));

	cm_vals_free(at->result, at->nres);
	free(at);
}

cm_task *cm_task_new(cm_store *s)
{
	cm_task *at = calloc(1, sizeof *at);

	if (at != NULL)
		cm_store_track(s, &at->obj, task_dispose);
	return at;
}

void cm_task_free(cm_task *at)
{
	cm_store_untrack(&at->obj);
	cm_vals_free(at->result, at->nres);
	free(at);
}

void cm_task_init(cm_task *t, struct cm_func *func,
		  struct cm_component_instance *inst,
		  struct cm_component_instance *caller, cm_task *supertask,
		  const cm_call_cbs *cbs)
{
	t->state = CM_TASK_INITIAL;
	t->func = func;
	t->inst = inst;
	t->caller = caller;
	t->supertask = supertask;
	t->cbs = *cbs;
}

int cm_task_start(cm_task *t, cm_val *args, cabi_error *err)
{
	if (t->state != CM_TASK_INITIAL)
		return cabi_fail(err, CABI_ERR_TRAP, "task already started");
	t->state = CM_TASK_STARTED;
	return t->cbs.on_start(t->cbs.env, args, err);
}

int cm_task_return(cm_task *t, cm_val *result, cabi_error *err)
{
	if (t->state == CM_TASK_RESOLVED)
		return cabi_fail(err, CABI_ERR_TRAP,
				 "task already returned a result");
	if (cabi_borrow_scope_exit(&t->borrows, err))
		return -1;
	t->state = CM_TASK_RESOLVED;
	return t->cbs.on_resolve(t->cbs.env, result, err);
}

void cm_subtask_init(cm_subtask *st, struct cm_component_instance *inst,
		     cabi_table *table, cm_task *supertask)
{
	st->state = CM_SUBTASK_STARTING;
	st->inst = inst;
	st->supertask = supertask;
	st->resolve_delivered = false;
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

bool cm_obj_is_task(const cm_store_obj *o)
{
	return o->dispose == task_dispose;
}
