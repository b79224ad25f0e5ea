/*
 * db.h - hostel's SQLite database: opening, settings, transactions, errors.
 *
 * One file, STATE_DIR/hostel.db, holds components, services and the event
 * history.  The daemon owns one connection, used only from its event loop.
 *
 * Contract:
 *  - db_open() leaves the database in WAL mode with foreign keys on, a
 *    busy timeout, the chosen `synchronous` level (FULL unless NORMAL is
 *    asked for) and the schema migrated to SCHEMA_VERSION (store/schema.h).
 *    A database written by a newer hostel is refused, never downgraded; a
 *    file that is not a hostel database is refused, never touched.
 *    Connections open through the VFS of store/wal-gather.h (each
 *    commit's WAL frames in one write), or the default VFS when SQLite
 *    refuses to register it.
 *  - With a lock (the default), db_open() also holds an exclusive flock(2)
 *    on STATE_DIR/hostel.lock until db_close(): two daemons never share a
 *    state directory, so recovery never mistakes another live daemon's
 *    calls for interrupted ones.
 *  - Every write transaction starts with BEGIN IMMEDIATE: in WAL mode a
 *    deferred transaction that upgrades to a writer gets SQLITE_BUSY
 *    without honouring the busy timeout.
 *  - Functions return 0 or a negative errno value and keep a one-line
 *    message for db_errmsg().  The mapping from SQLite's codes:
 *      SQLITE_FULL -> -ENOSPC, SQLITE_IOERR -> -EIO, SQLITE_BUSY/LOCKED ->
 *      -EBUSY, SQLITE_NOMEM -> -ENOMEM, SQLITE_CORRUPT/NOTADB -> -EUCLEAN,
 *      SQLITE_READONLY -> -EROFS, SQLITE_CANTOPEN -> the system errno (or
 *      -EACCES), SQLITE_CONSTRAINT -> -EINVAL (callers refine it),
 *      SQLITE_TOOBIG -> -EFBIG, anything else -> -EIO.
 */
#ifndef HOSTEL_STORE_DB_H
#define HOSTEL_STORE_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#define DB_FILE_NAME	   "hostel.db"
#define DB_LOCK_NAME	   "hostel.lock"
#define DB_BUSY_TIMEOUT_MS 5000
/* PRAGMA application_id of hostel databases: "hstl". */
#define DB_APPLICATION_ID 0x6873746c

enum db_sync {
	DB_SYNC_FULL = 0, /* fsync the WAL at every commit: power-loss safe */
	DB_SYNC_NORMAL,	  /* fsync at checkpoints only: crash safe */
};

struct db_options {
	enum db_sync sync;
	int busy_timeout_ms; /* 0: DB_BUSY_TIMEOUT_MS */
	/*
	 * How long to wait for another process to release hostel.lock (a
	 * daemon still shutting down); < 0 takes no lock at all (tools and
	 * tests that open a second connection).
	 */
	int lock_wait_ms;
	/* Migrate up to this version; 0 means SCHEMA_VERSION.  Tests only. */
	int schema_version;
};

struct db {
	sqlite3 *sql;
	char *path; /* of hostel.db */
	int lock_fd;
	enum db_sync sync;
	char errmsg[256];
};

/*
 * Open (creating when missing) dir/hostel.db.  On failure *out is NULL
 * and err holds a message naming the file and what to do.
 */
int db_open(const char *dir, const struct db_options *opt, struct db **out,
	    char *err, size_t errlen);

/* Close (NULL is fine).  Pending transactions are rolled back. */
void db_close(struct db *db);

/* Change the synchronous level of the open connection. */
int db_set_sync(struct db *db, enum db_sync sync);
const char *db_sync_name(enum db_sync sync);
/* "full" / "normal" -> level; -1 when unknown. */
int db_sync_parse(const char *name);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK.  Rollback never fails loudly. */
int db_begin(struct db *db);
int db_commit(struct db *db);
void db_rollback(struct db *db);

/* Run SQL without results. */
int db_exec(struct db *db, const char *sql);

/* Prepare a statement (persistent when it is kept by the caller). */
int db_prepare(struct db *db, const char *sql, sqlite3_stmt **stmt);

/*
 * Record a failure: map an SQLite result code to -errno (see above) and
 * keep "what: sqlite's message" for db_errmsg().  SQLITE_OK gives 0.
 */
int db_fail(struct db *db, int sqlite_rc, const char *what);

/* Record a failure of our own (already an errno). */
int db_failf(struct db *db, int neg_errno, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

const char *db_errmsg(const struct db *db);

/* The -errno value an SQLite result code maps to. */
int db_errno(int sqlite_rc);

/*
 * Checkpoint the WAL: PASSIVE (never waits; for an idle timer) or
 * TRUNCATE (at shutdown, leaves an empty WAL).
 */
int db_checkpoint(struct db *db, bool truncate);

/* Unix time in nanoseconds (CLOCK_REALTIME). */
int64_t db_now_ns(void);

#endif
