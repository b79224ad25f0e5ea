/*
 * ops.h - the names of WebAssembly's opcodes, generated from the three
 * instruction tables (ops.def, ops_numeric.def, ops_simd.def), so that no
 * file of the engine spells an opcode as a number.
 *
 * Contract:
 *  - enum wasm_op: every one-byte opcode, WASM_OP_name = its byte
 *    (WASM_OP_local_get = 0x20, WASM_OP_i32_add = 0x6a), the prefix bytes
 *    included (WASM_OP_prefix_misc = 0xfc).
 *  - enum wasm_op_fc, wasm_op_fd, wasm_op_fb: the subopcodes after the
 *    0xfc, 0xfd and 0xfb prefixes (WASM_OP_FC_memory_copy = 10,
 *    WASM_OP_FD_v128_const = 12).
 *  - enum wasm_imm: the kinds of immediates, the IMM column of ops.def;
 *    WASM_IMM_ILLEGAL (0) is what a table of kinds holds for a byte that
 *    is no instruction.
 * Names are the tables' (the spec's, '.' replaced by '_'), lower case
 * like the internal ops of code.h (WASM_IOP_i32_add_ss), so that the
 * numeric ones come out of ops_numeric.def as they are.  Nothing here
 * is used at run time: the interpreter dispatches on code.h's ops.
 */
#ifndef HOSTEL_WASM_OPS_H
#define HOSTEL_WASM_OPS_H

enum wasm_op {
#define INSTR(op, name, IMM)		     WASM_OP_##name = op,
#define INSTR_LOAD(op, name, T, align, iop)  WASM_OP_##name = op,
#define INSTR_STORE(op, name, T, align, iop) WASM_OP_##name = op,
#define INSTR_PREFIX(op, name, IMM)	     WASM_OP_##name = op,
#define INSTR_UNSUP(op, name, IMM)	     WASM_OP_##name = op,
#include "wasm/ops.def"
#define NUMOP_UN(op, name, R, A, fn)	   WASM_OP_##name = op,
#define NUMOP_BIN(op, name, R, A, fn)	   WASM_OP_##name = op,
#define NUMOP_UN_TRAP(op, name, R, A, fn)  WASM_OP_##name = op,
#define NUMOP_BIN_TRAP(op, name, R, A, fn) WASM_OP_##name = op,
#include "wasm/ops_numeric.def"
};

/* Subopcodes after 0xfc: saturating truncations, bulk memory, tables. */
enum wasm_op_fc {
#define NUMOP_FC_UN(sub, name, R, A, fn) WASM_OP_FC_##name = sub,
#include "wasm/ops_numeric.def"
#define INSTR_FC(sub, name, IMM) WASM_OP_FC_##name = sub,
#include "wasm/ops.def"
};

/* Subopcodes after 0xfd: SIMD and relaxed SIMD. */
enum wasm_op_fd {
#define SIMDOP(sub, name, SHAPE, fn)		     WASM_OP_FD_##name = sub,
#define SIMDOP_LANE(sub, name, SHAPE, nlanes, fn)    WASM_OP_FD_##name = sub,
#define SIMDOP_MEM(sub, name, KIND, align, fn)	     WASM_OP_FD_##name = sub,
#define SIMDOP_MEMLANE(sub, name, KIND, lane, n, fn) WASM_OP_FD_##name = sub,
#define SIMDOP_SPECIAL(sub, name)		     WASM_OP_FD_##name = sub,
#include "wasm/ops_simd.def"
};

/* Subopcodes after 0xfb: GC, decoded only. */
enum wasm_op_fb {
#define INSTR_FB(sub, name, IMM) WASM_OP_FB_##name = sub,
#include "wasm/ops.def"
};

/* The immediates of an instruction, by kind (ops.def's IMM column). */
enum wasm_imm {
	WASM_IMM_ILLEGAL = 0, /* no such opcode */
	WASM_IMM_NONE,
	WASM_IMM_U32,
	WASM_IMM_U32_U32,
	WASM_IMM_BLOCK,	    /* block type; opens a block */
	WASM_IMM_TRY_TABLE, /* block type and catch clauses; opens a block */
	WASM_IMM_DELEGATE,  /* label; closes a legacy try block */
	WASM_IMM_BR_TABLE,
	WASM_IMM_SELECT_T,
	WASM_IMM_MEMARG,
	WASM_IMM_I32,
	WASM_IMM_I64,
	WASM_IMM_F32,
	WASM_IMM_F64,
	WASM_IMM_HEAPTYPE,
	WASM_IMM_BR_ON_CAST, /* flags, label, two heap types */
	WASM_IMM_PREFIX_FB,  /* gc */
	WASM_IMM_PREFIX_FC, /* misc: saturating truncation, bulk memory/table */
	WASM_IMM_PREFIX_FD, /* simd */
};

#endif
