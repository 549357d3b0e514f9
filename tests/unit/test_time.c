// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_time.c - kp_time_left() (krping_npu/kp_time.h): what a bounded
 * wait hands to schedule_timeout().  Never negative, whether the deadline
 * passed a tick ago, two ticks ago (a caller interrupted between its check
 * and its wait: the value the code before this helper computed was then
 * -2) or long ago, and right across the wrap of jiffies.
 */
#include <limits.h>

#include "kt.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#include "../../krping_npu/kp_time.h"

int main(void)
{
	static const unsigned long bases[] = {
		0, 1, 300, 4294667296UL, ULONG_MAX - 1, ULONG_MAX, LONG_MAX,
		(unsigned long)LONG_MAX + 1,
	};
	static const long ahead[] = { 1, 2, 250, 100000, LONG_MAX };
	static const unsigned long behind[] = { 0, 1, 2, 3, 1000, LONG_MAX };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(bases); i++) {
		unsigned long d = bases[i];

		/* before the deadline: exactly what is left, across the wrap */
		for (j = 0; j < ARRAY_SIZE(ahead); j++) {
			unsigned long now = d - (unsigned long)ahead[j];

			KT_CHECK(kp_time_left(d, now) == ahead[j],
				 "deadline %lu, now %lu: %ld left, want %ld",
				 d, now, kp_time_left(d, now), ahead[j]);
		}
		/* at it or past it, by any amount: 0, never negative */
		for (j = 0; j < ARRAY_SIZE(behind); j++) {
			unsigned long now = d + behind[j];

			KT_CHECK(kp_time_left(d, now) == 0,
				 "deadline %lu, now %lu (%lu past): %ld left, want 0",
				 d, now, behind[j], kp_time_left(d, now));
		}
	}
	return kt_done();
}
