/* tmpdir.c - a run's own folder under $TMPDIR, and its removal with its files. */
#include "util/tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const char *tmpdir_base(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp && *tmp ? tmp : "/tmp";
}

int tmpdir_make(char *dir, size_t len, const char *what)
{
	int n = snprintf(dir, len, "%s/memgate-%s.XXXXXX", tmpdir_base(), what);

	if (n < 0 || (size_t)n >= len) {
		if (len)
			dir[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (!mkdtemp(dir)) {
		int e = errno;

		dir[0] = '\0';
		return -e;
	}
	return 0;
}

void tmpdir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[PATH_MAX];

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}
