#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# qemu-ab.sh - gate a QEMU commit against its parent with memgate's qemu suite: ci/tree-ab.sh qemu
# (ci/qemu/tree.sh says how a side is built and run).
exec "$(dirname "$0")/tree-ab.sh" qemu "$@"
