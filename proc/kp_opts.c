// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_opts.c - the krping_npu control grammar.
 *
 * A command is "key[=value]" items separated by commas, e.g.
 * "client,addr=192.0.2.1,port=9999,size=4096,validate".  Every option
 * lives in kp_opt_table; the parser knows nothing option-specific beyond
 * the checks in kp_opts_check().
 */
#include "kp_opts.h"
#include "kp_payload.h"

enum kp_opt_type {
	KP_T_ROLE,	/* flag selecting the role; value in min */
	KP_T_MODE,	/* flag selecting the test mode; value in min */
	KP_T_FLAG,	/* bool */
	KP_T_U32,	/* number in [min, max] */
	KP_T_ADDR4,	/* dotted quad */
	KP_T_ADDR6,	/* IPv6 text, optional %ifname or %scope */
	KP_T_MEM,	/* host or npu */
	KP_T_CQ,	/* a poll context's name */
	KP_T_SIZES,	/* N:N:... and A-B (A, 2A, 4A, ... up to B) */
	KP_T_U64,	/* non-zero number, decimal or 0x hex: an address, a length */
	KP_T_CPUS,	/* N:N:... and A-B (every CPU from A to B) */
	KP_T_ATOMIC,	/* an atomic operation's name */
};

struct kp_opt_desc {
	const char *name;
	enum kp_opt_type type;
	size_t off;
	u32 min;
	u32 max;
	const char *where;	/* the roles and modes it applies to, or "" */
	const char *help;
};

#define KP_F(f)	offsetof(struct kp_opts, f)

static const struct kp_opt_desc kp_opt_table[KP_OPT_NR] = {
	[KP_OPT_SERVER] = { "server", KP_T_ROLE, KP_F(role), KP_ROLE_SERVER, 0,
		"",
		"passive side: listen on addr:port, serve one client; one of server, client" },
	[KP_OPT_CLIENT] = { "client", KP_T_ROLE, KP_F(role), KP_ROLE_CLIENT, 0,
		"",
		"active side: connect to addr:port and run the test" },
	[KP_OPT_ADDR] = { "addr", KP_T_ADDR4, KP_F(addr), 0, 0,
		"",
		"IPv4 address: the server binds to it, the client connects to it" },
	[KP_OPT_ADDR6] = { "addr6", KP_T_ADDR6, KP_F(addr), 0, 0,
		"",
		"IPv6 address (X::Y[%ifname] or [%N]); %ifname or %N gives the scope" },
	[KP_OPT_PORT] = { "port", KP_T_U32, KP_F(port), 1, 65535,
		"",
		"rdma_cm port (TCP port space); required" },
	[KP_OPT_TOS] = { "tos", KP_T_U32, KP_F(tos), 0, 255,
		"",
		"type of service of the connection" },
	[KP_OPT_COUNT] = { "count", KP_T_U32, KP_F(count), 1, KP_MAX_COUNT,
		"",
		"ping rounds or test iterations (default 1000)" },
	[KP_OPT_SIZE] = { "size", KP_T_U32, KP_F(size), 1, KP_MAX_SIZE,
		"",
		"message size in bytes (default 64; ping: at least 26, the payload header)" },
	[KP_OPT_VALIDATE] = { "validate", KP_T_FLAG, KP_F(validate), 0, 0,
		"ping, bw,send, bw,read, bw,imm",
		"ping: check every byte of every round, on both sides.  bw,send (what perftest's --data_validation, in releases after Debian's 4.5-0.17, does for WRITE and READ streams): the client writes each message, before it goes, as its number in the size's stream (8 bytes, little-endian) then 64-byte bands of 0xFF, 0x00, 0xAA and 0x55 rotated by that number, from a slot of its own; the server posts each receive on a slot of its own filled with 0xC3 and checks every byte of each message as it is reaped, before the slot goes back (over ud, behind the 40-byte header the receive puts first, in NPU memory too).  A mismatch ends the size with EBADMSG and a line naming the message, the byte and both values; the result says validated=yes.  The server validates whenever the client asks (a server given bw,send,validate refuses a client that does not: EPROTO).  Messages of at least 16 bytes.  The slots, cache-aligned, take up to 1 MiB a side (less where the device registers fewer pages): the server's receives are the slots that fit (at most rx_depth=, 512 by default), the client's window half as many (at most txdepth), so the server has receives to spare; a recv_post_list= above the server's slots (bw,imm: half of them) is refused (EINVAL).  The figure, which includes the client's writing, is not one to compare.  bw,read: the server writes its buffer once a size as slots of the message's size, slot j in message j's pattern, and says how long it is; the client's READ k reads the server's slot k modulo their number into a slot of its own filled with 0xC3, and checks every byte against that slot's pattern as the READ completes (or is retired by a later signalled one), before the slot is read into again; the client's dmesg counts them, and its figure, which includes the checking, is not one to compare either.  Not with duplex or rw (EINVAL); a server that does not say it wrote its slots is refused (EPROTO).  bw,imm: the server's buffer is slots 128 bytes apart, all that fit (at least 2), with receives posted for half of them, and its ACK says how long it is; the client writes message k, its slot filled with k's pattern first, into the server's slot k modulo their number, with at most half of them in flight, and the server checks that slot's every byte when k's immediate arrives, before it posts a receive again: so no message lands in a slot not yet checked.  Two slots of the largest message must fit in 4 MiB (sizes up to 2 MiB).  A plain WRITE stream tells the server nothing of when a message has landed: bw,validate without imm is refused (EINVAL)" },
	[KP_OPT_VERBOSE] = { "verbose", KP_T_FLAG, KP_F(verbose), 0, 0,
		"ping",
		"log each round's data to dmesg" },
	[KP_OPT_TXDEPTH] = { "txdepth", KP_T_U32, KP_F(txdepth), 1, KP_MAX_TXDEPTH,
		"",
		"send queue depth; bw: writes in flight (default 64)" },
	[KP_OPT_POLL] = { "poll", KP_T_FLAG, KP_F(poll), 0, 0,
		"ping",
		"busy-poll the CQ instead of sleeping" },
	[KP_OPT_LOCAL_DMA_LKEY] = { "local_dma_lkey", KP_T_FLAG,
		KP_F(local_dma_lkey), 0, 0,
		"",
		"local buffers use the PD's local_dma_lkey instead of their MR" },
	[KP_OPT_READ_INV] = { "read_inv", KP_T_FLAG, KP_F(read_inv), 0, 0,
		"server, ping",
		"RDMA READ with invalidate (iWARP only; elsewhere -EOPNOTSUPP)" },
	[KP_OPT_SERVER_INV] = { "server_inv", KP_T_FLAG, KP_F(server_inv), 0, 0,
		"server, ping",
		"invalidate the client's rkeys with SEND_WITH_INV" },
	[KP_OPT_FR] = { "fr", KP_T_MODE, KP_F(mode), KP_MODE_FR, 0,
		"client",
		"test mode: a fast-register/invalidate loop" },
	[KP_OPT_RLAT] = { "rlat", KP_T_MODE, KP_F(mode), KP_MODE_RLAT, 0,
		"",
		"test mode: RDMA READ latency (no mode: ping; one mode at most)" },
	[KP_OPT_WLAT] = { "wlat", KP_T_MODE, KP_F(mode), KP_MODE_WLAT, 0,
		"",
		"test mode: RDMA WRITE ping-pong latency, as ib_write_lat: plain writes, each side polling the last byte of its buffer for the peer's (imm: immediate data instead)" },
	[KP_OPT_BW] = { "bw", KP_T_MODE, KP_F(mode), KP_MODE_BW, 0,
		"",
		"test mode: RDMA WRITE bandwidth, txdepth writes in flight, as ib_write_bw" },
	[KP_OPT_DUPLEX] = { "duplex", KP_T_FLAG, KP_F(duplex), 0, 0,
		"bw",
		"both sides stream at once: WRITEs, or with read READs of each other's buffer, or with send SENDs into each other's receives (perftest -b).  duplex send: each side posts exactly the receives the other's count (and the client's warm-up) needs, so none is left over, and reaps the other's messages in its own stream's loop, which runs on past its own last message to the other's; its figure is its own stream's (its CPU time too, which leaves out the reaping after its own end); the server's stream starts at its ACK, while the client's warm-up runs, and its receives run out (RNR retries, in its figure) while a client's connection is not reaped (cpus= threads lining up).  count= only (not duration=), not with validate or imm (EINVAL), nor into a server given recv_post_list= (EINVAL).  On 5.10's rxe an RNR NAK is retried at once, not at its timer: in loopback, with every CPU busy polling (cpus= threads on each), that retry can spin in rxe's tasklet for ever while the side that would post the receives waits for a CPU" },
	[KP_OPT_TIMEOUT] = { "timeout", KP_T_U32, KP_F(timeout_ms), 100, 3600000,
		"",
		"bound of every wait (resolve, connect, completion), ms (default 10000)" },
	[KP_OPT_MEM] = { "mem", KP_T_MEM, KP_F(mem), 0, 0,
		"",
		"where this side's data buffers live (default host)" },
	[KP_OPT_NPU_DEV] = { "npu_dev", KP_T_U32, KP_F(npu_dev), 0, KP_MAX_NPU_DEV,
		"mem=npu",
		"rig only: the NPU the emulated NPU allocates on (default 0)" },
	[KP_OPT_NPU_VA] = { "npu_va", KP_T_U64, KP_F(npu_va), 0, 0,
		"mem=npu",
		"the writer's own NPU memory, a multiple of 4096, to carve every buffer from (npu_launch adds it)" },
	[KP_OPT_NPU_LEN] = { "npu_len", KP_T_U64, KP_F(npu_len), 0, 0,
		"mem=npu",
		"bytes at npu_va, a multiple of 4096" },
	[KP_OPT_SIZES] = { "sizes", KP_T_SIZES, KP_F(sizes), 1, KP_MAX_SIZE,
		"client, rlat/wlat/slat/bw",
		"a sweep in one connection, one result a size: 64-65536 (64, 128, ... 65536), 64:4096:1048576, or both joined by :; at most 32 sizes; not with size=" },
	[KP_OPT_DURATION] = { "duration", KP_T_U32, KP_F(duration_s), 1,
		KP_MAX_DURATION,
		"client, rlat/wlat/slat/alat/bw",
		"run each size this many seconds instead of count iterations; not with count=" },
	[KP_OPT_PROGRESS] = { "progress", KP_T_U32, KP_F(progress_s), 1,
		KP_MAX_PROGRESS,
		"client, rlat/wlat/slat/alat/bw",
		"interim figures every this many seconds: a dmesg line and an \"N progress:\" line in /proc/krping_npu" },
	[KP_OPT_WARMUP] = { "warmup", KP_T_U32, KP_F(warmup), 1, KP_MAX_COUNT,
		"client, rlat/wlat/slat/alat/bw",
		"this many untimed iterations before each size (perftest --perform_warm_up); the result counts only the timed ones" },
	[KP_OPT_GBITS] = { "gbits", KP_T_FLAG, KP_F(gbits), 0, 0,
		"client, bw",
		"bandwidth in Gb/s (10^9 bits/s) too, beside MiB/s (perftest --report_gbits)" },
	[KP_OPT_EVENTS] = { "events", KP_T_FLAG, KP_F(events), 0, 0,
		"client, rlat/wlat/slat/alat/bw/fr",
		"sleep on completion events instead of busy-polling (perftest -e); with qps=N only when cpus= gives each QP a thread" },
	[KP_OPT_READ] = { "read", KP_T_FLAG, KP_F(bw_read), 0, 0,
		"bw",
		"a stream of RDMA READs of the server's buffer instead of WRITEs (test bw_read, as ib_read_bw); with duplex the server reads the client's too" },
	[KP_OPT_SLAT] = { "slat", KP_T_MODE, KP_F(mode), KP_MODE_SLAT, 0,
		"",
		"test mode: SEND/RECV ping-pong latency, as ib_send_lat" },
	[KP_OPT_SEND] = { "send", KP_T_FLAG, KP_F(bw_send), 0, 0,
		"bw",
		"a stream of SENDs into receives the server keeps posted (test bw_send, as ib_send_bw); not with read; with duplex both ways" },
	[KP_OPT_QPS] = { "qps", KP_T_U32, KP_F(qps), 1, KP_MAX_QPS,
		"client, bw",
		"this many connections (QPs) to the server for one test, each streaming count messages (perftest -q N); the server follows the client (default 1)" },
	[KP_OPT_CPUS] = { "cpus", KP_T_CPUS, KP_F(cpus), 0, KP_MAX_CPU,
		"client, bw",
		"run the QPs on kernel threads bound to these CPUs, each once, at most qps of them; QP i on the (i mod n)th; a CPU not online: -EINVAL before connecting" },
	[KP_OPT_PROBE] = { "probe", KP_T_U32, KP_F(probe_ms), 0, KP_MAX_PROBE_MS,
		"",
		"a wait on the peer (the FIN after its stream, bw,send's receives) probes it every this many ms with a zero-length RDMA WRITE (on iWARP a READ of one byte the peer's hello names, where the peer grants READs), and lasts while the peer's HCA answers, up to 4 times the probe=0 bound and 10 timeouts; a probe failing ends it at once, -EHOSTDOWN (default 1000; 0: off, the wait bound by timeout, warm-up and 64 MB/s)" },
	[KP_OPT_IMM] = { "imm", KP_T_FLAG, KP_F(wlat_imm), 0, 0,
		"client, wlat/bw",
		"immediate data.  wlat: writes with it, each seen as a receive completion instead of by polling the buffer: NPU memory, which the CPU cannot poll, needs it, and events too; either side's mem=npu or events choose it.  bw: a stream of WRITE_WITH_IMMs into receives the server keeps posted (test bw_imm, as ib_write_bw --write_with_imm); bw,send: every SEND with it (ib_send_bw --send_with_imm).  Each message's immediate is its number in the size's stream, which the server checks, message by message; not with read, duplex or atomic" },
	[KP_OPT_CQ] = { "cq", KP_T_CQ, KP_F(cq), 0, 0,
		"",
		"the CQ's poll context (ib_alloc_cq()): direct, the test's thread polls it (ib_poll_cq() and each ib_cqe's done, as ib_process_cq_direct() does), napping between polls where it does not spin; softirq, workqueue or unbound, the core reaps it there and wakes the thread (default direct; with events softirq, which events needs)" },
	[KP_OPT_EXPECT_BW] = { "expect_bw", KP_T_U32, KP_F(expect_bw), 1,
		KP_MAX_THRESHOLD,
		"client, bw",
		"pass/fail: each size's BW_average (all QPs together) must reach this many MiB/s; a run that misses ends -EDOM, each miss a dmesg line saying by how much" },
	[KP_OPT_MAX_LAT] = { "max_lat", KP_T_U32, KP_F(max_lat_us), 1,
		KP_MAX_THRESHOLD,
		"client, rlat/wlat/slat/alat",
		"pass/fail: each size's t_typical may not pass this many usec; a run that misses ends -EDOM, each miss a dmesg line saying by how much" },
	[KP_OPT_MAX_P99] = { "max_p99", KP_T_U32, KP_F(max_p99_us), 1,
		KP_MAX_THRESHOLD,
		"client, rlat/wlat/slat/alat",
		"pass/fail: as max_lat, for the 99th percentile" },
	[KP_OPT_SGE] = { "sge", KP_T_U32, KP_F(sge), 1, KP_MAX_SGE,
		"",
		"each data READ, WRITE or SEND of this side, and each receive of slat's and bw,send's data, reaches its buffer through this many SGEs, equal but for the last (one a byte where the message is shorter); more than the device takes: -EOPNOTSUPP before connecting (default 1; not with fr or rw)" },
	[KP_OPT_RW] = { "rw", KP_T_FLAG, KP_F(rw), 0, 0,
		"client, rlat/bw",
		"move the data with the core's rdma_rw API, as NVMe-oF's target does: each READ or WRITE through a context of its own (rdma_rw_ctx_init(), its work requests from rdma_rw_ctx_wrs() posted as nvmet posts them, rdma_rw_ctx_destroy()), which maps the buffer's pages and chooses SGEs or an MR for the device; host memory, or NPU memory with struct pages behind it; not with duplex, send, sge or local_dma_lkey" },
	[KP_OPT_LIGHT] = { "light", KP_T_FLAG, KP_F(light), 0, 0,
		"wlat/slat",
		"this side's lighter method instead of perftest's: one message in 16 signalled and its own completions reaped between round trips, never awaited; a sample from the post to the answer (the result says method=light); perftest's, the default: every message signalled and its completion awaited, a sample from one post to the next" },
	[KP_OPT_INLINE] = { "inline", KP_T_U32, KP_F(inline_max), 0,
		KP_MAX_INLINE,
		"",
		"WRITEs and SENDs of host memory this long or shorter go inline (perftest -I); 0: none.  Default 220, or none where the device takes no inline data; given, a device that does not take this many: -EOPNOTSUPP before connecting.  perftest inlines only on devices it recognises (on rxe it did not in our traces): inline=0 matches it there" },
	[KP_OPT_CQ_MOD] = { "cq_mod", KP_T_U32, KP_F(cq_mod), 1, KP_MAX_TXDEPTH,
		"bw",
		"signal one message of the stream in this many, and the last (perftest -Q; at most the window, and 16 MiB of messages); a completion retires those before it (default a quarter of the window; perftest's: 100 up to 8 KiB, 1 above, each at most its -t)" },
	[KP_OPT_ALAT] = { "alat", KP_T_MODE, KP_F(mode), KP_MODE_ALAT, 0,
		"",
		"test mode: atomic latency, as ib_atomic_lat: one atomic (atomic=) on the first 8 bytes of the server's buffer at a time, timed from post to completion, the value each returns checked; size is 8.  The client sets the target first with a WRITE and reads it back after, and the server checks it too.  A device without atomics (IB_ATOMIC_NONE): -EOPNOTSUPP before connecting" },
	[KP_OPT_ATOMIC] = { "atomic", KP_T_ATOMIC, KP_F(atomic), 0, 0,
		"alat/bw",
		"the atomic operation (perftest -A): fadd, fetch-and-add (the default), or cas, compare-and-swap, one in four of which is meant to fail (its compare value wrong) and is checked to; with bw a stream of them (test bw_atomic, as ib_atomic_bw), no more in flight than this side's initiator depth, the target's final value checked; not with read, send, duplex, sge or rw" },
	[KP_OPT_QP_TIMEOUT] = { "qp_timeout", KP_T_U32, KP_F(qp_timeout), 0, 31,
		"",
		"this side's QP waits 4.096 us x 2^N for an ACK before it retransmits (perftest -u; its default 14, 67 ms); 0: for ever.  Default: the CM's (on RoCE from the packet life time, 0.27 s or more); each connection's dmesg line says what the QP holds" },
	[KP_OPT_RETRY_COUNT] = { "retry_count", KP_T_U32, KP_F(retry_count), 0, 7,
		"client",
		"transport retries of both QPs, which take the client's from its connect request (perftest --retry_count, its default 7).  Default 6: rxe takes 7 as retry for ever, so a dead peer's QP would never fail" },
	[KP_OPT_RATE_LIMIT] = { "rate_limit", KP_T_U32, KP_F(rate_limit), 1,
		KP_MAX_THRESHOLD,
		"client, bw",
		"pace each stream to this many MiB/s in software, as perftest --rate_limit=N --rate_units=M --rate_limit_type=SW: a burst of burst_size messages starts no earlier than its bytes allow from the stream's start, so BW_average stays under the rate x n / (n - burst_size) for n messages; the last message of each burst is signalled.  Not with duplex or atomic (perftest refuses atomics too), with qps=N only where cpus= gives each QP a thread; with send or imm a burst must take less than timeout=, which bounds the server's wait for each message (give both sides the same)" },
	[KP_OPT_BURST_SIZE] = { "burst_size", KP_T_U32, KP_F(burst_size), 1,
		KP_MAX_TXDEPTH,
		"client, bw",
		"rate_limit's burst, in messages (perftest --burst_size; default, as perftest's, txdepth)" },
	[KP_OPT_POST_LIST] = { "post_list", KP_T_U32, KP_F(post_list), 1,
		KP_MAX_POST_LIST,
		"client, bw",
		"post the stream's work requests this many to a chain, one ib_post_send() each, as perftest -l: a chain goes once the window has room for all of it, and its last is signalled (cq_mod defaults to post_list; given, it must divide it).  count must be a multiple of it, and txdepth at least it (READs: chains no longer than the initiator depth); the client's dmesg line says how many chains went, and how long.  Not with duplex, rw, atomic or rate_limit" },
	[KP_OPT_RECV_POST_LIST] = { "recv_post_list", KP_T_U32,
		KP_F(recv_post_list), 1, KP_MAX_POST_LIST,
		"server",
		"post the data receives of a bw,send or bw_imm stream (a client's bw with send or imm) this many to a chain, one ib_post_recv() each, as perftest --recv_post_list: the first fill is whole chains, and a chain goes again once that many have been used (default: each batch as it is used, up to 16 a chain), the last one short where the stream's warm-up and count are not whole chains, or one short chain where a chain is longer than the whole stream (perftest refuses such a -n); the server's dmesg line says how many went in how many chains.  A server given no mode refuses a client of another mode (EINVAL), as a server given bw,send does (EPROTO)" },
	[KP_OPT_SRQ] = { "srq", KP_T_FLAG, KP_F(srq), 0, 0,
		"server; client, slat",
		"this side's receives, control and data, through a shared receive queue (perftest --use-srq): ib_create_srq() as deep as the receive queue would be, the QP created on it with no receive queue of its own, every receive posted with ib_post_srq_recv(); the receives are taken in the order posted, as from a receive queue.  perftest has one on an ib_send_bw server and on both sides of ib_send_lat: so a server of any mode (its QPs are made before the client names one), a client of slat.  The side's dmesg line counts the receives posted through its SRQ.  A device without SRQs is refused before connecting (EOPNOTSUPP).  A server's test of qps=N has one SRQ for all its QPs, as perftest -q N --use_srq: rx_depth= data receives (each connection's first fill its share, rx_depth / N, as perftest's) and 16 control receives a connection, every receive a slot of its own for a control message (and a message's first bytes) and then a sink the connections' data messages share, so that any connection's message may take any receive; a completion is its QP's connection's, data from the server's ACK to the message marked last, control otherwise, and no skips are asked for; data receives a size by duration leaves posted serve the next.  Its dmesg line counts the receives posted through it and its slots.  Not with validate of bw,send or bw,imm (EINVAL: no receive is a connection's, so none is a message's slot or holds back a stream; bw,read's takes no receive); over ud an SRQ serves one connection, and a client of qps=N is refused before any is set up (the server ends EOPNOTSUPP, the client's connect rejected by a SIDR reply that says reject: ECONNREFUSED).  The SRQ's receives do not flush when the QP goes to error: a wait for one ends at the CM's word, a probe's failure or the timeout.  Not with mem=npu: an SRQ's receives do not flush with the QP, so NPU memory's free callback could not fence them (EINVAL)" },
	[KP_OPT_RX_DEPTH] = { "rx_depth", KP_T_U32, KP_F(rx_depth), 1,
		KP_MAX_RX_DEPTH,
		"server; client, bw,send with duplex",
		"the data receives this side keeps posted, as perftest -r (--rx-depth): the receive queue (or srq's SRQ) is made this deep plus the control receives, and the CQ to match (default 512, perftest's for SEND).  A bw,send or bw_imm server (UD's too) posts that many before its ACK and each again as it is used, and a duplex bw,send side likewise, but none past the messages the other side's warm-up and count will send (perftest cuts -r to -n and posts no receive past -n), so none is left over to take skips (a stream by duration= is not cut, and a UD loss leaves some).  Over the device's work requests a queue: refused as the QP is made (EINVAL, the server's connection rejected).  A server given it refuses a client whose test keeps no data receives posted, or only one (slat), with EINVAL, as one given recv_post_list= does" },
	[KP_OPT_UD] = { "ud", KP_T_FLAG, KP_F(ud), 0, 0,
		"server; client, slat or bw,send",
		"slat and bw,send over unreliable datagrams (perftest ib_send_lat and ib_send_bw -c UD, with -R): the CM's UDP port space (RDMA_PS_UDP), whose connect is a SIDR exchange; the client's address handle from the CM's ESTABLISHED event, the server's from the client's first message (ib_create_ah_from_wc()), every SEND addressed to the peer's QP with the CM's qkey.  Each receive takes the 40 bytes of GRH (or IPv4 header) ahead of the message, as perftest's do, which no figure counts; a message must fit the path MTU (the port's active MTU: 1024 bytes on rxe over a 1500-byte netdev), else EMSGSIZE before connecting (a server: once the client's hello names the size).  A UD send completes once it is sent, and one to a peer with no receive posted is dropped with no error: the ping-pong keeps a receive posted ahead of every message it is owed; a bw,send server keeps its receives posted as RC's does (no RNR retry covers it), and counts what arrived against the client's count and warm-up: a loss fails the size on both sides (EPROTO in the server's FIN, or ETIMEDOUT in its SKIP where the last is lost), the server's line naming both numbers; so bw,send by count only, not duration=.  The client's figure is what it sent, as ib_send_bw's; a sender faster than the server reaps (64-byte messages on a hardware NIC) loses some, where rate_limit= paces it.  A wait is bounded by timeout= alone (no probes: nothing on UD fails when the peer is gone).  A UD QP takes no fast-registration: buffers are reached through the PD's local DMA lkey, host memory by its DMA address, NPU memory (mem=npu, as ib_send_bw -c UD over a GPU's) by its pages' DMA addresses from npu_peer_mem, an SGE for each page a message and its header touch (at most 3, else EINVAL as the buffer is set up); NPU memory freed under the test is fenced as RC's is, the send queue's marker a SEND to the peer.  Both sides give it (the server listens in the UDP port space).  The result says variant=ud.  As perftest, with qps=N (each connection a UD QP, a SIDR exchange and buffers of its own: no MR to share), srq (a server's for one connection, or each side's of slat; host memory) and post_list= (a chain of datagrams in one post).  validate (bw,send) checks each message as over RC, each of the server's slots the receive's header and then the message; there a lost message shows as the next one's number in the slot (EBADMSG naming the byte).  Not with sge=N, qp_timeout, retry_count, duplex or imm (EINVAL)" },
	[KP_OPT_MR_PER_QP] = { "mr_per_qp", KP_T_FLAG, KP_F(mr_per_qp), 0, 0,
		"server; client, bw",
		"qps=N: each connection's data buffer in an MR of its own (perftest --mr_per_qp).  By default, as perftest's, a test of several connections has one PD, and one MR over all their buffers: each connection's buffer is a block of its own, and the MR maps the blocks one after the other (a fast-registration of their pages, posted once all are allocated); each connection advertises and uses its block's place in it, and the side's dmesg says so.  One MR needs the blocks' pages together within the device's page list (siw: 256 pages of 4 KiB), else EINVAL naming this option.  Each side chooses for itself, as with perftest; a test of one connection has one MR either way.  NPU memory is always an MR and a PD a connection: each NPU buffer's free callback fences its own connection's QP, and no other QP may reach the buffer.  The client's result says variant=mr_per_qp wherever a test of several connections ran with one MR each" },
};

static const char * const kp_mem_names[] = {
	[KP_MEM_HOST] = "host",
	[KP_MEM_NPU] = "npu",
};

static const char * const kp_cq_names[] = {
	[KP_CQ_DIRECT] = "direct",
	[KP_CQ_SOFTIRQ] = "softirq",
	[KP_CQ_WORKQUEUE] = "workqueue",
	[KP_CQ_UNBOUND] = "unbound",
};

const char *kp_cq_name(enum kp_cq_ctx cq)
{
	if ((unsigned int)cq >= ARRAY_SIZE(kp_cq_names))
		return "?";
	return kp_cq_names[cq];
}

static const char * const kp_atomic_names[] = {
	[KP_ATOMIC_NONE] = "none",
	[KP_ATOMIC_FADD] = "fadd",
	[KP_ATOMIC_CAS] = "cas",
};

const char *kp_atomic_name(enum kp_atomic op)
{
	if ((unsigned int)op >= ARRAY_SIZE(kp_atomic_names))
		return "?";
	return kp_atomic_names[op];
}

const char *kp_mem_name(enum kp_mem mem)
{
	if ((unsigned int)mem >= ARRAY_SIZE(kp_mem_names))
		return "?";
	return kp_mem_names[mem];
}

static const char * const kp_mode_names[] = {
	[KP_MODE_PING] = "ping",
	[KP_MODE_RLAT] = "rlat",
	[KP_MODE_WLAT] = "wlat",
	[KP_MODE_BW] = "bw",
	[KP_MODE_FR] = "fr",
	[KP_MODE_BW_READ] = "bw_read",
	[KP_MODE_SLAT] = "slat",
	[KP_MODE_BW_SEND] = "bw_send",
	[KP_MODE_ALAT] = "alat",
	[KP_MODE_BW_ATOMIC] = "bw_atomic",
	[KP_MODE_BW_IMM] = "bw_imm",
};

const char *kp_mode_name(enum kp_mode mode)
{
	if ((unsigned int)mode >= ARRAY_SIZE(kp_mode_names))
		return "?";
	return kp_mode_names[mode];
}

const char *kp_role_name(enum kp_role role)
{
	switch (role) {
	case KP_ROLE_SERVER:
		return "server";
	case KP_ROLE_CLIENT:
		return "client";
	default:
		return "none";
	}
}

#define kp_err(err, len, ...)	snprintf(err, len, __VA_ARGS__)

static bool kp_isdigit(char c)
{
	return c >= '0' && c <= '9';
}

static int kp_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decimal or 0x-hex, the whole of s[0..len), no sign, no overflow. */
static int kp_parse_u64(const char *s, size_t len, u64 *out)
{
	unsigned int base = 10;
	u64 v = 0;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return -EINVAL;
	for (; i < len; i++) {
		int d = base == 16 ? kp_hexval(s[i]) :
			(kp_isdigit(s[i]) ? s[i] - '0' : -1);

		if (d < 0)
			return -EINVAL;
		if (v > (~0ull - (u64)d) / base)
			return -ERANGE;
		v = v * base + (u64)d;
	}
	*out = v;
	return 0;
}

/* "N" or "A-B" with A <= B: -EINVAL if not, -ERANGE past 2^64. */
static int kp_parse_range(const char *item, size_t ilen, u64 *lo, u64 *hi)
{
	const char *dash = memchr(item, '-', ilen);
	int ret;

	ret = kp_parse_u64(item, dash ? (size_t)(dash - item) : ilen, lo);
	if (!ret)
		*hi = *lo;
	if (!ret && dash)
		ret = kp_parse_u64(dash + 1, ilen - (size_t)(dash - item) - 1,
				   hi);
	if (!ret && *lo > *hi)
		return -EINVAL;
	return ret;
}

/*
 * "64:4096" or "64-65536" (every power-of-two multiple of 64 up to 65536),
 * or both joined by ':'.  Sizes go to o->sizes in the order given.
 */
static int kp_parse_sizes(const char *s, size_t len, struct kp_opts *o,
			  char *err, size_t errlen)
{
	size_t i = 0;

	while (i < len) {
		const char *item = s + i, *end = memchr(item, ':', len - i);
		size_t ilen = end ? (size_t)(end - item) : len - i;
		u64 lo, hi;
		int ret;

		ret = kp_parse_range(item, ilen, &lo, &hi);
		if (ret == -EINVAL) {
			kp_err(err, errlen, "option 'sizes': bad item '%.*s'",
			       (int)(ilen > 32 ? 32 : ilen), item);
			return -EINVAL;
		}
		if (ret || !lo || hi > KP_MAX_SIZE) {
			kp_err(err, errlen, "option 'sizes': out of range [1, %u]",
			       KP_MAX_SIZE);
			return -ERANGE;
		}
		for (; lo <= hi; lo <<= 1) {
			if (o->nsizes == KP_MAX_SIZES) {
				kp_err(err, errlen, "option 'sizes': more than %u sizes",
				       KP_MAX_SIZES);
				return -E2BIG;
			}
			o->sizes[o->nsizes++] = (u32)lo;
		}
		if (!end)
			return 0;
		i += ilen + 1;
		if (i == len)
			break;	/* a trailing ':' */
	}
	kp_err(err, errlen, "option 'sizes': empty item");
	return -EINVAL;
}

/* "0:2" or "0-3", or both joined by ':'; each CPU once, in the order given. */
static int kp_parse_cpus(const char *s, size_t len, struct kp_opts *o,
			 char *err, size_t errlen)
{
	size_t i = 0;

	while (i < len) {
		const char *item = s + i, *end = memchr(item, ':', len - i);
		size_t ilen = end ? (size_t)(end - item) : len - i;
		u64 lo, hi, k;
		u32 j;
		int ret;

		ret = kp_parse_range(item, ilen, &lo, &hi);
		if (ret == -EINVAL) {
			kp_err(err, errlen, "option 'cpus': bad item '%.*s'",
			       (int)(ilen > 32 ? 32 : ilen), item);
			return -EINVAL;
		}
		if (ret || hi > KP_MAX_CPU) {
			kp_err(err, errlen, "option 'cpus': out of range [0, %u]",
			       KP_MAX_CPU);
			return -ERANGE;
		}
		for (k = lo; k <= hi; k++) {
			for (j = 0; j < o->ncpus; j++) {
				if (o->cpus[j] == k) {
					kp_err(err, errlen, "option 'cpus': CPU %u given twice",
					       (u32)k);
					return -EINVAL;
				}
			}
			if (o->ncpus == KP_MAX_QPS) {
				kp_err(err, errlen, "option 'cpus': more than %u CPUs",
				       KP_MAX_QPS);
				return -E2BIG;
			}
			o->cpus[o->ncpus++] = (u16)k;
		}
		if (!end)
			return 0;
		i += ilen + 1;
	}
	kp_err(err, errlen, "option 'cpus': empty item");
	return -EINVAL;
}

static int kp_parse_ipv4(const char *s, size_t len, u8 *out)
{
	size_t i = 0;
	int part;

	for (part = 0; part < 4; part++) {
		u32 v = 0;
		size_t digits = 0;

		while (i < len && kp_isdigit(s[i])) {
			if (++digits > 3)
				return -EINVAL;
			v = v * 10 + (u32)(s[i++] - '0');
		}
		if (!digits || v > 255)
			return -EINVAL;
		out[part] = (u8)v;
		if (part < 3) {
			if (i >= len || s[i] != '.')
				return -EINVAL;
			i++;
		}
	}
	return i == len ? 0 : -EINVAL;
}

/* RFC 4291 text: hex groups, one "::", an optional trailing dotted quad. */
static int kp_parse_ipv6(const char *s, size_t len, u8 *out)
{
	u16 head[8], tail[8];
	int nhead = 0, ntail = 0, *n = &nhead;
	u16 *grp = head;
	bool gap = false;
	size_t i = 0;
	int k;

	if (len >= 2 && s[0] == ':' && s[1] == ':') {
		gap = true;
		grp = tail;
		n = &ntail;
		i = 2;
	}
	while (i < len) {
		size_t start = i;
		u32 v = 0;

		while (i < len && kp_hexval(s[i]) >= 0 && i - start < 5)
			v = (v << 4) | (u32)kp_hexval(s[i++]);
		if (i < len && s[i] == '.') {
			/* embedded IPv4 takes the last two groups */
			u8 q[4];

			if (kp_parse_ipv4(s + start, len - start, q) ||
			    nhead + ntail > 6)
				return -EINVAL;
			grp[(*n)++] = (u16)(q[0] << 8 | q[1]);
			grp[(*n)++] = (u16)(q[2] << 8 | q[3]);
			i = len;
			break;
		}
		if (i == start || i - start > 4 || nhead + ntail >= 8)
			return -EINVAL;
		grp[(*n)++] = (u16)v;
		if (i == len)
			break;
		if (s[i] != ':')
			return -EINVAL;
		i++;
		if (i < len && s[i] == ':') {
			if (gap)
				return -EINVAL;
			gap = true;
			grp = tail;
			n = &ntail;
			i++;
		} else if (i == len) {
			return -EINVAL;	/* trailing single ':' */
		}
	}
	if (gap ? nhead + ntail > 7 : nhead != 8)
		return -EINVAL;
	memset(out, 0, 16);
	for (k = 0; k < nhead; k++) {
		out[2 * k] = (u8)(head[k] >> 8);
		out[2 * k + 1] = (u8)head[k];
	}
	for (k = 0; k < ntail; k++) {
		int at = 8 - ntail + k;

		out[2 * at] = (u8)(tail[k] >> 8);
		out[2 * at + 1] = (u8)tail[k];
	}
	return 0;
}

static int kp_parse_addr6(const char *s, size_t len, struct kp_addr *a)
{
	const char *pct = memchr(s, '%', len);
	size_t alen = pct ? (size_t)(pct - s) : len;
	int ret;

	ret = kp_parse_ipv6(s, alen, a->addr);
	if (ret)
		return ret;
	a->family = 6;
	if (!pct)
		return 0;
	s = pct + 1;
	len -= alen + 1;
	if (!len || len >= KP_IFNAME_MAX)
		return -EINVAL;
	if (kp_isdigit(s[0])) {
		u64 v;

		ret = kp_parse_u64(s, len, &v);
		if (ret || v > 0xffffffffull)
			return -EINVAL;
		a->scope_id = (u32)v;
		return 0;
	}
	for (alen = 0; alen < len; alen++) {
		char c = s[alen];

		if (!(kp_isdigit(c) || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || c == '_' || c == '-' || c == '.'))
			return -EINVAL;
	}
	memcpy(a->ifname, s, len);
	a->ifname[len] = '\0';
	return 0;
}

static void kp_opts_defaults(struct kp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->count = 1000;
	o->size = 64;
	o->txdepth = 64;
	o->timeout_ms = 10000;
	o->qps = 1;
	o->probe_ms = 1000;
	o->sge = 1;
	o->inline_max = KP_DEF_INLINE;
}

static int kp_opt_lookup(const char *key, size_t klen)
{
	int i;

	for (i = 0; i < KP_OPT_NR; i++)
		if (strlen(kp_opt_table[i].name) == klen &&
		    !memcmp(kp_opt_table[i].name, key, klen))
			return i;
	return -1;
}

static int kp_opt_set(struct kp_opts *o, int id, const char *val, size_t vlen,
		      bool has_val, char *err, size_t errlen)
{
	const struct kp_opt_desc *d = &kp_opt_table[id];
	void *field = (char *)o + d->off;
	unsigned int i;
	u64 v;
	int ret;

	if (o->given & (1ull << id)) {
		kp_err(err, errlen, "option '%s' given twice", d->name);
		return -EINVAL;
	}
	if ((d->type == KP_T_U32 || d->type == KP_T_ADDR4 ||
	     d->type == KP_T_ADDR6 || d->type == KP_T_MEM || d->type == KP_T_CQ ||
	     d->type == KP_T_SIZES || d->type == KP_T_U64 ||
	     d->type == KP_T_CPUS || d->type == KP_T_ATOMIC) != has_val) {
		kp_err(err, errlen, has_val ? "option '%s' takes no value" :
		       "option '%s' needs a value", d->name);
		return -EINVAL;
	}

	switch (d->type) {
	case KP_T_ROLE:
		if (o->role != KP_ROLE_NONE) {
			kp_err(err, errlen, "'%s' conflicts with '%s': one role only",
			       d->name, kp_role_name(o->role));
			return -EINVAL;
		}
		o->role = (enum kp_role)d->min;
		break;
	case KP_T_MODE:
		if (o->mode != KP_MODE_PING) {
			kp_err(err, errlen, "'%s' conflicts with '%s': one test mode only",
			       d->name, kp_mode_name(o->mode));
			return -EINVAL;
		}
		o->mode = (enum kp_mode)d->min;
		break;
	case KP_T_FLAG:
		*(bool *)field = true;
		break;
	case KP_T_U32:
	case KP_T_U64:
		ret = kp_parse_u64(val, vlen, &v);
		if (ret == -EINVAL) {
			kp_err(err, errlen, "option '%s': '%.*s' is not a number",
			       d->name, (int)(vlen > 32 ? 32 : vlen), val);
			return ret;
		}
		if (d->type == KP_T_U64) {
			if (ret || !v) {
				kp_err(err, errlen, "option '%s': out of range [1, 2^64)",
				       d->name);
				return -ERANGE;
			}
			*(u64 *)field = v;
			break;
		}
		if (ret || v < d->min || v > d->max) {
			kp_err(err, errlen, "option '%s': out of range [%u, %u]",
			       d->name, d->min, d->max);
			return -ERANGE;
		}
		*(u32 *)field = (u32)v;
		break;
	case KP_T_MEM:
		if (vlen == 4 && !memcmp(val, "host", 4)) {
			o->mem = KP_MEM_HOST;
		} else if (vlen == 3 && !memcmp(val, "npu", 3)) {
			o->mem = KP_MEM_NPU;
		} else {
			kp_err(err, errlen, "option '%s': '%.*s' is not host or npu",
			       d->name, (int)(vlen > 16 ? 16 : vlen), val);
			return -EINVAL;
		}
		break;
	case KP_T_CQ:
		for (i = 0; i < KP_CQ_NR; i++)
			if (strlen(kp_cq_names[i]) == vlen &&
			    !memcmp(val, kp_cq_names[i], vlen))
				break;
		if (i == KP_CQ_NR) {
			kp_err(err, errlen, "option '%s': '%.*s' is not direct, softirq, workqueue or unbound",
			       d->name, (int)(vlen > 16 ? 16 : vlen), val);
			return -EINVAL;
		}
		o->cq = i;
		break;
	case KP_T_ATOMIC:
		for (i = KP_ATOMIC_FADD; i <= KP_ATOMIC_CAS; i++)
			if (strlen(kp_atomic_names[i]) == vlen &&
			    !memcmp(val, kp_atomic_names[i], vlen))
				break;
		if (i > KP_ATOMIC_CAS) {
			kp_err(err, errlen, "option '%s': '%.*s' is not fadd or cas",
			       d->name, (int)(vlen > 16 ? 16 : vlen), val);
			return -EINVAL;
		}
		o->atomic = i;
		break;
	case KP_T_SIZES:
		ret = kp_parse_sizes(val, vlen, o, err, errlen);
		if (ret)
			return ret;
		break;
	case KP_T_CPUS:
		ret = kp_parse_cpus(val, vlen, o, err, errlen);
		if (ret)
			return ret;
		break;
	case KP_T_ADDR4:
	case KP_T_ADDR6:
		if (o->addr.family) {
			kp_err(err, errlen, "'%s' conflicts with an address given before",
			       d->name);
			return -EINVAL;
		}
		if (d->type == KP_T_ADDR4) {
			ret = kp_parse_ipv4(val, vlen, o->addr.addr);
			o->addr.family = 4;
		} else {
			ret = kp_parse_addr6(val, vlen, &o->addr);
		}
		if (ret) {
			memset(&o->addr, 0, sizeof(o->addr));
			kp_err(err, errlen, "option '%s': bad address '%.*s'",
			       d->name, (int)(vlen > 48 ? 48 : vlen), val);
			return -EINVAL;
		}
		break;
	}
	o->given |= 1ull << id;
	return 0;
}

/* sizes, duration and progress: client options of the measured modes */
/*
 * A server that may post data receives: given no mode (the client names
 * it), or bw,send or bw,imm.
 */
static bool kp_opts_server_rx(const struct kp_opts *o)
{
	return o->mode == KP_MODE_PING ||
	       (o->mode == KP_MODE_BW && (o->bw_send || o->wlat_imm));
}

static int kp_opts_check_run(const struct kp_opts *o, char *err, size_t errlen)
{
	static const int ids[] = { KP_OPT_SIZES, KP_OPT_DURATION,
				   KP_OPT_PROGRESS, KP_OPT_WARMUP };
	bool measured = o->mode == KP_MODE_RLAT || o->mode == KP_MODE_WLAT ||
			o->mode == KP_MODE_SLAT || o->mode == KP_MODE_BW ||
			o->mode == KP_MODE_ALAT;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		const char *name = kp_opt_table[ids[i]].name;

		if (!kp_opt_given(o, ids[i]))
			continue;
		if (o->role != KP_ROLE_CLIENT) {
			kp_err(err, errlen, "'%s' is a client option; the server follows the client",
			       name);
			return -EINVAL;
		}
		if (!measured) {
			kp_err(err, errlen, "'%s' needs 'rlat', 'wlat', 'slat', 'alat' or 'bw', not '%s'",
			       name, kp_mode_name(o->mode));
			return -EINVAL;
		}
	}
	if (o->gbits && (o->role != KP_ROLE_CLIENT || o->mode != KP_MODE_BW)) {
		kp_err(err, errlen, "'gbits' is for a bw client, not a %s %s",
		       kp_mode_name(o->mode), kp_role_name(o->role));
		return -EINVAL;
	}
	if (o->wlat_imm && (o->role != KP_ROLE_CLIENT ||
			    (o->mode != KP_MODE_WLAT && o->mode != KP_MODE_BW))) {
		kp_err(err, errlen, "'imm' is for a wlat or bw client, not a %s %s",
		       kp_mode_name(o->mode), kp_role_name(o->role));
		return -EINVAL;
	}
	if (o->wlat_imm && (o->bw_read || o->duplex || o->atomic)) {
		kp_err(err, errlen, "'imm' streams WRITEs or SENDs from the client: not with '%s'",
		       o->bw_read ? "read" : o->duplex ? "duplex" : "atomic");
		return -EINVAL;
	}
	if (o->events && (o->role != KP_ROLE_CLIENT ||
			  o->mode == KP_MODE_PING)) {
		kp_err(err, errlen, "'events' is for a client of rlat, wlat, slat, alat, bw or fr (ping: 'poll' chooses)");
		return -EINVAL;
	}
	if (o->expect_bw && (o->role != KP_ROLE_CLIENT || o->mode != KP_MODE_BW)) {
		kp_err(err, errlen, "'expect_bw' is for a bw client, not a %s %s",
		       kp_mode_name(o->mode), kp_role_name(o->role));
		return -EINVAL;
	}
	if ((o->max_lat_us || o->max_p99_us) &&
	    (o->role != KP_ROLE_CLIENT || !(o->mode == KP_MODE_RLAT ||
	     o->mode == KP_MODE_WLAT || o->mode == KP_MODE_SLAT ||
	     o->mode == KP_MODE_ALAT))) {
		kp_err(err, errlen, "'%s' is for a client of rlat, wlat, slat or alat, not a %s %s",
		       o->max_lat_us ? "max_lat" : "max_p99",
		       kp_mode_name(o->mode), kp_role_name(o->role));
		return -EINVAL;
	}
	if (o->light && o->mode != KP_MODE_WLAT && o->mode != KP_MODE_SLAT) {
		kp_err(err, errlen, "'light' is a method of wlat and slat, not of '%s'",
		       kp_mode_name(o->mode));
		return -EINVAL;
	}
	if (o->cq_mod && !kp_mode_bw(o->mode)) {
		kp_err(err, errlen, "'cq_mod' moderates a bw stream's completions, not %s's",
		       kp_mode_name(o->mode));
		return -EINVAL;
	}
	if (o->sge > 1 && o->mode == KP_MODE_FR) {
		kp_err(err, errlen, "'sge' splits data messages; fr sends none");
		return -EINVAL;
	}
	if (o->rw && (o->role != KP_ROLE_CLIENT ||
		      !(o->mode == KP_MODE_RLAT || o->mode == KP_MODE_BW))) {
		kp_err(err, errlen, "'rw' is for a client of rlat or bw, not a %s %s",
		       kp_mode_name(o->mode), kp_role_name(o->role));
		return -EINVAL;
	}
	if (o->rw && (o->duplex || o->bw_send || kp_opt_given(o, KP_OPT_SGE) ||
		      o->local_dma_lkey || o->wlat_imm)) {
		kp_err(err, errlen, "'rw' chooses its own SGEs and keys, and streams READs or WRITEs from the client: not with '%s'",
		       o->duplex ? "duplex" : o->bw_send ? "send" :
		       o->wlat_imm ? "imm" :
		       o->local_dma_lkey ? "local_dma_lkey" : "sge");
		return -EINVAL;
	}
	if (kp_opt_given(o, KP_OPT_RETRY_COUNT) && o->role != KP_ROLE_CLIENT) {
		kp_err(err, errlen, "'retry_count' is a client option: the server's QP takes the client's from its connect request");
		return -EINVAL;
	}
	if ((o->rate_limit || o->burst_size) &&
	    (o->role != KP_ROLE_CLIENT || o->mode != KP_MODE_BW)) {
		kp_err(err, errlen, "'%s' paces a bw client's stream, not a %s %s",
		       o->rate_limit ? "rate_limit" : "burst_size",
		       kp_mode_name(o->mode), kp_role_name(o->role));
		return -EINVAL;
	}
	if (o->rate_limit && (o->duplex || o->atomic)) {
		kp_err(err, errlen, "'rate_limit' paces the client's stream alone: not with '%s'%s",
		       o->duplex ? "duplex" : "atomic",
		       o->duplex ? "" : " (perftest refuses it too)");
		return -EINVAL;
	}
	if (o->post_list > 1) {
		const char *bad = o->duplex ? "duplex" : o->rw ? "rw" :
				  o->atomic ? "atomic" :
				  o->rate_limit ? "rate_limit" : NULL;

		if (o->role != KP_ROLE_CLIENT || o->mode != KP_MODE_BW) {
			kp_err(err, errlen, "'post_list' chains a bw client's stream, not a %s %s's",
			       kp_mode_name(o->mode), kp_role_name(o->role));
			return -EINVAL;
		}
		if (bad) {
			kp_err(err, errlen, "'post_list' chains the client's plain stream: not with '%s'",
			       bad);
			return -EINVAL;
		}
		if (o->post_list > o->txdepth) {
			kp_err(err, errlen, "'post_list' %u: a chain goes when txdepth has room for it all, and txdepth is %u",
			       o->post_list, o->txdepth);
			return -EINVAL;
		}
		if (!kp_opt_given(o, KP_OPT_DURATION) && o->count % o->post_list) {
			kp_err(err, errlen, "'count' %u is not a multiple of 'post_list' %u (as perftest -l wants)",
			       o->count, o->post_list);
			return -EINVAL;
		}
		if (o->cq_mod && o->post_list % o->cq_mod) {
			kp_err(err, errlen, "'post_list' %u is not a multiple of 'cq_mod' %u (as perftest -l wants)",
			       o->post_list, o->cq_mod);
			return -EINVAL;
		}
	}
	if (o->srq && o->role == KP_ROLE_CLIENT && o->mode != KP_MODE_SLAT) {
		kp_err(err, errlen, "'srq' is for a server, or a slat client (as perftest --use-srq): a %s client posts control receives only",
		       kp_mode_name(o->mode));
		return -EINVAL;
	}
	if (o->ud) {
		const char *bad = o->sge > 1 ? "sge=N" :
				  kp_opt_given(o, KP_OPT_QP_TIMEOUT) ? "qp_timeout" :
				  kp_opt_given(o, KP_OPT_RETRY_COUNT) ? "retry_count" :
				  o->duplex ? "duplex" :
				  o->wlat_imm ? "imm" :
				  o->bw_send && kp_opt_given(o, KP_OPT_DURATION) ?
				  "bw,send by duration" : NULL;

		if (o->mode != KP_MODE_SLAT &&
		    !(o->mode == KP_MODE_BW && o->bw_send && !o->bw_read) &&
		    !(o->role == KP_ROLE_SERVER && o->mode == KP_MODE_PING)) {
			kp_err(err, errlen, "'ud' runs slat and bw,send (as ib_send_lat and ib_send_bw -c UD), not %s%s",
			       kp_mode_name(o->mode),
			       o->mode == KP_MODE_BW && !o->bw_send ? " of WRITEs or READs" : "");
			return -EINVAL;
		}
		if (bad) {
			kp_err(err, errlen, "'ud' with %s: a UD test is memory through the local DMA lkey, one SGE a page, plain SENDs one way, and no RC transport's timers",
			       bad);
			return -EINVAL;
		}
	}
	if (o->mr_per_qp && o->role == KP_ROLE_CLIENT && o->mode != KP_MODE_BW) {
		kp_err(err, errlen, "'mr_per_qp' is for a test of several connections (qps=N), which is 'bw', not '%s'",
		       kp_mode_name(o->mode));
		return -EINVAL;
	}
	if (o->srq && o->mem == KP_MEM_NPU) {
		kp_err(err, errlen, "'srq' with mem=npu: an SRQ's receives do not flush with the QP, so NPU memory's free callback could not fence them");
		return -EINVAL;
	}
	if (o->recv_post_list && o->role != KP_ROLE_SERVER) {
		kp_err(err, errlen, "'recv_post_list' chains the data receives of a bw,send or bw_imm server, not a %s's",
		       kp_role_name(o->role));
		return -EINVAL;
	}
	if (o->recv_post_list && !kp_opts_server_rx(o)) {
		kp_err(err, errlen, "'recv_post_list' chains data receives, which a %s server posts none of (bw,send and bw,imm do)",
		       kp_mode_name(o->mode));
		return -EINVAL;
	}
	if (o->rx_depth && o->role != KP_ROLE_SERVER &&
	    !(o->mode == KP_MODE_BW && o->bw_send && o->duplex)) {
		kp_err(err, errlen, "'rx_depth' sizes the data receives of a server, or of a duplex bw,send client, not a %s%s client's (slat keeps one posted)",
		       kp_mode_name(o->mode),
		       o->bw_send ? ",send without duplex" : "");
		return -EINVAL;
	}
	if (o->rx_depth && o->role == KP_ROLE_SERVER && !kp_opts_server_rx(o)) {
		kp_err(err, errlen, "'rx_depth' sizes data receives, which a %s server posts none of (bw,send and bw,imm do)",
		       kp_mode_name(o->mode));
		return -EINVAL;
	}
	if (o->burst_size && !o->rate_limit) {
		kp_err(err, errlen, "'burst_size' is rate_limit's burst: give 'rate_limit'");
		return -EINVAL;
	}
	/* bw,send and bw,imm: the server waits for each message */
	if (o->rate_limit && (o->bw_send || o->wlat_imm)) {
		u32 i, size = o->size, burst = o->burst_size ?: o->txdepth;
		u64 ms;

		for (i = 0; i < o->nsizes; i++)
			size = o->sizes[i] > size ? o->sizes[i] : size;
		ms = kp_mul_div((u64)burst * size, 1000, (u64)o->rate_limit << 20);
		if (ms >= o->timeout_ms) {
			kp_err(err, errlen, "'rate_limit': a burst of %u messages of %u bytes takes %llu ms at %u MiB/s, not under timeout=%u, which bounds the server's wait for each message of bw,send and bw,imm (give both sides the same)",
			       burst, size, (unsigned long long)ms,
			       o->rate_limit, o->timeout_ms);
			return -EINVAL;
		}
	}
	if (o->rate_limit && o->qps > o->ncpus && o->qps > 1) {
		kp_err(err, errlen, "'rate_limit' paces a stream from its own thread: give 'cpus' as many CPUs as 'qps'");
		return -EINVAL;
	}
	if (o->rw && o->atomic) {
		kp_err(err, errlen, "'rw' moves READs and WRITEs, not atomics");
		return -EINVAL;
	}
	if (o->events && o->cq == KP_CQ_DIRECT && kp_opt_given(o, KP_OPT_CQ)) {
		kp_err(err, errlen, "'events' sleeps until the core's poll context calls: not with cq=direct");
		return -EINVAL;
	}
	if (kp_opt_given(o, KP_OPT_QPS) || kp_opt_given(o, KP_OPT_CPUS)) {
		const char *name = kp_opt_given(o, KP_OPT_QPS) ? "qps" : "cpus";

		if (o->role != KP_ROLE_CLIENT) {
			kp_err(err, errlen, "'%s' is a client option; the server follows the client",
			       name);
			return -EINVAL;
		}
		if (o->mode != KP_MODE_BW) {
			kp_err(err, errlen, "'%s' needs 'bw', not '%s'", name,
			       kp_mode_name(o->mode));
			return -EINVAL;
		}
		if (o->ncpus > o->qps) {
			kp_err(err, errlen, "'cpus' names %u CPUs for %u QP(s): a thread would have none",
			       o->ncpus, o->qps);
			return -EINVAL;
		}
		if (o->events && o->qps > o->ncpus && o->qps > 1) {
			kp_err(err, errlen, "'events' sleeps on one QP a thread: give 'cpus' as many CPUs as 'qps'");
			return -EINVAL;
		}
	}
	if (kp_opt_given(o, KP_OPT_SIZES) && kp_opt_given(o, KP_OPT_SIZE)) {
		kp_err(err, errlen, "'sizes' conflicts with 'size'");
		return -EINVAL;
	}
	if (kp_opt_given(o, KP_OPT_DURATION) && kp_opt_given(o, KP_OPT_COUNT)) {
		kp_err(err, errlen, "'duration' conflicts with 'count'");
		return -EINVAL;
	}
	return 0;
}

/* Cross-option rules: each failure names the options involved. */
static int kp_opts_check(const struct kp_opts *o, char *err, size_t errlen)
{
	bool server = o->role == KP_ROLE_SERVER;

	if (o->role == KP_ROLE_NONE) {
		kp_err(err, errlen, "need 'server' or 'client'");
		return -EINVAL;
	}
	if (!o->addr.family) {
		kp_err(err, errlen, "need 'addr' or 'addr6'");
		return -EINVAL;
	}
	if (!kp_opt_given(o, KP_OPT_PORT)) {
		kp_err(err, errlen, "need 'port'");
		return -EINVAL;
	}
	if (server && o->mode == KP_MODE_FR) {
		kp_err(err, errlen, "'fr' is a client test; the server runs ping");
		return -EINVAL;
	}
	if (o->duplex && o->mode != KP_MODE_BW) {
		kp_err(err, errlen, "'duplex' needs 'bw'");
		return -EINVAL;
	}
	if (o->bw_read && o->mode != KP_MODE_BW) {
		kp_err(err, errlen, "'read' needs 'bw' (bw,read: a READ stream)");
		return -EINVAL;
	}
	if (o->bw_send && o->mode != KP_MODE_BW) {
		kp_err(err, errlen, "'send' needs 'bw' (bw,send: a SEND stream)");
		return -EINVAL;
	}
	if (o->bw_read && o->bw_send) {
		kp_err(err, errlen, "'read' and 'send' are two different streams");
		return -EINVAL;
	}
	if (o->atomic && o->mode != KP_MODE_ALAT && o->mode != KP_MODE_BW) {
		kp_err(err, errlen, "'atomic' needs 'alat' or 'bw' (bw,atomic=: an atomic stream)");
		return -EINVAL;
	}
	if (o->atomic && (o->bw_read || o->bw_send || o->duplex)) {
		kp_err(err, errlen, "'atomic' is a stream of its own; not with '%s'",
		       o->bw_read ? "read" : o->bw_send ? "send" : "duplex");
		return -EINVAL;
	}
	if (kp_mode_atomic(o->mode) || o->atomic) {
		/* perftest -A runs 8 bytes only, one SGE */
		if (kp_opt_given(o, KP_OPT_SIZES) ||
		    (kp_opt_given(o, KP_OPT_SIZE) && o->size != KP_ATOMIC_SIZE)) {
			kp_err(err, errlen, "an atomic moves %u bytes: 'size' is %u or not given, 'sizes' not at all",
			       KP_ATOMIC_SIZE, KP_ATOMIC_SIZE);
			return -EINVAL;
		}
		if (o->sge > 1) {
			kp_err(err, errlen, "an atomic's 8 bytes take one SGE: not with 'sge'");
			return -EINVAL;
		}
	}
	/* each side posts the receives of the other's count, no more */
	if (o->bw_send && o->duplex && (o->duration_s || o->validate)) {
		kp_err(err, errlen, "'duplex' with 'send' streams count messages each way, %s",
		       o->duration_s ? "not for a duration" : "not validated");
		return -EINVAL;
	}
	if (o->mode == KP_MODE_PING && o->size < KP_PING_MIN_SIZE) {
		kp_err(err, errlen, "'size' %u is below the ping payload's %u bytes",
		       o->size, KP_PING_MIN_SIZE);
		return -EINVAL;
	}
	if (o->validate && o->mode != KP_MODE_PING &&
	    (o->mode != KP_MODE_BW || o->atomic)) {
		kp_err(err, errlen, "'validate' applies to ping, bw,send, bw,read and bw,imm, not '%s'",
		       o->atomic ? kp_mode_name(KP_MODE_BW_ATOMIC) :
		       kp_mode_name(o->mode));
		return -EINVAL;
	}
	/* a plain WRITE tells the server nothing of when it has landed */
	if (o->validate && o->mode == KP_MODE_BW && !o->bw_send &&
	    !o->bw_read && !o->wlat_imm) {
		kp_err(err, errlen, "'validate' on a WRITE stream needs the client's 'imm': the server checks each message as its immediate arrives (and serves it given no mode)");
		return -EINVAL;
	}
	/* a READ is checked in its slot, which rw and duplex do not keep */
	if (o->validate && o->bw_read && (o->duplex || o->rw)) {
		kp_err(err, errlen, "'validate' checks bw,read from the client alone, through its own slots: not with '%s'",
		       o->duplex ? "duplex" : "rw");
		return -EINVAL;
	}
	if (o->validate && o->mode == KP_MODE_BW) {
		u32 i, size = o->size, big = o->size;

		for (i = 0; i < o->nsizes; i++) {
			size = o->sizes[i] < size ? o->sizes[i] : size;
			big = o->sizes[i] > big ? o->sizes[i] : big;
		}
		if (size < KP_STREAM_MIN) {
			kp_err(err, errlen, "'validate': a message of %u bytes is too short for its number and a band (at least %u)",
			       size, KP_STREAM_MIN);
			return -EINVAL;
		}
		/* bw,imm's server holds two slots at least, in one buffer */
		if (o->wlat_imm && !o->bw_send && big > KP_VAL_IMM_MAX) {
			kp_err(err, errlen, "'validate' with imm: the server keeps two slots of each message, and %u bytes is above %u",
			       big, KP_VAL_IMM_MAX);
			return -EINVAL;
		}
	}
	if ((o->read_inv || o->server_inv) &&
	    (!server || o->mode != KP_MODE_PING)) {
		kp_err(err, errlen, "'%s' applies to a ping server",
		       o->read_inv ? "read_inv" : "server_inv");
		return -EINVAL;
	}
	if (kp_opt_given(o, KP_OPT_NPU_DEV) && o->mem != KP_MEM_NPU) {
		kp_err(err, errlen, "'npu_dev' needs 'mem=npu'");
		return -EINVAL;
	}
	if (kp_opt_given(o, KP_OPT_NPU_VA) != kp_opt_given(o, KP_OPT_NPU_LEN)) {
		kp_err(err, errlen, "'npu_va' and 'npu_len' go together");
		return -EINVAL;
	}
	if (kp_opt_given(o, KP_OPT_NPU_VA)) {
		if (o->mem != KP_MEM_NPU) {
			kp_err(err, errlen, "'npu_va' needs 'mem=npu'");
			return -EINVAL;
		}
		if ((o->npu_va | o->npu_len) & (KP_NPU_VA_ALIGN - 1)) {
			kp_err(err, errlen, "'npu_va' and 'npu_len' must be multiples of %u",
			       KP_NPU_VA_ALIGN);
			return -EINVAL;
		}
		if (kp_opt_given(o, KP_OPT_NPU_DEV)) {
			kp_err(err, errlen, "'npu_dev' conflicts with 'npu_va': the memory decides the device");
			return -EINVAL;
		}
		if (o->npu_va + o->npu_len < o->npu_va) {
			kp_err(err, errlen, "'npu_va' + 'npu_len' wraps around");
			return -ERANGE;
		}
	}
	if (o->mem == KP_MEM_NPU && o->local_dma_lkey) {
		kp_err(err, errlen, "'local_dma_lkey' needs host memory, not 'mem=npu'");
		return -EINVAL;
	}
	if (o->read_inv && o->local_dma_lkey) {
		kp_err(err, errlen, "'read_inv' needs a registered sink; drop 'local_dma_lkey'");
		return -EINVAL;
	}
	return kp_opts_check_run(o, err, errlen);
}

int kp_opts_parse(const char *cmd, size_t len, struct kp_opts *o,
		  char *err, size_t errlen)
{
	size_t i = 0;
	int ret;

	kp_opts_defaults(o);
	if (err && errlen)
		err[0] = '\0';
	if (len > KP_CMD_MAX) {
		kp_err(err, errlen, "command longer than %u bytes", KP_CMD_MAX);
		return -E2BIG;
	}
	if (len && cmd[len - 1] == '\n')
		len--;
	if (!len) {
		kp_err(err, errlen, "empty command");
		return -EINVAL;
	}
	if (memchr(cmd, '\0', len)) {
		kp_err(err, errlen, "NUL byte in command");
		return -EINVAL;
	}

	while (i <= len) {
		const char *tok = cmd + i, *eq, *end;
		size_t tlen, klen;
		int id;

		end = memchr(tok, ',', len - i);
		tlen = end ? (size_t)(end - tok) : len - i;
		if (!tlen) {
			kp_err(err, errlen, "empty option at byte %zu", i);
			return -EINVAL;
		}
		eq = memchr(tok, '=', tlen);
		klen = eq ? (size_t)(eq - tok) : tlen;
		id = kp_opt_lookup(tok, klen);
		if (id < 0) {
			kp_err(err, errlen, "unknown option '%.*s'",
			       (int)(klen > 32 ? 32 : klen), tok);
			return -EINVAL;
		}
		ret = kp_opt_set(o, id, eq ? eq + 1 : NULL,
				 eq ? tlen - klen - 1 : 0, eq != NULL,
				 err, errlen);
		if (ret)
			return ret;
		i += tlen + 1;
	}
	ret = kp_opts_check(o, err, errlen);
	if (ret)
		return ret;
	if (o->bw_read)
		o->mode = KP_MODE_BW_READ;
	if (o->bw_send)
		o->mode = KP_MODE_BW_SEND;
	if (o->atomic && o->mode == KP_MODE_BW)
		o->mode = KP_MODE_BW_ATOMIC;
	if (o->wlat_imm && o->mode == KP_MODE_BW)
		o->mode = KP_MODE_BW_IMM;
	if (kp_mode_atomic(o->mode)) {
		if (!o->atomic)
			o->atomic = KP_ATOMIC_FADD;	/* perftest's default */
		o->size = KP_ATOMIC_SIZE;
	}
	/* events sleep until the core's poll context wakes them */
	if (o->events && !kp_opt_given(o, KP_OPT_CQ))
		o->cq = KP_CQ_SOFTIRQ;
	if (!o->nsizes) {
		o->sizes[0] = o->size;
		o->nsizes = 1;
	}
	return 0;
}

int kp_addr_format(const struct kp_addr *a, char *buf, size_t len)
{
	const u8 *p = a->addr;
	int n, k;

	if (a->family == 4)
		return snprintf(buf, len, "%u.%u.%u.%u", p[0], p[1], p[2], p[3]);
	if (a->family != 6)
		return snprintf(buf, len, "-");
	n = 0;
	for (k = 0; k < 8 && n < (int)len; k++)
		n += snprintf(buf + n, len - n, "%s%x", k ? ":" : "",
			      p[2 * k] << 8 | p[2 * k + 1]);
	if (a->ifname[0] && n < (int)len)
		n += snprintf(buf + n, len - n, "%%%s", a->ifname);
	else if (a->scope_id && n < (int)len)
		n += snprintf(buf + n, len - n, "%%%u", a->scope_id);
	return n;
}

int kp_opts_help(char *buf, size_t len)
{
	int n = 0, i;

	for (i = 0; i < KP_OPT_NR && n < (int)len; i++) {
		const struct kp_opt_desc *d = &kp_opt_table[i];
		char val[40] = "";

		if (d->type == KP_T_U32)
			snprintf(val, sizeof(val), "=%u..%u", d->min, d->max);
		else if (d->type == KP_T_ADDR4 || d->type == KP_T_ADDR6)
			snprintf(val, sizeof(val), "=ADDR");
		else if (d->type == KP_T_MEM)
			snprintf(val, sizeof(val), "=host|npu");
		else if (d->type == KP_T_CQ)
			snprintf(val, sizeof(val), "=direct|softirq|workqueue|unbound");
		else if (d->type == KP_T_ATOMIC)
			snprintf(val, sizeof(val), "=fadd|cas");
		else if (d->type == KP_T_SIZES)
			snprintf(val, sizeof(val), "=N[-M][:...]");
		else if (d->type == KP_T_U64)
			snprintf(val, sizeof(val), "=N|0xN");
		else if (d->type == KP_T_CPUS)
			snprintf(val, sizeof(val), "=N[-M][:...]");
		n += snprintf(buf + n, len - n, "%s%s\t%s\t%s\n", d->name, val,
			      d->where, d->help);
	}
	return n;
}
