// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests of the control grammar (proc/kp_opts.c). */
#include "kt.h"
#include "../../proc/kp_opts.h"

static struct kp_opts o;
static char err[256];

static int parse(const char *s)
{
	return kp_opts_parse(s, strlen(s), &o, err, sizeof(err));
}

/* @s must fail with @want, and the reason must mention @word. */
static void expect_err(const char *s, int want, const char *word)
{
	int ret = parse(s);

	KT_CHECK(ret == want, "'%.60s': got %d want %d (%s)", s, ret, want, err);
	KT_CHECK(!word || strstr(err, word), "'%.60s': reason '%s' lacks '%s'",
		 s, err, word);
}

static void expect_ok(const char *s)
{
	int ret = parse(s);

	KT_CHECK(ret == 0, "'%.60s': got %d (%s)", s, ret, err);
}

#define BASE "client,addr=192.0.2.1,port=9999"

static void test_minimal_and_defaults(void)
{
	expect_ok(BASE);
	KT_CHECK(o.role == KP_ROLE_CLIENT, "role");
	KT_CHECK(o.mode == KP_MODE_PING, "mode");
	KT_CHECK(o.addr.family == 4 && o.addr.addr[0] == 192 &&
		 o.addr.addr[1] == 0 && o.addr.addr[2] == 2 &&
		 o.addr.addr[3] == 1, "addr bytes");
	KT_CHECK(o.port == 9999, "port %u", o.port);
	KT_CHECK(o.count == 1000 && o.size == 64 && o.txdepth == 64 &&
		 o.timeout_ms == 10000 && o.mem == KP_MEM_HOST && o.npu_dev == 0 &&
		 o.probe_ms == 1000, "defaults");
	KT_CHECK(!o.validate && !o.verbose && !o.poll && !o.duplex, "flags off");
	expect_ok("server,addr=0.0.0.0,port=1");
	KT_CHECK(o.role == KP_ROLE_SERVER, "server role");
	/* order does not matter */
	expect_ok("port=7,addr=10.1.2.3,client");
	KT_CHECK(o.port == 7 && o.addr.addr[3] == 3, "any order");
}

static void test_every_option(void)
{
	expect_ok(BASE ",tos=32,count=5,size=4096,validate,verbose,txdepth=16,poll,local_dma_lkey,timeout=500");
	KT_CHECK(o.tos == 32 && o.count == 5 && o.size == 4096 &&
		 o.txdepth == 16 && o.timeout_ms == 500, "numbers");
	KT_CHECK(o.validate && o.verbose && o.poll && o.local_dma_lkey, "flags");
	KT_CHECK(kp_opt_given(&o, KP_OPT_TOS) && !kp_opt_given(&o, KP_OPT_BW),
		 "given mask");
	expect_ok("server,addr=192.0.2.1,port=9,read_inv");
	KT_CHECK(o.read_inv, "read_inv");
	expect_ok("server,addr=192.0.2.1,port=9,server_inv");
	KT_CHECK(o.server_inv, "server_inv");
	expect_ok(BASE ",fr");
	KT_CHECK(o.mode == KP_MODE_FR, "fr");
	expect_ok(BASE ",rlat");
	KT_CHECK(o.mode == KP_MODE_RLAT, "rlat");
	expect_ok(BASE ",wlat,size=1");
	KT_CHECK(o.mode == KP_MODE_WLAT && o.size == 1, "wlat");
	expect_ok(BASE ",bw,duplex");
	KT_CHECK(o.mode == KP_MODE_BW && o.duplex, "bw duplex");
	expect_ok("server,addr=192.0.2.1,port=9,bw");
	KT_CHECK(o.mode == KP_MODE_BW, "server bw");
	expect_ok(BASE ",mem=npu,npu_dev=3");
	KT_CHECK(o.mem == KP_MEM_NPU && o.npu_dev == 3, "mem=npu npu_dev=3");
	expect_ok(BASE ",mem=npu,npu_va=0x100000200000,npu_len=8192");
	KT_CHECK(o.npu_va == 0x100000200000ull && o.npu_len == 8192,
		 "npu_va 0x%llx npu_len %llu", (unsigned long long)o.npu_va,
		 (unsigned long long)o.npu_len);
	expect_ok("server,addr=192.0.2.1,port=9,mem=npu,npu_va=4096,npu_len=0xffffffffffffe000");
	KT_CHECK(o.npu_va == 4096 && o.npu_len == 0xffffffffffffe000ull,
		 "npu_len near 2^64");
	expect_ok(BASE ",mem=host");
	KT_CHECK(o.mem == KP_MEM_HOST && !o.npu_va && !o.npu_len, "mem=host");
	KT_CHECK(!strcmp(kp_mem_name(KP_MEM_NPU), "npu") &&
		 !strcmp(kp_mem_name(KP_MEM_HOST), "host"), "mem names");
}

static void test_ranges(void)
{
	static const struct { const char *opt; unsigned int lo, hi; } r[] = {
		{ "port", 1, 65535 }, { "tos", 0, 255 },
		{ "count", 1, KP_MAX_COUNT }, { "txdepth", 1, KP_MAX_TXDEPTH },
		{ "timeout", 100, 3600000 }, { "npu_dev", 0, KP_MAX_NPU_DEV },
		{ "probe", 0, KP_MAX_PROBE_MS },
	};
	char s[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(r); i++) {
		const char *pre = !strcmp(r[i].opt, "port") ?
			"client,addr=192.0.2.1," : !strcmp(r[i].opt, "npu_dev") ?
			"client,addr=192.0.2.1,port=9,mem=npu," :
			"client,addr=192.0.2.1,port=9,";

		snprintf(s, sizeof(s), "%s%s=%u", pre, r[i].opt, r[i].lo);
		expect_ok(s);
		snprintf(s, sizeof(s), "%s%s=%u", pre, r[i].opt, r[i].hi);
		expect_ok(s);
		snprintf(s, sizeof(s), "%s%s=%u", pre, r[i].opt, r[i].hi + 1);
		expect_err(s, -ERANGE, r[i].opt);
		if (r[i].lo) {
			snprintf(s, sizeof(s), "%s%s=%u", pre, r[i].opt, r[i].lo - 1);
			expect_err(s, -ERANGE, r[i].opt);
		}
	}
	/* size: 1..4 MiB in latency modes; ping needs its payload */
	snprintf(s, sizeof(s), BASE ",wlat,size=%u", KP_MAX_SIZE);
	expect_ok(s);
	KT_CHECK(o.size == KP_MAX_SIZE, "max size");
	snprintf(s, sizeof(s), BASE ",wlat,size=%u", KP_MAX_SIZE + 1);
	expect_err(s, -ERANGE, "size");
	expect_err(BASE ",wlat,size=0", -ERANGE, "size");
	snprintf(s, sizeof(s), BASE ",size=%u", KP_PING_MIN_SIZE);
	expect_ok(s);
	snprintf(s, sizeof(s), BASE ",size=%u", KP_PING_MIN_SIZE - 1);
	expect_err(s, -EINVAL, "size");
	/* hex numbers */
	expect_ok(BASE ",size=0x1000");
	KT_CHECK(o.size == 4096, "hex size %u", o.size);
	expect_err(BASE ",size=0x", -EINVAL, "size");
	/* huge and negative numbers */
	expect_err(BASE ",count=18446744073709551615", -ERANGE, "count");
	expect_err(BASE ",count=18446744073709551616", -ERANGE, "count");
	expect_err(BASE ",count=99999999999999999999999999", -ERANGE, "count");
	expect_err(BASE ",count=-1", -EINVAL, "count");
	expect_err(BASE ",size=+5", -EINVAL, "size");
	expect_err(BASE ",size=12k", -EINVAL, "size");
	expect_err(BASE ",size= 64", -EINVAL, "size");
}

static void test_conflicts(void)
{
	expect_err("server,client,addr=192.0.2.1,port=9", -EINVAL, "role");
	expect_err("client,client,addr=192.0.2.1,port=9", -EINVAL, "twice");
	expect_err(BASE ",rlat,wlat", -EINVAL, "one test mode");
	expect_err(BASE ",bw,fr", -EINVAL, "one test mode");
	expect_err("server,addr=192.0.2.1,port=9,fr", -EINVAL, "fr");
	expect_err(BASE ",duplex", -EINVAL, "duplex");
	expect_err(BASE ",wlat,duplex", -EINVAL, "duplex");
	expect_err(BASE ",size=8", -EINVAL, "ping payload");
	expect_err(BASE ",rlat,validate", -EINVAL, "validate");
	expect_err(BASE ",read_inv", -EINVAL, "read_inv");
	expect_err(BASE ",server_inv", -EINVAL, "server_inv");
	expect_err("server,addr=192.0.2.1,port=9,bw,server_inv", -EINVAL,
		   "server_inv");
	expect_err("server,addr=192.0.2.1,port=9,read_inv,local_dma_lkey",
		   -EINVAL, "read_inv");
	expect_err("client,addr=192.0.2.1,addr6=::1,port=9", -EINVAL, "addr6");
	expect_err("client,port=9", -EINVAL, "addr");
	expect_err("client,addr=192.0.2.1", -EINVAL, "port");
	expect_err("addr=192.0.2.1,port=9", -EINVAL, "server");
	expect_err(BASE ",port=10", -EINVAL, "twice");
	expect_err(BASE ",count=1,count=1", -EINVAL, "count");
	expect_err(BASE ",npu_dev=1", -EINVAL, "npu_dev");
	expect_err(BASE ",mem=host,npu_dev=1", -EINVAL, "npu_dev");
	expect_err(BASE ",mem=npu,local_dma_lkey", -EINVAL, "local_dma_lkey");
	expect_err(BASE ",mem=gpu", -EINVAL, "mem");
	expect_err(BASE ",mem=", -EINVAL, "mem");
	expect_err(BASE ",mem", -EINVAL, "needs a value");
	expect_err(BASE ",mem=NPU", -EINVAL, "mem");
	expect_err(BASE ",mem=npu,mem=host", -EINVAL, "twice");
	expect_err(BASE ",mem=npu,npu_va=0x200000", -EINVAL, "together");
	expect_err(BASE ",mem=npu,npu_len=4096", -EINVAL, "together");
	expect_err(BASE ",npu_va=0x200000,npu_len=4096", -EINVAL, "mem=npu");
	expect_err(BASE ",mem=npu,npu_va=0x200001,npu_len=4096", -EINVAL,
		   "multiples of 4096");
	expect_err(BASE ",mem=npu,npu_va=0x200000,npu_len=4097", -EINVAL,
		   "multiples of 4096");
	expect_err(BASE ",mem=npu,npu_va=0,npu_len=4096", -ERANGE, "npu_va");
	expect_err(BASE ",mem=npu,npu_va=0x1000,npu_len=0", -ERANGE, "npu_len");
	expect_err(BASE ",mem=npu,npu_va=0x10000000000000000,npu_len=4096",
		   -ERANGE, "npu_va");
	expect_err(BASE ",mem=npu,npu_va=0x1g,npu_len=4096", -EINVAL,
		   "not a number");
	expect_err(BASE ",mem=npu,npu_va=0xfffffffffffff000,npu_len=0x2000",
		   -ERANGE, "wraps");
	expect_err(BASE ",mem=npu,npu_dev=1,npu_va=0x1000,npu_len=0x1000",
		   -EINVAL, "npu_dev");
	expect_err(BASE ",mem=npu,npu_va,npu_len=4096", -EINVAL, "needs a value");
}

static void test_addresses(void)
{
	static const char * const bad4[] = {
		"256.0.0.1", "1.2.3", "1.2.3.4.5", "1..2.3", "a.b.c.d", "1.2.3.4 ",
		"0001.2.3.4", "", "1.2.3.",
	};
	static const char * const bad6[] = {
		":::", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7",
		"g::1", "fe80::1%", "fe80::1%this-name-is-too-long",
		"fe80::1%et h0", "1:", "::1.2.3", "::1.2.3.4.5",
	};
	char s[128];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad4); i++) {
		snprintf(s, sizeof(s), "client,port=9,addr=%s", bad4[i]);
		expect_err(s, -EINVAL, "addr");
	}
	for (i = 0; i < ARRAY_SIZE(bad6); i++) {
		snprintf(s, sizeof(s), "client,port=9,addr6=%s", bad6[i]);
		expect_err(s, -EINVAL, "addr6");
	}
	expect_ok("client,port=9,addr6=::1");
	KT_CHECK(o.addr.family == 6 && o.addr.addr[15] == 1 &&
		 o.addr.addr[0] == 0, "::1");
	expect_ok("client,port=9,addr6=fe80::1:2%d0");
	KT_CHECK(o.addr.addr[0] == 0xfe && o.addr.addr[1] == 0x80 &&
		 o.addr.addr[13] == 1 && o.addr.addr[15] == 2 &&
		 !strcmp(o.addr.ifname, "d0"), "fe80::1:2%%d0");
	expect_ok("client,port=9,addr6=fe80::1%7");
	KT_CHECK(o.addr.scope_id == 7 && !o.addr.ifname[0], "numeric scope");
	expect_ok("client,port=9,addr6=2001:db8:0:0:0:0:0:ff");
	KT_CHECK(o.addr.addr[0] == 0x20 && o.addr.addr[1] == 0x01 &&
		 o.addr.addr[3] == 0xb8 && o.addr.addr[15] == 0xff, "full form");
	expect_ok("client,port=9,addr6=::ffff:192.0.2.1");
	KT_CHECK(o.addr.addr[10] == 0xff && o.addr.addr[12] == 192 &&
		 o.addr.addr[15] == 1, "v4-mapped");
	expect_ok("client,port=9,addr6=1::");
	KT_CHECK(o.addr.addr[1] == 1 && o.addr.addr[15] == 0, "1::");
	kp_addr_format(&o.addr, s, sizeof(s));
	KT_CHECK(!strcmp(s, "1:0:0:0:0:0:0:0"), "format6 %s", s);
	expect_ok("client,port=9,addr6=fe80::9%eth0");
	kp_addr_format(&o.addr, s, sizeof(s));
	KT_CHECK(!strcmp(s, "fe80:0:0:0:0:0:0:9%eth0"), "format6 scope %s", s);
	expect_ok(BASE);
	kp_addr_format(&o.addr, s, sizeof(s));
	KT_CHECK(!strcmp(s, "192.0.2.1"), "format4 %s", s);
}

static void test_junk(void)
{
	char big[4097];
	char s[KP_CMD_MAX + 1];
	int ret;

	expect_err("", -EINVAL, "empty");
	expect_err("\n", -EINVAL, "empty");
	expect_err(BASE ",", -EINVAL, "empty option");
	expect_err("," BASE, -EINVAL, "empty option");
	expect_err("client,,addr=192.0.2.1,port=9", -EINVAL, "empty option");
	expect_err(BASE ",bogus", -EINVAL, "bogus");
	expect_err(BASE ",size", -EINVAL, "needs a value");
	expect_err(BASE ",size=", -EINVAL, "size");
	expect_err(BASE ",validate=1", -EINVAL, "takes no value");
	expect_err("client=1,addr=192.0.2.1,port=9", -EINVAL, "takes no value");
	expect_err(BASE ",=5", -EINVAL, "unknown");
	expect_err(BASE ",SIZE=64", -EINVAL, "unknown");
	expect_err(BASE "\n\n", -EINVAL, NULL);
	expect_err(" client,addr=192.0.2.1,port=9", -EINVAL, "unknown");
	/* an embedded NUL is never trusted */
	ret = kp_opts_parse(BASE "\0,bw", sizeof(BASE ",bw") - 1 + 1, &o, err,
			    sizeof(err));
	KT_CHECK(ret == -EINVAL && strstr(err, "NUL"), "NUL: %d %s", ret, err);
	/* a trailing newline is allowed, and is the only thing stripped */
	expect_ok(BASE "\n");
	KT_CHECK(o.port == 9999, "newline kept the last digit: %u", o.port);
	expect_ok("client,addr=192.0.2.1,port=9999,size=65");
	KT_CHECK(o.size == 65, "missing newline keeps last char: %u", o.size);
	/* 4 KiB of junk */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	expect_err(big, -E2BIG, "longer");
	/* exactly KP_CMD_MAX is parsed, one more is refused */
	memset(s, 'a', KP_CMD_MAX);
	s[KP_CMD_MAX] = '\0';
	expect_err(s, -EINVAL, "unknown");
	ret = kp_opts_parse(big, KP_CMD_MAX + 1, &o, err, sizeof(err));
	KT_CHECK(ret == -E2BIG, "KP_CMD_MAX+1: %d", ret);
	/* the reason always fits and is terminated */
	ret = kp_opts_parse(BASE ",bogus", strlen(BASE ",bogus"), &o, err, 8);
	KT_CHECK(ret == -EINVAL && strlen(err) == 7, "short err buffer");
}

static void test_help(void)
{
	static char buf[32768];
	int n = kp_opts_help(buf, sizeof(buf));
	static const char * const names[] = {
		"server", "client", "addr=", "addr6=", "port=", "tos=", "count=",
		"size=", "validate", "verbose", "txdepth=", "poll",
		"local_dma_lkey", "read_inv", "server_inv", "fr", "rlat", "wlat",
		"bw", "duplex", "timeout=", "mem=host|npu", "npu_dev=",
		"npu_va=N|0xN", "npu_len=N|0xN",
		"sizes=N[-M][:...]", "duration=", "progress=", "warmup=",
		"gbits", "events", "read", "slat", "send", "qps=1..64",
		"cpus=N[-M][:...]", "probe=", "imm",
		"cq=direct|softirq|workqueue|unbound", "expect_bw=1..10000000",
		"max_lat=1..10000000", "max_p99=1..10000000", "sge=1..16",
		"rw", "light", "inline=", "cq_mod=1..1024", "alat",
		"atomic=fadd|cas", "qp_timeout=0..31", "retry_count=0..7",
		"rate_limit=1..10000000", "burst_size=1..1024",
		"post_list=1..64", "recv_post_list=1..64", "srq", "ud",
		"mr_per_qp", "rx_depth=1..16384",
	};
	unsigned int i;

	KT_CHECK(n > 0 && n < (int)sizeof(buf), "help length %d", n);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		KT_CHECK(strstr(buf, names[i]), "help lacks %s", names[i]);
	KT_CHECK(ARRAY_SIZE(names) == KP_OPT_NR,
		 "every option is in this test");
}

static void expect_sizes(const char *s, const u32 *want, u32 n)
{
	u32 i;

	expect_ok(s);
	KT_CHECK(o.nsizes == n, "'%s': %u sizes, want %u", s, o.nsizes, n);
	for (i = 0; i < n && i < o.nsizes; i++)
		KT_CHECK(o.sizes[i] == want[i], "'%s': size %u is %u, want %u",
			 s, i, o.sizes[i], want[i]);
}

static void test_sweeps(void)
{
	static const u32 range[] = { 64, 128, 256, 512, 1024, 2048, 4096 };
	static const u32 list[] = { 4096, 64, 100 };
	static const u32 mixed[] = { 1, 2, 4, 8, 3000, 65536, 131072 };
	static const u32 odd[] = { 3, 6, 12 };
	static const u32 one[] = { 100 };
	static const u32 all[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512,
		1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144,
		524288, 1048576, 2097152, 4194304 };
	char cmd[512];
	int i;

	expect_sizes(BASE ",wlat,sizes=64-4096", range, 7);
	expect_sizes(BASE ",bw,sizes=4096:64:100", list, 3);
	expect_sizes(BASE ",rlat,sizes=1-8:3000:65536-131072", mixed, 7);
	expect_sizes(BASE ",rlat,sizes=3-20", odd, 3);
	expect_sizes(BASE ",rlat,sizes=100-100", one, 1);
	expect_sizes(BASE ",rlat,sizes=0x1-0x400000", all, 23);
	/* without sizes=, the sweep is size alone */
	expect_sizes(BASE ",wlat,size=100", one, 1);
	KT_CHECK(o.size == 100, "size kept");

	expect_err(BASE ",wlat,sizes=", -EINVAL, "empty item");
	expect_err(BASE ",wlat,sizes", -EINVAL, "needs a value");
	expect_err(BASE ",wlat,sizes=64:", -EINVAL, "sizes");
	expect_err(BASE ",wlat,sizes=:64", -EINVAL, "sizes");
	expect_err(BASE ",wlat,sizes=64::128", -EINVAL, "sizes");
	expect_err(BASE ",wlat,sizes=4096-64", -EINVAL, "bad item");
	expect_err(BASE ",wlat,sizes=64-", -EINVAL, "bad item");
	expect_err(BASE ",wlat,sizes=-64", -EINVAL, "bad item");
	expect_err(BASE ",wlat,sizes=a-b", -EINVAL, "bad item");
	expect_err(BASE ",wlat,sizes=64-128-256", -EINVAL, "bad item");
	expect_err(BASE ",wlat,sizes=0-64", -ERANGE, "out of range");
	expect_err(BASE ",wlat,sizes=0", -ERANGE, "out of range");
	expect_err(BASE ",wlat,sizes=64-4194305", -ERANGE, "out of range");
	expect_err(BASE ",wlat,sizes=99999999999999999999999", -ERANGE,
		   "out of range");
	/* 23 + 10 sizes: one over the limit */
	expect_err(BASE ",wlat,sizes=1-4194304:1:2:3:4:5:6:7:8:9:10", -E2BIG,
		   "more than 32");
	strcpy(cmd, BASE ",wlat,sizes=1");
	for (i = 2; i <= 32; i++)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), ":%d", i);
	expect_ok(cmd);
	KT_CHECK(o.nsizes == 32 && o.sizes[31] == 32, "32 sizes");
	strcat(cmd, ":33");
	expect_err(cmd, -E2BIG, "more than 32");

	expect_err(BASE ",wlat,sizes=64-128,size=64", -EINVAL, "conflicts");
	expect_err(BASE ",sizes=64-128", -EINVAL, "needs 'rlat'");
	expect_err(BASE ",fr,sizes=64-128", -EINVAL, "needs 'rlat'");
	expect_err("server,addr=192.0.2.1,port=1,sizes=64", -EINVAL,
		   "client option");
}

static void test_duration(void)
{
	expect_ok(BASE ",bw,duration=600,progress=10");
	KT_CHECK(o.duration_s == 600 && o.progress_s == 10, "duration %u progress %u",
		 o.duration_s, o.progress_s);
	expect_ok(BASE ",rlat,duration=1");
	expect_ok(BASE ",wlat,count=5,progress=3600");
	expect_ok(BASE ",bw,duration=86400,sizes=64-128");
	expect_err(BASE ",bw,duration=0", -ERANGE, "duration");
	expect_err(BASE ",bw,duration=86401", -ERANGE, "duration");
	expect_err(BASE ",bw,progress=0", -ERANGE, "progress");
	expect_err(BASE ",bw,progress=3601", -ERANGE, "progress");
	expect_err(BASE ",bw,duration=-1", -EINVAL, "not a number");
	expect_err(BASE ",bw,duration=10,count=10", -EINVAL, "conflicts");
	expect_err(BASE ",duration=10", -EINVAL, "needs 'rlat'");
	expect_err(BASE ",progress=10", -EINVAL, "needs 'rlat'");
	expect_err(BASE ",fr,duration=10", -EINVAL, "needs 'rlat'");
	expect_err("server,addr=192.0.2.1,port=1,duration=10", -EINVAL,
		   "client option");
	expect_err("server,addr=192.0.2.1,port=1,bw,progress=1", -EINVAL,
		   "client option");
}

static void test_perftest_opts(void)
{
	expect_ok(BASE ",wlat,warmup=100,events");
	KT_CHECK(o.warmup == 100 && o.events && !o.gbits, "warmup %u events %d",
		 o.warmup, o.events);
	expect_ok(BASE ",bw,gbits,warmup=1,duration=5");
	KT_CHECK(o.gbits && o.warmup == 1 && !o.events, "gbits");
	expect_ok(BASE ",rlat,sizes=64-128,warmup=1000000");
	expect_ok(BASE ",fr,events");
	/* imm: wlat's immediate-data variant, a client's choice */
	expect_ok(BASE ",wlat,imm");
	KT_CHECK(o.wlat_imm && o.mode == KP_MODE_WLAT, "wlat,imm");
	expect_ok(BASE ",wlat");
	KT_CHECK(!o.wlat_imm, "wlat is plain by default");
	expect_err(BASE ",rlat,imm", -EINVAL, "'imm' is for a wlat or bw client");
	expect_err(BASE ",imm", -EINVAL, "'imm' is for a wlat or bw client");
	expect_err("server,addr=192.0.2.1,port=1,wlat,imm", -EINVAL,
		   "'imm' is for a wlat or bw client");
	/* imm on bw: WRITE_WITH_IMM (bw_imm) or SEND_WITH_IMM streams */
	expect_ok(BASE ",bw,imm,qps=2");
	KT_CHECK(o.mode == KP_MODE_BW_IMM && o.wlat_imm, "bw,imm is bw_imm");
	expect_ok(BASE ",bw,send,imm");
	KT_CHECK(o.mode == KP_MODE_BW_SEND && o.wlat_imm, "bw,send,imm");
	expect_err(BASE ",bw,read,imm", -EINVAL, "not with 'read'");
	expect_err(BASE ",bw,duplex,imm", -EINVAL, "not with 'duplex'");
	expect_err(BASE ",bw,atomic=fadd,imm", -EINVAL, "not with 'atomic'");
	expect_err(BASE ",bw,imm,rw", -EINVAL, "not with 'imm'");
	expect_err(BASE ",wlat,imm=1", -EINVAL, "takes no value");
	expect_err(BASE ",bw,warmup=0", -ERANGE, "warmup");
	expect_err(BASE ",bw,warmup=1000001", -ERANGE, "warmup");
	expect_err(BASE ",warmup=10", -EINVAL, "needs 'rlat'");
	expect_err(BASE ",fr,warmup=10", -EINVAL, "needs 'rlat'");
	expect_err("server,addr=192.0.2.1,port=1,warmup=10", -EINVAL,
		   "client option");
	/* gbits on a latency test, or a server: refused */
	expect_err(BASE ",wlat,gbits", -EINVAL, "'gbits' is for a bw client");
	expect_err(BASE ",gbits", -EINVAL, "'gbits' is for a bw client");
	expect_err("server,addr=192.0.2.1,port=1,bw,gbits", -EINVAL,
		   "'gbits' is for a bw client");
	expect_err(BASE ",events", -EINVAL, "'events' is for a client");
	expect_err("server,addr=192.0.2.1,port=1,events", -EINVAL,
		   "'events' is for a client");
	expect_err(BASE ",bw,gbits=1", -EINVAL, "");
	/* bw,read: the READ stream, a mode of its own */
	expect_ok(BASE ",bw,read,gbits,warmup=10,sizes=64-4096");
	KT_CHECK(o.mode == KP_MODE_BW_READ && kp_mode_bw(o.mode) &&
		 !strcmp(kp_mode_name(o.mode), "bw_read"), "bw,read: mode %d",
		 o.mode);
	expect_ok(BASE ",read,bw");
	KT_CHECK(o.mode == KP_MODE_BW_READ, "read,bw");
	expect_ok(BASE ",bw");
	KT_CHECK(o.mode == KP_MODE_BW && kp_mode_bw(o.mode) &&
		 !kp_mode_bw(KP_MODE_WLAT), "bw alone");
	expect_err(BASE ",read", -EINVAL, "'read' needs 'bw'");
	expect_err(BASE ",wlat,read", -EINVAL, "'read' needs 'bw'");
	expect_ok(BASE ",bw,read,duplex");
	KT_CHECK(o.mode == KP_MODE_BW_READ && o.duplex, "bw,read,duplex");
	/* slat and bw,send: the SEND/RECV tests */
	expect_ok(BASE ",slat,sizes=1-65536,warmup=5,events");
	KT_CHECK(o.mode == KP_MODE_SLAT && kp_mode_pingpong(o.mode) &&
		 kp_mode_send(o.mode) && !kp_mode_bw(o.mode) &&
		 !strcmp(kp_mode_name(o.mode), "slat") && o.nsizes == 17,
		 "slat: mode %d, %u sizes", o.mode, o.nsizes);
	expect_ok(BASE ",slat,duration=3,progress=1");
	expect_ok(BASE ",bw,send,gbits,duration=2,sizes=64:4096");
	KT_CHECK(o.mode == KP_MODE_BW_SEND && kp_mode_bw(o.mode) &&
		 kp_mode_send(o.mode) && !kp_mode_pingpong(o.mode) &&
		 !strcmp(kp_mode_name(o.mode), "bw_send"), "bw,send: mode %d",
		 o.mode);
	KT_CHECK(!kp_mode_send(KP_MODE_BW) && !kp_mode_send(KP_MODE_WLAT) &&
		 kp_mode_pingpong(KP_MODE_WLAT) &&
		 !kp_mode_pingpong(KP_MODE_RLAT), "mode classes");
	expect_ok("server,addr=192.0.2.1,port=1,slat");
	expect_ok("server,addr=192.0.2.1,port=1,bw,send");
	KT_CHECK(o.mode == KP_MODE_BW_SEND, "server bw,send: mode %d", o.mode);
	expect_err(BASE ",send", -EINVAL, "'send' needs 'bw'");
	expect_err(BASE ",slat,send", -EINVAL, "'send' needs 'bw'");
	expect_err(BASE ",bw,send,read", -EINVAL, "two different streams");
	expect_ok(BASE ",bw,send,duplex");
	KT_CHECK(o.duplex && o.mode == KP_MODE_BW_SEND, "bw,send,duplex: both ways");
	expect_err(BASE ",slat,gbits", -EINVAL, "'gbits' is for a bw client");
	expect_err(BASE ",slat,wlat", -EINVAL, "one test mode only");
	expect_err(BASE ",slat,validate", -EINVAL, "applies to ping, bw,send, bw,read and bw,imm");
	expect_err("server,addr=192.0.2.1,port=1,slat,warmup=3", -EINVAL,
		   "client option");
}

/* qps=N and cpus=LIST: several connections, pinned threads */
static void test_qps(void)
{
	expect_ok(BASE ",bw");
	KT_CHECK(o.qps == 1 && !o.ncpus, "defaults: qps %u ncpus %u", o.qps,
		 o.ncpus);
	expect_ok(BASE ",bw,qps=4,cpus=0:1");
	KT_CHECK(o.qps == 4 && o.ncpus == 2 && o.cpus[0] == 0 &&
		 o.cpus[1] == 1, "qps=4,cpus=0:1: %u %u", o.qps, o.ncpus);
	expect_ok(BASE ",bw,qps=64,cpus=8-11:3:40-41");
	KT_CHECK(o.ncpus == 7 && o.cpus[0] == 8 && o.cpus[3] == 11 &&
		 o.cpus[4] == 3 && o.cpus[6] == 41, "ranges: %u cpus", o.ncpus);
	expect_ok(BASE ",bw,cpus=5");
	KT_CHECK(o.qps == 1 && o.ncpus == 1 && o.cpus[0] == 5, "cpus alone");
	expect_ok(BASE ",bw,read,qps=2");
	KT_CHECK(o.mode == KP_MODE_BW_READ && o.qps == 2, "bw,read,qps");
	expect_ok(BASE ",bw,send,qps=3,cpus=1:0");
	KT_CHECK(o.mode == KP_MODE_BW_SEND && o.cpus[0] == 1, "bw,send,qps");
	expect_ok(BASE ",bw,duplex,qps=2,duration=3,gbits");
	expect_ok(BASE ",bw,qps=2,cpus=0:1,events");
	expect_ok(BASE ",bw,qps=1,events");

	expect_err(BASE ",bw,qps=0", -ERANGE, "out of range [1, 64]");
	expect_err(BASE ",bw,qps=65", -ERANGE, "out of range [1, 64]");
	expect_err(BASE ",qps=2", -EINVAL, "'qps' needs 'bw', not 'ping'");
	expect_err(BASE ",wlat,qps=2", -EINVAL, "needs 'bw', not 'wlat'");
	expect_err(BASE ",slat,qps=2", -EINVAL, "needs 'bw'");
	expect_err(BASE ",rlat,cpus=0", -EINVAL, "'cpus' needs 'bw'");
	expect_err(BASE ",fr,qps=1", -EINVAL, "needs 'bw'");
	expect_err("server,addr=192.0.2.1,port=1,bw,qps=2", -EINVAL,
		   "the server follows the client");
	expect_err("server,addr=192.0.2.1,port=1,bw,cpus=0", -EINVAL,
		   "client option");
	expect_err(BASE ",bw,qps=2,cpus=0:1:2", -EINVAL,
		   "3 CPUs for 2 QP(s)");
	expect_err(BASE ",bw,cpus=0:1", -EINVAL, "a thread would have none");
	expect_err(BASE ",bw,qps=4,events", -EINVAL, "'events' sleeps");
	expect_err(BASE ",bw,qps=4,cpus=0:1,events", -EINVAL, "as many CPUs");
	expect_err(BASE ",bw,qps=4,cpus=0:0", -EINVAL, "CPU 0 given twice");
	expect_err(BASE ",bw,qps=4,cpus=2-3:3", -EINVAL, "CPU 3 given twice");
	expect_err(BASE ",bw,qps=4,cpus=8192", -ERANGE, "out of range [0, 8191]");
	expect_err(BASE ",bw,qps=4,cpus=3-1", -EINVAL, "bad item");
	expect_err(BASE ",bw,qps=4,cpus=", -EINVAL, "empty item");
	expect_err(BASE ",bw,qps=4,cpus=1::2", -EINVAL, "bad item");
	expect_err(BASE ",bw,qps=4,cpus=x", -EINVAL, "bad item");
	expect_err(BASE ",bw,qps=4,cpus=0-64", -E2BIG, "more than 64 CPUs");
	expect_err(BASE ",bw,qps=2,qps=3", -EINVAL, "given twice");
}

/* cq=: the CQ's poll context; events need one the core reaps in */
static void test_cq(void)
{
	static const char * const names[] = {
		"direct", "softirq", "workqueue", "unbound",
	};
	char cmd[128];
	unsigned int i;

	expect_ok(BASE ",wlat");
	KT_CHECK(o.cq == KP_CQ_DIRECT && !kp_opt_given(&o, KP_OPT_CQ),
		 "default cq %d", o.cq);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(cmd, sizeof(cmd), BASE ",bw,cq=%s", names[i]);
		expect_ok(cmd);
		KT_CHECK(o.cq == i && !strcmp(kp_cq_name(o.cq), names[i]),
			 "cq=%s: %d", names[i], o.cq);
	}
	expect_ok("server,addr=192.0.2.1,port=9,cq=workqueue");
	KT_CHECK(o.cq == KP_CQ_WORKQUEUE, "a server's cq");
	expect_ok(BASE ",rlat,events");
	KT_CHECK(o.cq == KP_CQ_SOFTIRQ, "events without cq: softirq, %d", o.cq);
	expect_ok(BASE ",rlat,events,cq=unbound");
	KT_CHECK(o.cq == KP_CQ_UNBOUND, "events,cq=unbound: %d", o.cq);
	expect_err(BASE ",rlat,events,cq=direct", -EINVAL,
		   "not with cq=direct");
	expect_err(BASE ",cq=irq", -EINVAL, "is not direct, softirq");
	expect_err(BASE ",cq", -EINVAL, "needs a value");
	expect_err(BASE ",cq=direct,cq=softirq", -EINVAL, "given twice");
	KT_CHECK(!strcmp(kp_cq_name(KP_CQ_NR), "?"), "out of range name");
}

/* pass/fail bounds: each on the modes whose figure it bounds, a client's */
static void test_thresholds(void)
{
	expect_ok(BASE ",bw,expect_bw=1200");
	KT_CHECK(o.expect_bw == 1200 && !o.max_lat_us && !o.max_p99_us,
		 "expect_bw %u", o.expect_bw);
	expect_ok(BASE ",bw,read,expect_bw=1");
	expect_ok(BASE ",rlat,max_lat=20,max_p99=45");
	KT_CHECK(o.max_lat_us == 20 && o.max_p99_us == 45 && !o.expect_bw,
		 "max_lat %u max_p99 %u", o.max_lat_us, o.max_p99_us);
	expect_ok(BASE ",slat,max_p99=100");
	expect_ok(BASE ",wlat,max_lat=10000000");
	expect_err(BASE ",wlat,max_lat=10000001", -ERANGE, "max_lat");
	expect_err(BASE ",bw,expect_bw=0", -ERANGE, "expect_bw");
	expect_err(BASE ",wlat,expect_bw=10", -EINVAL,
		   "'expect_bw' is for a bw client");
	expect_err("server,addr=192.0.2.1,port=1,bw,expect_bw=10", -EINVAL,
		   "'expect_bw' is for a bw client");
	expect_err(BASE ",bw,max_lat=10", -EINVAL,
		   "'max_lat' is for a client of rlat, wlat, slat or alat");
	expect_err(BASE ",max_p99=10", -EINVAL,
		   "'max_p99' is for a client of rlat, wlat, slat or alat");
	expect_err(BASE ",fr,max_lat=10", -EINVAL, "not a fr client");
}

/* sge=: SGEs of a data work request; rw: rlat and bw through rdma_rw */
static void test_sge_rw(void)
{
	expect_ok(BASE ",bw");
	KT_CHECK(o.sge == 1 && !o.rw, "defaults sge %u rw %d", o.sge, o.rw);
	expect_ok(BASE ",bw,send,sge=16");
	KT_CHECK(o.sge == 16 && o.mode == KP_MODE_BW_SEND, "sge=16 %u", o.sge);
	expect_ok("server,addr=192.0.2.1,port=9,sge=3");
	KT_CHECK(o.sge == 3, "a server's sge %u", o.sge);
	expect_ok(BASE ",size=100,sge=7");
	expect_err(BASE ",bw,sge=17", -ERANGE, "sge");
	expect_err(BASE ",bw,sge=0", -ERANGE, "sge");
	expect_err(BASE ",fr,sge=2", -EINVAL, "fr sends none");
	expect_ok(BASE ",rlat,rw");
	KT_CHECK(o.rw && o.mode == KP_MODE_RLAT, "rlat,rw");
	expect_ok(BASE ",bw,read,rw,qps=2,mem=npu");
	KT_CHECK(o.rw && o.mode == KP_MODE_BW_READ, "bw,read,rw");
	expect_ok(BASE ",bw,rw,sizes=4096:65536");
	expect_err(BASE ",wlat,rw", -EINVAL, "'rw' is for a client of rlat or bw");
	expect_err(BASE ",rw", -EINVAL, "not a ping client");
	expect_err("server,addr=192.0.2.1,port=9,bw,rw", -EINVAL,
		   "not a bw server");
	expect_err(BASE ",bw,send,rw", -EINVAL, "not with 'send'");
	expect_err(BASE ",bw,duplex,rw", -EINVAL, "not with 'duplex'");
	expect_err(BASE ",bw,rw,sge=1", -EINVAL, "not with 'sge'");
	expect_err(BASE ",rlat,rw,local_dma_lkey", -EINVAL,
		   "not with 'local_dma_lkey'");
}

/* light: the lighter latency method, each side its own, wlat and slat only */
static void test_light(void)
{
	expect_ok(BASE ",wlat");
	KT_CHECK(!o.light, "perftest's method by default");
	expect_ok(BASE ",wlat,light");
	KT_CHECK(o.light && o.mode == KP_MODE_WLAT, "wlat,light");
	expect_ok(BASE ",slat,light,warmup=10");
	KT_CHECK(o.light && o.mode == KP_MODE_SLAT, "slat,light");
	expect_ok("server,addr=192.0.2.1,port=9,wlat,light");
	KT_CHECK(o.light && o.role == KP_ROLE_SERVER, "a server's light");
	expect_ok(BASE ",wlat,imm,light");
	expect_err(BASE ",rlat,light", -EINVAL,
		   "'light' is a method of wlat and slat, not of 'rlat'");
	expect_err(BASE ",bw,light", -EINVAL, "not of 'bw'");
	expect_err(BASE ",light", -EINVAL, "not of 'ping'");
	expect_err(BASE ",wlat,light=1", -EINVAL, "light");
}

/* inline=N: perftest -I, 220 by default, 0..1024, any mode and role */
static void test_inline(void)
{
	expect_ok(BASE ",wlat");
	KT_CHECK(o.inline_max == 220 && !kp_opt_given(&o, KP_OPT_INLINE),
		 "default inline %u", o.inline_max);
	expect_ok(BASE ",wlat,inline=0");
	KT_CHECK(!o.inline_max && kp_opt_given(&o, KP_OPT_INLINE), "inline=0");
	expect_ok("server,addr=192.0.2.1,port=9,slat,inline=1024");
	KT_CHECK(o.inline_max == 1024, "inline=1024 %u", o.inline_max);
	expect_ok(BASE ",bw,inline=64");
	expect_err(BASE ",wlat,inline=1025", -ERANGE, "inline");
	expect_err(BASE ",wlat,inline", -EINVAL, "needs a value");
}

/* cq_mod=N: perftest -Q, bw streams only */
static void test_cq_mod(void)
{
	expect_ok(BASE ",bw");
	KT_CHECK(!o.cq_mod, "no cq_mod by default: %u", o.cq_mod);
	expect_ok(BASE ",bw,cq_mod=64,txdepth=64");
	KT_CHECK(o.cq_mod == 64, "cq_mod=64 %u", o.cq_mod);
	expect_ok(BASE ",bw,read,cq_mod=1");
	expect_ok("server,addr=192.0.2.1,port=9,bw,duplex,cq_mod=8");
	expect_err(BASE ",bw,cq_mod=0", -ERANGE, "cq_mod");
	expect_err(BASE ",bw,cq_mod=1025", -ERANGE, "cq_mod");
	expect_err(BASE ",wlat,cq_mod=4", -EINVAL,
		   "'cq_mod' moderates a bw stream's completions, not wlat's");
}

/* alat, bw,atomic=: perftest -A, 8 bytes, one SGE */
static void test_atomic(void)
{
	expect_ok(BASE ",alat");
	KT_CHECK(o.mode == KP_MODE_ALAT && o.atomic == KP_ATOMIC_FADD &&
		 o.size == 8 && o.nsizes == 1 && o.sizes[0] == 8,
		 "alat: fadd of 8 bytes by default (%u %u %u)", o.mode,
		 o.atomic, o.size);
	expect_ok(BASE ",alat,atomic=cas,size=8,max_lat=100");
	KT_CHECK(o.atomic == KP_ATOMIC_CAS, "atomic=cas %u", o.atomic);
	expect_ok(BASE ",bw,atomic=fadd,qps=2,cq_mod=4");
	KT_CHECK(o.mode == KP_MODE_BW_ATOMIC && o.size == 8 && o.qps == 2,
		 "bw,atomic=fadd is bw_atomic %u", o.mode);
	expect_ok("server,addr=192.0.2.1,port=9,bw,atomic=cas");
	KT_CHECK(o.mode == KP_MODE_BW_ATOMIC, "server bw_atomic %u", o.mode);
	expect_ok("server,addr=192.0.2.1,port=9,alat");
	KT_CHECK(!kp_opt_given(&o, KP_OPT_ATOMIC), "server: no atomic= given");
	expect_err(BASE ",alat,atomic=xor", -EINVAL, "is not fadd or cas");
	expect_err(BASE ",alat,atomic", -EINVAL, "needs a value");
	expect_err(BASE ",rlat,atomic=fadd", -EINVAL, "'atomic' needs 'alat' or 'bw'");
	expect_err(BASE ",bw,read,atomic=fadd", -EINVAL, "not with 'read'");
	expect_err(BASE ",bw,send,atomic=fadd", -EINVAL, "not with 'send'");
	expect_err(BASE ",bw,duplex,atomic=cas", -EINVAL, "not with 'duplex'");
	expect_err(BASE ",alat,size=64", -EINVAL, "an atomic moves 8 bytes");
	expect_err(BASE ",bw,atomic=fadd,sizes=8:16", -EINVAL,
		   "an atomic moves 8 bytes");
	expect_err(BASE ",alat,sge=2", -EINVAL, "take one SGE");
	expect_err(BASE ",bw,atomic=fadd,rw", -EINVAL, "not atomics");
	expect_err(BASE ",alat,light", -EINVAL, "'light' is a method");
	expect_err(BASE ",alat,cq_mod=2", -EINVAL, "'cq_mod' moderates");
	expect_err(BASE ",alat,wlat", -EINVAL, "one test mode only");
}

/* qp_timeout= (perftest -u) on either side, retry_count= the client's */
static void test_qp_timers(void)
{
	expect_ok(BASE ",qp_timeout=14,retry_count=3");
	KT_CHECK(o.qp_timeout == 14 && o.retry_count == 3 &&
		 kp_opt_given(&o, KP_OPT_QP_TIMEOUT), "qp_timeout=14,retry_count=3");
	expect_ok(BASE ",retry_count=0,qp_timeout=0");
	KT_CHECK(!o.retry_count && kp_opt_given(&o, KP_OPT_RETRY_COUNT),
		 "retry_count=0 given");
	expect_ok("server,addr=192.0.2.1,port=9,qp_timeout=31");
	expect_err("server,addr=192.0.2.1,port=9,retry_count=3", -EINVAL,
		   "'retry_count' is a client option");
	expect_err(BASE ",qp_timeout=32", -ERANGE, "qp_timeout");
	expect_err(BASE ",retry_count=8", -ERANGE, "retry_count");
}

/* rate_limit=, burst_size=: perftest's software limiter, bw clients */
static void test_rate_limit(void)
{
	expect_ok(BASE ",bw,rate_limit=5,burst_size=8");
	KT_CHECK(o.rate_limit == 5 && o.burst_size == 8, "rate 5 burst 8");
	expect_ok(BASE ",bw,read,rate_limit=100");
	KT_CHECK(!o.burst_size, "burst_size: the window's by default");
	expect_ok(BASE ",bw,send,rate_limit=1,qps=2,cpus=0:1");
	expect_err(BASE ",bw,rate_limit=5,qps=2", -EINVAL, "give 'cpus'");
	expect_err(BASE ",bw,burst_size=8", -EINVAL, "give 'rate_limit'");
	expect_err(BASE ",rlat,rate_limit=5", -EINVAL, "not a rlat client");
	expect_err(BASE ",bw,duplex,rate_limit=5", -EINVAL, "not with 'duplex'");
	expect_err(BASE ",bw,atomic=fadd,rate_limit=5", -EINVAL,
		   "not with 'atomic' (perftest refuses it too)");
	expect_err("server,addr=192.0.2.1,port=9,bw,rate_limit=5", -EINVAL,
		   "not a bw server");
	/*
	 * bw,send, bw,imm: 64 x 4 MiB at 1 MiB/s is 256 s a burst, over
	 * timeout's 10 s; WRITEs: the server waits for the FIN only
	 */
	expect_err(BASE ",bw,send,size=4194304,rate_limit=1", -EINVAL,
		   "takes 256000 ms at 1 MiB/s, not under timeout=10000");
	expect_ok(BASE ",bw,send,size=4194304,rate_limit=1,burst_size=2");
	expect_err(BASE ",bw,imm,sizes=64:4194304,rate_limit=1,burst_size=3",
		   -EINVAL, "a burst of 3 messages of 4194304 bytes");
	expect_ok(BASE ",bw,size=4194304,rate_limit=1");
	expect_err(BASE ",bw,rate_limit=0", -ERANGE, "rate_limit");
	expect_err(BASE ",bw,rate_limit=1,burst_size=1025", -ERANGE, "burst_size");
}

/* post_list=: perftest -l, a bw client's stream in chains */
static void test_post_list(void)
{
	expect_ok(BASE ",bw,post_list=8,count=800");
	KT_CHECK(o.post_list == 8 && !o.cq_mod, "post_list 8, cq_mod its own");
	expect_ok(BASE ",bw,read,post_list=4,cq_mod=2,count=400");
	expect_ok(BASE ",bw,send,imm,post_list=16,count=160");
	expect_ok(BASE ",bw,post_list=64,duration=2");
	expect_ok(BASE ",bw,post_list=1,count=7");
	expect_err(BASE ",bw,post_list=8,count=801", -EINVAL,
		   "'count' 801 is not a multiple of 'post_list' 8");
	expect_err(BASE ",bw,post_list=8,cq_mod=3,count=800", -EINVAL,
		   "'post_list' 8 is not a multiple of 'cq_mod' 3");
	expect_err(BASE ",bw,post_list=32,txdepth=16,count=320", -EINVAL,
		   "and txdepth is 16");
	expect_err(BASE ",bw,duplex,post_list=8,count=800", -EINVAL,
		   "not with 'duplex'");
	expect_err(BASE ",bw,rw,post_list=8,count=800", -EINVAL,
		   "not with 'rw'");
	expect_err(BASE ",bw,atomic=cas,post_list=8,count=800", -EINVAL,
		   "not with 'atomic'");
	expect_err(BASE ",bw,rate_limit=5,post_list=8,count=800", -EINVAL,
		   "not with 'rate_limit'");
	expect_err(BASE ",wlat,post_list=8,count=800", -EINVAL,
		   "not a wlat client's");
	expect_err("server,addr=192.0.2.1,port=9,bw,post_list=8", -EINVAL,
		   "not a bw server's");
	expect_err(BASE ",bw,post_list=65", -ERANGE, "post_list");
	expect_err(BASE ",bw,post_list=0", -ERANGE, "post_list");
}

/* recv_post_list=: perftest --recv_post_list, a sink server's receives */
static void test_recv_post_list(void)
{
	expect_ok("server,addr=192.0.2.1,port=9,recv_post_list=8");
	KT_CHECK(o.recv_post_list == 8 &&
		 kp_opt_given(&o, KP_OPT_RECV_POST_LIST), "recv_post_list 8");
	expect_ok("server,addr=192.0.2.1,port=9,bw,send,recv_post_list=64");
	KT_CHECK(o.mode == KP_MODE_BW_SEND, "a bw,send server");
	expect_ok("server,addr=192.0.2.1,port=9,recv_post_list=1");
	expect_ok("server,addr=192.0.2.1,port=9");
	KT_CHECK(!o.recv_post_list, "as used, by default");
	expect_err(BASE ",bw,send,recv_post_list=8", -EINVAL,
		   "not a client's");
	expect_err("server,addr=192.0.2.1,port=9,bw,recv_post_list=8", -EINVAL,
		   "which a bw server posts none of");
	expect_err("server,addr=192.0.2.1,port=9,slat,recv_post_list=8",
		   -EINVAL, "which a slat server posts none of");
	expect_err("server,addr=192.0.2.1,port=9,recv_post_list=65", -ERANGE,
		   "recv_post_list");
	expect_err("server,addr=192.0.2.1,port=9,recv_post_list=0", -ERANGE,
		   "recv_post_list");
}

/* rx_depth=: perftest -r, the data receives a side keeps posted */
static void test_rx_depth(void)
{
	expect_ok("server,addr=192.0.2.1,port=9,rx_depth=16384");
	KT_CHECK(o.rx_depth == 16384 && kp_opt_given(&o, KP_OPT_RX_DEPTH),
		 "rx_depth 16384");
	expect_ok("server,addr=192.0.2.1,port=9,bw,send,rx_depth=1");
	KT_CHECK(o.rx_depth == 1, "rx_depth 1");
	expect_ok("server,addr=192.0.2.1,port=9");
	KT_CHECK(!o.rx_depth, "512 by default (0)");
	expect_ok(BASE ",bw,send,duplex,rx_depth=128");
	KT_CHECK(o.rx_depth == 128, "a duplex bw,send client's");
	expect_err(BASE ",bw,send,rx_depth=128", -EINVAL,
		   "not a bw,send without duplex client's");
	expect_err(BASE ",slat,rx_depth=8", -EINVAL, "not a slat client's");
	expect_err(BASE ",bw,duplex,rx_depth=8", -EINVAL,
		   "not a bw client's");
	expect_err("server,addr=192.0.2.1,port=9,bw,rx_depth=8", -EINVAL,
		   "which a bw server posts none of");
	expect_err("server,addr=192.0.2.1,port=9,slat,rx_depth=8", -EINVAL,
		   "which a slat server posts none of");
	expect_err("server,addr=192.0.2.1,port=9,rx_depth=16385", -ERANGE,
		   "rx_depth");
	expect_err("server,addr=192.0.2.1,port=9,rx_depth=0", -ERANGE,
		   "rx_depth");
}

/* validate: ping's rounds, or a bw,send, bw,read or bw,imm stream's messages */
static void test_stream_validate(void)
{
	static const char *const other[] = { "wlat", "rlat", "slat", "alat",
					     "fr" };
	static const char *const writes[] = { "bw", "bw,duplex", "bw,qps=2" };
	char cmd[128];
	unsigned int i;

	expect_ok(BASE ",bw,send,validate,size=16");
	KT_CHECK(o.validate && o.mode == KP_MODE_BW_SEND, "a validated bw,send");
	expect_ok(BASE ",bw,send,imm,validate,sizes=16-4096,qps=2,post_list=4,count=400");
	KT_CHECK(o.validate && o.wlat_imm && o.nsizes == 9, "with imm, a sweep, qps and post_list");
	expect_ok("server,addr=192.0.2.1,port=9,bw,send,validate");
	KT_CHECK(o.validate && o.mode == KP_MODE_BW_SEND, "a server that insists");
	expect_ok("server,addr=192.0.2.1,port=9,validate");
	KT_CHECK(o.validate && o.mode == KP_MODE_PING, "a ping server's own");
	expect_err(BASE ",bw,send,validate,size=15", -EINVAL,
		   "too short for its number and a band (at least 16)");
	expect_err(BASE ",bw,send,validate,sizes=8-64", -EINVAL,
		   "a message of 8 bytes is too short");
	/* every other stream or test: refused, naming what it applies to */
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		snprintf(cmd, sizeof(cmd), BASE ",%s,validate", other[i]);
		expect_err(cmd, -EINVAL, "applies to ping, bw,send, bw,read and bw,imm, not");
	}
	/* WRITEs: checked by the server as each one's immediate arrives */
	for (i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		snprintf(cmd, sizeof(cmd), BASE ",%s,validate", writes[i]);
		expect_err(cmd, -EINVAL, "on a WRITE stream needs the client's 'imm'");
	}
	expect_err("server,addr=192.0.2.1,port=9,bw,validate", -EINVAL,
		   "on a WRITE stream needs the client's 'imm'");
	expect_ok(BASE ",bw,imm,validate,sizes=16-65536,qps=2,post_list=4,count=400");
	KT_CHECK(o.validate && o.mode == KP_MODE_BW_IMM && o.nsizes == 13,
		 "a validated bw,imm sweep, with qps and post_list");
	expect_err(BASE ",bw,imm,validate,size=15", -EINVAL,
		   "too short for its number and a band");
	expect_err(BASE ",bw,imm,rw,validate", -EINVAL, "not with 'imm'");
	/* its server's two slots of the largest size in one buffer */
	expect_ok(BASE ",bw,imm,validate,size=2097152");
	expect_err(BASE ",bw,imm,validate,sizes=1048576-4194304", -EINVAL,
		   "keeps two slots of each message, and 4194304 bytes is above 2097152");
	expect_err(BASE ",bw,imm,validate,size=2097153", -EINVAL, "2097153 bytes is above");
	expect_ok(BASE ",bw,send,imm,validate,size=4194304");
	/* atomics: not a WRITE stream */
	expect_err(BASE ",bw,atomic=fadd,validate", -EINVAL, "applies to ping, bw,send, bw,read and bw,imm, not 'bw_atomic'");
	/* bw,read: checked by the client, in its own slots */
	expect_ok(BASE ",bw,read,validate,sizes=16-65536,qps=2,post_list=4,count=400");
	KT_CHECK(o.validate && o.mode == KP_MODE_BW_READ && o.nsizes == 13,
		 "a validated bw,read sweep, with qps and post_list");
	expect_ok("server,addr=192.0.2.1,port=9,bw,read,validate");
	KT_CHECK(o.validate && o.mode == KP_MODE_BW_READ, "a bw,read server that insists");
	expect_err(BASE ",bw,read,validate,size=8", -EINVAL,
		   "too short for its number and a band");
	expect_err(BASE ",bw,read,duplex,validate", -EINVAL,
		   "from the client alone, through its own slots: not with 'duplex'");
	expect_err(BASE ",bw,read,rw,validate", -EINVAL,
		   "from the client alone, through its own slots: not with 'rw'");
}

/* duplex send: count messages each way, plain */
static void test_send_duplex(void)
{
	expect_ok(BASE ",bw,send,duplex,size=4096,count=400,warmup=20");
	KT_CHECK(o.duplex && o.mode == KP_MODE_BW_SEND, "bw,send,duplex");
	expect_ok(BASE ",bw,send,duplex,qps=2,cpus=0:1");
	KT_CHECK(o.duplex && o.qps == 2, "on 2 QPs, a thread each");
	expect_err(BASE ",bw,send,duplex,duration=2", -EINVAL,
		   "'duplex' with 'send' streams count messages each way, not for a duration");
	expect_err(BASE ",bw,send,duplex,validate", -EINVAL, "not validated");
	expect_err(BASE ",bw,send,duplex,imm", -EINVAL, "not with 'duplex'");
	expect_err(BASE ",bw,send,read,duplex", -EINVAL, "two different streams");
}

/* srq: a server's, or a slat client's, as perftest --use-srq */
static void test_srq(void)
{
	expect_ok("server,addr=192.0.2.1,port=9,srq");
	KT_CHECK(o.srq && o.mode == KP_MODE_PING, "a server of any mode");
	expect_ok("server,addr=192.0.2.1,port=9,bw,send,srq,recv_post_list=8");
	KT_CHECK(o.srq && o.recv_post_list == 8, "a bw,send server with chains");
	expect_ok(BASE ",slat,srq,size=64");
	KT_CHECK(o.srq && o.mode == KP_MODE_SLAT, "a slat client");
	expect_err(BASE ",bw,send,srq", -EINVAL,
		   "'srq' is for a server, or a slat client (as perftest --use-srq): a bw client");
	expect_err(BASE ",rlat,srq", -EINVAL, "a rlat client posts control receives only");
	expect_err("server,addr=192.0.2.1,port=9,srq,mem=npu", -EINVAL,
		   "an SRQ's receives do not flush with the QP");
	expect_err(BASE ",slat,srq,mem=npu", -EINVAL, "'srq' with mem=npu");
	expect_err(BASE ",slat,srq=1", -EINVAL, "takes no value");
}

/* ud: slat over UD, as ib_send_lat -c UD; both sides give it */
static void test_ud(void)
{
	expect_ok("server,addr=192.0.2.1,port=9,ud");
	KT_CHECK(o.ud && o.mode == KP_MODE_PING, "a server that learns the mode");
	expect_ok("server,addr=192.0.2.1,port=9,slat,ud");
	KT_CHECK(o.ud && o.mode == KP_MODE_SLAT, "a slat server");
	expect_ok(BASE ",slat,ud,size=64,count=100,warmup=10,light,events");
	KT_CHECK(o.ud && o.mode == KP_MODE_SLAT && o.light && o.events,
		 "a slat client, light and events");
	expect_ok(BASE ",bw,send,ud,size=1024,count=500,rate_limit=100");
	KT_CHECK(o.ud && o.mode == KP_MODE_BW_SEND, "a bw,send client");
	expect_ok("server,addr=192.0.2.1,port=9,bw,send,ud,recv_post_list=8");
	KT_CHECK(o.ud && o.bw_send && o.recv_post_list == 8, "a bw,send server with chains");
	expect_err(BASE ",ud", -EINVAL,
		   "'ud' runs slat and bw,send (as ib_send_lat and ib_send_bw -c UD), not ping");
	expect_err(BASE ",bw,ud", -EINVAL, "not bw of WRITEs or READs");
	expect_err(BASE ",bw,read,ud", -EINVAL, "not bw of WRITEs or READs");
	expect_err("server,addr=192.0.2.1,port=9,wlat,ud", -EINVAL, "not wlat");
	expect_err(BASE ",bw,send,ud,duplex", -EINVAL, "'ud' with duplex:");
	expect_ok(BASE ",bw,send,ud,validate,size=1024");
	expect_err(BASE ",slat,ud,validate", -EINVAL, "'validate' applies to");
	expect_err(BASE ",bw,send,ud,imm", -EINVAL, "'ud' with imm:");
	/* as perftest -c UD with -l, -q and --use_srq */
	expect_ok(BASE ",bw,send,ud,post_list=4,count=400");
	KT_CHECK(o.ud && o.post_list == 4, "a bw,send client's chains of datagrams");
	expect_ok(BASE ",bw,send,ud,qps=2,count=400");
	KT_CHECK(o.ud && o.qps == 2, "a bw,send client of two UD QPs");
	expect_ok(BASE ",slat,ud,srq");
	KT_CHECK(o.ud && o.srq, "a slat client's SRQ");
	expect_ok("server,addr=192.0.2.1,port=9,ud,srq");
	KT_CHECK(o.ud && o.srq, "a server's SRQ");
	expect_err(BASE ",bw,send,ud,duration=2", -EINVAL, "'ud' with bw,send by duration:");
	expect_ok(BASE ",slat,ud,duration=2");
	expect_ok(BASE ",slat,ud,mem=npu");
	expect_err(BASE ",slat,ud,mem=npu,srq", -EINVAL, "'srq' with mem=npu:");
	expect_err(BASE ",slat,ud,sge=2", -EINVAL, "'ud' with sge=N:");
	expect_err(BASE ",slat,ud,qp_timeout=14", -EINVAL, "'ud' with qp_timeout:");
	expect_err(BASE ",slat,ud,retry_count=3", -EINVAL, "'ud' with retry_count:");
	expect_err(BASE ",slat,ud=1", -EINVAL, "takes no value");
}

/* mr_per_qp: each side's own, a server's whatever comes, a client's bw */
static void test_mr_per_qp(void)
{
	struct kp_opts o;

	expect_ok("server,addr=192.0.2.1,port=9,mr_per_qp");
	expect_ok(BASE ",bw,qps=4,mr_per_qp");
	if (!kp_opts_parse(BASE ",bw,send,qps=2,mr_per_qp",
			   strlen(BASE ",bw,send,qps=2,mr_per_qp"), &o, NULL,
			   0))
		KT_CHECK(o.mr_per_qp && o.qps == 2, "mr_per_qp set: %d",
			 o.mr_per_qp);
	KT_CHECK(!kp_opts_parse(BASE ",bw,qps=4", strlen(BASE ",bw,qps=4"),
				&o, NULL, 0) && !o.mr_per_qp,
		 "one MR by default");
	/* as perftest takes it with -q 1: one connection, one MR */
	expect_ok(BASE ",bw,read,mr_per_qp");
	expect_err(BASE ",slat,mr_per_qp", -EINVAL,
		   "'mr_per_qp' is for a test of several connections (qps=N), which is 'bw', not 'slat'");
	expect_err(BASE ",mr_per_qp", -EINVAL, "which is 'bw', not 'ping'");
	expect_err(BASE ",bw,qps=2,mr_per_qp=1", -EINVAL, "takes no value");
}

int main(void)
{
	test_mr_per_qp();
	test_stream_validate();
	test_ud();
	test_srq();
	test_send_duplex();
	test_recv_post_list();
	test_rx_depth();
	test_post_list();
	test_rate_limit();
	test_qp_timers();
	test_atomic();
	test_light();
	test_inline();
	test_cq_mod();
	test_thresholds();
	test_sge_rw();
	test_cq();
	test_qps();
	test_perftest_opts();
	test_minimal_and_defaults();
	test_sweeps();
	test_duration();
	test_every_option();
	test_ranges();
	test_conflicts();
	test_addresses();
	test_junk();
	test_help();
	return kt_done();
}
