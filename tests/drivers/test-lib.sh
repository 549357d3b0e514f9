# Sourced by tests/drivers/test, test-kernel, test-matrix and test-debug:
# the pass/fail/skip counters, the closing lines, and the reading of one
# VM log against its suite's plan (tests/plans/).
# shellcheck shell=bash
pass=0 fail=0 skip=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
ko() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
sk() { echo "SKIP $1: $2"; skip=$((skip + 1)); }

# The closing lines: the skips, then "N passed, N failed" last (what CI
# reads); the exit status says whether anything failed.
summary() {
	echo "$skip skipped"
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

# add_counts NAME OUTPUT: add the "N passed, N failed" that ends OUTPUT
# (a sub-suite's summary) and its "N skipped" to the counters; a missing
# summary is a failure
add_counts() {
	local line p f s
	line=$(echo "$2" | tail -n 1)
	p=$(echo "$line" | sed -n 's/^\(.* \)\{0,1\}\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\2/p')
	f=$(echo "$line" | sed -n 's/^\(.* \)\{0,1\}\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\3/p')
	s=$(echo "$2" | sed -n 's/^\([0-9][0-9]*\) skipped$/\1/p' | tail -n 1)
	if [ -n "$p" ]; then
		pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + ${s:-0}))
	else
		ko "$1" "did not finish: $(echo "$2" | tail -5)"
	fi
}

# plan_check NAME PLAN RESULTS: RESULTS (PASS/FAIL/SKIP lines) against
# tests/plans/PLAN.plan: a test missing (a suite that stopped early), one
# not in the plan, or one run twice is a failure
plan_check() {
	local out
	if out=$(echo "$3" | tests/drivers/plan-check "tests/plans/$2.plan" 2>&1); then
		ok "$1-plan"
	else
		ko "$1-plan" "$(echo "$out" | tr '\n' ' ')"
	fi
}

# vm_counts LOG NAME PLAN [console]: count one VM log's KPTEST lines; with
# PLAN (a lane that runs the whole suite), check them against it, and that
# the suite reached its end (kp_end) and its scenario exited 0 (not asked
# of a VM that powers itself off: console)
vm_counts() {
	local log=$1 name=$2 plan=$3 how=${4:-} p f s rc
	grep -a '^KPTEST \|^KPLOG' "$log" | sed 's/^KPTEST //'
	p=$(grep -ac '^KPTEST PASS' "$log"); f=$(grep -ac '^KPTEST FAIL' "$log")
	s=$(grep -ac '^KPTEST SKIP' "$log")
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	[ -n "$plan" ] || return 0
	plan_check "$name" "$plan" "$(grep -a '^KPTEST ' "$log")"
	grep -aq "^KPTEST-END $plan\b" "$log" ||
		ko "$name-end" "the suite did not reach its end (no KPTEST-END $plan)"
	# a VM that powers itself off mid-test (console) ends no scenario
	[ "$how" != console ] || return 0
	rc=$(sed -n 's/^KPVM-SCENARIO-RC \([0-9]*\).*/\1/p' "$log" | tail -n 1)
	[ "${rc:-x}" = 0 ] || ko "$name-exit" "the scenario exited ${rc:-without saying (no KPVM-SCENARIO-RC)}"
}

# count one VM log's KPTEST lines; $2: the VM's exit status; $3: check
# dmesg (1), or the whole console of a VM that powers off mid-test (A of
# the two-host test: console); $4: the suite's plan, if it ran whole
vm_result() {
	local log=$1 vrc=$2 dmesg=$3 plan=${4:-} name p
	name=$(basename "$log" .log)
	if [ ! -s "$log" ]; then
		ko "$name" "the VM did not start (no log $log)"
		return 0
	fi
	# a boot the kernel did not survive to /init, retried by scripts/rig/vm
	[ ! -f "$log.first-boot" ] || echo "KPLOG $name: first boot died before /init, booted again:" \
		"$(grep -aE -m1 'Oops|BUG:|Kernel panic|general protection' "$log.first-boot" || echo 'no oops line')"
	vm_counts "$log" "$name" "$plan" "$dmesg"
	p=$(grep -ac '^KPTEST PASS' "$log")
	if [ "$vrc" -ne 0 ]; then
		ko "$name" "the VM did not finish cleanly (log: $log)"
		tail -30 "$log" | sed 's/^/  | /'
	elif [ "$p" -eq 0 ]; then
		ko "$name" "no test ran (log: $log)"
	fi
	if [ "$dmesg" = console ]; then
		# it powered off mid-test, its kernel log printed just before:
		# what came after (an oops, a panic) is on the console only
		if grep -aEq 'BUG:|Oops|general protection|Kernel panic' "$log"; then
			ko "$name-console" "$(grep -aE -m1 'BUG:|Oops|general protection|Kernel panic' "$log")"
		else
			ok "$name-console"
		fi
	elif [ "$dmesg" != 1 ]; then
		return 0
	fi
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

