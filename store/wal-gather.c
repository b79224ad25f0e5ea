/*
 * wal-gather.c - the VFS of wal-gather.h.  A file of this VFS is our
 * header followed by the wrapped VFS's own file object; every method
 * but the WAL's writes forwards to it.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none from requests: the VFS gathers SQLite's WAL writes of one
 *    commit, whose size is the history batch's (HISTORY_BATCH_BYTES_MAX).
 */
#include "config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/wal-gather.h"

#define WAL_GATHER_NAME "hostel-wal-gather"
/* The layout SQLite gives a WAL (wal.c): a 32-byte header, then frames
 * of a 24-byte header and a page; bytes 4..7 of a frame header hold the
 * database size after a commit, zero in other frames. */
#define WAL_HEADER_SIZE	      32
#define WAL_FRAME_HEADER_SIZE 24

struct gather_file {
	sqlite3_file base;
	/* A WAL file: the gathered bytes, file offset `start`. */
	unsigned char *buf;
	size_t len;
	sqlite3_int64 start;
	bool commit_frame; /* the last write was a commit frame's header */
	/* A main database file: its connection's WAL, while open. */
	struct gather_file *wal;
	struct gather_file *main; /* a WAL file: its main database file */
	sqlite3_file real[];	  /* the wrapped VFS's file object */
};

static sqlite3_vfs gather_vfs;
static sqlite3_vfs *real_vfs;
static const char *registered;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static struct gather_file *gf(sqlite3_file *f)
{
	return (struct gather_file *)f;
}

/*
 * Write the gathered bytes.  They are dropped even when the write fails:
 * the failure goes back to SQLite with the call that flushed, and SQLite
 * gives up the transaction those frames belonged to.
 */
static int flush(struct gather_file *f)
{
	int rc;

	if (!f->len)
		return SQLITE_OK;
	rc = f->real->pMethods->xWrite(f->real, f->buf, (int)f->len, f->start);
	f->len = 0;
	return rc;
}

static int g_close(sqlite3_file *file)
{
	struct gather_file *f = gf(file);
	int rc = flush(f), rc2;

	if (f->main)
		f->main->wal = NULL;
	if (f->wal)
		f->wal->main = NULL;
	rc2 = f->real->pMethods->xClose(f->real);
	sqlite3_free(f->buf);
	f->buf = NULL;
	return rc ? rc : rc2;
}

static int g_read(sqlite3_file *file, void *p, int n, sqlite3_int64 off)
{
	struct gather_file *f = gf(file);
	int rc = flush(f);

	return rc ? rc : f->real->pMethods->xRead(f->real, p, n, off);
}

static uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int g_write(sqlite3_file *file, const void *p, int n, sqlite3_int64 off)
{
	struct gather_file *f = gf(file);
	size_t size = (size_t)n;
	bool commit_page = f->commit_frame;
	int rc;

	if (!f->buf || n <= 0)
		return f->real->pMethods->xWrite(f->real, p, n, off);
	f->commit_frame = n == WAL_FRAME_HEADER_SIZE &&
			  off >= WAL_HEADER_SIZE &&
			  get_be32((const unsigned char *)p + 4) != 0;
	if (f->len && off >= f->start &&
	    off + n <= f->start + (sqlite3_int64)f->len) {
		/* A frame rewritten within the gathered bytes. */
		memcpy(f->buf + (off - f->start), p, size);
	} else if (f->len && off == f->start + (sqlite3_int64)f->len &&
		   f->len + size <= WAL_GATHER_MAX) {
		memcpy(f->buf + f->len, p, size);
		f->len += size;
	} else {
		rc = flush(f);
		if (rc)
			return rc;
		if (size > WAL_GATHER_MAX)
			return f->real->pMethods->xWrite(f->real, p, n, off);
		memcpy(f->buf, p, size);
		f->len = size;
		f->start = off;
	}
	/* The commit frame's page ends the transaction's frames. */
	return commit_page ? flush(f) : SQLITE_OK;
}

static int g_truncate(sqlite3_file *file, sqlite3_int64 size)
{
	struct gather_file *f = gf(file);
	int rc = flush(f);

	return rc ? rc : f->real->pMethods->xTruncate(f->real, size);
}

static int g_sync(sqlite3_file *file, int flags)
{
	struct gather_file *f = gf(file);
	int rc = flush(f);

	return rc ? rc : f->real->pMethods->xSync(f->real, flags);
}

static int g_file_size(sqlite3_file *file, sqlite3_int64 *size)
{
	struct gather_file *f = gf(file);
	int rc = flush(f);

	return rc ? rc : f->real->pMethods->xFileSize(f->real, size);
}

static int g_lock(sqlite3_file *file, int level)
{
	struct gather_file *f = gf(file);

	return f->real->pMethods->xLock(f->real, level);
}

static int g_unlock(sqlite3_file *file, int level)
{
	struct gather_file *f = gf(file);

	return f->real->pMethods->xUnlock(f->real, level);
}

static int g_check_reserved(sqlite3_file *file, int *out)
{
	struct gather_file *f = gf(file);

	return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int g_file_control(sqlite3_file *file, int op, void *arg)
{
	struct gather_file *f = gf(file);
	int rc = flush(f);

	if (rc)
		return rc;
	if (op == SQLITE_FCNTL_VFSNAME) {
		/* Name ours before the wrapped one, as shims do. */
		char *inner = NULL;

		rc = f->real->pMethods->xFileControl(f->real, op, &inner);
		*(char **)arg = sqlite3_mprintf(
			"%s/%s", WAL_GATHER_NAME,
			rc == SQLITE_OK && inner ? inner : real_vfs->zName);
		sqlite3_free(inner);
		return *(char **)arg ? SQLITE_OK : SQLITE_NOMEM;
	}
	return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int g_sector_size(sqlite3_file *file)
{
	return gf(file)->real->pMethods->xSectorSize(gf(file)->real);
}

static int g_device(sqlite3_file *file)
{
	return gf(file)->real->pMethods->xDeviceCharacteristics(gf(file)->real);
}

static int g_shm_map(sqlite3_file *file, int page, int size, int extend,
		     void volatile **p)
{
	struct gather_file *f = gf(file);

	return f->real->pMethods->xShmMap(f->real, page, size, extend, p);
}

static int g_shm_lock(sqlite3_file *file, int offset, int n, int flags)
{
	struct gather_file *f = gf(file);

	return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}

static void g_shm_barrier(sqlite3_file *file)
{
	struct gather_file *f = gf(file);

	/*
	 * SQLite publishes a commit in the wal-index across this barrier.
	 * The commit frame's page was written already (g_write); this is a
	 * last resort for an SQLite that wrote its frames some other way,
	 * and a failure here has no way back to it.
	 */
	if (f->wal)
		(void)flush(f->wal);
	f->real->pMethods->xShmBarrier(f->real);
}

static int g_shm_unmap(sqlite3_file *file, int delete_flag)
{
	struct gather_file *f = gf(file);

	return f->real->pMethods->xShmUnmap(f->real, delete_flag);
}

static int g_fetch(sqlite3_file *file, sqlite3_int64 off, int n, void **pp)
{
	struct gather_file *f = gf(file);

	return f->real->pMethods->xFetch(f->real, off, n, pp);
}

static int g_unfetch(sqlite3_file *file, sqlite3_int64 off, void *p)
{
	struct gather_file *f = gf(file);

	return f->real->pMethods->xUnfetch(f->real, off, p);
}

/* One table per method version the wrapped file may have (1 to 3). */
static const sqlite3_io_methods methods[3] = {
#define GATHER_METHODS(v)                                                      \
	{                                                                      \
		.iVersion = (v), .xClose = g_close, .xRead = g_read,           \
		.xWrite = g_write, .xTruncate = g_truncate, .xSync = g_sync,   \
		.xFileSize = g_file_size, .xLock = g_lock,                     \
		.xUnlock = g_unlock, .xCheckReservedLock = g_check_reserved,   \
		.xFileControl = g_file_control, .xSectorSize = g_sector_size,  \
		.xDeviceCharacteristics = g_device,                            \
		.xShmMap = (v) >= 2 ? g_shm_map : NULL,                        \
		.xShmLock = (v) >= 2 ? g_shm_lock : NULL,                      \
		.xShmBarrier = (v) >= 2 ? g_shm_barrier : NULL,                \
		.xShmUnmap = (v) >= 2 ? g_shm_unmap : NULL,                    \
		.xFetch = (v) >= 3 ? g_fetch : NULL,                           \
		.xUnfetch = (v) >= 3 ? g_unfetch : NULL,                       \
	}
	GATHER_METHODS(1),
	GATHER_METHODS(2),
	GATHER_METHODS(3),
#undef GATHER_METHODS
};

static bool ours(const sqlite3_file *f)
{
	return f && f->pMethods >= &methods[0] && f->pMethods <= &methods[2];
}

static int g_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *file,
		  int flags, int *out_flags)
{
	struct gather_file *f = gf(file);
	int rc, version;

	(void)vfs;
	memset(f, 0, sizeof(*f));
	rc = real_vfs->xOpen(real_vfs, name, f->real, flags, out_flags);
	if (!f->real->pMethods)
		return rc; /* base.pMethods stays NULL: SQLite won't close */
	version = f->real->pMethods->iVersion;
	f->base.pMethods = &methods[(version < 1   ? 1
				     : version > 3 ? 3
						   : version) -
				    1];
	if (rc != SQLITE_OK || !(flags & SQLITE_OPEN_WAL) || !name)
		return rc;
	f->buf = sqlite3_malloc64(WAL_GATHER_MAX);
	{
		sqlite3_file *main = sqlite3_database_file_object(name);

		if (ours(main)) {
			f->main = gf(main);
			f->main->wal = f;
		}
	}
	return rc;
}

static int g_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	(void)vfs;
	return real_vfs->xDelete(real_vfs, name, sync_dir);
}

static int g_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	(void)vfs;
	return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int g_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	(void)vfs;
	return real_vfs->xFullPathname(real_vfs, name, n, out);
}

static void *g_dlopen(sqlite3_vfs *vfs, const char *name)
{
	(void)vfs;
	return real_vfs->xDlOpen(real_vfs, name);
}

static void g_dlerror(sqlite3_vfs *vfs, int n, char *msg)
{
	(void)vfs;
	real_vfs->xDlError(real_vfs, n, msg);
}

static void (*g_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	(void)vfs;
	return real_vfs->xDlSym(real_vfs, h, sym);
}

static void g_dlclose(sqlite3_vfs *vfs, void *h)
{
	(void)vfs;
	real_vfs->xDlClose(real_vfs, h);
}

static int g_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return real_vfs->xRandomness(real_vfs, n, out);
}

static int g_sleep(sqlite3_vfs *vfs, int us)
{
	(void)vfs;
	return real_vfs->xSleep(real_vfs, us);
}

static int g_current_time(sqlite3_vfs *vfs, double *out)
{
	(void)vfs;
	return real_vfs->xCurrentTime(real_vfs, out);
}

static int g_last_error(sqlite3_vfs *vfs, int n, char *out)
{
	(void)vfs;
	return real_vfs->xGetLastError
		       ? real_vfs->xGetLastError(real_vfs, n, out)
		       : 0;
}

static int g_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *out)
{
	double t;
	int rc;

	(void)vfs;
	if (real_vfs->iVersion >= 2 && real_vfs->xCurrentTimeInt64)
		return real_vfs->xCurrentTimeInt64(real_vfs, out);
	rc = real_vfs->xCurrentTime(real_vfs, &t);
	*out = (sqlite3_int64)(t * 86400000.0);
	return rc;
}

static void register_once(void)
{
	real_vfs = sqlite3_vfs_find(NULL);
	if (!real_vfs)
		return;
	gather_vfs = (sqlite3_vfs){
		.iVersion = 2,
		.szOsFile =
			(int)sizeof(struct gather_file) + real_vfs->szOsFile,
		.mxPathname = real_vfs->mxPathname,
		.zName = WAL_GATHER_NAME,
		.xOpen = g_open,
		.xDelete = g_delete,
		.xAccess = g_access,
		.xFullPathname = g_full_pathname,
		.xDlOpen = g_dlopen,
		.xDlError = g_dlerror,
		.xDlSym = g_dlsym,
		.xDlClose = g_dlclose,
		.xRandomness = g_randomness,
		.xSleep = g_sleep,
		.xCurrentTime = g_current_time,
		.xGetLastError = g_last_error,
		.xCurrentTimeInt64 = g_current_time64,
	};
	if (sqlite3_vfs_register(&gather_vfs, 0) == SQLITE_OK)
		registered = WAL_GATHER_NAME;
}

const char *wal_gather_vfs(void)
{
	pthread_once(&once, register_once);
	return registered;
}
