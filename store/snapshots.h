/*
 * snapshots.h - the snapshots table (schema version 8): the last store
 * snapshot of each service (runtime/run/snapshot.h's bytes, opaque
 * here), for durability "stop" (docs/architecture.md "Durability").
 *
 * Contract:
 *  - One row per service at most: a new snapshot replaces the last in
 *    one transaction, so a crash leaves the old one or the new one.
 *  - A row names the component (sha256 hex) and the format version the
 *    blob was written with; the daemon refuses a row that does not
 *    match the service's component or the runtime's format.
 *  - Removing a service removes its snapshot (a trigger).
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
	void *data;	 /* snapshots_get only: malloc'd, the caller frees */
};

int snapshots_put(struct db *db, const char *service, const char *component,
		  uint32_t format, const void *data, size_t len);
/* The row with its blob (out->data) or, with_data 0, without. */
int snapshots_get(struct db *db, const char *service, int with_data,
		  struct snapshot_record *out);
int snapshots_remove(struct db *db, const char *service);

#endif
