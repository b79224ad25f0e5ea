/*
 * wast_value.c - JSON values of the core test scripts (see wast_value.h).
 *
 * Floats are handled as bit patterns throughout: the scripts give bits,
 * the engine returns bits, and comparisons are on bits (or on the NaN
 * class), so no host floating point is involved.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include "client/wast_value.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define F32_CANON 0x7fc00000u
#define F32_EXP	  0x7f800000u
#define F32_QUIET 0x00400000u
#define F64_CANON 0x7ff8000000000000ull
#define F64_EXP	  0x7ff0000000000000ull
#define F64_QUIET 0x0008000000000000ull

static int why_fail(char *why, size_t n, const char *fmt, const char *arg)
{
	if (why != NULL && n > 0)
		snprintf(why, n, fmt, arg);
	return -1;
}

/* A decimal integer of at most `bits` bits, signed or unsigned spelling. */
static int parse_int(const char *s, unsigned bits, uint64_t *out)
{
	char *end;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	if (*s == '-') {
		long long v = strtoll(s, &end, 10);

		if (errno || *end || (bits < 64 && v < -(1ll << (bits - 1))))
			return -1;
		*out = (uint64_t)v;
	} else {
		unsigned long long v = strtoull(s, &end, 10);

		if (errno || *end || (bits < 64 && v >> bits))
			return -1;
		*out = v;
	}
	if (bits < 64)
		*out &= (1ull << bits) - 1;
	return 0;
}

static const char *value_str(json_t *v)
{
	return json_string_value(json_object_get(v, "value"));
}

static int lane_bits(const char *lane_type, bool *is_float)
{
	static const struct {
		const char *name;
		int bits;
		bool is_float;
	} lanes[] = {
		{"i8", 8, false},   {"i16", 16, false}, {"i32", 32, false},
		{"i64", 64, false}, {"f32", 32, true},	{"f64", 64, true},
	};

	for (size_t i = 0; lane_type && i < sizeof lanes / sizeof lanes[0];
	     i++) {
		if (!strcmp(lane_type, lanes[i].name)) {
			*is_float = lanes[i].is_float;
			return lanes[i].bits;
		}
	}
	return 0;
}

static void v128_set_lane(wasm_v128 *v, int bits, size_t lane, uint64_t x)
{
	uint8_t b[16];

	memcpy(b, &v->lo, 8);
	memcpy(b + 8, &v->hi, 8);
	for (int k = 0; k < bits / 8; k++)
		b[lane * (size_t)(bits / 8) + (size_t)k] =
			(uint8_t)(x >> (8 * k));
	memcpy(&v->lo, b, 8);
	memcpy(&v->hi, b + 8, 8);
}

static uint64_t v128_get_lane(const wasm_v128 *v, int bits, size_t lane)
{
	uint8_t b[16];
	uint64_t x = 0;

	memcpy(b, &v->lo, 8);
	memcpy(b + 8, &v->hi, 8);
	for (int k = 0; k < bits / 8; k++)
		x |= (uint64_t)b[lane * (size_t)(bits / 8) + (size_t)k]
		     << (8 * k);
	return x;
}

static int parse_v128(json_t *v, wasm_v128 *out, char *why, size_t n)
{
	const char *lt = json_string_value(json_object_get(v, "lane_type"));
	json_t *lanes = json_object_get(v, "value");
	bool is_float;
	int bits = lane_bits(lt, &is_float);

	if (bits == 0 || !json_is_array(lanes) ||
	    json_array_size(lanes) != (size_t)(128 / bits))
		return why_fail(why, n, "bad v128 value (lane_type %s)",
				lt ? lt : "?");
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < json_array_size(lanes); i++) {
		uint64_t x;

		if (parse_int(json_string_value(json_array_get(lanes, i)),
			      (unsigned)bits, &x))
			return why_fail(why, n, "bad v128 lane in %s", "value");
		v128_set_lane(out, bits, i, x);
	}
	return 0;
}

int wast_value_parse_arg(json_t *v, wasm_val *out, char *why, size_t n)
{
	const char *type = json_string_value(json_object_get(v, "type"));
	const char *s = value_str(v);
	uint64_t x;

	memset(out, 0, sizeof *out);
	if (type == NULL)
		return why_fail(why, n, "argument without a type%s", "");
	if (!strcmp(type, "i32") || !strcmp(type, "f32")) {
		out->type = type[0] == 'i' ? WASM_I32 : WASM_F32;
		if (parse_int(s, 32, &x))
			return why_fail(why, n, "bad %s argument", type);
		out->u.i32 = (uint32_t)x;
		return 0;
	}
	if (!strcmp(type, "i64") || !strcmp(type, "f64")) {
		out->type = type[0] == 'i' ? WASM_I64 : WASM_F64;
		if (parse_int(s, 64, &x))
			return why_fail(why, n, "bad %s argument", type);
		out->u.i64 = x;
		return 0;
	}
	if (!strcmp(type, "v128")) {
		out->type = WASM_V128;
		return parse_v128(v, &out->u.v128, why, n);
	}
	if (!strcmp(type, "funcref") || !strcmp(type, "exnref")) {
		out->type = type[0] == 'f' ? WASM_FUNCREF : WASM_EXNREF;
		if (s != NULL && !strcmp(s, "null"))
			return 0;
		return why_fail(why, n, "%s argument other than null", type);
	}
	if (!strcmp(type, "externref")) {
		out->type = WASM_EXTERNREF;
		if (s != NULL && !strcmp(s, "null"))
			return 0;
		if (parse_int(s, 32, &x))
			return why_fail(why, n, "bad %s argument", type);
		out->u.ref = wasm_ref_extern((uint32_t)x);
		return 0;
	}
	return why_fail(why, n, "argument type %s not supported", type);
}

static bool f32_matches(const char *s, uint32_t bits)
{
	uint64_t x;

	if (s != NULL && !strcmp(s, "nan:canonical"))
		return (bits & 0x7fffffffu) == F32_CANON;
	if (s != NULL && !strcmp(s, "nan:arithmetic"))
		return (bits & (F32_EXP | F32_QUIET)) == (F32_EXP | F32_QUIET);
	return parse_int(s, 32, &x) == 0 && (uint32_t)x == bits;
}

static bool f64_matches(const char *s, uint64_t bits)
{
	uint64_t x;

	if (s != NULL && !strcmp(s, "nan:canonical"))
		return (bits & 0x7fffffffffffffffull) == F64_CANON;
	if (s != NULL && !strcmp(s, "nan:arithmetic"))
		return (bits & (F64_EXP | F64_QUIET)) == (F64_EXP | F64_QUIET);
	return parse_int(s, 64, &x) == 0 && x == bits;
}

static bool v128_matches(json_t *exp, const wasm_v128 *got)
{
	const char *lt = json_string_value(json_object_get(exp, "lane_type"));
	json_t *lanes = json_object_get(exp, "value");
	bool is_float;
	int bits = lane_bits(lt, &is_float);

	if (bits == 0 || !json_is_array(lanes) ||
	    json_array_size(lanes) != (size_t)(128 / bits))
		return false;
	for (size_t i = 0; i < json_array_size(lanes); i++) {
		const char *s = json_string_value(json_array_get(lanes, i));
		uint64_t lane = v128_get_lane(got, bits, i), x;

		if (is_float && bits == 32) {
			if (!f32_matches(s, (uint32_t)lane))
				return false;
		} else if (is_float) {
			if (!f64_matches(s, lane))
				return false;
		} else if (parse_int(s, (unsigned)bits, &x) || x != lane) {
			return false;
		}
	}
	return true;
}

/* Patterns that stand for a null reference of some type. */
static bool is_null_pattern(const char *type, const char *s)
{
	static const char *const null_types[] = {
		"nullref",    "nullfuncref", "nullexternref",
		"nullexnref", "refnull",
	};

	for (size_t i = 0; i < sizeof null_types / sizeof null_types[0]; i++)
		if (!strcmp(type, null_types[i]))
			return true;
	return s != NULL && !strcmp(s, "null");
}

static bool ref_matches(const char *type, const char *s, const wasm_val *got)
{
	uint32_t num, want;
	uint64_t x;

	if (!wasm_valtype_is_ref(got->type))
		return false;
	if (is_null_pattern(type, s))
		return got->u.ref == WASM_REF_NULL;
	if (got->u.ref == WASM_REF_NULL)
		return false;
	if (!strcmp(type, "funcref"))
		return s == NULL && (uint8_t)got->type == WASM_FUNCREF;
	if (!strcmp(type, "externref")) {
		if ((uint8_t)got->type != WASM_EXTERNREF)
			return false;
		if (s == NULL)
			return true;
		if (parse_int(s, 32, &x))
			return false;
		want = (uint32_t)x;
		return wasm_ref_extern_number(got->u.ref, &num) && num == want;
	}
	/* anyref, eqref, i31ref, ...: gc values, not produced here. */
	return false;
}

bool wast_value_matches(json_t *exp, const wasm_val *got, char *why, size_t n)
{
	const char *type = json_string_value(json_object_get(exp, "type"));
	const char *s = value_str(exp);
	uint8_t t = (uint8_t)got->type;
	uint64_t x;

	if (type == NULL) {
		why_fail(why, n, "expected value without a type%s", "");
		return false;
	}
	if (!strcmp(type, "either")) {
		json_t *alts = json_object_get(exp, "values");
		size_t i;
		json_t *alt;

		json_array_foreach(alts, i, alt)
		{
			if (wast_value_matches(alt, got, NULL, 0))
				return true;
		}
		return false;
	}
	if (!strcmp(type, "i32"))
		return t == WASM_I32 && parse_int(s, 32, &x) == 0 &&
		       (uint32_t)x == got->u.i32;
	if (!strcmp(type, "i64"))
		return t == WASM_I64 && parse_int(s, 64, &x) == 0 &&
		       x == got->u.i64;
	if (!strcmp(type, "f32"))
		return t == WASM_F32 && f32_matches(s, got->u.f32);
	if (!strcmp(type, "f64"))
		return t == WASM_F64 && f64_matches(s, got->u.f64);
	if (!strcmp(type, "v128"))
		return t == WASM_V128 && v128_matches(exp, &got->u.v128);
	return ref_matches(type, s, got);
}

void wast_value_format(const wasm_val *v, char *buf, size_t n)
{
	uint32_t num;

	switch ((uint8_t)v->type) {
	case WASM_I32:
		snprintf(buf, n, "i32:%" PRId32, (int32_t)v->u.i32);
		break;
	case WASM_I64:
		snprintf(buf, n, "i64:%" PRId64, (int64_t)v->u.i64);
		break;
	case WASM_F32:
		snprintf(buf, n, "f32:%" PRIu32 " (0x%08" PRIx32 ")", v->u.f32,
			 v->u.f32);
		break;
	case WASM_F64:
		snprintf(buf, n, "f64:%" PRIu64 " (0x%016" PRIx64 ")", v->u.f64,
			 v->u.f64);
		break;
	case WASM_V128:
		snprintf(buf, n, "v128:0x%016" PRIx64 "%016" PRIx64,
			 v->u.v128.hi, v->u.v128.lo);
		break;
	default:
		if (v->u.ref == WASM_REF_NULL)
			snprintf(buf, n, "%s:null", wasm_valtype_name(v->type));
		else if (wasm_ref_extern_number(v->u.ref, &num))
			snprintf(buf, n, "%s:extern %" PRIu32,
				 wasm_valtype_name(v->type), num);
		else
			snprintf(buf, n, "%s:non-null",
				 wasm_valtype_name(v->type));
		break;
	}
}

void wast_pattern_format(json_t *exp, char *buf, size_t n)
{
	char *s = json_dumps(exp, JSON_COMPACT | JSON_ENCODE_ANY);

	snprintf(buf, n, "%s", s ? s : "?");
	free(s);
}
