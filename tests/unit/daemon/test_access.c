/*
 * test_access.c - the access policy of daemon/access.h: list syntax,
 * roles from credentials (numeric principals, groups, defaults, root and
 * the daemon's own uid), ownership rules, the configuration keys, and
 * that every method of the dispatch table needs more than a connection
 * except the three that describe the daemon.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "daemon/access.h"
#include "daemon/conffile.h"
#include "daemon/conn.h"
#include "daemon/dispatch.h"
#include "testmain.h"

static struct conn_cred who(uid_t uid, gid_t gid)
{
	return (struct conn_cred){
		.valid = true, .pid = 1, .uid = uid, .gid = gid};
}

START_TEST(list_syntax)
{
	char why[200] = "";

	ck_assert_int_eq(access_list_check("", why, sizeof(why)), 0);
	ck_assert_int_eq(access_list_check("*", why, sizeof(why)), 0);
	ck_assert_int_eq(access_list_check("none", why, sizeof(why)), 0);
	ck_assert_int_eq(
		access_list_check(" alice, 1000\t@adm,@42 ", why, sizeof(why)),
		0);
	ck_assert_int_eq(access_list_check("al!ce", why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "al!ce"));
	ck_assert_int_eq(access_list_check("@", why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(access_list_check("alice @", why, sizeof(why)),
			 -EINVAL);
}
END_TEST

START_TEST(roles_from_numeric_principals)
{
	struct access_policy p;
	char why[200] = "";
	struct conn_cred c;

	ck_assert_int_eq(access_policy_build(&p, "40002", "40003 @40100",
					     "40005", why, sizeof(why)),
			 0);
	c = who(40002, 9);
	ck_assert_int_eq(access_role_of(&p, &c), ACCESS_CALL);
	c = who(40003, 9);
	ck_assert_int_eq(access_role_of(&p, &c), ACCESS_DEPLOY);
	c = who(40077, 40100); /* by primary group */
	ck_assert_int_eq(access_role_of(&p, &c), ACCESS_DEPLOY);
	c = who(40005, 9);
	ck_assert_int_eq(access_role_of(&p, &c), ACCESS_ADMIN);
	c = who(40099, 9);
	ck_assert_int_eq(access_role_of(&p, &c), ACCESS_CONNECT);
	c = who(0, 0);
	ck_assert_int_eq(access_role_of(&p, &c), ACCESS_ADMIN);
	c = who(geteuid(), 9);
	ck_assert_int_eq(access_role_of(&p, &c), ACCESS_ADMIN);
	c = who(40005, 9);
	c.valid = false;
	ck_assert_int_eq(access_role_of(&p, &c), ACCESS_CONNECT);
	access_policy_free(&p);
}
END_TEST

START_TEST(defaults_and_names)
{
	struct access_policy p;
	char why[200] = "";
	struct conn_cred c = who(40099, 40099);

	ck_assert_int_eq(
		access_policy_build(&p, NULL, NULL, NULL, why, sizeof(why)), 0);
	/* Anyone who can open the socket may deploy; nobody else admins. */
	ck_assert_int_eq(access_role_of(&p, &c), ACCESS_DEPLOY);
	access_policy_free(&p);

	ck_assert_int_eq(access_policy_build(&p, "root", "none", "none", why,
					     sizeof(why)),
			 0);
	ck_assert_int_eq(access_role_of(&p, &c), ACCESS_CONNECT);
	access_policy_free(&p);

	ck_assert_int_eq(access_policy_build(&p, "no-such-user-hostel", NULL,
					     NULL, why, sizeof(why)),
			 -EINVAL);
	ck_assert_str_eq(why, "allow-call: unknown user 'no-such-user-hostel'");
	ck_assert_int_eq(access_policy_build(&p, NULL, NULL,
					     "@no-such-group-hostel", why,
					     sizeof(why)),
			 -EINVAL);
	ck_assert_str_eq(why,
			 "allow-admin: unknown group 'no-such-group-hostel'");
	access_policy_free(&p); /* safe after a failed build */
}
END_TEST

START_TEST(ownership)
{
	struct conn_cred a = who(40003, 1), b = who(40004, 1);

	ck_assert(access_may_see(ACCESS_CALL, &a, -1));
	ck_assert(access_may_see(ACCESS_CALL, &a, 40003));
	ck_assert(!access_may_see(ACCESS_CALL, &b, 40003));
	ck_assert(!access_may_see(ACCESS_CONNECT, &a, -1));
	ck_assert(access_may_see(ACCESS_ADMIN, &b, 40003));

	ck_assert(access_may_manage(ACCESS_DEPLOY, &a, 40003));
	ck_assert(!access_may_manage(ACCESS_DEPLOY, &b, 40003));
	ck_assert(!access_may_manage(ACCESS_DEPLOY, &a, -1));
	ck_assert(!access_may_manage(ACCESS_CALL, &a, 40003));
	ck_assert(access_may_manage(ACCESS_ADMIN, &b, -1));
}
END_TEST

static int parse(const char *text, struct config *c, char *err)
{
	return config_parse("t.conf", text, strlen(text), c, err, 256);
}

START_TEST(config_keys)
{
	static const char text[] = "socket-group = hostel\n"
				   "allow-call = *\n"
				   "allow-deploy = alice, @ops\n"
				   "allow-admin = none\n";
	struct config c;
	char err[256] = "";

	ck_assert_int_eq(parse(text, &c, err), 0);
	ck_assert_str_eq(c.socket_group, "hostel");
	ck_assert_str_eq(c.allow_call, "*");
	ck_assert_str_eq(c.allow_deploy, "alice, @ops");
	ck_assert_str_eq(c.allow_admin, "none");
	config_free(&c);

	ck_assert_int_eq(parse("allow-call = a b\nallow-call = c\n", &c, err),
			 -EINVAL);
	ck_assert_str_eq(err, "t.conf:2: 'allow-call' is set twice");
	ck_assert_int_eq(parse("socket-group = a b\n", &c, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "t.conf:1: socket-group must be"));
	ck_assert_int_eq(parse("allow-admin = x/y\n", &c, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "t.conf:1: allow-admin: 'x/y'"));
}
END_TEST

START_TEST(methods_need_a_role)
{
	static const char *const open_methods[] = {
		"org.varlink.service.GetInfo",
		"org.varlink.service.GetInterfaceDescription",
		"io.hostel.Daemon.Status", NULL};
	size_t n = 0;

	for (const struct method *m = daemon_methods; m->name; m++, n++) {
		bool open = false;

		for (const char *const *o = open_methods; *o; o++)
			open |= !strcmp(*o, m->name);
		if (open)
			ck_assert_int_eq(m->role, ACCESS_CONNECT);
		else
			ck_assert_msg(m->role > ACCESS_CONNECT,
				      "%s needs no role", m->name);
	}
	ck_assert_uint_gt(n, 3);
	ck_assert_str_eq(access_role_name(ACCESS_DEPLOY), "deploy");
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("access");
	TCase *tc = tcase_create("policy");

	tcase_add_test(tc, list_syntax);
	tcase_add_test(tc, roles_from_numeric_principals);
	tcase_add_test(tc, defaults_and_names);
	tcase_add_test(tc, ownership);
	tcase_add_test(tc, config_keys);
	tcase_add_test(tc, methods_need_a_role);
	suite_add_tcase(s, tc);
	return s;
}
