/*
 * service-wasi.c - the WASI host of a service store (see service-wasi.h):
 * configuration to wasi_ctx, output capture into the history and the
 * log.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - configure, split_preopen: copies of the config's args, env and
 *    preopen paths, at most the config's text (VARLINK_MESSAGE_MAX, 16
 *    MiB, when it was deployed); preopens SERVICE_WASI_MAX_PREOPENS
 *    (64), each one fd while the store lives, "preopens: more than N".
 *  - on_output (guest stdout/stderr): nothing grows: the history's line
 *    buffer is HISTORY_LINE_MAX per stream (store/guest-output.h), the
 *    log's SERVICE_WASI_LOG_LINE, and logged lines are rate limited.
 */
#define _GNU_SOURCE /* O_PATH */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/history-hooks.h"
#include "daemon/service-wasi.h"
#include "daemon/service.h"

/* What the log keeps of one stream: its current line, cut short. */
struct log_line {
	size_t len;
	bool cut; /* the line ran past SERVICE_WASI_LOG_LINE */
	char buf[SERVICE_WASI_LOG_LINE];
};

struct service_wasi {
	struct service *s;
	wasi_ctx *ctx;
	struct daemon_clock *clock; /* wakes its WASI 0.3 waits */
	struct guest_output out[2]; /* stdout, stderr: history lines */
	bool out_ready[2];
	struct log_line log[2];
	/* Token bucket of log lines (milli-lines, refilled by time). */
	uint64_t tokens, refill_ms;
	uint64_t suppressed;
	bool warned; /* a refused line was logged once already */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- configuration ------------------------------------------------------ */

static int fail(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Split "HOST[::GUEST]"; -1 with why when malformed. */
static int split_preopen(const char *spec, char **host, const char **guest,
			 char *why, size_t whylen)
{
	const char *sep = strstr(spec, "::");

	*host = NULL;
	*guest = sep ? sep + 2 : spec;
	if (spec[0] != '/')
		return fail(why, whylen,
			    "preopens: \"%.100s\": the host directory must be "
			    "an absolute path",
			    spec);
	if (**guest == '\0')
		return fail(why, whylen,
			    "preopens: \"%.100s\": empty guest path", spec);
	*host = sep ? strndup(spec, (size_t)(sep - spec)) : strdup(spec);
	if (!*host)
		return fail(why, whylen, "%s", "out of memory");
	return 0;
}

int service_wasi_check_config(json_t *config, char *why, size_t whylen)
{
	json_t *env = json_object_get(config, "env");
	json_t *args = json_object_get(config, "args");
	json_t *pre = json_object_get(config, "preopens");
	const char *key;
	json_t *v;
	size_t i;

	if (env && !json_is_null(env)) {
		if (!json_is_object(env))
			return fail(why, whylen, "%s",
				    "env: expected an object of strings");
		json_object_foreach(env, key, v)
		{
			if (!json_is_string(v))
				return fail(why, whylen,
					    "env.%.100s: expected a string",
					    key);
			if (!key[0] || strchr(key, '='))
				return fail(why, whylen,
					    "env: bad variable name \"%.100s\"",
					    key);
		}
	}
	if (args && !json_is_null(args)) {
		if (!json_is_array(args))
			return fail(why, whylen, "%s",
				    "args: expected a list of strings");
		json_array_foreach(args, i, v)
		{
			if (!json_is_string(v))
				return fail(why, whylen, "%s",
					    "args: expected a list of strings");
		}
	}
	if (pre && !json_is_null(pre)) {
		if (!json_is_array(pre))
			return fail(why, whylen, "%s",
				    "preopens: expected a list of strings");
		if (json_array_size(pre) > SERVICE_WASI_MAX_PREOPENS)
			return fail(why, whylen, "preopens: more than %d",
				    SERVICE_WASI_MAX_PREOPENS);
		json_array_foreach(pre, i, v)
		{
			const char *guest;
			char *host;

			if (!json_is_string(v))
				return fail(why, whylen, "%s",
					    "preopens: expected a list of "
					    "strings");
			if (split_preopen(json_string_value(v), &host, &guest,
					  why, whylen))
				return -1;
			free(host);
		}
	}
	return 0;
}

/*
 * Preopens are opened with the daemon's rights, and deploying must not
 * lend them: a service owned by a user other than root or the daemon's
 * own uid may only preopen directories that user owns.  The owner is
 * checked on the opened directory, and the ctx opens that very directory
 * again through /proc/self/fd, so a path swapped between check and use
 * cannot slip by.
 */
static int preopen(struct service_wasi *w, const char *host, const char *guest,
		   char *why, size_t whylen)
{
	int64_t owner = w->s->owner;
	char proc[64];
	struct stat st;
	int fd, rc;

	if (owner < 0 || owner == 0 || owner == (int64_t)geteuid()) {
		if (wasi_ctx_preopen(w->ctx, host, guest) == 0)
			return 0;
		return fail(why, whylen, "preopen %.100s: %s", host,
			    strerror(errno));
	}
	fd = open(host, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = fail(why, whylen, "preopen %.100s: %s", host,
			  strerror(errno));
		goto out;
	}
	if ((int64_t)st.st_uid != owner) {
		rc = fail(why, whylen,
			  "preopen %.100s: owned by uid %lu, not by the "
			  "service's owner (uid %lld)",
			  host, (unsigned long)st.st_uid, (long long)owner);
		goto out;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rc = wasi_ctx_preopen(w->ctx, proc, guest);
	if (rc)
		fail(why, whylen, "preopen %.100s: %s", host, strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	return rc ? -1 : 0;
}

static int configure(struct service_wasi *w, json_t *config, char *why,
		     size_t whylen)
{
	json_t *env = json_object_get(config, "env");
	json_t *args = json_object_get(config, "args");
	json_t *pre = json_object_get(config, "preopens");
	const char *key;
	json_t *v;
	size_t i;

	if (service_wasi_check_config(config, why, whylen))
		return -1;
	/* argv[0]: the program's name, as a shell would give it. */
	if (wasi_ctx_push_arg(w->ctx, w->s->name))
		goto oom;
	json_array_foreach(args, i, v)
	{
		if (wasi_ctx_push_arg(w->ctx, json_string_value(v)))
			goto oom;
	}
	json_object_foreach(env, key, v)
	{
		if (wasi_ctx_push_env(w->ctx, key, json_string_value(v)))
			goto oom;
	}
	json_array_foreach(pre, i, v)
	{
		const char *spec = json_string_value(v), *guest;
		char *host;
		int rc;

		if (split_preopen(spec, &host, &guest, why, whylen))
			return -1;
		rc = preopen(w, host, guest, why, whylen);
		free(host);
		if (rc)
			return -1;
	}
	return 0;
oom:
	snprintf(why, whylen, "out of memory");
	return -1;
}

/* ---- output ------------------------------------------------------------- */

static const char *stream_name(int i)
{
	return i == 0 ? "stdout" : "stderr";
}

/* May one more line be logged now?  Counts those that may not. */
static bool log_allowed(struct service_wasi *w)
{
	const uint64_t cap = SERVICE_WASI_LOG_BURST * 1000u;
	uint64_t now = mono_ms();

	w->tokens += (now - w->refill_ms) * SERVICE_WASI_LOG_RATE;
	if (w->tokens > cap)
		w->tokens = cap;
	w->refill_ms = now;
	if (w->tokens < 1000) {
		w->suppressed++;
		return false;
	}
	w->tokens -= 1000;
	return true;
}

static void log_line_end(struct service_wasi *w, int i)
{
	struct log_line *l = &w->log[i];
	struct service *s = w->s;

	if (log_allowed(w)) {
		if (w->suppressed) {
			log_info(&s->d->log,
				 "service %s: %llu guest output line(s) not "
				 "logged (rate limit; the history has them)",
				 s->name, (unsigned long long)w->suppressed);
			w->suppressed = 0;
		}
		log_info(&s->d->log, "service %s: %s: %.*s%s", s->name,
			 stream_name(i), (int)l->len, l->buf,
			 l->cut ? " [...]" : "");
	}
	l->len = 0;
	l->cut = false;
}

static void log_feed(struct service_wasi *w, int i, const uint8_t *p, size_t n)
{
	struct log_line *l = &w->log[i];

	for (size_t k = 0; k < n; k++) {
		if (p[k] == '\n') {
			log_line_end(w, i);
		} else if (l->len < sizeof(l->buf)) {
			l->buf[l->len++] = (char)p[k];
		} else {
			l->cut = true;
		}
	}
}

static void on_output(void *env, int fd, const uint8_t *bytes, size_t len)
{
	struct service_wasi *w = env;
	const struct history_hooks *h = daemon_history_hooks(w->s->d);
	int i = fd == 2 ? 1 : 0;
	int rc;

	if (h && w->out_ready[i]) {
		rc = h->guest_output(h->ctx, &w->out[i], (const char *)bytes,
				     len);
		/* Once per store: a failing history must not flood the log. */
		if (rc && !w->warned) {
			w->warned = true;
			log_warn(&w->s->d->log,
				 "service %s: guest %s not recorded: %s "
				 "(further losses are not logged)",
				 w->s->name, stream_name(i), strerror(-rc));
		}
	}
	log_feed(w, i, bytes, len);
}

/* ---- lifecycle ---------------------------------------------------------- */

struct service_wasi *service_wasi_new(struct service *s, cm_linker *l,
				      char *why, size_t whylen)
{
	struct service_wasi *w = calloc(1, sizeof(*w));
	json_t *config = NULL;

	if (!w || !(w->ctx = wasi_ctx_new())) {
		snprintf(why, whylen, "out of memory");
		free(w);
		return NULL;
	}
	w->s = s;
	w->tokens = SERVICE_WASI_LOG_BURST * 1000u;
	w->refill_ms = mono_ms();
	for (int i = 0; i < 2; i++) {
		if (guest_output_init(&w->out[i], s->name, i + 1)) {
			snprintf(why, whylen, "out of memory");
			goto fail;
		}
		w->out_ready[i] = true;
	}
	config = json_loads(s->config ? s->config : "{}", 0, NULL);
	if (!json_is_object(config)) {
		snprintf(why, whylen, "config: expected an object");
		goto fail;
	}
	if (configure(w, config, why, whylen))
		goto fail;
	w->clock = daemon_clock_attach(s->d->base, w->ctx);
	if (!w->clock) {
		snprintf(why, whylen, "out of memory");
		goto fail;
	}
	wasi_ctx_set_stdio(w->ctx, -1, -1, -1);
	wasi_ctx_set_output(w->ctx, on_output, w);
	if (wasi_add_to_linker(w->ctx, l)) {
		snprintf(why, whylen, "WASI: cannot define its imports");
		goto fail;
	}
	json_decref(config);
	return w;
fail:
	json_decref(config);
	service_wasi_free(w);
	return NULL;
}

void service_wasi_free(struct service_wasi *w)
{
	const struct history_hooks *h;

	if (!w)
		return;
	h = daemon_history_hooks(w->s->d);
	for (int i = 0; i < 2; i++) {
		/*
		 * The hooks have no flush: a newline ends the partial line
		 * exactly as guest_output_flush would (a line already cut
		 * as truncated is not recorded twice).
		 */
		if (h && w->out_ready[i] && w->out[i].len > 0)
			h->guest_output(h->ctx, &w->out[i], "\n", 1);
		if (w->log[i].len > 0)
			log_line_end(w, i);
		if (w->out_ready[i])
			guest_output_fini(&w->out[i]);
	}
	if (w->suppressed)
		log_info(&w->s->d->log,
			 "service %s: %llu guest output line(s) not logged "
			 "(rate limit; the history has them)",
			 w->s->name, (unsigned long long)w->suppressed);
	wasi_ctx_free(w->ctx);
	daemon_clock_free(w->clock);
	free(w);
}

wasi_ctx *service_wasi_ctx(struct service_wasi *w)
{
	return w ? w->ctx : NULL;
}
