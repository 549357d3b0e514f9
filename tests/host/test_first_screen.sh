#!/bin/bash
# Host test of a newcomer's first screen (issue 25, item 12): on a fresh
# machine no kernel is installed yet, so scripts/kver finds none and KVER
# is empty until scripts/setup has run.  make must then read its Makefile
# without a word of its own on stderr (it once ran scripts/rdma-stack with
# no kernel: "usage: rdma-stack KVER" as the first line of make demo and
# make test; make -n: nothing is built or run), and a plain make must say
# what to do in one line.  KP_TEST_MAKEFILE: another Makefile (the old
# one, to see the test fail).  Prints "PASS/FAIL name".
cd "$(dirname "$0")/../.."
mk=${KP_TEST_MAKEFILE:-Makefile}
# make test runs this from inside make: its level and flags would change
# what make prints ("make[1]: ***").  Each make here is a newcomer's own.
unset MAKELEVEL MAKEFLAGS MFLAGS
for target in demo test; do
	err=$(make -f "$mk" -n KVER= $target 2>&1 > /dev/null)
	if [ -z "$err" ]; then
		echo "PASS first-screen-$target"
	else
		echo "FAIL first-screen-$target: make -n $target with no kernel said: $(echo "$err" | head -3 | tr '\n' '|')"
	fi
done
out=$(make -f "$mk" -s KVER= modules 2>&1); rc=$?
if [ $rc != 0 ] && [ "$(echo "$out" | grep -v -e '^rdma stack: ' -e '^make\(\[[0-9]*\]\)\?: \*\*\* ')" = "no kernel headers at '/lib/modules//build': run scripts/setup" ]; then
	echo "PASS first-screen-make"
else
	echo "FAIL first-screen-make: make with no kernel: exit $rc, said: $(echo "$out" | head -3 | tr '\n' '|')"
fi
