/*
 * folds.c - when a service's deltas are folded into its snapshot (see
 * folds.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit): an entry
 * per service whose chain this connection wrote (the service's name and
 * three counters); a step holds a service's snapshot and one fold's
 * output (store/snapshots.c), bounded by the snapshot bound.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/folds.h"

struct chain {
	char *service;
	uint64_t full, deltas; /* bytes: the snapshot's, its deltas' */
	bool due, refused;
};

struct folds {
	struct chain *c;
	size_t n, cap;
	snapshots_fold_fn fn;
	void *arg;
};

struct folds *folds_new(void)
{
	return calloc(1, sizeof(struct folds));
}

void folds_forget(struct folds *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->c[i].service);
	f->n = 0;
}

void folds_free(struct folds *f)
{
	if (!f)
		return;
	folds_forget(f);
	free(f->c);
	free(f);
}

void folds_set_fn(struct folds *f, snapshots_fold_fn fn, void *arg)
{
	f->fn = fn;
	f->arg = arg;
}

static uint64_t soft_bound(const struct chain *c)
{
	return c->full > FOLD_MIN_BYTES ? c->full : FOLD_MIN_BYTES;
}

static struct chain *find(struct folds *f, const char *service)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->c[i].service, service))
			return &f->c[i];
	return NULL;
}

static struct chain *add(struct folds *f, const char *service)
{
	struct chain *c;

	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		struct chain *p = realloc(f->c, cap * sizeof(*p));

		if (!p)
			return NULL;
		f->c = p;
		f->cap = cap;
	}
	c = &f->c[f->n];
	memset(c, 0, sizeof(*c));
	if (!(c->service = strdup(service)))
		return NULL;
	f->n++;
	return c;
}

int folds_wrote_full(struct folds *f, const char *service, size_t len)
{
	struct chain *c = find(f, service);

	if (!c && !(c = add(f, service)))
		return -ENOMEM;
	c->full = len;
	c->deltas = 0;
	c->due = c->refused = false;
	return 0;
}

int folds_wrote_delta(struct folds *f, struct db *db, const char *service,
		      size_t len, enum fold_state *state)
{
	struct chain *c = find(f, service);
	uint64_t soft;

	*state = FOLD_NONE;
	if (!c) {
		/* first sight: the rows as they are, this delta included */
		struct snapshot_record rec;
		int rc = snapshots_get(db, service, 0, &rec);

		if (rc == -ENOENT)
			return 0; /* no snapshot: nothing to fold into */
		if (rc)
			return rc;
		if (!(c = add(f, service)))
			return -ENOMEM;
		c->full = rec.size;
		c->deltas = rec.delta_bytes;
	} else {
		c->deltas += len;
	}
	soft = soft_bound(c);
	c->due = c->deltas > soft && !c->refused && f->fn;
	if (c->deltas > 4 * soft)
		*state = FOLD_OVER;
	else if (c->due)
		*state = FOLD_DUE;
	return 0;
}

bool folds_due(const struct folds *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->c[i].due)
			return true;
	return false;
}

int folds_step(struct folds *f, struct db *db, char *why, size_t whylen)
{
	struct snapshots_folded out;
	struct chain *c = NULL;
	int rc;

	for (size_t i = 0; i < f->n && !c; i++)
		if (f->c[i].due)
			c = &f->c[i];
	if (!c)
		return 0;
	if ((rc = db_begin(db)))
		return rc;
	rc = snapshots_fold(db, c->service, soft_bound(c), f->fn, f->arg, &out,
			    why, whylen);
	if (rc == 0)
		rc = db_commit(db);
	if (rc && rc != -ENOENT)
		db_rollback(db);
	if (rc == 0) {
		c->full = out.size;
		c->deltas = out.delta_bytes_left;
		c->due = c->deltas > soft_bound(c);
		return 0;
	}
	if (rc == -ENOENT) {
		/* gone meanwhile: nothing to fold (the service or its chain) */
		db_rollback(db);
		c->due = false;
		c->deltas = 0;
		return 0;
	}
	if (rc == -EINVAL)
		c->refused = true;
	c->due = false;
	return rc;
}
