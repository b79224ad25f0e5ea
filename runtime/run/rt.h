/*
 * rt.h - the run-time objects of a component instance, shared by the
 * files of runtime/run that instantiate components (instantiate.c,
 * component_instance.c, linker.c) and run calls (call.c, canon_lift.c,
 * canon_lower.c, canon_resource.c, the built-ins, the scheduler).  Not a
 * public contract: embedders use instance.h.
 *
 * Objects (all allocated in the store's arena, freed with the store):
 *  - cm_component_instance: definitions.py ComponentInstance (handle
 *    table, may_enter, may_leave, parent) plus the linker's state: the
 *    run-time value of every index-space entry of its component and the
 *    map from static resource nodes to run-time resource types.
 *  - cm_rtval: the run-time value of one index-space entry.  Core sorts
 *    hold engine objects; `func` a cm_func; `type` the run-time resource
 *    type (NULL for every non-resource type: only resources have a
 *    run-time identity); `component` a closure; `instance` an export
 *    table.  Core types and values (🪙) have no run-time value.
 *  - cm_func: a component-level function: lifted (core function + the
 *    resolved canonical options + the instance it belongs to) or a host
 *    function bound to an import's declared type.
 *  - cm_closure: a component definition and the instance whose body
 *    defined it; outer aliases inside it walk `env` outwards.
 *
 * Resource types.  Types in a component are static (types.h); own<R> and
 * borrow<R> in a function type point at a static CM_RESOURCE node.  Every
 * place where a type index receives a run-time resource type (a resource
 * definition, an import, an alias, an export, an instance whose type
 * exports types) records canonical(node) -> run-time type in the
 * instance's rmap, so cabi's resource_type hook resolves any node that
 * appears in that component's function types.
 */
#ifndef HOSTEL_RUN_RT_H
#define HOSTEL_RUN_RT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cabi/cabi.h"
#include "run/instance.h"
#include "component/types.h"
#include "run/store.h"
#include "run/task.h"

struct cm_rtinstance;
struct cm_closure;
struct cm_core_inst;

typedef union cm_rtval {
	wasm_extern core; /* core func, table, memory, global, tag */
	const wasm_module *module;
	struct cm_core_inst *core_inst;
	cm_func *func;
	const cabi_resource_type *rt; /* TYPE: NULL unless a resource */
	struct cm_closure *component;
	struct cm_rtinstance *instance;
} cm_rtval;

/* A core instance: a module instance, or a synthesised bag of exports. */
typedef struct cm_core_inst {
	wasm_instance *inst; /* NULL for a bag */
	uint32_t n;
	const cm_str *names;
	wasm_extern *items;
} cm_core_inst;

typedef struct cm_closure {
	const cm_component *def;
	cm_component_instance *env; /* NULL: a root (no outer scope) */
} cm_closure;

typedef struct cm_rtexport {
	cm_str name;
	cm_sort sort;
	cm_rtval val;
} cm_rtexport;

/* A component instance as a value: its exports by name. */
typedef struct cm_rtinstance {
	uint32_t n, cap;
	cm_rtexport *exports;
	cm_component_instance *inst; /* NULL: a bag or a host instance */
} cm_rtinstance;

typedef enum cm_func_kind {
	CM_FUNC_LIFTED,
	CM_FUNC_HOST,
} cm_func_kind;

struct cm_func {
	cm_func_kind kind;
	const cm_type *type; /* CM_FUNC, in the defining component's terms */
	/* lifted */
	cm_component_instance *inst;
	wasm_func *core;
	cabi_options opts;
	/* host */
	cm_host_fn fn;
	void *env;
	const char *name;     /* for messages */
	const char *instance; /* host: the import's instance (or NULL) */
	bool dtor;	      /* a destructor call: exempt from compat rule */
};

typedef struct cm_rmap_entry {
	const cm_type *node; /* canonical static resource node */
	const cabi_resource_type *rt;
} cm_rmap_entry;

struct cm_component_instance {
	cm_store *store;
	cm_component_instance *parent; /* the instantiating instance */
	const cm_component *component;
	cm_component_instance *env; /* scope of outer aliases */

	/* definitions.py ComponentInstance */
	cabi_table handles;
	bool may_leave, may_enter;
	bool poisoned; /* a trap passed through it: never enter again */
	uint32_t backpressure;
	/* async (runtime/run/sched.h) */
	cabi_table threads; /* CABI_ELEM_THREAD -> cm_thread */
	uint32_t num_waiting_to_enter;
	struct cm_thread *exclusive_thread;

	/* linking: one run-time value per index-space entry */
	cm_rtval *spaces[CM_NSORTS];
	uint32_t nfilled[CM_NSORTS];
	/* static resource node -> run-time type (open addressing) */
	cm_rmap_entry *rmap;
	uint32_t rmap_cap, rmap_n;

	cm_rtinstance exports; /* its exports, in definition order */
};

#define CM_MSG_CANNOT_ENTER "cannot enter component instance"

/* ---- component_instance.c -------------------------------------------- */

/* A new instance (handle table registered for cleanup), or NULL. */
cm_component_instance *cm_instance_new(cm_store *s,
				       cm_component_instance *parent,
				       const cm_closure *def);
int cm_rmap_bind(cm_component_instance *inst, const cm_type *node,
		 const cabi_resource_type *rt);
const cabi_resource_type *cm_rmap_lookup(const cm_component_instance *inst,
					 const cm_type *node);
/*
 * Bind the resource types an instance type (CM_INSTANCE) declares to
 * those of a run-time instance value, recursively through nested
 * instance exports.
 */
int cm_rmap_bind_instance(cm_component_instance *inst, const cm_type *it,
			  const cm_rtinstance *val);

/*
 * The store's component instances in the order they were made (the
 * order a fresh instantiation of the same component repeats): up to
 * cap of them into out; returns how many there are.
 */
uint32_t cm_store_component_instances(const cm_store *s,
				      cm_component_instance **out,
				      uint32_t cap);

/* Export table helpers. */
int cm_rtinstance_add(cm_store *s, cm_rtinstance *ri, cm_str name, cm_sort sort,
		      cm_rtval val);
const cm_rtexport *cm_rtinstance_find(const cm_rtinstance *ri, const char *name,
				      size_t len);

/*
 * Reentrance (digest 2.15): enter callee from caller (NULL: the host).
 * Traps "cannot enter component instance" when an instance of the
 * entering set may not be entered (or is poisoned), or, with `compat`
 * (the store's reentrance_compat, except for destructor calls), when
 * caller and callee are the same or related instances.  cm_leave
 * restores may_enter; cm_poison marks the set poisoned instead.
 */
int cm_enter(cm_component_instance *callee, cm_component_instance *caller,
	     bool compat, cabi_error *err);
void cm_leave(cm_component_instance *callee, cm_component_instance *caller);
void cm_poison(cm_component_instance *callee, cm_component_instance *caller);

/* cabi hooks of every lift/lower context (resource types, destructors). */
extern const cabi_hooks cm_cabi_hooks;

/* A cabi context for inst with opts (NULL: defaults). */
void cm_cx_init(cabi_cx *cx, cm_component_instance *inst,
		const cabi_options *opts);

/* ---- call.c (a lifted callee: canon_lift.c) -------------------------- */

/*
 * Call f (lifted or host) on behalf of caller (NULL: host) in the task
 * supertask, with the on_start/on_resolve protocol of task.h.
 */
int cm_func_call(cm_store *s, cm_func *f, cm_component_instance *caller,
		 cm_task *supertask, const cm_call_cbs *cbs, cabi_error *err);

/*
 * Guest calls the ABI makes (realloc) run on a fresh thread (digest
 * 2.12): context.get sees 0 there and context.set is forgotten.  Swap in
 * a zeroed scratch task around them; returns the previous current task.
 */
static inline cm_task *cm_fresh_thread_enter(cm_store *s, cm_task *scratch)
{
	cm_task *prev = s->current;

	memset(scratch, 0, sizeof *scratch);
	s->current = scratch;
	return prev;
}

static inline void cm_fresh_thread_leave(cm_store *s, cm_task *prev)
{
	s->current = prev;
}

/* Record a trap message for core traps that lose it (start functions). */
void cm_note_trap(cm_store *s, const cabi_error *err);

/* ---- canon_lower.c ----------------------------------------------------- */

/* The core function of `canon lower` of callee into inst. */
wasm_func *cm_canon_lower(cm_component_instance *inst, const cm_canon *cn,
			  cm_func *callee, const cabi_options *opts);

/* ---- canon_resource.c -------------------------------------------------- */

/* The run-time type of resource definition `node` in inst. */
const cabi_resource_type *cm_resource_type_new(cm_component_instance *inst,
					       const cm_type *node,
					       wasm_func *dtor);
/* The core function of resource.new / rep / drop of rt in inst. */
wasm_func *cm_canon_resource(cm_component_instance *inst, const cm_canon *cn,
			     const cabi_resource_type *rt);
/* cabi hook: run an own handle's destructor as a sync call. */
int cm_run_dtor(cabi_cx *cx, const cabi_resource_type *rt, uint64_t rep);

/* ---- the other built-ins: sched.h ------------------------------------ */

/* ---- canon_task_builtins.c -------------------------------------------- */

/* context.get/set, backpressure.inc/dec: built-ins that never block. */
bool cm_is_task_builtin(cm_canon_op op);
wasm_func *cm_canon_task_builtin(cm_component_instance *inst,
				 const cm_canon *cn);

/* ---- linker.c ----------------------------------------------------------- */

/*
 * The value the linker provides for root import `im` of a component
 * (functions bound to the import's declared types); -1 with a LINK error
 * naming the import when something is missing.
 */
int cm_linker_resolve(const cm_linker *l, cm_component_instance *inst,
		      const cm_import *im, cm_rtval *out, cm_error *err);

/* ---- errors -------------------------------------------------------------- */

int cm_error_set(cm_error *err, cm_error_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* cabi_error -> cm_error (TRAP, NOMEM, VALUE). */
int cm_error_from_cabi(cm_error *err, const cabi_error *ce);

#endif
