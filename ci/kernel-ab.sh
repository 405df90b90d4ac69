#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# kernel-ab.sh - gate a kernel commit against its parent with memgate's kvm suite: a small
# x86_64 kernel of each (x86_64_defconfig, kvm_guest.config and ci/kernel/memgate.config: KVM,
# virtio and what the guest kit needs, all built in), then `memgate ab` with a guest of each
# kernel per side: `memgate vm --kernel` boots it under QEMU (nested KVM under TCG with icount
# where the agent has no KVM: the figures are instruction counts) and runs the kvm suite in it.
# Runs as an ordinary user: no root, no reboot, nothing installed. The repository is only read;
# the work folder is memgate's own (ci/tree.sh), one job at a time.
set -eu

prog=kernel-ab
work_var=MEMGATE_KERNEL_AB_WORK

usage() {
	tree_usage kernel LINUX_REPO "the kernel's" "a bzImage" "-k 'kvm.perf.memslots*'"
}

here=$(cd "$(dirname "$0")" && pwd)
. "$here/tree.sh"
tree_start kernel "$@"
shift "$tree_shift"
fragment=$here/kernel/memgate.config
jobs=${JOBS:-$(nproc)}
cc=gcc
! command -v ccache >/dev/null 2>&1 || cc="ccache gcc"
# A build folder configured from another fragment is configured again.
config_id=$(cksum <"$fragment" | cut -d' ' -f1)

# configure: WORK/build's .config from the defconfig, the kernel's kvm_guest.config and the
# fragment (merge_config.sh -m: merged, then olddefconfig fills in what they leave).
configure() {
	rm -rf -- "$dir"
	mkdir -p -- "$dir"
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

# build NAME REV: its bzImage kept in WORK/kernel-TREE (one a source tree and fragment: the
# parent of the next commit is usually there already), its path in $image. Compiled in one
# clone (WORK/src) and one build folder (WORK/build), the same paths every time, so make
# rebuilds what the commit changed (and ccache, where installed, what it saw before): a cold
# build of Linux 6.1 takes over 20 minutes on two vCPUs, an incremental one a few.
build() {
	tree_commit "$1" "$2"
	keep=$work/kernel-$tree
	image=$keep/bzImage
	if tree_kept "$config_id" config-id bzImage; then
		tree_note "$2 $commit: built already in $keep"
		return 0
	fi
	dir=$work/build
	tree_checkout "$commit" -x
	start=$(date +%s)
	how=incremental
	if [ "$(cat "$dir/.memgate-config" 2>/dev/null)" != "$config_id" ]; then
		how=configured
		configure || {
			echo "$prog: $2 ($commit) does not configure; the end of $dir/configure.log:" >&2
			tail -n 20 "$dir/configure.log" >&2 || true
			exit 4
		}
	fi
	if ! (cd "$src" && nice make O="$dir" CC="$cc" -j"$jobs" bzImage >"$dir/build.log" 2>&1); then
		echo "$prog: $2 ($commit) did not build; the end of $dir/build.log:" >&2
		tail -n 30 "$dir/build.log" >&2 || true
		exit 4
	fi
	tree_verify
	tree_tmp new "$(mktemp -d "$work/.kernel.XXXXXX")"
	cp "$dir/arch/x86/boot/bzImage" "$new/bzImage"
	cp "$dir/.config" "$new/config"
	echo "$config_id" >"$new/config-id"
	tree_keep "$new"
	tree_note "$2 $commit: built in $(($(date +%s) - start)) s ($how, $cc, $jobs jobs) into $keep"
}

build PARENT "$parent"
base=$image
build HEAD "$head"
head_image=$image

q_memgate=$(tree_quote "$memgate")
tree_ab "$q_memgate vm --kernel $(tree_quote "$base") --" \
	"$q_memgate vm --kernel $(tree_quote "$head_image") --" \
	-s kvm --label "kernel-ab $parent..$head" "$@"
exit "$status"
