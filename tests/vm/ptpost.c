// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ptpost.so - LD_PRELOAD into a perftest tool: time each write(2) the
 * verbs provider makes on a uverbs device (rxe's doorbell: one a post),
 * with the cycle counter, and print at exit per uverbs command
 *   KPPOST cmd=<n> calls=<n> ns_avg=<f> ns_min=<f> ns_sum=<f> tsc_pair_ns=<f>
 * to stderr.  tsc_pair_ns is two back-to-back counter reads: the cost
 * the timing adds to each call.  x86 only (the bench's rig).
 * Build: gcc -O2 -shared -fPIC -o ptpost.so ptpost.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define PT_FDS 1024
#define PT_CMDS 64

static ssize_t (*real_write)(int, const void *, size_t);
/* 0: not looked at yet, 1: a uverbs device, 2: anything else */
static unsigned char fd_kind[PT_FDS];
static uint64_t calls[PT_CMDS], cyc_sum[PT_CMDS], cyc_min[PT_CMDS];
static uint64_t tsc0, pair_min = UINT64_MAX;
static struct timespec ts0;

static int is_uverbs(int fd)
{
	char link[64], dst[128];
	ssize_t n;

	if (fd < 0 || fd >= PT_FDS)
		return 0;
	if (!fd_kind[fd]) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, dst, sizeof(dst) - 1);
		dst[n > 0 ? n : 0] = 0;
		fd_kind[fd] = strstr(dst, "/dev/infiniband/uverbs") ? 1 : 2;
	}
	return fd_kind[fd] == 1;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	uint64_t t0, d;
	uint32_t cmd;
	ssize_t ret;

	if (!real_write)
		real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (len < sizeof(cmd) || !is_uverbs(fd))
		return real_write(fd, buf, len);
	/* the command header's first word; the extended flag's high bits off */
	memcpy(&cmd, buf, sizeof(cmd));
	cmd &= 0xff;
	t0 = __rdtsc();
	ret = real_write(fd, buf, len);
	d = __rdtsc() - t0;
	if (cmd < PT_CMDS) {
		if (!calls[cmd]++ || d < cyc_min[cmd])
			cyc_min[cmd] = d;
		cyc_sum[cmd] += d;
	}
	return ret;
}

__attribute__((constructor)) static void ptpost_init(void)
{
	uint64_t a, b;
	int i;

	for (i = 0; i < 1000; i++) {
		a = __rdtsc();
		b = __rdtsc();
		if (b - a < pair_min)
			pair_min = b - a;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts0);
	tsc0 = __rdtsc();
}

__attribute__((destructor)) static void ptpost_fini(void)
{
	struct timespec ts1;
	double ns, per;
	uint64_t tsc1;
	int c;

	tsc1 = __rdtsc();
	clock_gettime(CLOCK_MONOTONIC, &ts1);
	/* counter rate over the process's life: no clock read per call */
	ns = (ts1.tv_sec - ts0.tv_sec) * 1e9 + (ts1.tv_nsec - ts0.tv_nsec);
	if (ns <= 0 || tsc1 <= tsc0)
		return;
	per = ns / (double)(tsc1 - tsc0);
	for (c = 0; c < PT_CMDS; c++)
		if (calls[c])
			fprintf(stderr, "KPPOST cmd=%d calls=%llu ns_avg=%.1f ns_min=%.1f ns_sum=%.0f tsc_pair_ns=%.1f\n",
				c, (unsigned long long)calls[c], cyc_sum[c] * per / calls[c],
				cyc_min[c] * per, cyc_sum[c] * per, pair_min * per);
}
