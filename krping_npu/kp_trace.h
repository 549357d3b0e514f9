/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kp_trace.h - krping_npu's tracepoints: connection events, posts,
 * completions, late waits, probes and each test's end, with the test id
 * and the QP number, to line up with the driver's and the core's own
 * (rdma_cma:*; rdma_core:cq_poll where the core polls, not cq=direct) in
 * trace-cmd, perf or bpftrace.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM krping_npu

#if !defined(_KP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KP_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include "krping_npu.h"

TRACE_EVENT(kp_cm_event,
	TP_PROTO(u32 id, u32 conn, int event, int status),
	TP_ARGS(id, conn, event, status),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, conn)
		__field(int, event)
		__field(int, status)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->conn = conn;
		__entry->event = event;
		__entry->status = status;
	),
	TP_printk("test=%u conn=%u event=%d status=%d",
		  __entry->id, __entry->conn, __entry->event, __entry->status)
);

DECLARE_EVENT_CLASS(kp_wr_class,
	TP_PROTO(u32 id, u32 conn, u32 qpn, u64 wr_id, int opcode, u32 len,
		 u32 flags, u32 nsge),
	TP_ARGS(id, conn, qpn, wr_id, opcode, len, flags, nsge),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, conn)
		__field(u32, qpn)
		__field(u64, wr_id)
		__field(int, opcode)
		__field(u32, len)
		__field(bool, signaled)
		__field(bool, inl)
		__field(u32, nsge)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->conn = conn;
		__entry->qpn = qpn;
		__entry->wr_id = wr_id;
		__entry->opcode = opcode;
		__entry->len = len;
		__entry->signaled = flags & IB_SEND_SIGNALED;
		__entry->inl = flags & IB_SEND_INLINE;
		__entry->nsge = nsge;
	),
	TP_printk("test=%u conn=%u qpn=%u kind=%llu idx=%llu opcode=%d len=%u signaled=%d inline=%d sge=%u",
		  __entry->id, __entry->conn, __entry->qpn,
		  __entry->wr_id & 0xff, __entry->wr_id >> KP_WR_IDX_SHIFT,
		  __entry->opcode, __entry->len, __entry->signaled,
		  __entry->inl, __entry->nsge)
);

/*
 * a work request posted to the send queue (opcode: enum ib_wr_opcode),
 * its bytes in all and its SGEs (rw: the pages rdma_rw maps)
 */
DEFINE_EVENT(kp_wr_class, kp_post_send,
	TP_PROTO(u32 id, u32 conn, u32 qpn, u64 wr_id, int opcode, u32 len,
		 u32 flags, u32 nsge),
	TP_ARGS(id, conn, qpn, wr_id, opcode, len, flags, nsge));

/* ... and to the receive queue (opcode -1) */
DEFINE_EVENT(kp_wr_class, kp_post_recv,
	TP_PROTO(u32 id, u32 conn, u32 qpn, u64 wr_id, int opcode, u32 len,
		 u32 flags, u32 nsge),
	TP_ARGS(id, conn, qpn, wr_id, opcode, len, flags, nsge));

/* a completion, as kp_wc_done() queues it (opcode: enum ib_wc_opcode) */
TRACE_EVENT(kp_wc,
	TP_PROTO(u32 id, u32 conn, const struct ib_wc *wc, u64 wr_id),
	TP_ARGS(id, conn, wc, wr_id),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, conn)
		__field(u32, qpn)
		__field(u64, wr_id)
		__field(int, status)
		__field(int, opcode)
		__field(u32, byte_len)
		__field(u32, vendor_err)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->conn = conn;
		__entry->qpn = wc->qp ? wc->qp->qp_num : 0;
		__entry->wr_id = wr_id;
		__entry->status = wc->status;
		__entry->opcode = wc->opcode;
		__entry->byte_len = wc->byte_len;
		__entry->vendor_err = wc->vendor_err;
	),
	TP_printk("test=%u conn=%u qpn=%u kind=%llu idx=%llu status=%d opcode=%d byte_len=%u vendor_err=0x%x",
		  __entry->id, __entry->conn, __entry->qpn,
		  __entry->wr_id & 0xff, __entry->wr_id >> KP_WR_IDX_SHIFT,
		  __entry->status,
		  __entry->opcode, __entry->byte_len, __entry->vendor_err)
);

/* a timed wait late by KP_LATE_US beyond what the device needs */
TRACE_EVENT(kp_late_wait,
	TP_PROTO(u32 id, u32 conn, u64 waited_ns),
	TP_ARGS(id, conn, waited_ns),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, conn)
		__field(u64, waited_ns)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->conn = conn;
		__entry->waited_ns = waited_ns;
	),
	TP_printk("test=%u conn=%u waited_ns=%llu",
		  __entry->id, __entry->conn, __entry->waited_ns)
);

/* a probe of the peer: 0 sent, 1 answered, 2 the peer lost */
TRACE_EVENT(kp_probe,
	TP_PROTO(u32 id, u32 conn, u32 qpn, int what),
	TP_ARGS(id, conn, qpn, what),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, conn)
		__field(u32, qpn)
		__field(int, what)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->conn = conn;
		__entry->qpn = qpn;
		__entry->what = what;
	),
	TP_printk("test=%u conn=%u qpn=%u %s",
		  __entry->id, __entry->conn, __entry->qpn,
		  __print_symbolic(__entry->what, { 0, "sent" },
				   { 1, "answered" }, { 2, "lost" }))
);

/* a test's end: 0, or the negative errno it ended with */
TRACE_EVENT(kp_test_end,
	TP_PROTO(u32 id, int ret),
	TP_ARGS(id, ret),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->ret = ret;
	),
	TP_printk("test=%u ret=%d", __entry->id, __entry->ret)
);

#endif /* _KP_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kp_trace
#include <trace/define_trace.h>
