/*
 * fuse.c - the compiler's peephole pass: instructions that compile.c
 * has just emitted, rewritten together with the one being compiled into
 * a fused op of code.h (a superinstruction), or retargeted.
 *
 * Contract (interface in compile.h): each function looks at the last
 * few instructions emitted (the window in struct cc, emptied at every
 * label, so nothing fuses across a branch target) and either does
 * nothing and returns false, or rewrites the code and the operand stack
 * exactly as compile.c would have for the unfused sequence, with the
 * same results, traps and trap order, and returns true.  What it fuses:
 *  - conditions: a comparison or eqz right before br_if/if becomes one
 *    compare-and-branch op; an i32.add with a constant before the
 *    comparison of a counted loop, or a tee'd add tested right away,
 *    becomes one add-and-branch op (fuse_cond);
 *  - local.set/tee of the value the last op computed: that op writes
 *    the local directly (fuse_local_set); two copies in a row become one
 *    copy_pair (fuse_copy);
 *  - binary ops: integer multiply-add, (x >> k) & m, float mul then
 *    add/sub/mul (two roundings, as in the source), x * sqrt(y), and an
 *    add/sub/mul of a value loaded just before (fuse_binop_first,
 *    fuse_binop);
 *  - stores: a float add/sub/mul whose result is stored, and `*p op=
 *    expr` as one read-modify-write op, also when the load of *p came
 *    before expr (it moves down to the store when only pure ops came in
 *    between, see struct ldrec; fuse_note_load, fuse_store).
 * Why: the interpreter pays one dispatch per op, and an op of the
 * window also writes a slot that the next one reads back.  Measured when
 * they came in (commit ff36610, internal ops executed): the float
 * read-modify-write, constant-address, (a * b) * c and mul_sqrt forms
 * took bench/nbody from 103M to 61M ops per 200k steps, and its time from
 * 6.3-7.7x to 4.4-5.0x Node's --liftoff-only.  test_interp covers every
 * fused shape and shapes that must not fuse.
 */
#include <string.h>

#include "wasm/compile.h"
#include "wasm/ops.h"

/* ---- the window --------------------------------------------------------- */

/*
 * Ops that write no memory, branch nowhere and trap at most as a load
 * does: a load may move across them (see struct ldrec).
 */
static bool pure_op(uint32_t op)
{
	if ((op >= WASM_IOP_copy && op <= WASM_IOP_const128) ||
	    (op >= WASM_IOP_load32 && op <= WASM_IOP_load32s64_r) ||
	    (op >= WASM_IOP_f32_mul_add && op <= WASM_IOP_f64_div_is) ||
	    (op >= WASM_IOP_i32_add_ldk && op <= WASM_IOP_f64_mul_ldk) ||
	    op == WASM_IOP_f32_mul_sqrt || op == WASM_IOP_f64_mul_sqrt ||
	    (op >= WASM_IOP_f32_abs && op <= WASM_IOP_f64_copysign_si))
		return true;
	switch (op) {
	case WASM_IOP_i32_add_ss:
	case WASM_IOP_i32_add_si:
	case WASM_IOP_i32_sub_ss:
	case WASM_IOP_i32_sub_si:
	case WASM_IOP_i32_mul_ss:
	case WASM_IOP_i32_mul_si:
	case WASM_IOP_i32_shl_ss:
	case WASM_IOP_i32_shl_si:
	case WASM_IOP_i64_add_ss:
	case WASM_IOP_i64_add_si:
	case WASM_IOP_i64_mul_ss:
	case WASM_IOP_i64_mul_si:
		return true;
	default:
		return false;
	}
}

void fuse_note_emit(struct cc *c, uint32_t pos, uint32_t op)
{
	for (uint32_t i = 0; i < c->nld; i++)
		if (pos <= c->ld[i].pos || !pure_op(op))
			c->ld[i].ok = false;
}

/*
 * The operand the instruction emitted last computed into slot m with
 * op `iop` (2 input cells), or false.  Taking it back is the caller's.
 */
static bool last_made(const struct cc *c, uint32_t iop, const struct vent *e)
{
	return e->kind == VK_STACK && c->last != NONE && c->last_dest &&
	       c->last_iop == iop && c->code[c->last + 1] == e->slot;
}

/*
 * Drop the instruction emitted last (to emit a fused one in its place);
 * the one before stays visible to the peepholes as `prev`.
 */
static void take_back_last(struct cc *c)
{
	uint32_t prev = c->prev, prev_iop = c->prev_iop;
	uint32_t prev2 = c->prev2, prev2_iop = c->prev2_iop;

	c->ncode = c->last;
	forget(c);
	c->last = prev;
	c->last_iop = prev_iop;
	c->last_dest = false;
	c->prev = prev2;
	c->prev_iop = prev2_iop;
}

/* ---- moves -------------------------------------------------------------- */

bool fuse_copy(struct cc *c, uint32_t dst, uint32_t src)
{
	uint32_t at = c->last;

	if (!live(c) || c->last == NONE || c->last_iop != WASM_IOP_copy ||
	    c->last + 3 != c->ncode)
		return false;
	/* two moves in a row (block results, rotating locals) */
	if (c->oom || cc_grow_code(c, c->ncode + 2))
		return true; /* out of memory: nothing is emitted any more */
	c->code[at] = wasm_interp_opcell(WASM_IOP_copy_pair);
	c->code[at + 3] = dst;
	c->code[at + 4] = src;
	c->ncode = at + 5;
	c->last_iop = WASM_IOP_copy_pair;
	c->last_dest = false;
	return true;
}

void fuse_local_written(struct cc *c, uint32_t ls)
{
	for (uint32_t i = 0; i < c->nld; i++)
		if (ls == c->ld[i].x || c->last == c->ld[i].pos)
			c->ld[i].ok = false;
}

bool fuse_local_set(struct cc *c, const struct vent *e, uint32_t ls)
{
	bool aliased = false;

	if (e->kind != VK_STACK || c->last == NONE || !c->last_dest ||
	    c->code[c->last + 1] != e->slot)
		return false;
	/* nothing read ls's old value after the producer: retarget */
	for (uint32_t i = top(c)->height; i < c->nvs; i++)
		if (ent_reads(&c->vs[i], ls))
			aliased = true;
	if (aliased)
		return false;
	c->code[c->last + 1] = ls;
	return true;
}

/* ---- conditions --------------------------------------------------------- */

/* The brif op of a comparison op (x_ss or x_si), or NONE. */
static uint32_t fused_cmp(uint32_t iop, bool *si)
{
	switch (iop) {
#define CMP_CASE(name, A)                                                      \
	case WASM_IOP_##name##_ss:                                             \
		*si = false;                                                   \
		return WASM_IOP_brif_##name##_ss;                              \
	case WASM_IOP_##name##_si:                                             \
		*si = true;                                                    \
		return WASM_IOP_brif_##name##_ss;
		WASM_CMPOPS(CMP_CASE)
#undef CMP_CASE
	default:
		return NONE;
	}
}

/* The add-then-compare-and-branch op of an i32 comparison, or NONE. */
static uint32_t fused_add_cmp(uint32_t iop)
{
	switch (iop) {
#define ADDCMP_CASE(name)                                                      \
	case WASM_IOP_i32_##name##_ss:                                         \
	case WASM_IOP_i32_##name##_si:                                         \
		return WASM_IOP_addbr_##name##_si;
		WASM_ADDCMPS(ADDCMP_CASE)
#undef ADDCMP_CASE
	default:
		return NONE;
	}
}

/*
 * A counted loop's test: `i32.add d, a, k` (usually writing the counter
 * local) right before an i32 comparison of d with a constant or a slot.
 * Both become one op that adds, compares and branches.
 */
static bool fuse_add_cmp(struct cc *c, uint32_t iop, bool si, struct cond *cd)
{
	uint32_t base = fused_add_cmp(iop), d;

	if (base == NONE || c->prev == NONE ||
	    c->prev_iop != WASM_IOP_i32_add_si || c->prev + 4 != c->last)
		return false;
	d = c->code[c->prev + 1];
	if (c->code[c->last + 2] != d)
		return false; /* the comparison must test the sum */
	if (!si && c->code[c->last + 3] == d)
		return false; /* the op reads b as it was before the add */
	cd->op_true = base + (si ? 0 : 1);
	cd->op_false = base + (si ? 2 : 3);
	cd->n = 4;
	cd->cells[0] = d;
	cd->cells[1] = c->code[c->prev + 2];
	cd->cells[2] = c->code[c->prev + 3];
	cd->cells[3] = c->code[c->last + 3];
	c->ncode = c->prev;
	forget(c);
	return true;
}

bool fuse_cond(struct cc *c, const struct vent *e, struct cond *cd)
{
	if (e->kind == VK_STACK && c->last != NONE && c->last_dest &&
	    c->code[c->last + 1] == e->slot) {
		uint32_t iop = c->last_iop, n = c->ncode - c->last - 2;
		bool si = false;
		uint32_t b = fused_cmp(iop, &si);

		if (b != NONE && fuse_add_cmp(c, iop, si, cd))
			return true;
		if (b != NONE && n <= 3) {
			cd->op_true = b + (si ? 1 : 0);
			cd->op_false = b + (si ? 3 : 2);
			cd->n = n;
			memcpy(cd->cells, &c->code[c->last + 2],
			       n * sizeof(uint32_t));
			c->ncode = c->last;
			forget(c);
			return true;
		}
		if (iop == WASM_IOP_i32_eqz || iop == WASM_IOP_i64_eqz) {
			bool w = iop == WASM_IOP_i64_eqz;
			cd->op_true = w ? WASM_IOP_br_z64 : WASM_IOP_br_z;
			cd->op_false = w ? WASM_IOP_br_nz64 : WASM_IOP_br_nz;
			cd->cells[0] = c->code[c->last + 2];
			c->ncode = c->last;
			forget(c);
			return true;
		}
	}
	/*
	 * A loop counter: `local.tee` of an i32.add with a constant (the add
	 * writes the local directly) tested right away: one op adds and
	 * branches on the result.
	 */
	if ((e->kind == VK_STACK || e->kind == VK_ALIAS) && c->last != NONE &&
	    c->last_dest && c->last_iop == WASM_IOP_i32_add_si &&
	    c->code[c->last + 1] ==
		    (e->kind == VK_ALIAS ? (uint32_t)e->val : e->slot)) {
		cd->op_true = WASM_IOP_add_br_nz;
		cd->op_false = WASM_IOP_add_br_z;
		cd->n = 3;
		memcpy(cd->cells, &c->code[c->last + 1], 3 * sizeof(uint32_t));
		c->ncode = c->last;
		forget(c);
		return true;
	}
	return false;
}

/* ---- binary ops --------------------------------------------------------- */

/*
 * i32/i64 add whose operand the previous instruction computed as a
 * product of two slots: one multiply-add op.
 */
static bool fuse_imul(struct cc *c, uint8_t op, const struct vent *a,
		      const struct vent *b)
{
	bool w = op == WASM_OP_i64_add;
	uint32_t mul = w ? WASM_IOP_i64_mul_ss : WASM_IOP_i32_mul_ss;
	uint32_t x, y, other, *p;

	if (last_made(c, mul, b) && as_slot(a, &other)) {
		/* a + (x * y): the product was computed after a */
	} else if (last_made(c, mul, a) && b->kind == VK_ALIAS) {
		other = (uint32_t)b->val;
	} else {
		return false;
	}
	x = c->code[c->last + 2];
	y = c->code[c->last + 3];
	take_back_last(c);
	if (cc_push(c, w ? WASM_I64 : WASM_I32))
		return true;
	p = cc_emit_d(c, w ? WASM_IOP_i64_mul_add : WASM_IOP_i32_mul_add, 4);
	p[0] = top_slot(c);
	p[1] = x;
	p[2] = y;
	p[3] = other;
	return true;
}

/* (x >> k) & m with k and m constants: one op. */
static bool fuse_shr_and(struct cc *c, const struct vent *a,
			 const struct vent *b)
{
	uint32_t x, k, *p;

	if (b->kind != VK_CONST || !last_made(c, WASM_IOP_i32_shr_u_si, a))
		return false;
	x = c->code[c->last + 2];
	k = c->code[c->last + 3];
	take_back_last(c);
	if (cc_push(c, WASM_I32))
		return true;
	p = cc_emit_d(c, WASM_IOP_i32_shr_u_and, 4);
	p[0] = top_slot(c);
	p[1] = x;
	p[2] = k;
	p[3] = (uint32_t)b->val;
	return true;
}

/*
 * A float add/sub whose operand the previous instruction just computed as
 * a product: one op doing both, each rounded as the two ops would be.
 */
static bool fuse_mul(struct cc *c, uint8_t op, const struct vent *a,
		     const struct vent *b)
{
	bool f64 = op == WASM_OP_f64_add || op == WASM_OP_f64_sub ||
		   op == WASM_OP_f64_mul;
	bool add = op == WASM_OP_f64_add || op == WASM_OP_f32_add;
	bool mulop = op == WASM_OP_f64_mul || op == WASM_OP_f32_mul;
	uint32_t mul = f64 ? WASM_IOP_f64_mul_ss : WASM_IOP_f32_mul_ss;
	uint32_t m, x, y, other, iop, *p;
	bool right;

	if (c->last == NONE || !c->last_dest || c->last_iop != mul)
		return false;
	m = c->code[c->last + 1];
	x = c->code[c->last + 2];
	y = c->code[c->last + 3];
	if (b->kind == VK_STACK && b->slot == m &&
	    (a->kind == VK_STACK || a->kind == VK_ALIAS)) {
		right = true; /* a op (x * y) */
		other = a->kind == VK_ALIAS ? (uint32_t)a->val : a->slot;
	} else if (a->kind == VK_STACK && a->slot == m && b->kind == VK_ALIAS) {
		right = false; /* (x * y) op b */
		other = (uint32_t)b->val;
	} else {
		return false;
	}
	if (mulop && f64)
		iop = right ? WASM_IOP_f64_mul_mulr : WASM_IOP_f64_mul_mul;
	else if (mulop)
		iop = right ? WASM_IOP_f32_mul_mulr : WASM_IOP_f32_mul_mul;
	else if (f64)
		iop = right ? (add ? WASM_IOP_f64_add_mul
				   : WASM_IOP_f64_sub_mul)
			    : (add ? WASM_IOP_f64_mul_add
				   : WASM_IOP_f64_mul_sub);
	else
		iop = right ? (add ? WASM_IOP_f32_add_mul
				   : WASM_IOP_f32_sub_mul)
			    : (add ? WASM_IOP_f32_mul_add
				   : WASM_IOP_f32_mul_sub);
	take_back_last(c);
	if (cc_push(c, f64 ? WASM_F64 : WASM_F32))
		return true;
	p = cc_emit_d(c, iop, 4);
	p[0] = top_slot(c);
	if (right) {
		p[1] = other;
		p[2] = x;
		p[3] = y;
	} else {
		p[1] = x;
		p[2] = y;
		p[3] = other;
	}
	return true;
}

/*
 * add/sub/mul whose right operand the previous instruction just loaded
 * from memory 0: one op that loads and computes (same trap order).
 */
static bool fuse_load(struct cc *c, uint8_t op, const struct vent *a,
		      const struct vent *b)
{
	uint32_t iop, ld, x, imm, off, sa, *p;
	wasm_valtype t;

	switch (op) {
	case WASM_OP_i32_add:
		iop = WASM_IOP_i32_add_ld, ld = WASM_IOP_load32, t = WASM_I32;
		break;
	case WASM_OP_i64_add:
		iop = WASM_IOP_i64_add_ld, ld = WASM_IOP_load64, t = WASM_I64;
		break;
	case WASM_OP_f32_add:
		iop = WASM_IOP_f32_add_ld, ld = WASM_IOP_load32, t = WASM_F32;
		break;
	case WASM_OP_f32_sub:
		iop = WASM_IOP_f32_sub_ld, ld = WASM_IOP_load32, t = WASM_F32;
		break;
	case WASM_OP_f32_mul:
		iop = WASM_IOP_f32_mul_ld, ld = WASM_IOP_load32, t = WASM_F32;
		break;
	case WASM_OP_f64_add:
		iop = WASM_IOP_f64_add_ld, ld = WASM_IOP_load64, t = WASM_F64;
		break;
	case WASM_OP_f64_sub:
		iop = WASM_IOP_f64_sub_ld, ld = WASM_IOP_load64, t = WASM_F64;
		break;
	case WASM_OP_f64_mul:
		iop = WASM_IOP_f64_mul_ld, ld = WASM_IOP_load64, t = WASM_F64;
		break;
	default:
		return false;
	}
	if (!as_slot(a, &sa))
		return false;
	if (last_made(c, ld, b)) {
		x = c->code[c->last + 2];
		imm = 0;
		off = c->code[c->last + 3];
	} else if (last_made(c, ld + 1, b)) { /* the slot + imm form */
		x = c->code[c->last + 2];
		imm = c->code[c->last + 3];
		off = c->code[c->last + 4];
	} else if (last_made(c, ld + 2, b)) { /* a constant address */
		x = c->code[c->last + 2];
		imm = c->code[c->last + 3];
		take_back_last(c);
		if (cc_push(c, t))
			return true;
		p = cc_emit_d(
			c, iop - WASM_IOP_i32_add_ld + WASM_IOP_i32_add_ldk, 4);
		p[0] = top_slot(c);
		p[1] = sa;
		p[2] = x;
		p[3] = imm;
		return true;
	} else {
		return false;
	}
	take_back_last(c);
	if (cc_push(c, t))
		return true;
	p = cc_emit_d(c, iop, 5);
	p[0] = top_slot(c);
	p[1] = sa;
	p[2] = x;
	p[3] = imm;
	p[4] = off;
	return true;
}

/* x * sqrt(y) with the root computed just before (a distance's cube). */
static bool fuse_sqrt(struct cc *c, uint8_t op, const struct vent *a,
		      const struct vent *b)
{
	bool f64 = op == WASM_OP_f64_mul;
	uint32_t sa, y, *p;

	if (!last_made(c, f64 ? WASM_IOP_f64_sqrt : WASM_IOP_f32_sqrt, b) ||
	    !as_slot(a, &sa))
		return false;
	y = c->code[c->last + 2];
	take_back_last(c);
	if (cc_push(c, f64 ? WASM_F64 : WASM_F32))
		return true;
	p = cc_emit_d(c, f64 ? WASM_IOP_f64_mul_sqrt : WASM_IOP_f32_mul_sqrt,
		      3);
	p[0] = top_slot(c);
	p[1] = sa;
	p[2] = y;
	return true;
}

bool fuse_binop_first(struct cc *c, uint8_t op, const struct vent *a,
		      const struct vent *b)
{
	if ((op == WASM_OP_i32_add || op == WASM_OP_i64_add) &&
	    fuse_imul(c, op, a, b))
		return true;
	return op == WASM_OP_i32_and && fuse_shr_and(c, a, b);
}

bool fuse_binop(struct cc *c, uint8_t op, const struct vent *a,
		const struct vent *b)
{
	if ((op == WASM_OP_f32_mul || op == WASM_OP_f64_mul) &&
	    fuse_sqrt(c, op, a, b))
		return true;
	if ((op == WASM_OP_f32_add || op == WASM_OP_f32_sub ||
	     op == WASM_OP_f32_mul || op == WASM_OP_f64_add ||
	     op == WASM_OP_f64_sub || op == WASM_OP_f64_mul) &&
	    fuse_mul(c, op, a, b))
		return true;
	return fuse_load(c, op, a, b);
}

/* ---- loads and stores --------------------------------------------------- */

void fuse_note_load(struct cc *c, uint32_t len, uint32_t x, uint32_t imm,
		    uint32_t off)
{
	struct ldrec *l;
	uint32_t i, n = 0;

	if (x >= c->nlocal_slots)
		return;
	for (i = 0; i < c->nld; i++)
		if (c->ld[i].ok)
			c->ld[n++] = c->ld[i];
	c->nld = n;
	if (c->nld == LDRECS) {
		memmove(&c->ld[0], &c->ld[1], (LDRECS - 1) * sizeof c->ld[0]);
		c->nld--;
	}
	l = &c->ld[c->nld++];
	l->ok = true;
	l->pos = c->last;
	l->len = len;
	l->d = top_slot(c);
	l->x = x;
	l->imm = imm;
	l->off = off;
	l->iop = c->last_iop;
	l->vs = c->nvs - 1;
	l->pops = 0;
}

/*
 * Whether the instruction before the last one computed slot s, a stack
 * temporary that only the last one read, as f64 (a * b) * c; the three
 * inputs go to in[].  The address slot x must not be s.
 */
static bool mm_operand(const struct cc *c, uint32_t s, uint32_t x, uint32_t *in)
{
	const uint32_t *q;

	if (c->prev == NONE || c->last == NONE ||
	    c->prev_iop != WASM_IOP_f64_mul_mul || c->prev + 5 != c->last)
		return false;
	q = &c->code[c->prev + 1];
	if (q[0] != s || s < c->nlocal_slots || x == s)
		return false;
	memcpy(in, &q[1], 3 * sizeof *in);
	return true;
}

/*
 * A full-width store to memory 0 of the value the instruction emitted
 * last just computed into its stack slot: an op loading and computing
 * from the same address becomes a read-modify-write; a float add, sub or
 * mul of two slots stores its result itself.  The value's slot dies with
 * the store, so the fused op need not write it.
 */
static bool fuse_store_last(struct cc *c, const struct vent *a,
			    const struct vent *v, const struct memarg *ma)
{
	uint32_t iop = c->last_iop, *q, *p, x, imm, cells[7];

	if (v->kind != VK_STACK || c->last == NONE || !c->last_dest)
		return false;
	q = &c->code[c->last + 1];
	if (q[0] != v->slot)
		return false;
	if (iop >= WASM_IOP_i32_add_ld && iop <= WASM_IOP_f64_mul_ld) {
		/* [d a x imm off] */
		if (!as_addi(a, &x, &imm) || x != q[2] || imm != q[3] ||
		    ma->offset != q[4] || x == v->slot)
			return false;
		if ((iop == WASM_IOP_f64_add_ld ||
		     iop == WASM_IOP_f64_sub_ld) &&
		    mm_operand(c, q[1], x, &cells[3])) {
			/* `*p += a * b * c` */
			bool add = iop == WASM_IOP_f64_add_ld;
			cells[0] = x;
			cells[1] = imm;
			cells[2] = q[4];
			if (imm == 0 && x < c->nlocal_slots &&
			    c->prev2 != NONE &&
			    c->prev2_iop == WASM_IOP_i32_add_si &&
			    c->prev2 + 4 == c->prev &&
			    c->code[c->prev2 + 1] == x) {
				/* p = s + k just before: one op */
				uint32_t at = c->prev2, *r = &c->code[at + 1];
				memmove(&cells[4], &cells[3],
					3 * sizeof *cells);
				cells[1] = r[1];
				cells[2] = r[2];
				cells[3] = q[4];
				cells[0] = x;
				c->ncode = at;
				forget(c);
				p = cc_emit(c,
					    add ? WASM_IOP_f64_add_mm_rmwa
						: WASM_IOP_f64_sub_mm_rmwa,
					    7);
				memcpy(p, cells, 7 * sizeof *p);
				return true;
			}
			c->ncode = c->prev;
			forget(c);
			p = cc_emit(c,
				    iop == WASM_IOP_f64_add_ld
					    ? WASM_IOP_f64_add_mm_rmw
					    : WASM_IOP_f64_sub_mm_rmw,
				    6);
			memcpy(p, cells, 6 * sizeof *p);
			return true;
		}
		iop = iop - WASM_IOP_i32_add_ld + WASM_IOP_i32_add_rmw;
		cells[0] = q[1];
		cells[1] = x;
		cells[2] = imm;
		cells[3] = q[4];
		c->ncode = c->last;
		forget(c);
		p = cc_emit(c, iop, 4);
		memcpy(p, cells, 4 * sizeof *p);
		return true;
	}
	if (iop >= WASM_IOP_i32_add_ldk && iop <= WASM_IOP_f64_mul_ldk) {
		/* [d a ea_lo ea_hi] */
		uint64_t ea = (uint64_t)(uint32_t)a->val + ma->offset;
		if (a->kind != VK_CONST || (uint32_t)ea != q[2] ||
		    (uint32_t)(ea >> 32) != q[3])
			return false;
		iop = iop - WASM_IOP_i32_add_ldk + WASM_IOP_i32_add_rmwk;
		cells[0] = q[1];
		cells[1] = q[2];
		cells[2] = q[3];
		c->ncode = c->last;
		forget(c);
		p = cc_emit(c, iop, 3);
		memcpy(p, cells, 3 * sizeof *p);
		return true;
	}
	switch (iop) {
	case WASM_IOP_f32_add_ss:
		iop = WASM_IOP_f32_add_st;
		break;
	case WASM_IOP_f32_sub_ss:
		iop = WASM_IOP_f32_sub_st;
		break;
	case WASM_IOP_f32_mul_ss:
		iop = WASM_IOP_f32_mul_st;
		break;
	case WASM_IOP_f64_add_ss:
		iop = WASM_IOP_f64_add_st;
		break;
	case WASM_IOP_f64_sub_ss:
		iop = WASM_IOP_f64_sub_st;
		break;
	case WASM_IOP_f64_mul_ss:
		iop = WASM_IOP_f64_mul_st;
		break;
	default:
		return false;
	}
	/* [d a b] */
	if (!as_addi(a, &x, &imm) || x == v->slot)
		return false;
	cells[0] = x;
	cells[1] = imm;
	cells[2] = (uint32_t)ma->offset;
	cells[3] = q[1];
	cells[4] = q[2];
	c->ncode = c->last;
	forget(c);
	p = cc_emit(c, iop, 5);
	memcpy(p, cells, 5 * sizeof *p);
	return true;
}

/*
 * `*p op= expr` for floats: the load of *p was emitted before expr, the
 * op (add, sub, mul, or add/sub of a product) combines it with expr's
 * value and the store writes the result back to the same address.  The
 * load moves down into one read-modify-write op: only pure ops came in
 * between (ldrec.ok), none of them read the loaded slot (it was below their
 * operands on the stack) and the address local kept its value, so only
 * the load's timing changes, and a trap of a load in between is the same
 * trap as this load's.
 */
static bool fuse_store_late(struct cc *c, struct ldrec *l, const struct vent *a,
			    const struct vent *v, const struct memarg *ma)
{
	uint32_t iop = c->last_iop, *q, *p, x, imm, n, cut, cells[6];
	bool f64;

	if (l == NULL || v->kind != VK_STACK || c->last == NONE ||
	    !c->last_dest || c->last <= l->pos)
		return false;
	q = &c->code[c->last + 1];
	if (q[0] != v->slot || q[0] != l->d || q[1] != l->d)
		return false;
	switch (iop) {
	case WASM_IOP_f32_add_ss:
	case WASM_IOP_f32_sub_ss:
	case WASM_IOP_f32_mul_ss:
		n = 1;
		f64 = false;
		iop = WASM_IOP_f32_add_rmwl + (iop - WASM_IOP_f32_add_ss) / 2;
		break;
	case WASM_IOP_f64_add_ss:
	case WASM_IOP_f64_sub_ss:
	case WASM_IOP_f64_mul_ss:
		n = 1;
		f64 = true;
		iop = WASM_IOP_f64_add_rmwl + (iop - WASM_IOP_f64_add_ss) / 2;
		break;
	case WASM_IOP_f32_add_mul:
		n = 2, f64 = false, iop = WASM_IOP_f32_add_mul_rmwl;
		break;
	case WASM_IOP_f32_sub_mul:
		n = 2, f64 = false, iop = WASM_IOP_f32_sub_mul_rmwl;
		break;
	case WASM_IOP_f64_add_mul:
		n = 2, f64 = true, iop = WASM_IOP_f64_add_mul_rmwl;
		break;
	case WASM_IOP_f64_sub_mul:
		n = 2, f64 = true, iop = WASM_IOP_f64_sub_mul_rmwl;
		break;
	default:
		return false;
	}
	if (l->iop != (f64 ? WASM_IOP_load64 : WASM_IOP_load32) &&
	    l->iop != (f64 ? WASM_IOP_load64_a : WASM_IOP_load32_a))
		return false;
	if (q[2] == l->d || (n == 2 && q[3] == l->d))
		return false;
	if (!as_addi(a, &x, &imm) || x != l->x || imm != l->imm ||
	    ma->offset != l->off)
		return false;
	cells[0] = x;
	cells[1] = imm;
	cells[2] = l->off;
	cells[3] = q[2];
	cells[4] = n == 2 ? q[3] : 0;
	cut = c->last;
	if (n == 1 && f64 && iop != WASM_IOP_f64_mul_rmwl &&
	    mm_operand(c, q[2], x, &cells[3]) && c->prev >= l->pos + l->len) {
		/* `*p -= a * b * c` */
		cut = c->prev;
		n = 3;
		iop = iop == WASM_IOP_f64_add_rmwl ? WASM_IOP_f64_add_mm_rmwl
						   : WASM_IOP_f64_sub_mm_rmwl;
	}
	memmove(&c->code[l->pos], &c->code[l->pos + l->len],
		(cut - l->pos - l->len) * sizeof *c->code);
	c->ncode = cut - l->len;
	c->nld = 0;
	forget(c);
	p = cc_emit(c, iop, 3 + n);
	memcpy(p, cells, (3 + n) * sizeof *p);
	return true;
}

struct ldrec *fuse_late_load(struct cc *c)
{
	struct ldrec *late = NULL;

	/*
	 * The loaded entry was popped once (by the op emitted last, whose
	 * result took its slot) and is the value stored here.
	 */
	for (uint32_t i = 0; i < c->nld; i++)
		if (c->ld[i].ok && c->ld[i].pops == 1 &&
		    c->nvs == c->ld[i].vs + 1)
			late = &c->ld[i];
	return late;
}

bool fuse_store(struct cc *c, uint8_t op, struct ldrec *late,
		const struct vent *a, const struct vent *v,
		const struct memarg *ma)
{
	bool flt = op == WASM_OP_f32_store || op == WASM_OP_f64_store;
	/* i32, i64, f32 and f64.store, not the narrowing ones */
	bool full = op <= WASM_OP_f64_store;

	if (flt && fuse_store_late(c, late, a, v, ma))
		return true;
	return full && fuse_store_last(c, a, v, ma);
}
