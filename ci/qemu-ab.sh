#!/bin/sh
# qemu-ab.sh - gate a QEMU commit against its parent with memgate's qemu suite: a minimal
# x86_64-softmmu build of each (in one worktree and build folder, so a commit builds
# incrementally), then `memgate ab` with --qemu per side.
#
# usage: ci/qemu-ab.sh [-C QEMU_REPO] [-o OUT] PARENT HEAD [-- AB_OPTIONS...]
#   -C QEMU_REPO  the QEMU git repository (default: the current folder)
#   -o OUT        where the reports go (default: qemu-ab in the current folder):
#                 ab.xml (JUnit), ab.html, ab.json, ab.txt (the verdict table), builds.txt
#   PARENT HEAD   commits (anything git rev-parse takes); the same commit twice is an A/A
#   AB_OPTIONS    more options of memgate ab, e.g. --quick or -k 'qemu.perf.prealloc*'
# Environment:
#   MEMGATE       the memgate binary (default: build/memgate of the checkout this script is in)
#   MEMGATE_QEMU_AB_WORK  the worktree, the build folder and the binaries, kept between runs:
#                 one binary per source tree, so the parent of the next commit is usually
#                 built already, and the build folder builds the next commit incrementally
#                 (default: QEMU_REPO/../memgate-qemu-ab)
#   JOBS          parallel build jobs (default: nproc)
#   KERNEL_CACHE  where ci/install-deps.sh --qemu-build put a newer meson (/var/cache/memgate)
# Runs as an ordinary user: no root, nothing installed, the hugetlb pools used as the agent's
# administrator sized them (ci/qemu/hugepages.conf). Exit status: memgate ab's (0 pass, 1 a
# regression or a failed check, 2 bad input, 3 harness); 4 when a side does not build.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=.
out=qemu-ab
while getopts C:o:h opt; do
	case "$opt" in
	C) repo=$OPTARG ;;
	o) out=$OPTARG ;;
	*)
		sed -n '6,11p' "$0" | sed 's/^# \{0,1\}//' >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 2 ]; then
	sed -n '6,11p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
fi
parent=$1
head=$2
shift 2
[ "${1:-}" != "--" ] || shift

memgate=${MEMGATE:-$here/../build/memgate}
cache=${KERNEL_CACHE:-/var/cache/memgate}
jobs=${JOBS:-$(nproc)}
if [ ! -x "$memgate" ]; then
	echo "qemu-ab: no memgate at $memgate: run make in memgate's checkout, or set MEMGATE" >&2
	exit 2
fi
memgate=$(cd "$(dirname "$memgate")" && pwd)/$(basename "$memgate")
ccache_path=""
[ ! -x /usr/lib/ccache/cc ] || ccache_path=/usr/lib/ccache:
repo=$(git -C "$repo" rev-parse --show-toplevel)
work=${MEMGATE_QEMU_AB_WORK:-$repo/../memgate-qemu-ab}
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)
: >"$out/builds.txt"

# The meson a tree asks for (its meson.build's meson_version): Debian's when it is new enough,
# else the one ci/install-deps.sh --qemu-build unpacked from bookworm-backports.
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]; }
use_meson() {
	want=$(sed -n "s/.*meson_version: *'>= *\([0-9.]*\)'.*/\1/p" "$1/meson.build" | head -n 1)
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
	echo "qemu-ab: $1 needs meson $want or later, and Debian's is $have:" \
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
	rm -rf "$dir"
	mkdir -p "$dir"
	# shellcheck disable=SC2086
	(use_meson "$src" && cd "$dir" && PATH=$ccache_path$PATH &&
		"$src/configure" $config >configure.log 2>&1 &&
		echo "$config $(cat "$src/VERSION")" >.memgate-config &&
		nice ninja -j"$jobs" qemu-system-x86_64 >build.log 2>&1)
}

# build COMMIT: its qemu-system-x86_64 kept in WORK/qemu-TREE (one a source tree and
# configuration: the parent of the next commit is usually there already), its path in $bin.
# Compiled in one worktree (WORK/src) and one build folder (WORK/build), the same paths every
# time: ninja rebuilds what the commit changed, and ccache, whose hash holds the paths, finds
# what an earlier commit compiled the same. A build folder of another QEMU version or
# configuration is made again, and so is one whose incremental build fails.
build() {
	commit=$(git -C "$repo" rev-parse --verify "$1^{commit}")
	tree=$(git -C "$repo" rev-parse "$commit^{tree}")
	keep=$work/qemu-$tree
	bin=$keep/qemu-system-x86_64
	if [ -x "$bin" ] && [ "$(cat "$keep/config" 2>/dev/null)" = "$config" ]; then
		echo "$1 $commit: built already in $keep" | tee -a "$out/builds.txt"
		return 0
	fi
	src=$work/src
	dir=$work/build
	if [ -e "$src/.git" ]; then
		# Untracked files another commit left go; ignored ones (meson's downloaded
		# subprojects) stay.
		git -C "$src" checkout -q -f --detach "$commit" && git -C "$src" clean -q -f -d
	else
		rm -rf "$src"
		git -C "$repo" worktree prune
		git -C "$repo" worktree add -q --detach "$src" "$commit"
	fi
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
			echo "qemu-ab: $1 ($commit) did not build; the end of $dir/configure.log and build.log:" >&2
			tail -n 20 "$dir/configure.log" "$dir/build.log" >&2 2>/dev/null || true
			exit 4
		fi
	fi
	rm -rf "$keep"
	mkdir -p "$keep"
	cp "$dir/qemu-system-x86_64" "$bin"
	# Firmware from Debian's packages (qemu-system-data, seabios): a tree from a release
	# tarball may have none of its own, and a QEMU with a qemu-bundle folder beside it looks
	# for every data folder under it, the --firmwarepath ones included.
	for fw in /usr/share/qemu /usr/share/seabios; do
		if [ -d "$fw" ]; then
			mkdir -p "$keep/qemu-bundle$(dirname "$fw")"
			ln -s "$fw" "$keep/qemu-bundle$fw"
		fi
	done
	echo "$config" >"$keep/config"
	echo "$1 $commit: built in $(($(date +%s) - start)) s ($how, ${ccache_path:+ccache, }$jobs jobs) into $keep" |
		tee -a "$out/builds.txt"
}

build "$parent"
base=$bin
build "$head"
head_bin=$bin
"$base" -version | head -n 1
"$head_bin" -version | head -n 1

start=$(date +%s)
status=0
"$memgate" ab --base "$memgate --qemu $base" --head "$memgate --qemu $head_bin" -s qemu \
	--junit "$out/ab.xml" --json "$out/ab.json" --html "$out/ab.html" \
	--label "qemu-ab $parent..$head" "$@" >"$out/ab.txt" 2>&1 || status=$?
cat "$out/ab.txt"
echo "qemu-ab: memgate ab took $(($(date +%s) - start)) s, exit $status" | tee -a "$out/builds.txt"
exit "$status"
