/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kp_compat.h - the few types and helpers proc/ needs, from the kernel when
 * built into krping_npu.ko and from libc when built into the unit tests.
 */
#ifndef KP_COMPAT_H
#define KP_COMPAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/bitops.h>
#include <linux/sort.h>
#ifdef KP_HAVE_LINUX_STDARG_H
#include <linux/stdarg.h>
#else
#include <stdarg.h>
#endif
#else
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;	/* the kernel's, for the unit tests */
typedef int64_t s64;
#define U64_MAX	UINT64_MAX
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* the kernel's own __printf(), for the unit tests' build */
#define __printf(a, b)	__attribute__((__format__(printf, a, b)))
#endif

/*
 * a * b / c without overflowing the product; U64_MAX where the quotient
 * does not fit in 64 bits (x86's divq, under mul_u64_u64_div_u64, traps
 * there) or c is 0.
 */
static inline u64 kp_mul_div(u64 a, u64 b, u64 c)
{
	if (!c || (u64)(((__uint128_t)a * b) >> 64) >= c)
		return U64_MAX;
#ifdef __KERNEL__
	return mul_u64_u64_div_u64(a, b, c);
#else
	return (u64)((__uint128_t)a * b / c);
#endif
}

/* the 1-based position of @v's highest set bit; 0 for 0 */
static inline unsigned int kp_fls64(u64 v)
{
#ifdef __KERNEL__
	return fls64(v);
#else
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
#endif
}

static inline u64 kp_div(u64 a, u64 b)
{
#ifdef __KERNEL__
	return div64_u64(a, b);
#else
	return a / b;
#endif
}

#endif /* KP_COMPAT_H */
