# Helpers for VM scenarios (sourced inside the VM, busybox sh).
#
# Every test is a shell function run by kp_test NAME FUNC; it passes when the
# function returns 0 and the kernel log it produced has no splat, and is
# skipped when it returns 77 (kp_skipped REASON: what it needs is not here).
# Results go to the console as "KPTEST PASS|FAIL|SKIP name: reason",
# counted by tests/drivers/test-lib.sh against the suite's plan
# (tests/plans/SUITE.plan: every name, run or skipped, each boot); a suite
# ends with kp_end, the last line its plan check expects.

KP=/lib/kp
# the lane's knobs (tests/drivers/test-kernel writes them: fewer rounds of
# the long races in make test's matrix lanes, fewer leak rounds in the
# debug lane); each suite has its defaults
[ -f /root/lane.env ] && . /root/lane.env
SPLAT='WARNING:|BUG:|Oops|Call Trace|general protection|kernel BUG|UBSAN|refcount_t:|list_add corruption|list_del corruption|soft lockup|hung_task|blocked for more than'

kp_log() { echo "KPLOG $*"; }

# Move the kernel ring buffer into /tmp/kmsg.all; print what was new.
kp_kmsg() {
	dmesg -c > /tmp/kmsg.new 2>/dev/null
	cat /tmp/kmsg.new >> /tmp/kmsg.all
	cat /tmp/kmsg.new
}

# A test that provokes a WARN on purpose brackets it with kp_expect_begin
# and kp_expect_end; the splat checks here and in tests/drivers/test skip what
# lies between the two markers (the test checks it itself).
KP_EXPECT_BEGIN="krping-test: expected splat begins"
KP_EXPECT_END="krping-test: expected splat ends"
kp_expect_begin() { echo "$KP_EXPECT_BEGIN" > /dev/kmsg; }
kp_expect_end() { echo "$KP_EXPECT_END" > /dev/kmsg; }
kp_unexpected() { sed "/$KP_EXPECT_BEGIN/,/$KP_EXPECT_END/d"; }

kp_test() {
	name=$1; shift
	kp_kmsg > /dev/null
	KP_WHY=""
	kp_t0=$(now_ms)
	"$@"
	rc=$?
	# each test's wall time, in the VM log only (build/vm-*.log)
	echo "KPTIME $name $(($(now_ms) - kp_t0)) ms"
	kp_kmsg | kp_unexpected > /tmp/kmsg.test
	if grep -Eq "$SPLAT" /tmp/kmsg.test; then
		echo "KPTEST FAIL $name: kernel splat"
		grep -E -A20 "$SPLAT" /tmp/kmsg.test | head -40 | sed 's/^/KPLOG   /'
	elif [ $rc -eq 77 ]; then
		echo "KPTEST SKIP $name: ${KP_WHY:-no reason given}"
	elif [ $rc -ne 0 ]; then
		echo "KPTEST FAIL $name: ${KP_WHY:-rc=$rc}"
		sed 's/^/KPLOG   /' /tmp/kmsg.test | tail -20
	else
		echo "KPTEST PASS $name"
	fi
}

# Milliseconds since boot (10 ms resolution).
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# kp_why MESSAGE: record why a test failed and return 1.
kp_why() { KP_WHY="$*"; return 1; }

# kp_skipped REASON: the test cannot run here (return it): a SKIP.
kp_skipped() { KP_WHY="$*"; return 77; }

# kp_skip NAME REASON: a test of the plan not run in this boot.
kp_skip() { n=$1; shift; echo "KPTEST SKIP $n: $*"; }

# The suite's last line: its plan check (tests/drivers/test-lib.sh) wants
# it, so a suite that stopped early (an exit in a helper, a shell error)
# is a failure even when every test it ran passed.
kp_end() { echo "KPTEST-END $1"; }

# Bring up rxe0 with address $1 (default 192.0.2.1/24) on a dummy netdev d0,
# or on the e1000 NIC eth0 when $2 is "eth0" (two-VM tests).
kp_rxe_up() {
	addr=${1:-192.0.2.1/24} nd=${2:-d0}
	# rxe's CRC: a module to load first where it is one, else built in
	if grep -q '/crc32_generic\.ko:' /lib/modules/"$(uname -r)"/modules.dep; then
		modprobe crc32_generic || return 1
	fi
	modprobe rdma_rxe || return 1
	modprobe rdma_cm || return 1
	modprobe rdma_ucm || return 1
	if [ "$nd" = d0 ]; then
		modprobe dummy numdummies=0 || return 1
		ip link add d0 type dummy || return 1
	else
		modprobe e1000 || return 1
		i=0
		while [ ! -e /sys/class/net/$nd ] && [ $i -lt 50 ]; do
			sleep 0.1; i=$((i + 1))
		done
	fi
	ip link set $nd mtu 9000 || return 1	# RoCE MTU 4096
	ip addr add "$addr" dev $nd || return 1
	ip link set $nd up || return 1
	rdma link add rxe0 type rxe netdev $nd || return 1
	i=0
	while [ $i -lt 50 ]; do
		[ -e /sys/class/infiniband/rxe0 ] && return 0
		sleep 0.1; i=$((i + 1))
	done
	return 1
}

# kp_write CMD: write CMD to /proc/krping_npu in one write(2); print the
# result: "ok" or the errno name the shell saw.  Returns write's status.
kp_write() {
	printf '%s' "$1" > /proc/krping_npu 2>/tmp/kp_write.err
}

# The result line of the finished test with id $1 in /proc/krping_npu.
kp_result() {
	grep "^$1 " /proc/krping_npu
}

# The id of the newest record in /proc/krping_npu (0 if none).
kp_last_id() {
	awk '$1 ~ /^[0-9]+$/ && $2 !~ /^(result|progress|qp|hw):$/ { id = $1 } END { print id + 0 }' \
		/proc/krping_npu
}

# kp_rec ID: the record line of test ID; kp_res ID: its result text.
kp_rec() { awk -v id="$1" '$1 == id && $2 !~ /^(result|progress|qp|hw):$/' /proc/krping_npu; }
kp_res() { sed -n "s/^$1 result: //p" /proc/krping_npu; }
# kp_qp ID: the per-connection lines of a qps=N test's results
kp_qp() { sed -n "s/^$1 qp: //p" /proc/krping_npu; }

# kp_col ID COLUMN: one column of the record (1-based, see the header).
kp_col() { kp_rec "$1" | awk -v c="$2" '{ print $c }'; }

# kp_num "RESULT" KEY: the value of KEY=value in a result line.
kp_num() {
	echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k { print $2; exit }'
}

# kp_bw_span ID SIZE FROM TO MODE: test ID's MiB/s from its first MODE
# progress report at or past FROM seconds to its first at or past TO (the
# dmesg lines of kp_run_tick(), a second apart); nothing if either is
# missing
kp_bw_span() {
	dmesg | awk -v id="krping_npu $1:" -v s="$2" -v a="$3" -v b="$4" -v m="$5" '
		index($0, id " progress: " m " ") {
			n = split($0, f, " "); it = ""; el = ""
			for (i = 1; i <= n; i++) {
				split(f[i], kv, "=")
				if (kv[1] == "iterations") it = kv[2]
				if (kv[1] == "elapsed[s]") el = kv[2]
			}
			if (el == "") next
			if (e0 == "" && el + 0 >= a) { e0 = el; i0 = it }
			else if (e0 != "" && e1 == "" && el + 0 >= b) { e1 = el; i1 = it }
		}
		END { if (e1 != "" && e1 + 0 > e0 + 0) printf "%.2f", (i1 - i0) * s / 1048576 / (e1 - e0) }'
}

# kp_new_id BASE ROLE: the id of the first record above BASE with ROLE.
kp_new_id() {
	awk -v b="$1" -v r="$2" '$1 ~ /^[0-9]+$/ && $1 > b && $2 == r { print $1; exit }' \
		/proc/krping_npu
}

# kp_pair "SERVER_OPTS" "CLIENT_OPTS": run a server and a client of ours
# (prefixed by $KP_SRV_PIN / $KP_CLI_PIN, e.g. "taskset 2", if set).
# Sets SID/CID (record ids), SRV/CLI (kpwrite's "ret=N" or "errno=N") and
# SLEN/CLEN (the commands' lengths, which a successful write returns).
# kp_serve CMD: start server CMD in the background ($spid, output in
# /tmp/srv.out) and wait until it listens; $base is the last id before it
kp_serve() {
	base=$(kp_last_id)
	$KP_SRV_PIN kpwrite "$1" > /tmp/srv.out 2>&1 &
	spid=$!
	kp_listening "$base"
}

# kp_moving ROLE BASE: wait (up to 20 s) for the ROLE test started after
# record BASE to be running with more than 16 KiB moved (any counter): the
# state a peer-loss test fails from, proven.  Sets $mid; fails with why.
kp_moving() {
	i=0
	while [ $i -lt 200 ]; do
		mid=$(kp_new_id "$2" "$1")
		[ -n "$mid" ] && kp_rec "$mid" | awk '$6 == "running" && $8 + $10 + $12 + $14 > 16384 { f = 1 } END { exit !f }' &&
			return 0
		sleep 0.1; i=$((i + 1))
	done
	kp_why "the $1 was not streaming: '$(kp_rec "$mid")'"
}

# kp_listening BASE: wait (up to 20 s) for the server started after record
# BASE to listen (its record's state), or to have ended
kp_listening() {
	i=0
	while [ $i -lt 400 ]; do
		sid=$(kp_new_id "$1" server)
		[ -n "$sid" ] && case $(kp_col "$sid" 6) in listening|done|failed) break ;; esac
		sleep 0.05; i=$((i + 1))
	done
}

kp_pair() {
	scmd="server,$1" ccmd="client,$2"
	SLEN=${#scmd} CLEN=${#ccmd}
	kp_serve "$scmd"
	CLI=$($KP_CLI_PIN kpwrite "$ccmd")
	wait $spid
	SRV=$(cat /tmp/srv.out)
	SID=$(kp_new_id "$base" server)
	CID=$(kp_new_id "$base" client)
}

# kp_watch_pair "SERVER_OPTS" "CLIENT_OPTS" FN WHAT DUMP: a server and a
# client of ours in the background, and FN (prints what it saw, succeeds
# once that is enough) every 0.1 s for up to 4 s while they run; $seen
# holds its last output, $base the last record before them.  Fails if
# either side failed, or if FN never succeeded: then WHAT, what FN saw
# last, and what the command DUMP shows at the end.
kp_watch_pair() {
	kp_serve "server,$1"
	wsp=$spid
	kpwrite "client,$2" > /tmp/cli.out &
	wcp=$!
	i=0 seen="" got=2
	while [ $i -lt 40 ]; do
		seen=$($3) && { got=0; break; }
		sleep 0.1; i=$((i + 1))
	done
	wait $wsp; wait $wcp
	grep -q ret= /tmp/srv.out && grep -q ret= /tmp/cli.out ||
		{ kp_why "server $(cat /tmp/srv.out), client $(cat /tmp/cli.out)"; return 1; }
	[ $got = 0 ] || { kp_why "$4: last seen '$(echo "$seen" | head -5 | tr '\n' '|')', at the end: $($5 2>&1 | head -5 | tr '\n' '|')"; return 1; }
}

# kp_pair_refused "SERVER_OPTS" "CLIENT_OPTS" SRV_WANT CLI_WANT WHO LINE
# WHAT: a pair that must end with the server's and the client's kpwrite
# saying SRV_WANT and CLI_WANT (errno=N), WHO's (server or client) record
# saying why in dmesg, LINE after its "krping_npu ID: ", and nothing left
# behind; WHAT names the case in a failure
kp_pair_refused() {
	kp_pair "$1" "$2"
	[ "$SRV" = "$3" ] && [ "$CLI" = "$4" ] ||
		{ kp_why "$7: srv=$SRV cli=$CLI, want $3 and $4"; return 1; }
	rid=$SID
	[ "$5" = client ] && rid=$CID
	dmesg | grep -qF "krping_npu $rid: $6" || { kp_why "$7: no $5 line saying why"; return 1; }
	kp_idle "$7"
}

# kp_atomics ID SID OP MODE N MISS QPS: test ID's client and SID's server
# each said, for each of QPS connections, that its target ended where N
# atomics of OP, MISS of them compare-and-swaps meant to fail, leave it
# from kp_atomic.c's start (0x1fffffff0, each add 0x100000001), and the
# client's record counts the N x QPS atomics of 8 bytes.
kp_atomics() {
	want=$(printf '0x%016x' $((0x1fffffff0 + ($5 - $6) * 0x100000001)))
	each=""
	[ "$4" = alat ] && each=", each returned value as expected"
	q=0
	while [ $q -lt "$7" ]; do
		n=$(dmesg | grep -c "krping_npu $1: $3: conn $q: $5 atomics ($6 meant to fail)$each, the target read back as $want\$") &&
			[ "$n" = 1 ] || { kp_why "client $1 conn $q: $n lines for $5 $3 ending at $want"; return 1; }
		n=$(dmesg | grep -c "krping_npu $2: $4: conn $q: the target holds $want, as the client's atomics left it") &&
			[ "$n" = 1 ] || { kp_why "server $2 conn $q: $n lines for $want"; return 1; }
		q=$((q + 1))
	done
	[ "$(kp_col "$1" 15)" = $(($5 * $7)) ] && [ "$(kp_col "$1" 16)" = $((8 * $5 * $7)) ] ||
		{ kp_why "atomic counters: $(kp_rec "$1")"; return 1; }
}

# kp_verbs_share: a SKIP where make test's quick lane leaves perftest's
# newer verbs (issue 43) to make test-matrix (tests/drivers/test-matrix)
kp_verbs_share() {
	[ -z "${KP_VERBS_MATRIX:-}" ] ||
		kp_skipped "make test runs perftest's newer verbs on 6.1, 6.12 and arm64-6.1; make test-matrix here too"
}

# kp_fcmp A OP B: compare two numeric expressions (our own numbers only).
kp_fcmp() { awk "BEGIN { exit !(($1) $2 ($3)) }"; }
# kp_pt_cqm SIZE TXDEPTH: the completion moderation ib_write_bw picks by
# itself for a stream (100, at most the window, up to 8 KiB; 1 above),
# which the bench and rxe-trace give both tools
kp_pt_cqm() { if [ "$1" -le 8192 ]; then echo $(($2 < 100 ? $2 : 100)); else echo 1; fi; }

# kp_check_lat RESULT MODE SIZE COUNT: a plausible latency result line.
kp_check_lat() {
	r=$1
	[ "$(echo "$r" | cut -d' ' -f1)" = "$2" ] || { kp_why "mode: $r"; return 1; }
	[ "$(kp_num "$r" '#bytes')" = "$3" ] || { kp_why "bytes: $r"; return 1; }
	[ "$(kp_num "$r" '#iterations')" = "$4" ] || { kp_why "iterations: $r"; return 1; }
	mn=$(kp_num "$r" 't_min[usec]'); mx=$(kp_num "$r" 't_max[usec]')
	ty=$(kp_num "$r" 't_typical[usec]'); av=$(kp_num "$r" 't_avg[usec]')
	p99=$(kp_num "$r" '99%[usec]'); p999=$(kp_num "$r" '99.9%[usec]')
	sd=$(kp_num "$r" 't_stdev[usec]')
	for v in "$mn" "$mx" "$ty" "$av" "$p99" "$p999" "$sd"; do
		[ -n "$v" ] || { kp_why "missing field: $r"; return 1; }
	done
	kp_fcmp "$mn" '>' 0 && kp_fcmp "$mn" '<=' "$ty" && kp_fcmp "$ty" '<=' "$mx" &&
		kp_fcmp "$ty" '<=' "$p99" && kp_fcmp "$p99" '<=' "$p999" &&
		kp_fcmp "$p999" '<=' "$mx" && kp_fcmp "$mn" '<=' "$av" &&
		kp_fcmp "$av" '<=' "$mx" && kp_fcmp "$sd" '>=' 0 ||
		{ kp_why "implausible: $r"; return 1; }
}

# kp_check_bw RESULT SIZE COUNT [MODE]: a plausible bandwidth result line.
kp_check_bw() {
	r=$1
	[ "$(echo "$r" | cut -d' ' -f1)" = "${4:-bw}" ] || { kp_why "mode: $r"; return 1; }
	[ "$(kp_num "$r" '#bytes')" = "$2" ] || { kp_why "bytes: $r"; return 1; }
	[ "$(kp_num "$r" '#iterations')" = "$3" ] || { kp_why "iterations: $r"; return 1; }
	pk=$(kp_num "$r" 'BW_peak[MiB/sec]'); avg=$(kp_num "$r" 'BW_average[MiB/sec]')
	rate=$(kp_num "$r" 'MsgRate[Mpps]')
	[ -n "$pk" ] && [ -n "$avg" ] && [ -n "$rate" ] || { kp_why "missing field: $r"; return 1; }
	# two decimals, truncated: under 0.01 MiB/s (8-byte atomics on the
	# debug kernel) BW_average prints 0.00, and MsgRate says it moved
	kp_fcmp "$rate" '>' 0 && kp_fcmp "$pk" '>=' "$avg" &&
		{ kp_fcmp "$avg" '>' 0 || kp_fcmp "$rate * 1000000 * $2 / 1048576" '<' 0.01; } ||
		{ kp_why "implausible: $r"; return 1; }
	# MsgRate and BW_average describe the same run, within 2% and
	# MsgRate's resolution: six decimals, truncated (1 message a second)
	e=$(awk "BEGIN { print $2 / 1048576 }")
	kp_fcmp "$rate * 1000000 * $2 / 1048576" '>' "$avg * 0.98 - $e" &&
		kp_fcmp "$rate * 1000000 * $2 / 1048576" '<' "$avg * 1.02 + 0.02 + $e" ||
		{ kp_why "BW_average and MsgRate disagree: $r"; return 1; }
}

# npu_peer_mem, the emulated NPU (npu_sim) and the stand-in cores (tests/core)
ST=/sys/kernel/debug/npu_peer_mem/stats
SST=/sys/kernel/debug/npu_sim/stats
# st KEY: a counter of npu_peer_mem or npu_sim (allocs, hal_*, ...);
# cst CORE KEY: of a stand-in core
st() { cat $ST $SST 2>/dev/null | awk -v k="$1" '$1 == k { print $2 }'; }
# kp_peer_load [ARGS]: npu_peer_mem over the emulated NPU's HAL (npu_sim
# loaded first, with NPU_SIM_ARGS, unless it is loaded)
kp_peer_load() {
	[ -d /sys/module/npu_sim ] || insmod $KP/npu_sim.ko ${NPU_SIM_ARGS:-} || return 1
	insmod $KP/npu_peer_mem.ko "$@"
}
# kp_sim_reload [ARGS]: npu_sim again, with ARGS (npu_peer_mem unloaded)
kp_sim_reload() {
	[ -d /sys/module/npu_sim ] && { rmmod npu_sim || return 1; }
	insmod $KP/npu_sim.ko "$@"
}
cst() { awk -v k="$2" '$1 == k { print $2 }' "/sys/kernel/debug/$1/status"; }
# the kernel's page size in bytes (busybox has no getconf)
kp_page_size() { awk '/^KernelPageSize:/ { print $2 * 1024; exit }' /proc/self/smaps; }
# ctl CORE CMD: a command to a stand-in core
ctl() { printf '%s' "$2" > "/sys/kernel/debug/$1/ctl"; }
# kp_holder SIZE: npumem holding SIZE bytes of NPU 0 in the background
# ($hp), waited for until it prints its address (5 s at most).  The file
# is emptied first: truncated by the background shell alone, a previous
# holder's "va=" line could pass for this one's, and the test run on
# beside a holder that has not allocated yet (npu-dev-user-allocs on 6.12:
# the users process then took the holder's allocation, ENOSPC)
kp_holder() {
	: > /tmp/hold.out
	npumem 0 "$1" hold > /tmp/hold.out &
	hp=$!
	i=0
	while ! grep -q va= /tmp/hold.out && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}
# zero WHEN: every counter of npu_peer_mem at zero
zero() {
	for k in allocs pinned_pages mappings contexts tables hal_tables hal_pages freed_unput; do
		[ "$(st $k)" = 0 ] || { kp_why "$k=$(st $k) after $1"; return 1; }
	done
}

# kp_tracefs: tracefs mounted, in $T, and no comm recording: with it the
# first event enabled (and the last disabled) also flips sched_switch's
# probe, patching __schedule() under an idle vCPU, and 6.1 under qemu
# 7.2's TCG then hung both vCPUs (the idle one looping on the int3 in
# __schedule(), the writer in text_poke_bp() waiting for it: seen in
# integration and reproduced in a loop of flips); trace lines then name
# tasks "<...>", which no test reads
kp_tracefs() {
	T=/sys/kernel/tracing
	[ -d $T/events ] || mount -t tracefs nodev $T || return 1
	echo 0 > $T/options/record-cmd
}

# kp_trace on|off: our post events (kp_post_send, kp_post_recv), tracefs
# mounted first where it is not; each flip patches the kernel's text
# through every CPU, so a test turns them on once
kp_trace() {
	kp_tracefs || return 1
	v=0; [ "$1" = on ] && v=1
	for e in kp_post_send kp_post_recv; do echo $v > $T/events/krping_npu/$e/enable; done
}

# "live tests=0 cm_ids=0 qps=0 buffers=0" once everything is released
kp_live() { sed -n 's/^live //p' /proc/krping_npu; }
kp_idle() {
	[ "$(kp_live)" = "tests=0 cm_ids=0 qps=0 buffers=0" ] ||
		{ kp_why "objects left after $1: $(kp_live)"; return 1; }
}

# t_symbols NAME:HOW...: each NAME bound by npu_peer_mem the way HOW says
# (export: __symbol_get; kprobe: found by name, its entry checked for
# ENDBR64 on an IBT kernel, "kprobe endbr64"), and every address it bound
# is the symbol's entry in /proc/kallsyms
t_symbols() {
	f=/sys/kernel/debug/npu_peer_mem/symbols
	for w in "$@"; do
		grep -q "^${w%:*} 0x[0-9a-f]* ${w#*:}\( endbr64\)\{0,1\}\$" $f ||
			{ kp_why "${w%:*} not bound by ${w#*:}: $(tr '\n' ' ' < $f)"; return 1; }
	done
	while read -r n a how rest; do
		# an entry bound by name on an IBT kernel was checked for ENDBR64
		[ "$how" != kprobe ] || [ "$(st ibt)" = 0 ] || [ "$rest" = endbr64 ] ||
			{ kp_why "$n bound by name on an IBT kernel, its entry not checked"; return 1; }
		a=${a#0x}
		while [ ${#a} -lt 16 ]; do a=0$a; done
		k=$(awk -v n="$n" '$3 == n { print $1 }' /proc/kallsyms)
		[ -n "$k" ] || { kp_why "$n is not in /proc/kallsyms"; return 1; }
		echo "$k" | grep -qx "$a" || { kp_why "$n resolved to $a, kallsyms says $k"; return 1; }
	done < $f
}
# t_core_symbols CORE: MOFED's register call bound (a non-GPL export:
# __symbol_get finds it only where the kernel still allows that, which
# Debian's 6.1 and 5.10 no longer do: the 6.5 change reached their stable
# trees), found by name otherwise, and the core's module held either way
t_core_symbols() {
	f=/sys/kernel/debug/npu_peer_mem/symbols
	route=$(awk '$1 == "ib_register_peer_memory_client" { print $3 }' $f)
	case $route in
	export|kprobe) t_symbols ib_register_peer_memory_client:$route ib_unregister_peer_memory_client:$route ;;
	*) kp_why "ib_register_peer_memory_client not bound: $(tr '\n' ' ' < $f)"; false ;;
	esac || return 1
	[ "$(cat /sys/module/$1/refcnt)" -ge 1 ] || { kp_why "$1 not held (refcnt $(cat /sys/module/$1/refcnt))"; return 1; }
	kp_log "core symbols of $1 bound by $route"
}
