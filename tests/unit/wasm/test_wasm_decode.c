/*
 * test_wasm_decode.c - the core module decoder (runtime/wasm/decode.c).
 *
 * Hand-assembled modules exercise every section and every error path;
 * truncating and mutating a module at every byte must never crash and
 * truncation must fail unless it falls on a section boundary.  When the
 * shared core test suite is present, every `module` binary of it must
 * decode (or be refused as "not supported" if it needs gc or typed
 * function references), and every binary `assert_malformed` must fail,
 * except the listed ones whose defect lies inside a function body, which
 * validation detects.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasm/module.h"
#include "wasm/reader.h"
#include "testmain.h"

/* ---- a tiny module builder ------------------------------------------- */

typedef struct buf {
	uint8_t d[4096];
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

static void put_u32(buf *b, uint32_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		if (v)
			c |= 0x80;
		put(b, &c, 1);
	} while (v);
}

static void put_name(buf *b, const char *s)
{
	put_u32(b, (uint32_t)strlen(s));
	put(b, s, strlen(s));
}

static void header(buf *b)
{
	b->n = 0;
	PUT(b, 0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00);
}

/* Appends section `id` with the content of `c`; records its end. */
static void section(buf *b, uint8_t id, const buf *c, size_t *ends,
		    size_t *nends)
{
	put(b, &id, 1);
	put_u32(b, (uint32_t)c->n);
	put(b, c->d, c->n);
	if (ends)
		ends[(*nends)++] = b->n;
}

/*
 * A module that uses every section and every form: returns its bytes in
 * *b and the offsets where a section ends (valid truncation points).
 */
static void build_full_module(buf *b, size_t *ends, size_t *nends)
{
	buf c;

	*nends = 0;
	header(b);
	ends[(*nends)++] = b->n;

	c.n = 0; /* custom, before everything */
	put_name(&c, "first");
	PUT(&c, 1, 2, 3);
	section(b, 0, &c, ends, nends);

	c.n = 0; /* types */
	PUT(&c, 3, 0x60, 0, 0, 0x60, 2, 0x7f, 0x7e, 1, 0x7d, 0x60, 1, 0x7f, 0);
	section(b, 1, &c, ends, nends);

	c.n = 0; /* imports: one of each kind */
	put_u32(&c, 5);
	put_name(&c, "m");
	put_name(&c, "f");
	PUT(&c, 0x00, 1);
	put_name(&c, "m");
	put_name(&c, "t");
	PUT(&c, 0x01, 0x70, 0x01, 1, 2);
	put_name(&c, "m");
	put_name(&c, "mem");
	PUT(&c, 0x02, 0x03, 1, 2); /* shared, max */
	put_name(&c, "m");
	put_name(&c, "g");
	PUT(&c, 0x03, 0x7e, 0x01);
	put_name(&c, "m");
	put_name(&c, "e");
	PUT(&c, 0x04, 0x00, 2);
	section(b, 2, &c, ends, nends);

	c.n = 0; /* custom between known sections, with a UTF-8 name */
	put_name(&c, "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80");
	section(b, 0, &c, ends, nends);

	c.n = 0; /* functions */
	PUT(&c, 2, 0, 1);
	section(b, 3, &c, ends, nends);

	c.n = 0; /* tables: plain, and with an init expression */
	PUT(&c, 2, 0x6f, 0x00, 5, 0x40, 0x00, 0x70, 0x00, 3, 0xd0, 0x70, 0x0b);
	section(b, 4, &c, ends, nends);

	c.n = 0; /* memories: 64-bit with max */
	PUT(&c, 1, 0x05, 1, 0x80, 0x02);
	section(b, 5, &c, ends, nends);

	c.n = 0; /* tags */
	PUT(&c, 1, 0x00, 2);
	section(b, 13, &c, ends, nends);

	c.n = 0; /* globals: i32 const, mutable v128, extended const */
	PUT(&c, 3, 0x7f, 0x00, 0x41, 0x2a, 0x0b, 0x7b, 0x01, 0xfd, 0x0c, 1, 2,
	    3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0x0b, 0x0b, 0x7e, 0x00,
	    0x42, 1, 0x23, 0, 0x7c, 0x0b);
	section(b, 6, &c, ends, nends);

	c.n = 0; /* exports: one of each kind, one name with U+0000 */
	put_u32(&c, 5);
	put_name(&c, "f");
	PUT(&c, 0x00, 1);
	put_name(&c, "t");
	PUT(&c, 0x01, 0);
	PUT(&c, 2, 'm', 0);
	PUT(&c, 0x02, 0);
	put_name(&c, "g");
	PUT(&c, 0x03, 2);
	put_name(&c, "e");
	PUT(&c, 0x04, 0);
	section(b, 7, &c, ends, nends);

	c.n = 0; /* start */
	PUT(&c, 1);
	section(b, 8, &c, ends, nends);

	c.n = 0; /* elements: the eight forms */
	PUT(&c, 8,
	    /* 0 */ 0x00, 0x41, 0x00, 0x0b, 2, 0, 1,
	    /* 1 */ 0x01, 0x00, 1, 2,
	    /* 2 */ 0x02, 1, 0x41, 0x01, 0x0b, 0x00, 1, 0,
	    /* 3 */ 0x03, 0x00, 1, 1,
	    /* 4 */ 0x04, 0x41, 0x02, 0x0b, 1, 0xd2, 0, 0x0b,
	    /* 5 */ 0x05, 0x70, 2, 0xd0, 0x70, 0x0b, 0xd2, 1, 0x0b,
	    /* 6 */ 0x06, 1, 0x41, 0x03, 0x0b, 0x70, 1, 0xd2, 2, 0x0b,
	    /* 7 */ 0x07, 0x70, 1, 0xd2, 0, 0x0b);
	section(b, 9, &c, ends, nends);

	c.n = 0; /* data count */
	PUT(&c, 3);
	section(b, 12, &c, ends, nends);

	c.n = 0; /* code: locals groups, then the bodies */
	PUT(&c, 2,
	    /* body 0 */ 6, 2, 2, 0x7f, 1, 0x7c, 0x0b,
	    /* body 1 */ 7, 0, 0x43, 0, 0, 0x80, 0x3f, 0x0b);
	section(b, 10, &c, ends, nends);

	c.n = 0; /* data: the three forms */
	PUT(&c, 3, 0x00, 0x41, 0x00, 0x0b, 2, 'h', 'i', 0x01, 3, 'a', 'b', 'c',
	    0x02, 0, 0x42, 8, 0x0b, 0);
	section(b, 11, &c, ends, nends);

	c.n = 0; /* custom, last */
	put_name(&c, "last");
	section(b, 0, &c, ends, nends);
}

static wasm_module *decode_ok(const buf *b)
{
	wasm_module *m = NULL;
	wasm_error e;

	memset(&e, 0, sizeof e);
	if (wasm_decode(b->d, b->n, &m, &e) != 0)
		ck_abort_msg("decode failed at %zu: %s", e.offset, e.msg);
	ck_assert_ptr_nonnull(m);
	return m;
}

static bool name_is(wasm_name n, const char *s, size_t len)
{
	return n.len == len && memcmp(n.ptr, s, len) == 0;
}

START_TEST(decode_empty_module)
{
	buf b;
	wasm_module *m;

	header(&b);
	m = decode_ok(&b);
	ck_assert_uint_eq(m->ntypes, 0);
	ck_assert_uint_eq(m->nfuncs, 0);
	ck_assert_uint_eq(m->nbytes, 8);
	ck_assert(!m->has_start);
	ck_assert(!m->has_data_count);
	wasm_module_free(m);
}
END_TEST

START_TEST(decode_full_module)
{
	buf b;
	size_t ends[32], nends;
	wasm_module *m;

	build_full_module(&b, ends, &nends);
	m = decode_ok(&b);
	/* The module keeps its own copy. */
	ck_assert_ptr_ne(m->bytes, b.d);
	ck_assert_mem_eq(m->bytes, b.d, b.n);
	memset(b.d, 0xee, b.n);

	ck_assert_uint_eq(m->ntypes, 3);
	ck_assert_uint_eq(m->types[1].nparams, 2);
	ck_assert_uint_eq(m->types[1].params[0], WASM_I32);
	ck_assert_uint_eq(m->types[1].params[1], WASM_I64);
	ck_assert_uint_eq(m->types[1].nresults, 1);
	ck_assert_uint_eq(m->types[1].results[0], WASM_F32);

	ck_assert_uint_eq(m->nimports, 5);
	ck_assert(name_is(m->imports[2].module, "m", 1));
	ck_assert(name_is(m->imports[2].name, "mem", 3));
	ck_assert_int_eq(m->imports[0].kind, WASM_EXTERN_FUNC);
	ck_assert_uint_eq(m->imports[0].u.func_typeidx, 1);
	ck_assert_uint_eq(m->imports[1].u.table.elem, WASM_FUNCREF);
	ck_assert_uint_eq(m->imports[1].u.table.limits.min, 1);
	ck_assert_uint_eq(m->imports[1].u.table.limits.max, 2);
	ck_assert(m->imports[2].u.memory.limits.shared);
	ck_assert(m->imports[2].u.memory.limits.has_max);
	ck_assert(!m->imports[2].u.memory.limits.is64);
	ck_assert_uint_eq(m->imports[3].u.global.type, WASM_I64);
	ck_assert(m->imports[3].u.global.mut);
	ck_assert_uint_eq(m->imports[4].u.tag.typeidx, 2);
	ck_assert_uint_eq(m->nimported_funcs, 1);
	ck_assert_uint_eq(m->nimported_tables, 1);
	ck_assert_uint_eq(m->nimported_memories, 1);
	ck_assert_uint_eq(m->nimported_globals, 1);
	ck_assert_uint_eq(m->nimported_tags, 1);

	ck_assert_uint_eq(m->nfuncs, 2);
	ck_assert_uint_eq(m->func_types[1], 1);

	ck_assert_uint_eq(m->ntables, 2);
	ck_assert_uint_eq(m->tables[0].type.elem, WASM_EXTERNREF);
	ck_assert(!m->tables[0].type.limits.has_max);
	ck_assert(!m->tables[0].has_init);
	ck_assert(m->tables[1].has_init);
	ck_assert_uint_eq(m->tables[1].type.limits.min, 3);
	ck_assert_uint_eq(m->tables[1].init.len, 3);
	ck_assert_uint_eq(m->tables[1].init.code[0], 0xd0);
	ck_assert_uint_eq(m->tables[1].init.code[2], 0x0b);
	ck_assert_ptr_eq(m->tables[1].init.code,
			 m->bytes + m->tables[1].init.offset);

	ck_assert_uint_eq(m->nmemories, 1);
	ck_assert(m->memories[0].limits.is64);
	ck_assert_uint_eq(m->memories[0].limits.max, 256);

	ck_assert_uint_eq(m->ntags, 1);
	ck_assert_uint_eq(m->tags[0].typeidx, 2);

	ck_assert_uint_eq(m->nglobals, 3);
	ck_assert_uint_eq(m->globals[0].init.len, 3);
	ck_assert_uint_eq(m->globals[1].type.type, WASM_V128);
	ck_assert(m->globals[1].type.mut);
	ck_assert_uint_eq(m->globals[1].init.len, 19);
	/* A 0x0b among the v128.const bytes does not end the expression. */
	ck_assert_uint_eq(m->globals[1].init.code[18], 0x0b);
	ck_assert_uint_eq(m->globals[2].init.len, 6);

	ck_assert_uint_eq(m->nexports, 5);
	ck_assert(name_is(m->exports[2].name, "m\0", 2));
	ck_assert_int_eq(m->exports[2].kind, WASM_EXTERN_MEMORY);
	ck_assert_int_eq(m->exports[4].kind, WASM_EXTERN_TAG);
	ck_assert_uint_eq(m->exports[3].index, 2);

	ck_assert(m->has_start);
	ck_assert_uint_eq(m->start, 1);

	ck_assert_uint_eq(m->nelems, 8);
	ck_assert_int_eq(m->elems[0].mode, WASM_SEG_ACTIVE);
	ck_assert_uint_eq(m->elems[0].count, 2);
	ck_assert_uint_eq(m->elems[0].funcs[1], 1);
	ck_assert_ptr_null(m->elems[0].exprs);
	ck_assert_int_eq(m->elems[1].mode, WASM_SEG_PASSIVE);
	ck_assert_uint_eq(m->elems[1].funcs[0], 2);
	ck_assert_int_eq(m->elems[2].mode, WASM_SEG_ACTIVE);
	ck_assert_uint_eq(m->elems[2].table, 1);
	ck_assert_uint_eq(m->elems[2].offset.code[1], 0x01);
	ck_assert_int_eq(m->elems[3].mode, WASM_SEG_DECLARATIVE);
	ck_assert_uint_eq(m->elems[4].count, 1);
	ck_assert_ptr_null(m->elems[4].funcs);
	ck_assert_uint_eq(m->elems[4].exprs[0].len, 3);
	ck_assert_int_eq(m->elems[5].mode, WASM_SEG_PASSIVE);
	ck_assert_uint_eq(m->elems[5].count, 2);
	ck_assert_uint_eq(m->elems[5].exprs[1].code[1], 1);
	ck_assert_uint_eq(m->elems[6].table, 1);
	ck_assert_uint_eq(m->elems[6].type, WASM_FUNCREF);
	ck_assert_int_eq(m->elems[7].mode, WASM_SEG_DECLARATIVE);

	ck_assert(m->has_data_count);
	ck_assert_uint_eq(m->data_count, 3);

	ck_assert_uint_eq(m->ncodes, 2);
	ck_assert_uint_eq(m->codes[0].nlocals, 3);
	ck_assert_uint_eq(m->codes[0].locals[1], WASM_I32);
	ck_assert_uint_eq(m->codes[0].locals[2], WASM_F64);
	ck_assert_uint_eq(m->codes[0].body_len, 1);
	ck_assert_uint_eq(m->codes[0].body[0], 0x0b);
	ck_assert_uint_eq(m->codes[1].nlocals, 0);
	ck_assert_uint_eq(m->codes[1].body_len, 6);
	ck_assert_ptr_eq(m->codes[1].body, m->bytes + m->codes[1].body_offset);

	ck_assert_uint_eq(m->ndatas, 3);
	ck_assert_int_eq(m->datas[0].mode, WASM_SEG_ACTIVE);
	ck_assert_uint_eq(m->datas[0].len, 2);
	ck_assert_mem_eq(m->datas[0].bytes, "hi", 2);
	ck_assert_int_eq(m->datas[1].mode, WASM_SEG_PASSIVE);
	ck_assert_mem_eq(m->datas[1].bytes, "abc", 3);
	ck_assert_uint_eq(m->datas[2].memory, 0);
	ck_assert_uint_eq(m->datas[2].len, 0);
	ck_assert_uint_eq(m->datas[2].offset.code[0], 0x42);
	wasm_module_free(m);
}
END_TEST

START_TEST(decode_lookups)
{
	buf b;
	size_t ends[32], nends;
	wasm_module *m;

	build_full_module(&b, ends, &nends);
	m = decode_ok(&b);
	ck_assert_uint_eq(wasm_module_nfuncs(m), 3);
	ck_assert_uint_eq(wasm_module_func_typeidx(m, 0), 1);
	ck_assert_uint_eq(wasm_module_func_typeidx(m, 1), 0);
	ck_assert_uint_eq(wasm_module_func_typeidx(m, 2), 1);
	ck_assert_uint_eq(wasm_module_func_typeidx(m, 3), UINT32_MAX);
	ck_assert_uint_eq(wasm_module_table_type(m, 0)->elem, WASM_FUNCREF);
	ck_assert_uint_eq(wasm_module_table_type(m, 0)->limits.max, 2);
	ck_assert_uint_eq(wasm_module_table_type(m, 1)->elem, WASM_EXTERNREF);
	ck_assert_uint_eq(wasm_module_table_type(m, 2)->limits.min, 3);
	ck_assert_ptr_null(wasm_module_table_type(m, 3));
	ck_assert(wasm_module_memory_type(m, 0)->limits.shared);
	ck_assert(wasm_module_memory_type(m, 1)->limits.is64);
	ck_assert_ptr_null(wasm_module_memory_type(m, 2));
	ck_assert_uint_eq(wasm_module_global_type(m, 0)->type, WASM_I64);
	ck_assert_uint_eq(wasm_module_global_type(m, 1)->type, WASM_I32);
	ck_assert_uint_eq(wasm_module_global_type(m, 3)->type, WASM_I64);
	ck_assert_ptr_null(wasm_module_global_type(m, 4));
	ck_assert_uint_eq(wasm_module_tag_type(m, 0)->typeidx, 2);
	ck_assert_uint_eq(wasm_module_tag_type(m, 1)->typeidx, 2);
	ck_assert_ptr_null(wasm_module_tag_type(m, 2));
	wasm_module_free(m);
}
END_TEST

/* Interleaved imports of different kinds still map to the right ones. */
START_TEST(decode_lookups_interleaved_imports)
{
	buf b, c;
	wasm_module *m;

	header(&b);
	c.n = 0;
	PUT(&c, 2, 0x60, 0, 0, 0x60, 0, 1, 0x7f);
	section(&b, 1, &c, NULL, NULL);
	c.n = 0;
	put_u32(&c, 4);
	put_name(&c, "a");
	put_name(&c, "g0");
	PUT(&c, 0x03, 0x7d, 0x00);
	put_name(&c, "a");
	put_name(&c, "f0");
	PUT(&c, 0x00, 1);
	put_name(&c, "a");
	put_name(&c, "g1");
	PUT(&c, 0x03, 0x7c, 0x01);
	put_name(&c, "a");
	put_name(&c, "f1");
	PUT(&c, 0x00, 0);
	section(&b, 2, &c, NULL, NULL);
	m = decode_ok(&b);
	ck_assert_uint_eq(wasm_module_func_typeidx(m, 0), 1);
	ck_assert_uint_eq(wasm_module_func_typeidx(m, 1), 0);
	ck_assert_uint_eq(wasm_module_global_type(m, 0)->type, WASM_F32);
	ck_assert_uint_eq(wasm_module_global_type(m, 1)->type, WASM_F64);
	ck_assert(wasm_module_global_type(m, 1)->mut);
	wasm_module_free(m);
}
END_TEST

START_TEST(decode_legal_edge_cases)
{
	static const struct {
		const char *what;
		const char *bytes;
		size_t len;
	} cases[] = {
#define OK(what, s) {what, "\0asm\1\0\0\0" s, sizeof("\0asm\1\0\0\0" s) - 1}
		OK("zero locals in groups",
		   "\x01\x04\x01\x60\x00\x00\x03\x02\x01\x00"
		   "\x0a\x0a\x01\x08\x03\x00\x7f\x00\x7e\x02\x7d\x0b"),
		OK("function section of zero count and no code",
		   "\x03\x01\x00"),
		OK("code section of zero count and no function section",
		   "\x0a\x01\x00"),
		OK("data count 0 and no data section", "\x0c\x01\x00"),
		OK("i64.const with 10-byte LEB in a global",
		   "\x06\x0f\x01\x7e\x00\x42\xff\xff\xff\xff\xff\xff\xff\xff"
		   "\xff\x7f\x0b"),
		OK("custom section with empty name", "\x00\x01\x00"),
		OK("custom section at the very end, after data",
		   "\x0b\x01\x00\x00\x02\x01x"),
		OK("memory with 10-byte u64 min",
		   "\x05\x0c\x01\x00\x82\x80\x80"
		   "\x80\x80\x80\x80\x80\x80\x00"),
		OK("nested block in a constant expression",
		   "\x06\x09\x01\x7f\x00\x02\x40\x0b\x41\x00\x0b"),
		OK("(ref null func) is funcref",
		   "\x04\x05\x01\x63\x70\x00\x00"),
#undef OK
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		wasm_module *m = NULL;
		wasm_error e;

		if (wasm_decode((const uint8_t *)cases[i].bytes, cases[i].len,
				&m, &e) != 0)
			ck_abort_msg("%s: failed: %s", cases[i].what, e.msg);
		wasm_module_free(m);
	}
}
END_TEST

START_TEST(decode_padded_leb_count)
{
	/* Type section whose count 1 takes five bytes. */
	static const uint8_t mod[] = {0,    'a',  's',	'm',  1,    0,
				      0,    0,	  0x01, 0x08, 0x81, 0x80,
				      0x80, 0x80, 0x00, 0x60, 0x00, 0x00};
	wasm_module *m = NULL;
	wasm_error e;

	ck_assert_int_eq(wasm_decode(mod, sizeof mod, &m, &e), 0);
	ck_assert_uint_eq(m->ntypes, 1);
	wasm_module_free(m);
}
END_TEST

/* ---- errors ------------------------------------------------------------ */

static const struct bad_case {
	const char *what;
	const char *bytes;
	size_t len;
	const char *msg; /* expected prefix of the message */
} bad_cases[] = {
#define RAW(what, s, msg)                                                      \
	{                                                                      \
		what, s, sizeof(s) - 1, msg                                    \
	}
#define BAD(what, s, msg) RAW(what, "\0asm\1\0\0\0" s, msg)
	RAW("empty input", "", "unexpected end"),
	RAW("short magic", "\0as", "unexpected end"),
	RAW("wrong magic", "asm\0\1\0\0\0", "magic header not detected"),
	RAW("byte-swapped magic", "\0\0\0\1msa\0", "magic header not detected"),
	RAW("short version", "\0asm\1\0\0", "unexpected end"),
	RAW("version 2", "\0asm\2\0\0\0", "unknown binary version"),
	RAW("component version", "\0asm\x0d\0\1\0", "unknown binary version"),
	BAD("section id 14", "\x0e\x01\x00", "malformed section id"),
	BAD("section id as LEB", "\x80\x01\x00", "malformed section id"),
	BAD("section size past the end", "\x01\x05\x01\x60",
	    "length out of bounds"),
	BAD("section header cut", "\x01", "unexpected end"),
	BAD("section size cut", "\x01\x80", "unexpected end"),
	BAD("duplicate type section", "\x01\x01\x00\x01\x01\x00",
	    "unexpected content after last section"),
	BAD("function before type", "\x03\x01\x00\x01\x01\x00",
	    "unexpected content after last section"),
	BAD("tag after global", "\x06\x01\x00\x0d\x01\x00",
	    "unexpected content after last section"),
	BAD("data count after code", "\x0a\x01\x00\x0c\x01\x00",
	    "unexpected content after last section"),
	BAD("section too long for its content", "\x01\x02\x00\x00",
	    "section size mismatch"),
	BAD("1 type declared, 2 given", "\x01\x07\x01\x60\x00\x00\x60\x00\x00",
	    "section size mismatch"),
	BAD("u32 with 6 bytes", "\x01\x06\x80\x80\x80\x80\x80\x00",
	    "integer representation too long"),
	BAD("u32 with unused bits set", "\x01\x05\x80\x80\x80\x80\x10",
	    "integer too large"),
	BAD("s32 const with unused bits",
	    "\x06\x0a\x01\x7f\x00\x41\x80\x80"
	    "\x80\x80\x70\x0b",
	    "integer too large"),
	BAD("s32 const with 6 bytes",
	    "\x06\x0b\x01\x7f\x00\x41\x80\x80\x80"
	    "\x80\x80\x00\x0b",
	    "integer representation too long"),
	BAD("s64 const with unused bits",
	    "\x06\x0f\x01\x7e\x00\x42\x80\x80\x80\x80\x80\x80\x80\x80\x80\x7e"
	    "\x0b",
	    "integer too large"),
	BAD("u64 limit with unused bits",
	    "\x05\x0c\x01\x00\x82\x80\x80\x80\x80\x80\x80\x80\x80\x70",
	    "integer too large"),
	BAD("custom name not UTF-8", "\x00\x02\x01\xff",
	    "malformed UTF-8 encoding"),
	BAD("custom name overlong NUL", "\x00\x03\x02\xc0\x80",
	    "malformed UTF-8 encoding"),
	BAD("custom name surrogate", "\x00\x04\x03\xed\xa0\x80",
	    "malformed UTF-8 encoding"),
	BAD("custom name above U+10FFFF", "\x00\x05\x04\xf4\x90\x80\x80",
	    "malformed UTF-8 encoding"),
	BAD("custom name truncated sequence", "\x00\x02\x01\xe2",
	    "malformed UTF-8 encoding"),
	BAD("import name not UTF-8", "\x02\x06\x01\x01\xc3\x00\x00\x00",
	    "malformed UTF-8 encoding"),
	BAD("custom name past its section",
	    "\x00\x03\x05"
	    "ab",
	    "length out of bounds"),
	BAD("custom section without a name", "\x00\x00", "unexpected end"),
	BAD("functions without code",
	    "\x01\x04\x01\x60\x00\x00\x03\x02\x01\x00",
	    "function and code section have inconsistent lengths"),
	BAD("code without functions", "\x0a\x04\x01\x02\x00\x0b",
	    "function and code section have inconsistent lengths"),
	BAD("data count without data", "\x0c\x01\x01",
	    "data count and data section have inconsistent lengths"),
	BAD("data count 1, 2 segments",
	    "\x0c\x01\x01\x0b\x05\x02\x01\x00\x01"
	    "\x00",
	    "data count and data section have inconsistent lengths"),
	BAD("global mutability 2", "\x06\x06\x01\x7f\x02\x41\x00\x0b",
	    "malformed mutability"),
	BAD("import global mutability 0xff", "\x02\x06\x01\x00\x00\x03\x7f\xff",
	    "malformed mutability"),
	BAD("import kind 5", "\x02\x04\x01\x00\x00\x05",
	    "malformed import kind"),
	BAD("import kind 0x80", "\x02\x05\x01\x00\x00\x80\x00",
	    "malformed import kind"),
	BAD("export kind 5", "\x07\x04\x01\x00\x05\x00",
	    "malformed export kind"),
	BAD("tag attribute 1", "\x0d\x03\x01\x01\x00", "zero byte expected"),
	BAD("table with init, reserved byte 1",
	    "\x04\x09\x01\x40\x01\x70\x00\x00\xd0\x70\x0b",
	    "zero byte expected"),
	BAD("table of i32", "\x04\x04\x01\x7f\x00\x00",
	    "malformed reference type"),
	BAD("elem form 5 of i32", "\x09\x07\x01\x05\x7f\x01\xd2\x00\x0b",
	    "malformed reference type"),
	BAD("memory flags 8", "\x05\x03\x01\x08\x00", "malformed limits flags"),
	BAD("memory flags as LEB", "\x05\x05\x01\x81\x00\x00\x00",
	    "malformed limits flags"),
	BAD("shared table", "\x04\x05\x01\x70\x03\x00\x01",
	    "malformed limits flags"),
	BAD("value type 0x40", "\x01\x05\x01\x60\x01\x40\x00",
	    "malformed value type"),
	BAD("function type form 0x61", "\x01\x03\x01\x61\x00",
	    "malformed function type"),
	BAD("gc struct type", "\x01\x04\x01\x5f\x00\x00", "malformed type"),
	BAD("gc array mutability", "\x01\x04\x01\x5e\x78\x02",
	    "malformed mutability"),
	BAD("gc rec group", "\x01\x04\x01\x4e\x00\x00", "malformed type"),
	/* (ref func) decodes now; GC's (ref any) is refused */
	BAD("gc abstract heap type", "\x01\x06\x01\x60\x01\x64\x6e\x00",
	    "malformed reference type"),
	BAD("locals above 2^32-1",
	    "\x01\x04\x01\x60\x00\x00\x03\x02\x01\x00\x0a\x0c\x01\x0a\x02"
	    "\xff\xff\xff\xff\x0f\x7f\x02\x7e\x0b",
	    "too many locals"),
	BAD("locals 4 x 2^30",
	    "\x01\x04\x01\x60\x00\x00\x03\x02\x01\x00"
	    "\x0a\x1c\x01\x1a\x04\x80\x80\x80\x80\x04\x7f"
	    "\x80\x80\x80\x80\x04\x7e\x80\x80\x80\x80\x04"
	    "\x7d\x80\x80\x80\x80\x04\x7c\x0b",
	    "too many locals"),
	BAD("locals above the engine limit",
	    "\x01\x04\x01\x60\x00\x00\x03\x02\x01\x00\x0a\x09\x01\x07\x01"
	    "\x80\x80\x80\x01\x7f\x0b",
	    "too many locals"),
	BAD("local count with unused bits",
	    "\x01\x04\x01\x60\x00\x00\x03\x02\x01\x00\x0a\x0c\x01\x0a\x02"
	    "\x80\x80\x80\x80\x10\x7f\x02\x7e\x0b",
	    "integer too large"),
	BAD("global init without end", "\x06\x05\x01\x7f\x00\x41\x00",
	    "unexpected end of section or function"),
	BAD("function body past its section",
	    "\x01\x04\x01\x60\x00\x00\x03\x02\x01\x00\x0a\x03\x01\x05\x00",
	    "unexpected end of section or function"),
	BAD("data bytes past the section",
	    "\x05\x03\x01\x00\x01\x0b\x07\x01\x00\x41\x00\x0b\x05\x61",
	    "unexpected end of section or function"),
	BAD("illegal opcode in an element expression",
	    "\x09\x07\x01\x05\x70\x01\xf3\x00\x0b", "illegal opcode f3"),
	BAD("illegal 0xfc opcode in a constant expression",
	    "\x06\x06\x01\x7f\x00\xfc\x20\x0b", "illegal opcode fc 20"),
	BAD("memop flags in a constant expression",
	    "\x06\x0a\x01\x7f\x00\x41\x00\x28\x80\x01\x00\x0b",
	    "malformed memop flags"),
	BAD("element segment kind 8", "\x09\x02\x01\x08",
	    "malformed elements segment kind"),
	BAD("element kind 1", "\x09\x04\x01\x01\x01\x00",
	    "malformed element kind"),
	BAD("data segment kind 3", "\x0b\x03\x01\x03\x00",
	    "malformed data segment kind"),
	BAD("vector count past the section", "\x01\x02\x05\x60",
	    "unexpected end of section or function"),
	BAD("catch clause kind 4 in a constant expression",
	    "\x06\x09\x01\x7f\x00\x1f\x40\x01\x04\x00\x0b",
	    "malformed catch clause"),
#undef BAD
#undef RAW
};

START_TEST(decode_errors)
{
	const struct bad_case *c = &bad_cases[_i];
	wasm_module *m = (wasm_module *)0x1;
	wasm_error e;
	int rc;

	memset(&e, 0, sizeof e);
	rc = wasm_decode((const uint8_t *)c->bytes, c->len, &m, &e);
	ck_assert_msg(rc == -1, "%s: decoded", c->what);
	ck_assert_msg(m == (wasm_module *)0x1, "%s: *out written", c->what);
	ck_assert_msg(strncmp(e.msg, c->msg, strlen(c->msg)) == 0,
		      "%s: got '%s', want '%s'", c->what, e.msg, c->msg);
	ck_assert_msg(e.kind == WASM_ERR_MALFORMED, "%s: kind %d", c->what,
		      (int)e.kind);
	ck_assert_msg(e.offset <= c->len, "%s: offset %zu", c->what, e.offset);
}
END_TEST

/* ---- the reader ---------------------------------------------------------- */

START_TEST(reader_leb_widths)
{
	static const uint8_t s33[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
	static const uint8_t s33neg[] = {0x80, 0x80, 0x80, 0x80, 0x70};
	static const uint8_t s33bad[] = {0x80, 0x80, 0x80, 0x80, 0x30};
	static const uint8_t u64max[] = {0xff, 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff, 0x01};
	static const uint8_t s64min[] = {0x80, 0x80, 0x80, 0x80, 0x80,
					 0x80, 0x80, 0x80, 0x80, 0x7f};
	static const uint8_t s32min[] = {0x80, 0x80, 0x80, 0x80, 0x78};
	wasm_reader r;
	wasm_error e;
	int64_t v;
	uint64_t u;
	int32_t s;

	wasm_reader_init(&r, s33, sizeof s33, &e);
	ck_assert_int_eq(wasm_read_s33(&r, &v), 0);
	ck_assert_int_eq(v, (int64_t)0xffffffff);
	wasm_reader_init(&r, s33neg, sizeof s33neg, &e);
	ck_assert_int_eq(wasm_read_s33(&r, &v), 0);
	ck_assert_int_eq(v, -((int64_t)1 << 32));
	wasm_reader_init(&r, s33bad, sizeof s33bad, &e);
	ck_assert_int_eq(wasm_read_s33(&r, &v), -1);
	ck_assert_str_eq(e.msg, "integer too large");
	wasm_reader_init(&r, u64max, sizeof u64max, &e);
	ck_assert_int_eq(wasm_read_u64(&r, &u), 0);
	ck_assert(u == UINT64_MAX);
	wasm_reader_init(&r, s64min, sizeof s64min, &e);
	ck_assert_int_eq(wasm_read_s64(&r, &v), 0);
	ck_assert(v == INT64_MIN);
	wasm_reader_init(&r, s32min, sizeof s32min, &e);
	ck_assert_int_eq(wasm_read_s32(&r, &s), 0);
	ck_assert(s == INT32_MIN);
	ck_assert(wasm_reader_at_end(&r));
	/* A read that would pass `end` fails even with bytes beyond it. */
	wasm_reader_init(&r, s32min, 3, &e);
	ck_assert_int_eq(wasm_read_s32(&r, &s), -1);
	ck_assert_str_eq(e.msg, "unexpected end");
}
END_TEST

START_TEST(reader_utf8)
{
	ck_assert(wasm_utf8_valid((const uint8_t *)"", 0));
	ck_assert(wasm_utf8_valid((const uint8_t *)"a\0b", 3));
	ck_assert(wasm_utf8_valid((const uint8_t *)"\xf4\x8f\xbf\xbf", 4));
	ck_assert(wasm_utf8_valid((const uint8_t *)"\xef\xbb\xbf", 3));
	ck_assert(!wasm_utf8_valid((const uint8_t *)"\xe0\x9f\xbf", 3));
	ck_assert(!wasm_utf8_valid((const uint8_t *)"\xf0\x8f\xbf\xbf", 4));
	ck_assert(!wasm_utf8_valid((const uint8_t *)"\x80", 1));
	ck_assert(!wasm_utf8_valid((const uint8_t *)"\xc2", 1));
	ck_assert(!wasm_utf8_valid((const uint8_t *)"\xc2\x41", 2));
	ck_assert(!wasm_utf8_valid((const uint8_t *)"\xf8\x88\x80\x80\x80", 5));
}
END_TEST

/* ---- robustness ------------------------------------------------------- */

START_TEST(decode_every_truncation_fails)
{
	buf b;
	size_t ends[32], nends;

	build_full_module(&b, ends, &nends);
	for (size_t len = 0; len < b.n; len++) {
		bool boundary = false;
		wasm_module *m = NULL;
		wasm_error e;
		uint8_t *copy = malloc(len ? len : 1);
		int rc;

		/* An exact-size copy lets ASan see any read past the end. */
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, b.d, len);
		rc = wasm_decode(copy, len, &m, &e);
		free(copy);
		for (size_t k = 0; k < nends; k++)
			boundary |= ends[k] == len;
		if (rc == 0) {
			ck_assert_msg(boundary, "prefix of %zu bytes decoded",
				      len);
			wasm_module_free(m);
		} else {
			ck_assert_int_eq(e.kind, WASM_ERR_MALFORMED);
		}
	}
}
END_TEST

START_TEST(decode_mutations_never_crash)
{
	static const uint8_t values[] = {0x00, 0x01, 0x0b, 0x40,
					 0x7f, 0x80, 0xff};
	buf b;
	size_t ends[32], nends;
	unsigned ok = 0, failed = 0;

	build_full_module(&b, ends, &nends);
	for (size_t i = 8; i < b.n; i++) {
		for (size_t v = 0; v < sizeof values; v++) {
			uint8_t *copy = malloc(b.n);
			wasm_module *m = NULL;
			wasm_error e;

			ck_assert_ptr_nonnull(copy);
			memcpy(copy, b.d, b.n);
			copy[i] = values[v];
			if (wasm_decode(copy, b.n, &m, &e) == 0) {
				ok++;
				wasm_module_free(m);
			} else {
				failed++;
				ck_assert(e.msg[0] != '\0');
			}
			free(copy);
		}
	}
	/* Some mutations stay well-formed, most do not. */
	ck_assert_uint_gt(ok, 0);
	ck_assert_uint_gt(failed, ok);
}
END_TEST

START_TEST(decode_free_null)
{
	wasm_module_free(NULL);
}
END_TEST

/* ---- the shared core test suite ---------------------------------------- */

/*
 * Binary assert_malformed commands whose defect sits inside a function
 * body (an opcode, an immediate, the body's end or the data count needed
 * by memory.init/data.drop): the decoder keeps bodies as raw ranges, so
 * these are rejected by validation, not here.
 */
static const char *const body_level[] = {
	"align.json:968",	    /* memop flags >= 128 (i64.load) */
	"align.json:987",	    /* memop flags >= 128 (i64.store) */
	"binary-leb128.json:424",   /* memarg align with 6 bytes */
	"binary-leb128.json:443",   /* memarg align with 6 bytes (store) */
	"binary-leb128.json:769",   /* memarg align with unused bits */
	"binary-leb128.json:787",   /* memarg align with unused bits */
	"binary-leb128.json:806",   /* memarg align with unused bits (store) */
	"binary-leb128.json:825",   /* memarg align with unused bits (store) */
	"binary-leb128.json:985",   /* 0xfc subopcode with 6 bytes */
	"binary.json:56",	    /* body without end (between bodies) */
	"binary.json:77",	    /* body without end (at EOF) */
	"binary.json:93",	    /* body without end (before data) */
	"binary.json:303",	    /* memory.init without data count */
	"binary.json:326",	    /* data.drop without data count */
	"binary.json:923",	    /* br_table count past the body */
	"binary.json:1219",	    /* opcode 0xff */
	"binary_leb128_64.json:17", /* memarg offset 2^64 */
};
#define NBODY_LEVEL (sizeof body_level / sizeof body_level[0])

static const char *shared_dir(char *tmp, size_t size)
{
	const char *s = getenv("HOSTEL_SHARED");
	const char *src = getenv("HOSTEL_SRCDIR");

	if (s != NULL && *s)
		snprintf(tmp, size, "%s/core-testsuite", s);
	else if (src != NULL && *src)
		snprintf(tmp, size, "%s/../shared/core-testsuite", src);
	else
		snprintf(tmp, size, "../shared/core-testsuite");
	return tmp;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		p = malloc((size_t)n + 1);
		if (p != NULL && fread(p, 1, (size_t)n, f) != (size_t)n) {
			free(p);
			p = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Scripts whose group allows refusing modules as "not supported". */
static bool group_may_need_gc(json_t *groups, const char *json_name)
{
	static const char *const gs[] = {"gc", "function-references"};
	char wast[256];
	size_t n = strlen(json_name);

	if (n < 5 || n - 5 + 6 > sizeof wast)
		return false;
	memcpy(wast, json_name, n - 5);
	strcpy(wast + n - 5, ".wast");
	for (size_t g = 0; g < 2; g++) {
		json_t *files = json_object_get(
			json_object_get(json_object_get(groups, "groups"),
					gs[g]),
			"files");
		size_t i;
		json_t *f;

		json_array_foreach(files, i, f)
		{
			if (json_is_string(f) &&
			    strcmp(json_string_value(f), wast) == 0)
				return true;
		}
	}
	return false;
}

START_TEST(decode_core_testsuite)
{
	char dir[1024], path[2048];
	DIR *dp;
	struct dirent *de;
	char **names = NULL;
	size_t nnames = 0, cap = 0;
	json_t *groups;
	unsigned modules = 0, modules_ok = 0, unsupported = 0, malformed = 0,
		 caught = 0, missed = 0;
	bool seen[NBODY_LEVEL] = {false};

	shared_dir(dir, sizeof dir);
	dp = opendir(dir);
	if (dp == NULL) {
		printf("SKIP decode_core_testsuite: %s absent "
		       "(set HOSTEL_SHARED)\n",
		       dir);
		return;
	}
	while ((de = readdir(dp)) != NULL) {
		size_t n = strlen(de->d_name);

		if (n < 6 || strcmp(de->d_name + n - 5, ".json") != 0 ||
		    !strcmp(de->d_name, "groups.json") ||
		    !strcmp(de->d_name, "summary.json"))
			continue;
		if (nnames == cap) {
			cap = cap ? 2 * cap : 256;
			names = realloc(names, cap * sizeof *names);
			ck_assert_ptr_nonnull(names);
		}
		names[nnames] = strdup(de->d_name);
		ck_assert_ptr_nonnull(names[nnames]);
		nnames++;
	}
	closedir(dp);
	qsort(names, nnames, sizeof *names, cmp_str);
	snprintf(path, sizeof path, "%s/groups.json", dir);
	groups = json_load_file(path, 0, NULL);
	ck_assert_msg(groups != NULL, "cannot read %s", path);

	for (size_t i = 0; i < nnames; i++) {
		json_error_t jerr;
		json_t *root, *cmds, *cmd;
		size_t k, j;

		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		root = json_load_file(path, JSON_ALLOW_NUL, &jerr);
		ck_assert_msg(root != NULL, "%s: %s", path, jerr.text);
		cmds = json_object_get(root, "commands");
		json_array_foreach(cmds, k, cmd)
		{
			const char *type =
				json_string_value(json_object_get(cmd, "type"));
			const char *mt = json_string_value(
				json_object_get(cmd, "module_type"));
			const char *fn = json_string_value(
				json_object_get(cmd, "filename"));
			long line = (long)json_integer_value(
				json_object_get(cmd, "line"));
			bool is_module, is_malformed;
			wasm_module *m = NULL;
			wasm_error e;
			uint8_t *bytes;
			size_t len = 0;
			char where[300];
			int rc;

			if (type == NULL || mt == NULL || fn == NULL ||
			    strcmp(mt, "binary") != 0)
				continue;
			is_module = !strcmp(type, "module");
			is_malformed = !strcmp(type, "assert_malformed");
			if (!is_module && !is_malformed)
				continue;
			snprintf(where, sizeof where, "%s:%ld", names[i], line);
			snprintf(path, sizeof path, "%s/%s", dir, fn);
			bytes = read_file(path, &len);
			ck_assert_msg(bytes != NULL, "cannot read %s", path);
			rc = wasm_decode(bytes, len, &m, &e);
			free(bytes);
			/* A body-level defect needs a body to sit in. */
			ck_assert_msg(rc != 0 || is_module || m->ncodes > 0,
				      "%s: malformed module without code "
				      "decoded",
				      where);
			if (rc == 0)
				wasm_module_free(m);
			if (is_module) {
				modules++;
				if (rc == 0) {
					modules_ok++;
					continue;
				}
				ck_assert_msg(
					strstr(e.msg, "not supported") != NULL,
					"%s: module fails: %s (offset %zu)",
					where, e.msg, e.offset);
				ck_assert_msg(
					group_may_need_gc(groups, names[i]),
					"%s: refused outside the gc "
					"groups: %s",
					where, e.msg);
				unsupported++;
				continue;
			}
			malformed++;
			if (rc != 0) {
				caught++;
				continue;
			}
			missed++;
			for (j = 0; j < NBODY_LEVEL; j++)
				if (!strcmp(body_level[j], where))
					break;
			ck_assert_msg(j < NBODY_LEVEL,
				      "%s: malformed binary decoded and is "
				      "not a known body-level case",
				      where);
			seen[j] = true;
		}
		json_decref(root);
		free(names[i]);
	}
	free(names);
	json_decref(groups);
	for (size_t k = 0; k < NBODY_LEVEL; k++)
		ck_assert_msg(seen[k],
			      "%s is now caught (or gone): update "
			      "body_level",
			      body_level[k]);
	printf("core-testsuite: %u modules, %u decoded, %u refused as not "
	       "supported (gc/function-references); %u binary "
	       "assert_malformed, %u caught, %u left to validation "
	       "(body-level)\n",
	       modules, modules_ok, unsupported, malformed, caught, missed);
	ck_assert_uint_gt(modules, 1000);
	ck_assert_uint_eq(missed, NBODY_LEVEL);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("decode");
	TCase *tc = tcase_create("decode");
	TCase *suite = tcase_create("testsuite");

	tcase_add_test(tc, decode_empty_module);
	tcase_add_test(tc, decode_full_module);
	tcase_add_test(tc, decode_lookups);
	tcase_add_test(tc, decode_lookups_interleaved_imports);
	tcase_add_test(tc, decode_legal_edge_cases);
	tcase_add_test(tc, decode_padded_leb_count);
	tcase_add_loop_test(tc, decode_errors, 0,
			    (int)(sizeof bad_cases / sizeof bad_cases[0]));
	tcase_add_test(tc, reader_leb_widths);
	tcase_add_test(tc, reader_utf8);
	tcase_add_test(tc, decode_every_truncation_fails);
	tcase_add_test(tc, decode_mutations_never_crash);
	tcase_add_test(tc, decode_free_null);
	suite_add_tcase(s, tc);
	tcase_set_timeout(suite, 120);
	tcase_add_test(suite, decode_core_testsuite);
	suite_add_tcase(s, suite);
	return s;
}
