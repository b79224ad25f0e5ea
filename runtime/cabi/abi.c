/*
 * abi.c - load / store (values in linear memory), lift_flat / lower_flat
 * (values as core values, with the variant join coercions), and
 * lift_flat_values / lower_flat_values (spilling through memory past the
 * flat limit) of definitions.py, for every value type.
 *
 * Contract (cabi.h): on failure the partly built output value is freed;
 * memory and the handle table may be partly written, as after a trap in
 * the reference.  Values handed in by the host are checked against their
 * type while being lowered (CABI_ERR_VALUE on mismatch).  Recursion
 * follows the type, whose depth validation bounds (CM_MAX_TYPE_DEPTH).
 * The memory's data pointer is re-read after anything that may run guest
 * code (realloc inside a nested string or list).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - lift_seq, lift_payload (every cm_val array and payload of a lifted
 *    list, record, tuple, variant, option, result): charged to the
 *    store's budget first (cabi_charge, cabi_budget in cabi.h,
 *    limits.hostBytes), so one lifted value stays within it however its
 *    lists alias one range of memory; the outermost list is measured
 *    whole before any of it is made (lift_size.c); a list's length is
 *    CABI_MAX_LIST_BYTE_LENGTH (2^28 - 1 bytes) at most.
 *  - a list<u8>/list<s8> (byte form, val.h cm_vals): its n bytes,
 *    charged the same way (n bytes, not n cm_vals) and copied from
 *    memory in one memcpy.
 *  - string bytes: string.c, charged the same way.
 *  - lift_flat_variant, lower_flat_variant: flat-type arrays of
 *    cm_flat_count entries, bounded by the static type (validation's
 *    CM_MAX_TYPE_DEPTH and CM_MAX_TYPE_SIZE).
 *  - lowering allocates nothing on the host: its memory comes from the
 *    guest's realloc.
 */
#include <stdlib.h>

#include "cabi/internal.h"

static int load(cabi_cx *cx, uint64_t ptr, const cm_type *t, cm_val *out);
static int store(cabi_cx *cx, const cm_val *v, const cm_type *t, uint64_t ptr);

static uint32_t align_of(const cabi_cx *cx, const cm_type *t)
{
	return cm_alignment(t, cx->opts.ptr64);
}

static uint64_t size_of(const cabi_cx *cx, const cm_type *t)
{
	return t->abi.size[cx->opts.ptr64];
}

static int check_kind(cabi_cx *cx, const cm_val *v, const cm_type *t)
{
	if (v->kind != t->kind)
		return cabi_bad_value(cx,
				      "value does not match its type: "
				      "expected %s, found %s",
				      cm_type_kind_name(t->kind),
				      cm_type_kind_name(v->kind));
	return 0;
}

/* The element type of a list-like type (list, fixed list, map). */
static const cm_type *elem_of(const cm_type *t)
{
	return t->kind == CM_MAP ? t->u.map.entry : t->u.list.elem;
}

static bool is_dynamic_list(const cm_type *t)
{
	return t->kind == CM_MAP || (t->kind == CM_LIST && t->u.list.len == 0);
}

static uint64_t wrap_signed(uint64_t x, uint32_t bits)
{
	uint64_t m = 1ull << (bits - 1);

	x &= (bits == 64) ? ~0ull : (1ull << bits) - 1;
	return (x ^ m) - m;
}

static int char_ok(cabi_cx *cx, uint64_t c)
{
	if (c >= 0x110000 || (c >= 0xd800 && c <= 0xdfff))
		return cabi_trap(cx, CABI_MSG_INVALID_CHAR);
	return 0;
}

static uint32_t flags_mask(const cm_type *t)
{
	uint32_t n = t->u.flags.n;

	return n >= 32 ? 0xffffffffu : (1u << n) - 1;
}

/* Payload offset of a variant: align_to(disc, max case alignment), which
 * for powers of two is the variant's own alignment. */
static uint64_t payload_offset(const cabi_cx *cx, const cm_type *t)
{
	return align_of(cx, t);
}

/* ---- async values and error contexts --------------------------------------
 */

static int lift_async(cabi_cx *cx, uint32_t i, const cm_type *t, cm_val *out)
{
	cabi_elem *e;

	if (cx->hooks != NULL && cx->hooks->lift_async != NULL)
		return cx->hooks->lift_async(cx, i, t, out);
	if (t->kind != CM_ERROR_CONTEXT)
		return cabi_trap(cx, "%s values are not supported yet",
				 cm_type_kind_name(t->kind));
	e = cabi_table_get_kind(cx->table, i, CABI_ELEM_ERROR_CONTEXT,
				&cx->err);
	if (e == NULL)
		return -1;
	*out = cm_val_bool(false);
	out->kind = CM_ERROR_CONTEXT;
	out->u.async.obj = e->u.obj;
	return 0;
}

static int lower_async(cabi_cx *cx, const cm_val *v, const cm_type *t,
		       uint32_t *i)
{
	cabi_elem e;

	if (check_kind(cx, v, t))
		return -1;
	if (cx->hooks != NULL && cx->hooks->lower_async != NULL)
		return cx->hooks->lower_async(cx, v, t, i);
	if (t->kind != CM_ERROR_CONTEXT)
		return cabi_trap(cx, "%s values are not supported yet",
				 cm_type_kind_name(t->kind));
	if (cx->table == NULL)
		return cabi_bad_value(cx, "no handle table");
	memset(&e, 0, sizeof e);
	e.kind = CABI_ELEM_ERROR_CONTEXT;
	e.u.obj = v->u.async.obj;
	return cabi_table_add(cx->table, &e, i, &cx->err);
}

/*
 * The allocations of a lift: charged to the store's budget first
 * (cabi_charge), so a value whose lifted form would pass it traps
 * before the host allocates it.  -1 with cx->err set.
 */
static int lift_seq(cabi_cx *cx, cm_val *out, cm_type_kind kind, uint32_t n)
{
	if (cabi_charge(cx, CABI_VALS_BYTES(n)))
		return -1;
	if (cm_val_seq(out, kind, n))
		return cabi_nomem(cx);
	return 0;
}

static int lift_payload(cabi_cx *cx, cm_val *out, cm_type_kind kind,
			uint32_t index)
{
	if (cabi_charge(cx, CABI_VALS_BYTES(1)))
		return -1;
	if (cm_val_case_payload(out, kind, index))
		return cabi_nomem(cx);
	return 0;
}

/* ---- loading
 * ----------------------------------------------------------------- */

int cabi_load_list_from_valid_range(cabi_cx *cx, uint64_t ptr, uint32_t length,
				    const cm_type *elem, cm_val *out)
{
	uint64_t sz = size_of(cx, elem);

	for (uint32_t i = 0; i < length; i++) {
		if (load(cx, ptr + i * sz, elem, &out[i])) {
			cm_vals_free(out, i);
			return -1;
		}
	}
	return 0;
}

static int load_list_from_range(cabi_cx *cx, uint64_t ptr, uint64_t length,
				const cm_type *t, cm_val *out)
{
	const cm_type *elem = elem_of(t);
	uint64_t sz = size_of(cx, elem);
	bool outer;
	int rc;

	if (length > CABI_MAX_LIST_BYTE_LENGTH / sz)
		return cabi_trap(cx, CABI_MSG_LIST_OOB);
	if (ptr % align_of(cx, elem) != 0)
		return cabi_trap(cx, CABI_MSG_UNALIGNED);
	if (!cabi_in_bounds(cx, ptr, length * sz))
		return cabi_trap(cx, CABI_MSG_LIST_OOB);
	/* the outermost list is measured whole before anything is made */
	outer = !cx->sized;
	if (outer && !cabi_lift_list_fits(cx, ptr, length, elem))
		return cabi_budget_trap(cx);
	cx->sized = true;
	if (cm_type_is_bytes(t)) {
		/* byte form: n bytes, one copy (sz is 1, any ptr aligned) */
		rc = cabi_charge(cx, length);
		if (rc == 0 &&
		    cm_val_bytes(out, length ? cabi_mem(cx) + ptr : NULL,
				 (uint32_t)length))
			rc = cabi_nomem(cx);
		if (outer)
			cx->sized = false;
		return rc;
	}
	rc = lift_seq(cx, out, t->kind, (uint32_t)length);
	if (rc == 0 &&
	    cabi_load_list_from_valid_range(cx, ptr, (uint32_t)length, elem,
					    out->u.list.elems)) {
		free(out->u.list.elems);
		*out = cm_val_bool(false);
		rc = -1;
	}
	if (outer)
		cx->sized = false;
	return rc;
}

static int load_record(cabi_cx *cx, uint64_t ptr, const cm_type *t, cm_val *out)
{
	uint32_t n = cm_type_nfields(t);

	if (lift_seq(cx, out, t->kind, n))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		const cm_type *f = cm_type_field(t, i);

		ptr = cabi_align_to(ptr, align_of(cx, f));
		if (load(cx, ptr, f, &out->u.list.elems[i])) {
			cm_val_free(out);
			return -1;
		}
		ptr += size_of(cx, f);
	}
	return 0;
}

static int load_variant(cabi_cx *cx, uint64_t ptr, const cm_type *t,
			cm_val *out)
{
	uint32_t n = cm_type_ncases(t);
	uint32_t disc_size = cm_discriminant_size(n);
	uint64_t case_index = cabi_load_int(cx, ptr, disc_size);
	const cm_type *c;

	if (case_index >= n)
		return cabi_trap(cx, CABI_MSG_INVALID_DISCRIMINANT);
	c = cm_type_case(t, (uint32_t)case_index);
	if (c == NULL) {
		*out = cm_val_case(t->kind, (uint32_t)case_index);
		return 0;
	}
	if (lift_payload(cx, out, t->kind, (uint32_t)case_index))
		return -1;
	if (load(cx, ptr + payload_offset(cx, t), c, out->u.variant.payload)) {
		cm_val_free(out);
		return -1;
	}
	return 0;
}

static int load(cabi_cx *cx, uint64_t ptr, const cm_type *t, cm_val *out)
{
	uint32_t p = cabi_ptr_size(cx);

	*out = cm_val_bool(false);
	switch (t->kind) {
	case CM_BOOL:
		*out = cm_val_bool(cabi_load_int(cx, ptr, 1) != 0);
		return 0;
	case CM_U8:
		*out = cm_val_u8((uint8_t)cabi_load_int(cx, ptr, 1));
		return 0;
	case CM_U16:
		*out = cm_val_u16((uint16_t)cabi_load_int(cx, ptr, 2));
		return 0;
	case CM_U32:
		*out = cm_val_u32((uint32_t)cabi_load_int(cx, ptr, 4));
		return 0;
	case CM_U64:
		*out = cm_val_u64(cabi_load_int(cx, ptr, 8));
		return 0;
	case CM_S8:
		*out = cm_val_s8((int8_t)cabi_load_int(cx, ptr, 1));
		return 0;
	case CM_S16:
		*out = cm_val_s16((int16_t)cabi_load_int(cx, ptr, 2));
		return 0;
	case CM_S32:
		*out = cm_val_s32((int32_t)cabi_load_int(cx, ptr, 4));
		return 0;
	case CM_S64:
		*out = cm_val_s64((int64_t)cabi_load_int(cx, ptr, 8));
		return 0;
	case CM_F32:
		*out = cm_val_f32_bits((uint32_t)cabi_load_int(cx, ptr, 4));
		return 0;
	case CM_F64:
		*out = cm_val_f64_bits(cabi_load_int(cx, ptr, 8));
		return 0;
	case CM_CHAR: {
		uint64_t c = cabi_load_int(cx, ptr, 4);

		if (char_ok(cx, c))
			return -1;
		*out = cm_val_char((uint32_t)c);
		return 0;
	}
	case CM_STRING:
		return cabi_load_string_from_range(
			cx, cabi_load_int(cx, ptr, p),
			cabi_load_int(cx, ptr + p, p), out);
	case CM_LIST:
	case CM_MAP:
		if (!is_dynamic_list(t)) {
			if (lift_seq(cx, out, CM_LIST, t->u.list.len))
				return -1;
			if (cabi_load_list_from_valid_range(
				    cx, ptr, t->u.list.len, t->u.list.elem,
				    out->u.list.elems)) {
				free(out->u.list.elems);
				*out = cm_val_bool(false);
				return -1;
			}
			return 0;
		}
		return load_list_from_range(cx, cabi_load_int(cx, ptr, p),
					    cabi_load_int(cx, ptr + p, p), t,
					    out);
	case CM_RECORD:
	case CM_TUPLE:
		return load_record(cx, ptr, t, out);
	case CM_VARIANT:
	case CM_ENUM:
	case CM_OPTION:
	case CM_RESULT:
		return load_variant(cx, ptr, t, out);
	case CM_FLAGS:
		*out = cm_val_flags((uint32_t)cabi_load_int(
					    cx, ptr, (uint32_t)size_of(cx, t)) &
				    flags_mask(t));
		return 0;
	case CM_OWN:
		return cabi_lift_own(cx, (uint32_t)cabi_load_int(cx, ptr, 4), t,
				     out);
	case CM_BORROW:
		return cabi_lift_borrow(cx, (uint32_t)cabi_load_int(cx, ptr, 4),
					t, out);
	case CM_STREAM:
	case CM_FUTURE:
	case CM_ERROR_CONTEXT:
		return lift_async(cx, (uint32_t)cabi_load_int(cx, ptr, 4), t,
				  out);
	default:
		return cabi_bad_value(cx, "%s is not a value type",
				      cm_type_kind_name(t->kind));
	}
}

int cabi_load(cabi_cx *cx, uint64_t ptr, const cm_type *t, cm_val *out)
{
	*out = cm_val_bool(false);
	if (cabi_need_memory(cx))
		return -1;
	if (ptr % align_of(cx, t) != 0)
		return cabi_trap(cx, CABI_MSG_UNALIGNED);
	if (!cabi_in_bounds(cx, ptr, size_of(cx, t)))
		return cabi_trap(cx, CABI_MSG_LIST_OOB);
	return load(cx, ptr, t, out);
}

/* ---- storing
 * ------------------------------------------------------------------ */

int cabi_store_list_into_valid_range(cabi_cx *cx, const cm_val *vs, uint32_t n,
				     uint64_t ptr, const cm_type *elem)
{
	uint64_t sz = size_of(cx, elem);

	for (uint32_t i = 0; i < n; i++)
		if (store(cx, &vs[i], elem, ptr + i * sz))
			return -1;
	return 0;
}

/* A list value in the form its type has (val.h cm_vals): byte form
 * exactly for list<u8>/list<s8>, which may also come in element form
 * from a host that made it by hand (then stored element by element). */
static int check_list_form(cabi_cx *cx, const cm_val *v, const cm_type *t)
{
	if (v->u.list.bytes != NULL && !cm_type_is_bytes(t))
		return cabi_bad_value(cx,
				      "list value in byte form, "
				      "expected list<%s>",
				      cm_type_kind_name(elem_of(t)->kind));
	return 0;
}

static int store_list_into_range(cabi_cx *cx, const cm_val *v, const cm_type *t,
				 uint64_t *ptr, uint64_t *length)
{
	const cm_type *elem = elem_of(t);
	uint64_t sz = size_of(cx, elem), byte_length, p;
	uint32_t n = v->u.list.n;

	if (check_list_form(cx, v, t))
		return -1;
	if (n > CABI_REALLOC_MAX / sz)
		return cabi_trap(cx, CABI_MSG_LIST_TOO_LONG);
	byte_length = n * sz;
	if (cabi_realloc_checked(cx, 0, 0, align_of(cx, elem), byte_length,
				 CABI_MSG_LIST_OOB, &p))
		return -1;
	if (v->u.list.bytes != NULL)
		memcpy(cabi_mem(cx) + p, v->u.list.bytes, n); /* byte form */
	else if (cabi_store_list_into_valid_range(cx, v->u.list.elems, n, p,
						  elem))
		return -1;
	*ptr = p;
	*length = n;
	return 0;
}

static int store_record(cabi_cx *cx, const cm_val *v, const cm_type *t,
			uint64_t ptr)
{
	uint32_t n = cm_type_nfields(t);

	if (v->u.list.n != n)
		return cabi_bad_value(cx, "%s value has %u fields, expected %u",
				      cm_type_kind_name(t->kind), v->u.list.n,
				      n);
	for (uint32_t i = 0; i < n; i++) {
		const cm_type *f = cm_type_field(t, i);

		ptr = cabi_align_to(ptr, align_of(cx, f));
		if (store(cx, &v->u.list.elems[i], f, ptr))
			return -1;
		ptr += size_of(cx, f);
	}
	return 0;
}

/* Case index and payload type of a variant value, checked. */
static int match_case(cabi_cx *cx, const cm_val *v, const cm_type *t,
		      const cm_type **c)
{
	if (v->u.variant.index >= cm_type_ncases(t))
		return cabi_bad_value(cx, "%s case index %u out of range",
				      cm_type_kind_name(t->kind),
				      v->u.variant.index);
	*c = cm_type_case(t, v->u.variant.index);
	if ((*c == NULL) != (v->u.variant.payload == NULL))
		return cabi_bad_value(cx, "%s case %u payload %s",
				      cm_type_kind_name(t->kind),
				      v->u.variant.index,
				      *c == NULL ? "not expected" : "missing");
	return 0;
}

static int store_variant(cabi_cx *cx, const cm_val *v, const cm_type *t,
			 uint64_t ptr)
{
	const cm_type *c;
	uint32_t disc_size = cm_discriminant_size(cm_type_ncases(t));

	if (match_case(cx, v, t, &c))
		return -1;
	cabi_store_int(cx, v->u.variant.index, ptr, disc_size);
	if (c == NULL)
		return 0;
	return store(cx, v->u.variant.payload, c, ptr + payload_offset(cx, t));
}

static int store(cabi_cx *cx, const cm_val *v, const cm_type *t, uint64_t ptr)
{
	uint32_t p = cabi_ptr_size(cx), idx;
	uint64_t a, b;

	if (check_kind(cx, v, t))
		return -1;
	switch (t->kind) {
	case CM_BOOL:
		cabi_store_int(cx, v->u.b ? 1 : 0, ptr, 1);
		return 0;
	case CM_U8:
	case CM_S8:
		cabi_store_int(cx, v->u.u, ptr, 1);
		return 0;
	case CM_U16:
	case CM_S16:
		cabi_store_int(cx, v->u.u, ptr, 2);
		return 0;
	case CM_U32:
	case CM_S32:
		cabi_store_int(cx, v->u.u, ptr, 4);
		return 0;
	case CM_U64:
	case CM_S64:
		cabi_store_int(cx, v->u.u, ptr, 8);
		return 0;
	case CM_F32:
		cabi_store_int(cx, v->u.f32, ptr, 4);
		return 0;
	case CM_F64:
		cabi_store_int(cx, v->u.f64, ptr, 8);
		return 0;
	case CM_CHAR:
		if (v->u.c >= 0x110000 ||
		    (v->u.c >= 0xd800 && v->u.c <= 0xdfff))
			return cabi_bad_value(cx, "char value is not a "
						  "Unicode scalar value");
		cabi_store_int(cx, v->u.c, ptr, 4);
		return 0;
	case CM_STRING:
		if (cabi_store_string_into_range(cx, v, &a, &b))
			return -1;
		cabi_store_int(cx, a, ptr, p);
		cabi_store_int(cx, b, ptr + p, p);
		return 0;
	case CM_LIST:
	case CM_MAP:
		if (!is_dynamic_list(t)) {
			if (v->u.list.n != t->u.list.len)
				return cabi_bad_value(
					cx,
					"list value has %u elements, "
					"expected %u",
					v->u.list.n, t->u.list.len);
			if (check_list_form(cx, v, t))
				return -1;
			return cabi_store_list_into_valid_range(
				cx, v->u.list.elems, v->u.list.n, ptr,
				t->u.list.elem);
		}
		if (store_list_into_range(cx, v, t, &a, &b))
			return -1;
		cabi_store_int(cx, a, ptr, p);
		cabi_store_int(cx, b, ptr + p, p);
		return 0;
	case CM_RECORD:
	case CM_TUPLE:
		return store_record(cx, v, t, ptr);
	case CM_VARIANT:
	case CM_ENUM:
	case CM_OPTION:
	case CM_RESULT:
		return store_variant(cx, v, t, ptr);
	case CM_FLAGS:
		cabi_store_int(cx, v->u.flags & flags_mask(t), ptr,
			       (uint32_t)size_of(cx, t));
		return 0;
	case CM_OWN:
		if (cabi_lower_own(cx, v, t, &idx))
			return -1;
		cabi_store_int(cx, idx, ptr, 4);
		return 0;
	case CM_BORROW:
		if (cabi_lower_borrow(cx, v, t, &idx))
			return -1;
		cabi_store_int(cx, idx, ptr, 4);
		return 0;
	case CM_STREAM:
	case CM_FUTURE:
	case CM_ERROR_CONTEXT:
		if (lower_async(cx, v, t, &idx))
			return -1;
		cabi_store_int(cx, idx, ptr, 4);
		return 0;
	default:
		return cabi_bad_value(cx, "%s is not a value type",
				      cm_type_kind_name(t->kind));
	}
}

int cabi_store(cabi_cx *cx, const cm_val *v, const cm_type *t, uint64_t ptr)
{
	if (cabi_need_memory(cx))
		return -1;
	if (ptr % align_of(cx, t) != 0)
		return cabi_trap(cx, CABI_MSG_UNALIGNED);
	if (!cabi_in_bounds(cx, ptr, size_of(cx, t)))
		return cabi_trap(cx, CABI_MSG_LIST_OOB);
	return store(cx, v, t, ptr);
}

/* ---- flat values: lifting
 * ---------------------------------------------------- */

/*
 * A source of core values.  The outermost one reads the caller's
 * cabi_core_iter; inside a variant payload, one that reads the variant's
 * joined slot types from its parent and coerces them to what the case's
 * own flattening wants (definitions.py CoerceValueIter).
 */
typedef struct flat_in {
	cabi_core_iter *vi;	  /* outermost */
	struct flat_in *parent;	  /* coercing */
	const wasm_valtype *have; /* the joined slot types */
	uint32_t nhave, pos;
} flat_in;

static int next(cabi_cx *cx, flat_in *in, wasm_valtype want, uint64_t *x)
{
	wasm_valtype have;
	uint64_t y;

	if (in->parent == NULL) {
		const wasm_val *v;

		if (in->vi->i >= in->vi->n)
			return cabi_bad_value(cx, "too few core values");
		v = &in->vi->vals[in->vi->i++];
		if (v->type != want)
			return cabi_bad_value(cx, "core value type mismatch");
		switch ((uint8_t)want) {
		case WASM_I32:
			*x = v->u.i32;
			break;
		case WASM_F32:
			*x = v->u.f32;
			break;
		case WASM_I64:
			*x = v->u.i64;
			break;
		default:
			*x = v->u.f64;
			break;
		}
		return 0;
	}
	if (in->pos >= in->nhave)
		return cabi_bad_value(cx, "variant payload too wide");
	have = in->have[in->pos++];
	if (next(cx, in->parent, have, &y))
		return -1;
	/* i32->f32: same bits; i64->i32, i64->f32: wrap; i64->f64: bits */
	if (have == WASM_I64 && (want == WASM_I32 || want == WASM_F32))
		y &= 0xffffffffu;
	*x = y;
	return 0;
}

static int lift_flat(cabi_cx *cx, flat_in *in, const cm_type *t, cm_val *out);

static int lift_flat_variant(cabi_cx *cx, flat_in *in, const cm_type *t,
			     cm_val *out)
{
	uint32_t n = cm_type_ncases(t), nflat = cm_flat_count(t);
	wasm_valtype small[32], *flat = small;
	flat_in sub;
	uint64_t case_index, x;
	const cm_type *c;
	int r = -1;

	if (nflat > 32) {
		flat = malloc((size_t)nflat * sizeof *flat);
		if (flat == NULL)
			return cabi_nomem(cx);
	}
	cm_flatten(t, cx->opts.ptr64, flat, nflat);
	if (next(cx, in, WASM_I32, &case_index))
		goto out;
	if (case_index >= n) {
		cabi_trap(cx, CABI_MSG_INVALID_DISCRIMINANT);
		goto out;
	}
	memset(&sub, 0, sizeof sub);
	sub.parent = in;
	sub.have = flat + 1;
	sub.nhave = nflat - 1;
	c = cm_type_case(t, (uint32_t)case_index);
	if (c == NULL) {
		*out = cm_val_case(t->kind, (uint32_t)case_index);
	} else {
		if (lift_payload(cx, out, t->kind, (uint32_t)case_index)) {
			goto out;
		}
		if (lift_flat(cx, &sub, c, out->u.variant.payload)) {
			cm_val_free(out);
			goto out;
		}
	}
	while (sub.pos < sub.nhave) {
		if (next(cx, in, sub.have[sub.pos++], &x)) {
			cm_val_free(out);
			goto out;
		}
	}
	r = 0;
out:
	if (flat != small)
		free(flat);
	return r;
}

static int lift_flat(cabi_cx *cx, flat_in *in, const cm_type *t, cm_val *out)
{
	wasm_valtype pt = cx->opts.ptr64 ? WASM_I64 : WASM_I32;
	uint64_t x, y;

	*out = cm_val_bool(false);
	switch (t->kind) {
	case CM_BOOL:
		if (next(cx, in, WASM_I32, &x))
			return -1;
		*out = cm_val_bool((uint32_t)x != 0);
		return 0;
	case CM_U8:
	case CM_U16:
	case CM_U32:
	case CM_S8:
	case CM_S16:
	case CM_S32:
	case CM_CHAR:
	case CM_FLAGS:
	case CM_OWN:
	case CM_BORROW:
	case CM_STREAM:
	case CM_FUTURE:
	case CM_ERROR_CONTEXT:
		if (next(cx, in, WASM_I32, &x))
			return -1;
		x &= 0xffffffffu;
		switch (t->kind) {
		case CM_U8:
			*out = cm_val_u8((uint8_t)x);
			return 0;
		case CM_U16:
			*out = cm_val_u16((uint16_t)x);
			return 0;
		case CM_U32:
			*out = cm_val_u32((uint32_t)x);
			return 0;
		case CM_S8:
			*out = cm_val_s8((int8_t)wrap_signed(x, 8));
			return 0;
		case CM_S16:
			*out = cm_val_s16((int16_t)wrap_signed(x, 16));
			return 0;
		case CM_S32:
			*out = cm_val_s32((int32_t)wrap_signed(x, 32));
			return 0;
		case CM_CHAR:
			if (char_ok(cx, x))
				return -1;
			*out = cm_val_char((uint32_t)x);
			return 0;
		case CM_FLAGS:
			*out = cm_val_flags((uint32_t)x & flags_mask(t));
			return 0;
		case CM_OWN:
			return cabi_lift_own(cx, (uint32_t)x, t, out);
		case CM_BORROW:
			return cabi_lift_borrow(cx, (uint32_t)x, t, out);
		default:
			return lift_async(cx, (uint32_t)x, t, out);
		}
	case CM_U64:
	case CM_S64:
		if (next(cx, in, WASM_I64, &x))
			return -1;
		*out = t->kind == CM_U64 ? cm_val_u64(x)
					 : cm_val_s64((int64_t)x);
		return 0;
	case CM_F32:
		if (next(cx, in, WASM_F32, &x))
			return -1;
		*out = cm_val_f32_bits((uint32_t)x);
		return 0;
	case CM_F64:
		if (next(cx, in, WASM_F64, &x))
			return -1;
		*out = cm_val_f64_bits(x);
		return 0;
	case CM_STRING:
		if (next(cx, in, pt, &x) || next(cx, in, pt, &y))
			return -1;
		if (cabi_need_memory(cx))
			return -1;
		return cabi_load_string_from_range(cx, x, y, out);
	case CM_LIST:
	case CM_MAP:
		if (is_dynamic_list(t)) {
			if (next(cx, in, pt, &x) || next(cx, in, pt, &y))
				return -1;
			if (cabi_need_memory(cx))
				return -1;
			return load_list_from_range(cx, x, y, t, out);
		}
		if (lift_seq(cx, out, CM_LIST, t->u.list.len))
			return -1;
		for (uint32_t i = 0; i < t->u.list.len; i++) {
			if (lift_flat(cx, in, t->u.list.elem,
				      &out->u.list.elems[i])) {
				cm_val_free(out);
				return -1;
			}
		}
		return 0;
	case CM_RECORD:
	case CM_TUPLE: {
		uint32_t n = cm_type_nfields(t);

		if (lift_seq(cx, out, t->kind, n))
			return -1;
		for (uint32_t i = 0; i < n; i++) {
			if (lift_flat(cx, in, cm_type_field(t, i),
				      &out->u.list.elems[i])) {
				cm_val_free(out);
				return -1;
			}
		}
		return 0;
	}
	case CM_VARIANT:
	case CM_ENUM:
	case CM_OPTION:
	case CM_RESULT:
		return lift_flat_variant(cx, in, t, out);
	default:
		return cabi_bad_value(cx, "%s is not a value type",
				      cm_type_kind_name(t->kind));
	}
}

int cabi_lift_flat(cabi_cx *cx, cabi_core_iter *vi, const cm_type *t,
		   cm_val *out)
{
	flat_in in;

	memset(&in, 0, sizeof in);
	in.vi = vi;
	return lift_flat(cx, &in, t, out);
}

/* ---- flat values: lowering
 * ---------------------------------------------------- */

static int emit(cabi_cx *cx, cabi_core_out *out, wasm_valtype t, uint64_t x)
{
	wasm_val *v;

	if (out->n >= out->cap)
		return cabi_bad_value(cx, "core output buffer too small");
	v = &out->vals[out->n++];
	memset(v, 0, sizeof *v);
	v->type = t;
	switch ((uint8_t)t) {
	case WASM_I32:
		v->u.i32 = (uint32_t)x;
		break;
	case WASM_F32:
		v->u.f32 = (uint32_t)x;
		break;
	case WASM_I64:
		v->u.i64 = x;
		break;
	default:
		v->u.f64 = x;
		break;
	}
	return 0;
}

static uint64_t bits_of(const wasm_val *v)
{
	switch ((uint8_t)v->type) {
	case WASM_I32:
		return v->u.i32;
	case WASM_F32:
		return v->u.f32;
	case WASM_I64:
		return v->u.i64;
	default:
		return v->u.f64;
	}
}

static int lower_flat(cabi_cx *cx, const cm_val *v, const cm_type *t,
		      cabi_core_out *out);

static int lower_flat_variant(cabi_cx *cx, const cm_val *v, const cm_type *t,
			      cabi_core_out *out)
{
	uint32_t nflat = cm_flat_count(t), start;
	wasm_valtype small[32], *flat = small;
	const cm_type *c;
	int r = -1;

	if (match_case(cx, v, t, &c))
		return -1;
	if (nflat > 32) {
		flat = malloc((size_t)nflat * sizeof *flat);
		if (flat == NULL)
			return cabi_nomem(cx);
	}
	cm_flatten(t, cx->opts.ptr64, flat, nflat);
	if (emit(cx, out, WASM_I32, v->u.variant.index))
		goto out;
	start = out->n;
	if (c != NULL && lower_flat(cx, v->u.variant.payload, c, out))
		goto out;
	/* f32->i32: bits; i32->i64: zero-extend; f32/f64->i64: bits */
	for (uint32_t k = start; k < out->n; k++) {
		wasm_valtype want = flat[1 + k - start];
		uint64_t x = bits_of(&out->vals[k]);

		out->vals[k].type = want;
		if (want == WASM_I64)
			out->vals[k].u.i64 = x;
		else if (want == WASM_I32)
			out->vals[k].u.i32 = (uint32_t)x;
	}
	for (uint32_t k = out->n - start + 1; k < nflat; k++)
		if (emit(cx, out, flat[k], 0))
			goto out;
	r = 0;
out:
	if (flat != small)
		free(flat);
	return r;
}

static int lower_flat(cabi_cx *cx, const cm_val *v, const cm_type *t,
		      cabi_core_out *out)
{
	wasm_valtype pt = cx->opts.ptr64 ? WASM_I64 : WASM_I32;
	uint64_t a, b;
	uint32_t idx;

	if (check_kind(cx, v, t))
		return -1;
	switch (t->kind) {
	case CM_BOOL:
		return emit(cx, out, WASM_I32, v->u.b ? 1 : 0);
	case CM_U8:
		return emit(cx, out, WASM_I32, v->u.u & 0xff);
	case CM_U16:
		return emit(cx, out, WASM_I32, v->u.u & 0xffff);
	case CM_U32:
	case CM_S8:
	case CM_S16:
	case CM_S32:
		return emit(cx, out, WASM_I32, v->u.u & 0xffffffffu);
	case CM_U64:
	case CM_S64:
		return emit(cx, out, WASM_I64, v->u.u);
	case CM_F32:
		return emit(cx, out, WASM_F32, v->u.f32);
	case CM_F64:
		return emit(cx, out, WASM_F64, v->u.f64);
	case CM_CHAR:
		if (v->u.c >= 0x110000 ||
		    (v->u.c >= 0xd800 && v->u.c <= 0xdfff))
			return cabi_bad_value(cx, "char value is not a "
						  "Unicode scalar value");
		return emit(cx, out, WASM_I32, v->u.c);
	case CM_FLAGS:
		return emit(cx, out, WASM_I32, v->u.flags & flags_mask(t));
	case CM_STRING:
		if (cabi_store_string_into_range(cx, v, &a, &b))
			return -1;
		return emit(cx, out, pt, a) || emit(cx, out, pt, b) ? -1 : 0;
	case CM_LIST:
	case CM_MAP:
		if (is_dynamic_list(t)) {
			if (cabi_need_memory(cx) ||
			    store_list_into_range(cx, v, t, &a, &b))
				return -1;
			return emit(cx, out, pt, a) || emit(cx, out, pt, b) ? -1
									    : 0;
		}
		if (v->u.list.n != t->u.list.len)
			return cabi_bad_value(cx,
					      "list value has %u elements, "
					      "expected %u",
					      v->u.list.n, t->u.list.len);
		if (check_list_form(cx, v, t))
			return -1;
		for (uint32_t i = 0; i < v->u.list.n; i++)
			if (lower_flat(cx, &v->u.list.elems[i], t->u.list.elem,
				       out))
				return -1;
		return 0;
	case CM_RECORD:
	case CM_TUPLE: {
		uint32_t n = cm_type_nfields(t);

		if (v->u.list.n != n)
			return cabi_bad_value(cx,
					      "%s value has %u fields, "
					      "expected %u",
					      cm_type_kind_name(t->kind),
					      v->u.list.n, n);
		for (uint32_t i = 0; i < n; i++)
			if (lower_flat(cx, &v->u.list.elems[i],
				       cm_type_field(t, i), out))
				return -1;
		return 0;
	}
	case CM_VARIANT:
	case CM_ENUM:
	case CM_OPTION:
	case CM_RESULT:
		return lower_flat_variant(cx, v, t, out);
	case CM_OWN:
		if (cabi_lower_own(cx, v, t, &idx))
			return -1;
		return emit(cx, out, WASM_I32, idx);
	case CM_BORROW:
		if (cabi_lower_borrow(cx, v, t, &idx))
			return -1;
		return emit(cx, out, WASM_I32, idx);
	case CM_STREAM:
	case CM_FUTURE:
	case CM_ERROR_CONTEXT:
		if (lower_async(cx, v, t, &idx))
			return -1;
		return emit(cx, out, WASM_I32, idx);
	default:
		return cabi_bad_value(cx, "%s is not a value type",
				      cm_type_kind_name(t->kind));
	}
}

int cabi_lower_flat(cabi_cx *cx, const cm_val *v, const cm_type *t,
		    cabi_core_out *out)
{
	return lower_flat(cx, v, t, out);
}

/* ---- lift_flat_values / lower_flat_values -----------------------------------
 */

/* A list of types: an array of types or of cm_fields (function params). */
typedef struct typelist {
	const cm_type *const *ts;
	const cm_field *fields;
	uint32_t n;
} typelist;

static const cm_type *tl_get(const typelist *l, uint32_t i)
{
	return l->ts != NULL ? l->ts[i] : l->fields[i].type;
}

static uint64_t tl_flat_count(const typelist *l)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < l->n; i++)
		n += cm_flat_count(tl_get(l, i));
	return n;
}

/* Alignment and size of tuple<ts...> (a record of the types). */
static void tl_layout(const cabi_cx *cx, const typelist *l, uint32_t *align,
		      uint64_t *size)
{
	uint64_t s = 0;
	uint32_t a = 1;

	for (uint32_t i = 0; i < l->n; i++) {
		const cm_type *t = tl_get(l, i);

		if (align_of(cx, t) > a)
			a = align_of(cx, t);
		s = cabi_align_to(s, align_of(cx, t)) + size_of(cx, t);
	}
	*align = a;
	*size = cabi_align_to(s, a);
}

static int read_ptr(cabi_cx *cx, cabi_core_iter *vi, uint64_t *p)
{
	flat_in in;

	memset(&in, 0, sizeof in);
	in.vi = vi;
	return next(cx, &in, cx->opts.ptr64 ? WASM_I64 : WASM_I32, p);
}

static int lift_values(cabi_cx *cx, uint32_t max_flat, cabi_core_iter *vi,
		       const typelist *l, cm_val *out)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		out[i] = cm_val_bool(false);
	if (tl_flat_count(l) > max_flat) {
		uint64_t ptr, size;
		uint32_t align;

		if (read_ptr(cx, vi, &ptr) || cabi_need_memory(cx))
			return -1;
		tl_layout(cx, l, &align, &size);
		if (ptr % align != 0)
			return cabi_trap(cx, CABI_MSG_UNALIGNED);
		if (!cabi_in_bounds(cx, ptr, size))
			return cabi_trap(cx, CABI_MSG_LIST_OOB);
		for (i = 0; i < l->n; i++) {
			const cm_type *t = tl_get(l, i);

			ptr = cabi_align_to(ptr, align_of(cx, t));
			if (load(cx, ptr, t, &out[i]))
				goto fail;
			ptr += size_of(cx, t);
		}
		return 0;
	}
	for (i = 0; i < l->n; i++)
		if (cabi_lift_flat(cx, vi, tl_get(l, i), &out[i]))
			goto fail;
	return 0;
fail:
	cm_vals_free(out, i);
	return -1;
}

static int lower_values(cabi_cx *cx, uint32_t max_flat, const cm_val *vs,
			const typelist *l, cabi_core_iter *out_param,
			cabi_core_out *out)
{
	if (tl_flat_count(l) > max_flat) {
		uint64_t ptr, size;
		uint32_t align;

		if (cabi_need_memory(cx))
			return -1;
		tl_layout(cx, l, &align, &size);
		if (out_param == NULL) {
			if (cabi_realloc_checked(cx, 0, 0, align, size,
						 CABI_MSG_LIST_OOB, &ptr))
				return -1;
			if (emit(cx, out, cx->opts.ptr64 ? WASM_I64 : WASM_I32,
				 ptr))
				return -1;
		} else {
			if (read_ptr(cx, out_param, &ptr))
				return -1;
			if (ptr % align != 0)
				return cabi_trap(cx, CABI_MSG_UNALIGNED);
			if (!cabi_in_bounds(cx, ptr, size))
				return cabi_trap(cx, CABI_MSG_LIST_OOB);
		}
		for (uint32_t i = 0; i < l->n; i++) {
			const cm_type *t = tl_get(l, i);

			ptr = cabi_align_to(ptr, align_of(cx, t));
			if (store(cx, &vs[i], t, ptr))
				return -1;
			ptr += size_of(cx, t);
		}
		return 0;
	}
	for (uint32_t i = 0; i < l->n; i++)
		if (lower_flat(cx, &vs[i], tl_get(l, i), out))
			return -1;
	return 0;
}

int cabi_lift_flat_values(cabi_cx *cx, uint32_t max_flat, cabi_core_iter *vi,
			  const cm_type *const *ts, uint32_t nts, cm_val *out)
{
	typelist l = {ts, NULL, nts};

	return lift_values(cx, max_flat, vi, &l, out);
}

int cabi_lower_flat_values(cabi_cx *cx, uint32_t max_flat, const cm_val *vs,
			   const cm_type *const *ts, uint32_t nts,
			   cabi_core_iter *out_param, cabi_core_out *out)
{
	typelist l = {ts, NULL, nts};

	return lower_values(cx, max_flat, vs, &l, out_param, out);
}

static int functype_ok(cabi_cx *cx, const cm_type *ft)
{
	if (ft == NULL || ft->kind != CM_FUNC)
		return cabi_bad_value(cx, "not a function type");
	return 0;
}

int cabi_lift_params(cabi_cx *cx, const cm_type *ft, uint32_t max_flat,
		     cabi_core_iter *vi, cm_val *args)
{
	typelist l;

	if (functype_ok(cx, ft))
		return -1;
	l = (typelist){NULL, ft->u.func.params, ft->u.func.nparams};
	return lift_values(cx, max_flat, vi, &l, args);
}

int cabi_lower_params(cabi_cx *cx, const cm_type *ft, uint32_t max_flat,
		      const cm_val *args, cabi_core_out *out)
{
	typelist l;

	if (functype_ok(cx, ft))
		return -1;
	l = (typelist){NULL, ft->u.func.params, ft->u.func.nparams};
	return lower_values(cx, max_flat, args, &l, NULL, out);
}

int cabi_lift_results(cabi_cx *cx, const cm_type *ft, uint32_t max_flat,
		      cabi_core_iter *vi, cm_val *results)
{
	typelist l;

	if (functype_ok(cx, ft))
		return -1;
	l = (typelist){&ft->u.func.result, NULL,
		       ft->u.func.result != NULL ? 1u : 0u};
	return lift_values(cx, max_flat, vi, &l, results);
}

int cabi_lower_results(cabi_cx *cx, const cm_type *ft, uint32_t max_flat,
		       const cm_val *results, cabi_core_iter *out_param,
		       cabi_core_out *out)
{
	typelist l;

	if (functype_ok(cx, ft))
		return -1;
	l = (typelist){&ft->u.func.result, NULL,
		       ft->u.func.result != NULL ? 1u : 0u};
	return lower_values(cx, max_flat, results, &l, out_param, out);
}
