/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kp_report.h - test statistics and the text of /proc/krping_npu, in
 * perftest's units: latency in usec, bandwidth in MiB/s (2^20 bytes),
 * message rate in Mpps.
 */
#ifndef KP_REPORT_H
#define KP_REPORT_H

#include "kp_compat.h"

struct kp_lat_result {
	u32 bytes;
	u32 iters;
	u64 t_min, t_max, t_typical, t_avg, t_stdev, p99, p999;	/* ns */
};

struct kp_bw_result {
	u32 bytes;
	u32 iters;
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
 * Shortest time any @window consecutive messages took, from the post of the
 * first to the completion of the last: the base of BW peak.  @post and
 * @done hold @n timestamps in ns; @window is clamped to [1, n].
 */
u64 kp_bw_best_window(const u64 *post, const u64 *done, u32 n, u32 window);

/*
 * @iters messages of @bytes each in @total_ns; the best @window messages in
 * @best_ns.
 */
void kp_bw_compute(u32 bytes, u32 iters, u64 total_ns, u32 window,
		   u64 best_ns, struct kp_bw_result *r);

/* The one-line results; each returns what snprintf returns. */
int kp_lat_format(char *buf, size_t len, const char *mode,
		  const struct kp_lat_result *r);
int kp_bw_format(char *buf, size_t len, const char *mode,
		 const struct kp_bw_result *r);
int kp_ping_format(char *buf, size_t len, u32 rounds, u32 bytes,
		   bool validated);

/* One test's line of /proc/krping_npu, without its result line. */
int kp_record_format(char *buf, size_t len, u32 id, const char *role,
		     const char *mode, const char *mem, const char *dev,
		     const char *state, const struct kp_counters *c);

/* The header line naming kp_record_format's columns. */
int kp_record_header(char *buf, size_t len);

#endif /* KP_REPORT_H */
