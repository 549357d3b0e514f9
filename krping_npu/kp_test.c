// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_test.c - setup and end of the test modes (rlat, wlat, slat, bw,
 * bw_read, bw_send, fr):
 *
 *   client                                server
 *   HELLO {buffer, mode, count or      ->  checks, allocates its buffer
 *          duration, size}
 *                                      <-  HELLO_ACK {status, buffer}
 *   ... the mode's loop ...
 *                                      <-  SKIP {n} (bw_send: skips wanted)
 *   FIN {MORE if another size follows} ->  (duplex: after its own stream)
 *                                      <-  FIN
 *   ... the same from HELLO for each further size of a sweep ...
 *   disconnect
 *
 * The server learns the mode and sizes from each hello, so one
 * "server,addr=...,port=..." serves any client.  Each size gets fresh
 * buffers, registered for just that size.  In slat and bw_send, HELLO
 * and HELLO_ACK also say how many skips the peer owes this side
 * (kp_send.c).
 */
#include "krping_npu.h"

#define KP_REMOTE_ALL	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

static int kp_send_hello(struct kp_cb *cb, enum kp_msg_type type, int status,
			 u8 flags, u32 skip)
{
	struct kp_hello *h = kp_send_buf(cb);

	if (IS_ERR(h))
		return PTR_ERR(h);
	memset(h, 0, sizeof(*h));
	if (cb->rdma.mr)
		kp_set_info(&h->info, &cb->rdma, cb->size);
	h->magic = cpu_to_be32(KP_HELLO_MAGIC);
	h->version = KP_HELLO_VERSION;
	h->type = type;
	h->mode = cb->mode;
	h->flags = flags | (cb->duplex ? KP_HELLO_DUPLEX : 0);
	h->count = cpu_to_be32(cb->count);
	h->status = cpu_to_be32(-status);
	h->duration = cpu_to_be32(cb->duration_s);
	h->skip = cpu_to_be32(skip);
	return kp_post_send_msg(cb, sizeof(*h), 0);
}

/* Receive a hello of @type (or check the one already received). */
static int kp_check_hello(struct kp_cb *cb, enum kp_msg_type type,
			  bool received)
{
	const struct kp_hello *h = cb->recv_msg;
	int ret;

	if (!received) {
		ret = kp_wait_for(cb, KP_WR_RECV, 0);
		if (ret)
			return ret;
	}
	if (cb->recv_len != sizeof(*h) ||
	    be32_to_cpu(h->magic) != KP_HELLO_MAGIC ||
	    h->version != KP_HELLO_VERSION || h->type != type) {
		kp_err(cb, "bad control message: %u bytes, type %u (want %u)",
		       cb->recv_len, cb->recv_len == sizeof(*h) ? h->type : 0,
		       type);
		return -EPROTO;
	}
	return 0;
}

/* The loop of this side: NULL when it only serves the peer's one-sided ops. */
static int (*kp_test_loop(struct kp_cb *cb))(struct kp_cb *)
{
	bool client = cb->opts.role == KP_ROLE_CLIENT;

	switch (cb->mode) {
	case KP_MODE_RLAT:
		return client ? kp_rlat_run : NULL;
	case KP_MODE_WLAT:
		return kp_wlat_run;
	case KP_MODE_BW:
		return client || cb->duplex ? kp_bw_run : NULL;
	case KP_MODE_BW_READ:
		return client ? kp_bw_run : NULL;
	case KP_MODE_FR:
		return client ? kp_fr_run : NULL;
	case KP_MODE_SLAT:
		return kp_slat_run;
	case KP_MODE_BW_SEND:
		return client ? kp_bw_run : kp_send_sink;
	default:
		return NULL;
	}
}

/* The data buffer and the timestamps of a test mode (fr included). */
int kp_test_alloc(struct kp_cb *cb)
{
	int ret;

	ret = kp_buf_alloc(cb, &cb->rdma, cb->size);
	if (ret)
		return ret;
	return kp_stats_alloc(cb);
}

/* ... and their end, after a size (kp_free_verbs() does it on errors). */
void kp_test_release(struct kp_cb *cb)
{
	kp_stats_free(cb);
	kp_buf_free(cb, &cb->rdma);
}

/*
 * ... registered for the peer's READs and WRITEs, once per size.  fr
 * registers its buffer in its own loop, and its server has none.
 */
static int kp_test_prepare(struct kp_cb *cb)
{
	if (cb->mode == KP_MODE_FR)
		return cb->opts.role == KP_ROLE_CLIENT ? kp_test_alloc(cb) : 0;
	return kp_test_alloc(cb) ?:
	       kp_post_reg(cb, &cb->rdma, KP_REMOTE_ALL, true) ?:
	       kp_wait_for(cb, KP_WR_REG, 0);
}

/* The skips a peer's message asks for: at most @max. */
static int kp_test_skips(struct kp_cb *cb, u32 max)
{
	const struct kp_hello *h = cb->recv_msg;
	u32 skip = be32_to_cpu(h->skip);

	if (skip > max) {
		kp_err(cb, "peer asks for %u skips, at most %u make sense",
		       skip, max);
		return -EPROTO;
	}
	return skip;
}

/*
 * A size ends: no data receive may still be posted on the buffer that
 * kp_test_release() frees.
 */
static int kp_test_end(struct kp_cb *cb)
{
	if (cb->rq_data || cb->rq_hold) {
		kp_err(cb, "%u data receives still posted at the end of a size",
		       cb->rq_data);
		return -EPROTO;
	}
	kp_test_release(cb);
	return 0;
}

/*
 * How long to wait for the peer's FIN while the peer may still stream
 * (the server of a one-sided test, either side of a duplex one, which
 * sees no sign of progress meanwhile): the timeout plus the duration, or
 * plus 1 ms per message and per 64 KiB moved, of every connection.
 */
static u32 kp_test_fin_ms(struct kp_cb *cb)
{
	u64 msgs = (u64)cb->count * cb->lead->nlanes;

	return (u32)min_t(u64, cb->opts.timeout_ms +
			  cb->duration_s * MSEC_PER_SEC + msgs +
			  (msgs * cb->size >> 16), U32_MAX / 2);
}

/* A connection's part of a size, from HELLO to the HELLO_ACK. */
static int kp_test_client_open(struct kp_cb *cb)
{
	const struct kp_hello *h = cb->recv_msg;
	u32 skip = 0;
	int ret;

	ret = kp_test_prepare(cb);
	if (ret)
		return ret;
	if (cb->mode == KP_MODE_SLAT) {
		/* the server's answers: behind what the ACK leaves */
		ret = kp_rq_hold(cb, 1);
		if (ret)
			return ret;
		skip = cb->rq_ctrl - 1;
	}
	ret = kp_send_hello(cb, KP_MSG_HELLO, 0, 0, skip);
	if (ret)
		return ret;
	ret = kp_check_hello(cb, KP_MSG_HELLO_ACK, false);
	if (ret)
		return ret;
	if (h->status) {
		kp_err(cb, "server refused the test: error %d",
		       -(int)be32_to_cpu(h->status));
		return -(int)be32_to_cpu(h->status);
	}
	kp_get_info(cb, &h->info);
	if (kp_mode_send(cb->mode)) {
		ret = kp_test_skips(cb, KP_RQ_DEPTH);
		if (ret < 0)
			return ret;
		cb->skip_out = ret;
		if (cb->rq_hold && cb->rq_ctrl != skip) {
			kp_err(cb, "%u control receives ahead of the data, %u announced",
			       cb->rq_ctrl, skip);
			return -EPROTO;
		}
		cb->skip_in = skip;
	}
	return 0;
}

/* ... and from the stream's end to the server's FIN. */
static int kp_test_client_close(struct kp_cb *cb, bool more)
{
	int ret;

	if (cb->mode == KP_MODE_BW_SEND) {
		/* the server's data receives left over take skips too */
		ret = kp_check_hello(cb, KP_MSG_SKIP, false);
		if (ret)
			return ret;
		ret = kp_test_skips(cb, KP_DATA_RQ);
		if (ret < 0)
			return ret;
		ret = kp_post_skips(cb, ret);
		if (ret)
			return ret;
	}
	ret = kp_send_hello(cb, KP_MSG_FIN, 0, more ? KP_HELLO_MORE : 0, 0);
	if (ret)
		return ret;
	/* duplex: the server's streams may run on after ours */
	if (cb->duplex)
		cb->wait_ms = kp_test_fin_ms(cb);
	ret = kp_check_hello(cb, KP_MSG_FIN, false);
	cb->wait_ms = cb->opts.timeout_ms;
	if (ret)
		return ret;
	return kp_test_end(cb);
}

/*
 * The stream of a test of several connections, or of one on cpus=,
 * runs in kp_lanes.c; any other test's loop in this thread.
 */
static int kp_test_run(struct kp_cb *lead, int (*loop)(struct kp_cb *))
{
	if ((lead->nlanes > 1 || lead->opts.ncpus) && loop == kp_bw_run)
		return kp_lanes_bw(lead);
	return loop(lead);
}

/* One size of the client's sweep, on each connection. */
static int kp_test_client_size(struct kp_cb *lead, bool more)
{
	u32 i;
	int ret;

	for (i = 0; i < lead->nlanes; i++) {
		struct kp_cb *l = lead->lanes[i];

		l->mode = lead->mode;
		l->count = lead->count;
		l->duration_s = lead->duration_s;
		l->size = lead->size;
		l->duplex = lead->duplex;
		ret = kp_test_client_open(l);
		if (ret)
			return ret;
	}
	ret = kp_test_run(lead, kp_test_loop(lead));
	if (ret)
		return ret;
	for (i = 0; i < lead->nlanes; i++) {
		ret = kp_test_client_close(lead->lanes[i], more);
		if (ret)
			return ret;
	}
	return 0;
}

int kp_test_client(struct kp_cb *cb)
{
	u32 k;
	int ret;

	cb->mode = cb->opts.mode;
	cb->count = cb->opts.duration_s ? 0 : cb->opts.count;
	cb->duration_s = cb->opts.duration_s;
	cb->size = cb->opts.size;
	cb->duplex = cb->opts.duplex;

	for (k = 0; k < cb->opts.nsizes; k++) {
		cb->size = cb->opts.sizes[k];
		ret = kp_test_client_size(cb, k + 1 < cb->opts.nsizes);
		if (ret)
			return ret;
	}
	return 0;
}

/* Is the client's hello (cb->recv_msg) one this server can serve? */
static int kp_test_check(struct kp_cb *cb)
{
	const struct kp_hello *h = cb->recv_msg;
	int ret;

	cb->mode = h->mode;
	cb->count = be32_to_cpu(h->count);
	cb->duration_s = be32_to_cpu(h->duration);
	cb->size = be32_to_cpu(h->info.size);
	cb->duplex = h->flags & KP_HELLO_DUPLEX;
	kp_get_info(cb, &h->info);
	cb->rec->mode = cb->mode;

	if (cb->mode != KP_MODE_RLAT && cb->mode != KP_MODE_WLAT &&
	    cb->mode != KP_MODE_SLAT && !kp_mode_bw(cb->mode) &&
	    cb->mode != KP_MODE_FR) {
		kp_err(cb, "client asks for unknown mode %u", cb->mode);
		return -EPROTO;
	}
	if (cb->opts.mode != KP_MODE_PING && cb->opts.mode != cb->mode) {
		kp_err(cb, "server runs %s, client runs %s",
		       kp_mode_name(cb->opts.mode), kp_mode_name(cb->mode));
		return -EPROTO;
	}
	if (cb->count > KP_MAX_COUNT || !cb->size || cb->size > KP_MAX_SIZE ||
	    !cb->count == !cb->duration_s ||
	    cb->duration_s > KP_MAX_DURATION) {
		kp_err(cb, "client asks for count %u duration %u size %u",
		       cb->count, cb->duration_s, cb->size);
		return -EINVAL;
	}
	if (cb->duplex && cb->mode != KP_MODE_BW) {
		kp_err(cb, "client asks for a duplex %s", kp_mode_name(cb->mode));
		return -EINVAL;
	}
	/* slat: the client's control receives ahead of its data receive */
	ret = kp_test_skips(cb, cb->mode == KP_MODE_SLAT ? KP_RQ_DEPTH : 0);
	if (ret < 0)
		return ret;
	cb->skip_out = ret;
	return 0;
}

/*
 * slat, bw_send: this side's data receives behind its control receives,
 * before the ACK lets the client send; the ACK asks for the skips.
 */
static int kp_test_recvs(struct kp_cb *cb)
{
	int ret;

	if (!kp_mode_send(cb->mode))
		return 0;
	ret = kp_rq_hold(cb, cb->mode == KP_MODE_SLAT ? 1 : cb->rq_data_max);
	if (ret)
		return ret;
	cb->skip_in = cb->rq_ctrl;
	return 0;
}

/*
 * A connection's hello of a size (lane 0's has arrived), checked against
 * lane 0's, and our HELLO_ACK.
 */
static int kp_test_server_open(struct kp_cb *cb)
{
	struct kp_cb *lead = cb->lead;
	int ret, refuse;

	if (cb != lead) {
		ret = kp_wait_for(cb, KP_WR_RECV, 0);
		if (ret)
			return ret;
	}
	ret = kp_check_hello(cb, KP_MSG_HELLO, true);
	if (ret)
		return ret;
	refuse = kp_test_check(cb);
	if (!refuse && cb != lead &&
	    (cb->mode != lead->mode || cb->count != lead->count ||
	     cb->duration_s != lead->duration_s || cb->size != lead->size ||
	     cb->duplex != lead->duplex)) {
		kp_err(cb, "connection %u asks for another test than connection 0",
		       cb->lane);
		refuse = -EPROTO;
	}
	refuse = refuse ?: kp_test_prepare(cb) ?: kp_test_recvs(cb);
	if (refuse) {
		kp_send_hello(cb, KP_MSG_HELLO_ACK, refuse, 0, 0);
		return refuse;
	}
	return kp_send_hello(cb, KP_MSG_HELLO_ACK, 0, 0, cb->skip_in);
}

/* After the stream: bw_send's skips, the client's FIN and ours. */
static int kp_test_server_close(struct kp_cb *cb)
{
	struct kp_cb *lead = cb->lead;
	const struct kp_hello *h = cb->recv_msg;
	int ret;

	if (cb->mode == KP_MODE_BW_SEND) {
		ret = kp_send_hello(cb, KP_MSG_SKIP, 0, 0, cb->rq_data) ?:
		      kp_send_flush(cb);
		if (ret)
			return ret;
	}
	cb->wait_ms = kp_test_fin_ms(cb);
	ret = kp_check_hello(cb, KP_MSG_FIN, false);
	cb->wait_ms = cb->opts.timeout_ms;
	if (ret)
		return ret;
	if (cb == lead) {
		cb->more = h->flags & KP_HELLO_MORE;
	} else if (!!(h->flags & KP_HELLO_MORE) != lead->more) {
		kp_err(cb, "connection %u's FIN disagrees with connection 0's on another size",
		       cb->lane);
		return -EPROTO;
	}
	ret = kp_send_hello(cb, KP_MSG_FIN, 0, 0, 0);
	if (ret)
		return ret;
	return kp_test_end(cb);
}

/* Serve one size on each connection: the lead's hello has arrived. */
static int kp_test_server_size(struct kp_cb *lead)
{
	int (*loop)(struct kp_cb *cb);
	u32 i;
	int ret;

	for (i = 0; i < lead->nlanes; i++) {
		ret = kp_test_server_open(lead->lanes[i]);
		if (ret)
			return ret;
	}
	loop = kp_test_loop(lead);
	if (loop) {
		ret = kp_test_run(lead, loop);
		if (ret)
			return ret;
	} else {
		char qps[sizeof(" #qps=4294967295")] = "";

		if (lead->nlanes > 1)
			snprintf(qps, sizeof(qps), " #qps=%u", lead->nlanes);
		if (lead->duration_s)
			kp_rec_result(lead, "%s served #bytes=%u duration[s]=%u%s",
				      kp_mode_name(lead->mode), lead->size,
				      lead->duration_s, qps);
		else
			kp_rec_result(lead, "%s served #bytes=%u #iterations=%u%s",
				      kp_mode_name(lead->mode), lead->size,
				      lead->count, qps);
	}
	for (i = 0; i < lead->nlanes; i++) {
		ret = kp_test_server_close(lead->lanes[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* The client's first hello arrived (cb->recv_msg); serve each size. */
int kp_test_server(struct kp_cb *cb)
{
	int ret;

	for (;;) {
		ret = kp_test_server_size(cb);
		if (ret || !cb->more)
			return ret;
		ret = kp_wait_for(cb, KP_WR_RECV, 0);
		if (ret)
			return ret;
	}
}
