/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tmpdir.h - a run's own folder under $TMPDIR (else /tmp), and its removal with everything in
 * it. Each folder holds a lock its process keeps while it lives (.owner, flock): a memgate that
 * dies (SIGKILL, a crash, a lost agent) leaves its folder locked by nobody, and the next one
 * that makes a folder there removes it.
 */
#ifndef MG_UTIL_TMPDIR_H
#define MG_UTIL_TMPDIR_H

#include <stddef.h>

/**
 * tmpdir_make() - a new folder "$TMPDIR/memgate-@what.XXXXXX" (/tmp without $TMPDIR), its
 * path into @dir of @len bytes, locked as this process's own until tmpdir_remove() or its
 * end. Folders of dead memgates there are removed first (tmpdir_sweep()). Returns 0, or
 * -errno with @dir empty.
 */
int tmpdir_make(char *dir, size_t len, const char *what);

/** tmpdir_base() - where tmpdir_make() makes its folders: $TMPDIR, or /tmp without it. */
const char *tmpdir_base(void);

/**
 * tmpdir_remove() - @dir and everything below it, links removed and never followed, no other
 * file system entered; then its lock is let go. Errors ignored.
 */
void tmpdir_remove(const char *dir);

/**
 * tmpdir_sweep() - remove the folders tmpdir_make() made in @base whose process is gone: a
 * memgate-* folder of this user's, not a link, whose .owner nobody holds locked. A folder
 * without .owner (another program's, an older memgate's) is left alone. Returns how many
 * were removed.
 */
int tmpdir_sweep(const char *base);

#endif
