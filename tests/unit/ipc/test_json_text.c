/*
 * test_json_text.c - ipc/json-text.h against json_dumps(JSON_COMPACT |
 * JSON_ENCODE_ANY): byte for byte on chosen values (every control
 * character, quotes, NULs in strings and keys, extreme integers, reals)
 * and on thousands of random trees; appending, resetting, the depth
 * limit; json_text_bound() never below the text's length.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ipc/json-text.h"
#include "testmain.h"

/* v's text must equal jansson's; v is released. */
static void same(json_t *v)
{
	struct json_text t = {0};
	char *want;

	ck_assert_ptr_nonnull(v);
	want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	ck_assert_ptr_nonnull(want);
	ck_assert_int_eq(json_text_put(&t, v), 0);
	ck_assert_msg(t.len == strlen(want) && !strcmp(t.buf, want),
		      "got  %s\nwant %s", t.buf, want);
	/* The bound is one. */
	ck_assert_uint_ge(json_text_bound(v), t.len);
	free(want);
	json_text_free(&t);
	json_decref(v);
}

START_TEST(chosen_values)
{
	char ctl[40];
	json_t *o;

	same(json_null());
	same(json_true());
	same(json_false());
	same(json_integer(0));
	same(json_integer(-1));
	same(json_integer(INT64_MAX));
	same(json_integer(INT64_MIN));
	same(json_integer(1000000007));
	same(json_real(1.5));
	same(json_real(3.0));
	same(json_real(-0.0));
	same(json_real(1e300));
	same(json_real(2.5e-310));
	same(json_string(""));
	same(json_string("plain text / with a slash"));
	same(json_string("\"quoted\" \\back\\"));
	same(json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
	for (int i = 1; i < 32; i++)
		ctl[i - 1] = (char)i;
	ctl[31] = 0x7f;
	same(json_stringn(ctl, 32));
	same(json_stringn("nul\0inside", 10));
	same(json_array());
	same(json_object());
	same(json_loads("[[],{},[[1]],{\"a\":{\"b\":[true,null]}}]", 0, NULL));
	o = json_object();
	json_object_setn_new(o, "k\0ey", 4, json_integer(1));
	json_object_set_new(o, "z", json_string("last"));
	json_object_set_new(o, "a", json_string("after z: the object's order"));
	same(o);
}
END_TEST

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Valid UTF-8 (jansson checks it), rich in characters that escape. */
static json_t *random_string(uint64_t *x)
{
	static const char *const pieces[] = {
		"a",
		"Z",
		"0",
		" ",
		"\"",
		"\\",
		"/",
		"\b",
		"\f",
		"\n",
		"\r",
		"\t",
		"\x01",
		"\x1f",
		"\x7f",
		"\xc3\xa9",
		"\xe2\x82\xac",
		"\xf0\x9f\x98\x80",
		"\0",
	};
	char buf[64];
	size_t len = 0, n = next(x) % 12;
	json_t *s;

	for (size_t i = 0; i < n; i++) {
		const char *p =
			pieces[next(x) % (sizeof(pieces) / sizeof(pieces[0]))];
		size_t pl = *p ? strlen(p) : 1;

		memcpy(buf + len, p, pl);
		len += pl;
	}
	s = json_stringn(buf, len);
	ck_assert_ptr_nonnull(s);
	return s;
}

static json_t *random_value(uint64_t *x, int depth)
{
	uint64_t r = next(x);
	int kind = (int)(r % (depth > 5 ? 6 : 8));
	json_t *v;

	switch (kind) {
	case 0:
		return json_null();
	case 1:
		return json_boolean(r >> 8 & 1);
	case 2:
		return json_integer((json_int_t)next(x) >> (next(x) % 64));
	case 3: {
		double d;
		uint64_t bits = next(x);

		memcpy(&d, &bits, sizeof(d));
		/* jansson refuses NaN and infinities. */
		return json_real(d != d || d - d != 0 ? 0.25 : d);
	}
	case 4:
	case 5:
		return random_string(x);
	case 6:
		v = json_array();
		for (uint64_t n = next(x) % 5; n; n--)
			json_array_append_new(v, random_value(x, depth + 1));
		return v;
	default:
		v = json_object();
		for (uint64_t n = next(x) % 5; n; n--) {
			json_t *k = random_string(x);

			json_object_setn_new(v, json_string_value(k),
					     json_string_length(k),
					     random_value(x, depth + 1));
			json_decref(k);
		}
		return v;
	}
}

START_TEST(random_trees)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (int i = 0; i < 5000; i++)
		same(random_value(&x, 0));
}
END_TEST

START_TEST(appends_and_resets)
{
	struct json_text t = {0};
	json_t *v = json_pack("{s:[i,s]}", "k", 7, "x");

	ck_assert_int_eq(json_text_put(&t, v), 0);
	ck_assert_int_eq(json_text_put(&t, v), 0);
	ck_assert_str_eq(t.buf, "{\"k\":[7,\"x\"]}{\"k\":[7,\"x\"]}");
	json_text_reset(&t);
	ck_assert_uint_eq(t.len, 0);
	ck_assert_str_eq(t.buf, "");
	ck_assert_int_eq(json_text_put(&t, v), 0);
	ck_assert_str_eq(t.buf, "{\"k\":[7,\"x\"]}");
	ck_assert_int_eq(json_text_put(&t, NULL), -EINVAL);
	ck_assert_str_eq(t.buf, "{\"k\":[7,\"x\"]}");
	json_decref(v);
	json_text_free(&t);
	ck_assert_ptr_null(t.buf);
}
END_TEST

START_TEST(too_deep_is_refused_and_leaves_the_text)
{
	struct json_text t = {0};
	json_t *top = json_array(), *v = top, *one = json_integer(1);

	for (int i = 0; i < JSON_TEXT_DEPTH_MAX + 5; i++) {
		json_t *inner = json_array();

		json_array_append_new(v, inner);
		v = inner;
	}
	ck_assert_int_eq(json_text_put(&t, one), 0);
	ck_assert_int_eq(json_text_put(&t, top), -ELOOP);
	ck_assert_uint_eq(json_text_bound(top), SIZE_MAX);
	ck_assert_uint_eq(t.len, 1);
	ck_assert_str_eq(t.buf, "1");
	json_decref(top);
	json_decref(one);
	json_text_free(&t);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("json-text");
	TCase *tc = tcase_create("text");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, chosen_values);
	tcase_add_test(tc, random_trees);
	tcase_add_test(tc, appends_and_resets);
	tcase_add_test(tc, too_deep_is_refused_and_leaves_the_text);
	suite_add_tcase(s, tc);
	return s;
}
