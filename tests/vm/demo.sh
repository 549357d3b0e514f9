# make demo: one VM, rxe on a dummy netdev, a krping_npu server and client.
. /lib/kp/lib.sh
cp /root/kpwrite /usr/bin/kpwrite
A=192.0.2.1

say() { echo "KPDEMO $*"; }
run() {
	say ""
	say "# server: $1"
	say "# client: $2"
	kp_pair "$1" "$2"
	say "  server -> $SRV   client -> $CLI"
	say "  server: $(kp_res $SID)"
	say "  client: $(kp_res $CID)"
}

kp_rxe_up || { say "rxe did not come up"; exit 1; }
insmod $KP/krping_npu.ko || { say "insmod krping_npu failed"; exit 1; }
kp_peer_load || { say "insmod npu_peer_mem failed"; exit 1; }
say "kernel $(uname -r); $(rdma link show | head -1)"
dmesg | sed -n 's/.*\(npu_sim: .*\|npu_peer_mem: .*\)/KPDEMO \1/p'
say ""
say "## host memory"
run "addr=$A,port=9999,validate" "addr=$A,port=9999,size=4096,count=100,validate"
say ""
say "## NPU memory (emulated NPU, registered through npu_peer_mem's callbacks)"
run "addr=$A,port=9999,mem=npu,validate" "addr=$A,port=9999,mem=npu,size=1048576,count=20,validate"
run "addr=$A,port=9999,mem=npu" "addr=$A,port=9999,mem=npu,rlat,size=64,count=2000"
run "addr=$A,port=9999,mem=npu" "addr=$A,port=9999,mem=npu,wlat,size=64,count=2000"
run "addr=$A,port=9999,mem=npu" "addr=$A,port=9999,mem=npu,bw,size=65536,count=500"
run "addr=$A,port=9999" "addr=$A,port=9999,mem=npu,bw,duplex,size=65536,count=300"
say ""
say "# cat /sys/kernel/debug/npu_peer_mem/stats (all released)"
tr '\n' ' ' < /sys/kernel/debug/npu_peer_mem/stats | sed 's/^/KPDEMO /'; echo
say "# cat /sys/kernel/debug/npu_sim/stats (the emulated NPU)"
tr '\n' ' ' < /sys/kernel/debug/npu_sim/stats | sed 's/^/KPDEMO /'; echo
say ""
say "# cat /proc/krping_npu"
sed 's/^/KPDEMO /' /proc/krping_npu
rmmod krping_npu && rmmod npu_peer_mem && rmmod npu_sim && say "rmmod krping_npu npu_peer_mem npu_sim: ok"
if dmesg | grep -Eq "$SPLAT"; then say "kernel log: SPLAT"; else say "kernel log: clean"; fi
