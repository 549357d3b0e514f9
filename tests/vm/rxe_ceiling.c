// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rxe_ceiling - the per-byte work rxe does for one RDMA WRITE or READ in
 * loopback, done in a loop on this CPU: the requester copies the payload
 * into a packet and computes its ICRC (CRC32), the responder copies the
 * payload out and checks the ICRC (here over the copy, so that no compiler
 * folds the second CRC into the first).  Two copies and two CRC32 passes a
 * byte, with the kernel's generic CRC32 algorithm (slice-by-8, as
 * crc32_le without pclmul).  Prints MiB/s of payload: the ceiling a
 * software RoCE device on this vCPU cannot beat, whatever the ULP.
 *
 * usage: rxe_ceiling SIZE SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MTU	4096	/* RoCE MTU of the rig (netdev MTU 9000) */

static uint32_t tab[8][256];

static void crc_init(void)
{
	uint32_t c;
	int i, j;

	for (i = 0; i < 256; i++) {
		c = (uint32_t)i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
		tab[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			tab[j][i] = (tab[j - 1][i] >> 8) ^ tab[0][tab[j - 1][i] & 0xff];
}

static uint32_t crc32_le8(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;
		crc = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^
		      tab[5][(lo >> 16) & 0xff] ^ tab[4][lo >> 24] ^
		      tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
		      tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ tab[0][(crc ^ *p++) & 0xff];
	return crc;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t size, off, n;
	uint8_t *src, *dst, pkt[MTU];
	double secs, t0, t;
	unsigned long long msgs = 0;
	uint32_t sum = 0;

	if (argc != 3 || !(size = strtoul(argv[1], NULL, 0)) ||
	    (secs = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: rxe_ceiling SIZE SECONDS\n");
		return 2;
	}
	src = malloc(size);
	dst = malloc(size);
	if (!src || !dst)
		return 1;
	memset(src, 0x5a, size);
	crc_init();
	t0 = now_s();
	do {
		for (off = 0; off < size; off += n) {
			n = size - off < MTU ? size - off : MTU;
			memcpy(pkt, src + off, n);		/* requester */
			sum += crc32_le8(~0u, pkt, n);		/* its ICRC */
			memcpy(dst + off, pkt, n);		/* into the MR */
			/* the responder's check, which the compiler must not fold into the first */
			sum += crc32_le8(sum, dst + off, n);
		}
		msgs++;
		t = now_s();
	} while (t - t0 < secs);
	printf("rxe_ceiling #bytes=%zu #iterations=%llu BW_average[MiB/sec]=%.2f crc=%08x\n",
	       size, msgs, msgs * (double)size / (t - t0) / 1048576.0, sum);
	return 0;
}
