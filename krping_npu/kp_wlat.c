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

/* Is @imm the peer's write @seq?  *@last: marked as the client's last. */
static int kp_wlat_check(struct kp_conn *c, u32 imm, u32 seq, bool *last)
{
	if ((imm & ~KP_IMM_LAST) != seq) {
		kp_err(c->t, "wlat: expected write %u, got %u", seq,
		       imm & ~KP_IMM_LAST);
		return -EPROTO;
	}
	*last = imm & KP_IMM_LAST;
	return 0;
}

/*
 * Reap until the peer's write with immediate @seq has arrived: first any
 * write seen while this side still waited for something else (the peer
 * may start as soon as it has our hello), then the CQ.
 */
static int kp_wlat_wait(struct kp_conn *c, u32 seq, bool *last)
{
	unsigned int spin = kp_loop_spin(c);
	struct ib_wc wc[KP_WLAT_BATCH];
	bool arrived = false;
	int n, i, ret;
	u32 imm;

	if (!kp_imm_take(c, &imm))
		return kp_wlat_check(c, imm, seq, last);
	while (!arrived) {
		n = kp_poll(c, wc, KP_WLAT_BATCH, spin);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id != KP_WR_RECV)
				continue;
			ret = kp_post_recv(c);
			if (ret)
				return ret;
			if (wc[i].opcode != IB_WC_RECV_RDMA_WITH_IMM) {
				kp_err(c->t, "wlat: expected write %u, got opcode %d",
				       seq, wc[i].opcode);
				return -EPROTO;
			}
			ret = kp_wlat_check(c, be32_to_cpu(wc[i].ex.imm_data),
					    seq, last);
			if (ret)
				return ret;
			arrived = true;
		}
	}
	return 0;
}

/*
 * The client ends each size by marking its last write; the server, which
 * knows neither count nor clock of the client, answers that one (marked
 * too) and stops.  The client's first warmup= round trips are not timed;
 * the server answers them like any other.
 */
int kp_wlat_run(struct kp_conn *c)
{
	bool client = c->t->opts.role == KP_ROLE_CLIENT;
	u64 warm = client ? c->t->opts.warmup : 0;
	bool last = false;
	u64 i, t0, now;
	u32 seq;
	int ret;

	now = 0;
	for (i = 0; !last; i++) {
		bool signal = (i + 1) % KP_WLAT_SIGNAL == 0;
		bool timed = i >= warm;

		if (i == warm)
			now = kp_run_begin(c, &c->t->run);
		seq = (u32)i & ~KP_IMM_LAST;
		t0 = ktime_get_ns();
		if (client) {
			last = timed && kp_run_over(c, i - warm + 1, now);
			ret = kp_post_rdma(c, IB_WR_RDMA_WRITE_WITH_IMM,
					   &c->rdma, c->t->size, KP_WR_WRITE,
					   signal || last,
					   seq | (last ? KP_IMM_LAST : 0));
			if (ret)
				return ret;
		}
		ret = kp_wlat_wait(c, seq, &last);
		if (ret)
			return ret;
		now = ktime_get_ns();
		if (client && timed) {
			kp_lat_sample(c, i - warm, now - t0);
			kp_run_tick(c, i - warm + 1, now);
		} else if (!client) {
			ret = kp_post_rdma(c, IB_WR_RDMA_WRITE_WITH_IMM,
					   &c->rdma, c->t->size, KP_WR_WRITE,
					   signal || last,
					   seq | (last ? KP_IMM_LAST : 0));
			if (ret)
				return ret;
		}
		kp_loop_yield(c);
	}
	/* the run is over: the settling waits are not part of it */
	kp_run_end(c);
	return kp_sends_settle(c) ?: kp_stats_pingpong(c, i, warm);
}
