// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_npu.c - data buffers in NPU memory (mem=npu).
 *
 * The memory comes from npu_peer_mem's provider and is registered the way
 * an RDMA core registers peer memory: through the client's own callbacks,
 * acquire -> get_pages -> dma_map -> get_page_size, the resulting sg_table
 * mapped into the buffer's fast-reg MR; teardown runs the reverse.  The
 * CPU never touches NPU memory: a host shadow and the provider's copies
 * serve payload generation and validation.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/log2.h>

#include "krping_npu.h"
#include "../peer_client/npu_peer_mem.h"

/* Take npu_peer_mem for the test; it stays loaded until kp_npu_put(). */
int kp_npu_get(struct kp_cb *cb)
{
	const struct npu_peer_mem_ops *(*get_ops)(void);

	get_ops = symbol_get(npu_peer_mem_get_ops);
	if (!get_ops) {
		kp_err(cb, "mem=npu: npu_peer_mem is not loaded");
		return -ENODEV;
	}
	cb->npu = get_ops();
	if (!cb->npu) {
		symbol_put(npu_peer_mem_get_ops);
		kp_err(cb, "mem=npu: npu_peer_mem has no NPU memory to allocate from");
		return -ENODEV;
	}
	if (cb->opts.npu_dev >= cb->npu->ndevs) {
		kp_err(cb, "npu_dev=%u: npu_peer_mem has %u device(s)",
		       cb->opts.npu_dev, cb->npu->ndevs);
		kp_npu_put(cb);
		return -ENODEV;
	}
	return 0;
}

void kp_npu_put(struct kp_cb *cb)
{
	if (!cb->npu)
		return;
	cb->npu = NULL;
	symbol_put(npu_peer_mem_get_ops);
}

int kp_npu_buf_alloc(struct kp_cb *cb, struct kp_buf *b, u32 size)
{
	const struct peer_memory_client_mofed *c = cb->npu->client;
	struct ib_device *dev = kp_dev(cb);
	unsigned int off;
	int nmap = 0, n, ret;

	b->size = size;
	b->shadow = kvzalloc(size, GFP_KERNEL);
	if (!b->shadow)
		return -ENOMEM;
	b->npu_va = cb->npu->alloc(cb->opts.npu_dev, size);
	if (!b->npu_va) {
		kp_err(cb, "no %u bytes of NPU memory on npu_dev %u", size,
		       cb->opts.npu_dev);
		return -ENOMEM;
	}
	if (c->acquire(b->npu_va, size, NULL, NULL, &b->npu_ctx) != 1) {
		kp_err(cb, "npu_peer_mem does not claim 0x%llx", b->npu_va);
		b->npu_ctx = NULL;
		return -EFAULT;
	}
	ret = c->get_pages(b->npu_va, size, 1, 0, &b->npu_sgt, b->npu_ctx, 0);
	if (ret) {
		kp_err(cb, "get_pages: %d", ret);
		return ret;
	}
	b->npu_pinned = true;
	ret = c->dma_map(&b->npu_sgt, b->npu_ctx, dev->dma_device, 0, &nmap);
	if (ret) {
		kp_err(cb, "dma_map: %d", ret);
		return ret;
	}
	b->npu_mapped = true;
	b->page_size = c->get_page_size(b->npu_ctx);
	if (!is_power_of_2(b->page_size) || !nmap) {
		kp_err(cb, "page size %u, %d entries", b->page_size, nmap);
		return -EINVAL;
	}
	if (nmap > dev->attrs.max_fast_reg_page_list_len) {
		kp_err(cb, "size %u needs %d MR pages, device allows %u", size,
		       nmap, dev->attrs.max_fast_reg_page_list_len);
		return -EINVAL;
	}
	b->mr = ib_alloc_mr(cb->pd, IB_MR_TYPE_MEM_REG, nmap);
	if (IS_ERR(b->mr)) {
		ret = PTR_ERR(b->mr);
		b->mr = NULL;
		kp_err(cb, "ib_alloc_mr(%d pages): %d", nmap, ret);
		return ret;
	}
	off = b->npu_va & (b->page_size - 1);
	n = ib_map_mr_sg(b->mr, b->npu_sgt.sgl, nmap, &off, b->page_size);
	if (n != nmap) {
		kp_err(cb, "ib_map_mr_sg: %d of %d", n, nmap);
		return n < 0 ? n : -EINVAL;
	}
	b->dma = b->mr->iova;
	return 0;
}

void kp_npu_buf_free(struct kp_cb *cb, struct kp_buf *b)
{
	const struct peer_memory_client_mofed *c = cb->npu->client;

	if (b->mr)
		ib_dereg_mr(b->mr);
	if (b->npu_mapped)
		c->dma_unmap(&b->npu_sgt, b->npu_ctx, kp_dev(cb)->dma_device);
	if (b->npu_pinned)
		c->put_pages(&b->npu_sgt, b->npu_ctx);
	if (b->npu_ctx)
		c->release(b->npu_ctx);
	if (b->npu_va)
		cb->npu->free(b->npu_va);
	kvfree(b->shadow);
	memset(b, 0, sizeof(*b));
}

int kp_npu_copy_to(struct kp_cb *cb, struct kp_buf *b, u32 len)
{
	return cb->npu->copy_to(b->npu_va, b->shadow, len);
}

int kp_npu_copy_from(struct kp_cb *cb, struct kp_buf *b, u32 len)
{
	return cb->npu->copy_from(b->shadow, b->npu_va, len);
}
