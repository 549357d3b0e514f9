// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_rlat.c - RDMA READ latency: one READ of the server's buffer at a time,
 * each timed from post to completion (perftest's ib_read_lat reports the
 * same full round trip).
 */
#include <linux/ktime.h>

#include "krping_npu.h"

int kp_rlat_run(struct kp_cb *cb)
{
	struct ib_wc wc;
	u32 i;
	int ret;

	for (i = 0; i < cb->count; i++) {
		u64 t0 = ktime_get_ns();

		ret = kp_post_rdma(cb, IB_WR_RDMA_READ, &cb->rdma, cb->size,
				   KP_WR_READ, true, 0);
		if (ret)
			return ret;
		do {
			ret = kp_poll(cb, &wc, 1, KP_SPIN_ALWAYS);
			if (ret < 0)
				return ret;
		} while (wc.wr_id != KP_WR_READ);
		cb->samples[i] = ktime_get_ns() - t0;
	}
	kp_stats_lat(cb, cb->count, 1);
	return 0;
}
