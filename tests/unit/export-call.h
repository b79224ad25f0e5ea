/*
 * export-call.h - for Check tests: call an export of an instance (in
 * interface iface, NULL: the root) and get its result, failing the test
 * when there is no such export or the call fails.  Included by one test
 * file each (through live-store.h, or alone).
 */
#ifndef HOSTEL_TESTS_EXPORT_CALL_H
#define HOSTEL_TESTS_EXPORT_CALL_H

#include <check.h>
#include <string.h>

#include "run/instance.h"

static cm_val export_call(cm_store *s, cm_component_instance *inst,
			  const char *iface, const char *name,
			  const cm_val *args, uint32_t nargs)
{
	cm_func *f = cm_instance_export(inst, iface, name);
	cm_val res[1];
	uint32_t nres = 0;
	cm_error err;

	ck_assert_msg(f != NULL, "no export %s", name);
	memset(res, 0, sizeof res);
	if (cm_invoke(s, f, args, nargs, res, &nres, &err))
		ck_abort_msg("%s: %s", name, err.msg);
	return res[0];
}

#endif
