// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_ping.c - the rping/krping ping protocol, one round:
 *
 *   client                               server
 *   REG_MR start (new key), SEND info -> RDMA READ client's start
 *                                     <- SEND (ack)
 *   REG_MR rdma (new key), SEND info  -> RDMA WRITE into client's rdma
 *                                     <- SEND (round done)
 *   validate rdma == start, invalidate the keys the server left alive
 *
 * The advertisement is struct kp_rdma_info, the payload kp_ping_fill()'s,
 * so either side interoperates with rping.  A server whose first message
 * is a kp_hello hands over to the test modes (kp_test.c).
 */
#include <linux/slab.h>

#include "krping_npu.h"
#include "../proc/kp_payload.h"

#define KP_INFO_LEN	sizeof(struct kp_rdma_info)
#define KP_SHOW_MAX	64	/* bytes of payload a verbose line shows */

static void kp_ping_result(struct kp_conn *c, u32 rounds, u32 size)
{
	char line[KP_RESULT_MAX];

	kp_ping_format(line, sizeof(line), rounds, size, c->t->opts.validate);
	kp_rec_result(c->t, "%s", line);
}

/* Post an advertisement of @b; its completion is reaped on the way. */
static int kp_send_info(struct kp_conn *c, struct kp_buf *b, u32 len,
			u32 inv_rkey)
{
	void *msg = kp_send_buf(c);

	if (IS_ERR(msg))
		return PTR_ERR(msg);
	kp_set_info(msg, b, len);
	return kp_post_send_msg(c, KP_INFO_LEN, inv_rkey);
}

static int kp_recv_info(struct kp_conn *c, unsigned int spin)
{
	int ret = kp_wait_for(c, KP_WR_RECV, spin);

	if (ret)
		return ret;
	if (c->recv_len != KP_INFO_LEN) {
		kp_err(c->t, "ping message of %u bytes, want %zu", c->recv_len,
		       KP_INFO_LEN);
		return -EPROTO;
	}
	kp_get_info(c, c->recv_msg);
	return 0;
}

/* The server may have invalidated @b's key with SEND_WITH_INV. */
static int kp_note_remote_inv(struct kp_conn *c, struct kp_buf *b)
{
	if (!c->recv_inv_rkey)
		return 0;
	if (c->recv_inv_rkey != b->mr->rkey) {
		kp_err(c->t, "peer invalidated rkey 0x%x, expected 0x%x",
		       c->recv_inv_rkey, b->mr->rkey);
		return -EPROTO;
	}
	b->registered = false;
	return 0;
}

int kp_ping_client(struct kp_conn *c)
{
	unsigned int spin = c->t->opts.poll ? KP_SPIN_ALWAYS : 0;
	u32 size = c->t->opts.size, round;
	u8 *start, *rdma;
	int ret;

	ret = kp_buf_alloc(c, &c->start, size);
	if (ret)
		return ret;
	ret = kp_buf_alloc(c, &c->rdma, size);
	if (ret)
		return ret;
	start = kp_buf_cpu(&c->start);
	rdma = kp_buf_cpu(&c->rdma);

	for (round = 0; round < c->t->opts.count; round++) {
		kp_ping_fill(start, size, round);
		ret = kp_buf_to_dev(c, &c->start, size);
		if (ret)
			break;
		/* validate clears it; verbose, too, read it last round */
		if (c->t->opts.validate)
			memset(rdma, 0, size);
		if (c->t->opts.validate || c->t->opts.verbose) {
			ret = kp_buf_to_dev(c, &c->rdma, size);
			if (ret)
				break;
		}

		/* READ_ADV: the server reads our start buffer */
		ret = kp_post_reg(c, &c->start, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_READ, false);
		if (ret)
			break;
		ret = kp_send_info(c, &c->start, size, 0);
		if (ret)
			break;
		ret = kp_wait_for(c, KP_WR_RECV, spin);
		if (ret)
			break;
		ret = kp_note_remote_inv(c, &c->start);
		if (ret)
			break;

		/* WRITE_ADV: the server writes it back into our rdma buffer */
		ret = kp_post_reg(c, &c->rdma, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE, false);
		if (ret)
			break;
		ret = kp_send_info(c, &c->rdma, size, 0);
		if (ret)
			break;
		ret = kp_wait_for(c, KP_WR_RECV, spin);
		if (ret)
			break;
		ret = kp_note_remote_inv(c, &c->rdma);
		if (ret)
			break;

		/* retire the keys of this round */
		if (c->start.registered) {
			ret = kp_post_inv(c, &c->start, false);
			if (ret)
				break;
		}
		if (c->rdma.registered) {
			ret = kp_post_inv(c, &c->rdma, false);
			if (ret)
				break;
		}

		if (!c->t->opts.validate && !c->t->opts.verbose)
			continue;
		ret = kp_buf_to_cpu(c, &c->rdma, size);
		if (ret)
			break;
		if (c->t->opts.validate && memcmp(start, rdma, size)) {
			long at = kp_ping_check(rdma, size, round);

			kp_err(c->t, "round %u: data differs at byte %ld", round,
			       at);
			kp_rec_result(c->t, "error=%d validation failed: round %u byte %ld",
				      -EBADMSG, round, at);
			ret = -EBADMSG;
			break;
		}
		if (c->t->opts.verbose)
			kp_info(c->t, "ping data: %.*s",
				(int)min_t(u32, size - 1, KP_SHOW_MAX), rdma);
	}
	if (ret)
		return ret;
	kp_ping_result(c, round, size);
	return 0;
}

/* One served round: READ the client's data, ack, WRITE it back, done. */
static int kp_serve_round(struct kp_conn *c, u32 round, u32 *len,
			  unsigned int spin)
{
	/* an iWARP READ sink is written by the peer's responses */
	const int sink = IB_ACCESS_LOCAL_WRITE |
			 (c->iwarp ? IB_ACCESS_REMOTE_WRITE : 0);
	enum ib_wr_opcode rd = c->t->opts.read_inv ? IB_WR_RDMA_READ_WITH_INV :
			       IB_WR_RDMA_READ;
	bool use_mr = !c->t->opts.local_dma_lkey;
	u32 wlen;
	int ret;

	/* every round's data, as the first's, is 1 byte to the buffer's size */
	if (!c->remote_len || c->remote_len > c->rdma.size) {
		kp_err(c->t, "round %u: client offers %u bytes, buffer is %u",
		       round, c->remote_len, c->rdma.size);
		return -EMSGSIZE;
	}
	*len = c->remote_len;
	if (use_mr) {
		ret = kp_post_reg(c, &c->rdma, sink, false);
		if (ret)
			return ret;
	}
	ret = kp_post_rdma(c, rd, &c->rdma, *len, KP_WR_READ, true, 0);
	if (ret)
		return ret;
	ret = kp_wait_for(c, KP_WR_READ, spin);
	if (ret)
		return ret;
	if (c->t->opts.read_inv)
		c->rdma.registered = false;

	if (c->t->opts.validate || c->t->opts.verbose) {
		ret = kp_buf_to_cpu(c, &c->rdma, *len);
		if (ret)
			return ret;
	}
	if (c->t->opts.validate) {
		long at = kp_ping_check(kp_buf_cpu(&c->rdma), *len, round);

		if (at >= 0) {
			kp_err(c->t, "round %u: byte %ld is not the ping payload",
			       round, at);
			kp_rec_result(c->t, "error=%d validation failed: round %u byte %ld",
				      -EBADMSG, round, at);
			return -EBADMSG;
		}
	}
	if (c->t->opts.verbose)
		kp_info(c->t, "server ping data: %.*s",
			(int)min_t(u32, *len ? *len - 1 : 0, KP_SHOW_MAX),
			(char *)kp_buf_cpu(&c->rdma));

	/* read by the CPU above: the device's again before it writes it back */
	if (c->t->opts.validate || c->t->opts.verbose) {
		ret = kp_buf_to_dev(c, &c->rdma, *len);
		if (ret)
			return ret;
	}

	ret = kp_send_info(c, &c->rdma, *len,
			   c->t->opts.server_inv ? c->remote_rkey : 0);
	if (ret)
		return ret;

	ret = kp_recv_info(c, spin);
	if (ret)
		return ret;
	wlen = min(*len, c->remote_len);
	if (use_mr && !c->rdma.registered) {
		ret = kp_post_reg(c, &c->rdma, sink, false);
		if (ret)
			return ret;
	}
	ret = kp_post_rdma(c, IB_WR_RDMA_WRITE, &c->rdma, wlen, KP_WR_WRITE,
			   true, 0);
	if (ret)
		return ret;
	ret = kp_wait_for(c, KP_WR_WRITE, spin);
	if (ret)
		return ret;

	ret = kp_send_info(c, &c->rdma, wlen,
			   c->t->opts.server_inv ? c->remote_rkey : 0);
	if (ret)
		return ret;
	if (use_mr && c->rdma.registered)
		ret = kp_post_inv(c, &c->rdma, false);
	return ret;
}

int kp_ping_server(struct kp_conn *c)
{
	unsigned int spin = c->t->opts.poll ? KP_SPIN_ALWAYS : 0;
	u32 round, len = 0;
	int ret;

	ret = kp_wait_for(c, KP_WR_RECV, spin);
	if (ret == -ECONNRESET) {
		kp_rec_result(c->t, "client left without a message");
		return 0;
	}
	if (ret)
		return ret;
	if (c->recv_len == sizeof(struct kp_hello) ||
	    c->recv_len == KP_HELLO_V6_LEN || c->recv_len == KP_HELLO_V5_LEN ||
	    c->recv_len == KP_HELLO_V4_LEN)
		return kp_test_server(c->t);
	if (c->recv_len != KP_INFO_LEN) {
		kp_err(c->t, "first message of %u bytes is neither ping nor hello",
		       c->recv_len);
		return -EPROTO;
	}
	/* a ping's READs and WRITEs have no UD QP to go on */
	if (c->ud) {
		kp_err(c->t, "ud: the client's first message is a ping's, and a UD server runs slat");
		return -EPROTO;
	}
	if (c->t->opts.mode != KP_MODE_PING) {
		kp_err(c->t, "server runs %s, client runs ping",
		       kp_mode_name(c->t->opts.mode));
		return -EPROTO;
	}
	ret = kp_rx_opts_check(c->t, KP_MODE_PING, false);
	if (ret)
		return ret;
	kp_get_info(c, c->recv_msg);
	if (!c->remote_len || c->remote_len > KP_MAX_SIZE) {
		kp_err(c->t, "client offers %u bytes, limit %u", c->remote_len,
		       KP_MAX_SIZE);
		return -EMSGSIZE;
	}
	ret = kp_buf_alloc(c, &c->rdma, c->remote_len);
	if (ret)
		return ret;

	for (round = 0; ; round++) {
		if (round) {
			ret = kp_recv_info(c, spin);
			if (ret == -ECONNRESET) {
				ret = 0;	/* the client is done */
				break;
			}
			if (ret)
				return ret;
		}
		ret = kp_serve_round(c, round, &len, spin);
		if (ret)
			return ret;
	}
	kp_ping_result(c, round, len);
	return 0;
}
