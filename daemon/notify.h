/*
 * notify.h - the service manager's notification protocol (sd_notify(3))
 * without libsystemd.
 *
 * When $NOTIFY_SOCKET names a socket (a path, or "@name" for the abstract
 * namespace) each state string is sent to it as one datagram, e.g.
 * "READY=1\nSTATUS=...".  Without $NOTIFY_SOCKET nothing is sent.
 */
#ifndef HOSTEL_DAEMON_NOTIFY_H
#define HOSTEL_DAEMON_NOTIFY_H

#include <stdbool.h>
#include <stdint.h>

/* Whether a service manager listens ($NOTIFY_SOCKET is set). */
bool notify_enabled(void);

/* 0 when sent or when there is no manager; -errno on failure. */
int notify_send(const char *state);

/*
 * The watchdog interval the manager asks for ($WATCHDOG_USEC, when
 * $WATCHDOG_PID is unset or names this process), or 0 for none.
 */
uint64_t notify_watchdog_usec(void);

#endif
