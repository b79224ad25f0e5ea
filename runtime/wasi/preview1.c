/*
 * preview1.c - wasi_snapshot_preview1 for core modules, over the same
 * wasi_ctx as the WASI 0.2 host: arguments, environment, stdio, clocks,
 * random, poll_oneoff and the filesystem calls wasi-libc makes.
 *
 * Contract (wasi.h, "wasi_snapshot_preview1"):
 *  - The guest's file descriptors are our own table: 0, 1 and 2 are the
 *    ctx's stdio (output goes through wasi_stdout_write, so a capture
 *    callback sees it), 3 onwards start as the ctx's preopens (dups of
 *    their fds, in preopen order), then whatever path_open returns.
 *  - Every path goes through wasi_path_resolve from the directory fd it
 *    is relative to and its last component is used with O_NOFOLLOW /
 *    AT_SYMLINK_NOFOLLOW, so nothing reaches outside a preopen: the same
 *    confinement as wasi:filesystem (path.c).
 *  - Every guest pointer is bounds-checked against the memory given with
 *    wasi_p1_set_memory; a bad one is the errno FAULT, never a host
 *    crash.  Host failures become preview1 errno values.
 *  - proc_exit records the code in the ctx and traps with
 *    WASI_EXIT_TRAP_MSG; the embedder checks wasi_ctx_exited.
 *  - Time comes from the ctx's clock, so a virtual clock drives
 *    poll_oneoff and clock_time_get as it drives the 0.2 interfaces.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - fd_alloc: the descriptor table grows one slot at a time and reuses
 *    free ones; path_open is the only guest call that adds one, so
 *    WASI_MAX_OPEN_FILES (1024) files open at once bounds it, then
 *    errno mfile.
 *  - get_iovs (fd_read, fd_write, fd_pread, fd_pwrite): host iovecs, at
 *    most IOV_MAX (1024); the bytes stay in guest memory.
 *  - path_at, path_symlink: a copy of the guest's path or target,
 *    shorter than PATH_MAX (4096), else nametoolong before the copy.
 *  - wasi_p1_link: a slot per preview1 import, at most the module's
 *    imports (bounded by its byte length).
 *  - wasi_p1_new: the stdio and preopen entries, the embedder's count.
 *  No call copies a guest buffer: reads, writes, readdir, readlink,
 *  random_get and poll_oneoff work in guest memory (bounds-checked).
 *
 * Host work: every guest range a call touches (gmem) is billed to the
 * calling exec's fuel after the call, P1_BYTES_PER_FUEL bytes a unit.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "wasi/internal.h"

/* errno values of wasi_snapshot_preview1 */
enum {
	E_SUCCESS = 0,
	E_2BIG = 1,
	E_ACCES = 2,
	E_AGAIN = 6,
	E_BADF = 8,
	E_BUSY = 10,
	E_EXIST = 20,
	E_FAULT = 21,
	E_FBIG = 22,
	E_INTR = 27,
	E_INVAL = 28,
	E_IO = 29,
	E_ISDIR = 31,
	E_LOOP = 32,
	E_MFILE = 33,
	E_MLINK = 34,
	E_NAMETOOLONG = 37,
	E_NFILE = 41,
	E_NODEV = 43,
	E_NOENT = 44,
	E_NOMEM = 48,
	E_NOSPC = 51,
	E_NOSYS = 52,
	E_NOTDIR = 54,
	E_NOTEMPTY = 55,
	E_NOTSUP = 58,
	E_NOTTY = 59,
	E_NXIO = 60,
	E_OVERFLOW = 61,
	E_PERM = 63,
	E_PIPE = 64,
	E_RANGE = 68,
	E_ROFS = 69,
	E_SPIPE = 70,
	E_TXTBSY = 74,
	E_XDEV = 75,
	E_NOTCAPABLE = 76,
};

/* filetype */
enum {
	FT_UNKNOWN = 0,
	FT_BLOCK = 1,
	FT_CHAR = 2,
	FT_DIR = 3,
	FT_REG = 4,
	FT_SOCK_STREAM = 6,
	FT_LINK = 7,
};

#define FDFLAG_APPEND	1u
#define FDFLAG_NONBLOCK 4u
#define OFLAG_CREAT	1u
#define OFLAG_DIRECTORY 2u
#define OFLAG_EXCL	4u
#define OFLAG_TRUNC	8u
#define LOOKUP_FOLLOW	1u
#define FST_ATIM	1u
#define FST_ATIM_NOW	2u
#define FST_MTIM	4u
#define FST_MTIM_NOW	8u

#define R_FD_DATASYNC	     (1ull << 0)
#define R_FD_READ	     (1ull << 1)
#define R_FD_SEEK	     (1ull << 2)
#define R_FD_WRITE	     (1ull << 6)
#define R_FD_ALLOCATE	     (1ull << 8)
#define R_FD_READDIR	     (1ull << 14)
#define R_FD_TELL	     (1ull << 5)
#define R_FD_FILESTAT_SET_SZ (1ull << 22)
#define R_POLL_FD_READWRITE  (1ull << 27)
#define R_ALL		     ((1ull << 29) - 1)
/* what stdio offers: no seek or tell, so wasi-libc treats it as a tty */
#define R_STDIO (R_FD_READ | R_FD_WRITE | R_POLL_FD_READWRITE | (1ull << 3))

/* Sentinel from an implementation: the exec's host trap is set. */
#define P1_TRAPPED UINT32_MAX

typedef enum p1_kind {
	P1_FREE = 0,
	P1_STDIN,
	P1_STDOUT, /* and stderr: `which` says */
	P1_FILE,
	P1_DIR,
} p1_kind;

typedef struct p1_fd {
	p1_kind kind;
	int fd; /* owned host fd (P1_FILE, P1_DIR) */
	int which;
	uint16_t fdflags;
	bool opened; /* by path_open: counted in nfiles */
	uint64_t rights, inheriting;
	const char *preopen; /* guest name of a preopen (the ctx's string) */
} p1_fd;

typedef uint32_t (*p1_impl)(wasi_p1 *p, wasm_exec *x, const wasm_val *a);

typedef struct p1_slot {
	wasi_p1 *p;
	p1_impl impl;
	bool has_result;
} p1_slot;

struct wasi_p1 {
	wasi_ctx *ctx;
	wasm_memory *mem;
	p1_fd *fds;
	uint32_t nfds;
	uint32_t nfiles; /* path_open'ed, open now (WASI_MAX_OPEN_FILES) */
	p1_slot *slots;	 /* one per linked import (their host fn env) */
	uint32_t nslots;
	/* the call in progress (dispatch): the guest bytes it touched */
	uint64_t touched;
};

/*
 * The guest pays for the host's work in its memory: a unit of fuel per
 * P1_BYTES_PER_FUEL bytes a call touched (gmem), the rate of the core
 * bulk ops (wasm/interp.c BULK_BYTES) and of the Component Model's host
 * work (run/store.h CM_HOST_WORK_BYTES_PER_FUEL).  One random_get of 64
 * MiB a fuel unit was 128 GB of getrandom under `hostel run --fuel 2000`.
 */
#define P1_BYTES_PER_FUEL 16u

/* ---- memory ------------------------------------------------------------- */

static uint8_t *gmem(wasi_p1 *p, uint32_t off, uint64_t len)
{
	if (p->mem == NULL ||
	    (uint64_t)off + len > wasm_memory_size_bytes(p->mem))
		return NULL;
	p->touched += len;
	/* marked written whether the caller reads or writes (a snapshot's
	 * delta then reads those pages too: no more) */
	return wasm_memory_write(p->mem, off, len);
}

static void st16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static void st32(uint8_t *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static void st64(uint8_t *b, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t ld16(const uint8_t *b)
{
	return (uint16_t)(b[0] | b[1] << 8);
}

static uint32_t ld32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

static uint64_t ld64(const uint8_t *b)
{
	return (uint64_t)ld32(b) | (uint64_t)ld32(b + 4) << 32;
}

/* Store a u32 / u64 result at a guest address; FAULT when out of range. */
static uint32_t put32(wasi_p1 *p, uint32_t off, uint32_t v)
{
	uint8_t *b = gmem(p, off, 4);

	if (b == NULL)
		return E_FAULT;
	st32(b, v);
	return E_SUCCESS;
}

static uint32_t put64(wasi_p1 *p, uint32_t off, uint64_t v)
{
	uint8_t *b = gmem(p, off, 8);

	if (b == NULL)
		return E_FAULT;
	st64(b, v);
	return E_SUCCESS;
}

/* ---- errno -------------------------------------------------------------- */

static uint32_t werr(int e)
{
	switch (e) {
	case 0:
		return E_SUCCESS;
	case E2BIG:
		return E_2BIG;
	case EACCES:
		return E_ACCES;
	case EAGAIN:
		return E_AGAIN;
	case EBADF:
		return E_BADF;
	case EBUSY:
		return E_BUSY;
	case EEXIST:
		return E_EXIST;
	case EFAULT:
		return E_FAULT;
	case EFBIG:
		return E_FBIG;
	case EINTR:
		return E_INTR;
	case EINVAL:
		return E_INVAL;
	case EISDIR:
		return E_ISDIR;
	case ELOOP:
		return E_LOOP;
	case EMFILE:
		return E_MFILE;
	case EMLINK:
		return E_MLINK;
	case ENAMETOOLONG:
		return E_NAMETOOLONG;
	case ENFILE:
		return E_NFILE;
	case ENODEV:
		return E_NODEV;
	case ENOENT:
		return E_NOENT;
	case ENOMEM:
		return E_NOMEM;
	case ENOSPC:
		return E_NOSPC;
	case ENOSYS:
		return E_NOSYS;
	case ENOTDIR:
		return E_NOTDIR;
	case ENOTEMPTY:
		return E_NOTEMPTY;
	case EOPNOTSUPP:
		return E_NOTSUP;
	case ENOTTY:
		return E_NOTTY;
	case ENXIO:
		return E_NXIO;
	case EOVERFLOW:
		return E_OVERFLOW;
	case EPERM:
		return E_PERM;
	case EPIPE:
		return E_PIPE;
	case ERANGE:
		return E_RANGE;
	case EROFS:
		return E_ROFS;
	case ESPIPE:
		return E_SPIPE;
	case ETXTBSY:
		return E_TXTBSY;
	case EXDEV:
		return E_XDEV;
	default:
		return E_IO;
	}
}

/* ---- the descriptor table ----------------------------------------------- */

static p1_fd *fd_get(wasi_p1 *p, uint32_t fd)
{
	if (fd >= p->nfds || p->fds[fd].kind == P1_FREE)
		return NULL;
	return &p->fds[fd];
}

/* A free slot (lowest first, like POSIX); -1 when out of memory. */
static int fd_alloc(wasi_p1 *p, uint32_t *out)
{
	uint32_t i;
	p1_fd *v;

	for (i = 0; i < p->nfds; i++)
		if (p->fds[i].kind == P1_FREE)
			break;
	if (i == p->nfds) {
		v = realloc(p->fds, (p->nfds + 1) * sizeof *v);
		if (v == NULL)
			return -1;
		p->fds = v;
		p->nfds++;
	}
	memset(&p->fds[i], 0, sizeof p->fds[i]);
	p->fds[i].fd = -1;
	*out = i;
	return 0;
}

static void fd_release(wasi_p1 *p, p1_fd *f)
{
	if ((f->kind == P1_FILE || f->kind == P1_DIR) && f->fd >= 0)
		close(f->fd);
	if (f->opened && p->nfiles > 0)
		p->nfiles--;
	memset(f, 0, sizeof *f);
	f->fd = -1;
}

wasi_p1 *wasi_p1_new(wasi_ctx *ctx)
{
	wasi_p1 *p = calloc(1, sizeof *p);
	uint32_t i;

	if (p == NULL)
		return NULL;
	p->ctx = ctx;
	for (i = 0; i < 3; i++) {
		uint32_t n;

		if (fd_alloc(p, &n))
			goto fail;
		p->fds[n].kind = n == 0 ? P1_STDIN : P1_STDOUT;
		p->fds[n].which = (int)n;
		p->fds[n].rights = R_STDIO;
	}
	for (i = 0; i < ctx->npreopens; i++) {
		uint32_t n;
		int fd;

		if (fd_alloc(p, &n))
			goto fail;
		fd = fcntl(ctx->preopens[i].fd, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			goto fail;
		p->fds[n].kind = P1_DIR;
		p->fds[n].fd = fd;
		p->fds[n].rights = R_ALL;
		p->fds[n].inheriting = R_ALL;
		p->fds[n].preopen = ctx->preopens[i].guest;
	}
	return p;
fail:
	wasi_p1_free(p);
	return NULL;
}

void wasi_p1_free(wasi_p1 *p)
{
	if (p == NULL)
		return;
	for (uint32_t i = 0; i < p->nfds; i++)
		fd_release(p, &p->fds[i]);
	free(p->fds);
	free(p->slots);
	free(p);
}

void wasi_p1_set_memory(wasi_p1 *p, wasm_memory *mem)
{
	p->mem = mem;
}

/* ---- arguments and environment ------------------------------------------ */

/*
 * args_get / environ_get: an array of n pointers at `vec` and the
 * NUL-terminated strings packed at `buf`.  The strings of entry i are
 * str(i, 0) and, for the environment, "=" and str(i, 1).
 */
static uint32_t put_strings(wasi_p1 *p, uint32_t vec, uint32_t buf, char **strs,
			    uint32_t n, bool pairs)
{
	for (uint32_t i = 0; i < n; i++) {
		const char *k = pairs ? strs[2 * i] : strs[i];
		const char *v = pairs ? strs[2 * i + 1] : NULL;
		size_t kl = strlen(k), vl = v ? strlen(v) + 1 : 0;
		uint8_t *d;

		if (put32(p, vec + 4 * i, buf))
			return E_FAULT;
		d = gmem(p, buf, kl + vl + 1);
		if (d == NULL)
			return E_FAULT;
		memcpy(d, k, kl);
		if (v != NULL) {
			d[kl] = '=';
			memcpy(d + kl + 1, v, vl - 1);
		}
		d[kl + vl] = '\0';
		buf += (uint32_t)(kl + vl + 1);
	}
	return E_SUCCESS;
}

static uint32_t string_sizes(wasi_p1 *p, const wasm_val *a, char **strs,
			     uint32_t n, bool pairs)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++)
		total += pairs ? strlen(strs[2 * i]) + strlen(strs[2 * i + 1]) +
					 2
			       : strlen(strs[i]) + 1;
	if (total > UINT32_MAX)
		return E_OVERFLOW;
	if (put32(p, a[0].u.i32, n) || put32(p, a[1].u.i32, (uint32_t)total))
		return E_FAULT;
	return E_SUCCESS;
}

static uint32_t args_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	return put_strings(p, a[0].u.i32, a[1].u.i32, p->ctx->args,
			   p->ctx->nargs, false);
}

static uint32_t args_sizes_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	return string_sizes(p, a, p->ctx->args, p->ctx->nargs, false);
}

static uint32_t environ_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	return put_strings(p, a[0].u.i32, a[1].u.i32, p->ctx->env, p->ctx->nenv,
			   true);
}

static uint32_t environ_sizes_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	return string_sizes(p, a, p->ctx->env, p->ctx->nenv, true);
}

/* ---- clocks, random, process -------------------------------------------- */

static uint64_t wall_ns(wasi_p1 *p)
{
	uint64_t sec;
	uint32_t nsec;

	p->ctx->clock.wall(p->ctx->clock.env, &sec, &nsec);
	return sec * 1000000000u + nsec;
}

static uint32_t clock_now(wasi_p1 *p, uint32_t id, uint64_t *t)
{
	struct timespec ts;

	switch (id) {
	case 0: /* realtime */
		*t = wall_ns(p);
		return E_SUCCESS;
	case 1: /* monotonic */
		*t = p->ctx->clock.now(p->ctx->clock.env);
		return E_SUCCESS;
	case 2: /* process cputime */
	case 3: /* thread cputime */
		if (clock_gettime(id == 2 ? CLOCK_PROCESS_CPUTIME_ID
					  : CLOCK_THREAD_CPUTIME_ID,
				  &ts))
			return werr(errno);
		*t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		return E_SUCCESS;
	default:
		return E_INVAL;
	}
}

static uint32_t clock_res_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	if (a[0].u.i32 > 3)
		return E_INVAL;
	return put64(p, a[1].u.i32,
		     p->ctx->clock.resolution_ns ? p->ctx->clock.resolution_ns
						 : 1);
}

static uint32_t clock_time_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	uint64_t t = 0;
	uint32_t e = clock_now(p, a[0].u.i32, &t);

	return e ? e : put64(p, a[2].u.i32, t);
}

static uint32_t random_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	uint32_t len = a[1].u.i32;
	uint8_t *b = gmem(p, a[0].u.i32, len);

	if (b == NULL)
		return E_FAULT;
	while (len > 0) {
		ssize_t r = getrandom(b, len, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return E_IO;
		b += r;
		len -= (uint32_t)r;
	}
	return E_SUCCESS;
}

static uint32_t proc_exit(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	p->ctx->exited = true;
	p->ctx->exit_code = (int)a[0].u.i32;
	wasm_exec_set_host_trap(x, WASI_EXIT_TRAP_MSG);
	return P1_TRAPPED;
}

static uint32_t proc_raise(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	return E_NOSYS;
}

static uint32_t sched_yield_(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	return E_SUCCESS;
}

static uint32_t sock_unsupported(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	return E_NOTSUP;
}

/* ---- reading and writing ------------------------------------------------ */

/*
 * Gather a guest iovec array into host iovecs (at most IOV_MAX); FAULT
 * when any buffer lies outside the memory.
 */
static uint32_t get_iovs(wasi_p1 *p, uint32_t iovs, uint32_t n,
			 struct iovec **out, int *nout)
{
	struct iovec *v;
	const uint8_t *d = gmem(p, iovs, 8ull * n);

	if (d == NULL)
		return E_FAULT;
	if (n > IOV_MAX)
		n = IOV_MAX;
	v = calloc(n ? n : 1, sizeof *v);
	if (v == NULL)
		return E_NOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ptr = ld32(d + 8 * i), len = ld32(d + 8 * i + 4);

		v[i].iov_base = gmem(p, ptr, len);
		v[i].iov_len = len;
		if (v[i].iov_base == NULL) {
			free(v);
			return E_FAULT;
		}
	}
	*out = v;
	*nout = (int)n;
	return E_SUCCESS;
}

/* Read or write through iovecs at `off` (or the fd offset when < 0). */
static uint32_t rw(wasi_p1 *p, const wasm_val *a, bool write, int64_t off,
		   uint32_t nret)
{
	p1_fd *f = fd_get(p, a[0].u.i32);
	struct iovec *v;
	ssize_t r = 0;
	int n, rfd;
	uint32_t e = E_BADF;

	if (f == NULL)
		return E_BADF;
	if (f->kind == P1_DIR)
		return E_ISDIR;
	if (!(f->rights & (write ? R_FD_WRITE : R_FD_READ)))
		return E_BADF;
	if (off >= 0 && f->kind != P1_FILE)
		return E_SPIPE;
	e = get_iovs(p, a[1].u.i32, a[2].u.i32, &v, &n);
	if (e)
		return e;
	if (f->kind == P1_STDOUT) {
		if (!write) {
			free(v);
			return E_BADF;
		}
		for (int i = 0; i < n; i++) {
			wasi_stdout_write(p->ctx, f->which, v[i].iov_base,
					  v[i].iov_len);
			r += (ssize_t)v[i].iov_len;
		}
		free(v);
		return put32(p, nret, (uint32_t)r);
	}
	rfd = f->kind == P1_STDIN ? p->ctx->in_fd : f->fd;
	if (f->kind == P1_STDIN && write) {
		free(v);
		return E_BADF;
	}
	if (rfd < 0) { /* stdin is empty */
		free(v);
		return put32(p, nret, 0);
	}
	do {
		if (off >= 0)
			r = write ? pwritev(rfd, v, n, off)
				  : preadv(rfd, v, n, off);
		else
			r = write ? writev(rfd, v, n) : readv(rfd, v, n);
	} while (r < 0 && errno == EINTR);
	free(v);
	if (r < 0)
		return werr(errno);
	return put32(p, nret, (uint32_t)r);
}

static uint32_t fd_read(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	return rw(p, a, false, -1, a[3].u.i32);
}

static uint32_t fd_write(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	return rw(p, a, true, -1, a[3].u.i32);
}

static uint32_t fd_pread(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	if (a[3].u.i64 > INT64_MAX)
		return E_INVAL;
	return rw(p, a, false, (int64_t)a[3].u.i64, a[4].u.i32);
}

static uint32_t fd_pwrite(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	if (a[3].u.i64 > INT64_MAX)
		return E_INVAL;
	return rw(p, a, true, (int64_t)a[3].u.i64, a[4].u.i32);
}

/* The host fd of a file or directory; stdio has none (ESPIPE etc.). */
static int host_fd(wasi_p1 *p, uint32_t fd, uint32_t *e)
{
	p1_fd *f = fd_get(p, fd);

	if (f == NULL) {
		*e = E_BADF;
		return -1;
	}
	if (f->kind != P1_FILE && f->kind != P1_DIR) {
		*e = E_SPIPE;
		return -1;
	}
	return f->fd;
}

static uint32_t fd_seek(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	static const int whence[] = {SEEK_SET, SEEK_CUR, SEEK_END};
	uint32_t e = E_BADF;
	int fd = host_fd(p, a[0].u.i32, &e);
	off_t r;

	if (fd < 0)
		return e;
	if (a[2].u.i32 > 2)
		return E_INVAL;
	r = lseek(fd, (off_t)(int64_t)a[1].u.i64, whence[a[2].u.i32]);
	if (r < 0)
		return werr(errno);
	return put64(p, a[3].u.i32, (uint64_t)r);
}

static uint32_t fd_tell(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	uint32_t e = E_BADF;
	int fd = host_fd(p, a[0].u.i32, &e);
	off_t r;

	if (fd < 0)
		return e;
	r = lseek(fd, 0, SEEK_CUR);
	if (r < 0)
		return werr(errno);
	return put64(p, a[1].u.i32, (uint64_t)r);
}

static uint32_t fd_close(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	p1_fd *f = fd_get(p, a[0].u.i32);

	if (f == NULL)
		return E_BADF;
	fd_release(p, f);
	return E_SUCCESS;
}

static uint32_t fd_renumber(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	p1_fd *from = fd_get(p, a[0].u.i32), *to = fd_get(p, a[1].u.i32);

	if (from == NULL || to == NULL)
		return E_BADF;
	if (from == to)
		return E_SUCCESS;
	fd_release(p, to);
	*to = *from;
	memset(from, 0, sizeof *from);
	from->fd = -1;
	return E_SUCCESS;
}

static uint32_t fd_sync(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	uint32_t e = E_BADF;
	int fd = host_fd(p, a[0].u.i32, &e);

	if (fd < 0)
		return e == E_SPIPE ? E_SUCCESS : e;
	return fsync(fd) ? werr(errno) : E_SUCCESS;
}

static uint32_t fd_datasync(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	uint32_t e = E_BADF;
	int fd = host_fd(p, a[0].u.i32, &e);

	if (fd < 0)
		return e == E_SPIPE ? E_SUCCESS : e;
	return fdatasync(fd) ? werr(errno) : E_SUCCESS;
}

static uint32_t fd_advise(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	uint32_t e = E_BADF;

	if (host_fd(p, a[0].u.i32, &e) < 0)
		return e;
	return a[3].u.i32 > 5 ? E_INVAL : E_SUCCESS; /* only a hint */
}

static uint32_t fd_allocate(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	uint32_t e = E_BADF;
	int fd = host_fd(p, a[0].u.i32, &e), r;

	if (fd < 0)
		return e;
	if (a[1].u.i64 > INT64_MAX || a[2].u.i64 > INT64_MAX)
		return E_INVAL;
	r = posix_fallocate(fd, (off_t)a[1].u.i64, (off_t)a[2].u.i64);
	return werr(r);
}

/* ---- descriptor status -------------------------------------------------- */

static uint8_t filetype(mode_t m)
{
	if (S_ISREG(m))
		return FT_REG;
	if (S_ISDIR(m))
		return FT_DIR;
	if (S_ISLNK(m))
		return FT_LINK;
	if (S_ISCHR(m))
		return FT_CHAR;
	if (S_ISBLK(m))
		return FT_BLOCK;
	if (S_ISSOCK(m))
		return FT_SOCK_STREAM;
	return FT_UNKNOWN;
}

static uint32_t fd_fdstat_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	p1_fd *f = fd_get(p, a[0].u.i32);
	uint8_t *b = gmem(p, a[1].u.i32, 24), ft = FT_CHAR;
	struct stat st;

	if (f == NULL)
		return E_BADF;
	if (b == NULL)
		return E_FAULT;
	if (f->kind == P1_FILE || f->kind == P1_DIR) {
		if (fstat(f->fd, &st))
			return werr(errno);
		ft = filetype(st.st_mode);
	}
	memset(b, 0, 24);
	b[0] = ft;
	st16(b + 2, f->fdflags);
	st64(b + 8, f->rights);
	st64(b + 16, f->inheriting);
	return E_SUCCESS;
}

static uint32_t fd_fdstat_set_flags(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	p1_fd *f = fd_get(p, a[0].u.i32);
	uint32_t want = a[1].u.i32;
	int fl;

	if (f == NULL)
		return E_BADF;
	if (f->kind == P1_FILE) {
		fl = fcntl(f->fd, F_GETFL);
		if (fl < 0)
			return werr(errno);
		fl &= ~(O_APPEND | O_NONBLOCK);
		fl |= (want & FDFLAG_APPEND ? O_APPEND : 0) |
		      (want & FDFLAG_NONBLOCK ? O_NONBLOCK : 0);
		if (fcntl(f->fd, F_SETFL, fl))
			return werr(errno);
	}
	f->fdflags = (uint16_t)(want & (FDFLAG_APPEND | FDFLAG_NONBLOCK));
	return E_SUCCESS;
}

static uint32_t fd_fdstat_set_rights(wasi_p1 *p, wasm_exec *x,
				     const wasm_val *a)
{
	p1_fd *f = fd_get(p, a[0].u.i32);

	if (f == NULL)
		return E_BADF;
	/* rights may only shrink */
	if ((a[1].u.i64 & ~f->rights) || (a[2].u.i64 & ~f->inheriting))
		return E_NOTCAPABLE;
	f->rights = a[1].u.i64;
	f->inheriting = a[2].u.i64;
	return E_SUCCESS;
}

static uint32_t put_filestat(wasi_p1 *p, uint32_t off, const struct stat *st)
{
	uint8_t *b = gmem(p, off, 64);

	if (b == NULL)
		return E_FAULT;
	memset(b, 0, 64);
	st64(b, (uint64_t)st->st_dev);
	st64(b + 8, (uint64_t)st->st_ino);
	b[16] = filetype(st->st_mode);
	st64(b + 24, (uint64_t)st->st_nlink);
	st64(b + 32, (uint64_t)st->st_size);
	st64(b + 40, (uint64_t)st->st_atim.tv_sec * 1000000000u +
			     (uint64_t)st->st_atim.tv_nsec);
	st64(b + 48, (uint64_t)st->st_mtim.tv_sec * 1000000000u +
			     (uint64_t)st->st_mtim.tv_nsec);
	st64(b + 56, (uint64_t)st->st_ctim.tv_sec * 1000000000u +
			     (uint64_t)st->st_ctim.tv_nsec);
	return E_SUCCESS;
}

static uint32_t fd_filestat_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	p1_fd *f = fd_get(p, a[0].u.i32);
	struct stat st;

	if (f == NULL)
		return E_BADF;
	if (f->kind == P1_STDIN || f->kind == P1_STDOUT) {
		memset(&st, 0, sizeof st);
		st.st_mode = S_IFCHR;
		return put_filestat(p, a[1].u.i32, &st);
	}
	if (fstat(f->fd, &st))
		return werr(errno);
	return put_filestat(p, a[1].u.i32, &st);
}

static uint32_t fd_filestat_set_size(wasi_p1 *p, wasm_exec *x,
				     const wasm_val *a)
{
	uint32_t e = E_BADF;
	int fd = host_fd(p, a[0].u.i32, &e);

	if (fd < 0)
		return e == E_SPIPE ? E_BADF : e;
	if (a[1].u.i64 > INT64_MAX)
		return E_INVAL;
	return ftruncate(fd, (off_t)a[1].u.i64) ? werr(errno) : E_SUCCESS;
}

/* timespecs for futimens/utimensat from fst flags */
static uint32_t fst_times(uint64_t atim, uint64_t mtim, uint32_t fst,
			  struct timespec ts[2])
{
	if (((fst & FST_ATIM) && (fst & FST_ATIM_NOW)) ||
	    ((fst & FST_MTIM) && (fst & FST_MTIM_NOW)) || fst > 15)
		return E_INVAL;
	ts[0].tv_sec = (time_t)(atim / 1000000000u);
	ts[0].tv_nsec = (long)(atim % 1000000000u);
	ts[1].tv_sec = (time_t)(mtim / 1000000000u);
	ts[1].tv_nsec = (long)(mtim % 1000000000u);
	if (fst & FST_ATIM_NOW)
		ts[0].tv_nsec = UTIME_NOW;
	else if (!(fst & FST_ATIM))
		ts[0].tv_nsec = UTIME_OMIT;
	if (fst & FST_MTIM_NOW)
		ts[1].tv_nsec = UTIME_NOW;
	else if (!(fst & FST_MTIM))
		ts[1].tv_nsec = UTIME_OMIT;
	return E_SUCCESS;
}

static uint32_t fd_filestat_set_times(wasi_p1 *p, wasm_exec *x,
				      const wasm_val *a)
{
	struct timespec ts[2];
	uint32_t e = E_BADF;
	int fd = host_fd(p, a[0].u.i32, &e);

	if (fd < 0)
		return e == E_SPIPE ? E_BADF : e;
	e = fst_times(a[1].u.i64, a[2].u.i64, a[3].u.i32, ts);
	if (e)
		return e;
	return futimens(fd, ts) ? werr(errno) : E_SUCCESS;
}

static uint32_t fd_prestat_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	p1_fd *f = fd_get(p, a[0].u.i32);
	uint8_t *b = gmem(p, a[1].u.i32, 8);

	if (f == NULL || f->preopen == NULL)
		return E_BADF;
	if (b == NULL)
		return E_FAULT;
	memset(b, 0, 8);
	st32(b + 4, (uint32_t)strlen(f->preopen));
	return E_SUCCESS;
}

static uint32_t fd_prestat_dir_name(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	p1_fd *f = fd_get(p, a[0].u.i32);
	uint32_t len = a[2].u.i32;
	uint8_t *b = gmem(p, a[1].u.i32, len);
	size_t n;

	if (f == NULL || f->preopen == NULL)
		return E_BADF;
	if (b == NULL)
		return E_FAULT;
	n = strlen(f->preopen);
	if (len < n)
		return E_NAMETOOLONG;
	memcpy(b, f->preopen, n);
	return E_SUCCESS;
}

/* ---- directories -------------------------------------------------------- */

/*
 * Entries from `cookie` on (the cookie is the entry's position), each a
 * 24-byte dirent followed by its name, truncated at the buffer's end as
 * the ABI wants (the guest sees a full buffer and asks again).
 */
static uint32_t fd_readdir(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	p1_fd *f = fd_get(p, a[0].u.i32);
	uint32_t len = a[2].u.i32, used = 0;
	uint8_t *b = gmem(p, a[1].u.i32, len);
	uint64_t cookie = a[3].u.i64, pos = 0;
	struct dirent *de;
	DIR *d;
	int fd;

	if (f == NULL || f->kind != P1_DIR)
		return f == NULL ? E_BADF : E_NOTDIR;
	if (b == NULL)
		return E_FAULT;
	fd = openat(f->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return werr(errno);
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return werr(errno);
	}
	while (used < len && (de = readdir(d)) != NULL) {
		uint8_t ent[24], ty;
		size_t nl = strlen(de->d_name), c;

		if (pos++ < cookie)
			continue;
		switch (de->d_type) {
		case DT_REG:
			ty = FT_REG;
			break;
		case DT_DIR:
			ty = FT_DIR;
			break;
		case DT_LNK:
			ty = FT_LINK;
			break;
		case DT_CHR:
			ty = FT_CHAR;
			break;
		case DT_BLK:
			ty = FT_BLOCK;
			break;
		default:
			ty = FT_UNKNOWN;
			break;
		}
		memset(ent, 0, sizeof ent);
		st64(ent, pos);
		st64(ent + 8, (uint64_t)de->d_ino);
		st32(ent + 16, (uint32_t)nl);
		ent[20] = ty;
		c = len - used < sizeof ent ? len - used : sizeof ent;
		memcpy(b + used, ent, c);
		used += (uint32_t)c;
		c = len - used < nl ? len - used : nl;
		memcpy(b + used, de->d_name, c);
		used += (uint32_t)c;
	}
	closedir(d);
	return put32(p, a[4].u.i32, used);
}

/* ---- paths -------------------------------------------------------------- */

/*
 * Resolve the guest path (ptr, len) relative to directory descriptor
 * `dir` inside its tree: *dfd (to close) holds the last component
 * `name`.  Returns a preview1 errno.
 */
static uint32_t path_at(wasi_p1 *p, uint32_t dir, uint32_t ptr, uint32_t len,
			bool follow, int *dfd, char name[NAME_MAX + 1])
{
	p1_fd *f = fd_get(p, dir);
	const uint8_t *s = gmem(p, ptr, len);
	char *path;
	int e;

	if (f == NULL)
		return E_BADF;
	if (f->kind != P1_DIR)
		return E_NOTDIR;
	if (s == NULL)
		return E_FAULT;
	/* resolution refuses it anyway: no copy of a huge guest string */
	if (len >= PATH_MAX)
		return E_NAMETOOLONG;
	if (memchr(s, '\0', len) != NULL)
		return E_INVAL;
	if (len == 0)
		return E_NOENT;
	path = strndup((const char *)s, len);
	if (path == NULL)
		return E_NOMEM;
	e = wasi_path_resolve(f->fd, path, follow, dfd, name, NAME_MAX + 1);
	free(path);
	return werr(e);
}

static uint32_t path_open(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	uint32_t lookup = a[1].u.i32, of = a[4].u.i32;
	uint64_t rights = a[5].u.i64, inh = a[6].u.i64;
	uint32_t fdflags = a[7].u.i32, e, n;
	int flags = O_CLOEXEC | O_NOFOLLOW, dfd, fd;
	char name[NAME_MAX + 1];
	bool rd, wr;
	p1_fd *parent = fd_get(p, a[0].u.i32), *f;
	struct stat st;

	if (parent == NULL)
		return E_BADF;
	if (p->nfiles >= WASI_MAX_OPEN_FILES)
		return E_MFILE;
	/* a child gets no right its parent may not hand out */
	rights &= parent->inheriting;
	inh &= parent->inheriting;
	rd = rights & (R_FD_READ | R_FD_READDIR);
	wr = rights & (R_FD_DATASYNC | R_FD_WRITE | R_FD_ALLOCATE |
		       R_FD_FILESTAT_SET_SZ);
	e = path_at(p, a[0].u.i32, a[2].u.i32, a[3].u.i32,
		    lookup & LOOKUP_FOLLOW, &dfd, name);
	if (e)
		return e;
	if (of & OFLAG_DIRECTORY)
		flags |= O_DIRECTORY;
	if (of & OFLAG_CREAT)
		flags |= O_CREAT;
	if (of & OFLAG_EXCL)
		flags |= O_EXCL;
	if (of & OFLAG_TRUNC)
		flags |= O_TRUNC;
	if (fdflags & FDFLAG_APPEND)
		flags |= O_APPEND;
	if (fdflags & FDFLAG_NONBLOCK)
		flags |= O_NONBLOCK;
	if (wr && !(of & OFLAG_DIRECTORY))
		flags |= rd ? O_RDWR : O_WRONLY;
	fd = openat(dfd, name, flags, 0666);
	if (fd < 0 && errno == EISDIR && !(of & (OFLAG_CREAT | OFLAG_TRUNC)))
		fd = openat(dfd, name,
			    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	e = fd < 0 ? werr(errno) : E_SUCCESS;
	close(dfd);
	if (e)
		return e;
	if (fstat(fd, &st)) {
		e = werr(errno);
		close(fd);
		return e;
	}
	if (fd_alloc(p, &n)) {
		close(fd);
		return E_NOMEM;
	}
	f = &p->fds[n];
	f->kind = S_ISDIR(st.st_mode) ? P1_DIR : P1_FILE;
	f->fd = fd;
	f->rights = rights;
	f->inheriting = inh;
	f->fdflags = (uint16_t)(fdflags & (FDFLAG_APPEND | FDFLAG_NONBLOCK));
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		f->rights &= ~(R_FD_SEEK | R_FD_TELL);
	if (!rd)
		f->rights &= ~(R_FD_READ | R_FD_READDIR);
	if (!wr || S_ISDIR(st.st_mode))
		f->rights &= ~R_FD_WRITE;
	f->opened = true;
	p->nfiles++;
	e = put32(p, a[8].u.i32, n);
	if (e)
		fd_release(p, f);
	return e;
}

static uint32_t path_filestat_get(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	char name[NAME_MAX + 1];
	struct stat st;
	uint32_t e = E_BADF;
	int dfd, r;

	e = path_at(p, a[0].u.i32, a[2].u.i32, a[3].u.i32,
		    a[1].u.i32 & LOOKUP_FOLLOW, &dfd, name);
	if (e)
		return e;
	r = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
	e = r ? werr(errno) : E_SUCCESS;
	close(dfd);
	return e ? e : put_filestat(p, a[4].u.i32, &st);
}

static uint32_t path_filestat_set_times(wasi_p1 *p, wasm_exec *x,
					const wasm_val *a)
{
	char name[NAME_MAX + 1];
	struct timespec ts[2];
	uint32_t e = E_BADF;
	int dfd, r;

	e = fst_times(a[4].u.i64, a[5].u.i64, a[6].u.i32, ts);
	if (e)
		return e;
	e = path_at(p, a[0].u.i32, a[2].u.i32, a[3].u.i32,
		    a[1].u.i32 & LOOKUP_FOLLOW, &dfd, name);
	if (e)
		return e;
	r = utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW);
	e = r ? werr(errno) : E_SUCCESS;
	close(dfd);
	return e;
}

static uint32_t path_create_directory(wasi_p1 *p, wasm_exec *x,
				      const wasm_val *a)
{
	char name[NAME_MAX + 1];
	uint32_t e = E_BADF;
	int dfd, r;

	e = path_at(p, a[0].u.i32, a[1].u.i32, a[2].u.i32, false, &dfd, name);
	if (e)
		return e;
	r = mkdirat(dfd, name, 0777);
	e = r ? werr(errno) : E_SUCCESS;
	close(dfd);
	return e;
}

static uint32_t unlink_at(wasi_p1 *p, const wasm_val *a, int flags)
{
	char name[NAME_MAX + 1];
	uint32_t e = E_BADF;
	int dfd, r;

	e = path_at(p, a[0].u.i32, a[1].u.i32, a[2].u.i32, false, &dfd, name);
	if (e)
		return e;
	r = unlinkat(dfd, name, flags);
	e = r ? werr(errno) : E_SUCCESS;
	/* the preopen itself ("." after resolution) is never removed */
	if (!strcmp(name, "."))
		e = E_INVAL;
	close(dfd);
	return e;
}

static uint32_t path_remove_directory(wasi_p1 *p, wasm_exec *x,
				      const wasm_val *a)
{
	return unlink_at(p, a, AT_REMOVEDIR);
}

static uint32_t path_unlink_file(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	return unlink_at(p, a, 0);
}

static uint32_t path_rename(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	char n1[NAME_MAX + 1], n2[NAME_MAX + 1];
	uint32_t e = E_BADF;
	int d1, d2, r;

	e = path_at(p, a[0].u.i32, a[1].u.i32, a[2].u.i32, false, &d1, n1);
	if (e)
		return e;
	e = path_at(p, a[3].u.i32, a[4].u.i32, a[5].u.i32, false, &d2, n2);
	if (e) {
		close(d1);
		return e;
	}
	r = renameat(d1, n1, d2, n2);
	e = r ? werr(errno) : E_SUCCESS;
	close(d1);
	close(d2);
	return e;
}

static uint32_t path_link(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	char n1[NAME_MAX + 1], n2[NAME_MAX + 1];
	uint32_t e = E_BADF;
	int d1, d2, r;

	e = path_at(p, a[0].u.i32, a[2].u.i32, a[3].u.i32,
		    a[1].u.i32 & LOOKUP_FOLLOW, &d1, n1);
	if (e)
		return e;
	e = path_at(p, a[4].u.i32, a[5].u.i32, a[6].u.i32, false, &d2, n2);
	if (e) {
		close(d1);
		return e;
	}
	r = linkat(d1, n1, d2, n2, 0);
	e = r ? werr(errno) : E_SUCCESS;
	close(d1);
	close(d2);
	return e;
}

static uint32_t path_symlink(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	const uint8_t *s = gmem(p, a[0].u.i32, a[1].u.i32);
	char name[NAME_MAX + 1], *target;
	uint32_t e = E_BADF;
	int dfd, r;

	if (s == NULL)
		return E_FAULT;
	if (a[1].u.i32 >= PATH_MAX) /* as symlink(2) refuses it */
		return E_NAMETOOLONG;
	if (memchr(s, '\0', a[1].u.i32) != NULL)
		return E_INVAL;
	/* an absolute target could never be followed inside the sandbox */
	if (a[1].u.i32 > 0 && s[0] == '/')
		return E_PERM;
	e = path_at(p, a[2].u.i32, a[3].u.i32, a[4].u.i32, false, &dfd, name);
	if (e)
		return e;
	target = strndup((const char *)s, a[1].u.i32);
	if (target == NULL) {
		close(dfd);
		return E_NOMEM;
	}
	r = symlinkat(target, dfd, name);
	e = r ? werr(errno) : E_SUCCESS;
	free(target);
	close(dfd);
	return e;
}

static uint32_t path_readlink(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	char name[NAME_MAX + 1];
	uint32_t len = a[4].u.i32, e;
	uint8_t *b = gmem(p, a[3].u.i32, len);
	ssize_t r;
	int dfd;

	if (b == NULL)
		return E_FAULT;
	e = path_at(p, a[0].u.i32, a[1].u.i32, a[2].u.i32, false, &dfd, name);
	if (e)
		return e;
	r = readlinkat(dfd, name, (char *)b, len);
	e = r < 0 ? werr(errno) : E_SUCCESS;
	close(dfd);
	return e ? e : put32(p, a[5].u.i32, (uint32_t)r);
}

/* ---- poll_oneoff -------------------------------------------------------- */

/* A clock subscription's deadline in monotonic time (`start`: the call's). */
static uint64_t sub_deadline(wasi_p1 *p, const uint8_t *s, uint64_t start)
{
	uint64_t t = ld64(s + 24), w;

	if (ld16(s + 40) & 1) { /* abstime */
		if (ld32(s + 16) != 0)
			return t; /* the monotonic (or a cputime) clock */
		w = wall_ns(p);
		return t > w ? start + (t - w) : start;
	}
	return start + t < start ? UINT64_MAX : start + t;
}

/*
 * Clock subscriptions wait on the ctx clock (the earliest deadline is
 * slept to, unless something is ready now); fd subscriptions are always
 * ready (files never block; stdio reads block in fd_read instead), and
 * so is a subscription in error.  Each clock reports once its own
 * deadline has passed.
 */
static uint32_t poll_oneoff(wasi_p1 *p, wasm_exec *x, const wasm_val *a)
{
	uint32_t nsubs = a[2].u.i32, nev = 0;
	const uint8_t *in = gmem(p, a[0].u.i32, 48ull * nsubs);
	uint8_t *out = gmem(p, a[1].u.i32, 32ull * nsubs);
	uint64_t start, now, deadline = UINT64_MAX;
	bool immediate = false;

	if (in == NULL || out == NULL)
		return E_FAULT;
	if (nsubs == 0)
		return E_INVAL;
	start = now = p->ctx->clock.now(p->ctx->clock.env);
	/* pass 1: anything ready now, else the earliest clock deadline */
	for (uint32_t i = 0; i < nsubs; i++) {
		const uint8_t *s = in + 48 * i;
		uint64_t d;

		if (s[8] != 0 || ld32(s + 16) > 3) {
			immediate = true;
			continue;
		}
		d = sub_deadline(p, s, start);
		if (d < deadline)
			deadline = d;
	}
	if (!immediate && deadline != UINT64_MAX && deadline > now) {
		p->ctx->clock.sleep_until(p->ctx->clock.env, deadline);
		now = p->ctx->clock.now(p->ctx->clock.env);
	}
	/* pass 2: report what is ready */
	for (uint32_t i = 0; i < nsubs; i++) {
		const uint8_t *s = in + 48 * i;
		uint8_t *ev = out + 32 * nev;
		uint32_t err = E_SUCCESS;
		uint64_t nbytes = 0;

		if (s[8] == 0) {
			if (ld32(s + 16) > 3)
				err = E_INVAL;
			else if (now < sub_deadline(p, s, start))
				continue;
		} else if (s[8] <= 2) {
			p1_fd *f = fd_get(p, ld32(s + 16));

			if (f == NULL)
				err = E_BADF;
			else if (f->kind == P1_FILE && s[8] == 1) {
				struct stat st;
				off_t pos = lseek(f->fd, 0, SEEK_CUR);

				if (fstat(f->fd, &st) == 0 && pos >= 0 &&
				    st.st_size > pos)
					nbytes = (uint64_t)(st.st_size - pos);
			}
		} else {
			err = E_INVAL;
		}
		memset(ev, 0, 32);
		memcpy(ev, s, 8); /* userdata */
		st16(ev + 8, (uint16_t)err);
		ev[10] = s[8];
		st64(ev + 16, nbytes);
		nev++;
	}
	return put32(p, a[3].u.i32, nev);
}

/* ---- linking ------------------------------------------------------------ */

/* Signatures: parameter letters (i = i32, I = i64), then ':' results. */
static const struct p1_fn {
	const char *name, *sig;
	p1_impl impl;
} fns[] = {
	{"args_get", "ii:i", args_get},
	{"args_sizes_get", "ii:i", args_sizes_get},
	{"environ_get", "ii:i", environ_get},
	{"environ_sizes_get", "ii:i", environ_sizes_get},
	{"clock_res_get", "ii:i", clock_res_get},
	{"clock_time_get", "iIi:i", clock_time_get},
	{"fd_advise", "iIIi:i", fd_advise},
	{"fd_allocate", "iII:i", fd_allocate},
	{"fd_close", "i:i", fd_close},
	{"fd_datasync", "i:i", fd_datasync},
	{"fd_fdstat_get", "ii:i", fd_fdstat_get},
	{"fd_fdstat_set_flags", "ii:i", fd_fdstat_set_flags},
	{"fd_fdstat_set_rights", "iII:i", fd_fdstat_set_rights},
	{"fd_filestat_get", "ii:i", fd_filestat_get},
	{"fd_filestat_set_size", "iI:i", fd_filestat_set_size},
	{"fd_filestat_set_times", "iIIi:i", fd_filestat_set_times},
	{"fd_pread", "iiiIi:i", fd_pread},
	{"fd_prestat_get", "ii:i", fd_prestat_get},
	{"fd_prestat_dir_name", "iii:i", fd_prestat_dir_name},
	{"fd_pwrite", "iiiIi:i", fd_pwrite},
	{"fd_read", "iiii:i", fd_read},
	{"fd_readdir", "iiiIi:i", fd_readdir},
	{"fd_renumber", "ii:i", fd_renumber},
	{"fd_seek", "iIii:i", fd_seek},
	{"fd_sync", "i:i", fd_sync},
	{"fd_tell", "ii:i", fd_tell},
	{"fd_write", "iiii:i", fd_write},
	{"path_create_directory", "iii:i", path_create_directory},
	{"path_filestat_get", "iiiii:i", path_filestat_get},
	{"path_filestat_set_times", "iiiiIIi:i", path_filestat_set_times},
	{"path_link", "iiiiiii:i", path_link},
	{"path_open", "iiiiiIIii:i", path_open},
	{"path_readlink", "iiiiii:i", path_readlink},
	{"path_remove_directory", "iii:i", path_remove_directory},
	{"path_rename", "iiiiii:i", path_rename},
	{"path_symlink", "iiiii:i", path_symlink},
	{"path_unlink_file", "iii:i", path_unlink_file},
	{"poll_oneoff", "iiii:i", poll_oneoff},
	{"proc_exit", "i:", proc_exit},
	{"proc_raise", "i:i", proc_raise},
	{"random_get", "ii:i", random_get},
	{"sched_yield", ":i", sched_yield_},
	{"sock_accept", "iii:i", sock_unsupported},
	{"sock_recv", "iiiiii:i", sock_unsupported},
	{"sock_send", "iiiii:i", sock_unsupported},
	{"sock_shutdown", "ii:i", sock_unsupported},
};

#define NFNS (sizeof fns / sizeof fns[0])

static wasm_host_status dispatch(wasm_exec *x, void *env, const wasm_val *args,
				 wasm_val *results)
{
	const p1_slot *s = env;
	uint32_t e;
	uint64_t fuel, owed;

	s->p->touched = 0;
	e = s->impl(s->p, x, args);
	fuel = wasm_exec_fuel(x);
	owed = s->p->touched / P1_BYTES_PER_FUEL;
	if (fuel != UINT64_MAX && owed > 0)
		wasm_exec_set_fuel(x, fuel > owed ? fuel - owed : 0);
	if (e == P1_TRAPPED)
		return WASM_HOST_TRAP;
	if (s->has_result) {
		results[0].type = WASM_I32;
		results[0].u.i32 = e;
	}
	return WASM_HOST_OK;
}

/* Does the declared type match the signature string? */
static bool sig_matches(const wasm_functype *ft, const char *sig)
{
	uint32_t i = 0;

	for (; *sig != ':'; sig++, i++)
		if (i >= ft->nparams ||
		    ft->params[i] != (*sig == 'I' ? WASM_I64 : WASM_I32))
			return false;
	if (i != ft->nparams)
		return false;
	sig++;
	return ft->nresults == strlen(sig) &&
	       (ft->nresults == 0 || ft->results[0] == WASM_I32);
}

bool wasi_p1_is_import(const wasm_import *im)
{
	static const char mod[] = WASI_P1_MODULE;

	return im->module.len == sizeof mod - 1 &&
	       !memcmp(im->module.ptr, mod, sizeof mod - 1);
}

int wasi_p1_link(wasi_p1 *p, wasm_store *s, const wasm_module *m,
		 wasm_extern *imports, uint32_t *bad)
{
	uint32_t n = 0;

	*bad = UINT32_MAX;
	/* host funcs point into slots, which therefore never move */
	if (p->slots != NULL)
		return -1;
	for (uint32_t i = 0; i < m->nimports; i++)
		n += wasi_p1_is_import(&m->imports[i]);
	p->slots = calloc(n ? n : 1, sizeof *p->slots);
	if (p->slots == NULL)
		return -1;
	for (uint32_t i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];
		const wasm_functype *ft;
		p1_slot *sl;
		size_t k;

		if (!wasi_p1_is_import(im))
			continue;
		*bad = i;
		if (im->kind != WASM_EXTERN_FUNC)
			return -1;
		ft = &m->types[im->u.func_typeidx];
		for (k = 0; k < NFNS; k++)
			if (strlen(fns[k].name) == im->name.len &&
			    !memcmp(fns[k].name, im->name.ptr, im->name.len))
				break;
		if (k == NFNS || !sig_matches(ft, fns[k].sig))
			return -1;
		sl = &p->slots[p->nslots++];
		sl->p = p;
		sl->impl = fns[k].impl;
		sl->has_result = ft->nresults == 1;
		imports[i].kind = WASM_EXTERN_FUNC;
		imports[i].u.func = wasm_func_new_host(s, ft, dispatch, sl);
		if (imports[i].u.func == NULL) {
			*bad = UINT32_MAX;
			return -1;
		}
	}
	return 0;
}
