#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Which file of a module calls which, from the built objects' symbols.

usage: scripts/kptools/deps.py OBJ...     (the .o files of one module)

File A depends on file B when A uses a symbol B defines (nm: U in A, a
global definition in B).  Prints one line "A -> B C ..." a file, then one
line "circle: A B ..." for each set of files that reach each other, and
exits 1 when there is any: dependencies flow one way.
"""
import os
import subprocess
import sys


def symbols(obj):
    """(defined, used) global symbols of one object file."""
    out = subprocess.run(["nm", obj], capture_output=True, text=True,
                         check=True).stdout
    return parse_nm(out)


def parse_nm(text):
    defined, used = set(), set()
    for line in text.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRGSV":
            defined.add(f[2])
        elif len(f) == 2 and f[0] == "U":
            used.add(f[1])
    return defined, used


def graph(syms):
    """syms: {file: (defined, used)} -> {file: set of files it uses}."""
    return {a: {b for b, (d, _) in syms.items() if b != a and u & d}
            for a, (_, u) in syms.items()}


def circles(g):
    """The strongly connected sets of more than one file (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(found)


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    syms = {os.path.splitext(os.path.basename(o))[0]: symbols(o) for o in argv}
    g = graph(syms)
    for a in sorted(g):
        if g[a]:
            print(a, "->", " ".join(sorted(g[a])))
    found = circles(g)
    for c in found:
        print("circle:", " ".join(c))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
