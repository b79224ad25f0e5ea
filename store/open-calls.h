/*
 * open-calls.h - a set of call ids: the calls whose start a history
 * handle wrote and whose end it has not written yet.
 *
 * A cache for the writer (store/history.c): a terminal event for a call
 * in the set needs no look-up of its start in the database.  A call
 * missing from the set is only looked up, so the set may forget calls
 * at any time (open_calls_clear() after a rolled-back commit, a full set
 * that refuses more) without changing any answer.  It must never hold a
 * call whose start is not in the database: the writer adds a call with
 * its start and takes it out when that is refused or rolled back, and
 * retention, which never deletes the start of an open call, takes out a
 * call whose (ended) start it deletes, so that a second end cannot slip
 * in past the unique index once the first end is gone too.
 *
 * Contract: ids are copied; open_calls_add() returns false when the set
 * is full (OPEN_CALLS_MAX) or memory ran out, and the set is unchanged.
 * Open addressing with linear probing and backward-shift deletion: no
 * tombstones, so a long-running daemon's set never degrades.
 */
#ifndef HOSTEL_STORE_OPEN_CALLS_H
#define HOSTEL_STORE_OPEN_CALLS_H

#include <stdbool.h>
#include <stddef.h>

#define OPEN_CALLS_MAX 65536

struct open_calls {
	char **slot; /* NULL: empty */
	size_t cap;  /* a power of two, or 0 */
	size_t n;
};

bool open_calls_has(const struct open_calls *s, const char *call);
bool open_calls_add(struct open_calls *s, const char *call);
void open_calls_del(struct open_calls *s, const char *call);
void open_calls_clear(struct open_calls *s);
void open_calls_free(struct open_calls *s);

#endif
