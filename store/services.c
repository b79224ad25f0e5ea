/*
 * services.c - the services table of services.h.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - services_get and its listing: copies of a row's name
 *    (HISTORY_NAME_MAX) and config (a request's, VARLINK_MESSAGE_MAX).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/services.h"

static const char *const state_names[] = {
	[SERVICE_STOPPED] = "stopped",
	[SERVICE_RUNNING] = "running",
	[SERVICE_POISONED] = "poisoned",
	[SERVICE_FAILED] = "failed",
};

const char *service_state_name(enum service_state state)
{
	return (unsigned)state < sizeof(state_names) / sizeof(state_names[0])
		       ? state_names[state]
		       : "unknown";
}

int service_state_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(state_names) / sizeof(state_names[0]);
	     i++)
		if (!strcmp(state_names[i], name))
			return (int)i;
	return -1;
}

bool service_name_valid(const char *name)
{
	size_t n = 0;

	if (!name || name[0] == '.' || name[0] == '-')
		return false;
	for (; name[n]; n++) {
		char c = name[n];

		if (n >= SERVICE_NAME_MAX ||
		    !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return false;
	}
	return n > 0;
}

void service_record_clear(struct service_record *rec)
{
	free(rec->name);
	free(rec->config);
	free(rec->source);
	memset(rec, 0, sizeof(*rec));
}

static void bind_limit(sqlite3_stmt *st, int i, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

/* Check what the schema cannot say clearly. */
static int check(struct db *db, const struct service_record *rec)
{
	if (!service_name_valid(rec->name))
		return db_failf(db, -EINVAL, "invalid service name '%.64s'",
				rec->name ? rec->name : "(null)");
	if (!sha256_hex_valid(rec->component))
		return db_failf(db, -EINVAL,
				"a service names its component by sha256");
	if ((unsigned)rec->state > SERVICE_FAILED)
		return db_failf(db, -EINVAL, "invalid service state");
	return 0;
}

static int component_exists(struct db *db, const char *sha)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db, "SELECT 1 FROM components WHERE sha256 = ?1",
			    &st);

	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc == SQLITE_DONE)
		return db_failf(db, -ENOENT, "no component %s", sha);
	return db_fail(db, rc, "looking up a component");
}

/* Run one prepared write in its own IMMEDIATE transaction. */
static int write_one(struct db *db, sqlite3_stmt *st, const char *what,
		     const char *name, bool must_change)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_DONE) {
		if (must_change && sqlite3_changes(db->sql) == 0)
			rc = db_failf(db, -ENOENT, "no service '%s'", name);
		else
			rc = 0;
	} else if (rc == SQLITE_CONSTRAINT_PRIMARYKEY ||
		   rc == SQLITE_CONSTRAINT_UNIQUE) {
		rc = db_failf(db, -EEXIST, "a service '%s' already exists",
			      name);
	} else if (rc == SQLITE_CONSTRAINT_CHECK) {
		rc = db_failf(db, -EINVAL,
			      "service '%s': the configuration is not a JSON "
			      "object of the documented shape",
			      name);
	} else {
		rc = db_fail(db, rc, what);
	}
	sqlite3_finalize(st);
	return rc;
}

static int in_transaction(struct db *db, int rc)
{
	if (rc == 0)
		rc = db_commit(db);
	if (rc)
		db_rollback(db);
	return rc;
}

static void bind_owner(sqlite3_stmt *st, int col,
		       const struct service_record *rec)
{
	if (rec->has_owner)
		sqlite3_bind_int64(st, col, rec->owner);
	else
		sqlite3_bind_null(st, col);
}

static void bind_source(sqlite3_stmt *st, int col,
			const struct service_record *rec)
{
	if (rec->source)
		sqlite3_bind_text(st, col, rec->source, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, col);
}

int services_create(struct db *db, const struct service_record *rec)
{
	int64_t now = db_now_ns();
	sqlite3_stmt *st;
	int rc = check(db, rec);

	if (rc)
		return rc;
	rc = db_begin(db);
	if (rc)
		return rc;
	rc = component_exists(db, rec->component);
	if (rc == 0)
		rc = db_prepare(db,
				"INSERT INTO services (name, component, "
				"config, autostart, state, created, updated, "
				"keep_events, keep_age, owner, source) VALUES "
				"(?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?8, ?9, ?10)",
				&st);
	if (rc == 0) {
		sqlite3_bind_text(st, 1, rec->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, rec->component, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, rec->config ? rec->config : "{}", -1,
				  SQLITE_STATIC);
		sqlite3_bind_int(st, 4, rec->autostart);
		sqlite3_bind_text(st, 5, service_state_name(rec->state), -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, 6, now);
		bind_limit(st, 7, rec->keep_events);
		bind_limit(st, 8, rec->keep_age);
		bind_owner(st, 9, rec);
		bind_source(st, 10, rec);
		rc = write_one(db, st, "creating a service", rec->name, false);
	}
	return in_transaction(db, rc);
}

static int fill(struct db *db, sqlite3_stmt *st, struct service_record *out)
{
	const char *name = (const char *)sqlite3_column_text(st, 0);
	const char *component = (const char *)sqlite3_column_text(st, 1);
	const char *config = (const char *)sqlite3_column_text(st, 2);
	const char *state = (const char *)sqlite3_column_text(st, 4);
	int s;

	memset(out, 0, sizeof(*out));
	if (!name || !component || !config || !state)
		return db_failf(db, -ENOMEM, "out of memory");
	s = service_state_parse(state);
	out->name = strdup(name);
	out->config = strdup(config);
	if (!out->name || !out->config) {
		service_record_clear(out);
		return db_failf(db, -ENOMEM, "out of memory");
	}
	snprintf(out->component, sizeof(out->component), "%s", component);
	out->autostart = sqlite3_column_int(st, 3) != 0;
	out->state = s < 0 ? SERVICE_FAILED : (enum service_state)s;
	out->created = sqlite3_column_int64(st, 5);
	out->updated = sqlite3_column_int64(st, 6);
	out->keep_events = sqlite3_column_type(st, 7) == SQLITE_NULL
				   ? -1
				   : sqlite3_column_int64(st, 7);
	out->keep_age = sqlite3_column_type(st, 8) == SQLITE_NULL
				? -1
				: sqlite3_column_int64(st, 8);
	out->has_owner = sqlite3_column_type(st, 9) != SQLITE_NULL;
	out->owner = out->has_owner ? (uint32_t)sqlite3_column_int64(st, 9) : 0;
	if (sqlite3_column_type(st, 10) != SQLITE_NULL &&
	    !(out->source = strdup((const char *)sqlite3_column_text(st, 10)))) {
		service_record_clear(out);
		return db_failf(db, -ENOMEM, "out of memory");
	}
	return 0;
}

#define SELECT_SERVICE                                                         \
	"SELECT name, component, config, autostart, state, created, "          \
	"updated, keep_events, keep_age, owner, source FROM services"

int services_get(struct db *db, const char *name, struct service_record *out)
{
	sqlite3_stmt *st;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = db_prepare(db, SELECT_SERVICE " WHERE name = ?1", &st);
	if (rc)
		return rc;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		rc = fill(db, st, out);
	else if (rc == SQLITE_DONE)
		rc = db_failf(db, -ENOENT, "no service '%.64s'", name);
	else
		rc = db_fail(db, rc, "reading a service");
	sqlite3_finalize(st);
	return rc;
}

int services_list(struct db *db, bool autostart_only, services_list_fn fn,
		  void *arg)
{
	sqlite3_stmt *st;
	int rc = db_prepare(db,
			    autostart_only ? SELECT_SERVICE
				    " WHERE autostart = 1 ORDER BY name"
					   : SELECT_SERVICE " ORDER BY name",
			    &st);

	int stop = 0;

	while (rc == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct service_record rec;

		rc = fill(db, st, &rec);
		if (rc == 0) {
			stop = fn(arg, &rec);
			service_record_clear(&rec);
			if (stop)
				break;
		}
	}
	if (stop)
		rc = stop;
	else if (rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = db_fail(db, rc, "listing services");
	sqlite3_finalize(st);
	return rc;
}

int services_update(struct db *db, const struct service_record *rec)
{
	sqlite3_stmt *st;
	int rc = check(db, rec);

	if (rc)
		return rc;
	rc = db_begin(db);
	if (rc)
		return rc;
	rc = component_exists(db, rec->component);
	if (rc == 0)
		rc = db_prepare(db,
				"UPDATE services SET component = ?2, config = "
				"?3, autostart = ?4, state = ?5, updated = ?6, "
				"keep_events = ?7, keep_age = ?8, owner = ?9, "
				"source = ?10 WHERE name = ?1",
				&st);
	if (rc == 0) {
		sqlite3_bind_text(st, 1, rec->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, rec->component, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, rec->config ? rec->config : "{}", -1,
				  SQLITE_STATIC);
		sqlite3_bind_int(st, 4, rec->autostart);
		sqlite3_bind_text(st, 5, service_state_name(rec->state), -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, 6, db_now_ns());
		bind_limit(st, 7, rec->keep_events);
		bind_limit(st, 8, rec->keep_age);
		bind_owner(st, 9, rec);
		bind_source(st, 10, rec);
		rc = write_one(db, st, "updating a service", rec->name, true);
	}
	return in_transaction(db, rc);
}

int services_set_state(struct db *db, const char *name,
		       enum service_state state)
{
	sqlite3_stmt *st;
	int rc;

	if ((unsigned)state > SERVICE_FAILED)
		return db_failf(db, -EINVAL, "invalid service state");
	rc = db_begin(db);
	if (rc)
		return rc;
	rc = db_prepare(db,
			"UPDATE services SET state = ?2, updated = ?3 WHERE "
			"name = ?1",
			&st);
	if (rc == 0) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, service_state_name(state), -1,
				  SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, db_now_ns());
		rc = write_one(db, st, "setting a service's state", name, true);
	}
	return in_transaction(db, rc);
}

int services_remove(struct db *db, const char *name)
{
	sqlite3_stmt *st;
	int rc = db_begin(db);

	if (rc)
		return rc;
	rc = db_prepare(db, "DELETE FROM services WHERE name = ?1", &st);
	if (rc == 0) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		rc = write_one(db, st, "removing a service", name, true);
	}
	return in_transaction(db, rc);
}
