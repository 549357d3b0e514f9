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

/*
 * A non-empty bucket of a latency histogram (struct kp_hist), 8 bytes: a
 * result keeps these for as long as /proc lists it.  2^52 iterations are
 * more than a day-long run at 10^10 a second.
 */
struct kp_hist_bucket {
	u64 count:52;
	u64 idx:12;		/* < KP_HIST_BUCKETS */
};

/* ns as usec with two decimals, rounded: "%llu.%02u" of these two */
#define KP_US_INT(ns)	((unsigned long long)(((ns) + 5) / 10 / 100))
#define KP_US_FRAC(ns)	((unsigned int)(((ns) + 5) / 10 % 100))

struct kp_lat_result {
	u32 bytes;
	u64 iters;
	u64 t_min, t_max, t_typical, t_avg, t_stdev, p99, p999;	/* ns */
	/*
	 * ns: the harness's own share of an interval, from a null loop: the
	 * median of intervals timed as the loop times its own around one
	 * empty poll of the CQ (a clock read, the poll, a clock read),
	 * divided as the figures are
	 */
	u64 harness;
	/*
	 * The client's timed waits: those that gave the CPU to a task
	 * waiting for it (a software device's worker), and those late
	 * (KP_LATE_US beyond the run's shortest round trip)
	 */
	u64 yields, late;
	/*
	 * Those that lost the CPU over KP_SHARE_US (to a co-runner, not a
	 * device's work item), and the ns away in all: the figures hold
	 * that task's time
	 */
	u64 shared, shared_ns;
	/* wlat: the variant that ran, "write" or "imm"; NULL elsewhere */
	const char *variant;
	/* the method: "perftest", or "light" (wlat, slat); NULL: not said */
	const char *method;
	u64 cdf[KP_CDF_POINTS];	/* ns at each of kp_cdf_permille */
	/* the whole run's histogram, non-empty buckets in order (or none) */
	struct kp_hist_bucket *hist;
	u32 nhist;
	u32 hist_div;		/* its values are divided by this */
};

/*
 * A log-linear latency histogram (HdrHistogram's scheme): values below
 * 2 * KP_HIST_SUB ns are counted exactly, each power of two above in
 * KP_HIST_SUB equal buckets, so a bucket is at most 1/128 of its values
 * wide and any value reported from it (the bucket's middle) is within
 * 0.4% of every sample in it, from 1 ns to 2^37 ns (137 s).  Larger
 * values are counted in the last bucket.  Fixed size, O(1) to record;
 * min, max and the sum are exact.
 */
#define KP_HIST_SUB_BITS	7
#define KP_HIST_SUB		(1u << KP_HIST_SUB_BITS)
#define KP_HIST_TOP_BITS	37
#define KP_HIST_BUCKETS		((KP_HIST_TOP_BITS - KP_HIST_SUB_BITS + 1) * KP_HIST_SUB)
_Static_assert(KP_HIST_BUCKETS <= 4096, "bucket index is 12 bits");

struct kp_hist {
	u64 n, sum, min, max;
	u64 count[KP_HIST_BUCKETS];
};

void kp_hist_reset(struct kp_hist *h);

static inline u32 kp_hist_index(u64 v)
{
	unsigned int e;

	if (v < KP_HIST_SUB)
		return (u32)v;
	if (v >> KP_HIST_TOP_BITS)
		return KP_HIST_BUCKETS - 1;
	e = kp_fls64(v) - 1 - KP_HIST_SUB_BITS;	/* bucket width 2^e */
	return (e + 1) * KP_HIST_SUB + (u32)(v >> e) - KP_HIST_SUB;
}

static inline void kp_hist_record(struct kp_hist *h, u64 v)
{
	h->count[kp_hist_index(v)]++;
	h->n++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

/* The lowest value bucket @idx counts, and its width. */
u64 kp_hist_lo(u32 idx);
u64 kp_hist_width(u32 idx);

/*
 * The figures of @h (at least one sample), each divided by @div, into @r,
 * as kp_lat_compute() does from exact samples: percentiles by nearest
 * rank, the first and last rank exact.  Neither this nor
 * kp_lat_compute() attaches a histogram to @r (hist NULL, nhist 0).
 */
void kp_hist_compute(const struct kp_hist *h, u32 div, u32 bytes,
		     struct kp_lat_result *r);

/* The nearest-rank percentile @num / @den of @h's samples (not divided). */
u64 kp_hist_rank(const struct kp_hist *h, u64 num, u64 den);

/* Copy @h's non-empty buckets into @out (room for @max); returns how many. */
u32 kp_hist_export(const struct kp_hist *h, struct kp_hist_bucket *out,
		   u32 max);

/* How many buckets of @h are non-empty. */
u32 kp_hist_used(const struct kp_hist *h);

struct kp_bw_result {
	u32 bytes;
	u64 iters;
	u64 bw_peak_x100;	/* MiB/s, times 100 */
	u64 bw_avg_x100;	/* MiB/s, times 100 */
	u64 msgrate_x1e6;	/* Mpps, times 10^6 */
	bool gbits;		/* also report Gb/s (perftest --report_gbits) */
	u64 gbps_peak_x100;	/* Gb/s (10^9 bits), times 100 */
	u64 gbps_avg_x100;
	/*
	 * CPU cost: the stream's thread's system time and the softirq time
	 * of the CPUs it ran on, ns; both per GiB moved (kp_bw_cpu()).
	 */
	u64 cpu_thread_ns, cpu_softirq_ns;
	u64 cpu_ns_per_gib;
	/*
	 * qps=N: @qps > 1 on the aggregate of that many connections (its
	 * BW_peak that of their summed rate); @qp, from 1, on connection @qp - 1's
	 * own line, which shows no CPU figures: its thread may drive others.
	 */
	u32 qps;
	u32 qp;
	/* on a connection's own line: the CPU its stream ran on, -1 several */
	s32 cpu;
	/* how it ran where RC is not all it says ("ud"), or NULL */
	const char *variant;
};

/*
 * A result's port counter deltas (the device's hw_counters over the size
 * that gave it): those that moved, in the driver's order, up to
 * KP_HW_MAX; @have false where the device has no counters.  Names are
 * kept as the driver gives them, any character outside [A-Za-z0-9_.-]
 * made '_', so that a result outlives the driver's module.
 */
#define KP_HW_MAX	12
#define KP_HW_NAME	32
/* the longest kp_hw_format() line: each "name=u64 ", and " +N more" */
#define KP_HW_LINE	(KP_HW_MAX * (KP_HW_NAME + 21) + 24)

struct kp_hw_delta {
	char name[KP_HW_NAME];
	u64 delta;
};

struct kp_hw_counters {
	bool have;
	u32 n;
	u32 more;		/* counters that moved beyond the first KP_HW_MAX */
	struct kp_hw_delta c[KP_HW_MAX];
};

/* Add counter @name's @delta to @hw if it moved; the name made safe. */
void kp_hw_add(struct kp_hw_counters *hw, const char *name, u64 delta);

/*
 * "name=delta name=delta ..." (or "none moved", or "+N more" after
 * KP_HW_MAX); returns what snprintf returns.
 */
int kp_hw_format(char *buf, size_t len, const struct kp_hw_counters *hw);

struct kp_counters {
	u64 send_msgs, send_bytes;
	u64 recv_msgs, recv_bytes;
	u64 read_msgs, read_bytes;
	u64 write_msgs, write_bytes;
	u64 atomic_msgs, atomic_bytes;	/* 8 bytes each, as their operand */
};

/*
 * Sort the @n round-trip samples @ns in place, divide each by @div (2 for a
 * ping-pong reported one way, 1 for READ) and fill @r.  Percentiles are by
 * nearest rank; t_typical is the median sample.  @n must be at least 1.
 */
void kp_lat_compute(u64 *ns, u32 n, u32 div, u32 bytes,
		    struct kp_lat_result *r);

/*
 * Is a timed wait that has lasted @span ns late?  @rt_min is its run's
 * shortest round trip so far (0: none yet), @sampled whether the run times
 * round trips at all.  Such a run measures from @rt_min, which no wait
 * inside a round trip outlasts by @late_ns unless the device or the host
 * stalled, whatever the size, and judges no wait before its first round
 * trip; a run that times none (a ping-pong's server, a stream) measures
 * from 0.
 */
static inline bool kp_wait_late(u64 span, u64 rt_min, bool sampled,
				u64 late_ns)
{
	if (sampled) {
		if (!rt_min || span < rt_min)
			return false;
		span -= rt_min;
	}
	return span >= late_ns;
}

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
 * The summed rate of several streams (qps=N) over time.  Each stream
 * counts the bytes it completed in slots of 2^shift ns, numbered from time
 * 0 so that the streams of one test line up: KP_BW_SLOTS consecutive
 * slots from @base, which become twice as wide (half as many) when a
 * completion falls beyond the last.
 */
#define KP_BW_SLOTS		8192u
#define KP_BW_SLOT_SHIFT	10	/* the first width: 1024 ns */

struct kp_bw_slots {
	u64 *bytes;		/* KP_BW_SLOTS */
	u64 base;		/* the number of bytes[0]'s slot */
	u64 last;		/* the last slot with bytes */
	u32 shift;
	bool used;
};

void kp_bw_slots_init(struct kp_bw_slots *s, u64 *buf);

/* @bytes completed at @ns (never before the stream's previous ones). */
void kp_bw_slots_add(struct kp_bw_slots *s, u64 ns, u64 bytes);

/*
 * The peak of the summed rate of @n streams' slots @s over one window of
 * at least @window_ns, into *@mib_x100 and *@gbps_x100 (0 when together
 * they span less than one window).  @scratch: room for 2 * KP_BW_SLOTS.
 */
void kp_bw_slots_peak(const struct kp_bw_slots *s, u32 n, u64 window_ns,
		      u64 *scratch, u64 *mib_x100, u64 *gbps_x100);

/*
 * @iters messages of @bytes each in @total_ns; the best @window messages in
 * @best_ns.  Gb/s is computed too; r->gbits (cleared here) says whether
 * the text and JSON show it.
 */
void kp_bw_compute(u32 bytes, u64 iters, u64 total_ns, u32 window,
		   u64 best_ns, struct kp_bw_result *r);

/*
 * The CPU time a stream of r->iters messages of r->bytes used: @thread_ns
 * of its thread, @softirq_ns of softirq work on its CPUs, into @r as
 * nanoseconds per GiB (2^30 bytes) moved.
 */
void kp_bw_cpu(struct kp_bw_result *r, u64 thread_ns, u64 softirq_ns);

/*
 * The aggregate of @n connections' results @qp (same message size) into
 * @r: their messages in @total_ns, from the first one's start to the last
 * one's end; BW_peak is @peak_mib_x100 and @peak_gbps_x100, the peak of
 * their summed rate (kp_bw_slots_peak()), or the average if higher.
 * @thread_ns and @softirq_ns are the CPU time of every thread that drove
 * them.
 */
void kp_bw_sum(const struct kp_bw_result *qp, u32 n, u64 total_ns,
	       u64 peak_mib_x100, u64 peak_gbps_x100, u64 thread_ns,
	       u64 softirq_ns, struct kp_bw_result *r);

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
	const char *cq;		/* the CQ's poll context; NULL: not said */
	u32 sge;		/* SGEs of a data work request; 0: not said */
	bool rw;		/* the data moved through rdma_rw */
	/* the device's counters over the result's size; NULL: not said */
	const struct kp_hw_counters *hw;
	u32 warmup;		/* untimed messages before the size's timed ones */
	const char *clock;	/* the timed loops' clock; NULL: not said */
	u32 clock_khz;		/* its rate; 0: not said (ktime_get_ns()) */
	const char *clock_rate;	/* "kernel" or "measured"; NULL: not said */
	u32 clock_cal_ns;	/* measured: its calibration reads' width */
};

/*
 * One JSON object (one line, no newline) with perftest's --out_json names;
 * each returns what snprintf returns.  A latency result with a histogram
 * carries it as "histogram": [[usec, count], ...], one pair a non-empty
 * bucket (its middle, divided as the result is); size @buf with a first
 * call of @len 0.
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
#define KP_RECORD_MAX	384

/* The header line naming kp_record_format's columns. */
int kp_record_header(char *buf, size_t len);

#endif /* KP_REPORT_H */
