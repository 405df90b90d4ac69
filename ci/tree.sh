# SPDX-License-Identifier: GPL-2.0-or-later
# tree.sh - what ci/tree-ab.sh does whatever the kind of tree, sourced by it: the reports
# folder, the work folder (memgate's own or refused, one job at a time), the source checked out
# in it without writing into the user's repository, each built tree kept under its tree hash,
# and the A/B.
#
# The driver sets $prog (its name, for messages), $here (its folder) and $work_var (the name of
# its work folder's environment variable), defines usage() (tree_usage with the kind's words),
# and calls tree_start with its command line (which resolves both commits before anything is
# built, then takes the reports folder and the work folder), then tree_build per side (with the
# kind's hooks, ci/KIND/tree.sh), last tree_ab. Bad input is exit 2
# and names what was wrong; what fails in the work folder itself, 3.

# The marker that makes a folder a work folder of memgate's (its first line names the kind),
# and the one that makes WORK/src memgate's clone.
tree_marker=.memgate-tree
tree_tmps=""

# tree_kind DRIVER USAGE "$@": the kind of tree (qemu, kernel) a driver (tree-ab, tree-side,
# tree-bisect) was asked for, its first word: $kind, $prog (for messages), $work_var (the
# name of the work folder's variable, one for the three drivers of a kind), the kind's part
# (ci/KIND/tree.sh) sourced. Without a kind: USAGE, exit 2 (asked for with -h: exit 0).
tree_kind() {
	case "${3:-}" in
	qemu | kernel) kind=$3 ;;
	-h | --help)
		echo "usage: $2"
		echo "  (ci/$1.sh KIND --help: the options of each kind)"
		exit 0
		;;
	*)
		echo "usage: $2" >&2
		exit 2
		;;
	esac
	prog=$kind-${1#tree-}
	work_var=MEMGATE_$(echo "$kind" | tr '[:lower:]' '[:upper:]')_AB_WORK
	. "$here/$kind/tree.sh"
}

# tree_fail STATUS WORDS...: WORDS on stderr, then exit STATUS.
tree_fail() {
	st=$1
	shift
	echo "$prog: $*" >&2
	exit "$st"
}

tree_die() {
	tree_fail 2 "$@"
}

# tree_usage KIND REPO WHAT KEPT EXAMPLE [ENVIRONMENT]: the usage of ci/KIND-ab.sh, whose -C
# names REPO (WHAT git repository), whose kept builds are KEPT per source tree, with EXAMPLE
# as ab options and its own ENVIRONMENT lines; then exit 2 (asked for with -h or --help: on
# stdout, exit 0).
tree_usage() {
	cat >&"${tree_usage_fd:-2}" <<USAGE
usage: ci/tree-ab.sh $1 [-C $2] [-o OUT] PARENT HEAD [-- AB_OPTIONS...]
   or: ci/$1-ab.sh [-C $2] [-o OUT] PARENT HEAD [-- AB_OPTIONS...]
  -C $2  $3 git repository (default: the current folder); only read
  -o OUT  the reports' folder (default: $1-ab in the current folder):
      ab.xml (JUnit), ab.html, ab.json, ab.txt (the verdict table), builds.txt
  PARENT HEAD  commits (anything git rev-parse takes); the same commit twice is an A/A
  AB_OPTIONS  more options of memgate ab, e.g. $5
Environment:
  MEMGATE  the memgate binary (default: build/memgate of this checkout)
  $work_var  the work folder, kept between runs: a clone sharing the
      repository's objects, one build folder (a commit builds incrementally) and $4
      per source tree (the next commit's parent is usually built already). memgate's own:
      made when missing; an existing folder it did not make is refused.
      Default: $2/../memgate-$1-ab
  MEMGATE_TREE_WAIT  how long a second job waits for the work folder (default 7200 s)
  JOBS  parallel build jobs (default: nproc)
${6:+$6
}Exit status: memgate ab's (0 pass, 1 a regression or a failed check, 2 bad input, 3 harness);
4 when a side does not build.
USAGE
	[ "${tree_usage_fd:-2}" = 1 ] && exit 0
	exit 2
}

# tree_start KIND "$@": the command line of ci/KIND-ab.sh (usage() on bad words): $repo,
# $parent and $head resolved as commits, $memgate, the reports folder $out and the work folder
# $work, in that order, bad input refused before anything is made; $tree_shift: how many of
# the words it took (the rest are ab's options).
tree_start() {
	kind=$1
	shift
	if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
		tree_usage_fd=1
		usage
	fi
	repo_arg=.
	out_arg=$kind-ab
	while getopts C:o:h opt; do
		case "$opt" in
		C) repo_arg=$OPTARG ;;
		o) out_arg=$OPTARG ;;
		*) usage ;;
		esac
	done
	# One commit (a side: ci/tree-side.sh) or two.
	nargs=${tree_nargs:-2}
	tree_shift=$((OPTIND + nargs - 1))
	shift $((OPTIND - 1))
	[ $# -ge "$nargs" ] || usage
	parent=$1
	head=$1
	[ "$nargs" = 1 ] || head=$2
	shift "$nargs"
	[ "${1:-}" != "--" ] || tree_shift=$((tree_shift + 1))
	tree_what="$parent..$head"
	memgate=${MEMGATE:-$here/../build/memgate}
	[ -x "$memgate" ] ||
		tree_die "no memgate at $memgate: run make in memgate's checkout, or set MEMGATE"
	memgate=$(cd "$(dirname "$memgate")" && pwd)/$(basename "$memgate")
	tree_repo "$repo_arg"
	tree_commit PARENT "$parent"
	tree_commit HEAD "$head"
	tree_out "$out_arg"
	eval "tree_work \"\$kind\" \"\${$work_var:-\$repo/../memgate-\$kind-ab}\""
}

# tree_quote WORD: WORD as one word of ab's side (a POSIX shell's single quotes), whatever
# spaces and quotes it holds.
tree_quote() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

# Every way out: this job's temporaries go, the verdict table that was being written is put in
# place, and the status is kept.
tree_exit() {
	st=$?
	trap - EXIT HUP INT TERM
	if [ -n "${tree_ab_tmp:-}" ] && [ -f "$tree_ab_tmp" ]; then
		mv -Tf -- "$tree_ab_tmp" "$out/ab.txt" 2>/dev/null || rm -f -- "$tree_ab_tmp"
	fi
	set -f
	IFS='
'
	for t in $tree_tmps; do
		rm -rf -- "$t"
	done
	exit "$st"
}
trap tree_exit EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# tree_tmp VAR PATH: remember PATH (a temporary of this job's) for removal on the way out, and
# set VAR to it.
tree_tmp() {
	tree_tmps="$tree_tmps
$2"
	eval "$1=\$2"
}

# tree_out DIR: the reports folder, $out. A file given as DIR, or a report there that is a link,
# a FIFO or a device, is refused: reports are put in place by rename, never written through.
tree_out() {
	if [ -e "$1" ] && [ ! -d "$1" ]; then
		tree_die "-o $1: not a folder: name the folder the reports go to (it is made when missing)"
	fi
	mkdir -p -- "$1" || tree_die "-o $1: cannot make the folder"
	out=$(cd -- "$1" && pwd) || tree_die "-o $1: cannot enter the folder"
	for f in builds.txt ab.txt ab.xml ab.json ab.html; do
		if [ -L "$out/$f" ] || { [ -e "$out/$f" ] && [ ! -f "$out/$f" ]; }; then
			tree_die "-o $1: $f there is a link or not a regular file: memgate replaces its" \
				"reports and never writes through links; remove it or name another folder"
		fi
	done
	tree_tmp tree_log "$(mktemp "$out/.builds.txt.XXXXXX")" || tree_die "-o $1: cannot write in it"
	# A side of a bisect (ci/tree-side.sh) adds its line to what the bisect wrote so far.
	if [ "${tree_nargs:-2}" = 1 ] && [ -f "$out/builds.txt" ]; then
		cat -- "$out/builds.txt" >"$tree_log"
	fi
}

# tree_note LINE: LINE on stdout (a side's driver: stderr, its stdout is the side) and in
# OUT/builds.txt (a new file renamed over the old).
tree_note() {
	echo "$1" >&"${tree_note_fd:-1}"
	echo "$1" >>"$tree_log"
	t=$(mktemp "$out/.builds.txt.XXXXXX") && cat "$tree_log" >"$t" && mv -Tf -- "$t" "$out/builds.txt"
}

# tree_repo DIR: the user's repository, $repo (its top folder). It is only read: no worktree,
# no branch, no file of it changes.
tree_repo() {
	repo=$(git -C "$1" rev-parse --show-toplevel 2>/dev/null) ||
		tree_die "-C $1: not a git repository"
}

# tree_commit NAME REV: REV as a commit of the repository ($commit) and its tree ($tree); NAME
# (PARENT, HEAD) for the message when it is none.
tree_commit() {
	commit=$(git -C "$repo" rev-parse -q --verify "$2^{commit}" 2>/dev/null) ||
		tree_die "$1 '$2' is not a commit of $repo"
	tree=$(git -C "$repo" rev-parse "$commit^{tree}")
}

# tree_work KIND DIR: the work folder, $work: made with the marker when new; an existing one
# must carry the marker of KIND, or be empty. Then the lock: one job at a time in it, a second
# waiting up to $MEMGATE_TREE_WAIT seconds (default 7200), saying for whom.
tree_work() {
	abs=$2
	case "$abs" in
	/*) ;;
	*) abs=$PWD/$abs ;;
	esac
	case "$abs" in
	*[[:space:]:]*)
		tree_die "$work_var=$abs: a path with white space or a colon, which $1's build refuses" \
			"(Linux's Makefile and QEMU's configure both do): name a work folder without"
		;;
	esac
	if [ -e "$2" ] && [ ! -d "$2" ]; then
		tree_die "$work_var=$2: not a folder"
	fi
	if [ -d "$2" ] && [ ! -f "$2/$tree_marker" ]; then
		if [ -n "$(ls -A -- "$2")" ]; then
			tree_die "$work_var=$2: a folder memgate did not make (no $tree_marker in it)," \
				"holding: $(ls -A -- "$2" | head -n 8 | tr '\n' ' ')- memgate deletes" \
				"and resets what is in its work folder, so it works only in its own: name a" \
				"new folder (it is made) or an empty one; nothing in this one was touched"
		fi
	elif [ -f "$2/$tree_marker" ] && [ "$(head -n 1 "$2/$tree_marker")" != "memgate $1" ]; then
		tree_die "$work_var=$2: the work folder of another pipeline" \
			"($(head -n 1 "$2/$tree_marker")): give each pipeline a folder of its own"
	fi
	mkdir -p -- "$2" || tree_die "$work_var=$2: cannot make the folder"
	work=$(cd -- "$2" && pwd -P) || tree_die "$work_var=$2: cannot enter the folder"
	if [ ! -f "$work/$tree_marker" ]; then
		t=$(mktemp "$work/.marker.XXXXXX") &&
			printf 'memgate %s\nThe work folder of ci/%s-ab.sh: its clone, build folder and kept builds.\n' \
				"$1" "$1" >"$t" && mv -Tf -- "$t" "$work/$tree_marker" ||
			tree_die "$work_var=$2: cannot write in the folder"
	fi
	# A bisect (ci/tree-bisect.sh) holds the lock for the sides it has built: they are its.
	if [ "${MEMGATE_TREE_HELD:-}" = "$work" ]; then
		return 0
	fi
	exec 9>>"$work/.lock"
	if ! flock -n 9; then
		wait_s=${MEMGATE_TREE_WAIT:-7200}
		echo "$prog: $work is in use by $(cat "$work/.lock-holder" 2>/dev/null ||
			echo 'another job'): waiting up to $wait_s s (MEMGATE_TREE_WAIT) for it" >&2
		flock -w "$wait_s" 9 ||
			tree_die "$work is still in use after $wait_s s, by" \
				"$(cat "$work/.lock-holder" 2>/dev/null || echo 'another job'): try" \
				"again later, or give this job a work folder of its own ($work_var)"
		echo "$prog: $work is this job's now" >&2
	fi
	t=$(mktemp "$work/.holder.XXXXXX") &&
		echo "pid $$ on $(uname -n) since $(date '+%F %T') (${BUILD_TAG:-$tree_what})" >"$t" &&
		mv -Tf -- "$t" "$work/.lock-holder"
}

# tree_checkout COMMIT CLEAN_OPTIONS: WORK/src at COMMIT, what another commit left removed
# (git clean CLEAN_OPTIONS). WORK/src is a clone of the repository sharing its objects
# (git clone --shared): the repository itself is never written to. Its build folder and
# paths are the same for every commit, so builds are incremental.
tree_checkout() {
	src=$work/src
	if [ -e "$src" ] && [ ! -f "$src/.git/$tree_marker" ]; then
		tree_die "$src: not memgate's clone (no .git/$tree_marker): it is left as it is;" \
			"name another work folder ($work_var)"
	fi
	if [ ! -e "$src" ]; then
		git clone -q --shared --no-checkout -- "$repo" "$src" &&
			echo "memgate's clone of $repo" >"$src/.git/$tree_marker" ||
			tree_fail 3 "cannot clone $repo into $src"
	fi
	# A commit the clone's refs do not hold is in the repository's objects, which it shares.
	git -C "$src" checkout -q -f --detach "$1" && git -C "$src" clean -q -f -d $2 ||
		tree_fail 3 "cannot check $1 out in $src"
}

# tree_verify: the source just built is the tree that was asked for, unchanged: a kept build is
# named by the tree it was built from, never by the one asked for.
tree_verify() {
	built=$(git -C "$src" rev-parse HEAD^{tree}) &&
		[ "$built" = "$tree" ] && git -C "$src" diff --quiet HEAD -- ||
		tree_fail 3 "$src no longer holds tree $tree after the build (it holds" \
			"${built:-?}, or changed files): nothing kept"
}

# tree_keep DIR: the folder DIR (made by the caller inside $work) becomes $keep, with the tree
# it was built from in DIR/tree, by one rename.
tree_keep() {
	echo "$tree" >"$1/tree"
	if [ -e "$keep" ]; then
		rm -rf -- "$keep"
	fi
	mv -T -- "$1" "$keep"
}

# tree_kept CONFIG FILE PRODUCT: is $keep a build of $tree whose FILE holds CONFIG, with its
# PRODUCT (the binary, the image) readable?
tree_kept() {
	[ "$(cat "$keep/tree" 2>/dev/null)" = "$tree" ] &&
		[ "$(cat "$keep/$2" 2>/dev/null)" = "$1" ] && [ -r "$keep/$3" ]
}

# tree_build NAME REV: REV (NAME: PARENT, HEAD for messages) built by the kind and kept in
# WORK/KIND-TREE, one a source tree and configuration, so the parent of the next commit is
# usually built already; $product its product's path. The kind's part (ci/KIND/tree.sh) gives
# $tree_product, $tree_config (what a kept build must have been configured with),
# $tree_clean (git clean's options between commits), $tree_how (for the note), and
# kind_compile NAME (the checked-out source built in $dir, $how set when it was configured
# anew; on failure it says why with the end of its logs) and kind_collect DIR (what is kept).
# A side that does not build is exit 4 (a side's driver: $tree_nobuild_status).
tree_build() {
	tree_commit "$1" "$2"
	keep=$work/$kind-$tree
	product=$keep/$tree_product
	if tree_kept "$tree_config" config-id "$tree_product"; then
		tree_note "$2 $commit: built already in $keep"
		return 0
	fi
	dir=$work/build
	tree_checkout "$commit" "$tree_clean"
	start=$(date +%s)
	how=incremental
	kind_compile "$2" || exit "${tree_nobuild_status:-4}"
	tree_verify
	tree_tmp new "$(mktemp -d "$work/.$kind.XXXXXX")"
	kind_collect "$new"
	printf '%s\n' "$tree_config" >"$new/config-id"
	tree_keep "$new"
	tree_note "$2 $commit: built in $(($(date +%s) - start)) s ($how, $tree_how) into $keep"
}

# tree_ab SIDE_BASE SIDE_HEAD AB_ARGS...: memgate ab of the two sides, its table into
# OUT/ab.txt (put in place at the end, or on the way out) and on stdout; $status its exit.
tree_ab() {
	tree_tmp tree_ab_tmp "$(mktemp "$out/.ab.txt.XXXXXX")"
	base_side=$1
	head_side=$2
	shift 2
	start=$(date +%s)
	status=0
	"$memgate" ab --base "$base_side" --head "$head_side" --junit "$out/ab.xml" \
		--json "$out/ab.json" --html "$out/ab.html" "$@" >"$tree_ab_tmp" 2>&1 || status=$?
	cat "$tree_ab_tmp"
	mv -Tf -- "$tree_ab_tmp" "$out/ab.txt"
	tree_note "$prog: memgate ab took $(($(date +%s) - start)) s, exit $status"
}
