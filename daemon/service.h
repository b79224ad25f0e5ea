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
 *    deadlineMs, and the per-store bounds maxHandles, maxThreads,
 *    maxPendingHostCalls and hostBytes (the host memory of values in
 *    transit, default hostel.conf's service-host-bytes or the runtime's
 *    256 MiB); past one the guest traps.  tableElements bounds each
 *    table (default 10,000,000): past it table.grow answers -1.
 *  - The settlement pump: each service has one libevent event without fd
 *    (its service event).  service_request() activates it; activating an
 *    active event is a no-op, so requests coalesce.  Guest code of the
 *    store runs only in that event's callback (the service turn): it
 *    starts queued calls (cm_call_start; a few per turn, so a flood of
 *    short calls does not burst the history) while fewer than
 *    limits.maxConcurrentCalls (default SERVICE_MAX_CONCURRENT_CALLS)
 *    are in flight (at most limits.maxQueuedCalls, default
 *    SERVICE_MAX_QUEUED_CALLS, wait beyond those; past that a call is
 *    refused, io.hostel.Call.ServiceBusy), then runs one
 *    cm_store_service_turn, bounded by
 *    SERVICE_TURN_FUEL, so a call that spins holds up only its own
 *    service; other services, the listener and the history commit get
 *    the loop between turns.  The runtime requests service (coalesced)
 *    while work remains and when a host call settles.
 *  - Calls in flight run concurrently under the Component Model's rules,
 *    which the runtime enforces (a sync export's instance is exclusive,
 *    backpressure, the entry gate); the daemon adds no serialization of
 *    its own beyond the cap.  Each ends on its own (its on_done), with
 *    its own fuel budget and deadline.
 *  - A trap poisons the instance (the spec's rule): the service turns
 *    "poisoned", store.poisoned is recorded, and the next call fails with
 *    io.hostel.Call.ServicePoisoned while the store is recreated
 *    (store.recreated) with fresh state.  A trap storm backs off: the
 *    first poisoning is recreated at once, each further one in a row
 *    waits 100 ms, doubling up to 30 s (a store that lives 60 s ends
 *    the row); calls meanwhile fail fast with ServicePoisoned saying
 *    when, a timer recreates the store, and store.recreated carries
 *    {backoffMs, traps}.  A call still running at its deadline is
 *    stopped (call.trapped "deadline exceeded", poisoning the instance)
 *    and the store is recreated at once (or after the back-off).
 *  - A poisoning ends every other call in flight on that store at once,
 *    each exactly once: one whose guest code had begun ends trapped
 *    ("the instance was poisoned ..."), one that had not (or waited at
 *    the entry gate) fails with ServicePoisoned; calls the trapping
 *    turn itself decided end trapped with the trap's message.
 *  - Start/Stop/Remove never free what a queued call still needs: a
 *    stopped service ends its queued calls and those in flight as
 *    cancelled first.
 */
#ifndef HOSTEL_DAEMON_SERVICE_H
#define HOSTEL_DAEMON_SERVICE_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>
#include <jansson.h>

#include "component/component.h"
#include "run/exportname.h"
#include "run/instance.h"
#include "daemon/metrics.h"
#include "store/services.h"

struct daemon;
struct invocation;

struct service_limits {
	uint64_t memory;	/* bytes per memory; 0: the component's */
	uint64_t fuel_per_call; /* 0: unlimited */
	uint64_t deadline_ms;	/* 0: none */
	/* per-store bounds (cm_store_config); 0: the runtime's default */
	uint64_t max_handles;
	uint64_t max_threads;
	uint64_t max_pending_host_calls;
	/* calls in flight at once; 0: SERVICE_MAX_CONCURRENT_CALLS */
	uint64_t max_concurrent_calls;
	/* host bytes for values in transit (cm_store_config
	 * max_host_bytes); 0: hostel.conf's service-host-bytes, else the
	 * runtime's default */
	uint64_t host_bytes;
	/* elements per table; 0: WASM_DEFAULT_MAX_TABLE_ELEMS */
	uint64_t table_elements;
	/* calls waiting for room under the cap; 0: SERVICE_MAX_QUEUED_CALLS */
	uint64_t max_queued_calls;
	/* config "durability": SERVICE_DURABILITY_*; UNSET: hostel.conf's */
	int durability;
	/* durability stop: a snapshot this often too (ms); 0: hostel.conf's
	 * snapshot-interval, else only at a graceful stop */
	uint64_t snapshot_interval_ms;
};

/*
 * Durability of a service's store (docs/architecture.md "Durability"):
 * NONE, a fresh store at every start (the default); STOP, a snapshot of
 * the store when the service stops gracefully (hosteld's SIGTERM, Stop)
 * or on request (Snapshot), restored when it starts again; COMMIT, the
 * store's changes written with every history commit that follows a turn
 * of it (daemon/durable.h), so that a crash comes back to the store as
 * of the last commit.
 */
enum {
	SERVICE_DURABILITY_UNSET = 0,
	SERVICE_DURABILITY_NONE,
	SERVICE_DURABILITY_STOP,
	SERVICE_DURABILITY_COMMIT,
};

#ifndef SERVICE_MAX_CONCURRENT_CALLS
#define SERVICE_MAX_CONCURRENT_CALLS 64u
#endif
/*
 * Calls of one service waiting for room under its cap of calls in
 * flight (limits.maxQueuedCalls).  Each holds its arguments (up to a
 * message's worth, VARLINK_MESSAGE_MAX) until it starts, and a client
 * may send oneway calls as fast as it writes them, or hold many
 * connections: past the bound a call is refused with
 * io.hostel.Call.ServiceBusy before call.started (service_queue_full).
 */
#ifndef SERVICE_MAX_QUEUED_CALLS
#define SERVICE_MAX_QUEUED_CALLS 1024u
#endif

struct service {
	struct daemon *d;
	struct service *prev, *next;
	char *name;
	char component[SHA256_HEX_SIZE];
	char *config; /* JSON object text, as stored */
	bool autostart;
	int64_t owner; /* uid it belongs to, -1: nobody (daemon/access.h) */
	char *source;  /* its services.d file (services-dir.h); NULL: a client's */
	enum service_state state;
	char reason[256]; /* why failed/poisoned; "" otherwise */
	struct service_limits limits;
	struct service_metrics metrics; /* this run's (daemon/metrics.h) */

	/* Live while running or poisoned. */
	cm_component *comp;
	cm_linker *linker;
	struct service_wasi *wasi; /* per store (daemon/service-wasi.h) */
	cm_store *store;
	cm_component_instance *inst;

	/* The service event: the pump's entry point. */
	struct event *ev_service;
	struct invocation *queue_head, *queue_tail;
	/*
	 * The calls in flight (started with cm_call_start, not yet ended;
	 * linked through their next/prev like the queue), nrunning of them.
	 */
	struct invocation *run_head;
	uint32_t nrunning;
	uint64_t queued, calls, recreated;
	/* host bytes of the queued calls' arguments (arg_bytes) */
	uint64_t queued_bytes;
	/* calls refused ServiceBusy since the last one queued (logged) */
	uint64_t busy_refused;

	/*
	 * Trap storm (service.c): poisonings in a row (reset once a store
	 * lived SERVICE_BACKOFF_QUIET_MS), the back-off of the poisoning in
	 * force, when (CLOCK_MONOTONIC ns) its store may be recreated, and
	 * the timer that recreates it then.
	 */
	uint32_t trap_streak;
	/*
	 * A call's trap poisoned the store in this turn: store.poisoned
	 * is recorded once the turn's calls have all reported (the trap
	 * that caused it, not a later call's "cannot enter").
	 */
	bool poison_pending;
	char poison_call[48];
	char poison_msg[CM_ERROR_MSG_MAX];
	bool poison_noted;
	uint64_t backoff_ms;
	uint64_t recreate_at_ns, recreated_ns;
	struct event *ev_recreate;

	/*
	 * Durability "commit" (daemon/durable.c): the base of the next
	 * delta (NULL until the first image), whether a turn ran since the
	 * last image, whether the last capture was refused (a run of
	 * refusals is recorded once), and whether the next full image
	 * replaces deltas past their hard bound.  The history's writer
	 * folds the deltas (store/folds.h).
	 */
	struct cm_snap_base *snap_base;
	bool image_dirty, image_failing, image_compact;
	/* a failed full image waits until image_retry_ns (monotonic) */
	uint64_t image_retry_ns, image_backoff_ms;
	/* since when images were refused while a thread was stopped out of fuel
	 * (0: they were not; durable.c IMAGE_TRANSIENT_MS) */
	uint64_t image_transient_ns;
	/* durability stop with an interval: the timer of the next one */
	struct event *ev_snapshot;
	/* the calls a restore brought back in flight, with their deadlines
	 * (durable.c durable_restored_calls) */
	struct restored_call *restored_calls;
};

/* The durability in force: the config's, else hostel.conf's, else NONE. */
int service_durability(const struct service *s);
const char *service_durability_name(int durability);
/* CLOCK_MONOTONIC in ns. */
uint64_t service_mono_ns(void);

struct service_registry {
	struct service *head;
	uint64_t call_prefix; /* random, makes call ids unique across runs */
	uint64_t next_call;
	uint64_t next_hostcall; /* numbers hostcall.* events (hostcalls.c) */
};

/* Load every service from the database; start the autostart ones. */
int service_registry_load(struct daemon *d);

/* The daemon stops: every service stops gracefully, as service_stop,
 * keeping its store (before the last commit). */
void service_registry_stopping(struct daemon *d);

/* Free every store and service (after the history is closed). */
void service_registry_free(struct daemon *d);

struct service *service_find(struct daemon *d, const char *name);

/*
 * Create a service (already validated name, resolved component sha256,
 * config text, owner uid or -1, the services.d file it is declared in
 * or NULL).  -EEXIST, -EINVAL (config), or a database error.
 */
int service_create(struct daemon *d, const char *name, const char *component,
		   const char *config, bool autostart, int64_t owner,
		   const char *source, struct service **out);

/*
 * Give s another component, config, autostart, owner and source: it is
 * stopped first (service_stop, "reason"), and started again
 * afterwards when autostart.  0, -ENOMEM or a database error (s is then
 * stopped, as it was before in the database).
 */
int service_update(struct service *s, const char *component,
		   const char *config, bool autostart, int64_t owner,
		   const char *source, const char *reason);

/*
 * Start (instantiate).  0, or -1 with the service left "failed" and
 * s->reason / *kind saying why ("link error", "trap", ...).  kind NULL
 * (the daemon recreating a poisoned store on its own) respects the trap
 * storm back-off: -1 with the service left poisoned while it lasts; an
 * explicit start (kind not NULL) recreates at once.
 */
int service_start(struct service *s, const char **kind);
/*
 * A graceful stop (Stop, a services.d update): queued calls and calls
 * that ran no guest code end cancelled; a store kept by durability
 * takes its stop image with the calls under way in it, which end
 * interrupted (durable.h service_keeps_store); under none they end
 * cancelled.  The store is dropped.
 */
void service_stop(struct service *s, const char *reason);
/* Stop, delete from the table, free.  0 or a database error. */
int service_remove(struct service *s);

/* Ask for a service turn (coalesced).  The async scheduler's hook. */
void service_request(struct service *s);

/* Queue a call (owned by the service until it ends). */
void service_enqueue(struct service *s, struct invocation *inv);
/*
 * Whether a new call would wait past s's bound of queued calls: the
 * calls already queued beyond the room under the cap of calls in flight
 * (which start at the next turn) are at limits.maxQueuedCalls.  *limit
 * gets the bound.
 */
bool service_queue_full(const struct service *s, uint64_t *limit);
/* Whether arguments of `bytes` more would take the queued calls' past
 * the service's host bytes (service_host_bytes); never when none wait. */
bool service_queue_bytes_full(const struct service *s, uint64_t bytes);
/* Take a still-queued call out; false when it is not queued. */
bool service_dequeue(struct service *s, struct invocation *inv);

/*
 * The instance was poisoned outside a turn (a running call was stopped:
 * deadline, Cancel): record it once (store.poisoned, why), end the other
 * calls in flight, and recreate the store at once or after the trap
 * storm back-off.
 */
void service_poisoned(struct service *s, const char *why);

/*
 * A call trapped and its instance is poisoned: the service turns
 * poisoned (ServicePoisoned replies say why); store.poisoned is recorded
 * after the turn, once, blaming the call whose trap caused it.
 */
void service_note_trap(struct service *s, const char *call_id, const char *msg);

/* A call in flight / that ended (invocation.c keeps the list). */
void service_running_add(struct service *s, struct invocation *inv);
void service_running_remove(struct service *s, struct invocation *inv);

/*
 * Resolve an export name in the running instance (run/exportname.h:
 * exact "f" / "iface#f", else an unqualified or unversioned name that
 * matches exactly one export); NULL if none or several match, with *res
 * (when not NULL) saying which and the candidates.  Without an instance,
 * NOT_FOUND with no candidates.
 */
cm_func *service_export(struct service *s, const char *name, size_t len,
			cm_name_resolution *res);

/* {name, component, state, autostart, config, ...}; NULL: no memory. */
json_t *service_info_json(const struct service *s);

/* The back-off before recreating after `streak` poisonings in a row. */
uint64_t service_backoff_ms(uint32_t streak);

/*
 * Parse config text into limits; -1 with why on a bad shape (of the
 * limits or of the WASI keys env, args, preopens: service-wasi.h).
 */
/* The host bytes its stores may hold for values in transit: its own
 * limits.hostBytes, else hostel.conf's service-host-bytes, else the
 * runtime's CM_STORE_DEFAULT_MAX_HOST_BYTES. */
uint64_t service_host_bytes(const struct service *s);

int service_parse_limits(const char *config, struct service_limits *out,
			 char *why, size_t whylen);

#endif
