/*
 * hello.c - a WASI command guest for tests/wasi-run.sh: prints its
 * arguments and one environment variable, reads a file from the preopen
 * mounted at /data, writes a file there, sleeps briefly, and exits with
 * the code given as its first argument.  Special first arguments probe
 * the filesystem sandbox: "open PATH" prints whether PATH opens.
 *
 * Built by tests/guests/build.sh (wasi-libc preview1 + jco adapter).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int probe_open(const char *path)
{
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		printf("open %s: error %s\n", path, strerror(errno));
		return 1;
	}
	char buf[128];
	size_t n = fread(buf, 1, sizeof buf - 1, f);

	buf[n] = '\0';
	printf("open %s: ok: %s", path, buf);
	fclose(f);
	return 0;
}

static int probe_write(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		printf("write %s: error %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(f, "written by the guest\n");
	fclose(f);
	printf("write %s: ok\n", path);
	return 0;
}

int main(int argc, char **argv)
{
	const char *greet = getenv("GREETING");
	struct timespec t0, t1;

	if (argc >= 3 && !strcmp(argv[1], "open"))
		return probe_open(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "write"))
		return probe_write(argv[2]);
	printf("hello from C, argc=%d\n", argc);
	for (int i = 1; i < argc; i++)
		printf("arg[%d]=%s\n", i, argv[i]);
	printf("GREETING=%s\n", greet ? greet : "(unset)");
	fprintf(stderr, "this goes to stderr\n");
	if (probe_open("/data/input.txt") == 0)
		probe_write("/data/output.txt");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct timespec d = {0, 2000000};
	nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long ns = (t1.tv_sec - t0.tv_sec) * 1000000000L +
		  (t1.tv_nsec - t0.tv_nsec);
	printf("slept>=2ms: %s\n", ns >= 2000000 ? "yes" : "no");
	unsigned char r[8];
	arc4random_buf(r, sizeof r);
	printf("random ok\n");
	fflush(stdout);
	return argc >= 2 ? atoi(argv[1]) : 0;
}
