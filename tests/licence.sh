#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# licence.sh - every tracked file of memgate's own says its licence in an SPDX line near its
# top; what came from elsewhere keeps its own licence, named in a file beside it. Prints TAP for
# tests/run.sh.
# usage: tests/licence.sh [BUILD_DIR]   (the build directory is unused; run.sh passes it)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/tap.sh"
spdx='SPDX-License-Identifier: GPL-2.0-or-later'

# Not memgate's to license, or a format without comments, each with its reason:
#   LICENSE                  the licence itself
#   tests/schemas/ topologies/ tests/hosts/
#                            third-party data under its own licence (the README's Licence)
#   fuzz/corpus/             fuzzing inputs: bytes, not source
#   *.json                   JSON has no comments (the test fixtures)
#   tests/fixtures/trees/*/VERSION  one line a made-up tree's build reads whole
exempt() {
	case $1 in
	LICENSE | tests/schemas/* | topologies/* | tests/hosts/* | fuzz/corpus/*) return 0 ;;
	*.json | tests/fixtures/trees/*/VERSION) return 0 ;;
	esac
	return 1
}

# unlicensed DIR FILE...: the files (relative to DIR) without the SPDX line in their first 5.
unlicensed() {
	d=$1
	shift
	for f in "$@"; do
		exempt "$f" && continue
		head -n 5 "$d/$f" | grep -qF "$spdx" || echo "$f"
	done
}

# Third-party folders: each names its licence in a file of its own.
licences() {
	for d in tests/schemas topologies tests/hosts; do
		ls "$top/$d" | grep -q '^\(COPYING\|LICENSE\)' || echo "$d"
	done
}

echo "1..3"
what="every tracked file of memgate's own has an SPDX line ($spdx)"
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	# shellcheck disable=SC2046 # file names without spaces: git ls-files of this tree
	missing=$(cd "$top" && unlicensed "$top" $(git ls-files))
	[ -z "$missing" ] || printf '%s\n' "$missing" | sed 's/^/# no SPDX line: /'
	ok test -z "$missing"
else
	skip "not a git checkout: no list of tracked files"
fi

what="a planted file without one is found, an exempt one is not"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/impl" "$tmp/topologies"
# (Names made here, of files only the scratch folder holds.)
bad=impl/bad_$$.c good=impl/good_$$.c theirs=topologies/theirs_$$.xml
printf '/* no licence */\n' >"$tmp/$bad"
printf '/* %s */\n' "$spdx" >"$tmp/$good"
printf '<xml/>\n' >"$tmp/$theirs"
found=$(unlicensed "$tmp" "$bad" "$good" "$theirs")
ok test "$found" = "$bad"

what="each third-party folder holds its licence (COPYING.* or LICENSE*)"
missing=$(licences)
[ -z "$missing" ] || printf '# no licence file in %s\n' $missing
ok test -z "$missing"
