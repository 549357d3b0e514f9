/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kp_opts.h - the krping_npu control grammar: one option table, a parser
 * for "key[=value],key..." and the cross-option checks.
 */
#ifndef KP_OPTS_H
#define KP_OPTS_H

#include "kp_compat.h"

#define KP_CMD_MAX		1024	/* longest command accepted, bytes */
#define KP_IFNAME_MAX		16	/* IFNAMSIZ */
#define KP_MAX_SIZE		(4u << 20)	/* largest buffer, bytes */
/* validate on bw,imm: the server's two slots at least in KP_MAX_SIZE */
#define KP_VAL_IMM_MAX		(KP_MAX_SIZE / 2)
#define KP_MAX_COUNT		1000000u
#define KP_MAX_TXDEPTH		1024u
#define KP_MAX_SIZES		32	/* entries of a sizes= sweep */
#define KP_MAX_DURATION		86400u	/* seconds */
#define KP_MAX_PROGRESS		3600u	/* seconds */
#define KP_MAX_QPS		64u	/* qps=: connections of one test */
#define KP_MAX_CPU		8191u	/* the largest CPU number cpus= takes */
#define KP_MAX_PROBE_MS		60000u	/* probe=: at most a minute apart */
/* "rdma-ping-%d: " with the widest %d and the trailing NUL */
#define KP_PING_MIN_SIZE	26u

enum kp_role {
	KP_ROLE_NONE,
	KP_ROLE_SERVER,
	KP_ROLE_CLIENT,
};

enum kp_mem {
	KP_MEM_HOST,
	KP_MEM_NPU,
};

/* Who reaps the CQ: the core's poll contexts (enum ib_poll_context). */
enum kp_cq_ctx {
	KP_CQ_DIRECT,		/* the test's own thread (kp_cq_process()) */
	KP_CQ_SOFTIRQ,
	KP_CQ_WORKQUEUE,
	KP_CQ_UNBOUND,		/* an unbound workqueue */
	KP_CQ_NR,
};

#define KP_MAX_NPU_DEV		15
#define KP_MAX_SGE		16	/* sge=: SGEs of a data work request */
#define KP_DEF_INLINE		220	/* inline=: perftest's for WRITE latency */
#define KP_MAX_INLINE		1024	/* inline=: perftest -I's bound */
#define KP_MAX_POST_LIST	64	/* post_list=: work requests a chain */
#define KP_MAX_RX_DEPTH		16384u	/* rx_depth=: perftest's MAX_RX */
#define KP_MAX_THRESHOLD	10000000	/* expect_bw (MiB/s), max_lat, max_p99 (usec) */
#define KP_NPU_VA_ALIGN		4096u	/* npu_va, npu_len, and the pieces carved */

enum kp_mode {
	KP_MODE_PING,
	KP_MODE_RLAT,
	KP_MODE_WLAT,
	KP_MODE_BW,
	KP_MODE_FR,
	KP_MODE_BW_READ,	/* "bw,read": a stream of RDMA READs */
	KP_MODE_SLAT,		/* SEND/RECV ping-pong */
	KP_MODE_BW_SEND,	/* "bw,send": a stream of SENDs */
	KP_MODE_ALAT,		/* atomic latency, as ib_atomic_lat */
	KP_MODE_BW_ATOMIC,	/* "bw,atomic=": a stream of atomics */
	KP_MODE_BW_IMM,		/* "bw,imm": a stream of WRITE_WITH_IMMs */
};

/* atomic=: the operation of alat and bw_atomic (perftest -A) */
enum kp_atomic {
	KP_ATOMIC_NONE,
	KP_ATOMIC_FADD,		/* fetch-and-add */
	KP_ATOMIC_CAS,		/* compare-and-swap */
};

#define KP_ATOMIC_SIZE		8	/* an atomic's operand, bytes */

/* The bandwidth modes: a stream, figures in MiB/s. */
static inline bool kp_mode_bw(enum kp_mode mode)
{
	return mode == KP_MODE_BW || mode == KP_MODE_BW_READ ||
	       mode == KP_MODE_BW_SEND || mode == KP_MODE_BW_ATOMIC ||
	       mode == KP_MODE_BW_IMM;
}

/* The atomic modes: 8 bytes of the server's buffer, its first. */
static inline bool kp_mode_atomic(enum kp_mode mode)
{
	return mode == KP_MODE_ALAT || mode == KP_MODE_BW_ATOMIC;
}

/* The streams into a server's posted receives (kp_send_sink()). */
static inline bool kp_mode_sink(enum kp_mode mode)
{
	return mode == KP_MODE_BW_SEND || mode == KP_MODE_BW_IMM;
}

/*
 * The tests that keep a stream of data receives posted (recv_post_list=,
 * rx_depth=): a sink's server, and (rx_depth=) either side of duplex
 * bw,send.
 */
static inline bool kp_mode_rx(enum kp_mode mode, bool duplex)
{
	return kp_mode_sink(mode) || (duplex && mode == KP_MODE_BW_SEND);
}

/* The ping-pong modes: half the round trip is reported. */
static inline bool kp_mode_pingpong(enum kp_mode mode)
{
	return mode == KP_MODE_WLAT || mode == KP_MODE_SLAT;
}

/*
 * The modes whose data completes receives the peer keeps posted: SENDs,
 * or (bw_imm) WRITEs with immediate data.
 */
static inline bool kp_mode_send(enum kp_mode mode)
{
	return mode == KP_MODE_SLAT || kp_mode_sink(mode);
}

struct kp_addr {
	int family;			/* 0 (unset), 4 or 6 */
	u8 addr[16];			/* network order; IPv4 in addr[0..3] */
	u32 scope_id;			/* IPv6 numeric scope, 0 if none */
	char ifname[KP_IFNAME_MAX];	/* IPv6 scope by interface name */
};

struct kp_opts {
	enum kp_role role;
	enum kp_mode mode;
	struct kp_addr addr;
	u32 port;
	u32 tos;
	u32 count;
	u32 size;
	u32 sizes[KP_MAX_SIZES];	/* the sweep; size alone if none given */
	u32 nsizes;
	u32 duration_s;			/* run for this long instead of count */
	u32 progress_s;			/* interim figures every this often */
	u32 warmup;			/* untimed iterations before each size */
	u32 txdepth;
	u32 timeout_ms;
	enum kp_mem mem;
	u32 npu_dev;
	u64 npu_va;			/* the writer's NPU memory, or 0 */
	u64 npu_len;
	bool validate;
	bool verbose;
	bool poll;
	bool local_dma_lkey;
	bool read_inv;
	bool server_inv;
	bool duplex;
	bool bw_read;			/* bw: READs, not WRITEs (mode bw_read) */
	bool bw_send;			/* bw: SENDs, not WRITEs (mode bw_send) */
	bool gbits;			/* bw: Gb/s beside MiB/s */
	bool events;			/* sleep on completion events, not busy-poll */
	enum kp_cq_ctx cq;		/* the CQ's poll context */
	u32 expect_bw;			/* MiB/s a bw result must reach, 0: none */
	u32 max_lat_us;			/* usec t_typical may not pass, 0: none */
	u32 max_p99_us;			/* usec the 99th percentile may not pass */
	bool wlat_imm;			/* wlat, bw, bw,send: immediate data */
	u32 sge;			/* SGEs of a data work request */
	bool rw;			/* rlat, bw: through the core's rdma_rw */
	bool light;			/* wlat, slat: the lighter method */
	u32 inline_max;			/* bytes a WRITE or SEND may carry inline */
	u32 cq_mod;			/* bw: one message in this many signalled */
	enum kp_atomic atomic;		/* alat, bw: the atomic operation */
	u32 qp_timeout;			/* the QP's ACK timeout exponent */
	u32 retry_count;		/* the QPs' transport retries */
	u32 rate_limit;			/* bw: MiB/s a stream is paced to, 0: none */
	u32 burst_size;			/* ... in bursts of this many messages */
	u32 post_list;			/* bw: messages posted a chain, 0: one */
	u32 recv_post_list;		/* server: data receives a chain, 0: as used */
	bool srq;			/* receives through an SRQ of the QP's own */
	bool ud;			/* slat over UD (rdma_cm's UDP port space) */
	bool mr_per_qp;			/* qps=N: an MR a connection, not one */
	u32 rx_depth;			/* data receives kept posted, 0: 512 */
	u32 qps;			/* connections (QPs) of the test */
	u16 cpus[KP_MAX_QPS];		/* their threads' CPUs, in order given */
	u32 ncpus;			/* 0: all in the writer's thread */
	u32 probe_ms;			/* waits on the peer probe it this often */
	u64 given;			/* bit i: option i of the table was set */
};

/* Option indices, in table order; kp_opt_given() tests them. */
enum kp_opt_id {
	KP_OPT_SERVER,
	KP_OPT_CLIENT,
	KP_OPT_ADDR,
	KP_OPT_ADDR6,
	KP_OPT_PORT,
	KP_OPT_TOS,
	KP_OPT_COUNT,
	KP_OPT_SIZE,
	KP_OPT_VALIDATE,
	KP_OPT_VERBOSE,
	KP_OPT_TXDEPTH,
	KP_OPT_POLL,
	KP_OPT_LOCAL_DMA_LKEY,
	KP_OPT_READ_INV,
	KP_OPT_SERVER_INV,
	KP_OPT_FR,
	KP_OPT_RLAT,
	KP_OPT_WLAT,
	KP_OPT_BW,
	KP_OPT_DUPLEX,
	KP_OPT_TIMEOUT,
	KP_OPT_MEM,
	KP_OPT_NPU_DEV,
	KP_OPT_NPU_VA,
	KP_OPT_NPU_LEN,
	KP_OPT_SIZES,
	KP_OPT_DURATION,
	KP_OPT_PROGRESS,
	KP_OPT_WARMUP,
	KP_OPT_GBITS,
	KP_OPT_EVENTS,
	KP_OPT_READ,
	KP_OPT_SLAT,
	KP_OPT_SEND,
	KP_OPT_QPS,
	KP_OPT_CPUS,
	KP_OPT_PROBE,
	KP_OPT_IMM,
	KP_OPT_CQ,
	KP_OPT_EXPECT_BW,
	KP_OPT_MAX_LAT,
	KP_OPT_MAX_P99,
	KP_OPT_SGE,
	KP_OPT_RW,
	KP_OPT_LIGHT,
	KP_OPT_INLINE,
	KP_OPT_CQ_MOD,
	KP_OPT_ALAT,
	KP_OPT_ATOMIC,
	KP_OPT_QP_TIMEOUT,
	KP_OPT_RETRY_COUNT,
	KP_OPT_RATE_LIMIT,
	KP_OPT_BURST_SIZE,
	KP_OPT_POST_LIST,
	KP_OPT_RECV_POST_LIST,
	KP_OPT_SRQ,
	KP_OPT_UD,
	KP_OPT_MR_PER_QP,
	KP_OPT_RX_DEPTH,
	KP_OPT_NR,
};
/* kp_opts.given has a bit an option */
_Static_assert(KP_OPT_NR <= 64, "kp_opts.given is a u64");

static inline bool kp_opt_given(const struct kp_opts *o, enum kp_opt_id id)
{
	return o->given & (1ull << id);
}

/*
 * Parse @len bytes of @cmd (one trailing newline allowed) into @o.
 * Returns 0, or a negative errno with a one-line reason naming the option
 * in @err: -EINVAL (syntax, unknown option, conflict, missing option),
 * -ERANGE (a number outside the option's range), -E2BIG (command longer
 * than KP_CMD_MAX, or a sweep of more than KP_MAX_SIZES sizes).
 * On success o->sizes holds the sweep, or o->size alone.
 */
int kp_opts_parse(const char *cmd, size_t len, struct kp_opts *o,
		  char *err, size_t errlen);

const char *kp_mode_name(enum kp_mode mode);
const char *kp_role_name(enum kp_role role);
const char *kp_mem_name(enum kp_mem mem);
const char *kp_cq_name(enum kp_cq_ctx cq);
const char *kp_atomic_name(enum kp_atomic op);

/* Format @a as text ("192.0.2.1", "fe80::1%eth0") into @buf. */
int kp_addr_format(const struct kp_addr *a, char *buf, size_t len);

/*
 * Write the option reference into @buf, one line an option, three fields
 * apart by tabs: the option with the values it takes ("port=1..65535"),
 * where it applies ("client, bw", or empty) and what it does.
 */
int kp_opts_help(char *buf, size_t len);

#endif /* KP_OPTS_H */
