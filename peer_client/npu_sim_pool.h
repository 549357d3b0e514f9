/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * npu_sim_pool.h - inside npu_sim.ko: the HBM pool (npu_sim_pool.c) as the
 * module's other files use it.  The files and what each does:
 *   npu_sim_pool.c  devices' HBM, allocations and their owners, copies,
 *                   the runtime's allocator for the rig (npu_sim.h)
 *   npu_sim_hal.c   the exported Ascend HAL: page tables on allocations
 *   npu_sim_dev.c   /dev/npu_simN, the runtime's face to processes
 *   npu_sim_bar.c   qemu ivshmem devices whose BAR is the HBM
 *   npu_sim_main.c  load, unload, debugfs
 * Each calls the pool and nothing else; main calls all of them.
 */
#ifndef NPU_SIM_POOL_H
#define NPU_SIM_POOL_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/atomic.h>
#include <linux/refcount.h>
#include <linux/kref.h>

#include "ascend_hal_abi.h"

#define SIM_VA_BASE	0x100000000000ull	/* 16 TiB */
#define SIM_VA_SHIFT	36			/* 64 GiB window per device */
#define SIM_MAX_DEVS	16
#define SIM_POISON	0x6b

struct sim_dev {
	unsigned long *map;	/* one bit a page of HBM */
	struct page **hbm;	/* RAM: the pages, each of sim_page_size */
	phys_addr_t bar_pa;
	void *bar;		/* the BAR, memremap()ed write-combined */
	unsigned long npages;
};

struct sim_user;		/* a user's charges (npu_sim_pool.c) */

/*
 * The driver's p2p_mem_mng: per process and device, the tables taken and
 * the lock that get_pages and put_pages take and the free loop holds
 * across every free callback it runs.
 */
struct sim_mng {
	struct mutex lock;
	struct task_struct *holder;	/* in the free loop, or NULL */
	struct list_head tables;	/* live tables, by va */
};

/*
 * A process's NPU context (the driver's svm process): it has one while it
 * holds an allocation or an open /dev/npu_simN (@users, under sim_lock);
 * the struct lives on while tables or lookups hold @ref.
 */
struct sim_proc {
	struct list_head node;		/* on sim_procs while it has users */
	struct kref ref;
	pid_t tgid;
	unsigned int users;
	struct sim_mng mng[SIM_MAX_DEVS];
};

/*
 * An allocation.  The pool's list holds a reference; a copy through a
 * file holds another while it runs (sim_get_own), so the struct outlives
 * a free during the copy, which sees freed and stops: the memory behind
 * it may be someone else's by then.
 */
struct sim_alloc {
	struct list_head node;
	refcount_t ref;
	bool freed;		/* off sim_allocs, under sim_lock: no copy */
	struct sim_user *user;	/* charged to, or NULL (no file) */
	u64 va;
	u64 size;		/* whole pages */
	unsigned long first;	/* first page in the device's map */
	unsigned long npages;
	unsigned int dev;
	pid_t tgid;		/* the owning process */
	struct sim_proc *proc;	/* its context, used while allocated */
	const void *file;	/* the /dev/npu_simN file it came from, or NULL */
};

/*
 * A table: on its process and device's list until a free covering any of
 * its pages runs its callback, then on sim_freed; on sim_tables from
 * get_pages to put_pages.
 */
struct sim_table {
	struct p2p_page_table pt;
	struct list_head node;		/* sim_mng.tables, or sim_freed */
	struct list_head all;		/* sim_tables */
	u64 va, len;			/* the pages it holds */
	struct sim_proc *proc;		/* held */
	unsigned int dev;
	p2p_free_callback free_cb;
	void *data;
	bool freed;			/* on sim_freed */
	bool putting;			/* a put_pages of it is under way */
};

struct sim_stats {
	atomic_t allocs;
	atomic_t tables;
	atomic_t pinned_pages;
	atomic_t freed_unput;		/* tables out on freed memory */
	atomic_t refused;		/* get_pages the driver refuses */
	/* violations: where the driver deadlocks or corrupts memory */
	atomic_t get_in_callback;	/* get_pages inside a free loop */
	atomic_t put_in_callback;	/* put_pages inside a free loop */
	atomic_t put_unknown;		/* put_pages of no live table */
	atomic_t put_refused;		/* put_pages refused on demand */
};

/* the module's parameters (npu_sim_pool.c) */
extern unsigned int npu_devs;
extern unsigned long hbm_mb;
extern unsigned long sim_page_size;

extern struct sim_stats sim_stats;
/* sim_allocs, device maps, tables, users' charges, copies into HBM */
extern struct mutex sim_lock;
extern struct list_head sim_allocs;
extern struct list_head sim_freed;	/* tables whose memory was freed */
extern struct list_head sim_tables;	/* every table not yet put */
extern struct sim_dev sim_devs[SIM_MAX_DEVS];

u64 sim_dev_pa(struct sim_dev *sd, unsigned long i);
u64 sim_dev_base(unsigned int dev);
struct sim_alloc *sim_find(u64 va, u64 len);
struct sim_proc *sim_proc_use(pid_t tgid);
struct sim_proc *sim_proc_find(pid_t tgid);
void sim_proc_unuse(struct sim_proc *p);
void sim_proc_put(struct sim_proc *p);
int sim_alloc_for(unsigned int dev, size_t size, pid_t tgid,
		  const void *file, u64 *va);
int sim_free_for(u64 va, const void *file, bool any);
u64 sim_file_any(const void *file);
struct sim_alloc *sim_get_own(u64 va, u64 len, const void *file);
int sim_copy_held(struct sim_alloc *a, u64 va, void *host, size_t len,
		  bool to_npu);
void sim_put(struct sim_alloc *a);
int sim_take_ram(struct sim_dev *sd);
int sim_dev_ready(struct sim_dev *sd);
int sim_pool_init(void);
void sim_pool_exit(void);

/* npu_sim_hal.c */
unsigned int sim_hal_drop_freed(void);

/* npu_sim_dev.c */
int sim_misc_add(void);
void sim_misc_remove(void);

/* npu_sim_bar.c */
extern char *backing;
int sim_bar_register(void);
void sim_bar_unregister(void);
unsigned int sim_bar_count(void);
int sim_take_bar(struct sim_dev *sd, unsigned int i);

#endif /* NPU_SIM_POOL_H */
