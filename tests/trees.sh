# SPDX-License-Identifier: GPL-2.0-or-later
# trees.sh - what the tests of the tree drivers (tests/tree_ab.sh, tests/tree_bisect.sh) share,
# sourced after they set $top and $name: $build (the build under test, as $MEMGATE_SAN says),
# $base (a scratch folder memgate-$name.XXXXXX, removed on every way out), TAP's ok and skip,
# the git identity of the made-up trees' commits, and a short wait for a busy work folder.
build=build
[ "${MEMGATE_SAN:-}" = asan ] && build=build-asan
base=$(mktemp -d "${TMPDIR:-/tmp}/memgate-$name.XXXXXX")
trap 'rm -rf "$base"' EXIT
. "$top/tests/tap.sh"
export GIT_AUTHOR_NAME=memgate GIT_AUTHOR_EMAIL=memgate@localhost
export GIT_COMMITTER_NAME=memgate GIT_COMMITTER_EMAIL=memgate@localhost
export MEMGATE_TREE_WAIT=120
