/*
 * snapshots.c - the snapshots table (see snapshots.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - snapshots_get: a copy of the blob, which the daemon wrote at most
 *    CM_SNAPSHOT_MAX_BYTES long (runtime/run/snapshot.h); a longer row
 *    (the file edited behind hosteld's back) is refused before the copy
 *    (SNAPSHOT_ROW_MAX).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/db.h"
#include "store/snapshots.h"

/* CM_SNAPSHOT_MAX_BYTES (store/ may not include the runtime). */
#define SNAPSHOT_ROW_MAX (512u << 20)

int snapshots_put(struct db *db, const char *service, const char *component,
		  uint32_t format, const void *data, size_t len)
{
	sqlite3_stmt *st;
	int rc;

	if (!service || !sha256_hex_valid(component) || !data ||
	    len > SNAPSHOT_ROW_MAX)
		return db_failf(db, -EINVAL, "snapshot: bad argument");
	rc = db_begin(db);
	if (rc)
		return rc;
	rc = db_prepare(db,
			"INSERT OR REPLACE INTO snapshots (service, component,"
			" format, created, size, data) VALUES (?1, ?2, ?3, ?4,"
			" ?5, ?6)",
			&st);
	if (rc == 0) {
		sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, component, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, format);
		sqlite3_bind_int64(st, 4, db_now_ns());
		sqlite3_bind_int64(st, 5, (sqlite3_int64)len);
		sqlite3_bind_blob64(st, 6, data, len, SQLITE_STATIC);
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? 0 : db_fail(db, rc, "writing a snapshot");
		sqlite3_finalize(st);
	}
	if (rc == 0)
		rc = db_commit(db);
	if (rc)
		db_rollback(db);
	return rc;
}

int snapshots_get(struct db *db, const char *service, int with_data,
		  struct snapshot_record *out)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = db_prepare(db,
			with_data ? "SELECT component, format, created, size,"
				    " length(data), data FROM snapshots"
				    " WHERE service = ?1"
				  : "SELECT component, format, created, size,"
				    " length(data) FROM snapshots"
				    " WHERE service = ?1",
			&st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(st, 0);
		sqlite3_int64 n = sqlite3_column_int64(st, 4);

		rc = 0;
		if (!c || !sha256_hex_valid(c) || n < 0 ||
		    (uint64_t)n > SNAPSHOT_ROW_MAX) {
			rc = db_failf(db, -EINVAL, "snapshot of %s: a bad row",
				      service);
		} else {
			memcpy(out->component, c, SHA256_HEX_SIZE);
			out->format = (uint32_t)sqlite3_column_int64(st, 1);
			out->created = sqlite3_column_int64(st, 2);
			out->size = (uint64_t)n;
		}
		if (rc == 0 && with_data) {
			const void *p = sqlite3_column_blob(st, 5);

			out->data = malloc(n ? (size_t)n : 1);
			if (!out->data)
				rc = db_failf(db, -ENOMEM, "out of memory");
			else if (n)
				memcpy(out->data, p, (size_t)n);
		}
	} else if (rc == SQLITE_DONE) {
		rc = -ENOENT;
	} else {
		rc = db_fail(db, rc, "reading a snapshot");
	}
	sqlite3_finalize(st);
	return rc;
}

int snapshots_remove(struct db *db, const char *service)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db, "DELETE FROM snapshots WHERE service = ?1", &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	rc = rc == SQLITE_DONE ? 0 : db_fail(db, rc, "removing a snapshot");
	sqlite3_finalize(st);
	return rc;
}
