#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# qemu-ab.sh - gate a QEMU commit against its parent with memgate's qemu suite: a minimal
# x86_64-softmmu build of each (in one clone and build folder, so a commit builds
# incrementally), then `memgate ab` with --qemu per side. Runs as an ordinary user: no root,
# nothing installed, the hugetlb pools used as the agent's administrator sized them
# (ci/qemu/hugepages.conf). The repository is only read; the work folder is memgate's own
# (ci/tree.sh), one job at a time.
set -eu

prog=qemu-ab
work_var=MEMGATE_QEMU_AB_WORK

usage() {
	tree_usage qemu QEMU_REPO "the QEMU" "a binary" "--quick or -k 'qemu.perf.prealloc*'" \
		"  KERNEL_CACHE  where ci/install-deps.sh --qemu-build put a newer meson (/var/cache/memgate)"
}

here=$(cd "$(dirname "$0")" && pwd)
. "$here/tree.sh"
tree_start qemu "$@"
shift "$tree_shift"
cache=${KERNEL_CACHE:-/var/cache/memgate}
jobs=${JOBS:-$(nproc)}
ccache_path=""
[ ! -x /usr/lib/ccache/cc ] || ccache_path=/usr/lib/ccache:

# The meson a tree asks for (its meson.build's meson_version): Debian's when it is new enough,
# else the one ci/install-deps.sh --qemu-build unpacked from bookworm-backports.
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }
use_meson() {
	want=$(sed -n "s/.*meson_version: *'>= *\([0-9.]*\)'.*/\1/p" "$1/meson.build" 2>/dev/null |
		head -n 1)
	have=$(meson --version 2>/dev/null || echo 0)
	if version_ge "$have" "${want:-0}"; then
		return 0
	fi
	for root in "$cache"/meson-*/root; do
		[ -x "$root/usr/bin/meson" ] || continue
		PATH=$root/usr/bin:$PATH
		PYTHONPATH=$root/usr/lib/python3/dist-packages${PYTHONPATH:+:$PYTHONPATH}
		export PATH PYTHONPATH
		have=$(meson --version)
		if version_ge "$have" "$want"; then
			return 0
		fi
	done
	echo "$prog: $1 needs meson $want or later, and Debian's is $have:" \
		"run ci/install-deps.sh --qemu-build as root once" >&2
	return 1
}

# The configuration of every build (see build()); a build of another is not reused.
config="--target-list=x86_64-softmmu --disable-docs --disable-tools --without-default-features \
--enable-kvm --enable-tcg --enable-malloc-trim --disable-install-blobs \
$(pkg-config --exists numa && echo --enable-numa || echo --disable-numa) \
--firmwarepath=/usr/share/qemu:/usr/share/seabios"

# configure_and_build: a fresh configuration of WORK/src in WORK/build, then the binary.
configure_and_build() {
	rm -rf -- "$dir"
	mkdir -p -- "$dir"
	# shellcheck disable=SC2086
	(use_meson "$src" && cd "$dir" && PATH=$ccache_path$PATH &&
		"$src/configure" $config >configure.log 2>&1 &&
		echo "$config $(cat "$src/VERSION")" >.memgate-config &&
		nice ninja -j"$jobs" qemu-system-x86_64 >build.log 2>&1)
}

# build NAME REV: its qemu-system-x86_64 kept in WORK/qemu-TREE (one a source tree and
# configuration: the parent of the next commit is usually there already), its path in $bin.
# Compiled in one clone (WORK/src) and one build folder (WORK/build), the same paths every
# time: ninja rebuilds what the commit changed, and ccache, whose hash holds the paths, finds
# what an earlier commit compiled the same. A build folder of another QEMU version or
# configuration is made again, and so is one whose incremental build fails.
build() {
	tree_commit "$1" "$2"
	keep=$work/qemu-$tree
	bin=$keep/qemu-system-x86_64
	if tree_kept "$config" config qemu-system-x86_64; then
		tree_note "$2 $commit: built already in $keep"
		return 0
	fi
	dir=$work/build
	# Untracked files another commit left go; ignored ones (meson's downloaded subprojects)
	# stay.
	tree_checkout "$commit" ""
	start=$(date +%s)
	how=incremental
	# Minimal: x86_64-softmmu, no documentation, no tools, no optional feature but the
	# accelerators and what the qemu suite measures: malloc_trim (without it the RCU thread
	# never trims, and a 60-disk guest idles with 62 MiB of heap instead of 16: the 2017
	# thread's figure) and NUMA binding (host-nodes=, the numa check); no firmware blobs
	# installed or unpacked (they come from Debian's packages, below). ccache through its
	# compiler links first on PATH (QEMU's configure names the compiler itself, so meson
	# would not add ccache on its own).
	if [ "$(cat "$dir/.memgate-config" 2>/dev/null)" != "$config $(cat "$src/VERSION")" ] ||
		! (cd "$dir" && PATH=$ccache_path$PATH nice ninja -j"$jobs" qemu-system-x86_64 \
			>build.log 2>&1); then
		how=configured
		if ! configure_and_build; then
			echo "$prog: $2 ($commit) did not build; the end of $dir/configure.log and build.log:" >&2
			tail -n 20 "$dir/configure.log" "$dir/build.log" >&2 2>/dev/null || true
			exit 4
		fi
	fi
	tree_verify
	tree_tmp new "$(mktemp -d "$work/.qemu.XXXXXX")"
	cp "$dir/qemu-system-x86_64" "$new/qemu-system-x86_64"
	# Firmware from Debian's packages (qemu-system-data, seabios): a tree from a release
	# tarball may have none of its own, and a QEMU with a qemu-bundle folder beside it looks
	# for every data folder under it, the --firmwarepath ones included.
	for fw in /usr/share/qemu /usr/share/seabios; do
		if [ -d "$fw" ]; then
			mkdir -p "$new/qemu-bundle$(dirname "$fw")"
			ln -s "$fw" "$new/qemu-bundle$fw"
		fi
	done
	echo "$config" >"$new/config"
	tree_keep "$new"
	tree_note "$2 $commit: built in $(($(date +%s) - start)) s ($how, ${ccache_path:+ccache, }$jobs jobs) into $keep"
}

build PARENT "$parent"
base=$bin
build HEAD "$head"
head_bin=$bin
"$base" -version | head -n 1
"$head_bin" -version | head -n 1

q_memgate=$(tree_quote "$memgate")
tree_ab "$q_memgate --qemu $(tree_quote "$base")" "$q_memgate --qemu $(tree_quote "$head_bin")" \
	-s qemu --label "qemu-ab $parent..$head" "$@"
exit "$status"
