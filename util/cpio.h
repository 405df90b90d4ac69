/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpio.h - a cpio archive in the kernel's initramfs format (newc), written file by file: the
 * Linux kernel unpacks archives appended to an initramfs in turn, later files over earlier. */
#ifndef MG_UTIL_CPIO_H
#define MG_UTIL_CPIO_H

#include <stddef.h>
#include <stdio.h>

#include "util/err.h"

struct cpio {
	FILE *f;
	const char *path;
	unsigned int ino;
};

/** cpio_open() - start an archive at @path (created or truncated). 0 or -errno with @err. */
int cpio_open(struct cpio *c, const char *path, struct mg_err *err);

/** cpio_dir() - a directory @name (no leading slash: "kvm"), mode 0755. 0 or -errno. */
int cpio_dir(struct cpio *c, const char *name, struct mg_err *err);

/** cpio_data() - a regular file @name of @len bytes @data, mode 0644. 0 or -errno. */
int cpio_data(struct cpio *c, const char *name, const void *data, size_t len, struct mg_err *err);

/** cpio_close() - the trailer, and the file closed. 0 or -errno with @err (the file removed). */
int cpio_close(struct cpio *c, struct mg_err *err);

/** cpio_discard() - an archive left unfinished: the file closed and removed. */
void cpio_discard(struct cpio *c);

#endif
