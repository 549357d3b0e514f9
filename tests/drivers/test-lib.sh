# Sourced by tests/drivers/test, test-kernel and test-matrix: the pass/fail counters
# and the reading of one VM log.
# shellcheck shell=bash
pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); }

# add_counts NAME OUTPUT: add the "N passed, N failed" that ends OUTPUT
# (a sub-suite's summary) to the counters; a missing one is a failure
add_counts() {
	local line p f
	line=$(echo "$2" | tail -n 1)
	p=$(echo "$line" | sed -n 's/^\(.* \)\{0,1\}\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\2/p')
	f=$(echo "$line" | sed -n 's/^\(.* \)\{0,1\}\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\3/p')
	if [ -n "$p" ]; then
		pass=$((pass + p)); fail=$((fail + f))
	else
		ko "$1" "did not finish: $(echo "$2" | tail -5)"
	fi
}

# count one VM log's KPTEST lines; $2: the VM's exit status; $3: check dmesg
vm_result() {
	local log=$1 vrc=$2 dmesg=$3 name p f
	name=$(basename "$log" .log)
	if [ ! -s "$log" ]; then
		ko "$name" "the VM did not start (no log $log)"
		return 0
	fi
	# a boot the kernel did not survive to /init, retried by scripts/rig/vm
	[ ! -f "$log.first-boot" ] || echo "KPLOG $name: first boot died before /init, booted again:" \
		"$(grep -aE -m1 'Oops|BUG:|Kernel panic|general protection' "$log.first-boot" || echo 'no oops line')"
	grep -a '^KPTEST \|^KPLOG' "$log" | sed 's/^KPTEST //'
	p=$(grep -ac '^KPTEST PASS' "$log"); f=$(grep -ac '^KPTEST FAIL' "$log")
	pass=$((pass + p)); fail=$((fail + f))
	if [ "$vrc" -ne 0 ]; then
		ko "$name" "the VM did not finish cleanly (log: $log)"
		tail -30 "$log" | sed 's/^/  | /'
	elif [ "$p" -eq 0 ]; then
		ko "$name" "no test ran (log: $log)"
	fi
	[ "$dmesg" = 1 ] || return 0
	# the whole boot's kernel log: no splat outside the tests either
	# (less the WARNs tests provoke on purpose, between kp_expect markers)
	if sed -n '/^KPVM-DMESG-BEGIN/,/^KPVM-DMESG-END/p' "$log" |
	   sed '/krping-test: expected splat begins/,/krping-test: expected splat ends/d' |
	   grep -aEq 'WARNING:|BUG:|Oops|Call Trace|general protection|soft lockup'; then
		ko "$name-dmesg" "kernel splat in the boot log"
	else
		ok "$name-dmesg"
	fi
}

