/*
 * varlink.c - varlink framing (NUL-terminated JSON messages) and the
 * codec for calls and replies.  See varlink.h for the contract; the wire
 * rules are https://varlink.org/Method-Call.html.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - varlink_reader_feed: the reader's buffer grows to at most max + 1
 *    (VARLINK_MESSAGE_MAX + 1) bytes; a longer message is skipped to its
 *    NUL without being held (VARLINK_READ_OVERSIZE).
 *  - varlink_request_parse: the message's JSON (json_loadb of at most
 *    VARLINK_MESSAGE_MAX bytes, depth VARLINK_JSON_DEPTH_MAX 128,
 *    checked before parsing).
 *  - varlink_encode: one reply's text; fault replies name a parameter or
 *    a reason of a fixed buffer.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/varlink.h"

/* ---- framing -------------------------------------------------------- */

void varlink_reader_init(struct varlink_reader *r, size_t max)
{
	memset(r, 0, sizeof(*r));
	r->max = max ? max : VARLINK_MESSAGE_MAX;
}

void varlink_reader_free(struct varlink_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

size_t varlink_reader_space(const struct varlink_reader *r)
{
	size_t held = r->len - r->start;

	/* Skipping holds nothing; what follows the NUL fits in max + 1. */
	if (r->skipping)
		return r->max + 1;

	/* max + 1: room for the longest message and its NUL. */
	return held > r->max ? 0 : r->max + 1 - held;
}

size_t varlink_reader_pending(const struct varlink_reader *r)
{
	return r->len - r->start;
}

size_t varlink_reader_skipping(const struct varlink_reader *r)
{
	return r->skipping ? r->skipped : 0;
}

int varlink_reader_feed(struct varlink_reader *r, const void *data, size_t n)
{
	size_t held = r->len - r->start;

	if (n > varlink_reader_space(r))
		return -EMSGSIZE;
	if (n == 0)
		return 0;
	if (r->skipping) {
		const char *nul = memchr(data, '\0', n);
		size_t k;

		if (!nul) {
			r->skipped += n;
			return 0;
		}
		/* Its end: the bytes after the NUL are the next message's. */
		k = (size_t)(nul - (const char *)data);
		r->skipped += k;
		r->skipping = false;
		r->skip_report = true;
		data = nul + 1;
		n -= k + 1;
		held = 0;
		if (n == 0)
			return 0;
	}
	if (r->len + n > r->cap && r->start > 0) {
		/* Reuse the room of consumed messages before growing. */
		memmove(r->buf, r->buf + r->start, held);
		r->start = 0;
		r->len = held;
	}
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		char *p;

		while (cap < r->len + n)
			cap *= 2;
		if (cap > r->max + 1)
			cap = r->max + 1;
		p = realloc(r->buf, cap);
		if (!p)
			return -ENOMEM;
		r->buf = p;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	return 0;
}

enum varlink_read varlink_reader_next(struct varlink_reader *r,
				      const char **msg, size_t *len)
{
	size_t held = r->len - r->start;
	const char *from, *nul;
	size_t mlen;

	if (r->skip_report) {
		r->skip_report = false;
		*msg = NULL;
		*len = r->skipped;
		r->skipped = 0;
		return VARLINK_READ_OVERSIZE;
	}
	if (held == 0 || r->skipping)
		return VARLINK_READ_AGAIN;
	from = r->buf + r->start;
	/* Resume the search where the last one stopped: no rescans. */
	nul = memchr(from + r->scan, '\0', held - r->scan);
	if (!nul) {
		r->scan = held;
		if (held <= r->max)
			return VARLINK_READ_AGAIN;
		/*
		 * max + 1 bytes and no NUL: too long for sure.  Drop them
		 * (and the buffer: such a peer need not keep max bytes of
		 * ours) and discard the rest as it comes (feed).
		 */
		r->skipped = held;
		r->skipping = true;
		free(r->buf);
		r->buf = NULL;
		r->cap = 0;
		r->start = 0;
		r->len = 0;
		r->scan = 0;
		return VARLINK_READ_AGAIN;
	}
	mlen = (size_t)(nul - from);
	*msg = from;
	*len = mlen;
	r->start += mlen + 1;
	r->scan = 0;
	if (r->start == r->len) {
		/* The text stays in place until the next feed. */
		r->start = 0;
		r->len = 0;
	}
	return VARLINK_READ_MESSAGE;
}

/* ---- parsing -------------------------------------------------------- */

static enum varlink_status fault_set(struct varlink_fault *f,
				     enum varlink_status status,
				     const char *parameter, const char *fmt,
				     ...) __attribute__((format(printf, 4, 5)));

static enum varlink_status fault_set(struct varlink_fault *f,
				     enum varlink_status status,
				     const char *parameter, const char *fmt,
				     ...)
{
	va_list ap;

	f->status = status;
	f->parameter = parameter;
	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
	return status;
}

/*
 * Refuse deep nesting before jansson recurses into it: its own limit
 * depends on the installed version, and a reply must stay printable.
 */
static bool nesting_ok(const char *s, size_t n)
{
	bool in_string = false, escaped = false;
	unsigned depth = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (in_string) {
			if (escaped)
				escaped = false;
			else if (c == '\\')
				escaped = true;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == '{' || c == '[') {
			if (++depth > VARLINK_JSON_DEPTH_MAX)
				return false;
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
		}
	}
	return true;
}

static enum varlink_status load_object(const char *msg, size_t len,
				       json_t **out, struct varlink_fault *f)
{
	json_error_t jerr;
	json_t *root;

	*out = NULL;
	if (!nesting_ok(msg, len))
		return fault_set(f, VARLINK_EPROTO, NULL,
				 "JSON nested deeper than %d levels",
				 VARLINK_JSON_DEPTH_MAX);
	root = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return fault_set(f, VARLINK_EPROTO, NULL,
				 "invalid JSON at line %d, column %d: %s",
				 jerr.line, jerr.column, jerr.text);
	if (!json_is_object(root)) {
		json_decref(root);
		return fault_set(f, VARLINK_EPROTO, NULL,
				 "a message must be a JSON object");
	}
	*out = root;
	return VARLINK_OK;
}

/* An optional boolean member; null counts as absent. */
static enum varlink_status get_flag(json_t *root, const char *key, bool *out,
				    struct varlink_fault *f)
{
	json_t *v = json_object_get(root, key);

	*out = false;
	if (!v || json_is_null(v))
		return VARLINK_OK;
	if (!json_is_boolean(v))
		return fault_set(f, VARLINK_EPROTO, NULL,
				 "\"%s\" must be a boolean", key);
	*out = json_is_true(v);
	return VARLINK_OK;
}

/* An optional object member; absent or null give a new empty object. */
static enum varlink_status get_parameters(json_t *root, json_t **out,
					  enum varlink_status bad,
					  struct varlink_fault *f)
{
	json_t *v = json_object_get(root, "parameters");

	*out = NULL;
	if (v && !json_is_null(v) && !json_is_object(v))
		return fault_set(f, bad, "parameters",
				 "\"parameters\" must be an object");
	*out = v && json_is_object(v) ? json_incref(v) : json_object();
	if (!*out)
		return fault_set(f, VARLINK_ENOMEM, NULL, "out of memory");
	return VARLINK_OK;
}

enum varlink_status varlink_request_parse(const char *msg, size_t len,
					  struct varlink_request *req,
					  struct varlink_fault *f)
{
	enum varlink_status st;
	json_t *method;

	memset(req, 0, sizeof(*req));
	memset(f, 0, sizeof(*f));
	st = load_object(msg, len, &req->root, f);
	if (st != VARLINK_OK)
		return st;
	method = json_object_get(req->root, "method");
	if (!method)
		return fault_set(f, VARLINK_EPROTO, NULL,
				 "the message has no \"method\"");
	if (!json_is_string(method))
		return fault_set(f, VARLINK_EPROTO, NULL,
				 "\"method\" must be a string");
	if (json_string_length(method) == 0)
		return fault_set(f, VARLINK_EPROTO, NULL,
				 "\"method\" is empty");
	if ((st = get_flag(req->root, "more", &req->more, f)) ||
	    (st = get_flag(req->root, "oneway", &req->oneway, f)) ||
	    (st = get_flag(req->root, "upgrade", &req->upgrade, f)))
		return st;
	if (req->more && req->oneway)
		return fault_set(f, VARLINK_EPROTO, NULL,
				 "\"more\" and \"oneway\" exclude each other");
	/*
	 * From here on the call is well formed: a bad argument gets a reply
	 * that follows the call's flags, so the method must be known.
	 */
	req->method = json_string_value(method);
	return get_parameters(req->root, &req->parameters, VARLINK_EINVAL, f);
}

void varlink_request_clear(struct varlink_request *req)
{
	json_decref(req->parameters);
	json_decref(req->root);
	memset(req, 0, sizeof(*req));
}

enum varlink_status varlink_reply_parse(const char *msg, size_t len,
					struct varlink_reply *reply,
					struct varlink_fault *f)
{
	enum varlink_status st;
	json_t *error;

	memset(reply, 0, sizeof(*reply));
	memset(f, 0, sizeof(*f));
	st = load_object(msg, len, &reply->root, f);
	if (st != VARLINK_OK)
		return st;
	error = json_object_get(reply->root, "error");
	if (error && !json_is_null(error)) {
		if (!json_is_string(error) || json_string_length(error) == 0)
			return fault_set(
				f, VARLINK_EPROTO, NULL,
				"\"error\" must be a non-empty string");
		reply->error = json_string_value(error);
	}
	st = get_flag(reply->root, "continues", &reply->continues, f);
	if (st != VARLINK_OK)
		return st;
	if (reply->error && reply->continues)
		return fault_set(f, VARLINK_EPROTO, NULL,
				 "an error reply cannot continue");
	return get_parameters(reply->root, &reply->parameters, VARLINK_EPROTO,
			      f);
}

void varlink_reply_clear(struct varlink_reply *reply)
{
	json_decref(reply->parameters);
	json_decref(reply->root);
	memset(reply, 0, sizeof(*reply));
}

/* ---- building ------------------------------------------------------- */

json_t *varlink_reply_new(json_t *parameters, bool continues)
{
	json_t *msg = json_object();

	if (!parameters)
		parameters = json_object();
	if (!msg || !parameters) {
		json_decref(msg);
		json_decref(parameters);
		return NULL;
	}
	/* json_object_set_new() consumes the value even when it fails. */
	if (json_object_set_new(msg, "parameters", parameters) ||
	    (continues && json_object_set_new(msg, "continues", json_true()))) {
		json_decref(msg);
		return NULL;
	}
	return msg;
}

json_t *varlink_error_new(const char *error, json_t *parameters)
{
	json_t *msg = varlink_reply_new(parameters, false);

	if (msg && json_object_set_new(msg, "error", json_string(error))) {
		json_decref(msg);
		return NULL;
	}
	return msg;
}

json_t *varlink_call_new(const char *method, json_t *parameters, unsigned flags)
{
	json_t *msg = json_object();

	if (!msg || json_object_set_new(msg, "method", json_string(method))) {
		json_decref(msg);
		json_decref(parameters);
		return NULL;
	}
	/* set_new consumes the value, success or not. */
	if ((parameters &&
	     json_object_set_new(msg, "parameters", parameters)) ||
	    ((flags & VARLINK_CALL_MORE) &&
	     json_object_set_new(msg, "more", json_true())) ||
	    ((flags & VARLINK_CALL_ONEWAY) &&
	     json_object_set_new(msg, "oneway", json_true())) ||
	    ((flags & VARLINK_CALL_UPGRADE) &&
	     json_object_set_new(msg, "upgrade", json_true()))) {
		json_decref(msg);
		return NULL;
	}
	return msg;
}

json_t *varlink_fault_reply(const struct varlink_fault *f)
{
	switch (f->status) {
	case VARLINK_EPROTO:
		return varlink_error_new(
			HOSTEL_ERROR_PROTOCOL,
			json_pack("{ss}", "reason", f->reason));
	case VARLINK_EINVAL:
		return varlink_error_new(
			VARLINK_ERROR_INVALID_PARAMETER,
			json_pack("{ss}", "parameter",
				  f->parameter ? f->parameter : ""));
	case VARLINK_OK:
	case VARLINK_ENOMEM:
		break;
	}
	return NULL;
}

char *varlink_encode(const json_t *msg, size_t *len)
{
	char *text = json_dumps(msg, JSON_COMPACT);

	/* The C string's own NUL is the frame terminator. */
	if (text)
		*len = strlen(text) + 1;
	return text;
}
