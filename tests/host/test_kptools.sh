#!/bin/bash
# The Python helpers' own tests (tests/host/kptools/test_*.py; test_mesh.py
# runs from test_mesh.sh, beside the fleet runs it belongs to).
cd "$(dirname "$0")/../.."
for t in tests/host/kptools/test_*.py; do
	case $t in */test_mesh.py) continue ;; esac
	out=$(python3 "$t" 2>&1)
	echo "$out" | grep -E '^(PASS|FAIL) '
	echo "$out" | grep -q '^unit: end$' ||
		echo "FAIL kptools-$(basename "$t" .py): did not finish: $(echo "$out" | tail -3 | tr '\n' '|')"
done
