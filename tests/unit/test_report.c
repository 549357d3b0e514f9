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
	u64 s[1000];
	struct kp_lat_result r;
	char line[512];
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

	kp_lat_format(line, sizeof(line), "wlat", &r);
	KT_CHECK(!strncmp(line, "wlat #bytes=64 #iterations=1000 ", 32), "%s", line);
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
	struct kp_lat_result r;
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
	n = kp_record_format(line, sizeof(line), 0xffffffffu, "server", "wlat",
			     "host", dev, "failed", &c);
	KT_CHECK(n > 0 && n < KP_RECORD_MAX, "record of %d bytes, buffer %d", n,
		 KP_RECORD_MAX);
	KT_CHECK(n > 0 && line[strlen(line) - 1] == '\n' &&
		 strstr(line, "18446744073709551615\n") && strstr(line, dev),
		 "record line keeps its end: %s", line);
}

static void test_records(void)
{
	struct kp_counters c = { 1, 2, 3, 4, 5, 6, 7, 8 };
	char head[512], line[512];
	char hw[16][32], lw[16][32];
	int nh, nl, i;

	kp_record_header(head, sizeof(head));
	kp_record_format(line, sizeof(line), 42, "client", "bw", "npu", "rxe0",
			 "done", &c);
	nh = sscanf(head, "%31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s",
		    hw[0], hw[1], hw[2], hw[3], hw[4], hw[5], hw[6], hw[7],
		    hw[8], hw[9], hw[10], hw[11], hw[12], hw[13]);
	nl = sscanf(line, "%31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s %31s",
		    lw[0], lw[1], lw[2], lw[3], lw[4], lw[5], lw[6], lw[7],
		    lw[8], lw[9], lw[10], lw[11], lw[12], lw[13]);
	KT_CHECK(nh == 14 && nl == 14, "columns %d %d", nh, nl);
	KT_CHECK(!strcmp(lw[0], "42") && !strcmp(lw[1], "client") &&
		 !strcmp(lw[3], "npu") && !strcmp(hw[3], "mem") &&
		 !strcmp(lw[4], "rxe0") && !strcmp(lw[5], "done"), "record");
	for (i = 6; i < 14 && i < nl; i++)
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
				 "6.1.0-56-amd64", 0 };
	struct kp_lat_result r;
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
	/* truncation reports the full length, stays terminated */
	n = kp_lat_json(small, sizeof(small), &c, &r);
	KT_CHECK((size_t)n == strlen(line) && strlen(small) == sizeof(small) - 1,
		 "truncated json %d", n);

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

int main(void)
{
	test_lat();
	test_bw();
	test_bw_track();
	test_json();
	test_progress();
	test_records();
	test_record_max();
	test_stdev();
	test_payload();
	return kt_done();
}
