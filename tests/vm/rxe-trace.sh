# scripts/rxe-trace: where a 64 B write round trip goes in rxe, for
# krping_npu's wlat (plain and imm) and for ib_write_lat, same boot.  The
# function tracer on rdma_rxe's functions, and the scheduler and softirq
# events, over N round trips of each; prints "KPTRACE tool fn=calls ..."
# lines, every count divided by the round trips (scripts/rxe-trace makes
# the table).  The tracer slows what it traces: read the counts, not the
# times.
. /lib/kp/lib.sh
cp /root/kpwrite /usr/bin/kpwrite
. /root/rxe-trace.env
A=192.0.2.1
PORT=9700
N=${KP_TRACE_N:-400}
export KP_SRV_PIN="taskset 2" KP_CLI_PIN="taskset 1"

kp_rxe_up || exit 1
insmod $KP/krping_npu.ko || exit 1
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
[ -w $T/set_ftrace_filter ] || { echo "KPTRACE-ERR no tracefs"; exit 1; }
echo 32768 > $T/buffer_size_kb
echo ':mod:rdma_rxe' > $T/set_ftrace_filter || { echo "KPTRACE-ERR no rdma_rxe functions to trace"; exit 1; }
echo function > $T/current_tracer
for e in sched/sched_switch sched/sched_wakeup irq/softirq_raise irq/softirq_entry \
	 workqueue/workqueue_queue_work; do
	[ -e $T/events/$e/enable ] && echo 1 > $T/events/$e/enable
done
echo 0 > $T/tracing_on

# count TOOL: what the trace holds, per round trip, on one line
count() {
	awk -v tool="$1" -v n="$N" '
	/^#/ { next }
	{
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) break
		if (i > NF) next
		what = $(i + 1)
		if (what == "sched_switch:") { c["switches"]++; next }
		if (what == "sched_wakeup:") { c["wakeups"]++; next }
		if (what == "softirq_raise:" || what == "softirq_entry:") {
			v = $0; sub(/.*action=/, "", v); sub(/[^A-Z_].*/, "", v)
			c[(what == "softirq_raise:" ? "raise_" : "run_") v]++; next
		}
		if (what == "workqueue_queue_work:") { c["queue_work"]++; next }
		sub(/\(.*/, "", what)
		c[what]++
	}
	END {
		line = "KPTRACE " tool " round_trips=" n
		for (k in c) if (c[k] / n >= 0.05) line = line " " k "=" sprintf("%.2f", c[k] / n)
		print line
	}' $T/trace
}

# Both tools' windows open once the server listens and close when the
# client is done: each holds the client's connection and its teardown,
# never the server's start-up.
ours() {
	PORT=$((PORT + 1))
	echo > $T/trace
	kp_serve "server,addr=$A,port=$PORT"
	echo 1 > $T/tracing_on
	taskset 1 kpwrite "client,addr=$A,port=$PORT,$1,size=64,count=$N,warmup=1" > /dev/null
	echo 0 > $T/tracing_on
	wait $spid
	CID=$(kp_new_id "$base" client)
	echo "KPTRACE-RES krping_npu-$1 $(kp_res $CID | cut -d' ' -f2-)"
	count "krping_npu-$1"
}

theirs() {
	PORT=$((PORT + 1))
	echo > $T/trace
	taskset 2 ib_write_lat -d rxe0 -x 1 -p $PORT -n "$N" -s 64 > /tmp/pt-srv.out 2>&1 &
	sp=$!
	sleep 1
	echo 1 > $T/tracing_on
	taskset 1 ib_write_lat -d rxe0 -x 1 -p $PORT -n "$N" -s 64 127.0.0.1 > /tmp/pt-cli.out 2>&1
	echo 0 > $T/tracing_on
	wait $sp
	echo "KPTRACE-RES ib_write_lat $(awk '$1 == 64 && NF >= 5' /tmp/pt-cli.out)"
	count ib_write_lat
}

ours wlat
ours wlat,imm
theirs
echo nop > $T/current_tracer
rmmod krping_npu
