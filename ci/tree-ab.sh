#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tree-ab.sh - gate a commit of a QEMU or a kernel tree against its parent: each side built in
# one clone and build folder (a commit builds incrementally), kept under its tree hash, then
# `memgate ab` of the two. One driver for both kinds of tree: what they share is ci/tree.sh;
# what differs by kind (the configure and build step, what is kept, the side's memgate command)
# is ci/KIND/tree.sh. ci/qemu-ab.sh and ci/kernel-ab.sh are this with their kind. Runs as an
# ordinary user: no root, no reboot, nothing installed. The repository is only read; the work
# folder is memgate's own, one job at a time.
# usage: ci/tree-ab.sh qemu|kernel [-C REPO] [-o OUT] PARENT HEAD [-- AB_OPTIONS...]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/tree.sh"
tree_kind tree-ab "ci/tree-ab.sh qemu|kernel [-C REPO] [-o OUT] PARENT HEAD [-- AB_OPTIONS...]" "$@"
shift

usage() {
	kind_usage
}

tree_start "$kind" "$@"
shift "$tree_shift"
kind_setup
tree_build PARENT "$parent"
base=$product
tree_build HEAD "$head"
kind_show "$base" "$product"
tree_ab "$(kind_side "$base")" "$(kind_side "$product")" \
	-s "$kind_suite" --label "$kind-ab $parent..$head" "$@"
exit "$status"
