#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host test of scripts/bench: host_join, and the paired ratio of its
# report.  host_join: each result line of a boot's console gets the host
# share of qemu's vCPU threads over its own run, and the host's stolen
# time.  Synthetic samples (time, console size, qemu pid, stolen ticks,
# ticks by vCPU) hold the cases it must get right: a boot that died and
# was booted again, qemu's pid changing, an error line closing a run, an
# env line inside one not closing it, a rep line taking no figure, and
# only the intervals wholly inside a run, which its marks bound where it
# has them.  Prints "PASS/FAIL/SKIP name".
set -uo pipefail
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS bench-host-$1"; }
ko() { echo "FAIL bench-host-$1: $2"; }

sed -n '/^host_join() {/,/^}/p' scripts/bench > "$t/fn.sh"
grep -q "awk '" "$t/fn.sh" || { ko extract "no host_join() with an awk in scripts/bench"; exit 0; }
# the console, CRLF as the serial port writes it; each line's end offset
# is on its right
printf '%s\r\n' \
	"KPVM-BOOT" \
	"KPBENCH env kernel=x" \
	"setting up" \
	"KPBENCH krping_npu wlat 64 t_typical[usec]=5" \
	"KPBENCH ib_write_lat wlat 64 t_typical[usec]=6" \
	"KPBENCH-ERR ib_read_lat rlat 64: killed" \
	"KPBENCH krping_npu rlat 64 t_typical[usec]=9" \
	"setup" \
	"KPBENCH-MARK start" \
	"streaming" \
	"KPBENCH-MARK end" \
	"KPBENCH env perftest_inline=disabled_by_perftest" \
	"KPBENCH ib_write_bw bw-win 65536 BW_average[MiB/sec]=99" \
	"setup 2" \
	"KPBENCH rep 2" > "$t/log"
#	11 33 45 91 139 180 226 233 253 264 282 332 389 398 413
# The first boot (qemu pid 5) died at 500 bytes: its samples must not
# count (those at 35 and 40 bytes would make an interval of wlat's run).
# Then:
# - wlat (33..45): 3 samples in it, 2 whole intervals, 1 s: 70 and 30
#   ticks, and 8 stolen.  The interval from 32 bytes starts before it; the one to 46
#   ends after it.
# - ib_write_lat (91..91): no sample; n/a.
# - ERR (139..139) closes that run; the rlat run spans 180..180: two
#   samples at 180 across a pid change (a second qemu), so n/a.
# - bw-win spans its marks, 253..264, not 226..282: the intervals at
#   233..253 (setup) and 264..282 (after the window) are left out, and
#   their steal with them (2 ticks stolen inside).  The env line between
#   its end mark and its result (perftest's word on inline) ends nothing.
# - a rep line is no result: it gets no figure (the interval 389..398
#   before it would give one).
cat > "$t/s" <<'S'
0.5 35 5 st=0 0=0 1=0
1.0 40 5 st=50 0=50 1=50
1.5 500 5 st=90 0=90 1=90
2.0 20 7 st=90 0=0 1=0
2.5 32 7 st=95 0=10 1=10
3.0 33 7 st=100 0=50 1=20
3.5 40 7 st=104 0=80 1=40
4.0 45 7 st=108 0=120 1=50
4.5 46 7 st=150 0=170 1=51
5.0 139 7 st=150 0=200 1=60
5.5 180 7 st=150 0=250 1=70
6.0 180 8 st=150 0=10 1=10
6.5 226 8 st=150 0=60 1=20
7.0 233 8 st=180 0=60 1=20
7.5 253 8 st=200 0=65 1=25
8.0 260 8 st=201 0=115 1=60
8.5 264 8 st=202 0=160 1=95
9.0 282 8 st=260 0=200 1=100
9.5 337 8 st=300 0=250 1=150
10.0 389 8 st=300 0=300 1=200
10.5 398 8 st=300 0=350 1=250
S
want=$(printf '%s\n' \
	"KPVM-BOOT" \
	"KPBENCH env kernel=x" \
	"setting up" \
	"KPBENCH krping_npu wlat 64 t_typical[usec]=5 host_vcpu=70,30 host_steal=8 host_s=1.0" \
	"KPBENCH ib_write_lat wlat 64 t_typical[usec]=6 host_vcpu=n/a" \
	"KPBENCH-ERR ib_read_lat rlat 64: killed" \
	"KPBENCH krping_npu rlat 64 t_typical[usec]=9 host_vcpu=n/a" \
	"setup" \
	"KPBENCH-MARK start" \
	"streaming" \
	"KPBENCH-MARK end" \
	"KPBENCH env perftest_inline=disabled_by_perftest" \
	"KPBENCH ib_write_bw bw-win 65536 BW_average[MiB/sec]=99 host_vcpu=95,70 host_steal=2 host_s=1.0" \
	"setup 2" \
	"KPBENCH rep 2")
got=$(. "$t/fn.sh"; host_join "$t/s" "$t/log" | tr -d '\r')
[ "$got" = "$want" ] && ok join || ko join "got: $(echo "$got" | grep host_vcpu | tr '\n' ';')"
# a boot that ended before the first sample: the console whole, no figures
: > "$t/none"
want=$(echo "$want" | sed 's/ host_vcpu=.*/ host_vcpu=n\/a/')
got=$(. "$t/fn.sh"; host_join "$t/none" "$t/log" | tr -d '\r')
[ "$got" = "$want" ] && ok no-samples || ko no-samples "got $(echo "$got" | wc -l) lines: $(echo "$got" | head -3 | tr '\n' ';')"

# the report's paired figure of a boot: the median of the ratios of the
# two tools' runs in the same rep (an even count averages the middle
# two).  Boot 1 has rep lines: rep 1 lacks our run, rep 4 has perftest's
# inf, so each pairs nothing, and the npu run of rep 3 is no pair for
# either tool (it comes last, to overwrite whichever it is taken for): 30/31
# and 12/24 remain (by order, 0.42).  Boot 2 has none: each tool's n-th
# run pairs (rep 4 of boot 1 left over would give 0.25); boot 3 has
# none and one run too few: nothing pairs
mkdir -p "$t/res"
printf 'KP_BENCH_REPS=3\nKP_BENCH_QEMU="qemu 0"\n' > "$t/bench.env"
w() { echo "KPBENCH $1 wlat 64 t_typical[usec]=$2"; }
{ echo "KPBENCH boot 1"
  echo "KPBENCH rep 1"; w ib_write_lat 20
  echo "KPBENCH rep 2"; w krping_npu 30; w ib_write_lat 31
  echo "KPBENCH rep 3"; w krping_npu 12; w ib_write_lat 24; w krping_npu-npu 99
  echo "KPBENCH rep 4"; w krping_npu 10; w ib_write_lat inf
  echo "KPBENCH boot 2"
  w krping_npu 10; w ib_write_lat 20; w krping_npu 30; w ib_write_lat 30; w krping_npu 12; w ib_write_lat 48
  echo "KPBENCH boot 3"
  w krping_npu 10; w ib_write_lat 20; w krping_npu 10; } > "$t/bench.log"
got=$(KP_BENCH_TAG= KP_BENCH_LOG="$t/bench.log" KP_BENCH_RESULTS="$t/res" scripts/bench --report-only 2>&1 |
	awk -F' *[|] *' '$2 == "wlat" && $4 ~ /^[0-9]$/ { printf "%s:%s ", $4, $8 }')
want='1:0.7339 2:0.5000 3:n/a '
[ "$got" = "$want" ] && ok paired || ko paired "got: $got"
