/*
 * interp.c - the interpreter: one dispatch loop over the code of code.h.
 *
 * Contract:
 *  - wasm_interp_run() continues an exec from its saved (pc, fp, code,
 *    inst)
 *    and returns when the outermost call returns (DONE), a trap happens
 *    (TRAP), an exception escapes (EXCEPTION), a host function answers
 *    BLOCK (BLOCKED) or fuel runs out (OUT_OF_FUEL).  On the last two the
 *    exec's position is saved so that running it again continues
 *    exactly there: a stopped branch or call is executed again, a blocked
 *    host call continues right after the call.
 *  - A call between wasm functions never recurses on the C stack: it
 *    pushes a frame on the exec's frame stack and continues in the same
 *    loop.  Host functions are plain C calls from the loop.
 *  - No signals, no longjmp: memory and table accesses are bounds-checked
 *    explicitly (effective addresses in 64 bits), traps return.
 *  - Fuel is paid at every loop back-edge (a taken branch with a
 *    non-positive offset) and every call.
 *
 * Dispatch is direct threading with computed goto when the compiler
 * offers it (GNU C): an op cell holds its handler's offset from the first
 * handler, so a dispatch is a load, an add and an indirect jump.  Other
 * compilers get a switch with the same handler bodies.  The frame base,
 * pc, instance and memory 0's base and size live in C locals; they are
 * reloaded only when a call, return, host call or memory.grow can have
 * changed them.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none here:
 * the interpreter runs on its exec's stacks (exec.c) and calls into
 * memory.c, table.c and exn.c for memory.grow, table.grow and throw.
 */
#include <string.h>

#include "wasm/exec.h"
#include "wasm/numeric.h"
#include "wasm/simd.h"

/*
 * clang needs tens of minutes to compile the computed-goto loop with
 * AddressSanitizer (the sanitizer and fuzzing builds): those get the
 * switch, which also keeps that variant tested.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(WASM_INTERP_SWITCH)
#define WASM_INTERP_SWITCH 1
#endif
#endif

#if defined(__GNUC__) && !defined(WASM_INTERP_SWITCH)
#define USE_GOTO 1
#else
#define USE_GOTO 0
#endif

#if defined(__GNUC__)
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#if defined(__clang__)
#define INTERP_ATTR __attribute__((noinline))
#else
#define INTERP_ATTR __attribute__((noinline, noclone))
#endif
#else
#define likely(x)   (x)
#define unlikely(x) (x)
#define INTERP_ATTR
#endif

/*
 * Hides a pointer from the optimiser so a short zeroing loop stays a loop
 * instead of becoming a call to memset.
 */
#if defined(__GNUC__)
#define OPAQUE(p) __asm__("" : "+r"(p))
#else
#define OPAQUE(p) ((void)0)
#endif

/* ---- value access ------------------------------------------------------- */

#define T_I32 uint32_t
#define T_I64 uint64_t
#define T_F32 float
#define T_F64 double

#define GET_I32(s) ((uint32_t)(s))
#define GET_I64(s) ((uint64_t)(s))
#define GET_F32(s) num_f32_from_bits((uint32_t)(s))
#define GET_F64(s) num_f64_from_bits((uint64_t)(s))

#define BOX_I32(v) ((uint64_t)(uint32_t)(v))
#define BOX_I64(v) ((uint64_t)(v))
#define BOX_F32(v) ((uint64_t)num_f32_bits(v))
#define BOX_F64(v) num_f64_bits(v)

#define IMM_I32(p) ((uint32_t)(p)[0])
#define IMM_I64(p) ((uint64_t)(p)[0] | (uint64_t)(p)[1] << 32)
#define IMM_F32(p) num_f32_from_bits((p)[0])
#define IMM_F64(p) num_f64_from_bits(IMM_I64(p))

#define CELLS_I32 1
#define CELLS_I64 2
#define CELLS_F32 1
#define CELLS_F64 2

#define S(i)	fp[pc[i]]
#define GETV(i) ((wasm_v128){fp[pc[i]], fp[pc[i] + 1]})
#define PUTV(i, v)                                                             \
	do {                                                                   \
		wasm_v128 v_ = (v);                                            \
		fp[pc[i]] = v_.lo;                                             \
		fp[pc[i] + 1] = v_.hi;                                         \
	} while (0)

/*
 * SIMD ops other than memory accesses run out of line, one small function
 * each: inlined, their lane loops would make the dispatch function too
 * big to compile in reasonable time (clang, sanitizers).  A SIMD op costs
 * a direct call more than a scalar one.
 */
#if defined(__GNUC__)
#define SIMD_OUTLINE __attribute__((noinline))
#else
#define SIMD_OUTLINE
#endif
#define SIMD_V_V(fn)	     PUTV(1, fn(GETV(2)))
#define SIMD_V_VV(fn)	     PUTV(1, fn(GETV(2), GETV(3)))
#define SIMD_V_VVV(fn)	     PUTV(1, fn(GETV(2), GETV(3), GETV(4)))
#define SIMD_V_VS(fn)	     PUTV(1, fn(GETV(2), (uint32_t)S(3)))
#define SIMD_I32_V(fn)	     S(1) = BOX_I32(fn(GETV(2)))
#define SIMD_V_I32(fn)	     PUTV(1, fn(GET_I32(S(2))))
#define SIMD_V_I64(fn)	     PUTV(1, fn(GET_I64(S(2))))
#define SIMD_V_F32(fn)	     PUTV(1, fn(GET_F32(S(2))))
#define SIMD_V_F64(fn)	     PUTV(1, fn(GET_F64(S(2))))
#define SIMD_NIN_V_V	     1
#define SIMD_NIN_V_VV	     2
#define SIMD_NIN_V_VVV	     3
#define SIMD_NIN_V_VS	     2
#define SIMD_NIN_I32_V	     1
#define SIMD_NIN_V_I32	     1
#define SIMD_NIN_V_I64	     1
#define SIMD_NIN_V_F32	     1
#define SIMD_NIN_V_F64	     1
#define SIMD_I32_V_LANE(fn)  S(1) = BOX_I32(fn(GETV(2), pc[3]))
#define SIMD_I64_V_LANE(fn)  S(1) = BOX_I64(fn(GETV(2), pc[3]))
#define SIMD_F32_V_LANE(fn)  S(1) = BOX_F32(fn(GETV(2), pc[3]))
#define SIMD_F64_V_LANE(fn)  S(1) = BOX_F64(fn(GETV(2), pc[3]))
#define SIMD_V_VI32_LANE(fn) PUTV(1, fn(GETV(2), pc[4], GET_I32(S(3))))
#define SIMD_V_VI64_LANE(fn) PUTV(1, fn(GETV(2), pc[4], GET_I64(S(3))))
#define SIMD_V_VF32_LANE(fn) PUTV(1, fn(GETV(2), pc[4], GET_F32(S(3))))
#define SIMD_V_VF64_LANE(fn) PUTV(1, fn(GETV(2), pc[4], GET_F64(S(3))))
#define SIMD_NIN_I32_V_LANE  1
#define SIMD_NIN_I64_V_LANE  1
#define SIMD_NIN_F32_V_LANE  1
#define SIMD_NIN_F64_V_LANE  1
#define SIMD_NIN_V_VI32_LANE 2
#define SIMD_NIN_V_VI64_LANE 2
#define SIMD_NIN_V_VF32_LANE 2
#define SIMD_NIN_V_VF64_LANE 2
#define SIMDOP(sub, name, SHAPE, fn)                                           \
	static SIMD_OUTLINE void simdx_##name(uint64_t *fp,                    \
					      const uint32_t *pc)              \
	{                                                                      \
		SIMD_##SHAPE(fn);                                              \
	}
#define SIMDOP_LANE(sub, name, SHAPE, nlanes, fn)                              \
	static SIMD_OUTLINE void simdx_##name(uint64_t *fp,                    \
					      const uint32_t *pc)              \
	{                                                                      \
		SIMD_##SHAPE(fn);                                              \
	}
#include "wasm/ops_simd.def"

static uint32_t opcell_of(enum wasm_iop op);

/*
 * The handler table (offsets or op numbers), fetched once per process
 * from inside the interpreter function: label addresses only exist there.
 */
static wasm_exec_status interp(wasm_exec *e, const int32_t **table) INTERP_ATTR;

uint32_t wasm_interp_opcell(enum wasm_iop op)
{
	return opcell_of(op);
}

static uint32_t opcell_of(enum wasm_iop op)
{
#if USE_GOTO
	const int32_t *table = NULL;
	interp(NULL, &table);
	return (uint32_t)table[op];
#else
	return (uint32_t)op;
#endif
}

wasm_exec_status wasm_interp_run(wasm_exec *e)
{
	return interp(e, NULL);
}

/* Slots of the params of f's type (host or wasm). */
static uint32_t param_slots(const wasm_func *f)
{
	if (f->kind == WASM_FUNC_WASM)
		return f->u.wasm.code->nparam_slots;
	return wasm_types_slots(f->type->params, f->type->nparams);
}

/* Effective address check: [ea, ea + n) inside a memory of `size` bytes. */
#define BOUNDS(ea, n, size) (unlikely((ea) + (n) > (size)))
/* [d, d + n) not inside [0, size), for any 64-bit d and n. */
#define OUTSIDE(d, n, size) (unlikely((n) > (size) || (d) > (size) - (n)))
/*
 * A store of n bytes (1 to 16) at ea marks the page of its first byte in
 * the written map (wasm/store.h): a delta reads a marked page and the one
 * after it, into which such a store may cross.  One byte store: marking
 * both ends cost nbody 12% more instructions (callgrind), this about
 * half that.  W is the map (memw for the cached memory 0).
 */
#define MARKW(W, ea, n) ((void)(n), (W)[(ea) >> 16] = 1)

static wasm_exec_status interp(wasm_exec *e, const int32_t **table)
{
#if USE_GOTO
#define OPCELL(x) (int32_t)(&&L_##x - &&L_base)
	static const int32_t handlers[WASM_IOP_COUNT] = {
#define X_(x) [WASM_IOP_##x] = OPCELL(x),
		WASM_IOPS_BASE(X_)
#undef X_
#define NUMOP_UN(op, name, R, A, fn)	  [WASM_IOP_##name] = OPCELL(name),
#define NUMOP_UN_TRAP(op, name, R, A, fn) [WASM_IOP_##name] = OPCELL(name),
#define NUMOP_FC_UN(op, name, R, A, fn)	  [WASM_IOP_##name] = OPCELL(name),
#define NUMOP_BIN(op, name, R, A, fn)                                          \
	[WASM_IOP_##name##_ss] = OPCELL(name##_ss),                            \
	[WASM_IOP_##name##_si] = OPCELL(name##_si),
#define NUMOP_BIN_TRAP(op, name, R, A, fn)                                     \
	[WASM_IOP_##name##_ss] = OPCELL(name##_ss),                            \
	[WASM_IOP_##name##_si] = OPCELL(name##_si),
#include "wasm/ops_numeric.def"
#define X_(name, A)                                                            \
	[WASM_IOP_brif_##name##_ss] = OPCELL(brif_##name##_ss),                \
	[WASM_IOP_brif_##name##_si] = OPCELL(brif_##name##_si),                \
	[WASM_IOP_brifnot_##name##_ss] = OPCELL(brifnot_##name##_ss),          \
	[WASM_IOP_brifnot_##name##_si] = OPCELL(brifnot_##name##_si),
			WASM_CMPOPS(X_)
#undef X_
#define X_(name)                                                               \
	[WASM_IOP_addbr_##name##_si] = OPCELL(addbr_##name##_si),              \
	[WASM_IOP_addbr_##name##_ss] = OPCELL(addbr_##name##_ss),              \
	[WASM_IOP_addbrnot_##name##_si] = OPCELL(addbrnot_##name##_si),        \
	[WASM_IOP_addbrnot_##name##_ss] = OPCELL(addbrnot_##name##_ss),
				WASM_ADDCMPS(X_)
#undef X_
#define SIMDOP(sub, name, SHAPE, fn)	       [WASM_IOP_##name] = OPCELL(name),
#define SIMDOP_LANE(sub, name, SHAPE, n, fn)   [WASM_IOP_##name] = OPCELL(name),
#define SIMDOP_MEM(sub, name, K, a, fn)	       [WASM_IOP_##name] = OPCELL(name),
#define SIMDOP_MEMLANE(sub, name, K, l, n, fn) [WASM_IOP_##name] = OPCELL(name),
#include "wasm/ops_simd.def"
	};
	static const int32_t ret_stub[1] = {OPCELL(ret)};
#define OP(x)  L_##x:
#define NEXT() goto *(const void *)((const char *)&&L_base + (int32_t)pc[0])
#else
	static const int32_t ret_stub[1] = {WASM_IOP_ret};
#define OP(x)  case WASM_IOP_##x:
#define NEXT() goto dispatch
#endif
	const uint32_t *pc;
	uint64_t *fp;
	wasm_instance *inst;
	const struct wasm_compiled *code;
	const struct wasm_compiled *ncode;
	wasm_instance *ninst;
	uint8_t *mem = NULL;
	uint8_t *memw = NULL; /* memory 0's written map */
	uint64_t memsize = 0;
	uint64_t fuel;
	wasm_trap_kind trap;
	wasm_exn *exn;
	wasm_func *callee;
	uint64_t *nfp;
	const uint32_t *retpc;

	if (e == NULL) {
#if USE_GOTO
		*table = handlers;
#endif
		return WASM_EXEC_DONE;
	}
	(void)table;

#define RELOAD_MEM()                                                           \
	do {                                                                   \
		if (code->has_memory) {                                        \
			wasm_memory *m_ = inst->memories[0];                   \
			mem = m_->data;                                        \
			memw = m_->written;                                    \
			memsize = m_->size;                                    \
		}                                                              \
	} while (0)
#define SAVE()                                                                 \
	do {                                                                   \
		e->pc = pc;                                                    \
		e->fp = (size_t)(fp - e->stack);                               \
		e->code = code;                                                \
		e->inst = inst;                                                \
		e->fuel = fuel;                                                \
	} while (0)
#define TRAP(k)                                                                \
	do {                                                                   \
		trap = (k);                                                    \
		goto do_trap;                                                  \
	} while (0)
#define FUEL()                                                                 \
	do {                                                                   \
		if (unlikely(fuel == 0)) {                                     \
			SAVE();                                                \
			e->state = WASM_EXEC_STATE_NO_FUEL;                    \
			return WASM_EXEC_OUT_OF_FUEL;                          \
		}                                                              \
		fuel--;                                                        \
	} while (0)
/*
 * A bulk op's work in fuel: one per BULK_BYTES bytes (table elements
 * count as 8), on top of its own unit; the rate of the host's work for
 * a guest (run/store.h CM_HOST_WORK_BYTES_PER_FUEL), still far below a
 * loop's that moves the bytes one by one.  Charged after the op's bounds
 * check, saturating: the op runs whole and the next fuel check stops
 * the turn, so one fuel unit no longer buys a whole memory's memset
 * (a loop of 4 GiB fills at 1 fuel a round held a service's turn, and
 * the daemon's loop, for hours).
 */
#define BULK_BYTES 16u
#define BULK(nbytes)                                                           \
	do {                                                                   \
		uint64_t w_ = (uint64_t)(nbytes) / BULK_BYTES;                 \
		fuel = fuel > w_ ? fuel - w_ : 0;                              \
	} while (0)
#define BRANCH(offcell)                                                        \
	do {                                                                   \
		int32_t o_ = (int32_t)(offcell);                               \
		if (unlikely(o_ <= 0))                                         \
			FUEL();                                                \
		pc += o_;                                                      \
		NEXT();                                                        \
	} while (0)

	pc = e->pc;
	fp = e->stack + e->fp;
	inst = e->inst;
	code = e->code;
	fuel = e->fuel_unlimited ? UINT64_MAX : e->fuel;
	RELOAD_MEM();

#if USE_GOTO
	NEXT();
#else
dispatch:
	switch ((enum wasm_iop)pc[0])
#endif
	{
#if USE_GOTO
	L_base:
#endif

		/* ---- control ---- */

		OP(unreachable)
		{
			TRAP(WASM_TRAP_UNREACHABLE);
		}
		OP(br)
		{
			BRANCH(pc[1]);
		}
		OP(br_nz)
		{
			if ((uint32_t)S(1) != 0)
				BRANCH(pc[2]);
			pc += 3;
			NEXT();
		}
		OP(br_z)
		{
			if ((uint32_t)S(1) == 0)
				BRANCH(pc[2]);
			pc += 3;
			NEXT();
		}
		OP(br_nz64)
		{
			if (S(1) != 0)
				BRANCH(pc[2]);
			pc += 3;
			NEXT();
		}
		OP(br_z64)
		{
			if (S(1) == 0)
				BRANCH(pc[2]);
			pc += 3;
			NEXT();
		}
		OP(br_table)
		{
			uint32_t i = (uint32_t)S(1), n = pc[2];
			if (i >= n - 1)
				i = n - 1;
			BRANCH(pc[3 + i]);
		}
		OP(ret1)
		{
			fp[0] = S(1);
			goto do_return;
		}
		OP(ret2)
		{
			uint64_t lo = S(1), hi = fp[pc[1] + 1];
			fp[0] = lo;
			fp[1] = hi;
			goto do_return;
		}
		OP(ret)
		{
		do_return:
			if (unlikely(e->nframes == 0))
				goto done;
			{
				struct wasm_frame *fr =
					&e->frames[--e->nframes];
				wasm_instance *prev = inst;
				pc = fr->pc;
				fp = e->stack + fr->fp;
				code = fr->code;
				inst = fr->inst;
				if (inst != prev)
					RELOAD_MEM();
			}
			NEXT();
		}
		OP(copy)
		{
			S(1) = S(2);
			pc += 3;
			NEXT();
		}
		OP(copy2)
		{
			uint64_t lo = S(2), hi = fp[pc[2] + 1];
			S(1) = lo;
			fp[pc[1] + 1] = hi;
			pc += 3;
			NEXT();
		}
		OP(copy_pair)
		{
			S(1) = S(2);
			S(3) = S(4);
			pc += 5;
			NEXT();
		}
		OP(copyn)
		{
			memmove(fp + pc[1], fp + pc[2],
				(size_t)pc[3] * sizeof *fp);
			pc += 4;
			NEXT();
		}
		OP(const32)
		{
			S(1) = pc[2];
			pc += 3;
			NEXT();
		}
		OP(const64)
		{
			S(1) = IMM_I64(pc + 2);
			pc += 4;
			NEXT();
		}
		OP(const128)
		{
			S(1) = IMM_I64(pc + 2);
			fp[pc[1] + 1] = IMM_I64(pc + 4);
			pc += 6;
			NEXT();
		}
		OP(select)
		{
			S(1) = (uint32_t)S(4) ? S(2) : S(3);
			pc += 5;
			NEXT();
		}
		OP(select2)
		{
			uint32_t src = (uint32_t)S(4) ? pc[2] : pc[3];
			uint64_t lo = fp[src], hi = fp[src + 1];
			S(1) = lo;
			fp[pc[1] + 1] = hi;
			pc += 5;
			NEXT();
		}

		/* ---- calls ---- */

		OP(call_local)
		{
			/* a function of this module: its code is in the op */
			FUEL();
			nfp = fp + pc[1];
			memcpy(&ncode, pc + 2, sizeof ncode);
			ninst = inst;
			retpc = pc + 2 + WASM_PTR_CELLS;
			goto do_call_wasm;
		}
		OP(call)
		{
			FUEL();
			callee = inst->funcs[pc[1]];
			nfp = fp + pc[2];
			retpc = pc + 3;
			goto do_call;
		}
		OP(call_ref)
		{
			FUEL();
			callee = (wasm_func *)(uintptr_t)S(2);
			if (unlikely(callee == NULL))
				TRAP(WASM_TRAP_NULL_FUNCTION);
			nfp = fp + pc[1];
			retpc = pc + 3;
			goto do_call;
		}
		OP(call_indirect)
		{
			wasm_table_inst *t = inst->tables[pc[4]];
			uint64_t i = S(2);
			FUEL();
			if (unlikely(i >= t->size))
				TRAP(WASM_TRAP_UNDEFINED_ELEMENT);
			callee = (wasm_func *)t->elems[i];
			if (unlikely(callee == NULL))
				TRAP(WASM_TRAP_UNINITIALIZED_ELEMENT);
			if (unlikely(callee->type_id != inst->type_ids[pc[3]]))
				TRAP(WASM_TRAP_INDIRECT_CALL_TYPE);
			nfp = fp + pc[1];
			retpc = pc + 5;
		do_call:
			if (unlikely(callee->kind == WASM_FUNC_HOST)) {
				wasm_host_status st;
				size_t base = (size_t)(nfp - e->stack);
				SAVE();
				st = wasm_exec_call_host(e, callee, nfp);
				/* the host may have changed the fuel */
				fuel = e->fuel_unlimited ? UINT64_MAX : e->fuel;
				if (st == WASM_HOST_OK) {
					RELOAD_MEM();
					pc = retpc;
					NEXT();
				}
				if (st == WASM_HOST_BLOCK) {
					e->pc = retpc;
					e->blocked = callee;
					e->blocked_base = base;
					e->blocked_entry = false;
					e->state = WASM_EXEC_STATE_BLOCKED;
					return WASM_EXEC_BLOCKED;
				}
				TRAP(WASM_TRAP_HOST);
			}
			ncode = callee->u.wasm.code;
			ninst = callee->u.wasm.inst;
		do_call_wasm:
			if (1) {
				struct wasm_frame *fr;
				uint64_t *z, *ze;
				if (unlikely(e->nframes >= e->frames_cap) &&
				    wasm_exec_grow_frames(e))
					TRAP(WASM_TRAP_STACK_EXHAUSTED);
				if (unlikely(nfp + ncode->frame_slots >
					     e->stack_end)) {
					size_t fo = (size_t)(fp - e->stack);
					size_t no = (size_t)(nfp - e->stack);
					if (wasm_exec_grow_stack(
						    e, no + ncode->frame_slots))
						TRAP(WASM_TRAP_STACK_EXHAUSTED);
					fp = e->stack + fo;
					nfp = e->stack + no;
				}
				fr = &e->frames[e->nframes++];
				fr->pc = retpc;
				fr->fp = (size_t)(fp - e->stack);
				fr->code = code;
				fr->inst = inst;
				z = nfp + ncode->nparam_slots;
				ze = nfp + ncode->nlocal_slots;
				while (z < ze) {
					*z++ = 0;
					OPAQUE(z);
				}
				fp = nfp;
				code = ncode;
				pc = ncode->code;
				if (ninst != inst) {
					inst = ninst;
					RELOAD_MEM();
				}
			}
			NEXT();
		}
		OP(return_call_local)
		{
			FUEL();
			nfp = fp + pc[1];
			memcpy(&ncode, pc + 2, sizeof ncode);
			ninst = inst;
			memmove(fp, nfp,
				(size_t)ncode->nparam_slots * sizeof *fp);
			goto do_tail_call_wasm;
		}
		OP(return_call)
		{
			FUEL();
			callee = inst->funcs[pc[1]];
			nfp = fp + pc[2];
			goto do_tail_call;
		}
		OP(return_call_ref)
		{
			FUEL();
			callee = (wasm_func *)(uintptr_t)S(2);
			if (unlikely(callee == NULL))
				TRAP(WASM_TRAP_NULL_FUNCTION);
			nfp = fp + pc[1];
			goto do_tail_call;
		}
		OP(return_call_indirect)
		{
			wasm_table_inst *t = inst->tables[pc[4]];
			uint64_t i = S(2);
			FUEL();
			if (unlikely(i >= t->size))
				TRAP(WASM_TRAP_UNDEFINED_ELEMENT);
			callee = (wasm_func *)t->elems[i];
			if (unlikely(callee == NULL))
				TRAP(WASM_TRAP_UNINITIALIZED_ELEMENT);
			if (unlikely(callee->type_id != inst->type_ids[pc[3]]))
				TRAP(WASM_TRAP_INDIRECT_CALL_TYPE);
			nfp = fp + pc[1];
		do_tail_call:
			memmove(fp, nfp,
				(size_t)param_slots(callee) * sizeof *fp);
			if (unlikely(callee->kind == WASM_FUNC_HOST)) {
				wasm_host_status st;
				SAVE();
				st = wasm_exec_call_host(e, callee, fp);
				fuel = e->fuel_unlimited ? UINT64_MAX : e->fuel;
				if (st == WASM_HOST_OK)
					goto do_return;
				if (st == WASM_HOST_BLOCK) {
					/* resume writes the results, then
					 * returns */
					e->pc = (const uint32_t *)ret_stub;
					e->blocked = callee;
					e->blocked_base = e->fp;
					e->blocked_entry = false;
					e->state = WASM_EXEC_STATE_BLOCKED;
					return WASM_EXEC_BLOCKED;
				}
				TRAP(WASM_TRAP_HOST);
			}
			ncode = callee->u.wasm.code;
			ninst = callee->u.wasm.inst;
		do_tail_call_wasm:
			if (1) {
				uint64_t *z, *ze;
				if (unlikely(fp + ncode->frame_slots >
					     e->stack_end)) {
					size_t fo = (size_t)(fp - e->stack);
					if (wasm_exec_grow_stack(
						    e, fo + ncode->frame_slots))
						TRAP(WASM_TRAP_STACK_EXHAUSTED);
					fp = e->stack + fo;
				}
				z = fp + ncode->nparam_slots;
				ze = fp + ncode->nlocal_slots;
				while (z < ze) {
					*z++ = 0;
					OPAQUE(z);
				}
				code = ncode;
				pc = ncode->code;
				if (ninst != inst) {
					inst = ninst;
					RELOAD_MEM();
				}
			}
			NEXT();
		}

		/* ---- globals ---- */

		OP(global_get)
		{
			S(1) = inst->globals[pc[2]]->slots[0];
			pc += 3;
			NEXT();
		}
		OP(global_get2)
		{
			wasm_global_inst *g = inst->globals[pc[2]];
			S(1) = g->slots[0];
			fp[pc[1] + 1] = g->slots[1];
			pc += 3;
			NEXT();
		}
		OP(global_set)
		{
			inst->globals[pc[1]]->slots[0] = S(2);
			pc += 3;
			NEXT();
		}
		OP(global_set2)
		{
			wasm_global_inst *g = inst->globals[pc[1]];
			g->slots[0] = S(2);
			g->slots[1] = fp[pc[2] + 1];
			pc += 3;
			NEXT();
		}

		/* ---- memory 0 loads and stores ---- */

/*
 * Each access comes in four forms: address in a slot, address = slot +
 * immediate or slot + slot (a folded i32.add, wrapping in 32 bits as wasm
 * does), and a constant effective address.
 */
#define LOAD_OP(name, T, BOXED)                                                \
	OP(name)                                                               \
	{                                                                      \
		uint64_t ea = (uint64_t)(uint32_t)S(2) + pc[3];                \
		T v;                                                           \
		if (BOUNDS(ea, sizeof v, memsize))                             \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&v, mem + ea, sizeof v);                                \
		S(1) = (BOXED);                                                \
		pc += 4;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(name##_a)                                                           \
	{                                                                      \
		uint64_t ea =                                                  \
			(uint64_t)(uint32_t)((uint32_t)S(2) + pc[3]) + pc[4];  \
		T v;                                                           \
		if (BOUNDS(ea, sizeof v, memsize))                             \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&v, mem + ea, sizeof v);                                \
		S(1) = (BOXED);                                                \
		pc += 5;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(name##_k)                                                           \
	{                                                                      \
		uint64_t ea = IMM_I64(pc + 2);                                 \
		T v;                                                           \
		if (BOUNDS(ea, sizeof v, memsize))                             \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&v, mem + ea, sizeof v);                                \
		S(1) = (BOXED);                                                \
		pc += 4;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(name##_r)                                                           \
	{                                                                      \
		uint64_t ea = (uint64_t)(uint32_t)((uint32_t)S(2) +            \
						   (uint32_t)S(3)) +           \
			      pc[4];                                           \
		T v;                                                           \
		if (BOUNDS(ea, sizeof v, memsize))                             \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&v, mem + ea, sizeof v);                                \
		S(1) = (BOXED);                                                \
		pc += 5;                                                       \
		NEXT();                                                        \
	}
		LOAD_OP(load32, uint32_t, v)
		LOAD_OP(load64, uint64_t, v)
		LOAD_OP(load8s32, int8_t, (uint32_t)(int32_t)v)
		LOAD_OP(load8s64, int8_t, (uint64_t)(int64_t)v)
		LOAD_OP(load8u, uint8_t, v)
		LOAD_OP(load16s32, int16_t, (uint32_t)(int32_t)v)
		LOAD_OP(load16s64, int16_t, (uint64_t)(int64_t)v)
		LOAD_OP(load16u, uint16_t, v)
		LOAD_OP(load32s64, int32_t, (uint64_t)(int64_t)v)
#undef LOAD_OP

#define STORE_OP(name, T)                                                      \
	OP(name)                                                               \
	{                                                                      \
		uint64_t ea = (uint64_t)(uint32_t)S(1) + pc[3];                \
		T v = (T)S(2);                                                 \
		if (BOUNDS(ea, sizeof v, memsize))                             \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(mem + ea, &v, sizeof v);                                \
		MARKW(memw, ea, sizeof v);                                     \
		pc += 4;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(name##_a)                                                           \
	{                                                                      \
		uint64_t ea =                                                  \
			(uint64_t)(uint32_t)((uint32_t)S(1) + pc[2]) + pc[4];  \
		T v = (T)S(3);                                                 \
		if (BOUNDS(ea, sizeof v, memsize))                             \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(mem + ea, &v, sizeof v);                                \
		MARKW(memw, ea, sizeof v);                                     \
		pc += 5;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(name##_k)                                                           \
	{                                                                      \
		uint64_t ea = IMM_I64(pc + 2);                                 \
		T v = (T)S(1);                                                 \
		if (BOUNDS(ea, sizeof v, memsize))                             \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(mem + ea, &v, sizeof v);                                \
		MARKW(memw, ea, sizeof v);                                     \
		pc += 4;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(name##_r)                                                           \
	{                                                                      \
		uint64_t ea = (uint64_t)(uint32_t)((uint32_t)S(1) +            \
						   (uint32_t)S(2)) +           \
			      pc[4];                                           \
		T v = (T)S(3);                                                 \
		if (BOUNDS(ea, sizeof v, memsize))                             \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(mem + ea, &v, sizeof v);                                \
		MARKW(memw, ea, sizeof v);                                     \
		pc += 5;                                                       \
		NEXT();                                                        \
	}
		STORE_OP(store8, uint8_t)
		STORE_OP(store16, uint16_t)
		STORE_OP(store32, uint32_t)
		STORE_OP(store64, uint64_t)
#undef STORE_OP

		OP(load_m)
		{
			/* any memory, 32- or 64-bit addresses */
			wasm_memory *m = inst->memories[pc[5]];
			uint32_t op = pc[6] & ~WASM_MEM_ADDR64;
			uint64_t a = (pc[6] & WASM_MEM_ADDR64) ? S(2)
							       : (uint32_t)S(2);
			uint64_t ea = a + IMM_I64(pc + 3);
			uint64_t r = 0;
			unsigned n;
			switch (op) {
			case WASM_IOP_load64:
				n = 8;
				break;
			case WASM_IOP_load32:
			case WASM_IOP_load32s64:
				n = 4;
				break;
			case WASM_IOP_load16s32:
			case WASM_IOP_load16s64:
			case WASM_IOP_load16u:
				n = 2;
				break;
			default:
				n = 1;
				break;
			}
			if (ea < a || ea > m->size || n > m->size - ea)
				TRAP(WASM_TRAP_MEMORY_OOB);
			memcpy(&r, m->data + ea, n);
			switch (op) {
			case WASM_IOP_load8s32:
				r = (uint32_t)(int32_t)(int8_t)(uint8_t)r;
				break;
			case WASM_IOP_load8s64:
				r = (uint64_t)(int64_t)(int8_t)(uint8_t)r;
				break;
			case WASM_IOP_load16s32:
				r = (uint32_t)(int32_t)(int16_t)(uint16_t)r;
				break;
			case WASM_IOP_load16s64:
				r = (uint64_t)(int64_t)(int16_t)(uint16_t)r;
				break;
			case WASM_IOP_load32s64:
				r = (uint64_t)(int64_t)(int32_t)(uint32_t)r;
				break;
			default:
				break;
			}
			S(1) = r;
			pc += 7;
			NEXT();
		}
		OP(store_m)
		{
			wasm_memory *m = inst->memories[pc[5]];
			uint32_t op = pc[6] & ~WASM_MEM_ADDR64;
			uint64_t a = (pc[6] & WASM_MEM_ADDR64) ? S(1)
							       : (uint32_t)S(1);
			uint64_t ea = a + IMM_I64(pc + 3);
			uint64_t v = S(2);
			unsigned n;
			switch (op) {
			case WASM_IOP_store8:
				n = 1;
				break;
			case WASM_IOP_store16:
				n = 2;
				break;
			case WASM_IOP_store32:
				n = 4;
				break;
			default:
				n = 8;
				break;
			}
			if (ea < a || ea > m->size || n > m->size - ea)
				TRAP(WASM_TRAP_MEMORY_OOB);
			memcpy(m->data + ea, &v, n);
			MARKW(m->written, ea, n);
			pc += 7;
			NEXT();
		}

		/*
		 * ---- bulk memory and tables ----
		 * Operands that may be i64 (memory64, table64) are read as
		 * whole slots: an i32 in a slot is always zero-extended.
		 * Ranges are checked without overflow: [d, d + n) fits in
		 * size iff n <= size && d <= size - n.
		 */

		OP(memory_size)
		{
			S(1) = wasm_memory_pages(inst->memories[pc[2]]);
			pc += 3;
			NEXT();
		}
		OP(memory_grow)
		{
			wasm_memory *m = inst->memories[pc[3]];
			int64_t r = wasm_memory_grow(m, S(2));
			S(1) = pc[4] ? (uint64_t)r : (uint32_t)r;
			RELOAD_MEM();
			pc += 5;
			NEXT();
		}
		OP(memory_fill)
		{
			wasm_memory *m = inst->memories[pc[1]];
			uint64_t d = S(2), n = S(4);
			if (OUTSIDE(d, n, m->size))
				TRAP(WASM_TRAP_MEMORY_OOB);
			BULK(n);
			memset(m->data + d, (int)(uint8_t)S(3), n);
			wasm_memory_mark(m, d, n);
			pc += 5;
			NEXT();
		}
		OP(memory_copy)
		{
			wasm_memory *md = inst->memories[pc[1]];
			wasm_memory *ms = inst->memories[pc[2]];
			uint64_t d = S(3), s = S(4), n = S(5);
			if (OUTSIDE(d, n, md->size) || OUTSIDE(s, n, ms->size))
				TRAP(WASM_TRAP_MEMORY_OOB);
			BULK(n);
			memmove(md->data + d, ms->data + s, n);
			wasm_memory_mark(md, d, n);
			pc += 6;
			NEXT();
		}
		OP(memory_init)
		{
			wasm_memory *m = inst->memories[pc[1]];
			const wasm_data_inst *ds = &inst->datas[pc[2]];
			uint64_t d = S(3), s = S(4), n = S(5);
			if (OUTSIDE(s, n, ds->len) || OUTSIDE(d, n, m->size))
				TRAP(WASM_TRAP_MEMORY_OOB);
			BULK(n);
			if (n)
				memcpy(m->data + d, ds->bytes + s, n);
			wasm_memory_mark(m, d, n);
			pc += 6;
			NEXT();
		}
		OP(data_drop)
		{
			inst->datas[pc[1]].len = 0;
			pc += 2;
			NEXT();
		}
		OP(table_get)
		{
			wasm_table_inst *t = inst->tables[pc[2]];
			uint64_t i = S(3);
			if (i >= t->size)
				TRAP(WASM_TRAP_TABLE_OOB);
			S(1) = (uint64_t)t->elems[i];
			pc += 4;
			NEXT();
		}
		OP(table_set)
		{
			wasm_table_inst *t = inst->tables[pc[1]];
			uint64_t i = S(2);
			if (i >= t->size)
				TRAP(WASM_TRAP_TABLE_OOB);
			t->elems[i] = (wasm_ref)S(3);
			pc += 4;
			NEXT();
		}
		OP(table_size)
		{
			S(1) = inst->tables[pc[2]]->size;
			pc += 3;
			NEXT();
		}
		OP(table_grow)
		{
			wasm_table_inst *t = inst->tables[pc[2]];
			int64_t r = wasm_table_grow(t, S(4), (wasm_ref)S(3));
			if (r >= 0) /* it filled the new elements */
				BULK(S(4) * 8);
			S(1) = pc[5] ? (uint64_t)r : (uint32_t)r;
			pc += 6;
			NEXT();
		}
		OP(table_fill)
		{
			wasm_table_inst *t = inst->tables[pc[1]];
			uint64_t i = S(2), n = S(4);
			wasm_ref v = (wasm_ref)S(3);
			if (OUTSIDE(i, n, t->size))
				TRAP(WASM_TRAP_TABLE_OOB);
			BULK(n * 8);
			for (uint64_t k = 0; k < n; k++)
				t->elems[i + k] = v;
			pc += 5;
			NEXT();
		}
		OP(table_copy)
		{
			wasm_table_inst *td = inst->tables[pc[1]];
			wasm_table_inst *ts = inst->tables[pc[2]];
			uint64_t d = S(3), s = S(4), n = S(5);
			if (OUTSIDE(d, n, td->size) || OUTSIDE(s, n, ts->size))
				TRAP(WASM_TRAP_TABLE_OOB);
			BULK(n * 8);
			memmove(td->elems + d, ts->elems + s,
				n * sizeof *td->elems);
			pc += 6;
			NEXT();
		}
		OP(table_init)
		{
			wasm_table_inst *t = inst->tables[pc[1]];
			const wasm_elem_inst *es = &inst->elems[pc[2]];
			uint64_t d = S(3), s = S(4), n = S(5);
			if (OUTSIDE(s, n, es->len) || OUTSIDE(d, n, t->size))
				TRAP(WASM_TRAP_TABLE_OOB);
			BULK(n * 8);
			if (n)
				memcpy(t->elems + d, es->refs + s,
				       n * sizeof *t->elems);
			pc += 6;
			NEXT();
		}
		OP(elem_drop)
		{
			inst->elems[pc[1]].len = 0;
			pc += 2;
			NEXT();
		}
		OP(ref_is_null)
		{
			S(1) = S(2) == 0;
			pc += 3;
			NEXT();
		}
		OP(ref_as_non_null)
		{
			if (unlikely(S(2) == 0))
				TRAP(WASM_TRAP_NULL_REFERENCE);
			S(1) = S(2);
			pc += 3;
			NEXT();
		}
		OP(ref_func)
		{
			S(1) = (uint64_t)(uintptr_t)inst->funcs[pc[2]];
			pc += 3;
			NEXT();
		}

		/* ---- exceptions ---- */

		/*
		 * A throw takes fuel (compile.c note_throw_park): a catch
		 * to a loop's label branches back with no branch op.
		 */
		OP(throw)
		{
			FUEL();
			wasm_tag *tag = inst->tags[pc[1]];
			uint32_t n = wasm_types_slots(tag->type->params,
						      tag->type->nparams);
			uint64_t work;

			exn = wasm_exn_new(e->store, tag, fp + pc[2], n, &work);
			/* a collection's work is the guest's: the next fuel
			 * check stops a turn that collected much */
			fuel = fuel > work ? fuel - work : 0;
			if (exn == NULL)
				TRAP(WASM_TRAP_OUT_OF_MEMORY);
			goto do_unwind;
		}
		OP(throw_ref)
		{
			FUEL();
			exn = (wasm_exn *)(uintptr_t)S(1);
			if (exn == NULL)
				TRAP(WASM_TRAP_NULL_REFERENCE);
			goto do_unwind;
		}

		/* ---- SIMD extras ---- */

#define MULOP(name, T, expr)                                                   \
	OP(name)                                                               \
	{                                                                      \
		T_##T a = GET_##T(S(2)), b = GET_##T(S(3)), c = GET_##T(S(4)); \
		S(1) = BOX_##T(expr);                                          \
		pc += 5;                                                       \
		NEXT();                                                        \
	}
		MULOP(f32_mul_add, F32, num_f32_add(num_f32_mul(a, b), c))
		MULOP(f32_add_mul, F32, num_f32_add(a, num_f32_mul(b, c)))
		MULOP(f32_mul_sub, F32, num_f32_sub(num_f32_mul(a, b), c))
		MULOP(f32_sub_mul, F32, num_f32_sub(a, num_f32_mul(b, c)))
		MULOP(f64_mul_add, F64, num_f64_add(num_f64_mul(a, b), c))
		MULOP(f64_add_mul, F64, num_f64_add(a, num_f64_mul(b, c)))
		MULOP(f64_mul_sub, F64, num_f64_sub(num_f64_mul(a, b), c))
		MULOP(f64_sub_mul, F64, num_f64_sub(a, num_f64_mul(b, c)))
		MULOP(f32_mul_mul, F32, num_f32_mul(num_f32_mul(a, b), c))
		MULOP(f32_mul_mulr, F32, num_f32_mul(a, num_f32_mul(b, c)))
		MULOP(f64_mul_mul, F64, num_f64_mul(num_f64_mul(a, b), c))
		MULOP(f64_mul_mulr, F64, num_f64_mul(a, num_f64_mul(b, c)))
#undef MULOP
		OP(i32_mul_add)
		{
			S(1) = BOX_I32((uint32_t)S(2) * (uint32_t)S(3) +
				       (uint32_t)S(4));
			pc += 5;
			NEXT();
		}
		OP(i64_mul_add)
		{
			S(1) = S(2) * S(3) + S(4);
			pc += 5;
			NEXT();
		}
#define LDOP(name, T, LT, expr)                                                \
	OP(name)                                                               \
	{                                                                      \
		uint64_t ea =                                                  \
			(uint64_t)(uint32_t)((uint32_t)S(3) + pc[4]) + pc[5];  \
		LT raw;                                                        \
		T_##T a, b;                                                    \
		if (BOUNDS(ea, sizeof raw, memsize))                           \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&raw, mem + ea, sizeof raw);                            \
		a = GET_##T(S(2));                                             \
		b = GET_##T(raw);                                              \
		S(1) = BOX_##T(expr);                                          \
		pc += 6;                                                       \
		NEXT();                                                        \
	}
		LDOP(i32_add_ld, I32, uint32_t, a + b)
		LDOP(i64_add_ld, I64, uint64_t, a + b)
		LDOP(f32_add_ld, F32, uint32_t, num_f32_add(a, b))
		LDOP(f32_sub_ld, F32, uint32_t, num_f32_sub(a, b))
		LDOP(f32_mul_ld, F32, uint32_t, num_f32_mul(a, b))
		LDOP(f64_add_ld, F64, uint64_t, num_f64_add(a, b))
		LDOP(f64_sub_ld, F64, uint64_t, num_f64_sub(a, b))
		LDOP(f64_mul_ld, F64, uint64_t, num_f64_mul(a, b))
#undef LDOP
		OP(f32_sub_is)
		{
			S(1) = BOX_F32(
				num_f32_sub(IMM_F32(pc + 2), GET_F32(S(3))));
			pc += 4;
			NEXT();
		}
		OP(f32_div_is)
		{
			S(1) = BOX_F32(
				num_f32_div(IMM_F32(pc + 2), GET_F32(S(3))));
			pc += 4;
			NEXT();
		}
		OP(f64_sub_is)
		{
			S(1) = BOX_F64(
				num_f64_sub(IMM_F64(pc + 2), GET_F64(S(4))));
			pc += 5;
			NEXT();
		}
		OP(f64_div_is)
		{
			S(1) = BOX_F64(
				num_f64_div(IMM_F64(pc + 2), GET_F64(S(4))));
			pc += 5;
			NEXT();
		}
		/*
		 * The fuel check of a back-edge comes before the write: when
		 * fuel runs out, continuing executes the whole op again.
		 */
		OP(add_br_nz)
		{
			uint32_t v = (uint32_t)S(2) + pc[3];
			if (v != 0) {
				if ((int32_t)pc[4] <= 0)
					FUEL();
				S(1) = v;
				pc += (int32_t)pc[4];
				NEXT();
			}
			S(1) = v;
			pc += 5;
			NEXT();
		}
		OP(add_br_z)
		{
			uint32_t v = (uint32_t)S(2) + pc[3];
			if (v == 0) {
				if ((int32_t)pc[4] <= 0)
					FUEL();
				S(1) = v;
				pc += (int32_t)pc[4];
				NEXT();
			}
			S(1) = v;
			pc += 5;
			NEXT();
		}
		OP(i32_shr_u_and)
		{
			S(1) = BOX_I32(((uint32_t)S(2) >> (pc[3] & 31)) &
				       pc[4]);
			pc += 5;
			NEXT();
		}

		OP(i8x16_shuffle)
		{
			uint8_t lanes[16];
			memcpy(lanes, pc + 4, sizeof lanes);
			PUTV(1, simd_i8x16_shuffle(GETV(2), GETV(3), lanes));
			pc += 8;
			NEXT();
		}

		/* ---- numeric ---- */

#define NUMOP_UN(op, name, R, A, fn)                                           \
	OP(name)                                                               \
	{                                                                      \
		S(1) = BOX_##R(fn(GET_##A(S(2))));                             \
		pc += 3;                                                       \
		NEXT();                                                        \
	}
#define NUMOP_FC_UN(op, name, R, A, fn) NUMOP_UN(op, name, R, A, fn)
#define NUMOP_UN_TRAP(op, name, R, A, fn)                                      \
	OP(name)                                                               \
	{                                                                      \
		T_##R r_;                                                      \
		wasm_trap_kind t_ = fn(GET_##A(S(2)), &r_);                    \
		if (unlikely(t_ != WASM_TRAP_NONE))                            \
			TRAP(t_);                                              \
		S(1) = BOX_##R(r_);                                            \
		pc += 3;                                                       \
		NEXT();                                                        \
	}
#define NUMOP_BIN(op, name, R, A, fn)                                          \
	OP(name##_ss)                                                          \
	{                                                                      \
		S(1) = BOX_##R(fn(GET_##A(S(2)), GET_##A(S(3))));              \
		pc += 4;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(name##_si)                                                          \
	{                                                                      \
		S(1) = BOX_##R(fn(GET_##A(S(2)), IMM_##A(pc + 3)));            \
		pc += 3 + CELLS_##A;                                           \
		NEXT();                                                        \
	}
#define NUMOP_BIN_TRAP(op, name, R, A, fn)                                     \
	OP(name##_ss)                                                          \
	{                                                                      \
		T_##R r_;                                                      \
		wasm_trap_kind t_ = fn(GET_##A(S(2)), GET_##A(S(3)), &r_);     \
		if (unlikely(t_ != WASM_TRAP_NONE))                            \
			TRAP(t_);                                              \
		S(1) = BOX_##R(r_);                                            \
		pc += 4;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(name##_si)                                                          \
	{                                                                      \
		T_##R r_;                                                      \
		wasm_trap_kind t_ = fn(GET_##A(S(2)), IMM_##A(pc + 3), &r_);   \
		if (unlikely(t_ != WASM_TRAP_NONE))                            \
			TRAP(t_);                                              \
		S(1) = BOX_##R(r_);                                            \
		pc += 3 + CELLS_##A;                                           \
		NEXT();                                                        \
	}
#include "wasm/ops_numeric.def"

#define CMP_BRANCHES(name, A)                                                  \
	OP(brif_##name##_ss)                                                   \
	{                                                                      \
		if (num_##name(GET_##A(S(1)), GET_##A(S(2))))                  \
			BRANCH(pc[3]);                                         \
		pc += 4;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(brif_##name##_si)                                                   \
	{                                                                      \
		if (num_##name(GET_##A(S(1)), IMM_##A(pc + 2)))                \
			BRANCH(pc[2 + CELLS_##A]);                             \
		pc += 3 + CELLS_##A;                                           \
		NEXT();                                                        \
	}                                                                      \
	OP(brifnot_##name##_ss)                                                \
	{                                                                      \
		if (!num_##name(GET_##A(S(1)), GET_##A(S(2))))                 \
			BRANCH(pc[3]);                                         \
		pc += 4;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(brifnot_##name##_si)                                                \
	{                                                                      \
		if (!num_##name(GET_##A(S(1)), IMM_##A(pc + 2)))               \
			BRANCH(pc[2 + CELLS_##A]);                             \
		pc += 3 + CELLS_##A;                                           \
		NEXT();                                                        \
	}
		WASM_CMPOPS(CMP_BRANCHES)
#undef CMP_BRANCHES

/*
 * add + compare + branch; as for add_br_nz, fuel comes before the write
 * of a backward branch.  b is never d (compile.c checks).
 */
#define ADDCMP_BRANCH(name, opname, neg, B, len)                               \
	OP(name)                                                               \
	{                                                                      \
		uint32_t v = (uint32_t)S(2) + pc[3];                           \
		if (neg num_i32_##opname(v, B)) {                              \
			if ((int32_t)pc[5] <= 0)                               \
				FUEL();                                        \
			S(1) = v;                                              \
			pc += (int32_t)pc[5];                                  \
			NEXT();                                                \
		}                                                              \
		S(1) = v;                                                      \
		pc += len;                                                     \
		NEXT();                                                        \
	}
#define ADDCMPS(name)                                                          \
	ADDCMP_BRANCH(addbr_##name##_si, name, , pc[4], 6)                     \
	ADDCMP_BRANCH(addbr_##name##_ss, name, , (uint32_t)S(4), 6)            \
	ADDCMP_BRANCH(addbrnot_##name##_si, name, !, pc[4], 6)                 \
	ADDCMP_BRANCH(addbrnot_##name##_ss, name, !, (uint32_t)S(4), 6)
		WASM_ADDCMPS(ADDCMPS)
#undef ADDCMPS
#undef ADDCMP_BRANCH

		/* ---- SIMD ---- */

#define SIMDOP(sub, name, SHAPE, fn)                                           \
	OP(name)                                                               \
	{                                                                      \
		simdx_##name(fp, pc);                                          \
		pc += 2 + SIMD_NIN_##SHAPE;                                    \
		NEXT();                                                        \
	}
#define SIMDOP_LANE(sub, name, SHAPE, nlanes, fn)                              \
	OP(name)                                                               \
	{                                                                      \
		simdx_##name(fp, pc);                                          \
		pc += 3 + SIMD_NIN_##SHAPE;                                    \
		NEXT();                                                        \
	}
/* The memory for memidx cell k: memory 0 from the cache. */
#define SIMD_MEM(k, mbase, msize)                                              \
	uint8_t *mbase = mem;                                                  \
	uint8_t *mbase##_w = memw;                                             \
	uint64_t msize = memsize;                                              \
	(void)mbase##_w;                                                       \
	if (pc[k] != 0) {                                                      \
		wasm_memory *m_ = inst->memories[pc[k]];                       \
		mbase = m_->data;                                              \
		mbase##_w = m_->written;                                       \
		msize = m_->size;                                              \
	}
#define SIMD_LOAD(fn, n)                                                       \
	do {                                                                   \
		SIMD_MEM(4, mb, ms)                                            \
		uint64_t ea = (uint64_t)(uint32_t)S(2) + pc[3];                \
		if (BOUNDS(ea, n, ms))                                         \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		PUTV(1, fn(mb + ea));                                          \
		pc += 5;                                                       \
	} while (0)
#define SIMD_STORE(fn, n)                                                      \
	do {                                                                   \
		SIMD_MEM(4, mb, ms)                                            \
		uint64_t ea = (uint64_t)(uint32_t)S(1) + pc[3];                \
		if (BOUNDS(ea, n, ms))                                         \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		fn(mb + ea, GETV(2));                                          \
		MARKW(mb_w, ea, n);                                            \
		pc += 5;                                                       \
	} while (0)
#define SIMDOP_MEM(sub, name, KIND, align_log2, fn)                            \
	OP(name)                                                               \
	{                                                                      \
		SIMD_##KIND(fn, (1u << (align_log2)));                         \
		NEXT();                                                        \
	}
#define SIMD_LOAD_LANE(fn, n)                                                  \
	do {                                                                   \
		SIMD_MEM(5, mb, ms)                                            \
		uint64_t ea = (uint64_t)(uint32_t)S(2) + pc[4];                \
		if (BOUNDS(ea, n, ms))                                         \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		PUTV(1, fn(mb + ea, GETV(3), pc[6]));                          \
		pc += 7;                                                       \
	} while (0)
#define SIMD_STORE_LANE(fn, n)                                                 \
	do {                                                                   \
		SIMD_MEM(4, mb, ms)                                            \
		uint64_t ea = (uint64_t)(uint32_t)S(1) + pc[3];                \
		if (BOUNDS(ea, n, ms))                                         \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		fn(mb + ea, GETV(2), pc[5]);                                   \
		MARKW(mb_w, ea, n);                                            \
		pc += 6;                                                       \
	} while (0)
#define SIMDOP_MEMLANE(sub, name, KIND, lane_log2, nlanes, fn)                 \
	OP(name)                                                               \
	{                                                                      \
		SIMD_##KIND(fn, (1u << (lane_log2)));                          \
		NEXT();                                                        \
	}
#include "wasm/ops_simd.def"

		/*
		 * ---- memory fusions ----  Last in the loop, so that adding
		 * them left the code layout of the hot older handlers alone.
		 */

/*
 * The constant-address and read-modify-write forms of the _ld ops.  A
 * read-modify-write stores to the address it loaded from, so once the
 * load passed the bounds check the store cannot trap.
 */
#define LDFUSE(name, T, LT, expr)                                              \
	OP(name##_ldk)                                                         \
	{                                                                      \
		uint64_t ea = IMM_I64(pc + 3);                                 \
		LT raw;                                                        \
		T_##T a, b;                                                    \
		if (BOUNDS(ea, sizeof raw, memsize))                           \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&raw, mem + ea, sizeof raw);                            \
		a = GET_##T(S(2));                                             \
		b = GET_##T(raw);                                              \
		S(1) = BOX_##T(expr);                                          \
		pc += 5;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(name##_rmw)                                                         \
	{                                                                      \
		uint64_t ea =                                                  \
			(uint64_t)(uint32_t)((uint32_t)S(2) + pc[3]) + pc[4];  \
		LT raw;                                                        \
		T_##T a, b;                                                    \
		if (BOUNDS(ea, sizeof raw, memsize))                           \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&raw, mem + ea, sizeof raw);                            \
		a = GET_##T(S(1));                                             \
		b = GET_##T(raw);                                              \
		raw = (LT)BOX_##T(expr);                                       \
		memcpy(mem + ea, &raw, sizeof raw);                            \
		MARKW(memw, ea, sizeof raw);                                   \
		pc += 5;                                                       \
		NEXT();                                                        \
	}                                                                      \
	OP(name##_rmwk)                                                        \
	{                                                                      \
		uint64_t ea = IMM_I64(pc + 2);                                 \
		LT raw;                                                        \
		T_##T a, b;                                                    \
		if (BOUNDS(ea, sizeof raw, memsize))                           \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&raw, mem + ea, sizeof raw);                            \
		a = GET_##T(S(1));                                             \
		b = GET_##T(raw);                                              \
		raw = (LT)BOX_##T(expr);                                       \
		memcpy(mem + ea, &raw, sizeof raw);                            \
		MARKW(memw, ea, sizeof raw);                                   \
		pc += 4;                                                       \
		NEXT();                                                        \
	}
		LDFUSE(i32_add, I32, uint32_t, a + b)
		LDFUSE(i64_add, I64, uint64_t, a + b)
		LDFUSE(f32_add, F32, uint32_t, num_f32_add(a, b))
		LDFUSE(f32_sub, F32, uint32_t, num_f32_sub(a, b))
		LDFUSE(f32_mul, F32, uint32_t, num_f32_mul(a, b))
		LDFUSE(f64_add, F64, uint64_t, num_f64_add(a, b))
		LDFUSE(f64_sub, F64, uint64_t, num_f64_sub(a, b))
		LDFUSE(f64_mul, F64, uint64_t, num_f64_mul(a, b))
#undef LDFUSE
/* A float op whose result goes straight to memory 0. */
#define STOP(name, T, LT, expr)                                                \
	OP(name)                                                               \
	{                                                                      \
		uint64_t ea =                                                  \
			(uint64_t)(uint32_t)((uint32_t)S(1) + pc[2]) + pc[3];  \
		T_##T a = GET_##T(S(4)), b = GET_##T(S(5));                    \
		LT raw = (LT)BOX_##T(expr);                                    \
		if (BOUNDS(ea, sizeof raw, memsize))                           \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(mem + ea, &raw, sizeof raw);                            \
		MARKW(memw, ea, sizeof raw);                                   \
		pc += 6;                                                       \
		NEXT();                                                        \
	}
		STOP(f32_add_st, F32, uint32_t, num_f32_add(a, b))
		STOP(f32_sub_st, F32, uint32_t, num_f32_sub(a, b))
		STOP(f32_mul_st, F32, uint32_t, num_f32_mul(a, b))
		STOP(f64_add_st, F64, uint64_t, num_f64_add(a, b))
		STOP(f64_sub_st, F64, uint64_t, num_f64_sub(a, b))
		STOP(f64_mul_st, F64, uint64_t, num_f64_mul(a, b))
#undef STOP
/* load, compute with slots read now, store back: see fuse_store_late() */
#define RMWL(name, T, LT, n, expr)                                             \
	OP(name)                                                               \
	{                                                                      \
		uint64_t ea =                                                  \
			(uint64_t)(uint32_t)((uint32_t)S(1) + pc[2]) + pc[3];  \
		LT raw;                                                        \
		T_##T a;                                                       \
		if (BOUNDS(ea, sizeof raw, memsize))                           \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&raw, mem + ea, sizeof raw);                            \
		a = GET_##T(raw);                                              \
		raw = (LT)BOX_##T(expr);                                       \
		memcpy(mem + ea, &raw, sizeof raw);                            \
		MARKW(memw, ea, sizeof raw);                                   \
		pc += 4 + (n);                                                 \
		NEXT();                                                        \
	}
		RMWL(f32_add_rmwl, F32, uint32_t, 1,
		     num_f32_add(a, GET_F32(S(4))))
		RMWL(f32_sub_rmwl, F32, uint32_t, 1,
		     num_f32_sub(a, GET_F32(S(4))))
		RMWL(f32_mul_rmwl, F32, uint32_t, 1,
		     num_f32_mul(a, GET_F32(S(4))))
		RMWL(f32_add_mul_rmwl, F32, uint32_t, 2,
		     num_f32_add(a, num_f32_mul(GET_F32(S(4)), GET_F32(S(5)))))
		RMWL(f32_sub_mul_rmwl, F32, uint32_t, 2,
		     num_f32_sub(a, num_f32_mul(GET_F32(S(4)), GET_F32(S(5)))))
		RMWL(f64_add_rmwl, F64, uint64_t, 1,
		     num_f64_add(a, GET_F64(S(4))))
		RMWL(f64_sub_rmwl, F64, uint64_t, 1,
		     num_f64_sub(a, GET_F64(S(4))))
		RMWL(f64_mul_rmwl, F64, uint64_t, 1,
		     num_f64_mul(a, GET_F64(S(4))))
		RMWL(f64_add_mul_rmwl, F64, uint64_t, 2,
		     num_f64_add(a, num_f64_mul(GET_F64(S(4)), GET_F64(S(5)))))
		RMWL(f64_sub_mul_rmwl, F64, uint64_t, 2,
		     num_f64_sub(a, num_f64_mul(GET_F64(S(4)), GET_F64(S(5)))))
#undef RMWL
/* read-modify-writes with a product of three: see fuse_store_mm() */
#define RMWMM(name, expr)                                                      \
	OP(name)                                                               \
	{                                                                      \
		uint64_t ea =                                                  \
			(uint64_t)(uint32_t)((uint32_t)S(1) + pc[2]) + pc[3];  \
		uint64_t raw;                                                  \
		double m, p;                                                   \
		if (BOUNDS(ea, sizeof raw, memsize))                           \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&raw, mem + ea, sizeof raw);                            \
		m = GET_F64(raw);                                              \
		p = num_f64_mul(num_f64_mul(GET_F64(S(4)), GET_F64(S(5))),     \
				GET_F64(S(6)));                                \
		raw = BOX_F64(expr);                                           \
		memcpy(mem + ea, &raw, sizeof raw);                            \
		MARKW(memw, ea, sizeof raw);                                   \
		pc += 7;                                                       \
		NEXT();                                                        \
	}
		RMWMM(f64_add_mm_rmw, num_f64_add(p, m))
		RMWMM(f64_sub_mm_rmw, num_f64_sub(p, m))
		RMWMM(f64_add_mm_rmwl, num_f64_add(m, p))
		RMWMM(f64_sub_mm_rmwl, num_f64_sub(m, p))
#undef RMWMM
/* the same, with the address local computed first (`q = p + k; *q += ..`) */
#define RMWMMA(name, expr)                                                     \
	OP(name)                                                               \
	{                                                                      \
		uint32_t d = (uint32_t)S(2) + pc[3];                           \
		uint64_t ea = (uint64_t)d + pc[4];                             \
		uint64_t raw;                                                  \
		double m, p;                                                   \
		S(1) = d;                                                      \
		if (BOUNDS(ea, sizeof raw, memsize))                           \
			TRAP(WASM_TRAP_MEMORY_OOB);                            \
		memcpy(&raw, mem + ea, sizeof raw);                            \
		m = GET_F64(raw);                                              \
		p = num_f64_mul(num_f64_mul(GET_F64(S(5)), GET_F64(S(6))),     \
				GET_F64(S(7)));                                \
		raw = BOX_F64(expr);                                           \
		memcpy(mem + ea, &raw, sizeof raw);                            \
		MARKW(memw, ea, sizeof raw);                                   \
		pc += 8;                                                       \
		NEXT();                                                        \
	}
		RMWMMA(f64_add_mm_rmwa, num_f64_add(p, m))
		RMWMMA(f64_sub_mm_rmwa, num_f64_sub(p, m))
#undef RMWMMA
		OP(f32_mul_sqrt)
		{
			S(1) = BOX_F32(num_f32_mul(
				GET_F32(S(2)), num_f32_sqrt(GET_F32(S(3)))));
			pc += 4;
			NEXT();
		}
		OP(f64_mul_sqrt)
		{
			S(1) = BOX_F64(num_f64_mul(
				GET_F64(S(2)), num_f64_sqrt(GET_F64(S(3)))));
			pc += 4;
			NEXT();
		}

#if !USE_GOTO
	default:
		TRAP(WASM_TRAP_UNREACHABLE);
#endif
	}

	/* ---- leaving the loop ------------------------------------------- */

	/*
	 * Offer exn to the try_tables (and legacy trys) around pc, frame by
	 * frame, the innermost first; a delegate's passes over the next
	 * skip - 1 of them (code.h wasm_handler).
	 */
do_unwind:
	if (1) {
		uint32_t off = (uint32_t)(pc - code->code);
		for (;;) {
			uint32_t pass = 0;

			for (uint32_t h = code->nhandlers; h-- > 0;) {
				const struct wasm_handler *hd =
					&code->handlers[h];
				if (off < hd->start || off >= hd->end)
					continue;
				if (pass > 0) {
					pass--;
					continue;
				}
				if (hd->skip > 0) {
					pass = hd->skip - 1;
					continue;
				}
				for (uint32_t k = 0; k < hd->ncatches; k++) {
					const struct wasm_catch *c =
						&code->catches[hd->first + k];
					uint64_t *d = fp + c->dst;
					bool tagged =
						c->kind <= WASM_CATCH_REF ||
						c->kind == WASM_CATCH_LEGACY;
					if (tagged &&
					    inst->tags[c->tagidx] != exn->tag)
						continue;
					if (c->kind >= WASM_CATCH_LEGACY)
						*d++ = (uint64_t)(uintptr_t)exn;
					if (tagged) {
						memcpy(d, exn->slots,
						       exn->nslots * sizeof *d);
						d += exn->nslots;
					}
					if (c->kind == WASM_CATCH_REF ||
					    c->kind == WASM_CATCH_ALL_REF)
						*d = (uint64_t)(uintptr_t)exn;
					pc = code->code + c->target;
					NEXT();
				}
			}
			if (e->nframes == 0) {
				e->exn = exn;
				e->fuel = fuel;
				e->state = WASM_EXEC_STATE_IDLE;
				return WASM_EXEC_EXCEPTION;
			}
			{
				struct wasm_frame *fr =
					&e->frames[--e->nframes];
				wasm_instance *prev = inst;
				pc = fr->pc;
				fp = e->stack + fr->fp;
				code = fr->code;
				inst = fr->inst;
				if (inst != prev)
					RELOAD_MEM();
				off = (uint32_t)(pc - code->code) - 1;
			}
		}
	}

do_trap:
	e->trap = trap;
	if (trap != WASM_TRAP_HOST)
		e->trap_msg[0] = 0;
	e->nframes = 0;
	e->fuel = fuel;
	e->state = WASM_EXEC_STATE_IDLE;
	return WASM_EXEC_TRAP;

done:
	e->fuel = fuel;
	e->state = WASM_EXEC_STATE_IDLE;
	return WASM_EXEC_DONE;
}
