/*
 * method-services.c - io.hostel.Service: create, list, inspect, start,
 * stop and remove services (daemon/service.h holds the registry).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - method_service_create: a name of at most SERVICE_NAME_MAX, config
 *    text of at most VARLINK_MESSAGE_MAX, checked (service_parse_limits,
 *    service_wasi_check_config: SERVICE_WASI_MAX_PREOPENS).
 *  - method_service_list, the exports list: one entry per service the
 *    caller may see, per export of a component (at most the component's
 *    length).
 *  The number of services and components is bounded only by who holds
 *  the deploy role (docs/limits.md, "Not bounded yet").
 */
#define _GNU_SOURCE /* asprintf */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "component/wit.h"
#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/durable.h"
#include "daemon/dispatch.h"
#include "daemon/history-hooks.h"
#include "daemon/service.h"
#include "store/components.h"
#include "store/db.h"

#define ERR(name) "io.hostel.Service." name

static const char *str_param(struct call *call, const char *key)
{
	json_t *v = json_object_get(call->req->parameters, key);

	if (!json_is_string(v)) {
		call_invalid_parameter(call, key);
		return NULL;
	}
	return json_string_value(v);
}

/* An optional boolean; -1 after replying InvalidParameter. */
static int bool_param(struct call *call, const char *key, bool dflt)
{
	json_t *v = json_object_get(call->req->parameters, key);

	if (!v || json_is_null(v))
		return dflt;
	if (!json_is_boolean(v)) {
		call_invalid_parameter(call, key);
		return -1;
	}
	return json_is_true(v);
}

/* The named service, or NULL after replying ServiceNotFound. */
static struct service *find_any(struct call *call)
{
	const char *name = str_param(call, "name");
	struct service *s;

	if (!name)
		return NULL;
	s = service_find(call->d, name);
	if (!s)
		call_error(call, ERR("ServiceNotFound"),
			   json_pack("{ss}", "name", name));
	return s;
}

/* The named service if the caller may see it (access.h). */
static struct service *find(struct call *call)
{
	struct service *s = find_any(call);

	return s && call_may_see(call, s->owner) ? s : NULL;
}

/* The named service if the caller may start, stop or remove it. */
static struct service *find_managed(struct call *call)
{
	struct service *s = find_any(call);

	return s && call_may_manage(call, s->owner) ? s : NULL;
}

/*
 * The owner a new service gets: the "owner" parameter (admins may give
 * any uid; others only their own), else nobody for admins and the
 * caller for everyone else.  -2 after replying.
 */
static int64_t owner_param(struct call *call)
{
	json_t *v = json_object_get(call->req->parameters, "owner");
	const struct conn_cred *cred = &call->conn->cred;
	json_int_t n;

	if (!v || json_is_null(v))
		return call->role == ACCESS_ADMIN || !cred->valid
			       ? -1
			       : (int64_t)cred->uid;
	n = json_is_integer(v) ? json_integer_value(v) : -1;
	if (n < 0 || n >= 0xffffffffLL) {
		call_invalid_parameter(call, "owner");
		return -2;
	}
	if (call->role != ACCESS_ADMIN &&
	    !(cred->valid && (json_int_t)cred->uid == n)) {
		call_may_manage(call, n); /* replies PermissionDenied */
		return -2;
	}
	return (int64_t)n;
}

static void reply_info(struct call *call, struct service *s)
{
	json_t *info = service_info_json(s);

	call_reply(call, info ? json_pack("{so}", "service", info) : NULL);
}

static void start_failed(struct call *call, struct service *s, const char *kind)
{
	call_error(call, ERR("StartFailed"),
		   json_pack("{ss,ss,ss}", "name", s->name, "kind", kind,
			     "reason", s->reason));
}

void method_service_create(struct call *call)
{
	static const char *const known[] = {"name",	 "component", "config",
					    "autostart", "start",     "owner",
					    NULL};
	struct component_info ci = {0};
	struct db *db = daemon_history_db(call->d);
	struct service_limits lim;
	const char *name, *ref, *kind = "";
	struct service *s = NULL;
	json_t *config;
	char *config_text;
	char why[320];
	int autostart, start, rc;
	int64_t owner;

	if (!call_check_parameters(call, known) ||
	    !(name = str_param(call, "name")) ||
	    !(ref = str_param(call, "component")) ||
	    (autostart = bool_param(call, "autostart", true)) < 0 ||
	    (start = bool_param(call, "start", true)) < 0 ||
	    (owner = owner_param(call)) < -1)
		return;
	if (!service_name_valid(name)) {
		call_error(call, ERR("InvalidName"),
			   json_pack("{ss}", "name", name));
		return;
	}
	if (!db) {
		call_error(call, "io.hostel.History.Unavailable",
			   json_pack("{ss}", "reason",
				     "the database is not open"));
		return;
	}
	if (components_get(db, ref, &ci, NULL, NULL)) {
		call_error(call, "io.hostel.Component.ComponentNotFound",
			   json_pack("{ss}", "component", ref));
		return;
	}
	config = json_object_get(call->req->parameters, "config");
	if (config && !json_is_null(config) && !json_is_object(config)) {
		component_info_clear(&ci);
		call_invalid_parameter(call, "config");
		return;
	}
	config_text = config && json_is_object(config)
			      ? json_dumps(config, JSON_COMPACT)
			      : strdup("{}");
	if (!config_text) {
		component_info_clear(&ci);
		call_reply(call, NULL);
		return;
	}
	if (service_parse_limits(config_text, &lim, why, sizeof(why))) {
		call_error(call, ERR("InvalidConfig"),
			   json_pack("{ss}", "reason", why));
		goto out;
	}
	rc = service_create(call->d, name, ci.sha256, config_text,
			    autostart != 0, owner, NULL, &s);
	if (rc == -EEXIST) {
		call_error(call, ERR("ServiceExists"),
			   json_pack("{ss}", "name", name));
		goto out;
	}
	if (rc == -EINVAL) {
		call_error(call, ERR("InvalidConfig"),
			   json_pack("{ss}", "reason", db_errmsg(db)));
		goto out;
	}
	if (rc) {
		call_error(call, "io.hostel.History.Unavailable",
			   json_pack("{ss}", "reason",
				     rc == -ENOMEM ? "out of memory"
						   : db_errmsg(db)));
		goto out;
	}
	log_info(&call->d->log, "service %s: created (component %s)", name,
		 ci.sha256);
	if (start && service_start(s, &kind) < 0)
		start_failed(call, s, kind);
	else
		reply_info(call, s);
out:
	free(config_text);
	component_info_clear(&ci);
}

static int by_name(const void *a, const void *b)
{
	const struct service *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

void method_service_list(struct call *call)
{
	static const char *const known[] = {NULL};
	struct service **v = NULL;
	size_t n = 0, i;
	json_t *arr;

	if (!call_check_parameters(call, known))
		return;
	for (struct service *s = call->d->services ? call->d->services->head
						   : NULL;
	     s; s = s->next)
		if (access_may_see(call->role, &call->conn->cred, s->owner))
			n++;
	v = calloc(n ? n : 1, sizeof(*v));
	arr = json_array();
	if (!v || !arr) {
		free(v);
		json_decref(arr);
		call_reply(call, NULL);
		return;
	}
	i = 0;
	for (struct service *s = n ? call->d->services->head : NULL; s && i < n;
	     s = s->next)
		if (access_may_see(call->role, &call->conn->cred, s->owner))
			v[i++] = s;
	qsort(v, n, sizeof(*v), by_name);
	for (i = 0; i < n; i++)
		if (json_array_append_new(arr, service_info_json(v[i]))) {
			json_decref(arr);
			arr = NULL;
			break;
		}
	free(v);
	call_reply(call, arr ? json_pack("{so}", "services", arr) : NULL);
}

static int add_function(json_t *arr, const char *iface, const char *name,
			const cm_type *ft)
{
	json_t *params = json_array();
	char *full = NULL;
	int rc;

	if (!params)
		return -1;
	for (uint32_t i = 0; i < ft->u.func.nparams; i++)
		json_array_append_new(
			params, json_string(ft->u.func.params[i].label.ptr));
	if (iface && asprintf(&full, "%s#%s", iface, name) < 0) {
		json_decref(params);
		return -1;
	}
	rc = json_array_append_new(arr, json_pack("{ss,so,sb}", "name",
						  full ? full : name, "params",
						  params, "result",
						  ft->u.func.result != NULL));
	free(full);
	return rc;
}

/* The functions a component exports, root and one instance deep. */
static json_t *functions(const cm_component *c)
{
	json_t *arr = json_array();

	for (uint32_t i = 0; arr && i < cm_component_nexports(c); i++) {
		const cm_export *e = cm_component_export(c, i);
		const cm_type *t = e->type.type;

		if (!t)
			continue;
		if (e->type.sort == CM_SORT_FUNC && t->kind == CM_FUNC) {
			add_function(arr, NULL, e->name.str.ptr, t);
		} else if (e->type.sort == CM_SORT_INSTANCE &&
			   t->kind == CM_INSTANCE) {
			for (uint32_t k = 0; k < t->u.comp.nexports; k++) {
				const cm_extern_decl *x = &t->u.comp.exports[k];

				if (x->type.sort == CM_SORT_FUNC &&
				    x->type.type &&
				    x->type.type->kind == CM_FUNC)
					add_function(arr, e->name.str.ptr,
						     x->name.str.ptr,
						     x->type.type);
			}
		}
	}
	return arr;
}

void method_service_inspect(struct call *call)
{
	static const char *const known[] = {"name", NULL};
	struct db *db = daemon_history_db(call->d);
	cm_component *c = NULL, *own = NULL;
	struct service *s;
	json_t *funcs;
	char *wit = NULL;

	if (!call_check_parameters(call, known) || !(s = find(call)))
		return;
	c = s->comp;
	if (!c && db) {
		void *blob = NULL;
		size_t len = 0;
		wasm_error werr;

		if (components_get(db, s->component, NULL, &blob, &len) == 0 &&
		    cm_component_load(blob, len, &own, &werr) == 0)
			c = own;
		free(blob);
	}
	funcs = c ? functions(c) : json_array();
	if (c)
		wit = cm_wit_world(c, s->name);
	call_reply(call,
		   json_pack("{so,so,ss}", "service", service_info_json(s),
			     "functions", funcs, "wit", wit ? wit : ""));
	free(wit);
	if (own)
		cm_component_free(own);
}

void method_service_start(struct call *call)
{
	static const char *const known[] = {"name", NULL};
	const char *kind = "";
	struct service *s;

	if (!call_check_parameters(call, known) || !(s = find_managed(call)))
		return;
	if (service_start(s, &kind) < 0)
		start_failed(call, s, kind);
	else
		reply_info(call, s);
}

void method_service_stop(struct call *call)
{
	static const char *const known[] = {"name", NULL};
	struct service *s;

	if (!call_check_parameters(call, known) || !(s = find_managed(call)))
		return;
	service_stop(s, "the service was stopped");
	reply_info(call, s);
}

void method_service_snapshot(struct call *call)
{
	static const char *const known[] = {"name", NULL};
	struct service *s;
	char why[256];
	uint64_t bytes, ms;

	if (!call_check_parameters(call, known) || !(s = find_managed(call)))
		return;
	if (service_snapshot(s, "request", &bytes, &ms, why, sizeof(why))) {
		call_error(call, ERR("SnapshotFailed"),
			   json_pack("{ss,ss}", "name", s->name, "reason",
				     why));
		return;
	}
	call_reply(call, json_pack("{sI,sI}", "bytes", (json_int_t)bytes,
				   "ms", (json_int_t)ms));
}

void method_service_remove(struct call *call)
{
	static const char *const known[] = {"name", NULL};
	struct service *s;
	int rc;

	if (!call_check_parameters(call, known) || !(s = find_managed(call)))
		return;
	if (s->source) {
		call_error(call, ERR("ServiceManaged"),
			   json_pack("{ss,ss}", "name", s->name, "file",
				     s->source));
		return;
	}
	rc = service_remove(s);
	if (rc)
		call_error(call, "io.hostel.History.Unavailable",
			   json_pack("{ss}", "reason", strerror(-rc)));
	else
		call_reply(call, json_object());
}
