/*
 * daemon.c - hosteld's lifecycle (see daemon.h): settings, the listener,
 * signals, the watchdog, reload and graceful stop.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none from
 * requests: the socket and state paths come from the command line and
 * hostel.conf (CONFIG_FILE_MAX), once at start.
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/history-hooks.h"
#include "daemon/notify.h"
#include "daemon/service.h"
#include "daemon/services-dir.h"
#include "store/db.h"
#include "ipc/socket-path.h"

#define DEFAULT_LOG_LEVEL LOG_PRIO_INFO

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t daemon_uptime_ms(const struct daemon *d)
{
	return monotonic_ms() - d->started_ms;
}

/* A command-line path made absolute: the daemon may chdir("/") later. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX];
	char *out;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, path) < 0)
		return NULL;
	return out;
}

/* mkdir -p with mode for the directories it creates. */
static int make_dirs(const char *path, mode_t mode)
{
	char *p = strdup(path);
	int rc = 0;

	if (!p)
		return -ENOMEM;
	for (char *s = p + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST) {
				rc = -errno;
				break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	free(p);
	return rc;
}

static int effective_log_level(const struct daemon *d)
{
	if (d->cli.log_level >= 0)
		return d->cli.log_level;
	if (d->file.log_level >= 0)
		return d->file.log_level;
	return DEFAULT_LOG_LEVEL;
}

/* The socket path from settings; NULL after logging when none applies. */
static char *wanted_socket(const struct daemon *d)
{
	char buf[PATH_MAX];
	int rc;

	if (d->cli.socket)
		return strdup(d->cli.socket);
	if (d->file.socket)
		return strdup(d->file.socket);
	rc = hostel_default_socket_path(buf, sizeof(buf));
	if (rc == 0)
		return strdup(buf);
	log_err(&d->log, "%s",
		rc == -ENOENT ? "no default socket path: XDG_RUNTIME_DIR is "
				"unset; use --socket PATH"
			      : "the default socket path is too long; use "
				"--socket PATH");
	return NULL;
}

static char *wanted_state_dir(const struct daemon *d)
{
	char buf[PATH_MAX];

	if (d->cli.state_dir)
		return strdup(d->cli.state_dir);
	if (d->file.state_dir)
		return strdup(d->file.state_dir);
	if (config_default_state_dir(buf, sizeof(buf)) < 0) {
		log_err(&d->log, "no default state directory (HOME is unset); "
				 "use --state-dir DIR");
		return NULL;
	}
	return strdup(buf);
}

/*
 * HOSTEL_SCHED_SEED=N (a decimal u64; unset or empty: FIFO) shuffles the
 * scheduling choices the spec leaves free, in every store.
 */
static int sched_seed_from_env(struct daemon *d, uint64_t *seed)
{
	const char *v = getenv("HOSTEL_SCHED_SEED");
	char *end;

	*seed = 0;
	if (v == NULL || *v == '\0')
		return 0;
	errno = 0;
	*seed = strtoull(v, &end, 10);
	if (errno || *end != '\0' || *v == '-') {
		log_err(&d->log,
			"HOSTEL_SCHED_SEED must be a decimal number: %s", v);
		return -1;
	}
	return 0;
}

/* The access policy of a configuration (file only: no options). */
static int build_access(struct daemon *d, const struct config *c,
			struct access_policy *out)
{
	char why[256];
	int rc = access_policy_build(out, c->allow_call, c->allow_deploy,
				     c->allow_admin, why, sizeof(why));

	if (rc == -ENOMEM)
		log_err(&d->log, "access policy: out of memory");
	else if (rc)
		log_err(&d->log, "%s: %s", d->config_path, why);
	return rc;
}

/* Give the socket its configured group (it is already 0660). */
static int apply_socket_group(struct daemon *d)
{
	const char *name = d->file.socket_group;
	struct group *gr;
	char *end;
	long id;

	if (!name || d->listen.activated)
		return 0;
	gr = getgrnam(name);
	errno = 0;
	id = gr ? (long)gr->gr_gid : strtol(name, &end, 10);
	if (!gr && (errno || *end || id < 0)) {
		log_err(&d->log, "socket-group: unknown group '%s'", name);
		return -1;
	}
	if (chown(d->listen.path, (uid_t)-1, (gid_t)id) < 0) {
		log_err(&d->log, "socket-group: cannot give %s to group %s: %s",
			d->listen.path, name, strerror(errno));
		return -1;
	}
	return 0;
}

_Static_assert(DB_SYNC_FULL == 0 && DB_SYNC_NORMAL == 1,
	       "conffile.h's database-synchronous values");

int daemon_wanted_sync(const struct daemon *d)
{
	if (d->cli.db_sync >= 0)
		return d->cli.db_sync;
	if (d->file.db_sync >= 0)
		return d->file.db_sync;
	return DB_SYNC_FULL;
}

int daemon_db_open(struct daemon *d, struct db **out)
{
	struct db_options opt = {
		.sync = (enum db_sync)daemon_wanted_sync(d),
		.lock_wait_ms = DAEMON_DB_LOCK_WAIT_MS,
	};
	char err[512];

	if (db_open(d->state_dir, &opt, out, err, sizeof(err))) {
		log_err(&d->log, "history: %s", err);
		return -1;
	}
	return 0;
}

int daemon_init(struct daemon *d, const struct daemon_options *opt)
{
	char err[512];
	char *socket = NULL;
	int rc;

	memset(d, 0, sizeof(*d));
	d->ready_fd = -1;
	d->started_ms = monotonic_ms();
	d->foreground = opt->foreground;
	d->log.level = DEFAULT_LOG_LEVEL;
	d->log.human = opt->foreground && isatty(STDERR_FILENO);
	config_init(&d->cli);
	config_init(&d->file);
	listen_socket_init(&d->listen);
	if (sched_seed_from_env(d, &d->sched_seed) < 0)
		return -1;

	if ((opt->socket && !(d->cli.socket = absolute(opt->socket))) ||
	    (opt->state_dir &&
	     !(d->cli.state_dir = absolute(opt->state_dir))) ||
	    (opt->config_path &&
	     !(d->config_path = absolute(opt->config_path)))) {
		log_err(&d->log, "cannot resolve a path: %s", strerror(errno));
		return -1;
	}
	if (d->cli.socket && !hostel_socket_path_fits(d->cli.socket)) {
		log_err(&d->log, "socket path too long for a Unix socket: %s",
			d->cli.socket);
		return -1;
	}
	if (d->config_path) {
		rc = config_load(d->config_path, &d->file, err, sizeof(err));
		if (rc) {
			log_err(&d->log, "%s", err);
			return -1;
		}
	}
	d->log.level = effective_log_level(d);
	if (build_access(d, &d->file, &d->access))
		return -1;

	d->state_dir = wanted_state_dir(d);
	if (!d->state_dir)
		return -1;
	rc = make_dirs(d->state_dir, 0700);
	if (rc == 0 && access(d->state_dir, W_OK | X_OK) < 0)
		rc = -errno;
	if (rc) {
		log_err(&d->log, "state directory %s: %s", d->state_dir,
			strerror(-rc));
		return -1;
	}

	rc = listen_activated(&d->listen, err, sizeof(err));
	if (rc < 0) {
		log_err(&d->log, "socket activation: %s", err);
		return -1;
	}
	if (rc > 0) {
		if (d->cli.socket || d->file.socket)
			log_info(&d->log,
				 "socket activated: listening on %s, not on "
				 "the configured socket",
				 d->listen.path);
		return 0;
	}
	socket = wanted_socket(d);
	if (!socket)
		return -1;
	rc = listen_bind(&d->listen, socket, &d->log, err, sizeof(err));
	free(socket);
	if (rc) {
		log_err(&d->log, "%s", err);
		return -1;
	}
	return apply_socket_group(d);
}

void daemon_conn_gone(struct daemon *d)
{
	if (d->stopping && d->n_conns == 0)
		event_base_loopexit(d->base, NULL);
}

static void notify(struct daemon *d, const char *state)
{
	int rc = notify_send(state);

	if (rc < 0)
		log_warn(&d->log, "cannot notify the service manager: %s",
			 strerror(-rc));
}

static void notify_ready(struct daemon *d)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=Listening on %s",
		 d->listen.path);
	notify(d, msg);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	struct daemon *d = arg;

	if (conn_new(d, fd) < 0)
		log_err(&d->log, "cannot set up a connection: out of memory");
}

static void accept_again_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	if (d->listener)
		evconnlistener_enable(d->listener);
}

static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct daemon *d = arg;
	int err = EVUTIL_SOCKET_ERROR();
	struct timeval pause = {1, 0};

	log_warn(&d->log, "accept: %s", evutil_socket_error_to_string(err));
	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		/* Out of resources: pause instead of spinning on accept. */
		evconnlistener_disable(l);
		evtimer_add(d->ev_accept_wait, &pause);
	}
}

static void stop_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct daemon *d = arg;

	log_warn(&d->log,
		 "%zu connection(s) did not finish within %d s; closing them",
		 d->n_conns, DAEMON_STOP_TIMEOUT_SEC);
	event_base_loopexit(d->base, NULL);
}

void daemon_stop(struct daemon *d)
{
	struct timeval limit = {DAEMON_STOP_TIMEOUT_SEC, 0};
	struct conn *c, *next;

	if (d->stopping)
		return;
	d->stopping = true;
	log_info(&d->log, "stopping (%zu open connection(s))", d->n_conns);
	notify(d, "STOPPING=1\nSTATUS=Stopping");
	/* Queued calls end (cancelled) in the last commit. */
	service_registry_stopping(d);
	/* daemon.stopped, durable; followers get their final reply. */
	daemon_history_stopping(d);
	if (d->listener) {
		evconnlistener_free(d->listener);
		d->listener = NULL;
		d->listen.fd = -1;
	}
	listen_unlink(&d->listen);
	if (d->ev_watchdog)
		event_del(d->ev_watchdog);
	for (c = d->conns; c; c = next) {
		next = c->next;
		conn_close(c, true);
	}
	if (d->n_conns == 0)
		event_base_loopexit(d->base, NULL);
	else
		evtimer_add(d->ev_stop_timer, &limit);
}

/* Compare one path setting that only a restart can change. */
static bool report_restart_only(struct daemon *d, const char *key,
				const char *running, const char *wanted)
{
	if (!wanted || !strcmp(running, wanted))
		return false;
	log_warn(&d->log,
		 "%s changed to %s; still using %s until hosteld is "
		 "restarted",
		 key, wanted, running);
	return true;
}

void daemon_reload(struct daemon *d)
{
	struct access_policy policy;
	struct config fresh;
	char err[512];
	char *socket = NULL, *state_dir = NULL;
	bool changed = false;
	int level;

	if (!d->config_path) {
		log_info(&d->log, "SIGHUP: no configuration file (--config) "
				  "to reload");
		daemon_history_reloaded(d, "no configuration file", NULL);
		return;
	}
	{
		char msg[64];

		snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
			 (unsigned long long)monotonic_ms() * 1000);
		notify(d, msg);
	}
	if (config_load(d->config_path, &fresh, err, sizeof(err)) < 0) {
		log_err(&d->log,
			"reload failed, keeping the current "
			"configuration: %s",
			err);
		daemon_history_reloaded(d, "failed", err);
		notify_ready(d);
		return;
	}
	if (build_access(d, &fresh, &policy)) {
		log_err(&d->log, "reload failed, keeping the current "
				 "configuration");
		daemon_history_reloaded(d, "failed", "invalid access policy");
		config_free(&fresh);
		notify_ready(d);
		return;
	}
	access_policy_free(&d->access);
	d->access = policy;
	if (fresh.socket_group && !d->listen.activated &&
	    (!d->file.socket_group ||
	     strcmp(fresh.socket_group, d->file.socket_group)))
		log_warn(&d->log,
			 "socket-group changed to %s; the socket "
			 "keeps its group until hosteld is restarted",
			 fresh.socket_group);
	config_free(&d->file);
	d->file = fresh;

	level = effective_log_level(d);
	if (level != d->log.level) {
		/* Said at the more verbose of both levels, so it shows. */
		int old = d->log.level;

		d->log.level = old > level ? old : level;
		log_info(&d->log, "log-level changed from %s to %s",
			 log_level_name(old), log_level_name(level));
		d->log.level = level;
		changed = true;
	}
	if (d->listen.activated) {
		if (d->file.socket && strcmp(d->file.socket, d->listen.path))
			log_info(&d->log, "socket is set by the service "
					  "manager (socket activation); the "
					  "file's socket is not used");
	} else {
		socket = wanted_socket(d);
		changed |= report_restart_only(d, "socket", d->listen.path,
					       socket);
	}
	state_dir = wanted_state_dir(d);
	changed |= report_restart_only(d, "state-dir", d->state_dir, state_dir);
	free(socket);
	free(state_dir);
	log_info(&d->log, "configuration reloaded from %s%s", d->config_path,
		 changed ? "" : ": no change");
	/* Also applies database-synchronous and the retention settings. */
	daemon_history_reloaded(d, "reloaded", NULL);
	services_dir_reconcile(d);
	notify_ready(d);
}

static void signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct daemon *d = arg;
	const char *name = sig == SIGTERM ? "SIGTERM" : "SIGINT";

	if (sig == SIGHUP) {
		daemon_reload(d);
		return;
	}
	if (d->stopping) {
		log_warn(&d->log, "%s again: exiting now", name);
		event_base_loopbreak(d->base);
		return;
	}
	log_info(&d->log, "%s received", name);
	daemon_stop(d);
}

static void watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	notify(arg, "WATCHDOG=1");
}

static int setup_loop(struct daemon *d)
{
	d->base = event_base_new();
	if (!d->base || event_base_priority_init(d->base, DAEMON_PRIORITIES))
		return -1;
	d->listener = evconnlistener_new(
		d->base, accept_cb, d,
		LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
		0 /* already listening */, d->listen.fd);
	if (!d->listener)
		return -1;
	evconnlistener_set_error_cb(d->listener, accept_error_cb);
	d->ev_sigterm = evsignal_new(d->base, SIGTERM, signal_cb, d);
	d->ev_sigint = evsignal_new(d->base, SIGINT, signal_cb, d);
	d->ev_sighup = evsignal_new(d->base, SIGHUP, signal_cb, d);
	d->ev_stop_timer = evtimer_new(d->base, stop_timeout_cb, d);
	d->ev_accept_wait = evtimer_new(d->base, accept_again_cb, d);
	if (!d->ev_sigterm || !d->ev_sigint || !d->ev_sighup ||
	    !d->ev_stop_timer || !d->ev_accept_wait ||
	    evsignal_add(d->ev_sigterm, NULL) ||
	    evsignal_add(d->ev_sigint, NULL) ||
	    evsignal_add(d->ev_sighup, NULL))
		return -1;
	d->watchdog_usec = notify_watchdog_usec();
	if (d->watchdog_usec) {
		/* Ping at half the interval, as sd_watchdog_enabled(3) asks. */
		uint64_t half = d->watchdog_usec / 2;
		struct timeval tv = {(time_t)(half / 1000000),
				     (suseconds_t)(half % 1000000)};

		d->ev_watchdog =
			event_new(d->base, -1, EV_PERSIST, watchdog_cb, d);
		if (!d->ev_watchdog || event_add(d->ev_watchdog, &tv))
			return -1;
	}
	return 0;
}

int daemon_run(struct daemon *d)
{
	struct db *db;

	/* A peer that goes away must not kill us on write. */
	signal(SIGPIPE, SIG_IGN);
	if (setup_loop(d) < 0) {
		log_err(&d->log, "cannot set up the event loop");
		return 1;
	}
	/* The database is the daemon's; the history takes it over.
	 * Recovered and daemon.started durable before READY=1. */
	if (daemon_db_open(d, &db) < 0 || daemon_history_open(d, db) < 0)
		return 1;
	/* Services recreated (autostart ones started) before READY=1. */
	if (service_registry_load(d) < 0)
		return 1;
	/* And the services.d files deployed (an error skips the file). */
	services_dir_reconcile(d);
	log_info(&d->log, "hosteld %s listening on %s (state in %s)",
		 PACKAGE_VERSION, d->listen.path, d->state_dir);
	notify_ready(d);
	if (d->ready_fd >= 0) {
		/* Tell the waiting parent that startup succeeded. */
		ssize_t n = write(d->ready_fd, "R", 1);

		(void)n;
		close(d->ready_fd);
		d->ready_fd = -1;
	}
	if (event_base_dispatch(d->base) < 0) {
		log_err(&d->log, "event loop failed");
		return 1;
	}
	daemon_history_close(d);
	log_info(&d->log, "stopped");
	return 0;
}

void daemon_fini(struct daemon *d)
{
	while (d->conns)
		conn_free(d->conns);
	daemon_history_close(d); /* before the loop goes: it owns events */
	/* After the history: replies in flight reference no service. */
	service_registry_free(d);
	if (d->listener)
		evconnlistener_free(d->listener);
	else if (d->listen.fd >= 0)
		close(d->listen.fd);
	listen_unlink(&d->listen);
	access_policy_free(&d->access);
	if (d->ev_sigterm)
		event_free(d->ev_sigterm);
	if (d->ev_sigint)
		event_free(d->ev_sigint);
	if (d->ev_sighup)
		event_free(d->ev_sighup);
	if (d->ev_watchdog)
		event_free(d->ev_watchdog);
	if (d->ev_stop_timer)
		event_free(d->ev_stop_timer);
	if (d->ev_accept_wait)
		event_free(d->ev_accept_wait);
	if (d->base)
		event_base_free(d->base);
	if (d->ready_fd >= 0)
		close(d->ready_fd);
	config_free(&d->cli);
	config_free(&d->file);
	free(d->config_path);
	free(d->state_dir);
	memset(d, 0, sizeof(*d));
}
