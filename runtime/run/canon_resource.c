/*
 * canon_resource.c - run-time resource types and the resource built-ins:
 * `canon resource.new`, `resource.rep`,
 * `resource.drop` as core functions of an instance, and the destructor
 * call that dropping an owned handle makes (definitions.py
 * canon_resource_*; digest 2.8).
 *
 * Contract: one cabi_resource_type per (instance, resource definition),
 * made at instantiation; its address is its identity.  resource.new and
 * resource.drop trap "cannot leave component instance" when may_leave is
 * false (before looking at their argument); resource.rep does not check
 * it.  Dropping an own runs the destructor in the implementing instance
 * as a synchronous call of func(rep) from the dropping instance: the
 * reentrance check happens even without a destructor (digest 2.8 and
 * errata 10), a trap in it poisons like any lifted call.
 *
 * Allocations sized by a guest or a client (issue 18 audit): one
 * resource type per resource definition and one builtin per canon
 * definition, in the store's arena (the component's length); resource.new
 * handles go into the handle table (max_handles).  The embedder's host
 * resource types registered for snapshots (host_res): one entry per
 * type the embedder defines.
 */
#include <stdlib.h>
#include <string.h>

#include "component/arena.h"
#include "run/rt.h"

typedef struct cm_resource_builtin {
	cm_component_instance *inst;
	const cabi_resource_type *rt;
} cm_resource_builtin;

const cabi_resource_type *cm_resource_type_new(cm_component_instance *inst,
					       const cm_type *node,
					       wasm_func *dtor)
{
	cabi_resource_type *rt = cm_arena_alloc(inst->store->arena, sizeof *rt);

	if (rt == NULL)
		return NULL;
	rt->type = node;
	rt->impl = inst;
	rt->dtor = dtor;
	rt->name = node->u.resource.name.len ? node->u.resource.name.ptr : NULL;
	{
		cm_store *s = inst->store;

		if (s->nrtypes == s->rtypes_cap) {
			uint32_t cap = s->rtypes_cap ? 2 * s->rtypes_cap : 8;
			const cabi_resource_type **v =
				realloc(s->rtypes, cap * sizeof *v);

			if (v == NULL)
				return NULL;
			s->rtypes = v;
			s->rtypes_cap = cap;
		}
		s->rtypes[s->nrtypes++] = rt;
	}
	return rt;
}

int cm_store_set_host_resource_durable(cm_store *s,
				       const cabi_resource_type *rt,
				       const cm_host_resource_durable *d)
{
	size_t klen = d->key ? strlen(d->key) : 0;
	uint32_t i = s->nhost_res;

	if (rt == NULL || klen == 0 || klen > CM_HOST_RESOURCE_KEY_MAX)
		return -1;
	for (uint32_t j = 0; j < s->nhost_res; j++) {
		if (s->host_res[j].rt == rt)
			i = j;
		/* the key names the type in snapshots: one type each */
		else if (!strcmp(s->host_res[j].d.key, d->key))
			return -1;
	}
	if (i == s->nhost_res) {
		if (s->nhost_res == s->host_res_cap) {
			uint32_t cap = s->host_res_cap ? 2 * s->host_res_cap : 8;
			struct cm_host_res_reg *v =
				realloc(s->host_res, cap * sizeof *v);

			if (v == NULL)
				return -1;
			s->host_res = v;
			s->host_res_cap = cap;
		}
		s->nhost_res++;
	}
	s->host_res[i].rt = rt;
	s->host_res[i].d = *d;
	return 0;
}

static wasm_host_status fail(wasm_exec *e, cm_store *s, cabi_error *err)
{
	if (err->msg[0] == '\0')
		cabi_fail(err, CABI_ERR_TRAP, "trap");
	cm_note_trap(s, err);
	wasm_exec_set_host_trap(e, err->msg);
	return WASM_HOST_TRAP;
}

static uint64_t arg_u(const wasm_val *v)
{
	return v->type == WASM_I64 ? v->u.i64 : v->u.i32;
}

static wasm_host_status resource_new(wasm_exec *e, void *env,
				     const wasm_val *args, wasm_val *results)
{
	const cm_resource_builtin *b = env;
	cm_component_instance *inst = b->inst;
	cabi_cx cx;
	uint32_t idx;
	int rc;

	cm_cx_init(&cx, inst, NULL);
	if (!inst->may_leave) {
		cabi_fail(&cx.err, CABI_ERR_TRAP, CABI_MSG_CANNOT_LEAVE);
		return fail(e, inst->store, &cx.err);
	}
	rc = canon_resource_new(&cx, b->rt, arg_u(&args[0]), &idx);
	cabi_cx_release(&cx);
	if (rc)
		return fail(e, inst->store, &cx.err);
	results[0].u.i32 = idx;
	return WASM_HOST_OK;
}

static wasm_host_status resource_rep(wasm_exec *e, void *env,
				     const wasm_val *args, wasm_val *results)
{
	const cm_resource_builtin *b = env;
	cm_component_instance *inst = b->inst;
	cabi_cx cx;
	uint64_t rep;
	int rc;

	cm_cx_init(&cx, inst, NULL);
	rc = canon_resource_rep(&cx, b->rt, args[0].u.i32, &rep);
	cabi_cx_release(&cx);
	if (rc)
		return fail(e, inst->store, &cx.err);
	if (results[0].type == WASM_I64)
		results[0].u.i64 = rep;
	else
		results[0].u.i32 = (uint32_t)rep;
	return WASM_HOST_OK;
}

static wasm_host_status resource_drop(wasm_exec *e, void *env,
				      const wasm_val *args, wasm_val *results)
{
	const cm_resource_builtin *b = env;
	cm_component_instance *inst = b->inst;
	cm_store *s = inst->store;
	cabi_cx cx;
	int rc;

	cm_cx_init(&cx, inst, NULL);
	if (!inst->may_leave) {
		cabi_fail(&cx.err, CABI_ERR_TRAP, CABI_MSG_CANNOT_LEAVE);
		return fail(e, s, &cx.err);
	}
	if (s->fuel != UINT64_MAX)
		s->fuel = wasm_exec_fuel(e);
	rc = canon_resource_drop(&cx, b->rt, args[0].u.i32);
	if (s->fuel != UINT64_MAX)
		wasm_exec_set_fuel(e, s->fuel);
	cabi_cx_release(&cx);
	if (rc)
		return fail(e, s, &cx.err);
	return WASM_HOST_OK;
}

wasm_func *cm_canon_resource(cm_component_instance *inst, const cm_canon *cn,
			     const cabi_resource_type *rt)
{
	cm_store *s = inst->store;
	cm_resource_builtin *b = cm_arena_alloc(s->arena, sizeof *b);
	wasm_host_fn fn;

	if (b == NULL || cn->core_type == NULL)
		return NULL;
	b->inst = inst;
	b->rt = rt;
	switch (cn->op) {
	case CM_CANON_RESOURCE_NEW:
		fn = resource_new;
		break;
	case CM_CANON_RESOURCE_REP:
		fn = resource_rep;
		break;
	default:
		fn = resource_drop;
		break;
	}
	return wasm_func_new_host(s->wasm, cn->core_type, fn, b);
}

/* ---- the destructor call ------------------------------------------------- */

typedef struct dtor_env {
	uint64_t rep;
	bool ptr64;
} dtor_env;

static int dtor_on_start(void *env, cm_val *args, cabi_error *err)
{
	dtor_env *d = env;

	(void)err;
	args[0] = d->ptr64 ? cm_val_u64(d->rep) : cm_val_u32((uint32_t)d->rep);
	return 0;
}

static int dtor_on_resolve(void *env, cm_val *result, cabi_error *err)
{
	(void)env;
	(void)result;
	(void)err;
	return 0;
}

int cm_run_dtor(cabi_cx *cx, const cabi_resource_type *rt, uint64_t rep)
{
	cm_component_instance *caller = cx->inst;
	cm_component_instance *impl = rt->impl;
	bool ptr64;
	dtor_env d;
	cm_call_cbs cbs = {dtor_on_start, dtor_on_resolve, &d};
	cm_field param;
	cm_type ft;
	cm_func f;

	if (impl == NULL) {
		if (rt->host_dtor != NULL)
			rt->host_dtor(rt->host_env, rep);
		return 0;
	}
	if (rt->dtor == NULL) {
		/* No destructor: the reference still enters the instance. */
		if (cm_enter(impl, caller, false, &cx->err))
			return -1;
		cm_leave(impl, caller);
		return 0;
	}
	/* A lift of func(rep: u32) (u64 for an i64 rep) into impl. */
	ptr64 = rt->type != NULL && rt->type->u.resource.rep == WASM_I64;
	d.rep = rep;
	d.ptr64 = ptr64;
	memset(&param, 0, sizeof param);
	param.label.ptr = "rep";
	param.label.len = 3;
	param.type = cm_prim(ptr64 ? CM_U64 : CM_U32);
	memset(&ft, 0, sizeof ft);
	ft.kind = CM_FUNC;
	ft.u.func.nparams = 1;
	ft.u.func.params = &param;
	memset(&f, 0, sizeof f);
	f.kind = CM_FUNC_LIFTED;
	f.type = &ft;
	f.inst = impl;
	f.core = rt->dtor;
	f.name = "resource destructor";
	f.dtor = true;
	return cm_func_call(impl->store, &f, caller, impl->store->current, &cbs,
			    &cx->err);
}
