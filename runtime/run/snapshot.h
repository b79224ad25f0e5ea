/*
 * snapshot.h - a store snapshot (issue 22): the state of a cm_store
 * between service turns, live async state included, as plain data with
 * no host addresses, and restoring it into a store freshly instantiated
 * from the same component.
 *
 * Contract:
 *  - Format (version CM_SNAPSHOT_FORMAT): a header, then tagged,
 *    length-prefixed sections, then an end section holding a checksum:
 *      header   8 bytes "\0hstsnap", u32 format, u32 flags (0),
 *               32 bytes: the component's SHA-256 (the embedder's)
 *      section  u32 tag, u64 payload length, payload
 *      tags     1 CORE (runtime/wasm/snapshot.h: memories, globals,
 *               tables, segment lengths of every core instance; since
 *               format 4 a table's elements are runs; since format 5
 *               the exceptions they reach, as heap objects; since
 *               format 6 those suspended frames reach too)
 *               2 RUN (component instances: may_enter, may_leave,
 *               poisoned, backpressure; the scheduler's random state)
 *               3 OBJECTS, 4 HANDLES, 5 SCHED, 6 HOST (since format
 *               2, runtime/run/snapshot_async.c: tasks, threads and
 *               their stacks, subtasks, waitable sets, stream and
 *               future ends; handle and threads tables, and since
 *               format 3 the host resources they hold; the waiting
 *               list, gates, fuel; pending and settled host calls;
 *               since format 5 threads stopped out of fuel; since
 *               format 6 a task of the host's call carries what is
 *               left of the call's fuel budget; since
 *               format 7 an explicit thread's start argument is 64
 *               bits)
 *               0 END (u64 FNV-1a of every byte before it; the last)
 *    Integers are little-endian.  Each section appears once, in the
 *    order of the tags; an unknown tag or object kind is refused (a
 *    later format that adds kinds of objects adds tags or kinds and
 *    bumps the format version).  This format and format 6 are read
 *    (CM_SNAPSHOT_FORMAT_OLDEST); format 2 to 5 images (before host
 *    resources; before tables as runs; before heap objects; before
 *    calls' budgets) are refused with the reason, and the embedder
 *    starts fresh.
 *  - Bound to the component and the format: a snapshot of another
 *    component or another format version is refused with the reason
 *    (CM_ERR_VALUE), before anything of the store is touched.
 *  - What can be snapshotted: a store between service turns, with its
 *    waiting, parked and suspended threads (a thread's frames, a canon
 *    built-in it blocks in, a callback task's loop: plain data), tasks,
 *    subtasks, waitable sets, streams, futures, error contexts,
 *    resources (own and borrow handles of the instances' resource
 *    types), context slots, backpressure, fuel, and host calls pending
 *    (described by the embedder: run/instance.h
 *    cm_store_set_host_durable; one nobody can resume is settled
 *    cancelled on restore) or settled.
 *  - Host resources (handles of a type the embedder defined,
 *    cm_linker_define_resource): the rep is the embedder's, so it is
 *    never written; each resource the tables hold is written once as
 *    the embedder describes it (run/instance.h
 *    cm_store_set_host_resource_durable: a stable key for its type, a
 *    description of plain data), named by an id the handles carry, and
 *    the embedder makes it again on restore, which gives it a new rep;
 *    its handles keep their numbers.  A description the embedder
 *    cannot write refuses the snapshot ("not supported yet: <why>"),
 *    one it cannot restore fails the restore ("host resource <key>:
 *    <why>"; the WASI host's rules: runtime/wasi/durable.c).  A
 *    restored store's own handles of resources its start code made
 *    (wasi-libc takes its preopens) are dropped first, a host type's
 *    through its destructor.
 *  - The embedder's calls in flight (cm_call_start) are written as
 *    tasks whose caller is gone, with what is left of each call's fuel
 *    budget: a restored one is a call in flight again under that budget
 *    (cm_store_restored_call), whose result goes to nobody, as a call
 *    the embedder stopped waiting for; one still queued (its starter
 *    has not run) is not written, and one waiting at its instance's
 *    entry gate is cancelled by the restore before it starts
 *    (CANCELLED_BEFORE_STARTED): neither ran guest code.  Call tags
 *    (cm_call_set_tag) are the embedder's numbers of the run that wrote
 *    the image: written as 0, a restored call has none.
 *  - Refused with CM_ERR_UNSUPPORTED: a store one of whose component
 *    instances is poisoned (it cannot run again; its embedder makes a
 *    new store).  And with "not supported yet: <what>":
 *    a snapshot from inside guest code (a host function's, or a sync
 *    call waiting on the C stack), a thread blocked in a tail call of
 *    a host function or stopped out of fuel at a tail call, handles of
 *    an embedder's host resource type it did not register ("a handle
 *    of host resource type <name> (component instance N, handle M)";
 *    the linker's fallback types are registered: linker.c), ends the
 *    host holds, an exception of a tag no core instance has.  And, not
 *    "yet": a non-null externref (a host value; a component's are all
 *    null, the canonical ABI having none).  Live exceptions (exnref in globals, tables,
 *    other exceptions and suspended frames) are written
 *    (runtime/wasm/snapshot.h), and so is a thread a turn's fuel
 *    stopped mid-code (a task or a call longer than a turn), where the
 *    fuel check stopped it (runtime/wasm/snapshot_exec.c); restored, it
 *    goes on first.
 *  - A snapshot of a restored store is the same bytes as the one it
 *    was restored from as long as no time passed for its pending waits
 *    (a monotonic wait is written as the time it has left) and the
 *    embedder describes its host resources by their state alone.
 *  - Restore rule: the embedder instantiates the component fresh in a
 *    new store (core start functions run as for any fresh store: they
 *    see nothing of the snapshot), then cm_store_restore overwrites the
 *    state from the snapshot, checking that the shapes match exactly
 *    (runtime/wasm/snapshot.h).  Nothing of the guest runs during the
 *    restore.  On any error the store is partly overwritten and must
 *    be freed; the embedder starts a fresh one instead (the host
 *    resources the restore made were destroyed already).
 *  - Parsing never aborts: every length, count and index is checked;
 *    truncated or corrupted input is CM_ERR_VALUE.  What restoring
 *    allocates is bounded by the store's limits (memory pages, table
 *    elements) and, for tables and host resources, by the snapshot's
 *    length (host resources: also max_handles per instance; each
 *    description at most CM_HOST_RESOURCE_DESC_MAX).
 *  - Snapshots are bounded by CM_SNAPSHOT_MAX_BYTES (docs/limits.md):
 *    a larger one is refused (CM_ERR_UNSUPPORTED) when written.
 *  - Deltas (durability "commit", docs/architecture.md): a snapshot
 *    whose header flags hold CM_SNAPSHOT_DELTA, written against a base
 *    (cm_snap_base: the fingerprint of every memory page as of the last
 *    write with it).  Its memories list only the pages that changed
 *    since (a page that became zero included); everything else is
 *    written whole, as in a full snapshot.  Restoring a delta applies it
 *    to a store that holds the state it was written against (the full
 *    snapshot and the deltas before it, in order): unlisted pages keep
 *    their contents.  A delta reads only the pages the memories'
 *    written maps mark (runtime/wasm/store.h: every store of the
 *    interpreter and every host write marks its page), so its cost
 *    follows what changed, not the size of the memories.  The base takes
 *    a write only when all of it succeeded: one refused ("not supported
 *    yet"), too large or out of memory at any point leaves the base and
 *    the written maps as they were, and the next delta is right.
 */
#ifndef HOSTEL_RUN_SNAPSHOT_H
#define HOSTEL_RUN_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/instance.h"
#include "run/store.h"

#define CM_SNAPSHOT_FORMAT 8u
/* the oldest format still read: format 6 differs from 7 only in an
 * explicit thread's start argument (32 bits; 64 since 7, for a 64-bit
 * memory's thread.new-indirect); 7 from 8 only in host-held ends (8
 * writes them, 7 never has one) */
#define CM_SNAPSHOT_FORMAT_OLDEST 6u
/* the first format whose explicit threads' start arguments are 64 bits */
#define CM_SNAPSHOT_FORMAT_START_ARG64 7u
/* the first format with host-held stream and future ends (an end's
 * readable byte has bit 1 set, and the embedder's description follows
 * the end) */
#define CM_SNAPSHOT_FORMAT_HOST_ENDS 8u
/* 512 MiB: under SQLite's default blob limit (10^9 bytes). */
#define CM_SNAPSHOT_MAX_BYTES (512u << 20)
#define CM_SNAPSHOT_SHA256_BYTES 32u
/* Header flag: the snapshot is a delta against the state before it. */
#define CM_SNAPSHOT_DELTA 1u

typedef struct cm_snap_base cm_snap_base;

cm_snap_base *cm_snap_base_new(void);
void cm_snap_base_free(cm_snap_base *base);
/* Whether a delta can be written against base (a full write filled it
 * and no write failed since). */
bool cm_snap_base_valid(const cm_snap_base *base);
/* Forget: the next write must be full (its chain was lost). */
void cm_snap_base_reset(cm_snap_base *base);
/*
 * Tests: make every delta with base check the memories' written maps
 * (wasm/store.h): a changed page no map marked is still written, and
 * counted; cm_snap_base_missed says how many so far (0: the maps hold).
 */
void cm_snap_base_verify(cm_snap_base *base, bool on);
uint64_t cm_snap_base_missed(const cm_snap_base *base);

/*
 * Write a snapshot of s: *out (malloc'd, the caller frees) and *len.
 * Returns 0, or -1 with err (CM_ERR_UNSUPPORTED: not representable yet,
 * or too large; CM_ERR_NOMEM).  s is not changed.
 */
int cm_store_snapshot(cm_store *s, const uint8_t sha256[32], uint8_t **out,
		      size_t *len, cm_error *err);

/*
 * cm_store_snapshot with a base: delta false writes a full snapshot and
 * fills base; delta true writes a delta against base (which must be
 * valid: CM_ERR_VALUE otherwise) and moves base on.  base may be NULL
 * for a full snapshot (then it is cm_store_snapshot).
 */
int cm_store_snapshot_base(cm_store *s, const uint8_t sha256[32],
			   cm_snap_base *base, bool delta, uint8_t **out,
			   size_t *len, cm_error *err);

/*
 * Overwrite s, freshly instantiated from the component whose SHA-256 is
 * sha256, with the snapshot in buf; or, when buf is a delta, apply it
 * to s, which holds the state it was written against.  Returns 0, or -1
 * with err (CM_ERR_VALUE: malformed, another component or format, or a
 * shape that differs; CM_ERR_NOMEM); then free s.
 */
int cm_store_restore(cm_store *s, const uint8_t sha256[32], const uint8_t *buf,
		     size_t len, cm_error *err);

/*
 * The core section of buf alone (memories, globals, tables, segments),
 * checked as cm_store_restore checks a whole image: for every image of a
 * chain but the last (a full snapshot and the deltas after it), whose
 * run-level and async sections hold a state the later images replace.
 * The last is restored whole (cm_store_restore), into a store whose
 * async state is still the fresh one.
 */
int cm_store_restore_core(cm_store *s, const uint8_t sha256[32],
			  const uint8_t *buf, size_t len, cm_error *err);

/*
 * The embedder's calls in flight at the image that a restore brought
 * back and that have not ended yet (0 in a store no restore made).  Each
 * is a call in flight again (cm_call, instance.h) whose client is gone:
 * it goes on under what was left of its fuel budget (spent, it traps
 * "all fuel consumed" as before the image), its result goes to nobody,
 * and it has no tag.  The embedder may give one an on_done
 * (cm_call_set_done: its deadline's end, its result) and stop it with
 * cm_call_cancel.  One with no on_done that ends trapped by its budget
 * or the deadlock fails the turn that decided it, with "a call
 * restored in flight: <the trap>", as background work's trap does: the
 * instance is poisoned.  cm_store_restored_call gives the k-th (from
 * 0; NULL past the last), valid until it ends or the store is freed.
 */
uint32_t cm_store_restored_calls(const cm_store *s);
cm_call *cm_store_restored_call(cm_store *s, uint32_t k);

/*
 * Is a thread of s stopped out of fuel mid-code (a call or task longer
 * than a turn)?  A snapshot writes it where it stopped; one refused
 * then (at a tail call, a frame holding an exception) may pass with its
 * next turns (the daemon's IMAGE_TRANSIENT_MS).
 */
bool cm_store_stopped_mid_code(const cm_store *s);

/*
 * Fold a delta into the full snapshot it follows (durability "commit":
 * the history's writer keeps a service's rows bounded this way, without
 * its store): *out (malloc'd, the caller frees) and *outlen are the full
 * snapshot of the state after the delta, made from the bytes alone.  Its
 * core section takes the delta's pages over the full snapshot's
 * (runtime/wasm/snapshot_fold.c), every other section is the delta's
 * (a delta writes them whole); so it is the image a full snapshot of
 * the store after the delta would have been.  Both must be of this
 * format and the same component, full a full snapshot and delta a
 * delta, each with its checksum right; returns 0, or -1 with err
 * (CM_ERR_VALUE: malformed or mismatched, which the restore would refuse
 * too; CM_ERR_UNSUPPORTED: past CM_SNAPSHOT_MAX_BYTES; CM_ERR_NOMEM).
 * The values are not checked against a store: restoring the result
 * checks them as it checks any snapshot.  Touches no store and no
 * state beyond its arguments: any thread may call it.
 */
int cm_snapshot_fold(const uint8_t *full, size_t flen, const uint8_t *delta,
		     size_t dlen, uint8_t **out, size_t *outlen,
		     cm_error *err);

/*
 * The header of a snapshot: its format version and component.  Returns
 * 0, or -1 with err when buf is not a snapshot's header.
 */
int cm_snapshot_header(const uint8_t *buf, size_t len, uint32_t *format,
		       uint8_t sha256[32], cm_error *err);
/* Whether buf is a well-formed header of a delta. */
bool cm_snapshot_is_delta(const uint8_t *buf, size_t len);

#endif
