/*
 * instantiate.c - component instantiation: replay a validated
 * component's definitions in binary order (cm_component.defs is the
 * plan) and give every index-space entry its run-time value: core
 * modules, core instances (wasm_instantiate with imports taken from core
 * instances), bags of exports, aliases (instance export, core instance
 * export, outer), nested components (closures) and their instantiation
 * with arguments, resource type definitions, canon definitions (lift,
 * lower, resource.new/rep/drop), imports and exports.
 *
 * Contract (instance.h): cm_instantiate fails, never aborts, on anything
 * it cannot do: LINK for imports the linker does not provide (named),
 * TRAP for a trap in a core start function (with its message),
 * UNSUPPORTED for 🪙 values/start and for too many or too deeply nested
 * instances, NOMEM.  Every built-in gets its core function here (the
 * async model's from runtime/run/canon_builtins.c); one the runtime
 * does not implement (thread.spawn-ref, thread.spawn-indirect,
 * thread.available-parallelism) traps "async builtin (canon op N) not
 * implemented" when called.  Every
 * definition pushes its entries in the order validation pushed them; the
 * entries whose index is implicit (modules, core instances, components,
 * instances, aliases) are checked against the validator's record of their
 * origin, so the replay can never silently drift.  Core types and values (🪙)
 * have no run-time value and are not tracked.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - core_instance_def, canon_def, instance_def, component_def: one
 *    object per definition instantiated, in the store's arena
 *    (STORE_ARENA_LIMIT, 4 GiB); nested components are instantiated at
 *    most MAX_INSTANCE_DEPTH deep, and a store holds at most
 *    cfg.max_instances component and core instances (count_instance:
 *    "too many instances (limit N)", default 10,000).
 *  - core instances: runtime/wasm/instance.c.
 */
#include <stdio.h>
#include <string.h>

#include "component/arena.h"
#include "run/rt.h"
#include "run/sched.h"

/* An argument of a component instantiation. */
typedef struct inst_arg {
	cm_str name;
	cm_sort sort;
	cm_rtval val;
} inst_arg;

typedef struct ictx {
	cm_store *s;
	const cm_linker *linker; /* root imports */
	cm_error *err;
	unsigned depth;
} ictx;

/* Nesting bound: validation bounds it too, this keeps the C stack safe. */
#define MAX_INSTANCE_DEPTH 100

/*
 * One more component or core instance in the store, within its bound
 * (cm_store_config.max_instances): depth alone does not bound the
 * count, since each level may instantiate the one below it twice
 * (tests/guests/hostile/nest.wat: 1,280 bytes, 2^20 instances, 840 MB
 * and 4.7 s; at 2^30 the daemon's memory).
 */
static int count_instance(ictx *x)
{
	if (x->s->ninstances >= x->s->cfg.max_instances)
		return cm_error_set(x->err, CM_ERR_UNSUPPORTED,
				    "too many instances (limit %u)",
				    x->s->cfg.max_instances);
	x->s->ninstances++;
	return 0;
}

static int nomem(ictx *x)
{
	return cm_error_set(x->err, CM_ERR_NOMEM, "out of memory");
}

static int drift(ictx *x, const char *what, uint32_t idx)
{
	return cm_error_set(x->err, CM_ERR_UNSUPPORTED,
			    "internal error: instantiation of %s %u does not "
			    "match validation",
			    what, idx);
}

static bool tracked(cm_sort s)
{
	return s != CM_SORT_CORE_TYPE && s != CM_SORT_VALUE;
}

static int put(ictx *x, cm_component_instance *inst, cm_sort sort, uint32_t idx,
	       cm_rtval v)
{
	if (!tracked(sort))
		return 0;
	if (idx >= inst->component->spaces[sort].n)
		return drift(x, cm_sort_name(sort), idx);
	inst->spaces[sort][idx] = v;
	if (idx + 1 > inst->nfilled[sort])
		inst->nfilled[sort] = idx + 1;
	return 0;
}

/* The next implicit index of `sort`, checked against its origin. */
static int next(ictx *x, cm_component_instance *inst, cm_sort sort,
		cm_origin origin, uint32_t def, uint32_t *idx)
{
	const cm_space *sp = &inst->component->spaces[sort];
	uint32_t i = inst->nfilled[sort];

	if (i >= sp->n || sp->items[i].origin != origin ||
	    (origin != CM_ORIGIN_ALIAS && sp->items[i].def != def))
		return drift(x, cm_sort_name(sort), i);
	*idx = i;
	return 0;
}

static const cm_rtval *get(ictx *x, cm_component_instance *inst, cm_sort sort,
			   uint32_t idx)
{
	if (!tracked(sort) || idx >= inst->nfilled[sort]) {
		drift(x, cm_sort_name(sort), idx);
		return NULL;
	}
	return &inst->spaces[sort][idx];
}

/* ---- core instances ------------------------------------------------------ */

static bool core_export(const cm_core_inst *ci, const uint8_t *name, size_t len,
			wasm_extern *out)
{
	if (ci == NULL)
		return false;
	if (ci->inst != NULL)
		return wasm_instance_export(ci->inst, name, len, out);
	for (uint32_t i = 0; i < ci->n; i++) {
		if (ci->names[i].len == len &&
		    !memcmp(ci->names[i].ptr, name, len)) {
			*out = ci->items[i];
			return true;
		}
	}
	return false;
}

static int trap_from_core(ictx *x, wasm_trap_kind trap)
{
	if (trap == WASM_TRAP_HOST && x->s->last_trap[0])
		return cm_error_set(x->err, CM_ERR_TRAP, "%s", x->s->last_trap);
	if (trap == WASM_TRAP_UNREACHABLE)
		return cm_error_set(x->err, CM_ERR_TRAP,
				    "wasm trap: wasm `unreachable` "
				    "instruction executed");
	if (trap == WASM_TRAP_UNCAUGHT_EXCEPTION)
		return cm_error_set(x->err, CM_ERR_TRAP,
				    WASM_TRAP_PREFIX CABI_MSG_UNCAUGHT_EXCEPTION);
	return cm_error_set(x->err, CM_ERR_TRAP, "wasm trap: %s",
			    wasm_trap_message(trap));
}

static int core_instantiate(ictx *x, cm_component_instance *inst,
			    const cm_core_instance *ci, cm_core_inst *out)
{
	const cm_rtval *mv = get(x, inst, CM_SORT_CORE_MODULE, ci->module);
	const wasm_module *m;
	wasm_extern *imports = NULL;
	wasm_error werr;
	wasm_trap_kind trap = WASM_TRAP_NONE;

	if (mv == NULL)
		return -1;
	m = mv->module;
	if (m->nimports > 0) {
		imports = cm_arena_array(x->s->arena, m->nimports,
					 sizeof *imports);
		if (imports == NULL)
			return nomem(x);
	}
	for (uint32_t i = 0; i < m->nimports; i++) {
		const wasm_import *im = &m->imports[i];
		const cm_core_inst *arg = NULL;

		for (uint32_t k = 0; k < ci->nargs; k++) {
			const cm_sortidx *a = &ci->args[k];
			const cm_rtval *v;

			if (a->name.len != im->module.len ||
			    memcmp(a->name.ptr, im->module.ptr, a->name.len))
				continue;
			v = get(x, inst, CM_SORT_CORE_INSTANCE, a->index);
			if (v == NULL)
				return -1;
			arg = v->core_inst;
			break;
		}
		if (!core_export(arg, im->name.ptr, im->name.len, &imports[i]))
			return cm_error_set(x->err, CM_ERR_LINK,
					    "core import `%.*s`.`%.*s` is not "
					    "provided",
					    (int)im->module.len,
					    (const char *)im->module.ptr,
					    (int)im->name.len,
					    (const char *)im->name.ptr);
	}
	memset(&werr, 0, sizeof werr);
	x->s->last_trap[0] = '\0';
	if (wasm_instantiate(x->s->wasm, m, imports, m->nimports, &out->inst,
			     &trap, &werr)) {
		if (werr.kind == WASM_ERR_NONE)
			return trap_from_core(x, trap);
		return cm_error_set(x->err,
				    werr.kind == WASM_ERR_RESOURCE
					    ? CM_ERR_NOMEM
					    : CM_ERR_LINK,
				    "%s", werr.msg);
	}
	return 0;
}

static int core_instance_def(ictx *x, cm_component_instance *inst, uint32_t def)
{
	const cm_core_instance *ci = &inst->component->core_instances[def];
	cm_core_inst *v = cm_arena_alloc(x->s->arena, sizeof *v);
	cm_rtval rv;
	uint32_t idx;

	if (v == NULL)
		return nomem(x);
	if (next(x, inst, CM_SORT_CORE_INSTANCE, CM_ORIGIN_CORE_INSTANCE, def,
		 &idx))
		return -1;
	if (ci->kind == CM_INSTANTIATE && count_instance(x))
		return -1;
	if (ci->kind == CM_INSTANTIATE) {
		if (core_instantiate(x, inst, ci, v))
			return -1;
	} else {
		cm_str *names;

		v->n = ci->nargs;
		names = cm_arena_array(x->s->arena, ci->nargs ? ci->nargs : 1,
				       sizeof *names);
		v->items =
			cm_arena_array(x->s->arena, ci->nargs ? ci->nargs : 1,
				       sizeof *v->items);
		if (names == NULL || v->items == NULL)
			return nomem(x);
		for (uint32_t i = 0; i < ci->nargs; i++) {
			const cm_rtval *e = get(x, inst, ci->args[i].sort,
						ci->args[i].index);

			if (e == NULL)
				return -1;
			names[i] = ci->args[i].name;
			v->items[i] = e->core;
		}
		v->names = names;
	}
	rv.core_inst = v;
	return put(x, inst, CM_SORT_CORE_INSTANCE, idx, rv);
}

/* ---- canonical definitions ----------------------------------------------- */

static int resolve_opts(ictx *x, cm_component_instance *inst,
			const cm_canon_opts *o, cabi_options *out)
{
	const cm_rtval *v;

	memset(out, 0, sizeof *out);
	out->string_encoding = o->encoding;
	out->async = o->async;
	out->ptr64 = o->memory64;
	if (o->memory != CM_NONE) {
		if ((v = get(x, inst, CM_SORT_CORE_MEMORY, o->memory)) == NULL)
			return -1;
		out->memory = v->core.u.memory;
	}
	if (o->realloc != CM_NONE) {
		if ((v = get(x, inst, CM_SORT_CORE_FUNC, o->realloc)) == NULL)
			return -1;
		out->realloc = v->core.u.func;
	}
	if (o->post_return != CM_NONE) {
		if ((v = get(x, inst, CM_SORT_CORE_FUNC, o->post_return)) ==
		    NULL)
			return -1;
		out->post_return = v->core.u.func;
	}
	if (o->callback != CM_NONE) {
		if ((v = get(x, inst, CM_SORT_CORE_FUNC, o->callback)) == NULL)
			return -1;
		out->callback = v->core.u.func;
	}
	return 0;
}

static int canon_def(ictx *x, cm_component_instance *inst, uint32_t def)
{
	const cm_canon *cn = &inst->component->canons[def];
	cabi_options opts;
	const cm_rtval *v;
	cm_rtval rv;
	wasm_func *wf;

	memset(&rv, 0, sizeof rv);
	switch (cn->op) {
	case CM_CANON_LIFT: {
		cm_func *f = cm_arena_alloc(x->s->arena, sizeof *f);

		if (f == NULL)
			return nomem(x);
		if ((v = get(x, inst, CM_SORT_CORE_FUNC, cn->index)) == NULL ||
		    resolve_opts(x, inst, &cn->opts, &f->opts))
			return -1;
		f->kind = CM_FUNC_LIFTED;
		f->type = cn->type;
		f->inst = inst;
		f->core = v->core.u.func;
		rv.func = f;
		return put(x, inst, CM_SORT_FUNC, cn->result_index, rv);
	}
	case CM_CANON_LOWER:
		if ((v = get(x, inst, CM_SORT_FUNC, cn->index)) == NULL ||
		    resolve_opts(x, inst, &cn->opts, &opts))
			return -1;
		wf = cm_canon_lower(inst, cn, v->func, &opts);
		break;
	case CM_CANON_RESOURCE_NEW:
	case CM_CANON_RESOURCE_DROP:
	case CM_CANON_RESOURCE_REP:
		if ((v = get(x, inst, CM_SORT_TYPE, cn->index)) == NULL)
			return -1;
		if (v->rt == NULL)
			return cm_error_set(x->err, CM_ERR_LINK,
					    "canon resource built-in on a type "
					    "without a run-time resource");
		wf = cm_canon_resource(inst, cn, v->rt);
		break;
	default:
		if (cm_is_task_builtin(cn->op)) {
			wf = cm_canon_task_builtin(inst, cn);
			break;
		}
		/* the async model's built-ins: runtime/run */
		if (resolve_opts(x, inst, &cn->opts, &opts))
			return -1;
		wf = cm_canon_async_builtin(inst, cn, &opts);
		break;
	}
	if (wf == NULL)
		return nomem(x);
	rv.core.kind = WASM_EXTERN_FUNC;
	rv.core.u.func = wf;
	return put(x, inst, CM_SORT_CORE_FUNC, cn->result_index, rv);
}

/* ---- types, aliases ------------------------------------------------------ */

static int type_def(ictx *x, cm_component_instance *inst, uint32_t idx)
{
	const cm_item *it = cm_space_get(inst->component, CM_SORT_TYPE, idx);
	const cm_type *t;
	cm_rtval rv;

	memset(&rv, 0, sizeof rv);
	if (it == NULL)
		return drift(x, "type", idx);
	t = it->t.type;
	if (t != NULL && t->kind == CM_RESOURCE &&
	    t->u.resource.alias_of == NULL && t->u.resource.defined) {
		wasm_func *dtor = NULL;

		if (t->u.resource.dtor != CM_NONE) {
			const cm_rtval *d = get(x, inst, CM_SORT_CORE_FUNC,
						t->u.resource.dtor);

			if (d == NULL)
				return -1;
			dtor = d->core.u.func;
		}
		rv.rt = cm_resource_type_new(inst, t, dtor);
		if (rv.rt == NULL || cm_rmap_bind(inst, t, rv.rt))
			return nomem(x);
	}
	return put(x, inst, CM_SORT_TYPE, idx, rv);
}

/* Record what a TYPE / INSTANCE value means for this component's types. */
static int bind(ictx *x, cm_component_instance *inst, cm_sort sort,
		const cm_type *t, const cm_rtval *v)
{
	if (t == NULL)
		return 0;
	if (sort == CM_SORT_TYPE && t->kind == CM_RESOURCE && v->rt != NULL &&
	    cm_rmap_bind(inst, t, v->rt))
		return nomem(x);
	if (sort == CM_SORT_INSTANCE &&
	    cm_rmap_bind_instance(inst, t, v->instance))
		return nomem(x);
	return 0;
}

static int alias_def(ictx *x, cm_component_instance *inst, uint32_t def)
{
	const cm_alias *al = &inst->component->aliases[def];
	const cm_rtval *v;
	cm_rtval rv;
	uint32_t idx;

	if (!tracked(al->sort))
		return 0;
	if (next(x, inst, al->sort, CM_ORIGIN_ALIAS, def, &idx))
		return -1;
	memset(&rv, 0, sizeof rv);
	switch (al->kind) {
	case CM_ALIAS_INSTANCE_EXPORT: {
		const cm_rtexport *e;

		if ((v = get(x, inst, CM_SORT_INSTANCE, al->instance)) == NULL)
			return -1;
		e = cm_rtinstance_find(v->instance, al->name.ptr, al->name.len);
		if (e == NULL || e->sort != al->sort)
			return cm_error_set(x->err, CM_ERR_LINK,
					    "instance has no %s export `%s`",
					    cm_sort_name(al->sort),
					    al->name.ptr);
		rv = e->val;
		break;
	}
	case CM_ALIAS_CORE_INSTANCE_EXPORT:
		if ((v = get(x, inst, CM_SORT_CORE_INSTANCE, al->instance)) ==
		    NULL)
			return -1;
		if (!core_export(v->core_inst, (const uint8_t *)al->name.ptr,
				 al->name.len, &rv.core))
			return cm_error_set(x->err, CM_ERR_LINK,
					    "core instance has no export `%s`",
					    al->name.ptr);
		break;
	case CM_ALIAS_OUTER: {
		cm_component_instance *f = inst;

		for (uint32_t k = 0; k < al->count && f != NULL; k++)
			f = f->env;
		if (f == NULL || al->index >= f->nfilled[al->sort])
			return drift(x, "outer alias", def);
		rv = f->spaces[al->sort][al->index];
		break;
	}
	}
	if (put(x, inst, al->sort, idx, rv))
		return -1;
	return bind(x, inst, al->sort,
		    inst->component->spaces[al->sort].items[idx].t.type, &rv);
}

/* ---- nested components and instances ------------------------------------ */

static int instantiate(ictx *x, const cm_closure *def,
		       cm_component_instance *parent, const inst_arg *args,
		       uint32_t nargs, cm_component_instance **out);

static int instance_def(ictx *x, cm_component_instance *inst, uint32_t def)
{
	const cm_instance *in = &inst->component->instances[def];
	cm_rtval rv;
	uint32_t idx;

	if (next(x, inst, CM_SORT_INSTANCE, CM_ORIGIN_INSTANCE, def, &idx))
		return -1;
	if (in->kind == CM_INSTANTIATE) {
		const cm_rtval *cv =
			get(x, inst, CM_SORT_COMPONENT, in->component);
		inst_arg *args;
		cm_component_instance *child;

		if (cv == NULL)
			return -1;
		args = cm_arena_array(x->s->arena, in->nargs ? in->nargs : 1,
				      sizeof *args);
		if (args == NULL)
			return nomem(x);
		for (uint32_t i = 0; i < in->nargs; i++) {
			const cm_rtval *a = get(x, inst, in->args[i].sort,
						in->args[i].index);

			if (a == NULL)
				return -1;
			args[i].name = in->args[i].name;
			args[i].sort = in->args[i].sort;
			args[i].val = *a;
		}
		if (instantiate(x, cv->component, inst, args, in->nargs,
				&child))
			return -1;
		rv.instance = &child->exports;
	} else {
		cm_rtinstance *ri = cm_arena_alloc(x->s->arena, sizeof *ri);

		if (ri == NULL)
			return nomem(x);
		for (uint32_t i = 0; i < in->nargs; i++) {
			const cm_rtval *a = get(x, inst, in->args[i].sort,
						in->args[i].index);

			if (a == NULL)
				return -1;
			if (cm_rtinstance_add(x->s, ri, in->args[i].name,
					      in->args[i].sort, *a))
				return nomem(x);
		}
		rv.instance = ri;
	}
	if (put(x, inst, CM_SORT_INSTANCE, idx, rv))
		return -1;
	return bind(x, inst, CM_SORT_INSTANCE, in->type, &rv);
}

static int component_def(ictx *x, cm_component_instance *inst, uint32_t def)
{
	cm_closure *cl = cm_arena_alloc(x->s->arena, sizeof *cl);
	cm_rtval rv;
	uint32_t idx;

	if (cl == NULL)
		return nomem(x);
	if (next(x, inst, CM_SORT_COMPONENT, CM_ORIGIN_COMPONENT, def, &idx))
		return -1;
	cl->def = inst->component->components[def];
	cl->env = inst;
	rv.component = cl;
	return put(x, inst, CM_SORT_COMPONENT, idx, rv);
}

/* ---- imports and exports ------------------------------------------------- */

static int import_def(ictx *x, cm_component_instance *inst, uint32_t def,
		      const inst_arg *args, uint32_t nargs, bool root)
{
	const cm_import *im = &inst->component->imports[def];
	cm_rtval rv;

	if (im->type.sort == CM_SORT_VALUE)
		return cm_error_set(x->err, CM_ERR_UNSUPPORTED,
				    "value import `%s` (🪙) not implemented",
				    im->name.str.ptr);
	memset(&rv, 0, sizeof rv);
	if (root) {
		if (cm_linker_resolve(x->linker, inst, im, &rv, x->err))
			return -1;
	} else {
		const inst_arg *a = NULL;

		for (uint32_t i = 0; i < nargs && a == NULL; i++)
			if (args[i].name.len == im->name.str.len &&
			    !memcmp(args[i].name.ptr, im->name.str.ptr,
				    im->name.str.len))
				a = &args[i];
		if (a == NULL || a->sort != im->type.sort)
			return cm_error_set(x->err, CM_ERR_LINK,
					    "missing instantiation argument "
					    "`%s`",
					    im->name.str.ptr);
		rv = a->val;
	}
	if (put(x, inst, im->type.sort, im->index, rv))
		return -1;
	return bind(x, inst, im->type.sort, im->type.type, &rv);
}

static int export_def(ictx *x, cm_component_instance *inst, uint32_t def)
{
	const cm_export *ex = &inst->component->exports[def];
	const cm_rtval *v;
	cm_rtval rv;

	if (ex->sort == CM_SORT_VALUE)
		return cm_error_set(x->err, CM_ERR_UNSUPPORTED,
				    "value export `%s` (🪙) not implemented",
				    ex->name.str.ptr);
	if (!tracked(ex->sort))
		return 0;
	if ((v = get(x, inst, ex->sort, ex->item)) == NULL)
		return -1;
	rv = *v;
	if (put(x, inst, ex->sort, ex->index, rv) ||
	    bind(x, inst, ex->sort, ex->type.type, &rv) ||
	    bind(x, inst, ex->sort,
		 inst->component->spaces[ex->sort].items[ex->index].t.type,
		 &rv))
		return -1;
	if (cm_rtinstance_add(x->s, &inst->exports, ex->name.str, ex->sort, rv))
		return nomem(x);
	return 0;
}

/* ---- the walk ------------------------------------------------------------ */

static int instantiate(ictx *x, const cm_closure *def,
		       cm_component_instance *parent, const inst_arg *args,
		       uint32_t nargs, cm_component_instance **out)
{
	const cm_component *c = def->def;
	cm_component_instance *inst;
	int rc = 0;

	if (++x->depth > MAX_INSTANCE_DEPTH)
		return cm_error_set(x->err, CM_ERR_UNSUPPORTED,
				    "component instances nested too deeply");
	if (count_instance(x)) {
		x->depth--;
		return -1;
	}
	inst = cm_instance_new(x->s, parent, def);
	if (inst == NULL)
		return nomem(x);
	inst->exports.inst = inst;
	for (uint32_t i = 0; i < c->ndefs && rc == 0; i++) {
		const cm_def *d = &c->defs[i];
		cm_rtval rv;
		uint32_t idx;

		switch (d->kind) {
		case CM_DEF_CORE_MODULE:
			rv.module = c->modules[d->index];
			rc = next(x, inst, CM_SORT_CORE_MODULE,
				  CM_ORIGIN_CORE_MODULE, d->index, &idx) ||
			     put(x, inst, CM_SORT_CORE_MODULE, idx, rv);
			break;
		case CM_DEF_CORE_INSTANCE:
			rc = core_instance_def(x, inst, d->index);
			break;
		case CM_DEF_CORE_TYPE:
			break;
		case CM_DEF_COMPONENT:
			rc = component_def(x, inst, d->index);
			break;
		case CM_DEF_INSTANCE:
			rc = instance_def(x, inst, d->index);
			break;
		case CM_DEF_ALIAS:
			rc = alias_def(x, inst, d->index);
			break;
		case CM_DEF_TYPE:
			rc = type_def(x, inst, d->index);
			break;
		case CM_DEF_CANON:
			rc = canon_def(x, inst, d->index);
			break;
		case CM_DEF_IMPORT:
			rc = import_def(x, inst, d->index, args, nargs,
					parent == NULL);
			break;
		case CM_DEF_EXPORT:
			rc = export_def(x, inst, d->index);
			break;
		case CM_DEF_START:
			rc = cm_error_set(
				x->err, CM_ERR_UNSUPPORTED,
				"component start functions (🪙) not "
				"implemented");
			break;
		case CM_DEF_VALUE:
			rc = cm_error_set(x->err, CM_ERR_UNSUPPORTED,
					  "component values (🪙) not "
					  "implemented");
			break;
		}
	}
	x->depth--;
	if (rc)
		return -1;
	*out = inst;
	return 0;
}

int cm_instantiate(cm_store *s, const cm_component *c, const cm_linker *l,
		   cm_component_instance **out, cm_error *err)
{
	cm_closure root = {c, NULL};
	ictx x;

	memset(&x, 0, sizeof x);
	x.s = s;
	x.linker = l;
	x.err = err;
	if (err != NULL)
		memset(err, 0, sizeof *err);
	return instantiate(&x, &root, NULL, NULL, 0, out);
}
