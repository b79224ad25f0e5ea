/*
 * durable.c - a service's durable store (see durable.h): snapshots on a
 * graceful stop and on request, images with the history's commits, and
 * the restore of the snapshot and its deltas when a service starts, and
 * the deadlines of the calls a restore brings back in flight.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - a snapshot or image: the runtime bounds it (CM_SNAPSHOT_MAX_BYTES);
 *    an image is handed to the batch, which frees it once written or
 *    dropped; the compaction rule bounds how many one service has in a
 *    batch whose commits keep failing (a full image replaces the ones
 *    before it).
 *  - the base of a service's deltas: 8 bytes per page of its memories,
 *    which its memory limit bounds.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "daemon/daemon.h"
#include "daemon/durable.h"
#include "daemon/history-hooks.h"
#include "daemon/invocation.h"
#include "daemon/service.h"
#include "run/snapshot.h"
#include "store/db.h"
#include "store/snapshots.h"

static struct db *db_of(const struct service *s)
{
	return daemon_history_db(s->d);
}

static void sha_bytes(const char *hex, uint8_t out[32])
{
	memset(out, 0, 32);
	for (int i = 0; i < 64 && hex[i]; i++) {
		char c = hex[i];
		int v = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
					       : 0;

		out[i / 2] |= (uint8_t)(i % 2 ? v : v << 4);
	}
}

static void store_event(struct service *s, const char *kind, json_t *p)
{
	const struct history_hooks *h = daemon_history_hooks(s->d);

	if (h && p)
		h->event(h->ctx, s->name, NULL, kind, p, NULL, NULL);
	json_decref(p);
}

/* ---- commit: images with the history's commits -------------------------- */

static void interval_cb(evutil_socket_t fd, short what, void *arg);
static void arm_interval(struct service *s);
static uint64_t interval_ms(const struct service *s);

void durable_store_new(struct service *s)
{
	cm_snap_base_reset(s->snap_base);
	s->image_dirty = true;
	s->image_failing = false;
	s->image_transient_ns = 0;
	s->image_retry_ns = 0;
	s->image_backoff_ms = 0;
	if (interval_ms(s) &&
	    (s->ev_snapshot ||
	     (s->ev_snapshot = evtimer_new(s->d->base, interval_cb, s))))
		arm_interval(s);
}

/* ---- calls a restore brought back in flight ------------------------------ */

struct restored_call {
	struct service *svc;
	cm_call *call;
	struct event *ev;
	struct restored_call *next;
};

static void restored_unlink(struct restored_call *rc)
{
	struct restored_call **p = &rc->svc->restored_calls;

	while (*p && *p != rc)
		p = &(*p)->next;
	if (*p)
		*p = rc->next;
	if (rc->ev)
		event_free(rc->ev);
	free(rc);
}

static void restored_done(void *ctx, cm_call_outcome outcome,
			  const cm_val *results, uint32_t nresults,
			  const cm_error *err)
{
	struct restored_call *rc = ctx;
	struct service *s = rc->svc;

	(void)results;
	(void)nresults;
	log_info(&s->d->log, "service %s: a call restored in flight %s%s%s",
		 s->name,
		 outcome == CM_CALL_RETURNED  ? "returned"
		 : outcome == CM_CALL_TRAPPED ? "trapped"
					      : "was cancelled",
		 err && err->msg[0] ? ": " : "", err ? err->msg : "");
	/* its trap poisoned the instance: the turn's end (or the deadline)
	 * records it and recreates the store */
	if (outcome == CM_CALL_TRAPPED)
		service_note_trap(s, "restored in flight",
				  err ? err->msg : "trapped");
	restored_unlink(rc);
}

static void restored_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct restored_call *rc = arg;
	struct service *s = rc->svc;

	(void)fd;
	(void)what;
	log_info(&s->d->log,
		 "service %s: a call restored in flight exceeded its deadline",
		 s->name);
	/* on_done (restored_done) frees rc */
	if (cm_call_cancel(rc->call, "deadline exceeded") == CM_CALL_TRAPPED)
		service_poisoned(s, "a call restored in flight exceeded its "
				    "deadline");
}

int durable_restored_calls(struct service *s)
{
	uint64_t ms = invocation_deadline(s->d, s, -1);
	cm_call *c;

	for (uint32_t k = 0; (c = cm_store_restored_call(s->store, k)); k++) {
		struct restored_call *rc = calloc(1, sizeof(*rc));
		struct timeval tv = {(time_t)(ms / 1000),
				     (suseconds_t)(ms % 1000) * 1000};

		if (!rc || (ms && !(rc->ev = evtimer_new(s->d->base,
							  restored_deadline_cb,
							  rc)))) {
			free(rc);
			return -1;
		}
		rc->svc = s;
		rc->call = c;
		rc->next = s->restored_calls;
		s->restored_calls = rc;
		cm_call_set_done(c, restored_done, rc);
		if (rc->ev)
			evtimer_add(rc->ev, &tv);
	}
	return 0;
}

void durable_store_drop(struct service *s)
{
	/* the store freed its calls without on_done */
	while (s->restored_calls)
		restored_unlink(s->restored_calls);
	cm_snap_base_free(s->snap_base);
	s->snap_base = NULL;
	s->image_dirty = false;
	if (s->ev_snapshot)
		event_free(s->ev_snapshot);
	s->ev_snapshot = NULL;
}

int durable_fold(void *arg, const void *full, size_t flen, const void *delta,
		 size_t dlen, void **out, size_t *outlen, char *why,
		 size_t whylen)
{
	uint8_t *p = NULL;
	cm_error err;

	(void)arg;
	memset(&err, 0, sizeof(err));
	if (cm_snapshot_fold(full, flen, delta, dlen, &p, outlen, &err)) {
		snprintf(why, whylen, "%s", err.msg);
		return -1;
	}
	*out = p;
	return 0;
}

void durable_image_dropped(void *d, const char *service, bool over)
{
	struct service *s = service_find(d, service);

	if (!s)
		return;
	cm_snap_base_reset(s->snap_base);
	/* the folds fell behind: the full image replaces the deltas */
	s->image_compact = over;
}

/*
 * HOSTEL_SNAPSHOT_VERIFY (tests/tap.sh sets it for every shell test):
 * each delta also reads the pages no written map marked, and a changed
 * one is an engine bug that a delta without the check would have lost:
 * hosteld says so and aborts, so that the test fails where it happened.
 */
static void verify_maps(struct service *s)
{
	uint64_t missed = cm_snap_base_missed(s->snap_base);

	if (missed == 0)
		return;
	log_err(&s->d->log,
		"service %s: the written map missed %llu changed page(s) "
		"(HOSTEL_SNAPSHOT_VERIFY): an engine bug",
		s->name, (unsigned long long)missed);
	abort();
}

/* How long images may be refused while a thread is stopped out of fuel
 * before the refusal is logged and recorded (docs/limits.md). */
#define IMAGE_TRANSIENT_MS 10000u

/*
 * A refusal: the first of a run is logged and recorded.  A thread of
 * background work stopped out of fuel mid-code is written where it
 * stopped; the stops the format cannot write (a call in flight's, a
 * tail call's, a frame holding references) pass by themselves with its
 * next turns: only a run of refusals while one is stopped longer than
 * IMAGE_TRANSIENT_MS is (a debug line before).
 */
static void capture_refused(struct service *s, const char *trigger,
			    const char *why)
{
	uint64_t now = service_mono_ns();

	if (s->image_failing)
		return;
	if (s->store && cm_store_stopped_mid_code(s->store)) {
		if (!s->image_transient_ns)
			s->image_transient_ns = now;
		if (now - s->image_transient_ns <
		    (uint64_t)IMAGE_TRANSIENT_MS * 1000000u) {
			log_debug(&s->d->log,
				  "service %s: no store image with this "
				  "commit: %s",
				  s->name, why);
			return;
		}
	}
	s->image_failing = true;
	log_warn(&s->d->log,
		 "service %s: no store image with this commit: %s (the next "
		 "commit tries again)",
		 s->name, why);
	store_event(s, HISTORY_STORE_SNAPSHOT_FAILED,
		    json_pack("{ss,ss}", "reason", why, "trigger", trigger));
}

/*
 * The image of s into the current batch: a delta, or a full snapshot
 * (`trigger` says why: "commit" for a store's first, "compaction",
 * "request", "stop").  0, or -1 with why.
 */
static int capture(struct service *s, const char *trigger, bool want_full,
		   uint64_t *bytes, char *why, size_t whylen)
{
	const struct history_hooks *h = daemon_history_hooks(s->d);
	uint64_t t0 = service_mono_ns();
	uint8_t sha[32], *buf = NULL;
	size_t len = 0;
	cm_error err;
	bool full;
	int rc;

	*bytes = 0;
	if (!h || !h->store_image) {
		snprintf(why, whylen, "the history is off");
		return -1;
	}
	if (!s->snap_base && !(s->snap_base = cm_snap_base_new())) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	/* the tests' check of the memories' written maps (see verify_maps) */
	{
		const char *v = getenv("HOSTEL_SNAPSHOT_VERIFY");

		if (v && *v && strcmp(v, "0"))
			cm_snap_base_verify(s->snap_base, true);
	}
	/* the history's writer folds the deltas (store/folds.h); it asks
	 * for a full image only when they pass the hard bound */
	full = want_full || !cm_snap_base_valid(s->snap_base);
	if (full && !want_full && s->image_compact)
		trigger = "compaction";
	memset(&err, 0, sizeof(err));
	sha_bytes(s->component, sha);
	if (cm_store_snapshot_base(s->store, sha, s->snap_base, !full, &buf,
				   &len, &err)) {
		snprintf(why, whylen, "%s", err.msg);
		return -1;
	}
	verify_maps(s);
	rc = h->store_image(h->ctx, s->name, s->component, CM_SNAPSHOT_FORMAT,
			    full, buf, len);
	if (rc) {
		cm_snap_base_reset(s->snap_base);
		snprintf(why, whylen, "%s", strerror(-rc));
		return -1;
	}
	*bytes = len;
	s->image_dirty = false;
	if (s->image_failing)
		log_info(&s->d->log, "service %s: store images again", s->name);
	s->image_failing = false;
	s->image_transient_ns = 0;
	if (!full)
		return 0;
	s->image_compact = false;
	store_event(s, HISTORY_STORE_SNAPSHOTTED,
		    json_pack("{sI,sI,ss}", "bytes", (json_int_t)len, "ms",
			      (json_int_t)((service_mono_ns() - t0) / 1000000u),
			      "trigger", trigger));
	return 0;
}

/*
 * A full image that failed after real work (too large, "not supported
 * yet" found past the memories: more than FULL_RETRY_COST_NS) is tried
 * again after this pause, doubled at each failure up to the max, so a
 * store that cannot be written does not cost a read of all its pages at
 * every commit; a delta refused keeps the base (run/snapshot.h) and
 * costs only the pages written, so it is tried at every commit.
 */
#define FULL_RETRY_MIN_MS  1000u
#define FULL_RETRY_MAX_MS  60000u
#define FULL_RETRY_COST_NS 1000000u /* a failure that took this long */

static bool commit_mode(const struct service *s)
{
	return service_durability(s) == SERVICE_DURABILITY_COMMIT &&
	       s->state == SERVICE_RUNNING && s->store;
}

void durable_capture_all(struct daemon *d)
{
	char why[CM_ERROR_MSG_MAX];
	uint64_t bytes;

	if (!d->services)
		return;
	for (struct service *s = d->services->head; s; s = s->next) {
		uint64_t now;
		bool full;

		if (!s->image_dirty || !commit_mode(s))
			continue;
		/* a full image that failed is tried again only after a
		 * pause: each try reads every page of the store */
		full = !cm_snap_base_valid(s->snap_base);
		now = service_mono_ns();
		if (full && now < s->image_retry_ns)
			continue;
		if (capture(s, "commit", false, &bytes, why, sizeof(why))) {
			capture_refused(s, "commit", why);
			/* (a refusal found before any page was read, a
			 * thread inside guest code, costs nothing: no
			 * pause for it) */
			if (full &&
			    service_mono_ns() - now > FULL_RETRY_COST_NS) {
				s->image_backoff_ms =
					s->image_backoff_ms
						? s->image_backoff_ms * 2
						: FULL_RETRY_MIN_MS;
				if (s->image_backoff_ms > FULL_RETRY_MAX_MS)
					s->image_backoff_ms = FULL_RETRY_MAX_MS;
				s->image_retry_ns =
					now + s->image_backoff_ms * 1000000u;
			}
		} else {
			s->image_backoff_ms = 0;
		}
	}
}

/* ---- snapshots: stop, request ----------------------------------------- */

/* Durability "stop" (and a request under none): its own transaction. */
static int snapshot_now(struct service *s, uint64_t *bytes, char *why,
			size_t whylen)
{
	struct db *db = db_of(s);
	uint8_t sha[32], *buf = NULL;
	size_t len = 0;
	cm_error err;
	int rc;

	if (!db) {
		snprintf(why, whylen, "the database is not open");
		return -1;
	}
	memset(&err, 0, sizeof(err));
	sha_bytes(s->component, sha);
	rc = cm_store_snapshot(s->store, sha, &buf, &len, &err);
	if (rc)
		snprintf(why, whylen, "%s", err.msg);
	else if (snapshots_put(
			 db, s->name, s->component, CM_SNAPSHOT_FORMAT, buf,
			 len,
			 daemon_history_store(s->d)
				 ? history_last_seq(daemon_history_store(s->d))
				 : 0)) {
		snprintf(why, whylen, "%s", db_errmsg(db));
		rc = -1;
	}
	free(buf);
	*bytes = len;
	if (rc == 0)
		s->image_dirty = false;
	return rc ? -1 : 0;
}

/* ---- stop: a snapshot every snapshot-interval ------------------------- */

static uint64_t interval_ms(const struct service *s)
{
	if (service_durability(s) != SERVICE_DURABILITY_STOP)
		return 0;
	if (s->limits.snapshot_interval_ms)
		return s->limits.snapshot_interval_ms;
	return s->d->file.snapshot_interval > 0
		       ? (uint64_t)s->d->file.snapshot_interval * 1000u
		       : 0;
}

static void arm_interval(struct service *s)
{
	uint64_t ms = interval_ms(s);
	struct timeval tv = {(time_t)(ms / 1000),
			     (suseconds_t)(ms % 1000) * 1000};

	if (s->ev_snapshot)
		evtimer_add(s->ev_snapshot, &tv);
}

/*
 * A store that ran since its last snapshot is snapshotted; one with
 * calls in flight or queued waits for the next interval (no event); a
 * refusal is recorded once for a run of them.
 */
static void interval_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service *s = arg;
	char why[CM_ERROR_MSG_MAX];
	uint64_t t0 = service_mono_ns(), bytes;

	if (s->state == SERVICE_RUNNING && s->store && s->image_dirty &&
	    !s->run_head && !s->queue_head) {
		if (snapshot_now(s, &bytes, why, sizeof(why))) {
			capture_refused(s, "interval", why);
		} else {
			s->image_failing = false;
			log_debug(&s->d->log,
				  "service %s: snapshot of %llu bytes "
				  "(interval)",
				  s->name, (unsigned long long)bytes);
			store_event(s, HISTORY_STORE_SNAPSHOTTED,
				    json_pack("{sI,sI,ss}", "bytes",
					      (json_int_t)bytes, "ms",
					      (json_int_t)((service_mono_ns() -
							    t0) /
							   1000000u),
					      "trigger", "interval"));
		}
	}
	arm_interval(s);
}

/* calls_ok: a graceful stop's, with the calls in flight in it (they
 * are interrupted after it: nothing answers after the image) */
static int take_snapshot(struct service *s, const char *trigger,
			 bool calls_ok, uint64_t *bytes, uint64_t *ms,
			 char *why, size_t whylen)
{
	uint64_t t0 = service_mono_ns();
	bool commit = service_durability(s) == SERVICE_DURABILITY_COMMIT;
	int rc;

	*bytes = *ms = 0;
	if (s->state != SERVICE_RUNNING || !s->store) {
		snprintf(why, whylen, "the service is %s",
			 service_state_name(s->state));
		rc = -1;
	} else if (commit) {
		/* in the commit's order, after the images before it; the
		 * image records its own store.snapshotted */
		rc = capture(s, trigger, true, bytes, why, whylen);
	} else if (!calls_ok && (s->run_head || s->queue_head)) {
		snprintf(why, whylen, "not supported yet: calls in flight");
		rc = -1;
	} else {
		rc = snapshot_now(s, bytes, why, whylen);
	}
	*ms = (service_mono_ns() - t0) / 1000000u;
	if (rc == 0 && !commit)
		store_event(s, HISTORY_STORE_SNAPSHOTTED,
			    json_pack("{sI,sI,ss}", "bytes", (json_int_t)*bytes,
				      "ms", (json_int_t)*ms, "trigger",
				      trigger));
	if (rc) {
		log_warn(&s->d->log, "service %s: no snapshot: %s", s->name,
			 why);
		store_event(s, HISTORY_STORE_SNAPSHOT_FAILED,
			    json_pack("{ss,ss}", "reason", why, "trigger",
				      trigger));
		return -1;
	}
	log_info(&s->d->log, "service %s: snapshot of %llu bytes in %llu ms",
		 s->name, (unsigned long long)*bytes, (unsigned long long)*ms);
	return 0;
}

int service_snapshot(struct service *s, const char *trigger, uint64_t *bytes,
		     uint64_t *ms, char *why, size_t whylen)
{
	return take_snapshot(s, trigger, false, bytes, ms, why, whylen);
}

bool service_keeps_store(const struct service *s)
{
	const struct history_hooks *h;

	if (s->state != SERVICE_RUNNING || !s->store)
		return false;
	switch (service_durability(s)) {
	case SERVICE_DURABILITY_STOP:
		return db_of(s) != NULL;
	case SERVICE_DURABILITY_COMMIT:
		h = daemon_history_hooks(s->d);
		return h && h->store_image;
	default:
		return false;
	}
}

void service_snapshot_at_stop(struct service *s)
{
	char why[CM_ERROR_MSG_MAX];
	uint64_t bytes, ms;

	if (s->state != SERVICE_RUNNING || !s->store)
		return;
	switch (service_durability(s)) {
	case SERVICE_DURABILITY_STOP:
		take_snapshot(s, "stop", true, &bytes, &ms, why, sizeof(why));
		break;
	case SERVICE_DURABILITY_COMMIT:
		if (s->image_dirty &&
		    capture(s, "stop", false, &bytes, why, sizeof(why)))
			capture_refused(s, "stop", why);
		break;
	default:
		break;
	}
}

/* ---- restore ------------------------------------------------------------- */

struct chain {
	struct service *s;
	const uint8_t *sha;
	struct durable_restored *out;
	uint64_t ndeltas; /* the last one is restored whole */
	char *why;
	size_t whylen;
};

/* snapshots_deltas' callback: 0 applied, 1 refused (c->why). */
static int apply_delta(void *arg, const struct snapshot_delta *d)
{
	struct chain *c = arg;
	cm_error err;

	memset(&err, 0, sizeof(err));
	if (!cm_snapshot_is_delta(d->data, d->size)) {
		snprintf(c->why, c->whylen, "delta %llu is not a delta",
			 (unsigned long long)d->n);
		return 1;
	}
	/* earlier images give their memory pages; the last its whole
	 * state (run/snapshot.h: cm_store_restore_core) */
	if ((c->out->deltas + 1 < c->ndeltas
		     ? cm_store_restore_core(c->s->store, c->sha, d->data,
					     d->size, &err)
		     : cm_store_restore(c->s->store, c->sha, d->data, d->size,
					&err))) {
		snprintf(c->why, c->whylen, "delta %llu: %s",
			 (unsigned long long)d->n, err.msg);
		return 1;
	}
	c->out->bytes += d->size;
	c->out->deltas++;
	if (d->upto > c->out->upto)
		c->out->upto = d->upto;
	return 0;
}

int durable_restore(struct service *s, struct durable_restored *out, char *why,
		    size_t whylen)
{
	struct db *db = db_of(s);
	struct snapshot_record rec;
	struct chain c = {s, NULL, out, 0, why, whylen};
	uint8_t sha[32];
	cm_error err;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!db || service_durability(s) == SERVICE_DURABILITY_NONE)
		return 0;
	rc = snapshots_get(db, s->name, 1, &rec);
	if (rc == -ENOENT)
		return 0;
	if (rc) {
		snprintf(why, whylen, "%s", db_errmsg(db));
		return -1;
	}
	out->bytes = rec.size;
	out->upto = rec.upto;
	c.ndeltas = rec.ndeltas;
	memset(&err, 0, sizeof(err));
	sha_bytes(s->component, sha);
	c.sha = sha;
	if (strcmp(rec.component, s->component)) {
		snprintf(why, whylen,
			 "the snapshot is of component %.12s..., the service "
			 "runs %.12s...",
			 rec.component, s->component);
		rc = -1;
	} else if (rec.format < CM_SNAPSHOT_FORMAT_OLDEST ||
		   rec.format > CM_SNAPSHOT_FORMAT) {
		snprintf(why, whylen,
			 "snapshot format %u, this hosteld reads formats %u "
			 "to %u",
			 rec.format, CM_SNAPSHOT_FORMAT_OLDEST,
			 CM_SNAPSHOT_FORMAT);
		rc = -1;
	} else if (cm_snapshot_is_delta(rec.data, rec.size)) {
		snprintf(why, whylen, "the snapshot is a delta");
		rc = -1;
	} else if ((rec.ndeltas ? cm_store_restore_core(s->store, sha, rec.data,
							rec.size, &err)
				: cm_store_restore(s->store, sha, rec.data,
						   rec.size, &err))) {
		snprintf(why, whylen, "%s", err.msg);
		rc = -1;
	} else if ((rc = snapshots_deltas(db, s->name, apply_delta, &c)) < 0) {
		snprintf(why, whylen, "%s", db_errmsg(db));
	} else if (rc == 0 && c.out->deltas != rec.ndeltas) {
		snprintf(why, whylen, "%llu deltas, %llu expected",
			 (unsigned long long)c.out->deltas,
			 (unsigned long long)rec.ndeltas);
		rc = -1;
	}
	free(rec.data);
	if (rc == 0)
		out->calls = cm_store_restored_calls(s->store);
	return rc ? -1 : 1;
}

void durable_restore_event(struct service *s, int rc,
			   const struct durable_restored *r, const char *why)
{
	if (rc > 0) {
		json_t *p = json_pack("{sI,sI}", "bytes", (json_int_t)r->bytes,
				      "deltas", (json_int_t)r->deltas);

		log_info(&s->d->log,
			 "service %s: store restored (%llu bytes, %llu "
			 "delta(s), up to event %llu)",
			 s->name, (unsigned long long)r->bytes,
			 (unsigned long long)r->deltas,
			 (unsigned long long)r->upto);
		/* the history has them call.interrupted; their guest code
		 * goes on, as a call's whose client left, under what was
		 * left of its budget and the service's deadline */
		if (r->calls)
			log_info(&s->d->log,
				 "service %s: %u call(s) in flight at the "
				 "image go on without their clients",
				 s->name, r->calls);
		if (p && r->upto)
			json_object_set_new(p, "upto",
					    json_integer((json_int_t)r->upto));
		if (p && r->calls)
			json_object_set_new(p, "calls",
					    json_integer((json_int_t)r->calls));
		store_event(s, HISTORY_STORE_RESTORED, p);
	} else if (rc < 0) {
		store_event(s, HISTORY_STORE_RESTORE_FAILED,
			    json_pack("{ss}", "reason", why));
	}
}
