/*
 * inspect.c - `hostel inspect FILE`: what a binary imports and exports.
 *
 *   hostel inspect [--world NAME] FILE.wasm...
 *
 * Contract: a component is loaded (decoded and validated) and printed as
 * a WIT world (runtime/component/wit.h); a core module is loaded (decoded
 * and validated) and its imports and exports are printed one per line
 * with their core types, in text-format syntax:
 *   import "env" "log" (func (param i32 i32))
 *   export "memory" (memory 1)
 * --world with a core module is a usage error that says the file is a
 * core module (CM_CORE_MODULE_MSG).
 * Exit status: 0 on success; 2 on a usage error; 3 when the file cannot
 * be read or is not a valid module/component ("hostel inspect: FILE:
 * malformed|invalid at offset N: MESSAGE" on stderr).  With several
 * files, each one's output follows a line "==> FILE <==" on standard
 * output (as head(1) does), a file that fails says so on stderr and
 * the others go on; the status is the worst one (a usage error stops
 * at once).  One process for a whole suite: tests/inspect-exports.sh
 * inspects 737 binaries, which took 21 minutes one process each under
 * Valgrind and its start-up.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/commands.h"
#include "component/component.h"
#include "component/wit.h"
#include "wasm/wasm.h"

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
			errno = EIO;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

static int load_error(const char *path, const wasm_error *err)
{
	const char *kind = err->kind == WASM_ERR_MALFORMED ? "malformed"
			   : err->kind == WASM_ERR_INVALID ? "invalid"
							   : "error";

	if (err->offset == WASM_NO_OFFSET)
		fprintf(stderr, "hostel inspect: %s: %s: %s\n", path, kind,
			err->msg);
	else
		fprintf(stderr, "hostel inspect: %s: %s at offset %zu: %s\n",
			path, kind, err->offset, err->msg);
	return HOSTEL_EXIT_INPUT;
}

static void print_functype(const wasm_functype *f)
{
	if (f->nparams) {
		printf(" (param");
		for (uint32_t i = 0; i < f->nparams; i++)
			printf(" %s", wasm_valtype_name(f->params[i]));
		printf(")");
	}
	if (f->nresults) {
		printf(" (result");
		for (uint32_t i = 0; i < f->nresults; i++)
			printf(" %s", wasm_valtype_name(f->results[i]));
		printf(")");
	}
}

static void print_limits(const wasm_limits *l)
{
	if (l->is64)
		printf(" i64");
	printf(" %" PRIu64, l->min);
	if (l->has_max)
		printf(" %" PRIu64, l->max);
	if (l->shared)
		printf(" shared");
}

static void print_name(wasm_name n)
{
	putchar('"');
	for (uint32_t i = 0; i < n.len; i++) {
		uint8_t c = n.ptr[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			printf("\\%02x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* (func ...), (table ...), ... for item `idx` of kind k. */
static void print_extern(const wasm_module *m, wasm_externkind k, uint32_t idx)
{
	switch (k) {
	case WASM_EXTERN_FUNC:
		printf("(func");
		print_functype(&m->types[wasm_module_func_typeidx(m, idx)]);
		printf(")");
		break;
	case WASM_EXTERN_TABLE: {
		const wasm_tabletype *t = wasm_module_table_type(m, idx);

		printf("(table");
		print_limits(&t->limits);
		printf(" %s)", wasm_valtype_name(t->elem));
		break;
	}
	case WASM_EXTERN_MEMORY:
		printf("(memory");
		print_limits(&wasm_module_memory_type(m, idx)->limits);
		printf(")");
		break;
	case WASM_EXTERN_GLOBAL: {
		const wasm_globaltype *g = wasm_module_global_type(m, idx);

		if (g->mut)
			printf("(global (mut %s))", wasm_valtype_name(g->type));
		else
			printf("(global %s)", wasm_valtype_name(g->type));
		break;
	}
	case WASM_EXTERN_TAG:
		printf("(tag");
		print_functype(
			&m->types[wasm_module_tag_type(m, idx)->typeidx]);
		printf(")");
		break;
	}
}

static int inspect_module(const char *path, const uint8_t *bytes, size_t len)
{
	wasm_module *m;
	wasm_error err;
	uint32_t counts[5] = {0, 0, 0, 0, 0};

	if (wasm_module_load(bytes, len, &m, &err))
		return load_error(path, &err);
	for (uint32_t i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];

		printf("import ");
		print_name(im->module);
		putchar(' ');
		print_name(im->name);
		putchar(' ');
		if (im->kind <= WASM_EXTERN_TAG)
			print_extern(m, im->kind, counts[im->kind]++);
		putchar('\n');
	}
	for (uint32_t i = 0; i < m->nexports; i++) {
		const wasm_export *ex = &m->exports[i];

		printf("export ");
		print_name(ex->name);
		putchar(' ');
		print_extern(m, ex->kind, ex->index);
		putchar('\n');
	}
	wasm_module_free(m);
	return HOSTEL_EXIT_OK;
}

static int inspect_component(const char *path, const uint8_t *bytes, size_t len,
			     const char *world)
{
	cm_component *c;
	wasm_error err;
	char *text;

	if (cm_component_load(bytes, len, &c, &err))
		return load_error(path, &err);
	text = cm_wit_world(c, world);
	cm_component_free(c);
	if (text == NULL) {
		fprintf(stderr, "hostel inspect: out of memory\n");
		return HOSTEL_EXIT_FAILURE;
	}
	fputs(text, stdout);
	free(text);
	return HOSTEL_EXIT_OK;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: hostel inspect [--world NAME] FILE.wasm...\n"
		   "       hostel inspect SERVICE   (a service of hosteld)\n"
		   "\n"
		   "Prints a component's imports and exports as a WIT world, "
		   "or a core module's\n"
		   "imports and exports with their types; several files one "
		   "after the other,\n"
		   "each after a line \"==> FILE <==\".\n");
}

static int inspect_file(const char *path, const char *world, bool world_given)
{
	uint8_t *bytes;
	size_t len = 0;
	int rc;

	bytes = read_file(path, &len);
	if (bytes == NULL) {
		fprintf(stderr, "hostel inspect: %s: %s\n", path,
			strerror(errno));
		return HOSTEL_EXIT_INPUT;
	}
	/* Layer 1 is a component, whatever its version (the loader says
	 * what is wrong with it). */
	if (cm_is_component_binary(bytes, len) ||
	    (len >= 8 && !memcmp(bytes, "\0asm", 4) && bytes[6] == 1 &&
	     bytes[7] == 0)) {
		rc = inspect_component(path, bytes, len, world);
	} else if (world_given && len >= 8 && !memcmp(bytes, "\0asm", 4)) {
		/* a world is a component's: say what this is instead */
		fprintf(stderr, "hostel inspect: %s: --world %s: %s\n", path,
			world, CM_CORE_MODULE_MSG);
		rc = HOSTEL_EXIT_USAGE;
	} else {
		rc = inspect_module(path, bytes, len);
	}
	free(bytes);
	return rc;
}

int cmd_inspect(int argc, char **argv)
{
	const char *world = "root";
	bool world_given = false;
	int first = 0, nfiles = 0, rc = HOSTEL_EXIT_OK;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return HOSTEL_EXIT_OK;
		}
		if (!strcmp(argv[i], "--world") && i + 1 < argc &&
		    nfiles == 0) {
			world = argv[++i];
			world_given = true;
			continue;
		}
		if (argv[i][0] == '-') {
			usage(stderr);
			return HOSTEL_EXIT_USAGE;
		}
		if (nfiles++ == 0)
			first = i;
	}
	if (nfiles == 0) {
		usage(stderr);
		return HOSTEL_EXIT_USAGE;
	}
	/* Not a file: a service of the daemon. */
	if (nfiles == 1 && access(argv[first], F_OK) != 0 && errno == ENOENT &&
	    !strchr(argv[first], '/'))
		return cmd_inspect_service(argv[first]);
	if (nfiles == 1)
		return inspect_file(argv[first], world, world_given);
	for (int i = first; i < argc; i++) {
		int r;

		printf("==> %s <==\n", argv[i]);
		fflush(stdout);
		r = inspect_file(argv[i], world, world_given);
		fflush(stdout);
		if (r == HOSTEL_EXIT_USAGE)
			return r;
		/* the worst: input (3) over failure (1) over success */
		if (r > rc)
			rc = r;
	}
	return rc;
}
