/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * krping_npu.h - shared definitions of the krping_npu ULP.
 *
 * One test is one struct kp_test with its connections (struct kp_conn, one,
 * or qps=N), driven from start to end by the process that wrote its command
 * to /proc/krping_npu.  The rdma_cm and CQ callbacks only record events and
 * wake that process; every verb is posted and every completion reaped in
 * its context (or, with cpus=, in the threads it starts and waits for).
 */
#ifndef KRPING_NPU_H
#define KRPING_NPU_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/wait.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rw.h>

#ifndef KP_CONFTEST
#error "build through the top Makefile (make): it runs scripts/conftest first"
#endif

#include "../proc/kp_opts.h"
#include "../proc/kp_report.h"
#include "kp_time.h"
#include "kp_clock.h"

/*
 * The arrays a poll fills are __uninitialized: only what the poll returned
 * is read, and a kernel built with INIT_STACK_ALL_ZERO (Debian 12's 6.1 and
 * 6.12) would clear each at every call, inside the timed sample.  Where
 * the headers have no such attribute it is empty.
 */
#ifndef __uninitialized
#define __uninitialized
#endif

#define KP_NAME			"krping_npu"
#define KP_RESULT_MAX		400
#define KP_RQ_DEPTH		16	/* control receives kept posted */
#define KP_DATA_RQ		512	/* bw,send: data receives kept posted */
#define KP_POLL_BATCH		8	/* cq=direct: one ib_poll_cq()'s at most */
#define KP_RECV_BATCH		16	/* ... a chain by default, at most */
/* send slots beyond txdepth: messages, and the zero-length skips */
#define KP_SQ_EXTRA		(16 + KP_RQ_DEPTH)
/* RDMA READs in flight: the device's limit, as ib_read_bw; the CM's field is 8 bits */
#define KP_MAX_RD_ATOM		255
#define KP_RW_MAX_SGE		32	/* rw: SGEs a work request, as the device allows */
#define KP_DRAIN_MS		2000	/* teardown: the last sends; a free callback's fence */
#define KP_FLUSH_WHY_MS		1000	/* a flush: the CM's disconnect after it */
#define KP_LAST_MSG_MS		10	/* a disconnect: a direct CQ polled for the last message */
/*
 * probe=: a probe's own bound.  The device ends a probe to a peer that is
 * gone with an error after the QP's retries (seconds); this is the safety
 * net for one that never ends.
 */
#define KP_PROBE_LOST_S		60
/* iWARP's probe target: a READ's source, then the peer's READ's sink */
#define KP_PROBE_LEN		16
#define KP_PROBE_SINK		8

/*
 * cq=direct: a wait that sleeps polls again after a nap, doubled each
 * empty poll: a control message's answer is seen within tens of us, and
 * a long wait (a server's) polls a thousand times a second.
 */
#define KP_NAP_MIN_NS		16000u
#define KP_NAP_MAX_NS		1000000u

/* kp_poll(): empty polls before sleeping on the CQ */
#define KP_SPIN_ALWAYS		UINT_MAX	/* busy-poll (perftest's default) */
/*
 * The measured loops yield the CPU between iterations, once in this many.
 * Inside a timed interval a busy-poll yields when the scheduler asks, a
 * stream's also to any task that waits for its CPU (kp_cpu_wanted(): a
 * software device's worker is part of the device), a latency loop's only
 * once late (kp_run_give()).  A wait is late once it has lasted
 * KP_LATE_US beyond what the device needs (kp_run_late()), yielded or
 * not; a wlat wait KP_LATE_US old reaps its failures.  The latency result
 * and the log line count both.
 */
#define KP_YIELD_EVERY		64
#define KP_LATE_US		1000u
/*
 * A timed wait that lost the CPU longer than this and than the run's
 * fastest round trip lost it to a co-runner, not to a device's work item
 * (rxe's take tens of us under TCG; a busy task's slice is 750 us or
 * more): kp_run_give().
 */
#define KP_SHARE_US		250u
/* what one timed wait has done with the CPU (kp_run_give()) */
#define KP_WAIT_YIELDED		BIT(0)
#define KP_WAIT_SHARED		BIT(1)

/* The rping/krping advertisement: 16 bytes, network order. */
struct kp_rdma_info {
	__be64 buf;
	__be32 rkey;
	__be32 size;
} __packed;

#define KP_HELLO_MAGIC		0x4b504e55	/* "KPNU" */
/*
 * 7: the client's pace (rate_limit=); 6: each side's probe target
 * (iWARP); 5: the client's warm-up.  A version 4 to 6 client is still
 * served, in its own version and length.
 */
#define KP_HELLO_VERSION	7
#define KP_HELLO_V4		4

enum kp_msg_type {
	KP_MSG_HELLO = 1,	/* client: test parameters and its buffer */
	KP_MSG_HELLO_ACK = 2,	/* server: status and its buffer */
	KP_MSG_FIN = 3,		/* this side's part of the test is done */
	KP_MSG_SKIP = 4,	/* bw,send server: skip my leftover receives */
};

#define KP_HELLO_DUPLEX		0x01	/* HELLO: the server streams too */
#define KP_HELLO_MORE		0x02	/* FIN: a HELLO for the next size follows */
/* HELLO, HELLO_ACK: wlat with immediate data (this side cannot poll) */
#define KP_HELLO_IMM		0x04
/*
 * ... and for bw_send and bw_imm: every data message carries its number
 * in the size's stream (below KP_IMM_LAST) as immediate data
 */
/* HELLO: alat, bw_atomic of compare-and-swaps (else fetch-and-adds) */
#define KP_HELLO_CAS		0x08
/*
 * HELLO: bw_send with validate, each message in its pattern
 * (kp_stream_fill()); HELLO_ACK: the server checks every byte of each.
 * bw_read: the client checks each READ; HELLO_ACK: the server's buffer
 * holds its slots in their patterns, as long as its info says.
 */
#define KP_HELLO_VALIDATE	0x10

/* Test-mode control message; never sent in ping mode (rping speaks 16B). */
struct kp_hello {
	struct kp_rdma_info info;
	__be32 magic;
	u8 version;
	u8 type;
	u8 mode;
	u8 flags;
	__be32 count;		/* 0: run for duration seconds */
	__be32 status;		/* HELLO_ACK: 0 or a positive errno */
	__be32 duration;	/* seconds, with count 0 */
	/*
	 * slat, bw,send: how many zero-length SENDs the peer sends before
	 * its first data message, to use up this side's control receives
	 * queued ahead of its data receives (a receive queue is FIFO); in a
	 * SKIP, the data receives left over after the stream.
	 */
	__be32 skip;
	__be32 warmup;		/* HELLO (version 5): untimed messages first */
	/*
	 * version 6, iWARP: a few bytes of this side's that live as long as
	 * the connection, for the peer's one-byte READ probes (kp_verbs.c)
	 */
	struct kp_rdma_info probe;
	/*
	 * version 7, HELLO: the client's rate_limit in MiB/s, 0: none; the
	 * server's bound on its wait for the FIN counts the paced time
	 */
	__be32 rate;
} __packed;

/* the length of a hello of version 4, 5 and 6 */
#define KP_HELLO_V4_LEN		offsetof(struct kp_hello, warmup)
#define KP_HELLO_V5_LEN		offsetof(struct kp_hello, probe)
#define KP_HELLO_V6_LEN		offsetof(struct kp_hello, rate)

/* wlat, slat, bw,send: the immediate data of the client's last message */
#define KP_IMM_LAST		0x80000000u

#define KP_CTRL_SIZE		sizeof(struct kp_hello)

/* ud: the GRH (RoCE v2 over IPv4: its header at 20) ahead of a message */
#define KP_UD_GRH		40
/* ud, mem=npu: SGEs a message and its header take, one an NPU page they touch */
#define KP_UD_NPU_SGE		3

/*
 * The private data of a test's connect requests: qps=N opens N
 * connections, each naming its lane and the test's cookie, so the server
 * takes them as one test.  A request without it (rping, an older client)
 * is lane 0 of 1.
 */
struct kp_conn_data {
	__be32 magic;		/* KP_HELLO_MAGIC */
	u8 version;		/* KP_CONN_VERSION */
	u8 lane;
	u8 qps;
	u8 rsvd;
	__be32 cookie;
} __packed;

#define KP_CONN_VERSION		1

/*
 * What a work request was for.  Each kind has an ib_cqe of its
 * connection; a completion is read with the kind (and a stream's message
 * index above KP_WR_IDX_SHIFT) in wc->wr_id (kp_wc_done()).
 */
enum kp_wr {
	KP_WR_SEND = 1,
	KP_WR_RECV,
	KP_WR_READ,
	KP_WR_WRITE,
	KP_WR_REG,
	KP_WR_INV,
	KP_WR_DATA_SEND,	/* slat, bw,send: a data message */
	KP_WR_DATA_RECV,	/* ... and its receive, in the data buffer */
	KP_WR_SKIP,		/* a zero-length SEND using up a peer's receive */
	KP_WR_FENCE,		/* a free callback's markers (kp_npu.c) */
	KP_WR_PROBE,		/* is the peer there? (kp_slice_over()) */
	KP_WR_ATOMIC,		/* alat, bw_atomic: an atomic */
	KP_WR_SRECV,		/* a shared SRQ's receive: its slot above the kind */
	KP_WR_NR,
};

#define KP_WR_IDX_SHIFT	8	/* wr_id: a stream's message index above the kind */

/* A work request's completion entry, and what the request was for. */
struct kp_cqe {
	struct ib_cqe cqe;
	u64 wr_id;
};

enum kp_cm_state {
	KP_CM_IDLE,
	KP_CM_CONNECT_REQUEST,
	KP_CM_ADDR_RESOLVED,
	KP_CM_ROUTE_RESOLVED,
	KP_CM_CONNECTED,
	KP_CM_DISCONNECTED,
	KP_CM_ERROR,
};

enum kp_rec_state {
	KP_REC_RUNNING,
	KP_REC_LISTENING,	/* a server, its rdma_listen() done: connect now */
	KP_REC_DONE,
	KP_REC_FAILED,
};

/* One measured result: a size of a sweep. */
struct kp_result {
	enum kp_mode mode;
	bool is_bw;
	u32 duration_s;
	union {
		struct kp_lat_result lat;
		struct kp_bw_result bw;
	};
	struct kp_hw_counters hw;	/* the device's, over its size */
};

/* What /proc/krping_npu shows of one test; outlives the test. */
struct kp_record {
	struct list_head node;
	u32 id;
	enum kp_role role;
	enum kp_mode mode;
	enum kp_mem mem;
	enum kp_cq_ctx cq;	/* its CQs' poll context */
	u32 sge;		/* SGEs of a data work request */
	bool rw;		/* the data through rdma_rw */
	u32 warmup;		/* a client's untimed messages a size */
	const char *clock;	/* its timed loops' clock (kp_clock_of()) */
	u32 clock_khz;		/* that clock's rate; 0: ktime_get_ns() */
	const char *clock_rate;	/* "kernel", "measured"; NULL: ktime */
	u32 clock_cal_ns;	/* its calibration's reads (struct kp_clock) */
	enum kp_rec_state state;
	char dev[IB_DEVICE_NAME_MAX];
	struct kp_counters cnt;
	char result[KP_RESULT_MAX];	/* ping, fr, served, error */
	struct kp_result *res;		/* rlat/wlat/bw, one a size */
	u32 nres;
	bool has_progress;		/* running, with progress= */
	bool seen;			/* finished, and shown to a reader */
	u64 finish_seq;			/* when it finished, among records */
	struct kp_progress progress;
};

/*
 * Where a measured loop stands: its end, its progress reports and its
 * yields.  A latency loop's is the test's (kp_test.run), a bw stream's
 * its connection's (kp_stream.run).
 */
struct kp_run {
	u64 start_ns;
	u64 deadline_ns;	/* duration runs; 0: count runs */
	u64 next_report_ns;	/* 0: no progress reports */
	u64 interval_ns;
	u64 last_ns;		/* the current interval began */
	u64 last_iters;
	u64 lat_sum, lat_max;	/* latency samples of the interval */
	u64 lat_n;
	bool timed;		/* between kp_run_begin() and kp_run_end() */
	u64 iters;		/* kp_loop_yield() calls; one in KP_YIELD_EVERY yields */
	u64 sched_yields;	/* busy-polls yielded to a waiting task */
	u64 late_waits;		/* timed waits late (kp_run_late()) */
	u64 shared;		/* timed waits that lost the CPU to a co-runner */
	u64 shared_ns;		/* and how long in all */
	bool sampled;		/* times round trips (kp_lat_sample()) */
	u64 rt_min;		/* its shortest round trip so far; 0: none yet */
	u64 thread_ns;		/* bw: the thread's system time at the start */
};

/*
 * A bw stream of one connection: kp_bw.c's state between its steps, its
 * timing and CPU accounting, and its result.
 */
struct kp_stream {
	enum ib_wr_opcode op;
	u8 kind;		/* enum kp_wr of its messages */
	u32 depth;		/* messages in flight at most */
	u32 sig;		/* signal one in this many */
	u32 burst;		/* rate_limit: messages a burst */
	u32 list;		/* post_list: messages a chain, or 1 */
	u64 chains;		/* ... ib_post_send() calls of the timed stream */
	u64 pace_start;		/* rate_limit: the stream's bytes count from here */
	u64 warm;		/* untimed messages; 0: the timed stream */
	u64 posted, done;
	u64 now;		/* of the last post or reap */
	u64 end_ns;		/* the timed stream's last completion */
	bool stop;		/* the last message is posted */
	bool over;		/* its part of the test's loop ended */
	struct kp_run run;
	u64 *ring;		/* post times of the last window (KP_BW_RING) */
	struct kp_bw_track track;
	/* bytes completed by slot of time (KP_BW_SLOTS), for qps=N's peak */
	u64 *slot_buf;
	struct kp_bw_slots slots;
	/* each CPU's softirq time at the start, and the CPUs run on */
	u64 *softirq_ns;
	cpumask_var_t cpus_run;
	bool cpus_held;		/* cpus_run allocated */
	struct kp_bw_result res;	/* of the timed stream */
};

/* A stream (or a bw,send sink) starts: nothing posted, done or over. */
static inline void kp_stream_reset(struct kp_stream *st)
{
	st->warm = 0;
	st->posted = 0;
	st->done = 0;
	st->now = 0;
	st->end_ns = 0;
	st->stop = false;
	st->over = false;
}

struct kp_conn;

/* rw: one message's rdma_rw context, and the pages it maps (kp_rw.c) */
struct kp_rw {
	struct rdma_rw_ctx ctx;
	struct scatterlist *sgl;
	u32 nents;		/* of sgl, mapped */
	enum dma_data_direction dir;
	bool live;		/* initialised, not yet destroyed */
};

/*
 * A data buffer and its fast-reg MR: physically contiguous host memory
 * (vaddr), or NPU memory registered through npu_peer_mem's callbacks
 * (npu_va), which the CPU reaches only through the host shadow.
 */
struct kp_buf {
	void *vaddr;
	u64 dma;		/* DMA address (NPU memory: its MR's iova) */
	u64 iova;		/* where it starts in its MR's address space */
	u32 size;
	u32 span;		/* bytes allocated and mapped, size and more */
	u32 page_size;		/* of the MR */
	struct ib_mr *mr;
	bool mr_shared;		/* mr is the test's (kp_smr), not its own */
	struct scatterlist sg;
	bool mapped;		/* dma holds an ib_dma_map_single() address */
	bool registered;	/* the MR's current key is valid */
	bool live;		/* kp_buf_alloc() ran: kp_buf_free() undoes */
	/*
	 * kp_buf_to_cpu() gave it to the CPU: no work request may use it
	 * until kp_buf_to_dev() gives it back (the DMA API's ownership).
	 */
	bool cpu_owned;

	/* mem=npu */
	struct kp_conn *conn;	/* for the free callback */
	u64 npu_va;
	bool npu_owned;		/* allocated by the rig's runtime, not carved */
	void **npu_cpu;		/* memremap()s of its NPU pages */
	unsigned int npu_ncpu;
	void *npu_ctx;		/* the peer client's context */
	struct sg_table npu_sgt;
	u64 npu_page;		/* the page table's page size */
	struct scatterlist *npu_mr_sgl;	/* npu_sgt trimmed to the buffer */
	int npu_nents;
	bool npu_pinned;
	bool npu_mapped;
	u8 *shadow;		/* host copy for payload and validation */
};

/*
 * qps=N, host memory: one MR over the data buffers of all the test's
 * connections (perftest's default; mr_per_qp: one each).  Connection i's
 * buffer is a block of its own at i * stride of the MR's address space;
 * the MR is allocated, and its key chosen, with connection 0's block,
 * mapped and registered with the last one's (kp_smr_add()), and released
 * after every connection's size has ended.
 */
struct kp_smr {
	struct ib_mr *mr;
	struct scatterlist *sgl;	/* a block a connection */
	u32 stride;
	u32 page_size;
	u64 iova;
};

/*
 * srq with qps=N, the server: one SRQ for all the test's QPs, as perftest
 * -q N --use_srq's.  Any connection's message takes whichever receive is
 * at its head, so every receive can take any: a slot of its own for a
 * control message (and a data message's first bytes), then the sink, the
 * largest message's room that data messages share (nobody reads them:
 * validate is refused).  Its QP's context says whose a completion is
 * (kp_ssrq_take()); slots go back to the free list once taken, and are
 * posted from there.  Made with connection 0's verbs, on the PD they all
 * share, and destroyed with them, after every QP.
 */
struct kp_ssrq {
	struct ib_srq *srq;
	u32 nslots;
	struct kp_cqe *cqe;	/* a slot's, its index in wr_id */
	void *ctrl;		/* the slots' control messages ... */
	u64 ctrl_dma;
	u32 stride;		/* ... this far apart */
	struct kp_buf sink;
	/*
	 * what follows: one thread drives a server's connections today;
	 * the lock keeps the pool right should they get threads of their own
	 */
	spinlock_t lock;
	u32 *free;		/* slots not posted */
	u32 nfree;
	int data;		/* receives posted as data, less data taken */
	u32 data_max;		/* rx_depth: the data receives it holds */
	u32 spare;		/* ... of them left by a size by duration */
	u64 posted;		/* receives posted, for the dmesg line */
};

/*
 * One test: what the writer asked for, the parameters of the size being
 * run, its record, the measured run of a latency loop, and its
 * connections (qps=N of them; one otherwise).  Driven by the writer's
 * process from start to end; with cpus= its connections' streams run on
 * kernel threads meanwhile (kp_lanes.c).
 */
struct kp_test {
	struct kp_opts opts;
	struct kp_record *rec;
	struct kp_smr smr;
	struct kp_ssrq ssrq;
	/*
	 * Everything of the test sleeps here: the writer, the threads on
	 * their CQs, the CM waits and NPU free callbacks; each waiter
	 * checks its own condition.
	 */
	wait_queue_head_t wq;

	/* the harness's share of a sample of the size run (kp_harness()) */
	u64 harness_ns;
	/* the size being run: the writer's, or the client's HELLO's */
	enum kp_mode mode;
	u32 count;		/* 0: duration_s */
	u32 duration_s;
	u32 size;
	u32 warmup;		/* server: the client's warm-up messages */
	u32 rate;		/* the client's rate_limit (MiB/s), 0: none */
	enum kp_atomic atomic_op;	/* server: the client's atomics' */
	bool duplex;
	bool wlat_imm;		/* wlat: immediate data, not polled buffers */
	/* bw_imm, bw_send with imm: every message's immediate its number */
	bool imm_stream;
	bool validate;		/* bw_send: each message's bytes checked */
	bool more;		/* server: the client's FIN said another size */

	/*
	 * The connections; the server learns how many from the client's
	 * first connect request.  Each is published with nconns (release)
	 * for the CM handler (kp_cm_claim()), and stays until the test ends.
	 */
	struct kp_conn *conns[KP_MAX_QPS];
	u32 nconns;
	u32 peer_qps;		/* server: the client's N */
	u32 cookie;		/* the client's, on all its connections */
	bool live;		/* the test runs on its connections */
	bool conn_down;		/* a connection of the test was lost */
	bool abort;		/* a thread failed, or the writer stops them */
	atomic_t ready;		/* threads at the start line (cpus=) */

	/* the client's port counters at a size's start (kp_hw.c) */
	struct rdma_hw_stats *hw_stats;
	u64 *hw_start;
	struct ib_device *hw_dev;
	u32 hw_port;

	/* every timed loop's clock (kp_clock.h), calibrated as it starts */
	struct kp_clock clk;

	/* latency loops: the run, its samples (a count run) and histogram */
	struct kp_run run;
	u64 *samples;
	u32 nsamples;
	struct kp_hist *hist;

	/* mem=npu: npu_peer_mem's ops and the NPU runtime's, held for the test */
	const struct npu_peer_mem_ops *npu;
	const struct npu_sim_ops *npu_rt;	/* without npu_va only */
	u64 npu_next;		/* npu_va: the next piece to carve */
	unsigned int npu_bufs;	/* pieces out */
	const char *npu_freed;	/* a connection's buffer freed under the test */
};

/*
 * One connection of a test: its rdma_cm id, verbs, control messages,
 * receive queue, buffers, the peer's buffer, and its bw stream.
 */
struct kp_conn {
	struct kp_test *t;
	u32 idx;		/* its place in t->conns, the lane on the wire */
	struct kp_counters *cnt;	/* [0]: the record's; others: own_cnt */
	struct kp_counters own_cnt;	/* until kp_conns_free() adds it */

	/* rdma_cm, written by kp_cma_handler */
	enum kp_cm_state cm_state;
	bool established;	/* ESTABLISHED was seen, whatever came after */
	bool accepted;		/* server: rdma_accept() went out */
	int cm_error;
	/* client: the connection; server's [0]: the listener, until the test runs */
	struct rdma_cm_id *cm_id;
	struct rdma_cm_id *child_id;	/* server: the accepted connection */
	/* the connect request's, from our side (READs we serve, we send) */
	u8 req_responder_resources;
	u8 req_initiator_depth;

	/* verbs */
	struct ib_pd *pd;	/* qps=N, host memory: connection 0's */
	bool pd_shared;		/* ... and this is not connection 0 */
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_srq *srq;	/* srq: where the QP's receives go */
	u64 srq_recvs;		/* srq: receives posted through its own SRQ */
	bool srq_shared;	/* ... the test's (struct kp_ssrq) */
	/*
	 * ... a message of the client's stream, not a control message: from
	 * our ACK until the one marked last (kp_ssrq_take())
	 */
	bool srq_data;
	/*
	 * ud: every SEND goes through the peer's address handle to its QP
	 * (the client's from the CM, the server's from the first message);
	 * each receive has recv_hdr (KP_UD_GRH) bytes of header first
	 */
	bool ud;
	u32 recv_hdr;
	struct ib_ah *ah;
	struct rdma_ah_attr ud_attr;	/* ... the client's, from the CM */
	bool ud_attr_held;
	u32 remote_qpn;
	u32 remote_qkey;
	u32 ud_mtu;		/* ud: the largest message, the path MTU */
	int ud_loss;		/* ud: bw,send's messages lost: the size's errno */
	u32 port;
	u32 sq_depth;
	u32 cq_depth;
	u32 max_inline;		/* bytes a WRITE may carry inline, 0: none */
	u8 rd_atom;
	/*
	 * Completions: one entry a kind, and one a signaled message of a
	 * stream (its index, which the kind's entry cannot hold).  The
	 * core's poll context, or kp_cq_process() in ours, calls
	 * kp_wc_done(), which queues each completion in wcq for kp_poll().
	 */
	struct kp_cqe cqe[KP_WR_NR];
	struct kp_cqe *slots;
	u32 nslots;		/* a power of two */
	spinlock_t wcq_lock;
	struct ib_wc *wcq;
	u32 wcq_n;		/* a power of two */
	u32 wcq_head;
	u32 wcq_tail;
	bool wcq_lost;		/* a completion found wcq full */
	u32 nap_ns;		/* cq=direct: the sleep between two polls */
	struct work_struct drain_work;	/* cq=direct: ib_drain_qp() (kp_drain()) */
	struct completion drained;
	bool draining;		/* kp_free_verbs() drains the QP (npu_lock) */
	unsigned int sends_out;	/* signaled sends not yet completed */
	bool send_busy;		/* send_msg's last SEND has not completed */
	unsigned int polls;	/* kp_poll() calls, to yield every so often */
	u32 send_len;		/* bytes of the last SEND posted */
	u32 wait_ms;		/* bound of the current wait */
	u32 errors;		/* failed completions, for progress reports */
	/*
	 * probe=: the current wait is on the peer (kp_probe_begin()): it
	 * lasts while READs of (or WRITEs to) the peer complete.
	 */
	bool probing;
	bool probe_out;		/* a probe is posted, not yet completed */
	u64 probe_until;	/* ns: the probing wait's outer bound */
	u32 probe_outer_ms;	/* ... from its start */
	bool probe_read;	/* the peer grants READs: iWARP probes are */
	bool iwarp;		/* the connection's device speaks iWARP */
	u8 peer_ver;		/* the hello version the client speaks */
	u64 probe_at;		/* ns: the outstanding probe was posted */
	u64 alive_at;		/* ns: the peer's last sign of life */
	u32 probes;		/* probes answered */
	struct kp_run *run;	/* the measured run its loop is in, or NULL */
	u64 loops;		/* kp_loop_yield() calls */

	/* control messages (host memory, local_dma_lkey) */
	void *recv_buf;		/* what the receives land in: recv_hdr first */
	void *recv_msg;		/* ... and the message after it */
	u64 recv_dma;
	void *send_msg;
	u64 send_dma;
	bool recv_ready;	/* a message arrived, not yet consumed */
	u32 recv_len;		/* byte_len of the last receive */
	u32 recv_inv_rkey;	/* rkey the peer invalidated, 0 if none */
	u32 imm[4];		/* wlat: the peer's writes seen ahead of the loop */
	u32 imm_n;

	/*
	 * The receive queue.  Control receives are reposted as they are
	 * used, except while data receives are queued behind them (slat,
	 * bw,send: rq_hold); the peer then uses up the rq_ctrl left ahead
	 * with zero-length SENDs (skips) before its data.
	 */
	u32 rq_ctrl;		/* control receives posted, not yet completed */
	u32 rq_data;		/* data receives posted, not yet completed */
	u32 rq_data_max;	/* the data receives the RQ has room for */
	bool rq_hold;		/* do not repost control receives */
	/*
	 * Data receives go in chains of rq_list (recv_post_list=) once as
	 * many have been used, else in chains of what was used; counted a
	 * size for the server's line.
	 */
	struct ib_recv_wr *rq_wr;	/* a chain's work requests */
	struct ib_sge *rq_sge;		/* ... their SGEs, validate: a slot each */
	u32 rq_list;		/* 0: each batch as it is used */
	u32 rq_owed;		/* used, not yet posted again */
	u64 rq_posted;		/* data receives posted this size */
	/*
	 * duplex bw,send, and a sink by count: the peer's messages this
	 * size, as many receives as are posted (none left over; 0: a stream
	 * by duration); duplex: those taken, and its last seen
	 */
	u64 rq_total;
	u64 sink_done;
	bool sink_over;
	u64 rq_chains;		/* ... in this many ib_post_recv() calls */
	u32 skip_in;		/* skips still to come from the peer */
	u32 skip_out;		/* skips to send the peer before our data */

	/* data: ping client: start (read by the server), rdma (written by
	 * it); server and the test modes: rdma only.
	 */
	struct kp_buf start;
	struct kp_buf rdma;

	/* the peer's advertised buffer */
	u64 remote_addr;
	u32 remote_rkey;
	u32 remote_len;

	/*
	 * iWARP: KP_PROBE_LEN bytes registered for the connection's life,
	 * the peer's READ probes' source and ours' sink; the peer's.
	 */
	struct kp_buf probe_buf;
	u64 peer_probe_addr;
	u32 peer_probe_rkey;
	bool peer_probe;	/* the peer advertised its probe target */

	/* rw: a context a message of the window, the buffer's pages */
	struct kp_rw *rw;
	u32 nrw;		/* a power of two */
	struct scatterlist *rw_sgl;
	u32 rw_nents;
	u32 rw_wrs;		/* work requests a message takes at most */

	/* post_list=: the stream's work requests of one chain */
	struct ib_rdma_wr *chain_wr;
	struct ib_sge *chain_sge;	/* KP_MAX_SGE a work request */
	struct ib_ud_wr *chain_ud;	/* ud: the chain as datagrams */
	u32 chain_n;			/* added, not posted yet */

	struct kp_stream stream;
	u64 reaped;		/* bw completions reaped, warm-up included */
	u64 imm_seq;		/* imm_stream: data messages posted this size */
	/*
	 * validate: the data buffer holds val_slots messages, each in a
	 * slot of its own (message k in slot k % val_slots); the client
	 * fills one before it goes, the server checks and poisons one
	 * before it is posted again.  bw_read: the server's slots are
	 * written once, and the client reads slot k % val_peer of them
	 * into its slot k % val_slots, checks and poisons it.  bw_imm:
	 * the client writes message k into the server's slot k % val_peer,
	 * which the server checks when k's immediate arrives.
	 */
	u32 val_slots;
	u32 val_stride;		/* a slot's bytes: its message's, cache-aligned */
	u32 val_hdr;		/* ud server: a slot's header, ahead of its message */
	u32 val_peer;		/* bw_read's, bw_imm's client: the server's slots */
	u32 val_pstride;	/* ... and the bytes from one to the next */
	u64 val_seq;		/* client: messages filled (READs posted) this size */
	u64 val_msgs;		/* messages checked this size */

	/* alat, bw_atomic: the target's value once our atomics land */
	u64 atomic_val;
	u64 atomic_n;		/* atomics posted */
	u64 atomic_miss;	/* ... of them compare-and-swaps meant to fail */

	/* mem=npu: a free callback of its NPU memory against its QP */
	struct kp_buf *npu_freed;	/* whose NPU memory was freed under us */
	atomic_t npu_fence;	/* a free callback's markers not yet reaped */
	bool npu_releasing;	/* the writer is in kp_npu_buf_free(), not polling */
	bool npu_teardown;	/* the writer polls no more but to drain */
	/*
	 * A free callback of NPU memory against what touches the memory or
	 * the QP meanwhile: CPU copies into and out of it, the QP's creation
	 * and destruction.
	 */
	struct mutex npu_lock;
};

/* Does the test's data go through one MR (struct kp_smr)? */
static inline bool kp_smr_wanted(const struct kp_test *t)
{
	return t->nconns > 1 && !t->opts.mr_per_qp && !t->opts.ud &&
	       t->opts.mem == KP_MEM_HOST;
}

/* ... and does connection @c's block complete it (kp_smr_add())? */
static inline bool kp_smr_last(const struct kp_conn *c)
{
	return c->idx + 1 == c->t->nconns;
}

static inline struct ib_device *kp_dev(struct kp_conn *c)
{
	return c->pd->device;
}

/* Objects alive now, for leak checks: the last line of /proc/krping_npu. */
struct kp_live {
	atomic_t tests;
	atomic_t cm_ids;
	atomic_t qps;
	atomic_t bufs;
};

extern struct kp_live kp_live;

/*
 * Liveness probes since the module was loaded (probe=, kp_verbs.c), for
 * env.txt: those the peer answered, and the waits that ended with a peer
 * not answering.
 */
struct kp_probe_count {
	atomic_t answered;
	atomic_t lost;
};

extern struct kp_probe_count kp_probe_count;

/* kp_rec.c: the record store */
struct seq_file;
struct kp_record *kp_rec_new(const struct kp_opts *o, const struct kp_clock *k);
void kp_rec_finish(struct kp_record *rec, int ret);
int kp_rec_show(struct seq_file *m, void *v);
int kp_rec_show_json(struct seq_file *m, void *v);
void kp_rec_exit(void);
void kp_rec_result(struct kp_test *t, const char *fmt, ...) __printf(2, 3);
int kp_rec_add(struct kp_test *t, const struct kp_result *res);
void kp_rec_progress(struct kp_test *t, const struct kp_progress *p);
void kp_rec_set_dev(struct kp_test *t, struct ib_device *dev);
void kp_rec_listening(struct kp_test *t, bool listening);
u32 kp_rec_nres(struct kp_test *t);
void kp_rec_hw(struct kp_test *t, u32 first, const struct kp_hw_counters *hw);

/* kp_cm.c */
int kp_run_client(struct kp_test *t);
int kp_run_server(struct kp_test *t);

/* kp_srq.c */
int kp_ssrq_create(struct kp_conn *c, struct ib_device *dev, u32 nconns,
		   void (*done)(struct ib_cq *cq, struct ib_wc *wc));
void kp_ssrq_destroy(struct kp_conn *c);
int kp_ssrq_post_ctrl(struct kp_conn *c);
int kp_ssrq_post_data(struct kp_conn *c, u32 n);
int kp_ssrq_take(struct kp_conn *c, struct ib_wc *wc);
void kp_ssrq_size_end(struct kp_test *t);

/* kp_verbs.c */
int kp_setup_verbs(struct kp_conn *c, struct rdma_cm_id *id);
void kp_free_verbs(struct kp_conn *c);
int kp_buf_alloc(struct kp_conn *c, struct kp_buf *b, u32 size);
void kp_buf_free(struct kp_conn *c, struct kp_buf *b);
int kp_smr_add(struct kp_conn *c, struct kp_buf *b, u32 size);
void kp_smr_release(struct kp_test *t);
int kp_post_recv(struct kp_conn *c);
int kp_post_data_recv(struct kp_conn *c, u32 n);
int kp_data_recv_used(struct kp_conn *c, u32 got);
int kp_rx_opts_check(struct kp_test *t, enum kp_mode mode, bool duplex);
int kp_rq_hold(struct kp_conn *c, u32 ndata);
void kp_conn_state(struct kp_conn *c);
int kp_rq_restore(struct kp_conn *c);
int kp_post_skips(struct kp_conn *c, u32 n);
void *kp_send_buf(struct kp_conn *c);
int kp_post_send_msg(struct kp_conn *c, u32 len, u32 inv_rkey);
int kp_post_reg(struct kp_conn *c, struct kp_buf *b, int access, bool signal);
int kp_post_inv(struct kp_conn *c, struct kp_buf *b, bool signal);
int kp_post_rdma_at(struct kp_conn *c, enum ib_wr_opcode op,
		    struct kp_buf *b, u32 off, u32 roff, u32 len, u64 wr_id,
		    bool signal, u32 imm);
int kp_post_rdma(struct kp_conn *c, enum ib_wr_opcode op, struct kp_buf *b,
		 u32 len, u64 wr_id, bool signal, u32 imm);
int kp_chain_add(struct kp_conn *c, enum ib_wr_opcode op, struct kp_buf *b,
		 u32 off, u32 roff, u32 len, u64 wr_id, bool signal, u32 imm);
int kp_chain_post(struct kp_conn *c);
int kp_post_atomic(struct kp_conn *c, enum kp_atomic op, struct kp_buf *b,
		   u64 wr_id, bool signal, u64 arg, u64 swap);
int kp_poll(struct kp_conn *c, struct ib_wc *wc, int max, unsigned int spin);
int kp_poll_now(struct kp_conn *c, struct ib_wc *wc, int max);
void kp_harness(struct kp_conn *c, u32 div);
int kp_pingpong_done(struct kp_conn *c, u64 iters, u64 warm);
bool kp_stopping(struct kp_test *t);
int kp_recv_done(struct kp_conn *c, const struct ib_wc *wc);
int kp_recv_keep(struct kp_conn *c, const struct ib_wc *wc);
int kp_imm_take(struct kp_conn *c, u32 *imm);
void kp_settle(struct kp_conn *c);
int kp_sends_settle(struct kp_conn *c);
int kp_wait_for(struct kp_conn *c, enum kp_wr want, unsigned int spin);
void kp_set_info(struct kp_rdma_info *info, struct kp_buf *b, u32 len);
void kp_get_info(struct kp_conn *c, const struct kp_rdma_info *info);
void kp_get_probe_info(struct kp_conn *c, const struct kp_rdma_info *info);
int kp_probe_target(struct kp_conn *c);
int kp_cm_check(struct kp_conn *c);
u32 kp_peer_wait_ms(struct kp_test *t);
int kp_ud_size(struct kp_conn *c, u32 size);
int kp_imm_refused(struct kp_conn *c, struct ib_device *dev,
		   enum kp_mode m, bool wlat_imm);
void kp_probe_begin(struct kp_conn *c);
void kp_probe_end(struct kp_conn *c);
int kp_probe_tick(struct kp_conn *c);

void *kp_buf_cpu(struct kp_buf *b);
int kp_buf_to_dev(struct kp_conn *c, struct kp_buf *b, u32 len);
int kp_buf_to_cpu(struct kp_conn *c, struct kp_buf *b, u32 len);
int kp_buf_to_dev_at(struct kp_conn *c, struct kp_buf *b, u32 off, u32 len);
int kp_buf_to_cpu_at(struct kp_conn *c, struct kp_buf *b, u32 off, u32 len);

/* validate: the first byte of a slot not in its pattern */
struct kp_val_bad {
	long at;
	u8 got, want;
};

int kp_val_check(struct kp_conn *c, u32 slot, u64 seq, struct kp_val_bad *bad);

/* kp_hw.c */
void kp_hw_begin(struct kp_test *t);
void kp_hw_end(struct kp_test *t, u32 first);
void kp_hw_free(struct kp_test *t);

/* kp_rw.c */
int kp_rw_alloc(struct kp_conn *c, u32 depth);
void kp_rw_free(struct kp_conn *c);
void kp_rw_done(struct kp_conn *c, u64 idx);
int kp_rw_post(struct kp_conn *c, enum ib_wr_opcode op, u64 idx, u32 len,
	       struct ib_cqe *cqe, bool signal, u64 wr_id);

/* kp_npu.c */
/*
 * NPU memory behind a BAR (no struct page) on a virt-DMA device: handed
 * over as a memremap() of it, which rxe copies through, or refused where
 * the RDMA core turns a virt-DMA device's addresses into struct pages
 * (ib_virt_dma_to_page(), 6.4 on), which a BAR's mapping would give a
 * wrong one of.  rxe of 6.3 alone already did so (virt_to_page()) without
 * the helper: no header shows it, and it is not caught.
 */
#ifdef KP_HAVE_IB_VIRT_DMA_TO_PAGE
#define KP_NPU_BAR_VIRT_DMA	"refused"
#else
#define KP_NPU_BAR_VIRT_DMA	"memremap"
#endif
int kp_npu_get(struct kp_test *t);
void kp_npu_put(struct kp_test *t);
int kp_npu_buf_alloc(struct kp_conn *c, struct kp_buf *b, u32 size);
void kp_npu_buf_free(struct kp_conn *c, struct kp_buf *b);
int kp_npu_copy_to(struct kp_conn *c, struct kp_buf *b, u32 off, u32 len);
int kp_npu_copy_from(struct kp_conn *c, struct kp_buf *b, u32 off, u32 len);
int kp_npu_check(struct kp_conn *c);
int kp_npu_sges(struct kp_buf *b, u32 off, u32 len, struct ib_sge *sge,
		u32 lkey);
int kp_npu_rw_sgl(struct kp_conn *c, struct kp_buf *b, struct scatterlist *sgl,
		  u32 max);
void kp_npu_fence_done(struct ib_cq *cq, struct ib_wc *wc);
void kp_npu_conn_end(struct kp_conn *c);
int kp_npu_verdict(struct kp_test *t, int ret);

/* kp_ping.c */
int kp_ping_client(struct kp_conn *c);
int kp_ping_server(struct kp_conn *c);

/* kp_test.c: hello/fin exchange shared by the test modes */
int kp_test_client(struct kp_test *t);
int kp_test_server(struct kp_test *t);

/* kp_rlat.c, kp_wlat.c, kp_send.c, kp_bw.c, kp_fr.c */
int kp_rlat_run(struct kp_conn *c);
int kp_wlat_run(struct kp_conn *c);
int kp_slat_run(struct kp_conn *c);
void kp_send_sink_begin(struct kp_test *t);
int kp_send_sink_now(struct kp_conn *c);
int kp_send_sink(struct kp_test *t);
int kp_send_sink_end(struct kp_test *t, int ret);
int kp_send_flush(struct kp_conn *c);
int kp_send_dx_take(struct kp_conn *c, const struct ib_wc *wc);
int kp_send_dx_repost(struct kp_conn *c);

/* duplex bw,send: each side streams SENDs into the other's receives */
static inline bool kp_dx_send(const struct kp_test *t)
{
	return t->duplex && t->mode == KP_MODE_BW_SEND;
}
int kp_bw_lane(struct kp_conn *c, bool timed);
int kp_bw_skips(struct kp_conn *c);
void kp_bw_start(struct kp_conn *c, u64 warm);
int kp_bw_step(struct kp_conn *c);
int kp_fr_run(struct kp_conn *c);

/* kp_atomic.c */
int kp_atomic_begin(struct kp_conn *c);
int kp_atomic_post(struct kp_conn *c, u64 wr_id, bool signal, u64 *old);
int kp_atomic_end(struct kp_conn *c);
int kp_atomic_check(struct kp_conn *c, u64 want);
int kp_alat_run(struct kp_conn *c);

/* kp_lanes.c: the loops of a test of several connections */
int kp_lanes_cpus(struct kp_test *t);
int kp_lanes_bw(struct kp_test *t);
int kp_lanes_sink(struct kp_test *t);
int kp_lanes_drive(struct kp_test *t, u32 first, u32 step,
		   int (*fn)(struct kp_conn *c));

/* kp_stats.c */
int kp_stats_alloc(struct kp_conn *c);
void kp_stats_free(struct kp_conn *c);
void kp_lat_free(struct kp_test *t);
u64 kp_run_begin(struct kp_conn *c, struct kp_run *r);
void kp_run_end(struct kp_conn *c);
void kp_loop_yield(struct kp_conn *c);
bool kp_cpu_wanted(void);
void kp_cpu_give(void);

/*
 * Does the scheduler ask for this CPU?  Under PREEMPT_LAZY (Debian's RT
 * kernels) a fair task's wake-up sets only the lazy flag, which a user
 * process honours at its next return to user mode and need_resched() does
 * not read.  Without lazy preemption the name is absent or an alias.
 */
static inline bool kp_resched_asked(void)
{
#ifdef TIF_NEED_RESCHED_LAZY
	return need_resched() || test_thread_flag(TIF_NEED_RESCHED_LAZY);
#else
	return need_resched();
#endif
}
void kp_run_give(struct kp_conn *c, bool late, unsigned int *w);
bool kp_run_late(const struct kp_run *r, u64 span);
void kp_loop_cpu(struct kp_conn *c);
void kp_run_rebase(struct kp_test *t, u32 first, u32 step);
unsigned int kp_loop_spin(struct kp_conn *c);
bool kp_run_over(struct kp_conn *c, u64 iters, u64 now);
void kp_run_tick(struct kp_conn *c, u64 iters, u64 now);
void kp_lat_sample(struct kp_conn *c, u64 i, u64 ns);
int kp_stats_lat(struct kp_conn *c, u64 n, u32 div);
int kp_stats_pingpong(struct kp_conn *c, u64 iters, u64 warm);
void kp_stats_bw(struct kp_conn *c, u64 n, u64 total_ns);
int kp_stats_bw_lanes(struct kp_test *t, u32 nthreads);
int kp_stats_verdict(struct kp_test *t);

#define kp_err(t, fmt, ...) \
	pr_err(KP_NAME " %u: " fmt "\n", (t)->rec->id, ##__VA_ARGS__)
#define kp_info(t, fmt, ...) \
	pr_info(KP_NAME " %u: " fmt "\n", (t)->rec->id, ##__VA_ARGS__)

#endif /* KRPING_NPU_H */
