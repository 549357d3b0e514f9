// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_launch - run one krping_npu command over NPU memory this process owns.
 *
 * On an Ascend host NPU memory is allocated by the NPU runtime in a user
 * process (aclrtMalloc) and belongs to it: the driver's
 * hal_kernel_p2p_get_pages serves only that process.  So the process that
 * allocates must also be the one that writes the command to
 * /proc/krping_npu, in whose context krping_npu registers the memory.
 * npu_launch is that process: it allocates a region on the chosen device,
 * clears it, appends mem=npu,npu_va=...,npu_len=... to the command, writes
 * it, prints the test's records and frees the region.
 *
 * Backends:
 *   sim  the emulated NPU's /dev/npu_simN (peer_client/npu_sim_uapi.h)
 *   acl  Ascend's runtime, libascendcl.so, loaded with dlopen (no CANN SDK
 *        needed to build): aclInit, aclrtSetDevice, aclrtMalloc,
 *        aclrtMemcpy, aclrtFree, aclrtResetDevice, aclFinalize, and
 *        aclrtGetCurrentContext/aclrtSetCurrentContext to free from the
 *        --free-after thread in the device's context
 *   auto (default) sim when /dev/npu_simN exists, else acl
 *
 * Exit status: 0 when the write succeeded, 1 when the test failed (the
 * errno is printed), 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "npu_sim_uapi.h"

#define NL_ALIGN	(2u << 20)	/* NPU huge page: get_pages' granule */
#define NL_PIECE	4096u		/* krping_npu carves in these */
#define NL_CHUNK	(1u << 20)	/* copies */
#define NL_CMD_MAX	1024
#define NL_SERVER_LEN	(8u << 20)

struct nl_backend {
	const char *name;
	int (*open)(int dev);
	/* make the calling thread one the runtime serves (a new thread) */
	int (*attach)(void);
	int (*alloc)(uint64_t size, uint64_t *va);
	int (*free)(uint64_t va);
	int (*to_npu)(uint64_t va, const void *src, uint64_t len);
	int (*from_npu)(void *dst, uint64_t va, uint64_t len);
	void (*close)(int dev);
};

/* --- sim: /dev/npu_simN --- */

static int nl_sim_fd = -1;

static int nl_sim_open(int dev)
{
	char path[32];

	snprintf(path, sizeof(path), "/dev/npu_sim%d", dev);
	nl_sim_fd = open(path, O_RDWR | O_CLOEXEC);
	if (nl_sim_fd < 0) {
		fprintf(stderr, "npu_launch: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int nl_sim_attach(void)
{
	return 0;	/* the file serves every thread of the process */
}

static int nl_sim_alloc(uint64_t size, uint64_t *va)
{
	struct npu_sim_mem m = { .size = size };

	if (ioctl(nl_sim_fd, NPU_SIM_ALLOC, &m))
		return -errno;
	*va = m.va;
	return 0;
}

static int nl_sim_free(uint64_t va)
{
	return ioctl(nl_sim_fd, NPU_SIM_FREE, &va) ? -errno : 0;
}

static int nl_sim_to_npu(uint64_t va, const void *src, uint64_t len)
{
	struct npu_sim_copy c = {
		.va = va, .host = (uintptr_t)src, .len = len,
	};

	return ioctl(nl_sim_fd, NPU_SIM_COPY_TO, &c) ? -errno : 0;
}

static int nl_sim_from_npu(void *dst, uint64_t va, uint64_t len)
{
	struct npu_sim_copy c = {
		.va = va, .host = (uintptr_t)dst, .len = len,
	};

	return ioctl(nl_sim_fd, NPU_SIM_COPY_FROM, &c) ? -errno : 0;
}

static void nl_sim_close(int dev)
{
	(void)dev;
	close(nl_sim_fd);
}

static const struct nl_backend nl_sim = {
	.name = "sim",
	.open = nl_sim_open,
	.attach = nl_sim_attach,
	.alloc = nl_sim_alloc,
	.free = nl_sim_free,
	.to_npu = nl_sim_to_npu,
	.from_npu = nl_sim_from_npu,
	.close = nl_sim_close,
};

/* --- acl: Ascend's runtime through dlopen --- */

#define NL_ACL_HUGE_FIRST	0	/* aclrtMemMallocPolicy */
#define NL_ACL_H2D		1	/* aclrtMemcpyKind */
#define NL_ACL_D2H		2

static struct {
	void *lib;
	int (*init)(const char *config);
	int (*set_device)(int32_t dev);
	int (*malloc)(void **ptr, size_t size, int policy);
	int (*memcpy)(void *dst, size_t max, const void *src, size_t n,
		      int kind);
	int (*free)(void *ptr);
	int (*reset_device)(int32_t dev);
	int (*finalize)(void);
	int (*get_context)(void **ctx);
	int (*set_context)(void *ctx);
	void *ctx;		/* the device's, current in the main thread */
} nl_acl;

static const char *nl_acl_path = "libascendcl.so";

static int nl_acl_sym(void **fn, const char *name)
{
	*fn = dlsym(nl_acl.lib, name);
	if (!*fn)
		fprintf(stderr, "npu_launch: %s: no %s\n", nl_acl_path, name);
	return *fn ? 0 : -1;
}

static int nl_acl_open(int dev)
{
	int ret;

	nl_acl.lib = dlopen(nl_acl_path, RTLD_NOW | RTLD_LOCAL);
	if (!nl_acl.lib) {
		fprintf(stderr, "npu_launch: %s\n", dlerror());
		return -1;
	}
	if (nl_acl_sym((void **)&nl_acl.init, "aclInit") ||
	    nl_acl_sym((void **)&nl_acl.set_device, "aclrtSetDevice") ||
	    nl_acl_sym((void **)&nl_acl.malloc, "aclrtMalloc") ||
	    nl_acl_sym((void **)&nl_acl.memcpy, "aclrtMemcpy") ||
	    nl_acl_sym((void **)&nl_acl.free, "aclrtFree") ||
	    nl_acl_sym((void **)&nl_acl.reset_device, "aclrtResetDevice") ||
	    nl_acl_sym((void **)&nl_acl.finalize, "aclFinalize") ||
	    nl_acl_sym((void **)&nl_acl.get_context, "aclrtGetCurrentContext") ||
	    nl_acl_sym((void **)&nl_acl.set_context, "aclrtSetCurrentContext"))
		goto fail;
	ret = nl_acl.init(NULL);
	if (ret) {
		fprintf(stderr, "npu_launch: aclInit: error %d\n", ret);
		goto fail;
	}
	ret = nl_acl.set_device(dev);
	if (ret) {
		fprintf(stderr, "npu_launch: aclrtSetDevice(%d): error %d\n",
			dev, ret);
		nl_acl.finalize();
		goto fail;
	}
	ret = nl_acl.get_context(&nl_acl.ctx);
	if (ret) {
		fprintf(stderr, "npu_launch: aclrtGetCurrentContext: error %d\n",
			ret);
		nl_acl.reset_device(dev);
		nl_acl.finalize();
		goto fail;
	}
	return 0;
fail:
	dlclose(nl_acl.lib);
	return -1;
}

/* The runtime's context is per thread: a new thread takes the device's. */
static int nl_acl_attach(void)
{
	int ret = nl_acl.set_context(nl_acl.ctx);

	if (ret)
		fprintf(stderr, "npu_launch: aclrtSetCurrentContext: error %d\n",
			ret);
	return ret ? -EINVAL : 0;
}

static int nl_acl_alloc(uint64_t size, uint64_t *va)
{
	void *p = NULL;
	int ret = nl_acl.malloc(&p, size, NL_ACL_HUGE_FIRST);

	if (ret) {
		fprintf(stderr, "npu_launch: aclrtMalloc(%llu): error %d\n",
			(unsigned long long)size, ret);
		return -ENOMEM;
	}
	*va = (uintptr_t)p;
	return 0;
}

static int nl_acl_free(uint64_t va)
{
	int ret = nl_acl.free((void *)(uintptr_t)va);

	if (ret)
		fprintf(stderr, "npu_launch: aclrtFree: error %d\n", ret);
	return ret ? -EINVAL : 0;
}

static int nl_acl_to_npu(uint64_t va, const void *src, uint64_t len)
{
	int ret = nl_acl.memcpy((void *)(uintptr_t)va, len, src, len,
				NL_ACL_H2D);

	if (ret)
		fprintf(stderr, "npu_launch: aclrtMemcpy: error %d\n", ret);
	return ret ? -EIO : 0;
}

static int nl_acl_from_npu(void *dst, uint64_t va, uint64_t len)
{
	int ret = nl_acl.memcpy(dst, len, (void *)(uintptr_t)va, len,
				NL_ACL_D2H);

	if (ret)
		fprintf(stderr, "npu_launch: aclrtMemcpy: error %d\n", ret);
	return ret ? -EIO : 0;
}

static void nl_acl_close(int dev)
{
	nl_acl.reset_device(dev);
	nl_acl.finalize();
	dlclose(nl_acl.lib);
}

static const struct nl_backend nl_acl_backend = {
	.name = "acl",
	.open = nl_acl_open,
	.attach = nl_acl_attach,
	.alloc = nl_acl_alloc,
	.free = nl_acl_free,
	.to_npu = nl_acl_to_npu,
	.from_npu = nl_acl_from_npu,
	.close = nl_acl_close,
};

/* --- the region --- */

struct nl_region {
	const struct nl_backend *be;
	uint64_t base;		/* what the backend returned */
	uint64_t va;		/* handed to krping_npu: NL_ALIGN aligned */
	uint64_t len;
	pthread_mutex_t lock;
	int freed;
};

static uint64_t nl_align(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/*
 * @len bytes at an NL_ALIGN boundary: the runtime's huge-page allocations
 * usually are; otherwise allocate a page more and align inside.
 */
static int nl_region_alloc(struct nl_region *r, uint64_t len)
{
	int ret;

	r->len = nl_align(len, NL_ALIGN);
	ret = r->be->alloc(r->len, &r->base);
	if (ret)
		return ret;
	if (!(r->base % NL_ALIGN)) {
		r->va = r->base;
		return 0;
	}
	r->be->free(r->base);
	ret = r->be->alloc(r->len + NL_ALIGN, &r->base);
	if (ret)
		return ret;
	r->va = nl_align(r->base, NL_ALIGN);
	return 0;
}

static int nl_region_clear(struct nl_region *r)
{
	void *zero = calloc(1, NL_CHUNK);
	uint64_t off;
	int ret = 0;

	if (!zero)
		return -ENOMEM;
	for (off = 0; off < r->len && !ret; off += NL_CHUNK) {
		uint64_t n = r->len - off < NL_CHUNK ? r->len - off : NL_CHUNK;

		ret = r->be->to_npu(r->va + off, zero, n);
	}
	free(zero);
	return ret;
}

/*
 * How many bytes of the region hold @byte (--scan: a freed buffer's poison
 * that crossed the wire into this one); negative errno when it cannot be
 * read, or was freed.
 */
static int64_t nl_region_scan(struct nl_region *r, int byte)
{
	unsigned char *buf = malloc(NL_CHUNK);
	uint64_t off, i;
	int64_t hits = 0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	pthread_mutex_lock(&r->lock);
	if (r->freed)
		ret = -EFAULT;
	for (off = 0; off < r->len && !ret; off += NL_CHUNK) {
		uint64_t n = r->len - off < NL_CHUNK ? r->len - off : NL_CHUNK;

		ret = r->be->from_npu(buf, r->va + off, n);
		for (i = 0; i < n && !ret; i++)
			hits += buf[i] == byte;
	}
	pthread_mutex_unlock(&r->lock);
	free(buf);
	return ret ? ret : hits;
}

/* Free once, whoever comes first: the main thread or --free-after's. */
static int nl_region_free(struct nl_region *r)
{
	int ret = 0;

	pthread_mutex_lock(&r->lock);
	if (!r->freed) {
		ret = r->be->free(r->base);
		r->freed = !ret;
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}

static unsigned int nl_free_after_ms;
static int nl_free_cpu = -1;

static void *nl_free_thread(void *arg)
{
	struct nl_region *r = arg;
	struct timespec ts = {
		.tv_sec = nl_free_after_ms / 1000,
		.tv_nsec = (long)(nl_free_after_ms % 1000) * 1000000,
	};
	cpu_set_t cpus;
	int ret;

	/* --free-cpu: the free and the test's thread on two CPUs at once */
	if (nl_free_cpu >= 0) {
		CPU_ZERO(&cpus);
		CPU_SET(nl_free_cpu, &cpus);
		ret = pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
		if (ret)
			fprintf(stderr, "npu_launch: --free-cpu %d: %s\n",
				nl_free_cpu, strerror(ret));
	}
	nanosleep(&ts, NULL);
	ret = r->be->attach();
	if (!ret)
		ret = nl_region_free(r);
	printf("npu_launch: freed 0x%llx after %u ms: %d\n",
	       (unsigned long long)r->va, nl_free_after_ms, ret);
	fflush(stdout);
	return NULL;
}

/* --- the command --- */

static const char *nl_opt(const char *cmd, const char *name)
{
	size_t n = strlen(name);
	const char *p = cmd;

	while (p && *p) {
		if (!strncmp(p, name, n) && (p[n] == '=' || p[n] == ',' || !p[n]))
			return p + n;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return NULL;
}

/*
 * A number as the control grammar reads it: decimal, or hex after 0x;
 * never octal ("010" is ten).  @end: past its last digit.
 */
static uint64_t nl_num(const char *s, char **end)
{
	/* strtoull would read a second 0x in base 16: "0x0x10" is no number */
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2]) &&
	    !(s[2] == '0' && (s[3] == 'x' || s[3] == 'X')))
		return strtoull(s + 2, end, 16);
	if (!isdigit((unsigned char)*s)) {
		*end = (char *)s;
		return 0;
	}
	return strtoull(s, end, 10);
}

/* A whole option argument as a number; -1 (and usage) when it is not one. */
static int nl_arg_num(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = nl_num(s, &end);
	return end == s || *end || errno ? -1 : 0;
}

/*
 * The bytes the command's buffers take: each is carved in NL_PIECE pieces;
 * a ping client has two (start and rdma), everything else one a connection
 * (qps=N: N), of the largest size of the test (size=, or the largest of
 * sizes=).  A server learns the size and the connections from its client:
 * NL_SERVER_LEN unless -l says otherwise.
 */
static uint64_t nl_need(const char *cmd)
{
	const char *v = nl_opt(cmd, "sizes"), *one = nl_opt(cmd, "size");
	const char *qps = nl_opt(cmd, "qps");
	uint64_t max = 64, n, bufs = 1;
	char *end;

	if (v && *v == '=') {
		for (v++; *v && *v != ','; ) {
			n = nl_num(v, &end);
			if (end == v)
				break;
			if (n > max)
				max = n;
			v = end;
			if (*v == ':' || *v == '-')
				v++;
		}
	} else if (one && *one == '=') {
		max = nl_num(one + 1, &end);
	}
	if (nl_opt(cmd, "server"))
		return NL_SERVER_LEN;
	if (nl_opt(cmd, "client") && !nl_opt(cmd, "rlat") &&
	    !nl_opt(cmd, "wlat") && !nl_opt(cmd, "bw") && !nl_opt(cmd, "fr"))
		bufs = 2;
	if (qps && *qps == '=') {
		n = nl_num(qps + 1, &end);
		if (n > 1)
			bufs *= n;
	}
	return bufs * nl_align(max ? max : 1, NL_PIECE);
}

/* The largest record id in /proc/krping_npu now, 0 when none. */
static unsigned long nl_last_id(const char *proc)
{
	char line[512];
	unsigned long id, max = 0;
	FILE *f = fopen(proc, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lu ", &id) == 1 && id > max)
			max = id;
	fclose(f);
	return max;
}

/* Print the records (and their result lines) newer than @after. */
static void nl_print_records(const char *proc, unsigned long after)
{
	char line[1024];
	unsigned long id;
	FILE *f = fopen(proc, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lu ", &id) == 1 && id > after)
			fputs(line, stdout);
	fclose(f);
}

static void nl_usage(void)
{
	fprintf(stderr,
		"usage: npu_launch [-b auto|sim|acl] [-d DEV] [-l BYTES] [--acl-lib PATH]\n"
		"                  [--free-after MS [--free-cpu CPU]] [--scan BYTE] [--proc PATH]\n"
		"                  COMMAND\n"
		"Allocates NPU memory on device DEV (default 0) in this process, runs\n"
		"COMMAND,mem=npu,npu_va=VA,npu_len=LEN through /proc/krping_npu, prints\n"
		"the test's records and frees the memory.  -l: bytes to allocate\n"
		"(default: what a client's buffers need; 8 MiB for a server, which\n"
		"learns the size from its client).  --free-after: free the\n"
		"memory MS ms into the test, from another thread (on CPU, with\n"
		"--free-cpu).  --scan: after\n"
		"the test, count the region's bytes that hold BYTE (0-255).\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "device", required_argument, NULL, 'd' },
		{ "length", required_argument, NULL, 'l' },
		{ "acl-lib", required_argument, NULL, 'a' },
		{ "free-after", required_argument, NULL, 'f' },
		{ "proc", required_argument, NULL, 'p' },
		{ "scan", required_argument, NULL, 's' },
		{ "free-cpu", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *backend = "auto", *proc = "/proc/krping_npu", *cmd, *mem;
	struct nl_region r = { .lock = PTHREAD_MUTEX_INITIALIZER };
	char full[NL_CMD_MAX], path[32];
	uint64_t len = 0, num;
	unsigned long last;
	pthread_t freer;
	int dev = 0, c, fd, ret, err = 0, freeing = 0, scan = -1;
	ssize_t w;

	while ((c = getopt_long(argc, argv, "+b:d:l:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			backend = optarg;
			break;
		case 'd':
			if (nl_arg_num(optarg, &num) || num > INT_MAX) {
				nl_usage();
				return 2;
			}
			dev = num;
			break;
		case 'l':
			if (nl_arg_num(optarg, &len)) {
				nl_usage();
				return 2;
			}
			break;
		case 'a':
			nl_acl_path = optarg;
			break;
		case 'f':
			if (nl_arg_num(optarg, &num) || num > UINT_MAX) {
				nl_usage();
				return 2;
			}
			nl_free_after_ms = num;
			freeing = 1;
			break;
		case 'p':
			proc = optarg;
			break;
		case 'c':
			if (nl_arg_num(optarg, &num) || num >= CPU_SETSIZE) {
				fprintf(stderr,
					"npu_launch: --free-cpu %s: a CPU number below %d\n",
					optarg, CPU_SETSIZE);
				return 2;
			}
			nl_free_cpu = num;
			break;
		case 's':
			if (nl_arg_num(optarg, &num) || num > 255) {
				fprintf(stderr,
					"npu_launch: --scan %s: a byte, 0 to 255 (decimal, or hex after 0x)\n",
					optarg);
				return 2;
			}
			scan = num;
			break;
		default:
			nl_usage();
			return 2;
		}
	}
	if (optind != argc - 1 || dev < 0) {
		nl_usage();
		return 2;
	}
	cmd = argv[optind];
	mem = nl_opt(cmd, "mem");
	if (nl_opt(cmd, "npu_va") || nl_opt(cmd, "npu_len") ||
	    nl_opt(cmd, "npu_dev") || (mem && strcmp(mem, "=npu") &&
	    strncmp(mem, "=npu,", 5))) {
		fprintf(stderr,
			"npu_launch: npu_launch adds npu_va, npu_len and mem=npu: the command may not give them (mem=npu aside), nor npu_dev\n");
		return 2;
	}
	if (!len)
		len = nl_need(cmd);

	snprintf(path, sizeof(path), "/dev/npu_sim%d", dev);
	if (!strcmp(backend, "sim") ||
	    (!strcmp(backend, "auto") && !access(path, F_OK)))
		r.be = &nl_sim;
	else if (!strcmp(backend, "acl") || !strcmp(backend, "auto"))
		r.be = &nl_acl_backend;
	if (!r.be) {
		nl_usage();
		return 2;
	}
	if (r.be->open(dev))
		return 2;
	ret = nl_region_alloc(&r, len);
	if (ret) {
		fprintf(stderr, "npu_launch: %s: no %llu bytes of NPU memory on device %d: %s\n",
			r.be->name, (unsigned long long)len, dev, strerror(-ret));
		r.be->close(dev);
		return 2;
	}
	ret = nl_region_clear(&r);
	if (ret) {
		fprintf(stderr, "npu_launch: clearing the NPU memory: %s\n",
			strerror(-ret));
		goto out;
	}
	if (snprintf(full, sizeof(full), "%s%s,npu_va=0x%llx,npu_len=%llu", cmd,
		     nl_opt(cmd, "mem") ? "" : ",mem=npu",
		     (unsigned long long)r.va, (unsigned long long)r.len) >=
	    (int)sizeof(full)) {
		fprintf(stderr, "npu_launch: command too long\n");
		ret = -E2BIG;
		goto out;
	}
	printf("npu_launch: %s device %d: %llu bytes at 0x%llx\n", r.be->name,
	       dev, (unsigned long long)r.len, (unsigned long long)r.va);
	printf("npu_launch: %s\n", full);
	fflush(stdout);

	last = nl_last_id(proc);
	fd = open(proc, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "npu_launch: %s: %s\n", proc, strerror(errno));
		ret = -errno;
		goto out;
	}
	if (freeing && pthread_create(&freer, NULL, nl_free_thread, &r)) {
		fprintf(stderr, "npu_launch: no thread for --free-after\n");
		close(fd);
		ret = -EAGAIN;
		goto out;
	}
	w = write(fd, full, strlen(full));
	err = w < 0 ? errno : 0;
	close(fd);
	if (freeing)
		pthread_join(freer, NULL);
	nl_print_records(proc, last);
	if (err)
		printf("npu_launch: errno=%d (%s)\n", err, strerror(err));
	else
		printf("npu_launch: ok\n");
	if (scan >= 0) {
		int64_t hits = nl_region_scan(&r, scan);

		if (hits < 0)
			printf("npu_launch: scan 0x%02x: %s\n", scan,
			       strerror((int)-hits));
		else
			printf("npu_launch: scan 0x%02x: %lld of %llu bytes\n",
			       scan, (long long)hits,
			       (unsigned long long)r.len);
	}
out:
	if (nl_region_free(&r))
		fprintf(stderr, "npu_launch: freeing the NPU memory failed\n");
	r.be->close(dev);
	if (ret)
		return 2;
	return err ? 1 : 0;
}
