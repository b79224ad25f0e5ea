/*
 * fuzz_wave.c - libFuzzer target over the WAVE parser and printer
 * (runtime/value/wave.c).
 *
 * Input: a byte L, then L bytes that build a value type (random_type.h),
 * then the WAVE text.  When the text parses as a value of the type, the
 * value must type-check, print, and the printed text must parse back to
 * an equal value that prints the same text again.  The text is also
 * parsed as a call `name(args)` of a function taking the type twice
 * (an optional first parameter), through wave_parse_call.
 *
 * Contract: any text may be refused with a wave_error (offset within the
 * input); nothing may crash, leak, trip a sanitizer or fail the round
 * trip (abort).  Built only with --enable-fuzzing (clang).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "value/wave.h"
#include "random_type.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static __attribute__((noreturn)) void fail(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_wave: %s: %s\n", what, detail ? detail : "");
	abort();
}

static const cm_type *lookup(void *env, const char *name, size_t len)
{
	(void)name;
	(void)len;
	return env;
}

/* func(f0: option<t>, f1: t): trailing options may be omitted. */
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
	f->u.func.result = t;
	cm_type_finish(f);
	return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ft_pool *pool;
	ft_in tin;
	const cm_type *t, *ft;
	const char *text;
	size_t len;
	wave_error err;
	cm_val v, back;
	char *out = NULL, *out2 = NULL;
	size_t outlen, outlen2;
	char why[160];
	wave_call call;

	if (size == 0)
		return 0;
	tin.p = data + 1;
	tin.n = data[0] < size - 1 ? data[0] : size - 1;
	text = (const char *)tin.p + tin.n;
	len = size - 1 - tin.n;
	pool = calloc(1, sizeof *pool);
	if (pool == NULL)
		return 0;
	t = ft_type(pool, &tin, 0, false);

	if (wave_parse(text, len, t, &v, &err) != 0) {
		if (err.offset > len)
			fail("error offset beyond the input", err.msg);
	} else {
		if (!cm_val_typecheck(&v, t, why, sizeof why))
			fail("parsed value does not type-check", why);
		if (wave_print(&v, t, &out, &outlen) != 0)
			fail("print of a parsed value", NULL);
		if (strlen(out) != outlen)
			fail("printed length", out);
		if (wave_parse(out, outlen, t, &back, &err) != 0)
			fail("printed text does not parse", err.msg);
		if (!cm_val_equal(&v, &back))
			fail("parse(print(v)) != v", out);
		if (wave_print(&back, t, &out2, &outlen2) != 0 ||
		    outlen2 != outlen || memcmp(out, out2, outlen) != 0)
			fail("print(parse(print(v))) != print(v)", out);
		cm_val_free(&back);
		cm_val_free(&v);
		free(out);
		free(out2);
	}

	ft = func_of(pool, t);
	if (ft != NULL &&
	    wave_parse_call(text, len, lookup, (void *)ft, &call, &err) == 0) {
		if (call.nargs != 2)
			fail("call argument count", call.name);
		for (uint32_t i = 0; i < call.nargs; i++)
			if (!cm_val_typecheck(&call.args[i],
					      ft->u.func.params[i].type, why,
					      sizeof why))
				fail("call argument does not type-check", why);
		wave_call_free(&call);
	}
	ft_pool_free(pool);
	free(pool);
	return 0;
}
