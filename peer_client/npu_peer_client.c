// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_peer_client.c - the peer_memory_client callbacks over an NPU provider.
 *
 * One context per registration: acquire() creates it for addresses the
 * provider owns, get_pages() pins through the provider and remembers the
 * core's context, dma_map() builds the sg_table, dma_unmap(), put_pages()
 * and release() undo exactly that.  Cores differ in order (MOFED 5 asks
 * get_page_size() after dma_map(), xsc before), so every callback depends
 * only on what get_pages() established.
 *
 * When the memory is freed under a registration the provider calls
 * npu_free_cb(): the core is told through its invalidate callback and may
 * call dma_unmap()/put_pages() from inside it; whatever it leaves is undone
 * here.  Each step runs once, whoever asks first.
 */
#include <linux/slab.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>

#include "npu_provider.h"
#include "npu_peer_client.h"

struct npu_ctx {
	spinlock_t lock;		/* pinned, mapped, invalidated */
	u64 va;
	size_t size;
	u64 core_context;
	struct npu_page_table *table;
	struct sg_table *sgt;		/* the core's, filled by dma_map */
	struct device *dma_dev;
	unsigned int nents;		/* entries mapped */
	bool ram;			/* mapped as pages, else as resource */
	bool pinned;
	bool mapped;
	bool invalidated;
};

struct npu_provider *npu_prov;
invalidate_peer_memory npu_core_invalidate;
void *npu_reg_handle;

static int npu_acquire(unsigned long addr, size_t size, void *priv,
		       char *peer_mem_name, void **client_context)
{
	struct npu_ctx *ctx;

	if (!size || !npu_prov->owns(addr, size))
		return 0;		/* not ours */
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return 0;
	spin_lock_init(&ctx->lock);
	ctx->va = addr;
	ctx->size = size;
	/* a live context pins this module: rmmod waits for release() */
	__module_get(THIS_MODULE);
	atomic_inc(&npu_stats.contexts);
	*client_context = ctx;
	return 1;
}

static void npu_free_cb(void *data);

static int npu_get_pages(unsigned long addr, size_t size, int write, int force,
			 struct sg_table *sg_head, void *client_context,
			 u64 core_context)
{
	struct npu_ctx *ctx = client_context;
	int ret;

	if (ctx->pinned || ctx->invalidated)
		return -EINVAL;
	if (addr != ctx->va || size != ctx->size)
		return -EINVAL;
	ret = npu_prov->get_pages(addr, size, npu_free_cb, ctx, &ctx->table);
	if (ret)
		return ret;
	ctx->core_context = core_context;
	ctx->pinned = true;
	return 0;
}

/* RAM pages map as pages; anything else (a device BAR) as a resource. */
static bool npu_pa_is_ram(u64 pa)
{
	return pfn_valid(PHYS_PFN(pa));
}

/* Undo the first @n mappings; uses only what dma_map() recorded. */
static void npu_unmap_entries(struct npu_ctx *ctx, struct scatterlist *sgl,
			      unsigned int n)
{
	struct scatterlist *sg;
	unsigned int i;

	if (!ctx->dma_dev)
		return;			/* virt-DMA: nothing was mapped */
	for_each_sg(sgl, sg, n, i) {
		if (ctx->ram)
			dma_unmap_page(ctx->dma_dev, sg_dma_address(sg),
				       sg_dma_len(sg), DMA_BIDIRECTIONAL);
		else
			dma_unmap_resource(ctx->dma_dev, sg_dma_address(sg),
					   sg_dma_len(sg), DMA_BIDIRECTIONAL, 0);
	}
}

static int npu_dma_map(struct sg_table *sg_head, void *client_context,
		       struct device *dma_device, int dmasync, int *nmap)
{
	struct npu_ctx *ctx = client_context;
	struct npu_page_table *t = ctx->table;
	struct scatterlist *sg;
	unsigned int i;
	int ret;

	if (!ctx->pinned || ctx->mapped || ctx->invalidated)
		return -EINVAL;
	ret = sg_alloc_table(sg_head, t->page_num, GFP_KERNEL);
	if (ret)
		return ret;
	ctx->dma_dev = dma_device;
	ctx->ram = npu_pa_is_ram(t->pages_info[0].pa);
	for_each_sg(sg_head->sgl, sg, t->page_num, i) {
		u64 pa = t->pages_info[i].pa;
		dma_addr_t dma;

		if (npu_pa_is_ram(pa) != ctx->ram) {
			ret = -EINVAL;	/* one kind of memory per table */
			goto unwind;
		}
		if (!dma_device) {
			/* virt-DMA device (rxe, siw): the CPU address */
			if (!npu_pa_is_ram(pa)) {
				ret = -EOPNOTSUPP;
				goto unwind;
			}
			dma = (uintptr_t)phys_to_virt(pa);
		} else if (npu_pa_is_ram(pa)) {
			dma = dma_map_page(dma_device, pfn_to_page(PHYS_PFN(pa)),
					   0, t->page_size, DMA_BIDIRECTIONAL);
			if (dma_mapping_error(dma_device, dma)) {
				ret = -ENOMEM;
				goto unwind;
			}
		} else {
			dma = dma_map_resource(dma_device, pa, t->page_size,
					       DMA_BIDIRECTIONAL, 0);
			if (dma_mapping_error(dma_device, dma)) {
				ret = -ENOMEM;
				goto unwind;
			}
		}
		sg_dma_address(sg) = dma;
		sg_dma_len(sg) = t->page_size;
	}
	spin_lock(&ctx->lock);
	ctx->sgt = sg_head;
	ctx->nents = t->page_num;
	ctx->mapped = true;
	spin_unlock(&ctx->lock);
	atomic_inc(&npu_stats.mappings);
	*nmap = t->page_num;
	return 0;

unwind:
	npu_unmap_entries(ctx, sg_head->sgl, i);
	sg_free_table(sg_head);
	return ret;
}

static int npu_dma_unmap(struct sg_table *sg_head, void *client_context,
			 struct device *dma_device)
{
	struct npu_ctx *ctx = client_context;
	bool was;

	spin_lock(&ctx->lock);
	was = ctx->mapped;
	ctx->mapped = false;
	spin_unlock(&ctx->lock);
	if (!was)
		return 0;		/* already undone by invalidation */
	npu_unmap_entries(ctx, ctx->sgt->sgl, ctx->nents);
	sg_free_table(ctx->sgt);
	atomic_dec(&npu_stats.mappings);
	return 0;
}

static void npu_put_pages(struct sg_table *sg_head, void *client_context)
{
	struct npu_ctx *ctx = client_context;
	bool was, gone;

	spin_lock(&ctx->lock);
	was = ctx->pinned;
	gone = ctx->invalidated;
	ctx->pinned = false;
	spin_unlock(&ctx->lock);
	/* after a free callback the provider reclaims the table itself */
	if (was && !gone)
		npu_prov->put_pages(ctx->table);
	if (was)
		ctx->table = NULL;
}

static unsigned long npu_get_page_size(void *client_context)
{
	struct npu_ctx *ctx = client_context;

	return ctx->table ? ctx->table->page_size : npu_prov->page_size;
}

static void npu_release(void *client_context)
{
	struct npu_ctx *ctx = client_context;

	kfree(ctx);
	atomic_dec(&npu_stats.contexts);
	module_put(THIS_MODULE);
}

/*
 * The provider frees memory under a live registration.  Tell the core once;
 * then undo whatever the core did not undo from inside its callback.
 */
static void npu_free_cb(void *data)
{
	struct npu_ctx *ctx = data;
	bool first;

	spin_lock(&ctx->lock);
	first = !ctx->invalidated;
	ctx->invalidated = true;
	spin_unlock(&ctx->lock);
	if (!first)
		return;
	atomic_inc(&npu_stats.invalidations);
	if (npu_core_invalidate && ctx->core_context)
		npu_core_invalidate(npu_reg_handle, ctx->core_context);
	npu_dma_unmap(ctx->sgt, ctx, ctx->dma_dev);
	spin_lock(&ctx->lock);
	if (ctx->pinned) {
		ctx->pinned = false;
		ctx->table = NULL;	/* the provider frees it on return */
	}
	spin_unlock(&ctx->lock);
}

/* Both layouts share the first 136 bytes; the tail stays zero unless set. */
struct peer_memory_client_yunscale npu_client = {
	.mofed = {
		.name = "npu_peer_mem",
		.version = "1.0",
		.acquire = npu_acquire,
		.get_pages = npu_get_pages,
		.dma_map = npu_dma_map,
		.dma_unmap = npu_dma_unmap,
		.put_pages = npu_put_pages,
		.get_page_size = npu_get_page_size,
		.release = npu_release,
	},
};
