/*
 * test_exportname.c - the resolver of function export names
 * (runtime/run/exportname.h): exact names, unqualified and
 * unversioned names, exact names winning over partial matches,
 * ambiguous names with their matches, and names that match nothing with
 * the closest candidates and the count of exports; the bounds (a long
 * query, more candidates than are kept).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/exportname.h"
#include "testmain.h"

static const cm_export_ref calc[] = {
	{NULL, "ping"},
	{"hostel:calc/api@0.1.0", "add"},
	{"hostel:calc/api@0.1.0", "greet"},
	{"hostel:calc/api@0.1.0", "log-now"},
	{"hostel:other/api@2.0.0", "add"},
	{"hostel:other/api@2.0.0", "ping"},
	{"wasi:cli/run@0.2.12", "run"},
};
#define NCALC (sizeof(calc) / sizeof(calc[0]))

static cm_name_resolution res;

static void resolve(const char *q)
{
	cm_export_name_resolve(calc, NCALC, q, strlen(q), &res);
}

/* The full name of candidate i. */
static const char *cand(uint32_t i)
{
	static char buf[128];

	cm_export_ref_format(&res.candidates[i], buf, sizeof buf);
	return buf;
}

static const char *found(void)
{
	static char buf[128];

	cm_export_ref_format(&res.found, buf, sizeof buf);
	return buf;
}

START_TEST(exact_names)
{
	resolve("hostel:calc/api@0.1.0#greet");
	ck_assert_int_eq(res.match, CM_NAME_FOUND);
	ck_assert_str_eq(found(), "hostel:calc/api@0.1.0#greet");
	ck_assert(!res.partial);
	resolve("wasi:cli/run@0.2.12#run");
	ck_assert_int_eq(res.match, CM_NAME_FOUND);
	ck_assert_str_eq(found(), "wasi:cli/run@0.2.12#run");
	/* the root's ping wins over hostel:other/api@2.0.0#ping */
	resolve("ping");
	ck_assert_int_eq(res.match, CM_NAME_FOUND);
	ck_assert_str_eq(found(), "ping");
	ck_assert(!res.partial);
	ck_assert_int_eq(res.total, NCALC);
}
END_TEST

START_TEST(unqualified_names)
{
	resolve("greet");
	ck_assert_int_eq(res.match, CM_NAME_FOUND);
	ck_assert_str_eq(found(), "hostel:calc/api@0.1.0#greet");
	ck_assert(res.partial);
	resolve("log-now");
	ck_assert_int_eq(res.match, CM_NAME_FOUND);
	ck_assert_str_eq(found(), "hostel:calc/api@0.1.0#log-now");
	resolve("run");
	ck_assert_int_eq(res.match, CM_NAME_FOUND);
	ck_assert_str_eq(found(), "wasi:cli/run@0.2.12#run");
}
END_TEST

START_TEST(unversioned_names)
{
	resolve("hostel:calc/api#greet");
	ck_assert_int_eq(res.match, CM_NAME_FOUND);
	ck_assert_str_eq(found(), "hostel:calc/api@0.1.0#greet");
	/* unversioned disambiguates what the bare name cannot */
	resolve("hostel:other/api#add");
	ck_assert_int_eq(res.match, CM_NAME_FOUND);
	ck_assert_str_eq(found(), "hostel:other/api@2.0.0#add");
	resolve("wasi:cli/run#run");
	ck_assert_int_eq(res.match, CM_NAME_FOUND);
	ck_assert_str_eq(found(), "wasi:cli/run@0.2.12#run");
	/* a wrong version is not a match */
	resolve("hostel:calc/api@0.2.0#greet");
	ck_assert_int_eq(res.match, CM_NAME_NOT_FOUND);
	ck_assert_uint_eq(res.ncandidates, 1);
	ck_assert_str_eq(cand(0), "hostel:calc/api@0.1.0#greet");
}
END_TEST

START_TEST(ambiguous_names)
{
	resolve("add");
	ck_assert_int_eq(res.match, CM_NAME_AMBIGUOUS);
	ck_assert_uint_eq(res.nmatches, 2);
	ck_assert_uint_eq(res.ncandidates, 2);
	ck_assert_str_eq(cand(0), "hostel:calc/api@0.1.0#add");
	ck_assert_str_eq(cand(1), "hostel:other/api@2.0.0#add");
}
END_TEST

START_TEST(no_match_with_candidates)
{
	/* misspelt */
	resolve("grete");
	ck_assert_int_eq(res.match, CM_NAME_NOT_FOUND);
	ck_assert_uint_eq(res.total, NCALC);
	ck_assert_uint_eq(res.ncandidates, 1);
	ck_assert_str_eq(cand(0), "hostel:calc/api@0.1.0#greet");
	/* a shared suffix of the interface name */
	resolve("api#greet");
	ck_assert_int_eq(res.match, CM_NAME_NOT_FOUND);
	ck_assert_uint_eq(res.ncandidates, 1);
	ck_assert_str_eq(cand(0), "hostel:calc/api@0.1.0#greet");
	resolve("calc/api#log-now");
	ck_assert_uint_eq(res.ncandidates, 1);
	ck_assert_str_eq(cand(0), "hostel:calc/api@0.1.0#log-now");
	/* closest first: `ad` is 1 from each add, ... */
	resolve("ad");
	ck_assert_int_eq(res.match, CM_NAME_NOT_FOUND);
	ck_assert_uint_eq(res.ncandidates, 2);
	ck_assert_str_eq(cand(0), "hostel:calc/api@0.1.0#add");
	/* ... `pnig` is 2 from ping, beyond a short name's 1 */
	resolve("pnig");
	ck_assert_uint_eq(res.ncandidates, 0);
	resolve("log-nwo");
	ck_assert_uint_eq(res.ncandidates, 1);
	ck_assert_str_eq(cand(0), "hostel:calc/api@0.1.0#log-now");
	/* nothing near */
	resolve("frobnicate");
	ck_assert_int_eq(res.match, CM_NAME_NOT_FOUND);
	ck_assert_uint_eq(res.ncandidates, 0);
	ck_assert_uint_eq(res.total, NCALC);
	/* an empty list */
	cm_export_name_resolve(NULL, 0, "x", 1, &res);
	ck_assert_int_eq(res.match, CM_NAME_NOT_FOUND);
	ck_assert_uint_eq(res.total, 0);
}
END_TEST

START_TEST(bounds)
{
	cm_export_ref many[12];
	char ifaces[12][32];
	size_t n = 100000;
	char *big = malloc(n);

	/* more matches than are kept: the first ones, and the count */
	for (int i = 0; i < 12; i++) {
		snprintf(ifaces[i], sizeof ifaces[i], "ns:pkg/i%d@1.0.0", i);
		many[i].iface = ifaces[i];
		many[i].name = "f";
	}
	cm_export_name_resolve(many, 12, "f", 1, &res);
	ck_assert_int_eq(res.match, CM_NAME_AMBIGUOUS);
	ck_assert_uint_eq(res.nmatches, 12);
	ck_assert_uint_eq(res.ncandidates, CM_NAME_CANDIDATES_MAX);
	ck_assert_str_eq(cand(0), "ns:pkg/i0@1.0.0#f");
	cm_export_name_resolve(many, 12, "g", 1, &res);
	ck_assert_int_eq(res.match, CM_NAME_NOT_FOUND);
	ck_assert_uint_eq(res.ncandidates, CM_NAME_CANDIDATES_MAX);
	/* a long query (a client's) is only compared, never measured */
	ck_assert_ptr_nonnull(big);
	memset(big, 'a', n);
	cm_export_name_resolve(calc, NCALC, big, n, &res);
	ck_assert_int_eq(res.match, CM_NAME_NOT_FOUND);
	ck_assert_uint_eq(res.ncandidates, 0);
	/* a name with an embedded NUL matches nothing */
	cm_export_name_resolve(calc, NCALC, "greet\0x", 7, &res);
	ck_assert_int_eq(res.match, CM_NAME_NOT_FOUND);
	free(big);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("exportname");
	TCase *t = tcase_create("resolve");

	tcase_add_test(t, exact_names);
	tcase_add_test(t, unqualified_names);
	tcase_add_test(t, unversioned_names);
	tcase_add_test(t, ambiguous_names);
	tcase_add_test(t, no_match_with_candidates);
	tcase_add_test(t, bounds);
	suite_add_tcase(s, t);
	return s;
}
