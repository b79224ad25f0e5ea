/*
 * guest-load.h - for Check tests: load a committed guest component from
 * tests/guests/ (under $HOSTEL_SRCDIR, else HOSTEL_TOP_SRCDIR, which the
 * build defines as the source tree), failing the test when the file
 * cannot be read or does not load.  Included by one test file each.
 */
#ifndef HOSTEL_TESTS_GUEST_LOAD_H
#define HOSTEL_TESTS_GUEST_LOAD_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "component/component.h"

#ifndef HOSTEL_TOP_SRCDIR
#define HOSTEL_TOP_SRCDIR "."
#endif

static cm_component *load_guest(const char *rel)
{
	const char *src = getenv("HOSTEL_SRCDIR");
	char path[2048];
	cm_component *c = NULL;
	wasm_error err;
	uint8_t *bytes;
	FILE *f;
	long n;

	snprintf(path, sizeof path, "%s/tests/guests/%s",
		 src != NULL && *src ? src : HOSTEL_TOP_SRCDIR, rel);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
	bytes = malloc((size_t)n);
	ck_assert_ptr_nonnull(bytes);
	ck_assert_uint_eq(fread(bytes, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	if (cm_component_load(bytes, (size_t)n, &c, &err))
		ck_abort_msg("%s does not load: %s", path, err.msg);
	free(bytes);
	return c;
}

#endif
