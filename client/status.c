/*
 * status.c - `hostel status`: ask hosteld for io.hostel.Daemon.Status and
 * show it.
 *
 * The socket is --socket PATH, else $HOSTEL_SOCKET, else the daemon's
 * default (ipc/socket-path.h).  Exit codes: 0 ok; 69 (EX_UNAVAILABLE)
 * when the daemon cannot be reached or does not answer; 76
 * (EX_PROTOCOL) when its answer is not a valid reply; 1 when it answers
 * with an error; 2 for a bad command line.
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client/commands.h"
#include "client/daemon-client.h"
#include "ipc/client.h"
#include "ipc/socket-path.h"

#define STATUS_TIMEOUT_MS 5000

static void usage(FILE *f)
{
	fprintf(f, "usage: hostel status [--socket PATH] [--json]\n"
		   "\n"
		   "Show the state of hosteld.\n"
		   "\n"
		   "  --socket PATH   the daemon's socket (default: "
		   "$HOSTEL_SOCKET, else the\n"
		   "                  daemon's default path)\n"
		   "  --json          print the reply's parameters as one JSON "
		   "object\n");
}

/* 0, or HOSTEL_EXIT_UNAVAILABLE after saying why. */
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

static const char *str(json_t *params, const char *key)
{
	const char *s = json_string_value(json_object_get(params, key));

	return s ? s : "?";
}

static void print_uptime(json_int_t ms)
{
	long long s = ms / 1000;

	if (s >= 86400)
		printf("%lldd %02lldh %02lldm", s / 86400, s % 86400 / 3600,
		       s % 3600 / 60);
	else if (s >= 3600)
		printf("%lldh %02lldm %02llds", s / 3600, s % 3600 / 60,
		       s % 60);
	else if (s >= 60)
		printf("%lldm %02llds", s / 60, s % 60);
	else
		printf("%lld.%03llds", s, (long long)(ms % 1000));
}

static void print_human(json_t *p)
{
	json_t *pid = json_object_get(p, "pid");
	json_t *uptime = json_object_get(p, "uptimeMs");
	json_t *conns = json_object_get(p, "connections");

	printf("hosteld %s", str(p, "version"));
	if (json_is_integer(pid))
		printf(", pid %" JSON_INTEGER_FORMAT, json_integer_value(pid));
	if (json_is_integer(uptime)) {
		printf(", up ");
		print_uptime(json_integer_value(uptime));
	}
	printf("\n  socket:       %s\n", str(p, "socket"));
	printf("  state dir:    %s\n", str(p, "stateDirectory"));
	if (json_is_integer(conns))
		printf("  connections:  %" JSON_INTEGER_FORMAT "\n",
		       json_integer_value(conns));
}

int cmd_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *socket_opt = NULL;
	struct varlink_client *client = NULL;
	struct varlink_reply reply = {0};
	struct varlink_fault fault;
	char path[PATH_MAX];
	bool json = false;
	json_t *call;
	const char *msg;
	size_t len;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			socket_opt = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return HOSTEL_EXIT_OK;
		default:
			usage(stderr);
			return HOSTEL_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hostel status: unexpected argument '%s'\n",
			argv[optind]);
		return HOSTEL_EXIT_USAGE;
	}
	rc = resolve_socket(socket_opt, path, sizeof(path));
	if (rc)
		return rc;
	rc = varlink_client_connect(path, STATUS_TIMEOUT_MS, &client);
	if (rc) {
		fprintf(stderr,
			"hostel: cannot reach hosteld at %s: %s (is hosteld "
			"running?)\n",
			path, strerror(-rc));
		return HOSTEL_EXIT_UNAVAILABLE;
	}
	call = varlink_call_new("io.hostel.Daemon.Status", NULL, 0);
	rc = call ? varlink_client_send(client, call) : -ENOMEM;
	json_decref(call);
	if (rc == 0)
		rc = varlink_client_recv_raw(client, &msg, &len);
	if (rc) {
		fprintf(stderr, "hostel: hosteld at %s did not answer: %s\n",
			path, strerror(-rc));
		rc = HOSTEL_EXIT_UNAVAILABLE;
		goto out;
	}
	if (varlink_reply_parse(msg, len, &reply, &fault) != VARLINK_OK) {
		fprintf(stderr, "hostel: invalid reply from %s: %s\n", path,
			fault.reason);
		rc = HOSTEL_EXIT_PROTOCOL;
		goto out;
	}
	if (json && !reply.error) {
		/* The parameters themselves: what a script wants, no envelope.
		 */
		char *text = json_dumps(reply.parameters, JSON_COMPACT);

		if (!text) {
			fprintf(stderr, "hostel: out of memory\n");
			rc = HOSTEL_EXIT_FAILURE;
			goto out;
		}
		printf("%s\n", text);
		free(text);
	} else if (!reply.error) {
		print_human(reply.parameters);
	}
	if (reply.error) {
		char *params = json_dumps(reply.parameters, JSON_COMPACT);

		fprintf(stderr, "hostel: hosteld answered %s %s\n", reply.error,
			params ? params : "");
		free(params);
		rc = daemon_client_error_exit(reply.error);
	}
out:
	varlink_reply_clear(&reply);
	varlink_client_free(client);
	return rc;
}
