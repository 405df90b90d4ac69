/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ab.c - drive two memgate binaries case by case, round by round, and judge head against base. */
#include "judge/ab.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "judge/ab_side.h"
#include "judge/history.h"
#include "util/proc.h"
#include "util/stats.h"
#include "util/text.h"
#include "util/util.h"

/* A side gets this long past its own per-case deadline to report the timeout itself. */
#define AB_SIDE_MARGIN_S 10
/* A guest side's whole run, boot to poweroff: memgate vm's own default. */
#define AB_GUEST_TIMEOUT_S 3600

/* A shared perf case: its name on each side, and per metric the round figures. */
struct ab_metric {
	char name[64], unit[16];
	enum metric_better better;
	double *base, *head; /* per round: the median of that round's samples */
	size_t n;	     /* rounds with a figure on both sides */
	size_t first_stage;  /* rounds of the first stage among them */
	bool flagged;	     /* the first look left it undecided: its case gets more rounds */
	bool shown_first;    /* the first look showed a regression: that look decides it */
};

struct ab_case {
	char key[256];
	const char *base_name, *head_name;
	const char *suite;
	struct ab_metric *metrics;
	size_t n_metrics;
	bool gated;	/* some metric is gated: worth running */
	bool simulated; /* counted under callgrind: the same count every round */
	unsigned int
	    samples; /* a side's samples a round when the case asks for its own (0: ab's) */
	unsigned int confirm; /* more rounds after an undecided first look: ab's, or fewer when
			       * the case asks (each of its rounds is a guest boot a side) */
	size_t n_gated;	      /* its gated metrics */
	double alpha;	      /* each gated metric's share of the run's alpha, at each look */
	/* The metric head's side can stop a sample of (list --json: cut_metric), -1: none; its
	 * rules' cut factor, and base's figures of it so far, whose median the bound multiplies. */
	int cut;
	double cut_factor, *cut_base, cut_ms;
	size_t n_cut_base;
	unsigned int head_cut; /* head's rounds whose figure is the bound: they were stopped */
};

/*
 * Where head's sample of the cut metric is stopped: cut x base's median so far (0: nowhere),
 * rounded as --cut prints it, so that a figure stopped there equals the bound exactly.
 */
static double cut_bound(struct ab_case *c)
{
	char text[32];

	/* A simulated case runs both sides at once: no base figures to bound head by then. */
	if (c->simulated || c->cut < 0 || c->cut_factor <= 0 || !c->n_cut_base)
		return 0;
	snprintf(text, sizeof(text), "%.6g",
		 c->cut_factor * stats_median(c->cut_base, c->n_cut_base));
	c->cut_ms = strtod(text, NULL);
	return c->cut_ms;
}

/* Run one round of @c on side @s; its figures go to the metrics as side @is_head. */
static int run_round(struct ab_side *s, const struct ab_opts *o, struct ab_case *c, bool is_head,
		     unsigned int round, struct mg_err *err)
{
	char path[600], log[600], n[16], w[16], seed[32], t[32], cut[96], doing[300];
	const char *extra[16] = {"--case",     is_head ? c->head_name : c->base_name,
				 "-n",	       n,
				 "--warmup",   w,
				 "--seed",     seed,
				 "--timeout",  t,
				 "--no-gates", "--json",
				 path};
	int n_extra = 13;
	double bound = is_head ? cut_bound(c) : 0;
	struct hist_run r;
	const struct hist_case *hc;
	int code, ret = 0;

	snprintf(path, sizeof(path), "%s/%s-round.json", o->workdir, s->role);
	snprintf(log, sizeof(log), "%s/%s-round.log", o->workdir, s->role);
	/* A simulated count is the same every time: one sample, no warm-up (see runner.c). */
	snprintf(n, sizeof(n), "%u", c->simulated ? 1 : c->samples ? c->samples : o->samples);
	snprintf(w, sizeof(w), "%u", c->simulated || c->samples ? 0 : o->warmup);
	/* The side kills its own case at ab's deadline and says so; ab waits a little longer. */
	snprintf(t, sizeof(t), "%.0f", o->timeout_s);
	/* The same workload seed for both sides of a round, another for each round; a simulated
	 * count, exact, judges one workload: the same in both of its rounds. */
	snprintf(seed, sizeof(seed), "%" PRIu64, o->seed + (c->simulated ? 0 : round));
	/* Head's boot past the rules' cut x base's median is stopped there and counted so. */
	if (bound > 0) {
		snprintf(cut, sizeof(cut), "%s=%.6g", c->metrics[c->cut].name, bound);
		extra[n_extra++] = "--cut";
		extra[n_extra++] = cut;
	}
	unlink(path);
	/* A side that hangs or dies on a case is that case's ERROR, not the harness's. */
	snprintf(doing, sizeof(doing), "on %s", extra[1]);
	ret = ab_side_run(s, o, extra, n_extra, log, o->timeout_s + AB_SIDE_MARGIN_S, 1, doing,
			  &code, err);
	if (ret)
		return ret;
	/* No results, or garbage for them, is the side failing on that case, as a crash is. */
	if (hist_load(&r, path, err)) {
		char line[160];

		ab_side_last_line(log, line, sizeof(line));
		return mg_err_set(err, ECANCELED,
				  "%s (%s) %s: no results memgate can read (%.200s); "
				  "it said: %s",
				  s->role, s->spec, doing, err->msg, line);
	}
	hc = hist_case(&r, extra[1]);
	/* The case itself did not pass on this side: no figures, and the reason to report. */
	if (hc && strcmp(hc->outcome, "PASS")) {
		ret = mg_err_set(err, strcmp(hc->outcome, "SKIP") ? ECANCELED : EAGAIN,
				 "%s: %s on %s: %s", extra[1], hc->outcome, s->role, hc->message);
		hc = NULL;
	}
	for (size_t m = 0; hc && m < c->n_metrics; m++) {
		struct ab_metric *am = &c->metrics[m];
		const struct hist_metric *hm = hist_metric(hc, am->name);
		double v = hm && hm->n ? stats_median(hm->v, hm->n) : NAN;

		(is_head ? am->head : am->base)[am->n] = v;
		if ((int)m == c->cut && isfinite(v) && !is_head)
			c->cut_base[c->n_cut_base++] = v;
		else if ((int)m == c->cut && is_head && bound > 0 && v >= bound)
			c->head_cut++;
	}
	if (!hc && !ret)
		ret = mg_err_set(err, EIO, "%s (%s) ran %s but reported no such case", s->role,
				 s->spec, extra[1]);
	hist_release(&r);
	return ret;
}

/* One side of a round run in a thread of its own. */
struct ab_side_run {
	struct ab_side *s;
	const struct ab_opts *o;
	struct ab_case *c;
	bool is_head;
	unsigned int round;
	struct mg_err err;
	int ret;
};

static void *side_thread(void *arg)
{
	struct ab_side_run *sr = arg;

	sr->ret = run_round(sr->s, sr->o, sr->c, sr->is_head, sr->round, &sr->err);
	return NULL;
}

/*
 * Both sides of a round of a simulated case at once: a simulated count does not depend on
 * what else the machine runs, so the round takes the time of the slower side, not of both.
 */
static int round_together(struct ab_side *base, struct ab_side *head, const struct ab_opts *o,
			  struct ab_case *c, unsigned int round, struct mg_err *err)
{
	struct ab_side_run sr = {.s = head, .o = o, .c = c, .is_head = true, .round = round};
	pthread_t t;
	int ret;

	if (pthread_create(&t, NULL, side_thread, &sr)) {
		ret = run_round(base, o, c, false, round, err);
		return ret ? ret : run_round(head, o, c, true, round, err);
	}
	ret = run_round(base, o, c, false, round, err);
	pthread_join(t, NULL);
	if (!ret && sr.ret) {
		*err = sr.err;
		ret = sr.ret;
	}
	return ret;
}

/* One round of @c: base then head on even rounds, head then base on odd ones (ABBA). */
static int round_of(struct ab_side *base, struct ab_side *head, const struct ab_opts *o,
		    struct ab_case *c, unsigned int round, struct mg_err *err)
{
	bool head_first = round % 2;
	int ret = c->simulated ? round_together(base, head, o, c, round, err)
			       : run_round(head_first ? head : base, o, c, head_first, round, err);

	if (!ret && !c->simulated)
		ret = run_round(head_first ? base : head, o, c, !head_first, round, err);
	if (ret)
		return ret;
	/* A round counts for a metric when both sides gave a figure. */
	for (size_t m = 0; m < c->n_metrics; m++) {
		struct ab_metric *am = &c->metrics[m];

		if (!isnan(am->base[am->n]) && !isnan(am->head[am->n]))
			am->n++;
	}
	return 0;
}

static void case_release(struct ab_case *c)
{
	free(c->cut_base);
	for (size_t m = 0; m < c->n_metrics; m++) {
		free(c->metrics[m].base);
		free(c->metrics[m].head);
	}
	free(c->metrics);
}

/* The qemu suite's figures of memgate's own reference: the same program on both sides. */
static bool memgate_own(const char *suite, const char *metric)
{
	return !strcmp(suite, "qemu") &&
	       (!strncmp(metric, "ref.", 4) || !strcmp(metric, "memset.ms") ||
		!strcmp(metric, "qemu_over_ref"));
}

/* The rules' tolerances of metric @def of case @full_name, as this A/B judges it: when the
 * sides differ in their QEMU only, memgate's own reference is context, not a verdict. */
static struct tolerance ab_tolerance(const struct ab_opts *o, const char *suite,
				     const char *full_name, const struct metric_def *def)
{
	struct tolerance t = rules_tolerance(o->rules, suite, full_name, def);

	if (o->guests && t.gate && !strcmp(suite, "kvm") && !strncmp(def->name, "ref.", 4)) {
		t.gate = false;
		t.line = 0;
		t.why = "memgate's own reference, the same program in both guests: they differ in "
			"their kernel (context, not judged)";
	}
	if (o->qemu_only && t.gate && memgate_own(suite, def->name)) {
		t.gate = false;
		t.line = 0; /* not a rule's: this A/B's */
		t.why = "memgate's own reference, the same program on both sides: they differ in "
			"their QEMU only (context, not judged)";
	}
	return t;
}

/* A perf case both sides list, its metrics from head's definition, room for every round. */
static int case_make(json_t *bc, json_t *hc, const char *key, unsigned int rounds,
		     const struct ab_opts *o, struct ab_case *c)
{
	const json_t *metrics = json_object_get(hc, "metrics");

	memset(c, 0, sizeof(*c));
	snprintf(c->key, sizeof(c->key), "%s", key);
	c->base_name = json_string_value(json_object_get(bc, "name"));
	c->head_name = json_string_value(json_object_get(hc, "name"));
	c->simulated = !strcmp(ab_side_string(json_object_get(hc, "counter")), "simulated") &&
		       !strcmp(ab_side_string(json_object_get(bc, "counter")), "simulated");
	/* Head's choice (a sample that is a whole boot): both sides run the same count. */
	c->samples = (unsigned int)json_integer_value(json_object_get(hc, "ab_samples"));
	c->confirm = (unsigned int)json_integer_value(json_object_get(hc, "ab_confirm_rounds"));
	c->confirm = c->confirm && c->confirm < o->confirm_rounds ? c->confirm : o->confirm_rounds;
	c->suite = json_string_value(json_object_get(hc, "suite"));
	c->metrics = calloc(json_array_size(metrics) + 1, sizeof(*c->metrics));
	if (!c->metrics || !c->base_name || !c->head_name || !c->suite)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(metrics); i++) {
		const json_t *jm = json_array_get(metrics, i);
		struct ab_metric *m = &c->metrics[c->n_metrics++];
		struct metric_def def;

		snprintf(m->name, sizeof(m->name), "%s",
			 json_string_value(json_object_get(jm, "name")));
		snprintf(m->unit, sizeof(m->unit), "%s",
			 json_string_value(json_object_get(jm, "unit")));
		m->better = strcmp(ab_side_string(json_object_get(jm, "better")), "higher")
				? LOWER_IS_BETTER
				: HIGHER_IS_BETTER;
		m->base = calloc(rounds + 1, sizeof(*m->base));
		m->head = calloc(rounds + 1, sizeof(*m->head));
		if (!m->base || !m->head)
			return -ENOMEM;
		def = (struct metric_def){.name = m->name, .unit = m->unit, .better = m->better};
		c->n_gated += ab_tolerance(o, c->suite, c->head_name, &def).gate;
	}
	c->cut = -1;
	for (size_t m = 0; m < c->n_metrics && json_is_string(json_object_get(hc, "cut_metric"));
	     m++) {
		struct metric_def def = {.name = c->metrics[m].name,
					 .unit = c->metrics[m].unit,
					 .better = c->metrics[m].better};

		if (strcmp(c->metrics[m].name,
			   json_string_value(json_object_get(hc, "cut_metric"))))
			continue;
		c->cut = (int)m;
		c->cut_factor = ab_tolerance(o, c->suite, c->head_name, &def).cut;
		c->cut_base = calloc(rounds + 1, sizeof(*c->cut_base));
		if (!c->cut_base)
			return -ENOMEM;
	}
	c->gated = c->n_gated > 0;
	return 0;
}

/* What the tolerance and the spread of @x came from, for its message. */
static void judged_how(struct judged *x, size_t n, bool looked_twice, const struct ab_opts *o,
		       const struct verdict_noise *noise, bool simulated, unsigned int samples)
{
	const struct verdict_figures *f = &x->f;
	char spread[200];

	/* Only a calibrated width (@noise) raises the tolerance past the rule's. */
	if (noise && f->tolerance > x->tol.ab)
		snprintf(x->tol_from, sizeof(x->tol_from),
			 "the calibrated width: %.0f x %.3g%% of an A/A run, %.160s of %s, %zu A/A "
			 "rounds; the rule's %.0f%% is less",
			 VERDICT_WIDTH_FACTOR, 100 * noise->width, o->calib->path, o->calib->when,
			 noise->rounds, 100 * x->tol.ab);
	else if (x->tol.line > 0)
		snprintf(x->tol_from, sizeof(x->tol_from), "rules line %d: %s", x->tol.line,
			 x->tol.why);
	else
		snprintf(x->tol_from, sizeof(x->tol_from), "%s", x->tol.why);
	if (f->exact)
		snprintf(spread, sizeof(spread), "every round the same: the mean is exact%s",
			 simulated && o->guests ? " (instruction counts under icount)"
			 : simulated		? " (simulated counts)"
			 : o->calib		? " (no calibration for this host class and metric)"
						: " (no calibration for this host class)");
	else if (noise && f->calibrated)
		snprintf(
		    spread, sizeof(spread),
		    "z-test with the spread calibrated for this host class (sd %.3g%% a round, "
		    "%zu A/A rounds; these rounds' own: %.3g%%)",
		    100 * f->sd_used, noise->rounds, 100 * f->sd_own);
	else
		snprintf(spread, sizeof(spread),
			 "t-test with these rounds' own spread (sd %.3g%%): no calibration for "
			 "this host class%s, so the rule's tolerance applies",
			 100 * f->sd_own, o->calib ? " and metric" : "");
	snprintf(x->how, sizeof(x->how),
		 "%zu rounds in turn, balanced (base first in half; %u sample%s each)%s; the mean "
		 "of the log ratios, %s; one-sided at alpha %.3g (%.3g over %zu gated metrics and "
		 "%d looks)",
		 n, samples, samples == 1 ? "" : "s",
		 looked_twice ? ", more rounds after an undecided first look" : "", spread,
		 x->p_alpha, o->rules->alpha, x->m_family, o->confirm_rounds ? 2 : 1);
}

/*
 * The judged form of metric @m of @c: the mean of the log ratios of all its rounds (the
 * first look's, or both looks' when it was undecided at the first), at the case's alpha.
 */
static void judge_metric(const struct ab_case *c, const struct ab_metric *m,
			 const struct ab_opts *o, bool final, struct judged *x)
{
	struct metric_def def = {.name = m->name, .unit = m->unit, .better = m->better};
	/* A regression shown at the first look stays shown: each look has its share of alpha. */
	size_t n = final && m->shown_first ? m->first_stage : m->n;
	const struct verdict_noise *noise;

	memset(x, 0, sizeof(*x));
	snprintf(x->suite, sizeof(x->suite), "%s", c->suite);
	snprintf(x->case_name, sizeof(x->case_name), "%s", c->head_name);
	snprintf(x->metric, sizeof(x->metric), "%s", m->name);
	snprintf(x->unit, sizeof(x->unit), "%s", m->unit);
	snprintf(x->test_name, sizeof(x->test_name), "%s:%s",
		 strchr(c->key, '.') ? strchr(c->key, '.') + 1 : c->key, m->name);
	x->better = m->better;
	x->tol = ab_tolerance(o, c->suite, c->head_name, &def);
	/* A simulated count has no noise to calibrate: its rounds are exact. */
	noise = c->simulated ? NULL : calib_find(o->calib, c->head_name, m->name);
	x->v = verdict_rounds(m->base, m->head, n, m->better, x->tol.ab, noise, c->alpha, &x->f);
	x->tolerance = x->f.tolerance;
	x->p_alpha = c->alpha;
	x->m_family = o->gated_metrics;
	x->rounds_mean = true;
	x->n_v = n < JUDGED_ROUNDS ? n : JUDGED_ROUNDS;
	memcpy(x->base_v, m->base, x->n_v * sizeof(*m->base));
	memcpy(x->head_v, m->head, x->n_v * sizeof(*m->head));
	x->v_test = x->v;
	x->p = x->f.p;
	x->candidate = x->tol.gate;
	x->rejected = x->tol.gate && x->v == VERDICT_REGRESSION;
	/* Undecided at the last look, or noisier than this host class ever was: not a verdict.
	 * Reported as such (Jenkins: unstable), never a pass and never a failed build. */
	x->unstable = x->tol.gate && !x->f.undefined[0] &&
		      (x->v == VERDICT_UNSTABLE || (final && x->v == VERDICT_INCONCLUSIVE));
	judged_how(x, n, m->n > m->first_stage, o, noise, c->simulated,
		   c->simulated ? 1
		   : c->samples ? c->samples
				: o->samples);
	if (c->head_cut && (int)(m - c->metrics) == c->cut) {
		size_t used = strlen(x->how);

		snprintf(
		    x->how + used, sizeof(x->how) - used,
		    "; %u of head's rounds were stopped at %.3g x base's median (%.6g %s, rules "
		    "line %d) and count at that bound",
		    c->head_cut, c->cut_factor, c->cut_ms, m->unit, x->tol.line);
	}
}

/* The first look: flag the gated metrics it left undecided (past the tolerance, not shown). */
static bool flag_case(struct ab_case *c, const struct ab_opts *o)
{
	bool any = false;

	for (size_t m = 0; m < c->n_metrics; m++) {
		struct ab_metric *am = &c->metrics[m];
		struct judged x;

		am->first_stage = am->n;
		judge_metric(c, am, o, false, &x);
		am->flagged = x.tol.gate && x.v == VERDICT_INCONCLUSIVE && !x.f.undefined[0];
		am->shown_first = x.tol.gate && x.v == VERDICT_REGRESSION;
		any |= am->flagged;
	}
	return any;
}

/* @key without its "suite." prefix: the suite is the JUnit class already. */
static const char *in_suite(const char *key)
{
	const char *dot = strchr(key, '.');

	return dot ? dot + 1 : key;
}

/* A result of @suite's group @group named @name, with @outcome and @msg (for extras). */
static void extra_add(struct ab_outcome *out, const char *suite, const char *group,
		      const char *name, enum case_outcome outcome, const char *msg, double time_s)
{
	const struct case_def def = {.group = group, .kind = CASE_CHECK, .doc = ""};
	struct case_result *r = result_set_add(&out->extra, NULL, suite, name, &def);

	if (!r)
		return; /* memory is short: the row is lost, the run goes on */
	r->time_s = time_s;
	if (outcome != OUTCOME_PASS)
		case_result_set_outcome(r, outcome, msg);
}

/* A result file's outcome word as the result model's. */
static enum case_outcome outcome_of(const char *word)
{
	return !strcmp(word, "PASS")   ? OUTCOME_PASS
	       : !strcmp(word, "SKIP") ? OUTCOME_SKIP
	       : !strcmp(word, "FAIL") ? OUTCOME_FAIL
				       : OUTCOME_ERROR;
}

/* The run's alpha, split evenly over its gated metrics and the looks at each: Bonferroni,
 * valid whatever the metrics' dependence and however many rounds a look adds. */
static void split_alpha(struct ab_case *cases, size_t n, struct ab_opts *o)
{
	for (size_t i = 0; i < n; i++)
		o->gated_metrics += cases[i].n_gated;
	for (size_t i = 0; i < n; i++)
		cases[i].alpha = o->rules->alpha /
				 (double)(o->gated_metrics ? o->gated_metrics : 1) /
				 (o->confirm_rounds ? 2 : 1);
}

/* Head's checks, run once, as results of their own suites. */
static int head_checks(struct ab_side *head, const struct ab_opts *o, const struct ab_side_list *lh,
		       struct hist_run *checks, struct mg_err *err)
{
	char path[600], log[600], line[256], t[32];
	const char *extra[] = {"--checks", "--no-gates", "--timeout", t, "--json", path};
	int code, ret;

	snprintf(path, sizeof(path), "%s/head-checks.json", o->workdir);
	snprintf(log, sizeof(log), "%s/head-checks.log", o->workdir);
	snprintf(t, sizeof(t), "%.0f", o->timeout_s);
	memset(checks, 0, sizeof(*checks));
	/* Head lists no check in the selection: none to run (its exit 2 would say the same). */
	if (!ab_side_count(lh, "check"))
		return 0;
	/* Head dying on its checks is a result of head (an ERROR), not the harness failing. */
	ret = ab_side_run(head, o, extra, (int)ARRAY_SIZE(extra), log, o->timeout_s * 4, 2,
			  "running its checks", &code, err);
	if (ret)
		return ret;
	/* Head listed checks: an exit 2 is head refusing what it was asked, not "none matched". */
	if (code == 2) {
		ab_side_last_line(log, line, sizeof(line));
		return mg_err_set(err, ECANCELED,
				  "head (%s) refused to run its checks (exit 2): %s", head->spec,
				  line);
	}
	if (hist_load(checks, path, err))
		return -ECANCELED;
	return 0;
}

/* Every perf case of @a whose key @b lacks: a SKIP saying which side has it. */
static void one_sided(const struct ab_side_list *a, const struct ab_side_list *b, const char *why,
		      struct ab_outcome *out)
{
	char key[256];

	for (size_t i = 0; i < a->n; i++) {
		json_t *c = json_array_get(a->root, i);
		const char *name = ab_side_string(json_object_get(c, "name"));

		if (strcmp(ab_side_string(json_object_get(c, "kind")), "perf") ||
		    ab_side_listed(b, case_key(name, key, sizeof(key))))
			continue;
		extra_add(out, "ab", ab_side_string(json_object_get(c, "suite")), in_suite(key),
			  OUTCOME_SKIP, why, 0);
	}
}

/* @c just made (@made: 0, or it failed), kept as the *@n-th case when some metric of it is
 * gated, else released as a SKIP saying why. Returns 0 or -ENOMEM. */
static int keep_gated(struct ab_case *c, int made, const char *key, size_t *n,
		      struct ab_outcome *out)
{
	if (made) {
		case_release(c);
		return -ENOMEM;
	}
	if (c->gated) {
		(*n)++;
		return 0;
	}
	extra_add(out, "ab", c->suite, in_suite(key), OUTCOME_SKIP,
		  "no metric of it is gated (the rules say gate = false): not run", 0);
	case_release(c);
	return 0;
}

/* The shared perf cases worth running (some metric gated); the others are SKIPs. */
static int shared_cases(const struct ab_side_list *lb, const struct ab_side_list *lh,
			const struct ab_opts *o, struct ab_case **cases, size_t *n,
			struct ab_outcome *out)
{
	unsigned int rounds = o->rounds + o->confirm_rounds;
	char key[256];

	*cases = calloc(lh->n + 1, sizeof(**cases));
	*n = 0;
	if (!*cases)
		return -ENOMEM;
	for (size_t i = 0; i < lh->n; i++) {
		json_t *hc = json_array_get(lh->root, i), *bc;
		struct ab_case *c = &(*cases)[*n];

		if (strcmp(ab_side_string(json_object_get(hc, "kind")), "perf"))
			continue;
		case_key(ab_side_string(json_object_get(hc, "name")), key, sizeof(key));
		bc = ab_side_listed(lb, key);
		if (!bc)
			continue; /* one_sided() reports it */
		if (keep_gated(c, case_make(bc, hc, key, rounds, o, c), key, n, out))
			return -ENOMEM;
	}
	return 0;
}

/* A gated metric no round measured on both sides is a SKIP saying why, never a silent pass. */
static void unmeasured(const struct ab_case *c, const struct ab_opts *o, struct ab_outcome *out)
{
	char name[320], why[300];

	for (size_t m = 0; m < c->n_metrics; m++) {
		const struct ab_metric *am = &c->metrics[m];
		struct metric_def def = {.name = am->name, .unit = am->unit, .better = am->better};

		if (am->n || !ab_tolerance(o, c->suite, c->head_name, &def).gate)
			continue;
		snprintf(name, sizeof(name), "%s:%s", in_suite(c->key), am->name);
		if (c->head_cut && c->cut >= 0)
			snprintf(
			    why, sizeof(why),
			    "no round measured it on both sides: %u of head's boots were stopped "
			    "at %.3g x base's median of %s, before it was measured",
			    c->head_cut, c->cut_factor, c->metrics[c->cut].name);
		else
			snprintf(why, sizeof(why), "no round measured it on both sides");
		extra_add(out, "ab", c->suite, name, OUTCOME_SKIP, why, 0);
	}
}

/* Both rounds stages of one case; a side that could not measure it ends its comparison. */
static int run_case(struct ab_side *base, struct ab_side *head, const struct ab_opts *o,
		    struct ab_case *c, struct ab_outcome *out, struct mg_err *err)
{
	unsigned int r = 0;
	int ret = 0;
	int64_t t0 = util_now_ns();
	bool flagged = false;

	/* A simulated count is exact: two rounds (one in each order) are all it needs. */
	for (; !ret && r < (c->simulated ? 2 : o->rounds); r++)
		ret = round_of(base, head, o, c, r, err);
	if (!ret && (flagged = flag_case(c, o)))
		for (unsigned int k = 0; !ret && k < c->confirm; k++, r++)
			ret = round_of(base, head, o, c, r, err);
	/* A line a case on stderr, terminal or not: the Jenkins console shows progress. */
	fprintf(stderr, "memgate: ab: %s: %u rounds%s in %.1f s\n", c->key, r,
		flagged ? " (undecided at the first look: more rounds)" : "",
		(double)(util_now_ns() - t0) / 1e9);
	if (ret == -ECANCELED || ret == -EAGAIN) {
		/* The case broke or skipped on a side: a result of its own, not a verdict. */
		extra_add(out, "ab", c->suite, in_suite(c->key),
			  ret == -EAGAIN ? OUTCOME_SKIP : OUTCOME_ERROR, err->msg, 0);
		for (size_t m = 0; m < c->n_metrics; m++)
			c->metrics[m].n = 0;
		return 0;
	}
	if (!ret)
		unmeasured(c, o, out);
	return ret;
}

/* Judge every metric with rounds (the looks already split alpha), and make the results. */
static int conclude_all(struct ab_case *cases, size_t n, const struct ab_opts *o,
			struct ab_outcome *out)
{
	struct judged *j = NULL;
	size_t nj = 0, total = 0;

	for (size_t i = 0; i < n; i++)
		total += cases[i].n_metrics;
	j = calloc(total + 1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		bool compared = false;

		/* Compared when any metric has rounds: a stopped boot measures only its time. */
		for (size_t m = 0; m < cases[i].n_metrics; m++)
			if (cases[i].metrics[m].n) {
				judge_metric(&cases[i], &cases[i].metrics[m], o, true, &j[nj++]);
				compared = true;
			}
		out->cases_compared += compared;
	}
	return compare_results_make(j, nj, "ab", o->context ? o->context : "", &out->verdicts);
}

/* ---- guests: each round a boot of each side's guest, every case run in it ----------------- */

/* A guest's suite without its prefix: "guest[kernel=6.1.0-28-cloud-amd64].kvm" is "kvm". */
static const char *plain_suite(const char *suite)
{
	const char *p = strstr(suite, "].");

	return p ? p + 2 : suite;
}

/* The key of guest case @hc: its name as a run on the host would give it. */
static const char *guest_key(const struct hist_case *hc, char *buf, size_t len)
{
	char full[512];

	snprintf(full, sizeof(full), "%s.%s.%s", plain_suite(hc->suite), hc->group, hc->name);
	return case_key(full, buf, len);
}

static const struct hist_case *guest_case(const struct hist_run *r, const char *key)
{
	char buf[256];

	for (size_t i = 0; i < r->n_cases; i++)
		if (!strcmp(guest_key(&r->cases[i], buf, sizeof(buf)), key))
			return &r->cases[i];
	return NULL;
}

/* The guest's property @name (memgate vm's "vm" object), "" when it did not say. */
static const char *vm_prop(const struct hist_run *r, const char *name)
{
	return ab_side_string(json_object_get(json_object_get(r->root, "vm"), name));
}

/* KVM_CAP_NR_MEMSLOTS as @r's kvm cases read it in the guest, "?" when none said. */
static const char *guest_memslots(const struct hist_run *r)
{
	json_t *cases = json_object_get(r->root, "cases"), *c;
	size_t i;

	json_array_foreach(cases, i, c)
	{
		const char *v = json_string_value(
		    json_object_get(json_object_get(c, "properties"), "kvm_cap_nr_memslots"));
		if (v)
			return v;
	}
	return "?";
}

/* Where side @s's guest of round @round writes its results (@ext "json") or its output ("log"). */
static const char *guest_file(const struct ab_side *s, const struct ab_opts *o, unsigned int round,
			      const char *ext, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s-guest-%u.%s", o->workdir, s->role, round, ext);
	return buf;
}

/* One boot of side @s's guest running every selected case; its results into @r. */
static int guest_round(struct ab_side *s, const struct ab_opts *o, unsigned int round,
		       struct hist_run *r, struct mg_err *err)
{
	char path[600], log[600], n[16], w[16], seed[32], t[32], line[256];
	const char *extra[] = {"-n", n,		  "--warmup", w,	   "--seed",
			       seed, "--timeout", t,	      "--no-gates"};
	int code = 0, ret;

	guest_file(s, o, round, "json", path, sizeof(path));
	guest_file(s, o, round, "log", log, sizeof(log));
	snprintf(n, sizeof(n), "%u", o->samples);
	snprintf(w, sizeof(w), "%u", o->warmup);
	snprintf(t, sizeof(t), "%.0f", o->timeout_s);
	/* The same workload in every round and both guests: their figures are compared whole. */
	snprintf(seed, sizeof(seed), "%" PRIu64, o->seed);
	unlink(path);
	fprintf(stderr, "memgate: ab: round %u, %s's guest (%s) ...\n", round + 1, s->role,
		s->spec);
	ret = ab_side_guest_run(s, o, extra, (int)ARRAY_SIZE(extra), path, log,
				ab_side_guest_deadline(s, o, AB_GUEST_TIMEOUT_S), &code, err);
	if (ret)
		return ret;
	if (hist_load(r, path, err)) {
		ab_side_last_line(log, line, sizeof(line));
		/* Exit 2: memgate vm refused its options, or the kernel it was given. */
		return mg_err_set(err, code == 2 ? EINVAL : ECHILD,
				  "--%s %s: its guest gave no results (exit %d): %s", s->role,
				  s->spec, code, line);
	}
	return 0;
}

/* @c from head's guest case @hc of the first round (base's passed too); @exact: icount's
 * counts. */
static int guest_case_make(const struct hist_case *hc, const char *key, bool exact,
			   const struct ab_opts *o, struct ab_case *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->key, sizeof(c->key), "%s", key);
	c->base_name = c->head_name = c->key;
	c->suite = plain_suite(hc->suite);
	c->simulated = exact;
	c->cut = -1;
	c->metrics = calloc(hc->n_metrics + 1, sizeof(*c->metrics));
	if (!c->metrics)
		return -ENOMEM;
	for (size_t i = 0; i < hc->n_metrics; i++) {
		const struct hist_metric *hm = &hc->metrics[i];
		struct ab_metric *m = &c->metrics[c->n_metrics++];
		struct metric_def def;

		snprintf(m->name, sizeof(m->name), "%s", hm->name);
		/* Under icount the TSC is the instruction count (run/guest.h). */
		snprintf(m->unit, sizeof(m->unit), "%s",
			 exact && !strcmp(hm->unit, "cycles") ? "instructions" : hm->unit);
		m->better = hm->better;
		m->base = calloc(o->rounds + 1, sizeof(*m->base));
		m->head = calloc(o->rounds + 1, sizeof(*m->head));
		if (!m->base || !m->head)
			return -ENOMEM;
		def = (struct metric_def){.name = m->name, .unit = m->unit, .better = m->better};
		c->n_gated += ab_tolerance(o, c->suite, c->head_name, &def).gate;
	}
	c->gated = c->n_gated > 0;
	return 0;
}

/* @r's figures of @c as side @is_head's of the round under way. */
static void guest_figures(struct ab_case *c, const struct hist_run *r, bool is_head)
{
	const struct hist_case *hc = guest_case(r, c->key);

	for (size_t m = 0; m < c->n_metrics; m++) {
		struct ab_metric *am = &c->metrics[m];
		const struct hist_metric *hm = hc ? hist_metric(hc, am->name) : NULL;

		(is_head ? am->head : am->base)[am->n] =
		    hm && hm->n ? stats_median(hm->v, hm->n) : NAN;
	}
}

/* "base's guest (kernel 6.1.0-28-cloud-amd64, 32764 memslots)" into @buf. */
static const char *guest_said(const struct hist_run *r, const char *role, char *buf, size_t len)
{
	const char *k = vm_prop(r, "vm.kernel");

	snprintf(buf, len, "%s's guest (%s%s, KVM_CAP_NR_MEMSLOTS %s)", role,
		 *k ? "kernel " : "the kit's kernel", k, guest_memslots(r));
	return buf;
}

/*
 * The first round's cases: shared perf cases that passed in both guests become A/B cases;
 * one guest's alone (a slot count only one kernel allows), or failed in either, a result of
 * its own; head's checks, results as they came.
 */
static int guest_cases(const struct hist_run *b, const struct hist_run *h, bool exact,
		       const struct ab_opts *o, struct ab_case **cases, size_t *n,
		       struct ab_outcome *out)
{
	char key[256], why[600], bs[200], hs[200];

	*cases = calloc(h->n_cases + 1, sizeof(**cases));
	*n = 0;
	if (!*cases)
		return -ENOMEM;
	guest_said(b, "base", bs, sizeof(bs));
	guest_said(h, "head", hs, sizeof(hs));
	for (size_t i = 0; i < h->n_cases; i++) {
		const struct hist_case *hc = &h->cases[i], *bc;
		struct ab_case *c = &(*cases)[*n];

		guest_key(hc, key, sizeof(key));
		if (strcmp(hc->kind, "perf")) {
			extra_add(out, hc->suite, hc->group, hc->name, outcome_of(hc->outcome),
				  hc->message, hc->time_s);
			continue;
		}
		out->perf_listed[1]++;
		bc = guest_case(b, key);
		if (!bc) {
			snprintf(why, sizeof(why), "only %s ran it, not %s: reported, not judged",
				 hs, bs);
			extra_add(out, "ab", plain_suite(hc->suite), in_suite(key), OUTCOME_SKIP,
				  why, 0);
			continue;
		}
		if (strcmp(hc->outcome, "PASS") || strcmp(bc->outcome, "PASS")) {
			const struct hist_case *bad = strcmp(hc->outcome, "PASS") ? hc : bc;

			snprintf(why, sizeof(why), "%s on %s: %s", bad->outcome,
				 bad == hc ? hs : bs, bad->message ? bad->message : "");
			extra_add(out, "ab", plain_suite(hc->suite), in_suite(key),
				  strcmp(bad->outcome, "SKIP") ? OUTCOME_ERROR : OUTCOME_SKIP, why,
				  0);
			continue;
		}
		if (keep_gated(c, guest_case_make(hc, key, exact, o, c), key, n, out))
			return -ENOMEM;
	}
	for (size_t i = 0; i < b->n_cases; i++) {
		const struct hist_case *bc = &b->cases[i];

		if (strcmp(bc->kind, "perf"))
			continue;
		out->perf_listed[0]++;
		if (guest_case(h, guest_key(bc, key, sizeof(key))))
			continue;
		snprintf(why, sizeof(why), "only %s ran it, not %s: reported, not judged", bs, hs);
		extra_add(out, "ab", plain_suite(bc->suite), in_suite(key), OUTCOME_SKIP, why, 0);
	}
	return 0;
}

/* The last @n lines of @text (all of it when shorter). */
static const char *last_lines(const char *text, int n)
{
	const char *p = text + strlen(text);

	while (p > text && (p[-1] == '\n' || p[-1] == ' '))
		p--;
	while (p > text && n > 0)
		if (*--p == '\n')
			n--;
	return p == text ? p : p + 1;
}

/*
 * Side @s's guest ran no case in round @round: an ERROR row of ab's saying @msg, with the
 * guest's console's end @tail, and the first such failure's words in @out->boot_error.
 */
static void failed_row(const struct ab_side *s, unsigned int round, const char *msg,
		       const char *tail, struct ab_outcome *out)
{
	static const struct case_def def = {.group = "boot",
					    .kind = CASE_CHECK,
					    .doc = "the side's guest boots and runs the cases"};
	struct case_result *row;
	char why[900];

	snprintf(why, sizeof(why), "round %u, %s's guest (%s) ran no case: %s", round + 1, s->role,
		 s->spec, msg);
	row = result_set_add(&out->extra, NULL, "ab", s->role, &def);
	if (row) {
		case_result_set_outcome(row, OUTCOME_ERROR, why);
		row->stderr_tail = *tail ? strdup(tail) : NULL;
	}
	if (!out->boots_failed++)
		snprintf(out->boot_error, sizeof(out->boot_error), "%s%s%s", why,
			 *tail ? "; the end of its console:\n" : "", last_lines(tail, 12));
}

/* Did side @s's guest fail in round @round (vm's one-row report: vm.boot, not PASS)? Then its
 * row (failed_row()). */
static bool boot_failed(const struct hist_run *r, const struct ab_side *s, unsigned int round,
			struct ab_outcome *out)
{
	json_t *cases = json_object_get(r->root, "cases"), *c;
	size_t i;

	json_array_foreach(cases, i, c)
	{
		if (strcmp(ab_side_string(json_object_get(c, "group")), "vm") ||
		    strcmp(ab_side_string(json_object_get(c, "case")), "boot") ||
		    !strcmp(ab_side_string(json_object_get(c, "outcome")), "PASS"))
			continue;
		failed_row(s, round, ab_side_string(json_object_get(c, "message")),
			   ab_side_string(json_object_get(c, "stderr_tail")), out);
		return true;
	}
	return false;
}

/*
 * Round @round's boot of side @s's guest into @run; a guest that hung or died (vm killed at
 * ab's deadline, a crash) is that round's failure, said in @killed, not the A/B's end.
 * Returns 0 or -errno with @err.
 */
static int guest_round_of(struct ab_side *s, const struct ab_opts *o, unsigned int round,
			  struct hist_run *run, char *killed, size_t len, struct mg_err *err)
{
	int ret = guest_round(s, o, round, run, err);

	killed[0] = '\0';
	if (ret == -ECANCELED && !proc_stop) {
		char said[300];
		size_t n = (size_t)snprintf(said, sizeof(said), "%s (%s): ", s->role, s->spec);

		/* The row names the side already. */
		snprintf(killed, len, "%s", err->msg + (strncmp(err->msg, said, n) ? 0 : n));
		mg_err_clear(err);
		ret = 0;
	}
	return ret;
}

/* The rows of round @round's failed guests; whether either failed. */
static bool round_failed(struct hist_run *runs, struct ab_side *base, struct ab_side *head,
			 char killed[2][600], unsigned int round, const struct ab_opts *o,
			 struct ab_outcome *out)
{
	struct ab_side *sides[2] = {base, head};
	bool failed = false;

	for (int i = 0; i < 2; i++) {
		char log[600], *tail;

		if (!killed[i][0]) {
			failed = boot_failed(&runs[i], sides[i], round, out) || failed;
			continue;
		}
		tail = text_read_file(guest_file(sides[i], o, round, "log", log, sizeof(log)),
				      1u << 20);
		failed_row(sides[i], round, killed[i], tail ? last_lines(tail, 40) : "", out);
		free(tail);
		failed = true;
	}
	return failed;
}

/*
 * ab of two guests (both sides `MEMGATE vm ...`, a kernel each, say): a round boots each
 * side's guest once and runs every selected case in it, base first in even rounds. Under
 * icount in both (vm.clock) the figures are instruction counts, exact: two rounds, as for
 * simulated counts; otherwise o->rounds, no second look (each round is two boots).
 */
static int ab_run_guests(struct ab_side *base, struct ab_side *head, struct ab_opts *o,
			 struct ab_outcome *out, struct mg_err *err)
{
	struct hist_run runs[2];
	struct ab_case *cases = NULL;
	size_t n_cases = 0;
	bool exact = false;
	unsigned int rounds = o->rounds ? o->rounds : 2;
	char context[1600];  /* the verdicts' context while they are judged, here */
	char killed[2][600]; /* base's and head's guest, killed this round: why */
	const char *given = o->context;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	proc_stops_defer();
	for (unsigned int r = 0; !ret && r < rounds; r++) {
		bool head_first = r % 2;
		struct ab_side *first = head_first ? head : base,
			       *second = head_first ? base : head;

		memset(runs, 0, sizeof(runs));
		ret = guest_round_of(first, o, r, &runs[head_first], killed[head_first],
				     sizeof(killed[0]), err);
		if (!ret)
			ret = guest_round_of(second, o, r, &runs[!head_first], killed[!head_first],
					     sizeof(killed[0]), err);
		if (!ret && r == 0 &&
		    result_set_init(&out->extra,
				    runs[0].n_cases + runs[1].n_cases + 2 * rounds + 1))
			ret = mg_err_set(err, ENOMEM, "out of memory");
		/* A guest that did not run the cases is that round's ERROR; in the first round,
		 * with nothing to compare against, the end: its boot fails alike in the next. */
		if (!ret) {
			bool failed = round_failed(runs, base, head, killed, r, o, out);

			if (failed && r == 0) {
				hist_release(&runs[0]);
				hist_release(&runs[1]);
				break;
			}
		}
		if (!ret && r == 0) {
			exact = !strcmp(vm_prop(&runs[0], "vm.clock"), "icount") &&
				!strcmp(vm_prop(&runs[1], "vm.clock"), "icount");
			rounds = exact ? 2 : rounds;
			snprintf(context, sizeof(context),
				 "%s; base's guest: kernel %s, %s; head's guest: kernel %s, %s%s",
				 o->context ? o->context : "", vm_prop(&runs[0], "vm.kernel"),
				 vm_prop(&runs[0], "vm.accel"), vm_prop(&runs[1], "vm.kernel"),
				 vm_prop(&runs[1], "vm.accel"),
				 exact ? "; figures under icount: instruction counts, exact" : "");
			o->context = context;
			fprintf(stderr, "memgate: ab: %s\n", context);
			if (guest_cases(&runs[0], &runs[1], exact, o, &cases, &n_cases, out))
				ret = mg_err_set(err, ENOMEM, "out of memory");
			o->confirm_rounds = 0; /* one look: judged_how() says so */
			split_alpha(cases, n_cases, o);
		}
		for (size_t i = 0; !ret && i < n_cases; i++) {
			struct ab_case *c = &cases[i];

			guest_figures(c, &runs[0], false);
			guest_figures(c, &runs[1], true);
			for (size_t m = 0; m < c->n_metrics; m++) {
				struct ab_metric *am = &c->metrics[m];

				if (!isnan(am->base[am->n]) && !isnan(am->head[am->n]))
					am->n++;
			}
		}
		if (r == 0 && !ret) {
			out->keep_guests[0] = runs[0];
			out->keep_guests[1] = runs[1];
		} else {
			hist_release(&runs[0]);
			hist_release(&runs[1]);
		}
	}
	if (ret == -EINTR)
		out->interrupted = proc_stop;
	/* One look at all of them. */
	for (size_t i = 0; i < n_cases; i++)
		for (size_t m = 0; m < cases[i].n_metrics; m++)
			cases[i].metrics[m].first_stage = cases[i].metrics[m].n;
	if ((!ret || ret == -EINTR) && conclude_all(cases, n_cases, o, out))
		ret = mg_err_set(err, ENOMEM, "out of memory judging");
	o->context = given;
	/* A guest that failed as a program: ab's failure, said; one that refused its options:
	 * bad usage (ab maps -EINVAL so). */
	if (ret == -ECANCELED)
		ret = mg_err_set(err, ECHILD, "%s", err->msg);
	for (size_t i = 0; i < n_cases; i++)
		case_release(&cases[i]);
	free(cases);
	proc_stops_resume();
	return ret;
}

int ab_run(struct ab_side *base, struct ab_side *head, const struct ab_opts *opts,
	   struct ab_outcome *out, struct mg_err *err)
{
	struct ab_opts local = *opts, *o = &local;
	struct ab_side_list lb = {0}, lh = {0};
	struct hist_run checks = {0};
	struct ab_case *cases = NULL;
	size_t n_cases = 0;
	int ret;

	if (o->guests)
		return ab_run_guests(base, head, o, out, err);
	memset(out, 0, sizeof(*out));
	proc_stops_defer();
	ret = ab_side_list(base, o, &lb, err);
	if (!ret)
		ret = ab_side_list(head, o, &lh, err);
	if (!ret)
		ret = head_checks(head, o, &lh, &checks, err);
	if ((!ret || ret == -ECANCELED) &&
	    result_set_init(&out->extra, 2 * (lb.n + lh.n) + checks.n_cases + 1))
		ret = mg_err_set(err, ENOMEM, "out of memory");
	if (ret == -ECANCELED) {
		extra_add(out, "ab", "checks", "head", OUTCOME_ERROR, err->msg, 0);
		ret = 0;
	}
	for (size_t i = 0; !ret && i < checks.n_cases; i++) {
		const struct hist_case *c = &checks.cases[i];

		extra_add(out, c->suite, c->group, c->name, outcome_of(c->outcome), c->message,
			  c->time_s);
	}
	out->perf_listed[0] = ab_side_count(&lb, "perf");
	out->perf_listed[1] = ab_side_count(&lh, "perf");
	if (!ret) {
		one_sided(&lh, &lb, "added in head: base does not have this case", out);
		one_sided(&lb, &lh, "removed in head: head does not have this case", out);
		if (shared_cases(&lb, &lh, o, &cases, &n_cases, out))
			ret = mg_err_set(err, ENOMEM, "out of memory");
	}
	split_alpha(cases, n_cases, o);
	if (n_cases)
		fprintf(
		    stderr,
		    "memgate: ab: %zu shared perf cases, %zu gated metrics: each tested at alpha "
		    "%.3g / %zu / %d looks\n",
		    n_cases, o->gated_metrics, o->rules->alpha, o->gated_metrics,
		    o->confirm_rounds ? 2 : 1);
	for (size_t i = 0; !ret && i < n_cases; i++)
		ret = run_case(base, head, o, &cases[i], out, err);
	if (ret == -EINTR)
		out->interrupted = proc_stop;
	if ((!ret || ret == -EINTR) && conclude_all(cases, n_cases, o, out))
		ret = mg_err_set(err, ENOMEM, "out of memory judging");
	/* Names in the extras point into the lists and the checks: keep them until release. */
	out->keep_lists[0] = lb.root;
	out->keep_lists[1] = lh.root;
	out->keep_checks = checks;
	for (size_t i = 0; i < n_cases; i++)
		case_release(&cases[i]);
	free(cases);
	proc_stops_resume();
	return ret;
}

void ab_outcome_release(struct ab_outcome *out)
{
	compare_results_release(&out->verdicts);
	result_set_release(&out->extra);
	json_decref(out->keep_lists[0]);
	json_decref(out->keep_lists[1]);
	hist_release(&out->keep_checks);
	hist_release(&out->keep_guests[0]);
	hist_release(&out->keep_guests[1]);
	memset(out, 0, sizeof(*out));
}
