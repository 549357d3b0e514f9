// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_hw.c - the device's port counters (hw_counters) around each size a
 * client runs: read through the driver's own get_hw_stats, as the core's
 * sysfs reads them, before the size's loop (its warm-up included) and
 * after; the deltas that moved go with the size's results.  They count
 * the whole port, so every QP on it: on one rxe device both sides of a
 * loopback test.  Unlike sysfs they leave out what QPs bound to an rdma
 * counter ("rdma statistic qp set ... auto on") moved, which the core
 * keeps apart from the driver's figure.
 */
#include <linux/slab.h>

#include "krping_npu.h"

#ifdef KP_HAVE_ALLOC_HW_PORT_STATS
static struct rdma_hw_stats *kp_hw_alloc(struct ib_device *dev, u32 port)
{
	if (!dev->ops.alloc_hw_port_stats)
		return NULL;
	return dev->ops.alloc_hw_port_stats(dev, port);
}
#else
static struct rdma_hw_stats *kp_hw_alloc(struct ib_device *dev, u32 port)
{
	if (!dev->ops.alloc_hw_stats)
		return NULL;
	return dev->ops.alloc_hw_stats(dev, port);
}
#endif

#ifdef KP_HAVE_RDMA_STAT_DESC
#define kp_hw_name(s, i)	((s)->descs[i].name)
#define kp_hw_off(s, i)		test_bit(i, (s)->is_disabled)
#define kp_hw_release(s)	rdma_free_hw_stats_struct(s)
#else
#define kp_hw_name(s, i)	((s)->names[i])
#define kp_hw_off(s, i)		false
#define kp_hw_release(s)	kfree(s)
#endif

/*
 * The driver's current values into s->value[]; 0 or a negative errno.
 * The stats are the test's own, shared with nobody: no lock (5.10's
 * helper does not even initialise it).
 */
static int kp_hw_read(struct kp_test *t)
{
	struct rdma_hw_stats *s = t->hw_stats;
	int n;

	n = t->hw_dev->ops.get_hw_stats(t->hw_dev, s, t->hw_port,
					s->num_counters);
	return n < 0 ? n : 0;
}

/*
 * Before a size's loop: the port of connection 0, its counters now.  A
 * device without counters leaves the results without; one that fails to
 * give them too, said, and tried again at the next size.  The test runs
 * on either way.
 */
void kp_hw_begin(struct kp_test *t)
{
	struct kp_conn *c = t->conns[0];
	struct ib_device *dev = kp_dev(c);
	struct rdma_cm_id *id = c->child_id ?: c->cm_id;
	int ret;

	if (!t->hw_stats) {
		if (!dev->ops.get_hw_stats)
			return;
		t->hw_stats = kp_hw_alloc(dev, id->port_num);
		if (!t->hw_stats)
			return;
		t->hw_dev = dev;
		t->hw_port = id->port_num;
		t->hw_start = kcalloc(t->hw_stats->num_counters,
				      sizeof(*t->hw_start), GFP_KERNEL);
		if (!t->hw_start) {
			kp_hw_free(t);
			return;
		}
	}
	ret = kp_hw_read(t);
	if (ret) {
		kp_err(t, "%s port %u: its counters: %d; results go without",
		       dev_name(&dev->dev), t->hw_port, ret);
		kp_hw_free(t);
		return;
	}
	memcpy(t->hw_start, t->hw_stats->value,
	       t->hw_stats->num_counters * sizeof(*t->hw_start));
}

/* After it: what moved, into the results from @first on. */
void kp_hw_end(struct kp_test *t, u32 first)
{
	struct kp_hw_counters hw = { .have = true };
	struct rdma_hw_stats *s = t->hw_stats;
	int i, ret;

	if (!s)
		return;
	ret = kp_hw_read(t);
	if (ret) {
		kp_err(t, "%s port %u: its counters after the size: %d; its results go without",
		       dev_name(&t->hw_dev->dev), t->hw_port, ret);
		kp_hw_free(t);
		return;
	}
	/* a gauge that fell (active QPs), or a counter that wrapped: no delta */
	for (i = 0; i < s->num_counters; i++)
		if (!kp_hw_off(s, i) && s->value[i] >= t->hw_start[i])
			kp_hw_add(&hw, kp_hw_name(s, i),
				  s->value[i] - t->hw_start[i]);
	kp_rec_hw(t, first, &hw);
}

void kp_hw_free(struct kp_test *t)
{
	if (t->hw_stats)
		kp_hw_release(t->hw_stats);
	t->hw_stats = NULL;
	kfree(t->hw_start);
	t->hw_start = NULL;
}
