/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bisect.c - `memgate bisect` from start to end: the range and the metrics read, each commit
 * the search asks for built by --side-of and measured as ab measures a side (a round: one run,
 * or one boot of a guest, of the cases that carry the metrics), every round's figures kept in
 * the state folder before the search sees them; then the culprits verified by an ab of each
 * against its parent, and the reports.
 */
#include "session/bisect.h"
#include "session/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "judge/ab.h"
#include "judge/ab_side.h"
#include "judge/bisect.h"
#include "judge/history.h"
#include "util/proc.h"
#include "util/stats.h"
#include "util/tmpdir.h"
#include "util/util.h"

/* The most commits a range may hold: a day of a busy tree's pushes, many times over. */
#define BS_MAX_COMMITS 4096
/* A step's rounds at most by default: exact figures need one, noisy ones are decided in a few. */
#define BS_MAX_ROUNDS 8
/* The marker of a state folder of memgate's, and what it was measured with (its 2nd line). */
#define BS_MARKER ".memgate-bisect"

/* A commit of the range, as --commits gives it, and what this run learnt of it. */
struct bs_commit {
	char line[512]; /* its line: the hash, subject and author point into it */
	const char *hash, *subject, *author;
	char name[96];	 /* "0123456789ab subject" for the log */
	char side[1024]; /* the side --side-of printed, "" before it was asked */
	char said[96];	 /* what the log says of its build */
	bool skip;	 /* it does not build */
	bool built;	 /* --side-of built it in this run (side: else the one it printed before) */
	struct bisect_figures kept; /* rounds kept in the state folder, from an earlier run */
};

/* A bisect under way. */
struct bs_job {
	struct session ss;
	const struct session_bisect *b;
	struct ab_opts o;
	const char *common[4 * MAX_SUITE_ARGS + 8];
	char size[32], dir[512], state[512];
	struct bs_commit *c;
	size_t n;
	struct bisect_metric m[BISECT_MAX_METRICS];
	/* Each metric's key "SUITE.CASE:METRIC" (the state folder's and the ab's name for it),
	 * its case and its suite (a report row's group), made once by name_metrics(). */
	char keys[BISECT_MAX_METRICS][320], cases[BISECT_MAX_METRICS][320];
	char suites[BISECT_MAX_METRICS][64];
	char units[BISECT_MAX_METRICS][32];
	bool unit_known[BISECT_MAX_METRICS];
	bool tolerance_known[BISECT_MAX_METRICS];
	size_t n_m;
	const char **names;	       /* each commit's name, for the search's log */
	unsigned int measured, reused; /* rounds run now, rounds taken from the state folder */
};

/* "kvm.perf.memslots[slots=509]:kvm.insert.median": its case (up to the last ':') into @c. */
static const char *split_key(const char *key, char *c, size_t len)
{
	const char *colon = strrchr(key, ':');
	size_t n = colon ? (size_t)(colon - key) : 0;

	snprintf(c, len, "%.*s", (int)(n < len ? n : len - 1), key);
	return colon ? colon + 1 : NULL;
}

/* Metric @key of the bisect, its tolerance @tol (< 0: the rules', once its unit is known). */
static int add_metric(struct bs_job *j, const char *key, double tol, enum metric_better better,
		      const char *where)
{
	char c[256];
	struct bisect_metric *m = &j->m[j->n_m];

	if (j->n_m == BISECT_MAX_METRICS)
		return session_usage_error("%s: more than %d metrics to bisect", where,
					   BISECT_MAX_METRICS);
	if (!split_key(key, c, sizeof(c)) || !c[0] || !strchr(c, '.'))
		return session_usage_error("%s: '%s' is not SUITE.CASE:METRIC (e.g. "
					   "kvm.perf.memslots[slots=509]:kvm.insert.median)",
					   where, key);
	snprintf(j->keys[j->n_m], sizeof(j->keys[0]), "%s", key);
	*m = (struct bisect_metric){
	    .case_name = j->keys[j->n_m], .unit = "", .better = better, .tolerance = tol};
	j->tolerance_known[j->n_m] = tol >= 0;
	j->n_m++;
	return 0;
}

/*
 * Row @c of an ab's results: its metric's key ("kvm.perf.memslots[slots=509]:kvm.insert.median",
 * its group and case) into @key and its verdict word, or NULL when it is not an A/B row.
 */
static const char *ab_row(const json_t *c, char *key, size_t len)
{
	if (strcmp(ab_side_string(json_object_get(c, "suite")), "ab"))
		return NULL;
	snprintf(key, len, "%s.%s", ab_side_string(json_object_get(c, "group")),
		 ab_side_string(json_object_get(c, "case")));
	return ab_side_string(json_object_get(json_object_get(c, "figures"), "verdict"));
}

/* The gated metrics an ab's results @path judged REGRESSION, each with that ab's tolerance. */
static int metrics_from_ab(struct bs_job *j, const char *path)
{
	json_error_t e;
	json_t *root = json_load_file(path, 0, &e), *cs;
	size_t i;
	int ret = 0;

	if (!root)
		return session_usage_error("--from-ab %s:%d: %s", path, e.line, e.text);
	cs = json_object_get(root, "cases");
	if (!json_is_array(cs))
		ret = session_usage_error("--from-ab %s: not memgate results (no \"cases\")", path);
	for (i = 0; !ret && i < json_array_size(cs); i++) {
		json_t *c = json_array_get(cs, i), *p = json_object_get(c, "properties");
		char key[320];
		const char *verdict = ab_row(c, key, sizeof(key));
		double base, head;

		/* A gated regression fails; a reported one (SKIP) is context. */
		if (!verdict || strcmp(verdict, "regression") ||
		    strcmp(ab_side_string(json_object_get(c, "outcome")), "FAIL"))
			continue;
		if (j->n_m == BISECT_MAX_METRICS) {
			fprintf(
			    stderr,
			    "memgate: bisect: --from-ab %s: more than %d regressions: the first "
			    "%d are followed\n",
			    path, BISECT_MAX_METRICS, BISECT_MAX_METRICS);
			break;
		}
		base = strtod(ab_side_string(json_object_get(p, "base_median")), NULL);
		head = strtod(ab_side_string(json_object_get(p, "head_median")), NULL);
		ret = add_metric(j, key,
				 strtod(ab_side_string(json_object_get(p, "tolerance")), NULL),
				 head > base ? LOWER_IS_BETTER : HIGHER_IS_BETTER, path);
	}
	json_decref(root);
	return ret;
}

/* Each metric's case, name and suite from its key: "kvm.perf.memslots[slots=509]",
 * "kvm.insert.median" and "kvm". */
static void name_metrics(struct bs_job *j)
{
	for (size_t i = 0; i < j->n_m; i++) {
		const char *colon = strrchr(j->keys[i], ':');

		snprintf(j->cases[i], sizeof(j->cases[0]), "%.*s", (int)(colon - j->keys[i]),
			 j->keys[i]);
		snprintf(j->suites[i], sizeof(j->suites[0]), "%.*s", (int)strcspn(j->cases[i], "."),
			 j->cases[i]);
		j->m[i].name = colon + 1;
		j->m[i].case_name = j->cases[i];
	}
}

/* Line @no of --commits into @c; 0 or EXIT_USAGE. */
static int commit_line(struct bs_commit *c, const char *file, size_t no)
{
	char *tab1, *tab2;
	size_t len = strspn(c->line, "0123456789abcdef");

	c->line[strcspn(c->line, "\n")] = '\0';
	tab1 = strchr(c->line, '\t');
	tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
	if (!tab1 || !tab2 || len < 7 || c->line + len != tab1)
		return session_usage_error("%s:%zu: expected HASH<TAB>SUBJECT<TAB>AUTHOR (git log "
					   "--format='%%H%%x09%%s%%x09%%an <%%ae>'), got '%.80s'",
					   file, no, c->line);
	*tab1 = *tab2 = '\0';
	c->hash = c->line;
	c->subject = tab1 + 1;
	c->author = tab2 + 1;
	snprintf(c->name, sizeof(c->name), "%.12s %.80s", c->hash, c->subject);
	return 0;
}

/* The range from --commits: GOOD first, BAD last, at least those two. */
static int read_commits(struct bs_job *j, const char *file)
{
	FILE *f = fopen(file, "re");
	char line[sizeof(j->c[0].line)];
	size_t lines = 0;
	int ret = 0;

	if (!f)
		return session_usage_error("--commits %s: %s", file, strerror(errno));
	while (lines <= BS_MAX_COMMITS && fgets(line, sizeof(line), f))
		lines++;
	rewind(f);
	j->c = lines <= BS_MAX_COMMITS ? calloc(lines + 1, sizeof(*j->c)) : NULL;
	j->names = calloc(lines + 1, sizeof(*j->names));
	if (lines > BS_MAX_COMMITS)
		ret = session_usage_error("%s: more than %d commits", file, BS_MAX_COMMITS);
	else if (!j->c || !j->names)
		ret = EXIT_HARNESS;
	while (!ret && j->n < lines && fgets(j->c[j->n].line, sizeof(j->c[0].line), f)) {
		ret = commit_line(&j->c[j->n], file, j->n + 1);
		j->names[j->n] = j->c[j->n].name;
		j->n++;
	}
	fclose(f);
	if (!ret && j->n < 2)
		ret = session_usage_error("%s: %zu commit%s: a range needs GOOD (the first line) "
					  "and BAD (the last)",
					  file, j->n, j->n == 1 ? "" : "s");
	return ret;
}

/* @j's file @name (of commit @hash: "HASH.NAME") in the state folder, into @buf. */
static const char *state_file(const struct bs_job *j, const char *hash, const char *name, char *buf,
			      size_t len)
{
	/* Too long a path is none: opening "" fails, saying so. */
	if (snprintf(buf, len, "%s/%s%s%s", j->state, hash ? hash : "", hash ? "." : "", name) >=
	    (int)len)
		buf[0] = '\0';
	return buf;
}

/* What the state folder's figures were measured with: the sides' options, rounds' sizes. */
static void state_id(const struct bs_job *j, char *buf, size_t len)
{
	size_t used = (size_t)snprintf(buf, len, "samples %u, warm-up %u, seed %" PRIu64 ":",
				       j->o.samples, j->o.warmup, j->o.seed);

	for (int i = 0; i < j->o.n_common && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, " %s", j->o.common[i]);
}

/* Does folder @path hold nothing? */
static bool dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;

	while (d && empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return empty;
}

/* @text as the whole of file @path; 0 or -errno. */
static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	int ret;

	if (!f)
		return -errno;
	ret = fputs(text, f) < 0 ? -EIO : 0;
	return fclose(f) || ret ? -EIO : 0;
}

/*
 * The state folder: --state DIR, made with its marker when new (a folder memgate did not make
 * is refused and left as it is), and in it one folder per way of measuring (the sides'
 * options, the cases, the rounds' sizes), named by its hash: a bisect measured as this one
 * measures is taken up again, another kept beside it.
 */
static int open_state(struct bs_job *j)
{
	char marker[600], want[1024], line[1030];
	const char *dir = j->b->state;

	if (!dir)
		return tmpdir_make(j->state, sizeof(j->state), "bisect") ? EXIT_HARNESS : 0;
	state_id(j, want, sizeof(want));
	snprintf(marker, sizeof(marker), "%s/%s", dir, BS_MARKER);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return session_usage_error("--state %s: %s", dir, strerror(errno));
	if (access(marker, F_OK) && !dir_empty(dir))
		return session_usage_error("--state %s: a folder memgate did not make (no %s in "
					   "it): name a new folder or an empty one",
					   dir, BS_MARKER);
	if (access(marker, F_OK) && write_text(marker, "memgate bisect: its figures\n"))
		return session_usage_error("--state %s: cannot write in it", dir);
	if (snprintf(j->state, sizeof(j->state), "%s/%016" PRIx64, dir,
		     util_fnv1a64(UTIL_FNV1A64_INIT, want)) >= (int)sizeof(j->state))
		return session_usage_error("--state %s: too long a path", dir);
	if (mkdir(j->state, 0755) && errno != EEXIST)
		return session_usage_error("--state %s: %s", j->state, strerror(errno));
	snprintf(line, sizeof(line), "%s\n", want);
	if (write_text(state_file(j, NULL, "measured-with", marker, sizeof(marker)), line))
		return session_usage_error("--state %s: cannot write in it", j->state);
	return 0;
}

/* The side's words from what --side-of printed in @path: its last line with text. */
static int read_side(struct bs_commit *c, const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "re");

	c->side[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[strspn(line, " \t")])
			snprintf(c->side, sizeof(c->side), "%s", line);
	}
	if (f)
		fclose(f);
	return c->side[0] ? 0 : -ENODATA;
}

/* Commit @c's rounds kept in the state folder ("KEY<TAB>FIGURE" a line), and whether it was
 * found not to build. A line cut short by an interruption is not a figure. */
static void load_kept(struct bs_job *j, struct bs_commit *c)
{
	char path[700], line[512];
	FILE *f;

	c->skip = access(state_file(j, c->hash, "skip", path, sizeof(path)), F_OK) == 0;
	/* The side it printed then, for the report: measuring builds it again (kept, quickly). */
	read_side(c, state_file(j, c->hash, "side", path, sizeof(path)));
	if (!(f = fopen(state_file(j, c->hash, "figures", path, sizeof(path)), "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *end;
		double v;

		if (!tab || !strchr(tab, '\n'))
			continue;
		*tab = '\0';
		v = strtod(tab + 1, &end);
		for (size_t m = 0; m < j->n_m && end != tab + 1; m++) {
			if (!strcmp(j->keys[m], line) && c->kept.n[m] < BISECT_MAX_SAMPLES)
				c->kept.v[m][c->kept.n[m]++] = v;
		}
	}
	fclose(f);
}

/* The next kept round of commit @c into @f, when every metric has one: a step not measured
 * twice. */
static bool kept_round(struct bs_job *j, struct bs_commit *c, struct bisect_figures *f)
{
	for (size_t m = 0; m < j->n_m; m++)
		if (c->kept.n[m] <= f->n[m])
			return false;
	for (size_t m = 0; m < j->n_m; m++) {
		f->v[m][f->n[m]] = c->kept.v[m][f->n[m]];
		f->n[m]++;
	}
	j->reused++;
	snprintf(c->said, sizeof(c->said), "figures kept from an earlier run");
	return true;
}

/*
 * Commit @c built and its side known: `sh -c 'SIDE_OF "$1"' - HASH`, its stdout the side, its
 * stderr (what it builds) on ours. Returns 0, 125 when it does not build (kept: never tried
 * again), or an exit status having said why.
 */
static int build_side(struct bs_job *j, struct bs_commit *c)
{
	char script[1200], path[700], how[64];
	const char *argv[] = {"/bin/sh", "-c", script, "memgate-bisect", c->hash, NULL};
	struct proc_spec spec = {.argv = argv, .out = PROC_FD, .own_group = true};
	struct proc p = {0};
	struct mg_err err = {0};
	int64_t t0 = util_now_ns();
	int ret;

	snprintf(script, sizeof(script), "%s \"$1\"", j->b->side_of);
	state_file(j, c->hash, "side", path, sizeof(path));
	spec.out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (spec.out_fd < 0)
		return session_usage_error("--state: %s: %s", path, strerror(errno));
	spec.err_fd = -1;
	ret = proc_start(&p, &spec, &err);
	close(spec.out_fd);
	if (ret) {
		fprintf(stderr, "memgate: bisect: --side-of: %s\n", err.msg);
		return EXIT_HARNESS;
	}
	ret = proc_watch(&p, INT64_MAX, &proc_stop);
	proc_close(&p);
	if (ret == -EINTR)
		return 128 + proc_stop;
	if (WIFEXITED(p.status) && WEXITSTATUS(p.status) == 125) {
		snprintf(c->said, sizeof(c->said), "does not build");
		c->skip = true;
		fclose(fopen(state_file(j, c->hash, "skip", path, sizeof(path)), "we"));
		return 125;
	}
	if (ret || !WIFEXITED(p.status) || WEXITSTATUS(p.status) || read_side(c, path)) {
		fprintf(stderr, "memgate: bisect: `%s %s` %s%s\n", j->b->side_of, c->hash,
			proc_status_text(p.status, how, sizeof(how)),
			p.status ? "" : " and printed no side");
		return EXIT_HARNESS;
	}
	c->built = true;
	snprintf(c->said, sizeof(c->said), "side ready in %.0f s",
		 (double)(util_now_ns() - t0) / 1e9);
	return 0;
}

/* What the state folder keeps of metric @m once learnt: its unit, direction and tolerance, so
 * that a resumed bisect that measures nothing more reports them. */
static void keep_metric(const struct bs_job *j, size_t m)
{
	char path[700];
	FILE *f = fopen(state_file(j, NULL, "metrics", path, sizeof(path)), "ae");

	if (!f)
		return; /* the report says less; the figures are kept all the same */
	fprintf(f, "%s\t%s\t%s\t%.17g\n", j->keys[m], j->m[m].unit,
		j->m[m].better == LOWER_IS_BETTER ? "lower" : "higher", j->m[m].tolerance);
	fclose(f);
}

/* The metrics' units, directions and tolerances an earlier run learnt (keep_metric()). */
static void load_metrics(struct bs_job *j)
{
	char path[700], line[512], key[320], unit[32], better[8];
	double tol;
	FILE *f = fopen(state_file(j, NULL, "metrics", path, sizeof(path)), "re");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%319[^\t]\t%31[^\t]\t%7[^\t]\t%lg", key, unit, better, &tol) != 4)
			continue;
		for (size_t m = 0; m < j->n_m; m++) {
			if (strcmp(j->keys[m], key) || j->unit_known[m])
				continue;
			snprintf(j->units[m], sizeof(j->units[0]), "%s", unit);
			j->m[m].unit = j->units[m];
			j->unit_known[m] = true;
			j->m[m].better =
			    strcmp(better, "lower") ? HIGHER_IS_BETTER : LOWER_IS_BETTER;
			j->m[m].tolerance = tol;
			j->tolerance_known[m] = true;
		}
	}
	if (f)
		fclose(f);
}

/* Metric @m's unit, direction and tolerance, from its first figures (@hm) when not known. */
static void learn_metric(struct bs_job *j, size_t m, const struct hist_metric *hm, bool icount)
{
	struct metric_def def = {.name = hm->name};
	struct tolerance t;

	if (j->unit_known[m])
		return;
	/* Under icount a guest's TSC counts its instructions (run/guest.h). */
	snprintf(j->units[m], sizeof(j->units[0]), "%s",
		 icount && !strcmp(hm->unit, "cycles") ? "instructions" : hm->unit);
	j->m[m].unit = j->units[m];
	j->unit_known[m] = true;
	if (j->tolerance_known[m]) {
		keep_metric(j, m);
		return;
	}
	def.unit = j->units[m];
	def.better = hm->better;
	t = rules_tolerance(&j->ss.rules, j->suites[m], j->m[m].case_name, &def);
	j->m[m].better = hm->better;
	j->m[m].tolerance = t.ab;
	j->tolerance_known[m] = true;
	keep_metric(j, m);
}

/* One run of side @s (a boot of its guest) of the bisect's cases, its results into @r. */
static int run_side(struct bs_job *j, struct ab_side *s, struct hist_run *r, struct mg_err *err)
{
	char path[600], log[600], n[16], w[16], seed[32], t[32], line[256];
	const char *extra[] = {"-n",	    n, "--warmup",   w,	       "--seed", seed,
			       "--timeout", t, "--no-gates", "--json", path};
	int code = 0, ret;

	snprintf(path, sizeof(path), "%s/round.json", j->dir);
	snprintf(log, sizeof(log), "%s/round.log", j->dir);
	snprintf(n, sizeof(n), "%u", j->o.samples);
	snprintf(w, sizeof(w), "%u", j->o.warmup);
	snprintf(seed, sizeof(seed), "%" PRIu64, j->o.seed);
	snprintf(t, sizeof(t), "%.0f", j->o.timeout_s);
	unlink(path);
	if (s->vm)
		ret = ab_side_guest_run(s, &j->o, extra, (int)ARRAY_SIZE(extra) - 2, path, log,
					ab_side_guest_deadline(s, &j->o, 3600), &code, err);
	else
		ret = ab_side_run(s, &j->o, extra, (int)ARRAY_SIZE(extra), log,
				  j->o.timeout_s * (double)(j->n_m + 1), 1, "on the bisect's cases",
				  &code, err);
	if (ret)
		return ret;
	if (hist_load(r, path, err)) {
		ab_side_last_line(log, line, sizeof(line));
		return mg_err_set(err, ECANCELED, "%s: no results (exit %d): %s", s->spec, code,
				  line);
	}
	return 0;
}

/* The round's figure of each metric from @r into @v, and the state folder's line for it. */
static int take_figures(struct bs_job *j, const struct hist_run *r, double *v, struct mg_err *err)
{
	bool icount = !strcmp(hist_vm_prop(r, "vm.clock"), "icount");

	for (size_t m = 0; m < j->n_m; m++) {
		const struct hist_case *hc = hist_guest_case(r, j->m[m].case_name);
		const struct hist_metric *hm = hc ? hist_metric(hc, j->m[m].name) : NULL;

		if (!hc || strcmp(hc->outcome, "PASS") || !hm || !hm->n)
			return mg_err_set(err, ENODATA, "%s: %s", j->m[m].case_name,
					  !hc	? "not run"
					  : !hm ? "no such metric"
						: hc->message);
		learn_metric(j, m, hm, icount);
		v[m] = stats_median(hm->v, hm->n);
	}
	return 0;
}

/* A round's figures of commit @c appended to the state folder's, flushed before they count. */
static int keep_figures(struct bs_job *j, const struct bs_commit *c, const double *v)
{
	char path[700];
	int ret;
	FILE *f = fopen(state_file(j, c->hash, "figures", path, sizeof(path)), "ae");

	if (!f)
		return -errno;
	for (size_t m = 0; m < j->n_m; m++)
		fprintf(f, "%s\t%.17g\n", j->keys[m], v[m]);
	ret = fflush(f) || fsync(fileno(f)) ? -EIO : 0;
	return fclose(f) ? -EIO : ret;
}

/* Commit @c's side, parsed and asked the protocol, into @s; 0 or an exit status, said. */
static int side_ready(struct bs_job *j, const struct bs_commit *c, struct ab_side *s)
{
	struct mg_err err = {0};

	if (ab_side_parse(s, "side", c->side, &err) || ab_check_protocol(s, &j->o, &err)) {
		fprintf(stderr, "memgate: bisect: the side --side-of printed for %s: %s\n", c->name,
			err.msg);
		return EXIT_USAGE;
	}
	return 0;
}

/* One round of commit @c: run, its figures kept, then into @f. A run that gives no figure is
 * a commit that cannot be measured: skipped (125), as one that does not build. */
static int measure_round(struct bs_job *j, struct bs_commit *c, struct bisect_figures *f)
{
	struct ab_side s;
	struct hist_run r;
	struct mg_err err = {0};
	double v[BISECT_MAX_METRICS] = {0};
	int ret;

	if ((ret = side_ready(j, c, &s)))
		return ret;
	fprintf(stderr, "memgate: bisect: measuring %s (%s) ...\n", c->name, c->side);
	ret = run_side(j, &s, &r, &err);
	if (!ret) {
		ret = take_figures(j, &r, v, &err);
		hist_release(&r);
	}
	if (proc_stop)
		return 128 + proc_stop;
	if (ret) {
		fprintf(stderr, "memgate: bisect: %s: %s: not measured, skipped\n", c->name,
			err.msg);
		snprintf(c->said, sizeof(c->said), "not measured: skipped");
		return 125;
	}
	if ((ret = keep_figures(j, c, v))) {
		fprintf(stderr, "memgate: bisect: --state %s: %s\n", j->state, strerror(-ret));
		return EXIT_HARNESS;
	}
	for (size_t m = 0; m < j->n_m; m++) {
		c->kept.v[m][c->kept.n[m]++] = v[m];
		f->v[m][f->n[m]++] = v[m];
	}
	j->measured++;
	return 0;
}

/* bisect_ops.measure: a round of commit @idx, from the state folder when it holds one. */
static int measure(void *arg, size_t idx, struct bisect_figures *f)
{
	struct bs_job *j = arg;
	struct bs_commit *c = &j->c[idx];
	int ret;

	if (c->skip) {
		if (!c->said[0])
			snprintf(c->said, sizeof(c->said),
				 "does not build (kept from an earlier run)");
		return 125;
	}
	if (kept_round(j, c, f))
		return 0;
	if (!c->built && (ret = build_side(j, c)))
		return ret;
	if (f->n[0] >= BISECT_MAX_SAMPLES)
		return -E2BIG;
	return measure_round(j, c, f);
}

/* bisect_ops.describe: what the log says of commit @idx's build. */
static const char *describe(void *arg, size_t idx)
{
	return ((struct bs_job *)arg)->c[idx].said;
}

/* Run @argv with its output into @log until it ends (or a stop signal); its wait status. */
static int spawn_to(const char *const *argv, const char *log)
{
	struct proc_spec spec = {.argv = argv, .out = PROC_FD, .err = PROC_FD, .own_group = true};
	struct proc p = {0};
	struct mg_err err = {0};
	int ret;

	spec.out_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (spec.out_fd < 0)
		return -errno;
	spec.err_fd = spec.out_fd;
	ret = proc_start(&p, &spec, &err);
	close(spec.out_fd);
	if (ret)
		return ret;
	ret = proc_watch(&p, INT64_MAX, &proc_stop);
	proc_close(&p);
	return ret ? ret : p.status;
}

/* Is @hi the first bad commit metric @m names? */
static bool culprit_of(const struct bisect *bs, size_t m, size_t hi)
{
	return !bs->answer[m].no_change && bs->answer[m].hi == hi;
}

/*
 * The verdict words the ab results @path give each metric whose culprit is @hi, into
 * @verdicts ("" when the file or its row is not there); how many have none.
 */
static size_t read_verdicts(const struct bs_job *j, const struct bisect *bs, size_t hi,
			    const char *path, char (*verdicts)[32])
{
	json_t *root = json_load_file(path, 0, NULL), *cs = json_object_get(root, "cases");
	size_t missing = 0;

	for (size_t i = 0; i < json_array_size(cs); i++) {
		char key[320];
		const char *verdict = ab_row(json_array_get(cs, i), key, sizeof(key));

		for (size_t m = 0; verdict && m < j->n_m; m++)
			if (culprit_of(bs, m, hi) && !strcmp(j->keys[m], key))
				snprintf(verdicts[m], 32, "%s", verdict);
	}
	json_decref(root);
	for (size_t m = 0; m < j->n_m; m++)
		missing += culprit_of(bs, m, hi) && !verdicts[m][0];
	return missing;
}

/*
 * A -k GLOB matching the cases of the metrics whose first bad commit is @hi: their longest
 * common beginning, '*' after it when they differ. Written so that a guest's kernel command
 * line carries it (no backslash): '[', '*' and '?' as "[[]", "[*]" and "[?]".
 */
static void culprit_glob(const struct bs_job *j, const struct bisect *bs, size_t hi, char *buf,
			 size_t len)
{
	const char *first = NULL;
	size_t common = 0, n = 0;

	for (size_t m = 0; m < j->n_m; m++) {
		const char *c = j->m[m].case_name;

		if (!culprit_of(bs, m, hi))
			continue;
		if (!first) {
			first = c;
			common = strlen(c);
		}
		while (common && strncmp(first, c, common))
			common--;
	}
	for (size_t i = 0; first && i < common && n + 4 < len; i++)
		n += (size_t)snprintf(buf + n, len - n, strchr("[*?", first[i]) ? "[%c]" : "%c",
				      first[i]);
	snprintf(buf + n, len - n, "%s", first && first[common] ? "*" : "");
}

/* memgate ab's words for a culprit's check: this memgate, the culprit's parent @lo and it @hi
 * as the two sides, the cases of @glob in @suite, the options the bisect's runs had (not their
 * --case), the rules, @json. */
static void verify_argv(const struct bs_job *j, size_t lo, size_t hi, const char *suite,
			const char *glob, const char *json, const char **argv)
{
	int argc = 0;

	argv[argc++] = "/proc/self/exe";
	argv[argc++] = "ab";
	argv[argc++] = "--base";
	argv[argc++] = j->c[lo].side;
	argv[argc++] = "--head";
	argv[argc++] = j->c[hi].side;
	argv[argc++] = "-s";
	argv[argc++] = suite;
	argv[argc++] = "-k";
	argv[argc++] = glob;
	for (int i = 0; i < j->o.n_common; i++) {
		if (!strcmp(j->o.common[i], "--case"))
			i++;
		else
			argv[argc++] = j->o.common[i];
	}
	if (j->ss.cfg->rules_path) {
		argv[argc++] = "--rules";
		argv[argc++] = j->ss.cfg->rules_path;
	}
	argv[argc++] = "--json";
	argv[argc++] = json;
	argv[argc] = NULL;
}

/*
 * The first bad commit @hi checked against its parent @lo: one ab of the two over the cases of
 * every metric it is the culprit of, its results kept in the state folder (a resumed bisect
 * reads them); each such metric's verdict word into @verdicts ("regression": verified).
 */
static void verify(struct bs_job *j, const struct bisect *bs, size_t lo, size_t hi,
		   char (*verdicts)[32])
{
	char json[700], log[720], glob[600], name[64];
	const char *argv[4 * MAX_SUITE_ARGS + 24];
	size_t m = 0;

	snprintf(name, sizeof(name), "verify-%.12s.json", j->c[hi].hash);
	state_file(j, NULL, name, json, sizeof(json));
	snprintf(log, sizeof(log), "%.*s.log", (int)strlen(json) - 5, json);
	while (!culprit_of(bs, m, hi))
		m++; /* its suite is every such metric's: the glob holds one suite's cases */
	if (read_verdicts(j, bs, hi, json, verdicts) && !proc_stop &&
	    (j->c[lo].built || !build_side(j, &j->c[lo])) &&
	    (j->c[hi].built || !build_side(j, &j->c[hi]))) {
		culprit_glob(j, bs, hi, glob, sizeof(glob));
		verify_argv(j, lo, hi, j->suites[m], glob, json, argv);
		fprintf(stderr,
			"memgate: bisect: checking %s against its parent: memgate ab -s %s -k '%s' "
			"(its output in %s) ...\n",
			j->c[hi].name, j->suites[m], glob, log);
		spawn_to(argv, log);
		read_verdicts(j, bs, hi, json, verdicts);
	}
	for (m = 0; m < j->n_m; m++)
		if (culprit_of(bs, m, hi) && !verdicts[m][0])
			fprintf(stderr,
				"memgate: bisect: the ab of %s against its parent judged no %s: "
				"see %s\n",
				j->c[hi].name, j->keys[m], log);
}

/* Metric @m's row for JUnit, JSON and the console: FAIL naming the first bad commit (or the
 * range holding it), PASS when GOOD and BAD do not differ in it. */
static void metric_row(struct bs_job *j, const struct bisect *bs, size_t m, const char *verdict,
		       struct result_set *set)
{
	const struct bisect_answer *a = &bs->answer[m];
	char msg[1200];
	struct case_def def = {.kind = CASE_CHECK, .doc = ""};
	struct case_result *r;
	size_t used;

	/* Grouped by the metric's suite (the set keeps the pointer: the job outlives it), named
	 * by the rest of its key. */
	def.group = j->suites[m];
	if (!(r = result_set_add(set, NULL, "bisect", j->keys[m] + strlen(j->suites[m]) + 1, &def)))
		return;
	case_result_add_prop(r, "good", j->c[0].hash);
	case_result_add_prop(r, "bad", j->c[j->n - 1].hash);
	if (a->no_change) {
		case_result_add_prop(r, "found", "GOOD and BAD do not differ past its tolerance");
		return;
	}
	case_result_add_prop(r, "first_bad", j->c[a->hi].hash);
	case_result_add_prop(r, "last_good", j->c[a->lo].hash);
	if (a->hi == a->lo + 1) {
		case_result_add_prop(r, "verified", verdict);
		snprintf(msg, sizeof(msg), "first bad commit %.12s \"%s\" (%s)%s", j->c[a->hi].hash,
			 j->c[a->hi].subject, j->c[a->hi].author,
			 !strcmp(verdict, "regression") ? ", verified: an ab of it against its "
							  "parent gives REGRESSION"
			 : verdict[0] ? ", NOT verified: an ab of it against its parent does not "
					"give REGRESSION"
				      : ", not verified");
		case_result_set_outcome(r, OUTCOME_FAIL, msg);
		return;
	}
	used = (size_t)snprintf(msg, sizeof(msg),
				"the first bad commit is one of %zu:", a->hi - a->lo);
	for (size_t i = a->lo + 1; i <= a->hi && used < sizeof(msg); i++)
		used += (size_t)snprintf(msg + used, sizeof(msg) - used, "%s %.12s \"%s\"",
					 i > a->lo + 1 ? "," : "", j->c[i].hash, j->c[i].subject);
	case_result_set_outcome(r, OUTCOME_FAIL, msg);
}

/* The plain-text report on stdout and in --report: bisect_report(), then each culprit's
 * check. */
static int text_report(struct bs_job *j, const struct bisect *bs, char (*verdicts)[32])
{
	struct bisect_commit *commits = calloc(j->n, sizeof(*commits));
	const struct hw_info *hw = &j->ss.hw;
	char host[600];
	size_t lo = 0, hi = j->n - 1;
	FILE *f = j->b->report ? fopen(j->b->report, "we") : NULL;

	if (!commits) {
		if (f)
			fclose(f);
		return EXIT_HARNESS;
	}
	if (j->b->report && !f) {
		free(commits);
		fprintf(stderr, "memgate: bisect: --report %s: %s\n", j->b->report,
			strerror(errno));
		return EXIT_HARNESS;
	}
	for (size_t i = 0; i < j->n; i++)
		commits[i] = (struct bisect_commit){j->c[i].hash, j->c[i].subject, j->c[i].author};
	for (size_t m = 0; m < j->n_m; m++)
		if (!bs->answer[m].no_change && bs->answer[m].hi == bs->answer[m].lo + 1) {
			lo = bs->answer[m].lo;
			hi = bs->answer[m].hi;
			break;
		}
	snprintf(host, sizeof(host), "%s, kernel %s (host class %s)", hw->fingerprint,
		 hw->os_release, hw->fingerprint_hash);
	for (FILE *out = stdout; out; out = out == stdout ? f : NULL) {
		bisect_report(bs, commits, host, j->c[lo].side, j->c[hi].side, out);
		for (size_t m = 0; m < j->n_m; m++)
			if (verdicts[m][0] ||
			    (!bs->answer[m].no_change && bs->answer[m].hi == bs->answer[m].lo + 1))
				fprintf(out, "checked: %s %s: ab of %.12s against its parent: %s\n",
					j->m[m].case_name, j->m[m].name,
					j->c[bs->answer[m].hi].hash,
					verdicts[m][0]	  ? verdicts[m]
					: j->b->no_verify ? "not checked (--no-verify)"
							  : "no verdict (see the log)");
	}
	free(commits);
	return f && fclose(f) ? EXIT_HARNESS : 0;
}

/* The options each side's run gets: the cases carrying the metrics, and how to count. */
static void side_options(struct bs_job *j, const struct session_config *cfg)
{
	int n = 0;

	for (size_t m = 0; m < j->n_m; m++) {
		bool again = false;

		for (size_t k = 0; k < m; k++)
			again |= !strcmp(j->m[k].case_name, j->m[m].case_name);
		if (again)
			continue;
		j->common[n++] = "--case";
		j->common[n++] = strchr(j->m[m].case_name, '.') ? j->m[m].case_name : "";
	}
	if (cfg->opts.size_bytes) {
		snprintf(j->size, sizeof(j->size), "%llu",
			 (unsigned long long)cfg->opts.size_bytes);
		j->common[n++] = "--size";
		j->common[n++] = j->size;
	}
	if (cfg->opts.quick)
		j->common[n++] = "--quick";
	if (cfg->opts.long_run)
		j->common[n++] = "--long";
	if (cfg->counter_set) {
		j->common[n++] = "--counter";
		j->common[n++] = counter_name(cfg->opts.counter);
	}
	j->o.common = j->common;
	j->o.n_common = n;
	j->o.samples = cfg->samples_set ? cfg->opts.samples : cfg->opts.quick ? 2 : 3;
	j->o.warmup = cfg->opts.warmup_set ? cfg->opts.warmup : 1;
	j->o.seed = cfg->opts.seed;
	j->o.timeout_s = cfg->opts.timeout_s;
	j->o.timeout_given = cfg->timeout_set;
	j->o.rules = &j->ss.rules;
	j->o.context = "";
}

/* The metrics to follow: --metric's, else those --from-ab's ab judged REGRESSION. */
static int pick_metrics(struct bs_job *j)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < j->b->n_metrics; i++)
		ret = add_metric(j, j->b->metrics[i], -1, LOWER_IS_BETTER, "--metric");
	if (!ret && !j->b->n_metrics && j->b->from_ab)
		ret = metrics_from_ab(j, j->b->from_ab);
	else if (!ret && !j->b->n_metrics)
		ret = session_usage_error("bisect: name what to bisect: --from-ab AB.json (the "
					  "metrics an ab of GOOD and BAD judged REGRESSION) or "
					  "--metric SUITE.CASE:METRIC");
	if (!ret)
		name_metrics(j);
	return ret;
}

/* The search itself, then the culprits checked; 0 or an exit status, said. */
static int search(struct bs_job *j, struct bisect *bs, char (*verdicts)[32])
{
	struct bisect_ops ops = {.measure = measure,
				 .arg = j,
				 .max_rounds = j->b->max_rounds ? (unsigned int)j->b->max_rounds
								: BS_MAX_ROUNDS,
				 .log = stdout,
				 .commit_names = j->names,
				 .describe = describe};
	int ret;

	*bs = (struct bisect){.metrics = j->m, .n_metrics = j->n_m, .n = j->n};
	printf("bisect: %zu commits, GOOD %s, BAD %s; %zu metric%s; figures in %s\n", j->n,
	       j->c[0].name, j->c[j->n - 1].name, j->n_m, j->n_m == 1 ? "" : "s", j->state);
	ret = bisect_run(bs, &ops);
	if (ret == 125) {
		fprintf(stderr, "memgate: bisect: %s cannot be measured: nothing to bisect from\n",
			j->c[0].skip || !j->c[0].kept.n[0] ? "GOOD" : "BAD");
		return EXIT_HARNESS;
	}
	if (ret) {
		if (ret < 0)
			fprintf(stderr, "memgate: bisect: %s\n", strerror(-ret));
		return ret < 0 ? EXIT_HARNESS : ret;
	}
	/* Each culprit once, whatever the number of metrics it is the culprit of. */
	for (size_t m = 0; m < j->n_m && !j->b->no_verify && !proc_stop; m++) {
		bool again = false;

		for (size_t k = 0; k < m; k++)
			again |= !bs->answer[k].no_change && bs->answer[k].hi == bs->answer[m].hi &&
				 bs->answer[k].lo + 1 == bs->answer[k].hi;
		if (!again && !bs->answer[m].no_change && bs->answer[m].hi == bs->answer[m].lo + 1)
			verify(j, bs, bs->answer[m].lo, bs->answer[m].hi, verdicts);
	}
	printf("bisect: %zu steps; %u rounds measured now, %u kept from before\n", bs->steps,
	       j->measured, j->reused);
	return proc_stop ? 128 + proc_stop : 0;
}

int session_bisect(struct session_config *cfg, const struct session_bisect *b)
{
	struct bs_job *j = calloc(1, sizeof(*j));
	struct bisect bs = {0};
	char verdicts[BISECT_MAX_METRICS][32] = {{0}};
	struct result_set set = {0};
	int ret;

	if (!j)
		return EXIT_HARNESS;
	j->b = b;
	if ((ret = session_check_reports(cfg)) || (ret = session_open(&j->ss, cfg)) ||
	    (ret = read_commits(j, b->commits)) || (ret = pick_metrics(j)))
		goto out;
	if (!j->n_m) {
		printf("bisect: the ab in %s judged no metric REGRESSION: nothing to bisect\n",
		       b->from_ab);
		goto out;
	}
	side_options(j, cfg);
	proc_stops_defer();
	if (tmpdir_make(j->dir, sizeof(j->dir), "bisect") || (ret = open_state(j))) {
		ret = ret ? ret : EXIT_HARNESS;
		goto out;
	}
	j->o.workdir = j->dir;
	load_metrics(j);
	for (size_t i = 0; i < j->n; i++)
		load_kept(j, &j->c[i]);
	if ((ret = search(j, &bs, verdicts)) || result_set_init(&set, j->n_m + 1)) {
		if (ret > 128)
			fprintf(stderr,
				"memgate: bisect: interrupted; what was measured is in %s: "
				"the same command goes on from there\n",
				j->state);
		goto out;
	}
	for (size_t m = 0; m < j->n_m; m++)
		metric_row(j, &bs, m, verdicts[m], &set);
	if (!(ret = text_report(j, &bs, verdicts)))
		ret = session_report_comparison(&j->ss, set.results, set.n);
out:
	result_set_release(&set);
	bisect_release(&bs);
	if (j->dir[0]) {
		tmpdir_remove(j->dir);
		proc_stops_resume();
	}
	if (!b->state && j->state[0])
		tmpdir_remove(j->state);
	session_close(&j->ss);
	free(j->c);
	free(j->names);
	free(j);
	return ret;
}
