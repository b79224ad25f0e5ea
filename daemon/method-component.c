/*
 * method-component.c - io.hostel.Component: add, list, inspect and
 * remove component binaries.  A binary is decoded and validated before
 * it is stored, so the database holds only loadable components; the
 * bytes arrive in base64 inside one varlink message (16 MiB at most).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - method_component_add: the decoded bytes, 3/4 of the request's
 *    base64 (at most VARLINK_MESSAGE_MAX, 16 MiB), and the component
 *    loaded from them (the decoders' bounds by input length); the
 *    store refuses a component over COMPONENT_SIZE_MAX.
 *  - method_component_list: as many as the database holds, one reply.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "component/component.h"
#include "component/wit.h"
#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "daemon/history-hooks.h"
#include "daemon/service.h"
#include "ipc/value-json.h"
#include "store/components.h"
#include "store/db.h"

#define ERR(name) "io.hostel.Component." name

static json_t *time_json(int64_t ns)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	char buf[48];

	if (!gmtime_r(&t, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, sizeof(buf), "%lld", (long long)ns);
	return json_string(buf);
}

static json_t *info_json(const struct component_info *ci)
{
	return json_pack("{ss,ss?,sI,so}", "sha256", ci->sha256, "name",
			 ci->name, "size", (json_int_t)ci->size, "added",
			 time_json(ci->added));
}

static struct db *need_db(struct call *call)
{
	struct db *db = daemon_history_db(call->d);

	if (!db)
		call_error(call, "io.hostel.History.Unavailable",
			   json_pack("{ss}", "reason",
				     "the database is not open"));
	return db;
}

/* A string parameter, or NULL after replying InvalidParameter. */
static const char *str_param(struct call *call, const char *key, bool opt)
{
	json_t *v = json_object_get(call->req->parameters, key);

	if ((!v || json_is_null(v)) && opt)
		return "";
	if (!json_is_string(v)) {
		call_invalid_parameter(call, key);
		return NULL;
	}
	return json_string_value(v);
}

void method_component_add(struct call *call)
{
	static const char *const known[] = {"bytes", "name", NULL};
	const char *b64, *name;
	struct db *db;
	uint8_t *bytes = NULL;
	size_t len = 0;
	cm_component *c = NULL;
	wasm_error werr;
	char sha[SHA256_HEX_SIZE];
	bool created = false;
	int rc;

	if (!call_check_parameters(call, known) ||
	    !(b64 = str_param(call, "bytes", false)) ||
	    !(name = str_param(call, "name", true)) || !(db = need_db(call)))
		return;
	rc = value_base64_decode(b64, strlen(b64), &bytes, &len);
	if (rc == -2) {
		call_reply(call, NULL);
		return;
	}
	if (rc) {
		call_error(call, VARLINK_ERROR_INVALID_PARAMETER,
			   json_pack("{ss,ss}", "parameter", "bytes", "reason",
				     "not base64"));
		return;
	}
	memset(&werr, 0, sizeof(werr));
	if (cm_component_load(bytes, len, &c, &werr)) {
		free(bytes);
		call_error(call, ERR("InvalidComponent"),
			   json_pack("{ss,ss,sI}", "kind",
				     werr.kind == WASM_ERR_MALFORMED
					     ? "malformed"
					     : "invalid",
				     "reason", werr.msg, "offset",
				     (json_int_t)werr.offset));
		return;
	}
	cm_component_free(c);
	rc = components_add(db, bytes, len, *name ? name : NULL, sha, &created);
	free(bytes);
	switch (rc) {
	case 0:
		log_info(&call->d->log, "component %s%s%s (%zu bytes) %s", sha,
			 *name ? " " : "", name, len,
			 created ? "added" : "already known");
		call_reply(call,
			   json_pack("{ss,sb,sI}", "sha256", sha, "created",
				     created, "size", (json_int_t)len));
		return;
	case -EEXIST:
		call_error(call, ERR("NameConflict"),
			   json_pack("{ss,ss}", "name", name, "reason",
				     db_errmsg(db)));
		return;
	case -EINVAL:
		call_error(call, VARLINK_ERROR_INVALID_PARAMETER,
			   json_pack("{ss,ss}", "parameter", "name", "reason",
				     db_errmsg(db)));
		return;
	default:
		call_error(call, "io.hostel.History.Unavailable",
			   json_pack("{ss}", "reason", db_errmsg(db)));
	}
}

static int list_one(void *arg, const struct component_info *ci)
{
	return json_array_append_new(arg, info_json(ci)) ? -ENOMEM : 0;
}

void method_component_list(struct call *call)
{
	static const char *const known[] = {NULL};
	struct db *db;
	json_t *arr;

	if (!call_check_parameters(call, known) || !(db = need_db(call)))
		return;
	arr = json_array();
	if (arr && components_list(db, list_one, arr)) {
		json_decref(arr);
		call_error(call, "io.hostel.History.Unavailable",
			   json_pack("{ss}", "reason", db_errmsg(db)));
		return;
	}
	call_reply(call, arr ? json_pack("{so}", "components", arr) : NULL);
}

/* Names of the services using component sha (a new array). */
static json_t *users(struct daemon *d, const char *sha)
{
	json_t *arr = json_array();

	if (!d->services)
		return arr;
	for (struct service *s = d->services->head; arr && s; s = s->next)
		if (!strcmp(s->component, sha) &&
		    json_array_append_new(arr, json_string(s->name))) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

void method_component_inspect(struct call *call)
{
	static const char *const known[] = {"component", NULL};
	struct component_info ci = {0};
	const char *ref;
	struct db *db;
	void *blob = NULL;
	size_t len = 0;
	cm_component *c = NULL;
	wasm_error werr;
	char *wit = NULL;
	int rc;

	if (!call_check_parameters(call, known) ||
	    !(ref = str_param(call, "component", false)) ||
	    !(db = need_db(call)))
		return;
	rc = components_get(db, ref, &ci, &blob, &len);
	if (rc) {
		call_error(call, ERR("ComponentNotFound"),
			   json_pack("{ss}", "component", ref));
		return;
	}
	memset(&werr, 0, sizeof(werr));
	if (cm_component_load(blob, len, &c, &werr) == 0) {
		wit = cm_wit_world(c, "component");
		cm_component_free(c);
	}
	free(blob);
	call_reply(call, json_pack("{so,ss,so}", "component", info_json(&ci),
				   "wit", wit ? wit : "", "services",
				   users(call->d, ci.sha256)));
	free(wit);
	component_info_clear(&ci);
}

void method_component_remove(struct call *call)
{
	static const char *const known[] = {"component", NULL};
	struct component_info ci = {0};
	const char *ref;
	struct db *db;
	json_t *used;
	int rc;

	if (!call_check_parameters(call, known) ||
	    !(ref = str_param(call, "component", false)) ||
	    !(db = need_db(call)))
		return;
	if (components_get(db, ref, &ci, NULL, NULL)) {
		call_error(call, ERR("ComponentNotFound"),
			   json_pack("{ss}", "component", ref));
		return;
	}
	used = users(call->d, ci.sha256);
	if (used && json_array_size(used)) {
		call_error(call, ERR("ComponentInUse"),
			   json_pack("{ss,so}", "component", ci.sha256,
				     "services", used));
		component_info_clear(&ci);
		return;
	}
	json_decref(used);
	rc = components_remove(db, ci.sha256);
	if (rc == 0 || rc == -ENOENT)
		call_reply(call, json_object());
	else if (rc == -EBUSY)
		call_error(call, ERR("ComponentInUse"),
			   json_pack("{ss,s[]}", "component", ci.sha256,
				     "services"));
	else
		call_error(call, "io.hostel.History.Unavailable",
			   json_pack("{ss}", "reason", db_errmsg(db)));
	component_info_clear(&ci);
}
