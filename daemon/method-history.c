/*
 * method-history.c - io.hostel.History: Read (once, or following with
 * "more") and Stats.
 *
 * A follower (Read with "more") first pages the backlog from the
 * database: one page per turn while less than FOLLOW_LOW bytes of its
 * replies are unsent, so a large backlog never blocks the loop and a
 * slow reader only slows itself.  Once its cursor passes the last
 * durable seq it goes live: the history's commit hook hands it each
 * batch of durable events (history-hooks.h), in order, so no event is
 * missed or sent twice (store/history.h explains why no commit can fall
 * between the last page and going live).  A live follower whose unsent
 * replies exceed FOLLOW_LAG_MAX gets io.hostel.History.Lagged with the
 * last seq it was sent and its stream ends: the daemon never waits for a
 * reader.  When the daemon stops, every stream ends with a final reply.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - filters: names of at most HISTORY_NAME_MAX, kinds at most
 *    HISTORY_KINDS_MAX patterns of HISTORY_KIND_MAX.
 *  - read replies: at most READ_LIMIT_MAX (10,000) events, READ_SCAN_MAX
 *    seqs examined, REPLY_BYTES_MAX (4 MiB) of payload text.  A tail
 *    ("last", at most READ_LAST_MAX) and times (sinceTime, untilTime)
 *    only move the range's ends: one backward index walk, a binary
 *    search; nothing is held in memory.
 *  - followers: one per connection that follows; a follower whose
 *    unsent replies pass FOLLOW_LAG_MAX (1 MiB) is dropped (Lagged).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/history-hooks.h"
#include "daemon/service.h"
#include "ipc/timefmt.h"
#include "store/db.h"
#include "store/history.h"

#define HISTORY_ERROR_LAGGED	  "io.hostel.History.Lagged"
#define HISTORY_ERROR_UNAVAILABLE "io.hostel.History.Unavailable"

#define READ_LIMIT_DEFAULT 1000
#define READ_LIMIT_MAX	   10000
/* The most events a tail (`last`) asks for: it only moves the start. */
#define READ_LAST_MAX 1000000
/* Seqs one read examines at most: filters that match rarely still
 * answer quickly, with `next` saying where to go on. */
#define READ_SCAN_MAX (64 * 1024)
/* A reply stops growing past this much payload text. */
#define REPLY_BYTES_MAX (4u << 20)
#define FOLLOW_PAGE	256
#define FOLLOW_LOW	(64u * 1024)
#define FOLLOW_LAG_MAX	(1u << 20)

struct filter {
	char *service, *call;
	char **kinds;
	size_t n_kinds;
};

static void filter_free(struct filter *f)
{
	free(f->service);
	free(f->call);
	for (size_t i = 0; i < f->n_kinds; i++)
		free(f->kinds[i]);
	free(f->kinds);
	memset(f, 0, sizeof(*f));
}

static struct history_query filter_query(const struct filter *f)
{
	return (struct history_query){
		.service = f->service,
		.call = f->call,
		.kinds = (const char *const *)f->kinds,
		.n_kinds = f->n_kinds,
	};
}

/* An optional string parameter: absent/null, or a non-empty string. */
static bool opt_string(struct call *call, const char *name, char **out)
{
	json_t *v = json_object_get(call->req->parameters, name);

	*out = NULL;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_string(v) || !json_string_length(v) ||
	    json_string_length(v) > HISTORY_NAME_MAX) {
		call_invalid_parameter(call, name);
		return false;
	}
	*out = strdup(json_string_value(v));
	if (!*out) {
		call_reply(call, NULL);
		return false;
	}
	return true;
}

/* An optional integer in [min, max]; absent/null gives def. */
static bool opt_int(struct call *call, const char *name, json_int_t min,
		    json_int_t max, json_int_t def, json_int_t *out)
{
	json_t *v = json_object_get(call->req->parameters, name);

	*out = def;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < min ||
	    json_integer_value(v) > max) {
		call_invalid_parameter(call, name);
		return false;
	}
	*out = json_integer_value(v);
	return true;
}

/*
 * Non-admins read the history of one service they may see (access.h):
 * named, or found through the call they name.  On false a reply has been
 * sent.
 */
static bool visible(struct call *call, struct filter *f)
{
	struct db *db = daemon_history_db(call->d);
	struct service *s;

	if (call->role == ACCESS_ADMIN)
		return true;
	if (!f->service && f->call && db) {
		sqlite3_stmt *st;

		/* The call's start or end (events_call_once). */
		if (db_prepare(db,
			       "SELECT service FROM events WHERE call = ?1 AND "
			       "kind GLOB 'call.*' LIMIT 1",
			       &st) == 0) {
			sqlite3_bind_text(st, 1, f->call, -1, SQLITE_STATIC);
			if (sqlite3_step(st) == SQLITE_ROW &&
			    sqlite3_column_text(st, 0))
				f->service = strdup(
					(const char *)sqlite3_column_text(st,
									  0));
			sqlite3_finalize(st);
		}
	}
	s = f->service ? service_find(call->d, f->service) : NULL;
	if (!s) {
		/* The whole history, or a service that is gone: admins only. */
		call_permission_denied(call, ACCESS_ADMIN);
		return false;
	}
	return call_may_see(call, s->owner);
}

/* An optional RFC 3339 time; absent/null: *set false. */
static bool opt_time(struct call *call, const char *name, bool *set,
		     int64_t *ns)
{
	json_t *v = json_object_get(call->req->parameters, name);

	*set = false;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_string(v) ||
	    hostel_time_parse_rfc3339(json_string_value(v), ns) < 0) {
		call_invalid_parameter(call, name);
		return false;
	}
	*set = true;
	return true;
}

/* The range Read's parameters ask for, before it is resolved to seqs. */
struct range {
	uint64_t since, until; /* until 0: no bound */
	uint64_t last;	       /* 0: no tail */
	size_t limit;
	bool since_time_set, until_time_set;
	int64_t since_time, until_time;
};

/* Parse Read's parameters; on false a reply has been sent. */
static bool read_params(struct call *call, struct filter *f, struct range *r)
{
	static const char *const known[] = {
		"since",   "until", "sinceTime", "untilTime", "last",
		"service", "call",  "kinds",	 "limit",     NULL};
	json_t *kinds;
	json_int_t n;

	memset(f, 0, sizeof(*f));
	memset(r, 0, sizeof(*r));
	if (!call_check_parameters(call, known) ||
	    !opt_int(call, "since", 0, INT64_MAX, 1, &n))
		return false;
	r->since = n ? (uint64_t)n : 1;
	if (!opt_int(call, "until", 1, INT64_MAX, 0, &n))
		return false;
	r->until = (uint64_t)n;
	if (!opt_int(call, "last", 1, READ_LAST_MAX, 0, &n))
		return false;
	r->last = (uint64_t)n;
	if (!opt_int(call, "limit", 1, READ_LIMIT_MAX, READ_LIMIT_DEFAULT, &n))
		return false;
	r->limit = (size_t)n;
	if (!opt_time(call, "sinceTime", &r->since_time_set, &r->since_time) ||
	    !opt_time(call, "untilTime", &r->until_time_set, &r->until_time))
		return false;
	/* A stream has no end but the daemon's: no upper bound. */
	if (call->req->more && (r->until || r->until_time_set)) {
		call_invalid_parameter(call, r->until ? "until" : "untilTime");
		return false;
	}
	if (!opt_string(call, "service", &f->service) ||
	    !opt_string(call, "call", &f->call))
		goto fail;
	kinds = json_object_get(call->req->parameters, "kinds");
	if (kinds && !json_is_null(kinds)) {
		size_t i;
		json_t *k;

		if (!json_is_array(kinds) ||
		    json_array_size(kinds) > HISTORY_KINDS_MAX) {
			call_invalid_parameter(call, "kinds");
			goto fail;
		}
		f->kinds = calloc(json_array_size(kinds) + 1, sizeof(char *));
		if (!f->kinds) {
			call_reply(call, NULL);
			goto fail;
		}
		json_array_foreach(kinds, i, k)
		{
			if (!history_kind_pattern_valid(json_string_value(k))) {
				call_invalid_parameter(call, "kinds");
				goto fail;
			}
			f->kinds[i] = strdup(json_string_value(k));
			if (!f->kinds[i]) {
				call_reply(call, NULL);
				goto fail;
			}
			f->n_kinds++;
		}
	}
	if (!visible(call, f))
		goto fail;
	return true;
fail:
	filter_free(f);
	return false;
}

/*
 * Resolve the range to seqs against the history as it is now: since
 * (the later of since and sinceTime's first event), *upto (the earlier
 * of until, untilTime's last event and the last durable seq), then the
 * tail (the newest `last` matching events of that range).  Each step is
 * one bounded query or a binary search (store/history.h).
 */
static int resolve_range(struct history *h, const struct filter *f,
			 struct range *r, uint64_t *upto)
{
	struct history_query q = filter_query(f);
	uint64_t seq;
	int rc;

	*upto = history_last_seq(h);
	if (r->until && r->until < *upto)
		*upto = r->until;
	if (r->since_time_set) {
		rc = history_seq_at_time(h, r->since_time, &seq);
		if (rc < 0)
			return rc;
		if (seq > r->since)
			r->since = seq;
	}
	if (r->until_time_set) {
		/* The last event at or before untilTime: before the first
		 * one after it. */
		rc = history_seq_at_time(h, r->until_time + 1, &seq);
		if (rc < 0)
			return rc;
		if (seq - 1 < *upto)
			*upto = seq - 1;
	}
	if (r->last && r->since <= *upto) {
		q.from = r->since;
		q.upto = *upto;
		rc = history_tail_from(h, &q, r->last, &r->since);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static json_t *event_json(const struct history_event *ev)
{
	json_t *payload = json_loads(ev->payload, 0, NULL);
	char time[48];

	/* The schema admits only JSON objects; an object, whatever. */
	if (!json_is_object(payload)) {
		json_decref(payload);
		payload = json_object();
	}
	hostel_time_format(ev->time, time, sizeof(time));
	return json_pack("{sI,ss,ss?,ss?,ss,so}", "seq", (json_int_t)ev->seq,
			 "time", time, "service", ev->service, "call", ev->call,
			 "kind", ev->kind, "payload", payload);
}

struct page {
	json_t *events;
	size_t bytes;
	uint64_t last;
	bool oom;
};

static int page_add(struct page *p, const struct history_event *ev)
{
	json_t *j = event_json(ev);

	if (!j || json_array_append_new(p->events, j)) {
		p->oom = true;
		return 1;
	}
	p->last = ev->seq;
	p->bytes += strlen(ev->payload) + 128;
	return p->bytes >= REPLY_BYTES_MAX;
}

static int page_cb(void *arg, const struct history_event *ev)
{
	return page_add(arg, ev);
}

static json_t *page_reply(struct page *p, uint64_t next, uint64_t last)
{
	return json_pack("{so,sI,sI}", "events", p->events, "next",
			 (json_int_t)next, "last", (json_int_t)last);
}

/* ---- following ---------------------------------------------------------- */

struct follower {
	struct history_listener l; /* first: listener -> follower */
	struct daemon *d;
	struct conn *conn; /* NULL once the stream is over */
	struct event *ev_page;
	struct filter flt;
	uint64_t cursor;    /* next seq to consider */
	uint64_t delivered; /* last seq sent (since - 1 before any) */
	bool live;
	int busy; /* inside the follower's code: free later */
};

static void follower_free(struct follower *f)
{
	daemon_history_unlisten(f->d, &f->l);
	if (f->ev_page)
		event_free(f->ev_page);
	filter_free(&f->flt);
	free(f);
}

/* Leave the follower's code; free it if its stream is over. */
static void leave(struct follower *f)
{
	if (--f->busy == 0 && !f->conn)
		follower_free(f);
}

/* End the stream (the reply has been queued); the connection goes on. */
static void end_stream(struct follower *f)
{
	struct conn *c = f->conn;

	daemon_history_unlisten(f->d, &f->l);
	event_del(f->ev_page);
	f->conn = NULL;
	if (c)
		conn_release(c);
}

static void send_page(struct follower *f, struct page *p, bool continues)
{
	json_t *params = page_reply(
		p, f->cursor, history_last_seq(daemon_history_store(f->d)));

	if (p->last)
		f->delivered = p->last;
	/* Dropped connections come back through on_free (f->conn NULL). */
	conn_send(f->conn,
		  params ? varlink_reply_new(params, continues) : NULL);
}

static void page_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct follower *f = arg;
	struct history *h = daemon_history_store(f->d);
	struct history_query q = filter_query(&f->flt);
	struct page p = {0};
	struct timeval now = {0, 0};
	uint64_t next;
	int rc;

	f->busy++;
	if (!f->conn || f->live || !h ||
	    conn_output_pending(f->conn) > FOLLOW_LOW)
		goto out; /* on_drain brings us back */
	q.from = f->cursor;
	q.upto = history_last_seq(h);
	q.limit = FOLLOW_PAGE;
	q.max_scan = READ_SCAN_MAX;
	p.events = json_array();
	rc = p.events ? history_read(h, &q, page_cb, &p, &next) : -ENOMEM;
	if (rc < 0 || p.oom) {
		json_decref(p.events);
		conn_send(f->conn,
			  varlink_error_new(
				  HISTORY_ERROR_UNAVAILABLE,
				  json_pack("{ss}", "reason",
					    "cannot read the history")));
		end_stream(f);
		goto out;
	}
	f->cursor = next;
	if (json_array_size(p.events))
		send_page(f, &p, true);
	else
		json_decref(p.events);
	if (!f->conn)
		goto out;
	if (f->cursor > history_last_seq(h))
		f->live = true; /* the commit hook takes over from here */
	else
		evtimer_add(f->ev_page, &now);
out:
	leave(f);
}

static void follower_drained(void *arg)
{
	struct follower *f = arg;
	struct timeval now = {0, 0};

	if (f->conn && !f->live)
		evtimer_add(f->ev_page, &now);
}

static void follower_conn_freed(void *arg)
{
	struct follower *f = arg;

	f->conn = NULL;
	daemon_history_unlisten(f->d, &f->l);
	if (f->busy == 0)
		follower_free(f);
}

static void lagged(struct follower *f)
{
	conn_send(f->conn,
		  varlink_error_new(HISTORY_ERROR_LAGGED,
				    json_pack("{sI}", "lastSeq",
					      (json_int_t)f->delivered)));
	if (f->conn)
		end_stream(f);
}

/* Send a live page, unless the reader lags; whether the stream goes on. */
static bool flush_live(struct follower *f, struct page *p)
{
	if (p->oom) {
		json_decref(p->events);
		*p = (struct page){0};
		conn_send(f->conn, NULL); /* out of memory: drop it */
	} else if (conn_output_pending(f->conn) > FOLLOW_LAG_MAX) {
		json_decref(p->events);
		*p = (struct page){0};
		lagged(f);
	} else {
		send_page(f, p, true);
		*p = (struct page){0};
	}
	return f->conn != NULL;
}

static void follower_events(struct history_listener *l,
			    const struct history_event *ev, size_t n)
{
	struct follower *f = (struct follower *)l;
	struct history_query q = filter_query(&f->flt);
	struct page p = {0};

	f->busy++;
	for (size_t i = 0; i < n && f->conn && f->live; i++) {
		if (ev[i].seq < f->cursor)
			continue;
		f->cursor = ev[i].seq + 1;
		if (!history_query_matches(&q, &ev[i]))
			continue;
		if (!p.events && !(p.events = json_array())) {
			conn_send(f->conn, NULL);
			break;
		}
		/* A full page goes at once; the rest after the loop. */
		if (page_add(&p, &ev[i]) && !flush_live(f, &p))
			break;
	}
	if (p.events && f->conn)
		flush_live(f, &p);
	else
		json_decref(p.events);
	leave(f);
}

/* The daemon stops: a final reply ends the stream. */
static void follower_end(struct history_listener *l)
{
	struct follower *f = (struct follower *)l;
	struct page p = {.events = json_array()};

	f->busy++;
	if (f->conn) {
		if (p.events)
			send_page(f, &p, false);
		else
			conn_send(f->conn, NULL);
		if (f->conn)
			end_stream(f);
	} else {
		json_decref(p.events);
	}
	daemon_history_unlisten(f->d, &f->l);
	leave(f);
}

static void follow(struct call *call, struct filter *flt, uint64_t since)
{
	struct follower *f = calloc(1, sizeof(*f));
	struct timeval now = {0, 0};

	if (f)
		f->ev_page = evtimer_new(call->d->base, page_timer_cb, f);
	if (!f || !f->ev_page) {
		free(f);
		filter_free(flt);
		call_reply(call, NULL);
		return;
	}
	f->d = call->d;
	f->conn = call->conn;
	f->flt = *flt;
	f->cursor = since;
	f->delivered = since - 1;
	f->l.events = follower_events;
	f->l.end = follower_end;
	call_hold(call, follower_drained, follower_conn_freed, f);
	daemon_history_listen(f->d, &f->l);
	evtimer_add(f->ev_page, &now);
}

/* ---- the methods ----------------------------------------------------------
 */

static bool available(struct call *call, struct history **h)
{
	*h = daemon_history_store(call->d);
	if (*h)
		return true;
	call_error(call, HISTORY_ERROR_UNAVAILABLE,
		   json_pack("{ss}", "reason",
			     "the history database is not open"));
	return false;
}

void method_history_read(struct call *call)
{
	struct history *h;
	struct history_query q;
	struct filter flt;
	struct range r;
	struct page p = {0};
	uint64_t next, upto;
	int rc;

	if (!read_params(call, &flt, &r))
		return;
	if (!available(call, &h)) {
		filter_free(&flt);
		return;
	}
	rc = resolve_range(h, &flt, &r, &upto);
	if (rc < 0) {
		filter_free(&flt);
		if (rc == -ENOMEM)
			call_reply(call, NULL);
		else
			call_error(call, HISTORY_ERROR_UNAVAILABLE,
				   json_pack("{ss}", "reason",
					     "cannot read the history"));
		return;
	}
	if (call->req->more) {
		follow(call, &flt, r.since);
		return;
	}
	p.events = json_array();
	if (p.events && r.since > upto) {
		/* Nothing in the range (q.upto 0 would mean "to the end"). */
		filter_free(&flt);
		call_reply(call, page_reply(&p, r.since, upto));
		return;
	}
	q = filter_query(&flt);
	q.from = r.since;
	q.upto = upto;
	q.limit = r.limit;
	q.max_scan = READ_SCAN_MAX;
	rc = p.events ? history_read(h, &q, page_cb, &p, &next) : -ENOMEM;
	filter_free(&flt);
	if (rc < 0 || p.oom) {
		json_decref(p.events);
		if (rc == -ENOMEM || p.oom)
			call_reply(call, NULL);
		else
			call_error(call, HISTORY_ERROR_UNAVAILABLE,
				   json_pack("{ss}", "reason",
					     "cannot read the history"));
		return;
	}
	call_reply(call, page_reply(&p, next, upto));
}

void method_history_stats(struct call *call)
{
	static const char *const known[] = {NULL};
	struct daemon_history_status st;
	json_t *latency, *bounds;
	uint64_t mean;

	if (!call_check_parameters(call, known))
		return;
	if (daemon_history_status(call->d, &st) < 0) {
		call_error(call, HISTORY_ERROR_UNAVAILABLE,
			   json_pack("{ss}", "reason",
				     "the history database is not open"));
		return;
	}
	latency = json_array();
	bounds = json_array();
	for (int i = 0; latency && bounds && i < HISTORY_LATENCY_BUCKETS; i++) {
		if (json_array_append_new(
			    latency,
			    json_integer((json_int_t)st.stats.latency[i])) ||
		    (i < HISTORY_LATENCY_BUCKETS - 1 &&
		     json_array_append_new(
			     bounds,
			     json_integer(history_latency_bounds_us[i]))))
			break;
	}
	mean = st.stats.commits ? st.stats.commit_ns_total / st.stats.commits
				: 0;
	call_reply(
		call,
		json_pack("{sI,sI,sI,sI,sI,sI,sb,sI,sI,sI,so,so,sI,sI,ss,sI,"
			  "sI,sI,sI,sI,sI}",
			  "lastSeq", (json_int_t)st.stats.last_seq, "commits",
			  (json_int_t)st.stats.commits, "events",
			  (json_int_t)st.stats.events, "rejected",
			  (json_int_t)st.stats.rejected, "failures",
			  (json_int_t)st.stats.failures, "pending",
			  (json_int_t)st.pending_events, "failing", st.failing,
			  "commitLastUs",
			  (json_int_t)(st.stats.commit_ns_last / 1000),
			  "commitMaxUs",
			  (json_int_t)(st.stats.commit_ns_max / 1000),
			  "commitMeanUs", (json_int_t)(mean / 1000), "latency",
			  latency, "latencyBoundsUs", bounds, "maxBatch",
			  (json_int_t)st.stats.max_batch, "pruned",
			  (json_int_t)st.stats.pruned, "synchronous",
			  st.synchronous, "keepEvents",
			  (json_int_t)st.keep_events, "keepAge",
			  (json_int_t)st.keep_age, "followers",
			  (json_int_t)st.followers, "checkpoints",
			  (json_int_t)st.checkpoints.runs, "checkpointsInline",
			  (json_int_t)st.checkpoints.inline_runs,
			  "checkpointInlineMaxUs",
			  (json_int_t)(st.checkpoints.inline_ns_max / 1000)));
}

/* ---- Prune ------------------------------------------------------------- */

/*
 * A retention pass on request, answered when the pass is complete; a
 * pass that removed nothing says why ("kept": what the limits keep, and
 * the events past them of open calls, naming the first few).  The
 * history runs it, a bounded step at a time, as it runs the minutely
 * pass (daemon_history_prune()).  It listens to the history only to
 * learn when the history goes
 * away (its end()), because the pass must not outlive it.  A client
 * that leaves does not stop the pass.
 */
struct prune_job {
	struct history_listener l; /* first: listener -> job */
	struct daemon *d;
	struct conn *conn;	  /* NULL once the client left */
	struct daemon_prune *req; /* the history's, until it answers */
	uint64_t deleted;
	bool oneway;
};

static void prune_job_free(struct prune_job *j)
{
	daemon_history_unlisten(j->d, &j->l);
	daemon_history_prune_drop(j->d, j->req);
	free(j);
}

/* Send the answer (consumed), let the connection go on, free the job. */
static void prune_finish(struct prune_job *j, json_t *msg)
{
	struct conn *c = j->conn;

	j->conn = NULL;
	if (c && !j->oneway)
		conn_send(c, msg);
	else
		json_decref(msg);
	if (c)
		conn_release(c);
	prune_job_free(j);
}

static void prune_unavailable(struct prune_job *j, const char *why)
{
	char reason[320];

	snprintf(reason, sizeof(reason), "%s (%llu event(s) removed before)",
		 why, (unsigned long long)j->deleted);
	prune_finish(j, varlink_error_new(HISTORY_ERROR_UNAVAILABLE,
					  json_pack("{ss}", "reason", reason)));
}

/* Why a pass removed nothing: io.hostel.History.PruneKept. */
static json_t *kept_json(const struct history_prune_kept *k)
{
	json_t *calls = json_array();

	for (size_t i = 0; calls && i < k->n_calls; i++)
		if (json_array_append_new(calls, json_string(k->calls[i]))) {
			json_decref(calls);
			calls = NULL;
		}
	if (!calls)
		return NULL;
	return json_pack("{sI,sI,so,sb}", "limits", (json_int_t)k->limits,
			 "openCalls", (json_int_t)k->open, "calls", calls,
			 "more", k->more_calls);
}

/* The pass ended with rc (err: why it failed; kept: what it kept). */
static void prune_ended(struct prune_job *j, int rc,
			const struct history_prune_kept *kept, const char *err)
{
	struct history *h = daemon_history_store(j->d);
	json_t *reply;

	if (rc < 0) {
		if (rc != -ESHUTDOWN)
			log_warn(&j->d->log, "history: pruning on request: %s",
				 err);
		prune_unavailable(j, err);
		return;
	}
	if (j->deleted)
		log_info(&j->d->log,
			 "history: pruning on request removed %llu event(s)",
			 (unsigned long long)j->deleted);
	reply = json_pack("{sI,sI}", "deleted", (json_int_t)j->deleted, "last",
			  (json_int_t)(h ? history_last_seq(h) : 0));
	if (reply && j->deleted == 0 && kept)
		/* Out of memory: the reply goes without its reason. */
		json_object_set_new(reply, "kept", kept_json(kept));
	prune_finish(j, varlink_reply_new(reply, false));
}

/* The history's answer (daemon_history_prune()). */
static void prune_done(void *arg, int rc, uint64_t deleted,
		       const struct history_prune_kept *kept, const char *err)
{
	struct prune_job *j = arg;

	j->req = NULL; /* freed by the history after this */
	j->deleted = deleted;
	prune_ended(j, rc, kept, err && *err ? err : strerror(-rc));
}

/* The history goes away (the daemon stops): end the pass now. */
static void prune_end(struct history_listener *l)
{
	prune_unavailable((struct prune_job *)l, "hosteld is stopping");
}

static void prune_conn_freed(void *arg)
{
	struct prune_job *j = arg;

	j->conn = NULL; /* the pass goes on; nobody gets the answer */
}

void method_history_prune(struct call *call)
{
	static const char *const known[] = {"service", "keepEvents", "keepAge",
					    NULL};
	struct history_prune_spec spec;
	struct history *h;
	struct prune_job *j;
	json_int_t ke, ka;
	char *service = NULL;
	int rc;

	if (!call_check_parameters(call, known) ||
	    !opt_int(call, "keepEvents", 0, INT64_MAX, -1, &ke) ||
	    !opt_int(call, "keepAge", 0, INT64_MAX / 1000000000, -1, &ka) ||
	    !opt_string(call, "service", &service))
		return;
	if (!available(call, &h)) {
		free(service);
		return;
	}
	if (service && !history_name_valid(service)) {
		free(service);
		call_invalid_parameter(call, "service");
		return;
	}
	spec = (struct history_prune_spec){
		.service = service,
		.keep_events = ke,
		.keep_age = ka,
		.explain = true,
	};
	j = calloc(1, sizeof(*j));
	if (!j) {
		free(service);
		call_reply(call, NULL);
		return;
	}
	j->d = call->d;
	rc = daemon_history_prune(call->d, &spec, prune_done, j, &j->req);
	free(service);
	if (rc) {
		struct db *db = daemon_history_db(call->d);

		free(j);
		call_error(call, HISTORY_ERROR_UNAVAILABLE,
			   json_pack("{ss}", "reason",
				     rc != -ENOMEM && db ? db_errmsg(db)
							 : "out of memory"));
		return;
	}
	j->conn = call->conn;
	j->oneway = call->req->oneway;
	j->l.end = prune_end;
	call_hold(call, NULL, prune_conn_freed, j);
	daemon_history_listen(j->d, &j->l);
}
