/*
 * log.h - hosteld's log: one line per message on stderr.
 *
 * Each line starts with the syslog priority in angle brackets ("<3>" error,
 * "<4>" warning, "<6>" info, "<7>" debug), the sd-daemon(3) convention
 * that journald and most supervisors understand.  In the foreground on a
 * terminal the prefix is a word instead ("warning: ").  Control characters
 * in a message (which may quote client input) are replaced by '?', so a
 * peer cannot forge log lines.
 */
#ifndef HOSTEL_DAEMON_LOG_H
#define HOSTEL_DAEMON_LOG_H

#include <stdbool.h>

enum {
	LOG_PRIO_ERR = 3,
	LOG_PRIO_WARNING = 4,
	LOG_PRIO_INFO = 6,
	LOG_PRIO_DEBUG = 7,
};

struct log {
	int level; /* messages of a higher (less urgent) priority are dropped */
	bool human; /* word prefixes instead of "<N>" */
};

void log_msg(const struct log *log, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "error", "warning", "info", "debug" -> priority; -1 when unknown. */
int log_level_parse(const char *name);
const char *log_level_name(int prio);

#define log_err(l, ...)	  log_msg((l), LOG_PRIO_ERR, __VA_ARGS__)
#define log_warn(l, ...)  log_msg((l), LOG_PRIO_WARNING, __VA_ARGS__)
#define log_info(l, ...)  log_msg((l), LOG_PRIO_INFO, __VA_ARGS__)
#define log_debug(l, ...) log_msg((l), LOG_PRIO_DEBUG, __VA_ARGS__)

#endif
