/*
 * method-daemon.c - io.hostel.Daemon: the daemon's own state.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: a
 * fixed-size reply.
 */
#include "config.h"

#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/dispatch.h"

void method_daemon_status(struct call *call)
{
	static const char *const known[] = {NULL};
	struct daemon *d = call->d;

	if (!call_check_parameters(call, known))
		return;
	call_reply(call, json_pack("{ss,sI,sI,ss,ss,sI}", "version",
				   PACKAGE_VERSION, "pid", (json_int_t)getpid(),
				   "uptimeMs", (json_int_t)daemon_uptime_ms(d),
				   "socket", daemon_socket_path(d),
				   "stateDirectory", d->state_dir,
				   "connections", (json_int_t)d->n_conns));
}
