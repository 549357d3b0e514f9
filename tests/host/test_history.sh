#!/bin/bash
# Host tests of scripts/history on a synthetic results tree: the index
# holds every run, the trend is each run's median in name order with the
# kernel/driver/firmware change marked, the index follows a new, a changed
# and a removed run, the plot is written.  Prints "PASS/FAIL name".
set -uo pipefail
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS history-$1"; }
ko() { echo "FAIL history-$1: $2"; }
mkrun() {	# NAME KERNEL FW BW...
	local d=$t/res/$1 k=$2 fw=$3; shift 3
	mkdir -p "$d"
	printf 'host: npu01\nkernel: %s #1 SMP\n--- mlx5_0: fw_ver %s driver mlx5_core\n' "$k" "$fw" > "$d/env.txt"
	for v in "$@"; do
		echo '{"test": "bw", "role": "client", "mem": "host", "MsgSize": 65536, "BW_average": '"$v"'}'
		echo '{"test": "wlat", "role": "client", "mem": "host", "MsgSize": 64, "t_typical": 2.5}'
	done > "$d/results.json"
}
mkrun 20261101-fw27 6.1.0-26 28.27.1000 100 102 98
mkrun 20261108-fw27 6.1.0-26 28.27.1000 101 99 100
mkrun 20261115-fw28 6.1.0-26 28.39.1000 80 81 79
mkdir -p "$t/res/notarun"
out=$(scripts/history --test bw --size 65536 "$t/res" 2>&1); rc=$?
want='history: 3 runs in '"$t"'/res

krping_npu bw 65536 B host: BW_average (median of each run)
run                                  BW_average    n  kernel / driver / firmware
20261101-fw27                            100.00    3  6.1.0-26 / mlx5_core / 28.27.1000
20261108-fw27                            100.00    3  6.1.0-26 / mlx5_core / 28.27.1000
20261115-fw28                             80.00    3  6.1.0-26 / mlx5_core / 28.39.1000*
'"$t"'/res/history-bw-65536.png'
[ $rc = 0 ] && [ "$out" = "$want" ] && ok trend || ko trend "rc $rc: $out"
why=$(tests/host/png-check 1000 620 "$t/res/history-bw-65536.png") && ok plot || ko plot "$why"
n=$(sqlite3 "$t/res/history.sqlite" 'select count(*) from results' 2>/dev/null ||
	python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from results").fetchone()[0])' "$t/res/history.sqlite")
[ "$n" = 18 ] && ok index || ko index "$n rows, want 18"
# a new run, a changed one, a removed one
mkrun 20261122-k6.1.0-27 6.1.0-27 28.39.1000 60
sleep 0.01; mkrun 20261108-fw27 6.1.0-26 28.27.1000 90
rm -rf "$t/res/20261101-fw27"
out=$(scripts/history --no-plot --test bw --size 65536 "$t/res" 2>&1)
grep -q '^history: 3 runs in ' <<< "$out" && ! grep -q 20261101 <<< "$out" &&
	grep -q '^20261108-fw27  *90.00    1  ' <<< "$out" &&
	grep -q '^20261122-k6.1.0-27  *60.00    1  6.1.0-27\* / mlx5_core / 28.39.1000$' <<< "$out" &&
	ok follows-changes || ko follows-changes "$out"
out=$(scripts/history "$t/res" 2>&1)
[ "$(echo "$out" | grep -c '^krping_npu ')" = 2 ] && ok all-keys || ko all-keys "$out"
scripts/history --test rlat --size 64 --no-plot "$t/res" > /dev/null 2>&1
[ $? = 1 ] && ok no-such-key || ko no-such-key "exit $?"
