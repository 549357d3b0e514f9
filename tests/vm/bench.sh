# make bench: krping_npu beside perftest on the same rxe device, one boot.
# Prints "KPBENCH tool mode size field=value..." lines for scripts/bench.
. /lib/kp/lib.sh
cp /root/kpwrite /usr/bin/kpwrite
. /root/bench.env
A=192.0.2.1
PORT=9500
LAT_N=${KP_BENCH_LAT_N:-3000}
BW_N=${KP_BENCH_BW_N:-2000}
TXD=64
REPS=${KP_BENCH_REPS:-3}
export KP_BENCH_REPS
# server on CPU 1, client on CPU 0, for both tools
export KP_SRV_PIN="taskset 2" KP_CLI_PIN="taskset 1"

kp_rxe_up || exit 1
modprobe crc32_pclmul 2>/dev/null
insmod $KP/krping_npu.ko || exit 1
kp_peer_load || exit 1
echo "KPBENCH env kernel=$(uname -r) npu_hbm=$(st backing0) crc32=$(grep -m1 -A3 '^name *: crc32$' /proc/crypto | sed -n 's/^driver *: //p')"

iters() { case $1 in bw) [ "$2" -ge 65536 ] && echo $((BW_N / 4)) || echo $BW_N ;;
	  *) [ "$2" -ge 65536 ] && echo $((LAT_N / 6)) || echo $LAT_N ;; esac; }

# ours MODE SIZE MEM: krping_npu with both sides' buffers in MEM
ours() {
	mode=$1 size=$2 mem=$3 n=$(iters "$1" "$2")
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT,mem=$mem" \
		"addr=$A,port=$PORT,mem=$mem,$mode,size=$size,count=$n,txdepth=$TXD"
	tool=krping_npu
	[ "$mem" = npu ] && tool=krping_npu-npu
	echo "KPBENCH $tool $mode $size $(kp_res $CID | cut -d' ' -f2-)"
}

# perftest: server in the background, client prints the result row
theirs() {
	tool=$1 mode=$2 size=$3 n=$(iters "$2" "$3") extra=""
	[ "$mode" = bw ] && extra="-t $TXD"
	PORT=$((PORT + 1))
	taskset 2 $tool -d rxe0 -x 1 -p $PORT -n "$n" -s "$size" $extra > /tmp/pt-srv.out 2>&1 &
	sp=$!
	sleep 1
	taskset 1 $tool -d rxe0 -x 1 -p $PORT -n "$n" -s "$size" $extra 127.0.0.1 > /tmp/pt-cli.out 2>&1
	wait $sp
	row=$(awk -v s="$size" '$1 == s && NF >= 5 { print; exit }' /tmp/pt-cli.out)
	if [ -z "$row" ]; then
		echo "KPBENCH-ERR $tool $size: no result row"
		sed 's/^/KPBENCH-ERR   /' /tmp/pt-cli.out | tail -8
		return
	fi
	set -- $row
	if [ "$mode" = bw ]; then
		echo "KPBENCH $tool bw $size #bytes=$1 #iterations=$2 BW_peak[MiB/sec]=$3 BW_average[MiB/sec]=$4 MsgRate[Mpps]=$5"
	else
		echo "KPBENCH $tool $mode $size #bytes=$1 #iterations=$2 t_min[usec]=$3 t_max[usec]=$4 t_typical[usec]=$5 t_avg[usec]=$6 t_stdev[usec]=$7 99%[usec]=$8 99.9%[usec]=$9"
	fi
}

rep=0
while [ $rep -lt "$REPS" ]; do
	for size in 64 65536; do
		ours wlat $size host; ours wlat $size npu; theirs ib_write_lat wlat $size
		theirs ib_read_lat rlat $size; ours rlat $size npu; ours rlat $size host
		ours bw $size npu; ours bw $size host; theirs ib_write_bw bw $size
	done
	rep=$((rep + 1))
done
rmmod krping_npu
