/* SPDX-License-Identifier: GPL-2.0-or-later */
/* file.h - the one way memgate writes a file (reports, calibrations, host records, its pool
 * records): safely, as root on shared CI hosts: never through a planted link, never
 * half-written, devices and pipes written in place. */
#ifndef MG_UTIL_FILE_H
#define MG_UTIL_FILE_H

#include <stdio.h>

#include "util/err.h"

struct file_out {
	char path[4096]; /* the target as named */
	char tmp[4096];	 /* the private temporary beside it; "" when written in place */
	FILE *f;	 /* where the writer writes */
	int failed;	 /* the writer says it failed: commit puts nothing in place */
};

/**
 * file_path_check() - can @path (for option @what, "--junit") be written at the end of a
 * run? Its folder exists and is writable; it is not a folder, a symlink to a regular file,
 * or a read-only file; a character device or a FIFO named as itself is fine (written in
 * place), one behind a link is a link. Returns 0
 * or -errno with @err saying which, so that a long run does not end in "cannot write".
 */
int file_path_check(const char *path, const char *what, struct mg_err *err);

/**
 * file_out_open() - open @path for one report: a character device or FIFO named as itself
 * (/dev/null; a FIFO nothing reads is ENXIO, not a hang), or /dev/stdout, in place; anything else
 * through a new temporary file beside it (mkstemp: O_EXCL, so a link planted there is never
 * followed), renamed over @path by file_out_commit(). Returns 0 or -errno with @err; on failure
 * nothing is left behind.
 */
int file_out_open(struct file_out *rf, const char *path, struct mg_err *err);

/**
 * file_out_create() - file_out_open() of a file memgate names itself (a chart, a CSV of
 * --csv DIR): always a new temporary renamed over @path, whatever was planted there.
 */
int file_out_create(struct file_out *rf, const char *path, struct mg_err *err);

/**
 * file_out_commit() - flush and close, checking every write (a full disk, /dev/full),
 * then put the temporary in place (not when the writer set ->failed). Returns 0 or -errno with
 * @err; on failure the target is as it was and the temporary gone.
 */
int file_out_commit(struct file_out *rf, struct mg_err *err);

/** file_out_abort() - close @rf and remove its temporary: the target stays as it was. */
void file_out_abort(struct file_out *rf);

/** file_paths_distinct() - @a and @b (either may be NULL) are not one file to rename over. */
int file_paths_distinct(const char *a, const char *b);

#endif
