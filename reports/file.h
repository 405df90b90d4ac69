/* file.h - report files written safely, as root on shared CI hosts: never through a planted
 * link, never half-written, devices and pipes written in place. */
#ifndef MG_REPORTS_FILE_H
#define MG_REPORTS_FILE_H

#include <jansson.h>
#include <libxml/tree.h>
#include <stdio.h>

#include "util/err.h"

struct report_file {
	char path[4096]; /* the target as named */
	char tmp[4096];	 /* the private temporary beside it; "" when written in place */
	FILE *f;	 /* where the writer writes */
	int failed;	 /* the writer says it failed: commit puts nothing in place */
};

/**
 * report_path_check() - can @path (for option @what, "--junit") be written at the end of a
 * run? Its folder exists and is writable; it is not a folder, a symlink to a regular file,
 * or a read-only file; a character device or a FIFO named as itself is fine (written in
 * place), one behind a link is a link. Returns 0
 * or -errno with @err saying which, so that a long run does not end in "cannot write".
 */
int report_path_check(const char *path, const char *what, struct mg_err *err);

/**
 * report_file_open() - open @path for one report: a character device or FIFO named as itself
 * (/dev/null; a FIFO nothing reads is ENXIO, not a hang), or /dev/stdout, in place; anything else
 * through a new temporary file beside it (mkstemp: O_EXCL, so a link planted there is never
 * followed), renamed over @path by report_file_commit(). Returns 0 or -errno with @err; on failure
 * nothing is left behind.
 */
int report_file_open(struct report_file *rf, const char *path, struct mg_err *err);

/**
 * report_file_create() - report_file_open() of a file memgate names itself (a chart, a CSV of
 * --csv DIR): always a new temporary renamed over @path, whatever was planted there.
 */
int report_file_create(struct report_file *rf, const char *path, struct mg_err *err);

/**
 * report_file_commit() - flush and close, checking every write (a full disk, /dev/full),
 * then put the temporary in place (not when the writer set ->failed). Returns 0 or -errno with
 * @err; on failure the target is as it was and the temporary gone.
 */
int report_file_commit(struct report_file *rf, struct mg_err *err);

/** report_write_json() - @doc as the report @path (indented, keys sorted), opened and committed. */
int report_write_json(const char *path, const json_t *doc, struct mg_err *err);

/** report_write_xml() - @doc as the report @path (formatted), opened and committed. */
int report_write_xml(const char *path, xmlDocPtr doc, struct mg_err *err);

/** report_paths_distinct() - @a and @b (either may be NULL) are not one file to rename over. */
int report_paths_distinct(const char *a, const char *b);

#endif
