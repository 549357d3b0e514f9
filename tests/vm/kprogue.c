// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kprogue - a hostile krping_npu client for the VM tests.
 *
 *   kprogue overrun ADDR PORT SIZE
 *	Speaks krping_npu's test-mode hello (bw, one iteration, SIZE bytes),
 *	then RDMA WRITEs one byte at the last byte of the server's advertised
 *	buffer and one byte just past it.  Prints
 *	  "mr_len=N last=STATUS past=STATUS"
 *	where STATUS is the completion's ibv_wc_status name.  A server whose
 *	MR covers exactly its buffer makes "past" fail: with a remote access
 *	error where its device NAKs the write (rxe of 6.1 and 6.12), with retries
 *	exceeded where it moves its QP to the error state without a NAK (rxe
 *	of 5.10).  One retry only, so that the second takes seconds.
 *
 *   kprogue skips ADDR PORT MODE SKIP SIZE
 *	A hello of MODE (a number of enum kp_mode) and SIZE bytes asking
 *	for SKIP skips; on the server's ACK, the skips it asks for, then one
 *	SEND of half of SIZE bytes, a message of the wrong length.  Prints "status=N skip=N data=STATUS": the ACK's
 *	status (a positive errno), the skips asked for and the SEND's
 *	completion ("-" when none was sent).
 *
 *   kprogue badstream ADDR PORT K SIZE
 *	A bw,send client that asks the server to validate its stream
 *	(KP_HELLO_VALIDATE) of K + 2 messages of SIZE bytes: after the skips
 *	the server asks for, messages 0 to K-1 in their patterns
 *	(kp_stream_fill()), then message K with byte SIZE / 2 flipped (XOR
 *	0x10), one at a time.  Prints "status=N validate=0|1 sent=N": the
 *	ACK's status, whether the ACK says the server checks, and the
 *	messages that completed.
 *
 *   kprogue stall ADDR PORT MS SIZE
 *	A bw client (one iteration, SIZE bytes) that, once the server has
 *	acknowledged its HELLO, lets MS milliseconds go by before its FIN:
 *	a peer alive but slow.  Prints "fin=ok" once the server's FIN came.
 *
 *   kprogue vanish ADDR PORT SIZE
 *	The same client, gone after the server's ACK: its QP is destroyed
 *	without a disconnect, as a host that loses power takes its QP with
 *	it, and the process then sleeps (kill it) holding its rdma_cm id so
 *	that no DREQ goes out.  Prints "vanished".
 *
 *   kprogue ack PORT STATUS
 *	A server: takes one connection on PORT, reads the client's HELLO
 *	and answers with a HELLO_ACK whose status word is STATUS (a
 *	krping_npu server puts a positive errno there; anything above 4095
 *	is no errno).  Prints "hello=TYPE" once the ACK is sent, then waits
 *	for the client to leave (10 s at most).
 *
 *   kprogue ping0 ADDR PORT SIZE
 *	A ping client (rping's protocol): round 0 of SIZE bytes as rping
 *	sends it, then round 1 advertising 0 bytes.  Prints "round0=STATUS
 *	round1=STATUS": what the server answered: ok, or the failed step
 *	(no_answer: no reply in 3 s; no_ack: our SEND was never acked, the
 *	server's QP having gone to the error state first).
 *
 *   kprogue badwrites ADDR PORT K SIZE
 *   kprogue misslot ADDR PORT K SIZE
 *	A bw,imm client that asks the server to validate its stream of
 *	K + 2 messages of SIZE bytes: after the skips, WRITE_WITH_IMMs of
 *	messages 0 to K, one at a time, each in its pattern into the
 *	server's slot of its number modulo the slots its ACK advertises
 *	(128 bytes apart), its immediate its number.  badwrites flips byte
 *	SIZE / 2 of message K (XOR 0x10); misslot writes message K into the
 *	slot after its own, leaving its own as the server poisoned it.
 *	Prints "status=N validate=0|1 slots=N sent=N".
 *
 *   kprogue badslots PORT K
 *	A bw,read server for a client that validates its READs: takes one
 *	connection on PORT and its HELLO (bw,read, KP_HELLO_VALIDATE, SIZE
 *	bytes), writes K + 2 slots of SIZE bytes in their patterns
 *	(kp_stream_fill()) with byte SIZE / 2 of slot K flipped (XOR 0x10),
 *	and advertises them in a HELLO_ACK that says it wrote them.  Prints
 *	"slots=N size=SIZE" once the ACK is sent, then waits for the client
 *	to leave (10 s at most).
 *
 *   kprogue wlatimm PORT
 *	A wlat,imm server (a krping_npu client writes with immediate data,
 *	the server answers each write with one of its own): it answers every
 *	write, the client's last too, but without the last mark.  Prints
 *	"answered=N" once the client has gone (10 s at most).
 *
 * The hello layout is struct kp_hello of krping_npu/krping_npu.h, the
 * ping payload proc/kp_payload.c's.
 */
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>
#include <endian.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "../../proc/kp_payload.h"

struct kp_hello {
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
	uint32_t magic;
	uint8_t version;
	uint8_t type;
	uint8_t mode;
	uint8_t flags;
	uint32_t count;
	uint32_t status;
	uint32_t duration;
	uint32_t skip;
	uint32_t warmup;	/* version 5 */
	uint64_t probe_buf;	/* version 6: the side's probe target (iWARP) */
	uint32_t probe_rkey;
	uint32_t probe_size;
	uint32_t rate;		/* version 7: the client's rate_limit */
} __attribute__((packed));

#define KP_HELLO_MAGIC	0x4b504e55
/*
 * The client modes speak version 4 (KP_HELLO_V4 in krping_npu/krping_npu.h,
 * 40 bytes, no warm-up), which a krping_npu server still serves; the
 * server modes take a hello of any version up to 7 (64 bytes) and answer
 * it in the version and length it came in.
 */
#define KP_HELLO_VER	4
#define KP_HELLO_V4_LEN	offsetof(struct kp_hello, warmup)
#define KP_MSG_HELLO	1
#define KP_MSG_ACK	2
#define KP_MSG_FIN	3
#define KP_MODE_BW	3	/* enum kp_mode in proc/kp_opts.h */

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* Send the HELLO in @tx, and take the server's answer (its completion in @wc). */
static void hello_exchange(struct rdma_cm_id *id, struct kp_hello *tx,
			   struct ibv_mr *txmr, struct ibv_wc *wc)
{
	if (rdma_post_send(id, NULL, tx, KP_HELLO_V4_LEN, txmr, IBV_SEND_SIGNALED))
		die("rdma_post_send");
	if (rdma_get_send_comp(id, wc) <= 0 || wc->status)
		die("hello send");
	if (rdma_get_recv_comp(id, wc) <= 0 || wc->status)
		die("hello ack");
}

/* The @n zero-length SENDs (at most 64) the server's ACK asked for. */
static void send_skips(struct rdma_cm_id *id, uint32_t n)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND }, *bad;
	struct ibv_wc wc;
	uint32_t i;

	for (i = 0; i < n && i < 64; i++) {
		wr.send_flags = i + 1 == n ? IBV_SEND_SIGNALED : 0;
		if (ibv_post_send(id->qp, &wr, &bad))
			die("skip");
	}
	if (n && (rdma_get_send_comp(id, &wc) <= 0 || wc.status))
		die("skip completion");
}

/* The hello of the skips test: mode, skips, and the server's answer. */
static int skips(struct rdma_cm_id *id, struct kp_hello *tx, struct ibv_mr *txmr,
		 struct kp_hello *rx, struct ibv_mr *dmr, uint32_t mode,
		 uint32_t skip, uint32_t size)
{
	struct ibv_wc wc;
	const char *data = "-";
	uint32_t n;

	tx->mode = mode;
	tx->skip = htobe32(skip);
	hello_exchange(id, tx, txmr, &wc);
	n = be32toh(rx->skip);
	if (!rx->status) {
		send_skips(id, n);
		if (rdma_post_sendv(id, NULL, &(struct ibv_sge){
				(uintptr_t)dmr->addr, size / 2, dmr->lkey }, 1,
				IBV_SEND_SIGNALED))
			die("data send");
		if (rdma_get_send_comp(id, &wc) <= 0)
			die("data completion");
		data = ibv_wc_status_str(wc.status);
	}
	printf("status=%u skip=%u data=%s\n", be32toh(rx->status), n, data);
	/*
	 * Linger before leaving: a disconnect may reach the server's CM
	 * before its loop has looked at the data, and the test is about the
	 * server's verdict on the data.
	 */
	usleep(500000);
	rdma_disconnect(id);
	return 0;
}

#define KP_HELLO_VALIDATE	0x10
#define KP_MODE_BW_SEND		7	/* enum kp_mode */

/* The validated stream with a flipped byte in message @k. */
static int badstream(struct rdma_cm_id *id, struct kp_hello *tx,
		     struct ibv_mr *txmr, struct kp_hello *rx,
		     struct ibv_mr *dmr, uint32_t k, uint32_t size)
{
	uint8_t *data = dmr->addr;
	struct ibv_wc wc;
	uint32_t i, n, sent = 0;

	tx->mode = KP_MODE_BW_SEND;
	tx->flags = KP_HELLO_VALIDATE;
	tx->count = htobe32(k + 2);
	hello_exchange(id, tx, txmr, &wc);
	n = be32toh(rx->skip);
	if (!rx->status) {
		send_skips(id, n);
		for (i = 0; i <= k; i++) {
			kp_stream_fill(data, size, i);
			if (i == k)
				data[size / 2] ^= 0x10;
			if (rdma_post_sendv(id, NULL, &(struct ibv_sge){
					(uintptr_t)data, size, dmr->lkey }, 1,
					IBV_SEND_SIGNALED))
				die("data send");
			if (rdma_get_send_comp(id, &wc) <= 0 || wc.status)
				break;
			sent++;
		}
	}
	printf("status=%u validate=%u sent=%u\n", be32toh(rx->status),
	       !!(rx->flags & KP_HELLO_VALIDATE), sent);
	usleep(500000);	/* the server's verdict first, as skips() */
	rdma_disconnect(id);
	return 0;
}

#define KP_HELLO_IMM		0x04
#define KP_MODE_BW_IMM		10	/* enum kp_mode */
#define KP_VAL_ALIGN		128	/* a bw,imm server's slots, kp_test.c */

/*
 * The validated WRITE stream with message @k wrong: a flipped byte, or
 * (@misslot) written into the next slot.
 */
static int badwrites(struct rdma_cm_id *id, struct kp_hello *tx,
		     struct ibv_mr *txmr, struct kp_hello *rx,
		     struct ibv_mr *dmr, uint32_t k, uint32_t size, int misslot)
{
	uint32_t stride = (size + KP_VAL_ALIGN - 1) / KP_VAL_ALIGN * KP_VAL_ALIGN;
	uint32_t i, slots = 0, slot, sent = 0;
	uint8_t *data = dmr->addr;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;

	tx->mode = KP_MODE_BW_IMM;
	tx->flags = KP_HELLO_VALIDATE | KP_HELLO_IMM;
	tx->count = htobe32(k + 2);
	hello_exchange(id, tx, txmr, &wc);
	if (!rx->status)
		slots = be32toh(rx->size) / stride;
	if (slots >= 2) {
		send_skips(id, be32toh(rx->skip));
		for (i = 0; i <= k; i++) {
			kp_stream_fill(data, size, i);
			if (i == k && !misslot)
				data[size / 2] ^= 0x10;
			slot = (i + (i == k && misslot)) % slots;
			sge = (struct ibv_sge){ (uintptr_t)data, size, dmr->lkey };
			wr = (struct ibv_send_wr){
				.sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				.send_flags = IBV_SEND_SIGNALED,
				.imm_data = htobe32(i),
				.wr.rdma = { be64toh(rx->buf) + (uint64_t)slot * stride,
					     be32toh(rx->rkey) },
			};
			if (ibv_post_send(id->qp, &wr, &bad))
				die("data write");
			if (rdma_get_send_comp(id, &wc) <= 0 || wc.status)
				break;
			sent++;
		}
	}
	printf("status=%u validate=%u slots=%u sent=%u\n", be32toh(rx->status),
	       !!(rx->flags & KP_HELLO_VALIDATE), slots, sent);
	usleep(500000);	/* the server's verdict first, as skips() */
	rdma_disconnect(id);
	return 0;
}

/* The rping advertisement: buffer, rkey, size, network order. */
struct kp_info {
	uint64_t buf;
	uint32_t rkey;
	uint32_t size;
} __attribute__((packed));

static struct ibv_qp_init_attr qp_attr = {
	.cap = { .max_send_wr = 80, .max_recv_wr = 4, .max_send_sge = 1,
		 .max_recv_sge = 1 },
	.sq_sig_all = 0,
	.qp_type = IBV_QPT_RC,
};

/*
 * A server's one connection on @port, accepted with @param (NULL:
 * librdmacm's defaults), its HELLO received into @msg, registered as *@mr.
 */
static struct rdma_cm_id *serve_hello(const char *port,
				      struct rdma_conn_param *param,
				      struct kp_hello *msg, struct ibv_mr **mr,
				      struct ibv_wc *wc)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_cm_id *listen, *id;

	if (rdma_getaddrinfo(NULL, port, &hints, &res))
		die("rdma_getaddrinfo");
	if (rdma_create_ep(&listen, res, NULL, &qp_attr))
		die("rdma_create_ep");
	if (rdma_listen(listen, 1))
		die("rdma_listen");
	if (rdma_get_request(listen, &id))
		die("rdma_get_request");
	*mr = rdma_reg_msgs(id, msg, sizeof(*msg));
	if (!*mr)
		die("register");
	if (rdma_post_recv(id, NULL, msg, sizeof(*msg), *mr))
		die("rdma_post_recv");
	if (rdma_accept(id, param))
		die("rdma_accept");
	if (rdma_get_recv_comp(id, wc) <= 0 || wc->status)
		die("hello");
	return id;
}

/* The client leaves on its own: its disconnect (10 s at most) ends the wait. */
static void client_gone(struct rdma_cm_id *id)
{
	int i;

	for (i = 0; i < 100; i++) {
		struct rdma_cm_event *ev;

		if (!rdma_get_cm_event(id->channel, &ev)) {
			int gone = ev->event == RDMA_CM_EVENT_DISCONNECTED;

			rdma_ack_cm_event(ev);
			if (gone)
				break;
		}
		usleep(100000);
	}
	rdma_disconnect(id);
}

/* A server of one connection whose HELLO_ACK carries @status. */
static int ack(const char *port, uint32_t status)
{
	struct kp_hello *msg = calloc(1, sizeof(*msg));
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	struct ibv_wc wc;

	if (!msg)
		die("calloc");
	id = serve_hello(port, NULL, msg, &mr, &wc);
	printf("hello=%u\n", msg->type);
	fflush(stdout);
	msg->type = KP_MSG_ACK;
	msg->status = htobe32(status);
	msg->probe_size = 0;	/* no probe target of ours */
	if (rdma_post_send(id, NULL, msg, wc.byte_len, mr, IBV_SEND_SIGNALED))
		die("rdma_post_send");
	if (rdma_get_send_comp(id, &wc) <= 0 || wc.status)
		die("ack send");
	client_gone(id);
	return 0;
}

#define KP_MODE_BW_READ		5	/* enum kp_mode */

/* A bw,read server whose slot @k holds one wrong byte. */
static int badslots(const char *port, uint32_t k)
{
	struct rdma_conn_param param = { .initiator_depth = 1,
					 .responder_resources = 16,
					 .retry_count = 7,
					 .rnr_retry_count = 7 };
	struct kp_hello *msg = calloc(1, sizeof(*msg));
	uint32_t size, slots = k + 2, j;
	struct ibv_mr *mr, *dmr;
	struct rdma_cm_id *id;
	struct ibv_wc wc;
	uint8_t *data;

	if (!msg)
		die("calloc");
	id = serve_hello(port, &param, msg, &mr, &wc);
	size = be32toh(msg->size);
	if (msg->type != KP_MSG_HELLO || msg->mode != KP_MODE_BW_READ ||
	    !(msg->flags & KP_HELLO_VALIDATE) || size < 16 || size > (1 << 20)) {
		fprintf(stderr, "kprogue: not a validated bw,read hello (type %u mode %u flags 0x%x size %u)\n",
			msg->type, msg->mode, msg->flags, size);
		return 2;
	}
	data = malloc((size_t)slots * size);
	if (!data)
		die("malloc");
	for (j = 0; j < slots; j++)
		kp_stream_fill(data + (size_t)j * size, size, j);
	data[(size_t)k * size + size / 2] ^= 0x10;
	dmr = ibv_reg_mr(id->pd, data, (size_t)slots * size,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!dmr)
		die("register data");
	msg->type = KP_MSG_ACK;
	msg->status = 0;
	msg->flags = KP_HELLO_VALIDATE;
	msg->skip = 0;
	msg->buf = htobe64((uintptr_t)data);
	msg->rkey = htobe32(dmr->rkey);
	msg->size = htobe32(slots * size);
	msg->probe_size = 0;	/* no probe target of ours */
	if (rdma_post_send(id, NULL, msg, wc.byte_len, mr, IBV_SEND_SIGNALED))
		die("rdma_post_send");
	if (rdma_get_send_comp(id, &wc) <= 0 || wc.status)
		die("ack send");
	printf("slots=%u size=%u\n", slots, size);
	fflush(stdout);
	/* the client fails on the bad slot and leaves */
	client_gone(id);
	return 0;
}

static int comp_within(struct ibv_cq *cq, unsigned int ms, struct ibv_wc *wc);

#define KP_IMM_LAST	0x80000000u
#define KP_HELLO_IMM	0x04

/* A wlat,imm server that drops the mark of the client's last write. */
static int wlatimm(const char *port)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE,
				       .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_conn_param param = { .initiator_depth = 1,
					 .responder_resources = 1 };
	struct kp_hello *msg = calloc(1, sizeof(*msg));
	char *data = calloc(1, 1 << 20);
	struct rdma_cm_id *listen, *id;
	struct ibv_mr *mr, *dmr;
	struct ibv_wc wc;
	uint32_t rkey, len, imm, n = 0;
	uint64_t raddr;
	int i;

	if (!msg || !data)
		die("calloc");
	if (rdma_getaddrinfo(NULL, port, &hints, &res))
		die("rdma_getaddrinfo");
	if (rdma_create_ep(&listen, res, NULL, &qp_attr))
		die("rdma_create_ep");
	if (rdma_listen(listen, 1))
		die("rdma_listen");
	if (rdma_get_request(listen, &id))
		die("rdma_get_request");
	mr = rdma_reg_msgs(id, msg, sizeof(*msg));
	dmr = ibv_reg_mr(id->pd, data, 1 << 20, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	if (!mr || !dmr)
		die("register");
	/* the hello's, and one for each write with immediate data */
	for (i = 0; i < 4; i++)
		if (rdma_post_recv(id, NULL, msg, sizeof(*msg), mr))
			die("rdma_post_recv");
	if (rdma_accept(id, &param))
		die("rdma_accept");
	if (comp_within(id->recv_cq, 10000, &wc) || wc.status)
		die("hello");
	raddr = be64toh(msg->buf);
	rkey = be32toh(msg->rkey);
	len = be32toh(msg->size);
	if (len > 1 << 20)
		die("size");
	msg->type = KP_MSG_ACK;
	msg->status = 0;
	msg->flags |= KP_HELLO_IMM;
	msg->buf = htobe64((uintptr_t)data);
	msg->rkey = htobe32(dmr->rkey);
	msg->probe_size = 0;	/* no probe target of ours */
	if (rdma_post_send(id, NULL, msg, wc.byte_len, mr, IBV_SEND_SIGNALED))
		die("rdma_post_send");
	if (comp_within(id->send_cq, 10000, &wc) || wc.status)
		die("ack send");
	/* answer each write until the client goes (a flush) or 10 s pass */
	while (!comp_within(id->recv_cq, 10000, &wc) && !wc.status &&
	       wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		struct ibv_send_wr wr = {
			.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IBV_SEND_SIGNALED,
			.sg_list = &(struct ibv_sge){ (uintptr_t)data, len, dmr->lkey },
			.num_sge = 1,
		}, *bad;

		imm = be32toh(wc.imm_data);
		if (rdma_post_recv(id, NULL, msg, sizeof(*msg), mr))
			die("rdma_post_recv");
		wr.imm_data = htobe32(imm & ~KP_IMM_LAST);
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
		if (ibv_post_send(id->qp, &wr, &bad))
			die("answer");
		if (comp_within(id->send_cq, 10000, &wc) || wc.status)
			break;
		n++;
	}
	printf("answered=%u\n", n);
	rdma_disconnect(id);
	return 0;
}

static uint64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000ULL + t.tv_nsec / 1000000;
}

/*
 * The next completion on @cq within @ms of the monotonic clock, into @wc:
 * 0, or -1 when none came.  A server that gives up disconnects, which a
 * synchronous rdma_cm id never turns into a flush (nobody reads its
 * events), so a blocking wait would never end.
 */
static int comp_within(struct ibv_cq *cq, unsigned int ms, struct ibv_wc *wc)
{
	uint64_t end = mono_ms() + ms;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, wc))) {
		if (mono_ms() >= end)
			return -1;
		usleep(1000);
	}
	return n < 0 ? -1 : 0;
}

/* The next receive's completion within @ms, successful: 0, else -1. */
static int recv_within(struct rdma_cm_id *id, unsigned int ms)
{
	struct ibv_wc wc;

	return comp_within(id->recv_cq, ms, &wc) || wc.status ? -1 : 0;
}

/* Advertise @len bytes of @mr, then take the server's answer. */
static const char *ping_step(struct rdma_cm_id *id, struct kp_info *tx,
			     struct ibv_mr *txmr, struct ibv_mr *rxmr,
			     void *rx, struct ibv_mr *mr, uint32_t len)
{
	struct ibv_wc wc;

	tx->buf = htobe64((uintptr_t)mr->addr);
	tx->rkey = htobe32(mr->rkey);
	tx->size = htobe32(len);
	if (rdma_post_recv(id, NULL, rx, sizeof(struct kp_info), rxmr))
		return "post_recv";
	if (rdma_post_send(id, NULL, tx, sizeof(*tx), txmr, IBV_SEND_SIGNALED))
		return "post_send";
	/*
	 * One transport retry (see ping0), 2.15 s on rxe: a SEND the server
	 * never acked fails within about 4.3 s, 10 s is the bound.
	 */
	if (comp_within(id->send_cq, 10000, &wc))
		return "send_timeout";
	if (wc.status == IBV_WC_RETRY_EXC_ERR)
		return "no_ack";
	if (wc.status)
		return "send";
	if (recv_within(id, 3000))
		return "no_answer";
	return NULL;
}

/* rping's round 0 of @size bytes, then a round 1 of 0 bytes. */
static int ping0(struct rdma_cm_id *id, uint32_t size)
{
	struct kp_info *tx = calloc(1, sizeof(*tx)), *rx = calloc(1, sizeof(*rx));
	uint8_t *start = calloc(1, size), *back = calloc(1, size);
	struct ibv_mr *txmr, *rxmr, *smr, *bmr;
	const char *r[2] = { "ok", "ok" }, *e;
	uint32_t round;

	if (!tx || !rx || !start || !back)
		die("calloc");
	txmr = rdma_reg_msgs(id, tx, sizeof(*tx));
	rxmr = rdma_reg_msgs(id, rx, sizeof(*rx));
	smr = ibv_reg_mr(id->pd, start, size, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_READ);
	bmr = ibv_reg_mr(id->pd, back, size, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE);
	if (!txmr || !rxmr || !smr || !bmr)
		die("register");
	/*
	 * One transport retry, not librdmacm's default of 7, which rxe takes
	 * as "retry for ever": a server that moves its QP to the error state
	 * on our message can do so before rxe has sent the ACK, and rxe then
	 * drops it; our SEND must fail, not retry without end.  RNR retries
	 * for ever, as rping's.
	 */
	if (rdma_connect(id, &(struct rdma_conn_param){ .initiator_depth = 1,
			 .responder_resources = 1, .retry_count = 1,
			 .rnr_retry_count = 7 }))
		die("rdma_connect");
	for (round = 0; round < 2; round++) {
		uint32_t len = round ? 0 : size;

		kp_ping_fill(start, size, round);
		e = ping_step(id, tx, txmr, rxmr, rx, smr, len);
		if (!e)
			e = ping_step(id, tx, txmr, rxmr, rx, bmr, len);
		if (e) {
			r[round] = e;
			break;
		}
	}
	printf("round0=%s round1=%s\n", r[0], r[1]);
	rdma_disconnect(id);
	return 0;
}

/* A bw client past the server's ACK: slow by @stall_ms, or gone. */
static int peer_wait(struct rdma_cm_id *id, struct kp_hello *tx,
		     struct ibv_mr *txmr, struct kp_hello *rx,
		     struct ibv_mr *rxmr, unsigned long stall_ms, int vanish)
{
	struct ibv_wc wc;

	hello_exchange(id, tx, txmr, &wc);
	if (rx->type != KP_MSG_ACK || rx->status) {
		fprintf(stderr, "kprogue: bad ack (type %u, status %u)\n",
			rx->type, be32toh(rx->status));
		return 2;
	}
	if (vanish) {
		if (ibv_destroy_qp(id->qp))
			die("ibv_destroy_qp");
		id->qp = NULL;
		printf("vanished\n");
		fflush(stdout);
		sleep(600);
		return 0;
	}
	usleep(stall_ms * 1000);
	if (rdma_post_recv(id, NULL, rx, sizeof(*rx), rxmr))
		die("rdma_post_recv");
	tx->type = KP_MSG_FIN;
	if (rdma_post_send(id, NULL, tx, KP_HELLO_V4_LEN, txmr, IBV_SEND_SIGNALED))
		die("fin send");
	if (rdma_get_send_comp(id, &wc) <= 0)
		die("fin send completion");
	if (wc.status) {
		/* the status, not a stale errno: a flush says the peer left first */
		fprintf(stderr, "kprogue: fin send completion: %s (vendor 0x%x)\n",
			ibv_wc_status_str(wc.status), wc.vendor_err);
		return 2;
	}
	if (recv_within(id, 10000) || rx->type != KP_MSG_FIN) {
		printf("fin=none\n");
		return 1;
	}
	printf("fin=ok\n");
	rdma_disconnect(id);
	return 0;
}

static const char *write_one(struct rdma_cm_id *id, struct ibv_mr *mr,
			     uint64_t raddr, uint32_t rkey)
{
	struct ibv_wc wc;

	if (rdma_post_write(id, NULL, mr->addr, 1, mr, IBV_SEND_SIGNALED,
			    raddr, rkey))
		die("rdma_post_write");
	if (rdma_get_send_comp(id, &wc) <= 0)
		die("rdma_get_send_comp");
	return ibv_wc_status_str(wc.status);
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_conn_param param = { .initiator_depth = 1,
					 .responder_resources = 1,
					 .retry_count = 1 };
	struct kp_hello *tx, *rx;
	struct ibv_mr *txmr, *rxmr, *dmr;
	struct rdma_cm_id *id;
	struct ibv_wc wc;
	uint32_t size, rkey;
	uint64_t raddr;
	char *data;
	const char *last, *past;

	/* each result line whole, even if a later wait is cut short */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "ack"))
		return ack(argv[2], strtoul(argv[3], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "wlatimm"))
		return wlatimm(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "badslots"))
		return badslots(argv[2], strtoul(argv[3], NULL, 0));
	if (!(argc == 5 && !strcmp(argv[1], "overrun")) &&
	    !(argc == 5 && !strcmp(argv[1], "ping0")) &&
	    !(argc == 5 && !strcmp(argv[1], "vanish")) &&
	    !(argc == 6 && !strcmp(argv[1], "stall")) &&
	    !(argc == 6 && !strcmp(argv[1], "badstream")) &&
	    !(argc == 6 && !strcmp(argv[1], "badwrites")) &&
	    !(argc == 6 && !strcmp(argv[1], "misslot")) &&
	    !(argc == 7 && !strcmp(argv[1], "skips"))) {
		fprintf(stderr, "usage: kprogue overrun ADDR PORT SIZE\n"
			"       kprogue skips ADDR PORT MODE SKIP SIZE\n"
			"       kprogue badstream ADDR PORT K SIZE\n"
			"       kprogue badwrites ADDR PORT K SIZE\n"
			"       kprogue misslot ADDR PORT K SIZE\n"
			"       kprogue stall ADDR PORT MS SIZE\n"
			"       kprogue vanish ADDR PORT SIZE\n"
			"       kprogue ack PORT STATUS\n"
			"       kprogue badslots PORT K\n"
			"       kprogue wlatimm PORT\n"
			"       kprogue ping0 ADDR PORT SIZE\n");
		return 2;
	}
	size = strtoul(argv[argc - 1], NULL, 0);
	if (rdma_getaddrinfo(argv[2], argv[3], &hints, &res))
		die("rdma_getaddrinfo");
	if (rdma_create_ep(&id, res, NULL, &qp_attr))
		die("rdma_create_ep");
	if (!strcmp(argv[1], "ping0"))
		return ping0(id, size);
	tx = calloc(1, sizeof(*tx));
	rx = calloc(1, sizeof(*rx));
	data = calloc(1, size + 1);
	if (!tx || !rx || !data)
		die("calloc");
	txmr = rdma_reg_msgs(id, tx, sizeof(*tx));
	rxmr = rdma_reg_msgs(id, rx, sizeof(*rx));
	dmr = ibv_reg_mr(id->pd, data, size + 1, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!txmr || !rxmr || !dmr)
		die("register");
	if (rdma_post_recv(id, NULL, rx, sizeof(*rx), rxmr))
		die("rdma_post_recv");
	if (rdma_connect(id, &param))
		die("rdma_connect");

	tx->buf = htobe64((uintptr_t)data);
	tx->rkey = htobe32(dmr->rkey);
	tx->size = htobe32(size);
	tx->magic = htobe32(KP_HELLO_MAGIC);
	tx->version = KP_HELLO_VER;
	tx->type = KP_MSG_HELLO;
	tx->mode = KP_MODE_BW;
	tx->count = htobe32(1);
	if (argc == 7)
		return skips(id, tx, txmr, rx, dmr, strtoul(argv[4], NULL, 0),
			     strtoul(argv[5], NULL, 0), size);
	if (!strcmp(argv[1], "badstream"))
		return badstream(id, tx, txmr, rx, dmr,
				 strtoul(argv[4], NULL, 0), size);
	if (!strcmp(argv[1], "badwrites") || !strcmp(argv[1], "misslot"))
		return badwrites(id, tx, txmr, rx, dmr,
				 strtoul(argv[4], NULL, 0), size,
				 argv[1][0] == 'm');
	if (!strcmp(argv[1], "stall") || !strcmp(argv[1], "vanish"))
		return peer_wait(id, tx, txmr, rx, rxmr,
				 argc == 6 ? strtoul(argv[4], NULL, 0) : 0,
				 argv[1][0] == 'v');
	hello_exchange(id, tx, txmr, &wc);
	if (wc.byte_len != KP_HELLO_V4_LEN || rx->version != KP_HELLO_VER ||
	    rx->type != KP_MSG_ACK || rx->status) {
		fprintf(stderr, "kprogue: bad ack (%u bytes, type %u, status %u)\n",
			wc.byte_len, rx->type, be32toh(rx->status));
		return 2;
	}
	raddr = be64toh(rx->buf);
	rkey = be32toh(rx->rkey);
	last = write_one(id, dmr, raddr + size - 1, rkey);
	past = write_one(id, dmr, raddr + size, rkey);
	printf("mr_len=%u last=%s past=%s\n", be32toh(rx->size), last, past);
	rdma_disconnect(id);
	return 0;
}
