#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# debian-tree.sh DIR - a kernel git repository made from Debian's linux source package, to try
# ci/kernel-ab.sh on real kernel code without a clone of Linux:
#   base  Linux 6.1 as Debian 12 ships its source (apt-get source linux/bookworm: the upstream
#         tarball with Debian's patches applied)
#   slow  base with ci/kernel/slow-memslot-update.patch: one more walk of the memslots on every
#         KVM_SET_USER_MEMORY_REGION
# Runs as an ordinary user, from any folder: apt reads and writes a private configuration in
# DIR.apt (ci/debian-apt.sh), never the system's sources. Needs a mirror of deb.debian.org (or
# MEMGATE_DEBIAN_MIRROR) and dpkg-dev.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../debian-apt.sh"
debian_tree_start "$@"
debian_sources bookworm
# The source package unpacked by dpkg-source, Debian's patches applied.
(cd "$apt/src" && debian_apt apt-get source -q linux/bookworm >/dev/null)
src=$(find "$apt/src" -mindepth 1 -maxdepth 1 -type d -name 'linux-*' | head -n 1)

debian_tree_base "$src" "Linux $(make -s -C "$src" kernelversion)"
git -C "$dir" checkout -q -b slow
git -C "$dir" apply "$here/slow-memslot-update.patch"
git -C "$dir" commit -q -a -m "KVM: walk every memslot on each memslot update (memgate's slowed head)"
git -C "$dir" checkout -q base
rm -rf "$apt/src"
git -C "$dir" log --all --oneline
