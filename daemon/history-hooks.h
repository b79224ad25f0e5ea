/*
 * history-hooks.h - what the daemon records in the event history, and
 * when it becomes durable.
 *
 * The daemon reports what happens (a call starts or ends, a host call
 * starts or settles, a store is created, poisoned or recreated, a guest
 * writes a line) through struct history_hooks.  The store-backed
 * implementation (daemon/history*.c) adds each event to the current loop
 * turn's batch (store/history.h); the batch is committed once, at the end
 * of the turn, in one transaction.
 *
 * End of a turn: the first event added since the last commit arms a
 * zero-timeout libevent timer.  A due timer runs in the next loop
 * iteration, after every callback of the current one (service turns
 * that follow one another included), so all of their events land in one
 * commit; it has the loop's first priority, so it runs before the I/O
 * callbacks of that iteration and an idle writer starts on the turn at
 * once.  (An event_active() event would run between two service turns
 * and give each call's end a commit of its own.)  One fsync per turn,
 * however many calls ended in it.  While calls are open (call_started
 * recorded, call_ended not yet) the batch waits for their ends, at most
 * 10 ms after its first event, and the last end commits at once: under
 * load one fsync then serves many calls, and a lone call never waits.
 *
 * Durability (invariant 6): call_ended() takes a `done` callback.  It
 * runs exactly once: with status 0 and the event's seq after the commit
 * that made the terminal event durable (only then may the reply be
 * sent), or with a negative errno when the event was refused (the call
 * already ended: -EALREADY; it never started: -ENOENT) or when the
 * history gave up (below).
 *
 * A failed commit (disk full, I/O error) keeps the batch: nothing is
 * acknowledged, and the commit is retried with backoff (0.1 s doubling to
 * 5 s) while later events join the same batch in order.  After
 * HISTORY_RETRY_LIMIT_MS of failures the batch is failed: every pending
 * `done` gets the error, and the daemon keeps running (status in
 * io.hostel.History.Stats and the log).
 *
 * Payload shapes are those of store/history.h; json_t arguments are
 * borrowed (serialised at once) and may be NULL.  Each kind a hook
 * records is described once, in daemon/history-events.c (kinds[]): its
 * payload's members and what it means to the commit policy.
 */
#ifndef HOSTEL_DAEMON_HISTORY_HOOKS_H
#define HOSTEL_DAEMON_HISTORY_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "daemon/checkpointer.h"
#include "store/guest-output.h"
#include "store/history.h"

struct conn_cred;
struct daemon;

/* How long a failing commit is retried before its events are failed. */
#define HISTORY_RETRY_LIMIT_MS 30000

enum call_outcome {
	CALL_RETURNED,	  /* call.returned: detail {"results": ...} */
	CALL_TRAPPED,	  /* call.trapped: detail {"trap": ..., "message"?} */
	CALL_CANCELLED,	  /* call.cancelled */
	CALL_FAILED,	  /* call.failed: detail {"error": ..., "message"?} */
	CALL_INTERRUPTED, /* call.interrupted: detail {"reason": ...} */
};

/*
 * Every hook returns 0 when the event joined the batch, or a negative
 * errno when it was refused at once (-EINVAL: malformed; -ENOBUFS: the
 * batch is full because commits keep failing; -ENOMEM); `done` is then
 * not called.
 */
struct history_hooks {
	void *ctx;
	int (*call_started)(void *ctx, const char *service, const char *call,
			    const char *export_name, json_t *arguments,
			    const struct conn_cred *caller);
	int (*call_ended)(void *ctx, const char *service, const char *call,
			  enum call_outcome outcome, json_t *detail,
			  history_done_fn done, void *arg);
	int (*hostcall_started)(void *ctx, const char *service,
				const char *call, uint64_t hostcall,
				const char *import_name, json_t *arguments);
	/* outcome: "returned", "trapped" (message) or "cancelled". */
	int (*hostcall_settled)(void *ctx, const char *service,
				const char *call, uint64_t hostcall,
				const char *outcome, json_t *result,
				const char *message);
	int (*store_created)(void *ctx, const char *service,
			     const char *component);
	int (*store_poisoned)(void *ctx, const char *service, json_t *reason);
	int (*store_recreated)(void *ctx, const char *service,
			       const char *component);
	/* Guest output bytes; `out` holds the stream's partial line. */
	int (*guest_output)(void *ctx, struct guest_output *out,
			    const char *bytes, size_t len);
	/* Any other event (service.*, daemon.*, hostcall.*). */
	int (*event)(void *ctx, const char *service, const char *call,
		     const char *kind, json_t *payload, history_done_fn done,
		     void *arg);
	/*
	 * A store image (durability commit, daemon/durable.h) into the
	 * batch, written with its next commit (store/history.h "Store
	 * images"); data is taken over.  -ENOTSUP with `history = off`.
	 */
	int (*store_image)(void *ctx, const char *service,
			   const char *component, uint32_t format, bool full,
			   void *data, size_t len);
};

/* The store-backed hooks (ctx is the daemon); NULL before the open. */
const struct history_hooks *daemon_history_hooks(struct daemon *d);
/* Whether events are recorded: the history is open and not `off`. */
bool daemon_history_is_on(const struct daemon *d);

/* ---- lifecycle (daemon/daemon.c) ------------------------------------------
 */

/*
 * Take the database daemon.c opened (daemon_db_open, closed by the
 * history from now on, on failure too): close interrupted calls, list
 * the services to recreate, record daemon.started and commit it.  Needs
 * d->base.  Logs and returns -1 on failure: the daemon must not report
 * ready then.
 */
struct db;
int daemon_history_open(struct daemon *d, struct db *db);

/*
 * A graceful stop begins: record daemon.stopped, commit now, and end
 * every follower's stream with a final reply.
 */
void daemon_history_stopping(struct daemon *d);

/* After SIGHUP: apply database-synchronous and retention; record
 * daemon.reloaded with `status` ("reloaded", "failed", ...). */
void daemon_history_reloaded(struct daemon *d, const char *status,
			     const char *error);

/* Commit what is pending, checkpoint the WAL, close (idempotent). */
void daemon_history_close(struct daemon *d);

/* ---- readers (daemon/method-history.c) -------------------------------------
 */

/* The open history, or NULL (not open, or closed). */
struct history *daemon_history_store(struct daemon *d);

/* Its database (components and services live there too), or NULL. */
struct db *daemon_history_db(struct daemon *d);

/*
 * The writer thread's own connection, or NULL when commits run on the
 * loop.  For tests that inject faults into commits; touch it only while
 * nothing is in flight (daemon_history_status(): pending_events 0, or a
 * failed batch waiting for its retry).
 */
struct db *daemon_history_writer_db(struct daemon *d);

/*
 * Receives every event once it is durable, in order (events NULL: a job
 * that only needs to know when the history goes away, such as a prune
 * on request; it does not count as a follower).
 */
struct history_listener {
	struct history_listener *prev, *next;
	void (*events)(struct history_listener *l,
		       const struct history_event *ev, size_t n);
	/* The history is going away (stop): end the stream. */
	void (*end)(struct history_listener *l);
};

void daemon_history_listen(struct daemon *d, struct history_listener *l);
void daemon_history_unlisten(struct daemon *d, struct history_listener *l);

/* Statistics and state for io.hostel.History.Stats. */
struct daemon_history_status {
	struct history_stats stats;
	size_t pending_events; /* in the batch, not yet durable */
	bool failing;	       /* commits are failing right now */
	uint64_t followers;
	const char *synchronous;
	uint64_t keep_events, keep_age;
	struct checkpointer_stats checkpoints; /* zero without the thread */
	uint32_t prune_passes; /* retention passes queued or under way */
};

int daemon_history_status(struct daemon *d, struct daemon_history_status *out);

/*
 * A retention pass on request (io.hostel.History.Prune), run the way
 * the minutely pass is, one bounded step at a time: by the writer
 * thread between batches (on the loop's connection its deletes held
 * the write lock beside the writer's commits, and with synchronous =
 * full the loop waited for their fsyncs), or by the loop, a step per
 * turn, when there is no writer.  `done` runs on the loop's thread,
 * once, when the pass ends: rc 0 and the events removed, with what the
 * pass kept when the spec asked it to explain (store/history.h; else
 * NULL), or a negative errno and the reason (-EINVAL: a malformed
 * service name; -ESHUTDOWN: the daemon stops; the count is what went
 * before; kept NULL).  It does not run for a dropped request.  Returns
 * 0, -ENOMEM, -ENOTSUP when the history is not open, or, without a
 * writer, the error of planning the pass (db_errmsg() of
 * daemon_history_db() says why).
 */
struct daemon_prune;
typedef void (*daemon_prune_done_fn)(void *arg, int rc, uint64_t deleted,
				     const struct history_prune_kept *kept,
				     const char *err);
int daemon_history_prune(struct daemon *d,
			 const struct history_prune_spec *spec,
			 daemon_prune_done_fn done, void *arg,
			 struct daemon_prune **out);
/* The caller no longer wants the answer: the pass ends at its next step. */
void daemon_history_prune_drop(struct daemon *d, struct daemon_prune *p);

/* Start a retention pass now rather than at the next minute (tests). */
void daemon_history_retention_now(struct daemon *d);

#endif
