/*
 * store.c - the Component Model Store: the wasm_store, the arena of
 * instance objects, cleanups, the exec pool and the fuel of a host call.
 *
 * Contract (store.h): everything is released by cm_store_free, cleanups
 * first (newest first: they may still look at tracked objects, e.g. a
 * pending host call detaching its subtask), then the tracked objects,
 * then the execs, the wasm_store and the arena.
 * The exec pool is a LIFO stack: the guest calls the host makes around a
 * call (a caller's realloc in a sync lower) acquire and release in strict
 * nesting order.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_store_on_free: one cleanup per instance handle table and
 *    subsystem (bounded by the instances, the component's length).
 *  - cm_store_exec_acquire: the exec pool, one per nested host-driven
 *    call (bounded by the call depth).
 *  - the store's arena: STORE_ARENA_LIMIT (4 GiB).
 */
#include <stdlib.h>
#include <string.h>

#include "component/arena.h"
#include "run/store.h"

/* Instance objects are small; the cap only guards against runaway. */
#define STORE_ARENA_LIMIT ((size_t)1 << 32)

cm_store *cm_store_new(const cm_store_config *cfg)
{
	cm_store *s = calloc(1, sizeof *s);

	if (s == NULL)
		return NULL;
	s->objs.prev = s->objs.next = &s->objs;
	if (cfg != NULL)
		s->cfg = *cfg;
	s->wasm = wasm_store_new(&s->cfg.limits);
	s->arena = cm_arena_new(STORE_ARENA_LIMIT);
	if (s->wasm == NULL || s->arena == NULL) {
		cm_store_free(s);
		return NULL;
	}
	if (s->cfg.max_handles == 0)
		s->cfg.max_handles = CM_STORE_DEFAULT_MAX_HANDLES;
	if (s->cfg.max_threads == 0)
		s->cfg.max_threads = CM_STORE_DEFAULT_MAX_THREADS;
	if (s->cfg.max_pending_host_calls == 0)
		s->cfg.max_pending_host_calls =
			CM_STORE_DEFAULT_MAX_PENDING_HOST_CALLS;
	if (s->cfg.max_instances == 0)
		s->cfg.max_instances = CM_STORE_DEFAULT_MAX_INSTANCES;
	if (s->cfg.max_host_bytes == 0)
		s->cfg.max_host_bytes = CM_STORE_DEFAULT_MAX_HOST_BYTES;
	s->host_bytes.limit =
		s->cfg.max_host_bytes == UINT64_MAX ? 0 : s->cfg.max_host_bytes;
	s->fuel = UINT64_MAX;
	s->rng = s->cfg.sched_seed;
	return s;
}

void cm_store_free(cm_store *s)
{
	if (s == NULL)
		return;
	s->freeing = true;
	while (s->ncleanups > 0) {
		cm_store_cleanup *c = &s->cleanups[--s->ncleanups];

		c->fn(c->arg);
	}
	free(s->cleanups);
	free(s->rtypes);
	free(s->host_res);
	free(s->fallback_rts);
	while (s->objs.next != &s->objs) {
		cm_store_obj *o = s->objs.next;

		cm_store_untrack(o);
		o->dispose(o);
	}
	for (uint32_t i = 0; i < s->nexecs; i++)
		wasm_exec_free(s->execs[i]);
	free(s->execs);
	while (s->nthread_execs > 0)
		wasm_exec_free(s->thread_execs[--s->nthread_execs]);
	if (s->wasm != NULL)
		wasm_store_free(s->wasm);
	if (s->arena != NULL)
		cm_arena_free(s->arena);
	free(s);
}

bool cm_store_freeing(const cm_store *s)
{
	return s->freeing;
}

int cm_store_on_free(cm_store *s, void (*fn)(void *), void *arg)
{
	if (s->ncleanups == s->cleanups_cap) {
		uint32_t cap = s->cleanups_cap ? 2 * s->cleanups_cap : 16;
		cm_store_cleanup *v = realloc(s->cleanups, cap * sizeof *v);

		if (v == NULL)
			return -1;
		s->cleanups = v;
		s->cleanups_cap = cap;
	}
	s->cleanups[s->ncleanups].fn = fn;
	s->cleanups[s->ncleanups].arg = arg;
	s->ncleanups++;
	return 0;
}

void cm_store_track(cm_store *s, cm_store_obj *o,
		    void (*dispose)(cm_store_obj *o))
{
	o->dispose = dispose;
	o->prev = s->objs.prev;
	o->next = &s->objs;
	s->objs.prev->next = o;
	s->objs.prev = o;
}

void cm_store_untrack(cm_store_obj *o)
{
	if (o->next == NULL)
		return;
	o->prev->next = o->next;
	o->next->prev = o->prev;
	o->prev = o->next = NULL;
}

void cm_store_set_fuel(cm_store *s, uint64_t fuel)
{
	s->fuel = fuel;
}

uint64_t cm_store_fuel(const cm_store *s)
{
	return s->fuel;
}

static wasm_exec *new_exec(cm_store *s)
{
	wasm_exec_config cfg;

	cfg.max_stack_bytes = s->cfg.max_stack_bytes;
	cfg.max_call_depth = s->cfg.max_call_depth;
	return wasm_exec_new(s->wasm, &cfg);
}

wasm_exec *cm_store_exec_acquire(cm_store *s)
{
	if (s->nbusy == s->nexecs) {
		wasm_exec *e;

		if (s->nexecs == s->execs_cap) {
			uint32_t cap = s->execs_cap ? 2 * s->execs_cap : 8;
			wasm_exec **v = realloc(s->execs, cap * sizeof *v);

			if (v == NULL)
				return NULL;
			s->execs = v;
			s->execs_cap = cap;
		}
		e = new_exec(s);
		if (e == NULL)
			return NULL;
		s->execs[s->nexecs++] = e;
	}
	return s->execs[s->nbusy++];
}

void cm_store_exec_release(cm_store *s, wasm_exec *e, bool reusable)
{
	uint32_t i = s->nbusy;

	/* Normally the top of the stack; search to stay safe otherwise. */
	while (i > 0 && s->execs[i - 1] != e)
		i--;
	if (i == 0)
		return;
	i--;
	if (!reusable) {
		/* Its call is still outstanding: replace it with a fresh one
		 * (or drop the slot when that fails). */
		wasm_exec *n = new_exec(s);

		wasm_exec_free(e);
		if (n != NULL) {
			s->execs[i] = n;
		} else {
			memmove(&s->execs[i], &s->execs[i + 1],
				(s->nexecs - i - 1) * sizeof *s->execs);
			s->nexecs--;
			s->nbusy--;
			return;
		}
	}
	/* Move it just above the busy ones. */
	if (i != s->nbusy - 1) {
		wasm_exec *x = s->execs[i];

		memmove(&s->execs[i], &s->execs[i + 1],
			(s->nbusy - i - 1) * sizeof *s->execs);
		s->execs[s->nbusy - 1] = x;
	}
	s->nbusy--;
}

wasm_exec_status cm_store_exec_call(cm_store *s, wasm_exec *e, wasm_func *f,
				    const wasm_val *args, uint32_t nargs)
{
	wasm_exec_status st;

	wasm_exec_set_fuel(e, s->fuel);
	st = wasm_exec_call(e, f, args, nargs);
	if (s->fuel != UINT64_MAX)
		s->fuel = wasm_exec_fuel(e);
	return st;
}

void cm_store_bill_host_work(cm_store *s, wasm_exec *x)
{
	uint64_t owed = (s->host_bytes.work - s->host_work_billed) /
			CM_HOST_WORK_BYTES_PER_FUEL;
	uint64_t fuel = wasm_exec_fuel(x), pay;

	if (owed == 0)
		return;
	if (fuel == UINT64_MAX) {
		/* nothing to pay with, and nobody to owe it to later */
		s->host_work_billed = s->host_bytes.work;
		return;
	}
	pay = owed < fuel ? owed : fuel;
	wasm_exec_set_fuel(x, fuel - pay);
	s->host_work_billed += pay * CM_HOST_WORK_BYTES_PER_FUEL;
}
