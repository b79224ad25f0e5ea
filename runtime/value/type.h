/*
 * type.h - the Component Model's value types as the Canonical ABI sees
 * them (definitions.py's type section): the cm_type node, primitive
 * singletons, despecialized views, alignment, elem_size and flattening.
 * This is the layer below both the component front end (runtime/component,
 * which builds the nodes while decoding and validating) and the Canonical
 * ABI (runtime/cabi, which walks them); it includes only runtime/wasm.
 *
 * A cm_type node also represents the other types of a component's type
 * index space (function, component, instance and resource types): a
 * function type is the signature of a lift or lower, and a handle points
 * at its resource node.  What those nodes point to beyond value types
 * (import/export declarations, the defining component) is the component
 * AST of runtime/component/types.h, reached only through pointers here.
 *
 * Types are referenced by pointer (`const cm_type *`), never by index: an
 * index is meaningful only in the index space it was decoded in, a pointer
 * everywhere.  Primitive value types are process-wide const singletons
 * (cm_prim()), so `a == b` is a complete equality test for them.  Compound
 * types are owned nodes (in the arena of the component that made them),
 * except resource types, whose identity IS the node: two resource types
 * are the same type iff they are the same canonical cm_type pointer
 * (cm_resource_canonical).
 *
 * Derived facts are cached in every value-type node when it is built
 * (cm_type_finish; its children always exist first: definitions are
 * acyclic), so the ABI never recurses to learn them and hostile nesting
 * cannot blow the C stack: alignment and size for 32- and 64-bit memories
 * (2.4 of the digest), the flat count (saturated), "contains borrow",
 * "contains a resource", "contains string/list" (needs memory/realloc),
 * nesting depth and the wasmparser-style "type size" bound that keeps
 * structural comparison linear.  Validation rejects types deeper than
 * CM_MAX_TYPE_DEPTH, larger than CM_MAX_TYPE_SIZE, or whose 64-bit
 * elem_size is >= 2^28; hence every size stored in a node of a loaded
 * component fits in 32 bits.
 *
 * ABI helpers.  The *type-level* part of the canonical ABI lives here,
 * because validation needs it too (canon lift type check, required
 * options, max value size): alignment/elem_size (cached), despecialization
 * views (cm_type_ncases/cm_type_case/cm_type_nfields/cm_type_field),
 * discriminant size, flattening of a value type (cm_flatten) and of a
 * function type (cm_flatten_functype, with MAX_FLAT_PARAMS 16,
 * MAX_FLAT_ASYNC_PARAMS 4, MAX_FLAT_RESULTS 1 and the async rules of digest
 * 2.10).  Field offsets, load/store, lift/lower and handle tables are left
 * to runtime/cabi.
 *
 * Strings.  Every cm_str of a type node points into its arena, is
 * NUL-terminated for convenience, and also carries its length.
 */
#ifndef HOSTEL_VALUE_TYPE_H
#define HOSTEL_VALUE_TYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wasm/module.h"

/* Limits (digest 2.4, 2.10; wasmparser for the depth/size guards). */
#define CM_MAX_FLAT_PARAMS	 16
#define CM_MAX_FLAT_ASYNC_PARAMS 4
#define CM_MAX_FLAT_RESULTS	 1
#define CM_MAX_FLAGS		 32
#define CM_MAX_VALUE_SIZE	 (1u << 28) /* elem_size (P=8) must be below */
#define CM_MAX_TYPE_DEPTH	 100	    /* nesting of defined types */
#define CM_MAX_TYPE_SIZE	 1000000 /* wasmparser's effective type size */
#define CM_NONE			 UINT32_MAX /* "no index" in optional fields */

typedef struct cm_str {
	const char *ptr; /* NUL-terminated copy in the arena ("" if empty) */
	uint32_t len;
} cm_str;

struct cm_type;
struct cm_component;
struct cm_extern_decl;

/* ---- value types ------------------------------------------------------- */

typedef enum cm_type_kind {
	/* primitive value types (singletons, see cm_prim) */
	CM_BOOL = 0,
	CM_S8,
	CM_U8,
	CM_S16,
	CM_U16,
	CM_S32,
	CM_U32,
	CM_S64,
	CM_U64,
	CM_F32,
	CM_F64,
	CM_CHAR,
	CM_STRING,
	CM_ERROR_CONTEXT,
	/* defined value types */
	CM_LIST,    /* list<T> or, with `len` > 0, list<T, len> */
	CM_RECORD,  /* fields: label + type */
	CM_TUPLE,   /* elems */
	CM_VARIANT, /* cases: label + optional payload */
	CM_ENUM,    /* labels */
	CM_OPTION,  /* elem */
	CM_RESULT,  /* ok?, err? */
	CM_FLAGS,   /* labels (1..32) */
	CM_OWN,	    /* resource */
	CM_BORROW,  /* resource */
	CM_STREAM,  /* elem? */
	CM_FUTURE,  /* elem? */
	CM_MAP,	    /* key, value (and entry = tuple<key, value>) */
	/* other types of the type index space */
	CM_FUNC,      /* a component function type */
	CM_COMPONENT, /* a component type */
	CM_INSTANCE,  /* an instance type */
	CM_RESOURCE,  /* a resource type (identity = the node) */
	CM_NTYPE_KINDS
} cm_type_kind;

#define CM_LAST_PRIM CM_ERROR_CONTEXT

/* A labelled slot: record field, variant case, function parameter. */
typedef struct cm_field {
	cm_str label;
	const struct cm_type *type; /* NULL: a variant case without payload */
} cm_field;

/*
 * Cached ABI/validation facts of a value type (all zero for the types of
 * other kinds).  Index 0 is for 32-bit memories (P=4), 1 for 64-bit (P=8).
 */
typedef struct cm_abi_info {
	uint32_t align[2];
	uint64_t size[2];    /* saturating; validated < 2^28 for P=8 */
	uint32_t flat_count; /* saturating at UINT32_MAX */
	bool has_borrow;     /* a borrow anywhere inside */
	bool has_resource;   /* own/borrow anywhere inside (outer alias rule) */
	bool has_memory;     /* string or list (not fixed) anywhere inside */
	/* a node made by an `(eq t)` type import anywhere inside (such
	 * nodes are replaced by the arguments' at instantiation) */
	bool has_var;
	uint32_t depth;	    /* 1 for primitives */
	uint32_t type_size; /* wasmparser-style effective size, saturating */
} cm_abi_info;

/* ---- the type node ------------------------------------------------------ */

typedef struct cm_functype {
	uint32_t nparams;
	cm_field *params;	      /* label = parameter name */
	const struct cm_type *result; /* NULL: no result */
	bool async;		      /* `func async` (0x43) */
} cm_functype;

/*
 * Component types and instance types (an instance type has no imports).
 * imported_resources: the abstract resources introduced by the imports
 * (what instantiation arguments replace).  defined_resources: the abstract
 * resources introduced by the exports (fresh at every instantiation, or
 * for an imported instance, fresh per import).  Both in declaration order.
 */
typedef struct cm_comptype {
	uint32_t nimports;
	struct cm_extern_decl *imports;
	uint32_t nexports;
	struct cm_extern_decl *exports;
	uint32_t nimported_resources;
	const struct cm_type **imported_resources;
	uint32_t ndefined_resources;
	const struct cm_type **defined_resources;
	/* mentions a resource bound outside this type (outer alias rule) */
	bool has_free_resource;
} cm_comptype;

/*
 * A resource type.  Importing or exporting a type, or exporting it from a
 * bag-of-exports instance, gives the new type index a new *alias* node
 * (`alias_of` = the canonical node) so that "is this type exported under
 * a name" (external visibility, annotated names) can be decided per index,
 * as wasmparser does.  Identity for type checking is the canonical node:
 * use cm_resource_canonical().  Only canonical nodes carry the fields
 * below; own/borrow point at the node as written (possibly an alias).
 */
typedef struct cm_resource {
	const struct cm_type *alias_of; /* NULL: this node is canonical */
	bool defined;	  /* a `resource` definition, not abstract */
	wasm_valtype rep; /* defined: WASM_I32 (or WASM_I64 🐘) */
	uint32_t dtor;	  /* defined: core func index, or CM_NONE */
	const struct cm_component *owner; /* defined: the defining component */
	uint32_t id; /* unique in the arena: printing, hashing */
	cm_str name; /* a name it was first bound to ("" if none) */
} cm_resource;

typedef struct cm_type {
	cm_type_kind kind;
	cm_abi_info abi;
	union {
		struct {
			const struct cm_type *elem;
			uint32_t len; /* 0: list<T>; else list<T, len> 🔧 */
		} list;
		struct {
			uint32_t n;
			cm_field *fields; /* record fields, variant cases */
		} record, variant;
		struct {
			uint32_t n;
			const struct cm_type **elems;
		} tuple;
		struct {
			uint32_t n;
			cm_str *labels;
		} enm, flags;
		struct {
			const struct cm_type *elem; /* option; stream/future */
		} option, stream, future;
		struct {
			const struct cm_type *ok;  /* NULL: no ok payload */
			const struct cm_type *err; /* NULL: no error payload */
		} result;
		struct {
			const struct cm_type *resource; /* a CM_RESOURCE */
		} handle;				/* own, borrow */
		struct {
			const struct cm_type *key, *value;
			const struct cm_type *entry; /* tuple<key, value> */
		} map;
		cm_functype func;
		cm_comptype comp; /* CM_COMPONENT, CM_INSTANCE */
		cm_resource resource;
	} u;
} cm_type;

/* The identity of a resource type node (follows alias_of). */
static inline const cm_type *cm_resource_canonical(const cm_type *t)
{
	while (t->u.resource.alias_of != NULL)
		t = t->u.resource.alias_of;
	return t;
}

/* The resource (canonical) of an own/borrow handle type. */
static inline const cm_type *cm_handle_resource(const cm_type *t)
{
	return cm_resource_canonical(t->u.handle.resource);
}

/* The singleton of a primitive kind (kind <= CM_LAST_PRIM), else NULL. */
const cm_type *cm_prim(cm_type_kind kind);

static inline bool cm_type_is_prim(const cm_type *t)
{
	return t->kind <= CM_LAST_PRIM;
}

static inline bool cm_type_is_value(const cm_type *t)
{
	return t->kind <= CM_MAP;
}

/*
 * Are value types a and b the same type, structurally (labels, cases,
 * element types; a handle's resource by identity)?  Two definitions of
 * future<result<_, error-code>> in two scopes are; a stream or future
 * type names its element type only by this.
 */
bool cm_valtype_same(const cm_type *a, const cm_type *b);

/* "u32", "record", "own", "func", ... */
const char *cm_type_kind_name(cm_type_kind k);

/* ---- ABI helpers (type level) ------------------------------------------ */

/* ptr64: false for 32-bit memories (the only kind in the test suite). */
static inline uint32_t cm_alignment(const cm_type *t, bool ptr64)
{
	return t->abi.align[ptr64];
}

static inline uint32_t cm_elem_size(const cm_type *t, bool ptr64)
{
	return (uint32_t)t->abi.size[ptr64];
}

/* Flat count of a value type, saturated at UINT32_MAX. */
static inline uint32_t cm_flat_count(const cm_type *t)
{
	return t->abi.flat_count;
}

/* Discriminant size in bytes of a variant with n cases: 1, 2 or 4. */
static inline uint32_t cm_discriminant_size(uint32_t ncases)
{
	return ncases <= 256 ? 1 : ncases <= 65536 ? 2 : 4;
}

/*
 * Despecialized views (digest 2.3).  A variant view exists for variant,
 * enum, option (none, some) and result (ok, error): ncases, and the payload
 * of case i (NULL for none).  A record view exists for record and tuple:
 * nfields and the type of field i.  For map, use u.map.entry as the element
 * of a list.  Calling a view on a type of another kind returns 0 / NULL.
 */
uint32_t cm_type_ncases(const cm_type *t);
const cm_type *cm_type_case(const cm_type *t, uint32_t i);
uint32_t cm_type_nfields(const cm_type *t);
const cm_type *cm_type_field(const cm_type *t, uint32_t i);

/* join() of two flat core types (digest 2.10). */
wasm_valtype cm_flat_join(wasm_valtype a, wasm_valtype b);

/*
 * Flatten value type t: writes at most `max` core types to out (which
 * may be NULL when max is 0) and returns the full flat count (saturated).
 * Pointers are i32, or i64 when ptr64.
 */
uint32_t cm_flatten(const cm_type *t, bool ptr64, wasm_valtype *out,
		    uint32_t max);

typedef enum cm_abi_context {
	CM_LIFT,  /* canon lift: the core function the component provides */
	CM_LOWER, /* canon lower: the core function the component imports */
} cm_abi_context;

/*
 * The core signature of canon lift/lower of function type ft with the
 * given `async` / `callback` options (flatten_functype).  The result
 * holds at most MAX_FLAT_PARAMS + 1 params and one result, in caller
 * storage.
 */
typedef struct cm_flat_functype {
	uint32_t nparams, nresults;
	wasm_valtype params[CM_MAX_FLAT_PARAMS + 1];
	wasm_valtype results[1];
} cm_flat_functype;

void cm_flatten_functype(const cm_type *ft, bool async, bool callback,
			 bool ptr64, cm_abi_context ctx, cm_flat_functype *out);

typedef enum cm_string_encoding {
	CM_UTF8 = 0,
	CM_UTF16,
	CM_LATIN1_UTF16,
} cm_string_encoding;

/*
 * Set the cached facts (t->abi) of a new node whose children are set.
 * Called once per node by whoever builds it (the validator); never
 * recurses beyond the direct children, so building a type is linear.
 */
void cm_type_finish(cm_type *t);

#endif
