/*
 * exec.c - execution contexts: the public wasm_exec_* API of wasm.h, the
 * growth of the heap stacks, and calls into host functions.
 *
 * Contract (beyond wasm.h):
 *  - An exec starts with a small value stack and frame stack and grows
 *    them on demand (doubling) up to its limits, so thousands of
 *    suspended execs cost little memory.  Growth may move the value
 *    stack; nothing outside this file and interp.c keeps pointers into
 *    it.
 *  - A call's arguments go to slots [0, nparams) of the value stack; the
 *    outermost frame starts at slot 0, so a finished call leaves its
 *    results in slots [0, nresults).
 *  - Host functions see arguments and results as wasm_val arrays that
 *    are valid only during the call.
 *  - Misuse (a second call while one is outstanding, resume when not
 *    blocked, wrong argument count or type) answers WASM_EXEC_TRAP with
 *    kind WASM_TRAP_HOST and a message, and leaves an outstanding
 *    suspended call untouched.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - wasm_exec_grow_stack, wasm_exec_grow_frames: the value stack and
 *    frames of one exec together stay under max_stack_bytes (the
 *    store's, 1 MiB by default for components), frames under
 *    max_call_depth; past them the guest traps (call stack exhausted).
 *  - ensure_hostbuf: a host call's params and results, as many as its
 *    type has (bounded by the module's length).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wasm/exec.h"

#define DEFAULT_MAX_BYTES (1u << 20)
#define DEFAULT_MAX_DEPTH 100000u
#define INITIAL_SLOTS	  128u
#define INITIAL_FRAMES	  8u

static size_t stack_bytes(size_t slots, size_t frames)
{
	return slots * sizeof(uint64_t) + frames * sizeof(struct wasm_frame);
}

wasm_exec *wasm_exec_new(wasm_store *s, const wasm_exec_config *cfg)
{
	wasm_exec *e = calloc(1, sizeof *e);

	if (e == NULL)
		return NULL;
	e->store = s;
	e->max_bytes = cfg && cfg->max_stack_bytes ? cfg->max_stack_bytes
						   : DEFAULT_MAX_BYTES;
	e->max_depth = cfg && cfg->max_call_depth ? cfg->max_call_depth
						  : DEFAULT_MAX_DEPTH;
	e->stack_cap = INITIAL_SLOTS;
	e->frames_cap = INITIAL_FRAMES;
	if (stack_bytes(e->stack_cap, e->frames_cap) > e->max_bytes) {
		e->stack_cap = 16;
		e->frames_cap = 1;
	}
	e->stack = calloc(e->stack_cap, sizeof *e->stack);
	e->frames = malloc(e->frames_cap * sizeof *e->frames);
	if (e->stack == NULL || e->frames == NULL) {
		wasm_exec_free(e);
		return NULL;
	}
	e->stack_end = e->stack + e->stack_cap;
	e->fuel = UINT64_MAX;
	e->fuel_unlimited = true;
	e->store_next = s->execs;
	if (s->execs)
		s->execs->store_prev = e;
	s->execs = e;
	e->linked = true;
	return e;
}

static void unlink_exec(wasm_exec *e)
{
	if (!e->linked)
		return;
	if (e->store_prev)
		e->store_prev->store_next = e->store_next;
	else
		e->store->execs = e->store_next;
	if (e->store_next)
		e->store_next->store_prev = e->store_prev;
	e->store_prev = e->store_next = NULL;
	e->linked = false;
}

void wasm_store_forget_execs(wasm_store *s)
{
	while (s->execs)
		unlink_exec(s->execs);
}

void wasm_exec_free(wasm_exec *e)
{
	if (e == NULL)
		return;
	unlink_exec(e);
	free(e->stack);
	free(e->frames);
	free(e->hostbuf);
	free(e);
}

wasm_store *wasm_exec_store(const wasm_exec *e)
{
	return e->store;
}

int wasm_exec_grow_stack(wasm_exec *e, size_t need)
{
	size_t n = e->stack_cap ? e->stack_cap : INITIAL_SLOTS;
	size_t limit;
	uint64_t *p;

	if (need <= e->stack_cap)
		return 0;
	if (stack_bytes(need, e->frames_cap) > e->max_bytes)
		return -1;
	limit = (e->max_bytes - stack_bytes(0, e->frames_cap)) /
		sizeof(uint64_t);
	while (n < need)
		n *= 2;
	if (n > limit)
		n = limit;
	p = realloc(e->stack, n * sizeof *p);
	if (p == NULL)
		return -1;
	/* Exception collection scans whole stacks (exn.c). */
	memset(p + e->stack_cap, 0, (n - e->stack_cap) * sizeof *p);
	e->stack = p;
	e->stack_cap = n;
	e->stack_end = p + n;
	return 0;
}

int wasm_exec_grow_frames(wasm_exec *e)
{
	size_t n, limit;
	struct wasm_frame *p;

	if (e->nframes < e->frames_cap)
		return 0;
	if (e->nframes >= e->max_depth)
		return -1;
	if (stack_bytes(e->stack_cap, (size_t)e->frames_cap + 1) > e->max_bytes)
		return -1;
	limit = (e->max_bytes - stack_bytes(e->stack_cap, 0)) /
		sizeof(struct wasm_frame);
	if (limit > e->max_depth)
		limit = e->max_depth;
	n = (size_t)e->frames_cap * 2;
	if (n > limit)
		n = limit;
	p = realloc(e->frames, n * sizeof *p);
	if (p == NULL)
		return -1;
	e->frames = p;
	e->frames_cap = (uint32_t)n;
	return 0;
}

static wasm_exec_status misuse(wasm_exec *e, const char *msg)
{
	e->trap = WASM_TRAP_HOST;
	snprintf(e->trap_msg, sizeof e->trap_msg, "%s", msg);
	return WASM_EXEC_TRAP;
}

static int ensure_hostbuf(wasm_exec *e, uint32_t n)
{
	wasm_val *p;

	if (n <= e->hostbuf_cap)
		return 0;
	p = realloc(e->hostbuf, (size_t)n * sizeof *p);
	if (p == NULL)
		return -1;
	e->hostbuf = p;
	e->hostbuf_cap = n;
	return 0;
}

wasm_host_status wasm_exec_call_host(wasm_exec *e, wasm_func *f,
				     uint64_t *slots)
{
	const wasm_functype *ft = f->type;
	wasm_val *args, *res;
	wasm_host_status st;
	uint32_t off = 0;

	if (ensure_hostbuf(e, ft->nparams + ft->nresults + 1)) {
		snprintf(e->trap_msg, sizeof e->trap_msg,
			 "out of memory calling a host function");
		return WASM_HOST_TRAP;
	}
	args = e->hostbuf;
	res = e->hostbuf + ft->nparams;
	for (uint32_t i = 0; i < ft->nparams; i++) {
		args[i] = wasm_val_from_slots(ft->params[i], slots + off);
		off += wasm_valtype_slots(ft->params[i]);
	}
	for (uint32_t i = 0; i < ft->nresults; i++) {
		memset(&res[i], 0, sizeof res[i]);
		res[i].type = ft->results[i];
	}
	e->trap_msg[0] = 0;
	st = f->u.host.fn(e, f->u.host.env, args, res);
	if (st == WASM_HOST_OK) {
		off = 0;
		for (uint32_t i = 0; i < ft->nresults; i++) {
			wasm_val v = res[i];
			v.type = ft->results[i];
			wasm_val_to_slots(&v, slots + off);
			off += wasm_valtype_slots(ft->results[i]);
		}
	} else if (st == WASM_HOST_TRAP && e->trap_msg[0] == 0) {
		snprintf(e->trap_msg, sizeof e->trap_msg, "host trap");
	} else if (st != WASM_HOST_BLOCK && st != WASM_HOST_TRAP) {
		snprintf(e->trap_msg, sizeof e->trap_msg,
			 "host function returned an invalid status");
		st = WASM_HOST_TRAP;
	}
	return st;
}

/* After the interpreter or a host call stops: common bookkeeping. */
static wasm_exec_status settle(wasm_exec *e, wasm_exec_status st)
{
	if (st == WASM_EXEC_DONE) {
		e->result_type = e->entry->type;
		e->nresults = e->entry->type->nresults;
	}
	if (st == WASM_EXEC_TRAP || st == WASM_EXEC_EXCEPTION ||
	    st == WASM_EXEC_DONE) {
		e->state = WASM_EXEC_STATE_IDLE;
		e->nframes = 0;
		e->blocked = NULL;
	}
	return st;
}

static wasm_exec_status run_host_entry(wasm_exec *e, wasm_func *f)
{
	wasm_host_status hs;

	e->state = WASM_EXEC_STATE_RUNNING;
	hs = wasm_exec_call_host(e, f, e->stack);
	switch (hs) {
	case WASM_HOST_OK:
		return settle(e, WASM_EXEC_DONE);
	case WASM_HOST_BLOCK:
		e->blocked = f;
		e->blocked_base = 0;
		e->blocked_entry = true;
		e->state = WASM_EXEC_STATE_BLOCKED;
		return WASM_EXEC_BLOCKED;
	default:
		e->trap = WASM_TRAP_HOST;
		return settle(e, WASM_EXEC_TRAP);
	}
}

/*
 * Whether a caller's argument fits parameter type p (in the store's form,
 * module.h).  A host's reference says only its hierarchy (funcref,
 * externref, ...), so a typed parameter is checked on the value itself:
 * null only where nullable, a function of exactly the named type.
 */
static bool arg_matches(const wasm_val *a, wasm_valtype p)
{
	uint32_t heap;

	if (a->type == p)
		return true;
	if (!wasm_valtype_is_ref(p) || (uint8_t)a->type != (uint8_t)p)
		return false;
	if (a->u.ref == WASM_REF_NULL)
		return wasm_ref_nullable(p);
	heap = wasm_ref_heap(p);
	if (heap == WASM_HEAP_TOP)
		return true;
	return (uint8_t)p == WASM_FUNCREF &&
	       ((const wasm_func *)a->u.ref)->type_id + WASM_HEAP_IDX0 == heap;
}

wasm_exec_status wasm_exec_call(wasm_exec *e, wasm_func *f,
				const wasm_val *args, uint32_t nargs)
{
	const wasm_functype *ft;
	uint32_t nps, nrs, off = 0;
	size_t need;

	if (e->state != WASM_EXEC_STATE_IDLE)
		return misuse(e, "exec already has an outstanding call");
	if (f == NULL)
		return misuse(e, "null function");
	ft = f->type;
	if (nargs != ft->nparams)
		return misuse(e, "wrong number of arguments");
	for (uint32_t i = 0; i < nargs; i++)
		if (!arg_matches(&args[i], ft->params[i]))
			return misuse(e, "argument type mismatch");
	nps = wasm_types_slots(ft->params, ft->nparams);
	nrs = wasm_types_slots(ft->results, ft->nresults);
	need = nps > nrs ? nps : nrs;
	if (f->kind == WASM_FUNC_WASM) {
		if (f->u.wasm.code == NULL)
			return misuse(e, "function has no compiled code");
		if (f->u.wasm.code->frame_slots > need)
			need = f->u.wasm.code->frame_slots;
	}
	e->trap = WASM_TRAP_NONE;
	e->trap_msg[0] = 0;
	e->exn = NULL;
	e->nframes = 0;
	e->nresults = 0;
	e->entry = f;
	if (wasm_exec_grow_stack(e, need)) {
		e->trap = WASM_TRAP_STACK_EXHAUSTED;
		return WASM_EXEC_TRAP;
	}
	for (uint32_t i = 0; i < nargs; i++) {
		wasm_val_to_slots(&args[i], e->stack + off);
		off += wasm_valtype_slots(ft->params[i]);
	}
	if (f->kind == WASM_FUNC_HOST)
		return run_host_entry(e, f);
	{
		const struct wasm_compiled *c = f->u.wasm.code;
		memset(e->stack + c->nparam_slots, 0,
		       (size_t)(c->nlocal_slots - c->nparam_slots) *
			       sizeof *e->stack);
		e->pc = c->code;
		e->fp = 0;
		e->code = c;
		e->inst = f->u.wasm.inst;
	}
	e->state = WASM_EXEC_STATE_RUNNING;
	return settle(e, wasm_interp_run(e));
}

wasm_exec_status wasm_exec_resume(wasm_exec *e, const wasm_val *results,
				  uint32_t nresults)
{
	const wasm_functype *ft;
	uint32_t off = 0;

	if (e->state != WASM_EXEC_STATE_BLOCKED || e->blocked == NULL)
		return misuse(e, "exec is not blocked");
	ft = e->blocked->type;
	if (nresults != ft->nresults)
		return misuse(e, "wrong number of results");
	for (uint32_t i = 0; i < nresults; i++)
		if (results[i].type != ft->results[i])
			return misuse(e, "result type mismatch");
	for (uint32_t i = 0; i < nresults; i++) {
		wasm_val_to_slots(&results[i],
				  e->stack + e->blocked_base + off);
		off += wasm_valtype_slots(ft->results[i]);
	}
	e->blocked = NULL;
	if (e->blocked_entry)
		return settle(e, WASM_EXEC_DONE);
	e->state = WASM_EXEC_STATE_RUNNING;
	return settle(e, wasm_interp_run(e));
}

wasm_exec_status wasm_exec_resume_trap(wasm_exec *e, const char *msg)
{
	if (e->state != WASM_EXEC_STATE_BLOCKED)
		return misuse(e, "exec is not blocked");
	e->trap = WASM_TRAP_HOST;
	snprintf(e->trap_msg, sizeof e->trap_msg, "%s",
		 msg ? msg : "host trap");
	return settle(e, WASM_EXEC_TRAP);
}

wasm_exec_status wasm_exec_continue(wasm_exec *e)
{
	if (e->state != WASM_EXEC_STATE_NO_FUEL)
		return misuse(e, "exec is not out of fuel");
	e->state = WASM_EXEC_STATE_RUNNING;
	return settle(e, wasm_interp_run(e));
}

uint32_t wasm_exec_results(const wasm_exec *e, wasm_val *out, uint32_t max)
{
	uint32_t off = 0, n = e->nresults;

	if (e->result_type == NULL)
		return 0;
	for (uint32_t i = 0; i < n && i < max; i++) {
		out[i] = wasm_val_from_slots(e->result_type->results[i],
					     e->stack + off);
		off += wasm_valtype_slots(e->result_type->results[i]);
	}
	return n;
}

wasm_trap_kind wasm_exec_trap(const wasm_exec *e)
{
	return e->trap;
}

const char *wasm_exec_trap_message(const wasm_exec *e)
{
	if (e->trap == WASM_TRAP_HOST && e->trap_msg[0])
		return e->trap_msg;
	return wasm_trap_message(e->trap);
}

wasm_exn *wasm_exec_exception(const wasm_exec *e)
{
	return e->exn;
}

void wasm_exec_set_host_trap(wasm_exec *e, const char *msg)
{
	snprintf(e->trap_msg, sizeof e->trap_msg, "%s",
		 msg ? msg : "host trap");
}

void wasm_exec_set_fuel(wasm_exec *e, uint64_t fuel)
{
	e->fuel = fuel;
	e->fuel_unlimited = fuel == UINT64_MAX;
}

uint64_t wasm_exec_fuel(const wasm_exec *e)
{
	return e->fuel_unlimited ? UINT64_MAX : e->fuel;
}
