/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * npu_provider.h - the NPU provider, the Ascend HAL (npu_hal.c), with its
 * interface and page-table layout (ascend_hal_abi.h):
 *
 *   get_pages(va, len, free_callback, data, &table)
 *   put_pages(table)
 *
 * A table lives from get_pages to its put_pages, which is due exactly once
 * whether or not the memory was freed meanwhile.  Freeing the memory under
 * a table calls its free_callback, in a loop over the tables of the
 * owner's process and device that holds their lock; get_pages and
 * put_pages of that process and device take it too, so neither is ever
 * called from inside a callback, and a put from elsewhere waits for the
 * whole loop (unless the owner has exited).
 */
#ifndef NPU_PROVIDER_H
#define NPU_PROVIDER_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/module.h>

#include "ascend_hal_abi.h"

struct npu_provider {
	const char *name;
	int (*get_pages)(u64 va, u64 len, p2p_free_callback free_cb,
			 void *data, struct p2p_page_table **table);
	int (*put_pages)(struct p2p_page_table *table);
	/* is @va NPU memory?  Decided without pinning */
	bool (*owns)(u64 va, u64 len);
};

/* npu_hal.c: bind the HAL, its module held; @owner names that module */
int npu_hal_bind(struct npu_provider **out, const char **owner);
void npu_hal_unbind(void);

/* npu_stats.c: counters, shown in debugfs by npu_peer_main.c */
struct npu_peer_stats {
	atomic_t pinned_pages;	/* pages held by get_pages */
	atomic_t mappings;	/* live dma_map()s */
	atomic_t contexts;	/* live acquire()d contexts */
	atomic_t invalidations;	/* free callbacks that invalidated */
	atomic_t tables;	/* page tables taken, not yet put */
	atomic_t deferred_puts;	/* put_pages moved out of a free callback */
	atomic_t put_failures;	/* put_pages the HAL refused (each retried) */
	atomic_t leaked_tables;	/* tables refused NPU_PUT_TRIES times: kept */
};

extern struct npu_peer_stats npu_stats;

/* npu_sym.c: a function of another module, bound by name, module held */
struct module;
struct seq_file;
struct npu_sym {
	const char *name;
	unsigned long addr;	/* 0: not bound */
	bool exported;		/* by __symbol_get(), else kallsyms and @mod */
	struct module *mod;
	char owner[MODULE_NAME_LEN];	/* "vmlinux" for the kernel's own */
};
int npu_sym_get(const char *name, struct npu_sym *s);
void npu_sym_put(struct npu_sym *s);
int npu_sym_show(struct seq_file *m, void *v);
int npu_sym_ibt_selftest(void);

#endif /* NPU_PROVIDER_H */
