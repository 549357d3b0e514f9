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
 * or one thread's failure, stops them all (t->abort, then
 * kthread_stop()), and each one's waits are bounded by the timeout.
 */
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "krping_npu.h"
#include "kp_trace.h"

struct kp_lanes_thread {
	struct kp_test *t;
	struct task_struct *task;
	u32 first;		/* connections first, first + step, ... */
	u32 step;
	int ret;
	bool done;
};

/* After the thread gave up its CPU: the streams' CPU time follows it. */
static void kp_lanes_cpu(struct kp_test *t, u32 first, u32 step)
{
	u32 i;

	for (i = first; i < t->nconns; i += step)
		kp_loop_cpu(t->conns[i]);
}

/* Give up the CPU between passes. */
static void kp_lanes_yield(struct kp_test *t, u32 first, u32 step)
{
	cond_resched();
	kp_lanes_cpu(t, first, step);
}

/*
 * Step the unfinished connections @first, @first + @step, ... of @t with
 * @fn (>0: progress, 0: none, <0: an error) until each stream is over.
 * With no progress anywhere it spins, and gives the CPU up to a task that
 * waits for it (kp_cpu_wanted()), or once the wait is KP_LATE_US old;
 * otherwise between passes, one in
 * KP_YIELD_EVERY or one KP_LATE_US after the last yield.  A stop is
 * heard every pass; the timeout with no progress ends it, unless the
 * connections wait on their peers (kp_probe_begin()): then each probe
 * interval with no progress probes every unfinished one, and the wait
 * goes on while they answer.
 */
int kp_lanes_drive(struct kp_test *t, u32 first, u32 step,
		   int (*fn)(struct kp_conn *c))
{
	u64 passes = 0, idle_since = 0, yielded = kp_clock_now(&t->clk);
	unsigned int idle = 0;
	bool late = false, yielded_idle = false;
	u32 i;
	int ret;

	for (;;) {
		bool left = false, got = false;

		for (i = first; i < t->nconns; i += step) {
			struct kp_conn *l = t->conns[i];

			if (l->stream.over)
				continue;
			ret = fn(l);
			if (ret < 0)
				return ret;
			if (ret)
				l->stream.run.iters++;
			got |= ret > 0;
			left |= !l->stream.over;
		}
		if (!left)
			return 0;
		/* as kp_poll() on each call: a pass may be long (big messages) */
		if (kp_stopping(t))
			return -EINTR;
		if (got) {
			u64 now = kp_clock_now(&t->clk);

			idle = 0;
			idle_since = 0;
			late = false;
			yielded_idle = false;
			/*
			 * One pass in KP_YIELD_EVERY, or a pass KP_LATE_US
			 * after the last yield: with a software device a
			 * pass can carry much of both sides' work.
			 */
			if (!(++passes % KP_YIELD_EVERY) ||
			    now - yielded > KP_LATE_US * NSEC_PER_USEC) {
				kp_lanes_yield(t, first, step);
				yielded = kp_clock_now(&t->clk);
			}
			continue;
		}
		if (++idle % 64)
			continue;
		if (!idle_since) {
			idle_since = kp_clock_now(&t->clk);
			continue;
		}
		if (t->conns[first]->probing) {
			if (kp_clock_now(&t->clk) - idle_since >
			    (u64)t->opts.probe_ms * NSEC_PER_MSEC) {
				for (i = first; i < t->nconns; i += step) {
					if (t->conns[i]->stream.over)
						continue;
					ret = kp_probe_tick(t->conns[i]);
					if (ret)
						return ret;
				}
				idle_since = kp_clock_now(&t->clk);
			}
		} else if (kp_clock_now(&t->clk) - idle_since >
			   (u64)t->opts.timeout_ms * NSEC_PER_MSEC) {
			kp_err(t, "qps: no completion on any of connections %u+%u within %u ms",
			       first, step, t->opts.timeout_ms);
			return -ETIMEDOUT;
		}
		/* late from the wait's start, whether it yielded or not */
		if (!late && kp_run_late(&t->conns[first]->stream.run,
					 kp_clock_now(&t->clk) - idle_since)) {
			late = true;
			for (i = first; i < t->nconns; i += step) {
				t->conns[i]->stream.run.late_waits++;
				trace_kp_late_wait(t->rec->id, i,
						   kp_clock_now(&t->clk) - idle_since);
			}
		}
		if (kp_cpu_wanted()) {
			for (i = first; i < t->nconns && !yielded_idle;
			     i += step)
				t->conns[i]->stream.run.sched_yields++;
			yielded_idle = true;
			kp_cpu_give();
			kp_lanes_cpu(t, first, step);
			yielded = kp_clock_now(&t->clk);
			continue;
		}
		if (!late)
			continue;
		kp_lanes_yield(t, first, step);
		yielded = kp_clock_now(&t->clk);
	}
}

/*
 * The threads' progress, for the writer's wait: completions reaped, the
 * warm-up's too (read while they run: only whether it moved counts).
 */
static u64 kp_lanes_moved(struct kp_test *t)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < t->nconns; i++)
		sum += READ_ONCE(t->conns[i]->reaped);
	return sum;
}

/*
 * cpus=: every thread waits here after its warmup until all are there,
 * so that no thread's timed stream overlaps another's warmup or start.
 * Bounded by the timeout with no progress: a thread still in its warm-up
 * (another VM on the host can make one lag seconds behind) moves.  A
 * stop or another thread's failure ends it.
 */
static int kp_lanes_line_up(struct kp_test *t, u32 nthreads)
{
	u64 bound = (u64)t->opts.timeout_ms * NSEC_PER_MSEC;
	u64 until = ktime_get_ns() + bound, moved = kp_lanes_moved(t), now;

	atomic_inc(&t->ready);
	while (atomic_read(&t->ready) < nthreads) {
		if (kp_stopping(t))
			return -EINTR;
		now = kp_lanes_moved(t);
		if (now != moved) {
			moved = now;
			until = ktime_get_ns() + bound;
		} else if (ktime_get_ns() > until) {
			kp_err(t, "cpus: the threads did not all start, none moving for %u ms",
			       t->opts.timeout_ms);
			return -ETIMEDOUT;
		}
		cond_resched();
	}
	return 0;
}

/*
 * A thread's connections of a bw test: warmup, then the timed streams,
 * which start together: on one time base, taken once every stream's
 * CPU-time snapshot is done.
 */
static int kp_lanes_stream(struct kp_test *t, u32 first, u32 step,
			   u32 nthreads)
{
	u64 warm = t->opts.role == KP_ROLE_CLIENT ? t->opts.warmup : 0;
	u32 i;
	int ret;

	if (first + step >= t->nconns) {	/* this thread's only connection */
		ret = kp_bw_lane(t->conns[first], false);
		if (!ret && nthreads)
			ret = kp_lanes_line_up(t, nthreads);
		return ret ?: kp_bw_lane(t->conns[first], true);
	}
	if (warm) {
		for (i = first; i < t->nconns; i += step)
			kp_bw_start(t->conns[i], warm);
		ret = kp_lanes_drive(t, first, step, kp_bw_step);
		if (ret)
			return ret;
	}
	if (nthreads) {
		ret = kp_lanes_line_up(t, nthreads);
		if (ret)
			return ret;
	}
	for (i = first; i < t->nconns; i += step)
		kp_bw_start(t->conns[i], 0);
	kp_run_rebase(t, first, step);
	return kp_lanes_drive(t, first, step, kp_bw_step);
}

static int kp_lanes_threadfn(void *data)
{
	struct kp_lanes_thread *th = data;

	th->ret = kp_lanes_stream(th->t, th->first, th->step, th->step);
	if (th->ret) {
		/* the other threads stop too, and the writer hears at once */
		WRITE_ONCE(th->t->abort, true);
		wake_up_all(&th->t->wq);
	}
	/* pairs with kp_lanes_threads_done() */
	smp_store_release(&th->done, true);
	wake_up(&th->t->wq);
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

static bool kp_lanes_threads_done(struct kp_lanes_thread *th, u32 n)
{
	u32 i;

	if (READ_ONCE(th->t->abort))
		return true;

	for (i = 0; i < n; i++) {
		/* pairs with kp_lanes_threadfn()'s release: th[i].ret is seen */
		if (!smp_load_acquire(&th[i].done))
			return false;
	}
	return true;
}

/* cpus=: every CPU named must be online (checked again as threads start). */
int kp_lanes_cpus(struct kp_test *t)
{
	u32 i;

	for (i = 0; i < t->opts.ncpus; i++) {
		if (t->opts.cpus[i] >= nr_cpu_ids ||
		    !cpu_online(t->opts.cpus[i])) {
			kp_err(t, "cpus: CPU %u is not online",
			       t->opts.cpus[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * The writer waits while the threads move.  Each thread's own waits are
 * bounded (kp_lanes_drive(): the timeout with no completion on any of its
 * connections) and report themselves; this bound, twice the timeout and a
 * second with no pass of any thread, is only the safety net behind them,
 * and no assumed rate: a slow run may take as long as it moves.
 */
static int kp_lanes_wait(struct kp_test *t, struct kp_lanes_thread *th, u32 n)
{
	u32 ms = 2 * t->opts.timeout_ms + MSEC_PER_SEC;
	u64 moved = kp_lanes_moved(t), now;
	long left;

	for (;;) {
		left = wait_event_interruptible_timeout(t->wq,
							kp_lanes_threads_done(th, n),
							msecs_to_jiffies(ms));
		if (left < 0)
			return -EINTR;
		if (left)
			return 0;
		now = kp_lanes_moved(t);
		if (now == moved) {
			kp_err(t, "cpus: no thread moved for %u ms (the bound: twice the timeout and 1 s)",
			       ms);
			return -ETIMEDOUT;
		}
		moved = now;
	}
}

/*
 * The streams on cpus=: one thread a CPU, bound to it.  Each thread is
 * created, then all are woken; the writer waits for all of them (a
 * signal stops them), and collects each with kthread_stop().
 */
static int kp_lanes_threads(struct kp_test *t)
{
	u32 n = t->opts.ncpus, i;
	struct kp_lanes_thread *th;
	int ret;

	ret = kp_lanes_cpus(t);
	if (ret)
		return ret;
	th = kcalloc(n, sizeof(*th), GFP_KERNEL);
	if (!th)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct task_struct *task;

		th[i].t = t;
		th[i].first = i;
		th[i].step = n;
		task = kthread_create(kp_lanes_threadfn, &th[i], "kp%u/%u",
				      t->rec->id, i);
		if (IS_ERR(task)) {
			ret = PTR_ERR(task);
			kp_err(t, "cpus: kthread_create: %d", ret);
			break;
		}
		kthread_bind(task, t->opts.cpus[i]);
		get_task_struct(task);
		th[i].task = task;
	}
	if (!ret) {
		for (i = 0; i < n; i++)
			wake_up_process(th[i].task);
		ret = kp_lanes_wait(t, th, n);
	}
	/*
	 * A thread never woken ends at kthread_stop() without running; one
	 * running sees the abort (or kthread_should_stop()) at its next poll.
	 */
	if (ret || READ_ONCE(t->abort)) {
		WRITE_ONCE(t->abort, true);
		wake_up_all(&t->wq);
	}
	for (i = 0; i < n && th[i].task; i++) {
		kthread_stop(th[i].task);
		put_task_struct(th[i].task);
		/* the thread that failed, not those it stopped */
		if (!ret || (ret == -EINTR && th[i].ret))
			ret = th[i].ret;
	}
	kfree(th);
	return ret;
}

/*
 * The bw streams (bw, bw,read, bw,send's client, duplex) of a test, one
 * a connection: from this thread, or on cpus= from threads of their
 * own.  The result is the stream's, or with qps=N the aggregate and a
 * line per connection.
 */
int kp_lanes_bw(struct kp_test *t)
{
	u32 i;
	int ret;

	/* bw,send: each server's control receives ahead of its data ones */
	for (i = 0; i < t->nconns; i++) {
		ret = kp_bw_skips(t->conns[i]);
		if (ret)
			return ret;
	}
	WRITE_ONCE(t->abort, false);
	atomic_set(&t->ready, 0);
	if (t->opts.ncpus)
		ret = kp_lanes_threads(t);
	else
		ret = kp_lanes_stream(t, 0, 1, 0);
	WRITE_ONCE(t->abort, false);
	if (ret) {
		/* a stall is otherwise unattributable: each side's queues */
		for (i = 0; ret != -EINTR && i < t->nconns; i++)
			kp_conn_state(t->conns[i]);
		return ret;
	}
	return kp_stats_bw_lanes(t, t->opts.ncpus ?: 1);
}

/*
 * bw,send's (and bw,imm's) server of qps=N: every connection's receives
 * reaped in turn from this thread (kp_send_sink_now()), until each
 * stream's last message is in.
 */
int kp_lanes_sink(struct kp_test *t)
{
	kp_send_sink_begin(t);
	return kp_send_sink_end(t, kp_lanes_drive(t, 0, 1, kp_send_sink_now));
}
