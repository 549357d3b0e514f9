/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kp_payload.h - the ping payload of rping/krping: "rdma-ping-N: " followed
 * by a run of the characters 'A'..'z' starting one later each round, the
 * last byte NUL.  Both sides can regenerate it, so both can validate.
 */
#ifndef KP_PAYLOAD_H
#define KP_PAYLOAD_H

#include "kp_compat.h"

/* Fill @buf[0..size) with round @round's payload; @size >= 2. */
void kp_ping_fill(u8 *buf, u32 size, u32 round);

/* Offset of the first byte of @buf that differs from round @round's
 * payload, or -1 when all @size bytes match.
 */
long kp_ping_check(const u8 *buf, u32 size, u32 round);

/*
 * A validated stream's message @seq (bw,send with validate; perftest's
 * --data_validation checks WRITE and READ streams instead): its number in
 * 8 bytes, little-endian, then bands of
 * KP_STREAM_BAND bytes of 0xFF, 0x00, 0xAA and 0x55, starting @seq bands
 * further on, so neighbouring messages differ in every band.  A receiver
 * fills a slot with KP_STREAM_POISON, in no band, before posting it: from
 * KP_STREAM_MIN bytes on, a message the device never wrote cannot pass.
 */
#define KP_STREAM_BAND		64
#define KP_STREAM_POISON	0xc3
#define KP_STREAM_MIN		16

void kp_stream_fill(u8 *buf, u32 size, u64 seq);

/* Offset of the first byte of @buf that is not message @seq's, or -1. */
long kp_stream_check(const u8 *buf, u32 size, u64 seq);

/* What message @seq holds at @i (for a mismatch's report). */
u8 kp_stream_byte(u32 i, u64 seq);

#endif /* KP_PAYLOAD_H */
