/*
 * history-writer.c - the writer thread of the daemon's history and the
 * hand-off of batches to it.
 *
 * The commits run on a writer thread with a connection of its own, one
 * batch at a time, so the loop never waits for a disk: while a batch is
 * written (and fsynced), the loop goes on serving calls and gathers the
 * next batch.  Retention passes (history-retention.c) run there too, a
 * bounded step at a time between batches: their deletes need the write
 * lock; and so do the folds of store deltas into their snapshots
 * (store/folds.h), a step at a time.  The writer touches only its
 * connection, the one batch it was handed (store/history.h:
 * history_write()), the fields of struct writer under its mutex, the
 * passes it steps and its history's folds; the loop learns of a
 * finished job through a byte on a pipe and accounts for it on its own
 * thread (callbacks, followers: history_write_done()).  Without the
 * thread (it could not start, or `history = off`) commits run on the
 * loop.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none; the
 * batches it writes are bounded where they are filled
 * (history-events.c).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <fcntl.h>
#include <pthread.h>

#include "daemon/daemon.h"
#include "daemon/durable.h"
#include "daemon/history-internal.h"

static void keep_spare(struct daemon_history *h, struct history_batch *b)
{
	if (h->spare)
		history_batch_free(b);
	else
		h->spare = b;
}

/*
 * The writer finished the batch in flight: account for it on the loop's
 * thread (callbacks, followers), then send what gathered meanwhile.
 */
static void writer_finish(struct daemon_history *h)
{
	struct history_batch *b = h->inflight;
	size_t n = history_batch_count(b);
	uint64_t ns;
	int rc;

	pthread_mutex_lock(&h->w.mu);
	rc = h->w.rc;
	ns = h->w.ns;
	h->w.done = false;
	if (h->w.fold_failed)
		log_warn(&h->d->log, "history: a fold of store deltas failed: "
				     "%s (that service's next image is full)",
			 h->w.fold_error);
	h->w.fold_failed = false;
	pthread_mutex_unlock(&h->w.mu);
	h->inflight = NULL;
	/* The next batch goes to the writer before this one's replies: it
	 * writes while the loop sends them.  (A failed write is retried
	 * first, in order, below.) */
	if (rc == 0 && history_batch_count(h->batch) &&
	    !evtimer_pending(h->ev_retry, NULL) && hist_commit_due(h))
		hist_writer_take(h);
	rc = history_write_done(h->hist, b, h->w.hist, rc, ns);
	if (rc == 0) {
		keep_spare(h, b);
		hist_commit_succeeded(h, n);
	} else if (history_batch_take(b, h->batch) == 0) {
		/* Retry the old events first, then what came meanwhile. */
		keep_spare(h, h->batch);
		h->batch = b;
		hist_commit_failed(h, rc, history_batch_count(b), false);
	} else {
		history_batch_fail(b, rc); /* out of memory: order first */
		keep_spare(h, b);
	}
	if (history_batch_count(h->batch) &&
	    !evtimer_pending(h->ev_retry, NULL))
		hist_commit_soon(h);
}

void hist_writer_wait(struct daemon_history *h)
{
	char buf[8];

	/* writer_finish() may hand the writer the next batch: wait for
	 * that one too, until nothing is in flight. */
	while (h->inflight) {
		pthread_mutex_lock(&h->w.mu);
		while (!h->w.done)
			pthread_cond_wait(&h->w.cv, &h->w.mu);
		pthread_mutex_unlock(&h->w.mu);
		while (read(h->w.pipe[0], buf, sizeof(buf)) > 0)
			;
		writer_finish(h);
	}
}

static void writer_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon_history *h = arg;
	char buf[8];
	bool done;

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	hist_prune_requests_finish(h, NULL);
	if (!h->inflight)
		return;
	pthread_mutex_lock(&h->w.mu);
	done = h->w.done;
	pthread_mutex_unlock(&h->w.mu);
	if (done)
		writer_finish(h);
}

bool hist_writer_take(struct daemon_history *h)
{
	if (!h->w.running || h->inflight)
		return false;
	if (history_batch_count(h->batch))
		durable_capture_all(h->d);
	if (!h->spare && !(h->spare = history_batch_new(h->hist)))
		return false;
	h->inflight = h->batch;
	h->batch = h->spare;
	h->spare = NULL;
	h->open_calls = 0;
	h->waiters = 0;
	pthread_mutex_lock(&h->w.mu);
	h->w.job = h->inflight;
	pthread_cond_signal(&h->w.cv);
	pthread_mutex_unlock(&h->w.mu);
	return true;
}

/* One fold step (store/folds.h); a failure is the loop's to log. */
static void writer_fold_step(struct writer *w)
{
	char why[256] = "";
	int rc = history_fold_step(w->hist, why, sizeof(why));

	if (rc == 0)
		return;
	pthread_mutex_lock(&w->mu);
	snprintf(w->fold_error, sizeof(w->fold_error), "%s",
		 why[0] ? why : db_errmsg(w->db));
	w->fold_failed = true;
	pthread_mutex_unlock(&w->mu);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	int sync = -1;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct history_batch *b;
		struct daemon_prune *request;
		bool checkpoint;
		int want;

		while (!w->quit && !w->job && !w->checkpoint &&
		       !hist_prune_request_due(w) && w->sync_want == sync &&
		       !history_fold_due(w->hist))
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->quit && !w->job)
			break;
		b = w->job;
		checkpoint = w->checkpoint;
		/* A batch first: a step waits for a gap between batches. */
		request = b ? NULL : hist_prune_request_due(w);
		want = w->sync_want;
		pthread_mutex_unlock(&w->mu);
		if (want != sync) {
			db_set_sync(w->db, (enum db_sync)want);
			sync = want;
		}
		if (b) {
			uint64_t ns = 0;
			int rc = history_write(w->hist, b, &ns);

			pthread_mutex_lock(&w->mu);
			w->rc = rc;
			w->ns = ns;
			w->job = NULL;
			w->done = true;
			pthread_cond_broadcast(&w->cv);
			pthread_mutex_unlock(&w->mu);
			/* Non-blocking: one byte per job, one job at a time. */
			if (write(w->pipe[1], "w", 1) < 0) {
				/* The loop also finds `done` on its next look.
				 */
			}
		}
		if (request)
			hist_prune_request_step(w, request);
		/* a fold step, also only in a gap between batches */
		if (!b && history_fold_due(w->hist))
			writer_fold_step(w);
		if (checkpoint) {
			/* PASSIVE never waits; a busy WAL goes later. */
			int rc = db_checkpoint(w->db, false);

			pthread_mutex_lock(&w->mu);
			w->checkpoint = false;
			w->checkpoint_rc = rc;
			pthread_mutex_unlock(&w->mu);
		}
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void writer_release(struct writer *w)
{
	if (w->ev_done)
		event_free(w->ev_done);
	w->ev_done = NULL;
	for (int i = 0; i < 2; i++) {
		if (w->pipe[i] >= 0)
			close(w->pipe[i]);
		w->pipe[i] = -1;
	}
	history_free(w->hist);
	w->hist = NULL;
	db_close(w->db);
	w->db = NULL;
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
}

/*
 * Start the writer: its connection (no lock: this daemon holds it), the
 * wake-up pipe, the thread.  On failure the daemon commits on its loop,
 * as it did before there was a writer, and says so.
 */
void hist_writer_start(struct daemon_history *h)
{
	struct writer *w = &h->w;
	struct db_options opt = {.sync = h->db->sync, .lock_wait_ms = -1};
	sigset_t all, old;
	char err[512];
	int rc;

	w->pipe[0] = w->pipe[1] = -1;
	w->sync_want = (int)h->db->sync;
	if (pthread_mutex_init(&w->mu, NULL) || pthread_cond_init(&w->cv, NULL))
		goto fail_sync;
	rc = db_open(h->d->state_dir, &opt, &w->db, err, sizeof(err));
	if (rc == 0 && (rc = history_open(w->db, &w->hist)))
		snprintf(err, sizeof(err), "%s", db_errmsg(w->db));
	if (rc)
		goto fail;
	history_set_fold(w->hist, durable_fold, NULL);
	/* Its commits finish what the checkpointer started (see there). */
	if (h->ckpt && checkpointer_watch(h->ckpt, w->db, true) < 0)
		log_warn(&h->d->log, "history: the writer's commits checkpoint "
				     "the WAL themselves");
	snprintf(err, sizeof(err), "%s", "cannot start the writer thread");
	if (pipe(w->pipe) < 0)
		goto fail;
	for (int i = 0; i < 2; i++)
		if (fcntl(w->pipe[i], F_SETFL, O_NONBLOCK) < 0 ||
		    fcntl(w->pipe[i], F_SETFD, FD_CLOEXEC) < 0)
			goto fail;
	w->ev_done = event_new(h->d->base, w->pipe[0], EV_READ | EV_PERSIST,
			       writer_done_cb, h);
	if (!w->ev_done || event_add(w->ev_done, NULL) < 0)
		goto fail;
	/* Signals are the loop's business. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&w->thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		goto fail;
	w->running = true;
	return;
fail:
	log_warn(&h->d->log, "history: %s; commits run on the event loop", err);
	checkpointer_unwatch(h->ckpt, w->db);
	writer_release(w);
	return;
fail_sync:
	log_warn(&h->d->log, "history: cannot start the writer thread; "
			     "commits run on the event loop");
}

void hist_writer_stop(struct daemon_history *h)
{
	struct writer *w = &h->w;

	if (!w->running)
		return;
	hist_writer_wait(h);
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	w->running = false;
	hist_prune_requests_finish(h, "hosteld is stopping");
	checkpointer_unwatch(h->ckpt, w->db);
	writer_release(w);
}

struct db *daemon_history_writer_db(struct daemon *d)
{
	return d->history && d->history->w.running ? d->history->w.db : NULL;
}
