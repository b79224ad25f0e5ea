/*
 * stream.h - the shared state of one stream or future and its two ends
 * (definitions.py SharedStreamImpl / SharedFutureImpl, CopyEnd), private
 * to runtime/run: stream.c runs the guest built-ins on it,
 * host_stream.c the host-held ends of run/instance.h.
 *
 * Contract: the two ends jointly own their cm_shared (the last one to go
 * frees it).  At most one *guest* copy is pending at a time (sh->pending,
 * the end that arrived first, with its buffer).  A host-held end
 * (`host`) never registers a buffer: the host copies into or out of the
 * pending guest buffer when it likes and learns through sh->notify that
 * a guest copy became pending or that the guest end was dropped.
 */
#ifndef HOSTEL_RUN_STREAM_H
#define HOSTEL_RUN_STREAM_H

#include "run/sched.h"

enum { COPY_COMPLETED = 0, COPY_DROPPED = 1, COPY_CANCELLED = 2 };
typedef enum { END_IDLE, END_COPYING, END_CANCELLING, END_DONE } end_state;

typedef struct cm_shared {
	const cm_type *t; /* element type; NULL: none */
	bool future;
	bool dropped;
	uint32_t nends;
	struct cm_end *pending;
	/* a host-held end: tell the host when there is something to do */
	struct cm_end *host;
	void (*notify)(void *env, struct cm_end *host);
	void *notify_env;
	/* the host moves copies only from notify or a deferred call */
	bool host_passive;
} cm_shared;

typedef struct cm_end {
	cm_waitable w;	  /* first: the handle table points here */
	cm_store_obj obj; /* tracked; the ends own their cm_shared jointly */
	cm_store *store;
	cm_shared *sh;
	bool readable;
	bool host; /* held by the host, never in a handle table */
	end_state state;
	/* the current copy's buffer */
	cm_component_instance *binst;
	cabi_options opts;
	uint64_t ptr;
	uint32_t length, progress;
	/* armed event */
	uint32_t result;
	bool partial;
	/* a host end's deferred call (cm_host_end_defer) */
	bool deferred;
	struct cm_end *dnext;
	void (*dfn)(void *env, struct cm_end *e);
	void *denv;
} cm_end;

/* A new end of sh tracked by s, in no table yet; NULL when out of memory. */
cm_end *cm_end_new(cm_shared *sh, cm_store *s, bool readable);
/* Leave its set and the pending slot, stop tracking, release. */
void cm_end_free(cm_end *e);
/* Arm e's event (partial: a partial-progress COMPLETED). */
void cm_end_arm(cm_end *e, uint32_t result, bool partial);
/* Complete e's copy: clears the shared pending request, arms the event. */
void cm_end_complete(cm_end *e, uint32_t result);
/* Forget e's deferred call (it is being freed). */
void cm_end_undefer(cm_end *e);
/* The host ends' deferred calls, at a scheduling step; how many ran. */
uint32_t cm_host_ends_run_deferred(cm_store *s);
/* The host end of sh, if any, learns there is something to do. */
void cm_shared_notify_host(cm_shared *sh);
/*
 * Is a guest copy pending on a stream or future whose other end the host
 * holds?  Then the host can still move it: the guest waiting on it is
 * not deadlocked (invoke.c's deadlock check).
 */
bool cm_store_host_copy_pending(cm_store *s);

#endif
