#!/bin/bash
# Host tests of scripts/compare: identical sets pass, a synthetic
# regression (bandwidth or latency) fails and is named, thresholds apply,
# a missing result fails, bad input is an error.  Prints "PASS/FAIL name".
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS compare-$1"; }
ko() { echo "FAIL compare-$1: $2"; }

# one set: wlat 64/4096, rlat 64 on npu, bw 65536 and perftest's bw 65536
mkset() {	# DIR BW65536 WLAT64 [drop-rlat]
	mkdir -p "$1"
	{
		echo '{"id": 1, "test": "wlat", "role": "client", "mem": "host", "MsgSize": 64, "n_iterations": 1000, "t_typical": '"$3"'}'
		echo '{"id": 1, "test": "wlat", "role": "client", "mem": "host", "MsgSize": 4096, "n_iterations": 1000, "t_typical": 30.00}'
		[ -n "${4:-}" ] || echo '{"id": 2, "test": "rlat", "role": "client", "mem": "npu", "MsgSize": 64, "n_iterations": 1000, "t_typical": 40.00}'
		echo '{"id": 3, "test": "bw", "role": "client", "mem": "host", "MsgSize": 65536, "n_iterations": 1000, "BW_peak": 900.0, "BW_average": '"$2"', "MsgRate": 0.01}'
		echo '{"tool": "perftest", "test": "bw", "role": "client", "mem": "host", "MsgSize": 65536, "BW_average": 700.0}'
	} > "$1/results.json"
}
mkset "$t/base" 800.00 20.00
mkset "$t/same" 800.00 20.00
mkset "$t/bw15" 680.00 20.00		# BW down 15%
mkset "$t/bw5" 760.00 20.00		# BW down 5%: noise
mkset "$t/lat25" 800.00 25.00		# t_typical up 25%
mkset "$t/faster" 1600.00 10.00		# better is never a regression
mkset "$t/missing" 800.00 20.00 drop

check() {	# NAME WANT-RC GREP ARGS...
	name=$1 want=$2 pat=$3; shift 3
	out=$(scripts/compare "$@" 2>&1); rc=$?
	if [ $rc -ne "$want" ]; then ko "$name" "exit $rc, want $want: $out"
	elif [ -n "$pat" ] && ! echo "$out" | grep -q -- "$pat"; then ko "$name" "no '$pat' in: $out"
	else ok "$name"; fi
}
check identical 0 "compare: 0 regressed or missing of 5" "$t/base" "$t/same"
check bw-regression 1 "bw .*65536 BW_average .*REGRESSION (BW down 15.0% > 10%)" "$t/base" "$t/bw15"
check bw-within 0 "" "$t/base" "$t/bw5"
check bw-threshold-option 0 "" --bw-threshold 20 "$t/base" "$t/bw15"
check lat-regression 1 "wlat .*64 t_typical .*REGRESSION (latency up 25.0% > 20%)" "$t/base" "$t/lat25"
check lat-threshold-option 0 "" --lat-threshold 30 "$t/base" "$t/lat25"
check improvement 0 "" "$t/base" "$t/faster"
check missing 1 "rlat .*npu .*MISSING" "$t/base" "$t/missing"
check new-result 0 "new result" "$t/missing" "$t/base"
check json-file 1 "REGRESSION" "$t/base/results.json" "$t/bw15/results.json"
echo 'not json' > "$t/bad.json"
check bad-input 2 "not a result" "$t/base" "$t/bad.json"
# exit 2 and the reason: argparse's usage error exits 2 too
check no-file 2 "compare: .*No such file or directory: '$t/nonexistent'" "$t/base" "$t/nonexistent"
# another poll context, sge=N or rdma_rw is another test: never compared
# with the default path's figure (here 15% lower, no regression), and the
# default path's result is missing from such a set
sed 's/"mem": "host", "MsgSize": 65536, "n_iterations"/"mem": "host", "MsgSize": 65536, "cq": "softirq", "n_iterations"/' \
	"$t/bw15/results.json" > "$t/cq.json"
check cq-keyed 1 "bw-cq_softirq .*65536 BW_average .*new result" "$t/base" "$t/cq.json"
check cq-default-missing 1 "bw  *client host .*65536 .*MISSING" "$t/base" "$t/cq.json"
sed 's/"cq": "softirq"/"cq": "direct", "sge": 4, "rdma_rw": true/' "$t/cq.json" > "$t/rw.json"
check sge-rw-keyed 1 "bw-sge4-rw .*65536 .*new result" "$t/base" "$t/rw.json"
sed 's/"cq": "softirq"/"cq": "direct", "sge": 1, "rdma_rw": false/' "$t/cq.json" > "$t/plain.json"
check defaults-same-key 1 "bw .*65536 BW_average .*REGRESSION (BW down 15.0% > 10%)" "$t/base" "$t/plain.json"

# port counters: the same bandwidth with 20 times the retransmits a
# message is named and fails; a counter risen from none too; one within
# --hw-factor, or moved fewer than --hw-least times, is not
hwset() {	# FILE RETRY SEQ
	echo '{"test": "bw", "role": "client", "mem": "host", "MsgSize": 65536, "n_iterations": 1000, "BW_average": 800.0, "hw_counters": {"sent_pkts": 16000, "completer_retry_err": '"$2"', "rcvd_seq_err": '"$3"'}}' > "$1"
}
hwset "$t/hw-base.json" 5 0
hwset "$t/hw-x20.json" 100 0
hwset "$t/hw-seq.json" 5 40
hwset "$t/hw-x1.5.json" 8 0
hwset "$t/hw-few.json" 5 9
hwset "$t/hw-base20.json" 20 0
hwset "$t/hw-30.json" 30 0
# the same rate a message, once the new run's 1000 warm-up messages count
sed 's/"n_iterations": 1000,/"n_iterations": 1000, "warmup": 1000,/' "$t/hw-x20.json" |
	sed 's/"completer_retry_err": 100/"completer_retry_err": 10/' > "$t/hw-warm.json"
# a baseline that kept 12 counters and cut the rest says nothing of them
sed 's/"rcvd_seq_err": 0}/"rcvd_seq_err": 0}, "hw_counters_more": 3/' "$t/hw-base.json" > "$t/hw-cut.json"
check hw-retransmits-x20 1 "bw client host 65536: COUNTER completer_retry_err x20.0 (0.005 -> 0.1 a message)" "$t/hw-base.json" "$t/hw-x20.json"
check hw-from-none 1 "COUNTER rcvd_seq_err from none" "$t/hw-base.json" "$t/hw-seq.json"
check hw-within-factor 0 "compare: 0 regressed or missing of 1 baseline results$" "$t/hw-base20.json" "$t/hw-30.json"
check hw-warmup-counted 0 "compare: 0 regressed or missing of 1 baseline results$" "$t/hw-base.json" "$t/hw-warm.json"
check hw-cut-baseline 0 "" "$t/hw-cut.json" "$t/hw-seq.json"
check hw-fewer-than-least 0 "" "$t/hw-base.json" "$t/hw-few.json"
check hw-factor-option 0 "" --hw-factor 25 "$t/hw-base.json" "$t/hw-x20.json"
check hw-bad-option 2 "hw-factor is above 1" --hw-factor 1 "$t/hw-base.json" "$t/hw-x20.json"

# the median of repeated runs: 1 bad run in 3 is not a regression
{ cat "$t/base/results.json"; cat "$t/bw15/results.json"; cat "$t/base/results.json"; } > "$t/rep.json"
check median 0 "" "$t/base" "$t/rep.json"

# repeats on both sides: a confidence interval from a bootstrap
reps() {	# DIR BW...: one bw 65536 result per value
	mkdir -p "$1"; local d=$1; shift
	for v in "$@"; do
		echo '{"test": "bw", "role": "client", "mem": "host", "MsgSize": 65536, "BW_average": '"$v"'}'
	done > "$d/results.json"
}
reps "$t/r-base" 100 98 102 101 99
reps "$t/r-clear" 80 81 79 80 82			# down 20%, tight: sure
reps "$t/r-noisy" 60 120 85 130 70			# median down 15%, scattered
check ci-regression 1 "REGRESSION (BW down 20.0% > 10%; 95% CI 0.7[0-9]*-0.8[0-9]*, 5+5 results of one run each: the spread between runs is not in it)" "$t/r-base" "$t/r-clear"
check ci-within-noise 0 "ok (within noise: 95% CI 0\.[0-9]*-1\.[0-9]*, 5+5 results of one run each: the spread between runs is not in it)" "$t/r-base" "$t/r-noisy"
check ci-same 0 "ok (95% CI" "$t/r-base" "$t/r-base"
a=$(scripts/compare "$t/r-base" "$t/r-noisy"); b=$(scripts/compare "$t/r-base" "$t/r-noisy")
[ "$a" = "$b" ] && ok ci-deterministic || ko ci-deterministic "two runs differ"
# the interval itself: constant sets leave no spread, the bounds are the
# ratio exactly
out=$(cd scripts && python3 -c '
import importlib.machinery
c = importlib.machinery.SourceFileLoader("compare", "compare").load_module()
print(c.ratio_ci([5.0] * 4, [5.0] * 4), c.ratio_ci([10.0, 10.0, 10.0], [8.0, 8.0, 8.0]))')
[ "$out" = "(1.0, 1.0) (0.8, 0.8)" ] && ok ci-exact || ko ci-exact "$out"
# several runs a side (comma-joined), pooled: runs that each agree within
# 1% but differ by 30% from one another (boots under TCG) are a false
# alarm compared one run a side, within noise compared as sets of runs
reps "$t/boot-a" 100 101 99 100 100
reps "$t/boot-b" 70 71 69 70 70
reps "$t/boot-c" 99 100 98 99 101
reps "$t/boot-d" 71 70 72 70 69
check ci-one-run-each 1 "REGRESSION (BW down 30.0% > 10%; 95% CI .*5+5 results of one run each" "$t/boot-a" "$t/boot-b"
check ci-pooled 0 "ok (95% CI 0\.[0-9]*-1\.[0-9]*, 10+10 results of 2+2 runs)" "$t/boot-a,$t/boot-b" "$t/boot-d,$t/boot-c"
check ci-pooled-noise 0 "ok (within noise: 95% CI 0\.[0-9]*-1\.[0-9]*, 10+10 results of 2+2 runs)" "$t/boot-a,$t/boot-d" "$t/boot-b,$t/boot-d"
check ci-pooled-clear 1 "REGRESSION (BW down 30.0% > 10%; 95% CI .*, 10+10 results of 2+2 runs)" "$t/boot-a,$t/boot-c" "$t/boot-b,$t/boot-d"
check ci-pooled-missing-set 2 "compare: .*No such file or directory: '$t/nonexistent'" "$t/boot-a,$t/nonexistent" "$t/boot-b"
out=$(cd scripts && python3 -c '
import importlib.machinery
c = importlib.machinery.SourceFileLoader("compare", "compare").load_module()
print(c.ratio_ci_runs([[5.0] * 3, [5.0] * 3], [[4.0] * 3, [4.0] * 3]))')
[ "$out" = "(0.8, 0.8)" ] && ok ci-runs-exact || ko ci-runs-exact "$out"
# scripts/run --boots N: one directory whose results carry "boot"; each
# boot is a run, as the comma-joined sets above: the same verdicts from
# one directory a side as from two runs a side
boots() {	# DIR RUN...: each RUN's results as one boot of DIR
	mkdir -p "$1"; local d=$1 b=0 r; shift
	for r in "$@"; do
		b=$((b + 1))
		sed "s/^{/{\"boot\": $b, /" "$r/results.json"
	done > "$d/results.json"
}
boots "$t/b-ab" "$t/boot-a" "$t/boot-b"
boots "$t/b-dc" "$t/boot-d" "$t/boot-c"
boots "$t/b-ac" "$t/boot-a" "$t/boot-c"
boots "$t/b-bd" "$t/boot-b" "$t/boot-d"
check boots-pooled 0 "ok (95% CI 0\.[0-9]*-1\.[0-9]*, 10+10 results of 2+2 runs)" "$t/b-ab" "$t/b-dc"
check boots-clear 1 "REGRESSION (BW down 30.0% > 10%; 95% CI .*, 10+10 results of 2+2 runs)" "$t/b-ac" "$t/b-bd"
a=$(scripts/compare "$t/boot-a,$t/boot-b" "$t/boot-d,$t/boot-c" | sed 1d)
b=$(scripts/compare "$t/b-ab" "$t/b-dc" | sed 1d)
[ -n "$a" ] && [ "$a" = "$b" ] && ok boots-as-sets || ko boots-as-sets "$a | $b"
# without "boot" the same ten results are one run: the narrow interval
# of one run each
sed 's/"boot": [0-9]*, //' "$t/b-ab/results.json" > "$t/flat-ab.json"
sed 's/"boot": [0-9]*, //' "$t/b-dc/results.json" > "$t/flat-dc.json"
check boots-flat 0 "10+10 results of one run each" "$t/flat-ab.json" "$t/flat-dc.json"
