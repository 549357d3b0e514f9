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
# bw-dx 64: MsgRate 0.2 sums both directions, so one direction's message
# takes 2/0.2 us = 10000 ns: the same 1.05 / 1.18 / 1.25.
# wlat 64: perftest's 20 us is half of a 40 us round trip, which holds a
# post of each side; system calls 0.4 us: 39.2/40 = 0.98; fastest writes
# 3 us each: 34/40 = 0.85; medians 4 us each: 0.80.  Measured 16/20 =
# 0.80 and, in rep 2, 18/20 = 0.90: 0.85.
# rlat 64: 30 us is a whole round trip with the client's post alone:
# system call 0.6 us: 0.98; failed post 1.5 us: 0.95; fastest and
# median 3 us: 0.90.
# A failed post (the probe) of 1 us: bw 64 10000/9000 = 1.11; wlat
# 38/40 = 0.95.  bw-dx has the client's probe and not the server's,
# which a stream does not count: 1.11.  A wlat row with the client's
# probe alone gets no figure for it, not half of one; nor does bw_read,
# whose probe did not fail as meant (err-1: it succeeded).
# Not in the table: a row without ptpost; bw-win (perftest -D: its
# iterations are the window's, its writes the whole run's); bw-rl20 (the
# limit paces it, not the client); a slat row whose server's figures are
# missing.  The console's carriage returns are taken off.
cat > "$t/log" <<'L'
KPBENCH boot 1
KPBENCH env kernel=6.12 ptpost=on
KPBENCH rep 1
KPBENCH krping_npu bw 64 #bytes=64 #iterations=2000 BW_peak[MiB/sec]=13 BW_average[MiB/sec]=12.0 MsgRate[Mpps]=0.12 CPU[s/GiB]=1
KPBENCH ib_write_bw bw 64 #bytes=64 #iterations=2000 BW_peak[MiB/sec]=11 BW_average[MiB/sec]=10.0 MsgRate[Mpps]=0.100000 CPU[s/GiB]=1 cpu0_busy=100 cli_w28=2000/2500.0/2000.0/1500.0 cli_tsc_pair_ns=20.0 cli_syscall_ns=500.0/400.0 cli_probe_ns=1000.0/900.0 host_vcpu=n/a
KPBENCH krping_npu wlat 64 #bytes=64 #iterations=3000 t_typical[usec]=16.00
KPBENCH ib_write_lat wlat 64 #bytes=64 #iterations=3000 t_min[usec]=15 t_max[usec]=90 t_typical[usec]=20.00 t_avg[usec]=41 cli_w28=3000/5000.0/4000.0/3000.0 srv_w28=3000/5000.0/4000.0/3000.0 cli_tsc_pair_ns=20.0 cli_syscall_ns=400.0/300.0 srv_syscall_ns=400.0/300.0 cli_probe_ns=1000.0/900.0 srv_probe_ns=1000.0/900.0
KPBENCH ib_write_bw bw-win 4096 #bytes=4096 #iterations=1000 BW_peak[MiB/sec]=11 BW_average[MiB/sec]=10.0 MsgRate[Mpps]=0.002 cli_w28=2000/2500.0/2000.0/1500.0
KPBENCH krping_npu rlat 64 #bytes=64 #iterations=3000 t_typical[usec]=27.00
KPBENCH ib_read_lat rlat 64 #bytes=64 #iterations=3000 t_typical[usec]=30.00 cli_w28=3000/3000.0/3000.0/3000.0 cli_syscall_ns=600.0/500.0 cli_probe_ns=1500.0/1400.0
KPBENCH krping_npu slat 64 #bytes=64 #iterations=3000 t_typical[usec]=27.00
KPBENCH ib_send_lat slat 64 #bytes=64 #iterations=3000 t_typical[usec]=30.00 cli_w28=3000/3000.0/3000.0/3000.0 cli_syscall_ns=600.0/500.0
KPBENCH krping_npu bw-dx 64 #bytes=64 #iterations=2000 BW_average[MiB/sec]=24.0 MsgRate[Mpps]=0.24
KPBENCH ib_write_bw bw-dx 64 #bytes=64 #iterations=2000 BW_average[MiB/sec]=20.0 MsgRate[Mpps]=0.200000 cli_w28=2000/2500.0/2000.0/1500.0 cli_syscall_ns=500.0/400.0 srv_w28=2000/2500.0/2000.0/1500.0 cli_probe_ns=1000.0/900.0
KPBENCH krping_npu alat 8 #bytes=8 #iterations=3000 t_typical[usec]=10.00
KPBENCH ib_atomic_lat alat 8 #bytes=8 #iterations=3000 t_typical[usec]=12.00
KPBENCH krping_npu wlat 65536 #bytes=65536 #iterations=500 t_typical[usec]=100.00
KPBENCH ib_write_lat wlat 65536 #bytes=65536 #iterations=500 t_typical[usec]=100.00 cli_w28=500/3000.0/3000.0/3000.0 srv_w28=500/3000.0/3000.0/3000.0 cli_syscall_ns=400.0/300.0 cli_probe_ns=1000.0/900.0
KPBENCH krping_npu bw_read 64 #bytes=64 #iterations=2000 BW_average[MiB/sec]=10.0 MsgRate[Mpps]=0.1
KPBENCH ib_read_bw bw_read 64 #bytes=64 #iterations=2000 BW_average[MiB/sec]=10.0 MsgRate[Mpps]=0.100000 cli_w28=2000/2500.0/2000.0/1500.0 cli_syscall_ns=500.0/400.0 cli_probe_ns=err-1
KPBENCH krping_npu bw-rl20 4096 #bytes=4096 #iterations=2000 BW_average[MiB/sec]=20.0 MsgRate[Mpps]=0.005
KPBENCH ib_write_bw bw-rl20 4096 #bytes=4096 #iterations=2000 BW_average[MiB/sec]=20.0 MsgRate[Mpps]=0.005 cli_w28=2000/2500.0/2000.0/1500.0 cli_syscall_ns=500.0/400.0
KPBENCH rep 2
KPBENCH krping_npu bw 64 #bytes=64 #iterations=2000 BW_peak[MiB/sec]=13 BW_average[MiB/sec]=13.0 MsgRate[Mpps]=0.13 CPU[s/GiB]=1
KPBENCH ib_write_bw bw 64 #bytes=64 #iterations=2000 BW_peak[MiB/sec]=11 BW_average[MiB/sec]=10.0 MsgRate[Mpps]=0.100000 CPU[s/GiB]=1 cli_w28=2000/2500.0/2000.0/1500.0 cli_tsc_pair_ns=20.0 cli_syscall_ns=500.0/400.0 cli_probe_ns=1000.0/900.0
KPBENCH ib_write_lat wlat 64 #bytes=64 #iterations=3000 t_typical[usec]=20.00 cli_w28=3000/5000.0/4000.0/3000.0 srv_w28=3000/5000.0/4000.0/3000.0 cli_tsc_pair_ns=20.0 cli_syscall_ns=400.0/300.0 srv_syscall_ns=400.0/300.0 cli_probe_ns=1000.0/900.0 srv_probe_ns=1000.0/900.0
KPBENCH krping_npu wlat 64 #bytes=64 #iterations=3000 t_typical[usec]=18.00
L
sed -i 's/$/\r/' "$t/log"
out=$(scripts/ptpost-report "$t/log" 2>&1) || { ko run "exit $?: $out"; exit 0; }
bw=$(echo "$out" | grep '^| bw | 64 |')
wl=$(echo "$out" | grep '^| wlat | 64 |')
[ "$bw" = "| bw | 64 | ib_write_bw | 2 | 1.00/0.00 | 2000 (2500, 1500) | 2000/0 | 10000 | 500 / 1000 | 1.05 / 1.11 / 1.18 / 1.25 | 1.25 |" ] && ok bw || ko bw "got '$bw'"
[ "$wl" = "| wlat | 64 | ib_write_lat | 2 | 1.00/1.00 | 4000 (5000, 3000) | 4000/4000 | 40000 | 400 / 1000 | 0.98 / 0.95 / 0.85 / 0.80 | 0.85 |" ] && ok lat || ko lat "got '$wl'"
rl=$(echo "$out" | grep '^| rlat | 64 |')
dx=$(echo "$out" | grep '^| bw-dx | 64 |')
[ "$rl" = "| rlat | 64 | ib_read_lat | 1 | 1.00/0.00 | 3000 (3000, 3000) | 3000/0 | 30000 | 600 / 1500 | 0.98 / 0.95 / 0.90 / 0.90 | 0.90 |" ] && ok one-side || ko one-side "got '$rl'"
[ "$dx" = "| bw-dx | 64 | ib_write_bw | 1 | 1.00/1.00 | 2000 (2500, 1500) | 2000/2000 | 10000 | 500 / 1000 | 1.05 / 1.11 / 1.18 / 1.25 | 1.20 |" ] && ok duplex || ko duplex "got '$dx'"
br=$(echo "$out" | grep '^| bw_read | 64 |')
case "$br" in *"| 500 / n/a | 1.05 / n/a / 1.18 / 1.25 | 1.00 |") ok probe-err ;; *) ko probe-err "got '$br'" ;; esac
w2=$(echo "$out" | grep '^| wlat | 65536 |')
case "$w2" in *"| 400 / n/a | 1.00 / n/a / 0.97 / 0.97 | 1.00 |") ok one-probe ;; *) ko one-probe "got '$w2'" ;; esac
echo "$out" | grep -q '^| alat ' && ko no-ptpost "a row without ptpost figures is in the table" || ok no-ptpost
echo "$out" | grep -q '^| bw-rl20 ' && ko no-rate-limit "a rate-limited row is in the table" || ok no-rate-limit
echo "$out" | grep -q '^| slat ' && ko needs-server "a slat row without the server's writes is in the table" || ok needs-server
echo "$out" | grep -q '^| bw-win ' && ko no-window "bw-win's writes divided by its window's iterations" || ok no-window
# a log without ptpost's fields is refused, not tabulated empty
grep -v '_w28=' "$t/log" > "$t/plain"
scripts/ptpost-report "$t/plain" > /dev/null 2>&1
rc=$?
[ $rc = 1 ] && ok refuses-plain || ko refuses-plain "exit $rc, want 1"
