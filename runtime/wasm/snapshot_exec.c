/*
 * snapshot_exec.c - a suspended execution context as plain data (store
 * snapshots, runtime/wasm/snapshot.h): the heap stack of a thread that
 * waits inside a host function (a canon built-in such as
 * waitable-set.wait, a sync lower) or that a fuel check stopped,
 * written and restored frame by frame.
 *
 * Encoding (after runtime/wasm/snapshot.h's integers and references):
 *   u8 0 idle (no call outstanding) | 1 blocked | 2 stopped out of fuel:
 *   blocked: ref entry, ref blocked (a host function), u8 blocked_entry;
 *   unless blocked_entry: u32 nframes (the callers), then nframes + 1
 *   frames bottom first, the last the one in the host call:
 *     u32 core instance, u32 function index, u32 code offset (where it
 *     continues: after one of its calls), u32 nslots, nslots x u64
 *   A frame's slots are the live ones: from its base up to where its
 *   callee's frame (or the blocked host call's arguments) begins, which
 *   is the call's base slot, so no dead slot of a callee that returned
 *   is ever written.
 *   stopped out of fuel: ref entry, u32 nframes, then the callers'
 *   frames as above and the stopped one: its code offset is the op a
 *   fuel check stopped before (code.h parks: a backward branch or a
 *   call, which continuing runs again whole) and its slots are the
 *   whole frame (frame_slots): its operand stack's height there is not
 *   recorded, and the slots above it are dead numbers.
 *   A frame of a function that holds references (code.h holds_refs)
 *   writes the slots code.h lists for its point as references (the
 *   core section's encoding), the others as u64.
 *
 * Why frames are accepted only where they can be (compile.c records, for
 * every non-tail call, its op cell, its return offset, its base and its
 * callee's type): a restored program counter is then always the
 * continuation of a call, each frame's base is its caller's call base,
 * and the interpreter never runs an operand cell as an op, whatever a
 * forged snapshot says; a stopped frame's counter must be one of its
 * parks likewise.  The frame above a caller, and the host function a
 * blocked thread waits in, must be of the type the caller's call calls:
 * a callee of another type returns results of other types, which the
 * caller's code would take for references (the fuzz target found a
 * caller that reads an exnref where its forged callee returned an i32).
 * A frame that holds references gets a checked reference in every slot
 * its point lists and numbers elsewhere, which typed code never reads as
 * references (an exception by the index the core section's heap walk,
 * which takes these slots as roots, gave it); a point with no list,
 * and a non-null externref (a host value: a component has none), are
 * refused.
 *
 * Allocations sized by a guest or a client (issue 18 audit): restoring
 * grows the exec's value and frame stacks to what the snapshot asks,
 * within its limits (max_bytes, max_depth: wasm_exec_grow_*), and only
 * as far as the bytes left can describe (each frame takes 16 bytes at
 * least), so a short snapshot cannot ask for a deep stack.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasm/exec.h"
#include "wasm/instance.h"
#include "wasm/snapshot.h"

/* Whether a fuel check may stop code at offset off (code.h parks): *k
 * which park it is. */
static bool park_point(const struct wasm_compiled *code, uint32_t off,
		       uint32_t *k)
{
	uint32_t lo = 0, hi = code->nparks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (code->parks[mid] == off) {
			*k = mid;
			return true;
		}
		if (code->parks[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The base slot of the call code returns to at offset off, or -1: *k
 * which resume it is. */
static int64_t resume_base(const struct wasm_compiled *code, uint32_t off,
			   uint32_t *k)
{
	const uint32_t *v = code->resumes;
	uint32_t lo = 0, hi = code->nresumes / WASM_RESUME_CELLS;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint32_t at = v[WASM_RESUME_CELLS * mid + 1];

		if (at == off) {
			*k = mid;
			return v[WASM_RESUME_CELLS * mid + 2];
		}
		if (at < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The module's index of the type resume k's call calls. */
static uint32_t resume_callee_type(const struct wasm_compiled *code,
				   uint32_t k)
{
	return code->resumes[WASM_RESUME_CELLS * k + 3];
}

/*
 * The references of a frame standing at resume k (parked: park k), as
 * refslots[r[0] .. r[1]); both 0 when the function holds none.  False
 * when the compiler recorded no list for the point.
 */
static bool frame_refs(const struct wasm_compiled *code, bool parked,
		       uint32_t k, uint32_t r[2])
{
	const uint32_t *v = parked ? code->park_refs : code->resume_refs;

	r[0] = r[1] = 0;
	if (!code->holds_refs)
		return true;
	if (v == NULL || v[2 * k] == WASM_NO_REFMAP)
		return false;
	r[0] = v[2 * k];
	r[1] = v[2 * k + 1];
	return true;
}

/* n slots of a frame of code in inst, those r lists as references. */
static wasm_snap_status put_slots(wasm_snap_map *m, wasm_snap_buf *b,
				  const wasm_instance *inst,
				  const struct wasm_compiled *code,
				  const uint64_t *slots, uint32_t n,
				  const uint32_t r[2], char *why,
				  size_t whylen)
{
	uint32_t k = r[0];

	for (uint32_t i = 0; i < n; i++) {
		wasm_snap_status st;

		if (k < r[1] && code->refslots[k].slot == i) {
			st = wasm_snap_put_slot_ref(
				m, b,
				wasm_instance_valtype(inst,
						      code->refslots[k].type),
				slots[i], why, whylen);
			if (st != WASM_SNAP_OK)
				return st;
			k++;
			continue;
		}
		wasm_snap_u64(b, slots[i]);
	}
	return WASM_SNAP_OK;
}

/* Whether any frame of code in inst can be written: *ord its instance. */
static wasm_snap_status frame_writable(wasm_snap_map *m,
				       const wasm_instance *inst,
				       const struct wasm_compiled *code,
				       uint32_t *ord, char *why, size_t whylen)
{
	(void)code;
	if (!wasm_snap_instance_ordinal(m, inst, ord))
		return wasm_snap_fail(
			why, whylen, WASM_SNAP_UNSUPPORTED,
			"a frame of an instance of another store");
	return WASM_SNAP_OK;
}

/*
 * What the writer takes of a frame of code standing at pc, whose slots
 * begin at fp: parked (stopped by a fuel check), a park point and its
 * whole frame; else the continuation of a call whose base is next - fp.
 * *n the slots written, r the references among them (frame_refs).
 * FRAME_OUTSIDE: pc is outside the code (a tail call's); FRAME_AT_CALL:
 * pc is no such point; FRAME_NO_REFS: the compiler recorded no list
 * for it.
 */
enum { FRAME_OK, FRAME_OUTSIDE, FRAME_AT_CALL, FRAME_NO_REFS };

static int frame_shape(const wasm_exec *e, const struct wasm_compiled *code,
		       const uint32_t *pc, size_t fp, size_t next, bool parked,
		       uint32_t *n, uint32_t r[2])
{
	uint32_t off, k = 0;
	int64_t base;

	if (pc < code->code || pc > code->code + code->ncode)
		return FRAME_OUTSIDE;
	off = (uint32_t)(pc - code->code);
	if (parked) {
		if (pc == code->code + code->ncode || !park_point(code, off, &k) ||
		    fp + code->frame_slots > e->stack_cap)
			return FRAME_AT_CALL;
		*n = code->frame_slots;
	} else {
		base = resume_base(code, off, &k);
		if (base < 0 || fp + (size_t)base != next)
			return FRAME_AT_CALL;
		*n = (uint32_t)base;
	}
	return frame_refs(code, parked, k, r) ? FRAME_OK : FRAME_NO_REFS;
}

/* The frame a fuel check stopped: at a park point, every slot. */
static wasm_snap_status put_parked(wasm_snap_map *m, wasm_snap_buf *b,
				   const wasm_exec *e, char *why, size_t whylen)
{
	const struct wasm_compiled *code = e->code;
	uint32_t ord, n = 0, r[2];
	wasm_snap_status st = frame_writable(m, e->inst, code, &ord, why,
					     whylen);
	int shape;

	if (st != WASM_SNAP_OK)
		return st;
	shape = frame_shape(e, code, e->pc, e->fp, 0, true, &n, r);
	if (shape == FRAME_OUTSIDE || shape == FRAME_AT_CALL)
		return wasm_snap_fail(
			why, whylen, WASM_SNAP_UNSUPPORTED,
			"not supported yet: a thread stopped out of fuel at "
			"a tail call (function %u of core instance %u)",
			code->funcidx, ord);
	if (shape == FRAME_NO_REFS)
		return wasm_snap_fail(
			why, whylen, WASM_SNAP_UNSUPPORTED,
			"not supported yet: a thread stopped out of fuel "
			"where its frame's references are not known "
			"(function %u of core instance %u)",
			code->funcidx, ord);
	wasm_snap_u32(b, ord);
	wasm_snap_u32(b, code->funcidx);
	wasm_snap_u32(b, (uint32_t)(e->pc - code->code));
	wasm_snap_u32(b, n);
	return put_slots(m, b, e->inst, code, e->stack + e->fp, n, r, why,
			 whylen);
}

static wasm_snap_status put_frame(wasm_snap_map *m, wasm_snap_buf *b,
				  const wasm_exec *e, const uint32_t *pc,
				  size_t fp, const struct wasm_compiled *code,
				  const wasm_instance *inst, size_t next_fp,
				  char *why, size_t whylen)
{
	uint32_t ord, n = 0, r[2];
	wasm_snap_status st = frame_writable(m, inst, code, &ord, why, whylen);
	int shape;

	if (st != WASM_SNAP_OK)
		return st;
	shape = frame_shape(e, code, pc, fp, next_fp, false, &n, r);
	if (shape == FRAME_OUTSIDE)
		return wasm_snap_fail(
			why, whylen, WASM_SNAP_UNSUPPORTED,
			"not supported yet: a thread blocked in a tail "
			"call of a host function (function %u of core "
			"instance %u)",
			code->funcidx, ord);
	if (shape != FRAME_OK)
		return wasm_snap_fail(
			why, whylen, WASM_SNAP_UNSUPPORTED,
			"not supported yet: a frame stopped outside of a "
			"call (function %u of core instance %u)",
			code->funcidx, ord);
	wasm_snap_u32(b, ord);
	wasm_snap_u32(b, code->funcidx);
	wasm_snap_u32(b, (uint32_t)(pc - code->code));
	wasm_snap_u32(b, n);
	return put_slots(m, b, inst, code, e->stack + fp, n, r, why, whylen);
}

/*
 * The frames wasm_exec_snapshot writes of e, bottom first, each as
 * (pc, fp, code, inst, where its live slots end, parked); fn's status
 * ends the walk.  An exec it would not write has none.
 */
typedef wasm_snap_status (*frame_fn)(void *ctx, const wasm_exec *e,
				     const uint32_t *pc, size_t fp,
				     const struct wasm_compiled *code,
				     const wasm_instance *inst, size_t next,
				     bool parked);

static wasm_snap_status each_frame(const wasm_exec *e, frame_fn fn, void *ctx)
{
	bool parked = e->state == WASM_EXEC_STATE_NO_FUEL && e->code != NULL;
	wasm_snap_status st = WASM_SNAP_OK;

	if (e->exn != NULL ||
	    (!parked && (e->state != WASM_EXEC_STATE_BLOCKED ||
			 e->blocked == NULL || e->blocked_entry)))
		return WASM_SNAP_OK;
	for (uint32_t k = 0; k < e->nframes && st == WASM_SNAP_OK; k++) {
		const struct wasm_frame *fr = &e->frames[k];
		size_t next = k + 1 < e->nframes ? e->frames[k + 1].fp : e->fp;

		st = fn(ctx, e, fr->pc, fr->fp, fr->code, fr->inst, next,
			false);
	}
	if (st == WASM_SNAP_OK)
		st = fn(ctx, e, e->pc, e->fp, e->code, e->inst,
			parked ? 0 : e->blocked_base, parked);
	return st;
}

typedef struct ref_walk {
	wasm_exec_ref_fn fn;
	void *ctx;
} ref_walk;

static wasm_snap_status frame_each_ref(void *ctx, const wasm_exec *e,
				       const uint32_t *pc, size_t fp,
				       const struct wasm_compiled *code,
				       const wasm_instance *inst, size_t next,
				       bool parked)
{
	const ref_walk *w = ctx;
	uint32_t n = 0, r[2];
	wasm_snap_status st = WASM_SNAP_OK;

	/* a frame the writer refuses holds nothing it writes */
	if (frame_shape(e, code, pc, fp, next, parked, &n, r) != FRAME_OK)
		return WASM_SNAP_OK;
	for (uint32_t k = r[0]; k < r[1] && st == WASM_SNAP_OK; k++)
		if (code->refslots[k].slot < n)
			st = w->fn(w->ctx,
				   wasm_instance_valtype(
					   inst, code->refslots[k].type),
				   e->stack[fp + code->refslots[k].slot]);
	return st;
}

wasm_snap_status wasm_exec_each_ref(const wasm_exec *e, wasm_exec_ref_fn fn,
				    void *ctx)
{
	ref_walk w = {fn, ctx};

	return each_frame(e, frame_each_ref, &w);
}

typedef struct put_walk {
	wasm_snap_map *m;
	wasm_snap_buf *b;
	char *why;
	size_t whylen;
} put_walk;

static wasm_snap_status frame_put(void *ctx, const wasm_exec *e,
				  const uint32_t *pc, size_t fp,
				  const struct wasm_compiled *code,
				  const wasm_instance *inst, size_t next,
				  bool parked)
{
	put_walk *w = ctx;

	return parked ? put_parked(w->m, w->b, e, w->why, w->whylen)
		      : put_frame(w->m, w->b, e, pc, fp, code, inst, next,
				  w->why, w->whylen);
}

wasm_snap_status wasm_exec_snapshot(const wasm_exec *e, wasm_snap_map *m,
				    wasm_snap_buf *b, char *why, size_t whylen)
{
	put_walk w = {m, b, why, whylen};
	wasm_snap_status st;

	if (e->state == WASM_EXEC_STATE_IDLE) {
		wasm_snap_u8(b, 0);
		return WASM_SNAP_OK;
	}
	if (e->exn != NULL)
		return wasm_snap_fail(why, whylen, WASM_SNAP_UNSUPPORTED,
				      "not supported yet: a thread holding an "
				      "exception");
	if (e->state == WASM_EXEC_STATE_NO_FUEL && e->code != NULL) {
		wasm_snap_u8(b, 2);
		st = wasm_snap_put_func(m, b, e->entry, why, whylen);
		if (st != WASM_SNAP_OK)
			return st;
		wasm_snap_u32(b, e->nframes);
		return each_frame(e, frame_put, &w);
	}
	if (e->state != WASM_EXEC_STATE_BLOCKED || e->blocked == NULL)
		return wasm_snap_fail(why, whylen, WASM_SNAP_UNSUPPORTED,
				      "not supported yet: a thread inside "
				      "guest code");
	wasm_snap_u8(b, 1);
	st = wasm_snap_put_func(m, b, e->entry, why, whylen);
	if (st == WASM_SNAP_OK)
		st = wasm_snap_put_func(m, b, e->blocked, why, whylen);
	if (st != WASM_SNAP_OK)
		return st;
	wasm_snap_u8(b, e->blocked_entry);
	if (e->blocked_entry)
		return WASM_SNAP_OK;
	wasm_snap_u32(b, e->nframes);
	return each_frame(e, frame_put, &w);
}

/* ---- restoring ---------------------------------------------------------- */

#define BAD(...) wasm_snap_fail(why, whylen, WASM_SNAP_MALFORMED, __VA_ARGS__)

typedef struct frame_in {
	const struct wasm_compiled *code;
	wasm_instance *inst;
	uint32_t off, base;
	uint32_t type_id; /* the function's (store.h wasm_func.type_id) */
	uint32_t callee;  /* a caller's: the type id its call site calls */
	size_t fp;
	const uint8_t *slots; /* base x u64, read later */
	uint64_t *vals;	      /* or, with references, read now (malloc'd) */
} frame_in;

static void free_frames(frame_in *fs, uint32_t n)
{
	for (uint32_t k = 0; fs != NULL && k < n; k++)
		free(fs[k].vals);
	free(fs);
}

/* A frame's slots that hold references: each checked against its type. */
static wasm_snap_status get_ref_slots(wasm_snap_map *m, wasm_snap_reader *r,
				      frame_in *f, const uint32_t refs[2],
				      char *why, size_t whylen)
{
	const struct wasm_compiled *code = f->code;
	uint32_t k = refs[0], nrefs = 0;

	for (uint32_t i = refs[0]; i < refs[1]; i++)
		nrefs += code->refslots[i].slot < f->base;
	/* a reference takes a byte at least, a number eight */
	if (wasm_snap_left(r) / 8 < f->base - nrefs)
		return BAD("truncated frame");
	f->vals = calloc(f->base ? f->base : 1, sizeof *f->vals);
	if (f->vals == NULL)
		return wasm_snap_fail(why, whylen, WASM_SNAP_NOMEM,
				      "out of memory");
	for (uint32_t i = 0; i < f->base; i++) {
		wasm_snap_status st;

		if (k < refs[1] && code->refslots[k].slot == i) {
			st = wasm_snap_get_slot_ref(
				m, r,
				wasm_instance_valtype(f->inst,
						      code->refslots[k].type),
				&f->vals[i], why, whylen);
			if (st != WASM_SNAP_OK)
				return st;
			k++;
		} else if (!wasm_snap_get_u64(r, &f->vals[i])) {
			return BAD("truncated frame");
		}
	}
	return WASM_SNAP_OK;
}

static wasm_snap_status get_frame(wasm_snap_map *m, wasm_snap_reader *r,
				  frame_in *f, size_t fp, bool parked,
				  char *why, size_t whylen)
{
	uint32_t ord, fi, k = 0, refs[2];
	wasm_instance *inst;
	const wasm_func *fn;
	int64_t base;

	if (!wasm_snap_get_u32(r, &ord) || !wasm_snap_get_u32(r, &fi) ||
	    !wasm_snap_get_u32(r, &f->off) || !wasm_snap_get_u32(r, &f->base))
		return BAD("truncated frame");
	inst = wasm_snap_instance_at(m, ord);
	if (inst == NULL || fi >= wasm_module_nfuncs(inst->module))
		return BAD("a frame of no function (%u of core instance %u)",
			   fi, ord);
	fn = inst->funcs[fi];
	if (fn->kind != WASM_FUNC_WASM || fn->u.wasm.inst != inst ||
	    fn->u.wasm.code == NULL)
		return BAD("a frame of function %u of core instance %u, "
			   "which it does not define",
			   fi, ord);
	f->code = fn->u.wasm.code;
	f->inst = inst;
	f->type_id = fn->type_id;
	f->fp = fp;
	if (parked) {
		/* before a backward branch or a call, the whole frame */
		if (!park_point(f->code, f->off, &k) ||
		    f->base != f->code->frame_slots)
			return BAD("a stopped frame that does not stand at a "
				   "fuel check");
	} else {
		base = resume_base(f->code, f->off, &k);
		if (base < 0 || (uint32_t)base != f->base ||
		    f->base > f->code->frame_slots)
			return BAD("a frame that does not stand after a "
				   "call");
		f->callee = inst->type_ids[resume_callee_type(f->code, k)];
	}
	if (!frame_refs(f->code, parked, k, refs))
		return BAD("a frame where its references are not known");
	if (f->code->holds_refs)
		return get_ref_slots(m, r, f, refs, why, whylen);
	if (wasm_snap_left(r) / 8 < f->base)
		return BAD("truncated frame");
	f->slots = wasm_snap_take(r, (size_t)f->base * 8);
	return WASM_SNAP_OK;
}

static bool grow_frames(wasm_exec *e, uint32_t n)
{
	while (e->frames_cap < n)
		if (wasm_exec_grow_frames(e))
			return false;
	return true;
}

/*
 * u32 nframes, then nframes + 1 frames (the last stopped at a fuel
 * check when parked, else in a host call) into *fs (malloc'd), the
 * first the entry's; *fp the last frame's base, *need the slots they
 * take.
 */
static wasm_snap_status read_frames(wasm_exec *e, wasm_snap_map *m,
				    wasm_snap_reader *r, const wasm_func *entry,
				    bool parked, frame_in **fsp,
				    uint32_t *nframes, size_t *fp, size_t *need,
				    char *why, size_t whylen)
{
	frame_in *fs;
	wasm_snap_status st = WASM_SNAP_OK;

	if (entry->kind != WASM_FUNC_WASM || entry->u.wasm.code == NULL)
		return BAD("bad entry function");
	if (!wasm_snap_get_u32(r, nframes) || *nframes >= e->max_depth ||
	    *nframes >= wasm_snap_left(r) / 16)
		return BAD("bad frame count");
	fs = calloc((size_t)*nframes + 1, sizeof *fs);
	if (fs == NULL)
		return wasm_snap_fail(why, whylen, WASM_SNAP_NOMEM,
				      "out of memory");
	*fp = *need = 0;
	for (uint32_t k = 0; k <= *nframes && st == WASM_SNAP_OK; k++) {
		st = get_frame(m, r, &fs[k], *fp, parked && k == *nframes, why,
			       whylen);
		if (st != WASM_SNAP_OK)
			break;
		/* a callee of another type would hand its caller results
		 * of other types: numbers the caller takes for references */
		if (k > 0 && fs[k].type_id != fs[k - 1].callee) {
			st = BAD("a frame that its caller's call does not "
				 "call");
			break;
		}
		if (*fp + fs[k].code->frame_slots > *need)
			*need = *fp + fs[k].code->frame_slots;
		if (k < *nframes)
			*fp += fs[k].base;
		/* frames read now take memory: no further than the stack's
		 * limit lets them go */
		if (*need > e->max_bytes / sizeof *e->stack)
			st = wasm_snap_fail(why, whylen, WASM_SNAP_MISMATCH,
					    "a thread's stack past its limit");
	}
	if (st == WASM_SNAP_OK && (fs[0].code != entry->u.wasm.code ||
				   fs[0].inst != entry->u.wasm.inst))
		st = BAD("the first frame is not the entry's");
	if (st != WASM_SNAP_OK) {
		free_frames(fs, *nframes + 1);
		return st;
	}
	*fsp = fs;
	return WASM_SNAP_OK;
}

/* Grow e's stacks to need slots and nframes frames, then lay fs out. */
static wasm_snap_status install_frames(wasm_exec *e, const frame_in *fs,
				       uint32_t nframes, size_t need,
				       char *why, size_t whylen)
{
	if (wasm_exec_grow_stack(e, need) || !grow_frames(e, nframes))
		return wasm_snap_fail(why, whylen, WASM_SNAP_MISMATCH,
				      "a thread's stack past its limit");
	memset(e->stack, 0, e->stack_cap * sizeof *e->stack);
	for (uint32_t k = 0; fs != NULL && k <= nframes; k++) {
		wasm_snap_reader sr = {.p = fs[k].slots,
				       .len = (size_t)fs[k].base * 8};

		if (fs[k].vals != NULL)
			memcpy(&e->stack[fs[k].fp], fs[k].vals,
			       (size_t)fs[k].base * sizeof *e->stack);
		else
			for (size_t i = 0; i < fs[k].base; i++)
				wasm_snap_get_u64(&sr,
						  &e->stack[fs[k].fp + i]);
		if (k < nframes) {
			struct wasm_frame *fr = &e->frames[k];

			fr->pc = fs[k].code->code + fs[k].off;
			fr->fp = fs[k].fp;
			fr->code = fs[k].code;
			fr->inst = fs[k].inst;
		} else {
			e->pc = fs[k].code->code + fs[k].off;
			e->fp = fs[k].fp;
			e->code = fs[k].code;
			e->inst = fs[k].inst;
		}
	}
	e->nframes = nframes;
	e->nresults = 0;
	e->result_type = NULL;
	e->trap = WASM_TRAP_NONE;
	e->trap_msg[0] = 0;
	e->exn = NULL;
	return WASM_SNAP_OK;
}

/* A thread a fuel check stopped (kind 2): wasm_exec_continue goes on. */
static wasm_snap_status get_parked(wasm_exec *e, wasm_snap_map *m,
				   wasm_snap_reader *r, char *why,
				   size_t whylen)
{
	wasm_func *entry;
	frame_in *fs = NULL;
	uint32_t nframes = 0;
	size_t need, fp;
	wasm_snap_status st = wasm_snap_get_func(m, r, &entry, why, whylen);

	if (st != WASM_SNAP_OK)
		return st;
	if (entry == NULL)
		return BAD("bad entry function");
	st = read_frames(e, m, r, entry, true, &fs, &nframes, &fp, &need, why,
			 whylen);
	if (st == WASM_SNAP_OK)
		st = install_frames(e, fs, nframes, need, why, whylen);
	free_frames(fs, nframes + 1);
	if (st != WASM_SNAP_OK)
		return st;
	e->entry = entry;
	e->blocked = NULL;
	e->blocked_entry = false;
	e->blocked_base = 0;
	e->state = WASM_EXEC_STATE_NO_FUEL;
	return WASM_SNAP_OK;
}

wasm_snap_status wasm_exec_restore(wasm_exec *e, wasm_snap_map *m,
				   wasm_snap_reader *r, char *why,
				   size_t whylen)
{
	uint8_t kind, bentry;
	wasm_func *entry, *blocked;
	uint32_t nframes = 0;
	frame_in *fs = NULL;
	size_t need, fp = 0;
	wasm_snap_status st;

	if (e->state != WASM_EXEC_STATE_IDLE)
		return BAD("a thread restored twice");
	if (!wasm_snap_get_u8(r, &kind) || kind > 2)
		return BAD("bad thread state");
	if (kind == 0)
		return WASM_SNAP_OK;
	if (kind == 2)
		return get_parked(e, m, r, why, whylen);
	st = wasm_snap_get_func(m, r, &entry, why, whylen);
	if (st == WASM_SNAP_OK)
		st = wasm_snap_get_func(m, r, &blocked, why, whylen);
	if (st != WASM_SNAP_OK)
		return st;
	if (entry == NULL || blocked == NULL ||
	    blocked->kind != WASM_FUNC_HOST || !wasm_snap_get_u8(r, &bentry) ||
	    bentry > 1)
		return BAD("bad blocked call");
	if (bentry) {
		if (entry != blocked)
			return BAD("bad blocked call");
		need = entry->type->nparams * 2 + blocked->type->nresults * 2;
	} else {
		st = read_frames(e, m, r, entry, false, &fs, &nframes, &fp,
				 &need, why, whylen);
		if (st != WASM_SNAP_OK)
			return st;
		if (blocked->type_id != fs[nframes].callee) {
			free_frames(fs, nframes + 1);
			return BAD("a host call that its caller's call does "
				   "not call");
		}
		/* the host call's base is where its frame's slots end */
		fp += fs[nframes].base;
		/* the host call's arguments, then its results, at fp */
		need += blocked->type->nparams * 2 +
			blocked->type->nresults * 2;
		if (fp + blocked->type->nresults * 2 > need)
			need = fp + blocked->type->nresults * 2;
	}
	st = install_frames(e, fs, nframes, need, why, whylen);
	free_frames(fs, nframes + 1);
	if (st != WASM_SNAP_OK)
		return st;
	e->entry = entry;
	e->blocked = blocked;
	e->blocked_entry = bentry;
	e->blocked_base = bentry ? 0 : fp;
	e->state = WASM_EXEC_STATE_BLOCKED;
	return WASM_SNAP_OK;
}
