/*
 * testmain.h - the shared entry point of hostel's Check unit tests.
 *
 * Each test program defines `Suite *make_suite(void)` and includes this
 * header once; main() runs the suite and ends with the line
 * "N passed, N failed" that CI and the project's drivers read.
 */
#ifndef HOSTEL_TESTMAIN_H
#define HOSTEL_TESTMAIN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

Suite *make_suite(void);

int main(void)
{
	SRunner *sr = srunner_create(make_suite());
	int total, failed;

	srunner_run_all(sr, CK_NORMAL);
	total = srunner_ntests_run(sr);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	printf("%d passed, %d failed\n", total - failed, failed);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif
