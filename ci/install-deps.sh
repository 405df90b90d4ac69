#!/bin/sh
# install-deps.sh - install the Debian packages memgate needs to build, test and report.
# Idempotent: installs only what is missing and says what. Needs root when something is.
# usage: ci/install-deps.sh [--quiet]   (--quiet: print nothing when all is present)
set -eu

# build: compiler, make, pkg-config and the libraries' -dev packages (libconfig reads the
# rules file);
# tests: cmocka, xmllint (schema validation of the JUnit output), jemalloc (the rcu suite
# must SKIP its trim cases when malloc is not the C library's: tested with it preloaded).
# lint: clang-format, clang-tidy and cppcheck (make lint); fuzz: clang and its libFuzzer
# runtime (make fuzz); the qemu suite's peer: Debian's QEMU (qemu-system-x86_64); valgrind:
# --counter simulated counts instructions and misses under its callgrind; man-db: the
# install test reads memgate(1) with man -l.
PACKAGES="gcc make pkgconf libhwloc-dev libcpuid-dev libxml2-dev libjansson-dev \
libcmocka-dev libconfig-dev libxml2-utils libjemalloc2 clang-format clang-tidy cppcheck \
clang libclang-rt-14-dev qemu-system-x86 valgrind man-db"

quiet=0
[ "${1:-}" = "--quiet" ] && quiet=1

missing=""
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done

if [ -z "$missing" ]; then
	[ "$quiet" -eq 1 ] || echo "install-deps: all present:$(printf ' %s' $PACKAGES)"
	exit 0
fi

echo "install-deps: installing:$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: not root; run as root, or: sudo apt-get install -y$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# An install on a fresh machine needs package lists; refresh them once, only then.
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
echo "install-deps: done"
