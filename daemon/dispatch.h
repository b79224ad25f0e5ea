/*
 * dispatch.h - the methods hosteld answers and how a call reaches one.
 *
 * daemon_methods[] is the one table of methods; each entry names a
 * method of an interface described in ipc/ (a test checks that table and
 * IDL agree) and its handler.  A handler validates its parameters, does
 * its work and replies exactly once through call_reply() / call_error(),
 * which honour "oneway" (no reply at all).  Later interfaces add rows.
 * Each row names the least role (daemon/access.h) a caller needs; a
 * caller below it gets io.hostel.Daemon.PermissionDenied before the
 * handler runs.  Handlers check service ownership themselves.
 */
#ifndef HOSTEL_DAEMON_DISPATCH_H
#define HOSTEL_DAEMON_DISPATCH_H

#include <stdbool.h>

#include <jansson.h>

#include "daemon/access.h"
#include "ipc/varlink.h"

struct conn;
struct daemon;

struct call {
	struct daemon *d;
	struct conn *conn;
	const struct varlink_request *req;
	enum access_role role; /* the caller's */
	bool replied;
};

struct method {
	const char *name; /* qualified: "io.hostel.Daemon.Status" */
	void (*handler)(struct call *call);
	enum access_role role; /* the least role that may call it */
};

/* Ends with a {NULL, NULL} entry. */
extern const struct method daemon_methods[];

const struct method *method_find(const char *name);

/* Route a parsed call to its handler, or answer the standard errors. */
void dispatch(struct conn *conn, const struct varlink_request *req);

/*
 * Reply with parameters (consumed; NULL means the handler ran out of
 * memory and the connection is dropped).
 */
void call_reply(struct call *call, json_t *parameters);
void call_error(struct call *call, const char *error, json_t *parameters);
void call_invalid_parameter(struct call *call, const char *parameter);

/*
 * Check the call's parameters against the names a method takes
 * (NULL-terminated); on an unknown one, reply InvalidParameter naming it
 * and return false.
 */
bool call_check_parameters(struct call *call, const char *const *known);

/*
 * Whether the caller may see / manage a service of this owner (< 0:
 * none); if not, reply PermissionDenied and return false.
 */
bool call_may_see(struct call *call, int64_t owner);
/* Reply io.hostel.Daemon.PermissionDenied (the caller needs `needed`). */
void call_permission_denied(struct call *call, enum access_role needed);
bool call_may_manage(struct call *call, int64_t owner);

/*
 * The handler answers later: it has taken the call over and replies
 * through conn_send() (varlink_reply_new(..., true) while a stream
 * continues), then ends with conn_release().  The connection reads no
 * further call meanwhile (see conn_hold() for the callbacks).
 */
void call_hold(struct call *call, void (*on_drain)(void *arg),
	       void (*on_free)(void *arg), void *arg);

/* Handlers, one file per interface. */
void method_service_get_info(struct call *call);
void method_service_get_interface_description(struct call *call);
void method_daemon_status(struct call *call);
void method_daemon_get_metrics(struct call *call);
void method_history_read(struct call *call);
void method_history_stats(struct call *call);
void method_history_prune(struct call *call);
void method_component_add(struct call *call);
void method_component_list(struct call *call);
void method_component_inspect(struct call *call);
void method_component_remove(struct call *call);
void method_service_create(struct call *call);
void method_service_list(struct call *call);
void method_service_inspect(struct call *call);
void method_service_start(struct call *call);
void method_service_stop(struct call *call);
void method_service_snapshot(struct call *call);
void method_service_remove(struct call *call);
void method_call_invoke(struct call *call);
void method_call_cancel(struct call *call);

#endif
