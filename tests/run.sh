#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh - run the test programs (cmocka, TAP output) and print one summary line.
# usage: tests/run.sh BUILD_DIR TEST_PROGRAM...
# A program that dies before reporting all its tests has the missing ones counted as failed.
set -u
build=$1
shift
passed=0 failed=0 skipped=0
for t in "$@"; do
	out=$(CMOCKA_MESSAGE_OUTPUT=TAP MEMGATE_BUILD="$build" "$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	plan=$(printf '%s\n' "$out" | sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' | head -n 1)
	# A skip is "not ok N # SKIP" (cmocka) or "ok N ... # SKIP" (TAP, the shell tests).
	p=$(printf '%s\n' "$out" | grep '^ok [0-9]' | grep -vc '# SKIP')
	s=$(printf '%s\n' "$out" | grep -c '^\(not \)\{0,1\}ok [0-9].*# SKIP')
	f=$(printf '%s\n' "$out" | grep '^not ok [0-9]' | grep -vc '# SKIP')
	missing=$(( ${plan:-1} - p - s - f ))
	if [ "$missing" -gt 0 ]; then
		echo "# $t: $missing tests never reported (exit status $rc)"
		f=$((f + missing))
	fi
	passed=$((passed + p)) skipped=$((skipped + s)) failed=$((failed + f))
done
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
