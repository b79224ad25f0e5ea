/*
 * metrics.c - the daemon's counters rendered as OpenMetrics text
 * (metrics.h holds the contract).  Families come in a fixed order: the
 * daemon's, the history's, then the per-service ones, each with the
 * samples of every service together (OpenMetrics forbids a family's
 * samples to be interleaved with another's).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - the text (open_memstream): a fixed set of lines for the daemon
 *    and the history, and a fixed set per service (about 60 lines);
 *    one struct svc_now per service while it is written; the services
 *    are the deployers'.  No per-call or per-guest state.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/metrics.h"
#include "daemon/service.h"
#include "wasm/wasm.h"
#include "store/history.h"

/* Upper bounds of the call latency buckets: the le text and in ns. */
static const struct {
	const char *le;
	uint64_t ns;
} latency_bounds[METRICS_LATENCY_BUCKETS] = {
	{"0.0005", 500000ull},	     {"0.001", 1000000ull},
	{"0.0025", 2500000ull},	     {"0.005", 5000000ull},
	{"0.01", 10000000ull},	     {"0.025", 25000000ull},
	{"0.05", 50000000ull},	     {"0.1", 100000000ull},
	{"0.25", 250000000ull},	     {"0.5", 500000000ull},
	{"1.0", 1000000000ull},	     {"2.5", 2500000000ull},
	{"5.0", 5000000000ull},	     {"10.0", 10000000000ull},
	{"30.0", 30000000000ull},    {"60.0", 60000000000ull},
};

/* As enum call_outcome. */
static const char *const outcome_names[METRICS_OUTCOMES] = {
	"returned", "trapped", "cancelled", "failed", "interrupted",
};

uint64_t metrics_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void metrics_call_ended(struct service_metrics *m, enum call_outcome outcome,
			uint64_t ns)
{
	size_t i = 0;

	if ((unsigned)outcome < METRICS_OUTCOMES)
		m->calls[outcome]++;
	while (i < METRICS_LATENCY_BUCKETS && ns > latency_bounds[i].ns)
		i++;
	m->latency.bucket[i]++;
	m->latency.count++;
	m->latency.sum += (double)ns / 1e9;
}

/* ---- text ---------------------------------------------------------------- */

static void family(FILE *f, const char *name, const char *type,
		   const char *unit, const char *help)
{
	fprintf(f, "# TYPE %s %s\n", name, type);
	if (unit)
		fprintf(f, "# UNIT %s %s\n", name, unit);
	fprintf(f, "# HELP %s %s\n", name, help);
}

/* A family of one unlabelled sample (a counter's is NAME_total). */
static void scalar_family(FILE *f, const char *name, const char *type,
			  const char *help, unsigned long long v)
{
	family(f, name, type, NULL, help);
	fprintf(f, "%s%s %llu\n", name,
		strcmp(type, "counter") == 0 ? "_total" : "", v);
}

/* A label value with OpenMetrics' three escapes. */
static void label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '"')
			fputs("\\\"", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

/* name{service="S"[,extra]} value */
static void svc_sample(FILE *f, const char *name, const struct service *s,
		       const char *extra, uint64_t value)
{
	fprintf(f, "%s{service=\"", name);
	label_value(f, s->name);
	fprintf(f, "\"%s%s} %llu\n", extra ? "," : "", extra ? extra : "",
		(unsigned long long)value);
}

/* A number as OpenMetrics wants a float: never "1" for 1.0. */
static void put_double(FILE *f, double v)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (!strpbrk(buf, ".eEin"))
		strcat(buf, ".0");
	fputs(buf, f);
}

/*
 * A histogram's samples: `labels` (already escaped, may be "") before
 * le, buckets not cumulative in `counts` (nb of them, the last one
 * +Inf), bounds as le texts (nb - 1).
 */
static void histogram(FILE *f, const char *name, const char *labels,
		      const uint64_t *counts, size_t nb,
		      const char *const *bounds, uint64_t count, double sum)
{
	uint64_t cum = 0;
	const char *sep = labels[0] ? "," : "";

	for (size_t i = 0; i < nb; i++) {
		cum += counts[i];
		fprintf(f, "%s_bucket{%s%sle=\"%s\"} %llu\n", name, labels, sep,
			i + 1 < nb ? bounds[i] : "+Inf",
			(unsigned long long)cum);
	}
	fprintf(f, "%s_count%s%s%s %llu\n", name, labels[0] ? "{" : "",
		labels, labels[0] ? "}" : "", (unsigned long long)count);
	fprintf(f, "%s_sum%s%s%s ", name, labels[0] ? "{" : "", labels,
		labels[0] ? "}" : "");
	put_double(f, sum);
	fputc('\n', f);
}

/* ---- the daemon and its history ----------------------------------------- */

static void daemon_families(FILE *f, struct daemon *d)
{
	uint64_t states[4] = {0};

	family(f, "hostel_build", "info", NULL, "The version of hosteld.");
	fprintf(f, "hostel_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
	family(f, "hostel_uptime_seconds", "gauge", "seconds",
	       "Time since hosteld started.");
	fprintf(f, "hostel_uptime_seconds ");
	put_double(f, (double)daemon_uptime_ms(d) / 1000.0);
	fputc('\n', f);
	scalar_family(f, "hostel_connections", "gauge",
	    "Open client connections.",
	    d->n_conns);
	for (struct service *s = d->services ? d->services->head : NULL; s;
	     s = s->next)
		if ((unsigned)s->state < 4)
			states[s->state]++;
	family(f, "hostel_services", "gauge", NULL,
	       "Services by state (stopped, running, poisoned, failed).");
	for (int i = 0; i < 4; i++)
		fprintf(f, "hostel_services{state=\"%s\"} %llu\n",
			service_state_name((enum service_state)i),
			(unsigned long long)states[i]);
}

static void history_families(FILE *f, struct daemon *d)
{
	char lat_text[HISTORY_LATENCY_BUCKETS - 1][24];
	char batch_text[HISTORY_BATCH_BUCKETS - 1][24];
	const char *lat_p[HISTORY_LATENCY_BUCKETS - 1];
	const char *batch_p[HISTORY_BATCH_BUCKETS - 1];
	struct daemon_history_status st;

	if (daemon_history_status(d, &st) < 0)
		return; /* no history: no families */
	for (size_t i = 0; i < HISTORY_LATENCY_BUCKETS - 1; i++) {
		/* microseconds as seconds: 100 -> 0.0001 */
		snprintf(lat_text[i], sizeof(lat_text[i]), "%u.%06u",
			 history_latency_bounds_us[i] / 1000000u,
			 history_latency_bounds_us[i] % 1000000u);
		for (size_t n = strlen(lat_text[i]);
		     n > 2 && lat_text[i][n - 1] == '0' &&
		     lat_text[i][n - 2] != '.';
		     n--)
			lat_text[i][n - 1] = '\0';
		lat_p[i] = lat_text[i];
	}
	for (size_t i = 0; i < HISTORY_BATCH_BUCKETS - 1; i++) {
		snprintf(batch_text[i], sizeof(batch_text[i]), "%u.0",
			 history_batch_bounds[i]);
		batch_p[i] = batch_text[i];
	}
	scalar_family(f, "hostel_history_commits", "counter",
	    "Transactions of the event history committed.",
	    st.stats.commits);
	scalar_family(f, "hostel_history_commit_failures", "counter",
	    "Transactions of the event history that failed.",
	    st.stats.failures);
	scalar_family(f, "hostel_history_events", "counter",
	    "Events made durable.",
	    st.stats.events);
	scalar_family(f, "hostel_history_rejected_events", "counter",
	    "Events the history's rules refused.",
	    st.stats.rejected);
	family(f, "hostel_history_commit_seconds", "histogram", "seconds",
	       "Latency of the history's commits.");
	histogram(f, "hostel_history_commit_seconds", "", st.stats.latency,
		  HISTORY_LATENCY_BUCKETS, lat_p, st.stats.commits,
		  (double)st.stats.commit_ns_total / 1e9);
	family(f, "hostel_history_batch_events", "histogram", NULL,
	       "Events written by each commit.");
	histogram(f, "hostel_history_batch_events", "", st.stats.batch,
		  HISTORY_BATCH_BUCKETS, batch_p, st.stats.commits,
		  (double)st.stats.batch_events);
	scalar_family(f, "hostel_history_pending_events", "gauge",
	    "Events waiting for their commit (the writer's queue).",
	    st.pending_events);
	scalar_family(f, "hostel_history_failing", "gauge",
	    "1 while the history's commits fail.",
	    st.failing);
	scalar_family(f, "hostel_history_last_seq", "gauge",
	    "The sequence number of the last durable event.",
	    st.stats.last_seq);
	scalar_family(f, "hostel_history_followers", "gauge",
	    "Clients following the history (Read with more).",
	    st.followers);
	family(f, "hostel_history_checkpoints", "counter", NULL,
	       "WAL checkpoints, by the checkpointer thread or inside a "
	       "commit.");
	fprintf(f, "hostel_history_checkpoints_total{by=\"thread\"} %llu\n",
		(unsigned long long)st.checkpoints.runs);
	fprintf(f, "hostel_history_checkpoints_total{by=\"commit\"} %llu\n",
		(unsigned long long)st.checkpoints.inline_runs);
	scalar_family(f, "hostel_history_checkpoint_failures", "counter",
	    "WAL checkpoints that failed (other than busy).",
	    st.checkpoints.failures);
	scalar_family(f, "hostel_history_pruned_events", "counter",
	    "Events removed by retention.",
	    st.stats.pruned);
	scalar_family(f, "hostel_history_prune_passes", "gauge",
	    "Retention passes queued or under way.",
	    st.prune_passes);
}

/* ---- services ------------------------------------------------------------ */

struct svc_now {
	wasm_store_usage wasm;
	uint64_t host_bytes, fuel, pending, instances, handles;
};

static void service_now(const struct service *s, struct svc_now *o)
{
	memset(o, 0, sizeof(*o));
	o->fuel = s->metrics.fuel_retired;
	if (!s->store)
		return;
	if (s->store->wasm)
		wasm_store_usage_get(s->store->wasm, &o->wasm);
	o->host_bytes = s->store->host_bytes.used;
	o->fuel += s->store->fuel_used;
	o->pending = s->store->pending_host_calls;
	o->instances = s->store->ninstances;
	o->handles = cm_store_handle_count(s->store);
}

#define EACH_SERVICE(s)                                                        \
	for (struct service *s = d->services ? d->services->head : NULL; s;   \
	     s = s->next)                                                      \
		if (!only || strcmp(s->name, only) == 0)

static void service_states(FILE *f, struct daemon *d, const char *only)
{
	family(f, "hostel_service_state", "stateset", NULL,
	       "The state of each service.");
	EACH_SERVICE(s)
	{
		for (int i = 0; i < 4; i++) {
			const char *name =
				service_state_name((enum service_state)i);

			fprintf(f, "hostel_service_state{service=\"");
			label_value(f, s->name);
			fprintf(f, "\",hostel_service_state=\"%s\"} %d\n", name,
				(int)s->state == i);
		}
	}
}

static void service_calls(FILE *f, struct daemon *d, const char *only)
{
	const char *bounds[METRICS_LATENCY_BUCKETS];

	for (size_t i = 0; i < METRICS_LATENCY_BUCKETS; i++)
		bounds[i] = latency_bounds[i].le;
	family(f, "hostel_service_calls", "counter", NULL,
	       "Calls that ended, by the outcome the history records.");
	EACH_SERVICE(s)
	{
		for (int i = 0; i < METRICS_OUTCOMES - 1; i++) {
			char extra[40];

			snprintf(extra, sizeof(extra), "outcome=\"%s\"",
				 outcome_names[i]);
			svc_sample(f, "hostel_service_calls_total", s, extra,
				   s->metrics.calls[i]);
		}
	}
	family(f, "hostel_service_call_duration_seconds", "histogram",
	       "seconds", "Time from a call's call.started to its end.");
	EACH_SERVICE(s)
	{
		char *labels = NULL;
		size_t n = 0;
		FILE *l = open_memstream(&labels, &n);

		if (!l)
			continue;
		fputs("service=\"", l);
		label_value(l, s->name);
		fputc('"', l);
		if (fclose(l) == 0 && labels)
			histogram(f, "hostel_service_call_duration_seconds",
				  labels, s->metrics.latency.bucket,
				  METRICS_LATENCY_BUCKETS + 1, bounds,
				  s->metrics.latency.count,
				  s->metrics.latency.sum);
		free(labels);
	}
	family(f, "hostel_service_calls_running", "gauge", NULL,
	       "Calls in flight.");
	EACH_SERVICE(s)
	svc_sample(f, "hostel_service_calls_running", s, NULL, s->nrunning);
	family(f, "hostel_service_calls_queued", "gauge", NULL,
	       "Calls waiting for room under limits.maxConcurrentCalls.");
	EACH_SERVICE(s)
	svc_sample(f, "hostel_service_calls_queued", s, NULL, s->queued);
	family(f, "hostel_service_busy_refusals", "counter", NULL,
	       "Calls refused ServiceBusy (a full queue).");
	EACH_SERVICE(s)
	svc_sample(f, "hostel_service_busy_refusals_total", s, NULL,
		   s->metrics.busy);
}

/*
 * The store's numbers, a family per run of rows with one name (the
 * memory's three kinds are one family).
 */
static const struct store_row {
	const char *family, *type, *unit, *help;
	const char *sample, *extra;
	size_t off; /* of the uint64_t in struct svc_now */
} store_rows[] = {
	{"hostel_service_fuel_used", "counter", NULL,
	 "Fuel spent by the guest code of the service's stores.",
	 "hostel_service_fuel_used_total", NULL, offsetof(struct svc_now, fuel)},
	{"hostel_service_memory_bytes", "gauge", "bytes",
	 "Memory of the live store: linear memories, host values in transit "
	 "(limits.hostBytes), exception objects.",
	 "hostel_service_memory_bytes", "kind=\"linear\"",
	 offsetof(struct svc_now, wasm.memory_bytes)},
	{"hostel_service_memory_bytes", NULL, NULL, NULL,
	 "hostel_service_memory_bytes", "kind=\"host\"",
	 offsetof(struct svc_now, host_bytes)},
	{"hostel_service_memory_bytes", NULL, NULL, NULL,
	 "hostel_service_memory_bytes", "kind=\"exceptions\"",
	 offsetof(struct svc_now, wasm.exception_bytes)},
	{"hostel_service_table_elements", "gauge", NULL,
	 "Elements of the live store's core tables.",
	 "hostel_service_table_elements", NULL,
	 offsetof(struct svc_now, wasm.table_elems)},
	{"hostel_service_instances", "gauge", NULL,
	 "Component and core instances of the live store.",
	 "hostel_service_instances", NULL, offsetof(struct svc_now, instances)},
	{"hostel_service_handles", "gauge", NULL,
	 "Live handles in the component instances' tables (resources, "
	 "waitables, stream and future ends, ...).",
	 "hostel_service_handles", NULL, offsetof(struct svc_now, handles)},
	{"hostel_service_pending_host_calls", "gauge", NULL,
	 "Host calls the guest waits on (a clock wait, ...).",
	 "hostel_service_pending_host_calls", NULL,
	 offsetof(struct svc_now, pending)},
};

#define NSTORE_ROWS (sizeof(store_rows) / sizeof(store_rows[0]))

/* 0, or -ENOMEM. */
static int service_stores(FILE *f, struct daemon *d, const char *only)
{
	struct svc_now *now;
	size_t n = 0, k;

	EACH_SERVICE(s)
	n++;
	/* each store walked once (its handle tables, its objects) */
	now = calloc(n ? n : 1, sizeof(*now));
	if (!now)
		return -ENOMEM;
	k = 0;
	EACH_SERVICE(s)
	service_now(s, &now[k++]);
	for (size_t i = 0; i < NSTORE_ROWS;) {
		const struct store_row *r = &store_rows[i];
		size_t end = i + 1;

		while (end < NSTORE_ROWS &&
		       strcmp(store_rows[end].family, r->family) == 0)
			end++;
		family(f, r->family, r->type, r->unit, r->help);
		k = 0;
		EACH_SERVICE(s)
		{
			for (size_t j = i; j < end; j++) {
				uint64_t v;

				memcpy(&v,
				       (const char *)&now[k] + store_rows[j].off,
				       sizeof(v));
				svc_sample(f, store_rows[j].sample, s,
					   store_rows[j].extra, v);
			}
			k++;
		}
		i = end;
	}
	free(now);
	family(f, "hostel_service_poisonings", "counter", NULL,
	       "Traps that poisoned the service's instance (store.poisoned).");
	EACH_SERVICE(s)
	svc_sample(f, "hostel_service_poisonings_total", s, NULL,
		   s->metrics.poisonings);
	family(f, "hostel_service_restarts", "counter", NULL,
	       "Stores recreated after a poisoning (store.recreated).");
	EACH_SERVICE(s)
	svc_sample(f, "hostel_service_restarts_total", s, NULL, s->recreated);
	return 0;
}

int metrics_render(struct daemon *d, const char *service, char **text,
		   size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int bad;

	*text = NULL;
	*len = 0;
	if (!f)
		return -ENOMEM;
	daemon_families(f, d);
	history_families(f, d);
	service_states(f, d, service);
	service_calls(f, d, service);
	bad = service_stores(f, d, service) < 0;
	fputs("# EOF\n", f);
	bad |= ferror(f);
	if (fclose(f) != 0 || bad || !buf) {
		free(buf);
		return -ENOMEM;
	}
	*text = buf;
	*len = n;
	return 0;
}
