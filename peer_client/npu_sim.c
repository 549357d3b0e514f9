// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sim.c - an emulated NPU: per device an HBM of hbm_mb MiB in pages of
 * page_size (4 KiB or 2 MiB), backed by host pages, behind its own NPU
 * virtual address range that never overlaps kernel addresses.  It serves
 * the HAL's get_pages/put_pages with its table layout and lifetime, an
 * allocator, and copies that stand in for the NPU's DMA engine.
 *
 * As on the real driver, a table outlives a free of its memory: the free
 * calls the table's free_callback, and the table stays until put_pages.
 * put_pages waits for a callback running on its table (the real driver
 * serialises the two); called from inside that callback it would
 * deadlock there, so here it is refused loudly.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/io.h>
#include <linux/gfp.h>
#include <linux/mutex.h>
#include <linux/bitmap.h>
#include <linux/list.h>
#include <linux/sizes.h>
#include <linux/wait.h>
#include <linux/sched.h>

#include "npu_provider.h"

#define SIM_VA_BASE	0x100000000000ull	/* 16 TiB */
#define SIM_VA_SHIFT	36			/* 64 GiB window per device */
#define SIM_MAX_DEVS	16

struct sim_dev {
	unsigned long *map;	/* one bit a page of HBM */
	unsigned long npages;
};

struct sim_alloc {
	struct list_head node;
	u64 va;
	u64 size;
	unsigned long first;	/* first page in the device's map */
	unsigned long npages;
	unsigned int dev;
	struct page **pages;	/* one block of page_size per NPU page */
	struct list_head tables;
};

struct sim_table {
	struct p2p_page_table pt;
	struct list_head node;		/* its allocation's tables, or sim_freed */
	p2p_free_callback free_cb;
	void *data;
	struct task_struct *cb_task;	/* running free_cb, or NULL */
};

static DEFINE_MUTEX(sim_lock);		/* sim_allocs, device maps, tables */
static LIST_HEAD(sim_allocs);
static LIST_HEAD(sim_freed);		/* tables whose memory was freed */
static DECLARE_WAIT_QUEUE_HEAD(sim_cb_wq);	/* a free_cb returned */
static struct sim_dev sim_devs[SIM_MAX_DEVS];
static unsigned int sim_ndevs;
static unsigned long sim_page_size;
static unsigned int sim_order;

static u64 sim_dev_base(unsigned int dev)
{
	return SIM_VA_BASE + ((u64)dev << SIM_VA_SHIFT);
}

/* The allocation holding [va, va + len), under sim_lock. */
static struct sim_alloc *sim_find(u64 va, u64 len)
{
	struct sim_alloc *a;

	list_for_each_entry(a, &sim_allocs, node)
		if (va >= a->va && len <= a->size && va - a->va <= a->size - len)
			return a;
	return NULL;
}

static void sim_free_backing(struct sim_alloc *a)
{
	unsigned long i;

	for (i = 0; i < a->npages; i++)
		if (a->pages[i])
			__free_pages(a->pages[i], sim_order);
	kvfree(a->pages);
}

static u64 sim_alloc(unsigned int dev, size_t size)
{
	struct sim_alloc *a;
	unsigned long i, first;
	u64 va = 0;

	if (dev >= sim_ndevs || !size)
		return 0;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return 0;
	a->npages = DIV_ROUND_UP(size, sim_page_size);
	a->size = size;
	a->dev = dev;
	INIT_LIST_HEAD(&a->tables);
	a->pages = kvcalloc(a->npages, sizeof(*a->pages), GFP_KERNEL);
	if (!a->pages)
		goto err;
	for (i = 0; i < a->npages; i++) {
		a->pages[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
					  sim_order);
		if (!a->pages[i])
			goto err;
	}

	mutex_lock(&sim_lock);
	first = bitmap_find_next_zero_area(sim_devs[dev].map,
					   sim_devs[dev].npages, 0, a->npages, 0);
	if (first < sim_devs[dev].npages) {
		bitmap_set(sim_devs[dev].map, first, a->npages);
		a->first = first;
		a->va = sim_dev_base(dev) + (u64)first * sim_page_size;
		list_add(&a->node, &sim_allocs);
		atomic_inc(&npu_stats.allocs);
		va = a->va;
	}
	mutex_unlock(&sim_lock);
	if (va)
		return va;
err:
	if (a->pages)
		sim_free_backing(a);
	kfree(a);
	return 0;
}

/*
 * Free an allocation.  Each table still out on it is detached under the
 * lock, then told through its free callback outside it (a callback may
 * reach back into the RDMA core and from there into the peer client);
 * the table itself stays until its put_pages.
 */
static int sim_free(u64 va)
{
	struct sim_table *t;
	struct sim_alloc *a;
	LIST_HEAD(gone);

	mutex_lock(&sim_lock);
	a = sim_find(va, 1);
	if (!a || a->va != va) {
		mutex_unlock(&sim_lock);
		return -ENOENT;
	}
	list_del(&a->node);		/* no new get_pages from here */
	list_splice_init(&a->tables, &gone);
	list_for_each_entry(t, &gone, node)
		WRITE_ONCE(t->cb_task, current);	/* put_pages waits from here */
	mutex_unlock(&sim_lock);

	while (!list_empty(&gone)) {
		t = list_first_entry(&gone, struct sim_table, node);
		t->free_cb(t->data);
		mutex_lock(&sim_lock);
		list_move_tail(&t->node, &sim_freed);
		WRITE_ONCE(t->cb_task, NULL);
		mutex_unlock(&sim_lock);
		wake_up_all(&sim_cb_wq);
	}

	mutex_lock(&sim_lock);
	bitmap_clear(sim_devs[a->dev].map, a->first, a->npages);
	mutex_unlock(&sim_lock);
	sim_free_backing(a);
	kfree(a);
	atomic_dec(&npu_stats.allocs);
	return 0;
}

static int sim_get_pages(u64 va, u64 len, p2p_free_callback free_cb,
			 void *data, struct p2p_page_table **out)
{
	struct sim_table *t;
	struct sim_alloc *a;
	unsigned long first, i;
	int ret = 0;

	if (!len || !free_cb)
		return -EINVAL;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	mutex_lock(&sim_lock);
	a = sim_find(va, len);
	if (!a) {
		ret = -EFAULT;
		goto out;
	}
	first = (va - a->va) / sim_page_size;
	t->pt.version = P2P_GET_PAGE_VERSION;
	t->pt.page_size = sim_page_size;
	t->pt.page_num = (va + len - 1 - a->va) / sim_page_size - first + 1;
	t->pt.pages_info = kcalloc(t->pt.page_num, sizeof(*t->pt.pages_info),
				   GFP_KERNEL);
	if (!t->pt.pages_info) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->pt.page_num; i++)
		t->pt.pages_info[i].pa = page_to_phys(a->pages[first + i]);
	t->free_cb = free_cb;
	t->data = data;
	list_add_tail(&t->node, &a->tables);
	atomic_add(t->pt.page_num, &npu_stats.pinned_pages);
	atomic_inc(&npu_stats.tables);
	*out = &t->pt;
out:
	mutex_unlock(&sim_lock);
	if (ret)
		kfree(t);
	return ret;
}

static int sim_put_pages(struct p2p_page_table *pt)
{
	struct sim_table *t = container_of(pt, struct sim_table, pt);

	/* no callback on the table from the check to the unlink */
	mutex_lock(&sim_lock);
	while (t->cb_task) {
		if (t->cb_task == current) {
			mutex_unlock(&sim_lock);
			WARN(1, "npu_peer_mem: put_pages from inside the free callback: the Ascend driver deadlocks here\n");
			return -EDEADLK;
		}
		mutex_unlock(&sim_lock);
		wait_event(sim_cb_wq, !READ_ONCE(t->cb_task));
		mutex_lock(&sim_lock);
	}
	list_del(&t->node);
	mutex_unlock(&sim_lock);
	atomic_sub(pt->page_num, &npu_stats.pinned_pages);
	atomic_dec(&npu_stats.tables);
	kfree(pt->pages_info);
	kfree(t);
	return 0;
}

static bool sim_owns(u64 va, u64 len)
{
	bool mine;

	mutex_lock(&sim_lock);
	mine = sim_find(va, len);
	mutex_unlock(&sim_lock);
	return mine;
}

/* Copy between host memory and NPU memory; @to_npu picks the direction. */
static int sim_copy(u64 va, void *host, size_t len, bool to_npu)
{
	struct sim_alloc *a;
	int ret = 0;

	mutex_lock(&sim_lock);
	a = sim_find(va, len);
	if (!a) {
		ret = -EFAULT;
		goto out;
	}
	while (len) {
		u64 off = va - a->va;
		unsigned long pg = off / sim_page_size;
		size_t in = off % sim_page_size;
		size_t n = min_t(size_t, len, sim_page_size - in);
		void *npu = page_address(a->pages[pg]) + in;

		if (to_npu)
			memcpy(npu, host, n);
		else
			memcpy(host, npu, n);
		host += n;
		va += n;
		len -= n;
	}
out:
	mutex_unlock(&sim_lock);
	return ret;
}

static int sim_copy_to(u64 va, const void *src, size_t len)
{
	return sim_copy(va, (void *)src, len, true);
}

static int sim_copy_from(void *dst, u64 va, size_t len)
{
	return sim_copy(va, dst, len, false);
}

static struct npu_provider sim_provider = {
	.name = "sim",
	.get_pages = sim_get_pages,
	.put_pages = sim_put_pages,
	.owns = sim_owns,
	.alloc = sim_alloc,
	.free = sim_free,
	.copy_to = sim_copy_to,
	.copy_from = sim_copy_from,
};

int npu_sim_init(unsigned int ndevs, unsigned long hbm_mb,
		 unsigned long page_size, struct npu_provider **out)
{
	unsigned int i;

	if (!ndevs || ndevs > SIM_MAX_DEVS) {
		pr_err("npu_peer_mem: npu_devs must be 1..%d\n", SIM_MAX_DEVS);
		return -EINVAL;
	}
	if (page_size != SZ_4K && page_size != SZ_2M) {
		pr_err("npu_peer_mem: page_size must be 4096 or 2097152\n");
		return -EINVAL;
	}
	if (!hbm_mb || (hbm_mb << 20) < page_size ||
	    hbm_mb > (1ul << (SIM_VA_SHIFT - 20))) {
		pr_err("npu_peer_mem: hbm_mb must be 1..%lu and hold a page\n",
		       1ul << (SIM_VA_SHIFT - 20));
		return -EINVAL;
	}
	sim_page_size = page_size;
	sim_order = get_order(page_size);
	for (i = 0; i < ndevs; i++) {
		sim_devs[i].npages = (hbm_mb << 20) / page_size;
		sim_devs[i].map = bitmap_zalloc(sim_devs[i].npages, GFP_KERNEL);
		if (!sim_devs[i].map) {
			sim_ndevs = i;
			npu_sim_exit();
			return -ENOMEM;
		}
	}
	sim_ndevs = ndevs;
	sim_provider.page_size = page_size;
	sim_provider.ndevs = ndevs;
	*out = &sim_provider;
	return 0;
}

/*
 * Frees what is left; nobody holds a context (module references).  A table
 * never put is a leak on the real driver: say so.
 */
void npu_sim_exit(void)
{
	struct sim_alloc *a, *tmp;
	struct sim_table *t, *tt;
	unsigned int i, leaked = 0;

	list_for_each_entry_safe(a, tmp, &sim_allocs, node)
		sim_free(a->va);
	list_for_each_entry_safe(t, tt, &sim_freed, node) {
		list_del(&t->node);
		kfree(t->pt.pages_info);
		kfree(t);
		leaked++;
	}
	if (leaked)
		pr_err("npu_peer_mem: %u page table(s) never put (a leak on the Ascend driver)\n",
		       leaked);
	for (i = 0; i < sim_ndevs; i++) {
		bitmap_free(sim_devs[i].map);
		sim_devs[i].map = NULL;
	}
	sim_ndevs = 0;
}
