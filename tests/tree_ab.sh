#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tree_ab.sh - ci/tree-ab.sh (as ci/kernel-ab.sh and ci/qemu-ab.sh) on made-up trees (tests/fixtures/trees: a
# Makefile and a configure that build in a second, no compiler): a work folder memgate did
# not make is refused and left whole, the user's repository is only read, two jobs on one
# work folder take turns and keep each image under the tree it was built from, reports are
# never written through links, bad input is exit 2 naming it, and paths with spaces and
# quotes work end to end (the kernel A/B's sides are tests/fixtures/guest-memgate under the
# real memgate ab). Prints TAP for tests/run.sh.
# usage: tests/tree_ab.sh   (the build directory from $MEMGATE_SAN, as check did)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
name=tree-ab
. "$top/tests/trees.sh"
# The repositories, the reports and memgate are at paths with a space and a quote; the work
# folders not (the builds refuse such paths: tested).
t="$base/w o'rk"
mkdir -p "$t/bin"
echo "1..14"

# A made-up tree of KIND in DIR with one commit an ID (names of tests/fixtures/guests).
tree() {
	cp -r "$top/tests/fixtures/trees/$1" "$2"
	git -C "$2" init -q
	for id in tree-6.1 tree-5.10 tree-6.1-slower; do
		echo "$id" >"$2/ID"
		git -C "$2" add -A && git -C "$2" commit -q -m "$id"
	done
}
tree kernel "$t/linux"
tree qemu "$t/qemu"
c1=$(git -C "$t/linux" rev-parse HEAD~2) c2=$(git -C "$t/linux" rev-parse HEAD~1)
c3=$(git -C "$t/linux" rev-parse HEAD)

# memgate: its ab the real one, everything a side asks the guests' stand-in.
cat >"$t/bin/memgate" <<EOF
#!/bin/sh
[ "\$1" = ab ] && exec "$top/$build/memgate" "\$@"
exec "$top/tests/fixtures/guest-memgate" "\$@"
EOF
# For the QEMU tree: a memgate that says the words of each side of the ab it is asked for, split
# as memgate ab splits them (a POSIX shell's words).
cat >"$t/bin/memgate-qemu" <<'EOF'
#!/bin/sh
side() {
	printf '%s:' "$1"
	eval "set -- $2"
	for w in "$@"; do printf ' [%s]' "$w"; done
	echo
}
while [ $# -gt 0 ]; do
	case "$1" in
	--base) side base "$2" && shift ;;
	--head) side head "$2" && shift ;;
	esac
	shift
done
EOF
chmod +x "$t/bin/memgate" "$t/bin/memgate-qemu"
export MEMGATE="$t/bin/memgate"

# kab NAME WORK ARGS...: ci/kernel-ab.sh with WORK as its work folder; output in $t/NAME.*.
kab() {
	job=$1 w=$2
	shift 2
	MEMGATE_KERNEL_AB_WORK=$w sh "$top/ci/kernel-ab.sh" "$@" >"$t/$job.out" 2>"$t/$job.err"
	echo $? >"$t/$job.rc"
}
rc() { [ "$(cat "$t/$1.rc")" = "$2" ] || { sed 's/^/# /' "$t/$1.out" "$t/$1.err"; false; }; }
said() { grep -q -- "$2" "$t/$1.err" || { sed 's/^/# /' "$t/$1.err"; false; }; }

what="a folder memgate did not make, as the kernel's work folder: exit 2, every file kept"
mkdir -p "$base/theirs/src" "$base/theirs/build"
echo mine >"$base/theirs/src/notes" && echo mine >"$base/theirs/build/log"
kab theirs "$base/theirs" -C "$t/linux" -o "$t/o1" "$c1" "$c2"
ok eval 'rc theirs 2 && said theirs "a folder memgate did not make" &&
	[ "$(cat "$base/theirs/src/notes" "$base/theirs/build/log")" = "mine
mine" ] && [ ! -e "$base/theirs/.memgate-tree" ]'

what="the same for the QEMU pipeline's work folder"
MEMGATE_QEMU_AB_WORK="$base/theirs" MEMGATE="$t/bin/memgate-qemu" sh "$top/ci/qemu-ab.sh" \
	-C "$t/qemu" -o "$t/o1" HEAD~1 HEAD >"$t/q.out" 2>"$t/q.err"
echo $? >"$t/q.rc"
ok eval 'rc q 2 && said q "a folder memgate did not make" &&
	[ "$(ls -A "$base/theirs" | tr "\n" " ")" = "build src " ] &&
	[ "$(cat "$base/theirs/src/notes")" = mine ]'

what="the user's clone as WORK/src: untouched, its uncommitted edit and untracked file kept"
git clone -q "$t/linux" "$base/mine/src"
echo edit >>"$base/mine/src/Makefile" && echo new >"$base/mine/src/untracked"
before=$(git -C "$base/mine/src" rev-parse HEAD)
kab clone "$base/mine" -C "$t/linux" -o "$t/o1" "$c1" "$c2"
# Even in a folder of memgate's, a src it did not make is left as it is.
mkdir -p "$base/marked" && printf 'memgate kernel\n' >"$base/marked/.memgate-tree"
git clone -q "$t/linux" "$base/marked/src" && echo edit >>"$base/marked/src/Makefile"
kab marked "$base/marked" -C "$t/linux" -o "$t/o1" "$c1" "$c2"
ok eval 'rc clone 2 && rc marked 2 && said marked "not memgate.s clone" &&
	tail -n 1 "$base/mine/src/Makefile" | grep -qx edit && [ -f "$base/mine/src/untracked" ] &&
	[ "$(git -C "$base/mine/src" rev-parse HEAD)" = "$before" ] &&
	git -C "$base/mine/src" symbolic-ref -q HEAD >/dev/null &&
	tail -n 1 "$base/marked/src/Makefile" | grep -qx edit'

what="a commit that does not resolve: exit 2 naming it, nothing made"
kab badrev "$base/w1" -C "$t/linux" -o "$t/o1" "$c1" no-such-commit
ok eval 'rc badrev 2 && said badrev "HEAD .no-such-commit. is not a commit" && [ ! -e "$base/w1" ]'

what="-o a file: exit 2 naming it (not 1, a regression's status)"
echo keep >"$t/ofile"
kab ofile "$base/w1" -C "$t/linux" -o "$t/ofile" "$c1" "$c2"
ok eval 'rc ofile 2 && said ofile "ofile: not a folder" && [ "$(cat "$t/ofile")" = keep ]'

what="-o holding builds.txt as a link: refused before anything runs, its target untouched"
mkdir -p "$t/olink" && echo precious >"$t/target" && ln -s "$t/target" "$t/olink/builds.txt"
kab olink "$base/w1" -C "$t/linux" -o "$t/olink" "$c1" "$c2"
ok eval 'rc olink 2 && said olink "builds.txt there is a link" &&
	[ "$(cat "$t/target")" = precious ] && [ ! -e "$base/w1" ]'

what="a work path with a space: exit 2 before anything is made (Linux's Makefile refuses it)"
kab space "$t/w 3" -C "$t/linux" -o "$t/o1" "$c1" "$c2"
ok eval 'rc space 2 && said space "w 3: a path with white space or a colon" && [ ! -e "$t/w 3" ]'

what="the user's repository is only read: no worktree added, no branch moved"
branch=$(git -C "$t/linux" symbolic-ref HEAD)
kab e2e "$base/w1" -C "$t/linux" -o "$t/o 2" "$c1" "$c2"
ok eval '[ "$(git -C "$t/linux" worktree list | wc -l)" = 1 ] &&
	[ "$(git -C "$t/linux" symbolic-ref HEAD)" = "$branch" ] &&
	[ "$(git -C "$t/linux" rev-parse HEAD)" = "$c3" ] && git -C "$t/linux" diff --quiet HEAD'

what="paths with spaces and quotes end to end: 6.1 against 5.10 is exit 1, REGRESSION"
ok eval 'rc e2e 1 && grep -q REGRESSION "$t/o 2/ab.txt" && [ -s "$t/o 2/ab.xml" ] &&
	[ "$(grep -c "built in" "$t/o 2/builds.txt")" = 2 ] && [ -f "$base/w1/.memgate-tree" ] &&
	[ -z "$(ls -A "$t/o 2" | grep "^\.")" ]'

# kept DIR: every image kept in DIR holds the tree its name says.
kept() {
	for d in "$1"/kernel-*; do
		tr=${d##*/kernel-}
		if [ "$(cat "$d/bzImage")" != "$(git -C "$t/linux" cat-file blob "$tr:ID")" ] ||
			[ "$(cat "$d/tree")" != "$tr" ]; then
			echo "# $d holds $(cat "$d/bzImage")"
			return 1
		fi
	done
}

what="a second run finds both images built already, each holding its own tree"
kab again "$base/w1" -C "$t/linux" -o "$t/o 2" "$c1" "$c2"
ok eval 'rc again 1 && [ "$(grep -c "built already" "$t/o 2/builds.txt")" = 2 ] && kept "$base/w1"'

what="two jobs at once on one work folder: the second waits, saying for whom"
kab j1 "$base/w2" -C "$t/linux" -o "$t/j1" "$c1" "$c2" &
j1=$!
# The first has the folder once it says who holds it.
i=0
while [ ! -s "$base/w2/.lock-holder" ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
kab j2 "$base/w2" -C "$t/linux" -o "$t/j2" "$c3" "$c2"
wait $j1
ok eval 'rc j1 1 && said j2 "is in use by pid" && said j2 "is this job.s now"'

what="... and every image kept holds the tree its name says"
ok eval '[ "$(ls -d "$base"/w2/kernel-* | wc -l)" = 3 ] && kept "$base/w2"'

what="the QEMU pipeline on a made-up tree: each side its own binary, quoted for ab"
if command -v ninja >/dev/null 2>&1; then
	MEMGATE_QEMU_AB_WORK="$base/wq" MEMGATE="$t/bin/memgate-qemu" sh "$top/ci/qemu-ab.sh" \
		-C "$t/qemu" -o "$t/oq" HEAD~2 HEAD >"$t/qe.out" 2>"$t/qe.err"
	echo $? >"$t/qe.rc"
	ok eval 'rc qe 0 && grep -q "QEMU emulator version tree-6.1$" "$t/qe.out" &&
		grep -q "QEMU emulator version tree-6.1-slower$" "$t/qe.out" &&
		grep -qF "base: [$t/bin/memgate-qemu] [--qemu] [$base/wq/qemu-" "$t/oq/ab.txt"'
else
	skip "no ninja (ci/install-deps.sh installs ninja-build)"
fi

what="a side that does not build: exit 4, the end of its build log said, the other kept"
git clone -q "$t/linux" "$base/broken" && git -C "$base/broken" rm -q ID &&
	git -C "$base/broken" commit -q -m "no ID: the made-up bzImage cannot be made"
kab broken "$base/w4" -C "$base/broken" -o "$t/o4" HEAD~1 HEAD
ok eval 'rc broken 4 && said broken "HEAD (.*) did not build; the end of .*build.log" &&
	[ "$(ls -d "$base"/w4/kernel-* | wc -l)" = 1 ]'
