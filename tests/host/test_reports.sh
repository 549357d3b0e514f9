#!/bin/bash
# Host test of make test-debug's report matcher (tests/drivers/debug-reports.ere):
# real kernel reports match, DMA-API's boot banner and ordinary lines do
# not.  Prints "PASS/FAIL name".
cd "$(dirname "$0")/../.."
re=$(cat tests/drivers/debug-reports.ere)
n=0
while IFS='|' read -r want line; do
	n=$((n + 1))
	if echo "$line" | grep -Eq "$re"; then got=match; else got=none; fi
	[ "$got" = "$want" ] && echo "PASS reports-$n-$want" ||
		echo "FAIL reports-$n-$want: '$line' gave $got"
done <<'LINES'
none|[    0.412345] DMA-API: preallocated 65536 debug entries
none|[    0.412399] DMA-API: debugging enabled by kernel config
none|[    3.100000] krping_npu 4: client ping failed: error -111
none|[    5.000000] npu_peer_mem: registered with mofed_core_sim: abi mofed, struct 136 bytes, tail none
match|[   12.345678] DMA-API: mofed_core_sim_dma mofed_core_sim_dma: device driver tries to free DMA memory it has not allocated [device address=0x0000000012345000] [size=4096 bytes]
match|[   12.345678] DMA-API: e1000 0000:00:03.0: device driver failed to check map error[device address=0x0000000001234000] [size=2048 bytes] [mapped as single]
match|[   12.345678] DMA-API: exceeded 7 overlapping mappings of cacheline 0x0000000000abc000
match|[   12.345678] DMA-API: debugging out of memory - disabling
match|[   20.000000] BUG: KASAN: use-after-free in rxe_cq_post+0x3f/0x2a0 [rdma_rxe]
match|[   21.000000] WARNING: CPU: 1 PID: 312 at kernel/dma/debug.c:1011 check_unmap+0x6a4/0x9b0
match|[   22.000000] WARNING: possible circular locking dependency detected
match|[   23.000000] INFO: task rdma:431 blocked for more than 120 seconds.
LINES
