/*
 * history.c - the daemon's event history (see history-hooks.h): the
 * database opened at start, recovery, the per-turn batch committed at
 * the end of each loop turn, retries, retention and checkpoint timers,
 * and the fan-out of durable events to followers.
 *
 * The commits themselves run on a writer thread with a connection of its
 * own, one batch at a time, so the loop never waits for a disk: while a
 * batch is written (and fsynced), the loop goes on serving calls and
 * gathers the next batch.  Retention passes, the minutely one and those
 * on request, run there too, a bounded step at a time between batches:
 * their deletes need the write lock.  Everything else (the batch being
 * filled, accounting, callbacks, followers, reads) stays on the loop's
 * thread and connection; the writer touches only its connection, the
 * one batch it was handed (store/history.h: history_write()) and the
 * pass requests it steps.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - the batch being filled: events of one loop turn, a payload over
 *    HISTORY_PAYLOAD_MAX (8 MiB) refused, and a batch refuses events
 *    past HISTORY_BATCH_BYTES_MAX (64 MiB) of payload (store/history.h);
 *    guest output arrives as lines of at most HISTORY_LINE_MAX.
 *  - dump, dump_value: one event's JSON text in h->text (reused), as
 *    long as the value the caller built; a host call's value past
 *    HISTORY_VALUE_MAX is replaced by its bounded form (about 25 KiB at
 *    most), so hostcall.* events always fit HISTORY_PAYLOAD_MAX.  The
 *    other kinds are bounded where they are built: call values by
 *    invocation.c (history_form), guest lines by HISTORY_LINE_MAX,
 *    store.* reasons and call.* messages by fixed buffers
 *    (CM_ERROR_MSG_MAX, service.h's 256-byte reason), daemon.* by the
 *    operator's hostel.conf (CONFIG_FILE_MAX).
 *  - off_done (history off): one entry per reply waiting for the end
 *    of the turn, emptied every turn; replies are bounded by the calls
 *    in flight (SERVICE_MAX_CONCURRENT_CALLS per service).
 *  - prune requests (daemon_prune): one per History.Prune call in
 *    flight, a service name of at most HISTORY_NAME_MAX.
 *  The bounds themselves are listed in docs/limits.md ("daemon calls
 *  and history").
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcntl.h>
#include <pthread.h>

#include <event2/event.h>

#include "daemon/checkpointer.h"
#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/history-hooks.h"
#include "daemon/notify.h"
#include "ipc/json-text.h"
#include "store/db.h"
#include "store/schema.h"
#include "store/services.h"

/* Defaults of history-keep-events and history-keep-age (hostel.conf(5)). */
#define DEFAULT_KEEP_EVENTS 100000
#define DEFAULT_KEEP_AGE    (30 * 86400)

#define PRUNE_INTERVAL_SEC 60
#define PRUNE_STEP_ROWS	   1000
/* On the writer a step delays the next batch: fewer rows (about 1 ms). */
#define WRITER_PRUNE_ROWS	250
#define CHECKPOINT_INTERVAL_SEC 60
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
/* How long to wait for a previous daemon to release the database. */
#define LOCK_WAIT_MS 10000

_Static_assert(DB_SYNC_FULL == 0 && DB_SYNC_NORMAL == 1,
	       "conffile.h's database-synchronous values");

/*
 * The writer thread.  mu guards the fields below it; the loop hands a
 * batch over in `job` and learns of the end through a byte on the pipe.
 */
struct writer {
	struct db *db;	      /* the writer's own connection */
	struct history *hist; /* statements on it */
	pthread_t thread;
	bool running;
	int pipe[2];
	struct event *ev_done;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct history_batch *job; /* handed over, not yet written */
	bool done;		   /* a written job waits for the loop */
	int rc;
	uint64_t ns;
	bool checkpoint; /* a PASSIVE checkpoint is wanted */
	int checkpoint_rc;
	int sync_want; /* enum db_sync, applied before the next job */
	/*
	 * Retention passes (the minutely one and those on request), oldest
	 * first, run here a step at a time while no batch waits: on the
	 * loop's connection their deletes held the write lock turn after
	 * turn, and the writer's commits starved (see prune_cb).
	 */
	struct daemon_prune *requests;
	uint64_t pruned_total; /* Stats' "pruned" */
	bool quit;
};

/*
 * A retention pass.  The loop owns the list and the fields above `pr`;
 * the writer steps the first request not yet ended and owns `pr`,
 * `deleted`, `rc` and `err` until it sets `ended` (under mu).  A pass
 * plans with the retention configured when it was asked for (the
 * limits a spec leaves at -1, and each service's own).
 */
struct daemon_prune {
	struct daemon_prune *next;
	char *service;
	struct history_prune_spec spec;
	struct history_retention retention;
	int64_t now;
	daemon_prune_done_fn done; /* NULL once dropped */
	void *arg;
	bool dropped; /* the loop no longer wants it: end it */
	bool ended;   /* the writer is done with it */
	struct history_pruner *pr;
	uint64_t deleted;
	int rc;
	char err[160];
};

struct daemon_history {
	struct daemon *d;
	struct db *db;
	struct history *hist;
	struct history_batch *batch;
	/* The batch the writer has (NULL: idle) and an empty one to swap in. */
	struct history_batch *inflight, *spare;
	struct writer w;
	/* Checkpoints off the commit path (NULL: SQLite's automatic ones). */
	struct checkpointer *ckpt;
	struct history_hooks hooks;
	struct event *ev_commit, *ev_retry, *ev_prune, *ev_checkpoint;
	struct history_listener *listeners;
	uint64_t n_listeners;
	struct history_retention retention;
	bool failing;
	bool stopped_recorded;
	bool commit_armed_now; /* ev_commit is due now (commit_soon) */
	/* call.started recorded since the last commit, no terminal event
	 * yet (a call ending that started earlier only makes it smaller,
	 * which commits sooner: never later than the bound). */
	uint64_t open_calls;
	uint64_t waiters; /* events in the batch whose `done` a reply awaits */
	uint64_t batch_first_us; /* when the batch got its first event */
	uint64_t fail_since_ms, retry_ms;
	struct daemon_prune *retention_pass; /* the minutely one, queued */
	size_t pruned_in_pass;
	size_t autostart; /* services to recreate, counted at start */
	/*
	 * `history = off` (hostel.conf(5)): nothing is recorded.  The
	 * `done` callbacks still run at the end of the turn, as after a
	 * commit, so replies keep their timing minus the write: the cost
	 * of the history is the difference.
	 */
	bool off;
	/* The text of a call's arguments or result, reused call after call. */
	struct json_text text;
	struct off_done {
		history_done_fn fn;
		void *arg;
	} * dones;
	size_t n_dones, cap_dones;
};

static void off_flush(struct daemon_history *h);
static void commit_soon(struct daemon_history *h);
static bool writer_take(struct daemon_history *h);
static bool commit_due(const struct daemon_history *h);

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

/* ---- settings ---------------------------------------------------------------
 */

static enum db_sync wanted_sync(const struct daemon *d)
{
	if (d->cli.db_sync >= 0)
		return (enum db_sync)d->cli.db_sync;
	if (d->file.db_sync >= 0)
		return (enum db_sync)d->file.db_sync;
	return DB_SYNC_FULL;
}

static struct history_retention wanted_retention(const struct daemon *d)
{
	struct history_retention r = {DEFAULT_KEEP_EVENTS, DEFAULT_KEEP_AGE};

	if (d->cli.keep_events >= 0)
		r.keep_events = (uint64_t)d->cli.keep_events;
	else if (d->file.keep_events >= 0)
		r.keep_events = (uint64_t)d->file.keep_events;
	if (d->cli.keep_age >= 0)
		r.keep_age = (uint64_t)d->cli.keep_age;
	else if (d->file.keep_age >= 0)
		r.keep_age = (uint64_t)d->file.keep_age;
	return r;
}

/* ---- commits
 * ------------------------------------------------------------------- */

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

static void commit_succeeded(struct daemon_history *h, size_t n)
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
static void commit_failed(struct daemon_history *h, int rc, size_t n,
			  bool final)
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

/* An emptied batch: the spare, unless there is one already. */
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
	pthread_mutex_unlock(&h->w.mu);
	h->inflight = NULL;
	/* The next batch goes to the writer before this one's replies: it
	 * writes while the loop sends them.  (A failed write is retried
	 * first, in order, below.) */
	if (rc == 0 && history_batch_count(h->batch) &&
	    !evtimer_pending(h->ev_retry, NULL) && commit_due(h))
		writer_take(h);
	rc = history_write_done(h->hist, b, h->w.hist, rc, ns);
	if (rc == 0) {
		keep_spare(h, b);
		commit_succeeded(h, n);
	} else if (history_batch_take(b, h->batch) == 0) {
		/* Retry the old events first, then what came meanwhile. */
		keep_spare(h, h->batch);
		h->batch = b;
		commit_failed(h, rc, history_batch_count(b), false);
	} else {
		history_batch_fail(b, rc); /* out of memory: order first */
		keep_spare(h, b);
	}
	if (history_batch_count(h->batch) &&
	    !evtimer_pending(h->ev_retry, NULL))
		commit_soon(h);
}

/* Wait for the batches in flight, if any, and account for them. */
static void writer_wait(struct daemon_history *h)
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
static void prune_requests_finish(struct daemon_history *h, const char *why)
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

static void writer_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon_history *h = arg;
	char buf[8];
	bool done;

	while (read(fd, buf, sizeof(buf)) > 0)
		;
	prune_requests_finish(h, NULL);
	if (!h->inflight)
		return;
	pthread_mutex_lock(&h->w.mu);
	done = h->w.done;
	pthread_mutex_unlock(&h->w.mu);
	if (done)
		writer_finish(h);
}

/* Hand the batch to the writer; false when it cannot take it now. */
static bool writer_take(struct daemon_history *h)
{
	if (!h->w.running || h->inflight)
		return false;
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

/*
 * Commit the batch: on the writer thread when there is one and it is
 * idle (a busy writer comes back for it when it finishes); synchronously
 * at start, at the end (`final`) and without a writer.
 */
static void commit_now(struct daemon_history *h, bool final)
{
	size_t n;
	int rc;

	if (history_batch_count(h->batch) == 0)
		return;
	if (!final && h->w.running) {
		if (h->inflight || writer_take(h))
			return;
	}
	writer_wait(h);
	n = history_batch_count(h->batch);
	if (n == 0)
		return;
	rc = history_commit(h->hist, h->batch);
	if (rc == 0) {
		h->open_calls = 0;
		h->waiters = 0;
		commit_succeeded(h, n);
		return;
	}
	commit_failed(h, rc, n, final);
}

/* ---- the writer thread
 * ---------------------------------------------------------- */

/* The first request not yet ended (under mu). */
static struct daemon_prune *request_due(const struct writer *w)
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
static void writer_prune_request(struct writer *w, struct daemon_prune *r)
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
		       !request_due(w) && w->sync_want == sync)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->quit && !w->job)
			break;
		b = w->job;
		checkpoint = w->checkpoint;
		/* A batch first: a step waits for a gap between batches. */
		request = b ? NULL : request_due(w);
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
			writer_prune_request(w, request);
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

/* What writer_start() made, whatever it got to (the thread is not running). */
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
static void writer_start(struct daemon_history *h)
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

/* Finish the batch in flight and end the thread (idempotent). */
static void writer_stop(struct daemon_history *h)
{
	struct writer *w = &h->w;

	if (!w->running)
		return;
	writer_wait(h);
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	w->running = false;
	prune_requests_finish(h, "hosteld is stopping");
	checkpointer_unwatch(h->ckpt, w->db);
	writer_release(w);
}

/*
 * Whether the batch should commit now (see COMMIT_WAIT_MAX_US): a reply
 * waits on it, or no call it started is open, or it waited long enough.
 */
static bool commit_due(const struct daemon_history *h)
{
	return h->waiters || !h->open_calls ||
	       mono_us() - h->batch_first_us >= COMMIT_WAIT_MAX_US;
}

static void commit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon_history *h = arg;
	uint64_t age = mono_us() - h->batch_first_us;

	h->commit_armed_now = false;
	if (h->off) {
		off_flush(h);
		return;
	}
	/* A retry is armed: it commits, in order, when it fires. */
	if (evtimer_pending(h->ev_retry, NULL))
		return;
	/* Calls still open end soon: wait for them (bounded), so their
	 * ends share this commit; the last end brings us back at once. */
	if (!commit_due(h)) {
		struct timeval tv = {0,
				     (suseconds_t)(COMMIT_WAIT_MAX_US - age)};

		evtimer_add(h->ev_commit, &tv);
		return;
	}
	commit_now(h, false);
}

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	commit_now(arg, false);
}

/*
 * Commit in the next loop iteration.  A commit already due is left as it
 * is: libevent takes an event that is active (due, its callback not run
 * yet) off its queue when it is added again and waits for the next
 * iteration.  A service that took turn after turn, ending calls in each,
 * then pushed the commit back until it ran out of work, and the writer
 * idled while the loop ran every queued call.
 */
static void commit_soon(struct daemon_history *h)
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
static void schedule(struct daemon_history *h)
{
	/* The batch's age counts from its first event, whatever timer a
	 * batch before it (or the commit at start) left armed. */
	if (history_batch_count(h->batch) == 1)
		h->batch_first_us = mono_us();
	if (!evtimer_pending(h->ev_retry, NULL) &&
	    !evtimer_pending(h->ev_commit, NULL))
		commit_soon(h);
}

/* A reply waits on the batch now: commit without waiting. */
static void waiter_added(struct daemon_history *h)
{
	h->waiters++;
	if (!evtimer_pending(h->ev_retry, NULL))
		commit_soon(h);
}

/* A call ended: when it was the last open one, commit without waiting. */
static void call_closed(struct daemon_history *h)
{
	if (h->open_calls)
		h->open_calls--;
	if (!h->open_calls && !evtimer_pending(h->ev_retry, NULL))
		commit_soon(h);
}

/* History off: run the turn's `done` callbacks, in order, as durable. */
static void off_flush(struct daemon_history *h)
{
	/* Callbacks may add more (a reply starts the next call). */
	for (size_t i = 0; i < h->n_dones; i++)
		h->dones[i].fn(h->dones[i].arg, 0, 0);
	h->n_dones = 0;
}

/* History off: keep `done` for the end of the turn. */
static int off_done(struct daemon_history *h, history_done_fn fn, void *arg)
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
	schedule(h);
	return 0;
}

/* Durable events to the followers (the store's commit hook). */
static void fan_out(void *arg, const struct history_event *ev, size_t n)
{
	struct daemon_history *h = arg;
	struct history_listener *l, *next;

	for (l = h->listeners; l; l = next) {
		next = l->next;
		if (l->events)
			l->events(l, ev, n);
	}
}

static void end_listeners(struct daemon_history *h)
{
	while (h->listeners) {
		struct history_listener *l = h->listeners;

		l->end(l); /* unlistens itself */
		if (h->listeners == l)
			daemon_history_unlisten(h->d, l);
	}
}

/* ---- timers
 * ----------------------------------------------------------------------- */

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

static void prune_cb(evutil_socket_t fd, short what, void *arg)
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

static void checkpoint_cb(evutil_socket_t fd, short what, void *arg)
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

/* ---- hooks
 * ----------------------------------------------------------------------------
 */

static struct daemon_history *hist_of(void *ctx)
{
	struct daemon *d = ctx;

	return d->history && d->history->hist ? d->history : NULL;
}

/*
 * v's compact JSON text in h->text (valid until the next call); NULL for
 * no value, or on failure with *rc set.
 */
static const char *dump(struct daemon_history *h, json_t *v, int *rc)
{
	if (!v)
		return NULL;
	json_text_reset(&h->text);
	*rc = json_text_put(&h->text, v);
	return *rc ? NULL : h->text.buf;
}

/*
 * A host call's value (its arguments, its result) as the history records
 * it: v's text, or, when that is longer than HISTORY_VALUE_MAX, its
 * bounded form (history_value_bounded), in *owned (the caller frees it).
 * So no value a guest's host call carries, whatever its size, makes the
 * history refuse the event: the rest of a hostcall.* payload (a number,
 * an import name of at most 256 bytes, a message of at most
 * CM_ERROR_MSG_MAX) fits in the 64 KiB HISTORY_VALUE_MAX leaves.  NULL
 * for no value, or on failure with *rc set.
 */
static const char *dump_value(struct daemon_history *h, json_t *v,
			      char **owned, int *rc)
{
	const char *text = dump(h, v, rc);

	*owned = NULL;
	if (!text || h->text.len <= HISTORY_VALUE_MAX)
		return text;
	*owned = history_value_bounded(h->text.buf, h->text.len);
	if (!*owned)
		*rc = -ENOMEM;
	return *owned;
}

/* Log what the batch refused at once, and arm the end-of-turn commit. */
static int added(struct daemon_history *h, const char *kind, int rc)
{
	if (rc)
		log_warn(&h->d->log, "history: %s not recorded: %s", kind,
			 db_errmsg(h->db));
	else
		schedule(h);
	return rc;
}

static int hook_call_started(void *ctx, const char *service, const char *call,
			     const char *export_name, json_t *arguments,
			     const struct conn_cred *caller)
{
	struct daemon_history *h = hist_of(ctx);
	struct history_caller who = {0};
	const char *args;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return 0;
	args = dump(h, arguments, &rc);
	if (rc)
		return rc;
	if (caller && caller->valid)
		who = (struct history_caller){true, caller->pid, caller->uid,
					      caller->gid};
	rc = history_add_call_started(h->batch, service, call, export_name,
				      args, &who, NULL, NULL);
	if (rc == 0)
		h->open_calls++;
	return added(h, HISTORY_CALL_STARTED, rc);
}

static const char *const outcome_kinds[] = {
	[CALL_RETURNED] = HISTORY_CALL_RETURNED,
	[CALL_TRAPPED] = HISTORY_CALL_TRAPPED,
	[CALL_CANCELLED] = HISTORY_CALL_CANCELLED,
	[CALL_FAILED] = HISTORY_CALL_FAILED,
	[CALL_INTERRUPTED] = HISTORY_CALL_INTERRUPTED,
};

static int hook_call_ended(void *ctx, const char *service, const char *call,
			   enum call_outcome outcome, json_t *detail,
			   history_done_fn done, void *arg)
{
	struct daemon_history *h = hist_of(ctx);
	const char *text;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if ((unsigned)outcome > CALL_INTERRUPTED)
		return -EINVAL;
	if (h->off)
		return off_done(h, done, arg);
	text = dump(h, detail, &rc);
	if (rc)
		return rc;
	rc = history_add_call_ended(h->batch, service, call,
				    outcome_kinds[outcome], text, done, arg);
	rc = added(h, outcome_kinds[outcome], rc);
	if (rc == 0)
		call_closed(h);
	if (rc == 0 && done)
		waiter_added(h);
	return rc;
}

static int hook_hostcall_started(void *ctx, const char *service,
				 const char *call, uint64_t hostcall,
				 const char *import_name, json_t *arguments)
{
	struct daemon_history *h = hist_of(ctx);
	const char *args;
	char *owned;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return 0;
	args = dump_value(h, arguments, &owned, &rc);
	if (rc)
		return rc;
	rc = history_add_hostcall_started(h->batch, service, call, hostcall,
					  import_name, args);
	free(owned);
	return added(h, HISTORY_HOSTCALL_STARTED, rc);
}

static int hook_hostcall_settled(void *ctx, const char *service,
				 const char *call, uint64_t hostcall,
				 const char *outcome, json_t *result,
				 const char *message)
{
	struct daemon_history *h = hist_of(ctx);
	const char *text;
	char *owned;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return 0;
	text = dump_value(h, result, &owned, &rc);
	if (rc)
		return rc;
	rc = history_add_hostcall_settled(h->batch, service, call, hostcall,
					  outcome, text, message);
	free(owned);
	return added(h, HISTORY_HOSTCALL_SETTLED, rc);
}

static int store_event(void *ctx, const char *kind, const char *service,
		       const char *component, json_t *detail)
{
	struct daemon_history *h = hist_of(ctx);
	const char *text;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return 0;
	text = dump(h, detail, &rc);
	if (rc)
		return rc;
	rc = history_add_store_event(h->batch, kind, service, component, text);
	return added(h, kind, rc);
}

static int hook_store_created(void *ctx, const char *service,
			      const char *component)
{
	return store_event(ctx, HISTORY_STORE_CREATED, service, component,
			   NULL);
}

static int hook_store_poisoned(void *ctx, const char *service, json_t *reason)
{
	return store_event(ctx, HISTORY_STORE_POISONED, service, NULL, reason);
}

static int hook_store_recreated(void *ctx, const char *service,
				const char *component)
{
	return store_event(ctx, HISTORY_STORE_RECREATED, service, component,
			   NULL);
}

static int hook_guest_output(void *ctx, struct guest_output *out,
			     const char *bytes, size_t len)
{
	struct daemon_history *h = hist_of(ctx);

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return 0;
	return added(h, "guest output",
		     guest_output_feed(out, h->batch, bytes, len));
}

static int hook_event(void *ctx, const char *service, const char *call,
		      const char *kind, json_t *payload, history_done_fn done,
		      void *arg)
{
	struct daemon_history *h = hist_of(ctx);
	const char *text;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return off_done(h, done, arg);
	text = dump(h, payload, &rc);
	if (rc)
		return rc;
	rc = history_batch_add(h->batch,
			       &(struct history_record){
				       .service = service,
				       .call = call,
				       .kind = kind,
				       .payload = text,
			       },
			       done, arg);
	rc = added(h, kind ? kind : "(null)", rc);
	if (rc == 0 && done)
		waiter_added(h);
	return rc;
}

const struct history_hooks *daemon_history_hooks(struct daemon *d)
{
	return d->history ? &d->history->hooks : NULL;
}

/* A daemon.* event built from a jansson object (consumed). */
static int daemon_event(struct daemon_history *h, const char *kind,
			json_t *payload)
{
	int rc;

	if (!payload)
		return -ENOMEM;
	rc = hook_event(h->d, NULL, NULL, kind, payload, NULL, NULL);
	json_decref(payload);
	return rc;
}

/* ---- lifecycle
 * ----------------------------------------------------------------------------
 */

static int count_service(void *arg, const struct service_record *rec)
{
	(*(size_t *)arg)++;
	return 0;
}

/*
 * The checkpointer, when it starts: the loop's connection only asks it
 * for a run (the loop never checkpoints in a commit); the writer's is
 * watched when the writer starts.
 */
static void checkpointer_begin(struct daemon_history *h)
{
	char err[512];

	if (checkpointer_start(h->d->state_dir, h->db->sync, &h->ckpt, err,
			       sizeof(err)) < 0) {
		log_warn(&h->d->log,
			 "history: %s; commits checkpoint the WAL "
			 "themselves",
			 err);
		return;
	}
	if (checkpointer_watch(h->ckpt, h->db, false) < 0)
		log_warn(&h->d->log, "history: the loop's commits checkpoint "
				     "the WAL themselves");
}

/* After the writer: no watched connection commits any more. */
static void checkpointer_end(struct daemon_history *h)
{
	if (!h->ckpt)
		return;
	checkpointer_unwatch(h->ckpt, h->db);
	checkpointer_stop(h->ckpt);
	h->ckpt = NULL;
}

static void history_free_state(struct daemon_history *h)
{
	if (h->ev_commit)
		event_free(h->ev_commit);
	if (h->ev_retry)
		event_free(h->ev_retry);
	if (h->ev_prune)
		event_free(h->ev_prune);
	if (h->ev_checkpoint)
		event_free(h->ev_checkpoint);
	off_flush(h); /* none are left in practice: the loop ran them */
	free(h->dones);
	json_text_free(&h->text);
	writer_stop(h);
	checkpointer_end(h);
	history_batch_free(h->batch);
	history_batch_free(h->spare);
	history_free(h->hist);
	db_close(h->db);
	free(h);
}

int daemon_history_open(struct daemon *d)
{
	struct daemon_history *h = calloc(1, sizeof(*h));
	struct db_options opt = {
		.sync = wanted_sync(d),
		.lock_wait_ms = LOCK_WAIT_MS,
	};
	struct timeval prune = {PRUNE_INTERVAL_SEC, 0};
	struct timeval checkpoint = {CHECKPOINT_INTERVAL_SEC, 0};
	char err[512];
	int rc, version = 0;

	if (!h) {
		log_err(&d->log, "history: out of memory");
		return -1;
	}
	h->d = d;
	/* Read at start only: a running daemon never changes its mind. */
	h->off = d->file.history == 0;
	rc = db_open(d->state_dir, &opt, &h->db, err, sizeof(err));
	if (rc) {
		log_err(&d->log, "history: %s", err);
		free(h);
		return -1;
	}
	schema_version(h->db, &version);
	rc = history_open(h->db, &h->hist);
	if (rc)
		goto fail;
	h->retention = wanted_retention(d);
	history_set_retention(h->hist, &h->retention);
	history_set_commit_hook(h->hist, fan_out, h);
	h->batch = history_batch_new(h->hist);
	h->ev_commit = evtimer_new(d->base, commit_cb, h);
	h->ev_retry = evtimer_new(d->base, retry_cb, h);
	h->ev_prune = evtimer_new(d->base, prune_cb, h);
	h->ev_checkpoint = evtimer_new(d->base, checkpoint_cb, h);
	if (h->ev_commit && !h->off &&
	    event_priority_set(h->ev_commit, DAEMON_PRIO_FIRST) < 0) {
		event_free(h->ev_commit);
		h->ev_commit = NULL;
	}
	if (!h->batch || !h->ev_commit || !h->ev_retry || !h->ev_prune ||
	    !h->ev_checkpoint) {
		rc = db_failf(h->db, -ENOMEM, "out of memory");
		goto fail;
	}
	h->hooks = (struct history_hooks){
		.ctx = d,
		.call_started = hook_call_started,
		.call_ended = hook_call_ended,
		.hostcall_started = hook_hostcall_started,
		.hostcall_settled = hook_hostcall_settled,
		.store_created = hook_store_created,
		.store_poisoned = hook_store_poisoned,
		.store_recreated = hook_store_recreated,
		.guest_output = hook_guest_output,
		.event = hook_event,
	};

	/* Calls the previous daemon never finished end now, all at once. */
	rc = history_recover_interrupted(h->hist,
					 "hosteld stopped while the call ran");
	if (rc < 0)
		goto fail;
	log_info(&d->log,
		 "history: %s (schema %d, synchronous=%s, last event %llu); "
		 "%d interrupted call(s) recovered",
		 h->db->path, version, db_sync_name(h->db->sync),
		 (unsigned long long)history_last_seq(h->hist), rc);
	{
		int interrupted = rc;

		rc = services_list(h->db, true, count_service, &h->autostart);
		if (rc)
			goto fail;
		if (h->autostart)
			log_info(&d->log,
				 "history: %zu service(s) marked autostart "
				 "to recreate",
				 h->autostart);
		if (h->off)
			log_warn(&d->log,
				 "history: off (hostel.conf): no events are "
				 "recorded and replies do not wait for a "
				 "commit");
		d->history = h;
		rc = daemon_event(
			h, HISTORY_DAEMON_STARTED,
			json_pack("{ss,sI,si,ss,sI}", "version",
				  PACKAGE_VERSION, "pid", (json_int_t)getpid(),
				  "interrupted", interrupted, "synchronous",
				  db_sync_name(h->db->sync), "autostart",
				  (json_int_t)h->autostart));
	}
	/* Durable before READY=1. */
	if (rc == 0)
		rc = history_commit(h->hist, h->batch);
	if (rc)
		goto fail;
	if (!h->off) {
		checkpointer_begin(h);
		writer_start(h);
		/* Commits on the loop (no writer) checkpoint as they did. */
		if (!h->w.running)
			checkpointer_end(h);
	}
	evtimer_add(h->ev_prune, &prune);
	evtimer_add(h->ev_checkpoint, &checkpoint);
	return 0;
fail:
	log_err(&d->log, "history: %s", db_errmsg(h->db));
	d->history = NULL;
	history_free_state(h);
	return -1;
}

void daemon_history_stopping(struct daemon *d)
{
	struct daemon_history *h = d->history;

	if (!h)
		return;
	if (!h->stopped_recorded) {
		h->stopped_recorded = true;
		daemon_event(h, HISTORY_DAEMON_STOPPED,
			     json_pack("{sI}", "uptimeMs",
				       (json_int_t)daemon_uptime_ms(d)));
	}
	/* Followers see everything up to daemon.stopped before they end. */
	if (!evtimer_pending(h->ev_retry, NULL)) {
		writer_wait(h);
		commit_now(h, false);
		writer_wait(h);
	}
	end_listeners(h);
}

void daemon_history_reloaded(struct daemon *d, const char *status,
			     const char *error)
{
	struct daemon_history *h = d->history;
	enum db_sync sync;
	json_t *p;

	if (!h)
		return;
	sync = wanted_sync(d);
	if (sync != h->db->sync) {
		if (h->w.running) {
			pthread_mutex_lock(&h->w.mu);
			h->w.sync_want = (int)sync;
			pthread_cond_signal(&h->w.cv);
			pthread_mutex_unlock(&h->w.mu);
		}
		if (db_set_sync(h->db, sync) == 0)
			log_info(&d->log, "database-synchronous is now %s",
				 db_sync_name(sync));
		else
			log_warn(&d->log,
				 "database-synchronous: cannot change to "
				 "%s: %s",
				 db_sync_name(sync), db_errmsg(h->db));
	}
	h->retention = wanted_retention(d);
	history_set_retention(h->hist, &h->retention);
	if ((d->file.history == 0) != h->off)
		log_warn(&d->log, "history = %s takes effect at the next start",
			 h->off ? "on" : "off");
	p = json_pack("{ss?,ss}", "config", d->config_path, "status", status);
	if (p && error)
		json_object_set_new(p, "error", json_string(error));
	daemon_event(h, HISTORY_DAEMON_RELOADED, p);
}

void daemon_history_close(struct daemon *d)
{
	struct daemon_history *h = d->history;

	if (!h)
		return;
	if (!h->stopped_recorded) {
		h->stopped_recorded = true;
		daemon_event(h, HISTORY_DAEMON_STOPPED,
			     json_pack("{sI,sb}", "uptimeMs",
				       (json_int_t)daemon_uptime_ms(d),
				       "graceful", 0));
	}
	/* Whatever cannot be committed now is failed, with its callers. */
	writer_stop(h);
	commit_now(h, true);
	end_listeners(h);
	/* The thread ends first: TRUNCATE would be BUSY beside its run. */
	checkpointer_end(h);
	if (db_checkpoint(h->db, true) < 0)
		log_debug(&d->log, "history: final checkpoint: %s",
			  db_errmsg(h->db));
	d->history = NULL;
	history_free_state(h);
}

/* ---- readers
 * -------------------------------------------------------------------------------------
 */

struct history *daemon_history_store(struct daemon *d)
{
	return d->history ? d->history->hist : NULL;
}

struct db *daemon_history_db(struct daemon *d)
{
	return d->history ? d->history->db : NULL;
}

struct db *daemon_history_writer_db(struct daemon *d)
{
	return d->history && d->history->w.running ? d->history->w.db : NULL;
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

int daemon_history_status(struct daemon *d, struct daemon_history_status *out)
{
	struct daemon_history *h = d->history;

	if (!h)
		return -ENODEV;
	history_get_stats(h->hist, &out->stats);
	out->pending_events =
		history_batch_count(h->batch) +
		(h->inflight ? history_batch_count(h->inflight) : 0);
	out->failing = h->failing;
	out->followers = h->n_listeners;
	out->synchronous = db_sync_name(h->db->sync);
	out->keep_events = h->retention.keep_events;
	out->keep_age = h->retention.keep_age;
	if (h->w.running) {
		pthread_mutex_lock(&h->w.mu);
		out->stats.pruned += h->w.pruned_total;
		pthread_mutex_unlock(&h->w.mu);
	}
	memset(&out->checkpoints, 0, sizeof(out->checkpoints));
	if (h->ckpt)
		checkpointer_get_stats(h->ckpt, &out->checkpoints);
	return 0;
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
		prune_cb(-1, EV_TIMEOUT, d->history);
}
