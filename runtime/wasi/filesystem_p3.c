/*
 * filesystem_p3.c - wasi:filesystem@0.3.0 (types, preopens) over the
 * same descriptors as 0.2 (filesystem.c), so the same confinement to
 * the preopens and the same rules hold.
 *
 * Contract:
 *  - A 0.3 descriptor is a wasi_obj of kind WOBJ_DESCRIPTOR whose
 *    handles carry the 0.3 resource type (ctx->rt_desc3); it is made,
 *    checked and released as a 0.2 one is, and written in snapshots by
 *    the same rule (durable.c, under its own key).
 *  - The methods 0.2 has too (stat, open-at, the *-at operations, ...;
 *    async functions in 0.3, answered at once) run 0.2's code: the
 *    arguments keep their layout (only the descriptors' type is
 *    swapped), and the result is carried over to the import's 0.3 type
 *    by label (to_p3): error-code and descriptor-type cases by name (a
 *    0.2 case 0.3 lacks, would-block or unknown, becomes `other(none)`),
 *    a datetime's u64 seconds into an instant's s64, a new descriptor's
 *    handle into the importer's type.
 *  - read-via-stream, write-via-stream and append-via-stream move bytes
 *    as the stdio streams do (cli_p3.c): from the notify, with pread(2)
 *    and pwrite(2) at the stream's own offset on a dup of the
 *    descriptor's fd; a descriptor that cannot stream (a directory, no
 *    read or write access, too many open files) gives a stream that is
 *    over at once and a future answering that error.
 *  - read-directory streams the directory's entries (not . or ..)
 *    with their descriptor-type (fstatat, not following symlinks):
 *    records holding strings, so they are written at the store's next
 *    scheduling step (cm_host_end_defer), where the reader's realloc
 *    may run, not from inside the guest's stream.read.
 *  - In snapshots, 0.3 descriptors are written as 0.2's (durable.c),
 *    and a file's or directory's stream by its origin, offset and
 *    entries made (cli_p3.c end_save): restored, it is opened again,
 *    and one that cannot be ends with that error at its next use.
 *
 * Allocations sized by a guest or a client (issue 18 audit): a bridge
 * per method, made once at link time; what 0.2's code allocates (its
 * contract); the file streams: one wasi_pipe and one fd each, within
 * WASI_MAX_OPEN_FILES.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasi/internal.h"

#define WASI_P3 "@0.3.0"
#define TYPES	"wasi:filesystem/types" WASI_P3
#define METHOD	"[method]descriptor."
/* the most parameters a bridged method has (set-times-at, link-at, ...) */
#define MAX_ARGS 6
/* descriptor-flags bits (filesystem.c) */
#define DF_READ	 0x01u
#define DF_WRITE 0x02u

struct wasi_p3_bridge {
	wasi_ctx *ctx;
	cm_host_fn fn;
};

/* 0.3 methods whose 0.2 namesakes do the work */
static const char *const BRIDGED[] = {
	"advise",
	"sync-data",
	"get-flags",
	"get-type",
	"set-size",
	"set-times",
	"sync",
	"create-directory-at",
	"stat",
	"stat-at",
	"set-times-at",
	"link-at",
	"open-at",
	"readlink-at",
	"remove-directory-at",
	"rename-at",
	"symlink-at",
	"unlink-file-at",
	"is-same-object",
	"metadata-hash",
	"metadata-hash-at",
};

#define NBRIDGED (sizeof BRIDGED / sizeof BRIDGED[0])

/* 0.2's descriptor-type enum, in its order */
static const char *const TYPE_LABELS[] = {
	"unknown", "block-device",  "character-device", "directory",
	"fifo",	   "symbolic-link", "regular-file",	"socket",
};

static int case_named(const cm_type *t, const char *label)
{
	uint32_t n = t->kind == CM_ENUM ? t->u.enm.n : t->u.variant.n;

	for (uint32_t i = 0; i < n; i++) {
		const cm_str *l = t->kind == CM_ENUM
					  ? &t->u.enm.labels[i]
					  : &t->u.variant.fields[i].label;

		if (l->len == strlen(label) && !memcmp(l->ptr, label, l->len))
			return (int)i;
	}
	return -1;
}

uint32_t wasi_p3_error_case(const cm_type *t, int e)
{
	int c;

	if (t == NULL || (t->kind != CM_ENUM && t->kind != CM_VARIANT))
		return 0;
	c = case_named(t, wasi_fs_errno_label(e));
	if (c < 0)
		c = case_named(t, "io");
	return c < 0 ? 0 : (uint32_t)c;
}

/*
 * A 0.2 enum case v (error-code or descriptor-type, told apart by the
 * 0.3 type t's cases) as t's case of the same label, else other(none).
 */
static int variant_of(cm_val *v, const cm_type *t)
{
	uint32_t i = v->u.variant.index;
	const char *label;
	int c;

	if (v->kind != CM_ENUM)
		return 0;
	if (case_named(t, "bad-descriptor") >= 0)
		label = wasi_fs_label_at(i); /* error-code */
	else if (case_named(t, "regular-file") >= 0 &&
		 i < sizeof TYPE_LABELS / sizeof TYPE_LABELS[0])
		label = TYPE_LABELS[i]; /* descriptor-type */
	else
		return -1;
	if (label == NULL)
		return -1;
	c = case_named(t, label);
	if (c >= 0) {
		*v = cm_val_case(CM_VARIANT, (uint32_t)c);
		return 0;
	}
	c = case_named(t, "other");
	if (c < 0 || cm_val_case_payload(v, CM_VARIANT, (uint32_t)c))
		return -1;
	*v->u.variant.payload = cm_val_case(CM_OPTION, 0);
	return 0;
}

/* Carry a 0.2 result v over to the 0.3 type t, in place; -1: cannot. */
static int to_p3(cm_val *v, const cm_type *t, unsigned depth)
{
	if (depth > 16)
		return -1;
	switch (t->kind) {
	case CM_RESULT:
	case CM_OPTION: {
		const cm_type *pt = t->kind == CM_OPTION ? t->u.option.elem
				    : v->u.variant.index ? t->u.result.err
							 : t->u.result.ok;

		if (v->u.variant.payload != NULL && pt != NULL)
			return to_p3(v->u.variant.payload, pt, depth + 1);
		return 0;
	}
	case CM_VARIANT:
		return variant_of(v, t);
	case CM_RECORD:
	case CM_TUPLE:
		for (uint32_t i = 0; i < v->u.list.n && i < cm_type_nfields(t);
		     i++)
			if (to_p3(&v->u.list.elems[i], cm_type_field(t, i),
				  depth + 1))
				return -1;
		return 0;
	case CM_LIST:
		for (uint32_t i = 0; v->u.list.bytes == NULL && i < v->u.list.n;
		     i++)
			if (to_p3(&v->u.list.elems[i], t->u.list.elem,
				  depth + 1))
				return -1;
		return 0;
	case CM_S64:
		if (v->kind == CM_U64) {
			uint64_t u = v->u.u;

			*v = cm_val_s64(u > INT64_MAX ? INT64_MAX : (int64_t)u);
		}
		return 0;
	case CM_OWN:
		/* the importer's type: the lowering resolves it */
		if (v->kind == CM_OWN)
			v->u.handle.rt = NULL;
		return 0;
	default:
		return 0;
	}
}

/* A 0.3 descriptor handle as 0.2's code reads it (else left alone). */
static cm_val as_p2(const wasi_ctx *ctx, const cm_val *h)
{
	cm_val a = *h;

	if ((a.kind == CM_OWN || a.kind == CM_BORROW) &&
	    a.u.handle.rt == ctx->rt_desc3)
		a.u.handle.rt = ctx->rt[WOBJ_DESCRIPTOR];
	return a;
}

static int bridge(cm_host_call *call, void *env, const cm_val *args,
		  uint32_t nargs, cm_val *res, uint32_t nres)
{
	const struct wasi_p3_bridge *b = env;
	const cm_type *rt = cm_host_call_type(call)->u.func.result;
	cm_val a[MAX_ARGS];

	if (nargs > MAX_ARGS)
		return cm_host_call_trap(call, "wasi: too many arguments");
	/* shallow copies: the runtime still owns what they hold */
	for (uint32_t i = 0; i < nargs; i++)
		a[i] = as_p2(b->ctx, &args[i]);
	if (b->fn(call, b->ctx, a, nargs, res, nres))
		return -1;
	if (nres > 0 && rt != NULL && to_p3(&res[0], rt, 0)) {
		cm_val_free(&res[0]);
		memset(&res[0], 0, sizeof res[0]);
		return cm_host_call_trap(call,
					 "wasi: a result its 0.3 type cannot "
					 "hold");
	}
	return 0;
}

static int get_directories(cm_host_call *call, void *env, const cm_val *args,
			   uint32_t nargs, cm_val *res, uint32_t nres)
{
	const cm_type *rt = cm_host_call_type(call)->u.func.result;

	if (wasi_fs_get_directories(call, env, args, nargs, res, nres))
		return -1;
	return rt != NULL ? to_p3(&res[0], rt, 0) : 0;
}

/*
 * The descriptor a stream method is called on, and why it cannot
 * stream (0: it can; then *fd is a counted dup of its fd).
 */
static int stream_fd(cm_host_call *call, wasi_ctx *ctx, const cm_val *h,
		     unsigned need, int *fd, const wasi_origin **origin)
{
	cm_val a = as_p2(ctx, h);
	wasi_obj *d = wasi_obj_get(ctx, &a, WOBJ_DESCRIPTOR);

	*fd = -1;
	*origin = NULL;
	if (d == NULL)
		return wasi_bad_handle(call, "descriptor"), -1;
	*origin = &d->origin;
	if (d->lost)
		return d->lost;
	if (d->u.desc.dir)
		return EISDIR;
	if (!(d->u.desc.flags & need))
		return EBADF;
	if (!wasi_file_room(ctx))
		return EMFILE;
	*fd = fcntl(d->u.desc.fd, F_DUPFD_CLOEXEC, 0);
	if (*fd < 0)
		return errno;
	wasi_file_opened(ctx);
	return 0;
}

/* read-via-stream: func(offset) -> tuple<stream<u8>, future<result>> */
static int read_via_stream(cm_host_call *call, void *env, const cm_val *args,
			   uint32_t nargs, cm_val *res, uint32_t nres)
{
	const wasi_origin *o;
	int fd, e = stream_fd(call, env, &args[0], DF_READ, &fd, &o);

	if (e < 0)
		return -1;
	return wasi_p3_read_stream(call, env, res, PIPE_FILE_IN, fd, o,
				   args[1].u.u, e);
}

/* write-via-stream: func(data, offset) -> future<result<_, error-code>> */
static int write_via_stream(cm_host_call *call, void *env, const cm_val *args,
			    uint32_t nargs, cm_val *res, uint32_t nres)
{
	const wasi_origin *o;
	int fd, e = stream_fd(call, env, &args[0], DF_WRITE, &fd, &o);

	if (e < 0)
		return -1;
	return wasi_p3_write_stream(call, env, &args[1], res, PIPE_FILE_OUT,
				    fd, o, args[2].u.u, false, e);
}

/* append-via-stream: func(data) -> future<result<_, error-code>> */
static int append_via_stream(cm_host_call *call, void *env,
			     const cm_val *args, uint32_t nargs, cm_val *res,
			     uint32_t nres)
{
	const wasi_origin *o;
	int fd, e = stream_fd(call, env, &args[0], DF_WRITE, &fd, &o);

	if (e < 0)
		return -1;
	return wasi_p3_write_stream(call, env, &args[1], res, PIPE_FILE_OUT,
				    fd, o, 0, true, e);
}

/* 0.2's descriptor-type case (TYPE_LABELS) of a file mode */
static uint32_t type_case(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFBLK:
		return 1;
	case S_IFCHR:
		return 2;
	case S_IFDIR:
		return 3;
	case S_IFIFO:
		return 4;
	case S_IFLNK:
		return 5;
	case S_IFREG:
		return 6;
	case S_IFSOCK:
		return 7;
	default:
		return 0;
	}
}

/*
 * The next entry of dir (not . or ..) as a directory-entry of type t:
 * its descriptor-type (fstatat, not following a symlink) and its name;
 * a name that is not UTF-8 is illegal-byte-sequence.
 */
int wasi_p3_dir_entry(const cm_type *t, DIR *dir, cm_val *out)
{
	struct dirent *e;
	struct stat st;
	uint32_t tc = 0;
	int rc;

	do {
		errno = 0;
		e = readdir(dir);
	} while (e != NULL &&
		 (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")));
	if (e == NULL)
		return errno ? -errno : 0;
	if (t->kind != CM_RECORD || cm_type_nfields(t) != 2)
		return -EINVAL;
	if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		tc = type_case(st.st_mode);
	if (cm_val_seq(out, CM_RECORD, 2))
		return -ENOMEM;
	out->u.list.elems[0] = cm_val_case(CM_ENUM, tc);
	rc = cm_val_string(&out->u.list.elems[1], e->d_name,
			   strlen(e->d_name));
	if (rc == 0 && variant_of(&out->u.list.elems[0], cm_type_field(t, 0)))
		rc = -1;
	if (rc) {
		cm_val_free(out);
		return rc == -2 ? -EILSEQ : -ENOMEM;
	}
	return 1;
}

/* read-directory: func() -> tuple<stream<directory-entry>, future<..>> */
static int read_directory(cm_host_call *call, void *env, const cm_val *args,
			  uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;
	cm_val a = as_p2(ctx, &args[0]);
	wasi_obj *d = wasi_obj_get(ctx, &a, WOBJ_DESCRIPTOR);
	DIR *dir;
	int fd, e = 0;

	if (d == NULL)
		return wasi_bad_handle(call, "descriptor");
	if (d->lost)
		e = d->lost;
	else if (!d->u.desc.dir)
		e = ENOTDIR;
	else if (!wasi_file_room(ctx))
		e = EMFILE;
	if (e)
		return wasi_p3_read_stream(call, ctx, res, PIPE_DIR, -1, NULL,
					   0, e);
	/* a fresh open: the entry stream must not share an offset */
	fd = openat(d->u.desc.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (dir == NULL) {
		e = errno;
		if (fd >= 0)
			close(fd);
		return wasi_p3_read_stream(call, ctx, res, PIPE_DIR, -1, NULL,
					   0, e);
	}
	wasi_file_opened(ctx);
	return wasi_p3_dir_stream(call, ctx, res, dir, &d->origin,
				  wasi_p3_dir_entry);
}

int wasi_link_filesystem_p3(wasi_ctx *ctx, cm_linker *l)
{
	static const struct {
		const char *name;
		cm_host_fn fn;
	} streams[] = {
		{METHOD "read-via-stream", read_via_stream},
		{METHOD "write-via-stream", write_via_stream},
		{METHOD "append-via-stream", append_via_stream},
		{METHOD "read-directory", read_directory},
	};
	char name[64];

	ctx->rt_desc3 = cm_linker_define_resource(l, TYPES, "descriptor",
						  wasi_obj_dtor, ctx);
	if (ctx->rt_desc3 == NULL)
		return -1;
	free(ctx->bridges);
	ctx->bridges = calloc(NBRIDGED, sizeof *ctx->bridges);
	if (ctx->bridges == NULL)
		return -1;
	for (size_t i = 0; i < NBRIDGED; i++) {
		ctx->bridges[i].ctx = ctx;
		ctx->bridges[i].fn = wasi_fs_p2_method(BRIDGED[i]);
		snprintf(name, sizeof name, METHOD "%s", BRIDGED[i]);
		if (ctx->bridges[i].fn == NULL ||
		    cm_linker_define_func(l, TYPES, name, bridge,
					  &ctx->bridges[i]))
			return -1;
	}
	for (size_t i = 0; i < sizeof streams / sizeof streams[0]; i++)
		if (cm_linker_define_func(l, TYPES, streams[i].name,
					  streams[i].fn, ctx))
			return -1;
	if (cm_linker_define_func(l, "wasi:filesystem/preopens" WASI_P3,
				  "get-directories", get_directories, ctx))
		return -1;
	return 0;
}
