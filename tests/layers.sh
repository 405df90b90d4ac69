#!/bin/sh
# layers.sh - each folder is a layer and includes only from its own and the ones below it.
# The order is the Makefile's LAYERS, with cli/ on top. Prints TAP for tests/run.sh: the
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

# The check itself: an impl/ file that includes the harness must be reported.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/impl" "$tmp/harness"
printf '#include "harness/case.h"\n' > "$tmp/impl/planted.c"
printf '#include "impl/planted.h"\n' > "$tmp/harness/ok.c"
planted=$(violations "$tmp")
if [ "$(printf '%s\n' "$planted" | grep -c .)" -eq 1 ] &&
   printf '%s\n' "$planted" | grep -q '^impl/planted.c:1: includes "harness/case.h"'; then
	echo "ok 2 - a planted upward include (impl/ -> harness/) is caught, a downward one is not"
else
	printf '%s\n' "$planted" | sed 's/^/# /'
	echo "not ok 2 - the layering check missed a planted upward include"
fi
