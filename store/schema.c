/*
 * schema.c - the migrations of schema.h, in order.  A migration is
 * plain SQL run inside the step's transaction; once released, a step is
 * never edited: later changes are new steps.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none: the migrations are fixed SQL text.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "store/db.h"
#include "store/schema.h"

/* The terminal kinds of a call, as an SQL list (see store/history.h). */
#define TERMINAL_KINDS                                                         \
	"('call.returned', 'call.trapped', 'call.cancelled', 'call.failed', "  \
	"'call.interrupted')"

struct migration {
	int version;
	const char *title;
	const char *sql;
};

static const char v1[] =
	/* Content-addressed component binaries. */
	"CREATE TABLE components ("
	" sha256 TEXT NOT NULL PRIMARY KEY"
	"  CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),"
	" blob BLOB NOT NULL,"
	" size INTEGER NOT NULL CHECK (size = length(blob)),"
	" added INTEGER NOT NULL," /* unix ns */
	" name TEXT UNIQUE CHECK (name IS NULL OR length(name) > 0));"
	/* A service: a component instantiated into a long-lived store. */
	"CREATE TABLE services ("
	" name TEXT NOT NULL PRIMARY KEY CHECK (length(name) > 0),"
	" component TEXT NOT NULL REFERENCES components(sha256)"
	"  ON DELETE RESTRICT,"
	" config TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(config)"
	"  AND json_type(config) = 'object'"
	"  AND coalesce(json_type(config, '$.env'), 'object') = 'object'"
	"  AND coalesce(json_type(config, '$.args'), 'array') = 'array'"
	"  AND coalesce(json_type(config, '$.preopens'), 'array') = 'array'"
	"  AND coalesce(json_type(config, '$.limits'), 'object') = 'object'),"
	" autostart INTEGER NOT NULL DEFAULT 1 CHECK (autostart IN (0, 1)),"
	" state TEXT NOT NULL DEFAULT 'stopped'"
	"  CHECK (state IN ('stopped', 'running', 'poisoned', 'failed')),"
	" created INTEGER NOT NULL,"
	" updated INTEGER NOT NULL);"
	"CREATE INDEX services_component ON services(component);"
	/*
	 * The history.  AUTOINCREMENT: a sequence number is never reused,
	 * not even after the newest events are pruned, so a reader's
	 * cursor stays meaningful forever.
	 */
	"CREATE TABLE events ("
	" seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" time INTEGER NOT NULL," /* unix ns */
	" service TEXT,"
	" call TEXT,"
	" kind TEXT NOT NULL,"
	" payload TEXT NOT NULL DEFAULT '{}'"
	"  CHECK (json_valid(payload) AND json_type(payload) = 'object'),"
	" CHECK (kind NOT GLOB 'call.*' OR (call IS NOT NULL"
	"  AND service IS NOT NULL)));"
	"CREATE INDEX events_service ON events(service, seq);"
	"CREATE INDEX events_call ON events(call, seq) WHERE call IS NOT NULL;"
	"CREATE INDEX events_kind ON events(kind, seq);"
	"CREATE TRIGGER events_append_only BEFORE UPDATE ON events BEGIN"
	" SELECT RAISE(ABORT, 'hostel: events are append-only');"
	"END;";

static const char v2[] =
	/*
	 * One row per call: `ended` is NULL while the call is open.  The
	 * triggers make the history itself refuse a second call.started
	 * and a terminal event that has no open call, whoever writes.
	 */
	"CREATE TABLE calls ("
	" call TEXT NOT NULL PRIMARY KEY,"
	" service TEXT NOT NULL,"
	" started INTEGER NOT NULL," /* seq of call.started */
	" ended INTEGER,"	     /* seq of the terminal event */
	" outcome TEXT) WITHOUT ROWID;"
	"CREATE INDEX calls_open ON calls(started) WHERE ended IS NULL;"
	/* Backfill from version 1, which did not enforce the rule: the
	 * first start and the first terminal event of a call count. */
	"INSERT INTO calls (call, service, started)"
	" SELECT call, service, min(seq) FROM events"
	" WHERE kind = 'call.started' GROUP BY call;"
	"UPDATE calls SET ended = (SELECT min(seq) FROM events e"
	"  WHERE e.call = calls.call AND e.kind IN " TERMINAL_KINDS
	"  AND e.seq > calls.started);"
	"UPDATE calls SET outcome = (SELECT kind FROM events e"
	"  WHERE e.seq = calls.ended) WHERE ended IS NOT NULL;"
	"CREATE TRIGGER calls_start_once BEFORE INSERT ON events"
	" WHEN NEW.kind = 'call.started' BEGIN"
	" SELECT RAISE(ABORT, 'hostel: call already started')"
	"  WHERE EXISTS (SELECT 1 FROM calls WHERE call = NEW.call);"
	"END;"
	"CREATE TRIGGER calls_end_once BEFORE INSERT ON events"
	" WHEN NEW.kind IN " TERMINAL_KINDS " BEGIN"
	" SELECT RAISE(ABORT, 'hostel: call never started')"
	"  WHERE NOT EXISTS (SELECT 1 FROM calls WHERE call = NEW.call);"
	" SELECT RAISE(ABORT, 'hostel: call already ended')"
	"  WHERE EXISTS (SELECT 1 FROM calls WHERE call = NEW.call"
	"   AND ended IS NOT NULL);"
	"END;"
	"CREATE TRIGGER calls_started AFTER INSERT ON events"
	" WHEN NEW.kind = 'call.started' BEGIN"
	" INSERT INTO calls (call, service, started)"
	"  VALUES (NEW.call, NEW.service, NEW.seq);"
	"END;"
	"CREATE TRIGGER calls_ended AFTER INSERT ON events"
	" WHEN NEW.kind IN " TERMINAL_KINDS " BEGIN"
	" UPDATE calls SET ended = NEW.seq, outcome = NEW.kind"
	"  WHERE call = NEW.call;"
	"END;"
	/* A call is forgotten once its terminal event is pruned. */
	"CREATE TRIGGER calls_pruned AFTER DELETE ON events"
	" WHEN OLD.kind IN " TERMINAL_KINDS " BEGIN"
	" DELETE FROM calls WHERE call = OLD.call AND ended = OLD.seq;"
	"END;"
	/* Per-service retention; NULL: the daemon's defaults. */
	"ALTER TABLE services ADD COLUMN keep_events INTEGER"
	" CHECK (keep_events IS NULL OR keep_events >= 0);"
	"ALTER TABLE services ADD COLUMN keep_age INTEGER" /* seconds */
	" CHECK (keep_age IS NULL OR keep_age >= 0);";

static const char v3[] =
	/* The uid a service belongs to (daemon/access.h); NULL: nobody's. */
	"ALTER TABLE services ADD COLUMN owner INTEGER"
	" CHECK (owner IS NULL OR (owner >= 0 AND owner < 4294967295));";

static const char v4[] =
	/*
	 * Appending is the hot path and this index cost a third of it
	 * (bench/history-append: about 46,000 -> 70,000 events per CPU
	 * second without it).  Reads filtered by kind scan the seq range
	 * instead; a read examines at most a bounded range and says where
	 * to go on.
	 */
	"DROP INDEX IF EXISTS events_kind;";

static const char v5[] =
	/*
	 * Appending, again: the calls table and its triggers cost about
	 * two thirds of an event (bench/history-append: 17 -> 4 us of CPU
	 * per event with this layout).  The exactly-once rule is now one
	 * unique index: per call, at most one row whose kind is
	 * call.started and at most one other call.* row (a terminal
	 * event).  That a terminal event has a start is the writer's check
	 * (store/history.c).  The payload is no longer re-checked as JSON
	 * here: history_batch_add() checks it before it is written.
	 */
	"CREATE TABLE events_v5 ("
	" seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" time INTEGER NOT NULL,"
	" service TEXT,"
	" call TEXT,"
	" kind TEXT NOT NULL,"
	" payload TEXT NOT NULL DEFAULT '{}',"
	" CHECK (kind NOT GLOB 'call.*' OR (call IS NOT NULL"
	"  AND service IS NOT NULL)));"
	"CREATE UNIQUE INDEX events_call_once ON events_v5(call,"
	" kind = 'call.started') WHERE kind GLOB 'call.*';"
	/* Version 1 did not enforce the rule: the first of each counts. */
	"INSERT OR IGNORE INTO events_v5 (seq, time, service, call, kind,"
	" payload) SELECT seq, time, service, call, kind, payload"
	" FROM events ORDER BY seq;"
	/* Keep the sequence where it was, even past pruned newest events. */
	"INSERT INTO sqlite_sequence (name, seq) SELECT 'events_v5', 0"
	" WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence"
	"  WHERE name = 'events_v5');"
	"UPDATE sqlite_sequence SET seq = max(seq, coalesce((SELECT seq"
	" FROM sqlite_sequence WHERE name = 'events'), 0))"
	" WHERE name = 'events_v5';"
	"DROP TABLE calls;"
	"DROP TABLE events;"
	"ALTER TABLE events_v5 RENAME TO events;"
	"CREATE INDEX events_service ON events(service, seq);"
	/* The other events of a call (hostcall.*, ...); call.* ones are
	 * found through events_call_once. */
	"CREATE INDEX events_call ON events(call, seq)"
	" WHERE call IS NOT NULL AND kind NOT GLOB 'call.*';"
	"CREATE TRIGGER events_append_only BEFORE UPDATE ON events BEGIN"
	" SELECT RAISE(ABORT, 'hostel: events are append-only');"
	"END;";

static const char v6[] =
	/*
	 * Appending, once more: AUTOINCREMENT wrote sqlite_sequence in
	 * every INSERT statement, one more page in every commit's WAL
	 * frames (bench/history-append, synchronous NORMAL, two events a
	 * commit: 44 -> 37 us a commit).  Without it a new row takes the
	 * largest seq plus one; retention never removes the newest event
	 * (store/history.c), so that largest seq only grows and no number
	 * comes back.  A history whose newest events were pruned before
	 * (the sequence above the largest seq left) gets one
	 * history.migrated event past the sequence, to hold that floor.
	 */
	"CREATE TABLE events_v6 ("
	" seq INTEGER PRIMARY KEY,"
	" time INTEGER NOT NULL,"
	" service TEXT,"
	" call TEXT,"
	" kind TEXT NOT NULL,"
	" payload TEXT NOT NULL DEFAULT '{}',"
	" CHECK (kind NOT GLOB 'call.*' OR (call IS NOT NULL"
	"  AND service IS NOT NULL)));"
	"INSERT INTO events_v6 (seq, time, service, call, kind, payload)"
	" SELECT seq, time, service, call, kind, payload FROM events"
	" ORDER BY seq;"
	"INSERT INTO events_v6 (seq, time, kind, payload)"
	" SELECT s.seq + 1, CAST((julianday('now') - 2440587.5) * 86400000"
	"  AS INTEGER) * 1000000, 'history.migrated',"
	"  json_object('schema', 6, 'sequence', s.seq)"
	" FROM sqlite_sequence s WHERE s.name = 'events'"
	"  AND s.seq > coalesce((SELECT max(seq) FROM events), 0);"
	"DROP TABLE events;"
	"ALTER TABLE events_v6 RENAME TO events;"
	"CREATE UNIQUE INDEX events_call_once ON events(call,"
	" kind = 'call.started') WHERE kind GLOB 'call.*';"
	"CREATE INDEX events_service ON events(service, seq);"
	"CREATE INDEX events_call ON events(call, seq)"
	" WHERE call IS NOT NULL AND kind NOT GLOB 'call.*';"
	"CREATE TRIGGER events_append_only BEFORE UPDATE ON events BEGIN"
	" SELECT RAISE(ABORT, 'hostel: events are append-only');"
	"END;";

static const char v7[] =
	/*
	 * The services.d file a service is declared in (daemon/
	 * services-dir.h); NULL: made by a client.  Recorded so that a file
	 * removed while hosteld was down still removes its service.
	 */
	"ALTER TABLE services ADD COLUMN source TEXT;";

static const char v8[] =
	/*
	 * Durable stores (issue 22): the last snapshot of each service's
	 * store (runtime/run/snapshot.h), replaced whole; the component and
	 * format it was written with, so a mismatch is refused before the
	 * blob is read.  A removed service takes its snapshot along.
	 */
	"CREATE TABLE snapshots ("
	" service TEXT NOT NULL PRIMARY KEY,"
	" component TEXT NOT NULL"
	"  CHECK (length(component) = 64 AND component NOT GLOB '*[^0-9a-f]*'),"
	" format INTEGER NOT NULL,"
	" created INTEGER NOT NULL,"
	" size INTEGER NOT NULL CHECK (size = length(data)),"
	" data BLOB NOT NULL);"
	"CREATE TRIGGER services_drop_snapshot AFTER DELETE ON services BEGIN"
	" DELETE FROM snapshots WHERE service = old.name;"
	"END;";

static const char v9[] =
	/*
	 * Durability "commit" (issue 22): the deltas written since a
	 * service's last full snapshot, each in the same transaction as
	 * the events it follows (upto: the last of them), applied in order
	 * of n over the snapshot.  A full snapshot deletes them (compaction)
	 * and says up to which event it holds too (NULL: a snapshot taken
	 * outside of a commit, durability "stop").
	 */
	"ALTER TABLE snapshots ADD COLUMN upto INTEGER;"
	"CREATE TABLE store_deltas ("
	" service TEXT NOT NULL,"
	" n INTEGER NOT NULL CHECK (n > 0),"
	" upto INTEGER NOT NULL,"
	" created INTEGER NOT NULL,"
	" size INTEGER NOT NULL CHECK (size = length(data)),"
	" data BLOB NOT NULL,"
	" PRIMARY KEY (service, n));"
	"CREATE TRIGGER services_drop_deltas AFTER DELETE ON services BEGIN"
	" DELETE FROM store_deltas WHERE service = old.name;"
	"END;";

static const struct migration migrations[] = {
	{1, "components, services, events", v1},
	{2, "calls and the exactly-once terminal rule; retention", v2},
	{3, "service owners", v3},
	{4, "no index of events by kind (appending is the hot path)", v4},
	{5, "no calls table: one unique index keeps calls exactly-once", v5},
	{6, "no AUTOINCREMENT: one page less in every commit", v6},
	{7, "services declared in files: their source", v7},
	{8, "store snapshots (durability)", v8},
	{9, "store deltas (durability commit)", v9},
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == SCHEMA_VERSION,
	       "one migration step per schema version");

static int read_version(struct db *db, int *version)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db, "PRAGMA user_version", &st);

	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*version = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return db_fail(db, rc, "reading the schema version");
}

int schema_version(struct db *db, int *version)
{
	return read_version(db, version);
}

static int step(struct db *db, const struct migration *m)
{
	char sql[64];
	int rc, version;

	rc = db_begin(db);
	if (rc)
		return rc;
	/* Re-read inside the transaction: the step must still apply. */
	rc = read_version(db, &version);
	if (rc == 0 && version != m->version - 1)
		rc = db_failf(db, -ESTALE,
			      "schema version changed to %d during migration",
			      version);
	if (rc == 0)
		rc = db_exec(db, m->sql);
	if (rc == 0) {
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
			 m->version);
		rc = db_exec(db, sql);
	}
	if (rc == 0)
		rc = db_commit(db);
	if (rc) {
		char why[sizeof(db->errmsg)];

		snprintf(why, sizeof(why), "%s", db_errmsg(db));
		db_rollback(db);
		return db_failf(db, rc,
				"migration to schema version %d (%s): %s",
				m->version, m->title, why);
	}
	return 0;
}

int schema_migrate(struct db *db, int target)
{
	int version, rc;

	if (target <= 0 || target > SCHEMA_VERSION)
		target = SCHEMA_VERSION;
	rc = read_version(db, &version);
	if (rc)
		return rc;
	if (version > SCHEMA_VERSION)
		return db_failf(db, -EPROTONOSUPPORT,
				"%s has schema version %d, newer than this "
				"hostel understands (%d); run a newer hostel "
				"or restore a backup",
				db->path, version, SCHEMA_VERSION);
	for (const struct migration *m = migrations;
	     m < migrations + SCHEMA_VERSION; m++) {
		if (m->version <= version || m->version > target)
			continue;
		rc = step(db, m);
		if (rc)
			return rc;
	}
	return 0;
}
