/* SPDX-License-Identifier: GPL-2.0-or-later */
/* expect.h - what the test_cli*.c programs share: build/memgate run as a user runs it, its exit
 * status and output checked, its reports validated, scratch folders of a test's own. Static
 * inline, as testutil.h, whose per-program scratch folder they use. */
#ifndef MG_TESTS_EXPECT_H
#define MG_TESTS_EXPECT_H

#include "tests/testutil.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <stdbool.h>
#include <jansson.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hw/reserve.h"
#include "util/text.h"
#include "util/util.h"

/* Run `build/memgate ARGS`, stdout and stderr together; returns the exit status. */
static inline int memgate(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static inline int memgate(char **out, const char *fmt, ...)
{
	char args[2048], cmd[2400], *buf = NULL;
	size_t len = 0, cap = 0;
	va_list ap;
	FILE *p;
	int status;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	/* $MG_TMP and $MG_BUILD in @args: the shell finds this program's own folder and the
	 * build there. */
	setenv("MG_TMP", test_tmp_dir(), 1);
	setenv("MG_BUILD", test_build_dir(), 1);
	snprintf(cmd, sizeof(cmd), "%s/memgate %s 2>&1", test_build_dir(), args);
	p = popen(cmd, "r");
	assert_non_null(p);
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			char *grown = realloc(buf, cap);

			if (!grown)
				free(buf);
			assert_non_null(grown);
			buf = grown;
		}
		size_t r = fread(buf + len, 1, 4096, p);

		if (r == 0)
			break;
		len += r;
	}
	buf[len] = '\0';
	status = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Any exit status below 2: a verdict, whichever it was (expect_judged()). */
#define A_VERDICT (-1)

/*
 * Did `memgate @args` (@where: how it ran) exit @want_status with @want_text (NULL: anything)
 * in its output @out? If not, say what it gave; @out is freed, then the test fails.
 */
static inline void check_output(const char *args, const char *where, int st, int want_status,
				const char *want_text, char *out)
{
	char want[16];
	bool ok = (want_status == A_VERDICT ? st == 0 || st == 1 : st == want_status) && out &&
		  (!want_text || strstr(out, want_text));

	if (want_status == A_VERDICT)
		snprintf(want, sizeof(want), "0 or 1");
	else
		snprintf(want, sizeof(want), "%d", want_status);
	/* Say it, free the output, then fail: fail() does not return. */
	if (!ok)
		print_error("memgate %s%s: exit %d (want %s), output:\n%s\n(wanted: %s)\n", args,
			    where, st, want, out ? out : "", want_text ? want_text : "-");
	free(out);
	if (!ok)
		fail();
}

/*
 * `memgate @args...` (NULL-terminated) started and left running: its stdout to @out_fd (-1:
 * /dev/null), its stderr to /dev/null, @close_fd (-1: none) closed in it. Returns its pid.
 */
static inline pid_t memgate_start(int out_fd, int close_fd, const char *const *args)
{
	char bin[1024];
	const char *argv[32] = {bin};
	size_t n = 1;
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/memgate", test_build_dir());
	while (*args && n + 1 < ARRAY_SIZE(argv))
		argv[n++] = *args++;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (close_fd >= 0)
			close(close_fd);
		dup2(out_fd >= 0 ? out_fd : null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static inline void expect(int want_status, const char *want_text, const char *args)
{
	char *out;
	int st = memgate(&out, "%s", args);

	check_output(args, "", st, want_status, want_text, out);
}

/*
 * An A/A of real timings as a test of what the verdict says, not of what it decided: it is
 * wrong at its alpha by design (a few percent of runs here), so its exit status may be 0 or 1
 * (never 2 or more), and @want_text must be in its output.
 */
static inline void expect_judged(const char *want_text, const char *args)
{
	expect(A_VERDICT, want_text, args);
}

/* One command line and what it must give: its exit status and a piece of its output. */
struct expectation {
	int status;
	const char *text; /* NULL: any output */
	const char *args; /* for the shell: $MG_BUILD is the build folder, $MG_TMP this program's */
};

static inline void expect_all(const struct expectation *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect(e[i].status, e[i].text, e[i].args);
}

static inline void validate(const char *xml, const char *schema)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "xmllint --noout --schema %s/%s %s", test_schema_dir(), schema,
		 xml);
	assert_int_equal(system(cmd), 0);
}

/* A test's own folder in the test program's temporary one, and the files its runs write. */
struct scratch {
	char dir[128], a[192], b[192], hist[192];
};

static inline void scratch_make(struct scratch *s, const char *what)
{
	assert_non_null(mkdtemp(test_tmp_template(s->dir, sizeof(s->dir), what)));
	snprintf(s->a, sizeof(s->a), "%s/a.json", s->dir);
	snprintf(s->b, sizeof(s->b), "%s/b.json", s->dir);
	snprintf(s->hist, sizeof(s->hist), "%s/hist", s->dir);
}

/* Read the file @path whole (NULL when it cannot be read); free it. */
static inline char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

#endif
