// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_peer_main.c - npu_peer_mem.ko: bind the Ascend HAL (the driver's on
 * a real host, npu_sim.ko's in the rig: the same code), register the
 * peer-memory client with the RDMA core's peer-memory API when there is
 * one, in the layout that core expects, and offer the same callbacks to
 * krping_npu (npu_peer_mem_get_ops()).
 *
 * abi=auto picks the layout by the module that owns
 * ib_register_peer_memory_client: an xsc module takes the 152-byte
 * YunScale layout, anything else the 136-byte MOFED 5 one.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "npu_peer_mem.h"
#include "npu_peer_client.h"

static char *abi = "auto";
module_param(abi, charp, 0444);
MODULE_PARM_DESC(abi, "peer-memory layout: auto, mofed (136 B) or yunscale (152 B)");
static bool abi_stubs;
module_param(abi_stubs, bool, 0444);
MODULE_PARM_DESC(abi_stubs, "yunscale: stubs returning NULL instead of NULL pointers");
static bool ibt_selftest;
module_param(ibt_selftest, bool, 0444);
MODULE_PARM_DESC(ibt_selftest, "at load, check that the IBT entry check refuses a non-entry");

typedef void *(*register_peer_t)(const void *client,
				 invalidate_peer_memory *invalidate);
typedef void (*unregister_peer_t)(void *reg_handle);

static unregister_peer_t npu_unregister;
static struct npu_sym npu_reg_sym, npu_unreg_sym;
static const char *npu_abi_name = "none";
static size_t npu_abi_size;
static struct dentry *npu_debugfs;
static const char *npu_hal_owner = "none";
static const struct npu_peer_mem_ops npu_ops = {
	.version = NPU_PEER_MEM_OPS_VERSION,
	.client = &npu_client.mofed,
	.acquire = npu_acquire_direct,
	.page_pa = npu_page_pa,
};

static void *npu_stub_get_context(u64 peer_id)
{
	return NULL;
}

static void npu_stub_put_context(void *context)
{
}

/* Register with the core's peer-memory API; 0 when there is none. */
static int npu_register(void)
{
	register_peer_t register_fn;
	bool yunscale;
	const char *owner;
	int ret;

	ret = npu_sym_get("ib_register_peer_memory_client", &npu_reg_sym);
	if (ret == -ENOENT) {
		pr_info("npu_peer_mem: no peer-memory core (ib_register_peer_memory_client); serving krping_npu only\n");
		return 0;
	}
	if (ret)
		return ret;
	ret = npu_sym_get("ib_unregister_peer_memory_client", &npu_unreg_sym);
	if (ret) {
		pr_err("npu_peer_mem: ib_register_peer_memory_client without its unregister (%d)\n",
		       ret);
		goto err;
	}
	owner = npu_reg_sym.owner;

	if (!strcmp(abi, "auto")) {
		yunscale = strstr(owner, "xsc");
	} else if (!strcmp(abi, "yunscale")) {
		yunscale = true;
	} else if (!strcmp(abi, "mofed")) {
		yunscale = false;
	} else {
		pr_err("npu_peer_mem: abi=%s: use auto, mofed or yunscale\n", abi);
		ret = -EINVAL;
		goto err;
	}
	if (yunscale && abi_stubs) {
		npu_client.get_context_private_data = npu_stub_get_context;
		npu_client.put_context_private_data = npu_stub_put_context;
	}
	npu_abi_name = yunscale ? "yunscale" : "mofed";
	npu_abi_size = yunscale ? sizeof(struct peer_memory_client_yunscale) :
		       sizeof(struct peer_memory_client_mofed);

	register_fn = (register_peer_t)npu_reg_sym.addr;
	npu_reg_handle = register_fn(&npu_client, &npu_core_invalidate);
	if (!npu_reg_handle) {
		pr_err("npu_peer_mem: %s refused the client (%s layout)\n",
		       owner, npu_abi_name);
		npu_abi_name = "none";
		ret = -EINVAL;
		goto err;
	}
	npu_unregister = (unregister_peer_t)npu_unreg_sym.addr;
	pr_info("npu_peer_mem: registered with %s: abi %s, struct %zu bytes, tail %s\n",
		owner, npu_abi_name, npu_abi_size,
		!yunscale ? "none" : abi_stubs ? "stubs" : "NULL");
	return 0;
err:
	npu_sym_put(&npu_unreg_sym);
	npu_sym_put(&npu_reg_sym);
	return ret;
}

static int npu_stats_show(struct seq_file *m, void *v)
{
	/* deferred put_pages count as done; a retry waiting its 100 ms not */
	flush_workqueue(npu_wq);
	seq_printf(m, "provider %s\nhal %s\nabi %s\nstruct_size %zu\nibt %d\n",
		   npu_prov->name, npu_hal_owner, npu_abi_name, npu_abi_size,
		   IS_ENABLED(CONFIG_X86_KERNEL_IBT));
	seq_printf(m, "pinned_pages %d\nmappings %d\ncontexts %d\ninvalidations %d\n",
		   atomic_read(&npu_stats.pinned_pages),
		   atomic_read(&npu_stats.mappings),
		   atomic_read(&npu_stats.contexts),
		   atomic_read(&npu_stats.invalidations));
	seq_printf(m, "tables %d\ndeferred_puts %d\nput_failures %d\nleaked_tables %d\n",
		   atomic_read(&npu_stats.tables),
		   atomic_read(&npu_stats.deferred_puts),
		   atomic_read(&npu_stats.put_failures),
		   atomic_read(&npu_stats.leaked_tables));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(npu_stats);

/* Any write: put every kept table again (npu_retry_kept()). */
static ssize_t npu_retry_write(struct file *file, const char __user *buf,
			       size_t len, loff_t *pos)
{
	pr_info("npu_peer_mem: %u kept table(s) put again\n", npu_retry_kept());
	return len;
}

static const struct file_operations npu_retry_fops = {
	.owner = THIS_MODULE,
	.write = npu_retry_write,
};
DEFINE_SHOW_ATTRIBUTE(npu_sym);

const struct npu_peer_mem_ops *npu_peer_mem_get_ops(void)
{
	return &npu_ops;
}
EXPORT_SYMBOL_GPL(npu_peer_mem_get_ops);

static int __init npu_peer_init(void)
{
	int ret;

	if (ibt_selftest) {
		ret = npu_sym_ibt_selftest();
		if (ret)
			return ret;
	}
	npu_wq = alloc_workqueue("npu_peer_mem", WQ_UNBOUND, 0);
	if (!npu_wq)
		return -ENOMEM;
	ret = npu_hal_bind(&npu_prov, &npu_hal_owner);
	if (ret) {
		pr_err("npu_peer_mem: no Ascend HAL (hal_kernel_p2p_get_pages: %d): load the NPU driver, or npu_sim.ko in the rig, first\n",
		       ret);
		goto err_wq;
	}
	pr_info("npu_peer_mem: HAL of %s\n", npu_hal_owner);
	ret = npu_register();
	if (ret)
		goto err;
	npu_debugfs = debugfs_create_dir("npu_peer_mem", NULL);
	debugfs_create_file("stats", 0400, npu_debugfs, NULL, &npu_stats_fops);
	debugfs_create_file("symbols", 0400, npu_debugfs, NULL, &npu_sym_fops);
	debugfs_create_file("retry_puts", 0200, npu_debugfs, NULL, &npu_retry_fops);
	return 0;
err:
	npu_hal_unbind();
err_wq:
	destroy_workqueue(npu_wq);
	return ret;
}

static void __exit npu_peer_exit(void)
{
	debugfs_remove_recursive(npu_debugfs);
	if (npu_reg_handle) {
		npu_unregister(npu_reg_handle);
		npu_sym_put(&npu_unreg_sym);
		npu_sym_put(&npu_reg_sym);
	}
	destroy_workqueue(npu_wq);
	npu_hal_unbind();
}

module_init(npu_peer_init);
module_exit(npu_peer_exit);

MODULE_AUTHOR("krping_npu developers");
MODULE_DESCRIPTION("Peer-memory client for NPU memory through the Ascend HAL (MOFED and YunScale layouts)");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_INFO(rdma_stack, KP_RDMA_STACK);
MODULE_VERSION(KP_VERSION);
