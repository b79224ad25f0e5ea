/*
 * calc.c - a WASI reactor guest with a custom WIT world (calc.wit):
 * hand-written canonical-ABI glue (no wit-bindgen for C on npm), plus
 * printf and clock_gettime through wasi-libc and the preview1 reactor
 * adapter, so `hostel run --invoke` exercises WASI from a reactor.
 *
 * Built by tests/guests/build.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT(name) __attribute__((export_name(name)))

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size)
{
	(void)old_size;
	(void)align;
	return realloc(old, new_size ? new_size : 1);
}

EXPORT("hostel:calc/api@0.1.0#add")
uint32_t calc_add(uint32_t a, uint32_t b)
{
	return a + b;
}

static uint32_t ret_area[2];

EXPORT("hostel:calc/api@0.1.0#greet")
uint32_t *calc_greet(char *name, size_t len)
{
	static const char pre[] = "hello, ";
	char *out = malloc(sizeof pre - 1 + len + 1);

	memcpy(out, pre, sizeof pre - 1);
	memcpy(out + sizeof pre - 1, name, len);
	out[sizeof pre - 1 + len] = '!';
	free(name);
	ret_area[0] = (uint32_t)(uintptr_t)out;
	ret_area[1] = (uint32_t)(sizeof pre - 1 + len + 1);
	return ret_area;
}

EXPORT("cabi_post_hostel:calc/api@0.1.0#greet")
void calc_greet_post(uint32_t *ret)
{
	free((void *)(uintptr_t)ret[0]);
}

EXPORT("hostel:calc/api@0.1.0#log-now")
uint64_t calc_log_now(char *msg, size_t len)
{
	struct timespec ts;

	printf("log: %.*s\n", (int)len, msg);
	fflush(stdout);
	free(msg);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
