/*
 * timefmt.h - the times and durations hostel's users and its protocol
 * write, parsed the same way by the client and the daemon.
 *
 * Durations (hostel.conf(5) history-keep-age, `hostel history prune
 * --keep-age`, the relative times below): a count of seconds, or a
 * count with one unit: s, m (minutes), h, d or w (weeks).
 *
 * Times, as the protocol carries them (io.hostel.History): RFC 3339,
 *   YYYY-MM-DDTHH:MM:SS[.F]Z  or  ...[.F]+HH:MM / -HH:MM
 * with 1 to 9 fractional digits; 't' and 'z' as well.
 *
 * Times, as a user writes them (`hostel logs --since/--until`), the
 * protocol's forms and, as journalctl(1) takes them:
 *   YYYY-MM-DD[( |T)HH:MM[:SS[.F]]][Z|+HH:MM|-HH:MM]
 *       without a zone: local time; without a time: midnight;
 *   now, today, yesterday (midnight, local);
 *   -DURATION (e.g. -10m, -2h, -1d) and "DURATION ago" or
 *   "N UNIT ago" (e.g. "10m ago", "10 m ago"): that long before now.
 *
 * Parsers never abort: malformed, out-of-range and overflowing input
 * gives -EINVAL.  Times are unix nanoseconds.
 */
#ifndef HOSTEL_IPC_TIMEFMT_H
#define HOSTEL_IPC_TIMEFMT_H

#include <stddef.h>
#include <stdint.h>

/* A duration in seconds (>= 0, at most INT64_MAX ns); -EINVAL. */
int hostel_duration_parse(const char *s, int64_t *sec);

/* An RFC 3339 time, as the protocol carries it; -EINVAL. */
int hostel_time_parse_rfc3339(const char *s, int64_t *ns);

/* A time as a user writes it, relative forms against now_ns; -EINVAL. */
int hostel_time_parse_user(const char *s, int64_t now_ns, int64_t *ns);

/* ns as RFC 3339 in UTC with nanoseconds (size >= 40). */
void hostel_time_format(int64_t ns, char *buf, size_t size);

#endif
