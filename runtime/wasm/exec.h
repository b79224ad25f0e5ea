/*
 * exec.h - the inside of an execution context (wasm_exec), shared by
 * exec.c (the public wasm_exec_* API, stack growth, host calls) and
 * interp.c (the dispatch loop).
 *
 * Contract:
 *  - Every wasm frame lives in two heap arrays owned by the exec: the
 *    value stack (64-bit slots; a frame's locals and operands, see code.h)
 *    and the frame stack (return position, caller frame base and caller
 *    function).  Neither holds C pointers into the value stack, so both
 *    can be reallocated while a call is in progress.
 *  - While the exec is not running, (pc, fp, code, inst) say where the
 *    guest continues; a suspended exec is plain data.
 *  - The value stack and the frame stack together never exceed
 *    max_bytes, and the frame stack never holds more than max_depth
 *    frames; passing either traps with "call stack exhausted".
 */
#ifndef HOSTEL_WASM_EXEC_H
#define HOSTEL_WASM_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wasm/code.h"
#include "wasm/store.h"

struct wasm_frame {
	const uint32_t *pc;		  /* where the caller continues */
	size_t fp;			  /* its frame base, in slots */
	const struct wasm_compiled *code; /* the caller's code */
	wasm_instance *inst;		  /* and instance */
};

enum wasm_exec_state {
	WASM_EXEC_STATE_IDLE = 0, /* no call outstanding */
	WASM_EXEC_STATE_RUNNING,  /* inside wasm_exec_call & co. */
	WASM_EXEC_STATE_BLOCKED,  /* a host function answered BLOCK */
	WASM_EXEC_STATE_NO_FUEL,  /* stopped at a fuel check */
};

struct wasm_exec {
	wasm_store *store;

	uint64_t *stack;
	size_t stack_cap;    /* in slots */
	uint64_t *stack_end; /* stack + stack_cap */
	struct wasm_frame *frames;
	uint32_t nframes, frames_cap;
	uint32_t max_depth;
	size_t max_bytes;

	enum wasm_exec_state state;
	uint64_t fuel;
	bool fuel_unlimited;

	/* where the guest continues when not running */
	const uint32_t *pc;
	size_t fp;
	const struct wasm_compiled *code;
	wasm_instance *inst;

	/* the outstanding call */
	wasm_func *entry;
	uint32_t nresults; /* results of the last DONE call, at stack[0] */
	const wasm_functype *result_type;

	/* a host function that answered BLOCK, and where its results go */
	wasm_func *blocked;
	size_t blocked_base;
	bool blocked_entry; /* it was the entry function itself */

	wasm_trap_kind trap;
	char trap_msg[WASM_ERROR_MSG_MAX];
	wasm_exn *exn;

	/* argument and result buffer for host calls */
	wasm_val *hostbuf;
	uint32_t hostbuf_cap;

	/* The store's list of execs (exceptions' roots); `linked` until
	 * the exec or the store goes, whichever goes first. */
	struct wasm_exec *store_prev, *store_next;
	bool linked;
};

/*
 * Unlinks every exec of the store from it: called by wasm_store_free, so
 * an exec freed after its store does not touch the freed store.
 */
void wasm_store_forget_execs(wasm_store *s);

/* Runs the guest from (pc, fp, code, inst) until it ends or stops. */
wasm_exec_status wasm_interp_run(wasm_exec *e);

/*
 * Make room for `need` slots in the value stack.  Returns 0, or -1 when
 * that would pass the limits (then the stack is unchanged).
 */
int wasm_exec_grow_stack(wasm_exec *e, size_t need);
/* Make room for one more frame; -1 when the depth or byte limit is hit. */
int wasm_exec_grow_frames(wasm_exec *e);

/*
 * Call host function f with arguments in slots[...] (slot representation)
 * and, unless it blocks or traps, write its results to slots[...].
 */
wasm_host_status wasm_exec_call_host(wasm_exec *e, wasm_func *f,
				     uint64_t *slots);

/* Number of slots the values of `types` take. */
static inline uint32_t wasm_types_slots(const wasm_valtype *types, uint32_t n)
{
	uint32_t s = 0;

	for (uint32_t i = 0; i < n; i++)
		s += wasm_valtype_slots(types[i]);
	return s;
}

#endif
