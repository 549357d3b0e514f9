#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host test of the count itself (tests/drivers/test-lib.sh, plan-check):
# synthetic VM logs of the integration suite, whole and broken in each way
# a run can lie (a suite stopped halfway, a test dropped, one run twice, a
# non-zero scenario, a panic on the host that powers itself off, skips),
# and a unit run that failed.  Prints "PASS/FAIL name".
set -uo pipefail
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS harness-$1"; }
ko() { echo "FAIL harness-$1: $2"; }

# a console log as scripts/rig/vm leaves it: every planned test passed
names=$(grep -v '^#' tests/plans/integration.plan)
mklog() {	# FILE [RC]: the whole suite, its end, a clean kernel log
	{ echo "KPVM-BOOT 6.1.0-0-amd64 x86_64"
	  for nm in $names; do printf 'KPTEST PASS %s\r\n' "$nm"; done
	  echo "KPTEST-END integration"
	  echo "KPVM-SCENARIO-RC ${2:-0}"
	  echo "KPVM-DMESG-BEGIN"; echo "[ 1.0] rdma_rxe: loaded"; echo "KPVM-DMESG-END"
	  echo "KPVM-DONE"; } > "$1"
}
# judge LOG VRC HOW PLAN: vm_result's lines and the counts, in a shell of its own
judge() {
	(. tests/drivers/test-lib.sh
	 vm_result "$@" > "$t/lines"
	 echo "$pass $fail $skip")
}
mklog "$t/vm-integration.log"
n=$(echo "$names" | wc -w)
r=$(judge "$t/vm-integration.log" 0 1 integration)
[ "$r" = "$((n + 2)) 0 0" ] && ok whole-suite || ko whole-suite "$r: $(grep FAIL "$t/lines")"

# an exit 0 a third of the way in: fewer tests, no end line, rc 0
head -n $((n / 3)) "$t/vm-integration.log" > "$t/cut.log"
printf 'KPVM-SCENARIO-RC 0\nKPVM-DMESG-BEGIN\nKPVM-DMESG-END\nKPVM-DONE\n' >> "$t/cut.log"
cp "$t/cut.log" "$t/vm-integration.log"
r=$(judge "$t/vm-integration.log" 0 1 integration)
grep -q "^FAIL vm-integration-plan: ran $((n / 3 - 1)) of the plan's $n; first missing: " "$t/lines" &&
	grep -q '^FAIL vm-integration-end: the suite did not reach its end' "$t/lines" &&
	ok stopped-halfway || ko stopped-halfway "$r: $(cat "$t/lines" | grep FAIL)"

# one test dropped, another run twice, a name nobody planned
mklog "$t/vm-integration.log"
sed -i -e '/KPTEST PASS ping-4KiB/d' -e 's/KPTEST PASS ping-64B/&\r\nKPTEST PASS ping-64B/' \
	-e 's/^KPTEST-END/KPTEST PASS not-a-test\n&/' "$t/vm-integration.log"
r=$(judge "$t/vm-integration.log" 0 1 integration)
grep -q '^FAIL vm-integration-plan: .*first missing: ping-4KiB .*not in the plan (or run twice): ping-64B not-a-test' "$t/lines" &&
	ok dropped-twice-unplanned || ko dropped-twice-unplanned "$(grep FAIL "$t/lines")"

# a scenario that ended on a shell error
mklog "$t/vm-integration.log" 2
r=$(judge "$t/vm-integration.log" 0 1 integration)
grep -q '^FAIL vm-integration-exit: the scenario exited 2' "$t/lines" && ok scenario-rc ||
	ko scenario-rc "$(grep FAIL "$t/lines")"

# a skip is counted as one, and fills its place in the plan
mklog "$t/vm-integration.log"
sed -i 's/^KPTEST PASS ping-1MiB/KPTEST SKIP ping-1MiB: not here/' "$t/vm-integration.log"
r=$(judge "$t/vm-integration.log" 0 1 integration)
[ "$r" = "$((n + 1)) 0 1" ] && grep -q '^SKIP ping-1MiB: not here' "$t/lines" && ok skip-counted ||
	ko skip-counted "$r"

# a lane that runs part of a suite (no plan): counted, not planned
cp "$t/cut.log" "$t/vm-integration.log"
r=$(judge "$t/vm-integration.log" 0 1 "")
! grep -q 'FAIL vm-integration-\(plan\|end\|exit\)' "$t/lines" && ok part-lane || ko part-lane "$(grep FAIL "$t/lines")"

# host A powers itself off: its kernel log judged, and an oops after it
# on the console is a failure, as is a panic
for k in a b c; do
	{ echo "KPVM-BOOT 6.1.0-0-amd64 x86_64"
	  for n2 in $(grep -v '^#' tests/plans/two-a.plan); do echo "KPTEST PASS $n2"; done
	  echo "KPVM-DMESG-BEGIN"
	  [ $k = b ] && echo "[ 9.0] WARNING: CPU: 0 PID: 1 at kp_cm.c:10"
	  echo "KPVM-DMESG-END"; echo "KPTEST-END two-a"
	  [ $k = c ] && echo "[ 12.0] Kernel panic - not syncing: Fatal exception"; } > "$t/vm-two-a.log"
	judge "$t/vm-two-a.log" 0 console two-a > "$t/r.$k"
	cp "$t/lines" "$t/lines.$k"
	[ $k = a ] && cp "$t/vm-two-a.log" "$t/clean.log"
done
# A's planned tests, and its plan, dmesg and console checks
na=$(($(grep -vc '^#' tests/plans/two-a.plan) + 3))
[ "$(cat "$t/r.a")" = "$na 0 0" ] && ok two-a-clean || ko two-a-clean "$(cat "$t/r.a"), want $na 0 0: $(grep FAIL "$t/lines.a")"
grep -q '^FAIL vm-two-a-dmesg: kernel splat' "$t/lines.b" && ok two-a-warning || ko two-a-warning "$(cat "$t/lines.b")"
grep -q '^FAIL vm-two-a-console: .*Kernel panic' "$t/lines.c" && ok two-a-panic || ko two-a-panic "$(cat "$t/lines.c")"

# scripts/rig/vm's panic check: a console that panicked is told from
# one that powered off (A's logs above: c panicked, a did not)
out=$(scripts/rig/console-panic "$t/vm-two-a.log"); rc=$?
scripts/rig/console-panic "$t/clean.log" > /dev/null; rc2=$?
[ $rc = 0 ] && [ "$out" = "[ 12.0] Kernel panic - not syncing: Fatal exception" ] && [ $rc2 = 1 ] &&
	ok vm-panic-exit || ko vm-panic-exit "panicked console: exit $rc '$out'; clean one: exit $rc2"

# a unit binary that failed keeps its counts in the closing line
printf '#!/bin/sh\necho "3 passed, 2 failed"\nexit 1\n' > "$t/u1.bin"
printf '#!/bin/sh\necho "4 passed, 0 failed"\n' > "$t/u2.bin"
chmod +x "$t/u1.bin" "$t/u2.bin"
out=$(tests/drivers/run-unit "$t/u1.bin" "$t/u2.bin"; echo "make: *** [Makefile:98: unit] Error 1")
r=$(. tests/drivers/test-lib.sh
    add_counts unit "$(echo "$out" | grep '^unit: [0-9]* passed, [0-9]* failed$' | tail -n 1)" > /dev/null
    echo "$pass $fail")
[ "$r" = "7 2" ] && ok unit-counts-kept || ko unit-counts-kept "$r from: $out"

# a sub-suite's skips reach the closing lines
r=$(. tests/drivers/test-lib.sh
    add_counts lane "$(printf 'PASS x\nSKIP y: z\n1 skipped\n1 passed, 0 failed')"
    sk w "why" > /dev/null
    summary)
[ "$r" = "$(printf '2 skipped\n1 passed, 0 failed')" ] && ok summary-skips || ko summary-skips "$r"
