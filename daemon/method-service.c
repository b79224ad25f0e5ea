/*
 * method-service.c - org.varlink.service: GetInfo and
 * GetInterfaceDescription, the introspection every varlink service
 * offers.  The interface list and texts come from ipc/idl.h, so what is
 * listed is exactly what is described.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: the
 * reply lists the daemon's own interfaces.
 */
#include "config.h"

#include "daemon/daemon.h"
#include "daemon/dispatch.h"
#include "ipc/idl.h"

#define HOSTEL_VENDOR  "hostel"
#define HOSTEL_PRODUCT "hosteld"
/* AC_INIT has no home page; the project's address is its issue URL. */
#define HOSTEL_URL (PACKAGE_URL[0] ? PACKAGE_URL : PACKAGE_BUGREPORT)

void method_service_get_info(struct call *call)
{
	static const char *const known[] = {NULL};
	json_t *interfaces;

	if (!call_check_parameters(call, known))
		return;
	interfaces = json_array();
	for (const struct idl_interface *i = idl_interfaces;
	     interfaces && i->name; i++)
		if (json_array_append_new(interfaces, json_string(i->name))) {
			json_decref(interfaces);
			interfaces = NULL;
		}
	if (!interfaces) {
		call_reply(call, NULL);
		return;
	}
	call_reply(call, json_pack("{ss,ss,ss,ss,so}", "vendor", HOSTEL_VENDOR,
				   "product", HOSTEL_PRODUCT, "version",
				   PACKAGE_VERSION, "url", HOSTEL_URL,
				   "interfaces", interfaces));
}

void method_service_get_interface_description(struct call *call)
{
	static const char *const known[] = {"interface", NULL};
	const struct idl_interface *iface;
	json_t *name;

	if (!call_check_parameters(call, known))
		return;
	name = json_object_get(call->req->parameters, "interface");
	if (!json_is_string(name)) {
		call_invalid_parameter(call, "interface");
		return;
	}
	iface = idl_find(json_string_value(name));
	if (!iface) {
		call_error(call, VARLINK_ERROR_INTERFACE_NOT_FOUND,
			   json_pack("{sO}", "interface", name));
		return;
	}
	call_reply(call, json_pack("{ss}", "description", iface->text));
}
