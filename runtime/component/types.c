/*
 * types.c - what the component AST (types.h) adds to the value types of
 * runtime/value/type.h: the names of sorts, the primitive value type of a
 * binary's type byte, and equality of core function types.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none.
 */
#include "component/internal.h"

const cm_type *cm_prim_of_byte(uint8_t b)
{
	if (b >= 0x73 && b <= 0x7f)
		return cm_prim((cm_type_kind)(0x7f - b));
	if (b == 0x64)
		return cm_prim(CM_ERROR_CONTEXT);
	return NULL;
}

const char *cm_sort_name(cm_sort s)
{
	static const char *const names[CM_NSORTS] = {
		"core func", "core table", "core memory", "core global",
		"core tag",  "core type",  "core module", "core instance",
		"func",	     "value",	   "type",	  "component",
		"instance",
	};
	return s < CM_NSORTS ? names[s] : "?";
}

bool cm_core_functype_equal(const wasm_functype *a, const wasm_functype *b)
{
	if (a == b)
		return true;
	if (a->nparams != b->nparams || a->nresults != b->nresults)
		return false;
	for (uint32_t i = 0; i < a->nparams; i++)
		if (a->params[i] != b->params[i])
			return false;
	for (uint32_t i = 0; i < a->nresults; i++)
		if (a->results[i] != b->results[i])
			return false;
	return true;
}
