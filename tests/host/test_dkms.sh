#!/bin/bash
# Host test of dkms.conf: add a copy of the sources under a test version,
# build and install both modules for the installed Debian kernel, check
# them (vermagic, location), remove everything again.  Needs root (or sudo)
# and the dkms package (scripts/setup).  Prints "PASS/FAIL name".
cd "$(dirname "$0")/../.."
kver=$(scripts/kver)
ver=0.0.$$
S=""
[ "$(id -u)" -eq 0 ] || S=sudo
ok() { echo "PASS dkms-$1"; }
ko() { echo "FAIL dkms-$1: $2"; }
command -v dkms >/dev/null || { ko tool "dkms not installed (scripts/setup)"; exit 0; }

src=/usr/src/krping_npu-$ver
cleanup() {
	$S dkms remove -m krping_npu -v "$ver" --all >/dev/null 2>&1
	$S rm -rf "$src"
}
trap cleanup EXIT
$S mkdir -p "$src"
if git rev-parse --git-dir >/dev/null 2>&1; then
	git ls-files --cached --others --exclude-standard Makefile Kbuild dkms.conf krping_npu peer_client proc scripts/rdma-stack scripts/kver scripts/conftest scripts/kcc | $S cpio -pdm --quiet "$src"
else
	$S cp -r --parents Makefile Kbuild dkms.conf krping_npu peer_client proc scripts/rdma-stack scripts/kver scripts/conftest scripts/kcc "$src/"
fi
$S sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$ver\"/" "$src/dkms.conf"

out=$($S dkms add -m krping_npu -v "$ver" 2>&1) && ok add || ko add "$out"
if out=$($S dkms build -m krping_npu -v "$ver" -k "$kver" 2>&1); then ok build
else ko build "$(echo "$out" | tail -5; cat /var/lib/dkms/krping_npu/$ver/build/make.log 2>/dev/null | tail -10)"; fi
if out=$($S dkms install -m krping_npu -v "$ver" -k "$kver" 2>&1); then
	good=1
	for m in krping_npu npu_peer_mem; do
		f=$(ls /lib/modules/$kver/updates/dkms/$m.ko* 2>/dev/null | head -1)
		[ -n "$f" ] || { ko install "no $m.ko under /lib/modules/$kver/updates/dkms"; good=0; continue; }
		vm=$(modinfo -F vermagic "$f" | cut -d' ' -f1)
		[ "$vm" = "$kver" ] || { ko install "$m vermagic '$vm', want $kver"; good=0; }
	done
	[ $good -eq 0 ] || ok install
else
	ko install "$(echo "$out" | tail -5)"
fi
st=$(dkms status -m krping_npu -v "$ver" 2>&1)
case "$st" in *"$kver"*installed*) ok status ;; *) ko status "$st" ;; esac
$S dkms remove -m krping_npu -v "$ver" --all >/dev/null 2>&1
[ ! -e /lib/modules/$kver/updates/dkms/krping_npu.ko ] && ok remove || ko remove "module left installed"
