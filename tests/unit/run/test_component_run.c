/*
 * test_component_run.c - component instantiation, linking and sync calls
 * through the public API (run/instance.h): exports called with
 * cm_val values, host functions bound to imports (root functions and
 * functions of imported instances), missing imports named in the link
 * error, poisoning after a trap, the reentrance trap, the resource
 * lifecycle with destructors.
 *
 * Two small components are assembled here byte by byte; the rest come
 * from $HOSTEL_SHARED/cm-testsuite and are skipped with a message when it
 * is absent.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/val.h"
#include "component/component.h"
#include "run/instance.h"
#include "testmain.h"

/* ---- assembling binaries ------------------------------------------------- */

typedef struct buf {
	uint8_t b[1024];
	size_t n;
} buf;

static void put(buf *o, const uint8_t *p, size_t n)
{
	ck_assert_uint_le(o->n + n, sizeof o->b);
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void put_u32(buf *o, uint32_t v)
{
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		if (v)
			byte |= 0x80;
		put(o, &byte, 1);
	} while (v);
}

static void section(buf *o, uint8_t id, const uint8_t *p, size_t n)
{
	put(o, &id, 1);
	put_u32(o, (uint32_t)n);
	put(o, p, n);
}

#define SECTION(o, id, ...)                                                    \
	do {                                                                   \
		static const uint8_t s_[] = {__VA_ARGS__};                     \
		section(o, id, s_, sizeof s_);                                 \
	} while (0)

/*
 * (module
 *   (import "" "add" (func (param i32 i32) (result i32)))
 *   (func (export "run") (param i32) (result i32)
 *     local.get 0  i32.const 1  call 0))
 */
static void core_module(buf *m)
{
	static const uint8_t head[] = {0x00, 0x61, 0x73, 0x6d,
				       0x01, 0x00, 0x00, 0x00};

	m->n = 0;
	put(m, head, sizeof head);
	SECTION(m, 1, 0x02, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x60, 0x01,
		0x7f, 0x01, 0x7f);
	SECTION(m, 2, 0x01, 0x00, 0x03, 'a', 'd', 'd', 0x00, 0x00);
	SECTION(m, 3, 0x01, 0x01);
	SECTION(m, 7, 0x01, 0x03, 'r', 'u', 'n', 0x00, 0x01);
	SECTION(m, 10, 0x01, 0x08, 0x00, 0x20, 0x00, 0x41, 0x01, 0x10, 0x00,
		0x0b);
}

/*
 * The rest of both components, after the import and its lowering:
 *   (core module $M ...)                   ;; core_module()
 *   (core instance $ai (export "add" (func $add')))
 *   (core instance $m (instantiate $M (with "" (instance $ai))))
 *   (alias core export $m "run" (core func $run))
 *   (func $runf (type 1) (canon lift (core func $run)))
 *   (export "run" (func $runf))
 * lift_type / runf: the indices of the run type and the lifted func.
 */
static void component_tail(buf *c, uint8_t lift_type, uint8_t runf)
{
	buf m;

	core_module(&m);
	section(c, 1, m.b, m.n);
	SECTION(c, 2, 0x02, 0x01, 0x01, 0x03, 'a', 'd', 'd', 0x00, 0x00, 0x00,
		0x00, 0x01, 0x00, 0x12, 0x00);
	SECTION(c, 6, 0x01, 0x00, 0x00, 0x01, 0x01, 0x03, 'r', 'u', 'n');
	{
		const uint8_t lift[] = {0x01, 0x00, 0x00,
					0x01, 0x00, lift_type};
		const uint8_t exp[] = {0x01, 0x00, 0x03, 'r', 'u',
				       'n',  0x01, runf, 0x00};

		section(c, 8, lift, sizeof lift);
		section(c, 11, exp, sizeof exp);
	}
}

static const uint8_t comp_head[] = {0x00, 0x61, 0x73, 0x6d,
				    0x0d, 0x00, 0x01, 0x00};

/*
 * (component
 *   (type (func (param "a" u32) (param "b" u32) (result u32)))
 *   (type (func (param "x" u32) (result u32)))
 *   (import "add" (func $add (type 0)))
 *   (core func $add' (canon lower (func $add)))
 *   ... component_tail: "run"(x) = add(x, 1))
 */
static void component_func_import(buf *c)
{
	c->n = 0;
	put(c, comp_head, sizeof comp_head);
	SECTION(c, 7, 0x02, 0x40, 0x02, 0x01, 'a', 0x79, 0x01, 'b', 0x79, 0x00,
		0x79, 0x40, 0x01, 0x01, 'x', 0x79, 0x00, 0x79);
	SECTION(c, 10, 0x01, 0x00, 0x03, 'a', 'd', 'd', 0x01, 0x00);
	SECTION(c, 8, 0x01, 0x01, 0x00, 0x00, 0x00);
	component_tail(c, 0x01, 0x01);
}

/*
 * The same with the function in an imported instance:
 *   (type (instance (type (func (param "a" u32) (param "b" u32)
 *                               (result u32)))
 *                   (export "add" (func (type 0)))))
 *   (type (func (param "x" u32) (result u32)))
 *   (import "t:x/y" (instance $i (type 0)))
 *   (alias export $i "add" (func $add))
 *   (core func $add' (canon lower (func $add))) ...
 */
static void component_instance_import(buf *c)
{
	c->n = 0;
	put(c, comp_head, sizeof comp_head);
	SECTION(c, 7, 0x02, 0x42, 0x02, 0x01, 0x40, 0x02, 0x01, 'a', 0x79, 0x01,
		'b', 0x79, 0x00, 0x79, 0x04, 0x00, 0x03, 'a', 'd', 'd', 0x01,
		0x00, 0x40, 0x01, 0x01, 'x', 0x79, 0x00, 0x79);
	SECTION(c, 10, 0x01, 0x00, 0x05, 't', ':', 'x', '/', 'y', 0x05, 0x00);
	SECTION(c, 6, 0x01, 0x01, 0x00, 0x00, 0x03, 'a', 'd', 'd');
	SECTION(c, 8, 0x01, 0x01, 0x00, 0x00, 0x00);
	component_tail(c, 0x01, 0x01);
}

/*
 * (component
 *   (core module $A (func (export "add") (param i32 i32) (result i32)
 *     local.get 0  local.get 1  i32.add))
 *   (core instance $a (instantiate $A))
 *   (alias core export $a "add" (core func $add))
 *   (type (func (param "a" u32) (param "b" u32) (result u32)))
 *   (func (type 0) (canon lift (core func $add)))
 *   (export "add" (func 0)))
 */
static void component_adder(buf *c)
{
	static const uint8_t mod[] = {
		0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01,
		0x07, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, 0x03,
		0x02, 0x01, 0x00, 0x07, 0x07, 0x01, 0x03, 'a',	'd',
		'd',  0x00, 0x00, 0x0a, 0x09, 0x01, 0x07, 0x00, 0x20,
		0x00, 0x20, 0x01, 0x6a, 0x0b,
	};

	c->n = 0;
	put(c, comp_head, sizeof comp_head);
	section(c, 1, mod, sizeof mod);
	SECTION(c, 2, 0x01, 0x00, 0x00, 0x00);
	SECTION(c, 6, 0x01, 0x00, 0x00, 0x01, 0x00, 0x03, 'a', 'd', 'd');
	SECTION(c, 7, 0x01, 0x40, 0x02, 0x01, 'a', 0x79, 0x01, 'b', 0x79, 0x00,
		0x79);
	SECTION(c, 8, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00);
	SECTION(c, 11, 0x01, 0x00, 0x03, 'a', 'd', 'd', 0x01, 0x00, 0x00);
}

static cm_component *load_buf(const buf *b)
{
	cm_component *c = NULL;
	wasm_error err;

	memset(&err, 0, sizeof err);
	if (cm_component_load(b->b, b->n, &c, &err))
		ck_abort_msg("component does not load: %s at %zu", err.msg,
			     err.offset);
	return c;
}

/* ---- suite files --------------------------------------------------------- */

static cm_component *load_suite(const char *rel)
{
	const char *s = getenv("HOSTEL_SHARED");
	char path[2048];
	cm_component *c = NULL;
	wasm_error err;
	uint8_t *bytes;
	FILE *f;
	long n;

	snprintf(path, sizeof path, "%s/cm-testsuite/%s",
		 s && *s ? s : "../shared", rel);
	f = fopen(path, "rb");
	if (f == NULL) {
		printf("SKIP: %s absent (set HOSTEL_SHARED)\n", path);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	bytes = malloc((size_t)n);
	ck_assert_ptr_nonnull(bytes);
	ck_assert_uint_eq(fread(bytes, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	if (cm_component_load(bytes, (size_t)n, &c, &err))
		ck_abort_msg("%s does not load: %s", path, err.msg);
	free(bytes);
	return c;
}

static uint64_t call_u32(cm_store *s, cm_component_instance *inst,
			 const char *name, const cm_val *args, uint32_t nargs)
{
	cm_func *f = cm_instance_export(inst, NULL, name);
	cm_val res[1];
	uint32_t nres = 0;
	cm_error err;

	ck_assert_msg(f != NULL, "no export %s", name);
	if (cm_invoke(s, f, args, nargs, res, &nres, &err))
		ck_abort_msg("%s trapped: %s", name, err.msg);
	if (nres == 0)
		return 0;
	ck_assert_int_eq(res[0].kind, CM_U32);
	return res[0].u.u;
}

/* ---- host functions -------------------------------------------------------
 */

typedef struct host_state {
	int calls;
	uint64_t a, b;
	enum { ADD, TRAP, REENTER } mode;
	cm_store *store;
	cm_component_instance *inst;
	char inner[CM_ERROR_MSG_MAX];
} host_state;

static int host_add(cm_host_call *call, void *env, const cm_val *args,
		    uint32_t nargs, cm_val *results, uint32_t nresults)
{
	host_state *h = env;

	h->calls++;
	ck_assert_uint_eq(nargs, 2);
	ck_assert_uint_eq(nresults, 1);
	ck_assert_ptr_eq(cm_host_call_store(call), h->store);
	ck_assert_int_eq(cm_host_call_type(call)->kind, CM_FUNC);
	h->a = args[0].u.u;
	h->b = args[1].u.u;
	if (h->mode == TRAP)
		return cm_host_call_trap(call, "host says no (%d)", h->calls);
	if (h->mode == REENTER) {
		/* call back into the instance that is calling us */
		cm_func *run = cm_instance_export(h->inst, NULL, "run");
		cm_val arg = cm_val_u32(1), res[1];
		uint32_t nres;
		cm_error err;

		if (cm_invoke(h->store, run, &arg, 1, res, &nres, &err) == 0)
			return cm_host_call_trap(call, "reentered!");
		snprintf(h->inner, sizeof h->inner, "%s", err.msg);
		return cm_host_call_trap(call, "%s", err.msg);
	}
	results[0] = cm_val_u32((uint32_t)(h->a + h->b));
	return 0;
}

static cm_store *new_store(void)
{
	cm_store *s = cm_store_new(NULL);

	ck_assert_ptr_nonnull(s);
	return s;
}

START_TEST(host_func_import)
{
	buf b;
	cm_component *c;
	cm_linker *l = cm_linker_new();
	cm_store *s = new_store();
	cm_component_instance *inst;
	host_state h = {.mode = ADD, .store = s};
	cm_val arg = cm_val_u32(41);
	cm_error err;

	component_func_import(&b);
	c = load_buf(&b);
	ck_assert_int_eq(cm_linker_define_func(l, NULL, "add", host_add, &h),
			 0);
	ck_assert_int_eq(cm_instantiate(s, c, l, &inst, &err), 0);
	ck_assert_uint_eq(call_u32(s, inst, "run", &arg, 1), 42);
	ck_assert_int_eq(h.calls, 1);
	ck_assert_uint_eq(h.a, 41);
	ck_assert_uint_eq(h.b, 1);
	cm_store_free(s);
	cm_linker_free(l);
	cm_component_free(c);
}
END_TEST

START_TEST(host_instance_import)
{
	buf b;
	cm_component *c;
	cm_linker *l = cm_linker_new();
	cm_store *s = new_store();
	cm_component_instance *inst;
	host_state h = {.mode = ADD, .store = s};
	cm_val arg = cm_val_u32(99);
	cm_error err;

	component_instance_import(&b);
	c = load_buf(&b);
	/* the wrong place first: a root "add" does not satisfy t:x/y */
	ck_assert_int_eq(cm_linker_define_func(l, NULL, "add", host_add, &h),
			 0);
	ck_assert_int_ne(cm_instantiate(s, c, l, &inst, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_LINK);
	ck_assert_msg(strstr(err.msg, "t:x/y") != NULL, "%s", err.msg);
	ck_assert_int_eq(cm_linker_define_func(l, "t:x/y", "add", host_add, &h),
			 0);
	ck_assert_int_eq(cm_instantiate(s, c, l, &inst, &err), 0);
	ck_assert_uint_eq(call_u32(s, inst, "run", &arg, 1), 100);
	ck_assert_int_eq(h.calls, 1);
	cm_store_free(s);
	cm_linker_free(l);
	cm_component_free(c);
}
END_TEST

/* An import satisfied by another component's instance (guest to guest). */
START_TEST(instance_import_from_component)
{
	buf b;
	cm_component *adder, *user;
	cm_linker *l = cm_linker_new();
	cm_store *s = new_store();
	cm_component_instance *a, *u;
	cm_val args[2] = {cm_val_u32(20), cm_val_u32(22)};
	cm_error err;

	component_adder(&b);
	adder = load_buf(&b);
	component_instance_import(&b);
	user = load_buf(&b);
	ck_assert_int_eq(cm_instantiate(s, adder, NULL, &a, &err), 0);
	ck_assert_uint_eq(call_u32(s, a, "add", args, 2), 42);
	ck_assert_int_eq(cm_linker_define_instance(l, "t:x/y", a), 0);
	ck_assert_int_eq(cm_instantiate(s, user, l, &u, &err), 0);
	ck_assert_uint_eq(call_u32(s, u, "run", args, 1), 21);
	/* the adder is enterable again once the call is over */
	ck_assert_uint_eq(call_u32(s, a, "add", args, 2), 42);
	/* an instance without the declared export does not link */
	ck_assert_int_eq(cm_linker_define_instance(l, "t:x/y", u), 0);
	ck_assert_int_ne(cm_instantiate(s, user, l, &u, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_LINK);
	ck_assert_msg(strstr(err.msg, "`add`") != NULL, "%s", err.msg);
	cm_store_free(s);
	cm_linker_free(l);
	cm_component_free(user);
	cm_component_free(adder);
}
END_TEST

START_TEST(missing_import_named)
{
	buf b;
	cm_component *c;
	cm_store *s = new_store();
	cm_component_instance *inst = NULL;
	cm_error err;

	component_func_import(&b);
	c = load_buf(&b);
	ck_assert_int_ne(cm_instantiate(s, c, NULL, &inst, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_LINK);
	ck_assert_msg(strstr(err.msg, "`add`") != NULL, "%s", err.msg);
	cm_store_free(s);
	cm_component_free(c);
}
END_TEST

START_TEST(trap_poisons_instance)
{
	buf b;
	cm_component *c;
	cm_linker *l = cm_linker_new();
	cm_store *s = new_store();
	cm_component_instance *inst;
	host_state h = {.mode = TRAP, .store = s};
	cm_val arg = cm_val_u32(1), res[1];
	uint32_t nres;
	cm_func *run;
	cm_error err;

	component_func_import(&b);
	c = load_buf(&b);
	cm_linker_define_func(l, NULL, "add", host_add, &h);
	ck_assert_int_eq(cm_instantiate(s, c, l, &inst, &err), 0);
	run = cm_instance_export(inst, NULL, "run");
	ck_assert_ptr_nonnull(run);
	ck_assert_int_ne(cm_invoke(s, run, &arg, 1, res, &nres, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_TRAP);
	ck_assert_str_eq(err.msg, "host says no (1)");
	ck_assert(cm_instance_poisoned(inst));
	/* Poisoned: the next call does not even reach the host. */
	h.mode = ADD;
	ck_assert_int_ne(cm_invoke(s, run, &arg, 1, res, &nres, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_TRAP);
	ck_assert_str_eq(err.msg, "cannot enter component instance");
	ck_assert_int_eq(h.calls, 1);
	cm_store_free(s);
	cm_linker_free(l);
	cm_component_free(c);
}
END_TEST

START_TEST(reentrance_traps)
{
	buf b;
	cm_component *c;
	cm_linker *l = cm_linker_new();
	cm_store *s = new_store();
	cm_component_instance *inst;
	host_state h = {.mode = REENTER, .store = s};
	cm_val arg = cm_val_u32(1), res[1];
	uint32_t nres;
	cm_error err;

	component_func_import(&b);
	c = load_buf(&b);
	cm_linker_define_func(l, NULL, "add", host_add, &h);
	ck_assert_int_eq(cm_instantiate(s, c, l, &inst, &err), 0);
	h.inst = inst;
	ck_assert_int_ne(cm_invoke(s, cm_instance_export(inst, NULL, "run"),
				   &arg, 1, res, &nres, &err),
			 0);
	ck_assert_str_eq(h.inner, "cannot enter component instance");
	ck_assert_int_eq(err.kind, CM_ERR_TRAP);
	ck_assert_str_eq(err.msg, "cannot enter component instance");
	ck_assert_int_eq(h.calls, 1);
	cm_store_free(s);
	cm_linker_free(l);
	cm_component_free(c);
}
END_TEST

START_TEST(export_calls_and_isolation)
{
	cm_component *c = load_suite("linking/unit.0.wasm");
	cm_store *s;
	cm_component_instance *inst;
	cm_error err;

	if (c == NULL)
		return;
	s = new_store();
	ck_assert_int_eq(cm_instantiate(s, c, NULL, &inst, &err), 0);
	ck_assert_uint_eq(call_u32(s, inst, "bump-a", NULL, 0), 1);
	ck_assert_uint_eq(call_u32(s, inst, "bump-a", NULL, 0), 2);
	ck_assert_uint_eq(call_u32(s, inst, "bump-b", NULL, 0), 1);
	ck_assert_ptr_null(cm_instance_export(inst, NULL, "nope"));
	ck_assert_uint_eq(cm_instance_nexports(inst), 2);
	cm_store_free(s);
	cm_component_free(c);
}
END_TEST

START_TEST(values_round_trip)
{
	cm_component *c = load_suite("values/concat.0.wasm");
	cm_store *s;
	cm_component_instance *inst;
	cm_val args[11], res[1];
	uint32_t nres = 0;
	cm_func *f;
	cm_error err;

	if (c == NULL)
		return;
	s = new_store();
	ck_assert_int_eq(cm_instantiate(s, c, NULL, &inst, &err), 0);
	f = cm_instance_export(inst, NULL, "prims");
	ck_assert_ptr_nonnull(f);
	args[0] = cm_val_bool(true);
	args[1] = cm_val_u8(7);
	args[2] = cm_val_s8(-8);
	args[3] = cm_val_u16(9);
	args[4] = cm_val_s16(-10);
	args[5] = cm_val_u32(11);
	args[6] = cm_val_s32(-12);
	args[7] = cm_val_u64(13);
	args[8] = cm_val_s64(-14);
	args[9] = cm_val_char('Z');
	ck_assert_int_eq(cm_val_string(&args[10], "!", 1), 0);
	ck_assert_int_eq(cm_invoke(s, f, args, 11, res, &nres, &err), 0);
	ck_assert_uint_eq(nres, 1);
	ck_assert_int_eq(res[0].kind, CM_STRING);
	ck_assert_str_eq((const char *)res[0].u.str.ptr,
			 "true7-89-1011-1213-14Z!");
	cm_vals_free(res, nres);
	/* A value of the wrong type is refused before anything runs. */
	cm_val_free(&args[10]);
	args[10] = cm_val_u32(1);
	ck_assert_int_ne(cm_invoke(s, f, args, 11, res, &nres, &err), 0);
	ck_assert_int_eq(err.kind, CM_ERR_VALUE);
	ck_assert(!cm_instance_poisoned(inst));
	cm_store_free(s);
	cm_component_free(c);
}
END_TEST

START_TEST(resource_dtors)
{
	/* linking/unit.wast line 655: two definers, two users, four types */
	cm_component *c = load_suite("linking/unit.23.wasm");
	cm_store *s;
	cm_component_instance *inst;
	cm_val a;
	cm_error err;

	if (c == NULL)
		return;
	s = new_store();
	ck_assert_int_eq(cm_instantiate(s, c, NULL, &inst, &err), 0);
	ck_assert_uint_eq(call_u32(s, inst, "count1-1", NULL, 0), 0);
	a = cm_val_u32(10);
	call_u32(s, inst, "run-1", &a, 1);
	a = cm_val_u32(40);
	call_u32(s, inst, "run-2", &a, 1);
	/* each drop ran its own type's dtor in its own definer */
	ck_assert_uint_eq(call_u32(s, inst, "count1-1", NULL, 0), 10);
	ck_assert_uint_eq(call_u32(s, inst, "count2-1", NULL, 0), 23);
	ck_assert_uint_eq(call_u32(s, inst, "count1-2", NULL, 0), 40);
	ck_assert_uint_eq(call_u32(s, inst, "count2-2", NULL, 0), 83);
	cm_store_free(s);
	cm_component_free(c);
}
END_TEST

START_TEST(sync_exports_beside_async_parts)
{
	/*
	 * values/variants.wast line 83: a child that also defines canon
	 * task.return and an async lift; the sync cross-component exports
	 * (variant payloads sharing joined flat slots) work regardless.
	 */
	cm_component *c = load_suite("values/variants.1.wasm");
	cm_store_config cfg;
	cm_store *s;
	cm_component_instance *inst;
	cm_error err;

	if (c == NULL)
		return;
	memset(&cfg, 0, sizeof cfg);
	cfg.lazy_unsupported = true;
	s = cm_store_new(&cfg);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(cm_instantiate(s, c, NULL, &inst, &err), 0);
	ck_assert_uint_eq(call_u32(s, inst, "join-narrow", NULL, 0), 42);
	ck_assert_uint_eq(call_u32(s, inst, "join-wide", NULL, 0), 43);
	ck_assert_uint_eq(call_u32(s, inst, "join-f32", NULL, 0), 44);
	cm_store_free(s);
	cm_component_free(c);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("component_run");
	TCase *tc = tcase_create("run");

	tcase_add_test(tc, host_func_import);
	tcase_add_test(tc, host_instance_import);
	tcase_add_test(tc, instance_import_from_component);
	tcase_add_test(tc, missing_import_named);
	tcase_add_test(tc, trap_poisons_instance);
	tcase_add_test(tc, reentrance_traps);
	tcase_add_test(tc, export_calls_and_isolation);
	tcase_add_test(tc, values_round_trip);
	tcase_add_test(tc, resource_dtors);
	tcase_add_test(tc, sync_exports_beside_async_parts);
	suite_add_tcase(s, tc);
	return s;
}
