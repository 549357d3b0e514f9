// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_wlat.c - RDMA WRITE ping-pong latency.  The client writes its buffer
 * into the server's with immediate data; the server answers each write
 * with one of its own.  Arrival is seen as a receive completion, not by
 * polling the buffer, so the loop never reads the data buffers (which may
 * live in NPU memory).  Half the round trip is reported, as ib_write_lat
 * does.
 */
#include <linux/ktime.h>

#include "krping_npu.h"

#define KP_WLAT_BATCH	4
#define KP_WLAT_SIGNAL	16	/* signal one write in this many */

/* Reap until the peer's write with immediate @seq has arrived. */
static int kp_wlat_wait(struct kp_cb *cb, u32 seq)
{
	struct ib_wc wc[KP_WLAT_BATCH];
	bool arrived = false;
	int n, i, ret;

	while (!arrived) {
		n = kp_poll(cb, wc, KP_WLAT_BATCH, KP_SPIN_ALWAYS);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id != KP_WR_RECV)
				continue;
			ret = kp_post_recv(cb);
			if (ret)
				return ret;
			if (wc[i].opcode != IB_WC_RECV_RDMA_WITH_IMM ||
			    be32_to_cpu(wc[i].ex.imm_data) != seq) {
				kp_err(cb, "wlat: expected write %u, got opcode %d",
				       seq, wc[i].opcode);
				return -EPROTO;
			}
			arrived = true;
		}
	}
	return 0;
}

int kp_wlat_run(struct kp_cb *cb)
{
	bool client = cb->opts.role == KP_ROLE_CLIENT;
	u32 i;
	int ret;

	for (i = 0; i < cb->count; i++) {
		bool signal = (i + 1) % KP_WLAT_SIGNAL == 0 ||
			      i + 1 == cb->count;
		u64 t0 = ktime_get_ns();

		if (client) {
			ret = kp_post_rdma(cb, IB_WR_RDMA_WRITE_WITH_IMM,
					   &cb->rdma, cb->size, KP_WR_WRITE,
					   signal, i);
			if (ret)
				return ret;
		}
		ret = kp_wlat_wait(cb, i);
		if (ret)
			return ret;
		if (client) {
			cb->samples[i] = ktime_get_ns() - t0;
		} else {
			ret = kp_post_rdma(cb, IB_WR_RDMA_WRITE_WITH_IMM,
					   &cb->rdma, cb->size, KP_WR_WRITE,
					   signal, i);
			if (ret)
				return ret;
		}
	}
	/* the last writes' own completions */
	while (cb->sends_out) {
		struct ib_wc wc;

		ret = kp_poll(cb, &wc, 1, KP_SPIN_ALWAYS);
		if (ret < 0)
			return ret;
	}
	if (client)
		kp_stats_lat(cb, cb->count, 2);
	else
		kp_rec_result(cb, "wlat served #bytes=%u #iterations=%u",
			      cb->size, cb->count);
	return 0;
}
