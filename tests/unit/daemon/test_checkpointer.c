/*
 * test_checkpointer.c - WAL checkpoints off the commit path
 * (daemon/checkpointer.h): the thread runs when a commit takes the WAL
 * past CHECKPOINTER_FRAMES or when asked; a connection watched without
 * may_inline never checkpoints in its commits; one watched with it
 * finishes what the thread copied, so that under commits that never
 * pause the WAL still starts over long before the inline bound; an
 * unwatched connection is SQLite's own again.
 */
#include "store-testutil.h"

#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <time.h>

#include "daemon/checkpointer.h"
#include "store/db.h"
#include "testmain.h"

#define FRAME_BYTES (4096 + 24)

struct env {
	char *dir, *wal;
	struct db *db;
	struct checkpointer *c;
	long long wal_max; /* the largest WAL file seen, in bytes */
};

static void env_init(struct env *e)
{
	struct db_options opt = {.sync = DB_SYNC_NORMAL, .lock_wait_ms = -1};
	char err[256];

	memset(e, 0, sizeof(*e));
	e->dir = tmpdir_new();
	e->wal = path_in(e->dir, DB_FILE_NAME "-wal");
	ck_assert_int_eq(db_open(e->dir, &opt, &e->db, err, sizeof(err)), 0);
	ck_assert_int_eq(db_exec(e->db, "CREATE TABLE t (x BLOB)"), 0);
	ck_assert_int_eq(checkpointer_start(e->dir, DB_SYNC_NORMAL, &e->c, err,
					    sizeof(err)),
			 0);
}

static void env_fini(struct env *e)
{
	checkpointer_unwatch(e->c, e->db);
	checkpointer_stop(e->c);
	db_close(e->db);
	tmpdir_remove(e->dir);
	free(e->wal);
}

/*
 * n commits of one row of about a page each, `gap` us apart; watches the
 * WAL's size.
 */
static void paced_commits(struct env *e, int n, int gap)
{
	struct stat sb;

	for (int i = 0; i < n; i++) {
		if (gap)
			usleep(gap);
		ck_assert_int_eq(db_exec(e->db, "INSERT INTO t VALUES "
						"(zeroblob(3000))"),
				 0);
		if (stat(e->wal, &sb) == 0 && sb.st_size > e->wal_max)
			e->wal_max = sb.st_size;
	}
}

static void commits(struct env *e, int n)
{
	paced_commits(e, n, 0);
}

static struct checkpointer_stats stats(struct env *e)
{
	struct checkpointer_stats st;

	checkpointer_get_stats(e->c, &st);
	return st;
}

/* Wait (at most 10 s) until the thread has run `runs` times. */
static void wait_runs(struct env *e, uint64_t runs)
{
	for (int i = 0; i < 10000 && stats(e).runs < runs; i++)
		usleep(1000);
	ck_assert_uint_ge(stats(e).runs, runs);
}

START_TEST(request_runs_the_thread)
{
	struct env e;

	env_init(&e);
	ck_assert_uint_eq(stats(&e).runs, 0);
	commits(&e, 10);
	checkpointer_request(e.c);
	wait_runs(&e, 1);
	ck_assert_uint_eq(stats(&e).inline_runs, 0);
	ck_assert_uint_eq(stats(&e).failures, 0);
	env_fini(&e);
}
END_TEST

START_TEST(loop_connection_only_asks)
{
	struct env e;

	env_init(&e);
	ck_assert_int_eq(checkpointer_watch(e.c, e.db, false), 0);
	/* Below the threshold nothing is asked. */
	commits(&e, 100);
	usleep(20000);
	ck_assert_uint_eq(stats(&e).runs, 0);
	/* Past it the thread runs, and the commits never checkpoint. */
	commits(&e, CHECKPOINTER_FRAMES);
	wait_runs(&e, 1);
	commits(&e, CHECKPOINTER_FRAMES);
	ck_assert_uint_eq(stats(&e).inline_runs, 0);
	ck_assert_uint_eq(stats(&e).failures, 0);
	env_fini(&e);
}
END_TEST

/*
 * Steady commits (100 us apart, so that a run of the thread, syncs
 * included, takes far less than the WAL needs to reach the bound): the
 * thread copies, the next commit past the threshold copies the rest,
 * and the WAL starts over, again and again, long before the inline
 * bound (without the restarts the WAL reaches the bound, some 16 MB:
 * more than twice that is written here).
 */
START_TEST(writer_connection_finishes_the_copy)
{
	struct env e;
	struct checkpointer_stats st;

	env_init(&e);
	ck_assert_int_eq(checkpointer_watch(e.c, e.db, true), 0);
	paced_commits(&e, 6000, 100);
	st = stats(&e);
	ck_assert_uint_ge(st.runs, 1);
	ck_assert_uint_ge(st.inline_runs, 1);
	ck_assert_uint_eq(st.failures, 0);
	ck_assert_msg(e.wal_max <
			      (long long)(CHECKPOINTER_INLINE_FRAMES - 500) *
				      FRAME_BYTES,
		      "the WAL grew to %lld bytes", e.wal_max);
	env_fini(&e);
}
END_TEST

START_TEST(unwatched_is_sqlites_own_again)
{
	struct env e;
	struct checkpointer_stats st;

	env_init(&e);
	ck_assert_int_eq(checkpointer_watch(e.c, e.db, true), 0);
	checkpointer_unwatch(e.c, e.db);
	commits(&e, 3000);
	usleep(20000);
	st = stats(&e);
	ck_assert_uint_eq(st.runs, 0);
	ck_assert_uint_eq(st.inline_runs, 0);
	/* SQLite's automatic checkpoint kept the WAL small. */
	ck_assert_msg(e.wal_max < 2 * CHECKPOINTER_FRAMES * FRAME_BYTES,
		      "the WAL grew to %lld bytes", e.wal_max);
	env_fini(&e);
}
END_TEST

START_TEST(watch_slots_are_bounded)
{
	struct env e;

	env_init(&e);
	ck_assert_int_eq(checkpointer_watch(e.c, e.db, false), 0);
	ck_assert_int_eq(checkpointer_watch(e.c, e.db, false), 0);
	ck_assert_int_eq(checkpointer_watch(e.c, e.db, false), -ENOSPC);
	/* Unwatching frees every slot the connection held. */
	checkpointer_unwatch(e.c, e.db);
	ck_assert_int_eq(checkpointer_watch(e.c, e.db, false), 0);
	env_fini(&e);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("checkpointer");
	TCase *tc = tcase_create("checkpointer");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, request_runs_the_thread);
	tcase_add_test(tc, loop_connection_only_asks);
	tcase_add_test(tc, writer_connection_finishes_the_copy);
	tcase_add_test(tc, unwatched_is_sqlites_own_again);
	tcase_add_test(tc, watch_slots_are_bounded);
	suite_add_tcase(s, tc);
	return s;
}
