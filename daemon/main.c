/*
 * main.c - hosteld: command line, detaching, and the daemon's lifecycle.
 *
 * Without --foreground, hosteld detaches once its socket listens; the
 * parent exits 0 only after the child reports that it is ready, so the
 * exit status tells whether startup worked.  Under a service manager
 * ($NOTIFY_SOCKET set) it never detaches: the manager tracks the pid.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: the
 * command line, once.
 */
#define _GNU_SOURCE /* pipe2 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/notify.h"

enum {
	EXIT_USAGE = 2,
};

static void usage(FILE *f)
{
	fprintf(f, "usage: hosteld [OPTIONS]\n"
		   "\n"
		   "The hostel daemon: hosts WebAssembly components and serves "
		   "the varlink\n"
		   "protocol on a Unix socket.\n"
		   "\n"
		   "  -s, --socket PATH     listen on PATH\n"
		   "  -d, --state-dir DIR   keep state in DIR\n"
		   "  -c, --config FILE     read settings from FILE "
		   "(hostel.conf)\n"
		   "  -f, --foreground      do not detach; log with plain "
		   "prefixes on a terminal\n"
		   "      --check-config    check the configuration file and "
		   "its services.d\n"
		   "                        files, start nothing\n"
		   "  -V, --version         print the version and exit\n"
		   "  -h, --help            print this help and exit\n"
		   "\n"
		   "See hosteld(8) and hostel-protocol(7).\n");
}

/* Fork; the parent waits for the child's "ready" byte and exits. */
static int detach(struct daemon *d)
{
	int pipefd[2], devnull;
	char byte;
	ssize_t n;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		log_err(&d->log, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		log_err(&d->log, "fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid > 0) {
		close(pipefd[1]);
		do
			n = read(pipefd[0], &byte, 1);
		while (n < 0 && errno == EINTR);
		/* _exit: the socket file is the child's to remove. */
		_exit(n == 1 ? EXIT_SUCCESS : EXIT_FAILURE);
	}
	close(pipefd[0]);
	d->ready_fd = pipefd[1];
	if (setsid() < 0 || chdir("/") < 0)
		log_warn(&d->log, "detaching: %s", strerror(errno));
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		/* stderr stays: it is the log. */
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		if (devnull > STDERR_FILENO)
			close(devnull);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"state-dir", required_argument, NULL, 'd'},
		{"config", required_argument, NULL, 'c'},
		{"foreground", no_argument, NULL, 'f'},
		{"check-config", no_argument, NULL, 'C'},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct daemon_options opt = {0};
	struct daemon d;
	bool check = false;
	int c, rc;

	/*
	 * Buffers of a megabyte and more (store images, their folds in the
	 * writer thread, large values) get mappings of their own, given
	 * back when freed.  glibc's default threshold rises to the size of
	 * each such buffer freed, after which they come from the heaps and
	 * stay in the RSS: a 7 MB image made hosteld keep 33 MB
	 * (tests/daemon-hostile.sh, durability commit).
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);

	while ((c = getopt_long(argc, argv, "s:d:c:fVh", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 's':
			opt.socket = optarg;
			break;
		case 'd':
			opt.state_dir = optarg;
			break;
		case 'c':
			opt.config_path = optarg;
			break;
		case 'f':
			opt.foreground = true;
			break;
		case 'C':
			check = true;
			break;
		case 'V':
			printf("hosteld %s\n", PACKAGE_VERSION);
			return EXIT_SUCCESS;
		case 'h':
			usage(stdout);
			return EXIT_SUCCESS;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hosteld: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	if (check)
		return daemon_check_config(opt.config_path, stdout);
	if (daemon_init(&d, &opt) < 0) {
		daemon_fini(&d);
		return EXIT_FAILURE;
	}
	if (!opt.foreground && !notify_enabled() && detach(&d) < 0) {
		daemon_fini(&d);
		return EXIT_FAILURE;
	}
	rc = daemon_run(&d);
	daemon_fini(&d);
	return rc;
}
