/*
 * stream.c - streams, futures and error-context (definitions.py
 * SharedStreamImpl, ReadableStreamEnd/WritableStreamEnd, the future
 * equivalents, ErrorContext; digest 3.10, 3.11, 3.14) and the cabi hooks
 * that pass their ends as values.
 *
 * Contract: two ends share one cm_shared holding at most one pending
 * request (the end that arrived first, with its buffer).  Values move by
 * rendezvous: each element is loaded from the writer's memory and stored
 * into the reader's (owned handles move with it).  Events are computed
 * at delivery: payload = result | progress << 4 for streams, the result
 * alone for futures.  An undelivered partial-progress COMPLETED found by
 * a cancel is reported as CANCELLED with its count (digest D2, what the
 * suite expects).  Both ends of a stream here always belong to wasm, so
 * cancellation completes at once.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - op_new: a shared state and two ends per stream.new/future.new, the
 *    ends in the handle table (max_handles).
 *  - copy_elems: a stream.read/stream.write may be 2^28 - 1 elements
 *    long (MAX_BUF_LEN); numbers move as bytes with no host memory
 *    (move_numbers); other elements are lifted into an array charged
 *    to the writer's store first (CABI_VALS_BYTES(n)), each element's
 *    own allocations charged by cabi_load (the outermost list measured
 *    first), all within limits.hostBytes, freed and given back when
 *    the copy ends.
 *  - error_context: the message is discarded unread; debug-message
 *    stores an empty string.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/rt.h"
#include "run/sched.h"
#include "run/stream.h"

#define MAX_BUF_LEN	 ((1u << 28) - 1)

static uint32_t remain(const cm_end *e)
{
	return e->length - e->progress;
}

void cm_end_arm(cm_end *e, uint32_t result, bool partial)
{
	e->result = result;
	e->partial = partial;
	cm_waitable_set_pending(&e->w);
}

void cm_end_complete(cm_end *e, uint32_t result)
{
	if (e->sh->pending == e)
		e->sh->pending = NULL;
	cm_end_arm(e, result, false);
}

void cm_shared_notify_host(cm_shared *sh)
{
	if (sh->host != NULL && sh->notify != NULL)
		sh->notify(sh->notify_env, sh->host);
}

static void arm(cm_end *e, uint32_t result, bool partial)
{
	cm_end_arm(e, result, partial);
}

static void complete(cm_end *e, uint32_t result)
{
	cm_end_complete(e, result);
}

/* definitions.py none_or_number_type: no bool, no char */
static bool is_number(const cm_type *t)
{
	return t == NULL || (t->kind >= CM_S8 && t->kind <= CM_F64);
}

/*
 * Numbers load and store as the same bytes (floats keep their bits:
 * val.h), so their copy is a move of bytes, with no host allocation
 * (a stream<u8> copy of 2^28 bytes would otherwise lift 2^28 cm_vals).
 * The ranges were checked when the copies were started and memories
 * never shrink; they are checked again all the same.
 */
static int move_numbers(cm_end *w, cm_end *r, uint32_t n, uint32_t sz,
			cabi_error *err)
{
	uint64_t wp = w->ptr + (uint64_t)w->progress * sz;
	uint64_t rp = r->ptr + (uint64_t)r->progress * sz;
	uint64_t len = (uint64_t)n * sz;
	uint64_t wsize = wasm_memory_size_bytes(w->opts.memory);
	uint64_t rsize = wasm_memory_size_bytes(r->opts.memory);

	if (len > wsize || wp > wsize - len || len > rsize || rp > rsize - len)
		return cabi_fail(err, CABI_ERR_TRAP, CABI_MSG_LIST_OOB);
	memmove(wasm_memory_write(r->opts.memory, rp, len),
		wasm_memory_bytes(w->opts.memory) + wp, (size_t)len);
	w->binst->store->host_bytes.work += len;
	return 0;
}

/*
 * Move n elements from w's buffer to r's.  Every element is read before
 * any is written (definitions.py dst.write(src.read(n))), so a copy
 * between overlapping ranges of one memory moves the original bytes.
 * What the reads lift is charged to the writer's store (cabi_charge):
 * one value of nested lists that alias one range is the way a guest of
 * a few KB asks the host for gigabytes.
 */
static int copy_elems(cm_end *w, cm_end *r, uint32_t n, cabi_error *err)
{
	const cm_type *t = w->sh->t;

	if (t != NULL && n > 0 && is_number(t) && w->opts.memory != NULL &&
	    r->opts.memory != NULL) {
		if (move_numbers(w, r, n, cm_elem_size(t, false), err))
			return -1;
	} else if (t != NULL && n > 0) {
		uint32_t sz = cm_elem_size(t, false), i, nloaded = 0;
		cm_val *vs = NULL;
		cabi_cx wcx, rcx;
		int rc = 0;

		cm_cx_init(&wcx, w->binst, &w->opts);
		cm_cx_init(&rcx, r->binst, &r->opts);
		if (cabi_charge(&wcx, CABI_VALS_BYTES(n))) {
			*err = wcx.err;
			cabi_cx_release(&wcx);
			cabi_cx_release(&rcx);
			return -1;
		}
		vs = calloc(n, sizeof *vs);
		if (vs == NULL) {
			cabi_cx_release(&wcx);
			cabi_cx_release(&rcx);
			return cabi_fail(err, CABI_ERR_NOMEM, "out of memory");
		}
		for (i = 0; i < n && rc == 0; i++, nloaded++)
			if (cabi_load(&wcx,
				      w->ptr + (uint64_t)(w->progress + i) * sz,
				      t, &vs[i])) {
				*err = wcx.err;
				rc = -1;
			}
		for (i = 0; i < n && rc == 0; i++)
			if (cabi_store(&rcx, &vs[i], t,
				       r->ptr + (uint64_t)(r->progress + i) *
							sz)) {
				*err = rcx.err;
				rc = -1;
			}
		cm_vals_free(vs, nloaded);
		free(vs);
		cabi_cx_release(&wcx);
		cabi_cx_release(&rcx);
		if (rc)
			return -1;
	}
	w->progress += n;
	r->progress += n;
	return 0;
}

static int same_instance_check(cm_end *a, cm_end *b, cabi_error *err)
{
	if (a->binst == b->binst && !is_number(a->sh->t))
		return cabi_fail(err, CABI_ERR_TRAP,
				 WASM_TRAP_PREFIX "cannot read from and write "
						  "to intra-component future");
	return 0;
}

static int do_read(cm_end *r, cabi_error *err)
{
	cm_shared *sh = r->sh;
	cm_end *w = sh->pending;

	if (sh->dropped) {
		complete(r, COPY_DROPPED);
		return 0;
	}
	if (w == NULL) {
		sh->pending = r;
		cm_shared_notify_host(sh);
		return 0;
	}
	if (same_instance_check(r, w, err))
		return -1;
	if (remain(w) > 0) {
		uint32_t n = remain(r) < remain(w) ? remain(r) : remain(w);

		if (copy_elems(w, r, n, err))
			return -1;
		if (sh->future)
			complete(w, COPY_COMPLETED);
		else if (n > 0)
			arm(w, COPY_COMPLETED, true);
		complete(r, COPY_COMPLETED);
		return 0;
	}
	complete(w, COPY_COMPLETED);
	sh->pending = r;
	return 0;
}

static int do_write(cm_end *w, cabi_error *err)
{
	cm_shared *sh = w->sh;
	cm_end *r = sh->pending;

	if (sh->dropped) {
		complete(w, COPY_DROPPED);
		return 0;
	}
	if (r == NULL) {
		sh->pending = w;
		cm_shared_notify_host(sh);
		return 0;
	}
	if (same_instance_check(r, w, err))
		return -1;
	if (w->length == 0 && r->length == 0) {
		complete(w, COPY_COMPLETED);
		return 0;
	}
	if (remain(r) == 0) {
		complete(r, COPY_COMPLETED);
		sh->pending = w;
		return 0;
	}
	if (remain(w) > 0) {
		uint32_t n = remain(r) < remain(w) ? remain(r) : remain(w);

		if (copy_elems(w, r, n, err))
			return -1;
		if (sh->future)
			complete(r, COPY_COMPLETED);
		else
			arm(r, COPY_COMPLETED, true);
	}
	complete(w, COPY_COMPLETED);
	return 0;
}

int cm_stream_event(cm_waitable *wt, cm_event *ev, cabi_error *err)
{
	cm_end *e = (cm_end *)wt;
	cm_shared *sh = e->sh;
	uint32_t result = e->result;

	(void)err;
	if (e->partial && sh->pending == e)
		sh->pending = NULL;
	if (e->state == END_CANCELLING && e->partial &&
	    result == COPY_COMPLETED)
		result = COPY_CANCELLED; /* D2 */
	e->partial = false;
	if (result == COPY_DROPPED || (sh->future && result == COPY_COMPLETED))
		e->state = END_DONE;
	else
		e->state = END_IDLE;
	if (sh->future)
		ev->code = e->readable ? CM_EVENT_FUTURE_READ
				       : CM_EVENT_FUTURE_WRITE;
	else
		ev->code = e->readable ? CM_EVENT_STREAM_READ
				       : CM_EVENT_STREAM_WRITE;
	ev->p1 = e->w.index;
	ev->p2 = sh->future ? result : result | (e->progress << 4);
	e->progress = 0;
	e->length = 0;
	return 0;
}

/* ---- built-ins -------------------------------------------------------- */

static wasm_host_status trap_err(wasm_exec *x, cm_store *s, cabi_error *ce)
{
	if (ce->msg[0] == '\0')
		cabi_fail(ce, CABI_ERR_TRAP, "trap");
	cm_note_trap(s, ce);
	wasm_exec_set_host_trap(x, ce->msg);
	return WASM_HOST_TRAP;
}

static wasm_host_status trap_msg(wasm_exec *x, cm_store *s, const char *msg)
{
	cabi_error ce;

	cabi_fail(&ce, CABI_ERR_TRAP, "%s", msg);
	return trap_err(x, s, &ce);
}

static void set_u32(wasm_val *v, const cm_canon *cn, uint32_t x)
{
	if (cn->core_type->nresults > 0 &&
	    cn->core_type->results[0] == WASM_I64) {
		v->type = WASM_I64;
		v->u.i64 = x == CM_BLOCKED ? UINT64_MAX : x;
	} else {
		v->type = WASM_I32;
		v->u.i32 = x;
	}
}

static uint64_t arg_u(const wasm_val *v)
{
	return v->type == WASM_I64 ? v->u.i64 : (uint32_t)v->u.i32;
}

/* The last end to go frees the shared state. */
static void end_release(cm_end *e)
{
	cm_shared *sh = e->sh;

	free(e);
	if (--sh->nends == 0)
		free(sh);
}

/*
 * Store teardown: the other end, its set and a pending peer may be gone
 * already; only the shared state (counted by nends) is looked at.
 */
static void end_dispose(cm_store_obj *o)
{
	end_release((cm_end *)((char *)o - offsetof(cm_end, obj)));
}

cm_end *cm_end_new(cm_shared *sh, cm_store *s, bool readable)
{
	cm_end *e = calloc(1, sizeof *e);

	if (e == NULL)
		return NULL;
	cm_store_track(s, &e->obj, end_dispose);
	e->store = s;
	e->sh = sh;
	e->readable = readable;
	e->w.kind = sh->future ? (readable ? CABI_ELEM_FUTURE_READABLE
					   : CABI_ELEM_FUTURE_WRITABLE)
			       : (readable ? CABI_ELEM_STREAM_READABLE
					   : CABI_ELEM_STREAM_WRITABLE);
	sh->nends++;
	return e;
}

static int end_add(cm_end *e, cm_component_instance *inst, cabi_error *err)
{
	cabi_elem el;

	memset(&el, 0, sizeof el);
	el.kind = e->w.kind;
	el.u.obj = e;
	e->w.inst = inst;
	return cabi_table_add(&inst->handles, &el, &e->w.index, err);
}

bool cm_store_host_copy_pending(cm_store *s)
{
	for (cm_store_obj *o = s->objs.next; o != &s->objs; o = o->next) {
		const cm_end *e;

		if (o->dispose != end_dispose)
			continue;
		e = (const cm_end *)((const char *)o - offsetof(cm_end, obj));
		/* a host end never registers a copy: pending is the guest's;
		 * a passive host's moves only when asked (deferred_first) */
		if (e->host && e->sh->pending != NULL && !e->sh->host_passive)
			return true;
	}
	return false;
}

void cm_end_free(cm_end *e)
{
	cm_shared *sh = e->sh;

	cm_waitable_join(&e->w, NULL);
	cm_end_undefer(e);
	if (sh->pending == e)
		sh->pending = NULL;
	if (sh->host == e)
		sh->host = NULL;
	cm_store_untrack(&e->obj);
	end_release(e);
}

static const cm_type *elem_of(const cm_canon *cn)
{
	const cm_type *t = cn->type;

	if (t == NULL)
		return NULL;
	return t->kind == CM_STREAM ? t->u.stream.elem : t->u.future.elem;
}

static wasm_host_status op_new(wasm_exec *x, cm_component_instance *inst,
			       const cm_canon *cn, bool future,
			       wasm_val *results)
{
	cm_store *s = inst->store;
	cm_shared *sh = calloc(1, sizeof *sh);
	cm_end *r, *w;
	cabi_error ce;

	memset(&ce, 0, sizeof ce);
	if (sh == NULL)
		return trap_msg(x, s, "out of memory");
	sh->t = elem_of(cn);
	sh->future = future;
	r = cm_end_new(sh, s, true);
	w = r != NULL ? cm_end_new(sh, s, false) : NULL;
	if (w == NULL) {
		if (r != NULL)
			cm_end_free(r); /* the last end: frees sh too */
		else
			free(sh);
		return trap_msg(x, s, "out of memory");
	}
	if (end_add(r, inst, &ce) || end_add(w, inst, &ce))
		return trap_err(x, s, &ce);
	results[0].type = WASM_I64;
	results[0].u.i64 = (uint64_t)r->w.index | (uint64_t)w->w.index << 32;
	return WASM_HOST_OK;
}

static cm_end *end_at(cm_component_instance *inst, uint32_t i, cabi_elem_kind k,
		      const cm_canon *cn, cabi_error *err)
{
	cabi_elem *el = cabi_table_get_kind(&inst->handles, i, k, err);
	cm_end *e;
	const cm_type *t;

	if (el == NULL)
		return NULL;
	e = el->u.obj;
	t = elem_of(cn);
	if ((t == NULL) != (e->sh->t == NULL) ||
	    (t != NULL && t->kind != e->sh->t->kind)) {
		cabi_fail(err, CABI_ERR_TRAP,
			  WASM_TRAP_PREFIX "type mismatch for %s end",
			  e->sh->future ? "future" : "stream");
		return NULL;
	}
	return e;
}

static bool end_ready(cm_thread *t)
{
	return ((cm_end *)t->wait_obj)->w.pending;
}

static int end_complete(cm_thread *t, bool cancelled, cabi_error *err)
{
	cm_end *e = t->wait_obj;
	cm_event ev;

	e->w.sync_waiter = false;
	cm_waitable_clear_pending(&e->w);
	if (cm_stream_event(&e->w, &ev, err))
		return -1;
	t->nres = 1;
	t->res[0].type = WASM_I32;
	t->res[0].u.i32 = ev.p2;
	return 0;
}

/* Deliver now, return BLOCKED, or block the thread (sync). */
static wasm_host_status finish(wasm_exec *x, cm_component_instance *inst,
			       const cm_canon *cn, cm_end *e, bool async,
			       wasm_val *results)
{
	cm_store *s = inst->store;
	cm_thread *t;
	cm_event ev;
	cabi_error ce;
	wasm_host_status hs;

	memset(&ce, 0, sizeof ce);
	if (e->w.pending) {
		cm_waitable_clear_pending(&e->w);
		cm_stream_event(&e->w, &ev, &ce);
		set_u32(&results[0], cn, ev.p2);
		return WASM_HOST_OK;
	}
	if (async) {
		set_u32(&results[0], cn, CM_BLOCKED);
		return WASM_HOST_OK;
	}
	t = cm_sched_current(s);
	if (t == NULL || t->exec != x)
		return trap_msg(x, s, CM_MSG_SYNC_BLOCK);
	e->w.sync_waiter = true;
	t->wait_obj = e;
	hs = cm_thread_block(t, true, end_ready, end_complete, false);
	return hs;
}

static const char *done_msg(const cm_end *e)
{
	if (e->sh->future)
		return e->readable ? "cannot read from future after previous "
				     "read succeeded"
				   : "cannot write to future after previous "
				     "write succeeded or readable end dropped";
	return e->readable ? "cannot read from stream after being notified "
			     "that the writable end dropped"
			   : "cannot write to stream after being notified that "
			     "the readable end dropped";
}

static wasm_host_status op_copy(wasm_exec *x, cm_component_instance *inst,
				const cm_canon *cn, const cabi_options *opts,
				bool future, bool readable,
				const wasm_val *args, wasm_val *results)
{
	cm_store *s = inst->store;
	cabi_elem_kind k = future ? (readable ? CABI_ELEM_FUTURE_READABLE
					      : CABI_ELEM_FUTURE_WRITABLE)
				  : (readable ? CABI_ELEM_STREAM_READABLE
					      : CABI_ELEM_STREAM_WRITABLE);
	bool async = cn->opts.async;
	cabi_error ce;
	cm_end *e;
	uint64_t ptr = arg_u(&args[1]);
	uint64_t len = future ? 1 : arg_u(&args[2]);
	const cm_type *t;
	int rc;

	memset(&ce, 0, sizeof ce);
	if (!async && !cm_thread_may_block(cm_sched_current(s)))
		return trap_msg(x, s, CM_MSG_SYNC_BLOCK); /* D4 */
	e = end_at(inst, (uint32_t)args[0].u.i32, k, cn, &ce);
	if (e == NULL)
		return trap_err(x, s, &ce);
	if (e->state == END_COPYING || e->state == END_CANCELLING)
		return trap_msg(x, s,
				WASM_TRAP_PREFIX "cannot have concurrent "
						 "operations active on a "
						 "future/stream");
	if (e->state == END_DONE) {
		char m[200];

		snprintf(m, sizeof m, WASM_TRAP_PREFIX "%s", done_msg(e));
		return trap_msg(x, s, m);
	}
	if (!async && e->w.set != NULL)
		return trap_msg(x, s, WASM_TRAP_PREFIX CM_MSG_SYNC_IN_SET);
	if (len > MAX_BUF_LEN)
		/* definitions.py: trap_if(n > Buffer.MAX_LENGTH); in
		 * wasmtime's words (issue 21 point 5) */
		return trap_msg(x, s,
				WASM_TRAP_PREFIX
				"stream read/write count too large");
	t = e->sh->t;
	if (t != NULL && len > 0) {
		uint32_t al = cm_alignment(t, false),
			 sz = cm_elem_size(t, false);

		if (ptr % al != 0)
			return trap_msg(x, s,
					WASM_TRAP_PREFIX CABI_MSG_UNALIGNED);
		/* len * sz < 2^60 (MAX_BUF_LEN elements) */
		if (opts->memory == NULL ||
		    !wasm_memory_in_bounds(opts->memory, ptr, len * sz))
			return trap_msg(x, s,
					WASM_TRAP_PREFIX "buffer out of "
							 "bounds");
	}
	e->binst = inst;
	e->opts = *opts;
	e->ptr = ptr;
	e->length = (uint32_t)len;
	e->progress = 0;
	e->state = END_COPYING;
	rc = readable ? do_read(e, &ce) : do_write(e, &ce);
	cm_store_bill_host_work(s, x);
	if (rc)
		return trap_err(x, s, &ce);
	return finish(x, inst, cn, e, async, results);
}

static wasm_host_status op_cancel(wasm_exec *x, cm_component_instance *inst,
				  const cm_canon *cn, bool future,
				  bool readable, const wasm_val *args,
				  wasm_val *results)
{
	cm_store *s = inst->store;
	cabi_elem_kind k = future ? (readable ? CABI_ELEM_FUTURE_READABLE
					      : CABI_ELEM_FUTURE_WRITABLE)
				  : (readable ? CABI_ELEM_STREAM_READABLE
					      : CABI_ELEM_STREAM_WRITABLE);
	bool async = cn->flag;
	cabi_error ce;
	cm_end *e;

	memset(&ce, 0, sizeof ce);
	if (!async && !cm_thread_may_block(cm_sched_current(s)))
		return trap_msg(x, s, CM_MSG_SYNC_BLOCK); /* D4 */
	e = end_at(inst, (uint32_t)args[0].u.i32, k, cn, &ce);
	if (e == NULL)
		return trap_err(x, s, &ce);
	if (e->state != END_COPYING || e->w.sync_waiter)
		return trap_msg(x, s,
				WASM_TRAP_PREFIX "cancel without an "
						 "outstanding async copy");
	if (!async && e->w.set != NULL)
		return trap_msg(x, s, WASM_TRAP_PREFIX CM_MSG_SYNC_IN_SET);
	e->state = END_CANCELLING;
	if (!e->w.pending)
		complete(e, COPY_CANCELLED);
	return finish(x, inst, cn, e, async, results);
}

static wasm_host_status op_drop(wasm_exec *x, cm_component_instance *inst,
				const cm_canon *cn, bool future, bool readable,
				const wasm_val *args)
{
	cm_store *s = inst->store;
	cabi_elem_kind k = future ? (readable ? CABI_ELEM_FUTURE_READABLE
					      : CABI_ELEM_FUTURE_WRITABLE)
				  : (readable ? CABI_ELEM_STREAM_READABLE
					      : CABI_ELEM_STREAM_WRITABLE);
	uint32_t i = (uint32_t)args[0].u.i32;
	cabi_error ce;
	cm_end *e;
	cm_shared *sh;
	bool host;

	memset(&ce, 0, sizeof ce);
	e = end_at(inst, i, k, cn, &ce);
	if (e == NULL)
		return trap_err(x, s, &ce);
	if (e->state == END_COPYING || e->state == END_CANCELLING)
		return trap_msg(
			x, s,
			readable ? WASM_TRAP_PREFIX "cannot remove busy stream"
				 : WASM_TRAP_PREFIX "cannot drop busy stream");
	if (future && !readable && e->state != END_DONE)
		return trap_msg(x, s,
				WASM_TRAP_PREFIX
				"cannot drop future write end without first "
				"writing a value");
	sh = e->sh;
	sh->dropped = true;
	if (sh->pending != NULL && sh->pending != e)
		complete(sh->pending, COPY_DROPPED);
	cabi_table_remove(&inst->handles, i, NULL, NULL);
	host = sh->host != NULL;
	cm_end_free(e);
	if (host) /* sh lives on: the host end holds it */
		cm_shared_notify_host(sh);
	return WASM_HOST_OK;
}

/* ---- error-context ------------------------------------------------------ */

static wasm_host_status error_context(wasm_exec *x, cm_component_instance *inst,
				      const cm_canon *cn,
				      const cabi_options *opts,
				      const wasm_val *args, wasm_val *results)
{
	cm_store *s = inst->store;
	cabi_error ce;
	cabi_elem el;
	uint32_t i;

	memset(&ce, 0, sizeof ce);
	switch (cn->op) {
	case CM_CANON_ERROR_CONTEXT_NEW:
		/* the message is discarded unread (digest 3.14) */
		memset(&el, 0, sizeof el);
		el.kind = CABI_ELEM_ERROR_CONTEXT;
		el.u.obj = NULL;
		if (cabi_table_add(&inst->handles, &el, &i, &ce))
			return trap_err(x, s, &ce);
		results[0].type = WASM_I32;
		results[0].u.i32 = i;
		return WASM_HOST_OK;
	case CM_CANON_ERROR_CONTEXT_DROP:
		if (cabi_table_get_kind(&inst->handles, (uint32_t)args[0].u.i32,
					CABI_ELEM_ERROR_CONTEXT, &ce) == NULL ||
		    cabi_table_remove(&inst->handles, (uint32_t)args[0].u.i32,
				      NULL, &ce))
			return trap_err(x, s, &ce);
		return WASM_HOST_OK;
	default: {
		/*
		 * error-context.debug-message: the message was discarded at
		 * new (digest 3.14), so it is the empty string every time,
		 * stored through the options' realloc like any string.
		 */
		cm_task scratch, *prev;
		cabi_cx cx;
		cm_val v;
		int rc;

		if (cabi_table_get_kind(&inst->handles, (uint32_t)args[0].u.i32,
					CABI_ELEM_ERROR_CONTEXT, &ce) == NULL)
			return trap_err(x, s, &ce);
		memset(&v, 0, sizeof v);
		if (cm_val_string(&v, "", 0))
			return trap_msg(x, s, "out of memory");
		cm_cx_init(&cx, inst, opts);
		prev = cm_fresh_thread_enter(s, &scratch);
		rc = cabi_store(&cx, &v, cm_prim(CM_STRING), arg_u(&args[1]));
		cm_fresh_thread_leave(s, prev);
		cm_vals_free(&v, 1);
		if (rc) {
			ce = cx.err;
			cabi_cx_release(&cx);
			if (ce.kind == CABI_ERR_NONE)
				ce.kind = CABI_ERR_TRAP;
			return trap_err(x, s, &ce);
		}
		cabi_cx_release(&cx);
		return WASM_HOST_OK;
	}
	}
}

wasm_host_status cm_stream_builtin(wasm_exec *x, cm_component_instance *inst,
				   const cm_canon *cn, const cabi_options *opts,
				   const wasm_val *args, wasm_val *results)
{
	cabi_error ce;

	switch (cn->op) {
	case CM_CANON_STREAM_NEW:
		return op_new(x, inst, cn, false, results);
	case CM_CANON_FUTURE_NEW:
		return op_new(x, inst, cn, true, results);
	case CM_CANON_STREAM_READ:
		return op_copy(x, inst, cn, opts, false, true, args, results);
	case CM_CANON_STREAM_WRITE:
		return op_copy(x, inst, cn, opts, false, false, args, results);
	case CM_CANON_FUTURE_READ:
		return op_copy(x, inst, cn, opts, true, true, args, results);
	case CM_CANON_FUTURE_WRITE:
		return op_copy(x, inst, cn, opts, true, false, args, results);
	case CM_CANON_STREAM_CANCEL_READ:
		return op_cancel(x, inst, cn, false, true, args, results);
	case CM_CANON_STREAM_CANCEL_WRITE:
		return op_cancel(x, inst, cn, false, false, args, results);
	case CM_CANON_FUTURE_CANCEL_READ:
		return op_cancel(x, inst, cn, true, true, args, results);
	case CM_CANON_FUTURE_CANCEL_WRITE:
		return op_cancel(x, inst, cn, true, false, args, results);
	case CM_CANON_STREAM_DROP_READABLE:
		return op_drop(x, inst, cn, false, true, args);
	case CM_CANON_STREAM_DROP_WRITABLE:
		return op_drop(x, inst, cn, false, false, args);
	case CM_CANON_FUTURE_DROP_READABLE:
		return op_drop(x, inst, cn, true, true, args);
	case CM_CANON_FUTURE_DROP_WRITABLE:
		return op_drop(x, inst, cn, true, false, args);
	case CM_CANON_ERROR_CONTEXT_NEW:
	case CM_CANON_ERROR_CONTEXT_DROP:
	case CM_CANON_ERROR_CONTEXT_DEBUG_MESSAGE:
		return error_context(x, inst, cn, opts, args, results);
	default:
		cabi_fail(&ce, CABI_ERR_TRAP,
			  "async builtin (canon op %d) not implemented",
			  (int)cn->op);
		return trap_err(x, inst->store, &ce);
	}
}

/* ---- passing ends as values (cabi hooks) -------------------------------- */

int cm_hook_lift_async(cabi_cx *cx, uint32_t i, const cm_type *t, cm_val *out)
{
	cabi_elem *el;
	cm_end *e;
	bool future = t->kind == CM_FUTURE;

	if (t->kind == CM_ERROR_CONTEXT) {
		el = cabi_table_get_kind(cx->table, i, CABI_ELEM_ERROR_CONTEXT,
					 &cx->err);
		if (el == NULL)
			return -1;
		out->kind = CM_ERROR_CONTEXT;
		out->u.async.obj = el->u.obj;
		out->u.async.index = i;
		return 0;
	}
	el = cabi_table_get_kind(cx->table, i,
				 future ? CABI_ELEM_FUTURE_READABLE
					: CABI_ELEM_STREAM_READABLE,
				 &cx->err);
	if (el == NULL)
		return -1;
	e = el->u.obj;
	if (e->state == END_DONE)
		return cabi_fail(&cx->err, CABI_ERR_TRAP,
				 future ? "cannot lift future after previous "
					  "read succeeded"
					: "cannot lift stream after being "
					  "notified that the writable end "
					  "dropped");
	if (e->w.set != NULL)
		return cabi_fail(&cx->err, CABI_ERR_TRAP,
				 future ? "cannot lift future while it's in a "
					  "waitable set"
					: "cannot lift stream while it's in a "
					  "waitable set");
	if (e->state != END_IDLE)
		return cabi_fail(&cx->err, CABI_ERR_TRAP,
				 "cannot lift a busy stream or future");
	cabi_table_remove(cx->table, i, NULL, NULL);
	e->w.index = 0;
	out->kind = t->kind;
	out->u.async.obj = e;
	out->u.async.index = 0;
	return 0;
}

int cm_hook_lower_async(cabi_cx *cx, const cm_val *v, const cm_type *t,
			uint32_t *index)
{
	cabi_elem el;

	memset(&el, 0, sizeof el);
	if (t->kind == CM_ERROR_CONTEXT) {
		el.kind = CABI_ELEM_ERROR_CONTEXT;
		el.u.obj = v->u.async.obj;
		return cabi_table_add(cx->table, &el, index, &cx->err);
	}
	if (v->u.async.obj == NULL)
		return cabi_fail(&cx->err, CABI_ERR_TRAP,
				 "stream or future end already moved");
	return end_add(v->u.async.obj, cx->inst, &cx->err)
		       ? -1
		       : (*index = ((cm_end *)v->u.async.obj)->w.index, 0);
}

/* ---- snapshots (run/snapshot.c) ---------------------------------------- */

bool cm_obj_is_end(const cm_store_obj *o)
{
	return o->dispose == end_dispose;
}

cm_cont_fn cm_stream_cont(uint32_t code)
{
	switch (code) {
	case CM_CONT_READY_END:
		return (cm_cont_fn)end_ready;
	case CM_CONT_COMPLETE_END:
		return (cm_cont_fn)end_complete;
	default:
		return NULL;
	}
}
