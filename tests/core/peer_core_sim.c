// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * peer_core_sim.c - a stand-in for an RDMA core's peer-memory API, for
 * tests only.  Built twice: mofed_core_sim.ko behaves like the MOFED 5
 * core, xsc_core_sim.ko like YunScale's xsc (module parameter "mode"
 * overrides).  It exports ib_register_peer_memory_client and
 * ib_unregister_peer_memory_client, refuses a client missing a mandatory
 * callback, and on "reg" drives a client through a user-MR registration in
 * its core's call order:
 *
 *   mofed: acquire, get_pages, dma_map, get_page_size
 *   xsc:   acquire, get_pages, get_page_size, dma_map
 *
 * Its invalidate callback unmaps and unpins from inside (MOFED) or only
 * marks the MR (xsc: deregistration undoes it later).  The xsc view reads
 * the two YunScale pointers at offsets 136 and 144 and never calls them.
 *
 * /sys/kernel/debug/<module>/ctl takes: alloc SIZE | reg VA SIZE |
 * dereg ID | free VA | cycles N VA SIZE | refuse_test; status reports.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <linux/log2.h>

#include "../../peer_client/npu_peer_mem.h"

static char *mode = CORE_SIM_DEFAULT_MODE;
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "core to behave like: mofed or xsc");
static int unmap_in_invalidate = -1;
module_param(unmap_in_invalidate, int, 0444);
MODULE_PARM_DESC(unmap_in_invalidate, "-1: as the core does (mofed 1, xsc 0)");
static bool real_dma;
module_param(real_dma, bool, 0444);
MODULE_PARM_DESC(real_dma, "map for a DMA-capable platform device, not virt-DMA");

struct core_mr {
	struct list_head node;
	u32 id;
	u64 va;
	size_t size;
	void *ctx;
	struct sg_table sgt;
	bool mapped;
	bool pinned;
	bool invalidated;
};

static DEFINE_MUTEX(core_lock);		/* serialises ctl commands */
static DEFINE_SPINLOCK(core_mr_lock);	/* core_mrs */
static LIST_HEAD(core_mrs);
static const struct peer_memory_client_mofed *core_client;
static bool core_xsc;
static bool core_unmap_inval;
static bool tail_get, tail_put;		/* what the xsc view saw */
static int core_handle;
static atomic_t core_invalidations;
static u32 core_next_id;
static u64 last_va;
static u32 last_id;
static unsigned long last_page_size;
static int last_nmap;
static int refuse_ok = -1;
static struct platform_device *core_pdev;
static struct dentry *core_dir;

static struct device *core_dma_dev(void)
{
	return core_pdev ? &core_pdev->dev : NULL;
}

static int core_invalidate(void *reg_handle, u64 core_context)
{
	struct core_mr *mr, *found = NULL;

	if (reg_handle != &core_handle)
		return -EINVAL;
	spin_lock(&core_mr_lock);
	list_for_each_entry(mr, &core_mrs, node)
		if (mr->id == core_context)
			found = mr;
	spin_unlock(&core_mr_lock);
	if (!found || found->invalidated)
		return -ENOENT;
	found->invalidated = true;
	atomic_inc(&core_invalidations);
	if (core_unmap_inval) {
		if (found->mapped)
			core_client->dma_unmap(&found->sgt, found->ctx,
					       core_dma_dev());
		found->mapped = false;
		if (found->pinned)
			core_client->put_pages(&found->sgt, found->ctx);
		found->pinned = false;
	}
	return 0;
}

static bool core_client_complete(const struct peer_memory_client_mofed *c)
{
	return c->acquire && c->get_pages && c->dma_map && c->dma_unmap &&
	       c->put_pages && c->get_page_size && c->release;
}

void *ib_register_peer_memory_client(const struct peer_memory_client_mofed *c,
				     invalidate_peer_memory *invalidate)
{
	if (!core_client_complete(c)) {
		pr_err("%s: refusing peer client '%.64s': a mandatory callback is missing\n",
		       KBUILD_MODNAME, c->name);
		return NULL;
	}
	if (core_client)
		return NULL;
	if (core_xsc) {
		const struct peer_memory_client_yunscale *y = (const void *)c;

		tail_get = y->get_context_private_data;
		tail_put = y->put_context_private_data;
	}
	core_client = c;
	*invalidate = core_invalidate;
	pr_info("%s: peer client '%.64s' %.16s registered (%s view, %u bytes)\n",
		KBUILD_MODNAME, c->name, c->version, core_xsc ? "xsc" : "mofed",
		core_xsc ? PEER_MEM_YUNSCALE_SIZE : PEER_MEM_MOFED_SIZE);
	return &core_handle;
}
EXPORT_SYMBOL(ib_register_peer_memory_client);

void ib_unregister_peer_memory_client(void *reg_handle)
{
	if (reg_handle == &core_handle)
		core_client = NULL;
}
EXPORT_SYMBOL(ib_unregister_peer_memory_client);

static int core_reg(u64 va, size_t size)
{
	const struct peer_memory_client_mofed *c = core_client;
	unsigned long ps = 0;
	struct core_mr *mr;
	int nmap = 0, ret;

	if (!c)
		return -ENODEV;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	mr->va = va;
	mr->size = size;
	mr->id = ++core_next_id;
	if (c->acquire(va, size, NULL, NULL, &mr->ctx) != 1) {
		kfree(mr);
		return -ENOENT;		/* not peer memory */
	}
	ret = c->get_pages(va, size, 1, 0, &mr->sgt, mr->ctx, mr->id);
	if (ret)
		goto release;
	mr->pinned = true;
	spin_lock(&core_mr_lock);
	list_add(&mr->node, &core_mrs);
	spin_unlock(&core_mr_lock);
	if (core_xsc)
		ps = c->get_page_size(mr->ctx);
	ret = c->dma_map(&mr->sgt, mr->ctx, core_dma_dev(), 0, &nmap);
	if (ret)
		goto unpin;
	mr->mapped = true;
	if (!core_xsc)
		ps = c->get_page_size(mr->ctx);
	if (!is_power_of_2(ps) || nmap != (int)DIV_ROUND_UP(size + (va & (ps - 1)), ps)) {
		pr_err("%s: page size %lu and %d entries do not cover %zu bytes\n",
		       KBUILD_MODNAME, ps, nmap, size);
		ret = -EINVAL;
		goto unmap;
	}
	last_id = mr->id;
	last_page_size = ps;
	last_nmap = nmap;
	return 0;
unmap:
	c->dma_unmap(&mr->sgt, mr->ctx, core_dma_dev());
unpin:
	spin_lock(&core_mr_lock);
	list_del(&mr->node);
	spin_unlock(&core_mr_lock);
	c->put_pages(&mr->sgt, mr->ctx);
release:
	c->release(mr->ctx);
	kfree(mr);
	return ret;
}

/* Deregister: what invalidation did not undo, then release. */
static int core_dereg(u32 id)
{
	struct core_mr *mr, *found = NULL;

	spin_lock(&core_mr_lock);
	list_for_each_entry(mr, &core_mrs, node)
		if (mr->id == id)
			found = mr;
	if (found)
		list_del(&found->node);
	spin_unlock(&core_mr_lock);
	if (!found)
		return -ENOENT;
	if (found->mapped)
		core_client->dma_unmap(&found->sgt, found->ctx, core_dma_dev());
	if (found->pinned)
		core_client->put_pages(&found->sgt, found->ctx);
	core_client->release(found->ctx);
	kfree(found);
	return 0;
}

static int core_refuse_test(void)
{
	struct peer_memory_client_mofed *copy;
	void *h;

	if (!core_client)
		return -ENODEV;
	copy = kmemdup(core_client, sizeof(*copy), GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	copy->dma_map = NULL;
	h = ib_register_peer_memory_client(copy, &(invalidate_peer_memory){ NULL });
	kfree(copy);
	refuse_ok = !h;
	return h ? -EINVAL : 0;
}

static int core_cmd(char *cmd)
{
	const struct npu_peer_mem_ops *(*get_ops)(void);
	const struct npu_peer_mem_ops *ops;
	unsigned long long a, b, n, i;
	int ret = -EINVAL;

	get_ops = symbol_get(npu_peer_mem_get_ops);
	ops = get_ops ? get_ops() : NULL;
	if (sscanf(cmd, "alloc %llu", &a) == 1) {
		last_va = ops ? ops->alloc(0, a) : 0;
		ret = last_va ? 0 : -ENOMEM;
	} else if (sscanf(cmd, "reg %llx %llu", &a, &b) == 2) {
		ret = core_reg(a, b);
	} else if (sscanf(cmd, "dereg %llu", &a) == 1) {
		ret = core_dereg(a);
	} else if (sscanf(cmd, "free %llx", &a) == 1) {
		ret = ops ? ops->free(a) : -ENODEV;
	} else if (sscanf(cmd, "cycles %llu %llx %llu", &n, &a, &b) == 3) {
		for (i = 0, ret = 0; i < n && !ret; i++) {
			ret = core_reg(a, b);
			if (!ret)
				ret = core_dereg(last_id);
		}
	} else if (!strncmp(cmd, "refuse_test", 11)) {
		ret = core_refuse_test();
	}
	if (get_ops)
		symbol_put(npu_peer_mem_get_ops);
	return ret;
}

static ssize_t core_ctl_write(struct file *f, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	char buf[96];
	int ret;

	if (len >= sizeof(buf))
		return -E2BIG;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mutex_lock(&core_lock);
	ret = core_cmd(buf);
	mutex_unlock(&core_lock);
	return ret ? ret : (ssize_t)len;
}

static const struct file_operations core_ctl_fops = {
	.owner = THIS_MODULE,
	.write = core_ctl_write,
};

static int core_status_show(struct seq_file *m, void *v)
{
	const struct peer_memory_client_mofed *c = core_client;
	struct core_mr *mr;
	int n = 0;

	spin_lock(&core_mr_lock);
	list_for_each_entry(mr, &core_mrs, node)
		n++;
	spin_unlock(&core_mr_lock);
	seq_printf(m, "mode %s\nunmap_in_invalidate %d\n", core_xsc ? "xsc" : "mofed",
		   core_unmap_inval);
	seq_printf(m, "client %.64s\nversion %.16s\n", c ? c->name : "-",
		   c ? c->version : "-");
	seq_printf(m, "struct_size %u\n", core_xsc ? PEER_MEM_YUNSCALE_SIZE :
		   PEER_MEM_MOFED_SIZE);
	seq_printf(m, "get_context_private_data %s\nput_context_private_data %s\n",
		   !core_xsc ? "unread" : tail_get ? "set" : "null",
		   !core_xsc ? "unread" : tail_put ? "set" : "null");
	seq_printf(m, "mrs %d\ninvalidations %d\n", n,
		   atomic_read(&core_invalidations));
	seq_printf(m, "last_va 0x%llx\nlast_id %u\nlast_page_size %lu\nlast_nmap %d\n",
		   last_va, last_id, last_page_size, last_nmap);
	seq_printf(m, "refuse_ok %d\nreal_dma %d\n", refuse_ok, !!core_pdev);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(core_status);

static int __init core_init(void)
{
	if (strcmp(mode, "mofed") && strcmp(mode, "xsc"))
		return -EINVAL;
	core_xsc = !strcmp(mode, "xsc");
	core_unmap_inval = unmap_in_invalidate < 0 ? !core_xsc :
			   unmap_in_invalidate;
	if (real_dma) {
		core_pdev = platform_device_register_simple(KBUILD_MODNAME "_dma",
							    -1, NULL, 0);
		if (IS_ERR(core_pdev))
			return PTR_ERR(core_pdev);
		if (dma_coerce_mask_and_coherent(&core_pdev->dev,
						 DMA_BIT_MASK(64))) {
			platform_device_unregister(core_pdev);
			return -EIO;
		}
	}
	core_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("ctl", 0200, core_dir, NULL, &core_ctl_fops);
	debugfs_create_file("status", 0400, core_dir, NULL, &core_status_fops);
	return 0;
}

static void __exit core_exit(void)
{
	struct core_mr *mr, *tmp;

	debugfs_remove_recursive(core_dir);
	list_for_each_entry_safe(mr, tmp, &core_mrs, node)
		core_dereg(mr->id);
	if (core_pdev)
		platform_device_unregister(core_pdev);
}

module_init(core_init);
module_exit(core_exit);

MODULE_DESCRIPTION("Test stand-in for an RDMA core's peer-memory API (MOFED 5 / xsc)");
MODULE_LICENSE("Dual BSD/GPL");
