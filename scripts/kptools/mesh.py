# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The parts of scripts/mesh that need no cluster: the schedule, the
matrices, the outliers and the heatmap.  Stdlib only (unit-tested on the
host by tests/host/test_mesh.sh)."""
import json
import math
import os
import statistics
import subprocess

from kptools import results as kpresults

BW_TESTS = kpresults.BW_TESTS


# ---------------------------------------------------------------- schedule

def tournament(hosts):
    """All pairs in n-1 rounds (n rounded up to even; odd n: one host sits
    out each round, the bye), each host in at most one pair a round: the
    circle method.  A pair is (server, client); who serves alternates."""
    h = list(hosts)
    if len(h) < 2:
        return []
    if len(h) % 2:
        h.append(None)
    n = len(h)
    rounds, serves = [], {x: 0 for x in h}
    for r in range(n - 1):
        pairs = []
        for i in range(n // 2):
            a, b = h[i], h[n - 1 - i]
            if a is None or b is None:
                continue
            # the one that served less so far serves
            if serves[b] < serves[a]:
                a, b = b, a
            serves[a] += 1
            pairs.append((a, b))
        rounds.append(pairs)
        h = [h[0], h[-1]] + h[1:-1]
    return rounds


def pack(pairs):
    """Pairs into rounds, first fit, so that no host is in two pairs of a
    round (a ring needs 2 rounds, 3 when odd)."""
    rounds, busy = [], []
    for a, b in pairs:
        for r, used in enumerate(busy):
            if a not in used and b not in used:
                rounds[r].append((a, b))
                used.update((a, b))
                break
        else:
            rounds.append([(a, b)])
            busy.append({a, b})
    return rounds


def ring(hosts):
    """Each host with the next one (the last with the first): n pairs for
    n > 2, each host serving once and once a client; a quick pass."""
    h = list(hosts)
    if len(h) < 2:
        return []
    if len(h) == 2:
        return [[(h[0], h[1])]]
    return pack([(h[i], h[(i + 1) % len(h)]) for i in range(len(h))])


def pairs_file(path, hosts):
    """The pairs of FILE ("SERVER CLIENT" a line, '#' comments), packed in
    rounds; every name must be one of @hosts."""
    known, pairs = set(hosts), []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            w = line.split("#")[0].split()
            if not w:
                continue
            if len(w) != 2 or w[0] == w[1]:
                raise ValueError(f"{path}:{n}: want 'SERVER CLIENT', two hosts")
            for x in w:
                if x not in known:
                    raise ValueError(f"{path}:{n}: {x} is not in --nodes")
            pairs.append((w[0], w[1]))
    return pack(pairs)


def nic_map(path):
    """{host: [address of NIC 0, NIC 1, ...]} from "HOST ADDR..." lines."""
    m = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            w = line.split("#")[0].split()
            if not w:
                continue
            if len(w) < 2:
                raise ValueError(f"{path}:{n}: want 'HOST ADDR [ADDR...]'")
            if w[0] in m:
                raise ValueError(f"{path}:{n}: {w[0]} twice")
            m[w[0]] = w[1:]
    return m


# ---------------------------------------------------------------- matrices

def figure_of(test):
    return "BW_average" if test in BW_TESTS else "t_typical"


def matrix_keys(pairs):
    """The (test, MsgSize, mem, nic) a run measured, sorted."""
    keys = set()
    for p in pairs:
        for r in p.get("results", []):
            if kpresults.valid(r) and "test" in r:
                keys.add((r["test"], int(r["MsgSize"]), r.get("mem", "host"), p.get("nic", 0)))
    return sorted(keys)


def value(results, key):
    """The figure of @key among @results (median of several), or None."""
    test, size, mem, _ = key
    v = [float(r[figure_of(test)]) for r in results
         if kpresults.valid(r) and r.get("test") == test and int(r.get("MsgSize", -1)) == size
         and r.get("mem", "host") == mem]
    return statistics.median(v) if v else None


def matrix(pairs, key, hosts):
    """The matrix of @key: {"hosts", "figure", "cells": [[v or None]],
    "pairs": [{server, client, value, first, retest}]}; rows are servers,
    columns clients, a pair measured in one direction filled in both."""
    test, size, mem, nic = key
    hs = sorted(hosts)
    at = {h: i for i, h in enumerate(hs)}
    cells = [[None] * len(hs) for _ in hs]
    rows = []
    for p in pairs:
        if p.get("nic", 0) != nic:
            continue
        first = value(p.get("results", []), key)
        again = value(p.get("retest", []), key) if p.get("retest") is not None else None
        v = again if again is not None else first
        if v is None:
            continue
        s, c = at[p["server"]], at[p["client"]]
        cells[s][c] = v
        if cells[c][s] is None:
            cells[c][s] = v
        rows.append({"server": p["server"], "client": p["client"], "value": v,
                     "first": first, "retest": again})
    return {"test": test, "MsgSize": size, "mem": mem, "nic": nic,
            "figure": figure_of(test), "hosts": hs, "cells": cells, "pairs": rows}


def matrix_name(key, nics):
    test, size, mem, nic = key
    name = f"matrix-{figure_of(test)}-{test}-{size}"
    if mem != "host":
        name += f"-{mem}"
    if nics > 1:
        name += f"-nic{nic}"
    return name


def write_matrix(m, base):
    """BASE.csv (rows servers, columns clients, empty where not measured)
    and BASE.json."""
    with open(base + ".csv", "w", encoding="utf-8") as f:
        f.write(",".join([f"{m['figure']} server\\client"] + m["hosts"]) + "\n")
        for h, row in zip(m["hosts"], m["cells"]):
            f.write(",".join([h] + ["" if v is None else f"{v:.2f}" for v in row]) + "\n")
    with open(base + ".json", "w", encoding="utf-8") as f:
        json.dump(m, f, indent=1)
        f.write("\n")


# ---------------------------------------------------------------- outliers

def suspect(v, med, bw, bw_frac, lat_mult):
    """Is figure @v suspect against the median @med of all pairs?"""
    if v is None or med is None:
        return False
    return v < bw_frac * med if bw else v > lat_mult * med


def outliers(m, bw_frac, lat_mult, first=True):
    """The suspect pairs of matrix @m: [(server, client, value)], and the
    median they are judged against (of every pair's first value)."""
    bw = m["test"] in BW_TESTS
    vals = [p["first"] if first and p["first"] is not None else p["value"] for p in m["pairs"]]
    if not vals:
        return [], None
    med = statistics.median(vals)
    out = []
    for p, v in zip(m["pairs"], vals):
        if suspect(v, med, bw, bw_frac, lat_mult):
            out.append((p["server"], p["client"], v))
    return out, med


def blame(pairs_measured, suspects):
    """Which hosts are to blame: those in at least two suspect pairs and in
    suspects for more than half the pairs they were measured in.
    @pairs_measured: [(a, b)]; @suspects: [(a, b, ...)].  Returns
    ([(host, n_suspect, n_pairs)], [suspect pairs none of them explains])."""
    total, bad = {}, {}
    for a, b in pairs_measured:
        for h in (a, b):
            total[h] = total.get(h, 0) + 1
    for s in suspects:
        for h in s[:2]:
            bad[h] = bad.get(h, 0) + 1
    named = sorted((h, bad[h], total[h]) for h in bad
                   if bad[h] >= 2 and 2 * bad[h] > total[h])
    names = {h for h, _, _ in named}
    links = [s for s in suspects if s[0] not in names and s[1] not in names]
    return named, links


# ---------------------------------------------------------------- heatmap

def heatmap(m, png, work):
    """A gnuplot heatmap of matrix @m: hosts sorted on both axes (servers
    up, clients across), each cell its value when the cells are big enough
    to hold it."""
    hs, n = m["hosts"], len(m["hosts"])
    cell = max(24, min(90, 900 // max(n, 1)))
    side = 180 + cell * n
    os.makedirs(work, exist_ok=True)
    data = os.path.join(work, os.path.basename(png) + ".dat")
    with open(data, "w", encoding="utf-8") as f:
        for i, row in enumerate(m["cells"]):
            for j, v in enumerate(row):
                if v is not None:
                    f.write(f"{j} {i} {v:.6g}\n")
    tics = ", ".join(f'"{h}" {i}' for i, h in enumerate(hs))
    unit = "MiB/s" if m["figure"] == "BW_average" else "usec"
    nic = f" nic{m['nic']}" if m.get("nic") else ""
    title = f"{m['test']} {m['MsgSize']} B {m['mem']}{nic}: {m['figure']} ({unit})"
    # annotate when a number fits in a cell: ~7 px a character at 9 pt
    label = cell >= 48
    fmt = "%.0f" if all(v is None or v >= 100 for r in m["cells"] for v in r) else "%.1f"
    # low bandwidth and high latency both drawn dark
    vals = [v for r in m["cells"] for v in r if v is not None]
    lo, hi = (min(vals), max(vals)) if vals else (0, 1)
    if hi <= lo:
        lo, hi = lo * 0.9 - 1e-9, hi * 1.1 + 1e-9
    pal = f"set cbrange [{lo:.6g}:{hi:.6g}]\n"
    pal += ("set palette defined (0 'red', 0.5 'orange', 1 'light-green')" if m["figure"] == "BW_average"
            else "set palette defined (0 'light-green', 0.5 'orange', 1 'red')")
    script = f'''set terminal pngcairo size {side + 140},{side} font "Sans,9"
set output "{png}"
set termoption noenhanced
set title "{title}"
set xrange [-0.5:{n - 0.5}]
set yrange [{n - 0.5}:-0.5]
set xtics ({tics}) rotate by 45 right
set ytics ({tics})
set xlabel "client"
set ylabel "server"
set size ratio -1
{pal}
set style fill solid 1.0 noborder
unset key
plot "{data}" using 1:2:(0.5):(0.5):3 with boxxyerror fc palette'''
    if label:
        script += f''', \\
  "{data}" using 1:2:(sprintf("{fmt}", $3)) with labels tc "black"'''
    script += "\n"
    gp = os.path.join(work, os.path.basename(png) + ".gp")
    with open(gp, "w", encoding="utf-8") as f:
        f.write(script)
    if not any(v is not None for r in m["cells"] for v in r):
        return False
    subprocess.run(["gnuplot", gp], check=True)
    return os.path.getsize(png) > 0


# ---------------------------------------------------------------- helpers

def fmt_value(v):
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.2f}"
