#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# kernel-ab.sh - gate a kernel commit against its parent with memgate's kvm suite: ci/tree-ab.sh kernel
# (ci/kernel/tree.sh says how a side is built and run).
exec "$(dirname "$0")/tree-ab.sh" kernel "$@"
