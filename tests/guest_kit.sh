#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# guest_kit.sh - the guest kit (guest/mkkit.sh): built from the kernel package alone, its
# drivers in the order modules.dep gives, its init valid shell, rebuilt only when an input
# changes, and a clear error without a package. Prints TAP for tests/run.sh.
# usage: tests/guest_kit.sh   (the build directory from $MEMGATE_SAN, as check did)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/memgate-kit.XXXXXX")
trap 'rm -rf "$out"' EXIT
build=build
[ "${MEMGATE_SAN:-}" = asan ] && build=build-asan
deb=$(ls -v /var/cache/memgate/linux-image-*-cloud-amd64_*.deb 2>/dev/null | tail -n 1)
. "$top/tests/tap.sh"
echo "1..5"

what="no kernel package: mkkit.sh says which file and exits non-zero"
ok sh -c '! sh "$1/guest/mkkit.sh" /nonexistent/linux.deb "$2/none" 2>"$2/err" &&
	grep -q "/nonexistent/linux.deb: no such kernel package" "$2/err"' sh "$top" "$out"

what="the init is valid shell for busybox"
if command -v busybox >/dev/null 2>&1; then
	ok busybox sh -n "$top/guest/init"
else
	skip "no busybox (ci/install-deps.sh installs busybox-static)"
fi

if [ -z "$deb" ]; then
	for what in "the kit builds" "its drivers in modules.dep's order" "make leaves it be"; do
		skip "no kernel package in /var/cache/memgate (ci/install-deps.sh fetches it)"
	done
	exit 0
fi

what="the kit builds from $(basename "$deb"): kernel, initramfs with init, busybox, drivers"
sh "$top/guest/mkkit.sh" "$deb" "$out/kit" >"$out/log" 2>&1 || sed 's/^/# /' "$out/log"
ok sh -c 'test -s "$1/vmlinuz" && cpio -t --quiet <"$1/initramfs.cpio" >"$1/list" &&
	for f in init bin/busybox modules.load modules/virtio_scsi.ko modules/sd_mod.ko; do
		grep -qx "$f" "$1/list" || { echo "# $f not in the initramfs"; exit 1; }; done' \
	sh "$out/kit"

what="its drivers in modules.dep's order: what each needs before it"
ok sh -c 'm=$(sed -n "s/^modules: //p" "$1/kit.txt"); echo "# $m"
	case " $m" in *" virtio_ring.ko"*" virtio.ko"*" virtio_pci.ko"*" scsi_mod.ko"*" virtio_scsi.ko"*" sd_mod.ko"*) ;;
	*) exit 1 ;; esac' sh "$out/kit"

what="make leaves a built kit be until an input changes"
if [ -f "$top/$build/guest/initramfs.cpio" ]; then
	ok make --no-print-directory -q -C "$top" SAN="${MEMGATE_SAN:-}" "$build/guest/initramfs.cpio"
else
	skip "no kit in $build/guest (make builds it)"
fi
