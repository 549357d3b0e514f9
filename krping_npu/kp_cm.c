// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_cm.c - rdma_cm connection management: resolve and connect (client),
 * bind, listen and accept one connection (server), and the test dispatch.
 */
#include <linux/inet.h>
#include <rdma/ib_cm.h>
#include <linux/in6.h>
#include <linux/netdevice.h>
#include <net/net_namespace.h>

#include "krping_npu.h"

#define KP_RESOLVE_MS	2000

/*
 * The CM's events for this test's ids: the client's, the listener and the
 * accepted child all carry cb as context.  What the waiter reads after the
 * state (child_id, the peer's depths, the error) is stored before the
 * state is published with release semantics.
 */
static int kp_cma_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kp_cb *cb = id->context;
	enum kp_cm_state state = READ_ONCE(cb->cm_state);
	int err = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		state = KP_CM_ADDR_RESOLVED;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		state = KP_CM_ROUTE_RESOLVED;
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/*
		 * One client per server; a non-zero return has the CM reject
		 * and destroy this id.  A wildcard address listens on every
		 * device, each with its own lock: claim atomically.
		 * Destroying the listener waits for these handlers.
		 */
		if (cmpxchg(&cb->child_id, NULL, id))
			return -EBUSY;
		atomic_inc(&kp_live.cm_ids);
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
	wait_event_timeout(cb->wq,
			   READ_ONCE(cb->cm_state) >= KP_CM_DISCONNECTED,
			   msecs_to_jiffies(1000));
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

int kp_run_client(struct kp_cb *cb)
{
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
		goto out;
	}
	ret = kp_cm_wait(cb, KP_CM_ADDR_RESOLVED, "address resolution");
	if (ret)
		goto out;
	ret = rdma_resolve_route(cb->cm_id, KP_RESOLVE_MS);
	if (ret) {
		kp_err(cb, "rdma_resolve_route: %d", ret);
		goto out;
	}
	ret = kp_cm_wait(cb, KP_CM_ROUTE_RESOLVED, "route resolution");
	if (ret)
		goto out;

	ret = kp_setup_verbs(cb, cb->cm_id);
	if (ret)
		goto out;
	kp_conn_param(cb, &param);
	ret = rdma_connect(cb->cm_id, &param);
	if (ret) {
		kp_err(cb, "rdma_connect: %d", ret);
		goto out;
	}
	ret = kp_cm_wait(cb, KP_CM_CONNECTED, "the server to accept");
	if (ret)
		goto out;

	ret = kp_run_test(cb);
	kp_disconnect(cb, cb->cm_id);
out:
	kp_free_verbs(cb);
	kp_cm_destroy(&cb->cm_id);
	return ret;
}

int kp_run_server(struct kp_cb *cb)
{
	struct sockaddr_storage src;
	struct rdma_conn_param param;
	int ret;

	ret = kp_cm_create(cb, &src);
	if (ret)
		return ret;
	ret = rdma_bind_addr(cb->cm_id, (struct sockaddr *)&src);
	if (ret) {
		kp_err(cb, "rdma_bind_addr: %d", ret);
		goto out;
	}
	ret = rdma_listen(cb->cm_id, 1);
	if (ret) {
		kp_err(cb, "rdma_listen: %d", ret);
		goto out;
	}
	ret = kp_cm_wait(cb, KP_CM_CONNECT_REQUEST, "a client");
out:
	/*
	 * One client per server: the listener goes first, whatever happened.
	 * Its destruction waits for a connect request being handled, so from
	 * here on child_id is final: the client claimed just as the wait
	 * ended (timeout, signal) is ours to refuse and destroy.
	 */
	kp_cm_destroy(&cb->cm_id);
	if (ret)
		goto out_reject;

	ret = kp_setup_verbs(cb, cb->child_id);
	if (ret)
		goto out_reject;
	kp_conn_param(cb, &param);
	param.responder_resources = min(cb->rd_atom, cb->peer_initiator_depth);
	param.initiator_depth = min(cb->rd_atom, cb->peer_responder_resources);
	/* rdma_accept() belongs under the CM handler's lock (lockdep checks) */
	rdma_lock_handler(cb->child_id);
	ret = rdma_accept(cb->child_id, &param);
	rdma_unlock_handler(cb->child_id);
	if (ret) {
		kp_err(cb, "rdma_accept: %d", ret);
		goto out_reject;
	}
	ret = kp_cm_wait(cb, KP_CM_CONNECTED, "the connection");
	if (ret)
		goto out_child;

	ret = kp_run_test(cb);
	kp_disconnect(cb, cb->child_id);
	goto out_child;

out_reject:
	if (cb->child_id && !READ_ONCE(cb->established))
		rdma_reject(cb->child_id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
out_child:
	kp_free_verbs(cb);		/* the QP first: it belongs to the child */
	kp_cm_destroy(&cb->child_id);
	return ret;
}
