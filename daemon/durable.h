/*
 * durable.h - a service's durable store (issue 22; docs/architecture.md
 * "Durability"): snapshots for durability "stop", store images written
 * with the history's commits for durability "commit", and the restore
 * of both when a service starts.
 *
 * Contract:
 *  - stop: a full snapshot (runtime/run/snapshot.h) when the service
 *    stops gracefully (hosteld's SIGTERM, Stop, a services.d update) or
 *    on request, and every snapshot-interval when the store ran since
 *    the last (one with calls in flight or queued waits for the next
 *    interval), written at once in its own transaction
 *    (store/snapshots.h) with upto, the last event durable then.  A
 *    crash comes back to the last one.
 *  - commit: every history commit that follows a turn of the store
 *    (guest code ran: a call, a settlement, the start) carries an image
 *    of it, captured on the loop right before the batch goes to the
 *    writer, when no guest code runs: the events of the batch and the
 *    store after them, in one transaction (store/history.h "Store
 *    images").  A reply is sent after its commit, so after a crash the
 *    store equals the store after the last acknowledged call, with no
 *    replay.  The image is a delta against the last one (the pages
 *    that changed, the rest of the state whole); it is a full snapshot
 *    instead for the first image of a store (at start, after a trap's
 *    recreation, after an image was lost to a failed commit), and on
 *    request.  The history's writer folds the deltas into the full
 *    snapshot between batches, a bounded step at a time, once they pass
 *    max(its size, 1 MiB) (store/folds.h, run/snapshot.h
 *    cm_snapshot_fold: the loop never writes a full image to compact);
 *    only when they pass four times that (the folds fell behind, or a
 *    chain does not fold) is the next image full (trigger
 *    "compaction").  So a service's rows hold its full snapshot and
 *    about max(its size, 1 MiB) of deltas, at most about four times
 *    that.
 *  - Calls in flight across a commit are in its image (run/snapshot.h):
 *    after a crash each goes on as a call whose client left, answering
 *    nobody (the history recovered it as call.interrupted), under what
 *    was left of its fuel budget and the service's deadline counted
 *    from the restore (durable_restored_calls); background work and
 *    calls longer than a turn are written where the fuel stopped them.
 *    A store the format cannot represent at that moment (a thread
 *    stopped at a tail call's fuel check: "not supported yet") is
 *    captured at the next commit that finds it representable; the
 *    first refusal of a run of them is logged and recorded
 *    (store.snapshot_failed, trigger "commit"; while a thread is
 *    stopped out of fuel, only a run of them past IMAGE_TRANSIENT_MS),
 *    and its recovery logged.  A crash in a run of refusals comes back
 *    to the last image: the history's store.restored says up to which
 *    event (upto).
 *  - Restore (both modes): the last full snapshot, then every delta
 *    after it, in order, into the freshly instantiated store; refused
 *    (another component or format, a malformed row) means a fresh
 *    store and store.restore_failed with the reason.  A store
 *    recreated after a trap is fresh; its first image is full.
 *  - With `history = off` commit has no commits to ride on: it keeps
 *    nothing, and says so once in the log.
 */
#ifndef HOSTEL_DAEMON_DURABLE_H
#define HOSTEL_DAEMON_DURABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct daemon;
struct service;

/* What a restore brought back (durable_restore). */
struct durable_restored {
	uint64_t bytes;	  /* the snapshot's and the deltas' */
	uint64_t deltas;  /* applied after the snapshot */
	uint64_t upto;	  /* the last event committed with them; 0: none */
	uint32_t calls;	  /* calls in flight at the image, going on */
};

/*
 * Snapshot the running store into the database now (store.snapshotted
 * or store.snapshot_failed, with `trigger`: "stop", "request").  Under
 * commit the snapshot is a full image in the current batch, written
 * with the next commit.  0 and the size and time it took, or -1 with
 * the reason.
 */
int service_snapshot(struct service *s, const char *trigger, uint64_t *bytes,
		     uint64_t *ms, char *why, size_t whylen);
/*
 * Does a graceful stop keep the running store of s (durability stop
 * with a database, commit with a history to ride on)?  Then its calls
 * in flight are interrupted, not cancelled (service.c stop_gracefully).
 */
bool service_keeps_store(const struct service *s);
/*
 * A graceful stop, with the calls under way still in flight (those that
 * ran no guest code were cancelled): stop snapshots the store with them
 * in it, commit captures its last image into the current batch.  A
 * refusal is recorded (store.snapshot_failed); the last image stands.
 */
void service_snapshot_at_stop(struct service *s);

/*
 * Overwrite the fresh store of s with its snapshot and deltas, when its
 * durability keeps any.  1 restored (out), 0 nothing to restore, -1
 * refused (why; the store may be partly overwritten: the caller makes
 * a fresh one).
 */
int durable_restore(struct service *s, struct durable_restored *out,
		    char *why, size_t whylen);
/* Record store.restored or store.restore_failed for durable_restore's
 * result rc. */
void durable_restore_event(struct service *s, int rc,
			   const struct durable_restored *r, const char *why);

/*
 * After a restore: the calls in flight at the image that came back (the
 * runtime's cm_store_restored_call; each goes on under what was left of
 * its fuel budget) get the service's deadline (invocation_deadline with
 * none asked), counted from the restore: past it one is stopped as
 * deadline_cb stops a call (trapped "deadline exceeded", the store
 * poisoned and recreated).  One that traps otherwise poisons the
 * service as a call's trap does.  Their results go to nobody (the
 * history closed them call.interrupted); each end is logged.  0, or -1
 * out of memory (those not yet armed keep their budget alone).
 */
int durable_restored_calls(struct service *s);

/* A new store of s (started, restored or recreated): its next image is
 * full and due with the next commit.  durable_store_drop: it is gone
 * (and the restored calls' deadlines with it). */
void durable_store_new(struct service *s);
void durable_store_drop(struct service *s);

/* Before each commit (daemon/history-commit.c): the image of every
 * commit service whose store ran since its last one. */
void durable_capture_all(struct daemon *d);

/* The history dropped an image of `service` unwritten (its chain is
 * broken) or, over, wrote a delta past the hard bound of deltas
 * (store/folds.h): the next image is full (trigger "compaction" when
 * over).  (history_image_fn; arg: the daemon) */
void durable_image_dropped(void *d, const char *service, bool over);
/*
 * The history's fold (store/snapshots.h snapshots_fold_fn): a delta
 * folded into the full snapshot before it, by run/snapshot.h
 * cm_snapshot_fold.  Touches nothing of the daemon: the writer thread
 * runs it.
 */
int durable_fold(void *arg, const void *full, size_t flen, const void *delta,
		 size_t dlen, void **out, size_t *outlen, char *why,
		 size_t whylen);

#endif
