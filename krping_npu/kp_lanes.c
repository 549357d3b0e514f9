// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_lanes.c - the streams of a test of several connections (qps=N): by
 * default all of them from the writer's thread, as perftest drives -q N
 * from one process; with cpus=LIST from kernel threads pinned to those
 * CPUs, connection i on the (i mod n)th.  A thread with one connection
 * runs the stream as a test of one does (kp_bw_lane(): busy-poll, or
 * events); a thread with several steps each in turn and never waits on
 * one CQ while another has work (kp_lanes_drive()).
 *
 * The writer waits for its threads, interruptibly and bounded; a signal,
 * or one thread's failure, stops them all (lanes_abort, then
 * kthread_stop()), and each one's waits are bounded by the timeout.
 */
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "krping_npu.h"

struct kp_lanes_thread {
	struct kp_cb *lead;
	struct task_struct *task;
	u32 first;		/* lanes first, first + step, ... */
	u32 step;
	int ret;
	bool done;
	wait_queue_head_t *wq;	/* the writer's */
};

/* Give up the CPU between passes; the lanes' CPU time follows the thread. */
static void kp_lanes_yield(struct kp_cb *lead, u32 first, u32 step)
{
	u32 i;

	cond_resched();
	for (i = first; i < lead->nlanes; i += step)
		kp_loop_cpu(lead->lanes[i]);
}

/*
 * Step the unfinished lanes @first, @first + @step, ... of @lead with @fn
 * (>0: progress, 0: none, <0: an error) until each has set lane_done.
 * With no progress anywhere it spins, and gives the CPU up only once the
 * wait is KP_LATE_US old; otherwise between passes, one in
 * KP_YIELD_EVERY or one KP_LATE_US after the last yield.  A stop is
 * heard every pass; cb->wait_ms with no progress is a timeout.
 */
int kp_lanes_drive(struct kp_cb *lead, u32 first, u32 step,
		   int (*fn)(struct kp_cb *cb))
{
	u64 passes = 0, idle_since = 0, yielded = ktime_get_ns();
	unsigned int idle = 0;
	bool late = false;
	u32 i;
	int ret;

	for (;;) {
		bool left = false, got = false;

		for (i = first; i < lead->nlanes; i += step) {
			struct kp_cb *l = lead->lanes[i];

			if (l->lane_done)
				continue;
			ret = fn(l);
			if (ret < 0)
				return ret;
			if (ret)
				l->run.iters++;
			got |= ret > 0;
			left |= !l->lane_done;
		}
		if (!left)
			return 0;
		/* as kp_poll() on each call: a pass may be long (big messages) */
		if (kp_stopping(lead))
			return -EINTR;
		if (got) {
			u64 now = ktime_get_ns();

			idle = 0;
			idle_since = 0;
			late = false;
			/*
			 * One pass in KP_YIELD_EVERY, or a pass KP_LATE_US
			 * after the last yield: with a software device a
			 * pass can carry much of both sides' work.
			 */
			if (!(++passes % KP_YIELD_EVERY) ||
			    now - yielded > KP_LATE_US * NSEC_PER_USEC) {
				kp_lanes_yield(lead, first, step);
				yielded = ktime_get_ns();
			}
			continue;
		}
		if (++idle % 64)
			continue;
		if (!idle_since) {
			idle_since = ktime_get_ns();
			continue;
		}
		if (ktime_get_ns() - idle_since >
		    (u64)lead->wait_ms * NSEC_PER_MSEC) {
			kp_err(lead, "qps: no completion on any of lanes %u+%u within %u ms",
			       first, step, lead->wait_ms);
			return -ETIMEDOUT;
		}
		if (!late) {
			if (ktime_get_ns() - idle_since <
			    KP_LATE_US * NSEC_PER_USEC)
				continue;
			late = true;
			for (i = first; i < lead->nlanes; i += step)
				lead->lanes[i]->run.late_waits++;
		}
		kp_lanes_yield(lead, first, step);
		yielded = ktime_get_ns();
	}
}

/*
 * cpus=: every thread waits here after its warmup until all are there,
 * so that no thread's timed stream overlaps another's warmup or start.
 * Bounded by the timeout; a stop or another thread's failure ends it.
 */
static int kp_lanes_line_up(struct kp_cb *lead, u32 nthreads)
{
	u64 until = ktime_get_ns() + (u64)lead->wait_ms * NSEC_PER_MSEC;

	atomic_inc(&lead->lanes_ready);
	while (atomic_read(&lead->lanes_ready) < nthreads) {
		if (kp_stopping(lead))
			return -EINTR;
		if (ktime_get_ns() > until) {
			kp_err(lead, "cpus: the threads did not all start within %u ms",
			       lead->wait_ms);
			return -ETIMEDOUT;
		}
		cond_resched();
	}
	return 0;
}

/*
 * A thread's lanes of a bw stream: warmup, then the timed streams, which
 * start together: on one time base, taken once every lane's CPU-time
 * snapshot is done.
 */
static int kp_lanes_stream(struct kp_cb *lead, u32 first, u32 step,
			   u32 nthreads)
{
	u64 warm = lead->opts.role == KP_ROLE_CLIENT ? lead->opts.warmup : 0;
	u32 i;
	int ret;

	if (first + step >= lead->nlanes) {	/* this thread's only lane */
		ret = kp_bw_lane(lead->lanes[first], false);
		if (!ret && nthreads)
			ret = kp_lanes_line_up(lead, nthreads);
		return ret ?: kp_bw_lane(lead->lanes[first], true);
	}
	if (warm) {
		for (i = first; i < lead->nlanes; i += step)
			kp_bw_start(lead->lanes[i], warm);
		ret = kp_lanes_drive(lead, first, step, kp_bw_step);
		if (ret)
			return ret;
	}
	if (nthreads) {
		ret = kp_lanes_line_up(lead, nthreads);
		if (ret)
			return ret;
	}
	for (i = first; i < lead->nlanes; i += step)
		kp_bw_start(lead->lanes[i], 0);
	kp_run_rebase(lead, first, step);
	return kp_lanes_drive(lead, first, step, kp_bw_step);
}

/* Wake whatever of the test sleeps: the writer, threads on their CQs. */
static void kp_lanes_wake(struct kp_cb *lead)
{
	u32 i;

	for (i = 0; i < lead->nlanes; i++)
		wake_up_all(&lead->lanes[i]->wq);
}

static int kp_lanes_threadfn(void *data)
{
	struct kp_lanes_thread *t = data;

	t->ret = kp_lanes_stream(t->lead, t->first, t->step, t->step);
	if (t->ret) {
		/* the other threads stop too, and the writer hears at once */
		WRITE_ONCE(t->lead->lanes_abort, true);
		kp_lanes_wake(t->lead);
	}
	/* pairs with kp_lanes_threads_done() */
	smp_store_release(&t->done, true);
	wake_up(t->wq);
	/* kthread_stop() collects us */
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static bool kp_lanes_threads_done(struct kp_lanes_thread *t, u32 n)
{
	u32 i;

	if (READ_ONCE(t->lead->lanes_abort))
		return true;

	for (i = 0; i < n; i++) {
		/* pairs with kp_lanes_threadfn()'s release: t[i].ret is seen */
		if (!smp_load_acquire(&t[i].done))
			return false;
	}
	return true;
}

/* cpus=: every CPU named must be online (checked again as threads start). */
int kp_lanes_cpus(struct kp_cb *lead)
{
	u32 i;

	for (i = 0; i < lead->opts.ncpus; i++) {
		if (lead->opts.cpus[i] >= nr_cpu_ids ||
		    !cpu_online(lead->opts.cpus[i])) {
			kp_err(lead, "cpus: CPU %u is not online",
			       lead->opts.cpus[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * How long the threads may take, at most: the timeout, the duration, and
 * 1 ms per message and per 64 KiB moved of every connection.
 */
static u32 kp_lanes_bound_ms(struct kp_cb *lead)
{
	u64 msgs = (u64)(lead->count + lead->opts.warmup) * lead->nlanes;
	u64 ms = lead->opts.timeout_ms + (u64)lead->duration_s * MSEC_PER_SEC +
		 msgs + (msgs * lead->size >> 16);

	return (u32)min_t(u64, ms, U32_MAX / 2);
}

/*
 * The streams on cpus=: one thread a CPU, bound to it.  Each thread is
 * created, then all are woken; the writer waits for all of them (a
 * signal stops them), and collects each with kthread_stop().
 */
static int kp_lanes_threads(struct kp_cb *lead)
{
	u32 n = lead->opts.ncpus, i;
	struct kp_lanes_thread *t;
	int ret;

	ret = kp_lanes_cpus(lead);
	if (ret)
		return ret;
	t = kcalloc(n, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct task_struct *task;

		t[i].lead = lead;
		t[i].first = i;
		t[i].step = n;
		t[i].wq = &lead->wq;
		task = kthread_create(kp_lanes_threadfn, &t[i], "kp%u/%u",
				      lead->rec->id, i);
		if (IS_ERR(task)) {
			ret = PTR_ERR(task);
			kp_err(lead, "cpus: kthread_create: %d", ret);
			break;
		}
		kthread_bind(task, lead->opts.cpus[i]);
		get_task_struct(task);
		t[i].task = task;
	}
	if (!ret) {
		unsigned long bound = msecs_to_jiffies(kp_lanes_bound_ms(lead));
		long left;

		for (i = 0; i < n; i++)
			wake_up_process(t[i].task);
		left = wait_event_interruptible_timeout(lead->wq,
							kp_lanes_threads_done(t, n),
							bound);
		if (left < 0) {
			ret = -EINTR;
		} else if (!left) {
			kp_err(lead, "cpus: the threads are not done after %u ms",
			       kp_lanes_bound_ms(lead));
			ret = -ETIMEDOUT;
		}
	}
	/*
	 * A thread never woken ends at kthread_stop() without running; one
	 * running sees the abort (or kthread_should_stop()) at its next poll.
	 */
	if (ret || READ_ONCE(lead->lanes_abort)) {
		WRITE_ONCE(lead->lanes_abort, true);
		kp_lanes_wake(lead);
	}
	for (i = 0; i < n && t[i].task; i++) {
		kthread_stop(t[i].task);
		put_task_struct(t[i].task);
		/* the thread that failed, not those it stopped */
		if (!ret || (ret == -EINTR && t[i].ret))
			ret = t[i].ret;
	}
	kfree(t);
	return ret;
}

/*
 * The bw stream (bw, bw,read, bw,send's client, duplex) of a test of
 * several connections, or of one on cpus=; the result is the aggregate
 * and a line per connection.
 */
int kp_lanes_bw(struct kp_cb *lead)
{
	u32 i;
	int ret;

	/* bw,send: each server's control receives ahead of its data ones */
	for (i = 0; i < lead->nlanes; i++) {
		ret = kp_bw_skips(lead->lanes[i]);
		if (ret)
			return ret;
	}
	WRITE_ONCE(lead->lanes_abort, false);
	atomic_set(&lead->lanes_ready, 0);
	if (lead->opts.ncpus)
		ret = kp_lanes_threads(lead);
	else
		ret = kp_lanes_stream(lead, 0, 1, 0);
	WRITE_ONCE(lead->lanes_abort, false);
	if (ret)
		return ret;
	return kp_stats_bw_lanes(lead, lead->opts.ncpus ?: 1);
}
