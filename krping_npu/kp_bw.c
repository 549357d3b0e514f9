// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_bw.c - RDMA WRITE bandwidth: a stream of count writes (or writes for
 * duration seconds) into the peer's buffer with up to txdepth in flight.
 * The post times of the last window are kept to find BW peak as each
 * completion is reaped.  With duplex the server streams too.  Every
 * quarter of the window is signaled; a completion retires the unsignaled
 * writes before it.
 */
#include <linux/ktime.h>

#include "krping_npu.h"

#define KP_BW_BATCH	16
#define KP_WR_IDX_SHIFT	8	/* wr_id: message index above the kind */

int kp_bw_run(struct kp_cb *cb)
{
	u32 depth = min(cb->opts.txdepth, cb->sq_depth - 4);
	/* signal every quarter of the window, and the last write */
	u32 sig = max(depth / 4, 1u);
	struct ib_wc wc[KP_BW_BATCH];
	u64 posted = 0, done = 0, now;
	bool stop = false;
	int n, i, ret;

	kp_bw_track_init(&cb->track, cb->samples,
			 cb->count ? min(cb->opts.txdepth, cb->count) :
			 cb->opts.txdepth);
	kp_run_begin(cb);
	now = cb->run.start_ns;
	while (!stop || done < posted) {
		while (!stop && posted - done < depth) {
			bool last = kp_run_over(cb, posted + 1, now);
			bool signal = (posted + 1) % sig == 0 || last;

			now = ktime_get_ns();
			kp_bw_track_post(&cb->track, posted, now);
			ret = kp_post_rdma(cb, IB_WR_RDMA_WRITE, &cb->rdma,
					   cb->size, KP_WR_WRITE |
					   posted << KP_WR_IDX_SHIFT,
					   signal, 0);
			if (ret)
				return ret;
			posted++;
			stop = last;
		}
		/*
		 * The window is full: sleep on the CQ rather than spin, so a
		 * software device's deferred softirq work (ksoftirqd on this
		 * CPU) is not starved; with txdepth in flight the wire stays
		 * busy meanwhile.
		 */
		n = kp_poll(cb, wc, KP_BW_BATCH, KP_SPIN_BW);
		if (n < 0)
			return n;
		now = ktime_get_ns();
		for (i = 0; i < n; i++) {
			if ((u8)wc[i].wr_id == KP_WR_WRITE) {
				/* this write and every unsignaled one before */
				u64 last = wc[i].wr_id >> KP_WR_IDX_SHIFT;

				while (done <= last)
					kp_bw_track_done(&cb->track, done++,
							 now);
				continue;
			}
			/* our hello's own completion, reaped by kp_poll() */
			if (wc[i].wr_id == KP_WR_SEND)
				continue;
			/* a duplex peer finished first: keep its FIN */
			if (wc[i].wr_id == KP_WR_RECV) {
				ret = kp_recv_keep(cb, &wc[i]);
				if (ret)
					return ret;
				continue;
			}
			kp_err(cb, "bw: unexpected completion %llu",
			       wc[i].wr_id);
			return -EPROTO;
		}
		kp_run_tick(cb, done, now);
	}
	return kp_stats_bw(cb, done, ktime_get_ns() - cb->run.start_ns);
}
