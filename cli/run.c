/* run.c - `memgate list` and `memgate run`: the plan, the run, the gates, the baselines. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "judge/compare.h"
#include "judge/history.h"
#include "run/runner.h"
#include "hw/reserve.h"
#include "suites/suites.h"
#include "util/text.h"
#include "util/util.h"

/* "metric of case-glob", without the glob's escapes. */
static void print_side(const struct gate_side *s)
{
	printf("%s of ", s->metric);
	for (const char *p = s->glob; *p; p++)
		if (*p != '\\')
			putchar(*p);
}

/* The gates of the suites whose cases are listed: they judge those cases after a run. */
static void list_gates(const struct cli *c, const struct case_inst *insts, size_t n)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);

	for (size_t i = 0; i < n_suites; i++) {
		size_t k = 0;

		while (k < n && insts[k].suite != suites[i])
			k++;
		for (size_t g = 0; k < n && g < c->rules.n_gates; g++) {
			const struct gate_def *gd = &c->rules.gates[g].def;
			char full[256];

			if (strcmp(c->rules.gates[g].suite, suites[i]->name))
				continue;
			snprintf(full, sizeof(full), "%s.gates.%s", suites[i]->name, gd->name);
			if (c->glob && !text_glob(c->glob, full))
				continue;
			/* Listed only where its cases are planned (a host without 1 GiB pages has
			 * no 1 GiB gate), so a shard lists the gates of the cases it runs. */
			if (!case_any_matches(insts, n, gd->a.glob) ||
			    !case_any_matches(insts, n, gd->b.glob))
				continue;
			printf("%-50s gate  ", full);
			print_side(&gd->a);
			printf(" / ");
			print_side(&gd->b);
			printf(" %s %.3g\n",
			       gd->kind == GATE_NOT_SLOWER ? "not significantly over"
			       : gd->kind == GATE_FASTER   ? "surely under"
							   : "at most",
			       gd->kind == GATE_FASTER ? 1.0 : gd->threshold);
		}
	}
}

static int list_json(const struct case_inst *insts, size_t n, enum counter_kind k);

/* `list`, on the plan: the cases, their metrics, and the gates. */
static int list_planned(struct cli *c, struct cli_plan *p)
{
	if (c->json_out)
		return list_json(p->insts, p->n, c->opts.counter);
	for (size_t i = 0; i < p->n; i++) {
		const struct case_def *d = p->insts[i].def;
		char full[256];

		printf("%-50s %-5s %s", case_full_name(&p->insts[i], full, sizeof(full)),
		       d->kind == CASE_PERF ? "perf" : "check", d->doc);
		/* Each metric with its own unit and the way it is better: "impl.ms (ms, lower)". */
		for (unsigned int m = 0; m < d->n_metrics; m++)
			printf("%s%s (%s, %s)", m ? ", " : " [", d->metrics[m].name,
			       case_metric_unit(d, m, c->opts.counter),
			       d->metrics[m].better == LOWER_IS_BETTER ? "lower" : "higher");
		if (d->n_metrics)
			putchar(']');
		putchar('\n');
	}
	list_gates(c, p->insts, p->n);
	return 0;
}

/*
 * Sample again the cases behind INCONCLUSIVE gates (@gates->involved), as many samples
 * again each round, and judge anew: a noisy figure gets more data before a verdict, up to
 * GATE_RESAMPLE_ROUNDS rounds. Returns 0, a signal number or -errno as runner_run().
 */
static int resample_inconclusive(const struct rules *rules, const struct case_inst *insts,
				 struct case_result *results, size_t n, const struct hw_info *hw,
				 const struct run_opts *opts, struct gate_results *gates,
				 struct mg_err *err)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	int ret = 0;

	for (int round = 0; !ret && gates->n_involved && round < GATE_RESAMPLE_ROUNDS; round++) {
		size_t k = gates->n_involved;
		struct case_inst *again = calloc(k, sizeof(*again));
		struct case_result *more = calloc(k, sizeof(*more));

		if (!again || !more) {
			free(again);
			free(more);
			return mg_err_set(err, ENOMEM, "out of memory");
		}
		for (size_t i = 0; i < k; i++)
			again[i] = insts[gates->involved[i]];
		if (opts->progress)
			fprintf(stderr, "inconclusive gates: sampling %zu cases again\n", k);
		ret = runner_run(again, k, hw, opts, more, err);
		for (size_t i = 0; i < k; i++) {
			more[i].inst = &insts[gates->involved[i]];
			if (!ret && runner_merge(&results[gates->involved[i]], &more[i], opts))
				ret = mg_err_set(err, ENOMEM, "out of memory");
			case_result_release(&more[i]);
		}
		free(again);
		free(more);
		gates_release(gates);
		if (!ret && gates_evaluate(rules, suites, n_suites, results, n, opts, gates))
			ret = mg_err_set(err, ENOMEM, "out of memory judging the gates");
	}
	return ret;
}

/* Free pages of @page bytes the planned cases use: the most any one suite asks for (its
 * hugepages hook), since cases run one at a time and unmap what they used. */
static uint64_t pages_wanted(const struct hw_info *hw, const struct run_opts *opts,
			     const struct case_inst *insts, size_t n, uint64_t page)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	uint64_t want = 0;

	for (size_t i = 0; i < n_suites; i++) {
		size_t k = 0;

		while (k < n && insts[k].suite != suites[i])
			k++;
		if (k < n && suites[i]->hugepages) {
			uint64_t w = suites[i]->hugepages(hw, opts, page);

			want = w > want ? w : want;
		}
	}
	return want;
}

/* --reserve-hugepages: enough free hugetlb pages for the planned cases, restored on exit. */
int cli_reserve_pool(const struct hw_info *hw, struct run_opts *opts, const struct case_inst *insts,
		     size_t n)
{
	uint64_t want, got = 0;
	struct mg_err err = {0};

	if (hw->source != HW_SOURCE_HOST) {
		fprintf(stderr,
			"memgate: --reserve-hugepages with --topology: nothing runs here\n");
		return EXIT_USAGE;
	}
	/* The size is fixed now: after the reservation MemAvailable is smaller, and the cases
	 * must use the size the pools were sized for. */
	opts->size_bytes = case_guest_size(hw, opts);
	want = pages_wanted(hw, opts, insts, n, 1 << 30);
	/*
	 * 1 GiB pages first, while memory is least fragmented (after the 2 MiB pool took 4 GiB
	 * the kernel found 3 of 5 here): worth a try, not a reason to stop. A refusal for want
	 * of root is the same for both pools and reported below.
	 */
	if (want && reserve_hugepages(1 << 30, want, true, &got, &err) && err.code != EPERM)
		fprintf(stderr,
			"memgate: %" PRIu64 " free 1 GiB pages for this run (the 1 GiB cases that "
			"need more skip): %s\n",
			got, err.msg);
	else if (want && !err.code)
		fprintf(stderr,
			"memgate: %" PRIu64 " free 1 GiB hugetlb pages for this run; the "
			"pool's size is put back on exit\n",
			got);
	mg_err_clear(&err);
	want = pages_wanted(hw, opts, insts, n, 2 << 20);
	if (!want) {
		fprintf(stderr,
			"memgate: --reserve-hugepages: no planned case uses hugetlb pages\n");
		return 0;
	}
	if (reserve_hugepages(2 << 20, want, false, &got, &err)) {
		fprintf(stderr, "memgate: --reserve-hugepages: %s\n", err.msg);
		return err.code == EPERM ? EXIT_USAGE : EXIT_HARNESS;
	}
	opts->hugepages_reserved = true;
	fprintf(stderr,
		"memgate: %" PRIu64 " free 2 MiB hugetlb pages for this run; the pool's "
		"size is put back on exit\n",
		got);
	return 0;
}

/* Each suite's own table (figures beside the published ones), after the case lines. */
static void print_summaries(const struct report_run *rep, FILE *out)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);

	for (size_t i = 0; i < n_suites; i++) {
		char *text = suite_summary(suites[i], rep->results, rep->n);

		if (text)
			fprintf(out, "\n%s", text);
		free(text);
	}
}

/* A case's lines on stdout as it ends, terminal or pipe (the Jenkins console is a pipe). */
static void show_case(const struct case_result *r, void *out)
{
	report_console_case(r, out);
}

/* What a case's child asks before it stops sampling early: the rules its verdicts come from. */
struct settle {
	const struct rules *rules;
	bool baseline;
	uint64_t seed;
};

static bool case_is_settled(const struct case_result *partial, void *arg)
{
	const struct settle *s = arg;

	return gates_settled(s->rules, partial, s->baseline, s->seed);
}

/* Cases, gates and baseline verdicts, one array for the reports; shallow copies. */
static struct case_result *merge_results(const struct case_result *results, size_t n,
					 const struct gate_results *gates,
					 const struct compare_results *base, size_t *n_all)
{
	struct case_result *all = malloc((n + gates->rows.n + base->rows.n + 1) * sizeof(*all));

	*n_all = 0;
	if (!all)
		return NULL;
	/* An interrupted run has no gates: no array to copy from. */
	if (n)
		memcpy(all, results, n * sizeof(*all));
	if (gates->rows.n)
		memcpy(all + n, gates->rows.results, gates->rows.n * sizeof(*all));
	if (base->rows.n)
		memcpy(all + n + gates->rows.n, base->rows.results, base->rows.n * sizeof(*all));
	*n_all = n + gates->rows.n + base->rows.n;
	return all;
}

/*
 * --baseline PATH: this run's perf metrics against the newest runs of this host class in
 * PATH (a results file or a directory of them). None there: one SKIP saying so. The runs
 * read go to @keep (newest first, @n_keep of them) for the reports; release them.
 */
static int judge_baseline(const struct cli *c, const struct hw_info *hw,
			  const struct case_result *results, size_t n, struct compare_results *out,
			  struct hist_run **keep, size_t *n_keep)
{
	struct hist_run *runs = NULL, head;
	struct judged *j = NULL;
	size_t n_runs = 0, nj = 0;
	struct mg_err err = {0};
	struct stat st;
	char context[1024];
	int ret;

	if (stat(c->baseline, &st) == 0 && S_ISREG(st.st_mode)) {
		runs = calloc(1, sizeof(*runs));
		ret = runs ? hist_load(runs, c->baseline, &err) : -ENOMEM;
		n_runs = !ret && !strcmp(runs->host_hash, hw->fingerprint_hash);
		if (!ret && !n_runs)
			hist_release(runs);
	} else {
		ret = hist_dir_runs(c->baseline, hw->fingerprint_hash, c->baseline_runs, &runs,
				    &n_runs, &err);
	}
	if (ret) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		free(runs);
		return ret;
	}
	ret = hist_from_results(&head, results, n, hw);
	if (!ret && n_runs)
		ret = compare_runs(runs, n_runs, &head, &c->rules, c->opts.seed, &j, &nj);
	snprintf(context, sizeof(context),
		 "%zu base runs of host class %s in %s, newest %s (%s, "
		 "kernel %s); this run: kernel %s, glibc %s",
		 n_runs, hw->fingerprint_hash, c->baseline, n_runs ? runs[0].timestamp : "-",
		 n_runs ? runs[0].commit : "-", n_runs ? runs[0].kernel : "-", hw->os_release,
		 hw->glibc);
	if (!ret && n_runs) {
		ret = compare_results_make(j, nj, "baseline", context, out);
	} else if (!ret) {
		/* Nothing to judge against (a first build): a SKIP that says so, not a failure. */
		snprintf(context, sizeof(context),
			 "--baseline %s: no run of this host class (%s) "
			 "there: the baseline gates are skipped",
			 c->baseline, hw->fingerprint_hash);
		free(j);
		ret = compare_results_skip("baseline", "history", context, out);
	}
	hist_release_shared(&head);
	/* The runs stay for the report's trends; the caller releases them. */
	*keep = runs;
	*n_keep = n_runs;
	return ret;
}

static int run_cases(const struct cli *c, const struct hw_info *hw, const struct case_inst *insts,
		     size_t n)
{
	struct case_result *results = calloc(n ? n : 1, sizeof(*results));
	struct gate_results gates = {0};
	struct compare_results base = {0};
	struct hist_run *history = NULL;
	size_t n_history = 0;
	struct case_result *all;
	size_t n_suites, n_all;
	const struct suite_def *const *suites = suites_all(&n_suites);
	struct report_run rep;
	struct mg_err err = {0};
	struct run_opts opts = c->opts;
	struct settle settle = {&c->rules, c->baseline != NULL, c->opts.seed};
	int64_t t0 = util_now_ns();
	int ret, status = 0;

	if (!results)
		return EXIT_HARNESS;
	/* Without -n, a case samples until its samples settle every verdict they feed (at least
	 * CASE_MIN_SAMPLES, at most the default -n); -n N takes N, as ab and calibrate do. */
	if (!c->no_gates && !c->samples_set) {
		opts.settled = case_is_settled;
		opts.settled_arg = &settle;
	}
	cli_report_init(&rep, c, hw, results, n);
	/* A stop signal after the cases (gates, baseline judging, reports) must not lose the
	 * reports: it is noted, what is left to judge skipped, the reports written. */
	cli_signals_defer();
	opts.progress = isatty(STDERR_FILENO);
	opts.on_result = show_case;
	opts.on_result_arg = stdout;
	ret = runner_run(insts, n, hw, &opts, results, &err);
	if (!ret && cli_late_signal)
		ret = cli_late_signal;
	/* Gates judge complete runs only: an interrupted one reports its cases alone. */
	if (!ret && !c->no_gates &&
	    gates_evaluate(&c->rules, suites, n_suites, results, n, &opts, &gates))
		ret = mg_err_set(&err, ENOMEM, "out of memory judging the gates");
	if (!ret && cli_late_signal)
		ret = cli_late_signal;
	if (!ret && !c->no_gates)
		ret = resample_inconclusive(&c->rules, insts, results, n, hw, &opts, &gates, &err);
	if (!ret && cli_late_signal)
		ret = cli_late_signal;
	if (!ret && c->baseline && judge_baseline(c, hw, results, n, &base, &history, &n_history))
		status = EXIT_USAGE;
	all = merge_results(results, n, &gates, &base, &n_all);
	if (all) {
		rep.results = all;
		rep.n = n_all;
	}
	rep.time_s = (double)(util_now_ns() - t0) / 1e9;
	rep.history = history;
	rep.n_history = n_history;
	/* Whatever happened, what was measured is reported. */
	/* The cases were shown as they ended: the gates, baselines and counts are left. */
	report_console(&rep, n, stdout);
	print_summaries(&rep, stdout);
	if (cli_write_reports(c, &rep))
		status = EXIT_HARNESS;
	if (!ret && cli_late_signal)
		ret = cli_late_signal;
	cli_signals_restore();
	if (ret < 0) {
		fprintf(stderr, "memgate: harness failure: %s\n", err.msg);
		status = EXIT_HARNESS;
	} else if (ret > 0) {
		fprintf(stderr,
			"memgate: interrupted by signal %d; reports hold what was measured\n", ret);
		status = 128 + ret;
	} else if (!status) {
		status = cli_run_status(rep.results, rep.n);
	}
	for (size_t i = 0; i < n; i++)
		case_result_release(&results[i]);
	/* The pool goes back now; atexit and the signal handlers are the other ways out. */
	reserve_restore();
	gates_release(&gates);
	for (size_t i = 0; i < n_history; i++)
		hist_release(&history[i]);
	free(history);
	compare_results_release(&base);
	free(all);
	free(results);
	return status;
}

/* `run`, on the plan: reserve what it needs, run the cases, judge and report. */
static int run_planned(struct cli *c, struct cli_plan *p)
{
	int ret = cli_check_reports(c);

	if (!ret && p->n == 0) {
		fprintf(stderr, "memgate: no case matches the filters (see `memgate list`)\n");
		ret = EXIT_USAGE;
	}
	/* Reserve, then describe the host again: the suites plan from the pools they will use. */
	if (!ret && c->reserve && !(ret = cli_reserve_pool(&p->hw, &c->opts, p->insts, p->n))) {
		hw_release(&p->hw);
		ret = cli_load_hw(&p->hw, NULL, NULL);
	}
	if (!ret)
		ret = run_cases(c, &p->hw, p->insts, p->n);
	return ret;
}

/* Parse and plan as list and run do, @act on the plan, release it. */
static int with_plan(int argc, char **argv, const struct option *table, const char *shorts,
		     int (*act)(struct cli *c, struct cli_plan *p))
{
	struct cli c;
	struct cli_plan p;
	int ret = cli_plan(&c, argc, argv, table, shorts, &p);

	if (ret)
		return ret;
	ret = act(&c, &p);
	cli_plan_release(&c, &p);
	return ret;
}

int cli_cmd_list(int argc, char **argv)
{
	return with_plan(argc, argv, cli_list_options, "s:k:", list_planned);
}

int cli_cmd_run(int argc, char **argv)
{
	return with_plan(argc, argv, cli_run_options, "s:k:n:", run_planned);
}

/* `list --json`: what `memgate ab` reads of a side: names, kinds, suites, metrics. */
static int list_json(const struct case_inst *insts, size_t n, enum counter_kind k)
{
	json_t *arr = json_array();
	int ret;

	for (size_t i = 0; arr && i < n; i++) {
		const struct case_def *d = insts[i].def;
		json_t *metrics = json_array();
		char full[256];

		for (unsigned int m = 0; m < d->n_metrics; m++)
			json_array_append_new(
			    metrics, json_pack("{s:s, s:s, s:s}", "name", d->metrics[m].name,
					       "unit", case_metric_unit(d, m, k), "better",
					       d->metrics[m].better == LOWER_IS_BETTER ? "lower"
										       : "higher"));
		json_t *c = json_pack("{s:s, s:s, s:s, s:o}", "name",
				      case_full_name(&insts[i], full, sizeof(full)), "suite",
				      insts[i].suite->name, "kind",
				      d->kind == CASE_PERF ? "perf" : "check", "metrics", metrics);

		/* What a counted case counts with: ab runs a simulated one twice, one sample. */
		if (c && d->counted)
			json_object_set_new(c, "counter", json_string(counter_name(k)));
		if (c && d->ab_samples)
			json_object_set_new(c, "ab_samples", json_integer(d->ab_samples));
		if (c && d->cut_metric)
			json_object_set_new(c, "cut_metric", json_string(d->cut_metric));
		json_array_append_new(arr, c);
	}
	ret = arr && !json_dumpf(arr, stdout, JSON_INDENT(1)) ? EXIT_PASSED : EXIT_HARNESS;
	putchar('\n');
	json_decref(arr);
	return ret;
}

int cli_cmd_case_exec(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	struct case_inst *insts = NULL;
	size_t n = 0;
	int ret;

	/* jansson seeds its hash tables at random: which buckets the events touch would move the
	 * misses from run to run. */
	json_object_seed(1);
	ret = cli_parse(&c, argc, argv, cli_case_exec_options, "n:", 0);

	if (ret)
		return ret;
	if (c.n_names != 1 || !c.dump || !c.deadline_ns)
		return cli_usage_error(
		    "case-exec is memgate's own: --fd, --case, --deadline-ns and "
		    "--dump, from its runner");
	c.opts.counter = COUNTER_SIMULATED;
	c.opts.sim_dump = c.dump;
	/* No host: see runner.c on why a counted case plans without it. */
	memset(&hw, 0, sizeof(hw));
	ret = cli_expand(&c, &hw, &insts, &n);
	if (!ret && n != 1)
		ret = cli_usage_error("case-exec: no case named %s", c.names[0]);
	if (!ret)
		runner_case_exec(&insts[0], &hw, &c.opts, (int)c.fd, c.deadline_ns);
	free(insts);
	hw_release(&hw);
	return ret;
}
