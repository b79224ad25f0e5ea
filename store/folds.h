/*
 * folds.h - when a service's deltas are folded into its snapshot
 * (durability "commit", issue 22 point 5; store/snapshots.h has the
 * fold itself): the accounting of the chains one connection writes, and
 * the folds, a bounded step at a time, between the history's batches.
 *
 * Why: a commit service adds a delta at every commit.  Folding them into
 * the full snapshot in the writer keeps its rows bounded without the
 * event loop writing a new full snapshot of the live store (issue 22
 * asks for compaction "in the background in bounded steps").
 *
 * Contract:
 *  - The bound of a service's deltas: soft = max(its snapshot's size,
 *    FOLD_MIN_BYTES).  Past soft a fold is due: folds_step folds its
 *    oldest deltas, at least soft bytes of them or all, in one
 *    transaction of its own, and again at the next step while it stays
 *    past.  Past 4 x soft (the folds fell behind, or a fold was refused:
 *    a chain that does not fold) folds_wrote_delta says OVER: the
 *    history reports it through its image hook and the daemon writes a
 *    full image with the next commit, which replaces the chain.  So a
 *    service's rows hold at most its snapshot and about 4 x soft of
 *    deltas (docs/limits.md).
 *  - Only the connection that writes the chains may fold them; folds
 *    keeps what it learnt of each service in memory (its snapshot's
 *    size, its deltas' bytes), read from the database the first time it
 *    sees the service and kept up to date by what it writes.  After a
 *    rolled-back transaction (folds_forget) it reads them again.
 *  - A fold refused (-EINVAL: the rows do not fold) is not tried again
 *    until the service's next full snapshot; its deltas go on to OVER.
 *  - Errors: -ENOMEM, or a database error (db_errmsg).
 */
#ifndef HOSTEL_STORE_FOLDS_H
#define HOSTEL_STORE_FOLDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/snapshots.h"

struct db;
struct folds;

/* Deltas may add up to this many bytes, however small the snapshot: a
 * store of a few hundred bytes would otherwise fold every other commit. */
#define FOLD_MIN_BYTES (1u << 20)

enum fold_state { FOLD_NONE, FOLD_DUE, FOLD_OVER };

struct folds *folds_new(void);
void folds_free(struct folds *f);
void folds_set_fn(struct folds *f, snapshots_fold_fn fn, void *arg);

/* What the caller's transaction wrote: a full snapshot of service (its
 * deltas gone), or a delta of len bytes (then: is a fold due, or are the
 * deltas past the hard bound?). */
int folds_wrote_full(struct folds *f, const char *service, size_t len);
int folds_wrote_delta(struct folds *f, struct db *db, const char *service,
		      size_t len, enum fold_state *state);
/* The transaction rolled back: what was learnt from it is void. */
void folds_forget(struct folds *f);

/* Whether a fold is due (folds_step has work). */
bool folds_due(const struct folds *f);
/*
 * One step: fold the first service due, in a transaction of its own on
 * db.  0 (done, or nothing due), or an error (the transaction rolled
 * back; why says a refused fold).
 */
int folds_step(struct folds *f, struct db *db, char *why, size_t whylen);

#endif
