/*
 * hostcalls.h - the history's view of host calls that complete later
 * (a guest waiting on a WASI 0.3 clock, ...): each one a hostcall.started
 * event when it defers and a hostcall.settled event when it settles
 * (hostel-protocol(7)).
 *
 * Contract: after hostcalls_observe(s), every host call s's store defers
 * gets hostcall.started {hostcall, import, arguments} with the id of the
 * call whose task it works for (even one answered long ago: background
 * work; invocation_run tags each call), and, when it settles, hostcall.settled
 * {hostcall, outcome, result?, message?} with the same call id and number.
 * Numbers count this run of the daemon's deferred host calls from 1.  A host
 * call still outstanding when its store goes (poisoned, recreated, stopped)
 * gets no hostcall.settled: the store.* event says why.  Without a
 * history nothing is recorded.
 */
#ifndef HOSTEL_DAEMON_HOSTCALLS_H
#define HOSTEL_DAEMON_HOSTCALLS_H

struct service;

/* Watch the host calls of s's current store (call after creating it). */
void hostcalls_observe(struct service *s);

#endif
