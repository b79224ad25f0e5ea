/*
 * wasm.h - the public C API of hostel's core WebAssembly engine.
 *
 * Objects and ownership:
 *  - wasm_module: decoded, validated and compiled code; immutable and
 *    shareable; freed with wasm_module_free (after every instance of it).
 *  - wasm_store: owns every runtime object created in it (function, table,
 *    memory, global and tag instances, exception objects, instances).
 *    Freeing the store frees them all; there is no other free.
 *  - wasm_exec: an execution context (one thread of guest execution).  All
 *    wasm frames and operands live on its heap stack, never on the C stack,
 *    so a call can stop (a host function answered BLOCK, fuel ran out) and
 *    be resumed later, from any C stack depth.
 *
 * Nothing here is global: every piece of mutable state hangs off a store or
 * an exec.  No function aborts on bad input; errors come back as values.
 */
#ifndef HOSTEL_WASM_H
#define HOSTEL_WASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wasm/error.h"
#include "wasm/module.h"

typedef struct wasm_store wasm_store;
typedef struct wasm_instance wasm_instance;
typedef struct wasm_func wasm_func;
typedef struct wasm_table_inst wasm_table_inst;
typedef struct wasm_memory wasm_memory;
typedef struct wasm_global_inst wasm_global_inst;
typedef struct wasm_tag wasm_tag;
typedef struct wasm_exn wasm_exn;
typedef struct wasm_exec wasm_exec;

/* ---- values ---------------------------------------------------------- */

typedef struct wasm_v128 {
	uint64_t lo, hi; /* lo holds bytes 0..7 (lane 0 is lowest) */
} wasm_v128;

/*
 * A reference.  funcref: a wasm_func* (NULL is null).  exnref: a wasm_exn*.
 * externref: host data, see wasm_ref_extern(); null is 0 for every type.
 */
typedef uintptr_t wasm_ref;
#define WASM_REF_NULL ((wasm_ref)0)

typedef struct wasm_val {
	wasm_valtype type;
	union {
		uint32_t i32;
		uint64_t i64;
		uint32_t f32; /* IEEE bits, so NaN payloads survive */
		uint64_t f64;
		wasm_v128 v128;
		wasm_ref ref;
	} u;
} wasm_val;

/*
 * externref values made by the host: an extern reference carrying the
 * number n (spec tests' `ref.extern N`).  Distinct numbers give distinct
 * references; equal numbers give the same reference; never null.
 */
wasm_ref wasm_ref_extern(uint32_t n);
/* Returns true and the number when `r` is a host reference from above. */
bool wasm_ref_extern_number(wasm_ref r, uint32_t *n);

/* ---- traps ------------------------------------------------------------ */

typedef enum wasm_trap_kind {
	WASM_TRAP_NONE = 0,
	WASM_TRAP_UNREACHABLE,		 /* "unreachable" */
	WASM_TRAP_MEMORY_OOB,		 /* "out of bounds memory access" */
	WASM_TRAP_TABLE_OOB,		 /* "out of bounds table access" */
	WASM_TRAP_UNDEFINED_ELEMENT,	 /* "undefined element" */
	WASM_TRAP_UNINITIALIZED_ELEMENT, /* "uninitialized element" */
	WASM_TRAP_INDIRECT_CALL_TYPE,	 /* "indirect call type mismatch" */
	WASM_TRAP_INT_DIV_ZERO,		 /* "integer divide by zero" */
	WASM_TRAP_INT_OVERFLOW,		 /* "integer overflow" */
	WASM_TRAP_INVALID_CONVERSION,	 /* "invalid conversion to integer" */
	WASM_TRAP_NULL_REFERENCE,	 /* "null reference" */
	WASM_TRAP_NULL_FUNCTION,	 /* "null function reference" */
	WASM_TRAP_STACK_EXHAUSTED,	 /* "call stack exhausted" */
	WASM_TRAP_OUT_OF_FUEL,		 /* "out of fuel" (resumable) */
	WASM_TRAP_UNCAUGHT_EXCEPTION,	 /* "thrown Wasm exception" */
	WASM_TRAP_OUT_OF_MEMORY,	 /* engine could not allocate */
	WASM_TRAP_HOST,			 /* a host function trapped; see msg */
} wasm_trap_kind;

/* The spec's message for a trap kind ("integer divide by zero", ...). */
const char *wasm_trap_message(wasm_trap_kind kind);

/* ---- store ------------------------------------------------------------ */

typedef struct wasm_store_limits {
	uint64_t max_memory_pages; /* per memory; 0 = the type's own limit */
	/* Elements per table; 0 = WASM_DEFAULT_MAX_TABLE_ELEMS, UINT64_MAX =
	 * the type's own limit (up to 2^32 - 1: 32 GiB of references). */
	uint64_t max_table_elems;
	uint64_t start_fuel; /* fuel for start functions; 0 = unlimited */
	/* Bytes of exception objects alive at once; 0 = 64 MiB.  Throwing
	 * past it traps with WASM_TRAP_OUT_OF_MEMORY. */
	uint64_t max_exception_bytes;
} wasm_store_limits;

/* 10,000,000 elements (80 MB of references), the table size V8 allows. */
#define WASM_DEFAULT_MAX_TABLE_ELEMS 10000000u

wasm_store *wasm_store_new(const wasm_store_limits *limits /* may be NULL */);
void wasm_store_free(wasm_store *s);

/* What a store holds now (for an embedder's metrics). */
typedef struct wasm_store_usage {
	uint32_t memories;
	uint64_t memory_bytes; /* the memories' sizes together */
	uint32_t tables;
	uint64_t table_elems; /* the tables' sizes together */
	uint32_t instances;
	uint64_t exception_bytes; /* live exception objects */
} wasm_store_usage;

/* Fill *out; walks the store's objects (no allocation). */
void wasm_store_usage_get(const wasm_store *s, wasm_store_usage *out);

/* ---- modules ---------------------------------------------------------- */

/*
 * Decode, validate and compile.  Returns 0 and a module, or -1 with *err
 * filled (kind MALFORMED or INVALID, the spec's reason in msg).
 */
int wasm_module_load(const uint8_t *bytes, size_t len, wasm_module **out,
		     wasm_error *err);

/* ---- externs and host functions --------------------------------------- */

typedef struct wasm_extern {
	wasm_externkind kind;
	union {
		wasm_func *func;
		wasm_table_inst *table;
		wasm_memory *memory;
		wasm_global_inst *global;
		wasm_tag *tag;
	} u;
} wasm_extern;

typedef enum wasm_host_status {
	WASM_HOST_OK = 0, /* results are written */
	WASM_HOST_TRAP,	  /* call wasm_exec_set_host_trap() first */
	WASM_HOST_BLOCK,  /* suspend the exec; results come with resume */
} wasm_host_status;

/*
 * A host function.  `args` has the function type's nparams values;
 * `results` has room for nresults.  Returning WASM_HOST_BLOCK stops the
 * exec with WASM_EXEC_BLOCKED; wasm_exec_resume() later supplies the
 * results and execution continues right after the call.
 */
typedef wasm_host_status (*wasm_host_fn)(wasm_exec *exec, void *env,
					 const wasm_val *args,
					 wasm_val *results);

/* Creates a host function in the store; the store copies `type`. */
wasm_func *wasm_func_new_host(wasm_store *s, const wasm_functype *type,
			      wasm_host_fn fn, void *env);
const wasm_functype *wasm_func_type(const wasm_func *f);

wasm_global_inst *wasm_global_new(wasm_store *s, wasm_globaltype type,
				  wasm_val init);
wasm_val wasm_global_get(const wasm_global_inst *g);
const wasm_globaltype *wasm_global_type(const wasm_global_inst *g);

wasm_memory *wasm_memory_new(wasm_store *s, wasm_memtype type);
/* The bytes of m, which the caller may write anywhere: every page is
 * marked written (wasm/store.h's written map, which a snapshot's delta
 * reads; wasm_memory_write and wasm_memory_bytes are the precise forms). */
uint8_t *wasm_memory_data(wasm_memory *m);
/* The bytes [off, off + len) of m, to write: their pages are marked (the
 * caller checked the bounds). */
uint8_t *wasm_memory_write(wasm_memory *m, uint64_t off, uint64_t len);
/* The bytes of m, to read only: nothing is marked. */
const uint8_t *wasm_memory_bytes(const wasm_memory *m);
uint64_t wasm_memory_size_bytes(const wasm_memory *m);
/* Whether [off, off + len) lies within m; no sum is formed, so an off
 * near 2^64 (a 64-bit memory's pointer) cannot wrap past the check. */
bool wasm_memory_in_bounds(const wasm_memory *m, uint64_t off, uint64_t len);
const wasm_memtype *wasm_memory_type(const wasm_memory *m);

wasm_table_inst *wasm_table_new(wasm_store *s, wasm_tabletype type,
				wasm_ref init);
const wasm_tabletype *wasm_table_type(const wasm_table_inst *t);

wasm_tag *wasm_tag_new(wasm_store *s, const wasm_functype *type);

/* ---- instances -------------------------------------------------------- */

/*
 * Instantiate `m` with `imports` (one per module import, in order).
 * Link errors (kind LINK: "unknown import", "incompatible import type")
 * return -1 with *err.  A trap during segment initialisation or the start
 * function returns -1 with err->kind == WASM_ERR_NONE and *trap set; the
 * effects before the trap stay visible in imported objects, as the spec
 * requires.  The start function runs on a temporary exec with the store's
 * start_fuel (running out of it is the trap WASM_TRAP_OUT_OF_FUEL).
 */
int wasm_instantiate(wasm_store *s, const wasm_module *m,
		     const wasm_extern *imports, uint32_t nimports,
		     wasm_instance **out, wasm_trap_kind *trap,
		     wasm_error *err);

/* Export by name (bytes, may contain NUL).  Returns false if absent. */
bool wasm_instance_export(const wasm_instance *inst, const uint8_t *name,
			  size_t len, wasm_extern *out);

/* ---- execution -------------------------------------------------------- */

typedef enum wasm_exec_status {
	WASM_EXEC_DONE = 0,  /* returned; results available */
	WASM_EXEC_TRAP,	     /* trapped; see wasm_exec_trap() */
	WASM_EXEC_EXCEPTION, /* an exception escaped; see wasm_exec_exception */
	WASM_EXEC_BLOCKED,   /* a host function answered BLOCK */
	WASM_EXEC_OUT_OF_FUEL, /* budget spent; refuel and resume */
} wasm_exec_status;

typedef struct wasm_exec_config {
	size_t max_stack_bytes; /* value + frame stack; 0 = default 1 MiB-ish */
	uint32_t max_call_depth; /* 0 = default */
} wasm_exec_config;

wasm_exec *wasm_exec_new(wasm_store *s, const wasm_exec_config *cfg);
void wasm_exec_free(wasm_exec *e);

/*
 * Start a call of `f` (wasm or host) with `args` (nparams values).  Runs
 * until it finishes, traps, blocks or runs out of fuel.  An exec holds at
 * most one outstanding call: calling it again while BLOCKED or
 * OUT_OF_FUEL is an error (returns TRAP with kind HOST).
 */
wasm_exec_status wasm_exec_call(wasm_exec *e, wasm_func *f,
				const wasm_val *args, uint32_t nargs);

/* After BLOCKED: deliver the blocked host function's results and run on. */
wasm_exec_status wasm_exec_resume(wasm_exec *e, const wasm_val *results,
				  uint32_t nresults);
/* After BLOCKED: make the blocked host call trap instead. */
wasm_exec_status wasm_exec_resume_trap(wasm_exec *e, const char *msg);
/* After OUT_OF_FUEL: continue (add fuel first). */
wasm_exec_status wasm_exec_continue(wasm_exec *e);

/* Results of a DONE call; returns their number. */
uint32_t wasm_exec_results(const wasm_exec *e, wasm_val *out, uint32_t max);
wasm_trap_kind wasm_exec_trap(const wasm_exec *e);
/* The trap's full message (spec text, plus host detail for HOST). */
const char *wasm_exec_trap_message(const wasm_exec *e);
/*
 * The exception a call ended with (EXCEPTION).  An exnref the host gets
 * (this, a result, a host function's argument) stays valid while it is
 * in a global, a table or an exec's stack of the store; kept anywhere
 * else, only until the store next runs wasm code, which may collect it
 * (runtime/wasm/exn.c).
 */
wasm_exn *wasm_exec_exception(const wasm_exec *e);
/* Called by a host function before returning WASM_HOST_TRAP. */
void wasm_exec_set_host_trap(wasm_exec *e, const char *msg);

/*
 * Fuel: a budget of work units; every loop back-edge and every call costs
 * at least one.  UINT64_MAX (the default) means unlimited.
 */
void wasm_exec_set_fuel(wasm_exec *e, uint64_t fuel);
uint64_t wasm_exec_fuel(const wasm_exec *e);

/* The store of an exec (host functions use it to reach their state). */
wasm_store *wasm_exec_store(const wasm_exec *e);

#endif
