// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_stats.c - timestamp storage of the test loops and their results.
 * Everything is allocated before a loop starts; nothing is printed in one.
 */
#include <linux/vmalloc.h>

#include "krping_npu.h"

int kp_stats_alloc(struct kp_cb *cb)
{
	size_t n = cb->count;

	if (cb->mode == KP_MODE_BW) {
		cb->tpost = vmalloc(array_size(n, sizeof(u64)));
		cb->tdone = vmalloc(array_size(n, sizeof(u64)));
		if (!cb->tpost || !cb->tdone)
			goto nomem;
	} else {
		cb->samples = vmalloc(array_size(n, sizeof(u64)));
		if (!cb->samples)
			goto nomem;
	}
	return 0;
nomem:
	kp_err(cb, "no memory for %u timestamps", cb->count);
	kp_stats_free(cb);
	return -ENOMEM;
}

void kp_stats_free(struct kp_cb *cb)
{
	vfree(cb->samples);
	vfree(cb->tpost);
	vfree(cb->tdone);
	cb->samples = NULL;
	cb->tpost = NULL;
	cb->tdone = NULL;
}

void kp_stats_lat(struct kp_cb *cb, u32 n, u32 div)
{
	struct kp_lat_result r;
	char line[KP_RESULT_MAX];

	kp_lat_compute(cb->samples, n, div, cb->size, &r);
	kp_lat_format(line, sizeof(line), kp_mode_name(cb->mode), &r);
	kp_rec_result(cb, "%s", line);
}

void kp_stats_bw(struct kp_cb *cb, u32 n, u64 total_ns)
{
	u32 window = min(cb->opts.txdepth, n);
	struct kp_bw_result r;
	char line[KP_RESULT_MAX];
	u64 best;

	best = kp_bw_best_window(cb->tpost, cb->tdone, n, window);
	kp_bw_compute(cb->size, n, total_ns, window, best, &r);
	kp_bw_format(line, sizeof(line), kp_mode_name(cb->mode), &r);
	kp_rec_result(cb, "%s", line);
}
