/*
 * idl-conform.c - every reply conforms to the interface description
 * (issue 20 point 7).  Sends each CALL (a whole varlink call message, as
 * JSON, "more" allowed) to hosteld on SOCKET, one after another on one
 * connection, reads its replies up to the last, and checks each against
 * the IDL the daemon serves (ipc/idl-check.h): a reply against its
 * method's output, an error against that error's parameters; the call
 * itself against the method's input (a test that sends a malformed call
 * on purpose marks it with "#bad " before the JSON).  A CALL "@N"
 * pauses N ms.
 *
 *   idl-conform SOCKET CALL...
 *
 * Output is TAP-like, one line per reply; closes with "N passed, N
 * failed".  Exit 0 when all conform, 1 otherwise, 2 on a bad command
 * line or a lost connection.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "ipc/client.h"
#include "ipc/idl-check.h"
#include "ipc/idl.h"

static int n, failed;

static void result(bool ok, const char *what, const char *why)
{
	n++;
	if (ok) {
		printf("ok %d - %s\n", n, what);
	} else {
		failed++;
		printf("not ok %d - %s: %s\n", n, what, why);
	}
}

/* Check `params` against member (qualified) of its interface. */
static void check(enum idl_check_what what, const char *qualified,
		  const json_t *params, const char *label)
{
	const struct idl_interface *iface = idl_find_for_member(qualified);
	const char *member = strrchr(qualified, '.');
	char why[512], desc[600];
	int rc;

	snprintf(desc, sizeof(desc), "%s %s conforms", qualified, label);
	if (!iface || !member) {
		result(false, desc, "no interface of that name is served");
		return;
	}
	rc = idl_check(iface->text, what, member + 1, params, why, sizeof(why));
	result(rc == 0, desc, why);
}

static int one_call(struct varlink_client *c, const char *arg)
{
	bool bad = strncmp(arg, "#bad ", 5) == 0;
	json_t *msg = json_loads(bad ? arg + 5 : arg, 0, NULL);
	const char *m = json_string_value(json_object_get(msg, "method"));
	bool more = json_is_true(json_object_get(msg, "more"));
	char method[256];
	int rc;

	if (!m || strlen(m) >= sizeof(method) || !strchr(m, '.')) {
		fprintf(stderr, "idl-conform: not a call: %s\n", arg);
		json_decref(msg);
		return 2;
	}
	/* the message goes before its replies come */
	snprintf(method, sizeof(method), "%s", m);
	if (!bad)
		check(IDL_CHECK_IN, method, json_object_get(msg, "parameters"),
		      "call");
	rc = varlink_client_send(c, msg);
	json_decref(msg);
	while (rc == 0) {
		struct varlink_reply r;
		char label[64];

		if ((rc = varlink_client_recv(c, &r)))
			break;
		if (r.error) {
			snprintf(label, sizeof(label), "error of %.40s",
				 strrchr(method, '.') + 1);
			check(IDL_CHECK_ERROR, r.error, r.parameters, label);
		} else {
			check(IDL_CHECK_OUT, method, r.parameters,
			      r.continues ? "reply (continues)" : "reply");
		}
		more = more && r.continues && !r.error;
		varlink_reply_clear(&r);
		if (!more)
			return 0;
	}
	fprintf(stderr, "idl-conform: %s: connection lost (%s)\n", method,
		strerror(-rc));
	return 2;
}

int main(int argc, char **argv)
{
	struct varlink_client *c;
	int rc = 0;

	/* Line by line: a follower is stopped by a signal. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: idl-conform SOCKET CALL...\n");
		return 2;
	}
	if (varlink_client_connect(argv[1], 10000, &c)) {
		fprintf(stderr, "idl-conform: cannot connect to %s\n", argv[1]);
		return 2;
	}
	for (int i = 2; i < argc && rc == 0; i++) {
		if (argv[i][0] == '@') {
			long ms = strtol(argv[i] + 1, NULL, 10);
			struct timespec ts = {ms / 1000, ms % 1000 * 1000000};

			nanosleep(&ts, NULL);
			continue;
		}
		rc = one_call(c, argv[i]);
	}
	varlink_client_free(c);
	printf("%d passed, %d failed\n", n - failed, failed);
	return rc ? rc : failed ? 1 : 0;
}
