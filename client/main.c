/*
 * main.c - `hostel`, the command-line client: subcommand dispatch.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/commands.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"run", cmd_run, "run a module or component in-process (offline)"},
	{"wast", cmd_wast, "run conformance scripts (JSON form) (offline)"},
	{"inspect", cmd_inspect,
	 "show a binary's imports and exports (offline)"},
	{"status", cmd_status, "show the state of hosteld"},
	{"deploy", cmd_deploy, "add a component and run it as a service"},
	{"ps", cmd_ps, "list services"},
	{"call", cmd_call, "call an export of a service"},
	{"cancel", cmd_cancel, "cancel a call by its id"},
	{"start", cmd_start, "start a service"},
	{"stop", cmd_stop, "stop a service"},
	{"snapshot", cmd_snapshot, "snapshot a service's store now"},
	{"rm", cmd_rm, "remove a service"},
	{"logs", cmd_logs, "print (and follow) hosteld's event history"},
	{"history", cmd_history,
	 "show every event of one call; prune the history now"},
	{"metrics", cmd_metrics, "print hosteld's metrics (OpenMetrics text)"},
	{"top", cmd_top, "show the services' metrics, refreshed each second"},
	{"varlink", cmd_varlink,
	 "call any method of hosteld, print the replies"},
	{NULL, NULL, NULL},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hostel [--version] [--help] [--socket PATH] COMMAND "
		   "[ARGS...]\n\n"
		   "commands:\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\nSee hostel(1).\n");
}

int main(int argc, char **argv)
{
	/* --socket PATH before the command: for every daemon command. */
	if (argc > 2 && !strcmp(argv[1], "--socket")) {
		setenv("HOSTEL_SOCKET", argv[2], 1);
		argc -= 2;
		argv += 2;
	} else if (argc > 1 && !strncmp(argv[1], "--socket=", 9)) {
		setenv("HOSTEL_SOCKET", argv[1] + 9, 1);
		argc--;
		argv++;
	}
	if (argc < 2) {
		usage(stderr);
		return HOSTEL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return HOSTEL_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("hostel %s\n", PACKAGE_VERSION);
		return HOSTEL_EXIT_OK;
	}
	for (const struct command *c = commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	fprintf(stderr, "hostel: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return HOSTEL_EXIT_USAGE;
}
