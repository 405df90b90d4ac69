/* SPDX-License-Identifier: GPL-2.0-or-later */
/* text.c - XML-safe copies of arbitrary bytes, small file readers, glob matching. */
#include "util/text.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <libxml/xmlstring.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"

/* XML 1.0 section 2.2, production [2] Char. */
static int xml_char_ok(int c)
{
	return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
	       (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
}

/* libxml2 decodes overlong forms ("\xC0\xAF" as '/'); UTF-8 forbids them. */
static int overlong(int c, int n)
{
	return (n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000);
}

static char *clean(const char *s, size_t len, int xml)
{
	/* Each input byte yields at most the 3 bytes of U+FFFD. */
	char *out = malloc(len * 3 + 1);
	size_t i = 0, o = 0;

	if (!out)
		return NULL;
	while (i < len) {
		int n = (int)(len - i > 4 ? 4 : len - i);
		/* libxml2 decodes one character and rejects overlong and truncated forms. */
		int c = xmlGetUTF8Char((const xmlChar *)s + i, &n);

		if (c < 0 || n <= 0 || (xml && !xml_char_ok(c)) || (c >= 0xD800 && c <= 0xDFFF) ||
		    c > 0x10FFFF || overlong(c, n)) {
			memcpy(out + o, "\xEF\xBF\xBD", 3);
			o += 3;
			i += (c < 0 || n <= 0 || overlong(c, n)) ? 1 : (size_t)n;
			continue;
		}
		memcpy(out + o, s + i, (size_t)n);
		o += (size_t)n;
		i += (size_t)n;
	}
	out[o] = '\0';
	return out;
}

/* Read @fd into @buf until its end or @max bytes: how many, or -errno. */
static ssize_t read_up_to(int fd, char *buf, size_t max)
{
	size_t used = 0;

	while (used < max) {
		ssize_t r = read(fd, buf + used, max - used);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		used += (size_t)r;
	}
	return (ssize_t)used;
}

char *text_read_file(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	ssize_t used;

	if (fd < 0)
		return NULL;
	buf = malloc(max + 1);
	if (!buf) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	used = read_up_to(fd, buf, max);
	close(fd);
	if (used < 0) {
		free(buf);
		errno = (int)-used;
		return NULL;
	}
	buf[used] = '\0';
	return buf;
}

char *text_xml_clean(const char *s, size_t len)
{
	return clean(s, len, 1);
}

char *text_utf8_clean(const char *s, size_t len)
{
	return clean(s, len, 0);
}

int text_read_u64(const char *path, uint64_t *out)
{
	char *buf = text_read_file(path, 64);
	char *end;
	int ret = 0;

	if (!buf)
		return -errno;
	errno = 0;
	*out = strtoull(buf, &end, 10);
	if (end == buf || errno)
		ret = -EINVAL;
	free(buf);
	return ret;
}

int text_meminfo_kib(const char *text, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (p && *p) {
		/* A line is "Key:   value [kB]"; match the key exactly, colon included. */
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			*out = strtoull(p + klen + 1, NULL, 10);
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

int text_glob(const char *pattern, const char *name)
{
	return fnmatch(pattern, name, 0) == 0;
}

int text_index(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (names[i] && !strcmp(names[i], name))
			return (int)i;
	return -1;
}

int text_utf8_fix(char *buf, size_t size)
{
	size_t len = strlen(buf), n;
	char *u;

	if (!size)
		return 0;
	u = text_utf8_clean(buf, len);
	if (!u)
		return -ENOMEM;
	n = strlen(u);
	if (n >= size) {
		/* Cut at a character boundary: never leave half a sequence behind. */
		n = size - 1;
		while (n > 0 && ((unsigned char)u[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(buf, u, n);
	buf[n] = '\0';
	free(u);
	return 0;
}

char *text_squeeze(char *s, char with)
{
	char *out = s;
	bool blank = false;

	for (const char *p = s; *p; p++) {
		if (isspace((unsigned char)*p)) {
			blank = out != s;
			continue;
		}
		if (blank && with)
			*out++ = with;
		blank = false;
		*out++ = *p;
	}
	*out = '\0';
	return s;
}

int text_size(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'T':
		shift += 10; /* fall through */
	case 'G':
		shift += 10; /* fall through */
	case 'M':
		shift += 10; /* fall through */
	case 'K':
		shift += 10;
		end++;
		break;
	default:
		break;
	}
	if (errno || !isdigit((unsigned char)s[0]) || *end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}

/* What a file of outside input is instead of a regular one, for the message. */
static const char *file_kind(mode_t mode)
{
	return S_ISDIR(mode)	? "a folder"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISCHR(mode)	? "a character device"
	       : S_ISBLK(mode)	? "a block device"
	       : S_ISSOCK(mode) ? "a socket"
				: "not a regular file";
}

/* Is @mode a regular file (or with @folder_ok a folder)? Else -errno with @err naming @shown. */
static int kind_ok(const char *shown, mode_t mode, int folder_ok, struct mg_err *err)
{
	if (S_ISREG(mode) || (folder_ok && S_ISDIR(mode)))
		return 0;
	return mg_err_set(err, S_ISDIR(mode) ? EISDIR : EINVAL, "%s: %s, not a regular file%s",
			  shown, file_kind(mode), folder_ok ? " or a folder" : "");
}

static int input_ok(const char *path, const struct stat *st, size_t max, struct mg_err *err)
{
	int ret = kind_ok(path, st->st_mode, 0, err);

	if (ret)
		return ret;
	if ((uint64_t)st->st_size > max)
		return mg_err_set(err, EFBIG, "%s: %lld bytes, more than such a file holds (%zu)",
				  path, (long long)st->st_size, max);
	return 0;
}

int text_input_check(const char *path, size_t max, struct mg_err *err)
{
	struct stat st;

	if (stat(path, &st))
		return mg_err_set(err, errno, "%s: %s", path, strerror(errno));
	return input_ok(path, &st, max, err);
}

int text_input_open(const char *path, const char *shown, int folder_ok, struct mg_err *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), ret;
	struct stat st;

	if (fd < 0)
		return mg_err_set(err, errno, "%s: %s", shown, strerror(errno));
	if (fstat(fd, &st))
		ret = mg_err_set(err, errno, "%s: %s", shown, strerror(errno));
	else
		ret = kind_ok(shown, st.st_mode, folder_ok, err);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

char *text_read_opened(int fd, const char *shown, size_t max, size_t *len, struct mg_err *err)
{
	struct stat st;
	char *buf = NULL;
	ssize_t used;

	if (fstat(fd, &st)) {
		mg_err_set(err, errno, "%s: %s", shown, strerror(errno));
		goto out;
	}
	if (input_ok(shown, &st, max, err))
		goto out;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		mg_err_set(err, ENOMEM, "%s: out of memory", shown);
		goto out;
	}
	/* A file that grows while it is read is taken as it was when opened. */
	used = read_up_to(fd, buf, (size_t)st.st_size);
	if (used < 0) {
		mg_err_set(err, (int)-used, "%s: %s", shown, strerror((int)-used));
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[used] = '\0';
	if (len)
		*len = (size_t)used;
out:
	close(fd);
	return buf;
}

char *text_read_input(const char *path, size_t max, size_t *len, struct mg_err *err)
{
	int fd = text_input_open(path, path, 0, err);

	return fd < 0 ? NULL : text_read_opened(fd, path, max, len, err);
}
