/*
 * components.c - the components table of components.h.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - components_get: a stored component's bytes, at most
 *    COMPONENT_SIZE_MAX (256 MiB, checked when it was added); its name
 *    (a request's, HISTORY_NAME_MAX).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/components.h"
#include "store/db.h"
#include "store/services.h"

void component_info_clear(struct component_info *info)
{
	free(info->name);
	memset(info, 0, sizeof(*info));
}

static int fill(struct db *db, sqlite3_stmt *st, struct component_info *info)
{
	const char *sha = (const char *)sqlite3_column_text(st, 0);
	const char *name = (const char *)sqlite3_column_text(st, 1);

	memset(info, 0, sizeof(*info));
	if (!sha)
		return db_failf(db, -ENOMEM, "out of memory");
	snprintf(info->sha256, sizeof(info->sha256), "%s", sha);
	if (name && !(info->name = strdup(name)))
		return db_failf(db, -ENOMEM, "out of memory");
	info->size = (uint64_t)sqlite3_column_int64(st, 2);
	info->added = sqlite3_column_int64(st, 3);
	return 0;
}

#define SELECT_INFO "SELECT sha256, name, size, added FROM components"

/* Inside a transaction: the row for sha, if any. */
static int lookup(struct db *db, const char *sha, struct component_info *info,
		  bool *found)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db, SELECT_INFO " WHERE sha256 = ?1", &st);

	*found = false;
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*found = true;
		rc = fill(db, st, info);
	} else {
		rc = rc == SQLITE_DONE
			     ? 0
			     : db_fail(db, rc, "looking up a component");
	}
	sqlite3_finalize(st);
	return rc;
}

static int name_taken(struct db *db, const char *name)
{
	return db_failf(db, -EEXIST,
			"the name '%s' is taken by another component", name);
}

/* Set the name of an unnamed component (after checking it is free). */
static int set_name(struct db *db, const char *sha, const char *name)
{
	sqlite3_stmt *st;
	int rc = db_prepare(
		db, "UPDATE components SET name = ?2 WHERE sha256 = ?1", &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if ((rc & 0xff) == SQLITE_CONSTRAINT)
		rc = name_taken(db, name);
	else
		rc = rc == SQLITE_DONE ? 0 : db_fail(db, rc, "naming");
	sqlite3_finalize(st);
	return rc;
}

static int insert(struct db *db, const char *sha, const void *blob, size_t len,
		  const char *name)
{
	sqlite3_stmt *st;
	int rc =
		db_prepare(db,
			   "INSERT INTO components (sha256, blob, size, added, "
			   "name) VALUES (?1, ?2, ?3, ?4, ?5)",
			   &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
	sqlite3_bind_blob64(st, 2, blob, len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (int64_t)len);
	sqlite3_bind_int64(st, 4, db_now_ns());
	if (name)
		sqlite3_bind_text(st, 5, name, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 5);
	rc = sqlite3_step(st);
	if (rc == SQLITE_CONSTRAINT_UNIQUE)
		rc = name_taken(db, name ? name : "");
	else
		rc = rc == SQLITE_DONE ? 0
				       : db_fail(db, rc, "storing a component");
	sqlite3_finalize(st);
	return rc;
}

int components_add(struct db *db, const void *blob, size_t len,
		   const char *name, char sha256[SHA256_HEX_SIZE],
		   bool *created)
{
	struct component_info have = {0};
	bool found;
	int rc;

	*created = false;
	if (len == 0)
		return db_failf(db, -EINVAL, "a component cannot be empty");
	if (len > COMPONENT_SIZE_MAX)
		return db_failf(db, -EFBIG,
				"component of %zu bytes exceeds the limit of "
				"%u bytes",
				len, COMPONENT_SIZE_MAX);
	if (name && !service_name_valid(name))
		return db_failf(db, -EINVAL, "invalid component name '%.64s'",
				name);
	sha256_hex(blob, len, sha256);
	rc = db_begin(db);
	if (rc)
		return rc;
	rc = lookup(db, sha256, &have, &found);
	if (rc == 0 && found && name) {
		if (!have.name)
			rc = set_name(db, sha256, name);
		else if (strcmp(have.name, name))
			rc = db_failf(db, -EEXIST,
				      "component %.12s is already named '%s'",
				      sha256, have.name);
	} else if (rc == 0 && !found) {
		rc = insert(db, sha256, blob, len, name);
		*created = rc == 0;
	}
	component_info_clear(&have);
	if (rc == 0)
		rc = db_commit(db);
	if (rc) {
		db_rollback(db);
		*created = false;
	}
	return rc;
}

/* The WHERE clause for a reference. */
static const char *where_ref(const char *ref)
{
	return sha256_hex_valid(ref) ? " WHERE sha256 = ?1"
				     : " WHERE name = ?1";
}

int components_get(struct db *db, const char *ref, struct component_info *info,
		   void **blob, size_t *len)
{
	char sql[160];
	sqlite3_stmt *st;
	int rc;

	snprintf(sql, sizeof(sql), "%s%s",
		 "SELECT sha256, name, size, added, blob FROM components",
		 where_ref(ref));
	if (info)
		memset(info, 0, sizeof(*info));
	if (blob) {
		*blob = NULL;
		*len = 0;
	}
	rc = db_prepare(db, sql, &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		rc = db_failf(db, -ENOENT, "no component '%.64s'", ref);
	} else if (rc != SQLITE_ROW) {
		rc = db_fail(db, rc, "reading a component");
	} else {
		rc = info ? fill(db, st, info) : 0;
		if (rc == 0 && blob) {
			const void *b = sqlite3_column_blob(st, 4);
			size_t n = (size_t)sqlite3_column_bytes(st, 4);

			*blob = malloc(n ? n : 1);
			if (!*blob || (n && !b)) {
				free(*blob);
				*blob = NULL;
				rc = db_failf(db, -ENOMEM, "out of memory");
			} else {
				memcpy(*blob, b, n);
				*len = n;
			}
		}
		if (rc && info)
			component_info_clear(info);
	}
	sqlite3_finalize(st);
	return rc;
}

int components_list(struct db *db, components_list_fn fn, void *arg)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db, SELECT_INFO " ORDER BY added, sha256", &st);
	int stop = 0;

	while (rc == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct component_info info;

		rc = fill(db, st, &info);
		if (rc == 0) {
			stop = fn(arg, &info);
			component_info_clear(&info);
			if (stop)
				break;
		}
	}
	if (stop)
		rc = stop;
	else if (rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = db_fail(db, rc, "listing components");
	sqlite3_finalize(st);
	return rc;
}

int components_remove(struct db *db, const char *ref)
{
	char sql[128];
	sqlite3_stmt *st = NULL;
	char user[SERVICE_NAME_MAX + 1] = "";
	int rc = db_begin(db);

	if (rc)
		return rc;
	/* Name the service that holds it: a clearer error than the FK's. */
	snprintf(sql, sizeof(sql),
		 "SELECT s.name FROM services s JOIN components c ON "
		 "c.sha256 = s.component%s ORDER BY s.name LIMIT 1",
		 sha256_hex_valid(ref) ? " WHERE c.sha256 = ?1"
				       : " WHERE c.name = ?1");
	rc = db_prepare(db, sql, &st);
	if (rc == 0) {
		sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			snprintf(user, sizeof(user), "%s",
				 (const char *)sqlite3_column_text(st, 0));
			rc = db_failf(db, -EBUSY,
				      "component '%.64s' is used by service "
				      "'%s'",
				      ref, user);
		} else {
			rc = rc == SQLITE_DONE
				     ? 0
				     : db_fail(db, rc,
					       "checking component use");
		}
		sqlite3_finalize(st);
	}
	if (rc == 0) {
		snprintf(sql, sizeof(sql), "DELETE FROM components%s",
			 where_ref(ref));
		rc = db_prepare(db, sql, &st);
	}
	if (rc == 0) {
		sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			rc = sqlite3_changes(db->sql)
				     ? 0
				     : db_failf(db, -ENOENT,
						"no component '%.64s'", ref);
		else if ((rc & 0xff) == SQLITE_CONSTRAINT)
			rc = db_failf(db, -EBUSY,
				      "component '%.64s' is used by a service",
				      ref);
		else
			rc = db_fail(db, rc, "removing a component");
		sqlite3_finalize(st);
	}
	if (rc == 0)
		rc = db_commit(db);
	if (rc)
		db_rollback(db);
	return rc;
}
