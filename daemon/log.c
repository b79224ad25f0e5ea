/*
 * log.c - the stderr log of log.h.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: a
 * message is formatted into a fixed buffer and cut there.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "daemon/log.h"

static const struct {
	int prio;
	const char *name;
} levels[] = {
	{LOG_PRIO_ERR, "error"},
	{LOG_PRIO_WARNING, "warning"},
	{LOG_PRIO_INFO, "info"},
	{LOG_PRIO_DEBUG, "debug"},
};

int log_level_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (!strcmp(levels[i].name, name))
			return levels[i].prio;
	return -1;
}

const char *log_level_name(int prio)
{
	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
		if (levels[i].prio == prio)
			return levels[i].name;
	return "?";
}

void log_msg(const struct log *log, int prio, const char *fmt, ...)
{
	char line[1024];
	size_t n;
	va_list ap;
	int len;

	if (prio > log->level)
		return;
	if (log->human)
		len = snprintf(line, sizeof(line), "hosteld: %s%s",
			       prio == LOG_PRIO_INFO ? ""
						     : log_level_name(prio),
			       prio == LOG_PRIO_INFO ? "" : ": ");
	else
		len = snprintf(line, sizeof(line), "<%d>", prio);
	n = len > 0 ? (size_t)len : 0;
	va_start(ap, fmt);
	len = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if ((size_t)len >= sizeof(line) - n - 1)
		memcpy(line + sizeof(line) - 5, "...", 4); /* truncated */
	for (char *p = line + n; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	n = strlen(line);
	line[n] = '\n';
	/* One write per line keeps lines whole when several processes log. */
	fwrite(line, 1, n + 1, stderr);
	fflush(stderr);
}
