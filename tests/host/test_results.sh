#!/bin/bash
# Host tests of result parsing: perftest's output (kp-target perftest-parse)
# and result lines (scripts/kptools/results.py) fed inf, nan, -nan, empty,
# truncated and garbage input give strictly valid JSON with the bad
# results marked invalid; summary, plot and compare show them as such and
# go on.  Prints "PASS/FAIL name".
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS results-$1"; }
ko() { echo "FAIL results-$1: $2"; }

# strict JSON: one object a line, no NaN/Infinity; prints the objects'
# "valid" flags, one a line ("true" when absent)
strict() {
	python3 -c '
import json, sys
def no(c): raise ValueError(c)
for l in open(sys.argv[1]):
    if l.strip():
        r = json.loads(l, parse_constant=no)
        print(str(r.get("valid", True)).lower())
' "$1"
}

HDR=' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]'
pt_case() {	# NAME MODE WANT(valid|invalid) BODY
	printf '%s\n%s\n' "$HDR" "$4" > "$t/pt.out"
	sh scripts/kp-target perftest-parse "$2" 65536 rxe0 "$t/pt.out" > "$t/pt.json"
	rc=$?
	v=$(strict "$t/pt.json" 2>&1)
	case $3 in
	valid) [ $rc = 0 ] && [ "$v" = true ] ;;
	invalid) [ $rc = 1 ] && [ "$v" = false ] && grep -q '"error": ' "$t/pt.json" ;;
	esac && ok "perftest-$1" || ko "perftest-$1" "rc=$rc valid=$v: $(cat "$t/pt.json")"
}
pt_case good wlat valid ' 65536      200          10.51        80.12        11.02        12.30        2.10         40.00        80.12'
pt_case inf wlat invalid ' 65536      200          inf          inf          inf          inf          -nan          inf          inf'
pt_case nan wlat invalid ' 65536      200          10.51        80.12        nan          12.30        2.10         40.00        80.12'
pt_case minus-nan wlat invalid ' 65536      200          10.51        80.12        11.02        12.30        -nan         40.00        80.12'
pt_case empty wlat invalid ''
pt_case truncated wlat invalid ' 65536      200          10.51        80.1'
pt_case garbage wlat invalid ' 65536 Couldnt connect to 192.0.2.1:18516 "quoted" \back'
pt_case bw-good bw valid ' 65536      1000           900.12             880.50              0.014088'
pt_case bw-inf bw invalid ' 65536      1000           inf             880.50              0.014088'
# CI's ib_read_bw once: a sane peak, an average of zero over a run that ended
pt_case bw-zero bw_read invalid ' 65536      300            64.03              0.00                 0.000000'
grep -q '"error": "BW_average is 0.00 over a completed run"' "$t/pt.json" && ok perftest-bw-zero-why ||
	ko perftest-bw-zero-why "$(cat "$t/pt.json")"
pt_case lat-zero wlat invalid ' 65536      200          0.00        80.12        0.00        12.30        2.10         40.00        80.12'
pt_case bw-slow bw valid ' 65536      1000           0.02             0.01              0.000001'

# result lines as a console may cut them, and lines with non-finite figures
mkdir -p "$t/new" "$t/base"
{
	echo '{"id": 1, "test": "wlat", "role": "client", "mem": "host", "MsgSize": 64, "n_iterations": 200, "t_min": 1.5, "t_max": 9.0, "t_typical": 2.0, "t_avg": 2.2, "t_stdev": 0.4, "percentile_99": 5.0, "percentile_99.9": 9.0}'
	echo '{"id": 2, "test": "wlat", "role": "client", "mem": "host", "MsgSize": 4096, "n_iterations": 200, "t_typ'
	echo '{"id": 3, "test": "rlat", "role": "client", "mem": "host", "MsgSize": 64, "t_typical": NaN}'
	echo '{"id": 4, "test": "bw", "role": "client", "mem": "host", "MsgSize": 65536, "n_iterations": 10}'
	echo 'Segmentation fault'
	echo '{"tool": "perftest", "test": "wlat", "role": "client", "mem": "host", "MsgSize": 64, "n_iterations": 200, "t_min": inf, "t_typical": -nan}'
	echo '{"tool": "perftest", "test": "bw_read", "role": "client", "mem": "host", "MsgSize": 65536, "n_iterations": 300, "BW_peak": 64.03, "BW_average": 0.0, "MsgRate": 0.0}'
} > "$t/raw.json"
scripts/kptools/results.py normalize "$t/raw.json" > "$t/new/results.json" 2> "$t/norm.err"
flags=$(strict "$t/new/results.json" 2>&1 | tr '\n' ' ')
[ "$flags" = "true false false false false false false " ] && grep -q '7 results, 6 invalid' "$t/norm.err" &&
	grep -q '"BW_average": 0.0, .*"error": "BW_average is 0.0 over a completed run"' "$t/new/results.json" &&
	ok normalize || ko normalize "flags: $flags; $(cat "$t/norm.err")"
grep -q '"test": "wlat", "role": "client", "mem": "host", "MsgSize": 4096' "$t/new/results.json" &&
	ok normalize-keeps-keys || ko normalize-keeps-keys "$(sed -n 2p "$t/new/results.json")"

# summary: invalid results shown as such, the rest as usual
if out=$(scripts/summary "$t/new"); then
	echo "$out" | grep -q '^| wlat | client | host | 64 | 200 | 2.00 | p99 5.00 | perftest gave no figure (' &&
		echo "$out" | grep -q '^| wlat | client | host | 4096 | .* krping_npu gave no figure (unparsable line' &&
		echo "$out" | grep -q 'Unreadable result line: krping_npu gave no figure' &&
		ok summary || ko summary "$out"
else
	ko summary "exit $?"
fi

# plot: draws the valid results, names the rest
if scripts/plot "$t/new" > "$t/plot.out" 2>&1; then
	grep -q 'left out: perftest gave no figure' "$t/plot.out" && [ -s "$t/new/plots/lat-wlat.png" ] &&
		ok plot || ko plot "$(cat "$t/plot.out")"
else
	ko plot "exit $?: $(tail -3 "$t/plot.out")"
fi

# compare: an invalid result in NEW counts like a missing one
grep -v 'Segmentation\|t_typ$' "$t/raw.json" | sed 's/NaN/3.0/; s/inf/1.0/; s/-nan/2.0/; s/"n_iterations": 10}/"n_iterations": 10, "BW_average": 800.0}/' \
	> "$t/base/results.json"
out=$(scripts/compare "$t/base" "$t/new" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q '^perftest .* wlat .* INVALID (unparsable line' &&
	echo "$out" | grep -q 'rlat .* INVALID (unparsable line' &&
	ok compare-invalid || ko compare-invalid "rc=$rc: $out"
out=$(scripts/compare "$t/new" "$t/new" 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q 'INVALID' && ok compare-both-invalid || ko compare-both-invalid "rc=$rc: $out"

# qps=N: perftest -q N results carry "qps"; krping_npu's per-connection
# lines stay out of results.json; a -q 2 result is a test of its own
# ("bw-q2") in summary and compare, beside the one-QP result
printf '%s\n%s\n' ' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]' \
	' 4096       1000             300.50             290.25               0.074304' > "$t/ptq.out"
sh scripts/kp-target perftest-parse bw 4096 rxe0 "$t/ptq.out" 2 > "$t/ptq.json" &&
	grep -q '"MsgSize": 4096, "qps": 2, "n_iterations": 1000, "BW_peak": 300.50, "BW_average": 290.25' "$t/ptq.json" &&
	ok perftest-qps || ko perftest-qps "$(cat "$t/ptq.json")"
sh scripts/kp-target perftest-parse bw 4096 rxe0 "$t/ptq.out" > "$t/ptq1.json" && ! grep -q qps "$t/ptq1.json" &&
	ok perftest-one-qp || ko perftest-one-qp "$(cat "$t/ptq1.json")"
mkdir -p "$t/q"
{
	echo '{"id": 5, "test": "bw", "role": "client", "mem": "host", "device": "rxe0", "kernel": "k", "duration": 0, "MsgSize": 4096, "n_iterations": 1000, "BW_peak": 100.00, "BW_average": 90.00, "MsgRate": 0.023040}'
	echo '{"id": 6, "test": "bw", "role": "client", "mem": "host", "device": "rxe0", "kernel": "k", "duration": 0, "MsgSize": 4096, "n_iterations": 2000, "qps": 2, "BW_peak": 200.00, "BW_average": 170.00, "MsgRate": 0.043520}'
	echo '{"id": 6, "test": "bw", "role": "client", "mem": "host", "device": "rxe0", "kernel": "k", "duration": 0, "MsgSize": 4096, "n_iterations": 1000, "qp": 0, "BW_peak": 100.00, "BW_average": 85.00, "MsgRate": 0.021760}'
	echo '{"id": 6, "test": "bw", "role": "client", "mem": "host", "device": "rxe0", "kernel": "k", "duration": 0, "MsgSize": 4096, "n_iterations": 1000, "qp": 1, "BW_peak": 100.00, "BW_average": 85.00, "MsgRate": 0.021760}'
	cat "$t/ptq.json"
} | scripts/kptools/results.py normalize > "$t/q/results.json" 2> "$t/q/err"
[ "$(wc -l < "$t/q/results.json")" = 3 ] && ! grep -q '"qp": ' "$t/q/results.json" &&
	grep -q '2 per-QP lines left out' "$t/q/err" &&
	ok normalize-per-qp || ko normalize-per-qp "$(cat "$t/q/results.json" "$t/q/err")"
out=$(scripts/summary "$t/q")
echo "$out" | grep -q '^| bw | client | host | 4096 | 1000 | 90.00 | BW_peak 100.00 | - | - |' &&
	echo "$out" | grep -q '^| bw-q2 | client | host | 4096 | 2000 | 170.00 | BW_peak 200.00 | 290.25 | 0.59 |' &&
	ok summary-qps || ko summary-qps "$out"
sed 's/"BW_average": 170\.0*\([,}]\)/"BW_average": 120.0\1/' "$t/q/results.json" > "$t/q/worse.json"
mkdir -p "$t/q2" && mv "$t/q/worse.json" "$t/q2/results.json"
out=$(scripts/compare "$t/q" "$t/q2" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q '^krping_npu bw-q2 .* BW_average .* REGRESSION' &&
	echo "$out" | grep -q '^krping_npu bw  .* ok' &&
	ok compare-qps || ko compare-qps "rc=$rc: $out"
