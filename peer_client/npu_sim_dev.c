// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_sim_dev.c - /dev/npu_simN: the NPU runtime's face to processes
 * (npu_sim_uapi.h).  Memory allocated through an open file is the
 * allocating process's and is held by the file (the pool's ownership
 * rule): freed when the file goes (close, exit, kill), free callbacks
 * first, as the runtime frees a dead process's memory.  A copy holds the
 * allocation it started on to its end: freed meanwhile, the copy stops
 * with -EFAULT and touches nothing more.  NPU_SIM_MAX_ALLOCS allocations
 * a file, and the pool's limits a user (user_allocs, user_mb): past
 * either, -ENOSPC.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/miscdevice.h>
#include <linux/uaccess.h>
#include <linux/fs.h>
#include <linux/compat.h>

#include "npu_sim_uapi.h"
#include "npu_sim_pool.h"

struct sim_file {
	unsigned int dev;
	struct sim_proc *proc;	/* the opener's NPU context, used while open */
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
	mutex_lock(&sim_lock);
	sf->proc = sim_proc_use(current->tgid);
	mutex_unlock(&sim_lock);
	if (!sf->proc) {
		kfree(sf);
		return -ENOMEM;
	}
	sf->dev = m - sim_misc;
	mutex_init(&sf->lock);
	file->private_data = sf;
	return 0;
}

static int sim_release(struct inode *inode, struct file *file)
{
	struct sim_file *sf = file->private_data;
	u64 va;

	while ((va = sim_file_any(sf)))
		sim_free_for(va, sf, false);
	mutex_lock(&sim_lock);
	sim_proc_unuse(sf->proc);
	mutex_unlock(&sim_lock);
	kfree(sf);
	return 0;
}

/*
 * Copy @c.len bytes between user memory and NPU memory of @sf's own: one
 * allocation, held for the whole copy, never looked up again by address.
 */
static int sim_file_copy(struct sim_file *sf, const struct npu_sim_copy *c,
			 bool to_npu)
{
	void __user *host = u64_to_user_ptr(c->host);
	u64 va = c->va, left = c->len;
	struct sim_alloc *a;
	void *bounce;
	int ret = 0;

	a = sim_get_own(va, left, sf);
	if (!a)
		return -EFAULT;
	if (!left)
		goto out;
	bounce = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!bounce) {
		ret = -ENOMEM;
		goto out;
	}
	while (left && !ret) {
		size_t n = min_t(u64, left, PAGE_SIZE);

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (to_npu) {
			ret = copy_from_user(bounce, host, n) ? -EFAULT :
			      sim_copy_held(a, va, bounce, n, true);
		} else {
			ret = sim_copy_held(a, va, bounce, n, false);
			if (!ret && copy_to_user(host, bounce, n))
				ret = -EFAULT;
		}
		host += n;
		va += n;
		left -= n;
		cond_resched();
	}
	kfree(bounce);
out:
	sim_put(a);
	return ret;
}

static int sim_ioctl_alloc(struct sim_file *sf, void __user *uarg)
{
	struct npu_sim_mem m;
	int ret;

	if (copy_from_user(&m, uarg, sizeof(m)))
		return -EFAULT;
	mutex_lock(&sf->lock);
	if (sf->nallocs >= NPU_SIM_MAX_ALLOCS)
		ret = -ENOSPC;		/* the file's limit; the user's: the pool's */
	else
		ret = sim_alloc_for(sf->dev, m.size, current->tgid, sf, &m.va);
	if (!ret)
		sf->nallocs++;
	mutex_unlock(&sf->lock);
	if (ret)
		return ret;
	if (!copy_to_user(uarg, &m, sizeof(m)))
		return 0;
	/* another thread of the file may have freed it first */
	if (!sim_free_for(m.va, sf, false)) {
		mutex_lock(&sf->lock);
		sf->nallocs--;
		mutex_unlock(&sf->lock);
	}
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

void sim_misc_remove(void)
{
	unsigned int d;

	for (d = 0; d < SIM_MAX_DEVS; d++)
		if (sim_misc[d].name) {
			misc_deregister(&sim_misc[d]);
			sim_misc[d].name = NULL;
		}
}

int sim_misc_add(void)
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

