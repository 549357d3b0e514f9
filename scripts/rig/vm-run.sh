# VM scenario of scripts/run --vm: rxe loopback, both modules, the suite
# (/root/run-suite) through kp-target, then everything it produced as
# KPFILE blocks on the console.
. /lib/kp/lib.sh
kp_rxe_up || { echo "KPRUN FAIL rxe0 did not come up"; exit 1; }
insmod $KP/npu_sim.ko || echo "KPRUN FAIL insmod npu_sim"
insmod $KP/npu_peer_mem.ko || echo "KPRUN FAIL insmod npu_peer_mem"
insmod $KP/krping_npu.ko || { echo "KPRUN FAIL insmod krping_npu"; exit 1; }
# KP_PIN=1 for scripts/run (/root/run-pin): server on CPU 1, client on
# CPU 0, as tests/vm/bench.sh.  Not the default: it did not remove the
# boot-to-boot spread of wlat (results/20261123-repeat-tcg.md).
if [ "$(cat /root/run-pin 2>/dev/null)" = 1 ] && [ "$(grep -c ^processor /proc/cpuinfo)" -ge 2 ]; then
	export KP_SRV_PIN="taskset 2" KP_CLI_PIN="taskset 1"
fi
sh /root/kp-target suite /root/run-suite 192.0.2.1 2>&1 | grep '^KPRUN'
sh /root/kp-target dump
