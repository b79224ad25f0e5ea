/*
 * metrics.c - `hostel metrics` and `hostel top`: the daemon's metrics
 * (io.hostel.Daemon.GetMetrics, daemon/metrics.h).
 *
 *   hostel metrics [--socket PATH] [--service NAME]
 *   hostel top [--socket PATH] [-d SECONDS] [-n COUNT]
 *
 * `metrics` prints the OpenMetrics text as the daemon sends it (a file
 * for node_exporter's textfile collector: `hostel metrics >
 * dir/hostel.prom.$$ && mv ...`).  `top` asks for it every -d seconds
 * (default 1) and shows a table of the services: state, calls per
 * second and mean latency over the last interval, errors, fuel per
 * second, memory, handles, pending host calls, calls in flight and
 * queued, restarts; above it the daemon's connections and its
 * history's commits per second and queue.  On a terminal each refresh
 * redraws the screen; otherwise (or with -n) the tables follow each
 * other, -n COUNT of them.  Rates need two samples: the first table
 * shows "-".
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The metrics text
 *    is one reply, at most VARLINK_MESSAGE_MAX; top keeps a row per
 *    service of the last two samples.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "client/commands.h"
#include "client/daemon-client.h"
#include "ipc/client.h"

#define METRICS_TIMEOUT_MS 10000

/* ---- asking ------------------------------------------------------------- */

/* The metrics text into *text (malloc'd); 0 or an exit code. */
static int fetch(const char *prog, struct varlink_client *c,
		 const char *service, char **text)
{
	struct varlink_reply reply;
	json_t *params = json_object();
	const char *t;
	int rc;

	*text = NULL;
	if (!params || (service && json_object_set_new(params, "service",
						      json_string(service)))) {
		json_decref(params);
		fprintf(stderr, "hostel %s: out of memory\n", prog);
		return HOSTEL_EXIT_FAILURE;
	}
	rc = daemon_client_call(prog, c, "io.hostel.Daemon.GetMetrics", params,
				0, &reply);
	if (rc)
		return rc;
	if (reply.error) {
		rc = daemon_client_report(prog, &reply);
		varlink_reply_clear(&reply);
		return rc;
	}
	t = json_string_value(json_object_get(reply.parameters, "text"));
	if (!t) {
		fprintf(stderr, "hostel %s: the reply has no text\n", prog);
		varlink_reply_clear(&reply);
		return HOSTEL_EXIT_PROTOCOL;
	}
	*text = strdup(t);
	varlink_reply_clear(&reply);
	if (!*text) {
		fprintf(stderr, "hostel %s: out of memory\n", prog);
		return HOSTEL_EXIT_FAILURE;
	}
	return 0;
}

static void metrics_usage(FILE *f)
{
	fprintf(f, "usage: hostel metrics [--socket PATH] [--service NAME]\n"
		   "\n"
		   "Print hosteld's metrics in the OpenMetrics text format.\n"
		   "\n"
		   "  --service NAME  only that service's per-service "
		   "families\n"
		   "  --socket PATH   the daemon's socket (default: "
		   "$HOSTEL_SOCKET, else the\n"
		   "                  daemon's default path)\n");
}

int cmd_metrics(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"service", required_argument, NULL, 'S'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *socket_opt = NULL, *service = NULL;
	struct varlink_client *client;
	char *text;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			service = optarg;
			break;
		case 's':
			socket_opt = optarg;
			break;
		case 'h':
			metrics_usage(stdout);
			return HOSTEL_EXIT_OK;
		default:
			metrics_usage(stderr);
			return HOSTEL_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		metrics_usage(stderr);
		return HOSTEL_EXIT_USAGE;
	}
	rc = daemon_client_open("metrics", socket_opt, METRICS_TIMEOUT_MS,
				&client);
	if (rc)
		return rc;
	rc = fetch("metrics", client, service, &text);
	varlink_client_free(client);
	if (rc)
		return rc;
	fputs(text, stdout);
	free(text);
	return fflush(stdout) == 0 ? HOSTEL_EXIT_OK : HOSTEL_EXIT_FAILURE;
}

/* ---- top: reading the samples back ------------------------------------------ */

struct top_row {
	char service[80];
	char state[16];
	double calls, errors, latency_sum, latency_count, fuel;
	double linear, host, handles, pending, running, queued, restarts;
};

struct top_sample {
	double uptime, connections, commits, pending_events;
	struct top_row *rows;
	size_t nrows;
};

static void sample_free(struct top_sample *s)
{
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

/* The value of label `key` in "{a="x",b="y"}" into out (unescaped). */
static bool label(const char *labels, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);

	for (const char *p = labels; p && *p; p++) {
		if ((p == labels || p[-1] == '{' || p[-1] == ',') &&
		    strncmp(p, key, klen) == 0 && p[klen] == '=' &&
		    p[klen + 1] == '"') {
			size_t n = 0;

			for (p += klen + 2; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					p++;
				if (n + 1 < size)
					out[n++] = *p == 'n' && p[-1] == '\\'
							   ? '\n'
							   : *p;
			}
			out[n] = '\0';
			return true;
		}
	}
	return false;
}

static struct top_row *row_of(struct top_sample *s, const char *service)
{
	struct top_row *r;

	for (size_t i = 0; i < s->nrows; i++)
		if (strcmp(s->rows[i].service, service) == 0)
			return &s->rows[i];
	r = realloc(s->rows, (s->nrows + 1) * sizeof(*r));
	if (!r)
		return NULL;
	s->rows = r;
	r = &s->rows[s->nrows++];
	memset(r, 0, sizeof(*r));
	snprintf(r->service, sizeof(r->service), "%s", service);
	snprintf(r->state, sizeof(r->state), "?");
	return r;
}

/* One sample line: name, labels (may be empty) and value. */
static int take_line(struct top_sample *s, const char *name,
		     const char *labels, double v)
{
	char service[80], extra[16];
	struct top_row *r;

	if (strcmp(name, "hostel_uptime_seconds") == 0)
		s->uptime = v;
	else if (strcmp(name, "hostel_connections") == 0)
		s->connections = v;
	else if (strcmp(name, "hostel_history_commits_total") == 0)
		s->commits = v;
	else if (strcmp(name, "hostel_history_pending_events") == 0)
		s->pending_events = v;
	if (strncmp(name, "hostel_service_", 15) != 0 ||
	    !label(labels, "service", service, sizeof(service)))
		return 0;
	if (!(r = row_of(s, service)))
		return -ENOMEM;
	name += 15;
	if (strcmp(name, "state") == 0 && v == 1 &&
	    label(labels, "hostel_service_state", extra, sizeof(extra)))
		snprintf(r->state, sizeof(r->state), "%s", extra);
	else if (strcmp(name, "calls_total") == 0) {
		r->calls += v;
		if (label(labels, "outcome", extra, sizeof(extra)) &&
		    strcmp(extra, "returned") != 0)
			r->errors += v;
	} else if (strcmp(name, "call_duration_seconds_sum") == 0)
		r->latency_sum = v;
	else if (strcmp(name, "call_duration_seconds_count") == 0)
		r->latency_count = v;
	else if (strcmp(name, "fuel_used_total") == 0)
		r->fuel = v;
	else if (strcmp(name, "memory_bytes") == 0 &&
		 label(labels, "kind", extra, sizeof(extra))) {
		if (strcmp(extra, "linear") == 0)
			r->linear = v;
		else
			r->host += v; /* host values and exception objects */
	}
	else if (strcmp(name, "handles") == 0)
		r->handles = v;
	else if (strcmp(name, "pending_host_calls") == 0)
		r->pending = v;
	else if (strcmp(name, "calls_running") == 0)
		r->running = v;
	else if (strcmp(name, "calls_queued") == 0)
		r->queued = v;
	else if (strcmp(name, "restarts_total") == 0)
		r->restarts = v;
	return 0;
}

/* Parse the text's sample lines; 0, -EBADMSG or -ENOMEM. */
static int parse(const char *text, struct top_sample *s)
{
	const char *p = text;

	memset(s, 0, sizeof(*s));
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[1024], *sp, *brace, *end;
		double v;
		int rc;

		if (len >= sizeof(line) || len == 0 || p[0] == '#') {
			p += len + (eol != NULL);
			continue;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p += len + (eol != NULL);
		sp = strrchr(line, ' ');
		if (!sp)
			return -EBADMSG;
		*sp = '\0';
		v = strtod(sp + 1, &end);
		if (end == sp + 1)
			return -EBADMSG;
		brace = strchr(line, '{');
		if (brace)
			*brace = '\0';
		if ((rc = take_line(s, line, brace ? brace + 1 : "", v)) < 0)
			return rc;
	}
	return 0;
}

/* ---- top: showing them ---------------------------------------------------- */

static const struct top_row *prev_row(const struct top_sample *prev,
				      const char *service)
{
	for (size_t i = 0; prev && i < prev->nrows; i++)
		if (strcmp(prev->rows[i].service, service) == 0)
			return &prev->rows[i];
	return NULL;
}

/* Bytes as a short text: 512, 64K, 1.5M, 2.0G. */
static void human_bytes(double v, char *out, size_t size)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(out, size, "%.0f", v);
	else
		snprintf(out, size, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

/* A rate over dt, or "-" without a previous sample. */
static void rate(double now, double before, double dt, bool have,
		 char *out, size_t size)
{
	if (!have || dt <= 0 || now < before)
		snprintf(out, size, "-");
	else
		snprintf(out, size, "%.1f", (now - before) / dt);
}

static void show(const struct top_sample *s, const struct top_sample *prev,
		 double dt)
{
	char commits[32];

	rate(s->commits, prev ? prev->commits : 0, dt, prev != NULL, commits,
	     sizeof(commits));
	printf("hosteld up %.0fs, %.0f connection(s), %zu service(s); "
	       "history %s commits/s, %.0f event(s) queued\n",
	       s->uptime, s->connections, s->nrows, commits, s->pending_events);
	printf("%-20s %-9s %8s %8s %7s %10s %7s %7s %7s %7s %5s %5s %8s\n",
	       "SERVICE", "STATE", "CALLS/s", "LAT(ms)", "ERRORS", "FUEL/s",
	       "MEM", "HOST", "HANDLES", "PENDING", "RUN", "QUEUE", "RESTARTS");
	for (size_t i = 0; i < s->nrows; i++) {
		const struct top_row *r = &s->rows[i];
		const struct top_row *p = prev_row(prev, r->service);
		char calls[32], fuel[32], lat[32], mem[16], host[16];

		rate(r->calls, p ? p->calls : 0, dt, p != NULL, calls,
		     sizeof(calls));
		rate(r->fuel, p ? p->fuel : 0, dt, p != NULL, fuel,
		     sizeof(fuel));
		if (p && r->latency_count > p->latency_count)
			snprintf(lat, sizeof(lat), "%.2f",
				 (r->latency_sum - p->latency_sum) /
					 (r->latency_count - p->latency_count) *
					 1000.0);
		else
			snprintf(lat, sizeof(lat), "-");
		human_bytes(r->linear, mem, sizeof(mem));
		human_bytes(r->host, host, sizeof(host));
		printf("%-20.20s %-9.9s %8s %8s %7.0f %10s %7s %7s %7.0f %7.0f "
		       "%5.0f %5.0f %8.0f\n",
		       r->service, r->state, calls, lat, r->errors, fuel, mem,
		       host, r->handles, r->pending, r->running, r->queued,
		       r->restarts);
	}
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void top_usage(FILE *f)
{
	fprintf(f, "usage: hostel top [--socket PATH] [-d SECONDS] "
		   "[-n COUNT]\n"
		   "\n"
		   "Show the services' metrics, refreshed every SECONDS "
		   "(default 1).\n"
		   "\n"
		   "  -d, --delay SECONDS  time between refreshes (at least "
		   "0.1)\n"
		   "  -n, --iterations COUNT\n"
		   "                       stop after COUNT tables, printed "
		   "one after another\n"
		   "  --socket PATH        the daemon's socket (default: "
		   "$HOSTEL_SOCKET, else\n"
		   "                       the daemon's default path)\n");
}

static int top_loop(struct varlink_client *client, double delay, long count,
		    bool redraw)
{
	struct top_sample prev = {0}, cur;
	bool have_prev = false;
	double t_prev = 0;
	int rc = 0;

	for (long i = 0; count == 0 || i < count; i++) {
		char *text;
		double t;

		if (i > 0) {
			struct timespec ts = {
				(time_t)delay,
				(long)((delay - floor(delay)) * 1e9)};

			nanosleep(&ts, NULL);
		}
		if ((rc = fetch("top", client, NULL, &text)))
			break;
		t = mono_s();
		rc = parse(text, &cur);
		free(text);
		if (rc) {
			fprintf(stderr, "hostel top: %s\n",
				rc == -ENOMEM ? "out of memory"
					      : "the metrics text is malformed");
			sample_free(&cur);
			rc = rc == -ENOMEM ? HOSTEL_EXIT_FAILURE
					   : HOSTEL_EXIT_PROTOCOL;
			break;
		}
		if (redraw)
			fputs("\033[H\033[2J", stdout);
		else if (i > 0)
			putchar('\n');
		show(&cur, have_prev ? &prev : NULL, t - t_prev);
		fflush(stdout);
		sample_free(&prev);
		prev = cur;
		have_prev = true;
		t_prev = t;
	}
	sample_free(&prev);
	return rc;
}

int cmd_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"delay", required_argument, NULL, 'd'},
		{"iterations", required_argument, NULL, 'n'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *socket_opt = NULL;
	struct varlink_client *client;
	double delay = 1.0;
	long count = 0;
	char *end;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+d:n:", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			delay = strtod(optarg, &end);
			if (*end || !(delay >= 0.1) || delay > 3600) {
				fprintf(stderr, "hostel top: -d wants seconds "
						"from 0.1 to 3600\n");
				return HOSTEL_EXIT_USAGE;
			}
			break;
		case 'n':
			count = strtol(optarg, &end, 10);
			if (*end || count < 1) {
				fprintf(stderr, "hostel top: -n wants a count "
						"of at least 1\n");
				return HOSTEL_EXIT_USAGE;
			}
			break;
		case 's':
			socket_opt = optarg;
			break;
		case 'h':
			top_usage(stdout);
			return HOSTEL_EXIT_OK;
		default:
			top_usage(stderr);
			return HOSTEL_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		top_usage(stderr);
		return HOSTEL_EXIT_USAGE;
	}
	rc = daemon_client_open("top", socket_opt, METRICS_TIMEOUT_MS, &client);
	if (rc)
		return rc;
	rc = top_loop(client, delay, count, count == 0 && isatty(1));
	varlink_client_free(client);
	return rc;
}
