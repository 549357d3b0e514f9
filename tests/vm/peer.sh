# VM tests of npu_peer_mem and krping_npu over NPU memory (issue: peer client).
. /lib/kp/lib.sh
cp /root/kpwrite /root/npumem /root/npu_launch /usr/bin/
A=192.0.2.1
PORT=9300
MB4=4194304

t_setup() {
	kp_rxe_up || { kp_why "rxe0"; return 1; }
	insmod $KP/krping_npu.ko || { kp_why "insmod krping_npu"; return 1; }
}
kp_test setup t_setup
# the RDMA stack the modules were built against, for env.txt: the kernel's
t_stack() {
	[ "$(cat /sys/module/krping_npu/parameters/rdma_stack)" = kernel ] ||
		{ kp_why "rdma_stack '$(cat /sys/module/krping_npu/parameters/rdma_stack)'"; return 1; }
	echo ofed > /sys/module/krping_npu/parameters/rdma_stack 2>/dev/null &&
		{ kp_why "rdma_stack was writable"; return 1; }
	return 0
}
kp_test rdma-stack-param t_stack

t_no_peer_mem() {
	out=$(kpwrite "client,addr=$A,port=9,mem=npu,count=1")
	[ "$out" = "errno=19" ] || { kp_why "want ENODEV, got $out"; return 1; }
	dmesg | grep -q "mem=npu: npu_peer_mem is not loaded" || { kp_why "no dmesg line"; return 1; }
}
kp_test npu-without-peer-mem t_no_peer_mem

# no HAL (no NPU driver, no npu_sim): npu_peer_mem refuses to load, and says why
t_load_no_hal() {
	insmod $KP/npu_peer_mem.ko 2>/dev/null && { kp_why "loaded without a HAL"; return 1; }
	dmesg | grep -q "npu_peer_mem: no Ascend HAL (hal_kernel_p2p_get_pages: -2): load" ||
		{ kp_why "no 'no Ascend HAL' line"; return 1; }
}
kp_test load-no-hal t_load_no_hal

t_load_no_core() {
	kp_peer_load || { kp_why "insmod"; return 1; }
	dmesg | grep -q "npu_peer_mem: no peer-memory core" || { kp_why "no 'no core' line"; return 1; }
	dmesg | grep -q "npu_peer_mem: HAL of npu_sim" || { kp_why "no 'HAL of npu_sim' line"; return 1; }
	[ "$(st abi)" = none ] && [ "$(st provider)" = hal ] && [ "$(st hal)" = npu_sim ] ||
		{ kp_why "abi $(st abi) provider $(st provider) hal $(st hal)"; return 1; }
	rmmod npu_sim 2>/dev/null && { kp_why "npu_sim unloaded under npu_peer_mem"; return 1; }
	zero load
}
kp_test load-no-core t_load_no_core
kp_test symbols-are-entries t_symbols hal_kernel_p2p_get_pages:export hal_kernel_p2p_put_pages:export
# the emulated NPU's HBM is the ivshmem device's BAR (scripts/rig/vm --hbm):
# physical addresses that are MMIO, as real HBM
t_backing() {
	[ "$(st backing0)" = "$1" ] && [ "$(st hbm_bytes0)" = 67108864 ] ||
		{ kp_why "backing $(st backing0), $(st hbm_bytes0) bytes"; return 1; }
	# the ivshmem device is bound to npu_sim exactly when its BAR is HBM
	n=$(ls /sys/bus/pci/drivers/npu_sim 2>/dev/null | grep -c '^0000:')
	[ "$n" = "$2" ] || { kp_why "$n device(s) bound to npu_sim"; return 1; }
}
kp_test npu-sim-bar-backed t_backing bar 1

# The HAL's rules, broken on purpose by hal_contract.ko: npu_sim must catch
# each break as the Ascend driver would.  hc SCRIPT runs one script of
# steps in a new process; its log lines land in /tmp/hc.log.
HC=/sys/kernel/debug/hal_contract
M2=2097152
hc() {
	echo > $HC/log
	out=$(KP_PROC=$HC/ctl kpwrite "$1")
	cat $HC/log > /tmp/hc.log
	[ "$out" = "ret=${#1}" ] || { kp_why "script '$1': $out"; return 1; }
}
# hc_want LINE...: each LINE is in the log, in this order
hc_want() {
	awk 'BEGIN { for (i = 1; i < ARGC; i++) want[i] = ARGV[i]; n = ARGC - 1; ARGC = 1; j = 1 }
	     j <= n && index($0, want[j]) == 1 { j++ }
	     END { exit j <= n }' "$@" < /tmp/hc.log ||
		{ kp_why "want '$*' in: $(tr '\n' '|' < /tmp/hc.log)"; return 1; }
}
t_hc_load() {
	insmod $KP/hal_contract.ko || { kp_why "insmod hal_contract"; return 1; }
	R0=$(st refused)
	T0=$(st hal_tables)
	hc "alloc 0 $((2 * M2));get 0 $((2 * M2));put 0;free" &&
	hc_want "alloc ret=0 va=0x1000" "get ret=0 slot=0 pages=2 page_size=$M2 version=1" \
		"put slot=0 ret=0" "free ret=0" || return 1
	[ "$(st refused)" = "$R0" ] && [ "$(st hal_tables)" = "$T0" ] ||
		{ kp_why "refused $(st refused) tables $(st hal_tables)"; return 1; }
}
kp_test hal-contract-owner t_hc_load
# memory of another process, asked by a process with no NPU context of
# its own: ESRCH (no svm process for current->tgid); by one with memory of
# its own: EOPNOTSUPP (in none of its heaps).  Not NPU memory at all
# (outside the SVM range): EINVAL.
t_hc_other() {
	hc "alloc 0 $M2" && va=$(sed -n 's/^alloc ret=0 va=//p' /tmp/hc.log) &&
	hc "get 0 $M2" && hc_want "get ret=-3" || return 1
	hc "alloc 0 $M2;at ${va#0x};get 0 $M2;at 1000;get 0 $M2;at ${va#0x};free" &&
	hc_want "alloc ret=0" "get ret=-95" "get ret=-22" "free ret=0" || return 1
	[ "$(st refused)" = $((R0 + 3)) ] || { kp_why "refused $(st refused), want $((R0 + 3))"; return 1; }
	# a kernel allocation outlives its process: free the asker's own
	own=$(sed -n 's/^alloc ret=0 va=//p' /tmp/hc.log)
	hc "at ${own#0x};free" && hc_want "free ret=0"
}
kp_test hal-contract-other-process t_hc_other
# a va off the memory's page: EOPNOTSUPP, as the Ascend driver; any
# length, rounded up to whole pages by the driver (4 KiB: one page, 2 MiB
# + 1: two); no length, no callback: EINVAL
t_hc_rules() {
	hc "alloc 0 $((2 * M2));get 4096 $M2;get 0 4096;get 0 $((M2 + 1));get 0 0;get 0 $M2 nocb;put 0;put 1;free" &&
	hc_want "alloc ret=0" "get ret=-95" "get ret=0 slot=0 pages=1 page_size=$M2" \
		"get ret=0 slot=1 pages=2 page_size=$M2" "get ret=-22" "get ret=-22" \
		"put slot=0 ret=0" "put slot=1 ret=0" "free ret=0" || return 1
	[ "$(st refused)" = $((R0 + 6)) ] || { kp_why "refused $(st refused), want $((R0 + 6))"; return 1; }
}
kp_test hal-contract-rules t_hc_rules
# a range that starts in the caller's memory and runs past its end: into
# nobody's pages EINVAL (the driver's table not built); into the caller's
# next allocation the table spans both, and a free of the first calls its
# callback once, the second's free none
t_hc_past_end() {
	hc "alloc 0 $M2;get 0 $((2 * M2));free" &&
	hc_want "alloc ret=0" "get ret=-22" "free ret=0" || return 1
	[ "$(st refused)" = $((R0 + 7)) ] || { kp_why "refused $(st refused), want $((R0 + 7))"; return 1; }
	# one process: the memory is the caller's only (an empty pool: the
	# two allocations at the base, adjacent)
	b=$(printf %x $((0x100000000000 + M2)))
	hc "alloc 0 $M2;alloc 0 $M2;at 100000000000;get 0 $((M2 + 64));free;at $b;free;put 0" &&
	hc_want "alloc ret=0 va=0x100000000000" "alloc ret=0 va=0x$b" "get ret=0 slot=0 pages=2" \
		"callback slot=0 put=0" "free ret=0" "free ret=0" "put slot=0 ret=0" || return 1
	[ "$(grep -c '^callback' /tmp/hc.log)" = 1 ] || { kp_why "callbacks: $(tr '\n' '|' < /tmp/hc.log)"; return 1; }
	[ "$(st refused)" = $((R0 + 7)) ] && [ "$(st hal_tables)" = "$T0" ] ||
		{ kp_why "refused $(st refused) tables $(st hal_tables)"; return 1; }
}
kp_test hal-contract-past-end t_hc_past_end
# put_pages from inside the free callback deadlocks on the driver: the
# emulated NPU refuses it with EDEADLK and a WARN; the put after it works
t_hc_put_in_cb() {
	p0=$(st put_in_callback)
	kp_expect_begin
	hc "alloc 0 $M2;get 0 $M2;cbput 0;free"
	rc=$?
	kp_kmsg > /tmp/hc.kmsg
	kp_expect_end
	[ $rc = 0 ] && hc_want "get ret=0 slot=0" "callback slot=0 put=-35" "free ret=0" || return 1
	[ "$(grep -c 'WARNING:' /tmp/hc.kmsg)" = 1 ] &&
		grep -q "npu_sim: put_pages from inside a free callback of the same process and device" /tmp/hc.kmsg ||
		{ kp_why "no single WARN: $(grep -E "$SPLAT|npu_sim" /tmp/hc.kmsg | head -3)"; return 1; }
	[ "$(st put_in_callback)" = $((p0 + 1)) ] && [ "$(st freed_unput)" = 1 ] ||
		{ kp_why "put_in_callback $(st put_in_callback) freed_unput $(st freed_unput)"; return 1; }
	hc "put 0" && hc_want "put slot=0 ret=0" || return 1
	[ "$(st freed_unput)" = 0 ] && [ "$(st hal_tables)" = "$T0" ] ||
		{ kp_why "after the put: freed_unput $(st freed_unput) tables $(st hal_tables)"; return 1; }
}
kp_test hal-contract-put-in-callback t_hc_put_in_cb
# get_pages of the same process and device from inside a free callback
# deadlocks on the driver too: EDEADLK, one WARN, a violation counted; a
# put of a table put already (the driver frees it twice): EINVAL, counted
t_hc_violations() {
	v0=$(st violations) g0=$(st get_in_callback) u0=$(st put_unknown)
	kp_expect_begin
	hc "alloc 0 $M2;get 0 $M2;cbget 0;free;put 0;putagain 0"
	rc=$?
	kp_kmsg > /tmp/hc.kmsg
	kp_expect_end
	[ $rc = 0 ] && hc_want "get ret=0 slot=0" "callback slot=0 get=-35" "free ret=0" \
		"put slot=0 ret=0" "putagain slot=0 ret=-22" || return 1
	[ "$(grep -c 'WARNING:' /tmp/hc.kmsg)" = 2 ] &&
		grep -q "npu_sim: get_pages from inside a free callback" /tmp/hc.kmsg &&
		grep -q "npu_sim: put_pages of a table not taken or put already" /tmp/hc.kmsg ||
		{ kp_why "WARNs: $(grep -E "WARNING|npu_sim" /tmp/hc.kmsg | head -4 | tr '\n' '|')"; return 1; }
	[ $(($(st get_in_callback) - g0)) = 1 ] && [ $(($(st put_unknown) - u0)) = 1 ] &&
		[ $(($(st violations) - v0)) = 2 ] && [ "$(st hal_tables)" = "$T0" ] ||
		{ kp_why "get_in_callback $(st get_in_callback) put_unknown $(st put_unknown) violations $(st violations)"; return 1; }
}
kp_test hal-contract-violations t_hc_violations
# memory handed back is poisoned before the next allocation gets it
t_hc_poison() {
	hc "alloc 0 $M2;poke 0 90;poke $((M2 - 1)) 90;peek 0;get 0 $M2;put 0;free;alloc 0 $M2;peek 0;peek $((M2 - 1));free" &&
	hc_want "alloc ret=0 va=0x100000000000" "peek ret=0 byte=0x5a" "free ret=0" \
		"alloc ret=0 va=0x100000000000" "peek ret=0 byte=0x6b" "peek ret=0 byte=0x6b" "free ret=0"
}
kp_test hal-contract-poison t_hc_poison

# /dev/npu_sim0, the runtime's face: a process allocates, copies in and
# out, frees; its memory is its own, and goes when it does
t_npudev_check() {
	[ -c /dev/npu_sim0 ] || { kp_why "no /dev/npu_sim0"; return 1; }
	a0=$(st allocs)
	for size in 64 4096 3000001; do
		out=$(npumem 0 $size check)
		case $out in
		va=0x*" ok") ;;
		*) kp_why "$size bytes: $out"; return 1 ;;
		esac
	done
	[ "$(st allocs)" = "$a0" ] || { kp_why "allocs $(st allocs), was $a0"; return 1; }
}
kp_test npu-dev-copy-check t_npudev_check
t_npudev_owner_exit() {
	a0=$(st allocs)
	kp_holder $((2 * M2))
	va=$(sed -n 's/^va=//p' /tmp/hold.out)
	[ -n "$va" ] && [ "$(st allocs)" = $((a0 + 1)) ] ||
		{ kp_why "holder: $(cat /tmp/hold.out), allocs $(st allocs)"; kill $hp; return 1; }
	# another process's memory: a process with no NPU context is ESRCH,
	# one with memory of its own finds it in none of its heaps, EOPNOTSUPP
	hc "at ${va#0x};get 0 $M2" && hc_want "at va=$va" "get ret=-3" || { kill $hp; return 1; }
	hc "alloc 0 $M2;at ${va#0x};get 0 $M2" && hc_want "alloc ret=0" "at va=$va" "get ret=-95" ||
		{ kill $hp; return 1; }
	own=$(sed -n 's/^alloc ret=0 va=//p' /tmp/hc.log)
	hc "at ${own#0x};free" && hc_want "free ret=0" || { kill $hp; return 1; }
	kill -9 $hp
	wait $hp 2>/dev/null
	[ "$(st allocs)" = "$a0" ] || { kp_why "allocs $(st allocs) after the owner died"; return 1; }
}
kp_test npu-dev-owner-exit t_npudev_owner_exit

# krping_npu over NPU memory, both sides, each mode
t_npu_pair() {
	smem=$1 cmem=$2 extra=$3 want=$4
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT,mem=$smem,validate" "addr=$A,port=$PORT,mem=$cmem,$extra"
	[ "$SRV" = "ret=$SLEN" ] && [ "$CLI" = "ret=$CLEN" ] || { kp_why "srv=$SRV cli=$CLI"; return 1; }
	[ "$(kp_col $SID 4)" = "$smem" ] && [ "$(kp_col $CID 4)" = "$cmem" ] || { kp_why "mem columns"; return 1; }
	case $want in
	ping*) [ "$(kp_res $CID)" = "$want" ] && [ "$(kp_res $SID)" = "$want" ] ||
		{ kp_why "$(kp_res $SID) / $(kp_res $CID)"; return 1; } ;;
	bw) kp_check_bw "$(kp_res $CID)" "$5" "$6" || return 1 ;;
	*) kp_check_lat "$(kp_res $CID)" "$want" "$5" "$6" || return 1 ;;
	esac
	zero "$want"
}
# NPU memory behind a BAR on rxe: served through a memremap of it, or,
# where the kernel's RDMA core turns a virt-DMA device's addresses into
# struct pages (npu_bar_virt_dma, from the conftest), refused: a BAR has
# none.  Refused, the data tests from here run on RAM-backed HBM, which
# has, and the BAR round of the launcher tests is left out.
BAR_VIRT=$(cat /sys/module/krping_npu/parameters/npu_bar_virt_dma)
DATA=bar
t_bar_virt_dma() {
	case $BAR_VIRT in
	memremap) return 0 ;;
	refused) ;;
	*) kp_why "npu_bar_virt_dma '$BAR_VIRT'"; return 1 ;;
	esac
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT,mem=host" "addr=$A,port=$PORT,mem=npu,size=4096,count=1,validate"
	[ "$CLI" = errno=95 ] || { kp_why "client: want EOPNOTSUPP, got $CLI"; return 1; }
	n=$(dmesg | grep -c 'rxe0 is a virt-DMA device and this kernel.s RDMA core turns its addresses into struct pages (ib_virt_dma_to_page): NPU memory behind a BAR has none')
	[ "$n" = 1 ] || { kp_why "$n dmesg lines saying why, want 1"; return 1; }
	zero "the refusal" && kp_idle "the refusal" || return 1
	# npu_sim again, RAM-backed, under npu_peer_mem and hal_contract
	NPU_SIM_ARGS=backing=ram DATA=ram
	rmmod npu_peer_mem && rmmod hal_contract && kp_sim_reload backing=ram &&
		insmod $KP/hal_contract.ko && kp_peer_load ||
		{ kp_why "reloading npu_sim with backing=ram"; return 1; }
	R0=$(st refused) T0=$(st hal_tables)
	t_backing ram 0
}
kp_test npu-bar-virt-dma-$BAR_VIRT t_bar_virt_dma
kp_test npu-ping-4KiB t_npu_pair npu npu "size=4096,count=30,validate" "ping #bytes=4096 rounds=30 validated=yes"
kp_test npu-ping-1MiB t_npu_pair npu npu "size=1048576,count=5,validate" "ping #bytes=1048576 rounds=5 validated=yes"
kp_test npu-ping-3MiB-unaligned t_npu_pair npu npu "size=3000001,count=3,validate" "ping #bytes=3000001 rounds=3 validated=yes"
kp_test mixed-npu-client t_npu_pair host npu "size=65536,count=10,validate" "ping #bytes=65536 rounds=10 validated=yes"
kp_test mixed-npu-server t_npu_pair npu host "size=65536,count=10,validate" "ping #bytes=65536 rounds=10 validated=yes"
kp_test npu-rlat t_npu_pair npu npu "rlat,size=65536,count=100" rlat 65536 100
kp_test npu-wlat t_npu_pair npu npu "wlat,size=64,count=300" wlat 64 300
# wlat's plain variant polls the buffers, which NPU memory does not let
# the CPU do: NPU memory on either side makes both run the immediate-data
# variant, the server's by its answer to the client's hello
t_npu_wlat_variant() {
	t_npu_pair "$1" "$2" "wlat,size=64,count=100" wlat 64 100 || return 1
	[ "$(kp_num "$(kp_res $CID)" variant)" = imm ] ||
		{ kp_why "server mem=$1, client mem=$2: $(kp_res $CID)"; return 1; }
}
kp_test npu-wlat-imm-server-npu t_npu_wlat_variant npu host
kp_test npu-wlat-imm-client-npu t_npu_wlat_variant host npu
kp_test npu-bw t_npu_pair npu npu "bw,size=65536,count=200" bw 65536 200
kp_test npu-bw-duplex-mixed t_npu_pair host npu "bw,duplex,size=65536,count=100" bw 65536 100
# atomics on NPU memory through peer MRs, as a training job's one-sided
# sync uses them: the server's target and the client's sink in NPU
# memory, alat's compare-and-swaps (25 of 100 meant to fail) and a
# stream of fetch-and-adds, every value checked on both sides
t_npu_atomic() {
	kp_verbs_share || return
	for m in "alat,atomic=cas 100 25 cas alat" "bw,atomic=fadd 300 0 fadd bw_atomic"; do
		set -- $m
		PORT=$((PORT + 1))
		kp_pair "addr=$A,port=$PORT,mem=npu" "addr=$A,port=$PORT,mem=npu,$1,count=$2"
		[ "$SRV" = "ret=$SLEN" ] && [ "$CLI" = "ret=$CLEN" ] ||
			{ kp_why "$1: srv=$SRV cli=$CLI"; return 1; }
		[ "$(kp_col $SID 4)" = npu ] && [ "$(kp_col $CID 4)" = npu ] ||
			{ kp_why "mem columns: $(kp_rec $SID) / $(kp_rec $CID)"; return 1; }
		kp_atomics $CID $SID "$4" "$5" "$2" "$3" 1 || return 1
	done
	zero "the atomics"
}
kp_test npu-atomics t_npu_atomic

# validate over NPU memory: the client writes each message into its slot
# through the NPU buffer's shadow (at the slot's offset), the server reads
# each back the same way and checks every byte; 64 KiB messages: 16 slots
# on the server (1 MiB), 8 on the client, spanning their buffers' pages.
# Then bw,read, where the client checks what each READ brought, and
# bw,imm, where the server checks each WRITE in its NPU slot.
t_npu_validate() {
	kp_verbs_share || return
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT,mem=npu" "addr=$A,port=$PORT,mem=npu,bw,send,validate,size=65536,count=200"
	[ "$SRV" = "ret=$SLEN" ] && [ "$CLI" = "ret=$CLEN" ] || { kp_why "srv=$SRV cli=$CLI"; return 1; }
	[ "$(kp_res $SID)" = "bw_send served #bytes=65536 #messages=200 validated=yes" ] ||
		{ kp_why "server: $(kp_res $SID)"; return 1; }
	dmesg | grep -q "krping_npu $SID: bw_send: 200 messages validated, every byte against its number and its 0xff/0x00/0xaa/0x55 bands, 16 slots a connection" ||
		{ kp_why "no server line for 200 messages"; return 1; }
	dmesg | grep -q "krping_npu $CID: connection 0: 200 messages sent, each written in its pattern first, from 8 slots" ||
		{ kp_why "no client line for 200 messages"; return 1; }
	zero "the validated stream"
	# bw,read: the server's 16 slots written through its shadow once, the
	# client's 16 read from the NPU into the shadow as each READ retires
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT,mem=npu" "addr=$A,port=$PORT,mem=npu,bw,read,validate,size=65536,count=200"
	[ "$SRV" = "ret=$SLEN" ] && [ "$CLI" = "ret=$CLEN" ] || { kp_why "read: srv=$SRV cli=$CLI"; return 1; }
	dmesg | grep -q "krping_npu $SID: connection 0: 16 slots of 65536 bytes written in their patterns for the client's READs" ||
		{ kp_why "no server line for its 16 slots"; return 1; }
	dmesg | grep -q "krping_npu $CID: connection 0: 200 READs validated, every byte against the pattern of the server's slot it read (16 there, 16 here)" ||
		{ kp_why "no client line for 200 READs: $(dmesg | grep "krping_npu $CID: connection" | tail -1)"; return 1; }
	zero "the validated READ stream"
	# bw,imm: the client's WRITEs land in the server's 16 NPU slots, each
	# read back through the shadow as its immediate arrives
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT,mem=npu" "addr=$A,port=$PORT,mem=npu,bw,imm,validate,size=65536,count=200"
	[ "$SRV" = "ret=$SLEN" ] && [ "$CLI" = "ret=$CLEN" ] || { kp_why "imm: srv=$SRV cli=$CLI"; return 1; }
	dmesg | grep -q "krping_npu $SID: bw_imm: 200 messages validated, every byte against its number and its 0xff/0x00/0xaa/0x55 bands, 16 slots a connection" ||
		{ kp_why "no server line for 200 WRITEs in 16 slots"; return 1; }
	dmesg | grep -q "krping_npu $CID: connection 0: 200 messages sent, each written in its pattern first, from 8 slots into the server's 16, 8 in flight" ||
		{ kp_why "no client line for 200 WRITEs: $(dmesg | grep "krping_npu $CID: connection" | tail -1)"; return 1; }
	zero "the validated WRITE stream"
}
kp_test npu-validate t_npu_validate

# ud over NPU memory (ib_send_lat and ib_send_bw -c UD over a GPU's): a
# UD QP takes no fast-registration, so both sides' messages and receives
# reach the NPU pages by their DMA addresses under the local DMA lkey.
# The server counts every message of the client's, warm-up too (a UD
# receive that lands nowhere is dropped and fails the count); the stream
# is validated: the client writes each message into its NPU slot, the
# server reads every byte of each back from its own, behind the header;
# every page pinned for the buffers is given back.
t_npu_ud() {
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT,mem=npu,ud" "addr=$A,port=$PORT,mem=npu,slat,ud,size=1024,count=300,warmup=20"
	[ "$SRV" = "ret=$SLEN" ] && [ "$CLI" = "ret=$CLEN" ] || { kp_why "slat: srv=$SRV cli=$CLI"; return 1; }
	[ "$(kp_col $SID 4)" = npu ] && [ "$(kp_col $CID 4)" = npu ] ||
		{ kp_why "slat: mem columns: $(kp_rec $SID) / $(kp_rec $CID)"; return 1; }
	r=$(kp_res $CID | head -1)
	kp_check_lat "$r" slat 1024 300 || return 1
	[ "$(kp_num "$r" variant)" = ud ] || { kp_why "slat: $r"; return 1; }
	[ "$(kp_res $SID)" = "slat served #bytes=1024 #iterations=320" ] || { kp_why "slat: server $(kp_res $SID)"; return 1; }
	zero "slat over UD" || return 1
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT,mem=npu,ud" "addr=$A,port=$PORT,mem=npu,bw,send,ud,validate,size=1024,count=400,warmup=20"
	[ "$SRV" = "ret=$SLEN" ] && [ "$CLI" = "ret=$CLEN" ] || { kp_why "bw,send: srv=$SRV cli=$CLI"; return 1; }
	kp_check_bw "$(kp_res $CID | head -1)" 1024 400 bw_send || return 1
	[ "$(kp_res $SID)" = "bw_send served #bytes=1024 #messages=420 validated=yes" ] || { kp_why "bw,send: server $(kp_res $SID)"; return 1; }
	dmesg | grep -q "krping_npu $SID: bw_send: 420 messages validated, every byte against its number and its 0xff/0x00/0xaa/0x55 bands, [0-9]* slots a connection" ||
		{ kp_why "bw,send: no server line for 420 messages validated"; return 1; }
	zero "bw,send over UD" && kp_idle "UD over NPU memory"
}
kp_test npu-ud t_npu_ud

# rw over NPU memory: rdma_rw maps struct pages, which RAM-backed HBM has
# and a BAR has not.  Over RAM, rlat, bw,read and bw move it through
# rdma_rw and each size reads back as written (an unaligned 3 MB buffer
# too); over a BAR the client refuses before its hello, -EOPNOTSUPP,
# saying why.
t_npu_rw() {
	if [ "$1" = bar ]; then
		PORT=$((PORT + 1))
		kp_pair "addr=$A,port=$PORT,mem=npu" "addr=$A,port=$PORT,mem=npu,rlat,size=65536,count=10,rw"
		[ "$CLI" = errno=95 ] || { kp_why "client over a BAR: $CLI, want errno=95"; return 1; }
		n=$(dmesg | grep -c "krping_npu $CID: rw: NPU memory at .* is not system memory: rdma_rw maps struct pages, which it has none of")
		[ "$n" = 1 ] || { kp_why "$n lines saying why, want 1"; return 1; }
		zero "the refusal" && kp_idle "the refusal"
		return
	fi
	for m in "rlat 65536 100 rlat" "bw,read 1048576 20 bw_read" "bw 3000001 10 bw"; do
		set -- $m
		PORT=$((PORT + 1))
		kp_pair "addr=$A,port=$PORT,mem=npu" "addr=$A,port=$PORT,mem=npu,$1,size=$2,count=$3,rw"
		[ "$SRV" = "ret=$SLEN" ] && [ "$CLI" = "ret=$CLEN" ] ||
			{ kp_why "$1 $2: srv=$SRV cli=$CLI"; return 1; }
		case $4 in
		bw*) kp_check_bw "$(kp_res $CID)" "$2" "$3" "$4" || return 1 ;;
		*) kp_check_lat "$(kp_res $CID)" "$4" "$2" "$3" || return 1 ;;
		esac
		n=$(dmesg | grep -c "krping_npu $CID: rw: $2 bytes written and read back through rdma_rw, all as written")
		[ "$n" = 1 ] || { kp_why "$1 $2: $n check lines, want 1"; return 1; }
	done
	zero "rw" && kp_idle "rw"
}
kp_test npu-rw-$DATA t_npu_rw $DATA

# npu_launch: the memory is the writing process's own, carved by krping_npu
# from npu_va,npu_len; backends sim (/dev/npu_sim0) and acl (the runtime's
# calls, here tests/acl's libascendcl.so over /dev/npu_sim0)
NL="npu_launch --acl-lib /root/libascendcl.so"
# kp_lpair BACKEND "SERVER_OPTS" "CLIENT_OPTS" [CLIENT_LAUNCH_ARGS]
kp_lpair() {
	be=$1
	base=$(kp_last_id)
	$NL -b "$be" "server,$2" > /tmp/lsrv.out 2>&1 &
	spid=$!
	kp_listening "$base"
	$NL -b "$be" $4 "client,$3" > /tmp/lcli.out 2>&1
	CRC=$?
	wait $spid
	SRC=$?
	SID=$(kp_new_id "$base" server)
	CID=$(kp_new_id "$base" client)
}
# t_launch BACKEND CLIENT_OPTS WANT...: WANT a ping line, or MODE and the
# sizes of a sweep, each checked in its own result line
t_launch() {
	be=$1 extra=$2 want=$3
	shift 3
	PORT=$((PORT + 1))
	a0=$(st allocs)
	sv=
	case $extra in *validate*) sv=,validate ;; esac
	# a bound for the debug lane's KASAN kernel, where a 1 MiB write
	# into a BAR under TCG takes seconds
	kp_lpair "$be" "addr=$A,port=$PORT$sv,timeout=60000" "addr=$A,port=$PORT,$extra,timeout=60000"
	[ $CRC = 0 ] && [ $SRC = 0 ] && grep -q '^npu_launch: ok$' /tmp/lcli.out &&
		grep -q '^npu_launch: ok$' /tmp/lsrv.out ||
		{ kp_why "client $CRC: $(tail -3 /tmp/lcli.out | tr '\n' '|') server $SRC: $(tail -3 /tmp/lsrv.out | tr '\n' '|')"; return 1; }
	# the command carried the launcher's memory, in the NPU's window
	grep -q "^npu_launch: client,.*,mem=npu,npu_va=0x1000[0-9a-f]*,npu_len=[0-9]*$" /tmp/lcli.out &&
		grep -q "^npu_launch: $be device 0: " /tmp/lcli.out ||
		{ kp_why "command: $(grep '^npu_launch: ' /tmp/lcli.out | head -2 | tr '\n' '|')"; return 1; }
	[ "$(kp_col $SID 4)" = npu ] && [ "$(kp_col $CID 4)" = npu ] || { kp_why "mem columns"; return 1; }
	# the launcher printed its own test's records
	grep -q "^$CID  *client " /tmp/lcli.out && grep -q "^$SID  *server " /tmp/lsrv.out ||
		{ kp_why "records not printed"; return 1; }
	case $want in
	ping*) [ "$(kp_res $CID)" = "$want" ] && [ "$(kp_res $SID)" = "$want" ] ||
		{ kp_why "$(kp_res $SID) / $(kp_res $CID)"; return 1; } ;;
	*)	n=0
		for size in "$@"; do
			n=$((n + 1))
			line=$(kp_res $CID | sed -n "${n}p")
			if [ "$want" = bw ]; then
				kp_check_bw "$line" "$size" 50 || return 1
			else
				kp_check_lat "$line" "$want" "$size" 50 || return 1
			fi
		done
		[ "$(kp_res $CID | wc -l)" = $# ] || { kp_why "$(kp_res $CID | wc -l) results, want $#"; return 1; } ;;
	esac
	[ "$(st allocs)" = "$a0" ] || { kp_why "allocs $(st allocs), was $a0"; return 1; }
	zero "$want" && kp_idle "$want"
}
SWEEP=64:4096:1048576:5000
# launch_matrix LABEL [WHY]: each mode and size through both backends, or
# with WHY, each of them a SKIP for that reason
launch_matrix() {
	lm() {	# NAME ARGS...
		if [ -n "$why" ]; then kp_skip "$1" "$why"; else kp_test "$@"; fi
	}
	why=${2:-}
	for be in sim acl; do
		lm launch-$1-$be-ping-64B t_launch $be "size=64,count=20,validate" "ping #bytes=64 rounds=20 validated=yes"
		lm launch-$1-$be-ping-4KiB t_launch $be "size=4096,count=20,validate" "ping #bytes=4096 rounds=20 validated=yes"
		lm launch-$1-$be-ping-1MiB t_launch $be "size=1048576,count=4,validate" "ping #bytes=1048576 rounds=4 validated=yes"
		lm launch-$1-$be-ping-5000B t_launch $be "size=5000,count=20,validate" "ping #bytes=5000 rounds=20 validated=yes"
		lm launch-$1-$be-rlat-sweep t_launch $be "rlat,sizes=$SWEEP,count=50" rlat 64 4096 1048576 5000
		lm launch-$1-$be-wlat-sweep t_launch $be "wlat,sizes=$SWEEP,count=50" wlat 64 4096 1048576 5000
		lm launch-$1-$be-bw-sweep t_launch $be "bw,sizes=$SWEEP,count=50" bw 64 4096 1048576 5000
	done
}
# make test's quick lanes run the matrix once, in 4 KiB HAL pages
# (KP_LAUNCH_ONE, tests/drivers/test-matrix); make test-matrix all three
LAUNCH_ONE=
[ -z "${KP_LAUNCH_ONE:-}" ] || LAUNCH_ONE="make test runs the launcher matrix once on this kernel (launch-4k-*); make test-matrix all of it"
if [ $DATA != bar ]; then launch_matrix bar "BAR-backed NPU memory is refused on rxe here (6.3 on: virt_to_page)"
else launch_matrix bar "$LAUNCH_ONE"; fi

# the launcher reads numbers as the grammar does (size=04000000 is four
# million, not octal 1 MiB) and sizes its region for every connection;
# regions are whole 2 MiB pages, so only sizes past them tell
t_launch_sizes() {
	t_launch sim "size=04000000,count=2,validate" "ping #bytes=4000000 rounds=2 validated=yes" || return 1
	# two buffers of 4000000 bytes in 4 KiB pieces, in 2 MiB pages
	grep -q "^npu_launch: client,.*,npu_len=8388608$" /tmp/lcli.out ||
		{ kp_why "command: $(grep '^npu_launch: client' /tmp/lcli.out)"; return 1; }
}
kp_test launch-decimal-size t_launch_sizes
t_launch_qps() {
	PORT=$((PORT + 1))
	kp_lpair sim "addr=$A,port=$PORT,timeout=60000" "addr=$A,port=$PORT,bw,qps=2,size=2097152,count=10,timeout=60000"
	[ $CRC = 0 ] && [ $SRC = 0 ] && grep -q '^npu_launch: ok$' /tmp/lcli.out ||
		{ kp_why "client $CRC: $(tail -3 /tmp/lcli.out | tr '\n' '|') server $SRC: $(tail -3 /tmp/lsrv.out | tr '\n' '|')"; return 1; }
	grep -q "^npu_launch: client,.*,npu_len=4194304$" /tmp/lcli.out ||
		{ kp_why "command: $(grep '^npu_launch: client' /tmp/lcli.out)"; return 1; }
	[ "$(kp_qp $CID | wc -l)" = 2 ] || { kp_why "qp lines: $(kp_qp $CID | tr '\n' '|')"; return 1; }
	zero "launch qps=2" && kp_idle "launch qps=2"
}
kp_test launch-bw-qps2 t_launch_qps

# kp_srv_bg: a host-memory server on a new $PORT, in the background ($spid)
kp_srv_bg() {
	PORT=$((PORT + 1))
	base=$(kp_last_id)
	kpwrite "server,addr=$A,port=$PORT" > /tmp/lsrv.out 2>&1 &
	spid=$!
	kp_listening "$base"
}
# npu_va,npu_len too small for the test's buffers: ENOSPC, named
t_launch_short() {
	kp_srv_bg
	out=$($NL -b sim -l $M2 "client,addr=$A,port=$PORT,size=1500000,count=1")
	wait $spid
	echo "$out" | grep -q '^npu_launch: errno=28 ' || { kp_why "$(echo "$out" | tail -2 | tr '\n' '|')"; return 1; }
	dmesg | grep -q "npu_len=2097152: 593920 bytes left at 0x1000[0-9a-f]*, the rdma buffer needs 1503232" ||
		{ kp_why "no dmesg line"; return 1; }
	zero "short region" && kp_idle "short region"
}
kp_test launch-region-too-short t_launch_short
# what the launcher refuses before allocating: exit status 2, saying why
t_launch_refuses() {
	for c in mem=host npu_va=0x200000 npu_len=4096 npu_dev=0; do
		out=$($NL -b sim "client,addr=$A,port=9,$c" 2>&1)
		rc=$?
		[ $rc = 2 ] && echo "$out" | grep -q "the command may not give them" ||
			{ kp_why "$c: rc $rc: $out"; return 1; }
	done
	out=$(npu_launch -b acl --acl-lib /nonexistent/libascendcl.so "client,addr=$A,port=9" 2>&1)
	rc=$?
	[ $rc = 2 ] && echo "$out" | grep -q "/nonexistent/libascendcl.so: cannot open" ||
		{ kp_why "no runtime: rc $rc: $out"; return 1; }
	out=$($NL -b sim -d 7 "client,addr=$A,port=9" 2>&1)
	rc=$?
	[ $rc = 2 ] && echo "$out" | grep -q "/dev/npu_sim7: No such file" ||
		{ kp_why "no device 7: rc $rc: $out"; return 1; }
	[ "$(st allocs)" = 0 ] || { kp_why "allocs $(st allocs)"; return 1; }
}
kp_test launch-refuses t_launch_refuses
# somebody else's memory: the HAL refuses it in the writer's context
t_launch_not_owner() {
	kp_holder $M2
	va=$(sed -n 's/^va=//p' /tmp/hold.out)
	kp_srv_bg
	out=$(kpwrite "client,addr=$A,port=$PORT,count=1,mem=npu,npu_va=$va,npu_len=$M2")
	wait $spid
	kill -9 $hp
	wait $hp 2>/dev/null
	# the writer has no NPU context of its own: ESRCH, as the driver
	[ "$out" = "errno=3" ] || { kp_why "another's memory: $out"; return 1; }
	dmesg | tail -20 | grep -q "get_pages: -3" || { kp_why "no get_pages line"; return 1; }
	zero "another's memory" && kp_idle "another's memory"
}
kp_test launch-other-process-memory t_launch_not_owner

# The owner frees its memory in the middle of a test (another thread of
# the writing process): krping_npu's free callback moves the QP to error
# before the memory is poisoned; the test fails with EFAULT naming the
# buffer; nothing is left; and no byte of the freed memory is written
# afterwards: reallocated, it still holds the poison everywhere.
# $1: who owns the memory (server or client), $2: the client's test, $3:
# the buffer told first (a ping client's start buffer was registered first),
# $4: the launcher's backend (sim; acl frees from a thread of its own
# after taking the device's context), $5: the server's own options
t_launch_freed() {
	who=$1 test=$2 buf=$3 be=${4:-sim} sopt=${5:-}
	PORT=$((PORT + 1))
	base=$(kp_last_id)
	if [ $who = server ]; then
		$NL -b $be -l $((4 * M2)) --free-after 1500 "server,addr=$A,port=$PORT$sopt" > /tmp/lsrv.out 2>&1 &
	else
		kpwrite "server,addr=$A,port=$PORT$sopt" > /tmp/lsrv.out 2>&1 &
	fi
	spid=$!
	kp_listening "$base"
	if [ $who = server ]; then
		kpwrite "client,addr=$A,port=$PORT,$test" > /tmp/lcli.out 2>&1
	else
		$NL -b $be -l $((4 * M2)) --free-after 1500 "client,addr=$A,port=$PORT,$test" > /tmp/lcli.out 2>&1
	fi
	wait $spid
	SID=$(kp_new_id "$base" server)
	CID=$(kp_new_id "$base" client)
	[ $who = server ] && { own=/tmp/lsrv.out; id=$SID; } || { own=/tmp/lcli.out; id=$CID; }
	grep -q '^npu_launch: freed 0x.* after 1500 ms: 0$' $own &&
		grep -q '^npu_launch: errno=14 ' $own ||
		{ kp_why "owner: $(tail -4 $own | tr '\n' '|')"; return 1; }
	[ "$(kp_res $id)" = "error=-14 npu_freed=$buf" ] || { kp_why "result: $(kp_res $id)"; return 1; }
	dmesg | grep -q "krping_npu $id: NPU buffer $buf at 0x.* freed under the test: stopped its DMA" ||
		{ kp_why "no dmesg line"; return 1; }
	va=$(sed -n "s/^npu_launch: $be device 0: [0-9]* bytes at //p" $own)
	out=$(npumem 0 $((4 * M2)) poisoned)
	[ "$out" = "va=$va other=0" ] || { kp_why "freed memory at $va written afterwards: $out"; return 1; }
	zero "freed under $test" && kp_idle "freed under $test"
}
kp_test launch-server-frees-mid-bw t_launch_freed server "bw,size=1048576,duration=20" rdma
kp_test launch-client-frees-mid-ping t_launch_freed client "size=1048576,count=1000000,validate" start
kp_test launch-client-frees-mid-rlat t_launch_freed client "rlat,size=1048576,duration=20" rdma acl
# receives posted on the NPU buffer when it goes: none may land after
kp_test launch-server-frees-mid-bw-send t_launch_freed server "bw,send,size=1048576,duration=20" rdma
kp_test launch-client-frees-mid-slat t_launch_freed client "slat,size=1048576,duration=20" rdma
# ud: the receives on the NPU buffer take whatever arrives, with no
# flow control: none may land once it went; UD tells the peer nothing,
# which ends at its timeout (1 s)
kp_test launch-server-frees-mid-ud-slat t_launch_freed server "slat,ud,size=1024,duration=20,timeout=1000" rdma sim ",ud"
kp_test launch-client-frees-mid-ud-slat t_launch_freed client "slat,ud,size=1024,duration=20" rdma sim ",ud,timeout=1000"
# NPU memory freed mid-bw, $1 rounds: by the client (its buffer is the
# WRITEs' source) or by the server (their sink), two rounds each in turn,
# the freeing launcher's test on one vCPU and its freeing thread alone on
# the other (--free-cpu; beside a busy-polling test it would wait for the
# CPU), the other launcher beside the test, swapped every round; the free
# comes 60-239 ms after the launcher starts
# (earlier, the client has not connected yet and its server waits out its
# timeout).  Once a free callback has returned the device may not touch
# the memory (rxe from 6.4 works in a workqueue, on either vCPU): npu_sim
# poisons freed HBM (0x6b), so poison read after a client's free shows in
# the server's buffer (--scan), and a write landing after a server's free
# shows as other bytes in the freed memory.  How long connecting and
# registering take depends on the machine, so the window follows it: a
# free that came before the test ran moves the next ones 40 ms later, one
# that met the test 10 ms earlier, which keeps about one round in five
# freeing during the setup (get_pages, the hello) on any machine.
t_race_free_bw() {
	rounds=$1 r=0 mid=0 off=0
	while [ $r -lt "$rounds" ]; do
		PORT=$((PORT + 1))
		base=$(kp_last_id)
		ms=$((60 + off + r * 37 % 180))
		w=$((r % 2)) f=$((1 - r % 2))	# the freer's test CPU, its free thread's
		fs="taskset $((1 << w))" fc="taskset $((1 << w))"
		if [ $((r / 2 % 2)) = 0 ]; then
			who=client fc="taskset $((1 << w)) $NL --free-after $ms --free-cpu $f" fs="$fs $NL"
		else
			who=server fs="taskset $((1 << w)) $NL --free-after $ms --free-cpu $f" fc="$fc $NL"
		fi
		$fs -b sim -l $((4 * M2)) --scan 0x6b "server,addr=$A,port=$PORT" > /tmp/rs.out 2>&1 &
		spid=$!
		i=0
		while [ -z "$(kp_new_id "$base" server)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		$fc -b sim -l $((4 * M2)) "client,addr=$A,port=$PORT,bw,size=65536,duration=5" > /tmp/rc.out 2>&1
		wait $spid
		[ $who = client ] && own=/tmp/rc.out || own=/tmp/rs.out
		grep -q "^npu_launch: freed 0x.* after $ms ms: 0\$" $own ||
			{ kp_why "round $r: the $who did not free: $(tail -3 $own | tr '\n' '|')"; return 1; }
		if grep -q 'npu_freed=' $own; then
			mid=$((mid + 1))
			[ $off -lt 10 ] || off=$((off - 10))
		else
			[ $off -ge 2000 ] || off=$((off + 40))
		fi
		if [ $who = client ]; then
			grep -q '^npu_launch: scan 0x6b: 0 of [0-9]* bytes$' /tmp/rs.out ||
				{ kp_why "round $r: freed memory crossed the wire: $(grep scan /tmp/rs.out)"; return 1; }
		else
			va=$(sed -n 's/^npu_launch: sim device 0: [0-9]* bytes at //p' /tmp/rs.out)
			out=$(npumem 0 $((4 * M2)) poisoned)
			[ "$out" = "va=$va other=0" ] ||
				{ kp_why "round $r: freed memory at $va written afterwards: $out"; return 1; }
		fi
		zero "round $r" && kp_idle "round $r" || return 1
		r=$((r + 1))
	done
	kp_log "race-free-mid-bw: $rounds rounds, $mid freed under a running test, the last 60+$off..$((239 + off)) ms in"
	# most frees must have met a running test, or nothing raced
	[ $((mid * 2)) -ge "$rounds" ] || { kp_why "only $mid of $rounds frees met a running test"; return 1; }
}
kp_test race-free-mid-bw t_race_free_bw "${KP_FREE_ROUNDS:-100}"
# The owner is killed mid-test: the write is interrupted, the test ends,
# then the process's memory goes; nothing is left.  $1: the client's test
t_launch_killed() {
	kp_srv_bg
	$NL -b acl "client,addr=$A,port=$PORT,$1" > /tmp/lcli.out 2>&1 &
	lp=$!
	# the state it dies in: connected, the client's test streaming
	kp_moving client "$base" || { kill -9 $lp; wait $lp; wait $spid; return 1; }
	kill -9 $lp
	wait $lp 2>/dev/null
	wait $spid
	CID=$(kp_new_id "$base" client)
	# its write interrupted by the kill: -EINTR, as any stopped wait
	[ "$(kp_res $CID)" = "error=-4" ] || { kp_why "client result: $(kp_res $CID)"; return 1; }
	[ "$(st allocs)" = 0 ] || { kp_why "allocs $(st allocs) after the owner died"; return 1; }
	zero "owner killed" && kp_idle "owner killed"
}
kp_test launch-owner-killed-mid-bw t_launch_killed "bw,size=65536,duration=20"
kp_test launch-owner-killed-mid-ping t_launch_killed "size=65536,count=1000000,validate"

t_npu_dev_range() {
	out=$(kpwrite "client,addr=$A,port=9,mem=npu,npu_dev=3,count=1")
	[ "$out" = "errno=19" ] || { kp_why "want ENODEV, got $out"; return 1; }
	dmesg | grep -q "npu_dev=3: the NPU has 1 device" || { kp_why "no dmesg line"; return 1; }
}
kp_test npu-dev-out-of-range t_npu_dev_range

t_unload_no_core() {
	rmmod npu_peer_mem || { kp_why "rmmod"; return 1; }
}
kp_test unload-no-core t_unload_no_core
# a table never put is counted while its memory is freed, and named at unload
t_hc_missing_put() {
	hc "alloc 0 $M2;get 0 $M2;free;forget 0" &&
	hc_want "get ret=0 slot=0" "callback slot=0 put=0" "free ret=0" "forget slot=0" || return 1
	[ "$(st freed_unput)" = 1 ] && [ "$(st hal_tables)" = $((T0 + 1)) ] ||
		{ kp_why "freed_unput $(st freed_unput) tables $(st hal_tables)"; return 1; }
}
kp_test hal-contract-missing-put t_hc_missing_put
# the table hal-contract-missing-put never put: named when npu_sim goes
t_hc_leak_at_unload() {
	rmmod hal_contract && rmmod npu_sim || { kp_why "rmmod"; return 1; }
	dmesg | grep -q "npu_sim: 1 page table(s) never put (a leak on the Ascend driver)" ||
		{ kp_why "no leak line at unload"; return 1; }
}
kp_test hal-contract-leak-at-unload t_hc_leak_at_unload
# what a process may do through /dev/npu_sim0 is bounded
t_npudev_limits() {
	insmod $KP/npu_sim.ko page_size=4096 || { kp_why "insmod npu_sim"; return 1; }
	kp_holder 4096
	va=$(sed -n 's/^va=//p' /tmp/hold.out)
	out=$(npumem 0 4096 limits "$va")
	kill -9 $hp
	wait $hp 2>/dev/null
	# 64 allocations, then ENOSPC; past the end and another's: EFAULT, ENOENT
	[ "$out" = "allocs=64 errno=28 past=14 read=14 free=2" ] || { kp_why "$out"; return 1; }
	[ "$(st allocs)" = 0 ] || { kp_why "allocs $(st allocs)"; return 1; }
	rmmod npu_sim || { kp_why "rmmod npu_sim"; return 1; }
}
kp_test npu-dev-limits t_npudev_limits
# kv KEY LINE: the value of KEY=value in npumem's LINE
kv() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# A copy holds its allocation, not its address: process A copies its 2 MiB
# to and from NPU memory over and over while another thread of A frees and
# re-allocates it, and process B takes the address A freed, checks what is
# in it, writes its own marker and reads it back.  $1 runs of $2 s, each
# layout of A's copy thread, A's free thread and B over both CPUs in turn
# (npumem race ... CFB).  No byte of one may reach the other, and A's
# copies must both succeed and fail (EFAULT), B take A's address: else the
# race was not run.
t_npudev_copy_race() {
	runs=$1 secs=$2
	kp_sim_reload backing=ram || { kp_why "insmod npu_sim backing=ram"; return 1; }
	ok=0 failed=0 took=0 i=0 bad=
	while [ $i -lt "$runs" ]; do
		cpus=$(echo 001 110 010 101 011 100 | cut -d' ' -f$((i % 6 + 1)))
		out=$(npumem 0 $M2 race "$secs" $cpus)
		rc=$?
		case "$out" in
		"crossings=0 a_read_b=0 b_read_a=0 junk=0 err=0 "*" hung=0") ;;
		*) bad="run $i (CPUs $cpus, rc $rc): $out"; break ;;
		esac
		[ $rc = 0 ] || { bad="run $i (CPUs $cpus): rc $rc: $out"; break; }
		ok=$((ok + $(kv a_ok "$out")))
		failed=$((failed + $(kv a_failed "$out")))
		took=$((took + $(kv b_took "$out")))
		i=$((i + 1))
	done
	kp_log "npu-dev-copy-race: $i of $runs runs of $secs s: A's copies $ok whole, $failed stopped, B took A's freed address $took times"
	a=$(st allocs)
	rmmod npu_sim || { kp_why "rmmod npu_sim"; return 1; }
	[ -z "$bad" ] || { kp_why "$bad"; return 1; }
	[ "$ok" -gt 0 ] && [ "$failed" -gt 0 ] && [ "$took" -gt 0 ] ||
		{ kp_why "the race did not run: copies $ok whole, $failed stopped; B took A's address $took times"; return 1; }
	[ "$a" = 0 ] || { kp_why "allocs $a after the runs"; return 1; }
}
# make test's matrix lanes run it shorter (lane.env); the work tree's whole
kp_test npu-dev-copy-race t_npudev_copy_race "${KP_RACE_RUNS:-12}" "${KP_RACE_SECS:-3}"
# Limits per user (uid) besides the per-file one: npu_sim's parameters $1
# (set at run time), a process of root's holding 2 MiB; another of root's
# allocates 2 MiB through one file until refused, through a second file
# (refused), frees one of the first's (the second's then gets one, and
# is refused again); a file of uid 65534 is not refused.  $2: npumem's line
t_npudev_user_limit() {
	kp_sim_reload backing=ram || { kp_why "insmod npu_sim backing=ram"; return 1; }
	par=/sys/module/npu_sim/parameters
	d="$(cat $par/user_allocs 2>&1) $(cat $par/user_mb 2>&1)"
	[ "$d" = "256 0" ] || { kp_why "defaults user_allocs user_mb: $d"; rmmod npu_sim; return 1; }
	for p in $1; do
		echo "${p#*=}" > "$par/${p%%=*}" || { kp_why "set $p"; rmmod npu_sim; return 1; }
	done
	kp_holder $M2
	out=$(npumem 0 $M2 users)
	kill -9 $hp
	wait $hp 2>/dev/null
	a=$(st allocs)
	rmmod npu_sim || { kp_why "rmmod npu_sim"; return 1; }
	grep -q va= /tmp/hold.out || { kp_why "holder: $(cat /tmp/hold.out)"; return 1; }
	# ENOSPC (28), as the per-file limit
	[ "$out" = "$2" ] || { kp_why "$1: $out, want $2"; return 1; }
	[ "$a" = 0 ] || { kp_why "allocs $a after the processes"; return 1; }
}
kp_test npu-dev-user-allocs t_npudev_user_limit "user_allocs=3" \
	"file1=2 errno=28 file2=28 after_free=0 again=28 other_uid=0"
kp_test npu-dev-user-mb t_npudev_user_limit "user_allocs=0 user_mb=4" \
	"file1=1 errno=28 file2=28 after_free=0 again=28 other_uid=0"

# npu_peer_mem under a stand-in core; $1 core module, $2 npu_peer_mem args,
# $3 expected abi, $4 size, $5 tail as the core sees it
t_core_load() {
	core=$1 args=$2 abi=$3 size=$4 tail=$5
	insmod $KP/$core.ko || { kp_why "insmod $core"; return 1; }
	kp_peer_load $args || { kp_why "insmod npu_peer_mem $args"; return 1; }
	line=$(dmesg | grep "npu_peer_mem: registered with" | tail -1)
	case "$line" in *"registered with $core: abi $abi, struct $size bytes"*) ;;
		*) kp_why "load line: $line"; return 1 ;; esac
	[ "$(st abi)" = "$abi" ] && [ "$(st struct_size)" = "$size" ] || { kp_why "stats abi"; return 1; }
	[ "$(cst $core client)" = npu_peer_mem ] || { kp_why "core saw no client"; return 1; }
	[ "$(cst $core get_context_private_data)" = "$tail" ] &&
		[ "$(cst $core put_context_private_data)" = "$tail" ] ||
		{ kp_why "core sees tail $(cst $core get_context_private_data), want $tail"; return 1; }
}

# register, check the call order's result, 1000 cycles, deregister
t_core_cycles() {
	core=$1
	ctl $core "alloc $MB4" || { kp_why "alloc"; return 1; }
	va=$(cst $core last_va)
	ctl $core "reg ${va#0x} $MB4" || { kp_why "reg"; return 1; }
	[ "$(cst $core last_page_size)" = 2097152 ] && [ "$(cst $core last_nmap)" = 2 ] ||
		{ kp_why "page size $(cst $core last_page_size) nmap $(cst $core last_nmap)"; return 1; }
	[ "$(st contexts)" = 1 ] && [ "$(st mappings)" = 1 ] && [ "$(st pinned_pages)" = 2 ] ||
		{ kp_why "one registration: $(tr '\n' ' ' < $ST)"; return 1; }
	ctl $core "dereg $(cst $core last_id)" || { kp_why "dereg"; return 1; }
	ctl $core "cycles 1000 ${va#0x} $MB4" || { kp_why "1000 cycles"; return 1; }
	[ "$(cst $core mrs)" = 0 ] || { kp_why "mrs left"; return 1; }
	ctl $core "free ${va#0x}" || { kp_why "free"; return 1; }
	zero "1000 cycles"
	[ "$(st invalidations)" = 0 ] || { kp_why "invalidations without a free"; return 1; }
}

# registrations that are not whole NPU pages (the driver rounds the
# length up and gives its table from the page the start sits on): 3 MiB +
# 1 at 0x801, 1 MiB + 4 KiB, 3 MiB, 4 KiB at 0x5000 (off the huge page: the
# second ask); each mapped in exactly the 2 MiB pages
# it lies in, and the HAL asked for no more
t_core_partial() {
	core=$1
	ctl $core "alloc $MB4" && va=$(cst $core last_va) || { kp_why "alloc"; return 1; }
	for spec in "2049 3145729 2" "0 1052672 1" "0 3145728 2" "20480 4096 1"; do
		set -- $spec
		ctl $core "reg $(printf %x $((va + $1))) $2" || { kp_why "reg +$1 $2: $(dmesg | tail -3 | tr '\n' '|')"; return 1; }
		[ "$(cst $core last_nmap)" = $3 ] && [ "$(st pinned_pages)" = $3 ] && [ "$(st hal_pages)" = $3 ] ||
			{ kp_why "+$1 $2: nmap $(cst $core last_nmap) pinned $(st pinned_pages) HAL $(st hal_pages), want $3"; return 1; }
		ctl $core "dereg $(cst $core last_id)" || { kp_why "dereg +$1 $2"; return 1; }
	done
	ctl $core "free ${va#0x}" || { kp_why "free"; return 1; }
	zero "partial pages"
}

# free the memory under a live registration: exactly one invalidation
t_core_free_live() {
	core=$1
	inv0=$(st invalidations); cinv0=$(cst $core invalidations)
	ctl $core "alloc $MB4" && va=$(cst $core last_va) &&
		ctl $core "reg ${va#0x} $MB4" || { kp_why "alloc/reg"; return 1; }
	id=$(cst $core last_id)
	ctl $core "free ${va#0x}" || { kp_why "free"; return 1; }
	[ $(($(st invalidations) - inv0)) = 1 ] && [ $(($(cst $core invalidations) - cinv0)) = 1 ] ||
		{ kp_why "invalidations: client $(st invalidations) core $(cst $core invalidations)"; return 1; }
	# the HAL table stays until put_pages: inside the invalidation
	# (deferred) on a core that unmaps there, at deregistration otherwise
	pinned=2
	[ "$(cst $core unmap_in_invalidate)" = 1 ] && pinned=0
	[ "$(st mappings)" = 0 ] && [ "$(st pinned_pages)" = $pinned ] && [ "$(st allocs)" = 0 ] ||
		{ kp_why "after free: $(tr '\n' ' ' < $ST)"; return 1; }
	[ "$(st contexts)" = 1 ] || { kp_why "the context goes with deregistration"; return 1; }
	ctl $core "dereg $id" || { kp_why "dereg after invalidation"; return 1; }
	zero "free under registration"
}

# put_pages refused by the HAL (npu_sim fail_put=2): the table stays held
# and is put again 100 ms later, until the HAL takes it; then memory freed
# under no table calls nobody back
t_put_refused() {
	core=$1
	f0=$(st put_failures) r0=$(st put_refused) inv0=$(st invalidations)
	ctl $core "alloc $MB4" && va=$(cst $core last_va) &&
		ctl $core "reg ${va#0x} $MB4" || { kp_why "alloc/reg"; return 1; }
	echo 2 > /sys/module/npu_sim/parameters/fail_put || { kp_why "fail_put"; return 1; }
	ctl $core "dereg $(cst $core last_id)" || { kp_why "dereg"; return 1; }
	i=0
	while [ "$(st hal_tables)" != 0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ $(($(st put_failures) - f0)) = 2 ] && [ $(($(st put_refused) - r0)) = 2 ] &&
		[ "$(st leaked_tables)" = 0 ] ||
		{ kp_why "refusals: client $(st put_failures) HAL $(st put_refused) leaked $(st leaked_tables)"; return 1; }
	dmesg | grep -q "npu_peer_mem: put_pages refused (-16) for $va, try 3 of 10 in 100 ms" ||
		{ kp_why "no retry line"; return 1; }
	ctl $core "free ${va#0x}" || { kp_why "free"; return 1; }
	[ "$(st invalidations)" = "$inv0" ] || { kp_why "a callback after the put: $(st invalidations)"; return 1; }
	zero "refused put_pages"
}

# put_pages refused past its tries (fail_put=12: the driver's answer while
# it unloads): the table is kept, counted and said so, and a write to
# retry_puts puts it once the HAL takes it again; nothing is left
t_put_kept() {
	core=$1
	ctl $core "alloc $MB4" && va=$(cst $core last_va) &&
		ctl $core "reg ${va#0x} $MB4" || { kp_why "alloc/reg"; return 1; }
	echo 12 > /sys/module/npu_sim/parameters/fail_put || { kp_why "fail_put"; return 1; }
	ctl $core "dereg $(cst $core last_id)" || { kp_why "dereg"; return 1; }
	i=0
	while [ "$(st leaked_tables)" != 1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(st leaked_tables)" = 1 ] && [ "$(st hal_tables)" = 1 ] && [ "$(st contexts)" = 1 ] ||
		{ kp_why "after 10 refusals: leaked $(st leaked_tables) HAL tables $(st hal_tables) contexts $(st contexts)"; return 1; }
	dmesg | grep -q "npu_peer_mem: put_pages refused 10 times (last -16) for $va: the table is kept" ||
		{ kp_why "no 'kept' line"; return 1; }
	echo 0 > /sys/module/npu_sim/parameters/fail_put
	echo 1 > /sys/kernel/debug/npu_peer_mem/retry_puts || { kp_why "retry_puts"; return 1; }
	i=0
	while [ "$(st hal_tables)" != 0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(st leaked_tables)" = 0 ] || { kp_why "leaked $(st leaked_tables) after the retry"; return 1; }
	dmesg | grep -q "npu_peer_mem: 1 kept table(s) put again" || { kp_why "no retry line"; return 1; }
	ctl $core "free ${va#0x}" || { kp_why "free"; return 1; }
	zero "a kept table put again"
}

# rmmod with a registration outstanding is refused; after it, it works
t_core_rmmod() {
	core=$1
	ctl $core "alloc $MB4" && va=$(cst $core last_va) &&
		ctl $core "reg ${va#0x} $MB4" || { kp_why "alloc/reg"; return 1; }
	rmmod npu_peer_mem 2>/dev/null && { kp_why "rmmod succeeded with a live registration"; return 1; }
	[ -d /sys/module/npu_peer_mem ] || { kp_why "module gone"; return 1; }
	ctl $core "dereg $(cst $core last_id)" && ctl $core "free ${va#0x}" || { kp_why "cleanup"; return 1; }
	zero "rmmod refusal"
	ctl $core refuse_test || { kp_why "core took a client without dma_map"; return 1; }
	rmmod npu_peer_mem || { kp_why "rmmod after deregistration"; return 1; }
	rmmod $core || { kp_why "rmmod $core"; return 1; }
}

# the MOFED section's NPU is RAM-backed: the launcher over RAM there
NPU_SIM_ARGS=backing=ram
kp_test mofed-load-auto t_core_load mofed_core_sim "" mofed 136 unread
kp_test mofed-symbols-are-entries t_core_symbols mofed_core_sim
kp_test npu-sim-ram-backed t_backing ram 0
launch_matrix ram "$LAUNCH_ONE"
kp_test mofed-cycles t_core_cycles mofed_core_sim
kp_test mofed-partial-pages t_core_partial mofed_core_sim
kp_test mofed-free-invalidates-once t_core_free_live mofed_core_sim
kp_test mofed-put-refused-retried t_put_refused mofed_core_sim
kp_test mofed-put-kept-retried t_put_kept mofed_core_sim
# krping_npu's own registrations beside the core's: the owner's free still stops the test
kp_test mofed-launch-server-frees-mid-bw t_launch_freed server "bw,size=1048576,duration=20" rdma
kp_test mofed-launch-client-frees-mid-ping t_launch_freed client "size=65536,count=1000000,validate" start
# rw over RAM-backed HBM on every kernel, beside the core's registrations
kp_test mofed-npu-rw t_npu_rw ram
kp_test mofed-rmmod t_core_rmmod mofed_core_sim

# the data backing again (a BAR, where rxe is given BAR memory)
[ $DATA = bar ] && NPU_SIM_ARGS=
t_sim_data_again() {
	kp_sim_reload $NPU_SIM_ARGS || { kp_why "npu_sim reload"; return 1; }
	if [ $DATA = bar ]; then t_backing bar 1; else t_backing ram 0; fi
}
kp_test npu-sim-$DATA-again t_sim_data_again
kp_test xsc-load-auto t_core_load xsc_core_sim "" yunscale 152 null
kp_test xsc-cycles t_core_cycles xsc_core_sim
kp_test xsc-partial-pages t_core_partial xsc_core_sim
kp_test xsc-free-invalidates-once t_core_free_live xsc_core_sim
# krping_npu's own registrations beside the core's: the owner's free still stops the test
kp_test xsc-launch-server-frees-mid-bw t_launch_freed server "bw,size=1048576,duration=20" rdma
kp_test xsc-launch-client-frees-mid-ping t_launch_freed client "size=65536,count=1000000,validate" start
kp_test xsc-rmmod t_core_rmmod xsc_core_sim

kp_test xsc-abi-stubs t_core_load xsc_core_sim "abi_stubs=1" yunscale 152 set
kp_test xsc-abi-stubs-cycles t_core_cycles xsc_core_sim
kp_test xsc-abi-stubs-rmmod t_core_rmmod xsc_core_sim

# MOFED layout forced onto an xsc core: the tail it reads is zero, not junk
kp_test xsc-forced-mofed t_core_load xsc_core_sim "abi=mofed" mofed 136 null
kp_test xsc-forced-mofed-cycles t_core_cycles xsc_core_sim
kp_test xsc-forced-mofed-rmmod t_core_rmmod xsc_core_sim

# the xsc call order against a core that unmaps inside its invalidate callback
t_load_mode() {
	insmod $KP/$1.ko $2 || { kp_why "insmod $1 $2"; return 1; }
	if [ -n "$3" ]; then kp_sim_reload $3 || { kp_why "npu_sim $3"; return 1; }; fi
	kp_peer_load || { kp_why "insmod npu_peer_mem"; return 1; }
}
kp_test xsc-unmap-inside-load t_load_mode xsc_core_sim unmap_in_invalidate=1 ""
kp_test xsc-unmap-inside-free t_core_free_live xsc_core_sim
kp_test xsc-unmap-inside-rmmod t_core_rmmod xsc_core_sim

# a DMA-capable device (dma_map_page) and 4 KiB NPU pages
kp_test realdma-load t_load_mode mofed_core_sim real_dma=1 "page_size=4096"
t_realdma() {
	core=mofed_core_sim
	[ "$(cst $core real_dma)" = 1 ] || { kp_why "no platform device"; return 1; }
	ctl $core "alloc 65536" && va=$(cst $core last_va) || { kp_why "alloc"; return 1; }
	# NPU pages smaller than the kernel's (16 KiB arm64): a core's
	# fix_peer_sgls() would move the first entry outside the table;
	# refused at get_pages, with the reason, and nothing left held
	ps=$(kp_page_size)
	[ -n "$ps" ] || { kp_why "no page size in /proc/self/smaps"; return 1; }
	if [ "$ps" -gt 4096 ]; then
		ctl $core "reg ${va#0x} 65536" && { kp_why "registered 4 KiB NPU pages through a core"; return 1; }
		dmesg | grep -q "npu_peer_mem: $va is in NPU pages of 4096 bytes, smaller than the kernel's $ps: the RDMA core cannot map it, refused" ||
			{ kp_why "no refusal line"; return 1; }
		ctl $core "free ${va#0x}" || { kp_why "free"; return 1; }
		zero "4 KiB NPU pages refused"
		return
	fi
	ctl $core "reg ${va#0x} 65536" || { kp_why "reg"; return 1; }
	[ "$(cst $core last_page_size)" = 4096 ] && [ "$(cst $core last_nmap)" = 16 ] ||
		{ kp_why "page size $(cst $core last_page_size) nmap $(cst $core last_nmap)"; return 1; }
	# the HAL was asked for the registration's span in its own pages
	[ "$(st pinned_pages)" = 16 ] && [ "$(st hal_pages)" = 16 ] ||
		{ kp_why "pinned $(st pinned_pages), HAL pages $(st hal_pages), want 16"; return 1; }
	ctl $core "dereg $(cst $core last_id)" && ctl $core "cycles 200 ${va#0x} 65536" &&
		ctl $core "free ${va#0x}" || { kp_why "cycles"; return 1; }
	zero "real DMA cycles"
}
kp_test realdma-4k-pages t_realdma
# on a kernel with pages larger than the NPU's no registration can be
# held through the core: the modules go all the same
t_realdma_rmmod() {
	[ "$(kp_page_size)" -gt 4096 ] || { t_core_rmmod mofed_core_sim; return; }
	zero "4 KiB NPU pages refused" && rmmod npu_peer_mem && rmmod mofed_core_sim ||
		{ kp_why "rmmod npu_peer_mem, mofed_core_sim"; return 1; }
}
kp_test realdma-rmmod t_realdma_rmmod

# krping_npu over NPU memory in 4 KiB HAL pages (the launcher's matrix)
t_sim_4k() {
	kp_sim_reload page_size=4096 hbm_mb=16 $NPU_SIM_ARGS && kp_peer_load ||
		{ kp_why "npu_sim page_size=4096"; return 1; }
	[ "$(st page_size)" = 4096 ] || { kp_why "npu_sim page_size $(st page_size)"; return 1; }
}
kp_test npu-sim-4k-pages t_sim_4k
# ud over 4 KiB NPU pages: a receive of a 4096-byte message takes its
# 40-byte header first, 4136 bytes over two NPU pages that need not be
# contiguous, so each of the server's data receives is posted with an
# SGE a page it touches, 2 or 3 (validate's slots, 4136 bytes apart on
# x86, start at every offset; its post events say so), and the client's
# sends of one page with 1; the server checks every byte of every message
t_npu_ud_4k() {
	kp_trace on || { kp_why "no tracefs"; return 1; }
	echo > $T/trace
	PORT=$((PORT + 1))
	kp_pair "addr=$A,port=$PORT,mem=npu,ud" "addr=$A,port=$PORT,mem=npu,bw,send,ud,validate,size=4096,count=200,warmup=20"
	kp_trace off
	[ "$SRV" = "ret=$SLEN" ] && [ "$CLI" = "ret=$CLEN" ] || { kp_why "srv=$SRV cli=$CLI"; return 1; }
	kp_check_bw "$(kp_res $CID | head -1)" 4096 200 bw_send || return 1
	[ "$(kp_res $SID)" = "bw_send served #bytes=4096 #messages=220 validated=yes" ] || { kp_why "server $(kp_res $SID)"; return 1; }
	dmesg | grep -q "krping_npu $SID: bw_send: 220 messages validated, every byte against its number and its 0xff/0x00/0xaa/0x55 bands, [0-9]* slots a connection" ||
		{ kp_why "no server line for 220 messages validated"; return 1; }
	# kinds: 8 a data receive, 7 a data SEND
	r1=$(grep -c "kp_post_recv: test=$SID conn=0 qpn=[0-9]* kind=8 .* sge=1\$" $T/trace)
	r2=$(grep -c "kp_post_recv: test=$SID conn=0 qpn=[0-9]* kind=8 .* sge=2\$" $T/trace)
	r3=$(grep -c "kp_post_recv: test=$SID conn=0 qpn=[0-9]* kind=8 .* sge=3\$" $T/trace)
	s1=$(grep -c "kp_post_send: test=$CID conn=0 qpn=[0-9]* kind=7 .* sge=1\$" $T/trace)
	[ "$r1" = 0 ] && [ $((r2 + r3)) -ge 220 ] && [ "$s1" = 220 ] ||
		{ kp_why "server data receives with 1, 2, 3 SGEs: $r1 $r2 $r3 (want none with 1, 220 or more); client SENDs of 1 SGE $s1, want 220"; return 1; }
	# x86's slots are 4136 bytes apart, unaligned: a few start within 40
	# bytes of a page's end and take 3 (slots 102 and 204 of a buffer that
	# starts a page); arm64 aligns them to 128 bytes, which never does
	[ "$(uname -m)" != x86_64 ] || [ "$r3" -ge 1 ] ||
		{ kp_why "no server data receive with 3 SGEs on x86_64 (slots 102 and 204)"; return 1; }
	echo > $T/trace
	kp_log "ud over 4 KiB NPU pages: receives of 2 SGEs $r2, of 3 $r3; SENDs of 1 $s1"
	zero "UD over 4 KiB NPU pages" && kp_idle "UD over 4 KiB NPU pages"
}
kp_test npu-ud-4k-pages t_npu_ud_4k
launch_matrix 4k-$DATA

t_end() {
	rmmod krping_npu || { kp_why "rmmod krping_npu"; return 1; }
}
kp_test rmmod t_end
kp_end peer
