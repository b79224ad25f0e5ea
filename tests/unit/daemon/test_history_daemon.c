/*
 * test_history_daemon.c - the daemon's history (daemon/history-hooks.h,
 * daemon/method-history.c) on a real event loop and a socketpair client:
 * recovery at open, a terminal event's `done` only after its commit and
 * one commit per turn, a commit not held back while a service takes turn
 * after turn, retries of a failing commit, io.hostel.History.Read
 * once and following (backlog pages interleaved with commits: every seq
 * exactly once), a follower that does not read getting
 * io.hostel.History.Lagged while the loop goes on, the final reply when
 * the daemon stops, a held connection answering pipelined calls only
 * after its stream ends, and a host call's oversize values recorded in
 * their bounded form.
 */
#include "store-testutil.h"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <event2/event.h>
#include <event2/util.h>

#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/history-hooks.h"
#include "ipc/varlink.h"
#include "store/db.h"
#include "store/history.h"
#include "store/sha256.h"
#include "testmain.h"

struct env {
	char *dir;
	struct daemon d;
	int client;
	struct varlink_reader rd;
};

static void env_init(struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->dir = tmpdir_new();
	e->client = -1;
	e->d.ready_fd = -1;
	e->d.log.level = LOG_PRIO_WARNING;
	config_init(&e->d.cli);
	config_init(&e->d.file);
	listen_socket_init(&e->d.listen);
	e->d.state_dir = strdup(e->dir);
	e->d.base = event_base_new();
	ck_assert_ptr_nonnull(e->d.base);
	varlink_reader_init(&e->rd, 0);
}

static void env_open(struct env *e)
{
	struct db *db;

	ck_assert_int_eq(daemon_db_open(&e->d, &db), 0);
	ck_assert_int_eq(daemon_history_open(&e->d, db), 0);
}

static void env_fini(struct env *e)
{
	if (e->client >= 0)
		close(e->client);
	varlink_reader_free(&e->rd);
	daemon_fini(&e->d);
	tmpdir_remove(e->dir);
}

static void turn(struct env *e)
{
	event_base_loop(e->d.base, EVLOOP_NONBLOCK);
}

/*
 * A turn, then more until the history has nothing waiting or in flight:
 * commits run on the writer thread, so the turn that hands a batch over
 * ends before the batch is durable.  Bounded (5 s).
 */
static void settle(struct env *e)
{
	struct daemon_history_status st;

	turn(e);
	for (int i = 0; i < 25000; i++) {
		ck_assert_int_eq(daemon_history_status(&e->d, &st), 0);
		if (st.pending_events == 0)
			return;
		usleep(200);
		turn(e);
	}
	ck_abort_msg("the history did not settle in 5 s");
}

static void connect_client(struct env *e)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(evutil_make_socket_nonblocking(sv[0]), 0);
	ck_assert_int_eq(conn_new(&e->d, sv[0]), 0);
	e->client = sv[1];
}

static void client_send(struct env *e, const char *text)
{
	size_t n = strlen(text) + 1; /* with the NUL */

	ck_assert_int_eq(write(e->client, text, n), (ssize_t)n);
}

/* The next message, running the loop meanwhile; NULL after `tries`. */
static json_t *try_recv(struct env *e, int tries)
{
	for (int i = 0; i < tries; i++) {
		const char *msg;
		size_t len, space;
		char buf[65536];
		ssize_t n;

		if (varlink_reader_next(&e->rd, &msg, &len) ==
		    VARLINK_READ_MESSAGE) {
			json_t *j = json_loadb(msg, len, 0, NULL);

			ck_assert_ptr_nonnull(j);
			return j;
		}
		space = varlink_reader_space(&e->rd);
		n = recv(e->client, buf,
			 space < sizeof(buf) ? space : sizeof(buf),
			 MSG_DONTWAIT);
		if (n > 0) {
			ck_assert_int_eq(
				varlink_reader_feed(&e->rd, buf, (size_t)n), 0);
			continue;
		}
		turn(e);
		usleep(500);
	}
	return NULL;
}

static json_t *recv_msg(struct env *e)
{
	json_t *j = try_recv(e, 20000);

	ck_assert_msg(j != NULL, "no message from the daemon");
	return j;
}

static bool continues(json_t *msg)
{
	return json_is_true(json_object_get(msg, "continues"));
}

static json_t *params(json_t *msg)
{
	return json_object_get(msg, "parameters");
}

/* Add each event's seq of a reply to seen[]; returns how many. */
static size_t take_seqs(json_t *msg, uint64_t *seen, size_t *n, size_t max)
{
	json_t *events = json_object_get(params(msg), "events"), *ev;
	size_t i;

	ck_assert(json_is_array(events));
	json_array_foreach(events, i, ev)
	{
		ck_assert_uint_lt(*n, max);
		seen[(*n)++] = (uint64_t)json_integer_value(
			json_object_get(ev, "seq"));
	}
	return json_array_size(events);
}

static long long peek(const char *dir, const char *sql)
{
	char *path = path_in(dir, DB_FILE_NAME);
	sqlite3 *raw;
	sqlite3_stmt *st;
	long long v;

	ck_assert_int_eq(
		sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL),
		SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(raw, sql, -1, &st, NULL),
			 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(raw);
	free(path);
	return v;
}

/* A service.log event carrying `line`, recorded (not yet committed). */
static void log_line(struct env *e, const char *line)
{
	const struct history_hooks *hk = daemon_history_hooks(&e->d);
	json_t *p = json_pack("{ss}", "line", line);

	ck_assert_int_eq(
		hk->event(hk->ctx, "svc", NULL, "service.log", p, NULL, NULL),
		0);
	json_decref(p);
}

static int tick(struct env *e, int i)
{
	const struct history_hooks *hk = daemon_history_hooks(&e->d);
	json_t *p = json_pack("{si}", "i", i);
	int rc = hk->event(hk->ctx, NULL, NULL, "daemon.tick", p, NULL, NULL);

	json_decref(p);
	return rc;
}

/* ---- open and recovery -----------------------------------------------------
 */

START_TEST(open_recovers_and_records_start)
{
	struct env e;
	struct db *db;
	struct history *h;
	struct history_batch *b;
	char err[256];

	env_init(&e);
	/* A previous daemon left a call open. */
	ck_assert_int_eq(
		db_open(e.dir, &(struct db_options){0}, &db, err, sizeof(err)),
		0);
	ck_assert_int_eq(history_open(db, &h), 0);
	b = history_batch_new(h);
	ck_assert_int_eq(history_add_call_started(b, "svc", "c1", "run", "[]",
						  NULL, NULL, NULL),
			 0);
	ck_assert_int_eq(history_commit(h, b), 0);
	history_batch_free(b);
	history_free(h);
	db_close(db);

	env_open(&e);
	ck_assert_int_eq(peek(e.dir, "SELECT count(*) FROM events WHERE kind = "
				     "'call.interrupted' AND call = 'c1'"),
			 1);
	ck_assert_int_eq(peek(e.dir, "SELECT json_extract(payload, "
				     "'$.interrupted') FROM events WHERE kind "
				     "= 'daemon.started'"),
			 1);
	/* daemon.started comes after the recovery, and is durable now. */
	ck_assert_int_eq(peek(e.dir, "SELECT max(seq) FROM events WHERE kind "
				     "= 'daemon.started'"),
			 3);
	/* A second daemon on the same directory is refused (10 s wait
	 * is too long for a test: check the lock from the store). */
	ck_assert_int_eq(db_open(e.dir, &(struct db_options){.lock_wait_ms = 0},
				 &db, err, sizeof(err)),
			 -EBUSY);
	daemon_history_stopping(&e.d);
	daemon_history_close(&e.d);
	ck_assert_ptr_null(daemon_history_store(&e.d));
	ck_assert_int_eq(peek(e.dir, "SELECT kind = 'daemon.stopped' FROM "
				     "events ORDER BY seq DESC LIMIT 1"),
			 1);
	env_fini(&e);
}
END_TEST

/* ---- durability before replies ----------------------------------------------
 */

struct done {
	struct env *e;
	int calls, status;
	uint64_t seq;
	long long visible; /* rows seen by another connection at the time */
};

static void done_cb(void *arg, int status, uint64_t seq)
{
	struct done *o = arg;

	o->calls++;
	o->status = status;
	o->seq = seq;
	o->visible = peek(o->e->dir, "SELECT count(*) FROM events WHERE kind "
				     "= 'call.returned'");
}

START_TEST(done_only_after_commit_one_commit_per_turn)
{
	struct env e;
	struct done o[20], again = {0};
	struct daemon_history_status st0, st1;
	const struct history_hooks *hk;
	struct conn_cred cred = {true, 11, 22, 33};

	env_init(&e);
	env_open(&e);
	hk = daemon_history_hooks(&e.d);
	ck_assert_ptr_nonnull(hk);
	ck_assert_int_eq(daemon_history_status(&e.d, &st0), 0);
	for (int i = 0; i < 20; i++) {
		char call[16];
		json_t *args = json_pack("[i]", i);
		json_t *res = json_pack("{s[i]}", "results", i * 2);

		o[i] = (struct done){.e = &e};
		snprintf(call, sizeof(call), "c%d", i);
		ck_assert_int_eq(hk->call_started(hk->ctx, "svc", call, "run",
						  args, &cred),
				 0);
		ck_assert_int_eq(hk->call_ended(hk->ctx, "svc", call,
						CALL_RETURNED, res, done_cb,
						&o[i]),
				 0);
		json_decref(args);
		json_decref(res);
	}
	/* Nothing is acknowledged, or visible, before the turn ends. */
	ck_assert_int_eq(o[0].calls, 0);
	ck_assert_int_eq(peek(e.dir, "SELECT count(*) FROM events WHERE kind "
				     "= 'call.returned'"),
			 0);
	settle(&e);
	for (int i = 0; i < 20; i++) {
		ck_assert_int_eq(o[i].calls, 1);
		ck_assert_int_eq(o[i].status, 0);
		ck_assert_uint_gt(o[i].seq, 0);
		ck_assert_int_eq(o[i].visible, 20);
	}
	ck_assert_int_eq(daemon_history_status(&e.d, &st1), 0);
	ck_assert_uint_eq(st1.stats.commits, st0.stats.commits + 1);
	ck_assert_uint_eq(st1.stats.max_batch, 40);
	ck_assert_int_eq(peek(e.dir, "SELECT json_extract(payload, "
				     "'$.caller.gid') FROM events WHERE call = "
				     "'c3' AND kind = 'call.started'"),
			 33);
	ck_assert_int_eq(peek(e.dir, "SELECT json_extract(payload, "
				     "'$.results[0]') FROM events WHERE call "
				     "= 'c3' AND kind = 'call.returned'"),
			 6);
	/* A second end of the same call is refused, through done. */
	again.e = &e;
	ck_assert_int_eq(hk->call_ended(hk->ctx, "svc", "c3", CALL_CANCELLED,
					NULL, done_cb, &again),
			 0);
	settle(&e);
	ck_assert_int_eq(again.calls, 1);
	ck_assert_int_eq(again.status, -EALREADY);
	/* Refused at once: no done, an error. */
	ck_assert_int_eq(hk->call_ended(hk->ctx, "svc", NULL, CALL_RETURNED,
					NULL, done_cb, &again),
			 -EINVAL);
	ck_assert_int_eq(again.calls, 1);
	env_fini(&e);
}
END_TEST

/*
 * Group commit: a batch nobody waits on waits while calls are open, for
 * their ends, so that a call's start and end share a commit; an end
 * whose reply waits commits at once, never held for the other calls;
 * an open call holds a batch back at most COMMIT_WAIT_MAX_US (10 ms).
 */
START_TEST(group_commit_holds_starts_never_replies)
{
	struct env e;
	struct done o[3];
	struct daemon_history_status st0, st;
	const struct history_hooks *hk;
	struct timespec t0, t1;
	bool fast;

	env_init(&e);
	env_open(&e);
	hk = daemon_history_hooks(&e.d);
	ck_assert_int_eq(daemon_history_status(&e.d, &st0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 3; i++) {
		char call[8];

		o[i] = (struct done){.e = &e};
		snprintf(call, sizeof(call), "g%d", i);
		ck_assert_int_eq(hk->call_started(hk->ctx, "svc", call, "run",
						  NULL, NULL),
				 0);
	}
	turn(&e);
	turn(&e);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Three calls are open, nobody waits: the batch waits for ends
	 * (when the two turns took less than the bound: not so under
	 * Valgrind). */
	fast = (t1.tv_sec - t0.tv_sec) * 1000000 +
		       (t1.tv_nsec - t0.tv_nsec) / 1000 <
	       5000; /* half of history.c's COMMIT_WAIT_MAX_US */
	if (fast) {
		ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
		ck_assert_uint_eq(st.stats.commits, st0.stats.commits);
		ck_assert_uint_eq(st.pending_events, 3);
	}
	/* One ends and its reply waits: that commits now, with the three
	 * starts, while g1 and g2 are still open. */
	ck_assert_int_eq(hk->call_ended(hk->ctx, "svc", "g0", CALL_RETURNED,
					NULL, done_cb, &o[0]),
			 0);
	/* Handed to the writer on the very next turn: durable without
	 * another turn of the loop (when the writer is idle: it is when
	 * the starts waited, see above). */
	turn(&e);
	for (int i = 0; fast && i < 5000 &&
			peek(e.dir, "SELECT count(*) FROM events "
				    "WHERE call = 'g0'") < 2;
	     i++)
		usleep(1000);
	if (fast)
		ck_assert_int_eq(peek(e.dir, "SELECT count(*) FROM events "
					     "WHERE call = 'g0'"),
				 2);
	settle(&e);
	ck_assert_int_eq(o[0].calls, 1);
	ck_assert_int_eq(o[0].status, 0);
	ck_assert_int_eq(o[1].calls, 0);
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	ck_assert_uint_eq(st.stats.events, st0.stats.events + 4);
	if (fast)
		ck_assert_uint_eq(st.stats.commits, st0.stats.commits + 1);
	ck_assert_int_eq(hk->call_ended(hk->ctx, "svc", "g1", CALL_TRAPPED,
					NULL, done_cb, &o[1]),
			 0);
	ck_assert_int_eq(hk->call_ended(hk->ctx, "svc", "g2", CALL_CANCELLED,
					NULL, done_cb, &o[2]),
			 0);
	/* Both ends came in one turn: one commit. */
	settle(&e);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(o[i].calls, 1);
		ck_assert_int_eq(o[i].status, 0);
	}
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	ck_assert_uint_eq(st.stats.events, st0.stats.events + 6);
	if (fast)
		ck_assert_uint_eq(st.stats.commits, st0.stats.commits + 2);
	/* A call that stays open holds others back 10 ms at most. */
	ck_assert_int_eq(daemon_history_status(&e.d, &st0), 0);
	ck_assert_int_eq(
		hk->call_started(hk->ctx, "svc", "long", "run", NULL, NULL), 0);
	ck_assert_int_eq(tick(&e, 1), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		turn(&e);
		usleep(200);
		ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 5);
	} while (st.pending_events);
	ck_assert_uint_eq(st.stats.commits, st0.stats.commits + 1);
	if (fast)
		ck_assert_int_ge(
			(t1.tv_sec - t0.tv_sec) * 1000000000L +
				(t1.tv_nsec - t0.tv_nsec),
			9000000L); /* the wait, less the clock's slack */
	env_fini(&e);
}
END_TEST

/* The first batch's reply: is the next batch written meanwhile? */
static void next_written_cb(void *arg, int status, uint64_t seq)
{
	struct done *o = arg;

	done_cb(arg, status, seq);
	/* No turn of the loop here: only a batch already handed over can
	 * become durable. */
	for (int i = 0; i < 5000; i++) {
		o->visible = peek(o->e->dir, "SELECT count(*) FROM events "
					     "WHERE call = 'n2'");
		if (o->visible == 2)
			return;
		usleep(1000);
	}
}

/*
 * When a commit ends, the next batch goes to the writer before the
 * ended batch's replies are sent: the writer works while the loop sends
 * them.
 */
START_TEST(next_batch_written_while_replies_go_out)
{
	struct env e;
	struct done first = {0}, second = {0};
	const struct history_hooks *hk;

	env_init(&e);
	env_open(&e);
	first.e = second.e = &e;
	hk = daemon_history_hooks(&e.d);
	ck_assert_int_eq(
		hk->call_started(hk->ctx, "svc", "n1", "run", NULL, NULL), 0);
	ck_assert_int_eq(hk->call_ended(hk->ctx, "svc", "n1", CALL_RETURNED,
					NULL, next_written_cb, &first),
			 0);
	turn(&e); /* n1's batch goes to the writer */
	ck_assert_int_eq(
		hk->call_started(hk->ctx, "svc", "n2", "run", NULL, NULL), 0);
	ck_assert_int_eq(hk->call_ended(hk->ctx, "svc", "n2", CALL_RETURNED,
					NULL, done_cb, &second),
			 0);
	settle(&e);
	ck_assert_int_eq(first.calls, 1);
	ck_assert_int_eq(first.status, 0);
	ck_assert_int_eq(first.visible, 2);
	ck_assert_int_eq(second.calls, 1);
	ck_assert_int_eq(second.status, 0);
	env_fini(&e);
}
END_TEST

/*
 * A service that takes turn after turn (its next turn a zero timeout,
 * like service_request()), each turn ending a call that a reply waits on.
 */
struct busy;
struct busy_call {
	struct busy *b;
	int index, calls, status;
};
struct busy {
	struct env *e;
	struct event *ev;
	int turns, max;
	struct busy_call *call;
	int first_done_at; /* the turn during which call 0's reply came */
};

static void busy_done_cb(void *arg, int status, uint64_t seq)
{
	struct busy_call *c = arg;

	c->calls++;
	c->status = status;
	if (c->index == 0)
		c->b->first_done_at = c->b->turns;
}

static void busy_turn(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval now = {0, 0};
	struct busy *b = arg;
	const struct history_hooks *hk = daemon_history_hooks(&b->e->d);
	struct busy_call *c = &b->call[b->turns];
	char call[16];

	/* The next turn is asked for first, as a store that has more work
	 * asks for it while it runs: its timer is then due before any the
	 * call's end arms. */
	if (b->turns + 1 < b->max && b->first_done_at < 0 &&
	    !event_pending(b->ev, EV_TIMEOUT, NULL))
		evtimer_add(b->ev, &now);
	c->b = b;
	c->index = b->turns;
	snprintf(call, sizeof(call), "b%d", b->turns);
	ck_assert_int_eq(
		hk->call_started(hk->ctx, "svc", call, "run", NULL, NULL), 0);
	ck_assert_int_eq(hk->call_ended(hk->ctx, "svc", call, CALL_RETURNED,
					NULL, busy_done_cb, c),
			 0);
	b->turns++;
	usleep(1000); /* a turn's work: time for the writer to commit */
}

/*
 * The end-of-turn commit is not held back while a service takes turn
 * after turn: libevent drops an event that is due from its queue when
 * it is added again, and each call's end used to add the commit again,
 * so the first reply waited until the service had no more work.  The
 * service here stops when the first reply comes, or after 2,000 turns.
 */
START_TEST(commit_not_held_back_by_busy_turns)
{
	static const struct timeval now = {0, 0};
	struct env e;
	struct busy b = {.max = 2000, .first_done_at = -1};

	b.call = calloc((size_t)b.max, sizeof(*b.call));
	ck_assert_ptr_nonnull(b.call);
	env_init(&e);
	env_open(&e);
	b.e = &e;
	b.ev = evtimer_new(e.d.base, busy_turn, &b);
	ck_assert_ptr_nonnull(b.ev);
	evtimer_add(b.ev, &now);
	while (event_pending(b.ev, EV_TIMEOUT, NULL))
		turn(&e);
	settle(&e);
	ck_assert_int_ge(b.first_done_at, 1);
	ck_assert_int_lt(b.first_done_at, b.max);
	for (int i = 0; i < b.turns; i++) {
		ck_assert_int_eq(b.call[i].calls, 1);
		ck_assert_int_eq(b.call[i].status, 0);
	}
	event_free(b.ev);
	free(b.call);
	env_fini(&e);
}
END_TEST

START_TEST(failing_commit_is_retried)
{
	struct env e;
	struct done o = {0};
	struct daemon_history_status st;
	const struct history_hooks *hk;
	struct db *db;
	char sql[64];

	env_init(&e);
	env_open(&e);
	o.e = &e;
	hk = daemon_history_hooks(&e.d);
	ck_assert_int_eq(
		hk->call_started(hk->ctx, "svc", "c1", "run", NULL, NULL), 0);
	/* An open call: its start commits within the group-commit wait. */
	for (int i = 0; i < 1000; i++) {
		ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
		if (st.pending_events == 0)
			break;
		turn(&e);
		usleep(1000);
	}
	ck_assert_uint_eq(st.pending_events, 0);
	/* The writer's connection (idle now): cap its file where it is. */
	db = daemon_history_writer_db(&e.d);
	ck_assert_ptr_nonnull(db);
	snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
		 peek(e.dir, "PRAGMA page_count"));
	ck_assert_int_eq(db_exec(db, sql), 0);
	for (int i = 0; i < 50; i++) {
		char line[2048];

		memset(line, 'x', sizeof(line) - 1);
		line[sizeof(line) - 1] = '\0';
		log_line(&e, line);
	}
	ck_assert_int_eq(hk->call_ended(hk->ctx, "svc", "c1", CALL_RETURNED,
					NULL, done_cb, &o),
			 0);
	/* The writer fails the batch; the loop learns of it a turn later. */
	for (int i = 0; i < 5000; i++) {
		turn(&e);
		ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
		if (st.failing)
			break;
		usleep(1000);
	}
	ck_assert_int_eq(o.calls, 0);
	ck_assert(st.failing);
	ck_assert_uint_eq(st.pending_events, 51);
	ck_assert_uint_ge(st.stats.failures, 1);
	/* New events join the waiting batch, in order. */
	ck_assert_int_eq(tick(&e, 1), 0);
	turn(&e);
	ck_assert_int_eq(o.calls, 0);
	ck_assert_int_eq(db_exec(db, "PRAGMA max_page_count = 1073741823"), 0);
	for (int i = 0; i < 4000 && o.calls == 0; i++) {
		turn(&e);
		usleep(1000);
	}
	ck_assert_int_eq(o.calls, 1);
	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	ck_assert(!st.failing);
	ck_assert_uint_eq(st.pending_events, 0);
	ck_assert_int_eq(peek(e.dir, "SELECT max(seq) = (SELECT seq FROM "
				     "events WHERE kind = 'daemon.tick') FROM "
				     "events"),
			 1);
	env_fini(&e);
}
END_TEST

/* ---- host calls' values ------------------------------------------------
 */

/* Whether `sql` (one value) is true of the database, as peek reads it. */
static void expect_sql(const char *dir, const char *fmt, const char *arg)
{
	char sql[512];

	snprintf(sql, sizeof(sql), fmt, arg);
	ck_assert_msg(peek(dir, sql) == 1, "not so: %s", sql);
}

/*
 * A host call whose argument (and result) is past HISTORY_VALUE_MAX is
 * still recorded, in the bounded form of store/history.h: oversize,
 * bytes, the sha256 of the whole text and its head; a small one as it
 * is.
 */
START_TEST(hostcall_oversize_values_recorded_bounded)
{
	struct env e;
	const struct history_hooks *hk;
	size_t n = HISTORY_VALUE_MAX + 10, len = n + 2;
	char *big = malloc(n + 1), *text = malloc(len + 1);
	char hex[SHA256_HEX_SIZE], num[32];
	json_t *args, *res;

	ck_assert_ptr_nonnull(big);
	ck_assert_ptr_nonnull(text);
	memset(big, 'x', n);
	big[n] = '\0';
	/* the argument list's JSON text, as the history would write it */
	args = json_pack("[s]", big);
	res = json_string(big);
	ck_assert_ptr_nonnull(args);
	ck_assert_ptr_nonnull(res);
	snprintf(text, len + 1, "\"%s\"", big);
	sha256_hex(text, len, hex);
	env_init(&e);
	env_open(&e);
	hk = daemon_history_hooks(&e.d);
	ck_assert_int_eq(hk->hostcall_started(hk->ctx, "svc", "c1", 1,
					      "wasi:clocks/x#wait", args),
			 0);
	ck_assert_int_eq(hk->hostcall_settled(hk->ctx, "svc", "c1", 1,
					      "returned", res, NULL),
			 0);
	json_decref(res);
	res = json_pack("[i]", 7);
	ck_assert_int_eq(hk->hostcall_started(hk->ctx, "svc", "c1", 2,
					      "wasi:clocks/x#wait", res),
			 0);
	json_decref(res);
	settle(&e);
	ck_assert_int_eq(peek(e.dir, "SELECT count(*) FROM events WHERE "
				     "kind LIKE 'hostcall.%'"),
			 3);
	/* the arguments: [ and the string */
	snprintf(num, sizeof(num), "%zu", len + 2);
	expect_sql(e.dir,
		   "SELECT json_extract(payload, '$.arguments.bytes') = %s "
		   "AND json_extract(payload, '$.arguments.oversize') = 1 "
		   "AND length(json_extract(payload, '$.arguments.head')) "
		   "= 4096 AND json_extract(payload, '$.import') = "
		   "'wasi:clocks/x#wait' FROM events WHERE kind = "
		   "'hostcall.started' AND json_extract(payload, "
		   "'$.hostcall') = 1",
		   num);
	expect_sql(e.dir,
		   "SELECT substr(json_extract(payload, '$.arguments.head'), "
		   "1, 4) = '[\"xx' FROM events WHERE kind = "
		   "'hostcall.started' AND json_extract(payload, "
		   "'$.hostcall') = 1%s",
		   "");
	/* the result: the string alone, its digest that of its text */
	snprintf(num, sizeof(num), "%zu", len);
	expect_sql(e.dir,
		   "SELECT json_extract(payload, '$.result.bytes') = %s AND "
		   "json_extract(payload, '$.outcome') = 'returned' FROM "
		   "events WHERE kind = 'hostcall.settled'",
		   num);
	expect_sql(e.dir,
		   "SELECT json_extract(payload, '$.result.sha256') = '%s' "
		   "FROM events WHERE kind = 'hostcall.settled'",
		   hex);
	ck_assert_int_lt(peek(e.dir, "SELECT max(length(payload)) FROM events"),
			 HISTORY_VALUE_HEAD * 2);
	/* a small value is recorded as it is */
	expect_sql(e.dir,
		   "SELECT json_extract(payload, '$.arguments[0]') = 7 FROM "
		   "events WHERE kind = 'hostcall.started' AND "
		   "json_extract(payload, '$.hostcall') = 2%s",
		   "");
	json_decref(args);
	free(big);
	free(text);
	env_fini(&e);
}
END_TEST

/* ---- io.hostel.History.Read
 * ----------------------------------------------------- */

START_TEST(read_once)
{
	struct env e;
	json_t *m;

	env_init(&e);
	env_open(&e);
	for (int i = 0; i < 30; i++)
		ck_assert_int_eq(tick(&e, i), 0);
	settle(&e);
	connect_client(&e);
	client_send(&e, "{\"method\":\"io.hostel.History.Read\","
			"\"parameters\":{\"since\":5,\"limit\":10,"
			"\"kinds\":[\"daemon.*\"]}}");
	m = recv_msg(&e);
	ck_assert_uint_eq(json_array_size(json_object_get(params(m), "events")),
			  10);
	ck_assert_int_eq(json_integer_value(json_object_get(params(m), "next")),
			 15);
	ck_assert_int_eq(json_integer_value(json_object_get(params(m), "last")),
			 31);
	{
		json_t *ev =
			json_array_get(json_object_get(params(m), "events"), 0);

		ck_assert_int_eq(json_integer_value(json_object_get(ev, "seq")),
				 5);
		ck_assert_str_eq(json_string_value(json_object_get(ev, "kind")),
				 "daemon.tick");
		ck_assert(json_is_null(json_object_get(ev, "service")));
		ck_assert_int_eq(json_integer_value(json_object_get(
					 json_object_get(ev, "payload"), "i")),
				 3);
		/* RFC 3339, nanoseconds, UTC. */
		ck_assert_uint_eq(
			strlen(json_string_value(json_object_get(ev, "time"))),
			30);
	}
	json_decref(m);
	client_send(&e, "{\"method\":\"io.hostel.History.Read\","
			"\"parameters\":{\"kinds\":[\"call.**\"]}}");
	m = recv_msg(&e);
	ck_assert_str_eq(json_string_value(json_object_get(m, "error")),
			 "org.varlink.service.InvalidParameter");
	ck_assert_str_eq(
		json_string_value(json_object_get(params(m), "parameter")),
		"kinds");
	json_decref(m);
	client_send(&e, "{\"method\":\"io.hostel.History.Read\","
			"\"parameters\":{\"limit\":0}}");
	m = recv_msg(&e);
	ck_assert_str_eq(
		json_string_value(json_object_get(params(m), "parameter")),
		"limit");
	json_decref(m);
	client_send(&e, "{\"method\":\"io.hostel.History.Stats\"}");
	m = recv_msg(&e);
	ck_assert_int_eq(
		json_integer_value(json_object_get(params(m), "lastSeq")), 31);
	ck_assert_str_eq(
		json_string_value(json_object_get(params(m), "synchronous")),
		"full");
	json_decref(m);
	env_fini(&e);
}
END_TEST

START_TEST(follow_every_seq_exactly_once)
{
	struct env e;
	uint64_t *seen = calloc(2000, sizeof(*seen));
	size_t n = 0;
	int i, pages = 0, rounds = 0;

	ck_assert_ptr_nonnull(seen);
	env_init(&e);
	env_open(&e);
	for (i = 0; i < 700; i++) /* a backlog of several pages */
		ck_assert_int_eq(tick(&e, i), 0);
	turn(&e);
	connect_client(&e);
	client_send(&e, "{\"method\":\"io.hostel.History.Read\","
			"\"more\":true}");
	/* Commits keep landing while the follower pages, and after. */
	while (n < 1001) {
		json_t *m;

		ck_assert_int_lt(++rounds, 100000);
		if (i < 1000)
			ck_assert_int_eq(tick(&e, i++), 0);
		m = try_recv(&e, 5);
		if (!m)
			continue;
		ck_assert_msg(continues(m), "a follower's replies continue");
		ck_assert_ptr_null(json_object_get(m, "error"));
		take_seqs(m, seen, &n, 2000);
		pages++;
		json_decref(m);
	}
	/* daemon.started and 1000 ticks, each once, in order. */
	ck_assert_uint_eq(history_last_seq(daemon_history_store(&e.d)), 1001);
	for (size_t k = 0; k < n; k++)
		ck_assert_uint_eq(seen[k], k + 1);
	ck_assert_int_gt(pages, 3);
	ck_assert_ptr_null(try_recv(&e, 50));
	free(seen);
	env_fini(&e);
}
END_TEST

/*
 * A follower from sequence 0 (the beginning) while 10,000 events are
 * appended in batches of varying size, one commit per loop turn, as it
 * pages and after it went live: each seq exactly once, in order.
 */
START_TEST(follow_from_zero_10000_events)
{
	enum { N = 10000 };
	struct env e;
	uint64_t *seen = calloc(N + 16, sizeof(*seen));
	size_t n = 0;
	int i = 0, rounds = 0;

	ck_assert_ptr_nonnull(seen);
	env_init(&e);
	env_open(&e);
	for (; i < 300; i++) /* some backlog before the follower comes */
		ck_assert_int_eq(tick(&e, i), 0);
	turn(&e);
	connect_client(&e);
	client_send(&e, "{\"method\":\"io.hostel.History.Read\","
			"\"parameters\":{\"since\":0},\"more\":true}");
	while (n < N + 1) {
		json_t *m;

		ck_assert_int_lt(++rounds, 1000000);
		/* 1, 2, ... 37 events per turn, then the turn's commit. */
		for (int k = 0; k <= rounds % 37 && i < N; k++)
			ck_assert_int_eq(tick(&e, i++), 0);
		m = try_recv(&e, 2);
		if (!m)
			continue;
		ck_assert_msg(continues(m), "a follower's replies continue");
		ck_assert_ptr_null(json_object_get(m, "error"));
		take_seqs(m, seen, &n, N + 16);
		json_decref(m);
	}
	/* daemon.started and 10,000 ticks, each once, in order. */
	ck_assert_uint_eq(history_last_seq(daemon_history_store(&e.d)), N + 1);
	for (size_t k = 0; k < n; k++)
		ck_assert_uint_eq(seen[k], k + 1);
	ck_assert_ptr_null(try_recv(&e, 50));
	free(seen);
	env_fini(&e);
}
END_TEST

START_TEST(slow_follower_lags_loop_goes_on)
{
	struct env e;
	struct daemon_history_status st;
	uint64_t seen[4096];
	size_t n = 0;
	int small = 4096, i;
	char big[8192];
	json_t *m, *last_msg = NULL;

	env_init(&e);
	env_open(&e);
	connect_client(&e);
	ck_assert_int_eq(setsockopt(e.client, SOL_SOCKET, SO_RCVBUF, &small,
				    sizeof(small)),
			 0);
	client_send(&e, "{\"method\":\"io.hostel.History.Read\","
			"\"more\":true,\"parameters\":{\"since\":1}}");
	m = recv_msg(&e); /* the backlog: daemon.started */
	take_seqs(m, seen, &n, 4096);
	json_decref(m);
	for (int k = 0; k < 200; k++)
		turn(&e); /* live now */
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	/* The client stops reading; the daemon goes on committing. */
	for (i = 0; i < 400; i++) {
		log_line(&e, big);
		turn(&e);
	}
	settle(&e);
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	ck_assert_uint_eq(st.followers, 0); /* it was let go */
	ck_assert_uint_eq(st.stats.last_seq, 401);
	/* Read what was queued: pages, then Lagged naming the last. */
	for (;;) {
		m = recv_msg(&e);
		if (json_object_get(m, "error")) {
			last_msg = m;
			break;
		}
		ck_assert(continues(m));
		take_seqs(m, seen, &n, 4096);
		json_decref(m);
	}
	ck_assert_str_eq(json_string_value(json_object_get(last_msg, "error")),
			 "io.hostel.History.Lagged");
	ck_assert_uint_lt(n, 401);
	ck_assert_uint_gt(n, 1);
	ck_assert_int_eq(json_integer_value(
				 json_object_get(params(last_msg), "lastSeq")),
			 (json_int_t)seen[n - 1]);
	for (size_t k = 0; k < n; k++)
		ck_assert_uint_eq(seen[k], k + 1);
	json_decref(last_msg);
	/* The connection is free again: resume where it stopped. */
	{
		char call[160];

		snprintf(call, sizeof(call),
			 "{\"method\":\"io.hostel.History.Read\","
			 "\"parameters\":{\"since\":%zu,\"limit\":1}}",
			 (size_t)seen[n - 1] + 1);
		client_send(&e, call);
		m = recv_msg(&e);
		ck_assert_int_eq(
			json_integer_value(json_object_get(
				json_array_get(
					json_object_get(params(m), "events"),
					0),
				"seq")),
			(json_int_t)seen[n - 1] + 1);
		ck_assert(!continues(m));
		json_decref(m);
	}
	env_fini(&e);
}
END_TEST

START_TEST(stop_ends_streams_then_pipelined_calls_run)
{
	struct env e;
	uint64_t seen[16];
	size_t n = 0;
	json_t *m;
	bool final = false;

	env_init(&e);
	env_open(&e);
	connect_client(&e);
	/* A follow and, pipelined behind it, a Status call. */
	client_send(&e, "{\"method\":\"io.hostel.History.Read\","
			"\"more\":true,\"parameters\":{\"kinds\":"
			"[\"daemon.*\"]}}");
	client_send(&e, "{\"method\":\"io.hostel.Daemon.Status\"}");
	m = recv_msg(&e);
	ck_assert(continues(m));
	take_seqs(m, seen, &n, 16);
	json_decref(m);
	/* Held: the Status call waits behind the stream. */
	ck_assert_ptr_null(try_recv(&e, 200));
	daemon_history_stopping(&e.d);
	while (!final) {
		m = recv_msg(&e);
		ck_assert_ptr_null(json_object_get(m, "error"));
		take_seqs(m, seen, &n, 16);
		final = !continues(m);
		json_decref(m);
	}
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(seen[1], 2); /* daemon.stopped */
	m = recv_msg(&e);
	ck_assert_ptr_nonnull(json_object_get(params(m), "uptimeMs"));
	json_decref(m);
	env_fini(&e);
}
END_TEST

START_TEST(client_gone_while_following)
{
	struct env e;
	struct daemon_history_status st;
	json_t *m;

	env_init(&e);
	env_open(&e);
	connect_client(&e);
	client_send(&e, "{\"method\":\"io.hostel.History.Read\","
			"\"more\":true}");
	m = recv_msg(&e);
	json_decref(m);
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	ck_assert_uint_eq(st.followers, 1);
	close(e.client);
	e.client = -1;
	for (int i = 0; i < 100 && e.d.n_conns; i++) {
		turn(&e);
		usleep(1000);
	}
	ck_assert_uint_eq(e.d.n_conns, 0);
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	ck_assert_uint_eq(st.followers, 0);
	ck_assert_int_eq(tick(&e, 1), 0);
	turn(&e);
	env_fini(&e);
}
END_TEST

/*
 * Under commits that never pause, the WAL must still start over (a
 * checkpoint run beside the writer's commits never completes, and the
 * WAL then grows without end: tried, and measured here; the writer's
 * commits finish what the checkpointer thread copied,
 * daemon/checkpointer.h).  30 MB of events through the daemon; the WAL
 * stays far below that.
 */
START_TEST(wal_stays_bounded_under_steady_commits)
{
	struct env e;
	struct daemon_history_status st;
	char *wal;
	struct stat sb;
	char line[3000];
	off_t most = 0;

	env_init(&e);
	env_open(&e);
	wal = path_in(e.dir, DB_FILE_NAME "-wal");
	memset(line, 'y', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	for (int i = 0; i < 10000; i++) {
		log_line(&e, line);
		turn(&e);
		if (stat(wal, &sb) == 0 && sb.st_size > most)
			most = sb.st_size;
	}
	settle(&e);
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	ck_assert_uint_eq(st.stats.failures, 0);
	/* At most the inline bound and a batch (some 20 MB, well below
	 * the 30 MB written). */
	ck_assert_msg(most < (CHECKPOINTER_INLINE_FRAMES + 1000) * (4096 + 24),
		      "the WAL grew to %lld bytes", (long long)most);
	/* Through the checkpointer (how the work splits between its thread
	 * and the commits depends on timing: under Valgrind a thread run
	 * may not end within the test, and the bound does it all). */
	ck_assert_uint_ge(st.checkpoints.runs + st.checkpoints.inline_runs, 1);
	ck_assert_uint_eq(st.checkpoints.failures, 0);
	free(wal);
	env_fini(&e);
}
END_TEST

/* 3000 lines of `svc`, committed. */
static void fill(struct env *e, const char *line)
{
	for (int i = 0; i < 3000; i++) {
		log_line(e, line);
		if (i % 100 == 99)
			turn(e);
	}
	settle(e);
}

/*
 * After a pass on the writer: no commit failed and some ran since
 * `commits`, the loop's connection changed nothing since `changes`, and
 * no more than the 10 newest "x" lines are left.
 */
static void pruned_on_writer(struct env *e, uint64_t commits, int changes)
{
	struct daemon_history_status st;

	ck_assert_int_eq(daemon_history_status(&e->d, &st), 0);
	ck_assert_uint_eq(st.stats.failures, 0);
	ck_assert_uint_gt(st.stats.commits, commits);
	ck_assert_int_eq(sqlite3_total_changes(daemon_history_db(&e->d)->sql),
			 changes);
	ck_assert_int_le(peek(e->dir, "SELECT count(*) FROM events WHERE "
				      "service = 'svc' AND "
				      "json_extract(payload, '$.line') = 'x'"),
			 10);
}

/*
 * Retention runs on the writer's connection, a step at a time between
 * batches: commits go on during a pass and none fails, and the loop's
 * connection deletes nothing (its steps used to hold the write lock turn
 * after turn, and the writer's commits failed with "database is locked").
 */
START_TEST(retention_runs_on_the_writer)
{
	struct env e;
	struct daemon_history_status st;
	uint64_t commits;
	int changes;

	env_init(&e);
	e.d.file.keep_events = 10;
	env_open(&e);
	fill(&e, "x");
	changes = sqlite3_total_changes(daemon_history_db(&e.d)->sql);
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	commits = st.stats.commits;
	ck_assert_uint_eq(st.stats.pruned, 0);
	daemon_history_retention_now(&e.d);
	for (int i = 0; i < 50000 && st.stats.pruned < 2990; i++) {
		log_line(&e, "y");
		turn(&e);
		usleep(100);
		ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	}
	settle(&e);
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	ck_assert_uint_ge(st.stats.pruned, 2990);
	pruned_on_writer(&e, commits, changes);
	env_fini(&e);
}
END_TEST

struct prune_answer {
	int calls, rc;
	uint64_t deleted;
	bool has_kept;
	struct history_prune_kept kept;
	char err[160];
};

static void prune_answer_cb(void *arg, int rc, uint64_t deleted,
			    const struct history_prune_kept *kept,
			    const char *err)
{
	struct prune_answer *a = arg;

	a->calls++;
	a->rc = rc;
	a->deleted = deleted;
	a->has_kept = kept != NULL;
	if (kept)
		a->kept = *kept;
	snprintf(a->err, sizeof(a->err), "%s", err ? err : "");
}

/*
 * A pass on request (io.hostel.History.Prune) runs on the writer too:
 * commits go on during it and none fails, the loop's connection deletes
 * nothing, and the answer comes once, on the loop, with the count.
 */
START_TEST(prune_on_request_runs_on_the_writer)
{
	struct env e;
	struct daemon_history_status st;
	struct history_prune_spec spec = {
		.service = "svc", .keep_events = 10, .keep_age = 0};
	struct prune_answer a = {0};
	struct daemon_prune *req;
	uint64_t commits;
	int changes;

	env_init(&e);
	env_open(&e);
	fill(&e, "x");
	changes = sqlite3_total_changes(daemon_history_db(&e.d)->sql);
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	commits = st.stats.commits;
	ck_assert_int_eq(
		daemon_history_prune(&e.d, &spec, prune_answer_cb, &a, &req),
		0);
	ck_assert_ptr_nonnull(req);
	for (int i = 0; i < 50000 && a.calls == 0; i++) {
		log_line(&e, "y");
		turn(&e);
		usleep(100);
	}
	settle(&e);
	turn(&e);
	ck_assert_int_eq(a.calls, 1);
	ck_assert_int_eq(a.rc, 0);
	/* The pass plans when the writer takes it: "y" lines committed
	 * before that count among the old ones. */
	ck_assert_uint_ge(a.deleted, 2990);
	ck_assert_int_eq(daemon_history_status(&e.d, &st), 0);
	ck_assert_uint_eq(st.stats.pruned, a.deleted);
	pruned_on_writer(&e, commits, changes);
	env_fini(&e);
}
END_TEST

/*
 * A pass on request plans with the configured limits (those it leaves
 * at -1) at once, not with those of the writer's last minutely pass: the
 * first version ran with no limit until a minutely pass had run.
 */
START_TEST(prune_on_request_uses_the_configured_limits)
{
	struct env e;
	struct history_prune_spec spec = {
		.service = "svc", .keep_events = -1, .keep_age = -1};
	struct prune_answer a = {0}, again = {0};
	struct daemon_prune *req;

	env_init(&e);
	e.d.file.keep_events = 10;
	env_open(&e);
	fill(&e, "x");
	ck_assert_int_eq(
		daemon_history_prune(&e.d, &spec, prune_answer_cb, &a, &req),
		0);
	for (int i = 0; i < 25000 && a.calls == 0; i++) {
		usleep(200);
		turn(&e);
	}
	ck_assert_int_eq(a.calls, 1);
	ck_assert_int_eq(a.rc, 0);
	ck_assert_uint_eq(a.deleted, 2990);
	ck_assert_int_eq(peek(e.dir, "SELECT count(*) FROM events WHERE "
				     "service = 'svc'"),
			 10);
	ck_assert(!a.has_kept); /* it did not ask */
	/* Again, explaining: nothing goes, and the answer says why. */
	spec.explain = true;
	ck_assert_int_eq(daemon_history_prune(&e.d, &spec, prune_answer_cb,
					      &again, &req),
			 0);
	for (int i = 0; i < 25000 && again.calls == 0; i++) {
		usleep(200);
		turn(&e);
	}
	ck_assert_int_eq(again.calls, 1);
	ck_assert_int_eq(again.rc, 0);
	ck_assert_uint_eq(again.deleted, 0);
	ck_assert(again.has_kept);
	ck_assert_uint_eq(again.kept.limits, 10);
	ck_assert_uint_eq(again.kept.open, 0);
	env_fini(&e);
}
END_TEST

/*
 * A dropped request never answers; one still under way when the history
 * closes answers once, -ESHUTDOWN; a malformed service name is -EINVAL.
 */
START_TEST(prune_on_request_dropped_or_stopped)
{
	struct env e;
	struct history_prune_spec spec = {.keep_events = 1, .keep_age = 0};
	struct history_prune_spec bad = {
		.service = "a\tb", .keep_events = 0, .keep_age = 0};
	struct prune_answer dropped = {0}, stopped = {0}, invalid = {0};
	struct daemon_prune *r1, *r2, *r3;

	env_init(&e);
	env_open(&e);
	fill(&e, "x");
	ck_assert_int_eq(daemon_history_prune(&e.d, &bad, prune_answer_cb,
					      &invalid, &r3),
			 0);
	for (int i = 0; i < 25000 && invalid.calls == 0; i++) {
		usleep(200);
		turn(&e);
	}
	ck_assert_int_eq(invalid.calls, 1);
	ck_assert_int_eq(invalid.rc, -EINVAL);
	ck_assert_str_eq(invalid.err, "invalid service name");
	ck_assert_int_eq(daemon_history_prune(&e.d, &spec, prune_answer_cb,
					      &dropped, &r1),
			 0);
	daemon_history_prune_drop(&e.d, r1);
	ck_assert_int_eq(daemon_history_prune(&e.d, &spec, prune_answer_cb,
					      &stopped, &r2),
			 0);
	daemon_history_close(&e.d);
	ck_assert_int_eq(dropped.calls, 0);
	ck_assert_int_eq(stopped.calls, 1);
	ck_assert(stopped.rc == 0 || stopped.rc == -ESHUTDOWN);
	if (stopped.rc == -ESHUTDOWN)
		ck_assert_str_eq(stopped.err, "hosteld is stopping");
	env_fini(&e);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("history-daemon");
	TCase *tc = tcase_create("daemon");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, open_recovers_and_records_start);
	tcase_add_test(tc, done_only_after_commit_one_commit_per_turn);
	tcase_add_test(tc, failing_commit_is_retried);
	tcase_add_test(tc, group_commit_holds_starts_never_replies);
	tcase_add_test(tc, next_batch_written_while_replies_go_out);
	tcase_add_test(tc, commit_not_held_back_by_busy_turns);
	tcase_add_test(tc, read_once);
	tcase_add_test(tc, hostcall_oversize_values_recorded_bounded);
	tcase_add_test(tc, prune_on_request_runs_on_the_writer);
	tcase_add_test(tc, prune_on_request_uses_the_configured_limits);
	tcase_add_test(tc, prune_on_request_dropped_or_stopped);
	tcase_add_test(tc, follow_every_seq_exactly_once);
	tcase_add_test(tc, follow_from_zero_10000_events);
	tcase_add_test(tc, slow_follower_lags_loop_goes_on);
	tcase_add_test(tc, stop_ends_streams_then_pipelined_calls_run);
	tcase_add_test(tc, client_gone_while_following);
	tcase_add_test(tc, wal_stays_bounded_under_steady_commits);
	tcase_add_test(tc, retention_runs_on_the_writer);
	suite_add_tcase(s, tc);
	return s;
}
