/* SPDX-License-Identifier: GPL-2.0-or-later */
/* baseline.c - `memgate baseline add` from start to end: a results file filed in a history. */
#include "session/compare.h"
#include "session/internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/file.h"
#include "util/text.h"
#include "util/util.h"

/* A host class hash as memgate writes it: 16 lowercase hex digits, so a path of one folder. */
static bool hash_ok(const char *h)
{
	size_t n = strspn(h, "0123456789abcdef");

	return n == 16 && !h[n];
}

/* @s with anything but [A-Za-z0-9._-] made '_', at most @len - 1 bytes, into @buf. */
static char *file_word(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	for (; s[i] && i + 1 < len; i++)
		buf[i] = isalnum((unsigned char)s[i]) || strchr("._-", s[i]) ? s[i] : '_';
	buf[i] = '\0';
	return buf;
}

int session_history_dir(const char *path)
{
	struct stat st;

	return util_make_dir(path, 0755, &st);
}

/*
 * @text as @dst, whole or not at all: a temporary beside it, then a link to the new name,
 * which fails rather than replace a run already filed. Returns 0 or -errno.
 */
static int file_whole(const char *text, const char *dst, struct mg_err *err)
{
	struct file_out rf;
	int ret = file_out_create(&rf, dst, err);

	if (ret)
		return ret;
	rf.failed = fputs(text, rf.f) == EOF;
	if (fflush(rf.f) || rf.failed || ferror(rf.f)) {
		ret = -(errno ? errno : EIO);
	} else if (link(rf.tmp, dst)) {
		ret = -errno;
	}
	fclose(rf.f);
	unlink(rf.tmp);
	if (ret)
		return mg_err_set(err, -ret, "%s: %s", dst,
				  ret == -EEXIST ? "filed already" : strerror(-ret));
	return 0;
}

int session_baseline_add(const char *results, const char *dir)
{
	struct hist_run r;
	struct mg_err err = {0};
	char sub[1024], dst[1200], stamp[32], commit[48];
	const char *bad;
	char *text = NULL;
	int ret;

	if (hist_load(&r, results, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return EXIT_USAGE;
	}
	/* What names the file comes from the file: nothing in it may lead out of DIR. */
	if (!hash_ok(r.host_hash)) {
		fprintf(stderr, "memgate: %s: host_class.hash \"%.40s\" is not 16 hex digits\n",
			results, r.host_hash);
		ret = EXIT_USAGE;
		goto out;
	}
	file_word(r.timestamp, stamp, sizeof(stamp));
	file_word(r.commit, commit, sizeof(commit));
	snprintf(sub, sizeof(sub), "%s/%s", dir, r.host_hash);
	snprintf(dst, sizeof(dst), "%s/%s-%s.json", sub, stamp, commit);
	bad = (ret = session_history_dir(dir))	 ? dir
	      : (ret = session_history_dir(sub)) ? sub
						 : NULL;
	if (bad) {
		/* Name the folder that failed, the history's or its host class's. */
		fprintf(stderr, "memgate: baseline add: %s: %s\n", bad, util_make_dir_error(ret));
		ret = ret == -ENOTDIR ? EXIT_USAGE : EXIT_HARNESS;
		goto out;
	}
	text = text_read_input(results, HIST_MAX_BYTES, NULL, &err);
	if (!text || file_whole(text, dst, &err)) {
		fprintf(stderr, "memgate: baseline add: %s\n", err.msg);
		/* The same run filed twice is the input's doing; a failed write the harness's. */
		ret = text && err.code == EEXIST ? EXIT_USAGE : EXIT_HARNESS;
		goto out;
	}
	printf("%s\n", dst);
	fprintf(stderr, "memgate: filed %s (host class %s: %s)\n", results, r.host_hash,
		r.host_class);
	ret = EXIT_PASSED;
out:
	free(text);
	hist_release(&r);
	return ret;
}
