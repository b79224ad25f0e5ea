/*
 * varlink.h - varlink framing and message codec.
 *
 * varlink (https://varlink.org) carries one JSON object per message on a
 * SOCK_STREAM socket; each message ends with a NUL byte.  This module
 * knows nothing of sockets or event loops: a reader is fed bytes and
 * yields whole messages, a parser turns a message into a call or a reply,
 * and the builders produce encoded messages ready to be written.
 *
 * Contract:
 *  - A reader never holds more than max + 1 unconsumed bytes.  The caller
 *    asks varlink_reader_space() how much it may feed and must take every
 *    message out (varlink_reader_next() until VARLINK_READ_AGAIN) before
 *    that space grows again.  So memory per connection is bounded by the
 *    maximum message size, whatever the peer sends.
 *  - A message longer than max bytes (not counting its NUL) is skipped:
 *    once it is certain (max + 1 bytes and no NUL) the reader drops what
 *    it holds and discards every byte fed up to the message's NUL, holding
 *    none of them; then varlink_reader_next() reports it once as
 *    VARLINK_READ_OVERSIZE with its length, and the messages after it
 *    follow as usual.  The framing is kept (a NUL never occurs inside a
 *    message), so the connection goes on: the peer can be answered
 *    (io.hostel.Call.ValueTooLarge) and send its next call.  A peer that
 *    never sends the NUL costs reads, never memory.
 *  - Parsers never abort on input; they return a status and fill a
 *    struct varlink_fault that says what was wrong and which reply the
 *    peer should get.
 */
#ifndef HOSTEL_IPC_VARLINK_H
#define HOSTEL_IPC_VARLINK_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/*
 * The largest message (without its NUL) either side accepts: 16 MiB, the
 * bound sd-varlink uses too, so generic varlink clients interoperate.
 */
#define VARLINK_MESSAGE_MAX (16u * 1024 * 1024)

/* Nesting deeper than this is refused before the JSON parser sees it. */
#define VARLINK_JSON_DEPTH_MAX 128

/* The standard errors of org.varlink.service. */
#define VARLINK_ERROR_INTERFACE_NOT_FOUND                                      \
	"org.varlink.service.InterfaceNotFound"
#define VARLINK_ERROR_METHOD_NOT_FOUND "org.varlink.service.MethodNotFound"
#define VARLINK_ERROR_METHOD_NOT_IMPLEMENTED                                   \
	"org.varlink.service.MethodNotImplemented"
#define VARLINK_ERROR_INVALID_PARAMETER "org.varlink.service.InvalidParameter"
#define VARLINK_ERROR_PERMISSION_DENIED "org.varlink.service.PermissionDenied"
#define VARLINK_ERROR_EXPECTED_MORE	"org.varlink.service.ExpectedMore"

/* hostel's own transport errors, declared in io.hostel.Daemon's IDL. */
#define HOSTEL_ERROR_PROTOCOL "io.hostel.Daemon.ProtocolError"
/*
 * A value that no message can carry (io.hostel.Call's IDL): value is
 * "argument" (a call's message longer than VARLINK_MESSAGE_MAX) or
 * "result" (the reply that would carry it), size the bytes of that
 * message, limit VARLINK_MESSAGE_MAX.
 */
#define HOSTEL_ERROR_VALUE_TOO_LARGE "io.hostel.Call.ValueTooLarge"

/* ---- framing -------------------------------------------------------- */

struct varlink_reader {
	char *buf;
	size_t cap;   /* allocated bytes */
	size_t start; /* first unconsumed byte */
	size_t len;   /* end of the held bytes */
	size_t scan;  /* bytes after start known to hold no NUL */
	size_t max;   /* largest message accepted, without its NUL */
	/* an oversize message: bytes discarded so far, or its length */
	size_t skipped;
	bool skipping;	  /* its NUL has not come yet */
	bool skip_report; /* its NUL came: next() reports it */
};

enum varlink_read {
	VARLINK_READ_AGAIN = 0, /* no whole message held: feed more */
	VARLINK_READ_MESSAGE,	/* *msg is a whole message */
	/* a message longer than max was skipped: *len is its length */
	VARLINK_READ_OVERSIZE,
};

/* max == 0 selects VARLINK_MESSAGE_MAX.  Allocates nothing yet. */
void varlink_reader_init(struct varlink_reader *r, size_t max);
void varlink_reader_free(struct varlink_reader *r);

/* How many bytes varlink_reader_feed() accepts now. */
size_t varlink_reader_space(const struct varlink_reader *r);

/*
 * Append n bytes.  Returns 0, -EMSGSIZE when n exceeds the space (nothing
 * is appended) or -ENOMEM.  Feeding invalidates messages returned before.
 */
int varlink_reader_feed(struct varlink_reader *r, const void *data, size_t n);

/*
 * Take the next whole message.  On VARLINK_READ_MESSAGE, *msg points to
 * its text inside the reader, NUL-terminated, and *len is its length
 * without the NUL; both stay valid until the next feed.  On
 * VARLINK_READ_OVERSIZE, *msg is NULL and *len the skipped message's
 * length without its NUL (more than max); the reader goes on with the
 * bytes after it.
 */
enum varlink_read varlink_reader_next(struct varlink_reader *r,
				      const char **msg, size_t *len);

/* Bytes of an incomplete message still held (for diagnostics). */
size_t varlink_reader_pending(const struct varlink_reader *r);

/*
 * Bytes of an oversize message discarded so far while its NUL has not
 * come (more than max), or 0: what a peer that leaves in the middle of
 * one had sent.
 */
size_t varlink_reader_skipping(const struct varlink_reader *r);

/* ---- parsing -------------------------------------------------------- */

enum varlink_status {
	VARLINK_OK = 0,
	/*
	 * The message is not a varlink message (bad JSON, not an object,
	 * no method, a flag that is not a boolean, ...).  The peer gets
	 * io.hostel.Daemon.ProtocolError and the connection is closed:
	 * nothing more on it can be trusted.
	 */
	VARLINK_EPROTO,
	/*
	 * A well-formed call with a bad argument; the peer gets
	 * org.varlink.service.InvalidParameter naming `parameter` and the
	 * connection stays usable.
	 */
	VARLINK_EINVAL,
	VARLINK_ENOMEM,
};

struct varlink_fault {
	enum varlink_status status;
	const char *parameter; /* for VARLINK_EINVAL: a static name */
	char reason[160];      /* human-readable, one line */
};

struct varlink_request {
	json_t *root;	    /* the whole message (owned) */
	const char *method; /* inside root; non-empty */
	json_t *parameters; /* borrowed from root, or an owned empty object */
	bool more, oneway, upgrade;
};

/*
 * Parse a call.  On VARLINK_OK *req holds it (free with
 * varlink_request_clear).  On VARLINK_EINVAL req->method, req->more and
 * req->oneway are still filled, so the reply can follow the call's flags;
 * the caller clears req either way.  Unknown top-level keys are ignored,
 * as varlink asks for forward compatibility; "parameters": null counts as
 * absent.  "more" and "oneway" together are a protocol error.
 */
enum varlink_status varlink_request_parse(const char *msg, size_t len,
					  struct varlink_request *req,
					  struct varlink_fault *fault);
void varlink_request_clear(struct varlink_request *req);

struct varlink_reply {
	json_t *root;	    /* owned */
	const char *error;  /* inside root, or NULL for a success reply */
	json_t *parameters; /* borrowed or an owned empty object; never NULL */
	bool continues;
};

/* Parse a reply, as a client sees it.  Errors are VARLINK_EPROTO. */
enum varlink_status varlink_reply_parse(const char *msg, size_t len,
					struct varlink_reply *reply,
					struct varlink_fault *fault);
void varlink_reply_clear(struct varlink_reply *reply);

/* ---- building ------------------------------------------------------- */

/*
 * Builders take ownership of `parameters` even when they fail, and return
 * NULL only when out of memory.  NULL parameters give an empty object in
 * a reply and no "parameters" member in a call.
 */
json_t *varlink_reply_new(json_t *parameters, bool continues);
json_t *varlink_error_new(const char *error, json_t *parameters);

/* flags for varlink_call_new */
enum {
	VARLINK_CALL_MORE = 1u << 0,
	VARLINK_CALL_ONEWAY = 1u << 1,
	VARLINK_CALL_UPGRADE = 1u << 2,
};
json_t *varlink_call_new(const char *method, json_t *parameters,
			 unsigned flags);

/* The reply a fault asks for (ProtocolError or InvalidParameter). */
json_t *varlink_fault_reply(const struct varlink_fault *fault);

/*
 * Encode a message: compact JSON followed by its NUL terminator.  Returns
 * a malloc'd buffer and its length including the NUL, or NULL (out of
 * memory, or a value JSON cannot carry).  jansson escapes every control
 * character, so the encoding never holds a NUL before the terminator.
 */
char *varlink_encode(const json_t *msg, size_t *len);

#endif
