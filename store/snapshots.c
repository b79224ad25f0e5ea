/*
 * snapshots.c - the snapshots table (see snapshots.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - snapshots_get: a copy of the blob, which the daemon wrote at most
 *    CM_SNAPSHOT_MAX_BYTES long (runtime/run/snapshot.h); a longer row
 *    (the file edited behind hosteld's back) is refused before the copy
 *    (SNAPSHOT_ROW_MAX).
 *  - snapshots_deltas: nothing; each delta's blob is SQLite's, borrowed
 *    for the callback (a row past SNAPSHOT_ROW_MAX is refused).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/db.h"
#include "store/snapshots.h"

/* CM_SNAPSHOT_MAX_BYTES (store/ may not include the runtime). */
#define SNAPSHOT_ROW_MAX (512u << 20)

static int exec_service(struct db *db, const char *sql, const char *service,
			const char *what)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db, sql, &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	rc = rc == SQLITE_DONE ? 0 : db_fail(db, rc, what);
	sqlite3_finalize(st);
	return rc;
}

int snapshots_write_full(struct db *db, const char *service,
			 const char *component, uint32_t format,
			 const void *data, size_t len, uint64_t upto)
{
	sqlite3_stmt *st;
	int rc;

	if (!service || !sha256_hex_valid(component) || !data ||
	    len > SNAPSHOT_ROW_MAX || upto > INT64_MAX)
		return db_failf(db, -EINVAL, "snapshot: bad argument");
	rc = exec_service(db, "DELETE FROM store_deltas WHERE service = ?1",
			  service, "removing deltas");
	if (rc)
		return rc;
	rc = db_prepare(db,
			"INSERT OR REPLACE INTO snapshots (service, component,"
			" format, created, size, data, upto) SELECT ?1, ?2,"
			" ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM"
			" services WHERE name = ?1)",
			&st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, component, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, format);
	sqlite3_bind_int64(st, 4, db_now_ns());
	sqlite3_bind_int64(st, 5, (sqlite3_int64)len);
	sqlite3_bind_blob64(st, 6, data, len, SQLITE_STATIC);
	if (upto)
		sqlite3_bind_int64(st, 7, (sqlite3_int64)upto);
	else
		sqlite3_bind_null(st, 7);
	rc = sqlite3_step(st);
	rc = rc == SQLITE_DONE ? 0 : db_fail(db, rc, "writing a snapshot");
	sqlite3_finalize(st);
	return rc;
}

int snapshots_write_delta(struct db *db, const char *service,
			  const void *data, size_t len, uint64_t upto)
{
	sqlite3_stmt *st;
	int rc;

	if (!service || !data || len > SNAPSHOT_ROW_MAX || upto > INT64_MAX)
		return db_failf(db, -EINVAL, "delta: bad argument");
	rc = db_prepare(db,
			"INSERT INTO store_deltas (service, n, upto, created,"
			" size, data) SELECT ?1, (SELECT coalesce(max(n), 0)"
			" + 1 FROM store_deltas WHERE service = ?1), ?2, ?3,"
			" ?4, ?5 WHERE EXISTS (SELECT 1 FROM services WHERE"
			" name = ?1)",
			&st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)upto);
	sqlite3_bind_int64(st, 3, db_now_ns());
	sqlite3_bind_int64(st, 4, (sqlite3_int64)len);
	sqlite3_bind_blob64(st, 5, data, len, SQLITE_STATIC);
	rc = sqlite3_step(st);
	rc = rc == SQLITE_DONE ? 0 : db_fail(db, rc, "writing a delta");
	sqlite3_finalize(st);
	return rc;
}

int snapshots_put(struct db *db, const char *service, const char *component,
		  uint32_t format, const void *data, size_t len, uint64_t upto)
{
	int rc;

	if (!service || !sha256_hex_valid(component) || !data ||
	    len > SNAPSHOT_ROW_MAX)
		return db_failf(db, -EINVAL, "snapshot: bad argument");
	rc = db_begin(db);
	if (rc)
		return rc;
	rc = snapshots_write_full(db, service, component, format, data, len,
				  upto);
	if (rc == 0)
		rc = db_commit(db);
	if (rc)
		db_rollback(db);
	return rc;
}

int snapshots_deltas(struct db *db, const char *service,
		     int (*fn)(void *arg, const struct snapshot_delta *d),
		     void *arg)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db,
			    "SELECT n, upto, created, length(data), data FROM"
			    " store_deltas WHERE service = ?1 ORDER BY n",
			    &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 len = sqlite3_column_int64(st, 3);
		struct snapshot_delta d = {
			.n = (uint64_t)sqlite3_column_int64(st, 0),
			.upto = (uint64_t)sqlite3_column_int64(st, 1),
			.created = sqlite3_column_int64(st, 2),
			.data = sqlite3_column_blob(st, 4),
			.size = len > 0 ? (size_t)len : 0,
		};
		int r;

		if (len < 0 || (uint64_t)len > SNAPSHOT_ROW_MAX ||
		    (len > 0 && !d.data)) {
			sqlite3_finalize(st);
			return db_failf(db, -EINVAL,
					"delta %llu of %s: a bad row",
					(unsigned long long)d.n, service);
		}
		if ((r = fn(arg, &d)) != 0) {
			sqlite3_finalize(st);
			return r;
		}
	}
	rc = rc == SQLITE_DONE ? 0 : db_fail(db, rc, "reading deltas");
	sqlite3_finalize(st);
	return rc;
}

/* How many deltas follow the snapshot, their bytes, the last's upto. */
static int delta_summary(struct db *db, const char *service,
			 struct snapshot_record *out)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db,
			    "SELECT count(*), coalesce(sum(size), 0),"
			    " coalesce(max(upto), 0), coalesce(max(created), 0)"
			    " FROM store_deltas WHERE service = ?1",
			    &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->ndeltas = (uint64_t)sqlite3_column_int64(st, 0);
		out->delta_bytes = (uint64_t)sqlite3_column_int64(st, 1);
		out->delta_upto = (uint64_t)sqlite3_column_int64(st, 2);
		out->delta_created = sqlite3_column_int64(st, 3);
		rc = 0;
	} else {
		rc = db_fail(db, rc, "reading deltas");
	}
	sqlite3_finalize(st);
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
				    " length(data), coalesce(upto, 0), data"
				    " FROM snapshots WHERE service = ?1"
				  : "SELECT component, format, created, size,"
				    " length(data), coalesce(upto, 0) FROM"
				    " snapshots WHERE service = ?1",
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
			out->upto = (uint64_t)sqlite3_column_int64(st, 5);
		}
		if (rc == 0 && with_data) {
			const void *p = sqlite3_column_blob(st, 6);

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
	if (rc == 0 && (rc = delta_summary(db, service, out)) && with_data) {
		free(out->data);
		out->data = NULL;
	}
	return rc;
}

int snapshots_remove(struct db *db, const char *service)
{
	int rc = exec_service(db, "DELETE FROM store_deltas WHERE service = ?1",
			      service, "removing deltas");

	return rc ? rc
		  : exec_service(db,
				 "DELETE FROM snapshots WHERE service = ?1",
				 service, "removing a snapshot");
}

/* ---- folding deltas into the snapshot ------------------------------------ */

struct fold_walk {
	snapshots_fold_fn fn;
	void *arg;
	void *full; /* malloc'd: the row's, then each fold's */
	size_t flen;
	uint64_t budget, folded, bytes, last_n, upto;
	int64_t created;
	char *why;
	size_t whylen;
};

static int fold_one(void *arg, const struct snapshot_delta *d)
{
	struct fold_walk *w = arg;
	void *out = NULL;
	size_t outlen = 0;

	if (w->folded && w->bytes >= w->budget)
		return 1; /* enough for this step */
	if (w->fn(w->arg, w->full, w->flen, d->data, d->size, &out, &outlen,
		  w->why, w->whylen)) {
		free(out);
		return -EINVAL;
	}
	free(w->full);
	w->full = out;
	w->flen = outlen;
	w->folded++;
	w->bytes += d->size;
	w->last_n = d->n;
	w->upto = d->upto;
	w->created = d->created;
	return 0;
}

static int fold_store(struct db *db, const char *service,
		      const struct fold_walk *w)
{
	sqlite3_stmt *st;
	int rc;

	if (w->flen > SNAPSHOT_ROW_MAX)
		return db_failf(db, -EINVAL, "a folded snapshot too large");
	rc = db_prepare(db,
			"UPDATE snapshots SET created = ?2, size = ?3,"
			" data = ?4, upto = ?5 WHERE service = ?1",
			&st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, w->created);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)w->flen);
	sqlite3_bind_blob64(st, 4, w->full, w->flen, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)w->upto);
	rc = sqlite3_step(st);
	rc = rc == SQLITE_DONE ? 0 : db_fail(db, rc, "writing a folded snapshot");
	sqlite3_finalize(st);
	if (rc)
		return rc;
	rc = db_prepare(db,
			"DELETE FROM store_deltas WHERE service = ?1 AND n <= ?2",
			&st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, service, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)w->last_n);
	rc = sqlite3_step(st);
	rc = rc == SQLITE_DONE ? 0 : db_fail(db, rc, "removing folded deltas");
	sqlite3_finalize(st);
	return rc;
}

int snapshots_fold(struct db *db, const char *service, uint64_t budget,
		   snapshots_fold_fn fn, void *arg, struct snapshots_folded *out,
		   char *why, size_t whylen)
{
	struct snapshot_record rec;
	struct fold_walk w = {.fn = fn,
			      .arg = arg,
			      .budget = budget,
			      .why = why,
			      .whylen = whylen};
	int rc;

	memset(out, 0, sizeof(*out));
	if (!service || !fn)
		return db_failf(db, -EINVAL, "fold: bad argument");
	rc = snapshots_get(db, service, 1, &rec);
	if (rc)
		return rc;
	if (rec.ndeltas == 0) {
		free(rec.data);
		return -ENOENT;
	}
	w.full = rec.data;
	w.flen = rec.size;
	/* a refusal (fn's -EINVAL, why says it) changes no row */
	rc = snapshots_deltas(db, service, fold_one, &w);
	if (rc == 1 || (rc == 0 && w.folded))
		rc = fold_store(db, service, &w);
	else if (rc == 0)
		rc = -ENOENT;
	if (rc == 0) {
		out->deltas = w.folded;
		out->delta_bytes = w.bytes;
		out->size = w.flen;
		out->deltas_left = rec.ndeltas - w.folded;
		out->delta_bytes_left = rec.delta_bytes - w.bytes;
	}
	free(w.full);
	return rc;
}
