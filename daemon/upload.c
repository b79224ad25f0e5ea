/*
 * upload.c - io.hostel.Call.Upload (see upload.h): chunks of base64 text
 * appended to a connection's upload, bound by a later Invoke.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - an upload's buffer: grown to hold each chunk (doubling), never past
 *    UPLOAD_CONN_BYTES_MAX (256 MiB) for all the uploads of a
 *    connection, nor UPLOAD_TOTAL_BYTES_MAX (1 GiB) over all
 *    connections: the capacity is what is counted; a chunk that would
 *    pass either is refused with ValueTooLarge {value "upload"} and
 *    nothing of it is kept.
 *  - a chunk's decoded bytes, transiently: at most 3/4 of one message
 *    (VARLINK_MESSAGE_MAX, 16 MiB).
 *  - at most UPLOAD_CONN_COUNT_MAX (16) struct upload per connection.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/upload.h"
#include "ipc/value-json.h"

#define ERR(name) "io.hostel.Call." name

static struct upload **find(struct conn *c, const char *id)
{
	struct upload **pp = &c->uploads;

	while (*pp && strcmp((*pp)->id, id))
		pp = &(*pp)->next;
	return pp;
}

struct upload *upload_find(struct conn *c, const char *id)
{
	return *find(c, id);
}

struct upload *upload_take(struct conn *c, const char *id)
{
	struct upload **pp = find(c, id), *u = *pp;

	if (u) {
		*pp = u->next;
		u->next = NULL;
	}
	return u;
}

void upload_free(struct conn *c, struct upload *u)
{
	struct upload **pp;

	if (!u)
		return;
	for (pp = &c->uploads; *pp; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	c->upload_bytes -= u->cap;
	c->d->upload_bytes -= u->cap;
	c->nuploads--;
	free(u->buf);
	free(u);
}

void upload_conn_free(struct conn *c)
{
	while (c->uploads)
		upload_free(c, c->uploads);
}

static void too_large(struct call *call, uint64_t size, uint64_t limit,
		      const char *bound)
{
	call_error(call, HOSTEL_ERROR_VALUE_TOO_LARGE,
		   json_pack("{ss,sI,sI,ss}", "value", "upload", "size",
			     (json_int_t)size, "limit", (json_int_t)limit,
			     "bound", bound));
}

/*
 * Room for `more` bytes after u's len, within the bounds; 0, or -1
 * after replying.
 */
static int reserve(struct call *call, struct upload *u, size_t more)
{
	struct conn *c = call->conn;
	size_t need = u->len + more + 1, cap = u->cap ? u->cap : 65536;
	uint8_t *p;

	if (need <= u->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap - u->cap + c->upload_bytes > UPLOAD_CONN_BYTES_MAX)
		cap = need; /* exact, near the bound */
	if (cap - u->cap + c->upload_bytes > UPLOAD_CONN_BYTES_MAX) {
		too_large(call, (uint64_t)(c->upload_bytes - u->cap + need),
			  UPLOAD_CONN_BYTES_MAX, "uploads of a connection");
		return -1;
	}
	if (cap - u->cap + c->d->upload_bytes > UPLOAD_TOTAL_BYTES_MAX) {
		too_large(call, (uint64_t)(c->d->upload_bytes - u->cap + need),
			  UPLOAD_TOTAL_BYTES_MAX, "uploads of all connections");
		return -1;
	}
	p = realloc(u->buf, cap);
	if (!p) {
		call_reply(call, NULL);
		return -1;
	}
	c->upload_bytes += cap - u->cap;
	c->d->upload_bytes += cap - u->cap;
	u->buf = p;
	u->cap = cap;
	return 0;
}

void method_call_upload(struct call *call)
{
	static const char *const known[] = {"uploadId", "data", NULL};
	json_t *p = call->req->parameters;
	json_t *jid = json_object_get(p, "uploadId");
	json_t *jdata = json_object_get(p, "data");
	struct conn *c = call->conn;
	struct upload *u;
	uint8_t *bytes = NULL;
	size_t n = 0;
	int rc;

	if (!call_check_parameters(call, known))
		return;
	if (jid && !json_is_null(jid) && !json_is_string(jid)) {
		call_invalid_parameter(call, "uploadId");
		return;
	}
	if (!json_is_string(jdata)) {
		call_invalid_parameter(call, "data");
		return;
	}
	if (json_is_string(jid)) {
		u = *find(c, json_string_value(jid));
		if (!u) {
			call_error(call, ERR("UploadNotFound"),
				   json_pack("{sO}", "uploadId", jid));
			return;
		}
	} else {
		if (c->nuploads >= UPLOAD_CONN_COUNT_MAX) {
			too_large(call, (uint64_t)c->nuploads + 1,
				  UPLOAD_CONN_COUNT_MAX,
				  "uploads of a connection (count)");
			return;
		}
		u = calloc(1, sizeof(*u));
		if (!u) {
			call_reply(call, NULL);
			return;
		}
		snprintf(u->id, sizeof(u->id), "u%llu",
			 (unsigned long long)++c->next_upload);
		u->next = c->uploads;
		c->uploads = u;
		c->nuploads++;
	}
	rc = value_base64_decode(json_string_value(jdata),
				 json_string_length(jdata), &bytes, &n);
	if (rc == -2) {
		call_reply(call, NULL);
		return;
	}
	if (rc) {
		call_error(call, ERR("InvalidArguments"),
			   json_pack("{ss}", "reason",
				     "data is not base64 (RFC 4648, padded)"));
		return;
	}
	if (reserve(call, u, n)) {
		free(bytes);
		return;
	}
	if (n)
		memcpy(u->buf + u->len, bytes, n);
	u->len += n;
	free(bytes);
	call_reply(call, json_pack("{ss,sI}", "uploadId", u->id, "size",
				   (json_int_t)u->len));
}
