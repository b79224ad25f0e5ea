/*
 * clock.c - WASI 0.3 waits woken by libevent timers (see clock.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: one
 * timer per store, whatever number of waits the guest has pending (the
 * waits themselves are clocks_p3.c's, max_pending_host_calls).
 */
#include "config.h"

#include <stdlib.h>
#include <sys/time.h>

#include "daemon/clock.h"

struct daemon_clock {
	struct event *ev;
	wasi_ctx *ctx;
	uint64_t (*now)(void *env); /* the ctx's monotonic clock */
	void *now_env;
	uint64_t armed;
	uint64_t wakeups;
};

static void arm(void *env, uint64_t deadline)
{
	struct daemon_clock *dc = env;
	uint64_t now, ns;
	struct timeval tv;

	dc->armed = deadline;
	if (deadline == WASI_NO_DEADLINE) {
		event_del(dc->ev);
		return;
	}
	now = dc->now(dc->now_env);
	ns = deadline > now ? deadline - now : 0;
	/* Round up: a wake-up before the deadline would find nothing due. */
	tv.tv_sec = (time_t)(ns / 1000000000u);
	tv.tv_usec = (suseconds_t)((ns % 1000000000u + 999) / 1000);
	if (tv.tv_usec >= 1000000) {
		tv.tv_sec++;
		tv.tv_usec -= 1000000;
	}
	evtimer_add(dc->ev, &tv); /* replaces the previous timeout */
}

/* From the loop, outside any service turn: settle, which asks service. */
static void wake(evutil_socket_t fd, short what, void *arg)
{
	struct daemon_clock *dc = arg;

	dc->wakeups++;
	dc->armed = WASI_NO_DEADLINE;
	wasi_ctx_fire_timers(dc->ctx); /* re-arms the next deadline */
}

struct daemon_clock *daemon_clock_attach(struct event_base *base, wasi_ctx *ctx)
{
	struct daemon_clock *dc = calloc(1, sizeof(*dc));
	wasi_clock c;

	if (!dc)
		return NULL;
	dc->ev = evtimer_new(base, wake, dc);
	if (!dc->ev) {
		free(dc);
		return NULL;
	}
	wasi_clock_system(&c);
	dc->ctx = ctx;
	dc->now = c.now;
	dc->now_env = c.env;
	dc->armed = WASI_NO_DEADLINE;
	c.arm = arm;
	c.arm_env = dc;
	wasi_ctx_set_clock(ctx, &c);
	return dc;
}

void daemon_clock_free(struct daemon_clock *dc)
{
	if (!dc)
		return;
	event_free(dc->ev);
	free(dc);
}

uint64_t daemon_clock_armed(const struct daemon_clock *dc)
{
	return dc->armed;
}

uint64_t daemon_clock_wakeups(const struct daemon_clock *dc)
{
	return dc->wakeups;
}
