/*
 * clock.h - the daemon's clock source for a service's WASI host: the OS
 * clocks for reading time, and one libevent timer per store that wakes
 * the store's WASI 0.3 waits (wasi:clocks/monotonic-clock@0.3.0
 * wait-for / wait-until).
 *
 * Contract (the embedder's side of wasi.h's timer contract):
 *  - The ctx tells us its earliest pending deadline through the clock's
 *    arm callback; we only (re)schedule our timer then, never touch the
 *    ctx or the store from arm (it may run inside a service turn).
 *  - When the timer fires, from the event loop and so outside any
 *    service turn, wasi_ctx_fire_timers settles every due wait.  Settling
 *    only records results and requests service for the store; guest code
 *    runs later, in the store's service event (the settlement pump,
 *    daemon/service.c), so a ticker keeps ticking with no client
 *    connected and no guest code runs in the timer's callback.
 *  - Timers run on the monotonic clock the ctx reads (CLOCK_MONOTONIC);
 *    the timeout is rounded up to whole microseconds, and a wake-up that
 *    comes early anyway finds nothing due and is simply re-armed.
 *  - WASI 0.2 blocking polls (wasi:io/poll block, subscribe-duration
 *    followed by block) still sleep in the OS: they block the loop for
 *    their duration, like any synchronous host call.  Long waits belong
 *    on the 0.3 clocks.
 *  - Lifetime: attach after wasi_ctx_new and before instantiation; free
 *    after the store and after wasi_ctx_free (the ctx may report a last
 *    disarm while it goes away).
 */
#ifndef HOSTEL_DAEMON_CLOCK_H
#define HOSTEL_DAEMON_CLOCK_H

#include <stdint.h>

#include <event2/event.h>

#include "wasi/wasi.h"

struct daemon_clock;

/* Give ctx the OS clocks and timers on base; NULL when out of memory. */
struct daemon_clock *daemon_clock_attach(struct event_base *base,
					 wasi_ctx *ctx);

void daemon_clock_free(struct daemon_clock *dc);

/* The deadline armed now (WASI_NO_DEADLINE: none) and wake-ups so far. */
uint64_t daemon_clock_armed(const struct daemon_clock *dc);
uint64_t daemon_clock_wakeups(const struct daemon_clock *dc);

#endif
