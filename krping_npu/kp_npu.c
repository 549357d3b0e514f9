// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_npu.c - data buffers in NPU memory (mem=npu).
 *
 * The memory comes from npu_peer_mem's provider and is registered the way
 * an RDMA core registers peer memory: through the client's own callbacks,
 * acquire -> get_pages -> dma_map -> get_page_size, the resulting entries
 * trimmed to the buffer and mapped into its fast-reg MR in pages the
 * device supports, so the MR covers exactly the buffer; teardown runs the
 * reverse.  A UD connection's buffer has no MR (a UD QP takes no
 * fast-registration): its SGEs carry the pages' DMA addresses under the
 * PD's local DMA lkey.  The
 * memory is the writer's: pieces of npu_va,npu_len, or in the rig the
 * emulated NPU's allocations on its behalf.  Payload and validation go
 * through a host shadow and a CPU mapping of the page table's physical
 * addresses (memremap), the same for every NPU; the provider has no copy
 * hook.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/log2.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>

#include "krping_npu.h"
#include "../peer_client/npu_peer_mem.h"
#include "../peer_client/npu_sim.h"

/*
 * Take npu_peer_mem for the test, and, without npu_va, the NPU runtime
 * that allocates on the writer's behalf (the emulated NPU's); they stay
 * loaded until kp_npu_put().
 */
int kp_npu_get(struct kp_test *t)
{
	const struct npu_peer_mem_ops *(*get_ops)(void);
	const struct npu_sim_ops *(*get_rt)(void);

	get_ops = symbol_get(npu_peer_mem_get_ops);
	if (!get_ops) {
		kp_err(t, "mem=npu: npu_peer_mem is not loaded");
		return -ENODEV;
	}
	t->npu = get_ops();
	if (t->npu->version != NPU_PEER_MEM_OPS_VERSION) {
		kp_err(t, "mem=npu: npu_peer_mem speaks interface %u, krping_npu %u: load matching builds",
		       t->npu->version, NPU_PEER_MEM_OPS_VERSION);
		kp_npu_put(t);
		return -EPROTO;
	}
	t->npu_next = t->opts.npu_va;
	if (t->opts.npu_va)
		return 0;
	get_rt = symbol_get(npu_sim_get_ops);
	if (!get_rt) {
		kp_err(t, "mem=npu without npu_va: no NPU runtime to allocate from (npu_sim is not loaded); pass the writer's NPU memory as npu_va,npu_len (npu_launch does)");
		kp_npu_put(t);
		return -ENODEV;
	}
	t->npu_rt = get_rt();
	if (t->opts.npu_dev >= t->npu_rt->ndevs) {
		kp_err(t, "npu_dev=%u: the NPU has %u device(s)",
		       t->opts.npu_dev, t->npu_rt->ndevs);
		kp_npu_put(t);
		return -ENODEV;
	}
	return 0;
}

void kp_npu_put(struct kp_test *t)
{
	if (t->npu_rt) {
		t->npu_rt = NULL;
		symbol_put(npu_sim_get_ops);
	}
	if (t->npu) {
		t->npu = NULL;
		symbol_put(npu_peer_mem_get_ops);
	}
}

static const char *kp_npu_buf_name(struct kp_conn *c, struct kp_buf *b)
{
	return b == &c->start ? "start" : "rdma";
}

/* A free callback's fence marker completed (either queue's). */
void kp_npu_fence_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kp_conn *c = cq->cq_context;

	/* the count was zeroed if the QP went meanwhile */
	atomic_dec_if_positive(&c->npu_fence);
	wake_up_all(&c->t->wq);
}

/*
 * Wait (bounded) for the fence's markers.  The core's poll context reaps
 * them, or with cq=direct the writer, unless @reap: the writer is inside
 * kp_npu_buf_free() or tearing the test down (the test is over: its
 * memory was freed), and they are reaped here.  What else completes then
 * is queued for nobody.
 */
static void kp_npu_fence_wait(struct kp_conn *c, bool reap)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(KP_DRAIN_MS);

	if (!c->cq)
		return;
	if (!reap || c->cq->poll_ctx != IB_POLL_DIRECT) {
		wait_event_timeout(c->t->wq, !atomic_read(&c->npu_fence),
				   msecs_to_jiffies(KP_DRAIN_MS));
		return;
	}
	while (atomic_read(&c->npu_fence) && time_before(jiffies, deadline)) {
		int n;

		/* room in the queue nobody reads, for what comes with them */
		spin_lock_irq(&c->wcq_lock);
		c->wcq_head = c->wcq_tail;
		spin_unlock_irq(&c->wcq_lock);
		local_bh_disable();
		n = ib_process_cq_direct(c->cq, min_t(u32, 16, c->wcq_n));
		local_bh_enable();
		if (n <= 0)
			usleep_range(50, 200);
	}
}

/*
 * Move @c's QP to the error state and post a marker on each of its
 * queues.  There every work request completes, flushed, in order, once
 * the device is done with what came before it on that queue, whether it
 * works in a tasklet, a workqueue (rxe from 6.4) or firmware.  A full
 * send queue is retried for room as the flush empties it.  Returns the
 * number of markers posted, a send queue's that needs none counted.
 * Under npu_lock, with a QP.
 */
static int kp_npu_fence_post(struct kp_conn *c)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(KP_DRAIN_MS);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	/* an RDMA WRITE is read as struct ib_rdma_wr: give it one */
	struct ib_rdma_wr swr = {
		.wr = {
			.wr_cqe = &c->cqe[KP_WR_FENCE].cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};
	/* ud: a SEND to the peer, as kp_drain_ud()'s: a UD QP takes no WRITE */
	struct ib_ud_wr uwr = { .wr = swr.wr };
	struct ib_recv_wr rwr = { .wr_cqe = &c->cqe[KP_WR_FENCE].cqe };
	const struct ib_send_wr *sbad;
	const struct ib_recv_wr *rbad;
	bool sq = false, rq = false;

	if (ib_modify_qp(c->qp, &attr, IB_QP_STATE)) {
		kp_err(c->t, "NPU memory freed: the QP does not enter the error state");
		return 0;
	}
	/*
	 * ud: a send queue that never had a peer to send to holds nothing,
	 * and needs no marker (its one would have no address handle)
	 */
	if (c->ud) {
		uwr.wr.opcode = IB_WR_SEND;
		/* the peer's QP and qkey are set before it (kp_ud_learn()) */
		uwr.ah = smp_load_acquire(&c->ah);
		uwr.remote_qpn = c->remote_qpn;
		uwr.remote_qkey = c->remote_qkey;
		sq = !uwr.ah;
	}
	/* counted first: a marker may be reaped as soon as it is posted */
	atomic_add(!sq + 1, &c->npu_fence);
	do {
		if (!sq)
			sq = !ib_post_send(c->qp, c->ud ? &uwr.wr : &swr.wr,
					   &sbad);
		if (!rq)
			rq = !ib_post_recv(c->qp, &rwr, &rbad);
		if (sq && rq)
			break;
		usleep_range(50, 200);
	} while (time_before(jiffies, deadline));
	atomic_sub(!sq + !rq, &c->npu_fence);
	if (!sq || !rq)
		kp_err(c->t, "NPU memory freed: no room for a marker on the %s queue",
		       sq ? "receive" : "send");
	return sq + rq;
}

/*
 * The NPU memory under @data was freed (its owner freed it or died): the
 * peer client calls this as it would a core's invalidate, from the
 * freeing process.  Stop the test's DMA into and out of it before
 * returning: the QP goes to the error state, so that the device takes no
 * further request of it, and the fence's markers complete once the
 * device is done with everything before them.  The writer reaps them (it
 * is woken to kp_npu_check(), ends the test and drains the QP), or, when
 * it is releasing NPU memory itself or tearing the test down and so not
 * polling, this callback does.  An RCU grace period then waits out what
 * rxe runs in softirq or tasklets (to 6.3).  A
 * DMA device's mappings are torn down by npu_peer_mem right after this
 * returns, before the HAL is given the memory back.  The writer's CPU
 * copies are excluded by npu_lock and refused from here on.
 */
static void kp_npu_freed(void *data)
{
	struct kp_buf *b = data;
	struct kp_conn *c = b->conn;
	bool qp, reap, draining;
	int posted = 0;

	mutex_lock(&c->npu_lock);
	if (!c->npu_freed)
		WRITE_ONCE(c->npu_freed, b);
	qp = c->qp;	/* none yet, or destroyed: nothing to stop */
	/* the teardown's drain is under way: it is the fence */
	draining = c->draining;
	if (qp && !draining)
		posted = kp_npu_fence_post(c);
	reap = posted && (c->npu_releasing || c->npu_teardown);
	mutex_unlock(&c->npu_lock);
	wake_up_all(&c->t->wq);
	if (posted)
		kp_npu_fence_wait(c, reap);
	else if (qp && draining &&
		 !wait_event_timeout(c->t->wq, !READ_ONCE(c->qp),
				     msecs_to_jiffies(2 * KP_DRAIN_MS)))
		kp_err(c->t, "NPU memory freed: the QP's drain not done in %u ms",
		       2 * KP_DRAIN_MS);
	if (qp && !draining && (posted != 2 || atomic_read(&c->npu_fence)))
		kp_err(c->t, "NPU memory freed: the device's work on the QP not seen done in %u ms",
		       KP_DRAIN_MS);
	/*
	 * A marker is flushed by whoever completes its queue: rxe's
	 * completer, for the send queue, is a task of its own beside the
	 * requester until they were merged into one send task (6.12 has
	 * rxe_sender), and through 6.3 both run in tasklets or inline in
	 * softirq, which an RCU grace period waits out.
	 */
	if (qp)
		synchronize_rcu();
	kp_err(c->t, "NPU buffer %s at 0x%llx freed under the test: stopped its DMA",
	       kp_npu_buf_name(c, b), b->npu_va);
}

/* -EFAULT once NPU memory of the test was freed under it, else 0. */
int kp_npu_check(struct kp_conn *c)
{
	return READ_ONCE(c->npu_freed) ? -EFAULT : 0;
}

/*
 * @c goes (its QP and buffers are gone): NPU memory freed under it is the
 * test's, for kp_npu_verdict().  The first buffer named stays.
 */
void kp_npu_conn_end(struct kp_conn *c)
{
	struct kp_buf *b = READ_ONCE(c->npu_freed);

	if (b && !c->t->npu_freed)
		c->t->npu_freed = kp_npu_buf_name(c, b);
}

/*
 * The verdict of a test whose NPU memory went under it: -EFAULT whatever
 * the loop saw (a peer's disconnect, a flush, even an end that looked
 * clean), with a result line naming the buffer.  @ret otherwise.  After
 * the test's connections are gone.
 */
int kp_npu_verdict(struct kp_test *t, int ret)
{
	if (!t->npu_freed)
		return ret;
	kp_rec_result(t, "error=%d npu_freed=%s", -EFAULT, t->npu_freed);
	return -EFAULT;
}

/*
 * The writer's NPU memory for a buffer of @size bytes: the next page-aligned
 * piece of npu_va,npu_len, or (the rig) an allocation of the emulated NPU's
 * owned by the writer.
 */
static int kp_npu_va(struct kp_conn *c, struct kp_buf *b, u32 size)
{
	struct kp_test *t = c->t;
	u64 need = ALIGN((u64)size, KP_NPU_VA_ALIGN);
	u64 left;

	if (!t->opts.npu_va) {
		b->npu_va = t->npu_rt->alloc(t->opts.npu_dev, size,
					     current->tgid);
		if (!b->npu_va) {
			kp_err(t, "no %u bytes of NPU memory on npu_dev %u",
			       size, t->opts.npu_dev);
			return -ENOMEM;
		}
		b->npu_owned = true;
		return 0;
	}
	/* qps=N: every connection's pieces come from the test's cursor */
	left = t->opts.npu_va + t->opts.npu_len - t->npu_next;
	if (need > left) {
		kp_err(t, "npu_len=%llu: %llu bytes left at 0x%llx, the %s buffer needs %llu",
		       t->opts.npu_len, left, t->npu_next,
		       kp_npu_buf_name(c, b), need);
		return -ENOSPC;
	}
	b->npu_va = t->npu_next;
	t->npu_next += need;
	t->npu_bufs++;
	return 0;
}

/* Give @b's piece back: the cursor rewinds over the last piece carved. */
static void kp_npu_uncarve(struct kp_test *t, struct kp_buf *b)
{
	if (b->npu_va + ALIGN((u64)b->size, KP_NPU_VA_ALIGN) == t->npu_next)
		t->npu_next = b->npu_va;
	if (!--t->npu_bufs)
		t->npu_next = t->opts.npu_va;	/* all pieces back */
}

/* Map the NPU pages behind @b for the CPU: memremap, as GDRCopy maps a BAR. */
static int kp_npu_map(struct kp_conn *c, struct kp_buf *b)
{
	u64 off = b->npu_va & (b->npu_page - 1);
	unsigned int i, n = DIV_ROUND_UP(off + b->size, b->npu_page);
	int ret;

	b->npu_cpu = kvcalloc(n, sizeof(*b->npu_cpu), GFP_KERNEL);
	if (!b->npu_cpu)
		return -ENOMEM;
	b->npu_ncpu = n;
	for (i = 0; i < n; i++) {
		u64 pa;

		ret = c->t->npu->page_pa(b->npu_ctx, i, &pa);
		if (ret) {
			kp_err(c->t, "NPU page %u of %u: no address (%d)", i, n,
			       ret);
			return ret;
		}
		/* RAM as it is mapped already; a BAR write-combined */
		b->npu_cpu[i] = memremap(pa, b->npu_page,
					 npu_pa_is_ram(pa, b->npu_page) ?
					 MEMREMAP_WB : MEMREMAP_WC);
		if (!b->npu_cpu[i]) {
			kp_err(c->t, "memremap of NPU page %u at %pa failed", i,
			       &pa);
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * A virt-DMA device is given NPU memory by CPU address.  RAM is in the
 * direct map, with a struct page behind every address.  A BAR is a
 * memremap() of it, without: rxe copies through such an address where the
 * core leaves the addresses alone; siw, and every virt-DMA device where
 * the core turns addresses into struct pages (KP_NPU_BAR_VIRT_DMA), would
 * take a wrong page for it (on x86 it happens to map back; on arm64 it
 * is another page of RAM), so there it is refused.
 */
static int kp_npu_virt_ok(struct kp_conn *c, struct kp_buf *b)
{
	struct ib_device *dev = kp_dev(c);
	bool rxe = false;
	u64 pa;
	int ret;

	if (dev->dma_device)
		return 0;
	ret = c->t->npu->page_pa(b->npu_ctx, 0, &pa);
	if (ret || npu_pa_is_ram(pa, b->npu_page))
		return ret;
#ifdef KP_HAVE_IB_VIRT_DMA_TO_PAGE
	kp_err(c->t, "%s is a virt-DMA device and this kernel's RDMA core turns its addresses into struct pages (ib_virt_dma_to_page): NPU memory behind a BAR has none",
	       dev_name(&dev->dev));
	return -EOPNOTSUPP;
#endif
#ifdef KP_HAVE_RDMA_DRIVER_RXE
	rxe = dev->ops.driver_id == RDMA_DRIVER_RXE;
#endif
	if (rxe)
		return 0;
	/* without the driver id no virt-DMA device is known to be rxe */
	kp_err(c->t, "%s is a virt-DMA device other than rxe: it cannot reach NPU memory behind a BAR",
	       dev_name(&dev->dev));
	return -EOPNOTSUPP;
}

static void kp_npu_unmap(struct kp_buf *b)
{
	unsigned int i;

	for (i = 0; b->npu_cpu && i < b->npu_ncpu; i++)
		if (b->npu_cpu[i])
			memunmap(b->npu_cpu[i]);
	kvfree(b->npu_cpu);
}

/*
 * rw: the pages behind @b for rdma_rw, which maps struct pages of system
 * memory as the DMA API does: into @sgl (@max entries), an entry a piece
 * of an NPU page within one kernel page, as rdma_rw's MR path wants them.
 * NPU memory behind a BAR is not system memory (a real Ascend host's
 * HBM): refused.  Returns the entries used, or a negative errno.
 */
int kp_npu_rw_sgl(struct kp_conn *c, struct kp_buf *b, struct scatterlist *sgl,
		  u32 max)
{
	u64 off = b->npu_va & (b->npu_page - 1), left = b->size, pa;
	u32 i, n = 0;
	int ret;

	sg_init_table(sgl, max);
	for (i = 0; left; i++) {
		u64 len = min(b->npu_page - off, left);

		ret = c->t->npu->page_pa(b->npu_ctx, i, &pa);
		if (ret) {
			kp_err(c->t, "NPU page %u: no address (%d)", i, ret);
			return ret;
		}
		pa += off;
		if (!npu_pa_is_ram(pa, len) || !pfn_valid(PHYS_PFN(pa))) {
			kp_err(c->t, "rw: NPU memory at %pa is not system memory: rdma_rw maps struct pages, which it has none of",
			       &pa);
			return -EOPNOTSUPP;
		}
		left -= len;
		off = 0;
		while (len) {
			u32 l = min_t(u64, len, PAGE_SIZE - offset_in_page(pa));

			if (n == max)
				return -EINVAL;
			sg_set_page(&sgl[n++], pfn_to_page(PHYS_PFN(pa)), l,
				    offset_in_page(pa));
			pa += l;
			len -= l;
		}
	}
	sg_mark_end(&sgl[n - 1]);
	return n;
}

/*
 * ud: the SGEs, under @lkey, of @len bytes of @b from @off, one for each
 * of its DMA-mapped pieces they touch (b->npu_mr_sgl), at most
 * KP_UD_NPU_SGE (kp_npu_buf_alloc() checks that a message fits them).
 * Returns how many.
 */
int kp_npu_sges(struct kp_buf *b, u32 off, u32 len, struct ib_sge *sge,
		u32 lkey)
{
	struct scatterlist *sg;
	int i, n = 0;

	for_each_sg(b->npu_mr_sgl, sg, b->npu_nents, i) {
		u32 l = sg_dma_len(sg);

		if (off >= l) {
			off -= l;
			continue;
		}
		if (!len || WARN_ON_ONCE(n == KP_UD_NPU_SGE))
			break;
		l = min(l - off, len);
		sge[n++] = (struct ib_sge) {
			.addr = sg_dma_address(sg) + off,
			.length = l,
			.lkey = lkey,
		};
		len -= l;
		off = 0;
	}
	return n;
}

/*
 * The MR page size for NPU pages of @npu_page bytes: the largest size the
 * device supports that divides them; each NPU page then spans whole MR
 * pages.  0 when the device supports none of them.
 */
static u32 kp_npu_mr_page(struct ib_device *dev, u64 npu_page)
{
	u64 caps = dev->attrs.page_size_cap & (npu_page | (npu_page - 1));

	return caps ? 1u << __fls(caps) : 0;
}

/*
 * Point b->npu_mr_sgl at a copy of the mapped entries trimmed to the
 * buffer: the first starts at the buffer, the last ends with it, so the
 * MR covers exactly [npu_va, npu_va + size).
 */
static int kp_npu_trim(struct kp_buf *b, int nmap)
{
	u64 off = b->npu_va & (b->npu_page - 1);
	u64 end = off + b->size;	/* from the first entry's start */
	struct scatterlist *sg, *src;
	int i, n = DIV_ROUND_UP(end, b->npu_page);

	if (n > nmap)
		return -EINVAL;
	b->npu_mr_sgl = kvmalloc_array(n, sizeof(*sg), GFP_KERNEL);
	if (!b->npu_mr_sgl)
		return -ENOMEM;
	sg_init_table(b->npu_mr_sgl, n);
	src = b->npu_sgt.sgl;
	for_each_sg(b->npu_mr_sgl, sg, n, i) {
		u64 from = i ? 0 : off;
		u64 to = i == n - 1 ? end - (u64)i * b->npu_page : b->npu_page;

		sg_dma_address(sg) = sg_dma_address(src) + from;
		sg_dma_len(sg) = to - from;
		src = sg_next(src);
	}
	b->npu_nents = n;
	return 0;
}

int kp_npu_buf_alloc(struct kp_conn *c, struct kp_buf *b, u32 size)
{
	const struct peer_memory_client_mofed *pc = c->t->npu->client;
	struct ib_device *dev = kp_dev(c);
	int nmap = 0, n, ret;
	u32 npages, slots;

	b->size = size;
	b->conn = c;
	b->shadow = kvzalloc(size, GFP_KERNEL);
	if (!b->shadow)
		return -ENOMEM;
	/* the writer's memory, registered in its context */
	ret = kp_npu_va(c, b, size);
	if (ret)
		return ret;
	if (c->t->npu->acquire(b->npu_va, size, kp_npu_freed, b,
			       &b->npu_ctx) != 1) {
		kp_err(c->t, "npu_peer_mem does not claim 0x%llx", b->npu_va);
		b->npu_ctx = NULL;
		return -EFAULT;
	}
	ret = pc->get_pages(b->npu_va, size, 1, 0, &b->npu_sgt, b->npu_ctx, 0);
	if (ret) {
		kp_err(c->t, "get_pages: %d", ret);
		return ret;
	}
	b->npu_pinned = true;
	ret = pc->dma_map(&b->npu_sgt, b->npu_ctx, dev->dma_device, 0, &nmap);
	if (ret) {
		kp_err(c->t, "dma_map: %d", ret);
		return ret;
	}
	b->npu_mapped = true;
	b->npu_page = pc->get_page_size(b->npu_ctx);
	if (!is_power_of_2(b->npu_page) || !nmap) {
		kp_err(c->t, "NPU page size %llu, %d entries", b->npu_page, nmap);
		return -EINVAL;
	}
	ret = kp_npu_map(c, b);
	if (ret)
		return ret;
	ret = kp_npu_virt_ok(c, b);
	if (ret)
		return ret;
	ret = kp_npu_trim(b, nmap);
	if (ret) {
		kp_err(c->t, "%d entries do not cover %u bytes", nmap, size);
		return ret;
	}
	/*
	 * ud: no MR, as a UD QP takes no fast-registration: the device
	 * reaches the pages by their DMA addresses under the PD's local DMA
	 * lkey, as p2pdma's users reach a BAR, an SGE a page (kp_npu_sges()).
	 * A message and its header fit the path MTU and 40 bytes, so they
	 * touch three pages of 4 KiB at most, wherever they start.
	 */
	if (c->ud) {
		u32 most = DIV_ROUND_UP_ULL(c->recv_hdr + c->t->size - 1,
					    b->npu_page) + 1;

		if (most > KP_UD_NPU_SGE) {
			kp_err(c->t, "ud: a message of %u bytes and its header may touch %u NPU pages of %llu, more SGEs than the %u a UD work request is given",
			       c->t->size, most, b->npu_page, KP_UD_NPU_SGE);
			return -EINVAL;
		}
		return 0;
	}
	b->page_size = kp_npu_mr_page(dev, b->npu_page);
	if (!b->page_size) {
		kp_err(c->t, "%s supports no MR page size dividing NPU pages of %llu bytes",
		       dev_name(&dev->dev), b->npu_page);
		return -EOPNOTSUPP;
	}
	npages = DIV_ROUND_UP((b->npu_va & (b->page_size - 1)) + size,
			      b->page_size);
	if (npages > dev->attrs.max_fast_reg_page_list_len) {
		kp_err(c->t, "size %u needs %u MR pages, device allows %u", size,
		       npages, dev->attrs.max_fast_reg_page_list_len);
		return -EINVAL;
	}
	/*
	 * One page slot more where the device allows it: rxe before 6.3
	 * reads its page table one entry past the last page when a copy
	 * ends on the last page of a full map of 256 (rxe_mr_copy(); KASAN:
	 * slab-out-of-bounds, a 1 MiB buffer in 4 KiB HAL pages).  The
	 * spare slot gives that map a successor; the host path has one too.
	 * At the device's limit (rxe: 512 pages) there is none to give, and
	 * rxe's read past its table (a value it never uses) remains.
	 */
	slots = min(npages + 1, dev->attrs.max_fast_reg_page_list_len);
	b->mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, slots);
	if (IS_ERR(b->mr)) {
		ret = PTR_ERR(b->mr);
		b->mr = NULL;
		kp_err(c->t, "ib_alloc_mr(%u pages): %d", slots, ret);
		return ret;
	}
	n = ib_map_mr_sg(b->mr, b->npu_mr_sgl, b->npu_nents, NULL,
			 b->page_size);
	if (n != b->npu_nents || b->mr->length != size) {
		kp_err(c->t, "ib_map_mr_sg: %d of %d entries, %llu of %u bytes", n,
		       b->npu_nents, b->mr->length, size);
		return n < 0 ? n : -EINVAL;
	}
	b->dma = b->mr->iova;
	b->iova = b->dma;
	if (c->t->opts.verbose)
		kp_info(c->t, "NPU buffer 0x%llx: MR of %llu bytes in %u pages of %u (NPU pages of %llu)",
			b->npu_va, b->mr->length, npages, b->page_size,
			b->npu_page);
	return 0;
}

void kp_npu_buf_free(struct kp_conn *c, struct kp_buf *b)
{
	const struct peer_memory_client_mofed *pc = c->t->npu->client;

	/*
	 * From here until the end the writer does not reap the CQ: a free
	 * callback reaps its own fence (put_pages below may wait for it),
	 * and one that posted before is reaped here.
	 */
	mutex_lock(&c->npu_lock);
	c->npu_releasing = true;
	mutex_unlock(&c->npu_lock);
	kp_npu_fence_wait(c, true);
	if (b->mr)
		ib_dereg_mr(b->mr);
	if (b->npu_mapped)
		pc->dma_unmap(&b->npu_sgt, b->npu_ctx, kp_dev(c)->dma_device);
	if (b->npu_pinned)
		pc->put_pages(&b->npu_sgt, b->npu_ctx);
	kp_npu_unmap(b);
	if (b->npu_ctx)
		pc->release(b->npu_ctx);
	if (b->npu_owned)
		c->t->npu_rt->free(b->npu_va);
	else if (b->npu_va)
		kp_npu_uncarve(c->t, b);
	kvfree(b->npu_mr_sgl);
	kvfree(b->shadow);
	memset(b, 0, sizeof(*b));
	mutex_lock(&c->npu_lock);
	c->npu_releasing = false;
	mutex_unlock(&c->npu_lock);
}

/*
 * Copy between @b's shadow and its NPU memory, page by page; not once the
 * memory was freed, and never while its free callback runs.
 */
static int kp_npu_copy(struct kp_conn *c, struct kp_buf *b, u32 off,
		       u32 len, bool to_npu)
{
	u64 pos = (b->npu_va & (b->npu_page - 1)) + off;
	u8 *host = b->shadow + off;

	if (len > b->size || off > b->size - len)
		return -EINVAL;
	mutex_lock(&c->npu_lock);
	if (c->npu_freed) {
		mutex_unlock(&c->npu_lock);
		return -EFAULT;
	}
	while (len) {
		u32 in = pos & (b->npu_page - 1);
		u32 n = min_t(u64, len, b->npu_page - in);
		u8 *npu = (u8 *)b->npu_cpu[pos / b->npu_page] + in;

		if (to_npu)
			memcpy(npu, host, n);
		else
			memcpy(host, npu, n);
		host += n;
		pos += n;
		len -= n;
	}
	mutex_unlock(&c->npu_lock);
	return 0;
}

int kp_npu_copy_to(struct kp_conn *c, struct kp_buf *b, u32 off, u32 len)
{
	return kp_npu_copy(c, b, off, len, true);
}

int kp_npu_copy_from(struct kp_conn *c, struct kp_buf *b, u32 off, u32 len)
{
	return kp_npu_copy(c, b, off, len, false);
}
