/*
 * checkpointer.h - the thread that checkpoints the database's WAL, on a
 * connection of its own, so that no commit waits for a checkpoint.
 *
 * Why: SQLite's automatic checkpoint runs inside the commit that crosses
 * its threshold: the history writer's commit then copies a thousand pages
 * into the database file and syncs it, and every reply waiting on that
 * commit waits the extra milliseconds (at 50,000 calls/s the 99th
 * percentile round trip went from 2 to 8 ms).  A PASSIVE checkpoint on
 * another connection runs beside the writer's commits instead.
 *
 * Contract:
 *  - checkpointer_start() opens the connection (no lock: the daemon holds
 *    it) and starts the thread; on failure it returns a negative errno
 *    and a message, and the daemon keeps SQLite's automatic checkpoints.
 *  - checkpointer_watch(c, db) turns db's automatic checkpoint off and
 *    asks c for a checkpoint after each of db's commits that leaves the
 *    WAL at CHECKPOINTER_WAL_PAGES pages or more.  Only for a connection
 *    that c outlives; checkpointer_unwatch() undoes it.
 *  - checkpointer_request() asks for one (from any thread, never waits);
 *    requests made while one runs are merged into one more.
 *  - Checkpoints are PASSIVE: they never wait for readers or the writer;
 *    what they cannot copy now the next one copies.
 *  - checkpointer_stop() lets a running checkpoint end, joins the thread,
 *    closes the connection and frees c (NULL is fine).
 */
#ifndef HOSTEL_DAEMON_CHECKPOINTER_H
#define HOSTEL_DAEMON_CHECKPOINTER_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/* SQLite's own automatic threshold. */
#define CHECKPOINTER_WAL_PAGES 1000

struct checkpointer;

struct checkpointer_stats {
	uint64_t checkpoints; /* done, failed ones included */
	uint64_t failures;
	int last_rc; /* 0 or the last failure's negative errno */
	uint64_t last_ns, max_ns;
};

int checkpointer_start(const char *state_dir, enum db_sync sync,
		       struct checkpointer **out, char *err, size_t errlen);
void checkpointer_watch(struct checkpointer *c, struct db *db);
void checkpointer_unwatch(struct db *db);
void checkpointer_request(struct checkpointer *c);
void checkpointer_get_stats(struct checkpointer *c,
			    struct checkpointer_stats *out);
void checkpointer_stop(struct checkpointer *c);

#endif
