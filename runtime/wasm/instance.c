/*
 * instance.c - module instantiation and export lookup.
 *
 * Contract: wasm_instantiate follows the spec's order: match imports;
 * allocate functions; evaluate globals in order (each may read imported
 * and earlier globals); create tags, tables (with their init values) and
 * memories; evaluate every element segment; then, IN ORDER, apply active
 * element segments (table.init, then drop) and drop declarative ones;
 * apply active data segments (memory.init, then drop); finally run the
 * start function (on a temporary exec, under the store's start_fuel).  A
 * segment that does not fit traps ("out of bounds
 * table/memory access") and the effects of the segments before it stay
 * visible: the instance, once past linking, already belongs to the store,
 * so functions it placed in imported tables stay valid.
 *
 * Memory: everything an instance holds except its tables and memories is
 * carved from ONE allocation (index spaces, defined functions, globals
 * and tags, segment instances, the export index), so an idle instance of
 * a small module costs a few hundred bytes plus its memories.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - wasm_instantiate: one block carved for every index space, segment,
 *    export and element reference of the module, each count at most the
 *    module's byte length (decode.c), the sum checked for overflow.
 *  - tables and memories it creates: table.c, memory.c.
 */
#include "wasm/instance.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* ---- the instance block ------------------------------------------------- */

typedef struct carver {
	size_t total;
	bool overflow;
} carver;

/* Reserves n elements of `size` bytes aligned to `align`; returns offset. */
static size_t carve(carver *c, size_t align, size_t n, size_t size)
{
	size_t off = (c->total + align - 1) / align * align;

	if (off < c->total || (size != 0 && n > (SIZE_MAX - off) / size)) {
		c->overflow = true;
		return 0;
	}
	c->total = off + n * size;
	return off;
}

typedef struct layout {
	size_t type_ids, funcs, tables, memories, globals, tags, elems, datas;
	size_t export_order, deffuncs, defglobals, deftags, refs;
} layout;

static wasm_instance *instance_alloc(const wasm_module *m, wasm_error *err)
{
	carver c = {sizeof(wasm_instance), false};
	size_t nrefs = 0;
	layout l;
	uint8_t *b;
	wasm_instance *inst;
	uint32_t i;

	for (i = 0; i < m->nelems; i++)
		nrefs += m->elems[i].count; /* <= module size: no overflow */
	l.type_ids = carve(&c, alignof(uint32_t), m->ntypes, sizeof(uint32_t));
	l.funcs = carve(&c, alignof(void *), wasm_module_nfuncs(m),
			sizeof(void *));
	l.tables = carve(&c, alignof(void *), wasm_module_ntables(m),
			 sizeof(void *));
	l.memories = carve(&c, alignof(void *), wasm_module_nmemories(m),
			   sizeof(void *));
	l.globals = carve(&c, alignof(void *), wasm_module_nglobals(m),
			  sizeof(void *));
	l.tags = carve(&c, alignof(void *), wasm_module_ntags(m),
		       sizeof(void *));
	l.elems = carve(&c, alignof(wasm_elem_inst), m->nelems,
			sizeof(wasm_elem_inst));
	l.datas = carve(&c, alignof(wasm_data_inst), m->ndatas,
			sizeof(wasm_data_inst));
	l.export_order =
		carve(&c, alignof(uint32_t), m->nexports, sizeof(uint32_t));
	l.deffuncs =
		carve(&c, alignof(wasm_func), m->nfuncs, sizeof(wasm_func));
	l.defglobals = carve(&c, alignof(wasm_global_inst), m->nglobals,
			     sizeof(wasm_global_inst));
	l.deftags = carve(&c, alignof(wasm_tag), m->ntags, sizeof(wasm_tag));
	l.refs = carve(&c, alignof(wasm_ref), nrefs, sizeof(wasm_ref));
	if (c.overflow || (b = calloc(1, c.total)) == NULL) {
		wasm_error_set(err, WASM_ERR_RESOURCE, WASM_NO_OFFSET,
			       "out of memory: instance");
		return NULL;
	}
	inst = (wasm_instance *)b;
	inst->type_ids = (uint32_t *)(b + l.type_ids);
	inst->funcs = (wasm_func **)(b + l.funcs);
	inst->tables = (wasm_table_inst **)(b + l.tables);
	inst->memories = (wasm_memory **)(b + l.memories);
	inst->globals = (wasm_global_inst **)(b + l.globals);
	inst->tags = (wasm_tag **)(b + l.tags);
	inst->elems = (wasm_elem_inst *)(b + l.elems);
	inst->datas = (wasm_data_inst *)(b + l.datas);
	inst->export_order = (uint32_t *)(b + l.export_order);
	inst->module = m;

	/* Defined objects sit right after imports in each index space. */
	for (i = 0; i < m->nfuncs; i++)
		inst->funcs[m->nimported_funcs + i] =
			(wasm_func *)(b + l.deffuncs) + i;
	for (i = 0; i < m->nglobals; i++)
		inst->globals[m->nimported_globals + i] =
			(wasm_global_inst *)(b + l.defglobals) + i;
	for (i = 0; i < m->ntags; i++)
		inst->tags[m->nimported_tags + i] =
			(wasm_tag *)(b + l.deftags) + i;
	nrefs = 0;
	for (i = 0; i < m->nelems; i++) {
		inst->elems[i].refs = (wasm_ref *)(b + l.refs) + nrefs;
		nrefs += m->elems[i].count;
	}
	return inst;
}

void wasm_instance_destroy(wasm_instance *inst)
{
	free(inst); /* one block; tables and memories are store objects */
}

/* ---- exports index ------------------------------------------------------ */

static int name_cmp(const uint8_t *a, size_t alen, const uint8_t *b,
		    size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	int c = n ? memcmp(a, b, n) : 0;

	if (c != 0)
		return c;
	return alen < blen ? -1 : alen > blen;
}

static int export_cmp(const wasm_module *m, uint32_t a, uint32_t b)
{
	const wasm_name *x = &m->exports[a].name, *y = &m->exports[b].name;

	return name_cmp(x->ptr, x->len, y->ptr, y->len);
}

static void sift_down(const wasm_module *m, uint32_t *v, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		uint32_t t;

		if (child >= n)
			return;
		if (child + 1 < n && export_cmp(m, v[child], v[child + 1]) < 0)
			child++;
		if (export_cmp(m, v[root], v[child]) >= 0)
			return;
		t = v[root];
		v[root] = v[child];
		v[child] = t;
		root = child;
	}
}

/* Heap sort: O(n log n) with no allocation and no qsort_r. */
static void sort_exports(const wasm_module *m, uint32_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = (uint32_t)i;
	for (i = n / 2; i > 0; i--)
		sift_down(m, v, i - 1, n);
	for (i = n; i > 1; i--) {
		uint32_t t = v[0];
		v[0] = v[i - 1];
		v[i - 1] = t;
		sift_down(m, v, 0, i - 1);
	}
}

bool wasm_instance_export(const wasm_instance *inst, const uint8_t *name,
			  size_t len, wasm_extern *out)
{
	const wasm_module *m = inst->module;
	size_t lo = 0, hi = m->nexports;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const wasm_export *e = &m->exports[inst->export_order[mid]];
		int c = name_cmp(e->name.ptr, e->name.len, name, len);

		if (c < 0) {
			lo = mid + 1;
		} else if (c > 0) {
			hi = mid;
		} else {
			wasm_extern x;

			x.kind = e->kind;
			switch (e->kind) {
			case WASM_EXTERN_FUNC:
				if (e->index >= wasm_module_nfuncs(m))
					return false;
				x.u.func = inst->funcs[e->index];
				break;
			case WASM_EXTERN_TABLE:
				if (e->index >= wasm_module_ntables(m))
					return false;
				x.u.table = inst->tables[e->index];
				break;
			case WASM_EXTERN_MEMORY:
				if (e->index >= wasm_module_nmemories(m))
					return false;
				x.u.memory = inst->memories[e->index];
				break;
			case WASM_EXTERN_GLOBAL:
				if (e->index >= wasm_module_nglobals(m))
					return false;
				x.u.global = inst->globals[e->index];
				break;
			case WASM_EXTERN_TAG:
				if (e->index >= wasm_module_ntags(m))
					return false;
				x.u.tag = inst->tags[e->index];
				break;
			default:
				return false;
			}
			if (out != NULL)
				*out = x;
			return true;
		}
	}
	return false;
}

/* ---- allocation --------------------------------------------------------- */

static int bad_module(wasm_error *err, const char *what)
{
	return wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
			      "malformed module structure: %s", what);
}

static int alloc_funcs(wasm_instance *inst, wasm_store *s, wasm_error *err)
{
	const wasm_module *m = inst->module;
	uint32_t i;

	for (i = 0; i < m->nfuncs; i++) {
		wasm_func *f = inst->funcs[m->nimported_funcs + i];
		uint32_t t = m->func_types[i];

		if (t >= m->ntypes)
			return bad_module(err, "function type index");
		f->type_id = inst->type_ids[t];
		f->kind = WASM_FUNC_WASM;
		f->type = wasm_store_type(s, f->type_id);
		f->u.wasm.inst = inst;
		f->u.wasm.funcidx = m->nimported_funcs + i;
		f->u.wasm.code = m->compiled != NULL ? m->compiled[i] : NULL;
	}
	return 0;
}

wasm_valtype wasm_instance_valtype(const wasm_instance *inst, wasm_valtype t)
{
	uint32_t k;

	if (!wasm_ref_typeidx(t, &k) || k >= inst->module->ntypes)
		return t;
	return wasm_reftype((uint8_t)t, wasm_ref_nullable(t),
			    WASM_HEAP_IDX0 + inst->type_ids[k]);
}

/*
 * Intern type i of the module in the store's form: the types it names
 * come before it (validation), so their ids are known; a reference to
 * itself is WASM_HEAP_SELF.  WASM_TYPE_ID_NONE when out of memory.
 */
static uint32_t intern_type(wasm_instance *inst, wasm_store *s, uint32_t i)
{
	const wasm_functype *ft = &inst->module->types[i];
	size_t n = (size_t)ft->nparams + ft->nresults;
	wasm_valtype *v;
	wasm_functype c;
	uint32_t id, k;

	v = malloc((n ? n : 1) * sizeof *v);
	if (v == NULL)
		return WASM_TYPE_ID_NONE;
	for (size_t j = 0; j < n; j++) {
		wasm_valtype t = j < ft->nparams ? ft->params[j]
						 : ft->results[j - ft->nparams];

		if (wasm_ref_typeidx(t, &k) && k >= i)
			t = wasm_reftype((uint8_t)t, wasm_ref_nullable(t),
					 WASM_HEAP_SELF);
		else
			t = wasm_instance_valtype(inst, t);
		v[j] = t;
	}
	c.nparams = ft->nparams;
	c.nresults = ft->nresults;
	c.params = v;
	c.results = v + ft->nparams;
	id = wasm_store_intern_type(s, &c);
	free(v);
	/* ids must fit a heap type code */
	if (id != WASM_TYPE_ID_NONE && id >= WASM_MAX_HEAP_IDX)
		return WASM_TYPE_ID_NONE;
	return id;
}

static int alloc_globals(wasm_instance *inst, wasm_error *err)
{
	const wasm_module *m = inst->module;
	uint32_t i;

	for (i = 0; i < m->nglobals; i++) {
		uint32_t idx = m->nimported_globals + i;
		wasm_global_inst *g = inst->globals[idx];

		g->type = m->globals[i].type;
		g->type.type = wasm_instance_valtype(inst, g->type.type);
		if (wasm_constexpr_eval(inst, idx, &m->globals[i].init,
					g->slots, err) != 0)
			return -1;
	}
	return 0;
}

static int alloc_tags(wasm_instance *inst, wasm_store *s, wasm_error *err)
{
	const wasm_module *m = inst->module;
	uint32_t i;

	for (i = 0; i < m->ntags; i++) {
		wasm_tag *t = inst->tags[m->nimported_tags + i];

		if (m->tags[i].typeidx >= m->ntypes)
			return bad_module(err, "tag type index");
		t->type_id = inst->type_ids[m->tags[i].typeidx];
		t->type = wasm_store_type(s, t->type_id);
	}
	return 0;
}

static int alloc_tables(wasm_instance *inst, wasm_store *s, wasm_error *err)
{
	const wasm_module *m = inst->module;
	uint32_t nglobals = wasm_module_nglobals(m), i;

	for (i = 0; i < m->ntables; i++) {
		uint64_t init[2] = {0, 0};
		wasm_table_inst *t;
		wasm_tabletype tt;

		if (m->tables[i].has_init &&
		    wasm_constexpr_eval(inst, nglobals, &m->tables[i].init,
					init, err) != 0)
			return -1;
		tt = m->tables[i].type;
		tt.elem = wasm_instance_valtype(inst, tt.elem);
		t = wasm_table_create(s, &tt, (wasm_ref)init[0], err);
		if (t == NULL)
			return -1;
		inst->tables[m->nimported_tables + i] = t;
	}
	return 0;
}

static int alloc_memories(wasm_instance *inst, wasm_store *s, wasm_error *err)
{
	const wasm_module *m = inst->module;
	uint32_t i;

	for (i = 0; i < m->nmemories; i++) {
		wasm_memory *mem = wasm_memory_create(s, &m->memories[i], err);

		if (mem == NULL)
			return -1;
		inst->memories[m->nimported_memories + i] = mem;
	}
	return 0;
}

/* Element segment instances: the spec evaluates every segment up front. */
static int alloc_segments(wasm_instance *inst, wasm_error *err)
{
	const wasm_module *m = inst->module;
	uint32_t nglobals = wasm_module_nglobals(m), i, j;

	for (i = 0; i < m->nelems; i++) {
		const wasm_elem *e = &m->elems[i];
		wasm_elem_inst *ei = &inst->elems[i];

		for (j = 0; j < e->count; j++) {
			uint64_t v[2];

			if (e->funcs != NULL) {
				if (e->funcs[j] >= wasm_module_nfuncs(m))
					return bad_module(err, "elem func");
				ei->refs[j] =
					(wasm_ref)inst->funcs[e->funcs[j]];
			} else if (e->exprs != NULL) {
				if (wasm_constexpr_eval(inst, nglobals,
							&e->exprs[j], v,
							err) != 0)
					return -1;
				ei->refs[j] = (wasm_ref)v[0];
			} else {
				return bad_module(err, "elem without items");
			}
		}
		ei->len = e->count;
	}
	for (i = 0; i < m->ndatas; i++) {
		inst->datas[i].bytes = m->datas[i].bytes;
		inst->datas[i].len = m->datas[i].len;
	}
	return 0;
}

/* ---- segment initialisation --------------------------------------------- */

/* Evaluates an active segment's offset for a 32- or 64-bit index type. */
static int eval_offset(const wasm_instance *inst, const wasm_constexpr *ce,
		       bool is64, uint64_t *off, wasm_error *err)
{
	uint64_t v[2];

	if (wasm_constexpr_eval(inst, wasm_module_nglobals(inst->module), ce, v,
				err) != 0)
		return -1;
	*off = is64 ? v[0] : (uint32_t)v[0];
	return 0;
}

/* Returns 0, -1 with *err, or 1 on a trap (stored in *trap). */
static int init_elems(wasm_instance *inst, wasm_trap_kind *trap,
		      wasm_error *err)
{
	const wasm_module *m = inst->module;
	uint32_t i;

	for (i = 0; i < m->nelems; i++) {
		const wasm_elem *e = &m->elems[i];
		wasm_elem_inst *ei = &inst->elems[i];
		wasm_table_inst *t;
		uint64_t off;

		if (e->mode == WASM_SEG_DECLARATIVE)
			ei->len = 0;
		if (e->mode != WASM_SEG_ACTIVE)
			continue;
		if (e->table >= wasm_module_ntables(m))
			return bad_module(err, "elem table index");
		t = inst->tables[e->table];
		if (eval_offset(inst, &e->offset, t->type.limits.is64, &off,
				err) != 0)
			return -1;
		if (off > t->size || ei->len > t->size - off) {
			*trap = WASM_TRAP_TABLE_OOB;
			return 1;
		}
		if (ei->len != 0)
			memcpy(t->elems + off, ei->refs,
			       ei->len * sizeof *ei->refs);
		ei->len = 0;
	}
	return 0;
}

static int init_datas(wasm_instance *inst, wasm_trap_kind *trap,
		      wasm_error *err)
{
	const wasm_module *m = inst->module;
	uint32_t i;

	for (i = 0; i < m->ndatas; i++) {
		const wasm_data *d = &m->datas[i];
		wasm_data_inst *di = &inst->datas[i];
		wasm_memory *mem;
		uint64_t off;

		if (d->mode != WASM_SEG_ACTIVE)
			continue;
		if (d->memory >= wasm_module_nmemories(m))
			return bad_module(err, "data memory index");
		mem = inst->memories[d->memory];
		if (eval_offset(inst, &d->offset, mem->type.limits.is64, &off,
				err) != 0)
			return -1;
		if (off > mem->size || di->len > mem->size - off) {
			*trap = WASM_TRAP_MEMORY_OOB;
			return 1;
		}
		if (di->len != 0)
			memcpy(wasm_memory_write(mem, off, di->len), di->bytes,
			       di->len);
		di->len = 0;
	}
	return 0;
}

/*
 * Runs the start function on a temporary exec, with the store's
 * start_fuel as its budget when one is set.
 */
static int run_start(wasm_instance *inst, wasm_store *s, wasm_trap_kind *trap,
		     wasm_error *err)
{
	const wasm_module *m = inst->module;
	wasm_exec *e;
	wasm_exec_status st;
	int rc = 0;

	if (m->start >= wasm_module_nfuncs(m))
		return bad_module(err, "start function index");
	e = wasm_exec_new(s, NULL);
	if (e == NULL)
		return wasm_error_set(err, WASM_ERR_RESOURCE, WASM_NO_OFFSET,
				      "out of memory: exec for start");
	if (s->limits.start_fuel != 0)
		wasm_exec_set_fuel(e, s->limits.start_fuel);
	st = wasm_exec_call(e, inst->funcs[m->start], NULL, 0);
	switch (st) {
	case WASM_EXEC_DONE:
		break;
	case WASM_EXEC_TRAP:
		*trap = wasm_exec_trap(e);
		if (*trap == WASM_TRAP_NONE)
			*trap = WASM_TRAP_HOST;
		rc = 1;
		break;
	case WASM_EXEC_EXCEPTION:
		*trap = WASM_TRAP_UNCAUGHT_EXCEPTION;
		rc = 1;
		break;
	case WASM_EXEC_OUT_OF_FUEL:
		*trap = WASM_TRAP_OUT_OF_FUEL;
		rc = 1;
		break;
	default: /* a start function cannot block: nobody would resume it */
		*trap = WASM_TRAP_HOST;
		rc = 1;
		break;
	}
	wasm_exec_free(e);
	return rc;
}

/* ---- wasm_instantiate --------------------------------------------------- */

int wasm_instantiate(wasm_store *s, const wasm_module *m,
		     const wasm_extern *imports, uint32_t nimports,
		     wasm_instance **out, wasm_trap_kind *trap, wasm_error *err)
{
	wasm_trap_kind trap_local;
	wasm_instance *inst;
	uint32_t i;
	int rc;

	if (trap == NULL)
		trap = &trap_local;
	*trap = WASM_TRAP_NONE;
	if (out != NULL)
		*out = NULL;
	if (err != NULL) {
		err->kind = WASM_ERR_NONE;
		err->offset = WASM_NO_OFFSET;
		err->msg[0] = 0;
	}
	if (s == NULL || m == NULL)
		return wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
				      "no store or module");
	if (!m->validated)
		return wasm_error_set(err, WASM_ERR_INVALID, WASM_NO_OFFSET,
				      "module is not validated");
	inst = instance_alloc(m, err);
	if (inst == NULL)
		return -1;
	inst->store = s;
	for (i = 0; i < m->ntypes; i++) {
		inst->type_ids[i] = intern_type(inst, s, i);
		if (inst->type_ids[i] == WASM_TYPE_ID_NONE) {
			free(inst);
			return wasm_error_set(err, WASM_ERR_RESOURCE,
					      WASM_NO_OFFSET,
					      "out of memory: types");
		}
	}
	if (wasm_link_imports(inst, m, imports, nimports, err) != 0) {
		free(inst);
		return -1;
	}
	/* From here on the store owns the instance, whatever happens. */
	if (wasm_store_own(s, inst, WASM_OBJ_INSTANCE) != 0) {
		free(inst);
		return wasm_error_set(err, WASM_ERR_RESOURCE, WASM_NO_OFFSET,
				      "out of memory: instance");
	}
	sort_exports(m, inst->export_order, m->nexports);
	if (alloc_funcs(inst, s, err) != 0 || alloc_globals(inst, err) != 0 ||
	    alloc_tags(inst, s, err) != 0 || alloc_tables(inst, s, err) != 0 ||
	    alloc_memories(inst, s, err) != 0 || alloc_segments(inst, err) != 0)
		return -1;
	rc = init_elems(inst, trap, err);
	if (rc == 0)
		rc = init_datas(inst, trap, err);
	if (rc == 0 && m->has_start)
		rc = run_start(inst, s, trap, err);
	if (rc != 0)
		return -1; /* a trap leaves err->kind == WASM_ERR_NONE */
	if (out != NULL)
		*out = inst;
	return 0;
}
