// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_reg.c - the registration state machine (npu_reg.h): one table of
 * every state and event, nothing else.
 */
#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/kernel.h>
#else
#include <errno.h>
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#include "npu_reg.h"

#define X	NPU_REG_ILLEGAL
#define REFUSED	(-EINVAL)

static const signed short npu_reg_table[NPU_REG_NSTATES][NPU_EV_N] = {
	/*
	 * a row a state, three events a line:
	 *	GET	GOT	GET_FAILED
	 *	MAP	UNMAP	PUT
	 *	FREE	RELEASE
	 */
	[NPU_REG_NEW] = {
		NPU_REG_PINNING, X, X,
		X, X, X,
		X, NPU_REG_NEW },
	[NPU_REG_PINNING] = {
		X, NPU_REG_PINNED, NPU_REG_NEW,
		X, X, X,
		NPU_REG_PINNING_FREED, X },
	[NPU_REG_PINNING_FREED] = {
		X, NPU_REG_FREED, X,
		X, X, X,
		NPU_REG_PINNING_FREED, X },
	[NPU_REG_PINNED] = {
		X, X, X,
		NPU_REG_MAPPED, NPU_REG_PINNED, NPU_REG_PUT,
		NPU_REG_FREED, X },
	[NPU_REG_MAPPED] = {
		X, X, X,
		X, NPU_REG_UNMAPPED, X,
		NPU_REG_FREED_MAPPED, X },
	[NPU_REG_UNMAPPED] = {
		X, X, X,
		X, NPU_REG_UNMAPPED, NPU_REG_PUT,
		NPU_REG_FREED, X },
	[NPU_REG_FREED] = {
		X, X, X,
		REFUSED, NPU_REG_FREED, NPU_REG_PUT,
		NPU_REG_FREED, X },
	[NPU_REG_FREED_MAPPED] = {
		X, X, X,
		X, NPU_REG_FREED, X,
		NPU_REG_FREED_MAPPED, X },
	[NPU_REG_PUT] = {
		X, X, X,
		X, NPU_REG_PUT, X,
		NPU_REG_PUT, NPU_REG_PUT },
};

int npu_reg_next(enum npu_reg_state s, enum npu_reg_event ev)
{
	if ((unsigned int)s >= NPU_REG_NSTATES || (unsigned int)ev >= NPU_EV_N)
		return NPU_REG_ILLEGAL;
	return npu_reg_table[s][ev];
}

int npu_reg_holds_table(enum npu_reg_state s)
{
	return s == NPU_REG_PINNED || s == NPU_REG_MAPPED ||
	       s == NPU_REG_UNMAPPED || s == NPU_REG_FREED ||
	       s == NPU_REG_FREED_MAPPED;
}

static const char * const npu_reg_states[NPU_REG_NSTATES] = {
	[NPU_REG_NEW] = "new",
	[NPU_REG_PINNING] = "pinning",
	[NPU_REG_PINNING_FREED] = "pinning-freed",
	[NPU_REG_PINNED] = "pinned",
	[NPU_REG_MAPPED] = "mapped",
	[NPU_REG_UNMAPPED] = "unmapped",
	[NPU_REG_FREED] = "freed",
	[NPU_REG_FREED_MAPPED] = "freed-mapped",
	[NPU_REG_PUT] = "put",
};

static const char * const npu_reg_events[NPU_EV_N] = {
	[NPU_EV_GET] = "get_pages",
	[NPU_EV_GOT] = "get_pages done",
	[NPU_EV_GET_FAILED] = "get_pages failed",
	[NPU_EV_MAP] = "dma_map",
	[NPU_EV_UNMAP] = "dma_unmap",
	[NPU_EV_PUT] = "put_pages",
	[NPU_EV_FREE] = "free callback",
	[NPU_EV_RELEASE] = "release",
};

const char *npu_reg_state_name(enum npu_reg_state s)
{
	return (unsigned int)s < ARRAY_SIZE(npu_reg_states) ? npu_reg_states[s] : "?";
}

const char *npu_reg_event_name(enum npu_reg_event ev)
{
	return (unsigned int)ev < ARRAY_SIZE(npu_reg_events) ? npu_reg_events[ev] : "?";
}
