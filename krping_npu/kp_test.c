// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_test.c - setup and end of the test modes (rlat, wlat, slat, bw,
 * bw_read, bw_send, fr):
 *
 *   client                                server
 *   HELLO {buffer, mode, count or      ->  checks, allocates its buffer
 *          duration, size, warm-up}
 *                                      <-  HELLO_ACK {status, buffer}
 *   ... the mode's loop ...
 *                                      <-  SKIP {n} (bw_send: skips wanted)
 *   FIN {MORE if another size follows} ->  (duplex: after its own stream)
 *                                      <-  FIN
 *   ... the same from HELLO for each further size of a sweep ...
 *   disconnect
 *
 * alat and bw_atomic: the client WRITEs the target's start value after
 * the HELLO_ACK and READs it back after the loop; its FIN's buffer field
 * holds the value its atomics left there, which the server checks in its
 * own memory and answers with a FIN of status EIO if it differs.
 *
 * Version 5 of the hello carries the warm-up (the server's bound on the
 * FIN counts it), version 6 (60 bytes) each side's probe target (iWARP's
 * probes, kp_verbs.c), version 7 (64 bytes) the client's pace
 * (rate_limit=, which that bound counts too); a version 4 (40 bytes, no
 * warm-up), 5 (44 bytes) or 6 client is served in its own version and
 * length.
 *
 * The server learns the mode and sizes from each hello, so one
 * "server,addr=...,port=..." serves any client.  Each size gets fresh
 * buffers, registered for just that size.  In slat and bw_send, HELLO
 * and HELLO_ACK also say how many skips the peer owes this side
 * (kp_send.c).
 */
#include <linux/dma-mapping.h>
#include <linux/sizes.h>

#include "krping_npu.h"
#include "../proc/kp_payload.h"

#define KP_REMOTE_ALL	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

/* The length of a hello of version @ver (4 to KP_HELLO_VERSION). */
static u32 kp_hello_len(u8 ver)
{
	switch (ver) {
	case KP_HELLO_V4:
		return KP_HELLO_V4_LEN;
	case 5:
		return KP_HELLO_V5_LEN;
	case 6:
		return KP_HELLO_V6_LEN;
	default:
		return sizeof(struct kp_hello);
	}
}

static int kp_send_hello(struct kp_conn *c, enum kp_msg_type type, int status,
			 u8 flags, u32 skip)
{
	struct kp_hello *h = kp_send_buf(c);

	if (IS_ERR(h))
		return PTR_ERR(h);
	memset(h, 0, sizeof(*h));
	/*
	 * the size of the test; a validated bw_read's or bw_imm's server
	 * says how long its buffer is, for the client that reads or writes
	 * it slot by slot
	 */
	if (c->rdma.mr)
		kp_set_info(&h->info, &c->rdma,
			    c->t->opts.role == KP_ROLE_SERVER && c->t->validate &&
			    (c->t->mode == KP_MODE_BW_READ ||
			     c->t->mode == KP_MODE_BW_IMM) ? c->rdma.size :
			    c->t->size);
	/* ud over NPU memory: no MR (kp_npu_buf_alloc()), the size alone */
	else if (c->ud)
		h->info.size = cpu_to_be32(c->t->size);
	h->magic = cpu_to_be32(KP_HELLO_MAGIC);
	h->version = c->peer_ver;
	h->type = type;
	h->mode = c->t->mode;
	h->flags = flags | (c->t->duplex ? KP_HELLO_DUPLEX : 0) |
		   ((c->t->mode == KP_MODE_WLAT && c->t->wlat_imm) ||
		    c->t->imm_stream ? KP_HELLO_IMM : 0) |
		   (c->t->opts.atomic == KP_ATOMIC_CAS ? KP_HELLO_CAS : 0) |
		   (c->t->validate ? KP_HELLO_VALIDATE : 0);
	h->count = cpu_to_be32(c->t->count);
	h->status = cpu_to_be32(-status);
	h->duration = cpu_to_be32(c->t->duration_s);
	h->skip = cpu_to_be32(skip);
	if (c->t->opts.role == KP_ROLE_CLIENT) {
		h->warmup = cpu_to_be32(c->t->opts.warmup);
		h->rate = cpu_to_be32(c->t->rate);
	}
	if (c->probe_buf.mr)
		kp_set_info(&h->probe, &c->probe_buf, KP_PROBE_LEN);
	/* an atomic test's FIN: the value our atomics left in the target */
	if (type == KP_MSG_FIN && kp_mode_atomic(c->t->mode) &&
	    c->t->opts.role == KP_ROLE_CLIENT)
		h->info.buf = cpu_to_be64(c->atomic_val);
	/* an older client's receive holds no more */
	return kp_post_send_msg(c, kp_hello_len(c->peer_ver), 0);
}

/*
 * Receive a hello of @type (or check the one already received).  A
 * server takes a client's HELLO of any version from 4, and answers it in
 * that version; a client takes only its own.
 */
static int kp_check_hello(struct kp_conn *c, enum kp_msg_type type,
			  bool received)
{
	const struct kp_hello *h = c->recv_msg;
	bool client = c->t->opts.role == KP_ROLE_CLIENT;
	int ret;
	u8 ver;

	if (!received) {
		ret = kp_wait_for(c, KP_WR_RECV, 0);
		if (ret)
			return ret;
	}
	ver = c->recv_len >= KP_HELLO_V4_LEN ? h->version : 0;
	if (ver < KP_HELLO_V4 || ver > KP_HELLO_VERSION ||
	    c->recv_len != kp_hello_len(ver) ||
	    be32_to_cpu(h->magic) != KP_HELLO_MAGIC || h->type != type ||
	    (type == KP_MSG_HELLO ? client : ver != c->peer_ver)) {
		kp_err(c->t, "bad control message: %u bytes, version %u, type %u (want %u)",
		       c->recv_len, ver,
		       c->recv_len >= KP_HELLO_V4_LEN ? h->type : 0, type);
		return -EPROTO;
	}
	/* a server answers each client in the version it speaks */
	if (type == KP_MSG_HELLO)
		c->peer_ver = ver;
	if (ver >= 6 && (type == KP_MSG_HELLO || type == KP_MSG_HELLO_ACK))
		kp_get_probe_info(c, &h->probe);
	return 0;
}

/*
 * wlat's plain variant on this side: its writes go out of a buffer of
 * their own (the start buffer), host memory, which the CPU marks.
 */
static bool kp_test_wlat_src(struct kp_conn *c)
{
	return c->t->mode == KP_MODE_WLAT && c->t->opts.mem == KP_MEM_HOST;
}

/*
 * validate: the slots of the data buffer, one a message in flight (the
 * client's window, the server's data receives), in at most KP_VAL_BYTES
 * (less where the device registers fewer pages: siw 256).  Each slot is
 * cache-aligned, so that poisoning one never writes back a line the
 * device is filling in the next where DMA is not coherent.  The client
 * takes half what fits, the server all: receives to spare, as iWARP has
 * no RNR retry to cover a SEND that finds none posted.  A bw_read
 * server's slots are only read by the device once written: no alignment,
 * one a message's size, all that fit.  A bw_imm server's are written by
 * the client, which must know where: KP_VAL_ALIGN apart, all that fit
 * (at least 2), and receives for half of them (kp_test_recvs()).  Over
 * UD a bw_send server's slot holds the receive's header, then the message.
 */
#define KP_VAL_BYTES	SZ_1M
/*
 * bw_imm's server slots, a protocol constant: the largest DMA alignment
 * of the arches we build for (arm64's ARCH_DMA_MINALIGN)
 */
#define KP_VAL_ALIGN	128

/*
 * ... in the pages an MR of this connection's maps: all of its own MR's,
 * or a share of the test's one MR's, in the largest pages the device
 * takes up to KP_VAL_BYTES (a block's MR pages are as large as its
 * alignment allows: kp_smr_add()).
 */
static u64 kp_test_val_bytes(struct kp_conn *c)
{
	struct ib_device *dev = kp_dev(c);
	u32 pages = dev->attrs.max_fast_reg_page_list_len;
	u64 pg = PAGE_SIZE;

	/* a share of one MR's pages, its blocks aligned to them */
	if (kp_smr_wanted(c->t)) {
		while (pg < KP_VAL_BYTES && (dev->attrs.page_size_cap & (pg << 1)))
			pg <<= 1;
		return min_t(u64, KP_VAL_BYTES,
			     (u64)max(pages / c->t->nconns, 1u) * pg);
	}
	/* an MR of its own keeps a page for an IOMMU's offset */
	return min_t(u64, KP_VAL_BYTES, (u64)(pages > 2 ? pages - 2 : 1) * pg);
}

static void kp_test_val_slots(struct kp_conn *c)
{
	u64 bytes = kp_test_val_bytes(c);
	u32 n;

	/* ud: a server's slot takes the header its receive puts first */
	c->val_hdr = c->t->opts.role == KP_ROLE_SERVER ? c->recv_hdr : 0;
	c->val_stride = ALIGN(c->t->size + c->val_hdr,
			      dma_get_cache_alignment());
	if (c->t->mode == KP_MODE_BW_READ &&
	    c->t->opts.role == KP_ROLE_SERVER) {
		c->val_stride = c->t->size;
		c->val_slots = max_t(u64, div_u64(bytes, c->t->size), 1);
		return;
	}
	if (c->t->mode == KP_MODE_BW_IMM &&
	    c->t->opts.role == KP_ROLE_SERVER) {
		c->val_stride = ALIGN(c->t->size, KP_VAL_ALIGN);
		c->val_slots = max_t(u64, div_u64(bytes, c->val_stride), 2);
		return;
	}
	n = max_t(u64, div_u64(bytes, c->val_stride), 1);
	/* a bw_read client's READs need no receives to spare */
	if (c->t->mode == KP_MODE_BW_READ)
		c->val_slots = clamp(n, 1u, c->t->opts.txdepth);
	else if (c->t->opts.role == KP_ROLE_CLIENT)
		c->val_slots = clamp(n / 2, 1u, c->t->opts.txdepth);
	else
		c->val_slots = min(n, c->rq_data_max);
}

/* The data buffers and the timestamps of a test mode (fr included). */
static int kp_test_alloc(struct kp_conn *c)
{
	u32 len;
	int ret;

	c->val_slots = 1;
	c->val_stride = c->t->size;
	c->val_hdr = 0;
	if (c->t->validate)
		kp_test_val_slots(c);
	/* the client's writes land beside the slots we poison */
	if (c->t->validate && c->t->mode == KP_MODE_BW_IMM &&
	    c->val_stride % dma_get_cache_alignment()) {
		kp_err(c->t, "validate: slots %u bytes apart share cache lines of %d bytes here",
		       c->val_stride, dma_get_cache_alignment());
		return -EOPNOTSUPP;
	}
	/* ud: a receive takes the header ahead of the message */
	len = c->val_slots * c->val_stride + c->recv_hdr;
	ret = kp_smr_wanted(c->t) ? kp_smr_add(c, &c->rdma, len) :
	      kp_buf_alloc(c, &c->rdma, len);
	if (!ret && kp_test_wlat_src(c))
		ret = kp_buf_alloc(c, &c->start, c->t->size);
	/* rw: a window of contexts for bw, one for rlat */
	if (!ret && c->t->opts.rw)
		ret = kp_rw_alloc(c, kp_mode_bw(c->t->mode) ?
				  c->t->opts.txdepth : 1);
	if (ret)
		return ret;
	return kp_stats_alloc(c);
}

/* ... and their end, after a size (kp_free_verbs() does it on errors). */
static void kp_test_release(struct kp_conn *c)
{
	kp_rw_free(c);
	kp_stats_free(c);
	kp_buf_free(c, &c->start);
	/* a block of the test's MR goes with it, after every connection's */
	if (!c->rdma.mr_shared)
		kp_buf_free(c, &c->rdma);
}

/*
 * ... registered for the peer's READs and WRITEs, once per size (and on
 * iWARP, the connection's probe target, once); an atomic test's server's
 * for the client's atomics too, and only it (mlx5 refuses a fast-reg
 * with atomic access on devices that cannot change it by UMR).  fr
 * registers its buffer in its own loop, and its server has none.
 */
static int kp_test_prepare(struct kp_conn *c)
{
	int ret = kp_probe_target(c);

	if (ret)
		return ret;
	if (c->t->mode == KP_MODE_FR)
		return c->t->opts.role == KP_ROLE_CLIENT ? kp_test_alloc(c) : 0;
	/* ud: SENDs alone, through the local DMA lkey; no fast-reg on UD */
	if (c->ud)
		return kp_test_alloc(c);
	ret = kp_test_alloc(c);
	if (ret)
		return ret;
	/*
	 * The test's MR is registered once, with its last block: the data
	 * comes after every connection's HELLO_ACK, the earlier ones'
	 * receives are posted under a key the MR takes only then.
	 */
	if (!c->rdma.mr_shared || kp_smr_last(c))
		ret = kp_post_reg(c, &c->rdma, KP_REMOTE_ALL |
				  (kp_mode_atomic(c->t->mode) &&
				   c->t->opts.role == KP_ROLE_SERVER ?
				   IB_ACCESS_REMOTE_ATOMIC : 0), true) ?:
		      kp_wait_for(c, KP_WR_REG, 0);
	return ret ?:
	       (kp_test_wlat_src(c) ?
		kp_post_reg(c, &c->start, IB_ACCESS_LOCAL_WRITE, true) ?:
		kp_wait_for(c, KP_WR_REG, 0) : 0);
}

/*
 * validate, bw_read's server: its slots, each a message's size, slot j in
 * message j's pattern, written once a size for the client's READs.
 */
static int kp_test_read_src(struct kp_conn *c)
{
	u8 *p = kp_buf_cpu(&c->rdma);
	u32 j;

	if (!c->t->validate || c->t->mode != KP_MODE_BW_READ)
		return 0;
	for (j = 0; j < c->val_slots; j++)
		kp_stream_fill(p + j * c->t->size, c->t->size, j);
	kp_info(c->t, "connection %u: %u slots of %u bytes written in their patterns for the client's READs",
		c->idx, c->val_slots, c->t->size);
	return kp_buf_to_dev(c, &c->rdma, c->rdma.size);
}

/*
 * validate, bw_read's and bw_imm's client: the server's slots, from the
 * length its ACK advertised (bw_imm's: at least 2, as it keeps receives
 * for half of them); a bw_read client's own poisoned, so that a READ
 * that lands nothing fails.
 */
static int kp_test_peer_slots(struct kp_conn *c)
{
	bool rd = c->t->mode == KP_MODE_BW_READ;
	u32 stride = rd ? c->t->size : ALIGN(c->t->size, KP_VAL_ALIGN);
	u32 max = max_t(u32, stride * (rd ? 1 : 2), KP_VAL_BYTES);

	if (c->remote_len < stride * (rd ? 1 : 2) || c->remote_len % stride ||
	    c->remote_len > max) {
		kp_err(c->t, "validate: the server's buffer of %u bytes is not %s whole %u-byte slots within %u",
		       c->remote_len, rd ? "a number of" : "two or more",
		       stride, max);
		return -EPROTO;
	}
	c->val_peer = c->remote_len / stride;
	c->val_pstride = stride;
	c->val_msgs = 0;
	if (!rd)
		return 0;
	memset(kp_buf_cpu(&c->rdma), KP_STREAM_POISON, c->rdma.size);
	return kp_buf_to_dev(c, &c->rdma, c->rdma.size);
}

/* The skips a peer's message asks for: at most @max. */
static int kp_test_skips(struct kp_conn *c, u32 max)
{
	const struct kp_hello *h = c->recv_msg;
	u32 skip = be32_to_cpu(h->skip);

	if (skip > max) {
		kp_err(c->t, "peer asks for %u skips, at most %u make sense",
		       skip, max);
		return -EPROTO;
	}
	return skip;
}

/*
 * A size ends: no data receive may still be posted on the buffer that
 * kp_test_release() frees.
 */
static int kp_test_end(struct kp_conn *c)
{
	if (c->rq_data || c->rq_hold || c->srq_data) {
		kp_err(c->t, "%u data receives still posted at the end of a size%s",
		       c->rq_data, c->srq_data ? " (srq: no last message)" : "");
		return -EPROTO;
	}
	kp_test_release(c);
	return 0;
}

/*
 * The peer's FIN, while the peer may still stream: for as long as it
 * answers its probes (probe=), or (probe=0) kp_test_fin_ms().
 */
static int kp_test_fin_wait(struct kp_conn *c)
{
	struct kp_test *t = c->t;
	int ret;

	if (t->opts.probe_ms)
		kp_probe_begin(c);
	else
		c->wait_ms = kp_peer_wait_ms(t);
	ret = kp_check_hello(c, KP_MSG_FIN, false);
	kp_probe_end(c);
	c->wait_ms = t->opts.timeout_ms;
	return ret;
}

/*
 * The status of the server's HELLO_ACK or FIN just received: 0, its
 * errno, or -EPROTO where it is none (the server speaks no protocol of
 * ours).
 */
static int kp_hello_status(struct kp_conn *c, const char *what)
{
	const struct kp_hello *h = c->recv_msg;
	u32 status = be32_to_cpu(h->status);

	if (!status)
		return 0;
	if (status > MAX_ERRNO) {
		kp_err(c->t, "server's status 0x%x is no errno", status);
		return -EPROTO;
	}
	kp_err(c->t, "server %s: error %d", what, -(int)status);
	return -(int)status;
}

/*
 * A size's data receives start: none posted or owed; duplex bw,send's,
 * and a sink's of a stream by count, bounded by the @total messages the
 * peer will send, so none is left over when its stream ends (perftest
 * cuts -r to -n and posts no receive past -n).
 */
static void kp_test_rq_start(struct kp_conn *c, u64 total)
{
	c->rq_owed = 0;
	c->rq_posted = 0;
	c->rq_chains = 0;
	/*
	 * a sink by count posts no more than it is sent, as perftest's -n;
	 * a hello before version 5 has no warm-up to count
	 */
	c->rq_total = kp_dx_send(c->t) ||
		      (kp_mode_sink(c->t->mode) && c->t->count &&
		       c->peer_ver >= 5) ? total : 0;
	c->sink_done = 0;
	c->sink_over = false;
}

/* A connection's part of a size, from HELLO to the HELLO_ACK. */
static int kp_test_client_open(struct kp_conn *c)
{
	const struct kp_hello *h = c->recv_msg;
	u32 skip = 0;
	int ret;

	ret = kp_test_prepare(c);
	if (ret)
		return ret;
	c->imm_seq = 0;
	c->val_seq = 0;
	if (c->t->mode == KP_MODE_SLAT || kp_dx_send(c->t)) {
		/*
		 * the server's answers, or (duplex) its stream of count
		 * messages: behind what the ACK leaves
		 */
		kp_test_rq_start(c, c->t->count);
		ret = kp_rq_hold(c, kp_dx_send(c->t) ?
				 min_t(u64, c->rq_data_max, c->rq_total) : 1);
		if (ret)
			return ret;
		skip = c->rq_ctrl - 1;
	}
	ret = kp_send_hello(c, KP_MSG_HELLO, 0, 0, skip);
	if (ret)
		return ret;
	ret = kp_check_hello(c, KP_MSG_HELLO_ACK, false);
	if (ret)
		return ret;
	ret = kp_hello_status(c, "refused the test");
	if (ret)
		return ret;
	if (c->t->validate && !(h->flags & KP_HELLO_VALIDATE)) {
		kp_err(c->t, "validate: the server does not say it %s the stream",
		       c->t->mode == KP_MODE_BW_READ ? "wrote the slots of" :
		       "checks");
		return -EPROTO;
	}
	kp_get_info(c, &h->info);
	if (c->t->validate && (c->t->mode == KP_MODE_BW_READ ||
			       c->t->mode == KP_MODE_BW_IMM)) {
		ret = kp_test_peer_slots(c);
		if (ret)
			return ret;
	}
	/* the server's side cannot poll its buffer: both use immediates */
	if (h->flags & KP_HELLO_IMM)
		c->t->wlat_imm = true;
	if (kp_mode_send(c->t->mode)) {
		ret = kp_test_skips(c, KP_RQ_DEPTH);
		if (ret < 0)
			return ret;
		c->skip_out = ret;
		if (c->rq_hold && c->rq_ctrl != skip) {
			kp_err(c->t, "%u control receives ahead of the data, %u announced",
			       c->rq_ctrl, skip);
			return -EPROTO;
		}
		c->skip_in = skip;
	}
	return 0;
}

/* ... and from the stream's end to the server's FIN. */
static int kp_test_client_close(struct kp_conn *c, bool more)
{
	int ret;

	/* duplex bw,send posted no receive the server's stream left over */
	if (kp_mode_sink(c->t->mode) && !kp_dx_send(c->t)) {
		/* its data receives left over (by duration, a UD loss) take skips */
		ret = kp_check_hello(c, KP_MSG_SKIP, false) ?:
		      kp_hello_status(c, "ended the stream");
		if (ret)
			return ret;
		ret = kp_test_skips(c, KP_MAX_RX_DEPTH);
		if (ret < 0)
			return ret;
		ret = kp_post_skips(c, ret);
		if (ret)
			return ret;
	}
	ret = kp_send_hello(c, KP_MSG_FIN, 0, more ? KP_HELLO_MORE : 0, 0);
	if (ret)
		return ret;
	/* duplex: the server's streams may run on after ours */
	ret = c->t->duplex ? kp_test_fin_wait(c) :
	      kp_check_hello(c, KP_MSG_FIN, false);
	if (ret)
		return ret;
	/* the server found the size failed on its side (atomics) */
	ret = kp_hello_status(c, "failed the size on its side");
	if (ret)
		return ret;
	return kp_test_end(c);
}

/* The server of a one-sided test only serves: its record says what. */
static int kp_test_served(struct kp_test *t)
{
	char qps[sizeof(" #qps=4294967295")] = "";

	if (t->nconns > 1)
		snprintf(qps, sizeof(qps), " #qps=%u", t->nconns);
	if (t->duration_s)
		kp_rec_result(t, "%s served #bytes=%u duration[s]=%u%s",
			      kp_mode_name(t->mode), t->size, t->duration_s,
			      qps);
	else
		kp_rec_result(t, "%s served #bytes=%u #iterations=%u%s",
			      kp_mode_name(t->mode), t->size, t->count, qps);
	return 0;
}

/*
 * This side's loop of a size: a latency or fr loop on the test's one
 * connection, the bw streams of all of them (kp_lanes.c), bw,send's
 * sink, or, for the server of a one-sided test, nothing to run.
 */
static int kp_test_run(struct kp_test *t)
{
	bool client = t->opts.role == KP_ROLE_CLIENT;
	struct kp_conn *c0 = t->conns[0];

	switch (t->mode) {
	case KP_MODE_RLAT:
		return client ? kp_rlat_run(c0) : kp_test_served(t);
	case KP_MODE_ALAT:
		return client ? kp_alat_run(c0) : kp_test_served(t);
	case KP_MODE_WLAT:
		return kp_wlat_run(c0);
	case KP_MODE_SLAT:
		return kp_slat_run(c0);
	case KP_MODE_FR:
		return client ? kp_fr_run(c0) : kp_test_served(t);
	case KP_MODE_BW:
		return client || t->duplex ? kp_lanes_bw(t) : kp_test_served(t);
	case KP_MODE_BW_READ:
		return client || t->duplex ? kp_lanes_bw(t) : kp_test_served(t);
	case KP_MODE_BW_ATOMIC:
		return client ? kp_lanes_bw(t) : kp_test_served(t);
	case KP_MODE_BW_SEND:
	case KP_MODE_BW_IMM:
		if (client || t->duplex)
			return kp_lanes_bw(t);
		return t->nconns > 1 ? kp_lanes_sink(t) : kp_send_sink(t);
	default:
		return kp_test_served(t);
	}
}

/* rw's check: byte i of a size's pattern, which a shift or a lost page changes */
static u8 kp_rw_byte(u32 i, u32 size)
{
	return (u8)(i ^ (i >> 8) ^ (i >> 16) ^ size ^ 0xa5);
}

/*
 * rw's check hands the buffer to the CPU and back: NPU memory through its
 * shadow.  Host memory needs nothing: each rdma_rw context maps and
 * unmaps it itself (the unmap gives a READ's bytes to the CPU), and a
 * sync of the buffer's own mapping, which rw leaves unused, would copy a
 * stale bounce buffer over them where DMA is bounced.
 */
static int kp_rw_own(struct kp_conn *c, struct kp_buf *b, bool cpu)
{
	if (!b->shadow)
		return 0;
	return cpu ? kp_buf_to_cpu(c, b, c->t->size) :
		     kp_buf_to_dev(c, b, c->t->size);
}

/*
 * One of rw's check rounds: the buffer, as the CPU left it, moved through
 * rdma_rw by @op, and given back to the CPU.
 */
static int kp_rw_round(struct kp_conn *c, struct kp_buf *b,
		       enum ib_wr_opcode op, enum kp_wr kind)
{
	int ret;

	ret = kp_rw_own(c, b, false) ?:
	      kp_post_rdma(c, op, b, c->t->size, kind, true, 0) ?:
	      kp_wait_for(c, kind, 0);
	if (ret)
		return ret;
	kp_rw_done(c, 0);
	return kp_rw_own(c, b, true);
}

/*
 * rw, after a size's loop: the pattern written to the server's buffer
 * and read back into a cleared one, both through rdma_rw, and checked
 * byte for byte.  The server does not touch its buffer until our FIN.
 */
static int kp_rw_verify(struct kp_conn *c)
{
	struct kp_buf *b = &c->rdma;
	u32 i, size = c->t->size;
	u8 *p;
	int ret;

	ret = kp_rw_own(c, b, true);
	if (ret)
		return ret;
	p = kp_buf_cpu(b);
	for (i = 0; i < size; i++)
		p[i] = kp_rw_byte(i, size);
	ret = kp_rw_round(c, b, IB_WR_RDMA_WRITE, KP_WR_WRITE);
	if (ret)
		return ret;
	memset(p, 0, size);
	ret = kp_rw_round(c, b, IB_WR_RDMA_READ, KP_WR_READ);
	if (ret)
		return ret;
	for (i = 0; i < size && p[i] == kp_rw_byte(i, size); i++)
		;
	ret = kp_rw_own(c, b, false);
	if (i < size) {
		kp_err(c->t, "rw: byte %u of %u read back as 0x%02x, written 0x%02x",
		       i, size, p[i], kp_rw_byte(i, size));
		return -EIO;
	}
	kp_info(c->t, "rw: %u bytes written and read back through rdma_rw, all as written",
		size);
	return ret;
}

/* One size of the client's sweep, on each connection. */
static int kp_test_client_size(struct kp_test *t, bool more)
{
	u32 i, first = kp_rec_nres(t);
	int ret;

	for (i = 0; i < t->nconns; i++) {
		ret = kp_test_client_open(t->conns[i]);
		if (ret)
			return ret;
	}
	/* the targets' start, once the server's MR is in: its last ACK */
	for (i = 0; kp_mode_atomic(t->mode) && i < t->nconns; i++) {
		ret = kp_atomic_begin(t->conns[i]);
		if (ret)
			return ret;
	}
	kp_hw_begin(t);
	ret = kp_test_run(t);
	if (ret)
		return ret;
	kp_hw_end(t, first);
	for (i = 0; t->opts.rw && i < t->nconns; i++) {
		ret = kp_rw_verify(t->conns[i]);
		if (ret)
			return ret;
	}
	for (i = 0; kp_mode_atomic(t->mode) && i < t->nconns; i++) {
		ret = kp_atomic_end(t->conns[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < t->nconns; i++) {
		ret = kp_test_client_close(t->conns[i], more);
		if (ret)
			return ret;
	}
	kp_smr_release(t);
	kp_lat_free(t);
	return 0;
}

int kp_test_client(struct kp_test *t)
{
	u32 k;
	int ret = 0;

	t->mode = t->opts.mode;
	t->count = t->opts.duration_s ? 0 : t->opts.count;
	t->duration_s = t->opts.duration_s;
	t->size = t->opts.size;
	t->duplex = t->opts.duplex;
	t->rate = t->opts.rate_limit;
	/* this side cannot poll its buffer: NPU memory, or asleep on events */
	t->wlat_imm = t->opts.wlat_imm || t->opts.mem == KP_MEM_NPU ||
		      t->opts.events;
	t->imm_stream = t->opts.wlat_imm && kp_mode_sink(t->mode);
	t->validate = t->opts.validate && (t->mode == KP_MODE_BW_SEND ||
					   t->mode == KP_MODE_BW_READ ||
					   t->mode == KP_MODE_BW_IMM);

	for (k = 0; k < t->opts.nsizes; k++) {
		t->size = t->opts.sizes[k];
		ret = kp_test_client_size(t, k + 1 < t->opts.nsizes);
		if (ret)
			break;
	}
	kp_hw_free(t);
	return ret ?: kp_stats_verdict(t);
}

/*
 * Is the client's hello on @c (c->recv_msg) one this server can serve?
 * Connection 0's sets the test's parameters of the size; every other
 * connection's must ask for the same.
 */
static int kp_test_check(struct kp_conn *c)
{
	struct kp_test *t = c->t;
	const struct kp_hello *h = c->recv_msg;
	enum kp_mode mode = h->mode;
	u32 count = be32_to_cpu(h->count);
	u32 duration_s = be32_to_cpu(h->duration);
	u32 size = be32_to_cpu(h->info.size);
	u32 warmup = c->peer_ver < 5 ? 0 : be32_to_cpu(h->warmup);
	u32 rate = c->peer_ver < 7 ? 0 : be32_to_cpu(h->rate);
	bool duplex = h->flags & KP_HELLO_DUPLEX;
	bool validate = h->flags & KP_HELLO_VALIDATE;
	enum kp_atomic op = h->flags & KP_HELLO_CAS ? KP_ATOMIC_CAS :
			    KP_ATOMIC_FADD;
	int ret;

	kp_get_info(c, &h->info);
	if (!c->idx) {
		t->mode = mode;
		t->count = count;
		t->duration_s = duration_s;
		t->size = size;
		t->warmup = warmup;
		t->rate = rate;
		t->atomic_op = op;
		t->duplex = duplex;
		t->rec->mode = mode;
		/* as the client asks, or as NPU memory here needs */
		t->wlat_imm = (h->flags & KP_HELLO_IMM) ||
			      t->opts.mem == KP_MEM_NPU;
		t->imm_stream = (h->flags & KP_HELLO_IMM) &&
				kp_mode_sink(mode);
		t->validate = validate;
	}
	if (mode != KP_MODE_RLAT && mode != KP_MODE_WLAT &&
	    mode != KP_MODE_SLAT && !kp_mode_bw(mode) && mode != KP_MODE_FR &&
	    mode != KP_MODE_ALAT) {
		kp_err(t, "client asks for unknown mode %u", mode);
		return -EPROTO;
	}
	if (t->opts.mode != KP_MODE_PING && t->opts.mode != mode) {
		kp_err(t, "server runs %s, client runs %s",
		       kp_mode_name(t->opts.mode), kp_mode_name(mode));
		return -EPROTO;
	}
	if (c->ud && ((mode != KP_MODE_SLAT && mode != KP_MODE_BW_SEND) ||
		      duplex || (h->flags & KP_HELLO_IMM) ||
		      (mode == KP_MODE_BW_SEND && !count))) {
		kp_err(t, "ud: this server runs slat and bw,send over UD, and the client asks for %s%s",
		       kp_mode_name(mode),
		       duplex || (h->flags & KP_HELLO_IMM) ?
		       " with duplex or imm" :
		       !count ? " by duration" : "");
		return -EPROTO;
	}
	if (count > KP_MAX_COUNT || !size || size > KP_MAX_SIZE ||
	    !count == !duration_s || duration_s > KP_MAX_DURATION ||
	    warmup > KP_MAX_COUNT || rate > KP_MAX_THRESHOLD ||
	    (rate && !kp_mode_bw(mode))) {
		kp_err(t, "client asks for %s count %u duration %u size %u warm-up %u rate %u",
		       kp_mode_name(mode), count, duration_s, size, warmup,
		       rate);
		return -EINVAL;
	}
	if (duplex && mode != KP_MODE_BW && mode != KP_MODE_BW_READ &&
	    mode != KP_MODE_BW_SEND) {
		kp_err(t, "client asks for a duplex %s", kp_mode_name(mode));
		return -EINVAL;
	}
	/* each side posts as many receives as the other sends: a count */
	if (duplex && mode == KP_MODE_BW_SEND &&
	    (!count || (h->flags & KP_HELLO_IMM) || t->opts.recv_post_list)) {
		kp_err(t, "client asks for a duplex bw_send %s",
		       !count ? "by duration (each side posts the receives of the other's count)" :
		       t->opts.recv_post_list ? "of this server, given recv_post_list" :
		       "with immediates");
		return -EINVAL;
	}
	if (validate && ((mode != KP_MODE_BW_SEND && mode != KP_MODE_BW_READ &&
			  mode != KP_MODE_BW_IMM) ||
			 ((mode == KP_MODE_BW_READ || mode == KP_MODE_BW_SEND) &&
			  duplex) ||
			 (mode == KP_MODE_BW_IMM && size > KP_VAL_IMM_MAX) ||
			 size < KP_STREAM_MIN)) {
		kp_err(t, "client asks to validate a %s%s stream of %u-byte messages (bw,send, bw,imm up to %u, or bw,read without duplex, of at least %u)",
		       duplex ? "duplex " : "", kp_mode_name(mode), size,
		       KP_VAL_IMM_MAX, KP_STREAM_MIN);
		return -EINVAL;
	}
	/*
	 * any connection's message may take any receive of a shared SRQ:
	 * bw,send's slots and bw,imm's bound on its client need their own
	 */
	if (validate && c->srq_shared && kp_mode_sink(mode)) {
		kp_err(t, "validate with srq and qps=%u: the SRQ's receives are the %u connections' alike, so no slot is a message's and no receive holds back a stream",
		       t->nconns, t->nconns);
		return -EINVAL;
	}
	if (t->opts.validate && !validate &&
	    (t->opts.mode == KP_MODE_BW_SEND ||
	     t->opts.mode == KP_MODE_BW_READ)) {
		kp_err(t, "validate: the client's %s (give it validate too)",
		       mode == KP_MODE_BW_READ ? "bw,read checks nothing it reads" :
		       "bw,send writes no patterns");
		return -EPROTO;
	}
	if (mode == KP_MODE_BW_IMM && !(h->flags & KP_HELLO_IMM)) {
		kp_err(t, "client asks for bw_imm without numbered immediates");
		return -EPROTO;
	}
	ret = kp_rx_opts_check(t, mode, duplex);
	if (ret)
		return ret;
	if (kp_mode_atomic(mode)) {
		if (size != KP_ATOMIC_SIZE) {
			kp_err(t, "client asks for %s of %u bytes, not %u",
			       kp_mode_name(mode), size, KP_ATOMIC_SIZE);
			return -EINVAL;
		}
		if (kp_opt_given(&t->opts, KP_OPT_ATOMIC) &&
		    t->opts.atomic != op) {
			kp_err(t, "server runs atomic=%s, client atomic=%s",
			       kp_atomic_name(t->opts.atomic),
			       kp_atomic_name(op));
			return -EPROTO;
		}
		if (c->pd->device->attrs.atomic_cap == IB_ATOMIC_NONE) {
			kp_err(t, "%s: %s has no atomics (atomic_cap is IB_ATOMIC_NONE)",
			       kp_mode_name(mode), dev_name(&c->pd->device->dev));
			return -EOPNOTSUPP;
		}
	}
	if (c->idx && (mode != t->mode || count != t->count ||
		       duration_s != t->duration_s || size != t->size ||
		       warmup != t->warmup || duplex != t->duplex ||
		       rate != t->rate || validate != t->validate ||
		       !!(h->flags & KP_HELLO_IMM) != t->imm_stream ||
		       (kp_mode_atomic(mode) && op != t->atomic_op))) {
		kp_err(t, "connection %u asks for another test than connection 0",
		       c->idx);
		return -EPROTO;
	}
	ret = kp_imm_refused(c, c->pd->device, mode, t->wlat_imm) ?:
	      kp_ud_size(c, size);
	if (ret)
		return ret;
	/* slat: the client's control receives ahead of its data receive */
	ret = kp_test_skips(c, mode == KP_MODE_SLAT ||
			    (duplex && mode == KP_MODE_BW_SEND) ? KP_RQ_DEPTH : 0);
	if (ret < 0)
		return ret;
	c->skip_out = ret;
	return 0;
}

/*
 * slat, bw_send: this side's data receives behind its control receives,
 * before the ACK lets the client send; the ACK asks for the skips.
 */
static int kp_test_recvs(struct kp_conn *c)
{
	u32 list = c->t->opts.recv_post_list, fill, n;
	int ret;

	if (!kp_mode_send(c->t->mode))
		return 0;
	c->rq_list = kp_mode_sink(c->t->mode) ? list : 0;
	/* duplex: the client's warm-up and count, as many receives */
	kp_test_rq_start(c, (u64)c->t->warmup + c->t->count);
	c->val_msgs = 0;
	/*
	 * validate: a receive a slot, each poisoned; bw_imm's for half the
	 * slots, so that a window of the client's (the other half) never
	 * writes into a slot whose message is not checked yet
	 */
	fill = !c->t->validate ? c->rq_data_max :
	       c->t->mode == KP_MODE_BW_IMM ?
	       min(c->val_slots / 2, c->rq_data_max) : c->val_slots;
	if (list > fill) {
		kp_err(c->t, "recv_post_list=%u: the receive queue has room for %u data receives%s",
		       list, fill, c->srq_shared ?
		       " (srq: the connection's share of the SRQ, rx_depth / qps)" :
		       !c->t->validate ? "" :
		       c->t->mode == KP_MODE_BW_IMM ? " (validate: one for two slots)" :
		       " (validate: one a slot)");
		return -EINVAL;
	}
	if (c->t->validate) {
		memset(kp_buf_cpu(&c->rdma), KP_STREAM_POISON, c->rdma.size);
		ret = kp_buf_to_dev(c, &c->rdma, c->rdma.size);
		if (ret)
			return ret;
	}
	/* recv_post_list=: whole chains from the first (perftest's fill) */
	n = c->t->mode == KP_MODE_SLAT ? 1 :
	    c->rq_list ? rounddown(fill, c->rq_list) : fill;
	/* by count: no more than the stream has messages (perftest: -r <= -n) */
	if (c->rq_total)
		n = min_t(u64, n, c->rq_total);
	/* a shared SRQ's: the client's messages are data from our ACK on */
	c->srq_data = c->srq_shared;
	ret = kp_rq_hold(c, n);
	if (ret)
		return ret;
	c->skip_in = c->srq_shared ? 0 : c->rq_ctrl;
	return 0;
}

/*
 * A connection's hello of a size (connection 0's has arrived), checked
 * against connection 0's, and our HELLO_ACK.
 */
static int kp_test_server_open(struct kp_conn *c)
{
	int ret, refuse;

	if (c->idx) {
		ret = kp_wait_for(c, KP_WR_RECV, 0);
		if (ret)
			return ret;
	}
	ret = kp_check_hello(c, KP_MSG_HELLO, true);
	if (ret)
		return ret;
	refuse = kp_test_check(c) ?: kp_test_prepare(c) ?: kp_test_recvs(c) ?:
		 kp_test_read_src(c);
	if (refuse) {
		kp_send_hello(c, KP_MSG_HELLO_ACK, refuse, 0, 0);
		return refuse;
	}
	return kp_send_hello(c, KP_MSG_HELLO_ACK, 0, 0, c->skip_in);
}

/* After the stream: bw_send's skips, the client's FIN and ours. */
static int kp_test_server_close(struct kp_conn *c)
{
	struct kp_test *t = c->t;
	const struct kp_hello *h = c->recv_msg;
	int ret;

	if (kp_mode_sink(t->mode) && !kp_dx_send(t)) {
		ret = kp_send_hello(c, KP_MSG_SKIP, 0, 0, c->rq_data) ?:
		      kp_send_flush(c);
		if (ret)
			return ret;
	}
	ret = kp_test_fin_wait(c);
	if (ret)
		return ret;
	/* ud: messages lost (kp_send.c), said to the client in the FIN */
	if (c->ud_loss) {
		kp_send_hello(c, KP_MSG_FIN, c->ud_loss, 0, 0);
		return c->ud_loss;
	}
	if (kp_mode_atomic(t->mode)) {
		ret = kp_atomic_check(c, be64_to_cpu(h->info.buf));
		if (ret) {
			kp_send_hello(c, KP_MSG_FIN, ret, 0, 0);
			return ret;
		}
	}
	if (!c->idx) {
		t->more = h->flags & KP_HELLO_MORE;
	} else if (!!(h->flags & KP_HELLO_MORE) != t->more) {
		kp_err(t, "connection %u's FIN disagrees with connection 0's on another size",
		       c->idx);
		return -EPROTO;
	}
	ret = kp_send_hello(c, KP_MSG_FIN, 0, 0, 0);
	if (ret)
		return ret;
	return kp_test_end(c);
}

/* Serve one size on each connection: connection 0's hello has arrived. */
static int kp_test_server_size(struct kp_test *t)
{
	u32 i;
	int ret;

	for (i = 0; i < t->nconns; i++) {
		ret = kp_test_server_open(t->conns[i]);
		if (ret)
			return ret;
	}
	ret = kp_test_run(t);
	if (ret) {
		/* ud: each client connection waits for its SKIP, and no disconnect tells it */
		for (i = 0; t->conns[0]->ud && kp_mode_sink(t->mode) &&
		     i < t->nconns; i++)
			kp_send_hello(t->conns[i], KP_MSG_SKIP, ret, 0, 0);
		return ret;
	}
	for (i = 0; i < t->nconns; i++) {
		ret = kp_test_server_close(t->conns[i]);
		if (ret)
			return ret;
	}
	kp_ssrq_size_end(t);
	kp_smr_release(t);
	kp_lat_free(t);
	return 0;
}

/* The client's first hello arrived on connection 0; serve each size. */
int kp_test_server(struct kp_test *t)
{
	int ret;

	for (;;) {
		ret = kp_test_server_size(t);
		if (ret || !t->more)
			return ret;
		ret = kp_wait_for(t->conns[0], KP_WR_RECV, 0);
		if (ret)
			return ret;
	}
}
