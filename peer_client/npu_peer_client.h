/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* npu_peer_client.h - the client struct and its state, for npu_peer_main.c */
#ifndef NPU_PEER_CLIENT_H
#define NPU_PEER_CLIENT_H

#include "peer_mem_abi.h"
#include "npu_provider.h"
#include "npu_peer_mem.h"

/*
 * The registered struct.  In MOFED mode the core is given the 136-byte view
 * (.mofed); bytes 136..151 are zero all the same, so a core that reads the
 * YunScale tail anyway finds NULL there.
 */
extern struct peer_memory_client_yunscale npu_client;
extern struct npu_provider *npu_prov;
extern invalidate_peer_memory npu_core_invalidate;
extern void *npu_reg_handle;
/* where a put_pages asked for beside a free callback runs */
extern struct workqueue_struct *npu_wq;

int npu_acquire_direct(unsigned long addr, size_t size, npu_freed_fn freed,
		       void *data, void **client_context);
int npu_page_pa(void *client_context, unsigned int i, u64 *pa);
unsigned int npu_retry_kept(void);

#endif /* NPU_PEER_CLIENT_H */
