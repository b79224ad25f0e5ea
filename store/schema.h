/*
 * schema.h - the database schema and its migrations.
 *
 * The schema version is PRAGMA user_version.  store/schema.c holds an
 * ordered list of migration steps; step N turns a version N-1 database
 * into version N, and runs in one transaction together with the new
 * user_version, so a crash leaves either the old or the new version,
 * never a mix.  A database whose version is above SCHEMA_VERSION was
 * written by a newer hostel and is refused: this code cannot know what
 * the newer schema means.
 *
 * Versions:
 *   1  components, services, events (append-only, JSON-object payloads)
 *   2  calls: one row per call, the exactly-once terminal rule enforced
 *      by triggers (existing events are backfilled); per-service
 *      retention columns on services
 *   3  service owners
 *   4  no index of events by kind: appending is the hot path
 *   5  no calls table and no triggers on insert: a unique index keeps
 *      at most one call.started and one terminal event per call (the
 *      writer checks that a terminal event has a start); payloads are
 *      checked as JSON objects before they are written, not by the
 *      schema
 *   6  events without AUTOINCREMENT (sqlite_sequence cost a page in
 *      every commit); retention keeps the newest event, so that seqs
 *      are still never reused
 *   7  services declared in files: their source
 *   8  snapshots: the last store snapshot of each service (durability)
 *   9  store_deltas: the deltas since each service's last full snapshot,
 *      and the event a snapshot holds up to (durability commit)
 */
#ifndef HOSTEL_STORE_SCHEMA_H
#define HOSTEL_STORE_SCHEMA_H

struct db;

#define SCHEMA_VERSION 9

/* The version of the open database (0: empty). */
int schema_version(struct db *db, int *version);

/*
 * Migrate from the current version up to `target` (<= SCHEMA_VERSION),
 * one transaction per step.  Refuses (-EPROTONOSUPPORT) a database newer
 * than SCHEMA_VERSION, with a message for db_errmsg().
 */
int schema_migrate(struct db *db, int target);

#endif
