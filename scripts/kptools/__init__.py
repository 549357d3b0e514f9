# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""krping_npu's Python helpers, for the commands in scripts/:

results  read result files strictly (one JSON object a line, finite
         figures only); also a command: scripts/kptools/results.py
mesh     pairings, matrices and outliers of fleet runs (scripts/mesh)
deps     which file of a module calls which, from its objects; also a
         command: scripts/kptools/deps.py OBJ...

Their tests: tests/host/kptools/ (make test runs them).
"""
