#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host test of tests/vm/ptpost.c and bench.sh's ptpost_fields(): a program
# writes rxe-shaped doorbells to a file whose path holds
# "/dev/infiniband/uverbs" (ptpost's test for a uverbs fd), under the
# library.  The counts are known; a file takes the probe's writes, so the
# probe must say it did not fail (probe_err=-1), never give a figure; a
# doorbell of another shape is not probed.  Prints "PASS/FAIL/SKIP name".
set -uo pipefail
cd "$(dirname "$0")/../.."
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { echo "PASS ptpost-$1"; }
ko() { echo "FAIL ptpost-$1: $2"; }
case $(uname -m) in x86_64) ;; *) echo "SKIP ptpost: reads the x86 TSC"; exit 0 ;; esac

gcc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$t/ptpost.so" tests/vm/ptpost.c -ldl 2> "$t/cc.err" ||
	{ ko build "$(head -3 "$t/cc.err")"; exit 0; }
cat > "$t/db.c" <<'C'
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* argv[1] file, argv[2] WR size of the doorbells: 5 POST_SEND, 3 POST_RECV */
int main(int argc, char **argv)
{
	uint32_t w[8] = { 28, 0, 0, 0, 7, 0, 0, 0 };
	uint32_t r[8] = { 29, 0, 0, 0, 7, 1, 0, 0 };
	int fd, i;

	if (argc != 3)
		return 2;
	w[1] = 8 | 1 << 16;	/* in_words 8, out_words 1 */
	r[1] = 8 | 1 << 16;
	w[7] = atoi(argv[2]);
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 1;
	for (i = 0; i < 5; i++)
		if (write(fd, w, sizeof(w)) != sizeof(w))
			return 1;
	for (i = 0; i < 3; i++)
		if (write(fd, r, sizeof(r)) != sizeof(r))
			return 1;
	return close(fd) ? 1 : 0;
}
C
gcc -O2 -o "$t/db" "$t/db.c" || { ko build "the doorbell program"; exit 0; }
mkdir -p "$t/dev/infiniband"

LD_PRELOAD="$t/ptpost.so" "$t/db" "$t/dev/infiniband/uverbs0" 56 > "$t/out" 2>&1 || { ko run "exit $?"; exit 0; }
grep -q '^KPPOST cmd=28 calls=5 ' "$t/out" && grep -q '^KPPOST cmd=29 calls=3 ' "$t/out" &&
	! grep -q '^KPPOST cmd=[^23]' "$t/out" && ok counts || ko counts "$(tr '\n' ';' < "$t/out")"
# the file took the probe's first write: no figure, an error
grep -q '^KPPOST probe_err=-1$' "$t/out" && ! grep -q probe_ns "$t/out" && ok probe-not-failed ||
	ko probe-not-failed "$(grep probe "$t/out")"
grep -q '^KPPOST syscall_ns_med=[0-9.]* syscall_ns_min=[0-9.]*$' "$t/out" && ok syscall || ko syscall "$(grep syscall "$t/out")"
# 5 + 3 doorbells and one probe write before it stopped
n=$(stat -c %s "$t/dev/infiniband/uverbs0")
[ "$n" = $(((5 + 3 + 1) * 32)) ] && ok probe-stops || ko probe-stops "file of $n bytes"

# a WR size the kernel refuses before the QP lookup: no probe at all
LD_PRELOAD="$t/ptpost.so" "$t/db" "$t/dev/infiniband/uverbs0" 0 > "$t/out2" 2>&1
grep -q probe "$t/out2" && ko shape "probed a doorbell of another shape: $(grep probe "$t/out2")" || ok shape
# not a uverbs path: nothing counted
LD_PRELOAD="$t/ptpost.so" "$t/db" "$t/plain" 56 > "$t/out3" 2>&1
grep -q '^KPPOST cmd=' "$t/out3" && ko not-uverbs "counted a plain file" || ok not-uverbs

# bench.sh's ptpost_fields over the first run's lines
sed -n '/^ptpost_fields() {/,/^}/p' tests/vm/bench.sh > "$t/f.sh"
grep -q awk "$t/f.sh" || { ko fields "no ptpost_fields() in tests/vm/bench.sh"; exit 0; }
f=$(PTPRE=on bash -c ". $t/f.sh; ptpost_fields $t/out cli")
case "$f" in
" cli_w28=5/"*" cli_w29=3/"*" cli_tsc_pair_ns="*" cli_syscall_ns="*/*" cli_probe_ns=err-1") ok fields ;;
*) ko fields "got '$f'" ;;
esac
