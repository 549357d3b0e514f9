# scripts/probe-cost: bw with the server's probes on (probe=1000, the
# default) and off (probe=0), alternating, in one boot.  The server waits
# for the client's FIN the whole stream, so with probes on it sends one a
# second.  Prints "KPPROBE on|off rep BW_average probes" lines.
. /lib/kp/lib.sh
cp /root/kpwrite /usr/bin/kpwrite
. /root/probe.env
A=192.0.2.1
PORT=9700
export KP_SRV_PIN="taskset 2" KP_CLI_PIN="taskset 1"

kp_rxe_up || exit 1
insmod $KP/krping_npu.ko || exit 1
echo "KPPROBE env kernel=$(uname -r) reps=$REPS duration=$DUR size=$SIZE"
r=0
while [ $r -lt "$REPS" ]; do
	for p in 1000 0; do
		PORT=$((PORT + 1))
		dmesg -c > /dev/null
		kp_pair "addr=$A,port=$PORT,probe=$p" \
			"addr=$A,port=$PORT,bw,size=$SIZE,duration=$DUR,txdepth=64"
		bw=$(kp_num "$(kp_res $CID)" 'BW_average[MiB/sec]')
		n=$(dmesg | sed -n 's/.*connection 0: \([0-9]*\) probes answered.*/\1/p' | tail -1)
		[ "$p" = 0 ] && on=off || on=on
		echo "KPPROBE $on $r ${bw:-none} ${n:-0} srv=$SRV cli=$CLI"
	done
	r=$((r + 1))
done
