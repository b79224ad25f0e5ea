/*
 * instance.h - the public run-time API of hostel's Component Model:
 * instantiate a loaded component (component.h) in a store
 * (sched/store.h), satisfy its imports with host functions, host resource
 * types or other instances, find its exports and call them with cm_val
 * values (cabi/val.h).  This is what the daemon and `hostel run` use.
 *
 * Contract:
 *  - Nothing aborts on guest behaviour or bad host values; every failure
 *    comes back as a cm_error: TRAP (guest trap or ABI trap; `msg` holds
 *    the message the conformance suite matches as a substring), LINK (an
 *    import the linker does not provide, named in the message),
 *    UNSUPPORTED (async built-ins and async calls: not implemented yet),
 *    NOMEM, VALUE (a host value that does not match its type).
 *  - A trap poisons the component instances the failing call had entered
 *    (digest 2.15); the host-instantiated root is always among them, so
 *    after a trap every later call into the tree traps with "cannot enter
 *    component instance".  Instances are freed with their store.
 *  - Resource values at the host boundary are cm_handle values carrying
 *    the runtime resource type (cabi_resource_type) and the rep.
 *  - Only the synchronous path exists: calling an export lifted with the
 *    `async` option fails with UNSUPPORTED "async not implemented".
 */
#ifndef HOSTEL_COMPONENT_INSTANCE_H
#define HOSTEL_COMPONENT_INSTANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "cabi/cabi.h"
#include "cabi/val.h"
#include "component/types.h"
#include "sched/store.h"

typedef struct cm_component_instance cm_component_instance;
typedef struct cm_func cm_func;
typedef struct cm_linker cm_linker;
typedef struct cm_host_call cm_host_call;

#define CM_ERROR_MSG_MAX 256

typedef enum cm_error_kind {
	CM_ERR_NONE = 0,
	CM_ERR_TRAP,
	CM_ERR_LINK,
	CM_ERR_UNSUPPORTED,
	CM_ERR_NOMEM,
	CM_ERR_VALUE,
} cm_error_kind;

typedef struct cm_error {
	cm_error_kind kind;
	char msg[CM_ERROR_MSG_MAX];
} cm_error;

/* "trap", "link error", ... */
const char *cm_error_kind_name(cm_error_kind k);

/* ---- host functions ---------------------------------------------------- */

/*
 * A host function bound to a component import.  `args` are the nargs
 * parameters of the import's declared type (cm_host_call_type), owned by
 * the runtime; the function writes nresults (0 or 1) values into
 * `results`, which the runtime then owns.  Return 0, or -1 after
 * cm_host_call_trap (a trap of the calling component).
 */
typedef int (*cm_host_fn)(cm_host_call *call, void *env, const cm_val *args,
			  uint32_t nargs, cm_val *results, uint32_t nresults);

int cm_host_call_trap(cm_host_call *call, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The CM_FUNC type the import declares (in the importer's terms). */
const cm_type *cm_host_call_type(const cm_host_call *call);
cm_store *cm_host_call_store(const cm_host_call *call);
/* The calling instance (NULL when the host calls its own function). */
cm_component_instance *cm_host_call_caller(const cm_host_call *call);

/* ---- host calls that complete later (sched/host_pending.c) ------------- */

/*
 * A host function whose import is lowered through the async ABI (an
 * async lower, or a sync lower of an async-typed import, which blocks
 * the calling thread) may answer later: it calls cm_host_call_defer and
 * returns CM_HOST_PENDING.  The embedder keeps the handle and later
 * calls exactly one of cm_host_settle, cm_host_settle_trap or
 * cm_host_settle_cancelled.  Settling never runs guest code: it records
 * the outcome, and the next service turn (cm_store_service_turn)
 * delivers it and runs the threads it readies; the store's
 * request_service callback fires when no request is outstanding.
 * The cancel callback runs when the guest cancels the subtask
 * (subtask.cancel; the handle stays valid, settle it, e.g. with
 * cm_host_settle_cancelled) or when the store is freed (the handle dies
 * when the callback returns).
 */
typedef struct cm_host_pending cm_host_pending;

#define CM_HOST_PENDING 1

/*
 * NULL (and a trap recorded on call) when the import is lowered
 * synchronously with a sync type (that caller cannot block) or out of
 * memory; the host function then returns -1.
 */
cm_host_pending *cm_host_call_defer(cm_host_call *call);
void cm_host_pending_set_cancel(cm_host_pending *p,
				void (*on_cancel)(void *env,
						  cm_host_pending *p),
				void *env);
/*
 * The result (nresults 0 or 1 values of the import's result type,
 * copied).  A VALUE error leaves the call pending; 0 consumes p.
 */
int cm_host_settle(cm_host_pending *p, const cm_val *results, uint32_t nresults,
		   cm_error *err);
/* The host call traps its caller (poisoning it); consumes p. */
void cm_host_settle_trap(cm_host_pending *p, const char *msg);
/* Resolve as cancelled (after cancellation was requested); consumes p. */
void cm_host_settle_cancelled(cm_host_pending *p);
/* Host calls deferred and not yet settled. */
uint32_t cm_store_pending_host_calls(const cm_store *s);

/*
 * One service turn (ARCHITECTURE invariants 2-3): deliver settled host
 * calls and run ready threads until none is ready or `fuel` (0: the
 * store's turn_fuel; 0 there too: unlimited) is spent; a thread out of
 * fuel is suspended and continues in a later turn.  Returns 1 when work
 * remains (service has been requested again), 0 when quiescent, -1 on a
 * trap (err; the trapping instance is poisoned, other work stays).
 */
int cm_store_service_turn(cm_store *s, uint64_t fuel, cm_error *err);

/* ---- the linker: what the host provides for imports ------------------- */

cm_linker *cm_linker_new(void);
/* The linker must outlive every instance made with it. */
void cm_linker_free(cm_linker *l);

/*
 * Define function `name` of the imported instance `instance` (e.g.
 * "wasi:cli/stdout@0.2.0", "get-stdout"), or a top-level function import
 * when instance is NULL.  Redefining replaces.  -1 when out of memory.
 */
int cm_linker_define_func(cm_linker *l, const char *instance, const char *name,
			  cm_host_fn fn, void *env);
/*
 * Define resource type `name` of the imported instance `instance`: a new
 * host resource type (its identity), whose dtor (may be NULL) runs when a
 * component drops an owned handle.  NULL when out of memory.
 */
const cabi_resource_type *
cm_linker_define_resource(cm_linker *l, const char *instance, const char *name,
			  void (*dtor)(void *env, uint64_t rep), void *env);
/* Satisfy import `name` with the exports of another instance. */
int cm_linker_define_instance(cm_linker *l, const char *name,
			      cm_component_instance *inst);

/* ---- instances ---------------------------------------------------------- */

/*
 * Instantiate c (a root from cm_component_load, which must outlive the
 * store) in s.  `l` may be NULL when c imports nothing.  Core start
 * functions run here; a trap in one is a TRAP error.
 */
int cm_instantiate(cm_store *s, const cm_component *c, const cm_linker *l,
		   cm_component_instance **out, cm_error *err);

/*
 * An exported function: `name` at the root when instance is NULL, else
 * function `name` of the exported instance `instance`
 * (cm_instance_export(i, "wasi:cli/run@0.2.0", "run")).  NULL if absent
 * or not a function.
 */
cm_func *cm_instance_export(cm_component_instance *inst, const char *instance,
			    const char *name);
/* The root-level export names, for listings: count and i-th name/sort. */
uint32_t cm_instance_nexports(const cm_component_instance *inst);
const char *cm_instance_export_name(const cm_component_instance *inst,
				    uint32_t i, cm_sort *sort);

bool cm_instance_poisoned(const cm_component_instance *inst);

/* The CM_FUNC type of f, in the terms of the component that exports it. */
const cm_type *cm_func_type(const cm_func *f);
/* Lifted with the `async` option (not callable yet). */
bool cm_func_async_lifted(const cm_func *f);

/*
 * Store.invoke: call f from the host with nargs arguments (copied) and
 * receive its result: *nresults (0 or 1) values written to results,
 * owned by the caller (cm_vals_free).  Uses the store's fuel
 * (cm_store_set_fuel); running out is a trap.
 */
int cm_invoke(cm_store *s, cm_func *f, const cm_val *args, uint32_t nargs,
	      cm_val *results, uint32_t *nresults, cm_error *err);

#endif
