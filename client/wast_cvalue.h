/*
 * wast_cvalue.h - component values of the JSON test scripts
 * (cm-testsuite/README.md "Values"), converted to cm_val against the
 * type the function declares.
 *
 * Contract: every JSON value is {"type": T, "value": V}; T must name the
 * declared type's kind (tuple, record, list, ...; a map is written as a
 * list of tuples); case, field and flag *names* are resolved against the
 * declared type.  Results are compared by converting the expected JSON
 * the same way and comparing with cm_val_equal (floats by bits, flags as
 * sets).  Nothing aborts on bad JSON: errors come back as messages.
 */
#ifndef HOSTEL_CLIENT_WAST_CVALUE_H
#define HOSTEL_CLIENT_WAST_CVALUE_H

#include <jansson.h>
#include <stddef.h>

#include "value/val.h"
#include "component/types.h"

/* 0 and *out, or -1 with a reason in why[0..n) (*out then freeable). */
int wast_cvalue_parse(json_t *j, const cm_type *t, cm_val *out, char *why,
		      size_t n);

#endif
