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
 *
 * Exit status 0 when the step did what it says, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

int main(int argc, char **argv)
{
	struct npu_sim_mem m;
	uint64_t size;
	int fd;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: npumem DEV SIZE check|hold|poisoned|limits VA\n");
		return 2;
	}
	size = strtoull(argv[2], NULL, 0);
	fd = npu_open(argv[1]);
	if (fd < 0)
		return 1;
	if (!strcmp(argv[3], "check"))
		return check(fd, size);
	if (!strcmp(argv[3], "poisoned"))
		return poisoned(fd, size);
	if (!strcmp(argv[3], "limits") && argc == 5)
		return limits(fd, size, strtoull(argv[4], NULL, 0));
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
