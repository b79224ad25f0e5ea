/*
 * checkpointer.h - WAL checkpoints off the commit path.
 *
 * With SQLite's automatic checkpoint, the connection whose commit takes
 * the WAL past 1000 pages copies the WAL into the database and syncs both
 * files before that commit returns (synchronous=NORMAL syncs the WAL only
 * then: some 4 MB at once); measured under load, 5 to 8 ms each time,
 * and every reply of the batch waits (p99 of the call round trip 5 to 8
 * ms instead of 1 to 2).  The checkpointer is a thread with a connection
 * of its own that does this copying and syncing PASSIVE: it never waits
 * for the writer, who goes on appending.
 *
 * A WAL only starts over when, at the start of a write transaction, all
 * of it has been copied; under commits that never pause, a checkpoint
 * beside them never reaches the end, and the WAL grows without bound
 * (test_history_daemon: wal_stays_bounded_under_steady_commits).  So a
 * watched connection that may (the writer's) finishes the job itself:
 * when its commit takes the WAL past CHECKPOINTER_FRAMES and the thread
 * has copied the WAL as it was at its last run, the commit checkpoints
 * the few pages appended since, inline, and the next transaction
 * restarts the WAL.  Past CHECKPOINTER_INLINE_FRAMES it checkpoints
 * inline whatever the thread is doing: a bound, never the rule.
 *
 * Contract:
 *  - checkpointer_start() opens its own connection to dir/hostel.db (no
 *    lock: the daemon holds it) and starts the thread; on failure the
 *    connections keep SQLite's automatic checkpoint.
 *  - checkpointer_watch() replaces a connection's automatic checkpoint by
 *    the hook above; a connection watched with may_inline false (the
 *    loop's) only asks the thread, never checkpoints in its commit.  The
 *    connection must be used from one thread at a time, as always, and
 *    closed or unwatched (checkpointer_unwatch) before checkpointer_stop.
 *  - checkpointer_request() asks for a run; it never blocks on one.
 *  - Stats may be read from any thread.
 */
#ifndef HOSTEL_DAEMON_CHECKPOINTER_H
#define HOSTEL_DAEMON_CHECKPOINTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/* The WAL size (pages) that calls for a checkpoint: SQLite's default. */
#define CHECKPOINTER_FRAMES 1000
/* The size past which a watched connection checkpoints in its commit. */
#define CHECKPOINTER_INLINE_FRAMES 4000

struct checkpointer;

struct checkpointer_stats {
	uint64_t runs;		/* by the thread */
	uint64_t inline_runs;	/* in a watched connection's commit */
	uint64_t failures;	/* either, other than SQLITE_BUSY */
	uint64_t inline_ns_max; /* the longest inline one: a commit waits */
};

int checkpointer_start(const char *dir, enum db_sync sync,
		       struct checkpointer **out, char *err, size_t errlen);
/* Watch db's commits (see above); -ENOMEM, -ENOSPC (too many), or 0. */
int checkpointer_watch(struct checkpointer *c, struct db *db, bool may_inline);
/* Give db back its automatic checkpoint. */
void checkpointer_unwatch(struct checkpointer *c, struct db *db);
void checkpointer_request(struct checkpointer *c);
void checkpointer_get_stats(struct checkpointer *c,
			    struct checkpointer_stats *out);
/* Finish a run in progress, end the thread, close (NULL is fine). */
void checkpointer_stop(struct checkpointer *c);

#endif
