/*
 * store-testutil.h - temporary state directories for the store tests.
 *
 * tmpdir_new() makes a fresh directory under $TMPDIR (default /tmp);
 * tmpdir_remove() deletes it with everything inside.  Static functions:
 * include once per test program.
 */
#ifndef HOSTEL_STORE_TESTUTIL_H
#define HOSTEL_STORE_TESTUTIL_H

#define _GNU_SOURCE
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

static char *tmpdir_new(void)
{
	const char *base = getenv("TMPDIR");
	char *path;

	if (!base || !*base)
		base = "/tmp";
	ck_assert_int_ge(asprintf(&path, "%s/hostel-store.XXXXXX", base), 0);
	ck_assert_ptr_nonnull(mkdtemp(path));
	return path;
}

static int remove_one(const char *path, const struct stat *st, int type,
		      struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void tmpdir_remove(char *path)
{
	chmod(path, 0700);
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(path);
}

/* The path of a file inside a directory (caller frees). */
static __attribute__((unused)) char *path_in(const char *dir,
					     const char *name)
{
	char *p;

	ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
	return p;
}

#endif
