/*
 * daemon.h - hosteld's state and lifecycle.
 *
 * All of the daemon's state lives in one struct daemon, created by main()
 * and passed to every callback: no global mutable state.  One libevent
 * loop runs everything: the listener, the connections, the signals
 * (SIGTERM/SIGINT: graceful stop; SIGHUP: reload the configuration file)
 * and the watchdog timer.
 *
 * Lifecycle: daemon_init() (settings resolved, socket listening) ->
 * daemon_run() (history database opened and recovered, READY=1, loop
 * until stopped) -> daemon_fini().
 */
#ifndef HOSTEL_DAEMON_DAEMON_H
#define HOSTEL_DAEMON_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "daemon/access.h"
#include "daemon/conffile.h"
#include "daemon/listen.h"
#include "daemon/log.h"

/* How long a graceful stop waits for connections to flush their replies. */
#define DAEMON_STOP_TIMEOUT_SEC 5

/*
 * The loop's event priorities.  Everything runs at DAEMON_PRIO_DEFAULT
 * (libevent's default for a base of two) but the history's end-of-turn
 * commit, which runs first: before the I/O callbacks of the iteration
 * after the turn (daemon/history-commit.c, hist_schedule()).
 */
#define DAEMON_PRIORITIES   2
#define DAEMON_PRIO_FIRST   0
#define DAEMON_PRIO_DEFAULT 1

struct conn;
struct daemon_history;
struct service_registry;

struct daemon_options {
	const char *socket;	 /* --socket, or NULL */
	const char *state_dir;	 /* --state-dir, or NULL */
	const char *config_path; /* --config, or NULL */
	bool foreground;	 /* --foreground */
};

struct daemon {
	struct event_base *base;
	struct log log;

	/* Settings: what the command line set, what the file set. */
	struct config cli;
	struct config file;
	char *config_path; /* absolute, or NULL */
	char *state_dir;   /* effective */
	bool foreground;
	/* Who may do what (daemon/access.h); rebuilt on reload. */
	struct access_policy access;

	struct listen_socket listen;
	struct evconnlistener *listener;

	struct event *ev_sigterm, *ev_sigint, *ev_sighup;
	struct event *ev_watchdog;    /* NULL without a watchdog */
	struct event *ev_stop_timer;  /* bounds a graceful stop */
	struct event *ev_accept_wait; /* re-enables accept after EMFILE */
	uint64_t watchdog_usec;

	struct conn *conns; /* doubly linked list of open connections */
	size_t n_conns;
	/* Bytes all connections' uploads hold (daemon/upload.h). */
	size_t upload_bytes;
	uint64_t next_conn_id;

	/* The event history (daemon/history-hooks.h); NULL until open. */
	struct daemon_history *history;

	/* The services and their live stores (daemon/service.h). */
	struct service_registry *services;

	uint64_t started_ms; /* CLOCK_MONOTONIC */
	/* HOSTEL_SCHED_SEED: 0 = FIFO (ARCHITECTURE "Scheduling policy"). */
	uint64_t sched_seed;
	bool stopping;
	int ready_fd; /* write end of the detach handshake pipe, or -1 */
};

/*
 * Resolve settings (command line over file over defaults), create the
 * state directory and get the listening socket.  Errors are logged;
 * returns 0 or -1.  daemon_fini() is safe after a failed init.
 */
int daemon_init(struct daemon *d, const struct daemon_options *opt);

/*
 * Open STATE_DIR/hostel.db with the configured database-synchronous,
 * waiting up to DAEMON_DB_LOCK_WAIT_MS for a previous daemon to let go
 * of it (its lock file).  0, or -1 after logging why.
 */
#define DAEMON_DB_LOCK_WAIT_MS 10000
struct db;
int daemon_db_open(struct daemon *d, struct db **out);
/* database-synchronous: the command line's, the file's, else full. */
int daemon_wanted_sync(const struct daemon *d);

/*
 * hosteld --check-config (check-config.c): check the configuration file
 * (NULL: none) and its services.d files, print what was found to out;
 * 0 when all is well, 1 otherwise.  Starts nothing.
 */
int daemon_check_config(const char *config_path, FILE *out);

/* Run the loop until stopped; returns the process exit code. */
int daemon_run(struct daemon *d);

void daemon_fini(struct daemon *d);

/* Stop accepting, let open connections flush, then leave the loop. */
void daemon_stop(struct daemon *d);

/* Re-read the configuration file and apply what can change live. */
void daemon_reload(struct daemon *d);

/* Called by the connection layer when a connection is gone. */
void daemon_conn_gone(struct daemon *d);

uint64_t daemon_uptime_ms(const struct daemon *d);

/* The socket the daemon listens on. */
static inline const char *daemon_socket_path(const struct daemon *d)
{
	return d->listen.path;
}

#endif
