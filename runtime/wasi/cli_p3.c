/*
 * cli_p3.c - WASI 0.3's streams over stream and future ends the host
 * holds (run/instance.h cm_host_end_*): wasi:cli/stdout@0.3.0 and
 * stderr@0.3.0 write-via-stream, wasi:cli/stdin@0.3.0 read-via-stream,
 * and the pipes behind wasi:filesystem@0.3.0's file and directory
 * streams (filesystem_p3.c makes those: internal.h wasi_p3_*_stream).
 * A wasi_pipe is one such call: its stream's host end, its result (a
 * future's writable end, or the deferred call), and its source or sink.
 *
 * Contract:
 *  - write-via-stream takes the guest's stream<u8> and moves what the
 *    guest writes to the sink (stdout or stderr: wasi_stdout_write, the
 *    embedder's output callback, else its fd; a file: pwrite at the
 *    stream's offset, or its end to append) at once: from the end's
 *    notify, inside the guest's stream.write, so a write completes
 *    with all its bytes and the guest never waits on it.  When the
 *    guest drops its writable end the call's result is ok.  Both shapes
 *    of the function the WASI 0.3 drafts have had are served, told
 *    apart by the import's type (cm_host_call_type):
 *      func(data: stream<u8>) -> future<result<_, error-code>>
 *        (jco 1.35's 0.3.0 WIT): the future is made here and ok is
 *        written into it once the guest reads it;
 *      async func(data: stream<u8>) -> result<_, error-code>
 *        (the later drafts): the call is deferred and settles ok.
 *  - read-via-stream: tuple<stream<u8>, future<result<_, error-code>>>:
 *    a read the guest starts is answered from read(2) on the stdin fd,
 *    or pread at the file stream's offset (up to the read's length,
 *    STDIN_CHUNK at a time); stdin's blocks as 0.2's blocking-read does
 *    (only `hostel run` gives a guest a stdin; the daemon's services
 *    have none: end of file at once).  At end of file the stream is
 *    dropped and the future answers ok; a failure answers its errno's
 *    error-code case (wasi_p3_error_case: by label in the future's
 *    type).
 *  - read-directory's entries are records holding strings: they are
 *    written at the store's next scheduling step (cm_host_end_defer),
 *    where the reader's realloc may run, DIR_CHUNK at a time.
 *  - A cancelled async write-via-stream (subtask.cancel) settles
 *    cancelled and drops the host's end of the stream.  Nothing here
 *    runs guest code inside a built-in: the future's value,
 *    result<_, error-code>, is written without a string (no `other`
 *    payload is made), so it needs no realloc.
 *  - In store snapshots (wasi_ctx_durable) the host's ends are written
 *    as plain data (end_save) and taken over again by the restored
 *    store's ctx: an open stdout stream goes on writing to the new
 *    ctx's sinks, a file or directory stream is opened again by its
 *    origin (lost when it cannot be), a result not yet read is still
 *    answered.  An async write-via-stream in flight comes back
 *    cancelled (its call is not resumed: the runtime settles it so),
 *    its stream still drained.
 *
 * Allocations sized by a guest or a client (issue 18 audit): one
 * wasi_pipe per call of write-via-stream / read-via-stream /
 * read-directory, freed when the call's result is delivered or the
 * guest drops its ends; each holds a stream end the guest made or got
 * (its handles count against max_handles) and, for files, an fd or a
 * DIR within WASI_MAX_OPEN_FILES and a copy of its origin's path.
 * Bytes move through a STDIO_CHUNK buffer on the stack, entries
 * through DIR_CHUNK values at a step.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasi/internal.h"

#define WASI_P3	    "@0.3.0"
#define STDIO_CHUNK 16384u
#define STDIN_CHUNK 65536u

struct wasi_pipe {
	struct wasi_pipe *next;
	wasi_ctx *ctx;
	int which;	      /* PIPE_* */
	cm_host_end *data;    /* the stream's host end; NULL once over */
	cm_host_end *done;    /* the future's writable end (future shape) */
	cm_host_pending *call; /* the deferred call (async shape) */
	bool over;	      /* the stream is over: the result is known */
	bool async;	      /* the async shape (call, or cancelled) */
	int err;	      /* 0: ok; else the errno it failed with */
	const cm_type *errt;  /* the result's error-code type */
	/* files: the pipe's own fd (counted in ctx->nfiles), the offset,
	 * appending */
	int fd;
	uint64_t offset;
	bool append;
	/* directories: the stream, what makes its next entry, how many it
	 * made */
	DIR *dir;
	wasi_dir_entry_fn entry;
	uint64_t pos;
	/* files and directories: where a restore opens them again; lost:
	 * not 0 when a restore could not (the errno the stream ends with) */
	wasi_origin origin;
	int lost;
	uint64_t serial;      /* pairs its two ends in a snapshot */
};

static bool is_file(const wasi_pipe *p)
{
	return p->which >= PIPE_FILE_IN;
}

static void pipe_close_fd(wasi_pipe *p)
{
	if (p->fd >= 0) {
		close(p->fd);
		p->fd = -1;
		p->ctx->nfiles--;
	}
	if (p->dir != NULL) {
		closedir(p->dir);
		p->dir = NULL;
		p->ctx->nfiles--;
	}
}

static void pipe_unlink(wasi_pipe *p)
{
	wasi_pipe **at = &p->ctx->pipes;

	while (*at != NULL && *at != p)
		at = &(*at)->next;
	if (*at == p)
		*at = p->next;
	pipe_close_fd(p);
	free(p->origin.path);
	free(p);
}

/*
 * The store is being freed: its ends and calls go with it.  Forget
 * every pipe; the ends are still alive (objects go after the
 * cleanups), so their notify is cleared first.
 */
static void pipes_gone(void *arg)
{
	wasi_ctx *ctx = arg;

	while (ctx->pipes != NULL) {
		wasi_pipe *p = ctx->pipes;

		if (p->data != NULL)
			cm_host_end_set_notify(p->data, NULL, NULL);
		if (p->done != NULL)
			cm_host_end_set_notify(p->done, NULL, NULL);
		ctx->pipes = p->next;
		pipe_close_fd(p);
		free(p->origin.path);
		free(p);
	}
	ctx->pipe_store = NULL;
}

void wasi_pipes_free(wasi_ctx *ctx)
{
	pipes_gone(ctx);
}

/* The call's result<_, error-code> in *v (free it after); -1: no memory. */
static int result_value(const wasi_pipe *p, cm_val *v)
{
	if (p->err == 0) {
		*v = wasi_result_unit(true);
		return 0;
	}
	if (p->errt == NULL || cm_val_case_payload(v, CM_RESULT, 1))
		return -1;
	*v->u.variant.payload =
		cm_val_case(p->errt->kind, wasi_p3_error_case(p->errt, p->err));
	return 0;
}

/* Deliver the result once the stream is over; frees p when done. */
static void deliver(wasi_pipe *p)
{
	uint32_t n = 0;
	cm_val v;
	int rc;

	if (result_value(p, &v)) {
		if (p->call != NULL)
			cm_host_settle_trap(p->call, "wasi: out of memory");
		if (p->done != NULL)
			cm_host_end_drop(p->done);
		pipe_unlink(p);
		return;
	}
	if (p->call != NULL || p->done == NULL) {
		/* no done: the async call was cancelled by a restore */
		if (p->call != NULL &&
		    cm_host_settle(p->call, &v, 1, NULL))
			cm_host_settle_trap(p->call,
					    "wasi: cannot settle stdio");
		cm_val_free(&v);
		pipe_unlink(p);
		return;
	}
	rc = cm_host_end_write(p->done, &v, 1, &n, NULL);
	cm_val_free(&v);
	if (rc == 0 && n == 0)
		return; /* the guest has not read the future yet */
	cm_host_end_drop(p->done);
	pipe_unlink(p);
}

static void stream_over(wasi_pipe *p, int err)
{
	if (p->data != NULL)
		cm_host_end_drop(p->data);
	p->data = NULL;
	p->over = true;
	p->err = err;
	pipe_close_fd(p);
}

/* n bytes to the pipe's file at its offset (or its end): 0 or errno. */
static int file_write(wasi_pipe *p, const uint8_t *b, size_t n)
{
	struct stat st;

	if (p->append) {
		if (fstat(p->fd, &st))
			return errno;
		p->offset = (uint64_t)st.st_size;
	}
	while (n > 0) {
		ssize_t w;

		if (p->offset > (uint64_t)INT64_MAX - n)
			return EFBIG;
		w = pwrite(p->fd, b, n, (off_t)p->offset);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno;
		b += w;
		n -= (size_t)w;
		p->offset += (uint64_t)w;
	}
	return 0;
}

/* Move what the guest has written to stdout, stderr or the file. */
static void drain_out(wasi_pipe *p)
{
	uint8_t buf[STDIO_CHUNK];

	if (p->lost && p->data != NULL)
		stream_over(p, p->lost);
	while (p->data != NULL) {
		uint32_t n = 0;
		int rc = cm_host_end_read_bytes(p->data, buf, sizeof buf, &n,
						NULL),
		    e = 0;

		if (n > 0 && is_file(p))
			e = file_write(p, buf, n);
		else if (n > 0)
			wasi_stdout_write(p->ctx, p->which, buf, n);
		if (e)
			stream_over(p, e); /* the guest's end is dropped */
		else if (rc == 1)
			stream_over(p, 0); /* the guest dropped its end */
		else if (rc < 0)
			stream_over(p, EIO);
		else if (n == 0)
			return; /* nothing pending: the next notify */
	}
}

/* Answer the guest's pending read from stdin or the file. */
static void fill_in(wasi_pipe *p)
{
	uint8_t buf[STDIN_CHUNK];

	if (p->lost && p->data != NULL)
		stream_over(p, p->lost);
	while (p->data != NULL && cm_host_end_pending(p->data)) {
		int fd = is_file(p) ? p->fd : p->ctx->in_fd;
		uint32_t n = 0, room = cm_host_end_room(p->data);
		ssize_t r;
		int rc;

		if (fd < 0) {
			stream_over(p, 0);
			return;
		}
		if (room == 0) {
			/* a zero-length read: the guest asks if data waits */
			cm_host_end_write_bytes(p->data, buf, 1, &n, NULL);
			return;
		}
		if (room > sizeof buf)
			room = sizeof buf;
		if (is_file(p) && p->offset > (uint64_t)INT64_MAX - room) {
			stream_over(p, 0); /* past any file's end */
			return;
		}
		r = is_file(p) ? pread(fd, buf, room, (off_t)p->offset)
			       : read(fd, buf, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			stream_over(p, r == 0 ? 0 : errno);
			return;
		}
		if (is_file(p))
			p->offset += (uint64_t)r;
		/* read(2) asked for no more than the guest's read holds */
		rc = cm_host_end_write_bytes(p->data, buf, (uint32_t)r, &n,
					     NULL);
		if (rc == 1) {
			stream_over(p, 0); /* the guest dropped its end */
			return;
		}
		if (rc < 0 || n < (uint32_t)r) {
			stream_over(p, EIO);
			return;
		}
		return; /* one read(2) per guest read: it may block */
	}
	if (p->data != NULL && cm_host_end_peer_dropped(p->data))
		stream_over(p, 0);
}

/*
 * A directory's entries: records holding strings, so they are written
 * at the next scheduling step (cm_host_end_defer), where the reader's
 * realloc may run, up to DIR_CHUNK a time.
 */
#define DIR_CHUNK 64u

static void dir_turn(void *env, cm_host_end *e)
{
	wasi_pipe *p = env;
	const cm_type *t = cm_host_end_type(e);
	cm_val vals[DIR_CHUNK];
	uint32_t room = cm_host_end_room(e), k = 0, done = 0;
	int rc = 0;

	if (p->data != e || t == NULL)
		return;
	if (p->lost) {
		stream_over(p, p->lost);
		deliver(p);
		return;
	}
	if (room > DIR_CHUNK)
		room = DIR_CHUNK;
	while (k < room && (rc = p->entry(t, p->dir, &vals[k])) == 1)
		k++;
	p->pos += k;
	if (k > 0 && cm_host_end_write(e, vals, k, &done, NULL) < 0 && rc >= 0)
		rc = -EIO;
	cm_vals_free(vals, k);
	if (rc < 1 || done < k) /* the end, an error, or entries lost */
		stream_over(p, rc < 0 ? -rc : done < k ? EIO : 0);
	if (p->over)
		deliver(p);
}

static void dir_fill(wasi_pipe *p)
{
	if (p->data == NULL)
		return;
	if (cm_host_end_pending(p->data))
		cm_host_end_defer(p->data, dir_turn, p);
	else if (cm_host_end_peer_dropped(p->data))
		stream_over(p, 0);
}

static void pump(wasi_pipe *p)
{
	if (p->which == PIPE_DIR)
		dir_fill(p);
	else if (p->which == PIPE_STDIN || p->which == PIPE_FILE_IN)
		fill_in(p);
	else
		drain_out(p);
	if (p->over)
		deliver(p);
}

static void on_notify(void *env, cm_host_end *e)
{
	wasi_pipe *p = env;

	(void)e;
	if (p->ctx->pipe_store != NULL && cm_store_freeing(p->ctx->pipe_store))
		return;
	pump(p);
}

/*
 * p's end e is moved from its notify (and deferred calls) only: a guest
 * waiting on it with nothing asked for is stuck (the deadlock trap).
 */
static void watch(cm_host_end *e, wasi_pipe *p)
{
	cm_host_end_set_notify(e, on_notify, p);
	cm_host_end_set_passive(e);
}

/* The guest cancelled an async write-via-stream (or the store goes). */
static void on_cancel(void *env, cm_host_pending *call)
{
	wasi_ctx *ctx = env;

	for (wasi_pipe *p = ctx->pipes; p != NULL; p = p->next)
		if (p->call == call) {
			if (ctx->pipe_store != NULL &&
			    cm_store_freeing(ctx->pipe_store)) {
				p->call = NULL; /* dies with the store */
				return;
			}
			if (p->data != NULL)
				cm_host_end_drop(p->data);
			p->data = NULL;
			cm_host_settle_cancelled(call);
			pipe_unlink(p);
			return;
		}
}

/* A pipe of ctx in store s; NULL: another store's ctx, or no memory. */
static wasi_pipe *pipe_alloc(wasi_ctx *ctx, cm_store *s, int which,
			     uint64_t serial)
{
	wasi_pipe *p;

	if (ctx->pipe_store != NULL && ctx->pipe_store != s)
		return NULL;
	if (ctx->pipe_store == NULL) {
		if (cm_store_on_free(s, pipes_gone, ctx))
			return NULL;
		ctx->pipe_store = s;
	}
	p = calloc(1, sizeof *p);
	if (p == NULL)
		return NULL;
	p->ctx = ctx;
	p->which = which;
	p->fd = -1;
	p->serial = serial;
	if (serial >= ctx->pipe_seq)
		ctx->pipe_seq = serial + 1;
	p->next = ctx->pipes;
	ctx->pipes = p;
	return p;
}

static wasi_pipe *pipe_new(cm_host_call *call, wasi_ctx *ctx, int which)
{
	cm_store *s = cm_host_call_store(call);
	wasi_pipe *p;

	if (ctx->pipe_store != NULL && ctx->pipe_store != s) {
		cm_host_call_trap(call, "wasi: a wasi_ctx serves one store");
		return NULL;
	}
	p = pipe_alloc(ctx, s, which, ctx->pipe_seq);
	if (p == NULL)
		wasi_oom(call);
	return p;
}

/* The error-code type of result<_, error-code> r (NULL: none). */
static const cm_type *error_type(const cm_type *r)
{
	return r != NULL && r->kind == CM_RESULT ? r->u.result.err : NULL;
}

/* A counted fd the pipe did not take: close and uncount it. */
static void drop_fd(wasi_ctx *ctx, int fd)
{
	if (fd >= 0) {
		close(fd);
		ctx->nfiles--;
	}
}

int wasi_p3_write_stream(cm_host_call *call, wasi_ctx *ctx,
			 const cm_val *arg, cm_val *res, int which, int fd,
			 const wasi_origin *origin, uint64_t offset, bool append,
			 int fail)
{
	const cm_type *ft = cm_host_call_type(call);
	const cm_type *rt = ft->u.func.result;
	cm_store *s = cm_host_call_store(call);
	cm_host_end *data;
	wasi_pipe *p;
	cm_error err;

	if (rt == NULL ||
	    !((rt->kind == CM_FUTURE && error_type(rt->u.future.elem)) ||
	      (rt->kind == CM_RESULT && ft->u.func.async && error_type(rt)))) {
		drop_fd(ctx, fd);
		return cm_host_call_trap(call,
					 "wasi: write-via-stream of an unknown "
					 "type");
	}
	/* the runtime owns args; taking the end moves it out of the value */
	data = cm_host_end_take(s, (cm_val *)arg);
	if (data == NULL) {
		drop_fd(ctx, fd);
		return cm_host_call_trap(call,
					 "wasi: write-via-stream: not a stream "
					 "the guest holds the other end of");
	}
	p = pipe_new(call, ctx, which);
	if (p == NULL) {
		drop_fd(ctx, fd);
		cm_host_end_drop(data);
		return -1;
	}
	p->data = data;
	p->fd = fd;
	p->offset = offset;
	p->append = append;
	if (origin != NULL && wasi_origin_copy(&p->origin, origin)) {
		cm_host_end_drop(data);
		pipe_unlink(p);
		return wasi_oom(call);
	}
	p->errt = error_type(rt->kind == CM_FUTURE ? rt->u.future.elem : rt);
	if (rt->kind == CM_FUTURE) {
		if (cm_host_stream_new(s, rt, &res[0], &p->done, &err)) {
			cm_host_end_drop(data);
			pipe_unlink(p);
			return cm_host_call_trap(call, "wasi: %s", err.msg);
		}
		watch(p->done, p);
	} else {
		p->async = true;
		p->call = cm_host_call_defer(call);
		if (p->call == NULL) {
			cm_host_end_drop(data);
			pipe_unlink(p);
			return -1; /* trap recorded */
		}
		cm_host_pending_set_cancel(p->call, on_cancel, ctx);
	}
	watch(data, p);
	if (fail)
		stream_over(p, fail); /* the guest's writes see it dropped */
	/* what the guest wrote or dropped before it called */
	drain_out(p);
	if (p->call != NULL) {
		if (p->over)
			deliver(p); /* settled: delivered at the next turn */
		return CM_HOST_PENDING;
	}
	if (p->over)
		deliver(p); /* p lives on until the guest reads the future */
	return 0;
}

static int stdout_write(cm_host_call *call, void *env, const cm_val *args,
			uint32_t nargs, cm_val *res, uint32_t nres)
{
	return wasi_p3_write_stream(call, env, &args[0], res, PIPE_STDOUT, -1,
				    NULL, 0, false, 0);
}

static int stderr_write(cm_host_call *call, void *env, const cm_val *args,
			uint32_t nargs, cm_val *res, uint32_t nres)
{
	return wasi_p3_write_stream(call, env, &args[0], res, PIPE_STDERR, -1,
				    NULL, 0, false, 0);
}

/* read-via-stream: func() -> tuple<stream<u8>, future<result<_, ..>>> */
static int reader(cm_host_call *call, wasi_ctx *ctx, cm_val *res, int which,
		  int fd, const wasi_origin *origin, uint64_t offset, int fail,
		  bool bytes, wasi_pipe **out)
{
	const cm_type *rt = cm_host_call_type(call)->u.func.result;
	cm_store *s = cm_host_call_store(call);
	const cm_type *st, *fu;
	wasi_pipe *p;
	cm_error err;

	if (rt == NULL || rt->kind != CM_TUPLE || cm_type_nfields(rt) != 2 ||
	    (st = cm_type_field(rt, 0))->kind != CM_STREAM ||
	    (bytes && (st->u.stream.elem == NULL ||
			st->u.stream.elem->kind != CM_U8)) ||
	    (fu = cm_type_field(rt, 1))->kind != CM_FUTURE ||
	    error_type(fu->u.future.elem) == NULL) {
		drop_fd(ctx, fd);
		return cm_host_call_trap(call,
					 "wasi: read-via-stream of an unknown "
					 "type");
	}
	p = pipe_new(call, ctx, which);
	if (p == NULL) {
		drop_fd(ctx, fd);
		return -1;
	}
	p->fd = fd;
	p->offset = offset;
	p->errt = error_type(fu->u.future.elem);
	if ((origin != NULL && wasi_origin_copy(&p->origin, origin)) ||
	    cm_val_seq(&res[0], CM_TUPLE, 2)) {
		pipe_unlink(p);
		return wasi_oom(call);
	}
	if (cm_host_stream_new(s, st, &res[0].u.list.elems[0], &p->data,
			       &err) ||
	    cm_host_stream_new(s, fu, &res[0].u.list.elems[1], &p->done,
			       &err)) {
		/* the guest's end the first call made goes too */
		cm_vals_drop_ends(s, &res[0], 1);
		if (p->data != NULL)
			cm_host_end_drop(p->data);
		pipe_unlink(p);
		return cm_host_call_trap(call, "wasi: %s", err.msg);
	}
	watch(p->data, p);
	watch(p->done, p);
	if (fail)
		stream_over(p, fail); /* the future tells why */
	*out = p;
	return 0;
}

int wasi_p3_read_stream(cm_host_call *call, wasi_ctx *ctx, cm_val *res,
			int which, int fd, const wasi_origin *origin,
			uint64_t offset, int fail)
{
	wasi_pipe *p;

	return reader(call, ctx, res, which, fd, origin, offset, fail, !fail,
		      &p);
}

int wasi_p3_dir_stream(cm_host_call *call, wasi_ctx *ctx, cm_val *res,
		       DIR *dir, const wasi_origin *origin,
		       wasi_dir_entry_fn entry)
{
	wasi_pipe *p;

	if (reader(call, ctx, res, PIPE_DIR, -1, origin, 0, 0, false, &p)) {
		closedir(dir);
		ctx->nfiles--;
		return -1;
	}
	p->dir = dir;
	p->entry = entry;
	return 0;
}

static int stdin_read(cm_host_call *call, void *env, const cm_val *args,
		      uint32_t nargs, cm_val *res, uint32_t nres)
{
	return wasi_p3_read_stream(call, env, res, PIPE_STDIN, -1, NULL, 0, 0);
}

/* ---- the streams in store snapshots (run/instance.h) ------------------ */

/*
 * A host end as plain data: u8 DESC_VERSION, u8 which (PIPE_*), u8 role
 * (0 the stream, 1 the future), u8 async (the async shape: its call
 * does not come back, the runtime settles it cancelled), u8 over, u8
 * errno (0: ok), u64 serial (the pipe's, pairing its two ends).  A
 * file's or directory's stream end goes on with u64 offset, u8 append,
 * u64 entries made, and its origin (durable.c's encoding); restored, it
 * is opened again by it (read, write, or as a directory skipped past
 * its entries), and one that cannot be comes back lost: its stream ends
 * with that errno at its next use.  Nothing else is state: a guest's
 * write is moved out when it is made, a read of bytes answered when it
 * starts, so no bytes wait in the host; a read of entries waiting for
 * its step is asked for again.
 */
enum { DESC_VERSION = 1, DESC_LEN = 14, DESC_FILE = DESC_LEN + 17 };

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int end_save(void *env, cm_host_end *e, uint8_t *desc, size_t cap,
		    size_t *len)
{
	wasi_ctx *ctx = env;

	if (cap < DESC_FILE)
		return -1;
	for (wasi_pipe *p = ctx->pipes; p != NULL; p = p->next) {
		size_t olen = 0;

		if (p->data != e && p->done != e)
			continue;
		desc[0] = DESC_VERSION;
		desc[1] = (uint8_t)p->which;
		desc[2] = p->done == e;
		desc[3] = p->async;
		desc[4] = p->over;
		desc[5] = (uint8_t)(p->err > 0 && p->err < 256 ? p->err
					: p->err ? EIO : 0);
		put64(desc + 6, p->serial);
		*len = DESC_LEN;
		if (p->data != e || !is_file(p))
			return 0;
		put64(desc + DESC_LEN, p->offset);
		desc[DESC_LEN + 8] = p->append;
		put64(desc + DESC_LEN + 9, p->pos);
		if (wasi_origin_put(ctx, &p->origin, desc + DESC_FILE,
				    cap - DESC_FILE, &olen))
			return -1; /* no origin to open it by */
		*len = DESC_FILE + olen;
		return 0;
	}
	return -1; /* not one of this ctx's ends */
}

/*
 * Every end is taken over: each pipe restored into s must be whole (an
 * async write: its stream alone; a result known: its future alone; else
 * both), and no stream the host reads may have a guest write pending or
 * its guest end gone (the notify moves those at once, so no image holds
 * one); a directory's pending read is asked for again.
 */
static int pipes_whole(wasi_ctx *ctx, cm_store *s)
{
	if (ctx->pipe_store != s)
		return 0; /* none restored */
	for (wasi_pipe *p = ctx->pipes; p != NULL; p = p->next) {
		bool want_data = !p->over, want_done = !p->async;

		if (p->async && p->over)
			return -1;
		if ((p->data != NULL) != want_data ||
		    (p->done != NULL) != want_done)
			return -1;
		if (p->data == NULL)
			continue;
		if (p->which == PIPE_DIR && cm_host_end_pending(p->data)) {
			if (cm_host_end_defer(p->data, dir_turn, p))
				return -1;
		} else if (p->which != PIPE_STDIN &&
			   p->which != PIPE_FILE_IN &&
			   (cm_host_end_pending(p->data) ||
			    cm_host_end_peer_dropped(p->data))) {
			return -1;
		}
	}
	return 0;
}

/* Does the host read the pipe's stream (else write it)? */
static bool host_reads(int which)
{
	return which == PIPE_STDOUT || which == PIPE_STDERR ||
	       which == PIPE_FILE_OUT;
}

/*
 * Open a restored file's or directory's stream again by its origin
 * (desc past DESC_FILE): 0, the pipe holding its fd or DIR, or lost;
 * -1 for a malformed description or a preopen not configured.
 */
static int reopen_pipe(wasi_pipe *p, const uint8_t *desc, size_t len)
{
	wasi_ctx *ctx = p->ctx;
	size_t used = 0;
	uint64_t pos;
	int fd, e = 0;
	bool dir = p->which == PIPE_DIR;

	if (len < DESC_FILE || desc[DESC_LEN + 8] > 1)
		return -1;
	p->offset = get64(desc + DESC_LEN);
	p->append = desc[DESC_LEN + 8];
	p->pos = pos = get64(desc + DESC_LEN + 9);
	if (wasi_origin_get(ctx, desc + DESC_FILE, len - DESC_FILE, &p->origin,
			    &used) ||
	    used != len - DESC_FILE)
		return -1;
	if (p->origin.path == NULL && !dir)
		return -1; /* a file stream on the preopen itself */
	/* descriptor-flags read (0x1) or write (0x2) */
	fd = wasi_origin_reopen(ctx, &p->origin, dir,
				p->which == PIPE_FILE_IN ? 0x1u : 0x2u, &e);
	if (fd < 0) {
		p->lost = e;
		return 0;
	}
	if (!dir) {
		p->fd = fd;
		return 0;
	}
	p->dir = fdopendir(fd);
	if (p->dir == NULL) {
		p->lost = errno;
		close(fd);
		ctx->nfiles--;
		return 0;
	}
	/* past the entries it had made (directories have no position) */
	while (pos > 0) {
		struct dirent *d = readdir(p->dir);

		if (d == NULL)
			break;
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			pos--;
	}
	return 0;
}

static int end_restore(void *env, cm_store *s, cm_host_end *e,
		       const uint8_t *desc, size_t len)
{
	wasi_ctx *ctx = env;
	uint64_t serial;
	const cm_type *et;
	wasi_pipe *p;
	int which;
	bool file;

	if (e == NULL)
		return pipes_whole(ctx, s);
	if (len < DESC_LEN || desc[0] != DESC_VERSION || desc[1] > PIPE_DIR ||
	    desc[2] > 1 || desc[3] > 1 || desc[4] > 1 ||
	    (desc[3] && desc[2]) ||
	    (desc[3] && desc[1] != PIPE_STDOUT && desc[1] != PIPE_STDERR) ||
	    (desc[4] && !desc[2]))
		return -1; /* the stream's end exists only until it is over */
	which = desc[1];
	file = which >= PIPE_FILE_IN;
	/* a file's or directory's stream end carries its origin */
	if (file && !desc[2] ? len < DESC_FILE : len != DESC_LEN)
		return -1;
	serial = get64(desc + 6);
	/*
	 * The end must be what the description says: the stream the host
	 * reads (stdout, stderr, a file written) or writes (stdin, a file
	 * read, a directory's entries), of bytes but for the entries'
	 * records; the future one the host writes, of result<_, E>.
	 */
	et = cm_host_end_type(e);
	if (serial == UINT64_MAX || cm_host_end_is_future(e) != desc[2] ||
	    cm_host_end_readable(e) != (!desc[2] && host_reads(which)) ||
	    (desc[2] ? error_type(et) == NULL
		     : et == NULL ||
			       et->kind != (which == PIPE_DIR ? CM_RECORD
							      : CM_U8)))
		return -1;
	for (p = ctx->pipes; p != NULL; p = p->next)
		if (p->serial == serial)
			break;
	if (p == NULL) {
		p = pipe_alloc(ctx, s, which, serial);
		if (p == NULL)
			return -1;
		p->async = desc[3];
		p->over = desc[4];
		p->err = desc[5];
	} else if (p->which != which || p->async != desc[3] ||
		   p->over != desc[4] || p->err != desc[5]) {
		return -1; /* two ends that disagree */
	}
	if (desc[2] ? p->done != NULL : p->data != NULL)
		return -1;
	if (desc[2]) {
		p->done = e;
		p->errt = error_type(et);
	} else {
		if (which == PIPE_DIR)
			p->entry = wasi_p3_dir_entry;
		if (file && reopen_pipe(p, desc, len))
			return -1;
		p->data = e;
	}
	watch(e, p);
	return 0;
}

void wasi_pipes_durable(wasi_ctx *ctx, cm_store *s)
{
	cm_store_set_host_end_durable(s, end_save, end_restore, ctx);
}

int wasi_link_cli_p3(wasi_ctx *ctx, cm_linker *l)
{
	static const struct {
		const char *instance, *name;
		cm_host_fn fn;
	} fns[] = {
		{"wasi:cli/stdout" WASI_P3, "write-via-stream", stdout_write},
		{"wasi:cli/stderr" WASI_P3, "write-via-stream", stderr_write},
		{"wasi:cli/stdin" WASI_P3, "read-via-stream", stdin_read},
	};

	for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
		if (cm_linker_define_func(l, fns[i].instance, fns[i].name,
					  fns[i].fn, ctx))
			return -1;
	/* `enum error-code`; guests import the types interface too */
	return cm_linker_define_types(l, "wasi:cli/types" WASI_P3);
}
