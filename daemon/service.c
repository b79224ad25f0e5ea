/*
 * service.c - the service registry (see service.h): services loaded from
 * the database, their live stores, poisoning and recreation, and the
 * service event that drives each store (the settlement pump).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - service_parse_limits: a parse of a config (a request, at most
 *    VARLINK_MESSAGE_MAX; stored configs came the same way).
 *  - service_new: copies of the name (HISTORY_NAME_MAX) and the config;
 *    one service per services row (bounded by who holds the deploy
 *    role, docs/limits.md).
 *  - service_export: the list of the instance's function exports
 *    (run/exportname.h), as long as its component defines.
 *  - the queue: service_enqueue links invocations that invocation_begin
 *    admitted: at most limits.maxQueuedCalls waiting beyond the room
 *    under limits.maxConcurrentCalls (service_queue_full).
 *  - store.* payloads: fixed members, CM_ERROR_MSG_MAX messages, a call id
 *    (48), the 256-byte reason.
 *  - service_info_json (Inspect, List): the stored config parsed again.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cabi/cabi.h"
#include "daemon/daemon.h"
#include "daemon/durable.h"
#include "daemon/history-hooks.h"
#include "daemon/hostcalls.h"
#include "daemon/invocation.h"
#include "daemon/service-wasi.h"
#include "daemon/service.h"
#include "run/snapshot.h"
#include "store/components.h"
#include "store/db.h"
#include "store/snapshots.h"

#define WASM_PAGE 65536u
/*
 * Fuel one service turn may spend (the call in flight and background
 * work) before the loop gets a say again (invariant 3).  A round trip of
 * another service's call spans a few loop iterations, each of which may
 * hold one such turn of a spinning guest: at the interpreter's slowest
 * (a tight branch loop, about 25M fuel/s on the reference machine) this
 * is under 1 ms a turn, which keeps that call's p99 under 5 ms
 * (bench/call-latency); the loop's own cost per turn is microseconds.
 */
#define SERVICE_TURN_FUEL 20000u

/*
 * Fuel a core start function may spend when the service sets no
 * fuelPerCall.  Instantiation (deploy, start, recreate) runs on the loop
 * in one go, so a start function that never ends must not hold it: this
 * is about 0.3 s of a tight loop on the reference machine.
 */
#define DEFAULT_START_FUEL 100000000u

/*
 * Queued calls one turn begins (under the cap of calls in flight): a
 * flood of short calls then ends a few per loop iteration, not a burst
 * of hundreds of events that the history's followers must absorb at
 * once; long calls still all get in flight within a few iterations.
 */
#ifndef SERVICE_STARTS_PER_TURN
#define SERVICE_STARTS_PER_TURN 8u
#endif

/*
 * Trap storm back-off (service.h): the first poisoning in a row is
 * recreated at once, the next after BACKOFF_FIRST_MS, doubling up to
 * BACKOFF_MAX_MS; a store that lived BACKOFF_QUIET_MS ends the row.
 */
#define SERVICE_BACKOFF_FIRST_MS 100u
#define SERVICE_BACKOFF_MAX_MS	 30000u
#define SERVICE_BACKOFF_QUIET_MS 60000u

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

/* A count bound of the runtime: 1 ..= 2^28 - 1 (the spec's table size). */
static int limit_count(json_t *limits, const char *key, uint64_t *out,
		       char *why, size_t whylen)
{
	if (limit_value(limits, key, out, why, whylen))
		return -1;
	if (json_is_integer(json_object_get(limits, key)) &&
	    (*out == 0 || *out > CABI_TABLE_MAX_LENGTH)) {
		snprintf(why, whylen, "limits.%s: expected 1 to %u", key,
			 CABI_TABLE_MAX_LENGTH);
		return -1;
	}
	return 0;
}

int service_parse_limits(const char *config, struct service_limits *out,
			 char *why, size_t whylen)
{
	static const char *const known[] = {"memory",
					    "fuelPerCall",
					    "deadlineMs",
					    "maxHandles",
					    "maxThreads",
					    "maxPendingHostCalls",
					    "maxConcurrentCalls",
					    "hostBytes",
					    "tableElements",
					    "maxQueuedCalls",
					    "snapshotIntervalMs",
					    NULL};
	json_t *root = json_loads(config ? config : "{}", 0, NULL);
	json_t *limits, *v;
	const char *key;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!json_is_object(root)) {
		snprintf(why, whylen, "config: expected an object");
		goto out;
	}
	/* The WASI keys are checked here too, so Create refuses them. */
	if (service_wasi_check_config(root, why, whylen))
		goto out;
	v = json_object_get(root, "durability");
	if (v && !json_is_null(v)) {
		const char *d = json_string_value(v);

		if (d && !strcmp(d, "none")) {
			out->durability = SERVICE_DURABILITY_NONE;
		} else if (d && !strcmp(d, "stop")) {
			out->durability = SERVICE_DURABILITY_STOP;
		} else if (d && !strcmp(d, "commit")) {
			out->durability = SERVICE_DURABILITY_COMMIT;
		} else {
			snprintf(why, whylen,
				 "durability: expected \"none\", \"stop\" "
				 "or \"commit\"");
			goto out;
		}
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
					 "memory, fuelPerCall, deadlineMs, "
					 "maxHandles, maxThreads, "
					 "maxPendingHostCalls, "
					 "maxConcurrentCalls, hostBytes, "
					 "tableElements, maxQueuedCalls, "
					 "snapshotIntervalMs)",
					 key);
				goto out;
			}
		}
		if (limit_value(limits, "memory", &out->memory, why, whylen) ||
		    limit_value(limits, "fuelPerCall", &out->fuel_per_call, why,
				whylen) ||
		    limit_value(limits, "deadlineMs", &out->deadline_ms, why,
				whylen) ||
		    limit_count(limits, "maxHandles", &out->max_handles, why,
				whylen) ||
		    limit_count(limits, "maxThreads", &out->max_threads, why,
				whylen) ||
		    limit_count(limits, "maxPendingHostCalls",
				&out->max_pending_host_calls, why, whylen) ||
		    limit_count(limits, "maxConcurrentCalls",
				&out->max_concurrent_calls, why, whylen) ||
		    limit_count(limits, "maxQueuedCalls",
				&out->max_queued_calls, why, whylen) ||
		    limit_value(limits, "hostBytes", &out->host_bytes, why,
				whylen) ||
		    limit_value(limits, "tableElements", &out->table_elements,
				why, whylen) ||
		    limit_value(limits, "snapshotIntervalMs",
				&out->snapshot_interval_ms, why, whylen))
			goto out;
		if (json_is_integer(json_object_get(limits, "tableElements")) &&
		    (out->table_elements == 0 ||
		     out->table_elements > UINT32_MAX)) {
			snprintf(why, whylen,
				 "limits.tableElements: expected 1 to %u",
				 UINT32_MAX);
			goto out;
		}
		if (json_object_get(limits, "hostBytes") &&
		    !json_is_null(json_object_get(limits, "hostBytes")) &&
		    out->host_bytes < CONFIG_HOST_BYTES_MIN) {
			snprintf(
				why, whylen,
				"limits.hostBytes: at least %lld bytes (1 MiB)",
				CONFIG_HOST_BYTES_MIN);
			goto out;
		}
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

/* ---- trap storm back-off -------------------------------------------------
 */

uint64_t service_backoff_ms(uint32_t streak)
{
	uint64_t ms = SERVICE_BACKOFF_FIRST_MS;

	if (streak == 0)
		return 0;
	while (--streak > 0 && ms < SERVICE_BACKOFF_MAX_MS)
		ms *= 2;
	return ms < SERVICE_BACKOFF_MAX_MS ? ms : SERVICE_BACKOFF_MAX_MS;
}

uint64_t service_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The symptom of an earlier poisoning, never its cause. */
#define CANNOT_ENTER "cannot enter component instance"

void service_note_trap(struct service *s, const char *call_id, const char *msg)
{
	if (s->state == SERVICE_RUNNING) {
		s->state = SERVICE_POISONED;
		if (db_of(s))
			services_set_state(db_of(s), s->name, SERVICE_POISONED);
		s->poison_pending = true;
	} else if (!s->poison_pending || !strstr(s->poison_msg, CANNOT_ENTER) ||
		   strstr(msg, CANNOT_ENTER)) {
		return; /* recorded, or the cause is known already */
	}
	snprintf(s->poison_call, sizeof(s->poison_call), "%s", call_id);
	snprintf(s->poison_msg, sizeof(s->poison_msg), "%s", msg);
	set_reason(s, "call %s trapped: %.180s", call_id, msg);
}

/* store.poisoned of a call's trap, once the turn's calls reported. */
static void record_poison(struct service *s)
{
	const struct history_hooks *h = daemon_history_hooks(s->d);

	if (!s->poison_pending)
		return;
	s->poison_pending = false;
	log_info(&s->d->log, "service %s: poisoned: %s", s->name, s->reason);
	if (h) {
		json_t *why = json_pack("{ss,ss}", "call", s->poison_call,
					"message", s->poison_msg);

		h->store_poisoned(h->ctx, s->name, why);
		json_decref(why);
	}
}

/*
 * A poisoning not yet seen here: count it in the row, pick its back-off,
 * say in the reason (what ServicePoisoned replies carry) when the store
 * comes back, and arm the timer that brings it back.
 */
static void note_poisoned(struct service *s)
{
	uint64_t now = service_mono_ns();
	char suffix[128], when[40];
	struct timespec wall;
	struct tm tm;
	size_t room;

	record_poison(s);
	if (s->state != SERVICE_POISONED || s->poison_noted)
		return;
	if (s->trap_streak > 0 &&
	    now - s->recreated_ns >
		    (uint64_t)SERVICE_BACKOFF_QUIET_MS * 1000000u)
		s->trap_streak = 0;
	s->backoff_ms = service_backoff_ms(s->trap_streak);
	if (s->trap_streak < UINT32_MAX)
		s->trap_streak++;
	s->poison_noted = true;
	s->metrics.poisonings++;
	s->recreate_at_ns = now + s->backoff_ms * 1000000u;
	if (s->backoff_ms == 0)
		return;
	clock_gettime(CLOCK_REALTIME, &wall);
	wall.tv_sec += (time_t)(s->backoff_ms / 1000);
	wall.tv_nsec += (long)(s->backoff_ms % 1000) * 1000000;
	if (wall.tv_nsec >= 1000000000) {
		wall.tv_sec++;
		wall.tv_nsec -= 1000000000;
	}
	gmtime_r(&wall.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(suffix, sizeof(suffix),
		 "; trap %u in a row: recreated in %llu ms (at %s.%03ldZ)",
		 s->trap_streak, (unsigned long long)s->backoff_ms, when,
		 wall.tv_nsec / 1000000);
	room = sizeof(s->reason) - 1 - strlen(suffix);
	if (strlen(s->reason) > room)
		s->reason[room] = '\0';
	strcat(s->reason, suffix);
	log_info(&s->d->log, "service %s: trap storm: recreation in %llu ms",
		 s->name, (unsigned long long)s->backoff_ms);
	if (s->ev_recreate) {
		struct timeval tv = {(time_t)(s->backoff_ms / 1000),
				     (suseconds_t)(s->backoff_ms % 1000) *
					     1000};

		/*
		 * libevent times the timer from the clock it read when this
		 * loop turn began; a turn that committed the history first
		 * would end the back-off before the time the reason states.
		 */
		event_base_update_cache_time(s->d->base);
		evtimer_add(s->ev_recreate, &tv);
	}
}

/* The back-off is over: fresh state, then the calls that wait. */
static void recreate_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;
	const char *kind = "";

	if (s->state != SERVICE_POISONED)
		return;
	service_start(s, &kind);
	if (s->queue_head)
		service_request(s);
}

/* ---- stores -------------------------------------------------------------- */

/*
 * Stop every call in flight (cancelled: the store goes).  Each ends
 * inside cm_call_cancel and leaves the run list then.
 */
static void stop_running(struct service *s, const char *reason)
{
	struct invocation *inv, *next;

	for (inv = s->run_head; inv; inv = next) {
		next = inv->next;
		invocation_stop(inv, reason);
	}
}

/* The store first: its dropped handles call back into the WASI ctx. */
static void drop_store(struct service *s)
{
	/* never free a store under a call */
	stop_running(s, "the store is dropped");
	if (s->store) {
		s->metrics.fuel_retired += s->store->fuel_used;
		cm_store_free(s->store); /* frees the instance too */
	}
	s->store = NULL;
	s->inst = NULL;
	durable_store_drop(s);
	service_wasi_free(s->wasi);
	s->wasi = NULL;
	if (s->linker)
		cm_linker_free(s->linker);
	s->linker = NULL;
}

static void drop_live(struct service *s)
{
	drop_store(s);
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
	return 0;
}

/* A fresh store and instance of the loaded component. */
/* The bytes per memory its stores may have: its own limits.memory,
 * else hostel.conf's service-memory, else the component's own limit. */
static uint64_t service_memory(const struct service *s)
{
	if (s->limits.memory)
		return s->limits.memory;
	return s->d->file.memory > 0 ? (uint64_t)s->d->file.memory : 0;
}

uint64_t service_host_bytes(const struct service *s)
{
	/* the service's own, else hostel.conf's, else the runtime's */
	if (s->limits.host_bytes)
		return s->limits.host_bytes;
	if (s->d->file.host_bytes > 0)
		return (uint64_t)s->d->file.host_bytes;
	return CM_STORE_DEFAULT_MAX_HOST_BYTES;
}

static int new_store(struct service *s, const char **kind)
{
	cm_store_config cfg = {
		.limits = {.max_memory_pages = service_memory(s) / WASM_PAGE,
			   .max_table_elems = s->limits.table_elements,
			   .start_fuel = s->limits.fuel_per_call
						 ? s->limits.fuel_per_call
						 : DEFAULT_START_FUEL},
		.lazy_unsupported = true,
		.request_service = store_wants_service,
		.service_env = s,
		.turn_fuel = SERVICE_TURN_FUEL,
		.sched_seed = s->d->sched_seed,
		.max_handles = (uint32_t)s->limits.max_handles,
		.max_threads = (uint32_t)s->limits.max_threads,
		.max_pending_host_calls =
			(uint32_t)s->limits.max_pending_host_calls,
		.max_host_bytes = service_host_bytes(s),
	};
	cm_error err;

	/* Host imports: WASI 0.2, from this service's config. */
	s->linker = cm_linker_new();
	if (!s->linker) {
		*kind = "out of memory";
		set_reason(s, "out of memory");
		return -1;
	}
	s->wasi = service_wasi_new(s, s->linker, s->reason, sizeof(s->reason));
	if (!s->wasi) {
		*kind = "config";
		drop_store(s);
		return -1;
	}
	s->store = cm_store_new(&cfg);
	if (!s->store) {
		*kind = "out of memory";
		set_reason(s, "out of memory");
		return -1;
	}
	cm_store_set_fuel(s->store, s->limits.fuel_per_call
					    ? s->limits.fuel_per_call
					    : UINT64_MAX);
	hostcalls_observe(s);
	memset(&err, 0, sizeof(err));
	if (cm_instantiate(s->store, s->comp, s->linker, &s->inst, &err)) {
		*kind = cm_error_kind_name(err.kind);
		set_reason(s, "%s: %s", *kind, err.msg);
		drop_store(s);
		return -1;
	}
	return 0;
}

/* ---- durability ------------------------------------------------------------
 */

int service_durability(const struct service *s)
{
	if (s->limits.durability != SERVICE_DURABILITY_UNSET)
		return s->limits.durability;
	switch (s->d->file.durability) {
	case 1:
		return SERVICE_DURABILITY_STOP;
	case 2:
		return SERVICE_DURABILITY_COMMIT;
	case 0:
		return SERVICE_DURABILITY_NONE;
	default:
		/* unset: commit, which rides on the history's commits; with
		 * `history = off` there are none, so a fresh store */
		return daemon_history_is_on(s->d) ? SERVICE_DURABILITY_COMMIT
						  : SERVICE_DURABILITY_NONE;
	}
}

const char *service_durability_name(int durability)
{
	return durability == SERVICE_DURABILITY_STOP	 ? "stop"
	       : durability == SERVICE_DURABILITY_COMMIT ? "commit"
							 : "none";
}

int service_start(struct service *s, const char **kind)
{
	const struct history_hooks *h = daemon_history_hooks(s->d);
	bool recreate = s->state == SERVICE_POISONED && s->comp;
	const char *k = "";
	char snap_why[CM_ERROR_MSG_MAX];
	struct durable_restored snap = {0};
	int restored = 0;

	if (s->state == SERVICE_POISONED) {
		note_poisoned(s);
		/* the daemon on its own waits out a trap storm's back-off */
		if (!kind && service_mono_ns() < s->recreate_at_ns)
			return -1;
	}
	if (!kind)
		kind = &k;
	if (s->state == SERVICE_RUNNING && s->inst)
		return 0;
	if (s->ev_recreate)
		evtimer_del(s->ev_recreate);
	drop_store(s);
	if (!s->comp && load_component(s, kind) < 0)
		goto failed;
	if (new_store(s, kind) < 0)
		goto failed;
	/* after a trap the store is fresh: the snapshot is for restarts */
	if (!recreate)
		restored = durable_restore(s, &snap, snap_why,
					   sizeof(snap_why));
	if (restored < 0) {
		log_warn(&s->d->log,
			 "service %s: snapshot refused, a fresh store: %s",
			 s->name, snap_why);
		drop_store(s);
		if (new_store(s, kind) < 0)
			goto failed;
	}
	if (h) {
		if (recreate && h->event) {
			/* store.recreated's own shape, with the back-off */
			json_t *p =
				json_pack("{ss,s{sI,si}}", "component",
					  s->component, "detail", "backoffMs",
					  (json_int_t)s->backoff_ms, "traps",
					  (int)s->trap_streak);

			if (p)
				h->event(h->ctx, s->name, NULL,
					 "store.recreated", p, NULL, NULL);
			json_decref(p);
		} else if (recreate) {
			h->store_recreated(h->ctx, s->name, s->component);
		} else {
			h->store_created(h->ctx, s->name, s->component);
		}
	}
	durable_restore_event(s, restored, &snap, snap_why);
	if (restored > 0 && durable_restored_calls(s) < 0)
		log_warn(&s->d->log,
			 "service %s: out of memory for the deadlines of "
			 "calls restored in flight",
			 s->name);
	/* the chain of images starts again with this store */
	durable_store_new(s);
	if (recreate)
		s->recreated++;
	s->poison_noted = false;
	s->recreated_ns = service_mono_ns();
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

static void cancel_queued(struct service *s, const char *reason)
{
	while (s->queue_head) {
		struct invocation *inv = s->queue_head;

		service_dequeue(s, inv);
		invocation_cancel(inv, reason);
	}
}

/* End every queued call as cancelled, and stop those in flight. */
static void cancel_queue(struct service *s, const char *reason)
{
	cancel_queued(s, reason);
	/* and those in flight (their store may be about to go) */
	stop_running(s, reason);
}

/*
 * A graceful stop.  A durable store's image is taken with its calls in
 * flight in it, and they are interrupted, not stopped midway (which
 * would poison the instance and lose the image): the history has each
 * call.interrupted, as a crash would, and the next start brings back
 * those the image holds, going on without their clients.  Calls that
 * ran no guest code (queued, at their gate) end cancelled first, and
 * any whose result is in end returned.  Under durability none the store
 * goes, so its calls in flight are stopped (cancelled).
 */
static void stop_gracefully(struct service *s, const char *reason)
{
	struct invocation *inv, *next;

	cancel_queued(s, reason);
	if (!service_keeps_store(s)) {
		stop_running(s, reason);
		return;
	}
	for (inv = s->run_head; inv; inv = next) {
		next = inv->next;
		invocation_settle(inv, reason);
	}
	service_snapshot_at_stop(s);
	for (inv = s->run_head; inv; inv = next) {
		next = inv->next;
		invocation_interrupt(inv, reason);
	}
}

static void stop(struct service *s, const char *reason, bool snapshot)
{
	if (snapshot)
		stop_gracefully(s, reason);
	else
		cancel_queue(s, reason);
	drop_live(s);
	if (s->ev_recreate)
		evtimer_del(s->ev_recreate);
	s->poison_noted = false;
	s->trap_streak = 0;
	if (s->state != SERVICE_STOPPED) {
		set_state(s, SERVICE_STOPPED);
		log_info(&s->d->log, "service %s: stopped", s->name);
	}
}

/* A graceful stop: durability "stop" snapshots the store first, commit
 * captures its last image. */
void service_stop(struct service *s, const char *reason)
{
	stop(s, reason, true);
}

/* ---- the pump ------------------------------------------------------------ */

/*
 * One turn of a running store: the call in flight and background work
 * (settled host calls and the threads they ready), within one turn's
 * fuel (the runtime requests another turn when work remains).  A trap
 * of the call in flight ends it (the runtime calls invocation.c back,
 * which records the poisoning); a trap with no call to blame poisons
 * the instance and surfaces on the next call.
 */
static void store_turn(struct service *s)
{
	const struct history_hooks *h;
	cm_error err;

	if (s->state != SERVICE_RUNNING || s->store == NULL)
		return;
	memset(&err, 0, sizeof(err));
	if (cm_store_service_turn(s->store, 0, &err) >= 0)
		return;
	if (s->state != SERVICE_RUNNING)
		return; /* the call that trapped reported it */
	s->state = SERVICE_POISONED;
	if (db_of(s))
		services_set_state(db_of(s), s->name, SERVICE_POISONED);
	set_reason(s, "background work trapped: %.200s", err.msg);
	note_poisoned(s);
	log_info(&s->d->log, "service %s: poisoned: %s", s->name, s->reason);
	h = daemon_history_hooks(s->d);
	if (h) {
		json_t *why = json_pack("{ss,sI}", "message", err.msg,
					"backoffMs", (json_int_t)s->backoff_ms);

		h->store_poisoned(h->ctx, s->name, why);
		json_decref(why);
	}
}

static uint32_t max_in_flight(const struct service *s)
{
	uint64_t max = s->limits.max_concurrent_calls;

	return max ? (uint32_t)max : SERVICE_MAX_CONCURRENT_CALLS;
}

/*
 * The instance is poisoned: every call still in flight ends now, once
 * (invocation_abort: trapped if its guest code began, else failed
 * ServicePoisoned), so none waits on threads that will never run again.
 */
static void abort_running(struct service *s)
{
	struct invocation *inv, *next;
	char why[sizeof(s->reason) + 64];

	if (!s->run_head)
		return;
	snprintf(why, sizeof(why), "the instance was poisoned (%s)",
		 s->reason[0] ? s->reason : "a trap");
	for (inv = s->run_head; inv; inv = next) {
		next = inv->next;
		invocation_abort(inv, why);
	}
}

void service_poisoned(struct service *s, const char *why)
{
	const struct history_hooks *h;

	record_poison(s);
	if (s->state == SERVICE_RUNNING) {
		s->state = SERVICE_POISONED;
		if (db_of(s))
			services_set_state(db_of(s), s->name, SERVICE_POISONED);
		set_reason(s, "%.250s", why);
		log_info(&s->d->log, "service %s: poisoned: %s", s->name,
			 s->reason);
		h = daemon_history_hooks(s->d);
		if (h) {
			json_t *p = json_pack("{ss}", "message", why);

			h->store_poisoned(h->ctx, s->name, p);
			json_decref(p);
		}
	}
	if (s->state != SERVICE_POISONED)
		return;
	abort_running(s);
	/* fresh state now, or when the back-off allows (its timer) */
	service_start(s, NULL); /* store.recreated */
	if (s->queue_head)
		service_request(s);
}

void service_running_add(struct service *s, struct invocation *inv)
{
	inv->prev = NULL;
	inv->next = s->run_head;
	if (s->run_head)
		s->run_head->prev = inv;
	s->run_head = inv;
	s->nrunning++;
}

void service_running_remove(struct service *s, struct invocation *inv)
{
	if (inv->prev)
		inv->prev->next = inv->next;
	else if (s->run_head == inv)
		s->run_head = inv->next;
	else
		return; /* not on the list */
	if (inv->next)
		inv->next->prev = inv->prev;
	inv->next = inv->prev = NULL;
	s->nrunning--;
}

/*
 * One service turn: start queued calls while the cap allows (at most
 * SERVICE_STARTS_PER_TURN), run one bounded store turn (which drives
 * every call in flight and background work), end the calls a poisoning
 * in that turn left in flight.  The runtime asks for the next turn
 * while work is ready; the turn asks for one while calls wait with room
 * under the cap, and a call that ends asks for one when calls wait.
 */
static void service_turn(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;
	uint32_t max = max_in_flight(s), starts = 0;

	/* guest code runs: the next commit carries an image (commit) */
	s->image_dirty = true;
	while (s->queue_head && s->nrunning < max &&
	       starts++ < SERVICE_STARTS_PER_TURN) {
		struct invocation *inv = s->queue_head;

		service_dequeue(s, inv);
		invocation_run(inv);
	}
	store_turn(s);
	/* a call that trapped in this turn poisoned the instance */
	note_poisoned(s);
	if (s->state == SERVICE_POISONED)
		abort_running(s);
	if (s->queue_head && s->nrunning < max)
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
	static const struct timeval now = {0, 0};

	/*
	 * Pending already: this request joins that turn.  A zero timeout,
	 * not event_active: libevent runs an event activated from its own
	 * callback again in the same pass, without polling, so a store
	 * that always has work (a spinning call) would starve the sockets
	 * and timers; an expired timer waits for the next poll.
	 */
	if (!event_pending(s->ev_service, EV_TIMEOUT, NULL))
		evtimer_add(s->ev_service, &now);
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
	s->queued_bytes += inv->arg_bytes;
	if (s->busy_refused) {
		log_info(&s->d->log,
			 "service %s: %llu call(s) were refused ServiceBusy "
			 "while its queue was full",
			 s->name, (unsigned long long)s->busy_refused);
		s->busy_refused = 0;
	}
	service_request(s);
}

bool service_queue_full(const struct service *s, uint64_t *limit)
{
	uint32_t max = max_in_flight(s);
	uint64_t room = s->nrunning < max ? max - s->nrunning : 0;

	*limit = s->limits.max_queued_calls ? s->limits.max_queued_calls
					    : SERVICE_MAX_QUEUED_CALLS;
	/* the calls that start at the next turn are not waiting */
	return s->queued >= *limit + room;
}

bool service_queue_bytes_full(const struct service *s, uint64_t bytes)
{
	uint64_t limit = service_host_bytes(s);

	/* a reload may have lowered the limit below what already waits */
	return s->queued > 0 &&
	       (s->queued_bytes >= limit || bytes > limit - s->queued_bytes);
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
	s->queued_bytes -= inv->arg_bytes;
	return true;
}

cm_func *service_export(struct service *s, const char *name, size_t len,
			cm_name_resolution *res)
{
	cm_name_resolution own;

	if (!res)
		res = &own;
	if (!s->inst) {
		memset(res, 0, sizeof(*res));
		res->match = CM_NAME_NOT_FOUND;
		return NULL;
	}
	return cm_instance_resolve_export(s->inst, name, len, res);
}

/* ---- the registry ---------------------------------------------------------
 */

static struct service *service_new(struct daemon *d,
				   const struct service_record *rec)
{
	struct service *s = calloc(1, sizeof(*s));
	char why[320];

	if (!s)
		return NULL;
	s->d = d;
	s->name = strdup(rec->name);
	s->config = strdup(rec->config ? rec->config : "{}");
	s->source = rec->source ? strdup(rec->source) : NULL;
	s->ev_service = event_new(d->base, -1, 0, service_turn, s);
	s->ev_recreate = evtimer_new(d->base, recreate_cb, s);
	if (!s->name || !s->config || (rec->source && !s->source) ||
	    !s->ev_service || !s->ev_recreate) {
		if (s->ev_service)
			event_free(s->ev_service);
		if (s->ev_recreate)
			event_free(s->ev_recreate);
		free(s->name);
		free(s->config);
		free(s->source);
		free(s);
		return NULL;
	}
	memcpy(s->component, rec->component, sizeof(s->component));
	s->autostart = rec->autostart;
	s->owner = rec->has_owner ? (int64_t)rec->owner : -1;
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
	event_free(s->ev_recreate);
	free(s->name);
	free(s->config);
	free(s->source);
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
		stop_gracefully(s, "hosteld is stopping");
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
		   const char *config, bool autostart, int64_t owner,
		   const char *source, struct service **out)
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
	rec.has_owner = owner >= 0;
	rec.owner = owner >= 0 ? (uint32_t)owner : 0;
	rec.source = (char *)source;
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

int service_update(struct service *s, const char *component,
		   const char *config, bool autostart, int64_t owner,
		   const char *source, const char *reason)
{
	struct db *db = db_of(s);
	struct service_record rec = {0};
	char *cfg = strdup(config), *src = source ? strdup(source) : NULL;
	char why[320];
	int rc;

	if (!cfg || (source && !src)) {
		free(cfg);
		free(src);
		return -ENOMEM;
	}
	service_stop(s, reason);
	rec.name = s->name;
	memcpy(rec.component, component, sizeof(rec.component));
	rec.config = cfg;
	rec.autostart = autostart;
	rec.state = SERVICE_STOPPED;
	rec.keep_events = -1;
	rec.keep_age = -1;
	rec.has_owner = owner >= 0;
	rec.owner = owner >= 0 ? (uint32_t)owner : 0;
	rec.source = src;
	rc = db ? services_update(db, &rec) : -ENODEV;
	if (rc) {
		free(cfg);
		free(src);
		return rc;
	}
	free(s->config);
	free(s->source);
	s->config = cfg;
	s->source = src;
	memcpy(s->component, component, sizeof(s->component));
	s->autostart = autostart;
	s->owner = owner;
	memset(&s->limits, 0, sizeof(s->limits));
	if (service_parse_limits(s->config, &s->limits, why, sizeof(why)))
		log_warn(&s->d->log, "service %s: %s; limits ignored", s->name,
			 why);
	if (autostart)
		service_start(s, NULL);
	return 0;
}

int service_remove(struct service *s)
{
	struct db *db = db_of(s);
	int rc;

	stop(s, "the service is removed", false); /* its snapshot goes */
	rc = db ? services_remove(db, s->name) : -ENODEV;
	if (rc && rc != -ENOENT)
		return rc;
	service_free(s);
	return 0;
}

json_t *service_info_json(const struct service *s)
{
	json_t *config = json_loads(s->config, 0, NULL);
	struct db *db = daemon_history_db(s->d);
	struct snapshot_record rec;
	json_t *snap = NULL, *info;

	if (!config)
		config = json_object();
	/* the row without its blob: one indexed lookup */
	if (db && snapshots_get(db, s->name, 0, &rec) == 0) {
		snap = json_pack("{sI,sI,ss,sI,sI}", "bytes",
				 (json_int_t)rec.size, "created",
				 (json_int_t)(rec.created / 1000000),
				 "component", rec.component, "deltas",
				 (json_int_t)rec.ndeltas, "deltaBytes",
				 (json_int_t)rec.delta_bytes);
		if (snap && rec.upto)
			json_object_set_new(snap, "upto",
					    json_integer((json_int_t)rec.upto));
		if (snap && rec.ndeltas) {
			json_object_set_new(
				snap, "deltaUpto",
				json_integer((json_int_t)rec.delta_upto));
			json_object_set_new(
				snap, "deltaCreated",
				json_integer(
					(json_int_t)(rec.delta_created /
						     1000000)));
		}
	}
	info = json_pack("{ss,ss,ss,sb,so,ss*,sI,sI,sI,sI,so,ss*}", "name", s->name,
			 "component", s->component, "state",
			 service_state_name(s->state), "autostart",
			 s->autostart, "config", config, "reason",
			 s->reason[0] ? s->reason : NULL, "queued",
			 (json_int_t)s->queued, "inFlight",
			 (json_int_t)s->nrunning, "calls", (json_int_t)s->calls,
			 "recreated", (json_int_t)s->recreated, "owner",
			 s->owner >= 0 ? json_integer(s->owner) : json_null(),
			 "source", s->source);
	if (info) {
		json_object_set_new(info, "durability",
				    json_string(service_durability_name(
					    service_durability(s))));
		if (snap)
			json_object_set_new(info, "snapshot", snap);
		snap = NULL;
	}
	json_decref(snap);
	return info;
}
