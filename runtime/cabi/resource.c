/*
 * resource.c - own and borrow handles as values (definitions.py lift_own,
 * lift_borrow, lower_own, lower_borrow) and the resource built-ins
 * canon_resource_new / rep / drop.
 *
 * Contract (cabi.h, digest 2.8): lifting an own removes it from the
 * table (ownership moves with the value); lifting a borrow leaves it and
 * lends it to the current Subtask; lowering an own adds a handle; lowering
 * a borrow passes the bare rep to the implementing instance and otherwise
 * adds a borrow handle counted in the receiving Task's scope.  Checks come
 * in the reference's order, each with the suite's message.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none here:
 * handles go into the instance's table (table.c, max_handles) and
 * borrows lifted into a subtask's lenders list (table.c).
 */
#include "cabi/internal.h"

const cabi_resource_type *cabi_handle_rt(cabi_cx *cx, const cm_type *t)
{
	if (cx->hooks == NULL || cx->hooks->resource_type == NULL)
		return NULL;
	return cx->hooks->resource_type(cx->inst, cm_handle_resource(t));
}

/* The handle's runtime type for lowering: the type's, else the value's. */
static int lower_rt(cabi_cx *cx, const cm_val *v, const cm_type *t,
		    const cabi_resource_type **rt)
{
	if (v->kind != t->kind)
		return cabi_bad_value(cx, "expected %s, found %s",
				      cm_type_kind_name(t->kind),
				      cm_type_kind_name(v->kind));
	*rt = cabi_handle_rt(cx, t);
	if (*rt == NULL)
		*rt = v->u.handle.rt;
	if (*rt == NULL)
		return cabi_bad_value(cx, "resource handle without a type");
	if (cx->table == NULL)
		return cabi_bad_value(cx, "no handle table");
	return 0;
}

int cabi_lift_own(cabi_cx *cx, uint32_t i, const cm_type *t, cm_val *out)
{
	const cabi_resource_type *rt = cabi_handle_rt(cx, t);
	cabi_resource_handle *h;
	cabi_resource_handle copy;

	h = cabi_table_get_resource(cx->table, i, rt, &cx->err);
	if (h == NULL)
		return -1;
	/* checked before the removal: after a trap the instance is
	 * poisoned, so the order is not observable, and the table stays
	 * consistent for the lenders that still point at this slot */
	if (h->num_lends != 0)
		return cabi_trap(cx, CABI_MSG_OWN_BORROWED);
	if (!h->own)
		return cabi_trap(
			cx,
			"handle index %u " CABI_MSG_WRONG_TYPE
			", expected own handle but found borrow handle",
			i);
	copy = *h;
	if (cabi_table_remove(cx->table, i, NULL, &cx->err))
		return -1;
	*out = cm_val_handle(CM_OWN, copy.rt, copy.rep);
	return 0;
}

int cabi_lift_borrow(cabi_cx *cx, uint32_t i, const cm_type *t, cm_val *out)
{
	const cabi_resource_type *rt = cabi_handle_rt(cx, t);
	cabi_resource_handle *h;

	h = cabi_table_get_resource(cx->table, i, rt, &cx->err);
	if (h == NULL)
		return -1;
	*out = cm_val_handle(CM_BORROW, h->rt, h->rep);
	if (cx->lenders != NULL) {
		if (cx->lenders->table == NULL)
			cx->lenders->table = cx->table;
		if (cabi_lenders_add(cx->lenders, i, &cx->err))
			return -1;
	}
	return 0;
}

int cabi_lower_own(cabi_cx *cx, const cm_val *v, const cm_type *t,
		   uint32_t *index)
{
	const cabi_resource_type *rt;
	cabi_elem e;

	if (lower_rt(cx, v, t, &rt))
		return -1;
	memset(&e, 0, sizeof e);
	e.kind = CABI_ELEM_RESOURCE;
	e.u.res.rt = rt;
	e.u.res.rep = v->u.handle.rep;
	e.u.res.own = true;
	return cabi_table_add(cx->table, &e, index, &cx->err);
}

int cabi_lower_borrow(cabi_cx *cx, const cm_val *v, const cm_type *t,
		      uint32_t *index)
{
	const cabi_resource_type *rt;
	cabi_elem e;

	if (lower_rt(cx, v, t, &rt))
		return -1;
	if (cx->inst != NULL && rt->impl == cx->inst) {
		*index = (uint32_t)v->u.handle.rep;
		return 0;
	}
	memset(&e, 0, sizeof e);
	e.kind = CABI_ELEM_RESOURCE;
	e.u.res.rt = rt;
	e.u.res.rep = v->u.handle.rep;
	e.u.res.own = false;
	e.u.res.borrow_scope = cx->borrow_scope;
	if (cabi_table_add(cx->table, &e, index, &cx->err))
		return -1;
	if (cx->borrow_scope != NULL)
		cx->borrow_scope->num_borrows++;
	return 0;
}

/* ---- built-ins ------------------------------------------------------------
 */

int canon_resource_new(cabi_cx *cx, const cabi_resource_type *rt, uint64_t rep,
		       uint32_t *index)
{
	cabi_elem e;

	if (rt == NULL || cx->table == NULL)
		return cabi_bad_value(cx, "resource.new without a type/table");
	memset(&e, 0, sizeof e);
	e.kind = CABI_ELEM_RESOURCE;
	e.u.res.rt = rt;
	e.u.res.rep = rep;
	e.u.res.own = true;
	return cabi_table_add(cx->table, &e, index, &cx->err);
}

int canon_resource_rep(cabi_cx *cx, const cabi_resource_type *rt, uint32_t i,
		       uint64_t *rep)
{
	cabi_resource_handle *h;

	h = cabi_table_get_resource(cx->table, i, rt, &cx->err);
	if (h == NULL)
		return -1;
	*rep = h->rep;
	return 0;
}

static int run_dtor(cabi_cx *cx, const cabi_resource_type *rt, uint64_t rep)
{
	wasm_val arg;

	if (cx->hooks != NULL && cx->hooks->run_dtor != NULL)
		return cx->hooks->run_dtor(cx, rt, rep);
	if (rt->dtor != NULL) {
		const wasm_functype *ft = wasm_func_type(rt->dtor);

		memset(&arg, 0, sizeof arg);
		if (ft->nparams != 1)
			return cabi_bad_value(cx, "destructor has the wrong "
						  "type");
		arg.type = ft->params[0];
		if (arg.type == WASM_I64)
			arg.u.i64 = rep;
		else
			arg.u.i32 = (uint32_t)rep;
		return cabi_call_guest(cx, rt->dtor, &arg, 1, NULL, 0);
	}
	if (rt->host_dtor != NULL)
		rt->host_dtor(rt->host_env, rep);
	return 0;
}

int canon_resource_drop(cabi_cx *cx, const cabi_resource_type *rt, uint32_t i)
{
	cabi_resource_handle *h;
	cabi_resource_handle copy;

	h = cabi_table_get_resource(cx->table, i, rt, &cx->err);
	if (h == NULL)
		return -1;
	if (h->num_lends != 0)
		return cabi_trap(cx, CABI_MSG_OWN_BORROWED);
	copy = *h;
	if (cabi_table_remove(cx->table, i, NULL, &cx->err))
		return -1;
	if (copy.own)
		return run_dtor(cx, copy.rt, copy.rep);
	if (copy.borrow_scope != NULL && copy.borrow_scope->num_borrows > 0)
		copy.borrow_scope->num_borrows--;
	return 0;
}
