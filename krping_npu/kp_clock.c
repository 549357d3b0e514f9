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
#if defined(CONFIG_X86_64)
#include <asm/tsc.h>
#elif defined(CONFIG_ARM64)
#include <asm/arch_timer.h>
#endif

#include "kp_clock.h"

/* the span a test's factor is calibrated over */
#define KP_CAL_US	2000
/* reads of (ktime, counter, ktime) at each end of it, the narrowest taken */
#define KP_CAL_TRIES	8

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

/* The clock a test with @k reads, by name. */
const char *kp_clock_of(const struct kp_clock *k)
{
	return kp_clock_names[k->cycles ? kp_clock_kind : KP_CLOCK_KTIME];
}

/*
 * The counter, read apart from the timed loops: calibration's one read,
 * which a test may stall (tests/fault/kpdelay.c) as a host stalls a vCPU.
 */
static noinline u64 kp_clock_cal_read(void)
{
	return kp_cycles();
}

/*
 * The counter and ktime_get_ns() around it, KP_CAL_TRIES times: the
 * middle of the narrowest, in *@ns.  Returns its width, ns.
 */
static u64 kp_clock_pair(u64 *ns, u64 *cyc)
{
	u64 a, b, c, best = U64_MAX;
	unsigned long flags;
	int i;

	for (i = 0; i < KP_CAL_TRIES; i++) {
		local_irq_save(flags);
		a = ktime_get_ns();
		c = kp_clock_cal_read();
		b = ktime_get_ns();
		local_irq_restore(flags);
		if (b - a < best) {
			best = b - a;
			*ns = a + best / 2;
			*cyc = c;
		}
	}
	return best;
}

/*
 * The counter's rate as the system states it, Hz; 0: not stated here.
 * arm64: CNTFRQ_EL0, which firmware sets (a device tree's
 * clock-frequency may override it for the kernel's own timer).
 */
static u64 kp_clock_kernel_hz(void)
{
#if defined(CONFIG_X86_64)
	/* the rate the kernel's own clocksource runs the TSC at */
	return kp_clock_invariant() ? (u64)tsc_khz * 1000 : 0;
#elif defined(CONFIG_ARM64)
	return arch_timer_get_cntfrq();
#else
	return 0;
#endif
}

/*
 * A test starts: its factor, from the counter's rate as the kernel has
 * it, else from the cycles it makes in KP_CAL_US of ktime_get_ns()
 * (asleep: no CPU is spent), each end read as kp_clock_pair() does.  A
 * TSC the kernel has found unstable since the load, unless forced, or a
 * counter that gave no factor (@k->cal_failed): ktime_get_ns().
 */
void kp_clock_calibrate(struct kp_clock *k)
{
	u64 ns0, cyc0, ns1, cyc1, w0 = 0, w1 = 0, hz;

	memset(k, 0, sizeof(*k));
	if (kp_clock_kind == KP_CLOCK_KTIME ||
	    (!kp_clock_forced && !kp_clock_invariant()))
		return;
	hz = kp_clock_kernel_hz();
	if (hz) {
		if (kp_cyc_factor(NSEC_PER_SEC, hz, &k->mult, &k->shift))
			goto failed;
		k->khz = (u32)div_u64(hz, 1000);
		k->cycles = true;
		return;
	}
	k->measured = true;
	w0 = kp_clock_pair(&ns0, &cyc0);
	if (w0 > KP_CAL_WIDTH_NS)
		goto failed;
	usleep_range(KP_CAL_US, KP_CAL_US + KP_CAL_US / 4);
	w1 = kp_clock_pair(&ns1, &cyc1);
	if (w1 > KP_CAL_WIDTH_NS || cyc1 <= cyc0 || ns1 <= ns0 ||
	    kp_cyc_factor(ns1 - ns0, cyc1 - cyc0, &k->mult, &k->shift))
		goto failed;
	k->khz = (u32)div64_u64((cyc1 - cyc0) * USEC_PER_SEC, ns1 - ns0);
	k->cal_ns = (u32)max(w0, w1);
	k->cycles = true;
	return;
failed:
	k->cal_failed = true;
	k->cal_ns = (u32)min_t(u64, max(w0, w1), U32_MAX);
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
