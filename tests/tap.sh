# SPDX-License-Identifier: GPL-2.0-or-later
# tap.sh - the TAP lines of the shell tests, sourced by them: `ok CONDITION...` and
# `skip REASON`, each named by $what, numbered in $n. tests/run.sh counts them.
n=0

# ok CONDITION... : passes when the command does.
ok() {
	n=$((n + 1))
	if "$@"; then echo "ok $n - $what"; else echo "not ok $n - $what"; fi
}

# skip REASON : not run here, and why.
skip() {
	n=$((n + 1))
	echo "ok $n - $what # SKIP $1"
}
