/*
 * type.c - primitive singletons, names of kinds, the cached
 * ABI facts of a type node (alignment, elem_size, flat count: digest 2.4
 * and 2.10, definitions.py's alignment/elem_size/flatten_type) and
 * function-type flattening (flatten_functype).
 *
 * Contract: cm_type_finish() is called once on every new value-type node
 * after its children are set; it never recurses beyond the direct
 * children, so the cost of building a type is linear.  Sizes saturate
 * instead of wrapping (list<u64, 536870912> must be "too big", not 0).
 *
 * Allocations sized by a guest or a client (issue 18 audit): none.
 */
#include <string.h>

#include "value/type.h"

#define SAT_CAP ((uint64_t)1 << 40)

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b > SAT_CAP ? SAT_CAP : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	if (a == 0 || b == 0)
		return 0;
	if (a > SAT_CAP / b)
		return SAT_CAP;
	return a * b;
}

static uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint64_t align_to(uint64_t x, uint64_t a)
{
	return sat_mul((x + a - 1) / a, a);
}

/* ---- primitives --------------------------------------------------------- */

#define PRIM(k, al, sz, fl)                                                    \
	[k] = {                                                                \
		.kind = k,                                                     \
		.abi = {.align = {al, al},                                     \
			.size = {sz, sz},                                      \
			.flat_count = fl,                                      \
			.depth = 1,                                            \
			.type_size = 1},                                       \
	}

static const cm_type prims[CM_LAST_PRIM + 1] = {
	PRIM(CM_BOOL, 1, 1, 1),
	PRIM(CM_S8, 1, 1, 1),
	PRIM(CM_U8, 1, 1, 1),
	PRIM(CM_S16, 2, 2, 1),
	PRIM(CM_U16, 2, 2, 1),
	PRIM(CM_S32, 4, 4, 1),
	PRIM(CM_U32, 4, 4, 1),
	PRIM(CM_S64, 8, 8, 1),
	PRIM(CM_U64, 8, 8, 1),
	PRIM(CM_F32, 4, 4, 1),
	PRIM(CM_F64, 8, 8, 1),
	PRIM(CM_CHAR, 4, 4, 1),
	[CM_STRING] = {.kind = CM_STRING,
		       .abi = {.align = {4, 8},
			       .size = {8, 16},
			       .flat_count = 2,
			       .has_memory = true,
			       .depth = 1,
			       .type_size = 1}},
	PRIM(CM_ERROR_CONTEXT, 4, 4, 1),
};

const cm_type *cm_prim(cm_type_kind kind)
{
	return kind <= CM_LAST_PRIM ? &prims[kind] : NULL;
}

static const char *const kind_names[CM_NTYPE_KINDS] = {
	[CM_BOOL] = "bool",
	[CM_S8] = "s8",
	[CM_U8] = "u8",
	[CM_S16] = "s16",
	[CM_U16] = "u16",
	[CM_S32] = "s32",
	[CM_U32] = "u32",
	[CM_S64] = "s64",
	[CM_U64] = "u64",
	[CM_F32] = "f32",
	[CM_F64] = "f64",
	[CM_CHAR] = "char",
	[CM_STRING] = "string",
	[CM_ERROR_CONTEXT] = "error-context",
	[CM_LIST] = "list",
	[CM_RECORD] = "record",
	[CM_TUPLE] = "tuple",
	[CM_VARIANT] = "variant",
	[CM_ENUM] = "enum",
	[CM_OPTION] = "option",
	[CM_RESULT] = "result",
	[CM_FLAGS] = "flags",
	[CM_OWN] = "own",
	[CM_BORROW] = "borrow",
	[CM_STREAM] = "stream",
	[CM_FUTURE] = "future",
	[CM_MAP] = "map",
	[CM_FUNC] = "func",
	[CM_COMPONENT] = "component",
	[CM_INSTANCE] = "instance",
	[CM_RESOURCE] = "resource",
};

const char *cm_type_kind_name(cm_type_kind k)
{
	return k < CM_NTYPE_KINDS ? kind_names[k] : "?";
}

/* ---- despecialized views ----------------------------------------------- */

uint32_t cm_type_ncases(const cm_type *t)
{
	switch (t->kind) {
	case CM_VARIANT:
		return t->u.variant.n;
	case CM_ENUM:
		return t->u.enm.n;
	case CM_OPTION:
	case CM_RESULT:
		return 2;
	default:
		return 0;
	}
}

const cm_type *cm_type_case(const cm_type *t, uint32_t i)
{
	switch (t->kind) {
	case CM_VARIANT:
		return i < t->u.variant.n ? t->u.variant.fields[i].type : NULL;
	case CM_OPTION:
		return i == 1 ? t->u.option.elem : NULL;
	case CM_RESULT:
		return i == 0	? t->u.result.ok
		       : i == 1 ? t->u.result.err
				: NULL;
	default:
		return NULL;
	}
}

uint32_t cm_type_nfields(const cm_type *t)
{
	switch (t->kind) {
	case CM_RECORD:
		return t->u.record.n;
	case CM_TUPLE:
		return t->u.tuple.n;
	default:
		return 0;
	}
}

const cm_type *cm_type_field(const cm_type *t, uint32_t i)
{
	switch (t->kind) {
	case CM_RECORD:
		return i < t->u.record.n ? t->u.record.fields[i].type : NULL;
	case CM_TUPLE:
		return i < t->u.tuple.n ? t->u.tuple.elems[i] : NULL;
	default:
		return NULL;
	}
}

/* ---- cached facts -------------------------------------------------------- */

static void absorb(cm_abi_info *ai, const cm_type *child)
{
	if (child == NULL)
		return;
	ai->has_borrow |= child->abi.has_borrow;
	ai->has_resource |= child->abi.has_resource;
	ai->has_var |= child->abi.has_var;
	if (child->abi.depth + 1 > ai->depth)
		ai->depth = child->abi.depth + 1;
	ai->type_size = sat32((uint64_t)ai->type_size + child->abi.type_size);
}

static void layout_record(cm_abi_info *ai, uint32_t n,
			  const cm_type *(*field)(const cm_type *, uint32_t),
			  const cm_type *t)
{
	uint64_t flat = 0;

	for (int p = 0; p < 2; p++) {
		uint64_t s = 0;
		uint32_t al = 1;

		for (uint32_t i = 0; i < n; i++) {
			const cm_type *f = field(t, i);

			if (f->abi.align[p] > al)
				al = f->abi.align[p];
			s = align_to(s, f->abi.align[p]);
			s = sat_add(s, f->abi.size[p]);
		}
		ai->align[p] = al;
		ai->size[p] = align_to(s, al);
	}
	for (uint32_t i = 0; i < n; i++) {
		const cm_type *f = field(t, i);

		flat = sat_add(flat, f->abi.flat_count);
		ai->has_memory |= f->abi.has_memory;
		absorb(ai, f);
	}
	ai->flat_count = sat32(flat);
}

static void layout_variant(cm_abi_info *ai, const cm_type *t)
{
	uint32_t n = cm_type_ncases(t);
	uint32_t disc = cm_discriminant_size(n);
	uint64_t flat = 0;

	for (int p = 0; p < 2; p++) {
		uint32_t cal = 1, al;
		uint64_t cs = 0, s;

		for (uint32_t i = 0; i < n; i++) {
			const cm_type *c = cm_type_case(t, i);

			if (c == NULL)
				continue;
			if (c->abi.align[p] > cal)
				cal = c->abi.align[p];
			if (c->abi.size[p] > cs)
				cs = c->abi.size[p];
		}
		al = disc > cal ? disc : cal;
		s = align_to(disc, cal);
		s = sat_add(s, cs);
		ai->align[p] = al;
		ai->size[p] = align_to(s, al);
	}
	for (uint32_t i = 0; i < n; i++) {
		const cm_type *c = cm_type_case(t, i);

		if (c == NULL)
			continue;
		if (c->abi.flat_count > flat)
			flat = c->abi.flat_count;
		ai->has_memory |= c->abi.has_memory;
		absorb(ai, c);
	}
	ai->flat_count = sat32(sat_add(flat, 1));
}

void cm_type_finish(cm_type *t)
{
	cm_abi_info *ai = &t->abi;
	const cm_type *e;

	memset(ai, 0, sizeof *ai);
	ai->depth = 1;
	ai->type_size = 1;
	switch (t->kind) {
	case CM_LIST:
		e = t->u.list.elem;
		absorb(ai, e);
		if (t->u.list.len == 0) {
			ai->align[0] = 4;
			ai->align[1] = 8;
			ai->size[0] = 8;
			ai->size[1] = 16;
			ai->flat_count = 2;
			ai->has_memory = true;
		} else {
			for (int p = 0; p < 2; p++) {
				ai->align[p] = e->abi.align[p];
				ai->size[p] =
					sat_mul(e->abi.size[p], t->u.list.len);
			}
			ai->flat_count = sat32(
				sat_mul(e->abi.flat_count, t->u.list.len));
			ai->has_memory = e->abi.has_memory;
		}
		break;
	case CM_MAP:
		absorb(ai, t->u.map.key);
		absorb(ai, t->u.map.value);
		ai->align[0] = 4;
		ai->align[1] = 8;
		ai->size[0] = 8;
		ai->size[1] = 16;
		ai->flat_count = 2;
		ai->has_memory = true;
		break;
	case CM_RECORD:
	case CM_TUPLE:
		layout_record(ai, cm_type_nfields(t), cm_type_field, t);
		break;
	case CM_VARIANT:
	case CM_ENUM:
	case CM_OPTION:
	case CM_RESULT:
		layout_variant(ai, t);
		break;
	case CM_FLAGS: {
		uint32_t n = t->u.flags.n, sz = n <= 8 ? 1 : n <= 16 ? 2 : 4;

		ai->align[0] = ai->align[1] = sz;
		ai->size[0] = ai->size[1] = sz;
		ai->flat_count = 1;
		break;
	}
	case CM_OWN:
	case CM_BORROW:
		ai->align[0] = ai->align[1] = 4;
		ai->size[0] = ai->size[1] = 4;
		ai->flat_count = 1;
		ai->has_resource = true;
		ai->has_borrow = t->kind == CM_BORROW;
		ai->depth = 2;
		ai->type_size = 2;
		break;
	case CM_STREAM:
	case CM_FUTURE:
		absorb(ai, t->u.stream.elem);
		ai->align[0] = ai->align[1] = 4;
		ai->size[0] = ai->size[1] = 4;
		ai->flat_count = 1;
		break;
	case CM_FUNC:
		for (uint32_t i = 0; i < t->u.func.nparams; i++)
			absorb(ai, t->u.func.params[i].type);
		absorb(ai, t->u.func.result);
		break;
	default:
		if (t->kind <= CM_LAST_PRIM)
			*ai = prims[t->kind].abi;
		break;
	}
}

/* ---- flattening -----------------------------------------------------------
 */

wasm_valtype cm_flat_join(wasm_valtype a, wasm_valtype b)
{
	if (a == b)
		return a;
	if ((a == WASM_I32 && b == WASM_F32) ||
	    (a == WASM_F32 && b == WASM_I32))
		return WASM_I32;
	return WASM_I64;
}

/* The k-th flat type of t (k < flat_count(t)); recursion is bounded by
 * the type depth limit. */
static wasm_valtype slot_type(const cm_type *t, bool p64, uint32_t k)
{
	wasm_valtype ptr = p64 ? WASM_I64 : WASM_I32;

	switch (t->kind) {
	case CM_S64:
	case CM_U64:
		return WASM_I64;
	case CM_F32:
		return WASM_F32;
	case CM_F64:
		return WASM_F64;
	case CM_STRING:
	case CM_MAP:
		return ptr;
	case CM_LIST:
		if (t->u.list.len == 0)
			return ptr;
		return slot_type(t->u.list.elem, p64,
				 k % t->u.list.elem->abi.flat_count);
	case CM_RECORD:
	case CM_TUPLE: {
		uint32_t n = cm_type_nfields(t);

		for (uint32_t i = 0; i < n; i++) {
			const cm_type *f = cm_type_field(t, i);

			if (k < f->abi.flat_count)
				return slot_type(f, p64, k);
			k -= f->abi.flat_count;
		}
		return WASM_I32;
	}
	case CM_VARIANT:
	case CM_ENUM:
	case CM_OPTION:
	case CM_RESULT: {
		uint32_t n = cm_type_ncases(t);
		wasm_valtype v = 0;

		if (k == 0)
			return WASM_I32;
		for (uint32_t i = 0; i < n; i++) {
			const cm_type *c = cm_type_case(t, i);

			if (c == NULL || c->abi.flat_count <= k - 1)
				continue;
			wasm_valtype s = slot_type(c, p64, k - 1);

			v = v == 0 ? s : cm_flat_join(v, s);
		}
		return v == 0 ? WASM_I32 : v;
	}
	default:
		return WASM_I32;
	}
}

uint32_t cm_flatten(const cm_type *t, bool ptr64, wasm_valtype *out,
		    uint32_t max)
{
	uint32_t n = t->abi.flat_count;

	for (uint32_t k = 0; k < n && k < max; k++)
		out[k] = slot_type(t, ptr64, k);
	return n;
}

void cm_flatten_functype(const cm_type *ft, bool async, bool callback,
			 bool ptr64, cm_abi_context ctx, cm_flat_functype *out)
{
	const cm_functype *f = &ft->u.func;
	wasm_valtype ptr = ptr64 ? WASM_I64 : WASM_I32;
	uint64_t np = 0;
	uint32_t nr = f->result ? f->result->abi.flat_count : 0;
	uint32_t maxp;

	memset(out, 0, sizeof *out);
	for (uint32_t i = 0; i < f->nparams; i++)
		np = sat_add(np, f->params[i].type->abi.flat_count);
	maxp = async && ctx == CM_LOWER ? CM_MAX_FLAT_ASYNC_PARAMS
					: CM_MAX_FLAT_PARAMS;
	if (np > maxp) {
		out->params[0] = ptr;
		out->nparams = 1;
	} else {
		uint32_t k = 0;

		for (uint32_t i = 0; i < f->nparams; i++)
			k += cm_flatten(f->params[i].type, ptr64,
					out->params + k,
					CM_MAX_FLAT_PARAMS - k);
		out->nparams = k;
	}
	if (!async) {
		if (nr > CM_MAX_FLAT_RESULTS) {
			if (ctx == CM_LIFT) {
				out->results[0] = ptr;
				out->nresults = 1;
			} else {
				out->params[out->nparams++] = ptr;
			}
		} else if (nr == 1) {
			cm_flatten(f->result, ptr64, out->results, 1);
			out->nresults = 1;
		}
		return;
	}
	if (ctx == CM_LIFT) {
		if (callback) {
			out->results[0] = WASM_I32;
			out->nresults = 1;
		}
		return;
	}
	if (f->result != NULL)
		out->params[out->nparams++] = ptr;
	out->results[0] = WASM_I32;
	out->nresults = 1;
}

/* ---- structural equality ------------------------------------------------ */

static bool same_str(const cm_str *a, const cm_str *b)
{
	return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
}

static bool same_opt(const cm_type *a, const cm_type *b)
{
	return a == NULL ? b == NULL : b != NULL && cm_valtype_same(a, b);
}

bool cm_valtype_same(const cm_type *a, const cm_type *b)
{
	if (a == b)
		return true;
	if (a->kind != b->kind || !cm_type_is_value(a))
		return false;
	switch (a->kind) {
	case CM_LIST:
		return a->u.list.len == b->u.list.len &&
		       cm_valtype_same(a->u.list.elem, b->u.list.elem);
	case CM_RECORD:
	case CM_VARIANT:
		if (a->u.record.n != b->u.record.n)
			return false;
		for (uint32_t i = 0; i < a->u.record.n; i++)
			if (!same_str(&a->u.record.fields[i].label,
				      &b->u.record.fields[i].label) ||
			    !same_opt(a->u.record.fields[i].type,
				      b->u.record.fields[i].type))
				return false;
		return true;
	case CM_TUPLE:
		if (a->u.tuple.n != b->u.tuple.n)
			return false;
		for (uint32_t i = 0; i < a->u.tuple.n; i++)
			if (!cm_valtype_same(a->u.tuple.elems[i],
					     b->u.tuple.elems[i]))
				return false;
		return true;
	case CM_ENUM:
	case CM_FLAGS:
		if (a->u.enm.n != b->u.enm.n)
			return false;
		for (uint32_t i = 0; i < a->u.enm.n; i++)
			if (!same_str(&a->u.enm.labels[i], &b->u.enm.labels[i]))
				return false;
		return true;
	case CM_OPTION:
	case CM_STREAM:
	case CM_FUTURE:
		return same_opt(a->u.option.elem, b->u.option.elem);
	case CM_RESULT:
		return same_opt(a->u.result.ok, b->u.result.ok) &&
		       same_opt(a->u.result.err, b->u.result.err);
	case CM_OWN:
	case CM_BORROW:
		return cm_handle_resource(a) == cm_handle_resource(b);
	case CM_MAP:
		return cm_valtype_same(a->u.map.key, b->u.map.key) &&
		       cm_valtype_same(a->u.map.value, b->u.map.value);
	default:
		return cm_type_is_prim(a); /* same primitive kind */
	}
}
