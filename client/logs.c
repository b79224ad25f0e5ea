/*
 * logs.c - `hostel logs`: print hosteld's event history
 * (io.hostel.History.Read), optionally following it.
 *
 *   hostel logs [-f] [-n N] [--since SEQ|TIME] [--until SEQ|TIME] [--json]
 *               [--kind KIND]... [--call ID] [SERVICE]
 *
 * Without -f the history is read in pages until the end of the range
 * the first reply names (the last durable event, or --until's), so
 * events that happen meanwhile do not stretch it.  With -f one Read
 * call with "more" streams the backlog and then every new event; if
 * hosteld reports that we fell behind
 * (io.hostel.History.Lagged) the read resumes right after the last event
 * printed, so nothing is missed or printed twice.  -n and the times go
 * to hosteld (Read's last, sinceTime, untilTime), which resolves them to
 * seqs, on the first call only: later pages continue by seq.  TIME is
 * one of ipc/timefmt.h's user forms, sent as RFC 3339 in UTC.  The stream ends
 * when hosteld stops (its final reply): exit 0.  Exit codes are those of
 * `hostel status` (client/commands.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "client/commands.h"
#include "client/daemon-client.h"
#include "ipc/client.h"
#include "ipc/socket-path.h"
#include "ipc/timefmt.h"

/* A page of up to LOGS_PAGE events may carry values up to
 * HISTORY_VALUE_MAX each: a busy or slow hosteld (memcheck) takes
 * seconds to send one, so a page waits as long as other daemon
 * subcommands do. */
#define LOGS_TIMEOUT_MS DAEMON_CLIENT_TIMEOUT_MS
#define LOGS_PAGE	1000
#define LOGS_KINDS_MAX	32
#define ERROR_LAGGED	"io.hostel.History.Lagged"
/* hosteld's bound on Read's last (daemon/method-history.c). */
#define LOGS_LINES_MAX 1000000

struct logs {
	const char *service, *call;
	const char *kinds[LOGS_KINDS_MAX];
	size_t n_kinds;
	json_int_t since, until, lines;
	char since_time[48], until_time[48]; /* RFC 3339; "" when not set */
	bool follow, json;
	struct varlink_client *client;
	const char *path;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hostel logs [-f] [-n N] [--since SEQ|TIME] [--until "
		"SEQ|TIME] [--json]\n"
		"                   [--kind KIND]... [--call ID] [SERVICE]\n"
		"\n"
		"Print hosteld's event history, oldest first.\n"
		"\n"
		"  -f, --follow     keep printing new events as they happen\n"
		"  -n, --lines N    only the last N events (then, with -f, new "
		"ones)\n"
		"  --since SEQ|TIME start at sequence number SEQ, or at TIME\n"
		"  --until SEQ|TIME stop at SEQ, or at TIME (not with -f)\n"
		"                   TIME: 2026-12-01T20:00:00Z, \"2026-12-01 "
		"20:00[:00]\" (local),\n"
		"                   2026-12-01, now, today, yesterday, -10m, "
		"\"2h ago\";\n"
		"                   units s, m, min, h, d, w\n"
		"  --kind KIND      only events of KIND (e.g. call.returned, "
		"call.*);\n"
		"                   may be given several times\n"
		"  --call ID        only the events of one call\n"
		"  --json           one JSON object per event and line\n"
		"  --socket PATH    the daemon's socket (default: "
		"$HOSTEL_SOCKET, else the\n"
		"                   daemon's default path)\n");
}

static int resolve_socket(const char *opt, char *buf, size_t size)
{
	const char *env = getenv("HOSTEL_SOCKET");
	int rc;

	if (opt || (env && *env)) {
		snprintf(buf, size, "%s", opt ? opt : env);
		return 0;
	}
	rc = hostel_default_socket_path(buf, size);
	if (rc == 0)
		return 0;
	fprintf(stderr, "hostel: %s; use --socket PATH or HOSTEL_SOCKET\n",
		rc == -ENOENT ? "no default socket (XDG_RUNTIME_DIR is unset)"
			      : "the default socket path is too long");
	return HOSTEL_EXIT_UNAVAILABLE;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* "2024-06-01T12:00:00.123456789Z" -> "2024-06-01T12:00:00.123Z". */
static void short_time(const char *t, char *buf, size_t size)
{
	size_t n = strlen(t);

	if (n >= 24 && t[19] == '.' && t[n - 1] == 'Z')
		snprintf(buf, size, "%.23sZ", t);
	else
		snprintf(buf, size, "%s", t);
}

/* Print the events of a reply; *last_seq is the last one printed. */
static int print_events(const struct logs *lg, json_t *params,
			json_int_t *last_seq)
{
	json_t *events = json_object_get(params, "events"), *ev;
	size_t i;

	if (!json_is_array(events))
		return -EBADMSG;
	json_array_foreach(events, i, ev)
	{
		json_t *seq = json_object_get(ev, "seq");
		const char *kind =
			json_string_value(json_object_get(ev, "kind"));

		if (!json_is_integer(seq) || !kind)
			return -EBADMSG;
		*last_seq = json_integer_value(seq);
		if (lg->json) {
			char *text = json_dumps(ev, JSON_COMPACT);

			if (!text)
				return -ENOMEM;
			printf("%s\n", text);
			free(text);
		} else {
			const char *svc = json_string_value(
				json_object_get(ev, "service"));
			const char *call =
				json_string_value(json_object_get(ev, "call"));
			const char *t =
				json_string_value(json_object_get(ev, "time"));
			char *payload =
				json_dumps(json_object_get(ev, "payload"),
					   JSON_COMPACT | JSON_ENCODE_ANY);
			char when[40];

			short_time(t ? t : "?", when, sizeof(when));
			printf("%" JSON_INTEGER_FORMAT " %s %s %s%s%s %s\n",
			       json_integer_value(seq), when, svc ? svc : "-",
			       kind, call ? " call=" : "", call ? call : "",
			       payload ? payload : "{}");
			free(payload);
		}
	}
	fflush(stdout);
	return 0;
}

/*
 * Read's parameters.  The first call carries -n and the times; later
 * ones (first false) continue by seq, up to until (0: no bound).
 */
static json_t *read_params(const struct logs *lg, json_int_t since,
			   json_int_t until, bool paged, bool first)
{
	json_t *p = json_object(), *kinds;

	if (!p)
		return NULL;
	if (json_object_set_new(p, "since", json_integer(since)) ||
	    (until && json_object_set_new(p, "until", json_integer(until))) ||
	    (first && lg->lines &&
	     json_object_set_new(p, "last", json_integer(lg->lines))) ||
	    (first && *lg->since_time &&
	     json_object_set_new(p, "sinceTime",
				 json_string(lg->since_time))) ||
	    (first && *lg->until_time &&
	     json_object_set_new(p, "untilTime",
				 json_string(lg->until_time))) ||
	    (paged &&
	     json_object_set_new(p, "limit", json_integer(LOGS_PAGE))) ||
	    (lg->service &&
	     json_object_set_new(p, "service", json_string(lg->service))) ||
	    (lg->call && json_object_set_new(p, "call", json_string(lg->call))))
		goto fail;
	if (lg->n_kinds) {
		kinds = json_array();
		if (!kinds || json_object_set_new(p, "kinds", kinds))
			goto fail;
		for (size_t i = 0; i < lg->n_kinds; i++)
			if (json_array_append_new(kinds,
						  json_string(lg->kinds[i])))
				goto fail;
	}
	return p;
fail:
	json_decref(p);
	return NULL;
}

/* A reply that is an error: say it and give the exit code. */
static int report_error(const struct logs *lg, struct varlink_reply *r)
{
	char *params = json_dumps(r->parameters, JSON_COMPACT);

	fprintf(stderr, "hostel: hosteld answered %s %s\n", r->error,
		params ? params : "");
	free(params);
	return daemon_client_error_exit(r->error);
}

static int lost(const struct logs *lg, int rc)
{
	if (rc == -EBADMSG) {
		fprintf(stderr, "hostel: invalid reply from %s: %s\n", lg->path,
			varlink_client_fault(lg->client));
		return HOSTEL_EXIT_PROTOCOL;
	}
	fprintf(stderr, "hostel: hosteld at %s: %s\n", lg->path,
		rc == -ECONNRESET ? "closed the connection" : strerror(-rc));
	return HOSTEL_EXIT_UNAVAILABLE;
}

/* Page through the range, up to the end the first reply gives. */
static int read_all(struct logs *lg)
{
	json_int_t since = lg->since, printed = 0, until = lg->until;
	bool first = true;

	for (;;) {
		struct varlink_reply r = {0};
		json_t *next, *last;
		int rc = varlink_client_call(
			lg->client, "io.hostel.History.Read",
			read_params(lg, since, until, true, first), &r);

		if (rc)
			return lost(lg, rc);
		if (r.error) {
			rc = report_error(lg, &r);
			varlink_reply_clear(&r);
			return rc;
		}
		next = json_object_get(r.parameters, "next");
		last = json_object_get(r.parameters, "last");
		if (!json_is_integer(next) || !json_is_integer(last) ||
		    print_events(lg, r.parameters, &printed) < 0) {
			varlink_reply_clear(&r);
			fprintf(stderr, "hostel: invalid reply from %s\n",
				lg->path);
			return HOSTEL_EXIT_PROTOCOL;
		}
		if (json_integer_value(next) > json_integer_value(last)) {
			varlink_reply_clear(&r);
			return HOSTEL_EXIT_OK; /* up to the end of the range */
		}
		if (first) {
			/* Later pages: by seq, within the range resolved. */
			first = false;
			until = json_integer_value(last);
			if (until < 1) {
				varlink_reply_clear(&r);
				return HOSTEL_EXIT_OK;
			}
		}
		/* Short of the end: the cursor must move, or we would loop. */
		rc = json_integer_value(next) <= since;
		since = json_integer_value(next);
		varlink_reply_clear(&r);
		if (rc) {
			fprintf(stderr, "hostel: invalid reply from %s\n",
				lg->path);
			return HOSTEL_EXIT_PROTOCOL;
		}
	}
}

static int send_follow(struct logs *lg, json_int_t since, bool first)
{
	json_t *call = varlink_call_new("io.hostel.History.Read",
					read_params(lg, since, 0, false, first),
					VARLINK_CALL_MORE);
	int rc = call ? varlink_client_send(lg->client, call) : -ENOMEM;

	json_decref(call);
	return rc;
}

/* Stream the backlog and then new events until hosteld ends it. */
static int follow(struct logs *lg)
{
	json_int_t printed = lg->since - 1;
	int rc;

	varlink_client_set_timeout(lg->client, -1);
	rc = send_follow(lg, lg->since, true);
	while (rc == 0) {
		struct varlink_reply r = {0};

		rc = varlink_client_recv(lg->client, &r);
		if (rc)
			break;
		if (r.error && !strcmp(r.error, ERROR_LAGGED)) {
			json_t *at = json_object_get(r.parameters, "lastSeq");

			if (json_is_integer(at))
				printed = json_integer_value(at);
			fprintf(stderr,
				"hostel: fell behind hosteld; resuming after "
				"event %" JSON_INTEGER_FORMAT "\n",
				printed);
			varlink_reply_clear(&r);
			rc = send_follow(lg, printed + 1, false);
			continue;
		}
		if (r.error) {
			rc = report_error(lg, &r);
			varlink_reply_clear(&r);
			return rc;
		}
		if (print_events(lg, r.parameters, &printed) < 0) {
			varlink_reply_clear(&r);
			fprintf(stderr, "hostel: invalid reply from %s\n",
				lg->path);
			return HOSTEL_EXIT_PROTOCOL;
		}
		if (!r.continues) {
			/* hosteld is stopping: the stream is complete. */
			varlink_reply_clear(&r);
			return HOSTEL_EXIT_OK;
		}
		varlink_reply_clear(&r);
	}
	return lost(lg, rc);
}

/* SEQ (digits) or TIME; on false a message has been printed. */
static bool seq_or_time(const char *opt, const char *v, json_int_t *seq,
			char *time, size_t size)
{
	int64_t ns;
	char *end;

	if (*v >= '0' && *v <= '9' && strspn(v, "0123456789") == strlen(v)) {
		errno = 0;
		*seq = strtoll(v, &end, 10);
		if (!errno && *seq >= 1)
			return true;
	} else if (hostel_time_parse_user(v, now_ns(), &ns) == 0) {
		hostel_time_format(ns, time, size);
		return true;
	}
	fprintf(stderr,
		"hostel logs: %s wants a sequence number (1 or more) or a "
		"time (hostel(1)), not '%s'\n",
		opt, v);
	return false;
}

int cmd_logs(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"follow", no_argument, NULL, 'f'},
		{"lines", required_argument, NULL, 'n'},
		{"since", required_argument, NULL, 'S'},
		{"until", required_argument, NULL, 'U'},
		{"json", no_argument, NULL, 'j'},
		{"kind", required_argument, NULL, 'k'},
		{"call", required_argument, NULL, 'c'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct logs lg = {.since = 1};
	const char *socket_opt = NULL;
	char path[PATH_MAX], *end;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "fn:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			lg.follow = true;
			break;
		case 'n':
			errno = 0;
			lg.lines = strtoll(optarg, &end, 10);
			if (errno || *end || end == optarg || lg.lines < 1 ||
			    lg.lines > LOGS_LINES_MAX) {
				fprintf(stderr,
					"hostel logs: -n wants a count from 1 "
					"to %d, not '%s'\n",
					LOGS_LINES_MAX, optarg);
				return HOSTEL_EXIT_USAGE;
			}
			break;
		case 'S':
			if (!seq_or_time("--since", optarg, &lg.since,
					 lg.since_time, sizeof(lg.since_time)))
				return HOSTEL_EXIT_USAGE;
			break;
		case 'U':
			if (!seq_or_time("--until", optarg, &lg.until,
					 lg.until_time, sizeof(lg.until_time)))
				return HOSTEL_EXIT_USAGE;
			break;
		case 'j':
			lg.json = true;
			break;
		case 'k':
			if (lg.n_kinds == LOGS_KINDS_MAX) {
				fprintf(stderr,
					"hostel logs: at most %d --kind\n",
					LOGS_KINDS_MAX);
				return HOSTEL_EXIT_USAGE;
			}
			lg.kinds[lg.n_kinds++] = optarg;
			break;
		case 'c':
			lg.call = optarg;
			break;
		case 's':
			socket_opt = optarg;
			break;
		case 'h':
			usage(stdout);
			return HOSTEL_EXIT_OK;
		default:
			usage(stderr);
			return HOSTEL_EXIT_USAGE;
		}
	}
	if (lg.follow && (lg.until || *lg.until_time)) {
		fprintf(stderr,
			"hostel logs: --until cannot be used with -f\n");
		return HOSTEL_EXIT_USAGE;
	}
	if (optind < argc)
		lg.service = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "hostel logs: unexpected argument '%s'\n",
			argv[optind]);
		return HOSTEL_EXIT_USAGE;
	}
	rc = resolve_socket(socket_opt, path, sizeof(path));
	if (rc)
		return rc;
	lg.path = path;
	rc = varlink_client_connect(path, LOGS_TIMEOUT_MS, &lg.client);
	if (rc) {
		fprintf(stderr,
			"hostel: cannot reach hosteld at %s: %s (is hosteld "
			"running?)\n",
			path, strerror(-rc));
		return HOSTEL_EXIT_UNAVAILABLE;
	}
	rc = lg.follow ? follow(&lg) : read_all(&lg);
	varlink_client_free(lg.client);
	return rc;
}
