/*
 * test_varlink.c - the varlink framing reader, the call and reply
 * parsers and the message builders of ipc/varlink.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/varlink.h"
#include "testmain.h"

/* Feed a whole string including its terminating NUL. */
static void feed_str(struct varlink_reader *r, const char *s)
{
	ck_assert_int_eq(varlink_reader_feed(r, s, strlen(s) + 1), 0);
}

START_TEST(framing_split_across_reads)
{
	static const char msg[] = "{\"method\":\"a.b.C\"}";
	struct varlink_reader r;
	const char *out;
	size_t len;

	varlink_reader_init(&r, 0);
	/* One byte at a time: no message until the NUL arrives. */
	for (size_t i = 0; i < sizeof(msg) - 1; i++) {
		ck_assert_int_eq(varlink_reader_feed(&r, msg + i, 1), 0);
		ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
				 VARLINK_READ_AGAIN);
	}
	ck_assert_uint_eq(varlink_reader_pending(&r), sizeof(msg) - 1);
	ck_assert_int_eq(varlink_reader_feed(&r, "", 1), 0);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_MESSAGE);
	ck_assert_uint_eq(len, sizeof(msg) - 1);
	ck_assert_str_eq(out, msg);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_AGAIN);
	ck_assert_uint_eq(varlink_reader_pending(&r), 0);
	varlink_reader_free(&r);
}
END_TEST

START_TEST(framing_several_in_one_read)
{
	static const char stream[] = "{\"a\":1}\0{\"b\":2}\0\0{\"c\"";
	struct varlink_reader r;
	const char *out;
	size_t len;

	varlink_reader_init(&r, 0);
	ck_assert_int_eq(varlink_reader_feed(&r, stream, sizeof(stream) - 1),
			 0);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_MESSAGE);
	ck_assert_str_eq(out, "{\"a\":1}");
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_MESSAGE);
	ck_assert_str_eq(out, "{\"b\":2}");
	/* An empty message is a message (the parser rejects it). */
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_MESSAGE);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_AGAIN);
	ck_assert_uint_eq(varlink_reader_pending(&r), 4);
	/* The tail completes across the next feed. */
	feed_str(&r, ":3}");
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_MESSAGE);
	ck_assert_str_eq(out, "{\"c\":3}");
	varlink_reader_free(&r);
}
END_TEST

START_TEST(framing_oversize_without_nul)
{
	struct varlink_reader r;
	char junk[64];
	const char *out;
	size_t len;

	memset(junk, 'x', sizeof(junk));
	varlink_reader_init(&r, 16);
	ck_assert_uint_eq(varlink_reader_space(&r), 17);
	/* More than the space is refused whole. */
	ck_assert_int_eq(varlink_reader_feed(&r, junk, 18), -EMSGSIZE);
	ck_assert_uint_eq(varlink_reader_pending(&r), 0);
	ck_assert_int_eq(varlink_reader_feed(&r, junk, 16), 0);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_AGAIN);
	ck_assert_uint_eq(varlink_reader_space(&r), 1);
	ck_assert_int_eq(varlink_reader_feed(&r, junk, 1), 0);
	/* 17 bytes and no NUL: longer than 16 for sure; it is skipped. */
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_AGAIN);
	ck_assert_uint_eq(varlink_reader_pending(&r), 0);
	ck_assert_uint_eq(varlink_reader_skipping(&r), 17);
	ck_assert_ptr_null(r.buf);
	/* Whatever comes before its NUL is discarded, never held. */
	for (int i = 0; i < 100; i++) {
		ck_assert_uint_eq(varlink_reader_space(&r), 17);
		ck_assert_int_eq(varlink_reader_feed(&r, junk, 17), 0);
		ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
				 VARLINK_READ_AGAIN);
		ck_assert_ptr_null(r.buf);
	}
	ck_assert_uint_eq(varlink_reader_skipping(&r), 17 + 100 * 17);
	varlink_reader_free(&r);
}
END_TEST

/* The stream goes on after an oversize message: it is reported once,
 * with its length, and the messages around it arrive whole. */
START_TEST(framing_oversize_resynchronises)
{
	static const char tail[] = "xxxx\0{\"b\":2}\0{\"c\"";
	struct varlink_reader r;
	char junk[20];
	const char *out;
	size_t len;

	memset(junk, 'x', sizeof(junk));
	varlink_reader_init(&r, 16);
	feed_str(&r, "{\"a\":1}");
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_MESSAGE);
	ck_assert_str_eq(out, "{\"a\":1}");
	ck_assert_int_eq(varlink_reader_feed(&r, junk, 17), 0);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_AGAIN);
	/* The NUL, the next message and part of a third in one feed. */
	ck_assert_int_eq(varlink_reader_feed(&r, tail, sizeof(tail) - 1), 0);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_OVERSIZE);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(len, 21);
	ck_assert_uint_eq(varlink_reader_skipping(&r), 0);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_MESSAGE);
	ck_assert_str_eq(out, "{\"b\":2}");
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_AGAIN);
	ck_assert_uint_eq(varlink_reader_pending(&r), 4);
	feed_str(&r, ":3}");
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_MESSAGE);
	ck_assert_str_eq(out, "{\"c\":3}");
	/* An oversize message whose NUL ends a feed exactly. */
	ck_assert_int_eq(varlink_reader_feed(&r, junk, 17), 0);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_AGAIN);
	ck_assert_int_eq(varlink_reader_feed(&r, "y", 2), 0);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_OVERSIZE);
	ck_assert_uint_eq(len, 18);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_AGAIN);
	ck_assert_uint_eq(varlink_reader_space(&r), 17);
	varlink_reader_free(&r);
}
END_TEST

START_TEST(framing_exact_limit)
{
	struct varlink_reader r;
	char buf[17];
	const char *out;
	size_t len;

	memset(buf, 'y', 16);
	buf[16] = '\0';
	varlink_reader_init(&r, 16);
	ck_assert_int_eq(varlink_reader_feed(&r, buf, 17), 0);
	ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
			 VARLINK_READ_MESSAGE);
	ck_assert_uint_eq(len, 16);
	/* Consumed: the full space is back. */
	ck_assert_uint_eq(varlink_reader_space(&r), 17);
	varlink_reader_free(&r);
}
END_TEST

START_TEST(framing_bounded_memory)
{
	struct varlink_reader r;
	const char *out;
	size_t len;

	/* Many small messages through a small reader reuse its buffer. */
	varlink_reader_init(&r, 32);
	for (int i = 0; i < 1000; i++) {
		feed_str(&r, "{\"k\":\"0123456789\"}");
		ck_assert_int_eq(varlink_reader_next(&r, &out, &len),
				 VARLINK_READ_MESSAGE);
		ck_assert_str_eq(out, "{\"k\":\"0123456789\"}");
	}
	ck_assert_uint_le(r.cap, 33);
	varlink_reader_free(&r);
}
END_TEST

/* Parse a call that must be rejected with `status`. */
static struct varlink_fault parse_bad(const char *msg,
				      enum varlink_status status)
{
	struct varlink_request req;
	struct varlink_fault fault;

	ck_assert_int_eq(varlink_request_parse(msg, strlen(msg), &req, &fault),
			 status);
	ck_assert_int_eq(fault.status, status);
	ck_assert(fault.reason[0] != '\0');
	varlink_request_clear(&req);
	return fault;
}

START_TEST(request_good)
{
	static const char msg[] =
		"{\"method\":\"io.hostel.Daemon.Status\",\"parameters\":"
		"{\"x\":1},\"more\":true,\"future\":\"ignored\"}";
	struct varlink_request req;
	struct varlink_fault fault;

	ck_assert_int_eq(varlink_request_parse(msg, strlen(msg), &req, &fault),
			 VARLINK_OK);
	ck_assert_str_eq(req.method, "io.hostel.Daemon.Status");
	ck_assert(req.more);
	ck_assert(!req.oneway);
	ck_assert(!req.upgrade);
	ck_assert_int_eq(
		json_integer_value(json_object_get(req.parameters, "x")), 1);
	varlink_request_clear(&req);
	ck_assert_ptr_null(req.root);
}
END_TEST

START_TEST(request_defaults)
{
	static const char msg[] = "{\"method\":\"a.b.C\",\"parameters\":null,"
				  "\"oneway\":true,\"upgrade\":null}";
	struct varlink_request req;
	struct varlink_fault fault;

	ck_assert_int_eq(varlink_request_parse(msg, strlen(msg), &req, &fault),
			 VARLINK_OK);
	ck_assert(req.oneway);
	ck_assert(!req.upgrade);
	ck_assert(json_is_object(req.parameters));
	ck_assert_uint_eq(json_object_size(req.parameters), 0);
	varlink_request_clear(&req);
}
END_TEST

START_TEST(request_bad_json)
{
	struct varlink_fault f;

	f = parse_bad("{\"method\":", VARLINK_EPROTO);
	ck_assert_ptr_nonnull(strstr(f.reason, "invalid JSON"));
	parse_bad("", VARLINK_EPROTO);
	parse_bad("{\"method\":\"a.b.C\"} trailing", VARLINK_EPROTO);
	parse_bad("{\"method\":\"a.b.C\",\"method\":\"a.b.D\"}",
		  VARLINK_EPROTO);
	parse_bad("{\"method\":\"a\\u0000b\"}", VARLINK_EPROTO);
	parse_bad("{\"method\":\"\xff\"}", VARLINK_EPROTO);
}
END_TEST

START_TEST(request_not_object)
{
	struct varlink_fault f;

	f = parse_bad("[1,2]", VARLINK_EPROTO);
	ck_assert_str_eq(f.reason, "a message must be a JSON object");
	parse_bad("\"method\"", VARLINK_EPROTO);
	parse_bad("null", VARLINK_EPROTO);
}
END_TEST

START_TEST(request_missing_fields)
{
	struct varlink_fault f;

	f = parse_bad("{\"parameters\":{}}", VARLINK_EPROTO);
	ck_assert_ptr_nonnull(strstr(f.reason, "no \"method\""));
	f = parse_bad("{\"method\":42}", VARLINK_EPROTO);
	ck_assert_ptr_nonnull(strstr(f.reason, "must be a string"));
	parse_bad("{\"method\":\"\"}", VARLINK_EPROTO);
}
END_TEST

START_TEST(request_bad_types)
{
	struct varlink_request req;
	struct varlink_fault f;
	static const char bad_params[] =
		"{\"method\":\"a.b.C\",\"parameters\":[1],\"oneway\":true}";

	f = parse_bad("{\"method\":\"a.b.C\",\"more\":1}", VARLINK_EPROTO);
	ck_assert_ptr_nonnull(strstr(f.reason, "\"more\""));
	parse_bad("{\"method\":\"a.b.C\",\"oneway\":\"yes\"}", VARLINK_EPROTO);
	parse_bad("{\"method\":\"a.b.C\",\"upgrade\":{}}", VARLINK_EPROTO);
	parse_bad("{\"method\":\"a.b.C\",\"more\":true,\"oneway\":true}",
		  VARLINK_EPROTO);
	/* A bad "parameters" is InvalidParameter, and the flags survive. */
	ck_assert_int_eq(
		varlink_request_parse(bad_params, strlen(bad_params), &req, &f),
		VARLINK_EINVAL);
	ck_assert_str_eq(f.parameter, "parameters");
	ck_assert_str_eq(req.method, "a.b.C");
	ck_assert(req.oneway);
	varlink_request_clear(&req);
}
END_TEST

START_TEST(request_deep_nesting)
{
	size_t depth = VARLINK_JSON_DEPTH_MAX + 1;
	char *msg = malloc(64 + 2 * depth);
	char *p = msg;
	struct varlink_fault f;

	ck_assert_ptr_nonnull(msg);
	p += sprintf(p, "{\"method\":\"a.b.C\",\"parameters\":{\"x\":");
	for (size_t i = 0; i < depth; i++)
		*p++ = '[';
	for (size_t i = 0; i < depth; i++)
		*p++ = ']';
	strcpy(p, "}}");
	f = parse_bad(msg, VARLINK_EPROTO);
	ck_assert_ptr_nonnull(strstr(f.reason, "nested"));
	free(msg);
	/* Brackets inside strings do not count. */
	{
		static const char ok[] =
			"{\"method\":\"a.b.C\",\"parameters\":{\"s\":\""
			"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
			"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
			"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\\""
			"\"}}";
		struct varlink_request req;

		ck_assert_int_eq(
			varlink_request_parse(ok, strlen(ok), &req, &f),
			VARLINK_OK);
		varlink_request_clear(&req);
	}
}
END_TEST

START_TEST(reply_build_and_parse)
{
	json_t *msg = varlink_reply_new(json_pack("{si}", "n", 7), true);
	struct varlink_reply reply;
	struct varlink_fault f;
	size_t len;
	char *text;

	ck_assert_ptr_nonnull(msg);
	text = varlink_encode(msg, &len);
	ck_assert_ptr_nonnull(text);
	/* The encoding carries its own terminator and no other NUL. */
	ck_assert_uint_eq(len, strlen(text) + 1);
	ck_assert_str_eq(text, "{\"parameters\":{\"n\":7},\"continues\":true}");
	ck_assert_int_eq(varlink_reply_parse(text, len - 1, &reply, &f),
			 VARLINK_OK);
	ck_assert(reply.continues);
	ck_assert_ptr_null(reply.error);
	ck_assert_int_eq(
		json_integer_value(json_object_get(reply.parameters, "n")), 7);
	varlink_reply_clear(&reply);
	free(text);
	json_decref(msg);

	msg = varlink_reply_new(NULL, false);
	text = varlink_encode(msg, &len);
	ck_assert_str_eq(text, "{\"parameters\":{}}");
	free(text);
	json_decref(msg);
}
END_TEST

START_TEST(reply_error)
{
	json_t *msg = varlink_error_new(
		"io.hostel.Daemon.ProtocolError",
		json_pack("{ss}", "reason", "line\nbreak\x01"));
	struct varlink_reply reply;
	struct varlink_fault f;
	size_t len;
	char *text = varlink_encode(msg, &len);

	ck_assert_ptr_nonnull(text);
	/* Control characters are escaped: no raw newline on the wire. */
	ck_assert_ptr_null(strchr(text, '\n'));
	ck_assert_ptr_nonnull(strstr(text, "\\n"));
	ck_assert_ptr_nonnull(strstr(text, "\\u0001"));
	ck_assert_int_eq(varlink_reply_parse(text, len - 1, &reply, &f),
			 VARLINK_OK);
	ck_assert_str_eq(reply.error, "io.hostel.Daemon.ProtocolError");
	ck_assert_str_eq(
		json_string_value(json_object_get(reply.parameters, "reason")),
		"line\nbreak\x01");
	varlink_reply_clear(&reply);
	free(text);
	json_decref(msg);
}
END_TEST

START_TEST(reply_parse_rejects)
{
	static const char *const bad[] = {
		"[]",
		"{\"error\":3}",
		"{\"error\":\"\"}",
		"{\"parameters\":[]}",
		"{\"continues\":\"yes\"}",
		"{\"error\":\"a.b.E\",\"continues\":true}",
		"not json",
	};
	struct varlink_reply reply;
	struct varlink_fault f;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(
			varlink_reply_parse(bad[i], strlen(bad[i]), &reply, &f),
			VARLINK_EPROTO);
		varlink_reply_clear(&reply);
	}
}
END_TEST

START_TEST(call_builder)
{
	json_t *msg = varlink_call_new("a.b.C", json_pack("{sb}", "x", 1),
				       VARLINK_CALL_MORE);
	size_t len;
	char *text = varlink_encode(msg, &len);

	ck_assert_str_eq(text, "{\"method\":\"a.b.C\",\"parameters\":"
			       "{\"x\":true},\"more\":true}");
	free(text);
	json_decref(msg);

	msg = varlink_call_new("a.b.C", NULL, VARLINK_CALL_ONEWAY);
	text = varlink_encode(msg, &len);
	ck_assert_str_eq(text, "{\"method\":\"a.b.C\",\"oneway\":true}");
	free(text);
	json_decref(msg);
}
END_TEST

START_TEST(fault_replies)
{
	struct varlink_fault f = {.status = VARLINK_EINVAL,
				  .parameter = "interface"};
	json_t *msg = varlink_fault_reply(&f);

	ck_assert_str_eq(json_string_value(json_object_get(msg, "error")),
			 VARLINK_ERROR_INVALID_PARAMETER);
	ck_assert_str_eq(
		json_string_value(json_object_get(
			json_object_get(msg, "parameters"), "parameter")),
		"interface");
	json_decref(msg);

	f.status = VARLINK_EPROTO;
	strcpy(f.reason, "why");
	msg = varlink_fault_reply(&f);
	ck_assert_str_eq(json_string_value(json_object_get(msg, "error")),
			 HOSTEL_ERROR_PROTOCOL);
	json_decref(msg);

	f.status = VARLINK_ENOMEM;
	ck_assert_ptr_null(varlink_fault_reply(&f));
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("varlink");
	TCase *framing = tcase_create("framing");
	TCase *parse = tcase_create("parse");
	TCase *build = tcase_create("build");

	tcase_add_test(framing, framing_split_across_reads);
	tcase_add_test(framing, framing_several_in_one_read);
	tcase_add_test(framing, framing_oversize_without_nul);
	tcase_add_test(framing, framing_oversize_resynchronises);
	tcase_add_test(framing, framing_exact_limit);
	tcase_add_test(framing, framing_bounded_memory);
	tcase_add_test(parse, request_good);
	tcase_add_test(parse, request_defaults);
	tcase_add_test(parse, request_bad_json);
	tcase_add_test(parse, request_not_object);
	tcase_add_test(parse, request_missing_fields);
	tcase_add_test(parse, request_bad_types);
	tcase_add_test(parse, request_deep_nesting);
	tcase_add_test(build, reply_build_and_parse);
	tcase_add_test(build, reply_error);
	tcase_add_test(build, reply_parse_rejects);
	tcase_add_test(build, call_builder);
	tcase_add_test(build, fault_replies);
	suite_add_tcase(s, framing);
	suite_add_tcase(s, parse);
	suite_add_tcase(s, build);
	return s;
}
