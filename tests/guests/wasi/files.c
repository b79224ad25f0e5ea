/*
 * files.c - a C reactor (files.wit) that keeps WASI resources between
 * calls, so a store snapshot finds them in its handle tables: a FILE
 * opened with wasi-libc (through the preview1 reactor adapter: a
 * wasi:filesystem descriptor from a preopen, and the adapter's output
 * stream on it), a DIR (the adapter's directory-entry-stream) and a
 * pollable of wasi:clocks/monotonic-clock@0.2.12 imported directly,
 * with hand-written canonical-ABI glue (no wit-bindgen for C on npm).
 * Strings are (ptr, len) in, a return area out, as in calc.c.
 *
 * Built by tests/guests/build.sh (`sh tests/guests/build.sh files`).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT(name)	  __attribute__((export_name(name)))
#define IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))
#define API		  "hostel:files/api@0.1.0#"

IMPORT("wasi:clocks/monotonic-clock@0.2.12", "subscribe-duration")
extern uint32_t clock_subscribe_duration(uint64_t ns);
IMPORT("wasi:io/poll@0.2.12", "[method]pollable.ready")
extern uint32_t io_pollable_ready(uint32_t self);
IMPORT("wasi:io/poll@0.2.12", "[resource-drop]pollable")
extern void io_pollable_drop(uint32_t self);

static FILE *log_file;
static DIR *dir;
static uint32_t timer;
static uint32_t ret_area[2];

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size)
{
	(void)old_size;
	(void)align;
	return realloc(old, new_size ? new_size : 1);
}

/* A NUL-terminated copy of a lifted string (which it frees). */
static char *cstr(char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s == NULL)
		abort();
	memcpy(s, p, n);
	s[n] = '\0';
	free(p);
	return s;
}

EXPORT(API "open-log")
int32_t files_open_log(char *p, size_t n, uint32_t append)
{
	char *path = cstr(p, n);

	if (log_file != NULL)
		fclose(log_file);
	errno = 0;
	log_file = fopen(path, append ? "a" : "w");
	free(path);
	return log_file ? 0 : errno ? errno : -1;
}

EXPORT(API "write-log")
int32_t files_write_log(char *p, size_t n)
{
	int32_t rc = 0;

	if (log_file == NULL)
		rc = EBADF;
	else if (fwrite(p, 1, n, log_file) != n || fflush(log_file))
		rc = errno ? errno : -1;
	if (log_file != NULL)
		clearerr(log_file);
	free(p);
	return rc;
}

EXPORT(API "tell-log")
int64_t files_tell_log(void)
{
	long off;

	if (log_file == NULL)
		return -EBADF;
	off = ftell(log_file);
	return off < 0 ? -errno : off;
}

EXPORT(API "close-log")
int32_t files_close_log(void)
{
	int rc;

	if (log_file == NULL)
		return EBADF;
	rc = fclose(log_file);
	log_file = NULL;
	return rc ? errno : 0;
}

EXPORT(API "open-dir")
int32_t files_open_dir(char *p, size_t n)
{
	char *path = cstr(p, n);

	if (dir != NULL)
		closedir(dir);
	errno = 0;
	dir = opendir(path);
	free(path);
	return dir ? 0 : errno ? errno : -1;
}

static char entry[300];

EXPORT(API "next-entry")
uint32_t *files_next_entry(void)
{
	struct dirent *e;

	entry[0] = '\0';
	if (dir == NULL) {
		snprintf(entry, sizeof entry, "!%d", EBADF);
	} else {
		do {
			errno = 0;
			e = readdir(dir);
		} while (e != NULL &&
			 (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")));
		if (e != NULL)
			snprintf(entry, sizeof entry, "%s", e->d_name);
		else if (errno)
			snprintf(entry, sizeof entry, "!%d", errno);
	}
	ret_area[0] = (uint32_t)(uintptr_t)entry;
	ret_area[1] = (uint32_t)strlen(entry);
	return ret_area;
}

EXPORT(API "close-dir")
void files_close_dir(void)
{
	if (dir != NULL)
		closedir(dir);
	dir = NULL;
}

EXPORT(API "keep-timer")
void files_keep_timer(uint32_t ms)
{
	if (timer)
		io_pollable_drop(timer);
	timer = clock_subscribe_duration((uint64_t)ms * 1000000u);
}

EXPORT(API "timer-ready")
uint32_t files_timer_ready(void)
{
	return timer ? io_pollable_ready(timer) : 0;
}

EXPORT(API "drop-timer")
void files_drop_timer(void)
{
	if (timer)
		io_pollable_drop(timer);
	timer = 0;
}
