#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# debian-kernels.sh DIR - Debian's cloud kernels of three releases as packages in DIR, for
# `memgate vm --kernel` and an ab of two kernels: bullseye's 5.10 (memslots in a sorted array,
# 509 of them), bookworm's 6.1 and bookworm-backports' 6.12 (memslots in trees, 32,764). The
# linux-image-*-cloud-amd64 .deb files are downloaded, not installed: `memgate vm` unpacks
# what it needs. Runs as an ordinary user: apt reads a private configuration in DIR/apt,
# never the system's sources. Needs a mirror of deb.debian.org (or MEMGATE_DEBIAN_MIRROR).
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 DIR" >&2
	exit 2
fi
dir=$1
mirror=${MEMGATE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
for suite in bullseye bookworm bookworm-backports; do
	apt=$dir/apt/$suite
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	printf 'deb %s %s main\n' "$mirror" "$suite" >"$apt/sources.list"
	set -- -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" -o Debug::NoLocking=1
	[ "$(id -u)" -ne 0 ] || set -- "$@" -o APT::Sandbox::User=root
	apt-get "$@" update -q >/dev/null
	# The metapackage names the release's current kernel.
	pkg=$(apt-cache "$@" depends linux-image-cloud-amd64 |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
	if [ -z "$pkg" ]; then
		echo "$0: $suite names no cloud kernel" >&2
		exit 1
	fi
	(cd "$dir" && apt-get "$@" download -q "$pkg" >/dev/null)
	echo "$suite: $(ls "$dir"/"$pkg"_*.deb)"
done
