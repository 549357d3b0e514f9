/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * npu_sim.h - what the emulated NPU (npu_sim.ko) offers the rig besides
 * the HAL: an allocator and copies standing in for the NPU runtime's
 * aclrtMalloc/aclrtFree/aclrtMemcpy.  Users take it with
 * symbol_get(npu_sim_get_ops), so they load without npu_sim.
 *
 * The HAL itself, hal_kernel_p2p_get_pages and hal_kernel_p2p_put_pages
 * with the Ascend driver's signature, layout and rules, is found by name
 * (kallsyms) as on a real host: see ascend_hal_abi.h.
 */
#ifndef NPU_SIM_H
#define NPU_SIM_H

#include <linux/types.h>

struct npu_sim_ops {
	/* NPU memory on device @dev owned by process @tgid; 0 when none */
	u64 (*alloc)(unsigned int dev, size_t size, pid_t tgid);
	/* free it: free callbacks of live tables first */
	int (*free)(u64 va);
	/* host <-> NPU copies, standing in for the NPU's DMA engine */
	int (*copy_to)(u64 va, const void *src, size_t len);
	int (*copy_from)(void *dst, u64 va, size_t len);
	unsigned int ndevs;
	unsigned long page_size;
};

const struct npu_sim_ops *npu_sim_get_ops(void);

#endif /* NPU_SIM_H */
