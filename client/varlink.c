/*
 * varlink.c - `hostel varlink`: call any method of hosteld and print
 * each reply's parameters, one JSON object per line.
 *
 *   hostel varlink [--more] [--socket PATH] METHOD [JSON]
 *
 * JSON is the call's parameters, an object (default: none).  With
 * --more the call asks for several replies and every one is printed as
 * it comes, until the one that does not continue.  An error reply is
 * said on stderr (its name and parameters) and gives the exit code of
 * the daemon commands (hostel(1), EXIT STATUS); the replies before it
 * have been printed.  This is the generic tool behind the examples of
 * hostel-protocol(7), so that no varlinkctl is needed.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line is the user's own; what the daemon sends back is read one
 *    message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client/commands.h"
#include "client/daemon-client.h"
#include "ipc/client.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: hostel varlink [--more] [--socket PATH] METHOD "
		   "[JSON]\n"
		   "\n"
		   "Call METHOD (e.g. io.hostel.Daemon.Status) with the "
		   "parameters JSON\n"
		   "(an object; default none) and print each reply's "
		   "parameters on a line.\n"
		   "\n"
		   "  --more          ask for several replies (a stream) and "
		   "print each\n"
		   "  --socket PATH   the daemon's socket (default: "
		   "$HOSTEL_SOCKET, else the\n"
		   "                  daemon's default path)\n");
}

/* Print one reply: its parameters, or (an error) say it on stderr. */
static int print_reply(const struct varlink_reply *r)
{
	/* Never NULL: an owned empty object when the reply had none. */
	char *text = json_dumps(r->parameters, JSON_COMPACT);
	int rc = HOSTEL_EXIT_OK;

	if (!text) {
		fprintf(stderr, "hostel varlink: out of memory\n");
		return HOSTEL_EXIT_FAILURE;
	}
	if (r->error) {
		fprintf(stderr, "hostel varlink: hosteld answered %s %s\n",
			r->error, text);
		rc = daemon_client_error_exit(r->error);
	} else {
		printf("%s\n", text);
		fflush(stdout);
	}
	free(text);
	return rc;
}

static int lost(struct varlink_client *c, int rc)
{
	if (rc == -EBADMSG || rc == -EMSGSIZE) {
		fprintf(stderr,
			"hostel varlink: invalid reply from hosteld: %s\n",
			rc == -EBADMSG ? varlink_client_fault(c)
				       : "longer than a message may be");
		return HOSTEL_EXIT_PROTOCOL;
	}
	fprintf(stderr, "hostel varlink: hosteld did not answer: %s\n",
		rc == -ECONNRESET ? "it closed the connection" : strerror(-rc));
	return HOSTEL_EXIT_UNAVAILABLE;
}

int cmd_varlink(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"more", no_argument, NULL, 'm'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *socket_opt = NULL, *method;
	struct varlink_client *client;
	json_t *params = NULL, *msg;
	json_error_t jerr;
	bool more = false;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			more = true;
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
	if (optind >= argc || argc - optind > 2) {
		usage(stderr);
		return HOSTEL_EXIT_USAGE;
	}
	method = argv[optind];
	if (optind + 1 < argc) {
		params = json_loads(argv[optind + 1], 0, &jerr);
		if (!json_is_object(params)) {
			fprintf(stderr,
				"hostel varlink: the parameters must be a "
				"JSON object%s%s\n",
				params ? "" : ": ", params ? "" : jerr.text);
			json_decref(params);
			return HOSTEL_EXIT_USAGE;
		}
	}
	rc = daemon_client_open("varlink", socket_opt, DAEMON_CLIENT_TIMEOUT_MS,
				&client);
	if (rc) {
		json_decref(params);
		return rc;
	}
	/* A stream may be quiet for as long as it likes. */
	if (more)
		varlink_client_set_timeout(client, -1);
	msg = varlink_call_new(method, params, more ? VARLINK_CALL_MORE : 0);
	rc = msg ? varlink_client_send(client, msg) : -ENOMEM;
	json_decref(msg);
	while (rc == 0) {
		struct varlink_reply r = {0};

		rc = varlink_client_recv(client, &r);
		if (rc)
			break;
		rc = print_reply(&r);
		if (rc || !r.continues) {
			varlink_reply_clear(&r);
			varlink_client_free(client);
			return rc;
		}
		varlink_reply_clear(&r);
	}
	rc = rc == -ENOMEM
		     ? (fprintf(stderr, "hostel varlink: out of memory\n"),
			HOSTEL_EXIT_FAILURE)
		     : lost(client, rc);
	varlink_client_free(client);
	return rc;
}
