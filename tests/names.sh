#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# names.sh - every file of the repository that a comment or a document names is in it: the
# project is for someone who has only the repository. Names are the Markdown files and the
# paths under the project's own folders (judge/rules.conf, docs/gating.md, tests/schemas/...)
# in every tracked text file; a name with a placeholder (N, DIR, NAME, *) is a pattern, not a
# file, and is passed over. Prints TAP for tests/run.sh: the tree's check, then a check that a
# planted name of a missing file is caught.
# usage: tests/names.sh [BUILD_DIR]   (the build directory is unused; run.sh passes it)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
dirs='ci|cli|docs|fuzz|guest|hw|impl|judge|reports|run|suites|tests|topologies|util'

# missing FILE...: "file:line: name" for each name in the files that is not in the tree. A
# name right after "QEMU's", "the kernel's" or "QEMU (" is another project's file.
missing() {
	grep -HnoE "((QEMU|kernel|Linux)'s |QEMU [(]|[^A-Za-z0-9_./~\$-]|^)(($dirs)/[A-Za-z0-9_./-]*\.(c|h|sh|md|conf|patch|xsd|txt)|[A-Za-z0-9_-]+\.md)\b" "$@" 2>/dev/null |
		while IFS=: read -r file line name; do
			case "$name" in
			"QEMU"* | "kernel"* | "Linux"*) continue ;;
			esac
			name=$(printf '%s' "$name" | sed 's/^[^A-Za-z0-9_]*//')
			case "$name" in
			*.md) ;;
			*[A-Z][A-Z]* | *-N.* | *planted* | build/*) continue ;;
			esac
			# A path is from the top; a lone file name may be in the folder that names it,
			# or anywhere in the tree.
			[ -e "$top/$name" ] || [ -e "$(dirname "$top/$file")/$name" ] && continue
			case "$name" in
			*/*) ;;
			*) [ -n "$(cd "$top" && git ls-files "*/$name" "$name" 2>/dev/null)" ] && continue ;;
			esac
			echo "$file:$line: $name"
		done
}

cd "$top" || exit 1
files=$(git ls-files 2>/dev/null | grep -vE '^(fuzz/corpus|topologies|tests/hosts|tests/schemas)/|^tests/names.sh$|\.(xsd|xml|json|raw)$')
if [ -z "$files" ]; then
	what="named files exist"
	skip "not a git checkout: no list of tracked files"
	exit 0
fi
# shellcheck disable=SC2086
out=$(missing $files)
[ -z "$out" ] || printf '%s\n' "$out" >&2
what="every file a comment or a document names is in the repository"
ok [ -z "$out" ]

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs"
printf 'See docs/no-such-file.md and MISSING.md for the figures.\n' >"$tmp/docs/x.md"
planted=$(top=$tmp missing "$tmp/docs/x.md" | wc -l)
what="a planted name of a missing file is caught"
ok [ "$planted" -ge 1 ]
echo "1..$n"
