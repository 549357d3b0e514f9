# VM scenario of scripts/run --vm: rxe loopback, both modules, the suite
# (/root/run-suite) through kp-target, then everything it produced as
# KPFILE blocks on the console.
. /lib/kp/lib.sh
kp_rxe_up || { echo "KPRUN FAIL rxe0 did not come up"; exit 1; }
insmod $KP/npu_sim.ko || echo "KPRUN FAIL insmod npu_sim"
insmod $KP/npu_peer_mem.ko || echo "KPRUN FAIL insmod npu_peer_mem"
insmod $KP/krping_npu.ko || { echo "KPRUN FAIL insmod krping_npu"; exit 1; }
sh /root/kp-target suite /root/run-suite 192.0.2.1 2>&1 | grep '^KPRUN'
sh /root/kp-target dump
