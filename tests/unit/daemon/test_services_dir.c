/*
 * test_services_dir.c - the services.d file parser of
 * daemon/services-dir.h: what a file turns into (the Config text a
 * client's Create would send) and each error, named by path and line.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/services-dir.h"
#include "testmain.h"

#define PATH "/etc/hostel/services.d/web.conf"

static int parse(const char *path, const char *text, struct service_file *f,
		 char *err)
{
	return service_file_parse(path, text, strlen(text), f, err, 512);
}

START_TEST(full_file)
{
	static const char text[] =
		"# web\n"
		"component = lib/web.wasm\n"
		"env = A=1\n"
		"env = B=x=y\n"
		"arg = --one\n"
		"arg = two words\n"
		"preopen = /srv/web::/data\n"
		"owner = 0\n"
		"autostart = no\n"
		"memory = 2M\n"
		"host-bytes = 1G\n"
		"deadline = 1500ms\n"
		"fuel-per-call = 1000\n"
		"max-queued-calls = 7\n";
	struct service_file f;
	char err[512] = "";

	ck_assert_int_eq(parse(PATH, text, &f, err), 0);
	ck_assert_str_eq(f.name, "web");
	/* relative to the folder of the file */
	ck_assert_str_eq(f.component, "/etc/hostel/services.d/lib/web.wasm");
	ck_assert(!f.autostart);
	ck_assert_int_eq(f.owner, 0);
	ck_assert_str_eq(f.config,
			 "{\"args\":[\"--one\",\"two words\"],"
			 "\"env\":{\"A\":\"1\",\"B\":\"x=y\"},"
			 "\"limits\":{\"deadlineMs\":1500,\"fuelPerCall\":1000,"
			 "\"hostBytes\":1073741824,\"maxQueuedCalls\":7,"
			 "\"memory\":2097152},"
			 "\"preopens\":[\"/srv/web::/data\"]}");
	service_file_clear(&f);
}
END_TEST

START_TEST(defaults)
{
	struct service_file f;
	char err[512] = "";

	ck_assert_int_eq(parse(PATH, "component = /w.wasm\ndeadline = 2m\n",
			       &f, err),
			 0);
	ck_assert(f.autostart);
	ck_assert_int_eq(f.owner, -1);
	ck_assert_str_eq(f.config, "{\"limits\":{\"deadlineMs\":120000}}");
	service_file_clear(&f);
	ck_assert_int_eq(parse(PATH, "component = /w.wasm\n", &f, err), 0);
	ck_assert_str_eq(f.config, "{}");
	service_file_clear(&f);
}
END_TEST

static void refused(const char *path, const char *text, const char *why)
{
	struct service_file f;
	char err[512] = "";

	ck_assert_int_eq(parse(path, text, &f, err), -EINVAL);
	ck_assert_msg(strcmp(err, why) == 0, "got \"%s\", want \"%s\"", err,
		      why);
	ck_assert_ptr_null(f.component);
	ck_assert_ptr_null(f.config);
}

START_TEST(errors_name_the_line)
{
	refused(PATH, "component = /w.wasm\nmemory = lots\n",
		PATH ":2: memory: expected a size (N, NK, NM or NG), not 'lots'");
	refused(PATH, "\n\ncolour = red\n", PATH ":3: unknown key 'colour'");
	refused(PATH, "component\n", PATH ":1: expected 'key = value'");
	refused(PATH, " = x\n", PATH ":1: missing key before '='");
	refused(PATH, "component =\n", PATH ":1: empty value");
	refused(PATH, "component = /a\ncomponent = /b\n",
		PATH ":2: component given twice");
	refused(PATH, "component = /a\nmemory = 1M\nmemory = 2M\n",
		PATH ":3: memory given twice");
	refused(PATH, "component = /a\nenv = A=1\nenv = A=2\n",
		PATH ":3: env: A given twice");
	refused(PATH, "component = /a\nenv = =1\n",
		PATH ":2: env: expected NAME=VALUE, not '=1'");
	refused(PATH, "component = /a\nautostart = maybe\n",
		PATH ":2: autostart: expected yes or no, not 'maybe'");
	refused(PATH, "component = /a\nowner = no-such-user-here\n",
		PATH ":2: owner: no user 'no-such-user-here'");
	refused(PATH, "component = /a\ndeadline = soon\n",
		PATH ":2: deadline: expected a duration (Nms, Ns, Nm, Nh), "
		     "not 'soon'");
	refused(PATH, "component = /a\nfuel-per-call = -1\n",
		PATH ":2: fuel-per-call: expected a count, not '-1'");
	refused(PATH, "arg = x\n", PATH ": no component = PATH");
}
END_TEST

START_TEST(checked_as_create_is)
{
	struct service_file f;
	char err[512] = "";

	/* the range of a limit is the protocol's, said without a line */
	ck_assert_int_eq(parse(PATH, "component = /a\nmax-handles = 0\n", &f,
			       err),
			 -EINVAL);
	ck_assert_msg(strstr(err, PATH ": ") == err &&
			      strstr(err, "maxHandles") != NULL,
		      "%s", err);
	ck_assert_int_eq(parse(PATH, "component = /a\npreopen = relative\n",
			       &f, err),
			 -EINVAL);
	ck_assert_msg(strstr(err, "preopens") != NULL, "%s", err);
}
END_TEST

START_TEST(file_names)
{
	refused("/d/.conf", "component = /a\n",
		"/d/.conf: the file name is not NAME.conf with a valid service "
		"name");
	refused("/d/-x.conf", "component = /a\n",
		"/d/-x.conf: the file name is not NAME.conf with a valid "
		"service name");
	refused("/d/web.cfg", "component = /a\n",
		"/d/web.cfg: the file name is not NAME.conf with a valid "
		"service name");
}
END_TEST

START_TEST(nul_byte)
{
	struct service_file f;
	char err[512] = "";
	static const char text[] = "component = /a\nenv = A\0B\n";

	ck_assert_int_eq(service_file_parse(PATH, text, sizeof(text) - 1, &f,
					    err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, PATH ":2: NUL byte");
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("services-dir");
	TCase *tc = tcase_create("service_file_parse");

	tcase_add_test(tc, full_file);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, errors_name_the_line);
	tcase_add_test(tc, checked_as_create_is);
	tcase_add_test(tc, file_names);
	tcase_add_test(tc, nul_byte);
	suite_add_tcase(s, tc);
	return s;
}
