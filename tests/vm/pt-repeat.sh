# scripts/pt-repeat: one perftest pair as the bench runs it (server on CPU
# 1, client on CPU 0, rxe0, -x 1; -n KP_PT_ITERS, 2000 as the bench's
# streams up to 4 KiB), N times in one boot.  Prints
# "KPPT run I rc=RC server_rc=RC row=0|1" a run and, for a run with no
# result row, every line either side printed: perftest writes its errors
# to stderr unbuffered and its header to a buffered stdout, so the error
# sits above the header, where the bench's tail of the output missed it.
# KP_PT_STRACE=1 also keeps the client's and server's last system calls.
. /lib/kp/lib.sh
. /root/pt-repeat.env
PORT=9800
N=${KP_PT_N:-20}
TMO=120

kp_rxe_up || exit 1
echo "KPPT-RES clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource) tool=$KP_PT_TOOL size=$KP_PT_SIZE iters=$KP_PT_ITERS args=$KP_PT_ARGS"
sst= cst=
if [ "${KP_PT_STRACE:-0}" = 1 ]; then
	export LD_LIBRARY_PATH=/root/strace-lib
	/root/strace -V > /dev/null 2>&1 || { echo "KPPT-ERR strace does not run in the VM"; exit 1; }
	sst="/root/strace -f -tt -o /tmp/pt-srv.st" cst="/root/strace -f -tt -o /tmp/pt-cli.st"
fi
fail=0
i=1
while [ $i -le "$N" ]; do
	PORT=$((PORT + 1))
	timeout $TMO taskset 2 $sst $KP_PT_TOOL -d rxe0 -x 1 -p $PORT -n "$KP_PT_ITERS" -s "$KP_PT_SIZE" $KP_PT_ARGS > /tmp/pt-srv.out 2>&1 &
	sp=$!
	sleep 1
	timeout $TMO taskset 1 $cst $KP_PT_TOOL -d rxe0 -x 1 -p $PORT -n "$KP_PT_ITERS" -s "$KP_PT_SIZE" $KP_PT_ARGS 127.0.0.1 > /tmp/pt-cli.out 2>&1
	rc=$?
	wait $sp
	src=$?
	row=0
	awk -v s="$KP_PT_SIZE" '$1 == s && NF >= 5 { f = 1 } END { exit !f }' /tmp/pt-cli.out && row=1
	echo "KPPT run $i rc=$rc server_rc=$src row=$row"
	if [ $row = 0 ]; then
		fail=$((fail + 1))
		sed 's/^/KPPT-CLI /' /tmp/pt-cli.out
		sed 's/^/KPPT-SRV /' /tmp/pt-srv.out
		if [ -n "$cst" ]; then
			tail -n 40 /tmp/pt-cli.st | sed 's/^/KPPT-CST /'
			tail -n 40 /tmp/pt-srv.st | sed 's/^/KPPT-SST /'
		fi
	fi
	i=$((i + 1))
done
echo "KPPT-RES runs=$N no_row=$fail"
