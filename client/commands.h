/*
 * commands.h - the subcommands of the `hostel` client.
 *
 * Each subcommand is a function taking the arguments after its name
 * (argv[0] is the subcommand name) and returning the process exit code.
 * Offline subcommands (run, wast, inspect) use the runtime directly and
 * need no daemon.
 */
#ifndef HOSTEL_CLIENT_COMMANDS_H
#define HOSTEL_CLIENT_COMMANDS_H

/* Exit codes shared by every subcommand. */
enum {
	HOSTEL_EXIT_OK = 0,
	HOSTEL_EXIT_FAILURE = 1, /* the operation ran and failed (a test, a trap) */
	HOSTEL_EXIT_USAGE = 2,   /* bad command line */
	HOSTEL_EXIT_INPUT = 3,   /* unreadable or invalid input file */
	HOSTEL_EXIT_UNAVAILABLE = 69, /* hosteld unreachable (EX_UNAVAILABLE) */
	HOSTEL_EXIT_PROTOCOL = 76,    /* hosteld's reply was invalid (EX_PROTOCOL) */
};

int cmd_wast(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_logs(int argc, char **argv);

#endif
