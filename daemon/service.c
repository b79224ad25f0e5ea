/*
 * service.c - the service registry (see service.h): services loaded from
 * the database, their live stores, poisoning and recreation, and the
 * service event that drives each store (the settlement pump).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "daemon/daemon.h"
#include "daemon/history-hooks.h"
#include "daemon/invocation.h"
#include "daemon/service.h"
#include "store/components.h"
#include "store/db.h"

#define WASM_PAGE 65536u
/*
 * Fuel one service turn may spend on background work (threads readied by
 * settled host calls) before the loop gets a say again (invariant 3).
 */
#define SERVICE_TURN_FUEL 1000000u

static void store_wants_service(void *env);

static struct service_registry *reg(struct daemon *d)
{
	return d->services;
}

static struct db *db_of(struct service *s)
{
	return daemon_history_db(s->d);
}

static void set_reason(struct service *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_reason(struct service *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
}

static void set_state(struct service *s, enum service_state st)
{
	struct db *db = db_of(s);

	s->state = st;
	if (st == SERVICE_RUNNING || st == SERVICE_STOPPED)
		s->reason[0] = '\0';
	if (db && services_set_state(db, s->name, st) < 0)
		log_warn(&s->d->log, "service %s: cannot record state %s: %s",
			 s->name, service_state_name(st), db_errmsg(db));
}

/* ---- configuration ------------------------------------------------------ */

static int limit_value(json_t *limits, const char *key, uint64_t *out,
		       char *why, size_t whylen)
{
	json_t *v = json_object_get(limits, key);

	*out = 0;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		snprintf(why, whylen,
			 "limits.%s: expected a non-negative integer", key);
		return -1;
	}
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

int service_parse_limits(const char *config, struct service_limits *out,
			 char *why, size_t whylen)
{
	static const char *const known[] = {"memory", "fuelPerCall",
					    "deadlineMs", NULL};
	json_t *root = json_loads(config ? config : "{}", 0, NULL);
	json_t *limits, *v;
	const char *key;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(root)) {
		snprintf(why, whylen, "config: expected an object");
		goto out;
	}
	limits = json_object_get(root, "limits");
	if (limits && !json_is_null(limits)) {
		if (!json_is_object(limits)) {
			snprintf(why, whylen, "limits: expected an object");
			goto out;
		}
		json_object_foreach(limits, key, v)
		{
			const char *const *k = known;

			while (*k && strcmp(*k, key))
				k++;
			if (!*k) {
				snprintf(why, whylen,
					 "limits: unknown limit \"%s\" (known: "
					 "memory, fuelPerCall, deadlineMs)",
					 key);
				goto out;
			}
		}
		if (limit_value(limits, "memory", &out->memory, why, whylen) ||
		    limit_value(limits, "fuelPerCall", &out->fuel_per_call, why,
				whylen) ||
		    limit_value(limits, "deadlineMs", &out->deadline_ms, why,
				whylen))
			goto out;
		if (out->memory && out->memory < WASM_PAGE) {
			snprintf(why, whylen,
				 "limits.memory: at least one page (65536 "
				 "bytes)");
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

/* ---- stores -------------------------------------------------------------- */

static void drop_store(struct service *s)
{
	if (s->store)
		cm_store_free(s->store); /* frees the instance too */
	s->store = NULL;
	s->inst = NULL;
}

static void drop_live(struct service *s)
{
	drop_store(s);
	if (s->linker)
		cm_linker_free(s->linker);
	s->linker = NULL;
	if (s->comp)
		cm_component_free(s->comp);
	s->comp = NULL;
}

static int load_component(struct service *s, const char **kind)
{
	struct db *db = db_of(s);
	wasm_error werr;
	void *blob = NULL;
	size_t len = 0;
	int rc;

	if (!db) {
		*kind = "unavailable";
		set_reason(s, "the database is not open");
		return -1;
	}
	rc = components_get(db, s->component, NULL, &blob, &len);
	if (rc) {
		*kind = "component";
		set_reason(s, "component %s: %s", s->component,
			   rc == -ENOENT ? "not found" : db_errmsg(db));
		return -1;
	}
	memset(&werr, 0, sizeof(werr));
	rc = cm_component_load(blob, len, &s->comp, &werr);
	free(blob);
	if (rc) {
		*kind = "invalid component";
		set_reason(s, "at offset %zu: %s", werr.offset, werr.msg);
		s->comp = NULL;
		return -1;
	}
	/* No host imports yet: WASI is defined here when it lands. */
	s->linker = cm_linker_new();
	if (!s->linker) {
		*kind = "out of memory";
		set_reason(s, "out of memory");
		return -1;
	}
	return 0;
}

/* A fresh store and instance of the loaded component. */
static int new_store(struct service *s, const char **kind)
{
	cm_store_config cfg = {
		.limits = {.max_memory_pages = s->limits.memory / WASM_PAGE,
			   .start_fuel = s->limits.fuel_per_call},
		.lazy_unsupported = true,
		.request_service = store_wants_service,
		.service_env = s,
		.turn_fuel = SERVICE_TURN_FUEL,
		.sched_seed = s->d->sched_seed,
	};
	cm_error err;

	s->store = cm_store_new(&cfg);
	if (!s->store) {
		*kind = "out of memory";
		set_reason(s, "out of memory");
		return -1;
	}
	cm_store_set_fuel(s->store, s->limits.fuel_per_call
					    ? s->limits.fuel_per_call
					    : UINT64_MAX);
	memset(&err, 0, sizeof(err));
	if (cm_instantiate(s->store, s->comp, s->linker, &s->inst, &err)) {
		*kind = cm_error_kind_name(err.kind);
		set_reason(s, "%s: %s", *kind, err.msg);
		drop_store(s);
		return -1;
	}
	return 0;
}

int service_start(struct service *s, const char **kind)
{
	const struct history_hooks *h = daemon_history_hooks(s->d);
	bool recreate = s->state == SERVICE_POISONED && s->comp;
	const char *k = "";

	if (!kind)
		kind = &k;
	if (s->state == SERVICE_RUNNING && s->inst)
		return 0;
	drop_store(s);
	if (!s->comp && load_component(s, kind) < 0)
		goto failed;
	if (new_store(s, kind) < 0)
		goto failed;
	if (h) {
		if (recreate)
			h->store_recreated(h->ctx, s->name, s->component);
		else
			h->store_created(h->ctx, s->name, s->component);
	}
	if (recreate)
		s->recreated++;
	s->calls = 0;
	set_state(s, SERVICE_RUNNING);
	log_info(&s->d->log, "service %s: %s", s->name,
		 recreate ? "store recreated" : "started");
	return 0;
failed:
	log_warn(&s->d->log, "service %s: cannot start: %s", s->name,
		 s->reason);
	drop_live(s);
	{
		char why[sizeof(s->reason)];

		memcpy(why, s->reason, sizeof(why));
		set_state(s, SERVICE_FAILED);
		memcpy(s->reason, why, sizeof(why));
	}
	return -1;
}

/* End every queued call as cancelled. */
static void cancel_queue(struct service *s, const char *reason)
{
	while (s->queue_head) {
		struct invocation *inv = s->queue_head;

		service_dequeue(s, inv);
		invocation_cancel(inv, reason);
	}
}

void service_stop(struct service *s, const char *reason)
{
	cancel_queue(s, reason);
	drop_live(s);
	if (s->state != SERVICE_STOPPED) {
		set_state(s, SERVICE_STOPPED);
		log_info(&s->d->log, "service %s: stopped", s->name);
	}
}

/* ---- the pump ------------------------------------------------------------ */

/*
 * Background work of a running store with no call in flight: deliver
 * settled host calls and run the threads they ready, within one turn's
 * fuel (the runtime requests another turn when work remains).  A trap
 * here poisons the instance; it surfaces on the next call.
 */
static void background_turn(struct service *s)
{
	const struct history_hooks *h;
	cm_error err;

	if (s->state != SERVICE_RUNNING || s->store == NULL)
		return;
	memset(&err, 0, sizeof(err));
	if (cm_store_service_turn(s->store, 0, &err) >= 0)
		return;
	s->state = SERVICE_POISONED;
	if (db_of(s))
		services_set_state(db_of(s), s->name, SERVICE_POISONED);
	set_reason(s, "background work trapped: %.200s", err.msg);
	log_info(&s->d->log, "service %s: poisoned: %s", s->name, s->reason);
	h = daemon_history_hooks(s->d);
	if (h) {
		json_t *why = json_pack("{ss}", "message", err.msg);

		h->store_poisoned(h->ctx, s->name, why);
		json_decref(why);
	}
}

/*
 * One service turn: run the first queued call, then ask for another turn
 * if more wait, so the loop gets a say between calls.
 */
static void service_turn(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;
	struct invocation *inv;

	background_turn(s);
	inv = s->queue_head;
	if (!inv)
		return;
	service_dequeue(s, inv);
	invocation_run(inv);
	if (s->queue_head)
		service_request(s);
}

/*
 * The runtime asks for service when settled host calls or suspended
 * threads have work: the settlement pump.  Requests coalesce in the
 * service event (service_request).
 */
static void store_wants_service(void *env)
{
	service_request(env);
}

void service_request(struct service *s)
{
	/* Active already: this request joins the pending turn. */
	if (!event_pending(s->ev_service, EV_TIMEOUT, NULL))
		event_active(s->ev_service, EV_TIMEOUT, 1);
}

void service_enqueue(struct service *s, struct invocation *inv)
{
	inv->svc = s;
	inv->queued = true;
	inv->next = NULL;
	inv->prev = s->queue_tail;
	if (s->queue_tail)
		s->queue_tail->next = inv;
	else
		s->queue_head = inv;
	s->queue_tail = inv;
	s->queued++;
	service_request(s);
}

bool service_dequeue(struct service *s, struct invocation *inv)
{
	if (!inv->queued || inv->svc != s)
		return false;
	if (inv->prev)
		inv->prev->next = inv->next;
	else
		s->queue_head = inv->next;
	if (inv->next)
		inv->next->prev = inv->prev;
	else
		s->queue_tail = inv->prev;
	inv->next = inv->prev = NULL;
	inv->queued = false;
	s->queued--;
	return true;
}

cm_func *service_export(struct service *s, const char *name)
{
	const char *hash;
	cm_func *f;
	char *iface;

	if (!s->inst)
		return NULL;
	hash = strrchr(name, '#');
	if (!hash)
		return cm_instance_export(s->inst, NULL, name);
	iface = strndup(name, (size_t)(hash - name));
	if (!iface)
		return NULL;
	f = cm_instance_export(s->inst, iface, hash + 1);
	free(iface);
	return f;
}

/* ---- the registry ---------------------------------------------------------
 */

static struct service *service_new(struct daemon *d,
				   const struct service_record *rec)
{
	struct service *s = calloc(1, sizeof(*s));
	char why[160];

	if (!s)
		return NULL;
	s->d = d;
	s->name = strdup(rec->name);
	s->config = strdup(rec->config ? rec->config : "{}");
	s->ev_service = event_new(d->base, -1, 0, service_turn, s);
	if (!s->name || !s->config || !s->ev_service) {
		if (s->ev_service)
			event_free(s->ev_service);
		free(s->name);
		free(s->config);
		free(s);
		return NULL;
	}
	memcpy(s->component, rec->component, sizeof(s->component));
	s->autostart = rec->autostart;
	s->state = SERVICE_STOPPED;
	if (service_parse_limits(s->config, &s->limits, why, sizeof(why)))
		log_warn(&d->log, "service %s: %s; limits ignored", s->name,
			 why);
	s->next = reg(d)->head;
	if (s->next)
		s->next->prev = s;
	reg(d)->head = s;
	return s;
}

static void service_free(struct service *s)
{
	struct service_registry *r = reg(s->d);

	cancel_queue(s, "the service is removed");
	drop_live(s);
	if (s->prev)
		s->prev->next = s->next;
	else
		r->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	event_free(s->ev_service);
	free(s->name);
	free(s->config);
	free(s);
}

struct service *service_find(struct daemon *d, const char *name)
{
	if (!reg(d))
		return NULL;
	for (struct service *s = reg(d)->head; s; s = s->next)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

static int load_one(void *arg, const struct service_record *rec)
{
	struct daemon *d = arg;
	struct service *s = service_new(d, rec);

	if (!s)
		return -ENOMEM;
	s->state = rec->state;
	if (rec->autostart) {
		service_start(s, NULL);
	} else if (s->state != SERVICE_STOPPED) {
		/* Its store did not survive the restart. */
		set_state(s, SERVICE_STOPPED);
	}
	return 0;
}

int service_registry_load(struct daemon *d)
{
	struct db *db = daemon_history_db(d);
	struct service_registry *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return -ENOMEM;
	if (getrandom(&r->call_prefix, sizeof(r->call_prefix), 0) !=
	    sizeof(r->call_prefix))
		r->call_prefix = (uint64_t)db_now_ns();
	d->services = r;
	if (!db)
		return 0;
	rc = services_list(db, false, load_one, d);
	if (rc) {
		log_err(&d->log, "services: cannot load: %s",
			rc == -ENOMEM ? "out of memory" : db_errmsg(db));
		return rc;
	}
	return 0;
}

void service_registry_stopping(struct daemon *d)
{
	if (!reg(d))
		return;
	for (struct service *s = reg(d)->head; s; s = s->next)
		cancel_queue(s, "hosteld is stopping");
}

void service_registry_free(struct daemon *d)
{
	struct service_registry *r = reg(d);

	if (!r)
		return;
	while (r->head)
		service_free(r->head);
	free(r);
	d->services = NULL;
}

int service_create(struct daemon *d, const char *name, const char *component,
		   const char *config, bool autostart, struct service **out)
{
	struct db *db = daemon_history_db(d);
	struct service_record rec = {0};
	int rc;

	if (!db)
		return -ENODEV;
	if (service_find(d, name))
		return -EEXIST;
	rec.name = (char *)name;
	memcpy(rec.component, component, sizeof(rec.component));
	rec.config = (char *)config;
	rec.autostart = autostart;
	rec.state = SERVICE_STOPPED;
	rec.keep_events = -1;
	rec.keep_age = -1;
	rc = services_create(db, &rec);
	if (rc)
		return rc;
	*out = service_new(d, &rec);
	if (!*out) {
		services_remove(db, name);
		return -ENOMEM;
	}
	return 0;
}

int service_remove(struct service *s)
{
	struct db *db = db_of(s);
	int rc;

	service_stop(s, "the service is removed");
	rc = db ? services_remove(db, s->name) : -ENODEV;
	if (rc && rc != -ENOENT)
		return rc;
	service_free(s);
	return 0;
}

json_t *service_info_json(const struct service *s)
{
	json_t *config = json_loads(s->config, 0, NULL);

	if (!config)
		config = json_object();
	return json_pack("{ss,ss,ss,sb,so,ss*,sI,sI,sI}", "name", s->name,
			 "component", s->component, "state",
			 service_state_name(s->state), "autostart",
			 s->autostart, "config", config, "reason",
			 s->reason[0] ? s->reason : NULL, "queued",
			 (json_int_t)s->queued, "calls", (json_int_t)s->calls,
			 "recreated", (json_int_t)s->recreated);
}
