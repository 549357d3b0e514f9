#!/bin/bash
# Host tests of npu_launch's option numbers: out of range, wrapping past
# 32 bits or written "0x0x" is refused with exit 2 and a line naming the
# option; a good one gets past the options (to the runtime, absent here).
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS $1"; }
ko() { echo "FAIL $1: $2"; }

gcc -O2 -Wall -Wextra -Werror -o "$t/npu_launch" peer_client/npu_launch.c -ldl -lpthread ||
	{ ko launch-args-build "gcc failed"; exit 0; }
refused() {	# NAME OPTION VALUE: exit 2, and a line naming OPTION and VALUE
	out=$("$t/npu_launch" "$2" "$3" "client,addr=1.2.3.4,port=1" 2>&1); rc=$?
	[ $rc = 2 ] && echo "$out" | grep -q "^npu_launch: $2 $3: " &&
		ok "$1" || ko "$1" "exit $rc: $out"
}
refused launch-scan-2-32 --scan 4294967296
refused launch-scan-hex-2-32 --scan 0x100000000
refused launch-scan-0x0x --scan 0x0x10
refused launch-scan-256 --scan 256
refused launch-free-cpu-2-32 --free-cpu 4294967296
refused launch-free-cpu-negative --free-cpu -1
# a byte in hex is a number: the run goes on to load the runtime (absent)
out=$(LD_LIBRARY_PATH=$t "$t/npu_launch" -b acl --scan 0x10 "client,addr=1.2.3.4,port=1" 2>&1); rc=$?
! echo "$out" | grep -q -- "--scan" && echo "$out" | grep -q "libascendcl" &&
	ok launch-scan-hex-byte || ko launch-scan-hex-byte "exit $rc: $out"
