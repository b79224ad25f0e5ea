/*
 * guest-output.h - turning a guest's stdout/stderr bytes into
 * guest.stdout / guest.stderr events, one per line.
 *
 * Contract: bytes arrive in arbitrary chunks; each complete line (without
 * its '\n') becomes one event.  A line longer than HISTORY_LINE_MAX bytes
 * is recorded as its first HISTORY_LINE_MAX bytes with "truncated": true
 * and the rest of it, up to the next newline, is dropped, so memory per
 * stream is bounded whatever the guest writes.  guest_output_flush()
 * records a final line that has no newline (when the store goes away).
 */
#ifndef HOSTEL_STORE_GUEST_OUTPUT_H
#define HOSTEL_STORE_GUEST_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "store/history.h"

struct guest_output {
	char *service;
	int stream; /* 1: stdout, 2: stderr */
	size_t len;
	bool discarding; /* inside a line already recorded as truncated */
	char line[HISTORY_LINE_MAX];
};

/* 0, -EINVAL (stream) or -ENOMEM. */
int guest_output_init(struct guest_output *g, const char *service, int stream);
void guest_output_fini(struct guest_output *g);

/* Add the events for the lines completed by these bytes. */
int guest_output_feed(struct guest_output *g, struct history_batch *b,
		      const char *data, size_t n);

int guest_output_flush(struct guest_output *g, struct history_batch *b);

#endif
