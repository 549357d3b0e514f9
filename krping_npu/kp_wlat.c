// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_wlat.c - RDMA WRITE ping-pong latency, as ib_write_lat measures it:
 * the client writes its start buffer into the server's buffer, the server
 * answers each write with one of its own, and each side sees the peer's
 * write arrive by polling the last byte of its own buffer, which carries
 * the write's mark.  The immediate-data variant (wlat,imm) sees each
 * write as a receive completion instead and never reads the buffers: the
 * choice for NPU memory, which the CPU cannot poll, and for events; a
 * side that needs it says so in its hello and both run it.  Half the
 * round trip is reported, as ib_write_lat does.
 *
 * The method is ib_write_lat's (run_iter_lat_write): every write signalled
 * and its completion awaited before the peer's, a sample from one post to
 * the next (our bookkeeping between round trips left out).  With light,
 * one write in KP_WLAT_SIGNAL is signalled and the completions are reaped
 * between round trips, never awaited: a sample from the post to the answer.
 */
#include <linux/ktime.h>
#include <linux/sched.h>

#include "krping_npu.h"
#include "kp_trace.h"

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
	struct ib_wc wc[KP_WLAT_BATCH] __uninitialized;
	bool arrived = false;
	int n, i, ret;
	u32 imm;

	if (!kp_imm_take(c, &imm)) {
		ret = kp_wlat_check(c, imm, seq, last);
		if (ret)
			return ret;
		arrived = true;
	}
	/* perftest's method: our own write's completion too */
	while (!arrived || (!c->t->opts.light && c->sends_out)) {
		n = kp_poll(c, wc, KP_WLAT_BATCH, spin);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id != KP_WR_RECV)
				continue;
			/* a write of the peer's ahead of our completion */
			if (arrived) {
				ret = kp_recv_keep(c, &wc[i]);
				if (ret)
					return ret;
				continue;
			}
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
 * The plain variant's marks, in the last byte of each write: 1..127 in
 * turn (never 0, a fresh buffer's byte, nor the mark before), with
 * KP_WLAT_LAST on the client's last write and its answer.
 */
#define KP_WLAT_LAST	0x80

static u8 kp_wlat_mark(u64 i)
{
	return 1 + i % 127;
}

/*
 * Reap what the CQ holds, without waiting: our signaled writes'
 * completions (an error ends the test), and a control message of the
 * peer's, kept for the FIN exchange.
 */
static int kp_wlat_take(struct kp_conn *c, const struct ib_wc *wc, int n)
{
	int i, ret;

	for (i = 0; i < n; i++) {
		/* our writes, and our last control message (the hello) */
		if (wc[i].wr_id == KP_WR_WRITE || wc[i].wr_id == KP_WR_SEND)
			continue;
		if (wc[i].wr_id == KP_WR_RECV) {
			ret = kp_recv_keep(c, &wc[i]);
			if (ret)
				return ret;
			continue;
		}
		kp_err(c->t, "wlat: unexpected completion %llu", wc[i].wr_id);
		return -EPROTO;
	}
	return 0;
}

static int kp_wlat_reap(struct kp_conn *c)
{
	struct ib_wc wc[KP_WLAT_BATCH] __uninitialized;
	int n;

	n = kp_poll_now(c, wc, ARRAY_SIZE(wc));
	return n < 0 ? n : kp_wlat_take(c, wc, n);
}

/*
 * perftest's method: wait for our write's completion, as ib_write_lat
 * polls its send CQ after each post; what else comes is taken as the
 * reaping does (a write with immediate of the peer's, kept for its wait).
 */
static int kp_wlat_own(struct kp_conn *c)
{
	unsigned int spin = kp_loop_spin(c);
	struct ib_wc wc[KP_WLAT_BATCH] __uninitialized;
	int n, ret;

	while (!c->t->opts.light && c->sends_out) {
		n = kp_poll(c, wc, ARRAY_SIZE(wc), spin);
		if (n < 0)
			return n;
		ret = kp_wlat_take(c, wc, n);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Poll the last byte of our buffer until it reads @mark (the peer's write
 * has landed: devices place a write's bytes in order, which ib_write_lat
 * relies on too), syncing it for the CPU before each read (a no-op where
 * DMA is coherent).  Every 64 reads, and only then, the checks: the CM's
 * word and a stop, the bound c->wait_ms and lateness (kp_run_late()) on
 * the clock the samples are taken with (a wait is late only if its round
 * trip is: the scheduler's clock, the TSC, runs apart from an HPET
 * clocksource under TCG).  The CPU goes as in kp_poll(): when the
 * scheduler asks (checked every read), or once late to any runnable
 * task.  The CQ is reaped only once the wait has lasted KP_LATE_US (a
 * failed write of ours ends it then), otherwise between round trips.
 */
static int kp_wlat_poll(struct kp_conn *c, u8 mark, bool *last)
{
	struct ib_device *dev = kp_dev(c);
	u64 at = c->rdma.dma + c->t->size - 1;
	const u8 *p = (const u8 *)c->rdma.vaddr + c->t->size - 1;
	unsigned int waited = 0;
	bool late = false;
	u64 begun = 0, now;
	unsigned int spins = 0;
	int ret;
	u8 v;

	for (;;) {
		ib_dma_sync_single_for_cpu(dev, at, 1, DMA_FROM_DEVICE);
		v = READ_ONCE(*p);
		if ((v & ~KP_WLAT_LAST) == mark) {
			*last = v & KP_WLAT_LAST;
			return 0;
		}
		if (c->run && kp_resched_asked())
			kp_run_give(c, late, &waited);
		if (++spins % 64)
			continue;
		ret = kp_cm_check(c);
		if (ret)
			return ret;
		if (kp_stopping(c->t))
			return -EINTR;
		now = kp_clock_now(&c->t->clk);
		if (!begun)
			begun = now;
		if (now - begun > (u64)c->wait_ms * NSEC_PER_MSEC) {
			kp_err(c->t, "wlat: no write of the peer's within %u ms",
			       c->wait_ms);
			return -ETIMEDOUT;
		}
		/* late from the wait's start, whether it yielded or not */
		if (c->run && !late && kp_run_late(c->run, now - begun)) {
			late = true;
			c->run->late_waits++;
			trace_kp_late_wait(c->t->rec->id, c->idx, now - begun);
		}
		/* old, or untimed: a failed write of ours ends it, not wait_ms */
		if (!c->run || now - begun >= KP_LATE_US * NSEC_PER_USEC) {
			ret = kp_wlat_reap(c);
			if (ret)
				return ret;
		}
		if (c->run)
			kp_run_give(c, late, &waited);
		else
			cond_resched();
	}
}

/*
 * Our buffer's last byte goes back to the device for the next write.  Only
 * the device writes this buffer, and the peer's next write may have landed
 * already (the server rearms after its answer): a sync of the CPU's copy
 * towards the device (bounce buffers: a copy over the device's) would undo
 * it.  Synced from the device only, both ways, on a bidirectional mapping.
 */
static void kp_wlat_rearm(struct kp_conn *c)
{
	ib_dma_sync_single_for_device(kp_dev(c), c->rdma.dma + c->t->size - 1,
				      1, DMA_FROM_DEVICE);
}

/* Our next write's @mark, in our start buffer's last byte. */
static void kp_wlat_mark_src(struct kp_conn *c, u8 mark)
{
	WRITE_ONCE(*((u8 *)c->start.vaddr + c->t->size - 1), mark);
	ib_dma_sync_single_for_device(kp_dev(c), c->start.dma + c->t->size - 1,
				      1, DMA_BIDIRECTIONAL);
}

/* Write our start buffer into the peer's buffer. */
static int kp_wlat_write(struct kp_conn *c, bool signal)
{
	return kp_post_rdma(c, IB_WR_RDMA_WRITE, &c->start, c->t->size,
			    KP_WR_WRITE, signal, 0);
}

/*
 * The plain variant.  The client marks its last write; the server answers
 * that one marked too, and stops.  Inside a timed interval: the mark, the
 * post, our completion and the poll of the answer's mark; with light, the
 * post and the poll only.
 */
static int kp_wlat_plain(struct kp_conn *c)
{
	bool client = c->t->opts.role == KP_ROLE_CLIENT;
	bool light = c->t->opts.light;
	u64 warm = client ? c->t->opts.warmup : 0;
	bool last = false, echo;
	u64 i, t0, now = 0;
	u8 mark;
	int ret;

	if (!c->start.vaddr || !c->rdma.vaddr) {
		kp_err(c->t, "wlat: the plain variant needs host memory on this side");
		return -EINVAL;
	}
	for (i = 0; !last; i++) {
		bool signal = !light || (i + 1) % KP_WLAT_SIGNAL == 0;
		bool timed = i >= warm;

		if (i == warm)
			now = kp_run_begin(c, &c->t->run);
		mark = kp_wlat_mark(i);
		if (client) {
			last = timed && kp_run_over(c, i - warm + 1, now);
			mark |= last ? KP_WLAT_LAST : 0;
			/* light: the mark before the clock, only the write timed */
			if (light)
				kp_wlat_mark_src(c, mark);
			t0 = kp_clock_now(&c->t->clk);
			if (!light)
				kp_wlat_mark_src(c, mark);
			ret = kp_wlat_write(c, signal || last) ?: kp_wlat_own(c);
			if (ret)
				return ret;
			ret = kp_wlat_poll(c, mark & ~KP_WLAT_LAST, &echo);
			now = kp_clock_now(&c->t->clk);
			if (ret)
				return ret;
			kp_wlat_rearm(c);
			if (echo != last) {
				kp_err(c->t, "wlat: the answer to write %llu %s the last mark",
				       i, echo ? "has" : "lacks");
				return -EPROTO;
			}
			if (timed) {
				kp_lat_sample(c, i - warm, now - t0);
				kp_run_tick(c, i - warm + 1, now);
			}
		} else {
			ret = kp_wlat_poll(c, mark, &last);
			if (ret)
				return ret;
			kp_wlat_mark_src(c, mark | (last ? KP_WLAT_LAST : 0));
			ret = kp_wlat_write(c, signal || last) ?: kp_wlat_own(c);
			if (ret)
				return ret;
			/* the answer first: the client's clock runs */
			kp_wlat_rearm(c);
		}
		/* between round trips: what the polls left of our completions */
		if (c->sends_out) {
			ret = kp_wlat_reap(c);
			if (ret)
				return ret;
		}
		kp_loop_yield(c);
	}
	return kp_pingpong_done(c, i, warm);
}

/*
 * The immediate-data variant.  The client ends each size by marking its
 * last write; the server, which knows neither count nor clock of the
 * client, answers that one (marked too) and stops.  The client's first
 * warmup= round trips are not timed; the server answers them like any
 * other.
 */
static int kp_wlat_imm(struct kp_conn *c)
{
	bool client = c->t->opts.role == KP_ROLE_CLIENT;
	u64 warm = client ? c->t->opts.warmup : 0;
	bool last = false, echo;
	u64 i, t0, now;
	u32 seq;
	int ret;

	now = 0;
	for (i = 0; !last; i++) {
		bool signal = !c->t->opts.light || (i + 1) % KP_WLAT_SIGNAL == 0;
		bool timed = i >= warm;

		if (i == warm)
			now = kp_run_begin(c, &c->t->run);
		seq = (u32)i & ~KP_IMM_LAST;
		t0 = kp_clock_now(&c->t->clk);
		if (client) {
			last = timed && kp_run_over(c, i - warm + 1, now);
			ret = kp_post_rdma(c, IB_WR_RDMA_WRITE_WITH_IMM,
					   &c->rdma, c->t->size, KP_WR_WRITE,
					   signal || last,
					   seq | (last ? KP_IMM_LAST : 0));
			if (ret)
				return ret;
		}
		/* the client ends by its own count or clock, not the mark */
		ret = kp_wlat_wait(c, seq, client ? &echo : &last);
		if (ret)
			return ret;
		now = kp_clock_now(&c->t->clk);
		if (client && echo != last) {
			kp_err(c->t, "wlat: the answer to write %llu %s the last mark",
			       i, echo ? "has" : "lacks");
			return -EPROTO;
		}
		if (client && timed) {
			kp_lat_sample(c, i - warm, now - t0);
			kp_run_tick(c, i - warm + 1, now);
		} else if (!client) {
			ret = kp_post_rdma(c, IB_WR_RDMA_WRITE_WITH_IMM,
					   &c->rdma, c->t->size, KP_WR_WRITE,
					   signal || last,
					   seq | (last ? KP_IMM_LAST : 0)) ?:
			      kp_wlat_own(c);
			if (ret)
				return ret;
		}
		kp_loop_yield(c);
	}
	return kp_pingpong_done(c, i, warm);
}

int kp_wlat_run(struct kp_conn *c)
{
	return c->t->wlat_imm ? kp_wlat_imm(c) : kp_wlat_plain(c);
}
