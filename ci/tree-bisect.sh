#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tree-bisect.sh - the first bad commit of a regression between GOOD and BAD in a QEMU or a
# kernel tree: `memgate bisect` over the first-parent path from GOOD to BAD, each commit it asks
# for built by ci/tree-side.sh in the work folder ci/tree-ab.sh uses (its kept builds serve
# both). Without --metric or --from-ab among BISECT_OPTIONS it first runs the ab of GOOD and BAD
# (ci/tree-ab.sh's, into OUT/ab.*) and bisects what that judged REGRESSION; when it judged none,
# there is nothing to bisect and it exits 0. The figures of every commit measured are kept in
# WORK/bisect-GOOD-BAD: the same command again goes on where an interrupted bisect stopped.
# usage: ci/tree-bisect.sh qemu|kernel [-C REPO] [-o OUT] GOOD BAD [-- BISECT_OPTIONS...]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/tree.sh"
tree_kind tree-bisect "ci/tree-bisect.sh qemu|kernel [-C REPO] [-o OUT] GOOD BAD [-- BISECT_OPTIONS...]" "$@"
shift

usage() {
	fd=${tree_usage_fd:-2}
	cat >&"$fd" <<USAGE
usage: ci/tree-bisect.sh $kind [-C REPO] [-o OUT] GOOD BAD [-- BISECT_OPTIONS...]
  -C REPO  the git repository (default: the current folder); only read
  -o OUT  the reports' folder (default: $kind-ab): bisect.txt (the report to paste),
      bisect.log (a line a step), bisect.xml (JUnit), bisect.json, bisect.html,
      commits.tsv (the range), builds.txt; and ab.* of GOOD and BAD when it ran that ab
  GOOD BAD  commits: GOOD without the regression, BAD with it
  BISECT_OPTIONS  more options of memgate bisect: --metric SUITE.CASE:METRIC (what to
      bisect, in place of the ab's regressions), --from-ab AB.json, --max-rounds N, ...
Environment: as ci/tree-ab.sh $kind --help says ($work_var: the work folder, shared with
ci/tree-ab.sh; the bisect's figures are kept in it, under bisect-GOOD-BAD).
Exit status: memgate bisect's (0 nothing to bisect, 1 the first bad commit named, 2 bad
input, 3 harness); 4 when GOOD or BAD does not build.
USAGE
	[ "$fd" = 1 ] && exit 0
	exit 2
}

tree_start "$kind" "$@"
shift "$tree_shift"
good=$parent
bad=$head
tree_commit GOOD "$good"
g=$commit
tree_commit BAD "$bad"
b=$commit
git -C "$repo" merge-base --is-ancestor "$g" "$b" ||
	tree_die "GOOD $good is not an ancestor of BAD $bad: nothing to bisect between them"
kind_setup

# What to bisect: named among the options, or the ab of GOOD and BAD's regressions: this job's,
# or the one an interrupted job of the same two commits finished (OUT/ab.range says which).
named=""
for a in "$@"; do
	case "$a" in
	--metric | --metric=* | --from-ab | --from-ab=*) named=1 ;;
	esac
done
if [ -z "$named" ] && [ -f "$out/ab.json" ] &&
	[ "$(cut -d' ' -f1,2 "$out/ab.range" 2>/dev/null)" = "$g $b" ]; then
	status=$(cut -d' ' -f3 "$out/ab.range")
	tree_note "$prog: the ab of GOOD and BAD done already: $out/ab.json (exit $status)"
elif [ -z "$named" ]; then
	tree_build GOOD "$good"
	base=$product
	tree_build BAD "$bad"
	tree_ab "$(kind_side "$base")" "$(kind_side "$product")" \
		-s "$kind_suite" --label "$kind-bisect $good..$bad"
	t=$(mktemp "$out/.ab.range.XXXXXX") && echo "$g $b $status" >"$t" && mv -Tf -- "$t" "$out/ab.range"
fi
case "$named${status:-}" in
1*) ;;
0)
	tree_note "$prog: the ab of $good and $bad judged no regression: nothing to bisect"
	exit 0
	;;
*) exit "$status" ;;
esac
[ -n "$named" ] || set -- --from-ab "$out/ab.json" "$@"

# The range: GOOD, then each commit of its first-parent path to BAD.
tree_tmp commits_tmp "$(mktemp "$out/.commits.tsv.XXXXXX")"
fmt='%H%x09%s%x09%an <%ae>'
{
	git -C "$repo" log -1 --format="$fmt" "$g"
	git -C "$repo" log --reverse --first-parent --format="$fmt" "$g..$b"
} >"$commits_tmp"
mv -Tf -- "$commits_tmp" "$out/commits.tsv"
tree_note "$prog: $(($(wc -l <"$out/commits.tsv") - 2)) commits between GOOD $g and BAD $b"

# The sides are built under this job's lock, which tree-side.sh then does not take again.
export MEMGATE_TREE_HELD="$work" MEMGATE="$memgate"
export "$work_var=$work"
tree_tmp st_tmp "$(mktemp "$out/.bisect-status.XXXXXX")"
# Its log on stdout as it goes, and in OUT/bisect.log.
{
	"$memgate" bisect \
		--side-of "$(tree_quote "$here/tree-side.sh") $kind -C $(tree_quote "$repo") -o $(tree_quote "$out")" \
		--commits "$out/commits.tsv" --state "$work/bisect-$(echo "$g" | cut -c1-12)-$(echo "$b" | cut -c1-12)" \
		--report "$out/bisect.txt" --junit "$out/bisect.xml" --json "$out/bisect.json" \
		--html "$out/bisect.html" --label "$kind-bisect $good..$bad" "$@" || echo $? >"$st_tmp"
} | tee "$out/bisect.log"
status=$(cat "$st_tmp")
exit "${status:-0}"
