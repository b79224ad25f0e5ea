/*
 * idle-conns.c - test helper: hold many idle connections to hosteld,
 * then prove every one of them is still served.
 *
 *   idle-conns SOCKET N
 *
 * Opens N connections and sends nothing on them; prints "open N" and
 * waits until its standard input reaches end of file (the test makes
 * other calls meanwhile).  Then it calls io.hostel.Daemon.Status on each
 * connection and prints "served N of N", the number reported by the last
 * Status as "connections M", and exits 0 when all N answered, 1
 * otherwise.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/client.h"

int main(int argc, char **argv)
{
	struct varlink_client **c;
	long n, opened = 0, served = 0;
	json_int_t seen = -1;
	char buf[64];

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: idle-conns SOCKET N\n");
		return 2;
	}
	c = calloc((size_t)n, sizeof(*c));
	if (!c)
		return 1;
	for (; opened < n; opened++) {
		int rc = varlink_client_connect(argv[1], 5000, &c[opened]);

		if (rc) {
			fprintf(stderr, "idle-conns: connection %ld: %s\n",
				opened + 1, strerror(-rc));
			break;
		}
	}
	printf("open %ld\n", opened);
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	for (long i = 0; i < opened; i++) {
		struct varlink_reply r;

		if (varlink_client_call(c[i], "io.hostel.Daemon.Status", NULL,
					&r) == 0) {
			if (!r.error) {
				served++;
				seen = json_integer_value(json_object_get(
					r.parameters, "connections"));
			}
			varlink_reply_clear(&r);
		}
		varlink_client_free(c[i]);
	}
	free(c);
	printf("served %ld of %ld\nconnections %lld\n", served, n,
	       (long long)seen);
	return served == n ? 0 : 1;
}
