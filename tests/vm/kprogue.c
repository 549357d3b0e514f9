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
 * The hello layout is struct kp_hello of krping_npu/krping_npu.h.
 */
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <endian.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

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
} __attribute__((packed));

#define KP_HELLO_MAGIC	0x4b504e55
#define KP_HELLO_VER	3
#define KP_MSG_HELLO	1
#define KP_MSG_ACK	2
#define KP_MODE_BW	3	/* enum kp_mode in proc/kp_opts.h */

static void die(const char *what)
{
	perror(what);
	exit(2);
}

/* The hello of the skips test: mode, skips, and the server's answer. */
static int skips(struct rdma_cm_id *id, struct kp_hello *tx, struct ibv_mr *txmr,
		 struct kp_hello *rx, struct ibv_mr *dmr, uint32_t mode,
		 uint32_t skip, uint32_t size)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND }, *bad;
	struct ibv_wc wc;
	const char *data = "-";
	uint32_t i, n;

	tx->mode = mode;
	tx->skip = htobe32(skip);
	if (rdma_post_send(id, NULL, tx, sizeof(*tx), txmr, IBV_SEND_SIGNALED))
		die("rdma_post_send");
	if (rdma_get_send_comp(id, &wc) <= 0 || wc.status)
		die("hello send");
	if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status)
		die("hello ack");
	n = be32toh(rx->skip);
	if (!rx->status) {
		for (i = 0; i < n && i < 64; i++) {
			wr.send_flags = i + 1 == n ? IBV_SEND_SIGNALED : 0;
			if (ibv_post_send(id->qp, &wr, &bad))
				die("skip");
		}
		if (n && (rdma_get_send_comp(id, &wc) <= 0 || wc.status))
			die("skip completion");
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
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 80, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_all = 0,
		.qp_type = IBV_QPT_RC,
	};
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

	if (!(argc == 5 && !strcmp(argv[1], "overrun")) &&
	    !(argc == 7 && !strcmp(argv[1], "skips"))) {
		fprintf(stderr, "usage: kprogue overrun ADDR PORT SIZE\n"
			"       kprogue skips ADDR PORT MODE SKIP SIZE\n");
		return 2;
	}
	size = strtoul(argv[argc - 1], NULL, 0);
	if (rdma_getaddrinfo(argv[2], argv[3], &hints, &res))
		die("rdma_getaddrinfo");
	if (rdma_create_ep(&id, res, NULL, &attr))
		die("rdma_create_ep");
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
	if (rdma_post_send(id, NULL, tx, sizeof(*tx), txmr, IBV_SEND_SIGNALED))
		die("rdma_post_send");
	if (rdma_get_send_comp(id, &wc) <= 0 || wc.status)
		die("hello send");
	if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status)
		die("hello ack");
	if (wc.byte_len != sizeof(*rx) || rx->type != KP_MSG_ACK || rx->status) {
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
