/*
 * timefmt.c - the time and duration forms of timefmt.h.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none: the parsers read the text in place.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ipc/timefmt.h"

#define NS_PER_SEC 1000000000LL
/* Seconds whose nanoseconds fit an int64_t (about 292 years). */
#define SEC_MAX (INT64_MAX / NS_PER_SEC - 1)

static const struct {
	const char *name;
	int64_t sec;
} units[] = {{"s", 1},	  {"m", 60},	{"min", 60},
	     {"h", 3600}, {"d", 86400}, {"w", 7 * 86400}};

/* A run of decimal digits as an int64_t; false on overflow or none. */
static bool count(const char **p, int64_t *out)
{
	const char *s = *p;
	int64_t n = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (n > (INT64_MAX - (*s - '0')) / 10)
			return false;
		n = n * 10 + (*s - '0');
	}
	*p = s;
	*out = n;
	return true;
}

/* A count and an optional unit, ending at end (exclusive). */
static int duration_span(const char *s, const char *end, int64_t *sec)
{
	int64_t n, mult = 1;
	size_t len;

	if (!count(&s, &n) || s > end)
		return -EINVAL;
	if (s < end && *s == ' ')
		s++; /* "10 min ago" */
	len = (size_t)(end - s);
	if (len) {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strlen(units[i].name) == len &&
			    !memcmp(units[i].name, s, len))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		mult = units[i].sec;
	}
	if (n > SEC_MAX / mult)
		return -EINVAL;
	*sec = n * mult;
	return 0;
}

int hostel_duration_parse(const char *s, int64_t *sec)
{
	/* No space between count and unit here: "10m", not "10 m". */
	if (!s || strchr(s, ' '))
		return -EINVAL;
	return duration_span(s, s + strlen(s), sec);
}

/* Exactly n digits. */
static bool fixed(const char **p, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		char c = (*p)[i];

		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*out = v;
	return true;
}

static int days_in(int year, int month)
{
	static const int days[] = {31, 28, 31, 30, 31, 30,
				   31, 31, 30, 31, 30, 31};
	bool leap = (year % 4 == 0 && year % 100) || year % 400 == 0;

	return month == 2 && leap ? 29 : days[month - 1];
}

/* Seconds and nanoseconds to ns, refusing what does not fit. */
static int to_ns(time_t sec, int64_t frac, int64_t *ns)
{
	if (sec > SEC_MAX || sec < -SEC_MAX)
		return -EINVAL;
	*ns = (int64_t)sec * NS_PER_SEC + frac;
	return 0;
}

/*
 * YYYY-MM-DD, then (T|t) or, for a user, ' ', HH:MM:SS (a user may omit
 * :SS, or the whole time), an optional fraction, then a zone (a user
 * may omit it: local time).
 */
static int datetime(const char *s, bool user, int64_t *ns)
{
	struct tm tm = {0};
	int year, mon, day, hour = 0, min = 0, sec = 0, zh, zm;
	int64_t frac = 0, off = 0;
	bool local = false;
	time_t t;

	if (!fixed(&s, 4, &year) || *s++ != '-' || !fixed(&s, 2, &mon) ||
	    *s++ != '-' || !fixed(&s, 2, &day) || mon < 1 || mon > 12 ||
	    day < 1 || day > days_in(year, mon))
		return -EINVAL;
	if (!*s && user) {
		local = true;
		goto done;
	}
	if (!(*s == 'T' || *s == 't' || (user && *s == ' ')))
		return -EINVAL;
	s++;
	if (!fixed(&s, 2, &hour) || *s++ != ':' || !fixed(&s, 2, &min) ||
	    hour > 23 || min > 59)
		return -EINVAL;
	if (*s == ':') {
		s++;
		if (!fixed(&s, 2, &sec) || sec > 60)
			return -EINVAL;
		if (*s == '.') {
			int digits = 0;
			int64_t scale = NS_PER_SEC;

			for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
				if (digits == 9)
					return -EINVAL;
				scale /= 10;
				frac += (*s - '0') * scale;
			}
			if (!digits)
				return -EINVAL;
		}
	} else if (!user) {
		return -EINVAL;
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		int sign = *s++ == '-' ? -1 : 1;

		if (!fixed(&s, 2, &zh) || *s++ != ':' || !fixed(&s, 2, &zm) ||
		    zh > 23 || zm > 59)
			return -EINVAL;
		off = sign * (zh * 3600 + zm * 60);
	} else if (user && !*s) {
		local = true;
	} else {
		return -EINVAL;
	}
	if (*s)
		return -EINVAL;
done:
	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = day;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_sec = sec;
	if (local) {
		tm.tm_isdst = -1;
		t = mktime(&tm);
	} else {
		t = timegm(&tm);
	}
	if (t == (time_t)-1 && (tm.tm_year != 69 || tm.tm_yday != 364))
		return -EINVAL;
	return to_ns(t - off, frac, ns);
}

int hostel_time_parse_rfc3339(const char *s, int64_t *ns)
{
	return s ? datetime(s, false, ns) : -EINVAL;
}

/* Local midnight, days before the day of now_ns. */
static int midnight(int64_t now_ns, int days_back, int64_t *ns)
{
	time_t t = (time_t)(now_ns / NS_PER_SEC);
	struct tm tm;

	if (!localtime_r(&t, &tm))
		return -EINVAL;
	tm.tm_mday -= days_back;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	return to_ns(t, 0, ns);
}

/* now_ns less sec seconds, refusing what does not fit. */
static int before(int64_t now_ns, int64_t sec, int64_t *ns)
{
	/* sec <= SEC_MAX (duration_span), so the bound cannot overflow. */
	if (sec > SEC_MAX || now_ns < INT64_MIN + sec * NS_PER_SEC)
		return -EINVAL;
	*ns = now_ns - sec * NS_PER_SEC;
	return 0;
}

int hostel_time_parse_user(const char *s, int64_t now_ns, int64_t *ns)
{
	size_t n;
	int64_t sec;

	if (!s)
		return -EINVAL;
	n = strlen(s);
	if (!strcmp(s, "now")) {
		*ns = now_ns;
		return 0;
	}
	if (!strcmp(s, "today"))
		return midnight(now_ns, 0, ns);
	if (!strcmp(s, "yesterday"))
		return midnight(now_ns, 1, ns);
	if (s[0] == '-')
		return hostel_duration_parse(s + 1, &sec) ||
				       before(now_ns, sec, ns)
			       ? -EINVAL
			       : 0;
	if (n > 4 && !strcmp(s + n - 4, " ago"))
		return duration_span(s, s + n - 4, &sec) ||
				       before(now_ns, sec, ns)
			       ? -EINVAL
			       : 0;
	return datetime(s, true, ns);
}

void hostel_time_format(int64_t ns, char *buf, size_t size)
{
	int64_t sec = ns / NS_PER_SEC, frac = ns % NS_PER_SEC;
	time_t t;
	struct tm tm;
	size_t n;

	if (frac < 0) {
		frac += NS_PER_SEC;
		sec--;
	}
	t = (time_t)sec;
	if (!gmtime_r(&t, &tm) ||
	    !(n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm))) {
		snprintf(buf, size, "%lld", (long long)ns);
		return;
	}
	snprintf(buf + n, size - n, ".%09lldZ", (long long)frac);
}
