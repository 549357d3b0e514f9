#!/bin/bash
# Host tests of scripts/plot and scripts/summary on a synthetic result set:
# every plot is written, is a PNG of the expected size and is not blank;
# baseline-vs-new plots too; the summary has a row per key with the ratio.
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS $1"; }
ko() { echo "FAIL $1: $2"; }
command -v gnuplot >/dev/null || { ko plot-tool "gnuplot not installed (scripts/setup)"; exit 0; }

mkset() {	# DIR SCALE
	mkdir -p "$1"
	python3 - "$1/results.json" "$2" <<'PY'
import json, sys
out, k = open(sys.argv[1], "w"), float(sys.argv[2])
cdf = [0, 10, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 950, 990, 999, 1000]
for mem in ("host", "npu"):
    for size in (64, 4096, 65536, 1048576):
        for test in ("wlat", "rlat"):
            t = k * (20 + size / 1000.0)
            out.write(json.dumps({"test": test, "role": "client", "mem": mem, "MsgSize": size,
                "n_iterations": 1000, "t_min": t * .8, "t_typical": t, "percentile_99": t * 2,
                "percentile_99.9": t * 3, "t_max": t * 4,
                "cdf": [[p / 1000, t * (0.8 + p / 300.0)] for p in cdf],
                # npu results carry the whole run's histogram, as the module writes it
                **({"histogram": [[t * (0.8 + i / 100.0), 10] for i in range(100)]} if mem == "npu" else {})}) + "\n")
        for test in ("bw", "bw_read"):
            out.write(json.dumps({"test": test, "role": "client", "mem": mem, "MsgSize": size,
                "n_iterations": 1000, "BW_peak": 1200 / k, "BW_average": min(1000, size / 50.0) / k,
                "MsgRate": 0.1}) + "\n")
for size in (64, 65536):
    out.write(json.dumps({"tool": "perftest", "test": "bw", "role": "client", "mem": "host",
        "MsgSize": size, "n_iterations": 1000, "BW_average": 900.0, "BW_peak": 950.0}) + "\n")
PY
}
mkset "$t/base" 1
mkset "$t/new" 1.3

# pngcheck DIR NAMES...: each a PNG of 1000x620 with more than one colour
pngcheck() {
	d=$1; shift
	tests/host/png-check 1000 620 $(printf "$d/plots/%s " "$@")
}
all="bw.png bw_read.png lat-wlat.png lat-rlat.png cdf-wlat.png cdf-rlat.png"
if out=$(scripts/plot "$t/new" 2>&1) && [ "$(echo "$out" | wc -l)" = 6 ] &&
   err=$(pngcheck "$t/new" $all 2>&1); then ok plot-one-set
else ko plot-one-set "$out $err"; fi
rm -rf "$t/new/plots"
if out=$(scripts/plot "$t/new" "$t/base" 2>&1) && err=$(pngcheck "$t/new" $all 2>&1) &&
   grep -q 'baseline)' "$t/new/plots/data/bw.png.gp" && grep -q 'new)' "$t/new/plots/data/bw.png.gp"; then
	ok plot-baseline-vs-new
else ko plot-baseline-vs-new "$out $err"; fi
mkdir -p "$t/empty"; : > "$t/empty/results.json"
# refused with exit 1 and the reason, not any failure (a traceback is 1 too)
out=$(scripts/plot "$t/empty" 2>&1); rc=$?
[ $rc = 1 ] && [ "$out" = "plot: $t/empty: nothing to plot" ] && ok plot-empty ||
	ko plot-empty "exit $rc: $out"

out=$(scripts/summary "$t/base")
rows=$(echo "$out" | grep -c '^| [a-z]* | client |')
[ "$rows" = 24 ] || ko summary "rows $rows, want 24: $out"
echo "$out" | grep -q '^| bw | client | host | 64 | 1000 | 1.28 | BW_peak 1200.00 | 900.00 | 0.00 |$' &&
	echo "$out" | grep -q '^| wlat | client | npu | 4096 | 1000 | 24.10 | p99 48.19 | - | - |$' &&
	[ "$rows" = 24 ] && ok summary || ko summary "rows: $(echo "$out" | grep '^| bw | client | host | 64 ')"
