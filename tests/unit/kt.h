/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* kt.h - a minimal assertion counter for the userspace unit tests. */
#ifndef KT_H
#define KT_H

#include <stdio.h>

static int kt_pass, kt_fail;

#define KT_CHECK(cond, ...) do {					\
	if (cond) {							\
		kt_pass++;						\
	} else {							\
		kt_fail++;						\
		printf("FAIL %s:%d: ", __FILE__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	}								\
} while (0)

/* Prints "N passed, N failed"; the exit status: 1 on any failure. */
static inline int kt_done(void)
{
	printf("%d passed, %d failed\n", kt_pass, kt_fail);
	return kt_fail ? 1 : 0;
}

#endif
