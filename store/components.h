/*
 * components.h - component binaries, content-addressed by SHA-256.
 *
 * Contract:
 *  - A component is stored once per content: adding the same bytes again
 *    changes nothing and reports the same sha256 (*created false).
 *  - A name is optional and unique.  Adding known bytes with a name gives
 *    that name to the component if it has none; a name that is taken by
 *    other bytes, or a second name for the same bytes, is -EEXIST.
 *  - A reference (ref) is either the 64-hex-digit sha256 or a name.
 *  - A component used by a service cannot be removed (-EBUSY, naming
 *    the service).
 *  - Blobs are at most COMPONENT_SIZE_MAX bytes (-EFBIG).
 *  - Errors: -ENOENT (no such component), -EEXIST, -EBUSY, -EINVAL (bad
 *    name, empty blob), or a database error (db_errmsg() says which).
 */
#ifndef HOSTEL_STORE_COMPONENTS_H
#define HOSTEL_STORE_COMPONENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/sha256.h"

struct db;

#define COMPONENT_SIZE_MAX (256u << 20)

struct component_info {
	char sha256[SHA256_HEX_SIZE];
	char *name; /* NULL when unnamed */
	uint64_t size;
	int64_t added; /* unix ns */
};

/* Names follow the service-name rule (store/services.h). */
int components_add(struct db *db, const void *blob, size_t len,
		   const char *name, char sha256[SHA256_HEX_SIZE],
		   bool *created);

/*
 * Look up by reference.  info may be NULL; with blob non-NULL the bytes
 * are returned in a malloc'd buffer (*blob, *len) the caller frees.
 */
int components_get(struct db *db, const char *ref, struct component_info *info,
		   void **blob, size_t *len);

typedef int (*components_list_fn)(void *arg, const struct component_info *info);

/* In the order they were added; a non-zero return of fn stops it. */
int components_list(struct db *db, components_list_fn fn, void *arg);

int components_remove(struct db *db, const char *ref);

void component_info_clear(struct component_info *info);

#endif
