// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libascendcl.so for the rig (test only): the seven Ascend runtime calls
 * npu_launch's acl backend uses, over the emulated NPU's /dev/npu_simN, so
 * that backend runs without an NPU.  Names, argument order and return
 * convention (0 on success, an aclError code otherwise) are the runtime's;
 * only what npu_launch needs is there.
 *
 * Like the runtime: aclInit once before anything else; a context is
 * current per thread (aclrtSetDevice makes the device's current in the
 * calling thread; another thread must aclrtSetCurrentContext first, or
 * aclrtMalloc, aclrtFree and aclrtMemcpy fail with
 * ACL_ERROR_RT_CONTEXT_NULL); memory freed with its device at
 * aclrtResetDevice (here: the file closes, so the emulated NPU frees it)
 * or at exit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../../peer_client/npu_sim_uapi.h"

#define ACL_SUCCESS			0
#define ACL_ERROR_INVALID_PARAM		100000
#define ACL_ERROR_UNINITIALIZE		100001
#define ACL_ERROR_REPEAT_INITIALIZE	100002
#define ACL_ERROR_BAD_ALLOC		200000
#define ACL_ERROR_RT_CONTEXT_NULL	107002
#define ACL_ERROR_RT_FAILURE		500000

#define ACL_MEMCPY_HOST_TO_DEVICE	1
#define ACL_MEMCPY_DEVICE_TO_HOST	2

static int acl_inited;
static int acl_fd = -1;
static int acl_dev = -1;
static int acl_dev_ctx;			/* the device's one context */
static __thread void *acl_ctx;		/* current in this thread */

int aclrtGetCurrentContext(void **ctx)
{
	if (!ctx)
		return ACL_ERROR_INVALID_PARAM;
	if (!acl_ctx)
		return ACL_ERROR_RT_CONTEXT_NULL;
	*ctx = acl_ctx;
	return ACL_SUCCESS;
}

int aclrtSetCurrentContext(void *ctx)
{
	if (ctx != &acl_dev_ctx || acl_fd < 0)
		return ACL_ERROR_INVALID_PARAM;
	acl_ctx = ctx;
	return ACL_SUCCESS;
}

int aclInit(const char *config)
{
	(void)config;
	if (acl_inited)
		return ACL_ERROR_REPEAT_INITIALIZE;
	acl_inited = 1;
	return ACL_SUCCESS;
}

int aclFinalize(void)
{
	if (!acl_inited)
		return ACL_ERROR_UNINITIALIZE;
	if (acl_fd >= 0)
		close(acl_fd);
	acl_fd = -1;
	acl_dev = -1;
	acl_inited = 0;
	return ACL_SUCCESS;
}

int aclrtSetDevice(int32_t dev)
{
	char path[32];

	if (!acl_inited)
		return ACL_ERROR_UNINITIALIZE;
	if (acl_fd >= 0) {
		if (dev != acl_dev)
			return ACL_ERROR_INVALID_PARAM;
		acl_ctx = &acl_dev_ctx;
		return ACL_SUCCESS;
	}
	snprintf(path, sizeof(path), "/dev/npu_sim%d", dev);
	acl_fd = open(path, O_RDWR | O_CLOEXEC);
	if (acl_fd < 0)
		return ACL_ERROR_INVALID_PARAM;
	acl_dev = dev;
	acl_ctx = &acl_dev_ctx;
	return ACL_SUCCESS;
}

int aclrtResetDevice(int32_t dev)
{
	if (acl_fd < 0 || dev != acl_dev)
		return ACL_ERROR_INVALID_PARAM;
	close(acl_fd);
	acl_fd = -1;
	acl_dev = -1;
	acl_ctx = NULL;
	return ACL_SUCCESS;
}

int aclrtMalloc(void **ptr, size_t size, int policy)
{
	struct npu_sim_mem m = { .size = size };

	(void)policy;
	if (!ptr || !size)
		return ACL_ERROR_INVALID_PARAM;
	if (!acl_ctx)
		return ACL_ERROR_RT_CONTEXT_NULL;
	if (acl_fd < 0)
		return ACL_ERROR_RT_FAILURE;
	if (ioctl(acl_fd, NPU_SIM_ALLOC, &m))
		return ACL_ERROR_BAD_ALLOC;
	*ptr = (void *)(uintptr_t)m.va;
	return ACL_SUCCESS;
}

int aclrtFree(void *ptr)
{
	uint64_t va = (uintptr_t)ptr;

	if (!acl_ctx)
		return ACL_ERROR_RT_CONTEXT_NULL;
	if (acl_fd < 0 || !ptr)
		return ACL_ERROR_INVALID_PARAM;
	return ioctl(acl_fd, NPU_SIM_FREE, &va) ? ACL_ERROR_INVALID_PARAM :
	       ACL_SUCCESS;
}

int aclrtMemcpy(void *dst, size_t max, const void *src, size_t n, int kind)
{
	struct npu_sim_copy c = { .len = n };
	unsigned long cmd;

	if (!acl_ctx)
		return ACL_ERROR_RT_CONTEXT_NULL;
	if (acl_fd < 0 || n > max)
		return ACL_ERROR_INVALID_PARAM;
	if (kind == ACL_MEMCPY_HOST_TO_DEVICE) {
		c.va = (uintptr_t)dst;
		c.host = (uintptr_t)src;
		cmd = NPU_SIM_COPY_TO;
	} else if (kind == ACL_MEMCPY_DEVICE_TO_HOST) {
		c.va = (uintptr_t)src;
		c.host = (uintptr_t)dst;
		cmd = NPU_SIM_COPY_FROM;
	} else {
		return ACL_ERROR_INVALID_PARAM;
	}
	return ioctl(acl_fd, cmd, &c) ? ACL_ERROR_INVALID_PARAM : ACL_SUCCESS;
}
