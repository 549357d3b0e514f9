// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_verbs.c - verbs resources of one connection: PD, CQ, QP, control messages,
 * data buffers with their fast-reg MRs, posting and reaping.
 *
 * Only ib_dma_* touches DMA: rxe and siw are virt-DMA devices with no
 * dma_device, where dma_map_* would crash.
 */
#include <linux/slab.h>
#include <linux/gfp.h>
#include <linux/sched/signal.h>
#include <linux/kthread.h>
#include <linux/bottom_half.h>
#include <linux/interrupt.h>
#include <linux/ktime.h>
#include <linux/sizes.h>

#include <rdma/rdma_cm_ib.h>

#include "krping_npu.h"
#include "kp_trace.h"
#include "../proc/kp_payload.h"

/*
 * A completion, from the core's poll context or our own poll
 * (kp_cq_process()): queued, with what its work request was for in
 * wr_id, for the thread that waits on the connection (kp_poll()).  The
 * queue holds every completion the CQ can (kp_setup_verbs()).
 */
static void kp_wc_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kp_conn *c = cq->cq_context;
	struct kp_cqe *e = container_of(wc->wr_cqe, struct kp_cqe, cqe);
	unsigned long flags;
	struct ib_wc *q;

	trace_kp_wc(c->t->rec->id, c->idx, wc, e->wr_id);
	spin_lock_irqsave(&c->wcq_lock, flags);
	if (c->wcq_tail - c->wcq_head < c->wcq_n) {
		q = &c->wcq[c->wcq_tail++ & (c->wcq_n - 1)];
		*q = *wc;
		q->wr_id = e->wr_id;	/* in place of wr_cqe: a union */
	} else {
		c->wcq_lost = true;
	}
	spin_unlock_irqrestore(&c->wcq_lock, flags);
	if (cq->poll_ctx != IB_POLL_DIRECT && wq_has_sleeper(&c->t->wq))
		wake_up(&c->t->wq);
}

/*
 * The completion entry of a work request @wr_id: its kind's, or for a
 * signaled message of a stream, a slot of its own that holds the index
 * until the completion is read.  A slot is used again nslots signaled
 * messages later, when the stream's window (at most sq_depth) is long
 * past it.
 */
static struct ib_cqe *kp_wr_cqe(struct kp_conn *c, u64 wr_id, bool signal)
{
	struct kp_cqe *e;

	if (!signal || !(wr_id >> KP_WR_IDX_SHIFT))
		return &c->cqe[(u8)wr_id].cqe;
	e = &c->slots[(wr_id >> KP_WR_IDX_SHIFT) & (c->nslots - 1)];
	e->wr_id = wr_id;
	return &e->cqe;
}

/* kp_setup_verbs(): the completion entries, and the queue they fill. */
static int kp_cqe_alloc(struct kp_conn *c)
{
	u32 i, n;

	for (i = 0; i < KP_WR_NR; i++) {
		c->cqe[i].cqe.done = i == KP_WR_FENCE ? kp_npu_fence_done :
				     kp_wc_done;
		c->cqe[i].wr_id = i;
	}
	c->nslots = roundup_pow_of_two(2 * c->sq_depth);
	c->slots = kvcalloc(c->nslots, sizeof(*c->slots), GFP_KERNEL);
	c->wcq_n = roundup_pow_of_two(c->cq_depth);
	c->wcq = kvcalloc(c->wcq_n, sizeof(*c->wcq), GFP_KERNEL);
	if (!c->slots || !c->wcq)
		return -ENOMEM;
	for (i = 0; i < c->nslots; i++)
		c->slots[i].cqe.done = kp_wc_done;
	/* post_list=: the work requests of a chain, and their SGEs */
	if (c->t->opts.post_list > 1) {
		c->chain_wr = kvcalloc(c->t->opts.post_list,
				       sizeof(*c->chain_wr), GFP_KERNEL);
		c->chain_sge = kvcalloc(c->t->opts.post_list * KP_MAX_SGE,
					sizeof(*c->chain_sge), GFP_KERNEL);
		if (!c->chain_wr || !c->chain_sge)
			return -ENOMEM;
		if (c->t->opts.ud) {
			c->chain_ud = kvcalloc(c->t->opts.post_list,
					       sizeof(*c->chain_ud), GFP_KERNEL);
			if (!c->chain_ud)
				return -ENOMEM;
		}
	}
	c->chain_n = 0;
	/* a chain of data receives: recv_post_list=, or a batch reaped */
	n = max_t(u32, c->t->opts.recv_post_list, KP_RECV_BATCH);
	c->rq_wr = kvcalloc(n, sizeof(*c->rq_wr), GFP_KERNEL);
	/* validate: the server learns it in a hello, after this */
	c->rq_sge = kvcalloc(n * KP_MAX_SGE, sizeof(*c->rq_sge), GFP_KERNEL);
	if (!c->rq_wr || !c->rq_sge)
		return -ENOMEM;
	spin_lock_init(&c->wcq_lock);
	c->wcq_head = 0;
	c->wcq_tail = 0;
	c->wcq_lost = false;
	c->nap_ns = KP_NAP_MIN_NS;
	return 0;
}

static void kp_cqe_free(struct kp_conn *c)
{
	kvfree(c->rq_sge);
	c->rq_sge = NULL;
	kvfree(c->rq_wr);
	c->rq_wr = NULL;
	kvfree(c->chain_sge);
	c->chain_sge = NULL;
	kvfree(c->chain_wr);
	c->chain_wr = NULL;
	kvfree(c->chain_ud);
	c->chain_ud = NULL;
	kvfree(c->slots);
	c->slots = NULL;
	kvfree(c->wcq);
	c->wcq = NULL;
}

static void kp_qp_event(struct ib_event *ev, void *ctx)
{
	struct kp_conn *c = ctx;

	/*
	 * Data before the CM's RTU (it was lost or is late): tell the CM,
	 * so the connection is established without waiting for its retry.
	 */
	if (ev->event == IB_EVENT_COMM_EST) {
		rdma_notify(c->child_id ?: c->cm_id, IB_EVENT_COMM_EST);
		return;
	}
	/*
	 * siw says so once a QP in the error state has flushed, and a
	 * device with SRQs that such a QP takes no more of its receives:
	 * no news
	 */
	if (ev->event == IB_EVENT_SQ_DRAINED ||
	    ev->event == IB_EVENT_QP_LAST_WQE_REACHED)
		return;
	pr_err(KP_NAME " %u: QP event %s\n", c->t->rec->id,
	       ib_event_msg(ev->event));
}

static void kp_srq_event(struct ib_event *ev, void *ctx)
{
	struct kp_conn *c = ctx;

	pr_err(KP_NAME " %u: SRQ event %s\n", c->t->rec->id,
	       ib_event_msg(ev->event));
}

/*
 * srq: the connection's shared receive queue, as deep as its receive
 * queue would be (perftest --use-srq); a server's serves one QP, so a
 * client of more is refused before any is set up (kp_run_server()).
 */
static int kp_srq_create(struct kp_conn *c, struct ib_device *dev,
			 u32 depth)
{
	struct ib_srq_init_attr attr = {
		.event_handler = kp_srq_event,
		.srq_context = c,
		.attr = { .max_wr = depth, .max_sge = c->t->opts.sge },
		.srq_type = IB_SRQT_BASIC,
	};

	if (dev->attrs.max_srq <= 0 || dev->attrs.max_srq_wr < (int)depth ||
	    dev->attrs.max_srq_sge < (int)c->t->opts.sge) {
		kp_err(c->t, "srq: %s has %d SRQs of %d work requests, %d SGEs; we need one of %u, %u",
		       dev_name(&dev->dev), dev->attrs.max_srq,
		       dev->attrs.max_srq_wr, dev->attrs.max_srq_sge, depth,
		       c->t->opts.sge);
		return -EOPNOTSUPP;
	}
	c->srq = ib_create_srq(c->pd, &attr);
	if (IS_ERR(c->srq)) {
		int ret = PTR_ERR(c->srq);

		c->srq = NULL;
		kp_err(c->t, "ib_create_srq(%u): %d", depth, ret);
		return ret;
	}
	c->srq_recvs = 0;
	return 0;
}

/* A chain of receives, to the SRQ where the QP has one. */
static int kp_post_rq(struct kp_conn *c, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad)
{
	const struct ib_recv_wr *p;
	int ret;

	*bad = wr;	/* a driver may fail a post without setting it */
	if (!c->srq)
		return ib_post_recv(c->qp, wr, bad);
	ret = ib_post_srq_recv(c->srq, wr, bad);
	/* those before the bad one were posted */
	for (p = wr; p && (!ret || p != *bad); p = p->next)
		c->srq_recvs++;
	return ret;
}

static int kp_ctrl_alloc(struct kp_conn *c, void **msg, u64 *dma, u32 len)
{
	struct ib_device *dev = kp_dev(c);

	*msg = kzalloc(len, GFP_KERNEL);
	if (!*msg)
		return -ENOMEM;
	*dma = ib_dma_map_single(dev, *msg, len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, *dma)) {
		kfree(*msg);
		*msg = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void kp_ctrl_free(struct kp_conn *c, void **msg, u64 dma, u32 len)
{
	if (!*msg)
		return;
	ib_dma_unmap_single(kp_dev(c), dma, len, DMA_BIDIRECTIONAL);
	kfree(*msg);
	*msg = NULL;
}

/*
 * slat, bw,send, bw,imm and wlat,imm carry immediate data, which iWARP does not
 * have: refused before connecting (a client; a server once the hello
 * names the mode), not at the last post of a stream.
 */
int kp_imm_refused(struct kp_conn *c, struct ib_device *dev,
		   enum kp_mode m, bool wlat_imm)
{
	if (!c->iwarp || !(m == KP_MODE_SLAT || kp_mode_sink(m) ||
			   (m == KP_MODE_WLAT && wlat_imm)))
		return 0;
	kp_err(c->t, "%s%s uses immediate data, which iWARP (%s) does not have",
	       kp_mode_name(m), m == KP_MODE_WLAT ? ",imm" : "",
	       dev_name(&dev->dev));
	return -EOPNOTSUPP;
}

/*
 * ud: a message must fit the path MTU: the port's active one (rxe's for
 * UD, what perftest checks too), or the route's where the CM resolved a
 * lower one (a client's); each receive has the GRH ahead of it.  A
 * client's sizes are known now, a server's once the hello names one
 * (kp_ud_size()).
 */
static int kp_ud_setup(struct kp_conn *c, struct ib_device *dev,
		       struct rdma_cm_id *id)
{
	struct ib_port_attr attr;
	u32 i;
	int ret;

	ret = ib_query_port(dev, c->port, &attr);
	if (ret) {
		kp_err(c->t, "ud: ib_query_port(%u): %d", c->port, ret);
		return ret;
	}
	c->ud_mtu = ib_mtu_enum_to_int(attr.active_mtu);
	if (id->route.path_rec && id->route.path_rec->mtu)
		c->ud_mtu = min_t(u32, c->ud_mtu,
				  ib_mtu_enum_to_int(id->route.path_rec->mtu));
	c->recv_hdr = KP_UD_GRH;
	for (i = 0; c->t->opts.role == KP_ROLE_CLIENT && i < c->t->opts.nsizes; i++) {
		ret = kp_ud_size(c, c->t->opts.sizes[i]);
		if (ret)
			return ret;
	}
	return 0;
}

int kp_ud_size(struct kp_conn *c, u32 size)
{
	if (!c->ud || size <= c->ud_mtu)
		return 0;
	kp_err(c->t, "ud: %u-byte messages, and a UD message must fit the path MTU, %u bytes here",
	       size, c->ud_mtu);
	return -EMSGSIZE;
}

/* rw: the pages of the test's largest buffer, NPU pages' offset too */
static u32 kp_rw_max_pages(struct kp_test *t)
{
	u32 i, size = 0;

	for (i = 0; i < t->opts.nsizes; i++)
		size = max(size, t->opts.sizes[i]);
	return DIV_ROUND_UP(size, PAGE_SIZE) + 1;
}

/*
 * The connection's PD: its own, or (qps=N) connection 0's, as perftest's
 * QPs share one; connection 0 is set up first and torn down last.  Not
 * with NPU memory: a free callback fences its own connection's QP, and
 * the peer must reach the memory through no other.
 */
static int kp_pd_get(struct kp_conn *c, struct ib_device *dev)
{
	struct kp_conn *c0 = c->t->conns[0];
	int ret;

	if (c->idx && c->t->opts.mem != KP_MEM_NPU) {
		if (!c0->pd || c0->pd->device != dev) {
			kp_err(c->t, "connection %u is on %s, connection 0 on %s: one PD cannot serve both",
			       c->idx, dev_name(&dev->dev),
			       c0->pd ? dev_name(&c0->pd->device->dev) : "none");
			return -EXDEV;
		}
		c->pd = c0->pd;
		c->pd_shared = true;
		return 0;
	}
	c->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(c->pd)) {
		ret = PTR_ERR(c->pd);
		c->pd = NULL;
		kp_err(c->t, "ib_alloc_pd: %d", ret);
		return ret;
	}
	return 0;
}

int kp_setup_verbs(struct kp_conn *c, struct rdma_cm_id *id)
{
	static const enum ib_poll_context poll_ctx[] = {
		[KP_CQ_DIRECT] = IB_POLL_DIRECT,
		[KP_CQ_SOFTIRQ] = IB_POLL_SOFTIRQ,
		[KP_CQ_WORKQUEUE] = IB_POLL_WORKQUEUE,
		[KP_CQ_UNBOUND] = IB_POLL_UNBOUND_WORKQUEUE,
	};
	struct ib_device *dev = id->device;
	struct ib_qp_init_attr qp_attr = {}, first_try;
	u32 rq_depth, rw_ctxs = 0;
	bool ssrq;
	int ret, i;

	kp_rec_set_dev(c->t, dev);
	if (c->t->opts.read_inv && !rdma_cap_read_inv(dev, id->port_num)) {
		kp_err(c->t, "read_inv: %s has no RDMA READ with invalidate (iWARP only)",
		       dev_name(&dev->dev));
		return -EOPNOTSUPP;
	}
	c->iwarp = rdma_protocol_iwarp(dev, id->port_num);
	c->peer_ver = KP_HELLO_VERSION;
	c->port = id->port_num;
	if (c->ud) {
		ret = kp_ud_setup(c, dev, id);
		if (ret)
			return ret;
	}
	if (c->t->opts.role == KP_ROLE_CLIENT) {
		/* the client's test as kp_test_client() will set it */
		ret = kp_imm_refused(c, dev, c->t->opts.mode,
				     c->t->opts.wlat_imm ||
				     c->t->opts.mem == KP_MEM_NPU ||
				     c->t->opts.events);
		if (ret)
			return ret;
	}
	if (c->t->opts.sge > min3(dev->attrs.max_send_sge,
				  dev->attrs.max_recv_sge,
				  dev->attrs.max_sge_rd)) {
		kp_err(c->t, "sge=%u: %s takes %d SGEs a send, %d a receive, %d a READ",
		       c->t->opts.sge, dev_name(&dev->dev),
		       dev->attrs.max_send_sge, dev->attrs.max_recv_sge,
		       dev->attrs.max_sge_rd);
		return -EOPNOTSUPP;
	}
	if (kp_mode_atomic(c->t->opts.mode) &&
	    dev->attrs.atomic_cap == IB_ATOMIC_NONE) {
		kp_err(c->t, "%s: %s has no atomics (atomic_cap is IB_ATOMIC_NONE)",
		       kp_mode_name(c->t->opts.mode), dev_name(&dev->dev));
		return -EOPNOTSUPP;
	}
	c->rd_atom = min3(dev->attrs.max_qp_rd_atom,
			  dev->attrs.max_qp_init_rd_atom, KP_MAX_RD_ATOM);
	/* each queue keeps a slot for the drain's marker */
	c->sq_depth = min_t(u32, c->t->opts.txdepth + KP_SQ_EXTRA,
			    dev->attrs.max_qp_wr - 1);
	/*
	 * srq, a server of qps=N: one SRQ for all (kp_srq.c), of rx_depth
	 * data receives and each connection's control receives, the QPs no
	 * queue of their own; a connection's first fill is its share of the
	 * data receives (perftest's rx_depth / N), and its CQ has room for
	 * all of them, which its messages may take
	 */
	ssrq = c->t->opts.srq && c->t->opts.role == KP_ROLE_SERVER &&
	       !c->ud && c->t->peer_qps > 1;
	/* room for data receives (slat, bw,send) behind the control ones */
	rq_depth = KP_RQ_DEPTH + (c->t->opts.rx_depth ?: KP_DATA_RQ);
	if (ssrq) {
		c->rq_data_max = max((rq_depth - KP_RQ_DEPTH) / c->t->peer_qps,
				     1u);
		rq_depth += (c->t->peer_qps - 1) * KP_RQ_DEPTH;
	} else {
		/* rx_depth= as given, or (perftest's create_qp fails) refused */
		if (c->t->opts.rx_depth && rq_depth > dev->attrs.max_qp_wr - 1) {
			kp_err(c->t, "rx_depth=%u: %s takes %d work requests a queue, and %u of them are control receives and 1 the drain's",
			       c->t->opts.rx_depth, dev_name(&dev->dev),
			       dev->attrs.max_qp_wr, KP_RQ_DEPTH);
			return -EINVAL;
		}
		rq_depth = min_t(u32, rq_depth, dev->attrs.max_qp_wr - 1);
		if (rq_depth <= KP_RQ_DEPTH) {
			kp_err(c->t, "%s takes %d work requests a queue, we need more than %u",
			       dev_name(&dev->dev), dev->attrs.max_qp_wr,
			       KP_RQ_DEPTH);
			return -EOPNOTSUPP;
		}
		c->rq_data_max = rq_depth - KP_RQ_DEPTH;
	}
	/* and the CQ, for the drain's two and a free callback's two */
	c->cq_depth = c->sq_depth + rq_depth + 4;
	if (c->t->opts.rw) {
		/*
		 * rw: a context a message of the window, MRs enough for the
		 * largest size where the core registers (nvmet's sizing);
		 * a flush completes their REG_MR and LOCAL_INV too.
		 */
		rw_ctxs = (c->t->opts.txdepth + 1) *
			  rdma_rw_mr_factor(dev, id->port_num,
					    kp_rw_max_pages(c->t));
		c->cq_depth += 3 * rw_ctxs;
	}
	if (ssrq && c->cq_depth > dev->attrs.max_cqe) {
		kp_err(c->t, "srq: each QP's CQ needs room for the %u receives of the SRQ the %u share, %u entries in all, and %s takes %d",
		       rq_depth, c->t->peer_qps, c->cq_depth,
		       dev_name(&dev->dev), dev->attrs.max_cqe);
		return -EOPNOTSUPP;
	}
	c->cq_depth = min_t(u32, c->cq_depth, dev->attrs.max_cqe);

	ret = kp_pd_get(c, dev);
	if (ret)
		return ret;

	ret = kp_cqe_alloc(c);
	if (ret)
		return ret;
	/* a connection's CQ on a vector of its own where there are several */
	c->cq = ib_alloc_cq(dev, c, c->cq_depth,
			    c->idx % max(dev->num_comp_vectors, 1),
			    poll_ctx[c->t->opts.cq]);
	if (IS_ERR(c->cq)) {
		ret = PTR_ERR(c->cq);
		c->cq = NULL;
		kp_err(c->t, "ib_alloc_cq(%u, %s): %d", c->cq_depth,
		       kp_cq_name(c->t->opts.cq), ret);
		return ret;
	}

	if (ssrq) {
		/* connection 0 makes it; kp_free_verbs() undoes even a part */
		c->srq_shared = true;
		ret = c->idx ? 0 : kp_ssrq_create(c, dev, c->t->peer_qps,
						  kp_wc_done);
		if (ret)
			return ret;
		c->srq = c->t->ssrq.srq;
	} else if (c->t->opts.srq) {
		ret = kp_srq_create(c, dev, rq_depth);
		if (ret)
			return ret;
	}

	qp_attr.event_handler = kp_qp_event;
	qp_attr.qp_context = c;
	qp_attr.send_cq = c->cq;
	qp_attr.recv_cq = c->cq;
	/* room for the drain's marker on each queue (ib_drain_qp()) */
	qp_attr.cap.max_send_wr = c->sq_depth + 1;
	qp_attr.cap.max_recv_wr = rq_depth + 1;
	qp_attr.cap.max_send_sge = c->t->opts.sge;
	qp_attr.cap.max_recv_sge = c->t->opts.sge;
	/* ud, mem=npu: a message's NPU pages, an SGE each (kp_buf_sges()) */
	if (c->ud && c->t->opts.mem == KP_MEM_NPU) {
		qp_attr.cap.max_send_sge = KP_UD_NPU_SGE;
		qp_attr.cap.max_recv_sge = KP_UD_NPU_SGE;
	}
	/* srq: no receive queue of its own, and no drain marker for one */
	if (c->srq) {
		qp_attr.srq = c->srq;
		qp_attr.cap.max_recv_wr = 0;
		qp_attr.cap.max_recv_sge = 0;
	}
	if (c->t->opts.rw) {
		/* rdma_rw_init_qp() adds their work requests to the queue */
		qp_attr.port_num = id->port_num;
		qp_attr.cap.max_rdma_ctxs = rw_ctxs;
		qp_attr.cap.max_send_sge = min_t(u32, dev->attrs.max_send_sge,
						 KP_RW_MAX_SGE);
	}
	qp_attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	qp_attr.qp_type = c->ud ? IB_QPT_UD : IB_QPT_RC;
	/*
	 * inline= as asked; by default a device without inline data gets a
	 * second try without
	 */
	qp_attr.cap.max_inline_data = c->t->opts.inline_max;
	first_try = qp_attr;
	ret = rdma_create_qp(id, c->pd, &qp_attr);
	if (ret && first_try.cap.max_inline_data) {
		int with = ret;

		/* as asked, not as the first try left it (rdma_rw grows it) */
		qp_attr = first_try;
		qp_attr.cap.max_inline_data = 0;
		ret = rdma_create_qp(id, c->pd, &qp_attr);
		/* inline= given: no QP without what it asked for */
		if (!ret && kp_opt_given(&c->t->opts, KP_OPT_INLINE)) {
			rdma_destroy_qp(id);
			kp_err(c->t, "inline=%u: the device takes no QP with that much inline data (error %d with it, none without)",
			       c->t->opts.inline_max, with);
			return -EOPNOTSUPP;
		}
	}
	if (ret) {
		kp_err(c->t, "rdma_create_qp(sq %u): %d", c->sq_depth, ret);
		return ret;
	}
	mutex_lock(&c->npu_lock);
	c->qp = id->qp;
	mutex_unlock(&c->npu_lock);
	atomic_inc(&kp_live.qps);
	/* the device may grant more than asked: inline= is the bound */
	c->max_inline = min(qp_attr.cap.max_inline_data, c->t->opts.inline_max);

	ret = kp_ctrl_alloc(c, &c->recv_buf, &c->recv_dma,
			    c->recv_hdr + KP_CTRL_SIZE);
	if (ret)
		return ret;
	c->recv_msg = c->recv_buf + c->recv_hdr;
	ret = kp_ctrl_alloc(c, &c->send_msg, &c->send_dma, KP_CTRL_SIZE);
	if (ret)
		return ret;
	for (i = 0; i < KP_RQ_DEPTH; i++) {
		ret = kp_post_recv(c);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * iWARP: a few bytes of host memory for the connection's life, the peer's
 * READ probes' source and the sink of ours (kp_slice_over()); a READ's
 * sink takes remote writes on iWARP.  Other transports probe without
 * memory.  Set up once the QP can post, before the first hello.
 */
int kp_probe_target(struct kp_conn *c)
{
	struct kp_buf *b = &c->probe_buf;
	struct ib_device *dev = kp_dev(c);
	int n, ret;

	if (!c->iwarp || b->mr)
		return 0;
	b->vaddr = kzalloc(KP_PROBE_LEN, GFP_KERNEL);
	if (!b->vaddr)
		return -ENOMEM;
	b->size = KP_PROBE_LEN;
	b->dma = ib_dma_map_single(dev, b->vaddr, KP_PROBE_LEN,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, b->dma)) {
		kfree(b->vaddr);
		b->vaddr = NULL;
		return -ENOMEM;
	}
	b->mapped = true;
	b->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(b->mr)) {
		ret = PTR_ERR(b->mr);
		b->mr = NULL;
		kp_err(c->t, "probe target: ib_alloc_mr: %d", ret);
		return ret;
	}
	sg_init_table(&b->sg, 1);
	sg_dma_address(&b->sg) = b->dma;
	sg_dma_len(&b->sg) = KP_PROBE_LEN;
	/* kzalloc(16) is 16-aligned: one page */
	n = ib_map_mr_sg(b->mr, &b->sg, 1, NULL, PAGE_SIZE);
	if (n != 1) {
		kp_err(c->t, "probe target: ib_map_mr_sg: %d", n);
		return n < 0 ? n : -EINVAL;
	}
	b->iova = b->mr->iova;
	return kp_post_reg(c, b, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			   IB_ACCESS_REMOTE_WRITE, true) ?:
	       kp_wait_for(c, KP_WR_REG, 0);
}

/* ... gone with the QP that could reach it (kp_free_verbs()) */
static void kp_probe_target_free(struct kp_conn *c)
{
	struct kp_buf *b = &c->probe_buf;

	if (b->mr)
		ib_dereg_mr(b->mr);
	if (b->mapped)
		ib_dma_unmap_single(kp_dev(c), b->dma, KP_PROBE_LEN,
				    DMA_BIDIRECTIONAL);
	kfree(b->vaddr);
	memset(b, 0, sizeof(*b));
}

/*
 * A softirq raised in task context waits for ksoftirqd unless a
 * bottom-half pair runs it: rxe before 6.4 schedules its tasklets so
 * (post_recv on a QP in error, for one).  Without the per-CPU flag,
 * assume one waits.
 */
static bool kp_softirq_pending(void)
{
#ifdef local_softirq_pending_ref
	return this_cpu_read(local_softirq_pending_ref);
#else
	return true;
#endif
}

/*
 * cq=direct: process what the CQ holds, as much as wcq has room for,
 * then run any softirq left pending here, so that a software device's
 * tasklet runs now and not in ksoftirqd.  The bottom-half pair costs
 * 30 ns of a 110 ns empty poll under TCG, so it is taken only when a
 * softirq waits; our posts take their own.  Other contexts: the core
 * does it.
 *
 * The loop is ib_process_cq_direct()'s, but its array is not cleared:
 * the core's eight ib_wc are, at every call, by a kernel built with
 * INIT_STACK_ALL_ZERO (Debian 12's 6.1 and 6.12), 250 ns of an empty
 * poll's 410 under TCG on 6.1.  The core's cq_process and cq_poll
 * tracepoints, which no module can fire, are lost here; our kp_wc fires
 * for each completion.
 */
static int kp_cq_process(struct kp_conn *c, int max)
{
	struct ib_wc wcs[KP_POLL_BATCH] __uninitialized;
	int room, i, b, k, n = 0;

	if (c->cq->poll_ctx != IB_POLL_DIRECT)
		return 0;
	room = c->wcq_n - (READ_ONCE(c->wcq_tail) - READ_ONCE(c->wcq_head));
	if (max > room)
		max = room;
	if (max <= 0)
		return 0;
	while (n < max) {
		b = min_t(int, max - n, ARRAY_SIZE(wcs));
		k = ib_poll_cq(c->cq, b, wcs);
		if (k <= 0)
			break;
		for (i = 0; i < k; i++) {
			struct ib_wc *wc = &wcs[i];

			if (wc->wr_cqe)
				wc->wr_cqe->done(c->cq, wc);
			else
				WARN_ON_ONCE(wc->status == IB_WC_SUCCESS);
		}
		n += k;
		if (k < b)
			break;	/* the device had no more */
	}
	if (kp_softirq_pending()) {
		local_bh_disable();
		local_bh_enable();
	}
	return n;
}

struct kp_ud_drain {
	struct ib_cqe cqe;
	struct completion done;
};

static void kp_ud_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
	complete(&container_of(wc->wr_cqe, struct kp_ud_drain, cqe)->done);
}

/*
 * ud: the core's drain of the send queue posts an RDMA WRITE, which a UD
 * QP refuses (rxe warns; mlx5 reads an address handle that is not
 * there); its marker here is a SEND to the peer, flushed as the core's
 * is, and only where this side ever had a peer to send to.  The receive
 * queue drains as the core drains it.
 */
static void kp_drain_ud(struct kp_conn *c)
{
	struct kp_ud_drain d = { .cqe.done = kp_ud_drain_done };
	struct ib_ud_wr wr = {
		.wr = {
			.wr_cqe = &d.cqe,
			.opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED,
		},
		.ah = c->ah,
		.remote_qpn = c->remote_qpn,
		.remote_qkey = c->remote_qkey,
	};
	const struct ib_send_wr *bad;
	int ret;

	/* srq: the SRQ's receives go with it (as kp_drain_qp()) */
	if (!c->srq)
		ib_drain_rq(c->qp);
	if (!c->ah)
		return;
	init_completion(&d.done);
	ret = ib_post_send(c->qp, &wr.wr, &bad);
	if (ret) {
		kp_err(c->t, "ud: the drain's marker: ib_post_send: %d", ret);
		return;
	}
	/* as the core's drain: a DIRECT CQ reaped while waiting */
	if (c->cq->poll_ctx == IB_POLL_DIRECT)
		while (!wait_for_completion_timeout(&d.done, HZ / 10))
			ib_process_cq_direct(c->cq, -1);
	else
		wait_for_completion(&d.done);
}

/*
 * srq: the send queue alone.  The SRQ's receives never flush with the
 * QP, and go with the SRQ; newer cores' drain (6.12's) waits for the
 * device's LAST_WQE_REACHED, which siw never sends (a minute lost).
 */
static void kp_drain_qp(struct kp_conn *c)
{
	if (c->ud)
		kp_drain_ud(c);
	else if (c->srq)
		ib_drain_sq(c->qp);
	else
		ib_drain_qp(c->qp);
}

static void kp_drain_work(struct work_struct *work)
{
	struct kp_conn *c = container_of(work, struct kp_conn, drain_work);

	kp_drain_qp(c);
	complete(&c->drained);
}

/*
 * Every work request completes, flushed, before the QP and the buffers
 * go: the core's drain, as every in-tree ULP's.  It waits without a bound
 * where the core reaps (a device that never flushes hangs here as it
 * would hang theirs).  A QP that refuses the error state is not drained:
 * the core's drain would warn and return, and its markers would be sent.
 * A DIRECT CQ is reaped by its owner: the core's drain polls one only
 * after sleeping 100 ms on each queue's marker (__ib_drain_sq()), 0.2 s
 * a connection, so it waits in a work item while this thread reaps, for
 * KP_DRAIN_MS, and then leaves the CQ to it.  Nobody reads what completes
 * now.
 */
static void kp_drain(struct kp_conn *c)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(KP_DRAIN_MS);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (ib_modify_qp(c->qp, &attr, IB_QP_STATE)) {
		kp_err(c->t, "drain: the QP does not enter the error state: not drained");
		return;
	}
	if (c->cq->poll_ctx != IB_POLL_DIRECT) {
		kp_drain_qp(c);
		return;
	}
	INIT_WORK(&c->drain_work, kp_drain_work);
	init_completion(&c->drained);
	queue_work(system_unbound_wq, &c->drain_work);
	while (!completion_done(&c->drained) &&
	       time_before(jiffies, deadline)) {
		spin_lock_irq(&c->wcq_lock);
		c->wcq_head = c->wcq_tail;
		spin_unlock_irq(&c->wcq_lock);
		if (kp_cq_process(c, 16) <= 0)
			usleep_range(20, 100);
	}
	flush_work(&c->drain_work);
}

/* Frees whatever kp_setup_verbs() and the tests set up; safe on partial. */
void kp_free_verbs(struct kp_conn *c)
{
	struct rdma_cm_id *id = c->child_id ?: c->cm_id;

	if (c->qp) {
		/* a free callback fences no more: the drain does (kp_npu.c) */
		mutex_lock(&c->npu_lock);
		c->draining = true;
		mutex_unlock(&c->npu_lock);
		kp_drain(c);
		/* rw: contexts give their MRs back to the QP's pool first */
		kp_rw_free(c);
		/*
		 * A free callback of NPU memory may be fencing it; once the
		 * QP is destroyed the device has done all its work on it,
		 * and the callback's markers will never be reaped.
		 */
		mutex_lock(&c->npu_lock);
		rdma_destroy_qp(id);
		WRITE_ONCE(c->qp, NULL);
		atomic_set(&c->npu_fence, 0);
		mutex_unlock(&c->npu_lock);
		wake_up_all(&c->t->wq);
		atomic_dec(&kp_live.qps);
	}
	/* ud: the sends that used it are flushed and their QP gone */
	if (c->ah) {
		rdma_destroy_ah(c->ah, RDMA_DESTROY_AH_SLEEPABLE);
		c->ah = NULL;
	}
	/* its receives never complete: they go with it, before their buffers */
	if (c->srq_shared) {
		/* connection 0, the last: no QP is left on it */
		if (!c->idx)
			kp_ssrq_destroy(c);
		c->srq = NULL;
		c->srq_shared = false;
	} else if (c->srq) {
		kp_info(c->t, "connection %u: %llu receives posted through its SRQ, none to the QP",
			c->idx, c->srq_recvs);
		ib_destroy_srq(c->srq);
		c->srq = NULL;
	}
	kp_stats_free(c);
	if (c->pd) {
		kp_probe_target_free(c);
		kp_buf_free(c, &c->start);
		/* a block of the test's MR: with it, after every QP */
		if (!c->rdma.mr_shared)
			kp_buf_free(c, &c->rdma);
		kp_ctrl_free(c, &c->recv_buf, c->recv_dma,
			     c->recv_hdr + KP_CTRL_SIZE);
		c->recv_msg = NULL;
		kp_ctrl_free(c, &c->send_msg, c->send_dma, KP_CTRL_SIZE);
	}
	if (c->cq) {
		ib_free_cq(c->cq);
		c->cq = NULL;
	}
	kp_cqe_free(c);
	/* connection 0, the last: no QP of the test is left */
	if (c->pd && !c->pd_shared) {
		kp_smr_release(c->t);
		ib_dealloc_pd(c->pd);
	}
	c->pd = NULL;
	c->pd_shared = false;
}

/*
 * The MR page size for a contiguous host buffer: the largest size the
 * device supports, up to 2 MiB, that the buffer's alignment allows (an
 * alloc_pages_exact() block is aligned to its power-of-two order).
 */
static u32 kp_host_mr_page(struct ib_device *dev, u32 size)
{
	u32 pg = PAGE_SIZE, align = PAGE_SIZE << get_order(size);

	while (pg < size && pg < SZ_2M && (pg << 1) <= align &&
	       (dev->attrs.page_size_cap & (pg << 1)))
		pg <<= 1;
	return pg;
}

/*
 * @b's host memory: @span zeroed contiguous bytes, mapped for the device
 * (@size of them the buffer's); kp_buf_free() undoes what was done.
 */
static int kp_buf_host(struct kp_conn *c, struct kp_buf *b, u32 size,
		       u32 span)
{
	struct ib_device *dev = kp_dev(c);

	b->size = size;
	b->span = span;
	b->vaddr = alloc_pages_exact(PAGE_ALIGN(span),
				     GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN);
	if (!b->vaddr) {
		kp_err(c->t, "no %u contiguous bytes of host memory", span);
		return -ENOMEM;
	}
	b->dma = ib_dma_map_single(dev, b->vaddr, span, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, b->dma)) {
		free_pages_exact(b->vaddr, PAGE_ALIGN(span));
		b->vaddr = NULL;
		kp_err(c->t, "ib_dma_map_single(%u bytes) failed", span);
		return -ENOMEM;
	}
	b->mapped = true;
	return 0;
}

int kp_buf_alloc(struct kp_conn *c, struct kp_buf *b, u32 size)
{
	struct ib_device *dev = kp_dev(c);
	u32 npages;
	int n;

	b->live = true;
	atomic_inc(&kp_live.bufs);
	if (c->t->opts.mem == KP_MEM_NPU)
		return kp_npu_buf_alloc(c, b, size);
	b->page_size = kp_host_mr_page(dev, size);
	npages = DIV_ROUND_UP(size, b->page_size);
	if (npages + 1 > dev->attrs.max_fast_reg_page_list_len) {
		kp_err(c->t, "size %u needs %u MR pages, device allows %u", size,
		       npages + 1, dev->attrs.max_fast_reg_page_list_len);
		return -EINVAL;
	}
	n = kp_buf_host(c, b, size, size);
	if (n)
		return n;

	/* one more page: an IOMMU need not keep the block's alignment */
	b->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, npages + 1);
	if (IS_ERR(b->mr)) {
		int ret = PTR_ERR(b->mr);

		b->mr = NULL;
		kp_err(c->t, "ib_alloc_mr(%u pages): %d", npages + 1, ret);
		return ret;
	}
	sg_init_table(&b->sg, 1);
	sg_dma_address(&b->sg) = b->dma;
	sg_dma_len(&b->sg) = size;
	n = ib_map_mr_sg(b->mr, &b->sg, 1, NULL, b->page_size);
	if (n != 1) {
		kp_err(c->t, "ib_map_mr_sg: %d", n);
		return n < 0 ? n : -EINVAL;
	}
	b->iova = b->mr->iova;
	return 0;
}

/* kp_smr_add() on connection 0: the MR, and the key all will advertise. */
static int kp_smr_begin(struct kp_conn *c, u32 size)
{
	struct kp_smr *s = &c->t->smr;
	struct ib_device *dev = kp_dev(c);
	u32 page = kp_host_mr_page(dev, size), stride = ALIGN(size, page);
	struct scatterlist *sgl;
	struct ib_mr *mr;
	u32 npages;

	if (s->mr) {
		kp_err(c->t, "the test's MR outlived a size");
		return -EPROTO;
	}
	npages = stride / page * c->t->nconns;
	if (npages > dev->attrs.max_fast_reg_page_list_len) {
		kp_err(c->t, "one MR over %u buffers of %u bytes needs %u pages of %u, the device maps %u (mr_per_qp gives each its own)",
		       c->t->nconns, size, npages, page,
		       dev->attrs.max_fast_reg_page_list_len);
		return -EINVAL;
	}
	sgl = kcalloc(c->t->nconns, sizeof(*sgl), GFP_KERNEL);
	if (!sgl)
		return -ENOMEM;
	sg_init_table(sgl, c->t->nconns);
	mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, npages);
	if (IS_ERR(mr)) {
		kfree(sgl);
		kp_err(c->t, "ib_alloc_mr(%u pages): %ld", npages, PTR_ERR(mr));
		return PTR_ERR(mr);
	}
	/* the peer learns the key before the last block is in */
	ib_update_fast_reg_key(mr, (u8)ib_inc_rkey(mr->rkey));
	*s = (struct kp_smr) {
		.mr = mr, .sgl = sgl, .stride = stride, .page_size = page,
	};
	return 0;
}

/*
 * @b, @size bytes, as connection @c's block of the test's MR: the MR with
 * connection 0's, mapped over all of them with the last one's; the caller
 * then registers it (kp_post_reg()).  Every connection's block has the
 * same stride in the MR: the first size, rounded up to its pages.
 */
int kp_smr_add(struct kp_conn *c, struct kp_buf *b, u32 size)
{
	struct kp_smr *s = &c->t->smr;
	u32 n = c->t->nconns;
	int ret;

	if (!c->idx) {
		ret = kp_smr_begin(c, size);
		if (ret)
			return ret;
	} else if (!s->mr) {
		kp_err(c->t, "connection %u: no MR of the test to take its buffer",
		       c->idx);
		return -EPROTO;
	} else if (size > s->stride) {
		kp_err(c->t, "connection %u: a buffer of %u bytes, where the test's MR has blocks of %u",
		       c->idx, size, s->stride);
		return -EPROTO;
	}
	b->live = true;
	atomic_inc(&kp_live.bufs);
	b->page_size = s->page_size;
	ret = kp_buf_host(c, b, size, s->stride);
	if (ret)
		return ret;
	/* an IOMMU may put a block off the MR's pages: no MR spans it */
	if (b->dma & (s->page_size - 1)) {
		kp_err(c->t, "connection %u's buffer is mapped at 0x%llx, off the test's MR's %u-byte pages (mr_per_qp gives each its own)",
		       c->idx, b->dma, s->page_size);
		return -EINVAL;
	}
	if (!c->idx)
		s->iova = b->dma;
	b->mr = s->mr;
	b->mr_shared = true;
	b->iova = s->iova + (u64)c->idx * s->stride;
	sg_dma_address(&s->sgl[c->idx]) = b->dma;
	sg_dma_len(&s->sgl[c->idx]) = kp_smr_last(c) ? size : s->stride;
	if (!kp_smr_last(c))
		return 0;
	ret = ib_map_mr_sg(s->mr, s->sgl, n, NULL, s->page_size);
	if (ret != n || s->mr->iova != s->iova) {
		kp_err(c->t, "ib_map_mr_sg: %d of %u blocks, at 0x%llx for 0x%llx",
		       ret, n, s->mr->iova, s->iova);
		return ret < 0 ? ret : -EINVAL;
	}
	kp_info(c->t, "one MR for the %u connections' buffers: blocks of %u bytes, %llu bytes in pages of %u",
		n, s->stride, s->mr->length, s->page_size);
	return 0;
}

/*
 * The test's MR, then each connection's block of it, once no QP can reach
 * them: at a size's end, or at connection 0's teardown, the last.  The
 * blocks are all mapped for connection 0's device (one PD).
 */
void kp_smr_release(struct kp_test *t)
{
	struct kp_smr *s = &t->smr;
	u32 i;

	if (s->mr)
		ib_dereg_mr(s->mr);
	kfree(s->sgl);
	memset(s, 0, sizeof(*s));
	for (i = 0; i < t->nconns; i++)
		if (t->conns[i]->rdma.mr_shared)
			kp_buf_free(t->conns[0], &t->conns[i]->rdma);
}

void kp_buf_free(struct kp_conn *c, struct kp_buf *b)
{
	if (!b->live)
		return;
	atomic_dec(&kp_live.bufs);
	if (c->t->npu) {
		kp_npu_buf_free(c, b);
		return;
	}
	if (b->mr && !b->mr_shared)
		ib_dereg_mr(b->mr);
	if (b->mapped)
		ib_dma_unmap_single(kp_dev(c), b->dma, b->span,
				    DMA_BIDIRECTIONAL);
	if (b->vaddr)
		free_pages_exact(b->vaddr, PAGE_ALIGN(b->span));
	memset(b, 0, sizeof(*b));
}

/* The CPU's view of @b: the buffer itself, or the NPU buffer's shadow. */
void *kp_buf_cpu(struct kp_buf *b)
{
	return b->vaddr ?: b->shadow;
}

/* Hand the CPU's writes of @len bytes of @b at @off to the device. */
int kp_buf_to_dev_at(struct kp_conn *c, struct kp_buf *b, u32 off, u32 len)
{
	b->cpu_owned = false;
	if (b->shadow)
		return kp_npu_copy_to(c, b, off, len);
	ib_dma_sync_single_for_device(kp_dev(c), b->dma + off, len,
				      DMA_BIDIRECTIONAL);
	return 0;
}

/* Make the device's writes of @len bytes of @b at @off visible to the CPU. */
int kp_buf_to_cpu_at(struct kp_conn *c, struct kp_buf *b, u32 off, u32 len)
{
	b->cpu_owned = true;
	if (b->shadow)
		return kp_npu_copy_from(c, b, off, len);
	ib_dma_sync_single_for_cpu(kp_dev(c), b->dma + off, len,
				   DMA_BIDIRECTIONAL);
	return 0;
}

int kp_buf_to_dev(struct kp_conn *c, struct kp_buf *b, u32 len)
{
	return kp_buf_to_dev_at(c, b, 0, len);
}

int kp_buf_to_cpu(struct kp_conn *c, struct kp_buf *b, u32 len)
{
	return kp_buf_to_cpu_at(c, b, 0, len);
}

/*
 * validate: data slot @slot checked byte for byte against pattern @seq.
 * A match is poisoned for the message that takes the slot next, counted
 * and handed back; a mismatch is described in @bad for the caller, who
 * knows what the message was, and gives -EBADMSG.
 */
int kp_val_check(struct kp_conn *c, u32 slot, u64 seq, struct kp_val_bad *bad)
{
	/* ud: behind the header its receive put first */
	u32 size = c->t->size, off = slot * c->val_stride + c->val_hdr;
	u8 *p = (u8 *)kp_buf_cpu(&c->rdma) + off;
	int ret;

	ret = kp_buf_to_cpu_at(c, &c->rdma, off, size);
	if (ret)
		return ret;
	bad->at = kp_stream_check(p, size, seq);
	if (bad->at >= 0) {
		bad->got = p[bad->at];
		bad->want = kp_stream_byte(bad->at, seq);
		kp_buf_to_dev_at(c, &c->rdma, off, size);
		return -EBADMSG;
	}
	memset(p, KP_STREAM_POISON, size);
	c->val_msgs++;
	return kp_buf_to_dev_at(c, &c->rdma, off, size);
}

/*
 * A work request on @b while the CPU owns it (kp_buf_to_cpu() without
 * kp_buf_to_dev()) would have the device use bytes the DMA API has not
 * handed back: stale ones, where DMA is not coherent or is bounced.  Our
 * bug, never the peer's: said once with a trace, and refused.
 */
static bool kp_buf_cpu_owned(struct kp_conn *c, struct kp_buf *b)
{
	if (!WARN_ONCE(b->cpu_owned, KP_NAME ": a work request on a buffer the CPU owns"))
		return false;
	kp_err(c->t, "a work request on a buffer the CPU owns (no kp_buf_to_dev())");
	return true;
}

/* Local access to @b: through the PD's local_dma_lkey, or its MR? */
static bool kp_buf_by_dma(struct kp_conn *c)
{
	return c->t->opts.local_dma_lkey || c->ud;
}

/*
 * The local address of @b's byte @off under the key kp_sge_split() uses;
 * not of NPU memory by DMA address (ud), whose pages are apart.
 */
static u64 kp_buf_addr(struct kp_conn *c, struct kp_buf *b, u32 off)
{
	WARN_ON_ONCE(b->npu_mr_sgl && kp_buf_by_dma(c));
	return (kp_buf_by_dma(c) ? b->dma : b->iova) + off;
}

/*
 * The local SGEs of @len bytes of @b from @base (kp_buf_addr(); inline,
 * its CPU address), through its MR or the PD's local_dma_lkey: sge= of
 * them, equal but for the last, one a byte where @len is shorter.
 * Returns how many.
 */
static int kp_sge_split(struct kp_conn *c, struct kp_buf *b, u64 base,
			struct ib_sge *sge, u32 len)
{
	u32 n = clamp(c->t->opts.sge, 1u, max(len, 1u));
	u32 lkey = kp_buf_by_dma(c) ? c->pd->local_dma_lkey : b->mr->lkey;
	u32 i, piece = len / n;

	for (i = 0; i < n; i++) {
		sge[i].addr = base + (u64)i * piece;
		sge[i].length = i + 1 < n ? piece : len - i * piece;
		sge[i].lkey = lkey;
	}
	return n;
}

/*
 * ... of @len bytes of @b from its byte @off: NPU memory by DMA address
 * (ud) an SGE for each page they touch, which are not contiguous.
 */
static int kp_buf_sges(struct kp_conn *c, struct kp_buf *b, u32 off,
		       struct ib_sge *sge, u32 len)
{
	if (b->npu_mr_sgl && kp_buf_by_dma(c))
		return kp_npu_sges(b, off, len, sge, c->pd->local_dma_lkey);
	return kp_sge_split(c, b, kp_buf_addr(c, b, off), sge, len);
}

/* Post with bottom halves off so a software device's tasklet runs at once. */
/* The bytes @w moves: its SGEs' (an inline one's too). */
static u32 kp_wr_len(const struct ib_send_wr *w)
{
	u32 i, len = 0;

	for (i = 0; i < w->num_sge; i++)
		len += w->sg_list[i].length;
	return len;
}

/*
 * ud: the chain as datagrams to the peer's QP, in one post as RC's
 * (post_list=: c->chain_ud holds it).  Only SENDs: no UD QP takes
 * another opcode.
 */
static int kp_post_ud(struct kp_conn *c, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad)
{
	const struct ib_send_wr *w, *b = NULL;
	struct ib_ud_wr one, *uw = &one;
	u32 i, n = 0;
	int ret;

	*bad = wr;
	for (w = wr; w; w = w->next)
		n++;
	if (n > 1)
		uw = c->chain_ud;
	if (WARN_ON_ONCE(!c->ah || (n > 1 && (!uw || n > c->t->opts.post_list))))
		return -EINVAL;
	for (w = wr, i = 0; w; w = w->next, i++) {
		if (WARN_ON_ONCE(w->opcode != IB_WR_SEND &&
				 w->opcode != IB_WR_SEND_WITH_IMM))
			return -EINVAL;
		uw[i] = (struct ib_ud_wr) {
			.wr = *w,
			.ah = c->ah,
			.remote_qpn = c->remote_qpn,
			.remote_qkey = c->remote_qkey,
		};
		uw[i].wr.next = i + 1 < n ? &uw[i + 1].wr : NULL;
	}
	local_bh_disable();
	ret = ib_post_send(c->qp, &uw[0].wr, &b);
	local_bh_enable();
	/* the caller's work request where the driver stopped */
	for (w = wr, i = 0; w; w = w->next, i++) {
		if (ret && (!b || &uw[i].wr == b)) {
			*bad = w;
			break;
		}
		if (w->send_flags & IB_SEND_SIGNALED)
			c->sends_out++;
	}
	if (ret)
		kp_err(c->t, "ib_post_send(ud, opcode %d): %d", (*bad)->opcode, ret);
	return ret;
}

/*
 * Post @wr and the chain behind it (post_list=), each one traced; on a
 * failure *@bad is the first not posted.
 */
static int kp_post_chain(struct kp_conn *c, const struct ib_send_wr *wr,
			 const struct ib_send_wr **bad)
{
	const struct ib_send_wr *w;
	int ret;

	for (w = wr; trace_kp_post_send_enabled() && w; w = w->next)
		trace_kp_post_send(c->t->rec->id, c->idx, c->qp->qp_num,
				   container_of(w->wr_cqe, struct kp_cqe,
						cqe)->wr_id,
				   w->opcode, kp_wr_len(w), w->send_flags,
				   w->num_sge);
	if (c->ud)
		return kp_post_ud(c, wr, bad);
	/* a driver may fail a post without setting it */
	*bad = wr;
	local_bh_disable();
	ret = ib_post_send(c->qp, wr, bad);
	local_bh_enable();
	/* those before the bad one were posted */
	for (w = wr; w && (!ret || w != *bad); w = w->next)
		if (w->send_flags & IB_SEND_SIGNALED)
			c->sends_out++;
	if (ret)
		kp_err(c->t, "ib_post_send(opcode %d): %d", (*bad)->opcode, ret);
	return ret;
}

static int kp_post_send(struct kp_conn *c, const struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return kp_post_chain(c, wr, &bad);
}

/* A control receive, unless data receives are queued (c->rq_hold). */
int kp_post_recv(struct kp_conn *c)
{
	struct ib_sge sge = {
		.addr = c->recv_dma,
		.length = c->recv_hdr + KP_CTRL_SIZE,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &c->cqe[KP_WR_RECV].cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};
	const struct ib_recv_wr *bad;
	int ret;

	if (c->rq_hold)
		return 0;
	if (c->srq_shared) {
		ret = kp_ssrq_post_ctrl(c);
		if (!ret)
			c->rq_ctrl++;
		return ret;
	}
	trace_kp_post_recv(c->t->rec->id, c->idx, c->qp->qp_num, KP_WR_RECV,
			   -1, KP_CTRL_SIZE, IB_SEND_SIGNALED, 1);
	ret = kp_post_rq(c, &wr, &bad);
	if (ret)
		kp_err(c->t, "ib_post_recv: %d", ret);
	else
		c->rq_ctrl++;
	return ret;
}

/*
 * @n receives of a data message of c->t->size bytes into c->rdma, in
 * chains of c->rq_list (recv_post_list=), else of KP_RECV_BATCH; with
 * bw_send's validate, each into the slot of its message (the receive
 * queue is FIFO: the k-th posted this size takes message k).
 */
int kp_post_data_recv(struct kp_conn *c, u32 n)
{
	struct ib_recv_wr *wr = c->rq_wr;
	struct ib_sge *sge = c->rq_sge;
	const struct ib_recv_wr *bad;
	u32 i, k, nsge, size = c->t->size;
	int ret;

	if (kp_buf_cpu_owned(c, &c->rdma))
		return -EPROTO;
	/* the test's SRQ counts them, whichever connection's message takes them */
	if (c->srq_shared)
		return kp_ssrq_post_data(c, n);
	if (n > c->rq_data_max - c->rq_data) {
		kp_err(c->t, "%u data receives posted, room for %u", c->rq_data,
		       c->rq_data_max);
		return -EPROTO;
	}
	/* ud: the header lands first, the message after it */
	nsge = kp_buf_sges(c, &c->rdma, 0, sge, c->recv_hdr + size);
	while (n) {
		k = min_t(u32, n, c->rq_list ?: KP_RECV_BATCH);
		for (i = 0; i < k; i++) {
			struct ib_sge *s = sge;
			u32 ns = nsge;

			if (c->t->validate && c->t->mode == KP_MODE_BW_SEND) {
				u32 slot;

				div_u64_rem(c->rq_posted + i, c->val_slots, &slot);
				s = &sge[i * KP_MAX_SGE];
				ns = kp_buf_sges(c, &c->rdma, slot * c->val_stride,
						 s, c->recv_hdr + size);
			}
			wr[i] = (struct ib_recv_wr) {
				.wr_cqe = &c->cqe[KP_WR_DATA_RECV].cqe,
				.sg_list = s,
				.num_sge = ns,
				.next = i + 1 < k ? &wr[i + 1] : NULL,
			};
		}
		for (i = 0; trace_kp_post_recv_enabled() && i < k; i++)
			trace_kp_post_recv(c->t->rec->id, c->idx, c->qp->qp_num,
					   KP_WR_DATA_RECV, -1, c->t->size, IB_SEND_SIGNALED,
					   wr[i].num_sge);
		bad = wr;	/* a driver may fail a post without setting it */
		ret = kp_post_rq(c, wr, &bad);
		if (ret) {
			kp_err(c->t, "ib_post_recv(data): %d", ret);
			/* those before the bad one were posted */
			c->rq_data += bad - wr;
			c->rq_posted += bad - wr;
			c->rq_chains += bad != wr;
			return ret;
		}
		c->rq_data += k;
		c->rq_posted += k;
		c->rq_chains++;
		n -= k;
	}
	return 0;
}

/*
 * A server given recv_post_list= or rx_depth= refuses a client whose test
 * (@mode, @duplex) keeps no stream of data receives posted to shape.
 */
int kp_rx_opts_check(struct kp_test *t, enum kp_mode mode, bool duplex)
{
	if (t->opts.rx_depth && !kp_mode_rx(mode, duplex)) {
		kp_err(t, "rx_depth=%u sizes data receives, and the client's %s has none (bw,send and bw,imm do)",
		       t->opts.rx_depth, kp_mode_name(mode));
		return -EINVAL;
	}
	if (t->opts.recv_post_list && !kp_mode_sink(mode)) {
		kp_err(t, "recv_post_list=%u chains data receives, and the client's %s has none (bw,send and bw,imm do)",
		       t->opts.recv_post_list, kp_mode_name(mode));
		return -EINVAL;
	}
	return 0;
}

/*
 * @got data receives were used: post as many again, with recv_post_list=
 * (as perftest) only whole chains, the rest owed until a chain is due;
 * never past the stream's c->rq_total, where the last chain may be short
 * (perftest refuses a -n that is not whole chains; ours has a warm-up).
 */
int kp_data_recv_used(struct kp_conn *c, u32 got)
{
	u64 room = c->rq_total ? c->rq_total - c->rq_posted : U64_MAX;
	u32 n;

	c->rq_owed += got;
	if (c->rq_owed >= room) {
		n = room;
		c->rq_owed = 0;
	} else {
		n = c->rq_list ? rounddown(c->rq_owed, c->rq_list) : c->rq_owed;
		c->rq_owed -= n;
	}
	return n ? kp_post_data_recv(c, n) : 0;
}

/*
 * Queue @ndata data receives behind the control receives posted now, and
 * stop reposting those as they are used: the peer must use up c->rq_ctrl
 * of them with skips before its first data message.
 */
int kp_rq_hold(struct kp_conn *c, u32 ndata)
{
	/* a shared SRQ's receives take any message: nothing to skip */
	c->rq_hold = !c->srq_shared;
	return kp_post_data_recv(c, ndata);
}

/* The data receives are used up (or being): queue control receives again. */
int kp_rq_restore(struct kp_conn *c)
{
	int ret;

	c->rq_hold = false;
	while (c->rq_ctrl < KP_RQ_DEPTH) {
		ret = kp_post_recv(c);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * @n zero-length SENDs, each using up one of the peer's receives queued
 * ahead of those it wants our next message in.  They go in chunks of
 * KP_SKIP_CHUNK, the last of each signaled; a chunk after the first waits
 * for the sends before it to complete, so the send queue never overflows.
 * A control message arriving meanwhile is kept.
 */
#define KP_SKIP_CHUNK	16

int kp_post_skips(struct kp_conn *c, u32 n)
{
	struct ib_send_wr wr = {
		.wr_cqe = &c->cqe[KP_WR_SKIP].cqe,
		.opcode = IB_WR_SEND,
	};
	u32 i;
	int ret;

	for (i = 0; i < n; i++) {
		if (i && !(i % KP_SKIP_CHUNK)) {
			ret = kp_sends_settle(c);
			if (ret)
				return ret;
		}
		wr.send_flags = (i + 1) % KP_SKIP_CHUNK && i + 1 < n ?
				0 : IB_SEND_SIGNALED;
		ret = kp_post_send(c, &wr);
		if (ret)
			return ret;
		c->cnt->send_msgs++;
	}
	return 0;
}

/*
 * send_msg, once the SEND of the previous message has completed: fill it,
 * then kp_post_send_msg().  Nobody waits for a message's own completion:
 * the next message waits here, and kp_settle() before a disconnect.
 */
void *kp_send_buf(struct kp_conn *c)
{
	while (c->send_busy) {
		int ret = kp_wait_for(c, KP_WR_SEND, 0);

		if (ret)
			return ERR_PTR(ret);
	}
	return c->send_msg;
}

/* Send @len bytes of send_msg; with @inv_rkey, SEND_WITH_INV of that key. */
int kp_post_send_msg(struct kp_conn *c, u32 len, u32 inv_rkey)
{
	struct ib_sge sge = {
		.addr = c->send_dma,
		.length = len,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &c->cqe[KP_WR_SEND].cqe,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = inv_rkey ? IB_WR_SEND_WITH_INV : IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = inv_rkey,
	};
	int ret;

	if (WARN_ON_ONCE(c->send_busy))
		return -EBUSY;		/* kp_send_buf() first */
	ib_dma_sync_single_for_device(kp_dev(c), c->send_dma, KP_CTRL_SIZE,
				      DMA_BIDIRECTIONAL);
	c->send_len = len;
	ret = kp_post_send(c, &wr);
	if (!ret)
		c->send_busy = true;
	return ret;
}

/* Register @b's MR under a fresh key with @access. */
int kp_post_reg(struct kp_conn *c, struct kp_buf *b, int access, bool signal)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_cqe = &c->cqe[KP_WR_REG].cqe,
			.opcode = IB_WR_REG_MR,
			.send_flags = signal ? IB_SEND_SIGNALED : 0,
		},
		.mr = b->mr,
		.access = access,
	};
	int ret;

	/* the test's MR has its key from kp_smr_add(), advertised already */
	if (!b->mr_shared)
		ib_update_fast_reg_key(b->mr, (u8)ib_inc_rkey(b->mr->rkey));
	wr.key = b->mr->rkey;
	ret = kp_post_send(c, &wr.wr);
	if (!ret)
		b->registered = true;
	return ret;
}

int kp_post_inv(struct kp_conn *c, struct kp_buf *b, bool signal)
{
	struct ib_send_wr wr = {
		.wr_cqe = &c->cqe[KP_WR_INV].cqe,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = signal ? IB_SEND_SIGNALED : 0,
		.ex.invalidate_rkey = b->mr->rkey,
	};
	int ret;

	ret = kp_post_send(c, &wr);
	if (!ret)
		b->registered = false;
	return ret;
}

/* The counters of a READ, WRITE or SEND posted (most are unsignaled). */
static void kp_count_post(struct kp_conn *c, enum ib_wr_opcode op, u32 len)
{
	struct kp_counters *k = c->cnt;

	if (op == IB_WR_RDMA_READ || op == IB_WR_RDMA_READ_WITH_INV) {
		k->read_msgs++;
		k->read_bytes += len;
	} else if (op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM) {
		k->send_msgs++;
		k->send_bytes += len;
	} else {
		k->write_msgs++;
		k->write_bytes += len;
	}
}

/*
 * @wr, with @sge, for a READ, WRITE or SEND of @len bytes of @b at @off,
 * and @roff into the peer's advertised buffer.
 */
static void kp_rdma_wr(struct kp_conn *c, struct ib_rdma_wr *wr,
		       struct ib_sge *sge, enum ib_wr_opcode op,
		       struct kp_buf *b, u32 off, u32 roff, u32 len, u64 wr_id,
		       bool signal, u32 imm)
{
	*wr = (struct ib_rdma_wr) {
		.wr = {
			.wr_cqe = kp_wr_cqe(c, wr_id, signal),
			.sg_list = sge,
			.opcode = op,
			.send_flags = signal ? IB_SEND_SIGNALED : 0,
		},
		.remote_addr = c->remote_addr + roff,
		.rkey = c->remote_rkey,
	};
	/* small writes from host memory go inline, by CPU address */
	if (op != IB_WR_RDMA_READ && op != IB_WR_RDMA_READ_WITH_INV &&
	    len <= c->max_inline && b->vaddr) {
		wr->wr.send_flags |= IB_SEND_INLINE;
		wr->wr.num_sge = kp_sge_split(c, b, (uintptr_t)b->vaddr + off,
					      sge, len);
	} else {
		wr->wr.num_sge = kp_buf_sges(c, b, off, sge, len);
	}
	if (op == IB_WR_RDMA_WRITE_WITH_IMM || op == IB_WR_SEND_WITH_IMM)
		wr->wr.ex.imm_data = cpu_to_be32(imm);
	if (op == IB_WR_RDMA_READ_WITH_INV)
		wr->wr.ex.invalidate_rkey = b->mr->rkey;
}

/*
 * RDMA READ/WRITE(_WITH_IMM) or SEND between @b and the peer's advertised
 * buffer.  validate: @len bytes at @off of @b, a message's slot, and (a
 * READ) at @roff of the peer's buffer; not with rw.
 */
int kp_post_rdma_at(struct kp_conn *c, enum ib_wr_opcode op,
		    struct kp_buf *b, u32 off, u32 roff, u32 len, u64 wr_id,
		    bool signal, u32 imm)
{
	struct ib_sge sge[KP_MAX_SGE];
	struct ib_rdma_wr wr;
	int ret;

	if (kp_buf_cpu_owned(c, b))
		return -EPROTO;
	if (WARN_ON_ONCE(off > b->size || len > b->size - off))
		return -EINVAL;
	if (c->rw && b == &c->rdma && !WARN_ON_ONCE(off || roff) &&
	    (op == IB_WR_RDMA_READ || op == IB_WR_RDMA_WRITE)) {
		/* rw: the core's rdma_rw chooses how (kp_rw.c) */
		ret = kp_rw_post(c, op, wr_id >> KP_WR_IDX_SHIFT, len,
				 kp_wr_cqe(c, wr_id, signal), signal, wr_id);
		if (ret)
			return ret;
		if (signal)
			c->sends_out++;
		kp_count_post(c, op, len);
		return 0;
	}
	kp_rdma_wr(c, &wr, sge, op, b, off, roff, len, wr_id, signal, imm);
	ret = kp_post_send(c, &wr.wr);
	if (!ret)
		kp_count_post(c, op, len);
	return ret;
}

int kp_post_rdma(struct kp_conn *c, enum ib_wr_opcode op, struct kp_buf *b,
		 u32 len, u64 wr_id, bool signal, u32 imm)
{
	return kp_post_rdma_at(c, op, b, 0, 0, len, wr_id, signal, imm);
}

/*
 * post_list=: as kp_post_rdma(), the work request added to the chain
 * that kp_chain_post() posts, in one ib_post_send() (not with rw).
 */
int kp_chain_add(struct kp_conn *c, enum ib_wr_opcode op, struct kp_buf *b,
		 u32 off, u32 roff, u32 len, u64 wr_id, bool signal, u32 imm)
{
	u32 n = c->chain_n;

	if (kp_buf_cpu_owned(c, b))
		return -EPROTO;
	if (WARN_ON_ONCE(c->rw || n >= c->t->opts.post_list ||
			 off > b->size || len > b->size - off))
		return -EINVAL;
	kp_rdma_wr(c, &c->chain_wr[n], &c->chain_sge[n * KP_MAX_SGE], op, b,
		   off, roff, len, wr_id, signal, imm);
	if (n)
		c->chain_wr[n - 1].wr.next = &c->chain_wr[n].wr;
	c->chain_n = n + 1;
	return 0;
}

/* ... and the chain posted: those that went, counted. */
int kp_chain_post(struct kp_conn *c)
{
	const struct ib_send_wr *bad;
	u32 i, n = c->chain_n;
	int ret;

	if (!n)
		return 0;
	c->chain_n = 0;
	ret = kp_post_chain(c, &c->chain_wr[0].wr, &bad);
	for (i = 0; i < n && (!ret || &c->chain_wr[i].wr != bad); i++)
		kp_count_post(c, c->chain_wr[i].wr.opcode,
			      kp_wr_len(&c->chain_wr[i].wr));
	return ret;
}

/*
 * An atomic on the peer's first 8 bytes, its old value returned into the
 * first 8 of @b: fetch-and-add of @arg, or compare-and-swap of @arg with
 * @swap.
 */
int kp_post_atomic(struct kp_conn *c, enum kp_atomic op, struct kp_buf *b,
		   u64 wr_id, bool signal, u64 arg, u64 swap)
{
	struct ib_sge sge = {
		.addr = kp_buf_addr(c, b, 0),
		.length = KP_ATOMIC_SIZE,
		.lkey = kp_buf_by_dma(c) ? c->pd->local_dma_lkey : b->mr->lkey,
	};
	struct ib_atomic_wr wr = {
		.wr = {
			.wr_cqe = kp_wr_cqe(c, wr_id, signal),
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = op == KP_ATOMIC_CAS ? IB_WR_ATOMIC_CMP_AND_SWP :
				  IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = signal ? IB_SEND_SIGNALED : 0,
		},
		.remote_addr = c->remote_addr,
		.rkey = c->remote_rkey,
		.compare_add = arg,
		.swap = swap,
	};
	int ret;

	if (kp_buf_cpu_owned(c, b))
		return -EPROTO;
	ret = kp_post_send(c, &wr.wr);
	if (ret)
		return ret;
	c->cnt->atomic_msgs++;
	c->cnt->atomic_bytes += KP_ATOMIC_SIZE;
	return 0;
}

void kp_set_info(struct kp_rdma_info *info, struct kp_buf *b, u32 len)
{
	info->buf = cpu_to_be64(b->iova);
	info->rkey = cpu_to_be32(b->mr->rkey);
	info->size = cpu_to_be32(len);
}

void kp_get_info(struct kp_conn *c, const struct kp_rdma_info *info)
{
	c->remote_addr = be64_to_cpu(info->buf);
	c->remote_rkey = be32_to_cpu(info->rkey);
	c->remote_len = be32_to_cpu(info->size);
}

/* The peer's probe target, from a version 6 hello: none if no length. */
void kp_get_probe_info(struct kp_conn *c, const struct kp_rdma_info *info)
{
	c->peer_probe_addr = be64_to_cpu(info->buf);
	c->peer_probe_rkey = be32_to_cpu(info->rkey);
	c->peer_probe = be32_to_cpu(info->size) > KP_PROBE_SINK;
}

/*
 * -ECONNRESET once the peer disconnected or the CM reported an error;
 * -EFAULT once NPU memory of the test was freed under it.
 */
int kp_cm_check(struct kp_conn *c)
{
	/* the freed memory first: it is why the peer may be leaving */
	int ret = kp_npu_check(c);

	if (ret)
		return ret;
	if (READ_ONCE(c->cm_state) >= KP_CM_DISCONNECTED)
		return READ_ONCE(c->cm_error) ?: -ECONNRESET;
	/* qps=N: another connection of the test was lost */
	if (READ_ONCE(c->t->conn_down) && READ_ONCE(c->t->live))
		return -ECONNRESET;
	return 0;
}

static void kp_count(struct kp_conn *c, const struct ib_wc *wc)
{
	struct kp_counters *k = c->cnt;

	switch (wc->opcode) {
	case IB_WC_SEND:
		/* data messages and skips are counted when posted */
		if (wc->wr_id != KP_WR_SEND)
			break;
		k->send_msgs++;
		k->send_bytes += c->send_len;
		break;
	case IB_WC_RECV:
		k->recv_msgs++;
		k->recv_bytes += wc->byte_len;
		break;
	case IB_WC_RECV_RDMA_WITH_IMM:
		k->recv_msgs++;
		break;
	default:
		break;
	}
}

static bool kp_wcq_ready(struct kp_conn *c)
{
	return READ_ONCE(c->wcq_tail) != READ_ONCE(c->wcq_head);
}

/* Up to @max completions into @wc: processed, then read from wcq. */
static int kp_cq_poll(struct kp_conn *c, struct ib_wc *wc, int max)
{
	unsigned long flags;
	int n = 0;

	kp_cq_process(c, max);
	if (!kp_wcq_ready(c) && !READ_ONCE(c->wcq_lost))
		return 0;
	spin_lock_irqsave(&c->wcq_lock, flags);
	while (n < max && c->wcq_head != c->wcq_tail)
		wc[n++] = c->wcq[c->wcq_head++ & (c->wcq_n - 1)];
	spin_unlock_irqrestore(&c->wcq_lock, flags);
	/* more completions than the CQ holds: the counts are off */
	if (!n && READ_ONCE(c->wcq_lost)) {
		kp_err(c->t, "completions lost: more than the CQ's %u", c->cq_depth);
		return kp_cm_check(c) ?: -EOVERFLOW;
	}
	return n;
}

struct kp_probe_count kp_probe_count;

/* A wait on the peer ends: it is gone.  One line, with how long it was silent. */
static int kp_peer_lost(struct kp_conn *c, const char *why, int err)
{
	atomic_inc(&kp_probe_count.lost);
	trace_kp_probe(c->t->rec->id, c->idx, c->qp ? c->qp->qp_num : 0, 2);
	kp_err(c->t, "peer not answering: %s after %llu ms", why,
	       div_u64(ktime_get_ns() - c->alive_at, NSEC_PER_MSEC));
	return err;
}

/*
 * How long a wait on the peer may last while it may still stream, from
 * what its side announced (the server of a one-sided test, either side of
 * a duplex one, sees no sign of progress meanwhile): the timeout plus the
 * duration, or plus 1 ms per message, warm-up included, and per 64 KiB
 * moved, of every connection, and a timeout more for a client lining up
 * its threads (qps=N), and the time the client's pace (rate_limit=)
 * needs; a peer slower than 64 MB/s fails it.  probe=0
 * waits this long; a probing wait 4 times this and 10 timeouts.
 */
u32 kp_peer_wait_ms(struct kp_test *t)
{
	u32 warm = t->opts.role == KP_ROLE_CLIENT ? t->opts.warmup : t->warmup;
	u64 msgs = ((u64)t->count + warm) * t->nconns;
	/* rate_limit: a connection's paced bytes at the rate */
	u64 paced = t->rate ? kp_mul_div(msgs / t->nconns * t->size,
					 MSEC_PER_SEC, (u64)t->rate << 20) : 0;

	return (u32)min_t(u64, t->opts.timeout_ms * (t->nconns > 1 ? 2 : 1) +
			  t->duration_s * MSEC_PER_SEC + msgs +
			  (msgs * t->size >> 16) + paced, U32_MAX / 8);
}

/*
 * The waits from here on are on the peer (probe=): each probe_ms without
 * a completion sends it a probe, which only the peer's HCA completes,
 * without its CPU.  On InfiniBand and RoCE a zero-length RDMA WRITE,
 * acknowledged without memory (IBTA C9-88: no rkey is checked) and again
 * when retried (a post every provider takes: ib_drain_sq() makes one);
 * not a zero-length READ: 6.1's rxe answers a retried one (its response
 * lost) with a remote access error, which kills the QP.
 * An iWARP WRITE completes once TCP has taken it, so there the probe
 * READs one byte of the target the peer advertised in its hello
 * (kp_probe_target(); siw has no zero-length READ); a WRITE where the
 * peer grants no READs or names no target (an older client).
 * While probes come back, the wait goes on, up to its outer bound
 * (kp_peer_wait_ms()); a probe that fails (the QP's retries exhausted:
 * the peer is gone) ends it.
 */
void kp_probe_begin(struct kp_conn *c)
{
	struct kp_test *t = c->t;
	u64 outer_ms = 4ull * kp_peer_wait_ms(t) + 10ull * t->opts.timeout_ms;

	/* ud: no probe could fail, whether the peer is there or not */
	if (!t->opts.probe_ms || c->ud)
		return;
	c->probing = true;
	c->alive_at = ktime_get_ns();
	c->probe_outer_ms = min_t(u64, outer_ms, U32_MAX);
	c->probe_until = c->alive_at + outer_ms * NSEC_PER_MSEC;
}

void kp_probe_end(struct kp_conn *c)
{
	if (c->probing && c->probes)
		kp_info(c->t, "connection %u: %u probes answered while waiting on the peer",
			c->idx, c->probes);
	c->probing = false;
	c->probes = 0;
}

/* Data receives posted, for a stall's lines: a shared SRQ's, all connections' */
static int kp_data_out(struct kp_conn *c)
{
	return c->srq_shared ? c->t->ssrq.data : (int)c->rq_data;
}

static const char *kp_srq_says(struct kp_conn *c)
{
	return c->srq_shared ? " through the SRQ the connections share" :
	       c->srq ? " through its SRQ" : "";
}

/*
 * A slice of a wait went by without a completion: -ETIMEDOUT, or while
 * probing, a probe sent (one at a time) and the wait goes on, unless the
 * one out has been unanswered for KP_PROBE_LOST_S.
 */
static int kp_slice_over(struct kp_conn *c)
{
	struct ib_sge sink = {
		.addr = c->probe_buf.mr ? c->probe_buf.mr->iova + KP_PROBE_SINK : 0,
		.length = 1,
		.lkey = c->probe_buf.mr ? c->probe_buf.mr->lkey : 0,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &c->cqe[KP_WR_PROBE].cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	u64 now = ktime_get_ns();
	int ret;

	if (c->iwarp && c->probe_read && c->peer_probe && c->probe_buf.mr) {
		wr.wr.opcode = IB_WR_RDMA_READ;
		wr.wr.sg_list = &sink;
		wr.wr.num_sge = 1;
		wr.remote_addr = c->peer_probe_addr;
		wr.rkey = c->peer_probe_rkey;
	}
	/* what was still owed, for a stall's post-mortem */
	if (!c->probing) {
		kp_err(c->t, "no completion within %u ms on connection %u (QP %u: %u signalled sends out, %u control and %d data receives posted%s)",
		       c->wait_ms, c->idx, c->qp->qp_num, c->sends_out,
		       c->rq_ctrl, kp_data_out(c), kp_srq_says(c));
		return -ETIMEDOUT;
	}
	if (now > c->probe_until) {
		kp_err(c->t, "connection %u: the peer answers its probes but has not finished in %u ms, the bound of what it announced (%u x %u bytes, %u warm-up, %u s)",
		       c->idx, c->probe_outer_ms,
		       c->t->count, c->t->size,
		       c->t->opts.role == KP_ROLE_CLIENT ? c->t->opts.warmup : c->t->warmup,
		       c->t->duration_s);
		return -ETIMEDOUT;
	}
	if (c->probe_out) {
		if (now - c->probe_at < KP_PROBE_LOST_S * NSEC_PER_SEC)
			return 0;
		return kp_peer_lost(c, "a probe unanswered for " __stringify(KP_PROBE_LOST_S) " s (the probe's bound)",
				    -EHOSTDOWN);
	}
	ret = kp_post_send(c, &wr.wr);
	if (ret)
		return ret;
	trace_kp_probe(c->t->rec->id, c->idx, c->qp->qp_num, 0);
	c->probe_out = true;
	c->probe_at = now;
	return 0;
}

/*
 * A connection's queues and counts where its bw stream failed: whose
 * receive queue ran dry, or whose stream stopped, is in them.
 */
void kp_conn_state(struct kp_conn *c)
{
	kp_info(c->t, "connection %u at the failure (QP %u): %llu of %llu messages completed, %u signalled sends out; %u control and %d data receives posted%s%s, %u skips due",
		c->idx, c->qp->qp_num, c->stream.done, c->stream.posted,
		c->sends_out, c->rq_ctrl, kp_data_out(c), kp_srq_says(c),
		c->rq_hold ? " (control held)" : "", c->skip_in);
	if (kp_dx_send(c->t))
		kp_info(c->t, "connection %u: duplex: %llu of the peer's %llu messages taken%s, %llu data receives posted, %u owed",
			c->idx, c->sink_done, c->rq_total,
			c->sink_over ? " (its last)" : "", c->rq_posted,
			c->rq_owed);
}

/*
 * A wait on the peers of several connections (kp_lanes_drive()) went a
 * probe interval without a completion: probe @c as kp_poll() would.
 */
int kp_probe_tick(struct kp_conn *c)
{
	return kp_slice_over(c);
}

/*
 * A flushed completion: the QP went to the error state.  The CM's word
 * on why, a disconnect, may come after it: siw flushes as the peer's
 * socket closes, before its DISCONNECTED.  Wait for that word a bounded
 * while (KP_FLUSH_WHY_MS); true once the CM (or a freed NPU buffer)
 * explains the flush.
 */
static bool kp_flush_why(struct kp_conn *c)
{
	wait_event_interruptible_timeout(c->t->wq, kp_cm_check(c) ||
					 READ_ONCE(c->t->abort) ||
					 kp_stopping(c->t),
					 msecs_to_jiffies(KP_FLUSH_WHY_MS));
	return kp_cm_check(c) != 0;
}

/* The CM's error as a wait on the peer returns it: a probing one says so. */
static int kp_cm_lost(struct kp_conn *c, int err)
{
	return c->probing && err == -ECONNRESET ?
	       kp_peer_lost(c, "disconnected", err) : err;
}

/*
 * The CM's word on the connection, as a wait on the peer returns it.
 * What completed before the peer disconnected (its last message) may not
 * have been reaped when the CM's event is here, and is taken first (0):
 * the data QP's completions and the CM's MADs travel apart, so with
 * @wait it is waited for, where the core's poll context reaps (an
 * unbound workqueue on a loaded host lags) KP_FLUSH_WHY_MS at most, and
 * with cq=direct, which came in after our last empty poll, by polling
 * for KP_LAST_MSG_MS; without @wait the CQ is looked at once.  The QP's
 * flush brings the rest, receives always posted among them.
 */
static int kp_poll_cm(struct kp_conn *c, bool wait)
{
	int err = kp_cm_check(c);
	unsigned long end;

	if (!err)
		return 0;
	if (c->cq->poll_ctx == IB_POLL_DIRECT) {
		end = jiffies + msecs_to_jiffies(KP_LAST_MSG_MS);
		for (;;) {
			kp_cq_process(c, c->wcq_n);
			if (kp_wcq_ready(c))
				return 0;
			if (!wait || !time_before(jiffies, end) ||
			    READ_ONCE(c->t->abort))
				break;
			usleep_range(50, 100);
		}
	} else {
		if (wait)
			wait_event_interruptible_timeout(c->t->wq,
					kp_wcq_ready(c) || READ_ONCE(c->t->abort),
					msecs_to_jiffies(KP_FLUSH_WHY_MS));
		if (kp_wcq_ready(c))
			return 0;
	}
	return kp_cm_lost(c, err);
}

/*
 * ud, the server: the client's address from its first message, the
 * hello, as perftest's server makes it (the CM gives a server none); the
 * qkey is the CM's, on both QPs.
 */
static int kp_ud_learn(struct kp_conn *c, const struct ib_wc *wc)
{
	struct ib_ah *ah;

	if (wc->wr_id != KP_WR_RECV) {
		kp_err(c->t, "ud: the client's first message is data, not its hello");
		return -EPROTO;
	}
	ib_dma_sync_single_for_cpu(kp_dev(c), c->recv_dma,
				   c->recv_hdr + KP_CTRL_SIZE, DMA_BIDIRECTIONAL);
	ah = ib_create_ah_from_wc(c->pd, wc, c->recv_buf, c->port);
	if (IS_ERR(ah)) {
		kp_err(c->t, "ud: the client's address handle from its first message: ib_create_ah_from_wc: %ld",
		       PTR_ERR(ah));
		return PTR_ERR(ah);
	}
	c->remote_qpn = wc->src_qp;
	c->remote_qkey = RDMA_UDP_QKEY;
	/* last: a free callback's fence reads them once it is there */
	smp_store_release(&c->ah, ah);
	kp_info(c->t, "connection %u: ud: the client's QP %u, qkey 0x%x, messages up to the path MTU, %u bytes",
		c->idx, c->remote_qpn, c->remote_qkey, c->ud_mtu);
	return 0;
}

/*
 * ud: a receive holds the header first, and the message is what follows
 * it; messages come from the peer's QP alone.
 */
static int kp_ud_recv(struct kp_conn *c, struct ib_wc *wc)
{
	if (wc->byte_len < c->recv_hdr) {
		kp_err(c->t, "ud: a receive of %u bytes, short of the %u-byte header",
		       wc->byte_len, c->recv_hdr);
		return -EPROTO;
	}
	wc->byte_len -= c->recv_hdr;
	if (!c->ah)
		return kp_ud_learn(c, wc);
	if (wc->src_qp != c->remote_qpn) {
		kp_err(c->t, "ud: a message from QP %u, not the peer's %u",
		       wc->src_qp, c->remote_qpn);
		return -EPROTO;
	}
	return 0;
}

/*
 * @n completions reaped into @wc: any error ends the test; the send
 * queue's and the receive queue's bookkeeping and the counters follow.
 * A probe's answer is taken out.  Returns the completions left in @wc.
 */
static int kp_poll_take(struct kp_conn *c, struct ib_wc *wc, int n)
{
	int i, k = 0;

	for (i = 0; i < n; i++) {
		/* a shared SRQ's: data or control, by where @c's protocol is */
		if ((u8)wc[i].wr_id == KP_WR_SRECV) {
			int ret = kp_ssrq_take(c, &wc[i]);

			if (ret)
				return ret;
		}
		if (wc[i].status != IB_WC_SUCCESS) {
			/*
			 * as an empty poll's disconnect (kp_poll()); or a
			 * stop's: -EINTR, as every stopped wait returns
			 */
			if (wc[i].status == IB_WC_WR_FLUSH_ERR) {
				/*
				 * what came before the flush is taken now, the
				 * CM's word at the next empty poll
				 */
				if (kp_flush_why(c))
					return k ?: kp_cm_lost(c, kp_cm_check(c));
				if (kp_stopping(c->t))
					return -EINTR;
			}
			/*
			 * A probe failed on its own (retries exhausted): the
			 * peer is gone.  A flushed one says only that the QP
			 * went to error, as the CM does on a disconnect.
			 */
			if (wc[i].wr_id == KP_WR_PROBE &&
			    wc[i].status != IB_WC_WR_FLUSH_ERR)
				return kp_peer_lost(c, ib_wc_status_msg(wc[i].status),
						    -EHOSTDOWN);
			c->errors++;
			kp_err(c->t, "completion of wr %llu: %s (vendor 0x%x)",
			       wc[i].wr_id, ib_wc_status_msg(wc[i].status),
			       wc[i].vendor_err);
			return -EIO;
		}
		if (c->ud && (wc[i].opcode & IB_WC_RECV)) {
			int ret = kp_ud_recv(c, &wc[i]);

			if (ret)
				return ret;
		}
		/* every send-queue completion is of a signaled WR */
		if (!(wc[i].opcode & IB_WC_RECV))
			c->sends_out--;
		if (c->probing)
			c->alive_at = ktime_get_ns();
		if (wc[i].wr_id == KP_WR_PROBE) {
			c->probe_out = false;
			c->probes++;
			trace_kp_probe(c->t->rec->id, c->idx, c->qp->qp_num, 1);
			atomic_inc(&kp_probe_count.answered);
			continue;
		}
		if (wc[i].wr_id == KP_WR_SEND)
			c->send_busy = false;
		else if (wc[i].wr_id == KP_WR_RECV)
			c->rq_ctrl--;
		else if (wc[i].wr_id == KP_WR_DATA_RECV && !c->srq_shared)
			c->rq_data--;
		kp_count(c, &wc[i]);
		if (k != i)
			wc[k] = wc[i];
		k++;
	}
	return k;
}

/*
 * Reap up to @max completions into @wc, waiting for at least one for at
 * most c->wait_ms, or while probing (kp_probe_begin()) for as long as the
 * peer answers its probes.  The CQ is polled @spin times (KP_SPIN_ALWAYS:
 * until the deadline) before the caller sleeps: until the core's poll
 * context queues a completion, or with cq=direct, which nothing calls,
 * for a nap that grows from KP_NAP_MIN_NS to KP_NAP_MAX_NS.  Returns
 * the number reaped (0: a probe's answer alone, taken out), or
 * -ETIMEDOUT, -EINTR, -ECONNRESET (peer gone), -EHOSTDOWN (peer not
 * answering its probes), -EIO (a completion error).
 */
int kp_poll(struct kp_conn *c, struct ib_wc *wc, int max, unsigned int spin)
{
	unsigned long deadline;
	unsigned int spins = 0;
	unsigned int waited = 0;
	bool late = false;
	u64 begun = 0;
	long left;
	int n;

	if (kp_stopping(c->t))
		return -EINTR;
	/*
	 * Outside the measured loops, which yield between iterations
	 * (kp_loop_yield()), callers may never find the CQ empty (a software
	 * device completes inside the post): yield here every so often.
	 */
	if (!c->run && !(++c->polls % KP_YIELD_EVERY))
		cond_resched();
	deadline = jiffies + msecs_to_jiffies(c->probing ?
					      c->t->opts.probe_ms : c->wait_ms);
	for (;;) {
		n = kp_cq_poll(c, wc, max);
		if (n < 0)
			return n;
		if (n) {
			c->nap_ns = KP_NAP_MIN_NS;
			return kp_poll_take(c, wc, n);
		}
		/*
		 * Spinning, the CM and a stop are heard every 64 empty polls:
		 * between two polls of a timed wait is nothing but the poll
		 * and the scheduler's word (kp_resched_asked(): a flag's read).
		 */
		if (spins < spin) {
			if (c->run && kp_resched_asked())
				kp_run_give(c, late, &waited);
			if (++spins % 64)
				continue;
			n = kp_poll_cm(c, true);
			if (n)
				return n;
			/* the peer's last message, before its disconnect */
			if (kp_wcq_ready(c))
				continue;
			if (kp_stopping(c->t))
				return -EINTR;
			if (time_after(jiffies, deadline)) {
				n = kp_slice_over(c);
				if (n)
					return n;
				deadline = jiffies +
					   msecs_to_jiffies(c->t->opts.probe_ms);
				continue;
			}
			/*
			 * A timed wait gives the CPU as kp_run_give() says,
			 * and is late by kp_run_late() from its first check,
			 * whether it gave the CPU or not.
			 */
			if (c->run) {
				if (!late) {
					u64 now = kp_clock_now(&c->t->clk);

					if (!begun)
						begun = now;
					if (kp_run_late(c->run, now - begun)) {
						late = true;
						c->run->late_waits++;
						trace_kp_late_wait(c->t->rec->id, c->idx,
								   now - begun);
					}
				}
				kp_run_give(c, late, &waited);
				continue;
			}
			cond_resched();
			continue;
		}
		n = kp_poll_cm(c, true);
		if (n)
			return n;
		if (kp_wcq_ready(c))
			continue;
		/* never a negative timeout: the deadline may have just passed */
		left = kp_time_left(deadline, jiffies);
		if (!left) {
			n = kp_slice_over(c);
			if (n)
				return n;
			deadline = jiffies + msecs_to_jiffies(c->t->opts.probe_ms);
			continue;
		}
		if (c->cq->poll_ctx == IB_POLL_DIRECT) {
			u64 nap = min_t(u64, c->nap_ns, jiffies_to_nsecs(left));

			if (wait_event_interruptible_hrtimeout(c->t->wq,
					kp_cm_check(c) || READ_ONCE(c->t->abort),
					ns_to_ktime(nap)) == -ERESTARTSYS)
				return -EINTR;
			c->nap_ns = min(2 * c->nap_ns, KP_NAP_MAX_NS);
		} else if (wait_event_interruptible_timeout(c->t->wq,
				kp_wcq_ready(c) || kp_cm_check(c) ||
				READ_ONCE(c->t->abort), left) < 0) {
			return -EINTR;
		}
		if (kp_stopping(c->t))
			return -EINTR;
	}
}

#define KP_HARNESS_N	1001

/*
 * The harness's share of each sample of the size just run, for its result
 * (c->t->harness_ns): the median of KP_HARNESS_N null samples, each timed
 * as a sample is and taking a sample's path but for the device: a clock
 * read, one empty poll of the CQ as kp_poll() polls it, a clock read;
 * divided by @div as the figures are.  A completion that comes meanwhile
 * stays queued.  Run after the loop, outside every interval; 0 without
 * the memory.
 */
void kp_harness(struct kp_conn *c, u32 div)
{
	struct kp_lat_result r = { 0 };
	u64 *ns, t0;
	u32 i;

	c->t->harness_ns = 0;
	ns = kmalloc_array(KP_HARNESS_N, sizeof(*ns), GFP_KERNEL);
	if (!ns)
		return;
	for (i = 0; i < KP_HARNESS_N; i++) {
		t0 = kp_clock_now(&c->t->clk);
		kp_cq_process(c, 1);
		/* the check a poll makes; what it finds stays queued */
		(void)(kp_wcq_ready(c) || READ_ONCE(c->wcq_lost));
		ns[i] = kp_clock_now(&c->t->clk) - t0;
	}
	kp_lat_compute(ns, KP_HARNESS_N, div, 0, &r);
	kfree(ns);
	c->t->harness_ns = r.t_typical;
}

/*
 * A ping-pong of @iters round trips (@warm untimed) is over: the run ends
 * (the settling waits are not part of it), our signaled sends complete,
 * and the client measures the harness and keeps its result.
 */
int kp_pingpong_done(struct kp_conn *c, u64 iters, u64 warm)
{
	int ret;

	kp_run_end(c);
	ret = kp_sends_settle(c);
	if (ret)
		return ret;
	if (c->t->opts.role == KP_ROLE_CLIENT)
		kp_harness(c, 2);
	return kp_stats_pingpong(c, iters, warm);
}

/*
 * Reap what @c's CQ holds now, up to @max, without waiting: the loops
 * that drive several connections from one thread (kp_lanes.c).  Returns
 * the number reaped (0: none) or kp_poll()'s errors.
 */
int kp_poll_now(struct kp_conn *c, struct ib_wc *wc, int max)
{
	int n = kp_cq_poll(c, wc, max);

	if (n < 0)
		return n;
	if (!n)
		return kp_poll_cm(c, false);
	return kp_poll_take(c, wc, n);
}

/*
 * The writer was signalled, the kernel thread running a loop is told to
 * stop, or (qps=N) another of the test's threads failed.
 */
bool kp_stopping(struct kp_test *t)
{
	return signal_pending(current) || READ_ONCE(t->abort) ||
	       ((current->flags & PF_KTHREAD) && kthread_should_stop());
}

/*
 * A control message arrived (@wc): make it readable, note its length and
 * any invalidated rkey, and repost the receive.  Only one message may wait
 * unconsumed (c->recv_ready); a second one is a protocol error.
 */
int kp_recv_done(struct kp_conn *c, const struct ib_wc *wc)
{
	if (c->recv_ready) {
		kp_err(c->t, "a second message before the first was handled");
		return -EPROTO;
	}
	/* a shared SRQ's was copied there by the CPU (kp_ssrq_take()) */
	if (!c->srq_shared)
		ib_dma_sync_single_for_cpu(kp_dev(c), c->recv_dma,
					   c->recv_hdr + KP_CTRL_SIZE,
					   DMA_BIDIRECTIONAL);
	c->recv_len = wc->byte_len;
	c->recv_inv_rkey = wc->wc_flags & IB_WC_WITH_INVALIDATE ?
			    wc->ex.invalidate_rkey : 0;
	return kp_post_recv(c);
}

/*
 * The peer's WRITE_WITH_IMM (wlat) arrived while waiting for something
 * else: data, never a message.  Queue its immediate for the wlat loop.
 */
static int kp_imm_keep(struct kp_conn *c, const struct ib_wc *wc)
{
	if (c->imm_n == ARRAY_SIZE(c->imm)) {
		kp_err(c->t, "more than %zu writes with immediate ahead of the loop",
		       ARRAY_SIZE(c->imm));
		return -EPROTO;
	}
	c->imm[c->imm_n++] = be32_to_cpu(wc->ex.imm_data);
	return kp_post_recv(c);
}

/* A receive completed while waiting for something else: keep it. */
int kp_recv_keep(struct kp_conn *c, const struct ib_wc *wc)
{
	int ret;

	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM)
		return kp_imm_keep(c, wc);
	ret = kp_recv_done(c, wc);
	if (!ret)
		c->recv_ready = true;
	return ret;
}

/* The oldest queued write with immediate: its immediate, or -ENOENT. */
int kp_imm_take(struct kp_conn *c, u32 *imm)
{
	if (!c->imm_n)
		return -ENOENT;
	*imm = c->imm[0];
	memmove(c->imm, c->imm + 1, --c->imm_n * sizeof(c->imm[0]));
	return 0;
}

/*
 * The completions of our signaled sends (a ping-pong's end, a chunk of
 * skips).  The peer may have seen our last message and sent its FIN
 * before the send's completion came back: that message is kept for the
 * FIN exchange.  No data message may arrive meanwhile.
 */
int kp_sends_settle(struct kp_conn *c)
{
	struct ib_wc wc;
	int ret;

	while (c->sends_out) {
		ret = kp_poll(c, &wc, 1, KP_SPIN_ALWAYS);
		if (ret < 0)
			return ret;
		if (ret && wc.wr_id == KP_WR_RECV) {
			ret = kp_recv_keep(c, &wc);
			if (ret)
				return ret;
		} else if (ret && wc.wr_id == KP_WR_DATA_RECV) {
			kp_err(c->t, "a data message of %u bytes while waiting for our sends",
			       wc.byte_len);
			return -EPROTO;
		}
	}
	return 0;
}

/*
 * Before a disconnect: wait (bounded) for the completions of our own
 * signaled sends, the last message among them, unless the peer left.
 */
void kp_settle(struct kp_conn *c)
{
	struct ib_wc wc;
	u32 wait_ms = c->wait_ms;

	c->wait_ms = min_t(u32, wait_ms, KP_DRAIN_MS);
	while (c->qp && c->sends_out && kp_poll(c, &wc, 1, 0) >= 0)
		;
	c->wait_ms = wait_ms;
}

/*
 * Wait for the next completion of kind @want.  Signaled sends completing on
 * the way are reaped; a message arriving while waiting for something else
 * is kept (c->recv_ready) for the next wait for KP_WR_RECV: the protocols
 * have at most one message in flight towards each side, so the single
 * receive buffer stays intact until this side answers it.  Receives are
 * reposted at once; a peer's write with immediate is queued for wlat,
 * never taken for a message.
 */
int kp_wait_for(struct kp_conn *c, enum kp_wr want, unsigned int spin)
{
	struct ib_wc wc;
	int ret;

	if (want == KP_WR_RECV && c->recv_ready) {
		c->recv_ready = false;
		return 0;
	}
	for (;;) {
		ret = kp_poll(c, &wc, 1, spin);
		if (ret < 0)
			return ret;
		if (wc.wr_id == KP_WR_RECV) {
			if (want != KP_WR_RECV ||
			    wc.opcode == IB_WC_RECV_RDMA_WITH_IMM) {
				ret = kp_recv_keep(c, &wc);
				if (ret)
					return ret;
				continue;
			}
			return kp_recv_done(c, &wc);
		}
		if (wc.wr_id == KP_WR_DATA_RECV) {
			kp_err(c->t, "a data message of %u bytes where a control message belongs",
			       wc.byte_len);
			return -EPROTO;
		}
		if (wc.wr_id == want)
			return 0;
	}
}
