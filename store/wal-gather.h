/*
 * wal-gather.h - an SQLite VFS that writes each commit's WAL frames to
 * the file in one write.
 *
 * SQLite writes a WAL frame as two pwrite(2)s: its 24-byte header, then
 * the page.  A history commit of a few dozen events is some ten frames,
 * twenty system calls, and each straddles page-cache pages (the frames
 * are 4120 bytes).  On the machines hostel was measured on, those writes
 * were about a third of the history writer's time (bench/history-calls
 * under perf).  This VFS wraps the default one and, for WAL files only,
 * gathers consecutive frame writes in memory and hands them to the file
 * in one write, so a commit costs one system call.
 *
 * Contract:
 *  - What reaches the file, and its order, is what SQLite wrote; only
 *    the moment changes.  Gathered bytes are written, at the latest,
 *    when SQLite writes the page of a commit frame (a frame header whose
 *    "database size after commit" field is not zero): before SQLite
 *    publishes the commit in the wal-index, and with the write's error,
 *    if any, returned to SQLite, which then fails the commit as it would
 *    have.  Also before any read, sync, truncate, size query, file
 *    control or close of the WAL file, before a memory barrier of its
 *    database's shared memory, and whenever the next write does not
 *    continue the gathered bytes (a rewritten frame lying wholly inside
 *    them is updated in memory).
 *  - A crash loses only gathered bytes of a transaction that had not
 *    committed: the same as a crash in the middle of SQLite's own
 *    writes.  A write that fails drops the bytes it carried, and its
 *    error goes back with the call that made it write; SQLite gives up
 *    the transaction, as it does when one of its own writes fails.
 *  - The main database file, journals and temporary files pass through
 *    untouched.  Without memory for a buffer the WAL passes through too.
 *  - wal_gather_vfs() registers the VFS once per process (thread-safe;
 *    never as the default) and returns its name for sqlite3_open_v2(),
 *    or NULL when SQLite refused it; a caller then opens with the
 *    default VFS, losing only the gathering.
 */
#ifndef HOSTEL_STORE_WAL_GATHER_H
#define HOSTEL_STORE_WAL_GATHER_H

#include <stddef.h>

/*
 * Gather at most this many bytes; a larger transaction writes in steps.
 * SQLite's unix VFS takes at most 0x1ffff bytes in one write (larger
 * ones it cuts short and reports as SQLITE_FULL).
 */
#define WAL_GATHER_MAX 0x1ffff

const char *wal_gather_vfs(void);

#endif
