/*
 * history.h - the durable event history: group commit, the exactly-once
 * terminal rule, recovery, reading and following, retention.
 *
 * An event is (seq, time, service, call, kind, payload).  seq is global
 * and strictly increasing, never reused (retention never removes the
 * newest event, whose seq is the floor of the next one); time is
 * unix nanoseconds taken when the event was added; payload is the text of
 * a JSON object.  The history is append-only: the schema refuses updates.
 *
 * Kinds (payload members in parentheses; optional ones marked ?):
 *   call.started      (export, arguments, caller{pid,uid,gid}?)
 *   call.returned     (results?)        \
 *                     (arguments and results longer than
 *                     HISTORY_VALUE_MAX are recorded in their bounded
 *                     form: see history_value_bounded())
 *   call.trapped      (trap, message?)   |  terminal: exactly one per
 *   call.cancelled    (reason?)          |  call.started, enforced by the
 *   call.failed       (error, message?)  |  schema (store/schema.h)
 *   call.interrupted  (reason)          /
 *   hostcall.started  (hostcall, import, arguments?)
 *   hostcall.settled  (hostcall, outcome, result?, message?)
 *                     (the daemon records arguments and results longer
 *                     than HISTORY_VALUE_MAX in their bounded form too)
 *   store.created / store.poisoned / store.recreated (component?, ...)
 *   store.snapshotted (bytes, ms, trigger) / store.snapshot_failed
 *                     (reason, trigger) / store.restored (bytes,
 *                     deltas, upto, calls) /
 *                     store.restore_failed (reason): durability
 *   service.*         (service lifecycle: created, updated, removed, ...)
 *   daemon.*          (started, stopped, reloaded, ...; no service)
 *   guest.stdout / guest.stderr  (line, truncated?): one line of output,
 *                     at most HISTORY_LINE_MAX bytes
 *   history.migrated  (schema, sequence): written once by the upgrade to
 *                     schema 6 when the newest events had been pruned,
 *                     so that seqs go on past `sequence`
 * call.*, hostcall.*, store.*, service.* and guest.* events name their
 * service; call.* events name their call.  Kinds are lowercase words of
 * [a-z0-9_-] joined by dots, at most HISTORY_KIND_MAX bytes.
 *
 * Group commit and durability (the daemon's invariant 6):
 *   Events are added to a history_batch, in memory; history_commit()
 *   writes the whole batch in ONE transaction (BEGIN IMMEDIATE ... COMMIT,
 *   one fsync with synchronous=FULL).  Each event may carry a `done`
 *   callback, called exactly once:
 *     - status 0 and its seq, after the COMMIT succeeded: the event is
 *       durable, so the daemon may now send the reply it guards;
 *     - a negative errno and seq 0 when the schema refused this one event
 *       (-EEXIST: the call already started; -ENOENT: a terminal event for
 *       a call that never started; -EALREADY: the call already ended;
 *       -EINVAL: a bad payload).  The rest of the batch still commits:
 *       one faulty event never costs other calls their durability;
 *     - the batch's error when the caller gives up on a failed batch
 *       (history_batch_fail()), or -ECANCELED when a batch is freed with
 *       events still in it.
 *   When the transaction itself fails (disk full: -ENOSPC, I/O error:
 *   -EIO, -EBUSY, ...), history_commit() rolls back, returns the error and
 *   KEEPS the batch unchanged: nothing of it is visible, no callback has
 *   run.  The caller then either calls history_commit() again later (new
 *   events may be added meanwhile; order is kept) or gives up with
 *   history_batch_fail(), which calls every callback with the error.
 *   Callbacks never see success for an event that might later be lost,
 *   and never see an error for an event that later becomes durable.
 *
 * Following (no gap, no duplicate):
 *   history_last_seq() is the highest committed seq; it only changes
 *   inside history_commit(), history_write_done() and
 *   history_recover_interrupted(), on the owner's thread.  After
 *   each successful commit the commit hook receives the events just made
 *   durable, with their seqs, in order.  A follower in the same thread
 *   reads the backlog with history_read() up to history_last_seq() (in
 *   pages, across loop turns if it likes); once its cursor passes the
 *   last seq it switches to the commit hook, which reports every later
 *   event exactly once.  Because the last seq and the hook change only
 *   on that thread, no commit can fall between the last page and the
 *   switch (rows a writer thread committed but whose
 *   history_write_done() has not run yet lie beyond the last seq: the
 *   hook reports them).
 *
 * All functions return 0 (or a count) or a negative errno; the message
 * of the last failure is db_errmsg() of the database.
 */
#ifndef HOSTEL_STORE_HISTORY_H
#define HOSTEL_STORE_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/snapshots.h"

struct db;
struct history;
struct history_batch;

#define HISTORY_KIND_MAX  64
#define HISTORY_NAME_MAX  256  /* service names, call ids */
#define HISTORY_LINE_MAX  4096 /* bytes of one guest output line */
#define HISTORY_KINDS_MAX 32   /* kind patterns in one query */
/* One event's payload text; half a varlink message, so an event always
 * fits in a reply. */
#define HISTORY_PAYLOAD_MAX (8u << 20)
/*
 * A value (a call's arguments or results) whose JSON text is longer than
 * this is recorded in its bounded form instead (history_value_bounded):
 * the payload bound less 64 KiB for the event's other members (export
 * name, caller) and the bounded form itself, so that no value, whatever
 * its size, makes the history refuse a call's event.
 */
#define HISTORY_VALUE_MAX (HISTORY_PAYLOAD_MAX - (64u << 10))
/* Bytes of the value's JSON text the bounded form keeps ("head"). */
#define HISTORY_VALUE_HEAD 4096
/* A batch refuses new events (-ENOBUFS) beyond this many payload bytes:
 * a batch that cannot be committed must not eat all memory. */
#define HISTORY_BATCH_BYTES_MAX (64u << 20)

#define HISTORY_CALL_STARTED	 "call.started"
#define HISTORY_CALL_RETURNED	 "call.returned"
#define HISTORY_CALL_TRAPPED	 "call.trapped"
#define HISTORY_CALL_CANCELLED	 "call.cancelled"
#define HISTORY_CALL_FAILED	 "call.failed"
#define HISTORY_CALL_INTERRUPTED "call.interrupted"
#define HISTORY_HOSTCALL_STARTED "hostcall.started"
#define HISTORY_HOSTCALL_SETTLED "hostcall.settled"
#define HISTORY_STORE_CREATED	 "store.created"
#define HISTORY_STORE_POISONED	 "store.poisoned"
#define HISTORY_STORE_RECREATED	 "store.recreated"
/* Durable stores (issue 22): the daemon's payloads, hostel-protocol(7). */
#define HISTORY_STORE_SNAPSHOTTED     "store.snapshotted"
#define HISTORY_STORE_SNAPSHOT_FAILED "store.snapshot_failed"
#define HISTORY_STORE_RESTORED	      "store.restored"
#define HISTORY_STORE_RESTORE_FAILED  "store.restore_failed"
#define HISTORY_DAEMON_STARTED	 "daemon.started"
#define HISTORY_DAEMON_STOPPED	 "daemon.stopped"
#define HISTORY_DAEMON_RELOADED	 "daemon.reloaded"
#define HISTORY_GUEST_STDOUT	 "guest.stdout"
#define HISTORY_GUEST_STDERR	 "guest.stderr"

/* One event as read back or as reported by the commit hook. */
struct history_event {
	uint64_t seq;
	int64_t time;	     /* unix ns */
	const char *service; /* NULL for daemon.* events */
	const char *call;    /* NULL unless the event belongs to a call */
	const char *kind;
	const char *payload; /* JSON object text */
};

/* What a caller adds; time 0 means now. */
struct history_record {
	const char *service;
	const char *call;
	const char *kind;
	const char *payload; /* NULL: "{}" */
	int64_t time;
};

typedef void (*history_done_fn)(void *arg, int status, uint64_t seq);
typedef void (*history_commit_fn)(void *arg, const struct history_event *events,
				  size_t n);

/* ---- the handle --------------------------------------------------------- */

/* The history of an open database (db outlives it). */
int history_open(struct db *db, struct history **out);
void history_free(struct history *h);

/* The highest committed seq (0 when the history is empty). */
uint64_t history_last_seq(const struct history *h);

/* Called after every successful commit with the events it made durable. */
void history_set_commit_hook(struct history *h, history_commit_fn fn,
			     void *arg);

/* Whether kind is well formed and of a known family. */
bool history_kind_valid(const char *kind);
bool history_kind_terminal(const char *kind);

/* ---- batches and group commit ---------------------------------------------
 */

struct history_batch *history_batch_new(struct history *h);
/* Free; events still in it get -ECANCELED. */
void history_batch_free(struct history_batch *b);
size_t history_batch_count(const struct history_batch *b);
size_t history_batch_bytes(const struct history_batch *b);

/*
 * Add an event (copied).  Checks at once what needs no database state:
 * the kind, the names it requires, the payload being a JSON object,
 * the size bounds.  -EINVAL, -E2BIG, -ENOBUFS (batch full) or -ENOMEM;
 * on error `done` is not called.
 */
int history_batch_add(struct history_batch *b, const struct history_record *r,
		      history_done_fn done, void *arg);

/* Commit the batch in one transaction (see the top of this file). */
int history_commit(struct history *h, struct history_batch *b);

/*
 * history_commit() in two halves, so that another thread may do the
 * writing while the owner of h goes on.  w is a second history handle,
 * opened with history_open() on a second connection to the same
 * database (db_open() without the lock) and used by that thread only.
 *   history_write(w, b, &ns) runs on the writer's thread while nobody
 *   else touches b: it inserts and commits b in one transaction on w's
 *   connection and marks each event, touching nothing but w and b's
 *   events; on failure it rolls back and leaves b unchanged.  *ns: how
 *   long it took.
 *   history_write_done(h, b, w, rc, ns) runs afterwards on h's thread,
 *   with rc what history_write() returned: it does what history_commit()
 *   does after the write (accounting, last seq, the commit hook, the
 *   callbacks); on failure it keeps b, copies w's message to h's
 *   database and returns rc, exactly as history_commit().
 * The owner must not start a second write before the first is done: the
 * order of commits is the order of the history.
 */
int history_write(struct history *w, struct history_batch *b, uint64_t *ns);
int history_write_done(struct history *h, struct history_batch *b,
		       const struct history *w, int rc, uint64_t ns);

/*
 * Move every event of `from` to the end of `into` (both of the same
 * history), in order; `from` empties.  For a batch whose commit failed
 * while newer events gathered: the retry commits old and new together,
 * in order.  -ENOMEM leaves both unchanged.
 */
int history_batch_take(struct history_batch *into, struct history_batch *from);

/* Give up on a batch: every callback gets `status`; the batch empties. */
void history_batch_fail(struct history_batch *b, int status);

/*
 * Store images (durability "commit", store/snapshots.h): a service's full
 * snapshot or delta rides in a batch and is written in the same
 * transaction as its events, after them, with upto = the seq of the
 * batch's last event (0 when it has none).  The batch takes `data`
 * (malloc'd) over, whatever the result.  A full image replaces the
 * images of that service already in the batch (it holds their state)
 * and its deltas in the database; deltas are written in the order added.
 * history_batch_take moves images along with events; an image that is
 * never written (history_batch_fail, history_batch_free, or refused as
 * malformed: -EINVAL, without failing the events) is reported to the
 * history's image hook, so its service starts a new chain with a full
 * image.  So is a delta written past its service's hard bound of deltas
 * (store/folds.h), so that the next image is full and replaces them.
 * Images do not count toward HISTORY_BATCH_BYTES_MAX: each is bounded by
 * the snapshot bound, and a full image replaces a service's earlier ones
 * in a batch (docs/limits.md).  -EINVAL or -ENOMEM (data freed, the hook
 * not called).
 */
int history_batch_add_image(struct history_batch *b, const char *service,
			    const char *component, uint32_t format, bool full,
			    void *data, size_t len);
size_t history_batch_images(const struct history_batch *b);
/* over: written, but past the hard bound of deltas (else never written) */
typedef void (*history_image_fn)(void *arg, const char *service, bool over);
void history_set_image_hook(struct history *h, history_image_fn dropped,
			    void *arg);

/*
 * Folds (store/folds.h): the deltas this history writes are folded into
 * their snapshots with fn, a step at a time, on this history's
 * connection: history_fold_step, when history_fold_due, between batches
 * (the daemon's writer thread, or its loop without one).  Without fn no
 * fold is ever due and deltas end at the hard bound.  A step returns 0,
 * or an error with why (a fold refused, a database error).
 */
void history_set_fold(struct history *h, snapshots_fold_fn fn, void *arg);
bool history_fold_due(const struct history *h);
int history_fold_step(struct history *h, char *why, size_t whylen);

/* ---- typed events (payload builders over history_batch_add) ---------------
 */

struct history_caller {
	bool valid;
	int64_t pid, uid, gid;
};

/*
 * An event's payload by its members, in this order, each left out when
 * absent (NULL; hostcall unless has_hostcall; caller unless valid):
 *   hostcall, <name_key>: name, outcome, <value_key>: value_json
 *   (JSON text), message, caller{pid,uid,gid}.
 * With value_key NULL, value_json (a JSON object, or NULL: "{}") is
 * the whole payload and the other members must be absent.  Every
 * payload of the kinds at the top of this file is one of these.
 */
struct history_fields {
	bool has_hostcall;
	uint64_t hostcall;
	const char *name_key, *name;
	const char *outcome;
	const char *value_key, *value_json;
	const char *message;
	const struct history_caller *caller;
};

/* Add an event of `kind` built from f (as history_batch_add()). */
int history_add_fields(struct history_batch *b, const char *service,
		       const char *call, const char *kind,
		       const struct history_fields *f, history_done_fn done,
		       void *arg);

int history_add_call_started(struct history_batch *b, const char *service,
			     const char *call, const char *export_name,
			     const char *arguments_json,
			     const struct history_caller *caller,
			     history_done_fn done, void *arg);

/*
 * A terminal event; `kind` is one of the five terminal kinds and
 * detail_json a JSON object whose members join the payload (NULL: none).
 */
int history_add_call_ended(struct history_batch *b, const char *service,
			   const char *call, const char *kind,
			   const char *detail_json, history_done_fn done,
			   void *arg);

int history_add_hostcall_started(struct history_batch *b, const char *service,
				 const char *call, uint64_t hostcall,
				 const char *import_name,
				 const char *arguments_json);
/* outcome: "returned" (result_json: its value, or NULL for none),
 * "trapped" (message) or "cancelled". */
int history_add_hostcall_settled(struct history_batch *b, const char *service,
				 const char *call, uint64_t hostcall,
				 const char *outcome, const char *result_json,
				 const char *message);

/* store.created / store.poisoned / store.recreated. */
int history_add_store_event(struct history_batch *b, const char *kind,
			    const char *service, const char *component,
			    const char *detail_json);

/*
 * One line of guest output (stream 1: stdout, 2: stderr), without its
 * newline; longer lines are cut at HISTORY_LINE_MAX bytes (on a UTF-8
 * boundary) and marked "truncated": true.
 */
int history_add_guest_line(struct history_batch *b, const char *service,
			   int stream, const char *line, size_t len,
			   bool truncated);

/*
 * The bounded form of a value whose JSON text (text[0..len)) is longer
 * than HISTORY_VALUE_MAX, recorded in its place:
 *   {"oversize": true, "bytes": N, "sha256": "<64 hex digits>",
 *    "head": "<text>"}
 * bytes is len, sha256 the digest of the whole text, head its first
 * HISTORY_VALUE_HEAD bytes at most, cut back to a UTF-8 character
 * boundary (a JSON string holding that JSON text).  Any text is taken;
 * the form does not depend on HISTORY_VALUE_MAX.  Returns the object's
 * JSON text (the caller frees it), or NULL when out of memory.
 */
char *history_value_bounded(const char *text, size_t len);

/* ---- recovery ------------------------------------------------------------ */

/*
 * Close every call that has a call.started and no terminal event with a
 * call.interrupted (payload {"reason": reason}), all in one transaction.
 * Returns the number of calls closed, or a negative errno (nothing is
 * written then).  Run at start, before any new call.
 */
int history_recover_interrupted(struct history *h, const char *reason);

/* Calls whose start is in the history and whose terminal event is not:
 * the open calls (tests and diagnostics). */
int history_open_calls(struct history *h, uint64_t *count);

/* ---- reading ----------------------------------------------------------------
 */

struct history_query {
	uint64_t from;	     /* first seq to consider (0 or 1: the beginning) */
	uint64_t upto;	     /* last seq to consider; 0: history_last_seq() */
	const char *service; /* NULL: any */
	const char *call;    /* NULL: any */
	const char *const *kinds; /* exact kinds or "family.*"; NULL: any */
	size_t n_kinds;
	size_t limit;	 /* most events delivered; 0: 1000 */
	size_t max_scan; /* most seqs examined; 0: unbounded */
};

typedef int (*history_read_fn)(void *arg, const struct history_event *ev);

/*
 * Deliver the matching events in seq order to fn (a non-zero return stops
 * the read early).  *next is where the next read continues: after the
 * last event delivered when the read stopped or hit the limit, else
 * after the range examined.  Returns the number delivered, or -errno
 * (-EINVAL for a malformed kind pattern).
 */
int history_read(struct history *h, const struct history_query *q,
		 history_read_fn fn, void *arg, uint64_t *next);

/*
 * Where a read of the newest n matching events starts: the seq of the
 * n-th newest event q selects in [q->from, q->upto] (upto 0: the last
 * seq), or q->from when fewer match.  Reading from there up to that
 * upto delivers exactly those events, in seq order.  One query walking
 * an index backwards: memory does not grow with n or with the history.
 */
int history_tail_from(struct history *h, const struct history_query *q,
		      uint64_t n, uint64_t *from);

/*
 * The first seq whose event's time is at or after ns (unix ns), or
 * history_last_seq() + 1 when there is none; 1 on an empty history.
 * A binary search over seqs, O(log n) lookups: like age pruning, it
 * assumes event times grow with seq (after a clock step backwards it
 * finds one of the places where the time crosses ns).
 */
int history_seq_at_time(struct history *h, int64_t ns, uint64_t *seq);

/* Whether s is a kind pattern a query accepts: a kind or "family.*". */
bool history_kind_pattern_valid(const char *s);

/* Whether q's filters select ev (for events from the commit hook). */
bool history_query_matches(const struct history_query *q,
			   const struct history_event *ev);

/* ---- retention
 * ------------------------------------------------------------------ */

/*
 * Limits; 0 means unlimited.  Per-service columns override the defaults.
 *
 * Retention never deletes an event of an open call: a call whose
 * call.started is in the history and whose terminal event is not.  Once
 * a call has ended its events expire like any other, and so do those
 * its background work writes under its id after it returned (a task
 * that ticks on: hostcall.*), whether or not its start and end are
 * still there.  Retention deletes oldest first and an open call's start
 * is never deleted, so a call whose start is gone had ended.
 */
struct history_retention {
	uint64_t keep_events; /* newest events kept per service */
	uint64_t keep_age;    /* seconds */
};

void history_set_retention(struct history *h,
			   const struct history_retention *defaults);

/*
 * A retention pass (history_pruner): the configured limits (the
 * daemon's minutely pass: keep_events and keep_age -1) or, on request
 * (`hostel history prune`), limits that replace them for this pass
 * only, over one service or all of them, in bounded steps with state
 * of its own: each step examines at most max_rows events and deletes
 * at most that many, in one transaction.  Events of an open call are
 * never deleted.  Age pruning assumes event times grow with seq; after
 * a clock step backwards it stops early and catches up later.  Passes
 * run side by side safely: each only deletes what its own limits
 * expire.
 */
struct history_prune_spec {
	const char *service; /* NULL: every service and the daemon's events */
	int64_t keep_events; /* < 0: as configured; 0: no count limit */
	int64_t keep_age;    /* seconds; < 0: as configured; 0: none */
	bool explain;	     /* note what it keeps: history_pruner_kept() */
};

/*
 * What a pass that explains kept, and why.  `open` counts the events
 * past the limits kept because their call is open, and `calls` names
 * the first HISTORY_PRUNE_CALLS of those calls in the order the pass
 * met them (more_calls: there were more).  `limits` counts the events
 * within the limits of the groups that have limits (the newest
 * keep_events, those younger than keep_age, and the newest event of
 * the history, which is never deleted), and only while the pass has
 * deleted nothing: it is what a pass that removed nothing says, and
 * counting it costs a second walk over the kept events, in steps.
 */
#define HISTORY_PRUNE_CALLS 8
struct history_prune_kept {
	uint64_t limits;
	uint64_t open;
	size_t n_calls;
	bool more_calls;
	char calls[HISTORY_PRUNE_CALLS][HISTORY_NAME_MAX];
};

/* A service name or call id the history takes: 1..HISTORY_NAME_MAX-1 bytes, no
 * control characters. */
bool history_name_valid(const char *s);

struct history_pruner;

/* Plan a pass (ages are measured from `now`, unix ns).  The pruner must
 * be freed before the history. */
int history_pruner_new(struct history *h, const struct history_prune_spec *spec,
		       int64_t now, struct history_pruner **out);
/* One step of at most max_rows rows in one transaction: 1 when more
 * remains, 0 when the pass is complete (and stays so), or -errno (the
 * pass is over then).  *deleted counts what this step removed. */
int history_pruner_step(struct history_pruner *p, size_t max_rows,
			size_t *deleted);
/* What the pass kept (complete once the pass is); NULL unless the spec
 * asked it to explain. */
const struct history_prune_kept *
history_pruner_kept(const struct history_pruner *p);
void history_pruner_free(struct history_pruner *p);

/*
 * Manual pruning: delete events with seq < before_seq (of one service,
 * or of every service and the daemon when service is NULL), at most
 * max_rows per call, never events of an open call (as above).  Returns
 * 1 when more remain, 0 when done, or -errno.
 */
int history_prune_before(struct history *h, const char *service,
			 uint64_t before_seq, size_t max_rows, size_t *deleted);

/* ---- statistics
 * ----------------------------------------------------------------- */

#define HISTORY_LATENCY_BUCKETS 12
/* Upper bounds (microseconds) of the commit-latency buckets; the last
 * bucket has none. */
extern const uint32_t history_latency_bounds_us[HISTORY_LATENCY_BUCKETS - 1];

#define HISTORY_BATCH_BUCKETS 10
/* Upper bounds (events, inclusive) of the batch-size buckets of the
 * commits; the last bucket has none. */
extern const uint32_t history_batch_bounds[HISTORY_BATCH_BUCKETS - 1];

struct history_stats {
	uint64_t commits;  /* successful transactions */
	uint64_t events;   /* events made durable */
	uint64_t rejected; /* events the schema refused */
	uint64_t failures; /* transactions that failed */
	uint64_t pruned;   /* events deleted by retention */
	uint64_t last_seq;
	uint64_t max_batch; /* most events in one commit */
	uint64_t commit_ns_last, commit_ns_max, commit_ns_total;
	uint64_t latency[HISTORY_LATENCY_BUCKETS];
	/* commits by the events they wrote (durable and refused) */
	uint64_t batch[HISTORY_BATCH_BUCKETS];
	uint64_t batch_events; /* their sum: durable + rejected */
	int last_error; /* of the last failed transaction, or 0 */
};

void history_get_stats(const struct history *h, struct history_stats *out);

#endif
