/*
 * services-dir.c - services declared as files (services-dir.h holds the
 * format and the contract): parsing a NAME.conf into the Config a
 * client's Create would send, and reconciling the services with the
 * files.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none;
 * the files are the operator's (bounds in services-dir.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "component/component.h"
#include "daemon/conffile.h"
#include "daemon/daemon.h"
#include "daemon/history-hooks.h"
#include "daemon/service.h"
#include "daemon/services-dir.h"
#include "store/components.h"
#include "store/db.h"

/* ---- parsing --------------------------------------------------------------- */

enum value_kind { V_COUNT, V_BYTES, V_DEADLINE };

/* The keys that are Limits, with their hostel-protocol(7) names. */
static const struct limit_key {
	const char *key, *json;
	enum value_kind kind;
} limit_keys[] = {
	{"memory", "memory", V_BYTES},
	{"fuel-per-call", "fuelPerCall", V_COUNT},
	{"deadline", "deadlineMs", V_DEADLINE},
	{"max-handles", "maxHandles", V_COUNT},
	{"max-threads", "maxThreads", V_COUNT},
	{"max-pending-host-calls", "maxPendingHostCalls", V_COUNT},
	{"max-concurrent-calls", "maxConcurrentCalls", V_COUNT},
	{"host-bytes", "hostBytes", V_BYTES},
	{"table-elements", "tableElements", V_COUNT},
	{"max-queued-calls", "maxQueuedCalls", V_COUNT},
	{"snapshot-interval", "snapshotIntervalMs", V_DEADLINE},
};

#define NLIMIT_KEYS (sizeof(limit_keys) / sizeof(limit_keys[0]))

struct parse {
	const char *dir; /* of the file, for a relative component */
	size_t dirlen;
	struct service_file *out;
	json_t *env, *args, *preopens, *limits;
	bool seen_component, seen_owner, seen_autostart, seen_durability;
	const char *durability; /* "none", "stop", "commit"; NULL: not set */
};

/* A deadline in ms: "Nms", or a duration (conffile.h) in seconds. */
static long long deadline_ms(const char *v)
{
	size_t n = strlen(v);
	long long s;

	if (n > 2 && strcmp(v + n - 2, "ms") == 0) {
		char digits[32];

		if (n - 2 >= sizeof(digits))
			return -1;
		memcpy(digits, v, n - 2);
		digits[n - 2] = '\0';
		return config_count_value(digits);
	}
	s = config_duration_value(v);
	return s < 0 || s > CONFIG_COUNT_MAX / 1000 ? -1 : s * 1000;
}

static int parse_limit(struct parse *p, const struct limit_key *lk,
		       const char *v, const char *name, unsigned line,
		       char *err, size_t errlen)
{
	long long n = lk->kind == V_BYTES      ? config_bytes_value(v)
		      : lk->kind == V_DEADLINE ? deadline_ms(v)
					       : config_count_value(v);

	if (n == -2)
		return -ENOMEM;
	if (n < 0)
		return config_fail(err, errlen, name, line, "%s: expected %s, not '%s'",
			     lk->key,
			     lk->kind == V_BYTES	? "a size (N, NK, NM or NG)"
			     : lk->kind == V_DEADLINE ? "a duration (Nms, Ns, Nm, Nh)"
						      : "a count",
			     v);
	if (json_object_get(p->limits, lk->json))
		return config_fail(err, errlen, name, line, "%s given twice", lk->key);
	return json_object_set_new(p->limits, lk->json, json_integer(n)) ? -ENOMEM
									  : 0;
}

static int parse_owner(struct parse *p, const char *v, const char *name,
		       unsigned line, char *err, size_t errlen)
{
	long long uid = config_count_value(v);

	if (uid < 0) {
		struct passwd pw, *res = NULL;
		char buf[4096];

		if (getpwnam_r(v, &pw, buf, sizeof(buf), &res) != 0 || !res)
			return config_fail(err, errlen, name, line,
				     "owner: no user '%.64s'", v);
		uid = res->pw_uid;
	}
	if (uid >= 4294967295LL)
		return config_fail(err, errlen, name, line, "owner: uid out of range");
	p->out->owner = uid;
	return 0;
}

static int parse_bool(const char *v)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};

	for (size_t i = 0; i < 4; i++) {
		if (strcmp(v, yes[i]) == 0)
			return 1;
		if (strcmp(v, no[i]) == 0)
			return 0;
	}
	return -1;
}

static int parse_env(struct parse *p, const char *v, const char *name,
		     unsigned line, char *err, size_t errlen)
{
	const char *eq = strchr(v, '=');
	char *key;
	int rc;

	if (!eq || eq == v)
		return config_fail(err, errlen, name, line,
			     "env: expected NAME=VALUE, not '%.64s'", v);
	key = strndup(v, (size_t)(eq - v));
	if (!key)
		return -ENOMEM;
	if (json_object_get(p->env, key))
		rc = config_fail(err, errlen, name, line, "env: %.64s given twice",
			   key);
	else
		rc = json_object_set_new(p->env, key, json_string(eq + 1))
			     ? -ENOMEM
			     : 0;
	free(key);
	return rc;
}

static int set_component(struct parse *p, const char *v)
{
	size_t n = v[0] == '/' ? strlen(v) + 1 : p->dirlen + strlen(v) + 2;

	if (!(p->out->component = malloc(n)))
		return -ENOMEM;
	if (v[0] == '/')
		memcpy(p->out->component, v, n);
	else
		snprintf(p->out->component, n, "%.*s/%s", (int)p->dirlen,
			 p->dir, v);
	return 0;
}

/* The key's first use, or an error naming it. */
static int once(bool *seen, const char *key, const char *name, unsigned line,
		char *err, size_t errlen)
{
	if (*seen)
		return config_fail(err, errlen, name, line, "%s given twice", key);
	*seen = true;
	return 0;
}

static int parse_kv(struct parse *p, const char *k, const char *v,
		    const char *name, unsigned line, char *err, size_t errlen)
{
	int rc, b;

	if (strcmp(k, "component") == 0)
		return (rc = once(&p->seen_component, k, name, line, err,
				  errlen))
			       ? rc
			       : set_component(p, v);
	if (strcmp(k, "owner") == 0)
		return (rc = once(&p->seen_owner, k, name, line, err, errlen))
			       ? rc
			       : parse_owner(p, v, name, line, err, errlen);
	if (strcmp(k, "autostart") == 0) {
		if ((rc = once(&p->seen_autostart, k, name, line, err, errlen)))
			return rc;
		if ((b = parse_bool(v)) < 0)
			return config_fail(err, errlen, name, line,
				     "autostart: expected yes or no, not '%.64s'",
				     v);
		p->out->autostart = b;
		return 0;
	}
	if (strcmp(k, "durability") == 0) {
		if ((rc = once(&p->seen_durability, k, name, line, err,
			       errlen)))
			return rc;
		if (strcmp(v, "none") && strcmp(v, "stop") &&
		    strcmp(v, "commit"))
			return config_fail(err, errlen, name, line,
				     "durability: expected none, stop or "
				     "commit, not '%.64s'",
				     v);
		p->durability = !strcmp(v, "none")   ? "none"
				: !strcmp(v, "stop") ? "stop"
						     : "commit";
		return 0;
	}
	if (strcmp(k, "env") == 0)
		return parse_env(p, v, name, line, err, errlen);
	if (strcmp(k, "arg") == 0)
		return json_array_append_new(p->args, json_string(v)) ? -ENOMEM
								      : 0;
	if (strcmp(k, "preopen") == 0)
		return json_array_append_new(p->preopens, json_string(v))
			       ? -ENOMEM
			       : 0;
	for (size_t i = 0; i < NLIMIT_KEYS; i++)
		if (strcmp(k, limit_keys[i].key) == 0)
			return parse_limit(p, &limit_keys[i], v, name, line,
					   err, errlen);
	return config_fail(err, errlen, name, line, "unknown key '%.64s'", k);
}

static int parse_line(void *arg, const char *name, unsigned line,
		      const char *s, const char *e, char *err, size_t errlen)
{
	const char *eq = memchr(s, '=', (size_t)(e - s));
	const char *ke, *v;
	char *k, *val;
	int rc;

	if (!eq)
		return config_fail(err, errlen, name, line, "expected 'key = value'");
	for (ke = eq; ke > s && (ke[-1] == ' ' || ke[-1] == '\t'); ke--)
		;
	for (v = eq + 1; v < e && (*v == ' ' || *v == '\t'); v++)
		;
	if (ke == s)
		return config_fail(err, errlen, name, line, "missing key before '='");
	if (v == e)
		return config_fail(err, errlen, name, line, "empty value");
	k = strndup(s, (size_t)(ke - s));
	val = strndup(v, (size_t)(e - v));
	rc = k && val ? parse_kv(arg, k, val, name, line, err, errlen)
		      : -ENOMEM;
	free(k);
	free(val);
	return rc;
}

/* The Config text: only what the file set, in a fixed order. */
static char *config_text(struct parse *p)
{
	json_t *c = json_object();
	char *text = NULL;

	if (c && (json_object_size(p->env) == 0 ||
		  json_object_set(c, "env", p->env) == 0) &&
	    (json_array_size(p->args) == 0 ||
	     json_object_set(c, "args", p->args) == 0) &&
	    (json_array_size(p->preopens) == 0 ||
	     json_object_set(c, "preopens", p->preopens) == 0) &&
	    (json_object_size(p->limits) == 0 ||
	     json_object_set(c, "limits", p->limits) == 0) &&
	    (!p->durability ||
	     json_object_set_new(c, "durability",
				 json_string(p->durability)) == 0))
		text = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(c);
	return text;
}

/* NAME of DIR/NAME.conf, or -EINVAL. */
static int file_name(const char *path, char name[SERVICE_NAME_MAX + 1])
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n <= 5 || strcmp(base + n - 5, ".conf") != 0 ||
	    n - 5 > SERVICE_NAME_MAX)
		return -EINVAL;
	memcpy(name, base, n - 5);
	name[n - 5] = '\0';
	return service_name_valid(name) ? 0 : -EINVAL;
}

int service_file_parse(const char *path, const char *text, size_t len,
		       struct service_file *out, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	struct parse p = {
		.dir = slash ? path : ".",
		.dirlen = slash ? (size_t)(slash - path) : 1,
		.out = out,
	};
	struct service_limits lim;
	char why[320];
	int rc;

	memset(out, 0, sizeof(*out));
	out->autostart = true;
	out->owner = -1;
	if (file_name(path, out->name))
		return config_fail(err, errlen, path, 0,
			     "the file name is not NAME.conf with a valid "
			     "service name");
	p.env = json_object();
	p.args = json_array();
	p.preopens = json_array();
	p.limits = json_object();
	rc = p.env && p.args && p.preopens && p.limits
		     ? config_lines(path, text, len, parse_line, &p, err,
				    errlen)
		     : -ENOMEM;
	if (rc == 0 && !out->component)
		rc = config_fail(err, errlen, path, 0, "no component = PATH");
	if (rc == 0 && !(out->config = config_text(&p)))
		rc = -ENOMEM;
	/* What a client's Create would be refused for (limits, WASI). */
	if (rc == 0 &&
	    service_parse_limits(out->config, &lim, why, sizeof(why)))
		rc = config_fail(err, errlen, path, 0, "%s", why);
	json_decref(p.env);
	json_decref(p.args);
	json_decref(p.preopens);
	json_decref(p.limits);
	if (rc) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "%s: out of memory", path);
		service_file_clear(out);
	}
	return rc;
}

void service_file_clear(struct service_file *f)
{
	free(f->component);
	free(f->config);
	memset(f, 0, sizeof(*f));
	f->owner = -1;
}

/* ---- reconciling -------------------------------------------------------------- */

int services_dir_path(const struct config *file, const char *config_path,
		      char *buf, size_t size)
{
	const char *slash;
	int n;

	if (file->services_dir)
		n = snprintf(buf, size, "%s", file->services_dir);
	else if (config_path && (slash = strrchr(config_path, '/')))
		n = snprintf(buf, size, "%.*s/services.d",
			     (int)(slash - config_path), config_path);
	else
		return 0;
	return n > 0 && (size_t)n < size ? 1 : 0;
}

/* The component's bytes (*blob, *len; the caller frees), checked. */
/*
 * The component's bytes (*blob, *len; the caller frees), checked to load
 * unless their sha256 is `known` (a component already stored: a reload
 * of an unchanged file decodes nothing).  *sha gets it (may be NULL).
 */
static int read_component(const struct service_file *f, const char *path,
			  const char *known, uint8_t **blob, size_t *len,
			  char sha[SHA256_HEX_SIZE], char *err, size_t errlen)
{
	char digest[SHA256_HEX_SIZE];

	struct stat st;
	cm_component *c;
	wasm_error werr;
	size_t got = 0;
	int fd, rc = 0;

	*blob = NULL;
	fd = open(f->component, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)COMPONENT_SIZE_MAX) {
		rc = config_fail(err, errlen, path, 0, "component %.200s: %s",
			   f->component,
			   fd < 0 ? strerror(errno)
			   : !S_ISREG(st.st_mode) ? "not a regular file"
						   : "larger than 256 MiB");
		if (fd >= 0)
			close(fd);
		return rc;
	}
	*blob = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	while (*blob && got < (size_t)st.st_size) {
		ssize_t n = read(fd, *blob + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!*blob)
		return -ENOMEM;
	memset(&werr, 0, sizeof(werr));
	if (got == (size_t)st.st_size)
		sha256_hex(*blob, got, sha ? sha : digest);
	if (got != (size_t)st.st_size)
		rc = config_fail(err, errlen, path, 0, "component %.200s: short read",
			   f->component);
	else if (known && strcmp(known, sha ? sha : digest) == 0)
		rc = 0;
	else if (cm_component_load(*blob, got, &c, &werr))
		rc = config_fail(err, errlen, path, 0, "component %.200s: %s: %.200s",
			   f->component,
			   werr.kind == WASM_ERR_MALFORMED ? "malformed"
							   : "invalid",
			   werr.msg);
	else
		cm_component_free(c);
	if (rc) {
		free(*blob);
		*blob = NULL;
	}
	*len = got;
	return rc;
}

/*
 * The component's bytes, checked and added; its sha256 in sha.  `known`:
 * the component the file's service has now (NULL: none).
 */
static int add_component(struct daemon *d, const struct service_file *f,
			 const char *path, const char *known,
			 char sha[SHA256_HEX_SIZE], char *err, size_t errlen)
{
	struct db *db = daemon_history_db(d);
	uint8_t *blob;
	size_t len;
	bool created;
	int rc;

	if (!db)
		return config_fail(err, errlen, path, 0, "the history is not open");
	if ((rc = read_component(f, path, known, &blob, &len, sha, err,
				 errlen)))
		return rc;
	if (known && strcmp(known, sha) == 0) {
		free(blob);
		return 0; /* stored already */
	}
	rc = components_add(db, blob, len, NULL, sha, &created);
	if (rc)
		rc = config_fail(err, errlen, path, 0, "component %.200s: %s",
			   f->component, db_errmsg(db));
	free(blob);
	return rc;
}

static bool same(const struct service *s, const struct service_file *f,
		 const char *sha, const char *path)
{
	return strcmp(s->component, sha) == 0 &&
	       strcmp(s->config, f->config) == 0 &&
	       s->autostart == f->autostart && s->owner == f->owner &&
	       s->source && strcmp(s->source, path) == 0;
}

/* Make the service of file `path` what it declares. */
static int apply(struct daemon *d, const char *path,
		 const struct service_file *f, char *err, size_t errlen)
{
	struct service *s = service_find(d, f->name);
	char sha[SHA256_HEX_SIZE];
	const char *kind = NULL;
	int rc;

	if (s && !s->source)
		return config_fail(err, errlen, path, 0,
			     "a service '%s' made by a client exists (remove "
			     "it to declare it in a file)",
			     f->name);
	if ((rc = add_component(d, f, path, s ? s->component : NULL, sha, err,
				errlen)))
		return rc;
	if (s && same(s, f, sha, path))
		return 0;
	if (s) {
		rc = service_update(s, sha, f->config, f->autostart, f->owner,
				    path, "its services.d file changed");
		if (rc == 0)
			log_info(&d->log, "service %s: updated from %s",
				 f->name, path);
	} else {
		rc = service_create(d, f->name, sha, f->config, f->autostart,
				    f->owner, path, &s);
		if (rc == 0) {
			log_info(&d->log,
				 "service %s: created from %s (component %s)",
				 f->name, path, sha);
			if (f->autostart)
				service_start(s, &kind);
		}
	}
	if (rc)
		return config_fail(err, errlen, path, 0, "%s",
			     rc == -ENOMEM ? "out of memory"
			     : daemon_history_db(d)
				     ? db_errmsg(daemon_history_db(d))
				     : strerror(-rc));
	return 0;
}

static int conf_filter(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] != '.' && n > 5 &&
	       strcmp(e->d_name + n - 5, ".conf") == 0;
}

/* Was `source` among the files found (valid or not)? */
static bool listed(struct dirent **files, int n, const char *dir,
		   const char *source)
{
	size_t dl = strlen(dir);

	if (strncmp(source, dir, dl) != 0 || source[dl] != '/')
		return false;
	for (int i = 0; i < n; i++)
		if (strcmp(files[i]->d_name, source + dl + 1) == 0)
			return true;
	return false;
}

/* Services whose file is gone are stopped and removed. */
static void remove_orphans(struct daemon *d, struct dirent **files, int n,
			   const char *dir)
{
	struct service *s = d->services ? d->services->head : NULL;

	while (s) {
		struct service *next = s->next;

		if (s->source && !listed(files, n, dir, s->source)) {
			char name[SERVICE_NAME_MAX + 1], src[PATH_MAX];

			snprintf(name, sizeof(name), "%s", s->name);
			snprintf(src, sizeof(src), "%s", s->source);
			if (service_remove(s) == 0)
				log_info(&d->log,
					 "service %s: removed (%s is gone)",
					 name, src);
			else
				log_err(&d->log, "service %s: cannot remove",
					name);
		}
		s = next;
	}
}

/*
 * The NAME.conf files of dir (sorted; *files freed by free_files): the
 * count, 0 when dir does not exist, or -errno.
 */
static int list_files(const char *dir, struct dirent ***files)
{
	int n = scandir(dir, files, conf_filter, alphasort);

	if (n < 0) {
		*files = NULL;
		return errno == ENOENT ? 0 : -errno;
	}
	return n;
}

static void free_files(struct dirent **files, int n)
{
	for (int i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

/* Read and parse file i of dir into *f; 0 or -errno with err said. */
static int load_file(const char *dir, const struct dirent *e,
		     struct service_file *f, char path[PATH_MAX], char *err,
		     size_t errlen)
{
	char *text;
	size_t len;
	int rc;

	if (snprintf(path, PATH_MAX, "%s/%.255s", dir, e->d_name) >=
	    PATH_MAX) {
		snprintf(err, errlen, "%s/%s: path too long", dir, e->d_name);
		return -ENAMETOOLONG;
	}
	rc = config_read_file(path, &text, &len, err, errlen);
	if (rc == 0) {
		rc = service_file_parse(path, text, len, f, err, errlen);
		free(text);
	}
	return rc;
}

int services_dir_check(const struct config *file, const char *config_path,
		       FILE *out)
{
	struct dirent **files;
	char dir[PATH_MAX];
	int n, bad = 0;

	if (!services_dir_path(file, config_path, dir, sizeof(dir)))
		return 0;
	if ((n = list_files(dir, &files)) < 0) {
		fprintf(out, "services.d: %s: %s\n", dir, strerror(-n));
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct service_file f;
		char path[PATH_MAX], err[512];
		uint8_t *blob = NULL;
		size_t len;
		int rc = load_file(dir, files[i], &f, path, err, sizeof(err));

		if (rc == 0) {
			rc = read_component(&f, path, NULL, &blob, &len, NULL, err,
					    sizeof(err));
			free(blob);
			service_file_clear(&f);
		}
		if (rc) {
			fprintf(out, "services.d: %s\n", err);
			bad++;
		} else {
			fprintf(out, "services.d: %s: ok\n", path);
		}
	}
	free_files(files, n);
	return bad;
}

int services_dir_reconcile(struct daemon *d)
{
	struct dirent **files = NULL;
	char dir[PATH_MAX];
	int n = 0, refused = 0;

	if (!services_dir_path(&d->file, d->config_path, dir, sizeof(dir)))
		dir[0] = '\0';
	else if ((n = list_files(dir, &files)) < 0) {
		log_err(&d->log, "services.d: %s: %s", dir, strerror(-n));
		return n;
	}
	for (int i = 0; i < n; i++) {
		struct service_file f;
		char path[PATH_MAX], err[512];
		int rc;

		if (i >= SERVICES_DIR_FILES_MAX) {
			log_err(&d->log, "services.d: %s: more than %d files; "
					 "%s and the rest are ignored",
				dir, SERVICES_DIR_FILES_MAX, files[i]->d_name);
			refused += n - i;
			break;
		}
		rc = load_file(dir, files[i], &f, path, err, sizeof(err));
		if (rc == 0) {
			rc = apply(d, path, &f, err, sizeof(err));
			service_file_clear(&f);
		}
		if (rc) {
			log_err(&d->log, "services.d: %s", err);
			refused++;
		}
	}
	/* Every file found counts, those past the bound too: their
	 * services stay. */
	remove_orphans(d, files, n, dir);
	free_files(files, n);
	return refused;
}
