/*
 * dispatch.c - the method table and the routing of calls (see
 * dispatch.h), with the standard org.varlink.service errors.
 */
#include "config.h"

#include <string.h>

#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "ipc/idl.h"

const struct method daemon_methods[] = {
	{"org.varlink.service.GetInfo", method_service_get_info},
	{"org.varlink.service.GetInterfaceDescription",
	 method_service_get_interface_description},
	{"io.hostel.Daemon.Status", method_daemon_status},
	{"io.hostel.History.Read", method_history_read},
	{"io.hostel.History.Stats", method_history_stats},
	{"io.hostel.Component.Add", method_component_add},
	{"io.hostel.Component.List", method_component_list},
	{"io.hostel.Component.Inspect", method_component_inspect},
	{"io.hostel.Component.Remove", method_component_remove},
	{"io.hostel.Service.Create", method_service_create},
	{"io.hostel.Service.List", method_service_list},
	{"io.hostel.Service.Inspect", method_service_inspect},
	{"io.hostel.Service.Start", method_service_start},
	{"io.hostel.Service.Stop", method_service_stop},
	{"io.hostel.Service.Remove", method_service_remove},
	{"io.hostel.Call.Invoke", method_call_invoke},
	{"io.hostel.Call.Cancel", method_call_cancel},
	{NULL, NULL},
};

const struct method *method_find(const char *name)
{
	for (const struct method *m = daemon_methods; m->name; m++)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

static void reply(struct call *call, json_t *msg)
{
	call->replied = true;
	if (call->req->oneway) {
		json_decref(msg);
		return;
	}
	conn_send(call->conn, msg);
}

void call_reply(struct call *call, json_t *parameters)
{
	if (!parameters) {
		call->replied = true;
		/* Through conn_send: it logs and drops the connection. */
		conn_send(call->conn, NULL);
		return;
	}
	/* Replies end here; "continues" arrives with streaming methods. */
	reply(call, varlink_reply_new(parameters, false));
}

void call_error(struct call *call, const char *error, json_t *parameters)
{
	reply(call, varlink_error_new(error, parameters));
}

void call_invalid_parameter(struct call *call, const char *parameter)
{
	call_error(call, VARLINK_ERROR_INVALID_PARAMETER,
		   json_pack("{ss}", "parameter", parameter));
}

void call_hold(struct call *call, void (*on_drain)(void *arg),
	       void (*on_free)(void *arg), void *arg)
{
	call->replied = true;
	conn_hold(call->conn, on_drain, on_free, arg);
}

bool call_check_parameters(struct call *call, const char *const *known)
{
	const char *key;
	json_t *value;

	json_object_foreach(call->req->parameters, key, value)
	{
		const char *const *k = known;

		while (*k && strcmp(*k, key))
			k++;
		if (!*k) {
			call_invalid_parameter(call, key);
			return false;
		}
	}
	return true;
}

void dispatch(struct conn *conn, const struct varlink_request *req)
{
	struct call call = {
		.d = conn->d,
		.conn = conn,
		.req = req,
	};
	const struct method *m = method_find(req->method);
	const char *dot;

	if (!m) {
		dot = strrchr(req->method, '.');
		if (dot && !idl_find_for_member(req->method))
			call_error(&call, VARLINK_ERROR_INTERFACE_NOT_FOUND,
				   json_pack("{s:s%}", "interface", req->method,
					     (size_t)(dot - req->method)));
		else
			call_error(&call, VARLINK_ERROR_METHOD_NOT_FOUND,
				   json_pack("{ss}", "method", req->method));
		return;
	}
	if (req->upgrade) {
		/* No method of ours switches protocols. */
		call_invalid_parameter(&call, "upgrade");
		return;
	}
	m->handler(&call);
	if (!call.replied) {
		log_err(&conn->d->log, "%s returned without a reply; closing",
			req->method);
		conn_close(conn, false);
	}
}
