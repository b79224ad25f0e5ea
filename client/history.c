/*
 * history.c - `hostel history`: the story of one call, and pruning the
 * event history on request.
 *
 *   hostel history [--json] CALL
 *   hostel history prune [--service NAME] [--keep-events N]
 *                        [--keep-age DURATION]
 *
 * `history CALL` reads every event of the call (io.hostel.History.Read
 * filtered by call, paged up to the last durable event) and prints them
 * for people: a header naming the service and how the call ended (or
 * that it has not), then one line per event with the kind's details;
 * --json prints each event as one JSON object per line instead, exactly
 * as hosteld sent it.  A call with no events (unknown, or pruned) exits
 * HOSTEL_EXIT_NOT_FOUND.
 *
 * `history prune` asks hosteld to apply retention now
 * (io.hostel.History.Prune) and prints how many events went; when none
 * did, on the same line, why: how many the limits keep and how many
 * past them belong to open calls, naming the first few.  Exit codes
 * are those of the other daemon subcommands (client/commands.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#define _GNU_SOURCE /* strptime, timegm */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "client/commands.h"
#include "client/daemon-client.h"
#include "ipc/client.h"
#include "ipc/timefmt.h"

#define HISTORY_PAGE 1000

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hostel history [--json] CALL\n"
		"       hostel history prune [--service NAME] "
		"[--keep-events N]\n"
		"                            [--keep-age DURATION]\n"
		"\n"
		"Show every event of one call (by its call id), or apply the\n"
		"history's retention now.\n"
		"\n"
		"  --json              one JSON object per event and line\n"
		"  --service NAME      prune: only this service's events\n"
		"  --keep-events N     prune: keep the newest N events per "
		"service\n"
		"                      (0: no count limit)\n"
		"  --keep-age DURATION prune: remove events older than this "
		"(30d, 12h,\n"
		"                      90m, 3600s or seconds; 0: no age "
		"limit)\n"
		"  --socket PATH       the daemon's socket\n");
}

/* ---- one call ------------------------------------------------------------ */

/* Unix ns of an RFC 3339 UTC time as hosteld writes it; -1 if not. */
static int64_t parse_time(const char *t)
{
	struct tm tm;
	const char *rest;
	int64_t ns = 0, scale = 100000000;

	if (!t)
		return -1;
	memset(&tm, 0, sizeof(tm));
	rest = strptime(t, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest)
		return -1;
	if (*rest == '.')
		for (rest++; *rest >= '0' && *rest <= '9'; rest++) {
			ns += (*rest - '0') * scale;
			scale /= 10;
		}
	if (strcmp(rest, "Z"))
		return -1;
	return (int64_t)timegm(&tm) * 1000000000 + ns;
}

/* "2024-06-01T12:00:00.123456789Z" -> "2024-06-01T12:00:00.123Z". */
static void short_time(const char *t, char *buf, size_t size)
{
	size_t n = t ? strlen(t) : 0;

	if (n >= 24 && t[19] == '.' && t[n - 1] == 'Z')
		snprintf(buf, size, "%.23sZ", t);
	else
		snprintf(buf, size, "%s", t ? t : "?");
}

static char *compact(json_t *v)
{
	return v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

static const char *str(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

/* The kind's details, for people; the payload as JSON when unknown. */
static void print_detail(const char *kind, json_t *payload)
{
	char *a = NULL, *b = NULL;

	if (!strcmp(kind, "call.started")) {
		json_t *who = json_object_get(payload, "caller");

		size_t n;

		a = compact(json_object_get(payload, "arguments"));
		n = a ? strlen(a) : 0;
		/* export(arguments): the JSON array without its brackets */
		printf("%s(%.*s)",
		       str(payload, "export") ? str(payload, "export") : "?",
		       n >= 2 && a[0] == '[' ? (int)n - 2 : (int)n,
		       n >= 2 && a[0] == '[' ? a + 1 : (a ? a : ""));
		if (json_is_object(who))
			printf(" by pid %" JSON_INTEGER_FORMAT
			       " uid %" JSON_INTEGER_FORMAT
			       " gid %" JSON_INTEGER_FORMAT,
			       json_integer_value(json_object_get(who, "pid")),
			       json_integer_value(json_object_get(who, "uid")),
			       json_integer_value(json_object_get(who, "gid")));
	} else if (!strcmp(kind, "call.returned")) {
		a = compact(json_object_get(payload, "results"));
		printf("%s", a ? a : "(no result)");
	} else if (!strcmp(kind, "call.trapped") ||
		   !strcmp(kind, "call.failed")) {
		const char *what =
			str(payload, kind[5] == 't' ? "trap" : "error");
		const char *msg = str(payload, "message");

		printf("%s%s%s", what ? what : "?", msg ? ": " : "",
		       msg ? msg : "");
	} else if (!strcmp(kind, "call.cancelled") ||
		   !strcmp(kind, "call.interrupted")) {
		const char *why = str(payload, "reason");

		printf("%s", why ? why : "");
	} else if (!strcmp(kind, "hostcall.started")) {
		a = compact(json_object_get(payload, "arguments"));
		printf("#%" JSON_INTEGER_FORMAT " %s%s",
		       json_integer_value(json_object_get(payload, "hostcall")),
		       str(payload, "import") ? str(payload, "import") : "?",
		       a ? a : "");
	} else if (!strcmp(kind, "hostcall.settled")) {
		b = compact(json_object_get(payload, "result"));
		printf("#%" JSON_INTEGER_FORMAT "%s%s",
		       json_integer_value(json_object_get(payload, "hostcall")),
		       b ? " -> " : "", b ? b : "");
	} else {
		a = compact(payload);
		printf("%s", a ? a : "{}");
	}
	free(a);
	free(b);
}

/* What a call's events say, gathered while paging. */
struct story {
	json_t *events; /* every event, in order */
	const char *service, *end_kind;
	int64_t started_ns, ended_ns;
};

static bool terminal(const char *kind)
{
	static const char *const kinds[] = {
		"call.returned", "call.trapped",     "call.cancelled",
		"call.failed",	 "call.interrupted", NULL,
	};

	for (const char *const *k = kinds; *k; k++)
		if (!strcmp(*k, kind))
			return true;
	return false;
}

static void print_story(const char *id, struct story *s)
{
	json_t *ev;
	size_t i;

	printf("call %s of service %s: ", id, s->service ? s->service : "-");
	if (s->end_kind && s->started_ns >= 0 && s->ended_ns >= s->started_ns)
		printf("%s after %.3f ms\n", s->end_kind + 5,
		       (double)(s->ended_ns - s->started_ns) / 1e6);
	else if (s->end_kind)
		printf("%s\n", s->end_kind + 5);
	else
		printf("not ended yet\n");
	json_array_foreach(s->events, i, ev)
	{
		const char *kind = str(ev, "kind");
		char when[40];

		short_time(str(ev, "time"), when, sizeof(when));
		printf("%8" JSON_INTEGER_FORMAT " %s %-17s ",
		       json_integer_value(json_object_get(ev, "seq")), when,
		       kind);
		print_detail(kind, json_object_get(ev, "payload"));
		putchar('\n');
	}
}

/* Take a reply's events; -1 when the reply is malformed. */
static int take_events(struct story *s, json_t *params, bool json)
{
	json_t *events = json_object_get(params, "events"), *ev;
	size_t i;

	if (!json_is_array(events))
		return -1;
	json_array_foreach(events, i, ev)
	{
		const char *kind = str(ev, "kind");

		if (!json_is_integer(json_object_get(ev, "seq")) || !kind ||
		    !json_is_object(json_object_get(ev, "payload")))
			return -1;
		if (json_array_append(s->events, ev))
			return -1;
		if (json) {
			char *text = json_dumps(ev, JSON_COMPACT);

			if (!text)
				return -1;
			printf("%s\n", text);
			free(text);
		}
		if (!strcmp(kind, "call.started"))
			s->started_ns = parse_time(str(ev, "time"));
		if (terminal(kind) && !s->end_kind) {
			s->end_kind = kind;
			s->ended_ns = parse_time(str(ev, "time"));
		}
		if (!s->service)
			s->service = str(ev, "service");
	}
	return 0;
}

static int show_call(const char *socket_opt, const char *id, bool json)
{
	struct varlink_client *c;
	struct story s = {.events = json_array(), .started_ns = -1};
	json_int_t since = 1;
	int rc;

	if (!s.events)
		return HOSTEL_EXIT_FAILURE;
	rc = daemon_client_open("history", socket_opt, DAEMON_CLIENT_TIMEOUT_MS,
				&c);
	if (rc) {
		json_decref(s.events);
		return rc;
	}
	for (;;) {
		struct varlink_reply r = {0};
		json_t *next, *last;

		rc = daemon_client_call("history", c, "io.hostel.History.Read",
					json_pack("{sI,ss,si}", "since", since,
						  "call", id, "limit",
						  HISTORY_PAGE),
					0, &r);
		if (rc)
			break;
		if (r.error) {
			rc = daemon_client_report("history", &r);
			varlink_reply_clear(&r);
			break;
		}
		next = json_object_get(r.parameters, "next");
		last = json_object_get(r.parameters, "last");
		if (!json_is_integer(next) || !json_is_integer(last) ||
		    json_integer_value(next) <= since ||
		    take_events(&s, r.parameters, json) < 0) {
			varlink_reply_clear(&r);
			fprintf(stderr,
				"hostel history: invalid reply from hosteld\n");
			rc = HOSTEL_EXIT_PROTOCOL;
			break;
		}
		since = json_integer_value(next);
		rc = since > json_integer_value(last) ? 1 : 0;
		varlink_reply_clear(&r);
		if (rc) {
			rc = 0; /* up to the last durable event */
			break;
		}
	}
	varlink_client_free(c);
	if (rc == 0 && json_array_size(s.events) == 0) {
		fprintf(stderr,
			"hostel history: no events of call %s (unknown, or "
			"pruned)\n",
			id);
		rc = HOSTEL_EXIT_NOT_FOUND;
	} else if (rc == 0 && !json) {
		print_story(id, &s);
	}
	fflush(stdout);
	json_decref(s.events);
	return rc;
}

/* ---- prune -----------------------------------------------------------------
 */

/* A count (>= 0); -1 when malformed. */
static long long count_parse(const char *v)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 0)
		return -1;
	return n;
}

/* A duration in seconds (ipc/timefmt.h: the one set of units that
 * hostel.conf(5) takes too); -1 when malformed. */
static long long duration_parse(const char *v)
{
	int64_t sec;

	return hostel_duration_parse(v, &sec) < 0 ? -1 : sec;
}

/*
 * The reason of a pass that removed nothing (io.hostel.History.PruneKept)
 * after "pruned 0 event(s)"; false when it is malformed.
 */
static bool print_kept(const json_t *kept)
{
	json_t *limits = json_object_get(kept, "limits");
	json_t *open = json_object_get(kept, "openCalls");
	json_t *calls = json_object_get(kept, "calls");

	if (!json_is_integer(limits) || !json_is_integer(open) ||
	    !json_is_array(calls))
		return false;
	for (size_t i = 0; i < json_array_size(calls); i++)
		if (!json_is_string(json_array_get(calls, i)))
			return false;
	printf(": %" JSON_INTEGER_FORMAT " within the limits; ",
	       json_integer_value(limits));
	if (json_integer_value(open) == 0) {
		printf("none past them");
		return true;
	}
	printf("%" JSON_INTEGER_FORMAT " past them belong to open calls",
	       json_integer_value(open));
	for (size_t i = 0; i < json_array_size(calls); i++)
		printf("%s%s", i ? ", " : ": ",
		       json_string_value(json_array_get(calls, i)));
	if (json_is_true(json_object_get(kept, "more")))
		printf(", ...");
	return true;
}

static int prune(int argc, char **argv, const char *socket_opt)
{
	static const struct option longopts[] = {
		{"service", required_argument, NULL, 'S'},
		{"keep-events", required_argument, NULL, 'e'},
		{"keep-age", required_argument, NULL, 'a'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct varlink_client *c;
	struct varlink_reply r = {0};
	json_t *p = json_object();
	long long n;
	int opt, rc;

	if (!p)
		return HOSTEL_EXIT_FAILURE;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'S':
			json_object_set_new(p, "service", json_string(optarg));
			break;
		case 'e':
		case 'a':
			n = opt == 'e' ? count_parse(optarg)
				       : duration_parse(optarg);
			if (n < 0) {
				fprintf(stderr,
					"hostel history prune: --%s wants %s, "
					"not '%s'\n",
					opt == 'e' ? "keep-events" : "keep-age",
					opt == 'e' ? "a count"
						   : "a duration like 30d, "
						     "12h, 90m or 3600",
					optarg);
				json_decref(p);
				return HOSTEL_EXIT_USAGE;
			}
			json_object_set_new(
				p, opt == 'e' ? "keepEvents" : "keepAge",
				json_integer(n));
			break;
		case 's':
			socket_opt = optarg;
			break;
		case 'h':
			usage(stdout);
			json_decref(p);
			return HOSTEL_EXIT_OK;
		default:
			usage(stderr);
			json_decref(p);
			return HOSTEL_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr,
			"hostel history prune: unexpected argument '%s'\n",
			argv[optind]);
		json_decref(p);
		return HOSTEL_EXIT_USAGE;
	}
	/* A large history takes a while: no per-call timeout. */
	rc = daemon_client_open("history", socket_opt, -1, &c);
	if (rc) {
		json_decref(p);
		return rc;
	}
	rc = daemon_client_call("history", c, "io.hostel.History.Prune", p, 0,
				&r);
	if (rc == 0 && r.error) {
		rc = daemon_client_report("history", &r);
	} else if (rc == 0) {
		json_t *del = json_object_get(r.parameters, "deleted");
		json_t *kept = json_object_get(r.parameters, "kept");

		if (!json_is_integer(del) || (kept && !json_is_object(kept))) {
			fprintf(stderr,
				"hostel history: invalid reply from hosteld\n");
			rc = HOSTEL_EXIT_PROTOCOL;
		} else {
			printf("pruned %" JSON_INTEGER_FORMAT " event(s)",
			       json_integer_value(del));
			if (kept && !print_kept(kept)) {
				printf("\n");
				fprintf(stderr, "hostel history: invalid "
						"reply from hosteld\n");
				rc = HOSTEL_EXIT_PROTOCOL;
			} else {
				printf("\n");
			}
		}
	}
	varlink_reply_clear(&r);
	varlink_client_free(c);
	return rc;
}

/* ---- the command ------------------------------------------------------------
 */

int cmd_history(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *socket_opt = NULL;
	bool json = false;
	int opt;

	if (argc > 1 && !strcmp(argv[1], "prune"))
		return prune(argc - 1, argv + 1, NULL);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
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
	if (optind + 1 != argc) {
		fprintf(stderr,
			optind == argc
				? "hostel history: which call? (a call "
				  "id, as `hostel logs` shows)\n"
				: "hostel history: one call at a time\n");
		usage(stderr);
		return HOSTEL_EXIT_USAGE;
	}
	return show_call(socket_opt, argv[optind], json);
}
