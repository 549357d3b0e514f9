/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ascend_hal_abi.h - the binary layout of the Ascend driver's kernel P2P
 * API (CANN's ascend_kernel_hal.h), declared here so that npu_peer_mem
 * builds without the driver's headers:
 *
 *   int hal_kernel_p2p_get_pages(u64 va, u64 len,
 *                                void (*free_callback)(void *data),
 *                                void *data, struct p2p_page_table **table);
 *   int hal_kernel_p2p_put_pages(struct p2p_page_table *table);
 *
 * The driver's rules: the caller runs in the process that owns va; va and
 * len are page aligned; free_callback is not NULL; every get_pages is
 * matched by one put_pages, also after the free callback ran; once the
 * callback returns nobody uses the memory; put_pages is never called
 * from inside the callback, nor waited for by it.
 *
 * Plain C: also compiled by the userspace layout test.
 */
#ifndef ASCEND_HAL_ABI_H
#define ASCEND_HAL_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#else
#include <stddef.h>
#include <stdint.h>
#endif

#define P2P_GET_PAGE_VERSION	0x1

struct p2p_page_info {
	u64 pa;
	u64 reserved[4];
};

struct p2p_page_table {
	u32 version;
	u64 page_size;
	struct p2p_page_info *pages_info;
	u64 page_num;
	u64 reserved[4];
};

typedef void (*p2p_free_callback)(void *data);

#ifdef __KERNEL__
/* the driver's API: npu_sim.ko defines it in the rig, found by name */
int hal_kernel_p2p_get_pages(u64 va, u64 len, p2p_free_callback free_callback,
			     void *data, struct p2p_page_table **page_table);
int hal_kernel_p2p_put_pages(struct p2p_page_table *page_table);
#endif

/*
 * Is @t a table this code can read, for [va, va + len) as asked?  Version
 * 1, a power-of-two page size that va is aligned to, and exactly the pages
 * asked for (page_num * page_size == len, without overflow).
 */
static inline int p2p_table_ok(const struct p2p_page_table *t, u64 va, u64 len)
{
	if (t->version != P2P_GET_PAGE_VERSION || !t->page_num ||
	    !t->page_size || (t->page_size & (t->page_size - 1)) ||
	    (va & (t->page_size - 1)))
		return 0;
	return t->page_num <= len / t->page_size &&
	       t->page_num * t->page_size == len;
}

#define P2P_OFF(f)	offsetof(struct p2p_page_table, f)
_Static_assert(sizeof(struct p2p_page_info) == 40, "p2p_page_info is 40 bytes");
_Static_assert(P2P_OFF(version) == 0, "version");
_Static_assert(P2P_OFF(page_size) == 8, "page_size");
_Static_assert(P2P_OFF(pages_info) == 16, "pages_info");
_Static_assert(P2P_OFF(page_num) == 24, "page_num");
_Static_assert(P2P_OFF(reserved) == 32, "reserved");
_Static_assert(sizeof(struct p2p_page_table) == 64, "p2p_page_table is 64 bytes");

#endif /* ASCEND_HAL_ABI_H */
