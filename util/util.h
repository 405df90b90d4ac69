/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util.h - the few helpers every layer wants: array length, a clock, qsort's compare, a hash. */
#ifndef MG_UTIL_UTIL_H
#define MG_UTIL_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Elements of an array (not a pointer: the compiler then says so through the division). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Header-only on purpose: impl/rcu.c is also compiled alone under ThreadSanitizer, and a
 * clock read is too small to be worth a call.
 */

/** util_clock_ns() - clock @id (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...) in ns. */
static inline int64_t util_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/** util_now_ns() - CLOCK_MONOTONIC in nanoseconds: what every wall time here is read from. */
static inline int64_t util_now_ns(void)
{
	return util_clock_ns(CLOCK_MONOTONIC);
}

/*
 * util_make_dir() - folder @path, made with @mode when missing. Returns 0 with what lstat()
 * says of it in @st, -ENOTDIR when it is a link or not a folder (what memgate writes into
 * must not lead elsewhere), or -errno.
 */
static inline int util_make_dir(const char *path, mode_t mode, struct stat *st)
{
	*st = (struct stat){0};
	if (mkdir(path, mode) && errno != EEXIST)
		return errno ? -errno : -EIO;
	if (lstat(path, st))
		return errno ? -errno : -EIO;
	return S_ISDIR(st->st_mode) ? 0 : -ENOTDIR;
}

/** util_make_dir_error() - what util_make_dir()'s -errno @ret means, for a person. */
static inline const char *util_make_dir_error(int ret)
{
	return ret == -ENOTDIR ? "not a folder (a link, or a file)" : strerror(-ret);
}

/** util_cmp_double() - qsort() order of doubles, ascending (NaNs compare equal to all). */
static inline int util_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/**
 * util_fnv1a64() - FNV-1a, 64 bits, of the string @s continuing from @h (start with
 * UTIL_FNV1A64_INIT): stable across hosts and runs, for file names and per-name seeds.
 */
#define UTIL_FNV1A64_INIT 0xcbf29ce484222325ULL
static inline uint64_t util_fnv1a64(uint64_t h, const char *s)
{
	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#endif
