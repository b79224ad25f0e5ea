/*
 * cx.c - the lift/lower context (definitions.py LiftLowerContext): its
 * life cycle, error reporting, and the guest calls the ABI makes (realloc,
 * destructors) on an exec of their own.
 *
 * Contract (cabi.h): a guest call runs on cx->exec when supplied (it must
 * be idle), else on an exec created on first use and freed with the cx.
 * BLOCKED and OUT_OF_FUEL are traps; the exec is left idle either
 * way so that it can take the next call.  may_leave is false while realloc
 * runs.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: cabi_charge
 * and cabi_cx_release keep the budget's account, the exec a cx creates
 * for realloc and destructors is one per cx (released with it).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cabi/internal.h"
#include "wasm/exec.h"

int cabi_fail(cabi_error *err, cabi_err_kind kind, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -1;
	err->kind = kind;
	err->trap = WASM_TRAP_NONE;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return -1;
}

int cabi_trap(cabi_cx *cx, const char *fmt, ...)
{
	va_list ap;

	cx->err.kind = CABI_ERR_TRAP;
	cx->err.trap = WASM_TRAP_NONE;
	va_start(ap, fmt);
	vsnprintf(cx->err.msg, sizeof cx->err.msg, fmt, ap);
	va_end(ap);
	return -1;
}

int cabi_bad_value(cabi_cx *cx, const char *fmt, ...)
{
	va_list ap;

	cx->err.kind = CABI_ERR_VALUE;
	cx->err.trap = WASM_TRAP_NONE;
	va_start(ap, fmt);
	vsnprintf(cx->err.msg, sizeof cx->err.msg, fmt, ap);
	va_end(ap);
	return -1;
}

int cabi_nomem(cabi_cx *cx)
{
	return cabi_fail(&cx->err, CABI_ERR_NOMEM, "out of memory");
}

int cabi_need_memory(cabi_cx *cx)
{
	if (cx->opts.memory == NULL)
		return cabi_bad_value(cx, "canonical options lack a memory");
	return 0;
}

void cabi_cx_init(cabi_cx *cx, const cabi_options *opts, void *inst,
		  cabi_table *table)
{
	memset(cx, 0, sizeof *cx);
	if (opts != NULL)
		cx->opts = *opts;
	cx->inst = inst;
	cx->table = table;
}

void cabi_budget_release(cabi_budget *b, uint64_t bytes)
{
	if (b == NULL)
		return;
	b->used = bytes < b->used ? b->used - bytes : 0;
}

int cabi_budget_trap(cabi_cx *cx)
{
	return cabi_trap(
		cx,
		CABI_MSG_HOST_BYTES
		": lifting this value needs more than the store's "
		"limit of %llu bytes (limits.hostBytes)",
		(unsigned long long)(cx->budget ? cx->budget->limit : 0));
}

int cabi_charge(cabi_cx *cx, uint64_t bytes)
{
	cabi_budget *b = cx->budget;

	if (b == NULL)
		return 0;
	if (b->limit == 0) {
		/* no limit, but the work is still the guest's to pay for */
		b->work += bytes;
		return 0;
	}
	if (bytes > b->limit || b->used > b->limit - bytes)
		return cabi_budget_trap(cx);
	b->used += bytes;
	b->work += bytes;
	cx->charged += bytes;
	return 0;
}

uint64_t cabi_cx_keep(cabi_cx *cx)
{
	uint64_t n = cx->charged;

	cx->charged = 0;
	return n;
}

void cabi_cx_release(cabi_cx *cx)
{
	cabi_budget_release(cx->budget, cx->charged);
	cx->charged = 0;
	if (cx->own_exec != NULL) {
		wasm_exec_free(cx->own_exec);
		cx->own_exec = NULL;
	}
}

/*
 * Leave an exec that stopped part-way idle.  A BLOCKED call is unwound
 * through the public API; one stopped for fuel has no such API, so its
 * state is reset directly (its frames are plain data on the heap stack).
 */
static void abandon(wasm_exec *e, wasm_exec_status st)
{
	if (st == WASM_EXEC_BLOCKED)
		st = wasm_exec_resume_trap(e, "abandoned");
	if (st == WASM_EXEC_BLOCKED || st == WASM_EXEC_OUT_OF_FUEL) {
		e->state = WASM_EXEC_STATE_IDLE;
		e->blocked = NULL;
		e->nframes = 0;
	}
}

static wasm_exec *get_exec(cabi_cx *cx, wasm_func *f)
{
	wasm_store *s = cx->store;

	if (cx->exec != NULL)
		return cx->exec;
	if (cx->own_exec != NULL)
		return cx->own_exec;
	if (s == NULL && f->kind == WASM_FUNC_WASM)
		s = f->u.wasm.inst->store;
	if (s == NULL)
		return NULL;
	cx->own_exec = wasm_exec_new(s, NULL);
	return cx->own_exec;
}

int cabi_call_guest(cabi_cx *cx, wasm_func *f, const wasm_val *args,
		    uint32_t nargs, wasm_val *results, uint32_t nresults)
{
	wasm_exec *e;
	wasm_exec_status st;

	if (f == NULL)
		return cabi_bad_value(cx, "no function to call");
	if (f->type->nresults != nresults)
		return cabi_bad_value(cx,
				      "guest function has %u results, "
				      "expected %u",
				      f->type->nresults, nresults);
	e = get_exec(cx, f);
	if (e == NULL) {
		if (cx->store == NULL && cx->exec == NULL &&
		    f->kind != WASM_FUNC_WASM)
			return cabi_bad_value(cx, "no store to run a host "
						  "function in");
		return cabi_nomem(cx);
	}
	if (cx->fuel != 0)
		wasm_exec_set_fuel(e, cx->fuel);
	st = wasm_exec_call(e, f, args, nargs);
	switch (st) {
	case WASM_EXEC_DONE:
		if (wasm_exec_results(e, results, nresults) != nresults)
			return cabi_bad_value(cx,
					      "guest function returned "
					      "the wrong number of results");
		return 0;
	case WASM_EXEC_TRAP:
		cabi_trap(cx, "%s", wasm_exec_trap_message(e));
		cx->err.trap = wasm_exec_trap(e);
		return -1;
	case WASM_EXEC_EXCEPTION:
		cabi_trap(cx, WASM_TRAP_PREFIX CABI_MSG_UNCAUGHT_EXCEPTION);
		cx->err.trap = WASM_TRAP_UNCAUGHT_EXCEPTION;
		return -1;
	case WASM_EXEC_BLOCKED:
		abandon(e, st);
		return cabi_trap(cx, "guest code called by the canonical ABI "
				     "cannot block");
	case WASM_EXEC_OUT_OF_FUEL:
		abandon(e, st);
		cabi_trap(cx, "%s", wasm_trap_message(WASM_TRAP_OUT_OF_FUEL));
		cx->err.trap = WASM_TRAP_OUT_OF_FUEL;
		return -1;
	}
	return cabi_trap(cx, "unexpected exec status");
}

int cabi_realloc(cabi_cx *cx, uint64_t old_ptr, uint64_t old_size,
		 uint32_t align, uint64_t new_size, uint64_t *out)
{
	const wasm_functype *ft;
	wasm_val args[4], res;
	uint64_t in[4] = {old_ptr, old_size, align, new_size};
	bool saved = true;
	int r;

	if (cx->opts.realloc == NULL)
		return cabi_bad_value(cx, "canonical options lack realloc");
	ft = wasm_func_type(cx->opts.realloc);
	if (ft->nparams != 4 || ft->nresults != 1)
		return cabi_bad_value(cx, "realloc has the wrong type");
	for (int i = 0; i < 4; i++) {
		memset(&args[i], 0, sizeof args[i]);
		args[i].type = ft->params[i];
		if (ft->params[i] == WASM_I64)
			args[i].u.i64 = in[i];
		else
			args[i].u.i32 = (uint32_t)in[i];
	}
	if (cx->may_leave != NULL) {
		saved = *cx->may_leave;
		*cx->may_leave = false;
	}
	r = cabi_call_guest(cx, cx->opts.realloc, args, 4, &res, 1);
	if (cx->may_leave != NULL)
		*cx->may_leave = saved;
	if (r)
		return -1;
	*out = res.type == WASM_I64 ? res.u.i64 : res.u.i32;
	return 0;
}

int cabi_realloc_checked(cabi_cx *cx, uint64_t old_ptr, uint64_t old_size,
			 uint32_t align, uint64_t new_size, const char *oob_msg,
			 uint64_t *out)
{
	uint64_t p;

	if (cabi_realloc(cx, old_ptr, old_size, align, new_size, &p))
		return -1;
	if (align > 1 && p % align != 0)
		return cabi_trap(cx, "%s", cabi_msg_realloc_align(cx));
	if (!cabi_in_bounds(cx, p, new_size))
		return cabi_trap(cx, "%s", cabi_msg_realloc_oob(cx, oob_msg));
	/* the host writes its string or list there (internal.h cabi_mem) */
	wasm_memory_mark(cx->opts.memory, p, new_size);
	/* and that writing is work for the guest to pay for (billed as
	 * fuel with the rest, cm_store_bill_host_work): a lowered host
	 * call returning 1 MiB lists a fuel unit each wrote 1 GB for
	 * 100000 units */
	if (cx->budget != NULL)
		cx->budget->work += new_size;
	*out = p;
	return 0;
}
