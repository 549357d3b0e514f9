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
 * The driver's rules, from its source (devmm): the caller runs in the
 * process that owns va; va sits on a page of the memory's own size (the
 * device's small page, 4 KiB, or its huge page, 2 MiB), else -EOPNOTSUPP;
 * len is any length > 0, which the driver rounds up to whole pages itself,
 * so a table can be longer than the range asked; free_callback is not
 * NULL; every get_pages is matched by one put_pages, also after the free
 * callback ran; once the callback returns nobody uses the memory;
 * put_pages is never called from inside the callback, nor waited for by
 * it.  docs/npu-memory.md has the driver's answers row by row.
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

/* The device's small and huge page: the only alignments the driver takes. */
#define P2P_SMALL_PAGE	0x1000ull
#define P2P_HUGE_PAGE	0x200000ull

/*
 * The driver's page count for [va, va + len) in pages of @ps (a power of
 * two): round_up(len + (va - round_down(va, ps)), ps) / ps, without
 * overflow; 0 for no length.
 */
static inline u64 p2p_page_count(u64 va, u64 len, u64 ps)
{
	u64 in = va & (ps - 1);

	if (!len)
		return 0;
	return len / ps + (in + len % ps + ps - 1) / ps;
}

/*
 * Is @t the table the driver gives for [va, va + len) as asked?  Version
 * 1, a power-of-two page size that va sits on, and exactly the driver's
 * rounded-up page count: the last page may reach past va + len.
 */
static inline int p2p_table_ok(const struct p2p_page_table *t, u64 va, u64 len)
{
	if (t->version != P2P_GET_PAGE_VERSION || !len ||
	    !t->page_size || (t->page_size & (t->page_size - 1)) ||
	    (va & (t->page_size - 1)))
		return 0;
	return t->page_num == p2p_page_count(va, len, t->page_size);
}

/*
 * Ask @try (0, then 1) for a registration [addr, addr + size): the
 * range from its start rounded down to the small page, then to the huge
 * page, with its exact end (the driver rounds the length up).  The
 * memory's page size is known only from the driver's answer, so the
 * second ask is made only on -EOPNOTSUPP ("va is not aligned") and only
 * when it is a different ask.  0 when there is nothing (more) to ask.
 */
static inline int p2p_ask(u64 addr, u64 size, unsigned int try, u64 *va,
			  u64 *len)
{
	u64 align = try ? P2P_HUGE_PAGE : P2P_SMALL_PAGE;

	if (try > 1 || !size || addr + size < addr ||
	    (try && !(addr & (P2P_HUGE_PAGE - 1) & ~(P2P_SMALL_PAGE - 1))))
		return 0;
	*va = addr & ~(align - 1);
	*len = addr + size - *va;
	return 1;
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
