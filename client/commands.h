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
	HOSTEL_EXIT_FAILURE =
		1, /* the operation ran and failed (a test, a trap) */
	HOSTEL_EXIT_USAGE = 2,	   /* bad command line */
	HOSTEL_EXIT_INPUT = 3,	   /* unreadable or invalid input file */
	HOSTEL_EXIT_NOT_FOUND = 4, /* no such service, component, export */
	HOSTEL_EXIT_CONFLICT = 5,  /* exists, in use, not running */
	HOSTEL_EXIT_TOO_LARGE = 6, /* ValueTooLarge: beyond the message bound */
	HOSTEL_EXIT_TIMEOUT = 7,   /* `call --timeout` passed (call.c) */
	HOSTEL_EXIT_UNAVAILABLE = 69, /* hosteld unreachable (EX_UNAVAILABLE) */
	HOSTEL_EXIT_NOPERM = 77,      /* PermissionDenied (EX_NOPERM) */
	HOSTEL_EXIT_PROTOCOL =
		76, /* hosteld's reply was invalid (EX_PROTOCOL) */
};

int cmd_wast(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_varlink(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_deploy(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_call(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_start(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_rm(int argc, char **argv);
/* `hostel inspect NAME` when NAME is no file: ask hosteld. */
int cmd_inspect_service(const char *name);

#endif
