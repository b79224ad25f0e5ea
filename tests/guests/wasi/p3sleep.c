/*
 * p3sleep.c - a C guest with Component-Model-async exports
 * (p3sleep.wit): sleep-ms and waited are lifted async with a callback,
 * and async-lower wasi:clocks/monotonic-clock@0.3.0 wait-for.  All the
 * glue is hand-written, under the core names wit-component recognises
 * (the ones wit-bindgen C would emit): `[async-lift]IFACE#FN` returns
 * the packed callback code, `[callback][async-lift]IFACE#FN` receives
 * the events, and task.return, waitable-set.new/drop, waitable.join,
 * subtask.drop and context.get/set 0 are imported core functions.
 *
 * Per-task state (the start time and the waitable set) lives in the
 * task's context slot 0, so concurrent calls do not share it.  No
 * wasi-libc call touches WASI: the component has no preview1 adapter.
 *
 * Built by tests/guests/build.sh (jco embed + jco new).
 */
#include <stdint.h>
#include <stdlib.h>

#define EXPORT(name)	  __attribute__((export_name(name)))
#define IMPORT(mod, name) __attribute__((import_module(mod), import_name(name)))

#define CLOCK "wasi:clocks/monotonic-clock@0.3.0"
#define API   "hostel:p3sleep/api@0.1.0"

/* callback codes, events and subtask states (CM async ABI) */
enum { CALLBACK_EXIT = 0, CALLBACK_WAIT = 2 };
enum { EVENT_SUBTASK = 1 };
enum { SUBTASK_RETURNED = 2 };

IMPORT(CLOCK, "now") extern uint64_t clock_now(void);
IMPORT(CLOCK, "[async-lower]wait-for")
extern uint32_t clock_wait_for(uint64_t ns);
IMPORT("[export]" API, "[task-return]sleep-ms")
extern void task_return_sleep_ms(uint64_t ns);
IMPORT("[export]" API, "[task-return]waited")
extern void task_return_waited(uint32_t ok);
IMPORT("$root", "[waitable-set-new]") extern uint32_t waitable_set_new(void);
IMPORT("$root", "[waitable-set-drop]")
extern void waitable_set_drop(uint32_t set);
IMPORT("$root", "[waitable-join]")
extern void waitable_join(uint32_t w, uint32_t set);
IMPORT("$root", "[subtask-drop]") extern void subtask_drop(uint32_t st);
IMPORT("$root", "[context-get-0]") extern uint32_t context_get(void);
IMPORT("$root", "[context-set-0]") extern void context_set(uint32_t v);

struct task {
	uint64_t start;
	uint64_t ns; /* the wait asked for */
	uint32_t set;
	uint32_t subtask;
	int waited; /* which export: the result it returns */
};

EXPORT("cabi_realloc")
void *cabi_realloc(void *old, size_t old_size, size_t align, size_t new_size)
{
	(void)old_size;
	(void)align;
	return realloc(old, new_size ? new_size : 1);
}

EXPORT(API "#add")
uint32_t p3_add(uint32_t a, uint32_t b)
{
	return a + b;
}

static uint32_t finish(struct task *t)
{
	uint64_t elapsed = clock_now() - t->start;

	if (t->set) {
		waitable_join(t->subtask, 0);
		waitable_set_drop(t->set);
	}
	if (t->subtask)
		subtask_drop(t->subtask);
	context_set(0);
	if (t->waited)
		task_return_waited(elapsed >= t->ns);
	else
		task_return_sleep_ms(elapsed);
	free(t);
	return CALLBACK_EXIT;
}

static uint32_t start(uint32_t ms, int waited)
{
	struct task *t = calloc(1, sizeof *t);
	uint32_t r;

	if (!t)
		abort();
	t->waited = waited;
	t->ns = (uint64_t)ms * 1000000u;
	t->start = clock_now();
	r = clock_wait_for(t->ns);
	t->subtask = r >> 4;
	if ((r & 0xf) == SUBTASK_RETURNED)
		return finish(t); /* done without blocking: no subtask */
	t->set = waitable_set_new();
	waitable_join(t->subtask, t->set);
	context_set((uint32_t)(uintptr_t)t);
	return CALLBACK_WAIT | t->set << 4;
}

static uint32_t callback(uint32_t event, uint32_t p1, uint32_t p2)
{
	struct task *t = (struct task *)(uintptr_t)context_get();

	if (!t || event != EVENT_SUBTASK || p1 != t->subtask)
		abort();
	if (p2 != SUBTASK_RETURNED)
		return CALLBACK_WAIT | t->set << 4;
	return finish(t);
}

EXPORT("[async-lift]" API "#sleep-ms")
uint32_t p3_sleep_ms(uint32_t ms)
{
	return start(ms, 0);
}

EXPORT("[callback][async-lift]" API "#sleep-ms")
uint32_t p3_sleep_ms_callback(uint32_t event, uint32_t p1, uint32_t p2)
{
	return callback(event, p1, p2);
}

EXPORT("[async-lift]" API "#waited")
uint32_t p3_waited(uint32_t ms)
{
	return start(ms, 1);
}

EXPORT("[callback][async-lift]" API "#waited")
uint32_t p3_waited_callback(uint32_t event, uint32_t p1, uint32_t p2)
{
	return callback(event, p1, p2);
}
