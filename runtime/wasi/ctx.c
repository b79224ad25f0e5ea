/*
 * ctx.c - the WASI context: configuration (args, env, stdio, preopens,
 * clock), the table of host objects behind the guest's handles, the
 * clock sources, waiting on pollables, and registration with a linker.
 *
 * Contract: see wasi.h and internal.h.  Nothing here is global: every
 * piece of state hangs off the wasi_ctx.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - wasi_obj_new: ctx->objs grows by doubling, one slot per live
 *    object; every object is behind a guest handle, so max_handles per
 *    instance bounds it (a freed slot is reused).  Objects holding an
 *    OS fd are also counted against WASI_MAX_OPEN_FILES (1024).
 *  - wasi_bytes: a list<u8> of n bytes (val.h byte form); every caller
 *    bounds n first (READ_MAX, FS_READ_MAX, MAX_RANDOM_BYTES).
 *  - wasi_poll_block: pollfds for at most the poll's list (POLL_MAX).
 *  - wasi_ctx_push_arg, wasi_ctx_push_env, wasi_ctx_preopen: the
 *    embedder's configuration (hosteld: the service's config, at most
 *    VARLINK_MESSAGE_MAX; preopens at most SERVICE_WASI_MAX_PREOPENS).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wasi/internal.h"

/* ---- clocks ------------------------------------------------------------- */

static uint64_t sys_now(void *env)
{
	struct timespec ts;

	(void)env;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sys_wall(void *env, uint64_t *sec, uint32_t *nsec)
{
	struct timespec ts;

	(void)env;
	clock_gettime(CLOCK_REALTIME, &ts);
	*sec = (uint64_t)ts.tv_sec;
	*nsec = (uint32_t)ts.tv_nsec;
}

static void sys_sleep_until(void *env, uint64_t deadline)
{
	struct timespec ts;

	(void)env;
	ts.tv_sec = (time_t)(deadline / 1000000000u);
	ts.tv_nsec = (long)(deadline % 1000000000u);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

void wasi_clock_system(wasi_clock *c)
{
	struct timespec ts;

	c->now = sys_now;
	c->wall = sys_wall;
	c->sleep_until = sys_sleep_until;
	c->resolution_ns = 1;
	if (clock_getres(CLOCK_MONOTONIC, &ts) == 0)
		c->resolution_ns = (uint64_t)ts.tv_sec * 1000000000u +
				   (uint64_t)ts.tv_nsec;
	c->env = NULL;
	c->arm = NULL;
	c->arm_env = NULL;
}

static uint64_t v_now(void *env)
{
	return ((wasi_vclock *)env)->mono_ns;
}

static void v_wall(void *env, uint64_t *sec, uint32_t *nsec)
{
	const wasi_vclock *vc = env;

	*sec = vc->wall_ns / 1000000000u;
	*nsec = (uint32_t)(vc->wall_ns % 1000000000u);
}

static void v_sleep_until(void *env, uint64_t deadline)
{
	wasi_vclock *vc = env;

	if (deadline > vc->mono_ns) {
		vc->slept_ns += deadline - vc->mono_ns;
		vc->wall_ns += deadline - vc->mono_ns;
		vc->mono_ns = deadline;
	}
}

void wasi_clock_virtual(wasi_clock *c, wasi_vclock *vc)
{
	c->now = v_now;
	c->wall = v_wall;
	c->sleep_until = v_sleep_until;
	c->resolution_ns = 1;
	c->env = vc;
	c->arm = NULL;
	c->arm_env = NULL;
}

/* ---- context ------------------------------------------------------------ */

wasi_ctx *wasi_ctx_new(void)
{
	wasi_ctx *ctx = calloc(1, sizeof *ctx);

	if (ctx == NULL)
		return NULL;
	ctx->in_fd = 0;
	ctx->out_fd = 1;
	ctx->err_fd = 2;
	wasi_clock_system(&ctx->clock);
	ctx->armed = WASI_NO_DEADLINE;
	ctx->rng = 0x853c49e6748fea9bull ^ (uint64_t)(uintptr_t)ctx;
	return ctx;
}

/* Close what o owns; an owned fd leaves the count of open files. */
static void obj_close(wasi_ctx *ctx, wasi_obj *o)
{
	bool file = false;

	switch (o->kind) {
	case WOBJ_INPUT:
	case WOBJ_OUTPUT:
		if ((o->u.stream.src == WSTREAM_FILE ||
		     o->u.stream.src == WSTREAM_APPEND) &&
		    o->u.stream.fd >= 0) {
			close(o->u.stream.fd);
			file = true;
		}
		break;
	case WOBJ_DESCRIPTOR:
		if (o->u.desc.fd >= 0) {
			close(o->u.desc.fd);
			file = true;
		}
		break;
	case WOBJ_DIRSTREAM:
		if (o->u.dirs.dir != NULL) {
			closedir(o->u.dirs.dir);
			file = true;
		}
		break;
	default:
		break;
	}
	if (file && ctx->nfiles > 0)
		ctx->nfiles--;
	free(o->origin.path);
	o->origin.path = NULL;
	o->kind = WOBJ_FREE;
}

void wasi_ctx_free(wasi_ctx *ctx)
{
	if (ctx == NULL)
		return;
	for (uint32_t i = 0; i < ctx->nargs; i++)
		free(ctx->args[i]);
	free(ctx->args);
	for (uint32_t i = 0; i < 2 * ctx->nenv; i++)
		free(ctx->env[i]);
	free(ctx->env);
	for (uint32_t i = 0; i < ctx->npreopens; i++) {
		close(ctx->preopens[i].fd);
		free(ctx->preopens[i].guest);
	}
	free(ctx->preopens);
	for (uint32_t i = 1; i < ctx->nobjs; i++)
		obj_close(ctx, &ctx->objs[i]);
	free(ctx->objs);
	wasi_waits_free(ctx);
	wasi_pipes_free(ctx);
	free(ctx->bridges);
	free(ctx);
}

static int grow(void *pv, uint32_t n, uint32_t *cap, size_t size)
{
	void **p = pv;
	uint32_t c;
	void *v;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 8;
	v = realloc(*p, c * size);
	if (v == NULL)
		return -1;
	*p = v;
	*cap = c;
	return 0;
}

int wasi_ctx_push_arg(wasi_ctx *ctx, const char *arg)
{
	char **v = realloc(ctx->args, (ctx->nargs + 1) * sizeof *v);
	char *s;

	if (v == NULL)
		return -1;
	ctx->args = v;
	s = strdup(arg);
	if (s == NULL)
		return -1;
	v[ctx->nargs++] = s;
	return 0;
}

int wasi_ctx_push_env(wasi_ctx *ctx, const char *key, const char *value)
{
	char **v = realloc(ctx->env, 2 * (ctx->nenv + 1) * sizeof *v);
	char *k, *x;

	if (v == NULL)
		return -1;
	ctx->env = v;
	k = strdup(key);
	x = strdup(value);
	if (k == NULL || x == NULL) {
		free(k);
		free(x);
		return -1;
	}
	v[2 * ctx->nenv] = k;
	v[2 * ctx->nenv + 1] = x;
	ctx->nenv++;
	return 0;
}

void wasi_ctx_set_stdio(wasi_ctx *ctx, int in_fd, int out_fd, int err_fd)
{
	ctx->in_fd = in_fd;
	ctx->out_fd = out_fd;
	ctx->err_fd = err_fd;
}

void wasi_ctx_set_output(wasi_ctx *ctx, wasi_output_fn fn, void *env)
{
	ctx->out_fn = fn;
	ctx->out_env = env;
}

void wasi_ctx_set_clock(wasi_ctx *ctx, const wasi_clock *c)
{
	ctx->clock = *c;
}

int wasi_ctx_preopen(wasi_ctx *ctx, const char *host_path,
		     const char *guest_path)
{
	wasi_preopen *v;
	int fd = open(host_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *g;

	if (fd < 0)
		return -1;
	v = realloc(ctx->preopens, (ctx->npreopens + 1) * sizeof *v);
	g = strdup(guest_path);
	if (v == NULL || g == NULL) {
		if (v != NULL)
			ctx->preopens = v;
		free(g);
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	ctx->preopens = v;
	v[ctx->npreopens].fd = fd;
	v[ctx->npreopens].guest = g;
	ctx->npreopens++;
	return 0;
}

bool wasi_ctx_exited(const wasi_ctx *ctx)
{
	return ctx->exited;
}

int wasi_ctx_exit_code(const wasi_ctx *ctx)
{
	return ctx->exit_code;
}

/* ---- objects ------------------------------------------------------------ */

wasi_origin wasi_origin_preopen(uint32_t preopen)
{
	return (wasi_origin){.preopen = preopen, .known = true};
}

int wasi_origin_copy(wasi_origin *out, const wasi_origin *in)
{
	char *p = NULL;

	if (in->path != NULL && (p = strdup(in->path)) == NULL)
		return -1;
	*out = *in;
	out->path = p;
	return 0;
}

int wasi_origin_child(wasi_origin *out, const wasi_origin *parent,
		      const char *path, bool follow)
{
	size_t pl = parent->path ? strlen(parent->path) : 0;
	size_t cl = strlen(path);
	char *p;

	if (!parent->known || pl + 1 + cl > WASI_ORIGIN_PATH_MAX) {
		*out = (wasi_origin){.known = false};
		return 0;
	}
	p = malloc(pl + 1 + cl + 1);
	if (p == NULL)
		return -1;
	/*
	 * A child's `..` never climbs above its parent (wasi_path_resolve
	 * stops at the descriptor it starts from), so the joined path
	 * resolved from the preopen names what the two steps named.
	 */
	if (pl > 0) {
		memcpy(p, parent->path, pl);
		p[pl] = '/';
		memcpy(p + pl + 1, path, cl + 1);
	} else {
		memcpy(p, path, cl + 1);
	}
	*out = (wasi_origin){.preopen = parent->preopen,
			     .path = p,
			     .follow = follow,
			     .known = true};
	return 0;
}

int wasi_obj_new(wasi_ctx *ctx, wasi_obj_kind k, uint32_t *rep)
{
	uint32_t i;

	for (i = 1; i < ctx->nobjs; i++)
		if (ctx->objs[i].kind == WOBJ_FREE)
			break;
	if (i == ctx->nobjs || ctx->nobjs == 0) {
		if (ctx->nobjs == 0)
			ctx->nobjs = 1; /* rep 0 stays unused */
		if (grow(&ctx->objs, ctx->nobjs, &ctx->cap, sizeof *ctx->objs))
			return -1;
		i = ctx->nobjs++;
	}
	memset(&ctx->objs[i], 0, sizeof ctx->objs[i]);
	ctx->objs[i].kind = k;
	*rep = i;
	return 0;
}

wasi_obj *wasi_obj_get(wasi_ctx *ctx, const cm_val *h, wasi_obj_kind k)
{
	if ((h->kind != CM_OWN && h->kind != CM_BORROW) ||
	    h->u.handle.rt != ctx->rt[k] || h->u.handle.rep == 0 ||
	    h->u.handle.rep >= ctx->nobjs)
		return NULL;
	if (ctx->objs[h->u.handle.rep].kind != k)
		return NULL;
	return &ctx->objs[h->u.handle.rep];
}

void wasi_obj_release(wasi_ctx *ctx, uint32_t rep)
{
	if (rep == 0 || rep >= ctx->nobjs)
		return;
	obj_close(ctx, &ctx->objs[rep]);
}

bool wasi_file_room(const wasi_ctx *ctx)
{
	return ctx->nfiles < WASI_MAX_OPEN_FILES;
}

void wasi_file_opened(wasi_ctx *ctx)
{
	ctx->nfiles++;
}

void wasi_obj_dtor(void *env, uint64_t rep)
{
	wasi_obj_release(env, (uint32_t)rep);
}

cm_val wasi_own(wasi_ctx *ctx, wasi_obj_kind k, uint32_t rep)
{
	return cm_val_handle(CM_OWN, ctx->rt[k], rep);
}

int wasi_new_own(wasi_ctx *ctx, wasi_obj_kind k, cm_val *out, wasi_obj **o)
{
	uint32_t rep;

	if (wasi_obj_new(ctx, k, &rep))
		return -1;
	*out = wasi_own(ctx, k, rep);
	*o = &ctx->objs[rep];
	return 0;
}

int wasi_bad_handle(cm_host_call *call, const char *what)
{
	return cm_host_call_trap(call, "wasi: %s: unknown handle", what);
}

int wasi_oom(cm_host_call *call)
{
	return cm_host_call_trap(call, "wasi: out of memory");
}

/* ---- values ------------------------------------------------------------- */

int wasi_result(cm_val *out, bool ok, cm_val **payload)
{
	if (cm_val_case_payload(out, CM_RESULT, ok ? 0 : 1))
		return -1;
	*payload = out->u.variant.payload;
	return 0;
}

cm_val wasi_result_unit(bool ok)
{
	return cm_val_case(CM_RESULT, ok ? 0 : 1);
}

int wasi_bytes(cm_val *out, const uint8_t *p, size_t n)
{
	if (n > UINT32_MAX) {
		*out = cm_val_bool(false);
		return -1;
	}
	return cm_val_bytes(out, p, (uint32_t)n);
}

const uint8_t *wasi_list_bytes(cm_host_call *call, const cm_val *v,
			       const char *what)
{
	static const uint8_t none[1];

	if (v->kind != CM_LIST ||
	    (v->u.list.n > 0 && v->u.list.bytes == NULL)) {
		cm_host_call_trap(call, "wasi: %s: list<u8> not in byte form",
				  what);
		return NULL;
	}
	return v->u.list.n > 0 ? v->u.list.bytes : none;
}

/* ---- output ------------------------------------------------------------- */

void wasi_stdout_write(wasi_ctx *ctx, int which, const uint8_t *p, size_t n)
{
	int fd = which == 2 ? ctx->err_fd : ctx->out_fd;

	if (ctx->out_fn != NULL) {
		ctx->out_fn(ctx->out_env, which, p, n);
		return;
	}
	while (fd >= 0 && n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* ---- waiting ------------------------------------------------------------ */

bool wasi_poll_ready(wasi_ctx *ctx, const wasi_obj *p)
{
	struct pollfd pfd;

	switch (p->u.poll.kind) {
	case WPOLL_READY:
		return true;
	case WPOLL_DEADLINE:
		return ctx->clock.now(ctx->clock.env) >= p->u.poll.deadline;
	case WPOLL_FD:
		pfd.fd = p->u.poll.fd;
		pfd.events = p->u.poll.events;
		pfd.revents = 0;
		return poll(&pfd, 1, 0) != 0;
	}
	return true;
}

/*
 * Sleep until the earliest deadline, or, when fds are involved, poll(2)
 * them with that deadline as the timeout.  Fd waits use the OS clock
 * for their timeout whatever the ctx clock is.
 */
void wasi_poll_block(wasi_ctx *ctx, const wasi_obj *const *ps, uint32_t n)
{
	uint64_t deadline = UINT64_MAX;
	struct pollfd *pfds;
	uint32_t nfds = 0;

	for (uint32_t i = 0; i < n; i++) {
		if (wasi_poll_ready(ctx, ps[i]))
			return;
		if (ps[i]->u.poll.kind == WPOLL_DEADLINE &&
		    ps[i]->u.poll.deadline < deadline)
			deadline = ps[i]->u.poll.deadline;
		nfds += ps[i]->u.poll.kind == WPOLL_FD;
	}
	if (nfds == 0) {
		if (deadline != UINT64_MAX)
			ctx->clock.sleep_until(ctx->clock.env, deadline);
		return;
	}
	pfds = calloc(nfds, sizeof *pfds);
	if (pfds == NULL)
		return; /* the caller sees nothing ready and retries */
	nfds = 0;
	for (uint32_t i = 0; i < n; i++)
		if (ps[i]->u.poll.kind == WPOLL_FD) {
			pfds[nfds].fd = ps[i]->u.poll.fd;
			pfds[nfds++].events = ps[i]->u.poll.events;
		}
	for (;;) {
		int timeout = -1;

		if (deadline != UINT64_MAX) {
			uint64_t now = ctx->clock.now(ctx->clock.env);
			uint64_t ms =
				deadline > now
					? (deadline - now + 999999) / 1000000
					: 0;

			timeout = ms > 1000000 ? 1000000 : (int)ms;
		}
		if (poll(pfds, nfds, timeout) != 0 || errno != EINTR)
			break;
	}
	free(pfds);
}

/* ---- registration ------------------------------------------------------- */

static const struct {
	const char *instance, *name;
	wasi_obj_kind kind;
} resources[] = {
	{"wasi:io/streams" WASI_V, "input-stream", WOBJ_INPUT},
	{"wasi:io/streams" WASI_V, "output-stream", WOBJ_OUTPUT},
	{"wasi:io/poll" WASI_V, "pollable", WOBJ_POLLABLE},
	{"wasi:io/error" WASI_V, "error", WOBJ_ERROR},
	{"wasi:filesystem/types" WASI_V, "descriptor", WOBJ_DESCRIPTOR},
	{"wasi:filesystem/types" WASI_V, "directory-entry-stream",
	 WOBJ_DIRSTREAM},
	{"wasi:cli/terminal-input" WASI_V, "terminal-input", WOBJ_TERM_IN},
	{"wasi:cli/terminal-output" WASI_V, "terminal-output", WOBJ_TERM_OUT},
};

int wasi_add_to_linker(wasi_ctx *ctx, cm_linker *l)
{
	for (size_t i = 0; i < sizeof resources / sizeof resources[0]; i++) {
		ctx->rt[resources[i].kind] = cm_linker_define_resource(
			l, resources[i].instance, resources[i].name, wasi_obj_dtor,
			ctx);
		if (ctx->rt[resources[i].kind] == NULL)
			return -1;
	}
	if (wasi_link_cli(ctx, l) || wasi_link_clocks_random(ctx, l) ||
	    wasi_link_io(ctx, l) || wasi_link_filesystem(ctx, l) ||
	    wasi_link_clocks_p3(ctx, l) || wasi_link_cli_p3(ctx, l) ||
	    wasi_link_filesystem_p3(ctx, l) ||
	    cm_linker_define_fallback(l, "wasi:", wasi_deny, ctx))
		return -1;
	return 0;
}
