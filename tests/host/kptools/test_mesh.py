# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Unit tests of scripts/kptools/mesh.py (and later scripts/history and
scripts/compare's intervals): prints "PASS name" / "FAIL name: why"."""
import itertools
import kt
from kptools import mesh as kpmesh  # noqa: E402

check = kt.Checks("mesh")


def schedule_errors(n):
    hosts = [f"h{i:02d}" for i in range(n)]
    rounds = kpmesh.tournament(hosts)
    want_rounds = n - 1 if n % 2 == 0 else n
    if len(rounds) != want_rounds:
        return f"n={n}: {len(rounds)} rounds, want {want_rounds}"
    seen = {}
    byes = {h: 0 for h in hosts}
    for r, pairs in enumerate(rounds):
        if len(pairs) != n // 2:
            return f"n={n} round {r}: {len(pairs)} pairs, want {n // 2}"
        used = [h for p in pairs for h in p]
        if len(used) != len(set(used)):
            return f"n={n} round {r}: a host twice: {pairs}"
        for h in set(hosts) - set(used):
            byes[h] += 1
        for a, b in pairs:
            k = frozenset((a, b))
            if a == b or k in seen:
                return f"n={n}: pair {a}-{b} again (round {seen.get(k)} and {r})"
            seen[k] = r
    if len(seen) != n * (n - 1) // 2:
        return f"n={n}: {len(seen)} pairs, want {n * (n - 1) // 2}"
    want_byes = 1 if n % 2 else 0
    bad = [h for h, b in byes.items() if b != want_byes]
    if bad:
        return f"n={n}: byes {dict((h, byes[h]) for h in bad)}, want {want_byes} each"
    return None


errs = [e for e in (schedule_errors(n) for n in range(2, 34)) if e]
check("schedule-all-pairs-n2-33", not errs, "; ".join(errs[:3]))

# servers: nobody serves every time
r = kpmesh.tournament([f"h{i}" for i in range(8)])
serves = {}
for a, _ in itertools.chain.from_iterable(r):
    serves[a] = serves.get(a, 0) + 1
check("schedule-servers-balanced", max(serves.values()) - min(serves.values()) <= 2
      and len(serves) == 8, str(serves))

errs = []
for n in range(2, 34):
    hosts = [f"h{i}" for i in range(n)]
    rounds = kpmesh.ring(hosts)
    pairs = [p for rr in rounds for p in rr]
    want = [(hosts[i], hosts[(i + 1) % n]) for i in range(n)] if n > 2 else [(hosts[0], hosts[1])]
    if sorted(pairs) != sorted(want):
        errs.append(f"n={n}: {pairs}")
    if len(rounds) != (1 if n == 2 else 2 if n % 2 == 0 else 3):
        errs.append(f"n={n}: {len(rounds)} rounds")
    for rr in rounds:
        used = [h for p in rr for h in p]
        if len(used) != len(set(used)):
            errs.append(f"n={n}: a host twice in {rr}")
check("schedule-ring-n2-33", not errs, "; ".join(errs[:3]))


def synth(n, bad_host=None, bad_link=None, test="bw", good=100.0, bad=40.0, noise=0.0):
    """A run of all pairs of n hosts with one host or link slow."""
    hosts = [f"npu{i:02d}" for i in range(1, n + 1)]
    pairs = []
    for k, (s, c) in enumerate(p for rr in kpmesh.tournament(hosts) for p in rr):
        slow = bad_host in (s, c) or (bad_link and {s, c} == set(bad_link))
        v = (bad if slow else good) * (1 + noise * ((k % 5) - 2) / 2)
        fig = "BW_average" if test == "bw" else "t_typical"
        pairs.append({"server": s, "client": c, "nic": 0, "status": "ok",
                      "results": [{"test": test, "role": "client", "mem": "host",
                                   "MsgSize": 65536 if test == "bw" else 64, fig: v}]})
    key = kpmesh.matrix_keys(pairs)[0]
    m = kpmesh.matrix(pairs, key, hosts)
    sus, med = kpmesh.outliers(m, 0.8, 1.5)
    named, links = kpmesh.blame([(p["server"], p["client"]) for p in m["pairs"]], sus)
    return m, sus, med, named, links


m, sus, med, named, links = synth(16, bad_host="npu07")
check("outlier-bad-host", [h for h, _, _ in named] == ["npu07"] and named[0][1:] == (15, 15)
      and not links and len(sus) == 15 and med == 100.0, f"{named} {links} {len(sus)} {med}")
m, sus, med, named, links = synth(16, bad_link=("npu03", "npu11"))
check("outlier-bad-link", not named and [tuple(sorted(x[:2])) for x in links] == [("npu03", "npu11")],
      f"{named} {links}")
m, sus, med, named, links = synth(16, noise=0.15)
check("outlier-none", not sus and not named and not links, f"{sus}")
m, sus, med, named, links = synth(9, bad_host="npu02", test="wlat", good=10.0, bad=16.0)
check("outlier-latency-host", [h for h, _, _ in named] == ["npu02"] and named[0][1:] == (8, 8),
      f"{named} {links}")
m, sus, med, named, links = synth(9, bad_host="npu02", test="wlat", good=10.0, bad=14.0)
check("outlier-latency-threshold", not sus, f"1.4x the median is below --lat-mult 1.5: {sus}")
# the matrix: sorted hosts, both triangles, diagonal empty
m, *_ = synth(4, bad_host="npu03")
cells = m["cells"]
check("matrix-cells", m["hosts"] == ["npu01", "npu02", "npu03", "npu04"]
      and all(cells[i][i] is None for i in range(4))
      and all(cells[i][j] == cells[j][i] for i in range(4) for j in range(4))
      and cells[0][2] == 40.0 and cells[0][1] == 100.0, str(cells))

check.done()
