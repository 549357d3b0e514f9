#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host test of scripts/ptpost-report: a synthetic bench log with ptpost's
# fields, whose write() shares and ratios are known by hand.  Prints
# "PASS/FAIL name".
set -uo pipefail
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS ptpost-report-$1"; }
ko() { echo "FAIL ptpost-report-$1: $2"; }

# bw 64: T = 1000/0.1 = 10000 ns, one post a message; a system call
# 0.5 us: 10000/9500 = 1.05; the client's fastest write 1.5 us: 1.18; its
# median 2 us: 1.25.  Measured 12/10 and 13/10, median 1.25.
# wlat 64: 40 us a round trip, a post each side; system calls 0.4 us:
# 39.2/40 = 0.98; fastest writes 3 us each: 34/40 = 0.85; medians 4 us
# each: 0.80.  Measured 32/40 = 0.80 and, in rep 2,
# 36/40 = 0.90: 0.85.  A row without ptpost is not
# in the table, nor bw-win (perftest -D: its iterations are the window's,
# its writes the whole run's); the console's carriage returns are taken off.
cat > "$t/log" <<'L'
KPBENCH boot 1
KPBENCH env kernel=6.12 ptpost=on
KPBENCH rep 1
KPBENCH krping_npu bw 64 #bytes=64 #iterations=2000 BW_peak[MiB/sec]=13 BW_average[MiB/sec]=12.0 MsgRate[Mpps]=0.12 CPU[s/GiB]=1
KPBENCH ib_write_bw bw 64 #bytes=64 #iterations=2000 BW_peak[MiB/sec]=11 BW_average[MiB/sec]=10.0 MsgRate[Mpps]=0.100000 CPU[s/GiB]=1 cpu0_busy=100 cli_w28=2000/2500.0/2000.0/1500.0 cli_tsc_pair_ns=20.0 cli_syscall_ns=500.0/400.0 host_vcpu=n/a
KPBENCH krping_npu wlat 64 #bytes=64 #iterations=3000 t_typical[usec]=32.00
KPBENCH ib_write_lat wlat 64 #bytes=64 #iterations=3000 t_min[usec]=30 t_max[usec]=90 t_typical[usec]=40.00 t_avg[usec]=41 cli_w28=3000/5000.0/4000.0/3000.0 srv_w28=3000/5000.0/4000.0/3000.0 cli_tsc_pair_ns=20.0 cli_syscall_ns=400.0/300.0 srv_syscall_ns=400.0/300.0
KPBENCH ib_write_bw bw-win 4096 #bytes=4096 #iterations=1000 BW_peak[MiB/sec]=11 BW_average[MiB/sec]=10.0 MsgRate[Mpps]=0.002 cli_w28=2000/2500.0/2000.0/1500.0
KPBENCH krping_npu rlat 64 #bytes=64 #iterations=3000 t_typical[usec]=30.00
KPBENCH ib_read_lat rlat 64 #bytes=64 #iterations=3000 t_typical[usec]=40.00
KPBENCH rep 2
KPBENCH krping_npu bw 64 #bytes=64 #iterations=2000 BW_peak[MiB/sec]=13 BW_average[MiB/sec]=13.0 MsgRate[Mpps]=0.13 CPU[s/GiB]=1
KPBENCH ib_write_bw bw 64 #bytes=64 #iterations=2000 BW_peak[MiB/sec]=11 BW_average[MiB/sec]=10.0 MsgRate[Mpps]=0.100000 CPU[s/GiB]=1 cli_w28=2000/2500.0/2000.0/1500.0 cli_tsc_pair_ns=20.0
KPBENCH ib_write_lat wlat 64 #bytes=64 #iterations=3000 t_typical[usec]=40.00 cli_w28=3000/5000.0/4000.0/3000.0 srv_w28=3000/5000.0/4000.0/3000.0 cli_tsc_pair_ns=20.0 cli_syscall_ns=400.0/300.0 srv_syscall_ns=400.0/300.0
KPBENCH krping_npu wlat 64 #bytes=64 #iterations=3000 t_typical[usec]=36.00
L
sed -i 's/$/\r/' "$t/log"
out=$(scripts/ptpost-report "$t/log" 2>&1) || { ko run "exit $?: $out"; exit 0; }
bw=$(echo "$out" | grep '^| bw | 64 |')
wl=$(echo "$out" | grep '^| wlat | 64 |')
[ "$bw" = "| bw | 64 | ib_write_bw | 2 | 1.00/0.00 | 2000 (2500, 1500) | 2000/0 | 10000 | 500 | 1.05 / 1.18 / 1.25 | 1.25 | 20.0 |" ] && ok bw || ko bw "got '$bw'"
[ "$wl" = "| wlat | 64 | ib_write_lat | 2 | 1.00/1.00 | 4000 (5000, 3000) | 4000/4000 | 40000 | 400 | 0.98 / 0.85 / 0.80 | 0.85 | 20.0 |" ] && ok lat || ko lat "got '$wl'"
echo "$out" | grep -q '^| rlat ' && ko no-ptpost "a row without ptpost figures is in the table" || ok no-ptpost
echo "$out" | grep -q '^| bw-win ' && ko no-window "bw-win's writes divided by its window's iterations" || ok no-window
# a log without ptpost's fields is refused, not tabulated empty
grep -v '_w28=' "$t/log" > "$t/plain"
scripts/ptpost-report "$t/plain" > /dev/null 2>&1
rc=$?
[ $rc = 1 ] && ok refuses-plain || ko refuses-plain "exit $rc, want 1"
