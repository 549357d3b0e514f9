// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_stats.c - timestamp storage of the measured loops, when they end
 * (count or duration), their progress reports and their results.
 * Everything is allocated before a loop starts; a loop only stores
 * timestamps, and a progress report costs one lock and one dmesg line per
 * interval.
 */
#include <linux/ktime.h>
#include <linux/vmalloc.h>

#include "krping_npu.h"

int kp_stats_alloc(struct kp_cb *cb)
{
	/* a server that only answers or serves one-sided ops times nothing */
	if (cb->opts.role == KP_ROLE_SERVER &&
	    !(cb->mode == KP_MODE_BW && cb->duplex))
		return 0;
	/* duration runs keep the last KP_MAX_COUNT latency samples */
	cb->nsamples = cb->mode == KP_MODE_BW ? KP_BW_RING :
		       cb->count ?: KP_MAX_COUNT;
	cb->samples = vmalloc(array_size(cb->nsamples, sizeof(u64)));
	if (!cb->samples) {
		kp_err(cb, "no memory for %u timestamps", cb->nsamples);
		return -ENOMEM;
	}
	return 0;
}

void kp_stats_free(struct kp_cb *cb)
{
	vfree(cb->samples);
	cb->samples = NULL;
	cb->nsamples = 0;
}

/* A loop starts: its end and its first progress report. */
void kp_run_begin(struct kp_cb *cb)
{
	struct kp_run *r = &cb->run;
	u64 now = ktime_get_ns();

	memset(r, 0, sizeof(*r));
	r->start_ns = now;
	r->last_ns = now;
	if (cb->duration_s)
		r->deadline_ns = now + (u64)cb->duration_s * NSEC_PER_SEC;
	if (cb->opts.progress_s) {
		r->interval_ns = (u64)cb->opts.progress_s * NSEC_PER_SEC;
		r->next_report_ns = now + r->interval_ns;
	}
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

	cb->samples[i % cb->nsamples] = ns;
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
	if (cb->mode == KP_MODE_BW) {
		p.bw_x100 = span ? mul_u64_u64_div_u64((iters - r->last_iters) *
						       cb->size,
						       100 * NSEC_PER_SEC,
						       span) >> 20 : 0;
	} else if (r->lat_n) {
		/* wlat reports half the round trip, as its result does */
		u32 div = cb->mode == KP_MODE_WLAT ? 2 : 1;

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

/* @n iterations, of which the last cb->nsamples are in cb->samples. */
int kp_stats_lat(struct kp_cb *cb, u64 n, u32 div)
{
	struct kp_result res = { .is_bw = false };

	kp_lat_compute(cb->samples, (u32)min_t(u64, n, cb->nsamples), div,
		       cb->size, &res.lat);
	res.lat.iters = n;
	return kp_add(cb, &res);
}

int kp_stats_bw(struct kp_cb *cb, u64 n, u64 total_ns)
{
	struct kp_result res = { .is_bw = true };
	u64 best = cb->track.best;

	/* fewer messages than a window: the peak is the average */
	if (best == ~0ull)
		best = 0;
	kp_bw_compute(cb->size, n, total_ns, cb->track.window, best, &res.bw);
	return kp_add(cb, &res);
}
