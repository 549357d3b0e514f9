// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_report.c - latency and bandwidth statistics and their text.
 *
 * Integer arithmetic only (this also runs in the kernel): times are ns,
 * printed as usec with two decimals, rounded to nearest.
 */
#include "kp_report.h"

#define KP_NSEC_PER_SEC	1000000000ull

static int kp_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void kp_sort_u64(u64 *v, u32 n)
{
#ifdef __KERNEL__
	sort(v, n, sizeof(*v), kp_cmp_u64, NULL);
#else
	qsort(v, n, sizeof(*v), kp_cmp_u64);
#endif
}

static u64 kp_isqrt(u64 x)
{
	u64 r = 0, bit = 1ull << 62;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

const u16 kp_cdf_permille[KP_CDF_POINTS] = {
	0, 10, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 950, 990, 999,
	1000,
};

/* Nearest-rank percentile of sorted @v: the ceil(n * num / den)-th value. */
static u64 kp_rank(const u64 *v, u32 n, u64 num, u64 den)
{
	u64 k = kp_div((u64)n * num + den - 1, den);

	return v[k ? k - 1 : 0];
}

/* A 128-bit unsigned sum, in two 64-bit halves (plain C, any target). */
struct kp_u128 {
	u64 hi, lo;
};

/* @acc += @a * @b, exactly */
static void kp_u128_add_mul(struct kp_u128 *acc, u64 a, u64 b)
{
	u64 a_lo = (u32)a, a_hi = a >> 32, b_lo = (u32)b, b_hi = b >> 32;
	u64 ll = a_lo * b_lo, lh = a_lo * b_hi, hl = a_hi * b_lo;
	u64 hh = a_hi * b_hi;
	u64 mid = (ll >> 32) + (u32)lh + (u32)hl;
	u64 lo = (mid << 32) | (u32)ll;
	u64 hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);

	acc->lo += lo;
	acc->hi += hi + (acc->lo < lo);
}

/* @x / @d: long division in 32-bit digits */
static struct kp_u128 kp_u128_div32(const struct kp_u128 *x, u32 d)
{
	u32 digit[4] = { x->hi >> 32, (u32)x->hi, x->lo >> 32, (u32)x->lo };
	u64 rem = 0, q[4];
	int i;

	for (i = 0; i < 4; i++) {
		u64 cur = rem << 32 | digit[i];

		q[i] = kp_div(cur, d);
		rem = cur - q[i] * d;
	}
	return (struct kp_u128){ q[0] << 32 | q[1], q[2] << 32 | q[3] };
}

/* The square root of @x: exact below 2^64, to 1 part in 2^16 above. */
static u64 kp_u128_sqrt(struct kp_u128 x)
{
	if (!x.hi)
		return kp_isqrt(x.lo);
	if (x.hi >> 32)
		return ~0ull;	/* deviations of centuries */
	return kp_isqrt(x.hi << 32 | x.lo >> 32) << 16;
}

void kp_lat_compute(u64 *ns, u32 n, u32 div, u32 bytes,
		    struct kp_lat_result *r)
{
	struct kp_u128 sq = { 0, 0 };
	u64 sum = 0;
	u32 i;

	if (!div)
		div = 1;
	for (i = 0; i < n; i++) {
		ns[i] = kp_div(ns[i], div);
		sum += ns[i];
	}
	kp_sort_u64(ns, n);
	r->hist = NULL;
	r->nhist = 0;
	r->bytes = bytes;
	r->iters = n;
	r->t_min = ns[0];
	r->t_max = ns[n - 1];
	r->t_typical = ns[n / 2];
	r->t_avg = kp_div(sum, n);
	/* the sum of squares is exact: small deviations over many samples count */
	for (i = 0; i < n; i++) {
		u64 d = ns[i] > r->t_avg ? ns[i] - r->t_avg : r->t_avg - ns[i];

		kp_u128_add_mul(&sq, d, d);
	}
	r->t_stdev = kp_u128_sqrt(kp_u128_div32(&sq, n));
	r->p99 = kp_rank(ns, n, 99, 100);
	r->p999 = kp_rank(ns, n, 999, 1000);
	for (i = 0; i < KP_CDF_POINTS; i++)
		r->cdf[i] = kp_rank(ns, n, kp_cdf_permille[i], 1000);
}

void kp_hist_reset(struct kp_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = ~0ull;
}

u64 kp_hist_lo(u32 idx)
{
	u32 e;

	if (idx < KP_HIST_SUB)
		return idx;
	e = idx / KP_HIST_SUB - 1;
	return (u64)(idx % KP_HIST_SUB + KP_HIST_SUB) << e;
}

u64 kp_hist_width(u32 idx)
{
	return idx < KP_HIST_SUB ? 1 : 1ull << (idx / KP_HIST_SUB - 1);
}

/*
 * The value reported for bucket @idx: its middle, within @h's min and max;
 * the last bucket's, when it holds values beyond the range, is the max.
 */
static u64 kp_hist_value(const struct kp_hist *h, u32 idx)
{
	u64 v = kp_hist_lo(idx) + kp_hist_width(idx) / 2;

	if (idx == KP_HIST_BUCKETS - 1 && h->max >> KP_HIST_TOP_BITS)
		return h->max;
	if (v < h->min)
		return h->min;
	return v > h->max ? h->max : v;
}

/* The @k-th smallest sample (1-based), as its bucket's value. */
static u64 kp_hist_at(const struct kp_hist *h, u64 k)
{
	u64 seen = 0;
	u32 i;

	if (k <= 1)
		return h->min;
	if (k >= h->n)
		return h->max;
	for (i = 0; i < KP_HIST_BUCKETS; i++) {
		seen += h->count[i];
		if (seen >= k)
			return kp_hist_value(h, i);
	}
	return h->max;
}

u64 kp_hist_rank(const struct kp_hist *h, u64 num, u64 den)
{
	return kp_hist_at(h, kp_div(h->n * num + den - 1, den));
}

/* @x / @d, @d of any size: a divisor above 32 bits loses its low bits */
static struct kp_u128 kp_u128_div64(struct kp_u128 x, u64 d)
{
	while (d >> 32) {
		d >>= 1;
		x.lo = x.lo >> 1 | x.hi << 63;
		x.hi >>= 1;
	}
	return kp_u128_div32(&x, (u32)d);
}

void kp_hist_compute(const struct kp_hist *h, u32 div, u32 bytes,
		     struct kp_lat_result *r)
{
	struct kp_u128 sq = { 0, 0 };
	u64 n = h->n, mean;
	u32 i;

	if (!div)
		div = 1;
	r->hist = NULL;
	r->nhist = 0;
	r->bytes = bytes;
	r->iters = n;
	r->t_min = kp_div(h->min, div);
	r->t_max = kp_div(h->max, div);
	r->t_typical = kp_div(kp_hist_at(h, n / 2 + 1), div);
	mean = kp_div(h->sum, n);
	r->t_avg = kp_div(mean, div);
	for (i = 0; i < KP_HIST_BUCKETS; i++) {
		u64 v, d;

		if (!h->count[i])
			continue;
		v = kp_hist_value(h, i);
		d = v > mean ? v - mean : mean - v;
		if (d >> 32) {
			/* over 4 s from the mean: a square beyond 64 bits */
			kp_u128_add_mul(&sq, h->count[i] * d, d);
			if (h->count[i] * d / d != h->count[i])
				sq.hi = ~0ull;
			continue;
		}
		kp_u128_add_mul(&sq, h->count[i], d * d);
	}
	r->t_stdev = kp_div(kp_u128_sqrt(kp_u128_div64(sq, n)), div);
	r->p99 = kp_div(kp_hist_rank(h, 99, 100), div);
	r->p999 = kp_div(kp_hist_rank(h, 999, 1000), div);
	for (i = 0; i < KP_CDF_POINTS; i++)
		r->cdf[i] = kp_div(kp_hist_rank(h, kp_cdf_permille[i], 1000),
				   div);
}

u32 kp_hist_used(const struct kp_hist *h)
{
	u32 i, used = 0;

	for (i = 0; i < KP_HIST_BUCKETS; i++)
		used += !!h->count[i];
	return used;
}

u32 kp_hist_export(const struct kp_hist *h, struct kp_hist_bucket *out,
		   u32 max)
{
	u32 i, n = 0;

	for (i = 0; i < KP_HIST_BUCKETS && n < max; i++) {
		if (!h->count[i])
			continue;
		out[n].count = h->count[i];
		out[n].idx = i;
		n++;
	}
	return n;
}

void kp_bw_track_init(struct kp_bw_track *t, u64 *ring, u32 window)
{
	t->post = ring;
	t->window = window ? window : 1;
	t->best = ~0ull;
}

void kp_bw_track_done(struct kp_bw_track *t, u64 idx, u64 ns)
{
	u64 first, d;

	if (idx + 1 < t->window)
		return;
	first = t->post[(idx + 1 - t->window) & (KP_BW_RING - 1)];
	d = ns - first;
	if (d < t->best)
		t->best = d;
}

static u64 kp_mib_x100(u64 bytes, u64 ns)
{
	if (!ns)
		return 0;
	return kp_mul_div(bytes, 100 * KP_NSEC_PER_SEC, ns) >> 20;
}

/* bits per ns are Gb/s */
static u64 kp_gbps_x100(u64 bytes, u64 ns)
{
	return ns ? kp_mul_div(bytes, 8 * 100, ns) : 0;
}

void kp_bw_compute(u32 bytes, u64 iters, u64 total_ns, u32 window,
		   u64 best_ns, struct kp_bw_result *r)
{
	if (window > iters)
		window = (u32)iters;
	r->bytes = bytes;
	r->iters = iters;
	r->gbits = false;
	r->cpu_thread_ns = 0;
	r->cpu_softirq_ns = 0;
	r->cpu_ns_per_gib = 0;
	r->qps = 0;
	r->qp = 0;
	r->cpu = -1;
	r->variant = NULL;
	r->bw_avg_x100 = kp_mib_x100((u64)bytes * iters, total_ns);
	r->bw_peak_x100 = kp_mib_x100((u64)bytes * window, best_ns);
	r->gbps_avg_x100 = kp_gbps_x100((u64)bytes * iters, total_ns);
	r->gbps_peak_x100 = kp_gbps_x100((u64)bytes * window, best_ns);
	if (r->bw_peak_x100 < r->bw_avg_x100) {
		r->bw_peak_x100 = r->bw_avg_x100;
		r->gbps_peak_x100 = r->gbps_avg_x100;
	}
	r->msgrate_x1e6 = total_ns ?
		kp_mul_div(iters, KP_NSEC_PER_SEC, total_ns) : 0;
}

void kp_bw_cpu(struct kp_bw_result *r, u64 thread_ns, u64 softirq_ns)
{
	u64 moved = (u64)r->bytes * r->iters;

	r->cpu_thread_ns = thread_ns;
	r->cpu_softirq_ns = softirq_ns;
	r->cpu_ns_per_gib = moved ? kp_mul_div(thread_ns + softirq_ns,
					       1ull << 30, moved) : 0;
}

void kp_bw_slots_init(struct kp_bw_slots *s, u64 *buf)
{
	s->bytes = buf;
	memset(buf, 0, KP_BW_SLOTS * sizeof(*buf));
	s->base = 0;
	s->last = 0;
	s->shift = KP_BW_SLOT_SHIFT;
	s->used = false;
}

/* Slots twice as wide: slot a becomes a / 2, in place. */
static void kp_bw_slots_widen(struct kp_bw_slots *s)
{
	u64 nbase = s->base >> 1, v;
	u32 i;

	for (i = 0; i < KP_BW_SLOTS; i++) {
		v = s->bytes[i];
		s->bytes[i] = 0;
		s->bytes[((s->base + i) >> 1) - nbase] += v;
	}
	s->base = nbase;
	s->last >>= 1;
	s->shift++;
}

void kp_bw_slots_add(struct kp_bw_slots *s, u64 ns, u64 bytes)
{
	u64 slot = ns >> s->shift;

	if (!s->used) {
		s->base = slot;
		s->last = slot;
		s->used = true;
	}
	/* a clock read before the first one's: counted in the first slot */
	if (slot < s->base)
		slot = s->base;
	while (slot - s->base >= KP_BW_SLOTS) {
		kp_bw_slots_widen(s);
		slot >>= 1;
	}
	if (slot > s->last)
		s->last = slot;
	s->bytes[slot - s->base] += bytes;
}

void kp_bw_slots_peak(const struct kp_bw_slots *s, u32 n, u64 window_ns,
		      u64 *scratch, u64 *mib_x100, u64 *gbps_x100)
{
	u64 lo = ~0ull, hi = 0, span, len, sum = 0, best = 0, j;
	u32 shift = 0, i;

	*mib_x100 = 0;
	*gbps_x100 = 0;
	for (i = 0; i < n; i++)
		if (s[i].used && s[i].shift > shift)
			shift = s[i].shift;
	for (i = 0; i < n; i++) {
		if (!s[i].used)
			continue;
		if ((s[i].base >> (shift - s[i].shift)) < lo)
			lo = s[i].base >> (shift - s[i].shift);
		if ((s[i].last >> (shift - s[i].shift)) > hi)
			hi = s[i].last >> (shift - s[i].shift);
	}
	if (lo > hi)
		return;
	/* streams far apart in time: wider slots, until the span fits */
	while (hi - lo >= 2 * KP_BW_SLOTS) {
		shift++;
		lo >>= 1;
		hi >>= 1;
	}
	span = hi - lo + 1;
	memset(scratch, 0, span * sizeof(*scratch));
	for (i = 0; i < n; i++) {
		if (!s[i].used)
			continue;
		for (j = 0; j <= s[i].last - s[i].base; j++)
			scratch[((s[i].base + j) >> (shift - s[i].shift)) - lo] +=
				s[i].bytes[j];
	}
	/* one window: as many whole slots as cover @window_ns */
	len = (window_ns + (1ull << shift) - 1) >> shift;
	if (!len)
		len = 1;
	if (span < len)
		return;
	for (j = 0; j < span; j++) {
		sum += scratch[j];
		if (j >= len)
			sum -= scratch[j - len];
		if (j + 1 >= len && sum > best)
			best = sum;
	}
	*mib_x100 = kp_mib_x100(best, len << shift);
	*gbps_x100 = kp_gbps_x100(best, len << shift);
}

void kp_bw_sum(const struct kp_bw_result *qp, u32 n, u64 total_ns,
	       u64 peak_mib_x100, u64 peak_gbps_x100, u64 thread_ns,
	       u64 softirq_ns, struct kp_bw_result *r)
{
	u64 iters = 0;
	u32 i;

	for (i = 0; i < n; i++)
		iters += qp[i].iters;
	kp_bw_compute(n ? qp[0].bytes : 0, iters, total_ns, 1, 0, r);
	r->bw_peak_x100 = peak_mib_x100 > r->bw_avg_x100 ? peak_mib_x100 :
			  r->bw_avg_x100;
	r->gbps_peak_x100 = peak_gbps_x100 > r->gbps_avg_x100 ?
			    peak_gbps_x100 : r->gbps_avg_x100;
	kp_bw_cpu(r, thread_ns, softirq_ns);
	r->qps = n;
	r->qp = 0;
	/* what ran is what each connection ran */
	r->variant = n ? qp[0].variant : NULL;
}

/* A bounded appender: like snprintf, n counts what would have been written. */
struct kp_out {
	char *buf;
	size_t len;
	size_t n;
};

static __printf(2, 3) void kp_put(struct kp_out *o, const char *fmt, ...)
{
	size_t at = o->n < o->len ? o->n : o->len;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vsnprintf(o->buf + at, o->len - at, fmt, ap);
	va_end(ap);
	if (ret > 0)
		o->n += (size_t)ret;
}

/* The latency figures, in the order both the text and the JSON list them. */
static const struct {
	const char *text;
	const char *json;
	size_t off;
} kp_lat_fields[] = {
	{ "t_min[usec]", "t_min", offsetof(struct kp_lat_result, t_min) },
	{ "t_max[usec]", "t_max", offsetof(struct kp_lat_result, t_max) },
	{ "t_typical[usec]", "t_typical",
	  offsetof(struct kp_lat_result, t_typical) },
	{ "t_avg[usec]", "t_avg", offsetof(struct kp_lat_result, t_avg) },
	{ "t_stdev[usec]", "t_stdev", offsetof(struct kp_lat_result, t_stdev) },
	{ "99%[usec]", "percentile_99", offsetof(struct kp_lat_result, p99) },
	{ "99.9%[usec]", "percentile_99.9",
	  offsetof(struct kp_lat_result, p999) },
	{ "harness[usec]", "harness",
	  offsetof(struct kp_lat_result, harness) },
};

static u64 kp_lat_field(const struct kp_lat_result *r, unsigned int i)
{
	return *(const u64 *)((const char *)r + kp_lat_fields[i].off);
}

int kp_lat_format(char *buf, size_t len, const char *mode,
		  const struct kp_lat_result *r)
{
	struct kp_out o = { buf, len, 0 };
	unsigned int i;

	kp_put(&o, "%s #bytes=%u #iterations=%llu", mode, r->bytes,
	       (unsigned long long)r->iters);
	for (i = 0; i < ARRAY_SIZE(kp_lat_fields); i++)
		kp_put(&o, " %s=%llu.%02u", kp_lat_fields[i].text,
		       KP_US_INT(kp_lat_field(r, i)),
		       KP_US_FRAC(kp_lat_field(r, i)));
	kp_put(&o, " yields=%llu late=%llu shared=%llu",
	       (unsigned long long)r->yields, (unsigned long long)r->late,
	       (unsigned long long)r->shared);
	if (r->variant)
		kp_put(&o, " variant=%s", r->variant);
	if (r->method)
		kp_put(&o, " method=%s", r->method);
	return (int)o.n;
}

/*
 * The bandwidth figures, in the order both the text and the JSON list
 * them: each a fixed-point value, @unit to 1, printed with @digits
 * decimals (truncated); the Gb/s pair only with gbits, the CPU seconds
 * of thread and softirq only in the JSON.
 */
static const struct {
	const char *text;	/* NULL: JSON only */
	const char *json;
	size_t off;
	u32 unit;
	u8 digits;
	bool gbits;
	bool cpu;	/* not on a connection's own line (qps=N) */
} kp_bw_fields[] = {
	{ "BW_peak[MiB/sec]", "BW_peak",
	  offsetof(struct kp_bw_result, bw_peak_x100), 100, 2, false, false },
	{ "BW_average[MiB/sec]", "BW_average",
	  offsetof(struct kp_bw_result, bw_avg_x100), 100, 2, false, false },
	{ "MsgRate[Mpps]", "MsgRate",
	  offsetof(struct kp_bw_result, msgrate_x1e6), 1000000, 6, false, false },
	{ "CPU[s/GiB]", "cpu_s_per_GiB",
	  offsetof(struct kp_bw_result, cpu_ns_per_gib), 1000000000, 4, false,
	  true },
	{ NULL, "cpu_thread_s",
	  offsetof(struct kp_bw_result, cpu_thread_ns), 1000000000, 6, false,
	  true },
	{ NULL, "cpu_softirq_s",
	  offsetof(struct kp_bw_result, cpu_softirq_ns), 1000000000, 6, false,
	  true },
	{ "BW_peak[Gb/sec]", "BW_peak_gbits",
	  offsetof(struct kp_bw_result, gbps_peak_x100), 100, 2, true, false },
	{ "BW_average[Gb/sec]", "BW_average_gbits",
	  offsetof(struct kp_bw_result, gbps_avg_x100), 100, 2, true, false },
};

/* Field @i of @r, if shown: " name=V.DD" in the text, ", \"name\": V.DD" in JSON. */
static void kp_bw_put(struct kp_out *o, const struct kp_bw_result *r,
		      unsigned int i, bool json)
{
	u64 v = *(const u64 *)((const char *)r + kp_bw_fields[i].off);
	u32 unit = kp_bw_fields[i].unit, frac = unit;
	unsigned int d;

	if ((kp_bw_fields[i].gbits && !r->gbits) ||
	    (kp_bw_fields[i].cpu && r->qp))
		return;
	for (d = 0; d < kp_bw_fields[i].digits; d++)
		frac /= 10;
	if (json)
		kp_put(o, ", \"%s\": ", kp_bw_fields[i].json);
	else if (kp_bw_fields[i].text)
		kp_put(o, " %s=", kp_bw_fields[i].text);
	else
		return;
	kp_put(o, "%llu.%0*u", (unsigned long long)(v / unit),
	       (int)kp_bw_fields[i].digits, (unsigned int)(v % unit / frac));
}

int kp_bw_format(char *buf, size_t len, const char *mode,
		 const struct kp_bw_result *r)
{
	struct kp_out o = { buf, len, 0 };
	unsigned int i;

	kp_put(&o, "%s #bytes=%u #iterations=%llu", mode, r->bytes,
	       (unsigned long long)r->iters);
	if (r->qp)
		kp_put(&o, " qp=%u", r->qp - 1);
	else if (r->qps > 1)
		kp_put(&o, " #qps=%u", r->qps);
	for (i = 0; i < ARRAY_SIZE(kp_bw_fields); i++)
		kp_bw_put(&o, r, i, false);
	if (r->qp && r->cpu >= 0)
		kp_put(&o, " cpu=%d", r->cpu);
	if (r->variant)
		kp_put(&o, " variant=%s", r->variant);
	return (int)o.n;
}

int kp_ping_format(char *buf, size_t len, u32 rounds, u32 bytes,
		   bool validated)
{
	return snprintf(buf, len, "ping #bytes=%u rounds=%u validated=%s",
			bytes, rounds, validated ? "yes" : "no");
}

int kp_record_header(char *buf, size_t len)
{
	return snprintf(buf, len,
			"%-4s %-6s %-4s %-4s %-12s %-8s %10s %14s %10s %14s %10s %14s %10s %14s %11s %14s\n",
			"id", "role", "mode", "mem", "device", "state",
			"send_msgs", "send_bytes", "recv_msgs", "recv_bytes",
			"read_msgs", "read_bytes", "write_msgs", "write_bytes",
			"atomic_msgs", "atomic_bytes");
}

int kp_record_format(char *buf, size_t len, u32 id, const char *role,
		     const char *mode, const char *mem, const char *dev,
		     const char *state, const struct kp_counters *c)
{
	return snprintf(buf, len,
			"%-4u %-6s %-4s %-4s %-12s %-8s %10llu %14llu %10llu %14llu %10llu %14llu %10llu %14llu %11llu %14llu\n",
			id, role, mode, mem, dev, state,
			(unsigned long long)c->send_msgs,
			(unsigned long long)c->send_bytes,
			(unsigned long long)c->recv_msgs,
			(unsigned long long)c->recv_bytes,
			(unsigned long long)c->read_msgs,
			(unsigned long long)c->read_bytes,
			(unsigned long long)c->write_msgs,
			(unsigned long long)c->write_bytes,
			(unsigned long long)c->atomic_msgs,
			(unsigned long long)c->atomic_bytes);
}

int kp_progress_format(char *buf, size_t len, const char *mode,
		       const struct kp_progress *p)
{
	if (!strncmp(mode, "bw", 2))	/* bw, bw_read */
		return snprintf(buf, len,
				"%s #bytes=%u iterations=%llu elapsed[s]=%llu.%02u BW[MiB/sec]=%llu.%02u errors=%u",
				mode, p->bytes, (unsigned long long)p->iters,
				(unsigned long long)(p->elapsed_ms / 1000),
				(unsigned int)(p->elapsed_ms % 1000 / 10),
				(unsigned long long)(p->bw_x100 / 100),
				(unsigned int)(p->bw_x100 % 100), p->errors);
	return snprintf(buf, len,
			"%s #bytes=%u iterations=%llu elapsed[s]=%llu.%02u t_avg[usec]=%llu.%02u t_max[usec]=%llu.%02u errors=%u",
			mode, p->bytes, (unsigned long long)p->iters,
			(unsigned long long)(p->elapsed_ms / 1000),
			(unsigned int)(p->elapsed_ms % 1000 / 10),
			KP_US_INT(p->t_avg), KP_US_FRAC(p->t_avg),
			KP_US_INT(p->t_max), KP_US_FRAC(p->t_max), p->errors);
}

/* The fields every JSON object starts with; names are plain identifiers. */
static void kp_json_head(struct kp_out *o, const struct kp_json_ctx *c,
			 u32 bytes, u64 iters)
{
	kp_put(o, "{\"id\": %u, \"test\": \"%s\", \"role\": \"%s\", \"mem\": \"%s\", \"device\": \"%s\", \"kernel\": \"%s\", \"duration\": %u, \"MsgSize\": %u, \"n_iterations\": %llu",
	       c->id, c->mode, c->role, c->mem, c->dev, c->kernel,
	       c->duration_s, bytes, (unsigned long long)iters);
	if (c->cq)
		kp_put(o, ", \"cq\": \"%s\"", c->cq);
	if (c->sge)
		kp_put(o, ", \"sge\": %u", c->sge);
	if (c->rw)
		kp_put(o, ", \"rdma_rw\": true");
	if (c->hw && c->hw->have) {
		u32 i;

		kp_put(o, ", \"hw_counters\": {");
		for (i = 0; i < c->hw->n; i++)
			kp_put(o, "%s\"%s\": %llu", i ? ", " : "",
			       c->hw->c[i].name,
			       (unsigned long long)c->hw->c[i].delta);
		kp_put(o, "}");
		if (c->hw->more)
			kp_put(o, ", \"hw_counters_more\": %u", c->hw->more);
	}
	if (c->warmup)
		kp_put(o, ", \"warmup\": %u", c->warmup);
	if (c->clock)
		kp_put(o, ", \"clock\": \"%s\"", c->clock);
	if (c->clock_khz)
		kp_put(o, ", \"clock_khz\": %u", c->clock_khz);
	if (c->clock_rate)
		kp_put(o, ", \"clock_rate\": \"%s\"", c->clock_rate);
	if (c->clock_rate && !strcmp(c->clock_rate, "measured"))
		kp_put(o, ", \"clock_cal_ns\": %u", c->clock_cal_ns);
}

void kp_hw_add(struct kp_hw_counters *hw, const char *name, u64 delta)
{
	struct kp_hw_delta *d;
	size_t i;

	if (!delta)
		return;
	if (hw->n == KP_HW_MAX) {
		hw->more++;
		return;
	}
	d = &hw->c[hw->n++];
	for (i = 0; name[i] && i + 1 < sizeof(d->name); i++) {
		char ch = name[i];

		d->name[i] = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
			     (ch >= 'A' && ch <= 'Z') || ch == '_' ||
			     ch == '.' || ch == '-' ? ch : '_';
	}
	d->name[i] = '\0';
	d->delta = delta;
}

int kp_hw_format(char *buf, size_t len, const struct kp_hw_counters *hw)
{
	struct kp_out o = { buf, len, 0 };
	u32 i;

	if (len)
		buf[0] = '\0';
	if (!hw->n)
		kp_put(&o, "none moved");
	for (i = 0; i < hw->n; i++)
		kp_put(&o, "%s%s=%llu", i ? " " : "", hw->c[i].name,
		       (unsigned long long)hw->c[i].delta);
	if (hw->more)
		kp_put(&o, " +%u more", hw->more);
	return (int)o.n;
}

int kp_lat_json(char *buf, size_t len, const struct kp_json_ctx *c,
		const struct kp_lat_result *r)
{
	struct kp_out o = { buf, len, 0 };
	unsigned int i;

	kp_json_head(&o, c, r->bytes, r->iters);
	for (i = 0; i < ARRAY_SIZE(kp_lat_fields); i++)
		kp_put(&o, ", \"%s\": %llu.%02u", kp_lat_fields[i].json,
		       KP_US_INT(kp_lat_field(r, i)),
		       KP_US_FRAC(kp_lat_field(r, i)));
	kp_put(&o, ", \"yields\": %llu, \"late\": %llu, \"shared\": %llu, \"shared_us\": %llu.%02u",
	       (unsigned long long)r->yields, (unsigned long long)r->late,
	       (unsigned long long)r->shared, KP_US_INT(r->shared_ns),
	       KP_US_FRAC(r->shared_ns));
	if (r->variant)
		kp_put(&o, ", \"variant\": \"%s\"", r->variant);
	if (r->method)
		kp_put(&o, ", \"method\": \"%s\"", r->method);
	kp_put(&o, ", \"cdf\": [");
	for (i = 0; i < KP_CDF_POINTS; i++)
		kp_put(&o, "%s[%u.%03u, %llu.%02u]", i ? ", " : "",
		       kp_cdf_permille[i] / 1000, kp_cdf_permille[i] % 1000,
		       KP_US_INT(r->cdf[i]), KP_US_FRAC(r->cdf[i]));
	kp_put(&o, "]");
	if (r->nhist) {
		u32 div = r->hist_div ? r->hist_div : 1;

		kp_put(&o, ", \"histogram\": [");
		for (i = 0; i < r->nhist; i++) {
			u32 idx = (u32)r->hist[i].idx;
			/* the bucket's middle, in ns; three decimals of usec */
			u64 ns = kp_div(kp_hist_lo(idx) + kp_hist_width(idx) / 2,
					div);

			kp_put(&o, "%s[%llu.%03u, %llu]", i ? ", " : "",
			       (unsigned long long)(ns / 1000),
			       (unsigned int)(ns % 1000),
			       (unsigned long long)r->hist[i].count);
		}
		kp_put(&o, "]");
	}
	kp_put(&o, "}");
	return (int)o.n;
}

int kp_bw_json(char *buf, size_t len, const struct kp_json_ctx *c,
	       const struct kp_bw_result *r)
{
	struct kp_out o = { buf, len, 0 };
	unsigned int i;

	kp_json_head(&o, c, r->bytes, r->iters);
	if (r->qp)
		kp_put(&o, ", \"qp\": %u", r->qp - 1);
	else if (r->qps > 1)
		kp_put(&o, ", \"qps\": %u", r->qps);
	for (i = 0; i < ARRAY_SIZE(kp_bw_fields); i++)
		kp_bw_put(&o, r, i, true);
	if (r->qp && r->cpu >= 0)
		kp_put(&o, ", \"cpu\": %d", r->cpu);
	if (r->variant)
		kp_put(&o, ", \"variant\": \"%s\"", r->variant);
	kp_put(&o, "}");
	return (int)o.n;
}
