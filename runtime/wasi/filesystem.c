/*
 * filesystem.c - wasi:filesystem 0.2 (types, preopens) over the
 * preopened directories of the ctx.
 *
 * Contract: every path argument is resolved with wasi_path_resolve from
 * the descriptor it is relative to, and the last component is used with
 * O_NOFOLLOW / AT_SYMLINK_NOFOLLOW, so no operation reaches outside a
 * preopen (wasi.h).  A descriptor's flags bound what descriptors opened
 * from it may do: write access and directory mutation need `write` /
 * `mutate-directory` on the parent (read-only otherwise).  OS errors map
 * to error-code cases (wasi_fs_errno_code); the error resource of a
 * stream failure maps back through filesystem-error-code.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - read_: the buffer and its list<u8>, FS_READ_MAX (1 MiB), a short
 *    read as the interface allows.
 *  - write_: none: the list the guest passed is written from its bytes
 *    (byte form, val.h; lifted, so the store's budget bounds it).
 *  - open_at, via_stream (read-, write-, append-via-stream),
 *    read_directory: an object holding an OS fd, WASI_MAX_OPEN_FILES
 *    (1024) per ctx, then error-code insufficient-memory.
 *  - get_directories: a list of npreopens (the embedder's) and a
 *    descriptor each, WASI_MAX_OPEN_FILES, trap "wasi: get-directories:
 *    too many open files (limit N)".
 *  - readlink_at: PATH_MAX on the stack; read_directory_entry: a name of
 *    at most NAME_MAX; paths: wasi_path_resolve's MAX_PATH (path.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasi/internal.h"

/*
 * descriptor.read returns at most this many bytes, which the interface
 * allows (a short read is not end of file): the host holds them twice,
 * as bytes and as a list<u8> (byte form, 1 byte each), so one call
 * costs about 2 MiB at most, whatever length the guest asks for.
 */
#define FS_READ_MAX (1u << 20)

/* descriptor-flags bits */
#define DF_READ		    0x01u
#define DF_WRITE	    0x02u
#define DF_MUTATE_DIRECTORY 0x20u
/* open-flags bits */
#define OF_CREATE    0x1u
#define OF_DIRECTORY 0x2u
#define OF_EXCLUSIVE 0x4u
#define OF_TRUNCATE  0x8u

enum {
	DT_UNKNOWN_ = 0,
	DT_BLOCK_,
	DT_CHAR_,
	DT_DIR_,
	DT_FIFO_,
	DT_LINK_,
	DT_REG_,
	DT_SOCK_
};

uint32_t wasi_fs_errno_code(int e)
{
	switch (e) {
	case EACCES:
		return 0;
	case EAGAIN:
		return 1;
	case EALREADY:
		return 2;
	case EBADF:
		return 3;
	case EBUSY:
		return 4;
	case EDEADLK:
		return 5;
	case EDQUOT:
		return 6;
	case EEXIST:
		return 7;
	case EFBIG:
		return 8;
	case EILSEQ:
		return 9;
	case EINPROGRESS:
		return 10;
	case EINTR:
		return 11;
	case EINVAL:
		return 12;
	case EIO:
		return 13;
	case EISDIR:
		return 14;
	case ELOOP:
		return 15;
	case EMLINK:
		return 16;
	case EMSGSIZE:
		return 17;
	case ENAMETOOLONG:
		return 18;
	case ENODEV:
		return 19;
	case ENOENT:
		return 20;
	case ENOLCK:
		return 21;
	case ENOMEM:
	case EMFILE: /* 0.2 has no too-many-open-files: a host resource */
	case ENFILE: /* ran out, the nearest case */
		return 22;
	case ENOSPC:
		return 23;
	case ENOTDIR:
		return 24;
	case ENOTEMPTY:
		return 25;
	case ENOTRECOVERABLE:
		return 26;
	case ENOTSUP:
		return 27;
	case ENOTTY:
		return 28;
	case ENXIO:
		return 29;
	case EOVERFLOW:
		return 30;
	case EPERM:
		return 31;
	case EPIPE:
		return 32;
	case EROFS:
		return 33;
	case ESPIPE:
		return 34;
	case ETXTBSY:
		return 35;
	case EXDEV:
		return 36;
	default:
		return 13; /* io */
	}
}

/* error-code's labels in 0.2's order (wasi_fs_errno_code's numbers) */
static const char *const ERROR_LABELS[] = {
	"access",	     "would-block",	  "already",
	"bad-descriptor",    "busy",		  "deadlock",
	"quota",	     "exist",		  "file-too-large",
	"illegal-byte-sequence", "in-progress",	  "interrupted",
	"invalid",	     "io",		  "is-directory",
	"loop",		     "too-many-links",	  "message-size",
	"name-too-long",     "no-device",	  "no-entry",
	"no-lock",	     "insufficient-memory", "insufficient-space",
	"not-directory",     "not-empty",	  "not-recoverable",
	"unsupported",	     "no-tty",		  "no-such-device",
	"overflow",	     "not-permitted",	  "pipe",
	"read-only",	     "invalid-seek",	  "text-file-busy",
	"cross-device",
};

const char *wasi_fs_errno_label(int e)
{
	return ERROR_LABELS[wasi_fs_errno_code(e)];
}

const char *wasi_fs_label_at(uint32_t code)
{
	return code < sizeof ERROR_LABELS / sizeof ERROR_LABELS[0]
		       ? ERROR_LABELS[code]
		       : NULL;
}

static int fs_err(cm_host_call *call, cm_val *res, int e)
{
	cm_val *p;

	if (wasi_result(res, false, &p))
		return wasi_oom(call);
	*p = cm_val_case(CM_ENUM, wasi_fs_errno_code(e));
	return 0;
}

static int fs_unit(cm_host_call *call, cm_val *res, int rc)
{
	if (rc)
		return fs_err(call, res, errno);
	*res = wasi_result_unit(true);
	return 0;
}

static wasi_obj *desc(cm_host_call *call, wasi_ctx *ctx, const cm_val *h)
{
	wasi_obj *o = wasi_obj_get(ctx, h, WOBJ_DESCRIPTOR);

	if (o == NULL)
		wasi_bad_handle(call, "descriptor");
	return o;
}

static uint32_t type_of(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFBLK:
		return DT_BLOCK_;
	case S_IFCHR:
		return DT_CHAR_;
	case S_IFDIR:
		return DT_DIR_;
	case S_IFIFO:
		return DT_FIFO_;
	case S_IFLNK:
		return DT_LINK_;
	case S_IFREG:
		return DT_REG_;
	case S_IFSOCK:
		return DT_SOCK_;
	default:
		return DT_UNKNOWN_;
	}
}

/*
 * Resolve path (a string value) under descriptor d: 0 and the parent fd
 * (to close) and last name, or an errno.  `mutate` demands
 * mutate-directory on d.
 */
static int resolve(const wasi_obj *d, const cm_val *path, bool follow,
		   bool mutate, int *dirfd, char *name)
{
	if (d->lost)
		return d->lost;
	if (!d->u.desc.dir)
		return ENOTDIR;
	if (mutate && !(d->u.desc.flags & DF_MUTATE_DIRECTORY))
		return EROFS;
	if (strlen((const char *)path->u.str.ptr) != path->u.str.len)
		return EINVAL;
	return wasi_path_resolve(d->u.desc.fd, (const char *)path->u.str.ptr,
				 follow, dirfd, name, NAME_MAX + 1);
}

static bool follow_flag(const cm_val *pf)
{
	return pf->u.flags & 1u;
}

/* ---- streams from descriptors ------------------------------------------ */

static int via_stream(cm_host_call *call, wasi_ctx *ctx, const cm_val *args,
		      cm_val *res, wasi_obj_kind k, wasi_stream_src src,
		      uint64_t offset)
{
	wasi_obj *d = desc(call, ctx, &args[0]), *s;
	wasi_origin origin;
	cm_val *p;
	int fd;

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	if (d->u.desc.dir)
		return fs_err(call, res, EISDIR);
	if (!(d->u.desc.flags & (k == WOBJ_INPUT ? DF_READ : DF_WRITE)))
		return fs_err(call, res, EBADF);
	if (!wasi_file_room(ctx))
		return fs_err(call, res, EMFILE);
	/* a snapshot reopens the stream by its descriptor's origin */
	if (wasi_origin_copy(&origin, &d->origin))
		return wasi_oom(call);
	fd = fcntl(d->u.desc.fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		free(origin.path);
		return fs_err(call, res, errno);
	}
	if (wasi_result(res, true, &p) || wasi_new_own(ctx, k, p, &s)) {
		free(origin.path);
		close(fd);
		return wasi_oom(call);
	}
	s->origin = origin;
	s->u.stream.src = src;
	s->u.stream.fd = fd;
	s->u.stream.offset = offset;
	wasi_file_opened(ctx);
	return 0;
}

static int read_via_stream(cm_host_call *call, void *env, const cm_val *args,
			   uint32_t nargs, cm_val *res, uint32_t nres)
{
	return via_stream(call, env, args, res, WOBJ_INPUT, WSTREAM_FILE,
			  args[1].u.u);
}

static int write_via_stream(cm_host_call *call, void *env, const cm_val *args,
			    uint32_t nargs, cm_val *res, uint32_t nres)
{
	return via_stream(call, env, args, res, WOBJ_OUTPUT, WSTREAM_FILE,
			  args[1].u.u);
}

static int append_via_stream(cm_host_call *call, void *env, const cm_val *args,
			     uint32_t nargs, cm_val *res, uint32_t nres)
{
	return via_stream(call, env, args, res, WOBJ_OUTPUT, WSTREAM_APPEND, 0);
}

/* ---- plain descriptor operations ----------------------------------------
 */

static int advise(cm_host_call *call, void *env, const cm_val *args,
		  uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	return fs_unit(call, res, 0);
}

static int sync_(cm_host_call *call, void *env, const cm_val *args,
		 uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	return fs_unit(call, res, fsync(d->u.desc.fd));
}

static int get_flags(cm_host_call *call, void *env, const cm_val *args,
		     uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	cm_val *p;

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	if (wasi_result(res, true, &p))
		return wasi_oom(call);
	*p = cm_val_flags(d->u.desc.flags);
	return 0;
}

static int get_type(cm_host_call *call, void *env, const cm_val *args,
		    uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	struct stat st;
	cm_val *p;

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	if (fstat(d->u.desc.fd, &st))
		return fs_err(call, res, errno);
	if (wasi_result(res, true, &p))
		return wasi_oom(call);
	*p = cm_val_case(CM_ENUM, type_of(st.st_mode));
	return 0;
}

static int set_size(cm_host_call *call, void *env, const cm_val *args,
		    uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	if (args[1].u.u > INT64_MAX)
		return fs_err(call, res, EFBIG);
	return fs_unit(call, res, ftruncate(d->u.desc.fd, (off_t)args[1].u.u));
}

/* new-timestamp -> timespec (UTIME_OMIT / UTIME_NOW / a time). */
static void timestamp(const cm_val *v, struct timespec *ts)
{
	ts->tv_sec = 0;
	if (v->u.variant.index == 0) {
		ts->tv_nsec = UTIME_OMIT;
	} else if (v->u.variant.index == 1) {
		ts->tv_nsec = UTIME_NOW;
	} else {
		const cm_val *dt = v->u.variant.payload;

		ts->tv_sec = (time_t)dt->u.list.elems[0].u.u;
		ts->tv_nsec = (long)dt->u.list.elems[1].u.u;
		if (ts->tv_nsec >= 1000000000)
			ts->tv_nsec = 999999999;
	}
}

static int set_times(cm_host_call *call, void *env, const cm_val *args,
		     uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	struct timespec ts[2];

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	timestamp(&args[1], &ts[0]);
	timestamp(&args[2], &ts[1]);
	return fs_unit(call, res, futimens(d->u.desc.fd, ts));
}

static int read_(cm_host_call *call, void *env, const cm_val *args,
		 uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	uint64_t len = args[1].u.u;
	uint8_t *buf;
	cm_val *p;
	ssize_t n;

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	if (len > FS_READ_MAX)
		len = FS_READ_MAX;
	buf = malloc(len ? len : 1);
	if (buf == NULL)
		return wasi_oom(call);
	n = pread(d->u.desc.fd, buf, len, (off_t)args[2].u.u);
	if (n < 0) {
		free(buf);
		return fs_err(call, res, errno);
	}
	if (wasi_result(res, true, &p) || cm_val_seq(p, CM_TUPLE, 2) ||
	    wasi_bytes(&p->u.list.elems[0], buf, (size_t)n)) {
		free(buf);
		return wasi_oom(call);
	}
	p->u.list.elems[1] = cm_val_bool(n == 0 && len > 0);
	free(buf);
	return 0;
}

static int write_(cm_host_call *call, void *env, const cm_val *args,
		  uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	const cm_vals *v = &args[1].u.list;
	const uint8_t *buf;
	cm_val *p;
	ssize_t n;

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	buf = wasi_list_bytes(call, &args[1], "descriptor.write");
	if (buf == NULL)
		return -1;
	n = pwrite(d->u.desc.fd, buf, v->n, (off_t)args[2].u.u);
	if (n < 0)
		return fs_err(call, res, errno);
	if (wasi_result(res, true, &p))
		return wasi_oom(call);
	*p = cm_val_u64((uint64_t)n);
	return 0;
}

static int read_directory(cm_host_call *call, void *env, const cm_val *args,
			  uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]), *s;
	wasi_origin origin;
	cm_val *p;
	DIR *dir;
	int fd;

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	if (!d->u.desc.dir)
		return fs_err(call, res, ENOTDIR);
	if (!wasi_file_room(env))
		return fs_err(call, res, EMFILE);
	/* a snapshot reopens the stream by its directory's origin */
	if (wasi_origin_copy(&origin, &d->origin))
		return wasi_oom(call);
	/* a fresh open: the entry stream must not share an offset */
	fd = openat(d->u.desc.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		free(origin.path);
		return fs_err(call, res, errno);
	}
	dir = fdopendir(fd);
	if (dir == NULL) {
		free(origin.path);
		close(fd);
		return fs_err(call, res, errno);
	}
	if (wasi_result(res, true, &p) ||
	    wasi_new_own(env, WOBJ_DIRSTREAM, p, &s)) {
		free(origin.path);
		closedir(dir);
		return wasi_oom(call);
	}
	s->origin = origin;
	s->u.dirs.dir = dir;
	wasi_file_opened(env);
	return 0;
}

static int read_directory_entry(cm_host_call *call, void *env,
				const cm_val *args, uint32_t nargs, cm_val *res,
				uint32_t nres)
{
	wasi_obj *s = wasi_obj_get(env, &args[0], WOBJ_DIRSTREAM);
	struct dirent *e;
	struct stat st;
	cm_val *p, *ent;
	uint32_t t;

	if (s == NULL)
		return wasi_bad_handle(call, "directory-entry-stream");
	if (s->lost)
		return fs_err(call, res, s->lost);
	do {
		errno = 0;
		e = readdir(s->u.dirs.dir);
	} while (e != NULL &&
		 (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")));
	if (e == NULL && errno)
		return fs_err(call, res, errno);
	if (wasi_result(res, true, &p))
		return wasi_oom(call);
	if (e == NULL) {
		*p = cm_val_case(CM_OPTION, 0);
		return 0;
	}
	/* where a restored stream skips to (durable.c) */
	s->u.dirs.pos++;
	t = DT_UNKNOWN_;
	if (fstatat(dirfd(s->u.dirs.dir), e->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0)
		t = type_of(st.st_mode);
	if (cm_val_case_payload(p, CM_OPTION, 1))
		return wasi_oom(call);
	ent = p->u.variant.payload;
	if (cm_val_seq(ent, CM_RECORD, 2))
		return wasi_oom(call);
	ent->u.list.elems[0] = cm_val_case(CM_ENUM, t);
	if (cm_val_string(&ent->u.list.elems[1], e->d_name,
			  strlen(e->d_name)) == -1)
		return wasi_oom(call);
	return 0;
}

static int datetime(cm_val *v, const struct timespec *ts)
{
	cm_val *dt;

	if (cm_val_case_payload(v, CM_OPTION, 1))
		return -1;
	dt = v->u.variant.payload;
	if (cm_val_seq(dt, CM_RECORD, 2))
		return -1;
	dt->u.list.elems[0] = cm_val_u64((uint64_t)ts->tv_sec);
	dt->u.list.elems[1] = cm_val_u32((uint32_t)ts->tv_nsec);
	return 0;
}

static int stat_result(cm_host_call *call, cm_val *res, const struct stat *st)
{
	cm_val *p, *f;

	if (wasi_result(res, true, &p) || cm_val_seq(p, CM_RECORD, 6))
		return wasi_oom(call);
	f = p->u.list.elems;
	f[0] = cm_val_case(CM_ENUM, type_of(st->st_mode));
	f[1] = cm_val_u64((uint64_t)st->st_nlink);
	f[2] = cm_val_u64((uint64_t)st->st_size);
	if (datetime(&f[3], &st->st_atim) || datetime(&f[4], &st->st_mtim) ||
	    datetime(&f[5], &st->st_ctim))
		return wasi_oom(call);
	return 0;
}

static int stat_(cm_host_call *call, void *env, const cm_val *args,
		 uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	struct stat st;

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	if (fstat(d->u.desc.fd, &st))
		return fs_err(call, res, errno);
	return stat_result(call, res, &st);
}

static int stat_at(cm_host_call *call, void *env, const cm_val *args,
		   uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	char name[NAME_MAX + 1];
	struct stat st;
	int dfd, e;

	if (d == NULL)
		return -1;
	e = resolve(d, &args[2], follow_flag(&args[1]), false, &dfd, name);
	if (e)
		return fs_err(call, res, e);
	e = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) ? errno : 0;
	close(dfd);
	if (e)
		return fs_err(call, res, e);
	return stat_result(call, res, &st);
}

static int set_times_at(cm_host_call *call, void *env, const cm_val *args,
			uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	char name[NAME_MAX + 1];
	struct timespec ts[2];
	int dfd, e;

	if (d == NULL)
		return -1;
	e = resolve(d, &args[2], follow_flag(&args[1]), true, &dfd, name);
	if (e)
		return fs_err(call, res, e);
	timestamp(&args[3], &ts[0]);
	timestamp(&args[4], &ts[1]);
	e = utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW) ? errno : 0;
	close(dfd);
	return e ? fs_err(call, res, e) : fs_unit(call, res, 0);
}

/* One path under d (no symlink following): op(dirfd, name). */
static int path_op(cm_host_call *call, wasi_ctx *ctx, const cm_val *args,
		   cm_val *res, int (*op)(int, const char *))
{
	wasi_obj *d = desc(call, ctx, &args[0]);
	char name[NAME_MAX + 1];
	int dfd, e;

	if (d == NULL)
		return -1;
	e = resolve(d, &args[1], false, true, &dfd, name);
	if (e)
		return fs_err(call, res, e);
	e = op(dfd, name) ? errno : 0;
	close(dfd);
	return e ? fs_err(call, res, e) : fs_unit(call, res, 0);
}

static int op_mkdir(int dfd, const char *name)
{
	return mkdirat(dfd, name, 0777);
}

static int op_rmdir(int dfd, const char *name)
{
	return unlinkat(dfd, name, AT_REMOVEDIR);
}

static int op_unlink(int dfd, const char *name)
{
	return unlinkat(dfd, name, 0);
}

static int create_directory_at(cm_host_call *call, void *env,
			       const cm_val *args, uint32_t nargs, cm_val *res,
			       uint32_t nres)
{
	return path_op(call, env, args, res, op_mkdir);
}

static int remove_directory_at(cm_host_call *call, void *env,
			       const cm_val *args, uint32_t nargs, cm_val *res,
			       uint32_t nres)
{
	return path_op(call, env, args, res, op_rmdir);
}

static int unlink_file_at(cm_host_call *call, void *env, const cm_val *args,
			  uint32_t nargs, cm_val *res, uint32_t nres)
{
	return path_op(call, env, args, res, op_unlink);
}

/* Two paths: (d1, p1) and (d2, p2). */
static int two_paths(cm_host_call *call, wasi_ctx *ctx, const cm_val *d1v,
		     const cm_val *p1, bool follow1, const cm_val *d2v,
		     const cm_val *p2, cm_val *res, bool link)
{
	wasi_obj *d1 = desc(call, ctx, d1v), *d2 = desc(call, ctx, d2v);
	char n1[NAME_MAX + 1], n2[NAME_MAX + 1];
	int f1, f2, e;

	if (d1 == NULL || d2 == NULL)
		return -1;
	e = resolve(d1, p1, follow1, !link, &f1, n1);
	if (e)
		return fs_err(call, res, e);
	e = resolve(d2, p2, false, true, &f2, n2);
	if (e) {
		close(f1);
		return fs_err(call, res, e);
	}
	if (link)
		e = linkat(f1, n1, f2, n2, 0) ? errno : 0;
	else
		e = renameat(f1, n1, f2, n2) ? errno : 0;
	close(f1);
	close(f2);
	return e ? fs_err(call, res, e) : fs_unit(call, res, 0);
}

static int link_at(cm_host_call *call, void *env, const cm_val *args,
		   uint32_t nargs, cm_val *res, uint32_t nres)
{
	return two_paths(call, env, &args[0], &args[2], follow_flag(&args[1]),
			 &args[3], &args[4], res, true);
}

static int rename_at(cm_host_call *call, void *env, const cm_val *args,
		     uint32_t nargs, cm_val *res, uint32_t nres)
{
	return two_paths(call, env, &args[0], &args[1], false, &args[2],
			 &args[3], res, false);
}

static int symlink_at(cm_host_call *call, void *env, const cm_val *args,
		      uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	const char *target = (const char *)args[1].u.str.ptr;
	char name[NAME_MAX + 1];
	int dfd, e;

	if (d == NULL)
		return -1;
	/* an absolute target could never resolve inside the sandbox */
	if (target[0] == '/' || strlen(target) != args[1].u.str.len)
		return fs_err(call, res, EPERM);
	e = resolve(d, &args[2], false, true, &dfd, name);
	if (e)
		return fs_err(call, res, e);
	e = symlinkat(target, dfd, name) ? errno : 0;
	close(dfd);
	return e ? fs_err(call, res, e) : fs_unit(call, res, 0);
}

static int readlink_at(cm_host_call *call, void *env, const cm_val *args,
		       uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	char name[NAME_MAX + 1], buf[PATH_MAX];
	cm_val *p;
	ssize_t n;
	int dfd, e;

	if (d == NULL)
		return -1;
	e = resolve(d, &args[1], false, false, &dfd, name);
	if (e)
		return fs_err(call, res, e);
	n = readlinkat(dfd, name, buf, sizeof buf);
	e = n < 0 ? errno : 0;
	close(dfd);
	if (e)
		return fs_err(call, res, e);
	if (wasi_result(res, true, &p))
		return wasi_oom(call);
	if (cm_val_string(p, buf, (size_t)n))
		return fs_err(call, res, EILSEQ);
	return 0;
}

static int open_at(cm_host_call *call, void *env, const cm_val *args,
		   uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]), *o;
	uint32_t of = args[3].u.flags, df = args[4].u.flags, parent_flags;
	wasi_origin origin;
	char name[NAME_MAX + 1];
	int dfd, fd, e, flags = O_CLOEXEC | O_NOFOLLOW;
	bool mutate;
	struct stat st;
	cm_val *p;

	if (d == NULL)
		return -1;
	mutate = (of & (OF_CREATE | OF_TRUNCATE)) || (df & DF_WRITE);
	if ((df & DF_WRITE) && !(d->u.desc.flags & DF_WRITE) &&
	    !(d->u.desc.flags & DF_MUTATE_DIRECTORY))
		return fs_err(call, res, EROFS);
	if (!wasi_file_room(env))
		return fs_err(call, res, EMFILE);
	e = resolve(d, &args[2], follow_flag(&args[1]), mutate, &dfd, name);
	if (e)
		return fs_err(call, res, e);
	if (of & OF_DIRECTORY)
		flags |= O_DIRECTORY;
	if (of & OF_CREATE)
		flags |= O_CREAT;
	if (of & OF_EXCLUSIVE)
		flags |= O_EXCL;
	if (of & OF_TRUNCATE)
		flags |= O_TRUNC;
	if ((df & DF_WRITE) && (df & DF_READ))
		flags |= O_RDWR;
	else if (df & DF_WRITE)
		flags |= O_WRONLY;
	fd = openat(dfd, name, flags, 0666);
	if (fd < 0 && errno == EISDIR && !(df & DF_WRITE))
		fd = openat(dfd, name,
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	e = fd < 0 ? errno : 0;
	close(dfd);
	if (e)
		return fs_err(call, res, e);
	if (fstat(fd, &st)) {
		e = errno;
		close(fd);
		return fs_err(call, res, e);
	}
	/* how a snapshot opens it again: the parent's origin and path */
	if (wasi_origin_child(&origin, &d->origin,
			      (const char *)args[2].u.str.ptr,
			      follow_flag(&args[1]))) {
		close(fd);
		return wasi_oom(call);
	}
	/* d points into the object table, which a new object may move */
	parent_flags = d->u.desc.flags;
	d = NULL;
	if (wasi_result(res, true, &p) ||
	    wasi_new_own(env, WOBJ_DESCRIPTOR, p, &o)) {
		free(origin.path);
		close(fd);
		return wasi_oom(call);
	}
	o->origin = origin;
	o->u.desc.fd = fd;
	o->u.desc.dir = S_ISDIR(st.st_mode);
	wasi_file_opened(env);
	/* a child may not gain rights its parent lacks */
	o->u.desc.flags = df & (parent_flags | DF_READ | DF_WRITE);
	if (o->u.desc.dir)
		o->u.desc.flags |= parent_flags & DF_MUTATE_DIRECTORY;
	return 0;
}

static int is_same_object(cm_host_call *call, void *env, const cm_val *args,
			  uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *a = desc(call, env, &args[0]), *b;
	struct stat sa, sb;

	if (a == NULL || (b = desc(call, env, &args[1])) == NULL)
		return -1;
	res[0] = cm_val_bool(!a->lost && !b->lost &&
			     fstat(a->u.desc.fd, &sa) == 0 &&
			     fstat(b->u.desc.fd, &sb) == 0 &&
			     sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
	return 0;
}

static int hash_result(cm_host_call *call, cm_val *res, const struct stat *st)
{
	cm_val *p;

	if (wasi_result(res, true, &p) || cm_val_seq(p, CM_RECORD, 2))
		return wasi_oom(call);
	p->u.list.elems[0] = cm_val_u64((uint64_t)st->st_ino);
	p->u.list.elems[1] = cm_val_u64((uint64_t)st->st_dev);
	return 0;
}

static int metadata_hash(cm_host_call *call, void *env, const cm_val *args,
			 uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	struct stat st;

	if (d == NULL)
		return -1;
	if (d->lost)
		return fs_err(call, res, d->lost);
	if (fstat(d->u.desc.fd, &st))
		return fs_err(call, res, errno);
	return hash_result(call, res, &st);
}

static int metadata_hash_at(cm_host_call *call, void *env, const cm_val *args,
			    uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_obj *d = desc(call, env, &args[0]);
	char name[NAME_MAX + 1];
	struct stat st;
	int dfd, e;

	if (d == NULL)
		return -1;
	e = resolve(d, &args[2], follow_flag(&args[1]), false, &dfd, name);
	if (e)
		return fs_err(call, res, e);
	e = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) ? errno : 0;
	close(dfd);
	if (e)
		return fs_err(call, res, e);
	return hash_result(call, res, &st);
}

static int filesystem_error_code(cm_host_call *call, void *env,
				 const cm_val *args, uint32_t nargs,
				 cm_val *res, uint32_t nres)
{
	wasi_obj *o = wasi_obj_get(env, &args[0], WOBJ_ERROR);

	if (o == NULL)
		return wasi_bad_handle(call, "filesystem-error-code");
	if (cm_val_case_payload(&res[0], CM_OPTION, 1))
		return wasi_oom(call);
	*res[0].u.variant.payload =
		cm_val_case(CM_ENUM, wasi_fs_errno_code(o->u.error.err));
	return 0;
}

static int get_directories(cm_host_call *call, void *env, const cm_val *args,
			   uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;

	if (cm_val_seq(&res[0], CM_LIST, ctx->npreopens))
		return wasi_oom(call);
	for (uint32_t i = 0; i < ctx->npreopens; i++) {
		cm_val *t = &res[0].u.list.elems[i];
		const char *g = ctx->preopens[i].guest;
		wasi_obj *o;
		int fd;

		if (!wasi_file_room(ctx))
			return cm_host_call_trap(
				call,
				"wasi: get-directories: too many "
				"open files (limit %u)",
				WASI_MAX_OPEN_FILES);
		fd = fcntl(ctx->preopens[i].fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return cm_host_call_trap(call, "wasi: preopen: %s",
						 strerror(errno));
		if (cm_val_seq(t, CM_TUPLE, 2) ||
		    wasi_new_own(ctx, WOBJ_DESCRIPTOR, &t->u.list.elems[0],
				 &o)) {
			close(fd);
			return wasi_oom(call);
		}
		o->origin = wasi_origin_preopen(i);
		o->u.desc.fd = fd;
		o->u.desc.dir = true;
		wasi_file_opened(ctx);
		o->u.desc.flags = DF_READ | DF_MUTATE_DIRECTORY;
		if (cm_val_string(&t->u.list.elems[1], g, strlen(g)))
			return wasi_oom(call);
	}
	return 0;
}

#define T "wasi:filesystem/types" WASI_V
#define M "[method]descriptor."

static const struct {
	const char *instance, *name;
	cm_host_fn fn;
} funcs[] = {
	{T, M "read-via-stream", read_via_stream},
	{T, M "write-via-stream", write_via_stream},
	{T, M "append-via-stream", append_via_stream},
	{T, M "advise", advise},
	{T, M "sync-data", sync_},
	{T, M "get-flags", get_flags},
	{T, M "get-type", get_type},
	{T, M "set-size", set_size},
	{T, M "set-times", set_times},
	{T, M "read", read_},
	{T, M "write", write_},
	{T, M "read-directory", read_directory},
	{T, M "sync", sync_},
	{T, M "create-directory-at", create_directory_at},
	{T, M "stat", stat_},
	{T, M "stat-at", stat_at},
	{T, M "set-times-at", set_times_at},
	{T, M "link-at", link_at},
	{T, M "open-at", open_at},
	{T, M "readlink-at", readlink_at},
	{T, M "remove-directory-at", remove_directory_at},
	{T, M "rename-at", rename_at},
	{T, M "symlink-at", symlink_at},
	{T, M "unlink-file-at", unlink_file_at},
	{T, M "is-same-object", is_same_object},
	{T, M "metadata-hash", metadata_hash},
	{T, M "metadata-hash-at", metadata_hash_at},
	{T, "[method]directory-entry-stream.read-directory-entry",
	 read_directory_entry},
	{T, "filesystem-error-code", filesystem_error_code},
	{"wasi:filesystem/preopens" WASI_V, "get-directories", get_directories},
};

cm_host_fn wasi_fs_p2_method(const char *name)
{
	size_t m = strlen(M);

	for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
		if (strncmp(funcs[i].name, M, m) == 0 &&
		    strcmp(funcs[i].name + m, name) == 0)
			return funcs[i].fn;
	return NULL;
}

int wasi_fs_get_directories(cm_host_call *call, void *env,
			    const cm_val *args, uint32_t nargs, cm_val *res,
			    uint32_t nres)
{
	return get_directories(call, env, args, nargs, res, nres);
}

int wasi_link_filesystem(wasi_ctx *ctx, cm_linker *l)
{
	for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
		if (cm_linker_define_func(l, funcs[i].instance, funcs[i].name,
					  funcs[i].fn, ctx))
			return -1;
	return 0;
}
