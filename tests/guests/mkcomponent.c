/*
 * mkcomponent.c - write a small, valid component binary byte by byte, so
 * the daemon tests need no text assembler and no external suite.
 *
 *   mkcomponent counter|names OUT.wasm
 *
 * The component (a counter kept in a mutable core global, no memory):
 *   (component
 *     (core module $M
 *       (global $n (mut i32) (i32.const 0))
 *       (func (export "inc") (result i32)          ;; n += 1; n
 *       (func (export "get") (result i32)          ;; n
 *       (func (export "add") (param i32 i32) (result i32))
 *       (func (export "boom") unreachable)          ;; a trap
 *       (func (export "spin") (loop br 0)))         ;; runs out of fuel
 *     (core instance $m (instantiate $M))
 *     (alias core export $m "inc" ...) ... one per function
 *     (type $t0 (func (result u32)))
 *     (type $t1 (func (param "a" u32) (param "b" u32) (result u32)))
 *     (type $t2 (func))
 *     (func (type $t0) (canon lift (core func $inc))) ... one per function
 *     (export "inc" (func 0)) (export "get" (func 1)) (export "add" (func 2))
 *     (export "boom" (func 3)) (export "spin" (func 4)))
 *
 * `names` is the same core module with its functions in two exported
 * instances and one at the root, for the resolver of export names
 * (run/exportname.h; tests/daemon-export-names.sh):
 *     (instance $a (export "count" (func $inc)) (export "value" (func $get))
 *                  (export "get" (func $get)))
 *     (instance $b (export "count" (func $inc)) (export "total" (func $add)))
 *     (export "get" (func $get))
 *     (export "hostel:names/a@1.0.0" (instance $a))
 *     (export "hostel:names/b@2.0.0" (instance $b))
 *
 * Exit status: 0, or 1 when the file cannot be written, 2 on usage.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct buf {
	uint8_t b[2048];
	size_t n;
};

static void put(struct buf *o, const void *p, size_t n)
{
	if (o->n + n > sizeof(o->b))
		return; /* cannot happen: the component is fixed and small */
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void byte(struct buf *o, uint8_t v)
{
	put(o, &v, 1);
}

static void uleb(struct buf *o, uint32_t v)
{
	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		byte(o, (uint8_t)(v ? b | 0x80 : b));
	} while (v);
}

static void name(struct buf *o, const char *s)
{
	uleb(o, (uint32_t)strlen(s));
	put(o, s, strlen(s));
}

static void section(struct buf *o, uint8_t id, const struct buf *body)
{
	byte(o, id);
	uleb(o, (uint32_t)body->n);
	put(o, body->b, body->n);
}

struct func {
	const char *name;
	uint8_t core_type;   /* index in the core type section */
	uint8_t comp_type;   /* index in the component type section */
	const uint8_t *body; /* code, without the locals vector */
	size_t body_len;
};

static const uint8_t inc_body[] = {0x23, 0x00, 0x41, 0x01, 0x6a,
				   0x24, 0x00, 0x23, 0x00, 0x0b};
static const uint8_t get_body[] = {0x23, 0x00, 0x0b};
static const uint8_t add_body[] = {0x20, 0x00, 0x20, 0x01, 0x6a, 0x0b};
static const uint8_t boom_body[] = {0x00, 0x0b};
static const uint8_t spin_body[] = {0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b};

static const struct func funcs[] = {
	{"inc", 0, 0, inc_body, sizeof(inc_body)},
	{"get", 0, 0, get_body, sizeof(get_body)},
	{"add", 1, 1, add_body, sizeof(add_body)},
	{"boom", 2, 2, boom_body, sizeof(boom_body)},
	{"spin", 2, 2, spin_body, sizeof(spin_body)},
};
#define NFUNCS (sizeof(funcs) / sizeof(funcs[0]))

static void core_module(struct buf *m)
{
	static const uint8_t head[] = {0x00, 0x61, 0x73, 0x6d,
				       0x01, 0x00, 0x00, 0x00};
	static const uint8_t types[] = {0x03, 0x60, 0x00, 0x01, 0x7f,
					0x60, 0x02, 0x7f, 0x7f, 0x01,
					0x7f, 0x60, 0x00, 0x00};
	static const uint8_t global[] = {0x01, 0x7f, 0x01, 0x41, 0x00, 0x0b};
	struct buf s = {.n = 0};

	put(m, head, sizeof(head));
	s.n = 0;
	put(&s, types, sizeof(types));
	section(m, 1, &s);
	s.n = 0;
	uleb(&s, NFUNCS);
	for (size_t i = 0; i < NFUNCS; i++)
		uleb(&s, funcs[i].core_type);
	section(m, 3, &s);
	s.n = 0;
	put(&s, global, sizeof(global));
	section(m, 6, &s);
	s.n = 0;
	uleb(&s, NFUNCS);
	for (size_t i = 0; i < NFUNCS; i++) {
		name(&s, funcs[i].name);
		byte(&s, 0x00); /* func */
		uleb(&s, (uint32_t)i);
	}
	section(m, 7, &s);
	s.n = 0;
	uleb(&s, NFUNCS);
	for (size_t i = 0; i < NFUNCS; i++) {
		uleb(&s, (uint32_t)funcs[i].body_len + 1);
		byte(&s, 0x00); /* no locals */
		put(&s, funcs[i].body, funcs[i].body_len);
	}
	section(m, 10, &s);
}

/* An inline export (exportname' sortidx) of func `idx`. */
static void inline_func(struct buf *o, const char *n, uint32_t idx)
{
	byte(o, 0x00);
	name(o, n);
	byte(o, 0x01); /* func */
	uleb(o, idx);
}

/* An export of `sort` idx with no ascribed type. */
static void export_item(struct buf *o, const char *n, uint8_t sort,
			uint32_t idx)
{
	byte(o, 0x00);
	name(o, n);
	byte(o, sort);
	uleb(o, idx);
	byte(o, 0x00);
}

/* The `names` kind's instances and exports (see the top). */
static void names(struct buf *c)
{
	struct buf s = {.n = 0};

	uleb(&s, 2);
	byte(&s, 0x01); /* instance from exports */
	uleb(&s, 3);
	inline_func(&s, "count", 0);
	inline_func(&s, "value", 1);
	inline_func(&s, "get", 1);
	byte(&s, 0x01);
	uleb(&s, 2);
	inline_func(&s, "count", 0);
	inline_func(&s, "total", 2);
	section(c, 5, &s);
	s.n = 0;
	uleb(&s, 3);
	export_item(&s, "get", 0x01, 1);
	export_item(&s, "hostel:names/a@1.0.0", 0x05, 0);
	export_item(&s, "hostel:names/b@2.0.0", 0x05, 1);
	section(c, 11, &s);
}

static void counter(struct buf *c, bool names_kind)
{
	static const uint8_t head[] = {0x00, 0x61, 0x73, 0x6d,
				       0x0d, 0x00, 0x01, 0x00};
	static const uint8_t types[] = {
		0x03, 0x40, 0x00, 0x00, 0x79, /* func () -> u32 */
		0x40, 0x02, 0x01, 'a',	0x79, 0x01, 'b',
		0x79, 0x00, 0x79, 0x40, 0x00, 0x01, 0x00, /* func () */
	};
	struct buf m = {.n = 0}, s = {.n = 0};

	put(c, head, sizeof(head));
	core_module(&m);
	section(c, 1, &m);
	/* core instance 0: instantiate module 0 with no arguments */
	s.n = 0;
	put(&s, (const uint8_t[]){0x01, 0x00, 0x00, 0x00}, 4);
	section(c, 2, &s);
	/* alias core export: one core func per function */
	s.n = 0;
	uleb(&s, NFUNCS);
	for (size_t i = 0; i < NFUNCS; i++) {
		put(&s, (const uint8_t[]){0x00, 0x00, 0x01, 0x00}, 4);
		name(&s, funcs[i].name);
	}
	section(c, 6, &s);
	s.n = 0;
	put(&s, types, sizeof(types));
	section(c, 7, &s);
	/* canon lift (core func i) with no options, type */
	s.n = 0;
	uleb(&s, NFUNCS);
	for (size_t i = 0; i < NFUNCS; i++) {
		put(&s, (const uint8_t[]){0x00, 0x00}, 2);
		uleb(&s, (uint32_t)i);
		byte(&s, 0x00);
		uleb(&s, funcs[i].comp_type);
	}
	section(c, 8, &s);
	if (names_kind) {
		names(c);
		return;
	}
	s.n = 0;
	uleb(&s, NFUNCS);
	for (size_t i = 0; i < NFUNCS; i++) {
		byte(&s, 0x00);
		name(&s, funcs[i].name);
		byte(&s, 0x01); /* func */
		uleb(&s, (uint32_t)i);
		byte(&s, 0x00); /* no ascribed type */
	}
	section(c, 11, &s);
}

int main(int argc, char **argv)
{
	struct buf c = {.n = 0};
	FILE *f;

	if (argc != 3 ||
	    (strcmp(argv[1], "counter") && strcmp(argv[1], "names"))) {
		fprintf(stderr, "usage: mkcomponent counter|names OUT.wasm\n");
		return 2;
	}
	counter(&c, !strcmp(argv[1], "names"));
	f = fopen(argv[2], "wb");
	if (!f || fwrite(c.b, 1, c.n, f) != c.n || fclose(f)) {
		perror(argv[2]);
		return 1;
	}
	return 0;
}
