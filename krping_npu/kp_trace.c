// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kp_trace.c - krping_npu's tracepoints (kp_trace.h), created here, in a
 * file of their own: every layer fires them and none calls up for it.
 */
#include "krping_npu.h"
#define CREATE_TRACE_POINTS
#include "kp_trace.h"
