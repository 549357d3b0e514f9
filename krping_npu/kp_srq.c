// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_srq.c - srq with qps=N on the server: one shared receive queue for
 * every QP of the test (struct kp_ssrq), as perftest -q N --use_srq's.
 *
 * A connection's control protocol cannot count on its own receives being
 * FIFO here: any connection's message takes the SRQ's head receive.  So
 * every receive takes any message (a slot of its own, then the sink), a
 * completion is its receiving connection's (the QP's CQ), and whether it
 * is data or control follows from where that connection's protocol is
 * (c->srq_data); no skips are asked for, and receives left over by a size
 * stay posted for the next.
 */
#include <linux/slab.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/dma-mapping.h>

#include "krping_npu.h"
#include "kp_trace.h"

static void kp_ssrq_event(struct ib_event *ev, void *ctx)
{
	struct kp_conn *c = ctx;

	pr_err(KP_NAME " %u: shared SRQ event %s\n", c->t->rec->id,
	       ib_event_msg(ev->event));
}

/*
 * Connection 0 of a server's test of @nconns (its PD is theirs): the
 * slots, the sink and the SRQ, as deep as rx_depth's data receives and
 * each connection's control receives; a slot's completion goes to @done,
 * the poster's (kp_verbs.c, which calls down here).  kp_ssrq_destroy()
 * undoes it.
 */
int kp_ssrq_create(struct kp_conn *c, struct ib_device *dev, u32 nconns,
		   void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct kp_test *t = c->t;
	struct kp_ssrq *s = &t->ssrq;
	struct ib_srq_init_attr attr = {
		.event_handler = kp_ssrq_event,
		.srq_context = c,
		.srq_type = IB_SRQT_BASIC,
	};
	u32 i;

	s->data_max = t->opts.rx_depth ?: KP_DATA_RQ;
	if (s->data_max < nconns) {
		kp_err(t, "srq: rx_depth=%u data receives in the SRQ that %u connections share: fewer than one each",
		       s->data_max, nconns);
		return -EINVAL;
	}
	s->nslots = s->data_max + nconns * KP_RQ_DEPTH;
	if (dev->attrs.max_srq <= 0 || dev->attrs.max_srq_wr < (int)s->nslots ||
	    dev->attrs.max_srq_sge < 2) {
		kp_err(t, "srq: %s has %d SRQs of %d work requests, %d SGEs; we need one of %u, 2 for %u connections",
		       dev_name(&dev->dev), dev->attrs.max_srq,
		       dev->attrs.max_srq_wr, dev->attrs.max_srq_sge, s->nslots,
		       nconns);
		return -EOPNOTSUPP;
	}
	spin_lock_init(&s->lock);
	/* a slot the device writes shares no cache line with another */
	s->stride = ALIGN(KP_CTRL_SIZE, dma_get_cache_alignment());
	s->cqe = kvcalloc(s->nslots, sizeof(*s->cqe), GFP_KERNEL);
	s->free = kvcalloc(s->nslots, sizeof(*s->free), GFP_KERNEL);
	if (!s->cqe || !s->free) {
		kp_err(t, "srq: no memory for %u slots", s->nslots);
		return -ENOMEM;
	}
	s->ctrl = kzalloc(s->nslots * s->stride, GFP_KERNEL | __GFP_NOWARN);
	if (!s->ctrl) {
		kp_err(t, "srq: no memory for %u slots of %u bytes", s->nslots,
		       s->stride);
		return -ENOMEM;
	}
	s->ctrl_dma = ib_dma_map_single(dev, s->ctrl, s->nslots * s->stride,
					DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, s->ctrl_dma)) {
		kfree(s->ctrl);
		s->ctrl = NULL;
		return -ENOMEM;
	}
	/* the largest message there can be, past its first KP_CTRL_SIZE */
	s->sink.size = KP_MAX_SIZE;
	s->sink.span = KP_MAX_SIZE;
	s->sink.vaddr = alloc_pages_exact(KP_MAX_SIZE,
					  GFP_KERNEL | __GFP_NOWARN);
	if (!s->sink.vaddr) {
		kp_err(t, "srq: no %u contiguous bytes for the shared sink",
		       KP_MAX_SIZE);
		return -ENOMEM;
	}
	s->sink.dma = ib_dma_map_single(dev, s->sink.vaddr, KP_MAX_SIZE,
					DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, s->sink.dma)) {
		free_pages_exact(s->sink.vaddr, KP_MAX_SIZE);
		s->sink.vaddr = NULL;
		return -ENOMEM;
	}
	s->sink.mapped = true;
	for (i = 0; i < s->nslots; i++) {
		s->cqe[i].cqe.done = done;
		s->cqe[i].wr_id = KP_WR_SRECV | ((u64)i << KP_WR_IDX_SHIFT);
		s->free[i] = s->nslots - 1 - i;
	}
	s->nfree = s->nslots;
	s->data = 0;
	s->spare = 0;
	s->posted = 0;
	attr.attr.max_wr = s->nslots;
	attr.attr.max_sge = 2;
	s->srq = ib_create_srq(c->pd, &attr);
	if (IS_ERR(s->srq)) {
		int ret = PTR_ERR(s->srq);

		s->srq = NULL;
		kp_err(t, "ib_create_srq(%u): %d", s->nslots, ret);
		return ret;
	}
	return 0;
}

/* Connection 0's, once every QP on the SRQ is destroyed: all of it. */
void kp_ssrq_destroy(struct kp_conn *c)
{
	struct kp_test *t = c->t;
	struct kp_ssrq *s = &t->ssrq;
	struct ib_device *dev = kp_dev(c);

	if (s->srq) {
		kp_info(t, "one SRQ for %u connections: %llu receives posted through it, %u slots, none to a QP",
			t->nconns, s->posted, s->nslots);
		ib_destroy_srq(s->srq);
	}
	if (s->sink.mapped)
		ib_dma_unmap_single(dev, s->sink.dma, KP_MAX_SIZE,
				    DMA_FROM_DEVICE);
	if (s->sink.vaddr)
		free_pages_exact(s->sink.vaddr, KP_MAX_SIZE);
	if (s->ctrl) {
		ib_dma_unmap_single(dev, s->ctrl_dma, s->nslots * s->stride,
				    DMA_FROM_DEVICE);
		kfree(s->ctrl);
	}
	kvfree(s->free);
	kvfree(s->cqe);
	memset(s, 0, sizeof(*s));
}

/*
 * @n receives from the free slots, in chains of @chain, traced as @kind
 * (what this connection posts them for; any message may take them).
 * *@done: how many were posted, all of them unless an error is returned.
 */
static int kp_ssrq_post(struct kp_conn *c, u32 n, u32 chain, enum kp_wr kind,
			u32 *done)
{
	struct kp_ssrq *s = &c->t->ssrq;
	struct ib_device *dev = kp_dev(c);
	struct ib_recv_wr *wr = c->rq_wr;
	struct ib_sge *sge = c->rq_sge;
	const struct ib_recv_wr *bad;
	u32 i, k, slot, posted;
	int ret;

	*done = 0;
	while (*done < n) {
		k = min(n - *done, chain);
		spin_lock(&s->lock);
		if (s->nfree < k) {
			spin_unlock(&s->lock);
			kp_err(c->t, "srq: %u receives to post, %u slots free of %u",
			       k, s->nfree, s->nslots);
			return -EPROTO;
		}
		for (i = 0; i < k; i++) {
			slot = s->free[--s->nfree];
			sge[2 * i] = (struct ib_sge) {
				.addr = s->ctrl_dma + (u64)slot * s->stride,
				.length = KP_CTRL_SIZE,
				.lkey = c->pd->local_dma_lkey,
			};
			sge[2 * i + 1] = (struct ib_sge) {
				.addr = s->sink.dma,
				.length = KP_MAX_SIZE,
				.lkey = c->pd->local_dma_lkey,
			};
			wr[i] = (struct ib_recv_wr) {
				.wr_cqe = &s->cqe[slot].cqe,
				.sg_list = &sge[2 * i],
				.num_sge = 2,
				.next = i + 1 < k ? &wr[i + 1] : NULL,
			};
		}
		spin_unlock(&s->lock);
		for (i = 0; i < k; i++) {
			ib_dma_sync_single_for_device(dev, sge[2 * i].addr,
						      KP_CTRL_SIZE,
						      DMA_FROM_DEVICE);
			trace_kp_post_recv(c->t->rec->id, c->idx,
					   c->qp->qp_num, kind, -1,
					   kind == KP_WR_RECV ? KP_CTRL_SIZE :
					   c->t->size, IB_SEND_SIGNALED, 2);
		}
		bad = wr;	/* a driver may fail a post without setting it */
		ret = ib_post_srq_recv(s->srq, wr, &bad);
		/* those from the bad one on were not posted: free again */
		posted = ret ? bad - wr : k;
		spin_lock(&s->lock);
		for (i = posted; i < k; i++)
			s->free[s->nfree++] = container_of(wr[i].wr_cqe,
							   struct kp_cqe, cqe) -
					      s->cqe;
		s->posted += posted;
		spin_unlock(&s->lock);
		*done += posted;
		if (ret) {
			kp_err(c->t, "ib_post_srq_recv: %d", ret);
			return ret;
		}
	}
	return 0;
}

/* A control receive (kp_post_recv()). */
int kp_ssrq_post_ctrl(struct kp_conn *c)
{
	u32 done;

	return kp_ssrq_post(c, 1, 1, KP_WR_RECV, &done);
}

/*
 * @n data receives (kp_post_data_recv()): first those a size by duration
 * left posted, then new ones, in chains of recv_post_list= (else of
 * KP_RECV_BATCH), never more than rx_depth in the SRQ.
 */
int kp_ssrq_post_data(struct kp_conn *c, u32 n)
{
	struct kp_ssrq *s = &c->t->ssrq;
	u32 old, done, chain = c->rq_list ?: KP_RECV_BATCH;
	int ret;

	spin_lock(&s->lock);
	old = min(n, s->spare);
	s->spare -= old;
	if (s->data + (int)(n - old) > (int)s->data_max) {
		int data = s->data;

		s->spare += old;
		spin_unlock(&s->lock);
		kp_err(c->t, "srq: %d data receives posted, room for %u", data,
		       s->data_max);
		return -EPROTO;
	}
	s->data += n - old;
	spin_unlock(&s->lock);
	c->rq_posted += old;
	if (n == old)
		return 0;
	ret = kp_ssrq_post(c, n - old, chain, KP_WR_DATA_RECV, &done);
	if (ret) {
		/* those not posted are not in the SRQ */
		spin_lock(&s->lock);
		s->data -= n - old - done;
		spin_unlock(&s->lock);
	}
	c->rq_posted += done;
	c->rq_chains += DIV_ROUND_UP(done, chain);
	return ret;
}

/*
 * A receive of the SRQ completed on @c: a data message of its stream
 * while one is due (from our ACK until the one marked last), else a
 * control message, copied where its readers look (c->recv_msg).  Its
 * slot is free again at once: nobody reads the sink, and the copy is
 * made.  @wc is left as its kind's (KP_WR_DATA_RECV, KP_WR_RECV).
 */
int kp_ssrq_take(struct kp_conn *c, struct ib_wc *wc)
{
	struct kp_ssrq *s = &c->t->ssrq;
	u32 slot = wc->wr_id >> KP_WR_IDX_SHIFT;
	bool data = c->srq_data;
	u64 dma = s->ctrl_dma + (u64)slot * s->stride;
	int ret = 0;

	if (slot >= s->nslots) {
		kp_err(c->t, "srq: completion of slot %u of %u", slot,
		       s->nslots);
		return -EPROTO;
	}
	if (wc->status != IB_WC_SUCCESS) {
		wc->wr_id = KP_WR_SRECV;
	} else if (data) {
		/* bw,send and bw,imm mark their last; duplex's too */
		if ((wc->wc_flags & IB_WC_WITH_IMM) &&
		    (be32_to_cpu(wc->ex.imm_data) & KP_IMM_LAST))
			c->srq_data = false;
		wc->wr_id = KP_WR_DATA_RECV;
	} else if (wc->opcode == IB_WC_RECV && wc->byte_len > KP_CTRL_SIZE) {
		kp_err(c->t, "srq: a message of %u bytes where a control message belongs",
		       wc->byte_len);
		ret = -EPROTO;
	} else {
		ib_dma_sync_single_for_cpu(kp_dev(c), dma, KP_CTRL_SIZE,
					   DMA_FROM_DEVICE);
		if (wc->opcode == IB_WC_RECV)
			memcpy(c->recv_msg, s->ctrl + (u64)slot * s->stride,
			       wc->byte_len);
		wc->wr_id = KP_WR_RECV;
	}
	spin_lock(&s->lock);
	s->free[s->nfree++] = slot;
	if (data)
		s->data--;
	spin_unlock(&s->lock);
	return ret;
}

/*
 * The server's size has ended on every connection: the data receives
 * still posted (a stream by duration leaves some) serve the next size
 * first, as they would take any message.
 */
void kp_ssrq_size_end(struct kp_test *t)
{
	struct kp_ssrq *s = &t->ssrq;

	if (!s->srq)
		return;
	spin_lock(&s->lock);
	s->spare = max(s->data, 0);
	spin_unlock(&s->lock);
}
