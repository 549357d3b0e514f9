/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kp_time.h - the arithmetic of bounded waits, in plain C so that the
 * userspace unit tests check it (tests/unit/test_time.c).
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

#endif /* KP_TIME_H */
