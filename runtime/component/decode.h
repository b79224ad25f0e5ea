/*
 * decode.h - the raw (decoded, not yet validated) form of a component
 * binary, internal to runtime/component.
 *
 * Contract: cm_decode() reads a whole component binary, including every
 * nested component, into raw_component trees allocated in the caller's
 * arena.  It checks exactly what the binary format fixes: preamble,
 * section framing, LEB ranges, UTF-8, every leading byte of every
 * production (digest 1.1-1.13), and decodes embedded core modules with
 * the core decoder.  It resolves nothing: indices stay indices, names stay
 * unparsed.  Every failure is a WASM_ERR_MALFORMED error with the byte
 * offset and wasmparser's message text.  Validation (validate.c) turns the
 * raw tree into a cm_component.
 */
#ifndef HOSTEL_COMPONENT_DECODE_H
#define HOSTEL_COMPONENT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "component/arena.h"
#include "component/types.h"
#include "wasm/error.h"
#include "wasm/module.h"

/*
 * A valtype as written: a primitive (RAW_PRIM bit set, low byte = the
 * primvaltype opcode) or a type index (indices >= 2^31 are clamped to
 * 0x7fffffff, which is out of bounds anyway).
 */
typedef uint32_t raw_valtype;
#define RAW_PRIM 0x80000000u
#define RAW_NONE 0xffffffffu /* an absent optional valtype */

static inline bool raw_is_prim(raw_valtype t)
{
	return t != RAW_NONE && (t & RAW_PRIM);
}

typedef struct raw_field {
	cm_str label;
	raw_valtype type; /* RAW_NONE: no payload (variant case) */
	size_t offset;
} raw_field;

typedef struct raw_externtype {
	uint8_t code;	/* 0x00 core module, 0x01 func, ... 0x05 instance */
	uint32_t index; /* type index (core type index for modules) */
	bool bound_eq;	/* type: (eq index); false: (sub resource) */
	bool value_eq;	/* value: (eq index); false: valtype */
	raw_valtype valtype;
	size_t offset;
} raw_externtype;

struct raw_deftype;
struct raw_core_type;

typedef enum raw_decl_kind {
	RAW_DECL_CORE_TYPE, /* 0x00 */
	RAW_DECL_TYPE,	    /* 0x01 */
	RAW_DECL_ALIAS,	    /* 0x02 */
	RAW_DECL_IMPORT,    /* 0x03 (component types only) */
	RAW_DECL_EXPORT,    /* 0x04 */
} raw_decl_kind;

/* A component-type or instance-type declarator. */
typedef struct raw_decl {
	raw_decl_kind kind;
	size_t offset;
	struct raw_core_type *core_type;
	struct raw_deftype *type;
	cm_alias alias;
	cm_name name;
	raw_externtype ext;
} raw_decl;

typedef struct raw_deftype {
	uint8_t code; /* the leading byte (a primvaltype byte for prims) */
	size_t offset;
	union {
		struct {
			uint32_t n;
			raw_field *fields;
		} fields; /* record (0x72), variant (0x71) */
		struct {
			uint32_t n;
			raw_valtype *types;
		} tuple; /* 0x6f */
		struct {
			uint32_t n;
			cm_str *labels;
			size_t *offsets;
		} labels; /* flags 0x6e, enum 0x6d */
		struct {
			raw_valtype type; /* RAW_NONE for stream/future */
			uint32_t len;	  /* fixed list 0x67 */
		} one; /* list 0x70/0x67, option 0x6b, stream 0x66,
			* future 0x65 */
		struct {
			raw_valtype ok, err; /* RAW_NONE if absent */
		} result;		     /* 0x6a */
		struct {
			uint32_t index;
		} handle; /* own 0x69, borrow 0x68 */
		struct {
			raw_valtype key, value;
		} map; /* 0x63 */
		struct {
			uint32_t nparams;
			raw_field *params;
			raw_valtype result; /* RAW_NONE: no result */
		} func;			    /* 0x40, async 0x43 */
		struct {
			uint32_t n;
			raw_decl *decls;
		} decls; /* component 0x41, instance 0x42 */
		struct {
			wasm_valtype rep;
			uint32_t dtor; /* CM_NONE if absent */
		} resource;	       /* 0x3f */
	} u;
} raw_deftype;

/* Core module-type declarators. */
typedef enum raw_module_decl_kind {
	RAW_MDECL_IMPORT = 0,
	RAW_MDECL_TYPE = 1,
	RAW_MDECL_ALIAS = 2,
	RAW_MDECL_EXPORT = 3,
} raw_module_decl_kind;

typedef struct raw_core_externtype {
	wasm_externkind kind;
	uint32_t typeidx; /* func, tag */
	wasm_tabletype table;
	wasm_memtype memory;
	wasm_globaltype global;
} raw_core_externtype;

typedef struct raw_module_decl {
	raw_module_decl_kind kind;
	size_t offset;
	cm_str module, name; /* import: both; export: name */
	raw_core_externtype ext;
	struct raw_core_type *type; /* RAW_MDECL_TYPE */
	uint32_t count, index;	    /* RAW_MDECL_ALIAS (outer) */
} raw_module_decl;

/*
 * A core:type: a module type, or one or more function types (a GC `rec`
 * group of func-typed subtypes yields several; supertypes are ignored
 * because the core engine has no GC subtyping).
 */
typedef struct raw_core_type {
	bool is_module;
	size_t offset;
	uint32_t nfuncs; /* !is_module */
	wasm_functype *funcs;
	uint32_t ndecls;
	raw_module_decl *decls;
} raw_core_type;

typedef struct raw_instance_arg {
	cm_name name; /* plain name, or nameattributes for bag exports */
	cm_sort sort;
	uint32_t index;
	size_t offset;
} raw_instance_arg;

typedef struct raw_instance {
	bool core;
	cm_instance_kind kind;
	uint32_t index; /* module or component index */
	uint32_t nargs;
	raw_instance_arg *args;
	size_t offset;
} raw_instance;

typedef struct raw_canon {
	cm_canon_op op;
	size_t offset;
	uint32_t index;	     /* see cm_canon.index */
	uint32_t type_index; /* LIFT: the func type index */
	uint32_t table;
	raw_valtype result; /* TASK_RETURN: RAW_NONE for no result */
	uint32_t nopts;
	uint8_t *opt_codes; /* the canonopt bytes, in order */
	uint32_t *opt_args; /* their index immediate (or 0) */
	size_t *opt_offsets;
	bool flag;
	wasm_valtype valtype;
	uint32_t slot;
} raw_canon;

typedef struct raw_import {
	cm_name name;
	raw_externtype ext;
	size_t offset;
} raw_import;

typedef struct raw_export {
	cm_name name;
	cm_sort sort;
	uint32_t index;
	bool has_type;
	raw_externtype ext;
	size_t offset;
} raw_export;

typedef struct raw_alias {
	cm_alias alias; /* outer/scope fields left unresolved */
	size_t offset;
} raw_alias;

typedef struct raw_value {
	raw_valtype type;
	const uint8_t *bytes;
	uint32_t len;
	size_t offset;
} raw_value;

struct raw_component;

/* One item of a section, in binary order. */
typedef enum raw_item_kind {
	RAW_CORE_MODULE,
	RAW_CORE_INSTANCE,
	RAW_CORE_TYPE,
	RAW_COMPONENT,
	RAW_INSTANCE,
	RAW_ALIAS,
	RAW_TYPE,
	RAW_CANON,
	RAW_START,
	RAW_IMPORT,
	RAW_EXPORT,
	RAW_VALUE,
} raw_item_kind;

typedef struct raw_item {
	raw_item_kind kind;
	size_t offset;
	union {
		wasm_module *module; /* decoded, not yet validated */
		raw_instance *instance;
		raw_core_type *core_type;
		struct raw_component *component;
		raw_alias *alias;
		raw_deftype *type;
		raw_canon *canon;
		cm_start *start;
		raw_import *import;
		raw_export *export;
		raw_value *value;
	} u;
	/* RAW_CORE_MODULE: where the module's bytes are (for the core
	 * validator, which wants the binary). */
	const uint8_t *bytes;
	size_t len;
} raw_item;

typedef struct raw_component {
	size_t offset; /* of the preamble */
	uint32_t nitems, cap;
	raw_item *items;
	bool has_start; /* a start section was read (at most one) */
} raw_component;

/*
 * Decode a component binary.  Core modules decoded here are owned by the
 * raw tree: cm_raw_free_modules releases those not taken (set to NULL)
 * by validation.
 */
int cm_decode(cm_arena *a, const uint8_t *bytes, size_t len,
	      raw_component **out, wasm_error *err);
void cm_raw_free_modules(raw_component *c);

/* True when the 8 bytes at p start a component (version 0x0d, layer 1). */
bool cm_is_component_header(const uint8_t *p, size_t len);

#endif
