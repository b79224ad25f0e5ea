/*
 * test_wasm_error.c - wasm_error formatting and truncation.
 */
#include <string.h>

#include "wasm/error.h"
#include "testmain.h"

START_TEST(error_formats_and_returns_minus_one)
{
	wasm_error e;
	ck_assert_int_eq(wasm_error_set(&e, WASM_ERR_MALFORMED, 12,
					"unexpected end: %s", "section"),
			 -1);
	ck_assert_int_eq(e.kind, WASM_ERR_MALFORMED);
	ck_assert_uint_eq(e.offset, 12);
	ck_assert_str_eq(e.msg, "unexpected end: section");
}
END_TEST

START_TEST(error_null_is_allowed)
{
	ck_assert_int_eq(wasm_error_set(NULL, WASM_ERR_INVALID, 0, "x"), -1);
}
END_TEST

START_TEST(error_truncates_long_messages)
{
	wasm_error e;
	char big[512];
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = 0;
	wasm_error_set(&e, WASM_ERR_INVALID, 0, "%s", big);
	ck_assert_uint_eq(strlen(e.msg), WASM_ERROR_MSG_MAX - 1);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("error");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, error_formats_and_returns_minus_one);
	tcase_add_test(tc, error_null_is_allowed);
	tcase_add_test(tc, error_truncates_long_messages);
	suite_add_tcase(s, tc);
	return s;
}
