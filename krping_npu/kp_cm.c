// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_cm.c - rdma_cm connection management: resolve and connect (client),
 * bind, listen and accept (server) a test's connection, or with qps=N
 * its N connections, and the test dispatch.
 */
#include <linux/inet.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include <linux/in6.h>
#include <linux/netdevice.h>
#include <net/net_namespace.h>

#include "krping_npu.h"
#include "kp_trace.h"

#define KP_RESOLVE_MS	2000

/*
 * A connect request on the listener (whose context is connection 0):
 * which connection of the test it is, from its private data (none:
 * connection 0 of 1, as rping connects).  One client per server; a
 * connection is claimed once, by a request of that client's test (its
 * cookie), connections 1.. only once the writer has made them
 * (kp_conns_add()).  An error has the CM reject and destroy @id.  A
 * wildcard address listens on every device, each with its own lock:
 * claim atomically.  Destroying the listener waits for this.
 */
static struct kp_conn *kp_cm_claim(struct kp_test *t, struct rdma_cm_id *id,
				   struct rdma_cm_event *ev)
{
	const struct kp_conn_data *d = ev->param.conn.private_data;
	u32 lane = 0, qps = 1, cookie = 0, ready;
	struct kp_conn *c;

	if (d && ev->param.conn.private_data_len >= sizeof(*d) &&
	    be32_to_cpu(d->magic) == KP_HELLO_MAGIC) {
		/* ours, but of another make: refused, not misread */
		if (d->version != KP_CONN_VERSION)
			return ERR_PTR(-EPROTO);
		lane = d->lane;
		qps = d->qps;
		cookie = be32_to_cpu(d->cookie);
	}
	if (!qps || qps > KP_MAX_QPS || lane >= qps)
		return ERR_PTR(-EINVAL);
	/* pairs with kp_conns_add()'s release */
	ready = smp_load_acquire(&t->nconns);
	if (lane >= ready)
		return ERR_PTR(-EBUSY);
	c = t->conns[lane];
	if (lane && (qps != t->peer_qps || cookie != t->cookie))
		return ERR_PTR(-EBUSY);
	if (cmpxchg(&c->child_id, NULL, id))
		return ERR_PTR(-EBUSY);
	if (!lane) {
		t->peer_qps = qps;
		t->cookie = cookie;
	}
	id->context = c;
	atomic_inc(&kp_live.cm_ids);
	return c;
}

/*
 * ud, the client: the server's address, QP and qkey, from its SIDR
 * reply.  The CM frees the event's address once this returns, so it is
 * copied; the writer makes the address handle from it once the wait is
 * over (a late reply must not touch verbs being freed), and the copy
 * goes with the cm_id (kp_close_conns()).
 */
static void kp_ud_established(struct kp_conn *c, struct rdma_ud_param *p)
{
	rdma_copy_ah_attr(&c->ud_attr, &p->ah_attr);
	c->ud_attr_held = true;
	c->remote_qpn = p->qp_num;
	c->remote_qkey = p->qkey;
}

/*
 * The CM's events for this test's ids: each carries its connection as
 * context (the listener connection 0's).  What the waiter reads after the
 * state (child_id, the peer's depths, the error) is stored before the
 * state is published with release semantics.
 */
static int kp_cma_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kp_conn *c = id->context;
	enum kp_cm_state state;
	int err = 0;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* the connection the request is for: its events are its own */
		c = kp_cm_claim(c->t, id, ev);
		if (IS_ERR(c))
			return PTR_ERR(c);
	}
	trace_kp_cm_event(c->t->rec->id, c->idx, ev->event, ev->status);
	state = READ_ONCE(c->cm_state);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		state = KP_CM_ADDR_RESOLVED;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		state = KP_CM_ROUTE_RESOLVED;
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* already from our side: ib_cm and iw_cm swap the peer's */
		if (!c->ud) {
			c->req_responder_resources =
				ev->param.conn.responder_resources;
			c->req_initiator_depth = ev->param.conn.initiator_depth;
		}
		state = KP_CM_CONNECT_REQUEST;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* ud: the server's answer; its attributes go with the event */
		if (c->ud)
			kp_ud_established(c, &ev->param.ud);
		/*
		 * sticky: a quick peer may disconnect before we look; ud's
		 * copies are visible first (kp_cm_reached())
		 */
		smp_store_release(&c->established, true);
		state = KP_CM_CONNECTED;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		state = KP_CM_DISCONNECTED;
		break;
	case RDMA_CM_EVENT_REJECTED:
		err = -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		/* ud: a SIDR reply that says reject is the server's REJ */
		if (c->ud && ev->status == IB_SIDR_REJECT) {
			err = -ECONNREFUSED;
			break;
		}
		fallthrough;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		err = -EHOSTUNREACH;
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		err = -ECONNRESET;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		err = -ENODEV;
		break;
	default:
		return 0;
	}
	if (err) {
		pr_err(KP_NAME " %u: %s (status %d)\n", c->t->rec->id,
		       rdma_event_msg(ev->event), ev->status);
		WRITE_ONCE(c->cm_error, err);
		state = KP_CM_ERROR;
	}
	/* pairs with kp_cm_reached(): child_id and the rest are visible first */
	smp_store_release(&c->cm_state, state);
	wake_up(&c->t->wq);
	/*
	 * qps=N: connection 1.. lost ends the test on all (kp_cm_check());
	 * connection 0's end is each one's own end of the test.
	 */
	if (state >= KP_CM_DISCONNECTED && c->idx) {
		WRITE_ONCE(c->t->conn_down, true);
		wake_up_all(&c->t->wq);
	}
	return 0;
}

static bool kp_cm_reached(struct kp_conn *c, enum kp_cm_state want)
{
	/* pairs with kp_cma_handler()'s release of the state */
	enum kp_cm_state state = smp_load_acquire(&c->cm_state);

	/* pairs with the handler's release of established */
	return state == want ||
	       (want == KP_CM_CONNECTED && smp_load_acquire(&c->established));
}

/* Wait until the CM reaches @want; fail on an error state or timeout. */
static int kp_cm_wait(struct kp_conn *c, enum kp_cm_state want, const char *what)
{
	long left;

	left = wait_event_interruptible_timeout(c->t->wq,
			kp_cm_reached(c, want) ||
			READ_ONCE(c->cm_state) >= KP_CM_DISCONNECTED,
			msecs_to_jiffies(c->t->opts.timeout_ms));
	if (kp_cm_reached(c, want))
		return 0;
	if (left < 0)
		return -EINTR;
	if (!left) {
		kp_err(c->t, "timed out after %u ms waiting for %s",
		       c->t->opts.timeout_ms, what);
		return -ETIMEDOUT;
	}
	kp_err(c->t, "connection failed waiting for %s", what);
	return READ_ONCE(c->cm_error) ?: -ECONNRESET;
}

static int kp_fill_sockaddr(struct kp_conn *c, struct sockaddr_storage *ss)
{
	const struct kp_addr *a = &c->t->opts.addr;

	memset(ss, 0, sizeof(*ss));
	if (a->family == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, a->addr, 4);
		sin->sin_port = htons((u16)c->t->opts.port);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, a->addr, 16);
		sin6->sin6_port = htons((u16)c->t->opts.port);
		sin6->sin6_scope_id = a->scope_id;
		if (a->ifname[0]) {
			struct net_device *nd;

			rcu_read_lock();
			nd = dev_get_by_name_rcu(&init_net, a->ifname);
			if (nd)
				sin6->sin6_scope_id = nd->ifindex;
			rcu_read_unlock();
			if (!nd) {
				kp_err(c->t, "addr6: no interface '%s'", a->ifname);
				return -ENODEV;
			}
		}
	}
	return 0;
}

static void kp_conn_param(struct kp_conn *c, struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = c->rd_atom;
	p->initiator_depth = c->rd_atom;
	/*
	 * Transport retries: 6, not 7.  rxe reads 7 as "retry for ever"
	 * (IBTA's infinite value for RNR retries, not for these), so a QP
	 * whose peer's host died would never fail and a probe would never
	 * tell (both QPs take the client's value from its REQ).  RNR
	 * retries stay infinite: a receiver only late to post is alive.
	 */
	p->retry_count = kp_opt_given(&c->t->opts, KP_OPT_RETRY_COUNT) ?
			 c->t->opts.retry_count : 6;
	p->rnr_retry_count = 7;
}

/*
 * How long a sender waits once this QP, out of receives, refused its SEND:
 * the RNR NAK's timer (IBTA table 45), here 0.64 ms, as perftest sets it.
 * The CM leaves 0, which the wire reads as 655.36 ms: one receive posted
 * late then stalls a SEND stream for most of a second (bw,send at 4 KiB
 * on rxe of 6.12 fell from 35 to 9 MiB/s, one RNR NAK a run).
 */
#define KP_MIN_RNR_TIMER	IB_RNR_TIMER_000_64

/*
 * Before rdma_connect() or rdma_accept(): the CM applies the RNR timer at
 * RTR, and qp_timeout= (perftest -u), this side's ACK timeout, at RTS.
 */
static int kp_cm_timers_set(struct kp_conn *c, struct rdma_cm_id *id)
{
	int ret = 0;

	if (kp_opt_given(&c->t->opts, KP_OPT_QP_TIMEOUT)) {
		ret = rdma_set_ack_timeout(id, c->t->opts.qp_timeout);
		if (ret) {
			kp_err(c->t, "rdma_set_ack_timeout(%u): %d",
			       c->t->opts.qp_timeout, ret);
			return ret;
		}
	}
#ifdef KP_HAVE_RDMA_SET_MIN_RNR_TIMER
	ret = rdma_set_min_rnr_timer(id, KP_MIN_RNR_TIMER);
	if (ret)
		kp_err(c->t, "rdma_set_min_rnr_timer: %d", ret);
#endif
	return ret;
}

/*
 * Connected.  A CM without rdma_set_min_rnr_timer() (before 5.13) left
 * the QP's RNR timer at 0: set it now, RTS to RTS; a device that refuses
 * costs speed, not the test.  Then say what the QP holds, and keep no
 * more READs in flight than it was given (the peer's limit may be lower).
 */
static void kp_conn_ready(struct kp_conn *c)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr = {};
	int ret;

#ifndef KP_HAVE_RDMA_SET_MIN_RNR_TIMER
	attr.min_rnr_timer = KP_MIN_RNR_TIMER;
	ret = ib_modify_qp(c->qp, &attr, IB_QP_MIN_RNR_TIMER);
	if (ret)
		kp_info(c->t, "connection %u: RNR NAK timer left as the CM set it: ib_modify_qp: %d",
			c->idx, ret);
#endif
	/* what a driver's query leaves unset reads 0, not our request */
	memset(&attr, 0, sizeof(attr));
	ret = ib_query_qp(c->qp, &attr, IB_QP_MIN_RNR_TIMER |
			  IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MAX_DEST_RD_ATOMIC |
			  IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY,
			  &init);
	if (ret) {
		kp_info(c->t, "connection %u: ib_query_qp: %d", c->idx, ret);
		return;
	}
	kp_info(c->t, "connection %u: RNR NAK timer %u, RDMA READs in flight %u out, %u in",
		c->idx, attr.min_rnr_timer, attr.max_rd_atomic,
		attr.max_dest_rd_atomic);
	/* the transport's bounds, as qp_timeout= and retry_count= set them */
	kp_info(c->t, "connection %u: ACK timeout %u, transport retries %u, RNR retries %u",
		c->idx, attr.timeout, attr.retry_cnt, attr.rnr_retry);
	if (attr.max_rd_atomic && attr.max_rd_atomic < c->rd_atom)
		c->rd_atom = attr.max_rd_atomic;
	/* the peer takes our READs: iWARP probes can be (kp_slice_over()) */
	c->probe_read = attr.max_rd_atomic > 0;
}

static int kp_run_test(struct kp_test *t)
{
	/* the ping's server learns the mode from the client's first message */
	if (t->opts.role == KP_ROLE_SERVER)
		return kp_ping_server(t->conns[0]);
	if (t->opts.mode == KP_MODE_PING)
		return kp_ping_client(t->conns[0]);
	return kp_test_client(t);
}

/*
 * Disconnect and wait (bounded) for the CM to confirm it.  Our last message
 * may still be on its way: wait for its completion first, or for the peer
 * to leave, which it does only once it has that message.
 */
static void kp_disconnect(struct kp_conn *c, struct rdma_cm_id *id)
{
	/* ud: no connection to end, and the peer hears of none */
	if (c->ud) {
		kp_settle(c);
		return;
	}
	if (!READ_ONCE(c->established))
		return;
	kp_settle(c);
	rdma_disconnect(id);
}

/* ... and the CM's word on it: 1 s from @start for every connection. */
static void kp_disconnect_wait(struct kp_conn *c, unsigned long start)
{
	long left = kp_time_left(start + msecs_to_jiffies(1000), jiffies);

	if (c->ud || !READ_ONCE(c->established) || !left)
		return;
	wait_event_timeout(c->t->wq,
			   READ_ONCE(c->cm_state) >= KP_CM_DISCONNECTED, left);
}

/* The test's address in @ss and @c's own cm_id (a client's or the listener). */
static int kp_cm_create(struct kp_conn *c, struct sockaddr_storage *ss)
{
	int ret;

	ret = kp_fill_sockaddr(c, ss);
	if (ret)
		return ret;
	c->cm_id = rdma_create_id(&init_net, kp_cma_handler, c,
				  c->ud ? RDMA_PS_UDP : RDMA_PS_TCP,
				  c->ud ? IB_QPT_UD : IB_QPT_RC);
	if (IS_ERR(c->cm_id)) {
		ret = PTR_ERR(c->cm_id);
		c->cm_id = NULL;
		kp_err(c->t, "rdma_create_id: %d", ret);
		return ret;
	}
	atomic_inc(&kp_live.cm_ids);
	return 0;
}

/* Destroy @*id (the client's, the listener or the child); waits for its handler. */
static void kp_cm_destroy(struct rdma_cm_id **id)
{
	if (!*id)
		return;
	rdma_destroy_id(*id);
	atomic_dec(&kp_live.cm_ids);
	*id = NULL;
}

/*
 * Connections nconns.. of @t up to @n, published for the CM handler
 * (kp_cm_claim()) with the count.  Connection 0 counts into the record;
 * each other its own messages, until kp_conns_free() adds them to the
 * record: their threads may run at once.
 */
static int kp_conns_add(struct kp_test *t, u32 n)
{
	u32 i;

	for (i = t->nconns; i < n; i++) {
		struct kp_conn *c = kzalloc(sizeof(*c), GFP_KERNEL);

		if (!c) {
			while (i-- > t->nconns)
				kfree(t->conns[i]);
			return -ENOMEM;
		}
		c->t = t;
		c->idx = i;
		c->cnt = i ? &c->own_cnt : &t->rec->cnt;
		c->wait_ms = t->opts.timeout_ms;
		c->ud = t->opts.ud;
		mutex_init(&c->npu_lock);
		t->conns[i] = c;
	}
	/* pairs with kp_cm_claim()'s acquire */
	smp_store_release(&t->nconns, n);
	return 0;
}

static void kp_counters_add(struct kp_counters *to,
			    const struct kp_counters *from)
{
	WRITE_ONCE(to->send_msgs, to->send_msgs + from->send_msgs);
	WRITE_ONCE(to->send_bytes, to->send_bytes + from->send_bytes);
	WRITE_ONCE(to->recv_msgs, to->recv_msgs + from->recv_msgs);
	WRITE_ONCE(to->recv_bytes, to->recv_bytes + from->recv_bytes);
	WRITE_ONCE(to->read_msgs, to->read_msgs + from->read_msgs);
	WRITE_ONCE(to->read_bytes, to->read_bytes + from->read_bytes);
	WRITE_ONCE(to->write_msgs, to->write_msgs + from->write_msgs);
	WRITE_ONCE(to->write_bytes, to->write_bytes + from->write_bytes);
	WRITE_ONCE(to->atomic_msgs, to->atomic_msgs + from->atomic_msgs);
	WRITE_ONCE(to->atomic_bytes, to->atomic_bytes + from->atomic_bytes);
}

/*
 * The connections are gone (ids, verbs): their counts go to the record,
 * and NPU memory freed under any of them to the test's verdict.
 */
static void kp_conns_free(struct kp_test *t)
{
	u32 i;

	for (i = 0; i < t->nconns; i++) {
		struct kp_conn *c = t->conns[i];

		if (i)
			kp_counters_add(&t->rec->cnt, &c->own_cnt);
		kp_npu_conn_end(c);
		kfree(c);
		t->conns[i] = NULL;
	}
	t->nconns = 0;
}

/*
 * The end of a test's connections: the last first, each disconnected,
 * then each waited for, so that N connections take no longer than one;
 * then their verbs (the QP before the id it belongs to) and ids.
 */
static void kp_close_conns(struct kp_test *t)
{
	unsigned long start;
	u32 i;

	WRITE_ONCE(t->live, false);
	/*
	 * From here the CQs are reaped only to drain them, each in turn: a
	 * free callback of NPU memory reaps its own fence (kp_npu.c) where
	 * nothing else would: cq=direct.
	 */
	for (i = 0; i < t->nconns; i++) {
		struct kp_conn *c = t->conns[i];

		mutex_lock(&c->npu_lock);
		c->npu_teardown = true;
		mutex_unlock(&c->npu_lock);
	}
	for (i = t->nconns; i-- > 0;) {
		struct kp_conn *c = t->conns[i];
		struct rdma_cm_id *id = c->child_id ?: c->cm_id;

		if (id)
			kp_disconnect(c, id);
	}
	start = jiffies;
	for (i = t->nconns; i-- > 0;)
		kp_disconnect_wait(t->conns[i], start);
	for (i = t->nconns; i-- > 0;) {
		struct kp_conn *c = t->conns[i];

		kp_free_verbs(c);
		kp_cm_destroy(c->child_id ? &c->child_id : &c->cm_id);
		/* its handler has returned for good: the copy is ours */
		if (c->ud_attr_held)
			rdma_destroy_ah_attr(&c->ud_attr);
	}
	kp_conns_free(t);
}

/* ud: the client's address handle to the server, once connected */
static int kp_ud_ah(struct kp_conn *c)
{
	struct ib_ah *ah;

	ah = rdma_create_ah(c->pd, &c->ud_attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah)) {
		kp_err(c->t, "ud: rdma_create_ah: %ld", PTR_ERR(ah));
		return PTR_ERR(ah);
	}
	/* remote_qpn and qkey came with the event: a fence reads them after */
	smp_store_release(&c->ah, ah);
	kp_info(c->t, "connection %u: ud: the server's QP %u, qkey 0x%x, messages up to the path MTU, %u bytes",
		c->idx, c->remote_qpn, c->remote_qkey, c->ud_mtu);
	return 0;
}

/* Resolve, set up the verbs and connect one connection of a client's test. */
static int kp_client_connect(struct kp_conn *c)
{
	struct kp_conn_data data = {
		.magic = cpu_to_be32(KP_HELLO_MAGIC),
		.version = KP_CONN_VERSION,
		.lane = (u8)c->idx,
		.qps = (u8)c->t->nconns,
		.cookie = cpu_to_be32(c->t->cookie),
	};
	struct sockaddr_storage dst;
	struct rdma_conn_param param;
	int ret;

	ret = kp_cm_create(c, &dst);
	if (ret)
		return ret;
	if (kp_opt_given(&c->t->opts, KP_OPT_TOS))
		rdma_set_service_type(c->cm_id, (int)c->t->opts.tos);

	ret = rdma_resolve_addr(c->cm_id, NULL, (struct sockaddr *)&dst,
				KP_RESOLVE_MS);
	if (ret) {
		kp_err(c->t, "rdma_resolve_addr: %d", ret);
		return ret;
	}
	ret = kp_cm_wait(c, KP_CM_ADDR_RESOLVED, "address resolution");
	if (ret)
		return ret;
	ret = rdma_resolve_route(c->cm_id, KP_RESOLVE_MS);
	if (ret) {
		kp_err(c->t, "rdma_resolve_route: %d", ret);
		return ret;
	}
	ret = kp_cm_wait(c, KP_CM_ROUTE_RESOLVED, "route resolution");
	if (ret)
		return ret;

	ret = kp_setup_verbs(c, c->cm_id);
	if (ret)
		return ret;
	/* ud: no ACKs, no RNR: the timers are the RC transport's */
	ret = c->ud ? 0 : kp_cm_timers_set(c, c->cm_id);
	if (ret)
		return ret;
	kp_conn_param(c, &param);
	param.private_data = &data;
	param.private_data_len = sizeof(data);
	ret = rdma_connect(c->cm_id, &param);
	if (ret) {
		kp_err(c->t, "rdma_connect: %d", ret);
		return ret;
	}
	ret = kp_cm_wait(c, KP_CM_CONNECTED, "the server to accept");
	if (!ret && c->ud)
		ret = kp_ud_ah(c);
	else if (!ret)
		kp_conn_ready(c);
	return ret;
}

/*
 * The client: its connections (qps=N of them, one after the other: the
 * server takes connection i once i - 1 is in), the test, then each torn
 * down, the last first.
 */
int kp_run_client(struct kp_test *t)
{
	u32 i;
	int ret;

	ret = kp_lanes_cpus(t);
	if (!ret && t->opts.qps > 1)
		t->cookie = get_random_u32();
	if (!ret)
		ret = kp_conns_add(t, t->opts.qps ?: 1);
	for (i = 0; !ret && i < t->nconns; i++)
		ret = kp_client_connect(t->conns[i]);
	if (!ret) {
		WRITE_ONCE(t->live, true);
		ret = kp_run_test(t);
	}
	kp_close_conns(t);
	return ret;
}

/* Set up the verbs of a claimed connection and accept it. */
static int kp_server_accept(struct kp_conn *c)
{
	struct rdma_conn_param param;
	int ret;

	ret = kp_setup_verbs(c, c->child_id);
	if (!ret && !c->ud)
		ret = kp_cm_timers_set(c, c->child_id);
	if (ret)
		return ret;
	kp_conn_param(c, &param);
	param.responder_resources = min(c->rd_atom, c->req_responder_resources);
	param.initiator_depth = min(c->rd_atom, c->req_initiator_depth);
	/* rdma_accept() belongs under the CM handler's lock (lockdep checks) */
	rdma_lock_handler(c->child_id);
	ret = rdma_accept(c->child_id, &param);
	rdma_unlock_handler(c->child_id);
	if (ret) {
		kp_err(c->t, "rdma_accept: %d", ret);
		return ret;
	}
	c->accepted = true;
	/* ud: the SIDR reply is the end of it; the client's hello is next */
	if (c->ud)
		return 0;
	ret = kp_cm_wait(c, KP_CM_CONNECTED, "the connection");
	if (!ret)
		kp_conn_ready(c);
	return ret;
}

/*
 * The server: one client, whose first connect request says how many
 * connections its test has (kp_cm_claim()); each is accepted in turn.
 * The listener is connection 0's cm_id (its context) until then.
 */
int kp_run_server(struct kp_test *t)
{
	struct sockaddr_storage src;
	struct kp_conn *c0;
	u32 i;
	int ret;

	ret = kp_conns_add(t, 1);
	if (ret)
		return ret;
	c0 = t->conns[0];
	ret = kp_cm_create(c0, &src);
	if (ret)
		goto out;
	ret = rdma_bind_addr(c0->cm_id, (struct sockaddr *)&src);
	if (ret) {
		kp_err(t, "rdma_bind_addr: %d", ret);
		goto out;
	}
	ret = rdma_listen(c0->cm_id, KP_MAX_QPS);
	if (ret) {
		kp_err(t, "rdma_listen: %d", ret);
		goto out;
	}
	kp_rec_listening(t, true);
	ret = kp_cm_wait(c0, KP_CM_CONNECT_REQUEST, "a client");
	kp_rec_listening(t, false);
	/* refused before any connection is set up: a UD SRQ serves one */
	if (!ret && t->opts.srq && t->opts.ud && t->peer_qps > 1) {
		kp_err(t, "srq over ud: this server's SRQ serves one connection, and the client asks for %u (over RC one SRQ serves them all)",
		       t->peer_qps);
		ret = -EOPNOTSUPP;
	}
	if (!ret && t->peer_qps > 1)
		ret = kp_conns_add(t, t->peer_qps);
	/* a test of one connection needs the listener no more */
	if (!ret && t->nconns == 1)
		kp_cm_destroy(&c0->cm_id);
	if (!ret)
		ret = kp_server_accept(c0);
	for (i = 1; !ret && i < t->nconns; i++) {
		struct kp_conn *c = t->conns[i];

		ret = kp_cm_wait(c, KP_CM_CONNECT_REQUEST,
				 "the client's next connection") ?:
		      kp_server_accept(c);
	}
out:
	/*
	 * The listener goes first, whatever happened.  Its destruction
	 * waits for a connect request being handled, so from here on each
	 * child_id is final: one claimed just as a wait ended (timeout,
	 * signal) is ours to refuse and destroy.
	 */
	kp_cm_destroy(&c0->cm_id);
	if (!ret) {
		WRITE_ONCE(t->live, true);
		ret = kp_run_test(t);
	}
	/*
	 * A connection claimed but not accepted is refused; one accepted is
	 * not (its REP is out: a REJ now leaves the CM waiting on the peer).
	 */
	for (i = 0; i < t->nconns; i++) {
		struct kp_conn *c = t->conns[i];

		if (c->child_id && !c->accepted)
			rdma_reject(c->child_id, NULL, 0,
				    IB_CM_REJ_CONSUMER_DEFINED);
	}
	kp_close_conns(t);
	return ret;
}
