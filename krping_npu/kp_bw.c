// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_bw.c - RDMA WRITE bandwidth: a stream of count writes (or writes for
 * duration seconds) into the peer's buffer with up to txdepth in flight;
 * with bw,read (bw_read) the same stream of READs of the peer's buffer,
 * no more posted ahead than this side's initiator depth (the NIC holds
 * any beyond what the peer's responder resources allow).
 * The post times of the last window are kept to find BW peak as each
 * completion is reaped.  With duplex the server streams too.  Every
 * quarter of the window is signaled; a completion retires the unsignaled
 * writes before it.  A client's warmup= writes go first, as a stream of
 * their own, untimed.  With bw,send (bw_send) the stream is of SENDs
 * into the server's posted receives (kp_send.c), the last one marked by
 * immediate data; skips go first.
 */
#include <linux/ktime.h>

#include "krping_npu.h"

#define KP_BW_BATCH	16
#define KP_WR_IDX_SHIFT	8	/* wr_id: message index above the kind */

/*
 * One stream: @warm untimed writes, or (@warm 0) the timed stream of count
 * writes or duration seconds, with BW peak tracked and a result at the end.
 */
static int kp_bw_stream(struct kp_cb *cb, u64 warm)
{
	bool rd = cb->mode == KP_MODE_BW_READ;
	bool snd = cb->mode == KP_MODE_BW_SEND;
	enum ib_wr_opcode op = rd ? IB_WR_RDMA_READ :
			       snd ? IB_WR_SEND : IB_WR_RDMA_WRITE;
	u8 kind = rd ? KP_WR_READ : snd ? KP_WR_DATA_SEND : KP_WR_WRITE;
	/*
	 * READs: no more posted ahead than this side's initiator depth;
	 * SENDs: the send queue keeps room for skips.
	 */
	u32 depth = max(min3(cb->opts.txdepth,
			     cb->sq_depth - 4 - (snd ? KP_RQ_DEPTH : 0),
			     rd ? (u32)cb->rd_atom : U32_MAX), 1u);
	/* signal every quarter of the window, and the last write */
	u32 sig = max(depth / 4, 1u);
	unsigned int spin = kp_loop_spin(cb);
	struct ib_wc wc[KP_BW_BATCH];
	u64 posted = 0, done = 0, now;
	bool timed = !warm, stop = false;
	int n, i, ret;

	if (timed) {
		kp_bw_track_init(&cb->track, cb->samples,
				 cb->count ? min(cb->opts.txdepth, cb->count) :
				 cb->opts.txdepth);
		kp_run_begin(cb);
	}
	now = ktime_get_ns();
	while (!stop || done < posted) {
		while (!stop && posted - done < depth) {
			bool last = timed ? kp_run_over(cb, posted + 1, now) :
				    posted + 1 == warm;
			bool signal = (posted + 1) % sig == 0 || last;
			/* the server stops at the stream's marked message */
			bool mark = snd && timed && last;

			now = ktime_get_ns();
			if (timed)
				kp_bw_track_post(&cb->track, posted, now);
			ret = kp_post_rdma(cb, mark ? IB_WR_SEND_WITH_IMM : op,
					   &cb->rdma, cb->size,
					   kind | posted << KP_WR_IDX_SHIFT,
					   signal, mark ? KP_IMM_LAST : 0);
			if (ret)
				return ret;
			posted++;
			stop = last;
		}
		/*
		 * The window is full: busy-poll the CQ as perftest does (or,
		 * with events, sleep on it); with txdepth in flight the wire
		 * stays busy meanwhile.
		 */
		n = kp_poll(cb, wc, KP_BW_BATCH, spin);
		if (n < 0)
			return n;
		now = ktime_get_ns();
		for (i = 0; i < n; i++) {
			if ((u8)wc[i].wr_id == kind) {
				/* this one and every unsignaled one before */
				u64 last = wc[i].wr_id >> KP_WR_IDX_SHIFT;

				for (; done <= last; done++)
					if (timed)
						kp_bw_track_done(&cb->track,
								 done, now);
				continue;
			}
			/* our hello's and skips' own completions */
			if (wc[i].wr_id == KP_WR_SEND ||
			    wc[i].wr_id == KP_WR_SKIP)
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
		if (timed)
			kp_run_tick(cb, done, now);
		kp_loop_yield(cb);
	}
	if (!timed)
		return 0;
	return kp_stats_bw(cb, done, ktime_get_ns() - cb->run.start_ns);
}

int kp_bw_run(struct kp_cb *cb)
{
	int ret;

	/* bw,send: the server's control receives ahead of its data ones */
	ret = kp_post_skips(cb, cb->skip_out);
	if (ret)
		return ret;
	cb->skip_out = 0;
	if (cb->opts.role == KP_ROLE_CLIENT && cb->opts.warmup) {
		ret = kp_bw_stream(cb, cb->opts.warmup);
		if (ret)
			return ret;
	}
	return kp_bw_stream(cb, 0);
}
