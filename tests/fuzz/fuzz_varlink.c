/*
 * fuzz_varlink.c - libFuzzer target over the varlink framing and message
 * parser (ipc/varlink.c): what hosteld does with the bytes a client
 * sends, and what the client does with the daemon's replies.
 *
 * Input: a byte choosing the reader's maximum message size (small, so
 * that oversize messages happen) and the feed chunk size, then the byte
 * stream.  The stream is fed in chunks no larger than the reader's space;
 * every whole message is parsed as a call and as a reply.  A call that
 * parses must have a method and re-encode (varlink_encode) to one
 * NUL-terminated message that the reader frames and the parser accepts
 * again with the same method and flags; a refused call must yield a
 * fault reply that encodes.
 *
 * Contract: any stream may be refused; nothing may crash, leak, trip a
 * sanitizer or break those properties (abort).  Built only with
 * --enable-fuzzing (clang).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ipc/varlink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static __attribute__((noreturn)) void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_varlink: %s: %s\n", what, detail ? detail : "");
	abort();
}

/* The encoded call must frame as one message and parse the same. */
static void reparse(const struct varlink_request *req)
{
	struct varlink_reader r;
	struct varlink_request again;
	struct varlink_fault fault;
	const char *msg;
	size_t len, mlen;
	char *enc = varlink_encode(req->root, &len);

	if (enc == NULL)
		return; /* out of memory (or a string JSON cannot carry) */
	if (len == 0 || enc[len - 1] != '\0' || memchr(enc, 0, len - 1))
		fail("encoded message is not NUL-framed", enc);
	varlink_reader_init(&r, len);
	if (varlink_reader_feed(&r, enc, len) != 0 ||
	    varlink_reader_next(&r, &msg, &mlen) != VARLINK_READ_MESSAGE ||
	    mlen != len - 1)
		fail("encoded message does not frame", enc);
	memset(&again, 0, sizeof again);
	if (varlink_request_parse(msg, mlen, &again, &fault) == VARLINK_OK) {
		if (strcmp(again.method, req->method) != 0 ||
		    again.more != req->more || again.oneway != req->oneway ||
		    again.upgrade != req->upgrade)
			fail("re-parsed call differs", enc);
	} else if (fault.status != VARLINK_ENOMEM) {
		fail("re-encoded call is refused", fault.reason);
	}
	varlink_request_clear(&again);
	varlink_reader_free(&r);
	free(enc);
}

static void one_message(const char *msg, size_t len)
{
	struct varlink_request req;
	struct varlink_reply reply;
	struct varlink_fault fault;
	enum varlink_status st;

	memset(&req, 0, sizeof req);
	st = varlink_request_parse(msg, len, &req, &fault);
	if (st == VARLINK_OK) {
		if (req.method == NULL || req.method[0] == '\0' ||
		    req.parameters == NULL || !json_is_object(req.parameters))
			fail("accepted call without method or parameters", msg);
		reparse(&req);
	} else {
		if (fault.status != st)
			fail("fault status differs from the result", msg);
		json_t *fr = varlink_fault_reply(&fault);
		char *enc;
		size_t elen;

		if (fr != NULL) {
			enc = varlink_encode(fr, &elen);
			free(enc);
			json_decref(fr);
		}
	}
	varlink_request_clear(&req);

	memset(&reply, 0, sizeof reply);
	if (varlink_reply_parse(msg, len, &reply, &fault) == VARLINK_OK &&
	    reply.parameters == NULL)
		fail("accepted reply without parameters", msg);
	varlink_reply_clear(&reply);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct varlink_reader r;
	const char *msg;
	size_t len, chunk, max;
	enum varlink_read rd;

	if (size == 0)
		return 0;
	max = 16u << (data[0] & 7); /* 16 B .. 2 KiB */
	chunk = 1 + (data[0] >> 3) * 7;
	data++;
	size--;
	varlink_reader_init(&r, max);
	while (size > 0) {
		size_t n = varlink_reader_space(&r);

		if (n > chunk)
			n = chunk;
		if (n > size)
			n = size;
		if (n == 0)
			fail("reader has no space with every message taken",
			     NULL);
		if (varlink_reader_feed(&r, data, n) != 0)
			break; /* out of memory */
		data += n;
		size -= n;
		while ((rd = varlink_reader_next(&r, &msg, &len)) !=
		       VARLINK_READ_AGAIN) {
			if (rd == VARLINK_READ_OVERSIZE) {
				/* skipped to its NUL; the stream goes on */
				if (len <= max || msg)
					fail("oversize report within max",
					     NULL);
				continue;
			}
			if (len > max || msg[len] != '\0')
				fail("message beyond max or not terminated",
				     NULL);
			one_message(msg, len);
		}
		if (varlink_reader_pending(&r) > max + 1)
			fail("reader holds more than max + 1 bytes", NULL);
	}
	varlink_reader_free(&r);
	return 0;
}
