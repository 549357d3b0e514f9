// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * peer_core_sim.c - a stand-in for an RDMA core's peer-memory API, for
 * tests only.  Built twice: mofed_core_sim.ko behaves like MOFED's core,
 * xsc_core_sim.ko like YunScale's xsc ("mode" overrides).  It exports
 * ib_register_peer_memory_client and ib_unregister_peer_memory_client,
 * refuses a client missing a mandatory callback, and on "reg" drives a
 * client through a user-MR registration the way its core release does
 * (peer-memory-facts.md):
 *
 *   release  order                                        core_context
 *   4.0      acquire, get_pages, get_page_size, dma_map   from 1
 *   5.1      acquire, get_pages, get_page_size, dma_map   from 0
 *   5.5      acquire, get_pages, dma_map, get_page_size,  from 0
 *            then the first/last entries are trimmed to the buffer
 *            (restored before dma_unmap)
 *   xsc      acquire, get_pages, get_page_size, dma_map   from 0
 *
 * Ids restart at the first with every client registration, as MOFED's
 * per-client xarray does.  Each MR has its own mapping lock: invalidate
 * takes it and (MOFED) unmaps and unpins from inside the callback;
 * deregistration holds it while unmapping and unpinning, then releases
 * the context outside it.  xsc's invalidate only marks the MR.
 *
 * /sys/kernel/debug/<module>/ctl takes: alloc SIZE | reg VA SIZE |
 * dereg ID | free VA | cycles N VA SIZE | race N SIZE dereg|reg |
 * refuse_test; status reports.  "race" runs N rounds in which two threads
 * bound to CPUs 0 and 1 start together: one frees the NPU memory, the
 * other deregisters (or registers) it.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/mutex.h>
#include <linux/kref.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/platform_device.h>
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <linux/log2.h>

#include "../../peer_client/npu_peer_mem.h"
#include "../../peer_client/npu_sim.h"

static char *mode = CORE_SIM_DEFAULT_MODE;
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "core to behave like: mofed or xsc");
static char *release = "5.5";
module_param(release, charp, 0444);
MODULE_PARM_DESC(release, "mofed: the core release modelled: 4.0, 5.1 or 5.5");
static int unmap_in_invalidate = -1;
module_param(unmap_in_invalidate, int, 0444);
MODULE_PARM_DESC(unmap_in_invalidate, "-1: as the core does (mofed 1, xsc 0)");
static bool real_dma;
module_param(real_dma, bool, 0444);
MODULE_PARM_DESC(real_dma, "map for a DMA-capable platform device, not virt-DMA");

struct core_mr {
	struct list_head node;
	struct kref ref;
	struct mutex lock;		/* mapping state, as MOFED's mapping_lock */
	u32 id;
	u64 va;
	size_t size;
	unsigned long page_size;
	void *ctx;
	struct sg_table sgt;
	int nmap;
	bool mapped;
	bool pinned;
	bool invalidated;
	bool dereg;			/* being deregistered */
	/* release 5.5: the trimmed entries and what they held */
	struct scatterlist *first_sg, *last_sg;
	dma_addr_t first_dma;
	unsigned int first_dma_len, first_len, last_dma_len, last_len;
};

static DEFINE_SPINLOCK(core_mr_lock);	/* core_mrs, ids, last_* */
static LIST_HEAD(core_mrs);
static const struct peer_memory_client_mofed *core_client;
static bool core_xsc;
static bool core_unmap_inval;
static bool core_ps_first;		/* get_page_size before dma_map */
static bool core_trim;			/* release 5.5: fix up the sgl */
static u32 core_first_id;
static bool tail_get, tail_put;		/* what the xsc view saw */
static int core_handle;
static atomic_t core_invalidations;
static atomic_t core_faults;		/* client misbehaviour the core saw */
static u32 core_next_id;
static u64 last_va;
static u32 last_id;
static unsigned long last_page_size;
static int last_nmap;
static int refuse_ok = -1;
static struct platform_device *core_pdev;
static struct dentry *core_dir;
static char race_result[160] = "none";

static struct device *core_dma_dev(void)
{
	return core_pdev ? &core_pdev->dev : NULL;
}

static void core_fault(const char *what, u32 id)
{
	atomic_inc(&core_faults);
	pr_err("%s: MR %u: %s\n", KBUILD_MODNAME, id, what);
}

static void core_mr_free(struct kref *ref)
{
	kfree(container_of(ref, struct core_mr, ref));
}

/* The MR with @id, referenced; NULL if there is none. */
static struct core_mr *core_mr_get(u32 id)
{
	struct core_mr *mr, *found = NULL;

	spin_lock(&core_mr_lock);
	list_for_each_entry(mr, &core_mrs, node)
		if (mr->id == id) {
			found = mr;
			kref_get(&mr->ref);
			break;
		}
	spin_unlock(&core_mr_lock);
	return found;
}

/* Release 5.5: trim the first and last entries to the buffer. */
static void core_trim_sgl(struct core_mr *mr)
{
	unsigned long ps = mr->page_size, off, trim;
	struct scatterlist *sg;
	int i;

	for_each_sg(mr->sgt.sgl, sg, mr->nmap, i) {
		if (!sg->length || sg->length != sg_dma_len(sg))
			core_fault("dma_map left sg->length unset", mr->id);
		if (i == 0) {
			mr->first_sg = sg;
			mr->first_dma = sg->dma_address;
			mr->first_dma_len = sg_dma_len(sg);
			mr->first_len = sg->length;
			off = ALIGN_DOWN(mr->va, PAGE_SIZE) - ALIGN_DOWN(mr->va, ps);
			sg->dma_address += off;
			sg_dma_len(sg) -= off;
			sg->length -= off;
		}
		if (i == mr->nmap - 1) {
			mr->last_sg = sg;
			mr->last_dma_len = sg_dma_len(sg);
			mr->last_len = sg->length;
			trim = ALIGN(mr->va + mr->size, ps) -
			       ALIGN(mr->va + mr->size, PAGE_SIZE);
			sg_dma_len(sg) -= trim;
			sg->length -= trim;
		}
	}
}

/*
 * Unmap and unpin what is still mapped, under mr->lock.  Release 5.5
 * first restores the entries it trimmed, writing into the client's
 * sg_table: a client that freed that table under a mapped MR would have
 * this core write into freed memory, reported here as a fault.
 */
static void core_unmap(struct core_mr *mr)
{
	if (mr->mapped) {
		if (core_trim && mr->first_sg) {
			if (!mr->sgt.sgl) {
				core_fault("the client freed the sg_table of a mapped MR",
					   mr->id);
			} else {
				mr->first_sg->dma_address = mr->first_dma;
				sg_dma_len(mr->first_sg) = mr->first_dma_len;
				mr->first_sg->length = mr->first_len;
				sg_dma_len(mr->last_sg) = mr->last_dma_len;
				mr->last_sg->length = mr->last_len;
			}
		}
		core_client->dma_unmap(&mr->sgt, mr->ctx, core_dma_dev());
		mr->mapped = false;
	}
	if (mr->pinned) {
		core_client->put_pages(&mr->sgt, mr->ctx);
		mr->pinned = false;
	}
}

static int core_invalidate(void *reg_handle, u64 core_context)
{
	struct core_mr *mr;

	if (reg_handle != &core_handle)
		return -EINVAL;
	if (core_context > U32_MAX)
		return -ENOENT;
	mr = core_mr_get(core_context);
	if (!mr)
		return 0;	/* being deregistered: nothing to stop */
	mutex_lock(&mr->lock);
	if (!mr->invalidated && (mr->mapped || mr->pinned)) {
		mr->invalidated = true;
		atomic_inc(&core_invalidations);
		if (core_unmap_inval)
			core_unmap(mr);
	}
	mutex_unlock(&mr->lock);
	kref_put(&mr->ref, core_mr_free);
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
	core_next_id = core_first_id;	/* a new client, a new id space */
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

static int core_reg(u64 va, size_t size, u32 *id)
{
	const struct peer_memory_client_mofed *c = core_client;
	struct core_mr *mr;
	unsigned long ps;
	int ret;

	if (!c)
		return -ENODEV;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	kref_init(&mr->ref);
	mutex_init(&mr->lock);
	mr->va = va;
	mr->size = size;
	if (c->acquire(va, size, NULL, NULL, &mr->ctx) != 1) {
		kfree(mr);
		return -ENOENT;		/* not peer memory */
	}
	spin_lock(&core_mr_lock);
	mr->id = core_next_id++;
	spin_unlock(&core_mr_lock);
	/*
	 * As MOFED (ib_peer_umem_get(), 5.1 to 25.10: umem_p->mapping_lock
	 * across get_pages, dma_map and get_page_size, and for a client that
	 * invalidates until the MR is activated): the mapping lock is held
	 * until the MR is complete.  Its get_pages may wait for a free loop
	 * of the same process and device,
	 * whose callbacks take the mapping lock of other MRs (invalidate);
	 * never this one's, which has no table yet: a lock of its own role
	 * for lockdep, not one cycle of one class.
	 */
	mutex_lock_nested(&mr->lock, SINGLE_DEPTH_NESTING);
	spin_lock(&core_mr_lock);
	list_add(&mr->node, &core_mrs);
	spin_unlock(&core_mr_lock);
	ret = c->get_pages(va, size, 1, 0, &mr->sgt, mr->ctx, mr->id);
	if (ret)
		goto unlist;
	mr->pinned = true;
	if (core_ps_first)
		mr->page_size = c->get_page_size(mr->ctx);
	ret = c->dma_map(&mr->sgt, mr->ctx, core_dma_dev(), 0, &mr->nmap);
	if (ret)
		goto unpin;
	mr->mapped = true;
	if (!core_ps_first)
		mr->page_size = c->get_page_size(mr->ctx);
	ps = mr->page_size;
	if (!is_power_of_2(ps) ||
	    mr->nmap != (int)DIV_ROUND_UP(size + (va & (ps - 1)), ps)) {
		pr_err("%s: page size %lu and %d entries do not cover %zu bytes\n",
		       KBUILD_MODNAME, ps, mr->nmap, size);
		ret = -EINVAL;
		goto unpin;
	}
	if (core_trim)
		core_trim_sgl(mr);
	mutex_unlock(&mr->lock);
	spin_lock(&core_mr_lock);
	last_id = mr->id;
	last_page_size = ps;
	last_nmap = mr->nmap;
	spin_unlock(&core_mr_lock);
	*id = mr->id;
	return 0;
unpin:
	core_unmap(mr);
unlist:
	spin_lock(&core_mr_lock);
	list_del(&mr->node);
	spin_unlock(&core_mr_lock);
	mutex_unlock(&mr->lock);
	c->release(mr->ctx);
	kref_put(&mr->ref, core_mr_free);
	return ret;
}

/* Deregister: what invalidation did not undo, then release. */
static int core_dereg(u32 id)
{
	struct core_mr *mr, *found = NULL;

	/*
	 * As MOFED: unmap and unpin under the mapping lock while the MR can
	 * still be found (an invalidation waits for the lock), and only then
	 * make it unfindable and release the context.
	 */
	spin_lock(&core_mr_lock);
	list_for_each_entry(mr, &core_mrs, node)
		if (mr->id == id && !mr->dereg) {
			found = mr;
			mr->dereg = true;	/* one deregistration only */
			break;
		}
	spin_unlock(&core_mr_lock);
	if (!found)
		return -ENOENT;
	mr = found;
	mutex_lock(&mr->lock);
	core_unmap(mr);
	mutex_unlock(&mr->lock);
	spin_lock(&core_mr_lock);
	list_del(&mr->node);		/* its reference is ours now */
	spin_unlock(&core_mr_lock);
	core_client->release(mr->ctx);
	kref_put(&mr->ref, core_mr_free);
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

/*
 * race: two threads, bound to CPUs 0 and 1, meet at a barrier each round;
 * then one frees the NPU memory while the other deregisters (or
 * registers) a registration of it.
 */
struct core_race {
	const struct npu_sim_ops *ops;
	size_t size;
	bool reg;		/* race a registration, not a deregistration */
	u64 va;
	u32 id;
	int ret[2];
	atomic_t arrived;
	struct completion start[2], done[2];
	bool stop;
};

static void core_race_act(struct core_race *r, int who)
{
	if (who == 0)
		r->ret[0] = r->ops->free(r->va);
	else if (r->reg)
		r->ret[1] = core_reg(r->va, r->size, &r->id);
	else
		r->ret[1] = core_dereg(r->id);
}

static int core_race_thread(struct core_race *r, int who)
{
	for (;;) {
		wait_for_completion(&r->start[who]);
		if (READ_ONCE(r->stop))
			break;
		atomic_inc(&r->arrived);
		while (atomic_read(&r->arrived) < 2)
			cpu_relax();
		core_race_act(r, who);
		complete(&r->done[who]);
	}
	/* core_race() stops us: no return into an unloaded module */
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

static int core_race_free_fn(void *data)
{
	return core_race_thread(data, 0);
}

static int core_race_map_fn(void *data)
{
	return core_race_thread(data, 1);
}

static int core_race(const struct npu_sim_ops *ops, unsigned long n,
		     size_t size, bool reg)
{
	struct task_struct *t[2];
	unsigned long i, reg_lost = 0;
	struct core_race *r;
	int ret = 0, k;

	if (!ops || num_online_cpus() < 2 || !cpu_online(0) || !cpu_online(1))
		return -ENODEV;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->ops = ops;
	r->size = size;
	r->reg = reg;
	for (k = 0; k < 2; k++) {
		init_completion(&r->start[k]);
		init_completion(&r->done[k]);
	}
	t[0] = kthread_create(core_race_free_fn, r, "%s/free", KBUILD_MODNAME);
	t[1] = IS_ERR(t[0]) ? t[0] :
	       kthread_create(core_race_map_fn, r, "%s/map", KBUILD_MODNAME);
	if (IS_ERR(t[1])) {
		if (!IS_ERR(t[0]))
			kthread_stop(t[0]);
		kfree(r);
		return -ENOMEM;
	}
	kthread_bind(t[0], 0);
	kthread_bind(t[1], 1);
	wake_up_process(t[0]);
	wake_up_process(t[1]);

	for (i = 0; i < n && !ret; i++) {
		/* a registration runs in its owner's context: the map thread */
		r->va = ops->alloc(0, size, reg ? t[1]->tgid : current->tgid);
		if (!r->va) {
			ret = -ENOMEM;
			break;
		}
		if (!reg) {
			ret = core_reg(r->va, size, &r->id);
			if (ret) {
				ops->free(r->va);
				break;
			}
		}
		atomic_set(&r->arrived, 0);
		for (k = 0; k < 2; k++) {
			reinit_completion(&r->done[k]);
			complete(&r->start[k]);
		}
		for (k = 0; k < 2; k++)
			wait_for_completion(&r->done[k]);
		if (r->ret[0]) {
			pr_err("%s: race round %lu: free: %d\n", KBUILD_MODNAME,
			       i, r->ret[0]);
			ret = r->ret[0];
		}
		if (reg) {
			/* a registration may lose to the free; one that won is
			 * invalidated and still has to be deregistered
			 */
			if (r->ret[1])
				reg_lost++;
			else
				ret = ret ?: core_dereg(r->id);
		} else if (r->ret[1]) {
			pr_err("%s: race round %lu: dereg: %d\n", KBUILD_MODNAME,
			       i, r->ret[1]);
			ret = r->ret[1];
		}
	}
	WRITE_ONCE(r->stop, true);
	for (k = 0; k < 2; k++) {
		complete(&r->start[k]);
		kthread_stop(t[k]);
	}
	snprintf(race_result, sizeof(race_result),
		 "%s rounds=%lu ret=%d registrations_lost=%lu",
		 reg ? "reg" : "dereg", i, ret, reg_lost);
	kfree(r);
	return ret;
}

static int core_cmd(char *cmd)
{
	const struct npu_sim_ops *(*get_ops)(void);
	const struct npu_sim_ops *ops;
	unsigned long long a, b, n, i;
	char what[8];
	u32 id;
	int ret = -EINVAL;

	get_ops = symbol_get(npu_sim_get_ops);
	ops = get_ops ? get_ops() : NULL;
	if (sscanf(cmd, "alloc %llu", &a) == 1) {
		u64 va = ops ? ops->alloc(0, a, current->tgid) : 0;

		WRITE_ONCE(last_va, va);
		ret = va ? 0 : -ENOMEM;
	} else if (sscanf(cmd, "reg %llx %llu", &a, &b) == 2) {
		ret = core_reg(a, b, &id);
	} else if (sscanf(cmd, "dereg %llu", &a) == 1) {
		ret = a > U32_MAX ? -ENOENT : core_dereg(a);
	} else if (sscanf(cmd, "free %llx", &a) == 1) {
		ret = ops ? ops->free(a) : -ENODEV;
	} else if (sscanf(cmd, "cycles %llu %llx %llu", &n, &a, &b) == 3) {
		for (i = 0, ret = 0; i < n && !ret; i++) {
			ret = core_reg(a, b, &id);
			if (!ret)
				ret = core_dereg(id);
		}
	} else if (sscanf(cmd, "race %llu %llu %7s", &n, &a, what) == 3 &&
		   (!strcmp(what, "dereg") || !strcmp(what, "reg"))) {
		ret = core_race(ops, n, a, !strcmp(what, "reg"));
	} else if (!strncmp(cmd, "refuse_test", 11)) {
		ret = core_refuse_test();
	}
	if (get_ops)
		symbol_put(npu_sim_get_ops);
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
	ret = core_cmd(buf);
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
	seq_printf(m, "mode %s\nrelease %s\nunmap_in_invalidate %d\n",
		   core_xsc ? "xsc" : "mofed", core_xsc ? "-" : release,
		   core_unmap_inval);
	seq_printf(m, "client %.64s\nversion %.16s\n", c ? c->name : "-",
		   c ? c->version : "-");
	seq_printf(m, "struct_size %u\n", core_xsc ? PEER_MEM_YUNSCALE_SIZE :
		   PEER_MEM_MOFED_SIZE);
	seq_printf(m, "get_context_private_data %s\nput_context_private_data %s\n",
		   !core_xsc ? "unread" : tail_get ? "set" : "null",
		   !core_xsc ? "unread" : tail_put ? "set" : "null");
	seq_printf(m, "mrs %d\ninvalidations %d\nfaults %d\n", n,
		   atomic_read(&core_invalidations), atomic_read(&core_faults));
	seq_printf(m, "last_va 0x%llx\nlast_id %u\nlast_page_size %lu\nlast_nmap %d\n",
		   READ_ONCE(last_va), last_id, last_page_size, last_nmap);
	seq_printf(m, "refuse_ok %d\nreal_dma %d\n", refuse_ok, !!core_pdev);
	seq_printf(m, "race %s\n", race_result);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(core_status);

static int __init core_init(void)
{
	if (strcmp(mode, "mofed") && strcmp(mode, "xsc"))
		return -EINVAL;
	core_xsc = !strcmp(mode, "xsc");
	if (core_xsc) {
		core_ps_first = true;
	} else if (!strcmp(release, "4.0")) {
		core_ps_first = true;
		core_first_id = 1;
	} else if (!strcmp(release, "5.1")) {
		core_ps_first = true;
	} else if (!strcmp(release, "5.5")) {
		core_trim = true;
	} else {
		pr_err("%s: release=%s: use 4.0, 5.1 or 5.5\n", KBUILD_MODNAME,
		       release);
		return -EINVAL;
	}
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
	struct core_mr *mr;

	debugfs_remove_recursive(core_dir);
	for (;;) {
		spin_lock(&core_mr_lock);
		mr = list_first_entry_or_null(&core_mrs, struct core_mr, node);
		spin_unlock(&core_mr_lock);
		if (!mr)
			break;
		core_dereg(mr->id);
	}
	if (core_pdev)
		platform_device_unregister(core_pdev);
}

module_init(core_init);
module_exit(core_exit);

MODULE_DESCRIPTION("Test stand-in for an RDMA core's peer-memory API (MOFED / xsc)");
MODULE_LICENSE("Dual BSD/GPL");
