/* memgate.c - the memgate command line: hw, list, run. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hw/hw.h"
#include "hw/reserve.h"
#include "reports/report.h"
#include "harness/gate.h"
#include "harness/runner.h"
#include "suites/suites.h"
#include "util/text.h"
#include "util/util.h"

#define MEMGATE_VERSION "0.1.0"

/* Exit statuses: the contract with CI, also in --help and the README. */
enum {
	EXIT_PASSED = 0,  /* every case passed or was skipped with a reason */
	EXIT_FAILED = 1,  /* a check or gate failed, or a case crashed or timed out */
	EXIT_USAGE = 2,	  /* bad usage or bad input (options, topology files) */
	EXIT_HARNESS = 3, /* the harness itself failed (fork, pipes, writing reports) */
};

/* Sampling defaults: 15 samples give a median whose bootstrap interval is a few MADs wide;
 * the quick mode keeps 5, enough to see a crash or a gross regression. */
#define DEFAULT_SAMPLES 15
#define DEFAULT_WARMUP 3
#define QUICK_SAMPLES 5
#define QUICK_WARMUP 1
#define DEFAULT_TIMEOUT_S 600
#define MAX_SUITE_ARGS 16

static const char usage_text[] =
    "usage: memgate [--help] [--version] COMMAND [OPTIONS]\n"
    "\n"
    "Regression tests and perf gates for the guest-memory paths of a QEMU/KVM hypervisor.\n"
    "\n"
    "commands:\n"
    "  hw    [--json] [--topology SPEC]\n"
    "        describe the host (or SPEC) the suites plan from\n"
    "  list  [-s SUITE]... [-k GLOB] [--impl KEY=VALUE]... [--topology SPEC]\n"
    "        the cases, with their parameters as this host expands them\n"
    "  run   [-s SUITE]... [-k GLOB] [-n SAMPLES] [--warmup N] [--quick] [--timeout S]\n"
    "        [--seed N] [--junit FILE] [--junit-style jenkins|ant] [--json FILE]\n"
    "        [--size SIZE] [--reserve-hugepages]\n"
    "        [--impl KEY=VALUE]... [--topology SPEC]\n"
    "        run the cases, each in a forked child with a timeout\n"
    "\n"
    "options:\n"
    "  -s, --suite SUITE     only this suite (repeatable); default: all\n"
    "  -k, --filter GLOB     only cases whose SUITE.GROUP.NAME[PARAMS] matches GLOB\n"
    "  -n, --samples N       samples per metric after warm-up (default 15, quick 5)\n"
    "      --warmup N        discarded samples first (default 3, quick 1)\n"
    "      --quick           fewer samples and smaller sizes: a smoke run\n"
    "      --timeout S       seconds per case before it is killed (default 600)\n"
    "      --seed N          seed of the bootstrap and of random workloads (default 1)\n"
    "      --junit FILE      write JUnit XML (Jenkins' dialect unless --junit-style ant)\n"
    "      --json FILE       write every sample and summary as JSON\n"
    "      --impl KEY=VALUE  the implementation under test (below); the others stay as\n"
    "                        the references the gates compare it with\n"
    "      --size SIZE       guest memory of the prealloc cases (default: min(4G, a\n"
    "                        quarter of MemAvailable))\n"
    "      --reserve-hugepages  as root, size the 2 MiB hugetlb pool for the prealloc\n"
    "                        cases; the old size is put back on exit, Ctrl-C included\n"
    "      --topology SPEC   FILE.xml (hwloc XML) or synthetic:\"pack:2 [numa] core:4 pu:2\";\n"
    "                        plans are then checked, not executed\n"
    "\n"
    "exit status:\n"
    "  0  every case passed (or was skipped, with its reason)\n"
    "  1  a check or gate failed, or a case crashed or timed out\n"
    "  2  bad usage or bad input\n"
    "  3  the harness itself failed\n"
    "  128+N  interrupted by signal N; the reports hold what was measured\n";

static int print_usage(void)
{
	fputs(usage_text, stdout);
	printf(
	    "\nimplementations under test (--impl KEY=VALUE; the first value is the default):\n");
	impl_opts_describe(stdout);
	return EXIT_PASSED;
}

struct cli {
	const char *suites[MAX_SUITE_ARGS];
	size_t n_suites;
	const char *glob;
	const char *topology;
	const char *junit;
	const char *json_path;
	enum junit_style style;
	bool json_out;
	bool samples_set, warmup_set;
	bool reserve;
	struct impl_opts impl;
	struct run_opts opts;
};

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "memgate: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'memgate --help'.\n");
	return EXIT_USAGE;
}

/* A whole number in [min, max]; anything else is a usage error naming the option. */
static int parse_ulong(const char *opt, const char *s, unsigned long min, unsigned long max,
		       unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "memgate: %s expects a whole number from %lu to %lu, got '%s'\n",
			opt, min, max, s);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

enum {
	OPT_JSON = 256,
	OPT_TOPOLOGY,
	OPT_WARMUP,
	OPT_QUICK,
	OPT_TIMEOUT,
	OPT_SEED,
	OPT_JUNIT,
	OPT_JUNIT_STYLE,
	OPT_HELP,
	OPT_IMPL,
	OPT_SIZE,
	OPT_RESERVE,
};

static const struct option hw_long[] = {
    {"json", no_argument, NULL, OPT_JSON},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const struct option list_long[] = {
    {"impl", required_argument, NULL, OPT_IMPL},
    {"suite", required_argument, NULL, 's'},
    {"filter", required_argument, NULL, 'k'},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static const struct option run_long[] = {
    {"size", required_argument, NULL, OPT_SIZE},
    {"reserve-hugepages", no_argument, NULL, OPT_RESERVE},
    {"impl", required_argument, NULL, OPT_IMPL},
    {"suite", required_argument, NULL, 's'},
    {"filter", required_argument, NULL, 'k'},
    {"samples", required_argument, NULL, 'n'},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"seed", required_argument, NULL, OPT_SEED},
    {"junit", required_argument, NULL, OPT_JUNIT},
    {"junit-style", required_argument, NULL, OPT_JUNIT_STYLE},
    {"json", required_argument, NULL, OPT_JSON},
    {"topology", required_argument, NULL, OPT_TOPOLOGY},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* A size: a whole number with an optional K, M, G or T (powers of 1024), at least 64M. */
static int parse_size(const char *s, uint64_t *out)
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
	if (errno || end == s || *end || s[0] == '-' || v > (1ULL << (62 - shift)) ||
	    (v << shift) < (64ULL << 20)) {
		fprintf(stderr,
			"memgate: --size expects a size of at least 64M, such as 512M or 4G, "
			"got '%s'\n",
			s);
		return -EINVAL;
	}
	*out = v << shift;
	return 0;
}

/* Options that take a value; returns 0, -EINVAL (usage error printed) or 1 (not one of these). */
static int parse_valued(struct cli *c, int opt, const char *arg)
{
	unsigned long v;

	switch (opt) {
	case 'n':
		if (parse_ulong("--samples", arg, 1, 100000, &v))
			return -EINVAL;
		c->opts.samples = (unsigned int)v;
		c->samples_set = true;
		return 0;
	case OPT_WARMUP:
		if (parse_ulong("--warmup", arg, 0, 100000, &v))
			return -EINVAL;
		c->opts.warmup = (unsigned int)v;
		c->warmup_set = true;
		return 0;
	case OPT_TIMEOUT:
		if (parse_ulong("--timeout", arg, 1, 7 * 86400, &v))
			return -EINVAL;
		c->opts.timeout_s = (double)v;
		return 0;
	case OPT_SEED:
		if (parse_ulong("--seed", arg, 0, ULONG_MAX, &v))
			return -EINVAL;
		c->opts.seed = v;
		return 0;
	case OPT_SIZE:
		if (parse_size(arg, &c->opts.size_bytes))
			return -EINVAL;
		return 0;
	case OPT_JUNIT_STYLE:
		if (strcmp(arg, "jenkins") && strcmp(arg, "ant")) {
			usage_error("--junit-style expects 'jenkins' or 'ant', got '%s'", arg);
			return -EINVAL;
		}
		c->style = strcmp(arg, "ant") ? JUNIT_JENKINS : JUNIT_ANT;
		return 0;
	}
	return 1;
}

static int parse_opt(struct cli *c, int opt, const char *arg)
{
	switch (opt) {
	case 's':
		if (c->n_suites == MAX_SUITE_ARGS) {
			usage_error("at most %s -s options", "16");
			return -EINVAL;
		}
		c->suites[c->n_suites++] = arg;
		return 0;
	case 'k':
		c->glob = arg;
		return 0;
	case OPT_QUICK:
		c->opts.quick = true;
		return 0;
	case OPT_RESERVE:
		c->reserve = true;
		return 0;
	case OPT_JUNIT:
		c->junit = arg;
		return 0;
	case OPT_JSON:
		c->json_out = true;
		c->json_path = arg;
		return 0;
	case OPT_TOPOLOGY:
		c->topology = arg;
		return 0;
	case OPT_IMPL: {
		struct mg_err err;

		if (impl_opts_set(&c->impl, arg, &err)) {
			usage_error("%s", err.msg);
			return -EINVAL;
		}
		return 0;
	}
	}
	return parse_valued(c, opt, arg);
}

/* Parse a command's options from its own table: an option of another command is refused. */
static int parse_cli(struct cli *c, int argc, char **argv, const struct option *table,
		     const char *shorts)
{
	int opt;

	memset(c, 0, sizeof(*c));
	c->opts.samples = DEFAULT_SAMPLES;
	c->opts.warmup = DEFAULT_WARMUP;
	c->opts.timeout_s = DEFAULT_TIMEOUT_S;
	c->opts.seed = 1;
	c->opts.impl = &c->impl;
	optind = 1;
	while ((opt = getopt_long(argc, argv, shorts, table, NULL)) != -1) {
		if (opt == '?' || opt == ':')
			return EXIT_USAGE; /* getopt has said what was wrong */
		if (opt == OPT_HELP)
			exit(print_usage());
		if (parse_opt(c, opt, optarg))
			return EXIT_USAGE;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (c->opts.quick && !c->samples_set)
		c->opts.samples = QUICK_SAMPLES;
	if (c->opts.quick && !c->warmup_set)
		c->opts.warmup = QUICK_WARMUP;
	return 0;
}

/* Detect the host or load SPEC; bad input is the user's (2), anything else the harness's (3). */
static int load_hw(struct hw_info *hw, const char *spec)
{
	struct mg_err err = {0};

	if (!hw_detect(hw, spec, &err))
		return 0;
	fprintf(stderr, "memgate: %s\n", err.msg);
	return spec ? EXIT_USAGE : EXIT_HARNESS;
}

static int cmd_hw(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	int ret = parse_cli(&c, argc, argv, hw_long, "");

	if (ret || (ret = load_hw(&hw, c.topology)))
		return ret;
	if (c.json_out)
		ret = hw_print_json(&hw, stdout) ? EXIT_HARNESS : EXIT_PASSED;
	else
		hw_print_text(&hw, stdout);
	hw_release(&hw);
	return ret;
}

static int expand(const struct cli *c, const struct hw_info *hw, struct case_inst **insts,
		  size_t *n)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	struct runner_filter f = {.suites = c->suites, .n_suites = c->n_suites, .glob = c->glob};
	struct mg_err err = {0};
	int ret = runner_expand(suites, n_suites, hw, &c->opts, &f, insts, n, &err);

	if (ret)
		fprintf(stderr, "memgate: %s\n", err.msg);
	return ret == -ENOENT ? EXIT_USAGE : ret ? EXIT_HARNESS : 0;
}

/* What list and run share: parse the options, describe the host, expand the cases. */
static int plan(struct cli *c, int argc, char **argv, const struct option *table,
		const char *shorts, struct hw_info *hw, struct case_inst **insts, size_t *n)
{
	int ret = parse_cli(c, argc, argv, table, shorts);

	if (ret || (ret = load_hw(hw, c->topology)))
		return ret;
	ret = expand(c, hw, insts, n);
	if (ret)
		hw_release(hw);
	return ret;
}

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
		for (unsigned int g = 0; k < n && g < suites[i]->n_gates; g++) {
			const struct gate_def *gd = &suites[i]->gates[g];
			char full[256];

			snprintf(full, sizeof(full), "%s.gates.%s", suites[i]->name, gd->name);
			if (c->glob && !text_glob(c->glob, full))
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

static int cmd_list(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	struct case_inst *insts = NULL;
	size_t n = 0;
	int ret = plan(&c, argc, argv, list_long, "s:k:", &hw, &insts, &n);

	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++) {
		const struct case_def *d = insts[i].def;
		char full[256];

		printf("%-50s %-5s %s", case_full_name(&insts[i], full, sizeof(full)),
		       d->kind == CASE_PERF ? "perf" : "check", d->doc);
		for (unsigned int m = 0; m < d->n_metrics; m++)
			printf("%s%s", m ? ", " : " [", d->metrics[m].name);
		if (d->n_metrics)
			printf(" in %s, %s is better]", d->metrics[0].unit,
			       d->metrics[0].better == LOWER_IS_BETTER ? "lower" : "higher");
		putchar('\n');
	}
	list_gates(&c, insts, n);
	free(insts);
	hw_release(&hw);
	return ret;
}

static int write_reports(const struct cli *c, const struct report_run *rep)
{
	struct mg_err err = {0};
	int ret = 0;

	if (c->junit && report_junit_write(rep, c->style, c->junit, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	if (c->json_path && report_json_write(rep, c->json_path, &err)) {
		fprintf(stderr, "memgate: %s\n", err.msg);
		ret = EXIT_HARNESS;
	}
	return ret;
}

/* The exit status a finished run earns: failures and errors of cases first. */
static int run_status(const struct case_result *results, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (results[i].outcome == OUTCOME_FAIL || results[i].outcome == OUTCOME_ERROR)
			return EXIT_FAILED;
	return EXIT_PASSED;
}

/*
 * Sample again the cases behind INCONCLUSIVE gates (@gates->involved), as many samples
 * again each round, and judge anew: a noisy figure gets more data before a verdict, up to
 * GATE_RESAMPLE_ROUNDS rounds. Returns 0, a signal number or -errno as runner_run().
 */
static int resample_inconclusive(const struct case_inst *insts, struct case_result *results,
				 size_t n, const struct hw_info *hw, const struct run_opts *opts,
				 struct gate_results *gates, struct mg_err *err)
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
		if (!ret && gates_evaluate(suites, n_suites, results, n, opts, gates))
			ret = mg_err_set(err, ENOMEM, "out of memory judging the gates");
	}
	return ret;
}

/* Free pages of @page bytes the suites of the planned cases use (their hugepages hooks). */
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
		if (k < n && suites[i]->hugepages)
			want += suites[i]->hugepages(hw, opts, page);
	}
	return want;
}

/* --reserve-hugepages: enough free hugetlb pages for the planned cases, restored on exit. */
static int reserve_pool(const struct hw_info *hw, struct run_opts *opts,
			const struct case_inst *insts, size_t n)
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
	if (want && reserve_hugepages(1 << 30, want, &got, &err) && err.code != EPERM)
		fprintf(stderr, "memgate: no 1 GiB pages for this run (the 1 GiB cases skip): %s\n",
			err.msg);
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
	if (reserve_hugepages(2 << 20, want, &got, &err)) {
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

/* Cases then gates, one array for the reports; shallow copies, released through the originals. */
static struct case_result *merge_results(const struct case_result *results, size_t n,
					 const struct gate_results *gates)
{
	struct case_result *all = malloc((n + gates->n + 1) * sizeof(*all));

	/* An interrupted run has no gates: no array to copy from. */
	if (all && n)
		memcpy(all, results, n * sizeof(*all));
	if (all && gates->n)
		memcpy(all + n, gates->results, gates->n * sizeof(*all));
	return all;
}

/* Each suite's own table (figures beside the published ones), after the case lines. */
static void print_summaries(const struct report_run *rep, FILE *out)
{
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);

	for (size_t i = 0; i < n_suites; i++) {
		char *text = suites[i]->summary ? suites[i]->summary(rep->results, rep->n) : NULL;

		if (text)
			fprintf(out, "\n%s", text);
		free(text);
	}
}

static int run_cases(const struct cli *c, const struct hw_info *hw, const struct case_inst *insts,
		     size_t n)
{
	struct case_result *results = calloc(n ? n : 1, sizeof(*results));
	struct gate_results gates = {0};
	struct case_result *all;
	size_t n_suites;
	const struct suite_def *const *suites = suites_all(&n_suites);
	struct report_run rep = {.hw = hw, .results = results, .n = n, .version = MEMGATE_VERSION};
	struct mg_err err = {0};
	struct run_opts opts = c->opts;
	int64_t t0 = util_now_ns();
	int ret, status = 0;
	time_t now = time(NULL);
	struct tm tm;

	if (!results)
		return EXIT_HARNESS;
	gmtime_r(&now, &tm);
	strftime(rep.timestamp, sizeof(rep.timestamp), "%Y-%m-%dT%H:%M:%S", &tm);
	gethostname(rep.hostname, sizeof(rep.hostname) - 1);
	opts.progress = isatty(STDERR_FILENO);
	ret = runner_run(insts, n, hw, &opts, results, &err);
	/* Gates judge complete runs only: an interrupted one reports its cases alone. */
	if (!ret && gates_evaluate(suites, n_suites, results, n, &opts, &gates))
		ret = mg_err_set(&err, ENOMEM, "out of memory judging the gates");
	if (!ret)
		ret = resample_inconclusive(insts, results, n, hw, &opts, &gates, &err);
	all = merge_results(results, n, &gates);
	if (all) {
		rep.results = all;
		rep.n = n + gates.n;
	}
	rep.time_s = (double)(util_now_ns() - t0) / 1e9;
	/* Whatever happened, what was measured is reported. */
	report_console(&rep, stdout);
	print_summaries(&rep, stdout);
	status = write_reports(c, &rep);
	if (ret < 0) {
		fprintf(stderr, "memgate: harness failure: %s\n", err.msg);
		status = EXIT_HARNESS;
	} else if (ret > 0) {
		fprintf(stderr,
			"memgate: interrupted by signal %d; reports hold what was measured\n", ret);
		status = 128 + ret;
	} else if (!status) {
		status = run_status(rep.results, rep.n);
	}
	for (size_t i = 0; i < n; i++)
		case_result_release(&results[i]);
	/* The pool goes back now; atexit and the signal handlers are the other ways out. */
	reserve_restore();
	gates_release(&gates);
	free(all);
	free(results);
	return status;
}

static int cmd_run(int argc, char **argv)
{
	struct cli c;
	struct hw_info hw;
	struct case_inst *insts = NULL;
	size_t n = 0;
	int ret = plan(&c, argc, argv, run_long, "s:k:n:", &hw, &insts, &n);

	if (ret)
		return ret;
	if (n == 0) {
		fprintf(stderr, "memgate: no case matches the filters (see `memgate list`)\n");
		ret = EXIT_USAGE;
	}
	/* Reserve, then describe the host again: the suites plan from the pools they will use. */
	if (!ret && c.reserve && !(ret = reserve_pool(&hw, &c.opts, insts, n))) {
		hw_release(&hw);
		ret = load_hw(&hw, NULL);
	}
	if (!ret)
		ret = run_cases(&c, &hw, insts, n);
	free(insts);
	hw_release(&hw);
	return ret;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	/* Reports need a line-buffered stdout to interleave sanely with the children's. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!cmd)
		return usage_error("%s", "missing command: hw, list or run");
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help"))
		return print_usage();
	if (!strcmp(cmd, "--version")) {
		printf("memgate %s\n", MEMGATE_VERSION);
		return EXIT_PASSED;
	}
	if (!strcmp(cmd, "hw"))
		return cmd_hw(argc - 1, argv + 1);
	if (!strcmp(cmd, "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	return usage_error("unknown command '%s': expected hw, list or run", cmd);
}
