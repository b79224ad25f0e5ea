/*
 * daemon-client.c - connection, calls and error reporting shared by the
 * daemon subcommands (see daemon-client.h).
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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"
#include "client/daemon-client.h"
#include "ipc/socket-path.h"

int daemon_client_open(const char *prog, const char *socket_opt, int timeout_ms,
		       struct varlink_client **out)
{
	const char *env = getenv("HOSTEL_SOCKET");
	char path[PATH_MAX];
	int rc;

	if (socket_opt || (env && *env)) {
		snprintf(path, sizeof(path), "%s",
			 socket_opt ? socket_opt : env);
	} else {
		rc = hostel_default_socket_path(path, sizeof(path));
		if (rc) {
			fprintf(stderr,
				"hostel %s: %s; use --socket PATH or "
				"HOSTEL_SOCKET\n",
				prog,
				rc == -ENOENT ? "no default socket "
						"(XDG_RUNTIME_DIR is unset)"
					      : "the default socket path is "
						"too long");
			return HOSTEL_EXIT_UNAVAILABLE;
		}
	}
	rc = varlink_client_connect(path, timeout_ms, out);
	if (rc) {
		fprintf(stderr,
			"hostel %s: cannot reach hosteld at %s: %s (is hosteld "
			"running?)\n",
			prog, path, strerror(-rc));
		return HOSTEL_EXIT_UNAVAILABLE;
	}
	return 0;
}

int daemon_client_call(const char *prog, struct varlink_client *c,
		       const char *method, json_t *parameters, unsigned flags,
		       struct varlink_reply *reply)
{
	json_t *msg = varlink_call_new(method, parameters, flags);
	int rc = msg ? varlink_client_send(c, msg) : -ENOMEM;

	json_decref(msg);
	memset(reply, 0, sizeof(*reply));
	while (rc == 0) {
		rc = varlink_client_recv(c, reply);
		if (rc || !reply->continues || reply->error)
			break;
		varlink_reply_clear(reply);
	}
	if (rc == -EBADMSG) {
		fprintf(stderr, "hostel %s: invalid reply from hosteld: %s\n",
			prog, varlink_client_fault(c));
		return HOSTEL_EXIT_PROTOCOL;
	}
	if (rc == -EMSGSIZE) {
		/* hosteld never sends one (ValueTooLarge instead). */
		fprintf(stderr,
			"hostel %s: hosteld's reply is longer than the %u "
			"bytes "
			"a message may have\n",
			prog, VARLINK_MESSAGE_MAX);
		return HOSTEL_EXIT_PROTOCOL;
	}
	if (rc) {
		fprintf(stderr, "hostel %s: hosteld did not answer: %s\n", prog,
			strerror(-rc));
		return HOSTEL_EXIT_UNAVAILABLE;
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int daemon_client_error_exit(const char *error)
{
	if (ends_with(error, "NotFound") &&
	    !ends_with(error, "MethodNotFound") &&
	    !ends_with(error, "InterfaceNotFound"))
		return HOSTEL_EXIT_NOT_FOUND;
	if (ends_with(error, ".InvalidArguments") ||
	    ends_with(error, ".ExportAmbiguous") ||
	    ends_with(error, ".InvalidParameter") ||
	    ends_with(error, ".InvalidName") ||
	    ends_with(error, ".InvalidConfig"))
		return HOSTEL_EXIT_USAGE;
	if (ends_with(error, ".InvalidComponent"))
		return HOSTEL_EXIT_INPUT;
	if (ends_with(error, ".ServiceExists") ||
	    ends_with(error, ".ComponentInUse") ||
	    ends_with(error, ".NameConflict") ||
	    ends_with(error, ".ServiceManaged") ||
	    ends_with(error, ".ServiceNotRunning"))
		return HOSTEL_EXIT_CONFLICT;
	if (ends_with(error, ".PermissionDenied"))
		return HOSTEL_EXIT_NOPERM;
	if (ends_with(error, ".ValueTooLarge"))
		return HOSTEL_EXIT_TOO_LARGE;
	if (ends_with(error, "Unavailable") ||
	    ends_with(error, "MethodNotFound") ||
	    ends_with(error, "InterfaceNotFound"))
		return HOSTEL_EXIT_UNAVAILABLE;
	return HOSTEL_EXIT_FAILURE;
}

/*
 * ExportNotFound {name, export, candidates, exports} and ExportAmbiguous
 * {name, export, matches, count} in words, the names on one line.
 */
static void report_export(const char *prog, const char *short_name, json_t *p)
{
	bool ambiguous = !strcmp(short_name, "ExportAmbiguous");
	const char *svc = json_string_value(json_object_get(p, "name"));
	const char *exp = json_string_value(json_object_get(p, "export"));
	json_t *list = json_object_get(p, ambiguous ? "matches" : "candidates");
	json_int_t count = json_integer_value(
		json_object_get(p, ambiguous ? "count" : "exports"));
	size_t i;
	json_t *v;

	if (ambiguous)
		fprintf(stderr,
			"hostel %s: ExportAmbiguous: `%s` names "
			"%" JSON_INTEGER_FORMAT " exports of service %s:",
			prog, exp ? exp : "", count, svc ? svc : "");
	else
		fprintf(stderr,
			"hostel %s: ExportNotFound: service %s has no export "
			"`%s`",
			prog, svc ? svc : "", exp ? exp : "");
	if (!ambiguous && json_object_get(p, "exports"))
		fprintf(stderr,
			" (%" JSON_INTEGER_FORMAT " exported function%s)",
			count, count == 1 ? "" : "s");
	if (!ambiguous && json_array_size(list))
		fprintf(stderr, "; did you mean:");
	json_array_foreach(list, i, v)
		fprintf(stderr, "%s %s", i ? "," : "",
			json_string_value(v) ? json_string_value(v) : "?");
	if (ambiguous && (json_int_t)json_array_size(list) < count)
		fprintf(stderr, ", ...");
	fprintf(stderr, "\n");
}

int daemon_client_report(const char *prog, const struct varlink_reply *reply)
{
	const char *short_name = strrchr(reply->error, '.');
	json_t *p = reply->parameters;
	const char *msg = json_string_value(json_object_get(p, "message"));

	if (!msg)
		msg = json_string_value(json_object_get(p, "reason"));
	short_name = short_name ? short_name + 1 : reply->error;
	if (!strcmp(reply->error, HOSTEL_ERROR_VALUE_TOO_LARGE)) {
		const char *value =
			json_string_value(json_object_get(p, "value"));
		const char *bound =
			json_string_value(json_object_get(p, "bound"));
		bool result = value && !strcmp(value, "result");

		/* Which value, its size and the bound, in words. */
		if (bound && !strcmp(bound, "limits.hostBytes"))
			fprintf(stderr,
				"hostel %s: ValueTooLarge: the arguments need "
				"%" JSON_INTEGER_FORMAT " bytes of host "
				"memory as values, more than the service's "
				"limits.hostBytes of %" JSON_INTEGER_FORMAT
				" bytes (nothing ran)\n",
				prog,
				json_integer_value(json_object_get(p, "size")),
				json_integer_value(
					json_object_get(p, "limit")));
		else
			fprintf(stderr,
				"hostel %s: ValueTooLarge: the %s needs a "
				"message of "
				"%" JSON_INTEGER_FORMAT
				" bytes, more than the limit "
				"of %" JSON_INTEGER_FORMAT " bytes%s\n",
				prog, result ? "result" : "call's argument",
				json_integer_value(json_object_get(p, "size")),
				json_integer_value(json_object_get(p, "limit")),
				result ? " (the call ran: its result is in "
					 "the history in a bounded form)"
				       : " (nothing ran)");
	} else if (!strcmp(reply->error, "io.hostel.Call.CallDeadline")) {
		const char *id =
			json_string_value(json_object_get(p, "callId"));

		fprintf(stderr,
			"hostel %s: CallDeadline: call %s: deadline exceeded "
			"(%" JSON_INTEGER_FORMAT " ms) %s\n",
			prog, id ? id : "?",
			json_integer_value(json_object_get(p, "deadlineMs")),
			json_is_true(json_object_get(p, "started"))
				? "while it ran"
				: "before it ran (nothing of it ran)");
	} else if (!strcmp(reply->error, "io.hostel.Call.ExportNotFound") ||
		   !strcmp(reply->error, "io.hostel.Call.ExportAmbiguous")) {
		report_export(prog, short_name, p);
	} else if (msg) {
		fprintf(stderr, "hostel %s: %s: %s\n", prog, short_name, msg);
	} else {
		char *text = json_dumps(p, JSON_COMPACT);

		fprintf(stderr, "hostel %s: %s %s\n", prog, short_name,
			text ? text : "");
		free(text);
	}
	return daemon_client_error_exit(reply->error);
}
