/*
 * service-wasi.h - the WASI host of one service store: a wasi_ctx built
 * from the service's configuration (env, args, preopens), linked into the
 * store's linker, with the guest's stdout and stderr captured.
 *
 * Contract:
 *  - One service_wasi per store, created before instantiation and freed
 *    after the store (the store's dropped handles call back into the
 *    ctx).  A recreated store gets a fresh one: no guest state leaks
 *    from a poisoned instance into its successor.
 *  - Configuration (hostel-protocol(7), Config): "env" an object of
 *    strings, "args" a list of strings (the guest's argv[0] is the
 *    service name, these follow), "preopens" a list of "HOST" or
 *    "HOST::GUEST" with HOST an absolute directory path (GUEST defaults
 *    to HOST; at most SERVICE_WASI_MAX_PREOPENS).  The guest sees
 *    nothing of the daemon's own environment, arguments or files; stdin
 *    is empty.  File access stays inside the
 *    preopens (wasi_path_resolve: no `..` above a preopen, no absolute
 *    paths, no symlink leading out).  Preopens are opened with the
 *    daemon's rights, so a service owned by a user other than root or
 *    the daemon's own uid may only preopen directories that user owns
 *    (checked on the opened directory itself).
 *  - Output: every byte of stdout/stderr goes to the history's
 *    guest_output hook, which records one guest.stdout/guest.stderr
 *    event per line (bounded, store/guest-output.h); a partial last line
 *    is recorded when the store goes away.  Lines are also logged (info,
 *    "service NAME: stdout: LINE"), cut at SERVICE_WASI_LOG_LINE bytes and
 *    rate limited per store (a burst of SERVICE_WASI_LOG_BURST lines, then
 *    SERVICE_WASI_LOG_RATE lines per second); what the limit drops is
 *    counted in one log line when logging resumes.  The history keeps
 *    every line whatever the log drops.
 *  - Time: the ctx's clock is the daemon's (daemon/clock.h): the OS
 *    clocks, and a libevent timer per store that wakes its WASI 0.3
 *    waits and so requests service.
 */
#ifndef HOSTEL_DAEMON_SERVICE_WASI_H
#define HOSTEL_DAEMON_SERVICE_WASI_H

#include <stddef.h>

#include <jansson.h>

#include "run/instance.h"
#include "wasi/wasi.h"

#define SERVICE_WASI_LOG_LINE  200
#define SERVICE_WASI_LOG_BURST 50
#define SERVICE_WASI_LOG_RATE  10
/*
 * Preopens of one service (issue 18).  Each holds one of the daemon's
 * file descriptors for as long as the store lives, and a config of 16
 * MiB could otherwise name a few million; past it the config is refused
 * ("preopens: more than 64").
 */
#define SERVICE_WASI_MAX_PREOPENS 64

struct service;
struct service_wasi;

/*
 * Check the WASI keys of a parsed config object (env, args, preopens):
 * 0, or -1 with why.  Does not look at the file system.
 */
int service_wasi_check_config(json_t *config, char *why, size_t whylen);

/*
 * Build the ctx of service s from its config text and register WASI in
 * l.  NULL with why ("preopen /srv/x: No such file or directory", ...).
 */
struct service_wasi *service_wasi_new(struct service *s, cm_linker *l,
				      char *why, size_t whylen);

/* Record what is left of a partial line, then free (after the store). */
void service_wasi_free(struct service_wasi *w);

/* The ctx (exit status after a wasi:cli/exit trap). */
wasi_ctx *service_wasi_ctx(struct service_wasi *w);

#endif
