#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# mkkit.sh - the guest kit the qemu suite boots: Debian's cloud kernel and an initramfs of
# busybox-static, the drivers of the disks the cases attach (with what they depend on, from
# the kernel's own modules.dep) and guest/init.
#
# usage: guest/mkkit.sh KERNEL.deb OUTDIR
#   KERNEL.deb  a linux-image-*-cloud-amd64 package (ci/install-deps.sh keeps one in
#               /var/cache/memgate); nothing else is downloaded
#   OUTDIR      gets vmlinuz, initramfs.cpio and kit.txt (what went in)
set -eu

# The drivers of the case's devices: virtio-pci transport, virtio-scsi and SCSI disks.
DRIVERS="virtio_pci virtio_scsi sd_mod"
BUSYBOX=/bin/busybox

deb=${1:?usage: guest/mkkit.sh KERNEL.deb OUTDIR}
out=${2:?usage: guest/mkkit.sh KERNEL.deb OUTDIR}
here=$(dirname "$0")
[ -r "$deb" ] || { echo "mkkit.sh: $deb: no such kernel package" >&2; exit 1; }
if ! "$BUSYBOX" --help 2>&1 | head -n 1 | grep -q BusyBox; then
	echo "mkkit.sh: $BUSYBOX is not busybox: install busybox-static (ci/install-deps.sh)" >&2
	exit 1
fi
case $(LC_ALL=C ldd "$BUSYBOX" 2>&1) in
*"not a dynamic executable"* | *"statically linked"*) ;;
*)
	echo "mkkit.sh: $BUSYBOX is linked dynamically; the kit needs busybox-static" >&2
	exit 1
	;;
esac

mkdir -p "$out"
tmp=$(mktemp -d "$out/kit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
dpkg-deb -x "$deb" "$tmp/pkg"
ver=$(ls "$tmp/pkg/lib/modules")
mods=$tmp/pkg/lib/modules/$ver
# The package ships no modules.dep (its postinst makes one): make it the same way.
depmod -b "$tmp/pkg" "$ver"

# Each module's line in modules.dep names everything it needs, the last to be loaded first.
resolve() {
	line=$(grep -E "(^|/)$1\.ko(\.[a-z]+)?:" "$mods/modules.dep" || true)
	if [ -z "$line" ]; then
		if grep -qE "(^|/)$1\.ko$" "$mods/modules.builtin"; then
			return 0 # built into the kernel
		fi
		echo "mkkit.sh: $1: neither a module nor built into kernel $ver" >&2
		exit 1
	fi
	for dep in $(echo "${line#*:}" | tr ' ' '\n' | sed '/^$/d' | tac); do
		echo "$dep"
	done
	echo "${line%%:*}"
}

root=$tmp/root
mkdir -p "$root/bin" "$root/modules" "$root/proc" "$root/sys" "$root/dev"
cp "$BUSYBOX" "$root/bin/busybox"
cp "$here/init" "$root/init"
chmod 755 "$root/init"
: >"$root/modules.load"
for d in $DRIVERS; do
	for m in $(resolve "$d"); do
		name=$(basename "$m")
		grep -qx "$name" "$root/modules.load" && continue
		cp "$mods/$m" "$root/modules/$name"
		echo "$name" >>"$root/modules.load"
	done
done

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$tmp/initramfs.cpio"
cp "$tmp/pkg/boot/vmlinuz-$ver" "$tmp/vmlinuz"
{
	echo "kernel: $ver ($(basename "$deb"))"
	echo "busybox: $("$BUSYBOX" --help 2>&1 | head -n 1)"
	echo "modules: $(tr '\n' ' ' <"$root/modules.load")"
} >"$tmp/kit.txt"
mv "$tmp/vmlinuz" "$tmp/kit.txt" "$out/"
# The initramfs last: the Makefile's target, so a kit cut short is made again.
mv "$tmp/initramfs.cpio" "$out/initramfs.cpio"
