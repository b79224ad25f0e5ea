/*
 * test_idl.c - the varlink IDL checker of ipc/idl.h and the embedded
 * interface descriptions it guards.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ipc/idl.h"
#include "testmain.h"

struct collect {
	char interface[128];
	char members[64][64];
	enum idl_member_kind kinds[64];
	size_t n;
};

static int on_interface(void *ctx, const char *name, size_t len)
{
	struct collect *c = ctx;

	snprintf(c->interface, sizeof(c->interface), "%.*s", (int)len, name);
	return 0;
}

static int on_member(void *ctx, enum idl_member_kind kind, const char *name,
		     size_t len)
{
	struct collect *c = ctx;

	ck_assert_uint_lt(c->n, 64);
	snprintf(c->members[c->n], sizeof(c->members[0]), "%.*s", (int)len,
		 name);
	c->kinds[c->n++] = kind;
	return 0;
}

static const struct idl_visitor collector = {on_interface, on_member};

static bool has(const struct collect *c, enum idl_member_kind kind,
		const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->kinds[i] == kind && !strcmp(c->members[i], name))
			return true;
	return false;
}

START_TEST(embedded_interfaces_are_valid)
{
	size_t count = 0;

	for (const struct idl_interface *i = idl_interfaces; i->name; i++) {
		struct collect c = {0};
		struct idl_error err;
		int rc = idl_parse(i->text, strlen(i->text), &collector, &c,
				   &err);

		ck_assert_msg(rc == 0, "%s:%u:%u: %s", i->name, err.line,
			      err.column, err.message);
		/* The file name and the declared name agree. */
		ck_assert_str_eq(c.interface, i->name);
		ck_assert_ptr_eq(idl_find(i->name), i);
		count++;
	}
	ck_assert_uint_ge(count, 2);
}
END_TEST

START_TEST(embedded_members)
{
	const struct idl_interface *svc = idl_find("org.varlink.service");
	const struct idl_interface *dmn = idl_find("io.hostel.Daemon");
	const struct idl_interface *call;
	struct collect c = {0};
	struct idl_error err;

	ck_assert_ptr_nonnull(svc);
	ck_assert_ptr_nonnull(dmn);
	ck_assert_int_eq(
		idl_parse(svc->text, strlen(svc->text), &collector, &c, &err),
		0);
	ck_assert(has(&c, IDL_METHOD, "GetInfo"));
	ck_assert(has(&c, IDL_METHOD, "GetInterfaceDescription"));
	ck_assert(has(&c, IDL_ERROR, "InterfaceNotFound"));
	ck_assert(has(&c, IDL_ERROR, "MethodNotFound"));
	ck_assert(has(&c, IDL_ERROR, "InvalidParameter"));
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(
		idl_parse(dmn->text, strlen(dmn->text), &collector, &c, &err),
		0);
	ck_assert(has(&c, IDL_METHOD, "Status"));
	ck_assert(has(&c, IDL_ERROR, "ProtocolError"));
	/* An oversize call gets io.hostel.Call.ValueTooLarge now. */
	ck_assert(!has(&c, IDL_ERROR, "MessageTooLarge"));
	ck_assert_ptr_eq(idl_find_for_member("io.hostel.Daemon.Status"), dmn);
	ck_assert_ptr_null(idl_find_for_member("io.hostel.Nope.Status"));
	ck_assert_ptr_null(idl_find_for_member("Status"));
	ck_assert_ptr_null(idl_find("io.hostel"));
	memset(&c, 0, sizeof(c));
	call = idl_find("io.hostel.Call");
	ck_assert_ptr_nonnull(call);
	ck_assert_int_eq(
		idl_parse(call->text, strlen(call->text), &collector, &c, &err),
		0);
	ck_assert(has(&c, IDL_ERROR, "ValueTooLarge"));
	ck_assert(has(&c, IDL_ERROR, "HistoryUnavailable"));
	ck_assert_ptr_eq(idl_find_for_member("io.hostel.Call.ValueTooLarge"),
			 call);
}
END_TEST

START_TEST(valid_constructs)
{
	static const char text[] = "# leading comment\n"
				   "interface org.example.more-dashes.Test\n"
				   "\n"
				   "type Color (red, green, blue)\n"
				   "type Point (x: float, y: float)\n"
				   "type Shape (\n"
				   "  # fields may carry comments\n"
				   "  kind: Color,\n"
				   "  points: []Point,\n"
				   "  tags: [string]string,\n"
				   "  note: ?string,\n"
				   "  nested: ?[]?(a: int, b: (on, off)),\n"
				   "  any: object,\n"
				   "  ok: bool\n"
				   ")\n"
				   "method Draw(shape: Shape) -> ()\n"
				   "method Ping()->(reply:string)\n"
				   "error Broken (why: string)\n"
				   "error Plain ()\n";
	struct collect c = {0};
	struct idl_error err;
	int rc = idl_parse(text, strlen(text), &collector, &c, &err);

	ck_assert_msg(rc == 0, "%u:%u: %s", err.line, err.column, err.message);
	ck_assert_str_eq(c.interface, "org.example.more-dashes.Test");
	ck_assert_uint_eq(c.n, 7);
	ck_assert(has(&c, IDL_TYPE, "Shape"));
	ck_assert(has(&c, IDL_METHOD, "Ping"));
	ck_assert(has(&c, IDL_ERROR, "Plain"));
}
END_TEST

/* text must fail at line:column with a message containing `what`. */
static void bad(const char *text, unsigned line, unsigned column,
		const char *what)
{
	struct idl_error err;
	int rc = idl_parse(text, strlen(text), NULL, NULL, &err);

	ck_assert_msg(rc == -EINVAL, "accepted: %s", text);
	ck_assert_msg(err.line == line && err.column == column,
		      "%s: got %u:%u (%s), want %u:%u", text, err.line,
		      err.column, err.message, line, column);
	ck_assert_msg(strstr(err.message, what), "%s: message '%s'", text,
		      err.message);
}

START_TEST(invalid_constructs)
{
	bad("", 1, 1, "interface");
	bad("interface org.example.Test\n", 2, 1, "needs a member");
	bad("interface org\nmethod A() -> ()\n", 1, 11, "interface name");
	bad("interface org.example.\nmethod A() -> ()\n", 1, 11,
	    "interface name");
	bad("interface org.-x.y\nmethod A() -> ()\n", 1, 11, "interface name");
	bad("interface org.example.Test\nmethod a() -> ()\n", 2, 8,
	    "member name");
	bad("interface org.example.Test\nfunc A() -> ()\n", 2, 1,
	    "'type', 'method' or 'error'");
	bad("interface org.example.Test\nmethod A() ()\n", 2, 12, "'->'");
	bad("interface org.example.Test\nmethod A(x: int,) -> ()\n", 2, 17,
	    "field name");
	bad("interface org.example.Test\nmethod A(x: int x: int) -> ()\n", 2,
	    17, "',' or ')'");
	bad("interface org.example.Test\nmethod A(x: Nope) -> ()\n", 2, 13,
	    "undefined type 'Nope'");
	bad("interface org.example.Test\nmethod A(x: ??int) -> ()\n", 2, 14,
	    "nullable twice");
	bad("interface org.example.Test\nmethod A(x: int, x: int) -> ()\n", 2,
	    18, "duplicate field");
	bad("interface org.example.Test\nerror E ()\nerror E ()\n", 3, 7,
	    "duplicate member");
	bad("interface org.example.Test\nmethod A(a, b) -> ()\n", 2, 11,
	    "enum is not allowed");
	bad("interface org.example.Test\nmethod A(x: [int]int) -> ()\n", 2, 13,
	    "expected a type");
	bad("interface org.example.Test\nmethod A(x_: int) -> ()\n", 2, 10,
	    "field name");
	bad("interface org.example.Test\nerror E (\n", 3, 1, "field name");
	/* A method's name is not a type. */
	bad("interface org.example.Test\nmethod A() -> ()\n"
	    "method B(x: A) -> ()\n",
	    3, 13, "undefined type 'A'");
}
END_TEST

START_TEST(deep_nesting_is_refused)
{
	char text[512];
	char *p = text;

	p += sprintf(p, "interface org.example.Test\nmethod A(x: ");
	for (int i = 0; i < 40; i++)
		p += sprintf(p, "[]");
	strcpy(p, "int) -> ()\n");
	{
		struct idl_error err;

		ck_assert_int_eq(
			idl_parse(text, strlen(text), NULL, NULL, &err),
			-EINVAL);
		ck_assert_ptr_nonnull(strstr(err.message, "too deeply"));
	}
}
END_TEST

START_TEST(names)
{
	ck_assert(idl_valid_interface_name("io.hostel.Daemon", 16));
	ck_assert(idl_valid_interface_name("a.b", 3));
	ck_assert(idl_valid_interface_name("org.a--b.c9", 11));
	ck_assert(!idl_valid_interface_name("io", 2));
	ck_assert(!idl_valid_interface_name("9a.b", 4));
	ck_assert(!idl_valid_interface_name("a..b", 4));
	ck_assert(!idl_valid_interface_name("a.b-", 4));
	ck_assert(!idl_valid_interface_name("a.b_c", 5));
	ck_assert(idl_valid_member_name("Status", 6));
	ck_assert(!idl_valid_member_name("status", 6));
	ck_assert(!idl_valid_member_name("Sta_tus", 7));
	ck_assert(!idl_valid_member_name("", 0));
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("idl");
	TCase *tc = tcase_create("idl");

	tcase_add_test(tc, embedded_interfaces_are_valid);
	tcase_add_test(tc, embedded_members);
	tcase_add_test(tc, valid_constructs);
	tcase_add_test(tc, invalid_constructs);
	tcase_add_test(tc, deep_nesting_is_refused);
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	return s;
}
