/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tmpdir.c - a run's own folder under $TMPDIR, locked while its process lives, and its removal
 * with everything in it (see tmpdir.h). */
#include "util/tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The lock that says a folder's process lives, and its name while it is being made: a sweep
 * opens only the first, which is locked from the moment it has that name. */
#define OWNER ".owner"
#define OWNER_NEW ".owner.new"
/* Folders one process has at once (ab's, a vm's, a simulated run's). */
#define MAX_OWNED 8
/* Deeper than any package's tree: a kernel's modules are 6 levels down. */
#define MAX_DEPTH 64

static struct owned {
	char dir[PATH_MAX];
	int fd;
} owned[MAX_OWNED];

const char *tmpdir_base(void)
{
	const char *tmp = getenv("TMPDIR");

	return tmp && *tmp ? tmp : "/tmp";
}

/* @name in the folder @parent and what is below it, on the file system @dev only. */
static void remove_at(int parent, const char *name, dev_t dev, int depth)
{
	struct stat st;
	int fd;
	DIR *d;
	struct dirent *e;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW))
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlinkat(parent, name, 0);
		return;
	}
	if (st.st_dev != dev || depth > MAX_DEPTH)
		return;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	/* A package may hold folders without write permission: this folder is ours. */
	if (!(st.st_mode & S_IWUSR))
		fchmod(fd, st.st_mode | S_IRWXU);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			remove_at(dirfd(d), e->d_name, dev, depth + 1);
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

static void remove_tree(const char *dir)
{
	struct stat st;

	if (!lstat(dir, &st) && S_ISDIR(st.st_mode))
		remove_at(AT_FDCWD, dir, st.st_dev, 0);
}

/* Is the folder @name of @base (an open folder) a dead memgate's? Its .owner is locked now
 * (and kept so: the folder goes before the lock) when it is; @fd then holds the lock. */
static int dead_owner(int base, const char *name, uid_t uid, int *fd)
{
	struct stat st;
	char owner[NAME_MAX + 16];

	*fd = -1;
	if (strncmp(name, "memgate-", 8) || fstatat(base, name, &st, AT_SYMLINK_NOFOLLOW) ||
	    !S_ISDIR(st.st_mode) || st.st_uid != uid)
		return 0;
	snprintf(owner, sizeof(owner), "%s/" OWNER, name);
	*fd = openat(base, owner, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0)
		return 0;
	if (fstat(*fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != uid ||
	    flock(*fd, LOCK_EX | LOCK_NB)) {
		close(*fd);
		*fd = -1;
		return 0;
	}
	return 1;
}

int tmpdir_sweep(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	uid_t uid = geteuid();
	int removed = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[PATH_MAX];
		int fd;

		if (!dead_owner(dirfd(d), e->d_name, uid, &fd))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", base, e->d_name) < (int)sizeof(path)) {
			remove_tree(path);
			removed++;
		}
		close(fd);
	}
	closedir(d);
	return removed;
}

/* @dir's lock, made under another name and renamed in place once held. */
static int lock_new(const char *dir)
{
	char fresh[PATH_MAX + 16], owner[PATH_MAX + 16];
	struct owned *o = NULL;
	int fd;

	for (size_t i = 0; i < MAX_OWNED && !o; i++)
		if (!owned[i].dir[0])
			o = &owned[i];
	if (!o)
		return -EMFILE;
	snprintf(fresh, sizeof(fresh), "%s/" OWNER_NEW, dir);
	snprintf(owner, sizeof(owner), "%s/" OWNER, dir);
	fd = open(fresh, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) || rename(fresh, owner)) {
		int e = errno;

		close(fd);
		unlink(fresh);
		return -e;
	}
	dprintf(fd, "%ld\n", (long)getpid());
	snprintf(o->dir, sizeof(o->dir), "%s", dir);
	o->fd = fd;
	return 0;
}

int tmpdir_make(char *dir, size_t len, const char *what)
{
	int n = snprintf(dir, len, "%s/memgate-%s.XXXXXX", tmpdir_base(), what), ret;

	if (n < 0 || (size_t)n >= len || n >= PATH_MAX) {
		if (len)
			dir[0] = '\0';
		return -ENAMETOOLONG;
	}
	tmpdir_sweep(tmpdir_base());
	if (!mkdtemp(dir)) {
		int e = errno;

		dir[0] = '\0';
		return -e;
	}
	if ((ret = lock_new(dir))) {
		remove_tree(dir);
		dir[0] = '\0';
	}
	return ret;
}

void tmpdir_remove(const char *dir)
{
	remove_tree(dir);
	for (size_t i = 0; i < MAX_OWNED; i++)
		if (owned[i].dir[0] && !strcmp(owned[i].dir, dir)) {
			close(owned[i].fd);
			owned[i].dir[0] = '\0';
		}
}
