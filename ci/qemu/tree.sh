# SPDX-License-Identifier: GPL-2.0-or-later
# qemu/tree.sh - QEMU's part of ci/tree-ab.sh, sourced by it: a minimal x86_64-softmmu build,
# its qemu-system-x86_64 kept per source tree, and a side that is memgate with --qemu of it.
# Runs as an ordinary user: the hugetlb pools are used as the agent's administrator sized them
# (ci/qemu/hugepages.conf).

kind_suite=qemu
tree_product=qemu-system-x86_64
# Untracked files another commit left go; ignored ones (meson's downloaded subprojects) stay.
tree_clean=""

kind_usage() {
	tree_usage qemu QEMU_REPO "the QEMU" "a binary" "--quick or -k 'qemu.perf.prealloc*'" \
		"  MEMGATE_CACHE  where ci/install-deps.sh --qemu-build put a newer meson (/var/cache/memgate)"
}

# Minimal: x86_64-softmmu, no documentation, no tools, no optional feature but the
# accelerators and what the qemu suite measures: malloc_trim (without it the RCU thread never
# trims, and a 60-disk guest idles with 62 MiB of heap instead of 16: the 2017 thread's
# figure) and NUMA binding (host-nodes=, the numa check); no firmware blobs installed or
# unpacked (they come from Debian's packages: kind_collect). A build folder of another
# configuration or QEMU version is configured again.
kind_setup() {
	cache=${MEMGATE_CACHE:-/var/cache/memgate}
	jobs=${JOBS:-$(nproc)}
	ccache_path=""
	[ ! -x /usr/lib/ccache/cc ] || ccache_path=/usr/lib/ccache:
	config="--target-list=x86_64-softmmu --disable-docs --disable-tools --without-default-features \
--enable-kvm --enable-tcg --enable-malloc-trim --disable-install-blobs \
$(pkg-config --exists numa && echo --enable-numa || echo --disable-numa) \
--firmwarepath=/usr/share/qemu:/usr/share/seabios"
	tree_config=$config
	tree_how="${ccache_path:+ccache, }$jobs jobs"
}

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

# kind_compile NAME: ninja rebuilds what the commit changed, and ccache (through its compiler
# links first on PATH: QEMU's configure names the compiler itself), whose hash holds the paths,
# finds what an earlier commit compiled the same. A build folder of another QEMU version or
# configuration is made again, and so is one whose incremental build fails. On failure, the
# end of both logs.
kind_compile() {
	if [ "$(cat "$dir/.memgate-config" 2>/dev/null)" = "$config $(cat "$src/VERSION")" ] &&
		(cd "$dir" && PATH=$ccache_path$PATH nice ninja -j"$jobs" qemu-system-x86_64 \
			>build.log 2>&1); then
		return 0
	fi
	how=configured
	configure_and_build || {
		echo "$prog: $1 ($commit) did not build; the end of $dir/configure.log and build.log:" >&2
		tail -n 20 "$dir/configure.log" "$dir/build.log" >&2 2>/dev/null || true
		return 1
	}
}

# kind_collect DIR: the binary, and firmware from Debian's packages (qemu-system-data,
# seabios): a tree from a release tarball may have none of its own, and a QEMU with a
# qemu-bundle folder beside it looks for every data folder under it, the --firmwarepath ones
# included.
kind_collect() {
	cp "$dir/qemu-system-x86_64" "$1/qemu-system-x86_64"
	for fw in /usr/share/qemu /usr/share/seabios; do
		if [ -d "$fw" ]; then
			mkdir -p "$1/qemu-bundle$(dirname "$fw")"
			ln -s "$fw" "$1/qemu-bundle$fw"
		fi
	done
}

# kind_show BASE HEAD: the two QEMUs' versions.
kind_show() {
	"$1" -version | head -n 1
	"$2" -version | head -n 1
}

# kind_side BINARY: the memgate command of a side that launches BINARY.
kind_side() {
	echo "$(tree_quote "$memgate") --qemu $(tree_quote "$1")"
}
