/*
 * trap.c - the spec's message text for each trap kind.
 *
 * Contract: the strings are exactly those the core test suite's
 * assert_trap / assert_exhaustion expect, so drivers compare them as is.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none (fixed
 * strings).
 */
#include "wasm/wasm.h"

const char *wasm_trap_message(wasm_trap_kind kind)
{
	switch (kind) {
	case WASM_TRAP_NONE:
		return "no trap";
	case WASM_TRAP_UNREACHABLE:
		return "unreachable";
	case WASM_TRAP_MEMORY_OOB:
		return "out of bounds memory access";
	case WASM_TRAP_TABLE_OOB:
		return "out of bounds table access";
	case WASM_TRAP_UNDEFINED_ELEMENT:
		return "undefined element";
	case WASM_TRAP_UNINITIALIZED_ELEMENT:
		return "uninitialized element";
	case WASM_TRAP_INDIRECT_CALL_TYPE:
		return "indirect call type mismatch";
	case WASM_TRAP_INT_DIV_ZERO:
		return "integer divide by zero";
	case WASM_TRAP_INT_OVERFLOW:
		return "integer overflow";
	case WASM_TRAP_INVALID_CONVERSION:
		return "invalid conversion to integer";
	case WASM_TRAP_NULL_REFERENCE:
		return "null reference";
	case WASM_TRAP_NULL_FUNCTION:
		return "null function reference";
	case WASM_TRAP_STACK_EXHAUSTED:
		return "call stack exhausted";
	case WASM_TRAP_OUT_OF_FUEL:
		return "out of fuel";
	case WASM_TRAP_UNCAUGHT_EXCEPTION:
		return "thrown Wasm exception";
	case WASM_TRAP_OUT_OF_MEMORY:
		return "out of memory";
	case WASM_TRAP_HOST:
		return "host trap";
	}
	return "unknown trap";
}
