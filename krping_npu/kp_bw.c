// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_bw.c - RDMA WRITE bandwidth: a stream of count writes (or writes for
 * duration seconds) into the peer's buffer with up to txdepth in flight;
 * with bw,read (bw_read) the same stream of READs of the peer's buffer,
 * no more posted ahead than this side's initiator depth (the NIC holds
 * any beyond what the peer's responder resources allow); with
 * bw,atomic= (bw_atomic) of atomics on its first 8 bytes, as many
 * (kp_atomic.c).
 * The post times of the last window are kept to find BW peak as each
 * completion is reaped.  With duplex the server streams too.  One write
 * in cq_mod is signaled (default: every quarter of the window); a
 * completion retires the unsignaled writes before it.  With post_list=
 * the client posts its messages in chains of that many, one
 * ib_post_send() each, as perftest -l.  A client's warmup= writes go
 * first, as a stream of their own, untimed.  With bw,send (bw_send) the
 * stream is of SENDs into the server's posted receives (kp_send.c), the
 * last one marked by immediate data; skips go first.  With imm every
 * message carries its number as immediate data, SENDs or (bw_imm)
 * WRITEs, which complete the server's receives just as SENDs do.  With
 * qps=N each connection has its own stream; kp_lanes.c steps them
 * (kp_bw_step()) from one thread, or
 * gives a thread a connection of its own (kp_bw_lane()).  rate_limit=
 * paces a stream in software as perftest's limiter does: a burst starts
 * no earlier than the bytes before it allow from the stream's start.
 * With validate (bw,send, bw,imm) each message goes from a slot of its
 * own, written in its pattern just before it is posted (bw,imm's into the
 * server's slot of its number); with bw,read each READ lands in a slot
 * of its own, checked as it is retired.
 */
#include <linux/delay.h>
#include <linux/ktime.h>

#include "krping_npu.h"
#include "../proc/kp_payload.h"

#define KP_BW_BATCH	16

/* the most bytes between two signalled completions of a stream */
#define KP_SIG_BYTES	(16u << 20)

/*
 * A stream starts: @warm untimed messages, or (@warm 0) the timed stream
 * of count messages or duration seconds, with BW peak tracked.
 */
void kp_bw_start(struct kp_conn *c, u64 warm)
{
	struct kp_stream *st = &c->stream;
	bool at = c->t->mode == KP_MODE_BW_ATOMIC;
	bool rd = c->t->mode == KP_MODE_BW_READ || at;
	bool snd = kp_mode_sink(c->t->mode);

	kp_stream_reset(st);
	st->op = at ? (c->t->opts.atomic == KP_ATOMIC_CAS ?
		       IB_WR_ATOMIC_CMP_AND_SWP : IB_WR_ATOMIC_FETCH_AND_ADD) :
		 rd ? IB_WR_RDMA_READ :
		 c->t->mode == KP_MODE_BW_SEND ? IB_WR_SEND : IB_WR_RDMA_WRITE;
	st->kind = at ? KP_WR_ATOMIC : rd ? KP_WR_READ :
		   c->t->mode == KP_MODE_BW_SEND ? KP_WR_DATA_SEND : KP_WR_WRITE;
	/*
	 * READs and atomics: no more posted ahead than this side's
	 * initiator depth; SENDs: the send queue keeps room for skips.
	 */
	st->depth = max(min3(c->t->opts.txdepth,
			     c->sq_depth - 4 - (snd ? KP_RQ_DEPTH : 0),
			     rd ? (u32)c->rd_atom : U32_MAX), 1u);
	/* rw: a message may take several work requests (kp_rw.c) */
	if (c->rw)
		st->depth = max(min(st->depth, c->sq_depth / c->rw_wrs), 1u);
	/*
	 * validate: a message in flight holds its slot until it completes;
	 * bw_imm's server keeps receives for half its slots, and the other
	 * half is our window (kp_test_recvs())
	 */
	if (c->t->validate)
		st->depth = min(st->depth, c->val_slots);
	if (c->t->validate && c->t->mode == KP_MODE_BW_IMM)
		st->depth = max(min(st->depth, c->val_peer / 2), 1u);
	/*
	 * Signal one message in cq_mod (perftest -Q), by default every
	 * quarter of the window (with post_list=, as perftest -l, each
	 * chain's last), and the last; at most KP_SIG_BYTES apart,
	 * as each completion wait is bounded by the timeout (4 MiB x 256
	 * unsignaled would need 100 MiB/s in 10 s).
	 */
	st->list = clamp(c->t->opts.post_list, 1u, st->depth);
	st->sig = clamp(min(c->t->opts.cq_mod ?:
			    (st->list > 1 ? st->list : st->depth / 4),
			    KP_SIG_BYTES / c->t->size), 1u, st->depth);
	st->chains = 0;
	c->chain_n = 0;
	st->warm = warm;
	st->burst = c->t->opts.burst_size ?: c->t->opts.txdepth;
	if (!warm) {
		kp_bw_track_init(&st->track, st->ring,
				 c->t->count ? min(c->t->opts.txdepth, c->t->count) :
				 c->t->opts.txdepth);
		kp_bw_slots_init(&st->slots, st->slot_buf);
		kp_run_begin(c, &st->run);
	}
	st->now = kp_clock_now(&c->t->clk);
	st->pace_start = st->now;
}

/*
 * rate_limit: when message @k may be posted, if it opens a burst; 0: at
 * once.  The bytes before it at the stream's rate, from its start.
 */
static u64 kp_bw_due(struct kp_conn *c, u64 k)
{
	struct kp_stream *st = &c->stream;
	u32 rate = c->t->opts.rate_limit;
	u64 span;

	if (!rate || k % st->burst)
		return 0;
	span = kp_mul_div(k * c->t->size, NSEC_PER_SEC, (u64)rate << 20);
	return span > U64_MAX - st->pace_start ? U64_MAX : st->pace_start + span;
}

enum kp_pace {
	KP_PACE_GO,	/* the next message may go */
	KP_PACE_REAP,	/* its burst is not due: reap what is in flight */
	KP_PACE_LAST,	/* a duration run ends first: it goes now, the last */
};

/*
 * rate_limit: may the next message go?  Where nothing is in flight, wait
 * until its burst is due, a millisecond at most a sleep, heeding a stop
 * between them; the last of each burst is signalled, so what is in
 * flight always completes.
 */
static int kp_bw_pace(struct kp_conn *c)
{
	struct kp_stream *st = &c->stream;
	u64 due = kp_bw_due(c, st->posted);

	while (due) {
		u64 now = kp_clock_now(&c->t->clk), left_us;

		st->now = now;
		if (now >= due)
			break;
		if (!st->warm && st->run.deadline_ns &&
		    due >= st->run.deadline_ns)
			return KP_PACE_LAST;
		if (st->posted != st->done)
			return KP_PACE_REAP;
		if (kp_stopping(c->t))
			return -EINTR;
		left_us = min_t(u64, div_u64(due - now, NSEC_PER_USEC),
				USEC_PER_MSEC);
		if (left_us >= 20)
			usleep_range(left_us - 10, left_us);
		else
			cpu_relax();
	}
	return KP_PACE_GO;
}

/*
 * validate: the next message's slot, filled with its pattern (its number
 * counts the warm-up, as the server's does) and handed to the device;
 * bw_imm: @roff, the server's slot it goes to.
 */
static int kp_bw_fill(struct kp_conn *c, u32 *off, u32 *roff)
{
	u32 size = c->t->size, slot;

	div_u64_rem(c->val_seq, c->val_slots, &slot);
	*off = slot * c->val_stride;
	kp_stream_fill((u8 *)kp_buf_cpu(&c->rdma) + *off, size, c->val_seq);
	if (c->t->mode == KP_MODE_BW_IMM) {
		div_u64_rem(c->val_seq, c->val_peer, &slot);
		*roff = slot * c->val_pstride;
	}
	c->val_seq++;
	return kp_buf_to_dev_at(c, &c->rdma, *off, size);
}

/*
 * validate, bw_read: READ k goes from the server's slot k % val_peer, which
 * holds that slot's pattern, into our slot k % val_slots (poisoned since
 * it was last checked).
 */
static void kp_bw_read_slot(struct kp_conn *c, u32 *off, u32 *roff)
{
	u32 slot;

	div_u64_rem(c->val_seq, c->val_slots, &slot);
	*off = slot * c->val_stride;
	div_u64_rem(c->val_seq, c->val_peer, &slot);
	*roff = slot * c->val_pstride;
	c->val_seq++;
}

/*
 * ... and READ @k, retired: its slot checked against the pattern of the
 * server's slot it read.
 */
static int kp_bw_read_check(struct kp_conn *c, u64 k)
{
	struct kp_val_bad bad;
	u32 slot, peer;
	int ret;

	div_u64_rem(k, c->val_slots, &slot);
	div_u64_rem(k, c->val_peer, &peer);
	ret = kp_val_check(c, slot, peer, &bad);
	if (ret == -EBADMSG)
		kp_err(c->t, "validate: READ %llu (the server's slot %u) byte %ld of %u is 0x%02x, not 0x%02x",
		       k, peer, bad.at, c->t->size, bad.got, bad.want);
	return ret;
}

/*
 * The stream's next message: posted, or (@chain) added to the chain
 * kp_bw_post() posts.  Returns 0, KP_PACE_REAP (not due yet: nothing
 * done) or a negative errno.
 */
static int kp_bw_post_one(struct kp_conn *c, bool chain, bool chain_end)
{
	struct kp_stream *st = &c->stream;
	enum ib_wr_opcode op = st->op;
	bool timed = !st->warm;
	bool last, signal, mark;
	u64 wr_id;
	u32 imm = 0, off = 0, roff = 0;
	int ret;

	ret = kp_bw_pace(c);
	if (ret < 0 || ret == KP_PACE_REAP)
		return ret;
	last = ret == KP_PACE_LAST ||
	       (timed ? kp_run_over(c, st->posted + 1, st->now) :
		st->posted + 1 == st->warm);
	/* a chain's last too: what it leaves in flight always completes */
	signal = (st->posted + 1) % st->sig == 0 || last || chain_end ||
		 (c->t->opts.rate_limit && (st->posted + 1) % st->burst == 0);
	/* the server stops at the stream's marked message */
	mark = kp_mode_sink(c->t->mode) && timed && last;
	if (c->t->imm_stream) {
		/* its number in the size's stream, warm-up included */
		imm = (u32)c->imm_seq++ & ~KP_IMM_LAST;
		op = op == IB_WR_SEND ? IB_WR_SEND_WITH_IMM :
		     IB_WR_RDMA_WRITE_WITH_IMM;
	}
	if (mark) {
		imm |= KP_IMM_LAST;
		op = op == IB_WR_RDMA_WRITE ? IB_WR_RDMA_WRITE_WITH_IMM :
		     op == IB_WR_SEND ? IB_WR_SEND_WITH_IMM : op;
	}

	/*
	 * A post can carry a software device's work for both sides
	 * (rxe runs it in the softirq of local_bh_enable()): a window
	 * of them can take long, so a stop is heard between posts.
	 */
	if (kp_stopping(c->t))
		return -EINTR;

	if (c->t->validate && st->kind == KP_WR_READ) {
		kp_bw_read_slot(c, &off, &roff);
	} else if (c->t->validate) {
		ret = kp_bw_fill(c, &off, &roff);
		if (ret)
			return ret;
	}
	st->now = kp_clock_now(&c->t->clk);
	if (timed)
		kp_bw_track_post(&c->stream.track, st->posted, st->now);
	wr_id = st->kind | st->posted << KP_WR_IDX_SHIFT;
	if (st->kind == KP_WR_ATOMIC)
		ret = kp_atomic_post(c, wr_id, signal, NULL);
	else if (chain)
		ret = kp_chain_add(c, op, &c->rdma, off, roff, c->t->size,
				   wr_id, signal, imm);
	else
		ret = kp_post_rdma_at(c, op, &c->rdma, off, roff, c->t->size,
				      wr_id, signal, imm);
	if (ret)
		return ret;
	st->posted++;
	st->stop = last;
	return 0;
}

/*
 * Post what the window has room for, up to the stream's last message;
 * with post_list=, a chain at a time, once there is room for all of it.
 */
static int kp_bw_post(struct kp_conn *c)
{
	struct kp_stream *st = &c->stream;
	bool chain = st->list > 1;
	u32 i;
	int ret;

	while (!st->stop && st->posted - st->done + st->list <= st->depth) {
		for (i = 0; i < st->list && !st->stop; i++) {
			ret = kp_bw_post_one(c, chain,
					     chain && i + 1 == st->list);
			if (ret < 0)
				return ret;
			/* not due: what the chain holds goes now */
			if (ret == KP_PACE_REAP)
				return chain ? kp_chain_post(c) : 0;
		}
		if (!chain)
			continue;
		ret = kp_chain_post(c);
		if (ret)
			return ret;
		if (!st->warm)
			st->chains++;
	}
	return 0;
}

/* The timed stream's own end: its figure, and what it did. */
static void kp_bw_report(struct kp_conn *c)
{
	struct kp_stream *st = &c->stream;

	if (st->list > 1)
		kp_info(c->t, "connection %u: %llu messages posted in %llu chains of up to %u",
			c->idx, st->done, st->chains, st->list);
	kp_stats_bw(c, st->done, st->end_ns - st->run.start_ns);
	if (c->t->validate && st->kind == KP_WR_READ)
		kp_info(c->t, "connection %u: %llu READs validated, every byte against the pattern of the server's slot it read (%u there, %u here)",
			c->idx, c->val_msgs, c->val_peer, c->val_slots);
	else if (c->t->validate && c->t->mode == KP_MODE_BW_IMM)
		kp_info(c->t, "connection %u: %llu messages sent, each written in its pattern first, from %u slots into the server's %u, %u in flight",
			c->idx, c->val_seq, c->val_slots, c->val_peer,
			st->depth);
	else if (c->t->validate)
		kp_info(c->t, "connection %u: %llu messages sent, each written in its pattern first, from %u slots",
			c->idx, c->val_seq, c->val_slots);
}

/* @n completions of the stream reaped; its result once it is over. */
static int kp_bw_reap(struct kp_conn *c, struct ib_wc *wc, int n)
{
	struct kp_stream *st = &c->stream;
	bool timed = !st->warm;
	int i, ret;

	st->now = kp_clock_now(&c->t->clk);
	/* progress for kp_lanes_wait(), warm-up or timed */
	WRITE_ONCE(c->reaped, c->reaped + n);
	for (i = 0; i < n; i++) {
		if ((u8)wc[i].wr_id == st->kind) {
			/* this one and every unsignaled one before */
			u64 last = wc[i].wr_id >> KP_WR_IDX_SHIFT;

			if (timed && last >= st->done)
				kp_bw_slots_add(&st->slots, st->now,
						(last + 1 - st->done) *
						c->t->size);
			for (; st->done <= last; st->done++) {
				if (timed)
					kp_bw_track_done(&c->stream.track, st->done,
							 st->now);
				if (c->rw)
					kp_rw_done(c, st->done);
				/* in order: what it read is in its slot */
				if (c->t->validate && st->kind == KP_WR_READ) {
					ret = kp_bw_read_check(c, c->val_msgs);
					if (ret)
						return ret;
				}
			}
			continue;
		}
		/* our hello's and skips' own completions */
		if (wc[i].wr_id == KP_WR_SEND || wc[i].wr_id == KP_WR_SKIP)
			continue;
		/* duplex bw,send: the peer's stream, into our receives */
		if (kp_dx_send(c->t) && (wc[i].wr_id == KP_WR_RECV ||
					 wc[i].wr_id == KP_WR_DATA_RECV)) {
			ret = kp_send_dx_take(c, &wc[i]);
			if (ret)
				return ret;
			continue;
		}
		/* a duplex peer finished first: keep its FIN */
		if (wc[i].wr_id == KP_WR_RECV) {
			ret = kp_recv_keep(c, &wc[i]);
			if (ret)
				return ret;
			continue;
		}
		kp_err(c->t, "bw: unexpected completion %llu", wc[i].wr_id);
		return -EPROTO;
	}
	/* duplex bw,send: its receives again, once for what was taken */
	if (kp_dx_send(c->t)) {
		ret = kp_send_dx_repost(c);
		if (ret)
			return ret;
	}
	/* a duplex side's run is over at its own end (kp_stats_bw()) */
	if (timed && !st->end_ns)
		kp_run_tick(c, st->done, st->now);
	if (!st->stop || st->done < st->posted)
		return 0;
	if (!timed) {
		c->stream.over = true;
		return 0;
	}
	if (!st->end_ns) {
		st->end_ns = kp_clock_now(&c->t->clk);
		kp_bw_report(c);
	}
	/* duplex bw,send: the loop runs on to the peer's last message */
	c->stream.over = !kp_dx_send(c->t) || c->sink_over;
	return 0;
}

/*
 * One stream of this connection alone, from its thread: busy-poll the CQ
 * whenever the window is full, as perftest does (or, with events, sleep
 * on it); with txdepth in flight the wire stays busy meanwhile.
 */
static int kp_bw_stream(struct kp_conn *c, u64 warm)
{
	unsigned int spin = kp_loop_spin(c);
	struct ib_wc wc[KP_BW_BATCH] __uninitialized;
	int n, ret;

	kp_bw_start(c, warm);
	while (!c->stream.over) {
		ret = kp_bw_post(c);
		if (ret)
			return ret;
		n = kp_poll(c, wc, KP_BW_BATCH, spin);
		if (n < 0)
			return n;
		ret = kp_bw_reap(c, wc, n);
		if (ret)
			return ret;
		kp_loop_yield(c);
	}
	return 0;
}

/*
 * One step of a stream driven with others from one thread (kp_lanes.c):
 * post, reap what is there, never wait.  Returns the completions reaped.
 */
int kp_bw_step(struct kp_conn *c)
{
	struct ib_wc wc[KP_BW_BATCH] __uninitialized;
	int n, ret;

	ret = kp_bw_post(c);
	if (ret)
		return ret;
	n = kp_poll_now(c, wc, KP_BW_BATCH);
	if (n <= 0)
		return n;
	ret = kp_bw_reap(c, wc, n);
	return ret ?: n;
}

/* The skips a bw,send stream owes first (kp_send.c). */
int kp_bw_skips(struct kp_conn *c)
{
	int ret = kp_post_skips(c, c->skip_out);

	if (!ret)
		c->skip_out = 0;
	return ret;
}

/*
 * A connection's streams from a thread that drives it alone: a
 * client's warmup (!@timed), then the timed stream.
 */
int kp_bw_lane(struct kp_conn *c, bool timed)
{
	if (!timed)
		return c->t->opts.role == KP_ROLE_CLIENT && c->t->opts.warmup ?
		       kp_bw_stream(c, c->t->opts.warmup) : 0;
	return kp_bw_stream(c, 0);
}
