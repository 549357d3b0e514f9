// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_ascend.c - the Ascend provider: binds hal_kernel_p2p_get_pages and
 * hal_kernel_p2p_put_pages of the Ascend driver at load, through
 * kallsyms (they are not exported to modules of other licences).  The
 * page table layout is the HAL's; the memory itself is allocated by the
 * NPU runtime in user space, so this provider has no allocator.
 */
#include "npu_provider.h"

typedef int (*hal_get_pages_t)(u64 va, u64 len, p2p_free_callback free_cb,
			       void *data, struct p2p_page_table **table);
typedef int (*hal_put_pages_t)(struct p2p_page_table *table);

static hal_get_pages_t hal_get_pages;
static hal_put_pages_t hal_put_pages;

static int ascend_get_pages(u64 va, u64 len, p2p_free_callback free_cb,
			    void *data, struct p2p_page_table **table)
{
	int ret = hal_get_pages(va, len, free_cb, data, table);

	if (!ret) {
		atomic_add((*table)->page_num, &npu_stats.pinned_pages);
		atomic_inc(&npu_stats.tables);
	}
	return ret;
}

static int ascend_put_pages(struct p2p_page_table *table)
{
	atomic_sub(table->page_num, &npu_stats.pinned_pages);
	atomic_dec(&npu_stats.tables);
	return hal_put_pages(table);
}

static void ascend_noop_free(void *data)
{
}

/* The HAL is the only judge of its addresses: try to pin, then let go. */
static bool ascend_owns(u64 va, u64 len)
{
	struct p2p_page_table *t;

	if (hal_get_pages(va, len, ascend_noop_free, NULL, &t))
		return false;
	hal_put_pages(t);
	return true;
}

static struct npu_provider ascend_provider = {
	.name = "ascend",
	.get_pages = ascend_get_pages,
	.put_pages = ascend_put_pages,
	.owns = ascend_owns,
};

int npu_ascend_bind(struct npu_provider **out)
{
	hal_get_pages = (hal_get_pages_t)npu_lookup_symbol("hal_kernel_p2p_get_pages");
	hal_put_pages = (hal_put_pages_t)npu_lookup_symbol("hal_kernel_p2p_put_pages");
	if (!hal_get_pages || !hal_put_pages)
		return -ENOENT;
	*out = &ascend_provider;
	return 0;
}
