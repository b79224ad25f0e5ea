/*
 * snapshot.h - a store snapshot (issue 22, first increment): the state of
 * a quiescent cm_store as plain data with no host addresses, and
 * restoring it into a store freshly instantiated from the same component.
 *
 * Contract:
 *  - Format (version CM_SNAPSHOT_FORMAT): a header, then tagged,
 *    length-prefixed sections, then an end section holding a checksum:
 *      header   8 bytes "\0hstsnap", u32 format, u32 flags (0),
 *               32 bytes: the component's SHA-256 (the embedder's)
 *      section  u32 tag, u64 payload length, payload
 *      tags     1 CORE (runtime/wasm/snapshot.h: memories, globals,
 *               tables, segment lengths of every core instance)
 *               2 RUN (component instances: may_enter, may_leave,
 *               poisoned, backpressure; the scheduler's random state)
 *               0 END (u64 FNV-1a of every byte before it; the last)
 *    Integers are little-endian.  CORE and RUN appear once each, in
 *    that order; an unknown tag is refused (a later format that adds
 *    kinds of objects adds tags and bumps the format version).
 *  - Bound to the component and the format: a snapshot of another
 *    component or another format version is refused with the reason
 *    (CM_ERR_VALUE), before anything of the store is touched.
 *  - What can be snapshotted: a store with nothing in flight.  A store
 *    holding what this format cannot represent yet is refused with
 *    CM_ERR_UNSUPPORTED and "not supported yet: <what>": a call in
 *    flight, live tasks, threads, subtasks, waitable sets, streams,
 *    futures or error contexts (the store's tracked objects), pending
 *    or settled host calls, a non-empty handle table (resources, WASI
 *    handles), live exception objects, non-null externref or exnref
 *    values in globals and tables.
 *  - Restore rule: the embedder instantiates the component fresh in a
 *    new store (core start functions run as for any fresh store: they
 *    see nothing of the snapshot), then cm_store_restore overwrites the
 *    state from the snapshot, checking that the shapes match exactly
 *    (runtime/wasm/snapshot.h).  Nothing of the guest runs during the
 *    restore.  On any error the store is partly overwritten and must
 *    be freed; the embedder starts a fresh one instead.
 *  - Parsing never aborts: every length, count and index is checked;
 *    truncated or corrupted input is CM_ERR_VALUE.  What restoring
 *    allocates is bounded by the store's limits (memory pages, table
 *    elements) and, for tables, by the snapshot's length.
 *  - Snapshots are bounded by CM_SNAPSHOT_MAX_BYTES (docs/limits.md):
 *    a larger one is refused (CM_ERR_UNSUPPORTED) when written.
 */
#ifndef HOSTEL_RUN_SNAPSHOT_H
#define HOSTEL_RUN_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "run/instance.h"
#include "run/store.h"

#define CM_SNAPSHOT_FORMAT 2u
/* 512 MiB: under SQLite's default blob limit (10^9 bytes). */
#define CM_SNAPSHOT_MAX_BYTES (512u << 20)
#define CM_SNAPSHOT_SHA256_BYTES 32u

/*
 * Write a snapshot of s: *out (malloc'd, the caller frees) and *len.
 * Returns 0, or -1 with err (CM_ERR_UNSUPPORTED: not representable yet,
 * or too large; CM_ERR_NOMEM).  s is not changed, except that
 * unreachable exception objects may be collected.
 */
int cm_store_snapshot(cm_store *s, const uint8_t sha256[32], uint8_t **out,
		      size_t *len, cm_error *err);

/*
 * Overwrite s, freshly instantiated from the component whose SHA-256 is
 * sha256, with the snapshot in buf.  Returns 0, or -1 with err
 * (CM_ERR_VALUE: malformed, another component or format, or a shape
 * that differs; CM_ERR_NOMEM); then free s.
 */
int cm_store_restore(cm_store *s, const uint8_t sha256[32], const uint8_t *buf,
		     size_t len, cm_error *err);

/*
 * The header of a snapshot: its format version and component.  Returns
 * 0, or -1 with err when buf is not a snapshot's header.
 */
int cm_snapshot_header(const uint8_t *buf, size_t len, uint32_t *format,
		       uint8_t sha256[32], cm_error *err);

#endif
