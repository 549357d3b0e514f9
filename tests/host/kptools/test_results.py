# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Unit tests of scripts/kptools/results.py: prints "PASS name" /
"FAIL name: why", then "unit: end"."""
import kt
from kptools import results  # noqa: E402

check = kt.Checks("kptools-results")


LAT = ('{"test": "wlat", "MsgSize": 64, "t_min": 1.5, "t_max": 9.0, "t_typical": 2.0, '
       '"t_avg": 2.5, "t_stdev": 0.5, "percentile_99": 7.0, "percentile_99.9": 8.5}')
BW = '{"test": "bw", "MsgSize": 65536, "BW_peak": 90.0, "BW_average": 80.0, "MsgRate": 0.0012}'

r = results.parse_line(LAT)
check("latency-valid", results.valid(r) and r["t_typical"] == 2.0, str(r))
r = results.parse_line(BW)
check("bw-valid", results.valid(r) and results.figures("bw") == results.BW_FIGURES, str(r))
r = results.parse_line(BW.replace("80.0", "Infinity"))
check("inf-invalid", not results.valid(r) and "non-finite" in r["error"] and r["MsgSize"] == 65536, str(r))
r = results.parse_line(BW.replace("80.0", "NaN"))
check("nan-invalid", not results.valid(r) and "BW_average" not in r, str(r))
r = results.parse_line(BW.replace("80.0", "0.0"))
check("zero-main-invalid", not results.valid(r) and r["error"] == "BW_average is 0.0 over a completed run", str(r))
r = results.parse_line(LAT.replace('"t_typical": 2.0, ', ""))
check("missing-main-invalid", not results.valid(r) and r["error"] == "no t_typical", str(r))
r = results.parse_line('{"test": "wlat", "MsgSize": 64, "t_typ')
check("cut-line-keeps-keys", not results.valid(r) and r.get("test") == "wlat" and r.get("MsgSize") == 64
      and r["raw"].startswith('{"test"'), str(r))
r = results.parse_line("[1, 2]")
check("not-an-object", not results.valid(r) and "not an object" in r["error"], str(r))
check("describe", results.describe({"tool": "perftest", "error": "no t_typical"})
      == "perftest gave no figure (no t_typical)")
check("test-name-qps", results.test_name({"test": "bw", "qps": 2}) == "bw-q2"
      and results.test_name({"test": "bw", "qps": 1}) == "bw")
check("test-name-variant",
      results.test_name({"test": "bw", "qps": 2, "variant": "mr_per_qp"}) == "bw-q2-mr_per_qp"
      and results.test_name({"test": "bw_send", "variant": "ud"}) == "bw_send-ud"
      and results.test_name({"test": "wlat", "variant": "imm"}) == "wlat")
rs = results.read_lines([LAT + "\n", "\n", "  \n", BW + "\n"])
check("read-lines-skips-blank", len(rs) == 2 and all(results.valid(x) for x in rs), str(rs))

check.done()
