/*
 * checkpointer.c - WAL checkpoints off the commit path (checkpointer.h).
 *
 * The thread and the watched connections share only the fields under mu:
 * whether a run is wanted or in progress, what the last run copied, and
 * the counts.  Each watch's last_frames belongs to its connection's
 * thread.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: one
 * struct and at most WATCH_MAX watched connections.
 */
#include "config.h"

#include "daemon/checkpointer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The loop's connection and the writer's. */
#define WATCH_MAX 2

struct watch {
	struct checkpointer *c;
	struct db *db; /* NULL: a free slot */
	bool may_inline;
	int last_frames; /* the WAL's size after this connection's last commit
			  */
};

struct checkpointer {
	struct db *db; /* the thread's own connection */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool wanted, busy, quit;
	/*
	 * The WAL's size when the last run copied all of it (0: unknown, or
	 * the WAL started over since): a commit past it has little to copy.
	 */
	int copied_frames;
	struct checkpointer_stats stats;
	struct watch watch[WATCH_MAX];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/* Count a failed checkpoint; under mu. */
static void account(struct checkpointer *c, int rc)
{
	/* BUSY: another checkpoint ran meanwhile; the next one goes on. */
	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		c->stats.failures++;
}

static void *run(void *arg)
{
	struct checkpointer *c = arg;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		int rc, log = -1, copied = -1;

		while (!c->quit && !c->wanted)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->quit)
			break;
		c->wanted = false;
		c->busy = true;
		pthread_mutex_unlock(&c->mu);
		rc = sqlite3_wal_checkpoint_v2(c->db->sql, NULL,
					       SQLITE_CHECKPOINT_PASSIVE, &log,
					       &copied);
		pthread_mutex_lock(&c->mu);
		c->busy = false;
		c->stats.runs++;
		account(c, rc);
		if (rc == SQLITE_OK && log > 0 && copied == log)
			c->copied_frames = log;
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* SQLite calls this after each commit of a watched connection. */
static int wal_hook(void *arg, sqlite3 *sql, const char *name, int frames)
{
	struct watch *w = arg;
	struct checkpointer *c = w->c;
	bool now = false;
	uint64_t t0, ns;
	int rc;

	pthread_mutex_lock(&c->mu);
	if (frames < w->last_frames)
		c->copied_frames = 0; /* the WAL started over */
	w->last_frames = frames;
	if (frames >= CHECKPOINTER_FRAMES) {
		if (w->may_inline && (frames >= CHECKPOINTER_INLINE_FRAMES ||
				      (!c->busy && c->copied_frames > 0 &&
				       c->copied_frames <= frames)))
			now = true;
		else if (!c->busy && !c->wanted) {
			c->wanted = true;
			pthread_cond_signal(&c->cv);
		}
	}
	pthread_mutex_unlock(&c->mu);
	if (!now)
		return SQLITE_OK;
	t0 = mono_ns();
	rc = sqlite3_wal_checkpoint_v2(sql, name, SQLITE_CHECKPOINT_PASSIVE,
				       NULL, NULL);
	ns = mono_ns() - t0;
	pthread_mutex_lock(&c->mu);
	c->stats.inline_runs++;
	if (ns > c->stats.inline_ns_max)
		c->stats.inline_ns_max = ns;
	account(c, rc);
	c->copied_frames = 0;
	pthread_mutex_unlock(&c->mu);
	/* A failed checkpoint is not the commit's failure. */
	return SQLITE_OK;
}

int checkpointer_start(const char *dir, enum db_sync sync,
		       struct checkpointer **out, char *err, size_t errlen)
{
	struct checkpointer *c = calloc(1, sizeof(*c));
	struct db_options opt = {.sync = sync, .lock_wait_ms = -1};
	sigset_t all, old;
	int rc;

	*out = NULL;
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (pthread_mutex_init(&c->mu, NULL)) {
		free(c);
		snprintf(err, errlen, "cannot start the checkpointer");
		return -ENOMEM;
	}
	if (pthread_cond_init(&c->cv, NULL)) {
		pthread_mutex_destroy(&c->mu);
		free(c);
		snprintf(err, errlen, "cannot start the checkpointer");
		return -ENOMEM;
	}
	rc = db_open(dir, &opt, &c->db, err, errlen);
	if (rc == 0) {
		/* Signals are the loop's business. */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		rc = -pthread_create(&c->thread, NULL, run, c);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc)
			snprintf(err, errlen,
				 "cannot start the checkpointer thread");
	}
	if (rc) {
		db_close(c->db);
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int checkpointer_watch(struct checkpointer *c, struct db *db, bool may_inline)
{
	for (int i = 0; i < WATCH_MAX; i++) {
		struct watch *w = &c->watch[i];

		if (w->db)
			continue;
		*w = (struct watch){.c = c, .db = db, .may_inline = may_inline};
		sqlite3_wal_hook(db->sql, wal_hook, w);
		return 0;
	}
	return -ENOSPC;
}

void checkpointer_unwatch(struct checkpointer *c, struct db *db)
{
	if (!c || !db)
		return;
	for (int i = 0; i < WATCH_MAX; i++)
		if (c->watch[i].db == db) {
			/* SQLite's own hook again, with its default. */
			sqlite3_wal_autocheckpoint(db->sql,
						   CHECKPOINTER_FRAMES);
			c->watch[i].db = NULL;
		}
}

void checkpointer_request(struct checkpointer *c)
{
	pthread_mutex_lock(&c->mu);
	c->wanted = true;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

void checkpointer_get_stats(struct checkpointer *c,
			    struct checkpointer_stats *out)
{
	pthread_mutex_lock(&c->mu);
	*out = c->stats;
	pthread_mutex_unlock(&c->mu);
}

void checkpointer_stop(struct checkpointer *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->quit = true;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->thread, NULL);
	db_close(c->db);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
