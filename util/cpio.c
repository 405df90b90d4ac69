/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpio.c - newc archives (see cpio.h): the format of the kernel's
 * Documentation/driver-api/early-userspace/buffer-format.rst. */
#include "util/cpio.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One member: its 110-byte header, its name and NUL padded to 4, its data padded to 4. */
static int member(struct cpio *c, const char *name, unsigned int mode, const void *data, size_t len,
		  struct mg_err *err)
{
	static const char zeros[4];
	size_t name_len = strlen(name) + 1;

	if (len > 0xffffffffu)
		return mg_err_set(err, EFBIG, "%s: %s is too large for a cpio member", c->path,
				  name);
	fprintf(c->f, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08zX%08X",
		strcmp(name, "TRAILER!!!") ? ++c->ino : 0, mode, 0u, 0u, S_ISDIR(mode) ? 2u : 1u,
		0u, (unsigned int)len, 0u, 0u, 0u, 0u, name_len, 0u);
	fwrite(name, 1, name_len, c->f);
	fwrite(zeros, 1, (4 - (110 + name_len) % 4) % 4, c->f);
	if (len)
		fwrite(data, 1, len, c->f);
	fwrite(zeros, 1, (4 - len % 4) % 4, c->f);
	if (ferror(c->f))
		return mg_err_set(err, EIO, "%s: writing %s failed", c->path, name);
	return 0;
}

int cpio_open(struct cpio *c, const char *path, struct mg_err *err)
{
	c->path = path;
	c->ino = 0;
	c->f = fopen(path, "we");
	if (!c->f)
		return mg_err_set(err, errno, "%s: %s", path, strerror(errno));
	return 0;
}

int cpio_dir(struct cpio *c, const char *name, struct mg_err *err)
{
	return member(c, name, S_IFDIR | 0755, NULL, 0, err);
}

int cpio_data(struct cpio *c, const char *name, const void *data, size_t len, struct mg_err *err)
{
	return member(c, name, S_IFREG | 0644, data, len, err);
}

int cpio_close(struct cpio *c, struct mg_err *err)
{
	int ret = member(c, "TRAILER!!!", 0, NULL, 0, err);

	if (fclose(c->f) && !ret)
		ret = mg_err_set(err, errno, "%s: %s", c->path, strerror(errno));
	c->f = NULL;
	if (ret)
		unlink(c->path);
	return ret;
}

void cpio_discard(struct cpio *c)
{
	fclose(c->f);
	c->f = NULL;
	unlink(c->path);
}
