/*
 * snapshots.h - the snapshots and store_deltas tables (schema versions 8
 * and 9): the last full store snapshot of each service and the deltas
 * written since (runtime/run/snapshot.h's bytes, opaque here), for
 * durability "stop" and "commit" (docs/architecture.md "Durability").
 *
 * Contract:
 *  - One row per service at most: a new snapshot replaces the last in
 *    one transaction, so a crash leaves the old one or the new one, and
 *    deletes the service's deltas in the same transaction (they were
 *    written against the old one).
 *  - Deltas are numbered from 1 per service, in the order written, each
 *    with `upto`, the seq of the last event committed with it; a
 *    restore applies the snapshot, then every delta in order.
 *  - snapshots_write_full and snapshots_write_delta run inside a
 *    transaction the caller opened (the history's writer: the images go
 *    in the same transaction as the events they follow); snapshots_put
 *    opens its own.
 *  - A row names the component (sha256 hex) and the format version the
 *    blob was written with; the daemon refuses a row that does not
 *    match the service's component or the runtime's format.
 *  - Removing a service removes its snapshot and deltas (triggers);
 *    snapshots_remove removes both.  An image of a service that is gone
 *    (removed while its image waited in a batch) is not written: a
 *    later service of that name must not find it.
 *  - Errors: -ENOENT (no snapshot), -EINVAL (bad argument), or a
 *    database error (db_errmsg).
 */
#ifndef HOSTEL_STORE_SNAPSHOTS_H
#define HOSTEL_STORE_SNAPSHOTS_H

#include <stddef.h>
#include <stdint.h>

#include "store/sha256.h"

struct db;

struct snapshot_record {
	char component[SHA256_HEX_SIZE];
	uint32_t format;
	int64_t created; /* unix ns */
	uint64_t size;	 /* bytes of the blob */
	uint64_t upto;	 /* last event committed with it; 0: none */
	/* the deltas since (snapshots_get): how many, their bytes, the
	 * last one's upto and time */
	uint64_t ndeltas, delta_bytes, delta_upto;
	int64_t delta_created;
	void *data; /* snapshots_get only: malloc'd, the caller frees */
};

/* One delta, as snapshots_deltas() hands it over (data borrowed). */
struct snapshot_delta {
	uint64_t n, upto;
	int64_t created;
	const void *data;
	size_t size;
};

/* In a transaction of its own; upto: the last event durable when it
 * was taken (0: none), which it holds at least. */
int snapshots_put(struct db *db, const char *service, const char *component,
		  uint32_t format, const void *data, size_t len, uint64_t upto);
/* Inside the caller's transaction: a full snapshot (upto 0: none). */
int snapshots_write_full(struct db *db, const char *service,
			 const char *component, uint32_t format,
			 const void *data, size_t len, uint64_t upto);
/* Inside the caller's transaction: the service's next delta. */
int snapshots_write_delta(struct db *db, const char *service,
			  const void *data, size_t len, uint64_t upto);
/*
 * Every delta of the service, in order, to fn (which returns 0 to go
 * on, else that value is returned).  0, fn's value, or an error.
 */
int snapshots_deltas(struct db *db, const char *service,
		     int (*fn)(void *arg, const struct snapshot_delta *d),
		     void *arg);
/* The row with its blob (out->data) or, with_data 0, without. */
int snapshots_get(struct db *db, const char *service, int with_data,
		  struct snapshot_record *out);
int snapshots_remove(struct db *db, const char *service);

/*
 * Folding (durability "commit", issue 22 point 5): fn makes, from a full
 * snapshot and the delta after it, the full snapshot of the state after
 * the delta (*out malloc'd; the daemon's is run/snapshot.h
 * cm_snapshot_fold).  0, or -1 with why: the bytes do not fold (a
 * corrupted row, another component).  Any thread may run it.
 */
typedef int (*snapshots_fold_fn)(void *arg, const void *full, size_t flen,
				 const void *delta, size_t dlen, void **out,
				 size_t *outlen, char *why, size_t whylen);

struct snapshots_folded {
	uint64_t deltas, delta_bytes; /* folded */
	uint64_t size;		      /* the snapshot's, after */
	uint64_t deltas_left, delta_bytes_left;
};

/*
 * Inside the caller's transaction: fold the service's oldest deltas into
 * its snapshot, in order, until at least `budget` bytes of deltas were
 * folded (one at least) or none is left: one step of bounded work (the
 * snapshot, the deltas folded, one fold's output at a time in memory).
 * The row takes the result, with the last folded delta's upto and time;
 * the folded deltas are deleted, the later ones keep their numbers.  So
 * a crash at any point leaves a chain that restores to the same store.
 * 0 and *out; -ENOENT (no snapshot, or no delta); -EINVAL with why when
 * fn refuses a fold (no row changed); or a database error.
 */
int snapshots_fold(struct db *db, const char *service, uint64_t budget,
		   snapshots_fold_fn fn, void *arg, struct snapshots_folded *out,
		   char *why, size_t whylen);

#endif
