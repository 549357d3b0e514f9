# scripts/rxe-place: on which CPU rxe's work items run, for krping_npu
# beside perftest, same boot.  From 6.4 rxe does its work in items of an
# unbound workqueue (do_work); the client busy-polls CPU 0, the server
# sits on CPU 1.  An item the scheduler places on CPU 0 waits for the
# poll to yield.  For each run: its figure, the do_work items that ran on
# each CPU, and the switches to a kworker there ("KPPLACE" lines).
# With STREAMS (KP_PLACE_STREAMS): 8 s streams of SIZE instead, each
# split over 2 s by vCPU, kind of task and rxe task ("KPPLACE-SPLIT").
. /lib/kp/lib.sh
cp /root/kpwrite /usr/bin/kpwrite
. /root/rxe-place.env
A=192.0.2.1
PORT=9800
export KP_SRV_PIN="taskset 2" KP_CLI_PIN="taskset 1"

kp_rxe_up || exit 1
insmod $KP/krping_npu.ko || exit 1
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
[ -e $T/events/workqueue/workqueue_execute_start/enable ] || { echo "KPPLACE-ERR no tracefs"; exit 1; }
echo 65536 > $T/buffer_size_kb
c=/sys/devices/system/cpu
echo "KPPLACE env kernel=$(uname -r) llc_cpu0=$(cat $c/cpu0/cache/index3/shared_cpu_list 2>/dev/null) affinity_scope=$(cat /sys/module/workqueue/parameters/default_affinity_scope 2>/dev/null) unbound_cpumask=$(cat /sys/devices/virtual/workqueue/cpumask 2>/dev/null)"
for e in sched/sched_switch workqueue/workqueue_execute_start; do echo 1 > $T/events/$e/enable; done

# place TOOL FIGURE: the trace of one run, summed by CPU
place() {
	awk -v tool="$1" -v fig="$2" '/^#/ { next }
	{ cpu = -1; for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) { cpu = substr($i, 2, length($i) - 2) + 0; break } }
	/LOST [0-9]+ EVENTS/ { v = $0; sub(/.*LOST /, "", v); lost += v + 0; next }
	/workqueue_execute_start/ && / function do_work( \[rdma_rxe\])?$/ { w[cpu]++ }
	/sched_switch/ && /next_comm=kworker/ { k[cpu]++ }
	END { printf "KPPLACE %s %s do_work_cpu0=%d do_work_cpu1=%d to_kworker_cpu0=%d to_kworker_cpu1=%d lost_events=%d\n",
		tool, fig, w[0], w[1], k[0], k[1], lost }' $T/trace
}
trace_on() { echo > $T/trace; echo 1 > $T/tracing_on; }

# ours MODE SIZE N ARGS; theirs TOOL SIZE N FIELD ARGS: each trace window
# opens once the server listens and closes when the client is done
ours() {
	PORT=$((PORT + 1))
	kp_serve "server,addr=$A,port=$PORT"
	trace_on
	taskset 1 kpwrite "client,addr=$A,port=$PORT,$1,size=$2,count=$3$4" > /dev/null
	echo 0 > $T/tracing_on
	wait $spid
	CID=$(kp_new_id "$base" client)
	res=$(kp_res $CID)
	case $1 in bw*) f="BW_average=$(kp_num "$res" 'BW_average[MiB/sec]')" ;;
	*) f="t_typical=$(kp_num "$res" 't_typical[usec]') yields=$(kp_num "$res" yields)" ;; esac
	place "krping_npu-$1-$2" "$f"
}
theirs() {
	PORT=$((PORT + 1))
	taskset 2 $1 -d rxe0 -x 1 -p $PORT -n $3 -s $2 $5 > /tmp/pt-srv.out 2>&1 &
	sleep 1
	trace_on
	taskset 1 timeout 120 $1 -d rxe0 -x 1 -p $PORT -n $3 -s $2 $5 127.0.0.1 > /tmp/pt-cli.out 2>&1
	echo 0 > $T/tracing_on
	# a server whose client failed would wait for ever
	kill $! 2>/dev/null
	wait
	place "$1-$2" "$4=$(awk -v s=$2 -v col=$([ $4 = BW_average ] && echo 4 || echo 5) '$1 == s && NF >= 5 { print $col; exit }' /tmp/pt-cli.out)"
}

# The split of a stream's 2 s (STREAMS): the events of every switch,
# wake-up and rxe work item, summed per vCPU by awk in the VM.
split_on() {
	echo 0 > $T/tracing_on
	echo global > $T/trace_clock
	for e in sched/sched_wakeup workqueue/workqueue_queue_work workqueue/workqueue_execute_end; do
		echo 1 > $T/events/$e/enable
	done
	# which of a QP's two tasks an item is: the function it calls
	printf 'rxe_sender\nrxe_receiver\n' > $T/set_ftrace_filter 2>/dev/null &&
		echo function > $T/current_tracer ||
		echo "KPPLACE-MARK no rxe_sender/rxe_receiver to trace: tasks unnamed"
}
HW=/sys/class/infiniband/rxe0/ports/1/hw_counters
hw() { for f in $HW/*; do printf '%s=%s ' "${f##*/}" "$(cat "$f")"; done; }
# hwd "A" "B": the counters that moved from snapshot A to B
hwd() {
	echo "$1 $2" | awk '{ n = NF / 2; for (i = 1; i <= n; i++) { split($i, a, "="); split($(i + n), b, "=")
		if (b[2] != a[2]) printf " hw_%s=%d", a[1], b[2] - a[2] } }'
}
split_win() {
	h0=$(hw)
	echo > $T/trace
	echo 1 > $T/tracing_on
	echo "KPPLACE-MARK start $1"
	sleep 2
	echo 0 > $T/tracing_on
	echo "KPPLACE-MARK stop $1"
	h1=$(hw)
}
# split_sum: per vCPU, the share of the window each kind of task ran
# (tool: either tool's client or server; kworker; idle; other), the
# kworkers' wake-up waits there (count, ms); then rxe's tasks (a QP's
# send or receive task: one work struct each), busiest first, with the
# items each ran and its share of each vCPU (an item's time from its start
# to its end there: voluntary preemption switches no other task in between),
# and the vCPU that queued them
split_sum() {
	awk '
	function kind(comm) {
		if (comm ~ /^kworker/) return "kworker"
		if (comm ~ /^swapper/) return "idle"
		if (comm ~ /^(kpwrite|ib_)/) return "tool"
		return "other"
	}
	function field(name,	v) { v = $0; if (!sub(".*" name "=", "", v)) return ""; sub(/ .*/, "", v); return v }
	function work(	v) { v = $0; sub(/.*work struct[= ]/, "", v); sub(/[: ].*/, "", v); if (!(v in id)) { id[v] = ++nt; tot[nt] = 0 } return id[v] }
	/^#/ { next }
	{
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) break
		if (i > NF) next
		ts = $i; sub(/:$/, "", ts); ts += 0
		if (t0 == "") t0 = ts
		t1 = ts
		cpu = 0
		for (j = 1; j < i; j++) if ($j ~ /^\[[0-9]+\]$/) { cpu = substr($j, 2, length($j) - 2) + 0; break }
		what = $(i + 1)
		if (what == "sched_switch:") {
			if (cpu in last) run[kind(field("prev_comm")), cpu] += ts - last[cpu]
			last[cpu] = ts
			np = field("next_pid")
			if (np in woke) { wait[cpu] += ts - woke[np]; waits[cpu]++; delete woke[np] }
		} else if (what == "sched_wakeup:") {
			p = field("pid")
			if (field("comm") ~ /^kworker/ && !(p in woke)) woke[p] = ts
		} else if (what == "workqueue_queue_work:" && / function=do_work /) {
			w = work(); queued[w, cpu]++; qcpu[w] = cpu
		} else if (what == "workqueue_execute_start:" && / function do_work/) {
			w = work(); cur[cpu] = w; start[cpu] = ts; items[w, cpu]++
			# rxe queues a task only when idle: each item has one queueing
			if (w in qcpu) { moved[w, qcpu[w], cpu]++; delete qcpu[w] }
		} else if ((what == "rxe_sender" || what == "rxe_receiver") && (cpu in cur)) {
			fn[cur[cpu], what]++
		} else if (what == "workqueue_execute_end:" && / function do_work/) {
			# an item already running when the window opened ran from then
			if (cpu in cur) { w = cur[cpu]; b = start[cpu] } else if (!(cpu in ended)) { w = work(); b = t0 } else next
			busy[w, cpu] += ts - b; tot[w] += ts - b; delete cur[cpu]; ended[cpu] = 1
		}
	}
	END {
		# and one still running when it closed, up to then
		for (c in cur) { busy[cur[c], c] += t1 - start[c]; tot[cur[c]] += t1 - start[c] }
		span = t1 - t0; if (span <= 0) span = 1
		line = sprintf("span_s=%.2f", span)
		for (c = 0; c <= 1; c++)
			line = line sprintf(" cpu%d_tool=%.0f%% cpu%d_kworker=%.0f%% cpu%d_idle=%.0f%% cpu%d_other=%.0f%% cpu%d_kworker_waits=%d/%.0fms",
				c, 100 * run["tool", c] / span, c, 100 * run["kworker", c] / span, c, 100 * run["idle", c] / span,
				c, 100 * run["other", c] / span, c, waits[c], 1000 * wait[c])
		# rxe tasks, busiest first (the two that move the data)
		for (r = 1; r <= 2; r++) {
			best = 0
			for (w = 1; w <= nt; w++) if (!(w in done) && (!best || tot[w] > tot[best])) best = w
			if (!best) break
			done[best] = 1
			name = fn[best, "rxe_sender"] > fn[best, "rxe_receiver"] ? "send" : fn[best, "rxe_receiver"] ? "recv" : "unnamed"
			line = line sprintf(" task%d=%s", r, name)
			for (c = 0; c <= 1; c++)
				line = line sprintf(" task%d_cpu%d=%d/%.0f%% task%d_queued_cpu%d=%d", r, c, items[best, c], 100 * busy[best, c] / span, r, c, queued[best, c])
			# items queued on one vCPU that ran on which
			line = line sprintf(" task%d_queued0_ran0,1=%d,%d task%d_queued1_ran0,1=%d,%d", r, moved[best, 0, 0], moved[best, 0, 1], r, moved[best, 1, 0], moved[best, 1, 1])
		}
		print line
	}' $T/trace
}
split_ours() {
	PORT=$((PORT + 1))
	kp_serve "server,addr=$A,port=$PORT,inline=0"
	taskset 1 kpwrite "client,addr=$A,port=$PORT,$1,size=$SIZE,duration=8,txdepth=64,inline=0,cq_mod=1,progress=1" > /tmp/win.out 2>&1 &
	cp=$!
	sleep 3
	split_win "krping_npu-$1 $2"
	wait $cp
	wait $spid
	id=$(kp_new_id "$base" client)
	# the progress reports' mode name: bw or bw_read
	pm=$(echo "$1" | tr , _)
	echo "KPPLACE-SPLIT krping_npu-$1 rep=$2 MiB/s_2-6s=$(kp_bw_span "$id" "$SIZE" 2 6 "$pm") MiB/s_3-5s=$(kp_bw_span "$id" "$SIZE" 3 5 "$pm") $(split_sum)$(hwd "$h0" "$h1")"
}
split_theirs() {
	PORT=$((PORT + 1))
	timeout 60 taskset 2 $1 -d rxe0 -x 1 -p $PORT -D 8 -s "$SIZE" -t 64 -Q 1 > /tmp/pt-srv.out 2>&1 &
	sp=$!
	sleep 1
	timeout 60 taskset 1 $1 -d rxe0 -x 1 -p $PORT -D 8 -s "$SIZE" -t 64 -Q 1 127.0.0.1 > /tmp/pt-cli.out 2>&1 &
	cp=$!
	sleep 4
	split_win "$1 $3"
	wait $cp
	wait $sp
	echo "KPPLACE-SPLIT $1 rep=$3 MiB/s_2-6s=$(awk -v s="$SIZE" '$1 == s && NF >= 5 { print $4; exit }' /tmp/pt-cli.out) $(split_sum)$(hwd "$h0" "$h1")"
}

# streams: per run, MODE's stream (ours, then its perftest twin) for
# 8 s, as bench's bw-win; a 2 s trace from 3 s into ours and 4 s into
# perftest's client (past its start-up and 2 s margin)
if [ -n "${STREAMS:-}" ]; then
	split_on
	r=0
	while [ $r -lt "$REPS" ]; do
		for m in $STREAMS; do
			split_ours "$m" $r
			case $m in bw,read) split_theirs ib_read_bw "$m" $r ;; *) split_theirs ib_write_bw "$m" $r ;; esac
		done
		r=$((r + 1))
	done
	exit 0
fi

r=0
while [ $r -lt "$REPS" ]; do
	ours rlat 64 2000 ""; theirs ib_read_lat 64 2000 t_typical ""; ours rlat,events 64 2000 ""
	ours wlat 64 2000 ""; theirs ib_write_lat 64 2000 t_typical ""
	ours slat 64 2000 ""; theirs ib_send_lat 64 2000 t_typical ""
	ours bw,read 65536 500 ",txdepth=64"; theirs ib_read_bw 65536 500 BW_average "-t 64"
	r=$((r + 1))
done
