/*
 * metrics.h - what the daemon counts as it works, and its rendering in
 * the OpenMetrics text format (io.hostel.Daemon.GetMetrics, `hostel
 * metrics`, `hostel top`).
 *
 * Contract:
 *  - Counters live where the work is counted: a service's in its
 *    struct service (service_metrics, from its creation in this run of
 *    hosteld; a removed service's go with it), the history's in its
 *    statistics (store/history.h history_stats), the store's in the
 *    runtime (cm_store fuel_used, wasm_store_usage_get).  Nothing is
 *    sampled on a timer: GetMetrics reads them when asked, so a scrape
 *    costs one walk over the services and no history query.
 *  - A call is counted once, when it ends (invocation_end), by the
 *    outcome its terminal event records (returned, trapped, cancelled,
 *    failed), so hostel_service_calls_total matches the history's
 *    terminal events of the calls this run started.  Calls refused
 *    before call.started (ServiceBusy, InvalidArguments, ...) are not
 *    in the history and not in that counter.
 *  - The text follows OpenMetrics 1.0.0: every family has its TYPE,
 *    HELP and (where it has one) UNIT; counters end in _total;
 *    histograms have cumulative buckets ending in le="+Inf" equal to
 *    _count; label values are escaped; the text ends with "# EOF".
 *    tests/daemon-metrics.sh parses it with a strict parser.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - metrics_render: the text, a few hundred bytes per service; the
 *    number of services is the deployers' (docs/limits.md), and a text
 *    past the message bound is refused (method-daemon.c) rather than
 *    sent.  Nothing a guest controls adds lines.
 */
#ifndef HOSTEL_DAEMON_METRICS_H
#define HOSTEL_DAEMON_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/history-hooks.h"

struct daemon;

/* Call latency buckets, seconds (upper bounds; then +Inf). */
#define METRICS_LATENCY_BUCKETS 16

struct metrics_histogram {
	uint64_t bucket[METRICS_LATENCY_BUCKETS + 1]; /* not cumulative */
	uint64_t count;
	double sum;
};

/* Outcomes of ended calls, as enum call_outcome (CALL_INTERRUPTED: 4). */
#define METRICS_OUTCOMES 5

struct service_metrics {
	uint64_t calls[METRICS_OUTCOMES];
	struct metrics_histogram latency; /* call.started to its end */
	uint64_t poisonings;		  /* store.poisoned */
	uint64_t busy;			  /* ServiceBusy refusals */
	uint64_t fuel_retired;		  /* fuel of stores already freed */
};

/* CLOCK_MONOTONIC in ns (what call latencies are measured with). */
uint64_t metrics_now_ns(void);

/* Count a call that ended with `outcome` after `ns` nanoseconds. */
void metrics_call_ended(struct service_metrics *m, enum call_outcome outcome,
			uint64_t ns);

/*
 * The daemon's metrics as OpenMetrics text (NUL-terminated, *len its
 * length, the caller frees it); `service` (may be NULL) keeps the
 * per-service families to that service.  0, or -ENOMEM.
 */
int metrics_render(struct daemon *d, const char *service, char **text,
		   size_t *len);

#endif
