/*
 * compile.c - validation of a function body and its translation into the
 * internal code form of code.h, in one pass.
 *
 * Contract: wasm_compile_func() runs the spec's validation algorithm
 * (operand stack with an unknown type after unreachable code, control
 * frames, label types) over the raw body bytes and reports the spec's
 * reason text on failure: MALFORMED for bytes that do not decode (illegal
 * opcode, bad LEB128, missing end), INVALID for well-formed code that does
 * not type-check.  On success the function's code is ready to run.
 * Typed function references: operands are checked by subtyping
 * (wasm_valtype_sub), and locals of non-defaultable type ((ref ht)) must
 * be set before they are read, an initialization that a block's end
 * forgets (linit in compile.h).
 *
 * How the translation works (see code.h for the resulting form):
 *  - The compile-time operand stack mirrors the wasm stack.  Each entry
 *    knows its type, its slot (fixed by its height) and where its value
 *    is right now: in its slot (STACK), still in another slot (ALIAS: a
 *    local.get not yet copied, or a parameter of an enclosing `if` that
 *    is kept frozen below the if's operands), a constant (CONST), or an
 *    i32.add not computed yet (ADDI slot + constant, ADDS slot + slot).
 *    Consumers read aliases and constants directly and memory accesses
 *    fold pending sums into their address; an entry is computed into its
 *    slot ("materialised") only when it must be: before a local it reads
 *    is written, at block boundaries, or when an op has no such form.
 *  - Blocks deliver their values in the slots where the enclosing code
 *    expects them (the label's slot); a branch moves its values there
 *    and jumps, so nothing is searched at run time.
 *  - Peepholes (fuse.c, which says what it fuses and why), each looking
 *    only at the last few instructions emitted and never across a label:
 *    compile.c asks it before it emits a condition's branch, a local
 *    write, a copy, a binary op or a store, and emits the plain form when
 *    it declines.  Calls to functions of the same module are linked to
 *    the callee's code directly.
 *  - Code after an unconditional branch is validated but not emitted.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - the code, control and operand arrays of one function (grow(),
 *    doubling, refusing past 2^31 entries): each operator pushes a
 *    bounded number of entries and emits a fixed number of slots plus
 *    its immediates, so they grow with the body's length.
 *  - op_br_table: n + 1 label depths, n at most the bytes left in the
 *    body (checked before the malloc); the stub array, one per open
 *    control frame (at most the body's length); each stub a label's
 *    arity of moves (at most the type section's length).
 *  - setup_locals: one slot per local, WASM_MAX_FUNCTION_LOCALS (and
 *    the params, at most the type's length).
 */
#include <stdlib.h>
#include <string.h>

#include "wasm/compile.h"
#include "wasm/ops.h"
#include "wasm/validate.h"

/* A generous bound that keeps every slot number and cell offset small. */
#define MAX_SLOTS      (1u << 24)
#define MAX_CODE_CELLS (1u << 28)

#define VT_I32 WASM_I32
#define VT_I64 WASM_I64
#define VT_F32 WASM_F32
#define VT_F64 WASM_F64

/* Whether entry e is waiting on the value of some local. */
static bool ent_reads_local(const struct vent *e, uint32_t nlocal_slots)
{
	switch (e->kind) {
	case VK_ALIAS:
	case VK_ADDI:
		return (uint32_t)e->val < nlocal_slots;
	case VK_ADDS:
		return (uint32_t)e->val < nlocal_slots ||
		       (uint32_t)(e->val >> 32) < nlocal_slots;
	default:
		return false;
	}
}

/* ---- errors and growth -------------------------------------------------- */

static int invalid(struct cc *c, const char *msg)
{
	return wasm_error_set(c->err, WASM_ERR_INVALID, c->op_off, "%s", msg);
}

static int invalidx(struct cc *c, const char *fmt, uint32_t x)
{
	return wasm_error_set(c->err, WASM_ERR_INVALID, c->op_off, fmt, x);
}

static int malformed(struct cc *c, size_t off, const char *msg)
{
	return wasm_error_set(c->err, WASM_ERR_MALFORMED, off, "%s", msg);
}

static int oom(struct cc *c)
{
	c->oom = true;
	return wasm_error_set(c->err, WASM_ERR_RESOURCE, c->op_off,
			      "out of memory compiling function");
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t n;
	void *q;

	if (need <= *cap)
		return 0;
	n = *cap ? *cap : 16;
	while (n < need) {
		if (n > UINT32_MAX / 2)
			return -1;
		n *= 2;
	}
	q = realloc(*p, (size_t)n * elem);
	if (q == NULL)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

#define GROW(c, arr, cap, need)                                                \
	(grow((void **)&(c)->arr, &(c)->cap, (need), sizeof *(c)->arr)         \
		 ? oom(c)                                                      \
		 : 0)

int cc_grow_code(struct cc *c, uint32_t need)
{
	return GROW(c, code, ccode, need);
}

static bool is_num(wasm_valtype t)
{
	uint8_t b = (uint8_t)t;
	return t == T_UNKNOWN || b == WASM_I32 || b == WASM_I64 ||
	       b == WASM_F32 || b == WASM_F64;
}

static bool is_ref(wasm_valtype t)
{
	return t == T_UNKNOWN || wasm_valtype_is_ref(t);
}

/* ---- block types -------------------------------------------------------- */

static wasm_valtype bt_param(const struct cc *c, const struct ctl *f,
			     uint32_t i)
{
	return c->m->types[f->typeidx].params[i];
}

static wasm_valtype bt_result(const struct cc *c, const struct ctl *f,
			      uint32_t i)
{
	if (f->typeidx == NONE)
		return f->single;
	return c->m->types[f->typeidx].results[i];
}

static uint32_t label_arity(const struct ctl *f)
{
	return f->kind == BK_LOOP ? f->np : f->nr;
}

static wasm_valtype label_type(const struct cc *c, const struct ctl *f,
			       uint32_t i)
{
	return f->kind == BK_LOOP ? bt_param(c, f, i) : bt_result(c, f, i);
}

/* ---- code emission ------------------------------------------------------ */

/*
 * Reserve an instruction of `n` operand cells; returns where the operands
 * go.  When the code is dead (or memory ran out) the cells go to scratch.
 */
static uint32_t *emit_force(struct cc *c, uint32_t op, uint32_t n)
{
	uint32_t pos = c->ncode;

	if (c->oom || n + 1 > MAX_CODE_CELLS - c->ncode ||
	    GROW(c, code, ccode, c->ncode + n + 1)) {
		c->oom = true;
		return c->scratch;
	}
	if (c->nld > 0)
		fuse_note_emit(c, pos, op);
	c->code[pos] = wasm_interp_opcell((enum wasm_iop)op);
	c->ncode += n + 1;
	c->prev2 = c->prev;
	c->prev2_iop = c->prev_iop;
	c->prev = c->last;
	c->prev_iop = c->last_iop;
	c->last = pos;
	c->last_iop = op;
	c->last_dest = false;
	return &c->code[pos + 1];
}

uint32_t *cc_emit(struct cc *c, uint32_t op, uint32_t n)
{
	if (!live(c))
		return c->scratch;
	return emit_force(c, op, n);
}

/* Like cc_emit, for ops whose first operand is their output slot. */
uint32_t *cc_emit_d(struct cc *c, uint32_t op, uint32_t n)
{
	uint32_t *p = cc_emit(c, op, n);

	if (p != c->scratch)
		c->last_dest = true;
	return p;
}

static uint32_t new_label(struct cc *c)
{
	if (GROW(c, labels, clabels, c->nlabels + 1))
		return 0;
	c->labels[c->nlabels] = NONE;
	return c->nlabels++;
}

static void place_label(struct cc *c, uint32_t l)
{
	if (l < c->nlabels)
		c->labels[l] = c->ncode;
	forget(c);
	c->nld = 0;
}

/* Cell `cell` of the instruction at `insn` gets the offset to label l. */
static void add_fix(struct cc *c, uint32_t *cellp, uint32_t insn, uint32_t l)
{
	if (cellp == c->scratch || c->oom)
		return;
	if (GROW(c, fixes, cfixes, c->nfixes + 1))
		return;
	c->fixes[c->nfixes].cell = (uint32_t)(cellp - c->code);
	c->fixes[c->nfixes].insn = insn;
	c->fixes[c->nfixes].label = l;
	c->nfixes++;
}

static int note_branch_park(struct cc *c, uint32_t insn, uint32_t ref_slot,
			    wasm_valtype ref_type);
static int note_loop_park(struct cc *c, uint32_t insn, const struct ctl *t);

static void emit_jump(struct cc *c, uint32_t label)
{
	uint32_t *p = cc_emit(c, WASM_IOP_br, 1);
	add_fix(c, p, c->ncode - 2, label);
}

/* ---- operand stack ------------------------------------------------------ */

static uint32_t next_slot(struct cc *c)
{
	struct ctl *f = top(c);

	if (c->nvs > f->height) {
		struct vent *t = &c->vs[c->nvs - 1];
		return t->slot + tslots(t->type);
	}
	return f->min_slot;
}

static int push_ent(struct cc *c, wasm_valtype t, uint8_t kind, uint64_t val)
{
	struct vent *e;
	uint32_t slot = next_slot(c);

	if (slot + 2 > MAX_SLOTS)
		return invalid(c, "function frame too large");
	if (GROW(c, vs, cvs, c->nvs + 1))
		return -1;
	e = &c->vs[c->nvs++];
	if (t != T_UNKNOWN && wasm_valtype_is_ref(t))
		c->holds_refs = true;
	e->type = t;
	e->kind = kind;
	e->slot = slot;
	e->val = val;
	if (slot + tslots(t) > c->max_slot)
		c->max_slot = slot + tslots(t);
	return 0;
}

int cc_push(struct cc *c, wasm_valtype t)
{
	return push_ent(c, t, VK_STACK, 0);
}

static int type_mismatch(struct cc *c)
{
	return invalid(c, "type mismatch");
}

/* The reference interpreter's wording, for one operand. */
static int pop_mismatch(struct cc *c, wasm_valtype want, const struct vent *e)
{
	char w[40], g[40];

	if (want == T_UNKNOWN)
		return type_mismatch(c);
	return wasm_error_set(c->err, WASM_ERR_INVALID, c->op_off,
			      "type mismatch: instruction requires [%s] but "
			      "stack has [%s]",
			      wasm_valtype_format(want, w, sizeof(w)),
			      e ? wasm_valtype_format(e->type, g, sizeof(g))
				: "");
}

/*
 * Pop one value of type `expect` (T_UNKNOWN: any type).  Below the frame's
 * height in unreachable code, yields an entry of unknown type.
 */
static int pop(struct cc *c, wasm_valtype expect, struct vent *out)
{
	struct ctl *f = top(c);

	if (c->nvs == f->height) {
		if (!f->unreachable)
			return pop_mismatch(c, expect, NULL);
		out->type = T_UNKNOWN;
		out->kind = VK_STACK;
		out->slot = next_slot(c);
		out->val = 0;
		return 0;
	}
	*out = c->vs[--c->nvs];
	for (uint32_t i = 0; i < c->nld; i++) {
		/* slot d belongs to entry vs while nothing below it moves */
		struct ldrec *l = &c->ld[i];
		if (c->nvs < l->vs)
			l->ok = false;
		else if (c->nvs == l->vs)
			l->pops++;
	}
	if (expect != T_UNKNOWN && out->type != T_UNKNOWN &&
	    out->type != expect && !wasm_valtype_sub(c->m, out->type, expect))
		return pop_mismatch(c, expect, out);
	return 0;
}

static int ensure_tmp(struct cc *c, uint32_t n)
{
	return GROW(c, tmp, ctmp, n);
}

/*
 * Pop n values whose types are given by `ty(i)` into c->tmp[0..n) (in
 * stack order).
 */
typedef wasm_valtype (*type_at_fn)(const struct cc *c, const void *ctx,
				   uint32_t i);

static int pop_vals(struct cc *c, uint32_t n, type_at_fn ty, const void *ctx)
{
	if (ensure_tmp(c, n))
		return -1;
	for (uint32_t i = n; i-- > 0;)
		if (pop(c, ty(c, ctx, i), &c->tmp[i]))
			return -1;
	return 0;
}

static wasm_valtype ty_params(const struct cc *c, const void *ctx, uint32_t i)
{
	return ((const wasm_functype *)ctx)->params[i];
}

static wasm_valtype ty_results(const struct cc *c, const void *ctx, uint32_t i)
{
	return ((const wasm_functype *)ctx)->results[i];
}

static wasm_valtype ty_label(const struct cc *c, const void *ctx, uint32_t i)
{
	return label_type(c, (const struct ctl *)ctx, i);
}

static wasm_valtype ty_bparams(const struct cc *c, const void *ctx, uint32_t i)
{
	return bt_param(c, (const struct ctl *)ctx, i);
}

static wasm_valtype ty_bresults(const struct cc *c, const void *ctx, uint32_t i)
{
	return bt_result(c, (const struct ctl *)ctx, i);
}

/*
 * Check, without changing the stack, that its top n values have the types
 * ty(i) (the spec's push_vals(pop_vals(...)) for br_table).
 */
static int check_vals(struct cc *c, uint32_t n, type_at_fn ty, const void *ctx)
{
	struct ctl *f = top(c);
	uint32_t avail = c->nvs - f->height;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = n - 1 - k; /* from the top down */
		wasm_valtype t;

		if (k >= avail) {
			if (!f->unreachable)
				return type_mismatch(c);
			return 0;
		}
		t = c->vs[c->nvs - 1 - k].type;
		if (t != T_UNKNOWN && !wasm_valtype_sub(c->m, t, ty(c, ctx, i)))
			return type_mismatch(c);
	}
	return 0;
}

/* ---- moving values ------------------------------------------------------ */

static void emit_const(struct cc *c, uint32_t dst, wasm_valtype t, uint64_t v)
{
	uint32_t *p;

	if (v <= UINT32_MAX) {
		p = cc_emit_d(c, WASM_IOP_const32, 2);
		p[0] = dst;
		p[1] = (uint32_t)v;
	} else {
		p = cc_emit_d(c, WASM_IOP_const64, 3);
		p[0] = dst;
		p[1] = (uint32_t)v;
		p[2] = (uint32_t)(v >> 32);
	}
	(void)t;
}

static void emit_copy(struct cc *c, uint32_t dst, uint32_t src, wasm_valtype t)
{
	uint32_t *p;

	if (dst == src)
		return;
	if (tslots(t) == 1 && fuse_copy(c, dst, src))
		return;
	p = cc_emit_d(c, tslots(t) == 2 ? WASM_IOP_copy2 : WASM_IOP_copy, 2);
	p[0] = dst;
	p[1] = src;
}

/* Emit code that puts the value of `e` into slot dst (no state change). */
static void emit_move(struct cc *c, uint32_t dst, const struct vent *e)
{
	switch (e->kind) {
	case VK_STACK:
		emit_copy(c, dst, e->slot, e->type);
		break;
	case VK_ALIAS:
		emit_copy(c, dst, (uint32_t)e->val, e->type);
		break;
	case VK_CONST:
		emit_const(c, dst, e->type, e->val);
		break;
	case VK_ADDI: {
		uint32_t *p = cc_emit_d(c, WASM_IOP_i32_add_si, 3);
		p[0] = dst;
		p[1] = addi_src(e);
		p[2] = addi_imm(e);
		break;
	}
	case VK_ADDS: {
		uint32_t *p = cc_emit_d(c, WASM_IOP_i32_add_ss, 3);
		p[0] = dst;
		p[1] = (uint32_t)e->val;
		p[2] = (uint32_t)(e->val >> 32);
		break;
	}
	}
}

static void materialize_ent(struct cc *c, struct vent *e)
{
	if (e->kind == VK_STACK)
		return;
	emit_move(c, e->slot, e);
	e->kind = VK_STACK;
}

/* The slot an op may read the value of e from (constants get a slot). */
static uint32_t src_of(struct cc *c, struct vent *e)
{
	if (e->kind == VK_CONST || e->kind == VK_ADDI || e->kind == VK_ADDS)
		materialize_ent(c, e);
	return e->kind == VK_ALIAS ? (uint32_t)e->val : e->slot;
}

/* Materialise every entry of the current frame that reads local ls. */
static void materialize_local(struct cc *c, uint32_t ls)
{
	for (uint32_t i = top(c)->height; i < c->nvs; i++)
		if (ent_reads(&c->vs[i], ls))
			materialize_ent(c, &c->vs[i]);
}

/* Before a block: nothing may keep reading a local into it. */
static void materialize_locals(struct cc *c)
{
	for (uint32_t i = top(c)->height; i < c->nvs; i++)
		if (ent_reads_local(&c->vs[i], c->nlocal_slots))
			materialize_ent(c, &c->vs[i]);
}

static bool needs_moves(struct cc *c, uint32_t dst, uint32_t n)
{
	uint32_t off = 0;

	for (uint32_t i = c->nvs - n; i < c->nvs; i++) {
		const struct vent *e = &c->vs[i];
		if (e->kind != VK_STACK || e->slot != dst + off)
			return true;
		off += tslots(e->type);
	}
	return false;
}

/*
 * Move the top n values to consecutive slots from dst.  Ascending order is
 * safe: dst is never above the values' own slots, and aliased slots are
 * either locals (below every target) or frozen if-parameters, which only
 * ever move onto themselves.
 */
static void emit_moves(struct cc *c, uint32_t dst, uint32_t n)
{
	uint32_t off = 0;

	for (uint32_t i = c->nvs - n; i < c->nvs; i++) {
		const struct vent *e = &c->vs[i];
		emit_move(c, dst + off, e);
		off += tslots(e->type);
	}
}

/* Leave the function with its results from the top of the stack. */
static void emit_return(struct cc *c)
{
	uint32_t n = c->ft->nresults;
	const struct vent *e;
	uint32_t *p;

	if (!live(c))
		return;
	if (n == 0) {
		cc_emit(c, WASM_IOP_ret, 0);
		return;
	}
	e = &c->vs[c->nvs - 1];
	if (n == 1 && (e->kind == VK_STACK || e->kind == VK_ALIAS)) {
		p = cc_emit(
			c, tslots(e->type) == 2 ? WASM_IOP_ret2 : WASM_IOP_ret1,
			1);
		p[0] = e->kind == VK_ALIAS ? (uint32_t)e->val : e->slot;
		return;
	}
	if (n == 1) {
		emit_move(c, 0, e);
		cc_emit(c, WASM_IOP_ret, 0);
		return;
	}
	/*
	 * Several results: first give every value its own stack slot (the
	 * targets overlap the locals an alias may read), then slide them
	 * down.  No entry changes state: this may be a conditional path.
	 */
	for (uint32_t i = c->nvs - n; i < c->nvs; i++)
		if (c->vs[i].kind != VK_STACK)
			emit_move(c, c->vs[i].slot, &c->vs[i]);
	if (c->vs[c->nvs - n].slot != 0) {
		uint32_t ns = 0;
		for (uint32_t i = 0; i < n; i++)
			ns += tslots(c->ft->results[i]);
		p = cc_emit(c, WASM_IOP_copyn, 3);
		p[0] = 0;
		p[1] = c->vs[c->nvs - n].slot;
		p[2] = ns;
	}
	cc_emit(c, WASM_IOP_ret, 0);
}

/* Unconditional branch to the label `depth` levels up; values on top. */
static void emit_br(struct cc *c, uint32_t depth)
{
	struct ctl *t = &c->cs[c->ncs - 1 - depth];

	if (!live(c))
		return;
	if (t->kind == BK_FUNC) {
		emit_return(c);
		return;
	}
	emit_moves(c, t->label_slot, label_arity(t));
	emit_jump(c, t->label);
	if (t->kind == BK_LOOP && !c->oom)
		note_loop_park(c, c->ncode - 2, t);
}

/* ---- conditions --------------------------------------------------------- */

/*
 * Pop an i32 condition.  When the last instruction computed it (a
 * comparison or eqz into the condition's slot), that instruction is taken
 * back and its operands become the condition.
 */
static int pop_cond(struct cc *c, struct cond *cd)
{
	struct vent e;

	cd->ref = T_UNKNOWN;
	if (pop(c, WASM_I32, &e))
		return -1;
	cd->op_true = WASM_IOP_br_nz;
	cd->op_false = WASM_IOP_br_z;
	cd->n = 1;
	if (!live(c)) {
		cd->cells[0] = 0;
		return 0;
	}
	if (fuse_cond(c, &e, cd))
		return 0;
	cd->cells[0] = src_of(c, &e);
	return 0;
}

/* Branch to label l when the condition is `when`. */
static void emit_cond_br(struct cc *c, const struct cond *cd, bool when,
			 uint32_t l)
{
	uint32_t *p = cc_emit(c, when ? cd->op_true : cd->op_false, cd->n + 1);
	uint32_t insn = c->ncode - cd->n - 2;

	memcpy(p, cd->cells, cd->n * sizeof(uint32_t));
	add_fix(c, p + cd->n, insn, l);
	/* back to a loop: a park point (code.h parks) */
	if (p != c->scratch && l < c->nlabels && c->labels[l] != NONE)
		note_branch_park(c, insn, cd->cells[0], cd->ref);
}

/* ---- control frames ----------------------------------------------------- */

/* After 0x63 (ref null ht) or 0x64 (ref ht) in an instruction. */
static int read_ref_after(struct cc *c, uint8_t b, wasm_valtype *t)
{
	size_t off = c->r.pos;
	int64_t ht;

	if (wasm_read_s33(&c->r, &ht))
		return -1;
	return wasm_heaptype_ref(c->m, ht, b == 0x63, off, t, c->err);
}

static int read_blocktype(struct cc *c, struct ctl *f)
{
	size_t off = c->r.pos;
	uint8_t b;
	int64_t v;

	if (wasm_peek_u8(&c->r, &b))
		return -1;
	f->typeidx = NONE;
	f->np = 0;
	f->nr = 0;
	switch (b) {
	case 0x40: /* the empty block type */
		c->r.pos++;
		return 0;
	case WASM_I32:
	case WASM_I64:
	case WASM_F32:
	case WASM_F64:
	case WASM_V128:
	case WASM_FUNCREF:
	case WASM_EXTERNREF:
	case WASM_EXNREF:
		c->r.pos++;
		f->nr = 1;
		f->single = b;
		return 0;
	case 0x63:
	case 0x64:
		c->r.pos++;
		f->nr = 1;
		return read_ref_after(c, b, &f->single);
	default:
		break;
	}
	if (wasm_read_s33(&c->r, &v))
		return -1;
	if (v < 0)
		return malformed(c, off, "malformed value type");
	if ((uint64_t)v >= c->m->ntypes)
		return invalidx(c, "unknown type %u", (uint32_t)v);
	f->typeidx = (uint32_t)v;
	f->np = c->m->types[v].nparams;
	f->nr = c->m->types[v].nresults;
	return 0;
}

/*
 * Enter a block-like frame `f` (kind and block type filled).  The params
 * are popped (type-checked), materialised in their slots and pushed again
 * inside the new frame.  For `if`, the condition was popped already.
 */
static int enter_block(struct cc *c, struct ctl *nf)
{
	bool was_live = live(c);
	struct ctl *f;

	if (pop_vals(c, nf->np, ty_bparams, nf))
		return -1;
	nf->unreachable = false;
	nf->dead = !was_live;
	nf->has_else = false;
	nf->height = c->nvs;
	nf->label_slot = next_slot(c);
	nf->min_slot = nf->label_slot;
	nf->else_label = NONE;
	nf->handler = NONE;
	nf->init_height = c->nlinit;
	if (was_live) {
		/* pop_vals left the entries in tmp with their slots intact */
		for (uint32_t i = 0; i < nf->np; i++)
			materialize_ent(c, &c->tmp[i]);
	}
	nf->label = new_label(c);
	if (GROW(c, cs, ccs, c->ncs + 1))
		return -1;
	c->cs[c->ncs++] = *nf;
	f = top(c);
	if (f->kind == BK_IF && f->np > 0) {
		/* Keep the params frozen for the else branch (see header). */
		uint32_t s = f->label_slot;
		for (uint32_t i = 0; i < f->np; i++)
			s += tslots(bt_param(c, f, i));
		f->min_slot = s;
		s = f->label_slot;
		for (uint32_t i = 0; i < f->np; i++) {
			wasm_valtype t = bt_param(c, f, i);
			if (push_ent(c, t, VK_ALIAS, s))
				return -1;
			s += tslots(t);
		}
		return 0;
	}
	for (uint32_t i = 0; i < f->np; i++)
		if (cc_push(c, bt_param(c, f, i)))
			return -1;
	return 0;
}

static int op_block(struct cc *c, uint8_t kind)
{
	struct ctl nf;

	memset(&nf, 0, sizeof nf);
	nf.kind = kind;
	if (read_blocktype(c, &nf))
		return -1;
	if (live(c))
		materialize_locals(c);
	if (enter_block(c, &nf))
		return -1;
	if (kind == BK_LOOP)
		place_label(c, top(c)->label);
	return 0;
}

static int op_if(struct cc *c)
{
	struct ctl nf;
	struct cond cd;

	memset(&nf, 0, sizeof nf);
	nf.kind = BK_IF;
	if (read_blocktype(c, &nf))
		return -1;
	if (pop_cond(c, &cd))
		return -1;
	/*
	 * Materialising may emit copies after the comparison was taken
	 * back; they only write stack slots below the comparison's inputs,
	 * so the fused branch can still read them afterwards.
	 */
	if (live(c))
		materialize_locals(c);
	if (enter_block(c, &nf))
		return -1;
	top(c)->else_label = new_label(c);
	if (!top(c)->dead) {
		/* cc_emit() looks at the new frame, which is live */
		emit_cond_br(c, &cd, false, top(c)->else_label);
	}
	return 0;
}

static int read_label(struct cc *c, uint32_t *depth)
{
	if (wasm_read_u32(&c->r, depth))
		return -1;
	if (*depth >= c->ncs)
		return invalidx(c, "unknown label %u", *depth);
	return 0;
}

static int read_tag(struct cc *c, uint32_t *x)
{
	if (wasm_read_u32(&c->r, x))
		return -1;
	if (*x >= wasm_module_ntags(c->m))
		return invalidx(c, "unknown tag %u", *x);
	return 0;
}

static const wasm_functype *tag_type(struct cc *c, uint32_t x)
{
	return &c->m->types[wasm_module_tag_type(c->m, x)->typeidx];
}

/*
 * Enter the block nf of a try_table or a legacy try, whose handler
 * (catches[first .. first + n)) covers the code from here to its end.
 */
static int open_handler(struct cc *c, struct ctl *nf, uint32_t first,
			uint32_t n)
{
	struct wasm_handler *h;

	if (live(c))
		materialize_locals(c);
	if (enter_block(c, nf))
		return -1;
	if (GROW(c, handlers, chandlers, c->nhandlers + 1))
		return -1;
	h = &c->handlers[c->nhandlers];
	h->start = h->end = c->ncode;
	h->first = first;
	h->ncatches = n;
	h->skip = 0;
	top(c)->handler = c->nhandlers++;
	forget(c); /* the handler range starts here */
	c->nld = 0;
	return 0;
}

static int op_try_table(struct cc *c)
{
	struct ctl nf;
	uint32_t n, first;

	memset(&nf, 0, sizeof nf);
	nf.kind = BK_TRY;
	if (read_blocktype(c, &nf) || wasm_read_u32(&c->r, &n))
		return -1;
	if (n > wasm_reader_remaining(&c->r))
		return malformed(c, c->r.pos, WASM_MSG_UNEXPECTED_END_SECTION);
	first = c->ncatches;
	for (uint32_t i = 0; i < n; i++) {
		size_t off = c->r.pos;
		struct wasm_catch *k;
		const wasm_functype *tt = NULL;
		struct ctl *t;
		uint32_t tag = 0, depth, want;
		uint8_t kind;

		if (wasm_read_u8(&c->r, &kind))
			return -1;
		if (kind > 3)
			return malformed(c, off, "malformed catch clause");
		if (kind <= WASM_CATCH_REF) {
			if (read_tag(c, &tag))
				return -1;
			tt = tag_type(c, tag);
		}
		if (read_label(c, &depth))
			return -1;
		t = &c->cs[c->ncs - 1 - depth];
		want = (tt ? tt->nparams : 0) +
		       (kind == WASM_CATCH_REF || kind == WASM_CATCH_ALL_REF);
		if (label_arity(t) != want)
			return type_mismatch(c);
		for (uint32_t k2 = 0; tt && k2 < tt->nparams; k2++)
			if (!wasm_valtype_sub(c->m, tt->params[k2],
					      label_type(c, t, k2)))
				return type_mismatch(c);
		/* the caught exnref is never null: (ref exn) */
		if ((kind == WASM_CATCH_REF || kind == WASM_CATCH_ALL_REF) &&
		    !wasm_valtype_sub(c->m,
				      wasm_reftype(WASM_EXNREF, false,
						   WASM_HEAP_TOP),
				      label_type(c, t, want - 1)))
			return type_mismatch(c);
		if (GROW(c, catches, ccatches, c->ncatches + 1))
			return -1;
		k = &c->catches[c->ncatches++];
		k->kind = kind;
		k->tagidx = tag;
		if (t->kind == BK_FUNC) {
			k->target = c->func_label;
			k->dst = 0;
			c->func_label_used = true;
		} else {
			k->target = t->label;
			k->dst = t->label_slot;
		}
	}
	return open_handler(c, &nf, first, n);
}

static void forget_inits(struct cc *c, uint32_t h);
static void set_unreachable(struct cc *c);

/*
 * Legacy exception handling (the exception-handling proposal's first
 * form, which LLVM and Emscripten still emit for -fwasm-exceptions):
 * `try bt` opens a block whose body is a handler range, as try_table's;
 * each `catch x` / `catch_all` ends the current part and starts a
 * clause, reached only from the unwinder, with the caught exception
 * kept below the clause's values for `rethrow`; `delegate l` ends the
 * try with a handler that sends its exceptions past the handlers
 * between it and label l (code.h wasm_handler.skip).
 */
static int op_try(struct cc *c)
{
	struct ctl nf;

	memset(&nf, 0, sizeof nf);
	nf.kind = BK_LTRY;
	if (read_blocktype(c, &nf))
		return -1;
	/* its catches are placed at its end (ltry_flush) */
	if (open_handler(c, &nf, 0, 0))
		return -1;
	top(c)->phase = LT_BODY;
	top(c)->pend = c->nlpend;
	return 0;
}

/*
 * End the current part of legacy try f (its body or a clause): its
 * values go to the label, the body's handler range ends, a clause's
 * exception entry is dropped.  The stack is then the try's at entry.
 */
static int ltry_close_part(struct cc *c, struct ctl *f)
{
	if (pop_vals(c, f->nr, ty_bresults, f))
		return -1;
	if (c->nvs != f->height)
		return type_mismatch(c);
	if (live(c)) {
		c->nvs += f->nr;
		emit_moves(c, f->label_slot, f->nr);
		c->nvs -= f->nr;
	}
	if (f->phase == LT_BODY) {
		if (f->handler != NONE)
			c->handlers[f->handler].end = c->ncode;
	} else {
		/* the exception entry, below the clause's height */
		c->nvs--;
		f->height--;
		f->min_slot = f->label_slot;
	}
	return 0;
}

/* catch x (tagged) or catch_all: the next clause of the legacy try. */
static int op_catch(struct cc *c, bool tagged)
{
	struct ctl *f = top(c);
	const wasm_functype *tt = NULL;
	struct wasm_catch *k;
	uint32_t tag = 0, l;

	if (f->kind != BK_LTRY || f->phase == LT_CATCH_ALL)
		return malformed(c, c->op_off,
				 tagged ? "catch without a try"
					: "catch_all without a try");
	if (tagged) {
		if (read_tag(c, &tag))
			return -1;
		tt = tag_type(c, tag);
	}
	if (ltry_close_part(c, f))
		return -1;
	if (live(c))
		emit_jump(c, f->label);
	f->phase = tagged ? LT_CATCH : LT_CATCH_ALL;
	f->unreachable = false;
	forget_inits(c, f->init_height);
	l = new_label(c);
	place_label(c, l);
	if (GROW(c, lpend, clpend, c->nlpend + 1))
		return -1;
	k = &c->lpend[c->nlpend++];
	k->kind = tagged ? WASM_CATCH_LEGACY : WASM_CATCH_ALL_LEGACY;
	k->tagidx = tag;
	k->target = l;
	k->dst = f->label_slot;
	/* the exception, in label_slot, under the clause's values */
	if (push_ent(c, wasm_reftype(WASM_EXNREF, false, WASM_HEAP_TOP),
		     VK_STACK, 0))
		return -1;
	f->height++;
	f->min_slot = f->label_slot + 1;
	for (uint32_t i = 0; tt && i < tt->nparams; i++)
		if (cc_push(c, tt->params[i]))
			return -1;
	return 0;
}

/*
 * At a legacy try's end: its clauses' catches join c->catches in order,
 * contiguous, as its handler's.
 */
static int ltry_flush(struct cc *c, const struct ctl *f)
{
	uint32_t n = c->nlpend - f->pend;

	if (n == 0) /* a catchless try, or a delegate: lpend may be NULL */
		return 0;
	if (GROW(c, catches, ccatches, c->ncatches + n))
		return -1;
	if (f->handler != NONE) {
		c->handlers[f->handler].first = c->ncatches;
		c->handlers[f->handler].ncatches = n;
	}
	memcpy(c->catches + c->ncatches, c->lpend + f->pend,
	       (size_t)n * sizeof *c->catches);
	c->ncatches += n;
	c->nlpend = f->pend;
	return 0;
}

/* Does frame f's handler range hold the code being compiled? */
static bool in_handler_range(const struct ctl *f)
{
	return f->handler != NONE &&
	       (f->kind == BK_TRY || (f->kind == BK_LTRY && f->phase == LT_BODY));
}

static int op_end(struct cc *c);

/*
 * delegate l: ends a legacy try (in its body) whose exceptions go to the
 * handlers of label l's block, counted from outside the try: the ranges
 * of the blocks between are passed over.  The function's label means
 * the caller.
 */
static int op_delegate(struct cc *c)
{
	struct ctl *f = top(c);
	uint32_t depth, skip = 1;

	if (f->kind != BK_LTRY || f->phase != LT_BODY)
		return malformed(c, c->op_off, "delegate without a try");
	if (wasm_read_u32(&c->r, &depth))
		return -1;
	if (depth >= c->ncs - 1)
		return invalidx(c, "unknown label %u", depth);
	for (uint32_t i = c->ncs - 1; i-- > c->ncs - 1 - depth;)
		skip += in_handler_range(&c->cs[i]);
	if (f->handler != NONE)
		c->handlers[f->handler].skip = skip;
	return op_end(c);
}

static int emit_throw_ref(struct cc *c, uint32_t s);

/* rethrow l: throws again the exception label l's clause caught. */
static int op_rethrow(struct cc *c)
{
	uint32_t depth;
	const struct ctl *t;

	if (read_label(c, &depth))
		return -1;
	t = &c->cs[c->ncs - 1 - depth];
	if (t->kind != BK_LTRY || t->phase == LT_BODY)
		return invalid(c, "invalid rethrow label");
	if (live(c))
		return emit_throw_ref(c, t->label_slot);
	set_unreachable(c);
	return 0;
}

/* The locals set since linit_set had height h are unset again. */
static void forget_inits(struct cc *c, uint32_t h)
{
	while (c->nlinit > h)
		c->linit[c->linit_set[--c->nlinit]] = false;
}

static int op_else(struct cc *c)
{
	struct ctl *f = top(c);

	if (f->kind != BK_IF || f->has_else)
		return malformed(c, c->op_off, "END opcode expected");
	if (pop_vals(c, f->nr, ty_bresults, f))
		return -1;
	if (c->nvs != f->height)
		return type_mismatch(c);
	if (live(c)) {
		/* the popped results are still in vs[nvs .. nvs + nr) */
		c->nvs += f->nr;
		emit_moves(c, f->label_slot, f->nr);
		c->nvs -= f->nr;
		emit_jump(c, f->label);
	}
	place_label(c, f->else_label);
	f->unreachable = false;
	f->has_else = true;
	forget_inits(c, f->init_height);
	{
		uint32_t s = f->label_slot;
		for (uint32_t i = 0; i < f->np; i++) {
			wasm_valtype t = bt_param(c, f, i);
			if (push_ent(c, t, VK_ALIAS, s))
				return -1;
			s += tslots(t);
		}
	}
	return 0;
}

static int op_end(struct cc *c)
{
	struct ctl *f = top(c);
	struct ctl saved;

	if (f->kind == BK_LTRY) {
		/* the values are at the label once the part is closed */
		if (ltry_close_part(c, f))
			return -1;
		goto placed;
	}
	if (pop_vals(c, f->nr, ty_bresults, f))
		return -1;
	if (c->nvs != f->height)
		return type_mismatch(c);
	if (f->kind == BK_IF && !f->has_else) {
		if (f->np != f->nr)
			return type_mismatch(c);
		for (uint32_t i = 0; i < f->np; i++)
			if (!wasm_valtype_sub(c->m, bt_param(c, f, i),
					      bt_result(c, f, i)))
				return type_mismatch(c);
	}
	if (f->kind == BK_FUNC) {
		if (live(c)) {
			c->nvs += f->nr;
			emit_return(c);
			c->nvs -= f->nr;
		}
		c->ncs--;
		if (c->func_label_used) {
			place_label(c, c->func_label);
			emit_force(c, WASM_IOP_ret, 0);
		}
		return 0;
	}
	if (live(c)) {
		c->nvs += f->nr;
		emit_moves(c, f->label_slot, f->nr);
		c->nvs -= f->nr;
	}
placed:
	if (f->kind == BK_TRY && f->handler != NONE)
		c->handlers[f->handler].end = c->ncode;
	if (f->kind == BK_LTRY && ltry_flush(c, f))
		return -1;
	if (f->kind != BK_LOOP)
		place_label(c, f->label);
	if (f->kind == BK_IF && !f->has_else)
		place_label(c, f->else_label);
	saved = *f;
	c->ncs--;
	forget_inits(c, saved.init_height);
	if (saved.dead) {
		forget(c);
		c->nld = 0;
	}
	for (uint32_t i = 0; i < saved.nr; i++)
		if (cc_push(c, bt_result(c, &saved, i)))
			return -1;
	return 0;
}

static void set_unreachable(struct cc *c)
{
	struct ctl *f = top(c);

	c->nvs = f->height;
	f->unreachable = true;
}

static int op_br(struct cc *c)
{
	uint32_t depth;
	struct ctl *t;

	if (read_label(c, &depth))
		return -1;
	t = &c->cs[c->ncs - 1 - depth];
	if (check_vals(c, label_arity(t), ty_label, t))
		return -1;
	emit_br(c, depth);
	set_unreachable(c);
	return 0;
}

static int op_br_if(struct cc *c)
{
	uint32_t depth, n;
	struct ctl *t;
	struct cond cd;

	if (read_label(c, &depth))
		return -1;
	t = &c->cs[c->ncs - 1 - depth];
	n = label_arity(t);
	if (pop_cond(c, &cd))
		return -1;
	if (pop_vals(c, n, ty_label, t))
		return -1;
	/* push back: same slots; unknown entries take the label's types */
	for (uint32_t i = 0; i < n; i++) {
		struct vent *e;
		if (cc_push(c, label_type(c, t, i)))
			return -1;
		e = &c->vs[c->nvs - 1];
		if (c->tmp[i].type != T_UNKNOWN) {
			e->kind = c->tmp[i].kind;
			e->val = c->tmp[i].val;
		}
	}
	if (!live(c))
		return 0;
	if (t->kind != BK_FUNC && !needs_moves(c, t->label_slot, n)) {
		emit_cond_br(c, &cd, true, t->label);
	} else {
		uint32_t skip = new_label(c);
		emit_cond_br(c, &cd, false, skip);
		emit_br(c, depth);
		place_label(c, skip);
	}
	return 0;
}

/*
 * br_on_null l: [t* (ref null ht)] -> [t* (ref ht)], branching to l with
 * t* when the reference is null; br_on_non_null l: [t* (ref null ht)] ->
 * [t*], branching with t* and the (non-null) reference otherwise.  The
 * reference is tested like a br_if condition, as a 64-bit value.
 */
static int op_br_on_null(struct cc *c, bool on_null)
{
	uint32_t depth, n, nvals;
	struct ctl *t;
	struct cond cd;
	struct vent r, *e;
	wasm_valtype rt;

	if (read_label(c, &depth))
		return -1;
	t = &c->cs[c->ncs - 1 - depth];
	n = label_arity(t);
	if (pop(c, T_UNKNOWN, &r))
		return -1;
	if (!is_ref(r.type))
		return type_mismatch(c);
	rt = r.type == T_UNKNOWN ? T_UNKNOWN : r.type | WASM_REF_NONNULL;
	nvals = n;
	if (!on_null) {
		/* the label's last value is the reference itself */
		if (n == 0)
			return type_mismatch(c);
		if (rt != T_UNKNOWN &&
		    !wasm_valtype_sub(c->m, rt, label_type(c, t, n - 1)))
			return type_mismatch(c);
		nvals = n - 1;
	}
	cd.op_true = on_null ? WASM_IOP_br_z64 : WASM_IOP_br_nz64;
	cd.op_false = on_null ? WASM_IOP_br_nz64 : WASM_IOP_br_z64;
	cd.n = 1;
	cd.cells[0] = live(c) ? src_of(c, &r) : 0;
	cd.ref = r.type;
	if (pop_vals(c, nvals, ty_label, t))
		return -1;
	/* push back: same slots; unknown entries take the label's types */
	for (uint32_t i = 0; i < nvals; i++) {
		if (cc_push(c, label_type(c, t, i)))
			return -1;
		e = &c->vs[c->nvs - 1];
		if (c->tmp[i].type != T_UNKNOWN) {
			e->kind = c->tmp[i].kind;
			e->val = c->tmp[i].val;
		}
	}
	if (push_ent(c, rt, VK_STACK, 0))
		return -1;
	e = &c->vs[c->nvs - 1];
	if (r.type != T_UNKNOWN) {
		e->kind = r.kind;
		e->val = r.val;
	}
	if (live(c)) {
		/* br_on_null's branch does not carry the reference */
		if (on_null)
			c->nvs--;
		if (t->kind != BK_FUNC && !needs_moves(c, t->label_slot, n)) {
			emit_cond_br(c, &cd, true, t->label);
		} else {
			uint32_t skip = new_label(c);
			emit_cond_br(c, &cd, false, skip);
			emit_br(c, depth);
			place_label(c, skip);
		}
		if (on_null)
			c->nvs++;
	}
	if (!on_null)
		return pop(c, T_UNKNOWN, &r);
	return 0;
}

static int op_br_table(struct cc *c)
{
	uint32_t n, *depths, arity, def, idx;
	struct vent e;
	int rc = -1;

	if (wasm_read_u32(&c->r, &n))
		return -1;
	if (n > wasm_reader_remaining(&c->r))
		return malformed(c, c->r.pos, WASM_MSG_UNEXPECTED_END_SECTION);
	depths = malloc(((size_t)n + 1) * sizeof *depths);
	if (depths == NULL)
		return oom(c);
	for (uint32_t i = 0; i <= n; i++)
		if (read_label(c, &depths[i]))
			goto out;
	def = depths[n];
	if (pop(c, WASM_I32, &e))
		goto out;
	arity = label_arity(&c->cs[c->ncs - 1 - def]);
	for (uint32_t i = 0; i <= n; i++) {
		struct ctl *t = &c->cs[c->ncs - 1 - depths[i]];
		if (label_arity(t) != arity) {
			type_mismatch(c);
			goto out;
		}
		if (check_vals(c, arity, ty_label, t))
			goto out;
	}
	if (live(c)) {
		uint32_t *p, insn, *stub;

		idx = src_of(c, &e);
		p = cc_emit(c, WASM_IOP_br_table, n + 3);
		insn = c->ncode - n - 4;
		p[0] = idx;
		p[1] = n + 1;
		/* Targets that need moves (or a return) go through stubs. */
		stub = calloc((size_t)c->ncs, sizeof *stub);
		if (stub == NULL) {
			oom(c);
			goto out;
		}
		for (uint32_t i = 0; i <= n; i++) {
			struct ctl *t = &c->cs[c->ncs - 1 - depths[i]];
			uint32_t l;
			if (t->kind != BK_FUNC &&
			    !needs_moves(c, t->label_slot, arity)) {
				l = t->label;
			} else {
				if (stub[depths[i]] == 0)
					stub[depths[i]] = new_label(c) + 1;
				l = stub[depths[i]] - 1;
			}
			if (!c->oom)
				add_fix(c, &c->code[insn + 3 + i], insn, l);
			/* straight back to a loop: a park point */
			if (!c->oom && l < c->nlabels && c->labels[l] != NONE)
				note_branch_park(c, insn, 0, T_UNKNOWN);
		}
		for (uint32_t d = 0; d < c->ncs; d++) {
			if (stub[d] == 0)
				continue;
			place_label(c, stub[d] - 1);
			emit_br(c, d);
		}
		free(stub);
	}
	set_unreachable(c);
	rc = 0;
out:
	free(depths);
	return rc;
}

static int op_return(struct cc *c)
{
	if (check_vals(c, c->ft->nresults, ty_results, c->ft))
		return -1;
	emit_return(c);
	set_unreachable(c);
	return 0;
}

/* ---- calls -------------------------------------------------------------- */

/*
 * Pop a call's arguments, leaving them materialised in consecutive slots;
 * returns the first slot (the callee's frame base).
 */
static int pop_args(struct cc *c, const wasm_functype *ft, uint32_t *base)
{
	if (pop_vals(c, ft->nparams, ty_params, ft))
		return -1;
	*base = next_slot(c);
	if (live(c))
		for (uint32_t i = 0; i < ft->nparams; i++)
			materialize_ent(c, &c->tmp[i]);
	return 0;
}

static int push_results(struct cc *c, const wasm_functype *ft)
{
	for (uint32_t i = 0; i < ft->nresults; i++)
		if (cc_push(c, ft->results[i]))
			return -1;
	return 0;
}

/* Whether a tail call to a returns what the caller b must return. */
static int same_results(const struct cc *c, const wasm_functype *a,
			const wasm_functype *b)
{
	if (a->nresults != b->nresults)
		return 0;
	for (uint32_t i = 0; i < a->nresults; i++)
		if (!wasm_valtype_sub(c->m, a->results[i], b->results[i]))
			return 0;
	return 1;
}

/* ---- where a frame holds references (code.h refslots) ----------------- */

static int add_refslot(struct cc *c, uint32_t slot, wasm_valtype t)
{
	if (GROW(c, refslots, crefslots, c->nrefslots + 1))
		return -1;
	c->refslots[c->nrefslots].slot = slot;
	c->refslots[c->nrefslots].type = t;
	c->nrefslots++;
	return 0;
}

static int cmp_refslot(const void *a, const void *b)
{
	const struct wasm_refslot *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* Of two types one slot is seen with, the one that says more. */
static wasm_valtype stricter(wasm_valtype a, wasm_valtype b)
{
	if (wasm_ref_nullable(a) != wasm_ref_nullable(b))
		a |= WASM_REF_NONNULL;
	if (wasm_ref_heap(a) == WASM_HEAP_TOP)
		a = (a & ~(~0u << WASM_HEAP_SHIFT)) |
		    (wasm_ref_heap(b) << WASM_HEAP_SHIFT);
	return a;
}

/*
 * Record the references a frame holds now, as one list (ascending, one
 * entry a slot): the ref locals, entries vs[0, n) of a reference type
 * (a stack entry in its slot; an alias in the slot it reads: a local, or
 * a frozen if-parameter no entry of its own names) and `extra` (what the
 * op at the point reads from slots no entry owns any more).  Entries of
 * other kinds (constants) hold nothing in a slot.  out: start, end.
 */
static int note_refs(struct cc *c, uint32_t n, const struct wasm_refslot *extra,
		     uint32_t nextra, uint32_t out[2])
{
	uint32_t start = c->nrefslots, k = start;
	/*
	 * Every point repeats the ref locals and the entries below it, so
	 * the lists could grow with the product of a body's locals, depth
	 * and calls: past four entries a byte of body the points get no
	 * list (a snapshot refuses a frame standing there), which keeps the
	 * compiler's memory linear in what the guest sent.
	 */
	uint64_t cap = 4 * (uint64_t)c->code_entry->body_len + 4096;

	if ((uint64_t)start + c->nlrefs + n + nextra > cap) {
		out[0] = out[1] = WASM_NO_REFMAP;
		return 0;
	}

	for (uint32_t i = 0; i < c->nlrefs; i++)
		if (add_refslot(c, c->lrefs[i].slot, c->lrefs[i].type))
			return -1;
	for (uint32_t i = 0; i < n; i++) {
		const struct vent *e = &c->vs[i];

		if (e->type == T_UNKNOWN || !wasm_valtype_is_ref(e->type))
			continue;
		if (e->kind == VK_STACK && add_refslot(c, e->slot, e->type))
			return -1;
		if (e->kind == VK_ALIAS &&
		    add_refslot(c, (uint32_t)e->val, e->type))
			return -1;
	}
	for (uint32_t i = 0; i < nextra; i++)
		if (extra[i].type != T_UNKNOWN &&
		    wasm_valtype_is_ref(extra[i].type) &&
		    add_refslot(c, extra[i].slot, extra[i].type))
			return -1;
	if (c->nrefslots > start) /* else refslots may still be NULL */
		qsort(c->refslots + start, c->nrefslots - start,
		      sizeof *c->refslots, cmp_refslot);
	for (uint32_t i = start; i < c->nrefslots; i++) {
		if (k > start && c->refslots[k - 1].slot == c->refslots[i].slot)
			c->refslots[k - 1].type = stricter(
				c->refslots[k - 1].type, c->refslots[i].type);
		else
			c->refslots[k++] = c->refslots[i];
	}
	c->nrefslots = k;
	out[0] = start;
	out[1] = k;
	return 0;
}

/* A park point at op cell insn with references refs (start, end). */
static int add_park_map(struct cc *c, uint32_t insn, const uint32_t refs[2])
{
	if (c->npark_maps >= 3 && c->park_maps[c->npark_maps - 3] == insn)
		return 0; /* a br_table's second target of the same loop */
	if (GROW(c, park_maps, cpark_maps, c->npark_maps + 3))
		return -1;
	c->park_maps[c->npark_maps++] = insn;
	c->park_maps[c->npark_maps++] = refs[0];
	c->park_maps[c->npark_maps++] = refs[1];
	return 0;
}

/*
 * A backward branch at op cell insn that falls through or jumps with
 * the current entries in place (conditional, or a br_table's direct
 * target): what it holds is what the frame holds now, with the op's
 * reference operand (br_on_null's, which is off the stack meanwhile).
 */
static int note_branch_park(struct cc *c, uint32_t insn, uint32_t ref_slot,
			    wasm_valtype ref_type)
{
	struct wasm_refslot x = {ref_slot, ref_type};
	uint32_t refs[2];

	if (note_refs(c, c->nvs, &x, ref_type != T_UNKNOWN, refs))
		return -1;
	return add_park_map(c, insn, refs);
}

/*
 * An unconditional branch back to loop t at op cell insn, after the
 * moves of its values: the entries below the loop and its parameters
 * in their slots are what is live (the moves overwrote the rest).
 */
static int note_loop_park(struct cc *c, uint32_t insn, const struct ctl *t)
{
	uint32_t n = label_arity(t), off = 0, refs[2];
	struct wasm_refslot *x = n ? calloc(n, sizeof *x) : NULL;
	int rc;

	if (n && x == NULL)
		return oom(c);
	for (uint32_t i = 0; i < n; i++) {
		x[i].slot = t->label_slot + off;
		x[i].type = label_type(c, t, i);
		off += tslots(x[i].type);
	}
	rc = note_refs(c, t->height, x, n, refs);
	free(x);
	return rc ? rc : add_park_map(c, insn, refs);
}

/*
 * A non-tail call at op cell p (n operand cells) with its arguments at
 * base, to a function of type ft, the callee's reference (call_ref) in
 * slot fslot when ftype is not T_UNKNOWN: record where its callee
 * returns to (code.h resumes), what the frame holds there (below base)
 * and, a park point too, what it holds before the call (its arguments
 * and the callee's reference as well).
 */
static int note_resume(struct cc *c, const uint32_t *p, uint32_t n,
		       uint32_t base, uint32_t typeidx, uint32_t fslot,
		       wasm_valtype ftype)
{
	const wasm_functype *ft = &c->m->types[typeidx];
	uint32_t at, refs[2], np = ft->nparams;
	struct wasm_refslot *x;
	int rc;

	if (p == c->scratch)
		return 0;
	at = (uint32_t)(p - c->code) - 1;
	if (GROW(c, resumes, cresumes, c->nresumes + WASM_RESUME_CELLS) ||
	    GROW(c, resume_refs, cresume_refs, c->nresume_refs + 2))
		return -1;
	c->resumes[c->nresumes++] = at;
	c->resumes[c->nresumes++] = at + 1 + n;
	c->resumes[c->nresumes++] = base;
	c->resumes[c->nresumes++] = typeidx;
	if (note_refs(c, c->nvs, NULL, 0, refs))
		return -1;
	c->resume_refs[c->nresume_refs++] = refs[0];
	c->resume_refs[c->nresume_refs++] = refs[1];
	x = calloc((size_t)np + 1, sizeof *x);
	if (x == NULL)
		return oom(c);
	for (uint32_t i = 0; i < np; i++) {
		x[i].slot = c->tmp[i].slot;
		x[i].type = ft->params[i];
	}
	x[np].slot = fslot;
	x[np].type = ftype;
	rc = note_refs(c, c->nvs, x, np + 1, refs);
	free(x);
	return rc ? rc : add_park_map(c, at, refs);
}

static int op_call(struct cc *c, bool tail)
{
	uint32_t x, y, base, *p;
	const wasm_functype *ft;

	if (wasm_read_u32(&c->r, &x))
		return -1;
	if (x >= wasm_module_nfuncs(c->m))
		return invalidx(c, "unknown function %u", x);
	y = wasm_module_func_typeidx(c->m, x);
	ft = &c->m->types[y];
	if (tail && !same_results(c, ft, c->ft))
		return type_mismatch(c);
	if (pop_args(c, ft, &base))
		return -1;
	if (x >= c->m->nimported_funcs) {
		/* same module: linked to the callee's code after compiling */
		p = cc_emit(c,
			    tail ? WASM_IOP_return_call_local
				 : WASM_IOP_call_local,
			    1 + WASM_PTR_CELLS);
		p[0] = base;
		memset(p + 1, 0, WASM_PTR_CELLS * sizeof *p);
		p[1] = x - c->m->nimported_funcs;
		if (p != c->scratch && !GROW(c, links, clinks, c->nlinks + 1))
			c->links[c->nlinks++] = (uint32_t)(p + 1 - c->code);
		if (!tail && note_resume(c, p, 1 + WASM_PTR_CELLS, base, y, 0,
					 T_UNKNOWN))
			return -1;
	} else {
		p = cc_emit(c, tail ? WASM_IOP_return_call : WASM_IOP_call, 2);
		p[0] = x;
		p[1] = base;
		if (!tail && note_resume(c, p, 2, base, y, 0, T_UNKNOWN))
			return -1;
	}
	if (tail) {
		set_unreachable(c);
		return 0;
	}
	return push_results(c, ft);
}

static int table_elem(struct cc *c, uint32_t x, wasm_valtype *t)
{
	if (x >= wasm_module_ntables(c->m))
		return invalidx(c, "unknown table %u", x);
	*t = wasm_module_table_type(c->m, x)->elem;
	return 0;
}

/* The index type of (existing) table x: i32, or i64 for table64. */
static wasm_valtype table_at(struct cc *c, uint32_t x)
{
	return wasm_module_table_type(c->m, x)->limits.is64 ? WASM_I64
							    : WASM_I32;
}

static int op_call_indirect(struct cc *c, bool tail)
{
	uint32_t y, x, base, si, *p;
	const wasm_functype *ft;
	wasm_valtype et = 0;
	struct vent i;

	if (wasm_read_u32(&c->r, &y) || wasm_read_u32(&c->r, &x))
		return -1;
	if (table_elem(c, x, &et))
		return -1;
	if (y >= c->m->ntypes)
		return invalidx(c, "unknown type %u", y);
	if (!wasm_valtype_sub(c->m, et, WASM_FUNCREF))
		return type_mismatch(c);
	ft = &c->m->types[y];
	if (tail && !same_results(c, ft, c->ft))
		return type_mismatch(c);
	if (pop(c, table_at(c, x), &i))
		return -1;
	if (pop_args(c, ft, &base))
		return -1;
	/* a constant index goes to its own slot, above the arguments */
	si = live(c) ? src_of(c, &i) : 0;
	p = cc_emit(c,
		    tail ? WASM_IOP_return_call_indirect
			 : WASM_IOP_call_indirect,
		    4);
	p[0] = base;
	p[1] = si;
	p[2] = y;
	p[3] = x;
	if (!tail && note_resume(c, p, 4, base, y, 0, T_UNKNOWN))
		return -1;
	if (tail) {
		set_unreachable(c);
		return 0;
	}
	return push_results(c, ft);
}

/* call_ref / return_call_ref $t: [t1* (ref null $t)] -> [t2*]. */
static int op_call_ref(struct cc *c, bool tail)
{
	uint32_t y, base, si, *p;
	const wasm_functype *ft;
	struct vent f;

	if (wasm_read_u32(&c->r, &y))
		return -1;
	if (y >= c->m->ntypes)
		return invalidx(c, "unknown type %u", y);
	ft = &c->m->types[y];
	if (tail && !same_results(c, ft, c->ft))
		return type_mismatch(c);
	if (pop(c, wasm_reftype(WASM_FUNCREF, true, WASM_HEAP_IDX0 + y), &f))
		return -1;
	if (pop_args(c, ft, &base))
		return -1;
	si = live(c) ? src_of(c, &f) : 0;
	p = cc_emit(c, tail ? WASM_IOP_return_call_ref : WASM_IOP_call_ref, 2);
	p[0] = base;
	p[1] = si;
	if (!tail && note_resume(c, p, 2, base, y, si, f.type))
		return -1;
	if (tail) {
		set_unreachable(c);
		return 0;
	}
	return push_results(c, ft);
}

/*
 * A throw (throw, throw_ref, rethrow) at op cell insn is a park point:
 * it takes fuel, since a try_table may catch to a loop's label and
 * branch back without a branch op (an endless throw that no fuel check
 * saw).  What the frame holds there: the entries, and the n operands
 * of `extra` the op reads from slots no entry owns any more.
 */
static int note_throw_park(struct cc *c, uint32_t insn,
			   const struct wasm_refslot *extra, uint32_t n)
{
	uint32_t refs[2];

	if (note_refs(c, c->nvs, extra, n, refs))
		return -1;
	return add_park_map(c, insn, refs);
}

static int op_throw(struct cc *c)
{
	const wasm_functype *tt;
	struct wasm_refslot *x = NULL;
	uint32_t t, base, *p;
	int rc;

	if (read_tag(c, &t))
		return -1;
	tt = tag_type(c, t);
	if (pop_args(c, tt, &base))
		return -1;
	p = cc_emit(c, WASM_IOP_throw, 2);
	p[0] = t;
	p[1] = base;
	if (p == c->scratch) {
		set_unreachable(c);
		return 0;
	}
	/* the payload, materialised at base: its references are live */
	if (tt->nparams > 0 && (x = calloc(tt->nparams, sizeof *x)) == NULL)
		return oom(c);
	for (uint32_t i = 0; i < tt->nparams; i++) {
		x[i].slot = c->tmp[i].slot;
		x[i].type = tt->params[i];
	}
	rc = note_throw_park(c, (uint32_t)(p - c->code) - 1, x, tt->nparams);
	free(x);
	set_unreachable(c);
	return rc;
}

/* throw_ref of the exnref in slot s (rethrow: a clause's exception). */
static int emit_throw_ref(struct cc *c, uint32_t s)
{
	struct wasm_refslot x = {
		s, wasm_reftype(WASM_EXNREF, true, WASM_HEAP_TOP)};
	uint32_t *p = cc_emit(c, WASM_IOP_throw_ref, 1);

	p[0] = s;
	if (p != c->scratch &&
	    note_throw_park(c, (uint32_t)(p - c->code) - 1, &x, 1))
		return -1;
	set_unreachable(c);
	return 0;
}

/* ---- variables ---------------------------------------------------------- */

static int read_local(struct cc *c, uint32_t *x)
{
	if (wasm_read_u32(&c->r, x))
		return -1;
	if (*x >= c->nlocals)
		return invalidx(c, "unknown local %u", *x);
	return 0;
}

static wasm_valtype local_type(struct cc *c, uint32_t x)
{
	uint32_t np = c->ft->nparams;
	return x < np ? c->ft->params[x] : c->code_entry->locals[x - np];
}

/* Store the popped value e into slot ls (a local), fusing when possible. */
static void store_local(struct cc *c, struct vent *e, uint32_t ls)
{
	if (!live(c))
		return;
	if (e->kind == VK_ALIAS && e->val == ls)
		return;
	fuse_local_written(c, ls);
	materialize_local(c, ls);
	if (fuse_local_set(c, e, ls))
		return;
	emit_move(c, ls, e);
}

static int op_local(struct cc *c, uint8_t op)
{
	uint32_t x, ls;
	wasm_valtype t;
	struct vent e;

	if (read_local(c, &x))
		return -1;
	t = local_type(c, x);
	ls = c->lslot[x];
	if (op == WASM_OP_local_get) {
		if (c->linit && !c->linit[x] && !wasm_valtype_defaultable(t))
			return invalid(c, "uninitialized local");
		return push_ent(c, t, VK_ALIAS, ls);
	}
	if (pop(c, t, &e))
		return -1;
	if (c->linit && !c->linit[x]) {
		if (GROW(c, linit_set, clinit, c->nlinit + 1))
			return -1;
		c->linit[x] = true;
		c->linit_set[c->nlinit++] = x;
	}
	/*
	 * A retargeted producer must not be one whose other output was
	 * already seen; the check in store_local covers that.  Aliases of
	 * the same local below are materialised first.
	 */
	store_local(c, &e, ls);
	if (op == WASM_OP_local_set)
		return 0;
	if (e.kind == VK_CONST)
		return push_ent(c, t, VK_CONST, e.val);
	return push_ent(c, t, VK_ALIAS, ls);
}

static int op_global(struct cc *c, uint8_t op)
{
	uint32_t x, *p;
	const wasm_globaltype *gt;
	struct vent e;

	if (wasm_read_u32(&c->r, &x))
		return -1;
	if (x >= wasm_module_nglobals(c->m))
		return invalidx(c, "unknown global %u", x);
	gt = wasm_module_global_type(c->m, x);
	if (op == WASM_OP_global_get) {
		if (cc_push(c, gt->type))
			return -1;
		p = cc_emit_d(c,
			      tslots(gt->type) == 2 ? WASM_IOP_global_get2
						    : WASM_IOP_global_get,
			      2);
		p[0] = top_slot(c);
		p[1] = x;
		return 0;
	}
	if (!gt->mut)
		return invalid(c, "immutable global");
	if (pop(c, gt->type, &e))
		return -1;
	if (live(c)) {
		uint32_t s = src_of(c, &e);
		p = cc_emit(c,
			    tslots(gt->type) == 2 ? WASM_IOP_global_set2
						  : WASM_IOP_global_set,
			    2);
		p[0] = x;
		p[1] = s;
	}
	return 0;
}

/* ---- parametric --------------------------------------------------------- */

static int op_select(struct cc *c, bool typed)
{
	struct vent cnd, a, b;
	wasm_valtype t = T_UNKNOWN;
	uint32_t *p, sc, sa, sb;

	if (typed) {
		uint32_t n;
		size_t off = c->r.pos;
		uint8_t vb;
		if (wasm_read_u32(&c->r, &n))
			return -1;
		if (n != 1)
			return invalid(c, "invalid result arity");
		off = c->r.pos;
		if (wasm_read_u8(&c->r, &vb))
			return -1;
		switch (vb) {
		case WASM_I32:
		case WASM_I64:
		case WASM_F32:
		case WASM_F64:
		case WASM_V128:
		case WASM_FUNCREF:
		case WASM_EXTERNREF:
		case WASM_EXNREF:
			t = vb;
			break;
		case 0x63:
		case 0x64:
			if (read_ref_after(c, vb, &t))
				return -1;
			break;
		default:
			return malformed(c, off, "malformed value type");
		}
	}
	if (pop(c, WASM_I32, &cnd) || pop(c, t, &b) || pop(c, t, &a))
		return -1;
	if (!typed) {
		bool ok = (is_num(a.type) && is_num(b.type)) ||
			  ((a.type == T_UNKNOWN || a.type == WASM_V128) &&
			   (b.type == T_UNKNOWN || b.type == WASM_V128));
		if (!ok)
			return type_mismatch(c);
		if (a.type != b.type && a.type != T_UNKNOWN &&
		    b.type != T_UNKNOWN)
			return type_mismatch(c);
		t = a.type == T_UNKNOWN ? b.type : a.type;
	}
	if (live(c)) {
		sc = src_of(c, &cnd);
		sb = src_of(c, &b);
		sa = src_of(c, &a);
	} else {
		sc = sb = sa = 0;
	}
	if (cc_push(c, t))
		return -1;
	p = cc_emit_d(c, tslots(t) == 2 ? WASM_IOP_select2 : WASM_IOP_select,
		      4);
	p[0] = top_slot(c);
	p[1] = sa;
	p[2] = sb;
	p[3] = sc;
	return 0;
}

/* ---- numeric ------------------------------------------------------------ */

static uint32_t imm_cells(wasm_valtype t)
{
	return (t == WASM_I64 || t == WASM_F64) ? 2 : 1;
}

static int op_unop(struct cc *c, uint32_t iop, wasm_valtype in,
		   wasm_valtype outt)
{
	struct vent a;
	uint32_t sa = 0, *p;

	if (pop(c, in, &a))
		return -1;
	if (live(c))
		sa = src_of(c, &a);
	if (cc_push(c, outt))
		return -1;
	p = cc_emit_d(c, iop, 2);
	p[0] = top_slot(c);
	p[1] = sa;
	return 0;
}

/* The op computing `constant op slot`, for ops that have one. */
static uint32_t const_left(uint8_t op)
{
	switch (op) {
	case WASM_OP_f32_sub:
		return WASM_IOP_f32_sub_is;
	case WASM_OP_f32_div:
		return WASM_IOP_f32_div_is;
	case WASM_OP_f64_sub:
		return WASM_IOP_f64_sub_is;
	case WASM_OP_f64_div:
		return WASM_IOP_f64_div_is;
	default:
		return NONE;
	}
}

static bool commutes(uint8_t op)
{
	switch (op) {
	case WASM_OP_i32_eq:
	case WASM_OP_i32_ne:
	case WASM_OP_i32_add:
	case WASM_OP_i32_mul:
	case WASM_OP_i32_and:
	case WASM_OP_i32_or:
	case WASM_OP_i32_xor:
	case WASM_OP_i64_eq:
	case WASM_OP_i64_ne:
	case WASM_OP_i64_add:
	case WASM_OP_i64_mul:
	case WASM_OP_i64_and:
	case WASM_OP_i64_or:
	case WASM_OP_i64_xor:
		return true;
	default:
		return false;
	}
}

/* Whether a pending entry at slot `own` may read slot src (see top). */
static bool stable_src(const struct cc *c, uint32_t src, uint32_t own)
{
	return src < c->nlocal_slots || src <= own;
}

/*
 * i32.add / i32.sub that need no code yet: with a constant operand the
 * result is a pending slot + addend (or a constant when both are);
 * i32.add of two slots is a pending slot + slot.  Wrapping in 32 bits
 * makes (x + i) + j equal to x + (i + j).  `own` is the result's slot.
 */
static bool fold_addi(struct cc *c, uint8_t op, const struct vent *a,
		      const struct vent *b, uint32_t own)
{
	uint32_t src, imm, s2;

	if (a->kind == VK_CONST && b->kind == VK_CONST) {
		uint32_t x = (uint32_t)a->val, y = (uint32_t)b->val;
		c->fold_kind = VK_CONST;
		c->fold_val = op == WASM_OP_i32_add ? (uint32_t)(x + y)
						    : (uint32_t)(x - y);
		return true;
	}
	if (b->kind == VK_CONST && as_addi(a, &src, &imm)) {
		uint32_t k = (uint32_t)b->val;
		imm = op == WASM_OP_i32_add ? imm + k : imm - k;
	} else if (op == WASM_OP_i32_add && a->kind == VK_CONST &&
		   as_addi(b, &src, &imm)) {
		imm += (uint32_t)a->val;
	} else if (op == WASM_OP_i32_add && as_slot(a, &src) &&
		   as_slot(b, &s2) && stable_src(c, src, own) &&
		   stable_src(c, s2, own)) {
		c->fold_kind = VK_ADDS;
		c->fold_val = (uint64_t)src | (uint64_t)s2 << 32;
		return true;
	} else {
		return false;
	}
	if (!stable_src(c, src, own))
		return false;
	c->fold_kind = VK_ADDI;
	c->fold_val = (uint64_t)src | (uint64_t)imm << 32;
	return true;
}

static int op_binop(struct cc *c, uint8_t op, uint32_t iop, wasm_valtype in,
		    wasm_valtype outt)
{
	struct vent a, b;
	uint32_t *p, sa = 0, sb = 0;
	uint64_t imm = 0;
	bool si = false;

	if (pop(c, in, &b) || pop(c, in, &a))
		return -1;
	if (live(c) && fuse_binop_first(c, op, &a, &b))
		return c->oom ? -1 : 0;
	if (live(c) && (op == WASM_OP_i32_add || op == WASM_OP_i32_sub) &&
	    fold_addi(c, op, &a, &b, next_slot(c)))
		return push_ent(c, WASM_I32, c->fold_kind, c->fold_val);
	if (live(c) && fuse_binop(c, op, &a, &b))
		return c->oom ? -1 : 0;
	if (live(c)) {
		if (b.kind == VK_CONST) {
			si = true;
			imm = b.val;
			sa = src_of(c, &a);
		} else if (a.kind == VK_CONST && commutes(op)) {
			si = true;
			imm = a.val;
			sa = src_of(c, &b);
		} else if (a.kind == VK_CONST && const_left(op) != NONE) {
			/* k - x, k / x for floats: the constant stays inline */
			uint32_t *q, n = imm_cells(in);
			sb = src_of(c, &b);
			if (cc_push(c, outt))
				return -1;
			q = cc_emit_d(c, const_left(op), 2 + n);
			q[0] = top_slot(c);
			q[1] = (uint32_t)a.val;
			if (n == 2)
				q[2] = (uint32_t)(a.val >> 32);
			q[1 + n] = sb;
			return 0;
		} else {
			sb = src_of(c, &b);
			sa = src_of(c, &a);
		}
	}
	if (cc_push(c, outt))
		return -1;
	if (!si) {
		p = cc_emit_d(c, iop, 3);
		p[0] = top_slot(c);
		p[1] = sa;
		p[2] = sb;
		return 0;
	}
	p = cc_emit_d(c, iop + 1, 2 + imm_cells(in));
	p[0] = top_slot(c);
	p[1] = sa;
	p[2] = (uint32_t)imm;
	if (imm_cells(in) == 2)
		p[3] = (uint32_t)(imm >> 32);
	return 0;
}

static int op_numeric(struct cc *c, uint8_t op)
{
	switch (op) {
#define NUMOP_UN(opc, name, R, A, fn)                                          \
	case opc:                                                              \
		return op_unop(c, WASM_IOP_##name, VT_##A, VT_##R);
#define NUMOP_UN_TRAP(opc, name, R, A, fn)                                     \
	case opc:                                                              \
		return op_unop(c, WASM_IOP_##name, VT_##A, VT_##R);
#define NUMOP_BIN(opc, name, R, A, fn)                                         \
	case opc:                                                              \
		return op_binop(c, opc, WASM_IOP_##name##_ss, VT_##A, VT_##R);
#define NUMOP_BIN_TRAP(opc, name, R, A, fn)                                    \
	case opc:                                                              \
		return op_binop(c, opc, WASM_IOP_##name##_ss, VT_##A, VT_##R);
#include "wasm/ops_numeric.def"
	default:
		return malformed(c, c->op_off, "illegal opcode");
	}
}

static int op_const(struct cc *c, uint8_t op)
{
	switch (op) {
	case WASM_OP_i32_const: {
		int32_t v;
		if (wasm_read_s32(&c->r, &v))
			return -1;
		return push_ent(c, WASM_I32, VK_CONST, (uint32_t)v);
	}
	case WASM_OP_i64_const: {
		int64_t v;
		if (wasm_read_s64(&c->r, &v))
			return -1;
		return push_ent(c, WASM_I64, VK_CONST, (uint64_t)v);
	}
	case WASM_OP_f32_const: {
		const uint8_t *b;
		uint32_t v;
		if (wasm_read_bytes(&c->r, 4, &b))
			return -1;
		memcpy(&v, b, 4);
		return push_ent(c, WASM_F32, VK_CONST, v);
	}
	default: {
		const uint8_t *b;
		uint64_t v;
		if (wasm_read_bytes(&c->r, 8, &b))
			return -1;
		memcpy(&v, b, 8);
		return push_ent(c, WASM_F64, VK_CONST, v);
	}
	}
}

/* ---- memory ------------------------------------------------------------- */

static int read_memarg(struct cc *c, uint32_t natural, struct memarg *ma)
{
	size_t off = c->r.pos;
	uint32_t flags;
	const wasm_memtype *mt;

	if (wasm_read_u32(&c->r, &flags))
		return -1;
	if (flags >= 0x80)
		return malformed(c, off, "malformed memop flags");
	ma->memidx = 0;
	if ((flags & 0x40) && wasm_read_u32(&c->r, &ma->memidx))
		return -1;
	ma->align = flags & 0x3f;
	if (wasm_read_u64(&c->r, &ma->offset))
		return -1;
	if (ma->memidx >= wasm_module_nmemories(c->m))
		return invalidx(c, "unknown memory %u", ma->memidx);
	if (ma->align > natural)
		return invalid(c, "alignment must not be larger than natural");
	mt = wasm_module_memory_type(c->m, ma->memidx);
	ma->is64 = mt->limits.is64;
	if (!ma->is64 && ma->offset > UINT32_MAX)
		return invalid(c, "offset out of range");
	return 0;
}

static wasm_valtype addr_type(const struct memarg *ma)
{
	return ma->is64 ? WASM_I64 : WASM_I32;
}

/*
 * The loads and stores of ops.def, by opcode from the first one: natural
 * alignment, value type and the op accessing memory 0.
 */
struct memop {
	uint8_t align_log2;
	uint8_t type;
	uint16_t iop;
};

static const struct memop loads[] = {
#define INSTR_LOAD(op, name, T, align_log2, iop)                               \
	[op - WASM_OP_i32_load] = {align_log2, WASM_##T, WASM_IOP_##iop},
#include "wasm/ops.def"
};

static const struct memop stores[] = {
#define INSTR_STORE(op, name, T, align_log2, iop)                              \
	[op - WASM_OP_i32_store] = {align_log2, WASM_##T, WASM_IOP_##iop},
#include "wasm/ops.def"
};

static int op_load(struct cc *c, uint8_t op)
{
	const struct memop *mo = &loads[op - WASM_OP_i32_load];
	bool flt = op == WASM_OP_f32_load || op == WASM_OP_f64_load;
	struct memarg ma;
	struct vent a;
	uint32_t sa = 0, *p;

	if (read_memarg(c, mo->align_log2, &ma))
		return -1;
	if (pop(c, addr_type(&ma), &a))
		return -1;
	if (live(c) && ma.memidx == 0 && !ma.is64 && a.kind == VK_CONST) {
		uint64_t ea = (uint64_t)(uint32_t)a.val + ma.offset;
		if (cc_push(c, mo->type))
			return -1;
		p = cc_emit_d(c, mo->iop + 2u, 3);
		p[0] = top_slot(c);
		p[1] = (uint32_t)ea;
		p[2] = (uint32_t)(ea >> 32);
		return 0;
	}
	if (live(c) && ma.memidx == 0 && !ma.is64 &&
	    (a.kind == VK_ADDI || a.kind == VK_ADDS)) {
		if (cc_push(c, mo->type))
			return -1;
		p = cc_emit_d(c, mo->iop + (a.kind == VK_ADDI ? 1u : 3u), 4);
		p[0] = top_slot(c);
		p[1] = (uint32_t)a.val;
		p[2] = (uint32_t)(a.val >> 32);
		p[3] = (uint32_t)ma.offset;
		if (flt && a.kind == VK_ADDI && p != c->scratch)
			fuse_note_load(c, 5, p[1], p[2], p[3]);
		return 0;
	}
	if (live(c))
		sa = src_of(c, &a);
	if (cc_push(c, mo->type))
		return -1;
	if (ma.memidx == 0 && !ma.is64) {
		p = cc_emit_d(c, mo->iop, 3);
		p[0] = top_slot(c);
		p[1] = sa;
		p[2] = (uint32_t)ma.offset;
		if (flt && p != c->scratch)
			fuse_note_load(c, 4, sa, 0, p[2]);
	} else {
		p = cc_emit_d(c, WASM_IOP_load_m, 6);
		p[0] = top_slot(c);
		p[1] = sa;
		p[2] = (uint32_t)ma.offset;
		p[3] = (uint32_t)(ma.offset >> 32);
		p[4] = ma.memidx;
		p[5] = mo->iop | (ma.is64 ? WASM_MEM_ADDR64 : 0);
	}
	return 0;
}

static int op_store(struct cc *c, uint8_t op)
{
	const struct memop *mo = &stores[op - WASM_OP_i32_store];
	struct memarg ma;
	struct vent a, v;
	uint32_t sa, sv, *p;
	struct ldrec *late;

	if (read_memarg(c, mo->align_log2, &ma))
		return -1;
	late = fuse_late_load(c);
	if (pop(c, mo->type, &v) || pop(c, addr_type(&ma), &a))
		return -1;
	if (!live(c))
		return 0;
	if (ma.memidx == 0 && !ma.is64 && fuse_store(c, op, late, &a, &v, &ma))
		return c->oom ? -1 : 0;
	sv = src_of(c, &v);
	if (ma.memidx == 0 && !ma.is64 && a.kind == VK_CONST) {
		uint64_t ea = (uint64_t)(uint32_t)a.val + ma.offset;
		p = cc_emit(c, mo->iop + 2u, 3);
		p[0] = sv;
		p[1] = (uint32_t)ea;
		p[2] = (uint32_t)(ea >> 32);
		return 0;
	}
	if (ma.memidx == 0 && !ma.is64 &&
	    (a.kind == VK_ADDI || a.kind == VK_ADDS)) {
		p = cc_emit(c, mo->iop + (a.kind == VK_ADDI ? 1u : 3u), 4);
		p[0] = (uint32_t)a.val;
		p[1] = (uint32_t)(a.val >> 32);
		p[2] = sv;
		p[3] = (uint32_t)ma.offset;
		return 0;
	}
	sa = src_of(c, &a);
	if (ma.memidx == 0 && !ma.is64) {
		p = cc_emit(c, mo->iop, 3);
	} else {
		p = cc_emit(c, WASM_IOP_store_m, 6);
		p[3] = (uint32_t)(ma.offset >> 32);
		p[4] = ma.memidx;
		p[5] = mo->iop | (ma.is64 ? WASM_MEM_ADDR64 : 0);
	}
	p[0] = sa;
	p[1] = sv;
	p[2] = (uint32_t)ma.offset;
	return 0;
}

/* A memory index; *at is its address type (i32, or i64 for memory64). */
static int read_memidx(struct cc *c, uint32_t *x, wasm_valtype *at)
{
	if (wasm_read_u32(&c->r, x))
		return -1;
	if (*x >= wasm_module_nmemories(c->m))
		return invalidx(c, "unknown memory %u", *x);
	*at = wasm_module_memory_type(c->m, *x)->limits.is64 ? WASM_I64
							     : WASM_I32;
	return 0;
}

/*
 * Pop n integer operands of types t[0..n) (t[0] deepest) and give each a
 * slot in s[0..n).  Handlers read them as 64-bit slot values: an i32 in
 * a slot is always zero-extended.
 */
static int pop_ints(struct cc *c, uint32_t n, const wasm_valtype *t,
		    uint32_t *s)
{
	struct vent e[3];

	for (uint32_t i = n; i-- > 0;)
		if (pop(c, t[i], &e[i]))
			return -1;
	for (uint32_t i = 0; i < n; i++)
		s[i] = live(c) ? src_of(c, &e[i]) : 0;
	return 0;
}

static int op_memory_size_grow(struct cc *c, bool grow_op)
{
	uint32_t x, s = 0, *p;
	wasm_valtype at = WASM_I32;

	if (read_memidx(c, &x, &at))
		return -1;
	if (grow_op && pop_ints(c, 1, &at, &s))
		return -1;
	if (cc_push(c, at))
		return -1;
	if (grow_op) {
		p = cc_emit_d(c, WASM_IOP_memory_grow, 4);
		p[0] = top_slot(c);
		p[1] = s;
		p[2] = x;
		p[3] = at == WASM_I64;
	} else {
		p = cc_emit_d(c, WASM_IOP_memory_size, 2);
		p[0] = top_slot(c);
		p[1] = x;
	}
	return 0;
}

/* ---- references and tables ---------------------------------------------- */

/* ref.null's heap type: the value is (ref null ht). */
static int read_heaptype(struct cc *c, wasm_valtype *t)
{
	return read_ref_after(c, 0x63, t);
}

static int op_ref(struct cc *c, uint8_t op)
{
	uint32_t *p, x, s = 0;
	wasm_valtype t = 0;
	struct vent e;

	switch (op) {
	case WASM_OP_ref_null:
		if (read_heaptype(c, &t))
			return -1;
		return push_ent(c, t, VK_CONST, 0);
	case WASM_OP_ref_as_non_null:
		if (pop(c, T_UNKNOWN, &e))
			return -1;
		if (!is_ref(e.type))
			return type_mismatch(c);
		if (live(c))
			s = src_of(c, &e);
		if (cc_push(c, e.type == T_UNKNOWN ? T_UNKNOWN
						   : e.type | WASM_REF_NONNULL))
			return -1;
		p = cc_emit_d(c, WASM_IOP_ref_as_non_null, 2);
		p[0] = top_slot(c);
		p[1] = s;
		return 0;
	case WASM_OP_ref_is_null:
		if (pop(c, T_UNKNOWN, &e))
			return -1;
		if (!is_ref(e.type))
			return type_mismatch(c);
		if (live(c))
			s = src_of(c, &e);
		if (cc_push(c, WASM_I32))
			return -1;
		p = cc_emit_d(c, WASM_IOP_ref_is_null, 2);
		p[0] = top_slot(c);
		p[1] = s;
		return 0;
	default: /* ref.func */
		if (wasm_read_u32(&c->r, &x))
			return -1;
		if (x >= wasm_module_nfuncs(c->m))
			return invalidx(c, "unknown function %u", x);
		if (!c->refs[x])
			return invalid(c, "undeclared function reference");
		/* the exact, non-null type (ref $t) */
		if (cc_push(c, wasm_reftype(WASM_FUNCREF, false,
					    WASM_HEAP_IDX0 +
						    wasm_module_func_typeidx(
							    c->m, x))))
			return -1;
		p = cc_emit_d(c, WASM_IOP_ref_func, 2);
		p[0] = top_slot(c);
		p[1] = x;
		return 0;
	}
}

static int op_table_get_set(struct cc *c, bool set)
{
	uint32_t x, *p, si = 0, sv = 0;
	wasm_valtype t = 0;
	struct vent i, v;

	if (wasm_read_u32(&c->r, &x) || table_elem(c, x, &t))
		return -1;
	if (set) {
		if (pop(c, t, &v) || pop(c, table_at(c, x), &i))
			return -1;
		if (!live(c))
			return 0;
		sv = src_of(c, &v);
		si = src_of(c, &i);
		p = cc_emit(c, WASM_IOP_table_set, 3);
		p[0] = x;
		p[1] = si;
		p[2] = sv;
		return 0;
	}
	if (pop(c, table_at(c, x), &i))
		return -1;
	if (live(c))
		si = src_of(c, &i);
	if (cc_push(c, t))
		return -1;
	p = cc_emit_d(c, WASM_IOP_table_get, 3);
	p[0] = top_slot(c);
	p[1] = x;
	p[2] = si;
	return 0;
}

/* The data count check is a decoding rule, so it comes first. */
static int read_dataidx(struct cc *c, uint32_t *x, size_t off)
{
	if (wasm_read_u32(&c->r, x))
		return -1;
	if (!c->m->has_data_count)
		return malformed(c, off, "data count section required");
	return 0;
}

static int check_dataidx(struct cc *c, uint32_t x)
{
	if (x >= c->m->data_count)
		return invalidx(c, "unknown data segment %u", x);
	return 0;
}

static int read_elemidx(struct cc *c, uint32_t *x)
{
	if (wasm_read_u32(&c->r, x))
		return -1;
	if (*x >= c->m->nelems)
		return invalidx(c, "unknown elem segment %u", *x);
	return 0;
}

static wasm_valtype narrower(wasm_valtype a, wasm_valtype b)
{
	return a == WASM_I64 && b == WASM_I64 ? WASM_I64 : WASM_I32;
}

static int op_misc(struct cc *c)
{
	uint32_t sub, x, y, s[3] = {0, 0, 0}, *p;
	wasm_valtype t = 0, t2 = 0, at = WASM_I32, at2 = WASM_I32, ty[3];
	struct vent v, n, i;

	if (wasm_read_u32(&c->r, &sub))
		return -1;
	switch (sub) {
#define NUMOP_FC_UN(subop, name, R, A, fn)                                     \
	case subop:                                                            \
		return op_unop(c, WASM_IOP_##name, VT_##A, VT_##R);
#include "wasm/ops_numeric.def"
	case WASM_OP_FC_memory_init: /* dataidx memidx: [at i32 i32] */
		if (read_dataidx(c, &y, c->op_off) || read_memidx(c, &x, &at) ||
		    check_dataidx(c, y))
			return -1;
		ty[0] = at;
		ty[1] = ty[2] = WASM_I32;
		if (pop_ints(c, 3, ty, s))
			return -1;
		p = cc_emit(c, WASM_IOP_memory_init, 5);
		p[0] = x;
		p[1] = y;
		memcpy(p + 2, s, sizeof s);
		return 0;
	case WASM_OP_FC_data_drop:
		if (read_dataidx(c, &x, c->op_off) || check_dataidx(c, x))
			return -1;
		p = cc_emit(c, WASM_IOP_data_drop, 1);
		p[0] = x;
		return 0;
	case WASM_OP_FC_memory_copy: /* dst src: [at_dst at_src narrower] */
		if (read_memidx(c, &x, &at) || read_memidx(c, &y, &at2))
			return -1;
		ty[0] = at;
		ty[1] = at2;
		ty[2] = narrower(at, at2);
		if (pop_ints(c, 3, ty, s))
			return -1;
		p = cc_emit(c, WASM_IOP_memory_copy, 5);
		p[0] = x;
		p[1] = y;
		memcpy(p + 2, s, sizeof s);
		return 0;
	case WASM_OP_FC_memory_fill: /* [at i32 at] */
		if (read_memidx(c, &x, &at))
			return -1;
		ty[0] = ty[2] = at;
		ty[1] = WASM_I32;
		if (pop_ints(c, 3, ty, s))
			return -1;
		p = cc_emit(c, WASM_IOP_memory_fill, 4);
		p[0] = x;
		memcpy(p + 1, s, sizeof s);
		return 0;
	case WASM_OP_FC_table_init: /* elemidx tableidx: [at i32 i32] */
		if (read_elemidx(c, &y) || wasm_read_u32(&c->r, &x) ||
		    table_elem(c, x, &t))
			return -1;
		if (!wasm_valtype_sub(c->m, c->m->elems[y].type, t))
			return type_mismatch(c);
		ty[0] = table_at(c, x);
		ty[1] = ty[2] = WASM_I32;
		if (pop_ints(c, 3, ty, s))
			return -1;
		p = cc_emit(c, WASM_IOP_table_init, 5);
		p[0] = x;
		p[1] = y;
		memcpy(p + 2, s, sizeof s);
		return 0;
	case WASM_OP_FC_elem_drop:
		if (read_elemidx(c, &x))
			return -1;
		p = cc_emit(c, WASM_IOP_elem_drop, 1);
		p[0] = x;
		return 0;
	case WASM_OP_FC_table_copy: /* dst src: [at_dst at_src narrower] */
		if (wasm_read_u32(&c->r, &x) || wasm_read_u32(&c->r, &y) ||
		    table_elem(c, x, &t) || table_elem(c, y, &t2))
			return -1;
		if (!wasm_valtype_sub(c->m, t2, t))
			return type_mismatch(c);
		ty[0] = table_at(c, x);
		ty[1] = table_at(c, y);
		ty[2] = narrower(ty[0], ty[1]);
		if (pop_ints(c, 3, ty, s))
			return -1;
		p = cc_emit(c, WASM_IOP_table_copy, 5);
		p[0] = x;
		p[1] = y;
		memcpy(p + 2, s, sizeof s);
		return 0;
	case WASM_OP_FC_table_grow: /* [t at] -> [at] */
		if (wasm_read_u32(&c->r, &x) || table_elem(c, x, &t))
			return -1;
		at = table_at(c, x);
		if (pop(c, at, &n) || pop(c, t, &v))
			return -1;
		if (live(c)) {
			s[1] = src_of(c, &n);
			s[0] = src_of(c, &v);
		}
		if (cc_push(c, at))
			return -1;
		p = cc_emit_d(c, WASM_IOP_table_grow, 5);
		p[0] = top_slot(c);
		p[1] = x;
		p[2] = s[0];
		p[3] = s[1];
		p[4] = at == WASM_I64;
		return 0;
	case WASM_OP_FC_table_size:
		if (wasm_read_u32(&c->r, &x) || table_elem(c, x, &t))
			return -1;
		if (cc_push(c, table_at(c, x)))
			return -1;
		p = cc_emit_d(c, WASM_IOP_table_size, 2);
		p[0] = top_slot(c);
		p[1] = x;
		return 0;
	case WASM_OP_FC_table_fill: /* [at t at] */
		if (wasm_read_u32(&c->r, &x) || table_elem(c, x, &t))
			return -1;
		at = table_at(c, x);
		if (pop(c, at, &n) || pop(c, t, &v) || pop(c, at, &i))
			return -1;
		if (!live(c))
			return 0;
		s[2] = src_of(c, &n);
		s[1] = src_of(c, &v);
		s[0] = src_of(c, &i);
		p = cc_emit(c, WASM_IOP_table_fill, 4);
		p[0] = x;
		memcpy(p + 1, s, sizeof s);
		return 0;
	default:
		return malformed(c, c->op_off, "illegal opcode");
	}
}

/* ---- SIMD --------------------------------------------------------------- */

static int simd_pure(struct cc *c, uint32_t iop, uint32_t nin,
		     const wasm_valtype *in, wasm_valtype outt)
{
	struct vent e[3];
	uint32_t s[3] = {0, 0, 0}, *p;

	for (uint32_t i = nin; i-- > 0;)
		if (pop(c, in[i], &e[i]))
			return -1;
	if (live(c))
		for (uint32_t i = nin; i-- > 0;)
			s[i] = src_of(c, &e[i]);
	if (cc_push(c, outt))
		return -1;
	p = cc_emit_d(c, iop, 1 + nin);
	p[0] = top_slot(c);
	for (uint32_t i = 0; i < nin; i++)
		p[1 + i] = s[i];
	return 0;
}

static int read_lane(struct cc *c, uint32_t nlanes, uint32_t *lane)
{
	uint8_t b;

	if (wasm_read_u8(&c->r, &b))
		return -1;
	if (b >= nlanes)
		return invalid(c, "invalid lane index");
	*lane = b;
	return 0;
}

#define V WASM_V128
static const wasm_valtype sh_v[] = {V};
static const wasm_valtype sh_vv[] = {V, V};
static const wasm_valtype sh_vvv[] = {V, V, V};
static const wasm_valtype sh_vs[] = {V, WASM_I32};
static const wasm_valtype sh_i32[] = {WASM_I32};
static const wasm_valtype sh_i64[] = {WASM_I64};
static const wasm_valtype sh_f32[] = {WASM_F32};
static const wasm_valtype sh_f64[] = {WASM_F64};
static const wasm_valtype sh_vi32[] = {V, WASM_I32};
static const wasm_valtype sh_vi64[] = {V, WASM_I64};
static const wasm_valtype sh_vf32[] = {V, WASM_F32};
static const wasm_valtype sh_vf64[] = {V, WASM_F64};

#define SH_V_V	       1, sh_v, V
#define SH_V_VV	       2, sh_vv, V
#define SH_V_VVV       3, sh_vvv, V
#define SH_V_VS	       2, sh_vs, V
#define SH_I32_V       1, sh_v, WASM_I32
#define SH_V_I32       1, sh_i32, V
#define SH_V_I64       1, sh_i64, V
#define SH_V_F32       1, sh_f32, V
#define SH_V_F64       1, sh_f64, V
#define SH_I32_V_LANE  1, sh_v, WASM_I32
#define SH_I64_V_LANE  1, sh_v, WASM_I64
#define SH_F32_V_LANE  1, sh_v, WASM_F32
#define SH_F64_V_LANE  1, sh_v, WASM_F64
#define SH_V_VI32_LANE 2, sh_vi32, V
#define SH_V_VI64_LANE 2, sh_vi64, V
#define SH_V_VF32_LANE 2, sh_vf32, V
#define SH_V_VF64_LANE 2, sh_vf64, V

static int simd_lane(struct cc *c, uint32_t iop, uint32_t nlanes, uint32_t nin,
		     const wasm_valtype *in, wasm_valtype outt)
{
	uint32_t lane = 0, *p;

	if (read_lane(c, nlanes, &lane))
		return -1;
	if (simd_pure(c, iop, nin, in, outt))
		return -1;
	if (!live(c))
		return 0;
	/* append the lane: re-emit with one more cell */
	{
		uint32_t cells[4], n = 1 + nin;
		memcpy(cells, &c->code[c->ncode - n], n * sizeof(uint32_t));
		c->ncode -= n + 1;
		p = cc_emit_d(c, iop, n + 1);
		memcpy(p, cells, n * sizeof(uint32_t));
		p[n] = lane;
	}
	return 0;
}

static int simd_mem(struct cc *c, uint32_t iop, bool store, uint32_t align_log2)
{
	struct memarg ma;
	struct vent a, v;
	uint32_t sa = 0, sv = 0, *p;

	if (read_memarg(c, align_log2, &ma))
		return -1;
	if (ma.is64)
		return invalid(c, "SIMD access to a 64-bit memory is not "
				  "supported");
	if (store) {
		if (pop(c, V, &v) || pop(c, addr_type(&ma), &a))
			return -1;
		if (!live(c))
			return 0;
		sv = src_of(c, &v);
		sa = src_of(c, &a);
		p = cc_emit(c, iop, 4);
		p[0] = sa;
		p[1] = sv;
		p[2] = (uint32_t)ma.offset;
		p[3] = ma.memidx;
		return 0;
	}
	if (pop(c, addr_type(&ma), &a))
		return -1;
	if (live(c))
		sa = src_of(c, &a);
	if (cc_push(c, V))
		return -1;
	p = cc_emit_d(c, iop, 4);
	p[0] = top_slot(c);
	p[1] = sa;
	p[2] = (uint32_t)ma.offset;
	p[3] = ma.memidx;
	return 0;
}

static int simd_memlane(struct cc *c, uint32_t iop, bool store,
			uint32_t lane_log2, uint32_t nlanes)
{
	struct memarg ma;
	struct vent a, v;
	uint32_t sa = 0, sv = 0, lane = 0, *p;

	if (read_memarg(c, lane_log2, &ma) || read_lane(c, nlanes, &lane))
		return -1;
	if (ma.is64)
		return invalid(c, "SIMD access to a 64-bit memory is not "
				  "supported");
	if (pop(c, V, &v) || pop(c, addr_type(&ma), &a))
		return -1;
	if (live(c)) {
		sv = src_of(c, &v);
		sa = src_of(c, &a);
	}
	if (store) {
		p = cc_emit(c, iop, 5);
		p[0] = sa;
		p[1] = sv;
		p[2] = (uint32_t)ma.offset;
		p[3] = ma.memidx;
		p[4] = lane;
		return 0;
	}
	if (cc_push(c, V))
		return -1;
	p = cc_emit_d(c, iop, 6);
	p[0] = top_slot(c);
	p[1] = sa;
	p[2] = sv;
	p[3] = (uint32_t)ma.offset;
	p[4] = ma.memidx;
	p[5] = lane;
	return 0;
}

static int op_simd(struct cc *c)
{
	uint32_t sub, *p, w[4];
	const uint8_t *b;

	if (wasm_read_u32(&c->r, &sub))
		return -1;
	switch (sub) {
#define SIMDOP(subop, name, SHAPE, fn)                                         \
	case subop:                                                            \
		return simd_pure(c, WASM_IOP_##name, SH_##SHAPE);
#define SIMDOP_LANE(subop, name, SHAPE, nlanes, fn)                            \
	case subop:                                                            \
		return simd_lane(c, WASM_IOP_##name, nlanes, SH_##SHAPE);
#define SIMDOP_MEM(subop, name, KIND, align_log2, fn)                          \
	case subop:                                                            \
		return simd_mem(c, WASM_IOP_##name, SIMD_IS_STORE_##KIND,      \
				align_log2);
#define SIMDOP_MEMLANE(subop, name, KIND, lane_log2, nlanes, fn)               \
	case subop:                                                            \
		return simd_memlane(c, WASM_IOP_##name, SIMD_IS_STORE_##KIND,  \
				    lane_log2, nlanes);
#define SIMD_IS_STORE_LOAD	 false
#define SIMD_IS_STORE_STORE	 true
#define SIMD_IS_STORE_LOAD_LANE	 false
#define SIMD_IS_STORE_STORE_LANE true
#include "wasm/ops_simd.def"
	case WASM_OP_FD_v128_const:
		if (wasm_read_bytes(&c->r, 16, &b))
			return -1;
		memcpy(w, b, 16);
		if (cc_push(c, V))
			return -1;
		p = cc_emit_d(c, WASM_IOP_const128, 5);
		p[0] = top_slot(c);
		memcpy(p + 1, w, 16);
		return 0;
	case WASM_OP_FD_i8x16_shuffle: {
		struct vent a, bb;
		uint32_t sa = 0, sb = 0;
		if (wasm_read_bytes(&c->r, 16, &b))
			return -1;
		for (int k = 0; k < 16; k++)
			if (b[k] >= 32)
				return invalid(c, "invalid lane index");
		memcpy(w, b, 16);
		if (pop(c, V, &bb) || pop(c, V, &a))
			return -1;
		if (live(c)) {
			sb = src_of(c, &bb);
			sa = src_of(c, &a);
		}
		if (cc_push(c, V))
			return -1;
		p = cc_emit_d(c, WASM_IOP_i8x16_shuffle, 7);
		p[0] = top_slot(c);
		p[1] = sa;
		p[2] = sb;
		memcpy(p + 3, w, 16);
		return 0;
	}
	default:
		return wasm_error_set(c->err, WASM_ERR_MALFORMED, c->op_off,
				      "illegal opcode fd %02x", sub);
	}
}
#undef V

/* ---- the instruction loop ----------------------------------------------- */

static int compile_instr(struct cc *c, uint8_t op)
{
	struct vent e;

	switch (op) {
	case WASM_OP_unreachable:
		cc_emit(c, WASM_IOP_unreachable, 0);
		set_unreachable(c);
		return 0;
	case WASM_OP_nop:
		return 0;
	case WASM_OP_block:
		return op_block(c, BK_BLOCK);
	case WASM_OP_loop:
		return op_block(c, BK_LOOP);
	case WASM_OP_if:
		return op_if(c);
	case WASM_OP_else:
		return op_else(c);
	case WASM_OP_throw:
		return op_throw(c);
	case WASM_OP_throw_ref:
		if (pop(c, WASM_EXNREF, &e))
			return -1;
		if (live(c))
			return emit_throw_ref(c, src_of(c, &e));
		set_unreachable(c);
		return 0;
	case WASM_OP_end:
		return op_end(c);
	case WASM_OP_br:
		return op_br(c);
	case WASM_OP_br_if:
		return op_br_if(c);
	case WASM_OP_br_on_null:
		return op_br_on_null(c, true);
	case WASM_OP_br_on_non_null:
		return op_br_on_null(c, false);
	case WASM_OP_call_ref:
		return op_call_ref(c, false);
	case WASM_OP_return_call_ref:
		return op_call_ref(c, true);
	case WASM_OP_br_table:
		return op_br_table(c);
	case WASM_OP_return:
		return op_return(c);
	case WASM_OP_call:
		return op_call(c, false);
	case WASM_OP_call_indirect:
		return op_call_indirect(c, false);
	case WASM_OP_return_call:
		return op_call(c, true);
	case WASM_OP_return_call_indirect:
		return op_call_indirect(c, true);
	case WASM_OP_drop:
		return pop(c, T_UNKNOWN, &e);
	case WASM_OP_select:
		return op_select(c, false);
	case WASM_OP_select_t:
		return op_select(c, true);
	case WASM_OP_try_table:
		return op_try_table(c);
	case WASM_OP_try:
		return op_try(c);
	case WASM_OP_catch:
		return op_catch(c, true);
	case WASM_OP_catch_all:
		return op_catch(c, false);
	case WASM_OP_delegate:
		return op_delegate(c);
	case WASM_OP_rethrow:
		return op_rethrow(c);
	case WASM_OP_local_get:
	case WASM_OP_local_set:
	case WASM_OP_local_tee:
		return op_local(c, op);
	case WASM_OP_global_get:
	case WASM_OP_global_set:
		return op_global(c, op);
	case WASM_OP_table_get:
		return op_table_get_set(c, false);
	case WASM_OP_table_set:
		return op_table_get_set(c, true);
	case WASM_OP_memory_size:
		return op_memory_size_grow(c, false);
	case WASM_OP_memory_grow:
		return op_memory_size_grow(c, true);
	case WASM_OP_i32_const:
	case WASM_OP_i64_const:
	case WASM_OP_f32_const:
	case WASM_OP_f64_const:
		return op_const(c, op);
	case WASM_OP_ref_null:
	case WASM_OP_ref_is_null:
	case WASM_OP_ref_as_non_null:
	case WASM_OP_ref_func:
		return op_ref(c, op);
	case WASM_OP_prefix_misc:
		return op_misc(c);
	case WASM_OP_prefix_simd:
		return op_simd(c);
#define INSTR_LOAD(opc, name, T, align_log2, iop) case opc:
#include "wasm/ops.def"
		return op_load(c, op);
#define INSTR_STORE(opc, name, T, align_log2, iop) case opc:
#include "wasm/ops.def"
		return op_store(c, op);
#define NUMOP_UN(opc, name, R, A, fn)	    case opc:
#define NUMOP_BIN(opc, name, R, A, fn)	    case opc:
#define NUMOP_UN_TRAP(opc, name, R, A, fn)  case opc:
#define NUMOP_BIN_TRAP(opc, name, R, A, fn) case opc:
#include "wasm/ops_numeric.def"
		return op_numeric(c, op);
	default:
		/* the instructions of ops.def's INSTR_UNSUP, 0xfb, no opcode */
		return wasm_error_set(c->err, WASM_ERR_MALFORMED, c->op_off,
				      "illegal opcode %02x", op);
	}
}

static bool is_call_cell(uint32_t cell)
{
	return cell == wasm_interp_opcell(WASM_IOP_call) ||
	       cell == wasm_interp_opcell(WASM_IOP_call_local) ||
	       cell == wasm_interp_opcell(WASM_IOP_call_indirect) ||
	       cell == wasm_interp_opcell(WASM_IOP_call_ref);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Where a fuel check can stop the function (code.h parks): the op cell
 * of every backward branch, which every branch's fix names (its offset
 * is relative to that cell, so the cell is an op's whatever the
 * peephole pass did), of every non-tail call (its resume point's) and
 * of every throw (note_throw_park: its park map is what names it).
 */
static int note_parks(struct cc *c)
{
	uint32_t n = 0, k = 0;

	for (uint32_t i = 0; i < c->nfixes; i++)
		n += c->labels[c->fixes[i].label] <= c->fixes[i].insn;
	n += c->nresumes / WASM_RESUME_CELLS + c->npark_maps / 3;
	if (n == 0)
		return 0;
	c->parks = malloc((size_t)n * sizeof *c->parks);
	if (c->parks == NULL)
		return -1;
	for (uint32_t i = 0; i < c->nfixes; i++)
		if (c->labels[c->fixes[i].label] <= c->fixes[i].insn)
			c->parks[k++] = c->fixes[i].insn;
	for (uint32_t i = 0; i < c->nresumes; i += WASM_RESUME_CELLS)
		c->parks[k++] = c->resumes[i];
	/* every park map names a park point (the throws only so) */
	for (uint32_t i = 0; i < c->npark_maps; i += 3)
		c->parks[k++] = c->park_maps[i];
	qsort(c->parks, n, sizeof *c->parks, cmp_u32);
	c->nparks = 0;
	for (uint32_t i = 0; i < n; i++)
		if (c->nparks == 0 || c->parks[c->nparks - 1] != c->parks[i])
			c->parks[c->nparks++] = c->parks[i];
	return 0;
}

static int cmp_park_map(const void *a, const void *b)
{
	return cmp_u32(a, b);
}

/*
 * Only for a function that holds references: each park point's list of
 * them (code.h park_refs), from the maps recorded as it was compiled (a
 * point none was recorded for gets WASM_NO_REFMAP).  *out: 2 per park.
 */
static int park_refs(struct cc *c, uint32_t **out)
{
	uint32_t n = c->npark_maps / 3, *v;

	*out = NULL;
	if (c->nparks == 0)
		return 0;
	v = malloc((size_t)c->nparks * 2 * sizeof *v);
	if (v == NULL)
		return -1;
	if (n > 0) /* none recorded: park_maps is NULL */
		qsort(c->park_maps, n, 3 * sizeof *c->park_maps,
		      cmp_park_map);
	for (uint32_t k = 0; k < c->nparks; k++) {
		uint32_t lo = 0, hi = n;

		v[2 * k] = v[2 * k + 1] = WASM_NO_REFMAP;
		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;
			const uint32_t *r = &c->park_maps[3 * mid];

			if (r[0] == c->parks[k]) {
				v[2 * k] = r[1];
				v[2 * k + 1] = r[2];
				break;
			}
			if (r[0] < c->parks[k])
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	*out = v;
	return 0;
}

static void cc_free(struct cc *c)
{
	free(c->lslot);
	free(c->linit);
	free(c->linit_set);
	free(c->vs);
	free(c->tmp);
	free(c->cs);
	free(c->code);
	free(c->labels);
	free(c->fixes);
	free(c->handlers);
	free(c->catches);
	free(c->lpend);
	free(c->links);
	free(c->resumes);
	free(c->parks);
	free(c->refslots);
	free(c->resume_refs);
	free(c->park_maps);
	free(c->lrefs);
}

static int setup_locals(struct cc *c)
{
	uint32_t s = 0;

	c->lslot = malloc(((size_t)c->nlocals + 1) * sizeof *c->lslot);
	if (c->lslot == NULL)
		return oom(c);
	for (uint32_t i = 0; i < c->nlocals; i++) {
		wasm_valtype t = local_type(c, i);

		if (i >= c->ft->nparams &&
		    wasm_valtype_check(c->m, t, c->code_entry->body_offset,
				       c->err))
			return -1;
		/* params are set on entry; other (ref ht) locals are not */
		if (i >= c->ft->nparams && !wasm_valtype_defaultable(t) &&
		    c->linit == NULL) {
			c->linit = calloc((size_t)c->nlocals, sizeof *c->linit);
			if (c->linit == NULL)
				return oom(c);
			for (uint32_t k = 0; k < c->ft->nparams; k++)
				c->linit[k] = true;
		}
		if (wasm_valtype_is_ref(t)) {
			c->holds_refs = true;
			if (GROW(c, lrefs, clrefs, c->nlrefs + 1))
				return -1;
			c->lrefs[c->nlrefs].slot = s;
			c->lrefs[c->nlrefs].type = t & ~WASM_REF_NONNULL;
			c->nlrefs++;
		}
		c->lslot[i] = s;
		s += tslots(t);
		if (s > MAX_SLOTS)
			return wasm_error_set(c->err, WASM_ERR_INVALID,
					      c->code_entry->body_offset,
					      "too many locals");
	}
	c->nlocal_slots = s;
	c->max_slot = s;
	return 0;
}

static int run(struct cc *c)
{
	struct ctl f;

	memset(&f, 0, sizeof f);
	f.kind = BK_FUNC;
	f.typeidx = c->ftypeidx;
	f.nr = c->ft->nresults;
	f.np = 0;
	f.label_slot = 0;
	f.min_slot = c->nlocal_slots;
	f.else_label = NONE;
	f.handler = NONE;
	c->func_label = new_label(c);
	f.label = c->func_label;
	if (c->oom || GROW(c, cs, ccs, 1))
		return -1;
	c->cs[c->ncs++] = f;
	/* the function frame's results are the function type's */
	while (c->ncs > 0) {
		uint8_t op;

		c->op_off = c->r.pos;
		if (c->r.pos >= c->r.end) {
			return malformed(
				c, c->r.pos,
				c->last_func ? WASM_MSG_UNEXPECTED_END_SECTION
					     : "END opcode expected");
		}
		op = c->r.bytes[c->r.pos++];
		if (compile_instr(c, op))
			return -1;
		if (c->oom)
			return oom(c);
	}
	if (c->r.pos != c->r.end)
		return malformed(c, c->r.pos, "section size mismatch");
	return 0;
}

int wasm_compile_func(const wasm_module *m, uint32_t i, const bool *refs,
		      struct wasm_compiled **out, wasm_error *err)
{
	struct cc c;
	struct wasm_compiled *wc;
	const wasm_code *code = &m->codes[i];
	uint32_t ns;

	memset(&c, 0, sizeof c);
	c.m = m;
	c.refs = refs;
	c.err = err;
	c.last = NONE;
	c.prev = NONE;
	c.code_entry = code;
	c.ftypeidx = m->func_types[i];
	c.ft = &m->types[c.ftypeidx];
	c.last_func = i + 1 == m->ncodes;
	c.nlocals = c.ft->nparams + code->nlocals;
	if (c.nlocals < c.ft->nparams) {
		return wasm_error_set(err, WASM_ERR_INVALID, code->body_offset,
				      "too many locals");
	}
	c.r.bytes = code->body - code->body_offset;
	c.r.pos = code->body_offset;
	c.r.end = (size_t)code->body_offset + code->body_len;
	c.r.end_msg = WASM_MSG_UNEXPECTED_END_SECTION;
	c.r.err = err;

	if (setup_locals(&c) || run(&c)) {
		cc_free(&c);
		return -1;
	}
	for (uint32_t k = 0; k < c.nfixes; k++) {
		struct fix *fx = &c.fixes[k];
		c.code[fx->cell] = c.labels[fx->label] - fx->insn;
	}
	for (uint32_t k = 0; k < c.ncatches; k++)
		c.catches[k].target = c.labels[c.catches[k].target];

	wc = calloc(1, sizeof *wc);
	if (wc == NULL) {
		cc_free(&c);
		return wasm_error_set(err, WASM_ERR_RESOURCE, code->body_offset,
				      "out of memory");
	}
	wc->code = c.code;
	wc->ncode = c.ncode;
	wc->funcidx = m->nimported_funcs + i;
	wc->type = c.ft;
	ns = 0;
	for (uint32_t k = 0; k < c.ft->nparams; k++)
		ns += tslots(c.ft->params[k]);
	wc->nparam_slots = ns;
	ns = 0;
	for (uint32_t k = 0; k < c.ft->nresults; k++)
		ns += tslots(c.ft->results[k]);
	wc->nresult_slots = ns;
	wc->nlocal_slots = c.nlocal_slots;
	wc->frame_slots = c.max_slot > ns ? c.max_slot : ns;
	wc->has_memory = wasm_module_nmemories(m) > 0;
	wc->nhandlers = c.nhandlers;
	wc->handlers = c.handlers;
	wc->catches = c.catches;
	wc->links = c.links;
	wc->nlinks = c.nlinks;
	wc->holds_refs = c.holds_refs;
	/* a later rewrite that moved a call makes its points unknown */
	for (uint32_t k = 0; k < c.nresumes; k += WASM_RESUME_CELLS)
		if (c.resumes[k] >= c.ncode ||
		    !is_call_cell(c.code[c.resumes[k]])) {
			c.nresumes = 0;
			break;
		}
	if (c.oom || note_parks(&c) ||
	    (c.holds_refs && park_refs(&c, &wc->park_refs))) {
		free(wc);
		cc_free(&c);
		return wasm_error_set(err, WASM_ERR_RESOURCE, code->body_offset,
				      "out of memory");
	}
	wc->resumes = c.resumes;
	wc->nresumes = c.nresumes;
	wc->parks = c.parks;
	wc->nparks = c.nparks;
	if (c.holds_refs &&
	    c.nresume_refs == c.nresumes / WASM_RESUME_CELLS * 2) {
		wc->refslots = c.refslots;
		wc->resume_refs = c.resume_refs;
		c.refslots = NULL;
		c.resume_refs = NULL;
	} else if (c.holds_refs) {
		/* no resumes (a rewrite moved a call): no frame stands */
		free(wc->park_refs);
		wc->park_refs = NULL;
		wc->nparks = 0;
	}
	c.resumes = NULL;
	c.parks = NULL;
	c.code = NULL;
	c.handlers = NULL;
	c.catches = NULL;
	c.links = NULL;
	cc_free(&c);
	*out = wc;
	return 0;
}

void wasm_compiled_free(struct wasm_compiled *c)
{
	if (c == NULL)
		return;
	free(c->code);
	free(c->handlers);
	free(c->catches);
	free(c->links);
	free(c->resumes);
	free(c->parks);
	free(c->refslots);
	free(c->resume_refs);
	free(c->park_refs);
	free(c);
}

void wasm_compile_link(struct wasm_compiled **compiled, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct wasm_compiled *wc = compiled[i];
		for (uint32_t k = 0; k < wc->nlinks; k++) {
			uint32_t *cell = wc->code + wc->links[k];
			const struct wasm_compiled *callee = compiled[cell[0]];
			memcpy(cell, &callee, sizeof callee);
		}
		free(wc->links);
		wc->links = NULL;
		wc->nlinks = 0;
	}
}
