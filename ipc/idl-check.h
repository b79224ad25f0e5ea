/*
 * idl-check.h - does a message conform to its interface description?
 * The types of the varlink IDL (https://varlink.org/Interface-Definition)
 * checked against JSON: a method's parameters (in) or reply (out), an
 * error's parameters.
 *
 * Contract:
 *  - bool, int, float, string and object are JSON true/false, an
 *    integer, a number, a string and an object; ?T is also absent or
 *    null; []T an array of T; [string]T an object of T; a struct has
 *    exactly its fields (none unknown, every non-optional one present);
 *    an enum is one of its names as a string; a named type is looked up
 *    in the same description.
 *  - The description is read as given (idl_parse() is the grammar's
 *    checker; an unparsable type here is an error, never a crash).
 *  - Returns 0 when the message conforms, -EINVAL with `why` saying
 *    where it does not (a path like "result.items[2].name: expected
 *    int, found string"), -ENOENT when the member is not declared.
 *
 * Used by tests/idl-conform.c over the daemon's replies; it allocates
 * nothing.
 */
#ifndef HOSTEL_IPC_IDL_CHECK_H
#define HOSTEL_IPC_IDL_CHECK_H

#include <stddef.h>

#include <jansson.h>

enum idl_check_what {
	IDL_CHECK_IN,	 /* a method's parameters */
	IDL_CHECK_OUT,	 /* a method's reply */
	IDL_CHECK_ERROR, /* an error's parameters */
};

/*
 * Check `params` (an object, or NULL for none) against member `name`
 * (unqualified: "Invoke", "ServiceNotFound") of the description `text`.
 */
int idl_check(const char *text, enum idl_check_what what, const char *name,
	      const json_t *params, char *why, size_t whylen);

#endif
