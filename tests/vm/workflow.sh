# VM tests of the regression workflow (issue 4): size sweeps in one
# connection, duration runs with progress reports, JSON results.
# Each JSON line is echoed as "KPJSON <line>" for the host to parse.
. /lib/kp/lib.sh
cp /root/kpwrite /usr/bin/kpwrite
A=192.0.2.1
PORT=9300

t_setup() {
	kp_rxe_up || { kp_why "rxe0 did not come up"; return 1; }
	kp_peer_load || { kp_why "insmod npu_peer_mem"; return 1; }
	insmod $KP/krping_npu.ko || { kp_why "insmod krping_npu"; return 1; }
	[ "$(stat -c %a /proc/krping_npu_json)" = 400 ] ||
		{ kp_why "/proc/krping_npu_json is not 0400"; return 1; }
}
kp_test setup t_setup

# kp_json ID: the JSON lines of test ID; they also go to the console as
# "KPJSON <line>" for the host to parse
kp_json() {
	grep "^{\"id\": $1, " /proc/krping_npu_json > /tmp/json.$1
	sed 's/^/KPJSON /' /tmp/json.$1 > /dev/console
	cat /tmp/json.$1
}

# kp_jnum LINE KEY: the number after "KEY": in a JSON line
kp_jnum() {
	echo "$1" | sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p"
}

# a sweep: one result line and one JSON object per size, in order
t_sweep() {
	mode=$1 sizes=$2 want=$3 count=$4 extra=$5
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT$extra" "addr=$A,port=$PORT,$mode,sizes=$sizes,count=$count$extra"
	case "$SRV $CLI" in *errno*) kp_why "srv=$SRV cli=$CLI"; return 1 ;; esac
	kp_res $CID > /tmp/res
	[ "$(wc -l < /tmp/res)" = "$(echo $want | wc -w)" ] ||
		{ kp_why "$(wc -l < /tmp/res) results for sizes $want: $(cat /tmp/res)"; return 1; }
	kp_json $CID > /tmp/json
	[ "$(wc -l < /tmp/json)" = "$(echo $want | wc -w)" ] ||
		{ kp_why "$(wc -l < /tmp/json) JSON objects for sizes $want"; return 1; }
	n=0
	for size in $want; do
		n=$((n + 1))
		r=$(sed -n "${n}p" /tmp/res)
		j=$(sed -n "${n}p" /tmp/json)
		if [ "$mode" = bw ]; then
			kp_check_bw "$r" "$size" "$count" || return 1
			[ "$(kp_jnum "$j" BW_average)" = "$(kp_num "$r" 'BW_average[MiB/sec]')" ] ||
				{ kp_why "JSON and text differ: $j / $r"; return 1; }
		else
			kp_check_lat "$r" "$mode" "$size" "$count" || return 1
			[ "$(kp_jnum "$j" t_typical)" = "$(kp_num "$r" 't_typical[usec]')" ] ||
				{ kp_why "JSON and text differ: $j / $r"; return 1; }
		fi
		[ "$(kp_jnum "$j" MsgSize)" = "$size" ] && [ "$(kp_jnum "$j" n_iterations)" = "$count" ] ||
			{ kp_why "JSON object $n: $j"; return 1; }
		case "$j" in *"\"test\": \"$mode\""*"\"kernel\": \"$(uname -r)\""*) ;;
		*) kp_why "JSON object $n lacks test or kernel: $j"; return 1 ;; esac
	done
	[ "$(kp_col $CID 6)" = done ] && [ "$(kp_col $SID 6)" = done ] ||
		{ kp_why "states: $(kp_rec $SID) / $(kp_rec $CID)"; return 1; }
}
kp_test sweep-wlat t_sweep wlat 64-4096 "64 128 256 512 1024 2048 4096" 200 ""
kp_test sweep-bw t_sweep bw 1024:16384:262144 "1024 16384 262144" 200 ""
kp_test sweep-rlat-npu t_sweep rlat 4096-65536 "4096 8192 16384 32768 65536" 100 ",mem=npu"

# a duration run stops on time (+-20%), reports progress in dmesg and
# /proc while it runs, and ends with one result
t_duration() {
	mode=$1 secs=$2
	PORT=$((PORT + 1))
	base=$(kp_last_id)
	kpwrite "server,addr=$A,port=$PORT" > /tmp/srv.out &
	sp=$!
	sleep 0.5
	t0=$(now_ms)
	kpwrite "client,addr=$A,port=$PORT,$mode,duration=$secs,progress=1" > /tmp/cli.out &
	cp=$!
	sleep 2
	CID=$(kp_new_id "$base" client)
	mid=$(grep "^$CID progress: " /proc/krping_npu)
	wait $cp
	dt=$(($(now_ms) - t0))
	wait $sp
	CLI=$(cat /tmp/cli.out) SRV=$(cat /tmp/srv.out)
	case "$SRV $CLI" in *errno*) kp_why "srv=$SRV cli=$CLI"; return 1 ;; esac
	[ $dt -ge $((secs * 800)) ] && [ $dt -le $((secs * 1200)) ] ||
		{ kp_why "a $secs s run took $dt ms"; return 1; }
	[ -n "$mid" ] || { kp_why "no progress line in /proc at 2 s"; return 1; }
	case "$mid" in "$CID progress: $mode #bytes=64 iterations="*" errors=0") ;;
	*) kp_why "progress line: $mid"; return 1 ;; esac
	dmesg | grep "krping_npu $CID: progress: " > /tmp/prog
	np=$(wc -l < /tmp/prog)
	[ "$np" -ge 2 ] || { kp_why "$np progress lines in dmesg"; return 1; }
	kp_log "duration $mode ${secs}s: $dt ms, $np progress lines, e.g. $(tail -1 /tmp/prog)"
	r=$(kp_res $CID)
	[ "$(kp_res $CID | wc -l)" = 1 ] || { kp_why "results: $r"; return 1; }
	iters=$(kp_num "$r" '#iterations')
	if [ "$mode" = bw ]; then kp_check_bw "$r" 64 "$iters" || return 1
	else kp_check_lat "$r" "$mode" 64 "$iters" || return 1; fi
	[ "$iters" -gt 100 ] || { kp_why "only $iters iterations"; return 1; }
	grep -q "progress:" /proc/krping_npu && { kp_why "progress line left after the end"; return 1; }
	j=$(kp_json $CID)
	[ "$(kp_jnum "$j" duration)" = "$secs" ] && [ "$(kp_jnum "$j" n_iterations)" = "$iters" ] ||
		{ kp_why "JSON: $j"; return 1; }
}
kp_test duration-bw t_duration bw 4
kp_test duration-wlat t_duration wlat 3
kp_test duration-rlat t_duration rlat 3

# a sweep of duration runs: one result per size, each about a second
t_duration_sweep() {
	PORT=$((PORT + 1))
	t0=$(now_ms)
	kp_pair "addr=$A,port=$PORT,mem=npu" "addr=$A,port=$PORT,wlat,sizes=64:65536,duration=1,mem=npu"
	dt=$(($(now_ms) - t0))
	case "$SRV $CLI" in *errno*) kp_why "srv=$SRV cli=$CLI"; return 1 ;; esac
	[ "$(kp_res $CID | wc -l)" = 2 ] || { kp_why "results: $(kp_res $CID)"; return 1; }
	[ "$(kp_res $SID)" = "wlat served #bytes=65536 #iterations=$(kp_res $CID | tail -1 | sed 's/.*#iterations=\([0-9]*\).*/\1/')" ] ||
		{ kp_why "server: $(kp_res $SID) client: $(kp_res $CID)"; return 1; }
	[ $dt -ge 1600 ] && [ $dt -le 4000 ] || { kp_why "2 x 1 s took $dt ms"; return 1; }
	kp_json $CID > /dev/null
}
kp_test duration-sweep-npu t_duration_sweep

t_end() {
	[ "$(tail -1 /proc/krping_npu)" = "live tests=0 cm_ids=0 qps=0 buffers=0" ] ||
		{ kp_why "left: $(tail -1 /proc/krping_npu)"; return 1; }
	rmmod krping_npu || { kp_why "rmmod krping_npu"; return 1; }
	[ ! -e /proc/krping_npu_json ] || { kp_why "/proc/krping_npu_json left"; return 1; }
	rmmod npu_peer_mem || { kp_why "rmmod npu_peer_mem"; return 1; }
}
kp_test end t_end
