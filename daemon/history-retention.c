/*
 * history-retention.c - retention of the daemon's history: the minutely
 * pass over the configured limits and the passes on request
 * (io.hostel.History.Prune, history-hooks.h: daemon_history_prune()).
 * Both take one path: a request in one queue, a store/history.h
 * history_pruner each, stepped oldest first a bounded step at a time:
 * by the writer thread between batches (WRITER_PRUNE_ROWS), or, when
 * there is no writer, by the loop, a step per loop turn
 * (PRUNE_STEP_ROWS).  A pass plans with the retention configured when
 * it was asked for; one on request brings its own limits and says what
 * it kept when it removed nothing.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - prune requests (daemon_prune): one per History.Prune call in
 *    flight, a service name of at most HISTORY_NAME_MAX.
 *  The bounds themselves are listed in docs/limits.md ("daemon calls
 *  and history").
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>

#include "daemon/daemon.h"
#include "daemon/history-internal.h"

/* Rows of one step on the loop: one short transaction. */
#define PRUNE_STEP_ROWS 1000
/* On the writer a step delays the next batch: fewer rows (about 1 ms). */
#define WRITER_PRUNE_ROWS 250

/*
 * The queue of passes and the fields of a pass the writer shares are
 * guarded by its mutex while the thread runs; without it (it could not
 * start, or it has stopped) the loop is alone with them.
 */
static void queue_lock(struct daemon_history *h)
{
	if (h->w.running)
		pthread_mutex_lock(&h->w.mu);
}

static void queue_unlock(struct daemon_history *h)
{
	if (h->w.running)
		pthread_mutex_unlock(&h->w.mu);
}

static void prune_request_free(struct daemon_prune *r)
{
	history_pruner_free(r->pr);
	free(r->service);
	free(r);
}

/*
 * Answer and free the passes that ended (all of them when the history
 * goes away, `why` their error then).  Callbacks run outside mu: they
 * may ask for another pass.
 */
void hist_prune_requests_finish(struct daemon_history *h, const char *why)
{
	struct daemon_prune *ended = NULL, **tail = &ended, **pp;

	queue_lock(h);
	for (pp = &h->w.requests; *pp;) {
		struct daemon_prune *r = *pp;

		if (r->ended || why) {
			*pp = r->next;
			r->next = NULL;
			*tail = r;
			tail = &r->next;
		} else {
			pp = &r->next;
		}
	}
	queue_unlock(h);
	while (ended) {
		struct daemon_prune *r = ended;

		ended = r->next;
		if (r->done && !r->ended)
			r->done(r->arg, -ESHUTDOWN, r->deleted, NULL, why);
		else if (r->done)
			r->done(r->arg, r->rc, r->deleted,
				r->rc == 0 && r->pr ? history_pruner_kept(r->pr)
						    : NULL,
				r->err);
		prune_request_free(r);
	}
}

struct daemon_prune *hist_prune_request_due(const struct writer *w)
{
	for (struct daemon_prune *r = w->requests; r; r = r->next)
		if (!r->ended)
			return r;
	return NULL;
}

/*
 * One step of pass r on `hist` (its owner's thread): plan it first if
 * it is not yet (its ages count from when it was asked), then at most
 * max_rows rows in one transaction.  1 while more remains, else how
 * the pass ended (r->err set on a failure); *n: what the step removed.
 */
static int pass_step(struct daemon_prune *r, struct history *hist,
		     struct db *db, size_t max_rows, size_t *n)
{
	int rc = 0;

	*n = 0;
	if (!r->pr) {
		history_set_retention(hist, &r->retention);
		rc = history_pruner_new(hist, &r->spec, r->now, &r->pr);
	}
	if (rc == 0)
		rc = history_pruner_step(r->pr, max_rows, n);
	r->deleted += *n;
	if (rc < 0)
		snprintf(r->err, sizeof(r->err), "%s", db_errmsg(db));
	return rc;
}

/* A dropped request ends before its next step. */
void hist_prune_request_step(struct writer *w, struct daemon_prune *r)
{
	size_t n = 0;
	bool dropped;
	int rc = 0;

	pthread_mutex_lock(&w->mu);
	dropped = r->dropped;
	pthread_mutex_unlock(&w->mu);
	if (!dropped)
		rc = pass_step(r, w->hist, w->db, WRITER_PRUNE_ROWS, &n);
	pthread_mutex_lock(&w->mu);
	w->pruned_total += n;
	if (rc != 1) {
		r->rc = rc;
		r->ended = true;
	}
	pthread_mutex_unlock(&w->mu);
	if (rc == 1)
		return;
	if (write(w->pipe[1], "r", 1) < 0) {
		/* The loop also finds it on its next look. */
	}
}

/*
 * Without a writer: a step of the oldest pass per loop turn (a zero
 * timer, so I/O and commits go on between steps).
 */
static void loop_step_cb(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval now = {0, 0};
	struct daemon_history *h = arg;
	struct daemon_prune *r = hist_prune_request_due(&h->w);
	size_t n;
	int rc = 0;

	if (!r)
		return;
	if (!r->dropped)
		rc = pass_step(r, h->hist, h->db, PRUNE_STEP_ROWS, &n);
	if (rc != 1) {
		r->rc = rc;
		r->ended = true;
		hist_prune_requests_finish(h, NULL);
	}
	if (hist_prune_request_due(&h->w))
		evtimer_add(h->ev_prune_step, &now);
}

/*
 * Retention, every PRUNE_INTERVAL_SEC: the configured limits as a pass
 * of its own, queued like any other (one at a time: a pass still under
 * way goes on).  On the writer when there is one: measured on the
 * loop's connection, 64 clients, 4.8 million events over the limit,
 * steps back to back held the write lock, the writer's commits failed
 * with "database is locked" after the busy timeout, and calls had no
 * reply for more than 10 s.
 */
static void retention_pass_done(void *arg, int rc, uint64_t deleted,
				const struct history_prune_kept *kept,
				const char *err)
{
	struct daemon_history *h = arg;
	/* How long the pass took: what was written meanwhile is kept. */
	int64_t took = h->retention_pass ? db_now_ns() - h->retention_pass->now
					  : 0;

	h->retention_pass = NULL;
	if (rc < 0 && rc != -ESHUTDOWN)
		log_warn(&h->d->log, "history: pruning: %s", err);
	if (deleted)
		log_info(&h->d->log,
			 "history: retention removed %llu event(s) in %.1f s",
			 (unsigned long long)deleted,
			 took > 0 ? (double)took / 1e9 : 0.0);
}

static void prune_cb(evutil_socket_t fd, short what, void *arg)
{
	static const struct history_prune_spec configured = {
		.keep_events = -1,
		.keep_age = -1,
	};
	struct daemon_history *h = arg;
	struct timeval tv = {PRUNE_INTERVAL_SEC, 0};
	int rc;

	if (!h->retention_pass &&
	    (rc = daemon_history_prune(h->d, &configured, retention_pass_done,
				       h, &h->retention_pass)) < 0)
		log_warn(&h->d->log, "history: pruning: %s",
			 rc == -ENOMEM ? strerror(-rc) : db_errmsg(h->db));
	evtimer_add(h->ev_prune, &tv);
}

int hist_retention_init(struct daemon_history *h)
{
	h->ev_prune = evtimer_new(h->d->base, prune_cb, h);
	h->ev_prune_step = evtimer_new(h->d->base, loop_step_cb, h);
	return h->ev_prune && h->ev_prune_step ? 0 : -ENOMEM;
}

void hist_retention_free(struct daemon_history *h)
{
	/* The writer's passes ended with it (hist_writer_stop()). */
	hist_prune_requests_finish(h, "hosteld is stopping");
	if (h->ev_prune)
		event_free(h->ev_prune);
	if (h->ev_prune_step)
		event_free(h->ev_prune_step);
	h->ev_prune = h->ev_prune_step = NULL;
}

int daemon_history_prune(struct daemon *d,
			 const struct history_prune_spec *spec,
			 daemon_prune_done_fn done, void *arg,
			 struct daemon_prune **out)
{
	static const struct timeval now = {0, 0};
	struct daemon_history *h = d->history;
	struct daemon_prune *r, **pp;
	int rc;

	*out = NULL;
	if (!h)
		return -ENOTSUP;
	r = calloc(1, sizeof(*r));
	if (!r || (spec->service && !(r->service = strdup(spec->service)))) {
		free(r);
		return -ENOMEM;
	}
	r->spec = *spec;
	r->spec.service = r->service;
	r->retention = h->retention;
	r->now = db_now_ns();
	r->done = done;
	r->arg = arg;
	/* On the loop, planned at once: its error is the caller's now. */
	if (!h->w.running &&
	    (rc = history_pruner_new(h->hist, &r->spec, r->now, &r->pr))) {
		prune_request_free(r);
		return rc;
	}
	queue_lock(h);
	for (pp = &h->w.requests; *pp; pp = &(*pp)->next)
		;
	*pp = r;
	if (h->w.running)
		pthread_cond_signal(&h->w.cv);
	queue_unlock(h);
	if (!h->w.running)
		evtimer_add(h->ev_prune_step, &now);
	*out = r;
	return 0;
}

void daemon_history_prune_drop(struct daemon *d, struct daemon_prune *r)
{
	struct daemon_history *h = d->history;

	if (!h || !r)
		return;
	queue_lock(h);
	r->dropped = true;
	r->done = NULL;
	if (h->w.running)
		pthread_cond_signal(&h->w.cv);
	queue_unlock(h);
}

void daemon_history_retention_now(struct daemon *d)
{
	if (d->history)
		prune_cb(-1, EV_TIMEOUT, d->history);
}
