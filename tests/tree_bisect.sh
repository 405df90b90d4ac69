#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tree_bisect.sh - ci/tree-bisect.sh and memgate bisect on a made-up kernel tree
# (tests/fixtures/trees/kernel: a build of a second, its bzImage the tree's ID file) whose sides
# are tests/fixtures/guest-memgate under the real memgate bisect and ab: the first bad commit
# named and verified past a commit that does not build, an interrupted bisect resumed without
# a round measured twice, an A/A range with nothing to bisect, bad input refused. Prints TAP
# for tests/run.sh.
# usage: tests/tree_bisect.sh   (the build directory from $MEMGATE_SAN, as check did)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
name=tree-bisect
. "$top/tests/trees.sh"
t=$base
mkdir -p "$t/bin"
echo "1..7"

# The range: GOOD and 8 commits; the 4th does not build (no ID), the 6th is the slowdown
# (tree-6.1-slower: the insert at 509 slots 2% dearer), the rest change nothing measured.
cp -r "$top/tests/fixtures/trees/kernel" "$t/linux"
git -C "$t/linux" init -q
commit() {
	echo "$1" >"$t/linux/N"
	git -C "$t/linux" add -A && git -C "$t/linux" commit -q -m "$2"
}
echo tree-6.1 >"$t/linux/ID"
commit 0 "good: the range's start"
commit 1 "a comment"
commit 2 "a rename"
commit 3 "a moved helper"
git -C "$t/linux" rm -q ID && commit 4 "breaks the build"
echo tree-6.1 >"$t/linux/ID" && commit 5 "fixes the build"
echo tree-6.1-slower >"$t/linux/ID" && commit 6 "slows the insert"
commit 7 "another comment"
commit 8 "bad: the range's end"
rev() { git -C "$t/linux" rev-parse "HEAD~$((8 - $1))"; }

# memgate: bisect and ab the real one, a side's runs the guests' stand-in. A completed boot is
# logged; with STOP_AT=N the Nth boot stops the bisect (SIGTERM to its parent, memgate)
# before it gives figures, as a restarted agent or a Jenkins timeout would.
cat >"$t/bin/memgate" <<WRAPPER
#!/bin/sh
case "\$1" in ab | bisect) exec "$top/$build/memgate" "\$@" ;; esac
if [ "\$1" = vm ] && [ -n "\${STOP_AT:-}" ] && ! printf '%s\n' "\$@" | grep -qx -- --dry-run; then
	echo x >>"$t/boots"
	if [ "\$(wc -l <"$t/boots")" -ge "\$STOP_AT" ]; then
		kill -TERM \$PPID
		sleep 10
		exit 1
	fi
fi
"$top/tests/fixtures/guest-memgate" "\$@" || exit \$?
if [ "\$1" = vm ] && ! printf '%s\n' "\$@" | grep -qx -- --dry-run; then
	echo done >>"$t/runs"
fi
WRAPPER
chmod +x "$t/bin/memgate"
export MEMGATE="$t/bin/memgate"

# kb NAME WORK ARGS...: ci/tree-bisect.sh kernel with WORK as its work folder; output $t/NAME.*.
kb() {
	job=$1 w=$2
	shift 2
	MEMGATE_KERNEL_AB_WORK=$w sh "$top/ci/tree-bisect.sh" kernel "$@" >"$t/$job.out" 2>"$t/$job.err"
	echo $? >"$t/$job.rc"
}
rc() { [ "$(cat "$t/$1.rc")" = "$2" ] || { sed 's/^/# /' "$t/$1.out" "$t/$1.err"; false; }; }
says() { grep -q -- "$2" "$t/$1" || { sed 's/^/# /' "$t/$1"; false; }; }
runs() { if [ -f "$t/runs" ]; then wc -l <"$t/runs"; else echo 0; fi; }

what="the first bad commit named and verified, past a commit that does not build: exit 1"
kb one "$base/w1" -C "$t/linux" -o "$t/o1" "$(rev 0)" "$(rev 8)"
ok eval 'rc one 1 && says o1/bisect.log "$(rev 4 | cut -c1-12) breaks the build: does not build" &&
	says o1/bisect.txt "^commit $(rev 6)\$" && says o1/bisect.txt "slows the insert" &&
	says o1/bisect.txt "ab of $(rev 6 | cut -c1-12) against its parent: regression" &&
	says o1/bisect.xml "first bad commit $(rev 6 | cut -c1-12) .*slows the insert.*verified" &&
	[ "$(grep -c "^step" "$t/o1/bisect.log")" = 3 ] &&
	[ "$(grep -c "built in" "$t/o1/builds.txt")" = 4 ]'

what="the same bisect again: its ab and every figure kept, no round measured, the same answer"
: >"$t/runs"
kb again "$base/w1" -C "$t/linux" -o "$t/o1" "$(rev 0)" "$(rev 8)"
ok eval 'rc again 1 && says o1/bisect.log "0 rounds measured now" &&
	says again.out "the ab of GOOD and BAD done already" &&
	says o1/bisect.txt "(instructions, lower is better)" && says o1/bisect.txt "--head .*bzImage" &&
	says o1/bisect.txt "^commit $(rev 6)\$" && [ "$(runs)" = 0 ]'

what="interrupted (SIGTERM at the 6th boot): exit 143, then resumed: no round measured twice"
: >"$t/runs"
kb fresh "$base/w2" -C "$t/linux" -o "$t/o2" "$(rev 0)" "$(rev 8)" -- --from-ab "$t/o1/ab.json" --no-verify
clean_runs=$(runs)
: >"$t/runs"
STOP_AT=6 kb cut "$base/w3" -C "$t/linux" -o "$t/o3" "$(rev 0)" "$(rev 8)" -- --from-ab "$t/o1/ab.json" --no-verify
cut_runs=$(runs)
kb resumed "$base/w3" -C "$t/linux" -o "$t/o3" "$(rev 0)" "$(rev 8)" -- --from-ab "$t/o1/ab.json" --no-verify
ok eval 'rc fresh 1 && rc cut 143 && says cut.err "interrupted; what was measured is in" &&
	rc resumed 1 && says o3/bisect.log "kept from an earlier run" &&
	says o3/bisect.txt "^commit $(rev 6)\$" && [ "$cut_runs" -gt 0 ] &&
	[ "$(runs)" -gt "$cut_runs" ] && [ "$(runs)" = "$clean_runs" ]'

what="an A/A range (no change in it): exit 0, nothing to bisect, nothing built but its ends"
kb aa "$base/w4" -C "$t/linux" -o "$t/o4" "$(rev 0)" "$(rev 3)"
ok eval 'rc aa 0 && says aa.out "judged no regression: nothing to bisect" &&
	[ ! -e "$t/o4/bisect.log" ] && [ "$(grep -c "built in" "$t/o4/builds.txt")" = 2 ]'

what="a --commits line that is not HASH TAB SUBJECT TAB AUTHOR: exit 2, FILE:LINE"
printf '%s\tgood\tme\nnot a commit\n' "$(rev 0)" >"$t/commits.tsv"
"$top/$build/memgate" bisect --side-of true --commits "$t/commits.tsv" \
	--metric 'kvm.perf.memslots[slots=509]:kvm.insert.median' >"$t/bad.out" 2>"$t/bad.err"
echo $? >"$t/bad.rc"
ok eval 'rc bad 2 && says bad.err "commits.tsv:2: expected HASH<TAB>SUBJECT<TAB>AUTHOR"'

what="--state a folder memgate did not make: exit 2, left as it was"
printf '%s\tgood\tme\n%s\tbad\tme\n' "$(rev 0)" "$(rev 8)" >"$t/commits.tsv"
mkdir -p "$t/theirs" && echo mine >"$t/theirs/notes"
"$top/$build/memgate" bisect --side-of true --commits "$t/commits.tsv" --state "$t/theirs" \
	--metric 'kvm.perf.memslots[slots=509]:kvm.insert.median' >"$t/st.out" 2>"$t/st.err"
echo $? >"$t/st.rc"
ok eval 'rc st 2 && says st.err "a folder memgate did not make" &&
	[ "$(ls -A "$t/theirs")" = notes ] && [ "$(cat "$t/theirs/notes")" = mine ]'

what="nothing named to bisect: exit 2 saying what to give"
"$top/$build/memgate" bisect --side-of true --commits "$t/commits.tsv" >"$t/none.out" 2>"$t/none.err"
echo $? >"$t/none.rc"
ok eval 'rc none 2 && says none.err "name what to bisect"'
