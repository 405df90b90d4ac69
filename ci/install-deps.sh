#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# install-deps.sh - install the Debian packages memgate needs to build, test and report.
# Idempotent: installs only what is missing and says what. Needs root when something is.
# usage: ci/install-deps.sh [--quiet] [--qemu-build] [--kernel-build]
#   --quiet         print nothing when all is present
#   --qemu-build    also what building a QEMU tree takes (ci/qemu-ab.sh): an agent's one-time set-up
#   --kernel-build  also what building a kernel tree takes (ci/kernel-ab.sh; dpkg-dev for
#                   ci/kernel/debian-tree.sh): an agent's one-time set-up
set -eu

# build: compiler, make, pkg-config and the libraries' -dev packages (libconfig reads the
# rules file);
# tests: cmocka, xmllint (schema validation of the JUnit output), jemalloc (the rcu suite
# must SKIP its trim cases when malloc is not the C library's: tested with it preloaded).
# lint: clang-format, clang-tidy and cppcheck (make lint); fuzz: clang and its libFuzzer
# runtime (make fuzz); the qemu suite's peer: Debian's QEMU (qemu-system-x86_64); valgrind:
# --counter simulated counts instructions and misses under its callgrind; man-db: the
# install test reads memgate(1) with man -l; busybox-static, cpio and kmod (depmod): the
# guest kit the qemu suite boots (guest/mkkit.sh); xz-utils: memgate vm --kernel unpacks a
# kernel's compressed modules (Debian's 6.12 ships .ko.xz); git, ninja-build and util-linux's flock:
# ci/qemu-ab.sh and ci/kernel-ab.sh, tested on made-up trees (tests/tree_ab.sh).
PACKAGES="git ninja-build gcc make pkgconf libhwloc-dev libcpuid-dev libxml2-dev libjansson-dev \
libcmocka-dev libconfig-dev libxml2-utils libjemalloc2 clang-format clang-tidy cppcheck \
clang libclang-rt-14-dev qemu-system-x86 valgrind man-db \
busybox-static cpio kmod xz-utils"

# --qemu-build: QEMU's build dependencies for a minimal x86_64-softmmu (ci/qemu-ab.sh), from
# bookworm; and a meson new enough for QEMU 8.1 and later (1.5 for 10.0: bookworm has 1.0), which
# with pycotap comes from bookworm-backports unpacked under MEMGATE_CACHE/meson-VERSION/root, never
# installed: ci/qemu-ab.sh puts it first on PATH and PYTHONPATH for the trees that ask for it.
QEMU_BUILD_PACKAGES="git ninja-build meson python3-venv libglib2.0-dev libpixman-1-dev \
libfdt-dev zlib1g-dev libnuma-dev flex bison ccache"
MESON_NEW_PACKAGES="meson python3-pycotap"
# --kernel-build: a kernel's build dependencies for x86_64_defconfig with KVM (ci/kernel-ab.sh).
KERNEL_BUILD_PACKAGES="git build-essential bc bison flex libelf-dev libssl-dev ccache dpkg-dev"

quiet=0
qemu_build=0
kernel_build=0
for arg in "$@"; do
	case "$arg" in
	--quiet) quiet=1 ;;
	--qemu-build) qemu_build=1 ;;
	--kernel-build) kernel_build=1 ;;
	*)
		echo "usage: ci/install-deps.sh [--quiet] [--qemu-build] [--kernel-build]" >&2
		exit 2
		;;
	esac
done
[ "$qemu_build" -eq 0 ] || PACKAGES="$PACKAGES $QEMU_BUILD_PACKAGES"
[ "$kernel_build" -eq 0 ] || PACKAGES="$PACKAGES $KERNEL_BUILD_PACKAGES"

# The guest kit's kernel (the qemu suite's boot cases): Debian's cloud kernel package, kept in
# MEMGATE_CACHE for `make` to unpack (guest/mkkit.sh). It is not installed: the agent's own
# kernel, /boot and initramfs hooks stay as they are.
# A second QEMU beside Debian's 7.2 (the qemu suite is right on both, and `ab` of two QEMUs
# has two to compare): bookworm-backports' qemu-system-x86 10.0, downloaded through a private
# apt configuration (the system's sources stay as they are) and unpacked under
# MEMGATE_CACHE/qemu-VERSION/root, never installed over 7.2. Its binary runs from there: it is
# relocatable, its TCG is built in, and it finds its firmware in ../share/qemu.
MEMGATE_CACHE=${MEMGATE_CACHE:-/var/cache/memgate}
KERNEL_META=linux-image-cloud-amd64

kernel_package() {
	apt-cache depends "$KERNEL_META" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1
}

fetch_kernel() {
	if ls "$MEMGATE_CACHE"/linux-image-*-cloud-amd64_*.deb >/dev/null 2>&1; then
		[ "$quiet" -eq 1 ] || echo "install-deps: guest kernel present in $MEMGATE_CACHE"
		return 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		# The boot cases SKIP without it, saying so: not a reason to stop a build.
		echo "install-deps: no guest kernel in $MEMGATE_CACHE (as root this fetches $KERNEL_META)" >&2
		return 0
	fi
	pkg=$(kernel_package)
	if [ -z "$pkg" ]; then
		apt-get update -q
		pkg=$(kernel_package)
	fi
	if [ -z "$pkg" ]; then
		echo "install-deps: $KERNEL_META names no kernel package here" >&2
		exit 1
	fi
	echo "install-deps: fetching $pkg into $MEMGATE_CACHE (the guest kit's kernel)"
	mkdir -p "$MEMGATE_CACHE"
	(cd "$MEMGATE_CACHE" && apt-get download -q -o APT::Sandbox::User=root "$pkg")
}

QEMU_NEW_SUITE=bookworm-backports
QEMU_NEW_PACKAGES="qemu-system-x86 qemu-system-common qemu-system-data"

# The private apt configuration of the backports suite, set up and its lists fetched once: its
# options are left in $@ of the caller through APT_OPTS. 1 when the suite is unreachable.
APT_OPTS=""
private_apt() {
	[ -z "$APT_OPTS" ] || return 0
	apt_dir="$MEMGATE_CACHE/apt"
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
	echo "deb http://deb.debian.org/debian $QEMU_NEW_SUITE main" >"$apt_dir/sources.list"
	opts="-o Dir::Etc::SourceList=$apt_dir/sources.list -o Dir::Etc::SourceParts=/dev/null \
-o Dir::State::Lists=$apt_dir/lists -o Dir::Cache=$apt_dir/cache -o APT::Sandbox::User=root"
	# shellcheck disable=SC2086
	apt-get $opts update -q >/dev/null || return 1
	APT_OPTS=$opts
}

# unpack_backport NAME PACKAGE...: PACKAGE's candidate in the backports suite and the others at
# their candidates, downloaded and unpacked into MEMGATE_CACHE/NAME-UPSTREAM/root (not installed).
# Said and 0 when it cannot be: what needs it SKIPs or says so.
unpack_backport() {
	name=$1
	shift
	if ls -d "$MEMGATE_CACHE/$name"-*/root >/dev/null 2>&1; then
		[ "$quiet" -eq 1 ] || echo "install-deps: $(ls -d "$MEMGATE_CACHE/$name"-*/ | head -n 1) present"
		return 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: no $name from $QEMU_NEW_SUITE in $MEMGATE_CACHE (as root this fetches it)" >&2
		return 0
	fi
	if ! private_apt; then
		echo "install-deps: $QEMU_NEW_SUITE unreachable: no $name from there" >&2
		return 0
	fi
	# shellcheck disable=SC2086
	version=$(apt-cache $APT_OPTS policy "$1" | sed -n 's/^ *Candidate: *//p')
	upstream=$(echo "$version" | sed 's/^[0-9]*://; s/[+~-].*//')
	case "$upstream" in
	[0-9]*.[0-9]*) ;;
	*)
		echo "install-deps: $QEMU_NEW_SUITE has no $1 here: no $name from there" >&2
		return 0
		;;
	esac
	dir="$MEMGATE_CACHE/$name-$upstream"
	echo "install-deps: fetching $* from $QEMU_NEW_SUITE into $dir (unpacked, not installed)"
	rm -rf "$dir.new"
	mkdir -p "$dir.new/debs"
	first=1
	for p in "$@"; do
		want="$p"
		[ "$first" -eq 0 ] || want="$p=$version"
		first=0
		# shellcheck disable=SC2086
		if ! (cd "$dir.new/debs" && apt-get $APT_OPTS download -q "$want" >/dev/null); then
			echo "install-deps: could not download $want: no $name from $QEMU_NEW_SUITE" >&2
			rm -rf "$dir.new"
			return 0
		fi
	done
	for deb in "$dir.new"/debs/*.deb; do
		dpkg-deb -x "$deb" "$dir.new/root"
	done
	rm -rf "$dir"
	mv "$dir.new" "$dir"
}

fetch_extras() {
	fetch_kernel
	# A second QEMU is for the qemu suite's other version: without it those runs SKIP saying
	# so; the rest of memgate does not need it, so a failure here is said, not fatal.
	# shellcheck disable=SC2086
	unpack_backport qemu $QEMU_NEW_PACKAGES
	# shellcheck disable=SC2086
	[ "$qemu_build" -eq 0 ] || unpack_backport meson $MESON_NEW_PACKAGES
}

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -z "$missing" ]; then
	[ "$quiet" -eq 1 ] || echo "install-deps: all present:$(printf ' %s' $PACKAGES)"
	fetch_extras
	exit 0
fi

echo "install-deps: installing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: not root; run as root, or: sudo apt-get install -y$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# An install on a fresh machine needs package lists; refresh them once, only then.
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
fetch_extras
echo "install-deps: done"
