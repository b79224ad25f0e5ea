/*
 * types.h - the decoded, validated form of a component (its AST): sorts
 * and index spaces, names, extern types, core types and the definitions in
 * binary order.  The value types (cm_type and its ABI facts) are the layer
 * below, runtime/value/type.h, included here.  This header is a contract:
 * the decoder and validator (runtime/component) fill these structures, the
 * instantiator and linker (runtime/run) and the WIT printer walk them.
 *
 * Ownership.  Every structure reachable from a cm_component (types, names,
 * definitions, nested components, index spaces) lives in one arena owned
 * by the *root* component; cm_component_free(root) releases everything at
 * once.  Nested components share their root's arena, so a type may be
 * referenced from anywhere in the tree (outer aliases do exactly that).
 * Nothing here is ever mutated after cm_component_load returns, so a
 * loaded component may be shared read-only by any number of instances.
 *
 * Resource identity.  A CM_RESOURCE node is created
 *   - by a `(type (resource (rep i32) (dtor f)))` definition in a component
 *     (`defined` = true; rep, dtor and `owner` say which definition);
 *   - by `(sub resource)` in an import or in an export declaration of a
 *     component/instance type (`defined` = false: an abstract resource).
 * Validation makes fresh abstract nodes whenever the spec makes fresh types:
 * importing an instance/component whose type declares resources, and
 * instantiating a component (its defined_resources become fresh per
 * instance; its imported_resources are replaced by the arguments').  The
 * substituted types are new nodes in the arena.  At run time each
 * instantiation of a component creates new runtime resource types for the
 * static `defined` nodes of that component; the static node is the key.
 *
 * Strings.  Every cm_str points into the arena, is NUL-terminated for
 * convenience, and also carries its length (core names may contain NUL).
 */
#ifndef HOSTEL_COMPONENT_TYPES_H
#define HOSTEL_COMPONENT_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "value/type.h"
#include "wasm/module.h"

/* ---- sorts and index spaces ------------------------------------------- */

/*
 * Every index space of a component, one per sort.  The binary's core:sort
 * bytes map to the first eight, the component sort bytes to the rest.
 */
typedef enum cm_sort {
	CM_SORT_CORE_FUNC = 0,
	CM_SORT_CORE_TABLE,
	CM_SORT_CORE_MEMORY,
	CM_SORT_CORE_GLOBAL,
	CM_SORT_CORE_TAG,
	CM_SORT_CORE_TYPE,
	CM_SORT_CORE_MODULE,
	CM_SORT_CORE_INSTANCE,
	CM_SORT_FUNC,
	CM_SORT_VALUE,
	CM_SORT_TYPE,
	CM_SORT_COMPONENT,
	CM_SORT_INSTANCE,
	CM_NSORTS
} cm_sort;

/* "core func", "type", ... as the spec's text format spells a sort. */
const char *cm_sort_name(cm_sort s);

/* ---- names ------------------------------------------------------------- */

typedef enum cm_name_kind {
	CM_NAME_LABEL,	     /* plain kebab label */
	CM_NAME_CONSTRUCTOR, /* [constructor]R */
	CM_NAME_METHOD,	     /* [method]R.m */
	CM_NAME_STATIC,	     /* [static]R.m */
	CM_NAME_INTERFACE,   /* ns:pkg/iface@version */
	CM_NAME_OTHER,	     /* not checked (instantiation args, core names) */
} cm_name_kind;

/*
 * An import/export name with its attributes (`nameattributes`).  Parsed
 * parts point into the arena (each NUL-terminated).
 */
typedef struct cm_name {
	cm_str str; /* the name as written */
	cm_name_kind kind;
	cm_str resource; /* R of [constructor]R, [method]R.m, [static]R.m */
	cm_str func;	 /* the label, or m of [method]/[static] */
	/* interface names: ns:pkg/iface@version (version may be empty) */
	cm_str ns, pkg, iface, version;
	/* attributes (🏷️ 🔗) */
	bool has_implements, has_external_id, has_version_suffix;
	cm_str implements; /* an interface name */
	cm_str external_id;
	cm_str version_suffix;
} cm_name;

/* ---- extern types (import/export descriptions) ------------------------ */

typedef struct cm_externtype {
	cm_sort sort; /* CORE_MODULE, FUNC, VALUE, TYPE, COMPONENT, INSTANCE */
	/*
	 * FUNC: the CM_FUNC type.  VALUE: the value type.  COMPONENT,
	 * INSTANCE: the CM_COMPONENT / CM_INSTANCE type.  TYPE: the bound:
	 * for `(eq t)` the type t itself, for `(sub resource)` the fresh
	 * abstract CM_RESOURCE node this declaration introduces.
	 */
	const struct cm_type *type;
	const struct cm_core_type *core_type; /* CORE_MODULE: module type */
	bool type_eq;  /* TYPE: true for `(eq t)`, false for `(sub resource)` */
	bool value_eq; /* VALUE 🪙: `(eq v)` bound (type is v's type) */
} cm_externtype;

typedef struct cm_extern_decl {
	cm_name name;
	cm_externtype type;
} cm_extern_decl;

/* ---- core types ---------------------------------------------------------- */

/* An item of a module type or core instance type. */
typedef struct cm_core_externtype {
	wasm_externkind kind;
	union {
		const wasm_functype *func; /* func, and a tag's type */
		wasm_tabletype table;
		wasm_memtype memory;
		wasm_globaltype global;
	} u;
} cm_core_externtype;

typedef struct cm_core_import {
	cm_str module, name;
	cm_core_externtype type;
} cm_core_import;

typedef struct cm_core_export {
	cm_str name;
	cm_core_externtype type;
} cm_core_export;

typedef enum cm_core_type_kind {
	CM_CORE_FUNCTYPE,
	CM_CORE_MODULETYPE,
} cm_core_type_kind;

typedef struct cm_core_type {
	cm_core_type_kind kind;
	union {
		wasm_functype func;
		struct {
			uint32_t nimports;
			cm_core_import *imports;
			uint32_t nexports;
			cm_core_export *exports;
		} module;
	} u;
} cm_core_type;

/* The type of a core instance: its exports, in order. */
typedef struct cm_core_instance_type {
	uint32_t nexports;
	cm_core_export *exports;
} cm_core_instance_type;

bool cm_core_functype_equal(const wasm_functype *a, const wasm_functype *b);

/* ---- definitions (in binary order, for the linker) ---------------------- */

/* How an index-space entry came to be; `def` indexes the named array. */
typedef enum cm_origin {
	CM_ORIGIN_IMPORT,	 /* imports[def] */
	CM_ORIGIN_EXPORT,	 /* exports[def]: aliases the exported item */
	CM_ORIGIN_ALIAS,	 /* aliases[def] */
	CM_ORIGIN_CORE_MODULE,	 /* modules[def]: an embedded module */
	CM_ORIGIN_CORE_INSTANCE, /* core_instances[def] */
	CM_ORIGIN_CORE_TYPE,	 /* a core type definition; def unused */
	CM_ORIGIN_COMPONENT,	 /* components[def]: a nested component */
	CM_ORIGIN_INSTANCE,	 /* instances[def] */
	CM_ORIGIN_TYPE,		 /* a type definition; def unused */
	CM_ORIGIN_CANON,	 /* canons[def] */
	CM_ORIGIN_START,	 /* starts[def]: one of its results 🪙 */
	CM_ORIGIN_VALUE,	 /* values[def] 🪙 */
} cm_origin;

/* One entry of an index space. */
typedef struct cm_item {
	cm_origin origin;
	uint32_t def;
	union {
		/* FUNC: CM_FUNC; VALUE: value type; TYPE: any type;
		 * COMPONENT: CM_COMPONENT; INSTANCE: CM_INSTANCE */
		const cm_type *type;
		/* CORE_TYPE: any core type; CORE_MODULE: a module type */
		const cm_core_type *core_type;
		/* CORE_FUNC: the function type; CORE_TAG: the tag's type */
		const wasm_functype *core_func;
		wasm_tabletype table;
		wasm_memtype memory;
		wasm_globaltype global;
		const cm_core_instance_type *core_instance;
	} t;
} cm_item;

typedef struct cm_space {
	uint32_t n, cap;
	cm_item *items;
} cm_space;

typedef struct cm_import {
	cm_name name;
	cm_externtype type;
	uint32_t index; /* the new index in the space of type.sort */
} cm_import;

typedef struct cm_export {
	cm_name name;
	cm_sort sort;	    /* what is exported */
	uint32_t item;	    /* its index in that sort's space */
	bool has_ascribed;  /* `(export "n" (func $f) (func $t))` */
	cm_externtype type; /* the export's type (ascribed, or inferred) */
	uint32_t index;	    /* the new index the export creates */
} cm_export;

typedef enum cm_alias_kind {
	CM_ALIAS_INSTANCE_EXPORT,      /* (alias export i "n" (sort)) */
	CM_ALIAS_CORE_INSTANCE_EXPORT, /* (alias core export i "n" ...) */
	CM_ALIAS_OUTER,		       /* (alias outer ct idx (sort)) */
} cm_alias_kind;

typedef struct cm_alias {
	cm_alias_kind kind;
	cm_sort sort;
	uint32_t instance; /* *_EXPORT: (core) instance index */
	cm_str name;	   /* *_EXPORT: export name */
	uint32_t count;	   /* OUTER: scopes to skip (0 = this one) */
	uint32_t index;	   /* OUTER: index in that scope's space */
	/* OUTER of a core module / component: the scope's component */
	const struct cm_component *outer;
} cm_alias;

typedef struct cm_sortidx {
	cm_str name;
	cm_sort sort;
	uint32_t index;
} cm_sortidx;

typedef enum cm_instance_kind {
	CM_INSTANTIATE,	 /* core: module + args; component: comp + args */
	CM_FROM_EXPORTS, /* a bag of exports */
} cm_instance_kind;

typedef struct cm_core_instance {
	cm_instance_kind kind;
	uint32_t module; /* CM_INSTANTIATE: core module index */
	uint32_t nargs;	 /* args: sort CORE_INSTANCE; exports: any core */
	cm_sortidx *args;
	const cm_core_instance_type *type;
} cm_core_instance;

typedef struct cm_instance {
	cm_instance_kind kind;
	uint32_t component; /* CM_INSTANTIATE: component index */
	uint32_t nargs;
	cm_sortidx *args;      /* instantiation args, or the exported items */
	cm_name *export_names; /* CM_FROM_EXPORTS: with attributes */
	const cm_type *type;   /* CM_INSTANCE */
} cm_instance;

typedef struct cm_canon_opts {
	cm_string_encoding encoding;
	bool has_encoding;
	uint32_t memory;      /* core memory index or CM_NONE */
	uint32_t realloc;     /* core func index or CM_NONE */
	uint32_t post_return; /* core func index or CM_NONE */
	uint32_t callback;    /* core func index or CM_NONE */
	bool async;
	bool memory64; /* the memory is 64-bit (🐘): pointers are i64 */
} cm_canon_opts;

typedef enum cm_canon_op {
	CM_CANON_LIFT = 0x00,
	CM_CANON_LOWER = 0x01,
	CM_CANON_RESOURCE_NEW = 0x02,
	CM_CANON_RESOURCE_DROP = 0x03,
	CM_CANON_RESOURCE_REP = 0x04,
	CM_CANON_TASK_CANCEL = 0x05,
	CM_CANON_SUBTASK_CANCEL = 0x06,
	CM_CANON_TASK_RETURN = 0x09,
	CM_CANON_CONTEXT_GET = 0x0a,
	CM_CANON_CONTEXT_SET = 0x0b,
	CM_CANON_THREAD_YIELD = 0x0c,
	CM_CANON_SUBTASK_DROP = 0x0d,
	CM_CANON_STREAM_NEW = 0x0e,
	CM_CANON_STREAM_READ = 0x0f,
	CM_CANON_STREAM_WRITE = 0x10,
	CM_CANON_STREAM_CANCEL_READ = 0x11,
	CM_CANON_STREAM_CANCEL_WRITE = 0x12,
	CM_CANON_STREAM_DROP_READABLE = 0x13,
	CM_CANON_STREAM_DROP_WRITABLE = 0x14,
	CM_CANON_FUTURE_NEW = 0x15,
	CM_CANON_FUTURE_READ = 0x16,
	CM_CANON_FUTURE_WRITE = 0x17,
	CM_CANON_FUTURE_CANCEL_READ = 0x18,
	CM_CANON_FUTURE_CANCEL_WRITE = 0x19,
	CM_CANON_FUTURE_DROP_READABLE = 0x1a,
	CM_CANON_FUTURE_DROP_WRITABLE = 0x1b,
	CM_CANON_ERROR_CONTEXT_NEW = 0x1c,
	CM_CANON_ERROR_CONTEXT_DEBUG_MESSAGE = 0x1d,
	CM_CANON_ERROR_CONTEXT_DROP = 0x1e,
	CM_CANON_WAITABLE_SET_NEW = 0x1f,
	CM_CANON_WAITABLE_SET_WAIT = 0x20,
	CM_CANON_WAITABLE_SET_POLL = 0x21,
	CM_CANON_WAITABLE_SET_DROP = 0x22,
	CM_CANON_WAITABLE_JOIN = 0x23,
	CM_CANON_BACKPRESSURE_INC = 0x24,
	CM_CANON_BACKPRESSURE_DEC = 0x25,
	CM_CANON_THREAD_INDEX = 0x26,
	CM_CANON_THREAD_NEW_INDIRECT = 0x27,
	CM_CANON_THREAD_RESUME_LATER = 0x28,
	CM_CANON_THREAD_SUSPEND = 0x29,
	CM_CANON_THREAD_SUSPEND_THEN_RESUME = 0x2a,
	CM_CANON_THREAD_YIELD_THEN_RESUME = 0x2b,
	CM_CANON_THREAD_SUSPEND_THEN_PROMOTE = 0x2c,
	CM_CANON_THREAD_YIELD_THEN_PROMOTE = 0x2d,
	CM_CANON_THREAD_SPAWN_REF = 0x40,
	CM_CANON_THREAD_SPAWN_INDIRECT = 0x41,
	CM_CANON_THREAD_AVAILABLE_PARALLELISM = 0x42,
} cm_canon_op;

/* "canon lift", "stream.read", ... */
const char *cm_canon_op_name(cm_canon_op op);

typedef struct cm_canon {
	cm_canon_op op;
	/*
	 * LIFT: the core func index.  LOWER: the (component) func index.
	 * RESOURCE_*: the type index of the resource.  STREAM_*, FUTURE_*:
	 * the type index of the stream/future type.  THREAD_NEW_INDIRECT,
	 * THREAD_SPAWN_*: the core type index.  Else unused (CM_NONE).
	 */
	uint32_t index;
	uint32_t table; /* THREAD_*_INDIRECT: core table index */
	/*
	 * LIFT: the CM_FUNC it produces; LOWER: the type of the lowered
	 * func; RESOURCE_*: the CM_RESOURCE; STREAM_* and FUTURE_*: the
	 * CM_STREAM/CM_FUTURE type; TASK_RETURN: the result type (NULL for
	 * none).  Else NULL.
	 */
	const cm_type *type;
	cm_canon_opts opts;
	/* the `async?` / `cancel?` / `shared?` immediate, where there is one */
	bool flag;
	/* CONTEXT_GET/SET: the core value type and the slot index */
	wasm_valtype valtype;
	uint32_t slot;
	/* the core function type produced (every op but LIFT) */
	const wasm_functype *core_type;
	uint32_t result_index; /* index created in FUNC or CORE_FUNC */
} cm_canon;

/* 🪙: `start` and `value` definitions: decoded and kept, not run. */
typedef struct cm_start {
	uint32_t func;
	uint32_t nargs;
	uint32_t *args; /* value indices */
	uint32_t nresults;
} cm_start;

typedef struct cm_value {
	const cm_type *type;
	const uint8_t *bytes; /* the encoded value, in the arena */
	uint32_t len;
} cm_value;

/* The kind of a top-level definition, for replaying them in order. */
typedef enum cm_def_kind {
	CM_DEF_CORE_MODULE,   /* modules[index] */
	CM_DEF_CORE_INSTANCE, /* core_instances[index] */
	CM_DEF_CORE_TYPE,     /* index = the core type index */
	CM_DEF_COMPONENT,     /* components[index] */
	CM_DEF_INSTANCE,      /* instances[index] */
	CM_DEF_ALIAS,	      /* aliases[index] */
	CM_DEF_TYPE,	      /* index = the type index */
	CM_DEF_CANON,	      /* canons[index] */
	CM_DEF_START,	      /* starts[index] */
	CM_DEF_IMPORT,	      /* imports[index] */
	CM_DEF_EXPORT,	      /* exports[index] */
	CM_DEF_VALUE,	      /* values[index] */
} cm_def_kind;

typedef struct cm_def {
	cm_def_kind kind;
	uint32_t index;
} cm_def;

struct cm_arena;

/*
 * A component definition (the root, or one nested in a parent).  Arrays
 * are in binary order.  `type` is the component's own type: its imports
 * and exports (with imported_resources = the abstract resources of its
 * imports, defined_resources = the resources its exports make fresh).
 */
typedef struct cm_component {
	const struct cm_component *parent; /* NULL for the root */
	struct cm_arena *arena;		   /* the root's */
	size_t offset; /* of its preamble in the root binary */

	cm_space spaces[CM_NSORTS];

	uint32_t ndefs;
	cm_def *defs;

	uint32_t nmodules;
	wasm_module **modules; /* validated core modules (owned) */
	const cm_core_type **module_types;
	uint32_t ncore_instances;
	cm_core_instance *core_instances;
	uint32_t ncomponents;
	struct cm_component **components;
	uint32_t ninstances;
	cm_instance *instances;
	uint32_t naliases;
	cm_alias *aliases;
	uint32_t ncanons;
	cm_canon *canons;
	uint32_t nimports;
	cm_import *imports;
	uint32_t nexports;
	cm_export *exports;
	uint32_t nstarts;
	cm_start *starts;
	uint32_t nvalues;
	cm_value *values;

	const cm_type *type; /* CM_COMPONENT */
	/* context.get/set core valtype seen so far (0 when none) */
	wasm_valtype context_valtype;
} cm_component;

static inline const cm_item *cm_space_get(const cm_component *c, cm_sort s,
					  uint32_t idx)
{
	return idx < c->spaces[s].n ? &c->spaces[s].items[idx] : NULL;
}

#endif
