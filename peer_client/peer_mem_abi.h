/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * peer_mem_abi.h - the two binary layouts of struct peer_memory_client that
 * RDMA cores accept, declared here rather than taken from a core's header
 * (which may be absent or of the other layout):
 *
 *   MOFED 5:          name, version, 7 callbacks            136 bytes
 *   YunScale (xsc) /  the same, then get_context_private_data and
 *   MOFED 4.x:        put_context_private_data              152 bytes
 *
 * Plain C: also compiled by the userspace layout test.  A core that takes
 * either layout is handed the same address; the YunScale struct begins
 * with the MOFED one.
 */
#ifndef PEER_MEM_ABI_H
#define PEER_MEM_ABI_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#else
#include <stddef.h>
#include <stdint.h>
typedef uint64_t u64;
#endif

#define IB_PEER_MEMORY_NAME_MAX		64
#define IB_PEER_MEMORY_VER_MAX		16

struct sg_table;
struct device;

/* Called by a peer client when its memory goes away under a registration. */
typedef int (*invalidate_peer_memory)(void *reg_handle, u64 core_context);

/* MOFED 5 */
struct peer_memory_client_mofed {
	char name[IB_PEER_MEMORY_NAME_MAX];
	char version[IB_PEER_MEMORY_VER_MAX];
	int (*acquire)(unsigned long addr, size_t size,
		       void *peer_mem_private_data, char *peer_mem_name,
		       void **client_context);
	int (*get_pages)(unsigned long addr, size_t size, int write, int force,
			 struct sg_table *sg_head, void *client_context,
			 u64 core_context);
	int (*dma_map)(struct sg_table *sg_head, void *client_context,
		       struct device *dma_device, int dmasync, int *nmap);
	int (*dma_unmap)(struct sg_table *sg_head, void *client_context,
			 struct device *dma_device);
	void (*put_pages)(struct sg_table *sg_head, void *client_context);
	unsigned long (*get_page_size)(void *client_context);
	void (*release)(void *client_context);
};

/* YunScale xsc and MOFED 4.x: the MOFED 5 struct and two more callbacks */
struct peer_memory_client_yunscale {
	struct peer_memory_client_mofed mofed;
	void *(*get_context_private_data)(u64 peer_id);
	void (*put_context_private_data)(void *context);
};

#define PEER_MEM_MOFED_SIZE		136
#define PEER_MEM_YUNSCALE_SIZE		152

/* every field of both layouts, and 152 = 136 + two pointers */
#define PEER_MEM_OFF(f)	offsetof(struct peer_memory_client_mofed, f)
_Static_assert(PEER_MEM_OFF(name) == 0, "name");
_Static_assert(PEER_MEM_OFF(version) == 64, "version");
_Static_assert(PEER_MEM_OFF(acquire) == 80, "acquire");
_Static_assert(PEER_MEM_OFF(get_pages) == 88, "get_pages");
_Static_assert(PEER_MEM_OFF(dma_map) == 96, "dma_map");
_Static_assert(PEER_MEM_OFF(dma_unmap) == 104, "dma_unmap");
_Static_assert(PEER_MEM_OFF(put_pages) == 112, "put_pages");
_Static_assert(PEER_MEM_OFF(get_page_size) == 120, "get_page_size");
_Static_assert(PEER_MEM_OFF(release) == 128, "release");
_Static_assert(sizeof(struct peer_memory_client_mofed) == PEER_MEM_MOFED_SIZE,
	       "MOFED layout is 136 bytes");
_Static_assert(offsetof(struct peer_memory_client_yunscale, mofed) == 0,
	       "YunScale starts with the MOFED layout");
_Static_assert(offsetof(struct peer_memory_client_yunscale,
			get_context_private_data) == 136,
	       "get_context_private_data");
_Static_assert(offsetof(struct peer_memory_client_yunscale,
			put_context_private_data) == 144,
	       "put_context_private_data");
_Static_assert(sizeof(struct peer_memory_client_yunscale) ==
	       PEER_MEM_MOFED_SIZE + 2 * sizeof(void *),
	       "YunScale layout is MOFED plus two pointers");
_Static_assert(sizeof(struct peer_memory_client_yunscale) ==
	       PEER_MEM_YUNSCALE_SIZE, "YunScale layout is 152 bytes");

#ifdef __KERNEL__
/* what a peer-memory core exports (MOFED declares these in peer_mem.h) */
void *ib_register_peer_memory_client(const struct peer_memory_client_mofed *client,
				     int (**invalidate_callback)(void *reg_handle,
								 u64 core_context));
void ib_unregister_peer_memory_client(void *reg_handle);
#endif

#endif /* PEER_MEM_ABI_H */
