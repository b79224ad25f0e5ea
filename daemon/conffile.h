/*
 * conffile.h - hosteld's settings: the configuration file and defaults.
 *
 * hostel.conf is a list of `key = value` lines:
 *
 *     # hostel.conf: settings of hosteld (see hosteld(8))
 *     socket = /run/hostel/hostel.sock
 *     state-dir = /var/lib/hostel
 *     log-level = info
 *
 *   - Blank lines and lines whose first non-blank character is '#' are
 *     ignored; a '#' elsewhere is part of the value (paths may hold one).
 *   - Spaces and tabs around the key and the value are ignored.
 *   - Keys: socket (absolute path of the listening socket), state-dir
 *     (absolute path of the state directory), services-dir (absolute
 *     path of the services.d directory, daemon/services-dir.h), log-level (error, warning,
 *     info or debug), database-synchronous (full or normal: SQLite's
 *     synchronous level for hostel.db), history-keep-events (newest
 *     events kept per service; 0: no limit) and history-keep-age (a
 *     duration N, Ns, Nm, Nh or Nd; 0: no limit), service-host-bytes
 *     (limits.hostBytes of the services that set none: a size N, NK,
 *     NM or NG, at least 1M; applies to stores made after it is read),
 *     service-memory (limits.memory of the services that set none: a
 *     size; 0: the component's own limit),
 *     call-deadline (the deadline of a call that asks for none, of a
 *     service without limits.deadlineMs: a duration; 0: none; default
 *     CONFIG_CALL_DEADLINE_DEFAULT; applies to calls made after it is
 *     read),
 *     socket-group (the
 *     group the socket is given; it is created 0660) and allow-call,
 *     allow-deploy, allow-admin (lists of principals, daemon/access.h),
 *     history (on or off: whether events are recorded; read at start),
 *     durability (none, stop or commit: the durability of services whose
 *     config sets none; default commit, none with history = off; read
 *     when a service starts),
 *     snapshot-interval (durability stop: a snapshot this often too, of
 *     services whose limits set no snapshotIntervalMs; a duration; 0 or
 *     unset: only at a graceful stop; read when a service starts).
 *   - An unknown key, a line without '=', an empty value, a relative
 *     path or a key given twice is an error naming the file and line.
 *
 * Values given on the command line override the file's.
 */
#ifndef HOSTEL_DAEMON_CONFFILE_H
#define HOSTEL_DAEMON_CONFFILE_H

#include <stddef.h>

/* The largest configuration file read. */
#define CONFIG_FILE_MAX (64 * 1024)

/* The largest history-keep-events, and of history-keep-age in seconds. */
#define CONFIG_COUNT_MAX 1000000000000000LL
/* The smallest service-host-bytes (and limits.hostBytes): 1 MiB. */
#define CONFIG_HOST_BYTES_MIN (1LL << 20)
/* call-deadline when not set: 5 minutes, in seconds. */
#define CONFIG_CALL_DEADLINE_DEFAULT 300LL

struct config {
	char *socket;	       /* NULL when not set */
	char *state_dir;       /* NULL when not set */
	/* services declared as files (daemon/services-dir.h); NULL: not
	 * set (then services.d beside the configuration file) */
	char *services_dir;
	int log_level;	       /* a LOG_PRIO_*, or -1 when not set */
	int db_sync;	       /* 0 full, 1 normal, or -1 when not set */
	long long keep_events; /* -1 when not set; 0: no limit */
	long long keep_age;    /* seconds; -1 when not set; 0: no limit */
	/* service-host-bytes: limits.hostBytes of services that set none;
	 * -1 when not set (the runtime's default) */
	long long host_bytes;
	/* service-memory: limits.memory of services that set none (bytes
	 * per memory; 0: the component's own limit); -1 when not set */
	long long memory;
	/* call-deadline in seconds; -1 when not set; 0: none */
	long long call_deadline;
	/* snapshot-interval in seconds; -1 when not set; 0: none */
	long long snapshot_interval;
	int history; /* `history`: 1 on, 0 off, -1 when not set */
	/* `durability` of services that set none: 0 none, 1 stop, 2 commit,
	 * -1 unset */
	int durability;
	/* Access (daemon/access.h); NULL when not set. */
	char *socket_group; /* group name or number owning the socket */
	char *allow_call, *allow_deploy, *allow_admin;
};

void config_init(struct config *c);
void config_free(struct config *c);

/*
 * Parse `len` bytes of configuration text; `name` names it in errors.
 * Returns 0, -EINVAL with "NAME:LINE: problem" in err, or -ENOMEM.  On
 * error *out is left empty.
 */
int config_parse(const char *name, const char *text, size_t len,
		 struct config *out, char *err, size_t errlen);

/*
 * The line reader of every settings file (hostel.conf, services.d):
 * calls fn for each line that is not blank or a '#' comment, with s..e
 * the line trimmed (not NUL-terminated); a NUL byte is an error.  Stops
 * at fn's first non-zero return and returns it.  Errors name NAME:LINE.
 */
typedef int (*config_line_fn)(void *arg, const char *name, unsigned lineno,
			      const char *s, const char *e, char *err,
			      size_t errlen);
int config_lines(const char *name, const char *text, size_t len,
		 config_line_fn fn, void *arg, char *err, size_t errlen);

/*
 * "NAME:LINE: problem" (LINE 0: "NAME: problem") into err; -EINVAL.  The
 * errors of every settings file read this way.
 */
int config_fail(char *err, size_t errlen, const char *name, unsigned line,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Read a settings file whole (at most CONFIG_FILE_MAX bytes) into *text
 * (NUL-terminated, *len without it; the caller frees).  0, -EFBIG,
 * -ENOMEM or -errno, with "PATH: why" in err.
 */
int config_read_file(const char *path, char **text, size_t *len, char *err,
		     size_t errlen);

/*
 * Values as hostel.conf spells them, for the other settings files: a
 * count (decimal digits, at most CONFIG_COUNT_MAX), a duration in
 * seconds (ipc/timefmt.h), a size in bytes (a count with an optional K,
 * M or G).  -1 when malformed (-2: out of memory).
 */
long long config_count_value(const char *v);
long long config_duration_value(const char *v);
long long config_bytes_value(const char *v);

/* Read and parse a file; also -errno when it cannot be read. */
int config_load(const char *path, struct config *out, char *err, size_t errlen);

/*
 * The default state directory: $STATE_DIRECTORY (systemd's
 * StateDirectory=, first entry), /var/lib/hostel for root,
 * $XDG_STATE_HOME/hostel, or ~/.local/state/hostel.  0, -ENOENT (no
 * home) or -ENAMETOOLONG.
 */
int config_default_state_dir(char *buf, size_t size);

#endif
