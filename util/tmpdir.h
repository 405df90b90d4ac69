/* tmpdir.h - a run's own folder under $TMPDIR (else /tmp), and its removal with its files. */
#ifndef MG_UTIL_TMPDIR_H
#define MG_UTIL_TMPDIR_H

#include <stddef.h>

/**
 * tmpdir_make() - a new folder "$TMPDIR/memgate-@what.XXXXXX" (/tmp without $TMPDIR), its
 * path into @dir of @len bytes. Returns 0, or -errno with @dir empty.
 */
int tmpdir_make(char *dir, size_t len, const char *what);

/** tmpdir_base() - where tmpdir_make() makes its folders: $TMPDIR, or /tmp without it. */
const char *tmpdir_base(void);

/** tmpdir_remove() - the files in @dir (not folders below it), then @dir; errors ignored. */
void tmpdir_remove(const char *dir);

#endif
