/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * npu_peer_mem.h - what npu_peer_mem.ko offers other modules (krping_npu,
 * the test cores): its peer-memory callbacks.  NPU memory itself comes
 * from the NPU runtime (in the rig: npu_sim.h).
 * Users take it with symbol_get(npu_peer_mem_get_ops), so they load and
 * fail cleanly when npu_peer_mem is absent.
 */
#ifndef NPU_PEER_MEM_H
#define NPU_PEER_MEM_H

#include <linux/types.h>
#include <linux/ioport.h>
#include <linux/mm.h>
#include "peer_mem_abi.h"

/* Bumped whenever struct npu_peer_mem_ops changes: symbol_get() has no CRC. */
#define NPU_PEER_MEM_OPS_VERSION	2

/*
 * Called, like a core's invalidate, when the memory of a pinned
 * registration of krping_npu's own is freed under it.  On return nothing
 * may reach the memory any more; the registration is then torn down as
 * usual (dma_unmap, put_pages, release) by its owner.  It runs in the
 * freeing process's context and must not wait for the owner's teardown.
 */
typedef void (*npu_freed_fn)(void *data);

struct npu_peer_mem_ops {
	unsigned int version;	/* NPU_PEER_MEM_OPS_VERSION */
	/*
	 * The callbacks, as registered with the RDMA core.  A registration of
	 * krping_npu's own starts with acquire() below instead of the
	 * client's, naming whom to tell when the memory goes.
	 */
	const struct peer_memory_client_mofed *client;
	int (*acquire)(unsigned long addr, size_t size, npu_freed_fn freed,
		       void *data, void **client_context);
	/*
	 * The physical address of NPU page @i of a pinned registration, page
	 * 0 holding its first byte; pages are get_page_size() bytes.  For a
	 * CPU mapping of the memory (memremap), never for DMA.
	 */
	int (*page_pa)(void *client_context, unsigned int i, u64 *pa);
};

const struct npu_peer_mem_ops *npu_peer_mem_get_ops(void);

/*
 * Is NPU memory at @pa system RAM (the rig's RAM-backed HBM), or a device
 * BAR?  By the resource tree, not pfn_valid(): a BAR may have a memmap
 * (P2PDMA, ZONE_DEVICE) without being RAM.
 */
static inline bool npu_pa_is_ram(u64 pa, u64 len)
{
	return region_intersects(pa, len, IORESOURCE_SYSTEM_RAM,
				 IORES_DESC_NONE) == REGION_INTERSECTS;
}

#endif /* NPU_PEER_MEM_H */
