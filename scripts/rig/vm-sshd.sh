# VM scenario of scripts/run --two-vm: rxe on the shared segment (eth0),
# both modules, sshd (dropbear) on the forwarded NIC (eth1) for the
# runner; waits until the runner touches /tmp/kp-stop (at most 25 min).
. /lib/kp/lib.sh
. /root/*.env
[ -z "${KP_HOSTNAME:-}" ] || hostname "$KP_HOSTNAME"
kp_rxe_up "$KP_RXE_ADDR" eth0 || { echo "KPRUN FAIL rxe0 on eth0"; exit 1; }
insmod $KP/npu_sim.ko || echo "KPRUN FAIL insmod npu_sim"
insmod $KP/npu_peer_mem.ko || echo "KPRUN FAIL insmod npu_peer_mem"
insmod $KP/krping_npu.ko || { echo "KPRUN FAIL insmod krping_npu"; exit 1; }
i=0
while [ ! -e /sys/class/net/eth1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
ip addr add 10.0.2.15/24 dev eth1 && ip link set eth1 up ||
	{ echo "KPRUN FAIL eth1"; exit 1; }
mkdir -p /root/.ssh /etc/dropbear
cp /root/authorized_keys /root/.ssh/authorized_keys
chmod 700 /root /root/.ssh; chmod 600 /root/.ssh/authorized_keys
echo /bin/sh > /etc/shells
dropbear -R -E -s -p 22 2>> /tmp/dropbear.log || { echo "KPRUN FAIL dropbear"; exit 1; }
touch /tmp/kp-ready
echo "KPRUN ready $(hostname) $KP_RXE_ADDR"
i=0
while [ ! -e /tmp/kp-stop ] && [ $i -lt 1500 ]; do sleep 1; i=$((i + 1)); done
echo "KPRUN stop after $i s"
