/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ab_guest.c - `memgate ab` of two guests (memgate vm ... sides): each round a boot of each
 * side's guest running every selected case, the figures of its results file taken for the
 * round; a guest that does not boot or runs nothing is its round's ERROR, with its console.
 */
#include "judge/ab_case.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "judge/history.h"
#include "util/proc.h"
#include "util/stats.h"
#include "util/text.h"
#include "util/util.h"

/* A guest side's whole run, boot to poweroff: memgate vm's own default. */
#define AB_GUEST_TIMEOUT_S 3600

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
	c->suite = hist_plain_suite(hc->suite);
	c->simulated = exact;
	c->cut = -1;
	c->metrics = calloc(hc->n_metrics + 1, sizeof(*c->metrics));
	if (!c->metrics)
		return -ENOMEM;
	for (size_t i = 0; i < hc->n_metrics; i++) {
		const struct hist_metric *hm = &hc->metrics[i];
		/* Under icount the TSC is the instruction count (run/guest.h). */
		const char *unit = exact && !strcmp(hm->unit, "cycles") ? "instructions" : hm->unit;

		if (ab_metric_add(c, o, hm->name, unit, hm->better, hm->reference, o->rounds))
			return -ENOMEM;
	}
	c->gated = c->n_gated > 0;
	return 0;
}

/* @r's figures of @c as side @is_head's of the round under way. */
static void guest_figures(struct ab_case *c, const struct hist_run *r, bool is_head)
{
	const struct hist_case *hc = hist_guest_case(r, c->key);

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
	const char *k = hist_vm_prop(r, "vm.kernel");

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

		hist_guest_key(hc, key, sizeof(key));
		if (strcmp(hc->kind, "perf")) {
			ab_extra_add(out, hc->suite, hc->group, hc->name,
				     ab_outcome_of(hc->outcome), hc->message, hc->time_s);
			continue;
		}
		out->perf_listed[1]++;
		bc = hist_guest_case(b, key);
		if (!bc) {
			snprintf(why, sizeof(why), "only %s ran it, not %s: reported, not judged",
				 hs, bs);
			ab_extra_add(out, "ab", hist_plain_suite(hc->suite), ab_in_suite(key),
				     OUTCOME_SKIP, why, 0);
			continue;
		}
		if (strcmp(hc->outcome, "PASS") || strcmp(bc->outcome, "PASS")) {
			const struct hist_case *bad = strcmp(hc->outcome, "PASS") ? hc : bc;

			snprintf(why, sizeof(why), "%s on %s: %s", bad->outcome,
				 bad == hc ? hs : bs, bad->message ? bad->message : "");
			ab_extra_add(out, "ab", hist_plain_suite(hc->suite), ab_in_suite(key),
				     strcmp(bad->outcome, "SKIP") ? OUTCOME_ERROR : OUTCOME_SKIP,
				     why, 0);
			continue;
		}
		if (ab_keep_gated(c, guest_case_make(hc, key, exact, o, c), key, n, out))
			return -ENOMEM;
	}
	for (size_t i = 0; i < b->n_cases; i++) {
		const struct hist_case *bc = &b->cases[i];

		if (strcmp(bc->kind, "perf"))
			continue;
		out->perf_listed[0]++;
		if (hist_guest_case(h, hist_guest_key(bc, key, sizeof(key))))
			continue;
		snprintf(why, sizeof(why), "only %s ran it, not %s: reported, not judged", bs, hs);
		ab_extra_add(out, "ab", hist_plain_suite(bc->suite), ab_in_suite(key), OUTCOME_SKIP,
			     why, 0);
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

/* An A/B of two guests under way: its cases, its rounds, its context, the boots killed. */
struct guest_ab {
	struct ab_case *cases;
	size_t n_cases;
	bool exact;	     /* both guests under icount: instruction counts */
	unsigned int rounds; /* as many as it takes: two when exact */
	char context[1600];  /* the verdicts' context while they are judged, here */
	char killed[2][600]; /* base's and head's guest, killed this round: why */
};

/* Round @r's two boots, base first in even rounds, their results into @runs. */
static int boot_pair(struct ab_side *base, struct ab_side *head, const struct ab_opts *o,
		     unsigned int r, struct hist_run runs[2], struct guest_ab *g,
		     struct mg_err *err)
{
	bool head_first = r % 2;
	struct ab_side *first = head_first ? head : base, *second = head_first ? base : head;
	int ret;

	memset(runs, 0, 2 * sizeof(*runs));
	ret = guest_round_of(first, o, r, &runs[head_first], g->killed[head_first],
			     sizeof(g->killed[0]), err);
	if (!ret)
		ret = guest_round_of(second, o, r, &runs[!head_first], g->killed[!head_first],
				     sizeof(g->killed[0]), err);
	return ret;
}

/* After the first round: exact or not, the context said, the cases both guests ran. */
static int plan_cases(const struct hist_run runs[2], struct ab_opts *o, struct guest_ab *g,
		      struct ab_outcome *out, struct mg_err *err)
{
	g->exact = !strcmp(hist_vm_prop(&runs[0], "vm.clock"), "icount") &&
		   !strcmp(hist_vm_prop(&runs[1], "vm.clock"), "icount");
	g->rounds = g->exact ? 2 : g->rounds;
	snprintf(g->context, sizeof(g->context),
		 "%s; base's guest: kernel %s, %s; head's guest: kernel %s, %s%s",
		 o->context ? o->context : "", hist_vm_prop(&runs[0], "vm.kernel"),
		 hist_vm_prop(&runs[0], "vm.accel"), hist_vm_prop(&runs[1], "vm.kernel"),
		 hist_vm_prop(&runs[1], "vm.accel"),
		 g->exact ? "; figures under icount: instruction counts, exact" : "");
	o->context = g->context;
	fprintf(stderr, "memgate: ab: %s\n", g->context);
	if (guest_cases(&runs[0], &runs[1], g->exact, o, &g->cases, &g->n_cases, out))
		return mg_err_set(err, ENOMEM, "out of memory");
	o->confirm_rounds = 0; /* one look: judged_how() says so */
	ab_split_alpha(g->cases, g->n_cases, o);
	return 0;
}

/* The round's figures of every case, kept where both guests gave one. */
static void take_figures(struct guest_ab *g, const struct hist_run runs[2])
{
	for (size_t i = 0; i < g->n_cases; i++) {
		struct ab_case *c = &g->cases[i];

		guest_figures(c, &runs[0], false);
		guest_figures(c, &runs[1], true);
		for (size_t m = 0; m < c->n_metrics; m++) {
			struct ab_metric *am = &c->metrics[m];

			am->n += !isnan(am->base[am->n]) && !isnan(am->head[am->n]);
		}
	}
}

/* Round @r: both boots, the round's rows, its figures. *@stop when the first round failed. */
static int guest_ab_round(struct ab_side *base, struct ab_side *head, struct ab_opts *o,
			  unsigned int r, struct guest_ab *g, struct ab_outcome *out, bool *stop,
			  struct mg_err *err)
{
	struct hist_run runs[2];
	int ret = boot_pair(base, head, o, r, runs, g, err);

	if (!ret && r == 0 &&
	    result_set_init(&out->extra, runs[0].n_cases + runs[1].n_cases + 2 * g->rounds + 1))
		ret = mg_err_set(err, ENOMEM, "out of memory");
	/* A guest that did not run the cases is that round's ERROR; in the first round, with
	 * nothing to compare against, the end: its boot fails alike in the next. */
	if (!ret && round_failed(runs, base, head, g->killed, r, o, out) && r == 0) {
		*stop = true;
		ret = 0;
	} else if (!ret && r == 0) {
		ret = plan_cases(runs, o, g, out, err);
	}
	if (!ret && !*stop)
		take_figures(g, runs);
	if (r == 0 && !ret && !*stop) {
		out->keep_guests[0] = runs[0];
		out->keep_guests[1] = runs[1];
	} else {
		hist_release(&runs[0]);
		hist_release(&runs[1]);
	}
	return ret;
}

/*
 * ab of two guests (both sides `MEMGATE vm ...`, a kernel each, say): a round boots each
 * side's guest once and runs every selected case in it, base first in even rounds. Under
 * icount in both (vm.clock) the figures are instruction counts, exact: two rounds, as for
 * simulated counts; otherwise o->rounds, no second look (each round is two boots).
 */
int ab_run_guests(struct ab_side *base, struct ab_side *head, struct ab_opts *o,
		  struct ab_outcome *out, struct mg_err *err)
{
	struct guest_ab g = {.rounds = o->rounds ? o->rounds : 2};
	const char *given = o->context;
	bool stop = false;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	proc_stops_defer();
	for (unsigned int r = 0; !ret && !stop && r < g.rounds; r++)
		ret = guest_ab_round(base, head, o, r, &g, out, &stop, err);
	if (ret == -EINTR)
		out->interrupted = proc_stop;
	/* One look at all of them. */
	for (size_t i = 0; i < g.n_cases; i++)
		for (size_t m = 0; m < g.cases[i].n_metrics; m++)
			g.cases[i].metrics[m].first_stage = g.cases[i].metrics[m].n;
	if ((!ret || ret == -EINTR) && ab_conclude_all(g.cases, g.n_cases, o, out))
		ret = mg_err_set(err, ENOMEM, "out of memory judging");
	o->context = given;
	/* A guest that failed as a program: ab's failure, said; one that refused its options:
	 * bad usage (ab maps -EINVAL so). */
	if (ret == -ECANCELED)
		ret = mg_err_set(err, ECHILD, "%s", err->msg);
	for (size_t i = 0; i < g.n_cases; i++)
		ab_case_release(&g.cases[i]);
	free(g.cases);
	proc_stops_resume();
	return ret;
}
