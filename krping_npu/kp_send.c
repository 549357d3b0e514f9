// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_send.c - the two-sided tests: slat, a SEND/RECV ping-pong (half the
 * round trip reported, as ib_send_lat does), and the receiving side of
 * bw,send.  Data messages land in receives posted on the data buffer
 * (host or NPU memory), never read by the CPU.
 *
 * A receive queue is FIFO, and control receives (KP_CTRL_SIZE bytes) sit
 * in it while the data receives are posted behind them.  So each side
 * stops reposting its control receives from then on (kp_rq_hold()), and
 * tells the peer in its hello how many are left ahead; the peer sends as
 * many zero-length SENDs (skips) before its first data message.  Only the
 * last data message of a size carries immediate data, KP_IMM_LAST; a side
 * that sees it queues its control receives again for the FIN exchange.
 * bw,send's server keeps up to c->rq_data_max data receives posted, and
 * in a stream by count none past its last message; those left when the
 * stream ends (by duration, or after a UD loss) it asks the client to
 * take with as many skips (KP_MSG_SKIP), and kp_send_flush() takes them.
 * With validate each data receive has a slot of the buffer, and the
 * server checks each message's every byte as it is reaped
 * (kp_send_check()); bw_imm's
 * server checks the slot the client wrote each message into, as its
 * immediate arrives.
 */
#include <linux/ktime.h>

#include "krping_npu.h"
#include "../proc/kp_payload.h"

#define KP_SEND_BATCH	16
#define KP_SLAT_SIGNAL	16	/* signal one ping in this many */

/*
 * imm (bw_imm, bw_send with imm): every data message's immediate is its
 * number in the size's stream, which the client counts from 0 with its
 * warm-up; the last has KP_IMM_LAST too.
 */
static int kp_send_take_imm(struct kp_conn *c, const struct ib_wc *wc,
			    u32 *got, bool *last)
{
	u32 want = (u32)(c->stream.done + *got) & ~KP_IMM_LAST;
	u32 imm = be32_to_cpu(wc->ex.imm_data);

	enum ib_wc_opcode op = c->t->mode == KP_MODE_BW_IMM ?
			       IB_WC_RECV_RDMA_WITH_IMM : IB_WC_RECV;

	if (wc->opcode != op) {
		kp_err(c->t, "%s: message %u completed as opcode %d, not %d",
		       kp_mode_name(c->t->mode), want, wc->opcode, op);
		return -EPROTO;
	}
	if (!(wc->wc_flags & IB_WC_WITH_IMM) || (imm & ~KP_IMM_LAST) != want) {
		kp_err(c->t, "%s: message %u of the stream carries %s0x%x, not its number",
		       kp_mode_name(c->t->mode), want,
		       wc->wc_flags & IB_WC_WITH_IMM ? "immediate " :
		       "no immediate, ", imm);
		return -EPROTO;
	}
	(*got)++;
	*last = imm & KP_IMM_LAST;
	return 0;
}

/* validate: message @seq, in its slot, checked byte for byte. */
static int kp_send_check(struct kp_conn *c, u64 seq)
{
	struct kp_val_bad bad;
	u32 slot;
	int ret;

	div_u64_rem(seq, c->val_slots, &slot);
	ret = kp_val_check(c, slot, seq, &bad);
	if (ret == -EBADMSG)
		kp_err(c->t, "validate: message %llu byte %ld of %u is 0x%02x, not 0x%02x",
		       seq, bad.at, c->t->size, bad.got, bad.want);
	return ret;
}

/*
 * A completion of the data phase: @*got counts the data messages, @*last
 * is set by the one with KP_IMM_LAST.  Skips must all come before data;
 * nothing else may arrive.
 */
static int kp_send_take(struct kp_conn *c, const struct ib_wc *wc, u32 *got,
			bool *last)
{
	int ret;

	switch (wc->wr_id) {
	case KP_WR_RECV:
		if (wc->byte_len || !c->skip_in) {
			kp_err(c->t, "a message of %u bytes in the data phase (%u skips due)",
			       wc->byte_len, c->skip_in);
			return -EPROTO;
		}
		c->skip_in--;
		return 0;
	case KP_WR_DATA_RECV:
		if (c->skip_in || *last || wc->byte_len != c->t->size) {
			kp_err(c->t, "data message of %u bytes (want %u), %u skips due%s",
			       wc->byte_len, c->t->size, c->skip_in,
			       *last ? ", after the last" : "");
			return -EPROTO;
		}
		if (c->t->imm_stream) {
			/* its number first: the slot checked is that message's */
			ret = kp_send_take_imm(c, wc, got, last);
			if (ret || !c->t->validate)
				return ret;
			return kp_send_check(c, c->stream.done + *got - 1);
		}
		if (c->t->validate) {
			ret = kp_send_check(c, c->stream.done + *got);
			if (ret)
				return ret;
		}
		(*got)++;
		if (wc->wc_flags & IB_WC_WITH_IMM) {
			if (be32_to_cpu(wc->ex.imm_data) != KP_IMM_LAST) {
				kp_err(c->t, "data message with immediate 0x%x",
				       be32_to_cpu(wc->ex.imm_data));
				return -EPROTO;
			}
			*last = true;
		}
		return 0;
	case KP_WR_DATA_SEND:
	case KP_WR_SKIP:
	case KP_WR_SEND:
		return 0;	/* our own sends */
	default:
		kp_err(c->t, "unexpected completion %llu in the data phase",
		       wc->wr_id);
		return -EPROTO;
	}
}

/*
 * Reap until the peer's next data message; *@last: it was the last.
 * perftest's method (not light): and until our sends have completed, as
 * ib_send_lat polls its send CQ after each post (the server's answer's
 * completion is awaited here, with the client's next message).
 */
static int kp_slat_wait(struct kp_conn *c, unsigned int spin, bool *last)
{
	struct ib_wc wc[4] __uninitialized;
	u32 got = 0;
	int n, i, ret;

	*last = false;
	while (!got || (!c->t->opts.light && c->sends_out)) {
		n = kp_poll(c, wc, ARRAY_SIZE(wc), spin);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			ret = kp_send_take(c, &wc[i], &got, last);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int kp_slat_send(struct kp_conn *c, bool last, bool signal)
{
	return kp_post_rdma(c, last ? IB_WR_SEND_WITH_IMM : IB_WR_SEND,
			    &c->rdma, c->t->size, KP_WR_DATA_SEND,
			    signal || last, last ? KP_IMM_LAST : 0);
}

/*
 * Ping-pong: the client sends, the server answers each message with one
 * of its own.  Each side keeps one data receive posted, reposted as soon
 * as a message is in and before this side's next send, so the peer never
 * finds the queue empty.  The client's warmup= round trips are not timed;
 * the server answers them like any other.  A sample, by ib_send_lat's
 * method: from the post to the next (the send, its completion, the
 * answer, the receive reposted); with light, from the post to the answer,
 * one send in KP_SLAT_SIGNAL signalled.
 */
int kp_slat_run(struct kp_conn *c)
{
	bool client = c->t->opts.role == KP_ROLE_CLIENT;
	u64 warm = client ? c->t->opts.warmup : 0;
	unsigned int spin = kp_loop_spin(c);
	bool light = c->t->opts.light;
	bool last = false, peer_last;
	u64 i, t0, now = 0;
	int ret;

	ret = kp_post_skips(c, c->skip_out);
	if (ret)
		return ret;
	c->skip_out = 0;
	for (i = 0; !last; i++) {
		bool signal = !light || (i + 1) % KP_SLAT_SIGNAL == 0;
		bool timed = i >= warm;

		if (i == warm)
			now = kp_run_begin(c, &c->t->run);
		t0 = kp_clock_now(&c->t->clk);
		if (client) {
			last = timed && kp_run_over(c, i - warm + 1, now);
			ret = kp_slat_send(c, last, signal);
			if (ret)
				return ret;
		}
		ret = kp_slat_wait(c, spin, &peer_last);
		if (ret)
			return ret;
		if (light)
			now = kp_clock_now(&c->t->clk);
		/* the next message's receive, or the FIN's */
		ret = peer_last ? kp_rq_restore(c) : kp_post_data_recv(c, 1);
		if (ret)
			return ret;
		if (!light)
			now = kp_clock_now(&c->t->clk);
		if (client && peer_last != last) {
			kp_err(c->t, "slat: the server's answer %llu is%s marked last",
			       i, peer_last ? "" : " not");
			return -EPROTO;
		}
		last = peer_last;
		if (client && timed) {
			kp_lat_sample(c, i - warm, now - t0);
			kp_run_tick(c, i - warm + 1, now);
		}
		if (!client) {
			ret = kp_slat_send(c, last, signal);
			if (ret)
				return ret;
		}
		kp_loop_yield(c);
	}
	return kp_pingpong_done(c, i, warm);
}

/*
 * bw,send's server: take what the client's stream has delivered, keeping
 * the receive queue full (reposting a batch as it is reaped) while the
 * stream has messages to come (kp_data_recv_used()), until the
 * message marked last; then queue control receives for the FIN exchange.
 * It times nothing: the client's result is the figure.  @wait: wait for a
 * completion (a connection alone), else only reap what is there.
 * Returns the completions reaped; the stream is over once it is in.
 */
static int kp_send_sink_step(struct kp_conn *c, bool wait)
{
	struct ib_wc wc[KP_SEND_BATCH] __uninitialized;
	u32 got = 0;
	int n, i, ret;

	n = wait ? kp_poll(c, wc, ARRAY_SIZE(wc), KP_SPIN_ALWAYS) :
		   kp_poll_now(c, wc, ARRAY_SIZE(wc));
	if (n <= 0)
		return n;
	for (i = 0; i < n; i++) {
		ret = kp_send_take(c, &wc[i], &got, &c->stream.stop);
		if (ret)
			return ret;
	}
	c->stream.done += got;
	if (got && !c->stream.stop) {
		ret = kp_data_recv_used(c, got);
		if (ret)
			return ret;
	}
	if (c->stream.stop) {
		ret = kp_rq_restore(c);
		if (ret)
			return ret;
		c->stream.over = true;
	}
	return n;
}

/* a connection's step among several (kp_lanes_sink()): no waiting */
int kp_send_sink_now(struct kp_conn *c)
{
	return kp_send_sink_step(c, false);
}

/* the clients' messages, for as long as they answer probes */
void kp_send_sink_begin(struct kp_test *t)
{
	u32 i;

	for (i = 0; i < t->nconns; i++) {
		kp_stream_reset(&t->conns[i]->stream);
		kp_probe_begin(t->conns[i]);
	}
}

/* bw,send's server of the test's one connection */
int kp_send_sink(struct kp_test *t)
{
	struct kp_conn *c0 = t->conns[0];
	int ret = 0;

	kp_send_sink_begin(t);
	while (!ret && !c0->stream.over) {
		ret = kp_send_sink_step(c0, true);
		ret = min(ret, 0);
	}
	return kp_send_sink_end(t, ret);
}

/*
 * ud: a UD receiver takes what finds a receive posted, and a SEND that
 * finds none is dropped, with no error on either side: what arrived on
 * each connection is checked against what the client's hello says it
 * sends (its count, its warm-up too).  A loss fails the size at that
 * connection's FIN (c->ud_loss), so the client hears it at once; a wait
 * for a last message that never came fails it here.
 */
static int kp_send_ud_check(struct kp_test *t, int ret)
{
	u64 want = (u64)t->count + t->warmup;
	char on[24] = "";
	u32 i;

	if (!t->conns[0]->ud || (ret && ret != -ETIMEDOUT))
		return ret;
	for (i = 0; i < t->nconns; i++) {
		struct kp_conn *c = t->conns[i];

		/* whole, or (one lost amid its stream) dropped, or waited for */
		if (c->stream.over && c->stream.done == want)
			continue;
		if (t->nconns > 1)
			snprintf(on, sizeof(on), "connection %u: ", i);
		if (!c->stream.over) {
			kp_err(t, "%sud: %llu of %llu messages arrived, then none: lost (a UD SEND that finds no receive posted is dropped), or the client stopped (UD tells no peer's end)",
			       on, c->stream.done, want);
			continue;
		}
		kp_err(t, "%sud: %llu of %llu messages arrived: the rest were dropped (a UD SEND that finds no receive posted is)",
		       on, c->stream.done, want);
		c->ud_loss = -EPROTO;
	}
	return ret;
}

/* Did a UD connection of the test lose messages (kp_send_ud_check())? */
static bool kp_send_ud_lost(struct kp_test *t)
{
	u32 i;

	for (i = 0; i < t->nconns; i++)
		if (t->conns[i]->ud_loss)
			return true;
	return false;
}

/* ... and of any number of them, once @ret says how their streams went */
int kp_send_sink_end(struct kp_test *t, int ret)
{
	struct kp_conn *c0 = t->conns[0];
	u64 total = 0, checked = 0;
	u32 i;

	for (i = 0; i < t->nconns; i++)
		kp_probe_end(t->conns[i]);
	ret = kp_send_ud_check(t, ret);
	if (ret || kp_send_ud_lost(t))
		return ret;
	for (i = 0; i < t->nconns; i++) {
		total += t->conns[i]->stream.done;
		checked += t->conns[i]->val_msgs;
	}
	if (t->nconns > 1)
		kp_rec_result(t, "%s served #bytes=%u #messages=%llu #qps=%u%s",
			      kp_mode_name(t->mode), t->size,
			      (unsigned long long)total, t->nconns,
			      t->validate ? " validated=yes" : "");
	else
		kp_rec_result(t, "%s served #bytes=%u #messages=%llu%s",
			      kp_mode_name(t->mode), t->size,
			      (unsigned long long)total,
			      t->validate ? " validated=yes" : "");
	if (t->validate)
		kp_info(t, "%s: %llu messages validated, every byte against its number and its 0xff/0x00/0xaa/0x55 bands, %u slots a connection",
			kp_mode_name(t->mode), (unsigned long long)checked,
			c0->val_slots);
	if (t->imm_stream)
		kp_info(t, "%s: %llu messages, each one's immediate data its number in the stream",
			kp_mode_name(t->mode), (unsigned long long)total);
	for (i = 0; t->opts.recv_post_list && i < t->nconns; i++)
		kp_info(t, "connection %u: %llu data receives posted in %llu chains of %u",
			i, t->conns[i]->rq_posted, t->conns[i]->rq_chains,
			t->opts.recv_post_list);
	return 0;
}

/*
 * duplex bw,send: a receive of the peer's stream, reaped by our own
 * stream's loop (kp_bw_reap()).  Each data message's receive is owed
 * back (kp_send_dx_repost()); the one marked last queues the control
 * receives again, and a control message after it (the peer's FIN) is
 * kept.
 */
int kp_send_dx_take(struct kp_conn *c, const struct ib_wc *wc)
{
	bool last = false;
	u32 got = 0;
	int ret;

	if (c->sink_over) {
		if (wc->wr_id == KP_WR_RECV)
			return kp_recv_keep(c, wc);
		kp_err(c->t, "duplex: a data message of %u bytes after the peer's last",
		       wc->byte_len);
		return -EPROTO;
	}
	ret = kp_send_take(c, wc, &got, &last);
	if (ret || !got)
		return ret;
	c->sink_done++;
	c->rq_owed++;
	if (!last)
		return 0;
	if (c->sink_done != c->rq_total) {
		kp_err(c->t, "duplex: the peer's stream ended at message %llu of %llu",
		       c->sink_done, c->rq_total);
		return -EPROTO;
	}
	c->sink_over = true;
	kp_info(c->t, "connection %u: duplex: the peer's %llu messages taken, in as many receives",
		c->idx, c->sink_done);
	return kp_rq_restore(c);
}

/*
 * ... and after a reap, the receives taken posted again in one chain,
 * while the peer has messages to come (c->rq_total: none is left over
 * to skip at the end).
 */
int kp_send_dx_repost(struct kp_conn *c)
{
	u32 n = min_t(u64, c->rq_owed, c->rq_total - c->rq_posted);

	c->rq_owed = 0;
	return n ? kp_post_data_recv(c, n) : 0;
}

/*
 * bw,send's server, after its SKIP: take the client's skips in the data
 * receives left over, so none is posted on the buffer when it goes.
 */
int kp_send_flush(struct kp_conn *c)
{
	struct ib_wc wc[KP_SEND_BATCH] __uninitialized;
	int n, i, ret;

	while (c->rq_data) {
		n = kp_poll(c, wc, ARRAY_SIZE(wc), KP_SPIN_ALWAYS);
		if (n < 0)
			return n;
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id == KP_WR_DATA_RECV && !wc[i].byte_len)
				continue;
			if (wc[i].wr_id == KP_WR_RECV) {
				/* the client's FIN, after its skips */
				ret = kp_recv_keep(c, &wc[i]);
				if (ret)
					return ret;
				continue;
			}
			if (wc[i].wr_id == KP_WR_SEND)
				continue;
			kp_err(c->t, "completion %llu (%u bytes) among the skips",
			       wc[i].wr_id, wc[i].byte_len);
			return -EPROTO;
		}
	}
	return 0;
}
