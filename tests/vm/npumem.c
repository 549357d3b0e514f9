// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npumem - drives /dev/npu_simN (peer_client/npu_sim_uapi.h) for the VM
 * tests, the way a process using the NPU runtime would.
 *
 *   npumem DEV SIZE check      alloc, copy a pattern in and back, compare,
 *                              free: prints "va=0x... ok" or the failure
 *   npumem DEV SIZE hold       alloc, print "va=0x...", then sleep until
 *                              killed: the memory goes with the process
 *   npumem DEV SIZE poisoned   alloc, copy out, count the bytes that are
 *                              not the free poison 0x6b: "va=0x... other=N"
 *                              (0: nothing wrote the memory once freed)
 *   npumem DEV SIZE limits VA  alloc until refused: "allocs=N errno=E";
 *                              then a copy past the end of its first, and
 *                              a copy from and a free of VA, another
 *                              process's: "past=E read=E free=E"
 *   npumem DEV SIZE users      the per-user limit (npu_sim user_allocs,
 *                              user_mb), across files: a file allocates
 *                              until refused, "file1=N errno=E"; a second
 *                              file of the same uid, "file2=E"; one of the
 *                              first's freed, the second's again,
 *                              "after_free=E", and once more, "again=E";
 *                              a file of uid 65534, "other_uid=E"
 *   npumem DEV SIZE race SECS CFB
 *                              two processes race for NPU memory for SECS
 *                              seconds.  Process A: one thread copies its
 *                              SIZE bytes to and from NPU memory, over and
 *                              over, with A's marker; another frees and
 *                              re-allocates them.  Process B allocates
 *                              until it gets the address A freed last,
 *                              checks what it finds, writes B's marker,
 *                              reads it back twice, frees.  A byte of one
 *                              read by the other is a crossing.  CFB: the
 *                              CPUs of A's copy thread, A's free thread
 *                              and B, e.g. "011".  Prints "crossings=N
 *                              a_read_b=N b_read_a=N junk=N err=N a_ok=N
 *                              a_failed=N a_frees=N b_allocs=N b_took=N
 *                              hung=0|1" (junk: bytes that are no one's
 *                              marker, the poison or zero; err: a failure
 *                              a copy, alloc or free must not have; copies
 *                              of A: ok, or failed with EFAULT)
 *
 * Exit status 0 when the step did what it says, 1 otherwise; race: 0 when
 * nothing crossed, no junk, no error and nothing hung.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../peer_client/npu_sim_uapi.h"

static int npu_open(const char *dev)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/npu_sim%s", dev);
	fd = open(path, O_RDWR);
	if (fd < 0)
		printf("open %s: errno=%d\n", path, errno);
	return fd;
}

static int copy(int fd, unsigned long cmd, uint64_t va, void *host,
		uint64_t len)
{
	struct npu_sim_copy c = {
		.va = va, .host = (uintptr_t)host, .len = len,
	};

	return ioctl(fd, cmd, &c) ? errno : 0;
}

static int check(int fd, uint64_t size)
{
	struct npu_sim_mem m = { .size = size };
	unsigned char *in = malloc(size), *out = malloc(size);
	uint64_t i;
	int e;

	if (!in || !out)
		return 1;
	if (ioctl(fd, NPU_SIM_ALLOC, &m)) {
		printf("alloc errno=%d\n", errno);
		return 1;
	}
	for (i = 0; i < size; i++)
		in[i] = (unsigned char)(i * 7 + 3);
	memset(out, 0, size);
	e = copy(fd, NPU_SIM_COPY_TO, m.va, in, size);
	if (!e)
		e = copy(fd, NPU_SIM_COPY_FROM, m.va, out, size);
	if (e) {
		printf("copy errno=%d\n", e);
		return 1;
	}
	for (i = 0; i < size; i++)
		if (in[i] != out[i]) {
			printf("byte %llu: 0x%02x, want 0x%02x\n",
			       (unsigned long long)i, out[i], in[i]);
			return 1;
		}
	if (ioctl(fd, NPU_SIM_FREE, &m.va)) {
		printf("free errno=%d\n", errno);
		return 1;
	}
	printf("va=0x%llx ok\n", (unsigned long long)m.va);
	return 0;
}

static int poisoned(int fd, uint64_t size)
{
	struct npu_sim_mem m = { .size = size };
	unsigned char *out = malloc(size);
	uint64_t i, other = 0, first = 0;
	int e;

	if (!out)
		return 1;
	if (ioctl(fd, NPU_SIM_ALLOC, &m)) {
		printf("alloc errno=%d\n", errno);
		return 1;
	}
	e = copy(fd, NPU_SIM_COPY_FROM, m.va, out, size);
	if (e) {
		printf("copy errno=%d\n", e);
		return 1;
	}
	for (i = 0; i < size; i++)
		if (out[i] != 0x6b && !other++)
			first = i;
	if (other)
		printf("va=0x%llx other=%llu first=%llu\n",
		       (unsigned long long)m.va, (unsigned long long)other,
		       (unsigned long long)first);
	else
		printf("va=0x%llx other=0\n", (unsigned long long)m.va);
	return other != 0;
}

static int limits(int fd, uint64_t size, uint64_t other)
{
	struct npu_sim_mem m = { .size = size };
	uint64_t first = 0;
	int n = 0, e, past, rd, oth;
	char byte;

	while (n < 1000) {
		m.size = size;
		if (ioctl(fd, NPU_SIM_ALLOC, &m))
			break;
		if (!first)
			first = m.va;
		n++;
	}
	e = errno;
	{
		char two[2];

		past = copy(fd, NPU_SIM_COPY_FROM, first + size - 1, two, 2);
	}
	rd = copy(fd, NPU_SIM_COPY_FROM, other, &byte, 1);
	oth = ioctl(fd, NPU_SIM_FREE, &other) ? errno : 0;
	printf("allocs=%d errno=%d past=%d read=%d free=%d\n", n, e, past, rd, oth);
	return 0;
}

static int alloc(int fd, uint64_t size, uint64_t *va)
{
	struct npu_sim_mem m = { .size = size };

	if (ioctl(fd, NPU_SIM_ALLOC, &m))
		return errno;
	*va = m.va;
	return 0;
}

static int npu_free(int fd, uint64_t va)
{
	return ioctl(fd, NPU_SIM_FREE, &va) ? errno : 0;
}

/*
 * users: what one uid holds, all files together.  The limit is set by the
 * caller (npu_sim's user_allocs or user_mb), maybe partly taken by another
 * process of the same uid.
 */
static int users(int fd, const char *dev, uint64_t size)
{
	int n = 0, e1 = 0, e2, e3 = -1, e4 = -1, e5, fd2, st;
	uint64_t first = 0, va = 0;
	pid_t pid;

	while (n < 1000) {
		e1 = alloc(fd, size, &va);
		if (e1)
			break;
		if (!first)
			first = va;
		n++;
	}
	fd2 = npu_open(dev);
	if (fd2 < 0)
		return 1;
	e2 = alloc(fd2, size, &va);
	if (first && !npu_free(fd, first)) {
		e3 = alloc(fd2, size, &va);
		e4 = alloc(fd2, size, &va);
	}
	/* another user: its own limit, whatever this one holds */
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		int fd3 = npu_open(dev);

		if (fd3 < 0 || setgid(65534) || setuid(65534))
			_exit(255);
		_exit(alloc(fd3, size, &va));
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 1;
	e5 = WEXITSTATUS(st);
	printf("file1=%d errno=%d file2=%d after_free=%d again=%d other_uid=%d\n",
	       n, e1, e2, e3, e4, e5);
	return 0;
}

/* race: the markers, and the poison npu_sim fills freed memory with */
#define MARK_A	0xa1
#define MARK_B	0xb2
#define POISON	0x6b

/* shared by A's two threads, B and the parent (a MAP_SHARED mapping) */
struct race {
	const char *dev;
	uint64_t size;
	double end;		/* CLOCK_MONOTONIC */
	int cpu[3];		/* A's copy thread, A's free thread, B */
	int fd;			/* A's */
	uint64_t cur;		/* A's allocation, as A's copy thread sees it */
	uint64_t freeing;	/* the va A frees last, set before the free */
	uint64_t a_ok, a_failed, a_frees;
	uint64_t a_read_b, a_junk, a_err;
	uint64_t b_allocs, b_took, b_read_a, b_junk, b_err;
	int last_errno;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

	nanosleep(&ts, NULL);
}

static void spin_us(unsigned int us)
{
	double end = now() + us / 1e6;

	while (now() < end)
		;
}

/* Pin the calling thread to @cpu, modulo the CPUs online. */
static int pin(int cpu)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % (n > 0 ? n : 1), &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		printf("pin to CPU %d: errno=%d\n", cpu, errno);
		return 1;
	}
	return 0;
}

static void race_err(struct race *r, uint64_t *count, int e)
{
	__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
	r->last_errno = e;
}

/*
 * A's free thread: free the allocation, half the time some way into a
 * copy, half the time once a copy on it has ended (bounded); leave a gap,
 * sleeping or spinning, for B to take the address; allocate again.
 */
static void *race_a_free(void *arg)
{
	struct race *r = arg;
	unsigned int seed = (unsigned int)getpid();
	uint64_t va = 0, ok0;
	double until;
	int e;

	if (pin(r->cpu[1]))
		return (void *)1;
	while (now() < r->end) {
		if (rand_r(&seed) & 1) {
			sleep_us(rand_r(&seed) % 20000);
		} else {
			ok0 = __atomic_load_n(&r->a_ok, __ATOMIC_RELAXED);
			until = now() + 0.2;
			while (__atomic_load_n(&r->a_ok, __ATOMIC_RELAXED) == ok0 &&
			       now() < until)
				sleep_us(1000);
		}
		va = __atomic_load_n(&r->cur, __ATOMIC_ACQUIRE);
		__atomic_store_n(&r->freeing, va, __ATOMIC_RELEASE);
		e = npu_free(r->fd, va);
		if (e) {
			race_err(r, &r->a_err, e);
			return NULL;
		}
		r->a_frees++;
		if (rand_r(&seed) & 1)
			spin_us(rand_r(&seed) % 2000);
		else
			sleep_us(rand_r(&seed) % 2000);
		/* the copy thread goes on with the old va meanwhile */
		while ((e = alloc(r->fd, r->size, &va))) {
			race_err(r, &r->a_err, e);
			if (now() >= r->end)
				return NULL;
			sleep_us(1000);
		}
		__atomic_store_n(&r->cur, va, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* Count the bytes of @buf that are @other's, and those that are junk. */
static void race_scan(const unsigned char *buf, uint64_t size, int own,
		      int other, int fresh_ok, uint64_t *crossed, uint64_t *junk)
{
	uint64_t i, c = 0, j = 0;

	for (i = 0; i < size; i++) {
		if (buf[i] == own)
			continue;
		if (buf[i] == other)
			c++;
		else if (!fresh_ok || (buf[i] != POISON && buf[i] != 0))
			j++;
	}
	__atomic_add_fetch(crossed, c, __ATOMIC_RELAXED);
	__atomic_add_fetch(junk, j, __ATOMIC_RELAXED);
}

/* Process A: its copy thread here, its free thread beside it. */
static int race_a(struct race *r)
{
	unsigned char *wbuf = malloc(r->size), *rbuf = malloc(r->size);
	pthread_t ft;
	void *fret = NULL;
	uint64_t va = 0;
	int e;

	r->fd = npu_open(r->dev);
	if (r->fd < 0 || !wbuf || !rbuf)
		return 1;
	memset(wbuf, MARK_A, r->size);
	memset(rbuf, 0, r->size);
	e = alloc(r->fd, r->size, &va);
	if (e) {
		race_err(r, &r->a_err, e);
		return 1;
	}
	__atomic_store_n(&r->cur, va, __ATOMIC_RELEASE);
	if (pin(r->cpu[0]) || pthread_create(&ft, NULL, race_a_free, r))
		return 1;
	while (now() < r->end) {
		va = __atomic_load_n(&r->cur, __ATOMIC_ACQUIRE);
		e = copy(r->fd, NPU_SIM_COPY_TO, va, wbuf, r->size);
		if (!e)
			e = copy(r->fd, NPU_SIM_COPY_FROM, va, rbuf, r->size);
		if (!e) {
			/* its own allocation: A's marker, or fresh memory */
			race_scan(rbuf, r->size, MARK_A, MARK_B, 1,
				  &r->a_read_b, &r->a_junk);
			__atomic_add_fetch(&r->a_ok, 1, __ATOMIC_RELAXED);
		} else if (e == EFAULT) {
			/* freed under the copy, or the va is no longer A's */
			r->a_failed++;
			if (va == __atomic_load_n(&r->cur, __ATOMIC_ACQUIRE))
				sleep_us(100);
		} else {
			race_err(r, &r->a_err, e);
		}
	}
	pthread_join(ft, &fret);
	return fret != NULL;
}

/* B's allocations below A's, which make A's the lowest free address */
#define B_HELD	8

static void race_b_release(struct race *r, int fd, uint64_t *held, int *n)
{
	int e;

	while (*n) {
		e = npu_free(fd, held[--*n]);
		if (e)
			race_err(r, &r->b_err, e);
	}
}

/*
 * Process B: allocate until it has the address A freed last (the pool
 * takes the lowest free address, so B keeps what it gets below A's),
 * then check it: nothing of A's in it, fresh or after B's marker.
 */
static int race_b(struct race *r)
{
	unsigned char *wbuf = malloc(r->size), *rbuf = malloc(r->size);
	unsigned int seed = (unsigned int)getpid() * 7;
	uint64_t va = 0, held[B_HELD];
	int fd, e, k, n = 0;

	fd = npu_open(r->dev);
	if (fd < 0 || !wbuf || !rbuf || pin(r->cpu[2]))
		return 1;
	memset(wbuf, MARK_B, r->size);
	while (now() < r->end) {
		e = alloc(fd, r->size, &va);
		if (e) {
			race_err(r, &r->b_err, e);
			race_b_release(r, fd, held, &n);
			sleep_us(1000);
			continue;
		}
		r->b_allocs++;
		if (va != __atomic_load_n(&r->freeing, __ATOMIC_ACQUIRE)) {
			if (n < B_HELD &&
			    va < __atomic_load_n(&r->cur, __ATOMIC_ACQUIRE)) {
				held[n++] = va;
				continue;
			}
			e = npu_free(fd, va);
			if (e)
				race_err(r, &r->b_err, e);
			continue;
		}
		r->b_took++;
		/* fresh: the poison (or zero), nothing of A's */
		e = copy(fd, NPU_SIM_COPY_FROM, va, rbuf, r->size);
		if (!e)
			race_scan(rbuf, r->size, POISON, MARK_A, 1,
				  &r->b_read_a, &r->b_junk);
		if (!e)
			e = copy(fd, NPU_SIM_COPY_TO, va, wbuf, r->size);
		/* B's marker stays B's while A's copies go on */
		for (k = 0; k < 2 && !e; k++) {
			sleep_us(rand_r(&seed) % 3000);
			e = copy(fd, NPU_SIM_COPY_FROM, va, rbuf, r->size);
			if (!e)
				race_scan(rbuf, r->size, MARK_B, MARK_A, 0,
					  &r->b_read_a, &r->b_junk);
		}
		if (e)
			race_err(r, &r->b_err, e);
		e = npu_free(fd, va);
		if (e)
			race_err(r, &r->b_err, e);
		race_b_release(r, fd, held, &n);
	}
	race_b_release(r, fd, held, &n);
	return 0;
}

static int race(const char *dev, uint64_t size, double secs, const char *cpus)
{
	struct race *r;
	pid_t pa, pb, p;
	double until;
	int i, st, hung = 0, bad = 0, left = 2;
	uint64_t crossed;

	if (strlen(cpus) != 3 || secs <= 0 || !size)
		return 2;
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return 1;
	memset(r, 0, sizeof(*r));
	for (i = 0; i < 3; i++)
		r->cpu[i] = cpus[i] - '0';
	r->dev = dev;
	r->size = size;
	r->end = now() + secs;
	fflush(stdout);
	pa = fork();
	if (!pa) {
		i = race_a(r);
		fflush(stdout);
		_exit(i);
	}
	pb = pa > 0 ? fork() : -1;
	if (!pb) {
		i = race_b(r);
		fflush(stdout);
		_exit(i);
	}
	if (pa < 0 || pb < 0) {
		if (pa > 0)
			kill(pa, SIGKILL);
		return 1;
	}
	/* bounded: a process stuck in the device is a failure, not a hang */
	until = r->end + 60;
	while (left) {
		p = waitpid(-1, &st, WNOHANG);
		if (p == pa || p == pb) {
			left--;
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				bad++;
			continue;
		}
		if (now() > until) {
			hung = 1;
			kill(pa, SIGKILL);
			kill(pb, SIGKILL);
			while (waitpid(-1, &st, 0) > 0)
				;
			break;
		}
		sleep_us(100000);
	}
	crossed = r->a_read_b + r->b_read_a;
	printf("crossings=%llu a_read_b=%llu b_read_a=%llu junk=%llu err=%llu "
	       "a_ok=%llu a_failed=%llu a_frees=%llu b_allocs=%llu b_took=%llu "
	       "hung=%d",
	       (unsigned long long)crossed, (unsigned long long)r->a_read_b,
	       (unsigned long long)r->b_read_a,
	       (unsigned long long)(r->a_junk + r->b_junk),
	       (unsigned long long)(r->a_err + r->b_err + bad),
	       (unsigned long long)r->a_ok, (unsigned long long)r->a_failed,
	       (unsigned long long)r->a_frees, (unsigned long long)r->b_allocs,
	       (unsigned long long)r->b_took, hung);
	if (r->last_errno)
		printf(" errno=%d", r->last_errno);
	printf("\n");
	return crossed || r->a_junk || r->b_junk || r->a_err || r->b_err ||
	       bad || hung;
}

int main(int argc, char **argv)
{
	struct npu_sim_mem m;
	uint64_t size;
	int fd;

	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: npumem DEV SIZE check|hold|poisoned|users|"
			"limits VA|race SECS CFB\n");
		return 2;
	}
	size = strtoull(argv[2], NULL, 0);
	if (!strcmp(argv[3], "race") && argc == 6)
		return race(argv[1], size, strtod(argv[4], NULL), argv[5]);
	fd = npu_open(argv[1]);
	if (fd < 0)
		return 1;
	if (!strcmp(argv[3], "check"))
		return check(fd, size);
	if (!strcmp(argv[3], "poisoned"))
		return poisoned(fd, size);
	if (!strcmp(argv[3], "limits") && argc == 5)
		return limits(fd, size, strtoull(argv[4], NULL, 0));
	if (!strcmp(argv[3], "users"))
		return users(fd, argv[1], size);
	if (strcmp(argv[3], "hold"))
		return 2;
	m.size = size;
	if (ioctl(fd, NPU_SIM_ALLOC, &m)) {
		printf("alloc errno=%d\n", errno);
		return 1;
	}
	printf("va=0x%llx\n", (unsigned long long)m.va);
	fflush(stdout);
	for (;;)
		pause();
}
