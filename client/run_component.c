/*
 * run_component.c - `hostel run` for components:
 *
 *   hostel run [--invoke 'NAME(ARGS)'] [--fuel N] COMPONENT.wasm
 *
 * Contract: the component is loaded (decode + validate), instantiated
 * in a fresh store whose linker provides WASI 0.2 and the WASI 0.3
 * clocks (runtime/wasi: the arguments after the file, --env K=V, --dir
 * HOST::GUEST preopens, the process's stdio; any other import fails to
 * instantiate, and the message names it), then one export is called.
 * NAME is a root export ("add") or a function of an exported instance
 * ("wasi:cli/run@0.2.0#run"), or a name that resolves to exactly one
 * of them ("run", "wasi:cli/run#run": run/exportname.h; when
 * none or several match, the message lists the candidates); ARGS are
 * WAVE values typed by the export's declared parameters.  Without
 * --invoke, wasi:cli/run@0.2.x's (or the async @0.3.x's) `run` is
 * called when exported.  The result, if the function has one, is
 * printed as WAVE on one line.  An async export is driven until it
 * returns: when nothing is ready but WASI 0.3 waits are pending, the
 * process sleeps to the next deadline (wasi_ctx_wait_host).  Streams: a
 * stream<T> argument is written as a WAVE list of T, which the host
 * writes into a stream it holds the other end of and then
 * drops; a stream<T> result is read to its end (the guest dropping its
 * end) and printed as the list of what it carried, a future<T> result as
 * its value.  Such calls run in service turns (cm_call_start).
 *
 * Exit status: for wasi:cli/run, the guest's: the code it passed to
 * wasi:cli/exit, else 0 when run returns ok and 1 when it returns err.
 * Otherwise 0 when the call returns; 1 with "hostel: trap: MESSAGE"
 * when it (or instantiation) traps; 2 on a usage error (bad --invoke,
 * unknown export, bad argument, nothing to call); 3 when the file cannot
 * be loaded or linked, or uses what the runtime does not implement yet.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/wave.h"
#include "client/commands.h"
#include "client/run_component.h"
#include "component/component.h"
#include "run/exportname.h"
#include "run/instance.h"
#include "wasi/wasi.h"

int run_wasi_add(const char ***v, uint32_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof *nv);

	if (nv == NULL) {
		fprintf(stderr, "hostel: out of memory\n");
		return -1;
	}
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

bool run_is_component_file(const char *path)
{
	uint8_t head[8];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL)
		return false;
	n = fread(head, 1, sizeof head, f);
	fclose(f);
	return n == sizeof head && cm_is_component_binary(head, n);
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
			errno = EIO;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/*
 * What wave_parse_call sees of the function: its type, except that each
 * stream<T> parameter reads as list<T> (the values to send).
 */
typedef struct invoke_env {
	cm_component_instance *inst;
	cm_func *f;		/* the function the name resolved to */
	char *name;		/* the name asked for, when it did not */
	cm_name_resolution res; /* run/exportname.h */
	cm_type func;
	cm_field *params;
	cm_type *lists;
} invoke_env;

static bool is_stream_param(const cm_field *p)
{
	return p->type->kind == CM_STREAM && p->type->u.stream.elem != NULL;
}

static const cm_type *lookup_type(void *env, const char *name, size_t len)
{
	invoke_env *ie = env;
	cm_func *f = cm_instance_resolve_export(ie->inst, name, len, &ie->res);
	const cm_type *ft;
	uint32_t n, i;

	ie->f = f;
	if (f == NULL) {
		/* wave_parse_call frees its copy of the name on failure */
		free(ie->name);
		ie->name = strndup(name, len);
		return NULL;
	}
	ft = cm_func_type(f);
	n = ft->u.func.nparams;
	for (i = 0; i < n && !is_stream_param(&ft->u.func.params[i]); i++)
		;
	if (i == n)
		return ft;
	free(ie->params);
	free(ie->lists);
	ie->params = calloc(n, sizeof *ie->params);
	ie->lists = calloc(n, sizeof *ie->lists);
	if (ie->params == NULL || ie->lists == NULL)
		return NULL; /* reported as unknown: out of memory is rarer */
	for (i = 0; i < n; i++) {
		ie->params[i] = ft->u.func.params[i];
		if (!is_stream_param(&ie->params[i]))
			continue;
		ie->lists[i].kind = CM_LIST;
		ie->lists[i].u.list.elem =
			ft->u.func.params[i].type->u.stream.elem;
		ie->params[i].type = &ie->lists[i];
	}
	ie->func = *ft;
	ie->func.u.func.params = ie->params;
	return &ie->func;
}

/* The wasi:cli/run@0.2.x (or async @0.3.x) `run` export, if any. */
static cm_func *find_run(cm_component_instance *inst, const char **name)
{
	for (uint32_t i = 0; i < cm_instance_nexports(inst); i++) {
		cm_sort sort;
		const char *n = cm_instance_export_name(inst, i, &sort);

		if (sort == CM_SORT_INSTANCE &&
		    (!strncmp(n, "wasi:cli/run@0.2.", 17) ||
		     !strncmp(n, "wasi:cli/run@0.3.", 17))) {
			*name = n;
			return cm_instance_export(inst, n, "run");
		}
	}
	return NULL;
}

/*
 * The --invoke name resolved to no function or to several
 * (run/exportname.h): say so, with the candidates.
 */
static int export_error(const char *path, const char *name,
			const cm_name_resolution *res)
{
	char full[512];

	if (name == NULL || res->match == CM_NAME_NOMEM) {
		fprintf(stderr, "hostel: out of memory\n");
		return HOSTEL_EXIT_FAILURE;
	}
	if (res->match == CM_NAME_AMBIGUOUS)
		fprintf(stderr,
			"hostel: %s: `%s` is ambiguous: %u exported functions "
			"match:",
			path, name, res->nmatches);
	else
		fprintf(stderr,
			"hostel: %s: no exported function `%s` (%u exported "
			"function%s)%s",
			path, name, res->total, res->total == 1 ? "" : "s",
			res->ncandidates ? "; did you mean:" : "");
	for (uint32_t i = 0; i < res->ncandidates; i++) {
		cm_export_ref_format(&res->candidates[i], full, sizeof full);
		fprintf(stderr, "%s %s", i ? "," : "", full);
	}
	if (res->match == CM_NAME_AMBIGUOUS && res->nmatches > res->ncandidates)
		fprintf(stderr, ", ...");
	fprintf(stderr, "\n");
	return HOSTEL_EXIT_USAGE;
}

static int print_result(const cm_type *ft, const cm_val *results)
{
	char *out = NULL;
	size_t len = 0;

	if (ft->u.func.result == NULL)
		return HOSTEL_EXIT_OK;
	if (wave_print_results(ft, results, &out, &len)) {
		fprintf(stderr, "hostel: cannot print the result\n");
		return HOSTEL_EXIT_FAILURE;
	}
	printf("%s\n", out);
	free(out);
	return HOSTEL_EXIT_OK;
}

/* ---- calls with streams: the host holds the other ends ----------------- */

typedef struct feed {
	cm_host_end *h; /* NULL once dropped */
	const cm_val *vals;
	uint32_t n, sent;
	cm_val *own; /* vals, when made here from a list in byte form */
} feed;

/*
 * The elements a stream<T> argument, written as a list<T>, feeds: the
 * list's own, or for a stream<u8>/stream<s8> (whose list WAVE parsed
 * into byte form, val.h) one u8/s8 value a byte.  -1 when out of memory.
 */
static int feed_vals(feed *fd, const cm_val *list, const cm_type *elem)
{
	const cm_vals *l = &list->u.list;

	fd->n = l->n;
	if (l->bytes == NULL) {
		fd->vals = l->elems;
		return 0;
	}
	fd->own = calloc(l->n, sizeof *fd->own);
	if (fd->own == NULL)
		return -1;
	for (uint32_t k = 0; k < l->n; k++)
		fd->own[k] = elem->kind == CM_S8
				     ? cm_val_s8((int8_t)l->bytes[k])
				     : cm_val_u8(l->bytes[k]);
	fd->vals = fd->own;
	return 0;
}

typedef struct drive {
	cm_store *s;
	const cm_type *rt; /* the result type */
	bool done;
	cm_call_outcome outcome;
	cm_error err;
	cm_val result; /* a result that is not a stream or future */
	uint32_t nres;
	cm_host_end *out; /* the returned stream's or future's end */
	cm_val *got;	  /* what it carried */
	uint32_t ngot, capgot;
} drive;

static void set_err(cm_error *err, cm_error_kind kind, const char *msg)
{
	err->kind = kind;
	snprintf(err->msg, sizeof err->msg, "%s", msg);
}

static bool is_async_value(const cm_type *t)
{
	return t != NULL && (t->kind == CM_STREAM || t->kind == CM_FUTURE);
}

static void on_done(void *ctx, cm_call_outcome outcome, const cm_val *results,
		    uint32_t nresults, const cm_error *err)
{
	drive *d = ctx;

	d->done = true;
	d->outcome = outcome;
	if (outcome != CM_CALL_RETURNED) {
		if (err != NULL)
			d->err = *err;
		return;
	}
	if (nresults == 1 && is_async_value(d->rt)) {
		cm_val v = results[0]; /* the end is the runtime's to hand */

		d->out = cm_host_end_take(d->s, &v);
	} else if (nresults == 1) {
		if (cm_val_copy(&d->result, &results[0])) {
			d->outcome = CM_CALL_TRAPPED;
			set_err(&d->err, CM_ERR_NOMEM, "out of memory");
			return;
		}
		d->nres = 1;
	}
}

/* Write what the guest can take now; true when something moved. */
static bool pump_feed(feed *fd, cm_error *err, int *rc)
{
	bool moved = false;
	uint32_t done;

	while (fd->h != NULL && fd->sent < fd->n &&
	       cm_host_end_pending(fd->h)) {
		int r = cm_host_end_write(fd->h, fd->vals + fd->sent,
					  fd->n - fd->sent, &done, err);

		if (r < 0) {
			*rc = -1;
			return moved;
		}
		if (r > 0 || done == 0)
			break; /* the guest dropped its end, or no room */
		fd->sent += done;
		moved = true;
	}
	if (fd->h != NULL &&
	    (fd->sent == fd->n || cm_host_end_peer_dropped(fd->h))) {
		cm_host_end_drop(fd->h); /* the end of the input */
		fd->h = NULL;
		moved = true;
	}
	return moved;
}

/* Read what the guest has written; true when something moved. */
static bool pump_out(drive *d, cm_error *err, int *rc)
{
	bool moved = false;
	uint32_t done;

	while (d->out != NULL && cm_host_end_pending(d->out)) {
		int r;

		if (d->ngot == d->capgot) {
			uint32_t cap = d->capgot ? 2 * d->capgot : 64;
			cm_val *v = realloc(d->got, cap * sizeof *v);

			if (v == NULL) {
				set_err(err, CM_ERR_NOMEM, "out of memory");
				*rc = -1;
				return moved;
			}
			d->got = v;
			d->capgot = cap;
		}
		r = cm_host_end_read(d->out, d->got + d->ngot,
				     d->capgot - d->ngot, &done, err);
		if (r < 0) {
			*rc = -1;
			return moved;
		}
		if (r > 0 || done == 0)
			break;
		d->ngot += done;
		moved = true;
	}
	return moved;
}

/* Has the returned stream or future carried all it will? */
static bool out_finished(const drive *d)
{
	if (d->out == NULL)
		return true;
	if (d->rt->kind == CM_FUTURE && d->ngot == 1)
		return true;
	return cm_host_end_peer_dropped(d->out) && !cm_host_end_pending(d->out);
}

/*
 * Print the result: a stream<T> as the list of what it carried (an
 * untyped `stream` as the count), a future<T> as its value (an untyped
 * `future` as nothing, like a function without a result).
 */
static int print_drive(const drive *d)
{
	const cm_type *et;
	cm_type lt;
	cm_val lv;
	char *out = NULL;
	size_t len = 0;
	int rc;

	if (d->rt == NULL)
		return HOSTEL_EXIT_OK;
	if (!is_async_value(d->rt)) {
		rc = wave_print(&d->result, d->rt, &out, &len);
	} else if (d->rt->kind == CM_FUTURE) {
		if (d->ngot != 1) {
			fprintf(stderr, "hostel: the future was dropped "
					"without a value\n");
			return HOSTEL_EXIT_FAILURE;
		}
		et = d->rt->u.future.elem;
		if (et == NULL)
			return HOSTEL_EXIT_OK;
		rc = wave_print(&d->got[0], et, &out, &len);
	} else {
		et = d->rt->u.stream.elem;
		if (et == NULL) {
			printf("%u\n", d->ngot);
			return HOSTEL_EXIT_OK;
		}
		memset(&lt, 0, sizeof lt);
		lt.kind = CM_LIST;
		lt.u.list.elem = et;
		memset(&lv, 0, sizeof lv);
		lv.kind = CM_LIST;
		lv.u.list.n = d->ngot;
		lv.u.list.elems = d->got;
		rc = wave_print(&lv, &lt, &out, &len);
	}
	if (rc) {
		fprintf(stderr, "hostel: cannot print the result\n");
		return HOSTEL_EXIT_FAILURE;
	}
	printf("%s\n", out);
	free(out);
	return HOSTEL_EXIT_OK;
}

/*
 * f(args) where stream<T> arguments arrived as lists (wave) or the
 * result is a stream or future: start the call, then run service turns
 * as an event loop would, moving stream data between them and sleeping
 * to the next WASI 0.3 deadline when nothing else can move.
 */
static int call_streams(cm_store *s, cm_func *f, const wave_call *wc,
			uint64_t fuel, wasi_ctx *wasi, cm_error *err)
{
	const cm_type *ft = cm_func_type(f);
	uint32_t n = ft->u.func.nparams;
	cm_val *args = calloc(n ? n : 1, sizeof *args);
	feed *feeds = calloc(n ? n : 1, sizeof *feeds);
	drive d;
	int rc = 0;

	memset(&d, 0, sizeof d);
	d.s = s;
	d.rt = ft->u.func.result;
	if (args == NULL || feeds == NULL) {
		set_err(err, CM_ERR_NOMEM, "out of memory");
		rc = -1;
		goto out;
	}
	if (wc->nargs != n) {
		set_err(err, CM_ERR_VALUE, "wrong number of arguments");
		rc = -1;
		goto out;
	}
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		if (!is_stream_param(&ft->u.func.params[i])) {
			args[i] = wc->args[i]; /* copied by cm_call_start */
			continue;
		}
		if (feed_vals(&feeds[i], &wc->args[i],
			      ft->u.func.params[i].type->u.stream.elem)) {
			set_err(err, CM_ERR_NOMEM, "out of memory");
			rc = -1;
			break;
		}
		rc = cm_host_stream_new(s, ft->u.func.params[i].type, &args[i],
					&feeds[i].h, err);
	}
	if (rc == 0)
		rc = cm_call_start(s, f, args, n, fuel, on_done, &d, NULL, err);
	while (rc == 0) {
		int turn = cm_store_service_turn(s, 0, err);
		bool moved = false;

		if (turn < 0 && !d.done) {
			rc = -1;
			break;
		}
		for (uint32_t i = 0; i < n && rc == 0; i++)
			moved |= pump_feed(&feeds[i], err, &rc);
		if (rc == 0)
			moved |= pump_out(&d, err, &rc);
		if (rc != 0 || (d.done && d.outcome != CM_CALL_RETURNED))
			break;
		if (d.done && out_finished(&d))
			break;
		if (turn == 0 && !moved &&
		    wasi_ctx_sleep_to_next_timer(wasi) < 0) {
			set_err(err, CM_ERR_TRAP,
				"the call can make no more progress");
			rc = -1;
		}
	}
	if (rc == 0 && d.outcome != CM_CALL_RETURNED) {
		*err = d.err;
		rc = -1;
	}
	if (rc == 0)
		rc = print_drive(&d) == HOSTEL_EXIT_OK ? 0 : -2;
out:
	for (uint32_t i = 0; feeds != NULL && i < n; i++) {
		if (feeds[i].h != NULL)
			cm_host_end_drop(feeds[i].h);
		free(feeds[i].own);
	}
	if (d.out != NULL)
		cm_host_end_drop(d.out);
	cm_vals_free(d.got, d.ngot);
	free(d.got);
	cm_vals_free(&d.result, d.nres);
	free(feeds);
	free(args); /* the stream ends moved into the call */
	return rc;
}

static bool needs_streams(const cm_type *ft)
{
	for (uint32_t i = 0; i < ft->u.func.nparams; i++)
		if (is_stream_param(&ft->u.func.params[i]))
			return true;
	return is_async_value(ft->u.func.result);
}

static int call(const char *path, cm_store *s, cm_component_instance *inst,
		const char *invoke, uint64_t fuel, wasi_ctx *wasi)
{
	wave_call wc;
	wave_error werr;
	invoke_env ie;
	cm_val results[1];
	uint32_t nres = 0;
	cm_error err;
	cm_func *f;
	int rc;

	memset(&wc, 0, sizeof wc);
	memset(&ie, 0, sizeof ie);
	ie.inst = inst;
	if (invoke == NULL) {
		const char *name = NULL;

		f = find_run(inst, &name);
		if (f == NULL) {
			fprintf(stderr,
				"hostel: %s: no --invoke and no "
				"wasi:cli/run export\n",
				path);
			return HOSTEL_EXIT_USAGE;
		}
		if (cm_func_type(f)->u.func.nparams != 0) {
			fprintf(stderr, "hostel: %s: %s#run takes arguments\n",
				path, name);
			return HOSTEL_EXIT_USAGE;
		}
	} else {
		rc = wave_parse_call(invoke, strlen(invoke), lookup_type, &ie,
				     &wc, &werr);
		free(ie.params);
		free(ie.lists);
		if (rc && ie.f == NULL && !werr.nomem) {
			rc = export_error(path, ie.name, &ie.res);
			free(ie.name);
			wave_call_free(&wc);
			return rc;
		}
		free(ie.name);
		if (rc) {
			fprintf(stderr, "hostel: bad --invoke: %u:%u: %s\n",
				werr.line, werr.column, werr.msg);
			wave_call_free(&wc);
			return HOSTEL_EXIT_USAGE;
		}
		f = ie.f;
	}
	if (invoke != NULL && needs_streams(cm_func_type(f))) {
		rc = call_streams(s, f, &wc, fuel, wasi, &err);
		wave_call_free(&wc);
		fflush(stdout);
		if (rc == -2)
			return HOSTEL_EXIT_FAILURE;
		if (rc == 0)
			return HOSTEL_EXIT_OK;
	} else {
		rc = cm_invoke(s, f, wc.args, wc.nargs, results, &nres, &err);
		wave_call_free(&wc);
		fflush(stdout);
	}
	if (rc && wasi_ctx_exited(wasi))
		return wasi_ctx_exit_code(wasi);
	if (rc) {
		switch (err.kind) {
		case CM_ERR_TRAP:
			fprintf(stderr, "hostel: trap: %s\n", err.msg);
			return HOSTEL_EXIT_FAILURE;
		case CM_ERR_VALUE:
			fprintf(stderr, "hostel: bad argument: %s\n", err.msg);
			return HOSTEL_EXIT_USAGE;
		case CM_ERR_UNSUPPORTED:
			fprintf(stderr, "hostel: %s: %s\n", path, err.msg);
			return HOSTEL_EXIT_INPUT;
		default:
			fprintf(stderr, "hostel: %s: %s\n",
				cm_error_kind_name(err.kind), err.msg);
			return HOSTEL_EXIT_FAILURE;
		}
	}
	if (invoke == NULL) {
		/* run: func() -> result: ok is 0, err is 1 */
		rc = nres == 1 && results[0].kind == CM_RESULT &&
				     results[0].u.variant.index != 0
			     ? HOSTEL_EXIT_FAILURE
			     : HOSTEL_EXIT_OK;
		cm_vals_free(results, nres);
		return rc;
	}
	rc = print_result(cm_func_type(f), results);
	cm_vals_free(results, nres);
	return rc;
}

/* A wasi_ctx from the command line; NULL (message printed) on failure. */
wasi_ctx *run_wasi_ctx(const run_wasi_opts *o)
{
	wasi_ctx *w = wasi_ctx_new();

	if (w == NULL)
		goto oom;
	for (uint32_t i = 0; i < o->nargs; i++)
		if (wasi_ctx_push_arg(w, o->args[i]))
			goto oom;
	for (uint32_t i = 0; i < o->nenvs; i++) {
		const char *eq = strchr(o->envs[i], '=');
		char *k;
		int rc;

		if (eq == NULL || eq == o->envs[i]) {
			fprintf(stderr, "hostel: bad --env %s: expected K=V\n",
				o->envs[i]);
			wasi_ctx_free(w);
			return NULL;
		}
		k = strndup(o->envs[i], (size_t)(eq - o->envs[i]));
		rc = k == NULL || wasi_ctx_push_env(w, k, eq + 1);
		free(k);
		if (rc)
			goto oom;
	}
	for (uint32_t i = 0; i < o->ndirs; i++) {
		const char *sep = strstr(o->dirs[i], "::");
		char *host =
			sep ? strndup(o->dirs[i], (size_t)(sep - o->dirs[i]))
			    : strdup(o->dirs[i]);
		const char *guest = sep ? sep + 2 : o->dirs[i];
		int rc;

		if (host == NULL)
			goto oom;
		rc = wasi_ctx_preopen(w, host, guest);
		if (rc)
			fprintf(stderr, "hostel: --dir %s: %s\n", host,
				strerror(errno));
		free(host);
		if (rc) {
			wasi_ctx_free(w);
			return NULL;
		}
	}
	return w;
oom:
	fprintf(stderr, "hostel: out of memory\n");
	wasi_ctx_free(w);
	return NULL;
}

int run_component(const char *path, const char *invoke, uint64_t fuel,
		  const run_wasi_opts *wopts)
{
	cm_component *c = NULL;
	cm_component_instance *inst;
	cm_store *s = NULL;
	cm_store_config cfg;
	cm_linker *l = NULL;
	wasi_ctx *wasi;
	wasm_error werr;
	cm_error err;
	uint8_t *bytes;
	size_t len = 0;
	int rc;

	bytes = read_all(path, &len);
	if (bytes == NULL) {
		fprintf(stderr, "hostel: %s: %s\n", path, strerror(errno));
		return HOSTEL_EXIT_INPUT;
	}
	rc = cm_component_load(bytes, len, &c, &werr);
	free(bytes);
	if (rc) {
		fprintf(stderr, "hostel: %s: %s at offset %zu: %s\n", path,
			werr.kind == WASM_ERR_MALFORMED ? "malformed"
							: "invalid",
			werr.offset, werr.msg);
		return HOSTEL_EXIT_INPUT;
	}
	wasi = run_wasi_ctx(wopts);
	if (wasi == NULL) {
		cm_component_free(c);
		return HOSTEL_EXIT_USAGE;
	}
	/* nothing else to wait for: sleep to the next WASI 0.3 timer */
	memset(&cfg, 0, sizeof cfg);
	cfg.wait_host = wasi_ctx_wait_host;
	cfg.wait_env = wasi;
	s = cm_store_new(&cfg);
	if (s == NULL) {
		wasi_ctx_free(wasi);
		cm_component_free(c);
		fprintf(stderr, "hostel: out of memory\n");
		return HOSTEL_EXIT_FAILURE;
	}
	cm_store_set_fuel(s, fuel ? fuel : UINT64_MAX);
	l = cm_linker_new();
	if (l == NULL || wasi_add_to_linker(wasi, l)) {
		fprintf(stderr, "hostel: out of memory\n");
		rc = HOSTEL_EXIT_FAILURE;
	} else if (cm_instantiate(s, c, l, &inst, &err)) {
		if (wasi_ctx_exited(wasi)) {
			rc = wasi_ctx_exit_code(wasi);
		} else if (err.kind == CM_ERR_TRAP) {
			fprintf(stderr, "hostel: trap: %s\n", err.msg);
			rc = HOSTEL_EXIT_FAILURE;
		} else {
			fprintf(stderr, "hostel: %s: %s: %s\n", path,
				cm_error_kind_name(err.kind), err.msg);
			rc = err.kind == CM_ERR_NOMEM ? HOSTEL_EXIT_FAILURE
						      : HOSTEL_EXIT_INPUT;
		}
	} else {
		rc = call(path, s, inst, invoke, fuel, wasi);
	}
	cm_store_free(s);
	cm_linker_free(l);
	wasi_ctx_free(wasi);
	cm_component_free(c);
	return rc;
}
