/*
 * code.h - the engine's internal code form: what compile.c produces from a
 * validated function body and interp.c executes.
 *
 * Contract:
 *  - A function is translated once, at load time, into a flat array of
 *    32-bit cells.  An instruction is one op cell followed by its operand
 *    cells.  The op cell holds the handler's position relative to the
 *    interpreter's first handler when the interpreter uses computed goto,
 *    or the wasm_iop number otherwise; compile.c asks wasm_interp_opcell()
 *    and never needs to know which.
 *  - Every operand that names a value is a SLOT: an index into the frame,
 *    counted from the frame base.  A frame holds the function's locals
 *    (parameters first) in slots [0, nlocal_slots) and the wasm operand
 *    stack above them; every operand stack position has a static slot, so
 *    an instruction reads its inputs and writes its output by slot.  A
 *    local.get is usually not an instruction at all: the consumer reads
 *    the local's slot directly; small constants are immediate cells.
 *    Values use the slot representation of store.h (one 64-bit slot, v128
 *    two); an i32 is always zero-extended, so ops whose index operands
 *    may be i32 or i64 (memory64, table64) read whole slots.  Every
 *    handler reads all its inputs before it writes its output, so an
 *    output slot may equal an input slot.
 *  - Branch targets are cell offsets relative to the branch instruction's
 *    op cell, resolved at compile time.  A branch with a non-positive
 *    offset is a loop back-edge and pays one unit of fuel; an op that
 *    stops for fuel has had no effect yet, so it runs again whole.
 *  - A call passes its arguments in consecutive slots of the caller, at
 *    `base`; the callee's frame starts there (the arguments become its
 *    first locals without a copy) and its results are left at the same
 *    place, where the caller's operand stack expects them.
 *  - The operand layouts of every op are listed next to WASM_IOPS_BASE.
 */
#ifndef HOSTEL_WASM_CODE_H
#define HOSTEL_WASM_CODE_H

#include <stdbool.h>
#include <stdint.h>

#include "wasm/module.h"

/*
 * The ops that are not generated from the numeric and SIMD tables.
 * Operand layouts (d = destination slot, s/a/b/c = input slots, off =
 * relative branch offset, imm = immediate cells):
 *
 *  unreachable                 []
 *  br                          [off]
 *  br_nz / br_z                [c off]          i32 condition
 *  br_nz64 / br_z64            [c off]          i64 condition (eqz fusion)
 *  br_table                    [i n off0 .. off_n-1 off_default]
 *  ret                         []  results are in slots [0, nresults)
 *  ret1 / ret2                 [s]  copy one 1-/2-slot result, return
 *  copy / copy2                [d s]
 *  copyn                       [d s n]          n slots, ascending
 *  copy_pair                   [d1 s1 d2 s2]    two copies, in order
 *  const32                     [d imm]          zero-extended
 *  const64                     [d lo hi]
 *  const128                    [d w0 w1 w2 w3]
 *  select / select2            [d a b c]        d = c ? a : b
 *  call / return_call          [funcidx base]
 *  call_local / return_call_local  [base code]  a function of the same
 *                              module: `code` is its wasm_compiled pointer
 *                              (WASM_PTR_CELLS cells), set after all the
 *                              module's functions are compiled
 *  call_indirect / return_call_indirect  [base i typeidx tableidx]
 *  global_get / global_get2    [d globalidx]
 *  global_set / global_set2    [globalidx s]
 *  load*, memory 0             [d addr offset]
 *  load*_a                     [d x imm offset]  addr = (u32)(x + imm)
 *  load*_k                     [d ea_lo ea_hi]   constant address
 *  load*_r                     [d x y offset]    addr = (u32)(x + y)
 *  store*, memory 0            [addr s offset]
 *  store*_a                    [x imm s offset]
 *  store*_k                    [s ea_lo ea_hi]
 *  store*_r                    [x y s offset]
 *  load_m                      [d addr off_lo off_hi memidx loadop]
 *  store_m                     [addr s off_lo off_hi memidx storeop]
 *                              (any memory; loadop/storeop is the memory-0
 *                              op, | WASM_MEM_ADDR64 for a 64-bit memory)
 *  memory_size                 [d memidx]
 *  memory_grow                 [d delta memidx is64]
 *  memory_fill                 [memidx d val n]
 *  memory_copy                 [dstmem srcmem d s n]
 *  memory_init                 [memidx dataidx d s n]
 *  data_drop                   [dataidx]
 *  table_get                   [d tableidx i]
 *  table_set                   [tableidx i v]
 *  table_size                  [d tableidx]
 *  table_grow                  [d tableidx init n is64]
 *  table_fill                  [tableidx i v n]
 *  table_copy                  [dsttable srctable d s n]
 *  table_init                  [tableidx elemidx d s n]
 *  elem_drop                   [elemidx]
 *  ref_is_null                 [d s]
 *  ref_func                    [d funcidx]
 *  ref_as_non_null             [d s]            d = s, trap if null
 *  call_ref / return_call_ref  [base s]         callee is the funcref in s
 *  throw                       [tagidx base]    payload in [base, ...)
 *  throw_ref                   [s]
 *  i8x16_shuffle               [d a b l0 l1 l2 l3]  16 lane bytes packed
 *  fN_mul_add / fN_mul_sub     [d a b c]        (a * b) + c, (a * b) - c
 *  fN_add_mul / fN_sub_mul     [d a b c]        a + (b * c), a - (b * c)
 *                              (two roundings, exactly like the two ops)
 *  i32_mul_add / i64_mul_add   [d a b c]        a * b + c
 *  i32_shr_u_and               [d a k m]        (a >> (k & 31)) & m
 *  <t>_<op>_ld                 [d a x imm off]  a op load<t>(ea), memory 0,
 *                              ea = (u32)(x + imm) + off
 *  fN_mul_mul / fN_mul_mulr    [d a b c]        (a * b) * c, a * (b * c)
 *  fN_sub_is / fN_div_is       [d imm b]        imm - b, imm / b
 *  add_br_nz / add_br_z        [d a imm off]    d = a + imm (i32), branch
 *                                               if d != 0 / d == 0
 *  <t>_<op>_ldk                [d a ea_lo ea_hi]  a op load<t>(ea), constant
 *                                               effective address
 *  <t>_<op>_rmw                [a x imm off]    store<t>(ea, a op load<t>(ea)),
 *                                               ea = (u32)(x + imm) + off:
 *                                               an _ld op whose result is
 *                                               stored back where it was
 *                                               loaded (`*p += a`)
 *  <t>_<op>_rmwk               [a ea_lo ea_hi]  the same, constant ea
 *  fN_add/sub/mul_st           [x imm off a b]  store(ea, a op b), ea as
 *                                               for _rmw
 *  fN_add/sub/mul_rmwl         [x imm off b]    store(ea, load(ea) op b)
 *  fN_add/sub_mul_rmwl         [x imm off b c]  store(ea, load(ea) op b * c)
 *                              (`*p op= expr` whose load came before expr;
 *                              ea as for _rmw)
 *  fN_mul_sqrt                 [d a b]          a * sqrt(b)
 *  f64_add/sub_mm_rmw          [x imm off a b c]  store(ea, (a * b) * c op
 *                                               load(ea)), ea as for _rmw
 *  f64_add/sub_mm_rmwl         [x imm off a b c]  store(ea, load(ea) op
 *                                               (a * b) * c)
 *  f64_add/sub_mm_rmwa         [d x k off a b c]  d = x + k (i32), then
 *                                               _mm_rmw with ea = d + off
 *
 * Generated families (see WASM_IOP enum below):
 *  numeric unary               [d a]
 *  numeric binary _ss          [d a b]
 *  numeric binary _si          [d a imm]        imm: 1 cell (i32, f32)
 *                                               or 2 (i64, f64, lo first)
 *  brif_<cmp>_ss / brifnot_    [a b off]        compare and branch
 *  brif_<cmp>_si / brifnot_    [a imm off]
 *  addbr_<cmp>_si / addbrnot_  [d a imm k off]  d = a + imm (i32); branch
 *  addbr_<cmp>_ss / addbrnot_  [d a imm b off]  if d <cmp> k (or slot b)
 *  SIMD pure ops               [d inputs...]
 *  SIMD lane ops               [d inputs... lane]
 *  SIMD loads                  [d addr offset memidx]
 *  SIMD stores                 [addr s offset memidx]
 *  SIMD load_lane              [d addr v offset memidx lane]
 *  SIMD store_lane             [addr v offset memidx lane]
 */
/*
 * The ops that fuse with a load (<t>_<op>_ld), in that order; their
 * constant-address and read-modify-write forms follow the same order.
 */
#define WASM_LDFUSE_(X, sfx)                                                   \
	X(i32_add##sfx)                                                        \
	X(i64_add##sfx)                                                        \
	X(f32_add##sfx)                                                        \
	X(f32_sub##sfx)                                                        \
	X(f32_mul##sfx)                                                        \
	X(f64_add##sfx)                                                        \
	X(f64_sub##sfx)                                                        \
	X(f64_mul##sfx)

/* A memory-0 access op and its three folded-address forms, adjacent. */
#define WASM_MEMOP3_(X, n) X(n) X(n##_a) X(n##_k) X(n##_r)

#define WASM_IOPS_BASE(X)                                                      \
	X(unreachable)                                                         \
	X(br)                                                                  \
	X(br_nz)                                                               \
	X(br_z)                                                                \
	X(br_nz64)                                                             \
	X(br_z64)                                                              \
	X(br_table)                                                            \
	X(ret)                                                                 \
	X(ret1)                                                                \
	X(ret2)                                                                \
	X(copy)                                                                \
	X(copy2)                                                               \
	X(copyn)                                                               \
	X(copy_pair)                                                           \
	X(const32)                                                             \
	X(const64)                                                             \
	X(const128)                                                            \
	X(select)                                                              \
	X(select2)                                                             \
	X(call)                                                                \
	X(call_local)                                                          \
	X(call_indirect)                                                       \
	X(return_call)                                                         \
	X(return_call_local)                                                   \
	X(return_call_indirect)                                                \
	X(global_get)                                                          \
	X(global_get2)                                                         \
	X(global_set)                                                          \
	X(global_set2)                                                         \
	WASM_MEMOP3_(X, load32)                                                \
	WASM_MEMOP3_(X, load64)                                                \
	WASM_MEMOP3_(X, load8s32)                                              \
	WASM_MEMOP3_(X, load8s64)                                              \
	WASM_MEMOP3_(X, load8u)                                                \
	WASM_MEMOP3_(X, load16s32)                                             \
	WASM_MEMOP3_(X, load16s64)                                             \
	WASM_MEMOP3_(X, load16u)                                               \
	WASM_MEMOP3_(X, load32s64)                                             \
	WASM_MEMOP3_(X, store8)                                                \
	WASM_MEMOP3_(X, store16)                                               \
	WASM_MEMOP3_(X, store32)                                               \
	WASM_MEMOP3_(X, store64)                                               \
	X(load_m)                                                              \
	X(store_m)                                                             \
	X(memory_size)                                                         \
	X(memory_grow)                                                         \
	X(memory_fill)                                                         \
	X(memory_copy)                                                         \
	X(memory_init)                                                         \
	X(data_drop)                                                           \
	X(table_get)                                                           \
	X(table_set)                                                           \
	X(table_size)                                                          \
	X(table_grow)                                                          \
	X(table_fill)                                                          \
	X(table_copy)                                                          \
	X(table_init)                                                          \
	X(elem_drop)                                                           \
	X(ref_is_null)                                                         \
	X(ref_func)                                                            \
	X(throw)                                                               \
	X(throw_ref)                                                           \
	X(i8x16_shuffle)                                                       \
	X(f32_mul_add)                                                         \
	X(f32_add_mul)                                                         \
	X(f32_mul_sub)                                                         \
	X(f32_sub_mul)                                                         \
	X(f64_mul_add)                                                         \
	X(f64_add_mul)                                                         \
	X(f64_mul_sub)                                                         \
	X(f64_sub_mul)                                                         \
	X(i32_mul_add)                                                         \
	X(i64_mul_add)                                                         \
	X(i32_shr_u_and)                                                       \
	X(i32_add_ld)                                                          \
	X(i64_add_ld)                                                          \
	X(f32_add_ld)                                                          \
	X(f32_sub_ld)                                                          \
	X(f32_mul_ld)                                                          \
	X(f64_add_ld)                                                          \
	X(f64_sub_ld)                                                          \
	X(f64_mul_ld)                                                          \
	X(f32_mul_mul)                                                         \
	X(f32_mul_mulr)                                                        \
	X(f64_mul_mul)                                                         \
	X(f64_mul_mulr)                                                        \
	X(f32_sub_is)                                                          \
	X(f32_div_is)                                                          \
	X(f64_sub_is)                                                          \
	X(f64_div_is)                                                          \
	X(add_br_nz)                                                           \
	X(add_br_z)                                                            \
	WASM_LDFUSE_(X, _ldk)                                                  \
	WASM_LDFUSE_(X, _rmw)                                                  \
	WASM_LDFUSE_(X, _rmwk)                                                 \
	X(f32_add_st)                                                          \
	X(f32_sub_st)                                                          \
	X(f32_mul_st)                                                          \
	X(f64_add_st)                                                          \
	X(f64_sub_st)                                                          \
	X(f64_mul_st)                                                          \
	X(f32_add_rmwl)                                                        \
	X(f32_sub_rmwl)                                                        \
	X(f32_mul_rmwl)                                                        \
	X(f32_add_mul_rmwl)                                                    \
	X(f32_sub_mul_rmwl)                                                    \
	X(f64_add_rmwl)                                                        \
	X(f64_sub_rmwl)                                                        \
	X(f64_mul_rmwl)                                                        \
	X(f64_add_mul_rmwl)                                                    \
	X(f64_sub_mul_rmwl)                                                    \
	X(f32_mul_sqrt)                                                        \
	X(f64_mul_sqrt)                                                        \
	X(f64_add_mm_rmw)                                                      \
	X(f64_sub_mm_rmw)                                                      \
	X(f64_add_mm_rmwl)                                                     \
	X(f64_sub_mm_rmwl)                                                     \
	X(f64_add_mm_rmwa)                                                     \
	X(f64_sub_mm_rmwa)                                                      \
	X(ref_as_non_null)                                                     \
	X(call_ref)                                                            \
	X(return_call_ref)

/*
 * The comparisons that fuse with a following br_if / if: name and operand
 * type (as in ops_numeric.def).
 */
#define WASM_CMPOPS(X)                                                         \
	X(i32_eq, I32)                                                         \
	X(i32_ne, I32)                                                         \
	X(i32_lt_s, I32)                                                       \
	X(i32_lt_u, I32)                                                       \
	X(i32_gt_s, I32)                                                       \
	X(i32_gt_u, I32)                                                       \
	X(i32_le_s, I32)                                                       \
	X(i32_le_u, I32)                                                       \
	X(i32_ge_s, I32)                                                       \
	X(i32_ge_u, I32)                                                       \
	X(i64_eq, I64)                                                         \
	X(i64_ne, I64)                                                         \
	X(i64_lt_s, I64)                                                       \
	X(i64_lt_u, I64)                                                       \
	X(i64_gt_s, I64)                                                       \
	X(i64_gt_u, I64)                                                       \
	X(i64_le_s, I64)                                                       \
	X(i64_le_u, I64)                                                       \
	X(i64_ge_s, I64)                                                       \
	X(i64_ge_u, I64)                                                       \
	X(f32_eq, F32)                                                         \
	X(f32_ne, F32)                                                         \
	X(f32_lt, F32)                                                         \
	X(f32_gt, F32)                                                         \
	X(f32_le, F32)                                                         \
	X(f32_ge, F32)                                                         \
	X(f64_eq, F64)                                                         \
	X(f64_ne, F64)                                                         \
	X(f64_lt, F64)                                                         \
	X(f64_gt, F64)                                                         \
	X(f64_le, F64)                                                         \
	X(f64_ge, F64)

/*
 * i32 comparisons that also fuse with an i32.add just before them (a
 * counted loop's `i += k; if (i != n)`).
 */
#define WASM_ADDCMPS(X)                                                        \
	X(eq)                                                                  \
	X(ne)                                                                  \
	X(lt_s)                                                                \
	X(lt_u)                                                                \
	X(gt_s)                                                                \
	X(gt_u)

/*
 * Every internal op.  A binary numeric op `x` has x_ss and, right after
 * it, x_si; a fusable comparison `x` has brif_x_ss, brif_x_si,
 * brifnot_x_ss, brifnot_x_si in that order; an add-fusable comparison x
 * has addbr_x_si, addbr_x_ss, addbrnot_x_si, addbrnot_x_ss.  compile.c
 * relies on these orders.
 */
enum wasm_iop {
#define WASM_IOP_X_(name) WASM_IOP_##name,
	WASM_IOPS_BASE(WASM_IOP_X_)
#undef WASM_IOP_X_
#define NUMOP_UN(op, name, R, A, fn) WASM_IOP_##name,
#define NUMOP_BIN(op, name, R, A, fn)                                          \
	WASM_IOP_##name##_ss, WASM_IOP_##name##_si,
#define NUMOP_UN_TRAP(op, name, R, A, fn) WASM_IOP_##name,
#define NUMOP_BIN_TRAP(op, name, R, A, fn)                                     \
	WASM_IOP_##name##_ss, WASM_IOP_##name##_si,
#define NUMOP_FC_UN(op, name, R, A, fn) WASM_IOP_##name,
#include "wasm/ops_numeric.def"
#define WASM_IOP_X_(name, A)                                                   \
	WASM_IOP_brif_##name##_ss, WASM_IOP_brif_##name##_si,                  \
		WASM_IOP_brifnot_##name##_ss, WASM_IOP_brifnot_##name##_si,
		WASM_CMPOPS(WASM_IOP_X_)
#undef WASM_IOP_X_
#define WASM_IOP_X_(name)                                                      \
	WASM_IOP_addbr_##name##_si, WASM_IOP_addbr_##name##_ss,                \
		WASM_IOP_addbrnot_##name##_si, WASM_IOP_addbrnot_##name##_ss,
			WASM_ADDCMPS(WASM_IOP_X_)
#undef WASM_IOP_X_
#define SIMDOP(sub, name, SHAPE, fn)			       WASM_IOP_##name,
#define SIMDOP_LANE(sub, name, SHAPE, nlanes, fn)	       WASM_IOP_##name,
#define SIMDOP_MEM(sub, name, KIND, align, fn)		       WASM_IOP_##name,
#define SIMDOP_MEMLANE(sub, name, KIND, lane_log2, nlanes, fn) WASM_IOP_##name,
#include "wasm/ops_simd.def"
				WASM_IOP_COUNT
};

/* In load_m/store_m: the address is an i64 (memory64). */
#define WASM_MEM_ADDR64 0x80000000u

/* Cells a pointer takes in the code. */
#define WASM_PTR_CELLS (sizeof(void *) / sizeof(uint32_t))

/*
 * Catch clause kinds: 0..3 as encoded in try_table; the legacy ones are
 * a legacy try's `catch x` and `catch_all` clauses, which find the
 * exception (for `rethrow`) at dst and the payload after it.
 */
enum wasm_catch_kind {
	WASM_CATCH = 0,
	WASM_CATCH_REF = 1,
	WASM_CATCH_ALL = 2,
	WASM_CATCH_ALL_REF = 3,
	WASM_CATCH_LEGACY = 4,
	WASM_CATCH_ALL_LEGACY = 5,
};

/* One catch clause of a try_table, resolved to a code position. */
struct wasm_catch {
	uint8_t kind;	 /* enum wasm_catch_kind */
	uint32_t tagidx; /* catch, catch_ref */
	uint32_t target; /* cell index where execution continues */
	uint32_t dst;	 /* first slot of the label's values */
};

/*
 * A try_table, or a legacy try's body: while the code at cells [start,
 * end) runs (in this frame), an exception is offered to catches[first ..
 * first + ncatches).  Inner ones come after the ones that enclose them,
 * so the handlers whose range holds a position, from the last, are its
 * enclosing ones from the innermost out.  A legacy `try ... delegate l`
 * has no catches and skip > 0: an exception in its range passes over
 * the next skip - 1 enclosing handlers (those between it and label l).
 */
struct wasm_handler {
	uint32_t start, end;
	uint32_t first, ncatches;
	uint32_t skip;
};

/* A slot of a frame that holds a reference of type `type`. */
struct wasm_refslot {
	uint32_t slot;
	wasm_valtype type;
};

struct wasm_compiled {
	uint32_t *code;
	uint32_t ncode;
	uint32_t funcidx;
	const wasm_functype *type;
	uint32_t nparam_slots;
	uint32_t nresult_slots;
	uint32_t nlocal_slots; /* parameters and declared locals */
	uint32_t frame_slots;  /* the most slots the frame ever uses */
	bool has_memory;       /* the module has a memory 0 */
	uint32_t nhandlers;
	struct wasm_handler *handlers;
	struct wasm_catch *catches;
	/*
	 * Until wasm_compile_link(): the cells of every call_local operand,
	 * which hold the callee's defined-function index meanwhile.
	 */
	uint32_t *links;
	uint32_t nlinks;
	/*
	 * Where a suspended frame can stand (store snapshots,
	 * runtime/wasm/snapshot_exec.c): for each non-tail call, in code
	 * order, WASM_RESUME_CELLS cells: the op cell's offset, the offset
	 * its callee returns to, the call's base slot and the module's
	 * index of the callee's type (a direct call's function type, a
	 * call_indirect's or call_ref's immediate).  A snapshot's program
	 * counter is accepted only at one of them, so a forged one never
	 * makes the interpreter run operand cells, and the frame above it
	 * (or the host call it waits in) only of that type, so a forged
	 * callee never hands its caller results of other types.
	 */
	uint32_t *resumes;
	uint32_t nresumes; /* cells: WASM_RESUME_CELLS per call */
	/*
	 * Where a fuel check may stop the function (interp.c FUEL, before
	 * the op runs: continuing runs the whole op): the op cells of its
	 * backward branches, non-tail calls and throws (throw, throw_ref,
	 * rethrow: a try_table catching to a loop's label closes a loop
	 * with no branch), ascending.  A snapshot of a
	 * thread stopped out of fuel is accepted only at one of them.  A
	 * tail call's fuel check is not among them (such a stop is refused).
	 */
	uint32_t *parks;
	uint32_t nparks;
	/*
	 * A local or an operand of a reference type: the frame's slots may
	 * hold host addresses, which a snapshot writes as references: the
	 * ones listed for the point the frame stands at, below.
	 */
	bool holds_refs;
	/*
	 * Only when holds_refs (else NULL): which slots hold a reference
	 * (in the module's types) where a frame can stand, ascending by
	 * slot.  After resume k (the k-th call): refslots[resume_refs[2k]
	 * .. resume_refs[2k + 1]), the locals and operands below the call's
	 * base.  At parks[k]: refslots[park_refs[2k] .. park_refs[2k + 1]),
	 * everything the frame holds there, what the op at the park reads
	 * included; WASM_NO_REFMAP when the compiler recorded none (a stop
	 * there is refused).  A slot not listed holds a number or nothing
	 * live, so a snapshot writes it as one; a restored frame gets a
	 * checked reference in every listed slot and numbers elsewhere,
	 * which typed code never reads as references.
	 */
	struct wasm_refslot *refslots;
	uint32_t *resume_refs;
	uint32_t *park_refs;
};

#define WASM_NO_REFMAP UINT32_MAX
/* cells of a resume point (wasm_compiled.resumes) */
#define WASM_RESUME_CELLS 4u

/*
 * Validate and translate defined function `i` of `m` (0-based among the
 * defined functions).  `refs` marks the functions a ref.func may name
 * (C.refs, one flag per function index).  Returns 0 and *out, or -1 with
 * *err (MALFORMED for encoding errors inside the body, INVALID for type
 * errors, RESOURCE when out of memory).
 */
int wasm_compile_func(const wasm_module *m, uint32_t i, const bool *refs,
		      struct wasm_compiled **out, wasm_error *err);

void wasm_compiled_free(struct wasm_compiled *c);

/*
 * Once every defined function of a module is compiled (compiled[i] for
 * i < n): resolve the direct calls between them to code pointers.
 */
void wasm_compile_link(struct wasm_compiled **compiled, uint32_t n);

/* The op cell the interpreter wants for `op` (see the contract above). */
uint32_t wasm_interp_opcell(enum wasm_iop op);

#endif
