/*
 * open-calls.c - the set of open-calls.h.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - open_calls_add: a copy of a call id (HISTORY_NAME_MAX) per open call
 *    and a table of twice their number: calls queued or in flight
 *    (limits.maxQueuedCalls and limits.maxConcurrentCalls per service).
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/open-calls.h"

/* FNV-1a: call ids are short and already varied. */
static size_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (size_t)(h ^ (h >> 32));
}

/* The slot of call, or of the empty slot where it would go. */
static size_t find(const struct open_calls *s, const char *call)
{
	size_t mask = s->cap - 1, i = hash(call) & mask;

	while (s->slot[i] && strcmp(s->slot[i], call))
		i = (i + 1) & mask;
	return i;
}

bool open_calls_has(const struct open_calls *s, const char *call)
{
	return s->n && s->slot[find(s, call)];
}

static bool grow(struct open_calls *s)
{
	size_t cap = s->cap ? 2 * s->cap : 64;
	char **old = s->slot;
	size_t old_cap = s->cap;

	s->slot = calloc(cap, sizeof(*s->slot));
	if (!s->slot) {
		s->slot = old;
		return false;
	}
	s->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			s->slot[find(s, old[i])] = old[i];
	free(old);
	return true;
}

bool open_calls_add(struct open_calls *s, const char *call)
{
	size_t i;
	char *copy;

	if (s->n >= OPEN_CALLS_MAX)
		return false;
	/* At most half full: probes stay short. */
	if (2 * (s->n + 1) > s->cap && !grow(s))
		return false;
	i = find(s, call);
	if (s->slot[i])
		return true;
	copy = strdup(call);
	if (!copy)
		return false;
	s->slot[i] = copy;
	s->n++;
	return true;
}

void open_calls_del(struct open_calls *s, const char *call)
{
	size_t mask, i, j;

	if (!s->n)
		return;
	mask = s->cap - 1;
	i = find(s, call);
	if (!s->slot[i])
		return;
	free(s->slot[i]);
	s->slot[i] = NULL;
	s->n--;
	/*
	 * Backward shift: move later members of the probe run into the
	 * hole when their home slot does not lie between the hole and them.
	 */
	for (j = (i + 1) & mask; s->slot[j]; j = (j + 1) & mask) {
		size_t home = hash(s->slot[j]) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			s->slot[i] = s->slot[j];
			s->slot[j] = NULL;
			i = j;
		}
	}
}

void open_calls_clear(struct open_calls *s)
{
	for (size_t i = 0; i < s->cap; i++) {
		free(s->slot[i]);
		s->slot[i] = NULL;
	}
	s->n = 0;
}

void open_calls_free(struct open_calls *s)
{
	open_calls_clear(s);
	free(s->slot);
	s->slot = NULL;
	s->cap = 0;
}
