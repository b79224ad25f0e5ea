/*
 * services.h - the services table: a named component instantiated into a
 * long-lived store, with its configuration.
 *
 * Contract:
 *  - A service names its component by sha256; the component must exist
 *    (-ENOENT otherwise) and cannot be removed while a service uses it.
 *  - config is the text of a JSON object whose optional members are
 *    "env" (object of strings), "args" (array), "preopens" (array) and
 *    "limits" (object); the schema checks those shapes and the store
 *    keeps the text as given.  autostart, the state and the retention
 *    limits are columns of their own, so start-up and pruning need not
 *    parse JSON.
 *  - Names are 1 to SERVICE_NAME_MAX bytes of [A-Za-z0-9._-], not
 *    starting with '.' or '-' (they appear in paths and logs).
 *  - created/updated are unix ns, set by the store.
 *  - source: the services.d file a service is declared in (the daemon
 *    reconciles those, daemon/services-dir.h), NULL for a client's.
 *  - Errors: -ENOENT (no such service or component), -EEXIST (name
 *    taken), -EINVAL (bad name, config or state), or a database error.
 */
#ifndef HOSTEL_STORE_SERVICES_H
#define HOSTEL_STORE_SERVICES_H

#include <stdbool.h>
#include <stdint.h>

#include "store/sha256.h"

struct db;

#define SERVICE_NAME_MAX 64

enum service_state {
	SERVICE_STOPPED = 0,
	SERVICE_RUNNING,
	SERVICE_POISONED,
	SERVICE_FAILED,
};

struct service_record {
	char *name;
	char component[SHA256_HEX_SIZE];
	char *config; /* JSON object text; NULL on input means "{}" */
	bool autostart;
	enum service_state state;
	int64_t created, updated;
	int64_t keep_events; /* -1: the daemon's default; 0: unlimited */
	int64_t keep_age;    /* seconds; -1: default; 0: unlimited */
	bool has_owner;	     /* false: the service belongs to nobody */
	uint32_t owner;	     /* its uid (daemon/access.h) */
	char *source; /* the file it is declared in; NULL: a client's */
};

bool service_name_valid(const char *name);
const char *service_state_name(enum service_state state);
/* -1 when unknown. */
int service_state_parse(const char *name);

/* Insert a new service (rec->created/updated are ignored and set). */
int services_create(struct db *db, const struct service_record *rec);

/* Fill *out (free with service_record_clear). */
int services_get(struct db *db, const char *name, struct service_record *out);

typedef int (*services_list_fn)(void *arg, const struct service_record *rec);

/*
 * Call fn for each service in name order (autostart_only: those to be
 * recreated when the daemon starts).  A non-zero return of fn stops the
 * listing and is returned.
 */
int services_list(struct db *db, bool autostart_only, services_list_fn fn,
		  void *arg);

/* Replace component, config, autostart, state, retention and owner. */
int services_update(struct db *db, const struct service_record *rec);

int services_set_state(struct db *db, const char *name,
		       enum service_state state);

int services_remove(struct db *db, const char *name);

void service_record_clear(struct service_record *rec);

#endif
