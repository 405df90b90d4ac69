/* SPDX-License-Identifier: GPL-2.0-or-later */
/* session.c - one run from start to end: the order of it, and what the commands share. */
#include "session/internal.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hw/reserve.h"
#include "run/runner.h"
#include "suites/suites.h"
#include "util/file.h"
#include "util/proc.h"
#include "util/text.h"
#include "util/util.h"

/* ---- the host, the rules, the plan ------------------------------------------------------- */

int session_load_host(struct hw_info *hw, const char *spec, const char *host_dir)
{
	struct mg_err err = {0};

	if (spec && host_dir) {
		fprintf(stderr, "memgate: --topology and --host each name what to plan from: give "
				"one\n");
		return EXIT_USAGE;
	}
	if (host_dir ? !hw_load_record(hw, host_dir, &err) : !hw_detect(hw, spec, &err))
		return 0;
	fprintf(stderr, "memgate: %s\n", err.msg);
	return spec || host_dir ? EXIT_USAGE : EXIT_HARNESS;
}

int session_expand(const struct session_config *cfg, const struct hw_info *hw,
		   struct case_inst **insts, size_t *n)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	struct runner_filter f = {.suites = cfg->suites,
				  .n_suites = cfg->n_suites,
				  .glob = cfg->glob,
				  .names = cfg->names,
				  .n_names = cfg->n_names,
				  .kinds = cfg->checks_only ? 1u << CASE_CHECK : 0,
				  .shard = cfg->shards ? (unsigned int)cfg->shard - 1 : 0,
				  .shards = (unsigned int)cfg->shards};
	struct mg_err err = {0};
	int ret = runner_expand(suites, n_suites, hw, &cfg->opts, &f, insts, n, &err);

	if (ret)
		fprintf(stderr, "memgate: %s\n", err.msg);
	return ret == -ENOENT ? EXIT_USAGE : ret ? EXIT_HARNESS : 0;
}

int session_load_rules(struct rules *rules, const char *path)
{
	struct mg_err err = {0};

	/* A bad file is bad input (2); only running out of memory is the harness's. */
	if (suites_rules_load(rules, path, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return err.code == ENOMEM ? EXIT_HARNESS : EXIT_USAGE;
	}
	return 0;
}

int session_open(struct session *s, struct session_config *cfg)
{
	struct mg_err err = {0};
	int ret;

	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->t0 = util_now_ns();
	if ((ret = session_load_rules(&s->rules, cfg->rules_path)))
		return ret;
	/* --counter as this host can count it (auto: instructions, simulated or tsc). */
	if (counter_resolve(cfg->counter_set ? cfg->counter : COUNTER_TSC, &cfg->opts.counter,
			    &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_USAGE;
	}
	if (!ret && !(ret = session_load_host(&s->hw, cfg->topology, cfg->host_dir)))
		s->hw_loaded = true;
	if (ret)
		rules_release(&s->rules);
	return ret;
}

/*
 * The qemu suite's binary: --qemu must name one (exit 2 when it does not, whatever runs);
 * without it, QEMU_DEFAULT_NAME on PATH is looked for when a planned case needs it, and its
 * absence is a reason those cases give when they SKIP.
 */
static int find_qemu(struct session *s)
{
	struct session_config *cfg = s->cfg;
	struct mg_err err = {0};
	bool needed = false;

	for (size_t i = 0; i < s->n && !needed; i++)
		needed = s->insts[i].def->needs & NEEDS_QEMU;
	cfg->opts.qemu = &s->qemu;
	if (!cfg->qemu_path && !needed)
		return 0;
	if (qemu_find(&s->qemu, cfg->qemu_path, &err) ||
	    guest_kit_find(&s->kit, cfg->guest_kernel, cfg->guest_initrd, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return EXIT_USAGE;
	}
	cfg->opts.kit = &s->kit;
	if (cfg->qemu_preload && access(cfg->qemu_preload, R_OK)) {
		fprintf(stderr, "memgate: --qemu-preload %s: %s\n", cfg->qemu_preload,
			strerror(errno));
		return EXIT_USAGE;
	}
	cfg->opts.qemu_preload = cfg->qemu_preload;
	return 0;
}

/* --cut names a metric some planned case can stop a sample of. */
static bool cut_planned(const struct session *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->insts[i].def->cut_metric &&
		    !strcmp(s->insts[i].def->cut_metric, s->cfg->opts.cut_metric))
			return true;
	return false;
}

int session_plan(struct session *s, struct session_config *cfg)
{
	int ret = session_open(s, cfg);

	if (ret)
		return ret;
	if ((ret = session_expand(cfg, &s->hw, &s->insts, &s->n)) || (ret = find_qemu(s))) {
		session_close(s);
		return ret;
	}
	if (cfg->opts.cut_value > 0 && !cut_planned(s)) {
		fprintf(stderr,
			"memgate: --cut %s: no planned case can stop a sample of that metric "
			"(list --json names the cases' cut_metric)\n",
			cfg->opts.cut_metric);
		session_close(s);
		return EXIT_USAGE;
	}
	/* A rule of --rules FILE that matches nothing is a typo, or a case this host lacks: say
	 * so, unless the selection narrowed the cases on purpose. The embedded rules cover
	 * every host and --long: they are not warned about. */
	if (cfg->rules_path && !cfg->glob && !cfg->n_names && !cfg->checks_only && !cfg->shards)
		rules_warn_unused(&s->rules, s->insts, s->n, stderr);
	return 0;
}

void session_close(struct session *s)
{
	for (size_t i = 0; s->results && i < s->n; i++)
		case_result_release(&s->results[i]);
	free(s->results);
	gates_release(&s->gates);
	compare_results_release(&s->base);
	for (size_t i = 0; i < s->n_history; i++)
		hist_release(&s->history[i]);
	free(s->history);
	free(s->all);
	rules_release(&s->rules);
	free(s->insts);
	if (s->hw_loaded)
		hw_release(&s->hw);
	memset(s, 0, sizeof(*s));
}

/* ---- the reports -------------------------------------------------------------------------- */

int session_check_reports(const struct session_config *cfg)
{
	struct mg_err err = {0};

	if ((cfg->junit && file_path_check(cfg->junit, "--junit", &err)) ||
	    (cfg->json_path && file_path_check(cfg->json_path, "--json", &err)) ||
	    (cfg->csv_dir && report_csv_check(cfg->csv_dir, &err)) ||
	    (cfg->html && report_html_check(cfg->html, &err))) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (!file_paths_distinct(cfg->junit, cfg->json_path)) {
		fprintf(stderr, "memgate: --junit and --json name the same file (%s)\n",
			cfg->junit);
		return EXIT_USAGE;
	}
	if (!file_paths_distinct(cfg->html, cfg->junit) ||
	    !file_paths_distinct(cfg->html, cfg->json_path)) {
		fprintf(stderr, "memgate: --html names the same file as --junit or --json (%s)\n",
			cfg->html);
		return EXIT_USAGE;
	}
	return 0;
}

/* Each suite's tables over the reported results, rendered once for every report. */
static void render_summaries(struct report_run *rep)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);

	rep->summaries = calloc(n_suites ? n_suites : 1, sizeof(*rep->summaries));
	for (size_t i = 0; rep->summaries && i < n_suites; i++) {
		char *text = suite_summary(suites[i], rep->results, rep->n);

		if (text)
			rep->summaries[rep->n_summaries++] =
			    (struct report_summary){.suite = suites[i], .text = text};
	}
}

void session_report_init(const struct session *s, struct report_run *rep,
			 const struct case_result *results, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;

	memset(rep, 0, sizeof(*rep));
	rep->hw = &s->hw;
	rep->results = results;
	rep->n = n;
	rep->version = s->cfg->version;
	rep->commit = s->cfg->commit;
	rep->label = s->cfg->label;
	rep->qemu = s->qemu.version;
	gmtime_r(&now, &tm);
	strftime(rep->timestamp, sizeof(rep->timestamp), "%Y-%m-%dT%H:%M:%S", &tm);
	gethostname(rep->hostname, sizeof(rep->hostname) - 1);
	text_utf8_fix(rep->hostname, sizeof(rep->hostname));
	render_summaries(rep);
}

void session_report_release(struct report_run *rep)
{
	for (size_t i = 0; i < rep->n_summaries; i++)
		free(rep->summaries[i].text);
	free(rep->summaries);
	rep->summaries = NULL;
	rep->n_summaries = 0;
}

int session_write_reports(const struct session_config *cfg, const struct report_run *rep)
{
	struct mg_err err = {0};
	int ret = 0;

	if (cfg->junit && report_junit_write(rep, cfg->style, cfg->junit, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	if (cfg->json_path && report_json_write(rep, cfg->json_path, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	if (cfg->csv_dir && report_csv_write(rep, cfg->csv_dir, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	if (cfg->html && report_html_write(rep, cfg->html, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	return ret;
}

/* The exit status a finished run earns: failures and errors of cases first. */
int session_status(const struct case_result *results, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((results[i].outcome == OUTCOME_FAIL && !results[i].unstable) ||
		    results[i].outcome == OUTCOME_ERROR)
			return EXIT_FAILED;
	return EXIT_PASSED;
}

/* ---- the run ------------------------------------------------------------------------------ */

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

int session_reserve_pool(struct session *s)
{
	const struct hw_info *hw = &s->hw;
	struct run_opts *opts = &s->cfg->opts;
	const struct case_inst *insts = s->insts;
	size_t n = s->n;
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
	const struct settle *st = arg;

	return gates_settled(st->rules, partial, st->baseline, st->seed);
}

/* Cases, gates and baseline verdicts, one array for the reports; shallow copies. */
static int merge_results(struct session *s)
{
	size_t n = s->n, ng = s->gates.rows.n, nb = s->base.rows.n;

	s->all = malloc((n + ng + nb + 1) * sizeof(*s->all));
	if (!s->all)
		return -ENOMEM;
	/* An interrupted run has no gates: no array to copy from. */
	if (n)
		memcpy(s->all, s->results, n * sizeof(*s->all));
	if (ng)
		memcpy(s->all + n, s->gates.rows.results, ng * sizeof(*s->all));
	if (nb)
		memcpy(s->all + n + ng, s->base.rows.results, nb * sizeof(*s->all));
	s->n_all = n + ng + nb;
	return 0;
}

/*
 * --baseline PATH: this run's perf metrics against the newest runs of this host class in
 * PATH (a results file or a directory of them). None there: one SKIP saying so. The runs
 * read stay in @s for the reports. Returns 0 or -errno, having said why.
 */
static int judge_baseline(struct session *s)
{
	const struct session_config *cfg = s->cfg;
	const struct hw_info *hw = &s->hw;
	struct hist_run *runs = NULL, head;
	struct judged *j = NULL;
	size_t n_runs = 0, nj = 0;
	struct mg_err err = {0};
	struct stat st;
	char context[1024];
	int ret;

	if (stat(cfg->baseline, &st) == 0 && S_ISREG(st.st_mode)) {
		runs = calloc(1, sizeof(*runs));
		ret = runs ? hist_load(runs, cfg->baseline, &err) : -ENOMEM;
		n_runs = !ret && !strcmp(runs->host_hash, hw->fingerprint_hash);
		if (!ret && !n_runs)
			hist_release(runs);
	} else {
		ret = hist_dir_runs(cfg->baseline, hw->fingerprint_hash, cfg->baseline_runs, &runs,
				    &n_runs, &err);
	}
	if (ret) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		free(runs);
		return ret;
	}
	ret = hist_from_results(&head, s->results, s->n, hw);
	if (!ret && n_runs)
		ret = compare_runs(runs, n_runs, &head, &s->rules, cfg->opts.seed, &j, &nj);
	snprintf(context, sizeof(context),
		 "%zu base runs of host class %s in %s, newest %s (%s, "
		 "kernel %s); this run: kernel %s, glibc %s",
		 n_runs, hw->fingerprint_hash, cfg->baseline, n_runs ? runs[0].timestamp : "-",
		 n_runs ? runs[0].commit : "-", n_runs ? runs[0].kernel : "-", hw->os_release,
		 hw->glibc);
	if (!ret && n_runs) {
		ret = compare_results_make(j, nj, "baseline", context, &s->base);
	} else if (!ret) {
		/* Nothing to judge against (a first build): a SKIP that says so, not a failure. */
		snprintf(context, sizeof(context),
			 "--baseline %s: no run of this host class (%s) "
			 "there: the baseline gates are skipped",
			 cfg->baseline, hw->fingerprint_hash);
		free(j);
		ret = compare_results_skip("baseline", "history", context, &s->base);
	}
	hist_release_shared(&head);
	/* The runs stay for the report's trends; session_close() releases them. */
	s->history = runs;
	s->n_history = n_runs;
	return ret;
}

/*
 * The cases, the gates, the resampling and the baseline, in that order. Returns 0, the
 * signal that stopped it, or -errno (@err says why); a bad baseline sets *@bad_input.
 */
static int measure_and_judge(struct session *s, struct run_opts *opts, bool *bad_input,
			     struct mg_err *err)
{
	const struct session_config *cfg = s->cfg;
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	int ret = runner_run(s->insts, s->n, &s->hw, opts, s->results, err);

	if (!ret && proc_stop)
		ret = proc_stop;
	/* Gates judge complete runs only: an interrupted one reports its cases alone. */
	if (!ret && !cfg->no_gates &&
	    gates_evaluate(&s->rules, suites, n_suites, s->results, s->n, opts, &s->gates))
		ret = mg_err_set(err, ENOMEM, "out of memory judging the gates");
	if (!ret && proc_stop)
		ret = proc_stop;
	if (!ret && !cfg->no_gates)
		ret = resample_inconclusive(&s->rules, s->insts, s->results, s->n, &s->hw, opts,
					    &s->gates, err);
	if (!ret && proc_stop)
		ret = proc_stop;
	if (!ret && cfg->baseline && judge_baseline(s))
		*bad_input = true;
	return ret;
}

int session_run(struct session *s, FILE *out)
{
	const struct session_config *cfg = s->cfg;
	struct report_run rep;
	struct mg_err err = {0};
	struct run_opts opts;
	struct settle settle = {&s->rules, cfg->baseline != NULL, cfg->opts.seed};
	bool bad_input = false;
	int64_t t0 = util_now_ns();
	int ret = session_check_reports(cfg), status = 0;

	if (!ret && s->n == 0) {
		fprintf(stderr, "memgate: no case matches the filters (see `memgate list`)\n");
		ret = EXIT_USAGE;
	}
	/* Reserve, then read the pools again: the suites plan from the pools they will use. */
	if (!ret && cfg->reserve && !(ret = session_reserve_pool(s)))
		hw_reread_pools(&s->hw);
	if (ret)
		return ret;
	s->results = calloc(s->n, sizeof(*s->results));
	if (!s->results)
		return EXIT_HARNESS;
	opts = cfg->opts;
	/* Without -n, a case samples until its samples settle every verdict they feed (at least
	 * CASE_MIN_SAMPLES, at most the default -n); -n N takes N, as ab and calibrate do. */
	if (!cfg->no_gates && !cfg->samples_set) {
		opts.settled = case_is_settled;
		opts.settled_arg = &settle;
	}
	opts.progress = isatty(STDERR_FILENO);
	opts.on_result = show_case;
	opts.on_result_arg = out;
	/* A stop signal after the cases (gates, baseline judging, reports) must not lose the
	 * reports: it is noted, what is left to judge skipped, the reports written. */
	proc_stops_defer();
	ret = measure_and_judge(s, &opts, &bad_input, &err);
	if (bad_input)
		status = EXIT_USAGE;
	if (merge_results(s))
		session_report_init(s, &rep, s->results, s->n);
	else
		session_report_init(s, &rep, s->all, s->n_all);
	rep.time_s = (double)(util_now_ns() - t0) / 1e9;
	rep.history = s->history;
	rep.n_history = s->n_history;
	/* Whatever happened, what was measured is reported. The cases were shown as they ended:
	 * the gates, baselines and counts are left, then each suite's own table. */
	report_console(&rep, s->n, out);
	report_console_summaries(&rep, out);
	if (session_write_reports(cfg, &rep))
		status = EXIT_HARNESS;
	session_report_release(&rep);
	if (!ret && proc_stop)
		ret = proc_stop;
	proc_stops_resume();
	if (ret < 0) {
		fprintf(stderr, "memgate: harness failure: %s\n", err.msg);
		status = EXIT_HARNESS;
	} else if (ret > 0) {
		fprintf(stderr,
			"memgate: interrupted by signal %d; reports hold what was measured\n", ret);
		status = 128 + ret;
	} else if (!status) {
		status = session_status(rep.results, rep.n);
	}
	/* The pool goes back now; atexit and the signal handlers are the other ways out. */
	reserve_restore();
	return status;
}

int session_impl_set(struct impl_opts *o, const char *assignment, struct mg_err *err)
{
	const struct impl_key *keys[IMPL_MAX_KEYS];
	size_t n = suites_impl_keys(keys, IMPL_MAX_KEYS);

	return impl_opts_set(o, keys, n, assignment, err);
}

void session_impl_describe(FILE *out)
{
	const struct impl_key *keys[IMPL_MAX_KEYS];
	size_t n = suites_impl_keys(keys, IMPL_MAX_KEYS);

	impl_opts_describe(keys, n, out);
}

int session_rules(const char *path)
{
	struct rules rules;
	int ret = session_load_rules(&rules, path);

	if (ret)
		return ret;
	printf("# the rules in effect: %s (%zu files, %zu gates, %zu tolerance rules, alpha %g)\n",
	       rules.source, rules.n_files, rules.n_gates, rules.n_tols, rules.alpha);
	fputs(rules.text, stdout);
	rules_release(&rules);
	return EXIT_PASSED;
}

int session_hw(const struct session_config *cfg, const char *record_dir, bool json)
{
	struct hw_info hw;
	struct mg_err err = {0};
	int ret = session_load_host(&hw, cfg->topology, cfg->host_dir);

	if (ret)
		return ret;
	if (record_dir) {
		/* What memgate read of this host, for a bug report or the recorded matrix. */
		if (hw_record(&hw, record_dir, &err)) {
			fprintf(stderr, "memgate: %s\n", err.msg);
			ret = err.code == EINVAL ? EXIT_USAGE : EXIT_HARNESS;
		} else {
			fprintf(stderr, "memgate: recorded this host in %s\n", record_dir);
		}
	} else if (json) {
		ret = hw_print_json(&hw, stdout) ? EXIT_HARNESS : EXIT_PASSED;
	} else {
		hw_print_text(&hw, stdout);
	}
	hw_release(&hw);
	return ret;
}

int session_case_exec(struct session_config *cfg, int fd, long long deadline_ns, const char *dump)
{
	struct hw_info hw;
	struct case_inst *insts = NULL;
	size_t n = 0;
	int ret;

	/* jansson seeds its hash tables at random: which buckets the events touch would move the
	 * misses from run to run. Before any is made. */
	json_object_seed(1);
	cfg->opts.counter = COUNTER_SIMULATED;
	cfg->opts.sim_dump = dump;
	/* No host: see runner.c on why a counted case plans without it. */
	memset(&hw, 0, sizeof(hw));
	ret = session_expand(cfg, &hw, &insts, &n);
	if (!ret && n != 1) {
		fprintf(stderr, "memgate: case-exec: no case named %s\n", cfg->names[0]);
		ret = EXIT_USAGE;
	}
	if (!ret)
		runner_case_exec(&insts[0], &hw, &cfg->opts, fd, deadline_ns);
	free(insts);
	hw_release(&hw);
	return ret;
}

const struct suite_def *const *session_suites(size_t *n)
{
	return suites_all(n);
}

int session_recover(FILE *out)
{
	return reserve_recover(out);
}

int session_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "memgate: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return EXIT_USAGE;
}

/* @cfg planned, then listed (@list; as JSON when @json) or run, and the session closed. */
static int planned(struct session_config *cfg, bool list, bool json)
{
	struct session s;
	int ret = session_plan(&s, cfg);

	if (ret)
		return ret;
	ret = list ? session_list(&s, json, stdout) : session_run(&s, stdout);
	session_close(&s);
	return ret;
}

int session_run_cases(struct session_config *cfg)
{
	return planned(cfg, false, false);
}

int session_list_cases(struct session_config *cfg, bool json)
{
	return planned(cfg, true, json);
}

int session_size(const char *arg, uint64_t *bytes)
{
	uint64_t v;

	if (text_size(arg, &v) || v < SESSION_SIZE_MIN || v > SESSION_SIZE_MAX)
		return -EINVAL;
	*bytes = v;
	return 0;
}
