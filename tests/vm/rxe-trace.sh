# scripts/rxe-trace: where a 64 B round trip (or a stream's message) goes
# in rxe, krping_npu's and its perftest twin's, same boot.  The function
# tracer on rdma_rxe's functions, the scheduler, softirq and workqueue
# events and every system call entry (by task), over N and then 2N round
# trips of each; each count printed is what the second N added, divided
# by N: the cost of a round trip with the connection's setup and teardown
# cancelled.  Prints "KPTRACE tool key=value ..." lines (scripts/rxe-trace
# makes the table).  The function tracer slows what it traces: with it,
# read the counts, not the times; KP_TRACE_FUNCS=0 leaves it off, and the
# times by kind of task and vCPU (run_us, wait_us) are then nearer an
# untraced run's.
. /lib/kp/lib.sh
cp /root/kpwrite /usr/bin/kpwrite
. /root/rxe-trace.env
A=192.0.2.1
PORT=9700
N=${KP_TRACE_N:-400}
RUNS=${KP_TRACE_RUNS:-wlat wlat,imm rlat slat}
TXD=64
export KP_SRV_PIN="taskset 2" KP_CLI_PIN="taskset 1"

kp_rxe_up || exit 1
# the clock of our timed loops as the bench has it: the counter perftest
# reads, trusted by the kernel or not (KP_TRACE_CLOCK=auto: the module's)
ctr=tsc
[ "$(uname -m)" = aarch64 ] && ctr=cntvct
insmod $KP/krping_npu.ko clock=${KP_TRACE_CLOCK:-$ctr} || exit 1
echo "KPTRACE-RES clock=$(cat /sys/module/krping_npu/parameters/clock) clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
[ -w $T/trace ] || { echo "KPTRACE-ERR no tracefs"; exit 1; }
echo 65536 > $T/buffer_size_kb
# one clock for both vCPUs: a wait_us runs from a wake-up on one vCPU to
# a switch-in that may be on the other
echo global > $T/trace_clock 2>/dev/null || echo "KPTRACE-RES warning: no global trace clock: cross-vCPU waits use per-CPU clocks"
# KP_TRACE_FILTER: other functions than rdma_rxe's (the clock's reads,
# say), each also counted by its caller (fn<-caller)
FILTER=${KP_TRACE_FILTER:-:mod:rdma_rxe}
# KP_TRACE_FUNCS=0: the events alone, so that times between them are
# near what an untraced run spends (the function tracer slows rxe)
if [ "${KP_TRACE_FUNCS:-1}" != 0 ]; then
	# one pattern a write: a list in one write stops at its first miss;
	# the patterns are ftrace's globs, not the shell's
	set -f
	for f in $FILTER; do
		echo "$f" >> $T/set_ftrace_filter || { echo "KPTRACE-ERR no function matches $f"; exit 1; }
	done
	set +f
	echo function > $T/current_tracer
fi
for e in sched/sched_switch sched/sched_wakeup irq/softirq_raise irq/softirq_entry \
	 workqueue/workqueue_queue_work raw_syscalls/sys_enter power/cpu_idle; do
	if [ -e $T/events/$e/enable ]; then
		echo 1 > $T/events/$e/enable
	else
		echo "KPTRACE-RES warning: no event $e: its counts are absent"
	fi
done
echo 0 > $T/tracing_on

# count FILE: what the trace holds, "key count" a line; system calls are
# counted by the task that made them and their number too (sys:COMM:NR),
# switches and wake-ups by the task they go to (switch_to:, wake:),
# and the softirqs that ran in ksoftirqd apart (run_KIND@ksoftirqd).
# Times, in microseconds, by kind of task (kworker, idle, ksoftirqd,
# tool: the client or server of either tool, other) and vCPU: run_us
# from a task's switch-in to its switch-out, wait_us and waits from a
# task's wake-up to its switch-in; idle_enter counts a vCPU's entries
# into an idle state (cpu_idle), which a halted vCPU pays for on wake.
count() {
	awk -v callers="${KP_TRACE_FILTER:+1}" '
	function kind(comm) {
		if (comm ~ /^kworker/) return "kworker"
		if (comm ~ /^swapper/) return "idle"
		if (comm ~ /^ksoftirqd/) return "ksoftirqd"
		if (comm ~ /^(kpwrite|ib_)/) return "tool"
		return "other"
	}
	function field(name,	v) {
		v = $0; if (!sub(".*" name "=", "", v)) return ""
		sub(/ .*/, "", v); return v
	}
	/^#/ { next }
	{
		for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) break
		if (i > NF) next
		what = $(i + 1)
		ts = $i; sub(/:$/, "", ts); ts += 0
		# the vCPU it happened on ("[001]")
		cpu = ""
		for (j = 1; j < i; j++) if ($j ~ /^\[[0-9]+\]$/) { cpu = $j; gsub(/[^0-9]/, "", cpu); cpu = "@cpu" (cpu + 0); break }
		# each switch by the task it goes to, each wake-up by the task
		if (what == "sched_switch:") {
			c["switches"]++
			c["switches" cpu]++
			# the task switched out ran since the last switch here
			pk = kind(field("prev_comm"))
			if (cpu in last) c["run_us:" pk cpu] += (ts - last[cpu]) * 1e6
			last[cpu] = ts
			# a task woken while it ran was not waiting: its
			# switch-out ends that wake-up
			delete woke[field("prev_pid")]
			np = field("next_pid")
			if (np in woke) {
				nk = kind(field("next_comm"))
				c["wait_us:" nk cpu] += (ts - woke[np]) * 1e6
				c["waits:" nk cpu]++
				delete woke[np]
			}
			v = $0; sub(/.*next_comm=/, "", v); sub(/ next_pid=.*/, "", v)
			sub(/\/[0-9]+$/, "", v); sub(/:[0-9]+$/, "", v)
			c["switch_to:" v]++; next
		}
		if (what == "sched_wakeup:") {
			c["wakeups"]++
			v = $0; sub(/.*comm=/, "", v); sub(/ pid=.*/, "", v)
			p = field("pid")
			if (p != "" && !(p in woke)) woke[p] = ts
			sub(/\/[0-9]+$/, "", v); sub(/:[0-9]+$/, "", v)
			c["wake:" v]++; next
		}
		# 4294967295 (-1) is the exit from idle, anything else an entry
		if (what == "cpu_idle:") {
			if (field("state") != "4294967295") c["idle_enter@cpu" (field("cpu_id") + 0)]++
			next
		}
		# a system call by its task and number: the setup of a connection
		# (sockets, rdma_cm) differs between runs, the post does not
		if (what == "sys_enter:") {
			task = $1; sub(/-[0-9]+$/, "", task)
			v = $0; sub(/.*sys_enter: NR /, "", v); sub(/ .*/, "", v)
			c["syscalls"]++; c["sys:" task ":" v]++; next
		}
		if (what == "softirq_raise:" || what == "softirq_entry:") {
			v = $0; sub(/.*action=/, "", v); sub(/[^A-Z_].*/, "", v)
			c[(what == "softirq_raise:" ? "raise_" : "run_") v]++
			# where it ran: in ksoftirqd (a wake-up and a switch
			# away) or on the back of whatever ran on that CPU
			if (what == "softirq_entry:" && $1 ~ /^ksoftirqd/)
				c["run_" v "@ksoftirqd"]++
			next
		}
		if (what == "workqueue_queue_work:") { c["queue_work"]++; next }
		sub(/\(.*/, "", what)
		c[what]++
		if (callers && $(i + 2) ~ /^<-/) c[what $(i + 2)]++
		# where rxe did the work of a message: the task loops, per vCPU
		if (what ~ /^(do_work|do_task|rxe_requester|rxe_responder|rxe_completer)$/)
			c[what cpu]++
	}
	END { for (k in c) printf "%s %.1f\n", k, c[k] }' $T/trace > "$1"
	grep -q . "$1" || echo "KPTRACE-ERR empty trace for $1"
	# a trace that filled its buffer lost events: its counts are short
	if grep -q "LOST" $T/trace; then echo "KPTRACE-RES warning: the trace lost events ($1): its counts are short"; fi
}

# report TOOL A B [M]: per round trip (per message where a run of N moves
# M messages: qps=2, duplex), B's counts less A's, over N * M
report() {
	awk -v tool="$1" -v n="$((N * ${4:-1}))" '
	FILENAME == ARGV[1] { a[$1] = $2; next }
	{ b[$1] = $2 }
	END {
		for (k in a) if (!(k in b)) b[k] = 0
		line = "KPTRACE " tool " round_trips=" n
		for (k in b) { d = (b[k] - a[k]) / n
			if (d >= 0.05 || d <= -0.05) line = line " " k "=" sprintf("%.2f", d) }
		print line
	}' "$2" "$3"
}

# cqm MODE: completion moderation of a stream, as the bench's (a mode
# that names its own cq_mod= keeps it: ours() and twin() leave cqm out)
cqm() { kp_pt_cqm "$(msize "$1")" $TXD; }

# twin MODE: perftest's tool and options for our MODE, or nothing
twin() {
	case $1 in
	wlat | wlat,events) echo ib_write_lat ;;
	rlat | rlat,events) echo ib_read_lat ;;
	slat | slat,events) echo ib_send_lat ;;
	bw) echo "ib_write_bw -t $TXD -Q $(cqm "$1")" ;;
	bw,read) echo "ib_read_bw -t $TXD -Q $(cqm "$1")" ;;
	bw,qps=2) echo "ib_write_bw -t $TXD -Q $(cqm "$1") -q 2" ;;
	bw,qps=2,mr_per_qp) echo "ib_write_bw -t $TXD -Q $(cqm "$1") -q 2 --mr_per_qp" ;;
	bw,post_list=8,cq_mod=8) echo "ib_write_bw -t $TXD -Q 8 -l 8" ;;
	bw,read,qps=2) echo "ib_read_bw -t $TXD -Q $(cqm "$1") -q 2" ;;
	bw,duplex) echo "ib_write_bw -t $TXD -Q $(cqm "$1") -b" ;;
	bw,read,duplex) echo "ib_read_bw -t $TXD -Q $(cqm "$1") -b" ;;
	bw,send) echo "ib_send_bw -t $TXD -Q $(cqm "$1")" ;;
	bw,send,duplex) echo "ib_send_bw -t $TXD -Q $(cqm "$1") -b" ;;
	slat,ud) echo "ib_send_lat -c UD" ;;
	bw,send,ud) echo "ib_send_bw -t $TXD -Q $(cqm "$1") -c UD" ;;
	alat) echo ib_atomic_lat ;;
	bw,atomic=fadd) echo "ib_atomic_bw -t $TXD -Q $(cqm "$1")" ;;
	esac
	case $1 in *,events) echo " -e" ;; esac
}

# mult MODE: messages a run of count=N moves, over N: each of qps=2's
# QPs moves N (perftest -q 2 -n N too), and duplex moves N each way
mult() { case $1 in *qps=2* | *duplex*) echo 2 ;; *) echo 1 ;; esac; }

# msize MODE: the message size of MODE's runs (an atomic's is 8 bytes,
# the others' KP_TRACE_SIZE, 64 by default)
msize() { case $1 in alat | bw,atomic*) echo 8 ;; *) echo "${KP_TRACE_SIZE:-64}" ;; esac; }

# Both tools' windows open once the server listens and close when the
# client is done: each holds the client's connection and its teardown,
# never the server's start-up.
ours() {
	PORT=$((PORT + 1))
	echo > $T/trace
	# a UD client needs a server in the UDP port space
	so=
	case $1 in *,ud) so=,ud ;; esac
	# an MR a QP on both sides, as perftest --mr_per_qp on both commands
	case $1 in *mr_per_qp*) so=$so,mr_per_qp ;; esac
	# inline=0 on both sides, as the bench has it: a server left at the
	# default inlines its own WRITEs and SENDs, which perftest does not
	kp_serve "server,addr=$A,port=$PORT,inline=0$so"
	o=
	# a mode may bring its own moderation (post_list=8: cq_mod=8)
	case $1 in *cq_mod=*) o=",txdepth=$TXD" ;; bw*) o=",txdepth=$TXD,cq_mod=$(cqm "$1")" ;; esac
	echo 1 > $T/tracing_on
	taskset 1 kpwrite "client,addr=$A,port=$PORT,$1,size=$(msize "$1"),count=$2,warmup=1,inline=0$o" > /dev/null
	echo 0 > $T/tracing_on
	wait $spid
	CID=$(kp_new_id "$base" client)
	echo "KPTRACE-RES krping_npu-$1 n=$2 $(kp_res $CID | cut -d' ' -f2-)"
	count /tmp/kt-ours-$2
}

theirs() {
	sz=$(msize "$3")
	PORT=$((PORT + 1))
	echo > $T/trace
	# perftest bounds no wait of its own (ib_send_lat -e hangs on 6.12)
	# shellcheck disable=SC2086
	timeout 60 taskset 2 $1 -d rxe0 -x 1 -p $PORT -n "$2" -s "$sz" > /tmp/pt-srv.out 2>&1 &
	sp=$!
	sleep 1
	echo 1 > $T/tracing_on
	# shellcheck disable=SC2086
	timeout 60 taskset 1 $1 -d rxe0 -x 1 -p $PORT -n "$2" -s "$sz" 127.0.0.1 > /tmp/pt-cli.out 2>&1
	rc=$?
	echo 0 > $T/tracing_on
	wait $sp
	[ $rc = 0 ] || echo "KPTRACE-RES ${1%% *} n=$2 killed or failed (exit $rc): $(tail -n 2 /tmp/pt-cli.out | tr '\n' ' ')"
	echo "KPTRACE-RES ${1%% *} n=$2 $(awk -v s="$sz" '$1 == s && NF >= 5' /tmp/pt-cli.out)"
	count /tmp/kt-theirs-$2
}

for r in $RUNS; do
	ours "$r" "$N"
	ours "$r" $((2 * N))
	report "krping_npu-$r" /tmp/kt-ours-$N /tmp/kt-ours-$((2 * N)) "$(mult "$r")"
	tw=$(twin "$r" | tr -d '\n')
	[ -n "$tw" ] || continue
	theirs "$tw" "$N" "$r"
	theirs "$tw" $((2 * N)) "$r"
	lab=${tw%% *}
	case $r in *,events) lab=$lab-e ;; *,ud) lab=$lab-ud ;; *qps=2) lab=$lab-q2 ;; *duplex) lab=$lab-b ;;
	*mr_per_qp) lab=$lab-q2-mrqp ;; *post_list=8*) lab=$lab-l8 ;; esac
	report "$lab" /tmp/kt-theirs-$N /tmp/kt-theirs-$((2 * N)) "$(mult "$r")"
done
echo nop > $T/current_tracer
rmmod krping_npu
