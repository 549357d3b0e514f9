/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kp_clock.h - the clock of the timed loops.
 *
 * Where the CPU has a cycle counter that runs at one rate on every CPU and
 * in every state (x86: a constant, nonstop TSC that the kernel has not
 * found unstable; arm64: the generic timer's count), the timed loops read
 * it and turn its cycles into nanoseconds with a factor from the rate the
 * system states (tsc_khz, CNTFRQ_EL0), or where it states none (a counter
 * forced) one calibrated against ktime_get_ns() as each test starts.
 * Elsewhere they read ktime_get_ns(),
 * whose cost is the clocksource's: an emulated HPET read is microseconds.
 * Every sample, deadline and rate of a run is on its test's clock.
 */
#ifndef KP_CLOCK_H
#define KP_CLOCK_H

#include <linux/types.h>
#include <linux/ktime.h>
#include <linux/timex.h>

#include "kp_time.h"

enum kp_clock_kind {
	KP_CLOCK_KTIME,
	KP_CLOCK_TSC,
	KP_CLOCK_CNTVCT,
};

/*
 * A calibration read of (ktime, counter, ktime) wider than this (a vCPU
 * descheduled inside it) is none: at most 0.25% of the span it measures
 * on either side of its middle.
 */
#define KP_CAL_WIDTH_NS	10000

/* A test's clock: the counter and its factor, or ktime_get_ns(). */
struct kp_clock {
	bool cycles;
	unsigned int mult;
	unsigned int shift;
	u32 khz;		/* the counter's rate; 0: ktime_get_ns() */
	/*
	 * ns: the wider of the two (ktime, counter, ktime) reads the rate
	 * was measured from, the narrowest of each end's tries; 0: the rate
	 * is the kernel's (arm64's CNTFRQ_EL0, x86's tsc_khz), or none
	 */
	u32 cal_ns;
	bool measured;		/* the rate from calibration, not the kernel */
	bool cal_failed;	/* a counter was wanted; it gave no rate */
};

static __always_inline u64 kp_cycles(void)
{
#if defined(CONFIG_X86_64)
	return rdtsc_ordered();
#elif defined(CONFIG_ARM64)
	/* arch_timer_read_counter(): CNTVCT_EL0, read past the errata */
	return get_cycles();
#else
	return 0;
#endif
}

/* Now, ns, on @k: the one clock read a timed interval holds at each end. */
static __always_inline u64 kp_clock_now(const struct kp_clock *k)
{
	if (k->cycles)
		return kp_cyc_ns(kp_cycles(), k->mult, k->shift);
	return ktime_get_ns();
}

int kp_clock_choose(const char *want);
const char *kp_clock_name(void);
const char *kp_clock_of(const struct kp_clock *k);
void kp_clock_calibrate(struct kp_clock *k);
u32 kp_clock_read_ns(void);

#endif /* KP_CLOCK_H */
