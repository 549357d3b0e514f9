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
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "krping_npu.h"

int kp_stats_alloc(struct kp_cb *cb)
{
	/* a server that only answers or serves one-sided ops times nothing */
	if (cb->opts.role == KP_ROLE_SERVER &&
	    !(cb->mode == KP_MODE_BW && cb->duplex))
		return 0;
	if (kp_mode_bw(cb->mode)) {
		cb->nsamples = KP_BW_RING;
		cb->softirq_ns = kcalloc(nr_cpu_ids, sizeof(u64), GFP_KERNEL);
		if (!cb->softirq_ns || !zalloc_cpumask_var(&cb->cpus_run,
							   GFP_KERNEL)) {
			kp_err(cb, "no memory for CPU time accounting");
			kp_stats_free(cb);
			return -ENOMEM;
		}
	} else {
		/*
		 * Every iteration of every run goes into the histogram; a
		 * count run (at most KP_MAX_COUNT) keeps its samples too, for
		 * exact figures.
		 */
		cb->hist = vmalloc(sizeof(*cb->hist));
		if (!cb->hist) {
			kp_err(cb, "no memory for a latency histogram");
			return -ENOMEM;
		}
		kp_hist_reset(cb->hist);
		cb->nsamples = cb->count;
		if (!cb->nsamples)
			return 0;
	}
	cb->samples = vmalloc(array_size(cb->nsamples, sizeof(u64)));
	if (!cb->samples) {
		kp_err(cb, "no memory for %u timestamps", cb->nsamples);
		kp_stats_free(cb);
		return -ENOMEM;
	}
	return 0;
}

void kp_stats_free(struct kp_cb *cb)
{
	vfree(cb->samples);
	cb->samples = NULL;
	cb->nsamples = 0;
	vfree(cb->hist);
	cb->hist = NULL;
	if (cb->softirq_ns)
		free_cpumask_var(cb->cpus_run);
	kfree(cb->softirq_ns);
	cb->softirq_ns = NULL;
}

/* The system time of the current thread so far, ns. */
static u64 kp_thread_ns(void)
{
	u64 ut, st;

	task_cputime_adjusted(current, &ut, &st);
	return st;
}

/* Softirq time of @cpu so far, ns (tick-sampled without IRQ_TIME_ACCOUNTING). */
static u64 kp_softirq_ns(int cpu)
{
	struct kernel_cpustat kcs;

	kcpustat_cpu_fetch(&kcs, cpu);
	return kcs.cpustat[CPUTIME_SOFTIRQ];
}

/* A bw stream starts: where the CPU time stands. */
static void kp_cpu_begin(struct kp_cb *cb)
{
	int cpu;

	if (!cb->softirq_ns)
		return;
	cpumask_clear(cb->cpus_run);
	__cpumask_set_cpu(raw_smp_processor_id(), cb->cpus_run);
	for_each_possible_cpu(cpu)
		cb->softirq_ns[cpu] = kp_softirq_ns(cpu);
	cb->run.thread_ns = kp_thread_ns();
}

/* ... and what it used: the thread's time, softirq on the CPUs it ran on. */
static void kp_cpu_end(struct kp_cb *cb, struct kp_bw_result *r)
{
	u64 softirq = 0;
	int cpu;

	__cpumask_set_cpu(raw_smp_processor_id(), cb->cpus_run);
	for_each_cpu(cpu, cb->cpus_run)
		softirq += kp_softirq_ns(cpu) - cb->softirq_ns[cpu];
	kp_bw_cpu(r, kp_thread_ns() - cb->run.thread_ns, softirq);
}

/* A loop starts: its end and its first progress report. */
void kp_run_begin(struct kp_cb *cb)
{
	struct kp_run *r = &cb->run;
	u64 now;

	memset(r, 0, sizeof(*r));
	/* the CPU-time snapshot first: not part of the timed run */
	kp_cpu_begin(cb);
	now = ktime_get_ns();
	r->timed = true;
	r->start_ns = now;
	r->last_ns = now;
	if (cb->duration_s)
		r->deadline_ns = now + (u64)cb->duration_s * NSEC_PER_SEC;
	/* qps=N: the first connection reports for the test */
	if (cb->opts.progress_s && !cb->lane) {
		r->interval_ns = (u64)cb->opts.progress_s * NSEC_PER_SEC;
		r->next_report_ns = now + r->interval_ns;
	}
}

/* A loop ends: how often it yielded, and where. */
void kp_run_end(struct kp_cb *cb)
{
	struct kp_run *r = &cb->run;

	if (!r->timed)
		return;
	r->timed = false;
	kp_info(cb, "%s #bytes=%u: %llu iterations, yielded %llu times between them (one in %u), %llu waits yielded after %u us of busy-polling",
		kp_mode_name(cb->mode), cb->size, r->iters,
		div_u64(r->iters, KP_YIELD_EVERY), KP_YIELD_EVERY, r->late_waits, KP_LATE_US);
}

/* The CPU the loop runs on now counts for its softirq time. */
void kp_loop_cpu(struct kp_cb *cb)
{
	if (cb->softirq_ns)
		__cpumask_set_cpu(raw_smp_processor_id(), cb->cpus_run);
}

/*
 * qps=N: the timed streams of lanes @first, @first + @step, ... of @lead,
 * just begun one after the other, start now, together.
 */
void kp_run_rebase(struct kp_cb *lead, u32 first, u32 step)
{
	u64 now = ktime_get_ns();
	u32 i;

	for (i = first; i < lead->nlanes; i += step) {
		struct kp_run *r = &lead->lanes[i]->run;

		if (r->deadline_ns)
			r->deadline_ns = now + (r->deadline_ns - r->start_ns);
		if (r->next_report_ns)
			r->next_report_ns = now + r->interval_ns;
		r->start_ns = now;
		r->last_ns = now;
	}
}

/* Between two iterations of a measured loop: nothing is being timed. */
void kp_loop_yield(struct kp_cb *cb)
{
	struct kp_run *r = &cb->run;

	kp_loop_cpu(cb);
	if (!(++r->iters % KP_YIELD_EVERY))
		cond_resched();
}

/* How the measured loops wait for a completion: busy-poll, or events. */
unsigned int kp_loop_spin(struct kp_cb *cb)
{
	return cb->opts.events ? 0 : KP_SPIN_ALWAYS;
}

/* Is a loop that has done @iters iterations finished at @now? */
bool kp_run_over(struct kp_cb *cb, u64 iters, u64 now)
{
	if (cb->run.deadline_ns)
		return now >= cb->run.deadline_ns;
	return iters >= cb->count;
}

void kp_lat_sample(struct kp_cb *cb, u64 i, u64 ns)
{
	struct kp_run *r = &cb->run;

	if (i < cb->nsamples)
		cb->samples[i] = ns;
	kp_hist_record(cb->hist, ns);
	r->lat_sum += ns;
	r->lat_n++;
	if (ns > r->lat_max)
		r->lat_max = ns;
}

/* Publish the interval's figures when a report is due. */
void kp_run_tick(struct kp_cb *cb, u64 iters, u64 now)
{
	struct kp_run *r = &cb->run;
	struct kp_progress p = {
		.bytes = cb->size,
		.iters = iters,
		.errors = cb->errors,
	};
	u64 span = now - r->last_ns;

	if (!r->next_report_ns || now < r->next_report_ns)
		return;
	p.elapsed_ms = div_u64(now - r->start_ns, NSEC_PER_MSEC);
	if (kp_mode_bw(cb->mode)) {
		p.bw_x100 = span ? mul_u64_u64_div_u64((iters - r->last_iters) *
						       cb->size,
						       100 * NSEC_PER_SEC,
						       span) >> 20 : 0;
	} else if (r->lat_n) {
		/* ping-pongs report half the round trip, as their results do */
		u32 div = kp_mode_pingpong(cb->mode) ? 2 : 1;

		p.t_avg = div64_u64(r->lat_sum, r->lat_n * div);
		p.t_max = r->lat_max / div;
	}
	kp_rec_progress(cb, &p);
	r->last_ns = now;
	r->last_iters = iters;
	r->lat_sum = 0;
	r->lat_max = 0;
	r->lat_n = 0;
	r->next_report_ns = now + r->interval_ns;
}

static int kp_add(struct kp_cb *cb, struct kp_result *res)
{
	res->mode = cb->mode;
	res->duration_s = cb->duration_s;
	return kp_rec_add(cb, res);
}

/*
 * A latency result of @n iterations: exact from the samples of a count
 * run, from the histogram of a duration run; either way with the
 * histogram of the whole run, which starts afresh for the next size.
 */
int kp_stats_lat(struct kp_cb *cb, u64 n, u32 div)
{
	struct kp_result res = { .is_bw = false };
	struct kp_hist *h = cb->hist;
	u32 used;
	int ret;

	kp_run_end(cb);
	if (!h->n || h->n != n) {
		kp_err(cb, "%llu iterations, %llu timed", n, h->n);
		return -EPROTO;
	}
	if (n <= cb->nsamples)
		kp_lat_compute(cb->samples, (u32)n, div, cb->size, &res.lat);
	else
		kp_hist_compute(h, div, cb->size, &res.lat);
	used = kp_hist_used(h);
	res.lat.hist = kmalloc_array(used, sizeof(*res.lat.hist), GFP_KERNEL);
	if (!res.lat.hist)
		return -ENOMEM;
	res.lat.nhist = kp_hist_export(h, res.lat.hist, used);
	res.lat.hist_div = div;
	kp_hist_reset(h);
	ret = kp_add(cb, &res);
	if (ret)
		kfree(res.lat.hist);
	return ret;
}

/*
 * A ping-pong (wlat, slat) of @iters round trips, the first @warm untimed,
 * has ended: the client's result is half the round trip; the server,
 * which times nothing, records what it answered.
 */
int kp_stats_pingpong(struct kp_cb *cb, u64 iters, u64 warm)
{
	if (cb->opts.role == KP_ROLE_CLIENT)
		return kp_stats_lat(cb, iters - warm, 2);
	kp_run_end(cb);
	kp_rec_result(cb, "%s served #bytes=%u #iterations=%llu",
		      kp_mode_name(cb->mode), cb->size,
		      (unsigned long long)iters);
	return 0;
}

static void kp_stats_bw_fill(struct kp_cb *cb, u64 n, u64 total_ns,
			     struct kp_bw_result *r)
{
	u64 best = cb->track.best;

	kp_run_end(cb);
	/* fewer messages than a window: the peak is the average */
	if (best == ~0ull)
		best = 0;
	kp_bw_compute(cb->size, n, total_ns, cb->track.window, best, r);
	kp_cpu_end(cb, r);
	r->gbits = cb->opts.gbits;
}

int kp_stats_bw(struct kp_cb *cb, u64 n, u64 total_ns)
{
	struct kp_result res = { .is_bw = true };

	kp_stats_bw_fill(cb, n, total_ns, &res.bw);
	return kp_add(cb, &res);
}

/* A connection's stream of a qps=N test: its result waits for the others'. */
void kp_stats_bw_lane(struct kp_cb *cb, u64 n, u64 total_ns)
{
	kp_stats_bw_fill(cb, n, total_ns, &cb->lane_res);
	cb->lane_res.qp = cb->lane + 1;
}

/*
 * The result of a stream over all the lead's connections, @nthreads
 * threads driving them (lane i by thread i mod @nthreads): the aggregate
 * from the first start to the last end, with the CPU time of every
 * thread (each lane of a thread measured it over its own stream: the
 * longest counts), then a line per connection.
 */
int kp_stats_bw_lanes(struct kp_cb *lead, u32 nthreads)
{
	struct kp_result res = { .is_bw = true };
	u64 start = U64_MAX, end = 0, thread = 0, softirq = 0;
	struct kp_bw_result *qp;
	u32 i, t;
	int ret;

	if (lead->nlanes == 1) {
		res.bw = lead->lane_res;
		res.bw.qp = 0;
		return kp_add(lead, &res);
	}
	qp = kcalloc(lead->nlanes, sizeof(*qp), GFP_KERNEL);
	if (!qp)
		return -ENOMEM;
	for (i = 0; i < lead->nlanes; i++) {
		struct kp_cb *l = lead->lanes[i];

		qp[i] = l->lane_res;
		start = min(start, l->run.start_ns);
		end = max(end, l->stream.end_ns);
	}
	for (t = 0; t < nthreads; t++) {
		u64 th = 0, si = 0;

		for (i = t; i < lead->nlanes; i += nthreads) {
			th = max(th, qp[i].cpu_thread_ns);
			si = max(si, qp[i].cpu_softirq_ns);
		}
		thread += th;
		softirq += si;
	}
	kp_bw_sum(qp, lead->nlanes, end - start, thread, softirq, &res.bw);
	res.bw.gbits = lead->opts.gbits;
	ret = kp_add(lead, &res);
	for (i = 0; i < lead->nlanes && !ret; i++) {
		res.bw = qp[i];
		ret = kp_add(lead, &res);
	}
	kfree(qp);
	return ret;
}
