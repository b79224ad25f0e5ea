/*
 * conffile.c - parsing hostel.conf (format in conffile.h) and the default
 * state directory.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - config_load: one buffer of CONFIG_FILE_MAX + 1 (64 KiB); a longer
 *    file is refused.
 *  - parse_line, parse_count: copies of one value, within that buffer.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/access.h"
#include "daemon/conffile.h"
#include "daemon/log.h"
#include "ipc/socket-path.h"
#include "ipc/timefmt.h"

void config_init(struct config *c)
{
	c->socket = NULL;
	c->state_dir = NULL;
	c->services_dir = NULL;
	c->log_level = -1;
	c->db_sync = -1;
	c->keep_events = -1;
	c->keep_age = -1;
	c->host_bytes = -1;
	c->memory = -1;
	c->call_deadline = -1;
	c->snapshot_interval = -1;
	c->history = -1;
	c->durability = -1;
	c->socket_group = NULL;
	c->allow_call = NULL;
	c->allow_deploy = NULL;
	c->allow_admin = NULL;
}

void config_free(struct config *c)
{
	free(c->socket);
	free(c->state_dir);
	free(c->services_dir);
	free(c->socket_group);
	free(c->allow_call);
	free(c->allow_deploy);
	free(c->allow_admin);
	config_init(c);
}

int config_fail(char *err, size_t errlen, const char *name, unsigned line,
		const char *fmt, ...)
{
	va_list ap;
	int n = line ? snprintf(err, errlen, "%s:%u: ", name, line)
		     : snprintf(err, errlen, "%s: ", name);

	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Trim [*s, *e) of blanks. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && is_blank(**s))
		(*s)++;
	while (*e > *s && is_blank((*e)[-1]))
		(*e)--;
}

static bool key_is(const char *k, size_t n, const char *name)
{
	return strlen(name) == n && !memcmp(k, name, n);
}

/* "full" or "normal" (store/db.h's enum db_sync values). */
static int sync_parse(const char *v)
{
	if (!strcmp(v, "full"))
		return 0;
	if (!strcmp(v, "normal"))
		return 1;
	return -1;
}

/* A count: decimal digits, at most CONFIG_COUNT_MAX. */
static long long count_parse(const char *v)
{
	long long n = 0;

	if (!*v)
		return -1;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -1;
		n = n * 10 + (*v - '0');
		if (n > CONFIG_COUNT_MAX)
			return -1;
	}
	return n;
}

/* A count times the factor of its optional one-letter unit. */
struct unit {
	char unit;
	long long factor;
};

static long long unit_parse(const char *v, const struct unit *units,
			    size_t nunits)
{
	size_t len = strlen(v);
	long long mult = 1, n;
	char *digits;

	if (len > 1 && (v[len - 1] < '0' || v[len - 1] > '9')) {
		mult = 0;
		for (size_t i = 0; i < nunits; i++)
			if (v[len - 1] == units[i].unit)
				mult = units[i].factor;
		if (!mult)
			return -1;
		len--;
	}
	digits = strndup(v, len);
	if (!digits)
		return -2;
	n = count_parse(digits);
	free(digits);
	if (n < 0 || n > CONFIG_COUNT_MAX / mult)
		return -1;
	return n * mult;
}

/*
 * A duration in seconds, in the one set of forms hostel(1) takes too
 * (ipc/timefmt.h: s, m, min, h, d, w), at most CONFIG_COUNT_MAX.
 */
static long long duration_parse(const char *v)
{
	int64_t sec;

	if (hostel_duration_parse(v, &sec) < 0 || sec > CONFIG_COUNT_MAX)
		return -1;
	return sec;
}

/*
 * A size in bytes: a count with an optional K, M or G (KiB, MiB, GiB);
 * at least CONFIG_HOST_BYTES_MIN.
 */
static long long size_parse(const char *v)
{
	static const struct unit units[] = {
		{'K', 1LL << 10}, {'M', 1LL << 20}, {'G', 1LL << 30}};
	long long n = unit_parse(v, units, sizeof(units) / sizeof(units[0]));

	return n >= 0 && n < CONFIG_HOST_BYTES_MIN ? -1 : n;
}

/* A group name or number as groupadd accepts them. */
static bool group_name_ok(const char *v)
{
	if (!*v || *v == '-')
		return false;
	for (; *v; v++)
		if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
		      (*v >= '0' && *v <= '9') || *v == '_' || *v == '-' ||
		      *v == '.'))
			return false;
	return true;
}

/* One `key = value` line (already trimmed, not a comment). */
static int parse_line(const char *name, unsigned lineno, const char *s,
		      const char *e, struct config *out, char *err,
		      size_t errlen)
{
	const char *eq = memchr(s, '=', (size_t)(e - s));
	const char *k = s, *ke, *v, *ve = e;
	char **slot = NULL, **tslot = NULL;
	int *islot = NULL;
	long long *lslot = NULL, n;
	char *value;
	int level;

	if (!eq)
		return config_fail(err, errlen, name, lineno,
			    "expected 'key = value'");
	ke = eq;
	v = eq + 1;
	trim(&k, &ke);
	trim(&v, &ve);
	if (k == ke)
		return config_fail(err, errlen, name, lineno,
			    "missing key before '='");
	if (key_is(k, (size_t)(ke - k), "socket"))
		slot = &out->socket;
	else if (key_is(k, (size_t)(ke - k), "state-dir"))
		slot = &out->state_dir;
	else if (key_is(k, (size_t)(ke - k), "services-dir"))
		slot = &out->services_dir;
	else if (key_is(k, (size_t)(ke - k), "log-level"))
		islot = &out->log_level;
	else if (key_is(k, (size_t)(ke - k), "database-synchronous"))
		islot = &out->db_sync;
	else if (key_is(k, (size_t)(ke - k), "history-keep-events"))
		lslot = &out->keep_events;
	else if (key_is(k, (size_t)(ke - k), "history-keep-age"))
		lslot = &out->keep_age;
	else if (key_is(k, (size_t)(ke - k), "service-host-bytes"))
		lslot = &out->host_bytes;
	else if (key_is(k, (size_t)(ke - k), "service-memory"))
		lslot = &out->memory;
	else if (key_is(k, (size_t)(ke - k), "call-deadline"))
		lslot = &out->call_deadline;
	else if (key_is(k, (size_t)(ke - k), "snapshot-interval"))
		lslot = &out->snapshot_interval;
	else if (key_is(k, (size_t)(ke - k), "socket-group"))
		tslot = &out->socket_group;
	else if (key_is(k, (size_t)(ke - k), "allow-call"))
		tslot = &out->allow_call;
	else if (key_is(k, (size_t)(ke - k), "allow-deploy"))
		tslot = &out->allow_deploy;
	else if (key_is(k, (size_t)(ke - k), "allow-admin"))
		tslot = &out->allow_admin;
	else if (key_is(k, (size_t)(ke - k), "history"))
		islot = &out->history;
	else if (key_is(k, (size_t)(ke - k), "durability"))
		islot = &out->durability;
	else
		return config_fail(err, errlen, name, lineno,
			    "unknown key '%.*s' (known: socket, state-dir, "
			    "log-level, database-synchronous, "
			    "history-keep-events, history-keep-age, "
			    "service-host-bytes, call-deadline, socket-group, "
			    "allow-call, "
			    "allow-deploy, "
			    "allow-admin, history, durability, "
			    "snapshot-interval)",
			    (int)(ke - k), k);
	if (v == ve)
		return config_fail(err, errlen, name, lineno, "'%.*s' has no value",
			    (int)(ke - k), k);
	if ((slot && *slot) || (tslot && *tslot) || (islot && *islot >= 0) ||
	    (lslot && *lslot >= 0))
		return config_fail(err, errlen, name, lineno, "'%.*s' is set twice",
			    (int)(ke - k), k);
	value = strndup(v, (size_t)(ve - v));
	if (!value)
		return -ENOMEM;
	if (islot == &out->log_level) {
		level = log_level_parse(value);
		free(value);
		if (level < 0)
			return config_fail(err, errlen, name, lineno,
				    "log-level must be error, warning, info or "
				    "debug, not '%.*s'",
				    (int)(ve - v), v);
		out->log_level = level;
		return 0;
	}
	if (islot == &out->history) {
		level = !strcmp(value, "on")	? 1
			: !strcmp(value, "off") ? 0
						: -1;
		free(value);
		if (level < 0)
			return config_fail(err, errlen, name, lineno,
				    "history must be on or off, not '%.*s'",
				    (int)(ve - v), v);
		out->history = level;
		return 0;
	}
	if (islot == &out->durability) {
		level = !strcmp(value, "none")	   ? 0
			: !strcmp(value, "stop")   ? 1
			: !strcmp(value, "commit") ? 2
						   : -1;
		free(value);
		if (level < 0)
			return config_fail(err, errlen, name, lineno,
				    "durability must be none, stop or commit, "
				    "not '%.*s'",
				    (int)(ve - v), v);
		out->durability = level;
		return 0;
	}
	if (islot) {
		level = sync_parse(value);
		free(value);
		if (level < 0)
			return config_fail(err, errlen, name, lineno,
				    "database-synchronous must be full or "
				    "normal, not '%.*s'",
				    (int)(ve - v), v);
		out->db_sync = level;
		return 0;
	}
	if (lslot) {
		n = lslot == &out->keep_age || lslot == &out->call_deadline ||
				    lslot == &out->snapshot_interval
			    ? duration_parse(value)
		    : lslot == &out->host_bytes ? size_parse(value)
		    : lslot == &out->memory	? config_bytes_value(value)
						: count_parse(value);
		free(value);
		if (n == -2)
			return -ENOMEM;
		if (n < 0 && lslot == &out->host_bytes)
			return config_fail(err, errlen, name, lineno,
				    "service-host-bytes must be a size of at "
				    "least 1M, like 256M or 1G, not '%.*s'",
				    (int)(ve - v), v);
		if (n < 0 && lslot == &out->memory)
			return config_fail(err, errlen, name, lineno,
				    "service-memory must be a size like 64M "
				    "or 4G (0: the component's own limit), not "
				    "'%.*s'",
				    (int)(ve - v), v);
		if (n < 0 && lslot == &out->call_deadline)
			return config_fail(err, errlen, name, lineno,
				    "call-deadline must be a duration like "
				    "5min, 30s, 1h or 0 (none), not '%.*s'",
				    (int)(ve - v), v);
		if (n < 0 && lslot == &out->snapshot_interval)
			return config_fail(err, errlen, name, lineno,
				    "snapshot-interval must be a duration like "
				    "30s, 5min or 0 (none), not '%.*s'",
				    (int)(ve - v), v);
		if (n < 0)
			return config_fail(err, errlen, name, lineno,
				    lslot == &out->keep_age
					    ? "history-keep-age must be a "
					      "duration like 30d, 12h, 90m, "
					      "600s or 0, not '%.*s'"
					    : "history-keep-events must be a "
					      "number (0: no limit), not "
					      "'%.*s'",
				    (int)(ve - v), v);
		*lslot = n;
		return 0;
	}
	if (tslot) {
		char why[200];

		if (tslot != &out->socket_group &&
		    access_list_check(value, why, sizeof(why))) {
			free(value);
			return config_fail(err, errlen, name, lineno, "%.*s: %s",
				    (int)(ke - k), k, why);
		}
		if (tslot == &out->socket_group && !group_name_ok(value)) {
			free(value);
			return config_fail(err, errlen, name, lineno,
				    "socket-group must be one group name or "
				    "number, not '%.*s'",
				    (int)(ve - v), v);
		}
		*tslot = value;
		return 0;
	}
	if (value[0] != '/') {
		free(value);
		return config_fail(err, errlen, name, lineno,
			    "'%.*s' must be an absolute path", (int)(ke - k),
			    k);
	}
	if (slot == &out->socket && !hostel_socket_path_fits(value)) {
		free(value);
		return config_fail(err, errlen, name, lineno,
			    "socket path is too long for a Unix socket");
	}
	*slot = value;
	return 0;
}

int config_lines(const char *name, const char *text, size_t len,
		 config_line_fn fn, void *arg, char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	unsigned lineno = 0;
	int rc = 0;

	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		const char *s = p;

		lineno++;
		p = nl ? nl + 1 : end;
		if (memchr(s, '\0', (size_t)(e - s)))
			rc = config_fail(err, errlen, name, lineno, "NUL byte");
		else if (trim(&s, &e), s < e && *s != '#')
			rc = fn(arg, name, lineno, s, e, err, errlen);
	}
	return rc;
}

static int config_line(void *arg, const char *name, unsigned lineno,
		       const char *s, const char *e, char *err, size_t errlen)
{
	return parse_line(name, lineno, s, e, arg, err, errlen);
}

int config_parse(const char *name, const char *text, size_t len,
		 struct config *out, char *err, size_t errlen)
{
	int rc;

	config_init(out);
	rc = config_lines(name, text, len, config_line, out, err, errlen);
	if (rc)
		config_free(out);
	return rc;
}

int config_read_file(const char *path, char **text, size_t *len, char *err,
		     size_t errlen)
{
	char *buf = malloc(CONFIG_FILE_MAX + 1);
	int fd, rc = 0;

	*text = NULL;
	*len = 0;
	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(buf);
		return rc;
	}
	for (;;) {
		ssize_t n = read(fd, buf + *len, CONFIG_FILE_MAX + 1 - *len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		*len += (size_t)n;
		if (*len > CONFIG_FILE_MAX) {
			rc = -EFBIG;
			snprintf(err, errlen, "%s: larger than %d bytes", path,
				 CONFIG_FILE_MAX);
			break;
		}
	}
	close(fd);
	if (rc) {
		free(buf);
		*len = 0;
		return rc;
	}
	buf[*len] = '\0';
	*text = buf;
	return 0;
}

int config_load(const char *path, struct config *out, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int rc;

	config_init(out);
	rc = config_read_file(path, &buf, &len, err, errlen);
	if (rc)
		return rc;
	rc = config_parse(path, buf, len, out, err, errlen);
	free(buf);
	return rc;
}

long long config_count_value(const char *v)
{
	return count_parse(v);
}

long long config_duration_value(const char *v)
{
	return duration_parse(v);
}

long long config_bytes_value(const char *v)
{
	static const struct unit units[] = {
		{'K', 1LL << 10}, {'M', 1LL << 20}, {'G', 1LL << 30}};

	return unit_parse(v, units, sizeof(units) / sizeof(units[0]));
}

static int join(char *buf, size_t size, const char *dir, size_t dirlen,
		const char *suffix)
{
	int n = snprintf(buf, size, "%.*s%s", (int)dirlen, dir, suffix);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int config_default_state_dir(char *buf, size_t size)
{
	const char *dir = getenv("STATE_DIRECTORY");

	if (dir && *dir)
		return join(buf, size, dir, strcspn(dir, ":"), "");
	if (geteuid() == 0)
		return join(buf, size, "/var/lib/hostel", 15, "");
	dir = getenv("XDG_STATE_HOME");
	if (dir && *dir == '/')
		return join(buf, size, dir, strlen(dir), "/hostel");
	dir = getenv("HOME");
	if (dir && *dir == '/')
		return join(buf, size, dir, strlen(dir),
			    "/.local/state/hostel");
	return -ENOENT;
}
