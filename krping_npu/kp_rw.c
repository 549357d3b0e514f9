// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_rw.c - rw: the data READs and WRITEs of rlat and bw through the core's
 * rdma_rw API, as NVMe-oF's target moves its data.  Each message has a
 * context of its own, from rdma_rw_ctx_init() (which maps the buffer's
 * pages and chooses SGEs, or an MR from the QP's pool where the device
 * needs one: iWARP, or ib_core's force_mr) to rdma_rw_ctx_destroy() once
 * its completion, or a later one, is reaped.  A stream's message i uses
 * context i mod nrw; the stream's window never laps it.  Its work
 * requests are posted as nvmet posts a chain (rdma_rw_ctx_wrs()), so
 * that a stream signals one message in so many, as without rw.
 */
#include <linux/slab.h>
#include <linux/scatterlist.h>
#include <linux/log2.h>
#include <linux/bottom_half.h>
#include <rdma/rw.h>

#include "krping_npu.h"
#include "kp_trace.h"

static u32 kp_rw_port(struct kp_conn *c)
{
	return (c->child_id ?: c->cm_id)->port_num;
}

/*
 * The pages of this side's buffer as each context maps them: an entry a
 * page at most, as the block layer gives NVMe-oF's target, since
 * rdma_rw's MR path puts an entry in one MR page (host memory is
 * contiguous, but an entry spanning more would not fit a pool MR).
 */
static int kp_rw_pages(struct kp_conn *c, struct scatterlist *sgl, u32 max)
{
	struct kp_buf *b = &c->rdma;
	u32 i, n = DIV_ROUND_UP(b->size, PAGE_SIZE);

	if (c->t->opts.mem == KP_MEM_NPU)
		return kp_npu_rw_sgl(c, b, sgl, max);
	if (n > max)
		return -EINVAL;
	sg_init_table(sgl, n);
	for (i = 0; i < n; i++)
		sg_set_page(&sgl[i], virt_to_page(b->vaddr + i * PAGE_SIZE),
			    min_t(u32, PAGE_SIZE, b->size - i * PAGE_SIZE), 0);
	return n;
}

/*
 * Contexts for a window of @depth messages on c->rdma, and the pages
 * they map; kp_rw_free() undoes it, here or after the drain.
 */
int kp_rw_alloc(struct kp_conn *c, u32 depth)
{
	struct kp_buf *b = &c->rdma;
	u32 i, max = DIV_ROUND_UP(b->size, PAGE_SIZE);
	int n;

	/* host pages, or each NPU page's piece cut at the kernel's pages */
	if (c->t->opts.mem == KP_MEM_NPU)
		max += DIV_ROUND_UP((b->npu_va & (b->npu_page - 1)) + b->size,
				    b->npu_page);
	c->rw_sgl = kvcalloc(max, sizeof(*c->rw_sgl), GFP_KERNEL);
	if (!c->rw_sgl)
		return -ENOMEM;
	n = kp_rw_pages(c, c->rw_sgl, max);
	if (n < 0)
		return n;
	c->rw_nents = n;
	/*
	 * The READs or WRITEs of a message on the SGE path (the MR path's
	 * are reserved by the core, kp_setup_verbs()); the stream's window
	 * is cut to what the send queue holds of them.
	 */
	c->rw_wrs = DIV_ROUND_UP(n, max(min(c->qp->max_read_sge,
					    c->qp->max_write_sge), 1u));
	if (c->rw_wrs > c->sq_depth) {
		kp_err(c->t, "rw: a message of %u bytes takes %u work requests, the send queue %u",
		       b->size, c->rw_wrs, c->sq_depth);
		return -EMSGSIZE;
	}
	c->nrw = roundup_pow_of_two(max(depth, 1u));
	c->rw = kvcalloc(c->nrw, sizeof(*c->rw), GFP_KERNEL);
	if (!c->rw)
		return -ENOMEM;
	for (i = 0; i < c->nrw; i++) {
		c->rw[i].sgl = kvcalloc(n, sizeof(*c->rw[i].sgl), GFP_KERNEL);
		if (!c->rw[i].sgl)
			return -ENOMEM;
	}
	return 0;
}

/* Message @idx's context is done with: unmapped, its MR back in the pool. */
void kp_rw_done(struct kp_conn *c, u64 idx)
{
	struct kp_rw *rw = &c->rw[idx & (c->nrw - 1)];

	if (!rw->live)
		return;
	rdma_rw_ctx_destroy(&rw->ctx, c->qp, kp_rw_port(c), rw->sgl,
			    rw->nents, rw->dir);
	rw->live = false;
}

/*
 * Every context still live, then the rest: after the QP is drained (or
 * once a size's stream is reaped), before the QP goes with its MR pool.
 */
void kp_rw_free(struct kp_conn *c)
{
	u32 i;

	for (i = 0; c->rw && i < c->nrw; i++) {
		if (c->qp)
			kp_rw_done(c, i);
		kvfree(c->rw[i].sgl);
	}
	kvfree(c->rw);
	c->rw = NULL;
	c->nrw = 0;
	kvfree(c->rw_sgl);
	c->rw_sgl = NULL;
}

/*
 * Message @idx: @op of the buffer's first @len bytes with the peer's,
 * completing through @cqe; unsignaled unless @signal (a later completion
 * retires it), as our own posts are.  rdma_rw signals a context's last
 * work request, so its chain is taken (rdma_rw_ctx_wrs()) and posted
 * here.  A context a post failed on stays live for kp_rw_free(): some
 * of its work requests may be on the queue.
 */
int kp_rw_post(struct kp_conn *c, enum ib_wr_opcode op, u64 idx, u32 len,
	       struct ib_cqe *cqe, bool signal, u64 wr_id)
{
	struct kp_rw *rw = &c->rw[idx & (c->nrw - 1)];
	const struct ib_send_wr *bad;
	struct ib_send_wr *first, *last;
	u32 i, left = len, n = 0;
	int ret;

	if (rw->live) {
		kp_err(c->t, "rw: message %llu's context is still in use", idx);
		return -EPROTO;
	}
	/* the buffer's pages, cut at @len */
	sg_init_table(rw->sgl, c->rw_nents);
	for (i = 0; i < c->rw_nents && left; i++, n++) {
		u32 l = min(c->rw_sgl[i].length, left);

		sg_set_page(&rw->sgl[i], sg_page(&c->rw_sgl[i]), l,
			    c->rw_sgl[i].offset);
		left -= l;
	}
	sg_mark_end(&rw->sgl[n - 1]);
	rw->dir = op == IB_WR_RDMA_READ ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	ret = rdma_rw_ctx_init(&rw->ctx, c->qp, kp_rw_port(c), rw->sgl, n, 0,
			       c->remote_addr, c->remote_rkey, rw->dir);
	if (ret < 0) {
		kp_err(c->t, "rdma_rw_ctx_init(%u bytes, %u pages): %d", len, n,
		       ret);
		return ret;
	}
	rw->nents = n;
	rw->live = true;
	first = rdma_rw_ctx_wrs(&rw->ctx, c->qp, kp_rw_port(c), cqe, NULL);
	for (last = first; last->next; last = last->next)
		;
	if (!signal)
		last->send_flags &= ~IB_SEND_SIGNALED;
	trace_kp_post_send(c->t->rec->id, c->idx, c->qp->qp_num, wr_id, op,
			   len, signal ? IB_SEND_SIGNALED : 0, n);
	/* bottom halves off, so a software device's tasklet runs at once */
	bad = first;
	local_bh_disable();
	ret = ib_post_send(c->qp, first, &bad);
	local_bh_enable();
	if (ret)
		kp_err(c->t, "rw: ib_post_send(opcode %d): %d", bad->opcode, ret);
	return ret;
}
