#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host test of scripts/rxe-trace's count (tests/vm/rxe-trace.sh, count()):
# a synthetic trace of the cases its times and waits must get right (a
# running task's wake-up is no wait), through the host's awk and busybox's
# (the VM's).  Prints "PASS/FAIL/SKIP name".
set -uo pipefail
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS rxe-trace-$1"; }
ko() { echo "FAIL rxe-trace-$1: $2"; }

# count() as the VM runs it, out of the script
sed -n '/^count() {/,/^}/p' tests/vm/rxe-trace.sh > "$t/count.sh"
grep -q "^	awk " "$t/count.sh" || { ko extract "no count() with an awk in tests/vm/rxe-trace.sh"; exit 0; }
mkdir "$t/tr"
ev() { printf '%16s-%-5s [%03d] d..2.   %s: %s\n' "$@"; }
{
	echo "# tracer: nop"
	# CPU 0: the client sleeps, idle enters a state and leaves it, a
	# kworker is woken (40 us before it runs), runs 50 us, the client
	# comes back
	ev kpwrite 200 0 100.000100 "sched_switch: prev_comm=kpwrite prev_pid=200 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120"
	ev '<idle>' 0 0 100.000110 "cpu_idle: state=1 cpu_id=0"
	ev '<idle>' 0 0 100.000200 "cpu_idle: state=4294967295 cpu_id=0"
	ev '<idle>' 0 0 100.000210 "sched_wakeup: comm=kworker/u4:1 pid=45 prio=120 target_cpu=000"
	ev '<idle>' 0 0 100.000250 "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kworker/u4:1 next_pid=45 next_prio=120"
	ev kworker/u4:1 45 0 100.000300 "sched_switch: prev_comm=kworker/u4:1 prev_pid=45 prev_prio=120 prev_state=I ==> next_comm=kpwrite next_pid=200 next_prio=120"
	# CPU 1: the server, woken while it runs, is preempted 100 us later
	# and runs again 1 ms on: no wake-up wait, a kworker's 1000 us
	ev kpwrite 300 1 100.001000 "sched_wakeup: comm=kpwrite pid=300 prio=120 target_cpu=001"
	ev kpwrite 300 1 100.001100 "sched_switch: prev_comm=kpwrite prev_pid=300 prev_prio=120 prev_state=R ==> next_comm=kworker/u4:2 next_pid=46 next_prio=120"
	ev kworker/u4:2 46 1 100.002100 "sched_switch: prev_comm=kworker/u4:2 prev_pid=46 prev_prio=120 prev_state=S ==> next_comm=kpwrite next_pid=300 next_prio=120"
	# a perftest client woken on CPU 0, run on CPU 1 20 us later (one
	# global clock), then its system call
	ev kpwrite 200 0 100.003000 "sched_wakeup: comm=ib_write_bw pid=400 prio=120 target_cpu=001"
	ev kpwrite 300 1 100.003020 "sched_switch: prev_comm=kpwrite prev_pid=300 prev_prio=120 prev_state=S ==> next_comm=ib_write_bw next_pid=400 next_prio=120"
	ev ib_write_bw 400 1 100.003030 "sys_enter: NR 1 (3, 7ffd, 18, 0, 0, 0)"
	# a traced function (KP_TRACE_FILTER's) and its caller
	ev ib_write_bw 400 1 100.003040 "read_hpet <-ktime_get"
} > "$t/tr/trace"

# want: KEY VALUE, each exactly ("-": absent).  The first switch on a
# vCPU has no run before it, and a task still running at the end has no
# run_us yet; the server's wake-up while it ran is no wait, so wait_us
# holds the kworker's 40 us and the perftest client's 20 alone
cat > "$t/want" <<'W'
run_us:idle@cpu0 150.0
run_us:kworker@cpu0 50.0
run_us:tool@cpu0 -
run_us:kworker@cpu1 1000.0
run_us:tool@cpu1 920.0
wait_us:kworker@cpu0 40.0
waits:kworker@cpu0 1.0
wait_us:tool@cpu1 20.0
waits:tool@cpu1 1.0
idle_enter@cpu0 1.0
switches 6.0
switches@cpu0 3.0
switches@cpu1 3.0
switch_to:kworker/u4 2.0
wakeups 3.0
wake:kpwrite 1.0
sys:ib_write_bw:1 1.0
read_hpet 1.0
read_hpet<-ktime_get -
W

check() {	# NAME AWK
	local out="$t/out-$1" k v got bad=""
	(T="$t/tr"; . "$t/count.sh"; [ "$2" = awk ] || awk() { busybox awk "$@"; }; count "$out")
	while read -r k v; do
		got=$(awk -v k="$k" '$1 == k { print $2 }' "$out")
		[ "${got:--}" = "$v" ] || bad="$bad $k=${got:-absent}(want $v)"
	done < "$t/want"
	got=$(grep -c '^wait' "$out")
	[ "$got" = 4 ] || bad="$bad $got wait keys (want 4: $(grep '^wait' "$out" | tr '\n' ' '))"
	[ -z "$bad" ] && ok "$1" || ko "$1" "$bad"
}
check times-awk awk
# with KP_TRACE_FILTER a traced function is counted by its caller too
(
	export KP_TRACE_FILTER=read_hpet
	T="$t/tr"; . "$t/count.sh"; count "$t/out-callers"
)
got=$(awk '$1 == "read_hpet<-ktime_get" { print $2 }' "$t/out-callers")
[ "$got" = 1.0 ] && ok callers || ko callers "read_hpet<-ktime_get=${got:-absent} (want 1.0)"
if command -v busybox >/dev/null && busybox awk 'BEGIN { exit 0 }' 2>/dev/null; then
	check times-busybox busybox
else
	echo "SKIP rxe-trace-times-busybox: no busybox on this host"
fi
