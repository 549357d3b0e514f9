// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_hal.c - the one NPU provider: the Ascend HAL,
 * hal_kernel_p2p_get_pages and hal_kernel_p2p_put_pages, bound at load
 * with the driver held (EXPORT_SYMBOL_GPL in the driver: __symbol_get()
 * finds them on every kernel, npu_sym.c).  On a real host they are the
 * Ascend driver's; in the rig npu_sim.ko's, with the same signature,
 * layout and answers.
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

static struct npu_sym hal_get_sym, hal_put_sym;
static hal_get_pages_t hal_get_pages;
static hal_put_pages_t hal_put_pages;

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
	int ret;

	ret = npu_sym_get("hal_kernel_p2p_get_pages", &hal_get_sym);
	if (ret)
		return ret;
	ret = npu_sym_get("hal_kernel_p2p_put_pages", &hal_put_sym);
	if (ret) {
		npu_sym_put(&hal_get_sym);
		return ret;
	}
	*owner = hal_get_sym.owner;
	hal_get_pages = (hal_get_pages_t)hal_get_sym.addr;
	hal_put_pages = (hal_put_pages_t)hal_put_sym.addr;
	*out = &npu_hal;
	return 0;
}

void npu_hal_unbind(void)
{
	npu_sym_put(&hal_put_sym);
	npu_sym_put(&hal_get_sym);
}
