/*
 * history-internal.h - what the files of the daemon's history share
 * (daemon/history*.c; the rest of the daemon uses history-hooks.h).
 *
 * One struct daemon_history per daemon (d->history), owned by the
 * loop's thread: the batch being filled, the one in flight on the
 * writer, the timers, the followers, the retention settings.  The
 * writer thread (history-writer.c) touches only struct writer's
 * fields under its mutex, its own connection, the batch it was handed
 * and the retention passes it steps (history-retention.c).  Every
 * function declared here runs on the loop's thread unless it says
 * otherwise.
 *
 * Allocations sized by a guest or a client: none here; each file's
 * header lists its own.
 */
#ifndef HOSTEL_DAEMON_HISTORY_INTERNAL_H
#define HOSTEL_DAEMON_HISTORY_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "daemon/checkpointer.h"
#include "daemon/history-hooks.h"
#include "ipc/json-text.h"
#include "store/db.h"
#include "store/history.h"

struct daemon;

#define PRUNE_INTERVAL_SEC	60
#define CHECKPOINT_INTERVAL_SEC 60

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
	 * turn, and the writer's commits starved (history-retention.c).
	 * Without the thread the loop steps them (and mu guards nothing).
	 */
	struct daemon_prune *requests;
	uint64_t pruned_total; /* Stats' "pruned" */
	/* A fold step that failed (store/folds.h), for the loop to log
	 * (under mu); folds run here between batches like the passes. */
	char fold_error[256];
	bool fold_failed;
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
	struct event *ev_commit, *ev_retry, *ev_checkpoint;
	/* The minutely pass; a pass's next step without a writer. */
	struct event *ev_prune, *ev_prune_step;
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

/* ---- the commit policy and its timers (history-commit.c) */

/* Commit the batch now: on the writer when it is idle, else on the loop
 * (at start, at the end: `final`, and without a writer). */
void hist_commit_now(struct daemon_history *h, bool final);
/* Commit in the next loop iteration (a due commit is left as it is). */
void hist_commit_soon(struct daemon_history *h);
/* Whether the batch should commit now (see COMMIT_WAIT_MAX_US). */
bool hist_commit_due(const struct daemon_history *h);
/* The batch's commit succeeded (n events) or failed (rc): status, log,
 * retries; a failure past HISTORY_RETRY_LIMIT_MS or `final` fails it. */
void hist_commit_succeeded(struct daemon_history *h, size_t n);
void hist_commit_failed(struct daemon_history *h, int rc, size_t n, bool final);
/* An event joined the batch: arm the end-of-turn commit. */
void hist_schedule(struct daemon_history *h);
/* A reply waits on the batch; a call closed (its terminal event). */
void hist_waiter_added(struct daemon_history *h);
void hist_call_closed(struct daemon_history *h);
/* History off: keep `done` for the end of the turn; run them. */
int hist_off_done(struct daemon_history *h, history_done_fn fn, void *arg);
void hist_off_flush(struct daemon_history *h);
/* Timers: ev_commit, ev_retry, ev_checkpoint (arg: the history). */
void hist_commit_cb(evutil_socket_t fd, short what, void *arg);
void hist_retry_cb(evutil_socket_t fd, short what, void *arg);
void hist_checkpoint_cb(evutil_socket_t fd, short what, void *arg);

/* ---- the writer thread (history-writer.c) */

/* Start it (on failure commits run on the loop, and the log says so). */
void hist_writer_start(struct daemon_history *h);
/* Finish the batch in flight and end the thread (idempotent). */
void hist_writer_stop(struct daemon_history *h);
/* Hand the batch to the writer; false when it cannot take it now. */
bool hist_writer_take(struct daemon_history *h);
/* Wait for the batches in flight, if any, and account for them. */
void hist_writer_wait(struct daemon_history *h);

/* ---- retention (history-retention.c) */

/* Its timers, made (-ENOMEM) and freed; freeing ends the passes left. */
int hist_retention_init(struct daemon_history *h);
void hist_retention_free(struct daemon_history *h);
/* Answer and free the passes the writer ended (all of them, with `why`
 * as their error, when it no longer runs). */
void hist_prune_requests_finish(struct daemon_history *h, const char *why);
/* On the writer's thread, under w->mu: the first pass not yet ended. */
struct daemon_prune *hist_prune_request_due(const struct writer *w);
/* On the writer's thread, outside w->mu: one bounded step of r. */
void hist_prune_request_step(struct writer *w, struct daemon_prune *r);

/* ---- followers (history-follow.c) */

/* Durable events to the followers (the store's commit hook; arg: h). */
void hist_fan_out(void *arg, const struct history_event *ev, size_t n);
/* End every follower's stream (the history goes away). */
void hist_end_listeners(struct daemon_history *h);

/* ---- event kinds (history-events.c) */

/* The hooks of history-hooks.h, on h (h->hooks). */
void hist_hooks_init(struct daemon_history *h);
/* A daemon.* event built from a jansson object (consumed). */
int hist_daemon_event(struct daemon_history *h, const char *kind,
		      json_t *payload);

#endif
