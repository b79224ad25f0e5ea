/*
 * p2poll.c - a C reactor calling WASI 0.2 pollables directly (p2poll.wit):
 * wasi:clocks/monotonic-clock@0.2.12 now and subscribe-duration,
 * wasi:io/poll@0.2.12 poll, [method]pollable.ready and
 * [resource-drop]pollable, through hand-written canonical-ABI import
 * declarations (no wit-bindgen for C on npm; no wasi-libc clock calls,
 * so the component has no preview1 adapter and imports only these two
 * interfaces).  Pollables are own<pollable> handles (i32); `poll` takes
 * a list<borrow<pollable>> as (ptr, len) and writes its list<u32>
 * result, allocated through our cabi_realloc, to a return area.
 *
 * Built by tests/guests/build.sh.
 */
#include <stdint.h>
#include <stdlib.h>

#define EXPORT(name)	  __attribute__((export_name(name)))
#define IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))

#define CLOCK "wasi:clocks/monotonic-clock@0.2.12"
#define POLL  "wasi:io/poll@0.2.12"

IMPORT(CLOCK, "now") extern uint64_t clock_now(void);
IMPORT(CLOCK, "subscribe-duration")
extern uint32_t clock_subscribe_duration(uint64_t ns);
IMPORT(POLL, "poll")
extern void io_poll(uint32_t *in, size_t len, uint32_t *ret);
IMPORT(POLL, "[method]pollable.ready")
extern uint32_t io_pollable_ready(uint32_t self);
IMPORT(POLL, "[resource-drop]pollable")
extern void io_pollable_drop(uint32_t self);

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size)
{
	(void)old_size;
	(void)align;
	return realloc(old, new_size ? new_size : 1);
}

/*
 * Subscribe one pollable per duration, then poll the ones not yet ready
 * until none is left.  Ready pollables are dropped at once, so every
 * poll call waits on the remaining ones only.  Returns the poll count.
 */
static uint32_t wait_all(const uint32_t *ms, size_t n)
{
	uint32_t *live = malloc((n ? n : 1) * sizeof *live);
	size_t left = n;
	uint32_t polls = 0;

	if (!live)
		abort();
	for (size_t i = 0; i < n; i++)
		live[i] = clock_subscribe_duration((uint64_t)ms[i] * 1000000u);
	while (left) {
		uint32_t ret[2];
		uint32_t *idx;
		size_t k = 0;

		io_poll(live, left, ret);
		polls++;
		idx = (uint32_t *)(uintptr_t)ret[0];
		/* mark the ready ones, then compact */
		for (uint32_t j = 0; j < ret[1]; j++) {
			if (idx[j] >= left || !live[idx[j]])
				abort();
			io_pollable_drop(live[idx[j]]);
			live[idx[j]] = 0;
		}
		free(idx);
		for (size_t i = 0; i < left; i++)
			if (live[i])
				live[k++] = live[i];
		left = k;
	}
	free(live);
	return polls;
}

EXPORT("hostel:poll/api@0.1.0#wait-all")
uint64_t poll_wait_all(uint32_t *ms, size_t n)
{
	uint64_t t0 = clock_now();

	wait_all(ms, n);
	free(ms);
	return clock_now() - t0;
}

EXPORT("hostel:poll/api@0.1.0#poll-count")
uint32_t poll_poll_count(uint32_t *ms, size_t n)
{
	uint32_t polls = wait_all(ms, n);

	free(ms);
	return polls;
}

EXPORT("hostel:poll/api@0.1.0#ready-now")
uint32_t poll_ready_now(uint32_t ms)
{
	uint32_t p = clock_subscribe_duration((uint64_t)ms * 1000000u);
	uint32_t ready = io_pollable_ready(p);

	io_pollable_drop(p);
	return ready;
}
