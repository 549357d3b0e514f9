// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_payload.c - the rping/krping ping payload, byte for byte, and the
 * patterns of a validated stream.
 */
#include "kp_payload.h"

#define KP_CH_FIRST	65	/* 'A' */
#define KP_CH_LAST	122	/* 'z' */
#define KP_CH_SPAN	(KP_CH_LAST - KP_CH_FIRST + 1)

/* The byte of round @round's payload at @i, given the header length @hdr. */
static u8 kp_ping_byte(u32 i, u32 size, u32 hdr, u32 round)
{
	if (i == size - 1)
		return 0;
	return (u8)(KP_CH_FIRST + (round % KP_CH_SPAN + (i - hdr)) % KP_CH_SPAN);
}

static u32 kp_ping_header(char *hdr, size_t len, u32 round)
{
	/* rping counts rounds in an int */
	return (u32)snprintf(hdr, len, "rdma-ping-%d: ", (int)round);
}

void kp_ping_fill(u8 *buf, u32 size, u32 round)
{
	char hdr[32];
	u32 n = kp_ping_header(hdr, sizeof(hdr), round), i;

	if (!size)
		return;		/* nothing to fill, nothing written */
	if (n > size - 1)
		n = size - 1;
	memcpy(buf, hdr, n);
	for (i = n; i < size; i++)
		buf[i] = kp_ping_byte(i, size, n, round);
}

long kp_ping_check(const u8 *buf, u32 size, u32 round)
{
	char hdr[32];
	u32 n = kp_ping_header(hdr, sizeof(hdr), round), i;

	if (!size)
		return -1;	/* nothing to check, nothing read */
	if (n > size - 1)
		n = size - 1;
	for (i = 0; i < n; i++)
		if (buf[i] != (u8)hdr[i])
			return i;
	for (; i < size; i++)
		if (buf[i] != kp_ping_byte(i, size, n, round))
			return i;
	return -1;
}

static const u8 kp_stream_bands[] = { 0xff, 0x00, 0xaa, 0x55 };

u8 kp_stream_byte(u32 i, u64 seq)
{
	if (i < sizeof(seq))
		return (u8)(seq >> (8 * i));
	i -= sizeof(seq);
	return kp_stream_bands[(i / KP_STREAM_BAND + seq) %
			       sizeof(kp_stream_bands)];
}

/* Message @seq's bytes from @i on are band values from here. */
static u32 kp_stream_head(u32 size)
{
	return size < sizeof(u64) ? size : sizeof(u64);
}

void kp_stream_fill(u8 *buf, u32 size, u64 seq)
{
	u32 i, n;

	for (i = 0; i < kp_stream_head(size); i++)
		buf[i] = kp_stream_byte(i, seq);
	/* a band (or what is left of it) at a time */
	for (; i < size; i += n) {
		n = KP_STREAM_BAND - (i - sizeof(u64)) % KP_STREAM_BAND;
		if (n > size - i)
			n = size - i;
		memset(buf + i, kp_stream_byte(i, seq), n);
	}
}

long kp_stream_check(const u8 *buf, u32 size, u64 seq)
{
	u32 i, end;
	u8 want;

	for (i = 0; i < kp_stream_head(size); i++)
		if (buf[i] != kp_stream_byte(i, seq))
			return i;
	while (i < size) {
		want = kp_stream_byte(i, seq);
		end = i + KP_STREAM_BAND - (i - sizeof(u64)) % KP_STREAM_BAND;
		if (end > size)
			end = size;
		for (; i < end; i++)
			if (buf[i] != want)
				return i;
	}
	return -1;
}
