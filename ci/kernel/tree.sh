# SPDX-License-Identifier: GPL-2.0-or-later
# kernel/tree.sh - the kernel's part of ci/tree-ab.sh, sourced by it: a small x86_64 kernel
# (x86_64_defconfig, the kernel's kvm_guest.config and ci/kernel/memgate.config: KVM, virtio
# and what the guest kit needs, all built in), its bzImage kept per source tree, and a side that
# boots it with `memgate vm --kernel` and runs the kvm suite inside (nested KVM under TCG with
# icount where the agent has no KVM: the figures are instruction counts).

kind_suite=kvm
tree_product=bzImage
# Everything another commit left goes, ignored files too (the build folder is outside).
tree_clean=-x

kind_usage() {
	tree_usage kernel LINUX_REPO "the kernel's" "a bzImage" "-k 'kvm.perf.memslots*'"
}

kind_setup() {
	fragment=$here/kernel/memgate.config
	jobs=${JOBS:-$(nproc)}
	cc=gcc
	! command -v ccache >/dev/null 2>&1 || cc="ccache gcc"
	# A build folder configured from another fragment is configured again.
	tree_config=$(cksum <"$fragment" | cut -d' ' -f1)
	tree_how="$cc, $jobs jobs"
}

# kind_configure: WORK/build's .config from the defconfig, the kernel's kvm_guest.config and
# the fragment (merge_config.sh -m: merged, then olddefconfig fills in what they leave).
kind_configure() {
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
		echo "$tree_config" >"$dir/.memgate-config")
}

# kind_compile NAME: the checked-out source built into WORK/build, configured first when the
# folder was configured otherwise; make rebuilds what the commit changed (and ccache, where
# installed, what it saw before): a cold build of Linux 6.1 takes over 20 minutes on two vCPUs,
# an incremental one a few. On failure, the end of the log that says why.
kind_compile() {
	if [ "$(cat "$dir/.memgate-config" 2>/dev/null)" != "$tree_config" ]; then
		how=configured
		kind_configure || {
			echo "$prog: $1 ($commit) does not configure; the end of $dir/configure.log:" >&2
			tail -n 20 "$dir/configure.log" >&2 || true
			return 1
		}
	fi
	(cd "$src" && nice make O="$dir" CC="$cc" -j"$jobs" bzImage >"$dir/build.log" 2>&1) || {
		echo "$prog: $1 ($commit) did not build; the end of $dir/build.log:" >&2
		tail -n 30 "$dir/build.log" >&2 || true
		return 1
	}
}

# kind_collect DIR: what is kept of the build: the image and its configuration.
kind_collect() {
	cp "$dir/arch/x86/boot/bzImage" "$1/bzImage"
	cp "$dir/.config" "$1/config"
}

# kind_show BASE HEAD: nothing to say of two images before the A/B (it names their kernels).
kind_show() {
	:
}

# kind_side IMAGE: the memgate command of a side that boots IMAGE.
kind_side() {
	echo "$(tree_quote "$memgate") vm --kernel $(tree_quote "$1") --"
}
