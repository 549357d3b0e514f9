/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * npu_provider.h - NPU memory providers, shaped like Ascend's HAL:
 *
 *   hal_kernel_p2p_get_pages(va, len, free_callback, data, &page_table)
 *   hal_kernel_p2p_put_pages(page_table)
 *
 * A page table holds a page size (4 KiB or 2 MiB) and one physical address
 * per page.  Freeing the memory while a table is out calls its
 * free_callback; the provider reclaims the table after the callback, and
 * put_pages must not be called on it afterwards.
 */
#ifndef NPU_PROVIDER_H
#define NPU_PROVIDER_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/errno.h>

struct npu_page_info {
	u64 pa;
};

struct npu_page_table {
	u32 version;
	u32 page_size;
	u64 page_num;
	struct npu_page_info *pages_info;
};

typedef void (*npu_free_callback)(void *data);

struct npu_provider {
	const char *name;
	int (*get_pages)(u64 va, u64 len, npu_free_callback free_cb,
			 void *data, struct npu_page_table **table);
	int (*put_pages)(struct npu_page_table *table);
	/* does @va belong to this provider's NPU address range? */
	bool (*owns)(u64 va, u64 len);
	unsigned long page_size;
	/* memory management, the sim only (NULL for ascend) */
	u64 (*alloc)(unsigned int dev, size_t size);
	int (*free)(u64 va);
	int (*copy_to)(u64 va, const void *src, size_t len);
	int (*copy_from)(void *dst, u64 va, size_t len);
	unsigned int ndevs;
};

/* npu_sim.c */
int npu_sim_init(unsigned int ndevs, unsigned long hbm_mb,
		 unsigned long page_size, struct npu_provider **out);
void npu_sim_exit(void);

/* npu_ascend.c */
int npu_ascend_bind(struct npu_provider **out);

/* counters, read through debugfs (npu_peer_main.c) */
struct npu_peer_stats {
	atomic_t allocs;	/* live NPU allocations */
	atomic_t pinned_pages;	/* pages held by get_pages */
	atomic_t mappings;	/* live dma_map()s */
	atomic_t contexts;	/* live acquire()d contexts */
	atomic_t invalidations;	/* free callbacks that invalidated */
};

extern struct npu_peer_stats npu_stats;

/* kallsyms_lookup_name(), found through a kprobe (npu_peer_main.c) */
unsigned long npu_lookup_symbol(const char *name);

#endif /* NPU_PROVIDER_H */
