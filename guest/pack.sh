#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pack.sh - a memgate binary, and any other programs named (the host's QEMU, for the qemu
# suite's checks in the guest), with the shared libraries they link at the paths the dynamic
# loader resolves them to here, as a cpio archive (newc) that `memgate vm` appends to the
# guest kit's initramfs: the guest runs the very build under test. The kernel unpacks
# concatenated archives in turn, so the kit's files and these end up in one root.
#
# usage: guest/pack.sh MEMGATE OUT.cpio [PROGRAM | MODULE.so]...
#   MEMGATE goes to /memgate/memgate; each PROGRAM and MODULE (a program's plug-in: QEMU
#   loads its TCG accelerator from one, found beside its binary) to its own absolute path.
set -eu

bin=${1:?usage: guest/pack.sh MEMGATE OUT.cpio [PROGRAM | MODULE.so]...}
out=${2:?usage: guest/pack.sh MEMGATE OUT.cpio [PROGRAM | MODULE.so]...}
shift 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memgate-pack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/root/memgate" "$tmp/root/bin"

# add FILE DEST: FILE at DEST in the root, and every library ldd resolves for it. ldd's lines:
# "NAME => PATH (ADDR)" for a library, "PATH (ADDR)" for the loader; the vDSO has no file. A
# library it cannot find is an error here, not in the guest.
add() {
	[ -r "$1" ] || { echo "pack.sh: $1: no such file" >&2; exit 1; }
	mkdir -p "$tmp/root$(dirname "$2")"
	cp "$1" "$tmp/root$2"
	libs=$(LC_ALL=C ldd "$1") || { echo "pack.sh: ldd $1 failed" >&2; exit 1; }
	if printf '%s\n' "$libs" | grep -q 'not found'; then
		printf '%s\n' "$libs" | grep 'not found' >&2
		echo "pack.sh: $1 needs libraries this host lacks" >&2
		exit 1
	fi
	printf '%s\n' "$libs" |
		sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' |
		sort -u | while read -r lib; do
		[ -e "$tmp/root$lib" ] && continue
		mkdir -p "$tmp/root$(dirname "$lib")"
		# The file itself, under the name the binary asks for (a link's target may differ).
		cp -L "$lib" "$tmp/root$lib"
	done
}

add "$bin" /memgate/memgate
for p in "$@"; do
	case $p in
	/*) add "$p" "$p" ;;
	*) echo "pack.sh: $p: name programs and modules by absolute path" >&2; exit 1 ;;
	esac
done
(cd "$tmp/root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$tmp/pack.cpio"
mv "$tmp/pack.cpio" "$out"
