/*
 * call.c - `hostel call`: call an export of a running service.
 *
 *   hostel call SERVICE 'EXPORT(ARGS)'          WAVE in, WAVE out
 *   hostel call --json SERVICE EXPORT [ARGS]    JSON in, JSON out
 *
 * WAVE text goes to hosteld as it is (the `wave` parameter of
 * io.hostel.Call.Invoke), which parses it against the export's real
 * type; the result comes back as WAVE and printed on one line (nothing
 * for a function without result).  With --json, ARGS is a JSON array (or
 * object by parameter name) in the canonical shapes of
 * hostel-protocol(7), and the result is printed as JSON.  ARGS (or the
 * WAVE call) "-" is read from standard input: values larger than a
 * command line takes (Linux: 128 KiB an argument).  Replies of up to
 * the message bound (VARLINK_MESSAGE_MAX) are read; one that came
 * without its WAVE text (hosteld leaves it out when the reply would not
 * fit otherwise) is printed as JSON, saying so.  Exit codes: hostel(1);
 * a trap is 1, ValueTooLarge 6.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/daemon-client.h"

/*
 * All of standard input, NUL-terminated, in *out (*len bytes); 0, or an
 * exit code after saying why.
 */
static int read_stdin(char **out, size_t *len)
{
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap);

	while (buf) {
		size_t got = fread(buf + n, 1, cap - n - 1, stdin);
		char *p;

		n += got;
		if (n < cap - 1)
			break;
		p = realloc(buf, cap * 2);
		if (!p) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = p;
		cap *= 2;
	}
	if (!buf || ferror(stdin)) {
		fprintf(stderr, "hostel call: cannot read standard input%s\n",
			buf ? "" : ": out of memory");
		free(buf);
		return HOSTEL_EXIT_INPUT;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hostel call [--timeout MS] SERVICE 'EXPORT(ARGS)'|-\n"
		"       hostel call --json [--timeout MS] SERVICE EXPORT "
		"[JSON-ARGS|-]\n");
}

int cmd_call(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"timeout", required_argument, NULL, 't'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct varlink_client *client = NULL;
	struct varlink_reply reply = {0};
	const char *socket_opt = NULL;
	int timeout = DAEMON_CLIENT_TIMEOUT_MS;
	bool json = false;
	json_t *params;
	char *in = NULL;
	size_t in_len = 0;
	int c, rc, nargs;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 't':
			timeout = atoi(optarg);
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
	nargs = argc - optind;
	if (json ? nargs < 2 || nargs > 3 : nargs != 2) {
		usage(stderr);
		return HOSTEL_EXIT_USAGE;
	}
	if (!strcmp(argv[argc - 1], "-") && nargs == (json ? 3 : 2)) {
		rc = read_stdin(&in, &in_len);
		if (rc)
			return rc;
	}
	if (json) {
		json_t *args = NULL;
		json_error_t jerr;

		if (nargs == 3) {
			args = in ? json_loadb(in, in_len, JSON_DECODE_ANY,
					       &jerr)
				  : json_loads(argv[optind + 2],
					       JSON_DECODE_ANY, &jerr);
			free(in);
			if (!args) {
				fprintf(stderr,
					"hostel call: ARGS is not JSON: %s\n",
					jerr.text);
				return HOSTEL_EXIT_USAGE;
			}
		}
		params = json_pack("{ss,ss,so*}", "service", argv[optind],
				   "export", argv[optind + 1], "args", args);
	} else {
		params = json_pack("{ss,ss%}", "service", argv[optind], "wave",
				   in ? in : argv[optind + 1],
				   in ? in_len : strlen(argv[optind + 1]));
		free(in);
	}
	if (!params) {
		fprintf(stderr, "hostel call: out of memory, or the WAVE text "
				"is not UTF-8\n");
		return HOSTEL_EXIT_USAGE;
	}
	rc = daemon_client_open("call", socket_opt, timeout, &client);
	if (!rc)
		rc = daemon_client_call("call", client, "io.hostel.Call.Invoke",
					params, 0, &reply);
	else
		json_decref(params);
	if (!rc && reply.error)
		rc = daemon_client_report("call", &reply);
	if (!rc) {
		json_t *p = reply.parameters;

		if (json) {
			char *text = json_dumps(json_object_get(p, "result"),
						JSON_COMPACT | JSON_ENCODE_ANY);

			printf("%s\n", text ? text : "null");
			free(text);
		} else if (json_is_string(json_object_get(p, "resultWave"))) {
			printf("%s\n", json_string_value(json_object_get(
					       p, "resultWave")));
		} else if (json_object_get(p, "result") &&
			   !json_is_null(json_object_get(p, "result"))) {
			/* Left out to fit the message bound: show the JSON. */
			char *text = json_dumps(json_object_get(p, "result"),
						JSON_COMPACT | JSON_ENCODE_ANY);

			fprintf(stderr,
				"hostel call: the reply is too large to "
				"carry the result's WAVE text too; the "
				"result as JSON:\n");
			printf("%s\n", text ? text : "null");
			free(text);
		}
	}
	varlink_reply_clear(&reply);
	varlink_client_free(client);
	return rc;
}
