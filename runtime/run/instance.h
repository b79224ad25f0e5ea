/*
 * instance.h - the public run-time API of hostel's Component Model:
 * instantiate a loaded component (component.h) in a store
 * (run/store.h), satisfy its imports with host functions, host resource
 * types or other instances, find its exports and call them with cm_val
 * values (value/val.h).  This is what the daemon and `hostel run` use.
 *
 * Contract:
 *  - Nothing aborts on guest behaviour or bad host values; every failure
 *    comes back as a cm_error: TRAP (guest trap or ABI trap; `msg` holds
 *    the message the conformance suite matches as a substring), LINK (an
 *    import the linker does not provide, named in the message),
 *    UNSUPPORTED (what the runtime does not do, e.g. component values and
 *    start functions (🪙), too many or too deeply nested instances),
 *    NOMEM, VALUE (a host value that does not match its type).
 *  - A trap poisons the component instances the failing call had entered
 *    (digest 2.15); the host-instantiated root is always among them, so
 *    after a trap every later call into the tree traps with "cannot enter
 *    component instance".  Instances are freed with their store.
 *  - Resource values at the host boundary are cm_handle values carrying
 *    the runtime resource type (cabi_resource_type) and the rep.
 *  - Sync- and async-typed exports, lifted with or without the `async`
 *    option, are called the same way: cm_invoke drives the store's
 *    scheduler until the call resolves (run/invoke.c); cm_call_start
 *    runs the call in the store's service turns instead (below).
 */
#ifndef HOSTEL_RUN_INSTANCE_H
#define HOSTEL_RUN_INSTANCE_H

#include <stdbool.h>
#include <stdint.h>

#include "cabi/cabi.h"
#include "value/val.h"
#include "component/types.h"
#include "run/store.h"

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
/* The name it is bound under, and its instance's (NULL: top level). */
const char *cm_host_call_name(const cm_host_call *call, const char **instance);
cm_store *cm_host_call_store(const cm_host_call *call);
/* The calling instance (NULL when the host calls its own function). */
cm_component_instance *cm_host_call_caller(const cm_host_call *call);

/* ---- host calls that complete later (run/host_pending.c) ------------- */

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
/*
 * Pending host calls in store snapshots (run/snapshot.h).  The embedder
 * that defers host calls describes its own, as plain data, and makes
 * them again in a restored store:
 *  - save(env, p, desc, cap, len): write at most cap
 *    (CM_HOST_DESC_MAX) bytes describing the outstanding call p, set
 *    *len, return 0; -1: p cannot be resumed (not the embedder's, or
 *    nothing to resume it by).
 *  - resume(env, s, p, desc, len): in the store s being restored, p is
 *    the call again (same import, same subtask, outstanding); take it
 *    over as the original was (it settles p later, or at once), return
 *    0; -1: it cannot.
 * A call with no save, a save or a resume that answers -1, is settled
 * cancelled (cm_host_settle_cancelled) in the restored store: its
 * subtask resolves CANCELLED_BEFORE_RETURNED and the guest sees that
 * event.  Settled calls not yet delivered are written with their
 * outcome by the runtime itself.  Either function may be NULL.
 */
#define CM_HOST_DESC_MAX 256u
void cm_store_set_host_durable(cm_store *s,
			       int (*save)(void *env, cm_host_pending *p,
					   uint8_t *desc, size_t cap,
					   size_t *len),
			       int (*resume)(void *env, cm_store *s,
					     cm_host_pending *p,
					     const uint8_t *desc, size_t len),
			       void *env);
/*
 * Host resources in store snapshots (run/snapshot.h).  A handle of a
 * host resource type (cm_linker_define_resource) holds a rep only the
 * embedder understands (an index into its own table, an address), so a
 * snapshot cannot write it; the embedder that can re-create what a rep
 * stands for registers, per host resource type rt of store s:
 *  - key: the type's stable name in snapshots (1 to
 *    CM_HOST_RESOURCE_KEY_MAX bytes, unique among s's registrations;
 *    the string must outlive s).  A restore finds the type by it.
 *  - save(env, rep, desc, cap, len, why, whylen): describe rep as plain
 *    data, at most cap (CM_HOST_RESOURCE_DESC_MAX) bytes, set *len,
 *    return 0; -1 with why: it cannot be described (the snapshot is
 *    refused "not supported yet: <why>").  The same state must give the
 *    same bytes (a re-snapshot of a restored store is byte-identical).
 *  - restore(env, s, desc, len, rep, why, whylen): in store s being
 *    restored, make what desc describes and set *rep; -1 with why: the
 *    snapshot cannot be restored here (CM_ERR_VALUE "host resource
 *    <key>: <why>").  desc comes from the snapshot: check every byte.
 *    A resource that can come back only broken (a file that vanished)
 *    should come back as such, so the guest sees the error on its next
 *    use, rather than fail the restore.
 * A resource is described once however many handles (own and borrows,
 * in any instance) hold it; its handles keep their numbers.  When a
 * restore fails after resources were made, the store calls rt's
 * host_dtor on each.  A host type with no registration stays refused
 * ("not supported yet: a handle of host resource type <name> ...").
 * Returns 0; -1 for a bad or duplicate key or out of memory.
 * Registering rt again replaces its entry.
 */
#define CM_HOST_RESOURCE_DESC_MAX 16384u
#define CM_HOST_RESOURCE_KEY_MAX  128u
/* struct cm_host_resource_durable {key, save, restore, env}: run/store.h */
typedef struct cm_host_resource_durable cm_host_resource_durable;
int cm_store_set_host_resource_durable(cm_store *s,
				       const cabi_resource_type *rt,
				       const cm_host_resource_durable *d);
/* The import p is a call of (its instance name, NULL for none). */
const char *cm_host_pending_name(const cm_host_pending *p,
				 const char **instance);
/* Host calls deferred and not yet settled. */
uint32_t cm_store_pending_host_calls(const cm_store *s);

/*
 * Watching deferred host calls (the daemon's hostcall.* history events).
 * `deferred` runs when a host function defers (before it can settle),
 * with the import's instance name (NULL: none) and function name, its
 * type and arguments, and call_tag: the tag (cm_call_set_tag) of the
 * cm_call_start call whose task it works for, even when that call was
 * answered long ago (background work), 0 for none.  It
 * fills tags[2], which the store keeps and hands to `settled` when the
 * call settles, exactly once: RETURNED (result: the import's result, or
 * NULL when it has none), TRAPPED (msg) or CANCELLED.  A host call still
 * outstanding when its store is freed is not reported.  Neither callback
 * may call into the store.  (cm_host_observer: run/store.h.)
 * cm_store_observe_host_calls starts (o) or stops (NULL) watching.
 */
void cm_store_observe_host_calls(cm_store *s, const cm_host_observer *o);

/* ---- host-held stream and future ends (run/host_stream.c) ------------ */

/*
 * The host holds one end of a stream or future whose other end a guest
 * holds: the writable end of a pair it created (cm_host_stream_new; the
 * readable end goes to the guest as a value: an argument of an export,
 * a host function's result), or a readable end a guest passed to it (a
 * stream/future value it received, taken with cm_host_end_take).  The
 * host never blocks: a write copies into the guest's pending read, a
 * read copies out of the guest's pending write, and with nothing pending
 * nothing moves (*done = 0).  notify(env, e) fires, without running
 * guest code, when a guest copy becomes pending on e's stream or the
 * guest drops its end.  Writing lowers values into the reader's memory,
 * so for elements holding strings or lists it runs the reader's realloc:
 * call it where the store's guest code may run (not from inside a
 * built-in).  The handle dies with cm_host_end_drop or the store.
 */
typedef struct cm_end cm_host_end;

/* t: a CM_STREAM or CM_FUTURE type; *guest_end: the readable end. */
int cm_host_stream_new(cm_store *s, const cm_type *t, cm_val *guest_end,
		       cm_host_end **out, cm_error *err);
/* The readable end v carries (v gives it up); NULL when it has none. */
cm_host_end *cm_host_end_take(cm_store *s, cm_val *v);
void cm_host_end_set_notify(cm_host_end *e,
			    void (*notify)(void *env, cm_host_end *e),
			    void *env);
/*
 * Copy up to n values (a future: 1) into the guest's pending read;
 * *done: how many moved.  Returns 0; 1 when the guest end is gone
 * (nothing will ever move); -1 with err (a value of the wrong type, a
 * trap of the reader's realloc, the future's value already moved).
 */
int cm_host_end_write(cm_host_end *e, const cm_val *vals, uint32_t n,
		      uint32_t *done, cm_error *err);
/* The same out of the guest's pending write into vals (room for cap). */
int cm_host_end_read(cm_host_end *e, cm_val *vals, uint32_t cap, uint32_t *done,
		     cm_error *err);
/*
 * The same for a stream<u8> or stream<s8>, as bytes (no cm_val per
 * byte); -1 with err for any other type.
 */
int cm_host_end_read_bytes(cm_host_end *e, uint8_t *buf, uint32_t cap,
			   uint32_t *done, cm_error *err);
int cm_host_end_write_bytes(cm_host_end *e, const uint8_t *buf, uint32_t n,
			    uint32_t *done, cm_error *err);
/*
 * Ask for fn(env, e) once, at the store's next scheduling step, outside
 * any built-in: where the store's guest code may run, so a write there
 * may lower strings and lists (the reader's realloc).  The steps are
 * cm_store_service_turn's and those of a cm_invoke that waits (both run
 * the deferred calls before they pick a thread), and the store asks for
 * service.  Asking again before it ran replaces fn and env; dropping e
 * cancels it.  -1 for an end the host does not hold.
 */
int cm_host_end_defer(cm_host_end *e, void (*fn)(void *env, cm_host_end *e),
		      void *env);
/* Is a guest copy pending (there is something to move)? */
bool cm_host_end_pending(const cm_host_end *e);
/* The element type of e's stream or future (NULL: none). */
const cm_type *cm_host_end_type(const cm_host_end *e);
/*
 * The host moves e's copies only from its notify or a call it deferred
 * (cm_host_end_defer), never on its own: a guest waiting on a copy
 * pending on e with nothing deferred is stuck, and the store's calls
 * trap with the deadlock message, as a cm_invoke's would.
 */
void cm_host_end_set_passive(cm_host_end *e);
/* Does the host read from e (else write to it)?  Is it a future's? */
bool cm_host_end_readable(const cm_host_end *e);
bool cm_host_end_is_future(const cm_host_end *e);
/*
 * Elements the pending guest copy has left: room in its read, values
 * in its write (0: none pending, or a zero-length copy).
 */
uint32_t cm_host_end_room(const cm_host_end *e);
/* Has the guest dropped its end? */
bool cm_host_end_peer_dropped(const cm_host_end *e);
/* Drop the host's end: a pending guest copy completes DROPPED. */
void cm_host_end_drop(cm_host_end *e);
/*
 * Host-held ends in store snapshots (run/snapshot.h).  A snapshot
 * writes a host-held end with the guest's end and their shared state
 * (what the guest's pending copy holds), and asks the embedder that
 * holds it to describe its side as plain data:
 *  - save(env, e, desc, cap, len): at most cap (CM_HOST_END_DESC_MAX)
 *    bytes describing host end e, set *len, return 0; -1: it cannot be
 *    taken over again (the snapshot is refused, "not supported yet: a
 *    stream or future end the host holds").
 *  - restore(env, s, e, desc, len): in store s being restored, once
 *    every object is whole, e is the end again (same stream, same
 *    state, no notify set): take it over (set its notify, move what is
 *    pending if it likes) and return 0; -1: the restore fails ("a
 *    host-held end no embedder takes over").  desc comes from the
 *    snapshot: check every byte, and that e is the end it describes.
 *    Once every end is taken over, restore(env, s, NULL, NULL, 0) says
 *    so: -1 when what the embedder took over is not whole (an end its
 *    pair needs is missing).
 * Without a registration a snapshot of a store holding a host end is
 * refused as before.
 */
#define CM_HOST_END_DESC_MAX 16384u /* room for a path (WASI files) */
void cm_store_set_host_end_durable(
	cm_store *s,
	int (*save)(void *env, cm_host_end *e, uint8_t *desc, size_t cap,
		    size_t *len),
	int (*restore)(void *env, cm_store *s, cm_host_end *e,
		       const uint8_t *desc, size_t len),
	void *env);
/*
 * Drop every stream and future end the values vs carry, for a host that
 * will not use them (hosteld prints a returned stream as stream<N>): the
 * guest's end sees the host's dropped (its pending write completes
 * DROPPED) instead of waiting for ever with its task and thread.  vs may
 * be the results on_done got: the runtime frees those without touching
 * the ends, but nothing may use the dropped ends afterwards.
 */
void cm_vals_drop_ends(cm_store *s, const cm_val *vs, uint32_t n);

/*
 * One service turn (ARCHITECTURE invariants 2-3): deliver settled host
 * calls and run ready threads until none is ready or `fuel` (0: the
 * store's turn_fuel; 0 there too: unlimited) is spent; a thread out of
 * fuel is suspended and continues in a later turn.  Returns 1 when work
 * remains (service has been requested again), 0 when quiescent, -1 on a
 * trap (err; the trapping instance is poisoned, other work stays).
 */
int cm_store_service_turn(cm_store *s, uint64_t fuel, cm_error *err);

/*
 * Live elements of the handle tables of s's component instances
 * (resources, waitables, waitable sets, subtasks, stream and future
 * ends, error contexts): an embedder's metrics.  Walks the instances.
 */
uint64_t cm_store_handle_count(const cm_store *s);

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
/*
 * Provide the interface `instance` whose exports are value types only
 * (wasi:clocks/types@0.3.0): an import of it links with no other
 * definition.  A function or resource it declares is still missing
 * unless defined.  -1 when out of memory.
 */
int cm_linker_define_types(cm_linker *l, const char *instance);
/* Satisfy import `name` with the exports of another instance. */
int cm_linker_define_instance(cm_linker *l, const char *name,
			      cm_component_instance *inst);
/*
 * What an instance import whose name begins with `prefix` (e.g.
 * "wasi:") gets for whatever the linker does not define: every function
 * missing from it (the whole interface when the linker knows nothing of
 * it) is bound to `fn` (which reads its type with cm_host_call_type),
 * every resource type missing becomes a host resource type of its own
 * with no destructor, whose reps stand for no host state: snapshots
 * write them as plain numbers (key "fallback/N": the N-th such type
 * the store made; a registration of one with
 * cm_store_set_host_resource_durable takes precedence, for a fallback
 * whose reps mean more).  The embedder's deny-by-default (runtime/wasi
 * wasi_deny): a component of any world links, and what the host does
 * not serve answers with the interface's own error.  One fallback per
 * linker (a second call replaces the first); -1 when out of memory.
 */
int cm_linker_define_fallback(cm_linker *l, const char *prefix, cm_host_fn fn,
			      void *env);

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
/* Lifted with the `async` option (stackless or stackful). */
bool cm_func_async_lifted(const cm_func *f);

/*
 * Store.invoke: call f from the host with nargs arguments (copied) and
 * receive its result: *nresults (0 or 1) values written to results,
 * owned by the caller (cm_vals_free).  Uses the store's fuel
 * (cm_store_set_fuel); running out is a trap.
 */
int cm_invoke(cm_store *s, cm_func *f, const cm_val *args, uint32_t nargs,
	      cm_val *results, uint32_t *nresults, cm_error *err);

/* ---- calls that run in service turns (run/invoke.c) ------------------ */

/*
 * A call of an export started by the host that runs in the store's
 * service turns (cm_store_service_turn) instead of to completion: the
 * export runs on a thread of its own (even a sync-typed one), which a
 * turn whose fuel runs out parks ready; it continues in the next turn.
 * So a guest that never returns holds up only its own call.
 *
 * Contract:
 *  - cm_call_start runs no guest code: the call begins in the next
 *    turn (service is requested).  Its on_done runs exactly once: at
 *    the end of the turn that decided the outcome (after the turn's
 *    guest code has stopped), or inside cm_call_cancel.  The handle is
 *    valid until on_done returns; on_done may start or cancel calls but
 *    must not free the store.  A store freed with calls in flight
 *    frees them without calling on_done (the embedder cancels them
 *    first, or lets go of them: cm_call_set_done with no on_done).
 *  - Fuel: `fuel` (0: unlimited) is the call's budget over all its
 *    turns; a turn never spends more than what the calls in flight have
 *    left, and what it spends counts against each of them.  Spent, the
 *    call traps "all fuel consumed".
 *  - A trap while the call is unresolved ends it TRAPPED; the trap
 *    poisons the instance tree (spec poisoning) and its threads never
 *    run again.  A call that can make no more progress at the end of a
 *    turn (nothing ready, no host call pending, no guest copy pending on
 *    a stream or future end the host holds: the host may still move
 *    that) traps as the deadlock.
 *  - Not covered: a sync-typed callee nested under the call (its
 *    caller waits for it on the C stack) cannot be parked, so it still
 *    traps when the turn's fuel runs out under it (sched.h).
 */
typedef struct cm_call cm_call;

typedef enum cm_call_outcome {
	CM_CALL_RETURNED = 1, /* results */
	CM_CALL_TRAPPED,      /* err; the instance tree is poisoned */
	CM_CALL_CANCELLED,    /* err says why; no guest code ran */
} cm_call_outcome;

/*
 * results (RETURNED: nresults values, borrowed until it returns) or err
 * (TRAPPED, CANCELLED).
 */
typedef void (*cm_call_done_fn)(void *ctx, cm_call_outcome outcome,
				const cm_val *results, uint32_t nresults,
				const cm_error *err);

/*
 * Start f(args) (copied; type-checked as cm_invoke does: a VALUE error
 * starts nothing).  *out (may be NULL) gets the handle.
 */
int cm_call_start(cm_store *s, cm_func *f, const cm_val *args, uint32_t nargs,
		  uint64_t fuel, cm_call_done_fn on_done, void *ctx,
		  cm_call **out, cm_error *err);

/*
 * Stop c now (a deadline), outside a turn; on_done runs before this
 * returns.  A call that has not begun, or still waits at its instance's
 * entry gate (backpressure), ends CANCELLED with `reason` and the store
 * is untouched (no guest code ran).  A started one cannot be stopped midway
 * without breaking its instance, so it ends TRAPPED with `reason`: the
 * instance tree is poisoned and its threads halted, as a trap would;
 * the embedder recreates the store.  Returns the outcome.
 */
cm_call_outcome cm_call_cancel(cm_call *c, const char *reason);
/*
 * End c now only where that stops no guest code midway (a graceful stop
 * of a durable store, before its image): one not begun or waiting at
 * its gate ends CANCELLED with `reason` (the store untouched), one
 * whose result is in ends RETURNED; on_done runs before this returns,
 * and it returns true.  One whose guest code is under way is left as
 * it is (false): the embedder may let go of it (cm_call_set_done with
 * no on_done) and free the store, whose image holds it.
 */
bool cm_call_end_clean(cm_call *c, const char *reason);
/*
 * Replace the on_done (and its ctx) of a call in flight: a restored
 * call's embedder gives it one (run/snapshot.h cm_store_restored_call),
 * an embedder letting go of a call gives it none (NULL: its end reaches
 * no one; one restored that ends trapped then fails its turn).
 */
void cm_call_set_done(cm_call *c, cm_call_done_fn on_done, void *ctx);
/*
 * A number the embedder gives the call (before its first turn), handed
 * to the store's host-call observer for every host call its task, or
 * any task or thread it starts, defers; 0: none.
 */
void cm_call_set_tag(cm_call *c, uint64_t tag);

/* Has c's guest code begun running? */
bool cm_call_started(const cm_call *c);

#endif
