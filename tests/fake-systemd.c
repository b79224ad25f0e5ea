/*
 * fake-systemd.c - test helper: run a command the way systemd runs a
 * Type=notify service with socket activation, so hosteld's side of those
 * protocols can be tested without systemd.
 *
 *   fake-systemd [--listen PATH]... [--fdnames A:B] [--notify PATH|@NAME]
 *                [--watchdog-usec N] -- COMMAND [ARGS...]
 *
 *   --listen PATH    bind and listen on a Unix socket at PATH and pass it
 *                    (fds from 3, LISTEN_FDS, LISTEN_PID)
 *   --fdnames NAMES  set LISTEN_FDNAMES
 *   --notify ADDR    receive notifications on a datagram socket at ADDR
 *                    ('@' for the abstract namespace) and print each
 *                    datagram as one line (newlines become spaces)
 *   --watchdog-usec  set WATCHDOG_USEC (and WATCHDOG_PID)
 *
 * SIGTERM, SIGINT and SIGHUP are forwarded to the command.  When it ends,
 * "EXIT=<status>" or "SIGNAL=<number>" is printed and fake-systemd exits
 * with the same status (128 + signal).  Socket files are removed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_LISTEN 4

/* Set by the signal handler; read by the main loop. */
static volatile sig_atomic_t pending_signal;

static void on_signal(int sig)
{
	pending_signal = sig;
}

static void die(const char *what)
{
	fprintf(stderr, "fake-systemd: %s: %s\n", what, strerror(errno));
	exit(1);
}

static socklen_t address(const char *path, struct sockaddr_un *sa)
{
	size_t n = strlen(path);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n >= sizeof(sa->sun_path)) {
		fprintf(stderr, "fake-systemd: path too long: %s\n", path);
		exit(1);
	}
	memcpy(sa->sun_path, path, n);
	if (path[0] == '@') {
		sa->sun_path[0] = '\0';
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	}
	unlink(path);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

static int bound_socket(const char *path, int type)
{
	struct sockaddr_un sa;
	socklen_t len = address(path, &sa);
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) < 0)
		die(path);
	if (type == SOCK_STREAM && listen(fd, 16) < 0)
		die("listen");
	return fd;
}

static void print_datagrams(int fd)
{
	char buf[4096];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

		if (n <= 0)
			return;
		buf[n] = '\0';
		for (char *p = buf; *p; p++)
			if (*p == '\n')
				*p = ' ';
		printf("%s\n", buf);
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	const char *listen_paths[MAX_LISTEN];
	const char *fdnames = NULL, *notify = NULL, *watchdog = NULL;
	int listen_fds[MAX_LISTEN], n_listen = 0, notify_fd = -1, i, status;
	struct sigaction sa;
	pid_t child;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (i + 1 >= argc)
			break;
		if (!strcmp(argv[i], "--listen") && n_listen < MAX_LISTEN)
			listen_paths[n_listen++] = argv[++i];
		else if (!strcmp(argv[i], "--fdnames"))
			fdnames = argv[++i];
		else if (!strcmp(argv[i], "--notify"))
			notify = argv[++i];
		else if (!strcmp(argv[i], "--watchdog-usec"))
			watchdog = argv[++i];
		else
			break;
	}
	if (i >= argc - 1 || strcmp(argv[i], "--")) {
		fprintf(stderr, "usage: fake-systemd [--listen PATH]... "
				"[--fdnames A:B] [--notify ADDR] "
				"[--watchdog-usec N] -- COMMAND [ARGS...]\n");
		return 2;
	}
	for (int k = 0; k < n_listen; k++)
		listen_fds[k] = bound_socket(listen_paths[k], SOCK_STREAM);
	if (notify)
		notify_fd = bound_socket(notify, SOCK_DGRAM);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: poll() must wake up */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		char buf[32];

		/* Move the sockets to 3, 4, ... (dup2 clears CLOEXEC). */
		for (int k = 0; k < n_listen; k++) {
			int tmp = fcntl(listen_fds[k], F_DUPFD_CLOEXEC, 100);

			if (tmp < 0)
				die("dup");
			listen_fds[k] = tmp;
		}
		for (int k = 0; k < n_listen; k++)
			if (dup2(listen_fds[k], 3 + k) < 0)
				die("dup2");
		snprintf(buf, sizeof(buf), "%ld", (long)getpid());
		if (n_listen) {
			setenv("LISTEN_PID", buf, 1);
			snprintf(buf, sizeof(buf), "%d", n_listen);
			setenv("LISTEN_FDS", buf, 1);
			if (fdnames)
				setenv("LISTEN_FDNAMES", fdnames, 1);
		}
		if (notify)
			setenv("NOTIFY_SOCKET", notify, 1);
		if (watchdog) {
			snprintf(buf, sizeof(buf), "%ld", (long)getpid());
			setenv("WATCHDOG_PID", buf, 1);
			setenv("WATCHDOG_USEC", watchdog, 1);
		}
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(argv[i + 1], argv + i + 1);
		die(argv[i + 1]);
	}

	for (;;) {
		struct pollfd p = {.fd = notify_fd, .events = POLLIN};
		pid_t w;

		if (pending_signal) {
			kill(child, pending_signal);
			pending_signal = 0;
		}
		if (poll(&p, notify_fd >= 0 ? 1 : 0, 50) > 0)
			print_datagrams(notify_fd);
		w = waitpid(child, &status, WNOHANG);
		if (w == child)
			break;
		if (w < 0 && errno != EINTR)
			die("waitpid");
	}
	if (notify_fd >= 0)
		print_datagrams(notify_fd);
	for (int k = 0; k < n_listen; k++)
		unlink(listen_paths[k]);
	if (notify && notify[0] != '@')
		unlink(notify);
	if (WIFEXITED(status)) {
		printf("EXIT=%d\n", WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	printf("SIGNAL=%d\n", WTERMSIG(status));
	return 128 + WTERMSIG(status);
}
