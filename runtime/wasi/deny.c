/*
 * deny.c - deny-by-default for the WASI interfaces this host does not
 * serve (wasi:sockets, wasi:http, the parts of 0.3 not yet written, and
 * any function a newer minor version adds): the linker's fallback for
 * "wasi:" imports (run/instance.h cm_linker_define_fallback), so that a
 * component targeting a whole standard world links and runs, and what
 * it may not do answers with the interface's own error instead of a
 * link error.
 *
 * Contract, by the function's result type (cm_host_call_type):
 *  - no result: nothing happens (a setter, a drop).
 *  - result<T, E> with E an enum or variant that has one of the cases
 *    of DENIED (in that order: access-denied, not-permitted, forbidden,
 *    access, not-supported, unsupported): err(that case) (a payload it
 *    has is its type's default, below).  wasi:sockets answers
 *    access-denied, wasi:filesystem access or not-permitted, wasi:http
 *    types forbidden.
 *  - result<T, E> without such a case, a stream, a future, an
 *    error-context anywhere in the result: a trap "wasi: NAME of
 *    INSTANCE is not provided by this host" (nothing truthful to
 *    answer).
 *  - option<T>: none.
 *  - anything else: its default: false, 0, "", an empty list, case 0 of
 *    a variant or enum, a record of defaults, no flags, and for own<R> a
 *    handle of the fallback's resource type R with rep 0 (a resource
 *    that is nothing: its methods answer by these same rules).
 * No capability is granted: a service that needs sockets or http gets
 * the denial.  Which capabilities a service has will be part of its
 * configuration, as preopens are.
 *
 * Allocations sized by a guest or a client (issue 18 audit): the result
 * value: its size is the import's declared result type (the
 * component's length), never a guest's argument; fixed-length lists
 * (list<T, N>) are filled, N at most the type's bound.
 */
#include <string.h>

#include "wasi/internal.h"

static const char *const DENIED[] = {
	"access-denied", "not-permitted", "forbidden",
	"access",	 "not-supported", "unsupported",
};

#define NDENIED (sizeof DENIED / sizeof DENIED[0])
/* Nesting of defaults (a type's depth is bounded by the validator). */
#define DEFAULT_DEPTH 64

static const cm_str *case_label(const cm_type *t, uint32_t i)
{
	if (t->kind == CM_ENUM)
		return i < t->u.enm.n ? &t->u.enm.labels[i] : NULL;
	if (t->kind == CM_VARIANT)
		return i < t->u.variant.n ? &t->u.variant.fields[i].label
					  : NULL;
	return NULL;
}

/* The case of e that says "denied", or -1. */
static int denied_case(const cm_type *e)
{
	uint32_t n;

	if (e == NULL || (e->kind != CM_ENUM && e->kind != CM_VARIANT))
		return -1;
	n = e->kind == CM_ENUM ? e->u.enm.n : e->u.variant.n;
	for (size_t d = 0; d < NDENIED; d++)
		for (uint32_t i = 0; i < n; i++) {
			const cm_str *l = case_label(e, i);

			if (l != NULL && l->len == strlen(DENIED[d]) &&
			    memcmp(l->ptr, DENIED[d], l->len) == 0)
				return (int)i;
		}
	return -1;
}

/* 0, -1 out of memory, -2 no default exists (a stream, ...). */
static int default_value(const cm_type *t, cm_val *out, unsigned depth);

static int case_value(const cm_type *t, uint32_t i, cm_val *out,
		      unsigned depth)
{
	const cm_type *p = cm_type_case(t, i);

	if (p == NULL) {
		*out = cm_val_case(t->kind, i);
		return 0;
	}
	if (cm_val_case_payload(out, t->kind, i))
		return -1;
	return default_value(p, out->u.variant.payload, depth + 1);
}

static int seq_value(const cm_type *t, uint32_t n, cm_val *out, unsigned depth)
{
	if (cm_val_seq(out, t->kind, n))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		const cm_type *f = t->kind == CM_LIST ? t->u.list.elem
						      : cm_type_field(t, i);
		int rc = default_value(f, &out->u.list.elems[i], depth + 1);

		if (rc)
			return rc;
	}
	return 0;
}

static int default_value(const cm_type *t, cm_val *out, unsigned depth)
{
	if (depth > DEFAULT_DEPTH)
		return -2;
	switch (t->kind) {
	case CM_BOOL:
		*out = cm_val_bool(false);
		return 0;
	case CM_S8:
	case CM_S16:
	case CM_S32:
	case CM_S64:
		*out = cm_val_s64(0);
		out->kind = t->kind;
		return 0;
	case CM_U8:
	case CM_U16:
	case CM_U32:
	case CM_U64:
		*out = cm_val_u64(0);
		out->kind = t->kind;
		return 0;
	case CM_F32:
		*out = cm_val_f32(0);
		return 0;
	case CM_F64:
		*out = cm_val_f64(0);
		return 0;
	case CM_CHAR:
		*out = cm_val_char(0);
		return 0;
	case CM_STRING:
		return cm_val_string(out, "", 0) ? -1 : 0;
	case CM_LIST:
		/* list<u8>/list<s8> live in byte form (val.h) */
		if (cm_type_is_bytes(t))
			return cm_val_bytes(out, NULL, 0) ? -1 : 0;
		return seq_value(t, t->u.list.len, out, depth);
	case CM_MAP:
		return cm_val_seq(out, CM_MAP, 0) ? -1 : 0;
	case CM_RECORD:
	case CM_TUPLE:
		return seq_value(t, cm_type_nfields(t), out, depth);
	case CM_VARIANT:
	case CM_ENUM:
	case CM_OPTION:
	case CM_RESULT:
		return case_value(t, 0, out, depth);
	case CM_FLAGS:
		*out = cm_val_flags(0);
		return 0;
	case CM_OWN:
		/* rt NULL: the lowering resolves the importer's type */
		*out = cm_val_handle(CM_OWN, NULL, 0);
		return 0;
	default:
		return -2; /* borrow, stream, future, error-context */
	}
}

int wasi_deny(cm_host_call *call, void *env, const cm_val *args,
	      uint32_t nargs, cm_val *res, uint32_t nres)
{
	const cm_type *ft = cm_host_call_type(call), *rt;
	const char *instance = NULL, *name;
	int rc = -2, c;

	(void)env;
	(void)args;
	(void)nargs;
	name = cm_host_call_name(call, &instance);
	if (nres == 0 || (rt = ft->u.func.result) == NULL)
		return 0;
	if (rt->kind == CM_RESULT) {
		c = denied_case(rt->u.result.err);
		if (c >= 0 && cm_val_case_payload(&res[0], CM_RESULT, 1) == 0)
			rc = case_value(rt->u.result.err, (uint32_t)c,
					res[0].u.variant.payload, 0);
		else if (c >= 0)
			rc = -1;
	} else if (rt->kind == CM_OPTION) {
		res[0] = cm_val_case(CM_OPTION, 0);
		rc = 0;
	} else {
		rc = default_value(rt, &res[0], 0);
	}
	if (rc == 0)
		return 0;
	cm_val_free(&res[0]);
	if (rc == -1)
		return cm_host_call_trap(call, "wasi: out of memory");
	return cm_host_call_trap(call,
				 "wasi: %s of %s is not provided by this host",
				 name ? name : "?", instance ? instance : "?");
}
