/*
 * test_wasm_store.c - runtime objects and instantiation: memory and table
 * growth under type and store limits, extern references, function-type
 * interning, globals, import matching (every mismatch case), segment
 * initialisation order and traps, export lookup with odd names, and the
 * start function.
 *
 * Modules are built by hand as wasm_module structs (marked validated), so
 * these tests exercise instantiation without the decoder or validator.
 */
#include <string.h>

#include "wasm/store.h"
#include "testmain.h"

/* ---- helpers ------------------------------------------------------------ */

#define CE(bytes) ((wasm_constexpr){(bytes), sizeof(bytes), 0})

static const uint8_t I32_0[] = {0x41, 0x00, 0x0b};
static const uint8_t I32_1[] = {0x41, 0x01, 0x0b};
static const uint8_t I32_2[] = {0x41, 0x02, 0x0b};
static const uint8_t I32_3[] = {0x41, 0x03, 0x0b};
static const uint8_t I32_65534[] = {0x41, 0xfe, 0xff, 0x03, 0x0b};

static wasm_valtype VT_I32[] = {WASM_I32};
static wasm_valtype VT_I64[] = {WASM_I64};
/* type 0: [] -> [], type 1: [i32] -> [], type 2: [] -> [i32] */
static wasm_functype TYPES[] = {
	{0, 0, NULL, NULL},
	{1, 0, VT_I32, NULL},
	{0, 1, NULL, VT_I32},
};

static wasm_name name_of(const char *s, uint32_t len)
{
	return (wasm_name){(const uint8_t *)s, len};
}

/* An empty, validated module using TYPES. */
static wasm_module empty_module(void)
{
	wasm_module m;

	memset(&m, 0, sizeof m);
	m.ntypes = 3;
	m.types = TYPES;
	m.validated = true;
	return m;
}

static wasm_limits lim(uint64_t min, bool has_max, uint64_t max)
{
	wasm_limits l;

	memset(&l, 0, sizeof l);
	l.min = min;
	l.has_max = has_max;
	l.max = max;
	return l;
}

static wasm_memtype memtype(uint64_t min, bool has_max, uint64_t max)
{
	return (wasm_memtype){lim(min, has_max, max)};
}

static wasm_tabletype tabletype(uint64_t min, bool has_max, uint64_t max)
{
	return (wasm_tabletype){WASM_FUNCREF, lim(min, has_max, max)};
}

static wasm_val i32_val(uint32_t v)
{
	wasm_val x;

	memset(&x, 0, sizeof x);
	x.type = WASM_I32;
	x.u.i32 = v;
	return x;
}

static int host_calls;

static wasm_host_status host_count(wasm_exec *e, void *env,
				   const wasm_val *args, wasm_val *results)
{
	host_calls++;
	return WASM_HOST_OK;
}

static wasm_host_status host_trap(wasm_exec *e, void *env, const wasm_val *args,
				  wasm_val *results)
{
	wasm_exec_set_host_trap(e, "boom");
	return WASM_HOST_TRAP;
}

/* ---- memories ----------------------------------------------------------- */

START_TEST(memory_grow_respects_type_max)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_memory *m = wasm_memory_new(s, memtype(1, true, 3));

	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(wasm_memory_size_bytes(m), WASM_PAGE_SIZE);
	ck_assert_uint_eq(m->max_pages, 3);
	ck_assert_int_eq(wasm_memory_grow(m, 0), 1);
	ck_assert_int_eq(wasm_memory_grow(m, 3), -1);
	ck_assert_uint_eq(wasm_memory_pages(m), 1);
	ck_assert_int_eq(wasm_memory_grow(m, 1), 1);
	ck_assert_int_eq(wasm_memory_grow(m, 1), 2);
	ck_assert_int_eq(wasm_memory_grow(m, 1), -1);
	ck_assert_int_eq(wasm_memory_grow(m, UINT64_MAX), -1);
	ck_assert_uint_eq(wasm_memory_size_bytes(m), 3 * WASM_PAGE_SIZE);
	wasm_store_free(s);
}
END_TEST

START_TEST(memory_grow_keeps_bytes_and_zeroes_new_ones)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_memory *m = wasm_memory_new(s, memtype(1, false, 0));
	uint8_t *d;
	uint64_t i;

	ck_assert_ptr_nonnull(m);
	memset(wasm_memory_data(m), 0xab, WASM_PAGE_SIZE);
	ck_assert_int_eq(wasm_memory_grow(m, 16), 1);
	d = wasm_memory_data(m); /* may have moved */
	for (i = 0; i < WASM_PAGE_SIZE; i++)
		ck_assert_uint_eq(d[i], 0xab);
	for (i = WASM_PAGE_SIZE; i < 17 * WASM_PAGE_SIZE; i += 4093)
		ck_assert_uint_eq(d[i], 0);
	ck_assert_uint_eq(d[17 * WASM_PAGE_SIZE - 1], 0);
	wasm_store_free(s);
}
END_TEST

START_TEST(memory_zero_pages_has_data)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_memory *m = wasm_memory_new(s, memtype(0, false, 0));

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(wasm_memory_data(m));
	ck_assert_uint_eq(wasm_memory_size_bytes(m), 0);
	ck_assert_int_eq(wasm_memory_grow(m, 1), 0);
	ck_assert_uint_eq(wasm_memory_data(m)[WASM_PAGE_SIZE - 1], 0);
	wasm_store_free(s);
}
END_TEST

START_TEST(memory_index_caps)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_memtype t64 = memtype(0, false, 0);
	wasm_memory *m32 = wasm_memory_new(s, memtype(0, false, 0));
	wasm_memory *m64;

	t64.limits.is64 = true;
	m64 = wasm_memory_new(s, t64);
	ck_assert_ptr_nonnull(m32);
	ck_assert_ptr_nonnull(m64);
	/* A 32-bit memory never passes 4 GiB; a 64-bit one may. */
	ck_assert_uint_eq(m32->max_pages, WASM_MAX_PAGES32);
	ck_assert_uint_gt(m64->max_pages, WASM_MAX_PAGES32);
	ck_assert_int_eq(wasm_memory_grow(m32, WASM_MAX_PAGES32 + 1), -1);
	ck_assert_uint_eq(wasm_memory_size_bytes(m32), 0);
	ck_assert(wasm_memory_type(m64)->limits.is64);
	wasm_store_free(s);
}
END_TEST

START_TEST(memory_store_limit_caps_growth_and_creation)
{
	wasm_store_limits l = {.max_memory_pages = 2};
	wasm_store *s = wasm_store_new(&l);
	wasm_memory *m = wasm_memory_new(s, memtype(1, true, 10));

	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->max_pages, 2);
	ck_assert_int_eq(wasm_memory_grow(m, 1), 1);
	ck_assert_int_eq(wasm_memory_grow(m, 1), -1);
	/* The type's own size is honoured; only growth beyond it fails. */
	ck_assert_ptr_null(wasm_memory_new(s, memtype(3, false, 0)));
	/* min > max is not a memory type. */
	ck_assert_ptr_null(wasm_memory_new(s, memtype(2, true, 1)));
	wasm_store_free(s);
}
END_TEST

/* ---- tables ------------------------------------------------------------- */

START_TEST(table_grow_fills_and_respects_limits)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_table_inst *t =
		wasm_table_new(s, tabletype(2, true, 5), wasm_ref_extern(7));
	uint64_t i;

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->size, 2);
	ck_assert_uint_eq(t->elems[0], wasm_ref_extern(7));
	ck_assert_uint_eq(t->elems[1], wasm_ref_extern(7));
	ck_assert_int_eq(wasm_table_grow(t, 3, wasm_ref_extern(9)), 2);
	for (i = 2; i < 5; i++)
		ck_assert_uint_eq(t->elems[i], wasm_ref_extern(9));
	ck_assert_uint_eq(t->elems[1], wasm_ref_extern(7));
	ck_assert_int_eq(wasm_table_grow(t, 1, WASM_REF_NULL), -1);
	ck_assert_int_eq(wasm_table_grow(t, 0, WASM_REF_NULL), 5);
	ck_assert_int_eq(wasm_table_grow(t, UINT64_MAX, WASM_REF_NULL), -1);
	ck_assert_uint_eq(t->size, 5);
	ck_assert_uint_eq(wasm_table_type(t)->limits.min, 2);
	wasm_store_free(s);
}
END_TEST

START_TEST(table_store_limit_and_empty)
{
	wasm_store_limits l = {.max_table_elems = 3};
	wasm_store *s = wasm_store_new(&l);
	wasm_table_inst *t = wasm_table_new(s, tabletype(0, false, 0), 0);
	int i;

	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(t->elems);
	ck_assert_uint_eq(t->max, 3);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(wasm_table_grow(t, 1, wasm_ref_extern(i)), i);
	ck_assert_int_eq(wasm_table_grow(t, 1, WASM_REF_NULL), -1);
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(t->elems[i], wasm_ref_extern(i));
	ck_assert_ptr_null(wasm_table_new(s, tabletype(4, false, 0), 0));
	wasm_store_free(s);
}
END_TEST

/* ---- references, types, globals, traps ---------------------------------- */

START_TEST(extern_refs_are_distinct_and_never_null)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_func *f = wasm_func_new_host(s, &TYPES[0], host_count, NULL);
	uint32_t n = 0;

	ck_assert_uint_ne(wasm_ref_extern(0), WASM_REF_NULL);
	ck_assert_uint_eq(wasm_ref_extern(5), wasm_ref_extern(5));
	ck_assert_uint_ne(wasm_ref_extern(5), wasm_ref_extern(6));
	ck_assert_uint_ne(wasm_ref_extern(0xffffffffu), wasm_ref_extern(0));
	ck_assert(wasm_ref_extern_number(wasm_ref_extern(0xffffffffu), &n));
	ck_assert_uint_eq(n, 0xffffffffu);
	ck_assert(wasm_ref_extern_number(wasm_ref_extern(0), &n));
	ck_assert_uint_eq(n, 0);
	ck_assert(!wasm_ref_extern_number(WASM_REF_NULL, &n));
	/* A funcref is never mistaken for a host reference. */
	ck_assert(!wasm_ref_extern_number((wasm_ref)f, &n));
	wasm_store_free(s);
}
END_TEST

START_TEST(functypes_intern_structurally)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_valtype p[2] = {WASM_I32, WASM_I64};
	wasm_valtype p2[2] = {WASM_I32, WASM_I64};
	wasm_functype a = {2, 1, p, VT_I32};
	wasm_functype b = {2, 1, p2, VT_I32};
	wasm_functype c = {1, 1, p, VT_I32};
	wasm_functype d = {2, 1, p, VT_I64};
	uint32_t ia, ib, ic, id, i;

	ia = wasm_store_intern_type(s, &a);
	ib = wasm_store_intern_type(s, &b);
	ic = wasm_store_intern_type(s, &c);
	id = wasm_store_intern_type(s, &d);
	ck_assert_uint_eq(ia, ib);
	ck_assert_uint_ne(ia, ic);
	ck_assert_uint_ne(ia, id);
	ck_assert_uint_ne(ic, id);
	/* [i32]->[] and []->[i32] differ. */
	ck_assert_uint_ne(wasm_store_intern_type(s, &TYPES[1]),
			  wasm_store_intern_type(s, &TYPES[2]));
	/* The store keeps its own copy. */
	p2[0] = WASM_F64;
	ck_assert_uint_eq(wasm_store_type(s, ia)->params[0], WASM_I32);
	ck_assert_uint_ne(wasm_store_intern_type(s, &b), ia);
	/* Many types: ids stay stable and distinct across hash growth. */
	for (i = 0; i < 300; i++) {
		wasm_valtype *vs = calloc(i + 1, sizeof *vs);
		wasm_functype t = {i + 1, 0, vs, NULL};
		uint32_t x;

		ck_assert_ptr_nonnull(vs);
		x = wasm_store_intern_type(s, &t);
		ck_assert_uint_eq(wasm_store_intern_type(s, &t), x);
		ck_assert_uint_eq(wasm_store_type(s, x)->nparams, i + 1);
		free(vs);
	}
	ck_assert_uint_eq(wasm_store_intern_type(s, &a), ia);
	wasm_store_free(s);
}
END_TEST

START_TEST(globals_hold_values)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_val v;
	wasm_global_inst *g;

	g = wasm_global_new(s, (wasm_globaltype){WASM_I32, true},
			    i32_val(0xdeadbeef));
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->slots[0], 0xdeadbeef);
	v = wasm_global_get(g);
	ck_assert_uint_eq(v.type, WASM_I32);
	ck_assert_uint_eq(v.u.i32, 0xdeadbeef);
	ck_assert(wasm_global_type(g)->mut);

	memset(&v, 0, sizeof v);
	v.type = WASM_V128;
	v.u.v128.lo = 1;
	v.u.v128.hi = 2;
	g = wasm_global_new(s, (wasm_globaltype){WASM_V128, false}, v);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->slots[0], 1);
	ck_assert_uint_eq(g->slots[1], 2);
	v = wasm_global_get(g);
	ck_assert_uint_eq(v.u.v128.hi, 2);

	memset(&v, 0, sizeof v);
	v.type = WASM_EXTERNREF;
	v.u.ref = wasm_ref_extern(3);
	g = wasm_global_new(s, (wasm_globaltype){WASM_EXTERNREF, false}, v);
	ck_assert_uint_eq(wasm_global_get(g).u.ref, wasm_ref_extern(3));
	wasm_store_free(s);
}
END_TEST

START_TEST(exceptions_copy_payload)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_tag *t = wasm_tag_new(s, &TYPES[1]);
	uint64_t payload[1] = {77}, work;
	wasm_exn *x;

	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->type->nparams, 1);
	x = wasm_exn_new(s, t, payload, 1, &work);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(work, 0); /* the first one collects nothing */
	payload[0] = 0;
	ck_assert_ptr_eq(x->tag, t);
	ck_assert_uint_eq(x->nslots, 1);
	ck_assert_uint_eq(x->slots[0], 77);
	ck_assert_uint_eq((uintptr_t)x & 1, 0);
	wasm_store_free(s);
}
END_TEST

START_TEST(trap_messages_are_spec_texts)
{
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_UNREACHABLE),
			 "unreachable");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_MEMORY_OOB),
			 "out of bounds memory access");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_TABLE_OOB),
			 "out of bounds table access");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_UNDEFINED_ELEMENT),
			 "undefined element");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_UNINITIALIZED_ELEMENT),
			 "uninitialized element");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_INDIRECT_CALL_TYPE),
			 "indirect call type mismatch");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_INT_DIV_ZERO),
			 "integer divide by zero");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_INT_OVERFLOW),
			 "integer overflow");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_INVALID_CONVERSION),
			 "invalid conversion to integer");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_NULL_REFERENCE),
			 "null reference");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_NULL_FUNCTION),
			 "null function reference");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_STACK_EXHAUSTED),
			 "call stack exhausted");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_OUT_OF_FUEL),
			 "out of fuel");
	ck_assert_str_eq(wasm_trap_message(WASM_TRAP_UNCAUGHT_EXCEPTION),
			 "thrown Wasm exception");
	ck_assert_ptr_nonnull(wasm_trap_message((wasm_trap_kind)999));
}
END_TEST

/* ---- linking ------------------------------------------------------------ */

/* A module importing one extern of each kind from "m". */
static wasm_import IMPORTS[5];

static wasm_module importing_module(void)
{
	wasm_module m = empty_module();

	memset(IMPORTS, 0, sizeof IMPORTS);
	IMPORTS[0].module = name_of("m", 1);
	IMPORTS[0].name = name_of("f", 1);
	IMPORTS[0].kind = WASM_EXTERN_FUNC;
	IMPORTS[0].u.func_typeidx = 1;
	IMPORTS[1].module = name_of("m", 1);
	IMPORTS[1].name = name_of("t", 1);
	IMPORTS[1].kind = WASM_EXTERN_TABLE;
	IMPORTS[1].u.table = tabletype(2, true, 10);
	IMPORTS[2].module = name_of("m", 1);
	IMPORTS[2].name = name_of("mem", 3);
	IMPORTS[2].kind = WASM_EXTERN_MEMORY;
	IMPORTS[2].u.memory = memtype(1, true, 4);
	IMPORTS[3].module = name_of("m", 1);
	IMPORTS[3].name = name_of("g", 1);
	IMPORTS[3].kind = WASM_EXTERN_GLOBAL;
	IMPORTS[3].u.global = (wasm_globaltype){WASM_I32, false};
	IMPORTS[4].module = name_of("m", 1);
	IMPORTS[4].name = name_of("tag", 3);
	IMPORTS[4].kind = WASM_EXTERN_TAG;
	IMPORTS[4].u.tag.typeidx = 1;
	m.nimports = 5;
	m.imports = IMPORTS;
	m.nimported_funcs = m.nimported_tables = m.nimported_memories = 1;
	m.nimported_globals = m.nimported_tags = 1;
	return m;
}

/* Externs that satisfy importing_module(). */
static void good_externs(wasm_store *s, wasm_extern *x)
{
	x[0].kind = WASM_EXTERN_FUNC;
	x[0].u.func = wasm_func_new_host(s, &TYPES[1], host_count, NULL);
	x[1].kind = WASM_EXTERN_TABLE;
	x[1].u.table = wasm_table_new(s, tabletype(3, true, 8), 0);
	x[2].kind = WASM_EXTERN_MEMORY;
	x[2].u.memory = wasm_memory_new(s, memtype(1, true, 4));
	x[3].kind = WASM_EXTERN_GLOBAL;
	x[3].u.global = wasm_global_new(s, (wasm_globaltype){WASM_I32, false},
					i32_val(5));
	x[4].kind = WASM_EXTERN_TAG;
	x[4].u.tag = wasm_tag_new(s, &TYPES[1]);
}

/* Instantiates importing_module() with x; returns the link error text. */
static const char *try_link(wasm_store *s, wasm_extern *x, uint32_t n,
			    wasm_error *err)
{
	wasm_module m = importing_module();
	wasm_instance *inst = NULL;
	wasm_trap_kind trap = WASM_TRAP_NONE;

	if (wasm_instantiate(s, &m, x, n, &inst, &trap, err) == 0) {
		ck_assert_ptr_nonnull(inst);
		return "";
	}
	ck_assert_ptr_null(inst);
	ck_assert_int_eq(trap, WASM_TRAP_NONE);
	ck_assert_int_eq(err->kind, WASM_ERR_LINK);
	return err->msg;
}

#define ck_link_fails(s, x, n, reason)                                         \
	do {                                                                   \
		wasm_error e_;                                                 \
		const char *m_ = try_link(s, x, n, &e_);                       \
		ck_assert_msg(strncmp(m_, reason, strlen(reason)) == 0,        \
			      "got \"%s\"", m_);                               \
	} while (0)

START_TEST(link_accepts_matching_imports)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern x[5];
	wasm_error err;

	good_externs(s, x);
	ck_assert_str_eq(try_link(s, x, 5, &err), "");
	/* Memory at its max, a table whose max is below the import's. */
	x[2].u.memory = wasm_memory_new(s, memtype(4, true, 4));
	x[1].u.table = wasm_table_new(s, tabletype(10, true, 10), 0);
	ck_assert_str_eq(try_link(s, x, 5, &err), "");
	wasm_store_free(s);
}
END_TEST

START_TEST(link_unknown_import)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern x[5];

	good_externs(s, x);
	ck_link_fails(s, x, 4, "unknown import");
	ck_link_fails(s, NULL, 0, "unknown import");
	x[3].u.global = NULL;
	ck_link_fails(s, x, 5, "unknown import");
	wasm_store_free(s);
}
END_TEST

START_TEST(link_kind_mismatch)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern x[5], t;

	good_externs(s, x);
	t = x[0];
	x[0] = x[3]; /* a global where a function is expected */
	ck_link_fails(s, x, 5, "incompatible import type");
	x[0] = t;
	x[2] = x[1]; /* a table where a memory is expected */
	ck_link_fails(s, x, 5, "incompatible import type");
	wasm_store_free(s);
}
END_TEST

START_TEST(link_func_and_tag_types)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern x[5];

	good_externs(s, x);
	x[0].u.func = wasm_func_new_host(s, &TYPES[2], host_count, NULL);
	ck_link_fails(s, x, 5, "incompatible import type");
	good_externs(s, x);
	x[4].u.tag = wasm_tag_new(s, &TYPES[0]);
	ck_link_fails(s, x, 5, "incompatible import type");
	wasm_store_free(s);
}
END_TEST

START_TEST(link_table_limits)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern x[5];
	wasm_tabletype et = tabletype(3, true, 8);
	wasm_tabletype t64 = tabletype(3, true, 8);
	wasm_error err;

	good_externs(s, x);
	x[1].u.table = wasm_table_new(s, tabletype(1, true, 8), 0);
	ck_link_fails(s, x, 5, "incompatible import type"); /* min < 2 */
	x[1].u.table = wasm_table_new(s, tabletype(3, false, 0), 0);
	ck_link_fails(s, x, 5, "incompatible import type"); /* no max */
	x[1].u.table = wasm_table_new(s, tabletype(3, true, 11), 0);
	ck_link_fails(s, x, 5, "incompatible import type"); /* max > 10 */
	et.elem = WASM_EXTERNREF;
	x[1].u.table = wasm_table_new(s, et, 0);
	ck_link_fails(s, x, 5, "incompatible import type"); /* elem type */
	t64.limits.is64 = true;
	x[1].u.table = wasm_table_new(s, t64, 0);
	ck_link_fails(s, x, 5, "incompatible import type"); /* index type */
	/* The current size counts, not the declared min. */
	x[1].u.table = wasm_table_new(s, tabletype(1, true, 8), 0);
	ck_assert_int_eq(wasm_table_grow(x[1].u.table, 1, 0), 1);
	ck_assert_str_eq(try_link(s, x, 5, &err), "");
	wasm_store_free(s);
}
END_TEST

START_TEST(link_memory_limits)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern x[5];
	wasm_memtype t64 = memtype(1, true, 4);
	wasm_error err;

	good_externs(s, x);
	x[2].u.memory = wasm_memory_new(s, memtype(0, true, 4));
	ck_link_fails(s, x, 5, "incompatible import type"); /* min < 1 */
	ck_assert_int_eq(wasm_memory_grow(x[2].u.memory, 1), 0);
	ck_assert_str_eq(try_link(s, x, 5, &err), ""); /* grown: fits */
	x[2].u.memory = wasm_memory_new(s, memtype(1, false, 0));
	ck_link_fails(s, x, 5, "incompatible import type"); /* no max */
	x[2].u.memory = wasm_memory_new(s, memtype(1, true, 5));
	ck_link_fails(s, x, 5, "incompatible import type"); /* max > 4 */
	t64.limits.is64 = true;
	x[2].u.memory = wasm_memory_new(s, t64);
	ck_link_fails(s, x, 5, "incompatible import type"); /* index type */
	wasm_store_free(s);
}
END_TEST

START_TEST(link_global_types)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern x[5];
	wasm_val v;

	good_externs(s, x);
	x[3].u.global = wasm_global_new(s, (wasm_globaltype){WASM_I32, true},
					i32_val(5));
	ck_link_fails(s, x, 5, "incompatible import type"); /* mutability */
	memset(&v, 0, sizeof v);
	v.type = WASM_I64;
	x[3].u.global =
		wasm_global_new(s, (wasm_globaltype){WASM_I64, false}, v);
	ck_link_fails(s, x, 5, "incompatible import type"); /* type */
	wasm_store_free(s);
}
END_TEST

START_TEST(link_error_names_the_import)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern x[5];
	wasm_error err;

	good_externs(s, x);
	x[2] = x[1];
	try_link(s, x, 5, &err);
	ck_assert_str_eq(err.msg, "incompatible import type: \"m\" \"mem\"");
	ck_assert_uint_eq(err.offset, WASM_NO_OFFSET);
	wasm_store_free(s);
}
END_TEST

/* ---- instantiation ------------------------------------------------------ */

START_TEST(globals_evaluate_in_order)
{
	/*
	 * g1 = imported + 1; g2 = g1 * g1 - 2; g3 = -1 - 3 (i64);
	 * g4 = ref.func 0; g5 = ref.null extern
	 */
	static const uint8_t g1[] = {0x23, 0x00, 0x41, 0x01, 0x6a, 0x0b};
	static const uint8_t g2[] = {0x23, 0x01, 0x23, 0x01, 0x6c,
				     0x41, 0x02, 0x6b, 0x0b};
	static const uint8_t g3[] = {0x42, 0x7f, 0x42, 0x03, 0x7d, 0x0b};
	static const uint8_t g4[] = {0xd2, 0x00, 0x0b};
	static const uint8_t g5[] = {0xd0, 0x6f, 0x0b};
	wasm_module m = empty_module();
	wasm_import im;
	wasm_global gs[5];
	wasm_export ex[5];
	uint32_t ft[1] = {0};
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern x, out;
	wasm_instance *inst;
	wasm_trap_kind trap;
	wasm_error err;

	memset(&im, 0, sizeof im);
	im.module = name_of("m", 1);
	im.name = name_of("g", 1);
	im.kind = WASM_EXTERN_GLOBAL;
	im.u.global = (wasm_globaltype){WASM_I32, false};
	m.nimports = 1;
	m.imports = &im;
	m.nimported_globals = 1;
	m.nfuncs = 1;
	m.func_types = ft;
	gs[0] = (wasm_global){{WASM_I32, false}, CE(g1)};
	gs[1] = (wasm_global){{WASM_I32, true}, CE(g2)};
	gs[2] = (wasm_global){{WASM_I64, false}, CE(g3)};
	gs[3] = (wasm_global){{WASM_FUNCREF, false}, CE(g4)};
	gs[4] = (wasm_global){{WASM_EXTERNREF, false}, CE(g5)};
	m.nglobals = 5;
	m.globals = gs;
	ex[0] = (wasm_export){name_of("g1", 2), WASM_EXTERN_GLOBAL, 1};
	ex[1] = (wasm_export){name_of("g2", 2), WASM_EXTERN_GLOBAL, 2};
	ex[2] = (wasm_export){name_of("g3", 2), WASM_EXTERN_GLOBAL, 3};
	ex[3] = (wasm_export){name_of("g4", 2), WASM_EXTERN_GLOBAL, 4};
	ex[4] = (wasm_export){name_of("f", 1), WASM_EXTERN_FUNC, 0};
	m.nexports = 5;
	m.exports = ex;

	x.kind = WASM_EXTERN_GLOBAL;
	x.u.global = wasm_global_new(s, (wasm_globaltype){WASM_I32, false},
				     i32_val(41));
	ck_assert_int_eq(wasm_instantiate(s, &m, &x, 1, &inst, &trap, &err), 0);
	ck_assert_int_eq(err.kind, WASM_ERR_NONE);
	ck_assert(wasm_instance_export(inst, (const uint8_t *)"g1", 2, &out));
	ck_assert_int_eq(out.kind, WASM_EXTERN_GLOBAL);
	ck_assert_uint_eq(wasm_global_get(out.u.global).u.i32, 42);
	ck_assert(wasm_instance_export(inst, (const uint8_t *)"g2", 2, &out));
	ck_assert_uint_eq(wasm_global_get(out.u.global).u.i32, 42 * 42 - 2);
	ck_assert(wasm_global_type(out.u.global)->mut);
	ck_assert(wasm_instance_export(inst, (const uint8_t *)"g3", 2, &out));
	ck_assert_uint_eq(wasm_global_get(out.u.global).u.i64, (uint64_t)-4);
	ck_assert(wasm_instance_export(inst, (const uint8_t *)"g4", 2, &out));
	ck_assert_uint_eq(wasm_global_get(out.u.global).u.ref,
			  (wasm_ref)inst->funcs[0]);
	ck_assert_uint_eq(inst->globals[5]->slots[0], 0);
	ck_assert(wasm_instance_export(inst, (const uint8_t *)"f", 1, &out));
	ck_assert_int_eq(out.kind, WASM_EXTERN_FUNC);
	ck_assert_ptr_eq(out.u.func, inst->funcs[0]);
	ck_assert_int_eq(out.u.func->kind, WASM_FUNC_WASM);
	ck_assert_ptr_eq(out.u.func->u.wasm.inst, inst);
	ck_assert_uint_eq(out.u.func->type_id, inst->type_ids[0]);
	ck_assert_uint_eq(wasm_func_type(out.u.func)->nparams, 0);
	wasm_store_free(s);
}
END_TEST

START_TEST(exports_with_odd_names)
{
	static const char *names[] = {"",  "a",	 "a\0b", "\xff", "ab",
				      "b", "\0", "\0\0", "aa",	 "ba"};
	static const uint32_t lens[] = {0, 1, 3, 1, 2, 1, 1, 2, 2, 2};
	enum { N = 10 };
	wasm_module m = empty_module();
	wasm_global g = {{WASM_I32, false}, CE(I32_0)};
	wasm_export ex[N];
	wasm_store *s = wasm_store_new(NULL);
	wasm_instance *inst;
	wasm_extern out;
	wasm_trap_kind trap;
	wasm_error err;
	uint32_t i;

	m.nglobals = 1;
	m.globals = &g;
	for (i = 0; i < N; i++)
		ex[i] = (wasm_export){name_of(names[i], lens[i]),
				      WASM_EXTERN_GLOBAL, 0};
	m.nexports = N;
	m.exports = ex;
	ck_assert_int_eq(wasm_instantiate(s, &m, NULL, 0, &inst, &trap, &err),
			 0);
	for (i = 0; i < N; i++) {
		ck_assert_msg(wasm_instance_export(inst,
						   (const uint8_t *)names[i],
						   lens[i], &out),
			      "export %u", i);
		ck_assert_ptr_eq(out.u.global, inst->globals[0]);
	}
	/* Sorted by bytes, shorter first on a common prefix. */
	for (i = 1; i < N; i++) {
		const wasm_name *a = &ex[inst->export_order[i - 1]].name;
		const wasm_name *b = &ex[inst->export_order[i]].name;
		uint32_t n = a->len < b->len ? a->len : b->len;
		int c = n ? memcmp(a->ptr, b->ptr, n) : 0;

		ck_assert(c < 0 || (c == 0 && a->len < b->len));
	}
	ck_assert(!wasm_instance_export(inst, (const uint8_t *)"a\0", 2, &out));
	ck_assert(!wasm_instance_export(inst, (const uint8_t *)"c", 1, &out));
	ck_assert(!wasm_instance_export(inst, (const uint8_t *)"\0\0\0", 3,
					&out));
	wasm_store_free(s);
}
END_TEST

/*
 * A module with an imported table (2 slots) and memory (1 page), one
 * function, and segments:
 *   elem 0: active at `e0` [func 0]       elem 1: passive [func 0, 0]
 *   elem 2: declarative [func 0]          elem 3: active at `e3`, e3count
 *                                         times [func 0]
 *   data 0: active at 0 "abc"             data 1: active at `d1` "xyz"
 *   data 2: passive "p"
 */
typedef struct seg_fixture {
	wasm_module m;
	wasm_import im[2];
	uint32_t ft[1];
	uint32_t funcs1[1], funcs2[2];
	wasm_elem elems[4];
	wasm_data datas[3];
	wasm_store *s;
	wasm_extern x[2];
	wasm_instance *inst;
	wasm_trap_kind trap;
	wasm_error err;
} seg_fixture;

static int seg_run(seg_fixture *f, wasm_constexpr e0, wasm_constexpr e3,
		   uint32_t e3count, wasm_constexpr d1)
{
	memset(f, 0, sizeof *f);
	f->m = empty_module();
	f->im[0].module = name_of("m", 1);
	f->im[0].name = name_of("t", 1);
	f->im[0].kind = WASM_EXTERN_TABLE;
	f->im[0].u.table = tabletype(2, false, 0);
	f->im[1].module = name_of("m", 1);
	f->im[1].name = name_of("mem", 3);
	f->im[1].kind = WASM_EXTERN_MEMORY;
	f->im[1].u.memory = memtype(1, false, 0);
	f->m.nimports = 2;
	f->m.imports = f->im;
	f->m.nimported_tables = f->m.nimported_memories = 1;
	f->m.nfuncs = 1;
	f->m.func_types = f->ft;
	f->elems[0] = (wasm_elem){WASM_SEG_ACTIVE, 0,	e0, WASM_FUNCREF, 1,
				  f->funcs1,	   NULL};
	f->elems[1] = (wasm_elem){WASM_SEG_PASSIVE, 0,	 {0}, WASM_FUNCREF, 2,
				  f->funcs2,	    NULL};
	f->elems[2] = (wasm_elem){
		WASM_SEG_DECLARATIVE, 0, {0}, WASM_FUNCREF, 1, f->funcs1, NULL};
	f->elems[3] = (wasm_elem){WASM_SEG_ACTIVE, 0,	      e3,  WASM_FUNCREF,
				  e3count,	   f->funcs1, NULL};
	f->m.nelems = 4;
	f->m.elems = f->elems;
	f->datas[0] = (wasm_data){WASM_SEG_ACTIVE, 0, CE(I32_0),
				  (const uint8_t *)"abc", 3};
	f->datas[1] =
		(wasm_data){WASM_SEG_ACTIVE, 0, d1, (const uint8_t *)"xyz", 3};
	f->datas[2] =
		(wasm_data){WASM_SEG_PASSIVE, 0, {0}, (const uint8_t *)"p", 1};
	f->m.ndatas = 3;
	f->m.datas = f->datas;
	f->s = wasm_store_new(NULL);
	f->x[0].kind = WASM_EXTERN_TABLE;
	f->x[0].u.table = wasm_table_new(f->s, tabletype(2, false, 0), 0);
	f->x[1].kind = WASM_EXTERN_MEMORY;
	f->x[1].u.memory = wasm_memory_new(f->s, memtype(1, false, 0));
	return wasm_instantiate(f->s, &f->m, f->x, 2, &f->inst, &f->trap,
				&f->err);
}

START_TEST(segments_apply_in_order_and_drop)
{
	seg_fixture f;
	wasm_table_inst *t;
	const uint8_t *mem;

	ck_assert_int_eq(seg_run(&f, CE(I32_1), CE(I32_0), 1, CE(I32_3)), 0);
	t = f.x[0].u.table;
	mem = f.x[1].u.memory->data;
	/* elem 3 ran after elem 0 */
	ck_assert_uint_eq(t->elems[0], (wasm_ref)f.inst->funcs[0]);
	ck_assert_uint_eq(t->elems[1], (wasm_ref)f.inst->funcs[0]);
	ck_assert_mem_eq(mem, "abcxyz", 6);
	/* active and declarative dropped, passive kept */
	ck_assert_uint_eq(f.inst->elems[0].len, 0);
	ck_assert_uint_eq(f.inst->elems[1].len, 2);
	ck_assert_uint_eq(f.inst->elems[1].refs[1], (wasm_ref)f.inst->funcs[0]);
	ck_assert_uint_eq(f.inst->elems[2].len, 0);
	ck_assert_uint_eq(f.inst->elems[3].len, 0);
	ck_assert_uint_eq(f.inst->datas[0].len, 0);
	ck_assert_uint_eq(f.inst->datas[1].len, 0);
	ck_assert_uint_eq(f.inst->datas[2].len, 1);
	ck_assert_int_eq(f.inst->datas[2].bytes[0], 'p');
	wasm_store_free(f.s);
}
END_TEST

START_TEST(elem_trap_keeps_earlier_effects)
{
	seg_fixture f;
	wasm_table_inst *t;

	/* elem 3 at 2 does not fit a table of 2: trap, no data applied */
	ck_assert_int_eq(seg_run(&f, CE(I32_1), CE(I32_2), 1, CE(I32_3)), -1);
	ck_assert_int_eq(f.trap, WASM_TRAP_TABLE_OOB);
	ck_assert_int_eq(f.err.kind, WASM_ERR_NONE);
	ck_assert_ptr_null(f.inst);
	t = f.x[0].u.table;
	ck_assert_uint_eq(t->elems[0], WASM_REF_NULL);
	/* elem 0's function stays valid: the store still owns it */
	ck_assert_uint_ne(t->elems[1], WASM_REF_NULL);
	ck_assert_uint_eq(wasm_func_type((wasm_func *)t->elems[1])->nparams, 0);
	ck_assert_uint_eq(f.x[1].u.memory->data[0], 0);
	wasm_store_free(f.s);
}
END_TEST

START_TEST(empty_segment_out_of_bounds_traps)
{
	static const uint8_t i32_65537[] = {0x41, 0x81, 0x80, 0x04, 0x0b};
	seg_fixture f;

	/* An empty active segment past the end still traps (table.init). */
	ck_assert_int_eq(seg_run(&f, CE(I32_1), CE(I32_3), 0, CE(I32_3)), -1);
	ck_assert_int_eq(f.trap, WASM_TRAP_TABLE_OOB);
	ck_assert_uint_ne(f.x[0].u.table->elems[1], WASM_REF_NULL);
	wasm_store_free(f.s);
	/* ... while one exactly at the end fits. */
	ck_assert_int_eq(seg_run(&f, CE(I32_1), CE(I32_2), 0, CE(I32_3)), 0);
	wasm_store_free(f.s);
	/* elem 0 with 1 element at 2 of 2: out of bounds */
	ck_assert_int_eq(seg_run(&f, CE(I32_2), CE(I32_0), 1, CE(I32_3)), -1);
	ck_assert_int_eq(f.trap, WASM_TRAP_TABLE_OOB);
	ck_assert_uint_eq(f.x[0].u.table->elems[0], WASM_REF_NULL);
	wasm_store_free(f.s);
	/* data past the end of memory */
	ck_assert_int_eq(seg_run(&f, CE(I32_0), CE(I32_1), 1, CE(i32_65537)),
			 -1);
	ck_assert_int_eq(f.trap, WASM_TRAP_MEMORY_OOB);
	wasm_store_free(f.s);
}
END_TEST

START_TEST(data_trap_keeps_earlier_effects)
{
	seg_fixture f;

	/* data 1 at 65534 with 3 bytes overruns the page by one */
	ck_assert_int_eq(seg_run(&f, CE(I32_0), CE(I32_1), 1, CE(I32_65534)),
			 -1);
	ck_assert_int_eq(f.trap, WASM_TRAP_MEMORY_OOB);
	ck_assert_int_eq(f.err.kind, WASM_ERR_NONE);
	/* elements and data 0 were applied; data 1 wrote nothing */
	ck_assert_uint_ne(f.x[0].u.table->elems[0], WASM_REF_NULL);
	ck_assert_uint_ne(f.x[0].u.table->elems[1], WASM_REF_NULL);
	ck_assert_mem_eq(f.x[1].u.memory->data, "abc", 3);
	ck_assert_uint_eq(f.x[1].u.memory->data[65534], 0);
	ck_assert_uint_eq(f.x[1].u.memory->data[65535], 0);
	wasm_store_free(f.s);
}
END_TEST

START_TEST(defined_tables_memories_and_tags)
{
	/* table 0: 3 x (ref.func 0); elem via expressions with a null */
	static const uint8_t rf0[] = {0xd2, 0x00, 0x0b};
	static const uint8_t rnull[] = {0xd0, 0x70, 0x0b};
	static const uint8_t i64_1[] = {0x42, 0x01, 0x0b};
	wasm_module m = empty_module();
	wasm_table tabs[2];
	wasm_memtype mems[2];
	wasm_tagtype tags[1] = {{1}};
	wasm_constexpr exprs[2] = {CE(rnull), CE(rf0)};
	wasm_elem el = {
		WASM_SEG_ACTIVE, 1, CE(I32_1), WASM_FUNCREF, 2, NULL, exprs};
	wasm_data d = {WASM_SEG_ACTIVE, 1, CE(i64_1), (const uint8_t *)"hi", 2};
	uint32_t ft[1] = {2};
	wasm_store *s = wasm_store_new(NULL);
	wasm_instance *inst;
	wasm_trap_kind trap;
	wasm_error err;

	memset(tabs, 0, sizeof tabs);
	tabs[0].type = tabletype(3, false, 0);
	tabs[0].has_init = true;
	tabs[0].init = CE(rf0);
	tabs[1].type = tabletype(4, true, 4);
	mems[0] = memtype(0, false, 0);
	mems[1] = memtype(1, true, 1);
	mems[1].limits.is64 = true;
	m.nfuncs = 1;
	m.func_types = ft;
	m.ntables = 2;
	m.tables = tabs;
	m.nmemories = 2;
	m.memories = mems;
	m.ntags = 1;
	m.tags = tags;
	m.nelems = 1;
	m.elems = &el;
	m.ndatas = 1;
	m.datas = &d;
	ck_assert_int_eq(wasm_instantiate(s, &m, NULL, 0, &inst, &trap, &err),
			 0);
	ck_assert_uint_eq(inst->tables[0]->size, 3);
	ck_assert_uint_eq(inst->tables[0]->elems[2], (wasm_ref)inst->funcs[0]);
	ck_assert_uint_eq(inst->tables[1]->elems[0], 0);
	ck_assert_uint_eq(inst->tables[1]->elems[1], 0);
	ck_assert_uint_eq(inst->tables[1]->elems[2], (wasm_ref)inst->funcs[0]);
	ck_assert_uint_eq(inst->tables[1]->elems[3], 0);
	ck_assert_uint_eq(inst->memories[0]->size, 0);
	ck_assert_mem_eq(inst->memories[1]->data + 1, "hi", 2);
	ck_assert_uint_eq(inst->tags[0]->type_id, inst->type_ids[1]);
	ck_assert_uint_eq(wasm_func_type(inst->funcs[0])->nresults, 1);
	wasm_store_free(s);
}
END_TEST

START_TEST(store_limit_fails_instantiation)
{
	wasm_store_limits l = {.max_memory_pages = 1};
	wasm_module m = empty_module();
	wasm_memtype mem = memtype(2, false, 0);
	wasm_store *s = wasm_store_new(&l);
	wasm_instance *inst;
	wasm_trap_kind trap;
	wasm_error err;

	m.nmemories = 1;
	m.memories = &mem;
	ck_assert_int_eq(wasm_instantiate(s, &m, NULL, 0, &inst, &trap, &err),
			 -1);
	ck_assert_int_eq(err.kind, WASM_ERR_RESOURCE);
	ck_assert_ptr_null(inst);
	m.validated = false;
	ck_assert_int_eq(wasm_instantiate(s, &m, NULL, 0, &inst, &trap, &err),
			 -1);
	ck_assert_int_eq(err.kind, WASM_ERR_INVALID);
	wasm_store_free(s);
}
END_TEST

START_TEST(malformed_constexpr_is_an_error)
{
	static const uint8_t bad_op[] = {0x20, 0x00, 0x0b}; /* local.get */
	static const uint8_t no_end[] = {0x41, 0x00};	    /* missing end */
	static const uint8_t two[] = {0x41, 0x00, 0x41, 0x00, 0x0b};
	static const uint8_t fwd[] = {0x23, 0x01, 0x0b}; /* later global */
	static const uint8_t cut_leb[] = {0x41, 0x80};
	const wasm_constexpr cases[] = {CE(bad_op), CE(no_end), CE(two),
					CE(fwd), CE(cut_leb)};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		wasm_module m = empty_module();
		wasm_global gs[2] = {{{WASM_I32, false}, cases[i]},
				     {{WASM_I32, false}, CE(I32_0)}};
		wasm_store *s = wasm_store_new(NULL);
		wasm_instance *inst;
		wasm_trap_kind trap;
		wasm_error err;

		m.nglobals = 2;
		m.globals = gs;
		ck_assert_int_eq(
			wasm_instantiate(s, &m, NULL, 0, &inst, &trap, &err),
			-1);
		ck_assert_int_eq(err.kind, WASM_ERR_INVALID);
		ck_assert_int_eq(trap, WASM_TRAP_NONE);
		wasm_store_free(s);
	}
}
END_TEST

/* ---- start function (needs the interpreter's exec) ---------------------- */

START_TEST(start_function_runs)
{
	wasm_module m = empty_module();
	wasm_import im;
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern x;
	wasm_instance *inst;
	wasm_trap_kind trap;
	wasm_error err;

	memset(&im, 0, sizeof im);
	im.module = name_of("m", 1);
	im.name = name_of("f", 1);
	im.kind = WASM_EXTERN_FUNC;
	im.u.func_typeidx = 0;
	m.nimports = 1;
	m.imports = &im;
	m.nimported_funcs = 1;
	m.has_start = true;
	m.start = 0;
	x.kind = WASM_EXTERN_FUNC;
	x.u.func = wasm_func_new_host(s, &TYPES[0], host_count, NULL);
	host_calls = 0;
	ck_assert_int_eq(wasm_instantiate(s, &m, &x, 1, &inst, &trap, &err), 0);
	ck_assert_int_eq(host_calls, 1);

	x.u.func = wasm_func_new_host(s, &TYPES[0], host_trap, NULL);
	ck_assert_int_eq(wasm_instantiate(s, &m, &x, 1, &inst, &trap, &err),
			 -1);
	ck_assert_int_eq(err.kind, WASM_ERR_NONE);
	ck_assert_int_eq(trap, WASM_TRAP_HOST);
	ck_assert_ptr_null(inst);
	wasm_store_free(s);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("store");
	TCase *objs = tcase_create("objects");
	TCase *link = tcase_create("link");
	TCase *inst = tcase_create("instantiate");

	tcase_add_test(objs, memory_grow_respects_type_max);
	tcase_add_test(objs, memory_grow_keeps_bytes_and_zeroes_new_ones);
	tcase_add_test(objs, memory_zero_pages_has_data);
	tcase_add_test(objs, memory_index_caps);
	tcase_add_test(objs, memory_store_limit_caps_growth_and_creation);
	tcase_add_test(objs, table_grow_fills_and_respects_limits);
	tcase_add_test(objs, table_store_limit_and_empty);
	tcase_add_test(objs, extern_refs_are_distinct_and_never_null);
	tcase_add_test(objs, functypes_intern_structurally);
	tcase_add_test(objs, globals_hold_values);
	tcase_add_test(objs, exceptions_copy_payload);
	tcase_add_test(objs, trap_messages_are_spec_texts);
	suite_add_tcase(s, objs);

	tcase_add_test(link, link_accepts_matching_imports);
	tcase_add_test(link, link_unknown_import);
	tcase_add_test(link, link_kind_mismatch);
	tcase_add_test(link, link_func_and_tag_types);
	tcase_add_test(link, link_table_limits);
	tcase_add_test(link, link_memory_limits);
	tcase_add_test(link, link_global_types);
	tcase_add_test(link, link_error_names_the_import);
	suite_add_tcase(s, link);

	tcase_add_test(inst, globals_evaluate_in_order);
	tcase_add_test(inst, exports_with_odd_names);
	tcase_add_test(inst, segments_apply_in_order_and_drop);
	tcase_add_test(inst, elem_trap_keeps_earlier_effects);
	tcase_add_test(inst, empty_segment_out_of_bounds_traps);
	tcase_add_test(inst, data_trap_keeps_earlier_effects);
	tcase_add_test(inst, defined_tables_memories_and_tags);
	tcase_add_test(inst, store_limit_fails_instantiation);
	tcase_add_test(inst, malformed_constexpr_is_an_error);
	tcase_add_test(inst, start_function_runs);
	suite_add_tcase(s, inst);
	return s;
}
