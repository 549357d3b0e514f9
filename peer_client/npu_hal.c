// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_hal.c - the one NPU provider: the Ascend HAL,
 * hal_kernel_p2p_get_pages and hal_kernel_p2p_put_pages, bound by name
 * through kallsyms at load (the driver does not export them to modules of
 * other licences).  On a real host they are the Ascend driver's; in the
 * rig npu_sim.ko's, with the same signature, layout and rules.  The
 * module that owns them is held while bound.
 *
 * Whether an address is NPU memory is decided without pinning: NPU
 * virtual addresses live in a window of their own (npu_va_start,
 * npu_va_size); the HAL alone says whether the caller owns them, at
 * get_pages.
 */
#include <linux/module.h>

#include "npu_provider.h"

static unsigned long long npu_va_start = 0x100000000000ull;
module_param(npu_va_start, ullong, 0444);
MODULE_PARM_DESC(npu_va_start, "start of the NPU virtual address window");
static unsigned long long npu_va_size = 0x100000000000ull;
module_param(npu_va_size, ullong, 0444);
MODULE_PARM_DESC(npu_va_size, "size of the NPU virtual address window");

typedef int (*hal_get_pages_t)(u64 va, u64 len, p2p_free_callback free_cb,
			       void *data, struct p2p_page_table **table);
typedef int (*hal_put_pages_t)(struct p2p_page_table *table);

static hal_get_pages_t hal_get_pages;
static hal_put_pages_t hal_put_pages;
static struct module *hal_mod;

static int npu_hal_get_pages(u64 va, u64 len, p2p_free_callback free_cb,
			     void *data, struct p2p_page_table **table)
{
	int ret = hal_get_pages(va, len, free_cb, data, table);

	if (!ret) {
		atomic_add((*table)->page_num, &npu_stats.pinned_pages);
		atomic_inc(&npu_stats.tables);
	}
	return ret;
}

static int npu_hal_put_pages(struct p2p_page_table *table)
{
	u64 n = table->page_num;
	int ret = hal_put_pages(table);

	if (!ret) {
		atomic_sub(n, &npu_stats.pinned_pages);
		atomic_dec(&npu_stats.tables);
	}
	return ret;
}

static bool npu_hal_owns(u64 va, u64 len)
{
	return len && va >= npu_va_start && len <= npu_va_size &&
	       va - npu_va_start <= npu_va_size - len;
}

static struct npu_provider npu_hal = {
	.name = "hal",
	.get_pages = npu_hal_get_pages,
	.put_pages = npu_hal_put_pages,
	.owns = npu_hal_owns,
};

int npu_hal_bind(struct npu_provider **out, const char **owner)
{
	unsigned long get, put;

	get = npu_lookup_symbol("hal_kernel_p2p_get_pages");
	put = npu_lookup_symbol("hal_kernel_p2p_put_pages");
	if (!get || !put)
		return -ENOENT;
	if (npu_module_hold(get, &hal_mod))
		return -ENODEV;
	*owner = hal_mod ? module_name(hal_mod) : "vmlinux";
	hal_get_pages = (hal_get_pages_t)get;
	hal_put_pages = (hal_put_pages_t)put;
	*out = &npu_hal;
	return 0;
}

void npu_hal_unbind(void)
{
	module_put(hal_mod);
	hal_mod = NULL;
}
