/*
 * replay.c - a main() for the fuzz targets outside libFuzzer, so that
 * `make check` (any compiler, any build) replays their checked-in inputs:
 * tests/fuzz/corpus/NAME (the seeds) and tests/fuzz/regressions/NAME
 * (inputs that once crashed; each is a fixed bug).
 *
 * Linked with one target's source; FUZZ_NAME is that target's name.
 * Without arguments it replays the two folders under $HOSTEL_SRCDIR
 * (default "."); with arguments, those files or folders.  A target
 * reports a failure by crashing or aborting, so this program's exit
 * status is the verdict: 0 after every input ran, 1 when an input could
 * not be read or no input was found, 99 on a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef FUZZ_NAME
#error "FUZZ_NAME must name the target"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long ninputs;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t size = 0, cap = 0, got;

	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (size == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 4096);

			if (nb == NULL) {
				fprintf(stderr, "replay: out of memory\n");
				fclose(f);
				free(buf);
				return -1;
			}
			buf = nb;
		}
		got = fread(buf + size, 1, cap - size, f);
		size += got;
	} while (got > 0);
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	/* an exact-size copy, so ASan sees reads past the input's end */
	uint8_t *exact = malloc(size ? size : 1);

	if (exact == NULL) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, size);
	free(buf);
	LLVMFuzzerTestOneInput(exact, size);
	free(exact);
	ninputs++;
	return 0;
}

/* A file, or every regular file directly in a folder. */
static int run_path(const char *path, int missing_ok)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (stat(path, &st) != 0) {
		if (missing_ok && errno == ENOENT)
			return 0;
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	d = opendir(path);
	if (d == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char sub[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		if (stat(sub, &st) == 0 && S_ISREG(st.st_mode) &&
		    run_file(sub) != 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			if (run_path(argv[i], 0) != 0)
				rc = 1;
	} else {
		const char *src = getenv("HOSTEL_SRCDIR");
		char dir[4096];

		if (src == NULL || src[0] == '\0')
			src = ".";
		snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", src,
			 FUZZ_NAME);
		if (run_path(dir, 0) != 0)
			rc = 1;
		snprintf(dir, sizeof dir, "%s/tests/fuzz/regressions/%s", src,
			 FUZZ_NAME);
		if (run_path(dir, 1) != 0)
			rc = 1;
	}
	if (ninputs == 0) {
		fprintf(stderr, "replay: %s: no input found\n", FUZZ_NAME);
		rc = 1;
	}
	printf("%s: %lu inputs replayed\n", FUZZ_NAME, ninputs);
	return rc;
}
