/*
 * task.h - the common part of Task (callee side of one call of a lifted
 * function) and Subtask (caller side of one call of a lowered import), as
 * in definitions.py and digest 3.5/3.7.  The async model's task and
 * subtask (sched.h cm_atask, cm_asubtask) embed these as `base`.
 *
 *  - Every call of a function goes through the same interface, whatever
 *    implements it (canon lift, a host function): the caller hands over
 *    cm_call_cbs { on_start, on_resolve } and the callee calls on_start
 *    exactly once to obtain the arguments (this is when a lowering caller
 *    reads them out of its memory) and on_resolve exactly once with the
 *    result, or with NULL when cancelled.  Cancellation is requested
 *    through the task (sched.h cm_task_request_cancellation).
 *  - A Task walks INITIAL -> STARTED (on_start) -> RESOLVED (return_);
 *    a cancelled one passes PENDING_CANCEL (requested while it cannot be
 *    told) and CANCEL_DELIVERED (told; task.cancel resolves it).
 *  - A Subtask walks STARTING -> STARTED -> RETURNED, or ends in one of
 *    the CANCELLED states; its lenders are released when the resolution
 *    is delivered (sync lower: on return).
 *  - The task's implicit thread is a cm_thread (sched.h, thread.c) with
 *    its own exec; `context` holds the task's two context slots.  A bare
 *    cm_task (rt.h cm_fresh_thread_enter) stands for the fresh thread of
 *    the ABI's own guest calls (realloc).
 *
 * Contract: cm_task_return traps "borrow handles still remain at the end
 * of the call" when borrows are left, and refuses a second return.
 * Errors use cabi_error (kind TRAP: the message the suite matches).
 */
#ifndef HOSTEL_RUN_TASK_H
#define HOSTEL_RUN_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "cabi/cabi.h"

struct cm_func;
struct cm_component_instance;

/*
 * How a caller takes part in a call (definitions.py OnStart/OnResolve).
 * on_start fills `args` (the callee's nparams values, which the callee
 * then owns).  on_resolve receives the result (0 or 1 values; the caller
 * takes ownership, moving them out) or NULL when the call was cancelled.
 */
typedef struct cm_call_cbs {
	int (*on_start)(void *env, cm_val *args, cabi_error *err);
	int (*on_resolve)(void *env, cm_val *result, cabi_error *err);
	void *env;
} cm_call_cbs;

typedef enum cm_task_state {
	CM_TASK_INITIAL = 1,
	CM_TASK_STARTED,
	CM_TASK_PENDING_CANCEL,
	CM_TASK_CANCEL_DELIVERED,
	CM_TASK_RESOLVED,
} cm_task_state;

typedef struct cm_task {
	cm_task_state state;
	const struct cm_func *func;	    /* ft + opts of the lift */
	struct cm_component_instance *inst; /* the callee */
	/* the caller: its instance (NULL: the host) and its task */
	struct cm_component_instance *caller;
	struct cm_task *supertask;
	const cm_call_cbs *cbs;
	cabi_borrow_scope borrows; /* num_borrows */
	/* unused: the implicit thread (a cm_thread) owns the exec */
	wasm_exec *exec;
	uint64_t context[2]; /* context.get/set slots (async builtins) */
} cm_task;

void cm_task_init(cm_task *t, const struct cm_func *func,
		  struct cm_component_instance *inst,
		  struct cm_component_instance *caller, cm_task *supertask,
		  const cm_call_cbs *cbs);
/* on_start: INITIAL -> STARTED, args filled (nparams values). */
int cm_task_start(cm_task *t, cm_val *args, cabi_error *err);
/*
 * task.return (implicit for a sync lift): traps if already resolved or
 * if borrows remain; then on_resolve(result) and RESOLVED.
 */
int cm_task_return(cm_task *t, cm_val *result, cabi_error *err);

typedef enum cm_subtask_state {
	CM_SUBTASK_STARTING = 0,
	CM_SUBTASK_STARTED = 1,
	CM_SUBTASK_RETURNED = 2,
	CM_SUBTASK_CANCELLED_BEFORE_STARTED = 3,
	CM_SUBTASK_CANCELLED_BEFORE_RETURNED = 4,
} cm_subtask_state;

typedef struct cm_subtask {
	cm_subtask_state state;
	struct cm_component_instance *inst; /* the caller */
	cm_task *supertask;		    /* the caller's task, if any */
	cabi_lenders lenders;		    /* handles lent by lift_borrow */
	bool resolve_delivered;
} cm_subtask;

void cm_subtask_init(cm_subtask *st, struct cm_component_instance *inst,
		     cabi_table *table, cm_task *supertask);
/* Release the lends (deliver_resolve) and free the lenders list. */
void cm_subtask_deliver_resolve(cm_subtask *st);

#endif
