#!/bin/bash
# Host test of building against an out-of-tree RDMA stack (make OFED_DIR=,
# auto-detection of /usr/src/ofa_kernel).  The test makes a fake OFED
# tree: the kernel's own <rdma/*.h> plus a marker, a compat header, and a
# Module.symvers whose CRCs for the RDMA core's exports differ from the
# kernel's.  A build against it must take the tree's headers and carry
# the tree's CRCs in __versions; auto-detection must give the same; a
# missing or broken tree must fail with a clear line.  Builds a copy of
# the sources in a temporary directory.  Prints "PASS/FAIL name".
cd "$(dirname "$0")/../.."
kver=$(scripts/kver)
kdir=/lib/modules/$kver/build
ksrc=$(readlink -f "/lib/modules/$kver/source" 2>/dev/null || echo "$kdir")
ok() { echo "PASS ofed-$1"; }
ko() { echo "FAIL ofed-$1: $2"; }
[ -f "$ksrc/include/rdma/ib_verbs.h" ] || { ko setup "no $ksrc/include/rdma/ib_verbs.h"; exit 0; }

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src"
git ls-files --cached --others --exclude-standard Makefile Kbuild krping_npu peer_client proc scripts/kver scripts/rdma-stack scripts/conftest scripts/kcc |
	cpio -pdm --quiet "$t/src"

fake=$t/ofa/default
mkdir -p "$fake/include/rdma" "$fake/include/linux" "$fake/include/uapi"
cp -L "$ksrc"/include/rdma/*.h "$fake/include/rdma/"
echo '#define KP_FAKE_OFED_MARKER 1' >> "$fake/include/rdma/ib_verbs.h"
echo '#define KP_FAKE_OFED_COMPAT 1' > "$fake/include/linux/compat-2.6.h"
# the RDMA core's exports, each CRC changed, from modules of the tree's own
python3 - "$kdir/Module.symvers" > "$fake/Module.symvers" <<'PY'
import sys
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) >= 4 and f[2].startswith("drivers/infiniband/"):
        f[0] = "0x%08x" % (int(f[0], 16) ^ 0x5a000000)
        f[2] = "ofa_kernel/" + f[2]
        print("\t".join(f))
PY
[ -s "$fake/Module.symvers" ] || { ko setup "no RDMA exports in $kdir/Module.symvers"; exit 0; }

# build [MAKE ARGS...]: a clean build of the copy; its output in $t/out
build() {
	make -s -C "$t/src" clean > /dev/null 2>&1
	make -C "$t/src" KVER="$kver" W=1 "$@" > "$t/out" 2>&1
}
crcs() { modprobe --dump-modversions "$t/src/krping_npu/krping_npu.ko" | sort; }
want=$(awk -F'\t' '$2 == "ib_alloc_mr" { print $1 }' "$fake/Module.symvers")
kern=$(awk -F'\t' '$2 == "ib_alloc_mr" { print $1 }' "$kdir/Module.symvers")

if build OFED_DIR="$fake" && grep -q "^rdma stack: OFED at $fake (OFED_DIR=)$" "$t/out"; then
	ok explicit-build
else
	ko explicit-build "$(grep -E 'rdma stack|error' "$t/out" | head -3)"
fi
# the tree's headers came first, its compat header was forced in
cmd=$t/src/krping_npu/.kp_verbs.o.cmd
if grep -q "$fake/include/rdma/ib_verbs.h" "$cmd" &&
   grep -q -- "-include $fake/include/linux/compat-2.6.h" "$cmd" &&
   ! grep -q "$ksrc/include/rdma/ib_verbs.h" "$cmd"; then
	ok tree-headers
else
	ko tree-headers "kp_verbs.o did not use $fake/include/rdma/ib_verbs.h and the compat header"
fi
got=$(modprobe --dump-modversions "$t/src/krping_npu/krping_npu.ko" | awk '$2 == "ib_alloc_mr" { print $1 }')
[ -n "$want" ] && [ "$got" = "$want" ] && [ "$got" != "$kern" ] && ok tree-crcs ||
	ko tree-crcs "ib_alloc_mr CRC $got, the tree's $want, the kernel's $kern"
st=$(modinfo -F rdma_stack "$t/src/krping_npu/krping_npu.ko")
[ "$st" = "ofed:$fake" ] && [ "$(modinfo -F rdma_stack "$t/src/peer_client/npu_peer_mem.ko")" = "$st" ] &&
	ok modinfo || ko modinfo "rdma_stack '$st'"
explicit=$(crcs)

# the conftest ran against the tree: what it has is found
grep -q '^#define KP_HAVE_RDMA_DRIVER_RXE 1$' "$t/src/build/kp_conftest.h" &&
	grep -q "with $fake" "$t/src/build/kp_conftest.h" && ok conftest-found ||
	ko conftest-found "$(cat "$t/src/build/kp_conftest.h")"
# a stack whose headers lack RDMA_DRIVER_RXE: detected at build time, the
# build takes the fallback and still succeeds
lack=$t/lack
cp -a "$fake" "$lack"
mkdir -p "$lack/include/uapi/rdma"
sed 's/\bRDMA_DRIVER_RXE\b/RDMA_DRIVER_RXE_RENAMED/' "$ksrc/include/uapi/rdma/ib_user_ioctl_verbs.h" \
	> "$lack/include/uapi/rdma/ib_user_ioctl_verbs.h"
if build OFED_DIR="$lack" && [ -f "$t/src/krping_npu/krping_npu.ko" ] &&
   grep -q '^/\* KP_HAVE_RDMA_DRIVER_RXE: not found \*/$' "$t/src/build/kp_conftest.h" &&
   grep -q '^#define KP_HAVE_SYSFS_EMIT 1$' "$t/src/build/kp_conftest.h"; then
	ok conftest-lacking
else
	ko conftest-lacking "$(grep -E 'error' "$t/out" | head -3; cat "$t/src/build/kp_conftest.h" 2>/dev/null)"
fi

# auto-detection: the same tree, the same build
if KP_OFA_ROOT=$t/ofa build && grep -q "^rdma stack: OFED at $fake (auto-detected)$" "$t/out"; then
	[ "$(crcs)" = "$explicit" ] && ok auto-detect || ko auto-detect "__versions differ from OFED_DIR='s"
else
	ko auto-detect "$(grep -E 'rdma stack|error' "$t/out" | head -3)"
fi
# .../<arch>/<kver> wins over default
mkdir -p "$t/ofa/$(uname -m)"
cp -a "$fake" "$t/ofa/$(uname -m)/$kver"
arch=$(cd "$t/ofa/$(uname -m)/$kver" && pwd -P)
[ "$(KP_OFA_ROOT=$t/ofa scripts/rdma-stack "$kver")" = "$arch" ] && ok arch-kver-first ||
	ko arch-kver-first "$(KP_OFA_ROOT=$t/ofa scripts/rdma-stack "$kver")"
# OFED_DIR= (empty) forces the kernel's own stack
if KP_OFA_ROOT=$t/ofa build OFED_DIR= && grep -q "^rdma stack: the kernel's own ib_core$" "$t/out"; then
	got=$(modprobe --dump-modversions "$t/src/krping_npu/krping_npu.ko" | awk '$2 == "ib_alloc_mr" { print $1 }')
	[ "$got" = "$kern" ] && ok kernel-own || ko kernel-own "ib_alloc_mr CRC $got, want $kern"
else
	ko kernel-own "$(grep -E 'rdma stack|error' "$t/out" | head -3)"
fi
# a missing tree, and one without Module.symvers: refused before kbuild
for bad in "$t/nonexistent" "$t/broken"; do
	mkdir -p "$t/broken/include/rdma" && cp "$fake/include/rdma/ib_verbs.h" "$t/broken/include/rdma/"
	if build OFED_DIR="$bad"; then
		ko "bad-tree-$(basename "$bad")" "the build succeeded"
	elif grep -q "^rdma stack: '$bad' is not an RDMA stack's kernel tree: it needs include/rdma/ib_verbs.h and Module.symvers$" "$t/out" &&
	     ! ls "$t/src/krping_npu/"*.o > /dev/null 2>&1; then
		ok "bad-tree-$(basename "$bad")"
	else
		ko "bad-tree-$(basename "$bad")" "$(head -3 "$t/out")"
	fi
done
