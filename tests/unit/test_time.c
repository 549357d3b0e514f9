// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_time.c - kp_time_left() (krping_npu/kp_time.h): what a bounded
 * wait hands to schedule_timeout().  Never negative, whether the deadline
 * passed a tick ago, two ticks ago (a caller interrupted between its check
 * and its wait: the value the code before this helper computed was then
 * -2) or long ago, and right across the wrap of jiffies.
 *
 * kp_cyc_factor() and kp_cyc_ns(): the timed loops' cycle counter read as
 * nanoseconds.  For counters from 1 MHz (some arm64 timers) to 5 GHz (a
 * TSC), calibrated over spans from 2 ms (a test's) to an hour, a second's
 * worth of cycles reads as a second within a part per million; the
 * conversion is exact against 128-bit arithmetic and never goes back.
 */
#include <limits.h>

#include "kt.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#include "../../krping_npu/kp_time.h"

static void check_cycles(void)
{
	static const unsigned long long hz[] = {
		1000000, 19200000, 24000000, 62500000, 1000000000,
		2100000000, 3000000000ULL, 4200000000ULL, 5000000000ULL,
	};
	static const unsigned long long span_ns[] = {
		2000000, 1000000000, 3600000000000ULL,
	};
	unsigned long long x = 88172645463325252ULL;
	unsigned int mult = 0, shift = 0;
	unsigned int i, j, k;

	for (i = 0; i < ARRAY_SIZE(hz); i++) {
		for (j = 0; j < ARRAY_SIZE(span_ns); j++) {
			unsigned long long dns = span_ns[j];
			/* the cycles the counter made in that span */
			unsigned long long dcyc = (unsigned long long)
				((__uint128_t)dns * hz[i] / 1000000000);
			unsigned long long sec, err;

			KT_CHECK(kp_cyc_factor(dns, dcyc, &mult, &shift) == 0 &&
				 shift <= 32,
				 "%llu Hz over %llu ns: no factor", hz[i], dns);
			sec = kp_cyc_ns(hz[i], mult, shift);
			err = sec > 1000000000 ? sec - 1000000000 : 1000000000 - sec;
			KT_CHECK(err <= 1000 + 1,
				 "%llu Hz over %llu ns: mult %u shift %u reads a second as %llu ns",
				 hz[i], dns, mult, shift, sec);
			/* exact, and monotonic, at random counts whose ns fit */
			for (k = 0; k < 2000; k++) {
				unsigned long long c, want, got;

				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				c = x >> (k % 40);
				want = (unsigned long long)
					(((__uint128_t)c * mult) >> shift);
				if (((__uint128_t)c * mult) >> shift >> 63)
					continue;
				got = kp_cyc_ns(c, mult, shift);
				if (got != want || kp_cyc_ns(c + 1, mult, shift) < got) {
					KT_CHECK(0,
						 "%llu cycles, mult %u shift %u: %llu ns, want %llu",
						 c, mult, shift, got, want);
					break;
				}
			}
			KT_CHECK(k == 2000, "%llu Hz over %llu ns: conversion", hz[i], dns);
		}
	}
	/* no span, no cycles, or a cycle of over 4 s: no factor */
	KT_CHECK(kp_cyc_factor(0, 100, &mult, &shift) == -1, "no time: a factor");
	KT_CHECK(kp_cyc_factor(2000000, 0, &mult, &shift) == -1, "no cycles: a factor");
	KT_CHECK(kp_cyc_factor(5000000000ULL, 1, &mult, &shift) == -1,
		 "one cycle in 5 s: a factor");
	/* a span too long to shift by 32: a smaller shift, within 1 ppm */
	KT_CHECK(kp_cyc_factor(1ULL << 40, 3ULL << 40, &mult, &shift) == 0 &&
		 shift < 32 && kp_cyc_ns(3000000000ULL, mult, shift) >= 999999000 &&
		 kp_cyc_ns(3000000000ULL, mult, shift) <= 1000001000,
		 "a 1100 s span at 3 GHz: mult %u shift %u", mult, shift);
}

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
	check_cycles();
	return kt_done();
}
