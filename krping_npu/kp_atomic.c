// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_atomic.c - atomics on the first 8 bytes of the server's buffer, as
 * ib_atomic_lat and ib_atomic_bw: alat, one at a time, each timed from
 * post to completion; bw_atomic, a stream of them (kp_bw.c posts it
 * through kp_atomic_post()).
 *
 * Every value is checked, never only timed.  The client first WRITEs a
 * start value whose low half wraps after a few adds, so a device that
 * adds 32 bits, or drops the carry, is caught.  A QP's atomics execute in
 * the order posted, so the value each returns follows from the ones
 * before: alat checks every one.  After the loop the client READs the
 * target back, and its FIN names the value it expects, which the server
 * checks in its own memory (kp_atomic_check()).  Compare-and-swap: one
 * in KP_CAS_MISS carries a wrong compare value, must return the target
 * and leave it as it was.
 */
#include <linux/math64.h>
#include <linux/swab.h>

#include "krping_npu.h"

/* the low half wraps after 16 adds, carrying into the high half */
#define KP_ATOMIC_START		0x00000001fffffff0ull
#define KP_ATOMIC_ADD		0x0000000100000001ull
#define KP_CAS_MISS		4
#define KP_CAS_MISS_XOR		0x8000000000000001ull

/*
 * A value that is what a device doing its atomics big-endian would have
 * left after the same adds: the CPU wrote the start in host order, which
 * such a device reads byte-swapped.  Said, to tell byte order from loss.
 */
static const char *kp_atomic_order(u64 got, u64 want)
{
	u64 adds = div64_u64(want - KP_ATOMIC_START, KP_ATOMIC_ADD);

	return got == swab64(swab64(KP_ATOMIC_START) + adds * KP_ATOMIC_ADD) ?
	       " (as a device doing atomics big-endian would leave it)" : "";
}

/* The first 8 bytes of @b, as the device left them. */
static int kp_atomic_get(struct kp_conn *c, struct kp_buf *b, u64 *val)
{
	int ret = kp_buf_to_cpu(c, b, KP_ATOMIC_SIZE);

	if (ret)
		return ret;
	*val = READ_ONCE(*(u64 *)kp_buf_cpu(b));
	return kp_buf_to_dev(c, b, KP_ATOMIC_SIZE);
}

/* ... and @val put there for the device. */
static int kp_atomic_put(struct kp_conn *c, struct kp_buf *b, u64 val)
{
	int ret = kp_buf_to_cpu(c, b, KP_ATOMIC_SIZE);

	if (ret)
		return ret;
	WRITE_ONCE(*(u64 *)kp_buf_cpu(b), val);
	return kp_buf_to_dev(c, b, KP_ATOMIC_SIZE);
}

/* client, each size: the target set to the start value, by a WRITE */
int kp_atomic_begin(struct kp_conn *c)
{
	int ret;

	ret = kp_atomic_put(c, &c->rdma, KP_ATOMIC_START) ?:
	      kp_post_rdma(c, IB_WR_RDMA_WRITE, &c->rdma, KP_ATOMIC_SIZE,
			   KP_WR_WRITE, true, 0) ?:
	      kp_wait_for(c, KP_WR_WRITE, 0);
	if (ret)
		return ret;
	c->atomic_val = KP_ATOMIC_START;
	c->atomic_n = 0;
	c->atomic_miss = 0;
	return 0;
}

/*
 * Post the next atomic of the sequence; @old (if not NULL) is the value
 * it must return.
 */
int kp_atomic_post(struct kp_conn *c, u64 wr_id, bool signal, u64 *old)
{
	enum kp_atomic op = c->t->opts.atomic;
	u64 cur = c->atomic_val, arg = KP_ATOMIC_ADD, swap = 0;
	bool miss = false;
	int ret;

	if (op == KP_ATOMIC_CAS) {
		miss = c->atomic_n % KP_CAS_MISS == KP_CAS_MISS - 1;
		arg = miss ? cur ^ KP_CAS_MISS_XOR : cur;
		swap = cur + KP_ATOMIC_ADD;
	}
	ret = kp_post_atomic(c, op, &c->rdma, wr_id, signal, arg, swap);
	if (ret)
		return ret;
	if (old)
		*old = cur;
	c->atomic_n++;
	if (miss)
		c->atomic_miss++;
	else
		c->atomic_val = cur + KP_ATOMIC_ADD;
	return 0;
}

/* alat: the value the last atomic returned, against @want */
static int kp_atomic_returned(struct kp_conn *c, u64 want)
{
	u64 got;
	int ret;

	ret = kp_atomic_get(c, &c->rdma, &got);
	if (ret)
		return ret;
	if (got == want)
		return 0;
	kp_err(c->t, "%s: atomic %llu returned 0x%016llx, the target held 0x%016llx%s",
	       kp_atomic_name(c->t->opts.atomic), c->atomic_n, got, want,
	       kp_atomic_order(got, want));
	return -EIO;
}

/*
 * client, after the loop: the target READ back must hold what the
 * atomics left; the FIN tells the server (kp_send_hello()).
 */
int kp_atomic_end(struct kp_conn *c)
{
	u64 got;
	int ret;

	/* a READ that lands nothing shows */
	ret = kp_atomic_put(c, &c->rdma, ~c->atomic_val) ?:
	      kp_post_rdma(c, IB_WR_RDMA_READ, &c->rdma, KP_ATOMIC_SIZE,
			   KP_WR_READ, true, 0) ?:
	      kp_wait_for(c, KP_WR_READ, 0) ?:
	      kp_atomic_get(c, &c->rdma, &got);
	if (ret)
		return ret;
	if (got != c->atomic_val) {
		kp_err(c->t, "%s: the target reads back 0x%016llx after %llu atomics (%llu meant to fail), not 0x%016llx%s",
		       kp_atomic_name(c->t->opts.atomic), got, c->atomic_n,
		       c->atomic_miss, c->atomic_val,
		       kp_atomic_order(got, c->atomic_val));
		return -EIO;
	}
	kp_info(c->t, "%s: conn %u: %llu atomics (%llu meant to fail)%s, the target read back as 0x%016llx",
		kp_atomic_name(c->t->opts.atomic), c->idx, c->atomic_n,
		c->atomic_miss, c->t->mode == KP_MODE_ALAT ?
		", each returned value as expected" : "", got);
	return 0;
}

/* server, at the client's FIN: our target must hold @want */
int kp_atomic_check(struct kp_conn *c, u64 want)
{
	u64 got;
	int ret;

	ret = kp_atomic_get(c, &c->rdma, &got);
	if (ret)
		return ret;
	if (got != want) {
		kp_err(c->t, "%s: conn %u: the target holds 0x%016llx, the client's atomics left 0x%016llx%s",
		       kp_mode_name(c->t->mode), c->idx, got, want,
		       kp_atomic_order(got, want));
		return -EIO;
	}
	kp_info(c->t, "%s: conn %u: the target holds 0x%016llx, as the client's atomics left it",
		kp_mode_name(c->t->mode), c->idx, got);
	return 0;
}

/* One atomic, from post to completion; @old is what it must return. */
static int kp_alat_one(struct kp_conn *c, u64 *old)
{
	unsigned int spin = kp_loop_spin(c);
	struct ib_wc wc;
	int ret;

	ret = kp_atomic_post(c, KP_WR_ATOMIC, true, old);
	if (ret)
		return ret;
	do {
		ret = kp_poll(c, &wc, 1, spin);
		if (ret < 0)
			return ret;
	} while (wc.wr_id != KP_WR_ATOMIC);
	return 0;
}

int kp_alat_run(struct kp_conn *c)
{
	u64 i, t0, now, old;
	int ret;

	/* warm-up: the same atomics, untimed */
	for (i = 0; i < c->t->opts.warmup; i++) {
		ret = kp_alat_one(c, &old) ?: kp_atomic_returned(c, old);
		if (ret)
			return ret;
		kp_loop_yield(c);
	}
	now = kp_run_begin(c, &c->t->run);
	for (i = 0; !kp_run_over(c, i, now); i++) {
		t0 = kp_clock_now(&c->t->clk);
		ret = kp_alat_one(c, &old);
		if (ret)
			return ret;
		now = kp_clock_now(&c->t->clk);
		kp_lat_sample(c, i, now - t0);
		/* the check is outside the sample, as perftest has none */
		ret = kp_atomic_returned(c, old);
		if (ret)
			return ret;
		kp_run_tick(c, i + 1, now);
		kp_loop_yield(c);
	}
	kp_harness(c, 1);
	return kp_stats_lat(c, i, 1);
}
