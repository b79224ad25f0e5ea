/*
 * history-commit.c - the commit policy of the daemon's history
 * (history-hooks.h: "End of a turn", "A failed commit"): when the batch
 * the loop fills commits (at the end of the turn; while calls started
 * since the last commit are open, at most COMMIT_WAIT_MAX_US after its
 * first event; at once when a reply waits on it), retries of a failing
 * commit with backoff until HISTORY_RETRY_LIMIT_MS, the `done`
 * callbacks of `history = off`, and the minutely checkpoint timer.
 * Everything here runs on the loop's thread; the commit itself goes to
 * the writer (history-writer.c) when there is one.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - off_done (history off): one entry per reply waiting for the end
 *    of the turn, emptied every turn; replies are bounded by the calls
 *    in flight (SERVICE_MAX_CONCURRENT_CALLS per service).
 *  The bounds themselves are listed in docs/limits.md ("daemon calls
 *  and history").
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "daemon/daemon.h"
#include "daemon/durable.h"
#include "daemon/history-internal.h"
#include "daemon/notify.h"

/*
 * Group commit: a batch that a reply waits on (an event with a `done`,
 * such as a call's terminal event) commits at once, and while the writer
 * is busy the next batch gathers whatever comes meanwhile, so one commit
 * (one fsync) serves many calls without a reply ever waiting for a call
 * that has not ended.  A batch nobody waits on yet, while calls started
 * since the last commit are still open, waits for their ends, at most
 * this long after its first event, so that a call's start and end share
 * a commit; with none open it commits at once.  A call that outlives a
 * commit (a spinning guest, an async export parked on a timer) no longer
 * counts: it would make every later batch wait the full bound for as long
 * as it runs.
 */
#define COMMIT_WAIT_MAX_US 10000
#define RETRY_FIRST_MS	   100
#define RETRY_MAX_MS	   5000

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t mono_ms(void)
{
	return mono_us() / 1000;
}

static struct timeval ms_tv(uint64_t ms)
{
	return (struct timeval){(time_t)(ms / 1000),
				(suseconds_t)(ms % 1000) * 1000};
}

static void set_status(struct daemon_history *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_status(struct daemon_history *h, const char *fmt, ...)
{
	char msg[320];
	va_list ap;
	int n = snprintf(msg, sizeof(msg), "STATUS=");

	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	notify_send(msg);
}

void hist_commit_succeeded(struct daemon_history *h, size_t n)
{
	if (h->failing) {
		log_info(&h->d->log,
			 "history: commits work again (%zu event(s) committed)",
			 n);
		set_status(h, "Listening on %s", daemon_socket_path(h->d));
	}
	h->failing = false;
	h->retry_ms = 0;
}

/*
 * A commit of the batch (h->batch, n events) failed with rc: the batch
 * stays and a retry is armed, until HISTORY_RETRY_LIMIT_MS of failures
 * (or `final`) fail it.
 */
void hist_commit_failed(struct daemon_history *h, int rc, size_t n, bool final)
{
	uint64_t now = mono_ms();

	if (!h->failing) {
		h->failing = true;
		h->fail_since_ms = now;
		log_err(&h->d->log,
			"history: cannot commit %zu event(s): %s; replies wait "
			"and the commit is retried",
			n, db_errmsg(h->db));
		set_status(h, "History commits failing: %s", db_errmsg(h->db));
	}
	if (final || now - h->fail_since_ms >= HISTORY_RETRY_LIMIT_MS) {
		log_err(&h->d->log,
			"history: giving up on %zu event(s) after %llu ms: "
			"%s",
			n, (unsigned long long)(now - h->fail_since_ms),
			db_errmsg(h->db));
		history_batch_fail(h->batch, rc);
		/* Later events get a fresh window. */
		h->failing = false;
		h->retry_ms = 0;
		return;
	}
	h->retry_ms = h->retry_ms ? h->retry_ms * 2 : RETRY_FIRST_MS;
	if (h->retry_ms > RETRY_MAX_MS)
		h->retry_ms = RETRY_MAX_MS;
	{
		struct timeval tv = ms_tv(h->retry_ms);

		evtimer_add(h->ev_retry, &tv);
	}
}

/*
 * Commit the batch: on the writer thread when there is one and it is
 * idle (a busy writer comes back for it when it finishes); synchronously
 * at start, at the end (`final`) and without a writer.
 */
static void hist_fold_step_here(struct daemon_history *h)
{
	char why[256] = "";

	if (history_fold_step(h->hist, why, sizeof(why)))
		log_warn(&h->d->log, "history: a fold of store deltas failed: "
				     "%s (that service's next image is full)",
			 why[0] ? why : db_errmsg(h->db));
}

void hist_commit_now(struct daemon_history *h, bool final)
{
	size_t n;
	int rc;

	/* the stores that ran since their last image join the batch */
	if (history_batch_count(h->batch))
		durable_capture_all(h->d);
	if (history_batch_count(h->batch) == 0 &&
	    history_batch_images(h->batch) == 0)
		return;
	if (!final && h->w.running) {
		if (h->inflight || hist_writer_take(h))
			return;
	}
	hist_writer_wait(h);
	n = history_batch_count(h->batch);
	if (n == 0 && history_batch_images(h->batch) == 0)
		return;
	rc = history_commit(h->hist, h->batch);
	if (rc == 0) {
		h->open_calls = 0;
		h->waiters = 0;
		hist_commit_succeeded(h, n);
		/* without the writer its fold steps run here, one a commit */
		if (!h->w.running && !final && history_fold_due(h->hist))
			hist_fold_step_here(h);
		return;
	}
	hist_commit_failed(h, rc, n, final);
}

/*
 * Whether the batch should commit now (see COMMIT_WAIT_MAX_US): a reply
 * waits on it, or no call it started is open, or it waited long enough.
 */
bool hist_commit_due(const struct daemon_history *h)
{
	return h->waiters || !h->open_calls ||
	       mono_us() - h->batch_first_us >= COMMIT_WAIT_MAX_US;
}

void hist_commit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon_history *h = arg;
	uint64_t age = mono_us() - h->batch_first_us;

	h->commit_armed_now = false;
	if (h->off) {
		hist_off_flush(h);
		return;
	}
	/* A retry is armed: it commits, in order, when it fires. */
	if (evtimer_pending(h->ev_retry, NULL))
		return;
	/* Calls still open end soon: wait for them (bounded), so their
	 * ends share this commit; the last end brings us back at once. */
	if (!hist_commit_due(h)) {
		struct timeval tv = {0,
				     (suseconds_t)(COMMIT_WAIT_MAX_US - age)};

		evtimer_add(h->ev_commit, &tv);
		return;
	}
	hist_commit_now(h, false);
}

void hist_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	hist_commit_now(arg, false);
}

/*
 * Commit in the next loop iteration.  A commit already due is left as it
 * is: libevent takes an event that is active (due, its callback not run
 * yet) off its queue when it is added again and waits for the next
 * iteration.  A service that took turn after turn, ending calls in each,
 * then pushed the commit back until it ran out of work, and the writer
 * idled while the loop ran every queued call.
 */
void hist_commit_soon(struct daemon_history *h)
{
	static const struct timeval now = {0, 0};

	if (h->commit_armed_now)
		return;
	h->commit_armed_now = true;
	evtimer_add(h->ev_commit, &now);
}

/*
 * End of this turn: commit what the turn recorded.  A zero timeout, not
 * event_active(): an active event would run right after the callback
 * that is running, between two service turns, so each call's end would
 * get a commit (and an fsync) of its own.  A due timer runs in the next
 * loop iteration, after every callback of this one: one commit groups
 * all of them.
 *
 * With the history on, the timer has the loop's first priority
 * (DAEMON_PRIO_FIRST), so it also runs before the I/O callbacks of that
 * iteration: an idle writer gets the turn's events at once, not after
 * the loop has served every request that came meanwhile (those join the
 * next batch).  At 16 clients, where all calls used to wait in one batch
 * and the writer idled while the loop served the next 16, that is 23,600
 * -> 29,100 calls/s (synchronous = normal, mean of three interleaved
 * runs); at 1, 64 and 256 no change stood out of the noise (about 10%).
 * With the history off the timer keeps the default priority: there it
 * only runs the turn's `done` callbacks, and running them first made
 * the turns shorter and cost a loop that is the bottleneck (64 clients)
 * some 10%.
 */
void hist_schedule(struct daemon_history *h)
{
	/* The batch's age counts from its first event, whatever timer a
	 * batch before it (or the commit at start) left armed. */
	if (history_batch_count(h->batch) == 1)
		h->batch_first_us = mono_us();
	if (!evtimer_pending(h->ev_retry, NULL) &&
	    !evtimer_pending(h->ev_commit, NULL))
		hist_commit_soon(h);
}

void hist_waiter_added(struct daemon_history *h)
{
	h->waiters++;
	if (!evtimer_pending(h->ev_retry, NULL))
		hist_commit_soon(h);
}

void hist_call_closed(struct daemon_history *h)
{
	if (h->open_calls)
		h->open_calls--;
	if (!h->open_calls && !evtimer_pending(h->ev_retry, NULL))
		hist_commit_soon(h);
}

void hist_off_flush(struct daemon_history *h)
{
	/* Callbacks may add more (a reply starts the next call). */
	for (size_t i = 0; i < h->n_dones; i++)
		h->dones[i].fn(h->dones[i].arg, 0, 0);
	h->n_dones = 0;
}

int hist_off_done(struct daemon_history *h, history_done_fn fn, void *arg)
{
	if (!fn)
		return 0;
	if (h->n_dones == h->cap_dones) {
		size_t cap = h->cap_dones ? h->cap_dones * 2 : 64;
		struct off_done *v = realloc(h->dones, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->dones = v;
		h->cap_dones = cap;
	}
	h->dones[h->n_dones++] = (struct off_done){fn, arg};
	hist_schedule(h);
	return 0;
}

void hist_checkpoint_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon_history *h = arg;
	struct timeval tv = {CHECKPOINT_INTERVAL_SEC, 0};

	if (h->ckpt) {
		checkpointer_request(h->ckpt);
	} else if (h->w.running) {
		/* The writer checkpoints between two batches. */
		pthread_mutex_lock(&h->w.mu);
		if (h->w.checkpoint_rc < 0)
			log_debug(&h->d->log,
				  "history: the last checkpoint failed (%d)",
				  h->w.checkpoint_rc);
		h->w.checkpoint = true;
		pthread_cond_signal(&h->w.cv);
		pthread_mutex_unlock(&h->w.mu);
	} else if (db_checkpoint(h->db, false) < 0) {
		/* PASSIVE never waits; a busy WAL is checkpointed later. */
		log_debug(&h->d->log, "history: checkpoint: %s",
			  db_errmsg(h->db));
	}
	evtimer_add(h->ev_checkpoint, &tv);
}
