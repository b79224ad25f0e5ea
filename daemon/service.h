/*
 * service.h - the service registry: every service of the database, and
 * for each running one its live store (cm_store + component instance)
 * kept between calls, its queue of calls and its service event.
 *
 * Contract:
 *  - The registry mirrors the services table: created at start from the
 *    database (services marked autostart are started), changed only
 *    through the functions here, which write the table first.
 *  - A running service owns one cm_store and one instance of its
 *    component; state persists from call to call.  Per-service limits
 *    come from config.limits: memory (bytes, per memory), fuelPerCall,
 *    deadlineMs.
 *  - The settlement pump: each service has one libevent event without fd
 *    (its service event).  service_request() activates it; activating an
 *    active event is a no-op, so requests coalesce.  Guest code of the
 *    store runs only in that event's callback (the service turn), one
 *    call per turn, so other services, the listener and the history
 *    commit get the loop between calls (bounded turns on the sync path).
 *    The async scheduler (runtime/sched) will call service_request()
 *    through its "needs service" callback when a host call settles.
 *  - A trap poisons the instance (the spec's rule): the service turns
 *    "poisoned", store.poisoned is recorded, and the next call fails with
 *    io.hostel.Call.ServicePoisoned while the store is recreated
 *    (store.recreated) with fresh state.
 *  - Start/Stop/Remove never free what a queued call still needs: a
 *    stopped service ends its queued calls as cancelled first.
 */
#ifndef HOSTEL_DAEMON_SERVICE_H
#define HOSTEL_DAEMON_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "component/component.h"
#include "component/instance.h"
#include "store/services.h"

struct daemon;
struct invocation;

struct service_limits {
	uint64_t memory;	/* bytes per memory; 0: the component's */
	uint64_t fuel_per_call; /* 0: unlimited */
	uint64_t deadline_ms;	/* 0: none */
};

struct service {
	struct daemon *d;
	struct service *prev, *next;
	char *name;
	char component[SHA256_HEX_SIZE];
	char *config; /* JSON object text, as stored */
	bool autostart;
	enum service_state state;
	char reason[256]; /* why failed/poisoned; "" otherwise */
	struct service_limits limits;

	/* Live while running or poisoned. */
	cm_component *comp;
	cm_linker *linker;
	cm_store *store;
	cm_component_instance *inst;

	/* The service event: the pump's entry point. */
	struct event *ev_service;
	struct invocation *queue_head, *queue_tail;
	uint64_t queued, calls, recreated;
};

struct service_registry {
	struct service *head;
	uint64_t call_prefix; /* random, makes call ids unique across runs */
	uint64_t next_call;
};

/* Load every service from the database; start the autostart ones. */
int service_registry_load(struct daemon *d);

/* The daemon stops: queued calls end cancelled (before the last commit). */
void service_registry_stopping(struct daemon *d);

/* Free every store and service (after the history is closed). */
void service_registry_free(struct daemon *d);

struct service *service_find(struct daemon *d, const char *name);

/*
 * Create a service (already validated name, resolved component sha256,
 * config text).  -EEXIST, -EINVAL (config), or a database error.
 */
int service_create(struct daemon *d, const char *name, const char *component,
		   const char *config, bool autostart, struct service **out);

/*
 * Start (instantiate).  0, or -1 with the service left "failed" and
 * s->reason / *kind saying why ("link error", "trap", ...).
 */
int service_start(struct service *s, const char **kind);
void service_stop(struct service *s, const char *reason);
/* Stop, delete from the table, free.  0 or a database error. */
int service_remove(struct service *s);

/* Ask for a service turn (coalesced).  The async scheduler's hook. */
void service_request(struct service *s);

/* Queue a call (owned by the service until it ends). */
void service_enqueue(struct service *s, struct invocation *inv);
/* Take a still-queued call out; false when it is not queued. */
bool service_dequeue(struct service *s, struct invocation *inv);

/* Resolve "f" / "iface#f" in the running instance; NULL if absent. */
cm_func *service_export(struct service *s, const char *name);

/* {name, component, state, autostart, config, ...}; NULL: no memory. */
json_t *service_info_json(const struct service *s);

/* Parse config text into limits; -1 with why on a bad shape. */
int service_parse_limits(const char *config, struct service_limits *out,
			 char *why, size_t whylen);

#endif
