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
# inline bytes, both tools (perftest -I): 0 by default, as perftest has it
# on rxe, a device it does not recognise (it then disables -I, and says so)
INL=${KP_BENCH_INLINE:-0}
# completion moderation of the bandwidth streams, both tools (perftest
# -Q, our cq_mod=): KP_BENCH_CQ_MOD, or what ib_write_bw picks by itself,
# 100 (at most -t) up to 8 KiB, 1 above, given to both explicitly
cqm() {
	if [ -n "$V_CQM" ]; then echo "$V_CQM"
	elif [ -n "${KP_BENCH_CQ_MOD:-}" ]; then echo "$KP_BENCH_CQ_MOD"
	else kp_pt_cqm "$1" $TXD; fi
}
# KP_BENCH_PTPOST=1: every perftest command under ptpost.so
# (tests/vm/ptpost.c), which times the write()s its verbs provider makes:
# rxe's doorbell, one a post, a system call ours does not make
PTPRE=
[ "${KP_BENCH_PTPOST:-0}" = 0 ] || PTPRE="env LD_PRELOAD=/root/ptpost.so"
# FILE SIDE: ptpost's figures of one side's run, " SIDE_wCMD=calls/mean/
# median/min" (ns) a uverbs command (28 post_send, 29 post_recv), then
# the cost of its counter, a bare system call's median/min and a failed
# post's (SIDE_probe_ns; "errN" where the probe did not fail as meant)
ptpost_fields() {
	[ -n "$PTPRE" ] || return 0
	awk -v p="$2" '/^KPPOST syscall_ns_med=/ { split($2, a, "="); split($3, b, "="); sys = a[2] "/" b[2]; next }
		/^KPPOST probe_ns_med=/ { split($2, a, "="); split($3, b, "="); prb = a[2] "/" b[2]; next }
		/^KPPOST probe_err=/ { split($2, a, "="); prb = "err" a[2]; next }
		/^KPPOST / { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		printf " %s_w%s=%s/%s/%s/%s", p, f["cmd"], f["calls"], f["ns_avg"], f["ns_med"], f["ns_min"]; pair = f["tsc_pair_ns"] }
		END { if (pair != "") printf " %s_tsc_pair_ns=%s", p, pair; if (sys != "") printf " %s_syscall_ns=%s", p, sys
		if (prb != "") printf " %s_probe_ns=%s", p, prb }' "$1"
}
REPS=${KP_BENCH_REPS:-3}
# the bound of a perftest run, either side (ours bound their own waits);
# a latency run takes about a second (host_join finds most under one),
# and Debian's ib_send_lat -e hangs on 6.12 in every run: 30 s, not 120
PT_TMO=120 PT_LAT_TMO=30
# a share of the table (scripts/bench's KP_BENCH_SIZES, KP_BENCH_LAT_ONLY)
SIZES=${KP_BENCH_SIZES:-64 4096 65536}
LAT_ONLY=${KP_BENCH_LAT_ONLY:-0}
export KP_BENCH_REPS
# server on CPU 1, client on CPU 0, for both tools
export KP_SRV_PIN="taskset 2" KP_CLI_PIN="busy_run taskset 1"

kp_rxe_up || exit 1
modprobe crc32_pclmul 2>/dev/null
# KP_BENCH_CLOCK: the clock of krping_npu's timed loops; scripts/bench
# gives the counter perftest reads (tsc, cntvct) unless told otherwise
# (auto: the counter only where the kernel trusts it)
insmod $KP/krping_npu.ko clock=${KP_BENCH_CLOCK:-auto} || exit 1
# NPU memory behind a BAR cannot be served to rxe where the RDMA core
# turns a virt-DMA device's addresses into struct pages (6.3 on): there
# the emulated HBM is RAM, as the peer suite's data tests run it
hbm=
[ "$(cat /sys/module/krping_npu/parameters/npu_bar_virt_dma)" = refused ] && hbm=backing=ram
[ -z "$hbm" ] || insmod $KP/npu_sim.ko $hbm || exit 1
kp_peer_load || exit 1
pm=/sys/module/krping_npu/parameters
csf=/sys/devices/system/clocksource/clocksource0/current_clocksource
cs0=$(cat $csf)
# The clocksource can change under a boot: under TCG the watchdog may mark
# the TSC unstable; then each gettimeofday of perftest is a system call.
# Said once a change, with the rep (from 1) at whose end it was seen.
cs_check() {
	cs=$(cat $csf)
	[ "$cs" = "$cs0" ] && return
	# the watchdog's time keeps each boot's line its own in the header
	w=$(dmesg | sed -n "s/^\[ *\([0-9.]*\)\].*\(Marking clocksource '[a-z]*' as unstable\).*/at \1 s: \2/p" | head -n 1)
	echo "KPBENCH env clocksource_changed=$cs in_rep=$1 (${w:-no watchdog message})"
	cs0=$cs
}
echo "KPBENCH env kernel=$(uname -r) irq_time_accounting=$(cat $pm/irq_time_accounting) npu_hbm=$(st backing0) crc32=$(grep -m1 -A3 '^name *: crc32$' /proc/crypto | sed -n 's/^driver *: //p') clock=$(cat $pm/clock) clock_read_ns=$(cat $pm/clock_read_ns) inline=$INL txdepth=$TXD cq_mod=${KP_BENCH_CQ_MOD:-perftest's} clocksource=$cs0 vm_append=$(sed -n 's|.*rdinit=/init *||p' /proc/cmdline | grep . || echo none)"
[ -z "$PTPRE" ] || echo "KPBENCH env ptpost=on"

iters() { case $1 in bw*) [ "$2" -ge 65536 ] && n=$((BW_N / 4)) || n=$BW_N ;;
	  *) [ "$2" -ge 65536 ] && n=$((LAT_N / 6)) || n=$LAT_N ;; esac
	  echo $((n / V_MULT * V_MULT)); }

# variant [LABEL MULT CQM OUR_SERVER OUR_CLIENT PERFTEST]: the ours and
# theirs runs that follow are row MODE-LABEL, with these knobs on each
# side (perftest's on both its commands), iterations a multiple of MULT
# (perftest -l and --recv_post_list want it), and completion moderation
# CQM on both (empty: as cqm chooses); no argument: back to the plain rows
variant() {
	V_LABEL=${1:-} V_MULT=${2:-1} V_CQM=${3:-} V_SRV=${4:-} V_CLI=${5:-} V_PT=${6:-} V_SUM=${7:-}
}
variant

# cpus_busy: "BUSY0 TOTAL0 BUSY1 TOTAL1", CPU 0's and CPU 1's ticks so far
# (busy: all but idle and iowait); busy_pct OLD NEW: each CPU's busy share
# between two snapshots, as "cpu0_busy=P cpu1_busy=P"
cpus_busy() {
	awk '$1 == "cpu0" || $1 == "cpu1" { t = 0; for (i = 2; i <= NF; i++) t += $i
		printf "%d %d ", t - $5 - $6, t } END { print "" }' /proc/stat
}
# busy_run CMD...: CMD, with the snapshots before and after it in
# /tmp/busy0 and /tmp/busy1 (kp_pair runs the client in a subshell)
busy_run() {
	cpus_busy > /tmp/busy0
	mark start
	"$@"
	rc=$?
	mark end
	cpus_busy > /tmp/busy1
	return $rc
}
# mark start|end: where a run's measured part begins and ends, on the
# console (stderr: busy_run's output is captured), for the host's
# share of each vCPU over it (scripts/bench, host_join)
mark() { echo "KPBENCH-MARK $1" >&2; }
busy_pct() {
	echo "$1 $2" | awk '{ printf "cpu0_busy=%.0f cpu1_busy=%.0f", ($6 > $2) ? 100 * ($5 - $1) / ($6 - $2) : 0,
		($8 > $4) ? 100 * ($7 - $3) / ($8 - $4) : 0 }'
}

# ours MODE SIZE MEM [QPS [events]]: krping_npu with both sides' buffers
# in MEM; QPS connections from the writer's thread (count= each, as
# perftest -n); events: sleeping on completion events (row MODE-events)
ours() {
	mode=$1 size=$2 mem=$3 n=$(iters "$1" "$2") m=$1 q=${4:-1} qo= label=$1
	case $mode in bw_read) m=bw,read ;; bw_send) m=bw,send ;; bw_atomic) m=bw,atomic=fadd ;; esac
	[ "$q" -le 1 ] || { qo=",qps=$q"; label=$mode-q$q; }
	[ "${5:-}" != events ] || { qo="$qo,events"; label=$label-events; }
	[ -z "$V_LABEL" ] || label=$label-$V_LABEL
	case $mode in bw*) qo="$qo,cq_mod=$(cqm "$size")" ;; esac
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT,mem=$mem,inline=$INL$V_SRV" \
		"addr=$A,port=$PORT,mem=$mem,$m,size=$size,count=$n,txdepth=$TXD,inline=$INL$qo$V_CLI"
	tool=krping_npu
	[ "$mem" = npu ] && tool=krping_npu-npu
	st=
	case $mode in bw*) ;; *) st="stalls=$(hist $CID "$n" |
		stalls "$(kp_num "$(kp_res $CID)" 't_min[usec]')" "$(rtt_factor $mode)")" ;; esac
	res=$(kp_res $CID | cut -d' ' -f2-)
	[ -z "$V_SUM" ] || res=$(bw_sum "$res" "$(kp_res $SID | cut -d' ' -f2-)")
	echo "KPBENCH $tool $label $size $res $st $(busy_pct "$(cat /tmp/busy0)" "$(cat /tmp/busy1)")"
}

# bw_sum CLIENT SERVER: a duplex run's two results as one, as perftest -b
# prints it: BW_peak, BW_average and MsgRate each the sum of both sides';
# the rest the client's, without its CPU a GiB (one side's CPU over one
# direction's bytes, where perftest's client process runs both; neither
# is a figure to compare, so the row has none); a side with no figure
# leaves the line without one
bw_sum() {
	echo "$1" | awk -v s="$2" 'BEGIN { n = split(s, f, " ")
		for (i = 1; i <= n; i++) if (split(f[i], kv, "=") == 2) v[kv[1]] = kv[2] }
		{ out = ""
		  for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "CPU[s/GiB]") continue
			if (kv[1] ~ /^(BW_peak|BW_average|MsgRate)/) {
				if (!(kv[1] in v)) continue
				$i = sprintf("%s=%.6g", kv[1], kv[2] + v[kv[1]])
			}
			out = out (out == "" ? "" : " ") $i
		  }
		  print out }'
}

# A stall: a round trip 1 ms or more beyond the fastest of its run (a
# round trip that could hold a late wait of krping_npu's), counted alike
# for both tools: whether the rig stalls them alike.  stalls MIN F: of
# "usec, count" lines on stdin (values of 1/F round trips: F is 2 for
# wlat and slat, whose figures are halves), those 1 ms over MIN;
# krping_npu's values are its histogram's bucket middles (within 0.4% of
# their samples), perftest's its samples
stalls() {
	awk -F', ' -v m="$1" -v f="$2" '$1 * f >= m * f + 1000 { n += $2 } $1 != "" { seen = 1 } END { print seen ? n + 0 : "n/a" }'
}
rtt_factor() { case $1 in rlat | alat) echo 1 ;; *) echo 2 ;; esac; }
# hist ID N: test ID's histogram from its JSON, "usec, count" a line; its
# counts must add up to the N round trips, or it says so on the console
# and prints nothing (stalls then reads "n/a", never 0)
hist() {
	h=$(grep "^{\"id\": $1, " /proc/krping_npu_json |
	    sed 's/.*"histogram": \[\[//; s/\]\]}$//; s/\], \[/\n/g')
	if [ "$(echo "$h" | awk -F', ' '{ n += $2 } END { print n + 0 }')" = "$2" ]; then
		echo "$h"
	else
		echo "KPBENCH-ERR krping_npu $1: histogram of $(echo "$h" | wc -l) lines, not $2 round trips" > /dev/console
	fi
}

# softirq work of CPU 0 (the clients' CPU) so far that no task's time
# holds, in seconds, as krping_npu counts its own (kp_stats.c): the run
# time of ksoftirqd/0, and only where the kernel measures softirq time
# apart from tasks (IRQ_TIME_ACCOUNTING) CPU 0's softirq time less
# ksoftirqd/0's ticks, which it holds too; otherwise softirq on the
# client's back is in the client's time already
IRQT=$(cat /sys/module/krping_npu/parameters/irq_time_accounting)
KSI0=$(for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = ksoftirqd/0 ] && echo ${d#/proc/}; done | head -1)
softirq0() {
	awk -v irqt="$IRQT" 'FILENAME ~ /schedstat/ { k = $1 / 1e9; next }
		FILENAME ~ /stat$/ && FNR == 1 && $2 ~ /^\(ksoftirqd/ { kst = $15 / 100; next }
		$1 == "cpu0" { s = $8 / 100 }
		END { printf "%.6f\n", k + ((irqt == "y") ? s - kst : 0) }' \
		/proc/$KSI0/schedstat /proc/$KSI0/stat /proc/stat
}

# perftest: server in the background, client prints the result row; a
# bandwidth client's CPU cost as krping_npu counts its own: the client's
# CPU time (user and system, from the shell's times) plus the softirq
# work of CPU 0 it ran on that no task's time holds (softirq0), per GiB
# moved
theirs() {
	tool=$1 mode=$2 size=$3 n=$(iters "$2" "$3") extra="" label=$2
	case $mode in bw*) extra="-t $TXD -Q $(cqm "$size")" ;; esac
	[ "$INL" = 0 ] || extra="$extra -I $INL"
	[ "${4:-1}" -le 1 ] || { extra="$extra -q $4"; label=$mode-q$4; }
	[ "${5:-}" != events ] || { extra="$extra -e"; label=$label-events; }
	[ -z "$V_LABEL" ] || { extra="$extra $V_PT"; label=$label-$V_LABEL; }
	tmo=$PT_LAT_TMO
	case $mode in bw*) tmo=$PT_TMO ;; esac
	# perftest turns cycles into time by a line fitted to 200 spans of
	# gettimeofday; when the fit is poor ("Correlation coefficient r^2:
	# ... < 0.9") a bandwidth run prints no row, a latency run inf.
	# Under TCG a side that calibrates while the other vCPU is busy
	# misses it: duplex runs (both sides at once) about one in 20
	# (results/pt-repeat-20261203-6.12.md).  Such a run is rerun once,
	# and the rerun said
	for try in 1 2; do
		PORT=$((PORT + 1))
		timeout $tmo taskset 2 $PTPRE $tool -d rxe0 -x 1 -p $PORT -n "$n" -s "$size" $extra > /tmp/pt-srv.out 2>&1 &
		sp=$!
		sleep 1
		sq0=$(softirq0)
		b0=$(cpus_busy)
		# a latency client prints every sample too (-U), for its stalls
		cx=
		case $mode in bw*) ;; *) cx=-U ;; esac
		mark start
		cpu=$(sh -c "timeout $tmo taskset 1 $PTPRE $tool -d rxe0 -x 1 -p $PORT -n $n -s $size $extra $cx 127.0.0.1 > /tmp/pt-cli.out 2>&1; echo \$? > /tmp/pt-cli.rc; times" |
		      tail -1 | awk '{ n = split($0, f, /[ms ]+/); t = 0
			for (i = 1; i + 1 <= n; i += 2) if (f[i] != "") t += f[i] * 60 + f[i + 1]; print t }')
		mark end
		sq1=$(softirq0)
		b1=$(cpus_busy)
		wait $sp
		r2=$(sed -n 's/^Correlation coefficient r^2: \([0-9.e-]*\) .*/\1/p' /tmp/pt-cli.out /tmp/pt-srv.out | head -n 1)
		[ -n "$r2" ] || break
		[ $try = 2 ] || echo "KPBENCH env perftest_rerun=$tool/$label/$size:calibration_r2=$r2"
	done
	# perftest has no bound of its own on a wait: a run past its bound
	# (a lost completion event, say) is killed, and said so
	if [ "$(cat /tmp/pt-cli.rc)" -ge 124 ]; then
		echo "KPBENCH-ERR $tool $label $size: killed after ${tmo}s (exit $(cat /tmp/pt-cli.rc)); its last lines:"
		sed 's/^/KPBENCH-ERR   /' /tmp/pt-cli.out | tail -4
		return
	fi
	# perftest's own word on inline (it disables it where it knows no device)
	grep -q "inline feature. Disabling" /tmp/pt-cli.out && echo "KPBENCH env perftest_inline=disabled_by_perftest"
	row=$(awk -v s="$size" '$1 == s && NF >= 5 { print; exit }' /tmp/pt-cli.out)
	if [ -z "$row" ]; then
		# the row, the exit and all either side printed: perftest's
		# errors go to stderr at once and its header to a buffered
		# stdout, so an error sits above the header, not in its tail
		echo "KPBENCH-ERR $tool $label $size: no result row (exit $(cat /tmp/pt-cli.rc)); the client, then the server:"
		sed 's/^/KPBENCH-ERR   cli: /' /tmp/pt-cli.out
		sed 's/^/KPBENCH-ERR   srv: /' /tmp/pt-srv.out
		return
	fi
	# perftest's clock can fail it: a figure of inf or nan is no figure
	case "$row" in *inf* | *nan*)
		echo "KPBENCH-ERR $tool $label $size: no figure: $row"
		return ;;
	esac
	set -- $row
	case $mode in
	bw*)
		# with -q N perftest's #iterations counts every QP's messages
		gib=$(awk -v s="$size" -v n="$2" 'BEGIN { print s * n / 1073741824 }')
		cps=$(awk -v c="$cpu" -v a="$sq0" -v b="$sq1" -v g="$gib" 'BEGIN { printf "%.4f", (c + b - a) / g }')
		# -b: the figures are both directions' sum (bw_sum), no CPU a GiB;
		# under ptpost the client's CPU holds its probe: none either
		if [ -n "$V_SUM" ] || [ -n "$PTPRE" ]; then cps=; else cps="CPU[s/GiB]=$cps"; fi
		echo "KPBENCH $tool $label $size #bytes=$1 #iterations=$2 BW_peak[MiB/sec]=$3 BW_average[MiB/sec]=$4 MsgRate[Mpps]=$5 $cps $(busy_pct "$b0" "$b1")$(ptpost_fields /tmp/pt-cli.out cli)$(ptpost_fields /tmp/pt-srv.out srv)"
		;;
	*)
		# -U's samples ("i, usec" after "#, usec"), against their minimum
		ns=$(awk -F', ' '/^#, usec/ { on = 1; next } on && NF == 2 && $1 ~ /^[0-9]+$/ { print $2 }' /tmp/pt-cli.out)
		nmin=$(echo "$ns" | sort -g | head -1)
		st=$(echo "$ns" | awk '{ print $1 ", 1" }' | stalls "$nmin" "$(rtt_factor $mode)")
		echo "KPBENCH $tool $label $size #bytes=$1 #iterations=$2 t_min[usec]=$3 t_max[usec]=$4 t_typical[usec]=$5 t_avg[usec]=$6 t_stdev[usec]=$7 99%[usec]=$8 99.9%[usec]=$9 samples=$(echo "$ns" | grep -c .) stalls=$st$(ptpost_fields /tmp/pt-cli.out cli)$(ptpost_fields /tmp/pt-srv.out srv)"
		;;
	esac
}

# CPU cost over the same window for both tools (row bw-win): a WRITE
# stream of WIN_D seconds (our duration=, perftest -D, which measures
# between two 2 s margins), and the client task's CPU time (schedstat:
# user and system, and the softirq work run on its back) plus
# ksoftirqd/0's, sampled from outside over WIN_S seconds of it once it
# has streamed for a while (WIN_AT seconds in, perftest's margin more),
# per GiB at its BW_average.  Neither tool's setup, handshake or
# clock calibration falls in the window.  Both BW_average figures are
# over the same span of their runs: perftest -D counts between margins of a quarter of
# the duration each (its --margin default), so ours is taken between the
# same two points of its run from its progress=1 reports (bw_margins);
# its whole run's average stays beside it as BW_run.
WIN_D=${KP_BENCH_WIN_D:-8} WIN_S=${KP_BENCH_WIN_S:-3} WIN_AT=2
# bw_margins ID SIZE: test ID's MiB/s between its bw progress reports at
# WIN_D/4 and WIN_D - WIN_D/4 seconds (kp_bw_span); nothing if either is
# missing
bw_margins() { kp_bw_span "$1" "$2" $((WIN_D / 4)) $((WIN_D - WIN_D / 4)) bw; }
# (softirq0: ksoftirqd/0, and with IRQ_TIME_ACCOUNTING the softirq time
# that kernel keeps out of every task's, the task's included)
win_ns() { echo "$(cut -d' ' -f1 /proc/$1/schedstat) $(softirq0 | awk '{ printf "%.0f", $1 * 1e9 }')"; }
# win_cps "S0" "S1" MiB/s: CPU seconds per GiB between two win_ns samples
win_cps() {
	echo "$1 $2" | awk -v bw="$3" -v w="$WIN_S" '{ c = ($3 - $1 + $4 - $2) / 1e9
		printf "%.4f", (bw > 0) ? c / (bw / 1024 * w) : 0 }'
}
# win_all "B0" "B1" MiB/s: both vCPUs' busy time (cpus_busy snapshots) over
# the same window, per GiB: rxe's kworkers (6.4 on) and the server's side
# are in it, which no task's time holds; then each vCPU's busy percent
win_all() {
	echo "$1 $2" | awk -v bw="$3" '{
		f0 = ($6 > $2) ? ($5 - $1) / ($6 - $2) : 0; f1 = ($8 > $4) ? ($7 - $3) / ($8 - $4) : 0
		printf "CPUall[s/GiB]=%.4f ", (bw > 0) ? (f0 + f1) / (bw / 1024) : 0 }'
	busy_pct "$1" "$2"
}
win() {
	tool=$1 size=$2
	PORT=$((PORT + 1))
	if [ "$tool" = ours ]; then
		kp_serve "server,addr=$A,port=$PORT,inline=$INL"
		taskset 1 kpwrite "client,addr=$A,port=$PORT,bw,size=$size,duration=$WIN_D,txdepth=$TXD,inline=$INL,cq_mod=$(cqm "$size"),progress=1" > /tmp/win.out 2>&1 &
		at=$WIN_AT
	else
		extra="-t $TXD -Q $(cqm "$size")"
		[ "$INL" = 0 ] || extra="$extra -I $INL"
		timeout $PT_TMO taskset 2 $PTPRE ib_write_bw -d rxe0 -x 1 -p $PORT -D $WIN_D -s "$size" $extra > /tmp/pt-srv.out 2>&1 &
		spid=$!
		sleep 1
		timeout $PT_TMO taskset 1 $PTPRE ib_write_bw -d rxe0 -x 1 -p $PORT -D $WIN_D -s "$size" $extra 127.0.0.1 > /tmp/win.out 2>&1 &
		at=$((WIN_AT + 2))
	fi
	cp=$!
	sleep $at
	s0=$(win_ns $cp) b0=$(cpus_busy)
	mark start
	sleep $WIN_S
	mark end
	s1=$(win_ns $cp) b1=$(cpus_busy)
	wait $cp
	wait $spid
	if [ "$tool" = ours ]; then
		id=$(kp_new_id "$base" client)
		r=$(kp_res "$id")
		run=$(kp_num "$r" 'BW_average[MiB/sec]')
		bw=$(bw_margins "$id" "$size")
		[ -n "$run" ] && [ -n "$bw" ] || { echo "KPBENCH-ERR krping_npu bw-win $size: no figure between the margins ($(dmesg | grep -c "krping_npu $id: progress:") progress reports): $(cat /tmp/win.out) $r"; return; }
		echo "KPBENCH krping_npu bw-win $size $(echo "$r" | cut -d' ' -f2- | sed 's/ CPU\[s\/GiB\]=[^ ]*//; s/ BW_average\[MiB\/sec\]=[^ ]*/ BW_average[MiB\/sec]='"$bw"' BW_run[MiB\/sec]='"$run"'/') CPU[s/GiB]=$(win_cps "$s0" "$s1" "$bw") $(win_all "$b0" "$b1" "$bw")"
	else
		row=$(awk -v s="$size" '$1 == s && NF >= 5 { print; exit }' /tmp/win.out)
		[ -n "$row" ] || { echo "KPBENCH-ERR ib_write_bw bw-win $size: no result row"; sed 's/^/KPBENCH-ERR   /' /tmp/win.out | tail -5; return; }
		set -- $row
		echo "KPBENCH ib_write_bw bw-win $size #bytes=$1 #iterations=$2 BW_peak[MiB/sec]=$3 BW_average[MiB/sec]=$4 MsgRate[Mpps]=$5 CPU[s/GiB]=$(win_cps "$s0" "$s1" "$4") $(win_all "$b0" "$b1" "$4")$(ptpost_fields /tmp/win.out cli)$(ptpost_fields /tmp/pt-srv.out srv)"
	fi
}

rep=0
while [ $rep -lt "$REPS" ]; do
	# the report pairs each run of ours with perftest's of the same rep:
	# minutes apart at most, so a slow spell of the VM weighs on both
	echo "KPBENCH rep $((rep + 1))"
	for size in $SIZES; do
		if [ $size != 4096 ]; then
			ours wlat $size host; ours wlat $size npu; theirs ib_write_lat wlat $size
			theirs ib_read_lat rlat $size; ours rlat $size npu; ours rlat $size host
		fi
		if [ $size = 64 ]; then
			theirs ib_send_lat slat $size; ours slat $size host; ours slat $size npu
			# the events control: perftest -e beside ours with events
			# (ib_write_lat has no -e: wlat's events run is imm, not its twin)
			theirs ib_read_lat rlat $size 1 events; ours rlat $size host 1 events
			theirs ib_send_lat slat $size 1 events; ours slat $size host 1 events
			# receives through an SRQ on both sides (perftest
			# --use-srq on both of its commands, ours srq on both)
			variant srq 1 "" ",srq" ",srq" "--use-srq"
			theirs ib_send_lat slat $size; ours slat $size host
			# over UD QPs (perftest -c UD on both of its commands,
			# ours ud on both), ours over host and NPU memory
			variant ud 1 "" ",ud" ",ud" "-c UD"
			theirs ib_send_lat slat $size; ours slat $size host; ours slat $size npu
			variant
			# atomics: 8 bytes, fetch-and-add (perftest -A's
			# default); ours and theirs set size, the loop's too
			theirs ib_atomic_lat alat 8; ours alat 8 host; ours alat 8 npu
			if [ "$LAT_ONLY" != 1 ]; then
				ours bw_atomic 8 npu; ours bw_atomic 8 host; theirs ib_atomic_bw bw_atomic 8
			fi
			size=64
		fi
		[ "$LAT_ONLY" = 1 ] && continue
		ours bw $size npu; ours bw $size host; theirs ib_write_bw bw $size
		theirs ib_read_bw bw_read $size; ours bw_read $size host; ours bw_read $size npu
		ours bw_send $size npu; ours bw_send $size host; theirs ib_send_bw bw_send $size
		# two QPs from one thread, as perftest -q 2 from one process
		ours bw $size host 2; theirs ib_write_bw bw $size 2
		theirs ib_read_bw bw_read $size 2; ours bw_read $size host 2
		ours bw_send $size host 2; theirs ib_send_bw bw_send $size 2
		# ... with an MR a QP (perftest --mr_per_qp on both commands,
		# ours mr_per_qp on both); the rows above share one, as both
		# tools do by default
		variant mrqp 1 "" ",mr_per_qp" ",mr_per_qp" "--mr_per_qp"
		ours bw $size host 2; theirs ib_write_bw bw $size 2
		variant
		# post lists: the client's WRITEs in chains of 8, each chain's
		# last signalled (perftest -l 8, which sets -Q 8 itself; ours
		# post_list=8, cq_mod=8), and the bw,send server's receives in
		# chains of 8 (perftest --recv_post_list=8, given to both of its
		# sides as perftest wants; our server's recv_post_list=8)
		variant list8 8 8 "" ",post_list=8" "-l 8"
		ours bw $size host; theirs ib_write_bw bw $size
		variant rlist8 8 "" ",recv_post_list=8" "" "--recv_post_list=8"
		theirs ib_send_bw bw_send $size; ours bw_send $size host
		# a shallow receive queue: 64 receives kept posted (perftest -r
		# 64 on both commands, ours rx_depth=64 on the server; both
		# default to 512).  The bench's counts exceed it, so neither
		# tool's cut of rx_depth to the iterations applies
		variant rx64 1 "" ",rx_depth=64" "" "-r 64"
		theirs ib_send_bw bw_send $size; ours bw_send $size host
		# the server's receives through an SRQ (perftest --use-srq
		# on both commands, which its client ignores; our server's srq)
		variant srq 1 "" ",srq" "" "--use-srq"
		theirs ib_send_bw bw_send $size; ours bw_send $size host
		# ... one SRQ that two QPs share (ib_send_bw -q 2 --use-srq;
		# our server's one SRQ for a client of qps=2)
		variant srq 1 "" ",srq" "" "--use-srq"
		theirs ib_send_bw bw_send $size 2; ours bw_send $size host 2
		# over UD QPs, messages up to the path MTU (perftest -c UD
		# on both commands, ours ud on both, over host and NPU memory)
		if [ $size -le 4096 ]; then
			variant ud 1 "" ",ud" ",ud" "-c UD"
			ours bw_send $size host; theirs ib_send_bw bw_send $size; ours bw_send $size npu
		fi
		# paced in software to 20 MiB/s, under a third of either
		# tool's unpaced WRITE stream at these sizes (perftest
		# --rate_limit=20 --rate_units=M --rate_limit_type=SW on both
		# commands, ours rate_limit=20, MiB/s both); the burst each
		# tool's default, its window (-t, txdepth)
		if [ $size -ge 4096 ]; then
			variant rl20 1 "" "" ",rate_limit=20" "--rate_limit=20 --rate_units=M --rate_limit_type=SW"
			ours bw $size host; theirs ib_write_bw bw $size
		fi
		# both directions at once (perftest -b on both commands, ours
		# duplex on the client); each tool's figure both sides' sum
		variant dx 1 "" "" ",duplex" "-b" 1
		ours bw $size host; theirs ib_write_bw bw $size
		theirs ib_read_bw bw_read $size; ours bw_read $size host
		ours bw_send $size host; theirs ib_send_bw bw_send $size
		variant
		# CPU over the same window, both tools
		[ $size = 64 ] || { win ours $size; win theirs $size; }
	done
	rep=$((rep + 1))
	cs_check $rep
done
# rxe's own per-byte work (two copies, two CRC32 passes) in a loop on the
# clients' CPU: the ceiling neither tool can pass at these sizes
[ "$LAT_ONLY" = 1 ] ||
for size in 4096 65536; do
	echo "KPBENCH rxe_ceiling ceiling $size $(taskset 1 /root/rxe_ceiling $size 3 | cut -d' ' -f2-)"
done
rmmod krping_npu
