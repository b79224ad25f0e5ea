/*
 * history.c - the daemon's event history (see history-hooks.h): its
 * lifecycle (the database daemon.c opens, taken over at start; recovery,
 * daemon.started, reload, the stop and the close), its settings, and
 * what the readers ask of it (method-history.c: the store, Stats).
 *
 * The rest lives in files of its own, over history-internal.h: the
 * event kinds and hooks (history-events.c), the commit policy and its
 * timers (history-commit.c), the writer thread (history-writer.c),
 * retention (history-retention.c) and the followers
 * (history-follow.c).
 *
 * Allocations sized by a guest or a client (issue 18 audit): none here;
 * see the files above.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>

#include <event2/event.h>

#include "daemon/checkpointer.h"
#include "daemon/daemon.h"
#include "daemon/durable.h"
#include "daemon/history-internal.h"
#include "store/db.h"
#include "store/schema.h"
#include "store/services.h"

/* Defaults of history-keep-events and history-keep-age (hostel.conf(5)). */
#define DEFAULT_KEEP_EVENTS 100000
#define DEFAULT_KEEP_AGE    (30 * 86400)

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
	if (h->ev_checkpoint)
		event_free(h->ev_checkpoint);
	hist_off_flush(h); /* none are left in practice: the loop ran them */
	free(h->dones);
	json_text_free(&h->text);
	hist_writer_stop(h);
	hist_retention_free(h);
	checkpointer_end(h);
	history_batch_free(h->batch);
	history_batch_free(h->spare);
	history_free(h->hist);
	db_close(h->db);
	free(h);
}

int daemon_history_open(struct daemon *d, struct db *db)
{
	struct daemon_history *h = calloc(1, sizeof(*h));
	struct timeval prune = {PRUNE_INTERVAL_SEC, 0};
	struct timeval checkpoint = {CHECKPOINT_INTERVAL_SEC, 0};
	int rc, version = 0;

	if (!h) {
		log_err(&d->log, "history: out of memory");
		db_close(db);
		return -1;
	}
	h->d = d;
	h->db = db;
	/* Read at start only: a running daemon never changes its mind. */
	h->off = d->file.history == 0;
	schema_version(h->db, &version);
	rc = history_open(h->db, &h->hist);
	if (rc)
		goto fail;
	h->retention = wanted_retention(d);
	history_set_retention(h->hist, &h->retention);
	history_set_commit_hook(h->hist, hist_fan_out, h);
	history_set_image_hook(h->hist, durable_image_dropped, d);
	/* used when commits run on the loop (no writer thread) */
	history_set_fold(h->hist, durable_fold, NULL);
	h->batch = history_batch_new(h->hist);
	h->ev_commit = evtimer_new(d->base, hist_commit_cb, h);
	h->ev_retry = evtimer_new(d->base, hist_retry_cb, h);
	h->ev_checkpoint = evtimer_new(d->base, hist_checkpoint_cb, h);
	if (h->ev_commit && !h->off &&
	    event_priority_set(h->ev_commit, DAEMON_PRIO_FIRST) < 0) {
		event_free(h->ev_commit);
		h->ev_commit = NULL;
	}
	if (!h->batch || !h->ev_commit || !h->ev_retry || !h->ev_checkpoint ||
	    hist_retention_init(h) < 0) {
		rc = db_failf(h->db, -ENOMEM, "out of memory");
		goto fail;
	}
	hist_hooks_init(h);

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
		rc = hist_daemon_event(
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
		hist_writer_start(h);
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
		hist_daemon_event(h, HISTORY_DAEMON_STOPPED,
				  json_pack("{sI}", "uptimeMs",
					    (json_int_t)daemon_uptime_ms(d)));
	}
	/* Followers see everything up to daemon.stopped before they end. */
	if (!evtimer_pending(h->ev_retry, NULL)) {
		hist_writer_wait(h);
		hist_commit_now(h, false);
		hist_writer_wait(h);
	}
	hist_end_listeners(h);
}

void daemon_history_reloaded(struct daemon *d, const char *status,
			     const char *error)
{
	struct daemon_history *h = d->history;
	enum db_sync sync;
	json_t *p;

	if (!h)
		return;
	sync = daemon_wanted_sync(d);
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
	hist_daemon_event(h, HISTORY_DAEMON_RELOADED, p);
}

void daemon_history_close(struct daemon *d)
{
	struct daemon_history *h = d->history;

	if (!h)
		return;
	if (!h->stopped_recorded) {
		h->stopped_recorded = true;
		hist_daemon_event(h, HISTORY_DAEMON_STOPPED,
				  json_pack("{sI,sb}", "uptimeMs",
					    (json_int_t)daemon_uptime_ms(d),
					    "graceful", 0));
	}
	/* Whatever cannot be committed now is failed, with its callers. */
	hist_writer_stop(h);
	hist_commit_now(h, true);
	hist_end_listeners(h);
	/* The thread ends first: TRUNCATE would be BUSY beside its run. */
	checkpointer_end(h);
	if (db_checkpoint(h->db, true) < 0)
		log_debug(&d->log, "history: final checkpoint: %s",
			  db_errmsg(h->db));
	d->history = NULL;
	history_free_state(h);
}

struct history *daemon_history_store(struct daemon *d)
{
	return d->history ? d->history->hist : NULL;
}

struct db *daemon_history_db(struct daemon *d)
{
	return d->history ? d->history->db : NULL;
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
	out->prune_passes = 0;
	if (h->w.running)
		pthread_mutex_lock(&h->w.mu);
	out->stats.pruned += h->w.pruned_total;
	for (struct daemon_prune *r = h->w.requests; r; r = r->next)
		out->prune_passes += !r->ended;
	if (h->w.running)
		pthread_mutex_unlock(&h->w.mu);
	memset(&out->checkpoints, 0, sizeof(out->checkpoints));
	if (h->ckpt)
		checkpointer_get_stats(h->ckpt, &out->checkpoints);
	return 0;
}
