/* Minimal assertions for the host unit tests: each failed check is
 * reported with its line, and the test exits non-zero at the end. */
#ifndef GRABBER_TESTS_CHECK_H
#define GRABBER_TESTS_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(condition)                                                                \
	do {                                                                            \
		if (!(condition)) {                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#condition);                                            \
			check_failures++;                                               \
		}                                                                       \
	} while (0)

/* For integers: shows both values when they differ. */
#define CHECK_EQ(actual, expected)                                                      \
	do {                                                                            \
		long long actual_ = (long long)(actual), expected_ = (long long)(expected); \
		if (actual_ != expected_) {                                             \
			fprintf(stderr, "%s:%d: %s is %lld, expected %lld\n", __FILE__,   \
				__LINE__, #actual, actual_, expected_);                 \
			check_failures++;                                               \
		}                                                                       \
	} while (0)

static inline int check_summary(const char *test)
{
	if (check_failures != 0) {
		fprintf(stderr, "%s: %d check(s) failed\n", test, check_failures);
		return 1;
	}
	printf("%s: ok\n", test);
	return 0;
}

#endif
