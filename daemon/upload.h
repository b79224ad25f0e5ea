/*
 * upload.h - io.hostel.Call.Upload: bytes a client sends ahead of a call,
 * in chunks, for one list<u8> or string parameter of an Invoke on the
 * same connection (its `uploads` parameter), so that a value larger
 * than a varlink message (VARLINK_MESSAGE_MAX) crosses the protocol.
 *
 * Contract:
 *  - An upload belongs to the connection it was made on: only an Invoke
 *    of that connection may bind it, and it is freed when the connection
 *    closes or when an Invoke binds it (upload_take: the bytes become
 *    the argument, the upload is gone, whatever the call's outcome).
 *  - Bounded: a connection holds at most UPLOAD_CONN_COUNT_MAX uploads
 *    and UPLOAD_CONN_BYTES_MAX bytes of them (their buffers' capacity);
 *    the daemon at most UPLOAD_TOTAL_BYTES_MAX over all connections.
 *    A chunk past a bound is refused (ValueTooLarge {value "upload"},
 *    the upload keeps what it had).
 */
#ifndef HOSTEL_DAEMON_UPLOAD_H
#define HOSTEL_DAEMON_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

struct call;
struct conn;

#define UPLOAD_CONN_COUNT_MAX 16
#define UPLOAD_CONN_BYTES_MAX (256u * 1024 * 1024)
#define UPLOAD_TOTAL_BYTES_MAX (1024u * 1024 * 1024)
#define UPLOAD_ID_MAX 24

struct upload {
	struct upload *next;
	char id[UPLOAD_ID_MAX];
	uint8_t *buf; /* cap bytes; buf[len] may be written (a NUL) */
	size_t len, cap;
};

/* io.hostel.Call.Upload(uploadId?, data) -> (uploadId, size). */
void method_call_upload(struct call *call);

/* Upload `id` of connection c; NULL: none. */
struct upload *upload_find(struct conn *c, const char *id);

/* Take upload `id` of connection c (upload_free it); NULL: none. */
struct upload *upload_take(struct conn *c, const char *id);

/* Free an upload taken from c, or still in its list, and count it out. */
void upload_free(struct conn *c, struct upload *u);

/* Free every upload of c (the connection goes). */
void upload_conn_free(struct conn *c);

#endif
