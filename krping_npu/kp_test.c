// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_test.c - setup and end of the test modes (rlat, wlat, bw):
 *
 *   client                                server
 *   HELLO {buffer, mode, count, size}  ->  checks, allocates its buffer
 *                                      <-  HELLO_ACK {status, buffer}
 *   ... the mode's loop ...
 *   FIN                                ->  (duplex: after its own stream)
 *                                      <-  FIN
 *   disconnect
 *
 * The server learns the mode and sizes from the hello, so one
 * "server,addr=...,port=..." serves any client.
 */
#include "krping_npu.h"

#define KP_REMOTE_ALL	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

static int kp_send_hello(struct kp_cb *cb, enum kp_msg_type type, int status)
{
	struct kp_hello *h = cb->send_msg;
	int ret;

	memset(h, 0, sizeof(*h));
	if (cb->rdma.mr)
		kp_set_info(&h->info, &cb->rdma, cb->size);
	h->magic = cpu_to_be32(KP_HELLO_MAGIC);
	h->version = KP_HELLO_VERSION;
	h->type = type;
	h->mode = cb->mode;
	h->flags = cb->duplex ? KP_HELLO_DUPLEX : 0;
	h->count = cpu_to_be32(cb->count);
	h->status = cpu_to_be32(-status);
	ret = kp_post_send_msg(cb, sizeof(*h), 0);
	if (ret)
		return ret;
	return kp_wait_for(cb, KP_WR_SEND, 0);
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

/* ... registered once, for the peer's READs and WRITEs. */
static int kp_test_prepare(struct kp_cb *cb)
{
	return kp_test_alloc(cb) ?:
	       kp_post_reg(cb, &cb->rdma, KP_REMOTE_ALL, true) ?:
	       kp_wait_for(cb, KP_WR_REG, 0);
}

int kp_test_client(struct kp_cb *cb)
{
	const struct kp_hello *h = cb->recv_msg;
	int ret;

	cb->mode = cb->opts.mode;
	cb->count = cb->opts.count;
	cb->size = cb->opts.size;
	cb->duplex = cb->opts.duplex;
	if (cb->mode == KP_MODE_FR)
		return kp_fr_run(cb);

	ret = kp_test_prepare(cb);
	if (ret)
		return ret;
	ret = kp_send_hello(cb, KP_MSG_HELLO, 0);
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

	ret = kp_test_loop(cb)(cb);
	if (ret)
		return ret;
	ret = kp_send_hello(cb, KP_MSG_FIN, 0);
	if (ret)
		return ret;
	return kp_check_hello(cb, KP_MSG_FIN, false);
}

/* The client's hello arrived (cb->recv_msg); serve the test it asks for. */
int kp_test_server(struct kp_cb *cb)
{
	const struct kp_hello *h = cb->recv_msg;
	int (*loop)(struct kp_cb *cb);
	int ret, refuse = 0;

	ret = kp_check_hello(cb, KP_MSG_HELLO, true);
	if (ret)
		return ret;
	cb->mode = h->mode;
	cb->count = be32_to_cpu(h->count);
	cb->size = be32_to_cpu(h->info.size);
	cb->duplex = h->flags & KP_HELLO_DUPLEX;
	kp_get_info(cb, &h->info);
	cb->rec->mode = cb->mode;

	if (cb->mode != KP_MODE_RLAT && cb->mode != KP_MODE_WLAT &&
	    cb->mode != KP_MODE_BW) {
		kp_err(cb, "client asks for unknown mode %u", cb->mode);
		refuse = -EPROTO;
	} else if (cb->opts.mode != KP_MODE_PING && cb->opts.mode != cb->mode) {
		kp_err(cb, "server runs %s, client runs %s",
		       kp_mode_name(cb->opts.mode), kp_mode_name(cb->mode));
		refuse = -EPROTO;
	} else if (!cb->count || cb->count > KP_MAX_COUNT || !cb->size ||
		   cb->size > KP_MAX_SIZE) {
		kp_err(cb, "client asks for count %u size %u", cb->count,
		       cb->size);
		refuse = -EINVAL;
	}
	if (!refuse)
		refuse = kp_test_prepare(cb);
	if (refuse) {
		ret = kp_send_hello(cb, KP_MSG_HELLO_ACK, refuse);
		return refuse;
	}
	ret = kp_send_hello(cb, KP_MSG_HELLO_ACK, 0);
	if (ret)
		return ret;

	loop = kp_test_loop(cb);
	if (loop) {
		ret = loop(cb);
		if (ret)
			return ret;
	} else {
		kp_rec_result(cb, "%s served #bytes=%u #iterations=%u",
			      kp_mode_name(cb->mode), cb->size, cb->count);
	}
	/*
	 * A one-sided test gives this side no sign of progress: wait for the
	 * FIN for the timeout plus 1 ms per iteration and per 64 KiB moved.
	 */
	cb->wait_ms = cb->opts.timeout_ms + cb->count +
		      (u32)((u64)cb->count * cb->size >> 16);
	ret = kp_check_hello(cb, KP_MSG_FIN, false);
	cb->wait_ms = cb->opts.timeout_ms;
	if (ret)
		return ret;
	return kp_send_hello(cb, KP_MSG_FIN, 0);
}
