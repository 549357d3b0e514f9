// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_peer_client.c - the peer_memory_client callbacks over an NPU provider.
 *
 * One context per registration: acquire() creates it for addresses the
 * provider owns, get_pages() takes a page table from the provider and
 * remembers the core's context, dma_map() builds the sg_table, and
 * dma_unmap(), put_pages() and release() undo exactly that.  Cores differ
 * in order (MOFED 5.5 asks get_page_size() after dma_map(), 4.x-5.4 and
 * xsc before), so every callback depends only on what get_pages() set up.
 * What a context holds, and whether its memory was freed, is one state
 * (npu_reg.h) moved under ctx->lock by each callback and the free
 * callback; a move against the rules is refused with a WARN.
 *
 * A context has two references: the core's (acquire to release) and the
 * page table's (get_pages until the provider has the table back).  MOFED
 * may call release() while a free callback for the same context runs; the
 * table's reference keeps the context alive through it, because the
 * provider's put_pages waits for that callback.
 *
 * When the memory is freed under a registration the provider calls
 * npu_free_cb(): the core is told through its invalidate callback (when
 * the registration came through a core: its core_context may be 0) and
 * may call dma_unmap()/put_pages() from inside it; the DMA mappings left
 * are torn down before the callback returns.  A core's put_pages goes to
 * a workqueue (npu_put_table()): the driver's put waits for a whole free
 * loop of the process and device, whose callbacks may need a lock the
 * core holds across put_pages, or the callback itself.
 */
#include <linux/slab.h>
#include <linux/module.h>
#include <linux/kref.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <linux/scatterlist.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/io.h>

#include "npu_provider.h"
#include "npu_peer_client.h"
#include "npu_reg.h"

struct npu_ctx {
	struct kref ref;		/* the core's and the table's */
	spinlock_t lock;		/* the state below */
	u64 va;
	size_t size;
	unsigned long first;		/* the table's entries covering [va, +size) */
	unsigned int n;
	u64 core_context;
	bool via_core;			/* registered by a core, not krping_npu */
	npu_freed_fn freed;		/* krping_npu's: whom to tell of a free */
	void *freed_data;
	struct p2p_page_table *table;	/* from get_pages until put */
	struct sg_table *sgt;		/* the core's, filled by dma_map */
	struct device *dma_dev;
	dma_addr_t *dma;		/* what dma_map mapped, entry by entry */
	unsigned int nents;		/* entries mapped */
	u64 map_len;			/* bytes each */
	bool ram;			/* mapped as pages, else as resource */
	enum npu_reg_state state;	/* npu_reg.h: what is held, freed or not */
	bool dma_live;			/* the entries' DMA mappings exist */
	struct task_struct *cb_task;	/* running npu_free_cb(), or NULL */
	bool put_due;			/* a put_pages asked for beside it */
	struct delayed_work put_work;	/* a put_pages deferred or retried */
	unsigned int put_tries;		/* put_pages the HAL refused */
	struct list_head kept;		/* on npu_kept: refused for good */
	struct work_struct free_work;	/* the last reference went */
};

/* a refused put_pages is tried again this often, this many times */
#define NPU_PUT_TRIES		10
#define NPU_PUT_RETRY_MS	100
/* krping_npu's callback ends within its own bound (KP_DRAIN_MS, 2 s) */
#define NPU_CB_WAIT_MS		10000

struct npu_provider *npu_prov;
/* a free callback returned (npu_put_table() waits on a refused put) */
static DECLARE_WAIT_QUEUE_HEAD(npu_cb_wq);
invalidate_peer_memory npu_core_invalidate;
void *npu_reg_handle;
struct workqueue_struct *npu_wq;
/* contexts whose table the HAL refused NPU_PUT_TRIES times */
static LIST_HEAD(npu_kept);
static DEFINE_SPINLOCK(npu_kept_lock);

/*
 * May @ctx take @ev now?  0 when it may (npu_reg.h), the rules' refusal
 * (-EINVAL) as it is, and for a move no caller may make a WARN and
 * -EPROTO.  Under ctx->lock.
 */
static int npu_reg_may(struct npu_ctx *ctx, enum npu_reg_event ev)
{
	int next = npu_reg_next(ctx->state, ev);

	lockdep_assert_held(&ctx->lock);
	if (next == NPU_REG_ILLEGAL) {
		/* a stack trace once, and a line for every one after it */
		if (!WARN_ONCE(1, "npu_peer_mem: %s on a registration in state %s: refused\n",
			       npu_reg_event_name(ev),
			       npu_reg_state_name(ctx->state)))
			pr_warn_ratelimited("npu_peer_mem: %s on a registration of 0x%llx in state %s: refused\n",
					    npu_reg_event_name(ev), ctx->va,
					    npu_reg_state_name(ctx->state));
		return -EPROTO;
	}
	return next < 0 ? next : 0;
}

/* Move @ctx by @ev, as npu_reg_may() allows; @was: the state before. */
static int npu_reg_move(struct npu_ctx *ctx, enum npu_reg_event ev,
			enum npu_reg_state *was)
{
	int ret = npu_reg_may(ctx, ev);

	if (was)
		*was = ctx->state;
	if (!ret)
		ctx->state = npu_reg_next(ctx->state, ev);
	return ret;
}

static void npu_ctx_free(struct kref *ref)
{
	struct npu_ctx *ctx = container_of(ref, struct npu_ctx, ref);

	kvfree(ctx->dma);
	kfree(ctx);
	atomic_dec(&npu_stats.contexts);
	module_put(THIS_MODULE);
}

/* module exit drains npu_wq: this work's return is waited for */
static void npu_ctx_free_work(struct work_struct *w)
{
	npu_ctx_free(&container_of(w, struct npu_ctx, free_work)->ref);
}

/*
 * The last reference dropped inside the HAL's free callback, whose return
 * runs in our text: the module reference goes from npu_wq instead.
 */
static void npu_ctx_free_later(struct kref *ref)
{
	struct npu_ctx *ctx = container_of(ref, struct npu_ctx, ref);

	queue_work(npu_wq, &ctx->free_work);
}

/*
 * Hand the table back to the HAL; it waits out a free callback running on
 * it.  A put_pages the HAL refuses leaves the table the HAL's, and its
 * free callback pointing at @ctx: keep both, and try again from npu_wq,
 * NPU_PUT_TRIES times NPU_PUT_RETRY_MS apart.  The driver refuses only
 * while it cannot take its own module, which our hold on it prevents; a
 * table still refused after that is kept on npu_kept with @ctx, counted
 * in debugfs (leaked_tables) and put again by a write to retry_puts.
 */
static bool npu_table_put(struct npu_ctx *ctx)
{
	int ret = npu_prov->put_pages(ctx->table);

	if (!ret) {
		ctx->table = NULL;
		kref_put(&ctx->ref, npu_ctx_free);
		return true;
	}
	atomic_inc(&npu_stats.put_failures);
	if (++ctx->put_tries < NPU_PUT_TRIES) {
		pr_warn_ratelimited("npu_peer_mem: put_pages refused (%d) for 0x%llx, try %u of %u in %u ms\n",
				    ret, ctx->va, ctx->put_tries + 1,
				    NPU_PUT_TRIES, NPU_PUT_RETRY_MS);
		queue_delayed_work(npu_wq, &ctx->put_work,
				   msecs_to_jiffies(NPU_PUT_RETRY_MS));
		return false;
	}
	atomic_inc(&npu_stats.leaked_tables);
	spin_lock(&npu_kept_lock);
	list_add_tail(&ctx->kept, &npu_kept);
	spin_unlock(&npu_kept_lock);
	pr_err("npu_peer_mem: put_pages refused %u times (last %d) for 0x%llx: the table is kept; echo 1 > /sys/kernel/debug/npu_peer_mem/retry_puts tries again\n",
	       ctx->put_tries, ret, ctx->va);
	return false;
}

/* Put every kept table again, NPU_PUT_TRIES more tries each; how many. */
unsigned int npu_retry_kept(void)
{
	struct npu_ctx *ctx, *tmp;
	unsigned int n = 0;
	LIST_HEAD(again);

	spin_lock(&npu_kept_lock);
	list_splice_init(&npu_kept, &again);
	spin_unlock(&npu_kept_lock);
	list_for_each_entry_safe(ctx, tmp, &again, kept) {
		list_del_init(&ctx->kept);
		atomic_dec(&npu_stats.leaked_tables);
		ctx->put_tries = 0;
		queue_delayed_work(npu_wq, &ctx->put_work, 0);
		n++;
	}
	return n;
}

static void npu_put_work(struct work_struct *w)
{
	struct npu_ctx *ctx = container_of(to_delayed_work(w), struct npu_ctx,
					   put_work);

	npu_table_put(ctx);
}

static int npu_acquire_ctx(unsigned long addr, size_t size, bool via_core,
			   npu_freed_fn freed, void *data, void **client_context)
{
	struct npu_ctx *ctx;

	if (!size || !npu_prov->owns(addr, size))
		return 0;		/* not ours */
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return 0;
	kref_init(&ctx->ref);
	spin_lock_init(&ctx->lock);
	ctx->state = NPU_REG_NEW;
	INIT_DELAYED_WORK(&ctx->put_work, npu_put_work);
	INIT_WORK(&ctx->free_work, npu_ctx_free_work);
	INIT_LIST_HEAD(&ctx->kept);
	ctx->va = addr;
	ctx->size = size;
	ctx->via_core = via_core;
	ctx->freed = freed;
	ctx->freed_data = data;
	/* a live context pins this module: rmmod waits for release() */
	__module_get(THIS_MODULE);
	atomic_inc(&npu_stats.contexts);
	*client_context = ctx;
	return 1;
}

static int npu_acquire(unsigned long addr, size_t size, void *priv,
		       char *peer_mem_name, void **client_context)
{
	return npu_acquire_ctx(addr, size, true, NULL, NULL, client_context);
}

/* krping_npu's own registrations: @freed stands in for the core's invalidate */
int npu_acquire_direct(unsigned long addr, size_t size, npu_freed_fn freed,
		       void *data, void **client_context)
{
	return npu_acquire_ctx(addr, size, false, freed, data, client_context);
}

int npu_page_pa(void *client_context, unsigned int i, u64 *pa)
{
	struct npu_ctx *ctx = client_context;
	int ret = -EINVAL;

	spin_lock(&ctx->lock);
	if (npu_reg_holds_table(ctx->state) && i < ctx->n) {
		*pa = ctx->table->pages_info[ctx->first + i].pa;
		ret = 0;
	}
	spin_unlock(&ctx->lock);
	return ret;
}

static void npu_free_cb(void *data);

/* Give the table back, at once or, beside a free callback, from npu_wq. */
static void npu_put_table(struct npu_ctx *ctx)
{
	bool defer, queue;

	spin_lock(&ctx->lock);
	if (npu_reg_move(ctx, NPU_EV_PUT, NULL)) {
		spin_unlock(&ctx->lock);
		return;
	}
	/*
	 * A core's put goes to npu_wq.  The driver's put_pages waits for a
	 * whole free loop of the same process and device (its lock is held
	 * across every callback), and a core calls put_pages holding locks
	 * of its own (MOFED: the MR's mapping_lock): a callback of that
	 * loop needing one held so (a core-wide lock) would deadlock, and
	 * the deregistration would sit out every callback of the loop.
	 * Beside this table's own callback, it is queued once the callback
	 * has returned
	 * (npu_free_cb()): the driver's put of an exited process takes no
	 * lock that would order it after the callback.  krping_npu puts
	 * from its own thread, holding nothing a callback takes, and must
	 * know its freed() is over on return: the driver's put waits.
	 */
	defer = ctx->via_core || ctx->cb_task == current;
	ctx->put_due = defer && ctx->cb_task;
	queue = defer && !ctx->cb_task;
	spin_unlock(&ctx->lock);
	if (defer) {
		atomic_inc(&npu_stats.deferred_puts);
		if (queue)
			queue_delayed_work(npu_wq, &ctx->put_work, 0);
		return;
	}
	/*
	 * A free callback starting now finds NPU_REG_PUT and returns at once.
	 * One already running on this table is waited out here, not left to
	 * the driver: its put of an exited process takes no lock, and would
	 * free the table under the loop that runs the callback; and
	 * krping_npu's buffer goes on return.
	 */
	if (!wait_event_timeout(npu_cb_wq, !READ_ONCE(ctx->cb_task),
				msecs_to_jiffies(NPU_CB_WAIT_MS)))
		pr_err("npu_peer_mem: a free callback on 0x%llx still runs after %u ms\n",
		       ctx->va, NPU_CB_WAIT_MS);
	npu_table_put(ctx);
}

/*
 * The driver takes a start on a page of the memory's own size, known only
 * from its answer, and any length (it rounds up).  Ask at most twice
 * (p2p_ask()): from the small page, and on -EOPNOTSUPP from the huge page.
 * Any other answer is the driver's: -EINVAL is a bad range or a table it
 * could not build, not a hint to try wider, which could pin a neighbour's
 * pages.
 */
static int npu_hal_get(struct npu_ctx *ctx, u64 *va, u64 *len,
		       struct p2p_page_table **t)
{
	unsigned int try;
	int ret = -EINVAL;

	for (try = 0; p2p_ask(ctx->va, ctx->size, try, va, len); try++) {
		ret = npu_prov->get_pages(*va, *len, npu_free_cb, ctx, t);
		if (ret != -EOPNOTSUPP)
			break;
	}
	return ret;
}

/* The driver's table for the registration; its own pages of it are ours. */
static int npu_get_pages(unsigned long addr, size_t size, int write, int force,
			 struct sg_table *sg_head, void *client_context,
			 u64 core_context)
{
	struct npu_ctx *ctx = client_context;
	struct p2p_page_table *t;
	u64 va, len;
	int ret;

	if (addr != ctx->va || size != ctx->size)
		return -EINVAL;
	spin_lock(&ctx->lock);
	ret = npu_reg_move(ctx, NPU_EV_GET, NULL);
	spin_unlock(&ctx->lock);
	if (ret)
		return ret;
	ret = npu_hal_get(ctx, &va, &len, &t);
	spin_lock(&ctx->lock);
	if (ret) {
		npu_reg_move(ctx, NPU_EV_GET_FAILED, NULL);
		spin_unlock(&ctx->lock);
		return ret;
	}
	/*
	 * The free callback may have run already (PINNING_FREED): the table
	 * is held all the same, and dma_map() will refuse.
	 */
	kref_get(&ctx->ref);
	ctx->table = t;
	ctx->core_context = core_context;
	npu_reg_move(ctx, NPU_EV_GOT, NULL);
	spin_unlock(&ctx->lock);
	if (!p2p_table_ok(t, va, len)) {
		pr_err("npu_peer_mem: page table version %u, %llu pages of %llu bytes for 0x%llx+%llu: refused\n",
		       t->version, t->page_num, t->page_size, va, len);
		npu_put_table(ctx);
		return -EPROTO;
	}
	/*
	 * A core maps in the kernel's pages: MOFED 5.5+'s fix_peer_sgls()
	 * moves the first entry back by ALIGN_DOWN(addr, PAGE_SIZE) -
	 * ALIGN_DOWN(addr, peer page), which underflows for a smaller
	 * peer page and points outside the table.
	 */
	if (ctx->via_core && t->page_size < PAGE_SIZE) {
		pr_err("npu_peer_mem: 0x%llx is in NPU pages of %llu bytes, smaller than the kernel's %lu: the RDMA core cannot map it, refused\n",
		       ctx->va, t->page_size, PAGE_SIZE);
		npu_put_table(ctx);
		return -EOPNOTSUPP;
	}
	ctx->first = (addr - va) / t->page_size;
	ctx->n = (addr + size - 1 - va) / t->page_size - ctx->first + 1;
	return 0;
}

/*
 * Undo the first @n mappings, from dma_map()'s own record: the core's
 * sg_table may be trimmed (MOFED 5.5+) or going away meanwhile.
 */
static void npu_unmap_entries(struct npu_ctx *ctx, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!ctx->dma_dev) {
			/* virt-DMA: RAM is in the direct map already */
			if (!ctx->ram)
				memunmap((void *)(uintptr_t)ctx->dma[i]);
		} else if (ctx->ram)
			dma_unmap_page(ctx->dma_dev, ctx->dma[i], ctx->map_len,
				       DMA_BIDIRECTIONAL);
		else
			dma_unmap_resource(ctx->dma_dev, ctx->dma[i],
					   ctx->map_len, DMA_BIDIRECTIONAL, 0);
	}
}

/* Tear the entries' DMA mappings down once, whoever comes first. */
static void npu_dma_release(struct npu_ctx *ctx)
{
	bool live;

	spin_lock(&ctx->lock);
	live = ctx->dma_live;
	ctx->dma_live = false;
	spin_unlock(&ctx->lock);
	if (!live)
		return;
	npu_unmap_entries(ctx, ctx->nents);
	atomic_dec(&npu_stats.mappings);
}

static int npu_dma_map(struct sg_table *sg_head, void *client_context,
		       struct device *dma_device, int dmasync, int *nmap)
{
	struct npu_ctx *ctx = client_context;
	struct p2p_page_table *t = ctx->table;
	struct scatterlist *sg;
	unsigned int i;
	int ret;

	spin_lock(&ctx->lock);
	ret = npu_reg_may(ctx, NPU_EV_MAP);
	spin_unlock(&ctx->lock);
	if (ret)
		return ret;
	ctx->dma = kvcalloc(ctx->n, sizeof(*ctx->dma), GFP_KERNEL);
	if (!ctx->dma)
		return -ENOMEM;
	ret = sg_alloc_table(sg_head, ctx->n, GFP_KERNEL);
	if (ret)
		goto out_free;
	ctx->dma_dev = dma_device;
	ctx->map_len = t->page_size;
	ctx->ram = npu_pa_is_ram(t->pages_info[ctx->first].pa, t->page_size);
	for_each_sg(sg_head->sgl, sg, ctx->n, i) {
		u64 pa = t->pages_info[ctx->first + i].pa;
		dma_addr_t dma;

		if (npu_pa_is_ram(pa, t->page_size) != ctx->ram) {
			ret = -EINVAL;	/* one kind of memory per table */
			goto unwind;
		}
		if (!dma_device) {
			/*
			 * virt-DMA device: the CPU address; for a BAR a
			 * write-combined mapping of the page, which only a
			 * device that copies through the address (rxe, not
			 * siw: it wants struct pages) can use; krping_npu
			 * checks
			 */
			if (ctx->ram) {
				dma = (uintptr_t)phys_to_virt(pa);
			} else {
				void *kva = memremap(pa, t->page_size,
						     MEMREMAP_WC);

				if (!kva) {
					ret = -ENOMEM;
					goto unwind;
				}
				dma = (uintptr_t)kva;
			}
		} else if (ctx->ram) {
			dma = dma_map_page(dma_device, pfn_to_page(PHYS_PFN(pa)),
					   offset_in_page(pa), t->page_size,
					   DMA_BIDIRECTIONAL);
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
		/* no struct page behind NPU memory: the length alone, as a
		 * core trims the first and last entries by it (MOFED 5.5+)
		 */
		ctx->dma[i] = dma;
		sg->offset = 0;
		sg->length = t->page_size;
		sg_dma_address(sg) = dma;
		sg_dma_len(sg) = t->page_size;
	}
	/* a free callback that ran meanwhile found nothing to unmap */
	spin_lock(&ctx->lock);
	ret = npu_reg_move(ctx, NPU_EV_MAP, NULL);
	if (ret) {
		spin_unlock(&ctx->lock);
		goto unwind;
	}
	ctx->sgt = sg_head;
	ctx->nents = ctx->n;
	ctx->dma_live = true;
	spin_unlock(&ctx->lock);
	atomic_inc(&npu_stats.mappings);
	*nmap = ctx->n;
	return 0;

unwind:
	npu_unmap_entries(ctx, i);
	sg_free_table(sg_head);
out_free:
	kvfree(ctx->dma);
	ctx->dma = NULL;
	return ret;
}

static int npu_dma_unmap(struct sg_table *sg_head, void *client_context,
			 struct device *dma_device)
{
	struct npu_ctx *ctx = client_context;
	enum npu_reg_state was;
	int ret;

	npu_dma_release(ctx);
	spin_lock(&ctx->lock);
	ret = npu_reg_move(ctx, NPU_EV_UNMAP, &was);
	spin_unlock(&ctx->lock);
	if (ret)
		return ret;
	if (was == NPU_REG_MAPPED || was == NPU_REG_FREED_MAPPED)
		sg_free_table(ctx->sgt);	/* the core's table, ours to fill */
	return 0;
}

static void npu_put_pages(struct sg_table *sg_head, void *client_context)
{
	npu_put_table(client_context);
}

static unsigned long npu_get_page_size(void *client_context)
{
	struct npu_ctx *ctx = client_context;

	return ctx->table ? ctx->table->page_size : 0;
}

static void npu_release(void *client_context)
{
	struct npu_ctx *ctx = client_context;

	/* the core's reference goes whatever it left held (WARNed) */
	spin_lock(&ctx->lock);
	npu_reg_move(ctx, NPU_EV_RELEASE, NULL);
	spin_unlock(&ctx->lock);
	kref_put(&ctx->ref, npu_ctx_free);
}

/*
 * The provider frees memory under a live registration.  Tell the core once
 * (it may unmap and put from inside its callback); then tear down whatever
 * DMA mappings the core left, so nothing reaches the memory after return.
 * A registration whose put_pages has begun is past its DMA already.
 */
static void npu_free_cb(void *data)
{
	struct npu_ctx *ctx = data;
	enum npu_reg_state was;
	bool held, tell, tell_owner, put_due;

	spin_lock(&ctx->lock);
	/* freed once already, or put_pages begun: past its DMA */
	if (npu_reg_move(ctx, NPU_EV_FREE, &was) || ctx->state == was) {
		spin_unlock(&ctx->lock);
		return;
	}
	/*
	 * Before get_pages() has published the table (PINNING) the core's id
	 * is not known, nor anything mapped: dma_map() will refuse.
	 */
	held = was == NPU_REG_PINNED || was == NPU_REG_MAPPED ||
	       was == NPU_REG_UNMAPPED;
	tell = held && ctx->via_core && npu_core_invalidate;
	tell_owner = held && !ctx->via_core && ctx->freed;
	ctx->cb_task = current;
	kref_get(&ctx->ref);	/* whatever the provider's put_pages waits for */
	spin_unlock(&ctx->lock);
	atomic_inc(&npu_stats.invalidations);
	if (tell)
		npu_core_invalidate(npu_reg_handle, ctx->core_context);
	if (tell_owner)
		ctx->freed(ctx->freed_data);
	npu_dma_release(ctx);
	spin_lock(&ctx->lock);
	ctx->cb_task = NULL;
	put_due = ctx->put_due;
	ctx->put_due = false;
	spin_unlock(&ctx->lock);
	if (put_due)
		queue_delayed_work(npu_wq, &ctx->put_work, 0);
	wake_up_all(&npu_cb_wq);
	kref_put(&ctx->ref, npu_ctx_free_later);
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
