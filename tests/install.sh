#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# install.sh - make install and make uninstall with DESTDIR and PREFIX: the binary, memgate(1),
# and the bash completion land where a packager expects them, the binary carries its rules,
# the page renders with man -l, the completion completes, and uninstall takes them all away
# again. Prints TAP for tests/run.sh.
# usage: tests/install.sh [BUILD_DIR]   (make picks the build from $MEMGATE_SAN, as check did)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$(mktemp -d "${TMPDIR:-/tmp}/memgate-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
. "$top/tests/tap.sh"
echo "1..7"

mk() {
	make --no-print-directory -s -C "$top" SAN="${MEMGATE_SAN:-}" DESTDIR="$dest" "$@" \
		>"$dest.log" 2>&1 || { sed 's/^/# /' "$dest.log"; rm -f "$dest.log"; return 1; }
	rm -f "$dest.log"
}

what="make install DESTDIR=D puts memgate, memgate.1 and its completion under D/usr/local"
mk install
ok test -x "$dest/usr/local/bin/memgate" -a -f "$dest/usr/local/share/man/man1/memgate.1" \
	-a -f "$dest/usr/local/share/bash-completion/completions/memgate"

what="bash completes 'memgate ab --con' and 'memgate run -s me' from the installed completion"
if command -v bash >/dev/null 2>&1; then
	ok bash -c '. "$1" || exit 1
		COMP_WORDS=(memgate ab --con); COMP_CWORD=2; _memgate
		[ "${COMPREPLY[*]}" = "--confirm-rounds" ] || { echo "# ab --con: ${COMPREPLY[*]}"; exit 1; }
		COMP_WORDS=(memgate run -s me); COMP_CWORD=3; _memgate
		[ "${COMPREPLY[*]}" = "memslots" ] || { echo "# run -s me: ${COMPREPLY[*]}"; exit 1; }
		COMP_WORDS=(memgate ca); COMP_CWORD=1; _memgate
		[ "${COMPREPLY[*]}" = "calibrate" ] || { echo "# ca: ${COMPREPLY[*]}"; exit 1; }' \
		sh "$dest/usr/local/share/bash-completion/completions/memgate"
else
	skip "bash is not installed"
fi

what="the installed binary runs and prints the rules it was built with, each suite's among them"
ok sh -c '"$1" rules | grep -q "^# ==== suites/kvm/rules.conf" && "$1" --version | grep -q "^memgate "' sh \
	"$dest/usr/local/bin/memgate"

what="man -l renders memgate(1) with its synopsis, options and implementations"
if command -v man >/dev/null 2>&1; then
	page=$(MANWIDTH=100 man -l "$dest/usr/local/share/man/man1/memgate.1" 2>&1)
	ok sh -c 'for s in SYNOPSIS COMMANDS "EXIT STATUS" "IMPLEMENTATIONS UNDER TEST" FILES; do
		printf "%s\n" "$1" | grep -q "^$s" || { echo "# no section $s"; exit 1; }; done
		printf "%s\n" "$1" | grep -q -- "--reserve-hugepages"' sh "$page"
else
	n=$((n + 1))
	echo "not ok $n - $what # SKIP man is not installed (ci/install-deps.sh installs man-db)"
fi

what="groff reads memgate(1) without a warning"
if command -v groff >/dev/null 2>&1; then
	warnings=$(groff -man -ww -z "$dest/usr/local/share/man/man1/memgate.1" 2>&1)
	[ -z "$warnings" ] || printf '%s\n' "$warnings" | sed 's/^/# /'
	ok test -z "$warnings"
else
	n=$((n + 1))
	echo "not ok $n - $what # SKIP groff is not installed"
fi

what="make uninstall DESTDIR=D removes all three"
mk uninstall
ok sh -c '! test -e "$1/usr/local/bin/memgate" && ! test -e "$1/usr/local/share/man/man1/memgate.1" &&
	! test -e "$1/usr/local/share/bash-completion/completions/memgate"' sh "$dest"

what="PREFIX=/opt/memgate moves all three"
mk install PREFIX=/opt/memgate
ok test -x "$dest/opt/memgate/bin/memgate" -a -f "$dest/opt/memgate/share/man/man1/memgate.1" \
	-a -f "$dest/opt/memgate/share/bash-completion/completions/memgate"
