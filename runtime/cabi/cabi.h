/*
 * cabi.h - the Canonical ABI: moving cm_val values in and out of a
 * component instance's linear memory and core values, per-instance handle
 * tables, and the resource built-ins.  The executable reference is the
 * spec's definitions.py; names follow it (LiftLowerContext -> cabi_cx,
 * load -> cabi_load, lift_flat_values -> cabi_lift_flat_values,
 * Table -> cabi_table, ResourceHandle -> cabi_resource_handle,
 * ResourceType -> cabi_resource_type, canon_resource_new -> the same), so a
 * reviewer can read the two side by side.  Digest: cm-spec-digest.md 2.x.
 *
 * ---- Contract -----------------------------------------------------------
 *
 * Errors.  Every operation returns 0 on success and -1 on failure, with
 * the reason in cx->err (or the cabi_error passed in): kind TRAP for an ABI
 * trap or a trap inside guest code the ABI ran (realloc, a destructor),
 * whose msg holds the message the conformance suite matches as a substring
 * (CABI_MSG_* below, digest 2.16); NOMEM when the host could not allocate;
 * VALUE when the host handed in a value that does not match its type or
 * otherwise misused the API.  A TRAP poisons the component instance (the
 * caller's business, digest 2.15); after any failure, values already lifted
 * into the output have been freed, but linear memory and the handle table
 * may be partly written, exactly as after a trap in the reference.  Nothing
 * here aborts on guest input.
 *
 * Who calls what (sync canon lift / lower, digest 2.11, 2.13):
 *   callee side (canon lift), with the callee instance's cx:
 *     cabi_lower_params(cx, ft, CM_MAX_FLAT_PARAMS, args, &core_args)
 *       (spills through the callee's realloc when > 16 flat values),
 *     call the core function, then
 *     cabi_lift_results(cx, ft, CM_MAX_FLAT_RESULTS, &core_results, &res)
 *       (reads the returned pointer when > 1 flat value);
 *     cabi_borrow_scope_exit(&task->borrows) before handing results back.
 *   caller side (canon lower), with the caller instance's cx:
 *     cabi_lift_params(cx, ft, CM_MAX_FLAT_PARAMS, &core_args, args)
 *       (reads the argument pointer when > 16; leaves the iterator on the
 *       out-pointer, if any), then after the callee resolved
 *     cabi_lower_results(cx, ft, CM_MAX_FLAT_RESULTS, res, &core_args,
 *       &core_results) (stores through the out-pointer when > 1);
 *     cabi_lenders_release(&subtask->lenders).
 *   async lower uses max CM_MAX_FLAT_ASYNC_PARAMS for params and 0 for
 *   results; task.return lifts with CM_MAX_FLAT_PARAMS.
 *
 * Guest calls made by the ABI (realloc; a destructor when no hook runs it)
 * run on cx->exec when the embedder supplies an IDLE exec, else on an exec
 * the cx creates on first use in cx->store and frees in cabi_cx_release.
 * (An exec that is inside a host call cannot take another call, so the
 * exec running the canon-lower trampoline is never the one to supply.)
 * While realloc runs, *cx->may_leave is false (digest 2.12).  A guest call
 * the ABI makes runs to completion: one that BLOCKs ("guest code called
 * by the canonical ABI cannot block") or runs out of cx->fuel is a trap;
 * the exec's outstanding call is then unwound.
 *
 * Memory: cx->opts.memory's data pointer may move whenever guest code
 * runs (memory.grow in realloc), so nothing here keeps it across a call.
 *
 * Handles.  A component instance has ONE cabi_table for resource handles,
 * subtasks, stream/future ends, waitable sets and error contexts (and a
 * second one for threads).  The table's index order is normative (digest
 * 2.2): slot 0 reserved, the free list reused LIFO, indices < 2^28.
 * Resource handles live inline in the table; every other kind is an
 * opaque pointer owned by the layer that made it (runtime/run).
 *
 * Borrows: a Task (callee side) embeds a cabi_borrow_scope (num_borrows);
 * lowering a borrow into the callee counts there.  A Subtask (caller side)
 * embeds a cabi_lenders; lifting a borrow out of the caller lends the
 * handle (num_lends += 1) and records it there until the subtask's
 * resolution is delivered (cabi_lenders_release).
 *
 * Resource types: the instantiator creates one cabi_resource_type per
 * (component instance, defined resource) at instantiation, and the host
 * one per host resource; their address is their identity.  The hook
 * cabi_hooks.resource_type maps a static CM_RESOURCE node, as it appears
 * in the function type being lifted/lowered, to the runtime type for
 * cx->inst.
 *
 * Async values (stream, future) go through cabi_hooks.lift_async /
 * lower_async, which runtime/run provides; without them they trap with
 * "not supported".  error-context without a hook is lifted by get (the
 * handle stays) and lowered by add, sharing cm_async_handle.obj.
 */
#ifndef HOSTEL_CABI_H
#define HOSTEL_CABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value/type.h"
#include "value/val.h"
#include "wasm/wasm.h"

/* ---- limits (definitions.py) ---------------------------------------- */

#define CABI_MAX_STRING_BYTE_LENGTH ((1u << 28) - 1)
#define CABI_MAX_LIST_BYTE_LENGTH   ((1u << 28) - 1)
/*
 * REALLOC_I32_MAX: the most one lowering asks realloc for.  The two
 * maxima above bound what is lifted; a lowering may need more (a string
 * transcoded to UTF-16 or from UTF-16 to UTF-8's worst case, a list of
 * strings or lists lowered into a 64-bit memory, whose elements are
 * twice as wide), which definitions.py lets through up to this
 * (store_list_into_range, store_string_copy: assert(byte_length <=
 * REALLOC_I32_MAX), true of any lifted value).  A host's value is not
 * lifted, so past this it traps with the maxima's messages.
 */
#define CABI_REALLOC_MAX	    0xffffffffull
#define CABI_TABLE_MAX_LENGTH	    ((1u << 28) - 1)
#define CABI_UTF16_TAG32	    (1ull << 31)
#define CABI_UTF16_TAG64	    (1ull << 63)

/* ---- trap messages the conformance suite matches (digest 2.16) ------ */

#define CABI_MSG_UNALIGNED	      "unaligned pointer"
#define CABI_MSG_LIST_OOB	      "list content out-of-bounds"
#define CABI_MSG_STRING_OOB	      "string content out-of-bounds"
#define CABI_MSG_HOST_STRING_OOB      "string pointer/length out of bounds of memory"
#define CABI_MSG_REALLOC_ALIGN	      "realloc return: result not aligned"
#define CABI_MSG_REALLOC_OOB	      "realloc return: beyond end of memory"
#define CABI_MSG_INVALID_UTF8	      "invalid utf-8"
#define CABI_MSG_INCOMPLETE_UTF8      "incomplete utf-8 byte sequence"
#define CABI_MSG_INVALID_UTF16	      "invalid utf-16: unpaired surrogate"
#define CABI_MSG_INVALID_CHAR	      "invalid `char` bit pattern"
#define CABI_MSG_INVALID_DISCRIMINANT "invalid variant discriminant"
#define CABI_MSG_UNKNOWN_HANDLE	      "unknown handle index"
#define CABI_MSG_WRONG_TYPE	      "used with the wrong type"
#define CABI_MSG_OWN_BORROWED	      "cannot remove owned resource while borrowed"
#define CABI_MSG_BORROWS_REMAIN                                                \
	"borrow handles still remain at the end of the call"
#define CABI_MSG_CANNOT_LEAVE	 "cannot leave component instance"
#define CABI_MSG_STRING_TOO_LONG "string length exceeds the maximum"
#define CABI_MSG_LIST_TOO_LONG	 "list byte length exceeds the maximum"
#define CABI_MSG_TABLE_FULL	 "handle table full"
/* past cabi_budget.limit (cabi_charge); the message goes on with the
 * limit's value and name */
#define CABI_MSG_HOST_BYTES "host memory budget for values exhausted"
/* What a core trap's message is printed after when it ends a component
 * call (the suites' and wasmtime's form). */
#define WASM_TRAP_PREFIX "wasm trap: "
/* An exception that leaves core code the canonical ABI called (a lifted
 * export, its callback, a realloc, a post-return): it never crosses into
 * another component (wasmtime's words; its component-model tests match
 * them).  A core module's host gets wasm_trap_message's own text. */
#define CABI_MSG_UNCAUGHT_EXCEPTION                                            \
	"uncaught exception propagated out of component"

/* ---- errors ----------------------------------------------------------- */

typedef enum cabi_err_kind {
	CABI_ERR_NONE = 0,
	CABI_ERR_TRAP,	/* ABI trap, or a trap in guest code the ABI ran */
	CABI_ERR_NOMEM, /* host allocation failed */
	CABI_ERR_VALUE, /* host value does not match its type; API misuse */
} cabi_err_kind;

typedef struct cabi_error {
	cabi_err_kind kind;
	/* TRAP from guest code: its core trap kind; ABI traps: NONE */
	wasm_trap_kind trap;
	char msg[WASM_ERROR_MSG_MAX];
} cabi_error;

/* Fill *err (may be NULL) printf-style; always returns -1. */
int cabi_fail(cabi_error *err, cabi_err_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- resource types and handle tables -------------------------------- */

/*
 * A runtime resource type (definitions.py ResourceType).  Made by the
 * instantiator per (instance, defined resource) or by the host; compared
 * by address.
 */
typedef struct cabi_resource_type {
	const cm_type *type; /* the static CM_RESOURCE node; NULL: host type */
	void *impl;	     /* implementing component instance; NULL: host */
	wasm_func *dtor;     /* core destructor (func (param i32)) or NULL */
	/* host resources: destructor called with the rep (may be NULL) */
	void (*host_dtor)(void *env, uint64_t rep);
	void *host_env;
	const char *name; /* for messages; may be NULL */
	/* a linker fallback's host type: 1 + its place in the store's
	 * fallback_rts (run/store.h); 0: not one */
	uint32_t fallback;
} cabi_resource_type;

/* A Task's borrow count (definitions.py Task.num_borrows). */
typedef struct cabi_borrow_scope {
	uint32_t num_borrows;
} cabi_borrow_scope;

/* definitions.py ResourceHandle. */
typedef struct cabi_resource_handle {
	const cabi_resource_type *rt;
	uint64_t rep;
	bool own;
	uint32_t num_lends;
	cabi_borrow_scope *borrow_scope; /* borrows: the receiving Task */
} cabi_resource_handle;

typedef enum cabi_elem_kind {
	CABI_ELEM_FREE = 0,
	CABI_ELEM_RESOURCE, /* u.res */
	CABI_ELEM_SUBTASK,  /* the rest: u.obj, owned by runtime/run */
	CABI_ELEM_STREAM_READABLE,
	CABI_ELEM_STREAM_WRITABLE,
	CABI_ELEM_FUTURE_READABLE,
	CABI_ELEM_FUTURE_WRITABLE,
	CABI_ELEM_WAITABLE_SET,
	CABI_ELEM_ERROR_CONTEXT,
	CABI_ELEM_THREAD, /* only in an instance's threads table */
} cabi_elem_kind;

/* "resource", "subtask", "readable stream end", ... */
const char *cabi_elem_kind_name(cabi_elem_kind k);

typedef struct cabi_elem {
	cabi_elem_kind kind;
	union {
		cabi_resource_handle res;
		void *obj;
	} u;
} cabi_elem;

/*
 * definitions.py Table.  Zero-initialised (or cabi_table_init) is an
 * empty table holding only the reserved slot 0.  `free` has room for
 * every slot, so remove never allocates.
 */
typedef struct cabi_table {
	cabi_elem *array; /* len slots; array[0] reserved */
	uint32_t len, cap;
	uint32_t *free; /* stack of freed indices, top = most recent */
	uint32_t nfree;
	/*
	 * Most live elements (0: CABI_TABLE_MAX_LENGTH).  An embedder's
	 * bound on what a guest may make without end (cm_store_config
	 * max_handles / max_threads); add past it traps
	 * "handle table full (limit N)".  Set it after cabi_table_init.
	 */
	uint32_t limit;
} cabi_table;

void cabi_table_init(cabi_table *t);
/* Frees the table's storage (not the objects its elements point to). */
void cabi_table_free(cabi_table *t);
/* Number of live elements. */
uint32_t cabi_table_count(const cabi_table *t);

/*
 * add: reuse the most recently freed index, else append; traps past
 * CABI_TABLE_MAX_LENGTH.  `e` is copied.
 */
int cabi_table_add(cabi_table *t, const cabi_elem *e, uint32_t *index,
		   cabi_error *err);
/*
 * get: "unknown handle index N" when i is 0, out of range or free.  The
 * pointer is valid until the next add.
 */
cabi_elem *cabi_table_get(cabi_table *t, uint32_t i, cabi_error *err);
/* remove: get, then free the slot and push i on the free list. */
int cabi_table_remove(cabi_table *t, uint32_t i, cabi_elem *out,
		      cabi_error *err);

/*
 * get + kind check: "handle index N used with the wrong type, expected
 * <kind> but found <kind>".
 */
cabi_elem *cabi_table_get_kind(cabi_table *t, uint32_t i, cabi_elem_kind k,
			       cabi_error *err);

/*
 * get + resource type check (kind RESOURCE and rt == expected; a NULL
 * expected accepts any resource type).
 */
cabi_resource_handle *cabi_table_get_resource(cabi_table *t, uint32_t i,
					      const cabi_resource_type *rt,
					      cabi_error *err);

/* Task side: trap CABI_MSG_BORROWS_REMAIN if num_borrows != 0. */
int cabi_borrow_scope_exit(const cabi_borrow_scope *s, cabi_error *err);

/*
 * Subtask side: the handles lent by lift_borrow (definitions.py
 * Subtask.lenders), as indices into `table` (a lent handle cannot leave
 * its slot: removing it traps).
 */
typedef struct cabi_lenders {
	cabi_table *table;
	uint32_t *indices;
	uint32_t n, cap;
} cabi_lenders;

void cabi_lenders_init(cabi_lenders *l, cabi_table *table);
/* deliver_resolve: num_lends -= 1 for each lender; empties the list. */
void cabi_lenders_release(cabi_lenders *l);
/* Frees storage (does not release). */
void cabi_lenders_free(cabi_lenders *l);

/* ---- the lift/lower context ------------------------------------------ */

/* definitions.py CanonicalOptions, resolved to runtime objects. */
typedef struct cabi_options {
	cm_string_encoding string_encoding; /* default CM_UTF8 */
	wasm_memory *memory;		    /* NULL: none */
	wasm_func *realloc;		    /* NULL: none */
	wasm_func *post_return;		    /* run by the caller of cabi */
	wasm_func *callback;		    /* async (runtime/run) */
	bool async;
	bool ptr64; /* 64-bit memory (🐘): pointers and lengths are i64 */
} cabi_options;

struct cabi_cx;

/* Services the embedding layers provide; any member may be NULL. */
typedef struct cabi_hooks {
	/* Runtime type of static resource node `resource` in `inst`. */
	const cabi_resource_type *(*resource_type)(void *inst,
						   const cm_type *resource);
	/*
	 * Run the destructor of an owned resource being dropped: the
	 * instantiator's sync lift/lower of func(u32) into rt->impl with its
	 * reentrance check.  NULL: call rt->dtor / rt->host_dtor directly.
	 */
	int (*run_dtor)(struct cabi_cx *cx, const cabi_resource_type *rt,
			uint64_t rep);
	/* stream/future (and error-context) values, runtime/run */
	int (*lift_async)(struct cabi_cx *cx, uint32_t index, const cm_type *t,
			  cm_val *out);
	int (*lower_async)(struct cabi_cx *cx, const cm_val *v,
			   const cm_type *t, uint32_t *index);
} cabi_hooks;

/*
 * The host bytes a store's guests may make the host hold at once for
 * values in transit (cm_store_config.max_host_bytes, the daemon's
 * limits.hostBytes).  Lifting out of linear memory is the one place
 * where a guest decides how much the host allocates: a few bytes of a
 * list whose elements all point at one range describe gigabytes once
 * lifted, and a list<u8> of n bytes is n cm_vals.  So every allocation
 * a lift makes (cm_val arrays, payloads, string bytes) is charged here
 * first, through the cx that makes it (cabi_charge), and traps
 * CABI_MSG_HOST_BYTES past the limit, before anything is allocated.
 * A cx gives its charge back when it is released: values lifted by a
 * cx are freed by then, or soon after, by whoever lifted them (a copy
 * stores and frees them, a call lowers them into the callee).  A holder
 * that keeps lifted values beyond the cx (a call's results waiting for
 * the embedder, runtime/run/invoke.c) takes the charge over with
 * cabi_cx_keep and gives it back with cabi_budget_release.  Not
 * thread-safe: one driver per store.
 */
typedef struct cabi_budget {
	uint64_t limit; /* 0: no limit */
	uint64_t used;
	/*
	 * Bytes of host work ever done for the store's guests: every byte
	 * charged, every byte a copy moved without lifting, and every byte
	 * of guest memory a lowering wrote (cabi_realloc_checked).  It only
	 * grows; the built-ins that do the work bill its growth to the
	 * calling guest as fuel (cm_store_bill_host_work, run/store.h).
	 */
	uint64_t work;
} cabi_budget;

void cabi_budget_release(cabi_budget *b, uint64_t bytes);

/* definitions.py LiftLowerContext. */
typedef struct cabi_cx {
	cabi_options opts;
	void *inst;	   /* the component instance (instantiator's type) */
	cabi_table *table; /* its handle table (may be NULL if unused) */
	const cabi_hooks *hooks; /* may be NULL */
	/* callee side: the Task receiving borrows (lower_borrow) */
	cabi_borrow_scope *borrow_scope;
	/* caller side: the Subtask lending handles (lift_borrow) */
	cabi_lenders *lenders;
	bool *may_leave; /* cleared while realloc runs; may be NULL */
	/* for creating an exec; may be NULL when exec is set or every guest
	 * function called is a wasm function (its instance's store is used) */
	wasm_store *store;
	wasm_exec *exec; /* an idle exec for guest calls, or NULL */
	/* fuel given to each guest call made here; 0 = leave the exec's
	 * budget alone (a fresh exec has unlimited fuel) */
	uint64_t fuel;
	/*
	 * The other side of this transfer is the host (the embedder's call
	 * of an export, hostel call/run), not another component.  Only the
	 * wording of a few traps differs (digest 2.6, 2.16): host-side
	 * "string pointer/length out of bounds of memory" and "realloc
	 * return: ..." versus guest-side "string content out-of-bounds",
	 * "unaligned pointer" and "list content out-of-bounds".
	 */
	bool host_peer;
	cabi_error err;
	/* the store's budget for lifted values (NULL: none); what this cx
	 * has charged to it, given back by cabi_cx_release */
	cabi_budget *budget;
	uint64_t charged;
	/* a list lifted now was measured whole first (lift_size.c), so
	 * the lists inside it are not measured again */
	bool sized;

	wasm_exec *own_exec; /* private: created on demand */
} cabi_cx;

/* Zero cx, copy opts (NULL: defaults), set inst and table. */
void cabi_cx_init(cabi_cx *cx, const cabi_options *opts, void *inst,
		  cabi_table *table);
/* Free what the cx created (its exec); give back its charge. */
void cabi_cx_release(cabi_cx *cx);

/*
 * Charge bytes of host memory about to be allocated for a lifted value
 * to cx->budget: -1 and a trap naming the limit when they do not fit
 * (nothing is charged then).  Always 0 without a budget.
 */
int cabi_charge(cabi_cx *cx, uint64_t bytes);
/* Host bytes a lift allocates for a cm_val array of n elements. */
#define CABI_VALS_BYTES(n) ((uint64_t)(n) * sizeof(cm_val))
/*
 * The values this cx lifted live on past it: the caller takes over its
 * charge (returned; the cx's becomes 0) and later gives it back with
 * cabi_budget_release(cx->budget, ...).
 */
uint64_t cabi_cx_keep(cabi_cx *cx);

/*
 * Run guest function f with args on the cx's exec (see the contract).
 * Used for realloc and destructors; the instantiator may use it for
 * post-return.  Traps of f come back as TRAP with the core message.
 */
int cabi_call_guest(cabi_cx *cx, wasm_func *f, const wasm_val *args,
		    uint32_t nargs, wasm_val *results, uint32_t nresults);

/*
 * realloc(old_ptr, old_size, align, new_size) with may_leave cleared; the
 * result is NOT checked here (callers check it with their own message).
 */
int cabi_realloc(cabi_cx *cx, uint64_t old_ptr, uint64_t old_size,
		 uint32_t align, uint64_t new_size, uint64_t *out);

/* ---- load / store ------------------------------------------------------ */

/*
 * load(cx, ptr, t) / store(cx, v, t, ptr).  The reference asserts that
 * ptr is aligned and in bounds; these check it and trap (unaligned
 * pointer / out of bounds) so that they are safe to call directly.
 */
int cabi_load(cabi_cx *cx, uint64_t ptr, const cm_type *t, cm_val *out);
int cabi_store(cabi_cx *cx, const cm_val *v, const cm_type *t, uint64_t ptr);

/* Strings and lists by range (for stream/future buffers and tests). */
int cabi_load_string_from_range(cabi_cx *cx, uint64_t ptr,
				uint64_t tagged_code_units, cm_val *out);
int cabi_store_string_into_range(cabi_cx *cx, const cm_val *v, uint64_t *ptr,
				 uint64_t *tagged_code_units);
/* load_list_from_valid_range: out has room for length values. */
int cabi_load_list_from_valid_range(cabi_cx *cx, uint64_t ptr, uint32_t length,
				    const cm_type *elem, cm_val *out);
int cabi_store_list_into_valid_range(cabi_cx *cx, const cm_val *vs, uint32_t n,
				     uint64_t ptr, const cm_type *elem);

/* ---- handles as values ------------------------------------------------- */

/* lift_own: remove i; checks kind, rt, lends, own.  out: own value. */
int cabi_lift_own(cabi_cx *cx, uint32_t i, const cm_type *t, cm_val *out);
/* lift_borrow: get i; checks kind, rt; lends it to cx->lenders (when
 * set: a host-side cx without a Subtask records no lend). */
int cabi_lift_borrow(cabi_cx *cx, uint32_t i, const cm_type *t, cm_val *out);
/* lower_own: add an own handle; *index its slot. */
int cabi_lower_own(cabi_cx *cx, const cm_val *v, const cm_type *t,
		   uint32_t *index);
/*
 * lower_borrow: the raw rep when cx->inst implements the resource, else
 * add a borrow handle scoped to cx->borrow_scope (num_borrows += 1).
 */
int cabi_lower_borrow(cabi_cx *cx, const cm_val *v, const cm_type *t,
		      uint32_t *index);

/* ---- flat values ------------------------------------------------------- */

/* definitions.py CoreValueIter: core values consumed left to right. */
typedef struct cabi_core_iter {
	const wasm_val *vals;
	uint32_t n, i;
} cabi_core_iter;

/* Core values produced, into caller storage of `cap` slots. */
typedef struct cabi_core_out {
	wasm_val *vals;
	uint32_t n, cap;
} cabi_core_out;

int cabi_lift_flat(cabi_cx *cx, cabi_core_iter *vi, const cm_type *t,
		   cm_val *out);
int cabi_lower_flat(cabi_cx *cx, const cm_val *v, const cm_type *t,
		    cabi_core_out *out);

/*
 * lift_flat_values(cx, max_flat, vi, ts): when the flat count of ts
 * exceeds max_flat, reads one pointer from vi and loads a tuple of ts
 * there (trapping on misalignment / out of bounds); else lifts each.
 * out has room for nts values.
 */
int cabi_lift_flat_values(cabi_cx *cx, uint32_t max_flat, cabi_core_iter *vi,
			  const cm_type *const *ts, uint32_t nts, cm_val *out);
/*
 * lower_flat_values(cx, max_flat, vs, ts, out_param): when the flat
 * count exceeds max_flat, stores a tuple of vs either in memory from
 * realloc(0, 0, align, size) (out_param NULL; the pointer is the one
 * core value produced) or at the pointer read from out_param (nothing
 * produced); else the flat values of each.
 */
int cabi_lower_flat_values(cabi_cx *cx, uint32_t max_flat, const cm_val *vs,
			   const cm_type *const *ts, uint32_t nts,
			   cabi_core_iter *out_param, cabi_core_out *out);

/* The same over a CM_FUNC type's params (args: nparams values) and
 * result (results: 0 or 1 value). */
int cabi_lift_params(cabi_cx *cx, const cm_type *ft, uint32_t max_flat,
		     cabi_core_iter *vi, cm_val *args);
int cabi_lower_params(cabi_cx *cx, const cm_type *ft, uint32_t max_flat,
		      const cm_val *args, cabi_core_out *out);
int cabi_lift_results(cabi_cx *cx, const cm_type *ft, uint32_t max_flat,
		      cabi_core_iter *vi, cm_val *results);
int cabi_lower_results(cabi_cx *cx, const cm_type *ft, uint32_t max_flat,
		       const cm_val *results, cabi_core_iter *out_param,
		       cabi_core_out *out);

/* ---- resource built-ins (digest 2.8) ----------------------------------- */

/*
 * The caller checks may_leave first ("cannot leave component instance":
 * it precedes argument validation).  cx->table is the current instance's.
 */
int canon_resource_new(cabi_cx *cx, const cabi_resource_type *rt, uint64_t rep,
		       uint32_t *index);
int canon_resource_rep(cabi_cx *cx, const cabi_resource_type *rt, uint32_t i,
		       uint64_t *rep);
/*
 * remove i (kind, rt and lend checks); own: run the destructor (through
 * hooks->run_dtor when set); borrow: its scope's num_borrows -= 1.
 */
int canon_resource_drop(cabi_cx *cx, const cabi_resource_type *rt, uint32_t i);

#endif
