/*
 * path.c - sandboxed path resolution for wasi:filesystem: walk a guest
 * path one component at a time from a preopened directory, never
 * leaving it.
 *
 * Contract (wasi.h wasi_path_resolve): every intermediate directory is
 * opened with openat(O_PATH | O_DIRECTORY | O_NOFOLLOW) relative to the
 * previous one, so the kernel never follows a symlink or `..` on our
 * behalf; `..` pops our own stack of directory fds and fails with EPERM
 * at the root; a symlink is read with readlinkat and its (relative)
 * target spliced into the remaining path, an absolute target is EPERM.
 * The caller opens the last component with O_NOFOLLOW (or uses an *at
 * call with AT_SYMLINK_NOFOLLOW), so a symlink swapped in after
 * resolution is never followed either.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - wasi_path_resolve: one buffer of 2 * MAX_PATH + 2 bytes (a longer
 *    path is ENAMETOOLONG before it), at most MAX_DEPTH (256) directory
 *    fds held during one walk, MAX_SYMLINKS (40) expansions.
 *  - splice_target: a copy of the rest of that buffer, under MAX_PATH.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wasi/wasi.h"

#define MAX_SYMLINKS 40
#define MAX_DEPTH    256
#define MAX_PATH     4096

typedef struct walk {
	int fds[MAX_DEPTH]; /* fds[0] is a dup of root */
	int depth;
} walk;

static void walk_close(walk *w)
{
	for (int i = 0; i < w->depth; i++)
		close(w->fds[i]);
	w->depth = 0;
}

/*
 * Replace the unprocessed rest of the path: `buf` holds the remaining
 * components from `rest`; a symlink target is put in front of it.
 */
static int splice_target(char *buf, size_t cap, const char *rest,
			 const char *target)
{
	size_t tl = strlen(target), rl = strlen(rest);
	char *tmp;

	if (tl + 1 + rl + 1 > cap)
		return ENAMETOOLONG;
	tmp = malloc(rl + 1);
	if (tmp == NULL)
		return ENOMEM;
	memcpy(tmp, rest, rl + 1);
	memcpy(buf, target, tl);
	buf[tl] = '/';
	memcpy(buf + tl + 1, tmp, rl + 1);
	free(tmp);
	return 0;
}

/* A symlink's target, if `name` in dir is one: 1; not a link: 0. */
static int read_link(int dir, const char *name, char *out, size_t cap, int *err)
{
	ssize_t n = readlinkat(dir, name, out, cap - 1);

	if (n < 0) {
		if (errno == EINVAL || errno == ENOENT)
			return 0;
		*err = errno;
		return -1;
	}
	if ((size_t)n >= cap - 1) {
		*err = ENAMETOOLONG;
		return -1;
	}
	out[n] = '\0';
	return 1;
}

int wasi_path_resolve(int root, const char *path, bool follow_last, int *dirfd,
		      char *name, size_t namecap)
{
	char *buf, *p, target[MAX_PATH];
	int links = 0, rc = 0;
	walk w;

	*dirfd = -1;
	if (path[0] == '/')
		return EPERM;
	if (strlen(path) >= MAX_PATH)
		return ENAMETOOLONG;
	buf = malloc(2 * MAX_PATH + 2);
	if (buf == NULL)
		return ENOMEM;
	strcpy(buf, path);
	w.depth = 0;
	w.fds[0] = fcntl(root, F_DUPFD_CLOEXEC, 0);
	if (w.fds[0] < 0) {
		free(buf);
		return errno;
	}
	w.depth = 1;
	strcpy(name, ".");
	p = buf;
	for (;;) {
		char *comp, *slash;
		bool last;
		int fd, err = 0;

		while (*p == '/')
			p++;
		if (*p == '\0')
			break;
		comp = p;
		slash = strchr(p, '/');
		if (slash != NULL) {
			*slash = '\0';
			p = slash + 1;
			while (*p == '/')
				p++;
		} else {
			p += strlen(p);
		}
		last = *p == '\0';
		if (!strcmp(comp, ".")) {
			if (last)
				strcpy(name, ".");
			continue;
		}
		if (!strcmp(comp, "..")) {
			if (w.depth == 1) {
				rc = EPERM;
				goto fail;
			}
			close(w.fds[--w.depth]);
			if (last)
				strcpy(name, ".");
			continue;
		}
		if (strlen(comp) >= namecap) {
			rc = ENAMETOOLONG;
			goto fail;
		}
		if (last && !follow_last) {
			strcpy(name, comp);
			break;
		}
		fd = last ? -1
			  : openat(w.fds[w.depth - 1], comp,
				   O_PATH | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC);
		if (fd >= 0) {
			if (w.depth == MAX_DEPTH) {
				close(fd);
				rc = ENAMETOOLONG;
				goto fail;
			}
			w.fds[w.depth++] = fd;
			continue;
		}
		if (!last && errno != ENOTDIR && errno != ELOOP) {
			rc = errno;
			goto fail;
		}
		switch (read_link(w.fds[w.depth - 1], comp, target,
				  sizeof target, &err)) {
		case 0:
			if (last) {
				strcpy(name, comp);
				goto done;
			}
			rc = ENOTDIR;
			goto fail;
		case 1:
			break;
		default:
			rc = err;
			goto fail;
		}
		if (++links > MAX_SYMLINKS) {
			rc = ELOOP;
			goto fail;
		}
		if (target[0] == '/') {
			rc = EPERM;
			goto fail;
		}
		rc = splice_target(buf + MAX_PATH + 1, MAX_PATH + 1, p, target);
		if (rc)
			goto fail;
		memmove(buf, buf + MAX_PATH + 1,
			strlen(buf + MAX_PATH + 1) + 1);
		p = buf;
		strcpy(name, ".");
	}
done:
	free(buf);
	*dirfd = w.fds[--w.depth];
	walk_close(&w);
	return 0;
fail:
	free(buf);
	walk_close(&w);
	return rc;
}
