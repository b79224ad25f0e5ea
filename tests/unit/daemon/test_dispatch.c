/*
 * test_dispatch.c - the daemon's method table agrees with the interface
 * descriptions it serves: every method in the table is declared in an
 * embedded IDL, and every declared method has a handler (no stubs, no
 * undocumented methods).
 */
#include "config.h"

#include <string.h>

#include "daemon/dispatch.h"
#include "ipc/idl.h"
#include "testmain.h"

struct ctx {
	const char *interface;
	size_t methods;
	char missing[256];
};

static int on_member(void *arg, enum idl_member_kind kind, const char *name,
		     size_t len)
{
	struct ctx *c = arg;
	char qualified[256];

	if (kind != IDL_METHOD)
		return 0;
	c->methods++;
	snprintf(qualified, sizeof(qualified), "%s.%.*s", c->interface,
		 (int)len, name);
	if (!method_find(qualified) && !c->missing[0])
		snprintf(c->missing, sizeof(c->missing), "%s", qualified);
	return 0;
}

START_TEST(every_declared_method_has_a_handler)
{
	static const struct idl_visitor v = {NULL, on_member};
	size_t total = 0;

	for (const struct idl_interface *i = idl_interfaces; i->name; i++) {
		struct ctx c = {.interface = i->name};
		struct idl_error err;

		ck_assert_int_eq(
			idl_parse(i->text, strlen(i->text), &v, &c, &err), 0);
		ck_assert_msg(!c.missing[0],
			      "%s is declared but has no handler", c.missing);
		total += c.methods;
	}
	for (const struct method *m = daemon_methods; m->name; m++)
		total--;
	/* Same count both ways and no duplicates below: a bijection. */
	ck_assert_uint_eq(total, 0);
}
END_TEST

static int find_member(void *arg, enum idl_member_kind kind, const char *name,
		       size_t len)
{
	const char *want = arg;

	return kind == IDL_METHOD && strlen(want) == len &&
	       !memcmp(want, name, len);
}

START_TEST(every_handler_is_declared)
{
	static const struct idl_visitor v = {NULL, find_member};

	for (const struct method *m = daemon_methods; m->name; m++) {
		const struct idl_interface *i = idl_find_for_member(m->name);
		struct idl_error err;

		ck_assert_msg(i != NULL, "%s: interface not embedded", m->name);
		ck_assert_ptr_nonnull(m->handler);
		ck_assert_msg(idl_parse(i->text, strlen(i->text), &v,
					(void *)(strrchr(m->name, '.') + 1),
					&err) == 1,
			      "%s is not declared in %s", m->name, i->name);
		ck_assert_ptr_eq(method_find(m->name), m);
	}
	ck_assert_ptr_null(method_find("io.hostel.Daemon.Nope"));
	ck_assert_ptr_null(method_find("io.hostel.Daemon"));
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("dispatch");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, every_declared_method_has_a_handler);
	tcase_add_test(tc, every_handler_is_declared);
	suite_add_tcase(s, tc);
	return s;
}
