/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ab.c - drive two memgate binaries case by case, round by round: each side's cases listed,
 * head's checks run once, every shared perf case's rounds taken in turn (ab_guest.c does the
 * same boot by boot for two guests); then ab_verdict.c judges head against base.
 */
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

#include "judge/ab_case.h"
#include "judge/history.h"
#include "util/proc.h"
#include "util/stats.h"
#include "util/text.h"
#include "util/util.h"

/* A side gets this long past its own per-case deadline to report the timeout itself. */
#define AB_SIDE_MARGIN_S 10

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
		bool higher = !strcmp(ab_side_string(json_object_get(jm, "better")), "higher");

		if (ab_metric_add(c, o, json_string_value(json_object_get(jm, "name")),
				  json_string_value(json_object_get(jm, "unit")),
				  higher ? HIGHER_IS_BETTER : LOWER_IS_BETTER,
				  json_is_true(json_object_get(jm, "reference")), rounds))
			return -ENOMEM;
	}
	c->cut = -1;
	for (size_t m = 0; m < c->n_metrics && json_is_string(json_object_get(hc, "cut_metric"));
	     m++) {
		if (strcmp(c->metrics[m].name,
			   json_string_value(json_object_get(hc, "cut_metric"))))
			continue;
		c->cut = (int)m;
		c->cut_factor = ab_tolerance(o, c, &c->metrics[m]).cut;
		c->cut_base = calloc(rounds + 1, sizeof(*c->cut_base));
		if (!c->cut_base)
			return -ENOMEM;
	}
	c->gated = c->n_gated > 0;
	return 0;
}

/* @key without its "suite." prefix: the suite is the JUnit class already. */
const char *ab_in_suite(const char *key)
{
	const char *dot = strchr(key, '.');

	return dot ? dot + 1 : key;
}

/* A result of @suite's group @group named @name, with @outcome and @msg (for extras). */
void ab_extra_add(struct ab_outcome *out, const char *suite, const char *group, const char *name,
		  enum case_outcome outcome, const char *msg, double time_s)
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
enum case_outcome ab_outcome_of(const char *word)
{
	return !strcmp(word, "PASS")   ? OUTCOME_PASS
	       : !strcmp(word, "SKIP") ? OUTCOME_SKIP
	       : !strcmp(word, "FAIL") ? OUTCOME_FAIL
				       : OUTCOME_ERROR;
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
		ab_extra_add(out, "ab", ab_side_string(json_object_get(c, "suite")),
			     ab_in_suite(key), OUTCOME_SKIP, why, 0);
	}
}

/* @c just made (@made: 0, or it failed), kept as the *@n-th case when some metric of it is
 * gated, else released as a SKIP saying why. Returns 0 or -ENOMEM. */
int ab_keep_gated(struct ab_case *c, int made, const char *key, size_t *n, struct ab_outcome *out)
{
	if (made) {
		ab_case_release(c);
		return -ENOMEM;
	}
	if (c->gated) {
		(*n)++;
		return 0;
	}
	ab_extra_add(out, "ab", c->suite, ab_in_suite(key), OUTCOME_SKIP,
		     "no metric of it is gated (the rules say gate = false): not run", 0);
	ab_case_release(c);
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
		if (ab_keep_gated(c, case_make(bc, hc, key, rounds, o, c), key, n, out))
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

		if (am->n || !ab_tolerance(o, c, am).gate)
			continue;
		snprintf(name, sizeof(name), "%s:%s", ab_in_suite(c->key), am->name);
		if (c->head_cut && c->cut >= 0)
			snprintf(
			    why, sizeof(why),
			    "no round measured it on both sides: %u of head's boots were stopped "
			    "at %.3g x base's median of %s, before it was measured",
			    c->head_cut, c->cut_factor, c->metrics[c->cut].name);
		else
			snprintf(why, sizeof(why), "no round measured it on both sides");
		ab_extra_add(out, "ab", c->suite, name, OUTCOME_SKIP, why, 0);
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
	if (!ret && (flagged = ab_flag_case(c, o)))
		for (unsigned int k = 0; !ret && k < c->confirm; k++, r++)
			ret = round_of(base, head, o, c, r, err);
	/* A line a case on stderr, terminal or not: the Jenkins console shows progress. */
	fprintf(stderr, "memgate: ab: %s: %u rounds%s in %.1f s\n", c->key, r,
		flagged ? " (undecided at the first look: more rounds)" : "",
		(double)(util_now_ns() - t0) / 1e9);
	if (ret == -ECANCELED || ret == -EAGAIN) {
		/* The case broke or skipped on a side: a result of its own, not a verdict. */
		ab_extra_add(out, "ab", c->suite, ab_in_suite(c->key),
			     ret == -EAGAIN ? OUTCOME_SKIP : OUTCOME_ERROR, err->msg, 0);
		for (size_t m = 0; m < c->n_metrics; m++)
			c->metrics[m].n = 0;
		return 0;
	}
	if (!ret)
		unmeasured(c, o, out);
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
		ab_extra_add(out, "ab", "checks", "head", OUTCOME_ERROR, err->msg, 0);
		ret = 0;
	}
	for (size_t i = 0; !ret && i < checks.n_cases; i++) {
		const struct hist_case *c = &checks.cases[i];

		ab_extra_add(out, c->suite, c->group, c->name, ab_outcome_of(c->outcome),
			     c->message, c->time_s);
	}
	out->perf_listed[0] = ab_side_count(&lb, "perf");
	out->perf_listed[1] = ab_side_count(&lh, "perf");
	if (!ret) {
		one_sided(&lh, &lb, "added in head: base does not have this case", out);
		one_sided(&lb, &lh, "removed in head: head does not have this case", out);
		if (shared_cases(&lb, &lh, o, &cases, &n_cases, out))
			ret = mg_err_set(err, ENOMEM, "out of memory");
	}
	ab_split_alpha(cases, n_cases, o);
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
	if ((!ret || ret == -EINTR) && ab_conclude_all(cases, n_cases, o, out))
		ret = mg_err_set(err, ENOMEM, "out of memory judging");
	/* Names in the extras point into the lists and the checks: keep them until release. */
	out->keep_lists[0] = lb.root;
	out->keep_lists[1] = lh.root;
	out->keep_checks = checks;
	for (size_t i = 0; i < n_cases; i++)
		ab_case_release(&cases[i]);
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
