/* SPDX-License-Identifier: GPL-2.0-or-later */
/* text.h - small text helpers: XML-safe copies, file reads, glob matching. */
#ifndef MG_UTIL_TEXT_H
#define MG_UTIL_TEXT_H

#include <stddef.h>
#include <stdint.h>

/**
 * text_xml_clean() - copy @len bytes of @s into a new NUL-terminated string that is valid
 * XML 1.0 character data: invalid UTF-8 and characters XML forbids (controls other than
 * tab, newline and carriage return, surrogates, U+FFFE/U+FFFF) become U+FFFD.
 * Returns the copy (free it), or NULL when out of memory.
 */
char *text_xml_clean(const char *s, size_t len);

/**
 * text_utf8_clean() - the same for UTF-8 alone: invalid sequences become U+FFFD, every valid
 * character (controls included) stays. Returns the copy (free it), or NULL.
 */
char *text_utf8_clean(const char *s, size_t len);

/**
 * text_utf8_fix() - make the NUL-terminated @buf (of @size bytes) valid UTF-8 in place: invalid
 * sequences become U+FFFD, cut at a character boundary to fit. For names that come from
 * outside (a topology path, a host name) and must reach JSON. Returns 0 or -ENOMEM.
 */
int text_utf8_fix(char *buf, size_t size);

/**
 * text_squeeze() - in place: leading and trailing blanks removed, each inner run of blanks
 * made one @with, or removed when @with is NUL (a CPUID brand string pads with spaces).
 * Returns @s.
 */
char *text_squeeze(char *s, char with);

/**
 * text_read_file() - read at most @max bytes of @path into a new NUL-terminated buffer.
 * Returns the buffer (free it) or NULL with errno set.
 */
char *text_read_file(const char *path, size_t max);

struct mg_err;

/**
 * text_input_check() - is @path fit to be read as a file of outside input: a regular file
 * (through links: a FIFO would hang its reader, a device never end, a folder is no file) of
 * at most @max bytes? For files a library opens itself (hwloc, libxml2, libcpuid).
 * Returns 0, or -errno with @err naming @path and what it is instead.
 */
int text_input_check(const char *path, size_t max, struct mg_err *err);

/**
 * text_read_input() - read a file of outside input whole, as text_input_check() accepts it:
 * opened without waiting on it (a FIFO is refused, not read) and checked on what was opened.
 * Returns the NUL-terminated contents (free them) with their length in @len (may be NULL),
 * or NULL with @err set (@err->code ENOENT when there is no such file).
 */
char *text_read_input(const char *path, size_t max, size_t *len, struct mg_err *err);

/**
 * text_input_open() - open @path (named @shown in messages: the user's words for it) as outside
 * input: a regular file, or with @folder_ok a folder, opened without waiting on it (a FIFO is
 * refused, never read: it would hang its reader) and checked on what was opened. Returns the
 * descriptor (O_CLOEXEC; close it), or -errno with @err naming @shown and what it is instead.
 */
int text_input_open(const char *path, const char *shown, int folder_ok, struct mg_err *err);

/**
 * text_read_opened() - read whole what text_input_open() opened (@fd, named @shown in
 * messages), at most @max bytes (a larger file is refused), and close @fd. Returns the
 * NUL-terminated contents (free them) with their length in @len (may be NULL), or NULL with
 * @err set.
 */
char *text_read_opened(int fd, const char *shown, size_t max, size_t *len, struct mg_err *err);

/**
 * text_read_u64() - read one unsigned decimal number from a sysfs/procfs file.
 * Returns 0 and fills @out, or -errno (-EINVAL when the file holds no number).
 */
int text_read_u64(const char *path, uint64_t *out);

/**
 * text_meminfo_kib() - the value of @key ("MemTotal", "HugePages_Free", ...) in a
 * /proc/meminfo-style @text. Returns 0 and fills @out, or -ENOENT when the key is absent.
 */
int text_meminfo_kib(const char *text, const char *key, uint64_t *out);

/**
 * text_index() - the index of @name among the @n @names (a NULL entry matches nothing), or -1
 * when it is none of them (NULL @name included). For parsing enum names.
 */
int text_index(const char *const *names, size_t n, const char *name);

/** text_glob() - does @name match the shell pattern @pattern (fnmatch, no flags)? */
int text_glob(const char *pattern, const char *name);

/**
 * text_size() - @s as bytes: a whole number with an optional K, M, G or T (powers of 1024).
 * Returns 0, or -EINVAL when it is not one or does not fit 64 bits.
 */
int text_size(const char *s, uint64_t *bytes);

#endif
