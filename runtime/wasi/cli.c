/*
 * cli.c - wasi:cli 0.2: environment, exit, stdin/stdout/stderr and the
 * terminal interfaces; of WASI 0.3 the same environment, exit and
 * terminal getters (0.3's stdio is streams: cli_p3.c).
 *
 * Contract: arguments and environment are what the embedder pushed into
 * the ctx (a string that is not UTF-8 traps: the interface has no way to
 * carry it).  exit records the status and traps with WASI_EXIT_TRAP_MSG,
 * which unwinds the guest; the embedder reads wasi_ctx_exit_code.  The
 * terminal-* getters answer none: hostel gives guests no terminal.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - strings (get-environment, get-arguments): lists as long as what
 *    the embedder pushed; for hosteld the service's config, at most
 *    VARLINK_MESSAGE_MAX (16 MiB) of text when it was deployed.
 *  - stdio (get-stdin, get-stdout, get-stderr): one stream object per
 *    guest handle (max_handles per instance).
 */
#include <string.h>

#include "wasi/internal.h"

static int strings(cm_host_call *call, cm_val *out, char **v, uint32_t n,
		   uint32_t stride)
{
	if (cm_val_seq(out, CM_LIST, n))
		return wasi_oom(call);
	for (uint32_t i = 0; i < n; i++) {
		cm_val *e = &out->u.list.elems[i];

		if (stride == 2) {
			if (cm_val_seq(e, CM_TUPLE, 2))
				return wasi_oom(call);
			for (int j = 0; j < 2; j++)
				if (cm_val_string(&e->u.list.elems[j],
						  v[2 * i + j],
						  strlen(v[2 * i + j])))
					return cm_host_call_trap(
						call, "wasi: environment "
						      "variable is not UTF-8");
		} else if (cm_val_string(e, v[i], strlen(v[i]))) {
			return cm_host_call_trap(call,
						 "wasi: argument is not UTF-8");
		}
	}
	return 0;
}

static int get_environment(cm_host_call *call, void *env, const cm_val *args,
			   uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;

	return strings(call, &res[0], ctx->env, ctx->nenv, 2);
}

static int get_arguments(cm_host_call *call, void *env, const cm_val *args,
			 uint32_t nargs, cm_val *res, uint32_t nres)
{
	wasi_ctx *ctx = env;

	return strings(call, &res[0], ctx->args, ctx->nargs, 1);
}

static int initial_cwd(cm_host_call *call, void *env, const cm_val *args,
		       uint32_t nargs, cm_val *res, uint32_t nres)
{
	res[0] = cm_val_case(CM_OPTION, 0);
	return 0;
}

static int do_exit(cm_host_call *call, wasi_ctx *ctx, int code)
{
	ctx->exited = true;
	ctx->exit_code = code;
	return cm_host_call_trap(call, "%s", WASI_EXIT_TRAP_MSG);
}

static int exit_(cm_host_call *call, void *env, const cm_val *args,
		 uint32_t nargs, cm_val *res, uint32_t nres)
{
	return do_exit(call, env, args[0].u.variant.index == 0 ? 0 : 1);
}

static int exit_with_code(cm_host_call *call, void *env, const cm_val *args,
			  uint32_t nargs, cm_val *res, uint32_t nres)
{
	return do_exit(call, env, (int)args[0].u.u);
}

static int stdio(cm_host_call *call, wasi_ctx *ctx, cm_val *res,
		 wasi_obj_kind k, wasi_stream_src src, int which)
{
	wasi_obj *o;

	if (wasi_new_own(ctx, k, res, &o))
		return wasi_oom(call);
	o->u.stream.src = src;
	o->u.stream.which = which;
	o->u.stream.fd = src == WSTREAM_STDIN ? ctx->in_fd : -1;
	if (src == WSTREAM_STDIN && ctx->in_fd < 0)
		o->u.stream.src = WSTREAM_EMPTY;
	return 0;
}

static int get_stdin(cm_host_call *call, void *env, const cm_val *args,
		     uint32_t nargs, cm_val *res, uint32_t nres)
{
	return stdio(call, env, res, WOBJ_INPUT, WSTREAM_STDIN, 0);
}

static int get_stdout(cm_host_call *call, void *env, const cm_val *args,
		      uint32_t nargs, cm_val *res, uint32_t nres)
{
	return stdio(call, env, res, WOBJ_OUTPUT, WSTREAM_STDOUT, 1);
}

static int get_stderr(cm_host_call *call, void *env, const cm_val *args,
		      uint32_t nargs, cm_val *res, uint32_t nres)
{
	return stdio(call, env, res, WOBJ_OUTPUT, WSTREAM_STDOUT, 2);
}

static int no_terminal(cm_host_call *call, void *env, const cm_val *args,
		       uint32_t nargs, cm_val *res, uint32_t nres)
{
	res[0] = cm_val_case(CM_OPTION, 0);
	return 0;
}

static const struct {
	const char *instance, *name;
	cm_host_fn fn;
} funcs[] = {
	{"wasi:cli/environment" WASI_V, "get-environment", get_environment},
	{"wasi:cli/environment" WASI_V, "get-arguments", get_arguments},
	{"wasi:cli/environment" WASI_V, "initial-cwd", initial_cwd},
	{"wasi:cli/exit" WASI_V, "exit", exit_},
	{"wasi:cli/exit" WASI_V, "exit-with-code", exit_with_code},
	{"wasi:cli/stdin" WASI_V, "get-stdin", get_stdin},
	{"wasi:cli/stdout" WASI_V, "get-stdout", get_stdout},
	{"wasi:cli/stderr" WASI_V, "get-stderr", get_stderr},
	{"wasi:cli/terminal-stdin" WASI_V, "get-terminal-stdin", no_terminal},
	{"wasi:cli/terminal-stdout" WASI_V, "get-terminal-stdout", no_terminal},
	{"wasi:cli/terminal-stderr" WASI_V, "get-terminal-stderr", no_terminal},
	/* WASI 0.3: the same environment (stdio there is streams) */
	{"wasi:cli/environment@0.3.0", "get-environment", get_environment},
	{"wasi:cli/environment@0.3.0", "get-arguments", get_arguments},
	{"wasi:cli/environment@0.3.0", "get-initial-cwd", initial_cwd},
	{"wasi:cli/exit@0.3.0", "exit", exit_},
	{"wasi:cli/exit@0.3.0", "exit-with-code", exit_with_code},
	{"wasi:cli/terminal-stdin@0.3.0", "get-terminal-stdin", no_terminal},
	{"wasi:cli/terminal-stdout@0.3.0", "get-terminal-stdout",
	 no_terminal},
	{"wasi:cli/terminal-stderr@0.3.0", "get-terminal-stderr",
	 no_terminal},
};

int wasi_link_cli(wasi_ctx *ctx, cm_linker *l)
{
	for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
		if (cm_linker_define_func(l, funcs[i].instance, funcs[i].name,
					  funcs[i].fn, ctx))
			return -1;
	return 0;
}
