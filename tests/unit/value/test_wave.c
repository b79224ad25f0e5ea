/*
 * test_wave.c - WAVE (runtime/value/wave.h): parse -> print round trips for
 * every value type (the printer's canonical form, and parse(print(v)) ==
 * v), the spec's flat option/result forms, omitted record fields,
 * %-escaped keyword cases, multiline strings and comments; precise errors
 * with offset, line and column; call expressions with omitted trailing
 * options.
 */
#include <string.h>

#include "value/wave.h"
#include "cabi_types.h"
#include "testmain.h"

static void teardown(void)
{
	tt_free_all();
}

/* Parse `in` as t, print it: must give `canon`; and canon parses back to
 * an equal value. */
static void rt(const cm_type *t, const char *in, const char *canon)
{
	cm_val v, v2;
	wave_error err;
	char *out;
	size_t n;

	ck_assert_msg(wave_parse(in, strlen(in), t, &v, &err) == 0,
		      "parse `%s`: %s at %zu", in, err.msg, err.offset);
	ck_assert(cm_val_typecheck(&v, t, NULL, 0));
	ck_assert_int_eq(wave_print(&v, t, &out, &n), 0);
	ck_assert_msg(strcmp(out, canon) == 0, "`%s` printed as `%s`, not `%s`",
		      in, out, canon);
	ck_assert_uint_eq(n, strlen(canon));
	ck_assert_msg(wave_parse(out, n, t, &v2, &err) == 0, "reparse: %s",
		      err.msg);
	ck_assert(cm_val_equal(&v, &v2));
	free(out);
	cm_val_free(&v);
	cm_val_free(&v2);
}

/* Parsing fails with msg (a substring) at the given offset/line/col. */
static void bad(const cm_type *t, const char *in, const char *msg,
		size_t offset, uint32_t line, uint32_t col)
{
	cm_val v;
	wave_error err;

	ck_assert_msg(wave_parse(in, strlen(in), t, &v, &err) == -1,
		      "`%s` parsed", in);
	ck_assert_msg(strstr(err.msg, msg) != NULL, "`%s`: message `%s`", in,
		      err.msg);
	ck_assert_msg(err.offset == offset, "`%s`: offset %zu, not %zu", in,
		      err.offset, offset);
	ck_assert_uint_eq(err.line, line);
	ck_assert_uint_eq(err.column, col);
}

START_TEST(wave_scalars)
{
	rt(P(CM_BOOL), "true", "true");
	rt(P(CM_BOOL), " false ", "false");
	rt(P(CM_S8), "-128", "-128");
	rt(P(CM_U8), "255", "255");
	rt(P(CM_S16), "-0", "0");
	rt(P(CM_U32), "4294967295", "4294967295");
	rt(P(CM_S64), "-9223372036854775808", "-9223372036854775808");
	rt(P(CM_U64), "18446744073709551615", "18446744073709551615");
	rt(P(CM_S32), "// c\n 7 // d", "7");
}
END_TEST

START_TEST(wave_floats)
{
	cm_val v;
	wave_error err;

	rt(P(CM_F32), "3.14", "3.14");
	rt(P(CM_F32), "1", "1");
	rt(P(CM_F32), "nan", "nan");
	rt(P(CM_F32), "inf", "inf");
	rt(P(CM_F32), "-inf", "-inf");
	rt(P(CM_F32), "1e20", "100000000000000000000");
	rt(P(CM_F32), "-0.0", "-0");
	rt(P(CM_F32), "6.022e+23", "602200000000000000000000");
	rt(P(CM_F64), "0.1", "0.1");
	rt(P(CM_F64), "1.5E-7", "0.00000015");
	rt(P(CM_F64), "123456.789", "123456.789");
	{
		char big[400] = "17976931348623157";

		for (int i = 0; i < 292; i++)
			strcat(big, "0");
		ck_assert_uint_eq(strlen(big), 309);
		rt(P(CM_F64), "1.7976931348623157e308", big);
	}
	/* the smallest subnormal reads back to the same bits */
	ck_assert_int_eq(wave_parse("5e-324", 6, P(CM_F64), &v, &err), 0);
	ck_assert_uint_eq(v.u.f64, 1);
	ck_assert_int_eq(wave_parse("nan", 3, P(CM_F64), &v, &err), 0);
	ck_assert_uint_eq(v.u.f64, 0x7ff8000000000000ull);
	/* a NaN with a payload prints as nan */
	{
		cm_val n = cm_val_f32_bits(0x7fc00123u);
		char *out;

		ck_assert_int_eq(wave_print(&n, P(CM_F32), &out, NULL), 0);
		ck_assert_str_eq(out, "nan");
		free(out);
	}
	bad(P(CM_F32), "1.", "invalid number", 0, 1, 1);
	bad(P(CM_F32), ".5", "expected f32", 0, 1, 1);
	bad(P(CM_F64), "+1", "expected f64", 0, 1, 1);
	bad(P(CM_F64), "NaN", "expected f64", 0, 1, 1);
	bad(P(CM_F64), "1e", "invalid number", 0, 1, 1);
}
END_TEST

START_TEST(wave_chars_strings)
{
	cm_val v;
	wave_error err;

	rt(P(CM_CHAR), "'x'", "'x'");
	rt(P(CM_CHAR), "'\\''", "'\\''");
	rt(P(CM_CHAR), "'\"'", "'\\\"'");
	rt(P(CM_CHAR), "'\\u{0}'", "'\\u{0}'");
	rt(P(CM_CHAR), "'\\u{7F}'", "'\\u{7f}'");
	rt(P(CM_CHAR), "'\xe2\x98\x83'", "'\xe2\x98\x83'");
	rt(P(CM_CHAR), "'\\u{10FFFF}'", "'\xf4\x8f\xbf\xbf'");
	rt(P(CM_CHAR), "'\\n'", "'\\n'");
	rt(P(CM_CHAR), "'\\\\'", "'\\\\'");
	rt(P(CM_STRING), "\"abc\\t123\"", "\"abc\\t123\"");
	rt(P(CM_STRING), "\"\"", "\"\"");
	rt(P(CM_STRING), "\"it's \\\"q\\\" \\r\\n\"",
	   "\"it\\'s \\\"q\\\" \\r\\n\"");
	rt(P(CM_STRING), "\"\\u{1F600}\"", "\"\xf0\x9f\x98\x80\"");
	rt(P(CM_STRING), "\"\xf0\x9f\x91\x8b \xc3\xa9\"",
	   "\"\xf0\x9f\x91\x8b \xc3\xa9\"");
	/* NUL survives */
	ck_assert_int_eq(wave_parse("\"a\\u{0}b\"", 9, P(CM_STRING), &v, &err),
			 0);
	ck_assert_uint_eq(v.u.str.len, 3);
	ck_assert_int_eq(v.u.str.ptr[1], 0);
	cm_val_free(&v);
	/* multiline strings dedent to the closing delimiter */
	rt(P(CM_STRING), "\"\"\"\n  a\n   b \"quoted\"\n  \"\"\"",
	   "\"a\\n b \\\"quoted\\\"\"");
	rt(P(CM_STRING), "\"\"\"\r\nline\r\n\"\"\"", "\"line\"");
	bad(P(CM_STRING), "\"\"\"\n  a\n b\n  \"\"\"", "indented less", 8, 3,
	    1);
	bad(P(CM_STRING), "\"\"\"x\"\"\"", "line break", 0, 1, 1);
	bad(P(CM_CHAR), "'ab'", "expected `'`", 2, 1, 3);
	bad(P(CM_CHAR), "''", "empty char", 1, 1, 2);
	bad(P(CM_CHAR), "'\n'", "newline must be escaped", 1, 1, 2);
	bad(P(CM_STRING), "\"abc", "unterminated", 0, 1, 1);
	bad(P(CM_STRING), "\"a\\qb\"", "unknown escape", 2, 1, 3);
	bad(P(CM_STRING), "\"\\u{D800}\"", "not a Unicode scalar", 1, 1, 2);
	bad(P(CM_STRING), "\"\\u{110000}\"", "not a Unicode scalar", 1, 1, 2);
	bad(P(CM_STRING), "\"\\u{}\"", "empty", 1, 1, 2);
	bad(P(CM_STRING), "\"\xff\"", "invalid UTF-8", 1, 1, 2);
}
END_TEST

START_TEST(wave_sequences)
{
	const cm_type *t3 = tuple_of(2, P(CM_STRING), P(CM_U8));
	const cm_type *lu = list_of(P(CM_U32));
	const cm_type *fx = fixed_list_of(P(CM_U8), 3);
	const cm_type *m = map_of(P(CM_STRING), P(CM_S32));

	rt(t3, "(\"abc\", 123)", "(\"abc\", 123)");
	rt(t3, "( \"abc\" , 123 , )", "(\"abc\", 123)");
	rt(lu, "[1, 2, 3]", "[1, 2, 3]");
	rt(lu, "[]", "[]");
	rt(lu, "[1,2,]", "[1, 2]");
	rt(lu, "[1, // one\n 2]", "[1, 2]");
	rt(list_of(list_of(P(CM_CHAR))), "[[], ['a', 'b']]",
	   "[[], ['a', 'b']]");
	rt(fx, "[1, 2, 3]", "[1, 2, 3]");
	rt(m, "[(\"a\", 1), (\"a\", -2)]", "[(\"a\", 1), (\"a\", -2)]");
	bad(fx, "[1, 2]", "expected 3 list elements, found 2", 0, 1, 1);
	bad(lu, "[1, 2", "expected `,` or `]`", 5, 1, 6);
	/* list<u8>, list<s8>: held in byte form (val.h), printed alike */
	rt(list_of(P(CM_U8)), "[0, 1, 255,]", "[0, 1, 255]");
	rt(list_of(P(CM_U8)), "[]", "[]");
	rt(list_of(P(CM_S8)), "[-128, -1, 0, 127]", "[-128, -1, 0, 127]");
	bad(list_of(P(CM_U8)), "[1, 256]", "integer out of range for u8", 4,
	    1, 5);
	bad(list_of(P(CM_U8)), "[1 2]", "expected `,` or `]`", 3, 1, 4);
	{
		cm_val v;
		wave_error err;

		ck_assert_int_eq(wave_parse("[7, 8, 9]", 9, list_of(P(CM_U8)),
					    &v, &err),
				 0);
		ck_assert_ptr_null(v.u.list.elems);
		ck_assert_ptr_nonnull(v.u.list.bytes);
		ck_assert_uint_eq(v.u.list.n, 3);
		ck_assert_int_eq(memcmp(v.u.list.bytes, "\7\10\11", 3), 0);
		ck_assert_uint_eq(cm_val_host_bytes(&v), 3);
		cm_val_free(&v);
	}
	bad(lu, "[1,\n x]", "expected u32", 5, 2, 2);
	bad(lu, "[1 2]", "expected `,` or `]`", 3, 1, 4);
	bad(t3, "(\"a\")", "expected `,`", 4, 1, 5);
	bad(t3, "(\"a\", 1, 2)", "expected `)`", 9, 1, 10);
	bad(P(CM_U8), "256", "integer out of range for u8", 0, 1, 1);
	bad(P(CM_U8), "-1", "integer out of range for u8", 0, 1, 1);
	bad(P(CM_S8), "-129", "integer out of range for s8", 0, 1, 1);
	bad(P(CM_U64), "18446744073709551616", "out of range", 0, 1, 1);
	bad(P(CM_U32), "1.5", "invalid u32 literal", 0, 1, 1);
	bad(P(CM_U32), "1 2", "unexpected text after the value", 2, 1, 3);
	bad(P(CM_BOOL), "yes", "expected `true` or `false`", 0, 1, 1);
	bad(P(CM_BOOL), "%true", "expected `true` or `false`", 0, 1, 1);
}
END_TEST

START_TEST(wave_records)
{
	const cm_type *ex = record_of(2, "must-have", P(CM_U8), "optional",
				      option_of(P(CM_U8)));
	const cm_type *allopt = record_of(2, "a", option_of(P(CM_U8)), "b",
					  option_of(P(CM_U8)));
	const cm_type *kw = record_of(3, "true", P(CM_BOOL), "none",
				      option_of(P(CM_U8)), "inf", P(CM_F32));

	rt(ex, "{must-have: 123}", "{must-have: 123}");
	rt(ex, "{must-have: 123, optional: none,}", "{must-have: 123}");
	rt(ex, "{optional: some(2), must-have: 1}",
	   "{must-have: 1, optional: some(2)}");
	rt(ex, "{optional: 2, %must-have: 1}",
	   "{must-have: 1, optional: some(2)}");
	rt(allopt, "{:}", "{:}");
	rt(allopt, "{ : }", "{:}");
	rt(allopt, "{a: none, b: none}", "{:}");
	rt(allopt, "{b: some(2)}", "{b: some(2)}");
	rt(kw, "{true: true, none: none, inf: inf}", "{true: true, inf: inf}");
	bad(ex, "{optional: 1}", "missing field `must-have`", 12, 1, 13);
	bad(ex, "{must-have: 1, nope: 2}", "unknown field `nope`", 15, 1, 16);
	bad(ex, "{must-have: 1, must-have: 2}", "duplicate field", 15, 1, 16);
	bad(ex, "{must-have 1}", "expected `:`", 11, 1, 12);
	bad(allopt, "{}", "empty record is written `{:}`", 1, 1, 2);
}
END_TEST

START_TEST(wave_variants)
{
	const cm_type *resp =
		variant_of(3, "empty", NULL, "body", list_of(P(CM_U8)), "err",
			   P(CM_STRING));
	const cm_type *days = variant_of(2, "days", P(CM_U32), "forever", NULL);
	const cm_type *status = enum_of(2, "ok", "not-found");
	const cm_type *dir = enum_of(2, "south", "west");

	rt(resp, "empty", "empty");
	rt(resp, "body([79, 75])", "body([79, 75])");
	rt(resp, "%err(\"oops\")", "%err(\"oops\")");
	rt(days, "days(30)", "days(30)");
	rt(days, "%forever", "forever");
	rt(status, "%ok", "%ok");
	rt(status, "not-found", "not-found");
	rt(dir, "west", "west");
	bad(resp, "err(\"x\")", "is a keyword and must be written `%err`", 0, 1,
	    1);
	bad(resp, "nothing", "unknown case `nothing`", 0, 1, 1);
	bad(resp, "empty(1)", "has no payload", 5, 1, 6);
	bad(resp, "body", "needs a payload", 4, 1, 5);
	bad(dir, "North", "expected a case label", 0, 1, 1);
	bad(dir, "we-ST", "unknown case `we-ST`", 0, 1, 1);
	bad(dir, "we-St", "expected a case label", 0, 1, 1);
	bad(dir, "wEst", "expected a case label", 0, 1, 1);
	bad(dir, "%", "expected a case label", 0, 1, 1);
}
END_TEST

START_TEST(wave_options_results)
{
	const cm_type *ou = option_of(P(CM_U8));
	const cm_type *os = option_of(P(CM_STRING));
	const cm_type *oo = option_of(option_of(P(CM_U8)));
	const cm_type *ru = result_of(P(CM_U8), NULL);
	const cm_type *re = result_of(NULL, P(CM_STRING));
	const cm_type *rn = result_of(NULL, NULL);
	const cm_type *rb = result_of(P(CM_U8), P(CM_U8));
	const cm_type *ro = result_of(option_of(P(CM_U8)), NULL);

	rt(ou, "123", "some(123)");
	rt(ou, "some(123)", "some(123)");
	rt(ou, "none", "none");
	rt(os, "\"flat some\"", "some(\"flat some\")");
	rt(oo, "some(none)", "some(none)");
	rt(oo, "some(some(1))", "some(some(1))");
	rt(oo, "none", "none");
	rt(ru, "123", "ok(123)");
	rt(ru, "ok(1)", "ok(1)");
	rt(ru, "err", "err");
	rt(re, "ok", "ok");
	rt(re, "err(\"oops\")", "err(\"oops\")");
	rt(rn, "err", "err");
	rt(rn, "ok", "ok");
	rt(rb, "err(5)", "err(5)");
	rt(ro, "ok(none)", "ok(none)");
	bad(oo, "5", "expected `some(...)` or `none`", 0, 1, 1);
	bad(ro, "5", "expected `ok` or `err`", 0, 1, 1);
	bad(re, "\"flat\"", "expected `ok` or `err`", 0, 1, 1);
	bad(ru, "ok", "`ok` needs a payload", 2, 1, 3);
	bad(re, "ok(1)", "`ok` has no payload", 2, 1, 3);
	bad(ou, "none(1)", "`none` has no payload", 4, 1, 5);
	bad(ou, "some 1", "expected `(`", 5, 1, 6);
}
END_TEST

START_TEST(wave_flags)
{
	const cm_type *perms = flags_of(3, "read", "write", "exec");
	const cm_type *kw = flags_of(2, "none", "ok");

	rt(perms, "{read, write}", "{read, write}");
	rt(perms, "{write, read,}", "{read, write}");
	rt(perms, "{}", "{}");
	rt(perms, "{%exec}", "{exec}");
	rt(kw, "{ok, none}", "{none, ok}");
	bad(perms, "{read, read}", "duplicate flag `read`", 7, 1, 8);
	bad(perms, "{delete}", "unknown flag `delete`", 1, 1, 2);
	bad(perms, "{read write}", "expected `,` or `}`", 6, 1, 7);
}
END_TEST

START_TEST(wave_unsupported)
{
	const cm_type *own = handle_of(CM_OWN, resource_type("r"));
	cm_val v = cm_val_handle(CM_OWN, NULL, 42);
	char *out;

	bad(own, "1", "own values have no WAVE syntax", 0, 1, 1);
	ck_assert_int_eq(wave_print(&v, own, &out, NULL), 0);
	ck_assert_str_eq(out, "own<rep 42>");
	free(out);
	/* a value that does not match its type does not print */
	v = cm_val_u8(1);
	ck_assert_int_eq(wave_print(&v, P(CM_STRING), &out, NULL), -1);
	ck_assert_ptr_null(out);
}
END_TEST

/* ---- calls -----------------------------------------------------------------
 */

static const cm_type *FN_F, *FN_G, *FN_NS;

static const cm_type *lookup(void *env, const char *name, size_t len)
{
	ck_assert_ptr_eq(env, &FN_F);
	ck_assert_uint_eq(strlen(name), len);
	if (strcmp(name, "f") == 0)
		return FN_F;
	if (strcmp(name, "g") == 0)
		return FN_G;
	if (strcmp(name, "ns:pkg/iface#[method]r.m") == 0)
		return FN_NS;
	return NULL;
}

static void call_setup(void)
{
	FN_F = func_of(3, "a", P(CM_U32), "b", option_of(P(CM_STRING)), "c",
		       option_of(P(CM_U8)), P(CM_U32));
	FN_G = func_of(0, NULL);
	FN_NS = func_of(1, "x", list_of(P(CM_BOOL)), NULL);
}

static void call_ok(const char *text, const char *name, const char *args)
{
	wave_call c;
	wave_error err;
	char buf[256] = "";

	ck_assert_msg(wave_parse_call(text, strlen(text), lookup, &FN_F, &c,
				      &err) == 0,
		      "`%s`: %s", text, err.msg);
	ck_assert_str_eq(c.name, name);
	for (uint32_t i = 0; i < c.nargs; i++) {
		char *s;

		ck_assert_int_eq(wave_print(&c.args[i],
					    c.func->u.func.params[i].type, &s,
					    NULL),
				 0);
		if (i > 0)
			strcat(buf, ", ");
		strcat(buf, s);
		free(s);
	}
	ck_assert_msg(strcmp(buf, args) == 0, "`%s` args `%s`", text, buf);
	wave_call_free(&c);
}

static void call_bad(const char *text, const char *msg, size_t offset)
{
	wave_call c;
	wave_error err;

	ck_assert_int_eq(
		wave_parse_call(text, strlen(text), lookup, &FN_F, &c, &err),
		-1);
	ck_assert_msg(strstr(err.msg, msg) != NULL, "`%s`: %s", text, err.msg);
	ck_assert_uint_eq(err.offset, offset);
	ck_assert_ptr_null(c.name);
	ck_assert_ptr_null(c.args);
}

START_TEST(wave_calls)
{
	char *s;
	cm_val r = cm_val_u32(9);

	call_ok("f(1)", "f", "1, none, none");
	call_ok("f(1, some(\"x\"))", "f", "1, some(\"x\"), none");
	call_ok("  f ( 1 , \"x\" , 2 , ) ", "f", "1, some(\"x\"), some(2)");
	call_ok("f(1, none, 3)", "f", "1, none, some(3)");
	call_ok("g()", "g", "");
	call_ok("g", "g", "");
	call_ok("ns:pkg/iface#[method]r.m([true, false])",
		"ns:pkg/iface#[method]r.m", "[true, false]");
	call_bad("f()", "missing argument `a`", 2);
	call_bad("f", "missing argument `a`", 1);
	call_bad("h(1)", "unknown function `h`", 0);
	call_bad("(1)", "expected a function name", 0);
	call_bad("f(1, none, none, 4)", "too many arguments", 17);
	call_bad("f(1) x", "unexpected text after the call", 5);
	call_bad("f(\"s\")", "expected u32", 2);
	ck_assert_int_eq(wave_print_results(FN_F, &r, &s, NULL), 0);
	ck_assert_str_eq(s, "9");
	free(s);
	ck_assert_int_eq(wave_print_results(FN_G, NULL, &s, NULL), 0);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("wave");
	TCase *tc = tcase_create("values");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, wave_scalars);
	tcase_add_test(tc, wave_floats);
	tcase_add_test(tc, wave_chars_strings);
	tcase_add_test(tc, wave_sequences);
	tcase_add_test(tc, wave_records);
	tcase_add_test(tc, wave_variants);
	tcase_add_test(tc, wave_options_results);
	tcase_add_test(tc, wave_flags);
	tcase_add_test(tc, wave_unsupported);
	suite_add_tcase(s, tc);
	tc = tcase_create("calls");
	tcase_add_checked_fixture(tc, call_setup, teardown);
	tcase_add_test(tc, wave_calls);
	suite_add_tcase(s, tc);
	return s;
}
