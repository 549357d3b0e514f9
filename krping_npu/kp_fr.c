// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_fr.c - fast-registration test: the client registers its buffer's MR
 * under a fresh key and invalidates it, count times, each pair timed from
 * post to the second completion.  The server only takes part in the
 * hello and FIN exchange (kp_test.c), and records the test as served.
 */
#include <linux/ktime.h>

#include "krping_npu.h"

int kp_fr_run(struct kp_conn *c)
{
	unsigned int spin = kp_loop_spin(c);
	struct ib_wc wc;
	u32 i, got;
	int ret;

	kp_run_begin(c, &c->t->run);
	for (i = 0; i < c->t->count; i++) {
		u64 t0 = kp_clock_now(&c->t->clk);

		ret = kp_post_reg(c, &c->rdma, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_READ |
				  IB_ACCESS_REMOTE_WRITE, true);
		if (ret)
			return ret;
		ret = kp_post_inv(c, &c->rdma, true);
		if (ret)
			return ret;
		for (got = 0; got < 2; ) {
			ret = kp_poll(c, &wc, 1, spin);
			if (ret < 0)
				return ret;
			if (wc.wr_id == KP_WR_REG || wc.wr_id == KP_WR_INV)
				got++;
		}
		kp_lat_sample(c, i, kp_clock_now(&c->t->clk) - t0);
		kp_loop_yield(c);
	}
	kp_harness(c, 1);
	return kp_stats_lat(c, c->t->count, 1);
}
