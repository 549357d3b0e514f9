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
#include "peer_mem_abi.h"

struct npu_peer_mem_ops {
	/*
	 * The callbacks, as registered with the RDMA core.  A registration of
	 * krping_npu's own starts with acquire() below instead of the
	 * client's: it has no core to tell when the memory goes.
	 */
	const struct peer_memory_client_mofed *client;
	int (*acquire)(unsigned long addr, size_t size, void **client_context);
};

const struct npu_peer_mem_ops *npu_peer_mem_get_ops(void);

#endif /* NPU_PEER_MEM_H */
