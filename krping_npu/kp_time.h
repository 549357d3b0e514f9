/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kp_time.h - the arithmetic of bounded waits and of the timed loops'
 * cycle counter, in plain C so that the userspace unit tests check it
 * (tests/unit/test_time.c).
 */
#ifndef KP_TIME_H
#define KP_TIME_H

/*
 * What is left of a wait ending at @deadline, at @now (jiffies, which
 * wrap), never negative: a deadline passed by any amount leaves 0, which
 * the caller takes as "over".  schedule_timeout() refuses a negative
 * timeout with a stack dump, and a caller interrupted between its check
 * of the deadline and its wait may be two ticks or more past it.
 */
static inline long kp_time_left(unsigned long deadline, unsigned long now)
{
	long left = (long)(deadline - now);

	return left > 0 ? left : 0;
}

/*
 * A cycle counter read as nanoseconds: @cyc * @mult >> @shift, exact (the
 * low and high halves apart, as the kernel's mul_u64_u32_shr()), for any
 * @cyc whose nanoseconds fit in 64 bits.  @shift: 0 to 32.
 */
static inline unsigned long long kp_cyc_ns(unsigned long long cyc,
					   unsigned int mult,
					   unsigned int shift)
{
	unsigned long long hi = (cyc >> 32) * mult;
	unsigned long long lo = (cyc & 0xffffffffULL) * mult;

	return (hi << (32 - shift)) + (lo >> shift);
}

/*
 * The factor that turns a counter's cycles into nanoseconds, from one
 * span of @dns ns in which it counted @dcyc: the largest @shift (32 at
 * most) whose @mult = (@dns << @shift) / @dcyc still fits in 32 bits and
 * whose @dns << @shift does in 64.  Returns 0, or -1 for a span that
 * gives no factor (no cycles, no time, or a counter so slow that one
 * cycle is over 4 s).
 */
static inline int kp_cyc_factor(unsigned long long dns,
				unsigned long long dcyc,
				unsigned int *mult, unsigned int *shift)
{
	unsigned int s = 32;
	unsigned long long m;

	if (!dns || !dcyc)
		return -1;
	while (s && dns >> (64 - s))
		s--;
	for (;;) {
		m = (dns << s) / dcyc;
		if (m <= 0xffffffffULL)
			break;
		if (!s)
			return -1;
		s--;
	}
	if (!m)
		return -1;
	*mult = (unsigned int)m;
	*shift = s;
	return 0;
}

#endif /* KP_TIME_H */
