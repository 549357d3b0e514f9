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

#endif /* KP_PAYLOAD_H */
