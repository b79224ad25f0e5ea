/*
 * checkpointer.c - WAL checkpoints on a thread of their own (see
 * checkpointer.h).
 */
#include "config.h"

#include "daemon/checkpointer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct checkpointer {
	struct db *db;
	pthread_t thread;
	pthread_mutex_t mu; /* guards everything below */
	pthread_cond_t cv;
	bool want, quit;
	struct checkpointer_stats stats;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static void *checkpointer_main(void *arg)
{
	struct checkpointer *c = arg;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		uint64_t t0, ns;
		int rc;

		while (!c->quit && !c->want)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->quit)
			break;
		c->want = false;
		pthread_mutex_unlock(&c->mu);
		t0 = mono_ns();
		rc = db_checkpoint(c->db, false);
		ns = mono_ns() - t0;
		pthread_mutex_lock(&c->mu);
		c->stats.checkpoints++;
		c->stats.last_ns = ns;
		if (ns > c->stats.max_ns)
			c->stats.max_ns = ns;
		c->stats.last_rc = rc < 0 ? rc : 0;
		if (rc < 0)
			c->stats.failures++;
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

int checkpointer_start(const char *state_dir, enum db_sync sync,
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
		snprintf(err, errlen, "cannot make a mutex");
		return -EAGAIN;
	}
	if (pthread_cond_init(&c->cv, NULL)) {
		pthread_mutex_destroy(&c->mu);
		free(c);
		snprintf(err, errlen, "cannot make a condition variable");
		return -EAGAIN;
	}
	rc = db_open(state_dir, &opt, &c->db, err, errlen);
	if (rc == 0) {
		/* Signals are the loop's business. */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		rc = -pthread_create(&c->thread, NULL, checkpointer_main, c);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc)
			snprintf(err, errlen, "cannot start a thread");
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

/* Runs on the committing connection's thread, after each commit. */
static int wal_hook(void *arg, sqlite3 *sql, const char *name, int pages)
{
	(void)sql;
	(void)name;
	if (pages >= CHECKPOINTER_WAL_PAGES)
		checkpointer_request(arg);
	return SQLITE_OK;
}

void checkpointer_watch(struct checkpointer *c, struct db *db)
{
	/* Replaces the automatic checkpoint, itself a WAL hook. */
	sqlite3_wal_hook(db->sql, wal_hook, c);
}

void checkpointer_unwatch(struct db *db)
{
	if (db)
		sqlite3_wal_autocheckpoint(db->sql, CHECKPOINTER_WAL_PAGES);
}

void checkpointer_request(struct checkpointer *c)
{
	pthread_mutex_lock(&c->mu);
	c->want = true;
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
