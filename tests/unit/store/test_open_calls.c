/*
 * test_open_calls.c - the call-id set of store/open-calls.h against a
 * plain array, through random adds and deletes that force long probe
 * runs, wrap-around and backward shifts; growth; the size limit.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "store/open-calls.h"
#include "testmain.h"

#define POOL 400

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

START_TEST(matches_a_plain_array)
{
	struct open_calls s = {0};
	bool in[POOL] = {false};
	char id[POOL][32];
	uint64_t x = 0x243f6a8885a308d3ull;
	size_t n = 0;

	for (int i = 0; i < POOL; i++)
		snprintf(id[i], sizeof(id[i]), "5eed-%d", i);
	for (int round = 0; round < 200000; round++) {
		size_t k = next(&x) % POOL;

		if (next(&x) % 3) {
			ck_assert(open_calls_add(&s, id[k]));
			n += !in[k];
			in[k] = true;
		} else {
			open_calls_del(&s, id[k]);
			n -= in[k];
			in[k] = false;
		}
		ck_assert_uint_eq(s.n, n);
		if (round % 1000 == 0)
			for (int j = 0; j < POOL; j++)
				ck_assert_int_eq(open_calls_has(&s, id[j]),
						 in[j]);
	}
	for (int j = 0; j < POOL; j++)
		ck_assert_int_eq(open_calls_has(&s, id[j]), in[j]);
	ck_assert(!open_calls_has(&s, "never-added"));
	open_calls_clear(&s);
	ck_assert_uint_eq(s.n, 0);
	for (int j = 0; j < POOL; j++)
		ck_assert(!open_calls_has(&s, id[j]));
	open_calls_free(&s);
	/* An empty set answers without a table. */
	ck_assert(!open_calls_has(&s, "x"));
	open_calls_del(&s, "x");
}
END_TEST

START_TEST(refuses_past_its_limit)
{
	struct open_calls s = {0};
	char id[32];

	for (int i = 0; i < OPEN_CALLS_MAX; i++) {
		snprintf(id, sizeof(id), "c%d", i);
		ck_assert(open_calls_add(&s, id));
	}
	ck_assert(!open_calls_add(&s, "one-more"));
	ck_assert(!open_calls_has(&s, "one-more"));
	ck_assert_uint_eq(s.n, OPEN_CALLS_MAX);
	/* Present ones are still found; a delete makes room again. */
	ck_assert(open_calls_has(&s, "c12345"));
	open_calls_del(&s, "c12345");
	ck_assert(open_calls_add(&s, "one-more"));
	open_calls_free(&s);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("open-calls");
	TCase *tc = tcase_create("set");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, matches_a_plain_array);
	tcase_add_test(tc, refuses_past_its_limit);
	suite_add_tcase(s, tc);
	return s;
}
