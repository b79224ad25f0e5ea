/*
 * dispatch.c - the method table and the routing of calls (see
 * dispatch.h), with the standard org.varlink.service errors.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none beyond the parsed request (conn.c, ipc/varlink.c): the error
 *    replies built here (json_pack) name a parameter or the method of a
 *    request, at most VARLINK_MESSAGE_MAX, and the interface's name
 *    (a fixed table).
 */
#include "config.h"

#include <string.h>

#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/upload.h"
#include "ipc/idl.h"

const struct method daemon_methods[] = {
	{"org.varlink.service.GetInfo", method_service_get_info,
	 ACCESS_CONNECT},
	{"org.varlink.service.GetInterfaceDescription",
	 method_service_get_interface_description, ACCESS_CONNECT},
	{"io.hostel.Daemon.Status", method_daemon_status, ACCESS_CONNECT},
	{"io.hostel.Daemon.GetMetrics", method_daemon_get_metrics, ACCESS_CALL},
	{"io.hostel.History.Read", method_history_read, ACCESS_CALL},
	{"io.hostel.History.Stats", method_history_stats, ACCESS_ADMIN},
	{"io.hostel.History.Prune", method_history_prune, ACCESS_ADMIN},
	{"io.hostel.Component.Add", method_component_add, ACCESS_DEPLOY},
	{"io.hostel.Component.List", method_component_list, ACCESS_CALL},
	{"io.hostel.Component.Inspect", method_component_inspect, ACCESS_CALL},
	{"io.hostel.Component.Remove", method_component_remove, ACCESS_DEPLOY},
	{"io.hostel.Service.Create", method_service_create, ACCESS_DEPLOY},
	{"io.hostel.Service.List", method_service_list, ACCESS_CALL},
	{"io.hostel.Service.Inspect", method_service_inspect, ACCESS_CALL},
	{"io.hostel.Service.Start", method_service_start, ACCESS_DEPLOY},
	{"io.hostel.Service.Stop", method_service_stop, ACCESS_DEPLOY},
	{"io.hostel.Service.Snapshot", method_service_snapshot, ACCESS_DEPLOY},
	{"io.hostel.Service.Remove", method_service_remove, ACCESS_DEPLOY},
	{"io.hostel.Call.Invoke", method_call_invoke, ACCESS_CALL},
	{"io.hostel.Call.Cancel", method_call_cancel, ACCESS_CALL},
	{"io.hostel.Call.Upload", method_call_upload, ACCESS_CALL},
	{NULL, NULL, ACCESS_ADMIN},
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

void call_permission_denied(struct call *call, enum access_role needed)
{
	call_error(call, "io.hostel.Daemon.PermissionDenied",
		   json_pack("{ss,ss,sI}", "method", call->req->method, "needs",
			     access_role_name(needed), "uid",
			     call->conn->cred.valid
				     ? (json_int_t)call->conn->cred.uid
				     : (json_int_t)-1));
}

bool call_may_see(struct call *call, int64_t owner)
{
	if (access_may_see(call->role, &call->conn->cred, owner))
		return true;
	call_permission_denied(call, ACCESS_ADMIN);
	return false;
}

bool call_may_manage(struct call *call, int64_t owner)
{
	if (access_may_manage(call->role, &call->conn->cred, owner))
		return true;
	call_permission_denied(call, ACCESS_ADMIN);
	return false;
}

void dispatch(struct conn *conn, const struct varlink_request *req)
{
	struct call call = {
		.d = conn->d,
		.conn = conn,
		.req = req,
		.role = access_role_of(&conn->d->access, &conn->cred),
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
	if (call.role < m->role) {
		log_info(&conn->d->log,
			 "%s refused to uid %ld (role %s, needs %s)",
			 req->method,
			 conn->cred.valid ? (long)conn->cred.uid : -1L,
			 access_role_name(call.role),
			 access_role_name(m->role));
		call_permission_denied(&call, m->role);
		return;
	}
	m->handler(&call);
	if (!call.replied) {
		log_err(&conn->d->log, "%s returned without a reply; closing",
			req->method);
		conn_close(conn, false);
	}
}
