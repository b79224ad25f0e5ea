/*
 * history-retention.c - retention of the daemon's history: the minutely
 * pass over the configured limits and the passes on request
 * (io.hostel.History.Prune, history-hooks.h: daemon_history_prune()).
 * Both are queued to the writer thread, which steps the oldest one a
 * bounded step at a time between batches; without a writer the
 * minutely pass takes a step per loop turn (store/history.h:
 * history_prune_step()).
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

#define PRUNE_STEP_ROWS 1000
/* On the writer a step delays the next batch: fewer rows (about 1 ms). */
#define WRITER_PRUNE_ROWS 250

static void prune_request_free(struct daemon_prune *r)
{
	history_pruner_free(r->pr);
	free(r->service);
	free(r);
}

/*
 * Answer and free the requests the writer ended (all of them when it
 * no longer runs, `why` their error then).  Callbacks run outside mu:
 * they may ask for another pass.
 */
void hist_prune_requests_finish(struct daemon_history *h, const char *why)
{
	struct daemon_prune *ended = NULL, **tail = &ended, **pp;

	pthread_mutex_lock(&h->w.mu);
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
	pthread_mutex_unlock(&h->w.mu);
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
 * One step of a pass on request: plan it on the first step (its ages
 * count from when it was asked), then at most WRITER_PRUNE_ROWS rows in
 * one transaction.  A dropped request ends before its next step.
 */
void hist_prune_request_step(struct writer *w, struct daemon_prune *r)
{
	size_t n = 0;
	bool dropped;
	int rc = 0;

	pthread_mutex_lock(&w->mu);
	dropped = r->dropped;
	pthread_mutex_unlock(&w->mu);
	if (!dropped && !r->pr) {
		history_set_retention(w->hist, &r->retention);
		rc = history_pruner_new(w->hist, &r->spec, r->now, &r->pr);
	}
	if (!dropped && rc == 0)
		rc = history_pruner_step(r->pr, WRITER_PRUNE_ROWS, &n);
	r->deleted += n;
	if (rc < 0)
		snprintf(r->err, sizeof(r->err), "%s", db_errmsg(w->db));
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
 * Retention, every PRUNE_INTERVAL_SEC: on the writer thread when there
 * is one (a pass still under way goes on), else a step per loop turn
 * here.  Measured on the loop's connection, 64 clients, 4.8 million
 * events over the limit: steps back to back held the write lock, the
 * writer's commits failed with "database is locked" after the busy
 * timeout, and calls had no reply for more than 10 s.
 */
static void retention_pass_done(void *arg, int rc, uint64_t deleted,
				const struct history_prune_kept *kept,
				const char *err)
{
	struct daemon_history *h = arg;

	h->retention_pass = NULL;
	if (rc < 0 && rc != -ESHUTDOWN)
		log_warn(&h->d->log, "history: pruning: %s", err);
	if (deleted)
		log_info(&h->d->log, "history: retention removed %llu event(s)",
			 (unsigned long long)deleted);
}

void hist_prune_cb(evutil_socket_t fd, short what, void *arg)
{
	static const struct history_prune_spec configured = {
		.keep_events = -1,
		.keep_age = -1,
	};
	struct daemon_history *h = arg;
	struct timeval tv = {PRUNE_INTERVAL_SEC, 0};
	size_t deleted = 0;
	int rc;

	if (h->w.running) {
		if (!h->retention_pass &&
		    (rc = daemon_history_prune(h->d, &configured,
					       retention_pass_done, h,
					       &h->retention_pass)) < 0)
			log_warn(&h->d->log, "history: pruning: %s",
				 strerror(-rc));
		evtimer_add(h->ev_prune, &tv);
		return;
	}
	rc = history_prune_step(h->hist, PRUNE_STEP_ROWS, db_now_ns(),
				&deleted);

	h->pruned_in_pass += deleted;
	if (rc < 0) {
		log_warn(&h->d->log, "history: pruning: %s", db_errmsg(h->db));
	} else if (rc == 1) {
		/* More to do: go on after the loop has looked at I/O. */
		tv.tv_sec = 0;
	} else if (h->pruned_in_pass) {
		log_info(&h->d->log, "history: retention removed %zu event(s)",
			 h->pruned_in_pass);
	}
	if (rc != 1)
		h->pruned_in_pass = 0;
	evtimer_add(h->ev_prune, &tv);
}

int daemon_history_prune(struct daemon *d,
			 const struct history_prune_spec *spec,
			 daemon_prune_done_fn done, void *arg,
			 struct daemon_prune **out)
{
	struct daemon_history *h = d->history;
	struct daemon_prune *r, **pp;

	*out = NULL;
	if (!h || !h->w.running)
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
	pthread_mutex_lock(&h->w.mu);
	for (pp = &h->w.requests; *pp; pp = &(*pp)->next)
		;
	*pp = r;
	pthread_cond_signal(&h->w.cv);
	pthread_mutex_unlock(&h->w.mu);
	*out = r;
	return 0;
}

void daemon_history_prune_drop(struct daemon *d, struct daemon_prune *r)
{
	struct daemon_history *h = d->history;

	if (!h || !r)
		return;
	pthread_mutex_lock(&h->w.mu);
	r->dropped = true;
	r->done = NULL;
	pthread_cond_signal(&h->w.cv);
	pthread_mutex_unlock(&h->w.mu);
}

void daemon_history_retention_now(struct daemon *d)
{
	if (d->history)
		hist_prune_cb(-1, EV_TIMEOUT, d->history);
}
