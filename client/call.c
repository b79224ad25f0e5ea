/*
 * call.c - `hostel call`: call an export of a running service; and
 * `hostel cancel`: cancel a call by its id.
 *
 *   hostel call SERVICE 'EXPORT(ARGS)'          WAVE in, WAVE out
 *   hostel call --json SERVICE EXPORT [ARGS]    JSON in, JSON out
 *   hostel cancel CALL-ID
 *
 * WAVE text goes to hosteld as it is (the `wave` parameter of
 * io.hostel.Call.Invoke), which parses it against the export's real
 * type; the result comes back as WAVE and printed on one line (nothing
 * for a function without result).  With --json, ARGS is a JSON array (or
 * object by parameter name) in the canonical shapes of
 * hostel-protocol(7), and the result is printed as JSON.  ARGS (or the
 * WAVE call) "-" is read from standard input, --args-file FILE from a
 * file: values larger than a command line takes (Linux: 128 KiB an
 * argument), up to the message bound (VARLINK_MESSAGE_MAX; past it
 * hosteld answers ValueTooLarge).  Replies of
 * up to the message bound are read; one that came without its WAVE text
 * (hosteld leaves it out when the reply would not fit otherwise) is
 * printed as JSON, saying so.
 *
 * Values past the message bound: --arg-file NAME=FILE sends FILE's raw
 * bytes for parameter NAME (a list<u8> or a string) ahead of the call,
 * in chunks of CALL_UPLOAD_CHUNK (io.hostel.Call.Upload), read one at a
 * time; --result-file FILE asks for a list<u8> or string result in
 * chunks (chunkedResult) and writes each to FILE as it comes.
 *
 * The call is made with "more": its first reply names it (callId).
 * --timeout MS bounds the whole call; past it the client says the call's
 * id and that it is still running, or, with --cancel-on-timeout, cancels
 * it (io.hostel.Call.Cancel on a second connection) and says so; exit
 * HOSTEL_EXIT_TIMEOUT either way.  Without --timeout the client waits
 * for the call's end (its deadline, hostel.conf(5) call-deadline, bounds
 * it).  Exit codes: hostel(1); a trap is 1, ValueTooLarge 6.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's): --args-file and "-" are read
 *    whole (as the call's text must be: one message); --arg-file one
 *    chunk (CALL_UPLOAD_CHUNK, 1 MiB, and its
 *    base64) at a time.  What the daemon sends back is read one message
 *    at a time, at most VARLINK_MESSAGE_MAX (16 MiB, ipc/client.c); a
 *    result chunk is decoded and written before the next is read.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/commands.h"
#include "client/daemon-client.h"
#include "ipc/value-json.h"

/* The raw bytes of one Upload chunk (1.4 MB of base64). */
#define CALL_UPLOAD_CHUNK (1u << 20)
/* At most this many --arg-file options. */
#define CALL_ARG_FILES_MAX 8

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * All of a file ("-": standard input), NUL-terminated, in *out (*len
 * bytes); 0, or an exit code after saying why.  (One longer than a
 * message is sent all the same: hosteld answers ValueTooLarge, nothing
 * runs.)
 */
static int read_text(const char *path, char **out, size_t *len)
{
	bool in = !strcmp(path, "-");
	FILE *f = in ? stdin : fopen(path, "rb");
	size_t n = 0, cap = 1 << 16;
	char *buf;

	if (!f) {
		fprintf(stderr, "hostel call: cannot open %s: %s\n", path,
			strerror(errno));
		return HOSTEL_EXIT_INPUT;
	}
	buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);
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
	if (!buf || ferror(f)) {
		fprintf(stderr, "hostel call: cannot read %s%s\n",
			in ? "standard input" : path,
			buf ? "" : ": out of memory");
		free(buf);
		if (!in)
			fclose(f);
		return HOSTEL_EXIT_INPUT;
	}
	if (!in)
		fclose(f);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/*
 * Send a file's raw bytes as an upload (io.hostel.Call.Upload), one
 * chunk at a time; its id in id.  0, or an exit code after saying why.
 */
static int upload_file(struct varlink_client *c, const char *path, char *id,
		       size_t idlen)
{
	bool in = !strcmp(path, "-");
	FILE *f = in ? stdin : fopen(path, "rb");
	struct varlink_reply reply = {0};
	uint8_t *buf;
	bool first = true;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "hostel call: cannot open %s: %s\n", path,
			strerror(errno));
		return HOSTEL_EXIT_INPUT;
	}
	buf = malloc(CALL_UPLOAD_CHUNK);
	if (!buf) {
		fprintf(stderr, "hostel call: out of memory\n");
		rc = HOSTEL_EXIT_FAILURE;
	}
	id[0] = '\0';
	while (!rc) {
		size_t n = fread(buf, 1, CALL_UPLOAD_CHUNK, f);
		const char *got;
		char *b64;
		json_t *params;

		if (ferror(f)) {
			fprintf(stderr, "hostel call: cannot read %s: %s\n",
				path, strerror(errno));
			rc = HOSTEL_EXIT_INPUT;
			break;
		}
		if (n == 0 && !first)
			break;
		b64 = value_base64_encode(buf, n);
		params = b64 ? json_pack("{ss,ss*}", "data", b64, "uploadId",
					 first ? NULL : id)
			     : NULL;
		free(b64);
		if (!params) {
			fprintf(stderr, "hostel call: out of memory\n");
			rc = HOSTEL_EXIT_FAILURE;
			break;
		}
		rc = daemon_client_call("call", c, "io.hostel.Call.Upload",
					params, 0, &reply);
		if (!rc && reply.error)
			rc = daemon_client_report("call", &reply);
		got = json_string_value(
			json_object_get(reply.parameters, "uploadId"));
		if (!rc && (!got || strlen(got) >= idlen)) {
			fprintf(stderr,
				"hostel call: invalid reply from hosteld: "
				"Upload without an uploadId\n");
			rc = HOSTEL_EXIT_PROTOCOL;
		}
		if (!rc)
			snprintf(id, idlen, "%s", got);
		varlink_reply_clear(&reply);
		first = false;
		if (n < CALL_UPLOAD_CHUNK && feof(f))
			break;
	}
	free(buf);
	if (!in)
		fclose(f);
	return rc;
}

/*
 * The call timed out with its id known: cancel it (on a connection of
 * its own: the first is busy with the call) or say it runs on.
 */
static int timed_out(const char *socket_opt, const char *id, int timeout,
		     bool cancel)
{
	struct varlink_client *c = NULL;
	struct varlink_reply reply = {0};
	int rc;

	if (!cancel) {
		fprintf(stderr,
			"hostel call: timed out after %d ms: call %s is still "
			"running (`hostel cancel %s` stops it; `hostel "
			"history %s` shows its end)\n",
			timeout, id, id, id);
		return HOSTEL_EXIT_TIMEOUT;
	}
	rc = daemon_client_open("call", socket_opt, DAEMON_CLIENT_TIMEOUT_MS,
				&c);
	if (!rc)
		rc = daemon_client_call("call", c, "io.hostel.Call.Cancel",
					json_pack("{ss}", "callId", id), 0,
					&reply);
	if (rc) {
		fprintf(stderr,
			"hostel call: timed out after %d ms: call %s could "
			"not be cancelled; it may still be running\n",
			timeout, id);
	} else if (reply.error &&
		   !strcmp(reply.error, "io.hostel.Call.CallNotFound")) {
		fprintf(stderr,
			"hostel call: timed out after %d ms: call %s ended "
			"meanwhile (`hostel history %s` shows how)\n",
			timeout, id, id);
	} else if (reply.error) {
		daemon_client_report("call", &reply);
		fprintf(stderr,
			"hostel call: timed out after %d ms: call %s could "
			"not be cancelled; it may still be running\n",
			timeout, id);
	} else {
		fprintf(stderr,
			"hostel call: timed out after %d ms: call %s "
			"cancelled at the client's request (it was %s)\n",
			timeout, id,
			json_string_value(
				json_object_get(reply.parameters, "state"))
				?: "in flight");
	}
	varlink_reply_clear(&reply);
	varlink_client_free(c);
	return HOSTEL_EXIT_TIMEOUT;
}

/* Print (or write to out) a final reply's result as the mode asks. */
static void print_result(json_t *p, bool json, FILE *out)
{
	/* the result travels as {"value": V} (hostel-protocol(7)) */
	json_t *result = json_object_get(json_object_get(p, "result"), "value");
	json_t *wave = json_object_get(p, "resultWave");

	if (json) {
		char *text = json_dumps(result, JSON_COMPACT | JSON_ENCODE_ANY);

		fprintf(out, "%s\n", text ? text : "null");
		free(text);
	} else if (json_is_string(wave)) {
		fprintf(out, "%s\n", json_string_value(wave));
	} else if (result && !json_is_null(result)) {
		/* Left out to fit the message bound: show the JSON. */
		char *text = json_dumps(result, JSON_COMPACT | JSON_ENCODE_ANY);

		fprintf(stderr, "hostel call: the reply is too large to "
				"carry the result's WAVE text too; the "
				"result as JSON:\n");
		fprintf(out, "%s\n", text ? text : "null");
		free(text);
	}
}

/* Decode a result chunk and write it; 0, or an exit code. */
static int write_chunk(json_t *p, FILE *out, const char *path)
{
	json_t *chunk = json_object_get(p, "chunk");
	uint8_t *bytes = NULL;
	size_t n = 0;
	int rc;

	if (!json_is_string(chunk) ||
	    (rc = value_base64_decode(json_string_value(chunk),
				      json_string_length(chunk), &bytes, &n))) {
		fprintf(stderr, "hostel call: invalid reply from hosteld: a "
				"result chunk that is not base64\n");
		return HOSTEL_EXIT_PROTOCOL;
	}
	if (n && fwrite(bytes, 1, n, out) != n) {
		fprintf(stderr, "hostel call: cannot write %s: %s\n", path,
			strerror(errno));
		free(bytes);
		return HOSTEL_EXIT_INPUT;
	}
	free(bytes);
	return 0;
}

struct call_opts {
	bool json, cancel_on_timeout;
	int timeout; /* -1: not given */
	long long deadline;
	const char *socket, *args_file, *result_file;
	const char *arg_names[CALL_ARG_FILES_MAX];
	const char *arg_paths[CALL_ARG_FILES_MAX];
	int narg_files;
};

/*
 * Send the Invoke (with "more") and read its replies to the end.  0, or
 * an exit code after saying why.
 */
static int run_call(struct varlink_client *client, const struct call_opts *o,
		    json_t *params, FILE *out)
{
	struct varlink_reply reply = {0};
	json_t *msg = varlink_call_new("io.hostel.Call.Invoke", params,
				       VARLINK_CALL_MORE);
	long long start = now_ms();
	char id[64] = "";
	int rc;

	rc = msg ? varlink_client_send(client, msg) : -ENOMEM;
	json_decref(msg);
	while (rc == 0) {
		long long left = o->timeout - (now_ms() - start);

		if (o->timeout >= 0)
			varlink_client_set_timeout(client,
						   left > 0 ? (int)left : 0);
		else
			varlink_client_set_timeout(
				client, id[0] ? -1 : DAEMON_CLIENT_TIMEOUT_MS);
		rc = varlink_client_recv(client, &reply);
		if (rc)
			break;
		if (reply.error) {
			rc = daemon_client_report("call", &reply);
			varlink_reply_clear(&reply);
			return rc;
		}
		if (!id[0]) {
			const char *got = json_string_value(
				json_object_get(reply.parameters, "callId"));

			if (got && strlen(got) < sizeof(id))
				snprintf(id, sizeof(id), "%s", got);
		}
		if (!reply.continues)
			break;
		if (o->result_file &&
		    !strcmp(json_string_value(json_object_get(
				    reply.parameters, "state"))
				    ?: "",
			    "chunk")) {
			rc = write_chunk(reply.parameters, out,
					 o->result_file);
			if (rc) {
				varlink_reply_clear(&reply);
				return rc;
			}
		}
		varlink_reply_clear(&reply);
	}
	if (rc == -ETIMEDOUT && id[0])
		return timed_out(o->socket, id, o->timeout,
				 o->cancel_on_timeout);
	if (rc == -EBADMSG) {
		fprintf(stderr, "hostel call: invalid reply from hosteld: %s\n",
			varlink_client_fault(client));
		return HOSTEL_EXIT_PROTOCOL;
	}
	if (rc == -EMSGSIZE) {
		fprintf(stderr,
			"hostel call: hosteld's reply is longer than the %u "
			"bytes a message may have\n",
			VARLINK_MESSAGE_MAX);
		return HOSTEL_EXIT_PROTOCOL;
	}
	if (rc) {
		fprintf(stderr, "hostel call: hosteld did not answer: %s\n",
			strerror(-rc));
		return HOSTEL_EXIT_UNAVAILABLE;
	}
	/* chunked: the result went to the file; else print it */
	if (!json_object_get(reply.parameters, "resultBytes"))
		print_result(reply.parameters, o->json, out);
	varlink_reply_clear(&reply);
	if (out != stdout && fflush(out)) {
		fprintf(stderr, "hostel call: cannot write %s: %s\n",
			o->result_file, strerror(errno));
		return HOSTEL_EXIT_INPUT;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hostel call [OPTIONS] SERVICE 'EXPORT(ARGS)'|-\n"
		"       hostel call [OPTIONS] --args-file FILE SERVICE\n"
		"       hostel call --json [OPTIONS] SERVICE EXPORT "
		"[JSON-ARGS|-]\n"
		"options: --timeout MS [--cancel-on-timeout] --deadline MS\n"
		"         --args-file FILE|- --arg-file NAME=FILE "
		"--result-file FILE|-\n");
}

/* A count of milliseconds for option `name`; -1 after saying why. */
static long long ms_arg(const char *name, const char *v)
{
	char *end;
	long long n;

	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || end == v || *end || n < 0 || n > 0x7fffffff) {
		fprintf(stderr,
			"hostel call: %s takes milliseconds (0 to "
			"2147483647), not '%s'\n",
			name, v);
		return -1;
	}
	return n;
}

int cmd_call(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"json", no_argument, NULL, 'j'},
		{"timeout", required_argument, NULL, 't'},
		{"cancel-on-timeout", no_argument, NULL, 'C'},
		{"deadline", required_argument, NULL, 'd'},
		{"args-file", required_argument, NULL, 'a'},
		{"arg-file", required_argument, NULL, 'f'},
		{"result-file", required_argument, NULL, 'r'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct call_opts o = {.timeout = -1, .deadline = -1};
	struct varlink_client *client = NULL;
	json_t *params, *uploads = NULL;
	const char *text_path = NULL, *eq;
	FILE *out = stdout;
	char *in = NULL;
	size_t in_len = 0;
	int c, rc, nargs, stdin_users = 0;
	long long n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = true;
			break;
		case 't':
			n = ms_arg("--timeout", optarg);
			if (n < 0)
				return HOSTEL_EXIT_USAGE;
			o.timeout = (int)n;
			break;
		case 'C':
			o.cancel_on_timeout = true;
			break;
		case 'd':
			o.deadline = ms_arg("--deadline", optarg);
			if (o.deadline < 0)
				return HOSTEL_EXIT_USAGE;
			break;
		case 'a':
			o.args_file = optarg;
			break;
		case 'f':
			eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !eq[1]) {
				fprintf(stderr,
					"hostel call: --arg-file takes "
					"NAME=FILE, not '%s'\n",
					optarg);
				return HOSTEL_EXIT_USAGE;
			}
			if (o.narg_files == CALL_ARG_FILES_MAX) {
				fprintf(stderr,
					"hostel call: at most %d --arg-file "
					"options\n",
					CALL_ARG_FILES_MAX);
				return HOSTEL_EXIT_USAGE;
			}
			/* NAME ends at '=': cut it there */
			*(char *)eq = '\0';
			o.arg_names[o.narg_files] = optarg;
			o.arg_paths[o.narg_files++] = eq + 1;
			stdin_users += !strcmp(eq + 1, "-");
			break;
		case 'r':
			o.result_file = optarg;
			break;
		case 's':
			o.socket = optarg;
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
	if (o.json ? nargs < 2 || nargs > (o.args_file ? 2 : 3)
		   : nargs != (o.args_file ? 1 : 2)) {
		usage(stderr);
		return HOSTEL_EXIT_USAGE;
	}
	if (o.cancel_on_timeout && o.timeout < 0) {
		fprintf(stderr,
			"hostel call: --cancel-on-timeout needs --timeout\n");
		return HOSTEL_EXIT_USAGE;
	}
	if (o.args_file)
		text_path = o.args_file;
	else if (nargs == (o.json ? 3 : 2) && !strcmp(argv[argc - 1], "-"))
		text_path = "-";
	stdin_users += text_path && !strcmp(text_path, "-");
	if (stdin_users > 1) {
		fprintf(stderr, "hostel call: standard input can be read "
				"for one thing only\n");
		return HOSTEL_EXIT_USAGE;
	}
	if (text_path) {
		rc = read_text(text_path, &in, &in_len);
		if (rc)
			return rc;
	}
	if (o.json) {
		json_t *args = NULL;
		json_error_t jerr;

		if (in || nargs == 3) {
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
		const char *t = in ? in : argv[optind + 1];
		size_t tlen = in ? in_len : strlen(t);

		/* with --arg-file, a bare export name: no other arguments */
		if (o.narg_files && !memchr(t, '(', tlen))
			params = json_pack("{ss,ss%}", "service", argv[optind],
					   "export", t, tlen);
		else
			params = json_pack("{ss,ss%}", "service", argv[optind],
					   "wave", t, tlen);
		free(in);
	}
	if (!params) {
		fprintf(stderr, "hostel call: out of memory, or the WAVE text "
				"is not UTF-8\n");
		return HOSTEL_EXIT_USAGE;
	}
	if (o.deadline >= 0 &&
	    json_object_set_new(params, "deadlineMs",
				json_integer((json_int_t)o.deadline)))
		goto nomem;
	if (o.result_file) {
		if (json_object_set_new(params, "chunkedResult", json_true()))
			goto nomem;
		if (strcmp(o.result_file, "-")) {
			out = fopen(o.result_file, "wb");
			if (!out) {
				fprintf(stderr,
					"hostel call: cannot create %s: %s\n",
					o.result_file, strerror(errno));
				json_decref(params);
				return HOSTEL_EXIT_INPUT;
			}
		}
	}
	rc = daemon_client_open("call", o.socket,
				o.timeout >= 0 ? o.timeout
					       : DAEMON_CLIENT_TIMEOUT_MS,
				&client);
	if (!rc && o.narg_files) {
		uploads = json_object();
		if (!uploads ||
		    json_object_set_new(params, "uploads", json_incref(uploads)))
			rc = HOSTEL_EXIT_FAILURE;
		/* uploads take time of their own: not the call's timeout */
		if (!rc)
			varlink_client_set_timeout(client,
						   DAEMON_CLIENT_TIMEOUT_MS);
		for (int i = 0; !rc && i < o.narg_files; i++) {
			char id[64];

			rc = upload_file(client, o.arg_paths[i], id,
					 sizeof(id));
			if (!rc && json_object_set_new(uploads, o.arg_names[i],
						       json_string(id)))
				rc = HOSTEL_EXIT_FAILURE;
		}
		json_decref(uploads);
	}
	if (!rc)
		rc = run_call(client, &o, params, out);
	else
		json_decref(params);
	varlink_client_free(client);
	if (out != stdout) {
		if (fclose(out) && !rc) {
			fprintf(stderr, "hostel call: cannot write %s: %s\n",
				o.result_file, strerror(errno));
			rc = HOSTEL_EXIT_INPUT;
		}
		/* no whole result: no file (a partial one would mislead) */
		if (rc)
			unlink(o.result_file);
	}
	return rc;
nomem:
	fprintf(stderr, "hostel call: out of memory\n");
	json_decref(params);
	return HOSTEL_EXIT_FAILURE;
}

int cmd_cancel(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct varlink_client *client = NULL;
	struct varlink_reply reply = {0};
	const char *socket_opt = NULL, *state;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			socket_opt = optarg;
			break;
		case 'h':
			printf("usage: hostel cancel CALL-ID\n");
			return HOSTEL_EXIT_OK;
		default:
			fprintf(stderr, "usage: hostel cancel CALL-ID\n");
			return HOSTEL_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "usage: hostel cancel CALL-ID\n");
		return HOSTEL_EXIT_USAGE;
	}
	rc = daemon_client_open("cancel", socket_opt, DAEMON_CLIENT_TIMEOUT_MS,
				&client);
	if (!rc)
		rc = daemon_client_call(
			"cancel", client, "io.hostel.Call.Cancel",
			json_pack("{ss}", "callId", argv[optind]), 0, &reply);
	if (!rc && reply.error)
		rc = daemon_client_report("cancel", &reply);
	if (!rc) {
		state = json_string_value(
			json_object_get(reply.parameters, "state"));
		if (state && !strcmp(state, "queued"))
			printf("call %s cancelled: it was queued, nothing of "
			       "it ran\n",
			       argv[optind]);
		else
			printf("call %s cancelled while in flight (had its "
			       "guest code begun, its store is recreated)\n",
			       argv[optind]);
	}
	varlink_reply_clear(&reply);
	varlink_client_free(client);
	return rc;
}
