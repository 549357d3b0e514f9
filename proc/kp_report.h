/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kp_report.h - test statistics and the text of /proc/krping_npu, in
 * perftest's units: latency in usec, bandwidth in MiB/s (2^20 bytes),
 * message rate in Mpps.
 */
#ifndef KP_REPORT_H
#define KP_REPORT_H

#include "kp_compat.h"

/* Points of the latency CDF kept with a result, in per mille. */
#define KP_CDF_POINTS	16
extern const u16 kp_cdf_permille[KP_CDF_POINTS];

struct kp_lat_result {
	u32 bytes;
	u64 iters;
	u64 t_min, t_max, t_typical, t_avg, t_stdev, p99, p999;	/* ns */
	u64 cdf[KP_CDF_POINTS];	/* ns at each of kp_cdf_permille */
};

struct kp_bw_result {
	u32 bytes;
	u64 iters;
	u64 bw_peak_x100;	/* MiB/s, times 100 */
	u64 bw_avg_x100;	/* MiB/s, times 100 */
	u64 msgrate_x1e6;	/* Mpps, times 10^6 */
};

struct kp_counters {
	u64 send_msgs, send_bytes;
	u64 recv_msgs, recv_bytes;
	u64 read_msgs, read_bytes;
	u64 write_msgs, write_bytes;
};

/*
 * Sort the @n round-trip samples @ns in place, divide each by @div (2 for a
 * ping-pong reported one way, 1 for READ) and fill @r.  Percentiles are by
 * nearest rank; t_typical is the median sample.  @n must be at least 1.
 */
void kp_lat_compute(u64 *ns, u32 n, u32 div, u32 bytes,
		    struct kp_lat_result *r);

/*
 * BW peak's base, kept while a stream runs: the shortest time any @window
 * consecutive messages took, from the post of the first to the completion
 * of the last.  Post times live in a ring of KP_BW_RING entries, enough for
 * @window plus KP_MAX_TXDEPTH messages in flight.
 */
#define KP_BW_RING	2048u

struct kp_bw_track {
	u64 *post;		/* KP_BW_RING post times, ns */
	u32 window;		/* 1..KP_MAX_TXDEPTH */
	u64 best;		/* ns; ~0 until @window messages completed */
};

void kp_bw_track_init(struct kp_bw_track *t, u64 *ring, u32 window);

static inline void kp_bw_track_post(struct kp_bw_track *t, u64 idx, u64 ns)
{
	t->post[idx & (KP_BW_RING - 1)] = ns;
}

/* Message @idx (completions come in order) completed at @ns. */
void kp_bw_track_done(struct kp_bw_track *t, u64 idx, u64 ns);

/*
 * @iters messages of @bytes each in @total_ns; the best @window messages in
 * @best_ns.
 */
void kp_bw_compute(u32 bytes, u64 iters, u64 total_ns, u32 window,
		   u64 best_ns, struct kp_bw_result *r);

/* The one-line results; each returns what snprintf returns. */
int kp_lat_format(char *buf, size_t len, const char *mode,
		  const struct kp_lat_result *r);
int kp_bw_format(char *buf, size_t len, const char *mode,
		 const struct kp_bw_result *r);
int kp_ping_format(char *buf, size_t len, u32 rounds, u32 bytes,
		   bool validated);

/* Interim figures of a running test: the last progress interval. */
struct kp_progress {
	u32 bytes;		/* message size now running */
	u64 iters;		/* iterations so far, this size */
	u64 elapsed_ms;		/* since this size started */
	u64 bw_x100;		/* bw: MiB/s over the interval, times 100 */
	u64 t_avg, t_max;	/* rlat/wlat: ns over the interval */
	u32 errors;		/* failed completions or checks so far */
};

int kp_progress_format(char *buf, size_t len, const char *mode,
		       const struct kp_progress *p);

/* Who and where a result comes from, for its JSON object. */
struct kp_json_ctx {
	u32 id;
	const char *role;
	const char *mode;
	const char *mem;
	const char *dev;
	const char *kernel;
	u32 duration_s;		/* 0: a count run */
};

/*
 * One JSON object (one line, no newline) with perftest's --out_json names;
 * each returns what snprintf returns.
 */
int kp_lat_json(char *buf, size_t len, const struct kp_json_ctx *c,
		const struct kp_lat_result *r);
int kp_bw_json(char *buf, size_t len, const struct kp_json_ctx *c,
	       const struct kp_bw_result *r);

/* One test's line of /proc/krping_npu, without its result line. */
int kp_record_format(char *buf, size_t len, u32 id, const char *role,
		     const char *mode, const char *mem, const char *dev,
		     const char *state, const struct kp_counters *c);

/* Bytes a record line may need: 10-digit id, 63-byte device, 20-digit counters. */
#define KP_RECORD_MAX	320

/* The header line naming kp_record_format's columns. */
int kp_record_header(char *buf, size_t len);

#endif /* KP_REPORT_H */
