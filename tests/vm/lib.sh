# Helpers for VM scenarios (sourced inside the VM, busybox sh).
#
# Every test is a shell function run by kp_test NAME FUNC; it passes when the
# function returns 0 and the kernel log it produced has no splat.  Results go
# to the console as "KPTEST PASS|FAIL name: reason", counted by scripts/test.

KP=/lib/kp
SPLAT='WARNING:|BUG:|Oops|Call Trace|general protection|kernel BUG|UBSAN|refcount_t:|list_add corruption|list_del corruption|soft lockup|hung_task|blocked for more than'

kp_log() { echo "KPLOG $*"; }

# Move the kernel ring buffer into /tmp/kmsg.all; print what was new.
kp_kmsg() {
	dmesg -c > /tmp/kmsg.new 2>/dev/null
	cat /tmp/kmsg.new >> /tmp/kmsg.all
	cat /tmp/kmsg.new
}

kp_test() {
	name=$1; shift
	kp_kmsg > /dev/null
	KP_WHY=""
	"$@"
	rc=$?
	kp_kmsg > /tmp/kmsg.test
	if grep -Eq "$SPLAT" /tmp/kmsg.test; then
		echo "KPTEST FAIL $name: kernel splat"
		grep -E -A20 "$SPLAT" /tmp/kmsg.test | head -40 | sed 's/^/KPLOG   /'
	elif [ $rc -ne 0 ]; then
		echo "KPTEST FAIL $name: ${KP_WHY:-rc=$rc}"
		sed 's/^/KPLOG   /' /tmp/kmsg.test | tail -20
	else
		echo "KPTEST PASS $name"
	fi
}

# kp_why MESSAGE: record why a test failed and return 1.
kp_why() { KP_WHY="$*"; return 1; }

# Bring up rxe0 on a dummy netdev d0 with address $1 (default 192.0.2.1/24).
kp_rxe_up() {
	addr=${1:-192.0.2.1/24}
	modprobe crc32_generic || return 1
	modprobe rdma_rxe || return 1
	modprobe rdma_cm || return 1
	modprobe rdma_ucm || return 1
	modprobe dummy numdummies=0 || return 1
	ip link add d0 type dummy || return 1
	ip addr add "$addr" dev d0 || return 1
	ip link set d0 up || return 1
	rdma link add rxe0 type rxe netdev d0 || return 1
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
