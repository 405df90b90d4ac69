#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tree-side.sh - one side of a QEMU or kernel tree: COMMIT built as ci/tree-ab.sh builds its two
# (the same work folder, the same kept builds, incrementally), then the memgate command that
# measures it printed on stdout, one line, as `memgate ab --base/--head` and `memgate bisect
# --side-of` take it. What it builds is said on stderr and in OUT/builds.txt.
# usage: ci/tree-side.sh qemu|kernel [-C REPO] [-o OUT] COMMIT
# Exit status: 0; 125 when COMMIT does not build (git bisect's "skip"); 2 bad input; 3 the work
# folder failed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tree_nargs=1
tree_note_fd=2
. "$here/tree.sh"
tree_kind tree-side "ci/tree-side.sh qemu|kernel [-C REPO] [-o OUT] COMMIT" "$@"
shift

usage() {
	echo "usage: ci/tree-side.sh $kind [-C REPO] [-o OUT] COMMIT" >&"${tree_usage_fd:-2}"
	echo "  (the options and environment of ci/tree-ab.sh $kind --help)" >&"${tree_usage_fd:-2}"
	[ "${tree_usage_fd:-2}" = 1 ] && exit 0
	exit 2
}

tree_start "$kind" "$@"
kind_setup
# A commit that does not build is one a bisect steps over: the end of its log is on stderr.
tree_nobuild_status=125
tree_build COMMIT "$parent"
kind_side "$product"
