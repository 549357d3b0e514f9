# scripts/rxe-place: on which CPU rxe's work items run, for krping_npu
# beside perftest, same boot.  From 6.4 rxe does its work in items of an
# unbound workqueue (do_work); the client busy-polls CPU 0, the server
# sits on CPU 1.  An item the scheduler places on CPU 0 waits for the
# poll to yield.  For each run: its figure, the do_work items that ran on
# each CPU, and the switches to a kworker there ("KPPLACE" lines).
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

r=0
while [ $r -lt "$REPS" ]; do
	ours rlat 64 2000 ""; theirs ib_read_lat 64 2000 t_typical ""; ours rlat,events 64 2000 ""
	ours wlat 64 2000 ""; theirs ib_write_lat 64 2000 t_typical ""
	ours slat 64 2000 ""; theirs ib_send_lat 64 2000 t_typical ""
	ours bw,read 65536 500 ",txdepth=64"; theirs ib_read_bw 65536 500 BW_average "-t 64"
	r=$((r + 1))
done
