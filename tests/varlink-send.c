/*
 * varlink-send.c - test helper: talk raw varlink to a socket, including
 * the broken traffic a real client never sends.
 *
 *   varlink-send [-t TIMEOUT_MS] SOCKET ACTION...
 *
 * Actions run in order on one connection:
 *   call JSON          send JSON as a message, print the reply
 *   send JSON          send JSON as a message (NUL appended)
 *   raw TEXT           send TEXT without an added NUL; "\0" in TEXT
 *                      stands for a NUL byte and "\\" for a backslash
 *   send-file PATH     send PATH's bytes as they are, then a NUL (a
 *                      message too large for the command line)
 *   recv               read one message and print it
 *   junk N             send N bytes of 'x', no NUL (stops quietly if the
 *                      peer hangs up)
 *   flood N JSON       send JSON N times without reading replies (stops
 *                      quietly if the peer hangs up)
 *   wait-hup           without reading, wait until the peer hangs up
 *   expect-silence MS  fail if anything arrives within MS milliseconds
 *   expect-close       print remaining messages; fail unless the peer
 *                      closes the connection
 *   describe IFACE     GetInterfaceDescription, check the text with the
 *                      IDL checker, print "IFACE: N methods, N errors,
 *                      N types"
 *   shutdown           close the writing side (half-close)
 *
 * Messages are printed one per line.  Exit status: 0 when every action
 * did what it says, 1 otherwise (with the reason on stderr), 2 for usage.
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/client.h"
#include "ipc/idl.h"

static int fail(const char *what, int rc)
{
	fprintf(stderr, "varlink-send: %s: %s\n", what, strerror(-rc));
	return 1;
}

static int print_next(struct varlink_client *c)
{
	const char *msg;
	size_t len;
	int rc = varlink_client_recv_raw(c, &msg, &len);

	if (rc)
		return rc;
	printf("%s\n", msg);
	fflush(stdout);
	return 0;
}

/* Send a message given as JSON text (checked locally). */
static int send_json(struct varlink_client *c, const char *text)
{
	json_error_t jerr;
	json_t *msg = json_loads(text, 0, &jerr);
	int rc;

	if (!msg) {
		fprintf(stderr, "varlink-send: bad JSON argument: %s\n",
			jerr.text);
		exit(2);
	}
	rc = varlink_client_send(c, msg);
	json_decref(msg);
	return rc;
}

/* raw TEXT, with "\0" for NUL and "\\" for a backslash. */
static int send_raw(struct varlink_client *c, const char *text)
{
	size_t n = 0, len = strlen(text);
	char *buf = malloc(len + 1);
	int rc;

	if (!buf)
		return fail("raw", -ENOMEM);
	for (const char *p = text; *p; p++) {
		if (p[0] == '\\' && p[1] == '0') {
			buf[n++] = '\0';
			p++;
		} else if (p[0] == '\\' && p[1] == '\\') {
			buf[n++] = '\\';
			p++;
		} else {
			buf[n++] = *p;
		}
	}
	rc = varlink_client_write(c, buf, n);
	free(buf);
	return rc ? fail("raw", rc) : 0;
}

static int send_file(struct varlink_client *c, const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	int rc;

	if (!f || !buf) {
		free(buf);
		if (f)
			fclose(f);
		return fail(path, f ? -ENOMEM : -errno);
	}
	for (;;) {
		size_t n = fread(buf + len, 1, cap - len, f);

		len += n;
		if (len < cap)
			break;
		cap *= 2;
		{
			char *p = realloc(buf, cap);

			if (!p) {
				free(buf);
				fclose(f);
				return fail(path, -ENOMEM);
			}
			buf = p;
		}
	}
	rc = ferror(f) ? -EIO : 0;
	fclose(f);
	buf[len++] = '\0'; /* len < cap: the read stopped short */
	if (!rc)
		rc = varlink_client_write(c, buf, len);
	free(buf);
	return rc ? fail("send-file", rc) : 0;
}

static bool hung_up(int rc)
{
	return rc == -ECONNRESET || rc == -EPIPE;
}

static int junk(struct varlink_client *c, size_t n)
{
	char buf[65536];
	size_t sent = 0;

	memset(buf, 'x', sizeof(buf));
	while (sent < n) {
		size_t k = n - sent < sizeof(buf) ? n - sent : sizeof(buf);
		int rc = varlink_client_write(c, buf, k);

		if (hung_up(rc)) {
			fprintf(stderr,
				"varlink-send: junk: peer hung up after %zu "
				"bytes\n",
				sent);
			return 0;
		}
		if (rc)
			return fail("junk", rc);
		sent += k;
	}
	return 0;
}

static int flood(struct varlink_client *c, long n, const char *text)
{
	for (long i = 0; i < n; i++) {
		int rc = send_json(c, text);

		if (hung_up(rc)) {
			fprintf(stderr,
				"varlink-send: flood: peer hung up after %ld "
				"messages\n",
				i);
			return 0;
		}
		if (rc)
			return fail("flood", rc);
	}
	return 0;
}

static int wait_hup(struct varlink_client *c, int timeout_ms)
{
	struct pollfd p = {.fd = varlink_client_fd(c), .events = POLLRDHUP};
	int n = poll(&p, 1, timeout_ms);

	if (n > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)))
		return 0;
	fprintf(stderr, "varlink-send: wait-hup: the peer did not hang up\n");
	return 1;
}

static int expect_silence(struct varlink_client *c, int ms)
{
	struct pollfd p = {.fd = varlink_client_fd(c), .events = POLLIN};
	int n = poll(&p, 1, ms);

	if (n == 0)
		return 0;
	fprintf(stderr, "varlink-send: expect-silence: data arrived\n");
	print_next(c);
	return 1;
}

static int expect_close(struct varlink_client *c)
{
	for (;;) {
		int rc = print_next(c);

		if (hung_up(rc))
			return 0;
		if (rc)
			return fail("expect-close", rc);
	}
}

struct counts {
	char name[128];
	int methods, errors, types;
};

static int count_interface(void *ctx, const char *name, size_t len)
{
	struct counts *k = ctx;

	snprintf(k->name, sizeof(k->name), "%.*s", (int)len, name);
	return 0;
}

static int count_member(void *ctx, enum idl_member_kind kind, const char *name,
			size_t len)
{
	struct counts *k = ctx;

	if (kind == IDL_METHOD)
		k->methods++;
	else if (kind == IDL_ERROR)
		k->errors++;
	else
		k->types++;
	return 0;
}

static int describe(struct varlink_client *c, const char *iface)
{
	static const struct idl_visitor v = {count_interface, count_member};
	struct varlink_reply reply;
	struct counts k = {{0}, 0, 0, 0};
	struct idl_error err;
	const char *text;
	int rc = varlink_client_call(
		c, "org.varlink.service.GetInterfaceDescription",
		json_pack("{ss}", "interface", iface), &reply);

	if (rc)
		return fail("describe", rc);
	text = json_string_value(
		json_object_get(reply.parameters, "description"));
	if (reply.error || !text) {
		fprintf(stderr, "varlink-send: describe %s: %s\n", iface,
			reply.error ? reply.error : "no description");
		varlink_reply_clear(&reply);
		return 1;
	}
	rc = idl_parse(text, strlen(text), &v, &k, &err);
	if (rc == 0 && strcmp(k.name, iface))
		fprintf(stderr, "varlink-send: describe %s: text declares %s\n",
			iface, k.name);
	else if (rc)
		fprintf(stderr, "varlink-send: describe %s: %u:%u: %s\n", iface,
			err.line, err.column, err.message);
	else
		printf("%s: %d methods, %d errors, %d types\n", iface,
		       k.methods, k.errors, k.types);
	varlink_reply_clear(&reply);
	return rc || strcmp(k.name, iface) ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: varlink-send [-t TIMEOUT_MS] SOCKET "
			"ACTION...\n(see tests/varlink-send.c)\n");
	exit(2);
}

static const char *arg(char **argv, int *i, int argc)
{
	if (*i + 1 >= argc)
		usage();
	return argv[++*i];
}

int main(int argc, char **argv)
{
	struct varlink_client *c;
	int timeout_ms = 5000;
	int i = 1, rc = 0;

	if (argc > 2 && !strcmp(argv[1], "-t")) {
		timeout_ms = atoi(argv[2]);
		i = 3;
	}
	if (i >= argc)
		usage();
	rc = varlink_client_connect(argv[i], timeout_ms, &c);
	if (rc)
		return fail(argv[i], rc);
	for (i++; i < argc && rc == 0; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "call")) {
			rc = send_json(c, arg(argv, &i, argc));
			if (rc == 0)
				rc = print_next(c);
			if (rc)
				rc = fail("call", rc);
		} else if (!strcmp(a, "send")) {
			rc = send_json(c, arg(argv, &i, argc));
			if (rc)
				rc = fail("send", rc);
		} else if (!strcmp(a, "raw")) {
			rc = send_raw(c, arg(argv, &i, argc));
		} else if (!strcmp(a, "send-file")) {
			rc = send_file(c, arg(argv, &i, argc));
		} else if (!strcmp(a, "recv")) {
			rc = print_next(c);
			if (rc)
				rc = fail("recv", rc);
		} else if (!strcmp(a, "junk")) {
			rc = junk(c, strtoul(arg(argv, &i, argc), NULL, 10));
		} else if (!strcmp(a, "flood")) {
			long n = strtol(arg(argv, &i, argc), NULL, 10);

			rc = flood(c, n, arg(argv, &i, argc));
		} else if (!strcmp(a, "wait-hup")) {
			rc = wait_hup(c, timeout_ms);
		} else if (!strcmp(a, "expect-silence")) {
			rc = expect_silence(c, atoi(arg(argv, &i, argc)));
		} else if (!strcmp(a, "expect-close")) {
			rc = expect_close(c);
		} else if (!strcmp(a, "describe")) {
			rc = describe(c, arg(argv, &i, argc));
		} else if (!strcmp(a, "shutdown")) {
			if (shutdown(varlink_client_fd(c), SHUT_WR) < 0)
				rc = fail("shutdown", -errno);
		} else {
			fprintf(stderr, "varlink-send: unknown action '%s'\n",
				a);
			usage();
		}
	}
	varlink_client_free(c);
	return rc ? 1 : 0;
}
