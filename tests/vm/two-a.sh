# Two-VM tests, host A (server, 192.0.2.1): serves a validated ping, then
# serves a bandwidth test and powers itself off in the middle of it.
. /lib/kp/lib.sh
cp /root/kpwrite /usr/bin/kpwrite

t_setup() {
	kp_rxe_up 192.0.2.1/24 eth0 || { kp_why "rxe0 on eth0"; return 1; }
	insmod $KP/krping_npu.ko || { kp_why "insmod"; return 1; }
	kp_peer_load || { kp_why "insmod npu_peer_mem"; return 1; }
}
kp_test a-setup t_setup

t_serve_ping() {
	out=$(kpwrite "server,addr=192.0.2.1,port=9900,mem=npu,validate,timeout=300000")
	[ "$out" != "${out#ret=}" ] || { kp_why "server: $out"; return 1; }
	[ "$(kp_res 1)" = "ping #bytes=65536 rounds=50 validated=yes" ] ||
		{ kp_why "result: $(kp_res 1)"; return 1; }
}
kp_test a-serve-ping-npu t_serve_ping

# serve bw; once the client is connected, give it 3 s, then power off
kpwrite "server,addr=192.0.2.1,port=9901,timeout=300000" > /dev/null &
i=0
while [ "$(kp_col 2 5)" != rxe0 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
sleep 3
echo "KPLOG a: powering off in the middle of the bw test"
poweroff -f
