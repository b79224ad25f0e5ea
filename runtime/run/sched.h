/*
 * sched.h - the threads, subtasks, waitables and waitable sets of the
 * Component Model (definitions.py Thread, Subtask, Waitable, WaitableSet;
 * Task is task.h's) and the per-store scheduler that owns every waiting
 * thread.  Every call, sync or async, runs on these.  Not a public
 * contract: embedders use run/instance.h.
 *
 * Contract (ARCHITECTURE invariants 1-3, digest 3):
 *  - A cm_thread owns one wasm_exec; when the thread blocks (a built-in
 *    answers WASM_HOST_BLOCK) its exec returns BLOCKED and every C frame
 *    between the scheduler and the exec unwinds: a blocked thread is
 *    plain data (its `wake` continuation, its readiness predicate, the
 *    exec's heap stack).  No ucontext, no OS threads, no longjmp.
 *  - The only C-stack nesting is "run the callee's implicit thread
 *    inside the caller's lower trampoline" (definitions.py runs the
 *    callee synchronously too), which returns as soon as the callee
 *    blocks or finishes.
 *  - Waiting threads sit on the store's waiting list in the order they
 *    started waiting.  A tick resumes the first one whose predicate holds
 *    (FIFO); with a non-zero sched_seed the choice among the ready ones
 *    is pseudo-random (xorshift seeded by the store config, no global
 *    state).
 *  - What the seed may shuffle (digest 4.1; definitions.py Store.tick
 *    shuffles `waiting` on every tick): which ready thread a tick
 *    resumes, across instances too, and the order in which the drain
 *    below visits the callee instance's ready threads.  What it never
 *    touches, because the spec fixes it: the readiness predicates (the
 *    gate, held for whole core invocations; a callback never runs while
 *    another invocation of its instance holds the lock), the immediate
 *    control transfers of lift/lower/cancel, delivery at most once.
 *    Policy pinned under every seed: gate waiters of one instance are
 *    admitted in arrival order; the drain-to-quiescence entry decision
 *    (seed 002) runs every ready thread of the callee instance except
 *    the caller's own task's, so its STARTING/STARTED answer does not
 *    depend on the pick order.
 *  - Known order-dependent test (a test defect, digest D5/4.3):
 *    async-calls-sync.wast asserts that the two gate waiters in two
 *    *different* SyncMiddle instances reach $AsyncInner in call order.
 *    That holds only when ticks across instances are FIFO; the reference
 *    itself can resume SyncMiddle12 (and admit waiter 5) before
 *    SyncMiddle11, and so can any seed.  No policy short of a FIFO tick
 *    makes it order-robust, so the scheduler keeps shuffling the tick and
 *    tests/cm-wast.fifo pins that script to FIFO in seeded runs.
 *  - Events are computed when delivered (definitions.py pending_event
 *    thunks): a waitable records only that it has one.
 *  - Ownership: threads, tasks, subtasks, waitable sets and stream /
 *    future ends are tracked by their store (store.h cm_store_obj) from
 *    creation to their normal free; handle tables, the waiting list,
 *    sets and shared streams only refer to them.  Whatever is left when
 *    the store is freed (unfinished threads and their execs, sets a
 *    guest never dropped, ends in tables or in transit) is disposed of
 *    there, once each.  Error contexts carry no object.
 *  - Service turns (cm_store_service_turn, seeds 000/003): settled host
 *    calls (host_pending.c) are delivered and ready threads run, on the
 *    turn's own fuel; a thread out of fuel inside a turn is parked ready
 *    (wasm_exec_continue next turn) instead of trapping.  Outside a turn
 *    (cm_invoke's driver) running out of fuel still traps.  A sync-typed
 *    callee of another component (its caller waits on the C stack)
 *    still traps when the turn's fuel runs out under it.
 *  - Every lifted call, sync-typed too, runs on a thread of its own.  A
 *    sync-typed task that blocks before returning does not return to
 *    its caller: canon_lift.c's sync_wait runs the ready threads
 *    of its instance that may use the stack (cm_sched_pick_sync) until
 *    it resolves, its implicit thread pinned meanwhile.  Whether it may
 *    block at all is cm_thread_may_block (only while another thread of
 *    the store is ready), checked eagerly where wasmtime checks it.
 */
#ifndef HOSTEL_RUN_SCHED_H
#define HOSTEL_RUN_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "cabi/cabi.h"
#include "component/types.h"
#include "run/store.h"
#include "run/task.h"

struct cm_func;
struct cm_component_instance;
typedef struct cm_thread cm_thread;
typedef struct cm_waitable cm_waitable;
typedef struct cm_waitable_set cm_waitable_set;

/* ---- numeric codes (digest 3.2) ---------------------------------------- */

enum {
	CM_CALLBACK_EXIT = 0,
	CM_CALLBACK_YIELD = 1,
	CM_CALLBACK_WAIT = 2,
};

typedef enum cm_event_code {
	CM_EVENT_NONE = 0,
	CM_EVENT_SUBTASK = 1,
	CM_EVENT_STREAM_READ = 2,
	CM_EVENT_STREAM_WRITE = 3,
	CM_EVENT_FUTURE_READ = 4,
	CM_EVENT_FUTURE_WRITE = 5,
	CM_EVENT_TASK_CANCELLED = 6,
} cm_event_code;

typedef struct cm_event {
	uint32_t code, p1, p2;
} cm_event;

#define CM_BLOCKED 0xffffffffu

#define CM_MSG_SYNC_BLOCK "cannot block a synchronous task before returning"
#define CM_MSG_DEADLOCK                                                        \
	"deadlock detected: event loop cannot make further progress"
#define CM_MSG_SYNC_IN_SET                                                     \
	"waitable cannot be used synchronously while added to a waitable set"

/* ---- threads ------------------------------------------------------------ */

typedef enum cm_thread_state {
	CM_THREAD_RUNNING = 1,
	CM_THREAD_SUSPENDED, /* only an explicit resume wakes it */
	CM_THREAD_WAITING,   /* on the waiting list with a predicate */
	CM_THREAD_DONE,
} cm_thread_state;

/*
 * What resuming a thread does.  Returns 0 when the thread has blocked
 * again or finished, -1 with *err on a trap.
 */
typedef int (*cm_thread_wake_fn)(cm_thread *t, bool cancelled, cabi_error *err);
/* What finishing the thread's current core call does (exec is DONE). */
typedef int (*cm_thread_done_fn)(cm_thread *t, cabi_error *err);
/* Fill t->res / t->nres for the blocked built-in (exec BLOCKED). */
typedef int (*cm_thread_complete_fn)(cm_thread *t, bool cancelled,
				     cabi_error *err);

struct cm_thread {
	cm_store_obj obj; /* tracked: the store owns it until it is freed */
	cm_store *store;
	struct cm_task *task;
	struct cm_component_instance *inst;
	wasm_exec *exec;
	uint64_t context[2];
	uint32_t index; /* in inst->threads; 0 until registered */
	cm_thread_state state;
	bool implicit;
	bool pinned; /* only its sync-typed task's sync_wait resumes it */
	/*
	 * Parked by a turn out of fuel, mid-code.  The spec never preempts
	 * a thread, so no other thread may run before it continues: the
	 * pick takes it first, under any seed (no interleaving of two
	 * calls' core code that a non-preemptive run could not produce).
	 */
	bool fuel_parked;
	bool exec_busy;	  /* exec stopped mid-call (BLOCKED, OUT_OF_FUEL) */
	bool cancellable; /* the current block accepts cancellation */
	bool gate_waiting;

	bool (*ready)(cm_thread *t); /* WAITING: may it run? */
	cm_thread_wake_fn wake;
	cm_thread_done_fn on_done;
	cm_thread_complete_fn complete;
	cm_thread *switch_to; /* set by a built-in that switches */

	/* what the current block is about */
	cm_waitable_set *wait_set;
	void *wait_obj;
	uint64_t wait_ptr;
	uint32_t callback_code; /* callback tasks: YIELD or WAIT */
	wasm_val res[2];
	uint32_t nres;

	/* explicit threads: the function and its argument */
	wasm_func *start_fn;
	uint64_t start_arg; /* i32 or i64 (the start function's type) */

	/* store waiting list */
	cm_thread *wprev, *wnext;
	bool queued;
	/* the task's threads */
	cm_thread *tnext;
};

/* ---- waitables and waitable sets -------------------------------------- */

struct cm_waitable {
	cabi_elem_kind kind;
	struct cm_component_instance *inst; /* whose table holds it */
	uint32_t index;			    /* 0: not in a table */
	bool pending;			    /* an event is armed */
	bool sync_waiter;
	bool queued; /* in its set's queue of pending members */
	cm_waitable_set *set;
	cm_waitable *sprev, *snext;
	cm_waitable *pprev, *pnext; /* the set's pending queue */
};

/*
 * Members in join order (first .. last), and those with an event armed
 * in the order they were armed (pfirst .. plast): a set with an event,
 * and its next one, in constant time, whatever its size (scanning the
 * members was work in proportion to them for each wait, poll and
 * scheduling check: a guest's large set multiplied every fuel unit).
 */
struct cm_waitable_set {
	cm_store_obj obj; /* tracked */
	uint32_t index;
	uint32_t num_waiting;
	cm_waitable *first, *last;
	cm_waitable *pfirst, *plast;
};

void cm_waitable_set_pending(cm_waitable *w);
/* Disarm w's event (delivered, or consumed by its own operation). */
void cm_waitable_clear_pending(cm_waitable *w);
/* Put w, armed and in a set, in its set's pending queue (a restore). */
void cm_waitable_queue(cm_waitable *w);
void cm_waitable_join(cm_waitable *w, cm_waitable_set *s);
bool cm_waitable_set_has_event(const cm_waitable_set *s);
/* Take the pending event armed first among s's members. */
int cm_waitable_set_take(cm_store *st, cm_waitable_set *s, cm_event *ev,
			 cabi_error *err);
/* Evaluate and clear w's pending event. */
int cm_waitable_deliver(cm_waitable *w, cm_event *ev, cabi_error *err);

/* ---- subtasks (definitions.py Subtask) ------------------------------- */

/*
 * A Subtask: the caller side of one call of a lowered import.  A sync
 * lower of a sync-typed callee keeps it on its stack and uses only the
 * fields up to `cx` (cm_subtask_init); every other lower has it on the
 * heap, tracked (the callee may resolve long after the trampoline
 * returned), as a waitable in the caller's table once handed out.
 */
typedef struct cm_subtask {
	cm_waitable w;	  /* first: the handle table points here */
	cm_store_obj obj; /* tracked (heap subtasks) */
	cm_subtask_state state;
	struct cm_component_instance *inst; /* the caller */
	cm_task *supertask;		    /* the caller's task, if any */
	cabi_lenders lenders;		    /* handles lent by lift_borrow */
	bool resolve_delivered;
	cabi_cx cx;
	cm_call_cbs cbs;
	const cm_type *ft;
	bool async_lower;
	bool handed_out; /* in the caller's table */
	bool cancel_requested;
	cm_task *callee;	      /* NULL: not a task (host) or freed */
	const void *origin;	      /* the canon lower (snapshots) */
	struct cm_host_pending *host; /* a deferred host callee */
	wasm_val args[CM_MAX_FLAT_PARAMS + 2];
	uint32_t nargs, ret_i;
	wasm_val res[1];
	uint32_t nres;
	cabi_core_out out;
} cm_subtask;

/*
 * Set the Subtask fields (state STARTING, caller, supertask, lenders on
 * table); the waitable, cx and the rest are the lower's.
 */
void cm_subtask_init(cm_subtask *st, struct cm_component_instance *inst,
		     cabi_table *table, cm_task *supertask);
/* Release the lends (deliver_resolve) and free the lenders list. */
void cm_subtask_deliver_resolve(cm_subtask *st);
int cm_subtask_event(cm_subtask *st, cm_event *ev);
void cm_subtask_free(cm_subtask *st);
/* Evaluate a stream/future end's pending event (stream.c). */
int cm_stream_event(cm_waitable *w, cm_event *ev, cabi_error *err);

/* ---- the scheduler ----------------------------------------------------- */

/* The thread running guest code now, if it is a scheduler thread. */
cm_thread *cm_sched_current(cm_store *s);

void cm_sched_enqueue(cm_thread *t);
void cm_sched_dequeue(cm_thread *t);
/* Run t (resume its continuation), following switches; frees DONE ones. */
int cm_thread_resume(cm_thread *t, bool cancelled, cabi_error *err);
/* The first ready waiting thread (policy), restricted to inst if set. */
cm_thread *cm_sched_pick(cm_store *s, struct cm_component_instance *inst);
/* The same, never a thread of task skip (NULL: none skipped). */
cm_thread *cm_sched_pick_other(cm_store *s, struct cm_component_instance *inst,
			       const cm_task *skip);
/*
 * A thread the blocked sync-typed task self may run meanwhile (digest
 * 3.6 step 3): of inst, ready, able to use the stack; NULL: none.
 */
cm_thread *cm_sched_pick_sync(cm_store *s, struct cm_component_instance *inst,
			      const cm_task *self);
/*
 * May t block now (definitions.py Task.may_block, refined by the
 * suite)?  An async-typed or resolved task may; a sync-typed one only
 * while another thread of the store is ready; no thread (a start
 * function) never.
 */
bool cm_thread_may_block(cm_thread *t);
/*
 * Block the current thread inside a built-in: returns what the built-in
 * returns (WASM_HOST_BLOCK), or WASM_HOST_OK with t->res filled when a
 * pending cancellation is delivered at once (cancellable only).
 */
wasm_host_status cm_thread_block(cm_thread *t, bool waiting,
				 bool (*ready)(cm_thread *),
				 cm_thread_complete_fn complete,
				 bool cancellable);
/* After an exec call/resume of t returned st. */
int cm_thread_after_exec(cm_thread *t, wasm_exec_status st, cabi_error *err);
/* Start a core call f(args) on t's exec. */
int cm_thread_call(cm_thread *t, wasm_func *f, const wasm_val *args,
		   uint32_t nargs, cm_thread_done_fn on_done, cabi_error *err);
cm_thread *cm_thread_new(struct cm_task *task,
			 struct cm_component_instance *inst);
int cm_thread_register(cm_thread *t, cabi_error *err);
/* The thread's current core call finished for good. */
int cm_thread_exit(cm_thread *t, cabi_error *err);
/* A trap of a core call as the suite words it. */
int cm_exec_fail(wasm_exec *e, wasm_exec_status st, cabi_error *err);

/* ---- lift / lower / invoke --------------------------------------------- */

/*
 * Is f a lifted function whose call may outlive its caller's lower (an
 * `async` lift, or an async-typed function)?  A lower of it takes
 * cm_canon_lower_call's path, Store.invoke drives the scheduler for it.
 */
bool cm_func_is_async(const struct cm_func *f);
/*
 * canon_lift of every lifted function, sync or async (canon_lift.c):
 * enters the callee, makes the Task and its implicit thread and runs it;
 * returns once that thread has blocked or finished (a sync-typed call:
 * once resolved, sync_wait).  *out (may be NULL) gets the task while it
 * lives (cleared when it is freed).
 */
int cm_canon_lift(cm_store *s, struct cm_func *f,
		  struct cm_component_instance *caller, cm_task *supertask,
		  const cm_call_cbs *cbs, cm_task **out, cabi_error *err);
/*
 * One call through a canon lower's trampoline whose Subtask lives on the
 * heap (canon_lower.c): an `async` lower, or a lower of an async-typed
 * callee.
 */
wasm_host_status cm_canon_lower_call(wasm_exec *e, const void *origin,
				     struct cm_component_instance *inst,
				     struct cm_func *callee, const cm_type *ft,
				     const cabi_options *opts, uint32_t ncp,
				     uint32_t ncr, const wasm_val *args,
				     wasm_val *results);
/* Request cancellation of a task from caller (definitions.py). */
int cm_task_request_cancellation(cm_task *t, cabi_error *err);
/* Host-driven loop: tick until *done or deadlock. */
int cm_sched_drive(cm_store *s, const bool *done, cabi_error *err);

/* ---- host calls that complete later (host_pending.c) ------------------ */

struct cm_host_pending;
struct cm_component_instance;
/* A deferred call of host function f lowered by subtask st. */
struct cm_host_pending *
cm_host_pending_new(cm_store *s, struct cm_func *f,
		    struct cm_component_instance *caller, cm_subtask *st,
		    const cm_call_cbs *cbs);
/* Forget p (the host function answered at once after all). */
/* Only while outstanding: a settled one is the settlement's. */
void cm_host_pending_discard(struct cm_host_pending *p);
/* Whether the host settled p already (it is then on the settled list). */
bool cm_host_pending_settled(const struct cm_host_pending *p);
/*
 * Tell the store's observer (run/instance.h) that p deferred, for
 * the call whose ctx is call_ctx; and, for a host call answered at once
 * after deferring (then discarded), how it settled.
 */
void cm_host_pending_observe(struct cm_host_pending *p, uint64_t call_tag,
			     const cm_val *args, uint32_t nargs);
void cm_host_pending_observe_settled(struct cm_host_pending *p,
				     cm_host_outcome outcome,
				     const cm_val *result, const char *msg);
/* The call tag of the root task t works under (0: none or no task). */
uint64_t cm_thread_call_tag(const cm_thread *t);
/* st goes away: p must never resolve it. */
void cm_host_pending_detach(struct cm_host_pending *p);
/* The guest asked to cancel p's subtask: tell the embedder. */
void cm_host_pending_cancel(struct cm_host_pending *p);
/* Deliver every settled host call (a turn or a driver, never a settle). */
int cm_host_pending_deliver(cm_store *s, cabi_error *err);
/* The thread ran out of fuel inside a service turn: park it, ready. */
int cm_thread_out_of_fuel(cm_thread *t);
/* Is some waiting thread ready to run now (no policy choice made)? */
bool cm_sched_has_ready(cm_store *s);
/*
 * Calls of cm_call_start (invoke.c), seen by the service turn: the
 * turn's fuel capped by what the calls in flight have left; the fuel
 * each resumed thread spends is charged to the call it works for (its
 * root task's call: cm_calls_owner, NULL for background work of calls
 * already answered); after the turn, those charges and the turn's trap
 * (NULL: none) decide the calls.  A call a restore adopted that no one
 * waits for (no on_done) and that ends trapped by its budget or the
 * deadlock makes after_turn fail with *out, the turn's trap then.
 */
uint64_t cm_calls_turn_fuel(cm_store *s, uint64_t fuel);
struct cm_call *cm_calls_owner(cm_store *s, const cm_thread *t);
void cm_calls_charge(struct cm_call *c, uint64_t used);
int cm_calls_after_turn(cm_store *s, const cabi_error *trap, cabi_error *out);
/*
 * Snapshots (snapshot_async.c): the fuel budget the host's call of task
 * at has left (UINT64_MAX: unlimited, or not a call's task); a restored
 * task of such a call (caller gone) adopted as a call in flight again,
 * with that budget, no on_done and no tag (cm_store_restored_call).
 */
uint64_t cm_task_call_budget(const cm_task *at);
int cm_call_adopt(cm_store *s, cm_task *at, uint64_t fuel);

/* ---- canon built-ins --------------------------------------------------- */

bool cm_is_async_builtin(cm_canon_op op);
wasm_func *cm_canon_async_builtin(struct cm_component_instance *inst,
				  const cm_canon *cn, const cabi_options *opts);
/* cabi hooks: stream/future ends and error-contexts as values */
int cm_hook_lift_async(cabi_cx *cx, uint32_t i, const cm_type *t, cm_val *out);
int cm_hook_lower_async(cabi_cx *cx, const cm_val *v, const cm_type *t,
			uint32_t *index);
/* stream.*, future.*, error-context.* (stream.c) */
wasm_host_status cm_stream_builtin(wasm_exec *e,
				   struct cm_component_instance *inst,
				   const cm_canon *cn, const cabi_options *opts,
				   const wasm_val *args, wasm_val *results);

/* ---- what a store snapshot names (run/snapshot.c) ---------------------- */

/*
 * A suspended thread's continuations are static functions of the files
 * below; a snapshot names each by a code of this list (append only: the
 * codes are in the format).  Each file answers for its own codes.
 */
typedef void (*cm_cont_fn)(void);
enum {
	CM_CONT_NONE = 0,
	CM_CONT_WAKE_EXEC, /* wake */
	CM_CONT_WAKE_CONTINUE,
	CM_CONT_WAKE_IMPLICIT_START,
	CM_CONT_WAKE_CALLBACK,
	CM_CONT_WAKE_EXPLICIT_START,
	CM_CONT_READY_GATE, /* ready */
	CM_CONT_READY_CALLBACK,
	CM_CONT_READY_TARGET,
	CM_CONT_READY_SET,
	CM_CONT_READY_SUBTASK,
	CM_CONT_READY_SYNC_LOWER,
	CM_CONT_READY_END,
	CM_CONT_DONE_SYNC_LIFT, /* on_done */
	CM_CONT_DONE_STACKFUL,
	CM_CONT_DONE_CALLBACK,
	CM_CONT_DONE_CALLBACK_FIRST,
	CM_CONT_DONE_EXPLICIT,
	CM_CONT_COMPLETE_CANCELLED, /* complete */
	CM_CONT_COMPLETE_WAIT,
	CM_CONT_COMPLETE_CANCEL,
	CM_CONT_COMPLETE_SYNC_LOWER,
	CM_CONT_COMPLETE_END,
	CM_CONT_COUNT
};
cm_cont_fn cm_thread_cont(uint32_t code);
cm_cont_fn cm_lift_cont(uint32_t code);
cm_cont_fn cm_builtin_cont(uint32_t code);
cm_cont_fn cm_lower_cont(uint32_t code);
cm_cont_fn cm_stream_cont(uint32_t code);

/*
 * Pending host calls (host_pending.c): what a snapshot writes of one
 * (state: 0 outstanding, 1 returned, 2 trapped, 3 cancelled; next: the
 * next on its list), and re-creating one on the pending list (state 0,
 * appended) or the settled list, taking result over.
 */
typedef struct cm_host_pending_view {
	cm_subtask *st;
	struct cm_func *func;
	uint32_t state;
	const cm_val *result;
	const char *msg;
	struct cm_host_pending *next;
} cm_host_pending_view;
void cm_host_pending_info(const struct cm_host_pending *p,
			  cm_host_pending_view *v);
struct cm_host_pending *cm_host_pending_restore(cm_store *s, struct cm_func *f,
						cm_subtask *st, uint32_t state,
						cm_val *result,
						const char *msg);

/* Which kind of tracked object o is. */
bool cm_obj_is_thread(const cm_store_obj *o);
bool cm_obj_is_task(const cm_store_obj *o);
bool cm_obj_is_subtask(const cm_store_obj *o);
bool cm_obj_is_set(const cm_store_obj *o);
bool cm_obj_is_end(const cm_store_obj *o);

/*
 * A call the host started (invoke.c, cm_call_start) as a snapshot sees
 * it: the call itself (never written), the task-less thread that begins
 * a queued one (never written: no guest code ran), and a task whose
 * caller is such a call (written as a task whose caller is gone).
 */
bool cm_obj_is_call(const cm_store_obj *o);
bool cm_thread_is_call_starter(const cm_thread *t);
bool cm_task_caller_is_call(const cm_task *at);

/* Empty tracked objects a restore fills in; NULL when out of memory. */
cm_subtask *cm_subtask_alloc(cm_store *s);
cm_waitable_set *cm_waitable_set_alloc(cm_store *s);
/*
 * Is f a canon lower's trampoline; its lower (the origin of the heap
 * subtasks it makes, cm_subtask.origin).
 */
const void *cm_lower_of(const wasm_func *f);
/* The function the lower lw calls. */
struct cm_func *cm_lower_callee(const void *lw);
/* Bind a restored heap subtask to the lower lw (cm_lower_of). */
void cm_subtask_bind(cm_subtask *st, const void *lw);
/* The canon definition of built-in f (sched.h's built-ins), or NULL. */
const cm_canon *cm_builtin_canon(const wasm_func *f);

#endif
