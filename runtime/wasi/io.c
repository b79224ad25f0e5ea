/*
 * io.c - wasi:io 0.2: error, poll (pollable, poll) and streams
 * (input-stream, output-stream).
 *
 * Contract: streams are synchronous underneath.  A write is performed
 * at once, so flush is a no-op and check-write always offers
 * WRITE_BUDGET bytes; `read` on stdin never blocks (it returns an empty
 * list when nothing is ready), `blocking-read` does.  End of input is
 * stream-error.closed; an OS failure is last-operation-failed carrying
 * an error resource whose debug string is strerror.  Blocking on
 * pollables goes through wasi_poll_block (ctx.c).  A stream that came
 * back from a snapshot without its file (wasi_obj.lost) fails every
 * read, write, check-write and flush with last-operation-failed
 * carrying that errno.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - poll_: the pointer array, in->n entries: POLL_MAX (65,536), trap
 *    "wasi: poll: too many pollables (limit N)"; its result list, at
 *    most in->n u32s; wasi_poll_block's pollfds, at most in->n.
 *  - stream_read (read, blocking-read, skip, splice): the buffer and its
 *    list<u8>, READ_MAX (1 MiB) bytes whatever the guest asks for.
 *  - write_vals (write, blocking-write-and-flush): none (the list's
 *    bytes are written as they are), WRITE_BUDGET (1 MiB), trap
 *    "wasi: write: more than check-write allowed (limit N)".
 *  - out_write_zeroes: WRITE_BUDGET, the same trap.
 *  - stream_error, subscribe: one object each in ctx->objs, which lives
 *    as long as the guest's handle (max_handles per instance).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasi/internal.h"

/*
 * What check-write offers, and so the most one write may carry (the
 * interface traps a write longer than the permit); a read returns at
 * most READ_MAX bytes, which the interface allows.  Both bound what one
 * call makes the host hold: the bytes and, for a read, their list<u8>
 * (byte form, 1 byte each), about 2 MiB.
 */
#define WRITE_BUDGET (1u << 20)
#define READ_MAX     (1u << 20)
/*
 * Pollables in one poll (issue 18).  The list may name one pollable many
 * times, so max_handles does not bound it; the host keeps a pointer per
 * entry and walks the list on every wake-up.  Past it poll traps
 * "wasi: poll: too many pollables (limit N)".
 */
#define POLL_MAX (1u << 16)

/* ---- error --------------------------------------------------------------- */

static int error_debug(cm_host_call *call, void *env, const cm_val *args,
		       uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *o = wasi_obj_get(env, &args[0], WOBJ_ERROR);
	const char *m;

	if (o == NULL)
		return wasi_bad_handle(call, "error.to-debug-string");
	m = strerror(o->u.error.err);
	if (cm_val_string(&res[0], m, strlen(m)))
		return wasi_oom(call);
	return 0;
}

/* ---- poll ---------------------------------------------------------------- */

static int pollable_ready(cm_host_call *call, void *env, const cm_val *args,
			  uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *o = wasi_obj_get(env, &args[0], WOBJ_POLLABLE);

	if (o == NULL)
		return wasi_bad_handle(call, "pollable.ready");
	res[0] = cm_val_bool(wasi_poll_ready(env, o));
	return 0;
}

static int pollable_block(cm_host_call *call, void *env, const cm_val *args,
			  uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *o = wasi_obj_get(env, &args[0], WOBJ_POLLABLE);
	const wasi_obj *p[1];

	if (o == NULL)
		return wasi_bad_handle(call, "pollable.block");
	p[0] = o;
	while (!wasi_poll_ready(env, o))
		wasi_poll_block(env, p, 1);
	return 0;
}

static int poll_(cm_host_call *call, void *env, const cm_val *args,
		 uint32_t nargs, cm_val *res, uint32_t nres)
{
	const cm_vals *in = &args[0].u.list;
	const wasi_obj **ps;
	uint32_t nready = 0, k = 0;

	if (in->n == 0)
		return cm_host_call_trap(call, "wasi: poll: empty list");
	if (in->n > POLL_MAX)
		return cm_host_call_trap(call,
					 "wasi: poll: too many pollables "
					 "(limit %u)",
					 POLL_MAX);
	ps = calloc(in->n, sizeof *ps);
	if (ps == NULL)
		return wasi_oom(call);
	for (uint32_t i = 0; i < in->n; i++) {
		ps[i] = wasi_obj_get(env, &in->elems[i], WOBJ_POLLABLE);
		if (ps[i] == NULL) {
			free(ps);
			return wasi_bad_handle(call, "poll");
		}
	}
	for (;;) {
		for (uint32_t i = 0; i < in->n; i++)
			nready += wasi_poll_ready(env, ps[i]);
		if (nready)
			break;
		wasi_poll_block(env, ps, in->n);
	}
	if (cm_val_seq(&res[0], CM_LIST, nready)) {
		free(ps);
		return wasi_oom(call);
	}
	for (uint32_t i = 0; i < in->n && k < nready; i++)
		if (wasi_poll_ready(env, ps[i]))
			res[0].u.list.elems[k++] = cm_val_u32(i);
	res[0].u.list.n = k; /* a pollable can only stay ready */
	free(ps);
	return 0;
}

/* ---- streams -------------------------------------------------------------
 */

/* err(stream-error): closed, or last-operation-failed(error(e)). */
static int stream_error(cm_host_call *call, wasi_ctx *ctx, cm_val *res, int e)
{
	cm_val *p, *q;
	wasi_obj *o;

	if (wasi_result(res, false, &p))
		return wasi_oom(call);
	if (e == 0) {
		*p = cm_val_case(CM_VARIANT, 1);
		return 0;
	}
	if (cm_val_case_payload(p, CM_VARIANT, 0))
		return wasi_oom(call);
	q = p->u.variant.payload;
	if (wasi_new_own(ctx, WOBJ_ERROR, q, &o))
		return wasi_oom(call);
	o->u.error.err = e;
	return 0;
}

/*
 * Read up to len bytes into a new buffer; *n bytes read.  Returns 0, or
 * an errno, or -1 for end of stream.
 */
static int stream_read(wasi_obj *o, uint64_t len, bool blocking, uint8_t **buf,
		       size_t *n)
{
	size_t want = len > READ_MAX ? READ_MAX : (size_t)len;
	ssize_t r;

	*n = 0;
	*buf = malloc(want ? want : 1);
	if (*buf == NULL)
		return ENOMEM;
	if (o->lost)
		return o->lost;
	if (o->u.stream.closed || o->u.stream.src == WSTREAM_EMPTY)
		return -1;
	if (want == 0)
		return 0;
	if (o->u.stream.src == WSTREAM_STDIN) {
		struct pollfd pfd = {.fd = o->u.stream.fd, .events = POLLIN};

		if (!blocking && poll(&pfd, 1, 0) == 0)
			return 0;
		do
			r = read(o->u.stream.fd, *buf, want);
		while (r < 0 && errno == EINTR);
	} else {
		do
			r = pread(o->u.stream.fd, *buf, want,
				  (off_t)o->u.stream.offset);
		while (r < 0 && errno == EINTR);
	}
	if (r < 0)
		return errno;
	if (r == 0) {
		o->u.stream.closed = true;
		return -1;
	}
	o->u.stream.offset += (uint64_t)r;
	*n = (size_t)r;
	return 0;
}

static int read_common(cm_host_call *call, wasi_ctx *ctx, const cm_val *args,
		       cm_val *res, bool blocking, bool skip)
{
	wasi_obj *o = wasi_obj_get(ctx, &args[0], WOBJ_INPUT);
	uint8_t *buf;
	size_t n;
	cm_val *p;
	int rc;

	if (o == NULL)
		return wasi_bad_handle(call, "input-stream.read");
	rc = stream_read(o, args[1].u.u, blocking, &buf, &n);
	if (rc == ENOMEM && buf == NULL)
		return wasi_oom(call);
	if (rc) {
		free(buf);
		return stream_error(call, ctx, res, rc < 0 ? 0 : rc);
	}
	if (wasi_result(res, true, &p)) {
		free(buf);
		return wasi_oom(call);
	}
	if (skip)
		*p = cm_val_u64(n);
	else if (wasi_bytes(p, buf, n)) {
		free(buf);
		return wasi_oom(call);
	}
	free(buf);
	return 0;
}

static int in_read(cm_host_call *call, void *env, const cm_val *args,
		   uint32_t nargs, cm_val *res, uint32_t nres)
{
	return read_common(call, env, args, res, false, false);
}

static int in_blocking_read(cm_host_call *call, void *env, const cm_val *args,
			    uint32_t nargs, cm_val *res, uint32_t nres)
{
	return read_common(call, env, args, res, true, false);
}

static int in_skip(cm_host_call *call, void *env, const cm_val *args,
		   uint32_t nargs, cm_val *res, uint32_t nres)
{
	return read_common(call, env, args, res, false, true);
}

static int in_blocking_skip(cm_host_call *call, void *env, const cm_val *args,
			    uint32_t nargs, cm_val *res, uint32_t nres)
{
	return read_common(call, env, args, res, true, true);
}

static int subscribe(cm_host_call *call, wasi_ctx *ctx, const wasi_obj *s,
		     cm_val *res)
{
	wasi_poll_kind k = WPOLL_READY;
	int fd = -1;
	wasi_obj *o;

	if (s->kind == WOBJ_INPUT && s->u.stream.src == WSTREAM_STDIN &&
	    !s->u.stream.closed) {
		k = WPOLL_FD;
		fd = s->u.stream.fd;
	}
	if (wasi_new_own(ctx, WOBJ_POLLABLE, res, &o))
		return wasi_oom(call);
	o->u.poll.kind = k;
	o->u.poll.fd = fd;
	o->u.poll.events = POLLIN;
	return 0;
}

static int in_subscribe(cm_host_call *call, void *env, const cm_val *args,
			uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *o = wasi_obj_get(env, &args[0], WOBJ_INPUT);

	if (o == NULL)
		return wasi_bad_handle(call, "input-stream.subscribe");
	return subscribe(call, env, o, res);
}

/* Write all of p; 0 or an errno. */
static int stream_write(wasi_ctx *ctx, wasi_obj *o, const uint8_t *p, size_t n)
{
	struct stat st;
	ssize_t w;

	if (o->lost)
		return o->lost;
	switch (o->u.stream.src) {
	case WSTREAM_STDOUT:
		wasi_stdout_write(ctx, o->u.stream.which, p, n);
		return 0;
	case WSTREAM_EMPTY:
	case WSTREAM_STDIN:
		return 0;
	case WSTREAM_APPEND:
		if (fstat(o->u.stream.fd, &st))
			return errno;
		o->u.stream.offset = (uint64_t)st.st_size;
		/* fall through */
	case WSTREAM_FILE:
		while (n > 0) {
			w = pwrite(o->u.stream.fd, p, n,
				   (off_t)o->u.stream.offset);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return errno;
			p += w;
			n -= (size_t)w;
			o->u.stream.offset += (uint64_t)w;
		}
		return 0;
	}
	return 0;
}

static wasi_obj *out_get(cm_host_call *call, wasi_ctx *ctx, const cm_val *h,
			 const char *what)
{
	wasi_obj *o = wasi_obj_get(ctx, h, WOBJ_OUTPUT);

	if (o == NULL)
		wasi_bad_handle(call, what);
	return o;
}

static int out_check_write(cm_host_call *call, void *env, const cm_val *args,
			   uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *o = out_get(call, env, &args[0], "output-stream.check-write");
	cm_val *p;

	if (o == NULL)
		return -1;
	if (o->lost || o->u.stream.closed)
		return stream_error(call, env, res, o->lost);
	if (wasi_result(res, true, &p))
		return wasi_oom(call);
	*p = cm_val_u64(WRITE_BUDGET);
	return 0;
}

static int write_vals(cm_host_call *call, wasi_ctx *ctx, wasi_obj *o,
		      const cm_val *list, cm_val *res)
{
	const cm_vals *v = &list->u.list;
	const uint8_t *buf;
	int e;

	/* check-write never offers more (blocking-write-and-flush: 4096) */
	if (v->n > WRITE_BUDGET)
		return cm_host_call_trap(call,
					 "wasi: write: more than check-write "
					 "allowed (limit %u)",
					 WRITE_BUDGET);
	buf = wasi_list_bytes(call, list, "write");
	if (buf == NULL)
		return -1;
	e = o->u.stream.closed ? -1 : stream_write(ctx, o, buf, v->n);
	if (e)
		return stream_error(call, ctx, res, e < 0 ? 0 : e);
	*res = wasi_result_unit(true);
	return 0;
}

static int out_write(cm_host_call *call, void *env, const cm_val *args,
		     uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *o = out_get(call, env, &args[0], "output-stream.write");

	if (o == NULL)
		return -1;
	return write_vals(call, env, o, &args[1], res);
}

static int out_flush(cm_host_call *call, void *env, const cm_val *args,
		     uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *o = out_get(call, env, &args[0], "output-stream.flush");

	if (o == NULL)
		return -1;
	if (o->lost || o->u.stream.closed)
		return stream_error(call, env, res, o->lost);
	*res = wasi_result_unit(true);
	return 0;
}

static int out_write_zeroes(cm_host_call *call, void *env, const cm_val *args,
			    uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *o =
		out_get(call, env, &args[0], "output-stream.write-zeroes");
	uint64_t len = args[1].u.u;
	uint8_t *buf;
	int e;

	if (o == NULL)
		return -1;
	if (len > WRITE_BUDGET)
		return cm_host_call_trap(call,
					 "wasi: write-zeroes: more than "
					 "check-write allowed (limit %u)",
					 WRITE_BUDGET);
	buf = calloc(1, len ? len : 1);
	if (buf == NULL)
		return wasi_oom(call);
	e = o->u.stream.closed ? -1 : stream_write(env, o, buf, len);
	free(buf);
	if (e)
		return stream_error(call, env, res, e < 0 ? 0 : e);
	*res = wasi_result_unit(true);
	return 0;
}

static int out_subscribe(cm_host_call *call, void *env, const cm_val *args,
			 uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *o = out_get(call, env, &args[0], "output-stream.subscribe");

	if (o == NULL)
		return -1;
	return subscribe(call, env, o, res);
}

static int out_splice(cm_host_call *call, wasi_ctx *ctx, const cm_val *args,
		      cm_val *res, bool blocking)
{
	wasi_obj *o = out_get(call, ctx, &args[0], "output-stream.splice");
	wasi_obj *in = wasi_obj_get(ctx, &args[1], WOBJ_INPUT);
	uint8_t *buf;
	size_t n;
	cm_val *p;
	int rc;

	if (o == NULL)
		return -1;
	if (in == NULL)
		return wasi_bad_handle(call, "output-stream.splice");
	rc = stream_read(in, args[2].u.u, blocking, &buf, &n);
	if (rc == ENOMEM && buf == NULL)
		return wasi_oom(call);
	if (rc == 0)
		rc = o->u.stream.closed ? -1 : stream_write(ctx, o, buf, n);
	free(buf);
	if (rc)
		return stream_error(call, ctx, res, rc < 0 ? 0 : rc);
	if (wasi_result(res, true, &p))
		return wasi_oom(call);
	*p = cm_val_u64(n);
	return 0;
}

static int out_splice_nb(cm_host_call *call, void *env, const cm_val *args,
			 uint32_t nargs, cm_val *res, uint32_t nres)
{
	return out_splice(call, env, args, res, false);
}

static int out_splice_b(cm_host_call *call, void *env, const cm_val *args,
			uint32_t nargs, cm_val *res, uint32_t nres)
{
	return out_splice(call, env, args, res, true);
}

#define S "wasi:io/streams" WASI_V

static const struct {
	const char *instance, *name;
	cm_host_fn fn;
} funcs[] = {
	{"wasi:io/error" WASI_V, "[method]error.to-debug-string", error_debug},
	{"wasi:io/poll" WASI_V, "[method]pollable.ready", pollable_ready},
	{"wasi:io/poll" WASI_V, "[method]pollable.block", pollable_block},
	{"wasi:io/poll" WASI_V, "poll", poll_},
	{S, "[method]input-stream.read", in_read},
	{S, "[method]input-stream.blocking-read", in_blocking_read},
	{S, "[method]input-stream.skip", in_skip},
	{S, "[method]input-stream.blocking-skip", in_blocking_skip},
	{S, "[method]input-stream.subscribe", in_subscribe},
	{S, "[method]output-stream.check-write", out_check_write},
	{S, "[method]output-stream.write", out_write},
	{S, "[method]output-stream.blocking-write-and-flush", out_write},
	{S, "[method]output-stream.flush", out_flush},
	{S, "[method]output-stream.blocking-flush", out_flush},
	{S, "[method]output-stream.write-zeroes", out_write_zeroes},
	{S, "[method]output-stream.blocking-write-zeroes-and-flush",
	 out_write_zeroes},
	{S, "[method]output-stream.subscribe", out_subscribe},
	{S, "[method]output-stream.splice", out_splice_nb},
	{S, "[method]output-stream.blocking-splice", out_splice_b},
};

int wasi_link_io(wasi_ctx *ctx, cm_linker *l)
{
	for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
		if (cm_linker_define_func(l, funcs[i].instance, funcs[i].name,
					  funcs[i].fn, ctx))
			return -1;
	return 0;
}
