/*
 * history.c - the event history of history.h: batches, group commit,
 * recovery, reading and retention over the events table.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - prepare_insert: the SQL of one multi-row insert, rows a fixed
 *    chunk of a batch.
 *  - history_batch_add: one event's copy, its payload at most
 *    HISTORY_PAYLOAD_MAX (8 MiB; -E2BIG), the batch at most
 *    HISTORY_BATCH_BYTES_MAX (64 MiB) of events (-ENOBUFS); the event
 *    array grows with the events, each at least a few bytes of that.
 *  - history_batch_take: the two batches' arrays, each so bounded.
 *  - history_value_bounded: the bounded form, about HISTORY_VALUE_HEAD
 *    (4096) bytes escaped at most six-fold plus the digest: < 25 KiB.
 *  - payload builders (history_add_fields, history_add_*): the payload
 *    text, refused past HISTORY_PAYLOAD_MAX; callers bound what they
 *    pass (daemon/history-events.c audit).
 *  - reading: each event a row's text, delivered and freed one at a time;
 *    a query has at most HISTORY_KINDS_MAX kinds;
 *    the caller's limit and max_scan (method-history.c: READ_LIMIT_MAX,
 *    READ_SCAN_MAX) bound a read.
 *  - the open-call set (open-calls.c): one id per open call: calls queued
 *    or in flight (per service: limits.maxQueuedCalls and
 *    limits.maxConcurrentCalls) and calls recovery closes.
 *  - pruning: a group per service with limits (services: bounded by the
 *    deploy role), service names (HISTORY_NAME_MAX), seq arrays of
 *    max_rows (the callers' step sizes, 1000 and 250).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/db.h"
#include "store/folds.h"
#include "store/history.h"
#include "store/open-calls.h"
#include "store/payload.h"
#include "store/snapshots.h"
#include "store/sha256.h"

/*
 * The rows of a call that the unique index events_call_once holds
 * (store/schema.c): its start, and its terminal event.  Spelled as the
 * index is, so that SQLite uses it.
 */
#define CALL_STARTED_ROW  "kind GLOB 'call.*' AND (kind = 'call.started') = 1"
#define CALL_TERMINAL_ROW "kind GLOB 'call.*' AND (kind = 'call.started') = 0"
/* True of a row of `events` (named alias) whose call has its start in
 * the history (started "1") or its terminal event (started "0"). */
#define CALL_HAS(alias, started)                                               \
	"EXISTS (SELECT 1 FROM events t WHERE t.call = " alias ".call "        \
	"AND t.kind GLOB 'call.*' "                                            \
	"AND (t.kind = 'call.started') = " started ")"
#define CALL_ENDED(alias) CALL_HAS(alias, "0")
/*
 * True of a row of `events` (named alias) whose call is open: its
 * call.started is in the history and no terminal event is.  "No
 * terminal event" alone is not enough: once retention removed a call's
 * start and end, the events that its background work goes on writing
 * under its id (a ticker's hostcall.*) would count as an open call's,
 * forever, and fill the disk.  The rule is sound because retention
 * deletes oldest first and never the start of an open call: a call
 * whose start is gone had ended, and whatever it still writes belongs
 * to no open call.  Both look-ups are seeks in events_call_once; the
 * second costs about 1 us more per examined row of an open call (a
 * pass over 200,000 such rows, steps of 250: 1.4 -> 2.4 us a row).
 */
#define CALL_OPEN(alias)                                                       \
	"(NOT " CALL_HAS(alias, "0") " AND " CALL_HAS(alias, "1") ")"

const uint32_t history_latency_bounds_us[HISTORY_LATENCY_BUCKETS - 1] = {
	100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 1000000,
};

const uint32_t history_batch_bounds[HISTORY_BATCH_BUCKETS - 1] = {
	1, 2, 5, 10, 20, 50, 100, 500, 1000,
};

struct pending {
	char *mem; /* service, call, kind and payload, NUL-separated */
	const char *service, *call, *kind, *payload;
	size_t bytes;
	int64_t time;
	history_done_fn done;
	void *arg;
	uint64_t seq;
	int status;
};

/* A store image riding in a batch (history_batch_add_image). */
struct image {
	struct image *next;
	char *service;
	char component[SHA256_HEX_SIZE];
	uint32_t format;
	bool full;
	bool refused; /* written as malformed: reported, not written */
	/* written, but its service's deltas are past the hard bound
	 * (store/folds.h): reported, so the next image is full */
	bool over;
	void *data;
	size_t len;
};

struct history_batch {
	struct history *h;
	struct pending *ev;
	size_t n, cap;
	size_t bytes;
	struct image *img, **img_tail;
	size_t nimg;
};

/* A retention group: one service's events, or the daemon's (NULL). */
struct prune_group {
	char *service;
	uint64_t keep_events;
	int64_t age_cut; /* events older than this (unix ns) go; 0: none */
};

/* Count down to the cut, delete up to it, then (a pass that explains
 * and has removed nothing yet) count what the limits keep. */
enum prune_phase { PRUNE_COUNT, PRUNE_DELETE, PRUNE_TALLY };

/*
 * One retention pass (of a history_pruner): its groups and where it
 * stands.  Each pass has its own, so two passes never disturb each
 * other's cursors, and each only deletes events that are expired for
 * its own limits, so running them side by side is safe.
 */
struct prune_pass {
	struct history *h;
	bool active;
	struct prune_group *groups;
	size_t n, cur;
	enum prune_phase phase;
	uint64_t top, remaining, count_cut, cursor;
	/* The newest seq when the pass began: from the database, since the
	 * handle that prunes need not be the one that appends. */
	uint64_t newest;
	uint64_t deleted; /* by this pass so far */
	/* What the pass keeps, for a pass that explains (else NULL). */
	struct history_prune_kept *kept;
};

struct history_pruner {
	struct prune_pass pass;
	bool done;
	struct history_prune_kept kept;
};

/*
 * Rows per multi-row INSERT, largest first: one statement of many rows
 * costs SQLite about half the instructions per row of single-row ones
 * (the cursors on the table and its indexes open once per statement).
 * A run of n rows goes as greedy pieces of these sizes.
 */
static const size_t insert_rows[] = {64, 16, 4, 1};
#define INSERT_SIZES (sizeof(insert_rows) / sizeof(insert_rows[0]))

struct history {
	struct db *db;
	sqlite3_stmt *insert[INSERT_SIZES]; /* insert_rows[i] rows each */
	sqlite3_stmt *insert_terminal;	    /* only when the call has started */
	struct open_calls open;		    /* started here, not ended yet */
	uint64_t last_seq;
	history_commit_fn hook;
	void *hook_arg;
	history_image_fn image_dropped;
	void *image_arg;
	struct folds *folds; /* the chains this connection writes */
	struct history_retention defaults;
	struct history_stats stats;
};

/* ---- kinds ------------------------------------------------------------------
 */

static const char *const terminal_kinds[] = {
	HISTORY_CALL_RETURNED, HISTORY_CALL_TRAPPED,	 HISTORY_CALL_CANCELLED,
	HISTORY_CALL_FAILED,   HISTORY_CALL_INTERRUPTED, NULL,
};

/* Families whose members are a closed list, and the open ones. */
static const char *const closed_kinds[] = {
	HISTORY_CALL_STARTED,	 HISTORY_CALL_RETURNED,
	HISTORY_CALL_TRAPPED,	 HISTORY_CALL_CANCELLED,
	HISTORY_CALL_FAILED,	 HISTORY_CALL_INTERRUPTED,
	HISTORY_STORE_CREATED,	 HISTORY_STORE_POISONED,
	HISTORY_STORE_RECREATED, HISTORY_GUEST_STDOUT,
	HISTORY_GUEST_STDERR,	 HISTORY_STORE_SNAPSHOTTED,
	HISTORY_STORE_SNAPSHOT_FAILED, HISTORY_STORE_RESTORED,
	HISTORY_STORE_RESTORE_FAILED, NULL,
};
static const char *const open_families[] = {"hostcall.", "service.", "daemon.",
					    NULL};

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Dot-separated words of [a-z0-9_-], at least two, within the bound. */
static bool kind_syntax(const char *kind, size_t len)
{
	bool word = false;
	int dots = 0;

	if (len == 0 || len > HISTORY_KIND_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = kind[i];

		if (c == '.') {
			if (!word)
				return false;
			word = false;
			dots++;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			   c == '_' || c == '-') {
			word = true;
		} else {
			return false;
		}
	}
	return word && dots > 0;
}

bool history_kind_valid(const char *kind)
{
	if (!kind || !kind_syntax(kind, strlen(kind)))
		return false;
	if (in_list(closed_kinds, kind))
		return true;
	if (starts_with(kind, "call.") || starts_with(kind, "store.") ||
	    starts_with(kind, "guest."))
		return false;
	for (const char *const *f = open_families; *f; f++)
		if (starts_with(kind, *f))
			return true;
	return false;
}

bool history_kind_terminal(const char *kind)
{
	return kind && in_list(terminal_kinds, kind);
}

bool history_name_valid(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if ((unsigned char)s[n] < 0x20 || n >= HISTORY_NAME_MAX)
			return false;
	return n > 0;
}

/* ---- the handle
 * --------------------------------------------------------------- */

static int query_newest(struct history *h, uint64_t *newest)
{
	sqlite3_stmt *st;
	int rc = db_prepare(h->db, "SELECT coalesce(max(seq), 0) FROM events",
			    &st);

	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*newest = (uint64_t)sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return db_fail(h->db, rc, "reading the last sequence number");
}

static int read_last_seq(struct history *h)
{
	return query_newest(h, &h->last_seq);
}

/* INSERT of `rows` events: parameters 5k+1..5k+5 are row k's. */
static int prepare_insert(struct history *h, size_t rows, sqlite3_stmt **st)
{
	static const char head[] =
		"INSERT INTO events (time, service, call, kind, payload) "
		"VALUES (?,?,?,?,?)";
	static const char more[] = ",(?,?,?,?,?)";
	size_t len = sizeof(head) + (rows - 1) * (sizeof(more) - 1);
	char *sql = malloc(len), *w;
	int rc;

	if (!sql)
		return db_failf(h->db, -ENOMEM, "out of memory");
	w = sql + (sizeof(head) - 1);
	memcpy(sql, head, sizeof(head));
	for (size_t i = 1; i < rows; i++, w += sizeof(more) - 1)
		memcpy(w, more, sizeof(more));
	rc = db_prepare(h->db, sql, st);
	free(sql);
	return rc;
}

int history_open(struct db *db, struct history **out)
{
	struct history *h = calloc(1, sizeof(*h));
	int rc;

	*out = NULL;
	if (!h)
		return db_failf(db, -ENOMEM, "out of memory");
	h->db = db;
	if (!(h->folds = folds_new())) {
		free(h);
		return db_failf(db, -ENOMEM, "out of memory");
	}
	rc = 0;
	for (size_t i = 0; i < INSERT_SIZES && rc == 0; i++)
		rc = prepare_insert(h, insert_rows[i], &h->insert[i]);
	if (rc == 0)
		rc = db_prepare(db,
				"INSERT INTO events (time, service, call, "
				"kind, payload) SELECT ?1, ?2, ?3, ?4, ?5 "
				"WHERE EXISTS (SELECT 1 FROM events WHERE "
				"call = ?3 AND " CALL_STARTED_ROW ")",
				&h->insert_terminal);
	if (rc == 0)
		rc = read_last_seq(h);
	if (rc) {
		history_free(h);
		return rc;
	}
	h->stats.last_seq = h->last_seq;
	*out = h;
	return 0;
}

void history_free(struct history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < INSERT_SIZES; i++)
		sqlite3_finalize(h->insert[i]);
	sqlite3_finalize(h->insert_terminal);
	open_calls_free(&h->open);
	folds_free(h->folds);
	free(h);
}

uint64_t history_last_seq(const struct history *h)
{
	return h->last_seq;
}

void history_set_commit_hook(struct history *h, history_commit_fn fn, void *arg)
{
	h->hook = fn;
	h->hook_arg = arg;
}

void history_get_stats(const struct history *h, struct history_stats *out)
{
	*out = h->stats;
}

void history_set_retention(struct history *h,
			   const struct history_retention *defaults)
{
	h->defaults = *defaults;
}

/* ---- batches
 * --------------------------------------------------------------------- */

struct history_batch *history_batch_new(struct history *h)
{
	struct history_batch *b = calloc(1, sizeof(*b));

	if (b) {
		b->h = h;
		b->img_tail = &b->img;
	}
	return b;
}

void history_set_fold(struct history *h, snapshots_fold_fn fn, void *arg)
{
	folds_set_fn(h->folds, fn, arg);
}

bool history_fold_due(const struct history *h)
{
	return folds_due(h->folds);
}

int history_fold_step(struct history *h, char *why, size_t whylen)
{
	return folds_step(h->folds, h->db, why, whylen);
}

void history_set_image_hook(struct history *h, history_image_fn dropped,
			    void *arg)
{
	h->image_dropped = dropped;
	h->image_arg = arg;
}

size_t history_batch_images(const struct history_batch *b)
{
	return b->nimg;
}

static void image_free(struct image *im)
{
	free(im->service);
	free(im->data);
	free(im);
}

/* Take the images out; `report` tells the hook they were never written. */
static void drop_images(struct history_batch *b, bool report)
{
	struct image *im = b->img;

	b->img = NULL;
	b->img_tail = &b->img;
	b->nimg = 0;
	while (im) {
		struct image *next = im->next;

		if ((report || im->refused || im->over) &&
		    b->h->image_dropped)
			b->h->image_dropped(b->h->image_arg, im->service,
					    im->over && !report &&
						    !im->refused);
		image_free(im);
		im = next;
	}
}

int history_batch_add_image(struct history_batch *b, const char *service,
			    const char *component, uint32_t format, bool full,
			    void *data, size_t len)
{
	struct image *im;

	if (!service || !sha256_hex_valid(component) || !data) {
		free(data);
		return -EINVAL;
	}
	if (!(im = calloc(1, sizeof(*im))) || !(im->service = strdup(service))) {
		free(im);
		free(data);
		return -ENOMEM;
	}
	memcpy(im->component, component, SHA256_HEX_SIZE);
	im->format = format;
	im->full = full;
	im->data = data;
	im->len = len;
	/* a full image holds what the service's earlier ones did */
	if (full) {
		struct image **pp = &b->img;

		while (*pp) {
			struct image *o = *pp;

			if (strcmp(o->service, service) == 0) {
				*pp = o->next;
				image_free(o);
				b->nimg--;
				continue;
			}
			pp = &o->next;
		}
		b->img_tail = pp;
	}
	*b->img_tail = im;
	b->img_tail = &im->next;
	b->nimg++;
	return 0;
}

size_t history_batch_count(const struct history_batch *b)
{
	return b->n;
}

size_t history_batch_bytes(const struct history_batch *b)
{
	return b->bytes;
}

/* Take the events out, so callbacks may add to the (now empty) batch. */
static struct pending *detach(struct history_batch *b, size_t *n)
{
	struct pending *ev = b->ev;

	*n = b->n;
	b->ev = NULL;
	b->n = b->cap = 0;
	b->bytes = 0;
	return ev;
}

static void free_pending(struct pending *ev, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ev[i].mem);
	free(ev);
}

void history_batch_fail(struct history_batch *b, int status)
{
	size_t n;
	struct pending *ev = detach(b, &n);

	drop_images(b, true);
	for (size_t i = 0; i < n; i++)
		if (ev[i].done)
			ev[i].done(ev[i].arg, status, 0);
	free_pending(ev, n);
}

void history_batch_free(struct history_batch *b)
{
	if (!b)
		return;
	history_batch_fail(b, -ECANCELED);
	free(b);
}

static int64_t now_ns(void)
{
	return db_now_ns();
}

int history_batch_add(struct history_batch *b, const struct history_record *r,
		      history_done_fn done, void *arg)
{
	const char *payload = r->payload ? r->payload : "{}";
	size_t ls = r->service ? strlen(r->service) + 1 : 0;
	size_t lc = r->call ? strlen(r->call) + 1 : 0;
	size_t lk, lp = strlen(payload) + 1, bytes;
	struct pending *p;
	char *m;

	if (!history_kind_valid(r->kind))
		return db_failf(b->h->db, -EINVAL, "invalid event kind '%.64s'",
				r->kind ? r->kind : "(null)");
	lk = strlen(r->kind) + 1;
	if ((r->service && !history_name_valid(r->service)) ||
	    (r->call && !history_name_valid(r->call)))
		return db_failf(b->h->db, -EINVAL,
				"%s: invalid service or call name", r->kind);
	if (starts_with(r->kind, "daemon.") ? r->service != NULL
					    : r->service == NULL)
		return db_failf(b->h->db, -EINVAL, "%s: %s", r->kind,
				r->service ? "daemon events name no service"
					   : "the event needs a service");
	if (starts_with(r->kind, "call.") && !r->call)
		return db_failf(b->h->db, -EINVAL, "%s: the event needs a call",
				r->kind);
	if (lp - 1 > HISTORY_PAYLOAD_MAX)
		return db_failf(b->h->db, -E2BIG,
				"%s: payload of %zu bytes exceeds %u", r->kind,
				lp - 1, HISTORY_PAYLOAD_MAX);
	bytes = ls + lc + lk + lp;
	if (b->bytes + bytes > HISTORY_BATCH_BYTES_MAX)
		return db_failf(b->h->db, -ENOBUFS,
				"the history batch is full (%zu bytes "
				"waiting for a commit)",
				b->bytes);
	if (!payload_valid_object(payload, lp - 1))
		return db_failf(b->h->db, -EINVAL,
				"%s: the payload is not a JSON object",
				r->kind);
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;
		struct pending *ev = realloc(b->ev, cap * sizeof(*ev));

		if (!ev)
			return db_failf(b->h->db, -ENOMEM, "out of memory");
		b->ev = ev;
		b->cap = cap;
	}
	m = malloc(bytes);
	if (!m)
		return db_failf(b->h->db, -ENOMEM, "out of memory");
	p = &b->ev[b->n];
	memset(p, 0, sizeof(*p));
	p->mem = m;
	if (r->service) {
		p->service = memcpy(m, r->service, ls);
		m += ls;
	}
	if (r->call) {
		p->call = memcpy(m, r->call, lc);
		m += lc;
	}
	p->kind = memcpy(m, r->kind, lk);
	m += lk;
	p->payload = memcpy(m, payload, lp);
	p->bytes = bytes;
	p->time = r->time ? r->time : now_ns();
	p->done = done;
	p->arg = arg;
	b->n++;
	b->bytes += bytes;
	return 0;
}

/* ---- group commit
 * -------------------------------------------------------------------- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/*
 * The errno for an event the schema refused: the unique index of calls
 * refuses a second start (-EEXIST) or a second terminal event
 * (-EALREADY); anything else is a bad event.
 */
static int refusal(struct history *h, const struct pending *p)
{
	if (sqlite3_extended_errcode(h->db->sql) != SQLITE_CONSTRAINT_UNIQUE)
		return -EINVAL;
	return strcmp(p->kind, HISTORY_CALL_STARTED) ? -EALREADY : -EEXIST;
}

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC)
		 : sqlite3_bind_null(st, i);
}

/* Bind p as row k (from 0) of an insert statement. */
static void bind_row(sqlite3_stmt *st, int k, const struct pending *p)
{
	int o = 5 * k;

	sqlite3_bind_int64(st, o + 1, p->time);
	bind_text(st, o + 2, p->service);
	bind_text(st, o + 3, p->call);
	bind_text(st, o + 4, p->kind);
	bind_text(st, o + 5, p->payload);
}

static bool is_start(const struct pending *p)
{
	return !strcmp(p->kind, HISTORY_CALL_STARTED);
}

/*
 * One event in a statement of its own.  A refused event is marked and
 * skipped; any other failure is the transaction's.
 */
static int insert_one(struct history *h, struct pending *p)
{
	bool terminal = history_kind_terminal(p->kind);
	/* A start this handle wrote needs no look-up. */
	bool known = terminal && open_calls_has(&h->open, p->call);
	sqlite3_stmt *st = terminal && !known ? h->insert_terminal
					      : h->insert[INSERT_SIZES - 1];
	int rc;

	bind_row(st, 0, p);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE && terminal && sqlite3_changes(h->db->sql) == 0) {
		p->seq = 0; /* no such call: nothing was inserted */
		p->status = -ENOENT;
	} else if (rc == SQLITE_DONE) {
		p->seq = (uint64_t)sqlite3_last_insert_rowid(h->db->sql);
		p->status = 0;
		if (terminal)
			open_calls_del(&h->open, p->call);
		else if (is_start(p))
			open_calls_add(&h->open, p->call);
	} else if ((rc & 0xff) == SQLITE_CONSTRAINT) {
		p->seq = 0;
		p->status = refusal(h, p);
	} else {
		rc = db_fail(h->db, rc, "appending to the history");
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		return rc;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return 0;
}

/*
 * ev[0..n) in one statement of n rows (st).  1 when the statement was
 * refused (a constraint: SQLite undid the whole statement, so the caller
 * redoes its rows one by one to learn which), 0 done, < 0 a failure.
 * The rows take consecutive sequence numbers: this connection holds the
 * write lock, and each row of the statement gets the largest rowid so far
 * plus one.
 */
static int insert_many(struct history *h, sqlite3_stmt *st, struct pending *ev,
		       size_t n)
{
	uint64_t last;
	int rc;

	for (size_t k = 0; k < n; k++)
		bind_row(st, (int)k, &ev[k]);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE && (size_t)sqlite3_changes(h->db->sql) != n)
		rc = db_failf(h->db, -EIO,
			      "appending to the history: %d of %zu rows",
			      sqlite3_changes(h->db->sql), n);
	else if (rc == SQLITE_DONE) {
		last = (uint64_t)sqlite3_last_insert_rowid(h->db->sql);
		for (size_t k = 0; k < n; k++) {
			ev[k].seq = last - (n - 1 - k);
			ev[k].status = 0;
		}
		rc = 0;
	} else if ((rc & 0xff) == SQLITE_CONSTRAINT)
		rc = 1;
	else
		rc = db_fail(h->db, rc, "appending to the history");
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

/*
 * A run of events none of which needs a look-up (insert_all() has put
 * the run's starts in the open set and taken its ends out), as greedy
 * multi-row statements.  When one is refused, the rows from it on are
 * redone one by one, after forgetting their starts: the set may forget,
 * never hold a call whose start is not written.
 */
static int insert_run(struct history *h, struct pending *ev, size_t n)
{
	size_t i = 0, j = 0;
	int rc;

	while (i < n) {
		while (insert_rows[j] > n - i)
			j++;
		rc = insert_many(h, h->insert[j], ev + i, insert_rows[j]);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			i += insert_rows[j];
			continue;
		}
		for (size_t k = i; k < n; k++)
			if (is_start(&ev[k]))
				open_calls_del(&h->open, ev[k].call);
		for (size_t k = i; k < n; k++)
			if ((rc = insert_one(h, &ev[k])))
				return rc;
		return 0;
	}
	return 0;
}

/*
 * Insert every event inside the open transaction, in batch order.  Runs
 * of events go as multi-row statements; a terminal event for a call this
 * handle did not see start is inserted alone, through the look-up that
 * refuses an end without a start (-ENOENT).  A refused event is marked
 * and skipped; any other failure is the transaction's.
 */
static int insert_all(struct history *h, struct history_batch *b)
{
	size_t start = 0;
	int rc;

	/* a batch of images only: no events (and b->ev may be NULL, which
	 * even `+ 0` may not be applied to) */
	if (b->n == 0)
		return 0;
	for (size_t i = 0; i < b->n; i++) {
		struct pending *p = &b->ev[i];
		bool terminal = history_kind_terminal(p->kind);

		if (terminal && !open_calls_has(&h->open, p->call)) {
			if ((rc = insert_run(h, b->ev + start, i - start)) ||
			    (rc = insert_one(h, p)))
				return rc;
			start = i + 1;
			continue;
		}
		if (terminal)
			open_calls_del(&h->open, p->call);
		else if (is_start(p))
			open_calls_add(&h->open, p->call);
		if (i + 1 - start == insert_rows[0]) {
			if ((rc = insert_run(h, b->ev + start, i + 1 - start)))
				return rc;
			start = i + 1;
		}
	}
	return insert_run(h, b->ev + start, b->n - start);
}

static void record_latency(struct history *h, uint64_t ns)
{
	uint64_t us = ns / 1000;
	size_t i = 0;

	while (i < HISTORY_LATENCY_BUCKETS - 1 &&
	       us >= history_latency_bounds_us[i])
		i++;
	h->stats.latency[i]++;
	h->stats.commit_ns_last = ns;
	h->stats.commit_ns_total += ns;
	if (ns > h->stats.commit_ns_max)
		h->stats.commit_ns_max = ns;
}

static void record_batch(struct history *h, size_t n)
{
	size_t i = 0;

	while (i < HISTORY_BATCH_BUCKETS - 1 && n > history_batch_bounds[i])
		i++;
	h->stats.batch[i]++;
	h->stats.batch_events += n;
}

/* Report durable events to the hook, in order, a chunk at a time. */
static void report(struct history *h, const struct pending *ev, size_t n)
{
	struct history_event chunk[64];
	size_t k = 0;

	if (!h->hook)
		return;
	for (size_t i = 0; i < n; i++) {
		if (ev[i].status)
			continue;
		chunk[k++] = (struct history_event){
			.seq = ev[i].seq,
			.time = ev[i].time,
			.service = ev[i].service,
			.call = ev[i].call,
			.kind = ev[i].kind,
			.payload = ev[i].payload,
		};
		if (k == sizeof(chunk) / sizeof(chunk[0])) {
			h->hook(h->hook_arg, chunk, k);
			k = 0;
		}
	}
	if (k)
		h->hook(h->hook_arg, chunk, k);
}

/*
 * The writer's half, inside a transaction begun on w's connection:
 * insert and commit.  On failure roll back and leave b as it was.
 * Touches w's connection and statements and b's events, nothing else.
 */
/*
 * The batch's images, after its events, in the same transaction.  One
 * the tables refuse as malformed (-EINVAL: our own bug, never the
 * disk's) is undone alone and reported; any other failure is the
 * transaction's.  Deltas, the image of almost every commit, are one
 * statement and need no savepoint.
 */
static int insert_images(struct history *w, struct history_batch *b)
{
	uint64_t upto = 0;

	for (size_t i = 0; i < b->n; i++)
		if (!b->ev[i].status && b->ev[i].seq > upto)
			upto = b->ev[i].seq;
	for (struct image *im = b->img; im; im = im->next) {
		int rc;

		if (!im->full) {
			enum fold_state fs = FOLD_NONE;

			/* one statement: a refusal leaves nothing behind */
			rc = snapshots_write_delta(w->db, im->service,
						   im->data, im->len, upto);
			if (rc == 0)
				rc = folds_wrote_delta(w->folds, w->db,
						       im->service, im->len,
						       &fs);
			im->over = fs == FOLD_OVER;
		} else if ((rc = db_exec(w->db, "SAVEPOINT image")) == 0) {
			/* two (the deltas go, the row is replaced): undone
			 * together when refused */
			rc = snapshots_write_full(w->db, im->service,
						  im->component, im->format,
						  im->data, im->len, upto);
			if (rc == -EINVAL && db_exec(w->db, "ROLLBACK TO image"))
				return -EIO;
			if (db_exec(w->db, "RELEASE image"))
				return -EIO;
			if (rc == 0)
				rc = folds_wrote_full(w->folds, im->service,
						      im->len);
		}
		im->refused = rc == -EINVAL;
		if (rc && rc != -EINVAL)
			return rc;
	}
	return 0;
}

static int write_open(struct history *w, struct history_batch *b)
{
	int rc = insert_all(w, b);

	if (rc == 0)
		rc = insert_images(w, b);
	if (rc == 0)
		rc = db_commit(w->db);
	if (rc) {
		db_rollback(w->db);
		for (size_t i = 0; i < b->n; i++)
			b->ev[i].seq = 0, b->ev[i].status = 0;
		/* What it learnt from the rolled-back rows is void. */
		open_calls_clear(&w->open);
		folds_forget(w->folds);
	}
	return rc;
}

/*
 * The owner's half, after the write ended with rc: account, and on
 * success report and call back.
 */
static int write_done(struct history *h, struct history_batch *b, int rc,
		      uint64_t ns)
{
	struct pending *ev;
	size_t n, durable = 0, refused = 0;

	if (rc) {
		h->stats.failures++;
		h->stats.last_error = rc;
		return rc;
	}
	drop_images(b, false); /* written (or refused: reported) */
	if (b->n == 0)
		return 0; /* an empty recovery: nothing to account */
	record_latency(h, ns);
	ev = detach(b, &n);
	for (size_t i = 0; i < n; i++) {
		if (ev[i].status) {
			refused++;
			continue;
		}
		durable++;
		if (ev[i].seq > h->last_seq)
			h->last_seq = ev[i].seq;
	}
	h->stats.commits++;
	h->stats.events += durable;
	h->stats.rejected += refused;
	h->stats.last_seq = h->last_seq;
	h->stats.last_error = 0;
	if (n > h->stats.max_batch)
		h->stats.max_batch = n;
	record_batch(h, n);
	report(h, ev, n);
	for (size_t i = 0; i < n; i++)
		if (ev[i].done)
			ev[i].done(ev[i].arg, ev[i].status, ev[i].seq);
	free_pending(ev, n);
	return 0;
}

/* Inside a transaction begun at t0: both halves on h's own connection. */
static int finish_commit(struct history *h, struct history_batch *b,
			 uint64_t t0)
{
	int rc = write_open(h, b);

	return write_done(h, b, rc, mono_ns() - t0);
}

int history_write(struct history *w, struct history_batch *b, uint64_t *ns)
{
	uint64_t t0 = mono_ns();
	int rc = 0;

	if (b->n || b->nimg) {
		rc = db_begin(w->db);
		if (rc == 0)
			rc = write_open(w, b);
	}
	*ns = mono_ns() - t0;
	return rc;
}

int history_write_done(struct history *h, struct history_batch *b,
		       const struct history *w, int rc, uint64_t ns)
{
	if (rc)
		db_failf(h->db, rc, "%s", db_errmsg(w->db));
	return write_done(h, b, rc, ns);
}

int history_commit(struct history *h, struct history_batch *b)
{
	uint64_t t0;
	int rc;

	if (b->n == 0 && b->nimg == 0)
		return 0;
	t0 = mono_ns();
	rc = db_begin(h->db);
	if (rc) {
		h->stats.failures++;
		h->stats.last_error = rc;
		return rc;
	}
	return finish_commit(h, b, t0);
}

/* Move from's images to the end of into's (a full one still replaces). */
static void take_images(struct history_batch *into, struct history_batch *from)
{
	if (!from->img)
		return;
	*into->img_tail = from->img;
	into->img_tail = from->img_tail;
	into->nimg += from->nimg;
	from->img = NULL;
	from->img_tail = &from->img;
	from->nimg = 0;
}

int history_batch_take(struct history_batch *into, struct history_batch *from)
{
	if (from->n == 0) {
		take_images(into, from);
		return 0;
	}
	if (into->n == 0) {
		struct pending *ev = into->ev;
		size_t cap = into->cap;

		into->ev = from->ev;
		into->n = from->n;
		into->cap = from->cap;
		into->bytes = from->bytes;
		from->ev = ev;
		from->cap = cap;
		from->n = 0;
		from->bytes = 0;
		take_images(into, from);
		return 0;
	}
	if (into->cap - into->n < from->n) {
		size_t cap = into->n + from->n;
		struct pending *ev = realloc(into->ev, cap * sizeof(*ev));

		if (!ev)
			return db_failf(into->h->db, -ENOMEM, "out of memory");
		into->ev = ev;
		into->cap = cap;
	}
	memcpy(into->ev + into->n, from->ev, from->n * sizeof(*from->ev));
	into->n += from->n;
	into->bytes += from->bytes;
	from->n = 0;
	from->bytes = 0;
	take_images(into, from);
	return 0;
}

/* ---- typed events
 * ------------------------------------------------------------------------- */

int history_add_fields(struct history_batch *b, const char *service,
		       const char *call, const char *kind,
		       const struct history_fields *f, history_done_fn done,
		       void *arg)
{
	struct history_record r = {service, call, kind, f->value_json, 0};
	struct payload p;
	char *text = NULL;
	int rc;

	if (f->value_key || f->has_hostcall || f->name_key || f->outcome ||
	    f->message || (f->caller && f->caller->valid)) {
		payload_begin(&p);
		if (f->has_hostcall)
			payload_int(&p, "hostcall", (int64_t)f->hostcall);
		if (f->name_key)
			payload_str(&p, f->name_key, f->name);
		if (f->outcome)
			payload_str(&p, "outcome", f->outcome);
		if (f->value_key && f->value_json)
			payload_raw(&p, f->value_key, f->value_json);
		if (f->message)
			payload_str(&p, "message", f->message);
		if (f->caller && f->caller->valid) {
			payload_object(&p, "caller");
			payload_int(&p, "pid", f->caller->pid);
			payload_int(&p, "uid", f->caller->uid);
			payload_int(&p, "gid", f->caller->gid);
			payload_end_object(&p);
		}
		if (!(text = payload_finish(&p)))
			return db_failf(b->h->db, -ENOMEM, "out of memory");
		r.payload = text;
	}
	rc = history_batch_add(b, &r, done, arg);
	free(text);
	return rc;
}

int history_add_call_started(struct history_batch *b, const char *service,
			     const char *call, const char *export_name,
			     const char *arguments_json,
			     const struct history_caller *caller,
			     history_done_fn done, void *arg)
{
	return history_add_fields(b, service, call, HISTORY_CALL_STARTED,
				  &(struct history_fields){
					  .name_key = "export",
					  .name = export_name,
					  .value_key = "arguments",
					  .value_json = arguments_json,
					  .caller = caller,
				  },
				  done, arg);
}

int history_add_call_ended(struct history_batch *b, const char *service,
			   const char *call, const char *kind,
			   const char *detail_json, history_done_fn done,
			   void *arg)
{
	if (!history_kind_terminal(kind))
		return db_failf(b->h->db, -EINVAL,
				"'%.64s' is not a terminal event kind",
				kind ? kind : "(null)");
	return history_add_fields(
		b, service, call, kind,
		&(struct history_fields){.value_json = detail_json}, done, arg);
}

char *history_value_bounded(const char *text, size_t len)
{
	char hex[SHA256_HEX_SIZE];
	struct payload p;
	size_t head = len < HISTORY_VALUE_HEAD ? len : HISTORY_VALUE_HEAD;

	/* Never end inside a character: a cut before a continuation byte
	 * backs up to (and leaves out) its lead byte. */
	while (head > 0 && head < len &&
	       ((unsigned char)text[head] & 0xc0) == 0x80)
		head--;
	sha256_hex(text, len, hex);
	payload_begin(&p);
	payload_bool(&p, "oversize", true);
	payload_int(&p, "bytes", (int64_t)len);
	payload_str(&p, "sha256", hex);
	payload_strn(&p, "head", text, head);
	return payload_finish(&p);
}

int history_add_hostcall_started(struct history_batch *b, const char *service,
				 const char *call, uint64_t hostcall,
				 const char *import_name,
				 const char *arguments_json)
{
	return history_add_fields(b, service, call, HISTORY_HOSTCALL_STARTED,
				  &(struct history_fields){
					  .has_hostcall = true,
					  .hostcall = hostcall,
					  .name_key = "import",
					  .name = import_name,
					  .value_key = "arguments",
					  .value_json = arguments_json,
				  },
				  NULL, NULL);
}

int history_add_hostcall_settled(struct history_batch *b, const char *service,
				 const char *call, uint64_t hostcall,
				 const char *outcome, const char *result_json,
				 const char *message)
{
	return history_add_fields(b, service, call, HISTORY_HOSTCALL_SETTLED,
				  &(struct history_fields){
					  .has_hostcall = true,
					  .hostcall = hostcall,
					  .outcome = outcome,
					  .value_key = "result",
					  .value_json = result_json,
					  .message = message,
				  },
				  NULL, NULL);
}

int history_add_store_event(struct history_batch *b, const char *kind,
			    const char *service, const char *component,
			    const char *detail_json)
{
	if (!kind || !starts_with(kind, "store."))
		return db_failf(b->h->db, -EINVAL,
				"'%.64s' is not a store event kind",
				kind ? kind : "(null)");
	return history_add_fields(
		b, service, NULL, kind,
		&(struct history_fields){
			.name_key = component ? "component" : NULL,
			.name = component,
			.value_key = "detail",
			.value_json = detail_json,
		},
		NULL, NULL);
}

int history_add_guest_line(struct history_batch *b, const char *service,
			   int stream, const char *line, size_t len,
			   bool truncated)
{
	struct payload p;
	char *text;
	int rc;

	if (stream != 1 && stream != 2)
		return db_failf(b->h->db, -EINVAL,
				"guest output stream %d (1 or 2)", stream);
	if (len > HISTORY_LINE_MAX) {
		len = HISTORY_LINE_MAX;
		/* Do not split a UTF-8 sequence. */
		for (int k = 0; k < 3 && len > 0 &&
				((unsigned char)line[len] & 0xc0) == 0x80;
		     k++)
			len--;
		truncated = true;
	}
	payload_begin(&p);
	payload_strn(&p, "line", line, len);
	if (truncated)
		payload_bool(&p, "truncated", true);
	text = payload_finish(&p);
	if (!text)
		return db_failf(b->h->db, -ENOMEM, "out of memory");
	rc = history_batch_add(b,
			       &(struct history_record){
				       .service = service,
				       .kind = stream == 1
						       ? HISTORY_GUEST_STDOUT
						       : HISTORY_GUEST_STDERR,
				       .payload = text,
			       },
			       NULL, NULL);
	free(text);
	return rc;
}

/* ---- recovery
 * ----------------------------------------------------------------------------------
 */

int history_open_calls(struct history *h, uint64_t *count)
{
	sqlite3_stmt *st;
	int rc = db_prepare(
		h->db,
		"SELECT count(*) FROM events s WHERE kind = 'call.started' "
		"AND NOT " CALL_ENDED("s"),
		&st);

	if (rc)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*count = (uint64_t)sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return db_fail(h->db, rc, "counting open calls");
}

int history_recover_interrupted(struct history *h, const char *reason)
{
	struct history_batch *b = history_batch_new(h);
	sqlite3_stmt *st = NULL;
	struct payload p;
	char *payload;
	uint64_t t0 = mono_ns();
	size_t n;
	int rc;

	if (!b)
		return db_failf(h->db, -ENOMEM, "out of memory");
	payload_begin(&p);
	payload_str(&p, "reason", reason);
	payload = payload_finish(&p);
	if (!payload) {
		history_batch_free(b);
		return db_failf(h->db, -ENOMEM, "out of memory");
	}
	rc = db_begin(h->db);
	if (rc)
		goto out;
	/* Read the open calls inside the transaction that closes them (a
	 * start in the history is open until it has a terminal event). */
	rc = db_prepare(
		h->db,
		"SELECT call, service FROM events s WHERE kind = "
		"'call.started' AND NOT " CALL_ENDED("s") " ORDER BY seq",
		&st);
	while (rc == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = history_batch_add(
			b,
			&(struct history_record){
				.service = (const char *)sqlite3_column_text(st,
									     1),
				.call = (const char *)sqlite3_column_text(st,
									  0),
				.kind = HISTORY_CALL_INTERRUPTED,
				.payload = payload,
			},
			NULL, NULL);
	if (rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = db_fail(h->db, rc, "listing open calls");
	sqlite3_finalize(st);
	if (rc) {
		db_rollback(h->db);
		goto out;
	}
	n = b->n;
	rc = finish_commit(h, b, t0);
	if (rc == 0)
		rc = (int)n;
out:
	history_batch_free(b);
	free(payload);
	return rc;
}

/* ---- reading
 * -----------------------------------------------------------------------------------
 */

/* "family.*" (GLOB-safe by construction) or an exact kind. */
static bool kind_pattern(const char *k, bool *prefix)
{
	size_t n = strlen(k);

	*prefix = n > 2 && !strcmp(k + n - 2, ".*");
	if (*prefix) {
		for (size_t i = 0; i < n - 2; i++) {
			char c = k[i];

			if (!((c >= 'a' && c <= 'z') ||
			      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
			      c == '.'))
				return false;
		}
		return k[0] != '.' && k[n - 3] != '.';
	}
	return kind_syntax(k, n);
}

bool history_kind_pattern_valid(const char *s)
{
	bool prefix;

	return s && kind_pattern(s, &prefix);
}

bool history_query_matches(const struct history_query *q,
			   const struct history_event *ev)
{
	if (q->service && (!ev->service || strcmp(q->service, ev->service)))
		return false;
	if (q->call && (!ev->call || strcmp(q->call, ev->call)))
		return false;
	if (!q->kinds || q->n_kinds == 0)
		return true;
	for (size_t i = 0; i < q->n_kinds; i++) {
		const char *k = q->kinds[i];
		size_t n = strlen(k);

		if (n > 2 && !strcmp(k + n - 2, ".*")) {
			if (!strncmp(ev->kind, k, n - 1))
				return true;
		} else if (!strcmp(ev->kind, k)) {
			return true;
		}
	}
	return false;
}

/* tail: the seq of the (OFFSET+1)-th newest match, not the rows. */
static int build_query(struct history *h, const struct history_query *q,
		       bool tail, char *sql, size_t size)
{
	size_t len;

	len = (size_t)snprintf(sql, size,
			       "SELECT %s "
			       "FROM events WHERE seq BETWEEN ? AND ?%s%s",
			       tail ? "seq"
				    : "seq, time, service, call, kind, payload",
			       q->service ? " AND service = ?" : "",
			       /* Both halves, so each uses its index. */
			       q->call ? " AND ((call = ? AND kind GLOB "
					 "'call.*') OR (call = ? AND call IS "
					 "NOT NULL AND kind NOT GLOB 'call.*'))"
				       : "");
	if (q->kinds && q->n_kinds) {
		if (q->n_kinds > HISTORY_KINDS_MAX)
			return db_failf(h->db, -EINVAL,
					"more than %d kinds in a query",
					HISTORY_KINDS_MAX);
		len += (size_t)snprintf(sql + len, size - len, " AND (");
		for (size_t i = 0; i < q->n_kinds; i++) {
			bool prefix;

			if (!q->kinds[i] || !kind_pattern(q->kinds[i], &prefix))
				return db_failf(h->db, -EINVAL,
						"invalid kind pattern '%.64s'",
						q->kinds[i] ? q->kinds[i]
							    : "(null)");
			len += (size_t)snprintf(
				sql + len, size - len, "%s%s", i ? " OR " : "",
				prefix ? "kind GLOB ?" : "kind = ?");
		}
		len += (size_t)snprintf(sql + len, size - len, ")");
	}
	snprintf(sql + len, size - len, "%s",
		 tail ? " ORDER BY seq DESC LIMIT 1 OFFSET ?"
		      : " ORDER BY seq LIMIT ?");
	return 0;
}

/* Bind q's range and filters, then last (the limit or the offset). */
static void bind_query(sqlite3_stmt *st, const struct history_query *q,
		       uint64_t from, uint64_t upto, int64_t last)
{
	int i = 1;

	sqlite3_bind_int64(st, i++, (int64_t)from);
	sqlite3_bind_int64(st, i++,
			   (int64_t)(upto > INT64_MAX ? INT64_MAX : upto));
	if (q->service)
		sqlite3_bind_text(st, i++, q->service, -1, SQLITE_STATIC);
	if (q->call) {
		sqlite3_bind_text(st, i++, q->call, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, i++, q->call, -1, SQLITE_STATIC);
	}
	/* As a GLOB pattern, "call.*" matches "call." and anything after. */
	for (size_t k = 0; q->kinds && k < q->n_kinds; k++)
		sqlite3_bind_text(st, i++, q->kinds[k], -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, i, last);
}

int history_tail_from(struct history *h, const struct history_query *q,
		      uint64_t n, uint64_t *from)
{
	char sql[256 + HISTORY_KINDS_MAX * 16];
	uint64_t first = q->from ? q->from : 1;
	uint64_t upto = q->upto ? q->upto : h->last_seq;
	sqlite3_stmt *st;
	int rc;

	*from = first;
	rc = build_query(h, q, true, sql, sizeof(sql));
	if (rc || n == 0 || first > upto)
		return rc;
	rc = db_prepare(h->db, sql, &st);
	if (rc)
		return rc;
	bind_query(st, q, first, upto,
		   (int64_t)(n - 1 > INT64_MAX ? INT64_MAX : n - 1));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*from = (uint64_t)sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE) /* DONE: fewer than n, from the start */
		rc = db_fail(h->db, rc, "reading the history's tail");
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : rc;
}

/* The time of the first event at or after seq: SQLITE_ROW (*t set),
 * SQLITE_DONE (none) or an error. */
static int time_from(sqlite3_stmt *st, uint64_t seq, int64_t *t)
{
	int rc;

	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, (int64_t)seq);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*t = sqlite3_column_int64(st, 0);
	return rc;
}

int history_seq_at_time(struct history *h, int64_t ns, uint64_t *seq)
{
	uint64_t lo = 1, hi = h->last_seq + 1;
	sqlite3_stmt *st;
	int rc;

	/* Invariant: events before lo are older than ns; from hi on, the
	 * first event is not (or there is none). */
	rc = db_prepare(h->db,
			"SELECT time FROM events WHERE seq >= ?1 ORDER BY seq "
			"LIMIT 1",
			&st);
	if (rc)
		return rc;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		int64_t t;

		rc = time_from(st, mid, &t);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
			rc = db_fail(h->db, rc,
				     "searching the history by time");
			sqlite3_finalize(st);
			return rc;
		}
		if (rc == SQLITE_ROW && t < ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	sqlite3_finalize(st);
	*seq = lo;
	return 0;
}

int history_read(struct history *h, const struct history_query *q,
		 history_read_fn fn, void *arg, uint64_t *next)
{
	char sql[256 + HISTORY_KINDS_MAX * 16];
	uint64_t from = q->from ? q->from : 1;
	uint64_t upto = q->upto ? q->upto : h->last_seq;
	size_t limit = q->limit ? q->limit : 1000;
	uint64_t last = 0;
	sqlite3_stmt *st;
	int rc, delivered = 0;
	bool stopped = false;

	*next = from;
	if (limit > INT32_MAX)
		limit = INT32_MAX;
	rc = build_query(h, q, false, sql, sizeof(sql));
	if (rc)
		return rc;
	if (from > upto)
		return 0;
	if (q->max_scan && upto - from >= q->max_scan)
		upto = from + q->max_scan - 1;
	rc = db_prepare(h->db, sql, &st);
	if (rc)
		return rc;
	bind_query(st, q, from, upto, (int64_t)limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct history_event ev = {
			.seq = (uint64_t)sqlite3_column_int64(st, 0),
			.time = sqlite3_column_int64(st, 1),
			.service = (const char *)sqlite3_column_text(st, 2),
			.call = (const char *)sqlite3_column_text(st, 3),
			.kind = (const char *)sqlite3_column_text(st, 4),
			.payload = (const char *)sqlite3_column_text(st, 5),
		};

		if (!ev.kind || !ev.payload) {
			rc = SQLITE_NOMEM;
			break;
		}
		last = ev.seq;
		delivered++;
		if (fn && fn(arg, &ev)) {
			stopped = true;
			rc = SQLITE_DONE;
			break;
		}
	}
	if (rc != SQLITE_DONE) {
		rc = db_fail(h->db, rc, "reading the history");
		sqlite3_finalize(st);
		return rc;
	}
	sqlite3_finalize(st);
	*next = stopped || (size_t)delivered == limit ? last + 1 : upto + 1;
	return delivered;
}

/* ---- retention
 * ------------------------------------------------------------------------------------
 */

static void prune_reset(struct prune_pass *p)
{
	struct history *h = p->h;
	struct history_prune_kept *kept = p->kept;

	for (size_t i = 0; i < p->n; i++)
		free(p->groups[i].service);
	free(p->groups);
	memset(p, 0, sizeof(*p));
	p->h = h;
	p->kept = kept;
}

static int add_group(struct prune_pass *p, const char *service,
		     uint64_t keep_events, uint64_t keep_age, int64_t now)
{
	struct history *h = p->h;
	struct prune_group *g;

	if (keep_events == 0 && keep_age == 0)
		return 0;
	g = realloc(p->groups, (p->n + 1) * sizeof(*g));
	if (!g)
		return db_failf(h->db, -ENOMEM, "out of memory");
	p->groups = g;
	g = &g[p->n];
	g->service = NULL;
	if (service && !(g->service = strdup(service)))
		return db_failf(h->db, -ENOMEM, "out of memory");
	g->keep_events = keep_events;
	g->age_cut = keep_age ? now - (int64_t)keep_age * 1000000000 : 0;
	p->n++;
	return 0;
}

static bool have_group(const struct prune_pass *p, const char *service)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->groups[i].service &&
		    !strcmp(p->groups[i].service, service))
			return true;
	return false;
}

/* A limit of the spec when it gives one (>= 0), else the configured. */
static uint64_t limit_of(int64_t wanted, uint64_t configured)
{
	return wanted >= 0 ? (uint64_t)wanted : configured;
}

/*
 * A service's group with its limits (a column, else the default; the
 * spec's override, if any).  A service without limits still gets a
 * group (keep_events UINT64_MAX: nothing to do), so the scan of the
 * services only the history names does not give it the defaults.
 */
static int add_service_group(struct prune_pass *p, sqlite3_stmt *st,
			     const struct history_prune_spec *spec, int64_t now)
{
	const struct history_retention *def = &p->h->defaults;
	uint64_t ke = sqlite3_column_type(st, 1) == SQLITE_NULL
			      ? def->keep_events
			      : (uint64_t)sqlite3_column_int64(st, 1);
	uint64_t ka = sqlite3_column_type(st, 2) == SQLITE_NULL
			      ? def->keep_age
			      : (uint64_t)sqlite3_column_int64(st, 2);

	ke = limit_of(spec->keep_events, ke);
	ka = limit_of(spec->keep_age, ka);
	if (ke == 0 && ka == 0)
		ke = UINT64_MAX;
	return add_group(p, (const char *)sqlite3_column_text(st, 0), ke, ka,
			 now);
}

/*
 * The groups of a pass: every service with its limits (or only the
 * spec's service), the services that only the history still names, and
 * the daemon's own events.
 */
static int start_pass(struct prune_pass *p,
		      const struct history_prune_spec *spec, int64_t now)
{
	struct history *h = p->h;
	uint64_t def_ke = limit_of(spec->keep_events, h->defaults.keep_events);
	uint64_t def_ka = limit_of(spec->keep_age, h->defaults.keep_age);
	sqlite3_stmt *st;
	char *after = NULL;
	bool found = false;
	int rc;

	prune_reset(p);
	rc = query_newest(h, &p->newest);
	if (rc)
		return rc;
	rc = db_prepare(h->db,
			spec->service ? "SELECT name, keep_events, keep_age "
					"FROM services WHERE name = ?1"
				      : "SELECT name, keep_events, keep_age "
					"FROM services ORDER BY name",
			&st);
	if (rc == 0 && spec->service)
		sqlite3_bind_text(st, 1, spec->service, -1, SQLITE_STATIC);
	while (rc == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		found = true;
		rc = add_service_group(p, st, spec, now);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != 0)
		return rc > 0 ? db_fail(h->db, rc, "listing services") : rc;
	if (spec->service) {
		/* A service only the history names: the defaults. */
		rc = found ? 0
			   : add_group(p, spec->service, def_ke, def_ka, now);
		goto out;
	}
	/* Services known only to the history: one index seek each. */
	rc = db_prepare(h->db,
			"SELECT service FROM events WHERE service > ?1 "
			"ORDER BY service LIMIT 1",
			&st);
	while (rc == 0) {
		char *name;

		sqlite3_bind_text(st, 1, after ? after : "", -1,
				  SQLITE_TRANSIENT);
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		name = strdup((const char *)sqlite3_column_text(st, 0));
		sqlite3_reset(st);
		if (!name) {
			rc = db_failf(h->db, -ENOMEM, "out of memory");
			break;
		}
		free(after);
		after = name;
		rc = have_group(p, name)
			     ? 0
			     : add_group(p, name, def_ke, def_ka, now);
	}
	free(after);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != 0)
		return rc > 0 ? db_fail(h->db, rc, "listing services") : rc;
	rc = add_group(p, NULL, def_ke, def_ka, now);
out:
	if (rc)
		return rc;
	p->active = true;
	p->cur = 0;
	return 0;
}

static void group_begin(struct prune_pass *p)
{
	struct prune_group *g = &p->groups[p->cur];

	p->phase = g->keep_events && g->keep_events != UINT64_MAX
			   ? PRUNE_COUNT
			   : PRUNE_DELETE;
	p->top = p->newest + 1;
	p->remaining = g->keep_events;
	p->count_cut = 0;
	p->cursor = 0;
}

/* Walk down from the newest event to find the oldest one to keep. */
static int count_step(struct prune_pass *p, struct prune_group *g,
		      size_t max_rows)
{
	struct history *h = p->h;
	uint64_t k = p->remaining < max_rows ? p->remaining : max_rows;
	sqlite3_stmt *st;
	int rc = db_prepare(h->db,
			    "SELECT seq FROM events WHERE service IS ?1 AND "
			    "seq < ?2 ORDER BY seq DESC LIMIT 1 OFFSET ?3",
			    &st);

	if (rc)
		return rc;
	bind_text(st, 1, g->service);
	sqlite3_bind_int64(st, 2, (int64_t)p->top);
	sqlite3_bind_int64(st, 3, (int64_t)k - 1);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		p->top = (uint64_t)sqlite3_column_int64(st, 0);
		p->remaining -= k;
		if (p->remaining == 0) {
			p->count_cut = p->top;
			p->phase = PRUNE_DELETE;
		}
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE) {
		/* Fewer events than the limit: the count keeps them all. */
		p->count_cut = 0;
		p->phase = PRUNE_DELETE;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return db_fail(h->db, rc, "counting events for retention");
}

/*
 * Retention keeps the newest event of the whole history: a new event
 * takes the largest seq plus one (the table has no AUTOINCREMENT,
 * store/schema.c), so that one holds the floor and no sequence number
 * comes back.
 */
#define NOT_NEWEST "seq < (SELECT max(seq) FROM events)"

/* Delete the events seqs[0..n) but the newest; *deleted: how many went. */
static int delete_seqs(struct history *h, const uint64_t *seqs, size_t n,
		       size_t *deleted)
{
	sqlite3_stmt *st;
	int rc = db_prepare(h->db,
			    "DELETE FROM events WHERE seq = ?1 AND " NOT_NEWEST,
			    &st);

	*deleted = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		sqlite3_bind_int64(st, 1, (int64_t)seqs[i]);
		rc = sqlite3_step(st);
		rc = rc == SQLITE_DONE ? 0 : db_fail(h->db, rc, "pruning");
		if (rc == 0)
			*deleted += (size_t)sqlite3_changes(h->db->sql);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

/* An open call that keeps expired events: among the first few, once. */
static void note_open_call(struct history_prune_kept *k, const char *call)
{
	for (size_t i = 0; i < k->n_calls; i++)
		if (!strcmp(k->calls[i], call))
			return;
	if (k->n_calls == HISTORY_PRUNE_CALLS) {
		k->more_calls = true;
		return;
	}
	snprintf(k->calls[k->n_calls++], sizeof(k->calls[0]), "%s", call);
}

/*
 * Examine up to max_rows of the group's oldest events and delete the
 * expired ones that belong to no open call.  *done when the group has
 * nothing more to prune.  A start that goes leaves the handle's set of
 * open calls too: its call had ended, and a set that named it would let
 * a second end in once the first is gone.
 */
static int delete_step(struct prune_pass *p, struct prune_group *g,
		       size_t max_rows, size_t *deleted, bool *done)
{
	struct history *h = p->h;
	uint64_t *seqs = malloc(max_rows * sizeof(*seqs));
	size_t n = 0, seen = 0, gone = 0;
	sqlite3_stmt *st = NULL;
	int rc;

	*done = false;
	if (!seqs)
		return db_failf(h->db, -ENOMEM, "out of memory");
	if (p->count_cut == 0 && g->age_cut == 0) {
		*done = true;
		free(seqs);
		return 0;
	}
	rc = db_begin(h->db);
	if (rc == 0)
		rc = db_prepare(
			h->db,
			"SELECT seq, time, call IS NOT NULL AND " CALL_OPEN(
				"events") ", call, kind = 'call.started' "
					  "FROM events WHERE service IS ?1 "
					  "AND seq >= ?2 ORDER BY seq LIMIT ?3",
			&st);
	if (rc == 0) {
		bind_text(st, 1, g->service);
		sqlite3_bind_int64(st, 2, (int64_t)p->cursor);
		sqlite3_bind_int64(st, 3, (int64_t)max_rows);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			uint64_t seq = (uint64_t)sqlite3_column_int64(st, 0);
			int64_t t = sqlite3_column_int64(st, 1);
			bool open = sqlite3_column_int(st, 2) != 0;
			const char *call =
				(const char *)sqlite3_column_text(st, 3);

			seen++;
			if (seq >= p->count_cut &&
			    !(g->age_cut && t < g->age_cut)) {
				/* Kept, and so is everything after it. */
				*done = true;
				break;
			}
			p->cursor = seq + 1;
			if (open && p->kept) {
				p->kept->open++;
				note_open_call(p->kept, call);
			} else if (!open) {
				seqs[n++] = seq;
				if (sqlite3_column_int(st, 4))
					open_calls_del(&h->open, call);
			}
		}
		rc = rc == SQLITE_ROW || rc == SQLITE_DONE
			     ? 0
			     : db_fail(h->db, rc, "scanning for retention");
		sqlite3_finalize(st);
	}
	if (rc == 0 && seen < max_rows)
		*done = true;
	if (rc == 0)
		rc = delete_seqs(h, seqs, n, &gone);
	if (rc == 0)
		rc = db_commit(h->db);
	if (rc) {
		db_rollback(h->db);
		free(seqs);
		return rc;
	}
	*deleted += gone;
	p->deleted += gone;
	h->stats.pruned += gone;
	if (p->kept)
		p->kept->limits += n - gone; /* the newest of the history */
	free(seqs);
	return 0;
}

/*
 * Count the group's events from the cursor (the first one its limits
 * keep) to the newest of the pass, max_rows at a time: what the limits
 * keep, for a pass that removed nothing and says why.
 */
static int tally_step(struct prune_pass *p, struct prune_group *g,
		      size_t max_rows, bool *done)
{
	struct history *h = p->h;
	sqlite3_stmt *st;
	int rc = db_prepare(h->db,
			    "SELECT count(*), max(seq) FROM (SELECT seq FROM "
			    "events WHERE service IS ?1 AND seq >= ?2 AND "
			    "seq <= ?3 ORDER BY seq LIMIT ?4)",
			    &st);

	*done = false;
	if (rc)
		return rc;
	bind_text(st, 1, g->service);
	sqlite3_bind_int64(st, 2, (int64_t)p->cursor);
	sqlite3_bind_int64(st, 3, (int64_t)p->newest);
	sqlite3_bind_int64(st, 4, (int64_t)max_rows);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		uint64_t c = (uint64_t)sqlite3_column_int64(st, 0);

		p->kept->limits += c;
		p->cursor = (uint64_t)sqlite3_column_int64(st, 1) + 1;
		*done = c < max_rows;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return db_fail(h->db, rc, "counting the events retention keeps");
}

/* One bounded step of an active pass: 1 more to do, 0 done, or -errno. */
static int pass_step(struct prune_pass *p, size_t max_rows, size_t *deleted)
{
	int rc;

	for (;;) {
		struct prune_group *g = &p->groups[p->cur];
		bool done = false;

		if (g->keep_events == UINT64_MAX) {
			done = true; /* a service without limits */
		} else if (p->phase == PRUNE_COUNT) {
			/* Up to max_rows index entries: a step's work. */
			rc = count_step(p, g, max_rows);
			if (rc)
				goto fail;
			return 1;
		} else if (p->phase == PRUNE_TALLY) {
			rc = tally_step(p, g, max_rows, &done);
			if (rc)
				goto fail;
		} else {
			rc = delete_step(p, g, max_rows, deleted, &done);
			if (rc)
				goto fail;
			if (done && p->kept && p->deleted == 0) {
				/* Nothing went yet: count what stays. */
				p->phase = PRUNE_TALLY;
				return 1;
			}
		}
		if (!done)
			return 1;
		if (++p->cur == p->n) {
			prune_reset(p);
			return 0;
		}
		group_begin(p);
		if (*deleted)
			return 1; /* one transaction's work per step */
	}
fail:
	prune_reset(p);
	return rc;
}

int history_pruner_new(struct history *h, const struct history_prune_spec *spec,
		       int64_t now, struct history_pruner **out)
{
	struct history_pruner *pr;
	int rc;

	*out = NULL;
	if (spec->service && !history_name_valid(spec->service))
		return db_failf(h->db, -EINVAL, "invalid service name");
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return db_failf(h->db, -ENOMEM, "out of memory");
	pr->pass.h = h;
	if (spec->explain)
		pr->pass.kept = &pr->kept;
	rc = start_pass(&pr->pass, spec, now);
	if (rc) {
		history_pruner_free(pr);
		return rc;
	}
	if (pr->pass.n == 0) {
		prune_reset(&pr->pass);
		pr->done = true;
	} else {
		group_begin(&pr->pass);
	}
	*out = pr;
	return 0;
}

int history_pruner_step(struct history_pruner *pr, size_t max_rows,
			size_t *deleted)
{
	int rc;

	*deleted = 0;
	if (pr->done)
		return 0;
	if (max_rows == 0)
		max_rows = 1000;
	rc = pass_step(&pr->pass, max_rows, deleted);
	if (rc <= 0)
		pr->done = true;
	return rc;
}

const struct history_prune_kept *
history_pruner_kept(const struct history_pruner *pr)
{
	return pr->pass.kept ? &pr->kept : NULL;
}

void history_pruner_free(struct history_pruner *pr)
{
	if (!pr)
		return;
	prune_reset(&pr->pass);
	free(pr);
}

int history_prune_before(struct history *h, const char *service,
			 uint64_t before_seq, size_t max_rows, size_t *deleted)
{
	uint64_t *seqs;
	sqlite3_stmt *st = NULL;
	size_t n = 0, gone = 0;
	int rc;

	*deleted = 0;
	if (max_rows == 0)
		max_rows = 1000;
	seqs = malloc(max_rows * sizeof(*seqs));
	if (!seqs)
		return db_failf(h->db, -ENOMEM, "out of memory");
	rc = db_begin(h->db);
	if (rc == 0)
		rc = db_prepare(
			h->db,
			service ? "SELECT seq, call, kind = 'call.started' "
				  "FROM events WHERE service = ?3 "
				  "AND seq < ?1 AND " NOT_NEWEST
				  " AND NOT (call IS NOT NULL "
				  "AND " CALL_OPEN(
					  "events") ") ORDER BY seq LIMIT ?2"
				: "SELECT seq, call, kind = 'call.started' "
				  "FROM events WHERE seq < ?1 "
				  "AND " NOT_NEWEST " AND "
				  "NOT (call IS NOT NULL AND " CALL_OPEN(
					  "events") ") ORDER BY seq LIMIT ?2",
			&st);
	if (rc == 0) {
		sqlite3_bind_int64(st, 1,
				   (int64_t)(before_seq > INT64_MAX
						     ? INT64_MAX
						     : before_seq));
		sqlite3_bind_int64(st, 2, (int64_t)max_rows);
		if (service)
			sqlite3_bind_text(st, 3, service, -1, SQLITE_STATIC);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			seqs[n++] = (uint64_t)sqlite3_column_int64(st, 0);
			/* An ended call's start: as in delete_step(). */
			if (sqlite3_column_int(st, 2))
				open_calls_del(
					&h->open,
					(const char *)sqlite3_column_text(st,
									  1));
		}
		rc = rc == SQLITE_DONE ? 0 : db_fail(h->db, rc, "pruning");
		sqlite3_finalize(st);
	}
	if (rc == 0)
		rc = delete_seqs(h, seqs, n, &gone);
	if (rc == 0)
		rc = db_commit(h->db);
	free(seqs);
	if (rc) {
		db_rollback(h->db);
		return rc;
	}
	*deleted = gone;
	h->stats.pruned += gone;
	return n == max_rows ? 1 : 0;
}
