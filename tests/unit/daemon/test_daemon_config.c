/*
 * test_daemon_config.c - the hostel.conf parser of daemon/conffile.h.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/conffile.h"
#include "daemon/log.h"
#include "testmain.h"

static int parse(const char *text, struct config *c, char *err)
{
	return config_parse("test.conf", text, strlen(text), c, err, 256);
}

START_TEST(full_file)
{
	static const char text[] = "# hostel.conf\n"
				   "\n"
				   "socket = /run/hostel/x.sock\n"
				   "  state-dir=/var/lib/h#1  \r\n"
				   "\tlog-level =\tdebug\n"
				   "   # indented comment";
	struct config c;
	char err[256] = "";

	ck_assert_int_eq(parse(text, &c, err), 0);
	ck_assert_str_eq(c.socket, "/run/hostel/x.sock");
	/* '#' inside a value is part of it; blanks and \r are trimmed. */
	ck_assert_str_eq(c.state_dir, "/var/lib/h#1");
	ck_assert_int_eq(c.log_level, LOG_PRIO_DEBUG);
	config_free(&c);
	ck_assert_ptr_null(c.socket);
	ck_assert_int_eq(c.log_level, -1);
}
END_TEST

START_TEST(empty_file)
{
	struct config c;
	char err[256];

	ck_assert_int_eq(parse("", &c, err), 0);
	ck_assert_ptr_null(c.socket);
	ck_assert_ptr_null(c.state_dir);
	ck_assert_int_eq(c.log_level, -1);
	config_free(&c);
}
END_TEST

static void bad(const char *text, const char *want)
{
	struct config c;
	char err[256] = "";

	ck_assert_int_eq(parse(text, &c, err), -EINVAL);
	ck_assert_msg(strstr(err, want), "'%s' -> '%s', want '%s'", text, err,
		      want);
	/* Nothing half-parsed is left behind. */
	ck_assert_ptr_null(c.socket);
	ck_assert_ptr_null(c.state_dir);
	ck_assert_int_eq(c.log_level, -1);
}

START_TEST(errors_name_the_line)
{
	bad("socket = /a\n\nfoo = 1\n", "test.conf:3: unknown key 'foo'");
	bad("socket /a\n", "test.conf:1: expected 'key = value'");
	bad("= /a\n", "test.conf:1: missing key");
	bad("log-level = \n", "test.conf:1: 'log-level' has no value");
	bad("log-level = loud\n", "test.conf:1: log-level must be");
	bad("state-dir = relative/dir\n", "test.conf:1: 'state-dir' must be "
					  "an absolute path");
	bad("socket = /a\nsocket = /b\n", "test.conf:2: 'socket' is set twice");
	bad("log-level = info\nlog-level = info\n", "test.conf:2:");
}
END_TEST

START_TEST(history_keys)
{
	static const char text[] = "database-synchronous = normal\n"
				   "history-keep-events = 0\n"
				   "history-keep-age = 30d\n";
	struct config c;
	char err[256] = "";

	ck_assert_int_eq(parse(text, &c, err), 0);
	ck_assert_int_eq(c.db_sync, 1);
	ck_assert_int_eq(c.keep_events, 0);
	ck_assert_int_eq(c.keep_age, 30 * 86400);
	config_free(&c);
	ck_assert_int_eq(c.db_sync, -1);
	ck_assert_int_eq(c.keep_events, -1);
	ck_assert_int_eq(c.keep_age, -1);
	ck_assert_int_eq(parse("database-synchronous = full\n"
			       "history-keep-age = 90\n",
			       &c, err),
			 0);
	ck_assert_int_eq(c.db_sync, 0);
	ck_assert_int_eq(c.keep_age, 90);
	ck_assert_int_eq(c.keep_events, -1);
	config_free(&c);
	ck_assert_int_eq(parse("history-keep-age = 12h\nhistory-keep-events = "
			       "123456\n",
			       &c, err),
			 0);
	ck_assert_int_eq(c.keep_age, 12 * 3600);
	ck_assert_int_eq(c.keep_events, 123456);
	config_free(&c);
	ck_assert_int_eq(parse("history-keep-age = 5m\n", &c, err), 0);
	ck_assert_int_eq(c.keep_age, 300);
	/* The units hostel(1) takes: one set (ipc/timefmt.h). */
	ck_assert_int_eq(parse("history-keep-age = 10min\n", &c, err), 0);
	ck_assert_int_eq(c.keep_age, 600);
	ck_assert_int_eq(parse("history-keep-age = 3w\n", &c, err), 0);
	ck_assert_int_eq(c.keep_age, 3 * 7 * 86400);
	config_free(&c);
}
END_TEST

START_TEST(history_key_errors)
{
	bad("database-synchronous = off\n",
	    "test.conf:1: database-synchronous must be full or normal, not "
	    "'off'");
	bad("history-keep-events = -1\n",
	    "test.conf:1: history-keep-events must be a number");
	bad("history-keep-events = 10k\n", "history-keep-events must be");
	bad("history-keep-events = 99999999999999999999\n",
	    "history-keep-events must be");
	bad("history-keep-age = 3x\n", "test.conf:1: history-keep-age must "
				       "be a duration");
	bad("history-keep-age = 3 m\n", "history-keep-age must be");
	bad("history-keep-age = d\n", "history-keep-age must be");
	bad("history-keep-age = 1.5d\n", "history-keep-age must be");
	bad("history-keep-age = 1d\nhistory-keep-age = 2d\n",
	    "test.conf:2: 'history-keep-age' is set twice");
	bad("database-synchronous = full\ndatabase-synchronous = full\n",
	    "test.conf:2: 'database-synchronous' is set twice");
	bad("nope = 1\n", "known: socket, state-dir, log-level, "
			  "database-synchronous, history-keep-events, "
			  "history-keep-age");
}
END_TEST

START_TEST(host_bytes_key)
{
	struct config c;
	char err[256] = "";

	ck_assert_int_eq(parse("service-host-bytes = 64M\n", &c, err), 0);
	ck_assert_int_eq(c.host_bytes, 64LL << 20);
	config_free(&c);
	ck_assert_int_eq(c.host_bytes, -1);
	ck_assert_int_eq(parse("service-host-bytes = 2G\n", &c, err), 0);
	ck_assert_int_eq(c.host_bytes, 2LL << 30);
	config_free(&c);
	ck_assert_int_eq(parse("service-host-bytes = 4096K\n", &c, err), 0);
	ck_assert_int_eq(c.host_bytes, 4LL << 20);
	config_free(&c);
	ck_assert_int_eq(parse("service-host-bytes = 1048576\n", &c, err), 0);
	ck_assert_int_eq(c.host_bytes, 1LL << 20);
	config_free(&c);
	bad("service-host-bytes = 1048575\n",
	    "test.conf:1: service-host-bytes must be a size of at least 1M");
	bad("service-host-bytes = 0\n", "service-host-bytes must be a size");
	bad("service-host-bytes = 1T\n", "service-host-bytes must be a size");
	bad("service-host-bytes = M\n", "service-host-bytes must be a size");
	bad("service-host-bytes = 1M\nservice-host-bytes = 2M\n",
	    "test.conf:2: 'service-host-bytes' is set twice");
}
END_TEST

/* service-memory: a size in bytes (0: the component's own), -1 unset. */
START_TEST(memory_key)
{
	struct config c;
	char err[256] = "";

	ck_assert_int_eq(parse("service-memory = 64M\n", &c, err), 0);
	ck_assert_int_eq(c.memory, 64LL << 20);
	config_free(&c);
	ck_assert_int_eq(c.memory, -1);
	ck_assert_int_eq(parse("service-memory = 0\n", &c, err), 0);
	ck_assert_int_eq(c.memory, 0);
	config_free(&c);
	bad("service-memory = lots\n",
	    "test.conf:1: service-memory must be a size like 64M");
	bad("service-memory = 1M\nservice-memory = 2M\n",
	    "test.conf:2: 'service-memory' is set twice");
}
END_TEST

/* call-deadline: a duration in seconds, 0 for none, -1 when not set. */
START_TEST(call_deadline_key)
{
	struct config c;
	char err[256] = "";

	ck_assert_int_eq(parse("log-level = info\n", &c, err), 0);
	ck_assert_int_eq(c.call_deadline, -1);
	config_free(&c);
	ck_assert_int_eq(parse("call-deadline = 5min\n", &c, err), 0);
	ck_assert_int_eq(c.call_deadline, 300);
	config_free(&c);
	ck_assert_int_eq(c.call_deadline, -1);
	ck_assert_int_eq(parse("call-deadline = 0\n", &c, err), 0);
	ck_assert_int_eq(c.call_deadline, 0);
	config_free(&c);
	ck_assert_int_eq(parse("call-deadline = 30s\n", &c, err), 0);
	ck_assert_int_eq(c.call_deadline, 30);
	config_free(&c);
	ck_assert_int_eq(parse("call-deadline = 2h\n", &c, err), 0);
	ck_assert_int_eq(c.call_deadline, 7200);
	config_free(&c);
	bad("call-deadline = soon\n",
	    "test.conf:1: call-deadline must be a duration like 5min");
	bad("call-deadline = -1\n", "call-deadline must be a duration");
	bad("call-deadline = 1s\ncall-deadline = 2s\n",
	    "test.conf:2: 'call-deadline' is set twice");
}
END_TEST

START_TEST(nul_byte)
{
	static const char text[] = "socket = /a\nlog-level = in\0fo\n";
	struct config c;
	char err[256] = "";

	ck_assert_int_eq(
		config_parse("t", text, sizeof(text) - 1, &c, err, sizeof(err)),
		-EINVAL);
	ck_assert_str_eq(err, "t:2: NUL byte");
}
END_TEST

START_TEST(long_socket_path)
{
	char text[400];
	char err[256];
	struct config c;

	snprintf(text, sizeof(text), "socket = /%0200d\n", 0);
	ck_assert_int_eq(parse(text, &c, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "too long"));
}
END_TEST

START_TEST(load_file)
{
	char path[] = "/tmp/hostel-test-conf-XXXXXX";
	int fd = mkstemp(path);
	struct config c;
	char err[256];

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "log-level = error\n", 18), 18);
	close(fd);
	ck_assert_int_eq(config_load(path, &c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.log_level, LOG_PRIO_ERR);
	config_free(&c);
	unlink(path);
	ck_assert_int_eq(config_load(path, &c, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, path));
}
END_TEST

START_TEST(default_state_dir)
{
	char buf[256];

	if (geteuid() == 0) {
		unsetenv("STATE_DIRECTORY");
		ck_assert_int_eq(config_default_state_dir(buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, "/var/lib/hostel");
	}
	setenv("STATE_DIRECTORY", "/srv/a:/srv/b", 1);
	ck_assert_int_eq(config_default_state_dir(buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/srv/a");
	ck_assert_int_eq(config_default_state_dir(buf, 4), -ENAMETOOLONG);
	unsetenv("STATE_DIRECTORY");
}
END_TEST

START_TEST(log_levels)
{
	ck_assert_int_eq(log_level_parse("error"), 3);
	ck_assert_int_eq(log_level_parse("warning"), 4);
	ck_assert_int_eq(log_level_parse("info"), 6);
	ck_assert_int_eq(log_level_parse("debug"), 7);
	ck_assert_int_eq(log_level_parse("notice"), -1);
	ck_assert_str_eq(log_level_name(7), "debug");
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("daemon-config");
	TCase *tc = tcase_create("conffile");

	tcase_add_test(tc, full_file);
	tcase_add_test(tc, empty_file);
	tcase_add_test(tc, errors_name_the_line);
	tcase_add_test(tc, history_keys);
	tcase_add_test(tc, history_key_errors);
	tcase_add_test(tc, host_bytes_key);
	tcase_add_test(tc, memory_key);
	tcase_add_test(tc, call_deadline_key);
	tcase_add_test(tc, nul_byte);
	tcase_add_test(tc, long_socket_path);
	tcase_add_test(tc, load_file);
	tcase_add_test(tc, default_state_dir);
	tcase_add_test(tc, log_levels);
	suite_add_tcase(s, tc);
	return s;
}
