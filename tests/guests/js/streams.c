/*
 * streams.c - the stream exports of the componentize-qjs guest
 * (tests/guests/js/qjs) driven from the host (tests/js-guests.sh):
 *
 *   streams COMPONENT.wasm
 *
 * `count-bytes: async func(data: stream<u8>) -> u64`: the host writes
 * 1000 bytes in chunks of 100 into a stream it created (cm_host_stream_new)
 * whenever the guest's read is pending, drops its end, and expects 1000.
 * It writes from the end's notify callback, which the contract allows
 * for u8 (no realloc runs): a host that fed the stream only between
 * turns would see the call trapped as a deadlock at the end of the turn
 * in which the guest waits for input (the scheduler does not count a
 * host-held end with a pending guest read as possible progress yet).
 * `uppercase: async func(words: stream<string>) -> stream<string>`: the
 * host writes words, takes the readable end out of the result
 * (cm_host_end_take) and reads the upper-cased words back until the guest
 * drops its end.  The store is driven as an event loop would: service
 * turns, moving stream data between them.  jco gives the same results
 * (tests/guests/compare-jco.sh calls count-bytes with {"$u8": ...}).
 * Prints "ok"/"not ok" lines and "N passed, N failed"; exit 0 when all
 * pass, 1 otherwise, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "component/component.h"
#include "run/instance.h"
#include "wasi/wasi.h"

#define IFACE	"hostel:qjsguest/api@0.1.0"
#define NBYTES	1000
#define CHUNK	100
#define MAX_OUT 16

typedef struct outcome {
	bool done, ok;
	uint64_t u;    /* count-bytes' result */
	cm_val stream; /* uppercase's result (a copy of the value) */
	char why[320];
} outcome;

static void on_done(void *ctx, cm_call_outcome o, const cm_val *results,
		    uint32_t nresults, const cm_error *err)
{
	outcome *out = ctx;

	out->done = true;
	if (o != CM_CALL_RETURNED || nresults != 1) {
		snprintf(out->why, sizeof out->why, "%s",
			 err != NULL ? err->msg : "no result");
		return;
	}
	out->ok = true;
	if (results[0].kind == CM_STREAM)
		out->stream = results[0]; /* the end belongs to the runtime */
	else
		out->u = results[0].u.u;
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
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* One turn; false (message printed) on a trap. */
static bool turn(cm_store *s)
{
	cm_error err;

	if (cm_store_service_turn(s, 0, &err) < 0) {
		printf("# turn: %s\n", err.msg);
		return false;
	}
	return true;
}

/* notify: the guest's read is pending: a chunk, or at the end a drop */
static void feed(void *env, cm_host_end *h)
{
	uint32_t *sent = env, done;
	cm_val chunk[CHUNK];
	cm_error err;

	if (!cm_host_end_pending(h) || *sent > NBYTES)
		return;
	if (*sent == NBYTES) {
		cm_host_end_drop(h); /* end of input */
		*sent = NBYTES + 1;
		return;
	}
	for (uint32_t i = 0; i < CHUNK; i++)
		chunk[i] = cm_val_u8((uint8_t)(*sent + i));
	if (cm_host_end_write(h, chunk, CHUNK, &done, &err) == 0)
		*sent += done;
}

static bool count_bytes(cm_store *s, cm_component_instance *inst)
{
	cm_func *f = cm_instance_export(inst, IFACE, "count-bytes");
	outcome out;
	cm_host_end *h;
	cm_val arg;
	cm_error err;
	uint32_t sent = 0;

	memset(&out, 0, sizeof out);
	if (f == NULL ||
	    cm_host_stream_new(s, cm_func_type(f)->u.func.params[0].type, &arg,
			       &h, &err)) {
		printf("# count-bytes: cannot make the stream\n");
		return false;
	}
	cm_host_end_set_notify(h, feed, &sent);
	if (cm_call_start(s, f, &arg, 1, 0, on_done, &out, NULL, &err)) {
		printf("# count-bytes: cannot start: %s\n", err.msg);
		cm_host_end_drop(h);
		return false;
	}
	for (int guard = 0; !out.done && guard < 100000; guard++)
		if (!turn(s))
			return false;
	if (!out.ok || out.u != NBYTES) {
		printf("# count-bytes: %s (result %llu, sent %u)\n",
		       out.ok ? "wrong count" : out.why,
		       (unsigned long long)out.u,
		       sent > NBYTES ? NBYTES : sent);
		return false;
	}
	return true;
}

static bool uppercase(cm_store *s, cm_component_instance *inst)
{
	static const char *const in[] = {"hello", "wörld", "", "mixed Case"};
	static const char *const want[] = {"HELLO", "WÖRLD", "", "MIXED CASE"};
	const uint32_t n = sizeof in / sizeof in[0];
	cm_func *f = cm_instance_export(inst, IFACE, "uppercase");
	cm_host_end *h, *r = NULL;
	cm_val arg, got[MAX_OUT];
	outcome out;
	cm_error err;
	uint32_t sent = 0, nread = 0, done;
	bool ok = true;

	memset(&out, 0, sizeof out);
	if (f == NULL ||
	    cm_host_stream_new(s, cm_func_type(f)->u.func.params[0].type, &arg,
			       &h, &err) ||
	    cm_call_start(s, f, &arg, 1, 0, on_done, &out, NULL, &err)) {
		printf("# uppercase: cannot start\n");
		return false;
	}
	for (int guard = 0; guard < 100000; guard++) {
		if (!turn(s))
			return false;
		if (out.done && !out.ok) {
			printf("# uppercase: %s\n", out.why);
			return false;
		}
		if (out.done && r == NULL) {
			r = cm_host_end_take(s, &out.stream);
			if (r == NULL) {
				printf("# uppercase: no stream in the "
				       "result\n");
				return false;
			}
		}
		while (h != NULL && sent < n && cm_host_end_pending(h)) {
			cm_val v;

			if (cm_val_string(&v, in[sent], strlen(in[sent])))
				return false;
			if (cm_host_end_write(h, &v, 1, &done, &err))
				done = 0;
			cm_vals_free(&v, 1);
			if (done == 0)
				break;
			sent++;
		}
		if (h != NULL && sent == n) {
			cm_host_end_drop(h);
			h = NULL;
		}
		while (r != NULL && nread < MAX_OUT && cm_host_end_pending(r)) {
			if (cm_host_end_read(r, got + nread, MAX_OUT - nread,
					     &done, &err) ||
			    done == 0)
				break;
			nread += done;
		}
		if (r != NULL && cm_host_end_peer_dropped(r) &&
		    !cm_host_end_pending(r))
			break;
	}
	if (r == NULL || nread != n) {
		printf("# uppercase: read %u words, expected %u\n", nread, n);
		ok = false;
	}
	for (uint32_t i = 0; ok && i < n; i++)
		if (got[i].kind != CM_STRING ||
		    got[i].u.str.len != strlen(want[i]) ||
		    memcmp(got[i].u.str.ptr, want[i], strlen(want[i])) != 0) {
			printf("# uppercase: word %u is wrong\n", i);
			ok = false;
		}
	cm_vals_free(got, nread);
	if (r != NULL)
		cm_host_end_drop(r);
	return ok;
}

int main(int argc, char **argv)
{
	cm_component *c = NULL;
	cm_component_instance *inst;
	cm_store *s;
	cm_linker *l;
	wasi_ctx *w;
	wasm_error werr;
	cm_error err;
	uint8_t *bytes;
	size_t len = 0;
	int failed = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: streams COMPONENT.wasm\n");
		return 2;
	}
	bytes = read_all(argv[1], &len);
	if (bytes == NULL || cm_component_load(bytes, len, &c, &werr)) {
		fprintf(stderr, "streams: cannot load %s\n", argv[1]);
		return 1;
	}
	free(bytes);
	s = cm_store_new(NULL);
	w = wasi_ctx_new();
	l = cm_linker_new();
	if (s == NULL || w == NULL || l == NULL || wasi_add_to_linker(w, l)) {
		fprintf(stderr, "streams: out of memory\n");
		return 1;
	}
	if (cm_instantiate(s, c, l, &inst, &err)) {
		fprintf(stderr, "streams: instantiate: %s\n", err.msg);
		return 1;
	}
	if (count_bytes(s, inst))
		printf("ok - count-bytes(%d bytes in chunks of %d) = %d\n",
		       NBYTES, CHUNK, NBYTES);
	else
		printf("not ok - count-bytes\n"), failed++;
	if (uppercase(s, inst))
		printf("ok - uppercase(stream of 4 strings) = the 4 "
		       "upper-cased\n");
	else
		printf("not ok - uppercase\n"), failed++;
	printf("%d passed, %d failed\n", 2 - failed, failed);
	cm_store_free(s);
	cm_linker_free(l);
	wasi_ctx_free(w);
	cm_component_free(c);
	return failed ? 1 : 0;
}
