#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host test of tests/vm/bench.sh's bw_margins: ours' bw-win bandwidth
# between the two points perftest -D counts between (a quarter of the run
# from each end), out of synthetic dmesg lines, through the host's awk and
# busybox's (the VM's).  Prints "PASS/FAIL/SKIP name".
set -uo pipefail
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS bench-margins-$1"; }
ko() { echo "FAIL bench-margins-$1: $2"; }

# bw_margins() out of bench.sh, and kp_bw_span(), which it calls, out of lib.sh
{ sed -n '/^kp_bw_span() {/,/^}/p' tests/vm/lib.sh; grep '^bw_margins() ' tests/vm/bench.sh; } > "$t/fn.sh"
grep -q 'dmesg | awk' "$t/fn.sh" && grep -q '^bw_margins() .*kp_bw_span' "$t/fn.sh" ||
	{ ko extract "no bw_margins() calling a kp_bw_span() that reads dmesg (tests/vm/bench.sh, lib.sh)"; exit 0; }
rep() {	# TIME ID ITERATIONS ELAPSED [MODE]: one kp_run_tick() line
	printf '[%12s] krping_npu %s: progress: %s #bytes=4096 iterations=%s elapsed[s]=%s BW[MiB/sec]=1.00 errors=0\n' \
		"$1" "$2" "${5:-bw}" "$3" "$4"
}
# test 7, an 8 s stream: its first report at or past 2 s is the one of
# 2.01 (1.99 is short of it), its first at or past 6 s the one of 6.02.
# Ahead of each, lines that must not count: test 77's (its id begins
# with 7), a bw_read line and a latency line of test 7's id.
{
	rep 10.0 7 10000 1.00
	rep 10.9 7 19000 1.99
	rep 10.95 77 99999 2.00
	rep 10.96 7 88888 2.00 bw_read
	rep 11.0 7 20000 2.01
	rep 12.0 7 40000 3.01
	rep 14.9 77 1 6.00
	echo "[   14.95] krping_npu 7: progress: wlat #bytes=64 iterations=5 elapsed[s]=6.00 t_avg[usec]=1.00 t_max[usec]=2.00 errors=0"
	rep 15.0 7 100000 6.02
	rep 16.0 7 120000 7.02
} > "$t/dmesg"
# (100000 - 20000) x 4096 B / 2^20 over 4.01 s
want=$(awk 'BEGIN { printf "%.2f", 80000 * 4096 / 1048576 / 4.01 }')
# test 9 stopped at 5 s: no report past 6 s, no figure
{ rep 1.0 9 1000 1.00; rep 3.0 9 3000 3.00; rep 5.0 9 5000 5.00; } > "$t/short"

check() {	# NAME AWK
	local got short bad=""
	got=$(WIN_D=8; . "$t/fn.sh"; dmesg() { cat "$t/dmesg"; }
	      [ "$2" = awk ] || awk() { busybox awk "$@"; }; bw_margins 7 4096)
	[ "$got" = "$want" ] || bad="test 7: '$got', want $want"
	short=$(WIN_D=8; . "$t/fn.sh"; dmesg() { cat "$t/short"; }
		[ "$2" = awk ] || awk() { busybox awk "$@"; }; bw_margins 9 4096)
	[ -z "$short" ] || bad="$bad; test 9 without a 6 s report gave '$short', want nothing"
	[ -z "$bad" ] && ok "$1" || ko "$1" "$bad"
}
check awk awk
if command -v busybox >/dev/null && busybox awk 'BEGIN { exit 0 }' 2>/dev/null; then
	check busybox busybox
else
	echo "SKIP bench-margins-busybox: no busybox on this host"
fi
