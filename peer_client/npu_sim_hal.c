// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sim_hal.c - the emulated NPU's Ascend HAL, exported as the driver's:
 * hal_kernel_p2p_get_pages and hal_kernel_p2p_put_pages with its
 * signature, page-table layout (ascend_hal_abi.h) and answers, as the
 * driver's source (devmm, svm_master_query.c) gives them; the rows are in
 * docs/npu-memory.md.  Where the driver deadlocks or corrupts memory (a
 * get or put from inside a free loop, a put of no live table) the
 * emulated NPU refuses, counts a violation and WARNs instead.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/mm.h>

#include "npu_sim_pool.h"

/*
 * Refuse this many put_pages from now, with -EBUSY and the table kept:
 * the driver's answer while it cannot take its own module (unloading).
 */
static unsigned int fail_put;
module_param(fail_put, uint, 0644);
MODULE_PARM_DESC(fail_put, "refuse the next N put_pages (-EBUSY), tables kept");

/* The driver's SVM range: every device's window (devmm_va_is_in_svm_range) */
static bool sim_in_svm(u64 va)
{
	return va >= SIM_VA_BASE &&
	       va - SIM_VA_BASE < ((u64)SIM_MAX_DEVS << SIM_VA_SHIFT);
}

/*
 * The allocation holding @va on @dev of the caller's context @p (not of
 * an earlier context of the same tgid), under sim_lock.
 */
static struct sim_alloc *sim_find_own(u64 va, unsigned int dev,
				      struct sim_proc *p)
{
	struct sim_alloc *a = sim_find(va, 1);

	return a && a->proc == p && a->dev == dev ? a : NULL;
}

/*
 * Build @t for [va, va + len) from the caller's pages, under sim_lock: its
 * allocation holding va (the driver's heap: none is -EOPNOTSUPP), va on
 * a page (-EOPNOTSUPP), within the device's window (the heap's end,
 * -EOPNOTSUPP), every page the caller's memory on that device, the next
 * allocation's too (a page of nobody's is -EINVAL).
 */
static int sim_fill(struct sim_table *t, u64 va, u64 len, struct sim_proc *p)
{
	unsigned int dev = (va - SIM_VA_BASE) >> SIM_VA_SHIFT;
	struct sim_alloc *a = sim_find_own(va, dev, p);
	u64 i, n, pg;

	if (!a || (va & (sim_page_size - 1)) ||
	    ((va + len - 1 - SIM_VA_BASE) >> SIM_VA_SHIFT) != dev)
		return -EOPNOTSUPP;
	n = p2p_page_count(va, len, sim_page_size);
	/* the driver's kvzalloc: a table of a 64 GiB window is large */
	t->pt.pages_info = kvcalloc(n, sizeof(*t->pt.pages_info),
				    GFP_KERNEL | __GFP_NOWARN);
	if (!t->pt.pages_info)
		return -EINVAL;		/* the driver's kvzalloc failing */
	for (i = 0; i < n; i++) {
		pg = va + i * sim_page_size;
		if (pg >= a->va + a->size)
			a = sim_find_own(pg, dev, p);
		if (!a)
			return -EINVAL;	/* no page there: the table not built */
		t->pt.pages_info[i].pa = sim_dev_pa(&sim_devs[dev],
			a->first + (pg - a->va) / sim_page_size);
	}
	t->pt.version = P2P_GET_PAGE_VERSION;
	t->pt.page_size = sim_page_size;
	t->pt.page_num = n;
	t->va = va;
	t->len = n * sim_page_size;
	t->dev = dev;
	return 0;
}

/* The driver's lock is held by this task's free loop: it would deadlock. */
static bool sim_in_loop(struct sim_mng *m, atomic_t *count, const char *what)
{
	if (READ_ONCE(m->holder) != current)
		return false;
	atomic_inc(count);
	WARN(1, "npu_sim: %s from inside a free callback of the same process and device: the Ascend driver deadlocks here\n",
	     what);
	return true;
}

int hal_kernel_p2p_get_pages(u64 va, u64 len, p2p_free_callback free_cb,
			     void *data, struct p2p_page_table **out)
{
	struct sim_table *t;
	struct sim_proc *p;
	struct sim_mng *m;
	int ret;

	if (!sim_in_svm(va) || !len || va + len < va ||
	    !sim_in_svm(va + len - 1) || !free_cb || !out) {
		atomic_inc(&sim_stats.refused);
		return -EINVAL;
	}
	if (!try_module_get(THIS_MODULE))
		return -EPERM;
	p = sim_proc_find(current->tgid);	/* the table's reference */
	if (!p) {
		atomic_inc(&sim_stats.refused);
		ret = -ESRCH;		/* no svm process for current->tgid */
		goto out_mod;
	}
	m = &p->mng[(va - SIM_VA_BASE) >> SIM_VA_SHIFT];
	if (sim_in_loop(m, &sim_stats.get_in_callback, "get_pages")) {
		ret = -EDEADLK;
		goto out_proc;
	}
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		ret = -ENOMEM;
		goto out_proc;
	}
	mutex_lock(&m->lock);
	mutex_lock(&sim_lock);
	ret = sim_fill(t, va, len, p);
	if (!ret) {
		t->proc = p;
		t->free_cb = free_cb;
		t->data = data;
		list_add_tail(&t->node, &m->tables);
		list_add_tail(&t->all, &sim_tables);
	}
	mutex_unlock(&sim_lock);
	mutex_unlock(&m->lock);
	if (ret) {
		atomic_inc(&sim_stats.refused);
		kvfree(t->pt.pages_info);
		kfree(t);
		goto out_proc;
	}
	atomic_add(t->pt.page_num, &sim_stats.pinned_pages);
	atomic_inc(&sim_stats.tables);
	*out = &t->pt;
	module_put(THIS_MODULE);
	return 0;

out_proc:
	sim_proc_put(p);
out_mod:
	module_put(THIS_MODULE);
	return ret;
}
EXPORT_SYMBOL_GPL(hal_kernel_p2p_get_pages);

/*
 * The driver's put_pages: -EBUSY while it cannot take its own module;
 * else under the lock of the table's process and device (waiting out a
 * free loop), unless that process has exited, then the table is freed.
 */
int hal_kernel_p2p_put_pages(struct p2p_page_table *pt)
{
	struct sim_table *t, *it;
	struct sim_mng *m = NULL;
	bool live = false;

	if (!pt)
		return -EINVAL;
	if (!try_module_get(THIS_MODULE))
		return -EBUSY;
	t = container_of(pt, struct sim_table, pt);
	mutex_lock(&sim_lock);
	/* live, and not being put by another caller meanwhile */
	list_for_each_entry(it, &sim_tables, all)
		if (it == t) {
			live = !t->putting;
			break;
		}
	if (live && fail_put) {
		fail_put--;
		live = false;
		atomic_inc(&sim_stats.put_refused);
		mutex_unlock(&sim_lock);
		module_put(THIS_MODULE);
		return -EBUSY;		/* the table stays as it was */
	}
	if (live && t->proc->users)
		m = &t->proc->mng[t->dev];
	if (live)
		t->putting = true;
	mutex_unlock(&sim_lock);
	if (!live) {
		/* the driver reads freed memory here */
		atomic_inc(&sim_stats.put_unknown);
		WARN(1, "npu_sim: put_pages of a table not taken or put already: the Ascend driver frees it twice\n");
		module_put(THIS_MODULE);
		return -EINVAL;
	}
	if (m && sim_in_loop(m, &sim_stats.put_in_callback, "put_pages")) {
		mutex_lock(&sim_lock);
		t->putting = false;	/* the table stays: the caller's to put */
		mutex_unlock(&sim_lock);
		module_put(THIS_MODULE);
		return -EDEADLK;
	}
	if (m)
		mutex_lock(&m->lock);
	mutex_lock(&sim_lock);
	list_del(&t->node);
	list_del(&t->all);
	mutex_unlock(&sim_lock);
	if (m)
		mutex_unlock(&m->lock);
	if (t->freed)
		atomic_dec(&sim_stats.freed_unput);
	atomic_sub(pt->page_num, &sim_stats.pinned_pages);
	atomic_dec(&sim_stats.tables);
	sim_proc_put(t->proc);
	kvfree(pt->pages_info);
	kfree(t);
	module_put(THIS_MODULE);
	return 0;
}
EXPORT_SYMBOL_GPL(hal_kernel_p2p_put_pages);

/* At unload: drop the tables never put, which the driver would leak. */
unsigned int sim_hal_drop_freed(void)
{
	struct sim_table *t, *tt;
	unsigned int n = 0;

	list_for_each_entry_safe(t, tt, &sim_freed, node) {
		list_del(&t->node);
		list_del(&t->all);
		sim_proc_put(t->proc);
		kvfree(t->pt.pages_info);
		kfree(t);
		n++;
	}
	return n;
}
