#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# false-alarms.sh - how often `memgate ab` fails on identical builds (A/A), and how often it
# catches a head made slower on purpose (ci/slowdown/*.patch applied to a copy of this
# checkout). Prints one line per run and the fraction that failed; the README's figures come
# from it.
#
# usage: ci/false-alarms.sh aa RUNS [AB OPTIONS...]        identical builds, default suites
#        ci/false-alarms.sh slow PATCH RUNS [AB OPTIONS...] base: this build; head: patched
#   e.g. ci/false-alarms.sh aa 20
#        ci/false-alarms.sh slow ci/slowdown/shift-10.patch 20 -s memslots -k '*update*'
# Run it from the checkout after `make`; it builds the patched copy under build/slowdown/.
# FALSE_ALARMS_LOGS=DIR keeps each run's whole output there (run-N.txt).
set -eu
cd "$(dirname "$0")/.."

mode=${1:?usage: ci/false-alarms.sh aa RUNS | slow PATCH RUNS [AB OPTIONS...]}
shift
base=build/memgate
head=build/memgate
if [ "$mode" = slow ]; then
	patch=${1:?a patch from ci/slowdown/}
	shift
	copy=build/slowdown/$(basename "$patch" .patch)
	rm -rf "$copy"
	mkdir -p "$copy"
	# The committed tree and any local changes to it: what build/memgate was built from.
	git ls-files -z | xargs -0 tar -cf - | tar -xf - -C "$copy"
	patch -s -p1 -d "$copy" < "$patch"
	make -s -C "$copy" all >/dev/null
	head=$copy/build/memgate
elif [ "$mode" != aa ]; then
	echo "false-alarms.sh: the mode is aa or slow, not '$mode'" >&2
	exit 2
fi
runs=${1:?how many runs}
shift

failed=0
i=1
while [ "$i" -le "$runs" ]; do
	start=$(date +%s)
	set +e
	out=$(build/memgate ab --base "$base" --head "$head" --seed "$i" "$@" 2>&1)
	rc=$?
	set -e
	[ -z "${FALSE_ALARMS_LOGS:-}" ] || printf '%s\n' "$out" > "$FALSE_ALARMS_LOGS/run-$i.txt"
	if [ "$rc" -gt 1 ]; then
		printf '%s\n' "$out" | tail -n 5 >&2
		echo "false-alarms.sh: run $i: memgate ab exit $rc" >&2
		exit "$rc"
	fi
	failed=$((failed + rc))
	echo "run $i: exit $rc in $(($(date +%s) - start)) s;" \
		"$(printf '%s\n' "$out" | grep -c '^FAIL') verdicts failed:" \
		"$(printf '%s\n' "$out" | sed -n 's/^FAIL  \([^ ]*\).*/\1/p' | tr '\n' ' ')"
	i=$((i + 1))
done
echo "$mode: $failed of $runs runs failed"
