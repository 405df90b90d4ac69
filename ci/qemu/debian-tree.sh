#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# debian-tree.sh DIR - a QEMU git repository built from Debian's source packages, to try
# ci/qemu-ab.sh on real QEMU code without a clone of QEMU's own repository:
#   base        QEMU 7.2 as Debian 12 ships it (apt-get source qemu/bookworm, its patches applied)
#   one-thread  base with ci/qemu/one-thread.patch: the prealloc code uses one thread, whatever
#               it is asked
#   v10         QEMU 10.0 from bookworm-backports' source (its upstream tarball, which Debian
#               repacked without firmware blobs; ci/qemu/ds-tarball.patch lets it configure)
# Runs as an ordinary user, from any folder: apt reads and writes a private configuration in
# DIR.apt (ci/debian-apt.sh), never the system's sources. Needs a mirror of deb.debian.org (or
# the one in MEMGATE_DEBIAN_MIRROR).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../debian-apt.sh"
debian_tree_start "$@"
debian_sources bookworm bookworm-backports

# 7.2: the whole source package, unpacked with Debian's patches.
(cd "$apt/src" && debian_apt apt-get source -q qemu/bookworm >/dev/null)
old=$(find "$apt/src" -mindepth 1 -maxdepth 1 -type d -name 'qemu-*' | head -n 1)
# 10.0: bookworm-backports' upstream tarball (its Debian part is not on every mirror).
uri=$(debian_apt apt-get source --print-uris qemu/bookworm-backports | grep "orig.tar" | head -n 1)
url=$(echo "$uri" | cut -d"'" -f2)
file=$(echo "$uri" | cut -d' ' -f2)
debian_apt /usr/lib/apt/apt-helper download-file "$url" "$apt/src/$file" >/dev/null

debian_tree_base "$old" "QEMU $(cat "$old/VERSION")"
git -C "$dir" checkout -q -b one-thread
git -C "$dir" apply "$here/one-thread.patch"
git -C "$dir" commit -q -a -m "util/oslib-posix: preallocate with one thread, whatever is asked"
git -C "$dir" checkout -q -b v10 base
git -C "$dir" rm -q -r .
tar -xf "$apt/src/$file" -C "$dir" --strip-components=1
git -C "$dir" add -A --force
git -C "$dir" commit -q -m "QEMU $(cat "$dir/VERSION") ($file)"
# Debian's +ds tarball leaves out the firmware blobs, the edk2 ones QEMU 10's pc-bios/meson.build
# unpacks whenever bzip2 is there among them: without this, the tree does not configure.
git -C "$dir" apply "$here/ds-tarball.patch"
git -C "$dir" commit -q -a -m "pc-bios: no edk2 blobs to unpack in Debian's +ds tarball"
git -C "$dir" checkout -q base
git -C "$dir" log --all --oneline
