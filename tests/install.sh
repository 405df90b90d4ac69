#!/bin/sh
# install.sh - make install and make uninstall with DESTDIR and PREFIX: the binary, memgate(1)
# and the default rules land where a packager expects them, the page renders with man -l,
# and uninstall takes them all away again. Prints TAP for tests/run.sh.
# usage: tests/install.sh [BUILD_DIR]   (make picks the build from $MEMGATE_SAN, as check did)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dest=$(mktemp -d "${TMPDIR:-/tmp}/memgate-install.XXXXXX")
trap 'rm -rf "$dest"' EXIT
. "$top/tests/tap.sh"
echo "1..6"

mk() {
	make --no-print-directory -s -C "$top" SAN="${MEMGATE_SAN:-}" DESTDIR="$dest" "$@" \
		>"$dest.log" 2>&1 || { sed 's/^/# /' "$dest.log"; rm -f "$dest.log"; return 1; }
	rm -f "$dest.log"
}

what="make install DESTDIR=D puts memgate, memgate.1 and rules.conf under D/usr/local"
mk install
ok test -x "$dest/usr/local/bin/memgate" -a -f "$dest/usr/local/share/man/man1/memgate.1" \
	-a -f "$dest/usr/local/share/memgate/rules.conf"

what="the installed binary runs and prints the rules it was built with"
ok sh -c '"$1" rules --rules "$2" >/dev/null && "$1" --version | grep -q "^memgate "' sh \
	"$dest/usr/local/bin/memgate" "$dest/usr/local/share/memgate/rules.conf"

what="man -l renders memgate(1) with its synopsis, options and implementations"
if command -v man >/dev/null 2>&1; then
	page=$(MANWIDTH=100 man -l "$dest/usr/local/share/man/man1/memgate.1" 2>&1)
	ok sh -c 'for s in SYNOPSIS COMMANDS OPTIONS "IMPLEMENTATIONS UNDER TEST" FILES; do
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

what="make uninstall DESTDIR=D removes all three and the data folder"
mk uninstall
ok sh -c '! test -e "$1/usr/local/bin/memgate" && ! test -e "$1/usr/local/share/man/man1/memgate.1" &&
	! test -e "$1/usr/local/share/memgate"' sh "$dest"

what="PREFIX=/opt/memgate moves all three"
mk install PREFIX=/opt/memgate
ok test -x "$dest/opt/memgate/bin/memgate" -a -f "$dest/opt/memgate/share/man/man1/memgate.1" \
	-a -f "$dest/opt/memgate/share/memgate/rules.conf"
