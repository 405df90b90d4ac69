/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ab_side.c - a side of `memgate ab`: its command split as a shell would, the memgate among its
 * words found, and each of its `ab-protocol`, `list` and `run` children started, watched to
 * its deadline (or ab's stop signal) and read back. */
#include "judge/ab_side.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include "judge/history.h"
#include "util/json.h"
#include "util/proc.h"
#include "util/text.h"
#include "util/util.h"

/* What a side prints for `list --json` or `ab-protocol`, read back at most. */
#define AB_OUTPUT_MAX (8u << 20)

/* A side's `list` or `ab-protocol` must answer within this, or ab's --timeout when shorter. */
#define AB_QUICK_TIMEOUT_S 60
/* A guest side's vm past its own whole-guest deadline: time to stop the guest and report it. */
#define AB_GUEST_MARGIN_S 10
/* A guest side's options, kernel and modules checked (vm --dry-run): a package unpacks in
 * seconds. */
#define AB_GUEST_CHECK_S 120

static double quick_timeout(const struct ab_opts *o)
{
	return o->timeout_s > 0 && o->timeout_s < AB_QUICK_TIMEOUT_S ? o->timeout_s
								     : AB_QUICK_TIMEOUT_S;
}

/* What wordexp() said, for a person. */
static const char *wordexp_error(int ret)
{
	return ret == WRDE_CMDSUB    ? "a command substitution ($(...) or `...`): not run"
	       : ret == WRDE_BADCHAR ? "an unquoted | & ; < > ( ) { } or newline"
	       : ret == WRDE_SYNTAX  ? "a quote or a brace left open"
	       : ret == WRDE_NOSPACE ? "out of memory"
				     : "a word that cannot be expanded";
}

/* Is argv[@i] of @s a QEMU option: --qemu (@which 0) or --qemu-preload (@which 1), as
 * "--opt VALUE" (@words 2) or "--opt=VALUE" (@words 1)? Its value is returned; NULL when it is
 * not one. */
static const char *qemu_option(const struct ab_side *s, int i, int *words, int *which)
{
	static const char *const opts[] = {"--qemu", "--qemu-preload"};

	if (!s->argv[i])
		return NULL;
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		size_t len = strlen(opts[k]);

		*which = (int)k;
		if (!strcmp(s->argv[i], opts[k]) && i + 1 < s->argc) {
			*words = 2;
			return s->argv[i + 1];
		}
		if (!strncmp(s->argv[i], opts[k], len) && s->argv[i][len] == '=') {
			*words = 1;
			return s->argv[i] + len + 1;
		}
	}
	return NULL;
}

/* @s's words but its QEMU options into @rest (NULL-ended; may be NULL); its --qemu and
 * --qemu-preload values ("" when not given) into @qemu and @preload. Returns how many words
 * are not QEMU options. */
static int split_qemu(const struct ab_side *s, const char **rest, const char **qemu,
		      const char **preload)
{
	int n = 0;

	*qemu = *preload = "";
	for (int i = 0; i < s->argc;) {
		int words = 0, which = 0;
		const char *v = qemu_option(s, i, &words, &which);

		if (v) {
			*(which ? preload : qemu) = v;
			i += words;
		} else {
			if (rest)
				rest[n] = s->argv[i];
			n++;
			i++;
		}
	}
	if (rest)
		rest[n] = NULL;
	return n;
}

void ab_side_qemu(const struct ab_side *s, const char **qemu, const char **preload)
{
	split_qemu(s, NULL, qemu, preload);
}

bool ab_sides_differ_in_qemu_only(const struct ab_side *a, const struct ab_side *b)
{
	const char *ra[AB_MAX_ARGS + 1], *rb[AB_MAX_ARGS + 1], *qa, *qb, *pa, *pb;
	int na = split_qemu(a, ra, &qa, &pa), nb = split_qemu(b, rb, &qb, &pb);

	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (strcmp(ra[i], rb[i]))
			return false;
	return strcmp(qa, qb) || strcmp(pa, pb);
}

int ab_side_parse(struct ab_side *s, const char *role, const char *spec, struct mg_err *err)
{
	wordexp_t we;
	size_t used = 0;
	int ret;

	memset(s, 0, sizeof(*s));
	s->role = role;
	if (strlen(spec) >= sizeof(s->spec))
		return mg_err_set(err, EINVAL, "--%s: longer than %zu bytes", role,
				  sizeof(s->spec) - 1);
	snprintf(s->spec, sizeof(s->spec), "%s", spec);
	/* The words of a POSIX shell: quotes and variables, never a command substitution. */
	ret = wordexp(spec, &we, WRDE_NOCMD);
	if (ret)
		return mg_err_set(err, EINVAL, "--%s %s: %s", role, spec, wordexp_error(ret));
	for (size_t i = 0; i < we.we_wordc && !ret; i++) {
		size_t len = strlen(we.we_wordv[i]) + 1;

		if (s->argc == AB_MAX_ARGS - 1 || used + len > sizeof(s->words)) {
			ret = mg_err_set(err, EINVAL, "--%s: more than %d words or %zu bytes", role,
					 AB_MAX_ARGS - 2, sizeof(s->words));
			break;
		}
		memcpy(s->words + used, we.we_wordv[i], len);
		s->argv[s->argc++] = s->words + used;
		used += len;
	}
	wordfree(&we);
	if (!ret && !s->argc)
		ret =
		    mg_err_set(err, EINVAL, "--%s: expected 'BINARY [OPTIONS]', got nothing", role);
	return ret;
}

/* Start @argv with its stdout, and with @both its stderr too, into the file @path. */
static int start_into(struct proc *p, const char *const *argv, const char *path, bool both,
		      struct mg_err *err)
{
	struct proc_spec spec = {.argv = argv, .out = PROC_FD, .err = both ? PROC_FD : PROC_TO_ERR};
	int ret;

	spec.out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (spec.out_fd < 0)
		return mg_err_set(err, errno, "%s: %s", path, strerror(errno));
	spec.err_fd = spec.out_fd;
	ret = proc_start(p, &spec, err);
	close(spec.out_fd);
	return ret;
}

/* @n_common words of @common, then @n_extra of @extra, at @argv[*@argc], and the NULL. */
static void add_words(const char **argv, int *argc, const char *const *common, int n_common,
		      const char *const *extra, int n_extra)
{
	for (int i = 0; i < n_common; i++)
		argv[(*argc)++] = common[i];
	for (int i = 0; i < n_extra; i++)
		argv[(*argc)++] = extra[i];
	argv[*argc] = NULL;
}

/*
 * Run `SIDE SUB [side options] [@common] [@extra]` with stdout and stderr into @out_path.
 * Returns 0 with @status, or -errno (-ETIMEDOUT, -EINTR) with @err.
 */
static int ab_side_spawn(const struct ab_side *s, const char *sub, const char *const *common,
			 int n_common, const char *const *extra, int n_extra, const char *out_path,
			 double timeout_s, int *status, struct mg_err *err)
{
	const char *argv[2 * AB_MAX_ARGS + 64];
	struct proc p = {0};
	int argc = 0, ret;

	if (s->argc + n_common + n_extra + 3 > (int)ARRAY_SIZE(argv))
		return mg_err_set(err, E2BIG, "too many options for %s", s->role);
	/* Wrapper words (env, taskset, nice), the memgate, the subcommand, its options. */
	for (int i = 0; i <= s->bin; i++)
		argv[argc++] = s->argv[i];
	argv[argc++] = sub;
	for (int i = s->bin + 1; i < s->argc; i++)
		argv[argc++] = s->argv[i];
	add_words(argv, &argc, common, n_common, extra, n_extra);
	if ((ret = start_into(&p, argv, out_path, false, err)))
		return ret;
	ret = proc_watch(&p, p.started_ns + (int64_t)(timeout_s * 1e9), &proc_stop);
	proc_close(&p);
	*status = p.status;
	if (ret == -ETIMEDOUT)
		return mg_err_set(err, ETIMEDOUT, "%s (%s) did not finish `%s` in %.0f s; killed",
				  s->role, s->spec, sub, timeout_s);
	if (ret)
		return mg_err_set(err, -ret, "%s (%s): %s", s->role, s->spec, strerror(-ret));
	return 0;
}

bool ab_side_guest(struct ab_side *s)
{
	s->vm = s->bin + 1 < s->argc && !strcmp(s->argv[s->bin + 1], "vm");
	s->vm_end = s->argc;
	for (int i = s->bin + 2; s->vm && i < s->argc; i++)
		if (!strcmp(s->argv[i], "--")) {
			s->vm_end = i;
			break;
		}
	return s->vm;
}

/* Does the guest side @s give vm a --timeout of its own? */
static bool own_timeout(const struct ab_side *s)
{
	for (int i = s->bin + 2; i < s->vm_end; i++)
		if (!strcmp(s->argv[i], "--timeout") || !strncmp(s->argv[i], "--timeout=", 10))
			return true;
	return false;
}

/*
 * A guest side's command into @argv (of @max, NULL-ended): wrappers, the memgate, vm and its
 * options, ab's --timeout for the whole guest unless the side gives one, @vm_extra (vm's own:
 * its reports, --dry-run), then the guest's command: run, the side's run options, the
 * options both sides share and @extra. Returns 0 or -E2BIG.
 */
static int guest_argv(const struct ab_side *s, const struct ab_opts *o, const char *const *vm_extra,
		      int n_vm_extra, const char *const *extra, int n_extra, const char **argv,
		      int max, char *timeout, size_t tlen)
{
	int argc = 0;

	if (s->argc + o->n_common + n_extra + n_vm_extra + 8 > max)
		return -E2BIG;
	for (int i = 0; i < s->vm_end; i++)
		argv[argc++] = s->argv[i];
	if (o->timeout_given && !own_timeout(s)) {
		snprintf(timeout, tlen, "%.0f", o->timeout_s);
		argv[argc++] = "--timeout";
		argv[argc++] = timeout;
	}
	for (int i = 0; i < n_vm_extra; i++)
		argv[argc++] = vm_extra[i];
	argv[argc++] = "--";
	argv[argc++] = "run";
	for (int i = s->vm_end + 1; i < s->argc; i++)
		argv[argc++] = s->argv[i];
	add_words(argv, &argc, o->common, o->n_common, extra, n_extra);
	return 0;
}

/* ab's deadline for a guest side's whole run: vm's own (its --timeout, ab's, or its default)
 * and a margin for vm to stop the guest and report that itself. */
double ab_side_guest_deadline(const struct ab_side *s, const struct ab_opts *o, double dflt)
{
	return (o->timeout_given && !own_timeout(s) ? o->timeout_s : dflt) + AB_GUEST_MARGIN_S;
}

int ab_side_guest_run(const struct ab_side *s, const struct ab_opts *o, const char *const *extra,
		      int n_extra, const char *json, const char *log, double timeout_s, int *code,
		      struct mg_err *err)
{
	const char *argv[2 * AB_MAX_ARGS + 64], *reports[] = {"--json", json};
	struct proc p = {0};
	char line[256], how[96], t[32];
	int ret;

	if (guest_argv(s, o, reports, 2, extra, n_extra, argv, (int)ARRAY_SIZE(argv), t, sizeof(t)))
		return mg_err_set(err, E2BIG, "too many options for %s", s->role);
	if ((ret = start_into(&p, argv, log, true, err)))
		return ret;
	ret = proc_watch(&p, p.started_ns + (int64_t)(timeout_s * 1e9), &proc_stop);
	proc_close(&p);
	ab_side_last_line(log, line, sizeof(line));
	if (ret == -ETIMEDOUT)
		return mg_err_set(err, ECANCELED,
				  "%s (%s): its guest did not finish in %.0f s; killed", s->role,
				  s->spec, timeout_s);
	if (ret)
		return mg_err_set(err, -ret, "%s (%s): %s", s->role, s->spec, strerror(-ret));
	if (!WIFEXITED(p.status))
		return mg_err_set(err, ECANCELED, "%s (%s): %s: %s", s->role, s->spec,
				  proc_status_text(p.status, how, sizeof(how)), line);
	*code = WEXITSTATUS(p.status);
	return 0;
}

void ab_side_last_line(const char *path, char *buf, size_t len)
{
	char *text = text_read_file(path, AB_OUTPUT_MAX), *end, *start;

	buf[0] = '\0';
	if (!text)
		return;
	end = text + strlen(text);
	while (end > text && (end[-1] == '\n' || end[-1] == ' '))
		*--end = '\0';
	start = strrchr(text, '\n');
	snprintf(buf, len, "%s", start ? start + 1 : text);
	free(text);
}

/*
 * Which word of the side is the memgate: the first whose prefix of words, asked
 * `ab-protocol`, answers it (a wrapper such as `env VAR=1`, `taskset -c 1` or `nice` comes
 * before it). Sets @s->bin; false when none answers, @last then saying why the whole side's
 * words could not be asked (a timeout), if they could not.
 */
static bool find_memgate(struct ab_side *s, const struct ab_opts *o, const char *path,
			 struct mg_err *last)
{
	int argc = s->argc, status = 0;
	char line[256];

	for (s->bin = 0; s->bin < argc; s->bin++) {
		s->argc = s->bin + 1; /* the words up to it, no options yet */
		mg_err_clear(last);
		if (!ab_side_spawn(s, "ab-protocol", NULL, 0, NULL, 0, path, quick_timeout(o),
				   &status, last) &&
		    WIFEXITED(status) && !WEXITSTATUS(status)) {
			ab_side_last_line(path, line, sizeof(line));
			if (!strcmp(line, AB_PROTOCOL_LINE))
				break;
		}
	}
	s->argc = argc;
	if (s->bin < argc)
		return true;
	s->bin = 0;
	return false;
}

/*
 * Guest side @s's vm options, QEMU, kit, kernel and modules checked without a boot (vm
 * --dry-run), so that a head whose kernel is missing is found before base's guest boots.
 * Returns 0, or -EINVAL (vm refused them) / -EPROTO with @err saying what vm said.
 */
static int guest_check(const struct ab_side *s, const struct ab_opts *o, struct mg_err *err)
{
	static const char *const dry[] = {"--dry-run"};
	const char *argv[2 * AB_MAX_ARGS + 64];
	char path[600], line[256], t[32], how[96];
	struct proc p = {0};
	int ret;

	snprintf(path, sizeof(path), "%s/%s-dry-run.txt", o->workdir, s->role);
	if (guest_argv(s, o, dry, 1, NULL, 0, argv, (int)ARRAY_SIZE(argv), t, sizeof(t)))
		return mg_err_set(err, EINVAL, "--%s: too many options", s->role);
	if (start_into(&p, argv, path, true, err))
		return mg_err_set(err, EPROTO, "%s", err->msg);
	ret = proc_watch(&p, p.started_ns + (int64_t)AB_GUEST_CHECK_S * 1000000000, &proc_stop);
	proc_close(&p);
	ab_side_last_line(path, line, sizeof(line));
	if (ret)
		return mg_err_set(err, EPROTO, "--%s %s: memgate vm --dry-run: %s", s->role,
				  s->spec,
				  ret == -ETIMEDOUT ? "no answer in time; killed" : strerror(-ret));
	if (!WIFEXITED(p.status) || WEXITSTATUS(p.status))
		return mg_err_set(
		    err, EINVAL, "--%s %s: its guest would not boot (vm --dry-run %s): %s", s->role,
		    s->spec, proc_status_text(p.status, how, sizeof(how)), line);
	return 0;
}

int ab_check_protocol(struct ab_side *s, const struct ab_opts *o, struct mg_err *err)
{
	struct mg_err last;
	char path[600], line[256];
	int status = 0, ret;

	snprintf(path, sizeof(path), "%s/%s-protocol.txt", o->workdir, s->role);
	/* No prefix of its words answers: say what the whole side said, not a wrapper's error
	 * about a word after it (`env: 'ab-protocol': No such file`). */
	if (!find_memgate(s, o, path, &last) && s->argc > 1) {
		if (last.code)
			return mg_err_set(err, EPROTO, "%s", last.msg);
		ab_side_last_line(path, line, sizeof(line));
		return mg_err_set(
		    err, EPROTO,
		    "--%s %s: does not speak the A/B protocol: no prefix of its words "
		    "answered `ab-protocol` with \"%s\" (the whole side said "
		    "\"%.120s\")",
		    s->role, s->spec, AB_PROTOCOL_LINE, line);
	}
	/* A guest's options are vm's: checked by vm itself, with its kernel, before any boot. */
	if (ab_side_guest(s))
		return guest_check(s, o, err);
	/* Then with the side's options: `ab-protocol` refuses what `run` would. */
	ret =
	    ab_side_spawn(s, "ab-protocol", NULL, 0, NULL, 0, path, quick_timeout(o), &status, err);
	if (ret)
		return mg_err_set(err, EPROTO, "%s", err->msg);
	ab_side_last_line(path, line, sizeof(line));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return mg_err_set(err, EPROTO, "--%s %s: %s", s->role, s->spec,
				  *line ? line
					: "could not be run (exit 127: not found, a folder, or "
					  "not executable)");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2 && s->argc > s->bin + 1)
		return mg_err_set(err, EINVAL, "--%s %s: %s", s->role, s->spec, line);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || strcmp(line, AB_PROTOCOL_LINE))
		return mg_err_set(err, EPROTO,
				  "--%s %s: does not speak the A/B protocol (`%s "
				  "ab-protocol` said \"%.120s\", exit %d; expected \"%s\"): not a "
				  "memgate, or one too old for `memgate ab`",
				  s->role, s->spec, s->argv[0], line,
				  WIFEXITED(status) ? WEXITSTATUS(status) : -1, AB_PROTOCOL_LINE);
	return 0;
}

const char *ab_side_string(const json_t *j)
{
	const char *s = json_string_value(j);

	return s ? s : "";
}

int ab_side_list(struct ab_side *s, const struct ab_opts *o, struct ab_side_list *l,
		 struct mg_err *err)
{
	static const char *const extra[] = {"--json"};
	char path[600], line[256];
	struct mg_err jerr = {0};
	int status = 0, ret;

	snprintf(path, sizeof(path), "%s/%s-list.json", o->workdir, s->role);
	ret = ab_side_spawn(s, "list", o->common, o->n_common, extra, 1, path, quick_timeout(o),
			    &status, err);
	/* A side that hangs listing its cases failed, as one that crashes there. */
	if (ret == -ETIMEDOUT)
		return mg_err_set(err, ECHILD, "%s", err->msg);
	if (ret)
		return ret;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		ab_side_last_line(path, line, sizeof(line));
		/* Exit 2 is the side refusing its options; anything else is the side failing. */
		if (WIFSIGNALED(status))
			return mg_err_set(
			    err, ECHILD, "--%s %s: `list` was killed by signal %d (%s): %s",
			    s->role, s->spec, WTERMSIG(status), strsignal(WTERMSIG(status)), line);
		return mg_err_set(err, WEXITSTATUS(status) == 2 ? EINVAL : ECHILD,
				  "--%s %s: `list` failed (exit %d): %s", s->role, s->spec,
				  WEXITSTATUS(status), line);
	}
	l->root = json_doc_load(path, HIST_MAX_BYTES, NULL, &jerr);
	if (!json_is_array(l->root)) {
		json_decref(l->root);
		return mg_err_set(err, EPROTO, "--%s %s: `list --json` is not a JSON array (%s)",
				  s->role, s->spec, l->root ? "another document" : jerr.msg);
	}
	l->n = json_array_size(l->root);
	return 0;
}

json_t *ab_side_listed(const struct ab_side_list *l, const char *key)
{
	char buf[256];

	for (size_t i = 0; i < l->n; i++) {
		json_t *c = json_array_get(l->root, i);
		const char *name = json_string_value(json_object_get(c, "name"));

		if (name && !strcmp(case_key(name, buf, sizeof(buf)), key))
			return c;
	}
	return NULL;
}

int ab_side_run(const struct ab_side *s, const struct ab_opts *o, const char *const *extra,
		int n_extra, const char *log, double timeout_s, int max_exit, const char *doing,
		int *code, struct mg_err *err)
{
	char line[256];
	int status = 0;
	int ret = ab_side_spawn(s, "run", o->common, o->n_common, extra, n_extra, log, timeout_s,
				&status, err);

	if (ret == -ETIMEDOUT) {
		err->code = ECANCELED;
		return -ECANCELED;
	}
	if (ret)
		return ret;
	if (!WIFEXITED(status) || WEXITSTATUS(status) > max_exit) {
		ab_side_last_line(log, line, sizeof(line));
		return mg_err_set(err, ECANCELED, "%s (%s) failed %s (%s %d): %s", s->role, s->spec,
				  doing, WIFEXITED(status) ? "exit" : "signal",
				  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), line);
	}
	*code = WEXITSTATUS(status);
	return 0;
}

size_t ab_side_count(const struct ab_side_list *l, const char *kind)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += !strcmp(ab_side_string(json_object_get(json_array_get(l->root, i), "kind")),
			     kind);
	return n;
}
