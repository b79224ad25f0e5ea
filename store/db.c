/*
 * db.c - opening hostel.db and the small wrappers every store module
 * uses (see db.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none: paths come from the daemon's state directory (its command line
 *    and hostel.conf); error messages go to fixed buffers.
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/db.h"
#include "store/schema.h"
#include "store/wal-gather.h"

int64_t db_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int db_errno(int sqlite_rc)
{
	switch (sqlite_rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:
		return 0;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return -EUCLEAN;
	case SQLITE_READONLY:
		return -EROFS;
	case SQLITE_CANTOPEN:
		return -EACCES;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
		return -EINVAL;
	case SQLITE_TOOBIG:
		return -EFBIG;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EPERM;
	default:
		return -EIO;
	}
}

int db_fail(struct db *db, int sqlite_rc, const char *what)
{
	int rc = db_errno(sqlite_rc);

	if (rc == 0)
		return 0;
	if ((sqlite_rc & 0xff) == SQLITE_CANTOPEN && db->sql &&
	    sqlite3_system_errno(db->sql) > 0)
		rc = -sqlite3_system_errno(db->sql);
	snprintf(db->errmsg, sizeof(db->errmsg), "%s: %s", what,
		 db->sql ? sqlite3_errmsg(db->sql) : sqlite3_errstr(sqlite_rc));
	return rc;
}

int db_failf(struct db *db, int neg_errno, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(db->errmsg, sizeof(db->errmsg), fmt, ap);
	va_end(ap);
	return neg_errno;
}

const char *db_errmsg(const struct db *db)
{
	return db->errmsg;
}

int db_exec(struct db *db, const char *sql)
{
	return db_fail(db, sqlite3_exec(db->sql, sql, NULL, NULL, NULL), sql);
}

int db_prepare(struct db *db, const char *sql, sqlite3_stmt **stmt)
{
	*stmt = NULL;
	return db_fail(db, sqlite3_prepare_v2(db->sql, sql, -1, stmt, NULL),
		       "preparing a statement");
}

int db_begin(struct db *db)
{
	return db_fail(
		db, sqlite3_exec(db->sql, "BEGIN IMMEDIATE", NULL, NULL, NULL),
		"beginning a transaction");
}

int db_commit(struct db *db)
{
	return db_fail(db, sqlite3_exec(db->sql, "COMMIT", NULL, NULL, NULL),
		       "committing");
}

void db_rollback(struct db *db)
{
	/* After SQLITE_FULL or an I/O error SQLite may have rolled back
	 * already; rolling back nothing is not an error worth a word. */
	if (!sqlite3_get_autocommit(db->sql))
		sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
}

const char *db_sync_name(enum db_sync sync)
{
	return sync == DB_SYNC_NORMAL ? "normal" : "full";
}

int db_sync_parse(const char *name)
{
	if (!strcmp(name, "full"))
		return DB_SYNC_FULL;
	if (!strcmp(name, "normal"))
		return DB_SYNC_NORMAL;
	return -1;
}

int db_set_sync(struct db *db, enum db_sync sync)
{
	int rc = db_exec(db, sync == DB_SYNC_NORMAL
				     ? "PRAGMA synchronous = NORMAL"
				     : "PRAGMA synchronous = FULL");

	if (rc == 0)
		db->sync = sync;
	return rc;
}

int db_checkpoint(struct db *db, bool truncate)
{
	return db_fail(
		db,
		sqlite3_wal_checkpoint_v2(db->sql, NULL,
					  truncate ? SQLITE_CHECKPOINT_TRUNCATE
						   : SQLITE_CHECKPOINT_PASSIVE,
					  NULL, NULL),
		"checkpointing the WAL");
}

/* One integer from a PRAGMA or query. */
static int query_int(struct db *db, const char *sql, long long *out)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db, sql, &st);

	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return db_fail(db, rc, sql);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Take hostel.lock, waiting up to wait_ms for its holder to let go. */
static int take_lock(struct db *db, const char *dir, int wait_ms)
{
	char *path = NULL, holder[32] = "";
	int fd, rc;
	ssize_t n;

	if (asprintf(&path, "%s/%s", dir, DB_LOCK_NAME) < 0)
		return db_failf(db, -ENOMEM, "out of memory");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		db_failf(db, rc, "%s: %s", path, strerror(errno));
		free(path);
		return rc;
	}
	for (int waited = 0;; waited += 20) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			rc = -errno;
			db_failf(db, rc, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (waited >= wait_ms) {
			n = pread(fd, holder, sizeof(holder) - 1, 0);
			holder[n > 0 ? n : 0] = '\0';
			holder[strcspn(holder, "\n")] = '\0';
			rc = db_failf(db, -EBUSY,
				      "state directory %s is in use by another "
				      "hosteld (pid %s); one daemon per state "
				      "directory",
				      dir, holder[0] ? holder : "unknown");
			goto fail;
		}
		sleep_ms(20);
	}
	/* The holder's pid, for the message another daemon would print. */
	n = snprintf(holder, sizeof(holder), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, holder, (size_t)n, 0) != n)
		holder[0] = '\0'; /* informational only: nothing to do */
	db->lock_fd = fd;
	free(path);
	return 0;
fail:
	close(fd);
	free(path);
	return rc;
}

/* Refuse files that are not (empty or) hostel databases. */
static int check_identity(struct db *db)
{
	long long app, tables, version;
	int rc = query_int(db, "PRAGMA application_id", &app);

	if (rc == -EUCLEAN || rc == -EIO)
		return db_failf(db, -EUCLEAN,
				"%s is not an SQLite database or is corrupt: "
				"%s; move it away (hosteld then starts with "
				"an empty one) or restore a backup",
				db->path, sqlite3_errmsg(db->sql));
	if (rc)
		return rc;
	if (app != 0 && app != DB_APPLICATION_ID)
		return db_failf(db, -EUCLEAN,
				"%s is not a hostel database (application_id "
				"%#llx)",
				db->path, app);
	if (app == DB_APPLICATION_ID)
		return 0;
	rc = query_int(db, "SELECT count(*) FROM sqlite_master", &tables);
	if (rc == 0)
		rc = query_int(db, "PRAGMA user_version", &version);
	if (rc)
		return rc;
	if (tables != 0 || version != 0)
		return db_failf(db, -EUCLEAN,
				"%s is not a hostel database (it holds other "
				"tables)",
				db->path);
	{
		char sql[64];

		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d",
			 DB_APPLICATION_ID);
		return db_exec(db, sql);
	}
}

static int set_wal(struct db *db)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db, "PRAGMA journal_mode = WAL", &st);
	const char *mode;

	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		rc = db_fail(db, rc, "switching to WAL mode");
		sqlite3_finalize(st);
		return rc;
	}
	mode = (const char *)sqlite3_column_text(st, 0);
	rc = mode && !strcmp(mode, "wal")
		     ? 0
		     : db_failf(db, -ENOTSUP,
				"%s: the file system does not support WAL "
				"mode (journal mode stays %s); use a local "
				"file system for the state directory",
				db->path, mode ? mode : "unknown");
	sqlite3_finalize(st);
	return rc;
}

int db_open(const char *dir, const struct db_options *opt, struct db **out,
	    char *err, size_t errlen)
{
	struct db *db = calloc(1, sizeof(*db));
	struct stat st;
	int rc;

	*out = NULL;
	if (!db) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	db->lock_fd = -1;
	rc = stat(dir, &st) < 0 ? -errno : S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	if (rc) {
		snprintf(err, errlen, "state directory %s: %s", dir,
			 strerror(-rc));
		free(db);
		return rc;
	}
	if (asprintf(&db->path, "%s/%s", dir, DB_FILE_NAME) < 0) {
		db->path = NULL;
		rc = db_failf(db, -ENOMEM, "out of memory");
		goto fail;
	}
	if (opt->lock_wait_ms >= 0) {
		rc = take_lock(db, dir, opt->lock_wait_ms);
		if (rc)
			goto fail;
	}
	/* The loop owns the connection: no SQLite mutexes needed. */
	/*
	 * Before SQLite's first use in the process (later it is refused,
	 * harmlessly): without memory statistics every allocation takes a
	 * process-wide mutex, which the daemon's two connections (the loop
	 * and the history writer, store/history.h) would fight over.
	 */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	rc = sqlite3_open_v2(db->path, &db->sql,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				     SQLITE_OPEN_NOMUTEX,
			     wal_gather_vfs());
	if (rc != SQLITE_OK) {
		rc = db_fail(db, rc, db->path);
		if (rc == -EACCES || rc == -EROFS || rc == -ENOENT ||
		    rc == -EPERM)
			db_failf(db, rc,
				 "cannot open %s: %s (the state directory "
				 "must be writable by hosteld)",
				 db->path, strerror(-rc));
		goto fail;
	}
	sqlite3_extended_result_codes(db->sql, 1);
	sqlite3_busy_timeout(db->sql, opt->busy_timeout_ms > 0
					      ? opt->busy_timeout_ms
					      : DB_BUSY_TIMEOUT_MS);
	rc = check_identity(db);
	if (rc == 0)
		rc = set_wal(db);
	if (rc == 0)
		rc = db_exec(db, "PRAGMA foreign_keys = ON");
	if (rc == 0)
		rc = db_set_sync(db, opt->sync);
	if (rc == 0)
		rc = schema_migrate(db, opt->schema_version);
	if (rc)
		goto fail;
	*out = db;
	return 0;
fail:
	snprintf(err, errlen, "%s", db->errmsg);
	db_close(db);
	return rc;
}

void db_close(struct db *db)
{
	if (!db)
		return;
	if (db->sql) {
		db_rollback(db);
		/* v2: outstanding statements are a bug elsewhere, but the
		 * handle is then freed with the last of them. */
		sqlite3_close_v2(db->sql);
	}
	if (db->lock_fd >= 0)
		close(db->lock_fd); /* releases the flock */
	free(db->path);
	free(db);
}
