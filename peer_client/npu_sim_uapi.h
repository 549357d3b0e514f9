/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * npu_sim_uapi.h - the emulated NPU's user-space face, standing in for the
 * NPU runtime (aclrtMalloc, aclrtFree, aclrtMemcpy): one character device
 * per NPU, /dev/npu_simN.
 *
 * Memory allocated through an open file belongs to the process that
 * allocated it, and is freed when that file is closed (the process exits
 * or is killed), free callbacks of live page tables first, as the runtime
 * frees a dead process's memory.  Limits: NPU_SIM_MAX_ALLOCS allocations
 * an open file, and per user (uid) npu_sim's user_allocs allocations and
 * user_mb MiB, all files together (past either, ENOSPC); sizes within the
 * device's HBM, copies within one allocation.  A copy whose allocation is
 * freed while it runs stops with EFAULT.
 */
#ifndef NPU_SIM_UAPI_H
#define NPU_SIM_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define NPU_SIM_MAX_ALLOCS	64

struct npu_sim_mem {
	__u64 size;	/* in: bytes, rounded up to NPU pages */
	__u64 va;	/* out: the NPU virtual address */
};

struct npu_sim_copy {
	__u64 va;	/* NPU side */
	__u64 host;	/* a user pointer */
	__u64 len;
};

#define NPU_SIM_IOC		'N'
#define NPU_SIM_ALLOC		_IOWR(NPU_SIM_IOC, 1, struct npu_sim_mem)
#define NPU_SIM_FREE		_IOW(NPU_SIM_IOC, 2, __u64)
#define NPU_SIM_COPY_TO		_IOW(NPU_SIM_IOC, 3, struct npu_sim_copy)
#define NPU_SIM_COPY_FROM	_IOW(NPU_SIM_IOC, 4, struct npu_sim_copy)

#endif /* NPU_SIM_UAPI_H */
