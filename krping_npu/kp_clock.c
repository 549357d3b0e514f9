// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_clock.c - which clock the timed loops read, and its factor.
 */
#include <linux/delay.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/math64.h>

#include "kp_clock.h"

/* the span a test's factor is calibrated over */
#define KP_CAL_US	2000

static const char * const kp_clock_names[] = {
	[KP_CLOCK_KTIME] = "ktime_get_ns",
	[KP_CLOCK_TSC] = "tsc",
	[KP_CLOCK_CNTVCT] = "cntvct",
};

static enum kp_clock_kind kp_clock_kind;
static bool kp_clock_forced;

/* The cycle counter this CPU has, invariant or not. */
static enum kp_clock_kind kp_clock_counter(void)
{
#if defined(CONFIG_X86_64)
	if (boot_cpu_has(X86_FEATURE_TSC))
		return KP_CLOCK_TSC;
#elif defined(CONFIG_ARM64)
	return KP_CLOCK_CNTVCT;
#endif
	return KP_CLOCK_KTIME;
}

/* Whether that counter runs at one rate on every CPU, always. */
static bool kp_clock_invariant(void)
{
#if defined(CONFIG_X86_64)
	return boot_cpu_has(X86_FEATURE_TSC) &&
	       boot_cpu_has(X86_FEATURE_CONSTANT_TSC) &&
	       boot_cpu_has(X86_FEATURE_NONSTOP_TSC) &&
	       !check_tsc_unstable();
#elif defined(CONFIG_ARM64)
	return true;
#else
	return false;
#endif
}

/*
 * @want: "auto" (the counter where it is invariant, ktime_get_ns()
 * elsewhere), "ktime_get_ns", or the counter by name ("tsc", "cntvct"),
 * which a CPU that has it gets even where it is not invariant: a test of
 * the counter's path, whose figures are then as good as the counter.
 * Returns 0, -EINVAL (no such clock) or -EOPNOTSUPP (not on this CPU).
 */
int kp_clock_choose(const char *want)
{
	int i;

	if (!want || !*want || !strcmp(want, "auto")) {
		kp_clock_kind = kp_clock_invariant() ? kp_clock_counter() :
			       KP_CLOCK_KTIME;
		kp_clock_forced = false;
		return 0;
	}
	i = match_string(kp_clock_names, ARRAY_SIZE(kp_clock_names), want);
	if (i < 0)
		return -EINVAL;
	if (i != KP_CLOCK_KTIME && i != kp_clock_counter())
		return -EOPNOTSUPP;
	kp_clock_kind = i;
	kp_clock_forced = i != KP_CLOCK_KTIME;
	return 0;
}

const char *kp_clock_name(void)
{
	return kp_clock_names[kp_clock_kind];
}

/* One reading of the counter, and ktime_get_ns() around it: their middle. */
static void kp_clock_pair(u64 *ns, u64 *cyc)
{
	unsigned long flags;
	u64 a, b;

	local_irq_save(flags);
	a = ktime_get_ns();
	*cyc = kp_cycles();
	b = ktime_get_ns();
	local_irq_restore(flags);
	*ns = a + (b - a) / 2;
}

/*
 * A test starts: its factor, from the cycles the counter makes in
 * KP_CAL_US of ktime_get_ns() (asleep: no CPU is spent).  A TSC the
 * kernel has found unstable since the load, unless forced, or a counter
 * that gave no factor: the test reads ktime_get_ns().
 */
void kp_clock_calibrate(struct kp_clock *k)
{
	u64 ns0, cyc0, ns1, cyc1;

	k->cycles = false;
	if (kp_clock_kind == KP_CLOCK_KTIME ||
	    (!kp_clock_forced && !kp_clock_invariant()))
		return;
	kp_clock_pair(&ns0, &cyc0);
	usleep_range(KP_CAL_US, KP_CAL_US + KP_CAL_US / 4);
	kp_clock_pair(&ns1, &cyc1);
	if (cyc1 <= cyc0 || ns1 <= ns0 ||
	    kp_cyc_factor(ns1 - ns0, cyc1 - cyc0, &k->mult, &k->shift))
		return;
	k->cycles = true;
}

#define KP_CLOCK_READS	10000

/*
 * The cost of one read of the timed loops' clock, ns, as a test would read
 * it: the mean of KP_CLOCK_READS back to back.
 */
u32 kp_clock_read_ns(void)
{
	struct kp_clock k;
	u64 t0, t1 = 0;
	u32 i;

	kp_clock_calibrate(&k);
	t0 = kp_clock_now(&k);
	for (i = 0; i < KP_CLOCK_READS; i++)
		t1 = kp_clock_now(&k);
	return (u32)div_u64(t1 - t0, KP_CLOCK_READS);
}
