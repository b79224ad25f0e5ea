/*
 * component_instance.c - the ComponentInstance object: creation, its
 * export table, the static-to-run-time resource map, reentrance
 * (entering sets, may_enter, poisoning) and the cabi hooks every
 * lift/lower context of an instance uses.
 *
 * Contract (rt.h): instances live in the store's arena; their handle
 * tables are released by a store cleanup.  Entering follows digest 2.15:
 * the entering set of callee C from caller K is ancestors_and_self(C) -
 * ancestors_and_self(K) (from the host: ancestors_and_self(C)); entering
 * traps if one of them may not be entered or is poisoned, else clears
 * their may_enter until cm_leave.  A trap leaves them cleared and
 * poisoned (cm_poison), so every later entry traps.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_instance_new, cm_rtinstance_add: the instance and its exports
 *    in the store's arena (STORE_ARENA_LIMIT), as many as the
 *    component defines (its length) per instantiation.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "component/arena.h"
#include "run/rt.h"
#include "run/sched.h"

/* ---- errors ------------------------------------------------------------- */

int cm_error_set(cm_error *err, cm_error_kind kind, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	err->kind = kind;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

int cm_error_from_cabi(cm_error *err, const cabi_error *ce)
{
	cm_error_kind k;

	switch (ce->kind) {
	case CABI_ERR_NOMEM:
		k = CM_ERR_NOMEM;
		break;
	case CABI_ERR_VALUE:
		k = CM_ERR_VALUE;
		break;
	default:
		k = CM_ERR_TRAP;
		break;
	}
	return cm_error_set(err, k, "%s", ce->msg[0] ? ce->msg : "trap");
}

const char *cm_error_kind_name(cm_error_kind k)
{
	switch (k) {
	case CM_ERR_NONE:
		return "no error";
	case CM_ERR_TRAP:
		return "trap";
	case CM_ERR_LINK:
		return "link error";
	case CM_ERR_UNSUPPORTED:
		return "not supported";
	case CM_ERR_NOMEM:
		return "out of memory";
	case CM_ERR_VALUE:
		return "bad value";
	}
	return "error";
}

/* ---- creation ----------------------------------------------------------- */

static void free_handles(void *arg)
{
	cm_component_instance *inst = arg;

	cabi_table_free(&inst->handles);
	cabi_table_free(&inst->threads);
}

cm_component_instance *cm_instance_new(cm_store *s,
				       cm_component_instance *parent,
				       const cm_closure *def)
{
	cm_component_instance *inst = cm_arena_alloc(s->arena, sizeof *inst);

	if (inst == NULL)
		return NULL;
	inst->store = s;
	inst->parent = parent;
	inst->component = def->def;
	inst->env = def->env;
	cabi_table_init(&inst->handles);
	cabi_table_init(&inst->threads);
	inst->handles.limit = s->cfg.max_handles;
	inst->threads.limit = s->cfg.max_threads;
	inst->may_leave = true;
	inst->may_enter = true;
	for (int k = 0; k < CM_NSORTS; k++) {
		uint32_t n = def->def->spaces[k].n;

		if (n == 0)
			continue;
		inst->spaces[k] = cm_arena_array(s->arena, n, sizeof(cm_rtval));
		if (inst->spaces[k] == NULL)
			return NULL;
	}
	if (cm_store_on_free(s, free_handles, inst))
		return NULL;
	return inst;
}

uint64_t cm_store_handle_count(const cm_store *s)
{
	uint64_t n = 0;

	/* Every component instance registered its table's cleanup. */
	for (uint32_t i = 0; i < s->ncleanups; i++)
		if (s->cleanups[i].fn == free_handles) {
			const cm_component_instance *inst = s->cleanups[i].arg;

			n += cabi_table_count(&inst->handles);
		}
	return n;
}

uint32_t cm_store_component_instances(const cm_store *s,
				      cm_component_instance **out,
				      uint32_t cap)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->ncleanups; i++)
		if (s->cleanups[i].fn == free_handles) {
			if (n < cap)
				out[n] = s->cleanups[i].arg;
			n++;
		}
	return n;
}

/* ---- resource map ------------------------------------------------------- */

static uint32_t ptr_hash(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x;
}

static cm_rmap_entry *rmap_slot(cm_rmap_entry *tab, uint32_t cap,
				const cm_type *node)
{
	uint32_t i = ptr_hash(node) & (cap - 1);

	while (tab[i].node != NULL && tab[i].node != node)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

int cm_rmap_bind(cm_component_instance *inst, const cm_type *node,
		 const cabi_resource_type *rt)
{
	cm_rmap_entry *e;

	if (node == NULL || rt == NULL || node->kind != CM_RESOURCE)
		return 0;
	node = cm_resource_canonical(node);
	if (2 * (inst->rmap_n + 1) > inst->rmap_cap) {
		uint32_t cap = inst->rmap_cap ? 2 * inst->rmap_cap : 16;
		cm_rmap_entry *tab =
			cm_arena_array(inst->store->arena, cap, sizeof *tab);

		if (tab == NULL)
			return -1;
		for (uint32_t i = 0; i < inst->rmap_cap; i++)
			if (inst->rmap[i].node != NULL)
				*rmap_slot(tab, cap, inst->rmap[i].node) =
					inst->rmap[i];
		inst->rmap = tab;
		inst->rmap_cap = cap;
	}
	e = rmap_slot(inst->rmap, inst->rmap_cap, node);
	if (e->node == NULL)
		inst->rmap_n++;
	e->node = node;
	e->rt = rt;
	return 0;
}

const cabi_resource_type *cm_rmap_lookup(const cm_component_instance *inst,
					 const cm_type *node)
{
	const cm_rmap_entry *e;

	if (inst == NULL || node == NULL || inst->rmap_cap == 0)
		return NULL;
	e = rmap_slot(inst->rmap, inst->rmap_cap, cm_resource_canonical(node));
	return e->node != NULL ? e->rt : NULL;
}

int cm_rmap_bind_instance(cm_component_instance *inst, const cm_type *it,
			  const cm_rtinstance *val)
{
	if (it == NULL || val == NULL || it->kind != CM_INSTANCE)
		return 0;
	for (uint32_t i = 0; i < it->u.comp.nexports; i++) {
		const cm_extern_decl *d = &it->u.comp.exports[i];
		const cm_rtexport *x;

		if (d->type.sort != CM_SORT_TYPE &&
		    d->type.sort != CM_SORT_INSTANCE)
			continue;
		x = cm_rtinstance_find(val, d->name.str.ptr, d->name.str.len);
		if (x == NULL || x->sort != d->type.sort)
			continue;
		if (d->type.sort == CM_SORT_TYPE) {
			if (d->type.type != NULL &&
			    d->type.type->kind == CM_RESOURCE &&
			    cm_rmap_bind(inst, d->type.type, x->val.rt))
				return -1;
		} else if (cm_rmap_bind_instance(inst, d->type.type,
						 x->val.instance)) {
			return -1;
		}
	}
	return 0;
}

/* ---- export tables ------------------------------------------------------ */

int cm_rtinstance_add(cm_store *s, cm_rtinstance *ri, cm_str name, cm_sort sort,
		      cm_rtval val)
{
	cm_rtexport *x = cm_arena_push(s->arena, (void **)&ri->exports, &ri->n,
				       &ri->cap, sizeof *x);

	if (x == NULL)
		return -1;
	x->name = name;
	x->sort = sort;
	x->val = val;
	return 0;
}

const cm_rtexport *cm_rtinstance_find(const cm_rtinstance *ri, const char *name,
				      size_t len)
{
	if (ri == NULL)
		return NULL;
	for (uint32_t i = 0; i < ri->n; i++)
		if (ri->exports[i].name.len == len &&
		    !memcmp(ri->exports[i].name.ptr, name, len))
			return &ri->exports[i];
	return NULL;
}

/* ---- reentrance ------------------------------------------------------- */

/* Is a in ancestors_and_self(x)? */
static bool ancestor_or_self(const cm_component_instance *a,
			     const cm_component_instance *x)
{
	for (; x != NULL; x = x->parent)
		if (x == a)
			return true;
	return false;
}

/* The entering set is callee's chain up to the first ancestor of caller. */
static bool in_entering_set(const cm_component_instance *i,
			    const cm_component_instance *caller)
{
	return caller == NULL || !ancestor_or_self(i, caller);
}

int cm_enter(cm_component_instance *callee, cm_component_instance *caller,
	     bool compat, cabi_error *err)
{
	cm_component_instance *i;

	if (caller != NULL && compat &&
	    (ancestor_or_self(callee, caller) ||
	     ancestor_or_self(caller, callee)))
		return cabi_fail(err, CABI_ERR_TRAP, CM_MSG_CANNOT_ENTER);
	for (i = callee; i != NULL && in_entering_set(i, caller); i = i->parent)
		if (!i->may_enter || i->poisoned)
			return cabi_fail(err, CABI_ERR_TRAP,
					 CM_MSG_CANNOT_ENTER);
	for (i = callee; i != NULL && in_entering_set(i, caller); i = i->parent)
		i->may_enter = false;
	return 0;
}

void cm_leave(cm_component_instance *callee, cm_component_instance *caller)
{
	for (cm_component_instance *i = callee;
	     i != NULL && in_entering_set(i, caller); i = i->parent)
		i->may_enter = true;
}

void cm_poison(cm_component_instance *callee, cm_component_instance *caller)
{
	for (cm_component_instance *i = callee;
	     i != NULL && in_entering_set(i, caller); i = i->parent) {
		i->may_enter = false;
		i->poisoned = true;
	}
}

/* ---- cabi contexts ----------------------------------------------------- */

static const cabi_resource_type *hook_resource_type(void *inst,
						    const cm_type *resource)
{
	return cm_rmap_lookup(inst, resource);
}

const cabi_hooks cm_cabi_hooks = {
	.resource_type = hook_resource_type,
	.run_dtor = cm_run_dtor,
	.lift_async = cm_hook_lift_async, /* runtime/run/stream.c */
	.lower_async = cm_hook_lower_async,
};

void cm_cx_init(cabi_cx *cx, cm_component_instance *inst,
		const cabi_options *opts)
{
	cm_store *s = inst->store;

	cabi_cx_init(cx, opts, inst, &inst->handles);
	cx->hooks = &cm_cabi_hooks;
	cx->may_leave = &inst->may_leave;
	cx->store = s->wasm;
	cx->fuel = s->fuel == UINT64_MAX ? 0 : s->fuel;
	cx->budget = &s->host_bytes;
}

/* ---- public accessors -------------------------------------------------- */

bool cm_instance_poisoned(const cm_component_instance *inst)
{
	for (; inst != NULL; inst = inst->parent)
		if (inst->poisoned)
			return true;
	return false;
}

uint32_t cm_instance_nexports(const cm_component_instance *inst)
{
	return inst->exports.n;
}

const char *cm_instance_export_name(const cm_component_instance *inst,
				    uint32_t i, cm_sort *sort)
{
	if (i >= inst->exports.n)
		return NULL;
	if (sort != NULL)
		*sort = inst->exports.exports[i].sort;
	return inst->exports.exports[i].name.ptr;
}

cm_func *cm_instance_export(cm_component_instance *inst, const char *instance,
			    const char *name)
{
	const cm_rtinstance *ri = &inst->exports;
	const cm_rtexport *x;

	if (instance != NULL) {
		x = cm_rtinstance_find(ri, instance, strlen(instance));
		if (x == NULL || x->sort != CM_SORT_INSTANCE)
			return NULL;
		ri = x->val.instance;
	}
	x = cm_rtinstance_find(ri, name, strlen(name));
	if (x == NULL || x->sort != CM_SORT_FUNC)
		return NULL;
	return x->val.func;
}

const cm_type *cm_func_type(const cm_func *f)
{
	return f->type;
}

bool cm_func_async_lifted(const cm_func *f)
{
	return f->kind == CM_FUNC_LIFTED && f->opts.async;
}
