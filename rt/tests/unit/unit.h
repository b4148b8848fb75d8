/* SPDX-License-Identifier: GPL-2.0 */
/* Minimal test harness; prints the "N passed, N failed" closing line. */
#ifndef UNIT_H
#define UNIT_H

#include <stdio.h>

static int unit_failed_checks;
static int unit_passed, unit_failed;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		unit_failed_checks++;					\
		printf("  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);\
	}								\
} while (0)

#define RUN(fn) do {							\
	int before = unit_failed_checks;				\
	fn();								\
	if (unit_failed_checks == before) {				\
		unit_passed++;						\
		printf("ok   %s\n", #fn);				\
	} else {							\
		unit_failed++;						\
		printf("FAIL %s\n", #fn);				\
	}								\
} while (0)

static inline int unit_summary(void)
{
	printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed != 0;
}

#endif /* UNIT_H */
