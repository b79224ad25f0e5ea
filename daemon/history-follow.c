/*
 * history-follow.c - the followers of the daemon's history
 * (history-hooks.h: struct history_listener): the store's commit hook
 * hands every event made durable, in order, to each listener on the
 * loop's thread, and when the history goes away every listener's end()
 * closes its stream.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none; a
 * listener is its owner's (method-history.c).
 */
#include "config.h"

#include "daemon/daemon.h"
#include "daemon/history-internal.h"

void hist_fan_out(void *arg, const struct history_event *ev, size_t n)
{
	struct daemon_history *h = arg;
	struct history_listener *l, *next;

	for (l = h->listeners; l; l = next) {
		next = l->next;
		if (l->events)
			l->events(l, ev, n);
	}
}

void hist_end_listeners(struct daemon_history *h)
{
	while (h->listeners) {
		struct history_listener *l = h->listeners;

		l->end(l); /* unlistens itself */
		if (h->listeners == l)
			daemon_history_unlisten(h->d, l);
	}
}

void daemon_history_listen(struct daemon *d, struct history_listener *l)
{
	struct daemon_history *h = d->history;

	l->prev = NULL;
	l->next = h->listeners;
	if (h->listeners)
		h->listeners->prev = l;
	h->listeners = l;
	if (l->events)
		h->n_listeners++; /* followers; not jobs that only need end() */
}

void daemon_history_unlisten(struct daemon *d, struct history_listener *l)
{
	struct daemon_history *h = d->history;

	if (!h)
		return;
	if (l->prev)
		l->prev->next = l->next;
	else if (h->listeners == l)
		h->listeners = l->next;
	else
		return; /* not listed */
	if (l->next)
		l->next->prev = l->prev;
	l->prev = l->next = NULL;
	if (l->events)
		h->n_listeners--;
}
