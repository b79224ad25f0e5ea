/*
 * wast.c - `hostel wast`: runs conformance scripts in the JSON form that
 * `wasm-tools json-from-wast` writes (the core suite's README is the
 * contract for what each command means).
 *
 *   hostel wast [-v] [--xfail FILE] [--fuel N] FILE.json|DIR ...
 *   hostel wast [-v] [--xfail FILE] --group NAME [--group NAME...] DIR ...
 *
 * A DIR means every *.json in it (sorted; groups.json and summary.json
 * are not scripts); with --group, only the files that DIR/groups.json
 * puts in that group.  Prints one line per file, "NAME: N passed, N
 * failed, N skipped", and a final line with the totals; -v also prints
 * every failing command (line, type, what was expected, what happened).
 * Exit status: 1 if anything failed, 0 otherwise, 2 on a usage error.
 *
 * Skipped, never passed: text-form modules without a binary (text
 * assert_malformed and the like) and commands no backend can run.
 *
 * Expected failures (--xfail FILE): lines "NAME.json:LINE reason" (blank
 * lines and #-comments ignored; a reason is required).  A listed command
 * that fails counts as an expected failure, not a failure; one that
 * passes counts as a failure ("XPASS": remove it from the list), and so
 * does an entry naming a line of a file that ran where no command is:
 * the list can only shrink.
 *
 * This file knows scripts, files and reporting; the meaning of commands
 * is in the backends (wast.h), one per kind of binary.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client/commands.h"
#include "client/wast.h"

/* Defaults: generous for the suite's heaviest loops, finite for runaways. */
#define WAST_DEFAULT_FUEL    2000000000ull
#define WAST_MAX_STACK_BYTES (8u << 20)
#define WAST_MAX_CALL_DEPTH  50000u

static const wast_backend *const backends[] = {
	&wast_core_backend,
	&wast_component_backend,
};
#define NBACKENDS (sizeof backends / sizeof backends[0])

typedef struct xfail_entry {
	char *file; /* "name.json" */
	long line;
	char *reason;
	bool seen; /* a command with this file:line ran */
} xfail_entry;

typedef struct script_file {
	char *dir;
	char *name;
} script_file;

typedef struct counts {
	unsigned long passed, failed, skipped, xfailed;
} counts;

typedef struct wast_run {
	wast_options opts;
	bool verbose;
	xfail_entry *xfails;
	size_t nxfails;
	script_file *files;
	size_t nfiles, files_cap;
	counts total;
} wast_run;

/* ---- helpers shared with the backends ---------------------------------- */

const char *wast_cmd_binary(json_t *cmd)
{
	const char *mt = json_string_value(json_object_get(cmd, "module_type"));
	const char *key = "filename";

	if (mt != NULL && !strcmp(mt, "text"))
		key = "binary_filename";
	return json_string_value(json_object_get(cmd, key));
}

uint8_t *wast_read_file(const char *dir, const char *name, size_t *len)
{
	size_t plen = strlen(dir) + strlen(name) + 2;
	char *path = malloc(plen);
	uint8_t *buf = NULL;
	FILE *f;
	long n;

	if (path == NULL)
		return NULL;
	snprintf(path, plen, "%s/%s", dir, name);
	f = fopen(path, "rb");
	free(path);
	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* ---- expected failures ------------------------------------------------- */

static void xfails_free(wast_run *run)
{
	for (size_t i = 0; i < run->nxfails; i++) {
		free(run->xfails[i].file);
		free(run->xfails[i].reason);
	}
	free(run->xfails);
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* Returns 0, or -1 after printing what is wrong with the file. */
static int xfails_load(wast_run *run, const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[1024];
	unsigned lineno = 0;
	size_t cap = 0;

	if (f == NULL) {
		fprintf(stderr, "hostel wast: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while (fgets(buf, sizeof buf, f) != NULL) {
		char *s = trim(buf), *sp, *colon, *end, *reason;
		xfail_entry *e;
		long line;

		lineno++;
		if (*s == '\0' || *s == '#')
			continue;
		sp = s + strcspn(s, " \t");
		reason = trim(sp);
		if (*sp != '\0')
			*sp = '\0';
		colon = strrchr(s, ':');
		line = colon ? strtol(colon + 1, &end, 10) : 0;
		if (colon == NULL || colon == s || *end != '\0' || line <= 0 ||
		    *reason == '\0') {
			fprintf(stderr,
				"hostel wast: %s:%u: expected "
				"\"FILE.json:LINE reason\"\n",
				path, lineno);
			fclose(f);
			return -1;
		}
		*colon = '\0';
		if (run->nxfails == cap) {
			xfail_entry *v;

			cap = cap ? 2 * cap : 32;
			v = realloc(run->xfails, cap * sizeof *v);
			if (v == NULL) {
				fclose(f);
				fprintf(stderr, "hostel wast: out of memory\n");
				return -1;
			}
			run->xfails = v;
		}
		e = &run->xfails[run->nxfails];
		e->file = strdup(s);
		e->reason = strdup(reason);
		e->line = line;
		e->seen = false;
		run->nxfails++;
		if (e->file == NULL || e->reason == NULL) {
			fclose(f);
			fprintf(stderr, "hostel wast: out of memory\n");
			return -1;
		}
	}
	fclose(f);
	return 0;
}

static xfail_entry *xfail_find(wast_run *run, const char *file, long line)
{
	for (size_t i = 0; i < run->nxfails; i++)
		if (run->xfails[i].line == line &&
		    !strcmp(run->xfails[i].file, file))
			return &run->xfails[i];
	return NULL;
}

/* ---- the list of files ------------------------------------------------- */

static int add_file(wast_run *run, const char *dir, const char *name)
{
	script_file *f;

	if (run->nfiles == run->files_cap) {
		size_t cap = run->files_cap ? 2 * run->files_cap : 64;
		script_file *v = realloc(run->files, cap * sizeof *v);

		if (v == NULL)
			return -1;
		run->files = v;
		run->files_cap = cap;
	}
	f = &run->files[run->nfiles];
	f->dir = strdup(dir);
	f->name = strdup(name);
	if (f->dir == NULL || f->name == NULL) {
		free(f->dir);
		free(f->name);
		return -1;
	}
	run->nfiles++;
	return 0;
}

static bool is_script_name(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && !strcmp(name + n - 5, ".json") &&
	       strcmp(name, "groups.json") != 0 &&
	       strcmp(name, "summary.json") != 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the sorted `names` (and frees them). */
static int add_sorted(wast_run *run, const char *dir, char **names, size_t n)
{
	int rc = 0;

	qsort(names, n, sizeof *names, cmp_names);
	for (size_t i = 0; i < n; i++) {
		if (rc == 0 && add_file(run, dir, names[i]))
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

static int push_name(char ***names, size_t *n, size_t *cap, const char *s)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		char **v = realloc(*names, c * sizeof *v);

		if (v == NULL)
			return -1;
		*names = v;
		*cap = c;
	}
	(*names)[*n] = strdup(s);
	if ((*names)[*n] == NULL)
		return -1;
	(*n)++;
	return 0;
}

static int add_dir(wast_run *run, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (d == NULL) {
		fprintf(stderr, "hostel wast: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (is_script_name(de->d_name) &&
		    push_name(&names, &n, &cap, de->d_name)) {
			closedir(d);
			for (size_t i = 0; i < n; i++)
				free(names[i]);
			free(names);
			fprintf(stderr, "hostel wast: out of memory\n");
			return -1;
		}
	}
	closedir(d);
	return add_sorted(run, dir, names, n);
}

/* The scripts of group `group` in dir/groups.json ("x.wast" -> "x.json"). */
static int add_group(wast_run *run, const char *dir, const char *group)
{
	size_t plen = strlen(dir) + sizeof "/groups.json";
	char *path = malloc(plen);
	json_t *root, *files, *f;
	json_error_t jerr;
	char **names = NULL;
	size_t n = 0, cap = 0, i;

	if (path == NULL)
		return -1;
	snprintf(path, plen, "%s/groups.json", dir);
	root = json_load_file(path, 0, &jerr);
	if (root == NULL) {
		fprintf(stderr, "hostel wast: %s: %s\n", path, jerr.text);
		free(path);
		return -1;
	}
	files = json_object_get(
		json_object_get(json_object_get(root, "groups"), group),
		"files");
	if (!json_is_array(files)) {
		fprintf(stderr, "hostel wast: %s: no group \"%s\"\n", path,
			group);
		json_decref(root);
		free(path);
		return -1;
	}
	free(path);
	json_array_foreach(files, i, f)
	{
		const char *w = json_string_value(f);
		size_t wl = w ? strlen(w) : 0;
		char name[512];

		if (wl < 6 || wl >= sizeof name || strcmp(w + wl - 5, ".wast"))
			continue;
		snprintf(name, sizeof name, "%.*s.json", (int)(wl - 5), w);
		if (push_name(&names, &n, &cap, name)) {
			for (size_t k = 0; k < n; k++)
				free(names[k]);
			free(names);
			json_decref(root);
			return -1;
		}
	}
	json_decref(root);
	return add_sorted(run, dir, names, n);
}

static int add_path(wast_run *run, const char *path, char **groups,
		    size_t ngroups)
{
	struct stat st;
	const char *slash;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "hostel wast: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		if (ngroups == 0)
			return add_dir(run, path);
		for (size_t g = 0; g < ngroups; g++)
			if (add_group(run, path, groups[g]))
				return -1;
		return 0;
	}
	if (ngroups > 0) {
		fprintf(stderr,
			"hostel wast: --group needs a directory, not "
			"%s\n",
			path);
		return -1;
	}
	slash = strrchr(path, '/');
	if (slash == NULL)
		return add_file(run, ".", path);
	{
		size_t dl = (size_t)(slash - path);
		char *dir = malloc(dl + 2);
		int rc;

		if (dir == NULL)
			return -1;
		memcpy(dir, path, dl ? dl : 1);
		dir[dl ? dl : 1] = '\0';
		rc = add_file(run, dir, slash + 1);
		free(dir);
		return rc;
	}
}

/* ---- running a script ------------------------------------------------- */

static const wast_backend *backend_for(const char *kind, size_t *idx)
{
	for (size_t i = 0; i < NBACKENDS; i++) {
		if (!strcmp(backends[i]->kind, kind)) {
			*idx = i;
			return backends[i];
		}
	}
	return NULL;
}

/* One command: which backend, and the result before expected failures. */
static wast_result run_command(wast_run *run, const script_file *sf,
			       void **states, const char **kind, json_t *cmd,
			       char *why, size_t n)
{
	const char *mt = json_string_value(json_object_get(cmd, "module_type"));
	const char *ckind = json_string_value(json_object_get(cmd, "kind"));
	const wast_backend *be;
	size_t idx;

	if (ckind != NULL && json_object_get(cmd, "filename") != NULL)
		*kind = ckind; /* later actions go to the same backend */
	if (ckind == NULL)
		ckind = *kind;
	if (mt != NULL && !strcmp(mt, "text") && wast_cmd_binary(cmd) == NULL) {
		snprintf(why, n, "text module without a binary");
		return WAST_SKIP;
	}
	be = backend_for(ckind, &idx);
	if (be == NULL) {
		snprintf(why, n, "no driver for kind \"%s\" yet", ckind);
		return WAST_SKIP;
	}
	if (states[idx] == NULL) {
		states[idx] = be->open(sf->dir, &run->opts, why, n);
		if (states[idx] == NULL)
			return WAST_FAIL;
	}
	return be->run(states[idx], cmd, why, n);
}

static void run_file(wast_run *run, const script_file *sf)
{
	void *states[NBACKENDS] = {NULL};
	const char *kind = "module";
	size_t plen = strlen(sf->dir) + strlen(sf->name) + 2;
	char *path = malloc(plen);
	json_t *root = NULL, *cmds, *cmd;
	json_error_t jerr;
	counts c = {0, 0, 0, 0};
	size_t i;

	if (path != NULL) {
		snprintf(path, plen, "%s/%s", sf->dir, sf->name);
		root = json_load_file(path, JSON_ALLOW_NUL, &jerr);
	}
	cmds = json_object_get(root, "commands");
	if (!json_is_array(cmds)) {
		printf("%s: cannot read: %s\n", sf->name,
		       root == NULL ? jerr.text : "no \"commands\" array");
		run->total.failed++;
		json_decref(root);
		free(path);
		return;
	}
	json_array_foreach(cmds, i, cmd)
	{
		const char *type =
			json_string_value(json_object_get(cmd, "type"));
		long line =
			(long)json_integer_value(json_object_get(cmd, "line"));
		xfail_entry *xf = xfail_find(run, sf->name, line);
		char why[1024] = "";
		wast_result r;

		r = run_command(run, sf, states, &kind, cmd, why, sizeof why);
		if (xf != NULL)
			xf->seen = true;
		if (r == WAST_SKIP) {
			c.skipped++;
		} else if (r == WAST_PASS && xf != NULL) {
			c.failed++;
			printf("  %s:%ld: %s: XPASS: passes but is listed as "
			       "an expected failure (%s)\n",
			       sf->name, line, type ? type : "?", xf->reason);
		} else if (r == WAST_PASS) {
			c.passed++;
		} else if (xf != NULL) {
			c.xfailed++;
		} else {
			c.failed++;
			if (run->verbose)
				printf("  %s:%ld: %s: %s\n", sf->name, line,
				       type ? type : "?", why);
		}
	}
	for (size_t k = 0; k < NBACKENDS; k++)
		if (states[k] != NULL)
			backends[k]->close(states[k]);
	json_decref(root);
	free(path);
	/* Listed lines of this file where no command is. */
	for (size_t k = 0; k < run->nxfails; k++) {
		xfail_entry *xf = &run->xfails[k];

		if (!xf->seen && !strcmp(xf->file, sf->name)) {
			xf->seen = true;
			c.failed++;
			printf("  %s:%ld: stale expected failure: no command "
			       "on that line\n",
			       sf->name, xf->line);
		}
	}
	printf("%s: %lu passed, %lu failed, %lu skipped", sf->name, c.passed,
	       c.failed, c.skipped);
	if (c.xfailed)
		printf(" (%lu expected failures)", c.xfailed);
	printf("\n");
	fflush(stdout);
	run->total.passed += c.passed;
	run->total.failed += c.failed;
	run->total.skipped += c.skipped;
	run->total.xfailed += c.xfailed;
}

/* ---- command line ------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hostel wast [-v] [--xfail FILE] [--fuel N] "
		"FILE.json|DIR ...\n"
		"       hostel wast [-v] [--xfail FILE] [--fuel N] --group "
		"NAME "
		"DIR ...\n"
		"\n"
		"Runs conformance scripts (the JSON of json-from-wast).\n"
		"  -v, --verbose   also print every failing command\n"
		"  --group NAME    only the scripts DIR/groups.json puts in "
		"NAME (repeatable)\n"
		"  --xfail FILE    expected failures: \"FILE.json:LINE "
		"reason\" per line\n"
		"  --fuel N        fuel per action (default %llu)\n",
		(unsigned long long)WAST_DEFAULT_FUEL);
}

static void run_free(wast_run *run)
{
	for (size_t i = 0; i < run->nfiles; i++) {
		free(run->files[i].dir);
		free(run->files[i].name);
	}
	free(run->files);
	xfails_free(run);
}

int cmd_wast(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"verbose", no_argument, NULL, 'v'},
		{"group", required_argument, NULL, 'g'},
		{"xfail", required_argument, NULL, 'x'},
		{"fuel", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	wast_run run;
	char **groups = NULL;
	size_t ngroups = 0;
	const char *xfail_path = NULL;
	int opt, rc = HOSTEL_EXIT_USAGE;
	char *end;

	memset(&run, 0, sizeof run);
	run.opts.fuel = WAST_DEFAULT_FUEL;
	run.opts.max_stack_bytes = WAST_MAX_STACK_BYTES;
	run.opts.max_call_depth = WAST_MAX_CALL_DEPTH;
	groups = calloc((size_t)argc, sizeof *groups);
	if (groups == NULL)
		return HOSTEL_EXIT_FAILURE;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'v':
			run.verbose = true;
			break;
		case 'g':
			groups[ngroups++] = optarg;
			break;
		case 'x':
			xfail_path = optarg;
			break;
		case 'f':
			errno = 0;
			run.opts.fuel = strtoull(optarg, &end, 10);
			if (errno || *end || run.opts.fuel == 0) {
				fprintf(stderr, "hostel wast: bad --fuel\n");
				goto out;
			}
			break;
		case 'h':
			usage(stdout);
			rc = HOSTEL_EXIT_OK;
			goto out;
		default:
			usage(stderr);
			goto out;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		goto out;
	}
	if (xfail_path != NULL && xfails_load(&run, xfail_path))
		goto out;
	for (int i = optind; i < argc; i++)
		if (add_path(&run, argv[i], groups, ngroups))
			goto out;
	for (size_t i = 0; i < run.nfiles; i++)
		run_file(&run, &run.files[i]);
	printf("%lu passed, %lu failed, %lu skipped", run.total.passed,
	       run.total.failed, run.total.skipped);
	if (run.total.xfailed)
		printf(" (%lu expected failures)", run.total.xfailed);
	printf("\n");
	rc = run.total.failed ? HOSTEL_EXIT_FAILURE : HOSTEL_EXIT_OK;
out:
	free(groups);
	run_free(&run);
	return rc;
}
