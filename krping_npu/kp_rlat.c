// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_rlat.c - RDMA READ latency: one READ of the server's buffer at a time,
 * each timed from post to completion (perftest's ib_read_lat reports the
 * same full round trip), after warmup= untimed ones.
 */
#include <linux/ktime.h>

#include "krping_npu.h"

/* One READ of the peer's buffer, from post to completion. */
static int kp_rlat_one(struct kp_conn *c)
{
	unsigned int spin = kp_loop_spin(c);
	struct ib_wc wc;
	int ret;

	ret = kp_post_rdma(c, IB_WR_RDMA_READ, &c->rdma, c->t->size,
			   KP_WR_READ, true, 0);
	if (ret)
		return ret;
	do {
		ret = kp_poll(c, &wc, 1, spin);
		if (ret < 0)
			return ret;
	} while (wc.wr_id != KP_WR_READ);
	if (c->rw)
		kp_rw_done(c, 0);
	return 0;
}

int kp_rlat_run(struct kp_conn *c)
{
	u64 i, t0, now;
	int ret;

	/* warm-up: the same READs, untimed */
	for (i = 0; i < c->t->opts.warmup; i++) {
		ret = kp_rlat_one(c);
		if (ret)
			return ret;
		kp_loop_yield(c);
	}
	now = kp_run_begin(c, &c->t->run);
	for (i = 0; !kp_run_over(c, i, now); i++) {
		t0 = kp_clock_now(&c->t->clk);
		ret = kp_rlat_one(c);
		if (ret)
			return ret;
		now = kp_clock_now(&c->t->clk);
		kp_lat_sample(c, i, now - t0);
		kp_run_tick(c, i + 1, now);
		kp_loop_yield(c);
	}
	kp_harness(c, 1);
	return kp_stats_lat(c, i, 1);
}
