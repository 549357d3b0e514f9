// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sim_pool.c - the emulated NPU's HBM: per device, page_size pages
 * (4 KiB or 2 MiB) behind their own NPU virtual address range, in RAM
 * allocated at load or in a PCI BAR (npu_sim_bar.c); allocations on it,
 * and copies between it and host memory.
 *
 * Ownership, the one rule every file follows:
 *  - an allocation belongs to one process, the tgid that asked for it.
 *    The HAL finds it only for that process (the driver looks a va up in
 *    current->tgid's space); for any other it does not exist;
 *  - an allocation made through an open /dev/npu_simN is held by that
 *    file as well: only that file copies to it, from it, or frees it, and
 *    it is freed when the file goes (close, exit, kill).  One the rig's
 *    kernel code made (npu_sim.h's alloc) has no file: freed by its va;
 *  - a copy through a file holds the allocation itself, not its address:
 *    each piece of it is done under sim_lock on that allocation while it
 *    is not freed, so a free during the copy stops it (-EFAULT), and no
 *    byte of it lands in, or comes from, memory that went to another;
 *  - a process has an NPU context while it holds an allocation or an open
 *    /dev/npu_simN (struct sim_proc); its tables are kept per device, as
 *    the driver's p2p_mem_mng;
 *  - freeing runs, under that process and device's lock, the free
 *    callback of every table holding a page of the allocation, before the
 *    memory is poisoned and reused; the tables stay until their put_pages.
 * Limits on what processes take through files: per open file
 * (npu_sim_dev.c), and per user, all files and devices together
 * (user_allocs, user_mb): past either, -ENOSPC.  The rig's kernel
 * allocations have no file and no limit.
 * sim_lock guards the list of allocations, each device's page map, the
 * users' charges and every table's list membership.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/io.h>
#include <linux/gfp.h>
#include <linux/bitmap.h>
#include <linux/sizes.h>
#include <linux/sched.h>
#include <linux/cred.h>
#include <linux/uidgid.h>
#include <linux/refcount.h>

#include "npu_sim.h"
#include "npu_sim_uapi.h"
#include "npu_sim_pool.h"

unsigned int npu_devs = 1;
module_param(npu_devs, uint, 0444);
MODULE_PARM_DESC(npu_devs, "number of NPU devices (1..16)");
unsigned long hbm_mb = 64;
module_param(hbm_mb, ulong, 0444);
MODULE_PARM_DESC(hbm_mb, "HBM per device in MiB, allocated at load");
unsigned long sim_page_size = SZ_2M;
module_param_named(page_size, sim_page_size, ulong, 0444);
MODULE_PARM_DESC(page_size, "NPU page size: 4096 or 2097152");
static unsigned int user_allocs = 4 * NPU_SIM_MAX_ALLOCS;
module_param(user_allocs, uint, 0644);
MODULE_PARM_DESC(user_allocs, "allocations one user may hold through /dev/npu_simN, all files together (0: no limit)");
static unsigned long user_mb;
module_param(user_mb, ulong, 0644);
MODULE_PARM_DESC(user_mb, "MiB of HBM one user may hold through /dev/npu_simN, all devices together (0: no limit)");

struct sim_stats sim_stats;
DEFINE_MUTEX(sim_lock);
LIST_HEAD(sim_allocs);
LIST_HEAD(sim_freed);
LIST_HEAD(sim_tables);
static LIST_HEAD(sim_procs);		/* processes with an NPU context */
/* What one user holds through /dev/npu_simN files, all devices together. */
struct sim_user {
	struct list_head node;	/* on sim_users */
	kuid_t uid;
	unsigned int nallocs;
	u64 bytes;
};

static LIST_HEAD(sim_users);		/* users holding file allocations */
struct sim_dev sim_devs[SIM_MAX_DEVS];
static unsigned int sim_order;

u64 sim_dev_base(unsigned int dev)
{
	return SIM_VA_BASE + ((u64)dev << SIM_VA_SHIFT);
}

/* Page @i of a device's HBM: its physical address, and the CPU's view. */
u64 sim_dev_pa(struct sim_dev *sd, unsigned long i)
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
struct sim_alloc *sim_find(u64 va, u64 len)
{
	struct sim_alloc *a;

	list_for_each_entry(a, &sim_allocs, node)
		if (va >= a->va && len <= a->size && va - a->va <= a->size - len)
			return a;
	return NULL;
}

/*
 * A use of @tgid's NPU context, under sim_lock: a process without one gets
 * it.  NULL when there is no memory for one.
 */
struct sim_proc *sim_proc_use(pid_t tgid)
{
	struct sim_proc *p;
	unsigned int d;

	list_for_each_entry(p, &sim_procs, node)
		if (p->tgid == tgid) {
			p->users++;
			return p;
		}
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return NULL;
	kref_init(&p->ref);		/* the users' */
	p->tgid = tgid;
	p->users = 1;
	for (d = 0; d < SIM_MAX_DEVS; d++) {
		mutex_init(&p->mng[d].lock);
		INIT_LIST_HEAD(&p->mng[d].tables);
	}
	list_add(&p->node, &sim_procs);
	return p;
}

/* @tgid's NPU context with a reference, or NULL when it has none. */
struct sim_proc *sim_proc_find(pid_t tgid)
{
	struct sim_proc *p;

	mutex_lock(&sim_lock);
	list_for_each_entry(p, &sim_procs, node)
		if (p->tgid == tgid) {
			kref_get(&p->ref);
			mutex_unlock(&sim_lock);
			return p;
		}
	mutex_unlock(&sim_lock);
	return NULL;
}

static void sim_proc_free(struct kref *ref)
{
	kfree(container_of(ref, struct sim_proc, ref));
}

void sim_proc_put(struct sim_proc *p)
{
	kref_put(&p->ref, sim_proc_free);
}

/* A use of @p ends, under sim_lock; the last ends its NPU context. */
void sim_proc_unuse(struct sim_proc *p)
{
	if (--p->users)
		return;
	list_del(&p->node);
	sim_proc_put(p);
}

static struct sim_user *sim_user_find(kuid_t uid)
{
	struct sim_user *u;

	list_for_each_entry(u, &sim_users, node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/*
 * Charge @a to the calling user, under sim_lock; -ENOSPC past the user's
 * limits.  A user's first allocation takes *@spare as its entry.
 */
static int sim_charge(struct sim_alloc *a, struct sim_user **spare)
{
	unsigned int max_allocs = READ_ONCE(user_allocs);
	unsigned long mb = READ_ONCE(user_mb);
	u64 max_bytes = mb > (U64_MAX >> 20) ? U64_MAX : (u64)mb << 20;
	kuid_t uid = current_uid();
	struct sim_user *u = sim_user_find(uid);
	unsigned int n = u ? u->nallocs : 0;
	u64 bytes = u ? u->bytes : 0;

	if (max_allocs && n >= max_allocs)
		return -ENOSPC;
	if (mb && (bytes > max_bytes || a->size > max_bytes - bytes))
		return -ENOSPC;
	if (!u) {
		u = *spare;
		*spare = NULL;
		u->uid = uid;
		list_add(&u->node, &sim_users);
	}
	u->nallocs++;
	u->bytes += a->size;
	a->user = u;
	return 0;
}

/* Give @a's charge back, under sim_lock; a user holding nothing goes. */
static void sim_uncharge(struct sim_alloc *a)
{
	struct sim_user *u = a->user;

	if (!u)
		return;
	a->user = NULL;
	u->nallocs--;
	u->bytes -= a->size;
	if (!u->nallocs) {
		list_del(&u->node);
		kfree(u);
	}
}

/*
 * Allocate @size bytes on device @dev for process @tgid.  One made
 * through an open file (@file set) is charged to the calling user until
 * it is freed: -ENOSPC past the user's limits.  -ENOMEM when the device
 * has no room (or the size is none or more than its HBM).
 */
int sim_alloc_for(unsigned int dev, size_t size, pid_t tgid,
		  const void *file, u64 *va)
{
	struct sim_user *spare = NULL;
	struct sim_alloc *a;
	unsigned long first;
	int ret = 0;

	if (dev >= npu_devs || !size || size > sim_devs[dev].npages * sim_page_size)
		return -ENOMEM;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	if (file) {
		spare = kzalloc(sizeof(*spare), GFP_KERNEL);
		if (!spare) {
			kfree(a);
			return -ENOMEM;
		}
	}
	refcount_set(&a->ref, 1);
	a->npages = DIV_ROUND_UP(size, sim_page_size);
	a->size = (u64)a->npages * sim_page_size;
	a->dev = dev;
	a->tgid = tgid;
	a->file = file;

	mutex_lock(&sim_lock);
	if (file) {
		ret = sim_charge(a, &spare);
		if (ret)
			goto out;
	}
	first = bitmap_find_next_zero_area(sim_devs[dev].map,
					   sim_devs[dev].npages, 0, a->npages, 0);
	a->proc = first < sim_devs[dev].npages ? sim_proc_use(tgid) : NULL;
	if (!a->proc) {
		sim_uncharge(a);
		ret = -ENOMEM;
		goto out;
	}
	bitmap_set(sim_devs[dev].map, first, a->npages);
	a->first = first;
	a->va = sim_dev_base(dev) + (u64)first * sim_page_size;
	list_add(&a->node, &sim_allocs);
	atomic_inc(&sim_stats.allocs);
	*va = a->va;
out:
	mutex_unlock(&sim_lock);
	kfree(spare);
	if (ret)
		kfree(a);
	return ret;
}

/*
 * Free an allocation, as the driver's free path: under its process and
 * device's lock, the free callback of every table holding one of its
 * pages, each table then moved to sim_freed (it stays until its
 * put_pages).  A get_pages or put_pages of that process and device waits
 * for the whole loop; one from inside a callback would deadlock on the
 * driver and is refused (npu_sim_hal.c).  When the callbacks have
 * returned the memory is nobody's: poisoned, and free for the next.
 */
int sim_free_for(u64 va, const void *file, bool any)
{
	struct sim_table *t, *tmp;
	struct sim_alloc *a;
	struct sim_mng *m;
	unsigned long i;

	mutex_lock(&sim_lock);
	a = sim_find(va, 1);
	if (!a || a->va != va || (!any && a->file != file)) {
		mutex_unlock(&sim_lock);
		return -ENOENT;
	}
	list_del(&a->node);		/* no new get_pages, no copy from here */
	a->freed = true;
	mutex_unlock(&sim_lock);

	m = &a->proc->mng[a->dev];
	mutex_lock(&m->lock);
	WRITE_ONCE(m->holder, current);
	/* nobody else changes m->tables while m->lock is held */
	list_for_each_entry_safe(t, tmp, &m->tables, node) {
		if (t->va >= a->va + a->size || t->va + t->len <= a->va)
			continue;
		t->free_cb(t->data);
		mutex_lock(&sim_lock);
		list_move_tail(&t->node, &sim_freed);
		t->freed = true;
		mutex_unlock(&sim_lock);
		atomic_inc(&sim_stats.freed_unput);
	}
	WRITE_ONCE(m->holder, NULL);
	mutex_unlock(&m->lock);

	for (i = 0; i < a->npages; i++)
		memset(sim_page_addr(a, i), SIM_POISON, sim_page_size);
	mutex_lock(&sim_lock);
	bitmap_clear(sim_devs[a->dev].map, a->first, a->npages);
	sim_uncharge(a);
	sim_proc_unuse(a->proc);
	mutex_unlock(&sim_lock);
	atomic_dec(&sim_stats.allocs);
	sim_put(a);
	return 0;
}

/* The rig's kernel allocator: memory for process @tgid, no file. */
static u64 sim_alloc(unsigned int dev, size_t size, pid_t tgid)
{
	u64 va;

	return sim_alloc_for(dev, size, tgid, NULL, &va) ? 0 : va;
}

static int sim_free(u64 va)
{
	return sim_free_for(va, NULL, false);
}

/* The va of one allocation held by @file, or 0 when it holds none. */
u64 sim_file_any(const void *file)
{
	struct sim_alloc *a;
	u64 va = 0;

	mutex_lock(&sim_lock);
	list_for_each_entry(a, &sim_allocs, node)
		if (a->file == file) {
			va = a->va;
			break;
		}
	mutex_unlock(&sim_lock);
	return va;
}

/* Copy [va, va + len) of @a, within it, under sim_lock. */
static void sim_copy_locked(struct sim_alloc *a, u64 va, void *host,
			    size_t len, bool to_npu)
{
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
}

/*
 * The rig's kernel copies, between host memory and NPU memory (@to_npu
 * picks the direction): looked up and done under one hold of sim_lock.
 */
static int sim_copy(u64 va, void *host, size_t len, bool to_npu)
{
	struct sim_alloc *a;
	int ret = -EFAULT;

	mutex_lock(&sim_lock);
	a = sim_find(va, len);
	if (a) {
		sim_copy_locked(a, va, host, len, to_npu);
		ret = 0;
	}
	mutex_unlock(&sim_lock);
	return ret;
}

/*
 * The allocation @file holds that covers [va, va + len), with a reference
 * for the caller to sim_put(); NULL when @file holds none there.
 */
struct sim_alloc *sim_get_own(u64 va, u64 len, const void *file)
{
	struct sim_alloc *a;

	mutex_lock(&sim_lock);
	a = sim_find(va, len);
	if (a && a->file == file)
		refcount_inc(&a->ref);
	else
		a = NULL;
	mutex_unlock(&sim_lock);
	return a;
}

/*
 * One piece of a copy on @a, held: -EFAULT once @a is freed (its memory
 * may be another's by now) or outside it.  Under sim_lock, so a free
 * waits for the piece at most, never for the whole copy.
 */
int sim_copy_held(struct sim_alloc *a, u64 va, void *host, size_t len,
		  bool to_npu)
{
	int ret = -EFAULT;

	mutex_lock(&sim_lock);
	if (!a->freed && va >= a->va && len <= a->size &&
	    va - a->va <= a->size - len) {
		sim_copy_locked(a, va, host, len, to_npu);
		ret = 0;
	}
	mutex_unlock(&sim_lock);
	return ret;
}

/* Drop a reference on @a; the last frees the struct (the memory was). */
void sim_put(struct sim_alloc *a)
{
	if (refcount_dec_and_test(&a->ref))
		kfree(a);
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

int sim_take_ram(struct sim_dev *sd)
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

/* @sd's HBM taken (RAM or a BAR): its page map, every page free. */
int sim_dev_ready(struct sim_dev *sd)
{
	sd->map = bitmap_zalloc(sd->npages, GFP_KERNEL);
	return sd->map ? 0 : -ENOMEM;
}

/* Check the parameters; the devices' HBM is taken by main afterwards. */
int sim_pool_init(void)
{
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
	sim_order = get_order(sim_page_size);
	sim_ops.ndevs = npu_devs;
	sim_ops.page_size = sim_page_size;
	return 0;
}

/* Free every allocation (callbacks first), then the HBM. */
void sim_pool_exit(void)
{
	struct sim_alloc *a, *tmp;

	list_for_each_entry_safe(a, tmp, &sim_allocs, node)
		sim_free_for(a->va, NULL, true);
	sim_free_hbm();
}
