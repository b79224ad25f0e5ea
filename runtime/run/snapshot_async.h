/*
 * snapshot_async.h - the async sections of a store snapshot (format 3,
 * runtime/run/snapshot.h; the encoding is snapshot_async.c's): tracked
 * objects, handle and threads tables, the scheduler, host calls.
 * Private to runtime/run/snapshot.c.
 *
 * Contract: writing appends the four sections in order (OBJECTS,
 * HANDLES, SCHED, HOST) or fails with why ("not supported yet: ..." for
 * what the format cannot hold).  Restoring takes them in that order,
 * each as one section's payload, into a store that has none of these
 * yet (fresh: no tracked object, tables empty but for own resource
 * handles its start code made, which are dropped first: a host type's
 * through its host_dtor); the HOST section is
 * restored last and first checks that the objects, tables and waiting
 * list agree.  Every id, count and length is checked; on an error the
 * store holds partial state and must be freed.
 */
#ifndef HOSTEL_RUN_SNAPSHOT_ASYNC_H
#define HOSTEL_RUN_SNAPSHOT_ASYNC_H

#include "run/rt.h"
#include "wasm/snapshot.h"

enum {
	CM_SNAP_TAG_OBJECTS = 3,
	CM_SNAP_TAG_HANDLES = 4,
	CM_SNAP_TAG_SCHED = 5,
	CM_SNAP_TAG_HOST = 6,
};

wasm_snap_status cm_snap_async_write(cm_store *s, cm_component_instance **insts,
				     uint32_t ninsts, wasm_snap_buf *b,
				     char *why, size_t whylen);

typedef struct rd cm_snap_async_state;
int cm_snap_async_restore_begin(cm_snap_async_state **out, cm_store *s,
				cm_component_instance **insts, uint32_t ninsts,
				uint32_t format, char *why, size_t whylen);
wasm_snap_status cm_snap_async_restore(cm_snap_async_state *d, uint32_t tag,
				       wasm_snap_reader *sec);
/* failed: the restore failed (the store will be freed): the host
 * resources the embedder made again are destroyed (their host_dtor).
 * Else, once every section was restored: the host's calls in flight at
 * the image that have begun become calls in flight again (cm_call_adopt,
 * with what was left of their fuel budgets); -1 when memory ran out for
 * that (the restore fails). */
int cm_snap_async_restore_end(cm_snap_async_state *d, bool failed);

#endif
