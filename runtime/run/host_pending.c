/*
 * host_pending.c - host calls that complete later: the settle handle an
 * embedder keeps for a host import it answers asynchronously (the host
 * side of an async-lowered call, digest 3.15 "host calls"; seeds 000 and
 * 003, the settlement pump).
 *
 * Contract (run/instance.h, ARCHITECTURE invariant 2): settling
 * only records the outcome, queues it on the store and requests service
 * (coalesced through service_requested); it never runs guest code, not
 * even the caller's realloc.  The outcome reaches the caller's subtask
 * (on_resolve: lowering the result, arming its event) when a service
 * turn or a driver delivers it, and the threads it readies run there.
 * A handle is outstanding (pending list) until settled, then queued
 * (settled list) until delivered, then freed.  Freeing the subtask
 * detaches it; freeing the store tells the embedder (cancel callback)
 * and frees every handle.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_host_pending_new: one handle per deferred host call, at most
 *    max_pending_host_calls (10,000) outstanding per store (checked by
 *    cm_host_call_defer: "too many pending host calls (limit N)");
 *    settled ones wait on the settled list until the next delivery,
 *    as many as the embedder settled meanwhile.
 *  - cm_host_settle: a copy of the result the embedder hands in
 *    (bounded by what it handed in).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/instance.h"
#include "run/rt.h"
#include "run/sched.h"

typedef enum pending_state {
	PENDING_OUTSTANDING = 0,
	PENDING_RETURNED,
	PENDING_TRAPPED,
	PENDING_CANCELLED,
} pending_state;

struct cm_host_pending {
	cm_store *store;
	cm_func *func;
	cm_subtask *st; /* NULL once the subtask is gone */
	cm_call_cbs cbs;
	void (*on_cancel)(void *env, cm_host_pending *p);
	void *cancel_env;
	pending_state state;
	bool observed;	  /* the store's observer saw it deferred */
	uint64_t tags[2]; /* the observer's, for `settled` */
	cm_val result[1];
	uint32_t nres;
	char msg[CM_ERROR_MSG_MAX];
	cm_host_pending *prev, *next; /* pending list, then settled list */
};

static void unlink_pending(cm_host_pending *p)
{
	cm_store *s = p->store;

	if (p->prev != NULL)
		p->prev->next = p->next;
	else
		s->pending_first = p->next;
	if (p->next != NULL)
		p->next->prev = p->prev;
	p->prev = p->next = NULL;
	s->pending_host_calls--;
}

static void pending_free(cm_host_pending *p)
{
	if (p->st != NULL)
		p->st->host = NULL;
	cm_vals_free(p->result, p->nres);
	free(p);
}

/* Store teardown: nothing will ever deliver; tell the embedder. */
static void pending_cleanup(void *arg)
{
	cm_store *s = arg;

	while (s->pending_first != NULL) {
		cm_host_pending *p = s->pending_first;

		unlink_pending(p);
		if (p->on_cancel != NULL)
			p->on_cancel(p->cancel_env, p);
		pending_free(p);
	}
	while (s->settled_first != NULL) {
		cm_host_pending *p = s->settled_first;

		s->settled_first = p->next;
		pending_free(p);
	}
	s->settled_last = NULL;
}

/* A pending call of f for st, its store set to free it (NULL: no memory). */
static cm_host_pending *pending_alloc(cm_store *s, cm_func *f, cm_subtask *st,
				      const cm_call_cbs *cbs)
{
	cm_host_pending *p;

	if (!s->pending_cleanup) {
		if (cm_store_on_free(s, pending_cleanup, s))
			return NULL;
		s->pending_cleanup = true;
	}
	p = calloc(1, sizeof *p);
	if (p == NULL)
		return NULL;
	p->store = s;
	p->func = f;
	p->st = st;
	p->cbs = *cbs;
	return p;
}

cm_host_pending *cm_host_pending_new(cm_store *s, cm_func *f,
				     cm_component_instance *caller,
				     cm_subtask *st, const cm_call_cbs *cbs)
{
	cm_host_pending *p = pending_alloc(s, f, st, cbs);

	(void)caller;
	if (p == NULL)
		return NULL;
	p->next = s->pending_first;
	if (s->pending_first != NULL)
		s->pending_first->prev = p;
	s->pending_first = p;
	s->pending_host_calls++;
	st->host = p;
	return p;
}

void cm_host_pending_discard(cm_host_pending *p)
{
	unlink_pending(p);
	pending_free(p);
}

bool cm_host_pending_settled(const cm_host_pending *p)
{
	return p->state != PENDING_OUTSTANDING;
}

void cm_host_pending_detach(cm_host_pending *p)
{
	p->st = NULL;
}

void cm_host_pending_cancel(cm_host_pending *p)
{
	if (p->state == PENDING_OUTSTANDING && p->on_cancel != NULL)
		p->on_cancel(p->cancel_env, p);
}

void cm_host_pending_set_cancel(cm_host_pending *p,
				void (*on_cancel)(void *env,
						  cm_host_pending *p),
				void *env)
{
	p->on_cancel = on_cancel;
	p->cancel_env = env;
}

uint32_t cm_store_pending_host_calls(const cm_store *s)
{
	return s->pending_host_calls;
}

void cm_store_observe_host_calls(cm_store *s, const cm_host_observer *o)
{
	if (o != NULL)
		s->host_observer = *o;
	else
		memset(&s->host_observer, 0, sizeof s->host_observer);
}

void cm_host_pending_observe(cm_host_pending *p, uint64_t call_tag,
			     const cm_val *args, uint32_t nargs)
{
	const cm_host_observer *o = &p->store->host_observer;

	if (o->deferred == NULL)
		return;
	o->deferred(o->env, call_tag, p->func->instance, p->func->name,
		    p->func->type, args, nargs, p->tags);
	p->observed = true;
}

void cm_host_pending_observe_settled(cm_host_pending *p,
				     cm_host_outcome outcome,
				     const cm_val *result, const char *msg)
{
	const cm_host_observer *o = &p->store->host_observer;

	if (!p->observed)
		return;
	p->observed = false;
	if (o->settled != NULL)
		o->settled(o->env, p->tags, outcome, p->func->type, result,
			   msg);
}

/* Move p to the settled list and ask for service (coalesced). */
static void settle(cm_host_pending *p, pending_state state)
{
	cm_store *s = p->store;

	cm_host_pending_observe_settled(
		p,
		state == PENDING_RETURNED  ? CM_HOST_RETURNED
		: state == PENDING_TRAPPED ? CM_HOST_TRAPPED
					   : CM_HOST_CANCELLED,
		state == PENDING_RETURNED && p->nres ? &p->result[0] : NULL,
		state == PENDING_TRAPPED ? p->msg : NULL);
	unlink_pending(p);
	p->state = state;
	if (s->settled_last != NULL)
		s->settled_last->next = p;
	else
		s->settled_first = p;
	s->settled_last = p;
	if (s->cfg.request_service != NULL && !s->service_requested) {
		s->service_requested = true;
		s->cfg.request_service(s->cfg.service_env);
	}
}

int cm_host_settle(cm_host_pending *p, const cm_val *results, uint32_t nresults,
		   cm_error *err)
{
	const cm_type *ft = p->func->type;
	uint32_t nres = ft->u.func.result != NULL;
	char why[128];

	if (err != NULL)
		memset(err, 0, sizeof *err);
	if (nresults != nres)
		return cm_error_set(err, CM_ERR_VALUE,
				    "expected %u results, got %u", nres,
				    nresults);
	if (nres &&
	    !cm_val_typecheck(&results[0], ft->u.func.result, why, sizeof why))
		return cm_error_set(err, CM_ERR_VALUE, "result: %s", why);
	if (nres && cm_val_copy(&p->result[0], &results[0]))
		return cm_error_set(err, CM_ERR_NOMEM, "out of memory");
	p->nres = nres;
	settle(p, PENDING_RETURNED);
	return 0;
}

void cm_host_settle_trap(cm_host_pending *p, const char *msg)
{
	snprintf(p->msg, sizeof p->msg, "%s",
		 msg != NULL ? msg : "host call failed");
	settle(p, PENDING_TRAPPED);
}

void cm_host_settle_cancelled(cm_host_pending *p)
{
	settle(p, PENDING_CANCELLED);
}

/* Resolve p's subtask as definitions.py's on_resolve would. */
static int deliver(cm_host_pending *p, cabi_error *err)
{
	cm_subtask *st = p->st;

	if (st == NULL)
		return 0;
	st->host = NULL;
	p->st = NULL;
	switch (p->state) {
	case PENDING_RETURNED:
		return p->cbs.on_resolve(p->cbs.env, p->result, err);
	case PENDING_CANCELLED:
		return p->cbs.on_resolve(p->cbs.env, NULL, err);
	default:
		/* a trap of the host callee traps (poisons) its caller */
		cm_poison(st->inst, NULL);
		return cabi_fail(err, CABI_ERR_TRAP, "%s", p->msg);
	}
}

int cm_host_pending_deliver(cm_store *s, cabi_error *err)
{
	while (s->settled_first != NULL) {
		cm_host_pending *p = s->settled_first;
		int rc;

		s->settled_first = p->next;
		if (s->settled_first == NULL)
			s->settled_last = NULL;
		p->next = NULL;
		rc = deliver(p, err);
		pending_free(p);
		if (rc)
			return -1;
	}
	return 0;
}

/* ---- snapshots (run/snapshot.c) ---------------------------------------- */

void cm_store_set_host_durable(cm_store *s,
			       int (*save)(void *env, cm_host_pending *p,
					   uint8_t *desc, size_t cap,
					   size_t *len),
			       int (*resume)(void *env, cm_store *s,
					     cm_host_pending *p,
					     const uint8_t *desc, size_t len),
			       void *env)
{
	s->host_durable.save = save;
	s->host_durable.resume = resume;
	s->host_durable.env = env;
}

const char *cm_host_pending_name(const cm_host_pending *p,
				 const char **instance)
{
	if (instance != NULL)
		*instance = p->func->instance;
	return p->func->name;
}

void cm_host_pending_info(const cm_host_pending *p, cm_host_pending_view *v)
{
	v->st = p->st;
	v->func = p->func;
	v->state = (uint32_t)p->state;
	v->result = p->nres ? &p->result[0] : NULL;
	v->msg = p->msg;
	v->next = p->next;
}

cm_host_pending *cm_host_pending_restore(cm_store *s, cm_func *f,
					 cm_subtask *st, uint32_t state,
					 cm_val *result, const char *msg)
{
	cm_host_pending *p = pending_alloc(s, f, st, &st->cbs), **tail;

	if (p == NULL)
		return NULL;
	p->state = (pending_state)state;
	if (result != NULL) {
		p->result[0] = *result;
		p->nres = 1;
	}
	snprintf(p->msg, sizeof p->msg, "%s", msg != NULL ? msg : "");
	st->host = p;
	if (state == PENDING_OUTSTANDING) {
		/* the list's order is kept: append */
		for (tail = &s->pending_first; *tail != NULL;
		     tail = &(*tail)->next)
			p->prev = *tail;
		*tail = p;
		s->pending_host_calls++;
	} else {
		if (s->settled_last != NULL)
			s->settled_last->next = p;
		else
			s->settled_first = p;
		s->settled_last = p;
	}
	return p;
}
