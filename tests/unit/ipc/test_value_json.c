/*
 * test_value_json.c - ipc/value-json: every canonical shape both ways
 * (value -> JSON text -> value gives the same value), the 2^53 rule for
 * 64-bit integers, float specials, base64 bytes, option<option<T>>, and
 * clear errors (with the path) for values of the wrong shape.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cabi_types.h"
#include "ipc/value-json.h"
#include "testmain.h"

/* Parse text as JSON, convert with t, print back: must give `want`. */
static void round_trip(const char *text, const cm_type *t, const char *want)
{
	json_error_t jerr;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &jerr);
	json_t *back;
	cm_val v;
	char why[256];
	char *out;

	ck_assert_msg(j != NULL, "bad test JSON %s", text);
	ck_assert_msg(value_from_json(j, t, "v", &v, why, sizeof(why)) == 0,
		      "%s: %s", text, why);
	ck_assert(cm_val_typecheck(&v, t, NULL, 0));
	back = value_to_json(&v, t);
	ck_assert_ptr_nonnull(back);
	out = json_dumps(back, JSON_COMPACT | JSON_ENCODE_ANY);
	ck_assert_str_eq(out, want ? want : text);
	free(out);
	json_decref(back);
	json_decref(j);
	cm_val_free(&v);
}

static void refused(const char *text, const cm_type *t, const char *reason)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
	cm_val v;
	char why[256];

	ck_assert_ptr_nonnull(j);
	ck_assert_int_eq(value_from_json(j, t, "v", &v, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, reason) != NULL, "%s: got '%s', want '%s'",
		      text, why, reason);
	json_decref(j);
}

START_TEST(scalars)
{
	round_trip("true", P(CM_BOOL), NULL);
	round_trip("-128", P(CM_S8), NULL);
	round_trip("65535", P(CM_U16), NULL);
	round_trip("\"42\"", P(CM_U32), "42");
	round_trip("9007199254740992", P(CM_U64), NULL);
	round_trip("\"18446744073709551615\"", P(CM_U64), NULL);
	round_trip("\"-9223372036854775808\"", P(CM_S64), NULL);
	round_trip("-9007199254740992", P(CM_S64), NULL);
	round_trip("\"-9007199254740993\"", P(CM_S64), NULL);
	round_trip("1.5", P(CM_F64), NULL);
	round_trip("\"nan\"", P(CM_F32), NULL);
	round_trip("\"-inf\"", P(CM_F64), NULL);
	round_trip("3", P(CM_F64), "3.0");
	round_trip("\"\xc3\xa9\"", P(CM_CHAR), NULL);
	round_trip("\"h\\u00e9llo\"", P(CM_STRING), "\"h\xc3\xa9llo\"");
	tt_free_all();
}
END_TEST

START_TEST(scalar_errors)
{
	refused("256", P(CM_U8), "out of range for u8");
	refused("-1", P(CM_U32), "out of range");
	refused("\"18446744073709551616\"", P(CM_U64), "out of range");
	refused("1.5", P(CM_U32), "not an exact integer");
	refused("\"x\"", P(CM_S32), "not a decimal integer");
	refused("true", P(CM_U32), "expected an integer for u32");
	refused("\"ab\"", P(CM_CHAR), "one character");
	refused("1", P(CM_STRING),
		"expected a string for string, found an "
		"integer");
	refused("\"NaN\"", P(CM_F64), "\"nan\"");
	tt_free_all();
}
END_TEST

START_TEST(bytes_and_lists)
{
	const cm_type *bytes = list_of(P(CM_U8));

	round_trip("\"\"", bytes, NULL);
	round_trip("\"AQID\"", bytes, NULL);
	round_trip("\"AQIDBA==\"", bytes, NULL);
	round_trip("\"AQIDBAU=\"", bytes, NULL);
	round_trip("[1, 2, 3]", bytes, "\"AQID\"");
	refused("\"AQI\"", bytes, "not base64");
	refused("\"A*==\"", bytes, "not base64");
	/* byte form (val.h): list<s8> as an array, list<u8, 3> in base64 */
	round_trip("[-128,-1,0,127]", list_of(P(CM_S8)), NULL);
	round_trip("[]", list_of(P(CM_S8)), NULL);
	refused("[1,200]", list_of(P(CM_S8)), "v[1]");
	round_trip("\"AQID\"", fixed_list_of(P(CM_U8), 3), NULL);
	round_trip("[1,2,3]", list_of(P(CM_U32)), NULL);
	round_trip("[[\"a\"],[]]", list_of(list_of(P(CM_STRING))), NULL);
	round_trip("[1,2]", fixed_list_of(P(CM_S16), 2), NULL);
	refused("[1]", fixed_list_of(P(CM_S16), 2), "expected 2 elements");
	refused("[1,\"x\"]", list_of(P(CM_U32)), "v[1]: not a decimal");
	tt_free_all();
}
END_TEST

/* 1 MiB of base64 becomes a list<u8> in byte form and back. */
START_TEST(bytes_large_base64)
{
	const cm_type *bytes = list_of(P(CM_U8));
	uint32_t n = 1u << 20;
	uint8_t *raw = malloc(n);
	char *b64, why[256];
	json_t *j, *back;
	cm_val v;

	ck_assert_ptr_nonnull(raw);
	for (uint32_t i = 0; i < n; i++)
		raw[i] = (uint8_t)(i * 2654435761u >> 24);
	b64 = value_base64_encode(raw, n);
	ck_assert_ptr_nonnull(b64);
	j = json_string(b64);
	ck_assert_int_eq(value_from_json(j, bytes, "v", &v, why, sizeof why),
			 0);
	ck_assert_ptr_nonnull(v.u.list.bytes);
	ck_assert_ptr_null(v.u.list.elems);
	ck_assert_uint_eq(v.u.list.n, n);
	ck_assert_int_eq(memcmp(v.u.list.bytes, raw, n), 0);
	ck_assert_uint_eq(cm_val_host_bytes(&v), n);
	ck_assert(cm_val_typecheck(&v, bytes, NULL, 0));
	back = value_to_json(&v, bytes);
	ck_assert_ptr_nonnull(back);
	ck_assert_str_eq(json_string_value(back), b64);
	json_decref(back);
	json_decref(j);
	cm_val_free(&v);
	free(b64);
	free(raw);
	tt_free_all();
}
END_TEST

START_TEST(records_tuples_variants)
{
	const cm_type *rec =
		record_of(2, "name", P(CM_STRING), "age", option_of(P(CM_U8)));
	const cm_type *var =
		variant_of(2, "none-yet", NULL, "some-num", P(CM_U32));
	const cm_type *en = enum_of(3, "red", "green", "blue");
	const cm_type *fl = flags_of(3, "read", "write", "exec");

	round_trip("{\"name\":\"x\",\"age\":3}", rec, NULL);
	round_trip("{\"name\":\"x\"}", rec, "{\"name\":\"x\",\"age\":null}");
	refused("{\"age\":3}", rec, "v.name: missing record field");
	refused("{\"name\":\"x\",\"extra\":1}", rec,
		"no field named \"extra\"");
	round_trip("[1,\"a\"]", tuple_of(2, P(CM_U32), P(CM_STRING)), NULL);
	refused("[1]", tuple_of(2, P(CM_U32), P(CM_STRING)), "expected 2");
	round_trip("{\"case\":\"none-yet\"}", var, NULL);
	round_trip("{\"case\":\"some-num\",\"value\":7}", var, NULL);
	refused("{\"case\":\"other\"}", var, "unknown case \"other\"");
	refused("{\"case\":\"some-num\"}", var, "missing payload");
	refused("{\"case\":\"none-yet\",\"value\":1}", var, "no payload");
	round_trip("\"green\"", en, NULL);
	refused("\"pink\"", en, "unknown case \"pink\"");
	round_trip("[\"read\",\"exec\"]", fl, NULL);
	round_trip("[]", fl, NULL);
	refused("[\"fly\"]", fl, "unknown flag \"fly\"");
	tt_free_all();
}
END_TEST

START_TEST(options_and_results)
{
	const cm_type *o = option_of(P(CM_U32));
	const cm_type *oo = option_of(option_of(P(CM_U32)));
	const cm_type *r = result_of(P(CM_U32), P(CM_STRING));
	const cm_type *r0 = result_of(NULL, NULL);

	round_trip("null", o, NULL);
	round_trip("5", o, NULL);
	round_trip("null", oo, NULL);
	round_trip("{\"some\":null}", oo, NULL);
	round_trip("{\"some\":5}", oo, NULL);
	refused("5", oo, "null or {\"some\": ...}");
	round_trip("{\"ok\":1}", r, NULL);
	round_trip("{\"err\":\"bad\"}", r, NULL);
	round_trip("{\"ok\":null}", r0, NULL);
	refused("{\"ok\":1,\"err\":\"x\"}", r, "{\"ok\": ...}");
	refused("{\"fine\":1}", r, "{\"ok\": ...}");
	tt_free_all();
}
END_TEST

START_TEST(function_args)
{
	cm_type *f = tt_new(CM_FUNC);
	cm_field *ps = tt_alloc(2 * sizeof(*ps));
	json_t *arr = json_loads("[1, null]", 0, NULL);
	json_t *obj = json_loads("{\"a\": 2}", 0, NULL);
	json_t *bad = json_loads("{\"c\": 2}", 0, NULL);
	json_t *back;
	cm_val *vals;
	uint32_t n;
	char why[200];
	char *text;

	ps[0].label = tt_str("a");
	ps[0].type = P(CM_U32);
	ps[1].label = tt_str("b");
	ps[1].type = option_of(P(CM_STRING));
	f->u.func.nparams = 2;
	f->u.func.params = ps;
	ck_assert_int_eq(
		value_args_from_json(arr, f, &vals, &n, why, sizeof(why)), 0);
	ck_assert_uint_eq(n, 2);
	back = value_args_to_json(vals, n, f);
	text = json_dumps(back, JSON_COMPACT);
	ck_assert_str_eq(text, "[1,null]");
	free(text);
	json_decref(back);
	cm_vals_free(vals, n);
	free(vals);
	/* By name; the absent option parameter is none. */
	ck_assert_int_eq(
		value_args_from_json(obj, f, &vals, &n, why, sizeof(why)), 0);
	ck_assert_uint_eq(vals[0].u.u, 2);
	ck_assert_uint_eq(vals[1].u.variant.index, 0);
	cm_vals_free(vals, n);
	free(vals);
	ck_assert_int_eq(
		value_args_from_json(bad, f, &vals, &n, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "no parameter named \"c\""));
	ck_assert_int_eq(
		value_args_from_json(NULL, f, &vals, &n, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "none given"));
	json_decref(arr);
	json_decref(obj);
	json_decref(bad);
	tt_free_all();
}
END_TEST

START_TEST(base64_vectors)
{
	/* RFC 4648 section 10. */
	static const char *const enc[] = {
		"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	const char *plain = "foobar";

	for (size_t i = 0; i < 7; i++) {
		char *e = value_base64_encode((const uint8_t *)plain, i);
		uint8_t *d;
		size_t len;

		ck_assert_str_eq(e, enc[i]);
		ck_assert_int_eq(value_base64_decode(e, strlen(e), &d, &len),
				 0);
		ck_assert_uint_eq(len, i);
		ck_assert(!memcmp(d, plain, i));
		free(d);
		free(e);
	}
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("value_json");
	TCase *tc = tcase_create("all");

	tcase_add_test(tc, scalars);
	tcase_add_test(tc, scalar_errors);
	tcase_add_test(tc, bytes_and_lists);
	tcase_add_test(tc, bytes_large_base64);
	tcase_add_test(tc, records_tuples_variants);
	tcase_add_test(tc, options_and_results);
	tcase_add_test(tc, function_args);
	tcase_add_test(tc, base64_vectors);
	suite_add_tcase(s, tc);
	return s;
}
