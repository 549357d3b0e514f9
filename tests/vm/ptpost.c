// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ptpost.so - LD_PRELOAD into a perftest tool: time each write(2) the
 * verbs provider makes on a uverbs device (rxe's doorbell: one a post),
 * with the cycle counter, and print at exit per uverbs command (28:
 * POST_SEND, 29: POST_RECV, as enum ib_uverbs_write_cmds numbers them)
 *   KPPOST cmd=<n> calls=<n> ns_avg=<f> ns_med=<f> ns_min=<f> tsc_pair_ns=<f>
 * to stderr (ns_med of the first PT_KEEP calls of 28 and 29 only), and
 *   KPPOST syscall_ns_med=<f> syscall_ns_min=<f>
 * for getppid(2) by syscall(2) at start: a system call's price on this
 * kernel, without the verbs work a doorbell write() may do inline; and
 *   KPPOST probe_ns_med=<f> probe_ns_min=<f> (or probe_err=<errno>)
 * for the provider's first POST_SEND written again, 1001 times, to a QP
 * handle that does not exist, when perftest closes the device: the
 * system call and uverbs' dispatch up to its failed QP lookup, without
 * rxe's post.  That runs after perftest's figures, but inside its CPU
 * time.  tsc_pair_ns is two back-to-back counter reads: the cost
 * the timing adds to each call.  x86 only (the bench's rig).
 * Build: gcc -O2 -shared -fPIC -o ptpost.so ptpost.c -ldl (scripts/bench).
 * Unlike kpwrite it cannot be static: it runs against the VM's glibc,
 * which the rig copies from this host with perftest.  The fd test is
 * made once an fd, until the fd is closed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define PT_FDS 1024
#define PT_CMDS 64
#define PT_KEEP 131072
#define PT_POST_SEND 28
#define PT_POST_RECV 29
#define PT_PROBES 1001
#define PT_SAVE 256

static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_close)(int);
/* 0: not looked at yet, 1: a uverbs device, 2: anything else */
static unsigned char fd_kind[PT_FDS];
static uint64_t calls[PT_CMDS], cyc_sum[PT_CMDS], cyc_min[PT_CMDS];
static uint64_t tsc0, pair_min = UINT64_MAX;
static uint32_t sys_cyc[1001];
/* each call's cycles, for a median: a write() the kernel preempts holds
 * the task that ran meanwhile, and skews the mean */
static uint32_t kept[2][PT_KEEP];
static struct timespec ts0;
/* the first POST_SEND as the provider wrote it, for the probe */
static unsigned char post_buf[PT_SAVE];
static size_t post_len;
static uint32_t probe_cyc[PT_PROBES];
static int probed, probe_err;

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

/*
 * Only rxe's doorbell as rdma-core 44 writes it is probed: a 32-byte
 * command (in_words 8) with no WRs and no SGEs, a WR size the kernel
 * takes.  Then the one failure left to it is the QP lookup's.
 */
static int probe_shape(const void *buf, size_t len)
{
	uint32_t w[8];
	uint16_t in_words;

	if (len != sizeof(w))
		return 0;
	memcpy(w, buf, sizeof(w));
	memcpy(&in_words, (const char *)buf + 4, sizeof(in_words));
	/* w[5] wr_count, w[6] sge_count, w[7] wqe_size (ib_uverbs_send_wr: 56) */
	return in_words * 4u == len && !w[5] && !w[6] && w[7] >= 56;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	uint64_t t0, d, k;
	uint32_t cmd;
	ssize_t ret;

	if (!real_write)
		real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (len < sizeof(cmd) || !is_uverbs(fd))
		return real_write(fd, buf, len);
	/* the command header's first word; the extended flag's high bits off */
	memcpy(&cmd, buf, sizeof(cmd));
	cmd &= 0xff;
	if (cmd == PT_POST_SEND && !post_len && probe_shape(buf, len)) {
		memcpy(post_buf, buf, len);
		post_len = len;
	}
	t0 = __rdtsc();
	ret = real_write(fd, buf, len);
	d = __rdtsc() - t0;
	/* perftest's tools post from one thread: no locking here */
	if (cmd < PT_CMDS) {
		k = ++calls[cmd];
		if (k == 1 || d < cyc_min[cmd])
			cyc_min[cmd] = d;
		cyc_sum[cmd] += d;
		if ((cmd == PT_POST_SEND || cmd == PT_POST_RECV) && k <= PT_KEEP)
			kept[cmd - PT_POST_SEND][k - 1] = d > UINT32_MAX ? UINT32_MAX : d;
	}
	return ret;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* the median cycles of a command's kept calls, 0 where none are kept */
static double med_cycles(int cmd)
{
	uint64_t n;
	uint32_t *v;

	if (cmd != PT_POST_SEND && cmd != PT_POST_RECV)
		return 0;
	n = calls[cmd] < PT_KEEP ? calls[cmd] : PT_KEEP;
	v = kept[cmd - PT_POST_SEND];
	qsort(v, n, sizeof(*v), cmp_u32);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

/*
 * struct ib_uverbs_cmd_hdr (8 bytes), then the command's u64 response
 * and u32 qp_handle: point the response at our own buffer (the saved one
 * was the provider's stack) and the handle at no QP.
 */
static void probe(int fd)
{
	unsigned char b[PT_SAVE];
	uint64_t resp[8], a, d, v;
	uint32_t none = UINT32_MAX;
	ssize_t ret;
	int i;

	memcpy(b, post_buf, post_len);
	v = (uintptr_t)resp;
	memcpy(b + 8, &v, sizeof(v));
	memcpy(b + 16, &none, sizeof(none));
	for (i = 0; i < PT_PROBES; i++) {
		errno = 0;
		a = __rdtsc();
		ret = real_write(fd, b, post_len);
		d = __rdtsc() - a;
		/*
		 * The QP lookup's failure: -ENOENT from the idr on 6.12 (seen),
		 * -EINVAL where the command maps a NULL object to it
		 */
		if (ret >= 0 || (errno != EINVAL && errno != ENOENT)) {
			probe_err = ret >= 0 ? -1 : errno;
			return;
		}
		probe_cyc[i] = d > UINT32_MAX ? UINT32_MAX : d;
	}
	qsort(probe_cyc, PT_PROBES, sizeof(probe_cyc[0]), cmp_u32);
	probed = 1;
}

/* the provider closes its command fd at ibv_close_device(): probe first */
int close(int fd)
{
	int saved = errno;

	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	if (fd >= 0 && fd < PT_FDS) {
		if (fd_kind[fd] == 1 && post_len && !probed && !probe_err) {
			probe(fd);
			errno = saved;
		}
		/* the number may come back as another file */
		fd_kind[fd] = 0;
	}
	return real_close(fd);
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
	for (i = 0; i < 1001; i++) {
		a = __rdtsc();
		syscall(SYS_getppid);
		b = __rdtsc();
		sys_cyc[i] = b - a > UINT32_MAX ? UINT32_MAX : b - a;
	}
	qsort(sys_cyc, 1001, sizeof(sys_cyc[0]), cmp_u32);
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
	/*
	 * Destructors run before stdio's exit flush: flush what perftest
	 * buffered, or these lines land inside its last, unfinished line.
	 */
	fflush(stdout);
	fprintf(stderr, "\nKPPOST syscall_ns_med=%.1f syscall_ns_min=%.1f\n",
		sys_cyc[500] * per, sys_cyc[0] * per);
	if (probed)
		fprintf(stderr, "KPPOST probe_ns_med=%.1f probe_ns_min=%.1f\n",
			probe_cyc[PT_PROBES / 2] * per, probe_cyc[0] * per);
	else if (probe_err)
		fprintf(stderr, "KPPOST probe_err=%d\n", probe_err);
	for (c = 0; c < PT_CMDS; c++)
		if (calls[c])
			fprintf(stderr, "KPPOST cmd=%d calls=%llu ns_avg=%.1f ns_med=%.1f ns_min=%.1f tsc_pair_ns=%.1f\n",
				c, (unsigned long long)calls[c], cyc_sum[c] * per / calls[c],
				med_cycles(c) * per, cyc_min[c] * per, pair_min * per);
}
