/*
 * history-calls.c - call round trips through a running hosteld: CONNS
 * connections, each with one call in flight at a time (send, wait for
 * the reply, send the next), for about SECONDS.  Prints calls/s and the
 * round trip's mean, median, 99th percentile and longest.
 *
 *   history-calls SOCKET SERVICE EXPORT CONNS SECONDS
 *
 * bench/history.sh runs it against daemons with the history on and off
 * to price the history.  It speaks raw varlink (NUL-terminated JSON) on
 * non-blocking sockets with poll(2), so the client costs little beside
 * the daemon; a reply carrying "error" counts as a failure, and any
 * failure makes the exit status 1.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CONNS_MAX 1024
#define BUF_SIZE  65536

struct client {
	int fd;
	char buf[BUF_SIZE];
	size_t len;
	double sent_at;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Write all of msg (with its NUL); the socket is blocking for this. */
static int send_all(int fd, const char *msg, size_t len)
{
	while (len) {
		ssize_t n = write(fd, msg, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		msg += n;
		len -= (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct client *cl;
	struct pollfd *pfd;
	char msg[1024];
	size_t msglen, conns, n_lat = 0, cap_lat = 1 << 16;
	double seconds, t0, end, *lat = malloc(cap_lat * sizeof(double));
	unsigned long long calls = 0, failures = 0;
	size_t active;
	double mean = 0;

	if (argc != 6 || !lat) {
		fprintf(stderr, "usage: history-calls SOCKET SERVICE EXPORT "
				"CONNS SECONDS\n");
		return 2;
	}
	conns = strtoul(argv[4], NULL, 10);
	seconds = atof(argv[5]);
	if (conns < 1 || conns > CONNS_MAX || seconds <= 0) {
		fprintf(stderr, "history-calls: CONNS 1..%d, SECONDS > 0\n",
			CONNS_MAX);
		return 2;
	}
	msglen = (size_t)snprintf(msg, sizeof(msg),
				  "{\"method\":\"io.hostel.Call.Invoke\","
				  "\"parameters\":{\"service\":\"%s\","
				  "\"export\":\"%s\"}}",
				  argv[2], argv[3]) +
		 1; /* the NUL */
	if (msglen >= sizeof(msg))
		return 2;
	cl = calloc(conns, sizeof(*cl));
	pfd = calloc(conns, sizeof(*pfd));
	if (!cl || !pfd)
		return 1;
	for (size_t i = 0; i < conns; i++) {
		cl[i].fd = connect_to(argv[1]);
		if (cl[i].fd < 0) {
			fprintf(stderr, "history-calls: %s: %s\n", argv[1],
				strerror(errno));
			return 1;
		}
	}
	t0 = now_s();
	end = t0 + seconds;
	for (size_t i = 0; i < conns; i++) {
		cl[i].sent_at = now_s();
		if (send_all(cl[i].fd, msg, msglen))
			return 1;
	}
	active = conns;
	while (active) {
		int n;

		for (size_t i = 0; i < conns; i++)
			pfd[i] = (struct pollfd){
				.fd = cl[i].fd,
				.events = cl[i].fd >= 0 ? POLLIN : 0};
		n = poll(pfd, conns, 10000);
		if (n <= 0) {
			fprintf(stderr, "history-calls: no reply for 10 s\n");
			return 1;
		}
		for (size_t i = 0; i < conns; i++) {
			struct client *c = &cl[i];
			ssize_t r;
			char *nul;

			if (c->fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP)))
				continue;
			r = read(c->fd, c->buf + c->len,
				 sizeof(c->buf) - c->len - 1);
			if (r <= 0) {
				fprintf(stderr,
					"history-calls: hosteld closed a "
					"connection\n");
				return 1;
			}
			c->len += (size_t)r;
			nul = memchr(c->buf, '\0', c->len);
			if (!nul)
				continue; /* one call in flight: one reply */
			{
				double t = now_s();

				if (strstr(c->buf, "\"error\""))
					failures++;
				calls++;
				if (n_lat == cap_lat) {
					double *v = realloc(
						lat, 2 * cap_lat * sizeof(*v));

					if (!v)
						return 1;
					lat = v;
					cap_lat *= 2;
				}
				lat[n_lat++] = t - c->sent_at;
				c->len -= (size_t)(nul + 1 - c->buf);
				memmove(c->buf, nul + 1, c->len);
				if (t < end) {
					c->sent_at = t;
					if (send_all(c->fd, msg, msglen))
						return 1;
				} else {
					close(c->fd);
					c->fd = -1;
					active--;
				}
			}
		}
	}
	seconds = now_s() - t0;
	qsort(lat, n_lat, sizeof(*lat), cmp_double);
	for (size_t i = 0; i < n_lat; i++)
		mean += lat[i];
	mean = n_lat ? mean / (double)n_lat : 0;
	printf("conns=%zu calls=%llu failures=%llu calls/s=%.0f "
	       "mean_ms=%.3f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f\n",
	       conns, calls, failures, (double)calls / seconds, mean * 1e3,
	       n_lat ? lat[n_lat / 2] * 1e3 : 0,
	       n_lat ? lat[(size_t)((double)n_lat * 0.99)] * 1e3 : 0,
	       n_lat ? lat[n_lat - 1] * 1e3 : 0);
	free(lat);
	free(cl);
	free(pfd);
	return failures ? 1 : 0;
}
