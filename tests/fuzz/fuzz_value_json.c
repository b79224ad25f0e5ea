/*
 * fuzz_value_json.c - libFuzzer target over the JSON value mapping
 * (ipc/value-json.c): component values from and to JSON.
 *
 * Input: a byte L, then L bytes that build a value type (random_type.h),
 * then JSON text (jansson parses it; any JSON value at the top).  When
 * the JSON converts to a value of the type, the value must type-check,
 * convert back to JSON, survive the wire (compact text and parsed again)
 * and convert to an equal value.  The same JSON is also tried as the
 * arguments of a function taking the type and an optional of it
 * (value_args_from_json: array or object form).
 *
 * Contract: any JSON may be refused (-1 with a message); nothing may
 * crash, leak, trip a sanitizer or fail the round trip (abort).  Built
 * only with --enable-fuzzing (clang).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "random_type.h"
#include "ipc/value-json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static __attribute__((noreturn)) void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_value_json: %s: %s\n", what,
		detail ? detail : "");
	abort();
}

/* func(f0: t, f1: option<t>) */
static const cm_type *func_of(ft_pool *pl, const cm_type *t)
{
	cm_type *opt = ft_alloc(pl, sizeof *opt);
	cm_type *f = ft_alloc(pl, sizeof *f);
	cm_field *ps = ft_alloc(pl, 2 * sizeof *ps);

	if (opt == NULL || f == NULL || ps == NULL)
		return NULL;
	opt->kind = CM_OPTION;
	opt->u.option.elem = t;
	cm_type_finish(opt);
	ps[0] = (cm_field){{"f0", 2}, t};
	ps[1] = (cm_field){{"f1", 2}, opt};
	f->kind = CM_FUNC;
	f->u.func.nparams = 2;
	f->u.func.params = ps;
	cm_type_finish(f);
	return f;
}

static void round_trip(const cm_type *t, const cm_val *v)
{
	char why[256];
	json_t *j, *wire;
	char *text;
	cm_val back;
	int rc;

	if (!cm_val_typecheck(v, t, why, sizeof why))
		fail("converted value does not type-check", why);
	j = value_to_json(v, t);
	if (j == NULL)
		return; /* out of memory */
	text = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(j);
	if (text == NULL)
		return;
	wire = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (wire == NULL)
		fail("value_to_json wrote JSON that does not parse", text);
	rc = value_from_json(wire, t, NULL, &back, why, sizeof why);
	if (rc == -1)
		fail("value_to_json output is refused", why);
	if (rc == 0) {
		if (!cm_val_equal(v, &back))
			fail("from_json(to_json(v)) != v", text);
		cm_val_free(&back);
	}
	json_decref(wire);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ft_pool *pool;
	ft_in tin;
	const cm_type *t, *ft;
	const char *text;
	size_t len;
	json_t *j;
	cm_val v, *args;
	uint32_t nargs;
	char why[256];

	if (size == 0)
		return 0;
	tin.p = data + 1;
	tin.n = data[0] < size - 1 ? data[0] : size - 1;
	/* before ft_type consumes tin */
	text = (const char *)tin.p + tin.n;
	len = size - 1 - tin.n;
	pool = calloc(1, sizeof *pool);
	if (pool == NULL)
		return 0;
	t = ft_type(pool, &tin, 0, false);
	j = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (j == NULL)
		goto out;
	if (value_from_json(j, t, "value", &v, why, sizeof why) == 0) {
		round_trip(t, &v);
		cm_val_free(&v);
	}
	ft = func_of(pool, t);
	if (ft != NULL &&
	    value_args_from_json(j, ft, &args, &nargs, why, sizeof why) == 0) {
		if (nargs != 2)
			fail("argument count", NULL);
		for (uint32_t i = 0; i < nargs; i++)
			round_trip(ft->u.func.params[i].type, &args[i]);
		cm_vals_free(args, nargs);
		free(args);
	}
	json_decref(j);
out:
	ft_pool_free(pool);
	free(pool);
	return 0;
}
