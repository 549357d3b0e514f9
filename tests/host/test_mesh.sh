#!/bin/bash
# Host tests of scripts/mesh: the schedule, outliers and matrices
# (tests/host/kptools/test_mesh.py), the dry run's exact rounds, and whole runs
# through ClusterShell over stand-in hosts (tests/host/mesh/fake-ssh and
# fake-kp-target): a slow host named, a slow link named, a host down from
# the start and one going down mid-run reported while the others' pairs
# complete, the matrix CSV's values, the heatmap, the exit status.
# Prints "PASS/FAIL name".
set -uo pipefail
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS mesh-$1"; }
ko() { echo "FAIL mesh-$1: $2"; }
if ! /usr/bin/python3 -c 'import ClusterShell' 2>/dev/null; then
	ko clustershell "Debian's clustershell is not installed (scripts/setup)"
	exit 0
fi
out=$(/usr/bin/python3 tests/host/kptools/test_mesh.py 2>&1)
echo "$out" | grep -E '^(PASS|FAIL) '
grep -q '^unit: end$' <<< "$out" || ko unit "did not finish: $(echo "$out" | tail -3)"

# the dry run: exactly these rounds, server first, names as given
want='round 1: npu01-npu04 npu02-npu03
round 2: npu03-npu01 npu04-npu02
round 3: npu01-npu02 npu03-npu04'
out=$(scripts/mesh --nodes 'npu[01-04]' --dry-run 2>/dev/null)
[ "$out" = "$want" ] && ok dry-run-4 || ko dry-run-4 "$out"
out=$(scripts/mesh --nodes 'npu[01-16]' --dry-run 2>&1)
[ "$(echo "$out" | grep -c '^round [0-9]*: \(npu[0-9][0-9]-npu[0-9][0-9] \)\{7\}npu[0-9][0-9]-npu[0-9][0-9]$')" = 15 ] &&
	grep -q '^mesh: 16 hosts, 120 pairs in 15 rounds$' <<< "$out" && ok dry-run-16 || ko dry-run-16 "$out"
out=$(scripts/mesh --nodes 'a,b,c' --pairs ring --dry-run 2>/dev/null)
[ "$out" = "round 1: a-b
round 2: b-c
round 3: c-a" ] && ok dry-run-ring-odd || ko dry-run-ring-odd "$out"
printf 'n2 n1\nn3 n1  # a comment\nn2 n4\n' > "$t/pairs"
out=$(scripts/mesh --nodes 'n[1-4]' --pairs "$t/pairs" --dry-run 2>/dev/null)
[ "$out" = "round 1: n2-n1
round 2: n3-n1 n2-n4" ] && ok dry-run-pairs-file || ko dry-run-pairs-file "$out"
scripts/mesh --nodes 'n[1-3]' --pairs "$t/pairs" --dry-run > /dev/null 2>&1
[ $? = 2 ] && ok pairs-file-unknown-host || ko pairs-file-unknown-host "a pair naming n4 accepted"
scripts/mesh --nodes 'n1' --dry-run > /dev/null 2>&1
[ $? = 2 ] && ok one-host || ko one-host "one host accepted"

# whole runs over stand-in hosts
export KP_SSH=$PWD/tests/host/mesh/fake-ssh KP_MESH_TARGET=$PWD/tests/host/mesh/fake-kp-target
printf 'wlat size=64,count=10\nbw size=65536,count=10\n' > "$t/suite"
run() {	# NAME ARGS...: a fresh set of hosts; output in $t/NAME.out, rc in $rc
	local name=$1; shift
	export KP_FAKE=$t/$name.hosts
	mkdir -p "$KP_FAKE"
	[ -z "${SLOW:-}" ] || echo "$SLOW" > "$KP_FAKE/slow"
	[ -z "${DOWN:-}" ] || touch "$KP_FAKE/$DOWN.down"
	[ -z "${DOWN_AFTER:-}" ] || echo "$DOWN_AFTER" > "$KP_FAKE/down-after-round"
	scripts/mesh "$@" --out "$t/$name" "$t/suite" > "$t/$name.out" 2>&1
	rc=$?
}
SLOW= run good --nodes 'h[1-4]'
[ $rc = 0 ] && grep -q '^mesh: 6 of 6 pairs ok, 0 suspect after the re-test, 0 unreachable' "$t/good.out" &&
	[ "$(cat "$t/good/matrix-BW_average-bw-65536.csv")" = 'BW_average server\client,h1,h2,h3,h4
h1,,100.00,100.00,100.00
h2,100.00,,100.00,100.00
h3,100.00,100.00,,100.00
h4,100.00,100.00,100.00,' ] && ok run-all-well || ko run-all-well "rc $rc: $(cat "$t/good.out")"
n=$(ls "$t/good/pairs" | wc -l)
j=$(/usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1] + "/pairs/h1_h4.json"))
print(p["status"], len(p["results"]), sorted(p["env"]), p["env"]["h4"].splitlines()[0])' "$t/good")
[ "$n" = 6 ] && [ "$j" = "ok 2 ['h1', 'h4'] host: h4" ] && [ "$(wc -l < "$t/good/results.json")" = 12 ] &&
	ok run-pair-files || ko run-pair-files "$n pair files; h1_h4: $j"
grep -q '^mesh: round 2/3: 4/6 pairs done, 0 failed so far' "$t/good.out" && ok run-progress || ko run-progress "$(cat "$t/good.out")"
python3 - "$t/good" <<'PY' && ok run-heatmap || ko run-heatmap "no heatmap PNG"
import struct, sys
for f in ("matrix-BW_average-bw-65536.png", "matrix-t_typical-wlat-64.png"):
    b = open(f"{sys.argv[1]}/{f}", "rb").read()
    assert b[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", b[16:24])[0] > 300
PY

SLOW=h3 run slowhost --nodes 'h[1-4]'
grep -q '^mesh: suspect host: h3: 3 of 3 pairs low (bw 65536 B host BW_average, median 65.00)$' "$t/slowhost.out" &&
	grep -q '^mesh: suspect host: h3: 3 of 3 pairs high (wlat 64 B host t_typical' "$t/slowhost.out" &&
	grep -q '^mesh: re-testing 3 suspect pairs alone$' "$t/slowhost.out" &&
	! grep -q 'suspect link' "$t/slowhost.out" && [ $rc = 1 ] && ok run-slow-host || ko run-slow-host "rc $rc: $(cat "$t/slowhost.out")"
SLOW="h2 h5" run slowlink --nodes 'h[1-6]'
grep -q '^mesh: suspect link: h[25]-h[25]: bw 65536 B host BW_average 30.00, median 100.00$' "$t/slowlink.out" &&
	! grep -q 'suspect host' "$t/slowlink.out" && [ $rc = 1 ] && ok run-slow-link || ko run-slow-link "rc $rc: $(cat "$t/slowlink.out")"
DOWN=h2 run down --nodes 'h[1-3]'
grep -q '^mesh: unreachable: h2 (since start)$' "$t/down.out" &&
	grep -q '^mesh: 1 of 3 pairs ok' "$t/down.out" && [ $rc = 1 ] && ok run-host-down || ko run-host-down "rc $rc: $(cat "$t/down.out")"
DOWN_AFTER=h4 run midway --nodes 'h[1-4]' --timeout 20
# h4 is in a pair every round: once it is gone the other pair of each round still runs
grep -q '^mesh: unreachable: h4 (since round 1)$' "$t/midway.out" &&
	grep -q '^mesh: 3 of 6 pairs ok' "$t/midway.out" && [ $rc = 1 ] &&
	[ "$(grep -c ' bw$' "$t/midway.hosts/ran")" = 3 ] && ok run-host-down-midway || ko run-host-down-midway "rc $rc: $(cat "$t/midway.out")"
