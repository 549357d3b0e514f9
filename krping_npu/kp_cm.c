// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_cm.c - rdma_cm connection management: resolve and connect (client),
 * bind, listen and accept (server) a test's connection, or with qps=N
 * its N connections (lanes), and the test dispatch.
 */
#include <linux/inet.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>
#include <linux/in6.h>
#include <linux/netdevice.h>
#include <net/net_namespace.h>

#include "krping_npu.h"

#define KP_RESOLVE_MS	2000

/*
 * A connect request on the listener (@lead's): which lane of the test it
 * is, from its private data (none: lane 0 of 1, as rping connects).
 * One client per server; a lane is claimed once, by a request of that
 * client's test (its cookie), lanes 1.. only once the lead has made room
 * for them (kp_lanes_alloc()).  An error has the CM reject and destroy
 * @id.  A wildcard address listens on every device, each with its own
 * lock: claim atomically.  Destroying the listener waits for this.
 */
static struct kp_cb *kp_cm_claim(struct kp_cb *lead, struct rdma_cm_id *id,
				 struct rdma_cm_event *ev)
{
	const struct kp_conn_data *d = ev->param.conn.private_data;
	u32 lane = 0, qps = 1, cookie = 0, ready;
	struct kp_cb *cb;

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
	if (!lane) {
		if (cmpxchg(&lead->child_id, NULL, id))
			return ERR_PTR(-EBUSY);
		lead->peer_qps = qps;
		lead->cookie = cookie;
		cb = lead;
	} else {
		/* pairs with kp_lanes_alloc()'s release */
		ready = smp_load_acquire(&lead->nlanes);
		if (lane >= ready || qps != lead->peer_qps ||
		    cookie != lead->cookie)
			return ERR_PTR(-EBUSY);
		cb = lead->lanes[lane];
		if (cmpxchg(&cb->child_id, NULL, id))
			return ERR_PTR(-EBUSY);
		id->context = cb;
	}
	atomic_inc(&kp_live.cm_ids);
	return cb;
}

/*
 * The CM's events for this test's ids: the client's, the listener and the
 * accepted child all carry cb as context.  What the waiter reads after the
 * state (child_id, the peer's depths, the error) is stored before the
 * state is published with release semantics.
 */
static int kp_cma_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kp_cb *cb = id->context;
	enum kp_cm_state state;
	int err = 0;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* the lane the request is for: its events are its own */
		cb = kp_cm_claim(cb, id, ev);
		if (IS_ERR(cb))
			return PTR_ERR(cb);
	}
	state = READ_ONCE(cb->cm_state);
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		state = KP_CM_ADDR_RESOLVED;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		state = KP_CM_ROUTE_RESOLVED;
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		cb->peer_initiator_depth = ev->param.conn.initiator_depth;
		cb->peer_responder_resources = ev->param.conn.responder_resources;
		state = KP_CM_CONNECT_REQUEST;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* sticky: a quick peer may disconnect before we look */
		WRITE_ONCE(cb->established, true);
		state = KP_CM_CONNECTED;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		state = KP_CM_DISCONNECTED;
		break;
	case RDMA_CM_EVENT_REJECTED:
		err = -ECONNREFUSED;
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
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
		pr_err(KP_NAME " %u: %s (status %d)\n", cb->rec->id,
		       rdma_event_msg(ev->event), ev->status);
		WRITE_ONCE(cb->cm_error, err);
		state = KP_CM_ERROR;
	}
	/* pairs with kp_cm_reached(): child_id and the rest are visible first */
	smp_store_release(&cb->cm_state, state);
	wake_up(&cb->wq);
	/* qps=N: one connection lost ends the test on all (kp_cm_check()) */
	if (state >= KP_CM_DISCONNECTED && cb->lead != cb) {
		WRITE_ONCE(cb->lead->lane_down, true);
		wake_up_all(&cb->lead->wq);
	}
	return 0;
}

static bool kp_cm_reached(struct kp_cb *cb, enum kp_cm_state want)
{
	/* pairs with kp_cma_handler()'s release of the state */
	enum kp_cm_state state = smp_load_acquire(&cb->cm_state);

	return state == want ||
	       (want == KP_CM_CONNECTED && READ_ONCE(cb->established));
}

/* Wait until the CM reaches @want; fail on an error state or timeout. */
static int kp_cm_wait(struct kp_cb *cb, enum kp_cm_state want, const char *what)
{
	long left;

	left = wait_event_interruptible_timeout(cb->wq,
			kp_cm_reached(cb, want) ||
			READ_ONCE(cb->cm_state) >= KP_CM_DISCONNECTED,
			msecs_to_jiffies(cb->opts.timeout_ms));
	if (kp_cm_reached(cb, want))
		return 0;
	if (left < 0)
		return -EINTR;
	if (!left) {
		kp_err(cb, "timed out after %u ms waiting for %s",
		       cb->opts.timeout_ms, what);
		return -ETIMEDOUT;
	}
	kp_err(cb, "connection failed waiting for %s", what);
	return READ_ONCE(cb->cm_error) ?: -ECONNRESET;
}

static int kp_fill_sockaddr(struct kp_cb *cb, struct sockaddr_storage *ss)
{
	const struct kp_addr *a = &cb->opts.addr;

	memset(ss, 0, sizeof(*ss));
	if (a->family == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, a->addr, 4);
		sin->sin_port = htons((u16)cb->opts.port);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, a->addr, 16);
		sin6->sin6_port = htons((u16)cb->opts.port);
		sin6->sin6_scope_id = a->scope_id;
		if (a->ifname[0]) {
			struct net_device *nd;

			rcu_read_lock();
			nd = dev_get_by_name_rcu(&init_net, a->ifname);
			if (nd)
				sin6->sin6_scope_id = nd->ifindex;
			rcu_read_unlock();
			if (!nd) {
				kp_err(cb, "addr6: no interface '%s'", a->ifname);
				return -ENODEV;
			}
		}
	}
	return 0;
}

static void kp_conn_param(struct kp_cb *cb, struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = cb->rd_atom;
	p->initiator_depth = cb->rd_atom;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

static int kp_run_test(struct kp_cb *cb)
{
	bool server = cb->opts.role == KP_ROLE_SERVER;

	if (server)
		return kp_ping_server(cb);	/* learns the mode from the client */
	if (cb->opts.mode == KP_MODE_PING)
		return kp_ping_client(cb);
	return kp_test_client(cb);
}

/*
 * Disconnect and wait (bounded) for the CM to confirm it.  Our last message
 * may still be on its way: wait for its completion first, or for the peer
 * to leave, which it does only once it has that message.
 */
static void kp_disconnect(struct kp_cb *cb, struct rdma_cm_id *id)
{
	if (!READ_ONCE(cb->established))
		return;
	kp_settle(cb);
	rdma_disconnect(id);
}

/* ... and the CM's word on it: 1 s from @start for every connection. */
static void kp_disconnect_wait(struct kp_cb *cb, unsigned long start)
{
	long left = (long)(start + msecs_to_jiffies(1000) - jiffies);

	if (!READ_ONCE(cb->established) || left <= 0)
		return;
	wait_event_timeout(cb->wq,
			   READ_ONCE(cb->cm_state) >= KP_CM_DISCONNECTED, left);
}

/* The test's address in @ss and its own cm_id (a client's or a listener). */
static int kp_cm_create(struct kp_cb *cb, struct sockaddr_storage *ss)
{
	int ret;

	ret = kp_fill_sockaddr(cb, ss);
	if (ret)
		return ret;
	cb->cm_id = rdma_create_id(&init_net, kp_cma_handler, cb, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(cb->cm_id)) {
		ret = PTR_ERR(cb->cm_id);
		cb->cm_id = NULL;
		kp_err(cb, "rdma_create_id: %d", ret);
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

/* A test's cb, or a lane of it (kp_lanes_alloc()). */
void kp_cb_init(struct kp_cb *cb, const struct kp_opts *o,
		struct kp_record *rec)
{
	cb->opts = *o;
	cb->rec = rec;
	cb->cnt = &rec->cnt;
	cb->wait_ms = o->timeout_ms;
	init_waitqueue_head(&cb->wq);
	mutex_init(&cb->npu_lock);
	cb->lead = cb;
	cb->self = cb;
	cb->lanes = &cb->self;
	cb->nlanes = 1;
}

/*
 * qps=N: the lead's N - 1 further connections, each a kp_cb sharing the
 * test's options, record and NPU handles; published for the CM handler
 * (kp_cm_claim()) with the lane count.  Each counts its own messages
 * until kp_lanes_free() adds them to the record: their threads may run
 * at once.
 */
static int kp_lanes_alloc(struct kp_cb *lead, u32 n)
{
	struct kp_cb **lanes;
	u32 i;

	lanes = kcalloc(n, sizeof(*lanes), GFP_KERNEL);
	if (!lanes)
		return -ENOMEM;
	lanes[0] = lead;
	for (i = 1; i < n; i++) {
		struct kp_cb *l = kzalloc(sizeof(*l), GFP_KERNEL);

		if (!l) {
			while (--i)
				kfree(lanes[i]);
			kfree(lanes);
			return -ENOMEM;
		}
		kp_cb_init(l, &lead->opts, lead->rec);
		l->lead = lead;
		l->lane = i;
		l->cnt = &l->lane_cnt;
		l->cookie = lead->cookie;
		l->npu = lead->npu;
		l->npu_rt = lead->npu_rt;
		lanes[i] = l;
	}
	lead->lanes = lanes;
	/* pairs with kp_cm_claim()'s acquire */
	smp_store_release(&lead->nlanes, n);
	return 0;
}

static void kp_counters_add(struct kp_counters *to,
			    const struct kp_counters *c)
{
	WRITE_ONCE(to->send_msgs, to->send_msgs + c->send_msgs);
	WRITE_ONCE(to->send_bytes, to->send_bytes + c->send_bytes);
	WRITE_ONCE(to->recv_msgs, to->recv_msgs + c->recv_msgs);
	WRITE_ONCE(to->recv_bytes, to->recv_bytes + c->recv_bytes);
	WRITE_ONCE(to->read_msgs, to->read_msgs + c->read_msgs);
	WRITE_ONCE(to->read_bytes, to->read_bytes + c->read_bytes);
	WRITE_ONCE(to->write_msgs, to->write_msgs + c->write_msgs);
	WRITE_ONCE(to->write_bytes, to->write_bytes + c->write_bytes);
}

/*
 * The lanes are gone (ids, verbs): their counts go to the record, and NPU
 * memory freed under any of them to the lead's verdict.
 */
static void kp_lanes_free(struct kp_cb *lead)
{
	u32 i;

	if (lead->lanes == &lead->self)
		return;
	for (i = 1; i < lead->nlanes; i++) {
		struct kp_cb *l = lead->lanes[i];

		kp_counters_add(lead->cnt, &l->lane_cnt);
		if (READ_ONCE(l->npu_freed)) {
			mutex_lock(&lead->npu_lock);
			if (!lead->npu_freed)
				WRITE_ONCE(lead->npu_freed, &lead->rdma);
			mutex_unlock(&lead->npu_lock);
		}
		kfree(l);
	}
	kfree(lead->lanes);
	lead->lanes = &lead->self;
	lead->nlanes = 1;
}

/*
 * The end of a test's connections: the last first, each disconnected,
 * then each waited for, so that N connections take no longer than one;
 * then their verbs (the QP before the id it belongs to) and ids.
 */
static void kp_close_lanes(struct kp_cb *lead)
{
	unsigned long start;
	u32 i;

	WRITE_ONCE(lead->lanes_live, false);
	/*
	 * From here the CQs are reaped only to drain them, each in turn: a
	 * free callback of NPU memory reaps its own fence (kp_npu.c).
	 */
	for (i = 0; i < lead->nlanes; i++) {
		struct kp_cb *l = lead->lanes[i];

		mutex_lock(&l->npu_lock);
		l->npu_teardown = true;
		mutex_unlock(&l->npu_lock);
	}
	for (i = lead->nlanes; i-- > 0;) {
		struct kp_cb *l = lead->lanes[i];
		struct rdma_cm_id *id = l->child_id ?: l->cm_id;

		if (id)
			kp_disconnect(l, id);
	}
	start = jiffies;
	for (i = lead->nlanes; i-- > 0;)
		kp_disconnect_wait(lead->lanes[i], start);
	for (i = lead->nlanes; i-- > 0;) {
		struct kp_cb *l = lead->lanes[i];

		kp_free_verbs(l);
		kp_cm_destroy(l->child_id ? &l->child_id : &l->cm_id);
	}
	kp_lanes_free(lead);
}

/* Resolve, set up the verbs and connect one lane of a client's test. */
static int kp_client_connect(struct kp_cb *cb)
{
	struct kp_conn_data data = {
		.magic = cpu_to_be32(KP_HELLO_MAGIC),
		.version = KP_CONN_VERSION,
		.lane = (u8)cb->lane,
		.qps = (u8)cb->lead->nlanes,
		.cookie = cpu_to_be32(cb->lead->cookie),
	};
	struct sockaddr_storage dst;
	struct rdma_conn_param param;
	int ret;

	ret = kp_cm_create(cb, &dst);
	if (ret)
		return ret;
	if (kp_opt_given(&cb->opts, KP_OPT_TOS))
		rdma_set_service_type(cb->cm_id, (int)cb->opts.tos);

	ret = rdma_resolve_addr(cb->cm_id, NULL, (struct sockaddr *)&dst,
				KP_RESOLVE_MS);
	if (ret) {
		kp_err(cb, "rdma_resolve_addr: %d", ret);
		return ret;
	}
	ret = kp_cm_wait(cb, KP_CM_ADDR_RESOLVED, "address resolution");
	if (ret)
		return ret;
	ret = rdma_resolve_route(cb->cm_id, KP_RESOLVE_MS);
	if (ret) {
		kp_err(cb, "rdma_resolve_route: %d", ret);
		return ret;
	}
	ret = kp_cm_wait(cb, KP_CM_ROUTE_RESOLVED, "route resolution");
	if (ret)
		return ret;

	ret = kp_setup_verbs(cb, cb->cm_id);
	if (ret)
		return ret;
	kp_conn_param(cb, &param);
	param.private_data = &data;
	param.private_data_len = sizeof(data);
	ret = rdma_connect(cb->cm_id, &param);
	if (ret) {
		kp_err(cb, "rdma_connect: %d", ret);
		return ret;
	}
	return kp_cm_wait(cb, KP_CM_CONNECTED, "the server to accept");
}

/*
 * The client: its connections (qps=N of them, one after the other: the
 * server takes lane i once lane i - 1 is in), the test, then each torn
 * down, the last first.
 */
int kp_run_client(struct kp_cb *cb)
{
	u32 i;
	int ret;

	ret = kp_lanes_cpus(cb);
	if (!ret && cb->opts.qps > 1) {
		cb->cookie = get_random_u32();
		ret = kp_lanes_alloc(cb, cb->opts.qps);
	}
	for (i = 0; !ret && i < cb->nlanes; i++)
		ret = kp_client_connect(cb->lanes[i]);
	if (!ret) {
		WRITE_ONCE(cb->lanes_live, true);
		ret = kp_run_test(cb);
	}
	kp_close_lanes(cb);
	return ret;
}

/* Set up the verbs of a claimed connection and accept it. */
static int kp_server_accept(struct kp_cb *cb)
{
	struct rdma_conn_param param;
	int ret;

	ret = kp_setup_verbs(cb, cb->child_id);
	if (ret)
		return ret;
	kp_conn_param(cb, &param);
	param.responder_resources = min(cb->rd_atom, cb->peer_initiator_depth);
	param.initiator_depth = min(cb->rd_atom, cb->peer_responder_resources);
	/* rdma_accept() belongs under the CM handler's lock (lockdep checks) */
	rdma_lock_handler(cb->child_id);
	ret = rdma_accept(cb->child_id, &param);
	rdma_unlock_handler(cb->child_id);
	if (ret) {
		kp_err(cb, "rdma_accept: %d", ret);
		return ret;
	}
	cb->accepted = true;
	return kp_cm_wait(cb, KP_CM_CONNECTED, "the connection");
}

/*
 * The server: one client, whose first connect request says how many
 * connections its test has (kp_cm_claim()); each is accepted in turn.
 */
int kp_run_server(struct kp_cb *cb)
{
	struct sockaddr_storage src;
	u32 i;
	int ret;

	ret = kp_cm_create(cb, &src);
	if (ret)
		return ret;
	ret = rdma_bind_addr(cb->cm_id, (struct sockaddr *)&src);
	if (ret) {
		kp_err(cb, "rdma_bind_addr: %d", ret);
		goto out;
	}
	ret = rdma_listen(cb->cm_id, KP_MAX_QPS);
	if (ret) {
		kp_err(cb, "rdma_listen: %d", ret);
		goto out;
	}
	ret = kp_cm_wait(cb, KP_CM_CONNECT_REQUEST, "a client");
	if (!ret && cb->peer_qps > 1)
		ret = kp_lanes_alloc(cb, cb->peer_qps);
	/* a test of one connection needs the listener no more */
	if (!ret && cb->nlanes == 1)
		kp_cm_destroy(&cb->cm_id);
	if (!ret)
		ret = kp_server_accept(cb);
	for (i = 1; !ret && i < cb->nlanes; i++) {
		struct kp_cb *l = cb->lanes[i];

		ret = kp_cm_wait(l, KP_CM_CONNECT_REQUEST,
				 "the client's next connection") ?:
		      kp_server_accept(l);
	}
out:
	/*
	 * The listener goes first, whatever happened.  Its destruction
	 * waits for a connect request being handled, so from here on each
	 * child_id is final: one claimed just as a wait ended (timeout,
	 * signal) is ours to refuse and destroy.
	 */
	kp_cm_destroy(&cb->cm_id);
	if (!ret) {
		WRITE_ONCE(cb->lanes_live, true);
		ret = kp_run_test(cb);
	}
	/*
	 * A connection claimed but not accepted is refused; one accepted is
	 * not (its REP is out: a REJ now leaves the CM waiting on the peer).
	 */
	for (i = 0; i < cb->nlanes; i++) {
		struct kp_cb *l = cb->lanes[i];

		if (l->child_id && !l->accepted)
			rdma_reject(l->child_id, NULL, 0,
				    IB_CM_REJ_CONSUMER_DEFINED);
	}
	kp_close_lanes(cb);
	return ret;
}
