/*
 * snapshot_async.c - the async half of a store snapshot (snapshot.h,
 * format 3): the store's tracked objects (tasks, threads with their
 * stacks, heap subtasks, waitable sets, stream and future ends), every
 * component instance's handle table and threads table with the host
 * resources they hold, the scheduler's waiting list and per-instance
 * gate state, the store's fuel, and its pending and settled host calls.
 *
 * Sections (payloads; ids are 1 + the object's position in the store's
 * list of tracked objects, which is creation order; 0 is "none"):
 *   3 OBJECTS  u32 n, n x (u8 kind, u64 length, payload)  kinds below
 *   4 HANDLES  u32 n, n x (u32 len, key; u32 len, description): the
 *              host resources the tables hold, each once, in the order
 *              of their first handle in the walk below, as the embedder
 *              describes them (run/instance.h
 *              cm_store_set_host_resource_durable; format 3); then per
 *              component instance: its handle table, its threads
 *              table: u32 len, u32 nfree, nfree x u32 (the free stack,
 *              bottom first), then slots 1..len-1: u8 elem kind, and
 *              resource: u32 type (store.h rtypes; 0xffffffff: a host
 *              type, and the rep is the host resource's id, 1 + its
 *              place in the list), u64 rep, u8 own, u32 lends, u32
 *              borrowing task; error context: nothing; any other: u32
 *              object id
 *   5 SCHED    u32 n, n x thread id (the waiting list, in order); per
 *              component instance u32 num_waiting_to_enter, u32
 *              exclusive thread; u64 root serial; u8 metered, u64 fuel
 *   6 HOST     u32 n, n x (u32 subtask id, u32 state, then state 0
 *              outstanding: u8 resumable, u32 len, the embedder's
 *              description; 1 returned: u8 has result, u32 len, WAVE
 *              text; 2 trapped: u32 len, message; 3 cancelled: -)
 *              outstanding calls first (the pending list's order), then
 *              the settled ones (delivery order)
 * Kinds (OBJECTS): 1 task, 2 thread, 3 subtask, 4 waitable set, 5
 * stream or future end; an unknown kind is refused (a later format
 * adds kinds).  A thread's continuations are sched.h's CM_CONT_ codes,
 * its exec runtime/wasm/snapshot_exec.c's; a function is a core
 * reference (runtime/wasm/snapshot.h), a lifted function its (component
 * instance, index in the instance's function space), a canon lower or
 * built-in the ordinal of its core host function.
 *
 * Why objects come first and everything else refers to them by id: the
 * object graph has cycles (a thread's task lists its threads), so the
 * restore makes every object empty first, then fills each one in, and
 * checks at the end that what points at what is consistent (a waitable
 * in its table slot and its set, a waiting thread's predicate has what
 * it reads), so a forged snapshot cannot leave a pointer dangling.
 *
 * Allocations sized by a guest or a client (issue 18 audit): restoring
 * makes one object per record, each record at least 9 bytes of the
 * snapshot (the count is checked against the bytes left), one table
 * slot per snapshot byte at most, and each table within the store's
 * max_handles / max_threads; lenders lists and subtask arguments are
 * bounded by their records' lengths; host resources (what the embedder
 * makes again) one per 8 bytes of the snapshot and at most max_handles
 * per component instance, each description at most
 * CM_HOST_RESOURCE_DESC_MAX.  Writing allocates the id lookup (two
 * words per tracked object), the host resource index (a few words per
 * handle of a host type) and one description buffer
 * (CM_HOST_RESOURCE_DESC_MAX).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/rt.h"
#include "run/sched.h"
#include "run/snapshot.h"
#include "run/snapshot_async.h"
#include "run/stream.h"
#include "value/wave.h"
#include "wasm/exec.h"
#include "wasm/snapshot.h"
#include "wasm/store.h"

enum { K_TASK = 1, K_THREAD, K_SUBTASK, K_SET, K_END, K_COUNT };
enum { WAIT_NONE = 0, WAIT_BUILTIN, WAIT_SUBTASK, WAIT_END };
/* A resource handle's type field for a host type: its rep is an id. */
#define SNAP_HOST_RTYPE UINT32_MAX

typedef struct snap {
	cm_store *s;
	cm_component_instance **insts;
	uint32_t ninsts;
	wasm_snap_map *map;
	/* the tracked objects in order, and what each is */
	void **objs;
	uint8_t *kinds;
	uint32_t nobjs;
	/* writing: (address, id) sorted by address */
	uintptr_t (*byaddr)[2];
	/* writing: the host resources the handle tables hold, each once,
	 * sorted by (type, rep); byid: their indices in id order */
	struct hres {
		const cabi_resource_type *rt;
		uint64_t rep;
		uint32_t first, id; /* first: walk order of its first handle */
		uint32_t ci, slot;  /* where that handle is (for messages) */
	} *hres;
	uint32_t nhres, *byid;
	wasm_snap_buf *b;
	char *why;
	size_t whylen;
	wasm_snap_status st;
} snap;

static wasm_snap_status sfail(snap *x, wasm_snap_status st, const char *fmt,
			      ...) __attribute__((format(printf, 3, 4)));

static wasm_snap_status sfail(snap *x, wasm_snap_status st, const char *fmt,
			      ...)
{
	va_list ap;

	if (x->st != WASM_SNAP_OK)
		return x->st;
	va_start(ap, fmt);
	vsnprintf(x->why, x->whylen, fmt, ap);
	va_end(ap);
	x->st = st;
	return st;
}

#define UNSUP(x, ...) sfail((x), WASM_SNAP_UNSUPPORTED, __VA_ARGS__)
#define BAD(x, ...)   sfail((x), WASM_SNAP_MALFORMED, __VA_ARGS__)

static void *container(cm_store_obj *o, uint8_t k)
{
	switch (k) {
	case K_TASK:
		return (char *)o - offsetof(cm_task, obj);
	case K_THREAD:
		return (char *)o - offsetof(cm_thread, obj);
	case K_SUBTASK:
		return (char *)o - offsetof(cm_subtask, obj);
	case K_SET:
		return (char *)o - offsetof(cm_waitable_set, obj);
	default:
		return (char *)o - offsetof(cm_end, obj);
	}
}

static uint8_t kind_of(const cm_store_obj *o)
{
	return cm_obj_is_task(o)      ? K_TASK
	       : cm_obj_is_thread(o)  ? K_THREAD
	       : cm_obj_is_subtask(o) ? K_SUBTASK
	       : cm_obj_is_set(o)     ? K_SET
	       : cm_obj_is_end(o)     ? K_END
				      : 0;
}

static int cmp_pair(const void *a, const void *b)
{
	uintptr_t x = ((const uintptr_t *)a)[0], y = ((const uintptr_t *)b)[0];

	return x < y ? -1 : x > y;
}

static int cmp_pair64(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];

	return x < y ? -1 : x > y;
}

/*
 * Not written: the host's calls in flight (their callers are the
 * embedder's, gone in the store a restore makes) and the thread that
 * begins a queued one (it has run no guest code: the call is as if it
 * never came).  Their tasks are written as tasks whose caller is gone.
 */
static bool skipped(cm_store_obj *o)
{
	return cm_obj_is_call(o) ||
	       (cm_obj_is_thread(o) &&
		cm_thread_is_call_starter(container(o, K_THREAD)));
}

/* The store's tracked objects as (container, kind), in order. */
static int list_objs(snap *x)
{
	uint32_t n = 0, i = 0;

	for (cm_store_obj *o = x->s->objs.next; o != &x->s->objs; o = o->next)
		n++;
	x->objs = calloc(n ? n : 1, sizeof *x->objs);
	x->kinds = calloc(n ? n : 1, 1);
	if (x->objs == NULL || x->kinds == NULL)
		return sfail(x, WASM_SNAP_NOMEM, "out of memory");
	for (cm_store_obj *o = x->s->objs.next; o != &x->s->objs; o = o->next) {
		uint8_t k = kind_of(o);

		if (skipped(o))
			continue;
		if (k == 0)
			return UNSUP(x, "not supported yet: an object of an "
					"unknown kind");
		x->kinds[i] = k;
		x->objs[i++] = container(o, k);
	}
	x->nobjs = i;
	return 0;
}

/* ---- writing ------------------------------------------------------------- */

static int index_objs(snap *x)
{
	x->byaddr = calloc(x->nobjs ? x->nobjs : 1, sizeof *x->byaddr);
	if (x->byaddr == NULL)
		return sfail(x, WASM_SNAP_NOMEM, "out of memory");
	for (uint32_t i = 0; i < x->nobjs; i++) {
		x->byaddr[i][0] = (uintptr_t)x->objs[i];
		x->byaddr[i][1] = i;
	}
	qsort(x->byaddr, x->nobjs, sizeof *x->byaddr, cmp_pair);
	return 0;
}

/* The id of p (a live object of kind k), 0 for NULL; UINT32_MAX: none. */
static uint32_t find_id(const snap *x, const void *p, uint8_t k)
{
	uint32_t lo = 0, hi = x->nobjs;

	if (p == NULL)
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (x->byaddr[mid][0] == (uintptr_t)p) {
			uint32_t i = (uint32_t)x->byaddr[mid][1];

			return x->kinds[i] == k ? i + 1 : UINT32_MAX;
		}
		if (x->byaddr[mid][0] < (uintptr_t)p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT32_MAX;
}

static void put_id(snap *x, const void *p, uint8_t k, const char *what)
{
	uint32_t id = find_id(x, p, k);

	if (id == UINT32_MAX) {
		UNSUP(x, "not supported yet: %s that is not the store's", what);
		id = 0;
	}
	wasm_snap_u32(x->b, id);
}

static int inst_ord(const snap *x, const cm_component_instance *ci,
		    uint32_t *ord)
{
	for (uint32_t i = 0; i < x->ninsts; i++)
		if (x->insts[i] == ci) {
			*ord = i;
			return 0;
		}
	return -1;
}

/* u32 0 for NULL, else 1 + the instance's ordinal. */
static void put_inst(snap *x, const cm_component_instance *ci)
{
	uint32_t o = 0;

	if (ci != NULL && inst_ord(x, ci, &o)) {
		UNSUP(x, "a component instance of another store");
		return;
	}
	wasm_snap_u32(x->b, ci != NULL ? o + 1 : 0);
}

static void put_func(snap *x, const wasm_func *f)
{
	wasm_snap_status st =
		wasm_snap_put_func(x->map, x->b, f, x->why, x->whylen);

	if (st != WASM_SNAP_OK && x->st == WASM_SNAP_OK)
		x->st = st;
}

/* A lifted function: (component instance, index in its func space). */
static void put_cmfunc(snap *x, const cm_func *f)
{
	for (uint32_t i = 0; i < x->ninsts; i++) {
		const cm_component_instance *ci = x->insts[i];

		for (uint32_t j = 0; j < ci->nfilled[CM_SORT_FUNC]; j++)
			if (ci->spaces[CM_SORT_FUNC][j].func == f) {
				wasm_snap_u32(x->b, i);
				wasm_snap_u32(x->b, j);
				return;
			}
	}
	UNSUP(x, "not supported yet: a task of a function outside every "
		 "instance's function space");
}

static void put_val(snap *x, const wasm_val *v)
{
	uint64_t bits = 0;

	switch ((uint8_t)v->type) {
	case WASM_I32:
	case WASM_F32:
		bits = v->u.i32;
		break;
	case WASM_I64:
	case WASM_F64:
		bits = v->u.i64;
		break;
	default:
		UNSUP(x, "not supported yet: a reference or vector value held "
			 "by a thread or a subtask");
	}
	wasm_snap_u8(x->b, (uint8_t)v->type);
	wasm_snap_u64(x->b, bits);
}

static uint32_t cont_code(snap *x, cm_cont_fn f)
{
	if (f == NULL)
		return CM_CONT_NONE;
	for (uint32_t c = 1; c < CM_CONT_COUNT; c++)
		if (cm_thread_cont(c) == f || cm_lift_cont(c) == f ||
		    cm_builtin_cont(c) == f || cm_lower_cont(c) == f ||
		    cm_stream_cont(c) == f)
			return c;
	UNSUP(x, "not supported yet: a thread waiting for a call the host "
		 "makes (a starter)");
	return CM_CONT_NONE;
}

static bool uses_wait_obj(uint32_t code)
{
	return code == CM_CONT_READY_SUBTASK ||
	       code == CM_CONT_READY_SYNC_LOWER || code == CM_CONT_READY_END ||
	       code == CM_CONT_COMPLETE_WAIT ||
	       code == CM_CONT_COMPLETE_CANCEL ||
	       code == CM_CONT_COMPLETE_SYNC_LOWER ||
	       code == CM_CONT_COMPLETE_END;
}

static void put_task(snap *x, const cm_task *at)
{
	uint32_t cbs = 0, ref = 0;

	wasm_snap_u32(x->b, at->state);
	put_cmfunc(x, at->func);
	put_inst(x, at->inst);
	put_inst(x, at->caller);
	/* a supertask may have been freed while its callee lives on */
	wasm_snap_u32(x->b, find_id(x, at->supertask, K_TASK) == UINT32_MAX
				    ? 0
				    : find_id(x, at->supertask, K_TASK));
	if (cm_task_caller_is_call(at)) {
		/* the host's call: restored as a task whose caller is gone
		 * (cbs and ref 0), which goes on as the call of a client
		 * that left does; one that has not begun is cancelled then
		 * (cancel_unbegun) */
		if (at->state == CM_TASK_INITIAL &&
		    (at->implicit == NULL || !at->implicit->gate_waiting))
			UNSUP(x, "not supported yet: a call entering its "
				 "instance");
	} else if (at->state != CM_TASK_RESOLVED && at->cbs.env != NULL) {
		cbs = find_id(x, at->cbs.env, K_SUBTASK);
		if (cbs == UINT32_MAX ||
		    ((const cm_subtask *)at->cbs.env)->cbs.on_start !=
			    at->cbs.on_start)
			UNSUP(x, "not supported yet: a task whose caller waits "
				 "on the host's stack");
	}
	wasm_snap_u32(x->b, cbs == UINT32_MAX ? 0 : cbs);
	if (at->ref != NULL && !cm_task_caller_is_call(at)) {
		for (uint32_t i = 0; i < x->nobjs; i++)
			if (x->kinds[i] == K_SUBTASK &&
			    &((cm_subtask *)x->objs[i])->callee == at->ref)
				ref = i + 1;
		if (ref == 0)
			UNSUP(x, "not supported yet: a task its caller holds "
				 "on the host's stack");
	}
	wasm_snap_u32(x->b, ref);
	wasm_snap_u32(x->b, at->borrows.num_borrows);
	wasm_snap_u64(x->b, at->context[0]);
	wasm_snap_u64(x->b, at->context[1]);
	wasm_snap_u8(x->b, at->needs_exclusive);
	wasm_snap_u8(x->b, at->sync_lift);
	wasm_snap_u8(x->b, at->stackful);
	wasm_snap_u8(x->b, at->resolved_cancelled);
	put_id(x, at->implicit, K_THREAD, "a task's thread");
	wasm_snap_u32(x->b, at->nthreads);
	for (const cm_thread *t = at->threads; t != NULL; t = t->tnext)
		put_id(x, t, K_THREAD, "a task's thread");
	wasm_snap_u64(x->b, at->root);
	/* a call tag is the embedder's number of a call of this run: in
	 * the store a restore makes it would name another run's call (or
	 * one of the new run with the same number), so none is written */
	wasm_snap_u64(x->b, 0);
	/* what the host's call has left of its fuel budget: restored, it
	 * is a call in flight again under it (cm_call_adopt) */
	wasm_snap_u64(x->b, cm_task_call_budget(at));
	if (at->nres)
		UNSUP(x, "not supported yet: a task holding its result");
}

static void put_thread(snap *x, const cm_thread *t)
{
	uint32_t wake, ready, done, complete, wk = WAIT_NONE, wid = 0;
	wasm_snap_status st;

	/* (one stopped out of fuel mid-code is written: its exec says
	 * where, wasm/snapshot_exec.c; wake_continue goes on there; a host
	 * call's too, as its task carries what is left of the call's
	 * budget) */
	if (t->pinned || t->switch_to != NULL)
		UNSUP(x, "not supported yet: a thread under a synchronous "
			 "call");
	wake = cont_code(x, (cm_cont_fn)t->wake);
	ready = t->state == CM_THREAD_WAITING
			? cont_code(x, (cm_cont_fn)t->ready)
			: CM_CONT_NONE;
	done = cont_code(x, (cm_cont_fn)t->on_done);
	complete = wake == CM_CONT_WAKE_EXEC
			   ? cont_code(x, (cm_cont_fn)t->complete)
			   : CM_CONT_NONE;
	if (uses_wait_obj(ready) || uses_wait_obj(complete)) {
		uint32_t c = complete ? complete : ready;

		if (c == CM_CONT_COMPLETE_WAIT) {
			wk = WAIT_BUILTIN; /* the blocked built-in itself */
		} else if (c == CM_CONT_READY_END ||
			   c == CM_CONT_COMPLETE_END) {
			wk = WAIT_END;
			wid = find_id(x, t->wait_obj, K_END);
		} else {
			wk = WAIT_SUBTASK;
			wid = find_id(x, t->wait_obj, K_SUBTASK);
		}
		if (wid == UINT32_MAX)
			UNSUP(x, "not supported yet: a thread waiting on an "
				 "object that is not the store's");
	}
	put_id(x, t->task, K_TASK, "a thread's task");
	put_inst(x, t->inst);
	wasm_snap_u64(x->b, t->context[0]);
	wasm_snap_u64(x->b, t->context[1]);
	wasm_snap_u32(x->b, t->index);
	wasm_snap_u32(x->b, t->state);
	wasm_snap_u8(x->b, t->implicit);
	wasm_snap_u8(x->b, t->exec_busy);
	wasm_snap_u8(x->b, t->cancellable);
	wasm_snap_u8(x->b, t->gate_waiting);
	wasm_snap_u32(x->b, wake);
	wasm_snap_u32(x->b, ready);
	wasm_snap_u32(x->b, done);
	wasm_snap_u32(x->b, complete);
	put_id(x, t->wait_set, K_SET, "a thread's waitable set");
	wasm_snap_u8(x->b, (uint8_t)wk);
	wasm_snap_u32(x->b, wid == UINT32_MAX ? 0 : wid);
	wasm_snap_u64(x->b, t->wait_ptr);
	wasm_snap_u32(x->b, t->callback_code);
	wasm_snap_u32(x->b, t->nres);
	for (uint32_t i = 0; i < t->nres && i < 2; i++)
		put_val(x, &t->res[i]);
	put_func(x, t->start_fn);
	wasm_snap_u64(x->b, t->start_arg);
	if (x->st != WASM_SNAP_OK)
		return;
	st = wasm_exec_snapshot(t->exec, x->map, x->b, x->why, x->whylen);
	if (st != WASM_SNAP_OK)
		x->st = st;
}

static void put_waitable(snap *x, const cm_waitable *w)
{
	put_inst(x, w->inst);
	wasm_snap_u32(x->b, w->index);
	wasm_snap_u8(x->b, w->pending);
	wasm_snap_u8(x->b, w->sync_waiter);
	put_id(x, w->set, K_SET, "a waitable's set");
}

static void put_subtask(snap *x, const cm_subtask *st)
{
	uint32_t origin = UINT32_MAX, sup;

	for (uint32_t i = 0; i < wasm_snap_nhosts(x->map); i++)
		if (st->origin != NULL &&
		    cm_lower_of(wasm_snap_host_at(x->map, i)) == st->origin) {
			origin = i;
			break;
		}
	if (origin == UINT32_MAX)
		UNSUP(x, "not supported yet: a subtask of no canon lower");
	put_waitable(x, &st->w);
	wasm_snap_u32(x->b, st->state);
	wasm_snap_u32(x->b, origin == UINT32_MAX ? 0 : origin);
	sup = find_id(x, st->supertask, K_TASK);
	wasm_snap_u32(x->b, sup == UINT32_MAX ? 0 : sup);
	wasm_snap_u32(x->b, st->lenders.n);
	for (uint32_t i = 0; i < st->lenders.n; i++)
		wasm_snap_u32(x->b, st->lenders.indices[i]);
	wasm_snap_u8(x->b, st->resolve_delivered);
	wasm_snap_u8(x->b, st->async_lower);
	wasm_snap_u8(x->b, st->handed_out);
	wasm_snap_u8(x->b, st->cancel_requested);
	put_id(x, st->callee, K_TASK, "a subtask's callee");
	wasm_snap_u32(x->b, st->nargs);
	for (uint32_t i = 0; i < st->nargs; i++)
		put_val(x, &st->args[i]);
	wasm_snap_u32(x->b, st->ret_i);
	wasm_snap_u32(x->b, st->nres);
	if (st->nres)
		put_val(x, &st->res[0]);
}

static void put_set(snap *x, const cm_waitable_set *ws)
{
	uint32_t n = 0;

	wasm_snap_u32(x->b, ws->index);
	wasm_snap_u32(x->b, ws->num_waiting);
	for (const cm_waitable *w = ws->first; w != NULL; w = w->snext)
		n++;
	wasm_snap_u32(x->b, n);
	for (const cm_waitable *w = ws->first; w != NULL; w = w->snext)
		put_id(x, w, w->kind == CABI_ELEM_SUBTASK ? K_SUBTASK : K_END,
		       "a member of a waitable set");
}

static const cm_type *elem_type(const cm_canon *cn)
{
	const cm_type *t = cn != NULL ? cn->type : NULL;

	if (t == NULL || (t->kind != CM_STREAM && t->kind != CM_FUTURE))
		return NULL;
	return t->kind == CM_STREAM ? t->u.stream.elem : t->u.future.elem;
}

static void put_opts(snap *x, const cabi_options *o)
{
	uint32_t m = 0;

	if (o->memory != NULL &&
	    !wasm_snap_memory_ordinal(x->map, o->memory, &m))
		UNSUP(x, "a memory of another store");
	wasm_snap_u8(x->b, (uint8_t)o->string_encoding);
	wasm_snap_u32(x->b, o->memory != NULL ? m + 1 : 0);
	put_func(x, o->realloc);
	put_func(x, o->post_return);
	put_func(x, o->callback);
	wasm_snap_u8(x->b, o->async);
	wasm_snap_u8(x->b, o->ptr64);
}

static void put_bytes(snap *x, const void *p, size_t n);

/*
 * A host-held end's description, by the embedder that holds it
 * (cm_store_set_host_end_durable); refused when none describes it.
 */
static void put_host_end(snap *x, const cm_end *e)
{
	const struct cm_host_end_durable *d = &x->s->host_end_durable;
	uint8_t desc[CM_HOST_END_DESC_MAX];
	size_t len = 0;

	if (d->save == NULL ||
	    d->save(d->env, (cm_host_end *)e, desc, sizeof desc, &len) ||
	    len > sizeof desc) {
		UNSUP(x, "not supported yet: a stream or future end the host "
			 "holds");
		return;
	}
	put_bytes(x, desc, len);
}

static void put_end(snap *x, const cm_end *e, uint32_t id)
{
	const cm_shared *sh = e->sh;
	uint32_t owner = id;

	/* the first end of the pair (in store order) writes the state */
	for (uint32_t i = 0; i + 1 < id; i++)
		if (x->kinds[i] == K_END && ((cm_end *)x->objs[i])->sh == sh) {
			owner = i + 1;
			break;
		}
	/* bit 1: the host holds this end (CM_SNAPSHOT_FORMAT_HOST_ENDS) */
	wasm_snap_u8(x->b, (uint8_t)(e->readable | (e->host ? 2 : 0)));
	wasm_snap_u32(x->b, owner);
	if (owner == id) {
		uint32_t ty = 0;

		if (sh->t != NULL) {
			for (uint32_t i = 0;
			     ty == 0 && i < wasm_snap_nhosts(x->map); i++) {
				const cm_type *bt = elem_type(cm_builtin_canon(
					wasm_snap_host_at(x->map, i)));

				/* a host-made end's type is the import's:
				 * the same type, defined elsewhere */
				if (bt == sh->t ||
				    (bt != NULL && cm_valtype_same(bt, sh->t)))
					ty = i + 1;
			}
			if (ty == 0)
				UNSUP(x,
				      "not supported yet: a stream of a type "
				      "no built-in names");
		}
		wasm_snap_u32(x->b, ty);
		wasm_snap_u8(x->b, sh->future);
		wasm_snap_u8(x->b, sh->dropped);
		put_id(x, sh->pending, K_END, "a pending copy");
	}
	put_waitable(x, &e->w);
	wasm_snap_u32(x->b, e->state);
	put_inst(x, e->binst);
	put_opts(x, &e->opts);
	wasm_snap_u64(x->b, e->ptr);
	wasm_snap_u32(x->b, e->length);
	wasm_snap_u32(x->b, e->progress);
	wasm_snap_u32(x->b, e->result);
	wasm_snap_u8(x->b, e->partial);
	if (e->host)
		put_host_end(x, e);
}

static size_t begin(wasm_snap_buf *b, uint32_t tag)
{
	size_t at;

	wasm_snap_u32(b, tag);
	at = b->len;
	wasm_snap_u64(b, 0);
	return at;
}

static void end(wasm_snap_buf *b, size_t at)
{
	wasm_snap_patch_u64(b, at, b->len - at - 8);
}

static void put_objects(snap *x)
{
	size_t at = begin(x->b, CM_SNAP_TAG_OBJECTS);

	wasm_snap_u32(x->b, x->nobjs);
	for (uint32_t i = 0; i < x->nobjs && x->st == WASM_SNAP_OK; i++) {
		size_t rec;

		wasm_snap_u8(x->b, x->kinds[i]);
		rec = x->b->len;
		wasm_snap_u64(x->b, 0);
		switch (x->kinds[i]) {
		case K_TASK:
			put_task(x, x->objs[i]);
			break;
		case K_THREAD:
			put_thread(x, x->objs[i]);
			break;
		case K_SUBTASK:
			put_subtask(x, x->objs[i]);
			break;
		case K_SET:
			put_set(x, x->objs[i]);
			break;
		default:
			put_end(x, x->objs[i], i + 1);
			break;
		}
		wasm_snap_patch_u64(x->b, rec, x->b->len - rec - 8);
	}
	end(x->b, at);
}

static uint32_t rtype_ord(const snap *x, const cabi_resource_type *rt)
{
	for (uint32_t i = 0; i < x->s->nrtypes; i++)
		if (x->s->rtypes[i] == rt)
			return i;
	return UINT32_MAX;
}

static void put_bytes(snap *x, const void *p, size_t n)
{
	wasm_snap_u32(x->b, (uint32_t)n);
	wasm_snap_put(x->b, p, n);
}

/* The registration of host resource type rt in s, NULL for none. */
static const struct cm_host_res_reg *host_reg(const cm_store *s,
					      const cabi_resource_type *rt)
{
	for (uint32_t i = 0; i < s->nhost_res; i++)
		if (s->host_res[i].rt == rt)
			return &s->host_res[i];
	return NULL;
}

static int cmp_hres(const void *a, const void *b)
{
	const struct hres *x = a, *y = b;
	uintptr_t p = (uintptr_t)x->rt, q = (uintptr_t)y->rt;

	if (p != q)
		return p < q ? -1 : 1;
	if (x->rep != y->rep)
		return x->rep < y->rep ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Index the host resources of the handle tables: one entry per (type,
 * rep), its id given by the order of first appearance in the walk of
 * the tables (instances in order, slots in order), so that the ids and
 * the order the resources are written in depend on the tables alone,
 * never on the embedder's reps: a restored store, whose reps differ,
 * writes the same bytes.
 */
static int index_hres(snap *x)
{
	uint32_t n = 0, k = 0;
	uint64_t(*order)[2];

	for (uint32_t c = 0; c < x->ninsts; c++) {
		const cabi_table *t = &x->insts[c]->handles;

		for (uint32_t i = 1; i < t->len; i++)
			n += t->array[i].kind == CABI_ELEM_RESOURCE &&
			     rtype_ord(x, t->array[i].u.res.rt) == UINT32_MAX;
	}
	x->hres = calloc(n ? n : 1, sizeof *x->hres);
	x->byid = calloc(n ? n : 1, sizeof *x->byid);
	order = calloc(n ? n : 1, sizeof *order);
	if (x->hres == NULL || x->byid == NULL || order == NULL) {
		free(order);
		return sfail(x, WASM_SNAP_NOMEM, "out of memory");
	}
	for (uint32_t c = 0; c < x->ninsts; c++) {
		const cabi_table *t = &x->insts[c]->handles;

		for (uint32_t i = 1; i < t->len; i++) {
			const cabi_elem *e = &t->array[i];

			if (e->kind != CABI_ELEM_RESOURCE ||
			    rtype_ord(x, e->u.res.rt) != UINT32_MAX)
				continue;
			x->hres[k] = (struct hres){.rt = e->u.res.rt,
						   .rep = e->u.res.rep,
						   .first = k,
						   .ci = c,
						   .slot = i};
			k++;
		}
	}
	qsort(x->hres, n, sizeof *x->hres, cmp_hres);
	/* keep the first handle of each (type, rep) */
	k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (k == 0 || x->hres[k - 1].rt != x->hres[i].rt ||
		    x->hres[k - 1].rep != x->hres[i].rep)
			x->hres[k++] = x->hres[i];
	x->nhres = k;
	for (uint32_t i = 0; i < k; i++) {
		order[i][0] = x->hres[i].first;
		order[i][1] = i;
	}
	qsort(order, k, sizeof *order, cmp_pair64);
	for (uint32_t i = 0; i < k; i++) {
		x->byid[i] = (uint32_t)order[i][1];
		x->hres[order[i][1]].id = i + 1;
	}
	free(order);
	return 0;
}

/* The id of host resource (rt, rep) (index_hres); 0: not indexed. */
static uint32_t hres_id(const snap *x, const cabi_resource_type *rt,
			uint64_t rep)
{
	struct hres key = {.rt = rt, .rep = rep};
	uint32_t lo = 0, hi = x->nhres;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c;

		key.first = x->hres[mid].first;
		c = cmp_hres(&key, &x->hres[mid]);
		if (c == 0)
			return x->hres[mid].id;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

/*
 * A linker fallback's type (run/store.h fallback_rts): key "fallback/N"
 * (its place in the store's list), the rep as 8 bytes little endian
 * (it stands for no host state).
 */
#define FALLBACK_KEY "fallback/"

static void put_fallback(snap *x, const cabi_resource_type *rt, uint64_t rep)
{
	char key[sizeof FALLBACK_KEY + 10];
	uint8_t desc[8];
	int n = snprintf(key, sizeof key, FALLBACK_KEY "%u", rt->fallback - 1);

	for (unsigned i = 0; i < 8; i++)
		desc[i] = (uint8_t)(rep >> (8 * i));
	put_bytes(x, key, (size_t)n);
	put_bytes(x, desc, sizeof desc);
}

/*
 * The host resources, in id order: the embedder's key for the type and
 * its description of the rep (run/instance.h
 * cm_store_set_host_resource_durable), or a fallback type's
 * (put_fallback).
 */
static void put_hres(snap *x)
{
	uint8_t *desc = malloc(CM_HOST_RESOURCE_DESC_MAX);

	if (desc == NULL) {
		sfail(x, WASM_SNAP_NOMEM, "out of memory");
		return;
	}
	wasm_snap_u32(x->b, x->nhres);
	for (uint32_t i = 0; i < x->nhres && x->st == WASM_SNAP_OK; i++) {
		const struct hres *h = &x->hres[x->byid[i]];
		const struct cm_host_res_reg *reg = host_reg(x->s, h->rt);
		char why[CM_ERROR_MSG_MAX - 32] = "";
		size_t len = 0;

		if (reg == NULL && h->rt->fallback != 0) {
			put_fallback(x, h->rt, h->rep);
			continue;
		}
		if (reg == NULL || reg->d.save == NULL) {
			UNSUP(x,
			      "not supported yet: a handle of host resource "
			      "type %s (component instance %u, handle %u)",
			      h->rt->name ? h->rt->name : "?", h->ci, h->slot);
			break;
		}
		if (reg->d.save(reg->d.env, h->rep, desc,
				CM_HOST_RESOURCE_DESC_MAX, &len, why,
				sizeof why) ||
		    len > CM_HOST_RESOURCE_DESC_MAX) {
			UNSUP(x, "not supported yet: %s",
			      why[0] ? why : reg->d.key);
			break;
		}
		put_bytes(x, reg->d.key, strlen(reg->d.key));
		put_bytes(x, desc, len);
	}
	free(desc);
}

static void put_table(snap *x, const cabi_table *t, uint32_t ci)
{
	uint32_t len = t->len;

	wasm_snap_u32(x->b, len);
	wasm_snap_u32(x->b, t->nfree);
	for (uint32_t i = 0; i < t->nfree; i++)
		wasm_snap_u32(x->b, t->free[i]);
	for (uint32_t i = 1; i < len && x->st == WASM_SNAP_OK; i++) {
		const cabi_elem *e = &t->array[i];

		wasm_snap_u8(x->b, (uint8_t)e->kind);
		switch (e->kind) {
		case CABI_ELEM_FREE:
		case CABI_ELEM_ERROR_CONTEXT:
			break;
		case CABI_ELEM_RESOURCE: {
			const cabi_resource_handle *h = &e->u.res;
			uint32_t o = rtype_ord(x, h->rt), bt = 0;
			uint64_t rep = h->rep;

			/* a host type's rep is the embedder's: its id */
			if (o == UINT32_MAX) {
				o = SNAP_HOST_RTYPE;
				rep = hres_id(x, h->rt, h->rep);
			}
			if (h->borrow_scope != NULL) {
				for (uint32_t k = 0; k < x->nobjs; k++)
					if (x->kinds[k] == K_TASK &&
					    &((cm_task *)x->objs[k])->borrows ==
						    h->borrow_scope)
						bt = k + 1;
				if (bt == 0)
					UNSUP(x, "not supported yet: a borrow "
						 "of a task on the host's "
						 "stack");
			}
			wasm_snap_u32(x->b, o);
			wasm_snap_u64(x->b, rep);
			wasm_snap_u8(x->b, h->own);
			wasm_snap_u32(x->b, h->num_lends);
			wasm_snap_u32(x->b, bt);
			break;
		}
		case CABI_ELEM_SUBTASK:
			put_id(x, e->u.obj, K_SUBTASK, "a subtask handle");
			break;
		case CABI_ELEM_WAITABLE_SET:
			put_id(x, e->u.obj, K_SET, "a waitable set handle");
			break;
		case CABI_ELEM_THREAD:
			put_id(x, e->u.obj, K_THREAD, "a thread handle");
			break;
		default:
			put_id(x, e->u.obj, K_END, "a stream or future handle");
			break;
		}
	}
}

static void put_handles(snap *x)
{
	size_t at = begin(x->b, CM_SNAP_TAG_HANDLES);

	if (index_hres(x) == 0)
		put_hres(x);
	for (uint32_t i = 0; i < x->ninsts && x->st == WASM_SNAP_OK; i++) {
		put_table(x, &x->insts[i]->handles, i);
		put_table(x, &x->insts[i]->threads, i);
	}
	end(x->b, at);
}

static void put_sched(snap *x)
{
	size_t at = begin(x->b, CM_SNAP_TAG_SCHED);
	uint32_t n = 0;

	for (const cm_thread *t = x->s->wfirst; t != NULL; t = t->wnext)
		n += !cm_thread_is_call_starter(t);
	wasm_snap_u32(x->b, n);
	for (const cm_thread *t = x->s->wfirst; t != NULL; t = t->wnext)
		if (!cm_thread_is_call_starter(t))
			put_id(x, t, K_THREAD, "a waiting thread");
	for (uint32_t i = 0; i < x->ninsts; i++) {
		wasm_snap_u32(x->b, x->insts[i]->num_waiting_to_enter);
		put_id(x, x->insts[i]->exclusive_thread, K_THREAD,
		       "an instance's lock holder");
	}
	wasm_snap_u64(x->b, x->s->root_serial);
	wasm_snap_u8(x->b, x->s->fuel != UINT64_MAX);
	wasm_snap_u64(x->b, x->s->fuel);
	end(x->b, at);
}

static void put_pending(snap *x, struct cm_host_pending *p)
{
	const struct cm_host_durable *d = &x->s->host_durable;
	cm_host_pending_view v;
	uint8_t desc[CM_HOST_DESC_MAX];
	size_t len = 0;

	cm_host_pending_info(p, &v);
	if (v.st == NULL)
		return; /* its subtask is gone: nothing would see it */
	put_id(x, v.st, K_SUBTASK, "a host call's subtask");
	wasm_snap_u32(x->b, v.state);
	switch (v.state) {
	case 0: {
		bool ok = d->save != NULL &&
			  d->save(d->env, p, desc, sizeof desc, &len) == 0 &&
			  len <= sizeof desc;

		wasm_snap_u8(x->b, ok);
		put_bytes(x, desc, ok ? len : 0);
		break;
	}
	case 1: {
		const cm_type *rt = v.func->type->u.func.result;
		char *text = NULL;
		size_t n = 0;

		wasm_snap_u8(x->b, v.result != NULL);
		if (v.result != NULL && rt != NULL &&
		    wave_print(v.result, rt, &text, &n)) {
			sfail(x, WASM_SNAP_NOMEM, "out of memory");
			return;
		}
		put_bytes(x, text, n);
		free(text);
		break;
	}
	case 2:
		put_bytes(x, v.msg, strlen(v.msg));
		break;
	default:
		break;
	}
}

static void put_host_calls(snap *x)
{
	size_t at = begin(x->b, CM_SNAP_TAG_HOST), count;
	uint32_t n = 0;

	count = x->b->len;
	wasm_snap_u32(x->b, 0);
	for (int list = 0; list < 2; list++)
		for (struct cm_host_pending *p = list ? x->s->settled_first
						      : x->s->pending_first;
		     p != NULL && x->st == WASM_SNAP_OK;) {
			cm_host_pending_view v;
			size_t before = x->b->len;

			cm_host_pending_info(p, &v);
			put_pending(x, p);
			if (x->b->len != before)
				n++;
			p = v.next;
		}
	if (!x->b->failed)
		for (int i = 0; i < 4; i++)
			x->b->p[count + i] = (uint8_t)(n >> (8 * i));
	end(x->b, at);
}

wasm_snap_status cm_snap_async_write(cm_store *s, cm_component_instance **insts,
				     uint32_t ninsts, wasm_snap_buf *b,
				     char *why, size_t whylen)
{
	snap x = {.s = s,
		  .insts = insts,
		  .ninsts = ninsts,
		  .b = b,
		  .why = why,
		  .whylen = whylen};

	x.map = wasm_snap_map_new(s->wasm, why, whylen, &x.st);
	if (x.map != NULL && list_objs(&x) == 0 && index_objs(&x) == 0) {
		put_objects(&x);
		if (x.st == WASM_SNAP_OK)
			put_handles(&x);
		if (x.st == WASM_SNAP_OK)
			put_sched(&x);
		if (x.st == WASM_SNAP_OK)
			put_host_calls(&x);
	}
	wasm_snap_map_free(x.map);
	free(x.objs);
	free(x.kinds);
	free(x.byaddr);
	free(x.hres);
	free(x.byid);
	return x.st;
}

/* ---- reading ------------------------------------------------------------- */

typedef struct rd {
	snap x;
	wasm_snap_reader *r;
	uint32_t format; /* the image's (CM_SNAPSHOT_FORMAT_OLDEST or later) */
	/* per object: the restored end's shared state owner; how many
	 * table slots name it (one at most) */
	bool *shared_owner;
	uint8_t *seen;
	/* per task: the fuel budget its call had left (put_task) */
	uint64_t *budget;
	/* the host resources the embedder made again (HANDLES), by id - 1,
	 * and how many handles hold each, own handles among them */
	struct rd_hres {
		const cabi_resource_type *rt;
		uint64_t rep;
		uint32_t refs, owns;
	} * host;
	uint32_t nhost;
	/* the host-held ends, with their embedder's descriptions */
	struct rd_hend {
		cm_end *e;
		const uint8_t *desc;
		uint32_t len;
	} * hends;
	uint32_t nhends;
	bool complete; /* every section restored */
} rd;

#define TRUNC(d) BAD(&(d)->x, "truncated %s", "async section")

static bool g8(rd *d, uint8_t *v)
{
	if (wasm_snap_get_u8(d->r, v))
		return true;
	TRUNC(d);
	return false;
}

static bool g32(rd *d, uint32_t *v)
{
	if (wasm_snap_get_u32(d->r, v))
		return true;
	TRUNC(d);
	return false;
}

static bool g64(rd *d, uint64_t *v)
{
	if (wasm_snap_get_u64(d->r, v))
		return true;
	TRUNC(d);
	return false;
}

static bool gbool(rd *d, bool *v)
{
	uint8_t b;

	if (!g8(d, &b))
		return false;
	if (b > 1) {
		BAD(&d->x, "a flag that is not 0 or 1");
		return false;
	}
	*v = b;
	return true;
}

/* The object of id (kind k), NULL for 0; false on a bad id. */
static bool gobj(rd *d, uint8_t k, void **out)
{
	uint32_t id;

	if (!g32(d, &id))
		return false;
	if (id == 0) {
		*out = NULL;
		return true;
	}
	if (id > d->x.nobjs || d->x.kinds[id - 1] != k) {
		BAD(&d->x, "a reference to object %u of the wrong kind", id);
		return false;
	}
	*out = d->x.objs[id - 1];
	return true;
}

static bool ginst(rd *d, cm_component_instance **out)
{
	uint32_t o;

	if (!g32(d, &o))
		return false;
	if (o > d->x.ninsts) {
		BAD(&d->x, "no component instance %u", o);
		return false;
	}
	*out = o ? d->x.insts[o - 1] : NULL;
	return true;
}

static bool gfunc(rd *d, wasm_func **f)
{
	wasm_snap_status st =
		wasm_snap_get_func(d->x.map, d->r, f, d->x.why, d->x.whylen);

	if (st != WASM_SNAP_OK && d->x.st == WASM_SNAP_OK)
		d->x.st = st;
	return st == WASM_SNAP_OK;
}

static bool gval(rd *d, wasm_val *v)
{
	uint8_t t;
	uint64_t bits;

	if (!g8(d, &t) || !g64(d, &bits))
		return false;
	memset(v, 0, sizeof *v);
	switch (t) {
	case WASM_I32:
	case WASM_F32:
		if (bits >> 32)
			break;
		v->type = t;
		v->u.i32 = (uint32_t)bits;
		return true;
	case WASM_I64:
	case WASM_F64:
		v->type = t;
		v->u.i64 = bits;
		return true;
	default:
		break;
	}
	BAD(&d->x, "a bad core value");
	return false;
}

static bool gcont(rd *d, uint32_t lo, uint32_t hi, cm_cont_fn *f)
{
	uint32_t c;

	if (!g32(d, &c))
		return false;
	if (c == CM_CONT_NONE) {
		*f = NULL;
		return true;
	}
	if (c < lo || c > hi) {
		BAD(&d->x, "continuation %u where it cannot be", c);
		return false;
	}
	*f = cm_thread_cont(c);
	if (*f == NULL)
		*f = cm_lift_cont(c);
	if (*f == NULL)
		*f = cm_builtin_cont(c);
	if (*f == NULL)
		*f = cm_lower_cont(c);
	if (*f == NULL)
		*f = cm_stream_cont(c);
	return true;
}

static int restored_on_start(void *env, cm_val *args, cabi_error *err)
{
	(void)env;
	(void)args;
	return cabi_fail(err, CABI_ERR_TRAP, "call cancelled");
}

/* Its caller is gone (answered before the snapshot): the result goes. */
static int restored_on_resolve(void *env, cm_val *result, cabi_error *err)
{
	(void)env;
	(void)result;
	(void)err;
	return 0;
}

static bool get_task(rd *d, cm_task *at, uint64_t *budget)
{
	uint32_t state, fi, fj, nthreads;
	cm_subtask *cbs, *ref;
	void *sup, *impl;
	cm_thread **tail = &at->threads;

	if (!g32(d, &state) || !g32(d, &fi) || !g32(d, &fj))
		return false;
	if (state < CM_TASK_INITIAL || state > CM_TASK_RESOLVED ||
	    fi >= d->x.ninsts || fj >= d->x.insts[fi]->nfilled[CM_SORT_FUNC]) {
		BAD(&d->x, "a bad task");
		return false;
	}
	at->state = state;
	at->func = d->x.insts[fi]->spaces[CM_SORT_FUNC][fj].func;
	if (at->func == NULL || at->func->kind != CM_FUNC_LIFTED) {
		BAD(&d->x, "a task of a function that is not lifted");
		return false;
	}
	if (!ginst(d, &at->inst) || !ginst(d, &at->caller) ||
	    !gobj(d, K_TASK, &sup) || !gobj(d, K_SUBTASK, (void **)&cbs) ||
	    !gobj(d, K_SUBTASK, (void **)&ref))
		return false;
	if (at->inst != at->func->inst) {
		BAD(&d->x, "a task in another instance than its function's");
		return false;
	}
	at->supertask = sup;
	if (cbs != NULL) {
		at->cbs.on_start = NULL; /* cbs->cbs, once it is bound */
		at->cbs.env = cbs;
	} else {
		at->cbs.on_start = restored_on_start;
		at->cbs.on_resolve = restored_on_resolve;
		at->cbs.env = NULL;
	}
	if (ref != NULL)
		at->ref = &ref->callee;
	if (!g32(d, &at->borrows.num_borrows) || !g64(d, &at->context[0]) ||
	    !g64(d, &at->context[1]) || !gbool(d, &at->needs_exclusive) ||
	    !gbool(d, &at->sync_lift) || !gbool(d, &at->stackful) ||
	    !gbool(d, &at->resolved_cancelled) || !gobj(d, K_THREAD, &impl) ||
	    !g32(d, &nthreads))
		return false;
	at->implicit = impl;
	if (nthreads > wasm_snap_left(d->r) / 4) {
		TRUNC(d);
		return false;
	}
	for (uint32_t i = 0; i < nthreads; i++) {
		cm_thread *t;

		if (!gobj(d, K_THREAD, (void **)&t))
			return false;
		if (t == NULL || t->task != NULL) {
			BAD(&d->x, "a thread in no task or in two");
			return false;
		}
		t->task = at;
		*tail = t;
		tail = &t->tnext;
	}
	at->nthreads = nthreads;
	if (!g64(d, &at->root) || !g64(d, &at->call_tag) || !g64(d, budget))
		return false;
	/* a call with nothing left was decided trapped before any image;
	 * 0 would be a turn without a bound (cm_calls_turn_fuel) */
	if (*budget == 0) {
		BAD(&d->x, "a task whose call has no fuel left");
		return false;
	}
	return true;
}

/* An explicit thread's start argument: 32 bits in a format 6 image,
 * 64 since (its width against the function: check below). */
static bool get_start_arg(rd *d, cm_thread *t)
{
	uint32_t v32;

	if (d->format >= CM_SNAPSHOT_FORMAT_START_ARG64)
		return g64(d, &t->start_arg);
	if (!g32(d, &v32))
		return false;
	t->start_arg = v32;
	return true;
}

static bool get_thread(rd *d, cm_thread *t)
{
	void *task, *set, *wobj = NULL;
	cm_cont_fn wake, ready, done, complete;
	uint32_t state, nres, wid;
	uint8_t wk;
	bool b, parked;
	wasm_snap_status st;

	/* the task's record sets t->task; this one must agree */
	if (!gobj(d, K_TASK, &task) || !ginst(d, &t->inst))
		return false;
	if (task == NULL || t->inst == NULL) {
		BAD(&d->x, "a thread of no task or instance");
		return false;
	}
	t->wait_obj = task; /* checked against t->task at the end */
	if (!g64(d, &t->context[0]) || !g64(d, &t->context[1]) ||
	    !g32(d, &t->index) || !g32(d, &state) || !gbool(d, &t->implicit) ||
	    !gbool(d, &t->exec_busy) || !gbool(d, &t->cancellable) ||
	    !gbool(d, &t->gate_waiting) ||
	    !gcont(d, CM_CONT_WAKE_EXEC, CM_CONT_WAKE_EXPLICIT_START, &wake) ||
	    !gcont(d, CM_CONT_READY_GATE, CM_CONT_READY_END, &ready) ||
	    !gcont(d, CM_CONT_DONE_SYNC_LIFT, CM_CONT_DONE_EXPLICIT, &done) ||
	    !gcont(d, CM_CONT_COMPLETE_CANCELLED, CM_CONT_COMPLETE_END,
		   &complete) ||
	    !gobj(d, K_SET, &set) || !g8(d, &wk) || !g32(d, &wid))
		return false;
	if (state != CM_THREAD_SUSPENDED && state != CM_THREAD_WAITING) {
		BAD(&d->x, "a thread neither suspended nor waiting");
		return false;
	}
	if (wake == NULL) {
		BAD(&d->x, "a thread with no way to go on");
		return false;
	}
	t->state = state;
	t->wake = (cm_thread_wake_fn)wake;
	t->ready = (bool (*)(cm_thread *))ready;
	t->on_done = (cm_thread_done_fn)done;
	t->complete = (cm_thread_complete_fn)complete;
	t->wait_set = set;
	if (wk == WAIT_SUBTASK || wk == WAIT_END) {
		if (wid == 0 || wid > d->x.nobjs ||
		    d->x.kinds[wid - 1] !=
			    (wk == WAIT_END ? K_END : K_SUBTASK)) {
			BAD(&d->x, "a thread waiting on a bad object");
			return false;
		}
		wobj = d->x.objs[wid - 1];
		if (wk == WAIT_END && ((cm_end *)wobj)->host) {
			/* a thread waits on its own end, never the host's */
			BAD(&d->x, "a thread waiting on a host-held end");
			return false;
		}
	} else if (wk > WAIT_END || wid != 0) {
		BAD(&d->x, "a thread waiting on a bad object");
		return false;
	}
	if (!g64(d, &t->wait_ptr) || !g32(d, &t->callback_code) ||
	    !g32(d, &nres))
		return false;
	if (nres > 2 || t->callback_code > CM_CALLBACK_WAIT) {
		BAD(&d->x, "a bad thread");
		return false;
	}
	t->nres = nres;
	for (uint32_t i = 0; i < nres; i++)
		if (!gval(d, &t->res[i]))
			return false;
	if (!gfunc(d, &t->start_fn) || !get_start_arg(d, t))
		return false;
	st = wasm_exec_restore(t->exec, d->x.map, d->r, d->x.why, d->x.whylen);
	if (st != WASM_SNAP_OK) {
		if (d->x.st == WASM_SNAP_OK)
			d->x.st = st;
		return false;
	}
	if (wk == WAIT_BUILTIN) {
		if (t->exec->state != WASM_EXEC_STATE_BLOCKED ||
		    cm_builtin_canon(t->exec->blocked) == NULL) {
			BAD(&d->x, "a thread waiting in no built-in");
			return false;
		}
		wobj = t->exec->blocked->u.host.env;
	}
	/* stopped out of fuel mid-code: it goes on first (sched.h) */
	parked = wake == cm_thread_cont(CM_CONT_WAKE_CONTINUE);
	if (parked != (t->exec->state == WASM_EXEC_STATE_NO_FUEL) ||
	    (parked && (state != CM_THREAD_WAITING || ready != NULL ||
			complete != NULL || !t->exec_busy))) {
		BAD(&d->x, "a thread stopped out of fuel that does not fit");
		return false;
	}
	if (parked) {
		t->fuel_parked = true;
		t->store->fuel_parked++;
	}
	/* what the continuations read must be there (checked here, once) */
	b = t->exec->state == WASM_EXEC_STATE_BLOCKED;
	if ((wake == cm_thread_cont(CM_CONT_WAKE_EXEC)) != b ||
	    (b || parked) != t->exec_busy ||
	    (uses_wait_obj(cont_code(&d->x, ready)) ||
	     uses_wait_obj(cont_code(&d->x, complete))) != (wobj != NULL) ||
	    ((ready == cm_builtin_cont(CM_CONT_READY_SET) ||
	      complete == cm_builtin_cont(CM_CONT_COMPLETE_WAIT)) &&
	     set == NULL) ||
	    (wake == cm_builtin_cont(CM_CONT_WAKE_EXPLICIT_START) &&
	     t->start_fn == NULL) ||
	    (ready != NULL && state != CM_THREAD_WAITING)) {
		BAD(&d->x, "a thread whose continuations do not fit");
		return false;
	}
	if (t->start_fn != NULL) {
		const wasm_functype *ft = t->start_fn->type;

		if (ft->nparams != 1 || ft->nresults != 0 ||
		    (ft->params[0] != WASM_I32 && ft->params[0] != WASM_I64) ||
		    (ft->params[0] == WASM_I32 && t->start_arg > UINT32_MAX)) {
			BAD(&d->x, "a thread's start function of the wrong "
				   "type");
			return false;
		}
	}
	t->queued = false;
	/* wait_obj stays the task until the end: see check_thread */
	t->switch_to = wobj; /* parked here until check_thread */
	return true;
}

static bool get_waitable(rd *d, cm_waitable *w)
{
	void *set;

	if (!ginst(d, &w->inst) || !g32(d, &w->index) ||
	    !gbool(d, &w->pending) || !gbool(d, &w->sync_waiter) ||
	    !gobj(d, K_SET, &set))
		return false;
	w->set = set; /* linked by the set's record */
	return true;
}

static bool get_subtask(rd *d, cm_subtask *st)
{
	uint32_t state, origin, n;
	const void *lw;
	void *sup, *callee;
	cm_waitable w;

	memset(&w, 0, sizeof w);
	if (!get_waitable(d, &w) || !g32(d, &state) || !g32(d, &origin))
		return false;
	lw = cm_lower_of(wasm_snap_host_at(d->x.map, origin));
	if (lw == NULL || state > CM_SUBTASK_CANCELLED_BEFORE_RETURNED) {
		BAD(&d->x, "a subtask of no canon lower");
		return false;
	}
	cm_subtask_bind(st, lw);
	if (w.inst != st->inst) {
		BAD(&d->x, "a subtask in another instance than its lower's");
		return false;
	}
	st->w.index = w.index;
	st->w.pending = w.pending;
	st->w.sync_waiter = w.sync_waiter;
	st->w.set = w.set;
	st->state = state;
	if (!gobj(d, K_TASK, &sup) || !g32(d, &n))
		return false;
	st->supertask = sup;
	if (n > wasm_snap_left(d->r) / 4) {
		TRUNC(d);
		return false;
	}
	if (n) {
		st->lenders.indices = calloc(n, sizeof *st->lenders.indices);
		if (st->lenders.indices == NULL) {
			sfail(&d->x, WASM_SNAP_NOMEM, "out of memory");
			return false;
		}
		st->lenders.cap = n;
	}
	for (uint32_t i = 0; i < n; i++)
		if (!g32(d, &st->lenders.indices[st->lenders.n++]))
			return false;
	if (!gbool(d, &st->resolve_delivered) || !gbool(d, &st->async_lower) ||
	    !gbool(d, &st->handed_out) || !gbool(d, &st->cancel_requested) ||
	    !gobj(d, K_TASK, &callee) || !g32(d, &st->nargs))
		return false;
	st->callee = callee;
	if (st->nargs > CM_MAX_FLAT_PARAMS + 2) {
		BAD(&d->x, "a subtask with too many arguments");
		return false;
	}
	for (uint32_t i = 0; i < st->nargs; i++)
		if (!gval(d, &st->args[i]))
			return false;
	if (!g32(d, &st->ret_i) || !g32(d, &st->nres))
		return false;
	if (st->ret_i > st->nargs || st->nres > 1) {
		BAD(&d->x, "a bad subtask");
		return false;
	}
	return st->nres == 0 || gval(d, &st->res[0]);
}

static bool get_set(rd *d, cm_waitable_set *ws)
{
	uint32_t n;

	if (!g32(d, &ws->index) || !g32(d, &ws->num_waiting) || !g32(d, &n))
		return false;
	if (n > wasm_snap_left(d->r) / 4) {
		TRUNC(d);
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id;
		cm_waitable *w;

		if (!g32(d, &id))
			return false;
		if (id == 0 || id > d->x.nobjs ||
		    (d->x.kinds[id - 1] != K_SUBTASK &&
		     d->x.kinds[id - 1] != K_END)) {
			BAD(&d->x, "a bad member of a waitable set");
			return false;
		}
		w = d->x.objs[id - 1]; /* the waitable is first in both */
		if (w->set != ws || w->sprev != NULL || w == ws->first) {
			BAD(&d->x, "a waitable in a set it is not in");
			return false;
		}
		w->sprev = ws->last;
		if (ws->last != NULL)
			ws->last->snext = w;
		else
			ws->first = w;
		ws->last = w;
		cm_waitable_queue(w); /* armed: in the pending queue */
	}
	return true;
}

static bool get_opts(rd *d, cabi_options *o)
{
	uint8_t enc;
	uint32_t m;

	if (!g8(d, &enc) || !g32(d, &m))
		return false;
	if (enc > CM_LATIN1_UTF16 || m > 0x7fffffffu ||
	    (m && wasm_snap_memory_at(d->x.map, m - 1) == NULL)) {
		BAD(&d->x, "bad canonical options");
		return false;
	}
	o->string_encoding = (cm_string_encoding)enc;
	o->memory = m ? wasm_snap_memory_at(d->x.map, m - 1) : NULL;
	return gfunc(d, &o->realloc) && gfunc(d, &o->post_return) &&
	       gfunc(d, &o->callback) && gbool(d, &o->async) &&
	       gbool(d, &o->ptr64);
}

static const uint8_t *gbytes(rd *d, uint32_t *n);

static bool get_end(rd *d, cm_end *e, uint32_t id)
{
	uint32_t state;
	void *pending;

	if (d->shared_owner[id - 1]) {
		uint32_t ty;
		cm_shared *sh = e->sh;

		if (!g32(d, &ty) || !gbool(d, &sh->future) ||
		    !gbool(d, &sh->dropped) || !gobj(d, K_END, &pending))
			return false;
		if (ty != 0) {
			sh->t = elem_type(cm_builtin_canon(
				wasm_snap_host_at(d->x.map, ty - 1)));
			if (sh->t == NULL) {
				BAD(&d->x, "a stream of no type");
				return false;
			}
		}
		sh->pending = pending;
	}
	/* made before the pair's state was read: a future's ends became
	 * stream ends (the owner comes first, so sh->future is known) */
	e->w.kind = e->sh->future ? (e->readable ? CABI_ELEM_FUTURE_READABLE
						 : CABI_ELEM_FUTURE_WRITABLE)
				  : (e->readable ? CABI_ELEM_STREAM_READABLE
						 : CABI_ELEM_STREAM_WRITABLE);
	if (!get_waitable(d, &e->w) || !g32(d, &state) || state > END_DONE ||
	    !ginst(d, &e->binst) || !get_opts(d, &e->opts) ||
	    !g64(d, &e->ptr) || !g32(d, &e->length) || !g32(d, &e->progress) ||
	    !g32(d, &e->result) || !gbool(d, &e->partial))
		return false;
	e->state = state;
	if (e->progress > e->length || e->length > (1u << 28) - 1 ||
	    e->result > COPY_CANCELLED) {
		BAD(&d->x, "a bad stream end");
		return false;
	}
	if (e->host) {
		/* a host end never copies, waits or sits in a table */
		struct rd_hend *h = &d->hends[d->nhends];

		if (e->state == END_COPYING || e->state == END_CANCELLING ||
		    e->w.set != NULL || e->w.pending || e->w.sync_waiter ||
		    e->length != 0) {
			BAD(&d->x, "a host-held end that copies or waits");
			return false;
		}
		h->desc = gbytes(d, &h->len);
		if (h->desc == NULL)
			return false;
		if (h->len > CM_HOST_END_DESC_MAX) {
			BAD(&d->x, "a host-held end's description is too long");
			return false;
		}
		h->e = e;
		d->nhends++;
	}
	return true;
}

/* Make every object of the OBJECTS section empty (pass 1). */
static bool make_objects(rd *d, wasm_snap_reader *sec)
{
	uint32_t n;

	d->r = sec;
	if (!g32(d, &n))
		return false;
	if (n > wasm_snap_left(sec) / 9 || (n && d->x.ninsts == 0)) {
		TRUNC(d);
		return false;
	}
	d->x.objs = calloc(n ? n : 1, sizeof *d->x.objs);
	d->x.kinds = calloc(n ? n : 1, 1);
	d->shared_owner = calloc(n ? n : 1, sizeof *d->shared_owner);
	d->seen = calloc(n ? n : 1, 1);
	d->budget = calloc(n ? n : 1, sizeof *d->budget);
	d->hends = calloc(n ? n : 1, sizeof *d->hends);
	if (d->x.objs == NULL || d->x.kinds == NULL ||
	    d->shared_owner == NULL || d->seen == NULL || d->budget == NULL ||
	    d->hends == NULL) {
		sfail(&d->x, WASM_SNAP_NOMEM, "out of memory");
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint8_t k;
		uint64_t len;
		void *o = NULL;
		wasm_snap_reader rec;

		if (!g8(d, &k) || !g64(d, &len))
			return false;
		if (len > wasm_snap_left(sec)) {
			TRUNC(d);
			return false;
		}
		rec = (wasm_snap_reader){.p = sec->p + sec->off, .len = len};
		sec->off += len;
		switch (k) {
		case K_TASK:
			o = cm_task_new(d->x.s);
			break;
		case K_THREAD:
			o = cm_thread_new(NULL, d->x.insts[0]);
			break;
		case K_SUBTASK:
			o = cm_subtask_alloc(d->x.s);
			break;
		case K_SET:
			o = cm_waitable_set_alloc(d->x.s);
			break;
		case K_END: {
			uint8_t readable;
			uint32_t owner;
			cm_shared *sh;

			if (!wasm_snap_get_u8(&rec, &readable) ||
			    readable > (d->format >= CM_SNAPSHOT_FORMAT_HOST_ENDS
						? 3
						: 1) ||
			    !wasm_snap_get_u32(&rec, &owner) ||
			    owner == 0 || owner > i + 1 ||
			    (owner <= i && (d->x.kinds[owner - 1] != K_END ||
					    !d->shared_owner[owner - 1]))) {
				BAD(&d->x, "a bad stream end");
				return false;
			}
			if (owner == i + 1) {
				sh = calloc(1, sizeof *sh);
				if (sh == NULL)
					break;
				d->shared_owner[i] = true;
			} else {
				cm_end *first = d->x.objs[owner - 1];

				sh = first->sh;
				if (sh->nends != 1) {
					BAD(&d->x, "a stream with three ends");
					return false;
				}
				if (first->readable == (readable & 1)) {
					BAD(&d->x, "a stream whose ends both "
						   "read or both write");
					return false;
				}
			}
			if ((readable & 2) && sh->host != NULL) {
				BAD(&d->x, "a stream with two host ends");
				return false;
			}
			o = cm_end_new(sh, d->x.s, readable & 1);
			if (o == NULL && owner == i + 1)
				free(sh);
			if (o != NULL && (readable & 2)) {
				cm_end *he = (cm_end *)o;

				he->host = true;
				sh->host = he;
			}
			break;
		}
		default:
			sfail(&d->x, WASM_SNAP_MALFORMED,
			      "malformed snapshot: unknown object kind %u", k);
			return false;
		}
		if (o == NULL) {
			sfail(&d->x, WASM_SNAP_NOMEM, "out of memory");
			return false;
		}
		d->x.kinds[i] = k;
		d->x.objs[i] = o;
		d->x.nobjs = i + 1;
	}
	if (wasm_snap_left(sec) != 0) {
		BAD(&d->x, "bytes past the objects");
		return false;
	}
	return true;
}

/* Fill every object in (pass 2). */
static bool fill_objects(rd *d, wasm_snap_reader *sec)
{
	uint32_t n;

	sec->off = 0;
	wasm_snap_get_u32(sec, &n);
	/* ends first: a set's record links its members' waitables, whose
	 * set field their own records set */
	for (int pass = 0; pass < 2; pass++) {
		sec->off = 4;
		for (uint32_t i = 0; i < n; i++) {
			uint8_t k;
			uint64_t len;
			wasm_snap_reader rec;
			bool ok = true;

			wasm_snap_get_u8(sec, &k);
			wasm_snap_get_u64(sec, &len);
			rec = (wasm_snap_reader){.p = sec->p + sec->off,
						 .len = len};
			sec->off += len;
			if ((k == K_SET) != (pass == 1))
				continue;
			d->r = &rec;
			switch (k) {
			case K_TASK:
				ok = get_task(d, d->x.objs[i], &d->budget[i]);
				break;
			case K_THREAD:
				ok = get_thread(d, d->x.objs[i]);
				break;
			case K_SUBTASK:
				ok = get_subtask(d, d->x.objs[i]);
				break;
			case K_SET:
				ok = get_set(d, d->x.objs[i]);
				break;
			default: {
				uint8_t r8;
				uint32_t o32;

				wasm_snap_get_u8(&rec, &r8);
				wasm_snap_get_u32(&rec, &o32);
				ok = get_end(d, d->x.objs[i], i + 1);
				break;
			}
			}
			if (!ok)
				return false;
			if (wasm_snap_left(&rec) != 0) {
				BAD(&d->x, "bytes past object %u", i + 1);
				return false;
			}
		}
	}
	return true;
}

static bool get_table(rd *d, cabi_table *t, bool threads)
{
	uint32_t len, nfree, live = 0;

	if (!g32(d, &len) || !g32(d, &nfree))
		return false;
	if (len > CABI_TABLE_MAX_LENGTH + 1 || len > wasm_snap_left(d->r) ||
	    nfree >= (len ? len : 1)) {
		BAD(&d->x, "a bad handle table");
		return false;
	}
	free(t->array);
	free(t->free);
	t->array = calloc(len ? len : 1, sizeof *t->array);
	t->free = calloc(len ? len : 1, sizeof *t->free);
	t->cap = len ? len : 1;
	t->len = len;
	t->nfree = 0;
	if (t->array == NULL || t->free == NULL) {
		t->len = t->cap = 0;
		sfail(&d->x, WASM_SNAP_NOMEM, "out of memory");
		return false;
	}
	for (uint32_t i = 0; i < nfree; i++) {
		uint32_t f;

		if (!g32(d, &f))
			return false;
		if (f == 0 || f >= len) {
			BAD(&d->x, "a bad free handle");
			return false;
		}
		t->free[t->nfree++] = f;
	}
	for (uint32_t i = 1; i < len; i++) {
		cabi_elem *e = &t->array[i];
		uint8_t k;

		if (!g8(d, &k))
			return false;
		if (k > CABI_ELEM_THREAD ||
		    (threads != (k == CABI_ELEM_THREAD) &&
		     k != CABI_ELEM_FREE)) {
			BAD(&d->x, "a bad handle kind");
			return false;
		}
		e->kind = k;
		if (k != CABI_ELEM_FREE)
			live++;
		switch (k) {
		case CABI_ELEM_FREE:
		case CABI_ELEM_ERROR_CONTEXT:
			break;
		case CABI_ELEM_RESOURCE: {
			cabi_resource_handle *h = &e->u.res;
			uint32_t o;
			cm_task *bt;

			if (!g32(d, &o) || !g64(d, &h->rep) ||
			    !gbool(d, &h->own) || !g32(d, &h->num_lends) ||
			    !gobj(d, K_TASK, (void **)&bt))
				return false;
			if (o == SNAP_HOST_RTYPE && h->rep >= 1 &&
			    h->rep <= d->nhost && !(h->own && bt != NULL)) {
				struct rd_hres *r = &d->host[h->rep - 1];

				h->rt = r->rt;
				h->rep = r->rep;
				r->refs++;
				r->owns += h->own;
			} else if (o >= d->x.s->nrtypes ||
				   (h->own && bt != NULL)) {
				BAD(&d->x, "a bad resource handle");
				return false;
			} else {
				h->rt = d->x.s->rtypes[o];
			}
			h->borrow_scope = bt != NULL ? &bt->borrows : NULL;
			break;
		}
		default: {
			uint8_t want = k == CABI_ELEM_SUBTASK	     ? K_SUBTASK
				       : k == CABI_ELEM_WAITABLE_SET ? K_SET
				       : k == CABI_ELEM_THREAD	     ? K_THREAD
								     : K_END;

			uint32_t id;

			if (!g32(d, &id))
				return false;
			if (id == 0 || id > d->x.nobjs ||
			    d->x.kinds[id - 1] != want || d->seen[id - 1]) {
				BAD(&d->x, "a bad handle");
				return false;
			}
			d->seen[id - 1] = 1;
			e->u.obj = d->x.objs[id - 1];
			break;
		}
		}
	}
	/* the free stack names exactly the free slots, each once */
	if (live + t->nfree + (len ? 1 : 0) != len ||
	    (t->limit && live > t->limit)) {
		BAD(&d->x, "a handle table whose free list does not fit");
		return false;
	}
	for (uint32_t i = 0; i < t->nfree; i++) {
		if (t->array[t->free[i]].kind != CABI_ELEM_FREE) {
			BAD(&d->x, "a live handle on the free list");
			return false;
		}
		t->array[t->free[i]].kind = CABI_ELEM_THREAD + 1;
	}
	for (uint32_t i = 0; i < t->nfree; i++)
		t->array[t->free[i]].kind = CABI_ELEM_FREE;
	return true;
}

static const uint8_t *gbytes(rd *d, uint32_t *n);

/*
 * The type a "fallback/N" key names in d's store, its rep in desc; NULL
 * when key is not such a key, or (with the reason) names none or desc
 * is not a rep.
 */
static const cabi_resource_type *get_fallback(rd *d, const uint8_t *key,
					      uint32_t klen,
					      const uint8_t *desc,
					      uint32_t dlen, uint64_t *rep)
{
	const size_t plen = sizeof FALLBACK_KEY - 1;
	uint64_t n = 0;

	if (klen <= plen || memcmp(key, FALLBACK_KEY, plen) != 0)
		return NULL;
	for (uint32_t i = (uint32_t)plen; i < klen; i++) {
		if (key[i] < '0' || key[i] > '9' || n > UINT32_MAX ||
		    (i > plen && key[plen] == '0')) {
			BAD(&d->x, "a bad fallback resource type");
			return NULL;
		}
		n = n * 10 + (uint64_t)(key[i] - '0');
	}
	if (dlen != 8) {
		BAD(&d->x, "a fallback resource's rep is not 8 bytes");
		return NULL;
	}
	if (n >= d->x.s->nfallback_rts) {
		sfail(&d->x, WASM_SNAP_MISMATCH,
		      "host resource type %.*s: this store has no such "
		      "fallback type",
		      (int)klen, (const char *)key);
		return NULL;
	}
	*rep = 0;
	for (unsigned i = 0; i < 8; i++)
		*rep |= (uint64_t)desc[i] << (8 * i);
	return d->x.s->fallback_rts[n];
}

/*
 * The host resources: each made again by the embedder that registered
 * its type's key (run/instance.h cm_store_set_host_resource_durable),
 * or, for a linker fallback's type, the rep as written (get_fallback).
 * At most one per handle the store's tables may hold, and at least 8
 * bytes of the snapshot each, so a forged count makes no more of them
 * than the tables could name.
 */
static bool get_hres(rd *d)
{
	uint64_t limit = (uint64_t)d->x.ninsts * d->x.s->cfg.max_handles;
	uint32_t n;

	if (!g32(d, &n))
		return false;
	if (n > wasm_snap_left(d->r) / 8 || n > limit) {
		BAD(&d->x, "a bad count of host resources");
		return false;
	}
	d->host = calloc(n ? n : 1, sizeof *d->host);
	if (d->host == NULL) {
		sfail(&d->x, WASM_SNAP_NOMEM, "out of memory");
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct cm_host_res_reg *reg = NULL;
		const uint8_t *key, *desc;
		uint32_t klen, dlen;
		char why[CM_ERROR_MSG_MAX - 64] = "";
		uint64_t rep = 0;

		if ((key = gbytes(d, &klen)) == NULL)
			return false;
		if (klen == 0 || klen > CM_HOST_RESOURCE_KEY_MAX) {
			BAD(&d->x, "a bad host resource type");
			return false;
		}
		for (uint32_t k = 0; k < d->x.s->nhost_res; k++)
			if (strlen(d->x.s->host_res[k].d.key) == klen &&
			    !memcmp(d->x.s->host_res[k].d.key, key, klen))
				reg = &d->x.s->host_res[k];
		if ((desc = gbytes(d, &dlen)) == NULL)
			return false;
		if (dlen > CM_HOST_RESOURCE_DESC_MAX) {
			BAD(&d->x, "a host resource description too long");
			return false;
		}
		if (reg == NULL) {
			const cabi_resource_type *rt =
				get_fallback(d, key, klen, desc, dlen, &rep);

			if (rt != NULL) {
				d->host[i] = (struct rd_hres){.rt = rt,
							      .rep = rep};
				d->nhost = i + 1;
				continue;
			}
			if (d->x.st != WASM_SNAP_OK)
				return false;
		}
		if (reg == NULL || reg->d.restore == NULL) {
			sfail(&d->x, WASM_SNAP_MISMATCH,
			      "host resource type %.*s: this store cannot "
			      "restore it",
			      (int)klen, (const char *)key);
			return false;
		}
		if (reg->d.restore(reg->d.env, d->x.s, desc, dlen, &rep, why,
				   sizeof why)) {
			sfail(&d->x, WASM_SNAP_MISMATCH, "host resource %s: %s",
			      reg->d.key, why[0] ? why : "cannot be restored");
			return false;
		}
		d->host[i] = (struct rd_hres){.rt = reg->rt, .rep = rep};
		d->nhost = i + 1;
	}
	return true;
}

static bool get_handles(rd *d, wasm_snap_reader *sec)
{
	d->r = sec;
	if (!get_hres(d))
		return false;
	for (uint32_t i = 0; i < d->x.ninsts; i++)
		if (!get_table(d, &d->x.insts[i]->handles, false) ||
		    !get_table(d, &d->x.insts[i]->threads, true))
			return false;
	if (wasm_snap_left(sec) != 0) {
		BAD(&d->x, "bytes past the handle tables");
		return false;
	}
	/* as written: each is held, and owned at most once */
	for (uint32_t i = 0; i < d->nhost; i++)
		if (d->host[i].refs == 0 || d->host[i].owns > 1) {
			BAD(&d->x,
			    "host resource %u held by %u handles, %u "
			    "own",
			    i + 1, d->host[i].refs, d->host[i].owns);
			return false;
		}
	return true;
}

static bool get_sched(rd *d, wasm_snap_reader *sec)
{
	uint32_t n;
	bool metered;
	uint64_t fuel;

	d->r = sec;
	if (!g32(d, &n))
		return false;
	if (n > d->x.nobjs) {
		BAD(&d->x, "a bad waiting list");
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		cm_thread *t;

		if (!gobj(d, K_THREAD, (void **)&t))
			return false;
		if (t == NULL || t->queued || t->state != CM_THREAD_WAITING) {
			BAD(&d->x, "a bad waiting thread");
			return false;
		}
		cm_sched_enqueue(t);
	}
	for (uint32_t i = 0; i < d->x.ninsts; i++) {
		cm_component_instance *ci = d->x.insts[i];
		void *ex;

		if (!g32(d, &ci->num_waiting_to_enter) ||
		    !gobj(d, K_THREAD, &ex))
			return false;
		ci->exclusive_thread = ex;
	}
	if (!g64(d, &d->x.s->root_serial) || !gbool(d, &metered) ||
	    !g64(d, &fuel))
		return false;
	/* the embedder's fuel is its own; a metered store keeps the rest */
	if (metered && d->x.s->fuel != UINT64_MAX && fuel != UINT64_MAX)
		d->x.s->fuel = fuel;
	if (wasm_snap_left(sec) != 0) {
		BAD(&d->x, "bytes past the scheduler's state");
		return false;
	}
	return true;
}

static const uint8_t *gbytes(rd *d, uint32_t *n)
{
	const uint8_t *p;

	if (!g32(d, n))
		return NULL;
	p = wasm_snap_take(d->r, *n);
	if (p == NULL)
		TRUNC(d);
	return p;
}

static bool get_host_calls(rd *d, wasm_snap_reader *sec)
{
	const struct cm_host_durable *hd = &d->x.s->host_durable;
	uint32_t n;
	bool settled = false;

	d->r = sec;
	if (!g32(d, &n))
		return false;
	if (n > wasm_snap_left(sec) / 8) {
		TRUNC(d);
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		cm_subtask *st;
		uint32_t state, len = 0;
		const uint8_t *bytes = NULL;
		bool resumable = false, hasres = false;
		cm_val res, *rp = NULL;
		char msg[CM_ERROR_MSG_MAX] = "";
		cm_func *callee;
		struct cm_host_pending *p;

		if (!gobj(d, K_SUBTASK, (void **)&st) || !g32(d, &state))
			return false;
		if (st == NULL || st->host != NULL || state > 3 ||
		    (state == 0 && settled)) {
			BAD(&d->x, "a bad host call");
			return false;
		}
		settled = state != 0;
		if ((state == 0 && !gbool(d, &resumable)) ||
		    (state == 1 && !gbool(d, &hasres)))
			return false;
		if (state <= 2 && (bytes = gbytes(d, &len)) == NULL)
			return false;
		callee = cm_lower_callee(st->origin);
		if (callee == NULL || callee->kind != CM_FUNC_HOST ||
		    st->state >= CM_SUBTASK_RETURNED) {
			BAD(&d->x, "a host call of a subtask that calls no "
				   "host function");
			return false;
		}
		if (state == 1 && hasres) {
			const cm_type *rt = callee->type->u.func.result;
			wave_error we;

			if (rt == NULL || wave_parse((const char *)bytes, len,
						     rt, &res, &we)) {
				BAD(&d->x, "a host call's result that does not "
					   "parse");
				return false;
			}
			rp = &res;
		} else if (state == 1 && callee->type->u.func.result != NULL) {
			BAD(&d->x, "a host call's result is missing");
			return false;
		}
		if (state == 2)
			snprintf(msg, sizeof msg, "%.*s", (int)len,
				 (const char *)bytes);
		p = cm_host_pending_restore(d->x.s, callee, st, state, rp, msg);
		if (p == NULL) {
			if (rp != NULL)
				cm_val_free(rp);
			sfail(&d->x, WASM_SNAP_NOMEM, "out of memory");
			return false;
		}
		/* a call nothing resumes is cancelled (run/instance.h) */
		if (state == 0 &&
		    (!resumable || hd->resume == NULL ||
		     hd->resume(hd->env, d->x.s, p, bytes, len) != 0))
			cm_host_settle_cancelled(p);
	}
	if (wasm_snap_left(sec) != 0) {
		BAD(&d->x, "bytes past the host calls");
		return false;
	}
	return true;
}

/*
 * Each instance's num_waiting_to_enter is the number of its threads at
 * the gate (implicit_start takes one off as each leaves it).  Counted
 * down and back up, so the check costs one pass over the objects, not
 * one per instance.
 */
static bool gate_counts_match(snap *x)
{
	for (uint32_t i = 0; i < x->nobjs; i++) {
		cm_thread *t = x->objs[i];

		/* (a store refused is freed: a count left wrong is gone) */
		if (x->kinds[i] == K_THREAD && t->gate_waiting &&
		    t->inst->num_waiting_to_enter-- == 0)
			return BAD(x, "more threads at a gate than its "
				      "instance counts"),
			       false;
	}
	for (uint32_t k = 0; k < x->ninsts; k++)
		if (x->insts[k]->num_waiting_to_enter != 0)
			return BAD(x,
				   "component instance %u counts threads at "
				   "its gate that are not there",
				   k),
			       false;
	for (uint32_t i = 0; i < x->nobjs; i++)
		if (x->kinds[i] == K_THREAD &&
		    ((cm_thread *)x->objs[i])->gate_waiting)
			((cm_thread *)x->objs[i])->inst->num_waiting_to_enter++;
	return true;
}

/* After every section: what points at what must agree both ways. */
static bool check_all(rd *d)
{
	snap *x = &d->x;

	for (uint32_t i = 0; i < x->nobjs; i++) {
		void *o = x->objs[i];

		switch (x->kinds[i]) {
		case K_TASK: {
			cm_task *at = o;
			bool impl = at->implicit == NULL;

			if (at->cbs.env != NULL) {
				cm_subtask *st = at->cbs.env;

				at->cbs = st->cbs;
				if (st->callee != at)
					return BAD(x, "a task its caller does "
						      "not call"),
					       false;
			}
			if (at->ref != NULL && *at->ref != at)
				return BAD(x, "a task its caller does not "
					      "hold"),
				       false;
			for (cm_thread *t = at->threads; t != NULL;
			     t = t->tnext)
				impl |= t == at->implicit;
			if (!impl || at->nthreads == 0 ||
			    (at->func->opts.callback == NULL && !at->stackful &&
			     !at->sync_lift))
				return BAD(x,
					   "a task whose threads do not fit"),
				       false;
			break;
		}
		case K_THREAD: {
			cm_thread *t = o;
			void *wobj = t->switch_to;

			t->switch_to = NULL;
			if (t->task != t->wait_obj)
				return BAD(x, "a thread its task does not "
					      "list"),
				       false;
			t->wait_obj = wobj;
			if (t->inst != t->task->inst ||
			    (t->implicit != (t->task->implicit == t)) ||
			    (t->wake == (cm_thread_wake_fn)cm_lift_cont(
						CM_CONT_WAKE_CALLBACK) &&
			     (t->task->func->opts.callback == NULL ||
			      (t->callback_code == CM_CALLBACK_WAIT) !=
				      (t->wait_set != NULL))) ||
			    (t->ready == (bool (*)(cm_thread *))cm_lift_cont(
						 CM_CONT_READY_CALLBACK) &&
			     t->callback_code == CM_CALLBACK_WAIT &&
			     t->wait_set == NULL))
				return BAD(x, "a thread of the wrong kind"),
				       false;
			/* what cancel_unbegun and the gate's wake rely on */
			if (t->gate_waiting &&
			    (!t->implicit || t->state != CM_THREAD_WAITING ||
			     t->task->state != CM_TASK_INITIAL ||
			     t->task->borrows.num_borrows != 0 ||
			     t->wake != (cm_thread_wake_fn)cm_lift_cont(
						CM_CONT_WAKE_IMPLICIT_START) ||
			     t->ready != (bool (*)(cm_thread *))cm_lift_cont(
						 CM_CONT_READY_GATE)))
				return BAD(x, "a thread at the gate that does "
					      "not wait there"),
				       false;
			if (t->index != 0) {
				cabi_table *tt = &t->inst->threads;

				if (t->index >= tt->len ||
				    tt->array[t->index].kind !=
					    CABI_ELEM_THREAD ||
				    tt->array[t->index].u.obj != t)
					return BAD(x, "a thread not in its "
						      "table"),
					       false;
			}
			break;
		}
		case K_SUBTASK: {
			cm_subtask *st = o;

			if (st->handed_out &&
			    (st->w.index == 0 ||
			     st->w.index >= st->inst->handles.len ||
			     st->inst->handles.array[st->w.index].u.obj != st))
				return BAD(x, "a subtask not in its table"),
				       false;
			if (st->callee != NULL &&
			    st->callee->ref != &st->callee)
				return BAD(x, "a subtask's callee does not "
					      "know it"),
				       false;
			for (uint32_t k = 0; k < st->lenders.n; k++) {
				cabi_table *ht = &st->inst->handles;
				uint32_t li = st->lenders.indices[k];

				if (li == 0 || li >= ht->len ||
				    ht->array[li].kind != CABI_ELEM_RESOURCE)
					return BAD(x, "a subtask lends no "
						      "handle"),
					       false;
			}
			break;
		}
		case K_SET: {
			cm_waitable_set *ws = o;
			cabi_table *ht;
			bool found = false;

			for (uint32_t k = 0; k < x->ninsts && !found; k++) {
				ht = &x->insts[k]->handles;
				found = ws->index != 0 && ws->index < ht->len &&
					ht->array[ws->index].kind ==
						CABI_ELEM_WAITABLE_SET &&
					ht->array[ws->index].u.obj == ws;
			}
			if (!found)
				return BAD(x, "a waitable set in no table"),
				       false;
			break;
		}
		default: {
			cm_end *e = o;

			if (e->sh->nends != 2 && !e->sh->dropped)
				return BAD(x, "a stream with one end"), false;
			if (e->sh->pending != NULL &&
			    e->sh->pending->sh != e->sh)
				return BAD(x, "a copy pending on another "
					      "stream"),
				       false;
			if (e->sh->pending == e && e->state != END_COPYING &&
			    e->state != END_CANCELLING)
				return BAD(x, "a stream end whose copy does "
					      "not fit"),
				       false;
			if (e->sh->pending == e &&
			    (e->binst == NULL || e->opts.memory == NULL))
				return BAD(x, "a pending copy with no memory"),
				       false;
			if (e->host && (d->seen[i] || e->sh->pending == e))
				return BAD(x, "a host-held end in a table or "
					      "copying"),
				       false;
			break;
		}
		}
		if (x->kinds[i] == K_SUBTASK || x->kinds[i] == K_END) {
			cm_waitable *w = o;

			if (w->set != NULL && w->set->first != w &&
			    w->sprev == NULL)
				return BAD(x, "a waitable its set does not "
					      "list"),
				       false;
			if (w->index != 0 &&
			    (w->inst == NULL ||
			     w->index >= w->inst->handles.len ||
			     w->inst->handles.array[w->index].u.obj != w))
				return BAD(x, "a waitable not in its table"),
				       false;
		}
	}
	if (!gate_counts_match(x))
		return false;
	/* every handle names an object that says it is there */
	for (uint32_t k = 0; k < x->ninsts; k++) {
		cabi_table *ht = &x->insts[k]->handles;

		for (uint32_t i = 1; i < ht->len; i++) {
			cabi_elem *e = &ht->array[i];

			if (e->kind == CABI_ELEM_SUBTASK ||
			    (e->kind >= CABI_ELEM_STREAM_READABLE &&
			     e->kind <= CABI_ELEM_FUTURE_WRITABLE)) {
				cm_waitable *w = e->u.obj;

				if (w->kind != e->kind || w->index != i ||
				    w->inst != x->insts[k])
					return BAD(x, "a handle of the wrong "
						      "object"),
					       false;
			} else if (e->kind == CABI_ELEM_WAITABLE_SET &&
				   ((cm_waitable_set *)e->u.obj)->index != i) {
				return BAD(x, "a handle of the wrong object"),
				       false;
			} else if (e->kind == CABI_ELEM_RESOURCE &&
				   e->u.res.borrow_scope != NULL &&
				   ((cm_task *)((char *)e->u.res.borrow_scope -
						offsetof(cm_task, borrows)))
						   ->state == CM_TASK_INITIAL) {
				/* a task lends nothing before it starts; one
				 * at the gate may be cancelled, and freed,
				 * by the restore (cancel_unbegun) */
				return BAD(x, "a borrow of a task that has "
					      "not started"),
				       false;
			}
		}
		ht = &x->insts[k]->threads;
		for (uint32_t i = 1; i < ht->len; i++) {
			cm_thread *t = ht->array[i].u.obj;

			if (ht->array[i].kind == CABI_ELEM_THREAD &&
			    (t->index != i || t->inst != x->insts[k]))
				return BAD(x, "a thread handle of the wrong "
					      "thread"),
				       false;
		}
	}
	for (cm_thread *t = x->s->wfirst; t != NULL; t = t->wnext)
		if (t->state != CM_THREAD_WAITING)
			return BAD(x, "a thread on the waiting list that does "
				      "not wait"),
			       false;
	for (uint32_t i = 0; i < x->nobjs; i++)
		if (x->kinds[i] == K_THREAD) {
			cm_thread *t = x->objs[i];

			if (t->state == CM_THREAD_WAITING && !t->queued)
				return BAD(x, "a waiting thread off the "
					      "waiting list"),
				       false;
		}
	return true;
}

/* t holds nothing but own resource handles (a fresh store's start code
 * made them: wasi-libc's start takes its preopens' descriptors). */
static bool only_resources(const cabi_table *t)
{
	for (uint32_t i = 1; i < t->len; i++)
		if (t->array[i].kind != CABI_ELEM_FREE &&
		    (t->array[i].kind != CABI_ELEM_RESOURCE ||
		     !t->array[i].u.res.own || t->array[i].u.res.num_lends))
			return false;
	return true;
}

/*
 * The fresh store's own resources go before the snapshot's state
 * replaces them: a host type's through its host_dtor (the embedder's
 * object must not outlive the handle), a guest type's without its
 * destructor (the guest's memory is about to be overwritten, and no
 * guest code runs during a restore).
 */
static void forget_resources(cabi_table *t)
{
	for (uint32_t i = 1; i < t->len; i++) {
		const cabi_resource_handle *h = &t->array[i].u.res;

		if (t->array[i].kind == CABI_ELEM_RESOURCE &&
		    h->rt->impl == NULL && h->rt->host_dtor != NULL)
			h->rt->host_dtor(h->rt->host_env, h->rep);
	}
	t->len = 0;
	t->nfree = 0;
}

int cm_snap_async_restore_begin(cm_snap_async_state **out, cm_store *s,
				cm_component_instance **insts, uint32_t ninsts,
				uint32_t format, char *why, size_t whylen)
{
	rd *d = calloc(1, sizeof *d);
	wasm_snap_status st = WASM_SNAP_OK;

	*out = NULL;
	if (d == NULL)
		return WASM_SNAP_NOMEM;
	d->x.s = s;
	d->format = format;
	d->x.insts = insts;
	d->x.ninsts = ninsts;
	d->x.why = why;
	d->x.whylen = whylen;
	d->x.map = wasm_snap_map_new(s->wasm, why, whylen, &st);
	if (d->x.map == NULL) {
		free(d);
		return st;
	}
	/* a fresh store: nothing of its own to overwrite or lose */
	if (s->objs.next != &s->objs || s->wfirst != NULL ||
	    s->pending_first != NULL || s->settled_first != NULL) {
		cm_snap_async_restore_end(d, false);
		snprintf(why, whylen, "the store is not fresh");
		return WASM_SNAP_MISMATCH;
	}
	for (uint32_t i = 0; i < ninsts; i++)
		if (!only_resources(&insts[i]->handles) ||
		    cabi_table_count(&insts[i]->threads)) {
			cm_snap_async_restore_end(d, false);
			snprintf(why, whylen,
				 "component instance %u of the fresh store "
				 "holds handles",
				 i);
			return WASM_SNAP_MISMATCH;
		}
	for (uint32_t i = 0; i < ninsts; i++)
		forget_resources(&insts[i]->handles);
	*out = d;
	return WASM_SNAP_OK;
}

/*
 * The embedder takes its ends over again (cm_store_set_host_end_durable),
 * once every object is whole: it may look at the guest's end and its
 * pending copy.
 */
static bool take_host_ends(rd *d)
{
	const struct cm_host_end_durable *hd = &d->x.s->host_end_durable;

	for (uint32_t i = 0; i < d->nhends; i++) {
		const struct rd_hend *h = &d->hends[i];

		if (hd->restore == NULL ||
		    hd->restore(hd->env, d->x.s, h->e, h->desc, h->len)) {
			BAD(&d->x, "a host-held end no embedder takes over");
			return false;
		}
	}
	if (d->nhends > 0 &&
	    hd->restore(hd->env, d->x.s, NULL, NULL, 0)) {
		BAD(&d->x, "host-held ends that are not whole");
		return false;
	}
	return true;
}

wasm_snap_status cm_snap_async_restore(cm_snap_async_state *d, uint32_t tag,
				       wasm_snap_reader *sec)
{
	bool ok = false;

	switch (tag) {
	case CM_SNAP_TAG_OBJECTS:
		ok = make_objects(d, sec) && fill_objects(d, sec);
		break;
	case CM_SNAP_TAG_HANDLES:
		ok = get_handles(d, sec);
		break;
	case CM_SNAP_TAG_SCHED:
		ok = get_sched(d, sec);
		break;
	case CM_SNAP_TAG_HOST:
		ok = check_all(d) && get_host_calls(d, sec) &&
		     take_host_ends(d);
		d->complete = ok;
		break;
	default:
		break;
	}
	if (!ok && d->x.st == WASM_SNAP_OK)
		BAD(&d->x, "bad section %u", tag);
	return d->x.st;
}

/* Does task t still wait at its instance's entry gate (no code ran)? */
static bool at_gate(const cm_task *t)
{
	return t->state == CM_TASK_INITIAL && t->implicit != NULL &&
	       t->implicit->gate_waiting;
}

/*
 * A restored task whose caller is gone and which still waits at its
 * instance's entry gate (the host's call of it was in flight at the
 * image) has run no guest code: it is cancelled before it starts
 * (CANCELLED_BEFORE_STARTED), as cm_call_cancel cancels one at the
 * gate, instead of starting later on a caller that cannot hand it
 * arguments.  The rest of such calls go on, as the call of a client
 * that left does.
 */
static void cancel_unbegun(rd *d)
{
	snap *x = &d->x;
	uint32_t n = 0;
	cm_task **at;

	for (uint32_t i = 0; i < x->nobjs; i++)
		n += x->kinds[i] == K_TASK;
	at = calloc(n ? n : 1, sizeof *at);
	if (at == NULL)
		return; /* they start and trap "call cancelled" */
	n = 0;
	for (uint32_t i = 0; i < x->nobjs; i++) {
		cm_task *t = x->objs[i];

		if (x->kinds[i] == K_TASK &&
		    t->cbs.on_start == restored_on_start && at_gate(t))
			at[n++] = t;
	}
	for (uint32_t i = 0; i < n; i++) {
		cabi_error ce;

		memset(&ce, 0, sizeof ce);
		(void)cm_task_request_cancellation(at[i], &ce);
	}
	free(at);
}

/*
 * The host's calls in flight at the image that have begun (tasks whose
 * caller is gone, unresolved, past the gate) become calls in flight
 * again, under what was left of their budgets: a call its budget was to
 * stop is stopped after a restore too.  Before cancel_unbegun, which
 * may free the tasks it cancels.
 */
static int adopt_calls(rd *d)
{
	snap *x = &d->x;

	for (uint32_t i = 0; i < x->nobjs; i++) {
		cm_task *t = x->objs[i];

		if (x->kinds[i] == K_TASK &&
		    t->cbs.on_start == restored_on_start &&
		    t->state != CM_TASK_RESOLVED && !at_gate(t) &&
		    cm_call_adopt(x->s, t, d->budget[i]))
			return -1;
	}
	return 0;
}

int cm_snap_async_restore_end(cm_snap_async_state *d, bool failed)
{
	int rc = 0;

	if (d == NULL)
		return 0;
	if (!failed && d->complete) {
		rc = adopt_calls(d);
		cancel_unbegun(d);
	}
	/* the store is freed unused: what the embedder made goes now */
	for (uint32_t i = 0; failed && i < d->nhost; i++)
		if (d->host[i].rt->host_dtor != NULL)
			d->host[i].rt->host_dtor(d->host[i].rt->host_env,
						 d->host[i].rep);
	free(d->host);
	wasm_snap_map_free(d->x.map);
	free(d->x.objs);
	free(d->x.kinds);
	free(d->shared_owner);
	free(d->seen);
	free(d->budget);
	free(d->hends);
	free(d);
	return rc;
}
