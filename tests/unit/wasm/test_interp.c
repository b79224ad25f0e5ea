/*
 * test_interp.c - the validator, compiler and interpreter, driven through
 * the public API with modules assembled by hand (see the tiny assembler
 * below): arithmetic, control flow, calls, traps, memory bounds, fuel,
 * host functions that block, deep suspensions, many suspended execs,
 * stack exhaustion, tail calls and exceptions.
 */
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "wasm/wasm.h"
#include "testmain.h"

/* ---- a tiny module assembler ---- */

typedef struct buf {
	uint8_t *p;
	size_t n, cap;
} buf;

static void put(buf *b, const void *data, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		ck_assert_ptr_nonnull(b->p);
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
}

static void put_u8(buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put_u32(buf *b, uint32_t v)
{
	do {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		put_u8(b, byte | (v ? 0x80 : 0));
	} while (v);
}

static void put_name(buf *b, const char *s)
{
	put_u32(b, (uint32_t)strlen(s));
	put(b, s, strlen(s));
}

static void put_section(buf *mod, uint8_t id, buf *sec)
{
	put_u8(mod, id);
	put_u32(mod, (uint32_t)sec->n);
	put(mod, sec->p, sec->n);
	free(sec->p);
	memset(sec, 0, sizeof *sec);
}

/* Value types as letters: i i32, I i64, f f32, F f64, r funcref, x exnref */
static uint8_t vt(char c)
{
	switch (c) {
	case 'i':
		return 0x7f;
	case 'I':
		return 0x7e;
	case 'f':
		return 0x7d;
	case 'F':
		return 0x7c;
	case 'r':
		return 0x70;
	case 'x':
		return 0x69;
	default:
		return 0x7b;
	}
}

static void put_types(buf *b, const char *s)
{
	put_u32(b, (uint32_t)strlen(s));
	for (; *s; s++)
		put_u8(b, vt(*s));
}

typedef struct sig {
	const char *params, *results;
} sig;

typedef struct fdef {
	uint32_t type;
	const char *locals;
	const uint8_t *body; /* without the final end */
	size_t len;
	const char *export; /* or NULL */
} fdef;

typedef struct mdef {
	const sig *types;
	uint32_t ntypes;
	const char *const *imports; /* function imports from "env" */
	const uint32_t *import_types;
	uint32_t nimports;
	const fdef *funcs;
	uint32_t nfuncs;
	uint32_t mem_pages; /* 0: no memory */
	uint32_t table_size;
	const uint32_t *elems; /* active segment at table offset 0 */
	uint32_t nelems;
	const uint32_t *tags; /* type indices */
	uint32_t ntags;
	uint32_t exn_table_size; /* a second table, of exnref, when not 0 */
	uint32_t exn_globals;	 /* mutable exnref globals, null at first */
} mdef;

static uint8_t *assemble(const mdef *d, size_t *len)
{
	buf m = {0}, s = {0};
	/* clang-format off */
	static const uint8_t header[] = {
		0, 'a', 's', 'm', 1, 0, 0, 0
	};
	/* clang-format on */

	put(&m, header, sizeof header);
	put_u32(&s, d->ntypes);
	for (uint32_t i = 0; i < d->ntypes; i++) {
		put_u8(&s, 0x60);
		put_types(&s, d->types[i].params);
		put_types(&s, d->types[i].results);
	}
	put_section(&m, 1, &s);
	if (d->nimports) {
		put_u32(&s, d->nimports);
		for (uint32_t i = 0; i < d->nimports; i++) {
			put_name(&s, "env");
			put_name(&s, d->imports[i]);
			put_u8(&s, 0);
			put_u32(&s, d->import_types[i]);
		}
		put_section(&m, 2, &s);
	}
	put_u32(&s, d->nfuncs);
	for (uint32_t i = 0; i < d->nfuncs; i++)
		put_u32(&s, d->funcs[i].type);
	put_section(&m, 3, &s);
	if (d->table_size || d->exn_table_size) {
		put_u32(&s, (d->table_size != 0) + (d->exn_table_size != 0));
		if (d->table_size) {
			put_u8(&s, 0x70);
			put_u8(&s, 0);
			put_u32(&s, d->table_size);
		}
		if (d->exn_table_size) {
			put_u8(&s, 0x69);
			put_u8(&s, 0);
			put_u32(&s, d->exn_table_size);
		}
		put_section(&m, 4, &s);
	}
	if (d->mem_pages) {
		put_u32(&s, 1);
		put_u8(&s, 0);
		put_u32(&s, d->mem_pages);
		put_section(&m, 5, &s);
	}
	if (d->ntags) {
		put_u32(&s, d->ntags);
		for (uint32_t i = 0; i < d->ntags; i++) {
			put_u8(&s, 0);
			put_u32(&s, d->tags[i]);
		}
		put_section(&m, 13, &s);
	}
	if (d->exn_globals) {
		put_u32(&s, d->exn_globals);
		for (uint32_t i = 0; i < d->exn_globals; i++) {
			static const uint8_t g[] = {0x69, 1, 0xd0, 0x69, 0x0b};
			put(&s, g, sizeof g);
		}
		put_section(&m, 6, &s);
	}
	{
		uint32_t n = 0;
		for (uint32_t i = 0; i < d->nfuncs; i++)
			n += d->funcs[i].export != NULL;
		put_u32(&s, n);
		for (uint32_t i = 0; i < d->nfuncs; i++) {
			if (!d->funcs[i].export)
				continue;
			put_name(&s, d->funcs[i].export);
			put_u8(&s, 0);
			put_u32(&s, d->nimports + i);
		}
		put_section(&m, 7, &s);
	}
	if (d->nelems) {
		put_u32(&s, 1);
		put_u8(&s, 0);
		put_u8(&s, 0x41);
		put_u8(&s, 0);
		put_u8(&s, 0x0b);
		put_u32(&s, d->nelems);
		for (uint32_t i = 0; i < d->nelems; i++)
			put_u32(&s, d->elems[i]);
		put_section(&m, 9, &s);
	}
	put_u32(&s, d->nfuncs);
	for (uint32_t i = 0; i < d->nfuncs; i++) {
		buf f = {0};
		const char *l = d->funcs[i].locals ? d->funcs[i].locals : "";
		put_u32(&f, (uint32_t)strlen(l));
		for (; *l; l++) {
			put_u8(&f, 1);
			put_u8(&f, vt(*l));
		}
		put(&f, d->funcs[i].body, d->funcs[i].len);
		put_u8(&f, 0x0b);
		put_u32(&s, (uint32_t)f.n);
		put(&s, f.p, f.n);
		free(f.p);
	}
	put_section(&m, 10, &s);
	*len = m.n;
	return m.p;
}

/* Padded LEB128 immediates, so bodies can be written as byte arrays. */
#define LEB5(v)                                                                \
	(uint8_t)(((uint32_t)(v)&0x7f) | 0x80),                                \
		(uint8_t)((((uint32_t)(v) >> 7) & 0x7f) | 0x80),               \
		(uint8_t)((((uint32_t)(v) >> 14) & 0x7f) | 0x80),              \
		(uint8_t)((((uint32_t)(v) >> 21) & 0x7f) | 0x80)
#define I32C(v)                                                                \
	0x41, LEB5(v),                                                         \
		(uint8_t)((((uint32_t)(v) >> 28) & 0x0f) |                     \
			  ((int32_t)(v) < 0 ? 0x70 : 0))
#define U32P(v) LEB5(v), (uint8_t)(((uint32_t)(v) >> 28) & 0x0f)

#define LOCAL_GET(x) 0x20, x
#define LOCAL_SET(x) 0x21, x
#define LOCAL_TEE(x) 0x22, x
#define CALL(x)	     0x10, x
#define END	     0x0b
#define I32_ADD	     0x6a
#define I32_SUB	     0x6b
#define I32_MUL	     0x6c

#define FN(t, loc, b, exp)                                                     \
	{                                                                      \
		t, loc, b, sizeof b, exp                                       \
	}
#define COUNT(a) (uint32_t)(sizeof a / sizeof a[0])

/* ---- running ---- */

typedef struct env {
	wasm_store *store;
	wasm_module *mod;
	wasm_instance *inst;
	wasm_exec *exec;
} env;

static int load(const mdef *d, wasm_module **m, wasm_error *err)
{
	size_t len;
	uint8_t *bin = assemble(d, &len);
	int rc = wasm_module_load(bin, len, m, err);
	free(bin);
	return rc;
}

static void setup(env *e, const mdef *d, const wasm_extern *imports,
		  wasm_store *shared)
{
	wasm_error err;
	wasm_trap_kind trap = WASM_TRAP_NONE;

	memset(&err, 0, sizeof err);
	e->store = shared ? shared : wasm_store_new(NULL);
	ck_assert_ptr_nonnull(e->store);
	if (load(d, &e->mod, &err))
		ck_abort_msg("load failed: %s", err.msg);
	if (wasm_instantiate(e->store, e->mod, imports, d->nimports, &e->inst,
			     &trap, &err))
		ck_abort_msg("instantiate failed: %s (trap %d)", err.msg,
			     (int)trap);
	e->exec = wasm_exec_new(e->store, NULL);
	ck_assert_ptr_nonnull(e->exec);
}

static void teardown(env *e, bool free_store)
{
	wasm_exec_free(e->exec);
	if (free_store)
		wasm_store_free(e->store);
	wasm_module_free(e->mod);
}

static wasm_func *export_func(env *e, const char *name)
{
	wasm_extern x;

	ck_assert(wasm_instance_export(e->inst, (const uint8_t *)name,
				       strlen(name), &x));
	ck_assert_int_eq(x.kind, WASM_EXTERN_FUNC);
	return x.u.func;
}

static wasm_val i32v(uint32_t v)
{
	wasm_val x;
	memset(&x, 0, sizeof x);
	x.type = WASM_I32;
	x.u.i32 = v;
	return x;
}

static wasm_val i64v(uint64_t v)
{
	wasm_val x;
	memset(&x, 0, sizeof x);
	x.type = WASM_I64;
	x.u.i64 = v;
	return x;
}

/* Call and expect one i32 result. */
static uint32_t call_i32(env *e, const char *name, uint32_t nargs, ...)
{
	wasm_val args[8], res[4];
	va_list ap;
	wasm_exec_status st;

	va_start(ap, nargs);
	for (uint32_t i = 0; i < nargs; i++)
		args[i] = i32v(va_arg(ap, uint32_t));
	va_end(ap);
	st = wasm_exec_call(e->exec, export_func(e, name), args, nargs);
	if (st != WASM_EXEC_DONE)
		ck_abort_msg("%s: status %d (%s)", name, (int)st,
			     wasm_exec_trap_message(e->exec));
	ck_assert_uint_eq(wasm_exec_results(e->exec, res, 4), 1);
	ck_assert_int_eq(res[0].type, WASM_I32);
	return res[0].u.i32;
}

static wasm_trap_kind call_trap(env *e, const char *name, uint32_t nargs, ...)
{
	wasm_val args[8];
	va_list ap;

	va_start(ap, nargs);
	for (uint32_t i = 0; i < nargs; i++)
		args[i] = i32v(va_arg(ap, uint32_t));
	va_end(ap);
	ck_assert_int_eq(
		wasm_exec_call(e->exec, export_func(e, name), args, nargs),
		WASM_EXEC_TRAP);
	return wasm_exec_trap(e->exec);
}

/* ---- arithmetic ---- */

static const sig sig_ii_i[] = {{"ii", "i"}};

START_TEST(arith_i32)
{
	/* (a + b) * (a - b), then xor 7, then shl 1 */
	/* clang-format off */
	static const uint8_t body[] = {
		LOCAL_GET(0), LOCAL_GET(1), I32_ADD, LOCAL_GET(0),
		LOCAL_GET(1), I32_SUB, I32_MUL, 0x41, 7, 0x73, 0x41, 1, 0x74
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t divs[] = {
		LOCAL_GET(0), LOCAL_GET(1), 0x6d
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t rems[] = {
		LOCAL_GET(0), LOCAL_GET(1), 0x6f
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, NULL, body, "f"),
				  FN(0, NULL, divs, "div_s"),
				  FN(0, NULL, rems, "rem_s")};
	static const mdef d = {.types = sig_ii_i,
			       .ntypes = 1,
			       .funcs = fs,
			       .nfuncs = COUNT(fs)};
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_uint_eq(call_i32(&e, "f", 2, 7, 3), ((10u * 4u) ^ 7u) << 1);
	ck_assert_uint_eq(call_i32(&e, "f", 2, 3, 7), ((10u * -4u) ^ 7u) << 1);
	ck_assert_uint_eq(call_i32(&e, "div_s", 2, -7, 2), (uint32_t)-3);
	ck_assert_uint_eq(call_i32(&e, "rem_s", 2, 0x80000000u, -1), 0);
	ck_assert_int_eq(call_trap(&e, "div_s", 2, 1, 0),
			 WASM_TRAP_INT_DIV_ZERO);
	ck_assert_int_eq(call_trap(&e, "div_s", 2, 0x80000000u, -1),
			 WASM_TRAP_INT_OVERFLOW);
	teardown(&e, true);
}
END_TEST

START_TEST(arith_i64_and_consts)
{
	/* (i64) x * 0x100000001 + 5, returned as i64 */
	static const sig t[] = {{"I", "I"}};
	/* clang-format off */
	static const uint8_t body[] = {
		LOCAL_GET(0),
		0x42, 0x81, 0x80, 0x80, 0x80, 0x10,     /* i64.const 2^32 + 1 */
		0x7e, 0x42, 5, 0x7c
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, NULL, body, "f")};
	static const mdef d = {
		.types = t, .ntypes = 1, .funcs = fs, .nfuncs = 1};
	wasm_val a = i64v(3), r;
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_int_eq(wasm_exec_call(e.exec, export_func(&e, "f"), &a, 1),
			 WASM_EXEC_DONE);
	ck_assert_uint_eq(wasm_exec_results(e.exec, &r, 1), 1);
	ck_assert_int_eq(r.type, WASM_I64);
	ck_assert_uint_eq(r.u.i64, 3 * 0x100000001ull + 5);
	teardown(&e, true);
}
END_TEST

/* ---- control flow ---- */

START_TEST(loop_sum)
{
	/* sum = 0; i = n; loop { sum += i; i -= 1; br_if i != 0 }; sum */
	static const sig t[] = {{"i", "i"}};
	/* clang-format off */
	static const uint8_t body[] = {
		0x03, 0x40,                                 /* loop */
		LOCAL_GET(1), LOCAL_GET(0), I32_ADD, LOCAL_SET(1), /* sum += i */
		LOCAL_GET(0), 0x41, 1, I32_SUB, LOCAL_TEE(0),      /* i -= 1 */
		0x41, 0, 0x47, 0x0d, 0,                     /* br_if i != 0 */
		END, LOCAL_GET(1)
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, "i", body, "sum")};
	static const mdef d = {
		.types = t, .ntypes = 1, .funcs = fs, .nfuncs = 1};
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_uint_eq(call_i32(&e, "sum", 1, 100), 5050);
	ck_assert_uint_eq(call_i32(&e, "sum", 1, 100000), 705082704u);
	teardown(&e, true);
}
END_TEST

START_TEST(if_else_and_multivalue)
{
	/*
	 * type 1: [i32 i32] -> [i32 i32] used as a block type: swap the
	 * pair through an if with params, then subtract.
	 */
	static const sig t[] = {{"ii", "i"}, {"ii", "ii"}};
	/* clang-format off */
	static const uint8_t body[] = {
		LOCAL_GET(0), LOCAL_GET(1), LOCAL_GET(0), LOCAL_GET(1), 0x48,
		0x04, 1,                        /* if (type 1): a < b */
		LOCAL_SET(2), LOCAL_SET(3), LOCAL_GET(2), LOCAL_GET(3), /* swap */
		0x05, END,                      /* else: as they are */
		I32_SUB
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, "ii", body, "absdiff")};
	static const mdef d = {
		.types = t, .ntypes = 2, .funcs = fs, .nfuncs = 1};
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_uint_eq(call_i32(&e, "absdiff", 2, 10, 3), 7);
	ck_assert_uint_eq(call_i32(&e, "absdiff", 2, 3, 10), 7);
	teardown(&e, true);
}
END_TEST

START_TEST(br_table_switch)
{
	/* block block block (br_table 0 1 2 default 2 on x) ... */
	static const sig t[] = {{"i", "i"}};
	/* clang-format off */
	static const uint8_t body[] = {
		0x02, 0x40, 0x02, 0x40, 0x02, 0x40, LOCAL_GET(0), 0x0e, 2, 0,
		1, 2,                           /* br_table 0 1, default 2 */
		END, 0x41, 10, 0x0f,            /* case 0: return 10 */
		END, 0x41, 20, 0x0f,            /* case 1: return 20 */
		END, 0x41, 30                   /* default: 30 */
	};
	/* clang-format on */ /* default: 30 */
	static const fdef fs[] = {FN(0, NULL, body, "sw")};
	static const mdef d = {
		.types = t, .ntypes = 1, .funcs = fs, .nfuncs = 1};
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_uint_eq(call_i32(&e, "sw", 1, 0), 10);
	ck_assert_uint_eq(call_i32(&e, "sw", 1, 1), 20);
	ck_assert_uint_eq(call_i32(&e, "sw", 1, 2), 30);
	ck_assert_uint_eq(call_i32(&e, "sw", 1, 0xffffffffu), 30);
	teardown(&e, true);
}
END_TEST

START_TEST(br_table_with_values)
{
	/* block (result i32): 7 on the stack, br_table carries it out */
	static const sig t[] = {{"i", "i"}};
	/* clang-format off */
	static const uint8_t body[] = {
		0x02, 0x7f, 0x02, 0x7f, 0x41, 7, LOCAL_GET(0), 0x0e, 1, 0, 1,
		END, I32C(100), I32_ADD, END
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, NULL, body, "f")};
	static const mdef d = {
		.types = t, .ntypes = 1, .funcs = fs, .nfuncs = 1};
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_uint_eq(call_i32(&e, "f", 1, 0), 107);
	ck_assert_uint_eq(call_i32(&e, "f", 1, 1), 7);
	teardown(&e, true);
}
END_TEST

/* ---- calls ---- */

START_TEST(calls_and_recursion)
{
	/* fib(n) = n < 2 ? n : fib(n-1) + fib(n-2); twice(x) = inc(inc(x)) */
	static const sig t[] = {{"i", "i"}};
	/* clang-format off */
	static const uint8_t fib[] = {
		LOCAL_GET(0), 0x41, 2, 0x48, 0x04, 0x7f, LOCAL_GET(0), 0x05,
		LOCAL_GET(0), 0x41, 1, I32_SUB, CALL(0), LOCAL_GET(0), 0x41,
		2, I32_SUB, CALL(0), I32_ADD, END
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t inc[] = {
		LOCAL_GET(0), 0x41, 1, I32_ADD
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t twice[] = {
		LOCAL_GET(0), CALL(1), CALL(1)
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, NULL, fib, "fib"),
				  FN(0, NULL, inc, NULL),
				  FN(0, NULL, twice, "twice")};
	static const mdef d = {
		.types = t, .ntypes = 1, .funcs = fs, .nfuncs = 3};
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_uint_eq(call_i32(&e, "fib", 1, 20), 6765);
	ck_assert_uint_eq(call_i32(&e, "twice", 1, 10), 12);
	teardown(&e, true);
}
END_TEST

START_TEST(call_indirect_traps)
{
	/*
	 * table: [f0: i32->i32, f1: ->i32, null, null]; call(i) calls entry
	 * i as i32->i32 with argument 5.
	 */
	static const sig t[] = {{"i", "i"}, {"", "i"}, {"ii", "i"}};
	/* clang-format off */
	static const uint8_t inc[] = {
		LOCAL_GET(0), 0x41, 1, I32_ADD
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t k[] = {
		0x41, 9
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t call[] = {
		0x41, 5, LOCAL_GET(0), 0x11, 0, 0
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, NULL, inc, NULL), FN(1, NULL, k, NULL),
				  FN(0, NULL, call, "call")};
	static const uint32_t elems[] = {0, 1};
	static const mdef d = {.types = t,
			       .ntypes = 3,
			       .funcs = fs,
			       .nfuncs = 3,
			       .table_size = 4,
			       .elems = elems,
			       .nelems = 2};
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_uint_eq(call_i32(&e, "call", 1, 0), 6);
	ck_assert_int_eq(call_trap(&e, "call", 1, 1),
			 WASM_TRAP_INDIRECT_CALL_TYPE);
	ck_assert_int_eq(call_trap(&e, "call", 1, 2),
			 WASM_TRAP_UNINITIALIZED_ELEMENT);
	ck_assert_int_eq(call_trap(&e, "call", 1, 4),
			 WASM_TRAP_UNDEFINED_ELEMENT);
	ck_assert_str_eq(wasm_exec_trap_message(e.exec), "undefined element");
	/* the exec is reusable after a trap */
	ck_assert_uint_eq(call_i32(&e, "call", 1, 0), 6);
	teardown(&e, true);
}
END_TEST

/* ---- memory ---- */

START_TEST(memory_bounds)
{
	/* store(a, v): i32.store; load(a): i32.load offset=4 */
	static const sig t[] = {{"ii", ""}, {"i", "i"}};
	/* clang-format off */
	static const uint8_t st[] = {
		LOCAL_GET(0), LOCAL_GET(1), 0x36, 2, 0
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t ld[] = {
		LOCAL_GET(0), 0x28, 2, 4
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t ld8[] = {
		LOCAL_GET(0), 0x2c, 0, 0
	};
	/* clang-format on */ /* load8_s */
	static const fdef fs[] = {FN(0, NULL, st, "store"),
				  FN(1, NULL, ld, "load"),
				  FN(1, NULL, ld8, "load8_s")};
	static const mdef d = {.types = t,
			       .ntypes = 2,
			       .funcs = fs,
			       .nfuncs = 3,
			       .mem_pages = 1};
	wasm_val args[2] = {i32v(65532), i32v(0xdeadbeef)};
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_int_eq(
		wasm_exec_call(e.exec, export_func(&e, "store"), args, 2),
		WASM_EXEC_DONE);
	ck_assert_uint_eq(call_i32(&e, "load", 1, 65528), 0xdeadbeef);
	ck_assert_uint_eq(call_i32(&e, "load8_s", 1, 65535), 0xffffffde);
	ck_assert_int_eq(call_trap(&e, "load", 1, 65529), WASM_TRAP_MEMORY_OOB);
	ck_assert_int_eq(call_trap(&e, "load", 1, 0xfffffffc),
			 WASM_TRAP_MEMORY_OOB);
	ck_assert_int_eq(call_trap(&e, "load8_s", 1, 65536),
			 WASM_TRAP_MEMORY_OOB);
	args[0] = i32v(65533);
	ck_assert_int_eq(
		wasm_exec_call(e.exec, export_func(&e, "store"), args, 2),
		WASM_EXEC_TRAP);
	ck_assert_int_eq(wasm_exec_trap(e.exec), WASM_TRAP_MEMORY_OOB);
	teardown(&e, true);
}
END_TEST

START_TEST(folded_addresses_survive_later_pushes)
{
	/*
	 * store(16 + x * 4, y * 2), then load it back.  The address is an
	 * i32.add whose upper operand is a computed value; the value computed
	 * next lands in the slot just above the address: the folded address
	 * must not read that slot.  Same with slot + slot (x * 4 + y), and an
	 * address whose base local is overwritten before the access.
	 */
	static const sig t[] = {{"ii", "i"}};
	/* clang-format off */
	static const uint8_t body[] = {
		0x41, 16, LOCAL_GET(0), 0x41, 4, I32_MUL, I32_ADD,
		LOCAL_GET(1), 0x41, 2, I32_MUL,
		0x36, 2, 0,                             /* i32.store */
		LOCAL_GET(1), LOCAL_GET(0), 0x41, 4, I32_MUL, I32_ADD,
		LOCAL_GET(1), 0x41, 3, I32_MUL,
		0x36, 2, 0,                             /* i32.store */
		LOCAL_GET(0), 0x41, 4, I32_MUL, LOCAL_GET(1), I32_ADD,
		0x41, 0, LOCAL_SET(1),                  /* y = 0 */
		0x28, 2, 0,                             /* load x*4 + old y */
		0x41, 16, LOCAL_GET(0), 0x41, 4, I32_MUL, I32_ADD,
		0x28, 2, 0,                             /* i32.load */
		I32_ADD
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, NULL, body, "f")};
	static const mdef d = {.types = t,
			       .ntypes = 1,
			       .funcs = fs,
			       .nfuncs = 1,
			       .mem_pages = 1};
	env e;

	setup(&e, &d, NULL, NULL);
	/* mem[20] = 42, mem[25] = 63; result: mem[4 + 21] + mem[20] */
	ck_assert_uint_eq(call_i32(&e, "f", 2, 1, 21), 63 + 42);
	teardown(&e, true);
}
END_TEST

/*
 * Float read-modify-write shapes the compiler fuses (`*p op= expr` with
 * the load before or after expr, products of three, constant addresses,
 * a + sqrt product) and shapes it must not fuse (the loaded value changed
 * before the op, the address local rewritten in between).  The engine's
 * memory must match the same arithmetic done here in C, bit for bit.
 */
#define F64LD(o)  0x2b, 3, o
#define F64ST(o)  0x39, 3, o
#define F32LD(o)  0x2a, 2, o
#define F32ST(o)  0x38, 2, o
#define F64_ADD	  0xa0
#define F64_SUB	  0xa1
#define F64_MUL	  0xa2
#define F64_NEG	  0x9a
#define F64_SQRT  0x9f
#define F32_SUB	  0x93
#define DEMOTE	  0xb6
#define CVT(x, l) LOCAL_GET(x), 0xb7, LOCAL_SET(l)

static void rmw_model(uint8_t *m, uint32_t p, double y, double z)
{
	double v, w;
	float f;
	uint64_t k;
	uint32_t q;

#define RD(a)	 (memcpy(&v, m + (a), 8), v)
#define WR(a, x) (w = (x), memcpy(m + (a), &w, 8))
	WR(p, RD(p) - y * z);
	WR(p + 8, RD(p + 8) + y * z * y);
	WR(p + 16, y * z * y + RD(p + 16));
	WR(p + 24, y - RD(p + 24));
	WR(200, y + RD(200));
	WR(p + 40, y - z);
	WR(p + 48, -RD(p + 48) - y);
	WR(p + 56, y * sqrt(y * z));
	WR(p + 64, RD(p + 64) + y);
	p += 8;
	WR(p + 64, RD(p + 64) + y);
	memcpy(&f, m + p + 80, 4);
	f = f - (float)y;
	memcpy(m + p + 80, &f, 4);
	memcpy(&k, m + p + 96, 8);
	k = (uint64_t)(int64_t)y + k;
	memcpy(m + p + 96, &k, 8);
	memcpy(&k, m + 208, 8);
	k = (uint64_t)(int64_t)y + k;
	memcpy(m + 208, &k, 8);
	f = (float)y * (float)y;
	memcpy(m + p + 104, &f, 4);
	f = (float)y * sqrtf((float)y);
	memcpy(m + p + 108, &f, 4);
	WR(p + 120, y * z * y + RD(p + 120));
	q = p + 120;
	memcpy(m + p + 112, &q, 4);
#undef RD
#undef WR
}

START_TEST(float_read_modify_write)
{
	static const sig t[] = {{"iii", "i"}, {"i", "i"}};
	/* clang-format off */
	static const uint8_t upd[] = {
		CVT(1, 3), CVT(2, 4), LOCAL_GET(3), DEMOTE, LOCAL_SET(5),
		/* *p -= y * z (load first) */
		LOCAL_GET(0), LOCAL_GET(0), F64LD(0),
		LOCAL_GET(3), LOCAL_GET(4), F64_MUL, F64_SUB, F64ST(0),
		/* p[1] += y * z * y */
		LOCAL_GET(0), LOCAL_GET(0), F64LD(8),
		LOCAL_GET(3), LOCAL_GET(4), F64_MUL, LOCAL_GET(3), F64_MUL,
		F64_ADD, F64ST(8),
		/* p[2] = y * z * y + p[2] (load last) */
		LOCAL_GET(0), LOCAL_GET(3), LOCAL_GET(4), F64_MUL,
		LOCAL_GET(3), F64_MUL, LOCAL_GET(0), F64LD(16), F64_ADD,
		F64ST(16),
		/* p[3] = y - p[3] */
		LOCAL_GET(0), LOCAL_GET(3), LOCAL_GET(0), F64LD(24), F64_SUB,
		F64ST(24),
		/* mem[200] = y + mem[200] (constant address) */
		0x41, 0, LOCAL_GET(3), 0x41, 0, 0x2b, 3, U32P(200), F64_ADD,
		0x39, 3, U32P(200),
		/* p[5] = y - z */
		LOCAL_GET(0), LOCAL_GET(3), LOCAL_GET(4), F64_SUB, F64ST(40),
		/* p[6] = -p[6] - y: the loaded value changes first */
		LOCAL_GET(0), LOCAL_GET(0), F64LD(48), F64_NEG, LOCAL_GET(3),
		F64_SUB, F64ST(48),
		/* p[7] = y * sqrt(y * z) */
		LOCAL_GET(0), LOCAL_GET(3), LOCAL_GET(3), LOCAL_GET(4),
		F64_MUL, F64_SQRT, F64_MUL, F64ST(56),
		/* p[8] += y, p moving on in between */
		LOCAL_GET(0), LOCAL_GET(0), F64LD(64),
		LOCAL_GET(0), 0x41, 8, I32_ADD, LOCAL_SET(0),
		LOCAL_GET(3), F64_ADD, F64ST(64),
		/* then with the new p */
		LOCAL_GET(0), LOCAL_GET(0), F64LD(64), LOCAL_GET(3), F64_ADD,
		F64ST(64),
		/* f32: p[20] -= (float)y */
		LOCAL_GET(0), LOCAL_GET(0), F32LD(80), LOCAL_GET(5), F32_SUB,
		F32ST(80),
		/* i64: p[12] = (long)y + p[12]; mem[208] likewise */
		LOCAL_GET(0), LOCAL_GET(1), 0xac, LOCAL_GET(0), 0x29, 3, 96,
		0x7c, 0x37, 3, 96,
		0x41, 0, LOCAL_GET(1), 0xac, 0x41, 0, 0x29, 3, U32P(208), 0x7c,
		0x37, 3, U32P(208),
		/* f32: p[26] = fy * fy; p[27] = fy * sqrt(fy) */
		LOCAL_GET(0), LOCAL_GET(5), LOCAL_GET(5), 0x94, F32ST(104),
		LOCAL_GET(0), LOCAL_GET(5), LOCAL_GET(5), 0x91, 0x94, F32ST(108),
		/* q = p + 120; *q += y * z * y; p[14] = q */
		LOCAL_GET(0), 0x41, 0xf8, 0x00, I32_ADD, LOCAL_TEE(6),
		LOCAL_GET(3), LOCAL_GET(4), F64_MUL, LOCAL_GET(3), F64_MUL,
		LOCAL_GET(6), F64LD(0), F64_ADD, F64ST(0),
		LOCAL_GET(0), LOCAL_GET(6), 0x36, 2, 112,
		0x41, 0
	};
	static const uint8_t rd[] = {
		LOCAL_GET(0), 0x28, 2, 0
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, "FFfi", upd, "upd"),
				  FN(1, NULL, rd, "rd")};
	static const mdef d = {.types = t,
			       .ntypes = 2,
			       .funcs = fs,
			       .nfuncs = 2,
			       .mem_pages = 1};
	static const int32_t ys[][2] = {{3, 5}, {-7, 2}, {11, 13}, {2, 9}};
	uint8_t model[512];
	env e;

	memset(model, 0, sizeof model);
	setup(&e, &d, NULL, NULL);
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_uint_eq(call_i32(&e, "upd", 3, 16, (uint32_t)ys[i][0],
					   (uint32_t)ys[i][1]),
				  0);
		rmw_model(model, 16, ys[i][0], ys[i][1]);
	}
	for (uint32_t a = 0; a < sizeof model; a += 4) {
		uint32_t want;
		memcpy(&want, model + a, 4);
		ck_assert_msg(call_i32(&e, "rd", 1, a) == want,
			      "memory at %u differs", a);
	}
	/* the first read-modify-write traps, before any store */
	ck_assert_int_eq(call_trap(&e, "upd", 3, 65532, 1, 1),
			 WASM_TRAP_MEMORY_OOB);
	ck_assert_uint_eq(call_i32(&e, "rd", 1, 65528), 0);
	teardown(&e, true);
}
END_TEST

/* ---- fuel ---- */

START_TEST(fuel_exhaustion_and_continue)
{
	static const sig t[] = {{"i", "i"}};
	/* clang-format off */
	static const uint8_t body[] = {
		0x03, 0x40, LOCAL_GET(1), LOCAL_GET(0), I32_ADD, LOCAL_SET(1),
		LOCAL_GET(0), 0x41, 1, I32_SUB, LOCAL_TEE(0), 0x0d, 0, END,
		LOCAL_GET(1)
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, "i", body, "sum")};
	static const mdef d = {
		.types = t, .ntypes = 1, .funcs = fs, .nfuncs = 1};
	wasm_val a = i32v(1000), r;
	wasm_exec_status st;
	int stops = 0;
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_uint_eq(wasm_exec_fuel(e.exec), UINT64_MAX);
	wasm_exec_set_fuel(e.exec, 100);
	st = wasm_exec_call(e.exec, export_func(&e, "sum"), &a, 1);
	while (st == WASM_EXEC_OUT_OF_FUEL) {
		stops++;
		ck_assert_uint_eq(wasm_exec_fuel(e.exec), 0);
		/* a second call while suspended is refused, state kept */
		ck_assert_int_eq(
			wasm_exec_call(e.exec, export_func(&e, "sum"), &a, 1),
			WASM_EXEC_TRAP);
		wasm_exec_set_fuel(e.exec, 100);
		st = wasm_exec_continue(e.exec);
	}
	ck_assert_int_eq(st, WASM_EXEC_DONE);
	ck_assert_int_ge(stops, 9);
	ck_assert_uint_eq(wasm_exec_results(e.exec, &r, 1), 1);
	ck_assert_uint_eq(r.u.i32, 500500);
	teardown(&e, true);
}
END_TEST

/*
 * A bulk op's work takes fuel by its size (interp.c BULK: one per 16
 * bytes, a table element counting 8): a fill of a whole page costs at
 * least 4096 more than a fill of nothing, and under a budget below that
 * a loop of fills stops after its first round.
 */
START_TEST(bulk_ops_take_fuel_by_size)
{
	static const sig t[] = {{"i", ""}};
	/* clang-format off */
	static const uint8_t fill[] = {	/* memory.fill(0, 7, n) */
		0x41, 0, 0x41, 7, LOCAL_GET(0), 0xfc, 11, 0
	};
	static const uint8_t copy[] = {	/* memory.copy(0, 0, n) */
		0x41, 0, 0x41, 0, LOCAL_GET(0), 0xfc, 10, 0, 0
	};
	static const uint8_t spin[] = {	/* loop: memory.fill(0, 1, n) */
		0x03, 0x40, 0x41, 0, 0x41, 1, LOCAL_GET(0), 0xfc, 11, 0,
		0x0c, 0, END
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, NULL, fill, "fill"),
				  FN(0, NULL, copy, "copy"),
				  FN(0, NULL, spin, "spin")};
	static const mdef d = {.types = t,
			       .ntypes = 1,
			       .funcs = fs,
			       .nfuncs = 3,
			       .mem_pages = 1};
	const char *ops[] = {"fill", "copy"};
	wasm_val zero = i32v(0), page = i32v(65536);
	env e;

	setup(&e, &d, NULL, NULL);
	for (int k = 0; k < 2; k++) {
		uint64_t small, big;

		wasm_exec_set_fuel(e.exec, 1000000);
		ck_assert_int_eq(wasm_exec_call(e.exec,
						export_func(&e, ops[k]),
						&zero, 1),
				 WASM_EXEC_DONE);
		small = 1000000 - wasm_exec_fuel(e.exec);
		wasm_exec_set_fuel(e.exec, 1000000);
		ck_assert_int_eq(wasm_exec_call(e.exec,
						export_func(&e, ops[k]),
						&page, 1),
				 WASM_EXEC_DONE);
		big = 1000000 - wasm_exec_fuel(e.exec);
		ck_assert_msg(big >= small + 65536 / 16,
			      "%s of a page took %llu fuel, of nothing %llu",
			      ops[k], (unsigned long long)big,
			      (unsigned long long)small);
	}
	/* 1000 fuel: one round of page fills, then the back-edge stops it */
	wasm_exec_set_fuel(e.exec, 1000);
	ck_assert_int_eq(wasm_exec_call(e.exec, export_func(&e, "spin"),
					&page, 1),
			 WASM_EXEC_OUT_OF_FUEL);
	ck_assert_uint_eq(wasm_exec_fuel(e.exec), 0);
	teardown(&e, true);
}
END_TEST

/* ---- host functions that block ---- */

struct host_state {
	int calls;
	bool block;
};

static wasm_host_status host_get(wasm_exec *x, void *envp, const wasm_val *args,
				 wasm_val *results)
{
	struct host_state *hs = envp;

	hs->calls++;
	if (hs->block)
		return WASM_HOST_BLOCK;
	results[0] = i32v(1000);
	return WASM_HOST_OK;
}

static wasm_host_status host_trap(wasm_exec *x, void *envp,
				  const wasm_val *args, wasm_val *results)
{
	wasm_exec_set_host_trap(x, "host said no");
	return WASM_HOST_TRAP;
}

/*
 * deep(n) = n == 0 ? get() : deep(n - 1) + 1, with `get` imported.
 * Non-tail recursion keeps n frames alive across the block.
 */
static const sig deep_types[] = {{"", "i"}, {"i", "i"}};
static const char *const deep_imports[] = {"get"};
static const uint32_t deep_import_types[] = {0};
static const uint8_t deep_body[] = {
	LOCAL_GET(0), 0x45,    0x04, 0x7f, CALL(0), 0x05, LOCAL_GET(0), 0x41, 1,
	I32_SUB,      CALL(1), 0x41, 1,	   I32_ADD, END};
static const fdef deep_funcs[] = {FN(1, NULL, deep_body, "deep")};
static const mdef deep_mod = {.types = deep_types,
			      .ntypes = 2,
			      .imports = deep_imports,
			      .import_types = deep_import_types,
			      .nimports = 1,
			      .funcs = deep_funcs,
			      .nfuncs = 1};

static wasm_extern host_import(wasm_store *s, wasm_host_fn fn, void *envp)
{
	static const wasm_valtype res[] = {WASM_I32};
	wasm_functype ft = {0, 1, NULL, (wasm_valtype *)res};
	wasm_extern x;

	x.kind = WASM_EXTERN_FUNC;
	x.u.func = wasm_func_new_host(s, &ft, fn, envp);
	ck_assert_ptr_nonnull(x.u.func);
	return x;
}

START_TEST(host_block_and_resume)
{
	struct host_state hs = {0, true};
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern imp = host_import(s, host_get, &hs);
	wasm_val a = i32v(3), r = i32v(41);
	env e;

	setup(&e, &deep_mod, &imp, s);
	ck_assert_int_eq(wasm_exec_call(e.exec, export_func(&e, "deep"), &a, 1),
			 WASM_EXEC_BLOCKED);
	ck_assert_int_eq(hs.calls, 1);
	/* resume with a wrong result type is refused; the call stays */
	ck_assert_int_eq(wasm_exec_resume(e.exec, &a, 0), WASM_EXEC_TRAP);
	ck_assert_int_eq(wasm_exec_resume(e.exec, &r, 1), WASM_EXEC_DONE);
	ck_assert_uint_eq(wasm_exec_results(e.exec, &r, 1), 1);
	ck_assert_uint_eq(r.u.i32, 44);
	/* not blocking: plain host call */
	hs.block = false;
	ck_assert_uint_eq(call_i32(&e, "deep", 1, 2), 1002);
	/* block, then make the host call trap */
	hs.block = true;
	ck_assert_int_eq(wasm_exec_call(e.exec, export_func(&e, "deep"), &a, 1),
			 WASM_EXEC_BLOCKED);
	ck_assert_int_eq(wasm_exec_resume_trap(e.exec, "cancelled"),
			 WASM_EXEC_TRAP);
	ck_assert_int_eq(wasm_exec_trap(e.exec), WASM_TRAP_HOST);
	ck_assert_str_eq(wasm_exec_trap_message(e.exec), "cancelled");
	teardown(&e, true);
}
END_TEST

START_TEST(host_trap_message)
{
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern imp = host_import(s, host_trap, NULL);
	env e;

	setup(&e, &deep_mod, &imp, s);
	ck_assert_int_eq(call_trap(&e, "deep", 1, 5), WASM_TRAP_HOST);
	ck_assert_str_eq(wasm_exec_trap_message(e.exec), "host said no");
	teardown(&e, true);
}
END_TEST

START_TEST(deep_suspension)
{
	struct host_state hs = {0, true};
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern imp = host_import(s, host_get, &hs);
	wasm_val a = i32v(10000), r = i32v(5);
	env e;

	setup(&e, &deep_mod, &imp, s);
	ck_assert_int_eq(wasm_exec_call(e.exec, export_func(&e, "deep"), &a, 1),
			 WASM_EXEC_BLOCKED);
	ck_assert_int_eq(wasm_exec_resume(e.exec, &r, 1), WASM_EXEC_DONE);
	ck_assert_uint_eq(wasm_exec_results(e.exec, &r, 1), 1);
	ck_assert_uint_eq(r.u.i32, 10005);
	teardown(&e, true);
}
END_TEST

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

START_TEST(many_suspended_execs)
{
	enum { N = 10000 };
	struct host_state hs = {0, true};
	wasm_store *s = wasm_store_new(NULL);
	wasm_extern imp = host_import(s, host_get, &hs);
	wasm_exec **xs = calloc(N, sizeof *xs);
	wasm_func *f;
	size_t before, after;
	env e;

	setup(&e, &deep_mod, &imp, s);
	f = export_func(&e, "deep");
	before = heap_in_use();
	for (uint32_t i = 0; i < N; i++) {
		wasm_val a = i32v(i % 4);
		xs[i] = wasm_exec_new(s, NULL);
		ck_assert_ptr_nonnull(xs[i]);
		ck_assert_int_eq(wasm_exec_call(xs[i], f, &a, 1),
				 WASM_EXEC_BLOCKED);
	}
	after = heap_in_use();
	/* the target is < 200 MiB for 10,000; we are far below it */
	ck_assert_msg(after - before < 200u * 1024 * 1024,
		      "%zu bytes for %d suspended execs", after - before, N);
	ck_assert_msg(after - before < 4096u * N,
		      "%zu bytes for %d suspended execs", after - before, N);
	for (uint32_t i = N; i-- > 0;) {
		wasm_val r = i32v(i);
		ck_assert_int_eq(wasm_exec_resume(xs[i], &r, 1),
				 WASM_EXEC_DONE);
		ck_assert_uint_eq(wasm_exec_results(xs[i], &r, 1), 1);
		ck_assert_uint_eq(r.u.i32, i + i % 4);
		wasm_exec_free(xs[i]);
	}
	free(xs);
	teardown(&e, true);
}
END_TEST

/* ---- stack exhaustion and tail calls ---- */

START_TEST(infinite_recursion_traps)
{
	static const sig t[] = {{"i", "i"}};
	/* clang-format off */
	static const uint8_t body[] = {
		LOCAL_GET(0), 0x41, 1, I32_ADD, CALL(0)
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, "IIII", body, "runaway")};
	static const mdef d = {
		.types = t, .ntypes = 1, .funcs = fs, .nfuncs = 1};
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_int_eq(call_trap(&e, "runaway", 1, 0),
			 WASM_TRAP_STACK_EXHAUSTED);
	ck_assert_str_eq(wasm_exec_trap_message(e.exec),
			 "call stack exhausted");
	/* and a tight depth limit from the config */
	wasm_exec_free(e.exec);
	{
		wasm_exec_config cfg = {0, 100};
		e.exec = wasm_exec_new(e.store, &cfg);
	}
	ck_assert_int_eq(call_trap(&e, "runaway", 1, 0),
			 WASM_TRAP_STACK_EXHAUSTED);
	teardown(&e, true);
}
END_TEST

START_TEST(tail_call_million)
{
	/*
	 * count(n, acc) = n == 0 ? acc : return_call count(n - 1, acc + 2);
	 * via(n) = return_call_indirect count through the table.
	 */
	static const sig t[] = {{"ii", "i"}};
	/* clang-format off */
	static const uint8_t count[] = {
		LOCAL_GET(0), 0x45, 0x04, 0x40, LOCAL_GET(1), 0x0f, END,
		LOCAL_GET(0), 0x41, 1, I32_SUB, LOCAL_GET(1), 0x41, 2,
		I32_ADD, 0x12, 0
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t via[] = {
		LOCAL_GET(0), LOCAL_GET(1), 0x41, 0, 0x13, 0, 0
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, NULL, count, "count"),
				  FN(0, NULL, via, "via")};
	static const uint32_t elems[] = {0};
	static const mdef d = {.types = t,
			       .ntypes = 1,
			       .funcs = fs,
			       .nfuncs = 2,
			       .table_size = 1,
			       .elems = elems,
			       .nelems = 1};
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_uint_eq(call_i32(&e, "count", 2, 1000000, 0), 2000000);
	ck_assert_uint_eq(call_i32(&e, "via", 2, 1000000, 1), 2000001);
	teardown(&e, true);
}
END_TEST

/* ---- exceptions ---- */

START_TEST(exceptions_throw_catch)
{
	/*
	 * tag 0: [i32].  thrower(x) throws x * 2 when x != 0.
	 * catcher(x): block (result i32) { try_table (catch tag 0 -> the
	 * block) { thrower(x) } return -1 } + 1, i.e. -1 when nothing is
	 * thrown and payload + 1 when the tag is caught.
	 */
	static const sig t[] = {{"i", ""}, {"i", "i"}};
	/* clang-format off */
	static const uint8_t thrower[] = {
		LOCAL_GET(0), 0x04, 0x40, LOCAL_GET(0), 0x41, 2, I32_MUL,
		0x08, 0, END
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t catcher[] = {
		0x02, 0x7f,                     /* block (result i32) */
		0x1f, 0x40, 1, 0x00, 0, 0,      /* try_table (catch 0 -> 0) */
		LOCAL_GET(0), CALL(0), END,     /* thrower(x) */
		0x41, 0x7f, 0x0f,               /* return -1 */
		END, 0x41, 1, I32_ADD           /* caught: payload + 1 */
	};
	/* clang-format on */ /* caught: payload + 1 */
	/* clang-format off */
	static const uint8_t uncaught[] = {
		LOCAL_GET(0), CALL(0), 0x41, 0
	};
	/* clang-format on */
	static const fdef fs[] = {FN(0, NULL, thrower, NULL),
				  FN(1, NULL, catcher, "catcher"),
				  FN(1, NULL, uncaught, "uncaught")};
	static const uint32_t tags[] = {0};
	static const mdef d = {.types = t,
			       .ntypes = 2,
			       .funcs = fs,
			       .nfuncs = 3,
			       .tags = tags,
			       .ntags = 1};
	wasm_val a = i32v(5);
	env e;

	setup(&e, &d, NULL, NULL);
	ck_assert_uint_eq(call_i32(&e, "catcher", 1, 0), (uint32_t)-1);
	ck_assert_uint_eq(call_i32(&e, "catcher", 1, 21), 43);
	ck_assert_int_eq(
		wasm_exec_call(e.exec, export_func(&e, "uncaught"), &a, 1),
		WASM_EXEC_EXCEPTION);
	ck_assert_ptr_nonnull(wasm_exec_exception(e.exec));
	ck_assert_uint_eq(call_i32(&e, "uncaught", 1, 0), 0);
	teardown(&e, true);
}
END_TEST

/*
 * Exception objects are collected (runtime/wasm/exn.c).  Tag 0 carries
 * an i32, tag 1 an exnref.  The functions:
 *   spin(n)	throws and catches n exceptions; returns 7
 *   keep(n)	catches one (payload 77) into a local, spins n, rethrows it
 *		and returns its payload
 *   chain(n)	builds a list of n exceptions, each the payload of the
 *		next, held by one local; walks it back; returns its length
 *   stash()	puts an exception in global 0 (payload 99) and another in
 *		table slot 0 (payload 98)
 *   unstash(i) rethrows the one in global 0 (i = 0) or table slot 0
 *		(i = 1); returns its payload
 *   throw77()	throws (payload 77) without catching
 *   rethrow(x) rethrows x; returns its payload
 *   hoard(n)	builds a list of n as chain does, keeps it in global 0
 *   drop()	sets global 0 to null
 *   hold()	catches one (payload 55), calls the host's get (which
 *		blocks), rethrows it; returns payload + get's result
 */
#define EXN_BLOCK	 0x02, 0x69    /* block (result exnref) */
#define TRY_TABLE_1	 0x1f, 0x40, 1 /* try_table with one catch clause */
#define CATCH(t, l)	 0x00, t, l
#define CATCH_ALL_REF(l) 0x03, l
#define THROW(t)	 0x08, t
#define THROW_REF	 0x0a
/* local.get x; (rethrow, catch tag 0 -> the block): the i32 payload */
#define UNWRAP_I32(get...)                                                     \
	0x02, 0x7f, TRY_TABLE_1, CATCH(0, 0), get, THROW_REF, END, 0x00, END

static const sig exn_types[] = {{"i", ""}, {"x", ""}, {"i", "i"},
				{"", "i"}, {"", ""},  {"x", "i"}};
/* clang-format off */
static const uint8_t exn_spin[] = {
	0x02, 0x40, 0x03, 0x40,
	LOCAL_GET(0), 0x45, 0x0d, 1,
	0x02, 0x40, TRY_TABLE_1, 0x02, 0,
	LOCAL_GET(0), THROW(0), END, END,
	LOCAL_GET(0), 0x41, 1, I32_SUB, LOCAL_SET(0), 0x0c, 0,
	END, END, 0x41, 7
};
static const uint8_t exn_keep[] = {
	EXN_BLOCK, TRY_TABLE_1, CATCH_ALL_REF(0), I32C(77), THROW(0), END,
	0x00, END, LOCAL_SET(1),
	LOCAL_GET(0), CALL(1), 0x1a,
	UNWRAP_I32(LOCAL_GET(1))
};
static const uint8_t exn_chain[] = {
	0x02, 0x40, 0x03, 0x40,
	LOCAL_GET(0), 0x45, 0x0d, 1,
	EXN_BLOCK, TRY_TABLE_1, CATCH_ALL_REF(0), LOCAL_GET(1), THROW(1), END,
	0x00, END, LOCAL_SET(1),
	LOCAL_GET(0), 0x41, 1, I32_SUB, LOCAL_SET(0), 0x0c, 0,
	END, END,
	0x02, 0x40, 0x03, 0x40,
	LOCAL_GET(1), 0xd1, 0x0d, 1,
	EXN_BLOCK, TRY_TABLE_1, CATCH(1, 0), LOCAL_GET(1), THROW_REF, END,
	0x00, END, LOCAL_SET(1),
	LOCAL_GET(2), 0x41, 1, I32_ADD, LOCAL_SET(2), 0x0c, 0,
	END, END, LOCAL_GET(2)
};
static const uint8_t exn_stash[] = {
	EXN_BLOCK, TRY_TABLE_1, CATCH_ALL_REF(0), I32C(99), THROW(0), END,
	0x00, END, 0x24, 0,
	0x41, 0,
	EXN_BLOCK, TRY_TABLE_1, CATCH_ALL_REF(0), I32C(98), THROW(0), END,
	0x00, END, 0x26, 0
};
static const uint8_t exn_throw77[] = {I32C(77), THROW(0)};
/* hoard(n): a list of n, as chain builds it, kept in global 0; 0 */
static const uint8_t exn_hoard[] = {
	0x02, 0x40, 0x03, 0x40,
	LOCAL_GET(0), 0x45, 0x0d, 1,
	EXN_BLOCK, TRY_TABLE_1, CATCH_ALL_REF(0), LOCAL_GET(1), THROW(1), END,
	0x00, END, LOCAL_SET(1),
	LOCAL_GET(0), 0x41, 1, I32_SUB, LOCAL_SET(0), 0x0c, 0,
	END, END, LOCAL_GET(1), 0x24, 0, 0x41, 0
};
/* drop(): global 0 = null; 0 */
static const uint8_t exn_drop[] = {0xd0, 0x69, 0x24, 0, 0x41, 0};
static const uint8_t exn_rethrow[] = {UNWRAP_I32(LOCAL_GET(0))};
static const uint8_t exn_unstash[] = {
	LOCAL_GET(0), 0x04, 0x7f,
	UNWRAP_I32(0x41, 0, 0x25, 0),
	0x05,
	UNWRAP_I32(0x23, 0),
	END
};
static const uint8_t exn_hold[] = {
	EXN_BLOCK, TRY_TABLE_1, CATCH_ALL_REF(0), 0x41, 55, THROW(0), END,
	0x00, END, LOCAL_SET(0),
	CALL(0),
	UNWRAP_I32(LOCAL_GET(0)),
	I32_ADD
};
/* clang-format on */
static const char *const exn_imports[] = {"get"};
static const uint32_t exn_import_types[] = {3};
/* Function indices: get 0, spin 1, keep 2, chain 3, stash 4, ... */
static const fdef exn_funcs[] = {FN(2, NULL, exn_spin, "spin"),
				 FN(2, "x", exn_keep, "keep"),
				 FN(2, "xi", exn_chain, "chain"),
				 FN(4, "x", exn_stash, "stash"),
				 FN(2, NULL, exn_unstash, "unstash"),
				 FN(3, "x", exn_hold, "hold"),
				 FN(4, NULL, exn_throw77, "throw77"),
				 FN(5, NULL, exn_rethrow, "rethrow"),
				 FN(2, "x", exn_hoard, "hoard"),
				 FN(3, NULL, exn_drop, "drop")};
static const uint32_t exn_tags[] = {0, 1};
static const mdef exn_mod = {.types = exn_types,
			     .ntypes = COUNT(exn_types),
			     .imports = exn_imports,
			     .import_types = exn_import_types,
			     .nimports = 1,
			     .funcs = exn_funcs,
			     .nfuncs = COUNT(exn_funcs),
			     .tags = exn_tags,
			     .ntags = 2,
			     .exn_table_size = 1,
			     .exn_globals = 1};

static void exn_setup(env *e, struct host_state *hs,
		      const wasm_store_limits *limits)
{
	wasm_store *s = wasm_store_new(limits);
	wasm_extern imp;

	ck_assert_ptr_nonnull(s);
	imp = host_import(s, host_get, hs);
	setup(e, &exn_mod, &imp, s);
}

/*
 * Call `name` on an exec of its own, freed at once, so that no stack
 * keeps a stale copy of what the call made (collection is conservative).
 */
static void call_on_own_exec(env *e, const char *name, const wasm_val *args,
			     uint32_t nargs)
{
	wasm_exec *x = wasm_exec_new(e->store, NULL);

	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(wasm_exec_call(x, export_func(e, name), args, nargs),
			 WASM_EXEC_DONE);
	wasm_exec_free(x);
}

START_TEST(exceptions_are_collected)
{
	struct host_state hs = {0, false};
	size_t before;
	env e;

	exn_setup(&e, &hs, NULL);
	ck_assert_uint_eq(call_i32(&e, "spin", 1, 1000), 7);
	before = heap_in_use();
	/* Kept, these would take over 64 MiB: the store's limit. */
	ck_assert_uint_eq(call_i32(&e, "spin", 1, 3000000), 7);
	ck_assert_msg(heap_in_use() - before < 4u << 20,
		      "%zu bytes more after 3,000,000 throws",
		      heap_in_use() - before);
	/* What a local, a global, a table and a payload hold survives. */
	ck_assert_uint_eq(call_i32(&e, "keep", 1, 0), 77);
	ck_assert_uint_eq(call_i32(&e, "keep", 1, 100000), 77);
	ck_assert_uint_eq(call_i32(&e, "chain", 1, 50000), 50000);
	call_on_own_exec(&e, "stash", NULL, 0);
	ck_assert_uint_eq(call_i32(&e, "spin", 1, 100000), 7);
	ck_assert_uint_eq(call_i32(&e, "unstash", 1, 0), 99);
	ck_assert_uint_eq(call_i32(&e, "unstash", 1, 1), 98);
	teardown(&e, true);
}
END_TEST

START_TEST(exceptions_held_by_a_suspended_exec_survive)
{
	struct host_state hs = {0, true};
	wasm_val r = i32v(1);
	wasm_exec *held;
	env e;

	exn_setup(&e, &hs, NULL);
	held = wasm_exec_new(e.store, NULL);
	ck_assert_ptr_nonnull(held);
	ck_assert_int_eq(wasm_exec_call(held, export_func(&e, "hold"), NULL, 0),
			 WASM_EXEC_BLOCKED);
	ck_assert_uint_eq(call_i32(&e, "spin", 1, 200000), 7);
	ck_assert_int_eq(wasm_exec_resume(held, &r, 1), WASM_EXEC_DONE);
	ck_assert_uint_eq(wasm_exec_results(held, &r, 1), 1);
	ck_assert_uint_eq(r.u.i32, 56);
	/* So does the exception an exec ended with, until its next call. */
	ck_assert_int_eq(
		wasm_exec_call(held, export_func(&e, "throw77"), NULL, 0),
		WASM_EXEC_EXCEPTION);
	ck_assert_uint_eq(call_i32(&e, "spin", 1, 200000), 7);
	r.type = WASM_EXNREF;
	r.u.ref = (wasm_ref)(uintptr_t)wasm_exec_exception(held);
	ck_assert_int_eq(
		wasm_exec_call(e.exec, export_func(&e, "rethrow"), &r, 1),
		WASM_EXEC_DONE);
	ck_assert_uint_eq(wasm_exec_results(e.exec, &r, 1), 1);
	ck_assert_uint_eq(r.u.i32, 77);
	/* An exec freed after its store leaves the store alone. */
	wasm_exec_free(e.exec);
	wasm_store_free(e.store);
	wasm_exec_free(held);
	wasm_module_free(e.mod);
}
END_TEST

START_TEST(live_exceptions_have_a_limit)
{
	struct host_state hs = {0, false};
	wasm_store_limits l = {.max_exception_bytes = 1u << 20};
	env e;

	exn_setup(&e, &hs, &l);
	/* 100,000 links of 48 bytes each (as counted) do not fit in 1 MiB. */
	ck_assert_int_eq(call_trap(&e, "chain", 1, 100000),
			 WASM_TRAP_OUT_OF_MEMORY);
	/* Once the list is unreachable, the store throws again. */
	wasm_exec_free(e.exec);
	e.exec = wasm_exec_new(e.store, NULL);
	ck_assert_ptr_nonnull(e.exec);
	ck_assert_uint_eq(call_i32(&e, "chain", 1, 20000), 20000);
	ck_assert_uint_eq(call_i32(&e, "spin", 1, 100000), 7);
	teardown(&e, true);
}
END_TEST

/*
 * A guest that keeps nearly its limit alive cannot buy a collection per
 * throw: with less than 256 KiB of room left, a throw that does not fit
 * fails at once (the call traps) instead of collecting; the next throw
 * after that refusal collects, so once the list is dropped the store
 * throws again.
 */
START_TEST(exceptions_near_the_limit_fail_fast)
{
	struct host_state hs = {0, false};
	wasm_store_limits l = {.max_exception_bytes = 1u << 20};
	wasm_val a = i32v(19500);
	env e;

	exn_setup(&e, &hs, &l);
	/* 19,500 links of 48 bytes as counted: 112 KiB of room left */
	call_on_own_exec(&e, "hoard", &a, 1);
	ck_assert_int_eq(call_trap(&e, "spin", 1, 100000),
			 WASM_TRAP_OUT_OF_MEMORY);
	ck_assert_uint_eq(call_i32(&e, "drop", 0), 0);
	ck_assert_uint_eq(call_i32(&e, "spin", 1, 100000), 7);
	teardown(&e, true);
	/* A tiny limit still collects: garbage never fills it. */
	l.max_exception_bytes = 1000;
	exn_setup(&e, &hs, &l);
	ck_assert_uint_eq(call_i32(&e, "spin", 1, 100000), 7);
	teardown(&e, true);
}
END_TEST

/* ---- validation ---- */

static void expect_invalid(const uint8_t *body, size_t len, const char *locals,
			   const sig *types, uint32_t ntypes, const char *msg)
{
	fdef f = {0, locals, body, len, NULL};
	mdef d = {.types = types,
		  .ntypes = ntypes,
		  .funcs = &f,
		  .nfuncs = 1,
		  .mem_pages = 1};
	wasm_module *m = NULL;
	wasm_error err;

	memset(&err, 0, sizeof err);
	ck_assert_int_eq(load(&d, &m, &err), -1);
	ck_assert_int_eq(err.kind, WASM_ERR_INVALID);
	ck_assert_msg(strncmp(err.msg, msg, strlen(msg)) == 0,
		      "got \"%s\", want \"%s\"", err.msg, msg);
}

START_TEST(validation_errors)
{
	static const sig t[] = {{"", "i"}, {"", ""}};
	/* clang-format off */
	static const uint8_t f32_for_i32[] = {
		0x43, 0, 0, 0, 0
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t no_local[] = {
		LOCAL_GET(3)
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t no_label[] = {
		0x0c, 1, 0x41, 0
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t misalign[] = {
		0x41, 0, 0x28, 3, 0
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t no_global[] = {
		0x23, 0
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t underflow[] = {
		I32_ADD
	};
	/* clang-format on */
	/* clang-format off */
	static const uint8_t dead_ok[] = {
		0x00, I32_ADD
	};
	/* clang-format on */
	wasm_module *m;
	wasm_error err;
	fdef f = {0, NULL, dead_ok, sizeof dead_ok, NULL};
	mdef d = {.types = t, .ntypes = 2, .funcs = &f, .nfuncs = 1};

	expect_invalid(f32_for_i32, sizeof f32_for_i32, NULL, t, 2,
		       "type mismatch");
	expect_invalid(no_local, sizeof no_local, "i", t, 2, "unknown local");
	expect_invalid(no_label, sizeof no_label, NULL, t, 2, "unknown label");
	expect_invalid(misalign, sizeof misalign, NULL, t, 2,
		       "alignment must not be larger than natural");
	expect_invalid(no_global, sizeof no_global, NULL, t, 2,
		       "unknown global");
	expect_invalid(underflow, sizeof underflow, NULL, t, 2,
		       "type mismatch");
	/* after unreachable the stack is polymorphic: this one is valid */
	ck_assert_int_eq(load(&d, &m, &err), 0);
	wasm_module_free(m);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("interp");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, arith_i32);
	tcase_add_test(tc, arith_i64_and_consts);
	tcase_add_test(tc, loop_sum);
	tcase_add_test(tc, if_else_and_multivalue);
	tcase_add_test(tc, br_table_switch);
	tcase_add_test(tc, br_table_with_values);
	tcase_add_test(tc, calls_and_recursion);
	tcase_add_test(tc, call_indirect_traps);
	tcase_add_test(tc, memory_bounds);
	tcase_add_test(tc, folded_addresses_survive_later_pushes);
	tcase_add_test(tc, float_read_modify_write);
	tcase_add_test(tc, fuel_exhaustion_and_continue);
	tcase_add_test(tc, bulk_ops_take_fuel_by_size);
	tcase_add_test(tc, host_block_and_resume);
	tcase_add_test(tc, host_trap_message);
	tcase_add_test(tc, deep_suspension);
	tcase_add_test(tc, many_suspended_execs);
	tcase_add_test(tc, infinite_recursion_traps);
	tcase_add_test(tc, tail_call_million);
	tcase_add_test(tc, exceptions_throw_catch);
	tcase_add_test(tc, exceptions_are_collected);
	tcase_add_test(tc, exceptions_held_by_a_suspended_exec_survive);
	tcase_add_test(tc, live_exceptions_have_a_limit);
	tcase_add_test(tc, exceptions_near_the_limit_fail_fast);
	tcase_add_test(tc, validation_errors);
	suite_add_tcase(s, tc);
	return s;
}
