/*
 * test_component_decode.c - the Component Model front end
 * (runtime/component: decoder, validator, types, names, subtyping, WIT).
 *
 * Hand-assembled components exercise decoding, each error class
 * (malformed vs invalid, with wasmparser's texts), the cached ABI facts
 * and flattening, the import/export name grammar (accept/reject tables),
 * instantiation subtyping with resources, and the WIT printer.  Every
 * prefix of several valid components must load or fail cleanly (never
 * crash), and so must byte-flipped variants.  When the shared suite is
 * present ($HOSTEL_SHARED/cm-testsuite), every one of its component
 * binaries is truncated the same way.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component/component.h"
#include "component/wit.h"
#include "testmain.h"

/* ---- a tiny component builder ----------------------------------------- */

typedef struct buf {
	uint8_t d[8192];
	size_t n;
} buf;

static void put(buf *b, const void *p, size_t n)
{
	ck_assert_uint_le(b->n + n, sizeof b->d);
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

#define PUT(b, ...)                                                            \
	do {                                                                   \
		static const uint8_t bytes_[] = {__VA_ARGS__};                 \
		put((b), bytes_, sizeof bytes_);                               \
	} while (0)

static void leb(buf *b, uint32_t v)
{
	do {
		uint8_t c = v & 0x7f;

		v >>= 7;
		if (v)
			c |= 0x80;
		put(b, &c, 1);
	} while (v);
}

static void name(buf *b, const char *s)
{
	leb(b, (uint32_t)strlen(s));
	put(b, s, strlen(s));
}

static void preamble(buf *b)
{
	b->n = 0;
	PUT(b, 0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00);
}

/* A section with id and the contents of `body`. */
static void section(buf *b, uint8_t id, const buf *body)
{
	put(b, &id, 1);
	leb(b, (uint32_t)body->n);
	put(b, body->d, body->n);
}

/* ---- helpers ---------------------------------------------------------- */

static int load(const buf *b, cm_component **c, wasm_error *e)
{
	memset(e, 0, sizeof *e);
	return cm_component_load(b->d, b->n, c, e);
}

static void expect_ok(const buf *b)
{
	cm_component *c;
	wasm_error e;

	if (load(b, &c, &e))
		ck_abort_msg("expected to load; got %s", e.msg);
	cm_component_free(c);
}

static void expect_err(const buf *b, wasm_error_kind kind, const char *text)
{
	cm_component *c;
	wasm_error e;

	if (load(b, &c, &e) == 0) {
		cm_component_free(c);
		ck_abort_msg("expected \"%s\"; it loaded", text);
	}
	ck_assert_int_eq(e.kind, kind);
	if (strstr(e.msg, text) == NULL)
		ck_abort_msg("expected \"%s\"; got \"%s\"", text, e.msg);
}

/* One type section holding the given deftype bytes. */
static void one_type(buf *b, const uint8_t *t, size_t n)
{
	buf s = {.n = 0};

	preamble(b);
	PUT(&s, 0x01);
	put(&s, t, n);
	section(b, 7, &s);
}

/* `(type (func))` then `(import NAME (func (type 0)))`. */
static void import_func(buf *b, const char *nm)
{
	buf s = {.n = 0};

	preamble(b);
	PUT(&s, 0x01, 0x40, 0x00, 0x01, 0x00);
	section(b, 7, &s);
	s.n = 0;
	PUT(&s, 0x01, 0x00);
	name(&s, nm);
	PUT(&s, 0x01, 0x00);
	section(b, 10, &s);
}

/* ---- decoding ----------------------------------------------------------- */

START_TEST(empty_component)
{
	buf b;
	cm_component *c;
	wasm_error e;

	preamble(&b);
	ck_assert_int_eq(load(&b, &c, &e), 0);
	ck_assert_uint_eq(cm_component_nimports(c), 0);
	ck_assert_uint_eq(cm_component_nexports(c), 0);
	ck_assert_int_eq(cm_component_type(c)->kind, CM_COMPONENT);
	cm_component_free(c);
	ck_assert(cm_is_component_binary(b.d, b.n));
	ck_assert(!cm_is_component_binary(b.d, 7));
}
END_TEST

START_TEST(import_of_a_function)
{
	buf b;
	cm_component *c;
	wasm_error e;
	const cm_import *im;

	import_func(&b, "log");
	ck_assert_int_eq(load(&b, &c, &e), 0);
	ck_assert_uint_eq(cm_component_nimports(c), 1);
	im = cm_component_import(c, 0);
	ck_assert_str_eq(im->name.str.ptr, "log");
	ck_assert_int_eq(im->name.kind, CM_NAME_LABEL);
	ck_assert_int_eq(im->type.sort, CM_SORT_FUNC);
	ck_assert_int_eq(im->type.type->kind, CM_FUNC);
	ck_assert_uint_eq(im->type.type->u.func.nparams, 0);
	ck_assert_ptr_null(im->type.type->u.func.result);
	ck_assert_uint_eq(im->index, 0);
	ck_assert_uint_eq(c->spaces[CM_SORT_FUNC].n, 1);
	ck_assert_int_eq(c->spaces[CM_SORT_FUNC].items[0].origin,
			 CM_ORIGIN_IMPORT);
	ck_assert_ptr_null(cm_component_import(c, 1));
	cm_component_free(c);
}
END_TEST

/* The layout facts of digest 2.4 / 2.10 on decoded types. */
START_TEST(abi_facts)
{
	buf b, s = {.n = 0};
	cm_component *c;
	wasm_error e;
	const cm_type *t;
	wasm_valtype flat[8];

	preamble(&b);
	PUT(&s, 0x05);
	/* 0: record { a: u8, b: u32 } */
	PUT(&s, 0x72, 0x02, 0x01, 'a', 0x7d, 0x01, 'b', 0x79);
	/* 1: variant { f(f32), l(u64) } */
	PUT(&s, 0x71, 0x02, 0x01, 'f', 0x01, 0x76, 0x00, 0x01, 'l', 0x01, 0x77,
	    0x00);
	/* 2: option<u64> */
	PUT(&s, 0x6b, 0x77);
	/* 3: flags with 9 labels */
	PUT(&s, 0x6e, 0x09, 0x01, 'a', 0x01, 'b', 0x01, 'c', 0x01, 'd', 0x01,
	    'e', 0x01, 'f', 0x01, 'g', 0x01, 'h', 0x01, 'i');
	/* 4: list<u8, 3> */
	PUT(&s, 0x67, 0x7d, 0x03);
	section(&b, 7, &s);
	ck_assert_int_eq(load(&b, &c, &e), 0);
	ck_assert_uint_eq(c->spaces[CM_SORT_TYPE].n, 5);

	t = c->spaces[CM_SORT_TYPE].items[0].t.type;
	ck_assert_uint_eq(cm_alignment(t, false), 4);
	ck_assert_uint_eq(cm_elem_size(t, false), 8);
	ck_assert_uint_eq(cm_flat_count(t), 2);

	t = c->spaces[CM_SORT_TYPE].items[1].t.type;
	ck_assert_uint_eq(cm_alignment(t, false), 8);
	ck_assert_uint_eq(cm_elem_size(t, false), 16);
	ck_assert_uint_eq(cm_flatten(t, false, flat, 8), 2);
	ck_assert_uint_eq(flat[0], WASM_I32);
	ck_assert_uint_eq(flat[1], WASM_I64); /* join(f32, i64) */
	ck_assert_uint_eq(cm_type_ncases(t), 2);

	t = c->spaces[CM_SORT_TYPE].items[2].t.type;
	ck_assert_uint_eq(cm_elem_size(t, false), 16);
	ck_assert_uint_eq(cm_type_ncases(t), 2);
	ck_assert_ptr_null(cm_type_case(t, 0));
	ck_assert_int_eq(cm_type_case(t, 1)->kind, CM_U64);

	t = c->spaces[CM_SORT_TYPE].items[3].t.type;
	ck_assert_uint_eq(cm_alignment(t, false), 2);
	ck_assert_uint_eq(cm_elem_size(t, false), 2);

	t = c->spaces[CM_SORT_TYPE].items[4].t.type;
	ck_assert_uint_eq(cm_elem_size(t, false), 3);
	ck_assert_uint_eq(cm_flat_count(t), 3);
	cm_component_free(c);
}
END_TEST

/* flatten_functype rows of the digest's table (2.10). */
START_TEST(flatten_functype_table)
{
	buf b, s = {.n = 0};
	cm_component *c;
	wasm_error e;
	const cm_type *ft;
	cm_flat_functype f;

	preamble(&b);
	/* 0: async func(s: string) -> u32; 1: ... -> string */
	PUT(&s, 0x02, 0x43, 0x01, 0x01, 's', 0x73, 0x00, 0x79, 0x43, 0x01, 0x01,
	    's', 0x73, 0x00, 0x73);
	section(&b, 7, &s);
	ck_assert_int_eq(load(&b, &c, &e), 0);
	ft = c->spaces[CM_SORT_TYPE].items[0].t.type;
	cm_flatten_functype(ft, false, false, false, CM_LOWER, &f);
	ck_assert_uint_eq(f.nparams, 2);
	ck_assert_uint_eq(f.nresults, 1);
	cm_flatten_functype(ft, true, false, false, CM_LOWER, &f);
	ck_assert_uint_eq(f.nparams, 3);
	ck_assert_uint_eq(f.nresults, 1);
	cm_flatten_functype(ft, true, true, false, CM_LIFT, &f);
	ck_assert_uint_eq(f.nparams, 2);
	ck_assert_uint_eq(f.nresults, 1);
	ft = c->spaces[CM_SORT_TYPE].items[1].t.type;
	cm_flatten_functype(ft, false, false, false, CM_LOWER, &f);
	ck_assert_uint_eq(f.nparams, 3); /* string + out-pointer */
	ck_assert_uint_eq(f.nresults, 0);
	cm_flatten_functype(ft, false, false, false, CM_LIFT, &f);
	ck_assert_uint_eq(f.nparams, 2);
	ck_assert_uint_eq(f.nresults, 1); /* pointer to the result */
	cm_component_free(c);
}
END_TEST

/* ---- error classes ----------------------------------------------------------
 */

START_TEST(malformed_preamble_and_sections)
{
	buf b;

	b.n = 0;
	PUT(&b, 0x00, 0x61, 0x73, 0x6e, 0x0d, 0x00, 0x01, 0x00);
	expect_err(&b, WASM_ERR_MALFORMED, "magic");
	b.n = 0;
	PUT(&b, 0x00, 0x61, 0x73, 0x6d, 0x0c, 0x00, 0x01, 0x00);
	expect_err(&b, WASM_ERR_MALFORMED, "unknown binary version");
	b.n = 0;
	/* a core module where the component is expected: said so */
	PUT(&b, 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00);
	expect_err(&b, WASM_ERR_MALFORMED,
		   "this is a core WebAssembly module, not a component");
	expect_err(&b, WASM_ERR_MALFORMED, "hostel run runs core modules");
	/* nested in a component section: the suite's words */
	preamble(&b);
	PUT(&b, 0x04, 0x08, 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00);
	expect_err(&b, WASM_ERR_MALFORMED,
		   "expected a version header for a component");
	preamble(&b);
	PUT(&b, 0x0d, 0x00);
	expect_err(&b, WASM_ERR_MALFORMED, "malformed section id");
	preamble(&b);
	PUT(&b, 0x07, 0x03, 0x00);
	expect_err(&b, WASM_ERR_MALFORMED, "unexpected end-of-file");
	preamble(&b);
	PUT(&b, 0x07, 0x81, 0x80, 0x80, 0x80, 0x70, 0x00);
	expect_err(&b, WASM_ERR_MALFORMED, "integer too large");
	preamble(&b);
	PUT(&b, 0x07, 0x02, 0x01, 0x62);
	expect_err(&b, WASM_ERR_MALFORMED,
		   "invalid leading byte (0x62) for component defined type");
	preamble(&b);
	PUT(&b, 0x07, 0x06, 0x01, 0x71, 0x01, 0x01, 'c', 0x00);
	expect_err(&b, WASM_ERR_MALFORMED, "unexpected end-of-file");
	preamble(&b);
	PUT(&b, 0x07, 0x07, 0x01, 0x71, 0x01, 0x01, 'c', 0x00, 0x01);
	expect_err(&b, WASM_ERR_MALFORMED, "zero byte required");
	preamble(&b);
	PUT(&b, 0x08, 0x02, 0x01, 0x2e);
	expect_err(&b, WASM_ERR_MALFORMED,
		   "invalid leading byte (0x2e) for canonical function");
	preamble(&b);
	PUT(&b, 0x08, 0x03, 0x01, 0x0c, 0x02);
	expect_err(&b, WASM_ERR_MALFORMED, "invalid boolean value");
	preamble(&b);
	PUT(&b, 0x0a, 0x05, 0x01, 0x00, 0x02, 0xff, 0xfe);
	expect_err(&b, WASM_ERR_MALFORMED, "malformed UTF-8 encoding");
}
END_TEST

START_TEST(invalid_types)
{
	buf b;

	one_type(&b, (const uint8_t[]){0x72, 0x00}, 2);
	expect_err(&b, WASM_ERR_INVALID,
		   "record type must have at least one field");
	one_type(&b, (const uint8_t[]){0x70, 0x05}, 2);
	expect_err(&b, WASM_ERR_INVALID, "type index out of bounds");
	one_type(&b, (const uint8_t[]){0x67, 0x7d, 0x00}, 3);
	expect_err(&b, WASM_ERR_INVALID, "length greater than zero");
	one_type(&b,
		 (const uint8_t[]){0x67, 0x77, 0x80, 0x80, 0x80, 0x80, 0x02},
		 7); /* list<u64, 2^29>: 2^32 bytes, a naive u32 wraps */
	expect_err(&b, WASM_ERR_INVALID, "exceeds maximum byte size");
	one_type(&b, (const uint8_t[]){0x66, 0x01, 0x74}, 3);
	expect_err(&b, WASM_ERR_INVALID, "`stream<char>` is not valid");
	one_type(&b, (const uint8_t[]){0x72, 0x01, 0x03, 'a', 'B', 'c', 0x79},
		 7);
	expect_err(&b, WASM_ERR_INVALID,
		   "record field name `aBc` is not in kebab case");
	one_type(&b, (const uint8_t[]){0x6d, 0x02, 0x01, 'x', 0x01, 'X'}, 6);
	expect_err(&b, WASM_ERR_INVALID,
		   "enum tag name `X` conflicts with previous tag name `x`");
	one_type(&b, (const uint8_t[]){0x41, 0x01, 0x01, 0x3f, 0x7f, 0x00}, 6);
	expect_err(&b, WASM_ERR_INVALID,
		   "resources can only be defined within a concrete "
		   "component");
}
END_TEST

START_TEST(invalid_handles_and_results)
{
	buf b, s = {.n = 0};

	preamble(&b);
	PUT(&s, 0x02, 0x73, 0x69, 0x00); /* string; own 0 */
	section(&b, 7, &s);
	expect_err(&b, WASM_ERR_INVALID, "type index 0 is not a resource type");

	preamble(&b);
	s.n = 0;
	/* resource; borrow 0; func -> borrow */
	PUT(&s, 0x03, 0x3f, 0x7f, 0x00, 0x68, 0x00, 0x40, 0x00, 0x00, 0x01);
	section(&b, 7, &s);
	expect_err(&b, WASM_ERR_INVALID,
		   "function result cannot contain a `borrow` type");
}
END_TEST

/* ---- names
 * -------------------------------------------------------------------- */

START_TEST(name_grammar_accepts)
{
	static const char *const good[] = {
		"a",
		"a1",
		"a-1",
		"B-1-C-2-D-3",
		"a11-B11-123-ABC-abc",
		"ns-1-a:b-1-c/D-2",
		"wasi:http/types",
		"wasi:http/types@1.0.0",
		"a:b/c@0.0.0-abcd.1.2+efg.4.ee.5",
		"a:b/c@1",
		"[constructor]a",
		"[method]a.b",
		"[static]a-b.c-d",
	};
	buf b;

	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		cm_component *c;
		wasm_error e;

		import_func(&b, good[i]);
		if (load(&b, &c, &e) == 0) {
			cm_component_free(c);
			continue;
		}
		/* Annotated names fail later (no resource), not on syntax. */
		if (strstr(e.msg, "not a valid extern name") != NULL)
			ck_abort_msg("%s rejected: %s", good[i], e.msg);
	}
}
END_TEST

START_TEST(name_grammar_rejects)
{
	static const struct {
		const char *name, *text;
	} bad[] = {
		{"", "`` is not in kebab case"},
		{"1-a", "is not in kebab case"},
		{"a-", "is not in kebab case"},
		{"aBc", "`aBc` is not in kebab case"},
		{"wasi:http/TyPeS", "`TyPeS` is not in kebab case"},
		{"ns:A/b", "is not a valid extern name"},
		{"wasi/http", "`wasi/http` is not in kebab case"},
		{"a:b/c@", "empty string"},
		{"a:b/c@1.", "unexpected end of input"},
		{"a:b/c@2.0x0", "unexpected character 'x'"},
		{"a:b/c@2.0.0+", "empty identifier segment"},
		{"foo:bar:baz/qux", "expected `/` after package name"},
		{"foo:bar/baz/qux", "trailing characters found: `/qux`"},
		{"[method]a", "failed to find `.` character"},
		{"[static]a.b.c", "not in kebab case"},
	};
	buf b;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		import_func(&b, bad[i].name);
		expect_err(&b, WASM_ERR_INVALID, bad[i].text);
	}
}
END_TEST

START_TEST(strong_uniqueness)
{
	buf b, s = {.n = 0};

	/* two imports "a" and "A" */
	preamble(&b);
	PUT(&s, 0x01, 0x40, 0x00, 0x01, 0x00);
	section(&b, 7, &s);
	s.n = 0;
	PUT(&s, 0x02, 0x00, 0x01, 'a', 0x01, 0x00, 0x00, 0x01, 'A', 0x01, 0x00);
	section(&b, 10, &s);
	expect_err(&b, WASM_ERR_INVALID,
		   "import name `A` conflicts with previous name `a`");
}
END_TEST

/* ---- subtyping through instantiation
 * ------------------------------------------ */

/*
 * (import "f" (func (type OUTER)))
 * (component (type INNER) (import "f" (func (type 0))))
 * (instance (instantiate 0 (with "f" (func 0))))
 */
static void instantiate_with(buf *b, const uint8_t *outer, size_t no,
			     const uint8_t *inner, size_t ni)
{
	buf s = {.n = 0}, nested;

	preamble(b);
	PUT(&s, 0x01);
	put(&s, outer, no);
	section(b, 7, &s);
	s.n = 0;
	PUT(&s, 0x01, 0x00, 0x01, 'f', 0x01, 0x00);
	section(b, 10, &s);

	preamble(&nested);
	s.n = 0;
	PUT(&s, 0x01);
	put(&s, inner, ni);
	section(&nested, 7, &s);
	s.n = 0;
	PUT(&s, 0x01, 0x00, 0x01, 'f', 0x01, 0x00);
	section(&nested, 10, &s);
	section(b, 4, &nested);

	s.n = 0;
	PUT(&s, 0x01, 0x00, 0x00, 0x01, 0x01, 'f', 0x01, 0x00);
	section(b, 5, &s);
}

START_TEST(subtyping_of_functions)
{
	static const uint8_t f0[] = {0x40, 0x00, 0x01, 0x00};
	static const uint8_t fx_u32[] = {0x40, 0x01, 0x01, 'x',
					 0x79, 0x01, 0x00};
	static const uint8_t fx_s32[] = {0x40, 0x01, 0x01, 'x',
					 0x7a, 0x01, 0x00};
	static const uint8_t fy_u32[] = {0x40, 0x01, 0x01, 'y',
					 0x79, 0x01, 0x00};
	static const uint8_t f_r[] = {0x40, 0x00, 0x00, 0x79};
	buf b;

	instantiate_with(&b, f0, sizeof f0, f0, sizeof f0);
	expect_ok(&b);
	instantiate_with(&b, fx_u32, sizeof fx_u32, fx_u32, sizeof fx_u32);
	expect_ok(&b);
	instantiate_with(&b, f0, sizeof f0, fx_u32, sizeof fx_u32);
	expect_err(&b, WASM_ERR_INVALID, "expected 1 parameters, found 0");
	instantiate_with(&b, fx_u32, sizeof fx_u32, fx_s32, sizeof fx_s32);
	expect_err(&b, WASM_ERR_INVALID,
		   "type mismatch in function parameter `x`");
	instantiate_with(&b, fx_u32, sizeof fx_u32, fy_u32, sizeof fy_u32);
	expect_err(&b, WASM_ERR_INVALID,
		   "expected parameter named `y`, found `x`");
	instantiate_with(&b, f_r, sizeof f_r, f0, sizeof f0);
	expect_err(&b, WASM_ERR_INVALID, "expected a result, found none");
}
END_TEST

/*
 * Two resources passed for "a" and "b" where the child requires
 * b = (eq a): the same resource passes, two definitions do not.
 */
static void resource_eq(buf *b, bool same)
{
	buf s = {.n = 0}, nested;

	preamble(b);
	PUT(&s, 0x02, 0x3f, 0x7f, 0x00, 0x3f, 0x7f, 0x00);
	section(b, 7, &s);

	preamble(&nested);
	s.n = 0;
	/* import "a" (type (sub resource)); import "b" (type (eq 0)) */
	PUT(&s, 0x02, 0x00, 0x01, 'a', 0x03, 0x01, 0x00, 0x01, 'b', 0x03, 0x00,
	    0x00);
	section(&nested, 10, &s);
	section(b, 4, &nested);

	s.n = 0;
	PUT(&s, 0x01, 0x00, 0x00, 0x02, 0x01, 'a', 0x03, 0x00, 0x01, 'b', 0x03);
	leb(&s, same ? 0 : 1);
	section(b, 5, &s);
}

START_TEST(subtyping_of_resources)
{
	buf b;

	resource_eq(&b, true);
	expect_ok(&b);
	resource_eq(&b, false);
	expect_err(&b, WASM_ERR_INVALID, "resource types are not the same");
}
END_TEST

/* ---- WIT
 * ------------------------------------------------------------------------ */

START_TEST(wit_of_imports)
{
	buf b, s = {.n = 0};
	cm_component *c;
	wasm_error e;
	char *w;

	preamble(&b);
	/* (type (func (param "msg" string) (result u32))) */
	PUT(&s, 0x01, 0x40, 0x01, 0x03, 'm', 's', 'g', 0x73, 0x00, 0x79);
	section(&b, 7, &s);
	s.n = 0;
	PUT(&s, 0x01, 0x00, 0x03, 'l', 'o', 'g', 0x01, 0x00);
	section(&b, 10, &s);
	ck_assert_int_eq(load(&b, &c, &e), 0);
	w = cm_wit_world(c, "demo");
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_nonnull(strstr(w, "world demo {"));
	ck_assert_ptr_nonnull(
		strstr(w, "import log: func(msg: string) -> u32;"));
	free(w);
	cm_component_free(c);
}
END_TEST

/* ---- robustness
 * ------------------------------------------------------------------- */

/* Every prefix and every single-byte flip loads or fails cleanly. */
static void shake(const uint8_t *d, size_t n)
{
	uint8_t *copy = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(copy);
	for (size_t k = 0; k < n; k++) {
		cm_component *c;
		wasm_error e;

		memset(&e, 0, sizeof e);
		if (cm_component_load(d, k, &c, &e) == 0)
			cm_component_free(c);
		else
			ck_assert(e.kind == WASM_ERR_MALFORMED ||
				  e.kind == WASM_ERR_INVALID ||
				  e.kind == WASM_ERR_RESOURCE);
	}
	for (size_t k = 8; k < n && k < 4096; k++) {
		cm_component *c;
		wasm_error e;

		memcpy(copy, d, n);
		copy[k] ^= (uint8_t)(0x55 + k);
		if (cm_component_load(copy, n, &c, &e) == 0)
			cm_component_free(c);
	}
	free(copy);
}

START_TEST(truncation_and_flips_of_built_components)
{
	buf b;

	import_func(&b, "wasi:http/types@1.0.0");
	shake(b.d, b.n);
	resource_eq(&b, false);
	shake(b.d, b.n);
	instantiate_with(&b, (const uint8_t[]){0x40, 0x00, 0x01, 0x00}, 4,
			 (const uint8_t[]){0x40, 0x00, 0x01, 0x00}, 4);
	shake(b.d, b.n);
}
END_TEST

START_TEST(truncation_of_suite_binaries)
{
	const char *shared = getenv("HOSTEL_SHARED");
	static const char *const dirs[] = {"binary", "validation", "values",
					   "resources"};
	char path[1024];
	size_t files = 0;

	if (shared == NULL) {
		printf("truncation_of_suite_binaries: HOSTEL_SHARED unset, "
		       "skipped\n");
		return;
	}
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		DIR *dir;
		struct dirent *de;

		snprintf(path, sizeof path, "%s/cm-testsuite/%s", shared,
			 dirs[i]);
		dir = opendir(path);
		if (dir == NULL)
			continue;
		while ((de = readdir(dir)) != NULL) {
			size_t l = strlen(de->d_name);
			FILE *f;
			uint8_t *d;
			long n;

			if (l < 5 || strcmp(de->d_name + l - 5, ".wasm"))
				continue;
			snprintf(path, sizeof path, "%s/cm-testsuite/%s/%s",
				 shared, dirs[i], de->d_name);
			f = fopen(path, "rb");
			if (f == NULL)
				continue;
			fseek(f, 0, SEEK_END);
			n = ftell(f);
			fseek(f, 0, SEEK_SET);
			d = malloc((size_t)n + 1);
			ck_assert_ptr_nonnull(d);
			ck_assert_uint_eq(fread(d, 1, (size_t)n, f), (size_t)n);
			fclose(f);
			/* Truncation only for the big ones: keep it quick. */
			for (long k = 0; k<n; k += n> 2048 ? 7 : 1) {
				cm_component *c;
				wasm_error e;

				if (cm_component_load(d, (size_t)k, &c, &e) ==
				    0)
					cm_component_free(c);
			}
			free(d);
			files++;
		}
		closedir(dir);
	}
	if (files == 0)
		printf("truncation_of_suite_binaries: no cm-testsuite, "
		       "skipped\n");
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("component_decode");
	TCase *t = tcase_create("decode");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, empty_component);
	tcase_add_test(t, import_of_a_function);
	tcase_add_test(t, abi_facts);
	tcase_add_test(t, flatten_functype_table);
	tcase_add_test(t, malformed_preamble_and_sections);
	tcase_add_test(t, invalid_types);
	tcase_add_test(t, invalid_handles_and_results);
	tcase_add_test(t, name_grammar_accepts);
	tcase_add_test(t, name_grammar_rejects);
	tcase_add_test(t, strong_uniqueness);
	tcase_add_test(t, subtyping_of_functions);
	tcase_add_test(t, subtyping_of_resources);
	tcase_add_test(t, wit_of_imports);
	tcase_add_test(t, truncation_and_flips_of_built_components);
	tcase_add_test(t, truncation_of_suite_binaries);
	suite_add_tcase(s, t);
	return s;
}
