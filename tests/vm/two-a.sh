# Two-VM tests, host A (server, 192.0.2.1): serves a validated ping, then
# serves a bandwidth test and writes one to B's server, and powers itself
# off in the middle of both.
. /lib/kp/lib.sh
cp /root/kpwrite /root/npu_launch /usr/bin/

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

# NPU memory of the launching process's own, on both hosts (BAR-backed HBM)
t_serve_launch() {
	out=$(npu_launch -b sim "server,addr=192.0.2.1,port=9902,validate,timeout=300000")
	echo "$out" | grep -q '^npu_launch: ok$' &&
		echo "$out" | grep -q '^[0-9]* result: ping #bytes=65536 rounds=20 validated=yes$' ||
		{ kp_why "server: $(echo "$out" | tail -3 | tr '\n' '|')"; return 1; }
	[ "$(st backing0)" = bar ] || { kp_why "HBM backing $(st backing0)"; return 1; }
}
kp_test a-serve-launch-ping-npu t_serve_launch

# B's two bandwidth tests of the port counters: over the clean link, then
# with B's link dropping some of what it sends (tests/vm/two-b.sh)
t_serve_hw() {
	for p in 9904 9905; do
		out=$(kpwrite "server,addr=192.0.2.1,port=$p,timeout=300000")
		[ "$out" != "${out#ret=}" ] || { kp_why "server on $p: $out"; return 1; }
	done
}
kp_test a-serve-hw-counters t_serve_hw

# B's stream while B's link drops 5% of what B sends (tests/vm/two-b.sh,
# b-probe-retried): this server probes every 10 ms and retransmits after
# 17 ms without an answer (qp_timeout=12), so the responses B loses make it
# send B probes B has already answered; it must finish, its probes answered
# (6.1's rxe answered a retried zero-length READ with a remote access
# error, which ended the test)
t_serve_probe() {
	out=$(kpwrite "server,addr=192.0.2.1,port=9906,probe=10,qp_timeout=12,timeout=300000")
	id=$(kp_last_id)
	n=$(dmesg | sed -n "s/.*krping_npu $id: connection 0: \([0-9]*\) probes answered.*/\1/p" | tail -1)
	[ "$out" != "${out#ret=}" ] ||
		{ kp_why "server: $out: $(dmesg | grep -E "krping_npu $id: (peer not answering|.* failed)" | tr '\n' '|')"; return 1; }
	# 3 s of stream at a probe each 10 ms and more (TCG, retries): about
	# 140 on a quiet host
	[ "${n:-0}" -ge 20 ] || { kp_why "probes answered: '$n', want >= 20"; return 1; }
	kp_log "a: $n probes answered through B's lossy link"
}
kp_test a-serve-probe-retried t_serve_probe

# serve bw to B and write bw to B's server at once; once both run, give
# them 3 s, then power off: B's client sees its server go, and B's server
# its client (issue 28: it must tell by its probes, not by a bound)
kpwrite "server,addr=192.0.2.1,port=9901,timeout=300000" > /dev/null &
i=0
while [ "$(kp_col 3 2)" != server ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
( i=0
  while [ $i -lt 120 ]; do
	out=$(kpwrite "client,addr=192.0.2.2,port=9903,bw,size=65536,count=1000000,timeout=3000")
	case $out in errno=110|errno=111|errno=113) ;; *) break ;; esac
	sleep 1; i=$((i + 1))
  done ) &
i=0
while [ $i -lt 1200 ]; do
	[ "$(kp_col 3 5)" = rxe0 ] &&
		awk '$2 == "client" && $5 == "rxe0" && $6 == "running" { f = 1 } END { exit !f }' /proc/krping_npu && break
	sleep 0.1; i=$((i + 1))
done
sleep 3
echo "KPLOG a: powering off in the middle of both bw tests"
# the kernel log so far, judged as a finished boot's (vm-init prints it
# after a scenario; this one never ends)
kp_kmsg > /dev/null
echo "KPVM-DMESG-BEGIN"
cat /tmp/kmsg.all
echo "KPVM-DMESG-END"
kp_end two-a
poweroff -f
