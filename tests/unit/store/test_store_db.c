/*
 * test_store_db.c - store/db.h, store/schema.h, store/components.h and
 * store/services.h: opening and its settings, migrations from empty and
 * from every earlier version, refusing newer, foreign and corrupt files,
 * unwritable directories, the state-directory lock, a migration that
 * fails leaving the old version intact, disk full, and the components
 * and services tables with their rules.
 */
#include "store-testutil.h"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "store/components.h"
#include "store/db.h"
#include "store/history.h"
#include "store/schema.h"
#include "store/services.h"
#include "testmain.h"

static const struct db_options defaults = {.sync = DB_SYNC_FULL};

static struct db *open_ok(const char *dir, const struct db_options *opt)
{
	struct db *db;
	char err[256] = "";
	int rc = db_open(dir, opt, &db, err, sizeof(err));

	ck_assert_msg(rc == 0, "db_open: %d %s", rc, err);
	ck_assert_ptr_nonnull(db);
	return db;
}

static long long pragma(struct db *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v;

	ck_assert_int_eq(sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static const char *pragma_text(struct db *db, const char *sql, char *buf,
			       size_t size)
{
	sqlite3_stmt *st;

	ck_assert_int_eq(sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	snprintf(buf, size, "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

/* A raw SQLite connection beside the store's (for setup and checks). */
static sqlite3 *raw_open(const char *dir)
{
	char *path = path_in(dir, DB_FILE_NAME);
	sqlite3 *raw;

	ck_assert_int_eq(sqlite3_open(path, &raw), SQLITE_OK);
	free(path);
	return raw;
}

static void raw_exec(sqlite3 *raw, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(raw, sql, NULL, NULL, &msg);

	ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, msg ? msg : "");
	sqlite3_free(msg);
}

static long long raw_int(sqlite3 *raw, const char *sql)
{
	sqlite3_stmt *st;
	long long v;

	ck_assert_int_eq(sqlite3_prepare_v2(raw, sql, -1, &st, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ---- opening ------------------------------------------------------------ */

START_TEST(fresh_database_settings)
{
	char *dir = tmpdir_new(), buf[32];
	struct db *db = open_ok(dir, &defaults);
	int version;

	ck_assert_int_eq(schema_version(db, &version), 0);
	ck_assert_int_eq(version, SCHEMA_VERSION);
	ck_assert_str_eq(
		pragma_text(db, "PRAGMA journal_mode", buf, sizeof(buf)),
		"wal");
	ck_assert_int_eq(pragma(db, "PRAGMA synchronous"), 2); /* FULL */
	ck_assert_int_eq(pragma(db, "PRAGMA foreign_keys"), 1);
	ck_assert_int_eq(pragma(db, "PRAGMA application_id"),
			 DB_APPLICATION_ID);
	ck_assert_int_eq(pragma(db, "PRAGMA busy_timeout"), DB_BUSY_TIMEOUT_MS);
	ck_assert_int_eq(db_set_sync(db, DB_SYNC_NORMAL), 0);
	ck_assert_int_eq(pragma(db, "PRAGMA synchronous"), 1);
	ck_assert_str_eq(db_sync_name(db->sync), "normal");
	ck_assert_int_eq(db_checkpoint(db, false), 0);
	ck_assert_int_eq(db_checkpoint(db, true), 0);
	db_close(db);

	/* NORMAL asked at open; a custom busy timeout. */
	db = open_ok(dir, &(struct db_options){.sync = DB_SYNC_NORMAL,
					       .busy_timeout_ms = 1234});
	ck_assert_int_eq(pragma(db, "PRAGMA synchronous"), 1);
	ck_assert_int_eq(pragma(db, "PRAGMA busy_timeout"), 1234);
	db_close(db);
	ck_assert_int_eq(db_sync_parse("full"), DB_SYNC_FULL);
	ck_assert_int_eq(db_sync_parse("normal"), DB_SYNC_NORMAL);
	ck_assert_int_eq(db_sync_parse("off"), -1);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(writes_use_begin_immediate)
{
	char *dir = tmpdir_new();
	struct db *db = open_ok(dir, &defaults);
	sqlite3 *raw = raw_open(dir);

	/* A writer of ours takes the write lock at BEGIN, so another
	 * connection cannot start writing until it ends. */
	ck_assert_int_eq(db_begin(db), 0);
	sqlite3_busy_timeout(raw, 0);
	ck_assert_int_eq(sqlite3_exec(raw, "BEGIN IMMEDIATE", NULL, NULL, NULL),
			 SQLITE_BUSY);
	db_rollback(db);
	raw_exec(raw, "BEGIN IMMEDIATE; ROLLBACK");
	/* And our BEGIN waits, then reports -EBUSY, when another holds it. */
	db_close(db);
	db = open_ok(dir, &(struct db_options){.busy_timeout_ms = 50});
	raw_exec(raw, "BEGIN IMMEDIATE");
	ck_assert_int_eq(db_begin(db), -EBUSY);
	ck_assert_ptr_nonnull(strstr(db_errmsg(db), "beginning a transaction"));
	raw_exec(raw, "ROLLBACK");
	sqlite3_close(raw);
	db_close(db);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(reopen_keeps_data)
{
	char *dir = tmpdir_new();
	char sha[SHA256_HEX_SIZE];
	struct db *db = open_ok(dir, &defaults);
	struct component_info info;
	bool created;

	ck_assert_int_eq(components_add(db, "\0asm", 4, "tiny", sha, &created),
			 0);
	ck_assert(created);
	db_close(db);
	db = open_ok(dir, &defaults);
	ck_assert_int_eq(components_get(db, "tiny", &info, NULL, NULL), 0);
	ck_assert_str_eq(info.sha256, sha);
	component_info_clear(&info);
	db_close(db);
	tmpdir_remove(dir);
}
END_TEST

/* ---- migrations ------------------------------------------------------------
 */

START_TEST(migrate_from_empty_through_each_version)
{
	for (int v = 1; v <= SCHEMA_VERSION; v++) {
		char *dir = tmpdir_new();
		struct db *db;
		int version;

		db = open_ok(dir, &(struct db_options){.schema_version = v});
		ck_assert_int_eq(schema_version(db, &version), 0);
		ck_assert_int_eq(version, v);
		db_close(db);
		/* From version v to the latest. */
		db = open_ok(dir, &defaults);
		ck_assert_int_eq(schema_version(db, &version), 0);
		ck_assert_int_eq(version, SCHEMA_VERSION);
		db_close(db);
		tmpdir_remove(dir);
	}
}
END_TEST

START_TEST(migrate_v1_data_to_current)
{
	char *dir = tmpdir_new();
	struct db *db = open_ok(dir, &(struct db_options){.schema_version = 1});
	struct history *h;
	struct history_batch *b;
	uint64_t open_calls;
	sqlite3 *raw;

	db_close(db);
	/* Data as version 1 allowed it: c3 ended twice. */
	raw = raw_open(dir);
	raw_exec(
		raw,
		"INSERT INTO components VALUES ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', x'00', 1, 1, 'c');"
		"INSERT INTO services (name, component, created, updated) "
		"VALUES ('s', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		"aaaaaaaaaaaaaaaa', 1, 1);"
		"INSERT INTO events (time, service, call, kind) VALUES"
		" (1, 's', 'c1', 'call.started'),"
		" (2, 's', 'c1', 'call.returned'),"
		" (3, 's', 'c2', 'call.started'),"
		" (4, 's', 'c3', 'call.started'),"
		" (5, 's', 'c3', 'call.trapped'),"
		" (6, 's', 'c3', 'call.returned'),"
		" (7, NULL, NULL, 'daemon.started');");
	sqlite3_close(raw);

	db = open_ok(dir, &defaults);
	ck_assert_int_eq(pragma(db, "PRAGMA user_version"), SCHEMA_VERSION);
	ck_assert_int_eq(pragma(db, "SELECT count(DISTINCT call) FROM events "
				    "WHERE kind GLOB 'call.*'"),
			 3);
	ck_assert_int_eq(pragma(db, "SELECT seq FROM events WHERE call = "
				    "'c1' AND kind = 'call.returned'"),
			 2);
	ck_assert_int_eq(pragma(db, "SELECT count(*) FROM events WHERE call = "
				    "'c2'"),
			 1);
	/* The first terminal event counts: the second did not survive. */
	ck_assert_int_eq(pragma(db, "SELECT count(*) FROM events WHERE call = "
				    "'c3' AND kind <> 'call.started'"),
			 1);
	ck_assert_int_eq(pragma(db, "SELECT seq FROM events WHERE call = "
				    "'c3' AND kind = 'call.trapped'"),
			 5);
	/* Sequence numbers go on where they were: the newest is there, so
	 * no history.migrated is needed. */
	ck_assert_int_eq(pragma(db, "SELECT max(seq) FROM events"), 7);
	ck_assert_int_eq(pragma(db, "SELECT count(*) FROM events WHERE "
				    "kind = 'history.migrated'"),
			 0);
	/* The retention columns exist, empty. */
	ck_assert_int_eq(pragma(db, "SELECT keep_events IS NULL AND keep_age "
				    "IS NULL FROM services"),
			 1);
	/* The rule now holds for the migrated calls. */
	ck_assert_int_eq(history_open(db, &h), 0);
	ck_assert_int_eq(history_open_calls(h, &open_calls), 0);
	ck_assert_uint_eq(open_calls, 1);
	ck_assert_uint_eq(history_last_seq(h), 7);
	b = history_batch_new(h);
	ck_assert_int_eq(history_add_call_ended(b, "s", "c1",
						HISTORY_CALL_RETURNED, NULL,
						NULL, NULL),
			 0);
	ck_assert_int_eq(history_commit(h, b), 0);
	ck_assert_uint_eq(history_last_seq(h), 7); /* refused */
	ck_assert_int_eq(history_recover_interrupted(h, "test"), 1);
	history_batch_free(b);
	history_free(h);
	db_close(db);
	tmpdir_remove(dir);
}
END_TEST

/*
 * Version 6 drops AUTOINCREMENT: a version 5 history whose newest events
 * were pruned (the sequence above the largest seq) gets one
 * history.migrated event past the sequence, and numbers go on from it.
 */
START_TEST(migrate_v5_pruned_newest_keeps_the_sequence)
{
	char *dir = tmpdir_new();
	struct db *db = open_ok(dir, &(struct db_options){.schema_version = 5});
	struct history *h;
	struct history_batch *b;
	sqlite3 *raw;

	db_close(db);
	raw = raw_open(dir);
	raw_exec(raw, "INSERT INTO events (time, kind) VALUES"
		      " (1, 'daemon.started'), (2, 'daemon.tick'),"
		      " (3, 'daemon.tick'), (4, 'daemon.stopped');"
		      "DELETE FROM events WHERE seq >= 3;");
	sqlite3_close(raw);

	db = open_ok(dir, &defaults);
	ck_assert_int_eq(pragma(db, "PRAGMA user_version"), SCHEMA_VERSION);
	ck_assert_int_eq(pragma(db, "SELECT count(*) FROM events"), 3);
	ck_assert_int_eq(pragma(db,
				"SELECT seq FROM events WHERE kind = "
				"'history.migrated' AND service IS NULL "
				"AND json_extract(payload, '$.schema') = 6 "
				"AND json_extract(payload, '$.sequence') = 4 "
				"AND time > 0"),
			 5);
	ck_assert_int_eq(pragma(db, "SELECT count(*) FROM sqlite_sequence "
				    "WHERE name = 'events'"),
			 0);
	ck_assert_int_eq(history_open(db, &h), 0);
	ck_assert_uint_eq(history_last_seq(h), 5);
	b = history_batch_new(h);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(
		history_batch_add(
			b, &(struct history_record){.kind = "daemon.started"},
			NULL, NULL),
		0);
	ck_assert_int_eq(history_commit(h, b), 0);
	ck_assert_uint_eq(history_last_seq(h), 6);
	history_batch_free(b);
	history_free(h);
	db_close(db);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(failed_migration_keeps_old_version)
{
	char *dir = tmpdir_new();
	struct db *db = open_ok(dir, &(struct db_options){.schema_version = 1});
	char err[256] = "";
	sqlite3 *raw;
	int rc;

	db_close(db);
	/* Something in the way of version 2: its calls table. */
	raw = raw_open(dir);
	raw_exec(raw, "CREATE TABLE calls (x)");
	sqlite3_close(raw);
	rc = db_open(dir, &defaults, &db, err, sizeof(err));
	ck_assert_int_lt(rc, 0);
	ck_assert_ptr_null(db);
	ck_assert_msg(strstr(err, "migration to schema version 2"), "%s", err);
	ck_assert_msg(strstr(err, "calls"), "%s", err);
	/* Nothing of step 2 stayed: still version 1, no v2 index. */
	raw = raw_open(dir);
	ck_assert_int_eq(raw_int(raw, "PRAGMA user_version"), 1);
	ck_assert_int_eq(raw_int(raw, "SELECT count(*) FROM sqlite_master "
				      "WHERE name = 'calls_open'"),
			 0);
	ck_assert_int_eq(raw_int(raw, "SELECT count(*) FROM pragma_table_info("
				      "'services') WHERE name = 'keep_age'"),
			 0);
	sqlite3_close(raw);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(refuses_newer_database)
{
	char *dir = tmpdir_new();
	struct db *db = open_ok(dir, &defaults);
	char err[256] = "", sql[64];
	sqlite3 *raw;
	int rc;

	db_close(db);
	raw = raw_open(dir);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		 SCHEMA_VERSION + 1);
	raw_exec(raw, sql);
	sqlite3_close(raw);
	rc = db_open(dir, &defaults, &db, err, sizeof(err));
	ck_assert_int_eq(rc, -EPROTONOSUPPORT);
	ck_assert_ptr_null(db);
	ck_assert_msg(strstr(err, "newer than this hostel understands"), "%s",
		      err);
	ck_assert_msg(strstr(err, DB_FILE_NAME), "%s", err);
	/* Untouched. */
	raw = raw_open(dir);
	ck_assert_int_eq(raw_int(raw, "PRAGMA user_version"),
			 SCHEMA_VERSION + 1);
	sqlite3_close(raw);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(refuses_foreign_database)
{
	char *dir = tmpdir_new();
	char err[256] = "";
	struct db *db;
	sqlite3 *raw = raw_open(dir);

	raw_exec(raw, "CREATE TABLE accounts (id INTEGER)");
	sqlite3_close(raw);
	ck_assert_int_eq(db_open(dir, &defaults, &db, err, sizeof(err)),
			 -EUCLEAN);
	ck_assert_msg(strstr(err, "not a hostel database"), "%s", err);
	raw = raw_open(dir);
	raw_exec(raw, "DROP TABLE accounts; PRAGMA application_id = 42");
	sqlite3_close(raw);
	ck_assert_int_eq(db_open(dir, &defaults, &db, err, sizeof(err)),
			 -EUCLEAN);
	ck_assert_msg(strstr(err, "application_id 0x2a"), "%s", err);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(refuses_corrupt_file)
{
	char *dir = tmpdir_new();
	char *path = path_in(dir, DB_FILE_NAME);
	char junk[8192], back[8192], err[320] = "";
	struct db *db;
	FILE *f;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 13 + 5);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	fclose(f);
	ck_assert_int_eq(db_open(dir, &defaults, &db, err, sizeof(err)),
			 -EUCLEAN);
	ck_assert_ptr_null(db);
	ck_assert_msg(strstr(err, "not an SQLite database or is corrupt"), "%s",
		      err);
	ck_assert_msg(strstr(err, path), "%s", err);
	/* The file is left as it was, for a post-mortem. */
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(back, 1, sizeof(back), f), sizeof(back));
	fclose(f);
	ck_assert_mem_eq(junk, back, sizeof(junk));
	free(path);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(unusable_directories)
{
	char *dir = tmpdir_new();
	char *missing = path_in(dir, "missing");
	char *file = path_in(dir, "file");
	char err[320] = "";
	struct db *db;
	FILE *f;

	ck_assert_int_eq(db_open(missing, &defaults, &db, err, sizeof(err)),
			 -ENOENT);
	ck_assert_msg(strstr(err, "state directory") && strstr(err, missing),
		      "%s", err);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(db_open(file, &defaults, &db, err, sizeof(err)),
			 -ENOTDIR);
	/* A directory nobody may create files in, not even root. */
	ck_assert_int_lt(
		db_open("/proc/self", &defaults, &db, err, sizeof(err)), 0);
	ck_assert_ptr_null(db);
	ck_assert_msg(strstr(err, "/proc/self/"), "%s", err);
	ck_assert_int_lt(db_open("/proc/self",
				 &(struct db_options){.lock_wait_ms = -1}, &db,
				 err, sizeof(err)),
			 0);
	ck_assert_msg(strstr(err, "cannot open /proc/self/hostel.db"), "%s",
		      err);
	ck_assert_msg(strstr(err, "writable"), "%s", err);
	if (geteuid() != 0) {
		/* Plain permissions only stop non-root users. */
		ck_assert_int_eq(chmod(dir, 0500), 0);
		ck_assert_int_eq(db_open(dir, &defaults, &db, err, sizeof(err)),
				 -EACCES);
		ck_assert_int_eq(chmod(dir, 0700), 0);
	}
	free(missing);
	free(file);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(one_daemon_per_state_directory)
{
	char *dir = tmpdir_new();
	struct db *a = open_ok(dir, &defaults), *b;
	char err[320] = "", want[64];
	int ready[2], rc;
	struct timespec t0, t1;
	pid_t child;
	char byte;

	rc = db_open(dir, &(struct db_options){.lock_wait_ms = 100}, &b, err,
		     sizeof(err));
	ck_assert_int_eq(rc, -EBUSY);
	snprintf(want, sizeof(want), "in use by another hosteld (pid %ld)",
		 (long)getpid());
	ck_assert_msg(strstr(err, want), "%s", err);
	/* Without a lock (a second reader), opening works. */
	b = open_ok(dir, &(struct db_options){.lock_wait_ms = -1});
	db_close(b);
	db_close(a);

	/* A holder that lets go within the wait is waited for. */
	ck_assert_int_eq(pipe(ready), 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct db *held;

		close(ready[0]);
		if (db_open(dir, &defaults, &held, err, sizeof(err)))
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		usleep(300 * 1000);
		_exit(0); /* exiting releases the lock */
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &byte, 1), 1);
	close(ready[0]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	b = open_ok(dir, &(struct db_options){.lock_wait_ms = 5000});
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_ge((t1.tv_sec - t0.tv_sec) * 1000 +
				 (t1.tv_nsec - t0.tv_nsec) / 1000000,
			 100);
	db_close(b);
	ck_assert_int_eq(waitpid(child, &rc, 0), child);
	ck_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(errno_mapping)
{
	ck_assert_int_eq(db_errno(SQLITE_OK), 0);
	ck_assert_int_eq(db_errno(SQLITE_DONE), 0);
	ck_assert_int_eq(db_errno(SQLITE_FULL), -ENOSPC);
	ck_assert_int_eq(db_errno(SQLITE_IOERR_FSYNC), -EIO);
	ck_assert_int_eq(db_errno(SQLITE_BUSY_SNAPSHOT), -EBUSY);
	ck_assert_int_eq(db_errno(SQLITE_NOTADB), -EUCLEAN);
	ck_assert_int_eq(db_errno(SQLITE_CORRUPT), -EUCLEAN);
	ck_assert_int_eq(db_errno(SQLITE_READONLY), -EROFS);
	ck_assert_int_eq(db_errno(SQLITE_CONSTRAINT_CHECK), -EINVAL);
	ck_assert_int_eq(db_errno(SQLITE_TOOBIG), -EFBIG);
	ck_assert_int_eq(db_errno(SQLITE_NOMEM), -ENOMEM);
}
END_TEST

/* ---- components -------------------------------------------------------------
 */

static int count_cb(void *arg, const struct component_info *info)
{
	(*(int *)arg)++;
	ck_assert(sha256_hex_valid(info->sha256));
	return 0;
}

START_TEST(components_content_addressed)
{
	char *dir = tmpdir_new();
	struct db *db = open_ok(dir, &defaults);
	char sha1[SHA256_HEX_SIZE], sha2[SHA256_HEX_SIZE],
		want[SHA256_HEX_SIZE];
	struct component_info info;
	bool created;
	void *blob;
	size_t len;
	int n = 0;

	sha256_hex("component one", 13, want);
	ck_assert_int_eq(
		components_add(db, "component one", 13, NULL, sha1, &created),
		0);
	ck_assert(created);
	ck_assert_str_eq(sha1, want);
	/* Same bytes: same address, nothing new; a name is attached. */
	ck_assert_int_eq(
		components_add(db, "component one", 13, "one", sha2, &created),
		0);
	ck_assert(!created);
	ck_assert_str_eq(sha1, sha2);
	ck_assert_int_eq(
		components_add(db, "component one", 13, "one", sha2, &created),
		0);
	/* A second name for it, or its name for other bytes: refused. */
	ck_assert_int_eq(
		components_add(db, "component one", 13, "uno", sha2, &created),
		-EEXIST);
	ck_assert_msg(strstr(db_errmsg(db), "already named 'one'"), "%s",
		      db_errmsg(db));
	ck_assert_int_eq(
		components_add(db, "component two", 13, "one", sha2, &created),
		-EEXIST);
	ck_assert(!created);
	ck_assert_int_eq(components_add(db, "", 0, NULL, sha2, &created),
			 -EINVAL);
	ck_assert_int_eq(components_add(db, "x", 1, "bad name", sha2, &created),
			 -EINVAL);
	ck_assert_int_eq(
		components_add(db, "component two", 13, "two", sha2, &created),
		0);
	ck_assert(created);

	/* By sha256 and by name, with and without the bytes. */
	ck_assert_int_eq(components_get(db, sha1, &info, &blob, &len), 0);
	ck_assert_str_eq(info.name, "one");
	ck_assert_uint_eq(info.size, 13);
	ck_assert_int_gt(info.added, 0);
	ck_assert_uint_eq(len, 13);
	ck_assert_mem_eq(blob, "component one", 13);
	free(blob);
	component_info_clear(&info);
	ck_assert_int_eq(components_get(db, "two", &info, NULL, NULL), 0);
	ck_assert_str_eq(info.sha256, sha2);
	component_info_clear(&info);
	ck_assert_int_eq(components_get(db, "three", &info, NULL, NULL),
			 -ENOENT);
	ck_assert_int_eq(components_list(db, count_cb, &n), 0);
	ck_assert_int_eq(n, 2);

	ck_assert_int_eq(components_remove(db, "two"), 0);
	ck_assert_int_eq(components_remove(db, "two"), -ENOENT);
	ck_assert_int_eq(components_remove(db, sha1), 0);
	n = 0;
	ck_assert_int_eq(components_list(db, count_cb, &n), 0);
	ck_assert_int_eq(n, 0);
	db_close(db);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(components_disk_full)
{
	char *dir = tmpdir_new();
	struct db *db = open_ok(dir, &defaults);
	char sha[SHA256_HEX_SIZE];
	size_t big = 2u << 20;
	char *blob = malloc(big);
	bool created = true;

	ck_assert_ptr_nonnull(blob);
	memset(blob, 'w', big);
	ck_assert_int_eq(db_exec(db, "PRAGMA max_page_count = 64"), 0);
	ck_assert_int_eq(components_add(db, blob, big, "big", sha, &created),
			 -ENOSPC);
	ck_assert(!created);
	ck_assert_msg(strstr(db_errmsg(db), "full"), "%s", db_errmsg(db));
	ck_assert_int_eq(components_get(db, "big", NULL, NULL, NULL), -ENOENT);
	/* Room again: the same add works. */
	ck_assert_int_eq(db_exec(db, "PRAGMA max_page_count = 1073741823"), 0);
	ck_assert_int_eq(components_add(db, blob, big, "big", sha, &created),
			 0);
	ck_assert(created);
	free(blob);
	db_close(db);
	tmpdir_remove(dir);
}
END_TEST

/* ---- services
 * ---------------------------------------------------------------- */

struct names {
	char list[256];
};

static int name_cb(void *arg, const struct service_record *rec)
{
	struct names *n = arg;
	size_t len = strlen(n->list);

	snprintf(n->list + len, sizeof(n->list) - len, "%s%s", len ? "," : "",
		 rec->name);
	return 0;
}

static int stop_cb(void *arg, const struct service_record *rec)
{
	(*(int *)arg)++;
	return 7;
}

START_TEST(services_crud)
{
	char *dir = tmpdir_new();
	struct db *db = open_ok(dir, &defaults);
	char sha[SHA256_HEX_SIZE], other[SHA256_HEX_SIZE];
	struct service_record rec = {0}, got;
	struct names names = {""};
	bool created;
	int calls = 0;

	ck_assert_int_eq(components_add(db, "wasm", 4, "c", sha, &created), 0);
	ck_assert_int_eq(components_add(db, "wasm2", 5, NULL, other, &created),
			 0);
	rec.name = "ticker";
	snprintf(rec.component, sizeof(rec.component), "%s", sha);
	rec.config = "{\"env\":{\"A\":\"1\"},\"args\":[\"x\"],\"preopens\":[],"
		     "\"limits\":{\"memory\":65536}}";
	rec.autostart = true;
	rec.keep_events = 100;
	rec.keep_age = -1;
	ck_assert_int_eq(services_create(db, &rec), 0);
	ck_assert_int_eq(services_create(db, &rec), -EEXIST);

	ck_assert_int_eq(services_get(db, "ticker", &got), 0);
	ck_assert_str_eq(got.component, sha);
	ck_assert_str_eq(got.config, rec.config);
	ck_assert(got.autostart);
	ck_assert_int_eq(got.state, SERVICE_STOPPED);
	ck_assert_int_gt(got.created, 0);
	ck_assert_int_eq(got.created, got.updated);
	ck_assert_int_eq(got.keep_events, 100);
	ck_assert_int_eq(got.keep_age, -1);
	service_record_clear(&got);

	/* Rules: names, the component, the config's shape. */
	rec.name = "-bad";
	ck_assert_int_eq(services_create(db, &rec), -EINVAL);
	rec.name = "other";
	rec.config = "{\"args\":\"not an array\"}";
	ck_assert_int_eq(services_create(db, &rec), -EINVAL);
	ck_assert_msg(strstr(db_errmsg(db), "documented shape"), "%s",
		      db_errmsg(db));
	rec.config = "[1]";
	ck_assert_int_eq(services_create(db, &rec), -EINVAL);
	rec.config = NULL; /* "{}" */
	memset(rec.component, 'b', 64);
	ck_assert_int_eq(services_create(db, &rec), -ENOENT);
	snprintf(rec.component, sizeof(rec.component), "%s", other);
	rec.autostart = false;
	rec.keep_events = -1;
	ck_assert_int_eq(services_create(db, &rec), 0);

	ck_assert_int_eq(services_list(db, false, name_cb, &names), 0);
	ck_assert_str_eq(names.list, "other,ticker");
	names.list[0] = '\0';
	ck_assert_int_eq(services_list(db, true, name_cb, &names), 0);
	ck_assert_str_eq(names.list, "ticker");
	ck_assert_int_eq(services_list(db, false, stop_cb, &calls), 7);
	ck_assert_int_eq(calls, 1);

	/* Update and state. */
	rec.autostart = true;
	rec.state = SERVICE_RUNNING;
	rec.keep_age = 3600;
	ck_assert_int_eq(services_update(db, &rec), 0);
	ck_assert_int_eq(services_get(db, "other", &got), 0);
	ck_assert(got.autostart);
	ck_assert_int_eq(got.state, SERVICE_RUNNING);
	ck_assert_int_eq(got.keep_age, 3600);
	ck_assert_int_ge(got.updated, got.created);
	service_record_clear(&got);
	ck_assert_int_eq(services_set_state(db, "other", SERVICE_POISONED), 0);
	ck_assert_int_eq(services_get(db, "other", &got), 0);
	ck_assert_str_eq(service_state_name(got.state), "poisoned");
	service_record_clear(&got);
	ck_assert_int_eq(services_set_state(db, "nope", SERVICE_RUNNING),
			 -ENOENT);
	rec.name = "nope";
	ck_assert_int_eq(services_update(db, &rec), -ENOENT);

	/* A component in use cannot go; the error names the user. */
	ck_assert_int_eq(components_remove(db, "c"), -EBUSY);
	ck_assert_msg(strstr(db_errmsg(db), "service 'ticker'"), "%s",
		      db_errmsg(db));
	ck_assert_int_eq(services_remove(db, "ticker"), 0);
	ck_assert_int_eq(services_remove(db, "ticker"), -ENOENT);
	ck_assert_int_eq(services_get(db, "ticker", &got), -ENOENT);
	ck_assert_int_eq(components_remove(db, "c"), 0);
	ck_assert_int_eq(service_state_parse("running"), SERVICE_RUNNING);
	ck_assert_int_eq(service_state_parse("zombie"), -1);
	db_close(db);
	tmpdir_remove(dir);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("store-db");
	TCase *open = tcase_create("open");
	TCase *mig = tcase_create("migrations");
	TCase *tables = tcase_create("tables");

	tcase_set_timeout(open, 30);
	tcase_add_test(open, fresh_database_settings);
	tcase_add_test(open, writes_use_begin_immediate);
	tcase_add_test(open, reopen_keeps_data);
	tcase_add_test(open, refuses_foreign_database);
	tcase_add_test(open, refuses_corrupt_file);
	tcase_add_test(open, unusable_directories);
	tcase_add_test(open, one_daemon_per_state_directory);
	tcase_add_test(open, errno_mapping);
	tcase_add_test(mig, migrate_from_empty_through_each_version);
	tcase_add_test(mig, migrate_v1_data_to_current);
	tcase_add_test(mig, migrate_v5_pruned_newest_keeps_the_sequence);
	tcase_add_test(mig, failed_migration_keeps_old_version);
	tcase_add_test(mig, refuses_newer_database);
	tcase_set_timeout(tables, 30);
	tcase_add_test(tables, components_content_addressed);
	tcase_add_test(tables, components_disk_full);
	tcase_add_test(tables, services_crud);
	suite_add_tcase(s, open);
	suite_add_tcase(s, mig);
	suite_add_tcase(s, tables);
	return s;
}
