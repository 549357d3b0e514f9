// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of the statistics, their text and the ping payload. */
#include <math.h>
#include "kt.h"
#include "../../proc/kp_report.h"
#include "../../proc/kp_payload.h"

/* The number after @pat (a printf pattern naming @key) in @line, or -1. */
static double number_after(const char *line, const char *pat,
			   const char *key)
{
	char full[64];
	const char *p;

	snprintf(full, sizeof(full), pat, key);
	p = strstr(line, full);
	return p ? strtod(p + strlen(full), NULL) : -1.0;
}

/* "key=value" in a result line */
static double field(const char *line, const char *key)
{
	return number_after(line, " %s=", key);
}

static void test_lat(void)
{
	struct kp_json_ctx c_method = { 7, "client", "wlat", "host", "rxe0",
					"6.1.0-56-amd64", 0, NULL, 0, false,
					NULL, 0, NULL, 0, NULL, 0 };
	u64 s[1000];
	struct kp_lat_result r = { 0 };
	char line[1536];
	u32 i;

	/* 1000 round trips of 2000, 4000, ... 2000000 ns, shuffled */
	for (i = 0; i < 1000; i++)
		s[i] = 2000ull * (1 + (i * 7919u) % 1000);
	kp_lat_compute(s, 1000, 2, 64, &r);
	KT_CHECK(r.t_min == 1000 && r.t_max == 1000000, "min %llu max %llu",
		 (unsigned long long)r.t_min, (unsigned long long)r.t_max);
	KT_CHECK(r.t_typical == 501000, "median %llu",
		 (unsigned long long)r.t_typical);
	KT_CHECK(r.t_avg == 500500, "avg %llu", (unsigned long long)r.t_avg);
	KT_CHECK(r.p99 == 990000 && r.p999 == 999000, "p99 %llu p999 %llu",
		 (unsigned long long)r.p99, (unsigned long long)r.p999);
	/* population stdev of 1000..1000000 step 1000 = 288674.97 */
	KT_CHECK(r.t_stdev >= 288670 && r.t_stdev <= 288680, "stdev %llu",
		 (unsigned long long)r.t_stdev);
	for (i = 1; i < 1000; i++)
		if (s[i - 1] > s[i])
			break;
	KT_CHECK(i == 1000, "samples sorted");

	/*
	 * the null loop's empty interval, halved as the figures: the last
	 * figure, then the waits' yield and late counts, as counted
	 */
	r.harness = 61;
	r.yields = 12;
	r.late = 3;
	r.shared = 2;
	kp_lat_format(line, sizeof(line), "wlat", &r);
	KT_CHECK(!strncmp(line, "wlat #bytes=64 #iterations=1000 ", 32), "%s", line);
	KT_CHECK(field(line, "harness[usec]") == 0.06 &&
		 field(line, "yields") == 12 && field(line, "late") == 3 &&
		 field(line, "shared") == 2 &&
		 !strcmp(strstr(line, " harness[usec]="),
			 " harness[usec]=0.06 yields=12 late=3 shared=2"),
		 "harness text: %s", line);
	/* wlat says which variant ran, after the figures */
	r.variant = "write";
	kp_lat_format(line, sizeof(line), "wlat", &r);
	KT_CHECK(!strcmp(strstr(line, " harness[usec]="),
			 " harness[usec]=0.06 yields=12 late=3 shared=2 variant=write"),
		 "variant text: %s", line);
	/* and the method, last */
	r.method = "light";
	kp_lat_format(line, sizeof(line), "wlat", &r);
	KT_CHECK(!strcmp(strstr(line, " harness[usec]="),
			 " harness[usec]=0.06 yields=12 late=3 shared=2 variant=write method=light"),
		 "method text: %s", line);
	r.method = "perftest";
	kp_lat_json(line, sizeof(line), &c_method, &r);
	KT_CHECK(strstr(line, "\"variant\": \"write\", \"method\": \"perftest\", \"cdf\""),
		 "method json: %s", line);
	r.method = NULL;
	kp_lat_format(line, sizeof(line), "wlat", &r);
	r.variant = NULL;
	r.yields = 0;
	r.late = 0;
	r.shared = 0;
	KT_CHECK(field(line, "t_min[usec]") == 1.00, "t_min text: %s", line);
	KT_CHECK(field(line, "t_max[usec]") == 1000.00, "t_max text");
	KT_CHECK(field(line, "t_typical[usec]") == 501.00, "t_typical text");
	KT_CHECK(field(line, "t_avg[usec]") == 500.50, "t_avg text");
	KT_CHECK(field(line, "t_stdev[usec]") == 288.67, "t_stdev text");
	KT_CHECK(field(line, "99%[usec]") == 990.00, "99%% text");
	KT_CHECK(field(line, "99.9%[usec]") == 999.00, "99.9%% text");

	/* one sample; rounding of the second decimal */
	s[0] = 12345;
	kp_lat_compute(s, 1, 1, 8, &r);
	KT_CHECK(r.t_min == 12345 && r.t_max == 12345 && r.t_typical == 12345 &&
		 r.p99 == 12345 && r.p999 == 12345 && r.t_stdev == 0, "n=1");
	kp_lat_format(line, sizeof(line), "rlat", &r);
	KT_CHECK(strstr(line, "t_min[usec]=12.35 "), "rounded: %s", line);
	s[0] = 999994;
	kp_lat_compute(s, 1, 1, 8, &r);
	kp_lat_format(line, sizeof(line), "rlat", &r);
	KT_CHECK(strstr(line, "t_min[usec]=999.99 "), "below carry: %s", line);
	s[0] = 999995;
	kp_lat_compute(s, 1, 1, 8, &r);
	kp_lat_format(line, sizeof(line), "rlat", &r);
	KT_CHECK(strstr(line, "t_min[usec]=1000.00 "), "carry: %s", line);

	/* two samples: the median is the upper one, as in perftest */
	s[0] = 300;
	s[1] = 100;
	kp_lat_compute(s, 2, 1, 8, &r);
	KT_CHECK(r.t_typical == 300 && r.t_avg == 200 && r.t_stdev == 100,
		 "n=2 typical %llu stdev %llu", (unsigned long long)r.t_typical,
		 (unsigned long long)r.t_stdev);
	/* an absurd outlier does not overflow the variance */
	for (i = 0; i < 1000; i++)
		s[i] = 1000;
	s[999] = 3600ull * 1000000000ull;
	kp_lat_compute(s, 1000, 1, 8, &r);
	KT_CHECK(r.t_max == 3600ull * 1000000000ull && r.t_stdev > 0 &&
		 r.t_stdev < 3600ull * 1000000000ull, "outlier stdev %llu",
		 (unsigned long long)r.t_stdev);
}

/* xorshift64*: the same pseudo-random inputs on every run */
static u64 rnd_state = 0x9e3779b97f4a7c15ull;

static u64 rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dull;
}

/* @got within 1% of @want (exact below 100 ns, where 1% is under 1 ns) */
static int within_1pct(u64 got, u64 want)
{
	u64 d = got > want ? got - want : want - got;

	return d * 100 <= want || (want < 100 && d == 0);
}

#define HN	200000

/*
 * Feed @n samples to a histogram and to kp_lat_compute(); every percentile
 * from 0 to 100% in steps of 0.1% within 1% of the exact one, and so are
 * the figures of the result.  Returns the failures.
 */
static int hist_vs_exact(const char *what, u64 *v, u32 n, u32 div)
{
	static struct kp_hist h;
	static u64 sorted[HN];
	struct kp_lat_result ex, hr;
	int bad = 0;
	u32 pm, i;

	kp_hist_reset(&h);
	for (i = 0; i < n; i++)
		kp_hist_record(&h, v[i]);
	memcpy(sorted, v, n * sizeof(*v));
	kp_lat_compute(sorted, n, 1, 64, &ex);	/* sorts, undivided */
	for (pm = 0; pm <= 1000; pm++) {
		u64 k = ((u64)n * pm + 999) / 1000;
		u64 want = sorted[k ? k - 1 : 0];
		u64 got = kp_hist_rank(&h, pm, 1000);

		if (!within_1pct(got, want)) {
			if (!bad)
				printf("  %s: %u permille: %llu, exact %llu\n", what, pm,
				       (unsigned long long)got,
				       (unsigned long long)want);
			bad++;
		}
	}
	kp_hist_compute(&h, div, 64, &hr);
	kp_lat_compute(v, n, div, 64, &ex);
	bad += hr.iters != ex.iters || hr.t_min != ex.t_min ||
	       hr.t_max != ex.t_max;
	bad += !within_1pct(hr.t_typical, ex.t_typical) ||
	       !within_1pct(hr.p99, ex.p99) || !within_1pct(hr.p999, ex.p999);
	/* the mean is exact but for rounding the division once, not twice */
	bad += hr.t_avg + 1 < ex.t_avg || hr.t_avg > ex.t_avg + 1;
	for (i = 0; i < KP_CDF_POINTS; i++)
		bad += !within_1pct(hr.cdf[i], ex.cdf[i]);
	/* each sample moved by at most half a bucket (1/256 of it) */
	bad += hr.t_stdev > ex.t_stdev + ex.t_max / 256 + 1 ||
	       hr.t_stdev + ex.t_max / 256 + 1 < ex.t_stdev;
	if (bad)
		printf("  %s: typical %llu/%llu p99 %llu/%llu stdev %llu/%llu avg %llu/%llu\n",
		       what, (unsigned long long)hr.t_typical,
		       (unsigned long long)ex.t_typical,
		       (unsigned long long)hr.p99, (unsigned long long)ex.p99,
		       (unsigned long long)hr.t_stdev,
		       (unsigned long long)ex.t_stdev,
		       (unsigned long long)hr.t_avg,
		       (unsigned long long)ex.t_avg);
	return bad;
}

static void test_hist(void)
{
	static u64 v[HN];
	static struct kp_hist h;
	struct kp_hist_bucket b[8];
	u32 i, idx, prev;

	/* the buckets tile the range: contiguous, each at most 1/128 wide */
	prev = 0;
	for (idx = 1; idx < KP_HIST_BUCKETS; idx++) {
		if (kp_hist_lo(idx) != kp_hist_lo(idx - 1) +
				       kp_hist_width(idx - 1) ||
		    kp_hist_width(idx) * 128 > (kp_hist_lo(idx) > 128 ?
						kp_hist_lo(idx) : 128) ||
		    kp_hist_index(kp_hist_lo(idx)) != idx ||
		    kp_hist_index(kp_hist_lo(idx) + kp_hist_width(idx) - 1) != idx)
			break;
		prev = idx;
	}
	KT_CHECK(prev == KP_HIST_BUCKETS - 1, "bucket %u does not tile", prev + 1);
	KT_CHECK(kp_hist_lo(KP_HIST_BUCKETS - 1) + kp_hist_width(KP_HIST_BUCKETS - 1) ==
		 1ull << KP_HIST_TOP_BITS, "top %llu",
		 (unsigned long long)kp_hist_lo(KP_HIST_BUCKETS - 1));
	KT_CHECK(sizeof(struct kp_hist) < 32 * 1024, "size %zu",
		 sizeof(struct kp_hist));
	KT_CHECK(sizeof(struct kp_hist_bucket) == 8, "bucket %zu",
		 sizeof(struct kp_hist_bucket));

	/* random: log-uniform from 10 ns to 100 s */
	for (i = 0; i < HN; i++) {
		double x = log(10.0) + (log(1e11) - log(10.0)) *
			   (double)(rnd() >> 11) / 9007199254740992.0;

		v[i] = (u64)exp(x);
	}
	KT_CHECK(!hist_vs_exact("log-uniform", v, HN, 1), "log-uniform");
	/* random: an RDMA-like latency, 2 us with a tail */
	for (i = 0; i < HN; i++)
		v[i] = 2000 + rnd() % 300 + (rnd() % 100 == 0 ? rnd() % 200000 : 0);
	KT_CHECK(!hist_vs_exact("tailed", v, HN, 2), "tailed, halved");
	/* adversarial: every sample on a bucket's first or last value */
	for (i = 0; i < HN; i++) {
		idx = (u32)(rnd() % KP_HIST_BUCKETS);
		v[i] = kp_hist_lo(idx) + (i & 1 ? kp_hist_width(idx) - 1 : 0);
	}
	KT_CHECK(!hist_vs_exact("bucket edges", v, HN, 1), "bucket edges");
	/* adversarial: two clusters a million times apart, few in the second */
	for (i = 0; i < HN; i++)
		v[i] = i % 1000 == 7 ? 5000000000ull + i : 1000 + i % 3;
	KT_CHECK(!hist_vs_exact("two clusters", v, HN, 1), "two clusters");
	/* adversarial: all equal, powers of two, one sample, two samples */
	for (i = 0; i < HN; i++)
		v[i] = 123457;
	KT_CHECK(!hist_vs_exact("all equal", v, HN, 1), "all equal");
	for (i = 0; i < HN; i++)
		v[i] = 1ull << (i % 37);
	KT_CHECK(!hist_vs_exact("powers of two", v, HN, 1), "powers of two");
	v[0] = 77777;
	KT_CHECK(!hist_vs_exact("one", v, 1, 1), "one sample");
	v[0] = 300;
	v[1] = 100;
	KT_CHECK(!hist_vs_exact("two", v, 2, 1), "two samples");

	/* beyond the top: the last bucket, but max and mean stay exact */
	kp_hist_reset(&h);
	kp_hist_record(&h, 1000);
	kp_hist_record(&h, 1ull << 40);
	KT_CHECK(h.count[KP_HIST_BUCKETS - 1] == 1 && h.max == 1ull << 40 &&
		 h.sum == 1000 + (1ull << 40), "clamped");
	KT_CHECK(kp_hist_used(&h) == 2 && kp_hist_export(&h, b, 8) == 2 &&
		 b[0].idx == kp_hist_index(1000) && b[0].count == 1 &&
		 b[1].idx == KP_HIST_BUCKETS - 1, "export");
	KT_CHECK(kp_hist_export(&h, b, 1) == 1, "export bounded");
	/* a deviation of hours does not wrap the variance */
	kp_hist_reset(&h);
	for (i = 0; i < 1000; i++)
		kp_hist_record(&h, i == 999 ? 3600ull * 1000000000ull : 1000);
	{
		struct kp_lat_result r = { 0 };

		kp_hist_compute(&h, 1, 8, &r);
		KT_CHECK(r.t_stdev > 100000000000ull &&
			 r.t_stdev < 3600ull * 1000000000ull, "outlier stdev %llu",
			 (unsigned long long)r.t_stdev);
	}
}

/* The best window the slow way: every window of every stream. */
static u64 best_ref(const u64 *post, const u64 *done, u32 n, u32 window)
{
	u64 best = ~0ull;
	u32 i;

	for (i = 0; i + window <= n; i++)
		if (done[i + window - 1] - post[i] < best)
			best = done[i + window - 1] - post[i];
	return best;
}

/*
 * Feed kp_bw_track as kp_bw_run does: up to @depth posted ahead of the
 * oldest completion, completions in order.
 */
static u64 track(const u64 *post, const u64 *done, u32 n, u32 window,
		 u32 depth)
{
	static u64 ring[KP_BW_RING];
	struct kp_bw_track t;
	u32 p = 0, d;

	kp_bw_track_init(&t, ring, window);
	for (d = 0; d < n; d++) {
		while (p < n && p - d < depth)
			kp_bw_track_post(&t, p, post[p]), p++;
		kp_bw_track_done(&t, d, done[d]);
	}
	return t.best;
}

/* Random streams: the ring gives what the whole arrays give. */
static void test_bw_track(void)
{
	static u64 post[20000], done[20000];
	u32 run, i, bad = 0;

	srand(7);
	for (run = 0; run < 40; run++) {
		u32 n = 1 + (u32)rand() % 20000;
		u32 depth = 1 + (u32)rand() % 1024;
		u32 window = 1 + (u32)rand() % depth;
		u64 t = 0, last = 0;

		for (i = 0; i < n; i++) {
			t += (u64)(rand() % 1000);
			post[i] = t;
			/* completions in order, each after its post */
			last = (last > t ? last : t) + (u64)(rand() % 5000);
			done[i] = last;
		}
		if (track(post, done, n, window, depth) !=
		    best_ref(post, done, n, window))
			bad++;
	}
	KT_CHECK(!bad, "%u of 40 random streams differ from the reference", bad);
}

static void test_bw(void)
{
	u64 post[10], done[10];
	struct kp_bw_result r;
	char line[256];
	u32 i;

	/* message i posted at i*1000 ns, done 5000 ns later; one fast pair */
	for (i = 0; i < 10; i++) {
		post[i] = i * 1000;
		done[i] = post[i] + 5000;
	}
	done[4] = post[4] + 1000;
	/* best pair: posted at 3000, second done at 5000 */
	KT_CHECK(track(post, done, 10, 2, 4) == 2000, "window 2: %llu",
		 (unsigned long long)track(post, done, 10, 2, 4));
	KT_CHECK(track(post, done, 10, 1, 4) == 1000, "window 1");
	KT_CHECK(track(post, done, 10, 10, 10) == 14000, "window n");
	KT_CHECK(track(post, done, 10, 11, 10) == ~0ull, "window > n: none");
	KT_CHECK(track(post, done, 0, 4, 4) == ~0ull, "no samples");

	/* 1000 x 1 MiB in 1 s: 1000 MiB/s, 0.001 Mpps */
	kp_bw_compute(1 << 20, 1000, 1000000000ull, 10, 5000000ull, &r);
	KT_CHECK(r.bw_avg_x100 == 100000, "avg %llu",
		 (unsigned long long)r.bw_avg_x100);
	KT_CHECK(r.bw_peak_x100 == 200000, "peak %llu",
		 (unsigned long long)r.bw_peak_x100);
	KT_CHECK(r.msgrate_x1e6 == 1000, "rate %llu",
		 (unsigned long long)r.msgrate_x1e6);
	kp_bw_format(line, sizeof(line), "bw", &r);
	KT_CHECK(field(line, "BW_peak[MiB/sec]") == 2000.00 &&
		 field(line, "BW_average[MiB/sec]") == 1000.00 &&
		 field(line, "MsgRate[Mpps]") == 0.001, "bw text: %s", line);
	KT_CHECK(!strncmp(line, "bw #bytes=1048576 #iterations=1000 ", 35),
		 "bw head: %s", line);
	KT_CHECK(!strstr(line, "Gb/sec"), "no Gb/s unless asked: %s", line);
	KT_CHECK(!strstr(line, "variant"), "no variant unless set: %s", line);
	r.variant = "ud";
	kp_bw_format(line, sizeof(line), "bw_send", &r);
	KT_CHECK(strstr(line, " variant=ud") &&
		 !strcmp(strrchr(line, ' '), " variant=ud"), "ud bw text: %s", line);
	r.variant = NULL;
	KT_CHECK(field(line, "CPU[s/GiB]") == 0.0, "no CPU time: %s", line);
	/* 1000 MiB moved with 0.25 s of thread and 0.5 s of softirq: 0.768 s/GiB */
	kp_bw_cpu(&r, 250000000ull, 500000000ull);
	kp_bw_format(line, sizeof(line), "bw", &r);
	KT_CHECK(r.cpu_ns_per_gib == 768000000ull &&
		 field(line, "CPU[s/GiB]") == 0.768, "cpu text: %s", line);
	/* the same in Gb/s: 1000 x 2^20 x 8 bits in 1 s = 8.39 Gb/s */
	r.gbits = true;
	kp_bw_format(line, sizeof(line), "bw", &r);
	KT_CHECK(r.gbps_avg_x100 == 838 && r.gbps_peak_x100 == 1677 &&
		 field(line, "BW_average[Gb/sec]") == 8.38 &&
		 field(line, "BW_peak[Gb/sec]") == 16.77 &&
		 field(line, "BW_average[MiB/sec]") == 1000.00, "gbits text: %s",
		 line);
	/* 64 B x 1e6 in 0.5 s: 122.07 MiB/s, 2 Mpps; huge totals do not wrap */
	kp_bw_compute(64, 1000000, 500000000ull, 64, 1, &r);
	KT_CHECK(r.bw_avg_x100 == 12207 && r.msgrate_x1e6 == 2000000,
		 "small msgs %llu %llu", (unsigned long long)r.bw_avg_x100,
		 (unsigned long long)r.msgrate_x1e6);
	kp_bw_compute(4 << 20, 1000000, 1000000ull, 1, 1000000ull, &r);
	KT_CHECK(r.bw_avg_x100 == 400000000000ull, "no wrap %llu",
		 (unsigned long long)r.bw_avg_x100);
	/* peak is never below average */
	kp_bw_compute(4096, 100, 1000000ull, 4, 900000ull, &r);
	KT_CHECK(r.bw_peak_x100 == r.bw_avg_x100, "peak >= avg");
	kp_bw_compute(4096, 100, 0, 4, 0, &r);
	KT_CHECK(r.bw_avg_x100 == 0 && r.msgrate_x1e6 == 0, "zero time");
}

/* A double-precision population stdev of @n samples (after @div). */
static double ref_stdev(const u64 *v, u32 n, u32 div)
{
	double var = 0, avg;
	u64 isum = 0;
	u32 i;

	for (i = 0; i < n; i++)
		isum += v[i] / div;
	avg = (double)(isum / n);	/* deviations from the integer mean */
	for (i = 0; i < n; i++) {
		double d = (double)(v[i] / div) - avg;

		var += d * d;
	}
	return sqrt(var / n);
}

static u64 kt_rand_state = 88172645463325252ull;

static u64 kt_rand(void)
{
	kt_rand_state ^= kt_rand_state << 13;
	kt_rand_state ^= kt_rand_state >> 7;
	kt_rand_state ^= kt_rand_state << 17;
	return kt_rand_state;
}

/* Small spreads over many samples: every term d^2 < n must still count. */
static void test_stdev(void)
{
	static const struct {
		u32 n;
		u64 base, spread;
	} cases[] = {
		{ 1000000, 2000, 200 },		/* real hardware: 2 us +- 0.2 */
		{ 1000000, 1500, 3 },
		{ 1000000, 900, 1 },
		{ 100000, 50000, 40 },
		{ 1000, 2000, 2 },
		{ 1000000, 3000000000ull, 1000000000ull },	/* seconds */
		{ 1000, 60000000000ull, 59000000000ull },	/* d > 2^32 */
	};
	static u64 s[1000000];
	struct kp_lat_result r = { 0 };
	unsigned int c;
	u32 i;

	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		u32 n = cases[c].n;
		double want;

		for (i = 0; i < n; i++)
			s[i] = cases[c].base - cases[c].spread +
			       kt_rand() % (2 * cases[c].spread + 1);
		want = ref_stdev(s, n, 1);
		kp_lat_compute(s, n, 1, 64, &r);
		KT_CHECK(fabs((double)r.t_stdev - want) <= want * 0.001 + 1.0,
			 "stdev case %u: %llu, reference %.2f", c,
			 (unsigned long long)r.t_stdev, want);
	}
	/* 10^6 samples of 2000 +- 200 ns uniform: true stdev 115.8 ns */
	for (i = 0; i < 1000000; i++)
		s[i] = 1800 + kt_rand() % 401;
	kp_lat_compute(s, 1000000, 1, 64, &r);
	KT_CHECK(r.t_stdev >= 115 && r.t_stdev <= 117, "stdev 2000+-200: %llu",
		 (unsigned long long)r.t_stdev);
	/* two values, exact */
	s[0] = 1000; s[1] = 1002;
	kp_lat_compute(s, 2, 1, 8, &r);
	KT_CHECK(r.t_stdev == 1, "stdev of {1000, 1002}: %llu",
		 (unsigned long long)r.t_stdev);
}

/* The longest record line: a 63-character device, 20-digit counters. */
static void test_record_max(void)
{
	struct kp_counters c;
	char dev[64], line[KP_RECORD_MAX];
	int n;

	memset(&c, 0xff, sizeof(c));
	memset(dev, 'd', 63);
	dev[63] = '\0';
	/* the longest mode and state names */
	n = kp_record_format(line, sizeof(line), 0xffffffffu, "server",
			     "bw_atomic", "host", dev, "listening", &c);
	KT_CHECK(n > 0 && n < KP_RECORD_MAX, "record of %d bytes, buffer %d", n,
		 KP_RECORD_MAX);
	KT_CHECK(n > 0 && line[strlen(line) - 1] == '\n' &&
		 strstr(line, "18446744073709551615\n") && strstr(line, dev),
		 "record line keeps its end: %s", line);
}

static void test_records(void)
{
	struct kp_counters c = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	char head[512], line[512];
	char hw[18][32], lw[18][32];
	int nh, nl, i;

	kp_record_header(head, sizeof(head));
	kp_record_format(line, sizeof(line), 42, "client", "bw", "npu", "rxe0",
			 "done", &c);
	nh = sscanf(head, "%31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s",
		    hw[0], hw[1], hw[2], hw[3], hw[4], hw[5], hw[6], hw[7],
		    hw[8], hw[9], hw[10], hw[11], hw[12], hw[13], hw[14],
		    hw[15]);
	nl = sscanf(line, "%31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s",
		    lw[0], lw[1], lw[2], lw[3], lw[4], lw[5], lw[6], lw[7],
		    lw[8], lw[9], lw[10], lw[11], lw[12], lw[13], lw[14],
		    lw[15]);
	KT_CHECK(nh == 16 && nl == 16 && !strcmp(hw[14], "atomic_msgs"),
		 "columns %d %d", nh, nl);
	KT_CHECK(!strcmp(lw[0], "42") && !strcmp(lw[1], "client") &&
		 !strcmp(lw[3], "npu") && !strcmp(hw[3], "mem") &&
		 !strcmp(lw[4], "rxe0") && !strcmp(lw[5], "done"), "record");
	for (i = 6; i < 16 && i < nl; i++)
		KT_CHECK(atoi(lw[i]) == i - 5, "counter %s=%s", hw[i], lw[i]);
	kp_ping_format(line, sizeof(line), 10, 4096, true);
	KT_CHECK(!strcmp(line, "ping #bytes=4096 rounds=10 validated=yes"),
		 "%s", line);
}

static void test_payload(void)
{
	/* rping's 64-byte payloads for rounds 0 and 1, as printed by rping -v */
	static const char r0[] =
		"rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqr";
	static const char r1[] =
		"rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrs";
	u8 buf[4096];
	u32 round, size;

	kp_ping_fill(buf, 64, 0);
	KT_CHECK(!memcmp(buf, r0, 64), "round 0 matches rping");
	kp_ping_fill(buf, 64, 1);
	KT_CHECK(!memcmp(buf, r1, 64), "round 1 matches rping");
	/* round 57 starts at 'z', round 58 wraps back to 'A' */
	kp_ping_fill(buf, 64, 57);
	KT_CHECK(buf[14] == 'z' && buf[15] == 'A', "round 57 wraps: %c%c",
		 buf[14], buf[15]);
	kp_ping_fill(buf, 64, 58);
	KT_CHECK(buf[14] == 'A', "round 58 restarts at A");
	for (round = 0; round < 300; round += 37)
		for (size = 26; size <= 4096; size = size * 3 + 1) {
			kp_ping_fill(buf, size, round);
			KT_CHECK(buf[size - 1] == 0 &&
				 kp_ping_check(buf, size, round) == -1,
				 "round %u size %u self-check", round, size);
			KT_CHECK(kp_ping_check(buf, size, round + 1) >= 0,
				 "round %u size %u vs next", round, size);
			buf[size / 2] ^= 1;
			KT_CHECK(kp_ping_check(buf, size, round) == (long)(size / 2),
				 "round %u size %u flipped byte found", round,
				 size);
		}
	kp_ping_fill(buf, 26, 2147483647u);
	KT_CHECK(!memcmp(buf, "rdma-ping-2147483647: ", 22) && buf[25] == 0,
		 "widest header fits the minimum size");
	/*
	 * A peer's size of 0, or below the header: nothing outside the
	 * buffer is read or written (ASAN: each buffer has exactly that
	 * many bytes; malloc(0) is a buffer of none).
	 */
	for (size = 0; size < 26; size++) {
		u8 *b = malloc(size);

		KT_CHECK(b || !size, "malloc(%u)", size);
		if (!b)
			continue;
		kp_ping_fill(b, size, 12345);
		KT_CHECK(kp_ping_check(b, size, 12345) == -1,
			 "size %u: its own fill checks", size);
		free(b);
	}
}

/*
 * A validated stream's messages: each one's number, then its bands; a
 * neighbour, a flipped byte and a poisoned (never written) slot fail at
 * the byte that shows it.
 */
static void test_stream_payload(void)
{
	static const u64 seqs[] = { 0, 1, 2, 3, 0xc3, 0x1234567890ull,
				    ~0ull };
	static const u8 bands[] = { 0xff, 0x00, 0xaa, 0x55 };
	u8 buf[4 * KP_STREAM_BAND + 40];
	u32 i, k, size;

	kp_stream_fill(buf, sizeof(buf), 0x0102030405060708ull);
	KT_CHECK(buf[0] == 0x08 && buf[7] == 0x01, "number little-endian: %02x %02x",
		 buf[0], buf[7]);
	for (i = 8; i < sizeof(buf); i++)
		if (buf[i] != bands[((i - 8) / KP_STREAM_BAND + 0x0102030405060708ull) % 4])
			break;
	KT_CHECK(i == sizeof(buf), "bands of %u from byte 8, rotated by the number: byte %u",
		 KP_STREAM_BAND, i);
	kp_stream_fill(buf, sizeof(buf), 5);
	KT_CHECK(buf[8] == 0x00 && buf[8 + KP_STREAM_BAND - 1] == 0x00 &&
		 buf[8 + KP_STREAM_BAND] == 0xaa && buf[8 + 3 * KP_STREAM_BAND] == 0xff,
		 "message 5's bands: 00 aa 55 ff");
	for (k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++)
		for (size = 1; size <= sizeof(buf); size += size < 80 ? 1 : 37) {
			u64 seq = seqs[k];

			memset(buf, KP_STREAM_POISON, sizeof(buf));
			kp_stream_fill(buf, size, seq);
			KT_CHECK(buf[size] == KP_STREAM_POISON,
				 "size %u: nothing written past it", size);
			KT_CHECK(kp_stream_check(buf, size, seq) == -1,
				 "seq %llu size %u: its own fill checks",
				 (unsigned long long)seq, size);
			for (i = 0; i < size; i++)
				if (buf[i] != kp_stream_byte(i, seq))
					break;
			KT_CHECK(i == size, "size %u: kp_stream_byte() agrees at %u",
				 size, i);
			/* the next message's number differs in its low byte */
			KT_CHECK(kp_stream_check(buf, size, seq + 1) == 0,
				 "size %u: message %llu is not the next",
				 size, (unsigned long long)seq);
			buf[size / 2] ^= 0x10;
			KT_CHECK(kp_stream_check(buf, size, seq) == (long)(size / 2),
				 "size %u: the flipped byte is found", size);
			memset(buf, KP_STREAM_POISON, size);
			if (size >= KP_STREAM_MIN)
				KT_CHECK(kp_stream_check(buf, size, seq) >= 0,
					 "seq %llu size %u: a poisoned slot fails",
					 (unsigned long long)seq, size);
		}
	/* neighbours differ in every band, not only in the number */
	for (k = 1; k < 4; k++) {
		kp_stream_fill(buf, sizeof(buf), 7 + k);
		memcpy(buf, "\x07\0\0\0\0\0\0\0", 8);
		for (i = 8; i < sizeof(buf); i += KP_STREAM_BAND)
			KT_CHECK(buf[i] != kp_stream_byte(i, 7),
				 "message %u's band at %u is not message 7's", 7 + k, i);
	}
	/* no band byte is the poison, so only the number could match it */
	for (i = 0; i < 4; i++)
		KT_CHECK(bands[i] != KP_STREAM_POISON, "band %u", i);
}

/* The number after "\"key\": " in a JSON line, -1 if absent. */
static double jfield(const char *line, const char *key)
{
	return number_after(line, "\"%s\": ", key);
}

/* Brackets and quotes balance, nothing after the closing brace. */
static int json_shape(const char *s)
{
	int depth = 0, quoted = 0;

	if (*s != '{')
		return 0;
	for (; *s; s++) {
		if (*s == '"')
			quoted = !quoted;
		else if (!quoted && (*s == '{' || *s == '['))
			depth++;
		else if (!quoted && (*s == '}' || *s == ']'))
			if (--depth == 0 && s[1])
				return 0;
	}
	return depth == 0 && !quoted;
}

static void test_json(void)
{
	struct kp_json_ctx c = { 7, "client", "wlat", "npu", "rxe0",
				 "6.1.0-56-amd64", 0, NULL, 0, false, NULL, 0,
				 NULL, 0, NULL, 0 };
	struct kp_lat_result r = { 0 };
	struct kp_bw_result b;
	char line[1536], small[64];
	u64 s[1000];
	int n, i;

	for (i = 0; i < 1000; i++)
		s[i] = 1000ull * (u64)(i + 1);	/* 1..1000 usec */
	kp_lat_compute(s, 1000, 1, 4096, &r);
	KT_CHECK(r.cdf[0] == 1000 && r.cdf[KP_CDF_POINTS - 1] == 1000000 &&
		 r.cdf[7] == 500000, "cdf min %llu median %llu max %llu",
		 (unsigned long long)r.cdf[0], (unsigned long long)r.cdf[7],
		 (unsigned long long)r.cdf[KP_CDF_POINTS - 1]);
	for (i = 1; i < KP_CDF_POINTS; i++)
		KT_CHECK(r.cdf[i] >= r.cdf[i - 1] &&
			 kp_cdf_permille[i] > kp_cdf_permille[i - 1],
			 "cdf rises at %d", i);
	n = kp_lat_json(line, sizeof(line), &c, &r);
	KT_CHECK(n > 0 && n < (int)sizeof(line) && (size_t)n == strlen(line),
		 "lat json length %d", n);
	KT_CHECK(json_shape(line), "lat json shape: %s", line);
	KT_CHECK(jfield(line, "MsgSize") == 4096 &&
		 jfield(line, "n_iterations") == 1000 &&
		 jfield(line, "t_min") == 1.00 && jfield(line, "t_max") == 1000.00 &&
		 jfield(line, "t_typical") == 501.00 &&
		 jfield(line, "t_avg") == 500.50 &&
		 jfield(line, "percentile_99") == 990.00 &&
		 jfield(line, "percentile_99.9") == 999.00 &&
		 jfield(line, "id") == 7 && jfield(line, "duration") == 0,
		 "lat json fields: %s", line);
	KT_CHECK(strstr(line, "\"test\": \"wlat\"") &&
		 strstr(line, "\"mem\": \"npu\"") &&
		 strstr(line, "\"device\": \"rxe0\"") &&
		 strstr(line, "\"kernel\": \"6.1.0-56-amd64\"") &&
		 strstr(line, "\"cdf\": [[0.000, 1.00], [0.010, 10.00], ") &&
		 strstr(line, "[1.000, 1000.00]]}"), "lat json text: %s", line);
	KT_CHECK(!strstr(line, "variant"), "no variant but wlat's: %s", line);
	KT_CHECK(!strstr(line, "\"cq\""), "no cq unless said: %s", line);
	c.cq = "softirq";
	kp_lat_json(line, sizeof(line), &c, &r);
	KT_CHECK(json_shape(line) &&
		 strstr(line, "\"n_iterations\": 1000, \"cq\": \"softirq\", \"t_"),
		 "cq json: %s", line);
	c.sge = 4;
	c.rw = true;
	kp_lat_json(line, sizeof(line), &c, &r);
	KT_CHECK(json_shape(line) && jfield(line, "sge") == 4 &&
		 strstr(line, "\"cq\": \"softirq\", \"sge\": 4, \"rdma_rw\": true, \"t_"),
		 "sge, rdma_rw json: %s", line);
	c.sge = 0;
	c.rw = false;
	c.cq = NULL;
	{
		struct kp_hw_counters hw = { .have = true };

		kp_hw_add(&hw, "sent_pkts", 120);
		kp_hw_add(&hw, "duplicate_request", 0);
		kp_hw_add(&hw, "completer_retry_err", 3);
		c.hw = &hw;
		kp_lat_json(line, sizeof(line), &c, &r);
		KT_CHECK(json_shape(line) &&
			 strstr(line, "\"hw_counters\": {\"sent_pkts\": 120, \"completer_retry_err\": 3}, \"t_"),
			 "hw_counters json: %s", line);
		hw.more = 3;
		c.warmup = 100;
		kp_lat_json(line, sizeof(line), &c, &r);
		KT_CHECK(json_shape(line) &&
			 strstr(line, "\"completer_retry_err\": 3}, \"hw_counters_more\": 3, \"warmup\": 100, \"t_"),
			 "hw_counters_more, warmup json: %s", line);
		hw.more = 0;
		c.warmup = 0;
		hw.n = 0;
		kp_lat_json(line, sizeof(line), &c, &r);
		KT_CHECK(json_shape(line) && strstr(line, "\"hw_counters\": {}, "),
			 "no counter moved: %s", line);
		hw.have = false;
		kp_lat_json(line, sizeof(line), &c, &r);
		KT_CHECK(!strstr(line, "hw_counters"), "a device without: %s", line);
		c.hw = NULL;
	}
	r.variant = "imm";
	kp_lat_json(line, sizeof(line), &c, &r);
	KT_CHECK(json_shape(line) &&
		 strstr(line, "\"harness\": 0.00, \"yields\": 0, \"late\": 0, ") &&
		 strstr(line, "\"shared_us\": 0.00, \"variant\": \"imm\", \"cdf\": [["),
		 "variant json: %s", line);
	r.yields = 7;
	r.late = 2;
	r.shared = 1;
	r.shared_ns = 1234567;
	kp_lat_json(line, sizeof(line), &c, &r);
	KT_CHECK(json_shape(line) && jfield(line, "yields") == 7 &&
		 jfield(line, "late") == 2 && jfield(line, "shared") == 1 &&
		 strstr(line, "\"shared_us\": 1234.57, "), "counts json: %s", line);
	r.yields = 0;
	r.late = 0;
	r.shared = 0;
	r.shared_ns = 0;
	/* the clock: its name always, a counter's rate, a measured one's reads */
	c.clock = "ktime_get_ns";
	kp_lat_json(line, sizeof(line), &c, &r);
	KT_CHECK(json_shape(line) && strstr(line, ", \"clock\": \"ktime_get_ns\", \"t_min\"") &&
		 !strstr(line, "clock_khz") && !strstr(line, "clock_cal_ns"),
		 "ktime json: %s", line);
	c.clock = "tsc";
	c.clock_khz = 2893012;
	c.clock_rate = "measured";
	c.clock_cal_ns = 0;
	kp_lat_json(line, sizeof(line), &c, &r);
	KT_CHECK(json_shape(line) &&
		 strstr(line, ", \"clock\": \"tsc\", \"clock_khz\": 2893012, \"clock_rate\": \"measured\", \"clock_cal_ns\": 0, \"t_min\""),
		 "measured clock json: %s", line);
	c.clock = "cntvct";
	c.clock_khz = 62500;
	c.clock_rate = "kernel";
	kp_lat_json(line, sizeof(line), &c, &r);
	KT_CHECK(json_shape(line) &&
		 strstr(line, ", \"clock\": \"cntvct\", \"clock_khz\": 62500, \"clock_rate\": \"kernel\", \"t_min\""),
		 "stated clock json: %s", line);
	c.clock = NULL;
	c.clock_khz = 0;
	c.clock_rate = NULL;
	r.variant = NULL;
	n = kp_lat_json(line, sizeof(line), &c, &r);
	/* truncation reports the full length, stays terminated */
	n = kp_lat_json(small, sizeof(small), &c, &r);
	KT_CHECK((size_t)n == strlen(line) && strlen(small) == sizeof(small) - 1,
		 "truncated json %d", n);

	/* with its histogram: [[usec, count], ...], halved as the result is */
	{
		struct kp_hist_bucket hb[3] = {
			{ 5, kp_hist_index(100) },	/* exact: 100 ns */
			{ 990, kp_hist_index(2000000) },	/* 2 ms: 8192 wide */
			{ 5, kp_hist_index(1ull << 40) },	/* the last: 255 x 2^29 + 2^28 */
		};
		char *big;
		int need;

		r.hist = hb;
		r.nhist = 3;
		r.hist_div = 2;
		need = kp_lat_json(NULL, 0, &c, &r);
		big = malloc((size_t)need + 1);
		n = kp_lat_json(big, (size_t)need + 1, &c, &r);
		KT_CHECK(n == need && (size_t)n == strlen(big) && json_shape(big),
			 "hist json %d/%d: %s", n, need, big);
		/* 2000000 lies in [1998848, 2007040): middle 2002944, halved */
		KT_CHECK(strstr(big, ", \"histogram\": [[0.050, 5], [1001.472, 990], [68585259.008, 5]]}"),
			 "histogram: %s", big);
		free(big);
		r.hist = NULL;
		r.nhist = 0;
	}

	kp_bw_compute(65536, 5000, 1000000000ull, 64, 5000000ull, &b);
	c.mode = "bw";
	c.duration_s = 30;
	n = kp_bw_json(line, sizeof(line), &c, &b);
	KT_CHECK((size_t)n == strlen(line) && json_shape(line), "bw json: %s",
		 line);
	KT_CHECK(jfield(line, "MsgSize") == 65536 &&
		 jfield(line, "n_iterations") == 5000 &&
		 jfield(line, "BW_average") == 312.50 &&
		 jfield(line, "BW_peak") == 800.00 &&
		 jfield(line, "MsgRate") == 0.005 &&
		 jfield(line, "duration") == 30, "bw json fields: %s", line);
	KT_CHECK(!strstr(line, "gbits"), "no Gb/s in JSON unless asked");
	/* 312.5 MiB with 1 s of thread and 0.25 s of softirq: 4.096 s/GiB */
	kp_bw_cpu(&b, 1000000000ull, 250000000ull);
	n = kp_bw_json(line, sizeof(line), &c, &b);
	KT_CHECK((size_t)n == strlen(line) && json_shape(line) &&
		 jfield(line, "cpu_s_per_GiB") == 4.096 &&
		 jfield(line, "cpu_thread_s") == 1.0 &&
		 jfield(line, "cpu_softirq_s") == 0.25, "cpu json: %s", line);
	kp_bw_cpu(&b, 0, 0);
	b.gbits = true;
	n = kp_bw_json(line, sizeof(line), &c, &b);
	/* 65536 x 5000 x 8 bits in 1 s; 64 messages in 5 ms */
	KT_CHECK((size_t)n == strlen(line) && json_shape(line) &&
		 jfield(line, "BW_average_gbits") == 2.62 &&
		 jfield(line, "BW_peak_gbits") == 6.71 &&
		 jfield(line, "BW_average") == 312.50, "gbits json: %s", line);
}

static void test_progress(void)
{
	struct kp_progress p = { 65536, 123456, 12345, 123456, 0, 0, 0 };
	char line[256];

	kp_progress_format(line, sizeof(line), "bw", &p);
	KT_CHECK(!strcmp(line, "bw #bytes=65536 iterations=123456 elapsed[s]=12.34 BW[MiB/sec]=1234.56 errors=0"),
		 "bw progress: %s", line);
	p.bytes = 64;
	p.t_avg = 12345;
	p.t_max = 99999;
	p.errors = 2;
	kp_progress_format(line, sizeof(line), "wlat", &p);
	KT_CHECK(!strcmp(line, "wlat #bytes=64 iterations=123456 elapsed[s]=12.34 t_avg[usec]=12.35 t_max[usec]=100.00 errors=2"),
		 "lat progress: %s", line);
}

/* qps=N: the aggregate of several connections, and their own lines */
static void test_bw_sum(void)
{
	struct kp_json_ctx c = { 3, "client", "bw", "host", "rxe0",
				 "6.1.0-56-amd64", 0, NULL, 0, false, NULL, 0,
				 NULL, 0, NULL, 0 };
	struct kp_bw_result qp[4], r, low;
	char line[1536];
	u64 iters = 0;
	u32 i;

	/* four QPs of 4 KiB messages, 1000..4000 each, peaks 100..400 MiB/s */
	for (i = 0; i < 4; i++) {
		kp_bw_compute(4096, 1000 * (i + 1), 1000000000ull, 1, 0, &qp[i]);
		qp[i].bw_peak_x100 = 10000 * (i + 1);
		qp[i].gbps_peak_x100 = 100 * (i + 1);
		kp_bw_cpu(&qp[i], 100000000ull * (i + 1), 0);
		qp[i].qp = i + 1;
		iters += qp[i].iters;
	}
	/* all of them in 2 s, 0.5 s of thread and 0.25 s of softirq */
	kp_bw_sum(qp, 4, 2000000000ull, 100000, 1000, 500000000ull,
		  250000000ull, &r);
	KT_CHECK(r.iters == iters && r.iters == 10000 && r.bytes == 4096,
		 "sum iters %llu", (unsigned long long)r.iters);
	/* 10000 x 4 KiB in 2 s: 19.53 MiB/s; 5000 msgs/s */
	KT_CHECK(r.bw_avg_x100 == 1953 && r.msgrate_x1e6 == 5000,
		 "sum avg %llu rate %llu", (unsigned long long)r.bw_avg_x100,
		 (unsigned long long)r.msgrate_x1e6);
	KT_CHECK(r.bw_peak_x100 == 100000 && r.gbps_peak_x100 == 1000,
		 "the summed rate's peak %llu", (unsigned long long)r.bw_peak_x100);
	/* a peak below the average (a short run): the average */
	kp_bw_sum(qp, 4, 2000000000ull, 1000, 10, 0, 0, &low);
	KT_CHECK(low.bw_peak_x100 == low.bw_avg_x100 && low.bw_avg_x100 == 1953 &&
		 low.gbps_peak_x100 == low.gbps_avg_x100, "peak under average %llu",
		 (unsigned long long)low.bw_peak_x100);
	/* 0.75 s for 40000 KiB = 0.0381 GiB: 19.66 s/GiB */
	KT_CHECK(r.cpu_thread_ns == 500000000ull &&
		 r.cpu_softirq_ns == 250000000ull &&
		 r.cpu_ns_per_gib == 19660800000ull, "sum cpu %llu",
		 (unsigned long long)r.cpu_ns_per_gib);
	KT_CHECK(r.qps == 4 && !r.qp, "sum marks qps %u qp %u", r.qps, r.qp);
	KT_CHECK(!r.variant, "no variant: %s", r.variant);

	kp_bw_format(line, sizeof(line), "bw", &r);
	KT_CHECK(strstr(line, "bw #bytes=4096 #iterations=10000 #qps=4 ") ==
		 line && field(line, "BW_peak[MiB/sec]") == 1000.00 &&
		 field(line, "CPU[s/GiB]") == 19.6608, "sum text: %s", line);
	kp_bw_format(line, sizeof(line), "bw", &qp[2]);
	KT_CHECK(strstr(line, "bw #bytes=4096 #iterations=3000 qp=2 ") ==
		 line && field(line, "BW_peak[MiB/sec]") == 300.00 &&
		 !strstr(line, "CPU") && !strstr(line, "#qps"),
		 "qp text: %s", line);
	kp_bw_json(line, sizeof(line), &c, &r);
	KT_CHECK(strstr(line, "\"n_iterations\": 10000, \"qps\": 4, ") &&
		 strstr(line, "\"cpu_s_per_GiB\": 19.6608") &&
		 !strstr(line, "\"qp\""), "sum json: %s", line);
	kp_bw_json(line, sizeof(line), &c, &qp[0]);
	KT_CHECK(strstr(line, "\"n_iterations\": 1000, \"qp\": 0, ") &&
		 !strstr(line, "cpu_") && !strstr(line, "\"qps\""),
		 "qp json: %s", line);
	/* a connection's line names the one CPU its stream ran on */
	KT_CHECK(qp[0].cpu == -1 && r.cpu == -1, "no CPU known: %d %d",
		 qp[0].cpu, r.cpu);
	qp[1].cpu = 1;
	kp_bw_format(line, sizeof(line), "bw", &qp[1]);
	KT_CHECK(strstr(line, " qp=1 ") && line[strlen(line) - 6] == ' ' &&
		 !strcmp(line + strlen(line) - 6, " cpu=1"), "qp cpu text: %s",
		 line);
	kp_bw_json(line, sizeof(line), &c, &qp[1]);
	KT_CHECK(strstr(line, ", \"cpu\": 1}"), "qp cpu json: %s", line);
	kp_bw_format(line, sizeof(line), "bw", &qp[2]);
	KT_CHECK(!strstr(line, "cpu="), "several CPUs: %s", line);
	r.cpu = 0;
	kp_bw_format(line, sizeof(line), "bw", &r);
	KT_CHECK(!strstr(line, "cpu="), "the aggregate has none: %s", line);
	/* a test of one connection prints neither */
	kp_bw_compute(4096, 10, 1000000ull, 1, 0, &r);
	kp_bw_format(line, sizeof(line), "bw", &r);
	KT_CHECK(!strstr(line, "qp"), "one QP: %s", line);
	/* the connections' MRs: the aggregate says what each line says */
	for (i = 0; i < 4; i++)
		qp[i].variant = "mr_per_qp";
	kp_bw_sum(qp, 4, 2000000000ull, 100000, 1000, 0, 0, &r);
	kp_bw_format(line, sizeof(line), "bw", &r);
	KT_CHECK(strstr(line, " #qps=4 ") &&
		 !strcmp(line + strlen(line) - 18, " variant=mr_per_qp"),
		 "sum variant text: %s", line);
	kp_bw_json(line, sizeof(line), &c, &r);
	KT_CHECK(strstr(line, ", \"variant\": \"mr_per_qp\""),
		 "sum variant json: %s", line);
	for (i = 0; i < 4; i++)
		qp[i].variant = NULL;
	/* a single QP's sum is itself */
	kp_bw_sum(qp, 1, 1000000000ull, qp[0].bw_peak_x100,
		  qp[0].gbps_peak_x100, 0, 0, &r);
	KT_CHECK(r.iters == 1000 && r.bw_avg_x100 == qp[0].bw_avg_x100 &&
		 r.bw_peak_x100 == qp[0].bw_peak_x100, "sum of one");
}

static u64 slots_a[KP_BW_SLOTS], slots_b[KP_BW_SLOTS];
static u64 slots_scratch[2 * KP_BW_SLOTS];

/* Every byte the slots of @s hold. */
static u64 slots_total(const struct kp_bw_slots *s)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < KP_BW_SLOTS; i++)
		sum += s->bytes[i];
	return sum;
}

/* MiB/s x100 of @bytes a microsecond */
static double mib_x100_per_us(double bytes)
{
	return bytes * 1e6 / 1048576.0 * 100.0;
}

/*
 * qps=N's BW_peak: the peak of the summed rate over one window, not the
 * sum of each stream's peak, which two streams that take turns at speed
 * overstate.
 */
static void test_bw_slots(void)
{
	struct kp_bw_slots s[2];
	u64 mib, gb, t, t0 = 5000000000ull, total = 0;
	double want;
	u32 i;

	/* two streams, 4 KiB each every microsecond for 10 ms, in step */
	kp_bw_slots_init(&s[0], slots_a);
	kp_bw_slots_init(&s[1], slots_b);
	for (t = 0; t < 10000; t++) {
		kp_bw_slots_add(&s[0], t0 + t * 1000, 4096);
		kp_bw_slots_add(&s[1], t0 + t * 1000 + 300, 4096);
	}
	kp_bw_slots_peak(s, 2, 100000, slots_scratch, &mib, &gb);
	want = mib_x100_per_us(8192);
	KT_CHECK(mib > want * 0.99 && mib < want * 1.01,
		 "in step: peak %llu, want %.0f", (unsigned long long)mib, want);
	/* Gb/s x100: 8192 B/us = 65.536 Gb/s */
	KT_CHECK(gb > 6488 && gb < 6620, "in step: %llu Gb/s x100",
		 (unsigned long long)gb);

	/*
	 * Taking turns: A moves 8 KiB/us for 5 ms then 4 KiB/us, B the other
	 * way round.  Each one's own peak is 8 KiB/us (their sum 16); the
	 * sum is 12 KiB/us throughout.
	 */
	kp_bw_slots_init(&s[0], slots_a);
	kp_bw_slots_init(&s[1], slots_b);
	for (t = 0; t < 10000; t++) {
		kp_bw_slots_add(&s[0], t0 + t * 1000, t < 5000 ? 8192 : 4096);
		kp_bw_slots_add(&s[1], t0 + t * 1000 + 500, t < 5000 ? 4096 : 8192);
	}
	kp_bw_slots_peak(s, 2, 200000, slots_scratch, &mib, &gb);
	want = mib_x100_per_us(12288);
	KT_CHECK(mib > want * 0.99 && mib < want * 1.01,
		 "taking turns: peak %llu, want %.0f, not the sum of peaks %.0f",
		 (unsigned long long)mib, want, mib_x100_per_us(16384));

	/* a burst: 1 ms at twice the rate within 1 s (the slots widen) */
	kp_bw_slots_init(&s[0], slots_a);
	for (t = 0; t < 1000000; t++) {
		u64 b = (t >= 400000 && t < 401000) ? 8192 : 4096;

		kp_bw_slots_add(&s[0], t0 + t * 1000, b);
		total += b;
	}
	KT_CHECK(s[0].shift > KP_BW_SLOT_SHIFT &&
		 ((s[0].last - s[0].base) << s[0].shift) >= 999000000ull,
		 "widened to %u", s[0].shift);
	KT_CHECK(slots_total(&s[0]) == total, "bytes kept %llu of %llu",
		 (unsigned long long)slots_total(&s[0]),
		 (unsigned long long)total);
	/* over 1 ms: the burst at 8 KiB/us, give or take a slot's edge */
	kp_bw_slots_peak(s, 1, 1000000, slots_scratch, &mib, &gb);
	want = mib_x100_per_us(8192);
	KT_CHECK(mib > want * 0.8 && mib <= want * 1.001,
		 "burst: peak %llu, want near %.0f", (unsigned long long)mib,
		 want);
	/* over 100 ms the burst is diluted: near 4 KiB/us */
	kp_bw_slots_peak(s, 1, 100000000, slots_scratch, &mib, &gb);
	want = mib_x100_per_us(4096);
	KT_CHECK(mib > want * 0.99 && mib < want * 1.02,
		 "100 ms windows: peak %llu, want near %.0f",
		 (unsigned long long)mib, want);

	/* streams far apart in time: each alone; the span still fits */
	kp_bw_slots_init(&s[0], slots_a);
	kp_bw_slots_init(&s[1], slots_b);
	for (t = 0; t < 1000; t++) {
		kp_bw_slots_add(&s[0], t0 + t * 1000, 4096);
		kp_bw_slots_add(&s[1], t0 + 60000000000ull + t * 1000, 4096);
	}
	kp_bw_slots_peak(s, 2, 100000, slots_scratch, &mib, &gb);
	KT_CHECK(mib > 0 && mib <= mib_x100_per_us(4096) * 1.001,
		 "far apart: peak %llu", (unsigned long long)mib);

	/* shorter than one window: no peak (the average stands) */
	kp_bw_slots_peak(s, 2, 120000000000ull, slots_scratch, &mib, &gb);
	KT_CHECK(!mib && !gb, "span under a window: %llu", (unsigned long long)mib);

	/* unused streams add nothing; none at all: no peak */
	kp_bw_slots_init(&s[1], slots_b);
	kp_bw_slots_peak(&s[1], 1, 1000, slots_scratch, &mib, &gb);
	KT_CHECK(!mib, "no stream: %llu", (unsigned long long)mib);

	/* a clock read before the first: kept, in the first slot */
	kp_bw_slots_init(&s[0], slots_a);
	kp_bw_slots_add(&s[0], t0, 100);
	kp_bw_slots_add(&s[0], t0 - 5000, 50);
	KT_CHECK(slots_total(&s[0]) == 150 && s[0].bytes[0] == 150,
		 "early clock: %llu", (unsigned long long)slots_total(&s[0]));
	for (i = 0; i < 2; i++)
		kp_bw_slots_init(&s[i], i ? slots_b : slots_a);
}

/* When a timed wait is late (kp_run_late()'s rule). */
static void test_wait_late(void)
{
	const u64 ms = 1000000;

	/* a run that times no round trip: 1 ms from the wait's start */
	KT_CHECK(!kp_wait_late(ms - 1, 0, false, ms) &&
		 kp_wait_late(ms, 0, false, ms) &&
		 kp_wait_late(ms, 40000, false, ms), "unsampled");
	/* one that does: no judgement before its first round trip */
	KT_CHECK(!kp_wait_late(10 * ms, 0, true, ms), "no round trip yet");
	/* 64 B: 30 us the shortest, late 1.03 ms in */
	KT_CHECK(!kp_wait_late(ms + 29999, 30000, true, ms) &&
		 kp_wait_late(ms + 30000, 30000, true, ms), "64 B");
	/* 64 KiB under TCG: a 1.2 ms round trip is not late, a 2.3 ms one is */
	KT_CHECK(!kp_wait_late(1200000, 1150000, true, ms) &&
		 !kp_wait_late(2149999, 1150000, true, ms) &&
		 kp_wait_late(2300000, 1150000, true, ms), "64 KiB");
	/* no wrap near the top of the clock's range */
	KT_CHECK(!kp_wait_late(ms, ~0ull - ms / 2, true, ms) &&
		 !kp_wait_late(~0ull, ~0ull - ms / 2, true, ms) &&
		 kp_wait_late(~0ull, ~0ull - 2 * ms, true, ms), "large");
}

/*
 * The CPU cost of size=1,count=1 over tens of seconds of busy-polling: the
 * quotient passes 64 bits, where x86's divq traps; it saturates instead.
 */
static void test_mul_div_edge(void)
{
	struct kp_bw_result r;

	kp_bw_compute(1, 1, 40000000000ull, 1, 40000000000ull, &r);
	kp_bw_cpu(&r, 4000000000ull, 0);
	KT_CHECK(r.cpu_ns_per_gib == 4000000000ull << 30,
		 "4 s for a byte: %llu", (unsigned long long)r.cpu_ns_per_gib);
	kp_bw_cpu(&r, 40000000000ull, 0);
	KT_CHECK(r.cpu_ns_per_gib == U64_MAX, "40 s for a byte: %llu, want U64_MAX",
		 (unsigned long long)r.cpu_ns_per_gib);
	KT_CHECK(kp_mul_div(1ull << 63, 4, 2) == U64_MAX, "2^64: saturated");
	KT_CHECK(kp_mul_div(1ull << 63, 4, 3) == 12297829382473034410ull,
		 "2^65 / 3 fits: %llu", (unsigned long long)kp_mul_div(1ull << 63, 4, 3));
	KT_CHECK(kp_mul_div(U64_MAX, U64_MAX, U64_MAX) == U64_MAX, "max * max / max");
	KT_CHECK(kp_mul_div(5, 7, 0) == U64_MAX, "no divisor: saturated");
}

/* hw counters: those that moved, names made safe, at most KP_HW_MAX */
static void test_hw(void)
{
	struct kp_hw_counters hw = { .have = true };
	char line[512], name[48];
	int i, n;

	n = kp_hw_format(line, sizeof(line), &hw);
	KT_CHECK(n == (int)strlen(line) && !strcmp(line, "none moved"),
		 "none: %s", line);
	kp_hw_add(&hw, "rcvd_seq_err", 2);
	kp_hw_add(&hw, "np_cnp_sent", 0);
	kp_hw_add(&hw, "bad \"name\"\\x", 5);
	kp_hw_format(line, sizeof(line), &hw);
	KT_CHECK(!strcmp(line, "rcvd_seq_err=2 bad__name__x=5"), "two: %s", line);
	kp_hw_add(&hw, "a_name_longer_than_the_thirty_one_bytes_kept", 1);
	KT_CHECK(strlen(hw.c[2].name) == KP_HW_NAME - 1, "cut: %s", hw.c[2].name);
	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		kp_hw_add(&hw, name, 1);
	}
	KT_CHECK(hw.n == KP_HW_MAX && hw.more == 3 + 20 - KP_HW_MAX,
		 "kept %u, more %u", hw.n, hw.more);
	n = kp_hw_format(line, sizeof(line), &hw);
	KT_CHECK(strstr(line, " +11 more") && n == (int)strlen(line),
		 "more: %s", line);
	n = kp_hw_format(line, 8, &hw);
	KT_CHECK(n > 8 && strlen(line) == 7, "bounded: %d", n);
}

int main(void)
{
	test_mul_div_edge();
	test_wait_late();
	test_bw_sum();
	test_bw_slots();
	test_lat();
	test_hist();
	test_bw();
	test_bw_track();
	test_json();
	test_hw();
	test_progress();
	test_records();
	test_record_max();
	test_stdev();
	test_payload();
	test_stream_payload();
	return kt_done();
}
