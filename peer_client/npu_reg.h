/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * npu_reg.h - the life of one registration of npu_peer_mem, as a state
 * machine: what the client holds (a page table, DMA mappings) and whether
 * the memory was freed under it, moved only by the events below.  Plain C,
 * built into the module and into the userspace unit test (tests/unit).
 *
 * The paths a registration takes:
 *   MOFED, xsc, krping_npu:  NEW -get-> PINNING -got-> PINNED -map-> MAPPED
 *                            -unmap-> UNMAPPED -put-> PUT -release-> (gone)
 *   get_pages refused:       NEW -get-> PINNING -get_failed-> NEW -release->
 *   dma_map failed:          PINNED -put-> PUT -release->
 *   memory freed, mapped:    MAPPED -free-> FREED_MAPPED -unmap-> FREED
 *                            -put-> PUT (inside the core's invalidate or
 *                            after it) -release->
 *   memory freed, pinned:    PINNED or UNMAPPED -free-> FREED -put-> PUT
 *                            -release->; a dma_map() in FREED is refused
 *                            (-EINVAL)
 *   freed before get_pages published its table:
 *                            PINNING -free-> PINNING_FREED -got-> FREED
 * A second free is nothing (the HAL frees once; a put ends the DMA too);
 * an unmap with nothing mapped is nothing.  A registration is mapped once.
 * Every other move is illegal: the module WARNs once and refuses it.
 */
#ifndef NPU_REG_H
#define NPU_REG_H

enum npu_reg_state {
	NPU_REG_NEW,		/* acquired: no page table */
	NPU_REG_PINNING,	/* get_pages: asking the HAL */
	NPU_REG_PINNING_FREED,	/* the HAL freed it before the table was ours */
	NPU_REG_PINNED,		/* a page table held, nothing mapped */
	NPU_REG_MAPPED,		/* a page table held, its entries DMA-mapped */
	NPU_REG_UNMAPPED,	/* a page table held, its mapping undone */
	NPU_REG_FREED,		/* freed: the table held until put, unmapped */
	NPU_REG_FREED_MAPPED,	/* freed while mapped: the core's unmap due */
	NPU_REG_PUT,		/* put_pages begun: nothing held */
	NPU_REG_NSTATES
};

enum npu_reg_event {
	NPU_EV_GET,		/* get_pages() asks the HAL */
	NPU_EV_GOT,		/* ... which gave a table */
	NPU_EV_GET_FAILED,	/* ... which refused */
	NPU_EV_MAP,		/* dma_map() mapped every entry */
	NPU_EV_UNMAP,		/* dma_unmap() */
	NPU_EV_PUT,		/* put_pages() */
	NPU_EV_FREE,		/* the HAL's free callback */
	NPU_EV_RELEASE,		/* release(): the core lets go */
	NPU_EV_N
};

/* npu_reg_next()'s answer to a move the rules forbid: a caller's bug */
#define NPU_REG_ILLEGAL	(-1000)

/*
 * The state @ev leads to from @s; -EINVAL when the rules refuse it
 * (dma_map of freed memory), NPU_REG_ILLEGAL when no caller may do it.
 */
int npu_reg_next(enum npu_reg_state s, enum npu_reg_event ev);
/* Does a registration in @s hold a page table? */
int npu_reg_holds_table(enum npu_reg_state s);
const char *npu_reg_state_name(enum npu_reg_state s);
const char *npu_reg_event_name(enum npu_reg_event ev);

#endif /* NPU_REG_H */
