/* SPDX-License-Identifier: GPL-2.0-or-later */
/* file.c - a file memgate writes: checked before the run, written to a private temporary beside
 * it, synced and renamed over it. */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest report path: its folder and a temporary name beside it fit the buffers. */
#define FILE_PATH_MAX 2000

/* The folder of @path into @buf ("." for a bare name). */
static char *folder_of(const char *path, char *buf, size_t len)
{
	char copy[4096];

	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(buf, len, "%s", dirname(copy));
	return buf;
}

/* This process's own output, named through the links the system keeps for it. */
static bool own_stream(const char *path)
{
	return !strcmp(path, "/dev/stdout") || !strcmp(path, "/dev/stderr") ||
	       !strncmp(path, "/dev/fd/", 8) || !strncmp(path, "/proc/self/fd/", 14);
}

/*
 * Written in place: a character device or a FIFO named as itself (/dev/null, a named pipe),
 * or this process's own output (/dev/stdout). Through any other link, never: a link planted
 * in a report's place must not make root write into a device or a pipe.
 */
static bool in_place(const char *path)
{
	struct stat st;

	if (own_stream(path))
		return !stat(path, &st) && !S_ISDIR(st.st_mode);
	return !lstat(path, &st) && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

int file_path_check(const char *path, const char *what, struct mg_err *err)
{
	struct stat st, lst;
	char dir[4096];

	if (!path || !*path)
		return mg_err_set(err, EINVAL, "%s: an empty path", what);
	if (strlen(path) >= FILE_PATH_MAX)
		return mg_err_set(err, ENAMETOOLONG, "%s %s: the path is too long", what, path);
	if (in_place(path))
		return 0;
	if (lstat(path, &lst) == 0) {
		if (S_ISLNK(lst.st_mode))
			return mg_err_set(err, ELOOP,
					  "%s %s: a symbolic link; name the file it points "
					  "to (memgate replaces report files, never writes through "
					  "links)",
					  what, path);
		if (S_ISDIR(lst.st_mode))
			return mg_err_set(err, EISDIR, "%s %s: a folder, not a file", what, path);
		if (!S_ISREG(lst.st_mode))
			return mg_err_set(err, EINVAL, "%s %s: not a regular file", what, path);
		/* Mode bits, not access(): root may write anything, and still means no. */
		if (!(lst.st_mode & 0222))
			return mg_err_set(err, EACCES,
					  "%s %s: not writable (read-only file): "
					  "refusing to replace it",
					  what, path);
	}
	folder_of(path, dir, sizeof(dir));
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return mg_err_set(err, ENOENT, "%s %s: the folder %s does not exist", what, path,
				  dir);
	if (access(dir, W_OK | X_OK))
		return mg_err_set(err, EACCES, "%s %s: cannot write in %s: %s", what, path, dir,
				  strerror(errno));
	return 0;
}

/*
 * A FIFO without a reader would block the open, and the run with it, after the results: open
 * it without waiting (ENXIO then), and write to it as to any file.
 */
static FILE *open_in_place(const char *path)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC), flags;
	FILE *f;

	if (fd < 0)
		return NULL;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 || !(f = fdopen(fd, "w"))) {
		int e = errno;

		close(fd);
		errno = e;
		return NULL;
	}
	return f;
}

static int file_open(struct file_out *rf, const char *path, bool own_name, struct mg_err *err)
{
	char dir[2048], base[1024], copy[4096];
	mode_t mask;
	int fd;

	memset(rf, 0, sizeof(*rf));
	if (strlen(path) >= FILE_PATH_MAX)
		return mg_err_set(err, ENAMETOOLONG, "%s: the path is too long", path);
	snprintf(rf->path, sizeof(rf->path), "%s", path);
	if (!own_name && in_place(path)) {
		rf->f = open_in_place(path);
		if (!rf->f)
			return mg_err_set(err, errno, "%s: %s", path,
					  errno == ENXIO ? "a FIFO that nothing reads"
							 : strerror(errno));
		return 0;
	}
	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(base, sizeof(base), "%s", basename(copy));
	folder_of(path, dir, sizeof(dir));
	snprintf(rf->tmp, sizeof(rf->tmp), "%s/.%.200s.XXXXXX", dir, base);
	fd = mkstemp(rf->tmp);
	if (fd < 0) {
		int e = errno;

		rf->tmp[0] = '\0';
		return mg_err_set(err, e, "%s: cannot make a temporary file beside it: %s", path,
				  strerror(e));
	}
	/* mkstemp makes it 0600; a report is as readable as any file the user makes. */
	mask = umask(0);
	umask(mask);
	fchmod(fd, 0666 & ~mask);
	rf->f = fdopen(fd, "w");
	if (!rf->f) {
		int e = errno;

		close(fd);
		unlink(rf->tmp);
		return mg_err_set(err, e, "%s: %s", path, strerror(e));
	}
	return 0;
}

int file_out_open(struct file_out *rf, const char *path, struct mg_err *err)
{
	return file_open(rf, path, false, err);
}

int file_out_create(struct file_out *rf, const char *path, struct mg_err *err)
{
	return file_open(rf, path, true, err);
}

int file_out_commit(struct file_out *rf, struct mg_err *err)
{
	int bad = ferror(rf->f) || rf->failed, e = 0;

	if (fflush(rf->f) || bad)
		e = errno ? errno : EIO;
	/* On the disk before the rename: after a crash the old file or the new, never nothing. */
	if (!e && rf->tmp[0] && fsync(fileno(rf->f)))
		e = errno;
	if (fclose(rf->f) && !e)
		e = errno ? errno : EIO;
	rf->f = NULL;
	if (!e && rf->tmp[0] && rename(rf->tmp, rf->path))
		e = errno;
	if (e && rf->tmp[0])
		unlink(rf->tmp);
	if (e)
		return mg_err_set(err, e, "%s: cannot write the file: %s", rf->path, strerror(e));
	return 0;
}

void file_out_abort(struct file_out *rf)
{
	fclose(rf->f);
	rf->f = NULL;
	if (rf->tmp[0])
		unlink(rf->tmp);
}

int file_paths_distinct(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX], da[4096], db[4096], ca[4096], cb[4096];

	/* Two reports into /dev/null or one pipe are written in turn, not renamed: fine. */
	if (!a || !b || in_place(a))
		return 1;
	/* Compare the resolved folders and the names: the files need not exist yet. */
	if (!realpath(folder_of(a, da, sizeof(da)), ra) ||
	    !realpath(folder_of(b, db, sizeof(db)), rb))
		return strcmp(a, b) != 0;
	snprintf(ca, sizeof(ca), "%s", a);
	snprintf(cb, sizeof(cb), "%s", b);
	return strcmp(ra, rb) || strcmp(basename(ca), basename(cb));
}
