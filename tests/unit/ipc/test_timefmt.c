/*
 * test_timefmt.c - ipc/timefmt.h: durations and their one set of
 * units, RFC 3339 as the protocol carries it (zones, fractions, what it
 * refuses), the user's forms (local time, relative times, "ago"), and
 * that no input, however long or odd, is accepted by accident.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ipc/timefmt.h"
#include "testmain.h"

#define NS 1000000000LL
/* 2026-12-01T20:00:00Z */
#define T0 1796155200LL

static int64_t dur(const char *s)
{
	int64_t v = -1;

	return hostel_duration_parse(s, &v) == 0 ? v : -1;
}

START_TEST(durations)
{
	ck_assert_int_eq(dur("0"), 0);
	ck_assert_int_eq(dur("90"), 90);
	ck_assert_int_eq(dur("90s"), 90);
	ck_assert_int_eq(dur("10m"), 600);
	ck_assert_int_eq(dur("10min"), 600);
	ck_assert_int_eq(dur("2h"), 7200);
	ck_assert_int_eq(dur("30d"), 30 * 86400);
	ck_assert_int_eq(dur("2w"), 14 * 86400);
	ck_assert_int_eq(dur(""), -1);
	ck_assert_int_eq(dur("m"), -1);
	ck_assert_int_eq(dur("3x"), -1);
	ck_assert_int_eq(dur("-1"), -1);
	ck_assert_int_eq(dur("10 m"), -1);
	ck_assert_int_eq(dur("1h30m"), -1);
	ck_assert_int_eq(dur("99999999999999999999"), -1);
	ck_assert_int_eq(dur("9999999999999d"), -1);
	ck_assert_int_eq(hostel_duration_parse(NULL, NULL), -EINVAL);
}
END_TEST

static int64_t rfc(const char *s)
{
	int64_t v = INT64_MIN;

	return hostel_time_parse_rfc3339(s, &v) == 0 ? v : INT64_MIN;
}

START_TEST(rfc3339)
{
	char buf[48];

	ck_assert_int_eq(rfc("2026-12-01T20:00:00Z"), T0 * NS);
	ck_assert_int_eq(rfc("2026-12-01t20:00:00z"), T0 * NS);
	ck_assert_int_eq(rfc("2026-12-01T20:00:00.5Z"), T0 * NS + NS / 2);
	ck_assert_int_eq(rfc("2026-12-01T20:00:00.000000001Z"), T0 * NS + 1);
	ck_assert_int_eq(rfc("2026-12-01T21:30:00+01:30"), T0 * NS);
	ck_assert_int_eq(rfc("2026-12-01T19:00:00-01:00"), T0 * NS);
	ck_assert_int_eq(rfc("2024-02-29T00:00:00Z") != INT64_MIN, 1);
	hostel_time_format(T0 * NS + 1, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2026-12-01T20:00:00.000000001Z");
	ck_assert_int_eq(rfc(buf), T0 * NS + 1);
	/* What the protocol does not carry. */
	ck_assert_int_eq(rfc("2026-12-01 20:00:00Z"), INT64_MIN);
	ck_assert_int_eq(rfc("2026-12-01T20:00:00"), INT64_MIN);
	ck_assert_int_eq(rfc("2026-12-01T20:00Z"), INT64_MIN);
	ck_assert_int_eq(rfc("2026-12-01"), INT64_MIN);
	ck_assert_int_eq(rfc("2026-12-01T20:00:00.Z"), INT64_MIN);
	ck_assert_int_eq(rfc("2026-12-01T20:00:00.0000000001Z"), INT64_MIN);
	ck_assert_int_eq(rfc("2026-13-01T20:00:00Z"), INT64_MIN);
	ck_assert_int_eq(rfc("2025-02-29T20:00:00Z"), INT64_MIN);
	ck_assert_int_eq(rfc("2026-12-01T24:00:00Z"), INT64_MIN);
	ck_assert_int_eq(rfc("2026-12-01T20:00:00Zjunk"), INT64_MIN);
	ck_assert_int_eq(rfc("2026-12-01T20:00:00+0100"), INT64_MIN);
	ck_assert_int_eq(rfc("9999-12-31T23:59:59Z"), INT64_MIN); /* > 2262 */
	ck_assert_int_eq(rfc(""), INT64_MIN);
	ck_assert_int_eq(rfc("2026"), INT64_MIN);
	ck_assert_int_eq(hostel_time_parse_rfc3339(NULL, NULL), -EINVAL);
}
END_TEST

static int64_t user(const char *s)
{
	int64_t v = INT64_MIN;

	return hostel_time_parse_user(s, T0 * NS, &v) == 0 ? v : INT64_MIN;
}

START_TEST(user_forms)
{
	setenv("TZ", "UTC", 1);
	ck_assert_int_eq(user("2026-12-01T20:00:00Z"), T0 * NS);
	ck_assert_int_eq(user("2026-12-01 20:00:00"), T0 * NS);
	ck_assert_int_eq(user("2026-12-01 20:00"), T0 * NS);
	ck_assert_int_eq(user("2026-12-01T20:00"), T0 * NS);
	ck_assert_int_eq(user("2026-12-01 21:00+01:00"), T0 * NS);
	ck_assert_int_eq(user("2026-12-01"), (T0 - 20 * 3600) * NS);
	ck_assert_int_eq(user("now"), T0 * NS);
	ck_assert_int_eq(user("today"), (T0 - 20 * 3600) * NS);
	ck_assert_int_eq(user("yesterday"), (T0 - 20 * 3600 - 86400) * NS);
	ck_assert_int_eq(user("-10m"), (T0 - 600) * NS);
	ck_assert_int_eq(user("-2h"), (T0 - 7200) * NS);
	ck_assert_int_eq(user("-1d"), (T0 - 86400) * NS);
	ck_assert_int_eq(user("-30"), (T0 - 30) * NS);
	ck_assert_int_eq(user("10 min ago"), (T0 - 600) * NS);
	ck_assert_int_eq(user("10min ago"), (T0 - 600) * NS);
	ck_assert_int_eq(user("2 h ago"), (T0 - 7200) * NS);
	ck_assert_int_eq(user("1 w ago"), (T0 - 7 * 86400) * NS);
	setenv("TZ", "EST5", 1); /* local time: five hours behind UTC */
	tzset();
	ck_assert_int_eq(user("2026-12-01 15:00:00"), T0 * NS);
	setenv("TZ", "UTC", 1);
	tzset();
	/* Refused. */
	ck_assert_int_eq(user("ago"), INT64_MIN);
	ck_assert_int_eq(user(" ago"), INT64_MIN);
	ck_assert_int_eq(user("10  min ago"), INT64_MIN);
	ck_assert_int_eq(user("10 minutes ago"), INT64_MIN);
	ck_assert_int_eq(user("-"), INT64_MIN);
	ck_assert_int_eq(user("-10 m"), INT64_MIN);
	ck_assert_int_eq(user("--10m"), INT64_MIN);
	ck_assert_int_eq(user("+10m"), INT64_MIN);
	ck_assert_int_eq(user("-9999999999999d"), INT64_MIN);
	ck_assert_int_eq(user("tomorrow"), INT64_MIN);
	ck_assert_int_eq(user("2026-12-01  20:00"), INT64_MIN);
	ck_assert_int_eq(user("2026-12-01 20"), INT64_MIN);
	ck_assert_int_eq(user(""), INT64_MIN);
	ck_assert_int_eq(hostel_time_parse_user(NULL, 0, NULL), -EINVAL);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("timefmt");
	TCase *tc = tcase_create("timefmt");

	tcase_add_test(tc, durations);
	tcase_add_test(tc, rfc3339);
	tcase_add_test(tc, user_forms);
	suite_add_tcase(s, tc);
	return s;
}
