// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sim_hal.c - the emulated NPU's Ascend HAL, exported by name as the
 * driver's: hal_kernel_p2p_get_pages and hal_kernel_p2p_put_pages with
 * its signature, page-table layout (ascend_hal_abi.h) and rules:
 *  - memory belongs to a process: get_pages from any other process finds
 *    no such address, as the driver looks it up in current->tgid's space;
 *  - a free callback given, len page aligned (else -EINVAL; the driver
 *    itself rounds len up), va page aligned (else -EOPNOTSUPP, as the
 *    driver answers a start off the memory's pages);
 *  - va in the caller's memory (else -EINVAL: not found), and the range
 *    within that allocation (else -EFAULT), never beyond it;
 *  - a table lives from get_pages to its put_pages, also after its memory
 *    was freed; put_pages waits for a free callback running on its table,
 *    so called from inside one it would deadlock: refused with a WARN;
 *  - a table never put is a leak: counted, and reported at unload;
 *  - put_pages can be refused on demand (fail_put=N): the table stays.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched.h>

#include "npu_sim_pool.h"

/*
 * Refuse this many put_pages from now, with -EBUSY and the table kept, as
 * the driver's put_pages does while it cannot take its own module.
 */
static unsigned int fail_put;
module_param(fail_put, uint, 0644);
MODULE_PARM_DESC(fail_put, "refuse the next N put_pages (-EBUSY), tables kept");

/* The Ascend HAL's get_pages, with the driver's rules (above). */
int hal_kernel_p2p_get_pages(u64 va, u64 len, p2p_free_callback free_cb,
			     void *data, struct p2p_page_table **out)
{
	struct sim_table *t;
	struct sim_alloc *a;
	unsigned long first, i;
	int ret = 0;

	if (!out || !free_cb || !len) {
		atomic_inc(&sim_stats.refused);
		return -EINVAL;
	}
	if (va & (sim_page_size - 1)) {
		/* as the Ascend driver: a start off the memory's pages */
		atomic_inc(&sim_stats.refused);
		return -EOPNOTSUPP;
	}
	if (len & (sim_page_size - 1)) {
		atomic_inc(&sim_stats.refused);
		return -EINVAL;
	}
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	mutex_lock(&sim_lock);
	a = sim_find(va, 1);
	if (!a || a->tgid != current->tgid) {
		/* looked up in the caller's address space: not there */
		atomic_inc(&sim_stats.refused);
		ret = -EINVAL;
		goto out;
	}
	if (len > a->size - (va - a->va)) {
		/* runs past the end of the caller's memory */
		atomic_inc(&sim_stats.refused);
		ret = -EFAULT;
		goto out;
	}
	first = (va - a->va) / sim_page_size;
	t->pt.version = P2P_GET_PAGE_VERSION;
	t->pt.page_size = sim_page_size;
	t->pt.page_num = len / sim_page_size;
	t->pt.pages_info = kcalloc(t->pt.page_num, sizeof(*t->pt.pages_info),
				   GFP_KERNEL);
	if (!t->pt.pages_info) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->pt.page_num; i++)
		t->pt.pages_info[i].pa =
			sim_dev_pa(&sim_devs[a->dev], a->first + first + i);
	t->free_cb = free_cb;
	t->data = data;
	list_add_tail(&t->node, &a->tables);
	atomic_add(t->pt.page_num, &sim_stats.pinned_pages);
	atomic_inc(&sim_stats.tables);
	*out = &t->pt;
out:
	mutex_unlock(&sim_lock);
	if (ret)
		kfree(t);
	return ret;
}
EXPORT_SYMBOL_GPL(hal_kernel_p2p_get_pages);

int hal_kernel_p2p_put_pages(struct p2p_page_table *pt)
{
	struct sim_table *t;
	bool freed;

	if (!pt)
		return -EINVAL;
	t = container_of(pt, struct sim_table, pt);
	/* no callback on the table from the check to the unlink */
	mutex_lock(&sim_lock);
	if (fail_put) {
		/* the table stays as it was: the caller's to put again */
		fail_put--;
		mutex_unlock(&sim_lock);
		atomic_inc(&sim_stats.put_refused);
		return -EBUSY;
	}
	while (t->cb_task) {
		if (t->cb_task == current) {
			mutex_unlock(&sim_lock);
			atomic_inc(&sim_stats.put_in_callback);
			WARN(1, "npu_sim: put_pages from inside the free callback: the Ascend driver deadlocks here\n");
			return -EDEADLK;
		}
		mutex_unlock(&sim_lock);
		wait_event(sim_cb_wq, !READ_ONCE(t->cb_task));
		mutex_lock(&sim_lock);
	}
	freed = t->freed;
	list_del(&t->node);
	mutex_unlock(&sim_lock);
	if (freed)
		atomic_dec(&sim_stats.freed_unput);
	atomic_sub(pt->page_num, &sim_stats.pinned_pages);
	atomic_dec(&sim_stats.tables);
	kfree(pt->pages_info);
	kfree(t);
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
		kfree(t->pt.pages_info);
		kfree(t);
		n++;
	}
	return n;
}
