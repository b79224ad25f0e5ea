/*
 * cm-export-names.c - an independent reader of a component binary's
 * top-level export section, for tests/inspect-exports.sh.
 *
 * Prints one line per top-level export, "SORT NAME", in binary order,
 * where SORT is func, value, type, component, instance, core-module (or
 * core-N for another core sort byte N).  It reads the bytes with its own
 * few lines of LEB128 and the grammar of the binary format (Binary.md:
 * nameattributes, sortidx, the optional ascribed externtype) and uses
 * nothing of runtime/, so that the test does not check our decoder
 * against itself.  Nested components and every other section are skipped
 * by their size.
 *
 * Contract: exit 0 with the list, 1 (and a message) on a file it cannot
 * read, 2 on usage.  Several files: each list after a line "==> FILE
 * <==" (as hostel inspect prints them), 1 when any could not be read.  It is a test helper, not a validator: it reads only
 * what it needs and trusts the rest.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rd {
	const uint8_t *p, *end;
};

static int byte(struct rd *r, uint8_t *b)
{
	if (r->p >= r->end)
		return -1;
	*b = *r->p++;
	return 0;
}

/* Any unsigned or signed LEB128 up to 64 bits; the value is not needed
 * when only skipping, so its sign is ignored. */
static int leb(struct rd *r, uint64_t *v)
{
	uint64_t x = 0;
	uint8_t b;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (byte(r, &b) != 0)
			return -1;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static int name(struct rd *r, const uint8_t **s, uint64_t *len)
{
	if (leb(r, len) != 0 || *len > (uint64_t)(r->end - r->p))
		return -1;
	*s = r->p;
	r->p += *len;
	return 0;
}

/* externtype: the ascribed type of an export; skipped. */
static int skip_externtype(struct rd *r)
{
	uint8_t tag, b;
	uint64_t v;

	if (byte(r, &tag) != 0)
		return -1;
	switch (tag) {
	case 0x00: /* core module: 11 typeidx */
		return byte(r, &b) != 0 || b != 0x11 ? -1 : leb(r, &v);
	case 0x01: /* func */
	case 0x04: /* component */
	case 0x05: /* instance */
		return leb(r, &v);
	case 0x02: /* value: eq valueidx | valtype */
	case 0x03: /* type: eq typeidx | sub resource */
		if (byte(r, &b) != 0)
			return -1;
		if (b == 0x00 || (tag == 0x02 && b == 0x01))
			return leb(r, &v);
		return b == 0x01 ? 0 : -1;
	}
	return -1;
}

static int one_export(struct rd *r)
{
	static const char *const sorts[] = {NULL,   "func",	 "value",
					    "type", "component", "instance"};
	const uint8_t *s, *a;
	uint64_t len, alen, n, idx;
	uint8_t tag, sort, core = 0, opt;

	if (byte(r, &tag) != 0 || tag > 0x02 || name(r, &s, &len) != 0)
		return -1;
	if (tag == 0x02) { /* vec(attribute): tag + name each */
		if (leb(r, &n) != 0)
			return -1;
		for (uint64_t i = 0; i < n; i++)
			if (byte(r, &opt) != 0 || name(r, &a, &alen) != 0)
				return -1;
	}
	if (byte(r, &sort) != 0 || sort > 0x05 ||
	    (sort == 0x00 && byte(r, &core) != 0) || leb(r, &idx) != 0)
		return -1;
	if (byte(r, &opt) != 0 || opt > 0x01 ||
	    (opt == 0x01 && skip_externtype(r) != 0))
		return -1;
	if (sort == 0x00 && core == 0x11)
		printf("core-module ");
	else if (sort == 0x00)
		printf("core-%u ", core);
	else
		printf("%s ", sorts[sort]);
	fwrite(s, 1, len, stdout);
	putchar('\n');
	return 0;
}

static int read_exports(const uint8_t *buf, size_t size)
{
	static const uint8_t preamble[8] = {0x00, 0x61, 0x73, 0x6d,
					    0x0d, 0x00, 0x01, 0x00};
	struct rd r = {buf + 8, buf + size};

	if (size < 8 || memcmp(buf, preamble, 8) != 0)
		return -1;
	while (r.p < r.end) {
		uint8_t id;
		uint64_t len, n;

		if (byte(&r, &id) != 0 || leb(&r, &len) != 0 ||
		    len > (uint64_t)(r.end - r.p))
			return -1;
		struct rd sec = {r.p, r.p + len};

		r.p += len;
		if (id != 11)
			continue;
		if (leb(&sec, &n) != 0)
			return -1;
		for (uint64_t i = 0; i < n; i++)
			if (one_export(&sec) != 0)
				return -1;
	}
	return 0;
}

/* List one file's exports; 0, or 1 with a message. */
static int list_file(const char *path)
{
	FILE *f;
	uint8_t *buf = NULL;
	size_t size = 0, cap = 0, got;

	f = fopen(path, "rb");
	if (f == NULL) {
		perror(path);
		return 1;
	}
	do {
		if (size == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (nb == NULL) {
				fprintf(stderr,
					"cm-export-names: out of memory\n");
				fclose(f);
				free(buf);
				return 1;
			}
			buf = nb;
		}
		got = fread(buf + size, 1, cap - size, f);
		size += got;
	} while (got > 0);
	if (ferror(f)) {
		perror(path);
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	if (read_exports(buf, size) != 0) {
		fprintf(stderr, "cm-export-names: %s: cannot read\n", path);
		free(buf);
		return 1;
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: cm-export-names COMPONENT.wasm...\n");
		return 2;
	}
	if (argc == 2)
		return list_file(argv[1]);
	/* several: each list after "==> FILE <==", as hostel inspect */
	for (int i = 1; i < argc; i++) {
		printf("==> %s <==\n", argv[i]);
		fflush(stdout);
		rc |= list_file(argv[i]);
		fflush(stdout);
	}
	return rc;
}
