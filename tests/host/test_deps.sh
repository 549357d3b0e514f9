#!/bin/bash
# Host tests of scripts/kptools/deps.py on objects built here: a one-way chain
# passes and names its edges; a loop of three files is a circle, named,
# with exit status 1.
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS $1"; }
ko() { echo "FAIL $1: $2"; }

obj() {	# NAME CALLS...: NAME.o defining NAME(), calling each of CALLS
	{
		for c in "${@:2}"; do echo "void $c(void);"; done
		echo "void $1(void) {"
		for c in "${@:2}"; do echo "	$c();"; done
		echo "}"
	} > "$t/$1.c"
	gcc -c -o "$t/$1.o" "$t/$1.c"
}
obj top mid low
obj mid low
obj low
out=$(python3 scripts/kptools/deps.py "$t/top.o" "$t/mid.o" "$t/low.o"); rc=$?
[ $rc = 0 ] && [ "$out" = "$(printf 'mid -> low\ntop -> low mid')" ] &&
	ok deps-one-way || ko deps-one-way "exit $rc: $out"

obj low top
out=$(python3 scripts/kptools/deps.py "$t/top.o" "$t/mid.o" "$t/low.o"); rc=$?
[ $rc = 1 ] && echo "$out" | grep -qx "circle: low mid top" &&
	ok deps-circle || ko deps-circle "exit $rc: $out"
