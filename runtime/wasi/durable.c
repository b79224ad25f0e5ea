/*
 * durable.c - the WASI host's resources in store snapshots (wasi.h
 * wasi_ctx_durable): every wasi:io, wasi:filesystem and wasi:cli
 * resource a guest can hold is described as plain data when its store
 * is snapshotted and made again, by the rules below, when a snapshot is
 * restored into a new store and ctx (the runtime calls back through
 * cm_store_set_host_resource_durable, run/instance.h).  The rep written
 * is never the ctx's table index: the runtime names each resource by
 * its handles, and the restored object gets whatever index is free.
 *
 * Contract (the rules; docs/architecture.md "Durability"):
 *  - stdin, stdout, stderr streams: re-created on the new ctx's stdio
 *    (hosteld: the service's configured sinks); the handle numbers are
 *    the snapshot's.  A stream's `closed` state is kept.
 *  - preopened directories (get-directories' descriptors) are matched
 *    by guest path (the n-th preopen of that guest path, n almost
 *    always 0) in the new ctx's configuration.  A snapshot that names a
 *    preopen the configuration no longer has is refused: restore fails
 *    with "the preopen "<path>" is not in this configuration" (an
 *    operator's change, seen at once rather than as errors later).
 *  - descriptors opened by open-at, streams on them (read-, write-,
 *    append-via-stream) and directory-entry streams are opened again
 *    from their preopen by the path they were opened by (the guest's
 *    open-at paths joined), with the descriptor's access (read, write),
 *    never creating, truncating or following a symlink the original
 *    did not follow; a stream keeps its offset.  One that cannot be
 *    opened (the file vanished, became a directory, the open fails)
 *    comes back *lost*: it holds no fd and every use fails with that
 *    errno (error-code no-entry for a vanished file; a stream's
 *    last-operation-failed); the restore itself succeeds.  So does one
 *    past WASI_MAX_OPEN_FILES (lost with insufficient-memory).
 *  - a directory-entry stream skips the entries it had returned (".",
 *    ".." aside); entries added or removed meanwhile shift what comes
 *    next: the position is a count, directories have no stable one.
 *  - pollables: a monotonic deadline keeps the time it had left (the
 *    monotonic clock restarts with the process), an overdue one is
 *    ready at once; "always ready" stays so; one on stdin polls the new
 *    stdin.
 *  - wasi:io/error: its errno.  terminal-input/-output: stateless.
 *  - nothing to save: arguments, environment and preopens come from the
 *    new ctx's configuration; random bytes from the OS, the insecure
 *    generator from the new ctx's seed; the clocks are the new ctx's.
 *  - refused ("not supported yet: ..."): a file object whose joined
 *    path passed WASI_ORIGIN_PATH_MAX, a pollable on another host fd,
 *    a description past CM_HOST_RESOURCE_DESC_MAX; resource types of
 *    the linker's deny fallback (the runtime refuses them: no
 *    registration).
 *  - A description is the same bytes for the same state (a restored
 *    store re-snapshots to the same bytes while its clock stands
 *    still).  Restoring checks every byte: a malformed description
 *    fails the restore, never aborts.
 *
 * Descriptions (little-endian; keys "wasi:<pkg>/<iface>@0.2#<name>":
 * 0.2.x, whatever patch version the host links, so a hostel with a
 * newer 0.2 keeps reading them):
 *   origin       u32 n, the preopen's guest path; u32 which (the n-th
 *                preopen of that path); u8 has path, then u32 n, path;
 *                u8 follow
 *   stream       u8 source (0 stdin, 1 stdout, 2 stderr, 3 empty,
 *                4 file, 5 append), u8 closed; file, append: u64
 *                offset, origin
 *   descriptor   u32 descriptor-flags, u8 directory, origin
 *   dir stream   u64 entries returned, origin
 *   pollable     u8 kind (0 ready, 1 monotonic: u64 ns left, 2 stdin)
 *   error        u32 errno
 *   terminal-*   nothing
 *
 * Allocations sized by a guest or a client (issue 18 audit): restoring
 * makes one object per description (the runtime bounds their number by
 * the handle tables, run/snapshot_async.c), each with a copy of its
 * path (WASI_ORIGIN_PATH_MAX); wasi_path_resolve's buffers (path.c).
 * Skipping a directory stream reads at most as many entries as the
 * directory holds.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasi/internal.h"

/* descriptor-flags bits (filesystem.c) */
#define DF_READ	 0x01u
#define DF_WRITE 0x02u

enum { SRC_STDIN, SRC_STDOUT, SRC_STDERR, SRC_EMPTY, SRC_FILE, SRC_APPEND };
enum { POLL_READY, POLL_MONO, POLL_STDIN };

/* ---- encoding ------------------------------------------------------------ */

typedef struct wbuf {
	uint8_t *p;
	size_t cap, len;
	bool over;
} wbuf;

static void put(wbuf *b, const void *p, size_t n)
{
	if (b->over || n > b->cap - b->len) {
		b->over = true;
		return;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_le(wbuf *b, uint64_t v, int n)
{
	uint8_t t[8];

	for (int i = 0; i < n; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	put(b, t, (size_t)n);
}

static void put_str(wbuf *b, const char *s)
{
	size_t n = strlen(s);

	if (n > UINT32_MAX) {
		b->over = true;
		return;
	}
	put_le(b, n, 4);
	put(b, s, n);
}

typedef struct rbuf {
	const uint8_t *p;
	size_t len, off;
	bool bad;
} rbuf;

static uint64_t get_le(rbuf *r, int n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)n > r->len - r->off) {
		r->bad = true;
		return 0;
	}
	for (int i = 0; i < n; i++)
		v |= (uint64_t)r->p[r->off + i] << (8 * i);
	r->off += (size_t)n;
	return v;
}

/* A string of at most max bytes with no NUL, copied; NULL: bad or OOM. */
static char *get_str(rbuf *r, size_t max, bool *oom)
{
	uint64_t n = get_le(r, 4);
	char *s;

	if (r->bad || n > max || n > r->len - r->off ||
	    memchr(r->p + r->off, 0, (size_t)n) != NULL) {
		r->bad = true;
		return NULL;
	}
	s = malloc((size_t)n + 1);
	if (s == NULL) {
		*oom = true;
		return NULL;
	}
	memcpy(s, r->p + r->off, (size_t)n);
	s[n] = '\0';
	r->off += (size_t)n;
	return s;
}

/* ---- origins ------------------------------------------------------------- */

static int put_origin(wasi_ctx *ctx, wbuf *b, const wasi_origin *o, char *why,
		      size_t whylen, const char *what)
{
	uint32_t which = 0;
	const char *g;

	if (!o->known || o->preopen >= ctx->npreopens) {
		snprintf(why, whylen,
			 "%s opened by a path of more than %u bytes", what,
			 WASI_ORIGIN_PATH_MAX);
		return -1;
	}
	g = ctx->preopens[o->preopen].guest;
	for (uint32_t i = 0; i < o->preopen; i++)
		which += !strcmp(ctx->preopens[i].guest, g);
	put_str(b, g);
	put_le(b, which, 4);
	put_le(b, o->path != NULL, 1);
	if (o->path != NULL)
		put_str(b, o->path);
	put_le(b, o->follow, 1);
	return 0;
}

/*
 * Read an origin and find its preopen in this ctx: 0; -1 with why
 * (malformed, or the preopen is not configured: the restore fails).
 */
static int get_origin(wasi_ctx *ctx, rbuf *r, wasi_origin *o, char *why,
		      size_t whylen)
{
	bool oom = false;
	char *g = get_str(r, SIZE_MAX, &oom), *path = NULL;
	uint32_t which = (uint32_t)get_le(r, 4);
	uint64_t has = get_le(r, 1), follow;
	uint32_t seen = 0;

	if (!r->bad && has == 1)
		path = get_str(r, WASI_ORIGIN_PATH_MAX, &oom);
	follow = get_le(r, 1);
	if (oom || r->bad || has > 1 || follow > 1 || g == NULL) {
		snprintf(why, whylen, "%s",
			 oom ? "out of memory" : "a malformed origin");
		free(g);
		free(path);
		return -1;
	}
	for (uint32_t i = 0; i < ctx->npreopens; i++)
		if (!strcmp(ctx->preopens[i].guest, g) && seen++ == which) {
			*o = (wasi_origin){.preopen = i,
					   .path = path,
					   .follow = follow,
					   .known = true};
			free(g);
			return 0;
		}
	snprintf(why, whylen, "the preopen \"%.64s\"%s is not in this "
			      "configuration",
		 g, which ? " (a later one of that name)" : "");
	free(g);
	free(path);
	return -1;
}

/*
 * Open what o names again: an fd, or -1 with the errno in *e.  A
 * directory (dir) opens read-only; a file with the access flags asks
 * (DF_READ, DF_WRITE), never created or truncated.  O_NONBLOCK while
 * opening: a FIFO put where a file was must not hang the restore.
 */
static int reopen(wasi_ctx *ctx, const wasi_origin *o, bool dir,
		  uint32_t access, int *e)
{
	int root = ctx->preopens[o->preopen].fd, dfd, fd, flags, fl;
	char name[NAME_MAX + 1];
	struct stat st;

	if (o->path == NULL) {
		/* a fresh open, not a dup: a directory stream on it must
		 * not share the preopen's offset (as read-directory opens) */
		fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		*e = fd < 0 ? errno : 0;
		return fd;
	}
	*e = wasi_path_resolve(root, o->path, o->follow, &dfd, name,
			       sizeof name);
	if (*e)
		return -1;
	flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
	if (dir)
		flags |= O_RDONLY | O_DIRECTORY;
	else if ((access & DF_WRITE) && (access & DF_READ))
		flags |= O_RDWR;
	else if (access & DF_WRITE)
		flags |= O_WRONLY;
	fd = openat(dfd, name, flags);
	*e = fd < 0 ? errno : 0;
	close(dfd);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st))
		*e = errno;
	else if ((bool)S_ISDIR(st.st_mode) != dir)
		*e = dir ? ENOTDIR : EISDIR;
	else if ((fl = fcntl(fd, F_GETFL)) < 0 ||
		 fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		*e = errno;
	else
		return fd;
	close(fd);
	return -1;
}

/* Origins for the WASI 0.3 streams' descriptions (internal.h). */
int wasi_origin_put(wasi_ctx *ctx, const wasi_origin *o, uint8_t *buf,
		    size_t cap, size_t *len)
{
	wbuf b = {.p = buf, .cap = cap};
	char why[8];

	if (put_origin(ctx, &b, o, why, sizeof why, "a stream") || b.over)
		return -1;
	*len = b.len;
	return 0;
}

int wasi_origin_get(wasi_ctx *ctx, const uint8_t *p, size_t n, wasi_origin *o,
		    size_t *used)
{
	rbuf r = {.p = p, .len = n};
	char why[8];

	if (get_origin(ctx, &r, o, why, sizeof why))
		return -1;
	*used = r.off;
	return 0;
}

int wasi_origin_reopen(wasi_ctx *ctx, const wasi_origin *o, bool dir,
		       uint32_t access, int *e)
{
	int fd;

	if (!wasi_file_room(ctx)) {
		*e = EMFILE;
		return -1;
	}
	fd = reopen(ctx, o, dir, access, e);
	if (fd >= 0)
		wasi_file_opened(ctx);
	else if (*e == 0)
		*e = EIO;
	return fd;
}

/* ---- saving -------------------------------------------------------------- */

static const char *const kind_name[WOBJ_NKINDS] = {
	[WOBJ_INPUT] = "a wasi:io input-stream",
	[WOBJ_OUTPUT] = "a wasi:io output-stream",
	[WOBJ_POLLABLE] = "a wasi:io pollable",
	[WOBJ_ERROR] = "a wasi:io error",
	[WOBJ_DESCRIPTOR] = "a wasi:filesystem descriptor",
	[WOBJ_DIRSTREAM] = "a wasi:filesystem directory-entry-stream",
	[WOBJ_TERM_IN] = "a wasi:cli terminal-input",
	[WOBJ_TERM_OUT] = "a wasi:cli terminal-output",
};

static int save_stream(wasi_ctx *ctx, const wasi_obj *o, wbuf *b, char *why,
		       size_t whylen)
{
	uint8_t src;

	switch (o->u.stream.src) {
	case WSTREAM_STDIN:
		src = SRC_STDIN;
		break;
	case WSTREAM_STDOUT:
		src = o->u.stream.which == 2 ? SRC_STDERR : SRC_STDOUT;
		break;
	case WSTREAM_FILE:
		src = SRC_FILE;
		break;
	case WSTREAM_APPEND:
		src = SRC_APPEND;
		break;
	default:
		src = SRC_EMPTY;
		break;
	}
	put_le(b, src, 1);
	put_le(b, o->u.stream.closed, 1);
	if (src != SRC_FILE && src != SRC_APPEND)
		return 0;
	put_le(b, o->u.stream.offset, 8);
	return put_origin(ctx, b, &o->origin, why, whylen,
			  kind_name[o->kind]);
}

static int save_pollable(wasi_ctx *ctx, const wasi_obj *o, wbuf *b, char *why,
			 size_t whylen)
{
	uint64_t now, d;

	switch (o->u.poll.kind) {
	case WPOLL_READY:
		put_le(b, POLL_READY, 1);
		return 0;
	case WPOLL_DEADLINE:
		now = ctx->clock.now(ctx->clock.env);
		d = o->u.poll.deadline;
		put_le(b, POLL_MONO, 1);
		put_le(b, d > now ? d - now : 0, 8);
		return 0;
	case WPOLL_FD:
		if (o->u.poll.fd == ctx->in_fd) {
			put_le(b, POLL_STDIN, 1);
			return 0;
		}
		break;
	}
	snprintf(why, whylen, "a wasi:io pollable on a host file descriptor");
	return -1;
}

static int save(wasi_ctx *ctx, wasi_obj_kind k, uint64_t rep, uint8_t *desc,
		size_t cap, size_t *len, char *why, size_t whylen)
{
	wbuf b = {.p = desc, .cap = cap};
	const wasi_obj *o;
	int rc = 0;

	if (rep == 0 || rep >= ctx->nobjs || ctx->objs[rep].kind != k) {
		snprintf(why, whylen, "%s handle of no object", kind_name[k]);
		return -1;
	}
	o = &ctx->objs[rep];
	switch (k) {
	case WOBJ_INPUT:
	case WOBJ_OUTPUT:
		rc = save_stream(ctx, o, &b, why, whylen);
		break;
	case WOBJ_POLLABLE:
		rc = save_pollable(ctx, o, &b, why, whylen);
		break;
	case WOBJ_ERROR:
		put_le(&b, (uint32_t)o->u.error.err, 4);
		break;
	case WOBJ_DESCRIPTOR:
		put_le(&b, o->u.desc.flags, 4);
		put_le(&b, o->u.desc.dir, 1);
		rc = put_origin(ctx, &b, &o->origin, why, whylen,
				kind_name[k]);
		break;
	case WOBJ_DIRSTREAM:
		put_le(&b, o->u.dirs.pos, 8);
		rc = put_origin(ctx, &b, &o->origin, why, whylen,
				kind_name[k]);
		break;
	default: /* terminals: nothing but the type */
		break;
	}
	if (rc == 0 && b.over) {
		snprintf(why, whylen, "%s described in more than %zu bytes",
			 kind_name[k], cap);
		rc = -1;
	}
	*len = b.len;
	return rc;
}

/* ---- restoring ----------------------------------------------------------- */

/* A new object of kind k at *rep; NULL out of memory. */
static wasi_obj *make(wasi_ctx *ctx, wasi_obj_kind k, uint32_t *rep)
{
	return wasi_obj_new(ctx, k, rep) ? NULL : &ctx->objs[*rep];
}

/*
 * Open origin o again into the new object at rep (its fd, or lost), and
 * give it o.  The object table may move: objects are found by rep.
 */
static void attach(wasi_ctx *ctx, uint32_t rep, wasi_origin *o, bool dir,
		   uint32_t access, int *fdp)
{
	int e = EMFILE, fd = -1;

	if (wasi_file_room(ctx))
		fd = reopen(ctx, o, dir, access, &e);
	if (fd >= 0)
		wasi_file_opened(ctx);
	else
		ctx->objs[rep].lost = e ? e : EIO;
	ctx->objs[rep].origin = *o;
	*fdp = fd;
}

static int restore_stream(wasi_ctx *ctx, wasi_obj_kind k, rbuf *r,
			  uint32_t *rep, char *why, size_t whylen)
{
	uint64_t src = get_le(r, 1), closed = get_le(r, 1), offset = 0;
	wasi_origin origin = {0};
	wasi_obj *o;
	int fd = -1;

	if (r->bad || src > SRC_APPEND || closed > 1 ||
	    (k == WOBJ_INPUT && (src == SRC_STDOUT || src == SRC_STDERR ||
				 src == SRC_APPEND)) ||
	    (k == WOBJ_OUTPUT && src == SRC_STDIN)) {
		snprintf(why, whylen, "a malformed stream");
		return -1;
	}
	if (src == SRC_FILE || src == SRC_APPEND) {
		offset = get_le(r, 8);
		if (get_origin(ctx, r, &origin, why, whylen))
			return -1;
		if (origin.path == NULL) {
			snprintf(why, whylen, "a stream on a directory");
			return -1;
		}
	}
	if ((o = make(ctx, k, rep)) == NULL) {
		free(origin.path);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	o->u.stream.closed = closed;
	o->u.stream.offset = offset;
	o->u.stream.fd = -1;
	switch (src) {
	case SRC_STDIN:
		o->u.stream.src = ctx->in_fd < 0 ? WSTREAM_EMPTY : WSTREAM_STDIN;
		o->u.stream.fd = ctx->in_fd;
		break;
	case SRC_STDOUT:
	case SRC_STDERR:
		o->u.stream.src = WSTREAM_STDOUT;
		o->u.stream.which = src == SRC_STDERR ? 2 : 1;
		break;
	case SRC_EMPTY:
		o->u.stream.src = WSTREAM_EMPTY;
		break;
	default:
		o->u.stream.src = src == SRC_FILE ? WSTREAM_FILE : WSTREAM_APPEND;
		attach(ctx, *rep, &origin, false,
		       k == WOBJ_INPUT ? DF_READ : DF_WRITE, &fd);
		ctx->objs[*rep].u.stream.fd = fd;
		break;
	}
	return 0;
}

static int restore_desc(wasi_ctx *ctx, rbuf *r, uint32_t *rep, char *why,
			size_t whylen)
{
	uint32_t flags = (uint32_t)get_le(r, 4);
	uint64_t dir = get_le(r, 1);
	wasi_origin origin;
	int fd;

	if (r->bad || dir > 1) {
		snprintf(why, whylen, "a malformed descriptor");
		return -1;
	}
	if (get_origin(ctx, r, &origin, why, whylen))
		return -1;
	if (origin.path == NULL && !dir) {
		snprintf(why, whylen, "a preopen that is not a directory");
		return -1;
	}
	if (make(ctx, WOBJ_DESCRIPTOR, rep) == NULL) {
		free(origin.path);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	ctx->objs[*rep].u.desc.flags = flags;
	ctx->objs[*rep].u.desc.dir = dir;
	attach(ctx, *rep, &origin, dir, flags, &fd);
	ctx->objs[*rep].u.desc.fd = fd;
	return 0;
}

static int restore_dirstream(wasi_ctx *ctx, rbuf *r, uint32_t *rep, char *why,
			     size_t whylen)
{
	uint64_t pos = get_le(r, 8);
	wasi_origin origin;
	wasi_obj *o;
	DIR *dir;
	int fd;

	if (r->bad) {
		snprintf(why, whylen, "a malformed directory-entry-stream");
		return -1;
	}
	if (get_origin(ctx, r, &origin, why, whylen))
		return -1;
	if (make(ctx, WOBJ_DIRSTREAM, rep) == NULL) {
		free(origin.path);
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	attach(ctx, *rep, &origin, true, DF_READ, &fd);
	o = &ctx->objs[*rep];
	o->u.dirs.pos = pos;
	if (fd < 0)
		return 0;
	dir = fdopendir(fd);
	if (dir == NULL) {
		o->lost = errno ? errno : EIO;
		close(fd);
		if (ctx->nfiles > 0)
			ctx->nfiles--;
		return 0;
	}
	o->u.dirs.dir = dir;
	/* the entries it had returned; fewer now: it is at its end */
	for (uint64_t i = 0; i < pos;) {
		struct dirent *e = readdir(dir);

		if (e == NULL)
			break;
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			i++;
	}
	return 0;
}

static int restore_pollable(wasi_ctx *ctx, rbuf *r, uint32_t *rep, char *why,
			    size_t whylen)
{
	uint64_t kind = get_le(r, 1), left = 0, now;
	wasi_obj *o;

	if (kind == POLL_MONO)
		left = get_le(r, 8);
	if (r->bad || kind > POLL_STDIN) {
		snprintf(why, whylen, "a malformed pollable");
		return -1;
	}
	if ((o = make(ctx, WOBJ_POLLABLE, rep)) == NULL) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	o->u.poll.fd = -1;
	o->u.poll.kind = WPOLL_READY;
	if (kind == POLL_MONO) {
		/* overdue (left 0): ready at once, and written so again */
		now = ctx->clock.now(ctx->clock.env);
		o->u.poll.kind = WPOLL_DEADLINE;
		o->u.poll.deadline =
			left > UINT64_MAX - now ? UINT64_MAX : now + left;
	} else if (kind == POLL_STDIN && ctx->in_fd >= 0) {
		/* a closed stdin is ready: reading it says so */
		o->u.poll.kind = WPOLL_FD;
		o->u.poll.fd = ctx->in_fd;
		o->u.poll.events = POLLIN;
	}
	return 0;
}

static int restore(wasi_ctx *ctx, wasi_obj_kind k, const uint8_t *desc,
		   size_t len, uint64_t *repp, char *why, size_t whylen)
{
	rbuf r = {.p = desc, .len = len};
	uint32_t rep = 0;
	uint64_t e;
	int rc = 0;

	switch (k) {
	case WOBJ_INPUT:
	case WOBJ_OUTPUT:
		rc = restore_stream(ctx, k, &r, &rep, why, whylen);
		break;
	case WOBJ_POLLABLE:
		rc = restore_pollable(ctx, &r, &rep, why, whylen);
		break;
	case WOBJ_ERROR:
		e = get_le(&r, 4);
		if (r.bad || e == 0 || e > 4095) {
			snprintf(why, whylen, "a malformed error");
			return -1;
		}
		if (make(ctx, k, &rep) == NULL) {
			snprintf(why, whylen, "out of memory");
			return -1;
		}
		ctx->objs[rep].u.error.err = (int)e;
		break;
	case WOBJ_DESCRIPTOR:
		rc = restore_desc(ctx, &r, &rep, why, whylen);
		break;
	case WOBJ_DIRSTREAM:
		rc = restore_dirstream(ctx, &r, &rep, why, whylen);
		break;
	default:
		if (make(ctx, k, &rep) == NULL) {
			snprintf(why, whylen, "out of memory");
			return -1;
		}
		break;
	}
	if (rc == 0 && r.off != r.len) {
		snprintf(why, whylen, "%s description with %zu bytes too many",
			 kind_name[k], r.len - r.off);
		wasi_obj_release(ctx, rep);
		return -1;
	}
	*repp = rep;
	return rc;
}

/* ---- registration -------------------------------------------------------- */

#define KIND_HOOKS(k)                                                         \
	static int save_##k(void *env, uint64_t rep, uint8_t *desc,           \
			    size_t cap, size_t *len, char *why,               \
			    size_t whylen)                                    \
	{                                                                     \
		return save(env, k, rep, desc, cap, len, why, whylen);        \
	}                                                                     \
	static int restore_##k(void *env, cm_store *s, const uint8_t *desc,   \
			       size_t len, uint64_t *rep, char *why,          \
			       size_t whylen)                                 \
	{                                                                     \
		(void)s;                                                      \
		return restore(env, k, desc, len, rep, why, whylen);          \
	}

KIND_HOOKS(WOBJ_INPUT)
KIND_HOOKS(WOBJ_OUTPUT)
KIND_HOOKS(WOBJ_POLLABLE)
KIND_HOOKS(WOBJ_ERROR)
KIND_HOOKS(WOBJ_DESCRIPTOR)
KIND_HOOKS(WOBJ_DIRSTREAM)
KIND_HOOKS(WOBJ_TERM_IN)
KIND_HOOKS(WOBJ_TERM_OUT)

static const struct {
	wasi_obj_kind kind;
	const char *key;
	int (*save)(void *, uint64_t, uint8_t *, size_t, size_t *, char *,
		    size_t);
	int (*restore)(void *, cm_store *, const uint8_t *, size_t, uint64_t *,
		       char *, size_t);
} hooks[] = {
#define HOOK(k, key) {k, key, save_##k, restore_##k}
	HOOK(WOBJ_INPUT, "wasi:io/streams@0.2#input-stream"),
	HOOK(WOBJ_OUTPUT, "wasi:io/streams@0.2#output-stream"),
	HOOK(WOBJ_POLLABLE, "wasi:io/poll@0.2#pollable"),
	HOOK(WOBJ_ERROR, "wasi:io/error@0.2#error"),
	HOOK(WOBJ_DESCRIPTOR, "wasi:filesystem/types@0.2#descriptor"),
	HOOK(WOBJ_DIRSTREAM,
	     "wasi:filesystem/types@0.2#directory-entry-stream"),
	HOOK(WOBJ_TERM_IN, "wasi:cli/terminal-input@0.2#terminal-input"),
	HOOK(WOBJ_TERM_OUT, "wasi:cli/terminal-output@0.2#terminal-output"),
#undef HOOK
};

int wasi_resources_durable(wasi_ctx *ctx, cm_store *s)
{
	for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
		const cm_host_resource_durable d = {.key = hooks[i].key,
						    .save = hooks[i].save,
						    .restore = hooks[i].restore,
						    .env = ctx};

		/* not linked (wasi_add_to_linker not called): no handles */
		if (ctx->rt[hooks[i].kind] == NULL)
			continue;
		if (cm_store_set_host_resource_durable(
			    s, ctx->rt[hooks[i].kind], &d))
			return -1;
	}
	/* WASI 0.3 descriptors are 0.2's objects under their own type */
	if (ctx->rt_desc3 != NULL) {
		const cm_host_resource_durable d = {
			.key = "wasi:filesystem/types@0.3#descriptor",
			.save = save_WOBJ_DESCRIPTOR,
			.restore = restore_WOBJ_DESCRIPTOR,
			.env = ctx};

		if (cm_store_set_host_resource_durable(s, ctx->rt_desc3, &d))
			return -1;
	}
	return 0;
}

int wasi_ctx_durable(wasi_ctx *ctx, cm_store *s)
{
	wasi_waits_durable(ctx, s);
	wasi_pipes_durable(ctx, s);
	return wasi_resources_durable(ctx, s);
}
