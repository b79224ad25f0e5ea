/*
 * internal.h - what the WASI 0.2 host's files share: the context, its
 * table of host objects (the reps of the guest's handles), the resource
 * types, and helpers that build the interface's result values.
 *
 * Contract: an object lives in ctx->objs[rep] from the call that hands
 * out an own handle until the guest drops it (the resource's host_dtor)
 * or the ctx is freed.  Objects never point at each other: a stream made
 * from a descriptor holds its own dup of the fd, a pollable holds plain
 * data, so drop order does not matter.
 */
#ifndef HOSTEL_WASI_INTERNAL_H
#define HOSTEL_WASI_INTERNAL_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>

#include "wasi/wasi.h"

#define WASI_V "@0.2.12"

/*
 * Host files a guest may hold open at once (issue 18): wasi:filesystem
 * descriptors, streams on them and directory-entry streams each hold an
 * OS file descriptor, and preview1 counts its path_open files the same
 * way.  The daemon's own descriptors (65,536 under hosteld.service) are
 * shared by every store and every connection, so one guest must not
 * spend them: past this open-at (and the calls that make streams) fail
 * with error-code insufficient-memory (0.2 has no too-many-open-files
 * case), path_open with errno mfile; get-directories, which cannot fail,
 * traps.  max_handles alone (100,000 by default) would not stop it.
 */
#define WASI_MAX_OPEN_FILES 1024u

typedef enum wasi_obj_kind {
	WOBJ_FREE = 0,
	WOBJ_INPUT,	 /* input-stream */
	WOBJ_OUTPUT,	 /* output-stream */
	WOBJ_POLLABLE,	 /* pollable */
	WOBJ_ERROR,	 /* wasi:io/error */
	WOBJ_DESCRIPTOR, /* wasi:filesystem descriptor */
	WOBJ_DIRSTREAM,	 /* directory-entry-stream */
	WOBJ_TERM_IN,	 /* terminal-input */
	WOBJ_TERM_OUT,	 /* terminal-output */
	WOBJ_NKINDS
} wasi_obj_kind;

typedef enum wasi_stream_src {
	WSTREAM_STDIN,	/* fd = the ctx's stdin fd (not owned) */
	WSTREAM_STDOUT, /* which = 1 or 2 */
	WSTREAM_FILE,	/* fd owned, offset */
	WSTREAM_APPEND, /* fd owned, O_APPEND semantics */
	WSTREAM_EMPTY,	/* reads: closed; writes: discarded */
} wasi_stream_src;

typedef enum wasi_poll_kind {
	WPOLL_READY,
	WPOLL_DEADLINE, /* monotonic ns */
	WPOLL_FD,	/* poll(2) on fd for events (fd not owned) */
} wasi_poll_kind;

/*
 * Where a descriptor, a stream on a file or a directory stream came
 * from, so that a restored store can open it again (durable.c): the
 * preopen (its index in ctx->preopens) and the path under it, the
 * guest's open-at paths joined with '/' (NULL: the preopen itself),
 * resolved again from the preopen as open-at resolved them; follow: the
 * last component was opened following a symlink.  known false: no
 * origin to open it by (the joined path would pass
 * WASI_ORIGIN_PATH_MAX), and a snapshot refuses it.  Each object holds
 * its own copy of the path.
 */
#define WASI_ORIGIN_PATH_MAX 4096u

typedef struct wasi_origin {
	uint32_t preopen;
	char *path;
	bool follow, known;
} wasi_origin;

typedef struct wasi_obj {
	wasi_obj_kind kind;
	/* descriptors, file streams, directory streams (above) */
	wasi_origin origin;
	/*
	 * Not 0: an errno.  The object came back from a snapshot without
	 * its file (it vanished, or cannot be opened again): it holds no
	 * OS fd, and every operation on it fails with this error.
	 */
	int lost;
	union {
		struct {
			wasi_stream_src src;
			int fd, which;
			uint64_t offset;
			bool closed;
		} stream;
		struct {
			wasi_poll_kind kind;
			uint64_t deadline;
			int fd;
			short events;
		} poll;
		struct {
			int err; /* errno */
		} error;
		struct {
			int fd;
			uint32_t flags; /* descriptor-flags */
			bool dir;
		} desc;
		struct {
			DIR *dir;
			uint64_t pos; /* entries returned so far */
		} dirs;
	} u;
} wasi_obj;

typedef struct wasi_preopen {
	int fd;
	char *guest;
} wasi_preopen;

struct wasi_ctx {
	char **args;
	uint32_t nargs;
	char **env; /* key, value pairs */
	uint32_t nenv;
	int in_fd, out_fd, err_fd;
	wasi_output_fn out_fn;
	void *out_env;
	wasi_clock clock;
	wasi_preopen *preopens;
	uint32_t npreopens;
	bool exited;
	int exit_code;
	uint64_t rng; /* insecure random state (per ctx) */

	/* WASI 0.3 waits (clocks_p3.c): unordered; armed = last arm() */
	struct wasi_wait *waits;
	uint32_t nwaits, waits_cap;
	uint64_t wait_seq, armed;
	cm_store *wait_store; /* the store whose teardown forgets them */

	/* WASI 0.3 stdio streams (cli_p3.c) */
	struct wasi_pipe *pipes;
	cm_store *pipe_store; /* the store whose teardown forgets them */
	uint64_t pipe_seq;    /* the next pipe's serial */
	/* WASI 0.3 filesystem (filesystem_p3.c): its descriptor type and
	 * the bridges to the 0.2 methods */
	const cabi_resource_type *rt_desc3;
	struct wasi_p3_bridge *bridges;

	wasi_obj *objs; /* index = rep; [0] unused */
	uint32_t nobjs, cap;
	uint32_t nfiles; /* objects owning an OS fd (WASI_MAX_OPEN_FILES) */
	const cabi_resource_type *rt[WOBJ_NKINDS];
};

/*
 * Origins: the preopen itself (path NULL); a copy; child: what open-at
 * of `path` (following its last component or not) under parent opens
 * (unknown when the parent's is, or past WASI_ORIGIN_PATH_MAX).  -1 out
 * of memory (out untouched).
 */
wasi_origin wasi_origin_preopen(uint32_t preopen);
int wasi_origin_copy(wasi_origin *out, const wasi_origin *in);
int wasi_origin_child(wasi_origin *out, const wasi_origin *parent,
		      const char *path, bool follow);

/* The object table. */
int wasi_obj_new(wasi_ctx *ctx, wasi_obj_kind k, uint32_t *rep);
wasi_obj *wasi_obj_get(wasi_ctx *ctx, const cm_val *handle, wasi_obj_kind k);
void wasi_obj_release(wasi_ctx *ctx, uint32_t rep);
/*
 * Room for one more object owning an OS fd?  false: at
 * WASI_MAX_OPEN_FILES.  Whoever hands such an object out counts it with
 * wasi_file_opened; obj_close uncounts it when it closes the fd.
 */
bool wasi_file_room(const wasi_ctx *ctx);
void wasi_file_opened(wasi_ctx *ctx);

/* An own handle value for object rep of kind k. */
cm_val wasi_own(wasi_ctx *ctx, wasi_obj_kind k, uint32_t rep);
/* Make an object and its own handle in *out; -1 out of memory. */
int wasi_new_own(wasi_ctx *ctx, wasi_obj_kind k, cm_val *out, wasi_obj **o);

/* Trap helpers: "wasi: <fn>: unknown handle", out of memory. */
int wasi_bad_handle(cm_host_call *call, const char *what);
int wasi_oom(cm_host_call *call);

/* result<T,E> values: ok/err with an empty payload slot to fill. */
int wasi_result(cm_val *out, bool ok, cm_val **payload);
/* ok / err with no payload (result<_, E> ok, or E absent). */
cm_val wasi_result_unit(bool ok);
/* list<u8> from bytes (copied into the value's byte form, val.h). */
int wasi_bytes(cm_val *out, const uint8_t *p, size_t n);
/*
 * The n bytes of a list<u8> argument (byte form, as every lift makes
 * it; never NULL when it returns, even for an empty list), or NULL
 * after trapping "wasi: <what>: list<u8> not in byte form" for a value
 * a host made by hand in element form.
 */
const uint8_t *wasi_list_bytes(cm_host_call *call, const cm_val *v,
			       const char *what);

/* Waiting: true when ready now; block until one of them is. */
bool wasi_poll_ready(wasi_ctx *ctx, const wasi_obj *p);
void wasi_poll_block(wasi_ctx *ctx, const wasi_obj *const *ps, uint32_t n);

/* Writing to the guest's stdout/stderr (fd or capture callback). */
void wasi_stdout_write(wasi_ctx *ctx, int which, const uint8_t *p, size_t n);

/* Per-interface registration (cli.c, cli_p3.c, clocks.c, clocks_p3.c,
 * io.c, filesystem.c). */
/* deny.c: the linker's fallback for every "wasi:" function not served */
int wasi_deny(cm_host_call *call, void *env, const cm_val *args,
	      uint32_t nargs, cm_val *res, uint32_t nres);
int wasi_link_cli(wasi_ctx *ctx, cm_linker *l);
int wasi_link_clocks_random(wasi_ctx *ctx, cm_linker *l);
int wasi_link_io(wasi_ctx *ctx, cm_linker *l);
int wasi_link_filesystem(wasi_ctx *ctx, cm_linker *l);
int wasi_link_clocks_p3(wasi_ctx *ctx, cm_linker *l);
int wasi_link_cli_p3(wasi_ctx *ctx, cm_linker *l);
/* A 0.3 stdio stream's state (cli_p3.c); forget them all (ctx freed). */
typedef struct wasi_pipe wasi_pipe;
void wasi_pipes_free(wasi_ctx *ctx);
/* Snapshots of the 0.3 stdio streams' host ends (cli_p3.c). */
void wasi_pipes_durable(wasi_ctx *ctx, cm_store *s);
/*
 * WASI 0.3 byte streams (cli_p3.c) for stdio and, in filesystem_p3.c,
 * for descriptors: which is a PIPE_*; fd a descriptor's dup the pipe
 * takes (counted in nfiles; closed with the pipe, or at once when the
 * call fails), -1 for stdio; origin the descriptor's (copied: a
 * snapshot opens the file again by it), NULL for stdio.
 *  - wasi_p3_write_stream: the guest's stream<u8> in *arg to the sink,
 *    the import's result (a future, or the async shape) in res; fail
 *    not 0: the host's end is dropped at once and the result is that
 *    errno.
 *  - wasi_p3_read_stream: res is tuple<stream<u8>, future<result<_,
 *    E>>> of the source from offset; fail not 0: the stream ends at
 *    once and the future answers that errno (the stream may then be
 *    of any element type: it never carries one).
 */
enum {
	PIPE_STDIN,
	PIPE_STDOUT,
	PIPE_STDERR,
	PIPE_FILE_IN,  /* descriptor.read-via-stream */
	PIPE_FILE_OUT, /* descriptor.write- and append-via-stream */
	PIPE_DIR,      /* descriptor.read-directory */
};
/*
 * The next entry of dir as a value of the stream's element type t in
 * *out: 1; 0 at its end; -errno.
 */
typedef int (*wasi_dir_entry_fn)(const cm_type *t, DIR *dir, cm_val *out);
/* read-directory's (filesystem_p3.c): a directory-entry of its type. */
int wasi_p3_dir_entry(const cm_type *t, DIR *dir, cm_val *out);
/*
 * read-directory's tuple<stream<directory-entry>, future<result<_, E>>>
 * in res over dir (a counted open directory the pipe takes, closed at
 * once when the call fails): entries are written at scheduling steps
 * (cm_host_end_defer), entry making each.
 */
int wasi_p3_dir_stream(cm_host_call *call, wasi_ctx *ctx, cm_val *res,
		       DIR *dir, const wasi_origin *origin,
		       wasi_dir_entry_fn entry);
int wasi_p3_write_stream(cm_host_call *call, wasi_ctx *ctx,
			 const cm_val *arg, cm_val *res, int which, int fd,
			 const wasi_origin *origin, uint64_t offset, bool append,
			 int fail);
int wasi_p3_read_stream(cm_host_call *call, wasi_ctx *ctx, cm_val *res,
			int which, int fd, const wasi_origin *origin,
			uint64_t offset, int fail);
/*
 * The case of error type t (a 0.3 error-code enum or variant) for errno
 * e, by the label 0.2 gives e (wasi_fs_errno_label); its `io` case when
 * t has no such label, case 0 when it has no `io` either.
 */
uint32_t wasi_p3_error_case(const cm_type *t, int e);
/*
 * Origins in the 0.3 streams' snapshot descriptions (durable.c's
 * encoding): put appends o (-1: unknown, or no room); get reads one and
 * finds its preopen (-1: malformed or not configured), *used its bytes;
 * reopen opens it again as a file with access (DF_READ, DF_WRITE) or a
 * directory: a counted fd, or -1 and the errno in *e.
 */
int wasi_origin_put(wasi_ctx *ctx, const wasi_origin *o, uint8_t *buf,
		    size_t cap, size_t *len);
int wasi_origin_get(wasi_ctx *ctx, const uint8_t *p, size_t n, wasi_origin *o,
		    size_t *used);
int wasi_origin_reopen(wasi_ctx *ctx, const wasi_origin *o, bool dir,
		       uint32_t access, int *e);
/* The 0.2 wasi:filesystem error-code label of errno e, of case code
 * (NULL: none) (filesystem.c). */
const char *wasi_fs_errno_label(int e);
const char *wasi_fs_label_at(uint32_t code);
/* The 0.2 implementation of [method]descriptor.NAME (filesystem.c). */
cm_host_fn wasi_fs_p2_method(const char *name);
/* The 0.2 get-directories, and the destructor of WASI objects. */
int wasi_fs_get_directories(cm_host_call *call, void *env,
			    const cm_val *args, uint32_t nargs, cm_val *res,
			    uint32_t nres);
void wasi_obj_dtor(void *env, uint64_t rep);
int wasi_link_filesystem_p3(wasi_ctx *ctx, cm_linker *l);
/* Forget every 0.3 wait (the ctx is being freed); no arm call. */
void wasi_waits_free(wasi_ctx *ctx);
/* Snapshots of the 0.3 waits (clocks_p3.c) and resources (durable.c). */
void wasi_waits_durable(wasi_ctx *ctx, cm_store *s);
int wasi_resources_durable(wasi_ctx *ctx, cm_store *s);

/* The wasi:filesystem error-code case for errno e. */
uint32_t wasi_fs_errno_code(int e);

#endif
