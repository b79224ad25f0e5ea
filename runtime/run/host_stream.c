/*
 * host_stream.c - stream and future ends held by the host (issue 5 point
 * 4; run/instance.h "host-held stream and future ends"): the
 * embedder's side of definitions.py's host ReadableStream/WritableStream,
 * reduced to copies the host makes when it likes.
 *
 * Contract (stream.h): a host end never registers a buffer and never
 * blocks.  A write copies into the pending guest read (lowering each
 * value into the reader's memory; a stream reader gets a partial-progress
 * COMPLETED and stays pending, a future reader completes); a read copies
 * out of the pending guest write likewise.  With no guest copy pending
 * nothing moves (0 elements) and the host waits for its notify callback,
 * which fires when a guest copy becomes pending or the guest end is
 * dropped; it never runs guest code.  A pending guest buffer with no room
 * left (or a zero-length readiness probe) is completed instead, as a
 * wasm peer would.  Dropping the host end completes a pending guest copy
 * DROPPED.  Every event a host copy arms reaches the guest through the
 * normal waitable machinery (and asks the embedder for service).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_host_stream_new: one pair of ends per call of the embedder.
 *  - cm_host_end_read: the values land in the embedder's array (cap
 *    entries, its own); what they hold is lifted through a cx of
 *    cm_cx_init (the store's budget, per read); the embedder owns them
 *    after.
 *  - cm_host_end_write lowers the embedder's values: no host memory.
 */
#include <stdlib.h>
#include <string.h>

#include "run/instance.h"
#include "run/rt.h"
#include "run/sched.h"
#include "run/stream.h"

static int fail(cm_error *err, cm_error_kind kind, const char *msg)
{
	return cm_error_set(err, kind, "%s", msg);
}

int cm_host_stream_new(cm_store *s, const cm_type *t, cm_val *guest_end,
		       cm_host_end **out, cm_error *err)
{
	cm_shared *sh;
	cm_end *r, *w;

	if (err != NULL)
		memset(err, 0, sizeof *err);
	*out = NULL;
	if (t == NULL || (t->kind != CM_STREAM && t->kind != CM_FUTURE))
		return fail(err, CM_ERR_VALUE, "not a stream or future type");
	sh = calloc(1, sizeof *sh);
	if (sh == NULL)
		return fail(err, CM_ERR_NOMEM, "out of memory");
	sh->future = t->kind == CM_FUTURE;
	sh->t = sh->future ? t->u.future.elem : t->u.stream.elem;
	r = cm_end_new(sh, s, true);
	w = r != NULL ? cm_end_new(sh, s, false) : NULL;
	if (w == NULL) {
		if (r != NULL)
			cm_end_free(r); /* the last end: frees sh too */
		else
			free(sh);
		return fail(err, CM_ERR_NOMEM, "out of memory");
	}
	w->host = true;
	sh->host = w;
	memset(guest_end, 0, sizeof *guest_end);
	guest_end->kind = t->kind;
	guest_end->u.async.obj = r;
	*out = w;
	return 0;
}

cm_host_end *cm_host_end_take(cm_store *s, cm_val *v)
{
	cm_end *e;

	if (v == NULL || (v->kind != CM_STREAM && v->kind != CM_FUTURE) ||
	    v->u.async.obj == NULL)
		return NULL;
	e = v->u.async.obj;
	if (e->store != s || e->sh->host != NULL || e->w.index != 0)
		return NULL;
	e->host = true;
	e->w.inst = NULL;
	e->sh->host = e;
	v->u.async.obj = NULL; /* moved: lowering v again fails */
	return e;
}

void cm_store_set_host_end_durable(
	cm_store *s,
	int (*save)(void *env, cm_host_end *e, uint8_t *desc, size_t cap,
		    size_t *len),
	int (*restore)(void *env, cm_store *s, cm_host_end *e,
		       const uint8_t *desc, size_t len),
	void *env)
{
	s->host_end_durable.save = save;
	s->host_end_durable.restore = restore;
	s->host_end_durable.env = env;
}

int cm_host_end_defer(cm_host_end *e, void (*fn)(void *env, cm_host_end *e),
		      void *env)
{
	cm_store *s = e->store;

	if (!e->host)
		return -1;
	e->dfn = fn;
	e->denv = env;
	if (e->deferred)
		return 0; /* once: the latest fn and env */
	e->deferred = true;
	e->dnext = NULL;
	if (s->deferred_last != NULL)
		s->deferred_last->dnext = e;
	else
		s->deferred_first = e;
	s->deferred_last = e;
	if (s->cfg.request_service != NULL && !s->service_requested) {
		s->service_requested = true;
		s->cfg.request_service(s->cfg.service_env);
	}
	return 0;
}

void cm_end_undefer(cm_end *e)
{
	cm_store *s = e->store;
	cm_end *prev = NULL;

	if (!e->deferred)
		return;
	for (cm_end *x = s->deferred_first; x != NULL; prev = x, x = x->dnext)
		if (x == e) {
			if (prev != NULL)
				prev->dnext = e->dnext;
			else
				s->deferred_first = e->dnext;
			if (s->deferred_last == e)
				s->deferred_last = prev;
			break;
		}
	e->deferred = false;
	e->dnext = NULL;
}

uint32_t cm_host_ends_run_deferred(cm_store *s)
{
	uint32_t n = 0, todo = 0;

	/*
	 * Those deferred before this step, one at a time off the live list
	 * (a call may free or defer ends: what it defers anew waits at the
	 * tail, for the next step, unless ends ahead of it went).
	 */
	for (cm_end *e = s->deferred_first; e != NULL; e = e->dnext)
		todo++;
	while (n < todo && s->deferred_first != NULL) {
		cm_end *e = s->deferred_first;

		s->deferred_first = e->dnext;
		if (s->deferred_first == NULL)
			s->deferred_last = NULL;
		e->deferred = false;
		e->dnext = NULL;
		e->dfn(e->denv, e);
		n++;
	}
	return n;
}

void cm_host_end_set_notify(cm_host_end *e,
			    void (*notify)(void *env, cm_host_end *e),
			    void *env)
{
	e->sh->notify = notify;
	e->sh->notify_env = env;
}

bool cm_host_end_peer_dropped(const cm_host_end *e)
{
	return e->sh->dropped;
}

bool cm_host_end_pending(const cm_host_end *e)
{
	return e->sh->pending != NULL;
}

const cm_type *cm_host_end_type(const cm_host_end *e)
{
	return e->sh->t;
}

void cm_host_end_set_passive(cm_host_end *e)
{
	e->sh->host_passive = true;
}

bool cm_host_end_readable(const cm_host_end *e)
{
	return e->readable;
}

bool cm_host_end_is_future(const cm_host_end *e)
{
	return e->sh->future;
}

uint32_t cm_host_end_room(const cm_host_end *e)
{
	const cm_end *p = e->sh->pending;

	return p != NULL && p != e ? p->length - p->progress : 0;
}

/* The pending guest copy a host copy in direction `reading` can use. */
static cm_end *peer(cm_end *e, bool reading)
{
	cm_end *p = e->sh->pending;

	return p != NULL && p->readable != reading ? p : NULL;
}

static int check(cm_end *e, bool reading, cm_error *err)
{
	if (err != NULL)
		memset(err, 0, sizeof *err);
	if (!e->host || e->readable != reading)
		return fail(err, CM_ERR_VALUE,
			    reading ? "not a readable host end"
				    : "not a writable host end");
	if (e->state == END_DONE)
		return fail(err, CM_ERR_VALUE,
			    "the future's value has already moved");
	return 0;
}

int cm_host_end_write(cm_host_end *e, const cm_val *vals, uint32_t n,
		      uint32_t *done, cm_error *err)
{
	cm_shared *sh = e->sh;
	cm_end *r;
	uint32_t k, sz;
	char why[128];
	cabi_cx cx;
	cm_task scratch, *prev;
	int rc = 0;

	*done = 0;
	if (check(e, false, err))
		return -1;
	if (sh->future && n > 1)
		return fail(err, CM_ERR_VALUE, "a future carries one value");
	for (uint32_t i = 0; sh->t != NULL && i < n; i++)
		if (!cm_val_typecheck(&vals[i], sh->t, why, sizeof why))
			return cm_error_set(err, CM_ERR_VALUE, "value %u: %s",
					    i + 1, why);
	if (sh->dropped)
		return 1;
	r = peer(e, false);
	if (r == NULL || n == 0)
		return 0;
	if (r->length == r->progress) {
		/* no room (a readiness probe): let the guest come back */
		cm_end_complete(r, COPY_COMPLETED);
		return 0;
	}
	k = r->length - r->progress < n ? r->length - r->progress : n;
	if (sh->t != NULL) {
		sz = cm_elem_size(sh->t, false);
		cm_cx_init(&cx, r->binst, &r->opts);
		prev = cm_fresh_thread_enter(e->store, &scratch);
		for (uint32_t i = 0; i < k && rc == 0; i++)
			rc = cabi_store(&cx, &vals[i], sh->t,
					r->ptr + (uint64_t)(r->progress + i) *
							 sz);
		cm_fresh_thread_leave(e->store, prev);
		if (rc) {
			cabi_error ce = cx.err;

			cabi_cx_release(&cx);
			if (ce.kind == CABI_ERR_NONE)
				ce.kind = CABI_ERR_TRAP;
			return cm_error_from_cabi(err, &ce);
		}
		cabi_cx_release(&cx);
	}
	r->progress += k;
	*done = k;
	if (sh->future) {
		e->state = END_DONE;
		cm_end_complete(r, COPY_COMPLETED);
	} else {
		cm_end_arm(r, COPY_COMPLETED, true);
	}
	return 0;
}

int cm_host_end_read(cm_host_end *e, cm_val *vals, uint32_t cap, uint32_t *done,
		     cm_error *err)
{
	cm_shared *sh = e->sh;
	cm_end *w;
	uint32_t k, sz, i;
	cabi_cx cx;
	int rc = 0;

	*done = 0;
	if (check(e, true, err))
		return -1;
	if (sh->dropped && sh->pending == NULL)
		return 1;
	w = peer(e, true);
	if (w == NULL || cap == 0)
		return 0;
	if (w->length == w->progress) {
		cm_end_complete(w, COPY_COMPLETED);
		return 0;
	}
	k = w->length - w->progress < cap ? w->length - w->progress : cap;
	if (sh->future)
		k = 1;
	memset(vals, 0, k * sizeof *vals);
	if (sh->t != NULL) {
		sz = cm_elem_size(sh->t, false);
		cm_cx_init(&cx, w->binst, &w->opts);
		for (i = 0; i < k && rc == 0; i++)
			rc = cabi_load(
				&cx, w->ptr + (uint64_t)(w->progress + i) * sz,
				sh->t, &vals[i]);
		if (rc) {
			cabi_error ce = cx.err;

			cm_vals_free(vals, i);
			cabi_cx_release(&cx);
			if (ce.kind == CABI_ERR_NONE)
				ce.kind = CABI_ERR_TRAP;
			return cm_error_from_cabi(err, &ce);
		}
		cabi_cx_release(&cx);
	} else {
		/* no element type: the values are units, only counted */
		for (i = 0; i < k; i++)
			vals[i].kind = CM_BOOL;
	}
	w->progress += k;
	*done = k;
	if (sh->future) {
		e->state = END_DONE;
		cm_end_complete(w, COPY_COMPLETED);
	} else {
		cm_end_arm(w, COPY_COMPLETED, true);
	}
	return 0;
}

/* A stream of one-byte numbers: its elements move as bytes. */
static bool byte_stream(const cm_shared *sh)
{
	return !sh->future && sh->t != NULL &&
	       (sh->t->kind == CM_U8 || sh->t->kind == CM_S8);
}

/*
 * The byte forms of cm_host_end_read/write for stream<u8> and
 * stream<s8> (WASI 0.3's stdio and file streams): the bytes move with
 * one memcpy and no cm_val per byte; the copy is host work of the
 * store (limits.hostWork), as a guest-to-guest copy is.
 */
static cm_end *byte_peer(cm_end *e, bool reading, uint32_t cap, int *rc,
			 cm_error *err)
{
	cm_shared *sh = e->sh;
	cm_end *p;

	*rc = 0;
	if (check(e, reading, err)) {
		*rc = -1;
		return NULL;
	}
	if (!byte_stream(sh)) {
		*rc = fail(err, CM_ERR_VALUE, "not a stream of bytes");
		return NULL;
	}
	if (sh->dropped && (!reading || sh->pending == NULL)) {
		*rc = 1;
		return NULL;
	}
	p = peer(e, reading);
	if (p == NULL || cap == 0)
		return NULL;
	if (p->length == p->progress) {
		cm_end_complete(p, COPY_COMPLETED);
		return NULL;
	}
	if (p->opts.memory == NULL) {
		*rc = fail(err, CM_ERR_TRAP, "a stream buffer with no memory");
		return NULL;
	}
	return p;
}

int cm_host_end_read_bytes(cm_host_end *e, uint8_t *buf, uint32_t cap,
			   uint32_t *done, cm_error *err)
{
	int rc;
	cm_end *w = byte_peer(e, true, cap, &rc, err);
	uint32_t k;
	uint64_t at;

	*done = 0;
	if (w == NULL)
		return rc;
	k = w->length - w->progress < cap ? w->length - w->progress : cap;
	at = w->ptr + w->progress;
	/* checked at the copy's start; memories never shrink */
	if (!wasm_memory_in_bounds(w->opts.memory, at, k))
		return fail(err, CM_ERR_TRAP, CABI_MSG_LIST_OOB);
	memcpy(buf, wasm_memory_bytes(w->opts.memory) + at, k);
	e->store->host_bytes.work += k;
	w->progress += k;
	*done = k;
	cm_end_arm(w, COPY_COMPLETED, true);
	return 0;
}

int cm_host_end_write_bytes(cm_host_end *e, const uint8_t *buf, uint32_t n,
			    uint32_t *done, cm_error *err)
{
	int rc;
	cm_end *r = byte_peer(e, false, n, &rc, err);
	uint32_t k;
	uint64_t at;

	*done = 0;
	if (r == NULL)
		return rc;
	k = r->length - r->progress < n ? r->length - r->progress : n;
	at = r->ptr + r->progress;
	if (!wasm_memory_in_bounds(r->opts.memory, at, k))
		return fail(err, CM_ERR_TRAP, CABI_MSG_LIST_OOB);
	memcpy(wasm_memory_write(r->opts.memory, at, k), buf, k);
	e->store->host_bytes.work += k;
	r->progress += k;
	*done = k;
	cm_end_arm(r, COPY_COMPLETED, true);
	return 0;
}

void cm_host_end_drop(cm_host_end *e)
{
	cm_shared *sh = e->sh;

	sh->dropped = true;
	sh->notify = NULL;
	if (sh->pending != NULL && sh->pending != e)
		cm_end_complete(sh->pending, COPY_DROPPED);
	cm_end_free(e);
}

/* cm_host_end_take and cm_host_end_drop of the end obj, when it is a
 * readable end of s lifted out of every handle table (a value's). */
static void drop_value_end(cm_store *s, void *obj)
{
	cm_end *e = obj;

	if (e == NULL || e->store != s || e->sh->host != NULL ||
	    e->w.index != 0)
		return;
	e->host = true;
	e->w.inst = NULL;
	e->sh->host = e;
	cm_host_end_drop(e);
}

void cm_vals_drop_ends(cm_store *s, const cm_val *vs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const cm_val *v = &vs[i];

		switch (v->kind) {
		case CM_STREAM:
		case CM_FUTURE:
			drop_value_end(s, v->u.async.obj);
			break;
		case CM_LIST:
		case CM_MAP:
		case CM_RECORD:
		case CM_TUPLE:
			if (v->u.list.bytes == NULL) /* byte form: no ends */
				cm_vals_drop_ends(s, v->u.list.elems,
						  v->u.list.n);
			break;
		case CM_VARIANT:
		case CM_OPTION:
		case CM_RESULT:
			if (v->u.variant.payload != NULL)
				cm_vals_drop_ends(s, v->u.variant.payload, 1);
			break;
		default:
			break;
		}
	}
}
