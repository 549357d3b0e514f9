#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host test of scripts/rxe-place's stream split (tests/vm/rxe-place.sh,
# split_sum()): a synthetic 10 ms trace of the cases it must get right
# (an item cut by either edge of the window, a task named by the function
# it calls, items queued on one vCPU and run on the other), through the
# host's awk and busybox's (the VM's).  Prints "PASS/FAIL/SKIP name".
set -uo pipefail
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS rxe-place-$1"; }
ko() { echo "FAIL rxe-place-$1: $2"; }

sed -n '/^split_sum() {/,/^}/p' tests/vm/rxe-place.sh > "$t/fn.sh"
grep -q "^	awk '" "$t/fn.sh" || { ko extract "no split_sum() with an awk in tests/vm/rxe-place.sh"; exit 0; }
ev() { printf '%16s-%-5s [%03d] d..2.   %s: %s\n' "$@"; }
A=00000000aaaa0001 B=00000000aaaa0002
{
	echo "# tracer: function"
	# CPU 0: the client hands the CPU to a kworker (the first switch on
	# a vCPU counts no run), which runs B (queued on CPU 1) for 100 us
	ev kpwrite 200 0 100.000000 "sched_switch: prev_comm=kpwrite prev_pid=200 prev_prio=120 prev_state=R ==> next_comm=kworker/u4:1 next_pid=45 next_prio=120"
	# CPU 1: A's item ran when the window opened: 100 us of it are in
	ev kworker/u4:2 46 1 100.000100 "workqueue_execute_end: work struct $A: function do_work"
	ev kworker/u4:2 46 1 100.000200 "workqueue_execute_start: work struct $A: function do_work"
	ev kworker/u4:2 46 1 100.000210 "rxe_sender <-do_task"
	ev kworker/u4:2 46 1 100.000300 "workqueue_queue_work: work struct=$B function=do_work workqueue=rxe_wq req_cpu=2 cpu=1"
	ev kworker/u4:1 45 0 100.000400 "workqueue_execute_start: work struct $B: function do_work"
	ev kworker/u4:1 45 0 100.000410 "rxe_receiver <-do_task"
	ev kworker/u4:1 45 0 100.000500 "workqueue_execute_end: work struct $B: function do_work"
	ev kworker/u4:1 45 0 100.000600 "sched_switch: prev_comm=kworker/u4:1 prev_pid=45 prev_prio=120 prev_state=S ==> next_comm=kpwrite next_pid=200 next_prio=120"
	# B again, queued on CPU 0 by the client: its kworker waits 100 us
	ev kpwrite 200 0 100.001000 "workqueue_queue_work: work struct=$B function=do_work workqueue=rxe_wq req_cpu=2 cpu=0"
	ev kpwrite 200 0 100.002000 "sched_wakeup: comm=kworker/u4:1 pid=45 prio=120 target_cpu=000"
	ev kpwrite 200 0 100.002100 "sched_switch: prev_comm=kpwrite prev_pid=200 prev_prio=120 prev_state=S ==> next_comm=kworker/u4:1 next_pid=45 next_prio=120"
	ev kworker/u4:1 45 0 100.002200 "workqueue_execute_start: work struct $B: function do_work"
	ev kworker/u4:1 45 0 100.002300 "workqueue_execute_end: work struct $B: function do_work"
	ev kworker/u4:1 45 0 100.002400 "sched_switch: prev_comm=kworker/u4:1 prev_pid=45 prev_prio=120 prev_state=I ==> next_comm=swapper/0 next_pid=0 next_prio=120"
	# A's item still runs on CPU 1 when the window closes: 9800 us more
	ev '<idle>' 0 0 100.010000 "sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kpwrite next_pid=200 next_prio=120"
} > "$t/trace"

# A (the sender) is the busier: 9900 us of 10000 on CPU 1; B (the
# receiver) 200 us on CPU 0, queued once on each vCPU, both run on CPU 0.
# CPU 0: the client 1500 us, kworkers 600 + 300, idle 7600; one wait.
want="span_s=0.01 cpu0_tool=15% cpu0_kworker=9% cpu0_idle=76% cpu0_other=0% cpu0_kworker_waits=1/0ms"
want="$want cpu1_tool=0% cpu1_kworker=0% cpu1_idle=0% cpu1_other=0% cpu1_kworker_waits=0/0ms"
want="$want task1=send task1_cpu0=0/0% task1_queued_cpu0=0 task1_cpu1=1/99% task1_queued_cpu1=0"
want="$want task1_queued0_ran0,1=0,0 task1_queued1_ran0,1=0,0"
want="$want task2=recv task2_cpu0=2/2% task2_queued_cpu0=1 task2_cpu1=0/0% task2_queued_cpu1=1"
want="$want task2_queued0_ran0,1=1,0 task2_queued1_ran0,1=1,0"

check() {	# NAME AWK
	local got
	got=$(T="$t"; . "$t/fn.sh"; [ "$2" = awk ] || awk() { busybox awk "$@"; }; split_sum)
	[ "$got" = "$want" ] && ok "$1" || ko "$1" "got: $got"
}
check split-awk awk
if command -v busybox >/dev/null && busybox awk 'BEGIN { exit 0 }' 2>/dev/null; then
	check split-busybox busybox
else
	echo "SKIP rxe-place-split-busybox: no busybox on this host"
fi
