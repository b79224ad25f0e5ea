/*
 * test_wasi.c - unit tests of the WASI host's building blocks that need
 * no guest: sandboxed path resolution (wasi_path_resolve) over a real
 * directory tree with `..`, absolute paths and symlinks pointing inside
 * and outside, and the virtual clock (wasi_clock_virtual).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testmain.h"
#include "wasi/wasi.h"

static char base[PATH_MAX / 2];
static int root = -1;

/* root/: a.txt, sub/b.txt, sub/up -> ../a.txt, sub/parent -> ..,
 * out -> ../outside, abs -> /etc, loop -> loop; base/outside/s.txt */
static void mk(const char *rel, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", base, rel);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void lnk(const char *target, const char *rel)
{
	char p[PATH_MAX];

	snprintf(p, sizeof p, "%s/%s", base, rel);
	ck_assert_int_eq(symlink(target, p), 0);
}

static void setup(void)
{
	char p[PATH_MAX];

	snprintf(base, sizeof base, "%s/hostel-wasi-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(base));
	snprintf(p, sizeof p, "%s/root", base);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/root/sub", base);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof p, "%s/outside", base);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	mk("root/a.txt", "A");
	mk("root/sub/b.txt", "B");
	mk("outside/s.txt", "S");
	lnk("../a.txt", "root/sub/up");
	lnk("..", "root/sub/parent");
	lnk("../outside", "root/out");
	lnk("/etc", "root/abs");
	lnk("loop", "root/loop");
	snprintf(p, sizeof p, "%s/root", base);
	root = open(p, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(root, 0);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	close(root);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
	ck_assert_int_eq(system(cmd), 0);
}

/* Resolve and read the file the path names ("" when it cannot). */
static int read_via(const char *path, bool follow, char *out)
{
	char name[256];
	int dir, fd, e;
	ssize_t n;

	out[0] = '\0';
	e = wasi_path_resolve(root, path, follow, &dir, name, sizeof name);
	if (e)
		return e;
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW);
	e = fd < 0 ? errno : 0;
	close(dir);
	if (fd < 0)
		return e;
	n = read(fd, out, 15);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	return 0;
}

START_TEST(test_plain_paths)
{
	char buf[16];

	ck_assert_int_eq(read_via("a.txt", true, buf), 0);
	ck_assert_str_eq(buf, "A");
	ck_assert_int_eq(read_via("sub/b.txt", true, buf), 0);
	ck_assert_str_eq(buf, "B");
	ck_assert_int_eq(read_via("./sub//./b.txt", true, buf), 0);
	ck_assert_str_eq(buf, "B");
	ck_assert_int_eq(read_via("sub/../a.txt", true, buf), 0);
	ck_assert_str_eq(buf, "A");
	ck_assert_int_eq(read_via("missing/x", true, buf), ENOENT);
	ck_assert_int_eq(read_via("a.txt/x", true, buf), ENOTDIR);
}
END_TEST

START_TEST(test_escapes_fail)
{
	char buf[16];

	ck_assert_int_eq(read_via("..", true, buf), EPERM);
	ck_assert_int_eq(read_via("../outside/s.txt", true, buf), EPERM);
	ck_assert_int_eq(read_via("sub/../../outside/s.txt", true, buf), EPERM);
	ck_assert_int_eq(read_via("/etc/passwd", true, buf), EPERM);
	ck_assert_int_eq(read_via("out/s.txt", true, buf), EPERM);
	ck_assert_int_eq(read_via("abs/passwd", true, buf), EPERM);
	ck_assert_int_eq(read_via("sub/parent/../outside/s.txt", true, buf),
			 EPERM);
	ck_assert_str_eq(buf, "");
}
END_TEST

START_TEST(test_symlinks_inside)
{
	char buf[16], name[256];
	int dir;

	ck_assert_int_eq(read_via("sub/up", true, buf), 0);
	ck_assert_str_eq(buf, "A");
	ck_assert_int_eq(read_via("sub/parent/sub/b.txt", true, buf), 0);
	ck_assert_str_eq(buf, "B");
	/* not following the last component: the link itself is named,
	 * and opening it with O_NOFOLLOW refuses */
	ck_assert_int_eq(read_via("sub/up", false, buf), ELOOP);
	ck_assert_int_eq(wasi_path_resolve(root, "sub/up", false, &dir, name,
					   sizeof name),
			 0);
	ck_assert_str_eq(name, "up");
	close(dir);
	ck_assert_int_eq(read_via("loop", true, buf), ELOOP);
}
END_TEST

START_TEST(test_directory_itself)
{
	char name[256];
	int dir;

	ck_assert_int_eq(
		wasi_path_resolve(root, ".", true, &dir, name, sizeof name), 0);
	ck_assert_str_eq(name, ".");
	close(dir);
	ck_assert_int_eq(wasi_path_resolve(root, "sub/..", true, &dir, name,
					   sizeof name),
			 0);
	ck_assert_str_eq(name, ".");
	close(dir);
	ck_assert_int_eq(
		wasi_path_resolve(root, "", true, &dir, name, sizeof name), 0);
	ck_assert_str_eq(name, ".");
	close(dir);
}
END_TEST

START_TEST(test_virtual_clock)
{
	wasi_vclock vc = {.mono_ns = 1000, .wall_ns = 5000000000ull};
	wasi_clock c;
	uint64_t sec;
	uint32_t nsec;

	wasi_clock_virtual(&c, &vc);
	ck_assert_uint_eq(c.now(c.env), 1000);
	c.sleep_until(c.env, 250001000);
	ck_assert_uint_eq(c.now(c.env), 250001000);
	ck_assert_uint_eq(vc.slept_ns, 250000000);
	c.wall(c.env, &sec, &nsec);
	ck_assert_uint_eq(sec, 5);
	ck_assert_uint_eq(nsec, 250000000);
	/* a deadline in the past does not move time */
	c.sleep_until(c.env, 10);
	ck_assert_uint_eq(c.now(c.env), 250001000);
	ck_assert_uint_eq(vc.slept_ns, 250000000);
}
END_TEST

START_TEST(test_system_clock)
{
	wasi_clock c;
	uint64_t t0, t1;

	wasi_clock_system(&c);
	t0 = c.now(c.env);
	c.sleep_until(c.env, t0 + 2000000);
	t1 = c.now(c.env);
	ck_assert_uint_ge(t1 - t0, 2000000);
	ck_assert_uint_ge(c.resolution_ns, 1);
}
END_TEST

START_TEST(test_ctx_config)
{
	wasi_ctx *w = wasi_ctx_new();
	char p[PATH_MAX];

	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(wasi_ctx_push_arg(w, "prog"), 0);
	ck_assert_int_eq(wasi_ctx_push_env(w, "K", "V"), 0);
	snprintf(p, sizeof p, "%s/root", base);
	ck_assert_int_eq(wasi_ctx_preopen(w, p, "/data"), 0);
	snprintf(p, sizeof p, "%s/root/a.txt", base);
	ck_assert_int_eq(wasi_ctx_preopen(w, p, "/file"), -1);
	ck_assert_int_eq(errno, ENOTDIR);
	ck_assert(!wasi_ctx_exited(w));
	wasi_ctx_free(w);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("wasi");
	TCase *t = tcase_create("wasi");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, test_plain_paths);
	tcase_add_test(t, test_escapes_fail);
	tcase_add_test(t, test_symlinks_inside);
	tcase_add_test(t, test_directory_itself);
	tcase_add_test(t, test_virtual_clock);
	tcase_add_test(t, test_system_clock);
	tcase_add_test(t, test_ctx_config);
	suite_add_tcase(s, t);
	return s;
}
