#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# layers.sh - each folder is a layer and includes only from its own and the ones below it.
# The order is the Makefile's LAYERS, with cli/ on top, which only parses: it includes cli/ and
# session/ alone. Prints TAP for tests/run.sh: the
# tree's own check, then a check that a planted upward include is caught.
# usage: tests/layers.sh [BUILD_DIR]   (the build directory is unused; run.sh passes it)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
layers="$(sed -n 's/^LAYERS *:= *//p' "$top/Makefile") cli"

# rank FOLDER: its position in $layers (1 = lowest), 0 when it is not a layer.
rank() {
	i=1
	for l in $layers; do
		[ "$l" = "$1" ] && { echo "$i"; return; }
		i=$((i + 1))
	done
	echo 0
}

# cli_may HEADER: may the command line include HEADER? It parses and calls the session: its
# own headers and the session's jobs (not their insides).
cli_may() {
	case "$1" in
	session/internal.h | session/ab_job.h) return 1 ;; # what a job is made of: session/ only
	cli/* | session/*) return 0 ;;
	esac
	return 1
}

# violations DIR: one line per include that reaches above its own layer, as file:line: why.
violations() {
	for l in $layers; do
		[ -d "$1/$l" ] || continue
		own=$(rank "$l")
		find "$1/$l" -name '*.[ch]' | sort | while read -r f; do
			grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
			while IFS= read -r hit; do
				line=${hit%%:*}
				inc=$(printf '%s\n' "$hit" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
				case "$inc" in */*) ;; *) continue ;; esac
				dir=${inc%%/*}
				r=$(rank "$dir")
				rel=${f#"$1"/}
				if [ "$r" -eq 0 ]; then
					echo "$rel:$line: includes \"$inc\": $dir/ is not a layer ($layers)"
				elif [ "$r" -gt "$own" ]; then
					echo "$rel:$line: includes \"$inc\": $dir/ is above $l/ ($layers)"
				elif [ "$l" = cli ] && ! cli_may "$inc"; then
					echo "$rel:$line: includes \"$inc\": the command line only parses (cli/ and session/)"
				fi
			done
		done
	done
}

echo "1..2"
found=$(violations "$top")
if [ -z "$found" ]; then
	echo "ok 1 - no file includes from a layer above its own ($layers)"
else
	printf '%s\n' "$found" | sed 's/^/# /'
	echo "not ok 1 - includes reach above their layer"
fi

# The check itself: upward includes planted in a scratch tree must be reported, one per
# boundary that matters most (impl/ reaching the runner, the runner reaching the judge), and
# the downward ones beside them must not.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/impl" "$tmp/run" "$tmp/judge" "$tmp/cli"
printf '#include "run/case.h"\n' > "$tmp/impl/planted.c"
printf '#include "judge/verdict.h"\n#include "impl/planted.h"\n' > "$tmp/run/planted.c"
printf '#include "run/case.h"\n#include "impl/planted.h"\n' > "$tmp/judge/ok.c"
printf '#include "judge/ab.h"\n#include "session/session.h"\n#include "session/internal.h"\n#include "util/text.h"\n' > "$tmp/cli/planted.c"
planted=$(violations "$tmp")
if [ "$(printf '%s\n' "$planted" | grep -c .)" -eq 5 ] &&
   printf '%s\n' "$planted" | grep -q '^cli/planted.c:4: includes "util/text.h"' &&
   printf '%s\n' "$planted" | grep -q '^cli/planted.c:3: includes "session/internal.h"' &&
   printf '%s\n' "$planted" | grep -q '^cli/planted.c:1: includes "judge/ab.h": the command line only parses' &&
   printf '%s\n' "$planted" | grep -q '^impl/planted.c:1: includes "run/case.h"' &&
   printf '%s\n' "$planted" | grep -q '^run/planted.c:1: includes "judge/verdict.h"'; then
	echo "ok 2 - planted upward includes (impl/ -> run/, run/ -> judge/) and the command line reaching past the session (cli/ -> judge/, util/) are caught, the others not"
else
	printf '%s\n' "$planted" | sed 's/^/# /'
	echo "not ok 2 - the layering check missed a planted upward include"
fi
