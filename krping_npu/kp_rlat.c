// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_rlat.c - RDMA READ latency: one READ of the server's buffer at a time,
 * each timed from post to completion (perftest's ib_read_lat reports the
 * same full round trip), after warmup= untimed ones.
 */
#include <linux/ktime.h>

#include "krping_npu.h"

/* One READ of the peer's buffer, from post to completion. */
static int kp_rlat_one(struct kp_cb *cb)
{
	unsigned int spin = kp_loop_spin(cb);
	struct ib_wc wc;
	int ret;

	ret = kp_post_rdma(cb, IB_WR_RDMA_READ, &cb->rdma, cb->size,
			   KP_WR_READ, true, 0);
	if (ret)
		return ret;
	do {
		ret = kp_poll(cb, &wc, 1, spin);
		if (ret < 0)
			return ret;
	} while (wc.wr_id != KP_WR_READ);
	return 0;
}

int kp_rlat_run(struct kp_cb *cb)
{
	u64 i, t0, now;
	int ret;

	/* warm-up: the same READs, untimed */
	for (i = 0; i < cb->opts.warmup; i++) {
		ret = kp_rlat_one(cb);
		if (ret)
			return ret;
		kp_loop_yield(cb);
	}
	kp_run_begin(cb);
	now = cb->run.start_ns;
	for (i = 0; !kp_run_over(cb, i, now); i++) {
		t0 = ktime_get_ns();
		ret = kp_rlat_one(cb);
		if (ret)
			return ret;
		now = ktime_get_ns();
		kp_lat_sample(cb, i, now - t0);
		kp_run_tick(cb, i + 1, now);
		kp_loop_yield(cb);
	}
	return kp_stats_lat(cb, i, 1);
}
