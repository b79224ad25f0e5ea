/*
 * test_wal_gather.c - store/wal-gather.h: a commit reaches the WAL in one
 * write at both synchronous levels; another connection sees each commit
 * as soon as it returns and never a part of one in progress; a
 * transaction larger than the buffer writes in steps and stays whole; a
 * failed write fails the commit, loses nothing committed before it, and
 * the next commit works; a WAL that starts over after a checkpoint, and
 * rewritten frames, keep the database intact.
 *
 * Below the gathering VFS this program puts a probe: a VFS made the
 * default before the first wal_gather_vfs() call, so the gathering one
 * wraps it.  The probe counts the writes that reach WAL files and fails
 * them on demand.
 */
#include "store-testutil.h"

#include "config.h"

#include <stdbool.h>

#include "store/db.h"
#include "store/wal-gather.h"
#include "testmain.h"

/* What the probe saw of WAL files, and a fault to inject in them. */
static struct {
	long writes;
	long long bytes;
	int fail_rc; /* not SQLITE_OK: WAL writes return this */
} probe;

static sqlite3_vfs probe_vfs;
static sqlite3_vfs *unix_vfs;
/* The unix VFS's method tables seen so far, each with a copy whose
 * xWrite is the probe's. */
#define PROBE_TABLES 4
static const sqlite3_io_methods *unix_methods[PROBE_TABLES];
static sqlite3_io_methods probe_methods[PROBE_TABLES];

/* What the probe keeps behind the unix file. */
struct probe_tail {
	bool wal;
	const sqlite3_io_methods *unix_methods;
};

static struct probe_tail *tail(sqlite3_file *f)
{
	return (struct probe_tail *)((char *)f + unix_vfs->szOsFile);
}

static int probe_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
	if (tail(f)->wal) {
		if (probe.fail_rc != SQLITE_OK)
			return probe.fail_rc;
		probe.writes++;
		probe.bytes += n;
	}
	return tail(f)->unix_methods->xWrite(f, p, n, off);
}

static int probe_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f,
		      int flags, int *out)
{
	int rc = unix_vfs->xOpen(unix_vfs, name, f, flags, out);
	int i;

	(void)vfs;
	if (!f->pMethods)
		return rc;
	for (i = 0; i < PROBE_TABLES && unix_methods[i] &&
		    unix_methods[i] != f->pMethods;
	     i++)
		;
	ck_assert_int_lt(i, PROBE_TABLES);
	if (!unix_methods[i]) {
		unix_methods[i] = f->pMethods;
		probe_methods[i] = *f->pMethods;
		probe_methods[i].xWrite = probe_write;
	}
	*tail(f) = (struct probe_tail){.wal = (flags & SQLITE_OPEN_WAL) != 0,
				       .unix_methods = f->pMethods};
	f->pMethods = &probe_methods[i];
	return rc;
}

static void probe_install(void)
{
	if (unix_vfs)
		return;
	unix_vfs = sqlite3_vfs_find(NULL);
	ck_assert_ptr_nonnull(unix_vfs);
	probe_vfs = *unix_vfs;
	probe_vfs.zName = "hostel-test-probe";
	probe_vfs.szOsFile =
		unix_vfs->szOsFile + (int)sizeof(struct probe_tail);
	probe_vfs.xOpen = probe_open;
	ck_assert_int_eq(sqlite3_vfs_register(&probe_vfs, 1), SQLITE_OK);
}

static struct db *open_db(const char *dir, enum db_sync sync, bool lock)
{
	struct db_options opt = {.sync = sync, .lock_wait_ms = lock ? 0 : -1};
	struct db *db;
	char err[256] = "";

	probe_install();
	ck_assert_msg(db_open(dir, &opt, &db, err, sizeof(err)) == 0, "%s",
		      err);
	/* The test reads the WAL's size: no checkpoint unless it asks. */
	sqlite3_wal_autocheckpoint(db->sql, 0);
	return db;
}

static long long count_rows(struct db *db)
{
	sqlite3_stmt *st;
	long long n;

	ck_assert_int_eq(db_prepare(db, "SELECT count(*) FROM t", &st), 0);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static void integrity_ok(struct db *db)
{
	sqlite3_stmt *st;

	ck_assert_int_eq(db_prepare(db, "PRAGMA integrity_check", &st), 0);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
}

/* Insert rows of `size` random bytes; the caller holds a transaction. */
static void insert(struct db *db, int rows, int size)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
		 "FROM n WHERE i < %d) INSERT INTO t (b) SELECT "
		 "randomblob(%d) FROM n",
		 rows, size);
	ck_assert_int_eq(db_exec(db, sql), 0);
}

/* One transaction of `rows` rows, committed. */
static void commit_rows(struct db *db, int rows, int size)
{
	ck_assert_int_eq(db_begin(db), 0);
	insert(db, rows, size);
	ck_assert_int_eq(db_commit(db), 0);
}

/* The frames in the WAL, read off its size (4096-byte pages). */
static int wal_frames(struct db *db)
{
	sqlite3_file *wal = NULL;
	sqlite3_int64 size = 0;

	ck_assert_int_eq(sqlite3_file_control(db->sql, "main",
					      SQLITE_FCNTL_JOURNAL_POINTER,
					      &wal),
			 SQLITE_OK);
	ck_assert_ptr_nonnull(wal);
	ck_assert_ptr_nonnull(wal->pMethods);
	ck_assert_int_eq(wal->pMethods->xFileSize(wal, &size), SQLITE_OK);
	return size <= 32 ? 0 : (int)((size - 32) / (24 + 4096));
}

START_TEST(the_connection_uses_the_gathering_vfs)
{
	char *dir = tmpdir_new();
	struct db *db = open_db(dir, DB_SYNC_FULL, true);
	char *name = NULL, *wal = path_in(dir, "hostel.db-wal");
	struct stat st;

	ck_assert_ptr_nonnull(wal_gather_vfs());
	ck_assert_str_eq(wal_gather_vfs(), "hostel-wal-gather");
	ck_assert_int_eq(sqlite3_file_control(db->sql, "main",
					      SQLITE_FCNTL_VFSNAME, &name),
			 SQLITE_OK);
	ck_assert_ptr_nonnull(name);
	ck_assert_msg(!strncmp(name, "hostel-wal-gather/", 18), "%s", name);
	sqlite3_free(name);
	/* The WAL the gathering writes is SQLite's usual one. */
	ck_assert_int_eq(db_exec(db, "CREATE TABLE t (b BLOB)"), 0);
	ck_assert_int_eq(stat(wal, &st), 0);
	ck_assert_int_eq(st.st_size, 32 + wal_frames(db) * (24 + 4096));
	ck_assert_int_gt(wal_frames(db), 0);
	free(wal);
	db_close(db);
	tmpdir_remove(dir);
}
END_TEST

/* _i: 0 synchronous = full, 1 normal. */
START_TEST(a_commit_is_one_write)
{
	char *dir = tmpdir_new();
	struct db *db = open_db(dir, _i ? DB_SYNC_NORMAL : DB_SYNC_FULL, true);

	ck_assert_int_eq(db_exec(db, "CREATE TABLE t (b BLOB)"), 0);
	for (int round = 0; round < 5; round++) {
		long writes = probe.writes;
		long long bytes = probe.bytes;
		int frames = wal_frames(db), grown;

		commit_rows(db, 20, 1000 + 500 * round); /* 5 to 15 pages */
		grown = wal_frames(db) - frames;
		ck_assert_int_ge(grown, 5);
		ck_assert_int_eq(probe.writes - writes, 1);
		/* Every frame, and the WAL's header the first time. */
		ck_assert_int_eq(probe.bytes - bytes,
				 (long long)grown * (24 + 4096) +
					 (frames == 0 ? 32 : 0));
	}
	ck_assert_int_eq(count_rows(db), 100);
	integrity_ok(db);
	db_close(db);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(another_connection_sees_each_commit_whole)
{
	char *dir = tmpdir_new();
	struct db *w = open_db(dir, DB_SYNC_NORMAL, true);
	struct db *r = open_db(dir, DB_SYNC_NORMAL, false);

	ck_assert_int_eq(db_exec(w, "CREATE TABLE t (b BLOB)"), 0);
	for (int i = 1; i <= 50; i++) {
		ck_assert_int_eq(db_begin(w), 0);
		insert(w, i, 300);
		/* In progress: the reader sees the last commit only. */
		ck_assert_int_eq(count_rows(r), (long long)(i - 1) * i / 2);
		ck_assert_int_eq(db_commit(w), 0);
		ck_assert_int_eq(count_rows(r), (long long)i * (i + 1) / 2);
	}
	integrity_ok(r);
	db_close(r);
	db_close(w);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(a_transaction_larger_than_the_buffer)
{
	char *dir = tmpdir_new();
	struct db *w = open_db(dir, DB_SYNC_FULL, true);
	struct db *r = open_db(dir, DB_SYNC_FULL, false);
	long writes;
	long long bytes;
	int frames;

	ck_assert_int_eq(db_exec(w, "CREATE TABLE t (b BLOB)"), 0);
	writes = probe.writes;
	bytes = probe.bytes;
	frames = wal_frames(w);
	commit_rows(w, 400, 3000); /* some 1.3 MB of pages */
	ck_assert_int_ge(probe.bytes - bytes, 4 * WAL_GATHER_MAX);
	/* Steps of the buffer's size, not a write a frame. */
	ck_assert_int_le(probe.writes - writes,
			 (probe.bytes - bytes) / WAL_GATHER_MAX + 2);
	ck_assert_int_gt(wal_frames(w) - frames, 300);
	ck_assert_int_eq(count_rows(r), 400);
	integrity_ok(r);
	db_close(r);
	db_close(w);
	tmpdir_remove(dir);
}
END_TEST

/* _i: 0 synchronous = full, 1 normal. */
START_TEST(a_failed_write_fails_the_commit)
{
	char *dir = tmpdir_new();
	enum db_sync sync = _i ? DB_SYNC_NORMAL : DB_SYNC_FULL;
	struct db *w = open_db(dir, sync, true);
	struct db *r = open_db(dir, sync, false);
	int rc;

	ck_assert_int_eq(db_exec(w, "CREATE TABLE t (b BLOB)"), 0);
	commit_rows(w, 10, 500);

	probe.fail_rc = SQLITE_FULL;
	rc = db_begin(w);
	if (rc == 0) {
		insert(w, 10, 500);
		rc = db_commit(w);
	}
	ck_assert_int_ne(rc, 0);
	db_rollback(w);
	probe.fail_rc = SQLITE_OK;
	ck_assert_int_eq(count_rows(r), 10);
	ck_assert_int_eq(count_rows(w), 10);

	/* The disk "recovers": the next commit works. */
	commit_rows(w, 5, 500);
	ck_assert_int_eq(count_rows(r), 15);
	integrity_ok(r);
	db_close(r);
	db_close(w);
	/* Reopened, recovery from the WAL finds the same. */
	w = open_db(dir, sync, true);
	ck_assert_int_eq(count_rows(w), 15);
	integrity_ok(w);
	db_close(w);
	tmpdir_remove(dir);
}
END_TEST

START_TEST(the_wal_starts_over_and_frames_are_rewritten)
{
	char *dir = tmpdir_new();
	struct db *w = open_db(dir, DB_SYNC_NORMAL, true);
	struct db *r = open_db(dir, DB_SYNC_NORMAL, false);
	long long n = 0;

	ck_assert_int_eq(db_exec(w, "CREATE TABLE t (b BLOB, v INTEGER)"), 0);
	for (int round = 0; round < 6; round++) {
		ck_assert_int_eq(db_begin(w), 0);
		insert(w, 30, 200);
		/* The same pages again in one transaction: SQLite rewrites
		 * their frames in place. */
		ck_assert_int_eq(db_exec(w, "UPDATE t SET v = coalesce(v, 0) "
					    "+ 1"),
				 0);
		ck_assert_int_eq(db_exec(w, "UPDATE t SET v = v + 1"), 0);
		ck_assert_int_eq(db_commit(w), 0);
		n += 30;
		ck_assert_int_eq(count_rows(r), n);
		if (round % 2 == 1) {
			/* Copy everything back: the next commit restarts the
			 * WAL from its first frame. */
			ck_assert_int_eq(db_checkpoint(w, true), 0);
			ck_assert_int_eq(wal_frames(w), 0);
		}
	}
	integrity_ok(r);
	db_close(r);
	db_close(w);
	w = open_db(dir, DB_SYNC_NORMAL, true);
	ck_assert_int_eq(count_rows(w), n);
	integrity_ok(w);
	db_close(w);
	tmpdir_remove(dir);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("wal-gather");
	TCase *tc = tcase_create("wal-gather");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, the_connection_uses_the_gathering_vfs);
	tcase_add_loop_test(tc, a_commit_is_one_write, 0, 2);
	tcase_add_test(tc, another_connection_sees_each_commit_whole);
	tcase_add_test(tc, a_transaction_larger_than_the_buffer);
	tcase_add_loop_test(tc, a_failed_write_fails_the_commit, 0, 2);
	tcase_add_test(tc, the_wal_starts_over_and_frames_are_rewritten);
	suite_add_tcase(s, tc);
	return s;
}
