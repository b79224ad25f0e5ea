/*
 * store.h - the Component Model Store (definitions.py `Store`): the
 * container of every component instance that can call another, and of
 * the execution contexts their guest code runs on.
 *
 * Contract:
 *  - A cm_store owns one wasm_store (every core object of every
 *    instance), the runtime objects of the component instances created in
 *    it (the arena, and the tracked async objects, cm_store_obj), and a
 *    pool of wasm_exec.  cm_store_free releases all of it at once;
 *    instances are never freed one by one (instances are created and
 *    destroyed as whole trees, digest 2.15/3.15).
 *  - Guest code of a store runs only under a call into that store (one
 *    driver per store, ARCHITECTURE invariant 2).  Nothing here is global.
 *  - Execs: every lifted call runs on its task's implicit thread, which
 *    owns an exec (sched.h, thread.c; idle ones are kept in
 *    thread_execs); blocked threads wait on the store's waiting list.
 *    The pool of execs serves the guest calls the host makes around a
 *    call (a caller's realloc in a sync lower), taken and given back
 *    LIFO, so they nest on the C stack as the spec allows for calls that
 *    cannot block (digest 3.4, last paragraph).
 *  - Fuel: `fuel` is what the current host call may still spend, shared
 *    by every exec the call nests (each exec is topped up from it and
 *    gives back what it did not use).  UINT64_MAX = unlimited.
 */
#ifndef HOSTEL_RUN_STORE_H
#define HOSTEL_RUN_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cabi/cabi.h"
#include "wasm/wasm.h"

struct cm_task;
struct cm_arena;
struct cm_host_pending;
struct cm_end;
typedef struct cm_store cm_store;

typedef struct cm_store_cleanup {
	void (*fn)(void *);
	void *arg;
} cm_store_cleanup;

/*
 * A runtime object of the async model (thread, task, subtask, waitable
 * set, stream/future end) the store owns while it lives.  Such objects
 * point at one another from handle tables, the waiting list, waitable
 * sets and shared streams, so no reference among those is an owning
 * one: the store's list of tracked objects is.  An object is tracked
 * from its creation until its normal free (cm_store_untrack, then its
 * own free); whatever is still tracked when the store goes is disposed
 * of exactly once by `dispose`, which frees only the memory that object
 * alone owns and never follows its pointers to other tracked objects
 * (they may be gone already).
 */
typedef struct cm_store_obj {
	struct cm_store_obj *prev, *next;
	void (*dispose)(struct cm_store_obj *o);
} cm_store_obj;

typedef struct cm_store_config {
	wasm_store_limits limits; /* memories, tables, start fuel */
	size_t max_stack_bytes;	  /* per exec; 0 = engine default */
	uint32_t max_call_depth;  /* per exec; 0 = engine default */
	/*
	 * wasmtime's stricter reentrance rule (digest 2.15, D3): a call
	 * between an instance and itself, an ancestor or a descendant
	 * traps "cannot enter component instance".  The spec's entering
	 * set rule always applies.
	 */
	bool reentrance_compat;
	/*
	 * Not read any more: every built-in instantiates, and one the
	 * runtime does not implement traps when called
	 * (run/instantiate.c), whatever this says.
	 */
	bool lazy_unsupported;
	/*
	 * Scheduling policy (ARCHITECTURE "Scheduling policy"): 0 = FIFO;
	 * otherwise every free choice is drawn from a xorshift generator
	 * seeded with it (HOSTEL_SCHED_SEED, read by the embedder).
	 */
	uint64_t sched_seed;
	/*
	 * Service requests (seed 000): called when work becomes ready and no
	 * request is outstanding; the embedder later calls cm_store_service.
	 * NULL: the embedder drives by itself.
	 */
	void (*request_service)(void *env);
	void *service_env;
	/* fuel of one service turn (0: unlimited) */
	uint64_t turn_fuel;
	/*
	 * A blocking driver (cm_invoke of an async export) with no thread
	 * ready while host calls are pending calls wait_host(wait_env):
	 * the embedder waits until it has settled at least one (return 0;
	 * e.g. wasi_ctx_wait_host sleeps to the next WASI timer) or gives
	 * up (-1: the call traps as a deadlock).  NULL: trap at once.  An
	 * event-loop embedder leaves it NULL and settles between turns.
	 */
	int (*wait_host)(void *wait_env);
	void *wait_env;
	/*
	 * Bounds on what a guest can make without end, so a hostile guest
	 * traps instead of growing the embedder's memory (0: the default
	 * below; cm_store_new stores the value in force).  max_handles:
	 * live elements of each instance's handle table (resources,
	 * subtasks, stream/future ends, waitable sets, error contexts);
	 * max_threads: live registered threads (tasks' implicit threads
	 * and thread.new-indirect) of each instance; past either the guest
	 * traps "handle table full (limit N)".  max_pending_host_calls:
	 * host calls of the store waiting to complete; past it the import
	 * traps "too many pending host calls (limit N)".  A suspended
	 * thread keeps its stack (up to max_stack_bytes, 1 MiB by
	 * default), so threads are the dearest: 1,000 by default.
	 */
	uint32_t max_handles;
	uint32_t max_threads;
	uint32_t max_pending_host_calls;
	/*
	 * Host bytes the store's values in transit may take at once
	 * (cabi_budget, cabi/cabi.h): what lifting out of linear memory
	 * allocates for stream and future copies, calls between
	 * components, host calls' arguments (while their subtask lives),
	 * and results waiting for the embedder (invoke.c).  Past it
	 * the lift traps "host memory budget for values exhausted: ...
	 * (limits.hostBytes)" before allocating.  0: the default below;
	 * UINT64_MAX: none.
	 */
	uint64_t max_host_bytes;
	/*
	 * Component and core instances the store may hold: each level of
	 * nesting may instantiate the one below it twice, so a component
	 * of a few hundred bytes asks for 2^100.  Past it instantiation
	 * fails "too many instances (limit N)".  0: the default below.
	 */
	uint32_t max_instances;
} cm_store_config;

#define CM_STORE_DEFAULT_MAX_HANDLES		100000u
#define CM_STORE_DEFAULT_MAX_THREADS		1000u
#define CM_STORE_DEFAULT_MAX_PENDING_HOST_CALLS 10000u
/* 256 MiB: a few times the largest value the daemon's protocol carries
 * (16 MiB of JSON), and small enough that a machine of 1 GiB survives
 * a guest that tries to make the host copy gigabytes. */
#define CM_STORE_DEFAULT_MAX_HOST_BYTES (256ull << 20)
/* 10,000: componentize-js guests have about ten, compositions hundreds. */
#define CM_STORE_DEFAULT_MAX_INSTANCES 10000u

/* Watching deferred host calls: run/instance.h. */
struct cm_type;
struct cm_val;
typedef enum cm_host_outcome {
	CM_HOST_RETURNED = 0,
	CM_HOST_TRAPPED,
	CM_HOST_CANCELLED,
} cm_host_outcome;

typedef struct cm_host_observer {
	void (*deferred)(void *env, uint64_t call_tag, const char *instance,
			 const char *name, const struct cm_type *ft,
			 const struct cm_val *args, uint32_t nargs,
			 uint64_t tags[2]);
	void (*settled)(void *env, const uint64_t tags[2],
			cm_host_outcome outcome, const struct cm_type *ft,
			const struct cm_val *result, const char *msg);
	void *env;
} cm_host_observer;

struct cm_store {
	wasm_store *wasm;
	struct cm_arena *arena; /* runtime objects of the instances */
	cm_store_config cfg;

	uint64_t fuel; /* left for the current host call; UINT64_MAX: no cap */
	uint32_t fuel_parked; /* threads with fuel_parked set (sched.h) */

	/* exec pool: execs[0..nbusy) are in use (LIFO), the rest idle */
	wasm_exec **execs;
	uint32_t nexecs, nbusy, execs_cap;

	/* the Task whose core code runs now (NULL: host or a core start) */
	struct cm_task *current;

	/* run at cm_store_free, newest first (instances' handle tables) */
	cm_store_cleanup *cleanups;
	uint32_t ncleanups, cleanups_cap;

	/*
	 * The message of the last trap a host function raised: a core trap
	 * inside wasm_instantiate (a start function calling a lowered
	 * import) reports only its kind, this keeps the text.
	 */
	char last_trap[256];

	/* async (sched.h): the waiting list, FIFO by start of waiting */
	struct cm_thread *wfirst, *wlast;
	/* idle execs of finished threads, reused by new threads */
	wasm_exec *thread_execs[8];
	uint32_t nthread_execs;
	struct cm_thread *current_thread;
	uint64_t rng;
	bool service_requested;
	uint32_t pending_host_calls;

	/*
	 * Host calls that complete later (host_pending.c): the outstanding
	 * ones, and the settled ones a service turn has yet to deliver.
	 * `lowering`: the async subtask whose host callee runs now (only
	 * such a call may defer).  `in_turn`: a service turn runs, so a
	 * thread out of fuel is suspended, not trapped.
	 */
	struct cm_host_pending *pending_first, *settled_first, *settled_last;
	struct cm_subtask *lowering;
	bool pending_cleanup, in_turn;
	bool freeing; /* cm_store_free is under way */
	cm_host_observer host_observer; /* fn NULL: nobody watches */
	/* Root tasks (task.h cm_task.root): the last serial given, and
	 * for the root a cm_call_start call starts now (invoke.c; taken by
	 * canon_lift.c) its serial and its call's tag. */
	uint64_t root_serial, next_root, next_root_tag;

	/* calls started by cm_call_start, not decided yet (invoke.c) */
	struct cm_call *calls;

	/* tracked runtime objects (cm_store_obj): a ring around this */
	cm_store_obj objs;

	/* host bytes held for values in transit (cfg.max_host_bytes) */
	cabi_budget host_bytes;
	/* component and core instances made (cfg.max_instances) */
	uint32_t ninstances;
	/* host_bytes.work billed as fuel so far (cm_store_bill_host_work) */
	uint64_t host_work_billed;
	/* fuel spent by the threads of its service turns (an embedder's
	 * metrics: cm_store_service_turn) */
	uint64_t fuel_used;
	/*
	 * While a task hands on its result (task.return, a sync lift's
	 * result: cm_task_return), the cx that lifted it: a caller that
	 * keeps the result past the call (a call in a service turn,
	 * invoke.c) takes its charge over with cabi_cx_keep, so results
	 * waiting for the embedder stay within max_host_bytes together.
	 */
	cabi_cx *returning;
	/*
	 * The resource types its instances defined, in the order
	 * instantiation made them (a fresh instantiation of the same
	 * component repeats it): how a snapshot names a handle's type.
	 */
	const cabi_resource_type **rtypes;
	uint32_t nrtypes, rtypes_cap;
	/* the embedder's pending host calls in snapshots (run/instance.h) */
	struct cm_host_durable {
		int (*save)(void *env, struct cm_host_pending *p,
			    uint8_t *desc, size_t cap, size_t *len);
		int (*resume)(void *env, cm_store *s,
			      struct cm_host_pending *p, const uint8_t *desc,
			      size_t len);
		void *env;
	} host_durable;
	/* host-held stream and future ends in snapshots (run/instance.h) */
	struct cm_host_end_durable {
		int (*save)(void *env, struct cm_end *e, uint8_t *desc,
			    size_t cap, size_t *len);
		int (*restore)(void *env, cm_store *s, struct cm_end *e,
			       const uint8_t *desc, size_t len);
		void *env;
	} host_end_durable;
	/* host ends waiting for cm_host_end_defer's call (host_stream.c) */
	struct cm_end *deferred_first, *deferred_last;
	/*
	 * The embedder's host resource types in snapshots (run/instance.h
	 * cm_store_set_host_resource_durable), in registration order: one
	 * entry per type the embedder registers (WASI: eight).
	 */
	struct cm_host_res_reg {
		const cabi_resource_type *rt;
		struct cm_host_resource_durable {
			const char *key;
			int (*save)(void *env, uint64_t rep, uint8_t *desc,
				    size_t cap, size_t *len, char *why,
				    size_t whylen);
			int (*restore)(void *env, cm_store *s,
				       const uint8_t *desc, size_t len,
				       uint64_t *rep, char *why, size_t whylen);
			void *env;
		} d;
	} *host_res;
	uint32_t nhost_res, host_res_cap;
	/*
	 * The host types the linker's fallback made for this store
	 * (run/linker.c), in the order it made them: their reps stand for
	 * no host state, so snapshots write them as they are, naming the
	 * type by its place here (no registration: one per resource a
	 * component's imports declare, which the component's length
	 * bounds, each found in constant time).
	 */
	const cabi_resource_type **fallback_rts;
	uint32_t nfallback_rts, fallback_rts_cap;
};

/* cfg may be NULL (defaults: spec reentrance rule, engine limits). */
cm_store *cm_store_new(const cm_store_config *cfg);
void cm_store_free(cm_store *s);

/*
 * Call fn(arg) when the store is freed (before the wasm_store goes), in
 * reverse order of registration.  -1 when out of memory (then fn has not
 * been registered).
 */
int cm_store_on_free(cm_store *s, void (*fn)(void *), void *arg);
/*
 * True while cm_store_free runs (its cleanups, the pending host calls'
 * cancel callbacks, the disposals): a callback that finds it true must
 * only forget: never settle a call, nor drop, read or write a stream
 * end (clearing an end's notify is forgetting).
 */
bool cm_store_freeing(const cm_store *s);

/*
 * Track o (embedded in a runtime object) until cm_store_untrack; if the
 * store is freed first, dispose(o) runs once, after the cleanups and
 * before the execs and the wasm_store go.
 */
void cm_store_track(cm_store *s, cm_store_obj *o,
		    void (*dispose)(cm_store_obj *o));
/* o is being freed normally (no-op when it was never tracked). */
void cm_store_untrack(cm_store_obj *o);

/*
 * Host work done for the store's guests (cabi_budget.work: bytes lifted
 * or moved) costs fuel: one unit per CM_HOST_WORK_BYTES_PER_FUEL bytes,
 * about what the interpreter runs in the time a lift takes for them.
 * Without it a loop of a few instructions that copies a value just under
 * limits.hostBytes (0.6 s of host work a copy) would hold a service turn
 * of 20,000 fuel for hours; billed, the turn ends after one copy and
 * fuelPerCall counts the copies.  The built-ins and lowered calls that
 * do such work bill what is owed so far to the exec of the guest that
 * runs them: all of it once, whatever the nesting (a nested built-in
 * that paid leaves nothing owed for its caller), as much as that exec
 * has, the rest to the next bill.  An exec with unlimited fuel is left
 * so, and the work it owed is forgiven.
 */
#define CM_HOST_WORK_BYTES_PER_FUEL 16u
void cm_store_bill_host_work(cm_store *s, wasm_exec *x);

/* Fuel for the next host call (UINT64_MAX: unlimited). */
void cm_store_set_fuel(cm_store *s, uint64_t fuel);
uint64_t cm_store_fuel(const cm_store *s);

/*
 * Take an idle exec (creating one if needed); NULL when out of memory.
 * Give it back with cm_store_exec_release in LIFO order; `reusable`
 * false when its call did not end (BLOCKED / OUT_OF_FUEL), so it is
 * replaced rather than reused.
 */
wasm_exec *cm_store_exec_acquire(cm_store *s);
void cm_store_exec_release(cm_store *s, wasm_exec *e, bool reusable);

/* Run f on e with the store's fuel, giving back what is left. */
wasm_exec_status cm_store_exec_call(cm_store *s, wasm_exec *e, wasm_func *f,
				    const wasm_val *args, uint32_t nargs);

#endif
