// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The stand-in core behaving like MOFED 5 by default. */
#define CORE_SIM_DEFAULT_MODE "mofed"
#include "peer_core_sim.c"
