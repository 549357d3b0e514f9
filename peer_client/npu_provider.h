/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * npu_provider.h - NPU memory providers, with the Ascend HAL's interface
 * and page-table layout (ascend_hal_abi.h):
 *
 *   get_pages(va, len, free_callback, data, &table)
 *   put_pages(table)
 *
 * A table lives from get_pages to its put_pages, which is due exactly once
 * whether or not the memory was freed meanwhile.  Freeing the memory under
 * a table calls its free_callback; put_pages waits for a callback running
 * on its table, so it must never be called from inside one.
 */
#ifndef NPU_PROVIDER_H
#define NPU_PROVIDER_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/errno.h>

#include "ascend_hal_abi.h"

struct npu_provider {
	const char *name;
	int (*get_pages)(u64 va, u64 len, p2p_free_callback free_cb,
			 void *data, struct p2p_page_table **table);
	int (*put_pages)(struct p2p_page_table *table);
	/* does @va belong to this provider's NPU address range? */
	bool (*owns)(u64 va, u64 len);
	/* memory management, the sim only (NULL for ascend) */
	u64 (*alloc)(unsigned int dev, size_t size);
	int (*free)(u64 va);
	int (*copy_to)(u64 va, const void *src, size_t len);
	int (*copy_from)(void *dst, u64 va, size_t len);
	unsigned long page_size;	/* the sim's allocation unit */
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
	atomic_t tables;	/* page tables not yet put */
	atomic_t deferred_puts;	/* put_pages moved out of a free callback */
};

extern struct npu_peer_stats npu_stats;

/* kallsyms_lookup_name(), found through a kprobe (npu_peer_main.c) */
unsigned long npu_lookup_symbol(const char *name);

#endif /* NPU_PROVIDER_H */
