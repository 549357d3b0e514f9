// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * npu_stats.c - npu_peer_mem's counters (npu_provider.h), the bottom of
 * the module: every file counts here, and this file calls none of them.
 * npu_peer_main.c shows them in debugfs "stats".
 */
#include "npu_provider.h"

struct npu_peer_stats npu_stats;
