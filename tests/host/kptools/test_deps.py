# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Unit tests of scripts/kptools/deps.py on nm text: prints "PASS name" /
"FAIL name: why", then "unit: end"."""
import kt
from kptools import deps  # noqa: E402

check = kt.Checks("kptools-deps")


NM_A = """0000000000000000 T a_entry
0000000000000010 t a_static
0000000000000000 D a_table
                 U b_entry
                 U printk
"""
NM_B = """0000000000000000 T b_entry
0000000000000000 B b_counter
"""
d, u = deps.parse_nm(NM_A)
check("parse-defined", d == {"a_entry", "a_table"}, str(d))
check("parse-used", u == {"b_entry", "printk"}, str(u))
g = deps.graph({"a": deps.parse_nm(NM_A), "b": deps.parse_nm(NM_B)})
check("graph-one-way", g == {"a": {"b"}, "b": set()}, str(g))
check("no-circle", deps.circles(g) == [], str(deps.circles(g)))
g = {"x": {"y"}, "y": {"z"}, "z": {"x"}, "w": {"x"}, "v": {"v"}}
check("circle-of-three", deps.circles(g) == [["x", "y", "z"]], str(deps.circles(g)))
g = {"p": {"q"}, "q": {"p"}, "r": {"s"}, "s": {"r"}}
check("two-circles", deps.circles(g) == [["p", "q"], ["r", "s"]], str(deps.circles(g)))

check.done()
