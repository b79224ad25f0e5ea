/*
 * task.h - Task (callee side of one call of a lifted function) as in
 * definitions.py and digest 3.5, the call protocol every function shares,
 * and the states of a Subtask (caller side of one call of a lowered
 * import, digest 3.7; the struct is sched.h's cm_subtask, a waitable).
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
 *    its own exec; `context` holds the task's two context slots.  A
 *    zeroed scratch cm_task (rt.h cm_fresh_thread_enter) stands for the
 *    fresh thread of the ABI's own guest calls (realloc).
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
#include "run/store.h"

struct cm_func;
struct cm_component_instance;
struct cm_thread;

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

/*
 * A Task (definitions.py Task): the callee side of one call of a lifted
 * function.  Made by canon lift (canon_lift.c) only, zeroed by
 * cm_task_new; its implicit thread and any threads it spawns are
 * cm_threads (sched.h, thread.c).
 */
typedef struct cm_task {
	cm_task_state state;
	struct cm_func *func;		    /* ft + opts of the lift */
	struct cm_component_instance *inst; /* the callee */
	/* the caller: its instance (NULL: the host) and its task */
	struct cm_component_instance *caller;
	struct cm_task *supertask;
	cm_call_cbs cbs;	   /* copy: the caller's may be on its stack */
	cabi_borrow_scope borrows; /* num_borrows */
	uint64_t context[2];	   /* context.get/set slots */
	cm_store_obj obj;	   /* tracked */
	bool needs_exclusive;
	bool sync_lift, stackful;
	struct cm_thread *implicit;
	struct cm_thread *threads; /* list via tnext */
	uint32_t nthreads;
	/* the caller's handle on this task (cleared when it is freed) */
	struct cm_task **ref;
	cm_val result[1];
	uint32_t nres;
	/*
	 * Its root task (the one no task called): a serial number in the
	 * store, and the tag cm_call_set_tag gave that root's call.  Kept
	 * on every task, from its caller, so nobody walks `supertask`
	 * pointers: a caller may be freed while its callee runs on.
	 */
	uint64_t root;
	uint64_t call_tag;
	bool resolved_cancelled;
} cm_task;

/* A zeroed task tracked by s; NULL when out of memory. */
cm_task *cm_task_new(cm_store *s);
/* Free a task (its result values too) and stop tracking it. */
void cm_task_free(cm_task *t);
/* Set who calls whom (t as cm_task_new made it): state INITIAL. */
void cm_task_init(cm_task *t, struct cm_func *func,
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

#endif
