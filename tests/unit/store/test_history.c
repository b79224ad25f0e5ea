/*
 * test_history.c - store/history.h: group commit (1,000 events, one
 * SQLite commit; callbacks only once the rows are visible elsewhere),
 * the exactly-once terminal rule, checks at add time, disk full (no
 * callback, nothing visible, then retry or explicit failure), recovery of
 * interrupted calls, reading with filters and from a seq, following
 * through the commit hook without gap or duplicate, retention in bounded
 * steps that spare open calls and not the background work of ended ones,
 * manual pruning, what a pass that removed nothing kept, guest output
 * lines, and the statistics.
 */
#include "store-testutil.h"

#include "config.h"

#include <errno.h>

#include "store/db.h"
#include "store/guest-output.h"
#include "store/history.h"
#include "store/payload.h"
#include "store/services.h"
#include "store/sha256.h"
#include "store/components.h"
#include "testmain.h"

struct fixture {
	char *dir;
	struct db *db;
	struct history *h;
	struct history_batch *b;
};

static void setup(struct fixture *f)
{
	char err[256] = "";

	f->dir = tmpdir_new();
	ck_assert_msg(db_open(f->dir, &(struct db_options){0}, &f->db, err,
			      sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(history_open(f->db, &f->h), 0);
	f->b = history_batch_new(f->h);
	ck_assert_ptr_nonnull(f->b);
}

static void teardown(struct fixture *f)
{
	history_batch_free(f->b);
	history_free(f->h);
	db_close(f->db);
	tmpdir_remove(f->dir);
}

/* A second connection, to see what is really committed. */
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

struct outcome {
	int calls;
	int status;
	uint64_t seq;
};

static void done_cb(void *arg, int status, uint64_t seq)
{
	struct outcome *o = arg;

	o->calls++;
	o->status = status;
	o->seq = seq;
}

static void add(struct fixture *f, const char *service, const char *call,
		const char *kind, const char *payload, struct outcome *o)
{
	int rc = history_batch_add(f->b,
				   &(struct history_record){
					   .service = service,
					   .call = call,
					   .kind = kind,
					   .payload = payload,
				   },
				   o ? done_cb : NULL, o);

	ck_assert_msg(rc == 0, "%s: %d %s", kind, rc, db_errmsg(f->db));
}

static void commit(struct fixture *f)
{
	int rc = history_commit(f->h, f->b);

	ck_assert_msg(rc == 0, "commit: %d %s", rc, db_errmsg(f->db));
}

/* ---- group commit -----------------------------------------------------------
 */

START_TEST(commit_assigns_seqs_in_order)
{
	struct fixture f;
	struct outcome o[3] = {{0}};

	setup(&f);
	ck_assert_uint_eq(history_last_seq(f.h), 0);
	add(&f, NULL, NULL, "daemon.started", "{\"pid\":1}", &o[0]);
	add(&f, "s", "c1", HISTORY_CALL_STARTED, NULL, &o[1]);
	add(&f, "s", "c1", HISTORY_CALL_RETURNED, "{\"results\":[1]}", &o[2]);
	ck_assert_uint_eq(history_batch_count(f.b), 3);
	ck_assert_int_eq(o[0].calls, 0); /* nothing before the commit */
	commit(&f);
	ck_assert_uint_eq(history_batch_count(f.b), 0);
	ck_assert_uint_eq(history_batch_bytes(f.b), 0);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(o[i].calls, 1);
		ck_assert_int_eq(o[i].status, 0);
		ck_assert_uint_eq(o[i].seq, (uint64_t)i + 1);
	}
	ck_assert_uint_eq(history_last_seq(f.h), 3);
	/* An empty batch commits nothing and succeeds. */
	commit(&f);
	ck_assert_uint_eq(history_last_seq(f.h), 3);
	teardown(&f);
}
END_TEST

static int sqlite_commits;

static int count_commit(void *arg)
{
	sqlite_commits++;
	return 0;
}

struct visible {
	const char *dir;
	int checked;
	int calls;
	uint64_t last_seq;
};

/* The first callback looks from another connection: already there? */
static void visible_cb(void *arg, int status, uint64_t seq)
{
	struct visible *v = arg;

	ck_assert_int_eq(status, 0);
	ck_assert_uint_gt(seq, v->last_seq);
	v->last_seq = seq;
	v->calls++;
	if (!v->checked) {
		v->checked = 1;
		ck_assert_int_eq(peek(v->dir, "SELECT count(*) FROM events"),
				 1000);
	}
}

START_TEST(group_commit_of_1000_is_one_transaction)
{
	struct fixture f;
	struct visible v = {0};
	struct history_stats st;
	char payload[64];

	setup(&f);
	v.dir = f.dir;
	sqlite_commits = 0;
	sqlite3_commit_hook(f.db->sql, count_commit, NULL);
	for (int i = 0; i < 1000; i++) {
		snprintf(payload, sizeof(payload), "{\"line\":\"n%d\"}", i);
		ck_assert_int_eq(
			history_batch_add(f.b,
					  &(struct history_record){
						  .service = "s",
						  .kind = HISTORY_GUEST_STDOUT,
						  .payload = payload,
					  },
					  visible_cb, &v),
			0);
	}
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events"), 0);
	commit(&f);
	ck_assert_int_eq(sqlite_commits, 1);
	ck_assert_int_eq(v.calls, 1000);
	ck_assert_uint_eq(v.last_seq, 1000);
	history_get_stats(f.h, &st);
	ck_assert_uint_eq(st.commits, 1);
	ck_assert_uint_eq(st.events, 1000);
	ck_assert_uint_eq(st.max_batch, 1000);
	ck_assert_uint_eq(st.last_seq, 1000);
	ck_assert_uint_gt(st.commit_ns_max, 0);
	ck_assert_uint_eq(st.commit_ns_last, st.commit_ns_max);
	{
		uint64_t total = 0;

		for (int i = 0; i < HISTORY_LATENCY_BUCKETS; i++)
			total += st.latency[i];
		ck_assert_uint_eq(total, 1);
	}
	sqlite3_commit_hook(f.db->sql, NULL, NULL);
	teardown(&f);
}
END_TEST

/* ---- the terminal rule
 * --------------------------------------------------------- */

START_TEST(exactly_one_terminal_event_per_call)
{
	struct fixture f;
	struct outcome start = {0}, end1 = {0}, end2 = {0}, orphan = {0},
		       restart = {0}, other = {0};
	struct history_stats st;

	setup(&f);
	/* All in one batch: the rule is checked event by event. */
	add(&f, "s", "c1", HISTORY_CALL_STARTED, NULL, &start);
	add(&f, "s", "c1", HISTORY_CALL_RETURNED, NULL, &end1);
	add(&f, "s", "c1", HISTORY_CALL_TRAPPED, "{\"trap\":\"unreachable\"}",
	    &end2);
	add(&f, "s", "c9", HISTORY_CALL_CANCELLED, NULL, &orphan);
	add(&f, "s", "c1", HISTORY_CALL_STARTED, NULL, &restart);
	add(&f, "s", "c2", HISTORY_CALL_STARTED, NULL, &other);
	commit(&f);
	ck_assert_int_eq(start.status, 0);
	ck_assert_int_eq(end1.status, 0);
	ck_assert_int_eq(end2.status, -EALREADY);
	ck_assert_uint_eq(end2.seq, 0);
	ck_assert_int_eq(orphan.status, -ENOENT);
	ck_assert_int_eq(restart.status, -EEXIST);
	/* The refusals cost the others nothing. */
	ck_assert_int_eq(other.status, 0);
	ck_assert_uint_eq(other.seq, 3);
	ck_assert_uint_eq(history_last_seq(f.h), 3);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events"), 3);
	history_get_stats(f.h, &st);
	ck_assert_uint_eq(st.rejected, 3);
	ck_assert_uint_eq(st.events, 3);

	/* Across batches too, for each terminal kind. */
	add(&f, "s", "c2", HISTORY_CALL_FAILED, "{\"error\":\"x\"}", &end1);
	commit(&f);
	ck_assert_int_eq(end1.status, 0);
	ck_assert_uint_eq(end1.seq, 4);
	add(&f, "s", "c2", HISTORY_CALL_INTERRUPTED, "{\"reason\":\"x\"}",
	    &end2);
	commit(&f);
	ck_assert_int_eq(end2.status, -EALREADY);

	/* The schema holds whoever writes: raw SQL is refused as well. */
	ck_assert_int_eq(db_exec(f.db, "INSERT INTO events (time, service, "
				       "call, kind) VALUES (1, 's', 'c1', "
				       "'call.cancelled')"),
			 -EINVAL);
	ck_assert_msg(strstr(db_errmsg(f.db), "events_call_once"), "%s",
		      db_errmsg(f.db));
	ck_assert_int_eq(db_exec(f.db, "INSERT INTO events (time, service, "
				       "call, kind) VALUES (1, 's', 'c2', "
				       "'call.started')"),
			 -EINVAL);
	ck_assert_msg(strstr(db_errmsg(f.db), "events_call_once"), "%s",
		      db_errmsg(f.db));
	ck_assert_int_eq(db_exec(f.db, "UPDATE events SET kind = 'x.y'"),
			 -EINVAL);
	ck_assert_msg(strstr(db_errmsg(f.db), "append-only"), "%s",
		      db_errmsg(f.db));
	teardown(&f);
}
END_TEST

/*
 * The rules against a model, in batches long enough for the multi-row
 * statements (store/history.c insert_all), with refusals in the middle
 * of runs and, after a reopen, ends whose start another handle wrote
 * (the look-up path).  Every event's status and seq must be the model's,
 * and the row at each seq must be that event.
 */
START_TEST(multi_row_inserts_keep_the_rules)
{
	enum { CALLS = 40, EVENTS = 300, BATCHES = 12 };
	static const char *const kinds[] = {
		HISTORY_CALL_STARTED,  HISTORY_CALL_STARTED,
		HISTORY_CALL_RETURNED, HISTORY_CALL_TRAPPED,
		"service.note",
	};
	struct fixture f;
	struct outcome *o = calloc(EVENTS, sizeof(*o));
	int *call_of = calloc(EVENTS, sizeof(int)),
	    *kind_of = calloc(EVENTS, sizeof(int));
	bool started[CALLS] = {0}, ended[CALLS] = {0};
	uint64_t seq = 0, x = 12345;
	char name[CALLS][16];

	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_nonnull(call_of);
	ck_assert_ptr_nonnull(kind_of);
	for (int c = 0; c < CALLS; c++)
		snprintf(name[c], sizeof(name[c]), "c%d", c);
	setup(&f);
	for (int b = 0; b < BATCHES; b++) {
		if (b == BATCHES / 2) { /* a new handle: an empty open set */
			history_batch_free(f.b);
			history_free(f.h);
			ck_assert_int_eq(history_open(f.db, &f.h), 0);
			f.b = history_batch_new(f.h);
			ck_assert_ptr_nonnull(f.b);
		}
		memset(o, 0, EVENTS * sizeof(*o));
		for (int i = 0; i < EVENTS; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			call_of[i] = (int)((x >> 33) % CALLS);
			kind_of[i] = (int)((x >> 20) % 5);
			add(&f, "s", kind_of[i] == 4 ? NULL : name[call_of[i]],
			    kinds[kind_of[i]], NULL, &o[i]);
		}
		commit(&f);
		for (int i = 0; i < EVENTS; i++) {
			int c = call_of[i], want = 0;
			char sql[160];

			if (kind_of[i] < 2)
				want = started[c] ? -EEXIST : 0;
			else if (kind_of[i] < 4)
				want = !started[c] ? -ENOENT
				       : ended[c]  ? -EALREADY
						   : 0;
			if (want == 0 && kind_of[i] < 2)
				started[c] = true;
			else if (want == 0 && kind_of[i] < 4)
				ended[c] = true;
			ck_assert_int_eq(o[i].calls, 1);
			ck_assert_msg(o[i].status == want,
				      "batch %d event %d (%s %s): %d, not %d",
				      b, i, kinds[kind_of[i]], name[c],
				      o[i].status, want);
			if (want) {
				ck_assert_uint_eq(o[i].seq, 0);
				continue;
			}
			ck_assert_uint_eq(o[i].seq, ++seq);
			snprintf(
				sql, sizeof(sql),
				"SELECT count(*) FROM events WHERE seq = %llu "
				"AND kind = '%s' AND coalesce(call, '') = '%s'",
				(unsigned long long)seq, kinds[kind_of[i]],
				kind_of[i] == 4 ? "" : name[c]);
			ck_assert_int_eq(peek(f.dir, sql), 1);
		}
		/* New calls for the next batch. */
		for (int c = 0; c < CALLS; c++)
			if (ended[c]) {
				snprintf(name[c], sizeof(name[c]), "c%d-%d", c,
					 b);
				started[c] = ended[c] = false;
			}
	}
	ck_assert_uint_eq(history_last_seq(f.h), seq);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events"),
			 (long long)seq);
	teardown(&f);
	free(o);
	free(call_of);
	free(kind_of);
}
END_TEST

START_TEST(checks_at_add_time)
{
	struct fixture f;
	struct outcome o = {0};
	char *big;
	struct history_record r = {.service = "s", .kind = "service.created"};

	setup(&f);
	static const char *const bad_kinds[] = {
		"",
		"call",
		"call.",
		".call",
		"Call.started",
		"call.finished",
		"store.exploded",
		"guest.stdin",
		"foo.bar",
		"daemon..x",
		"daemon.x y",
		NULL,
	};
	for (const char *const *k = bad_kinds; *k; k++) {
		r.kind = *k;
		ck_assert_msg(history_batch_add(f.b, &r, done_cb, &o) ==
				      -EINVAL,
			      "kind '%s' accepted", *k);
	}
	ck_assert(history_kind_valid("daemon.reloaded"));
	ck_assert(history_kind_valid("hostcall.cancelled"));
	ck_assert(history_kind_valid("service.config-changed"));
	ck_assert(history_kind_terminal(HISTORY_CALL_INTERRUPTED));
	ck_assert(!history_kind_terminal(HISTORY_CALL_STARTED));

	/* Who an event must (not) name. */
	r = (struct history_record){.kind = "daemon.started", .service = "s"};
	ck_assert_int_eq(history_batch_add(f.b, &r, done_cb, &o), -EINVAL);
	r = (struct history_record){.kind = "store.created"};
	ck_assert_int_eq(history_batch_add(f.b, &r, done_cb, &o), -EINVAL);
	r = (struct history_record){.kind = HISTORY_CALL_STARTED,
				    .service = "s"};
	ck_assert_int_eq(history_batch_add(f.b, &r, done_cb, &o), -EINVAL);
	r.call = "c\n1";
	ck_assert_int_eq(history_batch_add(f.b, &r, done_cb, &o), -EINVAL);

	/* Payloads: JSON objects only. */
	r = (struct history_record){.kind = "daemon.x"};
	static const char *const bad_payloads[] = {
		"", "[]", "1", "\"s\"", "{", "{\"a\":}", "{} {}", NULL,
	};
	for (const char *const *p = bad_payloads; *p; p++) {
		r.payload = *p;
		ck_assert_msg(history_batch_add(f.b, &r, done_cb, &o) ==
				      -EINVAL,
			      "payload '%s' accepted", *p);
	}
	ck_assert_int_eq(history_add_call_ended(f.b, "s", "c", "call.started",
						NULL, done_cb, &o),
			 -EINVAL);
	ck_assert_int_eq(
		history_add_store_event(f.b, "daemon.x", "s", NULL, NULL),
		-EINVAL);
	ck_assert_int_eq(history_add_guest_line(f.b, "s", 3, "x", 1, false),
			 -EINVAL);

	/* Size bounds: one payload, and the batch as a whole. */
	big = malloc(HISTORY_PAYLOAD_MAX + 2);
	ck_assert_ptr_nonnull(big);
	memset(big, ' ', HISTORY_PAYLOAD_MAX + 1);
	big[0] = '{';
	big[HISTORY_PAYLOAD_MAX] = '}';
	big[HISTORY_PAYLOAD_MAX + 1] = '\0';
	r.payload = big;
	ck_assert_int_eq(history_batch_add(f.b, &r, done_cb, &o), -E2BIG);
	big[HISTORY_PAYLOAD_MAX - 1] = '}';
	big[HISTORY_PAYLOAD_MAX] = '\0';
	{
		/* kind, payload and their NULs */
		size_t each = strlen(r.kind) + 1 + HISTORY_PAYLOAD_MAX + 1;
		size_t fit = HISTORY_BATCH_BYTES_MAX / each;

		for (size_t i = 0; i + 1 < fit; i++)
			ck_assert_int_eq(history_batch_add(f.b, &r, NULL, NULL),
					 0);
		ck_assert_int_eq(history_batch_add(f.b, &r, done_cb, &o), 0);
		/* One more would pass HISTORY_BATCH_BYTES_MAX. */
		ck_assert_int_eq(history_batch_add(f.b, &r, done_cb, &o),
				 -ENOBUFS);
		ck_assert_uint_eq(history_batch_count(f.b), fit);
		ck_assert_uint_eq(history_batch_bytes(f.b), fit * each);
	}
	free(big);
	ck_assert_int_eq(o.calls, 0); /* refused adds call nothing back */
	/* Freeing a batch with events cancels them. */
	history_batch_free(f.b);
	ck_assert_int_eq(o.calls, 1);
	ck_assert_int_eq(o.status, -ECANCELED);
	f.b = history_batch_new(f.h);
	teardown(&f);
}
END_TEST

/* ---- failure: disk full
 * -------------------------------------------------------- */

START_TEST(disk_full_keeps_the_batch)
{
	struct fixture f;
	struct outcome o[200];
	struct history_stats st;
	char payload[1100];
	long long pages;

	setup(&f);
	memset(o, 0, sizeof(o));
	add(&f, NULL, NULL, "daemon.started", NULL, NULL);
	commit(&f);
	/* Cap the file at its current size: the next batch cannot fit. */
	pages = peek(f.dir, "PRAGMA page_count");
	{
		char sql[64];

		snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
			 pages + 2);
		ck_assert_int_eq(db_exec(f.db, sql), 0);
	}
	memset(payload, 'x', sizeof(payload));
	memcpy(payload, "{\"line\":\"", 9);
	memcpy(payload + sizeof(payload) - 3, "\"}", 3);
	for (int i = 0; i < 200; i++) {
		char call[16];

		snprintf(call, sizeof(call), "c%d", i);
		if (i % 2 == 0)
			ck_assert_int_eq(history_add_call_started(
						 f.b, "s", call, "run", "[]",
						 NULL, done_cb, &o[i]),
					 0);
		else
			add(&f, "s", NULL, HISTORY_GUEST_STDOUT, payload,
			    &o[i]);
	}
	ck_assert_int_eq(history_commit(f.h, f.b), -ENOSPC);
	ck_assert_msg(strstr(db_errmsg(f.db), "full"), "%s", db_errmsg(f.db));
	/* No callback, batch intact, nothing half-committed anywhere. */
	for (int i = 0; i < 200; i++)
		ck_assert_int_eq(o[i].calls, 0);
	ck_assert_uint_eq(history_batch_count(f.b), 200);
	ck_assert_uint_eq(history_last_seq(f.h), 1);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events"), 1);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE kind "
				     "GLOB 'call.*'"),
			 0);
	history_get_stats(f.h, &st);
	ck_assert_uint_eq(st.failures, 1);
	ck_assert_int_eq(st.last_error, -ENOSPC);
	/* Still failing: same answer, still no callback. */
	ck_assert_int_eq(history_commit(f.h, f.b), -ENOSPC);
	ck_assert_int_eq(o[0].calls, 0);

	/* Room again: the retry commits everything, in order. */
	ck_assert_int_eq(db_exec(f.db, "PRAGMA max_page_count = 1073741823"),
			 0);
	add(&f, "s", NULL, "service.later", NULL, NULL);
	commit(&f);
	for (int i = 0; i < 200; i++) {
		ck_assert_int_eq(o[i].calls, 1);
		ck_assert_int_eq(o[i].status, 0);
		ck_assert_uint_eq(o[i].seq, (uint64_t)i + 2);
	}
	ck_assert_uint_eq(history_last_seq(f.h), 202);
	history_get_stats(f.h, &st);
	ck_assert_int_eq(st.last_error, 0);
	teardown(&f);
}
END_TEST

START_TEST(disk_full_then_give_up)
{
	struct fixture f;
	struct outcome a = {0}, b = {0};
	char payload[4096 + 16];

	setup(&f);
	ck_assert_int_eq(db_exec(f.db, "PRAGMA max_page_count = 8"), 0);
	memset(payload, 'y', sizeof(payload));
	memcpy(payload, "{\"line\":\"", 9);
	memcpy(payload + sizeof(payload) - 3, "\"}", 3);
	for (int i = 0; i < 40; i++)
		add(&f, "s", NULL, HISTORY_GUEST_STDERR, payload,
		    i == 0    ? &a
		    : i == 39 ? &b
			      : NULL);
	ck_assert_int_eq(history_commit(f.h, f.b), -ENOSPC);
	ck_assert_int_eq(a.calls + b.calls, 0);
	history_batch_fail(f.b, -ENOSPC);
	ck_assert_int_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ENOSPC);
	ck_assert_uint_eq(a.seq, 0);
	ck_assert_int_eq(b.calls, 1);
	ck_assert_int_eq(b.status, -ENOSPC);
	ck_assert_uint_eq(history_batch_count(f.b), 0);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events"), 0);
	ck_assert_uint_eq(history_last_seq(f.h), 0);
	/* The batch is usable again once there is room. */
	ck_assert_int_eq(db_exec(f.db, "PRAGMA max_page_count = 1073741823"),
			 0);
	add(&f, "s", NULL, HISTORY_GUEST_STDERR, payload, &a);
	commit(&f);
	ck_assert_int_eq(a.calls, 2);
	ck_assert_int_eq(a.status, 0);
	ck_assert_uint_eq(a.seq, 1);
	teardown(&f);
}
END_TEST

/* ---- recovery
 * ------------------------------------------------------------------------ */

struct hooked {
	int calls;
	size_t events;
	uint64_t first, last;
	char kinds[512];
};

static void hook_cb(void *arg, const struct history_event *ev, size_t n)
{
	struct hooked *k = arg;

	k->calls++;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(k->kinds);

		if (k->events == 0)
			k->first = ev[i].seq;
		/* In order, no duplicate. */
		ck_assert_uint_gt(ev[i].seq, k->last);
		k->last = ev[i].seq;
		k->events++;
		snprintf(k->kinds + len, sizeof(k->kinds) - len, "%s%s:%s",
			 len ? "," : "", ev[i].call ? ev[i].call : "-",
			 ev[i].kind);
	}
}

START_TEST(recovery_closes_open_calls)
{
	struct fixture f;
	struct hooked k = {0};
	uint64_t open;

	setup(&f);
	add(&f, "s", "c1", HISTORY_CALL_STARTED, NULL, NULL);
	add(&f, "s", "c1", HISTORY_CALL_RETURNED, NULL, NULL);
	add(&f, "s", "c2", HISTORY_CALL_STARTED, NULL, NULL);
	add(&f, "t", "c3", HISTORY_CALL_STARTED, NULL, NULL);
	ck_assert_int_eq(history_add_hostcall_started(f.b, "t", "c3", 7,
						      "wasi:clocks/x.wait",
						      "[5]"),
			 0);
	commit(&f);
	ck_assert_int_eq(history_open_calls(f.h, &open), 0);
	ck_assert_uint_eq(open, 2);

	/* As after a crash: a fresh handle on the same file. */
	history_batch_free(f.b);
	history_free(f.h);
	db_close(f.db);
	{
		char err[256];

		ck_assert_int_eq(db_open(f.dir, &(struct db_options){0}, &f.db,
					 err, sizeof(err)),
				 0);
	}
	ck_assert_int_eq(history_open(f.db, &f.h), 0);
	f.b = history_batch_new(f.h);
	ck_assert_uint_eq(history_last_seq(f.h), 5);
	history_set_commit_hook(f.h, hook_cb, &k);
	ck_assert_int_eq(history_recover_interrupted(f.h, "hosteld restarted"),
			 2);
	ck_assert_int_eq(k.calls, 1);
	ck_assert_str_eq(k.kinds, "c2:call.interrupted,c3:call.interrupted");
	ck_assert_uint_eq(k.first, 6);
	ck_assert_uint_eq(history_last_seq(f.h), 7);
	ck_assert_int_eq(history_open_calls(f.h, &open), 0);
	ck_assert_uint_eq(open, 0);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE kind "
				     "= 'call.interrupted' AND json_extract("
				     "payload, '$.reason') = 'hosteld "
				     "restarted' AND service = 't'"),
			 1);
	/* Nothing left to recover; a late terminal event is refused. */
	ck_assert_int_eq(history_recover_interrupted(f.h, "again"), 0);
	{
		struct outcome o = {0};

		ck_assert_int_eq(history_add_call_ended(f.b, "s", "c2",
							HISTORY_CALL_RETURNED,
							NULL, done_cb, &o),
				 0);
		commit(&f);
		ck_assert_int_eq(o.status, -EALREADY);
	}
	teardown(&f);
}
END_TEST

START_TEST(recovery_under_disk_full_writes_nothing)
{
	struct fixture f;
	uint64_t open;

	setup(&f);
	for (int i = 0; i < 300; i++) {
		char call[16];

		snprintf(call, sizeof(call), "call-%03d", i);
		add(&f, "s", call, HISTORY_CALL_STARTED, NULL, NULL);
	}
	commit(&f);
	{
		long long pages = peek(f.dir, "PRAGMA page_count");
		char sql[64];

		snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld",
			 pages);
		ck_assert_int_eq(db_exec(f.db, sql), 0);
	}
	ck_assert_int_eq(history_recover_interrupted(f.h, "r"), -ENOSPC);
	ck_assert_int_eq(history_open_calls(f.h, &open), 0);
	ck_assert_uint_eq(open, 300);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events"), 300);
	ck_assert_int_eq(db_exec(f.db, "PRAGMA max_page_count = 1073741823"),
			 0);
	ck_assert_int_eq(history_recover_interrupted(f.h, "r"), 300);
	teardown(&f);
}
END_TEST

/* ---- reading
 * ----------------------------------------------------------------------------
 */

struct collected {
	int n;
	uint64_t seqs[64];
	int stop_after; /* 0: never */
};

static int collect_cb(void *arg, const struct history_event *ev)
{
	struct collected *c = arg;

	ck_assert_int_lt(c->n, 64);
	ck_assert_ptr_nonnull(ev->kind);
	ck_assert_ptr_nonnull(ev->payload);
	c->seqs[c->n++] = ev->seq;
	return c->stop_after && c->n >= c->stop_after;
}

static int read_seqs(struct fixture *f, const struct history_query *q,
		     struct collected *c, uint64_t *next)
{
	int rc;

	memset(c->seqs, 0, sizeof(c->seqs));
	c->n = 0;
	rc = history_read(f->h, q, collect_cb, c, next);
	ck_assert_msg(rc >= 0, "read: %d %s", rc, db_errmsg(f->db));
	ck_assert_int_eq(rc, c->n);
	return rc;
}

/* 1 daemon.started; 2-4 a:c1; 5-6 b:c2; 7 b guest; 8 a:c3 open;
 * 9 daemon.reloaded; 10 a hostcall */
static void fill_history(struct fixture *f)
{
	add(f, NULL, NULL, "daemon.started", NULL, NULL);
	add(f, "a", "c1", HISTORY_CALL_STARTED, NULL, NULL);
	ck_assert_int_eq(history_add_hostcall_settled(f->b, "a", "c1", 1,
						      "returned",
						      "{\"ok\":true}", NULL),
			 0);
	add(f, "a", "c1", HISTORY_CALL_RETURNED, NULL, NULL);
	add(f, "b", "c2", HISTORY_CALL_STARTED, NULL, NULL);
	add(f, "b", "c2", HISTORY_CALL_TRAPPED, "{\"trap\":\"x\"}", NULL);
	ck_assert_int_eq(history_add_guest_line(f->b, "b", 1, "hi", 2, false),
			 0);
	add(f, "a", "c3", HISTORY_CALL_STARTED, NULL, NULL);
	add(f, NULL, NULL, "daemon.reloaded", NULL, NULL);
	ck_assert_int_eq(history_add_hostcall_started(f->b, "a", "c3", 2,
						      "wasi:x", NULL),
			 0);
	commit(f);
}

START_TEST(read_with_filters)
{
	struct fixture f;
	struct collected c = {0};
	uint64_t next;
	static const char *const calls_only[] = {"call.*"};
	static const char *const two[] = {"daemon.started", "hostcall.*"};
	static const char *const bad[] = {"call.**"};

	setup(&f);
	fill_history(&f);
	ck_assert_int_eq(read_seqs(&f, &(struct history_query){0}, &c, &next),
			 10);
	ck_assert_uint_eq(next, 11);
	for (int i = 0; i < 10; i++)
		ck_assert_uint_eq(c.seqs[i], (uint64_t)i + 1);

	ck_assert_int_eq(
		read_seqs(&f, &(struct history_query){.from = 5}, &c, &next),
		6);
	ck_assert_uint_eq(c.seqs[0], 5);
	ck_assert_int_eq(read_seqs(&f, &(struct history_query){.service = "a"},
				   &c, &next),
			 5);
	ck_assert_uint_eq(c.seqs[4], 10);
	ck_assert_int_eq(
		read_seqs(&f, &(struct history_query){.call = "c1"}, &c, &next),
		3);
	ck_assert_uint_eq(c.seqs[0], 2);
	ck_assert_uint_eq(c.seqs[2], 4);
	ck_assert_int_eq(read_seqs(&f,
				   &(struct history_query){.kinds = calls_only,
							   .n_kinds = 1},
				   &c, &next),
			 5);
	ck_assert_int_eq(
		read_seqs(&f,
			  &(struct history_query){.kinds = two, .n_kinds = 2},
			  &c, &next),
		3);
	ck_assert_uint_eq(c.seqs[0], 1);
	ck_assert_uint_eq(c.seqs[1], 3);
	ck_assert_uint_eq(c.seqs[2], 10);
	/* Filters combine. */
	ck_assert_int_eq(read_seqs(&f,
				   &(struct history_query){.service = "a",
							   .kinds = calls_only,
							   .n_kinds = 1,
							   .from = 3},
				   &c, &next),
			 2);
	ck_assert_uint_eq(c.seqs[0], 4);
	ck_assert_uint_eq(c.seqs[1], 8);

	/* Limit: next continues after the last delivered. */
	ck_assert_int_eq(
		read_seqs(&f, &(struct history_query){.limit = 4}, &c, &next),
		4);
	ck_assert_uint_eq(next, 5);
	ck_assert_int_eq(
		read_seqs(&f, &(struct history_query){.from = next, .limit = 4},
			  &c, &next),
		4);
	ck_assert_uint_eq(c.seqs[0], 5);
	/* Bounded scan: a filter that matches late still returns, and
	 * next says where to go on. */
	ck_assert_int_eq(read_seqs(&f,
				   &(struct history_query){.kinds = two + 1,
							   .n_kinds = 1,
							   .from = 4,
							   .max_scan = 3},
				   &c, &next),
			 0);
	ck_assert_uint_eq(next, 7);
	/* upto caps the range. */
	ck_assert_int_eq(
		read_seqs(&f, &(struct history_query){.upto = 2}, &c, &next),
		2);
	ck_assert_uint_eq(next, 3);
	/* Past the end. */
	ck_assert_int_eq(
		read_seqs(&f, &(struct history_query){.from = 99}, &c, &next),
		0);
	ck_assert_uint_eq(next, 99);
	/* The reader may stop early. */
	c.stop_after = 2;
	ck_assert_int_eq(history_read(f.h, &(struct history_query){0},
				      collect_cb, &c, &next),
			 2);
	ck_assert_uint_eq(next, 3);
	ck_assert_int_eq(history_read(f.h,
				      &(struct history_query){.kinds = bad,
							      .n_kinds = 1},
				      collect_cb, &c, &next),
			 -EINVAL);

	/* The same predicate for live events. */
	{
		struct history_event ev = {
			.service = "a", .call = "c3", .kind = "call.started"};

		ck_assert(history_query_matches(
			&(struct history_query){.kinds = calls_only,
						.n_kinds = 1},
			&ev));
		ck_assert(!history_query_matches(
			&(struct history_query){.kinds = two, .n_kinds = 2},
			&ev));
		ck_assert(!history_query_matches(
			&(struct history_query){.service = "b"}, &ev));
		ck_assert(history_query_matches(
			&(struct history_query){.call = "c3"}, &ev));
		ev.kind = "callx.started";
		ck_assert(!history_query_matches(
			&(struct history_query){.kinds = calls_only,
						.n_kinds = 1},
			&ev));
	}
	teardown(&f);
}
END_TEST

struct follower {
	struct fixture *f;
	uint64_t cursor; /* next seq wanted */
	bool live;
	uint64_t seen[256];
	size_t n;
};

/* history_tail_from: where the newest n matches of a range start. */
START_TEST(tail_of_a_range)
{
	struct fixture f;
	static const char *const calls_only[] = {"call.*"};
	uint64_t from;

	setup(&f);
	ck_assert_int_eq(
		history_tail_from(f.h, &(struct history_query){0}, 3, &from),
		0);
	ck_assert_uint_eq(from, 1); /* empty: from the start */
	fill_history(&f);
	ck_assert_int_eq(
		history_tail_from(f.h, &(struct history_query){0}, 3, &from),
		0);
	ck_assert_uint_eq(from, 8);
	ck_assert_int_eq(
		history_tail_from(f.h, &(struct history_query){0}, 1, &from),
		0);
	ck_assert_uint_eq(from, 10);
	/* Fewer matches than asked: the range's start. */
	ck_assert_int_eq(history_tail_from(f.h,
					   &(struct history_query){.from = 4},
					   100, &from),
			 0);
	ck_assert_uint_eq(from, 4);
	/* Filters, and an upper bound. */
	ck_assert_int_eq(
		history_tail_from(f.h,
				  &(struct history_query){.kinds = calls_only,
							  .n_kinds = 1},
				  2, &from),
		0);
	ck_assert_uint_eq(from, 6); /* c2's trap, then c3's start at 8 */
	ck_assert_int_eq(
		history_tail_from(
			f.h, &(struct history_query){.service = "a", .upto = 4},
			2, &from),
		0);
	ck_assert_uint_eq(from, 3);
	teardown(&f);
}
END_TEST

/* history_seq_at_time: the first event at or after a time. */
START_TEST(seq_at_a_time)
{
	struct fixture f;
	uint64_t seq;

	setup(&f);
	ck_assert_int_eq(history_seq_at_time(f.h, 5, &seq), 0);
	ck_assert_uint_eq(seq, 1); /* empty */
	for (int i = 1; i <= 9; i++)
		ck_assert_int_eq(
			history_batch_add(f.b,
					  &(struct history_record){
						  .kind = "daemon.reloaded",
						  .time = i * 100,
					  },
					  NULL, NULL),
			0);
	commit(&f);
	/* A gap in the seqs: 4 and 5 are gone, as retention leaves them. */
	ck_assert_int_eq(
		db_exec(f.db, "DELETE FROM events WHERE seq IN (4, 5)"), 0);
	ck_assert_int_eq(history_seq_at_time(f.h, 0, &seq), 0);
	ck_assert_uint_eq(seq, 1);
	ck_assert_int_eq(history_seq_at_time(f.h, 100, &seq), 0);
	ck_assert_uint_eq(seq, 1);
	ck_assert_int_eq(history_seq_at_time(f.h, 101, &seq), 0);
	ck_assert_uint_eq(seq, 2);
	ck_assert_int_eq(history_seq_at_time(f.h, 350, &seq), 0);
	ck_assert_int_ge(seq, 4); /* 4 and 5 are gone: reading from 4 .. */
	ck_assert_int_le(seq, 6); /* .. or 6 gives event 6 first */
	ck_assert_int_eq(history_seq_at_time(f.h, 600, &seq), 0);
	ck_assert_int_ge(seq, 4);
	ck_assert_int_le(seq, 6);
	ck_assert_int_eq(history_seq_at_time(f.h, 601, &seq), 0);
	ck_assert_uint_eq(seq, 7);
	ck_assert_int_eq(history_seq_at_time(f.h, 900, &seq), 0);
	ck_assert_uint_eq(seq, 9);
	ck_assert_int_eq(history_seq_at_time(f.h, 901, &seq), 0);
	ck_assert_uint_eq(seq, 10); /* none: past the last */
	teardown(&f);
}
END_TEST

static int follow_read_cb(void *arg, const struct history_event *ev)
{
	struct follower *fl = arg;

	ck_assert_uint_lt(fl->n, 256);
	fl->seen[fl->n++] = ev->seq;
	return 0;
}

static void follow_hook(void *arg, const struct history_event *ev, size_t n)
{
	struct follower *fl = arg;

	if (!fl->live)
		return; /* still paging the backlog from the database */
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_ge(ev[i].seq, fl->cursor);
		fl->seen[fl->n++] = ev[i].seq;
		fl->cursor = ev[i].seq + 1;
	}
}

/* Page the backlog; switch to the hook once caught up. */
static void follow_page(struct follower *fl)
{
	uint64_t next;
	int rc;

	if (fl->live)
		return;
	rc = history_read(
		fl->f->h,
		&(struct history_query){.from = fl->cursor, .limit = 3},
		follow_read_cb, fl, &next);
	ck_assert_int_ge(rc, 0);
	fl->cursor = next;
	if (fl->cursor > history_last_seq(fl->f->h))
		fl->live = true;
}

START_TEST(follow_without_gap_or_duplicate)
{
	struct fixture f;
	struct follower fl = {.cursor = 1};
	uint64_t total = 0;

	setup(&f);
	fl.f = &f;
	history_set_commit_hook(f.h, follow_hook, &fl);
	fill_history(&f); /* 10 events of backlog */
	/* Commits interleave with the paging, as loop turns would. */
	for (int turn = 0; turn < 12; turn++) {
		follow_page(&fl);
		for (int i = 0; i <= turn % 3; i++)
			add(&f, NULL, NULL, "daemon.tick", NULL, NULL);
		commit(&f);
	}
	total = history_last_seq(f.h);
	ck_assert(fl.live);
	ck_assert_uint_eq(fl.n, total);
	for (size_t i = 0; i < fl.n; i++)
		ck_assert_uint_eq(fl.seen[i], i + 1);
	teardown(&f);
}
END_TEST

/* ---- retention
 * ----------------------------------------------------------------------------
 */

/* The configured limits, as the daemon's minutely pass plans them. */
static const struct history_prune_spec configured = {
	.keep_events = -1,
	.keep_age = -1,
};

/* One pass over the configured limits, in steps of max_rows. */
static size_t prune_all(struct fixture *f, size_t max_rows, int64_t now,
			int *steps)
{
	struct history_pruner *pr;
	size_t total = 0, deleted;
	int rc;

	*steps = 0;
	ck_assert_int_eq(history_pruner_new(f->h, &configured, now, &pr), 0);
	do {
		rc = history_pruner_step(pr, max_rows, &deleted);
		ck_assert_msg(rc >= 0, "prune: %d %s", rc, db_errmsg(f->db));
		ck_assert_uint_le(deleted, max_rows);
		total += deleted;
		ck_assert_int_lt(++*steps, 10000);
	} while (rc == 1);
	history_pruner_free(pr);
	return total;
}

START_TEST(prune_by_count_in_steps_sparing_open_calls)
{
	struct fixture f;
	struct history_stats st;
	int steps;

	setup(&f);
	/* An open call first: its events must survive every limit. */
	add(&f, "s", "long", HISTORY_CALL_STARTED, NULL, NULL);
	ck_assert_int_eq(
		history_add_hostcall_started(f.b, "s", "long", 1, "x", NULL),
		0);
	for (int i = 0; i < 48; i++) {
		char call[16];

		snprintf(call, sizeof(call), "c%d", i);
		add(&f, "s", call, HISTORY_CALL_STARTED, NULL, NULL);
		add(&f, "s", call, HISTORY_CALL_RETURNED, NULL, NULL);
	}
	for (int i = 0; i < 5; i++)
		add(&f, "t", NULL, HISTORY_GUEST_STDOUT, "{\"line\":\"x\"}",
		    NULL);
	add(&f, NULL, NULL, "daemon.started", NULL, NULL);
	commit(&f); /* 2 + 96 + 5 + 1 = 104 events */

	history_set_retention(f.h,
			      &(struct history_retention){.keep_events = 10});
	ck_assert_uint_eq(prune_all(&f, 7, db_now_ns(), &steps), 86);
	ck_assert_int_gt(steps, 86 / 7);
	/* s: its newest 10 plus the open call's 2; t and the daemon are
	 * under the limit. */
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "service = 's'"),
			 12);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE call "
				     "= 'long'"),
			 2);
	ck_assert_int_eq(peek(f.dir, "SELECT min(seq) FROM events WHERE "
				     "service = 's' AND call <> 'long'"),
			 89);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "service = 't'"),
			 5);
	/* Calls whose terminal event went are forgotten; open ones stay. */
	ck_assert_int_eq(peek(f.dir, "SELECT count(DISTINCT call) FROM events "
				     "WHERE kind GLOB 'call.*'"),
			 6);
	history_get_stats(f.h, &st);
	ck_assert_uint_eq(st.pruned, 86);
	/* A second pass finds nothing. */
	ck_assert_uint_eq(prune_all(&f, 7, db_now_ns(), &steps), 0);
	/* Sequence numbers are never reused after pruning. */
	add(&f, NULL, NULL, "daemon.tick", NULL, NULL);
	commit(&f);
	ck_assert_uint_eq(history_last_seq(f.h), 105);
	teardown(&f);
}
END_TEST

START_TEST(prune_by_age_and_per_service_limits)
{
	struct fixture f;
	int64_t now = db_now_ns(), day = 86400LL * 1000000000;
	char sha[SHA256_HEX_SIZE];
	bool created;
	int steps;

	setup(&f);
	ck_assert_int_eq(components_add(f.db, "w", 1, NULL, sha, &created), 0);
	{
		struct service_record rec = {
			.name = "keepall", .keep_events = 0, .keep_age = 0};
		struct service_record three = {
			.name = "three", .keep_events = 3, .keep_age = -1};

		snprintf(rec.component, sizeof(rec.component), "%s", sha);
		snprintf(three.component, sizeof(three.component), "%s", sha);
		ck_assert_int_eq(services_create(f.db, &rec), 0);
		ck_assert_int_eq(services_create(f.db, &three), 0);
	}
	/* Ten days of events, one a day, for four services. */
	for (int d = 10; d >= 1; d--) {
		static const char *const svc[] = {"keepall", "three", "plain",
						  NULL};

		for (int i = 0; i < 4; i++) {
			struct history_record r = {
				.service = svc[i],
				.kind = svc[i] ? "service.tick" : "daemon.tick",
				.time = now - d * day,
			};

			ck_assert_int_eq(history_batch_add(f.b, &r, NULL, NULL),
					 0);
		}
	}
	commit(&f);
	/* Defaults: keep five days; "three" keeps three events (and the
	 * default age); "keepall" keeps everything. */
	history_set_retention(
		f.h, &(struct history_retention){.keep_age = 5 * 86400 + 60});
	prune_all(&f, 4, now, &steps);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "service = 'keepall'"),
			 10);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "service = 'three'"),
			 3);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "service = 'plain'"),
			 5);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "service IS NULL"),
			 5);
	/* No default limits: only "three" has one, and it holds. */
	history_set_retention(f.h, &(struct history_retention){0});
	ck_assert_uint_eq(prune_all(&f, 4, now + 100 * day, &steps), 0);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events"), 23);
	teardown(&f);
}
END_TEST

START_TEST(manual_prune)
{
	struct fixture f;
	size_t deleted;

	setup(&f);
	add(&f, "s", "open", HISTORY_CALL_STARTED, NULL, NULL);
	for (int i = 0; i < 20; i++)
		add(&f, i % 2 ? "s" : "t", NULL, "service.tick", NULL, NULL);
	commit(&f); /* 21 events; "open" stays open */
	ck_assert_int_eq(history_prune_before(f.h, "t", 100, 4, &deleted), 1);
	ck_assert_uint_eq(deleted, 4);
	ck_assert_int_eq(history_prune_before(f.h, "t", 100, 4, &deleted), 1);
	ck_assert_int_eq(history_prune_before(f.h, "t", 100, 4, &deleted), 0);
	ck_assert_uint_eq(deleted, 2);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "service = 't'"),
			 0);
	/* All services, before seq 10, never the open call. */
	ck_assert_int_eq(history_prune_before(f.h, NULL, 10, 100, &deleted), 0);
	ck_assert_uint_eq(deleted, 4); /* 3, 5, 7, 9 from s */
	ck_assert_int_eq(peek(f.dir, "SELECT min(seq) FROM events"), 1);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events"), 7);
	teardown(&f);
}
END_TEST

/*
 * Retention never removes the newest event of the history: a new event
 * takes the largest seq plus one, so without it a number would come back.
 */
START_TEST(prune_keeps_the_newest_event)
{
	struct fixture f;
	size_t deleted;
	int steps;

	setup(&f);
	for (int i = 0; i < 6; i++)
		add(&f, "s", NULL, "service.tick", NULL, NULL);
	commit(&f);
	/* Before a seq past the end, in a step larger than what there is. */
	ck_assert_int_eq(history_prune_before(f.h, NULL, 1000, 100, &deleted),
			 0);
	ck_assert_uint_eq(deleted, 5);
	ck_assert_int_eq(peek(f.dir, "SELECT group_concat(seq) FROM events"),
			 6);
	/* Steps of one row end too (the newest is not selected again). */
	add(&f, "s", NULL, "service.tick", NULL, NULL);
	add(&f, "s", NULL, "service.tick", NULL, NULL);
	commit(&f);
	ck_assert_int_eq(history_prune_before(f.h, "s", 1000, 1, &deleted), 1);
	ck_assert_int_eq(history_prune_before(f.h, "s", 1000, 1, &deleted), 1);
	ck_assert_int_eq(history_prune_before(f.h, "s", 1000, 1, &deleted), 0);
	ck_assert_uint_eq(deleted, 0);
	ck_assert_int_eq(peek(f.dir, "SELECT group_concat(seq) FROM events"),
			 8);
	/* A retention pass that keeps nothing keeps it too. */
	add(&f, "s", NULL, "service.tick", NULL, NULL);
	commit(&f);
	history_set_retention(f.h, &(struct history_retention){.keep_events = 0,
							       .keep_age = 1});
	prune_all(&f, 4, db_now_ns() + 86400LL * 1000000000, &steps);
	ck_assert_int_eq(peek(f.dir, "SELECT group_concat(seq) FROM events"),
			 9);
	add(&f, "s", NULL, "service.tick", NULL, NULL);
	commit(&f);
	ck_assert_uint_eq(history_last_seq(f.h), 10);
	ck_assert_int_eq(peek(f.dir, "SELECT max(seq) FROM events"), 10);
	teardown(&f);
}
END_TEST

static size_t pruner_run(struct fixture *f,
			 const struct history_prune_spec *spec, size_t max_rows,
			 int64_t now)
{
	struct history_pruner *pr;
	size_t total = 0, deleted;
	int rc, steps = 0;

	ck_assert_int_eq(history_pruner_new(f->h, spec, now, &pr), 0);
	do {
		rc = history_pruner_step(pr, max_rows, &deleted);
		ck_assert_msg(rc >= 0, "pruner: %d %s", rc, db_errmsg(f->db));
		ck_assert_uint_le(deleted, max_rows);
		total += deleted;
		ck_assert_int_lt(++steps, 10000);
	} while (rc == 1);
	/* A finished pass stays finished. */
	ck_assert_int_eq(history_pruner_step(pr, max_rows, &deleted), 0);
	ck_assert_uint_eq(deleted, 0);
	history_pruner_free(pr);
	return total;
}

START_TEST(pruner_on_request)
{
	struct fixture f;
	struct history_pruner *pr, *bg_pr;
	int64_t now = db_now_ns(), day = 86400LL * 1000000000;
	size_t deleted, bg = 0, fg = 0;
	int rc_bg = 1, rc_fg = 1;

	setup(&f);
	/* Times grow with seq, as retention assumes. */
	ck_assert_int_eq(history_batch_add(f.b,
					   &(struct history_record){
						   .service = "b",
						   .call = "open",
						   .kind = HISTORY_CALL_STARTED,
						   .time = now - 30 * day},
					   NULL, NULL),
			 0);
	for (int i = 0; i < 60; i++) {
		struct history_record r = {
			.service = i % 3 == 0	? "a"
				   : i % 3 == 1 ? "b"
						: NULL,
			.kind = i % 3 == 2 ? "daemon.tick" : "service.tick",
			/* Oldest first, one day apart per round of three. */
			.time = now - (20 - i / 3) * day,
		};

		ck_assert_int_eq(history_batch_add(f.b, &r, NULL, NULL), 0);
	}
	commit(&f); /* a: 20, b: 21 (one open call), daemon: 20 */
	/* No limits configured: "as configured" prunes nothing. */
	history_set_retention(f.h, &(struct history_retention){0});
	ck_assert_uint_eq(pruner_run(&f,
				     &(struct history_prune_spec){
					     .keep_events = -1, .keep_age = -1},
				     3, now),
			  0);
	/* One service, a count that overrides: only "a" shrinks. */
	ck_assert_uint_eq(
		pruner_run(&f,
			   &(struct history_prune_spec){.service = "a",
							.keep_events = 5,
							.keep_age = -1},
			   4, now),
		15);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "service = 'a'"),
			 5);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events"), 46);
	/* Every service and the daemon by age: older than 10 days go,
	 * never the open call. */
	ck_assert_uint_eq(pruner_run(&f,
				     &(struct history_prune_spec){
					     .keep_events = -1,
					     .keep_age = 10 * 86400 + 60},
				     7, now),
			  10 + 10);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "service = 'b'"),
			 11);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "call = 'open'"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "service IS NULL"),
			 10);
	/* Beside a pass over the configured limits, with other limits:
	 * each deletes only what its own limits expire; together the
	 * stricter wins. */
	history_set_retention(f.h,
			      &(struct history_retention){.keep_events = 8});
	ck_assert_int_eq(
		history_pruner_new(f.h,
				   &(struct history_prune_spec){
					   .keep_events = 3, .keep_age = -1},
				   now, &pr),
		0);
	ck_assert_int_eq(history_pruner_new(f.h, &configured, now, &bg_pr), 0);
	while (rc_bg == 1 || rc_fg == 1) {
		if (rc_fg == 1) {
			rc_fg = history_pruner_step(pr, 2, &deleted);
			fg += deleted;
		}
		if (rc_bg == 1) {
			rc_bg = history_pruner_step(bg_pr, 2, &deleted);
			bg += deleted;
		}
		ck_assert_int_ge(rc_fg, 0);
		ck_assert_int_ge(rc_bg, 0);
	}
	history_pruner_free(pr);
	history_pruner_free(bg_pr);
	/* a: 5 -> 3; b: 10 closed + open -> 3 + open; daemon: 10 -> 3. */
	ck_assert_uint_eq(bg + fg, 2 + 7 + 7);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events"), 3 + 4 + 3);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "call = 'open'"),
			 1);
	/* Bad service names are refused. */
	ck_assert_int_eq(
		history_pruner_new(f.h,
				   &(struct history_prune_spec){
					   .service = "", .keep_events = 1},
				   now, &pr),
		-EINVAL);
	ck_assert_ptr_null(pr);
	teardown(&f);
}
END_TEST

/*
 * Issue 18: a call starts a background task and returns; the task goes
 * on writing hostcall.* events under the call's id (the ticker).  Once a
 * pass removed the call's start and end, later passes must still remove
 * those events: the call has ended, they are no open call's.  Rounds of
 * new events, each followed by a pass, keep the table bounded, while an
 * open call beside it keeps every one of its events.
 */
enum prune_way { BY_STEP, BY_PRUNER, BY_SEQ };

static void background_ticks(struct fixture *f, const char *call, int n,
			     uint64_t *hostcall)
{
	for (int i = 0; i < n; i++, ++*hostcall)
		ck_assert_int_eq(i % 2 ? history_add_hostcall_settled(
						 f->b, "s", call, *hostcall,
						 "returned", NULL, NULL)
				       : history_add_hostcall_started(
						 f->b, "s", call, *hostcall,
						 "wait", NULL),
				 0);
}

static void prune_keeping(struct fixture *f, enum prune_way way, uint64_t keep)
{
	size_t deleted;
	int steps, rc;

	switch (way) {
	case BY_STEP:
		history_set_retention(
			f->h, &(struct history_retention){.keep_events = keep});
		prune_all(f, 7, db_now_ns(), &steps);
		break;
	case BY_PRUNER:
		history_set_retention(f->h, &(struct history_retention){0});
		pruner_run(f,
			   &(struct history_prune_spec){.keep_events =
								(int64_t)keep,
							.keep_age = -1},
			   7, db_now_ns());
		break;
	case BY_SEQ:
		steps = 0;
		do {
			rc = history_prune_before(
				f->h, "s", history_last_seq(f->h) + 1 - keep, 7,
				&deleted);
			ck_assert_int_ge(rc, 0);
			ck_assert_int_lt(++steps, 10000);
		} while (rc == 1);
		break;
	}
}

START_TEST(prune_converges_on_background_work_of_an_ended_call)
{
	static const char *const way_name[] = {"step", "pruner", "seq"};
	enum prune_way way = (enum prune_way)_i;
	struct fixture f;
	uint64_t hostcall = 1;
	long long ticks, open, total;
	uint64_t open_call;

	setup(&f);
	/* start() returns at once; its task ticks on. */
	add(&f, "s", "tick", HISTORY_CALL_STARTED, NULL, NULL);
	background_ticks(&f, "tick", 2, &hostcall);
	add(&f, "s", "tick", HISTORY_CALL_RETURNED, NULL, NULL);
	/* A call that has not ended, with background work of its own. */
	add(&f, "s", "open", HISTORY_CALL_STARTED, NULL, NULL);
	open_call = hostcall;
	background_ticks(&f, "open", 1, &hostcall);
	background_ticks(&f, "tick", 100, &hostcall);
	commit(&f);
	for (int round = 0; round < 20; round++) {
		background_ticks(&f, "tick", 100, &hostcall);
		ck_assert_int_eq(history_add_hostcall_started(f.b, "s", "open",
							      hostcall++, "x",
							      NULL),
				 0);
		commit(&f);
		prune_keeping(&f, way, 20);
		ticks = peek(f.dir, "SELECT count(*) FROM events WHERE "
				    "call = 'tick'");
		open = peek(f.dir, "SELECT count(*) FROM events WHERE "
				   "call = 'open'");
		total = peek(f.dir, "SELECT count(*) FROM events");
		/* Bounded: at most the limit of the ended call's events
		 * (the first pass took its start and end), and every one
		 * of the open call's. */
		ck_assert_msg(ticks <= 20,
			      "%s, round %d: %lld events of the "
			      "ended call",
			      way_name[way], round, ticks);
		ck_assert_int_eq(open, 1 + 1 + round + 1);
		ck_assert_int_le(total, 20 + open);
	}
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "call = 'tick' AND kind GLOB 'call.*'"),
			 0);
	ck_assert_int_eq(peek(f.dir, "SELECT count(*) FROM events WHERE "
				     "call = 'open' AND kind = 'call.started'"),
			 1);
	{
		char sql[96];

		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM events WHERE call = 'open' "
			 "AND payload GLOB '*\"hostcall\":%llu[,}]*'",
			 (unsigned long long)open_call);
		ck_assert_int_eq(peek(f.dir, sql), 1);
	}
	/* The open call is still open; recovery at start closes it (and
	 * nothing else: the ended call's start is gone, not open). */
	{
		uint64_t n;

		ck_assert_int_eq(history_open_calls(f.h, &n), 0);
		ck_assert_uint_eq(n, 1);
		ck_assert_int_eq(history_recover_interrupted(f.h, "restart"),
				 1);
		ck_assert_int_eq(history_open_calls(f.h, &n), 0);
		ck_assert_uint_eq(n, 0);
	}
	/* Ended now: the next pass may take its events too. */
	prune_keeping(&f, way, 20);
	ck_assert_int_le(peek(f.dir, "SELECT count(*) FROM events"), 20);
	teardown(&f);
}
END_TEST

/* A pass on request that explains, run to its end: what it removed
 * and what it kept. */
static size_t pruner_explained(struct fixture *f, int64_t keep_events,
			       struct history_prune_kept *kept)
{
	struct history_pruner *pr;
	size_t total = 0, deleted;
	int rc, steps = 0;

	ck_assert_int_eq(history_pruner_new(f->h,
					    &(struct history_prune_spec){
						    .keep_events = keep_events,
						    .keep_age = -1,
						    .explain = true},
					    db_now_ns(), &pr),
			 0);
	do {
		rc = history_pruner_step(pr, 3, &deleted);
		ck_assert_int_ge(rc, 0);
		total += deleted;
		ck_assert_int_lt(++steps, 10000);
	} while (rc == 1);
	ck_assert_ptr_nonnull(history_pruner_kept(pr));
	*kept = *history_pruner_kept(pr);
	history_pruner_free(pr);
	return total;
}

START_TEST(pruner_says_what_it_kept)
{
	struct fixture f;
	struct history_prune_kept kept;
	struct history_pruner *pr;
	uint64_t hostcall = 1;

	setup(&f);
	add(&f, "s", "open", HISTORY_CALL_STARTED, NULL, NULL);
	background_ticks(&f, "open", 5, &hostcall);
	for (int i = 0; i < 10; i++)
		add(&f, "s", NULL, "service.tick", NULL, NULL);
	for (int i = 0; i < 3; i++)
		add(&f, "t", NULL, "service.tick", NULL, NULL);
	commit(&f);
	/* s keeps 4 ticks and the open call's 6; 6 ticks go. */
	ck_assert_uint_eq(pruner_explained(&f, 4, &kept), 6);
	ck_assert_uint_eq(kept.open, 6);
	ck_assert_uint_eq(kept.n_calls, 1);
	ck_assert_str_eq(kept.calls[0], "open");
	/* Again: nothing goes, and the pass says why: s's newest 4 and
	 * t's 3 are within the limit, the open call holds 6 past it. */
	ck_assert_uint_eq(pruner_explained(&f, 4, &kept), 0);
	ck_assert_uint_eq(kept.limits, 4 + 3);
	ck_assert_uint_eq(kept.open, 6);
	ck_assert_uint_eq(kept.n_calls, 1);
	ck_assert(!kept.more_calls);
	/* Nine more open calls behind the limit: the first few are named. */
	for (int i = 0; i < 9; i++) {
		char call[8];

		snprintf(call, sizeof(call), "c%d", i);
		add(&f, "s", call, HISTORY_CALL_STARTED, NULL, NULL);
	}
	for (int i = 0; i < 4; i++)
		add(&f, "s", NULL, "service.tick", NULL, NULL);
	commit(&f);
	ck_assert_uint_eq(pruner_explained(&f, 4, &kept), 4);
	ck_assert_uint_eq(pruner_explained(&f, 4, &kept), 0);
	ck_assert_uint_eq(kept.limits, 4 + 3);
	ck_assert_uint_eq(kept.open, 6 + 9);
	ck_assert_uint_eq(kept.n_calls, HISTORY_PRUNE_CALLS);
	ck_assert_str_eq(kept.calls[0], "open");
	ck_assert_str_eq(kept.calls[1], "c0");
	ck_assert_str_eq(kept.calls[HISTORY_PRUNE_CALLS - 1], "c6");
	ck_assert(kept.more_calls);
	/* With no limit at all, nothing is past one. */
	history_set_retention(f.h, &(struct history_retention){0});
	ck_assert_uint_eq(pruner_explained(&f, 0, &kept), 0);
	ck_assert_uint_eq(kept.limits + kept.open + kept.n_calls, 0);
	/* A pass that does not explain has nothing to say. */
	ck_assert_int_eq(
		history_pruner_new(f.h,
				   &(struct history_prune_spec){
					   .keep_events = 4, .keep_age = -1},
				   db_now_ns(), &pr),
		0);
	ck_assert_ptr_null(history_pruner_kept(pr));
	history_pruner_free(pr);
	teardown(&f);
}
END_TEST

/* ---- typed payloads and guest output
 * --------------------------------------------------------- */

START_TEST(typed_payloads)
{
	struct fixture f;

	setup(&f);
	ck_assert_int_eq(
		history_add_call_started(f.b, "s", "c1", "wasi:cli/run#run",
					 "[1,\"two\"]",
					 &(struct history_caller){.valid = true,
								  .pid = 42,
								  .uid = 1000,
								  .gid = 100},
					 NULL, NULL),
		0);
	ck_assert_int_eq(history_add_store_event(f.b, HISTORY_STORE_CREATED,
						 "s", "abc", "{\"fuel\":1}"),
			 0);
	ck_assert_int_eq(history_add_store_event(f.b, HISTORY_STORE_POISONED,
						 "s", NULL, NULL),
			 0);
	ck_assert_int_eq(history_add_hostcall_settled(f.b, "s", "c1", 3,
						      "trapped", NULL, "no"),
			 0);
	/* A raw fragment that is not JSON makes the payload invalid. */
	ck_assert_int_eq(history_add_call_started(f.b, "s", "c2", "x", "[1,",
						  NULL, NULL, NULL),
			 -EINVAL);
	commit(&f);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, "
				     "'$.caller.uid') FROM events WHERE seq = "
				     "1"),
			 1000);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, "
				     "'$.arguments[0]') FROM events WHERE seq "
				     "= 1"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, "
				     "'$.export') = 'wasi:cli/run#run' FROM "
				     "events WHERE seq = 1"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, "
				     "'$.detail.fuel') FROM events WHERE seq "
				     "= 2"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT payload = '{}' FROM events WHERE "
				     "seq = 3"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, "
				     "'$.hostcall') FROM events WHERE seq = 4"),
			 3);
	ck_assert_int_eq(peek(f.dir, "SELECT payload = '{\"hostcall\":3,"
				     "\"outcome\":\"trapped\",\"message\":"
				     "\"no\"}' FROM events WHERE seq = 4"),
			 1);
	teardown(&f);
}
END_TEST

/* The bounded form of an oversize value: its size, digest and head,
 * cut on a character boundary, and an event carrying it fits. */
START_TEST(bounded_value_form)
{
	size_t len = HISTORY_VALUE_MAX + 1;
	char *text = malloc(len + 1), *form, *head;
	char hex[SHA256_HEX_SIZE];
	struct fixture f;

	ck_assert_ptr_nonnull(text);
	/* ["aaa...é..."]: a two-byte character straddles the head's end */
	memset(text, 'a', len);
	text[0] = '[';
	text[1] = '"';
	text[HISTORY_VALUE_HEAD - 1] = (char)0xc3;
	text[HISTORY_VALUE_HEAD] = (char)0xa9;
	text[len - 2] = '"';
	text[len - 1] = ']';
	text[len] = '\0';
	form = history_value_bounded(text, len);
	ck_assert_ptr_nonnull(form);
	ck_assert(payload_valid_object(form, strlen(form)));
	ck_assert_uint_lt(strlen(form), HISTORY_VALUE_HEAD + 256);
	sha256_hex(text, len, hex);
	head = malloc(HISTORY_VALUE_HEAD + 256);
	ck_assert_ptr_nonnull(head);
	/* the head: the text up to the character it would have split */
	snprintf(head, HISTORY_VALUE_HEAD + 256,
		 "{\"oversize\":true,\"bytes\":%zu,\"sha256\":\"%s\","
		 "\"head\":\"[\\\"%.*s\"}",
		 len, hex, HISTORY_VALUE_HEAD - 3, text + 2);
	ck_assert_str_eq(form, head);
	free(head);
	/* A short text is kept whole in the head. */
	free(form);
	form = history_value_bounded("[1]", 3);
	ck_assert_ptr_nonnull(form);
	ck_assert_ptr_nonnull(strstr(form, "\"bytes\":3,"));
	ck_assert_ptr_nonnull(strstr(form, "\"head\":\"[1]\"}"));
	free(form);

	setup(&f);
	/* An event carrying the bounded form is taken and reads back. */
	form = history_value_bounded(text, len);
	ck_assert_int_eq(history_add_call_started(f.b, "s", "c1", "f", form,
						  NULL, NULL, NULL),
			 0);
	free(form);
	commit(&f);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, "
				     "'$.arguments.bytes') FROM events WHERE "
				     "seq = 1"),
			 (long long)len);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, "
				     "'$.arguments.oversize') FROM events "
				     "WHERE seq = 1"),
			 1);
	teardown(&f);
	free(text);
}
END_TEST

START_TEST(guest_output_lines)
{
	struct fixture f;
	struct guest_output g;
	char *longline = malloc(HISTORY_LINE_MAX + 100);
	const char *chunks[] = {"hel", "lo\nwor", "ld\n\n",
				"tab\there \xff\x01", "\nno newline"};

	setup(&f);
	ck_assert_ptr_nonnull(longline);
	ck_assert_int_eq(guest_output_init(&g, "s", 3), -EINVAL);
	ck_assert_int_eq(guest_output_init(&g, "s", 1), 0);
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
		ck_assert_int_eq(guest_output_feed(&g, f.b, chunks[i],
						   strlen(chunks[i])),
				 0);
	ck_assert_uint_eq(history_batch_count(f.b), 4);
	/* A line past the bound: cut, marked, the rest dropped. */
	memset(longline, 'z', HISTORY_LINE_MAX + 100);
	ck_assert_int_eq(guest_output_feed(&g, f.b, "\n", 1), 0); /* 5 */
	ck_assert_int_eq(guest_output_feed(&g, f.b, longline, 3000), 0);
	ck_assert_int_eq(guest_output_feed(&g, f.b, longline,
					   HISTORY_LINE_MAX + 100 - 3000),
			 0);
	ck_assert_uint_eq(history_batch_count(f.b), 6);
	ck_assert_int_eq(guest_output_feed(&g, f.b, "zz\nafter", 8), 0);
	ck_assert_uint_eq(history_batch_count(f.b), 6);
	/* Exactly a line's worth, then its newline: not truncated. */
	ck_assert_int_eq(guest_output_feed(&g, f.b, "\n", 1), 0); /* "after" */
	ck_assert_int_eq(guest_output_feed(&g, f.b, longline, HISTORY_LINE_MAX),
			 0);
	ck_assert_int_eq(guest_output_feed(&g, f.b, "\n", 1), 0);
	ck_assert_int_eq(guest_output_feed(&g, f.b, "tail", 4), 0);
	ck_assert_int_eq(guest_output_flush(&g, f.b), 0);
	ck_assert_uint_eq(history_batch_count(f.b), 9);
	guest_output_fini(&g);
	commit(&f);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, '$.line') "
				     "= 'hello' FROM events WHERE seq = 1"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, '$.line') "
				     "= 'world' FROM events WHERE seq = 2"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, '$.line') "
				     "= '' FROM events WHERE seq = 3"),
			 1);
	/* Invalid UTF-8 replaced, control characters escaped. */
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, '$.line') "
				     "= 'tab' || char(9) || 'here ' || "
				     "char(65533) || char(1) FROM events "
				     "WHERE seq = 4"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, '$.line') "
				     "= 'no newline' FROM events WHERE seq = "
				     "5"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT length(json_extract(payload, "
				     "'$.line')) FROM events WHERE seq = 6"),
			 HISTORY_LINE_MAX);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, "
				     "'$.truncated') FROM events WHERE seq = "
				     "6"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, '$.line') "
				     "= 'after' FROM events WHERE seq = 7"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT json_extract(payload, "
				     "'$.truncated') IS NULL AND length("
				     "json_extract(payload, '$.line')) FROM "
				     "events WHERE seq = 8"),
			 1);
	ck_assert_int_eq(peek(f.dir, "SELECT kind = 'guest.stdout' AND "
				     "json_extract(payload, '$.line') = "
				     "'tail' FROM events WHERE seq = 9"),
			 1);
	/* A direct long line is cut on a UTF-8 boundary. */
	memset(longline, 'a', HISTORY_LINE_MAX + 100);
	memcpy(longline + HISTORY_LINE_MAX - 1, "\xc3\xa9", 2);
	ck_assert_int_eq(history_add_guest_line(f.b, "s", 2, longline,
						HISTORY_LINE_MAX + 100, false),
			 0);
	commit(&f);
	ck_assert_int_eq(peek(f.dir, "SELECT length(CAST(json_extract("
				     "payload, '$.line') AS BLOB)) FROM "
				     "events WHERE seq = 10"),
			 HISTORY_LINE_MAX - 1);
	free(longline);
	teardown(&f);
}
END_TEST

/* ---- payload_valid_object against SQLite's json_valid ---------------------
 */

static const char *const json_cases[][2] = {
	{"{}", "1"},
	{" {\"a\": [1, -0.5e+3, true, false, null, \"x\\u00e9\"]} ", "1"},
	{"{\"a\":{\"b\":{\"c\":[[],{}]}}}", "1"},
	{"{\"s\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}", "1"},
	{"[]", "0"},
	{"1", "0"},
	{"\"x\"", "0"},
	{"", "0"},
	{"{", "0"},
	{"{}}", "0"},
	{"{} {}", "0"},
	{"{\"a\"}", "0"},
	{"{\"a\":}", "0"},
	{"{\"a\":1,}", "0"},
	{"{a:1}", "0"},
	{"{\"a\":01}", "0"},
	{"{\"a\":1.}", "0"},
	{"{\"a\":.5}", "0"},
	{"{\"a\":+1}", "0"},
	{"{\"a\":1e}", "0"},
	{"{\"a\":tru}", "0"},
	{"{\"a\":\"\\x\"}", "0"},
	{"{\"a\":\"\\u12\"}", "0"},
	{"{\"a\":\"tab\there\"}", "0"},
	{"{\"a\":[1 2]}", "0"},
	{"{\"a\":[1,]}", "0"},
	{"{\"a\":]}", "0"},
	{"{\"a\":'x'}", "0"},
};

static bool sqlite_says_object(sqlite3_stmt *st, const char *text, size_t n)
{
	bool ok;

	sqlite3_bind_text(st, 1, text, (int)n, SQLITE_STATIC);
	ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
	ok = sqlite3_column_int(st, 0) == 1;
	sqlite3_reset(st);
	return ok;
}

/* The builder's digits and keys (payload.c writes both by hand). */
START_TEST(payload_integers)
{
	struct payload p;
	char *text;

	payload_begin(&p);
	payload_int(&p, "zero", 0);
	payload_int(&p, "neg", -1);
	payload_int(&p, "min", INT64_MIN);
	payload_int(&p, "max", INT64_MAX);
	payload_int(&p, "mid", 1234567890);
	payload_object(&p, "o");
	payload_int(&p, "ten", 10);
	/* Keys that need escaping, or too long for the one-piece path. */
	payload_int(&p, "we\"ird\n", 1);
	payload_int(&p,
		    "a-key-of-seventy-characters-"
		    "-----------------------------------------x",
		    2);
	payload_end_object(&p);
	text = payload_finish(&p);
	ck_assert_ptr_nonnull(text);
	ck_assert_str_eq(text, "{\"zero\":0,\"neg\":-1,"
			       "\"min\":-9223372036854775808,"
			       "\"max\":9223372036854775807,"
			       "\"mid\":1234567890,\"o\":{\"ten\":10,"
			       "\"we\\\"ird\\n\":1,"
			       "\"a-key-of-seventy-characters-"
			       "-----------------------------------------x\":"
			       "2}}");
	ck_assert(payload_valid_object(text, strlen(text)));
	free(text);
}
END_TEST

START_TEST(payload_check_agrees_with_sqlite)
{
	static const char alphabet[] = "{}[]:,\"\\ 0123456789-+.eEtruefalsn"
				       "ux\t\n";
	static const char *const seeds[] = {
		("{\"export\":\"add\",\"arguments\":[40,2],\"caller\":{"
		 "\"pid\":4242,\"uid\":1000,\"gid\":1000}}"),
		"{\"results\":[{\"ok\":-1.5e-3},null,true,\"\\u0041\"]}",
		"{\"a\":{\"b\":[[[{}]]]}}",
	};
	sqlite3 *db;
	sqlite3_stmt *st;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char buf[256];
	size_t agree = 0, valid = 0;
	char *deep;

	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db,
					    "SELECT CASE WHEN json_valid(?1) "
					    "THEN json_type(?1) = 'object' "
					    "ELSE 0 END",
					    -1, &st, NULL),
			 SQLITE_OK);
	for (size_t i = 0; i < sizeof(json_cases) / sizeof(json_cases[0]);
	     i++) {
		const char *t = json_cases[i][0];
		bool want = json_cases[i][1][0] == '1';

		ck_assert_msg(payload_valid_object(t, strlen(t)) == want, "%s",
			      t);
		ck_assert_msg(sqlite_says_object(st, t, strlen(t)) == want,
			      "sqlite: %s", t);
	}
	/* Mutants of real payloads: the two must agree on every one. */
	for (int round = 0; round < 30000; round++) {
		const char *seed = seeds[round % 3];
		size_t n = strlen(seed), edits;

		memcpy(buf, seed, n);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		edits = 1 + x % 3;
		for (size_t k = 0; k < edits; k++) {
			size_t at, op;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			at = (size_t)(x >> 8) % (n + 1);
			op = x % 3;
			if (op == 0 && at < n) { /* replace */
				buf[at] = alphabet[(x >> 20) %
						   (sizeof(alphabet) - 1)];
			} else if (op == 1 &&
				   n + 1 < sizeof(buf)) { /* insert */
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = alphabet[(x >> 20) %
						   (sizeof(alphabet) - 1)];
				n++;
			} else if (at < n) { /* delete */
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			}
		}
		{
			bool ours = payload_valid_object(buf, n);
			bool theirs = sqlite_says_object(st, buf, n);

			ck_assert_msg(ours == theirs,
				      "'%.*s': ours %d, sqlite %d", (int)n, buf,
				      ours, theirs);
			agree++;
			valid += ours;
		}
	}
	ck_assert_uint_eq(agree, 30000);
	ck_assert_uint_gt(valid, 100); /* the mutants cover both answers */
	ck_assert_uint_lt(valid, 29000);
	/* Depth: the limit and one past it. */
	deep = malloc(2 * PAYLOAD_DEPTH_MAX + 16);
	ck_assert_ptr_nonnull(deep);
	for (size_t depth = PAYLOAD_DEPTH_MAX; depth <= PAYLOAD_DEPTH_MAX + 1;
	     depth++) {
		size_t n = 0;

		deep[n++] = '{';
		memcpy(deep + n, "\"a\":", 4), n += 4;
		for (size_t k = 1; k < depth; k++)
			deep[n++] = '[';
		for (size_t k = 1; k < depth; k++)
			deep[n++] = ']';
		deep[n++] = '}';
		ck_assert_int_eq(payload_valid_object(deep, n),
				 depth <= PAYLOAD_DEPTH_MAX);
	}
	free(deep);
	sqlite3_finalize(st);
	sqlite3_close(db);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("history");
	TCase *commit_tc = tcase_create("commit");
	TCase *read_tc = tcase_create("read");
	TCase *prune_tc = tcase_create("retention");

	tcase_set_timeout(commit_tc, 60);
	tcase_add_test(commit_tc, commit_assigns_seqs_in_order);
	tcase_add_test(commit_tc, group_commit_of_1000_is_one_transaction);
	tcase_add_test(commit_tc, exactly_one_terminal_event_per_call);
	tcase_add_test(commit_tc, multi_row_inserts_keep_the_rules);
	tcase_add_test(commit_tc, checks_at_add_time);
	tcase_add_test(commit_tc, disk_full_keeps_the_batch);
	tcase_add_test(commit_tc, disk_full_then_give_up);
	tcase_add_test(commit_tc, recovery_closes_open_calls);
	tcase_add_test(commit_tc, recovery_under_disk_full_writes_nothing);
	tcase_add_test(commit_tc, typed_payloads);
	tcase_add_test(commit_tc, bounded_value_form);
	tcase_add_test(commit_tc, guest_output_lines);
	tcase_add_test(commit_tc, payload_integers);
	tcase_add_test(commit_tc, payload_check_agrees_with_sqlite);
	tcase_add_test(read_tc, read_with_filters);
	tcase_add_test(read_tc, tail_of_a_range);
	tcase_add_test(read_tc, seq_at_a_time);
	tcase_add_test(read_tc, follow_without_gap_or_duplicate);
	tcase_set_timeout(prune_tc, 60);
	tcase_add_test(prune_tc, prune_by_count_in_steps_sparing_open_calls);
	tcase_add_test(prune_tc, prune_by_age_and_per_service_limits);
	tcase_add_test(prune_tc, manual_prune);
	tcase_add_test(prune_tc, prune_keeps_the_newest_event);
	tcase_add_test(prune_tc, pruner_on_request);
	tcase_add_loop_test(prune_tc,
			    prune_converges_on_background_work_of_an_ended_call,
			    BY_STEP, BY_SEQ + 1);
	tcase_add_test(prune_tc, pruner_says_what_it_kept);
	suite_add_tcase(s, commit_tc);
	suite_add_tcase(s, read_tc);
	suite_add_tcase(s, prune_tc);
	return s;
}
