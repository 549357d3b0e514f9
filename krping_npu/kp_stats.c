// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_stats.c - timestamp storage of the measured loops, when they end
 * (count or duration), their progress reports and their results.
 * Everything is allocated before a loop starts; a loop only stores
 * timestamps, and a progress report costs one lock and one dmesg line per
 * interval.
 */
#include <linux/ktime.h>
#include <linux/kernel_stat.h>
#include <linux/sched/cputime.h>
#include <linux/sched/signal.h>
#include <linux/sched/stat.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "krping_npu.h"

/*
 * The storage of what @c's loop measures: a bw stream's window and CPU
 * accounting (each connection its own), or a latency loop's samples and
 * histogram (the test's; latency tests have one connection).
 */
int kp_stats_alloc(struct kp_conn *c)
{
	struct kp_test *t = c->t;
	struct kp_stream *st = &c->stream;

	/* a server that only answers or serves one-sided ops times nothing */
	if (t->opts.role == KP_ROLE_SERVER && !t->duplex)
		return 0;
	if (kp_mode_bw(t->mode)) {
		st->ring = vmalloc(array_size(KP_BW_RING, sizeof(u64)));
		st->slot_buf = vmalloc(array_size(KP_BW_SLOTS, sizeof(u64)));
		/* each CPU's softirq work at the start, then at the end */
		st->softirq_ns = kcalloc(2 * nr_cpu_ids, sizeof(u64),
					 GFP_KERNEL);
		/* each tracked on its own: kp_stats_free() frees what is */
		st->cpus_held = zalloc_cpumask_var(&st->cpus_run, GFP_KERNEL);
		if (!st->ring || !st->slot_buf || !st->softirq_ns ||
		    !st->cpus_held) {
			kp_err(t, "no memory for a bw stream's window and CPU time accounting");
			kp_stats_free(c);
			return -ENOMEM;
		}
		return 0;
	}
	/*
	 * Every iteration of every run goes into the histogram; a count
	 * run (at most KP_MAX_COUNT) keeps its samples too, for exact
	 * figures.
	 */
	t->hist = vmalloc(sizeof(*t->hist));
	if (!t->hist) {
		kp_err(t, "no memory for a latency histogram");
		return -ENOMEM;
	}
	kp_hist_reset(t->hist);
	t->nsamples = t->count;
	if (!t->nsamples)
		return 0;
	t->samples = vmalloc(array_size(t->nsamples, sizeof(u64)));
	if (!t->samples) {
		kp_err(t, "no memory for %u timestamps", t->nsamples);
		kp_lat_free(t);
		return -ENOMEM;
	}
	return 0;
}

/* A latency loop's samples and histogram go (after a size, or the test). */
void kp_lat_free(struct kp_test *t)
{
	vfree(t->samples);
	t->samples = NULL;
	t->nsamples = 0;
	vfree(t->hist);
	t->hist = NULL;
}

/* ... and a bw stream's (after a size, or when @c goes). */
void kp_stats_free(struct kp_conn *c)
{
	struct kp_stream *st = &c->stream;

	vfree(st->ring);
	st->ring = NULL;
	vfree(st->slot_buf);
	st->slot_buf = NULL;
	if (st->cpus_held)
		free_cpumask_var(st->cpus_run);
	st->cpus_held = false;
	kfree(st->softirq_ns);
	st->softirq_ns = NULL;
}

/* The system time of the current thread so far, ns. */
static u64 kp_thread_ns(void)
{
	u64 ut, st;

	task_cputime_adjusted(current, &ut, &st);
	return st;
}

/*
 * Softirq work on each CPU of @cpus so far that no other figure holds,
 * ns, into @ns[cpu]: the run time of the CPU's ksoftirqd (softirqs
 * deferred to that thread), and with IRQ_TIME_ACCOUNTING the softirq time
 * the kernel measured apart from every task (CPUTIME_SOFTIRQ, less the
 * ticks of ksoftirqd's it also holds, which its run time replaces).
 * Without it, softirq run on a task's back is in that task's time (the
 * stream thread's included), and the tick-sampled CPUTIME_SOFTIRQ would
 * count it a second time: it is left out, and softirq on the back of
 * other tasks or the idle loop goes uncounted.  (A kernel built with it
 * may still turn it off at boot, on an unstable TSC: then the sampled
 * figure counts the thread's share again.)
 */
static void kp_softirq_snap(const struct cpumask *cpus, u64 *ns)
{
	struct task_struct *p;
	unsigned int cpu;

	for_each_cpu(cpu, cpus) {
#ifdef CONFIG_IRQ_TIME_ACCOUNTING
		struct kernel_cpustat kcs;

		kcpustat_cpu_fetch(&kcs, cpu);
		ns[cpu] = kcs.cpustat[CPUTIME_SOFTIRQ];
#else
		ns[cpu] = 0;
#endif
	}
	rcu_read_lock();
	for_each_process(p) {
		if (!(p->flags & PF_KTHREAD) ||
		    strncmp(p->comm, "ksoftirqd/", 10) ||
		    kstrtouint(p->comm + 10, 10, &cpu) || cpu >= nr_cpu_ids ||
		    !cpumask_test_cpu(cpu, cpus))
			continue;
		ns[cpu] += READ_ONCE(p->se.sum_exec_runtime);
#ifdef CONFIG_IRQ_TIME_ACCOUNTING
		ns[cpu] -= READ_ONCE(p->stime);
#endif
	}
	rcu_read_unlock();
}

/* A bw stream starts: where the CPU time stands. */
static void kp_cpu_begin(struct kp_stream *st)
{
	if (!st->softirq_ns)
		return;
	cpumask_clear(st->cpus_run);
	__cpumask_set_cpu(raw_smp_processor_id(), st->cpus_run);
	kp_softirq_snap(cpu_possible_mask, st->softirq_ns);
	st->run.thread_ns = kp_thread_ns();
}

/*
 * ... and what it used: the thread's time (softirq run on its back
 * included), and the softirq work of the CPUs it ran on that no task's
 * time holds (kp_softirq_snap()).
 */
static void kp_cpu_end(struct kp_stream *st, struct kp_bw_result *r)
{
	u64 thread = kp_thread_ns() - st->run.thread_ns;
	u64 *end = st->softirq_ns + nr_cpu_ids;
	u64 softirq = 0;
	int cpu;

	__cpumask_set_cpu(raw_smp_processor_id(), st->cpus_run);
	kp_softirq_snap(st->cpus_run, end);
	for_each_cpu(cpu, st->cpus_run)
		softirq += end[cpu] - st->softirq_ns[cpu];
	kp_bw_cpu(r, thread, softirq);
}

/*
 * @c's loop starts its measured run @r (the test's, or its stream's): its
 * end and its first progress report.  Returns its start, ns.
 */
u64 kp_run_begin(struct kp_conn *c, struct kp_run *r)
{
	struct kp_test *t = c->t;
	u64 now;

	memset(r, 0, sizeof(*r));
	/* the CPU-time snapshot first: not part of the timed run */
	if (r == &c->stream.run)
		kp_cpu_begin(&c->stream);
	c->run = r;
	/* every latency loop times round trips but a ping-pong's server */
	r->sampled = r == &t->run && !(kp_mode_pingpong(t->mode) &&
				       t->opts.role == KP_ROLE_SERVER);
	now = kp_clock_now(&t->clk);
	r->timed = true;
	r->start_ns = now;
	r->last_ns = now;
	if (t->duration_s)
		r->deadline_ns = now + (u64)t->duration_s * NSEC_PER_SEC;
	/* qps=N: the first connection reports for the test */
	if (t->opts.progress_s && !c->idx) {
		r->interval_ns = (u64)t->opts.progress_s * NSEC_PER_SEC;
		r->next_report_ns = now + r->interval_ns;
	}
	return now;
}

/* A loop ends: how often it yielded, and where. */
void kp_run_end(struct kp_conn *c)
{
	struct kp_run *r = c->run;

	if (!r)
		return;
	c->run = NULL;
	r->timed = false;
	kp_info(c->t, "%s #bytes=%u: %llu iterations, yielded %llu times between them (one in %u), %llu waits yielded to a waiting task, %llu late (%u us %s)",
		kp_mode_name(c->t->mode), c->t->size, r->iters,
		div_u64(r->iters, KP_YIELD_EVERY), KP_YIELD_EVERY,
		r->sched_yields, r->late_waits, KP_LATE_US,
		r->sampled ? "beyond the shortest round trip" :
			     "of busy-polling");
	if (r->shared)
		kp_info(c->t, "%s #bytes=%u: %llu timed waits lost the CPU to another task for over %u us and a round trip, %llu us in all: the figures hold that task's time",
			kp_mode_name(c->t->mode), c->t->size, r->shared,
			KP_SHARE_US, div_u64(r->shared_ns, NSEC_PER_USEC));
}

/* The CPU the loop runs on now counts for its softirq time. */
void kp_loop_cpu(struct kp_conn *c)
{
	if (c->stream.softirq_ns)
		__cpumask_set_cpu(raw_smp_processor_id(), c->stream.cpus_run);
}

/*
 * qps=N: the timed streams of connections @first, @first + @step, ...,
 * just begun one after the other, start now, together.
 */
void kp_run_rebase(struct kp_test *t, u32 first, u32 step)
{
	u64 now = kp_clock_now(&t->clk);
	u32 i;

	for (i = first; i < t->nconns; i += step) {
		struct kp_run *r = &t->conns[i]->stream.run;

		if (r->deadline_ns)
			r->deadline_ns = now + (r->deadline_ns - r->start_ns);
		if (r->next_report_ns)
			r->next_report_ns = now + r->interval_ns;
		r->start_ns = now;
		r->last_ns = now;
	}
}

/* Between two iterations of a measured loop: nothing is being timed. */
void kp_loop_yield(struct kp_conn *c)
{
	kp_loop_cpu(c);
	if (c->run)
		c->run->iters++;
	if (!(++c->loops % KP_YIELD_EVERY))
		cond_resched();
}

/*
 * Does a task wait for this CPU?  The scheduler does not always say so: a
 * worker woken here (a software device's: what a poll waits for) need not
 * preempt the poller, as the fair class decides, and would wait for the
 * tick.  Another runnable task on this CPU is reason enough; a polling
 * loop may read that unlocked (single_task_running()).
 */
bool kp_cpu_wanted(void)
{
	return kp_resched_asked() || !single_task_running();
}

/*
 * Give the CPU to what waits for it: the scheduler's choice where it asked
 * for one (schedule(): cond_resched() does nothing under full preemption,
 * and lazily asked, the tick would take it), else the other runnable task,
 * before us.  Never a progress guarantee: every wait that calls it has
 * its own bound.
 */
void kp_cpu_give(void)
{
	if (kp_resched_asked())
		schedule();
	else
		yield();
}

/*
 * A timed busy-poll of @c gives the CPU when the scheduler asks for it
 * (kp_resched_asked()), as a user process polling its CQ loses it at
 * preemption.  A latency loop's wait (its samples, or the reply a
 * ping-pong's server owes them) gives it to another runnable task only
 * once late, so that an unrelated busy task cannot set the pace of every
 * sample: a software device's worker that the fair class woke here
 * without preempting us waits that long, or for the scheduler's tick
 * before the run's first round trip, which is never late (kp_run_late()).
 * A stream, which times no round trip, gives it to any task that waits
 * for it (rxe's workers from 6.4).  Where the run times round trips, a
 * wait that lost the CPU longer than KP_SHARE_US and than the run's
 * fastest round trip (all the device's work for one) lost it to a
 * co-runner: counted, with the time away, in the result.  @w: what this
 * wait has done so far (KP_WAIT_*).
 */
void kp_run_give(struct kp_conn *c, bool late, unsigned int *w)
{
	struct kp_run *r = c->run;
	u64 t0, away;

	if (!kp_resched_asked() &&
	    (single_task_running() || (r == &c->t->run && !late)))
		return;
	if (!(*w & KP_WAIT_YIELDED))
		r->sched_yields++;
	*w |= KP_WAIT_YIELDED;
	if (!r->sampled) {
		kp_cpu_give();
		return;
	}
	t0 = kp_clock_now(&c->t->clk);
	kp_cpu_give();
	away = kp_clock_now(&c->t->clk) - t0;
	if (away <= max_t(u64, KP_SHARE_US * NSEC_PER_USEC, r->rt_min))
		return;
	r->shared_ns += away;
	if (!(*w & KP_WAIT_SHARED))
		r->shared++;
	*w |= KP_WAIT_SHARED;
}

/*
 * Is a timed wait of @r that has lasted @span ns (from its first check)
 * late?  KP_LATE_US beyond the run's shortest round trip so far where it
 * times round trips (a 64 KiB round trip under TCG is itself over 1 ms),
 * beyond nothing where it does not: kp_wait_late().
 */
bool kp_run_late(const struct kp_run *r, u64 span)
{
	return kp_wait_late(span, r->rt_min, r->sampled,
			    KP_LATE_US * NSEC_PER_USEC);
}

/* How the measured loops wait for a completion: busy-poll, or events. */
unsigned int kp_loop_spin(struct kp_conn *c)
{
	return c->t->opts.events ? 0 : KP_SPIN_ALWAYS;
}

/* Is a loop that has done @iters iterations finished at @now? */
bool kp_run_over(struct kp_conn *c, u64 iters, u64 now)
{
	if (c->run->deadline_ns)
		return now >= c->run->deadline_ns;
	return iters >= c->t->count;
}

void kp_lat_sample(struct kp_conn *c, u64 i, u64 ns)
{
	struct kp_test *t = c->t;
	struct kp_run *r = c->run;

	if (i < t->nsamples)
		t->samples[i] = ns;
	kp_hist_record(t->hist, ns);
	/* 0 is "none yet": a 0 ns sample of a coarse clock counts as 1 */
	if (!r->rt_min || ns < r->rt_min)
		r->rt_min = ns ?: 1;
	r->lat_sum += ns;
	r->lat_n++;
	if (ns > r->lat_max)
		r->lat_max = ns;
}

/* Publish the interval's figures when a report is due. */
void kp_run_tick(struct kp_conn *c, u64 iters, u64 now)
{
	struct kp_run *r = c->run;
	struct kp_progress p = {
		.bytes = c->t->size,
		.iters = iters,
		.errors = c->errors,
	};
	u64 span = now - r->last_ns;

	if (!r->next_report_ns || now < r->next_report_ns)
		return;
	p.elapsed_ms = div_u64(now - r->start_ns, NSEC_PER_MSEC);
	if (kp_mode_bw(c->t->mode)) {
		p.bw_x100 = span ? kp_mul_div((iters - r->last_iters) *
					      c->t->size, 100 * NSEC_PER_SEC,
					      span) >> 20 : 0;
	} else if (r->lat_n) {
		/* ping-pongs report half the round trip, as their results do */
		u32 div = kp_mode_pingpong(c->t->mode) ? 2 : 1;

		p.t_avg = div64_u64(r->lat_sum, r->lat_n * div);
		p.t_max = r->lat_max / div;
	}
	kp_rec_progress(c->t, &p);
	r->last_ns = now;
	r->last_iters = iters;
	r->lat_sum = 0;
	r->lat_max = 0;
	r->lat_n = 0;
	r->next_report_ns = now + r->interval_ns;
}

static int kp_add(struct kp_test *t, struct kp_result *res)
{
	res->mode = t->mode;
	res->duration_s = t->duration_s;
	return kp_rec_add(t, res);
}

/*
 * A latency result of @n iterations: exact from the samples of a count
 * run, from the histogram of a duration run; either way with the
 * histogram of the whole run, which starts afresh for the next size.
 */
int kp_stats_lat(struct kp_conn *c, u64 n, u32 div)
{
	struct kp_result res = { .is_bw = false };
	struct kp_hist *h = c->t->hist;
	u32 used;
	int ret;

	kp_run_end(c);
	if (!h->n || h->n != n) {
		kp_err(c->t, "%llu iterations, %llu timed", n, h->n);
		return -EPROTO;
	}
	if (n <= c->t->nsamples)
		kp_lat_compute(c->t->samples, (u32)n, div, c->t->size, &res.lat);
	else
		kp_hist_compute(h, div, c->t->size, &res.lat);
	res.lat.harness = c->t->harness_ns;
	/* the run's counts outlive its end (kp_run_begin() resets them) */
	res.lat.yields = c->t->run.sched_yields;
	res.lat.late = c->t->run.late_waits;
	res.lat.shared = c->t->run.shared;
	res.lat.shared_ns = c->t->run.shared_ns;
	if (c->t->mode == KP_MODE_WLAT)
		res.lat.variant = c->t->wlat_imm ? "imm" : "write";
	if (c->t->mode == KP_MODE_ALAT)
		res.lat.variant = kp_atomic_name(c->t->opts.atomic);
	if (c->ud)
		res.lat.variant = "ud";
	/*
	 * the loops with a perftest twin: ib_read_lat, ib_write_lat,
	 * ib_send_lat, ib_atomic_lat
	 */
	if (c->t->mode != KP_MODE_FR)
		res.lat.method = c->t->opts.light ? "light" : "perftest";
	used = kp_hist_used(h);
	res.lat.hist = kmalloc_array(used, sizeof(*res.lat.hist), GFP_KERNEL);
	if (!res.lat.hist)
		return -ENOMEM;
	res.lat.nhist = kp_hist_export(h, res.lat.hist, used);
	res.lat.hist_div = div;
	kp_hist_reset(h);
	ret = kp_add(c->t, &res);
	if (ret)
		kfree(res.lat.hist);
	return ret;
}

/*
 * A ping-pong (wlat, slat) of @iters round trips, the first @warm untimed,
 * has ended: the client's result is half the round trip; the server,
 * which times nothing, records what it answered.
 */
int kp_stats_pingpong(struct kp_conn *c, u64 iters, u64 warm)
{
	if (c->t->opts.role == KP_ROLE_CLIENT)
		return kp_stats_lat(c, iters - warm, 2);
	kp_run_end(c);
	kp_rec_result(c->t, "%s served #bytes=%u #iterations=%llu",
		      kp_mode_name(c->t->mode), c->t->size,
		      (unsigned long long)iters);
	return 0;
}

/*
 * @c's timed stream of @n messages, @total_ns long, is over: its result
 * waits in the stream for the test's (kp_stats_bw_lanes()).
 */
void kp_stats_bw(struct kp_conn *c, u64 n, u64 total_ns)
{
	struct kp_stream *st = &c->stream;
	struct kp_bw_result *r = &st->res;
	u64 best = st->track.best;

	kp_run_end(c);
	/* fewer messages than a window: the peak is the average */
	if (best == ~0ull)
		best = 0;
	kp_bw_compute(c->t->size, n, total_ns, st->track.window, best, r);
	kp_cpu_end(st, r);
	r->gbits = c->t->opts.gbits;
	/* qps=N: which MRs the data went through (kp_smr_wanted()) */
	r->variant = c->ud ? "ud" : c->t->nconns > 1 && !kp_smr_wanted(c->t) ?
		     "mr_per_qp" : NULL;
	r->qp = c->idx + 1;
	/* cpus=: its thread's CPU; otherwise the writer's, unless it moved */
	if (cpumask_weight(st->cpus_run) == 1)
		r->cpu = cpumask_first(st->cpus_run);
}

/*
 * The result of a bw test: of its one connection, or over all its
 * connections, @nthreads threads driving them (connection i by thread
 * i mod @nthreads): the aggregate from the first start to the last end,
 * its peak that of the summed rate over the longest of their windows,
 * with the CPU time of every thread (each connection of a thread
 * measured it over its own stream: the longest counts), then a line per
 * connection.
 */
int kp_stats_bw_lanes(struct kp_test *t, u32 nthreads)
{
	struct kp_result res = { .is_bw = true };
	u64 start = U64_MAX, end = 0, thread = 0, softirq = 0, window = 0;
	u64 peak = 0, gpeak = 0, *scratch;
	struct kp_bw_slots *slots;
	struct kp_bw_result *qp;
	u32 i, k;
	int ret;

	if (t->nconns == 1) {
		res.bw = t->conns[0]->stream.res;
		res.bw.qp = 0;
		return kp_add(t, &res);
	}
	qp = kcalloc(t->nconns, sizeof(*qp), GFP_KERNEL);
	slots = kcalloc(t->nconns, sizeof(*slots), GFP_KERNEL);
	scratch = vmalloc(array_size(2 * KP_BW_SLOTS, sizeof(u64)));
	if (!qp || !slots || !scratch) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < t->nconns; i++) {
		const struct kp_stream *st = &t->conns[i]->stream;

		qp[i] = st->res;
		slots[i] = st->slots;
		start = min(start, st->run.start_ns);
		end = max(end, st->end_ns);
		/* the peak's window: the longest of the connections' own */
		window = max(window, st->track.best != ~0ull ? st->track.best :
			     st->end_ns - st->run.start_ns);
	}
	kp_bw_slots_peak(slots, t->nconns, window, scratch, &peak, &gpeak);
	for (k = 0; k < nthreads; k++) {
		u64 th = 0, si = 0;

		for (i = k; i < t->nconns; i += nthreads) {
			th = max(th, qp[i].cpu_thread_ns);
			si = max(si, qp[i].cpu_softirq_ns);
		}
		thread += th;
		softirq += si;
	}
	kp_bw_sum(qp, t->nconns, end - start, peak, gpeak, thread, softirq,
		  &res.bw);
	res.bw.gbits = t->opts.gbits;
	ret = kp_add(t, &res);
	for (i = 0; i < t->nconns && !ret; i++) {
		res.bw = qp[i];
		ret = kp_add(t, &res);
	}
out:
	vfree(scratch);
	kfree(slots);
	kfree(qp);
	return ret;
}

/*
 * A latency figure of @res against its bound @max_us (0: none): a dmesg
 * line saying by how much it missed, and -EDOM; else 0.
 */
static int kp_lat_bound(struct kp_test *t, const struct kp_result *res,
			const char *name, u64 ns, u32 max_us, const char *opt)
{
	u64 max = (u64)max_us * NSEC_PER_USEC, over;

	if (!max_us || ns <= max)
		return 0;
	/* hundredths of a percent over the bound */
	over = div64_u64((ns - max) * 10000, max);
	kp_err(t, "%s %u B: %s %llu.%02u usec above %s=%u: %llu.%02llu%% over",
	       kp_mode_name(res->mode), res->lat.bytes, name,
	       KP_US_INT(ns), KP_US_FRAC(ns), opt, max_us,
	       over / 100, over % 100);
	return -EDOM;
}

/*
 * expect_bw=, max_lat=, max_p99=: every result of the client's against
 * its bound (a bw test's whole, not each QP's), each miss one dmesg line
 * saying by how much; -EDOM once one missed, after all were checked.  The
 * results stay in the record either way.
 */
int kp_stats_verdict(struct kp_test *t)
{
	const struct kp_opts *o = &t->opts;
	const struct kp_record *rec = t->rec;
	int ret = 0;
	u32 i;

	for (i = 0; i < rec->nres; i++) {
		const struct kp_result *res = &rec->res[i];
		const struct kp_bw_result *b = &res->bw;
		u64 want = (u64)o->expect_bw * 100, short_by;

		if (!res->is_bw) {
			ret = kp_lat_bound(t, res, "t_typical", res->lat.t_typical,
					   o->max_lat_us, "max_lat") ?: ret;
			ret = kp_lat_bound(t, res, "99%", res->lat.p99,
					   o->max_p99_us, "max_p99") ?: ret;
			continue;
		}
		if (!o->expect_bw || b->qp || b->bw_avg_x100 >= want)
			continue;
		short_by = div64_u64((want - b->bw_avg_x100) * 10000, want);
		kp_err(t, "%s %u B: BW_average %llu.%02llu MiB/s below expect_bw=%u: %llu.%02llu%% short",
		       kp_mode_name(res->mode), b->bytes, b->bw_avg_x100 / 100,
		       b->bw_avg_x100 % 100, o->expect_bw, short_by / 100,
		       short_by % 100);
		ret = -EDOM;
	}
	return ret;
}
