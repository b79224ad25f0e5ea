/*
 * compile.h - what compile.c shares with fuse.c, its peephole pass; not
 * an interface of the engine (code.h is), and included by those two
 * files only (its short names, NONE and the helpers, are theirs).
 *
 * Contract: struct cc is the state of one function's translation
 * (compile.c's header says how it works).  compile.c owns it; fuse.c
 * reads the operand stack and the code emitted so far, and rewrites the
 * last few instructions through the functions declared here.  The
 * peephole window (last, prev, prev2 and their ops) and the load records
 * (ld, nld) are fuse.c's; compile.c only clears them at labels (forget(),
 * nld = 0) and keeps them up to date as it emits.
 */
#ifndef HOSTEL_WASM_COMPILE_H
#define HOSTEL_WASM_COMPILE_H

#include <stdbool.h>
#include <stdint.h>

#include "wasm/code.h"
#include "wasm/reader.h"

#define NONE	  UINT32_MAX
#define T_UNKNOWN 0u

/*
 * Where an entry's value is: in its own slot; in slot `val` (ALIAS); the
 * constant `val` (CONST); or, for i32 only, a sum not computed yet: slot
 * + immediate (ADDI: slot in the low half of val, addend in the high
 * half) or slot + slot (ADDS: the two slots in the halves of val).  Those
 * are folded i32.adds that memory ops absorb into their address.
 *
 * A pending entry may only read slots that stay put while it is on the
 * stack: locals (materialise_local() takes care of writes to them) and
 * stack slots at or below its own (every slot below belongs to an entry
 * that outlives it, or to a frozen if-parameter).
 */
enum { VK_STACK, VK_ALIAS, VK_CONST, VK_ADDI, VK_ADDS };

struct vent {
	wasm_valtype type;
	uint8_t kind;
	uint32_t slot;
	uint64_t val;
};

/* BK_TRY: try_table; BK_LTRY: a legacy try (exception handling 1.0's
 * try, catch, catch_all, delegate; its clauses are struct ctl's phase) */
enum { BK_FUNC, BK_BLOCK, BK_LOOP, BK_IF, BK_TRY, BK_LTRY };

/* A legacy try's phase: its body, a catch x clause, its catch_all. */
enum { LT_BODY, LT_CATCH, LT_CATCH_ALL };

struct ctl {
	uint8_t kind;
	bool unreachable;
	bool dead; /* entered in unreachable code: nothing is emitted */
	bool has_else;
	uint32_t height;     /* operand stack height below the params */
	uint32_t label_slot; /* where the label's values go */
	uint32_t min_slot;   /* lowest slot the frame's operands may use */
	/* block type: np params, nr results, from types[typeidx] or single */
	uint32_t np, nr;
	uint32_t typeidx; /* NONE: no type index */
	wasm_valtype single;
	uint32_t label;	     /* branch target (loop: start, else: end) */
	uint32_t else_label; /* if: target of the false branch */
	uint32_t handler;    /* try_table, legacy try: index into handlers */
	/*
	 * Legacy try: its phase, and where its clauses' catches wait in
	 * lpend until its end (clauses come after the inner trys' catches,
	 * and a handler's catches must be contiguous).  In a clause the
	 * caught exception is an entry below `height`, in label_slot (where
	 * rethrow reads it), and the clause's values start above it.
	 */
	uint8_t phase;
	uint32_t pend;
	uint32_t init_height; /* linit_set's height at entry */
};

struct fix {
	uint32_t cell, insn, label;
};

/* A condition ready to branch on, possibly fused with its producer. */
struct cond {
	uint32_t op_true, op_false; /* branch when true / when false */
	uint32_t n;
	uint32_t cells[4];
	/* br_on_null/br_on_non_null: the type of the reference in cells[0] */
	wasm_valtype ref;
};

/*
 * An f32/f64 load from a local address into a stack slot (op at pos, len
 * cells): while `ok`, everything emitted after it is pure (no store, call,
 * branch or trap other than a load's) and local x was not written, so
 * fuse_store_late() may move the load down to the store that writes its
 * result back.  vs is its stack entry's index, pops how often that index
 * was popped since.
 */
struct ldrec {
	bool ok;
	uint32_t pos, len, d, x, imm, off, iop, vs, pops;
};

#define LDRECS 4

struct cc {
	const wasm_module *m;
	const bool *refs;
	wasm_error *err;
	wasm_reader r;
	size_t op_off;
	const wasm_functype *ft;
	uint32_t ftypeidx;
	bool last_func;

	uint32_t nlocals;
	const wasm_valtype *params;
	const wasm_code *code_entry;
	uint32_t *lslot;
	uint32_t nlocal_slots;
	/*
	 * Non-defaultable locals ((ref ht)): linit[x] while local x is set
	 * on every path to here; linit_set lists the ones set since the
	 * enclosing blocks began, so a block's end forgets them (the spec's
	 * initialization rule).  NULL when the function has none.
	 */
	bool *linit;
	uint32_t *linit_set;
	uint32_t nlinit, clinit;

	struct vent *vs;
	uint32_t nvs, cvs;
	struct vent *tmp;
	uint32_t ctmp;
	struct ctl *cs;
	uint32_t ncs, ccs;

	uint32_t *code;
	uint32_t ncode, ccode;
	uint32_t scratch[32];
	uint32_t *labels;
	uint32_t nlabels, clabels;
	struct fix *fixes;
	uint32_t nfixes, cfixes;
	struct wasm_handler *handlers;
	uint32_t nhandlers, chandlers;
	struct wasm_catch *catches;
	uint32_t ncatches, ccatches;
	struct wasm_catch *lpend; /* legacy clauses not placed yet */
	uint32_t nlpend, clpend;
	uint32_t *links;
	uint32_t nlinks, clinks;
	/* resume points of non-tail calls (code.h wasm_compiled.resumes) */
	uint32_t *resumes;
	uint32_t nresumes, cresumes;
	/* where a fuel check may stop it (code.h wasm_compiled.parks) */
	uint32_t *parks;
	uint32_t nparks;
	bool holds_refs;
	/*
	 * The references a frame holds where it can stand (code.h
	 * refslots): the lists of every point, one after the other; per
	 * resume its (start, end) in them; per park point recorded, its
	 * (op cell, start, end); the ref locals (nullable: a (ref ht)
	 * local holds null until it is set).
	 */
	struct wasm_refslot *refslots;
	uint32_t nrefslots, crefslots;
	uint32_t *resume_refs;
	uint32_t nresume_refs, cresume_refs;
	uint32_t *park_maps;
	uint32_t npark_maps, cpark_maps;
	struct wasm_refslot *lrefs;
	uint32_t nlrefs, clrefs;

	uint32_t max_slot;
	bool oom;
	uint32_t func_label;
	bool func_label_used;

	/* result of fold_addi */
	uint8_t fold_kind;
	uint64_t fold_val;

	/*
	 * The peephole window (fuse.c): the instruction emitted last (NONE
	 * after a label) and the one before
	 */
	uint32_t last;
	uint32_t last_iop;
	bool last_dest;
	uint32_t prev;
	uint32_t prev_iop;
	uint32_t prev2; /* and the one before that */
	uint32_t prev2_iop;

	/* the recent f32/f64 loads fuse_store_late() may move down */
	struct ldrec ld[LDRECS];
	uint32_t nld;
};

struct memarg {
	uint32_t memidx;
	uint32_t align;
	uint64_t offset;
	bool is64;
};

/* ---- small helpers, for both files ------------------------------------- */

static inline uint32_t addi_src(const struct vent *e)
{
	return (uint32_t)e->val;
}

static inline uint32_t addi_imm(const struct vent *e)
{
	return (uint32_t)(e->val >> 32);
}

/* Whether entry e is waiting on the value of slot s. */
static inline bool ent_reads(const struct vent *e, uint32_t s)
{
	switch (e->kind) {
	case VK_ALIAS:
	case VK_ADDI:
		return (uint32_t)e->val == s;
	case VK_ADDS:
		return (uint32_t)e->val == s || (uint32_t)(e->val >> 32) == s;
	default:
		return false;
	}
}

static inline struct ctl *top(struct cc *c)
{
	return &c->cs[c->ncs - 1];
}

static inline bool live(struct cc *c)
{
	struct ctl *f;

	if (c->ncs == 0)
		return false;
	f = top(c);
	return !f->unreachable && !f->dead;
}

/* Nothing before this point may be fused with what comes next. */
static inline void forget(struct cc *c)
{
	c->last = NONE;
	c->prev = NONE;
	c->prev2 = NONE;
}

/* The slot of the entry pushed last. */
static inline uint32_t top_slot(struct cc *c)
{
	return c->vs[c->nvs - 1].slot;
}

/* x as slot + addend, when it is one of those. */
static inline bool as_addi(const struct vent *e, uint32_t *src, uint32_t *imm)
{
	switch (e->kind) {
	case VK_STACK:
		*src = e->slot;
		*imm = 0;
		return true;
	case VK_ALIAS:
		*src = (uint32_t)e->val;
		*imm = 0;
		return true;
	case VK_ADDI:
		*src = addi_src(e);
		*imm = addi_imm(e);
		return true;
	default:
		return false;
	}
}

/* x as a plain slot read (own slot or alias), when it is one. */
static inline bool as_slot(const struct vent *e, uint32_t *src)
{
	if (e->kind == VK_STACK) {
		*src = e->slot;
		return true;
	}
	if (e->kind == VK_ALIAS) {
		*src = (uint32_t)e->val;
		return true;
	}
	return false;
}

static inline uint32_t tslots(wasm_valtype t)
{
	return (uint8_t)t == WASM_V128 ? 2 : 1;
}

/* ---- compile.c, for fuse.c ---------------------------------------------- */

/*
 * Reserve an instruction `op` of `n` operand cells and return where the
 * operands go (scratch cells when the code is dead or memory ran out);
 * cc_emit_d for ops whose first operand is their output slot.
 */
uint32_t *cc_emit(struct cc *c, uint32_t op, uint32_t n);
uint32_t *cc_emit_d(struct cc *c, uint32_t op, uint32_t n);

/* Push an entry of type t in its own slot; 0, or -1 with the error set. */
int cc_push(struct cc *c, wasm_valtype t);

/* Make room for `need` code cells; 0, or -1 out of memory (c->oom). */
int cc_grow_code(struct cc *c, uint32_t need);

/* ---- fuse.c, for compile.c ---------------------------------------------- */

/* op is being emitted at pos: loads it moves over may no longer move. */
void fuse_note_emit(struct cc *c, uint32_t pos, uint32_t op);

/* A 1-slot copy dst <- src: merged into the copy emitted last? */
bool fuse_copy(struct cc *c, uint32_t dst, uint32_t src);

/*
 * The i32 condition e (popped, code live): when the instruction emitted
 * last computed it, take that back and fill *cd with a fused branch.
 */
bool fuse_cond(struct cc *c, const struct vent *e, struct cond *cd);

/* Local slot ls is about to be written (before its aliases move away). */
void fuse_local_written(struct cc *c, uint32_t ls);

/* local.set/tee of e into ls: retarget the producer of e instead? */
bool fuse_local_set(struct cc *c, const struct vent *e, uint32_t ls);

/*
 * Binary numeric op `op` of a, b (popped, code live), fused with the
 * instruction emitted last; the result is pushed.  fuse_binop_first runs
 * before compile.c folds an i32.add into a pending sum (an add of a
 * product becomes a multiply-add, not a pending sum), fuse_binop after.
 */
bool fuse_binop_first(struct cc *c, uint8_t op, const struct vent *a,
		      const struct vent *b);
bool fuse_binop(struct cc *c, uint8_t op, const struct vent *a,
		const struct vent *b);

/*
 * An f32/f64 load just emitted (len cells, address slot x + imm, offset
 * off) into the top entry: remember it for fuse_store.
 */
void fuse_note_load(struct cc *c, uint32_t len, uint32_t x, uint32_t imm,
		    uint32_t off);

/*
 * Before a store pops its operands: the remembered load whose value it
 * may be storing back (or NULL).  Then fuse_store: the store `op` of v
 * at a to memory 0 (32-bit), fused with the code before it?
 */
struct ldrec *fuse_late_load(struct cc *c);
bool fuse_store(struct cc *c, uint8_t op, struct ldrec *late,
		const struct vent *a, const struct vent *v,
		const struct memarg *ma);

#endif
