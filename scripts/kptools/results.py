#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Read result files strictly: one JSON object a line, finite figures only.

usage: scripts/kptools/results.py normalize [FILE...]   (stdin without FILEs)

Every tool's output is input here: a line that is not JSON (truncated on a
console, a bare inf or nan), or a result whose figures are missing or not
finite numbers, or whose main figure is not above zero, becomes an invalid
result: {"valid": false, "error": why, "raw": the line}, with whatever keys
could be read.  "normalize" prints
the results as valid JSON lines, invalid ones included, and says on
stderr how many were invalid.  summary, plot and compare read through
load(): they show invalid results as such and carry on.
"""
import json
import math
import sys

LAT_FIGURES = ("t_min", "t_max", "t_typical", "t_avg", "t_stdev",
               "percentile_99", "percentile_99.9")
BW_FIGURES = ("BW_peak", "BW_average", "MsgRate")
# the figure a result is compared by: it must be there
BW_TESTS = ("bw", "bw_read", "bw_send", "bw_atomic", "bw_imm")
MAIN = {t: "BW_average" for t in BW_TESTS}
KEYS = ("tool", "test", "role", "mem", "device", "MsgSize")


def test_name(r):
    """The test a result is compared as: qps=N (N > 1) streams are a test
    of their own ("bw-q2"), beside perftest's -q N; so are a poll context
    other than direct (the default, and all a result without "cq" had),
    sge=N (N > 1), rdma_rw ("bw-cq_softirq-sge4-rw"), and a bandwidth
    result's transport or MR layout ("bw_send-ud", "bw-q2-mr_per_qp"):
    each takes another path through the core and the driver."""
    name = r["test"]
    q = r.get("qps", 1)
    if isinstance(q, int) and q > 1:
        name += f"-q{q}"
    cq = r.get("cq", "direct")
    if isinstance(cq, str) and cq != "direct":
        name += f"-cq_{cq}"
    sge = r.get("sge", 1)
    if isinstance(sge, int) and sge > 1:
        name += f"-sge{sge}"
    if r.get("rdma_rw") is True:
        name += "-rw"
    if r.get("variant") in ("ud", "mr_per_qp") and r["test"] in BW_TESTS:
        name += "-" + r["variant"]
    return name


def is_bw(name):
    """Is a test_name() a bandwidth test's ("bw-q2-cq_softirq" is)?"""
    return name.split("-")[0] in BW_TESTS


def per_qp(r):
    """A connection's own line of a qps=N result: not a result to compare."""
    return "qp" in r


def figures(test):
    """The figures a result of @test must carry."""
    return BW_FIGURES if test in BW_TESTS else LAT_FIGURES


def _reject_constant(name):
    raise ValueError(f"non-finite number {name}")


def _finite(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check(r):
    """Why result @r is invalid, or None."""
    if r.get("valid") is False:
        return r.get("error") or "marked invalid"
    for k in ("test", "MsgSize"):
        if k not in r:
            return f"no {k}"
    if not _finite(r["MsgSize"]) or r["MsgSize"] <= 0:
        return f"MsgSize {r['MsgSize']!r}"
    main = MAIN.get(r["test"], "t_typical")
    if main not in r:
        return f"no {main}"
    for k in figures(r["test"]):
        if k in r and not _finite(r[k]):
            return f"{k} is {r[k]!r}"
    # a completed run moved data at some rate and took some time
    if r[main] <= 0:
        return f"{main} is {r[main]!r} over a completed run"
    return None


def parse_line(line):
    """The result of one line; invalid ones carry valid/error/raw."""
    try:
        r = json.loads(line, parse_constant=_reject_constant)
        if not isinstance(r, dict):
            raise ValueError("not an object")
    except ValueError as e:
        r = {"valid": False, "error": f"unparsable line ({e})"}
        # keep what can be read of a line cut short
        for k in KEYS:
            key = f'"{k}": '
            at = line.find(key)
            if at >= 0:
                v = line[at + len(key):].split(",")[0].split("}")[0].strip()
                try:
                    r[k] = json.loads(v)
                except ValueError:
                    pass
        r["raw"] = line[:400]
        return r
    why = check(r)
    if why:
        r = {k: v for k, v in r.items()
             if not (isinstance(v, float) and not math.isfinite(v))}
        r["valid"] = False
        r["error"] = why
        r.setdefault("raw", line[:400])
    return r


def read_lines(lines):
    return [parse_line(l.strip()) for l in lines if l.strip()]


def load(path):
    """All results of a JSON-lines file, valid or not."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return read_lines(f)


def valid(r):
    return r.get("valid") is not False


def describe(r):
    """How a table shows an invalid result."""
    tool = r.get("tool", "krping_npu")
    return f"{tool} gave no figure ({r.get('error', 'invalid')})"


def main():
    if len(sys.argv) < 2 or sys.argv[1] != "normalize":
        print(__doc__.split("\n")[2], file=sys.stderr)
        return 2
    results = []
    if len(sys.argv) == 2:
        results = read_lines(sys.stdin)
    for p in sys.argv[2:]:
        try:
            results += load(p)
        except OSError:
            pass
    # qps=N: the per-connection lines stay in krping_npu.json
    lines = len(results)
    results = [r for r in results if not per_qp(r)]
    bad = [r for r in results if not valid(r)]
    for r in results:
        print(json.dumps(r, allow_nan=False))
    for r in bad:
        print(f"kpresults: invalid: {r.get('tool', 'krping_npu')} {r.get('test', '?')} "
              f"{r.get('MsgSize', '?')}: {r.get('error')}", file=sys.stderr)
    print(f"kpresults: {len(results)} results, {len(bad)} invalid"
          f"{f', {lines - len(results)} per-QP lines left out' if lines > len(results) else ''}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
