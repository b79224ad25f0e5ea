/*
 * client.c - the blocking varlink client of client.h: poll(2) for the
 * timeouts, a varlink_reader for the framing.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - varlink_client_connect: one client; its reader holds at most one
 *    message, VARLINK_MESSAGE_MAX (what the daemon sends; a longer reply
 *    is skipped, not held).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ipc/client.h"
#include "ipc/socket-path.h"

struct varlink_client {
	int fd;
	int timeout_ms;
	struct varlink_reader reader;
	char fault[160];
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left before deadline (-1: none), for poll(). */
static int remaining(long long deadline)
{
	long long left;

	if (deadline < 0)
		return -1;
	left = deadline - now_ms();
	return left < 0 ? 0 : left > 1 << 30 ? 1 << 30 : (int)left;
}

static long long deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/* Wait for events on fd; 0 when ready, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd p = {.fd = fd, .events = events};

	for (;;) {
		int n = poll(&p, 1, remaining(deadline));

		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

int varlink_client_connect(const char *path, int timeout_ms,
			   struct varlink_client **out)
{
	long long deadline = deadline_of(timeout_ms);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct varlink_client *c;
	int rc;

	*out = NULL;
	if (!hostel_socket_path_fits(path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->timeout_ms = timeout_ms;
	varlink_reader_init(&c->reader, 0);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0) {
		rc = -errno;
		free(c);
		return rc;
	}
	for (;;) {
		if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		rc = -errno;
		if (rc == -EINTR)
			continue;
		if (rc == -EAGAIN) {
			/* The listen backlog is full: try again shortly. */
			if (remaining(deadline) == 0) {
				rc = -ETIMEDOUT;
				goto fail;
			}
			poll(NULL, 0, 10);
			continue;
		}
		if (rc == -EINPROGRESS) {
			socklen_t len = sizeof(int);
			int err = 0;

			rc = wait_fd(c->fd, POLLOUT, deadline);
			if (rc)
				goto fail;
			if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err,
				       &len) < 0)
				err = errno;
			if (err == 0)
				break;
			rc = -err;
		}
		goto fail;
	}
	*out = c;
	return 0;
fail:
	varlink_client_free(c);
	return rc;
}

void varlink_client_free(struct varlink_client *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	varlink_reader_free(&c->reader);
	free(c);
}

int varlink_client_fd(const struct varlink_client *c)
{
	return c->fd;
}

void varlink_client_set_timeout(struct varlink_client *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms;
}

const char *varlink_client_fault(const struct varlink_client *c)
{
	return c->fault;
}

int varlink_client_write(struct varlink_client *c, const void *buf, size_t n)
{
	long long deadline = deadline_of(c->timeout_ms);
	const char *p = buf;

	while (n > 0) {
		ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
		int rc;

		if (w >= 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return errno == EPIPE ? -ECONNRESET : -errno;
		rc = wait_fd(c->fd, POLLOUT, deadline);
		if (rc)
			return rc;
	}
	return 0;
}

int varlink_client_send(struct varlink_client *c, const json_t *msg)
{
	size_t len;
	char *text = varlink_encode(msg, &len);
	int rc;

	if (!text)
		return -ENOMEM;
	rc = varlink_client_write(c, text, len);
	free(text);
	return rc;
}

int varlink_client_recv_raw(struct varlink_client *c, const char **msg,
			    size_t *len)
{
	long long deadline = deadline_of(c->timeout_ms);
	char buf[16384];

	for (;;) {
		size_t want;
		ssize_t n;
		int rc;

		switch (varlink_reader_next(&c->reader, msg, len)) {
		case VARLINK_READ_MESSAGE:
			return 0;
		case VARLINK_READ_OVERSIZE:
			return -EMSGSIZE;
		case VARLINK_READ_AGAIN:
			break;
		}
		want = varlink_reader_space(&c->reader);
		if (want > sizeof(buf))
			want = sizeof(buf);
		n = recv(c->fd, buf, want, 0);
		if (n > 0) {
			rc = varlink_reader_feed(&c->reader, buf, (size_t)n);
			if (rc)
				return rc;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -errno;
		rc = wait_fd(c->fd, POLLIN, deadline);
		if (rc)
			return rc;
	}
}

int varlink_client_recv(struct varlink_client *c, struct varlink_reply *reply)
{
	struct varlink_fault fault;
	const char *msg;
	size_t len;
	int rc;

	memset(reply, 0, sizeof(*reply));
	rc = varlink_client_recv_raw(c, &msg, &len);
	if (rc)
		return rc;
	switch (varlink_reply_parse(msg, len, reply, &fault)) {
	case VARLINK_OK:
		return 0;
	case VARLINK_ENOMEM:
		varlink_reply_clear(reply);
		return -ENOMEM;
	case VARLINK_EPROTO:
	case VARLINK_EINVAL:
		break;
	}
	snprintf(c->fault, sizeof(c->fault), "%s", fault.reason);
	varlink_reply_clear(reply);
	return -EBADMSG;
}

int varlink_client_call(struct varlink_client *c, const char *method,
			json_t *parameters, struct varlink_reply *reply)
{
	json_t *msg = varlink_call_new(method, parameters, 0);
	int rc;

	memset(reply, 0, sizeof(*reply));
	if (!msg)
		return -ENOMEM;
	rc = varlink_client_send(c, msg);
	json_decref(msg);
	return rc ? rc : varlink_client_recv(c, reply);
}
