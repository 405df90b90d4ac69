# SPDX-License-Identifier: GPL-2.0-or-later
# debian-apt.sh - sourced by ci/qemu/debian-tree.sh and ci/kernel/debian-tree.sh: their one
# argument, and a private apt that reads Debian's source packages as an ordinary user, never
# touching the system's sources, lists or cache.
#
#   debian_tree_start "$@"  checks the usage; sets $dir (the new folder, absolute, not made
#                           yet) and $apt (DIR.apt, absolute, made: lists, cache, src)
#   debian_sources SUITE... the deb-src lines of those suites, and apt's lists of them
#   debian_apt CMD ARGS...  CMD (apt-get, /usr/lib/apt/apt-helper) on the private configuration
#   debian_tree_base SRC WHAT  $dir a git repository, its branch base the unpacked SRC
# Needs a mirror of deb.debian.org (or the one in MEMGATE_DEBIAN_MIRROR).

debian_tree_start() {
	if [ $# -ne 1 ]; then
		echo "usage: $0 DIR" >&2
		exit 2
	fi
	if [ -e "$1" ] || [ -e "$1.apt" ]; then
		echo "$0: $1 or $1.apt exists; give a new folder" >&2
		exit 2
	fi
	# Absolute before anything changes folder: apt and tar run in other folders.
	case $1 in
	/*) dir=$1 ;;
	*) dir=$(pwd)/$1 ;;
	esac
	apt=$dir.apt
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/src"
}

debian_apt() {
	cmd=$1
	shift
	if [ "$(id -u)" -eq 0 ]; then
		set -- -o APT::Sandbox::User=root "$@"
	fi
	"$cmd" -o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache" \
		-o Debug::NoLocking=1 "$@"
}

debian_sources() {
	mirror=${MEMGATE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
	: >"$apt/sources.list"
	for suite in "$@"; do
		printf 'deb-src %s %s main\n' "$mirror" "$suite" >>"$apt/sources.list"
	done
	debian_apt apt-get update -q >/dev/null
}

# debian_tree_base SRC WHAT: $dir made a git repository whose branch base is the unpacked
# source package SRC (its debian/ and .pc/ left out), committed as "WHAT as Debian 12 ships it".
debian_tree_base() {
	mkdir -p "$dir"
	git -C "$dir" init -q -b base
	git -C "$dir" config user.name memgate
	git -C "$dir" config user.email memgate@localhost
	# One big commit of loose objects: no automatic gc in the middle of making the tree.
	git -C "$dir" config gc.auto 0
	(cd "$1" && tar --exclude=./debian --exclude=./.pc -cf - .) | tar -xf - -C "$dir"
	git -C "$dir" add -A --force
	git -C "$dir" commit -q -m "$2 as Debian 12 ships it ($(basename "$1"))"
}
