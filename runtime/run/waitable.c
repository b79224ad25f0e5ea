/*
 * waitable.c - Waitable and WaitableSet (definitions.py Waitable,
 * WaitableSet; digest 3.8) and the Subtask's pending event.
 *
 * Contract (sched.h): a waitable holds at most one pending event, armed
 * by cm_waitable_set_pending and evaluated only when delivered; it is in
 * at most one set, members kept in join order, and a set delivers the
 * member whose event was armed first (definitions.py shuffles the
 * members before it looks, so any order is the spec's; this one is
 * fair, and constant time: sched.h cm_waitable_set).
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: a
 * waitable joins a set through links inside itself.
 */
#include <string.h>

#include "run/rt.h"
#include "run/sched.h"

void cm_waitable_queue(cm_waitable *w)
{
	cm_waitable_set *s = w->set;

	if (s == NULL || !w->pending || w->queued)
		return;
	w->pnext = NULL;
	w->pprev = s->plast;
	if (s->plast != NULL)
		s->plast->pnext = w;
	else
		s->pfirst = w;
	s->plast = w;
	w->queued = true;
}

static void unqueue(cm_waitable *w)
{
	cm_waitable_set *s = w->set;

	if (!w->queued)
		return;
	if (w->pprev != NULL)
		w->pprev->pnext = w->pnext;
	else
		s->pfirst = w->pnext;
	if (w->pnext != NULL)
		w->pnext->pprev = w->pprev;
	else
		s->plast = w->pprev;
	w->pprev = w->pnext = NULL;
	w->queued = false;
}

void cm_waitable_clear_pending(cm_waitable *w)
{
	unqueue(w);
	w->pending = false;
}

void cm_waitable_set_pending(cm_waitable *w)
{
	w->pending = true;
	cm_waitable_queue(w);
	/* a waiter may now be ready: ask for service */
	if (w->inst != NULL && w->inst->store->wfirst != NULL) {
		cm_store *s = w->inst->store;

		if (s->cfg.request_service != NULL && !s->service_requested) {
			s->service_requested = true;
			s->cfg.request_service(s->cfg.service_env);
		}
	}
}

void cm_waitable_join(cm_waitable *w, cm_waitable_set *s)
{
	cm_waitable_set *old = w->set;

	if (old != NULL) {
		unqueue(w);
		if (w->sprev != NULL)
			w->sprev->snext = w->snext;
		else
			old->first = w->snext;
		if (w->snext != NULL)
			w->snext->sprev = w->sprev;
		else
			old->last = w->sprev;
		w->sprev = w->snext = NULL;
		w->set = NULL;
	}
	if (s == NULL)
		return;
	w->set = s;
	w->sprev = s->last;
	if (s->last != NULL)
		s->last->snext = w;
	else
		s->first = w;
	s->last = w;
	cm_waitable_queue(w);
}

bool cm_waitable_set_has_event(const cm_waitable_set *s)
{
	return s->pfirst != NULL;
}

int cm_waitable_set_take(cm_store *st, cm_waitable_set *s, cm_event *ev,
			 cabi_error *err)
{
	if (s->pfirst != NULL)
		return cm_waitable_deliver(s->pfirst, ev, err);
	ev->code = CM_EVENT_NONE;
	ev->p1 = ev->p2 = 0;
	return 0;
}

int cm_subtask_event(cm_subtask *st, cm_event *ev)
{
	cm_subtask_state s = st->state;

	if (s == CM_SUBTASK_RETURNED ||
	    s == CM_SUBTASK_CANCELLED_BEFORE_STARTED ||
	    s == CM_SUBTASK_CANCELLED_BEFORE_RETURNED) {
		if (!st->resolve_delivered) {
			cabi_lenders_release(&st->lenders);
			st->resolve_delivered = true;
		}
	}
	ev->code = CM_EVENT_SUBTASK;
	ev->p1 = st->w.index;
	ev->p2 = s;
	return 0;
}

int cm_waitable_deliver(cm_waitable *w, cm_event *ev, cabi_error *err)
{
	cm_waitable_clear_pending(w);
	switch (w->kind) {
	case CABI_ELEM_SUBTASK:
		return cm_subtask_event((cm_subtask *)w, ev);
	case CABI_ELEM_STREAM_READABLE:
	case CABI_ELEM_STREAM_WRITABLE:
	case CABI_ELEM_FUTURE_READABLE:
	case CABI_ELEM_FUTURE_WRITABLE:
		return cm_stream_event(w, ev, err);
	default:
		return cabi_fail(err, CABI_ERR_TRAP, "not a waitable");
	}
}
