// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sim.ko - an emulated Ascend NPU.  It plays the Ascend driver towards
 * npu_peer_mem: the HAL by name, with the driver's layout and rules
 * (npu_sim_hal.c).  Towards the rig it plays the NPU runtime: an allocator
 * and copies for kernel code (npu_sim.h) and /dev/npu_simN for processes
 * (npu_sim_dev.c).  Its HBM, the allocations and who owns them are the
 * pool's (npu_sim_pool.c); HBM behind a PCI BAR is npu_sim_bar.c's.
 * This file loads and unloads them, and shows the counters in debugfs.
 * Once memory is freed and its free callbacks have returned, it is
 * poisoned and goes to the next allocation, so a late DMA into it
 * corrupts someone's data.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/string.h>

#include "npu_sim_pool.h"

static struct dentry *sim_debugfs;

static int sim_stats_show(struct seq_file *m, void *v)
{
	unsigned int d;

	seq_printf(m, "devices %u\npage_size %lu\nhbm_mb %lu\n", npu_devs,
		   sim_page_size, hbm_mb);
	for (d = 0; d < npu_devs; d++)
		seq_printf(m, "backing%u %s\nhbm_bytes%u %lu\n", d,
			   sim_devs[d].bar ? "bar" : "ram", d,
			   sim_devs[d].npages * sim_page_size);
	seq_printf(m, "allocs %d\nhal_tables %d\nhal_pages %d\nfreed_unput %d\nrefused %d\nput_refused %d\n",
		   atomic_read(&sim_stats.allocs),
		   atomic_read(&sim_stats.tables),
		   atomic_read(&sim_stats.pinned_pages),
		   atomic_read(&sim_stats.freed_unput),
		   atomic_read(&sim_stats.refused),
		   atomic_read(&sim_stats.put_refused));
	/* where the driver would deadlock or free twice: refused instead */
	seq_printf(m, "get_in_callback %d\nput_in_callback %d\nput_unknown %d\nviolations %d\n",
		   atomic_read(&sim_stats.get_in_callback),
		   atomic_read(&sim_stats.put_in_callback),
		   atomic_read(&sim_stats.put_unknown),
		   atomic_read(&sim_stats.get_in_callback) +
		   atomic_read(&sim_stats.put_in_callback) +
		   atomic_read(&sim_stats.put_unknown));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_stats);

static int __init npu_sim_init(void)
{
	unsigned int d;
	int ret;

	ret = sim_pool_init();
	if (ret)
		return ret;
	ret = sim_bar_register();
	if (ret)
		return ret;
	if (!strcmp(backing, "bar") && sim_bar_count() < npu_devs) {
		pr_err("npu_sim: backing=bar: %u ivshmem device(s) for %u NPU(s)\n",
		       sim_bar_count(), npu_devs);
		ret = -ENODEV;
		goto fail;
	}
	for (d = 0; d < npu_devs; d++) {
		struct sim_dev *sd = &sim_devs[d];

		ret = d < sim_bar_count() ? sim_take_bar(sd, d) :
		      sim_take_ram(sd);
		if (!ret)
			ret = sim_dev_ready(sd);
		if (ret) {
			pr_err("npu_sim: no HBM for NPU %u: %d\n", d, ret);
			goto fail;
		}
	}
	ret = sim_misc_add();
	if (ret) {
		pr_err("npu_sim: cannot register /dev/npu_simN\n");
		goto fail;
	}
	sim_debugfs = debugfs_create_dir("npu_sim", NULL);
	debugfs_create_file("stats", 0400, sim_debugfs, NULL, &sim_stats_fops);
	for (d = 0; d < npu_devs; d++)
		pr_info("npu_sim: NPU %u: %lu MiB of HBM in %s, %lu-byte pages\n",
			d, sim_devs[d].npages * sim_page_size >> 20,
			sim_devs[d].bar ? "a PCI BAR" : "RAM", sim_page_size);
	return 0;
fail:
	sim_pool_exit();
	sim_bar_unregister();
	return ret;
}

/*
 * Nobody holds a table of a live allocation: npu_peer_mem holds a module
 * reference while it is bound.  A table never put is a leak on the real
 * driver: say so.
 */
static void __exit npu_sim_exit(void)
{
	unsigned int leaked;

	sim_misc_remove();
	debugfs_remove_recursive(sim_debugfs);
	sim_pool_exit();
	leaked = sim_hal_drop_freed();
	if (leaked)
		pr_err("npu_sim: %u page table(s) never put (a leak on the Ascend driver)\n",
		       leaked);
	sim_bar_unregister();
}

module_init(npu_sim_init);
module_exit(npu_sim_exit);

MODULE_AUTHOR("krping_npu developers");
MODULE_DESCRIPTION("Emulated Ascend NPU: the HAL's P2P page tables and rules, an allocator");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(KP_VERSION);
