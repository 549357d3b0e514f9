// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sim.ko - an emulated Ascend NPU.  It plays the Ascend driver towards
 * npu_peer_mem: hal_kernel_p2p_get_pages and hal_kernel_p2p_put_pages with
 * the driver's signature, page-table layout (ascend_hal_abi.h) and rules,
 * found by name exactly as on a real host.  Towards the rig it plays the
 * NPU runtime: an allocator and copies (npu_sim.h).
 *
 * Per device an HBM in pages of page_size (4 KiB or 2 MiB) behind its own
 * NPU virtual address range: the BAR of a qemu ivshmem-plain PCI device
 * when there is one for it (physical addresses that are MMIO, with no
 * struct page, as real HBM behind a BAR), else hbm_mb MiB of RAM
 * allocated at load (backing=).  The rules
 * it enforces, so that breaking one fails a test:
 *  - memory belongs to a process: get_pages from any other process finds
 *    no such address, as the driver looks it up in current->tgid's space;
 *  - va and len page aligned, a free callback given (else -EINVAL);
 *  - va in the caller's memory (else -EINVAL: not found), and the range
 *    within that allocation (else -EFAULT), never beyond it;
 *  - a table lives from get_pages to its put_pages, also after its memory
 *    was freed; put_pages waits for a free callback running on its table,
 *    so called from inside one it would deadlock: refused with a WARN;
 *  - a table never put is a leak: counted, and reported at unload;
 *  - once the free callbacks returned, the memory is poisoned and goes to
 *    the next allocation, so a late DMA into it corrupts someone's data.
 */
#include <linux/module.h>
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
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/miscdevice.h>
#include <linux/uaccess.h>
#include <linux/fs.h>
#include <linux/compat.h>
#include <linux/pci.h>

#include "ascend_hal_abi.h"
#include "npu_sim.h"
#include "npu_sim_uapi.h"

#define SIM_VA_BASE	0x100000000000ull	/* 16 TiB */
#define SIM_VA_SHIFT	36			/* 64 GiB window per device */
#define SIM_MAX_DEVS	16
#define SIM_POISON	0x6b

static unsigned int npu_devs = 1;
module_param(npu_devs, uint, 0444);
MODULE_PARM_DESC(npu_devs, "number of NPU devices (1..16)");
static unsigned long hbm_mb = 64;
module_param(hbm_mb, ulong, 0444);
MODULE_PARM_DESC(hbm_mb, "HBM per device in MiB, allocated at load");
static unsigned long sim_page_size = SZ_2M;
module_param_named(page_size, sim_page_size, ulong, 0444);
MODULE_PARM_DESC(page_size, "NPU page size: 4096 or 2097152");
static char *backing = "auto";
module_param(backing, charp, 0444);
MODULE_PARM_DESC(backing, "HBM: auto (a PCI BAR where an ivshmem device is bound, else RAM), bar or ram");

struct sim_dev {
	unsigned long *map;	/* one bit a page of HBM */
	struct page **hbm;	/* RAM: the pages, each of sim_page_size */
	phys_addr_t bar_pa;
	void *bar;		/* the BAR, memremap()ed write-combined */
	unsigned long npages;
};

struct sim_alloc {
	struct list_head node;
	u64 va;
	u64 size;		/* whole pages */
	unsigned long first;	/* first page in the device's map */
	unsigned long npages;
	unsigned int dev;
	pid_t tgid;		/* the owning process */
	const void *file;	/* the /dev/npu_simN file it came from, or NULL */
	struct list_head tables;
};

struct sim_table {
	struct p2p_page_table pt;
	struct list_head node;		/* its allocation's tables, or sim_freed */
	p2p_free_callback free_cb;
	void *data;
	struct task_struct *cb_task;	/* running free_cb, or NULL */
	bool freed;			/* on sim_freed */
};

static struct {
	atomic_t allocs;
	atomic_t tables;
	atomic_t pinned_pages;
	atomic_t freed_unput;		/* tables out on freed memory */
	atomic_t refused;		/* get_pages against the rules */
	atomic_t put_in_callback;	/* put_pages from inside a callback */
} sim_stats;

static DEFINE_MUTEX(sim_lock);		/* sim_allocs, device maps, tables */
static LIST_HEAD(sim_allocs);
static LIST_HEAD(sim_freed);		/* tables whose memory was freed */
static DECLARE_WAIT_QUEUE_HEAD(sim_cb_wq);	/* a free_cb returned */
static struct sim_dev sim_devs[SIM_MAX_DEVS];
static unsigned int sim_order;
static struct dentry *sim_debugfs;

static u64 sim_dev_base(unsigned int dev)
{
	return SIM_VA_BASE + ((u64)dev << SIM_VA_SHIFT);
}

/* Page @i of a device's HBM: its physical address, and the CPU's view. */
static u64 sim_dev_pa(struct sim_dev *sd, unsigned long i)
{
	return sd->bar ? sd->bar_pa + (u64)i * sim_page_size :
	       page_to_phys(sd->hbm[i]);
}

static void *sim_dev_kva(struct sim_dev *sd, unsigned long i)
{
	return sd->bar ? sd->bar + i * sim_page_size : page_address(sd->hbm[i]);
}

static void *sim_page_addr(struct sim_alloc *a, unsigned long pg)
{
	return sim_dev_kva(&sim_devs[a->dev], a->first + pg);
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

static u64 sim_alloc_for(unsigned int dev, size_t size, pid_t tgid,
			 const void *file)
{
	struct sim_alloc *a;
	unsigned long first;
	u64 va = 0;

	if (dev >= npu_devs || !size || size > sim_devs[dev].npages * sim_page_size)
		return 0;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return 0;
	a->npages = DIV_ROUND_UP(size, sim_page_size);
	a->size = (u64)a->npages * sim_page_size;
	a->dev = dev;
	a->tgid = tgid;
	a->file = file;
	INIT_LIST_HEAD(&a->tables);

	mutex_lock(&sim_lock);
	first = bitmap_find_next_zero_area(sim_devs[dev].map,
					   sim_devs[dev].npages, 0, a->npages, 0);
	if (first < sim_devs[dev].npages) {
		bitmap_set(sim_devs[dev].map, first, a->npages);
		a->first = first;
		a->va = sim_dev_base(dev) + (u64)first * sim_page_size;
		list_add(&a->node, &sim_allocs);
		atomic_inc(&sim_stats.allocs);
		va = a->va;
	}
	mutex_unlock(&sim_lock);
	if (!va)
		kfree(a);
	return va;
}

/*
 * Free an allocation.  Each table still out on it is detached under the
 * lock, then told through its free callback outside it (a callback may
 * reach back into the RDMA core and from there into the peer client);
 * the table itself stays until its put_pages.  When the callbacks have
 * returned the memory is nobody's: poisoned, and free for the next.
 */
static int sim_free_for(u64 va, const void *file, bool any)
{
	struct sim_table *t;
	struct sim_alloc *a;
	unsigned long i;
	LIST_HEAD(gone);

	mutex_lock(&sim_lock);
	a = sim_find(va, 1);
	if (!a || a->va != va || (!any && a->file != file)) {
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
		t->freed = true;
		atomic_inc(&sim_stats.freed_unput);
		WRITE_ONCE(t->cb_task, NULL);
		mutex_unlock(&sim_lock);
		wake_up_all(&sim_cb_wq);
	}

	for (i = 0; i < a->npages; i++)
		memset(sim_page_addr(a, i), SIM_POISON, sim_page_size);
	mutex_lock(&sim_lock);
	bitmap_clear(sim_devs[a->dev].map, a->first, a->npages);
	mutex_unlock(&sim_lock);
	kfree(a);
	atomic_dec(&sim_stats.allocs);
	return 0;
}

/* The rig's kernel allocator: memory for process @tgid, no file. */
static u64 sim_alloc(unsigned int dev, size_t size, pid_t tgid)
{
	return sim_alloc_for(dev, size, tgid, NULL);
}

static int sim_free(u64 va)
{
	return sim_free_for(va, NULL, false);
}

/* The Ascend HAL's get_pages, with the driver's rules (see the top). */
int hal_kernel_p2p_get_pages(u64 va, u64 len, p2p_free_callback free_cb,
			     void *data, struct p2p_page_table **out)
{
	struct sim_table *t;
	struct sim_alloc *a;
	unsigned long first, i;
	int ret = 0;

	if (!out || !free_cb || !len || (va | len) & (sim_page_size - 1)) {
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
		size_t in = off % sim_page_size;
		size_t n = min_t(size_t, len, sim_page_size - in);
		void *npu = sim_page_addr(a, off / sim_page_size) + in;

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

static struct npu_sim_ops sim_ops = {
	.alloc = sim_alloc,
	.free = sim_free,
	.copy_to = sim_copy_to,
	.copy_from = sim_copy_from,
};

const struct npu_sim_ops *npu_sim_get_ops(void)
{
	return &sim_ops;
}
EXPORT_SYMBOL_GPL(npu_sim_get_ops);

/*
 * /dev/npu_simN: the runtime's face (npu_sim_uapi.h).  Memory allocated
 * through an open file is the allocating process's, and is freed when the
 * file goes (close, exit, kill): free callbacks first, as the runtime
 * frees a dead process's memory.
 */
struct sim_file {
	unsigned int dev;
	unsigned int nallocs;
	struct mutex lock;	/* nallocs */
};

static struct miscdevice sim_misc[SIM_MAX_DEVS];
static char sim_misc_name[SIM_MAX_DEVS][16];

static int sim_open(struct inode *inode, struct file *file)
{
	struct miscdevice *m = file->private_data;
	struct sim_file *sf = kzalloc(sizeof(*sf), GFP_KERNEL);

	if (!sf)
		return -ENOMEM;
	sf->dev = m - sim_misc;
	mutex_init(&sf->lock);
	file->private_data = sf;
	return 0;
}

/* The va of one allocation of @sf, or 0 when it has none left. */
static u64 sim_file_any(const struct sim_file *sf)
{
	struct sim_alloc *a;
	u64 va = 0;

	mutex_lock(&sim_lock);
	list_for_each_entry(a, &sim_allocs, node)
		if (a->file == sf) {
			va = a->va;
			break;
		}
	mutex_unlock(&sim_lock);
	return va;
}

static int sim_release(struct inode *inode, struct file *file)
{
	struct sim_file *sf = file->private_data;
	u64 va;

	while ((va = sim_file_any(sf)))
		sim_free_for(va, sf, false);
	kfree(sf);
	return 0;
}

/* Copy @c.len bytes between user memory and NPU memory of @sf's own. */
static int sim_file_copy(struct sim_file *sf, const struct npu_sim_copy *c,
			 bool to_npu)
{
	void __user *host = u64_to_user_ptr(c->host);
	u64 va = c->va, left = c->len;
	struct sim_alloc *a;
	void *bounce;
	int ret = 0;

	mutex_lock(&sim_lock);
	a = sim_find(va, left);
	if (!a || a->file != sf)
		ret = -EFAULT;
	mutex_unlock(&sim_lock);
	if (ret || !left)
		return ret;
	bounce = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	while (left && !ret) {
		size_t n = min_t(u64, left, PAGE_SIZE);

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (to_npu) {
			ret = copy_from_user(bounce, host, n) ? -EFAULT :
			      sim_copy(va, bounce, n, true);
		} else {
			ret = sim_copy(va, bounce, n, false);
			if (!ret && copy_to_user(host, bounce, n))
				ret = -EFAULT;
		}
		host += n;
		va += n;
		left -= n;
		cond_resched();
	}
	kfree(bounce);
	return ret;
}

static int sim_ioctl_alloc(struct sim_file *sf, void __user *uarg)
{
	struct npu_sim_mem m;
	int ret = 0;

	if (copy_from_user(&m, uarg, sizeof(m)))
		return -EFAULT;
	mutex_lock(&sf->lock);
	if (sf->nallocs >= NPU_SIM_MAX_ALLOCS) {
		ret = -ENOSPC;
	} else {
		m.va = sim_alloc_for(sf->dev, m.size, current->tgid, sf);
		if (m.va)
			sf->nallocs++;
		else
			ret = -ENOMEM;
	}
	mutex_unlock(&sf->lock);
	if (ret)
		return ret;
	if (!copy_to_user(uarg, &m, sizeof(m)))
		return 0;
	sim_free_for(m.va, sf, false);
	mutex_lock(&sf->lock);
	sf->nallocs--;
	mutex_unlock(&sf->lock);
	return -EFAULT;
}

static int sim_ioctl_free(struct sim_file *sf, void __user *uarg)
{
	u64 va;
	int ret;

	if (copy_from_user(&va, uarg, sizeof(va)))
		return -EFAULT;
	ret = sim_free_for(va, sf, false);
	if (ret)
		return ret;
	mutex_lock(&sf->lock);
	sf->nallocs--;
	mutex_unlock(&sf->lock);
	return 0;
}

static long sim_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sim_file *sf = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct npu_sim_copy c;

	switch (cmd) {
	case NPU_SIM_ALLOC:
		return sim_ioctl_alloc(sf, uarg);
	case NPU_SIM_FREE:
		return sim_ioctl_free(sf, uarg);
	case NPU_SIM_COPY_TO:
	case NPU_SIM_COPY_FROM:
		if (copy_from_user(&c, uarg, sizeof(c)))
			return -EFAULT;
		return sim_file_copy(sf, &c, cmd == NPU_SIM_COPY_TO);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations sim_fops = {
	.owner = THIS_MODULE,
	.open = sim_open,
	.release = sim_release,
	.unlocked_ioctl = sim_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static void sim_misc_remove(void)
{
	unsigned int d;

	for (d = 0; d < SIM_MAX_DEVS; d++)
		if (sim_misc[d].name) {
			misc_deregister(&sim_misc[d]);
			sim_misc[d].name = NULL;
		}
}

static int sim_misc_add(void)
{
	unsigned int d;
	int ret;

	for (d = 0; d < npu_devs; d++) {
		snprintf(sim_misc_name[d], sizeof(sim_misc_name[d]), "npu_sim%u", d);
		sim_misc[d].minor = MISC_DYNAMIC_MINOR;
		sim_misc[d].name = sim_misc_name[d];
		sim_misc[d].fops = &sim_fops;
		sim_misc[d].mode = 0600;
		ret = misc_register(&sim_misc[d]);
		if (ret) {
			sim_misc[d].name = NULL;
			sim_misc_remove();
			return ret;
		}
	}
	return 0;
}

static int sim_stats_show(struct seq_file *m, void *v)
{
	unsigned int d;

	seq_printf(m, "devices %u\npage_size %lu\nhbm_mb %lu\n", npu_devs,
		   sim_page_size, hbm_mb);
	for (d = 0; d < npu_devs; d++)
		seq_printf(m, "backing%u %s\nhbm_bytes%u %lu\n", d,
			   sim_devs[d].bar ? "bar" : "ram", d,
			   sim_devs[d].npages * sim_page_size);
	seq_printf(m, "allocs %d\nhal_tables %d\nhal_pages %d\nfreed_unput %d\nrefused %d\nput_in_callback %d\n",
		   atomic_read(&sim_stats.allocs),
		   atomic_read(&sim_stats.tables),
		   atomic_read(&sim_stats.pinned_pages),
		   atomic_read(&sim_stats.freed_unput),
		   atomic_read(&sim_stats.refused),
		   atomic_read(&sim_stats.put_in_callback));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sim_stats);

static void sim_free_hbm(void)
{
	unsigned long i;
	unsigned int d;

	for (d = 0; d < SIM_MAX_DEVS; d++) {
		struct sim_dev *sd = &sim_devs[d];

		for (i = 0; sd->hbm && i < sd->npages; i++)
			if (sd->hbm[i])
				__free_pages(sd->hbm[i], sim_order);
		kvfree(sd->hbm);
		bitmap_free(sd->map);
		if (sd->bar)
			memunmap(sd->bar);
		sd->hbm = NULL;
		sd->map = NULL;
		sd->bar = NULL;
	}
}

/*
 * qemu's ivshmem-plain (1af4:1110): BAR 2 is the shared memory, standing
 * in for HBM behind a BAR.  Devices bind in order to NPUs 0, 1, ...; the
 * memory is taken at load (sim_take_bar), the device held until unload.
 */
static struct pci_dev *sim_pdevs[SIM_MAX_DEVS];
static unsigned int sim_npdevs;

static int sim_pci_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	if (!strcmp(backing, "ram") || sim_npdevs >= npu_devs)
		return -ENODEV;
	ret = pci_enable_device_mem(pdev);
	if (ret)
		return ret;
	ret = pci_request_region(pdev, 2, "npu_sim");
	if (ret) {
		pci_disable_device(pdev);
		return ret;
	}
	sim_pdevs[sim_npdevs++] = pdev;
	return 0;
}

static void sim_pci_remove(struct pci_dev *pdev)
{
	pci_release_region(pdev, 2);
	pci_disable_device(pdev);
}

static const struct pci_device_id sim_pci_ids[] = {
	{ PCI_DEVICE(0x1af4, 0x1110) },
	{ }
};

static struct pci_driver sim_pci_driver = {
	.name = "npu_sim",
	.id_table = sim_pci_ids,
	.probe = sim_pci_probe,
	.remove = sim_pci_remove,
	/* the BAR is HBM until unload: no unbinding under live memory */
	.driver.suppress_bind_attrs = true,
};

/* NPU @d's HBM is the BAR of the @d-th ivshmem device, cleared. */
static int sim_take_bar(struct sim_dev *sd, struct pci_dev *pdev)
{
	resource_size_t len = pci_resource_len(pdev, 2);

	sd->bar_pa = pci_resource_start(pdev, 2);
	if (len < sim_page_size || sd->bar_pa & (sim_page_size - 1)) {
		pr_err("npu_sim: %s: BAR 2 of %llu bytes at %pa does not hold aligned pages of %lu\n",
		       pci_name(pdev), (u64)len, &sd->bar_pa, sim_page_size);
		return -EINVAL;
	}
	/* a device's NPU addresses are a window of 1 << SIM_VA_SHIFT bytes */
	sd->npages = min_t(u64, len, 1ull << SIM_VA_SHIFT) / sim_page_size;
	sd->bar = memremap(sd->bar_pa, sd->npages * sim_page_size,
			   MEMREMAP_WC);
	if (!sd->bar)
		return -ENOMEM;
	memset(sd->bar, 0, sd->npages * sim_page_size);
	return 0;
}

static int sim_take_ram(struct sim_dev *sd)
{
	unsigned long i;

	sd->npages = (hbm_mb << 20) / sim_page_size;
	sd->hbm = kvcalloc(sd->npages, sizeof(*sd->hbm), GFP_KERNEL);
	if (!sd->hbm)
		return -ENOMEM;
	for (i = 0; i < sd->npages; i++) {
		sd->hbm[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN,
					 sim_order);
		if (!sd->hbm[i])
			return -ENOMEM;
	}
	return 0;
}

static int __init npu_sim_init(void)
{
	unsigned int d;
	int ret;

	if (!npu_devs || npu_devs > SIM_MAX_DEVS) {
		pr_err("npu_sim: npu_devs must be 1..%d\n", SIM_MAX_DEVS);
		return -EINVAL;
	}
	if (sim_page_size != SZ_4K && sim_page_size != SZ_2M) {
		pr_err("npu_sim: page_size must be 4096 or 2097152\n");
		return -EINVAL;
	}
	if (!hbm_mb || (hbm_mb << 20) < sim_page_size ||
	    hbm_mb > (1ul << (SIM_VA_SHIFT - 20))) {
		pr_err("npu_sim: hbm_mb must be 1..%lu and hold a page\n",
		       1ul << (SIM_VA_SHIFT - 20));
		return -EINVAL;
	}
	if (strcmp(backing, "auto") && strcmp(backing, "bar") &&
	    strcmp(backing, "ram")) {
		pr_err("npu_sim: backing must be auto, bar or ram\n");
		return -EINVAL;
	}
	sim_order = get_order(sim_page_size);
	ret = pci_register_driver(&sim_pci_driver);
	if (ret)
		return ret;
	if (!strcmp(backing, "bar") && sim_npdevs < npu_devs) {
		pr_err("npu_sim: backing=bar: %u ivshmem device(s) for %u NPU(s)\n",
		       sim_npdevs, npu_devs);
		ret = -ENODEV;
		goto fail;
	}
	for (d = 0; d < npu_devs; d++) {
		struct sim_dev *sd = &sim_devs[d];

		ret = d < sim_npdevs ? sim_take_bar(sd, sim_pdevs[d]) :
		      sim_take_ram(sd);
		if (!ret) {
			sd->map = bitmap_zalloc(sd->npages, GFP_KERNEL);
			if (!sd->map)
				ret = -ENOMEM;
		}
		if (ret) {
			pr_err("npu_sim: no HBM for NPU %u: %d\n", d, ret);
			goto fail;
		}
	}
	sim_ops.ndevs = npu_devs;
	sim_ops.page_size = sim_page_size;
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
	sim_free_hbm();
	pci_unregister_driver(&sim_pci_driver);
	return ret;
}

/*
 * Nobody holds a table of a live allocation: npu_peer_mem holds a module
 * reference while it is bound.  A table never put is a leak on the real
 * driver: say so.
 */
static void __exit npu_sim_exit(void)
{
	struct sim_alloc *a, *tmp;
	struct sim_table *t, *tt;
	unsigned int leaked = 0;

	sim_misc_remove();
	debugfs_remove_recursive(sim_debugfs);
	list_for_each_entry_safe(a, tmp, &sim_allocs, node)
		sim_free_for(a->va, NULL, true);
	list_for_each_entry_safe(t, tt, &sim_freed, node) {
		list_del(&t->node);
		kfree(t->pt.pages_info);
		kfree(t);
		leaked++;
	}
	if (leaked)
		pr_err("npu_sim: %u page table(s) never put (a leak on the Ascend driver)\n",
		       leaked);
	sim_free_hbm();
	pci_unregister_driver(&sim_pci_driver);
}

module_init(npu_sim_init);
module_exit(npu_sim_exit);

MODULE_AUTHOR("krping_npu developers");
MODULE_DESCRIPTION("Emulated Ascend NPU: the HAL's P2P page tables and rules, an allocator");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(KP_VERSION);
