/*
 * internal.h - declarations shared by the files of runtime/component
 * (validation, type comparison, names); not part of any public contract.
 *
 * Errors: validation functions return 0, or -1 after setting a message
 * in the vstate (cm_fail).  Context is added outside-in with cm_context
 * ("type mismatch in instance export `a`: <inner>"), so the innermost,
 * most precise text always survives.
 */
#ifndef HOSTEL_COMPONENT_INTERNAL_H
#define HOSTEL_COMPONENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "component/arena.h"
#include "component/types.h"
#include "wasm/error.h"

#define CM_MSG_MAX 512

/*
 * Structural comparisons are linear in the types' effective size, but a
 * component may ask for many of them; `work` counts steps so that one
 * load is bounded (CM_MAX_WORK steps, a fraction of a second) whatever
 * the input; real components need a few thousand.
 */
#define CM_MAX_WORK 20000000ull

typedef struct vstate {
	cm_arena *a;
	wasm_error_kind kind; /* of the pending error */
	size_t offset;
	uint64_t work;
	bool over_budget; /* the work-limit error was reported */
	char msg[CM_MSG_MAX];
} vstate;

/* Count one step of a walk; fails once the budget is spent. */
int cm_work_exceeded(vstate *v);
#define CM_WORK(v) ((++(v)->work > CM_MAX_WORK) && cm_work_exceeded(v))

/*
 * Are len bytes at p exactly one value of value type t, in the value
 * section's encoding (value.c)?  0, or -1 with why (NUL-terminated).
 */
int cm_value_bytes_check(const cm_type *t, const uint8_t *p, size_t len,
			 char *why, size_t whylen);
int cm_fail(vstate *v, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int cm_oom(vstate *v);
/* Prefix the pending message with "<context>: "; returns -1. */
int cm_context(vstate *v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- small hash sets/maps in the arena ---------------------------------- */

/*
 * Keys are pointers (len == CM_KEY_PTR) or byte strings.  Values are
 * pointers.  Tables grow by doubling; old storage is abandoned in the
 * arena.
 */
#define CM_KEY_PTR UINT32_MAX

typedef struct cm_hentry {
	const void *key;
	uint32_t len;
	uint32_t hash;
	const void *val;
} cm_hentry;

typedef struct cm_hmap {
	cm_hentry *slots;
	uint32_t cap, n;
} cm_hmap;

/* Returns the entry for key or NULL. */
cm_hentry *cm_hmap_get(const cm_hmap *m, const void *key, uint32_t len);
/* Inserts or updates; returns -1 on allocation failure. */
int cm_hmap_put(cm_arena *a, cm_hmap *m, const void *key, uint32_t len,
		const void *val);

static inline const void *cm_hmap_lookup_ptr(const cm_hmap *m, const void *k)
{
	cm_hentry *e = cm_hmap_get(m, k, CM_KEY_PTR);

	return e ? e->val : NULL;
}

/* ---- types.c ------------------------------------------------------------ */

const cm_type *cm_prim_of_byte(uint8_t b);

/* ---- names.c ------------------------------------------------------------ */

/*
 * Parse and check an import/export name (kebab labels, annotated forms,
 * interface names with semver); fills n->kind and parts.  Messages:
 * "`NAME` is not a valid extern name: <detail>".
 */
int cm_name_parse(vstate *v, cm_name *n, size_t offset);
/* Check the attributes of a parsed name given the sort it names. */
int cm_name_check_attributes(vstate *v, const cm_name *n, cm_sort sort,
			     size_t offset);
/* The strongly-unique canonical form (digest 1.10), in the arena. */
int cm_name_canonical(vstate *v, const cm_name *n, cm_str *out);
/* A kebab label check for record fields, cases, flags, params. */
bool cm_is_kebab(const char *s, size_t len);
/* Lowercased copy for label uniqueness. */
int cm_lower(vstate *v, cm_str in, cm_str *out);

/* ---- subtype.c ------------------------------------------------------------
 */

/* A substitution of resources: canonical node -> canonical node. */
typedef struct cm_rmap {
	cm_hmap m;
	uint32_t n;
} cm_rmap;

int cm_rmap_put(vstate *v, cm_rmap *m, const cm_type *from, const cm_type *to);
/* Map a type-import node (has_var) itself to the argument's type. */
int cm_rmap_put_var(vstate *v, cm_rmap *m, const cm_type *from,
		    const cm_type *to);

/* A new abstract resource (canonical), with a name hint. */
cm_type *cm_new_resource(vstate *v, cm_str name);
/* A new alias node of a resource (the canonical of r). */
cm_type *cm_new_resource_alias(vstate *v, const cm_type *r);
/* A shallow copy of a type node (a new identity for visibility). */
cm_type *cm_type_copy(vstate *v, const cm_type *t);

/* Apply m to t (NULL on allocation failure; t itself if unchanged). */
const cm_type *cm_subst(vstate *v, const cm_type *t, const cm_rmap *m);
int cm_subst_extern(vstate *v, const cm_externtype *in, const cm_rmap *m,
		    cm_externtype *out);
/*
 * m applied to the n declarations' types at once (out[i].type), with one
 * memo: a node two of them share stays one node after (an instance
 * type's func that names its own type export keeps naming that export,
 * which external visibility goes by).  0 or -1.
 */
int cm_subst_decls(vstate *v, const cm_extern_decl *in, uint32_t n,
		   const cm_rmap *m, cm_extern_decl *out);
/* An instance type with fresh nodes for its defined (bound) resources;
 * the fresh nodes are appended to *list (may be NULL). */
const cm_type *cm_freshen_instance(vstate *v, const cm_type *it,
				   const cm_type ***list, uint32_t *n,
				   uint32_t *cap);

/*
 * Bind the bound resources `bound` (canonical nodes) of an expected type
 * from the actual type, by position (type imports/exports, recursively
 * through instance exports).
 */
int cm_infer(vstate *v, cm_rmap *m, const cm_type *const *bound,
	     uint32_t nbound, const cm_externtype *expected,
	     const cm_externtype *actual);

/* Subtyping of extern descriptions, value-type equality (messages as
 * wasmparser's: "expected u32, found tuple", ...). */
int cm_extern_sub(vstate *v, const cm_externtype *a, const cm_externtype *b);
int cm_valtype_eq(vstate *v, const cm_type *a, const cm_type *b);
int cm_func_sub(vstate *v, const cm_type *a, const cm_type *b);
int cm_core_extern_sub(vstate *v, const cm_core_externtype *a,
		       const cm_core_externtype *b);
int cm_module_sub(vstate *v, const cm_core_type *a, const cm_core_type *b);

/* ---- scopes (validate.c and friends) --------------------------------------
 */

typedef enum scope_kind {
	SCOPE_COMPONENT,
	SCOPE_COMPONENT_TYPE,
	SCOPE_INSTANCE_TYPE,
} scope_kind;

/* One namespace (imports or exports) of a scope. */
typedef struct name_ctx {
	cm_hmap names;	     /* canonical name -> cm_str * (as written) */
	cm_hmap named;	     /* type node -> itself: externally visible */
	cm_hmap res_names;   /* resource node (as written) -> cm_str * */
	cm_hmap res_by_name; /* resource name -> node */
} name_ctx;

typedef struct scope {
	struct scope *parent;
	scope_kind kind;
	vstate *v;
	cm_component *comp; /* the component being validated (innermost) */
	cm_space own_spaces[CM_NSORTS];
	cm_space *spaces; /* comp->spaces, or own_spaces in type scopes */
	name_ctx imp, exp;
	/* type scopes: the declarations; components: their resources */
	cm_extern_decl *imports, *exports;
	uint32_t nimports, cap_imports, nexports, cap_exports;
	const cm_type **imported_res, **defined_res;
	uint32_t nimported_res, cap_imported_res, ndefined_res, cap_defined_res;
	cm_hmap imported_set; /* canonical imported resources */
	bool has_free_resource;
} scope;

/* Push one item onto a space of the scope; returns its index or -1. */
int cm_push(scope *s, cm_sort sort, cm_origin origin, uint32_t def,
	    const cm_item *proto, size_t offset);
const cm_item *cm_get(scope *s, cm_sort sort, uint32_t idx, size_t offset);

/* visibility.c */
/*
 * After cm_name_parse (syntax) and cm_check_annotated (which wasmparser
 * checks first): strong uniqueness in ctx, then the attributes.
 */
int cm_check_name_unique(scope *s, name_ctx *ctx, cm_name *n, cm_sort sort,
			 bool is_import, size_t offset);
int cm_check_annotated(scope *s, name_ctx *ctx, const cm_name *n,
		       const cm_externtype *e, size_t offset);
int cm_register_named(scope *s, name_ctx *ctx, const cm_name *n,
		      const cm_externtype *e);
int cm_check_visible(scope *s, const cm_externtype *e, bool is_import,
		     size_t offset);

/* canon.c */
struct raw_canon;
int cm_validate_canon(scope *s, const struct raw_canon *rc, cm_canon *out);

/* validate.c: the raw tree of decode.h -> a validated component. */
struct raw_component;
int cm_validate(cm_arena *a, struct raw_component *raw, cm_component **out,
		wasm_error *err);

/* core.c */
struct raw_core_type;
/* A core:type defines cm_core_type_count() types (a rec group several). */
uint32_t cm_core_type_count(const struct raw_core_type *rt);
const cm_core_type *cm_build_core_type(scope *s, const struct raw_core_type *rt,
				       uint32_t i);
const cm_core_type *cm_module_type_of(vstate *v, const wasm_module *m);
int cm_check_module_imports(vstate *v, const wasm_module *m, size_t offset);
const char *cm_core_kind_name(wasm_externkind k);

/* Text of a core func type "(func (param i32) (result i32))". */
void cm_core_functype_str(const wasm_functype *f, char *buf, size_t n);

#endif
