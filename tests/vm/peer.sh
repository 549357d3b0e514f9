# VM tests of npu_peer_mem and krping_npu over NPU memory (issue: peer client).
. /lib/kp/lib.sh
cp /root/kpwrite /usr/bin/kpwrite
A=192.0.2.1
PORT=9300
MB4=4194304

t_setup() {
	kp_rxe_up || { kp_why "rxe0"; return 1; }
	insmod $KP/krping_npu.ko || { kp_why "insmod krping_npu"; return 1; }
}
kp_test setup t_setup

t_no_peer_mem() {
	out=$(kpwrite "client,addr=$A,port=9,mem=npu,count=1")
	[ "$out" = "errno=19" ] || { kp_why "want ENODEV, got $out"; return 1; }
	dmesg | grep -q "mem=npu: npu_peer_mem is not loaded" || { kp_why "no dmesg line"; return 1; }
}
kp_test npu-without-peer-mem t_no_peer_mem

# no HAL (no NPU driver, no npu_sim): npu_peer_mem refuses to load, and says why
t_load_no_hal() {
	insmod $KP/npu_peer_mem.ko 2>/dev/null && { kp_why "loaded without a HAL"; return 1; }
	dmesg | grep -q "npu_peer_mem: no Ascend HAL (hal_kernel_p2p_get_pages): load" ||
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
kp_test npu-ping-4KiB t_npu_pair npu npu "size=4096,count=30,validate" "ping #bytes=4096 rounds=30 validated=yes"
kp_test npu-ping-1MiB t_npu_pair npu npu "size=1048576,count=5,validate" "ping #bytes=1048576 rounds=5 validated=yes"
kp_test npu-ping-3MiB-unaligned t_npu_pair npu npu "size=3000001,count=3,validate" "ping #bytes=3000001 rounds=3 validated=yes"
kp_test mixed-npu-client t_npu_pair host npu "size=65536,count=10,validate" "ping #bytes=65536 rounds=10 validated=yes"
kp_test mixed-npu-server t_npu_pair npu host "size=65536,count=10,validate" "ping #bytes=65536 rounds=10 validated=yes"
kp_test npu-rlat t_npu_pair npu npu "rlat,size=65536,count=100" rlat 65536 100
kp_test npu-wlat t_npu_pair npu npu "wlat,size=64,count=300" wlat 64 300
kp_test npu-bw t_npu_pair npu npu "bw,size=65536,count=200" bw 65536 200
kp_test npu-bw-duplex-mixed t_npu_pair host npu "bw,duplex,size=65536,count=100" bw 65536 100

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

kp_test mofed-load-auto t_core_load mofed_core_sim "" mofed 136 unread
kp_test mofed-cycles t_core_cycles mofed_core_sim
kp_test mofed-free-invalidates-once t_core_free_live mofed_core_sim
kp_test mofed-rmmod t_core_rmmod mofed_core_sim

kp_test xsc-load-auto t_core_load xsc_core_sim "" yunscale 152 null
kp_test xsc-cycles t_core_cycles xsc_core_sim
kp_test xsc-free-invalidates-once t_core_free_live xsc_core_sim
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
	ctl $core "alloc 65536" && va=$(cst $core last_va) &&
		ctl $core "reg ${va#0x} 65536" || { kp_why "alloc/reg"; return 1; }
	[ "$(cst $core last_page_size)" = 4096 ] && [ "$(cst $core last_nmap)" = 16 ] ||
		{ kp_why "page size $(cst $core last_page_size) nmap $(cst $core last_nmap)"; return 1; }
	ctl $core "dereg $(cst $core last_id)" && ctl $core "cycles 200 ${va#0x} 65536" &&
		ctl $core "free ${va#0x}" || { kp_why "cycles"; return 1; }
	zero "real DMA cycles"
}
kp_test realdma-4k-pages t_realdma
kp_test realdma-rmmod t_core_rmmod mofed_core_sim

t_end() {
	rmmod krping_npu || { kp_why "rmmod krping_npu"; return 1; }
}
kp_test rmmod t_end
