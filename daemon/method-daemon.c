/*
 * method-daemon.c - io.hostel.Daemon: the daemon's own state (Status)
 * and its metrics (GetMetrics, daemon/metrics.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - Status: none, a fixed-size reply.
 *  - GetMetrics: the metrics text (metrics.c: a fixed set of lines per
 *    service); one that would pass the message bound is refused with
 *    MetricsTooLarge instead of being sent.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/metrics.h"
#include "daemon/service.h"
#include "ipc/varlink.h"

#define ERR_PREFIX "io.hostel.Daemon."

/* Room for the reply's JSON around the text (its escapes included). */
#define METRICS_TEXT_MAX (VARLINK_MESSAGE_MAX / 2)

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

void method_daemon_get_metrics(struct call *call)
{
	static const char *const known[] = {"service", NULL};
	json_t *v = json_object_get(call->req->parameters, "service");
	const char *service = NULL;
	char *text;
	size_t len;

	if (!call_check_parameters(call, known))
		return;
	if (v && !json_is_null(v)) {
		if (!json_is_string(v)) {
			call_invalid_parameter(call, "service");
			return;
		}
		service = json_string_value(v);
		if (!service_find(call->d, service)) {
			call_error(call, "io.hostel.Service.ServiceNotFound",
				   json_pack("{ss}", "name", service));
			return;
		}
	}
	if (metrics_render(call->d, service, &text, &len) < 0) {
		call_reply(call, NULL);
		return;
	}
	if (len > METRICS_TEXT_MAX) {
		call_error(call, ERR_PREFIX "MetricsTooLarge",
			   json_pack("{sI,sI}", "bytes", (json_int_t)len,
				     "limit", (json_int_t)METRICS_TEXT_MAX));
		free(text);
		return;
	}
	call_reply(call, json_pack("{s:s%}", "text", text, len));
	free(text);
}
