#!/bin/sh
# kernel-ab.sh - gate a kernel commit against its parent with memgate's kvm suite: a small
# x86_64 kernel of each (x86_64_defconfig, kvm_guest.config and ci/kernel/memgate.config: KVM,
# virtio and what the guest kit needs, all built in), then `memgate ab` with a guest of each
# kernel per side: `memgate vm --kernel` boots it under QEMU (nested KVM under TCG with icount
# where the agent has no KVM: the figures are instruction counts) and runs the kvm suite in it.
#
# usage: ci/kernel-ab.sh [-C LINUX_REPO] [-o OUT] PARENT HEAD [-- AB_OPTIONS...]
#   -C LINUX_REPO  the kernel's git repository (default: the current folder)
#   -o OUT         where the reports go (default: kernel-ab in the current folder):
#                  ab.xml (JUnit), ab.html, ab.json, ab.txt (the verdict table), builds.txt
#   PARENT HEAD    commits (anything git rev-parse takes); the same commit twice is an A/A
#   AB_OPTIONS     more options of memgate ab, e.g. -k 'kvm.perf.memslots*'
# Environment:
#   MEMGATE        the memgate binary (default: build/memgate of the checkout this script is in)
#   MEMGATE_KERNEL_AB_WORK  the worktree, the build folder and the images, kept between runs:
#                  one bzImage per source tree, so the parent of the next commit is usually
#                  built already, and the build folder builds the next commit incrementally
#                  (default: LINUX_REPO/../memgate-kernel-ab)
#   JOBS           parallel build jobs (default: nproc)
# Runs as an ordinary user: no root, no reboot, nothing installed. Exit status: memgate ab's
# (0 pass, 1 a regression or a failed check, 2 bad input, 3 harness); 4 when a side does not
# build.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=.
out=kernel-ab
while getopts C:o:h opt; do
	case "$opt" in
	C) repo=$OPTARG ;;
	o) out=$OPTARG ;;
	*)
		sed -n '8,13p' "$0" | sed 's/^# \{0,1\}//' >&2
		exit 2
		;;
	esac
done
shift $((OPTIND - 1))
if [ $# -lt 2 ]; then
	sed -n '8,13p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
fi
parent=$1
head=$2
shift 2
[ "${1:-}" != "--" ] || shift

memgate=${MEMGATE:-$here/../build/memgate}
fragment=$here/kernel/memgate.config
jobs=${JOBS:-$(nproc)}
if [ ! -x "$memgate" ]; then
	echo "kernel-ab: no memgate at $memgate: run make in memgate's checkout, or set MEMGATE" >&2
	exit 2
fi
memgate=$(cd "$(dirname "$memgate")" && pwd)/$(basename "$memgate")
cc=gcc
! command -v ccache >/dev/null 2>&1 || cc="ccache gcc"
repo=$(git -C "$repo" rev-parse --show-toplevel)
work=${MEMGATE_KERNEL_AB_WORK:-$repo/../memgate-kernel-ab}
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd)
out=$(cd "$out" && pwd)
: >"$out/builds.txt"
# A build folder configured from another fragment is configured again.
config_id=$(cksum <"$fragment" | cut -d' ' -f1)

# configure: WORK/build's .config from the defconfig, the kernel's kvm_guest.config and the
# fragment (merge_config.sh -m: merged, then olddefconfig fills in what they leave).
configure() {
	rm -rf "$dir"
	mkdir -p "$dir"
	(cd "$src" && make O="$dir" CC="$cc" x86_64_defconfig >"$dir/configure.log" 2>&1 &&
		if [ -e kernel/configs/kvm_guest.config ]; then
			scripts/kconfig/merge_config.sh -m -O "$dir" "$dir/.config" \
				kernel/configs/kvm_guest.config "$fragment"
		else
			scripts/kconfig/merge_config.sh -m -O "$dir" "$dir/.config" "$fragment"
		fi >>"$dir/configure.log" 2>&1 &&
		make O="$dir" CC="$cc" olddefconfig >>"$dir/configure.log" 2>&1 &&
		echo "$config_id" >"$dir/.memgate-config")
}

# build COMMIT: its bzImage kept in WORK/kernel-TREE (one a source tree and fragment: the
# parent of the next commit is usually there already), its path in $image. Compiled in one
# worktree (WORK/src) and one build folder (WORK/build), the same paths every time, so make
# rebuilds what the commit changed (and ccache, where installed, what it saw before): a cold
# build of Linux 6.1 takes over 20 minutes on two vCPUs, an incremental one a few.
build() {
	commit=$(git -C "$repo" rev-parse --verify "$1^{commit}")
	tree=$(git -C "$repo" rev-parse "$commit^{tree}")
	keep=$work/kernel-$tree
	image=$keep/bzImage
	if [ -r "$image" ] && [ "$(cat "$keep/config-id" 2>/dev/null)" = "$config_id" ]; then
		echo "$1 $commit: built already in $keep" | tee -a "$out/builds.txt"
		return 0
	fi
	src=$work/src
	dir=$work/build
	if [ -e "$src/.git" ]; then
		git -C "$src" checkout -q -f --detach "$commit" && git -C "$src" clean -q -f -d -x
	else
		rm -rf "$src"
		git -C "$repo" worktree prune
		git -C "$repo" worktree add -q --detach "$src" "$commit"
	fi
	start=$(date +%s)
	how=incremental
	if [ "$(cat "$dir/.memgate-config" 2>/dev/null)" != "$config_id" ]; then
		how=configured
		configure || {
			echo "kernel-ab: $1 ($commit) does not configure; the end of $dir/configure.log:" >&2
			tail -n 20 "$dir/configure.log" >&2 || true
			exit 4
		}
	fi
	if ! (cd "$src" && nice make O="$dir" CC="$cc" -j"$jobs" bzImage >"$dir/build.log" 2>&1); then
		echo "kernel-ab: $1 ($commit) did not build; the end of $dir/build.log:" >&2
		tail -n 30 "$dir/build.log" >&2 || true
		exit 4
	fi
	rm -rf "$keep"
	mkdir -p "$keep"
	cp "$dir/arch/x86/boot/bzImage" "$image"
	cp "$dir/.config" "$keep/config"
	echo "$config_id" >"$keep/config-id"
	echo "$1 $commit: built in $(($(date +%s) - start)) s ($how, $cc, $jobs jobs) into $keep" |
		tee -a "$out/builds.txt"
}

build "$parent"
base=$image
build "$head"
head_image=$image

start=$(date +%s)
status=0
"$memgate" ab --base "$memgate vm --kernel $base --" --head "$memgate vm --kernel $head_image --" \
	-s kvm --junit "$out/ab.xml" --json "$out/ab.json" --html "$out/ab.html" \
	--label "kernel-ab $parent..$head" "$@" >"$out/ab.txt" 2>&1 || status=$?
cat "$out/ab.txt"
echo "kernel-ab: memgate ab took $(($(date +%s) - start)) s, exit $status" | tee -a "$out/builds.txt"
exit "$status"
